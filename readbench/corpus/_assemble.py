"""Turn generator outputs (questions, killed mutants, logs) into task records (pure).

Prompt templates live here. Bug-fix prompts describe the symptom (the failing test ids and their
messages) and name the file, never the line or function (GitHub issue 2). Questions end with the
``ANSWER: <value>`` instruction; the checker compares exactly after normalisation.
"""

from __future__ import annotations

import ast
import random

from readbench.corpus._logs import LogFacts, log_questions
from readbench.corpus._mutate import MutationSite, apply_site, unique_snippet
from readbench.corpus._questions import Question, functions, locate_questions
from readbench.corpus._records import Check, Mutation, Oracle, Step, TaskRecord

__all__ = ["bugfix_record", "log_record", "question_record", "session_record", "symptom"]

_MAX_LISTED = 5


def _lines(text: str) -> int:
    return text.count("\n")


def symptom(test_cmd: str, failed: tuple[str, ...], messages: dict[str, str]) -> str:
    """The issue text: the command and up to five failing ids with their messages."""
    items = []
    for tid in failed[:_MAX_LISTED]:
        msg = messages.get(tid, "")
        items.append(f"- `{tid}`" + (f": {msg}" if msg else ""))
    if len(failed) > _MAX_LISTED:
        items.append(f"- ... and {len(failed) - _MAX_LISTED} more")
    return (f"Running `{test_cmd}` in the repository root fails. These tests fail:\n\n"
            + "\n".join(items))


def _fix_parts(pristine: bytes, site: MutationSite):
    """(mutated text, fix Step, Mutation) for a site."""
    mutated = apply_site(pristine, site).decode("utf-8")
    prefix = pristine[: site.byte_start].decode("utf-8")
    start = len(prefix)
    end = start + len(site.new)
    snippet, lo, hi = unique_snippet(mutated, start, end)
    fixed = snippet[: start - lo] + site.old + snippet[end - lo:]
    return mutated, snippet, fixed


def bugfix_record(*, task_id: str, family: str, source: str, version: str, file: str,
                  pristine: bytes, site: MutationSite, failed: tuple[str, ...],
                  messages: dict[str, str], test_cmd: str, env: dict[str, str],
                  timeout_seconds: float) -> TaskRecord:
    """A bug-fix task (families ``bugfix`` and ``midsize``) from a killed mutant."""
    mutated, old, new = _fix_parts(pristine, site)
    prompt = (symptom(test_cmd, failed, messages)
              + f"\n\nThe bug is in `{file}`. Fix it in the library code; do not change the "
                "tests. The tests pass once the bug is fixed.")
    step = Step(kind="fix", target_file=file, search_key=f"def {site.func.rsplit('.', 1)[-1]}(",
                old_text=old, new_text=new, target_line=site.line)
    return TaskRecord(
        id=task_id, family=family, source=source, source_version=version, prompts=(prompt,),
        file=file, file_lines=_lines(mutated), target_line=site.line,
        oracle=Oracle.from_steps([step]),
        check=Check(kind="tests", test_cmd=test_cmd, env=env, timeout_seconds=timeout_seconds,
                    fail_to_pass=failed),
        files={file: mutated}, question_kind=site.operator,
        mutation=Mutation(site.operator, site.line, site.byte_start, site.byte_end, site.old,
                          site.new, site.func),
    )


def question_record(*, task_id: str, family: str, source: str, version: str, file: str,
                    text: str, q: Question) -> TaskRecord:
    """A locate-and-answer or whole-file question task over a pristine file."""
    step = Step(kind="answer", target_file=file, search_key=q.search_key, answer=q.answer,
                target_line=q.target_line, whole_file=q.target_line is None)
    return TaskRecord(
        id=task_id, family=family, source=source, source_version=version, prompts=(q.prompt,),
        file=file, file_lines=_lines(text), target_line=q.target_line,
        oracle=Oracle.from_steps([step]), check=Check(kind="answer", answer=q.answer),
        files={}, question_kind=q.kind,
    )


