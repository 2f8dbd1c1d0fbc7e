"""Shared record and protocol of the cache models (docs/specs/caching.md §8.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from readbench.cache.blocks import PreparedRequest
from readbench.cache.store import CacheStore

__all__ = ["CachePolicy", "Usage", "WRITE_TIERS"]

#: Write price tiers: Anthropic 5-minute and 1-hour writes, OpenAI GPT-5.6+ 30-minute writes.
WRITE_TIERS = ("5m", "1h", "30m")


@dataclass(frozen=True)
class Usage:
    """Input-token split of one request; the three counts sum to the request's input tokens.

    Attributes:
        cache_read_tokens: tokens served from cache (billed at the cache-read price).
        cache_write_tokens: tokens written to cache at a write price (0 where writes are free:
            those tokens are counted as uncached instead).
        uncached_input_tokens: tokens billed at the base input price.
        write_tier: which write price applies (one of WRITE_TIERS), None when nothing is written.
    """

    cache_read_tokens: int
    cache_write_tokens: int
    uncached_input_tokens: int
    write_tier: str | None = None


class CachePolicy(Protocol):
    """One provider's caching rules bound to one model; holds per-simulation state.

    `bill` is called once per request in start-time order with the scope's store; it reads,
    writes and refreshes entries and returns the request's `Usage`.
    """

    name: str

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage: ...
