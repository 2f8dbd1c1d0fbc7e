"""Sister `dedupe` (docs/specs/dcp.md §7.2; `dedupeStrategy` in the extension's index.ts).

Key = lower-cased trimmed tool name + `::` + JSON of the arguments with object keys sorted
recursively (values, nulls and array order untouched). Only completed calls count. Every older
occurrence of a key is proposed for replacement by
`[pruned by dynamic-context-pruning: duplicate <tool> call result; see newest occurrence (call <newestId>)]`.
"""

from __future__ import annotations

from typing import Any

from readbench.base.js import js_stringify
from readbench.dcp._sister_common import EXTENSION_ID, Proposal, completed_occurrences
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import PiView

__all__ = ["STRATEGY", "apply", "STRATEGY_ID", "canonicalize", "dedupe_key", "placeholder", "propose"]

STRATEGY_ID = "dedupe"


def canonicalize(value: Any) -> Any:
    """Sort object keys recursively; keep nulls, values and array order."""
    if isinstance(value, list):
        return [canonicalize(v) for v in value]
    if isinstance(value, dict):
        return {k: canonicalize(value[k]) for k in sorted(value)}
    return value


def dedupe_key(tool: str, args: Any) -> str:
    """`buildDedupeKey`: `<tool lower>::<canonical JSON>`."""
    return f"{tool.strip().lower()}::{js_stringify(canonicalize(args if args is not None else {}))}"


def placeholder(tool: str, newest_id: str) -> str:
    """Verbatim dedupe placeholder."""
    return f"[pruned by {EXTENSION_ID}: duplicate {tool} call result; see newest occurrence (call {newest_id})]"


def propose(view: PiView) -> list[Proposal]:
    """Propose every non-newest occurrence of each duplicate key."""
    groups: dict[str, list] = {}
    for occ in completed_occurrences(view):
        groups.setdefault(dedupe_key(occ.tool, occ.arguments), []).append(occ)
    out: list[Proposal] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        newest = group[-1]
        for occ in group[:-1]:
            out.append(
                Proposal(
                    STRATEGY_ID,
                    occ.call_id,
                    "tool_result_content",
                    f"duplicate {occ.tool} call; see result of call {newest.call_id}",
                    placeholder(occ.tool, newest.call_id),
                )
            )
    return out


def apply(view: PiView, params: Any) -> list[Proposal]:
    """`propose` under a configuration's parameters (the strategy record's rule)."""
    return propose(view)


STRATEGY = DcpStrategy(STRATEGY_ID, "sister", "diegopetrucci/pi-dynamic-context-pruning 0.1.6 dedupeStrategy (dcp.md §7.2)",
                       apply, f"[pruned by {EXTENSION_ID}: ", flag="dedupe",
                       incremental="readbench.dcp._fast_sister:SisterSeq")
