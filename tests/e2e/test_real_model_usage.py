"""Real-model usage through inspect's own `openai-api` provider and a scripted OpenAI-compatible
server on 127.0.0.1 (issue 18, items 2, 3, 4 and 7): the provider's native usage is recorded per
call and per sample, an errored sample keeps what it used, the loop's turn limit makes no
uncounted call, a rejected request is not priced, and malformed calls, empty replies and
replies cut at max_tokens are scored for what they are."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval

pytest.importorskip("openai", reason="the openai package is not installed (pip install -e '.[openai]')")

from corpus_fixture import tiny_corpus_fixture
from fake_openai import FakeOpenAI, completion, tool_call

from readbench.analysis.table import tidy_table
from readbench.run import task as rb_task

MODEL = "openai-api/local/fake"


corpus = tiny_corpus_fixture(own_cache=True, env={"LOCAL_API_KEY": "test"}, name="corpus")


def run(corpus, monkeypatch, script, family="locate", **kw):
    """One sample of `family` against the scripted server; returns (server, log, table row)."""
    with FakeOpenAI(script) as srv:
        monkeypatch.setenv("LOCAL_BASE_URL", srv.base_url)
        task = rb_task.read_strategies(sandbox_kind="local", families=family, allow_local=True,
                                            cache_models="anthropic-5m", max_turns=kw.pop("max_turns", 80))
        [log] = inspect_eval(task, model=MODEL, model_base_url=srv.base_url, log_dir=str(corpus / "logs"),
                             display="none", fail_on_error=False, max_retries=0, **kw)
    [row] = tidy_table(corpus / "logs").to_dict("records")
    return srv, log, row


def grep_call(n: int) -> dict:
    return tool_call("grep", json.dumps({"pattern": "LIMIT_MESSAGE", "path": "calc.py"}), f"call_{n}")


def test_native_usage_is_recorded_per_call_and_per_sample(corpus, monkeypatch):
    def script(req, n):
        if n == 0:
            return completion(None, tool_calls=[grep_call(0)], prompt_tokens=1000, cached_tokens=0, completion_tokens=20)
        return completion("ANSWER: limit of 4096 exceeded", prompt_tokens=1200, cached_tokens=1000, completion_tokens=12)

    srv, log, row = run(corpus, monkeypatch, script)
    assert len(srv.requests) == 2
    calls = log.samples[0].store["readbench:calls"]
    assert [(c["native_input_tokens"], c["native_uncached_input_tokens"], c["native_cache_read_tokens"],
             c["native_output_tokens"]) for c in calls] == [(1000, 1000, 0, 20), (1200, 200, 1000, 12)]
    assert row["stop_reason"] == "solved" and row["success"] == 1.0
    assert (row["native_calls"], row["native_input_tokens"], row["native_uncached_input_tokens"],
            row["native_cache_read_tokens"], row["native_cache_write_tokens"], row["native_output_tokens"]) == (
        2.0, 2200.0, 1200.0, 1000.0, 0.0, 32.0)
    assert row["native_cache_read_ratio"] == pytest.approx(1000 / 2200)
    assert row["input_tokens"] == 2200.0  # the whole prompt, cached part counted once
    assert row["native_cost_usd"] != row["native_cost_usd"]  # NaN: readbench has no price for `fake`
    # the simulated figures for the same two calls sit beside them
    assert row["cache_read_tokens_anthropic-5m"] + row["cache_write_tokens_anthropic-5m"] + \
        row["uncached_input_tokens_anthropic-5m"] > 0


def test_an_errored_sample_keeps_what_it_used_and_says_error(corpus, monkeypatch):
    def script(req, n):
        if n == 0:
            return completion(None, tool_calls=[grep_call(0)], prompt_tokens=900, completion_tokens=15)
        return (500, {"error": {"message": "server exploded", "type": "server_error"}})

    srv, log, row = run(corpus, monkeypatch, script)
    sample = log.samples[0]
    assert sample.error is not None and not sample.scores
    assert row["stop_reason"] == "error" and row["success"] == 0.0
    assert row["turns"] == 1.0 and row["grep_calls"] == 1.0
    assert row["native_input_tokens"] == 900.0 and row["native_output_tokens"] == 15.0
    assert row["input_tokens"] == 900.0
    assert row["cache_write_tokens_anthropic-5m"] + row["uncached_input_tokens_anthropic-5m"] > 0


def test_turn_limit_makes_no_uncounted_call(corpus, monkeypatch):
    def script(req, n):  # never answers
        return completion(None, tool_calls=[grep_call(n)], prompt_tokens=500 + n, completion_tokens=10)

    srv, log, row = run(corpus, monkeypatch, script, max_turns=3)
    assert len(srv.requests) == 3  # inspect's own turn limit made a 4th, billed and uncounted
    assert row["stop_reason"] == "turn_limit" and row["turns"] == 3.0
    assert row["input_tokens"] == 500 + 501 + 502 and row["native_calls"] == 3.0


def test_a_rejected_request_is_not_priced(corpus, monkeypatch):
    def script(req, n):
        if n == 0:
            return completion(None, tool_calls=[grep_call(0)], prompt_tokens=700, completion_tokens=10)
        return (400, {"error": {"message": "This model's maximum context length is 2048 tokens",
                                "type": "invalid_request_error", "code": "context_length_exceeded"}})

    srv, log, row = run(corpus, monkeypatch, script)
    calls = log.samples[0].store["readbench:calls"]
    assert [c["priced"] for c in calls] == [True, False]
    assert row["stop_reason"] == "context_overflow"
    assert row["native_calls"] == 1.0 and row["native_input_tokens"] == 700.0
    # only the first call was simulated: a second would have written or read its larger prompt
    one_call = sum(row[f"{k}_anthropic-5m"] for k in ("cache_read_tokens", "cache_write_tokens", "uncached_input_tokens"))
    first = log.samples[0].events
    assert one_call > 0
    with FakeOpenAI(lambda req, n: completion(None, tool_calls=[grep_call(0)], prompt_tokens=700)
                    if n == 0 else completion("ANSWER: x", prompt_tokens=800)) as srv2:
        monkeypatch.setenv("LOCAL_BASE_URL", srv2.base_url)
        task = rb_task.read_strategies(sandbox_kind="local", families="locate", allow_local=True,
                                            cache_models="anthropic-5m")
        [log2] = inspect_eval(task, model=MODEL, model_base_url=srv2.base_url, log_dir=str(corpus / "logs2"),
                              display="none", max_retries=0)
    [two] = tidy_table(corpus / "logs2").to_dict("records")
    two_calls = sum(two[f"{k}_anthropic-5m"] for k in ("cache_read_tokens", "cache_write_tokens", "uncached_input_tokens"))
    assert two_calls > one_call and first


def test_malformed_read_and_empty_reply(corpus, monkeypatch):
    def script(req, n):
        if n == 0:  # arguments cut off mid-JSON: inspect cannot parse them
            return completion(None, tool_calls=[tool_call("read", '{"path": "calc.py", "offs', "call_0")],
                              prompt_tokens=600)
        return completion("", prompt_tokens=650)

    srv, log, row = run(corpus, monkeypatch, script)
    tool = [m for m in log.samples[0].messages if m.role == "tool"][0]
    assert tool.error is not None and tool.error.type == "parsing"
    assert row["read_calls"] == 1.0 and row["malformed_calls"] == 1.0
    assert (row["blind_reads"], row["files_read"], row["read_tokens"]) == (0.0, 0.0, 0.0)
    assert row["stop_reason"] == "gave_up"


def test_a_reply_cut_at_max_tokens_is_flagged(corpus, monkeypatch):
    def script(req, n):
        return completion("The value is limit of 4096", finish_reason="length", prompt_tokens=600)

    srv, log, row = run(corpus, monkeypatch, script)
    assert row["truncated_replies"] == 1.0 and row["final_reply_truncated"] == 1.0
    assert row["stop_reason"] == "wrong"


def test_a_reply_reporting_no_prompt_tokens_is_not_priced(corpus, monkeypatch):
    def script(req, n):
        if n == 0:
            return completion(None, tool_calls=[grep_call(0)], prompt_tokens=700, completion_tokens=10)
        return completion("", prompt_tokens=0, completion_tokens=0)  # the server refused it

    srv, log, row = run(corpus, monkeypatch, script)
    calls = log.samples[0].store["readbench:calls"]
    assert [c["priced"] for c in calls] == [True, False]
    assert row["native_input_tokens"] == 700.0 and row["stop_reason"] == "gave_up"


def test_the_report_says_what_the_model_was_and_shows_native_beside_simulated(corpus, monkeypatch):
    """Issue 18, items 2 and 8: two arms of one model name run with different max_tokens; the
    report names the model's URL and settings, warns that they differ, states which token counts
    the list prices were applied to, shows native beside simulated usage, and flags the paired
    comparison's single pair."""
    from readbench.analysis.report_cli import build_report

    def script(req, n):
        return completion("ANSWER: limit of 4096 exceeded", prompt_tokens=1500, cached_tokens=1000, completion_tokens=8)

    run_dir = corpus / "run"
    with FakeOpenAI(script) as srv:
        monkeypatch.setenv("LOCAL_BASE_URL", srv.base_url)
        for variant, max_tokens in (("stock", 300), ("B", 500)):
            task = rb_task.read_strategies(variant=variant, sandbox_kind="local", families="locate", allow_local=True,
                                           cache_models="openai")
            inspect_eval(task, model=MODEL, model_base_url=srv.base_url, log_dir=str(run_dir / "logs"),
                         display="none", max_retries=0, max_tokens=max_tokens)
    md = build_report(run_dir).read_text()
    assert f"- openai-api/local/fake: reached at {srv.base_url}; chat template not declared; generate: " \
           "max_retries=0, max_tokens=300; no sample time limit" in md
    assert ("Warning: openai-api/local/fake ran with different settings in different logs (generate: "
            '{"max_retries": 0, "max_tokens": 300} vs {"max_retries": 0, "max_tokens": 500})') in md \
        or ('{"max_retries": 0, "max_tokens": 500} vs {"max_retries": 0, "max_tokens": 300}') in md
    assert "The native cost applies them to the provider's reported counts (openai-api/local/fake: none " \
           "(readbench has no price for it))" in md
    row = next(line for line in md.splitlines() if line.startswith("| stock × off | openai | 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "1,500" and cells[5] == "1,000" and cells[7] == "0.667"  # native input, cache read, ratio
    assert float(cells[4].replace(",", "")) > 0 and cells[8] != "—"  # the simulator's figures beside them
    assert "- B × off vs stock × off: 1 pair(s) in 1 cluster(s): no interval (CR2 needs 2 clusters)" in md


def test_the_call_a_token_limit_raises_on_is_counted(corpus, monkeypatch):
    """inspect raises a token limit after the call that crossed it returned (and was billed);
    the loop takes that call's usage from the transcript instead of losing it (item 4)."""
    def script(req, n):
        return completion(None, tool_calls=[grep_call(n)], prompt_tokens=400, completion_tokens=10)

    srv, log, row = run(corpus, monkeypatch, script, token_limit=1000)
    assert len(srv.requests) == 3  # 410, 820, 1230 > 1000
    assert row["stop_reason"] == "token_limit" and row["native_calls"] == 3.0
    assert row["native_input_tokens"] == 1200.0 and row["input_tokens"] == 1200.0
    assert [c["priced"] for c in log.samples[0].store["readbench:calls"]] == [True, True, True]
