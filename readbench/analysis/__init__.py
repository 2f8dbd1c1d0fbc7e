"""readbench.analysis: inspect logs -> tidy table -> paired statistics -> report.

Stages (each re-runnable from the previous stage's files, docs/specs/STYLE.md item 7):

- `table.tidy_table(log_dir)` -> one row per (arm, sample, epoch); `table.write_table` -> table.parquet
- `partition.partition_samples(table)` -> every sample in a named id list (completed, limit_hit,
  errored, excluded)
- `stats` -> pure statistics (Wilson/clustered success rate, paired differences, McNemar,
  Wilcoxon, geometric-mean ratios, Holm)
- `aggregate` -> per-arm summaries and paired comparisons with the baseline arm
- `report.render_report(table, out_dir, run_meta=...)` -> report.md, report.html, figures

Names are imported lazily so that `import readbench.analysis` (done by the CLI) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["partition_samples", "read_table", "render_report", "tidy_table", "write_table"]

_LAZY = {
    "partition_samples": "readbench.analysis.partition",
    "read_table": "readbench.analysis.table",
    "render_report": "readbench.analysis.report",
    "tidy_table": "readbench.analysis.table",
    "write_table": "readbench.analysis.table",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'readbench.analysis' has no attribute {name!r}")
