"""Import a pi session JSONL as inspect chat messages, and export them back.

Format: shared/specs/pi-tools.md §6 (session version 3). Every entry except the `session`
header has `type, id, parentId, timestamp`; the active branch is found by following `parentId`
from the last entry back to the root (the method of the sister extension's benchmark,
dcp.md §7.5). `message` entries with role `user`, `assistant` or `toolResult` become
ChatMessageUser / ChatMessageAssistant (+ ToolCall per `toolCall` block) / ChatMessageTool
(`isError` -> `error` set, with the result text as its message, which is what inspect's
providers send for an errored tool message). Other entry types, and [103] `system` messages,
are not model-visible transcript messages and are skipped (counted in `PiSession.skipped`).

Nothing is lost for the message fields: pi keys without an inspect field (usage, api, provider,
stopReason, details, timestamps, the assistant's block order, ...) are kept in
`metadata["pi"]`, and `to_pi_message` rebuilds the original message object from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
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
from pydantic import TypeAdapter

__all__ = [
    "PiSession",
    "active_branch",
    "from_pi_message",
    "load_messages",
    "parse_session",
    "to_pi_message",
    "export_session",
]

SESSION_VERSION = 3
_ROLES = ("user", "assistant", "toolResult")
_CORE = {
    "user": ("role", "content"),
    "assistant": ("role", "content"),
    "toolResult": ("role", "content", "toolCallId", "toolName", "isError"),
}


@dataclass(frozen=True)
class PiSession:
    """An imported session: header, the active branch's entries and its messages."""

    header: dict[str, Any]
    """The `{"type": "session", "version": 3, ...}` line."""
    branch: list[dict[str, Any]]
    """Entries of the active branch, root first."""
    messages: list[ChatMessage]
    """user/assistant/toolResult messages of the branch, in order."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Branch entries not turned into messages, by `type` (`message:system` for system messages)."""


