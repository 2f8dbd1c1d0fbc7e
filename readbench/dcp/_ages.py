"""pi-dcp's age model: turn ages and execution-step segmentation (docs/specs/dcp.md §1).

Positions are `PiView` positions (system messages excluded, as in pi's hook).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import ChatMessageTool

from readbench.dcp._view import PiView, blocks, calls_of

__all__ = ["AgeModel", "Step", "build_age_model", "turn_ages", "segment_steps"]


@dataclass(frozen=True)
class Step:
    """One execution step: view positions `start..end` inclusive; `age` 0 = newest step."""

    start: int
    end: int
    kind: str
    """`tool`, `assistant` or `orphanToolResult`."""
    age: int


@dataclass(frozen=True)
class AgeModel:
    """Turn age and step age of every view position, and the steps themselves."""

    turn_ages: tuple[int, ...]
    step_ages: tuple[int, ...]
    """-1 for positions in no step (user prompts, final answers)."""
    steps: tuple[Step, ...]


def turn_ages(view: PiView) -> list[int]:
    """`computeTurnAges`: newest->oldest, the counter increments after each `user` message.

    The last user prompt and everything after it have age 0, the turn before it 1, and so on.
    """
    ages = [0] * len(view)
    age = 0
    for pos in range(len(view) - 1, -1, -1):
        ages[pos] = age
        if view.role(pos) == "user":
            age += 1
    return ages


def _text_only_assistant(view: PiView, pos: int) -> bool:
    if pos >= len(view) or view.role(pos) != "assistant":
        return False
    m = view.original(pos)
    if calls_of(m):
        return False
    return any(kind == "text" and t.strip() for kind, t in blocks(m.content))


def _execution_follows(view: PiView, start: int) -> bool:
    for pos in range(start, len(view)):
        role = view.role(pos)
        if role == "user":
            return False
        if role == "toolResult" or (role == "assistant" and calls_of(view.original(pos))):
            return True
    return False


def _progress(view: PiView, pos: int) -> bool:
    """Text-only assistant message followed by more execution before the next user prompt."""
    return _text_only_assistant(view, pos) and _execution_follows(view, pos + 1)


def segment_steps(view: PiView) -> list[Step]:
    """`segmentExecutionSteps` (forward scan), with ages assigned newest = 0."""
    raw: list[tuple[int, int, str]] = []
    pos = 0
    n = len(view)
    while pos < n:
        role = view.role(pos)
        if role == "user":
            pos += 1
            continue
        if role == "assistant":
            calls = calls_of(view.original(pos))
            if calls:
                ids = {c.id for c in calls}
                end = pos
                cur = pos + 1
                while cur < n and isinstance(m := view.original(cur), ChatMessageTool) and m.tool_call_id in ids:
                    end = cur
                    cur += 1
                if _progress(view, cur):
                    end = cur
                raw.append((pos, end, "tool"))
                pos = end + 1
                continue
            if _progress(view, pos):
                raw.append((pos, pos, "assistant"))
            pos += 1
            continue
        # run of toolResults not attached to a call
        end = pos
        cur = pos
        while cur < n and view.role(cur) == "toolResult":
            end = cur
            cur += 1
        if _progress(view, cur):
            end = cur
        raw.append((pos, end, "orphanToolResult"))
        pos = end + 1
    newest = len(raw) - 1
    return [Step(s, e, k, newest - i) for i, (s, e, k) in enumerate(raw)]


def build_age_model(view: PiView) -> AgeModel:
    """Turn ages, step ages (-1 outside steps) and steps of `view`."""
    steps = segment_steps(view)
    step_ages = [-1] * len(view)
    for st in steps:
        for pos in range(st.start, st.end + 1):
            step_ages[pos] = st.age
    return AgeModel(tuple(turn_ages(view)), tuple(step_ages), tuple(steps))
