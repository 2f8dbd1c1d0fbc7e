"""The message chain of a Claude Code transcript (sessions.md §2, §7): lines as nodes of the
`uuid`/`parentUuid` tree, and the messages of a request rebuilt from them (`_Importer.chain`).
Split from `readbench.sessions.claude_code` (its module docstring describes the rules)."""

from __future__ import annotations

from dataclasses import dataclass
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

from readbench.sessions._types import ImportIssues

__all__ = ["_Importer", "_Node", "_tool_result_meta"]

@dataclass
class _Node:
    parent: str | None
    kind: str  # "user" | "assistant" | "progress" | "other"
    ts: float | None
    msg: dict[str, Any] | None = None
    msg_id: str | None = None
    extra: dict[str, Any] | None = None  # toolUseResult summary
    seq: int = 0  # position in the file


def _is_results(msg: dict[str, Any] | None) -> bool:
    """True when a user message holds tool results only."""
    content = msg.get("content") if msg else None
    return (isinstance(content, list) and bool(content)
            and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


def _tool_result_meta(result: Any) -> dict[str, Any] | None:
    if not isinstance(result, dict):
        return None
    out = {k: v for k, v in result.items() if k in ("type", "agentId", "status", "interrupted", "numFiles")}
    f = result.get("file")
    if isinstance(f, dict):
        out["file"] = {k: f[k] for k in ("filePath", "numLines", "startLine", "totalLines") if k in f}
    return out


def _text_of(content: Any) -> tuple[str, list[Any]]:
    """A tool_result's content as (text, inspect content list)."""
    if isinstance(content, str):
        return content, [ContentText(text=content)]
    parts: list[Any] = []
    texts: list[str] = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "text":
            texts.append(str(b.get("text", "")))
            parts.append(ContentText(text=str(b.get("text", ""))))
        elif isinstance(b, dict) and b.get("type") == "image":
            src = b.get("source") or {}
            parts.append(ContentImage(image=f"data:{src.get('media_type', 'image/png')};base64,{src.get('data', '')}"))
    return "".join(texts), parts


class _Importer:
    def __init__(self, path: Path, issues: ImportIssues) -> None:
        self.path = path
        self.issues = issues
        self.nodes: dict[str, _Node] = {}
        self.tool_names: dict[str, str] = {}
        self.by_msg: dict[str, list[str]] = {}  # message.id -> its lines' uuids
        self.results_of: dict[str, list[str]] = {}  # assistant line uuid -> uuids of tool-result lines under it
        self.last_line: str | None = None  # the last non-progress line added

    def add(self, uuid: str, node: _Node) -> None:
        """Register one line (module docstring: a child of a hook `progress` line is re-attached
        to the last non-progress line written before it; a response's lines and the tool results
        under them are indexed for `chain`)."""
        if node.kind != "progress":
            parent = self.nodes.get(node.parent) if node.parent else None
            if parent is not None and parent.kind == "progress" and self.last_line is not None:
                above, hops = parent, 0
                while above is not None and above.kind == "progress" and hops < 10_000:
                    above, hops = (self.nodes.get(above.parent) if above.parent else None), hops + 1
                if above is not self.nodes.get(self.last_line):  # the progress chain skips lines: re-attach
                    node.parent = self.last_line
            self.last_line = uuid
        node.seq = len(self.nodes)
        self.nodes[uuid] = node
        if node.kind == "assistant" and node.msg_id:
            self.by_msg.setdefault(node.msg_id, []).append(uuid)
        elif node.kind == "user" and node.parent and _is_results(node.msg):
            self.results_of.setdefault(node.parent, []).append(uuid)

    # -- messages from chain nodes -------------------------------------------------------------
    def _user(self, node: _Node, where: str) -> list[ChatMessage]:
        content = node.msg.get("content") if node.msg else None
        if isinstance(content, str):
            return [ChatMessageUser(content=content)]
        out: list[ChatMessage] = []
        text: list[Any] = []
        for b in content if isinstance(content, list) else []:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "tool_result":
                body, parts = _text_of(b.get("content"))
                call_id = str(b.get("tool_use_id", ""))
                err = ToolCallError(type="unknown", message=body) if b.get("is_error") else None
                meta = {"claude_code": {"toolUseResult": node.extra}} if node.extra else None
                out.append(ChatMessageTool(content=parts or body, tool_call_id=call_id,
                                           function=self.tool_names.get(call_id), error=err, metadata=meta))
            elif kind == "text":
                text.append(ContentText(text=str(b.get("text", ""))))
            elif kind == "image":
                src = b.get("source") or {}
                text.append(ContentImage(image=f"data:{src.get('media_type', 'image/png')};base64,{src.get('data', '')}"))
            else:
                self.issues.warn(where, f"unsupported user content block {kind!r}")
        if text:
            out.append(ChatMessageUser(content=text))
        return out

    def _assistant(self, lines: list[dict[str, Any]], where: str) -> ChatMessageAssistant:
        parts: list[Any] = []
        calls: list[ToolCall] = []
        for msg in lines:
            for b in msg.get("content") or []:
                kind = b.get("type") if isinstance(b, dict) else None
                if kind == "text":
                    parts.append(ContentText(text=str(b.get("text", ""))))
                elif kind in ("thinking", "redacted_thinking"):
                    parts.append(ContentReasoning(reasoning=str(b.get("thinking", "")), signature=b.get("signature"),
                                                  redacted=kind == "redacted_thinking"))
                elif kind in ("tool_use", "server_tool_use"):
                    cid = str(b.get("id", ""))
                    args = b.get("input")
                    calls.append(ToolCall(id=cid, function=str(b.get("name", "")), arguments=args if isinstance(args, dict) else {}))
                else:
                    self.issues.warn(where, f"unsupported assistant content block {kind!r}")
        return ChatMessageAssistant(content=parts, tool_calls=calls or None, model=lines[-1].get("model") if lines else None,
                                    source="generate")

    def chain(self, start: str | None, stop: str | None) -> tuple[list[ChatMessage], bool]:
        """Messages from the root (or from just after `stop`) down to `start`; True when `stop`
        was reached (the messages then extend what ended at `stop`)."""
        path: list[str] = []
        cur = start
        reached = False
        seen: set[str] = set()
        while cur is not None:
            if cur == stop:
                reached = True
                break
            if cur in seen:
                self.issues.warn(str(self.path), f"parentUuid cycle at {cur}")
                break
            seen.add(cur)
            node = self.nodes.get(cur)
            if node is None:
                break  # a parent outside this file (e.g. a resumed session): the chain starts here
            path.append(cur)
            cur = node.parent
        # Parallel tool calls make a tree: each result hangs under its own tool_use line and the
        # next response under the last result written, so the path misses the response's other
        # lines and their results; the model received all of them.
        keep = set(path)
        for u in path:
            node = self.nodes[u]
            if node.kind == "assistant" and node.msg_id:
                keep.update(self.by_msg.get(node.msg_id, ()))
        for u in [u for u in keep if self.nodes[u].kind == "assistant"]:
            keep.update(self.results_of.get(u, ()))
        nodes = sorted((self.nodes[u] for u in keep), key=lambda n: n.seq)
        # One response's blocks may be interleaved with the results of its own tool calls (results
        # are written as each tool finishes): the API saw one assistant message, then the results.
        out: list[ChatMessage] = []
        group: list[dict[str, Any]] = []
        pending: list[ChatMessage] = []
        group_id: str | None = None

        def flush() -> None:
            if group:
                out.append(self._assistant(group, str(self.path)))
            out.extend(pending)
            group.clear()
            pending.clear()

        for node in nodes:
            if node.kind == "assistant":
                if group and node.msg_id != group_id:
                    flush()
                group_id = node.msg_id
                group.append(node.msg or {})
            elif node.kind == "user":
                msgs = self._user(node, str(self.path))
                if group and msgs and all(isinstance(m, ChatMessageTool) for m in msgs):
                    pending.extend(msgs)
                else:
                    flush()
                    group_id = None
                    out.extend(msgs)
        flush()
        return out, reached
