"""`readbench report` (table + statistics + report from logs), `readbench plan`, and
`readbench compare` / `readbench baseline` (the nightly verdict against a committed baseline)."""

from __future__ import annotations

from readbench.analysis.baseline_cli import commands as baseline_commands
from readbench.analysis.report_cli import plan, report

commands = [report, plan, *baseline_commands]
