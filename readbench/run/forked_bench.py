"""`readbench bench --forked`: a matrix run forked and independent, on the simulated agent in the
local sandbox; model calls and CPU time of each, and whether their per-arm tables are equal
(GitHub issue 25 "Done when").

Each design runs in its own process (``python -m readbench.run.forked_bench DESIGN ...``) so its
CPU time (user + system, the process and its children: tests, rg, tar) is its own. The local
sandbox's directory is pinned per sample (``/tmp/rbfork-bench/<sha1 of the sample's metadata>``):
its random temporary name otherwise changes the o200k token count of every request that holds
the cwd, so two independent runs of one arm already differ by a few tokens (143,940 vs 143,924
input tokens on more-itertools/bugfix/0); arms run one at a time (``--max-tasks 1``) so one
sample's directory is never in use twice.

Model calls counted: every ModelEvent in the logs (the trunk's and the forks' live calls for the
forked design; every call for the independent one).
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_forked", "compare_tables", "count_model_calls"]

PIN_ROOT = Path("/tmp/rbfork-bench")
#: columns that differ between any two runs (ids, paths, wall-clock times)
RUN_COLUMNS = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]


def _pin_local_sandbox() -> None:
    """Make inspect's local sandbox directory a function of the sample's metadata."""
    import inspect_ai.util._sandbox.local as local

    original = local.LocalSandboxEnvironment.sample_init.__func__  # type: ignore[attr-defined]

    class Pinned:
        def __init__(self, path: Path) -> None:
            if path.exists():
                raise RuntimeError(f"{path} is in use by another sample (run arms one at a time)")
            path.mkdir(parents=True)
            self.name = str(path)

        def cleanup(self) -> None:
            shutil.rmtree(self.name, ignore_errors=True)

    async def sample_init(cls: Any, task_name: str, config: Any, metadata: dict[str, str]) -> Any:
        key = hashlib.sha1(json.dumps(metadata, sort_keys=True, default=str).encode()).hexdigest()[:12]
        saved = local.tempfile.TemporaryDirectory
        local.tempfile.TemporaryDirectory = lambda *a, **k: Pinned(PIN_ROOT / key)  # type: ignore[assignment]
        try:
            return await original(cls, task_name, config, metadata)
        finally:
            local.tempfile.TemporaryDirectory = saved  # type: ignore[assignment]

    local.LocalSandboxEnvironment.sample_init = classmethod(sample_init)  # type: ignore[method-assign]


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

    _pin_local_sandbox()
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
    out["saved"] = {"model_calls": 1 - f["model_calls"] / max(i["model_calls"], 1),
                    "cpu_seconds": 1 - f["cpu_seconds"] / max(i["cpu_seconds"], 1e-9)}
    return out


if __name__ == "__main__":
    _run(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