def log_record(*, task_id: str, path: str, text: str, facts: LogFacts, kind: str,
               rng: random.Random) -> TaskRecord:
    """A needle-in-a-log task; the log is written into the workspace via ``files``."""
    prompt, answer, line, key = log_questions(facts, path, kind, rng)
    step = Step(kind="answer", target_file=path, search_key=key, answer=answer, target_line=line,
                whole_file=line is None)
    return TaskRecord(
        id=task_id, family="log", source="logs", source_version="", prompts=(prompt,), file=path,
        file_lines=facts.n_lines, target_line=line, oracle=Oracle.from_steps([step]),
        check=Check(kind="answer", answer=answer), files={path: text}, question_kind=kind,
    )


def session_record(*, task_id: str, source: str, version: str, file: str, pristine: bytes,
                   site: MutationSite, failed: tuple[str, ...], messages: dict[str, str],
                   test_cmd: str, env: dict[str, str], timeout_seconds: float,
                   rng: random.Random, min_line: int) -> TaskRecord:
    """A 3-5 prompt session: locate the buggy function, fix it, then follow-up questions.

    Prompt 3 asks the fixed function's ``def`` line or its ``return`` count; with probability
    1/2 a fourth prompt asks a locate question about another function past ``min_line``.
    """
    mutated, old, new = _fix_parts(pristine, site)
    text = pristine.decode("utf-8")
    key = f"def {site.func.rsplit('.', 1)[-1]}("
    p1 = (symptom(test_cmd, failed, messages)
          + f"\n\nThe bug is in `{file}`. Do not change anything yet: which function or method "
            "contains the bug? Give its qualified name (`Class.method` for methods, "
            "`outer.inner` for nested functions). Reply with the answer alone on a final line "
            "of the form `ANSWER: <value>`.")
    p2 = "Now fix that bug in the library code; do not change the tests. The tests must pass."
    fn = next(f for f in functions(ast.parse(text)) if f.qualname == site.func)
    if rng.random() < 0.5:
        p3 = (f"Follow-up: on which line of `{file}` does `{site.func}` start (its `def` line)? "
              "Reply with the answer alone on a final line of the form `ANSWER: <value>`.")
        a3 = str(fn.node.lineno)
    else:
        n = sum(isinstance(x, ast.Return) for x in ast.walk(fn.node))
        p3 = (f"Follow-up: how many `return` statements does `{site.func}` contain, counting "
              "nested functions too? Reply with the answer alone on a final line of the form "
              "`ANSWER: <value>`.")
        a3 = str(n)
    steps = [
        Step(kind="locate", target_file=file, search_key=key, answer=site.func,
             target_line=site.line),
        Step(kind="fix", target_file=file, search_key=key, old_text=old, new_text=new,
             target_line=site.line),
        Step(kind="answer", target_file=file, search_key=key, answer=a3,
             target_line=fn.node.lineno),
    ]
    prompts = [p1, p2, p3]
    answers: list[str | None] = [site.func, None, a3]
    if rng.random() < 0.5:
        extra = [q for q in locate_questions(text, file, 4, rng, min_line)
                 if q.search_key != key][:1]
        for q in extra:
            prompts.append(f"One more question about the same file. {q.prompt}")
            answers.append(q.answer)
            steps.append(Step(kind="answer", target_file=file, search_key=q.search_key,
                              answer=q.answer, target_line=q.target_line))
    return TaskRecord(
        id=task_id, family="session", source=source, source_version=version,
        prompts=tuple(prompts), file=file, file_lines=_lines(mutated), target_line=site.line,
        oracle=Oracle.from_steps(steps),
        check=Check(kind="session", test_cmd=test_cmd, env=env, timeout_seconds=timeout_seconds,
                    fail_to_pass=failed, answers=tuple(answers)),
        files={file: mutated}, question_kind=site.operator,
        mutation=Mutation(site.operator, site.line, site.byte_start, site.byte_end, site.old,
                          site.new, site.func),
    )
