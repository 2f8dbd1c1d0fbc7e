"""Tiny builders for inspect message lists in pi's shape (used by tests/dcp only)."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolCallError


def user(text: str) -> ChatMessageUser:
    return ChatMessageUser(content=text)


def system(text: str) -> ChatMessageSystem:
    return ChatMessageSystem(content=text)


def asst(text: str = "", *calls: tuple[str, str, dict[str, Any]]) -> ChatMessageAssistant:
    return ChatMessageAssistant(
        content=text,
        tool_calls=[ToolCall(id=cid, function=fn, arguments=args) for cid, fn, args in calls] or None,
    )


def tool(cid: str, fn: str, text: str, error: bool = False) -> ChatMessageTool:
    return ChatMessageTool(
        content=text,
        tool_call_id=cid,
        function=fn,
        error=ToolCallError(type="unknown", message=text) if error else None,
    )


def step(cid: str, fn: str, args: dict[str, Any], out: str, error: bool = False) -> list:
    """One assistant tool call and its result."""
    return [asst("", (cid, fn, args)), tool(cid, fn, out, error)]


def text(msg) -> str:
    return msg.text
