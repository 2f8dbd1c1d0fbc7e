"""pi session JSONL, legacy (no `version`, pi <= ~0.30) and versions 2-3 (sessions.md §1,
pi-tools.md §6).

The file is read twice, one line at a time: the first pass keeps only each entry's id and
parent (to find the active branch: from the last entry back to the root, as pi's
`buildSessionPath` does); the second converts the branch's entries in order while keeping
"what pi would send next" (`SessionBuilder`):
- a legacy file is one linear path: entry ids are line indices (header = 0), as pi's own
  v1 -> v2 migration numbers them, and `firstKeptEntryIndex` is such an index;
- every assistant message is one model call (request = the messages before it; start time =
  `message.timestamp`, end = the entry's `timestamp`; usage and pi's cost per call);
- an assistant message that was aborted or errored is not sent again, nor are its tool results
  (sessions.md §1: the billed prompt growth confirms it), in files of pi <= 0.25 (their header
  names `provider`, `modelId`, `thinkingLevel`). pi 0.26-0.30 (header `type, id, timestamp, cwd`)
  sends such a reply when any block of it is non-empty, as pi 0.30.2's Anthropic provider does
  (`convertMessages` skips only assistant messages with no non-empty block), with a
  `No result provided` error result for each of its tool calls that has none
  (`transformMessages`): the bill of a real 0.2x session grows by the aborted reply's size, those
  of older sessions do not;
- `bashExecution` becomes user text; `compaction` rebuilds the prompt from the summary and the
  kept entries (`buildContextEntries`); `branch_summary` and `custom_message` are user text,
  except readbench's own `FORK_MARKER` (readbench.agents.pi_fork: a forked pi run's start, which
  its extension removes from every request);
- pi >= 1.0 (`[103]`) records the system prompt as `role: system` messages carrying `sections`
  and tool definitions (`toolsAdded`/`toolsRemoved`): they become the request's system message
  and tools; `context_edit` replaces (or, with `replacement: null`, drops) an earlier message;
  `usage` entries of kind `cache_warm` are calls that send the current prompt.
A legacy branch file (header `branchedFrom`: its parent's file) starts with its parent's entries as
they are (their times predate the branch's header): it is imported with its parent's file when both
are given (`_group_key`), and a call both files hold (the same start time, tool call ids and usage:
`legacy_billing_id`) keeps its place in the branch's requests but is billed in the parent's only.
Thinking-level changes are events and set the call's `params` to `thinking=on|off`: a switch
between off and on changed the cached prefix in the recorded bills, a budget-only change did not
(sessions.md §5, cause 1).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem
from inspect_ai.tool import ToolInfo, ToolParams

from readbench.sessions._build import SessionBuilder, iso_seconds, iter_jsonl
from readbench.sessions._types import BilledUsage, ImportIssues, Session, SessionFormat
from readbench.sessions.pi_messages import PiMessageError, from_pi_message, summary_message

__all__ = ["FORK_MARKER", "load", "sniff"]

FORK_MARKER = "readbench-continue"
"""`customType` of the message readbench's fork extension appends to restart pi's loop from a session
ending in tool results (readbench.agents.pi_fork); the model never receives it, so it is not imported."""

_CONTEXT_FREE = ("custom", "label", "session_info")  # entries that never reach the model
_DROPPED_STOPS = ("aborted", "error")


def sniff(objects: list[dict[str, Any]]) -> bool:
    """True when the first object is a pi session header (`type: "session"`)."""
    return bool(objects) and objects[0].get("type") == "session" and "id" in objects[0]


def _usage(raw: Any, issues: ImportIssues | None = None, where: str = "") -> BilledUsage | None:
    if not isinstance(raw, dict):
        return None
    try:
        write = int(raw.get("cacheWrite") or 0)
        w1h = raw.get("cacheWrite1h")
        return BilledUsage(
            uncached_input_tokens=int(raw.get("input") or 0),
            cache_read_tokens=int(raw.get("cacheRead") or 0),
            cache_write_tokens=write,
            output_tokens=int(raw.get("output") or 0),
            cache_write_1h_tokens=int(w1h) if w1h is not None else None,
            cache_write_5m_tokens=write - int(w1h) if w1h is not None else None,
            reasoning_tokens=int(raw["reasoning"]) if raw.get("reasoning") is not None else None,
        )
    except (TypeError, ValueError, OverflowError) as exc:
        if issues is not None:
            issues.bad_usage(where, exc)
        return None


def _cost(raw: Any) -> float | None:
    cost = raw.get("cost") if isinstance(raw, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    return float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else None


def _cost_detail(raw: Any) -> dict[str, float] | None:
    cost = raw.get("cost") if isinstance(raw, dict) else None
    if not isinstance(cost, dict):
        return None
    return {k: float(v) for k, v in cost.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _tool_info(raw: dict[str, Any]) -> ToolInfo | None:
    try:
        return ToolInfo(name=raw["name"], description=raw.get("description", ""),
                        parameters=ToolParams.model_validate(raw.get("parameters") or {}))
    except Exception:  # noqa: BLE001 - a tool schema readbench cannot model is counted, not fatal
        return None


class _Walk:
    """The second pass: converts the active branch's entries in order."""

    def __init__(self, session: Session, header: dict[str, Any]) -> None:
        self.b = SessionBuilder(session)
        self.issues = session.issues
        self.model = str(header.get("modelId") or "")
        self.provider = header.get("provider")
        self.thinking = str(header.get("thinkingLevel") or "off")
        self.dropped_calls: set[str] = set()  # toolCall ids of aborted/errored replies
        # pi 0.26-0.30 (legacy files whose header no longer names the model) sends a non-empty
        # aborted or errored reply, and pi's provider answers its unanswered tool calls
        self.sends_aborted = "version" not in header and not ({"provider", "modelId", "thinkingLevel"} & set(header))
        self.legacy = "version" not in header  # calls get `legacy_billing_id`s
        self.unanswered: dict[str, str] = {}  # toolCall id -> tool name, of a kept aborted reply
        self.kept: list[tuple[str, ChatMessage]] = []  # (entry id, message) sent so far, in order
        self.by_entry: dict[str, ChatMessage] = {}
        self.sections: dict[str, str] = {}
        self.tools: dict[str, ToolInfo] = {}
        self.tools_tuple: tuple[ToolInfo, ...] | None = None
        self.system: ChatMessageSystem | None = None

    # -- helpers -----------------------------------------------------------------------------
    def _append(self, eid: str, msg: ChatMessage) -> None:
        self.kept.append((eid, msg))
        self.by_entry[eid] = msg
        self.b.append(msg)

    def _rebuild(self, messages: list[ChatMessage]) -> None:
        head = [self.system] if self.system is not None else []
        self.b.reset(head + messages)

    def _system_message(self, msg: dict[str, Any]) -> None:
        for k, v in (msg.get("sections") or {}).items():
            if v is None:
                self.sections.pop(k, None)
            else:
                self.sections[k] = str(v)
        for raw in msg.get("toolsAdded") or []:
            info = _tool_info(raw) if isinstance(raw, dict) else None
            if info is not None:
                self.tools[info.name] = info
        for name in msg.get("toolsRemoved") or []:
            self.tools.pop(name if isinstance(name, str) else str(name), None)
        self.tools_tuple = tuple(self.tools.values())
        text = "\n\n".join(self.sections.values()) or str(msg.get("content") or "")
        self.system = ChatMessageSystem(content=text, metadata={"pi": {"sections": list(self.sections)}})
        self._rebuild([m for _, m in self.kept])

    def _thinking_params(self) -> str:
        return "thinking=off" if self.thinking in ("off", "") else "thinking=on"

    # -- entries -----------------------------------------------------------------------------
    def entry(self, e: dict[str, Any], where: str) -> None:
        kind = e.get("type")
        eid = str(e.get("id"))
        ts = iso_seconds(e.get("timestamp"))
        if kind == "message":
            self.message(e, eid, ts, where)
        elif kind == "compaction":
            self.compaction(e, ts)
        elif kind == "model_change":
            before = self.model
            self.model, self.provider = str(e.get("modelId") or ""), e.get("provider")
            self.b.event("model_change", ts, **{"from": before, "to": self.model, "provider": self.provider})
        elif kind == "thinking_level_change":
            before, self.thinking = self.thinking, str(e.get("thinkingLevel") or "off")
            self.b.event("thinking_change", ts, **{"from": before, "to": self.thinking})
        elif kind == "branch_summary":
            if e.get("summary"):
                self._append(eid, summary_message(str(e["summary"]), branch=True))
        elif kind == "custom_message":
            if e.get("customType") == FORK_MARKER:
                return
            try:
                msg = from_pi_message({"role": "custom", "content": e.get("content") or []}, e, where)
            except PiMessageError as exc:
                self.issues.warn(where, str(exc).removeprefix(f"{where}: "))
                return
            if msg is not None:
                self._append(eid, msg)
        elif kind == "context_edit":
            self.context_edit(e, where)
        elif kind == "usage":
            if e.get("kind") == "cache_warm":
                u = e.get("usage")
                self.b.call(model=str(e.get("model") or self.model), provider=e.get("provider") or self.provider,
                            ts_start_seconds=ts, usage=_usage(u, self.issues, where), cost_usd=_cost(u), params=self._thinking_params(),
                            tools=self.tools_tuple, kind="cache_warm")
            else:
                self.issues.skipped[f"usage:{e.get('kind')}"] += 1
        elif kind in _CONTEXT_FREE:
            self.issues.skipped[str(kind)] += 1
        else:
            self.issues.unknown_types[str(kind)] += 1

    def _answer_unanswered(self) -> None:
        """pi's `transformMessages`: tool calls of a kept aborted reply with no result get one."""
        from inspect_ai.model import ChatMessageTool
        from inspect_ai.tool import ToolCallError

        for cid, name in self.unanswered.items():
            self._append(f"no-result:{cid}", ChatMessageTool(content="No result provided", tool_call_id=cid, function=name,
                                                           error=ToolCallError(type="unknown", message="No result provided")))
        self.unanswered = {}

    def message(self, e: dict[str, Any], eid: str, ts: float | None, where: str) -> None:
        raw = e.get("message")
        if self.unanswered and not (isinstance(raw, dict) and raw.get("role") == "toolResult"):
            self._answer_unanswered()
        if isinstance(raw, dict) and raw.get("role") == "system":
            self._system_message(raw)
            return
        if isinstance(raw, dict) and raw.get("role") == "toolResult" and raw.get("toolCallId") in self.dropped_calls:
            self.issues.skipped["toolResult:of_dropped_reply"] += 1
            return
        if isinstance(raw, dict) and raw.get("role") == "toolResult":
            self.unanswered.pop(str(raw.get("toolCallId")), None)
        try:
            msg = from_pi_message(raw, e, where)
        except PiMessageError as exc:
            self.issues.warn(where, str(exc).removeprefix(f"{where}: "))
            return
        if msg is None:
            self.issues.skipped["bashExecution:excluded"] += 1
            return
        if not isinstance(msg, ChatMessageAssistant):
            self._append(eid, msg)
            return
        assert isinstance(raw, dict)  # from_pi_message made an assistant message of it
        model = str(raw.get("model") or self.model)
        if model != self.model and self.b.session.calls:
            self.b.event("model_change", ts, **{"from": self.model, "to": model, "provider": raw.get("provider")})
        self.model, self.provider = model, raw.get("provider") or self.provider
        stop = raw.get("stopReason")
        self.b.call(
            model=model, provider=self.provider, ts_start_seconds=iso_seconds(raw.get("timestamp")),
            ts_end_seconds=ts, usage=_usage(raw.get("usage"), self.issues, where), cost_usd=_cost(raw.get("usage")),
            cost_detail=_cost_detail(raw.get("usage")), output=msg,
            params=self._thinking_params(), stop_reason=stop, tools=self.tools_tuple,
            billing_id=legacy_billing_id(raw) if self.legacy else None,
        )
        if stop in _DROPPED_STOPS and not (self.sends_aborted and _sent_by_pi(raw)):
            self.dropped_calls.update(c.id for c in msg.tool_calls or [])
            self.issues.skipped[f"assistant:{stop}"] += 1
        else:
            self._append(eid, msg)
            if stop in _DROPPED_STOPS:
                self.issues.skipped[f"assistant:{stop}:sent"] += 1
                self.unanswered = {c.id: c.function for c in msg.tool_calls or []}

    def compaction(self, e: dict[str, Any], ts: float | None) -> None:
        first = e.get("firstKeptEntryId")
        if first is None and isinstance(e.get("firstKeptEntryIndex"), int):
            first = str(e["firstKeptEntryIndex"])
        ids = [i for i, _ in self.kept]
        start = ids.index(first) if first in ids else len(ids)
        summary = summary_message(str(e.get("summary") or ""), as_blocks="firstKeptEntryIndex" not in e)
        self.kept = [("compaction", summary)] + self.kept[start:]
        self.b.event("compaction", ts, tokens_before=e.get("tokensBefore"), kept_messages=len(self.kept) - 1)
        self._rebuild([m for _, m in self.kept])

    def context_edit(self, e: dict[str, Any], where: str) -> None:
        target = e.get("targetId")
        pos = next((i for i, (eid, _) in enumerate(self.kept) if eid == target), None)
        if pos is None:
            self.issues.warn(where, f"context_edit targets {target!r}, which is not in the context")
            return
        repl = e.get("replacement")
        if repl is None:
            del self.kept[pos]
        else:
            try:
                msg = from_pi_message(repl, e, where)
            except PiMessageError as exc:
                self.issues.warn(where, str(exc).removeprefix(f"{where}: "))
                return
            if msg is None:
                del self.kept[pos]
            else:
                self.kept[pos] = (str(target), msg)
        self._rebuild([m for _, m in self.kept])


