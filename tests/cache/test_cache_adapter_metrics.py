"""CallRecord -> blocks, and the per-sample metrics (metrics.md "Prompt cache and cost")."""

from __future__ import annotations

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParam, ToolParams

from readbench.cache import CallRecord, RequestBuilder, count_tokens, sample_cache_metrics
from readbench.cache.adapter import calls_to_requests
from readbench.cache.simulate import simulate

SYSTEM = " ".join(["agent"] * 1000)  # 1,000 o200k tokens (checked below)


def _tools(order=("read", "bash")):
    return [
        ToolInfo(name=n, description=f"The {n} tool.", parameters=ToolParams(properties={"path": ToolParam(type="string")}, required=["path"]))
        for n in order
    ]


def _trajectory(n_calls: int, *, result_text: str = "line\n" * 300):
    """n_calls calls of a read loop sharing message objects, 20 s apart, 100 output tokens each."""
    tools = _tools()
    msgs = [ChatMessageSystem(content=SYSTEM), ChatMessageUser(content="Fix the bug in src/app.py.")]
    calls = []
    for k in range(n_calls):
        calls.append(CallRecord(list(msgs), tools, 100, 20.0 * k, 20.0 * k + 2.0))
        call = ToolCall(id=f"c{k}", function="read", arguments={"path": f"src/f{k}.py"})
        msgs = msgs + [ChatMessageAssistant(content="", tool_calls=[call]), ChatMessageTool(content=result_text + str(k), tool_call_id=f"c{k}", function="read")]
    return calls


def test_system_prompt_fixture_is_1000_tokens():
    assert count_tokens(SYSTEM) == 1000


def test_blocks_follow_provider_order_with_system_hoisted():
    call = _trajectory(3)[2]
    # Put the system message last in the list: it is still rendered before the conversation.
    call = CallRecord(call.messages[1:] + call.messages[:1], call.tools, 1, 0.0, 1.0)
    r = RequestBuilder().build(call)
    assert [(b.kind, b.role, b.ends_message) for b in r.blocks] == [
        ("tool_def", "tools", True), ("tool_def", "tools", True), ("system", "system", True),
        ("text", "user", True),
        ("tool_use", "assistant", True), ("tool_result", "user", True),
        ("tool_use", "assistant", True), ("tool_result", "user", True),
    ]
    assert r.blocks[2].tokens == 1000
    assert r.blocks[4].tokens == count_tokens('read{"path":"src/f0.py"}')
    assert r.blocks[5].tokens == count_tokens("line\n" * 300 + "0")


def test_assistant_text_thinking_and_tool_calls_become_separate_blocks():
    msg = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="think"), ContentText(text="Reading."), ContentText(text="  ")],
        tool_calls=[ToolCall(id="a", function="read", arguments={"path": "x"}), ToolCall(id="b", function="grep", arguments={"pattern": "y"})],
    )
    r = RequestBuilder().build(CallRecord([ChatMessageUser(content="go"), msg], [], 0, 0.0, 0.0))
    assert [(b.kind, b.ends_message) for b in r.blocks] == [
        ("text", True), ("thinking", False), ("text", False), ("tool_use", False), ("tool_use", True),
    ]


def test_tool_error_text_is_the_result_and_changes_the_hash():
    ok = ChatMessageTool(content="", tool_call_id="a", function="read")
    err = ChatMessageTool(content="", tool_call_id="a", function="read", error=ToolCallError("file_not_found", "ENOENT: no such file"))
    b = RequestBuilder()
    r_ok = b.build(CallRecord([ok], [], 0, 0.0, 0.0))
    r_err = b.build(CallRecord([err], [], 0, 0.0, 0.0))
    assert r_err.blocks[0].tokens == count_tokens("ENOENT: no such file")
    assert r_ok.blocks[0].content_hash != r_err.blocks[0].content_hash


def test_tool_order_and_argument_key_order_change_the_prefix():
    b = RequestBuilder()
    r1 = b.build(CallRecord([ChatMessageUser(content="x")], _tools(("read", "bash")), 0, 0.0, 0.0))
    r2 = b.build(CallRecord([ChatMessageUser(content="x")], _tools(("bash", "read")), 0, 0.0, 0.0))
    assert r1.blocks[0].content_hash != r2.blocks[0].content_hash
    c1 = ChatMessageAssistant(content="", tool_calls=[ToolCall(id="a", function="read", arguments={"path": "p", "offset": 1})])
    c2 = ChatMessageAssistant(content="", tool_calls=[ToolCall(id="a", function="read", arguments={"offset": 1, "path": "p"})])
    h1 = b.build(CallRecord([c1], [], 0, 0.0, 0.0)).blocks[0].content_hash
    h2 = b.build(CallRecord([c2], [], 0, 0.0, 0.0)).blocks[0].content_hash
    assert h1 != h2


