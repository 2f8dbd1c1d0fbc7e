"""What a recorded session shows about each behaviour knob of the simulated agent (issue 16).

Pure functions over one imported `readbench.sessions.Session` (any harness: pi, Claude Code,
Codex, inspect logs, the sim's own): the session is cut into prompts (a call whose request ends
with a user message starts one), each prompt's tool calls are classified (read, search, edit,
test run, other shell) from their arguments, and per prompt the *target* is the file the agent
works on: the first file it edits, else the file it reads most (test files are never targets:
they are where failures are reported, not the code under change). The observations below are
the knob-by-knob evidence readbench.sim.fit pools and bootstraps; each says what in the sim's
loop (readbench.sim.policy) it measures.

- ``grep_first``: per prompt, 1 if the first read of the target came after a search that
  named it (in its arguments or its result), else 0 (knob ``p_grep_first``).
- ``follow``: per capped read of the target that was not the prompt's last word on the file:
  1 if the next action on the file reads on from the notice's offset, 0 if it searches or reads
  elsewhere; a return to the start (a restart) or an edit/answer is no decision (``p_follow_paging``).
- ``restart``: per prompt that paged through its target, 1 if it later re-read it from line 1.
- ``comply``/``block_repeats``: per block error (B's line cap, Claude Code's token cap), 1 if the
  next read was ranged or a search, 0 if the same blind read was repeated.
- ``verify``: per successful edit, 1 if the next tool call read the edited file.
- ``window``/``chunk``: ``limit`` of ranged reads, split into reads that continue or are
  continued by the next read of the file (chunks) and the rest (windows).
- ``think``: output tokens of calls with a tool call, minus the call's own tokens.
- ``durations``: (call seconds, prompt tokens, output tokens) for the latency regression;
  ``tool_gaps``/``test_gaps``/``user_gaps``: seconds between a call's end and the next start.
- ``calls_per_prompt``, ``before_share`` (calls before the first touch of the target / calls),
  ``explore_tools`` (tools of calls that touch neither the target nor run tests), ``tool_mix``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser

from readbench.cache import count_tokens
from readbench.harness import patch_paths, path_keys, shell_command, tool_role
from readbench.read.registry import blocked
from readbench.sessions import Session
from readbench.sessions.reads import ReadCall, read_calls

__all__ = ["Evidence", "PromptTools", "is_test_path", "prompt_tools", "session_evidence"]

_SHELL_SEARCH = re.compile(r"^\s*(grep|rg|ag|git\s+grep)\b")
_TEST_RUN = re.compile(r"(^|[\s;&|/])(pytest|py\.test|tox|nox|(npm|pnpm|yarn|bun)\s+(run\s+)?test|go\s+test|"
                       r"cargo\s+test|jest|vitest|unittest|runtests\.py|alltests\.py)(\s|$)")


def is_test_path(path: str) -> bool:
    """True for a test file or a file under a test directory (``tests/``, ``test_*.py``, ``conftest.py``)."""
    parts = os.path.normpath(path).split(os.sep)
    name = parts[-1]
    return (any(p in ("test", "tests", "testing", "__tests__") for p in parts[:-1])
            or name.startswith("test_") or name.endswith(("_test.py", ".test.js", ".test.ts")) or name == "conftest.py")


@dataclass
class _Action:
    call_index: int
    tool_call_id: str
    function: str
    kind: str  # read | search | edit | test | shell | other
    paths: tuple[str, ...]  # files it names (arguments, patch headers)
    text: str  # result text
    error: bool
    read: ReadCall | None = None


@dataclass
class PromptTools:
    """One user prompt of a session: its calls and the tool calls they made, in order."""

    calls: list[int] = field(default_factory=list)
    actions: list[_Action] = field(default_factory=list)
    target: str | None = None


@dataclass
class Evidence:
    """Observations of one session (module docstring); lists are pooled by readbench.sim.fit."""

    harness: str
    model: str
    started: float | None
    grep_first: list[int] = field(default_factory=list)
    follow: list[int] = field(default_factory=list)
    restart: list[int] = field(default_factory=list)
    comply: list[tuple[int, int]] = field(default_factory=list)  # (complied, repeats before it)
    verify: list[int] = field(default_factory=list)
    window: list[int] = field(default_factory=list)
    chunk: list[int] = field(default_factory=list)
    think: list[int] = field(default_factory=list)
    durations: list[tuple[float, float, float]] = field(default_factory=list)
    tool_gaps: list[float] = field(default_factory=list)
    test_gaps: list[float] = field(default_factory=list)
    user_gaps: list[float] = field(default_factory=list)
    calls_per_prompt: list[int] = field(default_factory=list)
    before_share: list[float] = field(default_factory=list)
    explore_tools: Counter[str] = field(default_factory=Counter)
    tool_mix: Counter[str] = field(default_factory=Counter)


def _norm(path: str, cwd: str | None) -> str:
    path = path.strip()
    if cwd and os.path.isabs(path) and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1:]
    return os.path.normpath(path) if path else path


def _classify(function: str, args: dict[str, Any], read: ReadCall | None, cwd: str | None) -> tuple[str, tuple[str, ...]]:
    if read is not None:
        return "read", (_norm(read.path, cwd),)
    path_args = [v for k in path_keys() if isinstance(v := args.get(k), str)]
    role = tool_role(function, args)
    if role == "search":
        return "search", tuple(_norm(p, cwd) for p in path_args)
    if role == "edit":
        patch = args.get("patch") or args.get("input") or ""
        found = patch_paths(patch) if isinstance(patch, str) else []
        return "edit", tuple(_norm(p, cwd) for p in path_args + found)
    if role == "shell":
        cmd = shell_command(args) or ""
        if "apply_patch" in cmd:
            return "edit", tuple(_norm(p, cwd) for p in patch_paths(cmd))
        try:
            words = tuple(_norm(w, cwd) for w in shlex.split(cmd) if "/" in w or "." in w)
        except ValueError:
            words = ()
        if _TEST_RUN.search(cmd):
            return "test", words
        if _SHELL_SEARCH.match(cmd):
            return "search", words
        return "shell", words
    return "other", tuple(_norm(p, cwd) for p in path_args)


def prompt_tools(session: Session) -> list[PromptTools]:
    """The session cut into prompts, with every tool call classified."""
    results: dict[str, ChatMessageTool] = {}
    for ctx in session.contexts:
        for m in ctx:
            if isinstance(m, ChatMessageTool) and m.tool_call_id:
                results.setdefault(m.tool_call_id, m)
    reads = {r.tool_call_id: r for r in read_calls(session)}
    prompts: list[PromptTools] = []
    for call in session.calls:
        request = [m for m in session.request(call.index) if not isinstance(m, ChatMessageSystem)]
        if not prompts or (request and isinstance(request[-1], ChatMessageUser)):
            prompts.append(PromptTools())
        prompt = prompts[-1]
        prompt.calls.append(call.index)
        for tc in (call.output.tool_calls or []) if call.output else []:
            res = results.get(tc.id)
            read = reads.get(tc.id)
            kind, paths = _classify(tc.function, tc.arguments or {}, read, session.cwd)
            text = "" if res is None else (res.error.message if res.error else res.text)
            prompt.actions.append(_Action(call.index, tc.id, tc.function, kind, paths, text,
                                          res is not None and res.error is not None, read))
    for prompt in prompts:
        prompt.target = _target(prompt)
    return prompts


def _target(prompt: PromptTools) -> str | None:
    for a in prompt.actions:
        if a.kind == "edit" and not a.error:
            for p in a.paths:
                if not is_test_path(p):
                    return p
    counts = Counter(a.paths[0] for a in prompt.actions if a.kind == "read" and not is_test_path(a.paths[0]))
    if not counts:
        return None
    best = max(counts.values())
    return next(a.paths[0] for a in prompt.actions if a.kind == "read" and counts.get(a.paths[0]) == best)


def _touches(a: _Action, path: str) -> bool:
    return path in a.paths or any(p.endswith("/" + path) or path.endswith("/" + p) for p in a.paths if p)


def _mentions(a: _Action, path: str) -> bool:
    return _touches(a, path) or path in a.text or (os.path.basename(path) in a.text and "/" not in path)


def _reads_evidence(ev: Evidence, prompt: PromptTools) -> None:
    target = prompt.target
    acts = prompt.actions
    first = next((i for i, a in enumerate(acts) if a.kind == "read" and target and _touches(a, target)), None)
    if target is not None and first is not None:
        ev.grep_first.append(int(any(a.kind == "search" and _mentions(a, target) for a in acts[:first])))
        first_follow = None
        for i, a in enumerate(acts):
            if a.kind != "read" or not _touches(a, target) or not a.read or not a.read.capped or a.read.last_line is None:
                continue
            k, nxt = next(((k, b) for k, b in enumerate(acts[i + 1:], i + 1) if _touches(b, target)), (None, None))
            if nxt is None or nxt.kind == "edit":
                continue
            if nxt.kind == "read" and nxt.read is not None and (nxt.read.offset or 1) == a.read.last_line + 1:
                ev.follow.append(1)
                first_follow = k if first_follow is None else first_follow
            elif nxt.kind == "read" and nxt.read is not None and (nxt.read.offset or 1) <= (a.read.first_line or 1):
                continue
            elif nxt.kind in ("read", "search"):
                ev.follow.append(0)
        if first_follow is not None:
            ev.restart.append(int(any(a.kind == "read" and _touches(a, target) and a.read is not None
                                      and (a.read.offset or 1) <= 1 for a in acts[first_follow + 1:])))
    for i, a in enumerate(acts):
        if a.kind == "read" and a.read is not None and a.read.blind and blocked(a.text):
            repeats = 0
            j = i - 1
            while j >= 0 and acts[j].kind == "read" and (rj := acts[j].read) is not None and rj.blind \
                    and acts[j].paths == a.paths and blocked(acts[j].text):
                repeats += 1
                j -= 1
            nxt = next((b for b in acts[i + 1:] if _touches(b, a.paths[0])), None)
            if nxt is None or nxt.kind not in ("read", "search"):
                continue
            repeated = nxt.kind == "read" and nxt.read is not None and nxt.read.blind
            ev.comply.append((0 if repeated else 1, repeats))
        if a.kind == "edit" and not a.error and i + 1 < len(acts):
            nxt = acts[i + 1]
            ev.verify.append(int(nxt.kind == "read" and any(_touches(nxt, p) for p in a.paths)))


def _ranged_evidence(ev: Evidence, prompt: PromptTools) -> None:
    reads = [a for a in prompt.actions if a.kind == "read" and a.read is not None]
    by_path: dict[str, list[_Action]] = {}
    for a in reads:
        by_path.setdefault(a.paths[0], []).append(a)
    for seq in by_path.values():
        for k, a in enumerate(seq):
            r = a.read
            if r is None or r.limit is None or r.offset is None or blocked(a.text):
                continue
            prev = seq[k - 1].read if k else None
            nxt = seq[k + 1].read if k + 1 < len(seq) else None
            continues = prev is not None and prev.last_line is not None and r.offset == prev.last_line + 1
            continued = nxt is not None and nxt.offset is not None and r.last_line is not None \
                and nxt.offset == r.last_line + 1 and nxt.limit is not None
            (ev.chunk if continues or continued else ev.window).append(r.limit)


def _timing_evidence(ev: Evidence, session: Session, prompts: list[PromptTools]) -> None:
    starts_prompt = {p.calls[0] for p in prompts}
    kinds: dict[int, set[str]] = {}
    for p in prompts:
        for a in p.actions:
            kinds.setdefault(a.call_index, set()).add(a.kind)
    calls = session.calls
    for call in calls:
        if call.ts_start_seconds is not None and call.ts_end_seconds is not None and call.usage is not None:
            duration = call.ts_end_seconds - call.ts_start_seconds
            if duration > 0:
                ev.durations.append((duration, float(call.usage.input_tokens), float(call.usage.output_tokens)))
        if call.output is not None and call.output.tool_calls:
            own = sum(count_tokens(tc.function) + count_tokens(json.dumps(tc.arguments or {}, ensure_ascii=False))
                      for tc in call.output.tool_calls)
            out = call.usage.output_tokens if call.usage is not None else count_tokens(call.output.text)
            ev.think.append(max(0, int(out) - own))
    for prev, nxt in zip(calls, calls[1:]):
        if prev.ts_end_seconds is None or nxt.ts_start_seconds is None:
            continue
        gap = nxt.ts_start_seconds - prev.ts_end_seconds
        if gap < 0:
            continue
        if nxt.index in starts_prompt:
            if not (prev.output and prev.output.tool_calls):
                ev.user_gaps.append(gap)
        elif kinds.get(prev.index) == {"test"}:
            ev.test_gaps.append(gap)
        elif kinds.get(prev.index) and "test" not in kinds[prev.index]:
            ev.tool_gaps.append(gap / max(1, len((prev.output.tool_calls if prev.output else None) or [])))


def session_evidence(session: Session) -> Evidence:
    """Every observation of one session (module docstring)."""
    first = next((c for c in session.calls if c.model), None)
    ev = Evidence(harness=session.harness, model=first.model if first else "",
                  started=next((c.ts_start_seconds for c in session.calls if c.ts_start_seconds is not None), None))
    prompts = prompt_tools(session)
    for prompt in prompts:
        ev.calls_per_prompt.append(len(prompt.calls))
        for a in prompt.actions:
            ev.tool_mix["edit" if a.kind == "edit" else "read" if a.kind == "read" else
                        "grep" if a.kind == "search" else "bash" if a.kind in ("test", "shell") else "other"] += 1
        _reads_evidence(ev, prompt)
        _ranged_evidence(ev, prompt)
        if prompt.target is not None:
            touched = [a.call_index for a in prompt.actions if _touches(a, prompt.target)]
            before = sum(1 for c in prompt.calls if c < touched[0])
            ev.before_share.append(before / len(prompt.calls))
            for a in prompt.actions:
                if not _touches(a, prompt.target) and a.kind in ("read", "search", "shell"):
                    ev.explore_tools[{"read": "read", "search": "grep", "shell": "bash"}[a.kind]] += 1
    _timing_evidence(ev, session, prompts)
    return ev
