"""pi 0.84.1's grep tool as pure functions (docs/specs/pi-tools.md §3.2; `dist/core/tools/grep.js`).

The sandbox adapter runs ripgrep with `rg_argv(...)` and hands its `--json` stdout (plus exit code
and stderr) to `format_grep`, which builds pi's text:

- `relpath:LINE: text` per match; with `context > 0`, pi re-reads the file and adds
  `relpath-LINE- text` lines around each match (ripgrep itself gets no context flag);
- paths relative to a searched directory with `/` separators, the basename for a single file;
- each line cut to 500 UTF-16 code units plus `... [truncated]`; `\\r` stripped;
- the whole text capped at 51,200 bytes by whole lines from the top (no line cap);
- notices joined with `. ` inside one `[...]` after a blank line: `{L} matches limit reached. Use
  limit={2L} for more, or refine pattern`, `50.0KB limit reached`, `Some lines truncated to 500
  chars. Use read tool to see full lines`; `No matches found` when nothing matched.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from readbench.base.js import decode_utf8, format_size, js_number_str, js_trim
from readbench.base.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_head, truncate_line

__all__ = ["DEFAULT_GREP_LIMIT", "GrepOutput", "format_grep", "path_not_found_text", "rg_argv"]

DEFAULT_GREP_LIMIT = 100
"""Matches returned when the model gives no `limit` (pi-tools.md §3.2)."""

_MAX_SAFE_INTEGER = 2**53 - 1
_READLINE_SPLIT = re.compile(r"\r\n|\n|\r")


@dataclass(frozen=True)
class GrepOutput:
    """pi's grep tool result: `text` and `is_error` (true only for a ripgrep failure)."""

    text: str
    is_error: bool


def rg_argv(
    pattern: str,
    search_path: str,
    *,
    glob: str | None = None,
    ignore_case: bool = False,
    literal: bool = False,
    rg: str = "rg",
    sort: str | None = "path",
) -> list[str]:
    """The ripgrep command line pi runs (pi-tools.md §3.2), plus `--sort path`.

    pi runs ripgrep unsorted, so matches come in whatever order ripgrep's parallel directory
    walk finishes files ("Order is whatever rg emits", pi-tools.md §3.2): two identical runs
    could see different first-100 matches, and a simulated agent picking the first hit read
    different files (issue 29 item 1). readbench sorts by path (ripgrep then walks in one
    thread): the same tree always gives the same text. The differential test
    (tests/differential/test_diff_grep.py) runs pi with the same sort through a ripgrep config.

    Args:
        pattern: the regex (or literal string) as the model sent it.
        search_path: the absolute path searched (pi resolves `path`, default `.`, against the cwd).
        glob: `--glob` filter; None or "" adds none.
        ignore_case: adds `--ignore-case`.
        literal: adds `--fixed-strings`.
        rg: the ripgrep executable.
        sort: ripgrep's `--sort` key (`path`, readbench's default); None runs ripgrep unsorted,
            exactly as pi does (match order then varies between runs).

    Returns:
        argv, e.g. `["rg", "--json", "--line-number", "--color=never", "--hidden", "--sort", "path",
        "--", "x", "/w"]`.
        There is no context flag: pi adds context lines itself (see `format_grep`).
    """
    argv = [rg, "--json", "--line-number", "--color=never", "--hidden"]
    if sort:
        argv.extend(["--sort", sort])
    if ignore_case:
        argv.append("--ignore-case")
    if literal:
        argv.append("--fixed-strings")
    if glob:
        argv.extend(["--glob", glob])
    argv.extend(["--", pattern, search_path])
    return argv


def path_not_found_text(abs_path: str) -> str:
    """pi's grep error when the search path cannot be stat'ed (isError true)."""
    return f"Path not found: {abs_path}"


def _rg_events(rg_json_lines: Sequence[str] | str | bytes) -> list[str]:
    """Split ripgrep's stdout like Node's readline (on CRLF, LF or CR only). `str.splitlines()`
    would also split inside JSON strings at U+2028, U+0085 or U+001C, which ripgrep does not escape."""
    if isinstance(rg_json_lines, (bytes, bytearray)):
        return _READLINE_SPLIT.split(decode_utf8(bytes(rg_json_lines)))
    if isinstance(rg_json_lines, str):
        return _READLINE_SPLIT.split(rg_json_lines)
    return list(rg_json_lines)


