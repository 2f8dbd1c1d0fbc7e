"""JavaScript/Node text semantics that stock pi's read tool depends on.

pi is TypeScript on Node; emulating it byte for byte needs Node's view of text:
`Buffer.toString("utf-8")` decoding, `String.prototype.split("\\n")`, `Array.prototype.slice`,
`Buffer.byteLength`, `String.length` (UTF-16 code units) and `Number.prototype.toFixed`.
Source: shared/specs/pi-tools.md §1.2-§1.3.
"""

from __future__ import annotations

# Node decoding, byte/UTF-16 lengths, toFixed and pi's formatSize are shared with pi's other
# tools (readbench.tools.pi); only what the read tool alone needs is defined here.
from readbench.tools.pi._js import decode_utf8, format_size, js_to_fixed, utf8_len, utf16_len

__all__ = [
    "count_lines",
    "decode_utf8",
    "format_size",
    "js_slice_end",
    "js_to_fixed",
    "utf16_head",
    "utf16_len",
    "utf8_len",
]


def utf16_head(text: str, max_units: int) -> str:
    """The longest prefix of `text` whose JavaScript `.length` is at most `max_units`.

    Unlike JS `text.slice(0, n)` it never splits a surrogate pair (a split pair would
    be sent to a provider as U+FFFD); otherwise identical.

    Raises:
        ValueError: if `max_units` is negative.
    """
    if max_units < 0:
        raise ValueError(f"max_units must be >= 0, got {max_units}")
    if text.isascii():
        return text[:max_units]
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > max_units:
            return text[:i]
    return text


def count_lines(text: str) -> int:
    """Lines in `text` as pi's `truncateHead` counts them (pi-tools.md §1.2 step 6).

    `text.split("\\n")` minus a trailing empty segment: `""` has 0 lines, `"a"` 1,
    `"a\\n"` 1, `"a\\n\\n"` 2.
    """
    if not text:
        return 0
    n = text.count("\n") + 1
    return n - 1 if text.endswith("\n") else n


def js_slice_end(end: int, length: int) -> int:
    """Normalise an `Array.prototype.slice` end index: negative counts from the end."""
    if end < 0:
        return max(length + end, 0)
    return min(end, length)


