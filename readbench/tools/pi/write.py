"""pi 0.84.1's write tool result text (docs/specs/pi-tools.md §3.4; `dist/core/tools/write.js`).

write creates parent directories and overwrites; the sandbox adapter does that. pi writes the
content as UTF-8 and reports its JavaScript `.length` (UTF-16 code units) as "bytes".
"""

from __future__ import annotations

from readbench.base.js import utf16_len

__all__ = ["write_success_text"]


def write_success_text(content: str, path: str) -> str:
    """`Successfully wrote {content.length} bytes to {path}` as pi 0.84.1 prints it.

    Args:
        content: the `content` argument (text).
        path: the `path` argument as the model sent it.

    Returns:
        e.g. `write_success_text("hé😀", "a.txt") == "Successfully wrote 4 bytes to a.txt"`
        (4 UTF-16 code units, although the file holds 7 UTF-8 bytes).
    """
    return f"Successfully wrote {utf16_len(content)} bytes to {path}"
