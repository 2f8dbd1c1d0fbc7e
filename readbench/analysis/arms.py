"""How an arm is named: the task whose logs are arms, a variant's or DCP configuration's name,
and the arm's label. One copy for the run stage (run.json, refused logs), the table, the
completeness scan and the baseline comparison.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["LOOP_AGENT", "TASK_NAME", "arm_label", "arm_name", "spec_name"]

TASK_NAME = "read_strategies"
"""The inspect task whose logs are the arms (readbench.run.task; ``readbench/read_strategies``)."""


def spec_name(value: Any) -> str | None:
    """Name of a variant/DCP spec (a matrix entry or a task arg): the string itself, a dict's
    ``name``, else sorted JSON; None stays None.

    ``False`` is ``"off"``: YAML 1.1 parses ``-T dcp=off`` to False before inspect records it
    (readbench.run.task.dcp_spec maps it the same way when building the task)."""
    if value is False:
        return "off"
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value["name"]
    return json.dumps(value, sort_keys=True)


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
