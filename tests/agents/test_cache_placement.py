"""The harness's and the bridge's cache-breakpoint placements (readbench.agents.cache_placement;
issue 24 item 3): where Claude Code 2.1.332 put `cache_control` in its own requests (probed: raw
Messages requests recorded at a local endpoint) and where inspect's Anthropic provider puts it."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from readbench.agents.cache_placement import claude_code_breakpoints, inspect_breakpoints, placement_metrics
from readbench.cache.adapter import CallRecord
from readbench.cache.blocks import Block


def _b(kind: str, role: str, tokens: int = 10) -> Block:
    return Block(kind, role, tokens, f"{kind}{role}{tokens}".encode())


# Claude Code's request as the bridge relays it: 5 tools, 3 system blocks (billing header, identity,
# prompt), the prompt, then one tool round trip
BLOCKS = [*[_b("tool_def", "tools")] * 5, _b("system", "system"), _b("system", "system"), _b("system", "system"),
          _b("text", "user"), _b("text", "assistant"), _b("tool_use", "assistant"), _b("tool_result", "user")]


def test_claude_codes_own_placement_is_what_it_sent():
    # probe: system blocks 1 and 2 marked, no tool, the newest tool_result
    assert claude_code_breakpoints(BLOCKS) == (6, 7, 11)
    assert claude_code_breakpoints(BLOCKS[:9]) == (6, 7, 8)  # the first call: the prompt's block
    assert claude_code_breakpoints(BLOCKS[:10]) == (6, 7)  # an assistant block last: none there


def test_inspects_placement_is_last_system_last_tool_lookback_and_automatic():
    assert inspect_breakpoints(BLOCKS) == (4, 7, 10, 11)
    assert inspect_breakpoints(BLOCKS[:9]) == (4, 7, 8)


def test_both_figures_are_priced_for_anthropic_cache_models_only():
    tools = [ToolInfo(name="Read", description="Read a file " * 200, parameters=ToolParams())]
    system = [ChatMessageSystem(content="x-anthropic-billing-header: cc_version=2.1.332"),
              ChatMessageSystem(content="You are a Claude agent."), ChatMessageSystem(content="prompt " * 3000)]
    history = [*system, ChatMessageUser(content="Fix a.py")]
    calls = []
    for i in range(3):
        calls.append(CallRecord(list(history), tools, 20, 10.0 * i, 10.0 * i + 1))
        call = ToolCall(id=f"t{i}", function="Read", arguments={"file_path": "/w/a.py"})
        history += [ChatMessageAssistant(content="", tool_calls=[call]),
                    ChatMessageTool(content="1\tline\n" * 500, tool_call_id=f"t{i}", function="Read")]
    out = placement_metrics(calls, ["anthropic-5m", "openai"], "claude-code")
    assert sorted(out) == ["bridge_cache_read_ratio_anthropic-5m", "bridge_cost_usd_anthropic-5m",
                           "harness_cache_read_ratio_anthropic-5m", "harness_cost_usd_anthropic-5m"]
    assert 0 < out["harness_cache_read_ratio_anthropic-5m"] < 1 and out["harness_cost_usd_anthropic-5m"] > 0
    # append-only growth: both read the previous request up to its newest tool result and write the
    # rest up to the new one (Claude Code's last breakpoint = inspect's automatic one; inspect's
    # extra markers, the last tool and the lookback block, lie inside that prefix): the same bill
    assert out["bridge_cache_read_ratio_anthropic-5m"] == out["harness_cache_read_ratio_anthropic-5m"]
    assert out["bridge_cost_usd_anthropic-5m"] == out["harness_cost_usd_anthropic-5m"]
