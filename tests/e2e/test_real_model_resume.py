"""Resume after an interrupted real-model run (issue 18, item 5): `readbench eval` killed while a
real model's call hangs, then run again, completes and reports one row per sample. (inspect may
leave ``<name>-recovered.eval`` beside the killed log; that case is
tests/analysis/test_analysis_completeness.py::test_a_recovered_log_replaces_its_original.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from corpus_fixture import write_corpus
from fake_openai import FakeOpenAI, completion
from test_resume import _finished

from readbench.analysis.table import read_table

pytest.importorskip("openai", reason="the openai package is not installed (pip install -e '.[openai]')")

pytestmark = pytest.mark.slow

MATRIX = """
name: resume
models: [openai-api/local/fake]
variants: [stock]
dcp: ["off"]
cache_models: [anthropic-5m]
task_args: {allow_local: true}
max_samples: 1
retry_attempts: 0
generate: {max_retries: 0, timeout: 600, attempt_timeout: 600}
"""


def test_a_killed_real_model_run_resumes_and_reports(tmp_path):
    env = {**os.environ, "READBENCH_TASKS": str(write_corpus(tmp_path)), "READBENCH_CACHE": str(tmp_path / "cache"),
           "LOCAL_API_KEY": "test"}
    (tmp_path / "m.yaml").write_text(MATRIX)
    cmd = [sys.executable, "-m", "readbench.cli", "eval", "--matrix", str(tmp_path / "m.yaml"), "--sandbox", "local",
           "--run-id", "r"]
    log_dir = tmp_path / "results" / "r" / "logs"

    def first_answers_second_hangs(req, n):
        if "fails" in str(req["messages"][1]["content"]):  # the bug fix: stuck
            return ("hang", 120)
        return completion("ANSWER: limit of 4096 exceeded", prompt_tokens=900, cached_tokens=100)

    with FakeOpenAI(first_answers_second_hangs) as srv:
        env["LOCAL_BASE_URL"] = srv.base_url
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240
        # the question was answered and the bug fix's call hangs: one sample done, one in progress
        while time.monotonic() < deadline and not any(
                "fails" in str(r["messages"][1]["content"]) for r in srv.requests) and proc.poll() is None:
            time.sleep(0.5)
        time.sleep(3.0)  # the finished sample reaches inspect's sample buffer
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(_finished(log_dir)) == 0  # nothing was flushed into the .eval: only the buffer has it

    with FakeOpenAI(lambda req, n: completion("Done.", prompt_tokens=800)) as srv:
        env["LOCAL_BASE_URL"] = srv.base_url
        rerun = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        redone = [str(r["messages"][1]["content"]) for r in srv.requests]
    # inspect redoes what its buffer did not hold at the kill (measured: both samples here)
    assert any("fails" in text for text in redone)
    names = sorted(p.name for p in log_dir.glob("*.eval"))
    assert rerun.returncode in (0, 1), rerun.stderr[-3000:]
    assert "appears 2 times across logs" not in rerun.stderr, (names, rerun.stderr[-3000:])
    table = read_table(tmp_path / "results" / "r" / "table.parquet")
    assert sorted(table["sample_id"]) == ["logs/bugfix/0", "logs/locate/0"], names
    assert rerun.returncode == 0, (names, rerun.stderr[-3000:])
    assert set(table["stop_reason"]) <= {"wrong", "solved"} and (table["native_calls"] >= 1).all()
    assert set(table["arm_status"]) == {""}
