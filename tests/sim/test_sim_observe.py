"""Parsing tool results as the model sees them (readbench.sim.observe), on real variant output."""

from __future__ import annotations

from readbench.read import ReadSession, get_variant
from readbench.sim.observe import default_read_limit, parse_bash, parse_grep, parse_read

BIG = "".join(f"row {i:05d} value\n" for i in range(1, 5001))  # pi counts T=5001
PY = "".join(f"def f{k}(x):\n" + "".join(f"    x = x + {j}\n" for j in range(18)) + "    return x\n\n"
             for k in range(1, 51))  # 50 functions of 21 lines each: f1 at 1-20, f2 at 22-41, ...


def _read(variant: str, data: str, offset=None, limit=None, path="big.txt", session=None, call_id="c1"):
    result = get_variant(variant).read(data.encode(), path, offset, limit, call_id=call_id,
                                       session=session or ReadSession(), visible_call_ids=frozenset())
    args = {"path": path, **({"offset": offset} if offset else {}), **({"limit": limit} if limit else {})}
    return result, args


def test_stock_line_cap_notice_places_lines_and_states_the_continuation():
    result, args = _read("stock", BIG)
    obs = parse_read(result.text, result.is_error, args)
    assert (min(obs.lines), max(obs.lines), len(obs.lines)) == (1, 2000, 2000)
    assert obs.lines[2000] == "row 02000 value"
    assert (obs.total_lines, obs.next_offset, obs.eof) == (5001, 2001, False)


def test_stock_last_page_reaches_eof_with_the_phantom_line():
    result, args = _read("stock", BIG, offset=4001)
    obs = parse_read(result.text, result.is_error, args)
    assert (min(obs.lines), max(obs.lines)) == (4001, 5001)
    assert obs.lines[5000] == "row 05000 value" and obs.lines[5001] == ""
    assert (obs.total_lines, obs.next_offset, obs.eof) == (5001, None, True)


def test_more_lines_notice_gives_total_and_next_offset():
    result, args = _read("stock", BIG, offset=4001, limit=100)
    obs = parse_read(result.text, result.is_error, args)
    assert (min(obs.lines), max(obs.lines), obs.total_lines, obs.next_offset) == (4001, 4100, 5001, 4101)


def test_limit_zero_shows_no_line():
    result, args = _read("stock", "a\nb\nc\n", limit=0)
    assert result.text == "\n\n[4 more lines in file. Use offset=1 to continue.]"
    obs = parse_read(result.text, False, {"path": "x", "limit": 0})
    assert (obs.lines, obs.total_lines, obs.next_offset) == ({}, 4, 1)


def test_claude_code_token_budget_error_is_a_block():
    result, args = _read("claude-code", BIG, offset=2001)
    assert result.is_error and result.text.startswith("File content (28274 tokens) exceeds maximum allowed tokens")
    assert parse_read(result.text, result.is_error, args).blocked


def test_b_block_error_is_blocked_with_no_text():
    result, args = _read("B", BIG)
    obs = parse_read(result.text, result.is_error, args)
    assert result.is_error and obs.blocked and obs.lines == {} and obs.total_lines == 5000


def test_c_cut_is_numbered_and_carries_the_map():
    result, args = _read("C", PY, path="m.py")
    obs = parse_read(result.text, result.is_error, args)
    assert (min(obs.lines), max(obs.lines), obs.total_lines, obs.next_offset, obs.cut) == (1, 400, 1051, 401, True)
    assert obs.lines[22] == "def f2(x):"  # the "{n:>6}\t" prefix is stripped
    assert ("def f40 (lines 820-839)", 820, 839) in obs.map_ranges
    assert len(obs.map_ranges) == 50


def test_claude_code_full_page_without_notice_continues_only_if_the_default_limit_is_known():
    short = "".join(f"r{i}\n" for i in range(1, 5001))  # short lines: under claude-code's token budget
    result, args = _read("claude-code", short, offset=2001)
    assert not result.is_error
    limit = default_read_limit(get_variant("claude-code").tool_description)
    assert limit == 2000
    obs = parse_read(result.text, result.is_error, args, limit)
    assert (min(obs.lines), max(obs.lines), obs.lines[4000]) == (2001, 4000, "r4000")
    assert (obs.next_offset, obs.eof) == (4001, False)
    assert parse_read(result.text, result.is_error, args, None).eof is True


