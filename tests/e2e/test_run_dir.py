"""The run directory stays consistent (issue 13, defect 5): one `readbench eval` per run id at a
time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from readbench import task as rb_task
from readbench.analysis._cli import eval_cmd
from readbench.run import RunLock, RunLocked
from corpus_fixture import write_corpus

MATRIX = """
name: t
models: [readbench/sim-diligent]
variants: [{variant}]
dcp: ["off"]
cache_models: [anthropic-5m]
task_args: {{families: locate}}
"""


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("READBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    (tmp_path / "m.yaml").write_text(MATRIX.format(variant="stock"))
    rb_task._index.cache_clear()
    yield tmp_path
    rb_task._index.cache_clear()


def _eval(*args):
    return CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])


def test_a_second_eval_of_the_same_run_id_is_refused_naming_the_first(workdir):
    with RunLock(workdir / "results" / "t"):
        r = _eval()
    assert r.exit_code == 1
    last = r.stderr.splitlines()[-1]
    assert last.startswith(f"Error: results/t is in use by another readbench eval (pid {os.getpid()}, started ")
    assert last.endswith("); wait for it to finish or use another --run-id")
    assert not (workdir / "results" / "t" / "logs").exists()


def test_the_lock_dies_with_its_process_even_on_sigkill(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from readbench.run import RunLock\n"
        f"with RunLock(Path({str(tmp_path)!r})):\n    print('locked', flush=True); time.sleep(600)")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "locked\n"
    with pytest.raises(RunLocked, match=rf"in use by another readbench eval \(pid {holder.pid}, started "):
        with RunLock(tmp_path):
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with RunLock(tmp_path):  # free again: the kernel dropped the flock with the process
        pass
