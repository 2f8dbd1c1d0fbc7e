"""`inspect eval readbench/read_strategies` finds the task through readbench's `inspect_ai` entry
point (pyproject.toml -> readbench._registry), with the sim model and -T arguments, and its log is
one the table reads like any arm's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from corpus_fixture import write_corpus
from inspect_ai.log import list_eval_logs, read_eval_log

from readbench.analysis.table import tidy_table


def test_inspect_eval_finds_the_registered_task(tmp_path):
    env = {**os.environ, "READBENCH_TASKS": str(write_corpus(tmp_path)), "READBENCH_CACHE": str(tmp_path / "cache")}
    inspect = str(Path(sys.executable).parent / "inspect")
    proc = subprocess.run(
        [inspect, "eval", "readbench/read_strategies", "--model", "readbench/sim-diligent", "-T", "variant=B",
         "-T", "dcp=pi-dcp", "-T", "sandbox_kind=local", "-T", "families=locate", "-T", "cache_models=openai",
         "--log-dir", str(tmp_path / "logs"), "--display", "none", "--max-tool-output", "0"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info.name)
    assert log.status == "success", log.error
    assert (log.eval.task, log.eval.task_registry_name) == ("read_strategies", "readbench/read_strategies")
    assert log.eval.task_args["variant"] == "B" and log.eval.task_args["dcp"] == "pi-dcp"
    [sample] = log.samples
    assert sample.id == "logs/locate/0" and sample.scores["readbench"].value == 1.0
    [row] = tidy_table(tmp_path / "logs").to_dict("records")
    assert (row["variant"], row["dcp"], row["model"], row["success"]) == ("B", "pi-dcp", "readbench/sim-diligent", 1.0)
