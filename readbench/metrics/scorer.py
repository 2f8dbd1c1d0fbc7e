"""The `readbench` scorer: runs the task's checker in the sandbox and attaches every
per-sample metric of docs/specs/metrics.md as flat scalars in ``Score.metadata``.

Checker kinds (the task record's ``check``, readbench.corpus.Check):
- ``tests``: the task's own test command, run by bash in the sandbox's repository root with
  the workspace env; success iff it exits 0 and pytest's summary lists no FAILED, SUBFAILED
  or ERROR (corpus.md §3.1: pytest 9 reports failing subtests as SUBFAILED). Its limit is
  CPU time, not wall time (`check_limits`, GitHub issue 29).
- ``answer``: the last ``ANSWER: <value>`` line of the final reply, compared exactly after
  whitespace and quote normalisation (corpus.md §3.2).
- ``session``: the tests (if any) and each prompt's expected answer.
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox, store

from readbench.base import store as rbstore
from readbench.corpus import Check, extract_answer, grade
from readbench.corpus._testrun import CHECK_ENV, command_passed, parse_pytest_summary
from readbench.metrics.reads import dcp_metrics, effort_metrics, read_metrics
from readbench.tools._env import isolated

#: the wall-clock backstop of a checker run, in multiples of the task's ``timeout_seconds``
WALL_FACTOR = 10
#: exit statuses of a process killed by SIGXCPU (the soft CPU-time limit): bash's 128 + 24, or
#: the signal itself when bash exec'd the command
CPU_LIMIT_STATUSES = (152, -24)


def check_limits(timeout_seconds: float | None) -> tuple[int, int]:
    """The checker's (CPU-seconds limit, wall-seconds backstop) for a task's ``timeout_seconds``.

    The corpus sets ``timeout_seconds`` from the wall time of the unmodified tests on the build
    machine (``min(cap, 3 x baseline + 10)``, readbench.corpus._build). Used as a wall-clock
    limit it made grading depend on load: on 2 cores at load average ~27 the same workspace was
    graded `solved` in one run and `wrong` (``tests timed out``) in another (2 of 84 smoke
    samples). It is now a soft ``ulimit -t`` on each process of
    the test run (CPU seconds, which load does not inflate: a run that needed a few CPU seconds
    idle needs about as many at any load), so a looping test is still stopped; the wall clock
    only catches a run that hangs without using CPU (sleep, deadlock), after `WALL_FACTOR` times
    as long. Absent or non-positive ``timeout_seconds``: 600.

    Returns:
        ``(cpu_seconds, wall_seconds)``, both whole seconds >= 1.
    """
    cpu = max(1, math.ceil(timeout_seconds)) if timeout_seconds and timeout_seconds > 0 else 600
    return cpu, cpu * WALL_FACTOR


def final_replies(messages: list[Any]) -> list[str]:
    """The agent's final reply to each user prompt: the last assistant text before the next
    user message, and the last assistant text overall (one entry per user prompt answered). A user
    message a harness sent as context (metadata `harness_context`: Codex's `<environment_context>`
    and the like, marked when its rollout is imported) is no prompt."""
    replies: list[str] = []
    current: str | None = None
    seen_user = False
    for message in messages:
        if isinstance(message, ChatMessageUser) and not (message.metadata or {}).get("harness_context"):
            if seen_user:
                replies.append(current or "")
            seen_user, current = True, None
        elif isinstance(message, ChatMessageAssistant) and not message.tool_calls:
            current = message.text
    if seen_user:
        replies.append(current or "")
    return replies


async def run_check(check: Check, messages: list[Any]) -> tuple[bool, str]:
    """Grade the sandbox workspace and the replies with the corpus's rule (readbench.corpus.grade:
    the tests, if any, run in the sandbox with the workspace env under `check_limits` and pass as
    readbench.corpus._testrun.command_passed says, and every expected answer matches).

    Returns:
        (success, explanation); the explanation says when the CPU-time limit or the wall-clock
        backstop stopped the tests.

    Raises:
        ValueError: the check has neither a test command nor an expected answer.
    """
    replies = final_replies(messages)
    tests_ok = None
    notes = []
    if check.test_cmd:
        ws = rbstore.workspace()
        cpu, wall = check_limits(check.timeout_seconds)
        script = f"ulimit -S -t {cpu}\nexec 2>&1\n{check.test_cmd}"
        try:
            res = await sandbox().exec(isolated(["bash", "-c", script], {**ws["env"], **CHECK_ENV}), timeout=wall)
            output = res.stdout + res.stderr
            tests_ok = command_passed(res.returncode, output)
            failed, errors, _ = parse_pytest_summary(output)
            notes.append(f"tests exit={res.returncode} failed={len(failed)} errors={len(errors)}")
            if res.returncode in CPU_LIMIT_STATUSES:
                tests_ok = False
                notes.append(f"tests exceeded the CPU-time limit ({cpu} s)")
        except TimeoutError:
            tests_ok = False
            notes.append(f"tests timed out after {wall} s wall time (CPU-time limit {cpu} s not reached)")
    success, oks = grade(check, replies, tests_ok)
    if oks:
        notes.append(f"answers {sum(oks)}/{len(oks)}")
    return success, "; ".join(notes)


def stop_reason(success: bool, answered: bool, recorded: str | None = None) -> str:
    """metrics.md `stop_reason`: the loop's recorded reason wins, else solved/wrong/gave_up
    (`answered`: the agent gave a non-empty final reply; an empty one is giving up)."""
    if recorded:
        return str(recorded)
    if success:
        return "solved"
    return "wrong" if answered else "gave_up"


def answered(messages: list[Any]) -> bool:
    """Whether any assistant reply without tool calls has text (an empty reply is no answer)."""
    return any(isinstance(m, ChatMessageAssistant) and not m.tool_calls and m.text.strip() for m in messages)


def reply_flags(calls: list[dict[str, Any]]) -> dict[str, float]:
    """``truncated_replies``: calls whose reply was cut at max_tokens (inspect's stop_reason
    ``max_tokens``); ``final_reply_truncated``: 1.0 when the last call's reply was (the answer
    graded may be incomplete), else 0.0."""
    cut = [c.get("stop_reason") == "max_tokens" for c in calls]
    return {"truncated_replies": float(sum(cut)), "final_reply_truncated": float(bool(cut and cut[-1]))}


def sample_metrics(messages: list[Any], values: dict[str, Any], success: float, output_metadata: dict[str, Any]) -> dict[str, Any]:
    """Every per-sample metric of metrics.md but the checker's, from the history and the store.

    Args:
        messages: the full history (``state.messages`` or ``EvalSample.messages``).
        values: the sample store as a mapping (readbench.base.store keys).
        success: 1.0 / 0.0 from the checker; NaN when the checker did not run.
        output_metadata: the last model output's metadata (the sim's clock), {} when none.

    Returns:
        The flat ``Score.metadata`` dict (scalars): success, stop_reason, effort, reads, DCP,
        native usage, cache metrics per cache model, sim_seconds, wall_seconds, reply flags.
    """
    calls = values.get(rbstore.CALLS, [])
    ok = success == 1.0
    metrics: dict[str, Any] = {"success": success,
                               "stop_reason": stop_reason(ok, answered(messages), values.get(rbstore.STOP_REASON))}
    metrics.update(effort_metrics(messages, calls))
    metrics.update(read_metrics(messages))
    metrics.update(dcp_metrics(calls))
    metrics.update(reply_flags(calls))
    metrics.update(values.get(rbstore.NATIVE_METRICS, {}))
    metrics.update(values.get(rbstore.CACHE_METRICS, {}))
    # NaN, not 0, when unmeasured: a real model has no simulated clock
    metrics["sim_seconds"] = float(output_metadata.get("sim_ts_end_seconds", math.nan))
    metrics["wall_seconds"] = float(values.get(rbstore.WALL_SECONDS, math.nan))
    return metrics


def errored_sample_metrics(sample: Any) -> dict[str, Any]:
    """`sample_metrics` of an inspect ``EvalSample`` that errored (no scorer ran): what it used
    until the error, from its history and store, with ``stop_reason = error`` and success 0
    (an errored sample is a failure: docs/specs/metrics.md "Outcome")."""
    values = dict(sample.store or {})
    values[rbstore.STOP_REASON] = "error"
    out = sample.output
    meta = (out.metadata or {}) if out is not None and out.choices else {}
    return sample_metrics(list(sample.messages or []), values, 0.0, meta)


@scorer(metrics=[accuracy(), stderr()], name="readbench")
def readbench_scorer():
    """Checker + metrics. ``Score.value`` is 1.0 (success) or 0.0; ``metadata`` holds the flat
    per-sample metrics (metrics.md), each a scalar so `samples_df` keeps them."""

    async def score(state: TaskState, target: Target) -> Score:
        from readbench.base.budget import record_outcome
        from readbench.corpus import get_task  # looked up at call time: tests replace it

        record = get_task(str(state.sample_id))
        success, explanation = await run_check(record.check, state.messages)
        record_outcome(float(success))  # --sequential (readbench.base.budget)
        values = {key: store().get(key) for key in rbstore.SAMPLE_RESULT_KEYS}
        values = {k: v for k, v in values.items() if v is not None}
        sim = (state.output.metadata or {}) if state.output else {}
        metrics = sample_metrics(state.messages, values, float(success), sim)
        replies = final_replies(state.messages)
        return Score(value=float(success), answer=extract_answer(replies[-1]) if replies else None,
                     explanation=explanation, metadata=metrics)

    return score
