"""The checker's limit is CPU time, not wall time (issue 29): a test run that is slow only
because the machine is loaded is graded on its result; a looping one is still stopped, and the
explanation says which limit stopped it."""

from __future__ import annotations

import time

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import store

from readbench.base import store as rbstore
from readbench.corpus import Check
from readbench.metrics.scorer import WALL_FACTOR, check_limits, run_check


def test_limits_from_the_task_timeout():
    assert check_limits(120) == (120, 120 * WALL_FACTOR)
    assert check_limits(0.2) == (1, WALL_FACTOR)
    assert check_limits(None) == (600, 600 * WALL_FACTOR)
    assert check_limits(0) == (600, 600 * WALL_FACTOR)


def _grade(tmp_path, test_cmd: str, timeout_seconds: float) -> tuple[float, str]:
    check = Check(kind="tests", test_cmd=test_cmd, env={}, timeout_seconds=timeout_seconds)

    @solver
    def setup():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            store().set(rbstore.WORKSPACE, {"cwd": "", "env": {"PATH": "/usr/bin:/bin"}, "sandbox": "local", "rg": "rg"})
            return state
        return solve

    @scorer(metrics=[])
    def grade():
        async def score(state: TaskState, target: Target) -> Score:
            ok, why = await run_check(check, state.messages)
            return Score(value=float(ok), explanation=why)
        return score

    task = Task(dataset=[Sample(id="s", input="x")], solver=setup(), scorer=grade(), sandbox="local")
    [log] = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    s = log.samples[0].scores["grade"]
    return s.value, s.explanation


def test_a_run_longer_than_the_timeout_in_wall_time_only_passes(tmp_path):
    """2 s of wall time with no CPU use against a 1 s timeout: a loaded machine's slow run.
    Graded `tests timed out` (wrong) while the limit was wall time."""
    assert _grade(tmp_path, "sleep 2; echo '1 passed'", 1) == (1.0, "tests exit=0 failed=0 errors=0")


def test_a_looping_run_is_stopped_by_the_cpu_limit(tmp_path):
    t0 = time.monotonic()
    value, why = _grade(tmp_path, "python3 -c 'while True: pass'", 1)
    # SIGXCPU: -24 when bash exec'd python itself (bash 5 does for the last command), else 152
    assert value == 0.0 and why in {f"tests exit={code} failed=0 errors=0; tests exceeded the CPU-time limit (1 s)"
                                    for code in (-24, 152)}, why
    assert time.monotonic() - t0 < 5 * WALL_FACTOR  # not left to the wall-clock backstop


@pytest.mark.slow
def test_a_run_hanging_without_cpu_is_stopped_by_the_wall_backstop(tmp_path):
    value, why = _grade(tmp_path, f"sleep {WALL_FACTOR + 20}", 1)
    assert (value, why) == (0.0, f"tests timed out after {WALL_FACTOR} s wall time (CPU-time limit 1 s not reached)")
