"""pi 0.84.1's shared output truncation (`dist/core/tools/truncate.js`), ported line for line.

Used by bash (tail) and grep (head, 500-char line cut). Two independent limits, whichever is hit
first: 2000 lines and 50KB = 51,200 UTF-8 bytes (shared/specs/pi-tools.md §1.2 step 6, §3.1, §3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from readbench.tools.pi._js import utf8_len, utf16_len, utf16_slice_head

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "Truncation",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]

DEFAULT_MAX_LINES = 2000
"""Line cap of read, bash and grep (pi-tools.md §1.2)."""
DEFAULT_MAX_BYTES = 50 * 1024
"""Byte cap, 51,200 UTF-8 bytes, printed as `50.0KB` (pi-tools.md §1.3)."""
GREP_MAX_LINE_LENGTH = 500
"""grep cuts each output line to this many UTF-16 code units (pi-tools.md §3.2)."""


@dataclass(frozen=True)
class Truncation:
    """Result of `truncate_head`/`truncate_tail` (pi's `TruncationResult`).

    `content` is the kept text; `total_lines`/`output_lines` count lines as pi does (a trailing
    `\\n` is not an extra line; "" has 0 lines); byte counts are UTF-8 bytes.
    """

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int


def _split_lines_for_counting(content: str) -> list[str]:
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


def truncate_head(content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> Truncation:
    """Keep whole lines from the top (pi `truncateHead`; used by read and grep).

    Never returns a partial line: if the first line alone exceeds `max_bytes`, `content` is ""
    and `first_line_exceeds_limit` is True. A kept line costs its UTF-8 bytes plus 1 for the
    joining newline (except the first).
    """
    total_bytes = utf8_len(content)
    lines = _split_lines_for_counting(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, total_lines, total_bytes, total_lines, total_bytes, False, False, max_lines, max_bytes)
    if utf8_len(lines[0]) > max_bytes:
        return Truncation("", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes)
    kept: list[str] = []
    kept_bytes = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for i, line in enumerate(lines):
        if i >= max_lines:
            break
        line_bytes = utf8_len(line) + (1 if i > 0 else 0)
        if kept_bytes + line_bytes > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        kept_bytes += line_bytes
    if len(kept) >= max_lines and kept_bytes <= max_bytes:
        truncated_by = "lines"
    out = "\n".join(kept)
    return Truncation(out, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(out), False, False, max_lines, max_bytes)


def _tail_bytes(text: str, max_bytes: int) -> str:
    """pi `truncateStringToBytesFromEnd`: the last `max_bytes` UTF-8 bytes, moved forward to a
    character boundary."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: Node's Buffer.from writes it as U+FFFD
        data = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text).encode("utf-8")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", errors="replace")


def truncate_tail(content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> Truncation:
    """Keep whole lines from the bottom (pi `truncateTail`; used by bash).

    If the last line alone exceeds `max_bytes`, its last `max_bytes` bytes are kept
    (`last_line_partial`). The kept text has no trailing newline when truncated.
    """
    total_bytes = utf8_len(content)
    lines = _split_lines_for_counting(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, total_lines, total_bytes, total_lines, total_bytes, False, False, max_lines, max_bytes)
    kept: list[str] = []
    kept_bytes = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    last_line_partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        line_bytes = utf8_len(line) + (1 if kept else 0)
        if kept_bytes + line_bytes > max_bytes:
            truncated_by = "bytes"
            if not kept:
                partial = _tail_bytes(line, max_bytes)
                kept.append(partial)
                kept_bytes = utf8_len(partial)
                last_line_partial = True
            break
        kept.append(line)
        kept_bytes += line_bytes
    if len(kept) >= max_lines and kept_bytes <= max_bytes:
        truncated_by = "lines"
    kept.reverse()
    out = "\n".join(kept)
    return Truncation(out, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(out), last_line_partial, False, max_lines, max_bytes)


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """pi `truncateLine`: cut to `max_chars` UTF-16 code units plus `... [truncated]`.

    Returns `(text, was_truncated)`. The cut can split a surrogate pair, as in pi.
    """
    if utf16_len(line) <= max_chars:
        return line, False
    return f"{utf16_slice_head(line, max_chars)}... [truncated]", True
