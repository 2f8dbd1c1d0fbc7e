"""Sister `error-purge` (docs/specs/dcp.md §7.2; `errorPurgeStrategy`).

For an errored completed call whose assistant message is followed by more than `minTurnsOld`
user messages (default 4: eligible at 5), the call's `arguments` become
`{"pruned": true, "reason": "errored <tool> call input older than <N> turns"}`; the error
result itself is kept.
"""

from __future__ import annotations

from typing import Any

from readbench.dcp._sister_common import Proposal, completed_occurrences
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import PiView

__all__ = ["STRATEGY", "apply", "STRATEGY_ID", "propose", "pruned_arguments"]

STRATEGY_ID = "error-purge"


def pruned_arguments(reason: str) -> dict[str, object]:
    """Arguments that replace an errored call's input."""
    return {"pruned": True, "reason": reason}


def propose(view: PiView, min_turns_old: int) -> list[Proposal]:
    """Propose input purges of errored calls older than `min_turns_old` user turns."""
    users_after = [0] * (len(view) + 1)
    for pos in range(len(view) - 1, -1, -1):
        users_after[pos] = users_after[pos + 1] + (1 if view.role(pos) == "user" else 0)
    out: list[Proposal] = []
    for occ in completed_occurrences(view):
        if not occ.is_error:
            continue
        if users_after[occ.assistant_pos + 1] <= min_turns_old:
            continue
        reason = f"errored {occ.tool} call input older than {min_turns_old} turns"
        out.append(Proposal(STRATEGY_ID, occ.call_id, "tool_call_input", reason, None))
    return out


def apply(view: PiView, params: Any) -> list[Proposal]:
    """`propose` with the configuration's `min_turns_old` (the strategy record's rule)."""
    return propose(view, params.min_turns_old)


STRATEGY = DcpStrategy(STRATEGY_ID, "sister", "diegopetrucci/pi-dynamic-context-pruning 0.1.6 errorPurgeStrategy "
                       "(dcp.md §7.2)", apply, '{"pruned": true',
                       flag="error_purge", incremental="readbench.dcp._fast_sister:SisterSeq")
