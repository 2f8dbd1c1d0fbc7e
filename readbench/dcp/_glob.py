"""Path globs as both DCP extensions compile them (docs/specs/dcp.md §4 and §7.3).

JavaScript string, JSON and path semantics are readbench.base.js.
"""

from __future__ import annotations

import functools
import re

__all__ = ["glob_to_regex"]


@functools.lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob the way both extensions do (docs/specs/dcp.md §4 and §7.3).

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
