"""pi-dcp protection policy: turn/step windows, protected tools and files, frontier pins.

docs/specs/dcp.md §4 (`protection.ts`, `frontier.ts`). Subjects are keyed
`toolResult:<id>` / `toolCall:<id>`; positions are `PiView` positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessageTool

from readbench.base.js import posix_normalize
from readbench.dcp._ages import AgeModel
from readbench.dcp._glob import glob_to_regex
from readbench.dcp._params import PiDcpParams
from readbench.dcp._view import PiView, blocks, calls_of, is_error, tool_name

__all__ = ["Protection", "ProtectionPolicy", "VERIFICATION_PATTERNS", "is_verification_command"]

# dcp.md §4 pin 3, applied to `args.command` trimmed and lower-cased. `\Z` = JS `$` without /m.
VERIFICATION_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"(^|\s)(bun|npm|pnpm|yarn)\s+(run\s+)?test(\s|\Z)",
        r"(^|\s)vitest(\s|\Z)",
        r"(^|\s)jest(\s|\Z)",
        r"(^|\s)pytest(\s|\Z)",
        r"(^|\s)go\s+test(\s|\Z)",
        r"(^|\s)cargo\s+(test|check|clippy)(\s|\Z)",
        r"(^|\s)tsc(\s|\Z).*--noemit",
        r"(^|\s)eslint(\s|\Z)",
        r"(^|\s)ruff\s+check(\s|\Z)",
    )
)

PIN_MODIFIED = "latest read of modified file"
PIN_PLAN = "current plan/progress-style artifact"
PIN_FAIL = "latest failing verification output"
PIN_PASS = "latest successful verification output"


def is_verification_command(command: Any) -> bool:
    """True when a bash command is a test/lint/typecheck run (dcp.md §4 pin 3)."""
    if not isinstance(command, str):
        return False
    norm = command.strip().lower()
    return bool(norm) and any(p.search(norm) for p in VERIFICATION_PATTERNS)


def verification_outcome(content: Any, error: bool) -> str:
    """`fail` if isError or the first text line (trimmed, lower-cased) starts with `fail`;
    otherwise `pass` (first line starts with `pass`, or isError is false) (dcp.md §4).

    pi-dcp's third outcome, "unclassified", needs `isError` to be neither true nor false; an
    inspect tool message always has a definite error state, so it cannot occur here.
    """
    text = ""
    for kind, t in blocks(content):
        if kind == "text":
            text += t
            if "\n" in text:
                break
    first = text.split("\n")[0].strip().lower()
    if error or first.startswith("fail"):
        return "fail"
    return "pass"


@dataclass(frozen=True)
class _PathInfo:
    raw: str
    primary: str | None
    candidates: tuple[str, ...]


def _strip_trailing(value: str) -> str:
    return value[:-1] if len(value) > 1 and value.endswith("/") else value


def _path_info(args: Any, cwd: str | None) -> _PathInfo | None:
    """`normalizeToolPath(args.path ?? args.file, cwd)`."""
    if not isinstance(args, dict):
        return None
    raw = args.get("path") if isinstance(args.get("path"), str) else args.get("file")
    if not isinstance(raw, str) or not raw.strip():
        return None
    raw = raw.strip().replace("\\", "/")
    cands: list[str] = []

    def add(v: str) -> None:
        v = _strip_trailing(v)
        if v and v != "." and v not in cands:
            cands.append(v)

    norm = posix_normalize(raw)
    add(norm)
    add(norm[2:] if norm.startswith("./") else norm)
    if _absolute(norm):
        add(norm)
    elif cwd is not None:
        add(posix_normalize(cwd.replace("\\", "/") + "/" + norm))
    primary = next((c for c in cands if _absolute(c)), cands[0] if cands else None)
    return _PathInfo(raw, primary, tuple(sorted(cands)))


_DRIVE = re.compile(r"^[a-z]:/", re.I)


def _absolute(v: str) -> bool:
    return v.startswith("/") or bool(_DRIVE.match(v))


def _plan_like(info: _PathInfo) -> bool:
    for c in info.candidates:
        low = c.lower()
        base = low.split("/")[-1]
        if base in ("progress.md", "plan.md") or base.endswith(".plan.md") or "/progress/" in low or "/plans/" in low:
            return True
    return False


@dataclass(frozen=True)
class Protection:
    """Why a message (or one tool call of it) is protected; `protected` is the OR of all."""

    protected: bool
    via_turn_window: bool
    via_step_window: bool
    via_tool: bool
    via_file: bool
    via_pin: bool
    turn_age: int
    step_age: int

    @property
    def static_or_pin(self) -> bool:
        """Tool, file or frontier protection (counted as `protected`, not `recent`)."""
        return self.via_tool or self.via_file or self.via_pin


class ProtectionPolicy:
    """`createProtectionPolicy` for one call over `view` (dcp.md §4)."""

    def __init__(self, view: PiView, params: PiDcpParams, ages: AgeModel, args_of: dict[str, Any]) -> None:
        self.params = params
        self.ages = ages
        p = params
        self.step_active = p.step_protection and p.steps > 0
        self.turn_active = p.turn_protection and p.turns > 0
        current_steps = sum(1 for s in ages.steps if ages.turn_ages[s.start] == 0)
        self.current_turn_steps = current_steps
        self.step_engaged = self.step_active and (not self.turn_active or current_steps > p.turns)
        self.globs = [glob_to_regex(g.strip().replace("\\", "/")) for g in p.protected_file_patterns if g.strip()]
        self.subjects: dict[str, tuple[bool, bool, bool]] = {}  # key -> (tool, file, pin)
        self.pins: dict[str, list[str]] = {}
        self._index(view, args_of)

    def _file_protected(self, info: _PathInfo | None) -> bool:
        return info is not None and any(g.fullmatch(c) for g in self.globs for c in info.candidates)

    def _index(self, view: PiView, args_of: dict[str, Any]) -> None:
        p = self.params
        meta: dict[str, _PathInfo | None] = {}
        last_mod: dict[str, int] = {}
        read_of_modified: dict[str, str] = {}
        plan_reads: dict[str, str] = {}
        failing: str | None = None
        passing: str | None = None
        for pos in range(len(view)):
            m = view.original(pos)
            role = view.role(pos)
            if role == "assistant":
                for c in calls_of(m):
                    info = _path_info(c.arguments, p.cwd)
                    meta[c.id] = info
                    tool = c.function in p.protected_tools
                    file = self._file_protected(info)
                    if tool or file:
                        self.subjects[f"toolCall:{c.id}"] = (tool, file, False)
                    if c.function in ("write", "edit") and info and info.primary:
                        last_mod[info.primary] = pos
                continue
            if not isinstance(m, ChatMessageTool) or m.tool_call_id is None:  # role != "toolResult"
                continue
            cid = m.tool_call_id
            args = args_of.get(cid)
            info = meta[cid] if cid in meta else _path_info(args, p.cwd)
            name = tool_name(m, view.call_names)
            if name == "read" and info and info.primary in last_mod and last_mod[info.primary] < pos:
                read_of_modified[info.primary] = cid
            if name == "read" and info and info.primary and _plan_like(info):
                plan_reads[info.primary] = cid
            if name == "bash" and isinstance(args, dict) and is_verification_command(args.get("command")):
                outcome = verification_outcome(m.content, is_error(m))
                if outcome == "fail":
                    failing = cid
                elif outcome == "pass":
                    passing = cid
        if p.frontier_pins:
            for cid in read_of_modified.values():
                self.pins.setdefault(cid, []).append(PIN_MODIFIED)
            for cid in plan_reads.values():
                self.pins.setdefault(cid, []).append(PIN_PLAN)
            if failing is not None:
                self.pins.setdefault(failing, []).append(PIN_FAIL)
            if passing is not None:
                self.pins.setdefault(passing, []).append(PIN_PASS)
        for pos in range(len(view)):
            m = view.original(pos)
            if not isinstance(m, ChatMessageTool) or m.tool_call_id is None:  # role != "toolResult"
                continue
            cid = m.tool_call_id
            info = meta[cid] if cid in meta else _path_info(args_of.get(cid), p.cwd)
            tool = tool_name(m, view.call_names) in p.protected_tools
            file = self._file_protected(info)
            pin = cid in self.pins
            if tool or file or pin:
                self.subjects[f"toolResult:{cid}"] = (tool, file, pin)

    def get(self, view: PiView, pos: int, call_id: str | None = None) -> Protection:
        """Protection of the message at `pos`; with `call_id`, of that tool call of an assistant."""
        p = self.params
        turn_age = self.ages.turn_ages[pos]
        step_age = self.ages.step_ages[pos]
        current_exec = turn_age == 0 and step_age >= 0
        uses_steps = self.step_engaged and current_exec
        via_turn = self.turn_active and 0 <= turn_age < p.turns and not uses_steps
        via_step = self.step_active and current_exec and 0 <= step_age < p.steps and uses_steps
        m = view.original(pos)
        key: str | None = None
        if isinstance(m, ChatMessageTool):  # role "toolResult"
            key = f"toolResult:{call_id or m.tool_call_id}"
        elif call_id is not None:
            key = f"toolCall:{call_id}"
        elif view.role(pos) == "assistant":
            calls = calls_of(m)
            key = f"toolCall:{calls[0].id}" if len(calls) == 1 else None
        tool, file, pin = self.subjects.get(key or "", (False, False, False))
        return Protection(via_turn or via_step or tool or file or pin, via_turn, via_step, tool, file, pin, turn_age, step_age)
