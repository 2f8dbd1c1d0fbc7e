"""The `readbench` scorer: runs the task's checker in the sandbox and attaches every
per-sample metric of shared/specs/metrics.md as flat scalars in ``Score.metadata``.

Checker kinds (the task record's ``check``, readbench.corpus.Check):
- ``tests``: the task's own test command, run by bash in the sandbox's repository root with
  the workspace env; success iff it exits 0 and pytest's summary lists no FAILED, SUBFAILED
  or ERROR (corpus.md §3.1: pytest 9 reports failing subtests as SUBFAILED).
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

from readbench.agent import context
from readbench.corpus import Check, answer_matches, extract_answer
from readbench.corpus._testrun import CHECK_ENV, parse_pytest_summary
from readbench.metrics.reads import dcp_metrics, effort_metrics, read_metrics
from readbench.tools._env import isolated

def final_replies(messages: list[Any]) -> list[str]:
    """The agent's final reply to each user prompt: the last assistant text before the next
    user message, and the last assistant text overall (one entry per user prompt answered)."""
    replies: list[str] = []
    current: str | None = None
    seen_user = False
    for message in messages:
        if isinstance(message, ChatMessageUser):
            if seen_user:
                replies.append(current or "")
            seen_user, current = True, None
        elif isinstance(message, ChatMessageAssistant) and not message.tool_calls:
            current = message.text
    if seen_user:
        replies.append(current or "")
    return replies


async def run_check(check: Check, messages: list[Any]) -> tuple[bool, str]:
    """Grade the sandbox workspace and the replies, with the corpus's rules
    (readbench.corpus: ``tests`` / ``answer`` / ``session`` kinds, pytest summary parsing
    that counts ``SUBFAILED``, answer normalisation).

    Returns:
        (success, explanation).
    """
    replies = final_replies(messages)
    if check.kind == "answer":
        pairs = [(replies[-1] if replies else "", check.answer)]
    elif check.kind == "session":
        padded = replies + [""] * (len(check.answers) - len(replies))
        pairs = list(zip(padded, check.answers))
    else:
        pairs = []
    oks = [answer_matches(got, want) for got, want in pairs if want is not None]
    if not oks and not check.test_cmd:
        # without this, a record with neither tests nor an expected answer would score as solved
        raise ValueError(f"task check of kind {check.kind!r} has no test command and no expected answer")
    notes = [f"answers {sum(oks)}/{len(oks)}"] if oks else []
    tests_ok = None
    if check.test_cmd:
        ws = context.workspace()
        try:
            res = await sandbox().exec(isolated(["bash", "-c", "exec 2>&1\n" + check.test_cmd], {**ws["env"], **CHECK_ENV}),
                                       timeout=int(check.timeout_seconds or 600))
            failed, errors, _ = parse_pytest_summary(res.stdout + res.stderr)
            tests_ok = res.returncode == 0 and not failed and not errors
            notes.insert(0, f"tests exit={res.returncode} failed={len(failed)} errors={len(errors)}")
        except TimeoutError:
            tests_ok = False
            notes.insert(0, "tests timed out")
    return (tests_ok is not False) and all(oks), "; ".join(notes)


def stop_reason(success: bool, answered: bool) -> str:
    """metrics.md `stop_reason`: the loop's recorded reason wins, else solved/wrong/gave_up."""
    recorded = store().get(context.STOP_REASON)
    if recorded:
        return str(recorded)
    if success:
        return "solved"
    return "wrong" if answered else "gave_up"


@scorer(metrics=[accuracy(), stderr()], name="readbench")
def readbench_scorer():
    """Checker + metrics. ``Score.value`` is 1.0 (success) or 0.0; ``metadata`` holds the flat
    per-sample metrics (metrics.md), each a scalar so `samples_df` keeps them."""

    async def score(state: TaskState, target: Target) -> Score:
        from readbench.task import get_task

        record = get_task(str(state.sample_id))
        success, explanation = await run_check(record.check, state.messages)
        calls = store().get(context.CALLS, [])
        answered = any(isinstance(m, ChatMessageAssistant) and not m.tool_calls for m in state.messages)
        metrics: dict[str, Any] = {"success": float(success), "stop_reason": stop_reason(success, answered)}
        metrics.update(effort_metrics(state.messages, calls))
        metrics.update(read_metrics(state.messages))
        metrics.update(dcp_metrics(calls))
        metrics.update(store().get(context.CACHE_METRICS, {}))
        sim = (state.output.metadata or {}) if state.output else {}
        # NaN, not 0, when unmeasured: a real model has no simulated clock
        metrics["sim_seconds"] = float(sim.get("sim_ts_end_seconds", math.nan))
        metrics["wall_seconds"] = float(store().get(context.WALL_SECONDS, math.nan))
        replies = final_replies(state.messages)
        return Score(value=float(success), answer=extract_answer(replies[-1]) if replies else None,
                     explanation=explanation, metadata=metrics)

    return score
