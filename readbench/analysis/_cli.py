"""`readbench report` (table + statistics + report from logs) and `readbench compare` /
`readbench baseline` (the nightly verdict against a committed baseline); `readbench plan` is
registered by readbench.run._cli."""

from __future__ import annotations

from readbench.analysis.baseline_cli import commands as baseline_commands
from readbench.analysis.report_cli import report

commands = [report, *baseline_commands]
