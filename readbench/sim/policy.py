"""The simulated agent's decision for one model call (docs/specs/sim-agent.md, "Loop shape").

locate (grep or blind read, per knobs) -> read until the perception rule is met -> act (edit or
answer) -> for fixes, run the task's test command; on failure re-inspect (bounded) -> finish.
One decision per call, at most one tool call. Everything the sim acts on comes from the
current input (readbench.sim.perception); the memory holds only the plan and counters. The calls
themselves (read, search, final message) are built in readbench.sim.actions.
"""

from __future__ import annotations

import re
import shlex

from readbench.sim.actions import (
    Action,
    Ctx,
    best_hit,
    blind_read,
    can_search,
    final_message,
    finish,
    read_call,
    search_again,
    search_call,
    snippet_line,
    snippet_span,
    window_read,
)
from readbench.sim.draws import Draws
from readbench.sim.explore import exploration
from readbench.sim.memory import SimMemory, StepMemory, call_order
from readbench.sim.observe import Exchange, norm_path
from readbench.sim.oracle import Goal
from readbench.sim.perception import (
    file_view,
    find_snippet,
    first_missing_line,
    goal_perceived,
    whole_file_visible,
)
from readbench.sim.profiles import Profile

__all__ = ["decide"]

_EXIT = re.compile(r"Command exited with code [1-9]\d*\s*$")
_MAX_EDIT_ATTEMPTS = 3
_MAX_EMPTY_READS = 3


def decide(exs: list[Exchange], user_messages: int, goals: tuple[Goal, ...], profile: Profile, draws: Draws,
           mem: SimMemory, tools: frozenset[str], default_read_limit: int | None = None) -> Action:
    """Choose the next action and update ``mem`` (plan state only).

    Args:
        exs: exchanges of the current input (readbench.sim.observe.exchanges).
        user_messages: user messages in the current input; the n-th starts goal ``goals[n-1]``.
        goals: the task's goals, one per prompt.
        profile: behaviour knobs.
        draws: the sample's seeded draws.
        mem: the sample's memory (mutated: plan, counters, own-edit record).
        tools: names of the tools offered in this call.
        default_read_limit: the read tool's stated default line limit (observe.default_read_limit).
    """
    index = min(max(user_messages, 1), len(goals)) - 1
    if index != mem.step.index:
        mem.step = StepMemory(index=index)
    if mem.step.target_calls < 0:  # the sub-goal's first call: how many calls this prompt gets
        low, high = profile.calls_per_prompt
        mem.step.target_calls = draws.integer(low, high, "calls", index) if high > 0 else 0
        mem.step.pre_explore = min(round(profile.explore_before_share * mem.step.target_calls),
                                   max(mem.step.target_calls - 2, 0))
    goal = goals[index]
    by_id = {e.call_id: e for e in exs}
    _absorb(goal, profile, draws, mem, by_id)
    path = norm_path(goal.target_file)
    orders = [int(n) for p, n in mem.mutations if p == path]
    view = file_view(exs, path, mutation_orders=orders, order_of=lambda cid: call_order(mem.seed, cid),
                     default_limit=default_read_limit)
    ctx = Ctx(goal, profile, draws, mem, tools, view, by_id)
    step = ctx.step
    step.calls += 1
    if step.phase == "done" and step.outcome == "done" and goal.kind == "question" and not goal_perceived(goal, view):
        step.phase, step.outcome = "read", ""  # the held answer's evidence is gone: read it again
    if step.phase == "locate" and step.actions == 0 and step.explored < step.pre_explore:
        explored = _explore(ctx, exs)
        if explored is not None:
            return explored
    action = _dispatch(ctx)
    if action.function is not None and action.function not in tools:
        action = finish(ctx, f"gave_up:no_{action.function}_tool")  # only offered tools are called
    if action.function is None and step.calls + 1 <= step.target_calls:
        explored = _explore(ctx, exs)  # the final message waits: explore until the prompt has its calls
        if explored is not None:
            return explored
    if action.function is not None:
        ctx.step.actions += 1
    return action


def _explore(ctx: Ctx, exs: list[Exchange]) -> Action | None:
    """An exploration call (readbench.sim.explore), counted apart from the sub-goal's own actions."""
    found = exploration(ctx.goal, ctx.profile, ctx.draws, exs, ctx.tools, (ctx.step.index, ctx.step.explored))
    if found is None:
        return None
    ctx.step.explored += 1
    return Action(found.function, found.arguments, found.intent)


