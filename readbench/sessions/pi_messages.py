"""pi message objects <-> inspect chat messages (docs/specs/pi-tools.md §6, sessions.md §1).

`from_pi_message` turns what pi keeps in a session entry into what the model saw:
- `user`, `assistant` (+ one ToolCall per `toolCall` block), `toolResult` (`isError` -> `error`
  set, with the result text as its message, which is what inspect's providers send);
- `bashExecution` (the user's own `!cmd`) -> user text, rendered by pi's `bashExecutionToText`
  (pi-coding-agent `core/messages.ts`); `excludeFromContext` (`!!cmd`) -> nothing;
- `custom` (and v2's `hookMessage`) -> user content; `branchSummary` / `compactionSummary` ->
  user text between pi's summary prefix and suffix (`core/messages.ts` `convertToLlm`).
Every pi key without an inspect field (usage, api, provider, stopReason, details, timestamps,
block order, ...) is kept in `metadata["pi"]`, and `to_pi_message` rebuilds the original
object from it (exact for imported user/assistant/toolResult messages).
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall, ToolCallError

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "PiMessageError",
    "bash_execution_text",
    "export_session",
    "from_pi_message",
    "summary_message",
    "to_pi_message",
]

SESSION_VERSION = 3
#: pi-coding-agent `core/messages.ts` (0.2x legacy `SUMMARY_PREFIX` is the same text).
COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"

_CORE = {
    "user": ("role", "content"),
    "assistant": ("role", "content"),
    "toolResult": ("role", "content", "toolCallId", "toolName", "isError"),
}
#: Roles pi turns into user text (convertToLlm); `hookMessage` is the v2 name of `custom`.
_AS_USER = ("bashExecution", "custom", "hookMessage", "branchSummary", "compactionSummary")
ROLES = tuple(_CORE) + _AS_USER


class PiMessageError(ValueError):
    """A pi message object that cannot be turned into a chat message (the text says why)."""


def bash_execution_text(msg: dict[str, Any]) -> str:
    """pi's `bashExecutionToText`: how a user's `!cmd` reaches the model (core/messages.ts)."""
    text = f"Ran `{msg.get('command', '')}`\n"
    output = msg.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {msg['fullOutputPath']}]"
    return text


def summary_message(summary: str, *, branch: bool = False, as_blocks: bool = True) -> ChatMessageUser:
    """The user message pi sends in place of compacted (or branched-away) history.

    `as_blocks` False gives the legacy form (a plain string content, pi <= 0.2x).
    """
    pre, post = (BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX) if branch else (COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX)
    text = pre + summary + post
    kind = "branchSummary" if branch else "compactionSummary"
    return ChatMessageUser(content=[ContentText(text=text)] if as_blocks else text, metadata={"pi": {"synthetic": kind}})


def _blocks_in(content: Any, where: str) -> list[Any]:
    if not isinstance(content, list):
        raise PiMessageError(f"{where}: content must be a string or a list of blocks, got {type(content).__name__}")
    out: list[Any] = []
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            out.append(ContentText(text=str(b.get("text", ""))))
        elif kind == "image":
            out.append(ContentImage(image=f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"))
        else:
            raise PiMessageError(f"{where}: unsupported content block type {kind!r}")
    return out


def _blocks_out(content: Any) -> Any:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for c in content:
        if isinstance(c, ContentText):
            out.append({"type": "text", "text": c.text})
        elif isinstance(c, ContentImage):
            head, _, data = c.image.partition(";base64,")
            out.append({"type": "image", "data": data, "mimeType": head.removeprefix("data:")})
        else:
            raise ValueError(f"cannot export content block of type {c.type!r} to a pi message")
    return out


def _assistant(msg: dict[str, Any], pi: dict[str, Any], where: str) -> ChatMessageAssistant:
    content = msg.get("content")
    if content is None:
        content = []
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
        pi["string_content"] = True
    if not isinstance(content, list):
        raise PiMessageError(f"{where}: assistant content must be a string or a list, got {type(content).__name__}")
    parts: list[Any] = []
    calls: list[ToolCall] = []
    order: list[Any] = []
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        order.append(kind)
        if kind == "text":
            parts.append(ContentText(text=str(b.get("text", ""))))
        elif kind == "thinking":
            parts.append(ContentReasoning(reasoning=str(b.get("thinking", "")), signature=b.get("thinkingSignature"),
                                          redacted=bool(b.get("redacted", False))))
        elif kind == "toolCall":
            if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str):
                raise PiMessageError(f"{where}: toolCall block needs string id and name")
            args = b.get("arguments")
            calls.append(ToolCall(id=b["id"], function=b["name"], arguments=args if isinstance(args, dict) else {}))
        else:
            raise PiMessageError(f"{where}: unsupported assistant block type {kind!r}")
    pi["block_order"] = order
    return ChatMessageAssistant(
        content=parts, tool_calls=calls or None, model=msg.get("model"), source="generate", metadata={"pi": pi}
    )


def from_pi_message(msg: Any, entry: dict[str, Any] | None = None, where: str = "message") -> ChatMessage | None:
    """Convert one pi message object to the chat message the model saw (module docstring).

    Returns None for a message pi keeps out of the model's context (`bashExecution` with
    `excludeFromContext`).

    Raises:
        PiMessageError: not an object, an unknown or missing role, or malformed content
            (`where`, e.g. `file:line`, starts the message).
    """
    if not isinstance(msg, dict):
        raise PiMessageError(f"{where}: message must be an object, got {type(msg).__name__}")
    role = msg.get("role")
    if role not in ROLES:
        raise PiMessageError(f"{where}: unknown message role {role!r} (known: {', '.join(ROLES)})")
    extra = {k: v for k, v in msg.items() if k not in _CORE.get(role, ("role",))}
    pi: dict[str, Any] = {"message": extra}
    if entry is not None:
        pi["entry"] = {k: entry[k] for k in ("id", "parentId", "timestamp") if k in entry}
    if role == "bashExecution":
        if msg.get("excludeFromContext"):
            return None
        pi["role"] = role
        return ChatMessageUser(content=[ContentText(text=bash_execution_text(msg))], metadata={"pi": pi})
    if role in ("branchSummary", "compactionSummary"):
        out = summary_message(str(msg.get("summary", "")), branch=role == "branchSummary")
        out.metadata = {"pi": {**pi, "role": role}}
        return out
    content = msg.get("content", "")
    if content is None:
        content = []
    if role in ("custom", "hookMessage"):
        pi["role"] = role
        body = content if isinstance(content, str) else _blocks_in(content, where)
        return ChatMessageUser(content=body, metadata={"pi": pi})
    if role == "user":
        body = content if isinstance(content, str) else _blocks_in(content, where)
        return ChatMessageUser(content=body, metadata={"pi": pi})
    if role == "toolResult":
        if not isinstance(msg.get("toolCallId"), str):
            raise PiMessageError(f"{where}: toolResult needs a string toolCallId")
        body = content if isinstance(content, str) else _blocks_in(content, where)
        text = body if isinstance(body, str) else "".join(c.text for c in body if isinstance(c, ContentText))
        error = ToolCallError(type="unknown", message=text) if msg.get("isError") else None
        pi["isError"] = msg.get("isError")
        return ChatMessageTool(
            content=body, tool_call_id=msg["toolCallId"], function=msg.get("toolName"), error=error, metadata={"pi": pi}
        )
    return _assistant(msg, pi, where)


def to_pi_message(msg: ChatMessage) -> dict[str, Any]:
    """Inverse of `from_pi_message` for user/assistant/toolResult messages (exact for imported
    ones; sensible defaults otherwise).

    Raises:
        ValueError: a system message (pi transcripts have none in [084]).
    """
    pi = (msg.metadata or {}).get("pi", {})
    extra = dict(pi.get("message", {}))
    if isinstance(msg, ChatMessageUser):
        return {"role": "user", "content": _blocks_out(msg.content), **extra}
    if isinstance(msg, ChatMessageTool):
        return {
            "role": "toolResult",
            "toolCallId": msg.tool_call_id,
            "toolName": msg.function,
            "content": _blocks_out(msg.content) if not isinstance(msg.content, str) else msg.content,
            "isError": msg.error is not None,
            **extra,
        }
    if isinstance(msg, ChatMessageAssistant):
        parts = [msg.content] if isinstance(msg.content, str) else list(msg.content)
        content_blocks: list[dict[str, Any]] = []
        for c in parts:
            if isinstance(c, str):
                if c:
                    content_blocks.append({"type": "text", "text": c})
            elif isinstance(c, ContentText):
                content_blocks.append({"type": "text", "text": c.text})
            elif isinstance(c, ContentReasoning):
                block: dict[str, Any] = {"type": "thinking", "thinking": c.reasoning}
                if c.signature is not None:
                    block["thinkingSignature"] = c.signature
                if c.redacted:
                    block["redacted"] = True
                content_blocks.append(block)
        call_blocks = [
            {"type": "toolCall", "id": c.id, "name": c.function, "arguments": c.arguments} for c in msg.tool_calls or []
        ]
        order = pi.get("block_order")
        if order and order.count("toolCall") == len(call_blocks) and len(order) == len(content_blocks) + len(call_blocks):
            it_c, it_t = iter(content_blocks), iter(call_blocks)
            blocks = [next(it_t) if k == "toolCall" else next(it_c) for k in order]
        else:
            blocks = content_blocks + call_blocks
        if pi.get("string_content") and len(blocks) == 1 and blocks[0]["type"] == "text":
            blocks_out: Any = blocks[0]["text"]
        else:
            blocks_out = blocks
        return {"role": "assistant", "content": blocks_out, **extra}
    raise ValueError(f"cannot export a {msg.role!r} message to a pi session")


def export_session(messages: list[ChatMessage], header: dict[str, Any] | None = None) -> str:
    """Write `messages` as a linear version-3 session JSONL (one `message` entry each).

    Entries are chained in list order (each one's `parentId` is the previous entry's id, the
    first is the root). Ids and timestamps come from `metadata["pi"]["entry"]` when present (so
    an imported branch keeps its message ids), else `m0001`, `m0002`, ... and "".
    """
    head = header or {"type": "session", "version": SESSION_VERSION, "id": "readbench-export", "timestamp": "", "cwd": ""}
    lines = [json.dumps(head, ensure_ascii=False)]
    parent: str | None = None
    for i, m in enumerate(messages, 1):
        meta = ((m.metadata or {}).get("pi") or {}).get("entry", {})
        eid = meta.get("id", f"m{i:04d}")
        entry = {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": meta.get("timestamp", ""),
            "message": to_pi_message(m),
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
        parent = eid
    return "\n".join(lines) + "\n"
