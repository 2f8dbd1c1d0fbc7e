"""The calls the simulated agent can make, built from its plan state (readbench.sim.policy decides
which; docs/specs/sim-agent.md, "Loop shape"): the `Action` record, the per-call context `Ctx`,
and one builder per kind of call: a read (`read_call`, `blind_read`, `window_read`: a targeted
read around a line, widened when already visible), a search (`search_call`: pi's grep, else
`grep -n` via bash; `search_again` with the limit a capped listing suggests) and the final
message (`finish`, `final_message`). Builders update the step's counters and mode as the call
they build implies; everything they read of the file comes from the current view
(readbench.sim.perception).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from readbench.sim.draws import Draws
from readbench.sim.memory import SimMemory, StepMemory
from readbench.sim.observe import Exchange, grep_more_limit
from readbench.sim.oracle import Goal
from readbench.sim.perception import FileView, find_snippet
from readbench.sim.profiles import Profile

__all__ = ["Action", "Ctx", "best_hit", "blind_read", "can_search", "final_message", "finish", "read_call",
           "search_again", "search_call", "snippet_line", "snippet_span", "window_read"]


@dataclass(frozen=True)
class Action:
    """What the sim does this call.

    Attributes:
        function: tool name, or None for a final message without tool calls.
        arguments: the tool call's arguments (pi's schema), empty for a final message.
        intent: one sentence saying why (the prose of the turn starts with it).
        answer: the answer value of a question's final message, else None.
    """

    function: str | None
    arguments: dict[str, Any]
    intent: str
    answer: str | None = None


@dataclass
class Ctx:
    """What one decision works from: the sub-goal, the knobs, the sample's draws and memory, the
    tools offered, the target file's current view and the current input's exchanges by call id."""

    goal: Goal
    profile: Profile
    draws: Draws
    mem: SimMemory
    tools: frozenset[str]
    view: FileView
    by_id: dict[str, Exchange]

    @property
    def step(self) -> StepMemory:
        return self.mem.step


def snippet_line(ctx: Ctx) -> int:
    """Line of the text the goal rests on in the current view (falls back to the target line)."""
    goal = ctx.goal
    snippet = goal.edits[0][0] if goal.edits else goal.evidence_text
    line = find_snippet(ctx.view, snippet) if snippet else None
    if line:
        return line
    return goal.evidence_line or goal.target_line or 1


def best_hit(ctx: Ctx) -> int:
    """The visible search hit a capable model would pick: the last one at or before the target
    line (the search key names the enclosing definition), else the first one after it."""
    hits = ctx.view.grep_hits
    target = ctx.goal.target_line or hits[0]
    before = [h for h in hits if h <= target]
    return max(before) if before else min(hits)


def snippet_span(goal: Goal) -> int:
    snippet = goal.edits[0][0] if goal.edits else (goal.evidence_text or "")
    return snippet.count("\n") + 1


def final_message(ctx: Ctx) -> Action:
    goal, step = ctx.goal, ctx.step
    if step.outcome == "done" and goal.kind == "question":
        return Action(None, {}, f"Found it in {goal.target_file}.", answer=goal.answer)
    if step.outcome == "done":
        return Action(None, {}, f"Done: the change to {goal.target_file} is in place.")
    return Action(None, {}, f"I could not complete this ({step.outcome.split(':', 1)[-1].replace('_', ' ')}).")


def finish(ctx: Ctx, outcome: str) -> Action:
    ctx.step.phase, ctx.step.outcome = "done", outcome
    return final_message(ctx)


def read_call(ctx: Ctx, intent: str, offset: int | None = None, limit: int | None = None) -> Action:
    args: dict[str, Any] = {"path": ctx.goal.target_file}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    return Action("read", args, intent)


def blind_read(ctx: Ctx, offset: int | None = None) -> Action:
    ctx.step.mode = "blind"
    ctx.step.blind_reads += 1
    if offset is None or offset <= 1:
        return read_call(ctx, f"Reading {ctx.goal.target_file}")
    return read_call(ctx, f"Continuing to read {ctx.goal.target_file}", offset)


def can_search(ctx: Ctx) -> bool:
    return bool(ctx.goal.search_key) and bool({"grep", "bash"} & ctx.tools)


def search_call(ctx: Ctx, limit: int | None = None) -> Action:
    """Search the target file for the search key (pi's grep tool, else ``grep -n`` via bash)."""
    step, goal = ctx.step, ctx.goal
    step.grepped, step.mode = True, "window"
    intent = f"Searching {goal.target_file} for the relevant code"
    if "grep" in ctx.tools:
        args: dict[str, Any] = {"pattern": goal.search_key, "path": goal.target_file, "literal": True}
        if limit is not None:
            args["limit"] = limit
        return Action("grep", args, intent)
    command = f"grep -n -F -e {shlex.quote(goal.search_key or '')} -- {shlex.quote(goal.target_file)}"
    return Action("bash", {"command": command}, intent)


def search_again(ctx: Ctx, by_id: dict[str, Exchange]) -> Action | None:
    """Repeat a count search whose listing hit the match limit, with the limit it suggests."""
    if ctx.goal.count_key is None:
        return None
    for call in ctx.mem.last_calls:
        result = by_id.get(call["id"])
        if call["function"] == "grep" and result is not None:
            more = grep_more_limit(result.text)
            if more is not None:
                return search_call(ctx, more)
    return None


def window_read(ctx: Ctx, center: int, intent: str) -> Action:
    """A targeted read around ``center``; an already-visible window is widened, a vanished one re-read."""
    step, view = ctx.step, ctx.view
    low, high = ctx.profile.window_lines
    width = max(ctx.draws.integer(low, high, "window", step.index, step.actions), snippet_span(ctx.goal) + 20)
    offset = max(1, center - width // 3)
    while [offset, width] in step.windows:
        last = offset + width - 1 if view.total_lines is None else min(offset + width - 1, view.total_lines)
        if not all(n in view.lines for n in range(offset, last + 1)):
            break  # the earlier copy is gone (pruned, stubbed or stale): read the same window again
        offset, width = max(1, center - width), width * 2
    step.windows.append([offset, width])
    return read_call(ctx, intent, offset, width)