def _absorb(goal: Goal, profile: Profile, draws: Draws, mem: SimMemory, by_id: dict[str, Exchange]) -> None:
    """Update the plan from the results of the calls the sim issued last time."""
    step = mem.step
    for call in mem.last_calls:
        result = by_id.get(call["id"])
        args = call["arguments"]
        order = call_order(mem.seed, call["id"]) or mem.calls
        if call["function"] == "edit":
            path = norm_path(str(args.get("path", "")))
            if result is not None and result.is_error:
                step.phase = "read"
                step.need_read = "has not been read" in result.text
                if not step.need_read:  # the sim distrusts its view of the file and re-reads it
                    mem.mutations.append([path, order])
            else:
                mem.mutations.append([path, order])
                verify = draws.chance(profile.p_verify_reread, "verify", step.index, step.edit_attempts)
                step.phase = "verify" if verify else "test"
        elif call["function"] == "bash" and goal.test_cmd and args.get("command") == goal.test_cmd:
            passed = result is not None and not result.is_error and not _EXIT.search(result.text)
            if passed:
                step.phase, step.outcome = "done", "done"
            else:
                step.test_failures += 1
                if step.test_failures >= profile.max_fix_attempts:
                    step.phase, step.outcome = "done", "gave_up:tests_fail"
                else:
                    step.phase = "reinspect"


def _dispatch(ctx: Ctx) -> Action:
    step, goal = ctx.step, ctx.goal
    if step.phase == "done":
        return final_message(ctx)
    if step.actions >= ctx.profile.max_step_actions:
        return finish(ctx, "gave_up:max_step_actions")
    if step.phase == "verify":
        if not step.verify_done:
            step.verify_done = True
            return window_read(ctx, step.edit_line or goal.target_line or 1, "Re-reading the edited region to verify it")
        step.phase = "test"
    if step.phase == "test":
        if goal.test_cmd and "bash" in ctx.tools:
            return Action("bash", {"command": goal.test_cmd}, "Running the tests to check the fix")
        return finish(ctx, "done")
    if step.phase == "reinspect":
        if goal_perceived(goal, ctx.view):
            step.phase = "act"  # the old text is back: the edit is not in place
        elif all(find_snippet(ctx.view, new) is not None for _, new in goal.edits if new):
            return finish(ctx, "gave_up:tests_fail")
        elif step.reinspect_reads < 2:
            step.reinspect_reads += 1
            return window_read(ctx, step.edit_line or goal.target_line or 1,
                           "The tests still fail; looking at the code again")
        else:
            return finish(ctx, "gave_up:tests_fail")
    if step.phase in ("locate", "read"):
        if goal_perceived(goal, ctx.view):
            if step.grepped and not step.windows and ctx.view.grep_hits and not goal.whole_file:
                hit = best_hit(ctx)  # grep-then-narrow-read: read around the hit before acting
                return window_read(ctx, hit, f"Reading the code around line {hit}")
            if step.need_read:
                step.need_read = False
                return window_read(ctx, snippet_line(ctx), "Reading the file before editing it")
            restart = _restart(ctx)
            if restart is not None:
                return restart
            step.phase = "act"
        elif step.phase == "locate":
            step.phase = "read"
            return _locate(ctx)
        else:
            return search_again(ctx, ctx.by_id) or _next_read(ctx)
    if not goal_perceived(goal, ctx.view):
        step.phase = "read"
        return _next_read(ctx)
    return _act(ctx)


def _act(ctx: Ctx) -> Action:
    goal, step = ctx.goal, ctx.step
    if goal.kind == "question":
        step.phase, step.outcome = "done", "done"
        return Action(None, {}, f"Found it in {goal.target_file}.", answer=goal.answer)
    if step.edit_attempts >= _MAX_EDIT_ATTEMPTS:
        return finish(ctx, "gave_up:edit_failed")
    step.edit_attempts += 1
    step.edit_line = snippet_line(ctx)
    edits = [{"oldText": old, "newText": new} for old, new in goal.edits]
    return Action("edit", {"path": goal.target_file, "edits": edits}, f"Fixing the code in {goal.target_file}")


def _locate(ctx: Ctx) -> Action:
    searchable = not ctx.goal.whole_file or ctx.goal.count_key is not None  # a count can be grepped
    if searchable and can_search(ctx) and ctx.draws.chance(
            ctx.profile.p_grep_first, "grep-first", ctx.step.index):
        return search_call(ctx)
    return blind_read(ctx)


