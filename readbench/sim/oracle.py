"""The task's intent as the simulated agent may know it (docs/specs/sim-agent.md, "What it may know").

The corpus writes an oracle dict into the sample store (key ``readbench:oracle``). ALL field
access to it lives in :func:`parse_oracle`, so a field rename is a one-line fix here.
The sim may use ``target_line`` only to decide where a capable model would look; it still has
to see text through tools before acting (readbench.sim.perception).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from readbench.base.store import ORACLE

__all__ = ["ORACLE_KEY", "Goal", "TaskOracle", "parse_oracle"]

ORACLE_KEY = ORACLE


@dataclass(frozen=True)
class Goal:
    """The intent of one prompt (a whole task, or one step of a multi-prompt session).

    ``kind`` is ``"question"`` when an answer is expected, else ``"edit"``. ``edits`` are the
    exact ``(oldText, newText)`` pairs of the intended change (for a bug fix, the current buggy
    snippet and its fix). The ``evidence_*`` fields and ``count_key`` say what must be visible
    before a question is answered (see :func:`_question_evidence`).
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
    """Text that must be verbatim visible."""
    evidence_line: int | None
    """Line that must be visible at a known number."""
    evidence_block_line: int | None = None
    """First line of a block (a definition) that must be visible to its end."""
    count_key: str | None = None
    """Search key whose complete match listing, with ``answer`` matches, answers a count."""


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


def _as_dict(step: Any) -> dict[str, Any]:
    """A step as a dict (the store holds dicts; a dataclass step is accepted too)."""
    if isinstance(step, dict):
        return step
    if dataclasses.is_dataclass(step) and not isinstance(step, type):
        return dataclasses.asdict(step)
    raise ValueError(f"readbench:oracle: a step must be a dict, got {type(step).__name__}")


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _goal(raw: dict[str, Any], parent: dict[str, Any]) -> Goal:
    def get(key: str, default: Any = None) -> Any:
        if key in raw and not (raw[key] is None and key in _INHERITED):
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
    search_key = _text(get("search_key"))
    # a question with no target line can only be answered from the whole file (corpus.md §3.4)
    whole_file = bool(get("whole_file", False)) or (answer is not None and target_line is None)
    evidence = _question_evidence(str(get("kind", "") or ""), answer, target_line, search_key, whole_file) \
        if answer is not None else _Evidence()
    explicit = _text(get("evidence"))
    if explicit is not None:
        evidence = _Evidence(text=explicit, line=evidence.line, block_line=evidence.block_line,
                             count_key=evidence.count_key)
    return Goal(
        kind="question" if answer is not None else "edit",
        target_file=target_file,
        search_key=search_key,
        edits=tuple(edits),
        answer=answer,
        test_cmd=_text(get("test_cmd")),
        whole_file=whole_file,
        target_line=target_line,
        evidence_text=evidence.text,
        evidence_line=evidence.line,
        evidence_block_line=evidence.block_line,
        count_key=evidence.count_key,
    )


@dataclass(frozen=True)
class _Evidence:
    text: str | None = None
    line: int | None = None
    block_line: int | None = None
    count_key: str | None = None


def _question_evidence(kind: str, answer: str, target_line: int | None, search_key: str | None,
                       whole_file: bool) -> _Evidence:
    """What must be visible before answering (the corpus's question kinds, corpus.md §3.2/§3.4/§3.5).

    - ``locate`` steps ("which function holds the bug?"): the search key (the ``def`` line)
      and the bug's line.
    - whole-file counts: every line; or, when a search key exists, a complete search listing
      with exactly ``answer`` matches (counting grep hits, e.g. ERROR lines of a log).
    - a number equal to the target line ("on which line does F start?"): that line at a known number.
    - any other number with a target line (e.g. ``return`` count of F): the whole block that
      starts at the target line, up to the first line indented no deeper.
    - text answers (default values, exception messages, log fields): the answer verbatim and
      the target line.
    """
    numeric = answer.strip().isdigit()
    if kind == "locate":
        return _Evidence(text=search_key, line=target_line)
    if whole_file or target_line is None:
        return _Evidence(count_key=search_key if numeric else None)
    if numeric and int(answer) == target_line:
        return _Evidence(line=target_line)
    if numeric:
        return _Evidence(block_line=target_line)
    return _Evidence(text=answer, line=target_line)


def parse_oracle(raw: dict[str, Any] | None) -> TaskOracle:
    """Turn the store's oracle dict into a :class:`TaskOracle`.

    Fields read: ``task_id``, ``epoch``, ``family``, ``prompts``, ``target_file``,
    ``search_key``, ``old_text``/``new_text`` (or ``edits: [{oldText, newText}]``), ``answer``,
    ``test_cmd``, ``whole_file``, ``target_line``, ``kind`` (``fix``/``answer``/``locate``),
    optional ``evidence`` (text a question's answer rests on), and ``steps`` (a list of
    per-prompt dicts with the same fields; a step that omits
    ``target_file`` or ``test_cmd`` inherits the task's).

    Raises:
        ValueError: ``raw`` is None (not a readbench sample) or lacks a required field.
    """
    if raw is None:
        raise ValueError("no 'readbench:oracle' in the sample store: readbench/sim-* runs only on readbench tasks")
    if "task_id" not in raw:
        raise ValueError("readbench:oracle: 'task_id' is missing")
    steps = [_as_dict(step) for step in raw.get("steps") or []]
    goals = tuple(_goal(step, raw) for step in steps) if steps else (_goal(raw, {}),)
    return TaskOracle(
        task_id=str(raw["task_id"]),
        epoch=int(raw.get("epoch", 1)),
        family=str(raw.get("family", "")),
        prompts=tuple(str(p) for p in raw.get("prompts", [])),
        goals=goals,
    )
