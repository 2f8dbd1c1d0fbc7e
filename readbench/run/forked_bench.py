"""`readbench bench --forked`: a matrix run forked and independent, on the simulated agent in the
local sandbox; model calls and CPU time of each, and whether their per-arm tables are equal
(GitHub issue 25 "Done when").

Each design runs in its own process (``python -m readbench.run.forked_bench DESIGN ...``) so its
CPU time (user + system, the process and its children: tests, rg, tar) is its own. The local
sandbox's directory is fixed per sample and epoch by readbench itself (readbench.sandbox.local):
a random temporary name changed the o200k token count of every request that holds the cwd, so
two independent runs of one arm differed by a few tokens (143,940 vs 143,924 input tokens on
more-itertools/bugfix/0); arms run one at a time (``--max-tasks 1``).

Model calls counted: every ModelEvent in the logs (the trunk's and the forks' live calls for the
forked design; every call for the independent one).

CPU seconds per simulated sample (issue 26 item 2, goal <= 2): each design's CPU seconds over the
samples of its table, start-up and report included (their share falls with the samples: ~15 CPU s
for a run), and as a ratio to a floor measured in the same run (readbench.bench_floor.eval_log_floor:
reading, parsing and hashing each sample's transcript in the independent run's logs once).
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_forked", "compare_tables", "count_model_calls"]

#: CPU seconds per simulated nightly sample the issue asks for (GitHub issue 26 "Done when")
GOAL_CPU_SECONDS_PER_SAMPLE = 2.0

#: columns that differ between any two runs (ids, paths, wall-clock times)
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]


def count_model_calls(log_dir: Path) -> int:
    """ModelEvents in every sample of every log under ``log_dir`` (calls actually made)."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import list_eval_logs, read_eval_log

    total = 0
    for info in list_eval_logs(str(log_dir)):
        for sample in read_eval_log(info.name).samples or []:
            total += sum(isinstance(e, ModelEvent) for e in sample.events)
    return total


def compare_tables(a: Path, b: Path) -> dict[str, Any]:
    """Compare two runs' table.parquet on every column but `RUN_COLUMNS`.

    Returns:
        ``{"rows": int, "equal": bool, "columns_differing": [names]}``.
    """
    from readbench.analysis.table import read_table

    def load(path: Path) -> Any:
        t = read_table(path).drop(columns=RUN_COLUMNS, errors="ignore")
        return t.sort_values(["arm", "sample_id", "epoch"]).reset_index(drop=True)

    ta, tb = load(a), load(b)
    if list(ta.columns) != list(tb.columns) or len(ta) != len(tb):
        return {"rows": len(ta), "equal": False, "columns_differing": ["<shape>"]}
    differing = [c for c in ta.columns if not ta[c].equals(tb[c])]
    return {"rows": len(ta), "equal": not differing, "columns_differing": differing}


def _run(design: str, matrix: str, run_id: str, task_args: list[str]) -> None:
    """One design in this process (called as ``python -m readbench.run.forked_bench``)."""
    from click.testing import CliRunner

    from readbench.run._cli import eval_cmd

    args = ["--matrix", matrix, "--sandbox", "local", "--run-id", run_id, "--design", design, "--max-tasks", "1"]
    for t in task_args:
        args += ["-T", t]
    result = CliRunner().invoke(eval_cmd, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"readbench eval --design {design} exited {result.exit_code}: {result.output[-2000:]}")


def bench_forked(matrix: str, task_args: list[str], run_prefix: str = "bench-forked") -> dict[str, Any]:
    """Run ``matrix`` under both designs (fresh run ids ``<run_prefix>-<design>``) and measure.

    Returns:
        ``{design: {"model_calls", "cpu_seconds", "wall_seconds"}, "tables": compare_tables(...)}``.

    Raises:
        SystemExit: a design's run did not finish.
    """
    out: dict[str, Any] = {"matrix": matrix, "task_args": task_args}
    for design in ("independent", "forked"):
        run_id = f"{run_prefix}-{design}"
        shutil.rmtree(Path("results") / run_id, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "readbench.run.forked_bench", design, matrix, run_id, *task_args],
                       check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        run_dir = Path("results") / run_id
        calls = count_model_calls(run_dir / "logs") + (count_model_calls(run_dir / "trunk")
                                                       if (run_dir / "trunk").is_dir() else 0)
        out[design] = {"model_calls": calls, "wall_seconds": round(time.monotonic() - t0, 1),
                       "cpu_seconds": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1)}
    out["tables"] = compare_tables(Path("results") / f"{run_prefix}-forked" / "table.parquet",
                                   Path("results") / f"{run_prefix}-independent" / "table.parquet")
    i, f = out["independent"], out["forked"]
    from readbench.analysis.table import read_table
    from readbench.bench_floor import eval_log_floor, ratio

    samples = len(read_table(Path("results") / f"{run_prefix}-independent" / "table.parquet"))
    floor, logged = eval_log_floor(Path("results") / f"{run_prefix}-independent" / "logs")
    out["samples"] = samples
    out["floor_cpu_seconds_per_sample"] = floor / logged
    out["goal_cpu_seconds_per_sample"] = GOAL_CPU_SECONDS_PER_SAMPLE
    for d in (i, f):
        d["cpu_seconds_per_sample"] = d["cpu_seconds"] / max(samples, 1)
        d["cpu_per_sample_x_floor"] = ratio(d["cpu_seconds_per_sample"], out["floor_cpu_seconds_per_sample"])
    out["saved"] = {"model_calls": 1 - f["model_calls"] / max(i["model_calls"], 1),
                    "cpu_seconds": 1 - f["cpu_seconds"] / max(i["cpu_seconds"], 1e-9)}
    return out


if __name__ == "__main__":
    _run(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