def test_a_pruners_fresh_copy_renders_to_the_identical_block():
    calls = _trajectory(2)
    msgs = calls[1].messages
    copy = [m.model_copy() for m in msgs]
    b = RequestBuilder()
    r1 = b.build(CallRecord(msgs, calls[1].tools, 0, 0.0, 0.0))
    r2 = b.build(CallRecord(copy, calls[1].tools, 0, 1.0, 1.0))
    assert all(x is y for x, y in zip(r1.blocks, r2.blocks)) and len(r1.blocks) == len(r2.blocks)


def test_incremental_build_equals_a_fresh_build():
    calls = _trajectory(6)
    incremental = calls_to_requests(calls, "anthropic")
    fresh = [RequestBuilder().build(c, "anthropic") for c in calls]
    assert [r.blocks for r in incremental] == [r.blocks for r in fresh]


def test_families_scale_block_tokens():
    call = _trajectory(1)[0]
    b = RequestBuilder()
    openai = b.build(call, "openai")
    anthropic = b.build(call, "anthropic")
    assert [x.tokens for x in anthropic.blocks] == [(t * 1131 * 2 + 800) // 1600 for t in (x.tokens for x in openai.blocks)]
    assert anthropic.blocks[2].tokens == 1414  # the 1,000-token system prompt


def test_sample_metrics_keys_and_values_match_simulate():
    calls = _trajectory(4)
    m = sample_cache_metrics(calls, ["anthropic-5m", "openai"])
    assert sorted(m) == sorted(
        f"{k}_{cm}" for cm in ("anthropic-5m", "openai")
        for k in ("cache_read_tokens", "cache_write_tokens", "uncached_input_tokens", "cache_read_ratio", "cost_usd")
    )
    ref = simulate(calls_to_requests(calls, "anthropic"), "anthropic-5m", "claude-sonnet-5.5")
    assert m["cache_read_tokens_anthropic-5m"] == ref.cache_read_tokens
    assert m["cost_usd_anthropic-5m"] == ref.cost_usd
    assert m["cache_read_ratio_anthropic-5m"] == ref.cache_read_ratio
    total = m["cache_read_tokens_openai"] + m["cache_write_tokens_openai"] + m["uncached_input_tokens_openai"]
    assert total == sum(r.input_tokens for r in simulate(calls_to_requests(calls, "openai"), "openai").requests)


def test_counterfactual_is_zero_without_pruning_and_positive_when_pruning_breaks_the_prefix():
    calls = _trajectory(5)
    same = sample_cache_metrics(calls, ["anthropic-5m"], unpruned_calls=calls)
    assert same["dcp_cost_delta_anthropic-5m"] == 0.0
    assert same["cost_usd_unpruned_anthropic-5m"] == same["cost_usd_anthropic-5m"]
    # Prune the first tool result from call 3 on (a stub that changes every call): the
    # prefix breaks each time, so the projected run costs more than the unpruned one.
    pruned = []
    for k, c in enumerate(calls):
        msgs = list(c.messages)
        if k >= 3:
            msgs[3] = msgs[3].model_copy(update={"content": f"[pruned at call {k}]"})
        pruned.append(CallRecord(msgs, c.tools, c.output_tokens, c.ts_start_seconds, c.ts_first_token_seconds))
    m = sample_cache_metrics(pruned, ["anthropic-5m"], unpruned_calls=calls)
    assert m["dcp_cost_delta_anthropic-5m"] == pytest.approx(m["cost_usd_anthropic-5m"] - m["cost_usd_unpruned_anthropic-5m"])
    assert m["dcp_cost_delta_anthropic-5m"] > 0


def test_priced_model_override_and_bad_arguments():
    calls = _trajectory(2)
    a = sample_cache_metrics(calls, ["anthropic-5m"], priced_models={"anthropic-5m": "claude-opus-5"})
    b = sample_cache_metrics(calls, ["anthropic-5m"])
    assert a["cost_usd_anthropic-5m"] != b["cost_usd_anthropic-5m"]
    with pytest.raises(ValueError, match="unknown cache model 'vertex'"):
        sample_cache_metrics(calls, ["vertex"])
    with pytest.raises(ValueError, match="duplicate cache models"):
        sample_cache_metrics(calls, ["none", "none"])
    with pytest.raises(ValueError, match="unpruned_calls has 1 calls, calls has 2"):
        sample_cache_metrics(calls, ["none"], unpruned_calls=calls[:1])


def test_builder_supplied_prefix_hashes_equal_the_chainer_computation():
    from readbench.cache.blocks import PrefixChainer, Request

    calls = _trajectory(4)
    built = calls_to_requests(calls, "deepseek")
    plain = [Request(r.blocks, r.ts_start_seconds, r.ts_first_token_seconds, r.output_tokens) for r in built]
    a, b = PrefixChainer(), PrefixChainer()
    for with_hashes, without in zip(built, plain):
        assert with_hashes.prefix_hashes is not None and without.prefix_hashes is None
        pa, pb = a.prepare(with_hashes), b.prepare(without)
        assert pa.hashes == pb.hashes and pa.cum_tokens == pb.cum_tokens
