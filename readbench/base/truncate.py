"""pi 0.84.1's output truncation (`dist/core/tools/truncate.js`): the one copy readbench keeps.

`truncate_head` serves the read tool (and every read variant that behaves as stock where it says
nothing: variant A measures characters instead of bytes, the B family refuses instead of cutting)
and grep; `truncate_tail` serves bash; `truncate_line` cuts grep's long lines. Two independent
limits, whichever is hit first: 2000 lines and 50KB = 51,200 UTF-8 bytes (docs/specs/pi-tools.md
§1.2 step 6, §3.1, §3.2).

Pure functions, no readbench imports but `readbench.base.js` (the bottom layer, see
docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from readbench.base.js import utf8_len, utf16_len, utf16_slice_head

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "Truncation",
    "count_lines",
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
    `\\n` is not an extra line; "" has 0 lines); `total_bytes`/`output_bytes` are sizes in the
    measure the caller gave (UTF-8 bytes unless told otherwise). `truncated_by` is "lines", the
    size unit ("bytes" for pi) or None; `first_line_exceeds_limit` when the first line alone is
    over the size cap (then `content` is ""). A cap of None is no cap.
    """

    content: str
    truncated: bool
    truncated_by: str | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int | None
    max_bytes: int | None


def _lines(content: str) -> list[str]:
    """`content.split("\\n")` minus a trailing empty segment (pi's line count)."""
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


def count_lines(text: str) -> int:
    """Lines in `text` as pi's `truncateHead` counts them (pi-tools.md §1.2 step 6).

    `text.split("\\n")` minus a trailing empty segment: `""` has 0 lines, `"a"` 1,
    `"a\\n"` 1, `"a\\n\\n"` 2.
    """
    if not text:
        return 0
    n = text.count("\n") + 1
    return n - 1 if text.endswith("\n") else n


def truncate_head(
    content: str,
    max_lines: int | None = DEFAULT_MAX_LINES,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    *,
    measure: Callable[[str], int] = utf8_len,
    size_unit: str = "bytes",
) -> Truncation:
    """Keep whole lines from the top (pi `truncateHead`; used by read and grep).

    Nothing is cut when the lines are <= `max_lines` and `measure(content)` <= `max_bytes`.
    Otherwise whole lines are kept from the top while `measure(line)` plus 1 for the joining
    newline (except the first) keeps the running size <= `max_bytes`, up to `max_lines` lines;
    `truncated_by` is `size_unit` when the size stopped the loop, else "lines" (including pi's
    quirk where every line fits but a final newline byte did not). Never returns a partial line:
    if the first line alone exceeds `max_bytes`, `content` is "" and `first_line_exceeds_limit`.

    Args:
        content: the text (for read: the selected lines).
        max_lines: line cap, or None for none.
        max_bytes: size cap in `measure` units (UTF-8 bytes for pi), or None for none.
        measure: size function; `utf8_len` (pi) or `utf16_len` (variant A's characters).
        size_unit: the label `truncated_by` takes when the size cap stops the loop.
    """
    total_bytes = measure(content)
    lines = _lines(content)
    total_lines = len(lines)
    lines_ok = max_lines is None or total_lines <= max_lines
    size_ok = max_bytes is None or total_bytes <= max_bytes
    if lines_ok and size_ok:
        return Truncation(content, False, None, total_lines, total_bytes, total_lines, total_bytes, False, False,
                          max_lines, max_bytes)
    if max_bytes is not None and measure(lines[0]) > max_bytes:
        return Truncation("", True, size_unit, total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes)
    kept = 0
    size = 0
    truncated_by = "lines"
    line_cap = total_lines if max_lines is None else min(total_lines, max_lines)
    for i in range(line_cap):
        line_size = measure(lines[i]) + (1 if i > 0 else 0)
        if max_bytes is not None and size + line_size > max_bytes:
            truncated_by = size_unit
            break
        kept += 1
        size += line_size
    if max_lines is not None and kept >= max_lines:
        truncated_by = "lines"
    out = "\n".join(lines[:kept])
    return Truncation(out, True, truncated_by, total_lines, total_bytes, kept, size, False, False, max_lines, max_bytes)


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
    lines = _lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, total_lines, total_bytes, total_lines, total_bytes, False, False, max_lines, max_bytes)
    kept: list[str] = []
    kept_bytes = 0
    truncated_by = "lines"
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
