"""`none`: no prompt caching; every input token is uncached (a baseline and a control)."""

from __future__ import annotations

from readbench.cache.blocks import PreparedRequest
from readbench.cache.policies.base import Usage
from readbench.cache.store import CacheStore

__all__ = ["NoCache"]


class NoCache:
    """Bills every input token at the input price; never touches the store."""

    name = "none"

    def bill(self, prep: PreparedRequest, store: CacheStore) -> Usage:
        """Usage(0, 0, total input tokens)."""
        return Usage(0, 0, prep.total_tokens)
