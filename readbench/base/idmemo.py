"""A value worked out once per object, found by the object's identity.

A sample's history messages, and the recorded arguments a replay's DCP configurations project,
are the same objects call after call; what is derived from them (a fingerprint, a token count, a
dedup signature) is a pure function of objects that are never mutated in place, so it is worked
out once per object instead of on every call (issue 26). The object is kept with its value, so its
id cannot be reused by another object while the value is cached.

Users: readbench.agent.loop.FingerprintCache (per sample, unbounded), readbench.sim.tokens
(message token counts, 8,192 kept), readbench.dcp.strategies.deduplicate.signature_once (4,096 kept),
readbench.read._pi.split_lines and select (a file text's lines and selections, 8 kept),
readbench.read._swe_agent._TEXTS (a file version's SWE-agent text, 8 kept).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["IdentityMemo"]

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """``compute(obj, *args)``, once per (object identity, args).

    Args:
        compute: a pure function of an object that is not mutated afterwards (and of `args`).
        size: at most this many values kept, the least recently used dropped first; None keeps
            every one (for a memo that lives as long as one sample).
    """

    def __init__(self, compute: Callable[..., V], size: int | None = None) -> None:
        self._compute = compute
        self.size = size
        self._kept: OrderedDict[Hashable, tuple[Any, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, obj: Any) -> bool:
        """Whether `obj` (called without args) has its value kept."""
        hit = self._kept.get(id(obj))
        return hit is not None and hit[0] is obj

    def __call__(self, obj: Any, *args: Hashable) -> V:
        """The value for `obj` (and `args`): kept, or computed now and kept."""
        key: Hashable = (id(obj), *args) if args else id(obj)
        kept = self._kept
        hit = kept.get(key)
        if hit is not None and hit[0] is obj:
            if self.size is not None:
                kept.move_to_end(key)
            return hit[1]
        value = self._compute(obj, *args)
        kept[key] = (obj, value)
        if self.size is not None and len(kept) > self.size:
            kept.popitem(last=False)
        return value
