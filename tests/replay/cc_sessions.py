"""A builder of small synthetic Claude Code transcripts (docs/specs/sessions.md §2) for the bill
tests of issue 22: every line's `uuid`, `parentUuid`, `message.id`, `requestId` and usage is chosen
by the test, so sub-agent copies, hook `progress` lines and parallel tool results can be laid out
exactly as the real files lay them out. Nothing here is copied from a real session."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

T0 = dt.datetime(2026, 7, 1, 9, 0, 0, tzinfo=dt.timezone.utc)

_UNSET: Any = object()


def usage(inp: int, read: int, write: int, out: int, *, one_hour: bool = False) -> dict[str, Any]:
    """A Claude Code `message.usage`: uncached input, cache read, cache write (all 5m, or all 1h
    with `one_hour`), output tokens."""
    return {"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
            "cache_creation": {"ephemeral_5m_input_tokens": 0 if one_hour else write,
                               "ephemeral_1h_input_tokens": write if one_hour else 0},
            "output_tokens": out, "service_tier": "standard"}


class CCFile:
    """Lines of one Claude Code JSONL file; each method appends one line and returns its uuid.
    `parent` defaults to the previous line's uuid (`None` makes a root)."""

    def __init__(self, session_id: str, *, version: str = "2.1.80", agent_id: str | None = None,
                 model: str = "claude-opus-4-8", t0: dt.datetime = T0, step_s: float = 5.0) -> None:
        self.session_id, self.version, self.agent_id, self.model = session_id, version, agent_id, model
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None
        self.t, self.step = t0, dt.timedelta(seconds=step_s)
        self._n = 0

    def _line(self, kind: str, parent: Any, **fields: Any) -> str:
        self._n += 1
        uid = f"{self.agent_id or self.session_id}-{self._n:03d}"
        self.t += self.step
        row = {"parentUuid": self.last if parent is _UNSET else parent, "isSidechain": self.agent_id is not None,
               "userType": "external", "cwd": "/p", "sessionId": self.session_id, "version": self.version,
               "type": kind, "uuid": uid, "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z", **fields}
        if self.agent_id is not None:
            row["agentId"] = self.agent_id
        self.lines.append(row)
        self.last = uid
        return uid

    def user(self, text: str, parent: Any = _UNSET) -> str:
        return self._line("user", parent, message={"role": "user", "content": text})

    def result(self, tool_use_id: str, text: str, parent: Any = _UNSET) -> str:
        return self._line("user", parent, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}]})

    def assistant(self, msg_id: str, request_id: str, block: dict[str, Any], use: dict[str, Any],
                  parent: Any = _UNSET, model: str | None = None) -> str:
        """One line of a response (Claude Code writes one line per content block, all with the
        response's `message.id`, `requestId` and usage)."""
        return self._line("assistant", parent, requestId=request_id, message={
            "model": model or self.model, "id": msg_id, "type": "message", "role": "assistant", "content": [block],
            "stop_reason": "tool_use" if block.get("type") == "tool_use" else "end_turn", "usage": use})

    def text(self, msg_id: str, request_id: str, text: str, use: dict[str, Any], **kw: Any) -> str:
        return self.assistant(msg_id, request_id, {"type": "text", "text": text}, use, **kw)

    def tool(self, msg_id: str, request_id: str, call_id: str, name: str, args: dict[str, Any], use: dict[str, Any],
             **kw: Any) -> str:
        return self.assistant(msg_id, request_id, {"type": "tool_use", "id": call_id, "name": name, "input": args},
                              use, **kw)

    def progress(self, hook: str = "PostToolUse:Read", parent: Any = _UNSET, tool_use_id: str | None = None) -> str:
        """A hook `progress` line (Claude Code 2.1.78-2.1.86 write one per hook run)."""
        return self._line("progress", parent, toolUseID=tool_use_id, parentToolUseID=tool_use_id,
                          data={"type": "hook_progress", "hookEvent": hook.split(":")[0], "hookName": hook,
                                "command": "true"})

    def copy_of(self, other: CCFile, uuids: list[str]) -> None:
        """Repeat lines of `other` (by uuid) in this file as a sub-agent file does: same message
        ids and request ids, this file's sidechain flags and agent id, chained in order."""
        by = {r["uuid"]: r for r in other.lines}
        for u in uuids:
            src = by[u]
            fields = {k: v for k, v in src.items() if k in ("message", "requestId")}
            self._line(src["type"], _UNSET, **fields)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.lines), encoding="utf-8")
        return path