def _blocks_in(content: Any, where: str) -> list[Any]:
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of blocks, got {type(content).__name__}")
    out: list[Any] = []
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            out.append(ContentText(text=b.get("text", "")))
        elif kind == "image":
            out.append(ContentImage(image=f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"))
        else:
            raise ValueError(f"{where}: unsupported content block type {kind!r}")
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


def from_pi_message(msg: dict[str, Any], entry: dict[str, Any] | None = None) -> ChatMessage:
    """Convert one pi message object to an inspect ChatMessage.

    Raises ValueError for an unknown role or malformed content (the message names the entry).
    """
    where = f"entry {entry.get('id')!r}" if entry else "message"
    role = msg.get("role")
    if role not in _ROLES:
        raise ValueError(f"{where}: role must be one of {_ROLES}, got {role!r}")
    extra = {k: v for k, v in msg.items() if k not in _CORE[role]}
    pi: dict[str, Any] = {"message": extra}
    if entry is not None:
        pi["entry"] = {k: entry[k] for k in ("id", "parentId", "timestamp") if k in entry}
    content = msg.get("content", "")
    if role == "user":
        body = content if isinstance(content, str) else _blocks_in(content, where)
        return ChatMessageUser(content=body, metadata={"pi": pi})
    if role == "toolResult":
        if not isinstance(msg.get("toolCallId"), str):
            raise ValueError(f"{where}: toolResult needs a string toolCallId")
        body = content if isinstance(content, str) else _blocks_in(content, where)
        text = body if isinstance(body, str) else "".join(c.text for c in body if isinstance(c, ContentText))
        error = ToolCallError(type="unknown", message=text) if msg.get("isError") else None
        pi["isError"] = msg.get("isError")
        return ChatMessageTool(
            content=body, tool_call_id=msg["toolCallId"], function=msg.get("toolName"), error=error, metadata={"pi": pi}
        )
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
        pi["string_content"] = True
    parts: list[Any] = []
    calls: list[ToolCall] = []
    order: list[str] = []
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        order.append(kind)
        if kind == "text":
            parts.append(ContentText(text=b.get("text", "")))
        elif kind == "thinking":
            parts.append(ContentReasoning(reasoning=b.get("thinking", ""), signature=b.get("thinkingSignature")))
        elif kind == "toolCall":
            if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str):
                raise ValueError(f"{where}: toolCall block needs string id and name")
            calls.append(ToolCall(id=b["id"], function=b["name"], arguments=b.get("arguments") or {}))
        else:
            raise ValueError(f"{where}: unsupported assistant block type {kind!r}")
    pi["block_order"] = order
    return ChatMessageAssistant(
        content=parts, tool_calls=calls or None, model=msg.get("model"), source="generate", metadata={"pi": pi}
    )


def to_pi_message(msg: ChatMessage) -> dict[str, Any]:
    """Inverse of `from_pi_message` (exact for imported messages; sensible defaults otherwise).

    Raises ValueError for a system message (pi transcripts have none in [084]).
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
                block = {"type": "thinking", "thinking": c.reasoning}
                if c.signature is not None:
                    block["thinkingSignature"] = c.signature
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


def active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries from the root to the last entry, following `parentId` (root first).

    Raises ValueError on a dangling parentId or a cycle (naming the entry id).
    """
    if not entries:
        return []
    by_id = {e["id"]: e for e in entries}
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    cur: dict[str, Any] | None = entries[-1]
    while cur is not None:
        if cur["id"] in seen:
            raise ValueError(f"parentId cycle at entry {cur['id']!r}")
        seen.add(cur["id"])
        chain.append(cur)
        parent = cur.get("parentId")
        if parent is None:
            break
        if parent not in by_id:
            raise ValueError(f"entry {cur['id']!r} has unknown parentId {parent!r}")
        cur = by_id[parent]
    return chain[::-1]


def parse_session(text: str, source: str = "<session>") -> PiSession:
    """Parse pi session JSONL text (version 3).

    Raises ValueError naming `source` and the line number for invalid JSON, a missing or
    wrong-version header, an entry without a string `id`, or a bad branch.
    """
    header: dict[str, Any] | None = None
    entries: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}:{n}: invalid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{source}:{n}: expected a JSON object")
        if obj.get("type") == "session":
            if obj.get("version") != SESSION_VERSION:
                raise ValueError(f"{source}:{n}: session version {obj.get('version')!r} is not supported (need 3)")
            header = obj
            continue
        if not isinstance(obj.get("id"), str):
            raise ValueError(f"{source}:{n}: entry has no string 'id'")
        entries.append(obj)
    if header is None:
        raise ValueError(f"{source}: no session header line (type 'session')")
    branch = active_branch(entries)
    messages: list[ChatMessage] = []
    skipped: dict[str, int] = {}
    for e in branch:
        msg = e.get("message") if e.get("type") == "message" else None
        if isinstance(msg, dict) and msg.get("role") in _ROLES:
            messages.append(from_pi_message(msg, e))
        else:
            kind = f"message:{msg.get('role')}" if isinstance(msg, dict) else e.get("type", "?")
            skipped[kind] = skipped.get(kind, 0) + 1
    return PiSession(header, branch, messages, skipped)


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


_MESSAGES = TypeAdapter(list[ChatMessage])


def load_messages(path: str | Path) -> list[ChatMessage]:
    """Messages from a pi session JSONL or a JSON list of inspect chat messages.

    A file whose first non-blank character is `[` is a JSON list of inspect messages; anything
    else is read as a pi session. Raises ValueError naming the file on malformed input,
    FileNotFoundError when it does not exist.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            return _MESSAGES.validate_json(text)
        except ValueError as exc:
            raise ValueError(f"{p}: not a JSON list of inspect chat messages ({str(exc).splitlines()[0]})") from None
    return parse_session(text, str(p)).messages
