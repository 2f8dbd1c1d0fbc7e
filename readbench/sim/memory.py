"""The simulated agent's per-sample memory, kept in inspect's sample store (JSON round-trip).

It holds the plan (phase and counters of the current sub-goal), the call counter that tool-call
ids derive from, the simulated clock, and the sim's record of its own edits. It never holds
file text: what the sim may act on comes only from the current input (readbench.sim.perception).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from readbench.base.store import SIM

__all__ = ["SIM_KEY", "SimMemory", "StepMemory", "call_id", "call_order"]

SIM_KEY = SIM
_ID = re.compile(r"^sim([0-9a-f]{8})c(\d+)$")


def call_id(seed: str, call_number: int) -> str:
    """The tool-call id of the sim's ``call_number``-th model call (1-based): ``sim<seed8>c<n>``.

    Derived from the sample seed and the call count (never a uuid), so reruns are byte-identical.
    """
    return f"sim{seed[:8]}c{call_number:03d}"


def call_order(seed: str, tool_call_id: str) -> int | None:
    """The call number encoded in one of this sample's tool-call ids, else None."""
    match = _ID.match(tool_call_id)
    if match is None or match.group(1) != seed[:8]:
        return None
    return int(match.group(2))


@dataclass
class StepMemory:
    """Plan state of one sub-goal (one user prompt). Counters are counts; lines are 1-based."""

    index: int = 0
    phase: str = "locate"  # locate | read | act | verify | test | reinspect | done
    actions: int = 0
    mode: str = ""  # "" | blind | ranged | window
    grepped: bool = False
    blind_reads: int = 0
    block_errors: int = 0
    block_retries: int = 0
    follows: int = 0
    paged: bool = False
    map_decided: bool = False
    restart_decided: bool = False
    restart_next: int | None = None
    restart_pending: bool = False
    windows: list[list[int]] = field(default_factory=list)
    edit_attempts: int = 0
    edit_line: int | None = None
    need_read: bool = False
    verify_done: bool = False
    reinspect_reads: int = 0
    empty_reads: int = 0
    test_failures: int = 0
    outcome: str = ""  # why the sub-goal ended: done | gave_up:<reason>
    calls: int = 0  # model calls answered in this sub-goal (exploration and final included)
    target_calls: int = -1  # drawn from calls_per_prompt at the sub-goal's first call (-1: not yet)
    pre_explore: int = 0  # exploration calls before locating
    explored: int = 0  # exploration calls made


@dataclass
class SimMemory:
    """Memory of one sample (store key ``readbench:sim``).

    Attributes:
        profile: the profile in use (drawn once per sample for a mixture).
        seed: the sample seed (readbench.sim.draws.sample_seed).
        calls: model calls answered so far.
        clock_seconds: simulated time at the end of the last call, seconds from sample start.
        last_calls: tool calls issued by the last call: ``[{"id", "function", "arguments"}]``.
        mutations: the sim's successful edits: ``[[path, call number], ...]``.
        step: the current sub-goal's plan.
    """

    profile: str
    seed: str
    calls: int = 0
    clock_seconds: float = 0.0
    last_calls: list[dict[str, Any]] = field(default_factory=list)
    mutations: list[list[Any]] = field(default_factory=list)
    step: StepMemory = field(default_factory=StepMemory)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimMemory:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        data["step"] = StepMemory(**data.get("step", {}))
        return cls(**data)
