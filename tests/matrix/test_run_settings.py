"""Run settings (issue 18, items 1 and 9): the matrix's `generate:`/`model:` sections and
top-level bounds are checked before anything runs, and real models get safe defaults (local
servers one connection and one arm at a time); the simulated agent keeps inspect's defaults."""

from __future__ import annotations

import pytest

from readbench.run.matrix import load_matrix
from readbench.run.settings import REAL_DEFAULTS, is_local, resolve_settings


def test_simulated_only_keeps_inspects_defaults_but_the_realtime_log():
    s = resolve_settings(["readbench/sim-mixed"], {}, {}, {})
    assert s.eval_set_kwargs() == {"max_tasks": 2, "retry_attempts": 2, "log_realtime": False} and s.defaults == ()


def test_a_remote_real_model_gets_bounds(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    s = resolve_settings(["anthropic/claude-sonnet-4-5"], {"time_limit": None}, {"max_tokens": 2048}, {})
    assert s.eval_set_kwargs() == {"max_tasks": 2, "retry_attempts": 2, "max_tokens": 2048, "max_retries": 3,
                                   "timeout": 600, "attempt_timeout": 300, "time_limit": 1800}
    assert set(s.defaults) == set(REAL_DEFAULTS) - {"max_tokens"}


def test_a_local_server_runs_one_arm_and_one_call_at_a_time(monkeypatch):
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:8080/v1")
    assert is_local("openai-api/local/smollm2") and is_local("ollama/qwen")
    assert not is_local("openai-api/local/x", "https://api.example.com/v1")
    s = resolve_settings(["openai-api/local/smollm2"], {"max_tasks": None}, {}, {})
    assert s.max_tasks == 1 and s.generate["max_connections"] == 1
    s = resolve_settings(["openai-api/local/smollm2"], {"max_tasks": 3}, {"max_connections": 2}, {})
    assert s.max_tasks == 3 and s.generate["max_connections"] == 2


@pytest.mark.parametrize("text, message", [
    ("generate: {max_retries: -1}", "generate.max_retries must be an integer from 0 to 100 (retries per model call), got -1"),
    ("generate: {timeout: 1.5}", "generate.timeout must be an integer from 1 to 86400"),
    ("generate: {max_tokns: 10}", "generate: unknown key 'max_tokns'"),
    ("time_limit: 0", "time_limit must be an integer from 1 to 604800 (seconds per sample), got 0"),
    ("max_tasks: true", "max_tasks must be an integer from 1 to 1000 (arms at once), got True"),
    ("model: {base_url: 'ftp://x'}", "model.base_url must be an http(s) URL, got 'ftp://x'"),
    ("model: {args: [1]}", "model.args must be a mapping"),
    ("model: {server: ''}", "model.server must be a non-empty string"),
    ("model: {chat: x}", "model: unknown key(s) ['chat']"),
])
def test_bad_settings_fail_naming_the_key(tmp_path, text, message):
    path = tmp_path / "m.yaml"
    path.write_text(f"name: m\n{text}\n")
    with pytest.raises(ValueError) as info:
        load_matrix(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


def test_the_matrix_sections_are_kept(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("name: m\ntime_limit: 60\nmax_tasks: 1\ngenerate: {max_tokens: 256, temperature: 0}\n"
                    "model: {args: {emulate_tools: true}, server: llama-cpp-python 0.3.36}\n")
    m = load_matrix(path)
    assert m.settings == {"time_limit": 60, "max_tasks": 1, "retry_attempts": None}
    assert m.generate == {"max_tokens": 256, "temperature": 0}
    assert m.model == {"args": {"emulate_tools": True}, "server": "llama-cpp-python 0.3.36"}
