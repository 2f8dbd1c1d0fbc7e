"""The provider contract: determinism and pairing, ids, usage, simulated time, inspect registry."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.util import Store
from sim_harness import Workspace, numbered_file, oracle, run_session, tool_infos

from readbench.sim.draws import sample_seed
from readbench.sim.memory import SIM_KEY
from readbench.sim.oracle import ORACLE_KEY
from readbench.sim.provider import SimAgentAPI, generate_in_store
from readbench.sim.tokens import output_tokens, request_tokens

BIG = numbered_file(5000)
FIX = oracle(search_key="row 04500", old_text="row 04500 value", new_text="row 04500 FIXED", target_line=4500)


def _run(model="sim-mixed", variant="B", task=FIX, **kw):
    return run_session(model, task, Workspace({"big.py": BIG}, variant, fixed="row 04500 FIXED"), **kw)


def test_same_seed_gives_the_same_trajectory_byte_for_byte():
    first, second = _run(), _run()
    dumps = [o.model_dump_json() for o in first.outputs]
    assert dumps == [o.model_dump_json() for o in second.outputs]
    assert first.store.get(SIM_KEY) == second.store.get(SIM_KEY)


def test_tool_call_ids_are_unique_and_derived_from_the_seed():
    trace = _run("sim-stubborn")
    seed = sample_seed("t1", 1, "sim-stubborn")
    ids = [c.id for o in trace.outputs for c in (o.message.tool_calls or [])]
    assert ids == [f"sim{seed[:8]}c{n:03d}" for n in range(1, len(ids) + 1)]
    assert trace.outputs[0].message.id == f"sim{seed[:8]}c001-msg"


def test_the_arm_does_not_change_the_seed_or_the_first_decision():
    stock, nocap = _run("sim-pager", "stock"), _run("sim-pager", "nocap")
    assert stock.store.get(SIM_KEY)["seed"] == nocap.store.get(SIM_KEY)["seed"] == sample_seed("t1", 1, "sim-pager")
    assert stock.outputs[0].message == nocap.outputs[0].message
    other_epoch = _run("sim-pager", "stock", task={**FIX, "epoch": 2})
    assert other_epoch.outputs[0].message.tool_calls[0].id != stock.outputs[0].message.tool_calls[0].id


def test_a_mixture_sample_replays_the_drawn_profile_exactly():
    mixed = _run("sim-mixed")
    drawn = mixed.store.get(SIM_KEY)["profile"]
    assert drawn == "sim-stubborn"  # the weighted draw for (t1, 1, sim-mixed)
    plain = _run(drawn)
    def strip(out):  # the message names the model it came from: sim-mixed vs sim-stubborn
        return out.message.model_dump(exclude={"model"})

    assert [strip(o) for o in mixed.outputs] == [strip(o) for o in plain.outputs]
    assert mixed.outputs[0].message.model == "sim-mixed"
    assert {o.metadata["sim_profile"] for o in mixed.outputs} == {"sim-stubborn"}


def test_usage_counts_the_whole_request_and_the_reply():
    trace = _run("sim-pager", "stock")
    infos = tool_infos("stock")
    for view, out in zip(trace.inputs, trace.outputs, strict=True):
        assert out.usage.input_tokens == request_tokens(view, infos)
        calls = out.message.tool_calls or []
        fn, args = (calls[0].function, calls[0].arguments) if calls else (None, {})
        assert out.usage.output_tokens == output_tokens(out.message.text, fn, args)
        assert out.usage.total_tokens == out.usage.input_tokens + out.usage.output_tokens
        assert out.usage.input_tokens_cache_read is None and out.usage.input_tokens_cache_write is None
    # the 2,000-line page is in the second request, not the first
    assert trace.outputs[1].usage.input_tokens - trace.outputs[0].usage.input_tokens > 10_000


def test_simulated_time_follows_the_latency_model():
    trace = _run("sim-pager", "stock", overrides={"p_verify_reread": 0})
    meta = [o.metadata for o in trace.outputs]
    first = trace.outputs[0]
    # pager: ttft 1.0 s + 0.01 s per 1k prompt tokens; 60 output tokens per second
    expected_first_token = round(1.0 + 0.01 * first.usage.input_tokens / 1000, 6)
    assert meta[0]["sim_ts_start_seconds"] == 0.0
    assert meta[0]["sim_ts_first_token_seconds"] == expected_first_token
    assert meta[0]["sim_ts_end_seconds"] == round(expected_first_token + first.usage.output_tokens / 60, 6)
    gaps = [round(b["sim_ts_start_seconds"] - a["sim_ts_end_seconds"], 6) for a, b in zip(meta, meta[1:], strict=False)]
    assert gaps == [0.2, 0.2, 0.2, 0.2, 8.0]  # read, read, read, edit: tool_seconds; the test run: test_seconds


def test_provider_resolves_through_the_inspect_registry_and_counts_tokens_offline():
    model = get_model("readbench/sim-pager", p_grep_first=0.25)
    assert isinstance(model.api, SimAgentAPI) and model.api.model_name == "sim-pager"
    assert asyncio.run(model.api.count_text_tokens("hello world")) == 2
    with pytest.raises(ValueError, match="unknown sim profile 'sim-nope'"):
        SimAgentAPI("sim-nope")
    with pytest.raises(ValueError, match="unknown sim knob 'p_grep'"):
        SimAgentAPI("sim-mixed", p_grep=0.1)


def test_generate_through_the_api_uses_the_sample_store():
    from inspect_ai.util._store import init_subtask_store

    st = Store()
    st.set(ORACLE_KEY, FIX)
    init_subtask_store(st)
    api = SimAgentAPI("sim-pager", calls_per_prompt="0-0")  # no exploration: the first call is the blind read
    out = asyncio.run(api.generate([ChatMessageUser(content="Fix it.")], tool_infos("stock"), "auto", GenerateConfig()))
    assert out.message.tool_calls[0].function == "read" and out.message.tool_calls[0].arguments == {"path": "big.py"}
    assert st.get(SIM_KEY)["calls"] == 1


def test_missing_oracle_is_a_clear_error():
    with pytest.raises(ValueError, match="no 'readbench:oracle' in the sample store"):
        generate_in_store(Store(), "sim-pager", {}, [ChatMessageUser(content="hi")], [])


def test_request_tokens_counts_each_message_object_once_and_a_replaced_message_anew():
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
    from inspect_ai.tool import ToolCall

    from readbench.base.idmemo import IdentityMemo
    from readbench.sim.tokens import (
        MESSAGE_OVERHEAD_TOKENS,
        REQUEST_OVERHEAD_TOKENS,
        _message_token_count,
        count_tokens,
    )

    call = ToolCall(id="c1", function="read", arguments={"path": "a.py"})
    history = [ChatMessageUser(content="fix the bug"), ChatMessageAssistant(content="reading", tool_calls=[call]),
               ChatMessageTool(content="1\tx = 1\n2\ty = 2", tool_call_id="c1", function="read")]
    rendered = ["user\nfix the bug",
                'assistant\nreading\n{"arguments": {"path": "a.py"}, "id": "c1", "name": "read"}',
                "tool\n1\tx = 1\n2\ty = 2\nc1"]
    expected = REQUEST_OVERHEAD_TOKENS + sum(count_tokens(r) + MESSAGE_OVERHEAD_TOKENS for r in rendered)
    assert request_tokens(history, []) == expected
    assert request_tokens(history, []) == expected  # the same objects again: from the cache
    pruned = history[:2] + [ChatMessageTool(content="[pruned]", tool_call_id="c1", function="read")]
    assert request_tokens(pruned, []) == expected - count_tokens(rendered[2]) + count_tokens("tool\n[pruned]\nc1")
    counts = IdentityMemo(_message_token_count, size=2)
    assert [counts(m) for m in history] == [count_tokens(r) for r in rendered]
    assert len(counts) == 2 and history[0] not in counts and history[2] in counts  # the oldest dropped
