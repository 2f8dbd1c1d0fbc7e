"""OpenAI prompt caching: the `openai` cache model, two rule sets chosen by the model.

docs/specs/caching.md §2, §8.2.

`openai-automatic` (gpt-4o ... gpt-5.5, §2.1), class `PrefixAutomatic`:
- automatic, exact-prefix, no write fee: every token not read is billed as uncached input;
- each request leaves its whole prompt cached: an entry at every block boundary at or above the
  minimum (1,024). A hit is the longest live prefix ending at a block boundary (reuse inside a
  block that changed is not credited: a documented undercount of at most one block);
- the hit is floored to the model's granularity: 128 tokens historically, implicit breakpoints
  every 2,048 tokens for gpt-5.5 (`cached_tokens` rounded down to a multiple of 128, §2.1);
- retention is an idle TTL from the model table (in_memory ~5-10 min -> 300 s; `24h` retention
  ~30 min typical -> 1,800 s), counted from the start of the last request that used the entry.
  Survival in reality is stochastic (§8.2); this is the documented-rules variant.

`openai-breakpoints` (GPT-5.6 and later, §2.2), class `OpenAIBreakpoints`:
- implicit mode: one breakpoint at the end of the latest eligible message - a user message, the
  last tool result of a consecutive group, or the end of the initial system/developer group -
  plus any explicit breakpoints the request carries; at most 4 writes per request;
- lookup boundaries, longest hit wins: the first 2 and latest 50 explicit breakpoints, the
  implicit one, up to 20 earlier eligible message endings, the end of the initial developer
  group (the guide's list; the SDK docstring's "latest 80, no lookback" is not used, §2.2);
- minimum 1,024 tokens, exact counts (no 128 rounding); writes bill at the 30-minute write
  price (1.25x input), reads at 0.1x; TTL 30 min from the latest write or reuse, refreshed by
  reuse at no charge.
"""

from __future__ import annotations

import bisect

from readbench.cache.blocks import PreparedRequest
from readbench.cache.policies.base import Usage
from readbench.cache.prices import ModelSpec
from readbench.cache.store import CacheStore

__all__ = ["OpenAIBreakpoints", "PrefixAutomatic", "eligible_endings", "make_openai"]

_USER_END_KINDS = frozenset({"text", "image"})


