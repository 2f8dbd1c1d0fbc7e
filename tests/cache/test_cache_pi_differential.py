"""pi's Anthropic breakpoint placement, checked against the shipped package (caching.md §9).

Runs `@earendil-works/pi-ai` 0.84.1 (`dist/api/anthropic-messages.js`, installed for the
differential tests by `make setup-differential`) through `pi_payload.mjs`, which captures the
request body pi builds, and compares the blocks pi marks with `cache_control` against
`pi_breakpoints` on readbench's rendering of the same conversation.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo, ToolParam, ToolParams

from readbench.cache import CallRecord, RequestBuilder
from readbench.cache.policies.anthropic import pi_breakpoints

pytestmark = pytest.mark.differential

HERE = Path(__file__).parent
DRIVER = HERE.parent / "differential" / "driver"
_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _pi_marked(context: dict, cache_retention: str | None = None) -> tuple[list[int], list[dict]]:
    """Flattened block indices (tools -> system -> message blocks) pi marks, and the markers."""
    payload = {"context": context, "cacheRetention": cache_retention}
    out = subprocess.run(
        ["node", str(HERE / "pi_payload.mjs"), str(DRIVER)],
        input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=True,
    )
    body = json.loads(out.stdout)
    flat: list[dict] = list(body.get("tools", [])) + list(body.get("system", []))
    for msg in body["messages"]:
        content = msg["content"]
        flat.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    marked = [i for i, b in enumerate(flat) if "cache_control" in b]
    return marked, [flat[i]["cache_control"] for i in marked]


def _pi_context(ends_with: str) -> dict:
    tools = [{"name": n, "description": n.title(), "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}} for n in ("read", "bash")]
    msgs: list[dict] = [{"role": "user", "content": "fix it", "timestamp": 1}]
    calls = [{"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": p}} for i, p in enumerate("ab")]
    msgs.append({"role": "assistant", "content": calls, "api": "anthropic-messages", "provider": "anthropic",
                 "model": "claude-sonnet-5", "usage": _USAGE, "stopReason": "toolUse", "timestamp": 2})
    for i, text in enumerate("AB"):
        msgs.append({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "read", "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 3})
    if ends_with in ("user", "assistant"):
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "Done?"}], "api": "anthropic-messages", "provider": "anthropic",
                     "model": "claude-sonnet-5", "usage": _USAGE, "stopReason": "stop", "timestamp": 4})
    if ends_with == "user":
        msgs.append({"role": "user", "content": "yes, run the tests", "timestamp": 5})
    return {"systemPrompt": "You are pi.", "messages": msgs, "tools": tools}


def _ours(ends_with: str) -> tuple[int, ...]:
    tools = [ToolInfo(name=n, description=n.title(), parameters=ToolParams(properties={"path": ToolParam(type="string")}, required=["path"])) for n in ("read", "bash")]
    msgs = [ChatMessageSystem(content="You are pi."), ChatMessageUser(content="fix it"),
            ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"c{i}", function="read", arguments={"path": p}) for i, p in enumerate("ab")])]
    msgs += [ChatMessageTool(content=t, tool_call_id=f"c{i}", function="read") for i, t in enumerate("AB")]
    if ends_with in ("user", "assistant"):
        msgs.append(ChatMessageAssistant(content="Done?"))
    if ends_with == "user":
        msgs.append(ChatMessageUser(content="yes, run the tests"))
    return pi_breakpoints(RequestBuilder().build(CallRecord(msgs, tools, 0, 0.0, 0.0)).blocks)


@pytest.mark.parametrize("ends_with", ["tool_result", "user", "assistant"])
def test_pi_marks_the_blocks_readbench_assumes(ends_with):
    marked, markers = _pi_marked(_pi_context(ends_with))
    assert tuple(marked) == _ours(ends_with)
    assert markers == [{"type": "ephemeral"}] * len(marked)  # default retention: 5 minutes


def test_pi_long_retention_is_the_one_hour_ttl_and_none_disables_markers():
    marked, markers = _pi_marked(_pi_context("tool_result"), "long")
    assert markers == [{"type": "ephemeral", "ttl": "1h"}] * len(marked)
    assert _pi_marked(_pi_context("tool_result"), "none") == ([], [])
