"""A real model on a dead port, a server answering HTTP 500 or one that never answers ends
within the configured bounds with a named reason (issue 18, item 1): `readbench eval` with the
matrix's `generate:` bounds exits 1 naming the error; inspect's own retries, timeouts and time
limit do the bounding. The scripted server (fake_openai.py) listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from corpus_fixture import write_corpus
from fake_openai import FakeOpenAI, completion, dead_port, tool_call

from readbench.analysis.table import read_table

pytest.importorskip("openai", reason="the openai package is not installed (pip install -e '.[openai]')")

pytestmark = pytest.mark.slow

MATRIX = """
name: bounds
models: [openai-api/local/fake]
variants: [stock]
dcp: ["off"]
cache_models: [anthropic-5m]
task_args: {families: locate, allow_local: true}
retry_attempts: 0
time_limit: %(time_limit)d
generate: {max_retries: 1, timeout: 10, attempt_timeout: 4}
"""


def run_eval(tmp_path, base_url, time_limit=120):
    env = {**os.environ, "READBENCH_TASKS": str(write_corpus(tmp_path)), "READBENCH_CACHE": str(tmp_path / "cache"),
           "LOCAL_API_KEY": "test", "LOCAL_BASE_URL": base_url}
    (tmp_path / "m.yaml").write_text(MATRIX % {"time_limit": time_limit})
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "readbench.cli", "eval", "--matrix", str(tmp_path / "m.yaml"),
                           "--sandbox", "local", "--run-id", "r"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    return proc, time.monotonic() - t0


def test_dead_port_ends_with_the_connection_error(tmp_path):
    proc, seconds = run_eval(tmp_path, f"http://127.0.0.1:{dead_port()}/v1")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1].startswith(
        "incomplete: stock × off @ openai-api/local/fake (partial: 0 of 1 samples, 1 errored: "
        "APIConnectionError (after inspect's retries))"), proc.stderr[-2000:]
    assert seconds < 120, seconds
    run = json.loads((tmp_path / "results" / "r" / "run.json").read_text())
    assert run["settings"]["generate"] == {"max_retries": 1, "timeout": 10, "attempt_timeout": 4, "max_tokens": 4096,
                                           "max_connections": 1}
    assert run["settings"]["max_tasks"] == 1 and set(run["settings"]["defaults"]) == {
        "max_tokens", "max_connections", "max_tasks"}
    [row] = read_table(tmp_path / "results" / "r" / "table.parquet").to_dict("records")
    assert row["stop_reason"] == "error" and row["turns"] == 0.0
    # the log records the settings and how the model was reached, as run.json does
    from inspect_ai.log import read_eval_log

    meta = read_eval_log(row["log"], header_only=True).eval.metadata
    assert meta["readbench_settings"] == run["settings"]
    prov = meta["readbench_provenance"]["openai-api/local/fake"]
    assert prov["base_url"].endswith("/v1") and prov["kind"] == "real model"
    assert prov["probe_error"].startswith("URLError")  # nothing listens there


def test_http_500_ends_with_the_server_error(tmp_path):
    with FakeOpenAI(lambda req, n: (500, {"error": {"message": "overloaded", "type": "server_error"}})) as srv:
        proc, seconds = run_eval(tmp_path, srv.base_url)
        requests = len(srv.requests)
    assert proc.returncode == 1
    assert "1 errored: InternalServerError (after inspect's retries)" in proc.stderr.splitlines()[-1], proc.stderr[-2000:]
    assert seconds < 120 and 2 <= requests <= 6, (seconds, requests)  # (1 + max_retries) x the SDK's own retries


def test_a_server_that_never_answers_is_abandoned_after_the_attempt_timeout(tmp_path):
    with FakeOpenAI(lambda req, n: ("hang", 60)) as srv:
        proc, seconds = run_eval(tmp_path, srv.base_url)
        requests = len(srv.requests)
    assert proc.returncode == 1
    assert "1 errored: AttemptTimeoutError (after inspect's retries)" in proc.stderr.splitlines()[-1], proc.stderr[-2000:]
    assert requests == 2 and seconds < 60, (requests, seconds)  # 2 attempts of 4 s, well under the 60 s hang


def test_a_runaway_loop_ends_at_the_sample_time_limit(tmp_path):
    def slow_tools(req, n):  # answers every call, slowly, and never stops calling tools
        time.sleep(1.0)
        return completion(None, tool_calls=[tool_call("grep", json.dumps({"pattern": "x", "path": "calc.py"}),
                                                      f"c{n}")], prompt_tokens=500 + n)

    with FakeOpenAI(slow_tools) as srv:
        proc, seconds = run_eval(tmp_path, srv.base_url, time_limit=6)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [row] = read_table(tmp_path / "results" / "r" / "table.parquet").to_dict("records")
    assert row["stop_reason"] == "time_limit" and row["limit"] == "time"
    assert 2 <= row["turns"] <= 7 and row["native_calls"] == row["turns"]
    assert seconds < 90
