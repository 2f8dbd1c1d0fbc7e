"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`, sessions.md §2).

Lines form a tree through `uuid`/`parentUuid`; progress, system and snapshot lines sit in the
chain too. One API response is split into one line per content block, all with the same
`message.id`: the lines are grouped into one assistant message and one call. The usage on those
lines repeats the input and cache fields, but `output_tokens` is a streaming placeholder on the
early lines (seen on real files: sessions.md §2 says the usage is the same on every line, which is
wrong for `output_tokens`), so the call takes the input fields of the last line and the largest
`output_tokens`.

A call's request is the message chain from the line before its first block back to the root:
a `compact_boundary` system line has no parent, so after a compaction the request restarts from
the summary (`isCompactSummary`) user line. Timing: the call starts when its last input line was
written, its first block is the first token, its last block the end (Claude Code records no
request start).

Messages: user text -> ChatMessageUser; each `tool_result` block -> ChatMessageTool (the tool
name from the matching `tool_use`; `toolUseResult` kept in `metadata["claude_code"]`, without the
file content for `Read`, whose `file` keeps `filePath`, `numLines`, `startLine`, `totalLines`);
assistant `text`/`thinking`/`tool_use` -> ChatMessageAssistant. Sub-agents: a file whose lines are
all `isSidechain` is its own session (id = `agentId`) linked to the parent's `sessionId`; sidechain
lines inside a main file (Claude Code 1.x) become one such session too. A `Task` tool result that
names an `agentId` is a `subagent` event of the parent; a `SessionStart` hook line of a `startup` or
`resume` after the first call is a `resume` event (Claude Code restarted). Responses of model `<synthetic>` (Claude
Code's own error notices) were never sent to a provider and are not calls.
"""

from __future__ import annotations

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

from readbench.sessions._build import SessionBuilder, iso_seconds, iter_jsonl
from readbench.sessions._types import BilledUsage, ImportIssues, Session, SessionFormat

__all__ = ["FORMATS", "load"]

_LINE_TYPES = ("user", "assistant", "system", "progress", "file-history-snapshot", "queue-operation", "summary",
               "attachment", "custom-title", "tag")
_SYNTHETIC = "<synthetic>"


@dataclass
class _Node:
    parent: str | None
    kind: str  # "user" | "assistant" | "other"
    ts: float | None
    msg: dict[str, Any] | None = None
    msg_id: str | None = None
    extra: dict[str, Any] | None = None  # toolUseResult summary


@dataclass
class _Group:
    """The lines of one API response (same message.id), in file order."""

    msg_id: str
    first_uuid: str
    lines: list[dict[str, Any]] = field(default_factory=list)


def _sniff(head: bytes, objects: list[dict[str, Any]]) -> bool:
    return any("sessionId" in o and "uuid" in o and o.get("type") in ("user", "assistant", "system", "progress")
               for o in objects)


def _usage(raw: Any, output_tokens: int) -> BilledUsage | None:
    if not isinstance(raw, dict):
        return None
    try:
        tiers = raw.get("cache_creation") if isinstance(raw.get("cache_creation"), dict) else None
        return BilledUsage(
            uncached_input_tokens=int(raw.get("input_tokens") or 0),
            cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
            cache_write_tokens=int(raw.get("cache_creation_input_tokens") or 0),
            output_tokens=int(output_tokens),
            cache_write_5m_tokens=int(tiers.get("ephemeral_5m_input_tokens") or 0) if tiers else None,
            cache_write_1h_tokens=int(tiers.get("ephemeral_1h_input_tokens") or 0) if tiers else None,
        )
    except (TypeError, ValueError):
        return None


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
        nodes: list[_Node] = []
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
            nodes.append(node)
            cur = node.parent
        nodes.reverse()
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


class _SessionStream:
    """Feeds one session's lines, in file order, into a SessionBuilder."""

    def __init__(self, path: Path, session: Session) -> None:
        self.path = path
        self.session = session
        self.issues = session.issues
        self.imp = _Importer(path, session.issues)
        self.b = SessionBuilder(session)
        self.live_end: str | None = None
        self.open_group: _Group | None = None
        self.model_before: str | None = None

    def _close(self, group: _Group) -> None:
        imp, b = self.imp, self.b
        first = imp.nodes[group.first_uuid]
        msgs = [ln["message"] for ln in group.lines]
        last = msgs[-1]
        model = str(last.get("model") or "")
        if model == _SYNTHETIC:
            self.issues.skipped["assistant:synthetic"] += 1
            return
        new, reached = imp.chain(first.parent, self.live_end)
        if reached:
            for m in new:
                b.append(m)
        else:
            b.reset(new)
        self.live_end = first.parent
        parent = imp.nodes.get(first.parent) if first.parent else None
        out_tokens = max(int(((m.get("usage") or {}).get("output_tokens")) or 0) for m in msgs)
        if self.model_before is not None and model != self.model_before:
            b.event("model_change", first.ts, **{"from": self.model_before, "to": model})
        self.model_before = model
        b.call(model=model, provider="anthropic", ts_start_seconds=parent.ts if parent else first.ts,
               ts_first_token_seconds=first.ts, ts_end_seconds=iso_seconds(group.lines[-1].get("timestamp")),
               usage=_usage(last.get("usage"), out_tokens), output=imp._assistant(msgs, str(self.path)),
               stop_reason=last.get("stop_reason"))

    def feed(self, n: int, obj: dict[str, Any]) -> None:
        """Take one line (its number and object)."""
        kind = obj.get("type")
        uuid = obj.get("uuid")
        issues, imp = self.issues, self.imp
        known = kind in _LINE_TYPES
        if not known:
            issues.unknown_types[str(kind)] += 1
        if not isinstance(uuid, str):
            if known:
                issues.skipped[str(kind)] += 1
            return
        parent = obj.get("parentUuid") if isinstance(obj.get("parentUuid"), str) else None
        ts = iso_seconds(obj.get("timestamp"))
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else None
        if kind == "assistant" and msg is not None:
            node = _Node(parent, "assistant", ts, msg, str(msg.get("id") or uuid))
            imp.nodes[uuid] = node
            for block in msg.get("content") or []:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                    imp.tool_names[str(block.get("id", ""))] = str(block.get("name", ""))
            if self.open_group is not None and self.open_group.msg_id != node.msg_id:
                self._close(self.open_group)
                self.open_group = None
            if self.open_group is None:
                self.open_group = _Group(str(node.msg_id), uuid)
            self.open_group.lines.append(obj)
            return
        if kind == "user" and msg is not None:
            extra = _tool_result_meta(obj.get("toolUseResult"))
            imp.nodes[uuid] = _Node(parent, "user", ts, msg, extra=extra)
            if extra and extra.get("agentId"):
                self.b.event("subagent", ts, session_id=str(extra["agentId"]))
            return
        imp.nodes[uuid] = _Node(parent, "other", ts)
        if kind == "progress":
            self._resume_hook(obj.get("data"), ts)
        if kind in ("user", "assistant"):
            issues.warn(f"{self.path}:{n}", f"{kind} line without a message object")
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            cm = obj.get("compactMetadata") or {}
            self.b.event("compaction", ts, tokens_before=cm.get("preTokens"), trigger=cm.get("trigger"))
        elif kind != "progress" and known:
            issues.skipped[f"{kind}:{obj['subtype']}" if obj.get("subtype") else str(kind)] += 1

    def _resume_hook(self, data: Any, ts: float | None) -> None:
        """A SessionStart hook of a `startup` or `resume` after calls were made: Claude Code
        restarted within this session (its system prompt is rendered afresh): a `resume` event,
        once per restart."""
        if not isinstance(data, dict) or data.get("hookEvent") != "SessionStart":
            return
        name = str(data.get("hookName") or "")
        if not name.endswith((":startup", ":resume")):
            return
        if self.open_group is not None:  # a start never falls inside a response: the last one is complete
            self._close(self.open_group)
            self.open_group = None
        if not self.session.calls:
            return
        last = self.session.events[-1] if self.session.events else None
        if last is not None and last.kind == "resume" and last.call_index == len(self.session.calls):
            return
        self.b.event("resume", ts, hook=name)

    def finish(self) -> Session:
        """Close the last response; returns the session."""
        if self.open_group is not None:
            self._close(self.open_group)
            self.open_group = None
        return self.session


def load(path: Path) -> list[Session]:
    """Import one Claude Code transcript (module docstring): the main session, plus one session
    for inline sidechain lines (Claude Code 1.x) when there are any. Streams the file once.

    Raises:
        ValueError: the file holds no Claude Code line (naming `path`).
        OSError: the file cannot be read.
    """
    issues = ImportIssues()
    streams: dict[bool, _SessionStream] = {}
    main_id: str | None = None
    for n, obj in iter_jsonl(path, issues):
        side = bool(obj.get("isSidechain"))
        if main_id is None and "sessionId" in obj:
            main_id = str(obj["sessionId"])
        stream = streams.get(side)
        if stream is None:
            if "sessionId" not in obj:
                issues.skipped[str(obj.get("type"))] += 1
                continue
            if side:
                sid = str(obj.get("agentId") or f"{obj['sessionId']}:sidechain")
                s = Session(str(path), "claude-code", "claude-code", obj.get("version"), sid,
                            parent_session_id=str(obj["sessionId"]), cwd=obj.get("cwd"),
                            issues=issues if not streams else ImportIssues())
            else:
                s = Session(str(path), "claude-code", "claude-code", obj.get("version"), str(obj["sessionId"]),
                            cwd=obj.get("cwd"), issues=issues if not streams else ImportIssues())
            stream = streams[side] = _SessionStream(path, s)
        stream.feed(n, obj)
    if not streams:
        raise ValueError(f"{path}: no Claude Code transcript line (none has a sessionId)")
    return [streams[k].finish() for k in (False, True) if k in streams]


FORMATS = [
    SessionFormat(
        name="claude-code",
        harness="claude-code",
        description="Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl, sub-agents included)",
        sniff=_sniff,
        load=load,
    )
]
