"""A pi trunk's shadow: where each other pi arm would first leave it (GitHub issue 25 item 1 for
a real harness; the loop's counterpart is readbench.fork.shadow, whose kinds this keeps).

A pi trunk runs under one arm; every relayed request passes the bridge's filter
(readbench.agents.run), which calls `PiShadow.observe` before projecting it. For each arm that has
not left the trunk yet:
- its read results: each `read` answered in this request (the results after the last assistant
  message) is recomputed with the arm's and the trunk's presets on the file's bytes as the sandbox
  holds them now (read presets are pure functions of the bytes, pi-tools.md; B's refusal is the
  text pi's extension sends, readbench.agents.pi_extension; `PiShadow._result`); where the arm's
  result differs from the trunk's, the arm forks with ``kind="result"`` at the call whose reply
  made those reads (one before this request, as readbench.fork.shadow numbers a result fork: the
  trunk's reply to that call is shared, the arm's results follow it; pi resumes at this request,
  readbench.agents.run.harness_agent) with its results in place;
- a read in a reply that also ran a mutating tool (bash, edit, write) cannot be recomputed from
  the bytes after the reply (an edit, ``rm`` or ``mv`` may have changed them): an arm with another
  read preset than the trunk's forks conservatively one call earlier, whatever the bytes after the
  reply give (``kind="request"``, `reason` says so; forking early is sound by coupling,
  agents.md §6);
- its DCP projection: the same history projected under the arm's configuration (its own
  `DcpState`, the trunk's context usage); where it differs from the trunk's projection, the arm
  forks here with ``kind="request"`` and its `DcpState` before this call.
The request past the trunk's turn limit (answered by the relay without the model) is shadowed for
its read results only: the last reply's tools ran, so an arm whose reads differ only there forks
there (its fork stops at the same limit, its own results in its history, so its read metrics are
an independent run's); no arm sends that request, so a projection differing there changes nothing.
An arm that never leaves the trunk gets ``kind="never"`` at `finish`.

Each fork point is a dict: ``{"call", "kind", "reason", "results": {tool_call_id: [text,
is_error]}, "dcp_state"}``, what `harness_agent`'s ``fork`` takes besides the trunk's session, sim
memory, snapshot and reported usage.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.util import OutputLimitExceededError

from readbench.dcp import DcpState, ProjectionCache, get_config, project
from readbench.fork.shadow import MUTATING, arm_key
from readbench.read import ReadSession, get_variant

__all__ = ["PiShadow"]


@dataclass
class _Arm:
    variant: Any
    dcp: Any
    state: DcpState = field(default_factory=DcpState)
    cache: ProjectionCache = field(default_factory=lambda: ProjectionCache(max_histories=1))
    point: dict[str, Any] | None = None


def _fingerprints(messages: list[Any]) -> list[str]:
    from readbench.agent.loop import fingerprint

    return [fingerprint(m) for m in messages]


class PiShadow:
    """The shadow of a pi trunk's other arms (module docstring).

    Args:
        trunk: the trunk's (variant, dcp).
        arms: every arm of the group as (variant, dcp), the trunk's own included (it never forks).
        cwd: the workspace in the sandbox (relative read paths are under it).

    Raises:
        ValueError: an unknown read preset or DCP configuration.
    """

    def __init__(self, trunk: tuple[Any, Any], arms: list[tuple[Any, Any]], cwd: str) -> None:
        self.trunk = (get_variant(trunk[0]), get_config(trunk[1]))
        self.trunk_variant = trunk[0]
        self.cwd = cwd
        self.arms = {arm_key(v, d): _Arm(v, d) for v, d in arms}
        self.observed: int | None = None  # the call last observed, and each arm's (state, point) before it
        self.before: dict[str, tuple[DcpState, dict[str, Any] | None]] = {}
        for a in self.arms.values():
            get_variant(a.variant), get_config(a.dcp)

    async def observe(self, call: int, named: list[Any], view: list[Any] | None, usage: Any, sb: Any,
                      results_only: bool = False) -> None:
        """Shadow call `call`: `named` is the relayed history (pi's tool names), `view` the trunk's
        projection of it, `usage` the context usage both projections read, `sb` the sandbox. The same
        `call` observed again (pi retried a failed request) is shadowed from the arms' state before it.
        `results_only`: the request past the trunk's turn limit, which no arm sends (the relay answers
        it without the model): only the read results it holds are shadowed (an arm whose last reads
        differ forks there, pi then stopping at the same limit with the arm's results in its history;
        a projection that differs there changes no call)."""
        if results_only:  # past the limit no call is made or retried (pi's next prompt meets the limit too)
            pass
        elif call == self.observed:  # pi retried this call (its earlier request failed): shadowed afresh
            for key, (state, point) in self.before.items():
                self.arms[key].state, self.arms[key].point = state, point
        else:
            self.observed, self.before = call, {k: (a.state, a.point) for k, a in self.arms.items()}
        tail, calls = _answered(named)
        reads = [(m, calls.get(m.tool_call_id)) for m in tail]
        reads = [(m, c) for m, c in reads if c is not None and c.function == "read"]
        mixed = any(c is not None and c.function in MUTATING for c in calls.values())
        for a in self.arms.values():
            if a.point is not None:
                continue
            state_before = a.state
            if get_config(a.dcp) != self.trunk[1] and not results_only:
                projection = project(named, a.dcp, state=a.state, cwd=self.cwd, cache=a.cache, usage=usage)
                a.state = projection.state
                if _fingerprints(projection.messages) != _fingerprints(view or []):
                    a.point = _point(call, "request", "its DCP projection differs", {}, state_before)
                    continue
            if get_variant(a.variant) == self.trunk[0] or not reads:
                continue
            if mixed:  # the bytes after the reply need not be the bytes the read saw (an edit, `rm`, `mv`)
                a.point = _point(call - 1, "request", "a read in a reply that also changed files: forked one call "
                                 "earlier (conservative)", {}, None)
                continue
            results = {}
            for m, c in reads:
                mine = await self._result(a.variant, c, sb)
                if mine is not None:
                    results[m.tool_call_id] = list(mine)
            if results:  # numbered as the loop's result forks: the call whose reply ran the reads
                a.point = _point(call - 1, "result", "its read results differ", results, state_before)

    async def _result(self, variant: Any, c: Any, sb: Any) -> tuple[str, bool] | None:
        """The arm's (text, is_error) for read call `c` where it differs from the trunk's, else None.

        Under pi an arm's extension only refuses calls (readbench.agents.pi_extension); a call it
        lets through is served by pi's own read, as under the trunk. So the results differ when
        one preset refuses and the other does not, or both refuse in other words; the arm's
        result is its refusal (an error), or pi's own read where only the trunk refused
        (readbench's `stock`, which is pi's read: pi-tools.md §1-2). A file the sandbox cannot
        read gives pi's own error under every arm (None)."""
        path = str(c.arguments.get("path", ""))
        full = path if posixpath.isabs(path) else posixpath.join(self.cwd, path)
        try:
            data = await sb.read_file(full, text=False)
        except (OSError, OutputLimitExceededError):  # missing, a directory, unreadable or over inspect's limit
            return None

        def run(preset: Any) -> Any:
            return get_variant(preset).read(data, path, c.arguments.get("offset"), c.arguments.get("limit"),
                                            call_id=c.id, session=ReadSession(), visible_call_ids=None)

        mine, theirs = run(variant), run(self.trunk_variant)
        if not mine.details.blocked and not theirs.details.blocked:
            return None
        if mine.details.blocked and theirs.details.blocked and mine.text == theirs.text:
            return None
        if mine.details.blocked:
            return mine.text, True
        return run("stock").text, False

    def finish(self, calls: int) -> dict[str, dict[str, Any]]:
        """Every arm's fork point after the trunk's `calls` relayed calls (``never`` where it stayed)."""
        return {k: a.point or _point(None, "never", f"not diverged within the trunk's {calls} calls", {}, None)
                for k, a in self.arms.items()}


def _answered(messages: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """(the tool messages after the last assistant message, that message's tool calls by id)."""
    tail: list[Any] = []
    for m in reversed(messages):
        if m.role != "tool":
            calls = {c.id: c for c in getattr(m, "tool_calls", None) or []} if m.role == "assistant" else {}
            return list(reversed(tail)), calls
        tail.append(m)
    return list(reversed(tail)), {}


def _point(call: int | None, kind: str, reason: str, results: dict[str, Any], state: DcpState | None) -> dict[str, Any]:
    return {"call": call, "kind": kind, "reason": reason, "results": results,
            "dcp_state": state.to_dict() if state is not None else None}
