"""The task checker: answer matching, workspace materialisation and the oracle self-check.

Answers are read from the last line of the form ``ANSWER: <value>`` and compared exactly after
normalisation (surrounding whitespace, runs of whitespace, and enclosing quotes or backticks).
Test tasks pass when ``test_cmd`` exits 0 and pytest reports no failed test (``FAILED`` and pytest
9's ``SUBFAILED`` lines count, docs/specs/corpus.md §3.1).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from readbench.corpus._records import Check, TaskRecord
from readbench.corpus._testrun import expand_env, run_tests

__all__ = [
    "CheckResult",
    "SelfCheck",
    "answer_matches",
    "answers_ok",
    "apply_oracle",
    "extract_answer",
    "grade",
    "materialize",
    "normalize_answer",
    "oracle_problems",
    "run_check",
    "self_check",
]

_ANSWER = re.compile(r"^\s*ANSWER:\s*(.*?)\s*$", re.MULTILINE)
_QUOTES = ("\"\"", "''", "``")


def normalize_answer(value: str) -> str:
    """Strip, collapse whitespace runs to one space, and peel matching quotes or backticks."""
    v = " ".join(value.split())
    while len(v) >= 2 and (v[0] + v[-1]) in _QUOTES:
        v = v[1:-1].strip()
    return v


def extract_answer(text: str) -> str | None:
    """The value of the last ``ANSWER:`` line of a reply, or None if there is none."""
    hits = _ANSWER.findall(text)
    return hits[-1] if hits else None


def answer_matches(reply: str, expected: str) -> bool:
    """Whether ``reply``'s last ``ANSWER:`` value equals ``expected`` after normalisation."""
    got = extract_answer(reply)
    return got is not None and normalize_answer(got) == normalize_answer(expected)


def answers_ok(check: Check, replies: list[str]) -> tuple[bool, ...]:
    """Per expected answer, whether the agent's reply matches it (`answer_matches`).

    ``answer``: the last reply against ``check.answer``; ``session``: the reply to each prompt (a
    missing reply is "") against ``check.answers``, None entries (fix prompts) skipped; ``tests``:
    no answer (docs/specs/corpus.md §3.2).

    Args:
        replies: the agent's final reply per prompt, in prompt order.
    """
    if check.kind == "answer":
        pairs = [(replies[-1] if replies else "", check.answer)]
    elif check.kind == "session":
        pairs = list(zip(list(replies) + [""] * (len(check.answers) - len(replies)), check.answers))
    else:
        pairs = []
    return tuple(answer_matches(got, want) for got, want in pairs if want is not None)


def grade(check: Check, replies: list[str], tests_passed: bool | None) -> tuple[bool, tuple[bool, ...]]:
    """The one grading rule of a task (the corpus self-check and the benchmark's scorer alike):
    solved when the tests, if the task runs any, passed and every expected answer matches.

    Args:
        replies: the agent's final reply per prompt.
        tests_passed: the outcome of ``check.test_cmd`` (readbench.corpus._testrun.command_passed);
            None when the task runs no tests.

    Returns:
        (solved, per-answer matches from `answers_ok`).

    Raises:
        ValueError: the check has neither a test command nor an expected answer (it would grade
            every attempt as solved).
    """
    oks = answers_ok(check, replies)
    if not oks and not check.test_cmd:
        raise ValueError(f"task check of kind {check.kind!r} has no test command and no expected answer")
    return (tests_passed is not False) and all(oks), oks


def materialize(task: TaskRecord, tree: Path, dest: Path) -> Path:
    """Copy the pristine ``tree`` to ``dest`` and write the task's ``files`` over it.

    Returns:
        ``dest``. Raises FileExistsError if ``dest`` exists.
    """
    shutil.copytree(tree, dest, symlinks=True)
    for rel, content in task.files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", newline="")
    return dest


def apply_oracle(task: TaskRecord, root: Path) -> None:
    """Apply every fix step of the oracle (old_text -> new_text, which must occur once).

    Raises:
        ValueError: old_text is not found exactly once in its file (names task and file).
    """
    for step in task.oracle.steps:
        if step.kind != "fix":
            continue
        path = root / step.target_file
        text = path.read_text(encoding="utf-8")
        n = text.count(step.old_text or "")
        if n != 1:
            raise ValueError(f"{task.id}: old_text occurs {n} times in {step.target_file}")
        assert step.old_text is not None and step.new_text is not None  # a fix step has both
        path.write_text(text.replace(step.old_text, step.new_text, 1), encoding="utf-8", newline="")


