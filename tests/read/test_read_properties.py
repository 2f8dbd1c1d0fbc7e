"""Property tests over arbitrary bytes and line shapes (hypothesis; modest example counts)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from readbench.base.js import decode_utf8, utf8_len
from readbench.read import ReadSession, get_variant
from readbench.read._claude_code import ClaudeCodeParams, ClaudeCodeRead

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOTICE = re.compile(
    r"\n\n\[Showing lines (\d+)-(\d+) of (\d+)(?: \([^)]*\))?\. Use offset=(\d+) to continue\.\]\Z"
)

# A file shape: runs of (line length, repeat count, character), optionally without a final newline.
CHARS = st.sampled_from(["a", "é", "\U0001f600", "\t", "\r", "\ufeff", " "])
RUNS = st.lists(st.tuples(st.integers(0, 120), st.integers(1, 1500), CHARS), min_size=0, max_size=4)


def build(runs: list[tuple[int, int, str]], final_newline: bool) -> bytes:
    lines = [ch * length for length, repeat, ch in runs for _ in range(repeat)]
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    return text.encode()


files = st.builds(build, RUNS, st.booleans())
offsets = st.one_of(st.none(), st.integers(-3, 6000))
limits = st.one_of(st.none(), st.integers(-3, 6000))


def variants():
    named = [
        get_variant(n)
        for n in (
            "stock",
            "A",
            "B",
            "B-soft",
            "B+dedup",
            "B+dedup-naive",
            "C",
            "swe-agent",
            "nocap",
        )
    ]
    return named + [ClaudeCodeRead("claude-code", "test", ClaudeCodeParams(), count_tokens=len)]


VARIANTS = variants()


def read(v, data, offset=None, limit=None, session=None, call_id="c1", path="f.txt"):
    return v.read(
        data,
        path,
        offset,
        limit,
        call_id=call_id,
        session=session or ReadSession(),
        visible_call_ids=frozenset({"c1"}),
    )


@SETTINGS
@given(data=st.binary(max_size=3000), offset=offsets, limit=limits)
def test_no_variant_crashes_on_arbitrary_bytes_and_details_are_consistent(data, offset, limit):
    session = ReadSession()
    for v in VARIANTS:
        for call in ("c1", "c2"):  # the second read exercises dedup / "map shown" paths
            r = read(v, data, offset, limit, session=session, call_id=call, path="f.py")
            d = r.details
            assert isinstance(r.text, str)
            assert d.returned_lines == sum(b - a + 1 for a, b in d.line_ranges)
            if d.line_ranges:
                assert 1 <= d.first_line <= d.last_line <= max(d.total_lines, 1)
            assert not (d.blocked and d.line_ranges)


@SETTINGS
@given(data=files, offset=offsets, limit=limits)
def test_stock_never_returns_more_than_2000_lines_or_51200_bytes(data, offset, limit):
    r = read(VARIANTS[0], data, offset, limit)
    d = r.details
    event(f"stock capped={d.capped}")
    if d.first_line is None:
        return
    lines = decode_utf8(data).split("\n")
    content = "\n".join(lines[d.first_line - 1 : d.last_line])
    assert d.returned_lines <= 2000
    assert utf8_len(content) <= 51200
    assert r.text.startswith(content)


def page_through(variant, data: bytes) -> str:
    pieces: list[str] = []
    offset = None
    for _ in range(10_000):
        r = read(variant, data, offset)
        assert not r.is_error
        m = NOTICE.search(r.text)
        if m is None:
            pieces.append(r.text)
            return "\n".join(pieces)
        pieces.append(r.text[: m.start()])
        offset = int(m[4])
        event("paged more than once")
    raise AssertionError("paging did not terminate")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=files)
def test_paging_with_the_notice_offsets_reconstructs_the_file(data):
    text = decode_utf8(data)
    for variant in (VARIANTS[0], VARIANTS[1]):  # stock, A: no line here exceeds a cap alone
        assert page_through(variant, data) == text


@SETTINGS
@given(data=files, offset=offsets, limit=limits)
def test_b_never_returns_file_text_for_an_over_cap_portion(data, offset, limit):
    stock = read(VARIANTS[0], data, offset, limit)
    b = read(VARIANTS[2], data, offset, limit)
    event(f"B blocked={b.details.blocked}")
    if stock.details.capped:
        assert b.is_error and b.details.blocked and b.details.line_ranges == ()
        assert b.text.startswith(("File has ", "[Line "))
        assert "\n" not in b.text
    else:
        assert (b.text, b.is_error) == (stock.text, stock.is_error)


@SETTINGS
@given(data=files, offset=offsets, limit=limits)
def test_c_line_numbers_always_match_the_file(data, offset, limit):
    r = read(VARIANTS[6], data, offset, limit, path="f.txt")
    d = r.details
    event(f"C capped={d.capped}")
    if d.first_line is None:
        return
    lines = decode_utf8(data).split("\n")
    rows = r.text.split("\n")[: d.returned_lines]
    for n, row in zip(range(d.first_line, d.last_line + 1), rows, strict=True):
        assert row == f"{n:>6}\t{lines[n - 1]}"
    assert d.returned_lines <= 400
