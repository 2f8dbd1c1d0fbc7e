"""The bridge filters of a harness run (readbench.agents.run._Relay): the DCP projection of each
relayed request, the per-call record of what was relayed, and the turn limit (GitHub issue 24)."""

from __future__ import annotations

import asyncio

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
