"""JavaScript-compatible string, JSON, path and glob helpers.

Both reference extensions are TypeScript (shared/specs/dcp.md Parts A and B). Their rules are
stated in JS terms: `String.length` counts UTF-16 code units, `JSON.stringify` emits compact
JSON in insertion order, `path.posix.normalize` keeps a trailing slash, a JS `RegExp` `$`
matches only at the very end. These helpers reproduce exactly those behaviours so that every
length threshold, slice and key below means what it means in the extensions.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = [
    "glob_to_regex",
    "js_len",
    "js_slice",
    "js_stringify",
    "posix_normalize",
    "posix_resolve",
]


def js_len(text: str) -> int:
    """Length of `text` in UTF-16 code units (JavaScript `String.length`)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, limit: int) -> str:
    """`text.slice(0, limit)` in UTF-16 code units.

    A slice that would split a surrogate pair stops before that character (JS would keep a lone
    high surrogate, which cannot be written as UTF-8); for BMP-only text it is exactly JS.
    """
    if limit <= 0:
        return ""
    units = 0
    for i, ch in enumerate(text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > limit:
            return text[:i]
        units += width
    return text


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


@functools.lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob the way both extensions do (shared/specs/dcp.md §4 and §7.3).

    `**/` -> `(?:.*/)?`, `**` -> `.*`, `*` -> `[^/]*`, `?` -> `[^/]`, everything else literal.
    The whole string must match (use `.fullmatch`; JS `^...$` without the `m` flag).
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*" and i + 1 < len(pattern) and pattern[i + 1] == "*":
            if i + 2 < len(pattern) and pattern[i + 2] == "/":
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))
