"""JavaScript/Node text, number, JSON and path semantics: the one copy readbench keeps.

pi and both DCP extensions are TypeScript on Node, and every byte they produce and every threshold
they apply is stated in Node's terms: `Buffer.toString("utf-8")` decoding, `Buffer.byteLength`,
UTF-16 `String.length` and `slice`, `String.prototype.trimEnd`, `Number.prototype.toString` and
`toFixed`, `JSON.stringify`, `path.posix.normalize`. The read variants (readbench.read), pi's other
tools (readbench.tools.pi) and the DCP strategies (readbench.dcp) all use these functions, so a
length or a slice means the same thing everywhere (docs/specs/pi-tools.md §0, §1.2-§1.3, §3-§4;
docs/specs/dcp.md Parts A and B).

Pure functions, no readbench imports (the bottom layer, see docs/architecture.md).
"""

from __future__ import annotations

import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "decode_utf8",
    "format_size",
    "js_json_stringify",
    "js_number_str",
    "js_slice_end",
    "js_stringify",
    "js_to_fixed",
    "js_trim",
    "js_trim_end",
    "posix_normalize",
    "posix_resolve",
    "utf8_len",
    "utf16_head",
    "utf16_len",
    "utf16_slice_head",
]

# String.prototype.trimEnd strips ECMAScript WhiteSpace (TAB, VT, FF, ZWNBSP U+FEFF and every
# general-category Zs code point) and LineTerminator (LF, CR, U+2028, U+2029). Python's
# str.rstrip() differs: it also strips U+001C-U+001F and U+0085, and keeps U+FEFF.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def decode_utf8(data: bytes) -> str:
    """Node's `Buffer.toString("utf-8")`: invalid sequences become U+FFFD, one per maximal
    ill-formed subpart (the Unicode/WHATWG practice CPython's decoder also follows); a BOM is kept."""
    return data.decode("utf-8", errors="replace")


def utf8_len(text: str) -> int:
    """Node `Buffer.byteLength(text, "utf-8")` in bytes; a lone surrogate counts 3 (Node writes U+FFFD)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", errors="surrogatepass"))


def utf16_len(text: str) -> int:
    """JavaScript `text.length`: UTF-16 code units (a code point above U+FFFF counts 2, a lone
    surrogate 1)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice_head(text: str, n_units: int) -> str:
    """JavaScript `text.slice(0, n_units)` for `n_units >= 0`, in UTF-16 code units.

    Unlike a code-point slice this can split a surrogate pair, leaving a lone high surrogate
    at the end, exactly as pi's `truncateLine` does (Node later encodes it as U+FFFD).
    """
    if text.isascii():
        return text[:n_units]
    units = text.encode("utf-16-le", errors="surrogatepass")[: 2 * n_units]
    return units.decode("utf-16-le", errors="surrogatepass")


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


def js_trim_end(text: str) -> str:
    """JavaScript `String.prototype.trimEnd()` (ECMAScript WhiteSpace and LineTerminator)."""
    return text.rstrip(_JS_WHITESPACE)


def js_trim(text: str) -> str:
    """JavaScript `String.prototype.trim()` (ECMAScript WhiteSpace and LineTerminator, both ends)."""
    return text.strip(_JS_WHITESPACE)


def js_to_fixed(value: float, digits: int) -> str:
    """JavaScript `Number.prototype.toFixed(digits)` for finite |value| < 1e21.

    JS rounds the exact binary value half-up (`(1.25).toFixed(1) == "1.3"`); Python's format
    rounds ties to even. The tie is real for sizes: 1280 bytes is exactly 1.25 KB.
    """
    quantum = Decimal(1).scaleb(-digits)
    exact = Decimal(value)
    rounded = exact.copy_abs().quantize(quantum, rounding=ROUND_HALF_UP)
    sign = "-" if exact < 0 and rounded != 0 else ""
    return f"{sign}{rounded:.{digits}f}"


