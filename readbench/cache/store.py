"""CacheStore: live prefix entries of one cache scope (docs/specs/caching.md §8.1, §8.2).

One store holds one scope (workspace/org/key) x one model. Entries are keyed by the chained
prefix hash of the block they end at (`PreparedRequest.hashes`).

`put_prompt` (a whole prompt cached at every block boundary, the automatic-prefix cache models)
refreshes the boundaries up to the hit lazily: it records the refresh as pending over a slice of
the request's hash tuple and applies it to an entry only when something else needs that entry.
Consecutive prompts share their prefix (the same hash objects), so a prompt costs O(new blocks)
Python work instead of O(all blocks); every method answers as if the refresh had been applied.
"""

from __future__ import annotations

import itertools
import operator
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
        # a refresh not yet applied (`put_prompt`): every entry under keys[lo:hi] has its expiry
        # raised to `expires` (entries added or dropped since are outside it, see `put_prompt`)
        self._pend_keys: tuple[bytes, ...] = ()
        self._pend_lo = 0
        self._pend_hi = 0
        self._pend_expires = 0.0

    def __len__(self) -> int:
        return len(self._entries)

    def _apply(self, lo: int, hi: int) -> None:
        """Apply the pending refresh to keys[lo:hi] (a part of its range)."""
        entries, expires = self._entries, self._pend_expires
        for key in self._pend_keys[lo:hi]:
            e = entries.get(key)
            if e is not None and expires > e.expires_at_seconds:
                e.expires_at_seconds = expires

    def _flush(self) -> None:
        """Apply the whole pending refresh (before any access that does not account for it)."""
        if self._pend_hi > self._pend_lo:
            self._apply(self._pend_lo, self._pend_hi)
        self._pend_keys, self._pend_lo, self._pend_hi = (), 0, 0

    def _pending_upto(self, keys: Sequence[bytes]) -> int:
        """The end of the pending range over `keys`: keys[i] is under the pending refresh for
        pend_lo <= i < this (equal keys at the same places as the pending keys: chained prefix
        hashes that differ at one place differ at every later one)."""
        pend = self._pend_keys
        hi = min(self._pend_hi, len(keys))
        if hi <= self._pend_lo:
            return 0
        if keys is pend:
            return hi
        k = next(itertools.compress(itertools.count(), map(operator.is_not, keys[:hi], pend[:hi])), hi)
        while k < hi and keys[k] == pend[k]:  # equal keys in other objects (a request built anew)
            k += 1
        return k

    def live(self, key: bytes, now_seconds: float) -> Entry | None:
        """The entry under `key` if it is readable at `now_seconds`, else None.

        An entry is readable when `readable_from_seconds <= now < expires_at_seconds`.
        Expired entries are dropped on the way.
        """
        self._flush()
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
        if self._pend_hi > self._pend_lo:
            upto = self._pending_upto(keys)
            if upto > self._pend_lo:
                return self._first_live_pending(keys, order, now_seconds, upto)
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

    def _first_live_pending(self, keys: Sequence[bytes], order: Iterable[int], now_seconds: float, upto: int) -> int | None:
        """`first_live` where keys[pend_lo:upto] are under the pending refresh."""
        entries = self._entries
        lo, pend = self._pend_lo, self._pend_expires
        for i in order:
            e = entries.get(keys[i])
            if e is None:
                continue
            expires = e.expires_at_seconds
            if lo <= i < upto and pend > expires:
                expires = pend
            if expires <= now_seconds:
                del entries[keys[i]]
                continue
            if e.readable_from_seconds > now_seconds:
                continue
            return i
        return None

    def peek(self, key: bytes) -> Entry | None:
        """The entry under `key` as stored (expired or not yet readable included), no side effects
        on what later calls see."""
        self._flush()
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
        self._flush()
        e = self._entries.get(key)
        if e is None or e.expires_at_seconds <= now_seconds:
            self._entries[key] = Entry(tokens, expires_at_seconds, readable_from_seconds)
            return
        e.expires_at_seconds = max(e.expires_at_seconds, expires_at_seconds)
        e.readable_from_seconds = min(e.readable_from_seconds, readable_from_seconds)

    def refresh(self, key: bytes, expires_at_seconds: float) -> None:
        """Extend the expiry of an existing entry (a hit refreshes it at no cost, §1.3)."""
        self._flush()
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
        self._flush()
        entries = self._entries
        for key in hashes[:first]:
            e = entries.get(key)
            if e is not None and expires_at_seconds > e.expires_at_seconds:
                e.expires_at_seconds = expires_at_seconds
        self._put_from(hashes, cum_tokens, first, now_seconds, expires_at_seconds, readable_from_seconds)

    def put_prompt(
        self,
        hashes: tuple[bytes, ...],
        cum_tokens: tuple[int, ...],
        *,
        lo: int,
        first: int,
        now_seconds: float,
        expires_at_seconds: float,
        readable_from_seconds: float,
    ) -> None:
        """`put_prefixes(hashes[lo:], cum_tokens[lo:], first=first - lo, ...)` for `lo <= first`:
        `refresh` every key in hashes[lo:first], `put` every key in hashes[first:]. The refresh is
        left pending (module docstring) and applied when another method needs those entries.

        `hashes` must be chained prefix hashes (`PreparedRequest.hashes`): a key differs from every
        key at another position of any request (the pending range is found by position).
        """
        first = max(first, lo)
        pend_lo, pend_hi = self._pend_lo, self._pend_hi
        if pend_hi > pend_lo:
            # the old pending range stays pending where the new one covers it with a later expiry
            keep = min(self._pending_upto(hashes), first) if pend_lo == lo and expires_at_seconds >= self._pend_expires else pend_lo
            if keep < pend_hi:
                self._apply(max(keep, pend_lo), pend_hi)
        self._pend_keys, self._pend_lo, self._pend_hi, self._pend_expires = hashes, lo, first, expires_at_seconds
        self._put_from(hashes, cum_tokens, first, now_seconds, expires_at_seconds, readable_from_seconds)

    def _put_from(self, hashes: tuple[bytes, ...], cum_tokens: tuple[int, ...], first: int, now_seconds: float,
                  expires_at_seconds: float, readable_from_seconds: float) -> None:
        """`put` every key in hashes[first:] with its cumulative tokens (`put`'s rules, in one loop;
        `put_prefixes` and `put_prompt` share it)."""
        entries = self._entries
        for key, tokens in zip(hashes[first:], cum_tokens[first:]):
            e = entries.get(key)
            if e is None or e.expires_at_seconds <= now_seconds:
                entries[key] = Entry(tokens, expires_at_seconds, readable_from_seconds)
            else:
                if expires_at_seconds > e.expires_at_seconds:
                    e.expires_at_seconds = expires_at_seconds
                if readable_from_seconds < e.readable_from_seconds:
                    e.readable_from_seconds = readable_from_seconds
