"""Exploration calls of the simulated agent: the calls a real agent makes besides the ones that
reach its goal (issue 16: calls per prompt and tool mix fitted from recorded sessions).

Recorded sessions run 10-40 model calls per user prompt (sessions.md §5: 140-470 calls in ~12
prompts), while the sim's own work on one prompt takes 3-10. Knob ``calls_per_prompt`` says how
many calls a prompt gets; a share ``explore_before_share`` of them is spent before the sim
locates its target, the rest after its work is done (readbench.sim.policy). Each exploration
call draws its tool from ``explore_tools`` among the tools that apply:

- ``bash``: list a directory (``ls`` of the target's directory or of the tests);
- ``grep``: search the tests for the target's name (pi's grep, at most 20 matches);
- ``read``: read a window of a test file that an earlier listing or search showed.

Exploration never touches the target file and never runs the test command, so the knobs fitted
from the work itself (readbench.sim.fit) keep their meaning; it only adds turns and context, as
real exploration does. Everything it reads comes from visible results (the perception rule).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Any

from readbench.sim.draws import Draws
from readbench.sim.observe import Exchange, norm_path, parse_grep
from readbench.sim.oracle import Goal
from readbench.sim.profiles import Profile

__all__ = ["Exploration", "exploration", "test_path"]

_GREP_LIMIT = 20
_NAME = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\(|^class\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Exploration:
    """One exploration call: tool ``function``, its ``arguments`` and the turn's ``intent``."""

    function: str
    arguments: dict[str, Any]
    intent: str


def test_path(test_cmd: str | None) -> str | None:
    """The first test path of a pytest command (``tests``, ``tests/test_x.py``), else None."""
    if not test_cmd:
        return None
    try:
        argv = shlex.split(test_cmd)
    except ValueError:
        return None
    for token in argv[1:]:
        head = token.split("::", 1)[0]
        if not token.startswith("-") and (head.startswith("test") or "/" in head) and " " not in head:
            return norm_path(head)
    return None


def _name(goal: Goal) -> str | None:
    match = _NAME.match(goal.search_key or "")
    return None if match is None else match.group(1) or match.group(2)


def _candidates(exs: list[Exchange], target: str, tests: str | None) -> list[tuple[str, int]]:
    """(path, line) of test files that visible listings and searches of the tests showed (never
    a file of the code under change: reading those is the sim's own work)."""
    if not tests:
        return []
    test_dir = tests if not tests.endswith(".py") else os.path.dirname(tests) or "."
    out: list[tuple[str, int]] = []
    for ex in exs:
        if ex.is_error:
            continue
        if ex.function == "grep" and norm_path(str(ex.arguments.get("path", ""))) == tests:
            for path, (_, hits) in parse_grep(ex.text, tests).items():
                out += [(path, h) for h in hits[:3]]
        elif ex.function == "bash" and str(ex.arguments.get("command", "")) == f"ls {shlex.quote(test_dir)}":
            out += [(norm_path(os.path.join(test_dir, n)), 1) for n in ex.text.split() if n.endswith(".py")]
    return [(p, n) for p, n in out if p != target and (p == tests or p.startswith(test_dir.rstrip("/") + "/"))]


def exploration(goal: Goal, profile: Profile, draws: Draws, exs: list[Exchange], tools: frozenset[str],
                key: tuple[object, ...]) -> Exploration | None:
    """The next exploration call, or None when no exploration tool applies.

    Args:
        goal: the current sub-goal (its target file, search key and test command).
        profile: knobs ``explore_tools`` and ``window_lines``.
        draws: the sample's draws; ``key`` identifies this call's decision.
        exs: exchanges of the current input.
        tools: the tools offered in this call.
    """
    target = norm_path(goal.target_file)
    folder = os.path.dirname(target) or "."
    tests = test_path(goal.test_cmd)
    name = _name(goal)
    candidates = _candidates(exs, target, tests)
    options = []
    for tool, weight in profile.explore_tools:
        if weight <= 0 or tool not in tools:
            continue
        if tool == "grep" and not (name and tests):
            continue
        if tool == "read" and not candidates:
            continue
        options.append((tool, weight))
    if not options:
        return None
    tool = draws.weighted(options, "explore-tool", *key)
    if tool == "grep":
        return Exploration("grep", {"pattern": name, "path": tests, "literal": True, "limit": _GREP_LIMIT},
                           f"Looking for uses of {name} in the tests")
    if tool == "read":
        path, line = candidates[int(draws.unit("explore-file", *key) * len(candidates))]
        low, high = profile.window_lines
        width = draws.integer(low, high, "explore-window", *key)
        return Exploration("read", {"path": path, "offset": max(1, line - width // 3), "limit": width},
                           f"Reading {path} for context")
    listings = [folder] + ([tests if not tests.endswith(".py") else os.path.dirname(tests) or "."] if tests else [])
    where = listings[int(draws.unit("explore-ls", *key) * len(listings))]
    return Exploration("bash", {"command": f"ls {shlex.quote(where)}"}, f"Listing {where}")
