"""A variant's or DCP configuration's name (the one copy; readbench.analysis.arms re-exports it
for the arm labels of the run stage, the table and the report, and readbench.base.budget names
the arms of a running eval with it)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["spec_name"]


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
