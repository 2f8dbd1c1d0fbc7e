"""A tiny corpus for end-to-end tests: generated files only (the `logs` source has an empty
tree), so no download is needed. One bug fix in a 2,600-line module checked by its unittest,
one locate-and-answer question. `tiny_corpus_fixture` points a test's environment at it;
`eval_ok` runs tasks on it and asserts every run succeeded."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from readbench.corpus import Check, Oracle, Step, TaskRecord, task_index
from readbench.corpus._records import write_jsonl

N_FUNCS = 520  # 5 lines each -> a ~2,600-line file


def big_module(bug: bool) -> str:
    lines = ['"""Generated arithmetic helpers."""', ""]
    for i in range(N_FUNCS):
        body = "return a - b" if (bug and i == 480) else ("return a + b" if i == 480 else f"return a * {i} + b")
        lines += [f"def helper_{i}(a, b):", f'    """Helper number {i}."""', f"    {body}", "", ""]
    lines.append('LIMIT_MESSAGE = "limit of 4096 exceeded"')
    return "\n".join(lines) + "\n"


TEST_FILE = '''import unittest
import calc


class CalcTests(unittest.TestCase):
    def test_helper_480(self):
        self.assertEqual(calc.helper_480(2, 3), 5)


if __name__ == "__main__":
    unittest.main()
'''


def records() -> list[TaskRecord]:
    module = big_module(bug=True)
    n_lines = module.count("\n")
    fix_line = module.splitlines().index("    return a - b") + 1
    fix = TaskRecord(
        id="logs/bugfix/0", family="bugfix", source="logs", source_version="",
        prompts=("test_calc.py fails: CalcTests.test_helper_480 expects helper_480(2, 3) == 5. "
                 "Fix the bug in calc.py. Run the tests with: python3 test_calc.py",),
        file="calc.py", file_lines=n_lines, target_line=fix_line,
        oracle=Oracle(target_file="calc.py", search_key="def helper_480(", old_text="    return a - b",
                      new_text="    return a + b", answer=None, target_line=fix_line, whole_file=False,
                      steps=(Step(kind="fix", target_file="calc.py", search_key="def helper_480(",
                                  old_text="    return a - b", new_text="    return a + b",
                                  target_line=fix_line),)),
        check=Check(kind="tests", test_cmd="python3 test_calc.py", env={}, timeout_seconds=60),
        files={"calc.py": module, "test_calc.py": TEST_FILE},
    )
    answer_line = n_lines
    question = TaskRecord(
        id="logs/locate/0", family="locate", source="logs", source_version="",
        prompts=("What is the exact value of LIMIT_MESSAGE in calc.py? Reply with a final line `ANSWER: <value>`.",),
        file="calc.py", file_lines=n_lines, target_line=answer_line,
        oracle=Oracle(target_file="calc.py", search_key="LIMIT_MESSAGE =", old_text=None, new_text=None,
                      answer="limit of 4096 exceeded", target_line=answer_line, whole_file=False,
                      steps=(Step(kind="answer", target_file="calc.py", search_key="LIMIT_MESSAGE =",
                                  answer="limit of 4096 exceeded", target_line=answer_line),)),
        check=Check(kind="answer", answer="limit of 4096 exceeded"),
        files={"calc.py": big_module(bug=False)},
        question_kind="constant",
    )
    return [fix, question]


def write_corpus(directory: Path) -> Path:
    path = directory / "tasks.jsonl"
    write_jsonl(records(), path)
    return path


def tiny_corpus_fixture(*, own_cache: bool, own_workspaces: bool = False, env: dict[str, str] | None = None,
                        name: str = "tiny_corpus") -> Callable[..., Iterator[Path]]:
    """A pytest fixture named `name` (assign it to that name in the test module) yielding the test's
    `tmp_path`, with READBENCH_TASKS at the tiny corpus written there and the task index cleared
    before and after.

    Args:
        own_cache: READBENCH_CACHE at `tmp_path/cache`. False for the real harnesses and Docker
            tests: the agents' installs and images are cached in the user's cache.
        own_workspaces: READBENCH_WORKSPACES at `tmp_path/ws` (the local sandbox's workspaces),
            for tests that look at the workspace paths.
        env: more environment variables to set.
        name: the fixture's name.
    """

    @pytest.fixture(name=name)
    def fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
        if own_cache:
            monkeypatch.setenv("READBENCH_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
        if own_workspaces:
            monkeypatch.setenv("READBENCH_WORKSPACES", str(tmp_path / "ws"))
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        task_index.cache_clear()
        yield tmp_path
        task_index.cache_clear()

    return fixture


def eval_ok(tasks: Task | list[Task], model: Any, log_dir: Path, **kwargs: Any) -> list[EvalLog]:
    """`inspect_eval(tasks, model=model, log_dir=log_dir, display="none", log_realtime=False, **kwargs)`,
    asserting one log per task, each with status `success` (the logs' errors shown otherwise).
    ``log_realtime=False``: inspect's live-view event buffer (SQLite, read only by `inspect view`
    during a run) is not written; the log file holds every event all the same."""
    logs = inspect_eval(tasks, model=model, log_dir=str(log_dir), display="none", log_realtime=False, **kwargs)
    n = len(tasks) if isinstance(tasks, list) else 1
    assert [log.status for log in logs] == ["success"] * n, [log.error for log in logs]
    return logs
