"""Context pruning (DCP) as a pure projection of an inspect message list.

`project(messages, config, state=, usage=) -> Projection(messages, stats, state)` runs one of the
configurations in `configs.py` before a model call: PSU3D0/pi-dcp (docs/specs/dcp.md Part A),
diegopetrucci's cache-aware sister extension (Part B) or SWE-agent observation masking
(anchors.md §1). The input is never mutated.

`project` is incremental on a growing history (the agent loop's case): per-history state lives
in a `ProjectionCache` (pass one per sample as `cache=`, or rely on the bounded module default);
its results equal `readbench.dcp._project.project_reference`, the from-scratch computation.
Registries: `CONFIGS` (named configurations), `STRATEGIES` (the pruning rules of each family,
`readbench.dcp._strategy`).
`gate_candidates` runs the sister pipeline the same way and returns what its gate weighed
(the sister's gate benchmark, dcp.md §7.5; `readbench.replay.gate_sweep`).

`pi_context_usage` is pi's context usage before a call (dcp.md §3), the pressure pi-dcp's bands
read: one copy for the agent loop, the session replay and `replay_projections` (a history
projected at every call boundary, dcp.md §7.5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from readbench.base.lazy import lazy_attributes
from readbench.dcp._strategy import STRATEGIES, DcpStrategy
from readbench.dcp.configs import CONFIG_NAMES, CONFIGS, DcpConfig, get_config, list_configs

if TYPE_CHECKING:
    from readbench.dcp._cache import ProjectionCache
    from readbench.dcp._many import ProjectedCalls, project_calls
    from readbench.dcp._project import GateStep, gate_candidates, prefix_break_index, project
    from readbench.dcp._replay import ReplayCall, call_boundaries, replay_projections
    from readbench.dcp._sister import GateCandidate
    from readbench.dcp._types import ContextUsage, DcpState, DecisionRecord, GateInfo, Projection, ProjectionStats
    from readbench.dcp._usage import pi_context_usage, pi_estimate_tokens, reported_tokens

# imported on first use (PEP 562): they import inspect_ai (~2 s), which `readbench dcp --help` and
# the configurations' registry do not need (readbench/cli.py)
_LAZY = {
    **dict.fromkeys(["ProjectionCache"], "readbench.dcp._cache"),
    **dict.fromkeys(["ProjectedCalls", "project_calls"], "readbench.dcp._many"),
    **dict.fromkeys(["GateStep", "gate_candidates", "prefix_break_index", "project"], "readbench.dcp._project"),
    **dict.fromkeys(["ReplayCall", "call_boundaries", "replay_projections"], "readbench.dcp._replay"),
    **dict.fromkeys(["GateCandidate"], "readbench.dcp._sister"),
    **dict.fromkeys(["ContextUsage", "DcpState", "DecisionRecord", "GateInfo", "Projection", "ProjectionStats"],
                    "readbench.dcp._types"),
    **dict.fromkeys(["pi_context_usage", "pi_estimate_tokens", "reported_tokens"], "readbench.dcp._usage"),
}

__getattr__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = [
    "CONFIGS",
    "CONFIG_NAMES",
    "ContextUsage",
    "DcpConfig",
    "DcpState",
    "DcpStrategy",
    "DecisionRecord",
    "GateCandidate",
    "GateInfo",
    "GateStep",
    "ProjectedCalls",
    "Projection",
    "ProjectionCache",
    "ProjectionStats",
    "ReplayCall",
    "STRATEGIES",
    "call_boundaries",
    "gate_candidates",
    "get_config",
    "list_configs",
    "pi_context_usage",
    "pi_estimate_tokens",
    "prefix_break_index",
    "project",
    "project_calls",
    "replay_projections",
    "reported_tokens",
]
