"""JavaScript/Node text semantics that stock pi's read tool depends on.

pi is TypeScript on Node; emulating it byte for byte needs Node's view of text:
`Buffer.toString("utf-8")` decoding, `String.prototype.split("\\n")`, `Array.prototype.slice`,
`Buffer.byteLength`, `String.length` (UTF-16 code units) and `Number.prototype.toFixed`.
Source: shared/specs/pi-tools.md §1.2-§1.3.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

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


def decode_utf8(data: bytes) -> str:
    """Decode file bytes as Node's `Buffer.toString("utf-8")` does.

    Invalid sequences become U+FFFD, one per maximal ill-formed subpart (the WHATWG /
    Unicode "best practice" that both V8 and CPython implement). A UTF-8 BOM is kept as
    U+FEFF, `\\r` is kept (pi-tools.md §1.2 step 7).

    Args:
        data: raw file bytes.

    Returns:
        The decoded text (never raises).
    """
    return data.decode("utf-8", errors="replace")


def utf8_len(text: str) -> int:
    """Bytes of `text` in UTF-8 (Node `Buffer.byteLength(text, "utf-8")`).

    Decoded file text never holds lone surrogates; should a caller's string hold one, it
    counts 3 bytes, as Node encodes it as U+FFFD.
    """
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", errors="surrogatepass"))


def utf16_len(text: str) -> int:
    """JavaScript `text.length`: UTF-16 code units (a code point above U+FFFF counts 2)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


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


def js_to_fixed(value: float, digits: int) -> str:
    """JavaScript `Number.prototype.toFixed(digits)` for finite values below 1e21.

    JS picks the decimal nearest to the exact binary value and, on an exact tie, the
    larger one (so `(1.25).toFixed(1) == "1.3"`); Python's `format` rounds ties to even
    (`"1.2"`). The tie case is real for sizes: 1280 bytes is exactly 1.25 KB.
    """
    quantum = Decimal(1).scaleb(-digits)
    exact = Decimal(value)  # exact binary value of the double
    rounded = exact.copy_abs().quantize(quantum, rounding=ROUND_HALF_UP)
    sign = "-" if exact < 0 and rounded != 0 else ""
    return f"{sign}{rounded:.{digits}f}"


def format_size(n_bytes: int) -> str:
    """pi's `formatSize` (pi-tools.md §1.3): `"{n}B"` below 1024, `"{x.1}KB"` below 1 MiB,
    else `"{x.1}MB"`; e.g. 51200 -> "50.0KB", 60000 -> "58.6KB".

    Raises:
        ValueError: if `n_bytes` is negative.
    """
    if n_bytes < 0:
        raise ValueError(f"n_bytes must be >= 0, got {n_bytes}")
    if n_bytes < 1024:
        return f"{n_bytes}B"
    if n_bytes < 1024 * 1024:
        return f"{js_to_fixed(n_bytes / 1024, 1)}KB"
    return f"{js_to_fixed(n_bytes / (1024 * 1024), 1)}MB"
