"""readbench.tools.pi.grep: pi 0.84.1's grep text from ripgrep --json (docs/specs/pi-tools.md §3.2)."""

from __future__ import annotations

import json

import pytest

from readbench.tools.pi.grep import format_grep, path_not_found_text, rg_argv

ROOT = "/w"


def match(path: str, line: int, text: str) -> str:
    return json.dumps({"type": "match", "data": {"path": {"text": path}, "lines": {"text": text}, "line_number": line}})


def begin(path: str) -> str:
    return json.dumps({"type": "begin", "data": {"path": {"text": path}}})


def grep(lines, **kw):
    kw.setdefault("search_path", ROOT)
    kw.setdefault("is_dir", True)
    result = format_grep(lines, **kw)
    return result.text, result.is_error


def test_rg_argv_flags_in_pi_order_sorted_by_path():
    # pi's flags in pi's order, plus `--sort path` so two runs list matches in the same order (issue 29)
    assert rg_argv("x", "/w") == ["rg", "--json", "--line-number", "--color=never", "--hidden", "--sort", "path",
                                  "--", "x", "/w"]
    assert rg_argv("-x", "/w", glob="*.py", ignore_case=True, literal=True, rg="/bin/rg") == [
        "/bin/rg", "--json", "--line-number", "--color=never", "--hidden", "--sort", "path",
        "--ignore-case", "--fixed-strings", "--glob", "*.py", "--", "-x", "/w",
    ]  # fmt: skip
    assert rg_argv("x", "/w", sort=None) == ["rg", "--json", "--line-number", "--color=never", "--hidden", "--", "x", "/w"]
    assert "--glob" not in rg_argv("x", "/w", glob="")


def test_match_lines_relative_paths_and_crlf_stripped():
    lines = [begin("/w/a.py"), match("/w/a.py", 3, "def f():\r\n"), match("/w/sub/b.py", 10, "x\n")]
    assert grep(lines) == ("a.py:3: def f():\nsub/b.py:10: x", False)


def test_single_file_search_uses_basename():
    assert grep([match("/w/sub/b.py", 1, "x\n")], search_path="/w/sub/b.py", is_dir=False) == ("b.py:1: x", False)


def test_path_starting_with_dots_falls_back_to_basename():
    # pi keeps a relative path only if it does not start with ".." (a "..dots/" dir included).
    assert grep([match("/w/..dots/f.txt", 1, "x\n")]) == ("f.txt:1: x", False)


def test_no_matches():
    assert grep([begin("/w/a.py")]) == ("No matches found", False)
    assert grep(b"") == ("No matches found", False)


def test_match_limit_notice_fires_at_exactly_limit():
    lines = [match("/w/a", i, "x\n") for i in (1, 2)]
    assert grep(lines, limit=2) == ("a:1: x\na:2: x\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]", False)
    assert grep(lines + [match("/w/a", 3, "x\n")], limit=0) == (
        "a:1: x\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
        False,
    )


def test_long_line_cut_to_500_utf16_units():
    text, _ = grep([match("/w/a", 1, "y" * 600 + "\n")])
    assert text == "a:1: " + "y" * 500 + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"


def test_line_cut_can_split_a_surrogate_pair_like_js():
    text, _ = grep([match("/w/a", 1, "m" + "\U0001f600" * 300 + "\n")])
    assert text.startswith("a:1: m" + "\U0001f600" * 249 + "\ud83d... [truncated]")


def test_byte_cap_and_notices_joined_with_period():
    lines = [match("/w/a", i, "w" * 600 + "\n") for i in range(1, 201)]
    text, _ = grep(lines, limit=1000)
    kept = text.split("\n\n[")[0].split("\n")
    # each kept line is "a:N: " + 500 w + "... [truncated]"; whole lines only, <= 51,200 bytes
    assert len(kept) == 98
    assert text.endswith("\n\n[50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]")


def test_context_lines_read_from_file_with_cr_as_newline():
    data = b"l1\nl2\nmatch l3\nl4\r\nl5\rl6\nmatch l7\n"
    text, _ = grep(
        [match("/w/c.txt", 3, "match l3\n"), match("/w/c.txt", 6, "match l7\n")],
        context=1,
        read_file=lambda p: data,
    )
    # ripgrep numbers lines by \n only; pi re-splits the file on \r too, so line 6 is "l6".
    assert text == "c.txt-2- l2\nc.txt:3: match l3\nc.txt-4- l4\nc.txt-5- l5\nc.txt:6: l6\nc.txt-7- match l7"


def test_unreadable_file_in_context_mode():
    assert grep([match("/w/c", 2, "x\n")], context=2, read_file=lambda p: None) == ("c:2: (unable to read file)", False)


def test_context_needs_read_file():
    with pytest.raises(ValueError, match="needs read_file"):
        grep([match("/w/c", 2, "x\n")], context=1)


def test_rg_failure_is_error_with_trimmed_stderr():
    assert grep(b"", rg_exit_code=2, rg_stderr="rg: regex parse error:\n    (\nerror: unclosed group\n") == (
        "rg: regex parse error:\n    (\nerror: unclosed group",
        True,
    )
    assert grep(b"", rg_exit_code=2) == ("ripgrep exited with code 2", True)


def test_path_not_found_text():
    assert path_not_found_text("/w/nope") == "Path not found: /w/nope"


def test_stdout_text_is_split_like_node_readline_not_splitlines():
    # ripgrep does not escape U+2028 inside JSON strings; str.splitlines() would cut the event.
    stdout = match("/w/u.txt", 1, "a\u2028b match\n") + "\n"
    assert grep(stdout) == ("u.txt:1: a\u2028b match", False)
    assert grep(stdout.encode()) == ("u.txt:1: a\u2028b match", False)


def test_real_ripgrep_lists_matches_in_path_order(tmp_path):
    """Issue 29: ripgrep's parallel walk emits files in any order; `rg_argv` sorts them by path."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    rg = shutil.which("rg") or str(Path(sys.prefix) / "bin" / "rg")
    if not Path(rg).exists():
        pytest.skip("ripgrep (rg) not installed")
    names = [f"d{i % 7}/f{i:03d}.txt" for i in range(120)]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("needle\n")
    done = subprocess.run(rg_argv("needle", str(tmp_path), rg=rg), capture_output=True, check=False)
    out = format_grep(done.stdout, search_path=str(tmp_path), is_dir=True, limit=500, rg_exit_code=done.returncode)
    assert out.text.split("\n") == [f"{n}:1: needle" for n in sorted(names)]
