"""Each billed call counted once across the files of one session (issue 22 item 1, sessions.md §7).

Claude Code's sub-agent files (`<session>/subagents/agent-*.jsonl`; `agent-acompact-*` and
`agent-aside_question-*` among them) repeat the parent session's assistant lines with the same
`message.id` and `requestId` and add calls of their own. The provider billed each of those calls
once. `bill_once` keeps one bill per response over all the sessions imported from one session's
files, keyed on the `message.id` part of `Call.billing_id` (the API gives every response its own
id; Claude Code 2.0 re-writes earlier responses on a resume without their `requestId`, so the
copies of one response can carry it or not): the copy with the largest token total (uncached input + cache read + cache write +
output), as ccusage keeps the entry with the larger total; on a tie the main session's copy, then
the first in file order. Every other copy keeps its place in its request sequence (the cache state
it leaves is real: the parent's call wrote it) but loses its `usage` and names the copy that
carries the bill in `Call.billed_in`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from readbench.sessions._types import Call, Session

__all__ = ["bill_once", "billed_total", "response_id"]


def response_id(call: Call) -> str | None:
    """The provider's response id of a call: the `message.id` part of its `billing_id`."""
    return call.billing_id.split(":", 1)[0] if call.billing_id else None


def billed_total(call: Call) -> int:
    """A call's billed tokens, all classes together (0 without usage)."""
    u = call.usage
    return 0 if u is None else u.input_tokens + u.output_tokens


def bill_once(sessions: Iterable[Session]) -> int:
    """Keep one bill per `billing_id` across `sessions` (module docstring), in place.

    Args:
        sessions: the sessions imported from one session's files (any order; the main session is
            preferred on ties by having no `parent_session_id`).

    Returns:
        The number of calls whose usage was dropped as a copy.
    """
    sessions = list(sessions)
    best: dict[str, tuple[tuple[int, int, int, int], int, int]] = {}  # id -> (sort key, session, call)
    order = 0
    for si, s in enumerate(sessions):
        for ci, c in enumerate(s.calls):
            if c.billing_id is None or c.usage is None:
                continue
            key = (-billed_total(c), s.parent_session_id is not None, order, 0)
            order += 1
            rid = response_id(c)
            if rid not in best or key < best[rid][0]:
                best[rid] = (key, si, ci)
    dropped = 0
    for si, s in enumerate(sessions):
        for ci, c in enumerate(s.calls):
            if c.billing_id is None or c.usage is None:
                continue
            _, bsi, bci = best[response_id(c)]
            if (bsi, bci) == (si, ci):
                continue
            keeper = sessions[bsi]
            s.calls[ci] = dataclasses.replace(c, usage=None, cost_usd=None, cost_detail=None,
                                              billed_in=f"{keeper.source}#{keeper.session_id}")
            s.issues.skipped["call:billed_in_another_copy"] += 1
            dropped += 1
    return dropped