def _sent_by_pi(raw: dict[str, Any]) -> bool:
    """True when pi's Anthropic provider sends this assistant message: some block of it is
    non-empty (text or thinking with non-blank text, or a tool call)."""
    for b in raw.get("content") or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "toolCall" or (kind == "text" and str(b.get("text") or "").strip()) \
                or (kind == "thinking" and str(b.get("thinking") or "").strip()):
            return True
    return False


def _first_pass(path: Path) -> tuple[dict[str, Any], int, list[tuple[int, str, str | None]]]:
    """Header, session version, and (entry ordinal, id, parentId) of every entry (ordinal: the
    entry's position among the file's JSON objects, header = 0, which is pi's v1 index and stays
    right when a line holds two entries; ids: that ordinal for v1)."""
    header: dict[str, Any] | None = None
    version = 1
    index: list[tuple[int, str, str | None]] = []
    throwaway = ImportIssues()  # warnings are recorded once, by the second pass
    position = 0  # pi's v1 index: every parsed line counts, the header is 0
    for k, (n, obj) in enumerate(iter_jsonl(path, throwaway)):
        if header is None:
            if obj.get("type") != "session":
                raise ValueError(f"{path}:{n}: the first entry of a pi session must be the 'session' header")
            header = obj
            v = obj.get("version")
            version = v if isinstance(v, int) and not isinstance(v, bool) else 1
            if version not in (1, 2, 3):
                raise ValueError(f"{path}:{n}: pi session version {v!r} is not supported (1, 2 or 3)")
            position = 1
            continue
        if version == 1:
            index.append((k, str(position), str(position - 1) if position > 1 else None))
        elif isinstance(obj.get("id"), str):
            parent = obj.get("parentId")
            index.append((k, obj["id"], parent if isinstance(parent, str) else None))
        position += 1
    if header is None:
        raise ValueError(f"{path}: empty file, no pi session header")
    return header, version, index


