"""`readbench eval` shows its progress when stderr is not a terminal (a file, a CI log): periodic plain
lines with done/total samples, elapsed and ETA, a line per finished arm naming it, and a resumed run
counts the samples an earlier run finished (issues 28 item 3, 29 item 4)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from corpus_fixture import write_corpus

from readbench.corpus import task_index
from readbench.run._cli import eval_cmd

MATRIX = """
name: t
models: [readbench/sim-diligent]
variants: [stock, B]
dcp: ["off"]
cache_models: [anthropic-5m]
task_args: {families: locate}
"""


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("READBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    monkeypatch.delenv("READBENCH_PROGRESS", raising=False)
    monkeypatch.setenv("READBENCH_PROGRESS_SECONDS", "0.2")
    (tmp_path / "m.yaml").write_text(MATRIX)
    task_index.cache_clear()
    yield tmp_path
    task_index.cache_clear()


@pytest.mark.slow
def test_progress_lines_name_counts_and_arms_and_a_resumed_run_starts_from_its_finished_samples(workdir):
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local"])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.stderr.splitlines() if line.startswith("readbench eval: ")]
    n = int(re.match(r"readbench eval: 0/(\d+) samples \(0%\), elapsed 0:00, ETA \?$", lines[0]).group(1))
    per_arm = n // 2
    assert n == 2 * per_arm and per_arm >= 1
    for arm in ("stock × off", "B × off"):
        assert any(line.startswith(f"readbench eval: {arm} done ({per_arm}/{per_arm} samples); ") for line in lines)
    assert lines[-1].startswith(f"readbench eval: finished: {n}/{n} samples (100%), elapsed ")
    # the same run id again: every sample is already finished, and the count says so from the start
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local"])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.stderr.splitlines() if line.startswith("readbench eval: ")]
    assert lines[0].startswith(f"readbench eval: {n}/{n} samples (100%), elapsed 0:00, ETA 0:00")
