"""A tiny corpus for end-to-end tests: generated files only (the `logs` source has an empty
tree), so no download is needed. One bug fix in a 2,600-line module checked by its unittest,
one locate-and-answer question."""

from __future__ import annotations

from pathlib import Path

from readbench.corpus import Check, Oracle, Step, TaskRecord
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
