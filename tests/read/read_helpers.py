"""Helpers for the read-variant tests (imported by name; pytest puts this dir on sys.path)."""

from __future__ import annotations

from readbench.read import ReadResult, ReadSession, get_variant

BIG = "".join(f"line {i}\n" for i in range(1, 2501)).encode()
"""pi-tools.md §1.3 `big.txt`: 2500 lines plus a trailing newline (T=2501)."""

HUNDRED_BYTE_LINES = (("x" * 99 + "\n") * 1000).encode()
"""1000 lines of 100 bytes each (99 x + newline); T=1001."""

LONGLINE = b"short\n" + b"x" * 60000 + b"\nend\n"
"""`longline.txt`: line 2 is 60000 bytes; T=4."""


def numbered(n: int) -> bytes:
    """`line 1\\n` … `line n\\n`."""
    return "".join(f"line {i}\n" for i in range(1, n + 1)).encode()


def run(
    variant: str | dict,
    data: bytes,
    offset: int | None = None,
    limit: int | None = None,
    *,
    path: str = "f.txt",
    call_id: str | None = "call_1",
    session: ReadSession | None = None,
    visible: frozenset[str] | None = None,
) -> ReadResult:
    """One read through `get_variant(variant)` with a fresh session unless one is given."""
    return get_variant(variant).read(
        data,
        path,
        offset,
        limit,
        call_id=call_id,
        session=session if session is not None else ReadSession(),
        visible_call_ids=visible,
    )
