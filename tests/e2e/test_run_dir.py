"""The run directory stays consistent (issue 13, defects 2 and 5): one `readbench eval` per run
id at a time, run.json written only once inspect accepted the run, an edited matrix refused
instead of mixed with the old arms' logs, and an unreadable log set aside so the run resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from corpus_fixture import write_corpus

from readbench.corpus import task_index
from readbench.run._cli import eval_cmd
from readbench.run.runner import RunLock, RunLocked

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
    task_index.cache_clear()
    yield tmp_path
    task_index.cache_clear()


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
        "import sys, time; from pathlib import Path; from readbench.run.runner import RunLock\n"
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


@pytest.mark.slow
def test_an_edited_matrix_is_refused_and_run_json_keeps_describing_the_logs(workdir):
    assert _eval().exit_code == 0
    run_json = (workdir / "results" / "t" / "run.json").read_text()
    [log] = (workdir / "results" / "t" / "logs").glob("*.eval")
    # a different arm under the same run id: refused before eval_set, naming the old log
    (workdir / "m.yaml").write_text(MATRIX.format(variant="{base: B, name: B-700, max_lines: 700}"))
    r = _eval()
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == (
        f"Error: {log} holds arm stock × off @ readbench/sim-diligent as defined by variant=\"stock\" dcp=\"off\", "
        "which this matrix does not define (or defines differently): use another --run-id, or move that log away")
    # the same arm with other task arguments: inspect refuses the log directory; one line, run.json untouched
    (workdir / "m.yaml").write_text(MATRIX.format(variant="stock"))
    r = _eval("-T", "limit=1")
    assert r.exit_code == 1 and r.stderr.splitlines()[-1] == (
        f"Error: results/t/logs/{log.name} is from a run of these arms with other task arguments, epochs or sandbox, "
        "and inspect does not mix them: use another --run-id, or move that log away"), r.stderr
    assert "Traceback" not in r.stderr and "[bold]" not in r.stderr
    assert (workdir / "results" / "t" / "run.json").read_text() == run_json
    assert json.loads(run_json)["variants"] == ["stock"]


@pytest.mark.slow
def test_an_unreadable_log_is_set_aside_and_its_arm_runs_again(workdir):
    assert _eval().exit_code == 0
    [log] = (workdir / "results" / "t" / "logs").glob("*.eval")
    log.write_bytes(log.read_bytes()[:500])  # truncated
    r = _eval()
    assert r.exit_code == 0, r.stderr
    assert f"readbench: {log.name} could not be read; set aside as {log.name}.unreadable, its arm runs again" in r.stderr
    assert (log.parent / f"{log.name}.unreadable").exists()
    md = (workdir / "results" / "t" / "report" / "report.md").read_text()
    assert "## Set-aside logs" in md and "| stock × off | 1 (1×1) | 1 | 100.0% |" in md
