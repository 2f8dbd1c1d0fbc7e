"""CacheStore: live prefix entries of one cache scope (docs/specs/caching.md §8.1, §8.2).

One store holds one scope (workspace/org/key) x one model. Entries are keyed by the chained
prefix hash of the block they end at (`PreparedRequest.hashes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["CacheStore", "Entry"]


@dataclass(slots=True)
class Entry:
    """A cached prefix.

    Attributes:
        tokens: input tokens the prefix covers.
        expires_at_seconds: the entry is gone at this time and later (TTL counted from the start
            of the request that wrote or last read it, §1.3).
        readable_from_seconds: the writer's first-token time; requests starting earlier cannot
            read it (concurrent same-prefix requests all pay the write, §1.1).
    """

    tokens: int
    expires_at_seconds: float
    readable_from_seconds: float


class CacheStore:
    """Mapping prefix hash -> `Entry` with the liveness rules of §8.2 step 1."""

    def __init__(self) -> None:
        self._entries: dict[bytes, Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def live(self, key: bytes, now_seconds: float) -> Entry | None:
        """The entry under `key` if it is readable at `now_seconds`, else None.

        An entry is readable when `readable_from_seconds <= now < expires_at_seconds`.
        Expired entries are dropped on the way.
        """
        e = self._entries.get(key)
        if e is None:
            return None
        if e.expires_at_seconds <= now_seconds:
            del self._entries[key]
            return None
        if e.readable_from_seconds > now_seconds:
            return None
        return e

    def first_live(self, keys: Sequence[bytes], order: Iterable[int], now_seconds: float) -> int | None:
        """The first index `i` of `order` whose entry `keys[i]` is readable at `now_seconds`, or
        None: `live` on each in turn (expired entries met on the way are dropped), in one call."""
        entries = self._entries
        for i in order:
            e = entries.get(keys[i])
            if e is None:
                continue
            if e.expires_at_seconds <= now_seconds:
                del entries[keys[i]]
                continue
            if e.readable_from_seconds > now_seconds:
                continue
            return i
        return None

    def peek(self, key: bytes) -> Entry | None:
        """The entry under `key` as stored (expired or not yet readable included), no side effects."""
        return self._entries.get(key)

    def put(
        self,
        key: bytes,
        tokens: int,
        *,
        now_seconds: float,
        expires_at_seconds: float,
        readable_from_seconds: float,
    ) -> None:
        """Create the entry under `key`, or merge into a live one (latest expiry, earliest
        readability). An entry already expired at `now_seconds` is replaced."""
        e = self._entries.get(key)
        if e is None or e.expires_at_seconds <= now_seconds:
            self._entries[key] = Entry(tokens, expires_at_seconds, readable_from_seconds)
            return
        e.expires_at_seconds = max(e.expires_at_seconds, expires_at_seconds)
        e.readable_from_seconds = min(e.readable_from_seconds, readable_from_seconds)

    def refresh(self, key: bytes, expires_at_seconds: float) -> None:
        """Extend the expiry of an existing entry (a hit refreshes it at no cost, §1.3)."""
        e = self._entries.get(key)
        if e is not None and expires_at_seconds > e.expires_at_seconds:
            e.expires_at_seconds = expires_at_seconds

    def put_prefixes(
        self,
        hashes: tuple[bytes, ...],
        cum_tokens: tuple[int, ...],
        *,
        first: int,
        now_seconds: float,
        expires_at_seconds: float,
        readable_from_seconds: float,
    ) -> None:
        """`refresh` every key in hashes[:first], `put` every key in hashes[first:] with its
        cumulative tokens (a whole prompt cached at every block boundary). Same semantics as
        the single-key methods, in one loop."""
        entries = self._entries
        for key in hashes[:first]:
            e = entries.get(key)
            if e is not None and expires_at_seconds > e.expires_at_seconds:
                e.expires_at_seconds = expires_at_seconds
        for key, tokens in zip(hashes[first:], cum_tokens[first:]):
            e = entries.get(key)
            if e is None or e.expires_at_seconds <= now_seconds:
                entries[key] = Entry(tokens, expires_at_seconds, readable_from_seconds)
            else:
                if expires_at_seconds > e.expires_at_seconds:
                    e.expires_at_seconds = expires_at_seconds
                if readable_from_seconds < e.readable_from_seconds:
                    e.readable_from_seconds = readable_from_seconds

