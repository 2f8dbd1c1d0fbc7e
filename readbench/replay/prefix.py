"""The prefix arithmetic of a replayed request (readbench.replay.requests; sessions.md §5, caching.md
§8.1): which salt a block carries after exogenous breaks, and how much of the previous call's
request a call can reuse.

A break at token position p from call i on (`Break`) gives every block that starts at or after p
a new content salt from that call on: the provider's cache sees new bytes there. `salt_at` is the
tuple of `(token position, epoch)` of the breaks in force at a call (epoch k + 1 for a
calibration's k-th break); a block's salt is the highest epoch among the breaks at or before its
start (`salt_of`), 0 when none is, and its content hash is salted with it (`salted`). These are
pure functions; `RequestSet.request` uses them to extend the previous call's blocks, prefix
hashes and cumulative tokens instead of rebuilding them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator

from readbench.cache.blocks import chain_step

__all__ = ["blocks_before", "first_salt_change", "identical_prefix", "salt_index", "salt_of", "salted"]


def salted(h: bytes, salt: int) -> bytes:
    """Content hash `h` (16 bytes) under `salt`: `h` itself for salt 0, else the 16-byte
    `readbench.cache.blocks.chain_step` (XXH3-128) of `h` and the salt (4 bytes, big-endian): an
    identity for the simulation only, as the prefix hashes are."""
    return h if salt == 0 else chain_step(h + salt.to_bytes(4, "big"))


def identical_prefix(a: tuple, b: tuple) -> int:
    """Length of the longest prefix of identical objects (`is`, not `==`), at C speed."""
    n = min(len(a), len(b))
    return next(itertools.compress(itertools.count(), map(operator.is_not, a, b)), n)


def first_salt_change(old: tuple[tuple[int, int], ...], new: tuple[tuple[int, int], ...]) -> int | None:
    """The lowest token position whose salt differs between the two break lists (`salt_of` is a
    step function changing only at break positions); None when no position's does."""
    for p in sorted({0, *(q for q, _ in old), *(q for q, _ in new)}):
        if salt_of(old, p) != salt_of(new, p):
            return p
    return None


def blocks_before(cum: tuple[int, ...], ns: int, position: int) -> int:
    """How many recorded blocks start before token `position`, given the cumulative tokens `cum`
    of a request whose first `ns` blocks are its start blocks."""
    if ns:
        return bisect.bisect_left(cum, position, ns - 1) - (ns - 1)
    return bisect.bisect_left(cum, position) + 1 if position > 0 else 0


def salt_of(salt_at: tuple[tuple[int, int], ...], position: int) -> int:
    """The salt of a block starting at token `position`: the latest break (highest epoch) whose
    position is at or before it; 0 when none is."""
    positions, best = salt_index(salt_at)
    k = bisect.bisect_right(positions, position)
    return best[k - 1] if k else 0


@functools.lru_cache(maxsize=256)
def salt_index(salt_at: tuple[tuple[int, int], ...]) -> tuple[list[int], list[int]]:
    """(break positions sorted, the highest epoch among the breaks at or before each); memoised
    (the same `salt_at` tuple recurs on every call between two breaks). Callers must not mutate
    the lists."""
    ordered = sorted(salt_at)
    positions = [p for p, _ in ordered]
    best, top = [], 0
    for _, epoch in ordered:
        top = max(top, epoch)
        best.append(top)
    return positions, best