def oracle_problems(task: TaskRecord, root: Path) -> list[str]:
    """Consistency of the oracle with the workspace, as the simulated agent relies on it.

    Checks (docs/specs/sim-agent.md "The perception rule"): a fix step's old_text occurs once
    in its file; a text answer is verbatim on its target line; a numeric answer equal to the
    target line is a line holding the search key. Returns one message per problem (empty = ok).
    """
    problems = []
    for i, step in enumerate(task.oracle.steps):
        path = root / step.target_file
        if not path.exists():
            problems.append(f"step {i}: {step.target_file} missing")
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if step.kind == "fix" and text.count(step.old_text or "\0") != 1:
            problems.append(f"step {i}: old_text occurs {text.count(step.old_text or '')} times")
        if step.kind != "answer" or step.answer is None or step.target_line is None:
            continue
        if not 1 <= step.target_line <= len(lines):
            problems.append(f"step {i}: target_line {step.target_line} outside 1..{len(lines)}")
            continue
        line = lines[step.target_line - 1]
        if step.answer.isdigit() and int(step.answer) == step.target_line:
            if step.search_key and step.search_key not in line:
                problems.append(f"step {i}: line {step.target_line} lacks {step.search_key!r}")
        elif not step.answer.isdigit() and step.answer not in line:
            problems.append(f"step {i}: answer {step.answer!r} not on line {step.target_line}")
    return problems


@dataclass(frozen=True)
class CheckResult:
    """Outcome of grading one attempt.

    Attributes:
        passed: every part passed.
        tests_passed: None when the task runs no tests.
        answers_ok: per expected answer (None entries of session tasks are skipped).
        failed_tests: ids pytest reported as failed or errored.
        detail: one line for humans.
    """

    passed: bool
    tests_passed: bool | None
    answers_ok: tuple[bool, ...]
    failed_tests: tuple[str, ...]
    detail: str


def run_check(task: TaskRecord, root: Path, deps: Path, replies: list[str]) -> CheckResult:
    """Grade a workspace and the agent's replies.

    Args:
        task: the task.
        root: the workspace (task files applied, agent edits made).
        deps: the source's deps dir (fills ``{deps}`` in the env).
        replies: the agent's final reply per prompt (answer tasks use the last one).

    Returns:
        CheckResult.

    Raises:
        ValueError: as `grade` (a check with neither tests nor an expected answer).
    """
    c = task.check
    tests_ok, detail = None, ""
    failed: tuple[str, ...] = ()
    if c.test_cmd:
        r = run_tests(c.test_cmd, root, expand_env(c.env, deps), c.timeout_seconds or 600)
        tests_ok, failed = r.passed, r.failed + r.errors
        detail = f"tests {'pass' if r.passed else 'fail'} ({r.duration_seconds:.1f} s" + \
            (", timeout" if r.timed_out else "") + f", {len(failed)} failed)"
    passed, oks = grade(c, replies, tests_ok)
    if oks:
        detail = (detail + "; " if detail else "") + f"answers {sum(oks)}/{len(oks)}"
    return CheckResult(passed, tests_ok, oks, failed, detail)


@dataclass(frozen=True)
class SelfCheck:
    """``tasks check`` result: the checker must fail without the oracle and pass with it."""

    task_id: str
    without: CheckResult
    with_oracle: CheckResult
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Fails without the oracle's solution, passes with it, and the oracle is consistent."""
        return (not self.without.passed) and self.with_oracle.passed and not self.problems


def self_check(task: TaskRecord, tree: Path, deps: Path) -> SelfCheck:
    """Apply the oracle's solution in a temporary copy and grade with and without it.

    "Without" runs the tests on the task workspace unchanged and gives empty replies; "with"
    applies every fix step and replies ``ANSWER: <expected>`` to each prompt.
    """
    answers = [s.answer for s in task.oracle.steps]
    good = [f"ANSWER: {a}" if a is not None else "done" for a in answers]
    with tempfile.TemporaryDirectory(prefix="rbcheck-") as tmp:
        root = materialize(task, tree, Path(tmp) / "without")
        problems = tuple(oracle_problems(task, root))
        without = run_check(task, root, deps, [""] * len(task.prompts))
        root = materialize(task, tree, Path(tmp) / "with")
        apply_oracle(task, root)
        with_oracle = run_check(task, root, deps, good)
    return SelfCheck(task.id, without, with_oracle, problems)
