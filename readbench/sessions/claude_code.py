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
the summary (`isCompactSummary`) user line. Two layouts of real files make the plain parent chain
drop messages the model received (sessions.md §7), and are rebuilt: (1) Claude Code 2.1.78-2.1.86
write a turn's hook `progress` lines late, chained from an earlier line (the turn's first
tool_use), and hang the next prompt under the last of them: a line whose parent is a `progress`
line is re-attached to the last non-progress line written before it; (2) parallel tool calls make
a tree (each result under its own tool_use line, the next response under the last result
written): the request takes every line of each response on the chain and every tool result under
them, in file order. Timing: the call starts when its last input line was
written, its first block is the first token, its last block the end (Claude Code records no
request start).

Messages: user text -> ChatMessageUser; each `tool_result` block -> ChatMessageTool (the tool
name from the matching `tool_use`; `toolUseResult` kept in `metadata["claude_code"]`, without the
file content for `Read`, whose `file` keeps `filePath`, `numLines`, `startLine`, `totalLines`);
assistant `text`/`thinking`/`tool_use` -> ChatMessageAssistant. Sub-agents: a file whose lines are
all `isSidechain` is its own session (id = `agentId`) linked to the parent's `sessionId`; sidechain
lines inside a main file (Claude Code 1.x) become one such session too. Each call carries `billing_id` = `message.id:requestId` (`message.id` alone when the line has no
`requestId`): what the provider billed once (sub-agent files repeat the parent's lines with the same
ids, sessions.md §7; a Claude Code 2.0 resume re-writes earlier responses without their `requestId`). A `Task` tool result that
names an `agentId` is a `subagent` event of the parent; a `SessionStart` hook line of a `startup` or
`resume` after the first call is a `resume` event (Claude Code restarted). Responses of model `<synthetic>` (Claude
Code's own error notices) were never sent to a provider and are not calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readbench.sessions._build import SessionBuilder, iso_seconds, iter_jsonl
from readbench.sessions._claude_chain import _Importer, _Node, _tool_result_meta
from readbench.sessions._types import BilledUsage, ImportIssues, Session, SessionFormat

__all__ = ["FORMATS", "load"]

_LINE_TYPES = ("user", "assistant", "system", "progress", "file-history-snapshot", "queue-operation", "summary",
               "attachment", "custom-title", "tag")
_SYNTHETIC = "<synthetic>"


@dataclass
class _Group:
    """The lines of one API response (same message.id), in file order."""

    msg_id: str
    first_uuid: str
    lines: list[dict[str, Any]] = field(default_factory=list)


def _sniff(head: bytes, objects: list[dict[str, Any]]) -> bool:
    return any("sessionId" in o and "uuid" in o and o.get("type") in ("user", "assistant", "system", "progress")
               for o in objects)


def _group_key(objects: list[dict[str, Any]]) -> str | None:
    """The `sessionId` the file's lines belong to: a session's main file and its sub-agent files
    (`<session>/subagents/agent-*.jsonl`, incl. `agent-acompact-*` and `agent-aside_question-*`)
    share it (sessions.md §7)."""
    return next((str(o["sessionId"]) for o in objects if o.get("sessionId")), None)


def _output_tokens(msgs: list[dict[str, Any]]) -> Any:
    """The response's output tokens: the largest `usage.output_tokens` of its lines (a streamed
    response repeats its usage, growing), or the first value that is not a count (a string, a list,
    an infinity), which `_usage` then reports as the call's bad usage (the call is left unpriced,
    the file is still imported)."""
    best = 0
    for m in msgs:
        usage = m.get("usage")
        raw = usage.get("output_tokens") if isinstance(usage, dict) else None
        try:
            best = max(best, int(raw or 0))
        except (TypeError, ValueError, OverflowError):
            return raw
    return best


def _usage(raw: Any, output_tokens: Any, issues: ImportIssues | None = None, where: str = "") -> BilledUsage | None:
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
    except (TypeError, ValueError, OverflowError) as exc:
        if issues is not None:
            issues.bad_usage(where, exc)
        return None


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
        out_tokens = _output_tokens(msgs)
        if self.model_before is not None and model != self.model_before:
            b.event("model_change", first.ts, **{"from": self.model_before, "to": model})
        self.model_before = model
        request_id = next((str(ln["requestId"]) for ln in reversed(group.lines) if ln.get("requestId")), None)
        b.call(model=model, provider="anthropic", ts_start_seconds=parent.ts if parent else first.ts,
               ts_first_token_seconds=first.ts, ts_end_seconds=iso_seconds(group.lines[-1].get("timestamp")),
               usage=_usage(last.get("usage"), out_tokens, self.issues, f"{self.path}: message {last.get('id')}"),
               output=imp._assistant(msgs, str(self.path)),
               stop_reason=last.get("stop_reason"),
               billing_id=(f"{last['id']}:{request_id}" if request_id else str(last["id"])) if last.get("id") else None)

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
            imp.add(uuid, node)
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
            imp.add(uuid, _Node(parent, "user", ts, msg, extra=extra))
            if extra and extra.get("agentId"):
                self.b.event("subagent", ts, session_id=str(extra["agentId"]))
            return
        imp.add(uuid, _Node(parent, "progress" if kind == "progress" else "other", ts))
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
        group_key=_group_key,
    )
]