class PrefixAutomatic:
    """Automatic longest-prefix caching without a write fee (OpenAI <= 5.5; Gemini implicit).

    Args:
        spec: models.csv row (min_cacheable_tokens, granularity_tokens, ttl_seconds).
        name: the cache model name reported.
        ttl_seconds: idle TTL override; default the model's `ttl_seconds`.
        granularity_tokens: hit granularity override (tokens; e.g. the one a user's bills show,
            `readbench.replay.billing.infer_granularity`); default the model's `granularity_tokens`.

    Raises:
        ValueError: no TTL in the model row and none given.
    """

    def __init__(self, spec: ModelSpec, *, name: str = "openai", ttl_seconds: float | None = None,
                 granularity_tokens: int | None = None) -> None:
        ttl = ttl_seconds if ttl_seconds is not None else spec.ttl_seconds
        if ttl is None:
            raise ValueError(f"model {spec.model!r} has no ttl_seconds; pass ttl_seconds")
        self.name = name
        self.spec = spec
        self.ttl_seconds = float(ttl)
        self.granularity = max(granularity_tokens if granularity_tokens is not None else spec.granularity_tokens, 1)

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage:
        """Longest live prefix -> floored read; then cache every boundary of this prompt."""
        req = prep.request
        now = req.ts_start_seconds
        hashes, cum = prep.hashes, prep.cum_tokens
        min_tokens = self.spec.min_cacheable_tokens
        # boundaries at or above the minimum (cumulative tokens never decrease), the longest first
        lo = bisect.bisect_left(cum, min_tokens)
        hit = store.first_live(hashes, range(len(hashes) - 1, lo - 1, -1), now)
        best = -1 if hit is None else hit
        gran = self.granularity
        read = (cum[best] // gran) * gran if best >= 0 else 0
        if read < min_tokens:
            read = 0
        # Cache the whole prompt: boundaries at or above the minimum; those up to the hit are
        # refreshed, the rest written (free).
        store.put_prompt(
            hashes, cum, lo=lo, first=best + 1, now_seconds=now,
            expires_at_seconds=now + self.ttl_seconds, readable_from_seconds=req.ts_first_token_seconds,
        )
        return Usage(read, 0, prep.total_tokens - read)


def eligible_endings(prep: PreparedRequest, limit: int | None = None) -> tuple[list[int], int | None]:
    """Eligible message endings and the end of the initial system/developer group (§2.2).

    Args:
        prep: the request.
        limit: keep only the latest `limit` endings (None = all); the scan walks backward from
            the end, so this bounds the work per request.

    Returns:
        (endings as increasing block indices, index of the last block of the initial
        system/developer group or None). An ending is the last block of a user message (text
        or image), or the last tool_result of a consecutive group; the developer-group end is
        counted among the endings.
    """
    blocks = prep.request.blocks
    n = len(blocks)
    dev_end = None
    i = 0
    while i < n and blocks[i].role in ("tools", "system"):
        if blocks[i].kind == "system":
            dev_end = i
        i += 1
    out: list[int] = []
    for j in range(n - 1, -1, -1):
        if limit is not None and len(out) >= limit:
            break
        b = blocks[j]
        if j == dev_end:
            out.append(j)
        elif not b.ends_message:
            continue
        elif b.role == "user" and b.kind in _USER_END_KINDS:
            out.append(j)
        elif b.kind == "tool_result" and (j + 1 == n or blocks[j + 1].kind != "tool_result"):
            out.append(j)
    out.reverse()
    return out, dev_end


class OpenAIBreakpoints:
    """GPT-5.6+ caching: implicit + explicit breakpoints, paid writes (module docstring).

    Args:
        spec: models.csv row (min_cacheable_tokens, ttl_seconds = 1,800).
        mode: "implicit" (default) or "explicit" (only the request's own breakpoints).
        max_writes: breakpoints per request (4, §2.2).
        earlier_endings: earlier eligible endings checked (20, §2.2).

    Raises:
        ValueError: bad mode, or more than `max_writes` breakpoints in a request.
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        mode: str = "implicit",
        ttl_seconds: float | None = None,
        max_writes: int = 4,
        earlier_endings: int = 20,
    ) -> None:
        if mode not in ("implicit", "explicit"):
            raise ValueError(f"mode must be 'implicit' or 'explicit', got {mode!r}")
        ttl = ttl_seconds if ttl_seconds is not None else spec.ttl_seconds
        if ttl is None:
            raise ValueError(f"model {spec.model!r} has no ttl_seconds; pass ttl_seconds")
        self.name = "openai"
        self.spec = spec
        self.mode = mode
        self.ttl_seconds = float(ttl)
        self.max_writes = max_writes
        self.earlier_endings = earlier_endings

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage:
        """Longest hit among the lookup boundaries; writes up to the last breakpoint."""
        req = prep.request
        now = req.ts_start_seconds
        hashes, cum = prep.hashes, prep.cum_tokens
        explicit = list(req.breakpoints or ())
        endings, dev_end = eligible_endings(prep, self.earlier_endings + 1)
        implicit = endings[-1] if (self.mode == "implicit" and endings) else None
        bps = sorted(set(explicit) | ({implicit} if implicit is not None else set()))
        if len(bps) > self.max_writes:
            raise ValueError(f"{len(bps)} cache breakpoints, more than {self.max_writes}: {bps}")
        lookup = set(explicit[:2]) | set(explicit[-50:])
        if implicit is not None:
            lookup.add(implicit)
            earlier = [e for e in endings if e < implicit]
            lookup.update(earlier[-self.earlier_endings:])
        if dev_end is not None:
            lookup.add(dev_end)
        read = 0
        hit = None
        for idx in sorted(lookup, reverse=True):
            if store.live(hashes[idx], now) is not None:
                read, hit = cum[idx], idx
                break
        total = prep.total_tokens
        min_tokens = self.spec.min_cacheable_tokens
        last = cum[bps[-1]] if bps else 0
        expires = now + self.ttl_seconds
        if hit is not None:
            store.refresh(hashes[hit], expires)
        if not bps or last < min_tokens or last <= read:
            return Usage(read, 0, total - read)
        for b in bps:
            if cum[b] >= min_tokens and cum[b] > read:
                store.put(hashes[b], cum[b], now_seconds=now, expires_at_seconds=expires,
                          readable_from_seconds=req.ts_first_token_seconds)
        return Usage(read, last - read, total - last, "30m")


def make_openai(spec: ModelSpec, **params: object) -> PrefixAutomatic | OpenAIBreakpoints:
    """The `openai` cache model for `spec`: rule set by the model's `rules` column.

    Raises:
        ValueError: `spec` is not an OpenAI model.
    """
    if spec.rules == "openai-automatic":
        return PrefixAutomatic(spec, name="openai", **params)  # type: ignore[arg-type]
    if spec.rules == "openai-breakpoints":
        return OpenAIBreakpoints(spec, **params)  # type: ignore[arg-type]
    raise ValueError(f"model {spec.model!r} has rules {spec.rules!r}, not an OpenAI rule set")
