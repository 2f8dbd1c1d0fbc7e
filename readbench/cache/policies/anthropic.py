"""Anthropic Messages API prompt caching: `anthropic-5m` and `anthropic-1h`.

Rules (docs/specs/caching.md §1, algorithm §8.2):
- Prefix order tools -> system -> messages; entries are written only at breakpoints (max 4),
  keyed by the chained hash of the prefix ending at the marked block (§1.1).
- Reads look back: from each breakpoint the API checks that block, then earlier positions, at
  most 20 positions including the breakpoint's own; a run of consecutive tool_use blocks, or of
  consecutive tool_result blocks, is one position (§1.1). A = the most tokens any hit covers.
- TTL (5 min or 1 h) counts from the start of the request that wrote or read the entry; a hit
  refreshes it for free (§1.3). A new entry is readable only from the writer's first output
  token, so concurrent same-prefix requests all pay the write (§1.1).
- Below the model's minimum cacheable length nothing is cached and both counters are 0 (§1.2).
- Billing with one TTL: read(A), write(C - A) with C = tokens up to the last breakpoint,
  uncached = total - C (the mixed-TTL rule of §1.3 with B = A or C).

Breakpoint placement (`placement`):
- "pi" (default): what pi's Anthropic client sends, read in `@earendil-works/pi-ai` 0.84.1
  (`npm pack @earendil-works/pi-ai@0.84.1`, tarball sha256 6ab68918...a430c73), file
  `package/dist/api/anthropic-messages.js` (§9):
  * the last tool definition: `convertTools`, lines 995-1022, marks `index === tools.length - 1`
    (line 1019); `buildParams` passes the marker only for the immediate tools and only when
    `compat.supportsCacheControlOnTools` (line 756; deferred tools follow unmarked, line 757);
  * the system prompt text block: `buildParams`, lines 740-749 (without OAuth; with an OAuth
    token both the Claude Code identity block and the prompt block are marked, lines 723-739);
  * the last block of the last message when that message has role user and the block is
    text, image or tool_result (a string content becomes one marked text block):
    `convertMessages`, lines 968-989. Consecutive tool results are merged into one user message
    (lines 948-966), so in a tool loop this is the newest tool_result.
  The TTL comes from `getCacheControl`, lines 27-37: retention "short" (default) = 5 min,
  "long" = `ttl: "1h"` where supported, "none" = no markers (`resolveCacheRetention`, 18-26).
  Our system tier may hold several system blocks (one per inspect system message); "pi" marks
  the last one, as pi sends one system block.
- "automatic": top-level automatic caching, one breakpoint on the last cacheable block
  (walking back over thinking, params and empty blocks) (§1.1).
- "pi+automatic": both; the automatic marker is a no-op when pi already marks that block.
- "none": no breakpoints (nothing cached).
- a callable `(blocks) -> sequence of block indices`.
A request's own `breakpoints` (explicit) override the placement; "automatic" is then added on
top only for "pi+automatic"/"automatic".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from readbench.cache.blocks import Block, PreparedRequest, lookback_candidates
from readbench.cache.policies.base import Usage
from readbench.cache.prices import ModelSpec
from readbench.cache.store import CacheStore

__all__ = ["AnthropicCache", "automatic_breakpoint", "pi_breakpoints"]

Placement = str | Callable[[Sequence[Block]], Sequence[int]]
PLACEMENTS = ("pi", "automatic", "pi+automatic", "none")
_PI_LAST_KINDS = frozenset({"text", "image", "tool_result"})
_UNCACHEABLE_KINDS = frozenset({"thinking", "params"})
#: [blocks object, {key: lookback candidates or breakpoints}] of the latest request
#: (`AnthropicCache._lookback`, `AnthropicCache.breakpoints`)
_LOOKBACK: list = [None, {}]


def pi_breakpoints(blocks: Sequence[Block]) -> tuple[int, ...]:
    """Block indices pi's Anthropic client marks (module docstring, caching.md §9).

    Returns up to three indices, increasing: the last tool_def, the last system block, and the
    last block if it has role user and kind text, image or tool_result.
    """
    last_tool = last_system = None
    for i, b in enumerate(blocks):  # the tools and system tiers lead the request (§1.1)
        if b.kind == "tool_def":
            last_tool = i
        elif b.kind == "system":
            last_system = i
        elif b.role not in ("tools", "system"):
            break
    out = [i for i in (last_tool, last_system) if i is not None]
    if blocks:
        last = len(blocks) - 1
        b = blocks[last]
        if b.role == "user" and b.kind in _PI_LAST_KINDS and last not in out:
            out.append(last)
    return tuple(sorted(out))


def automatic_breakpoint(blocks: Sequence[Block]) -> int | None:
    """The block automatic caching marks: the last cacheable block, or None (§1.1).

    Thinking blocks, virtual params blocks and empty (0-token) blocks cannot carry a marker.
    """
    for i in range(len(blocks) - 1, -1, -1):
        b = blocks[i]
        if b.kind not in _UNCACHEABLE_KINDS and b.tokens > 0:
            return i
    return None


class AnthropicCache:
    """Anthropic explicit-breakpoint caching for one model (rules in the module docstring).

    Args:
        spec: the model's row of models.csv (minimum cacheable tokens; rules "anthropic").
        ttl_seconds: entry lifetime, 300.0 (5 min) or 3600.0 (1 h) (§1.3).
        write_tier: "5m" or "1h", the write price column.
        placement: see the module docstring; default "pi".
        lookback_positions: positions checked per breakpoint, including its own (20, §1.1).
        max_breakpoints: more breakpoints than this is an API error (4, §1.1).

    Raises:
        ValueError: unknown placement name, or a request with more than `max_breakpoints`
            breakpoints (the API answers HTTP 400).
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        ttl_seconds: float,
        write_tier: str,
        placement: Placement = "pi",
        lookback_positions: int = 20,
        max_breakpoints: int = 4,
    ) -> None:
        if isinstance(placement, str) and placement not in PLACEMENTS:
            raise ValueError(f"unknown placement {placement!r}; known: {', '.join(PLACEMENTS)}")
        if lookback_positions < 1:
            raise ValueError(f"lookback_positions must be >= 1, got {lookback_positions}")
        self.name = f"anthropic-{write_tier}"
        self.spec = spec
        self.ttl_seconds = float(ttl_seconds)
        self.write_tier = write_tier
        self.placement = placement
        self.lookback_positions = lookback_positions
        self.max_breakpoints = max_breakpoints

    def _lookback(self, blocks: tuple[Block, ...], index: int) -> list[int]:
        """`lookback_candidates(blocks, index, self.lookback_positions)`, remembered for the latest
        blocks object: the cache models stepped on one request (anthropic-5m and -1h) share it."""
        memo = _LOOKBACK
        if memo[0] is not blocks:
            memo[0] = blocks
            memo[1] = {}
        key = (index, self.lookback_positions)
        out = memo[1].get(key)
        if out is None:
            out = memo[1][key] = lookback_candidates(blocks, index, self.lookback_positions)
        return out

    def breakpoints(self, prep: PreparedRequest) -> tuple[int, ...]:
        """The request's breakpoints after placement (increasing block indices)."""
        p = self.placement
        if callable(p):
            return self._breakpoints(prep)
        blocks = prep.request.blocks
        memo = _LOOKBACK  # remembered for the latest blocks object, as the lookback candidates
        if memo[0] is not blocks:
            memo[0] = blocks
            memo[1] = {}
        key = ("breakpoints", p, prep.request.breakpoints, self.max_breakpoints)
        out = memo[1].get(key)
        if out is None:
            out = memo[1][key] = self._breakpoints(prep)
        return out

    def _breakpoints(self, prep: PreparedRequest) -> tuple[int, ...]:
        blocks = prep.request.blocks
        p = self.placement
        if prep.request.breakpoints is not None:
            base: Sequence[int] = prep.request.breakpoints
        elif callable(p):
            base = p(blocks)
        elif p in ("pi", "pi+automatic"):
            base = pi_breakpoints(blocks)
        else:
            base = ()
        out = set(base)
        if p in ("automatic", "pi+automatic"):
            auto = automatic_breakpoint(blocks)
            if auto is not None:
                out.add(auto)
        if len(out) > self.max_breakpoints:
            raise ValueError(
                f"{len(out)} cache breakpoints in one request, more than the "
                f"{self.max_breakpoints} the API accepts: {sorted(out)}"
            )
        for i in out:
            if not 0 <= i < len(blocks):
                raise ValueError(f"breakpoint {i} outside the request's {len(blocks)} blocks")
            if blocks[i].kind in _UNCACHEABLE_KINDS:
                raise ValueError(f"breakpoint {i} is on a {blocks[i].kind} block, which cannot carry cache_control (§1.1)")
        return tuple(sorted(out))

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage:
        """Read, write and refresh entries for one request (§8.2 steps 1-4); return its Usage."""
        req = prep.request
        total = prep.total_tokens
        bps = self.breakpoints(prep)
        if not bps:
            return Usage(0, 0, total)
        now = req.ts_start_seconds
        hashes, cum = prep.hashes, prep.cum_tokens
        # Step 2: lookback from every breakpoint.
        read = 0
        hits: list[int] = []
        for b in bps:
            idx = store.first_live(hashes, self._lookback(req.blocks, b), now)
            if idx is not None:
                hits.append(idx)
                read = max(read, cum[idx])
        last = cum[bps[-1]]
        min_tokens = self.spec.min_cacheable_tokens
        if last < min_tokens:  # §1.2: no caching, no error, both counters 0
            return Usage(0, 0, total)
        # Steps 3-4: writes at breakpoints beyond A, free create/refresh at or below A.
        expires = now + self.ttl_seconds
        for b in bps:
            t = cum[b]
            if t < min_tokens:
                continue
            readable = req.ts_first_token_seconds if t > read else now
            store.put(hashes[b], t, now_seconds=now, expires_at_seconds=expires, readable_from_seconds=readable)
        for idx in hits:
            store.refresh(hashes[idx], expires)
        write = last - read
        return Usage(read, write, total - last, self.write_tier if write > 0 else None)
