"""Codex response items as chat messages (readbench.sessions.codex, sessions.md §3): the Responses
API items a rollout records (`message`, `reasoning`, `function_call`, `custom_tool_call`,
`local_shell_call`, `web_search_call` and their outputs), one response's output items grouped
into one assistant message, tool outputs cut to the turn's truncation policy as Codex cuts its
history (readbench.sessions._codex_truncate). Both Codex formats (the current rollout and the
Sept-2025 transcript) are made of these items.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall

from readbench.sessions._build import SessionBuilder
from readbench.sessions._codex_truncate import model_visible_output
from readbench.sessions._types import ImportIssues

__all__ = ["OUTPUT_ITEMS", "ResponseItems", "is_output"]

#: Item types the model writes (with assistant `message`s): one response's outputs.
OUTPUT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")


def is_output(item: dict[str, Any]) -> bool:
    """A response item the model wrote (reasoning, a tool call, assistant text), not an input."""
    kind = item.get("type")
    return kind in OUTPUT_ITEMS or (kind == "message" and item.get("role") == "assistant")


def _is_image(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "input_image"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and isinstance(b.get("text"), str):
            out.append(b["text"])
    return "".join(out)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {}


class ResponseItems:
    """Turns response items into chat messages, grouping one response's outputs."""

    def __init__(self, b: SessionBuilder, issues: ImportIssues) -> None:
        self.b = b
        self.issues = issues
        self.pending: list[dict[str, Any]] = []  # output items of the response being written
        self.names: dict[str, str] = {}
        #: the turn's truncation policy × 1.2 (`_codex_truncate.policy_budget`), None if unrecorded
        self.budget: tuple[str, int] | None = None

    def assistant(self, items: list[dict[str, Any]]) -> ChatMessageAssistant:
        parts: list[Any] = []
        calls: list[ToolCall] = []
        for it in items:
            kind = it.get("type")
            if kind == "reasoning":
                summary = "\n".join(s.get("text", "") for s in it.get("summary") or [] if isinstance(s, dict))
                parts.append(ContentReasoning(reasoning=summary, signature=it.get("encrypted_content")))
            elif kind == "message":
                parts.append(ContentText(text=_text(it.get("content"))))
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                cid = str(it.get("call_id") or it.get("id") or "")
                name = str(it.get("name") or kind)
                self.names[cid] = name
                raw = it.get("arguments") if kind == "function_call" else it.get("input", it.get("action"))
                calls.append(ToolCall(id=cid, function=name, arguments=_arguments(raw)))
            elif kind == "web_search_call":
                parts.append(ContentText(text=json.dumps(it.get("action") or {}, ensure_ascii=False)))
        return ChatMessageAssistant(content=parts, tool_calls=calls or None, source="generate")

    def flush(self) -> ChatMessageAssistant | None:
        """Append the pending outputs as one assistant message; returns it (None if none)."""
        if not self.pending:
            return None
        msg = self.assistant(self.pending)
        self.pending = []
        self.b.append(msg)
        return msg

    def convert(self, it: dict[str, Any], where: str) -> ChatMessage | None:
        """An input item as a chat message (None for items the model does not see)."""
        kind = it.get("type")
        if kind == "message":
            role = it.get("role")
            text = _text(it.get("content"))
            if role == "user":
                return ChatMessageUser(content=text)
            if role in ("developer", "system"):
                return ChatMessageSystem(content=text) if role == "system" else ChatMessageUser(
                    content=text, metadata={"codex": {"role": "developer"}})
            self.issues.warn(where, f"message with unexpected role {role!r}")
            return None
        if kind in ("function_call_output", "custom_tool_call_output"):
            out = model_visible_output(it.get("output"), self.budget)
            cid = str(it.get("call_id") or "")
            images = [x for x in out if _is_image(x)] if isinstance(out, list) else []
            if images:  # an image (e.g. view_image) is an image to the model, not its base64 text
                rest = [x for x in out if not _is_image(x)]
                parts: list[Any] = [ContentText(text=json.dumps(rest, ensure_ascii=False))] if rest else []
                parts += [ContentImage(image=str(x.get("image_url") or ""),
                                       detail=x["detail"] if x.get("detail") in ("auto", "low", "high", "original") else "auto")
                          for x in images]
                return ChatMessageTool(content=parts, tool_call_id=cid, function=self.names.get(cid))
            body = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
            return ChatMessageTool(content=body, tool_call_id=cid, function=self.names.get(cid))
        if kind == "ghost_snapshot":
            self.issues.skipped["ghost_snapshot"] += 1
            return None
        self.issues.unknown_types[f"response_item:{kind}"] += 1
        return None

    def history_item(self, it: dict[str, Any], where: str) -> ChatMessage | None:
        """An item of a `compacted` line's replacement history (outputs included)."""
        kind = it.get("type")
        if is_output(it):
            return self.assistant([it])
        if kind == "compaction":  # the server's encrypted summary of what was compacted
            return ChatMessageAssistant(content=[ContentReasoning(reasoning="", signature=it.get("encrypted_content"),
                                                                  redacted=True)], source="generate")
        return self.convert(it, where)

    def item(self, it: dict[str, Any], where: str) -> None:
        if is_output(it):
            self.pending.append(it)
            return
        self.flush()
        msg = self.convert(it, where)
        if msg is not None:
            self.b.append(msg)
