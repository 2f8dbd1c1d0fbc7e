"""How an arm is named: the task whose logs are arms, a variant's or DCP configuration's name,
and the arm's label. One copy for the run stage (run.json, refused logs), the table, the
completeness scan and the baseline comparison.
"""

from __future__ import annotations

from readbench.base.names import spec_name

__all__ = ["LOOP_AGENT", "TASK_NAME", "arm_label", "arm_name", "spec_name"]

TASK_NAME = "read_strategies"
"""The inspect task whose logs are the arms (readbench.run.task; ``readbench/read_strategies``)."""


LOOP_AGENT = "readbench"
"""The agent of an arm run by readbench's own loop (readbench.harness.agents.LOOP): its label
names no agent, as before the agent dimension existed."""


def arm_name(variant: str, dcp: str, agent: str | None = LOOP_AGENT) -> str:
    """An arm without its model: ``"B × off"``, or ``"B × off × pi"`` under a real harness
    (GitHub issue 24: the harness is an arm part)."""
    return f"{variant} × {dcp}" if agent in (None, LOOP_AGENT) else f"{variant} × {dcp} × {agent}"


def arm_label(variant: str, dcp: str, model: str, agent: str | None = LOOP_AGENT) -> str:
    """Human label of an arm, e.g. ``"stock × off @ readbench/sim-mixed"``, or
    ``"stock × off × pi @ readbench/sim-mixed"`` under a real harness."""
    return f"{arm_name(variant, dcp, agent)} @ {model}"
