"""`ProjectionCache`: incremental state that makes `project` cheap on a growing history.

The agent loop projects the full history before every model call, and the history of call
k+1 is the history of call k plus a few messages (the same Python objects). The cache keeps,
per history and configuration parameters, one sequence object (`_fast_pidcp.PiSeq`,
`_fast_pidcp.ObsSeq`, `_fast_sister.SisterSeq`) holding the per-message facts already
computed; a call consumes only the new tail. Results are identical to the straightforward
recomputation (`readbench.dcp._project.project_reference`), which tests/dcp/test_dcp_fast.py
checks call by call.

A history is identified by its first two message objects (kept alive by the cache, so their
`id`s cannot be reused; two, so that samples sharing a system-prompt object stay apart) plus
the configuration family and parameters; a call whose list does not
start with the messages consumed so far (an edited or truncated history) starts that
history's sequence afresh. At most `max_histories` sequences are kept (least recently used
dropped), so the module-level default cache used when `project` gets no `cache=` is bounded.

Contract: messages passed to `project` are not mutated in place afterwards (assign new message
objects instead; inspect and the agent loop do). Replacement messages returned by `project`
may be the same objects on consecutive calls; treat them as read-only too.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Protocol, TypeVar

from inspect_ai.model import ChatMessage

__all__ = ["ProjectionCache", "DEFAULT_CACHE"]


class _Syncing(Protocol):
    """What the cache keeps: state over one growing history (`readbench.dcp._seq.SeqBase`, or
    `readbench.dcp._many`'s bundle of them) that consumes a list's new tail."""

    def sync(self, messages: list[ChatMessage]) -> bool: ...


S = TypeVar("S", bound=_Syncing)


class ProjectionCache:
    """Bounded map (family, params, first two messages) -> incremental sequence state.

    Parameters
    ----------
    max_histories
        Sequences kept (least recently used evicted); 0 disables caching, so every call
        recomputes from scratch on the fast path's code. Raises ValueError when negative.
    """

    def __init__(self, max_histories: int = 64) -> None:
        if not isinstance(max_histories, int) or max_histories < 0:
            raise ValueError(f"max_histories must be an integer >= 0, got {max_histories!r}")
        self.max_histories = max_histories
        self._seqs: OrderedDict[tuple[Any, ...], _Syncing] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seqs)

    def clear(self) -> None:
        """Drop every cached sequence."""
        self._seqs.clear()

    def sequence(self, family: str, params: Any, messages: list[ChatMessage], factory: Callable[[], S]) -> S:
        """The sequence state for `messages` (non-empty), synced to all of them.

        `factory()` builds an empty sequence for `params` when none is cached or the cached one
        does not match the list's prefix.
        """
        try:
            second = id(messages[1]) if len(messages) > 1 else None
            key: tuple[Any, ...] | None = (family, params, id(messages[0]), second)
            hash(key)
        except TypeError:  # unhashable user parameters: no caching
            key = None
        seq = self._seqs.get(key) if key is not None else None
        if seq is None or not seq.sync(messages):
            seq = factory()
            seq.sync(messages)
            if key is not None and self.max_histories > 0:
                self._seqs[key] = seq
        if key is not None and key in self._seqs:
            self._seqs.move_to_end(key)
            while len(self._seqs) > self.max_histories:
                self._seqs.popitem(last=False)
        return seq  # type: ignore[return-value]


DEFAULT_CACHE = ProjectionCache()
"""Used by `project` when no `cache=` is given (bounded: 64 histories)."""