def format_size(n_bytes: int) -> str:
    """pi's `formatSize` (truncate.js; pi-tools.md §1.3): `"{n}B"` below 1024, `"{x.1}KB"` below
    1 MiB, else `"{x.1}MB"`. E.g. 51200 -> "50.0KB", 60000 -> "58.6KB", 0 -> "0B".

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


def js_number_str(value: int | float) -> str:
    """JavaScript `String(value)` for a number (ECMAScript Number::toString, radix 10).

    Integers print without a fraction (`2.0` -> "2"), `-0` prints "0", the shortest round-trip
    digits are used, and exponent form is used only below 1e-6 or from 1e21 on
    (`1e-7` -> "1e-7", `0.00001` -> "0.00001", `1.5e300` -> "1.5e+300").

    Raises:
        TypeError: if `value` is a bool or not a number.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {value!r}")
    if isinstance(value, int):
        value = float(value) if abs(value) >= 2**53 else value
        if isinstance(value, int):
            return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest round-trip digits, as ECMAScript requires; Decimal splits them.
    decimal_digits = Decimal(repr(abs(value))).as_tuple()
    digit_list = list(decimal_digits.digits)
    exponent = int(decimal_digits.exponent)
    while len(digit_list) > 1 and digit_list[-1] == 0:
        digit_list.pop()
        exponent += 1
    while len(digit_list) > 1 and digit_list[0] == 0:
        digit_list.pop(0)
    digits = "".join(map(str, digit_list))
    # ECMAScript's k (digit count) and n (value = 0.d1d2...dk * 10**n).
    k, n = len(digits), exponent + len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    exp_str = f"+{exponent}" if exponent >= 0 else str(exponent)
    if k == 1:
        return f"{sign}{digits}e{exp_str}"
    return f"{sign}{digits[0]}.{digits[1:]}e{exp_str}"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_json_stringify(value: object, indent: int = 2) -> str:
    """JavaScript `JSON.stringify(value, null, indent)` for JSON-decoded Python values.

    Numbers print as in JS (`1.0` -> `1`), non-ASCII text is not escaped, control characters are
    `\\u00XX`, and a lone surrogate is escaped as `\\udXXX` (well-formed JSON.stringify).

    Raises:
        TypeError: for values that are not JSON data (dict keys must be str).
    """

    def scalar(item: object) -> str:
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, (int, float)):
            return "null" if isinstance(item, float) and not math.isfinite(item) else js_number_str(item)
        if isinstance(item, str):
            text = json.dumps(item, ensure_ascii=False)
            return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        raise TypeError(f"not JSON data: {item!r}")

    def walk(item: object, level: int) -> str:
        pad = " " * (indent * (level + 1))
        end_pad = " " * (indent * level)
        if isinstance(item, dict):
            if not item:
                return "{}"
            parts = []
            for key, child in item.items():
                if not isinstance(key, str):
                    raise TypeError(f"JSON object keys must be str, got {key!r}")
                parts.append(f"{pad}{scalar(key)}: {walk(child, level + 1)}")
            return "{\n" + ",\n".join(parts) + "\n" + end_pad + "}"
        if isinstance(item, (list, tuple)):
            if not item:
                return "[]"
            return "[\n" + ",\n".join(pad + walk(child, level + 1) for child in item) + "\n" + end_pad + "]"
        return scalar(item)

    return walk(value, 0)


def js_slice_end(end: int, length: int) -> int:
    """Normalise an `Array.prototype.slice` end index: negative counts from the end."""
    if end < 0:
        return max(length + end, 0)
    return min(end, length)


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for JSON data: no spaces, key insertion order, non-ASCII kept.

    Integral floats are written as integers (`1.0` -> `1`) as JS does; `None` is `null`.
    """
    return json.dumps(_jsify(value), separators=(",", ":"), ensure_ascii=False)


def _jsify(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {str(k): _jsify(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsify(v) for v in value]
    return value


def posix_normalize(path: str) -> str:
    """Node's `path.posix.normalize`: resolve `.`/`..`, collapse `//`, keep a trailing slash.

    `""` -> `"."`; an absolute path never climbs above `/`; leading `..` of a relative path is kept.
    """
    if path == "":
        return "."
    absolute = path.startswith("/")
    trailing = path.endswith("/")
    parts: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(seg)
    body = "/".join(parts)
    if body == "":
        if absolute:
            return "/"
        return "./" if trailing else "."
    if trailing:
        body += "/"
    return ("/" + body) if absolute else body


def posix_resolve(cwd: str, path: str) -> str:
    """Node's `path.resolve(cwd, path)` for an absolute `cwd`: joined, normalised, no trailing slash."""
    joined = path if path.startswith("/") else f"{cwd}/{path}"
    out = posix_normalize(joined)
    if len(out) > 1 and out.endswith("/"):
        out = out[:-1]
    return out
