"""inspect-ai eval logs as recorded sessions (docs/specs/sessions.md §4): one session per sample
and epoch, one call per ModelEvent with the exact input sent, its tools and usage. The log is
written by inspect's own writer (`write_eval_log`, .eval and .json); readbench's own logs, from
a real eval, are checked in tests/sim/test_sim_inspect_eval.py."""

from __future__ import annotations

import datetime as dt

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)

from readbench.replay.bill import replay_session
from readbench.sessions import BilledUsage, load_file

T0 = dt.datetime(2026, 2, 12, 10, 0, tzinfo=dt.timezone.utc)


def _event(model: str, messages: list, text: str, usage: ModelUsage, at_s: float) -> ModelEvent:
    out = ModelOutput.from_content(model, text)
    out.usage = usage
    return ModelEvent(model=model, input=list(messages), tools=[], tool_choice="auto", config=GenerateConfig(), output=out,
                      timestamp=T0 + dt.timedelta(seconds=at_s), completed=T0 + dt.timedelta(seconds=at_s + 2))


def _log(path: str) -> str:
    sys_msg, q1 = ChatMessageSystem(content="Answer briefly."), ChatMessageUser(content="2+2?")
    a1, q2 = ChatMessageAssistant(content="four"), ChatMessageUser(content="and 3+3?")
    # older inspect's OpenAI-style usage: the cached part is inside input_tokens (total = input + output)
    first = [_event("openai/gpt-4o-mini", [sys_msg, q1], "four",
                    ModelUsage(input_tokens=1500, output_tokens=7, total_tokens=1507), 0.0),
             _event("openai/gpt-4o-mini", [sys_msg, q1, a1, q2], "six",
                    ModelUsage(input_tokens=1600, output_tokens=5, input_tokens_cache_read=1408, total_tokens=1605), 30.0)]
    # the uncached part alone, read and write apart (Anthropic; every provider from inspect 0.3.285)
    second = [_event("anthropic/claude-opus-4-6", [sys_msg, q1], "four",
                     ModelUsage(input_tokens=3, output_tokens=7, input_tokens_cache_write=5000, total_tokens=5010), 0.0)]
    samples = [EvalSample(id=sid, epoch=1, input="2+2?", target="", messages=[], events=events)
               for sid, events in (("a", first), ("b", second))]
    spec = EvalSpec(created=T0.isoformat(), task="arith", dataset=EvalDataset(samples=2, sample_ids=["a", "b"]),
                    model="openai/gpt-4o-mini", config=EvalConfig())
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), path)
    return path


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_each_sample_is_a_session_with_the_inputs_and_usage_inspect_logged(tmp_path, suffix):
    a, b = load_file(_log(str(tmp_path / f"log{suffix}")))
    assert [s.session_id for s in (a, b)] == ["arith:a:1", "arith:b:1"]
    assert (a.format, a.harness, len(a.calls), len(b.calls)) == ("inspect", "inspect", 2, 1)
    assert [(m.role, m.text) for m in a.request(1)] == [("system", "Answer briefly."), ("user", "2+2?"),
                                                        ("assistant", "four"), ("user", "and 3+3?")]
    assert len(a.contexts) == 1  # the second request extends the first: one growing context
    c0, c1 = a.calls
    assert (c0.model, c0.provider, c0.output.text) == ("gpt-4o-mini", "openai", "four")
    assert (c1.ts_start_seconds - c0.ts_start_seconds, c0.ts_end_seconds - c0.ts_start_seconds) == (30.0, 2.0)
    assert (c0.usage, c1.usage) == (BilledUsage(1500, 0, 0, 7), BilledUsage(1600 - 1408, 1408, 0, 5))
    assert b.calls[0].usage == BilledUsage(3, 0, 5000, 7)


def test_an_inspect_session_is_priced_and_replayed(tmp_path):
    a, _ = load_file(_log(str(tmp_path / "log.eval")))
    rep = replay_session(a)
    assert rep.summaries[0]["cache_model"] == "openai"
    raw = [r for r in rep.calls if r["mode"] == "raw"]
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per million
    assert [r["billed_cost_usd"] for r in raw] == pytest.approx(
        [(1500 * 0.15 + 7 * 0.60) / 1e6, (192 * 0.15 + 1408 * 0.075 + 5 * 0.60) / 1e6], abs=1e-15)