def format_grep(
    rg_json_lines: Sequence[str] | str | bytes,
    *,
    search_path: str,
    is_dir: bool,
    limit: float | None = None,
    context: float | None = None,
    rg_exit_code: int = 0,
    rg_stderr: str = "",
    read_file: Callable[[str], bytes | None] | None = None,
) -> GrepOutput:
    """Format ripgrep `--json` output as pi 0.84.1's grep tool does.

    Args:
        rg_json_lines: ripgrep's stdout as bytes or str (split here as pi's readline does), or
            already split into lines (one JSON event each; do not split with `str.splitlines()`).
        search_path: the absolute searched path, as passed to ripgrep.
        is_dir: whether `search_path` is a directory (decides relative paths vs basenames).
        limit: the `limit` argument; None means 100; values below 1 mean 1. After that many
            matches the rest are ignored (pi kills ripgrep).
        context: the `context` argument in lines before/after each match; None or <= 0 means none.
        rg_exit_code: ripgrep's exit status; anything but 0 or 1 is an error unless the match
            limit was reached first.
        rg_stderr: ripgrep's stderr, the error text (trimmed) when ripgrep failed.
        read_file: returns a file's bytes (None if unreadable); needed when `context` > 0 or a
            match line is not valid UTF-8 (ripgrep then reports it as base64 bytes).

    Returns:
        GrepOutput(text, is_error).

    Raises:
        ValueError: if `read_file` is needed but not given.
    """
    effective_limit = max(1, DEFAULT_GREP_LIMIT if limit is None else limit)
    context_value = context if context is not None and context > 0 else 0
    match_count = 0
    match_limit_reached = False
    matches: list[tuple[str, int, str | None]] = []
    for line in _rg_events(rg_json_lines):
        if not js_trim(line) or match_count >= effective_limit:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "match":
            continue
        match_count += 1
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        file_path = (data.get("path") or {}).get("text") if isinstance(data.get("path"), dict) else None
        line_number = data.get("line_number")
        line_text = (data.get("lines") or {}).get("text") if isinstance(data.get("lines"), dict) else None
        if file_path and isinstance(line_number, (int, float)) and not isinstance(line_number, bool):
            matches.append((file_path, line_number, line_text))
        if match_count >= effective_limit:
            match_limit_reached = True

    if not match_limit_reached and rg_exit_code not in (0, 1):
        return GrepOutput(js_trim(rg_stderr) or f"ripgrep exited with code {rg_exit_code}", True)
    if match_count == 0:
        return GrepOutput("No matches found", False)

    def format_path(file_path: str) -> str:
        if is_dir:
            relative = posixpath.relpath(file_path, search_path)
            if relative == ".":
                relative = ""
            if relative and not relative.startswith(".."):
                return relative.replace("\\", "/")
        return posixpath.basename(file_path)

    file_cache: dict[str, list[str]] = {}

    def file_lines(file_path: str) -> list[str]:
        if file_path not in file_cache:
            if read_file is None:
                raise ValueError("format_grep needs read_file for context lines or non-UTF-8 match lines")
            data = read_file(file_path)
            text = None if data is None else decode_utf8(data)
            file_cache[file_path] = [] if text is None else text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return file_cache[file_path]

    lines_truncated = False
    output_lines: list[str] = []
    for file_path, line_number, line_text in matches:
        relative_path = format_path(file_path)
        if context_value == 0 and line_text is not None:
            sanitized = line_text.replace("\r\n", "\n").replace("\r", "")
            if sanitized.endswith("\n"):
                sanitized = sanitized[:-1]
            text, cut = truncate_line(sanitized)
            lines_truncated = lines_truncated or cut
            output_lines.append(f"{relative_path}:{js_number_str(line_number)}: {text}")
            continue
        lines = file_lines(file_path)
        if not lines:
            output_lines.append(f"{relative_path}:{js_number_str(line_number)}: (unable to read file)")
            continue
        start = max(1, line_number - context_value) if context_value > 0 else line_number
        end = min(len(lines), line_number + context_value) if context_value > 0 else line_number
        current = start
        while current <= end:
            index = current - 1
            in_range = float(index).is_integer() and 0 <= index < len(lines)
            text, cut = truncate_line((lines[int(index)] if in_range else "").replace("\r", ""))
            lines_truncated = lines_truncated or cut
            separator = ":" if current == line_number else "-"
            output_lines.append(f"{relative_path}{separator}{js_number_str(current)}{separator} {text}")
            current += 1

    truncation = truncate_head("\n".join(output_lines), max_lines=_MAX_SAFE_INTEGER)
    notices = []
    if match_limit_reached:
        notices.append(
            f"{js_number_str(effective_limit)} matches limit reached. "
            f"Use limit={js_number_str(effective_limit * 2)} for more, or refine pattern"
        )
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
    if lines_truncated:
        notices.append(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines")
    text = truncation.content
    if notices:
        text += f"\n\n[{'. '.join(notices)}]"
    return GrepOutput(text, False)
