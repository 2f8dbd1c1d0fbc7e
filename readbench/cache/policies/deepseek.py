"""`deepseek`: DeepSeek V4-era context caching with prefix units (docs/specs/caching.md §4).

- Each cached prefix is an independent unit; a request hits only a unit it matches in full
  (a request that diverges inside a unit gets nothing from that unit). The hit is the longest
  fully matched unit.
- Units are persisted (a) at the end of every request's input and at the end of its output
  (the output unit is registered when the next request shows the previous prompt followed by an
  assistant message: that message is taken as the output, readable from the writer's first
  token), and (b) at common prefixes detected across requests: "A+B then A+C persists A;
  A+D then hits A" - the longest prefix (at a block boundary) this request shares with an
  earlier prompt becomes a unit, readable from this request's first token. (c) Units at fixed
  token intervals are not modelled: the interval is not stated [unverified].
- Storage unit 64 tokens, <64 not cached [off 2024-08, may be superseded]: the hit is floored
  to a multiple of `granularity_tokens` (64), so a trailing partial storage unit is a miss.
- No write premium: everything not hit is a miss billed at the input price (write = 0).
- Retention: "within a few hours to a few days" -> `ttl_seconds` (3 h in the model table),
  counted from the start of the last request that used the unit; hits refresh it.
"""

from __future__ import annotations

import bisect

from readbench.cache.blocks import PreparedRequest
from readbench.cache.policies.base import Usage
from readbench.cache.prices import ModelSpec
from readbench.cache.store import CacheStore

__all__ = ["DeepSeekUnits"]


class DeepSeekUnits:
    """Full-unit matching with end-of-input, end-of-output and common-prefix units.

    Args:
        spec: models.csv row (min_cacheable_tokens, granularity_tokens, ttl_seconds).
        ttl_seconds: retention override (s).
        granularity_tokens: storage-unit override (tokens; e.g. the one a user's bills show,
            `readbench.replay.billing.infer_granularity`); default the model's `granularity_tokens`.

    Raises:
        ValueError: `spec` is not a DeepSeek model or has no TTL.
    """

    def __init__(self, spec: ModelSpec, *, ttl_seconds: float | None = None, granularity_tokens: int | None = None) -> None:
        if spec.rules != "deepseek-units":
            raise ValueError(f"model {spec.model!r} has rules {spec.rules!r}, not deepseek-units")
        ttl = ttl_seconds if ttl_seconds is not None else spec.ttl_seconds
        if ttl is None:
            raise ValueError(f"model {spec.model!r} has no ttl_seconds; pass ttl_seconds")
        self.name = "deepseek"
        self.spec = spec
        self.ttl_seconds = float(ttl)
        self.granularity = max(granularity_tokens if granularity_tokens is not None else spec.granularity_tokens, 1)
        # Boundaries of every persisted prompt (for common-prefix detection), as a separate
        # store so they never count as units themselves.
        self._seen = CacheStore()
        self._prev: PreparedRequest | None = None

    def _register_output_unit(self, prep: PreparedRequest, store: CacheStore) -> None:
        prev = self._prev
        if prev is None or not prev.hashes:
            return
        k = len(prev.hashes)
        blocks = prep.request.blocks
        if len(prep.hashes) <= k or prep.hashes[k - 1] != prev.hashes[-1]:
            return
        j = k
        while j < len(blocks) and blocks[j].role == "assistant":
            if blocks[j].ends_message:
                pr = prev.request
                store.put(prep.hashes[j], prep.cum_tokens[j], now_seconds=pr.ts_start_seconds,
                          expires_at_seconds=pr.ts_start_seconds + self.ttl_seconds,
                          readable_from_seconds=pr.ts_first_token_seconds)
                return
            j += 1

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage:
        """Longest full unit -> floored hit; then persist this request's units."""
        req = prep.request
        now = req.ts_start_seconds
        hashes, cum = prep.hashes, prep.cum_tokens
        self._register_output_unit(prep, store)
        min_tokens = self.spec.min_cacheable_tokens
        # boundaries at or above the minimum (cumulative tokens never decrease), the longest first
        lowest = bisect.bisect_left(cum, min_tokens)
        hit = store.first_live(hashes, range(len(hashes) - 1, lowest - 1, -1), now)
        unit = -1 if hit is None else hit
        hit = self._seen.first_live(hashes, range(len(hashes) - 1, max(unit, lowest - 1), -1), now)
        shared = -1 if hit is None else hit
        gran = self.granularity
        hit = (cum[unit] // gran) * gran if unit >= 0 else 0
        expires = now + self.ttl_seconds
        first = req.ts_first_token_seconds
        if unit >= 0:
            store.refresh(hashes[unit], expires)
        if shared >= 0:  # (b) common prefix with an earlier prompt becomes a unit
            store.put(hashes[shared], cum[shared], now_seconds=now, expires_at_seconds=expires, readable_from_seconds=first)
        if hashes and cum[-1] >= min_tokens:  # (a) end of input
            store.put(hashes[-1], cum[-1], now_seconds=now, expires_at_seconds=expires, readable_from_seconds=first)
        # Remember this prompt's boundaries for common-prefix detection. Boundaries up to the
        # longest remembered one or the hit unit are not re-stamped (O(new blocks) per request), so
        # detection memory lasts `ttl_seconds` from a boundary's first sighting.
        known = max(shared, unit)
        lo = max(bisect.bisect_left(cum, min_tokens), known + 1)
        self._seen.put_prefixes(hashes[lo:], cum[lo:], first=0, now_seconds=now,
                                expires_at_seconds=expires, readable_from_seconds=first)
        self._prev = prep
        return Usage(hit, 0, prep.total_tokens - hit)
