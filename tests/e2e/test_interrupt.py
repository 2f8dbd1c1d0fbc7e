"""Ctrl-C on `readbench eval` (issue 13, defect 1): the run exits non-zero with one line naming
the partial arm, the report flags it instead of counting the cut samples as failures, and the
same command then resumes to a complete run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_resume import MATRIX, _corpus, _finished, _release_gate, _wait_for_gate

from readbench.analysis.table import read_table

pytestmark = pytest.mark.slow


def _interrupted(tmp_path: Path, sig: int, group: bool) -> tuple[subprocess.CompletedProcess, Path, int, list, dict]:
    """`readbench eval` of the 3-sample matrix, sent `sig` once the gated third sample started its
    test command (test_resume._corpus), so after the two others finished (to its process group when
    `group`, as a terminal's Ctrl-C is). Returns (the finished process, the run directory, samples
    finished without error, the command, its environment); the gate is released afterwards."""
    env = {**os.environ, "READBENCH_TASKS": str(_corpus(tmp_path)), "READBENCH_CACHE": str(tmp_path / "cache")}
    (tmp_path / "m.yaml").write_text(MATRIX)
    cmd = [sys.executable, "-m", "readbench.cli", "eval", "--matrix", str(tmp_path / "m.yaml"),
           "--sandbox", "local", "--run-id", "r"]
    run_dir = tmp_path / "results" / "r"
    # a SIGTERM'd run starts with SIGINT ignored, as a CI script's background job (`cmd &` in a
    # non-interactive shell) does: the SIGTERM must still end it (its handler raised an ignored SIGINT).
    # A Ctrl-C'd run starts as a terminal starts it, SIGINT at its default and unblocked, whatever
    # the pytest worker's own disposition: a child inherits an ignored or blocked SIGINT, and in two
    # full-suite CI runs (2026-12-07) the run then never saw the signal and waited at the gate
    def disposition() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.SIG_IGN if sig == signal.SIGTERM else signal.SIG_DFL)

    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=disposition)
    try:
        _wait_for_gate(tmp_path, proc)
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _release_gate(tmp_path)
    done = len([s for s in _finished(run_dir / "logs") if not s.error])  # a cancelled sample has an error
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), run_dir, done, cmd, env


def test_sigint_exits_nonzero_flags_the_partial_arm_and_the_rerun_completes(tmp_path):
    proc, run_dir, done, cmd, env = _interrupted(tmp_path, signal.SIGINT, group=True)
    assert done == 2  # the two samples before the gated one
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[-1] == (
        f"incomplete: stock × off @ readbench/sim-diligent (partial: {done} of 3 samples, cancelled); "
        "re-run the same command to resume (finished samples are kept)")
    md = (run_dir / "report" / "report.md").read_text()
    assert f"- stock × off @ readbench/sim-diligent: partial: {done} of 3 samples, cancelled" in md
    # the cut sample is not a failure: every finished sample of the diligent agent succeeded
    assert f"| stock × off [partial] | {done} ({done}×1) | {done} | 100.0% |" in md
    assert set(read_table(run_dir / "table.parquet")["arm_status"]) == {f"partial: {done} of 3 samples, cancelled"}

    rerun = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    md = Path(run_dir / "report" / "report.md").read_text()
    assert "Incomplete run" not in md and "| stock × off | 3 (3×1) | 3 | 100.0% |" in md


def test_sigterm_is_handled_as_ctrl_c(tmp_path):
    # a CI job's timeout sends SIGTERM: the run must still close its logs, write run.json and say
    # what is incomplete, not die with its logs open
    proc, run_dir, done, _, _ = _interrupted(tmp_path, signal.SIGTERM, group=False)
    assert proc.returncode != 0 and (run_dir / "run.json").is_file()
    assert proc.stderr.splitlines()[-1] == (
        f"incomplete: stock × off @ readbench/sim-diligent (partial: {done} of 3 samples, cancelled); "
        "re-run the same command to resume (finished samples are kept)")
