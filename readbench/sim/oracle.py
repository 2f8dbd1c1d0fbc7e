"""The task's intent as the simulated agent may know it (shared/specs/sim-agent.md, "What it may know").

The corpus writes an oracle dict into the sample store (key ``readbench:oracle``). ALL field
access to it lives in :func:`parse_oracle`, so a field rename is a one-line fix here.
The sim may use ``target_line`` only to decide where a capable model would look; it still has
to see text through tools before acting (readbench.sim.perception).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ORACLE_KEY", "Goal", "TaskOracle", "parse_oracle"]

ORACLE_KEY = "readbench:oracle"


@dataclass(frozen=True)
class Goal:
    """The intent of one prompt (a whole task, or one step of a multi-prompt session).

    ``kind`` is ``"question"`` when an answer is expected, else ``"edit"``. ``edits`` are the
    exact ``(oldText, newText)`` pairs of the intended change (for a bug fix, the current buggy
    snippet and its fix). ``evidence_text`` / ``evidence_line`` say what must be visible before a
    question is answered (see :func:`parse_oracle`).
    """

    kind: str
    target_file: str
    search_key: str | None
    edits: tuple[tuple[str, str], ...]
    answer: str | None
    test_cmd: str | None
    whole_file: bool
    target_line: int | None
    evidence_text: str | None
    evidence_line: int | None


@dataclass(frozen=True)
class TaskOracle:
    """One sample's oracle: identity (``task_id``, ``epoch``), ``family``, ``prompts`` and one
    :class:`Goal` per prompt (``goals[i]`` is started by the (i+1)-th user message)."""

    task_id: str
    epoch: int
    family: str
    prompts: tuple[str, ...]
    goals: tuple[Goal, ...]


_INHERITED = ("target_file", "test_cmd")  # a step without these uses the task's


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _goal(raw: dict[str, Any], parent: dict[str, Any]) -> Goal:
    def get(key: str, default: Any = None) -> Any:
        if key in raw:
            return raw[key]
        return parent.get(key, default) if key in _INHERITED else default

    target_file = _text(get("target_file"))
    if target_file is None:
        raise ValueError("readbench:oracle: 'target_file' is missing")
    answer = _text(get("answer"))
    edits: list[tuple[str, str]] = [(str(e["oldText"]), str(e["newText"])) for e in get("edits") or []]
    old_text, new_text = _text(get("old_text")), get("new_text")
    if not edits and answer is None and old_text is not None:
        edits = [(old_text, "" if new_text is None else str(new_text))]
    if answer is None and not edits:
        raise ValueError(f"readbench:oracle for {target_file!r} has neither 'answer' nor 'old_text'/'edits'")
    target_line = get("target_line")
    target_line = int(target_line) if target_line not in (None, "") else None
    evidence_text = _text(get("evidence"))
    evidence_line = None
    if answer is not None:
        if evidence_text is None:
            evidence_text = old_text
        if answer.strip().isdigit() and target_line is not None and int(answer) == target_line:
            evidence_line = target_line  # a line-number question: the line must be seen at a known number
        elif evidence_text is None:
            evidence_text = answer
            if len(answer.strip()) < 4 and target_line is not None:
                evidence_line = target_line  # a short answer ("3") proves nothing by itself
    return Goal(
        kind="question" if answer is not None else "edit",
        target_file=target_file,
        search_key=_text(get("search_key")),
        edits=tuple(edits),
        answer=answer,
        test_cmd=_text(get("test_cmd")),
        whole_file=bool(get("whole_file", False)),
        target_line=target_line,
        evidence_text=evidence_text,
        evidence_line=evidence_line,
    )


def parse_oracle(raw: dict[str, Any] | None) -> TaskOracle:
    """Turn the store's oracle dict into a :class:`TaskOracle`.

    Fields read: ``task_id``, ``epoch``, ``family``, ``prompts``, ``target_file``,
    ``search_key``, ``old_text``/``new_text`` (or ``edits: [{oldText, newText}]``), ``answer``,
    ``test_cmd``, ``whole_file``, ``target_line``, optional ``evidence`` (text a question's answer
    rests on), and ``steps`` (a list of per-prompt dicts with the same fields; a step that omits
    ``target_file`` or ``test_cmd`` inherits the task's).

    Raises:
        ValueError: ``raw`` is None (not a readbench sample) or lacks a required field.
    """
    if raw is None:
        raise ValueError("no 'readbench:oracle' in the sample store: readbench/sim-* runs only on readbench tasks")
    if "task_id" not in raw:
        raise ValueError("readbench:oracle: 'task_id' is missing")
    steps = raw.get("steps") or []
    goals = tuple(_goal(step, raw) for step in steps) if steps else (_goal(raw, {}),)
    return TaskOracle(
        task_id=str(raw["task_id"]),
        epoch=int(raw.get("epoch", 1)),
        family=str(raw.get("family", "")),
        prompts=tuple(str(p) for p in raw.get("prompts", [])),
        goals=goals,
    )