def test_swe_agent_clip_drops_the_cut_line():
    result, args = _read("swe-agent", BIG)
    assert "<response clipped>" in result.text
    obs = parse_read(result.text, result.is_error, args)
    last = max(obs.lines)
    assert obs.lines[last] == f"row {last:05d} value"  # a whole line, not the clipped half
    assert (min(obs.lines), obs.eof, obs.next_offset) == (1, False, None)


def test_swe_agent_elided_map_shows_no_elided_lines():
    big_py = PY * 3  # 3150 lines, over 16,000 characters
    result, args = _read("swe-agent", big_py, path="m.py")
    assert "eliding lines" in result.text
    obs = parse_read(result.text, result.is_error, args)
    assert obs.lines[1] == "def f1(x):"
    assert 2 not in obs.lines  # the body is elided
    assert all("eliding" not in text for text in obs.lines.values())
    assert obs.eof is False


def test_dedup_stub_states_its_range_and_shows_nothing():
    session = ReadSession()
    _read("B+dedup-naive", BIG, offset=4001, limit=100, session=session, call_id="c2")
    result, args = _read("B+dedup-naive", BIG, offset=4001, limit=100, session=session, call_id="c3")
    assert result.text.startswith("File unchanged since your read of lines 4001-4100 (call c2)")
    obs = parse_read(result.text, result.is_error, args)
    assert (obs.stub_range, obs.lines) == ((4001, 4100), {})


def test_dcp_placeholders_show_nothing():
    for text in ("[DCP: Large output from read(big.txt...) pruned due to age (Turn 3). If you need this data again, "
                 "re-run the tool.]",
                 "[pruned by dynamic-context-pruning: superseded by newer read of big.txt (call c9)]",
                 "Old environment output: (2001 lines omitted)"):
        obs = parse_read(text, False, {"path": "big.txt"})
        assert obs.pruned and obs.lines == {} and obs.total_lines is None


def test_grep_single_file_and_directory_paths():
    single = parse_grep("big.txt:4500: row 04500 value\nbig.txt-4501- row 04501 value", "src/big.txt")
    assert single == {"src/big.txt": ({4500: "row 04500 value", 4501: "row 04501 value"}, [4500])}
    tree = parse_grep("pkg/a.py:3: x = 1\nb.py:7: " + "y" * 500 + "... [truncated]", "src")
    assert tree == {"src/pkg/a.py": ({3: "x = 1"}, [3]), "src/b.py": ({}, [7])}
    assert parse_grep("No matches found", "big.txt") == {}


def test_bash_sed_and_grep_of_the_sims_own_commands():
    assert parse_bash("sed -n '10,12p' big.txt", "row 00010 value\nrow 00011 value\nrow 00012 value\n") == (
        "big.txt", {10: "row 00010 value", 11: "row 00011 value", 12: "row 00012 value"}, [], None)
    assert parse_bash("grep -n -F -e 'row 04500' -- big.txt", "4500:row 04500 value\n") == (
        "big.txt", {4500: "row 04500 value"}, [4500], "row 04500")
    assert parse_bash("python3 -m pytest -q", "1 passed\n") is None


def test_a_read_result_is_parsed_once_and_its_arguments_key_it_by_value_and_type():
    from readbench.sim.observe import _parse_read, _parse_read_memo

    result, args = _read("stock", BIG, offset=4001, limit=100)
    first = parse_read(result.text, result.is_error, args)
    hits = _parse_read_memo.cache_info().hits
    again = parse_read(result.text, result.is_error, dict(reversed(list(args.items()))))  # another dict, same call
    assert again is first and _parse_read_memo.cache_info().hits == hits + 1
    assert first == _parse_read(result.text, result.is_error, args, None)
    # another limit is another result; a float offset is keyed apart from the int one (same parse here)
    other = parse_read(result.text, result.is_error, {**args, "limit": 50})
    assert other is not first and (other.total_lines, other.next_offset) == (5001, 4101)
    as_float = parse_read(result.text, result.is_error, {**args, "offset": 4001.0})
    assert as_float is not first and as_float == first
    # an unhashable argument value is parsed uncached, as before
    odd = parse_read(result.text, result.is_error, {**args, "extra": [1]})
    assert odd == first and odd is not first
