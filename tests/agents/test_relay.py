"""The bridge filters of a harness run (readbench.agents.run._Relay): the DCP projection of each
relayed request, the per-call record of what was relayed, and the turn limit (GitHub issue 24)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    GenerateInput,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolInfo

from readbench.agents.run import _Relay


def _history(n_reads: int) -> list:
    msgs = [ChatMessageUser(content="find X in a.py")]
    for k in range(n_reads):
        call = ToolCall(id=f"c{k}", function="read", arguments={"path": "a.py"})
        msgs += [ChatMessageAssistant(content="", tool_calls=[call]),
                 ChatMessageTool(content=f"line {k}\n" * 50, tool_call_id=f"c{k}", function="read")]
    return msgs


def _output(prompt: int, out: int) -> ModelOutput:
    o = ModelOutput.from_content("mockllm/model", "ok")
    o.usage = ModelUsage(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)
    return o


def test_relay_projects_records_each_relayed_call_and_stops_at_the_turn_limit():
    model = get_model("mockllm/model")
    tools = [ToolInfo(name="read", description="Read a file")]
    relay = _Relay("pi-dcp", "/repo", 200_000, max_turns=2)

    async def run():
        results = []
        for n in (1, 3, 4):
            sent = await relay.filter(model, _history(n), tools, None, GenerateConfig())
            if isinstance(sent, ModelOutput):
                results.append(sent)
                assert await relay.response(model, sent, GenerateInput(_history(n), tools, None, GenerateConfig())) is None
                continue
            results.append(sent)
            assert await relay.response(model, _output(1000 * n, 10), sent) is None
        return results

    first, second, third = asyncio.run(run())
    # pi-dcp's strategies ran on the relayed request (nothing to prune yet: one user turn is protected)
    assert isinstance(second, GenerateInput) and len(second.input) == len(_history(3))
    assert relay.calls[1].pruned == {"deduplicate": 0, "purgeErrors": 0, "outputBodyReplace": 0}
    assert [c.n_history for c in relay.calls] == [3, 7]
    assert [c.prompt_tokens for c in relay.calls] == [1000, 3000]
    # the third call is past max_turns=2: answered by the filter, no tool call, not recorded or priced
    assert isinstance(third, ModelOutput) and not third.message.tool_calls and relay.turn_limited
    assert len(relay.calls) == 2 and len(relay.records) == 2
    assert relay.records[1].messages is not relay.unpruned[1].messages


async def _relay_through(relay, histories):
    """Relay one call per history size in `histories` (`_history(n)`), each answered with
    `_output(1000 * n, 10 + n)`; the relay must log every call itself (its response returns None)."""
    model = get_model("mockllm/model")
    tools = [ToolInfo(name="read", description="Read a file")]
    for n in histories:
        sent = await relay.filter(model, _history(n), tools, None, GenerateConfig())
        assert await relay.response(model, _output(1000 * n, 10 + n), sent) is None


def test_a_forks_relay_seeded_with_the_trunks_prefix_logs_the_same_calls_as_one_run_through():
    # one relay runs calls 0-3; a second, seeded at call 2 with the first's first two calls, relays
    # only calls 2-3: both end with the same per-call log, records (messages, times) and reported usage
    whole = _Relay("obs-mask-5", "/repo", 200_000)
    fork = _Relay("obs-mask-5", "/repo", 200_000, replayed=2)

    asyncio.run(_relay_through(whole, (1, 3, 6, 7)))
    fork.seed([asdict(c) for c in whole.calls], whole.times, whole.reported_calls)
    assert fork.calls == [] and fork.at_turn_limit() is False
    asyncio.run(_relay_through(fork, (6, 7)))
    assert fork.calls == whole.calls and fork.reported == whole.reported and fork.replayed == 0
    assert [c.n_history for c in fork.calls] == [3, 7, 13, 15]
    assert fork.calls[3].pruned == whole.calls[3].pruned and fork.calls[3].earliest_changed_index == 2
    def dump(records):  # messages without inspect's random ids (each _history call makes new ones)
        return [([m.model_dump(exclude={"id"}) for m in r.messages], r.output_tokens) for r in records]

    assert dump(fork.records) == dump(whole.records) and dump(fork.unpruned) == dump(whole.unpruned)
    assert dump(fork.records)[3][0][2]["content"] != dump(fork.unpruned)[3][0][2]["content"]  # masked
    assert fork.times[:2] == whole.times[:2] and [r.ts_start_seconds for r in fork.records[:2]] == [
        t[0] for t in whole.times[:2]]
    try:
        _Relay("off", "/repo", 200_000, replayed=3).seed([asdict(c) for c in whole.calls[:2]], whole.times, [])
    except ValueError as e:
        assert str(e) == "a fork at call 3 needs the trunk's first 3 calls and times (got 2 calls, 4 times)"
    else:
        raise AssertionError("a short prefix was accepted")


def test_a_forks_not_spent_is_its_prefix_calls_tokens_and_their_cost_alone():
    # a fork seeded at call 2: what it did not pay is calls 0-1 (prompt 1000 + 3000, output 11 + 13),
    # priced as the cache simulation of those two calls alone (what they cost in an independent run)
    from readbench.cache import sample_cache_metrics

    whole = _Relay("off", "/repo", 200_000)
    fork = _Relay("off", "/repo", 200_000, replayed=2)

    asyncio.run(_relay_through(whole, (1, 3, 6, 7)))
    fork.seed([asdict(c) for c in whole.calls], whole.times, whole.reported_calls)
    asyncio.run(_relay_through(fork, (6, 7)))
    spent = fork.not_spent(2, ["anthropic-5m", "openai"])
    assert spent["prefix_tokens"] == {"input": 4000, "output": 24}
    alone = sample_cache_metrics(whole.records[:2], ["anthropic-5m", "openai"])
    assert spent["prefix_cost_usd"] == {"anthropic-5m": alone["cost_usd_anthropic-5m"],
                                        "openai": alone["cost_usd_openai"]}
    whole_cost = sample_cache_metrics(whole.records, ["openai"])["cost_usd_openai"]
    assert 0 < spent["prefix_cost_usd"]["openai"] < whole_cost
    assert fork.not_spent(0, ["openai"]) == {"prefix_tokens": {"input": 0, "output": 0}, "prefix_cost_usd": {}}


def test_a_request_pi_retried_is_one_call_with_one_sim_memory_and_one_projection(monkeypatch):
    # call 1's first request failed after the filter (no response: the bridge's model call raised) and
    # pi retried it: the relay keeps one sim memory per call (the retry's: the memory the answered request
    # ran with), nothing pending, and the projection state, calls and shadow of a run without the failure
    from inspect_ai.util import store
    from inspect_ai.util._store import Store, init_subtask_store

    from readbench.agents import relay as relay_module
    from readbench.agents.pi_shadow import PiShadow
    from readbench.base import store as rbstore

    init_subtask_store(Store())
    class NoFiles:
        async def read_file(self, path, text=True):
            raise FileNotFoundError(path)

    monkeypatch.setattr(relay_module, "sandbox", NoFiles)
    model = get_model("mockllm/model")
    tools = [ToolInfo(name="read", description="Read a file")]

    async def relay_through(relay, attempts):
        for n, answered in attempts:
            store().set(rbstore.SIM, {"memory": f"{n}{'' if answered else ' (failed)'}"})
            sent = await relay.filter(model, _history(n), tools, None, GenerateConfig())
            if answered:
                await relay.response(model, _output(1000 * n, 10 + n), sent)

    def relay():
        r = _Relay("obs-mask-5", "/repo", 200_000)
        r.sim_before = []
        r.shadow = PiShadow(("stock", "obs-mask-5"), [("stock", "obs-mask-5"), ("stock", "off")], "/repo")
        return r

    retried, once = relay(), relay()
    asyncio.run(relay_through(retried, [(0, True), (3, False), (3, True), (6, True), (7, True)]))
    asyncio.run(relay_through(once, [(0, True), (3, True), (6, True), (7, True)]))
    assert retried.sim_before == [{"memory": "0"}, {"memory": "3"}, {"memory": "6"}, {"memory": "7"}]
    assert retried.pending == {}
    assert retried.calls == once.calls and retried.state == once.state
    assert retried.shadow.finish(4) == once.shadow.finish(4)
