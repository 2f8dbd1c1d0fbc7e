"""The `readbench` scorer: runs the task's checker in the sandbox and attaches every
per-sample metric of shared/specs/metrics.md as flat scalars in ``Score.metadata``.

Checker kinds (from the task record's ``check``):
- ``tests``: the task's own test command, run by bash in the sandbox's repository root with
  the workspace env; success iff it exits 0 (the fail-to-pass tests are in the command).
- ``answer``: the last ``ANSWER: <value>`` line of the final assistant message, compared
  exactly after whitespace and quote normalisation (corpus.md §3.2).
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox, store

from readbench.agent import context
from readbench.metrics.reads import dcp_metrics, effort_metrics, read_metrics

ANSWER_RE = re.compile(r"^\s*ANSWER:\s*(.*?)\s*$", re.MULTILINE)
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def normalize_answer(text: str) -> str:
    """Collapse whitespace, unify curly quotes, strip one pair of surrounding quotes or backticks."""
    text = " ".join(text.translate(_QUOTES).split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1]
    return text


def extract_answer(messages: list[Any]) -> str | None:
    """The value of the last ``ANSWER:`` line of the last assistant message, or None."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant):
            found = ANSWER_RE.findall(message.text)
            return found[-1] if found else None
    return None


async def run_check(check: dict[str, Any], messages: list[Any]) -> tuple[bool, str]:
    """Run one checker. Returns (success, explanation).

    Raises:
        ValueError: unknown check kind (a corpus bug, not a model failure).
    """
    kind = check.get("kind")
    if kind in ("tests", "tests+answer"):
        ws = context.workspace()
        res = await sandbox().exec(
            ["bash", "-c", check["test_cmd"]], env=ws["env"], timeout=int(check.get("timeout_seconds", 300))
        )
        ok = res.returncode == 0
        tail = (res.stdout + res.stderr)[-600:]
        if kind == "tests" or not ok:
            return ok, f"tests exit={res.returncode}\n{tail}"
    if kind in ("answer", "tests+answer"):
        got = extract_answer(messages)
        want = str(check["answer"])
        ok = got is not None and normalize_answer(got) == normalize_answer(want)
        return ok, f"answer={got!r} expected={want!r}"
    raise ValueError(f"unknown check kind {kind!r} in task record")


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
        from readbench.corpus import get_task

        record = get_task(str(state.sample_id))
        try:
            success, explanation = await run_check(record.check, state.messages)
        except TimeoutError:
            success, explanation = False, "checker timed out"
        calls = store().get(context.CALLS, [])
        answered = any(isinstance(m, ChatMessageAssistant) and not m.tool_calls for m in state.messages)
        metrics: dict[str, Any] = {"success": float(success), "stop_reason": stop_reason(success, answered)}
        metrics.update(effort_metrics(state.messages, calls))
        metrics.update(read_metrics(state.messages))
        metrics.update(dcp_metrics(calls))
        metrics.update(store().get(context.CACHE_METRICS, {}))
        sim = (state.output.metadata or {}) if state.output else {}
        metrics["sim_seconds"] = float(sim.get("sim_ts_end_seconds", 0.0))
        return Score(value=float(success), answer=extract_answer(state.messages), explanation=explanation,
                     metadata=metrics)

    return score