def _active_lines(path: Path, index: list[tuple[int, str, str | None]], issues: ImportIssues) -> set[int]:
    """Ordinals of the entries on the active branch (from the last entry back to the root)."""
    if not index:
        return set()
    parent_of = {eid: parent for _, eid, parent in index}
    line_of = {eid: n for n, eid, _ in index}
    lines: set[int] = set()
    cur: str | None = index[-1][1]
    while cur is not None and line_of.get(cur) not in lines:
        if cur not in line_of:
            issues.warn(f"{path}", f"an entry's parentId {cur!r} names no entry: the branch stops there")
            break
        lines.add(line_of[cur])
        cur = parent_of.get(cur)
    return lines


def load(path: Path) -> list[Session]:
    """Import one pi session file (module docstring). Returns one Session.

    Raises:
        ValueError: no session header, or an unsupported version (naming `path:line`).
        OSError: the file cannot be read.
    """
    issues = ImportIssues()
    header, version, index = _first_pass(path)
    on_path = _active_lines(path, index, issues)
    ids = {n: eid for n, eid, _ in index}
    session = Session(
        source=str(path), format="pi", harness="pi",
        harness_version=f"session v{version}" if version != 1 else "legacy (no session version)",
        session_id=str(header.get("id")), cwd=header.get("cwd"), issues=issues,
    )
    if header.get("branchedFrom") or header.get("parentSession"):
        session.parent_session_id = str(header.get("branchedFrom") or header.get("parentSession"))
    walk = _Walk(session, header)
    seen_header = False
    off_path_since_last = False
    for k, (n, obj) in enumerate(iter_jsonl(path, issues)):
        if not seen_header:
            seen_header = True
            continue
        if k not in on_path:
            if k in ids:
                off_path_since_last = True
                if obj.get("type") == "message" and (obj.get("message") or {}).get("role") == "assistant":
                    issues.skipped["assistant:off_branch"] += 1
                else:
                    issues.skipped["off_branch"] += 1
            else:
                issues.warn(f"{path}:{n}", "entry has no string 'id'")
            continue
        if off_path_since_last and session.calls:
            walk.b.event("branch", iso_seconds(obj.get("timestamp")), entry=ids[k])
        off_path_since_last = False
        if version == 2 and obj.get("type") == "message" and (obj.get("message") or {}).get("role") == "hookMessage":
            obj = {**obj, "message": {**obj["message"], "role": "custom"}}
        walk.entry({**obj, "id": ids[k]} if version == 1 else obj, f"{path}:{n}")
    return [session]


