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

Per nightly sample: a design's CPU is split, in the same run, into the part inside ``run_plan`` (the
samples: eval_set, its set-up and log writing included) and the rest of the process (interpreter and
imports, corpus and plan, report: paid once per run). The nightly runs the matrix on the whole corpus
(``nightly_samples``: arms x tasks x epochs, 600), so its CPU per sample is
``run_cpu / samples + fixed_cpu / nightly_samples`` (`nightly_projection`); the subset's 56 samples
carry the fixed part ~10x as heavily as the nightly does. The subset's samples stand for the nightly's
(one task per family of more-itertools and the log task; the other repositories' test suites differ).

``run_children_cpu_seconds_per_sample`` is the part of the samples' CPU taken by child processes
(test runs, rg, cp; readbench.sandbox.local). On the subset it is most of it and it does not fall
with readbench's or inspect's own work: at b8f2726 (independent, 2026-12-07, load 4-8) the children
took 103-105 of the run's ~170 CPU s, 80 of them five runs of more-itertools' ``tests/test_more.py``
(~16 CPU s each pinned at that load, ~11.5 idle: its DFT and threaded tests): the checker's run
on the final tree of bugfix, session and longsession (one per task, the run memo serving the other
arms) and the agent's own full run in bugfix and session. The checker's and the agent's runs on one
tree are different commands (the checker's ``COLUMNS=200``, no bytecode and CPU ``ulimit``:
readbench.metrics.scorer), so the memo (readbench.sandbox.runmemo) cannot serve one from the other.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_forked", "compare_tables", "count_model_calls", "cpu_recorded", "nightly_projection",
           "nightly_samples"]

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

    import readbench.run.runner as runner
    from readbench.run._cli import eval_cmd

    args = ["--matrix", matrix, "--sandbox", "local", "--run-id", run_id, "--design", design, "--max-tasks", "1"]
    for t in task_args:
        args += ["-T", t]
    spent: list[float] = []
    children: list[float] = []
    runner.run_plan = cpu_recorded(runner.run_plan, spent, children)  # eval_cmd imports it when it runs
    result = CliRunner().invoke(eval_cmd, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"readbench eval --design {design} exited {result.exit_code}: {result.output[-2000:]}")
    (Path("results") / run_id / RUN_CPU_FILE).write_text(json.dumps(
        {"run_plan_cpu_seconds": sum(spent), "run_plan_children_cpu_seconds": sum(children)}))


#: where a design's subprocess leaves the CPU seconds spent inside run_plan, and the part of them its
#: child processes took (results/<run id>/)
RUN_CPU_FILE = "bench_run_cpu.json"


def cpu_seconds_split() -> tuple[float, float]:
    """(user + system CPU seconds of this process and its reaped children, the children's part of
    them) so far."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    children = kids.ru_utime + kids.ru_stime
    return own.ru_utime + own.ru_stime + children, children


def cpu_recorded(fn: Any, spent: list[float], children: list[float] | None = None) -> Any:
    """``fn`` wrapped to append the CPU seconds (`cpu_seconds_split`) each call took to ``spent``, also
    when it raises, and the part of them its reaped child processes took to ``children`` when given.
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, start_kids = cpu_seconds_split()
        try:
            return fn(*args, **kwargs)
        finally:
            end, end_kids = cpu_seconds_split()
            spent.append(end - start)
            if children is not None:
                children.append(end_kids - start_kids)
    return wrapper


def nightly_samples(matrix: str, epochs_override: int | None = None) -> int:
    """Samples of ``matrix`` run on the whole corpus (the one the task reads, readbench.corpus.corpus_path):
    arms x corpus tasks x epochs (``epochs_override`` instead of the matrix's when given).

    Raises:
        FileNotFoundError: no corpus (readbench.corpus.load_tasks).
    """
    from readbench.corpus import corpus_path, load_tasks
    from readbench.run.matrix import load_matrix

    m = load_matrix(matrix)
    return len(m.agent_arms()) * len(load_tasks(corpus_path())) * (epochs_override or m.epochs)


def nightly_projection(cpu_seconds: float, run_cpu_seconds: float, samples: int, nightly: int) -> dict[str, float]:
    """A design's CPU split into the per-run part and the samples', projected onto the nightly.

    Args:
        cpu_seconds: the design's whole process (and children), CPU s.
        run_cpu_seconds: the part inside run_plan (the samples), CPU s; <= cpu_seconds.
        samples: samples of this run (> 0); nightly: samples of the whole nightly (> 0).

    Returns:
        ``{"fixed_cpu_seconds", "run_cpu_seconds_per_sample", "cpu_seconds_per_nightly_sample"}``:
        the per-run part, the samples' CPU per sample, and ``run/samples + fixed/nightly``.

    Raises:
        ValueError: a count <= 0, or the run's part negative or above the whole.
    """
    if samples <= 0 or nightly <= 0:
        raise ValueError(f"samples and nightly must be > 0, got {samples} and {nightly}")
    if not 0 <= run_cpu_seconds <= cpu_seconds:
        raise ValueError(f"run_cpu_seconds must be within [0, cpu_seconds={cpu_seconds}], got {run_cpu_seconds}")
    fixed = cpu_seconds - run_cpu_seconds
    return {"fixed_cpu_seconds": fixed, "run_cpu_seconds_per_sample": run_cpu_seconds / samples,
            "cpu_seconds_per_nightly_sample": run_cpu_seconds / samples + fixed / nightly}


def bench_forked(matrix: str, task_args: list[str], run_prefix: str = "bench-forked") -> dict[str, Any]:
    """Run ``matrix`` under both designs (fresh run ids ``<run_prefix>-<design>``) and measure.

    Returns:
        ``{design: {"model_calls", "cpu_seconds", "wall_seconds", ...}, "tables": compare_tables(...)}``;
        a design's ``run_children_cpu_seconds_per_sample`` is the child processes' part of its
        ``run_cpu_seconds_per_sample`` (see the module docstring).

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
    out["nightly_samples"] = nightly_samples(matrix)
    for design, d in (("independent", i), ("forked", f)):
        d["cpu_seconds_per_sample"] = d["cpu_seconds"] / max(samples, 1)
        d["cpu_per_sample_x_floor"] = ratio(d["cpu_seconds_per_sample"], out["floor_cpu_seconds_per_sample"])
        run_cpu = json.loads((Path("results") / f"{run_prefix}-{design}" / RUN_CPU_FILE).read_text())
        d.update(nightly_projection(d["cpu_seconds"], min(run_cpu["run_plan_cpu_seconds"], d["cpu_seconds"]),
                                    max(samples, 1), out["nightly_samples"]))
        d["run_children_cpu_seconds_per_sample"] = run_cpu["run_plan_children_cpu_seconds"] / max(samples, 1)
    out["saved"] = {"model_calls": 1 - f["model_calls"] / max(i["model_calls"], 1),
                    "cpu_seconds": 1 - f["cpu_seconds"] / max(i["cpu_seconds"], 1e-9)}
    return out


if __name__ == "__main__":
    _run(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