def _restart(ctx: Ctx) -> Action | None:
    """Re-read a paged file from line 1 in chunks up to the target (p_restart_reread)."""
    step, profile = ctx.step, ctx.profile
    if not step.paged:
        return None
    if not step.restart_decided:
        step.restart_decided = True
        if ctx.draws.chance(profile.p_restart_reread, "restart", step.index):
            step.restart_next = 1
    if step.restart_next is None:
        return None
    if step.restart_pending and ctx.view.latest_read_call_id in {c["id"] for c in ctx.mem.last_calls}:
        # continue after the last line the previous segment showed (C cuts a 1000-line range to 400)
        obs = ctx.view.latest_read
        shown = max(obs.lines) if obs is not None and obs.lines else 0
        step.restart_next = shown + 1 if shown >= step.restart_next else step.restart_next + profile.range_chunk_lines
        step.restart_pending = False
    if ctx.goal.whole_file:
        end = ctx.view.total_lines or 0
    else:
        end = snippet_line(ctx) + snippet_span(ctx.goal) - 1
    if step.restart_next > end:
        step.restart_next = None
        return None
    step.restart_pending = True
    return read_call(ctx, f"Re-reading {ctx.goal.target_file} from the start", step.restart_next,
                 profile.range_chunk_lines)


def _next_read(ctx: Ctx) -> Action:
    """The next read while the perception rule is not met."""
    step, goal, view, profile, draws = ctx.step, ctx.goal, ctx.view, ctx.profile, ctx.draws
    chunk = profile.range_chunk_lines
    just_read = view.latest_read_call_id in {c["id"] for c in ctx.mem.last_calls}
    obs = view.latest_read if just_read else None
    args = view.latest_read_args if just_read else {}
    if obs is not None and obs.blocked:
        step.block_errors += 1
        if step.mode == "ranged":  # even a range was over the limit: halve it
            return read_call(ctx, "Reading a smaller range", int(args.get("offset") or 1),
                         max(1, int(args.get("limit") or chunk) // 2))
        complies = draws.chance(profile.p_comply_block, "comply", step.index, step.block_errors)
        if not complies and step.block_retries < profile.max_block_retries:
            step.block_retries += 1
            return Action("read", dict(args), f"Reading {goal.target_file} again")
        step.mode = "ranged"
        if not goal.whole_file and can_search(ctx) and not step.grepped and draws.chance(
                profile.p_grep_first, "comply-grep", step.index):
            return search_call(ctx)
        return read_call(ctx, f"Reading {goal.target_file} in ranges", first_missing_line(view), chunk)
    if obs is not None and obs.stub_range is not None:
        first, last = obs.stub_range
        if not all(n in view.lines for n in range(first, last + 1)):
            if "bash" in ctx.tools:  # the text the stub points to is gone: fetch it another way
                command = f"sed -n '{first},{last}p' {shlex.quote(goal.target_file)}"
                return Action("bash", {"command": command}, "That content is no longer in my context; printing it")
            if can_search(ctx) and not step.grepped:
                return search_call(ctx)
            return finish(ctx, "gave_up:stubbed")
    if obs is not None and obs.pruned:
        return Action("read", dict(args), f"Reading {goal.target_file} again")
    if obs is not None and not obs.lines and obs.next_offset is None and not obs.stub_range and not obs.pruned:
        step.empty_reads += 1
        if step.empty_reads >= _MAX_EMPTY_READS or obs.total_lines is None:
            return finish(ctx, "gave_up:read_failed")
    if goal.whole_file:
        missing = first_missing_line(view)
        if step.mode == "ranged":
            return read_call(ctx, f"Reading {goal.target_file} in ranges", missing, chunk)
        if obs is not None and obs.next_offset:
            step.paged = True
        return blind_read(ctx, missing)
    if obs is not None and obs.cut and view.map_ranges and not step.map_decided and goal.target_line:
        step.map_decided = True
        if draws.chance(profile.p_use_map, "map", step.index):
            inside = [r for r in view.map_ranges if r[1] <= goal.target_line <= r[2]]
            if inside:
                _, first, last = min(inside, key=lambda r: r[2] - r[1])
                step.mode = "window"
                return read_call(ctx, "Jumping to the definition from the file map", first, last - first + 1)
    if obs is not None and obs.next_offset and step.mode in ("blind", "ranged"):
        step.follows += 1
        if draws.chance(profile.p_follow_paging, "follow", step.index, step.follows):
            step.paged = True
            return read_call(ctx, f"Continuing to read {goal.target_file}", obs.next_offset, args.get("limit"))
        step.mode = "window"
        if can_search(ctx) and not step.grepped:
            return search_call(ctx)
    if whole_file_visible(view):
        return finish(ctx, "gave_up:not_found")
    if view.grep_hits:
        hit = best_hit(ctx)
        step.mode = "window"
        return window_read(ctx, hit, f"Reading the code around line {hit}")
    if can_search(ctx) and not step.grepped:
        return search_call(ctx)
    if step.blind_reads == 0:
        return blind_read(ctx)
    step.mode = "ranged"
    return read_call(ctx, f"Reading {goal.target_file} in ranges", first_missing_line(view), chunk)