def _sniff(head: bytes, objects: list[dict[str, Any]]) -> bool:
    return sniff(objects)


def legacy_billing_id(raw: dict[str, Any]) -> str:
    """The `Call.billing_id` of a legacy pi assistant message (pi records no response id): its
    request start (`timestamp`, ms), its tool call ids and its `usage`, hashed. A legacy branch
    file copies its parent's entries as they are (sessions.md §1, `branchedFrom`; the copied
    entries keep their times, earlier than the branch's header), so a call of the branch with
    the parent call's id is that call, billed once (`readbench.sessions.billing.bill_once`); two
    requests the provider billed separately differ in start time or tool call ids."""
    content = raw.get("content")
    blocks = content if isinstance(content, list) else []
    calls = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]
    key = json.dumps([raw.get("timestamp"), calls, raw.get("usage")], sort_keys=True, default=str)
    return "pi-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _group_key(objects: list[dict[str, Any]]) -> str | None:
    """A legacy file's root session id: a branch file's `branchedFrom` names its parent's file
    (`<time>_<session id>.jsonl`, sessions.md §1), whose calls it copies; the parent's is its own
    `id`. Imported together, the calls both hold are billed once (`bill_once`). A branch of a
    branch is grouped with no file (its key is its parent's id, the parent's is the root's). None
    for versions 2-3."""
    header = objects[0] if objects and objects[0].get("type") == "session" else None
    if header is None or "version" in header:
        return None
    parent = header.get("branchedFrom")
    if isinstance(parent, str) and parent:
        name = re.split(r"[\\/]", parent)[-1].removesuffix(".jsonl")
        return name.rpartition("_")[2] or None
    return str(header["id"]) if header.get("id") else None


FORMATS = [
    SessionFormat(
        name="pi",
        harness="pi",
        description="pi session JSONL, legacy (no version) and versions 2-3 (~/.pi/agent/sessions)",
        sniff=_sniff,
        load=load,
        group_key=_group_key,
    )
]
