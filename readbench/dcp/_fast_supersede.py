"""Incremental pi-dcp `supersedeWrites` for a growing history (used by `_fast_pidcp.PiSeq`).

Same decisions as `readbench.dcp.strategies.supersede_writes.apply` (docs/specs/dcp.md §2.3):
walking newest -> oldest, a `write`/`edit` call whose `path || file` equals the raw `path` of a
`read` result at a later view position, and that is not protected (static tool/file protection
of `toolCall:<id>` or the turn/step window of its assistant message), gets every string field
among `content`, `text`, `oldText`, `newText` replaced by the placeholder. A read set seen "so
far" in that walk is, for the call at position p, the set of read paths of the results after p:
here `last_read` keeps the latest result position of each read path, so a call is superseded
when `last_read[path] > p`. Per model call the work is one look-up per write/edit call.

Valid only when every tool call's arguments are a dict (`ok`); the reference path raises or
skips otherwise, and `PiSeq` falls back to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolCall

from readbench.base.js import utf16_len
from readbench.dcp.strategies.supersede_writes import FIELDS, PLACEHOLDER

__all__ = ["SupersedeColumns", "SupersedeOutcome"]


@dataclasses.dataclass
class SupersedeOutcome:
    """One call's supersedeWrites result.

    Attributes:
        counts: `pruned`, `protected`, `recent`, `other` -> calls counted (as `PiDcpRun` counts them).
        saved: tokens saved (Σ utf16_len(field) // 4 of the replaced fields of pruned calls).
        args: call id -> replaced arguments, for calls whose arguments changed (what a later
            strategy reads through `PiDcpRun.args_of`).
    """

    counts: dict[str, int]
    saved: int
    args: dict[str, dict[str, Any]]


class SupersedeColumns:
    """Write/edit calls and read paths of one growing history (module docstring)."""

    def __init__(self) -> None:
        self.ok = True
        # (assistant view position, call, static protection: tool or file)
        self.writes: list[tuple[int, ToolCall, bool]] = []
        self.last_read: dict[Any, int] = {}
        self._replaced: dict[str, tuple[dict[str, Any], int]] = {}  # call id -> (new args, saved), memo
        self._copies: dict[int, tuple[frozenset[str], ChatMessage]] = {}  # position -> (call ids, copy)

    def add_call(self, pos: int, call: ToolCall, static: bool) -> None:
        """Record tool call `call` of the assistant message at view position `pos`."""
        if not isinstance(call.arguments, dict):
            self.ok = False
            return
        if call.function in ("write", "edit"):
            self.writes.append((pos, call, static))

    def add_result(self, pos: int, name: str, args: Any) -> None:
        """Record the tool result at view position `pos` (tool name `name`, its call's arguments)."""
        if name != "read" or not isinstance(args, dict):
            return
        path = args.get("path")
        if not path:
            return
        try:
            self.last_read[path] = pos
        except TypeError:  # unhashable: the reference's set.add fails and skips it
            pass

    def _replace(self, call: ToolCall) -> tuple[dict[str, Any], int]:
        hit = self._replaced.get(call.id)
        if hit is None:
            args = dict(call.arguments)
            saved = 0
            for field in FIELDS:
                if isinstance(args.get(field), str):
                    saved += utf16_len(args[field]) // 4
                    args[field] = PLACEHOLDER
            hit = self._replaced[call.id] = (args, saved)
        return hit

    def run(self, recent: Callable[[int], bool]) -> SupersedeOutcome:
        """Decide every write/edit call; `recent(pos)`: the turn/step window protects view position `pos`."""
        counts = {"pruned": 0, "protected": 0, "recent": 0, "other": 0}
        saved = 0
        changed: dict[str, dict[str, Any]] = {}
        last_read = self.last_read
        for pos, call, static in self.writes:
            if static:
                counts["protected"] += 1
                continue
            if recent(pos):
                counts["recent"] += 1
                continue
            path = call.arguments.get("path") or call.arguments.get("file")
            try:
                hit = bool(path) and last_read.get(path, -1) > pos
            except TypeError:
                hit = False
            if not hit:
                counts["other"] += 1
                continue
            args, tokens = self._replace(call)
            if args != call.arguments:
                changed[call.id] = args
            if tokens > 0:
                counts["pruned"] += 1
                saved += tokens
            else:
                counts["other"] += 1
        return SupersedeOutcome(counts, saved, changed)

    def copy(self, pos: int, msg: ChatMessage, args: dict[str, dict[str, Any]]) -> ChatMessage:
        """The assistant message `msg` (view position `pos`) with the arguments of its calls in
        `args` replaced, as `PiView.set_call_arguments` builds it (the same copy while the
        replaced calls stay the same)."""
        assert isinstance(msg, ChatMessageAssistant)
        ids = frozenset(c.id for c in msg.tool_calls or () if c.id in args)
        hit = self._copies.get(pos)
        if hit is not None and hit[0] == ids:
            return hit[1]
        calls = [dataclasses.replace(c, arguments=args[c.id]) if c.id in ids else c for c in msg.tool_calls or ()]
        new = msg.model_copy(update={"tool_calls": calls})
        self._copies[pos] = (ids, new)
        return new
