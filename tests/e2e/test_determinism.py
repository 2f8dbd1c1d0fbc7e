"""Same inputs, same results (issue 29 item 1): a smoke subset run twice gives the same table and
the same report.

Two `readbench eval` runs of a subset of evals/smoke.yaml (its model, task arguments and cache
models; variants stock and claude-code and the arm stock × pi-dcp; `-T limit=2`, max_turns 60)
on the local sandbox with the simulated agent, under two run ids. About 2 minutes per run on 2
cores. What makes them equal: grep's ripgrep sorted by path, tools under LANG=C.UTF-8, the sim's
draws seeded per (task, epoch, profile), a fixed workspace path per sample and epoch
(readbench.sandbox.local; inspect's random temp dir was in pi's system prompt), test durations
dropped from bash output (readbench.tools.durations) and a CPU-time limit on the checker
(readbench.metrics.scorer.check_limits; a wall-clock one graded the same workspace differently
under load).

Compared exactly: every column of table.parquet but `RUN_SPECIFIC` (tokens, costs, cache
metrics, success, stop reasons, trajectory metrics included); report/report.md and
report/partition.json with the run id replaced by `<run>` (the report names its run directory
in its `readbench plan --from results/<run id>` hints); the report's figures; every tool call and
tool result of every sample, in order (compared first: a failure names the first differing step).
Needs the built corpus (`make corpus`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from readbench.corpus import default_corpus_dir

SMOKE = Path(__file__).resolve().parents[2] / "evals" / "smoke.yaml"
#: columns that name the run or measure wall-clock time: legitimately different in every run
RUN_SPECIFIC = ["run_id", "eval_set_id", "eval_id", "log", "total_time", "working_time", "wall_seconds"]
FIGURES = ("cache_ratio.png", "forest.png", "fragmentation.png", "pareto.png")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (default_corpus_dir() / "tasks.jsonl").exists(),
                       reason=f"no built corpus at {default_corpus_dir()} (run `make corpus`)"),
]


def _matrix(tmp_path: Path) -> Path:
    smoke = yaml.safe_load(SMOKE.read_text())
    subset = {"name": "det", "models": smoke["models"], "epochs": 1, "variants": ["stock", "claude-code"],
              "dcp": ["off"], "arms": [["stock", "pi-dcp"]], "cache_models": smoke["cache_models"],
              "task_args": {**smoke["task_args"], "max_turns": 60}}
    path = tmp_path / "det.yaml"
    path.write_text(yaml.safe_dump(subset))
    return path


def _run(matrix: Path, run_id: str) -> Path:
    from click.testing import CliRunner

    from readbench.run._cli import eval_cmd

    res = CliRunner().invoke(eval_cmd, ["--matrix", str(matrix), "--sandbox", "local", "--run-id", run_id,
                                        "-T", "limit=2"])
    assert res.exit_code == 0, res.output
    return Path("results") / run_id


def _trajectories(run: Path) -> dict[tuple[str, str, str], list[str]]:
    """(variant, dcp, sample id) -> every tool call (function, arguments as JSON) and every tool
    result text, in order."""
    from inspect_ai.log import read_eval_log

    out = {}
    for f in sorted((run / "logs").glob("*.eval")):
        log = read_eval_log(str(f))
        for s in log.samples or []:
            steps = []
            for m in s.messages:
                if m.role == "assistant":
                    steps += [f"call {c.function} {json.dumps(c.arguments, sort_keys=True)}" for c in m.tool_calls or []]
                elif m.role == "tool":
                    steps.append(f"result {m.text}")
            out[(log.eval.task_args["variant"], log.eval.task_args["dcp"], str(s.id))] = steps
    return out


def _first_difference(a: dict[tuple[str, str, str], list[str]], b: dict[tuple[str, str, str], list[str]]) -> str:
    """'' when equal, else which sample's which step differs first, with a unified diff of the two
    steps (so a CI log says what varied, not only that a token count did)."""
    import difflib

    if a.keys() != b.keys():
        return f"samples differ: {sorted(a.keys() ^ b.keys())}"
    for key in sorted(a):
        for i, (x, y) in enumerate(zip(a[key], b[key])):
            if x != y:
                diff = "\n".join(list(difflib.unified_diff(x.splitlines(), y.splitlines(), "run a", "run b",
                                                           lineterm="", n=1))[:60])
                return f"{key}: step {i} of {len(a[key])} differs first:\n{diff}"
        if len(a[key]) != len(b[key]):
            return f"{key}: {len(a[key])} steps vs {len(b[key])}"
    return ""


def _masked(run: Path, name: str) -> str:
    return (run / "report" / name).read_text().replace(run.name, "<run>")


def test_two_runs_of_the_smoke_subset_give_the_same_table_and_report(tmp_path, monkeypatch):
    import pandas as pd

    matrix = _matrix(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("READBENCH_WORKSPACES", str(tmp_path / "ws"))
    a, b = _run(matrix, "det-a"), _run(matrix, "det-b")
    keys = ["arm", "sample_id", "epoch"]
    ta, tb = (pd.read_parquet(d / "table.parquet").drop(columns=RUN_SPECIFIC).sort_values(keys).reset_index(drop=True)
              for d in (a, b))
    assert len(ta) == 6 and set(ta["variant"]) == {"stock", "claude-code"}  # 3 arms x 2 tasks
    assert ta["grep_calls"].sum() > 0 and ta["turns"].min() > 1 and ta["input_tokens"].min() > 0
    assert (ta["bash_calls"] > 0).any()  # a test run's output (and its duration) reached the agent
    ca, cb = _trajectories(a), _trajectories(b)
    assert len(ca) == 6
    assert not (first := _first_difference(ca, cb)), first
    pd.testing.assert_frame_equal(ta, tb, check_exact=True)
    assert _masked(a, "report.md") == _masked(b, "report.md")
    assert "results/<run>" in _masked(a, "report.md")
    assert _masked(a, "partition.json") == _masked(b, "partition.json")
    for figure in FIGURES:
        assert (a / "report" / figure).read_bytes() == (b / "report" / figure).read_bytes(), figure
