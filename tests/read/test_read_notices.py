"""Every notice a read family writes parses back with its own pattern (readbench.read.notices)."""

from __future__ import annotations

import pytest

from readbench.read import notices as n
from readbench.read._session import ReadSession
from readbench.read.registry import FAMILIES, blocked, get_variant


@pytest.mark.parametrize(("text", "pattern", "fields"), [
    (n.cap_notice(1, 2000, 5001), n.CAP_LINE, {"first": "1", "last": "2000", "total": "5001", "next": "2001"}),
    (n.cap_notice(5, 900, 5001, "50.0KB limit"), n.CAP_LINE, {"first": "5", "last": "900", "total": "5001",
                                                               "next": "901"}),
    (n.cap_notice(5, 900, 5001, "50.0KB limit"), n.SHOWING_KB, {"kb": "50.0"}),
    (n.more_notice(290, 12), n.MORE_LINE, {"remaining": "290", "next": "12"}),
    (n.more_notice(290, 12), n.MORE, {"remaining": "290", "next": "12"}),
    (n.long_line_notice(7, "60.0KB", "50.0KB", "a.log", 51200), n.LONG_LINE, {"line": "7"}),
    (n.char_line_notice(7, 12000, 10000, "a.log"), n.CHAR_LINE, {"line": "7"}),
    (n.beyond_eof_notice(90, 12), n.BEYOND_EOF, {"offset": "90", "total": "12"}),
    (n.block_notice(5000, "180.0KB", "2000-line/50.0KB", 1, 1000), n.BLOCK, {"total": "5000"}),
    (n.stub_notice(3, 40, "call_7"), n.STUB, {"first": "3", "last": "40", "call": "call_7"}),
    (n.cut_notice(1, 400, 5001, "Use offset/limit to read other parts."), n.CUT_LINE,
     {"first": "1", "last": "400", "total": "5001", "tail": " Use offset/limit to read other parts."}),
    (n.token_block_notice(31000, 25000), n.TOKEN_BLOCK, {"tokens": "31000"}),
])
def test_each_format_parses_back(text, pattern, fields):
    m = pattern.search(text)
    assert m is not None and {k: m.group(k) for k in fields} == fields


def test_the_pi_notice_starts_are_shared_by_the_cap_and_the_cut():
    for text in (n.cap_notice(1, 2000, 5001), n.cut_notice(1, 400, 5001, "tail")):
        assert n.SHOWING.search(text).group("total") == "5001"
        assert n.NOTICE_AT_END.search("x\n\n" + text)


def test_the_families_write_what_their_notices_parse():
    data = "".join(f"row {k} " + "x" * 60 + "\n" for k in range(1, 3001)).encode()
    s = ReadSession()
    stock = get_variant("stock").read(data, "f.txt", None, None, call_id="c1", session=s, visible_call_ids=None)
    last_line = stock.text.rsplit("\n", 1)[1]
    m = n.CAP_LINE.match(last_line)
    assert m and (int(m.group("last")), int(m.group("total"))) == (stock.details.last_line, 3001)
    b = get_variant("B").read(data, "f.txt", None, None, call_id="c2", session=s, visible_call_ids=None)
    assert blocked(b.text).group("total") == "3000"
    c = get_variant("C").read(data, "f.txt", None, None, call_id="c3", session=ReadSession(), visible_call_ids=None)
    cut = next(line for line in c.text.split("\n") if line.startswith("[Showing"))
    assert n.CUT_LINE.match(cut).group("last") == "400"
    cc = get_variant({"base": "claude-code", "name": "cc-small", "max_tokens": 100}).read(
        data, "f.txt", None, None, call_id="c4", session=ReadSession(), visible_call_ids=None)
    assert blocked(cc.text) and n.TOKEN_BLOCK.match(cc.text)
    s2 = ReadSession()
    dedup = get_variant("B+dedup")
    dedup.read(data, "f.txt", 1, 10, call_id="c5", session=s2, visible_call_ids=None)
    stub = dedup.read(data, "f.txt", 1, 10, call_id="c6", session=s2, visible_call_ids=frozenset({"c5"}))
    assert n.STUB.match(stub.text).group("call") == "c5"


def test_every_family_record_names_notices_with_a_kind():
    kinds = {"range", "more", "long_line", "block", "beyond_eof", "stub", "cut", "clip", "elided", "numbered"}
    for family in FAMILIES:
        assert family.notices and {x.kind for x in family.notices} <= kinds
    assert [f.name for f in FAMILIES] == ["paged", "dedup", "mapped", "swe-agent", "claude-code"]
    assert sorted(x.name for f in FAMILIES for x in f.notices if x.kind == "block") == ["block", "block", "token_block"]


MEMORY = ("<system-reminder>This memory is 4 days old. Memories are point-in-time observations, not live state."
          "</system-reminder>\n")
MALWARE = ("\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware."
           "\n</system-reminder>\n")


def test_numbered_frame_splits_claude_codes_reminders_from_the_listing():
    # shapes of real Claude Code Read results: 2.0 (padded arrow, malware reminder after),
    # 2.1.2xx (unpadded tab, a memory file's age reminder before)
    f = n.numbered_frame("    41→def f():\n    42→    return 1\n    43→" + MALWARE)
    assert (f.prefix, f.body, f.suffix, f.style, f.first, f.last) == (
        "", "    41→def f():\n    42→    return 1\n    43→", MALWARE, "padded-arrow", 41, 43)
    f = n.numbered_frame(MEMORY + "1\t---\n2\tname: x")
    assert (f.prefix, f.body, f.suffix, f.style, f.first, f.last) == (MEMORY, "1\t---\n2\tname: x", "", "tab", 1, 2)
    assert f.wrap("stock text\n") == MEMORY + "stock text\n"
    assert n.numbered_frame("99999\ta\n100000\tb").style == "tab"
    assert n.numbered_frame(" 99999\ta\n100000\tb").style == "padded-tab"
    assert [n.number_prefix(7, s) for s in n.NUMBER_STYLES] == ["     7\t", "     7→", "7\t", "7→"]
    for s in n.NUMBER_STYLES:  # a listing's rows: each line behind its prefix
        assert n.number_rows(["a", "{b}", ""], 99, s) == "\n".join(
            n.number_prefix(k, s) + t for k, t in zip((99, 100, 101), ["a", "{b}", ""], strict=True))
    assert n.number_rows([], 1, "tab") == ""


def test_number_rows_from_the_prefix_table_equal_formatted_rows():
    """The table's prefixes (`_prefixes`) give the rows one format per line gives: inside the
    table, across its end, past it, from 0 or below, and for lines given as a generator."""
    edge = n.PREFIX_TABLE_MAX
    for s in n.NUMBER_STYLES:
        for first, count in ((1, 2000), (7, 3), (edge - 2, 5), (edge, 1), (edge + 1, 4), (0, 3), (-2, 4), (5, 0)):
            lines = [f"x{k}\t{{}}" for k in range(count)]
            want = "\n".join(n.number_prefix(first + k, s) + t for k, t in enumerate(lines))
            assert n.number_rows(lines, first, s) == want
            assert n.number_rows(iter(lines), first, s) == want
    with pytest.raises(KeyError):
        n.number_rows(["a"], 1, "roman")


def test_numbered_frame_refuses_mixed_styles_and_unnumbered_text():
    assert n.numbered_frame("     1→a\n2\tb") is None  # no one style writes both
    assert n.numbered_frame("1→a\n     2→b") is None
    assert n.numbered_frame("File unchanged since last read.") is None
    assert n.numbered_frame("  1→a") is None  # padded, but not to 6 columns
