"""claude-code: Claude Code's Read (docs/specs/variants.md "claude-code")."""

from __future__ import annotations

from pathlib import Path

import pytest
from read_helpers import BIG, run

from readbench.read import ReadSession, get_variant
from readbench.read._claude_code import EDIT_NOT_READ_ERROR, ClaudeCodeParams, ClaudeCodeRead


def cc(count_tokens=lambda text: 0, **params) -> ClaudeCodeRead:
    return ClaudeCodeRead(
        "claude-code", "test", ClaudeCodeParams(**params), count_tokens=count_tokens
    )


def read(v: ClaudeCodeRead, data: bytes, offset=None, limit=None, session=None, call_id="c1"):
    return v.read(
        data,
        "f.txt",
        offset,
        limit,
        call_id=call_id,
        session=session or ReadSession(),
        visible_call_ids=None,
    )


def test_lines_are_numbered_cat_n_style():
    r = read(cc(), b"a\n\tb\n")
    assert r.text == "     1\ta\n     2\t\tb"
    assert (r.is_error, r.details.first_line, r.details.last_line, r.details.capped) == (
        False,
        1,
        2,
        False,
    )


@pytest.mark.parametrize("style, text", [
    ("padded-tab", "     9\ta\n    10\t\tb"),
    ("padded-arrow", "     9→a\n    10→\tb"),  # Claude Code 2.0.x transcripts
    ("tab", "9\ta\n10\t\tb"),  # Claude Code 2.1.1xx-2.1.9x transcripts
    ("arrow", "9→a\n10→\tb"),
])
def test_line_number_styles(style, text):
    data = b"".join(b"x\n" for _ in range(8)) + b"a\n\tb\n"
    assert read(cc(line_numbers=style), data, offset=9).text == text


def test_unknown_line_number_style_is_refused_by_name():
    with pytest.raises(ValueError, match=r"parameter 'line_numbers' must be one of \['padded-tab', 'padded-arrow', "
                                         r"'tab', 'arrow'\], got 'dots'"):
        ClaudeCodeParams(line_numbers="dots")


def test_default_limit_is_2000_lines_without_a_notice():
    r = read(cc(), BIG)
    assert r.text == "\n".join(f"{i:>6}\tline {i}" for i in range(1, 2001))
    assert (r.details.last_line, r.details.capped) == (2000, True)
    r = read(cc(), BIG, offset=2400)
    assert r.text.endswith("  2500\tline 2500") and r.details.capped is False


def test_explicit_limit_is_honoured_beyond_the_default():
    r = read(cc(), BIG, offset=1, limit=2500)
    assert (r.details.last_line, r.details.capped) == (2500, False)


def test_long_lines_are_cut_to_2000_js_characters():
    r = read(cc(), b"x" * 2500 + b"\n" + "\U0001f600".encode() * 1500 + b"\n")
    assert r.text == "     1\t" + "x" * 2000 + "\n     2\t" + "\U0001f600" * 1000
    assert r.details.capped is True


def test_over_the_token_budget_is_a_hard_error_without_text():
    r = read(cc(count_tokens=lambda text: 30_000), b"abc\n")
    assert r.text == (
        "File content (30000 tokens) exceeds maximum allowed tokens (25000). Please use offset "
        "and limit parameters to read specific portions of the file, or use the GrepTool to "
        "search for specific content."
    )
    assert (r.is_error, r.details.blocked, r.details.error, r.details.first_line) == (
        True,
        True,
        "over_token_budget",
        None,
    )


def test_tokens_are_counted_on_the_returned_text():
    seen = []
    v = cc(count_tokens=lambda text: seen.append(text) or len(text), max_tokens=10)
    assert read(v, b"abc\n").text == "     1\tabc"  # 10 characters: at the budget
    assert read(v, b"abcd\n").text.startswith(
        "File content (11 tokens) exceeds maximum allowed tokens (10)."
    )
    assert seen == ["     1\tabc", "     1\tabcd"]


def test_empty_file_warns_and_counts_as_read():
    s = ReadSession()
    r = read(cc(), b"", session=s)
    assert (
        r.text
        == "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    )
    assert r.is_error is False and s.has_read("f.txt")


def test_offset_past_the_end_warns():
    r = read(cc(), b"a\nb\n", offset=5)
    assert r.text == (
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (5). "
        "The file has 2 lines.</system-reminder>"
    )
    assert r.is_error is False


def test_read_before_edit_pairing():
    v = get_variant("claude-code")
    assert v.requires_read_before_edit is True
    assert EDIT_NOT_READ_ERROR == "File has not been read yet. Read it first before writing to it."
    s = ReadSession()
    assert not s.has_read("f.txt")
    read(cc(), b"a\n", session=s)
    assert s.has_read("f.txt") and s.has_read("./f.txt")


def test_project_tokenizer_is_used_by_default():
    tokenizer = pytest.importorskip(
        "readbench.cache.tokenizer", reason="readbench.cache.tokenizer not available"
    )
    data = Path(__import__("argparse").__file__).read_bytes()
    r = run("claude-code", data)
    body = "\n".join(
        f"{i:>6}\t{line}" for i, line in enumerate(data.decode().split("\n")[:2000], 1)
    )
    n = tokenizer.count_tokens(body, "anthropic")
    assert n > 25_000
    assert r.text.startswith(f"File content ({n} tokens) exceeds maximum allowed tokens (25000).")
    small = run("claude-code", b"def f():\n    return 1\n")
    assert small.text == "     1\tdef f():\n     2\t    return 1"


def test_description_is_claude_codes_usage_block():
    assert get_variant("claude-code").tool_description == (
        "Reads a file from the local filesystem.\n\n"
        "Usage:\n"
        "- By default, it reads up to 2000 lines starting from the beginning of the file\n"
        "- You can optionally specify a line offset and limit (especially handy for long files), "
        "but it's recommended to read the whole file by not providing these parameters\n"
        "- Any lines longer than 2000 characters will be truncated\n"
        "- Results are returned using cat -n format, with line numbers starting at 1"
    )
