"""Task records built from a killed mutant: exact oracle snippets, prompts without the line."""

import random

from readbench.corpus._assemble import bugfix_record, session_record, symptom
from readbench.corpus._mutate import find_sites

SRC = b"""def first(xs):
    return xs[0]


def middle(xs):
    n = len(xs)
    return xs[n // 2]


def count_pos(xs):
    k = 0
    for x in xs:
        if x > 0:
            k = k + 1
    return k
"""


def _site(op, func):
    return next(s for s in find_sites(SRC) if s.operator == op and s.func == func)


def test_symptom_lists_ids_and_messages_and_caps_at_five():
    failed = tuple(f"t::test_{i}" for i in range(7))
    text = symptom("python3 -m pytest -q t", failed, {"t::test_0": "assert 1 == 2"})
    assert text.splitlines() == [
        "Running `python3 -m pytest -q t` in the repository root fails. These tests fail:", "",
        "- `t::test_0`: assert 1 == 2", "- `t::test_1`", "- `t::test_2`", "- `t::test_3`",
        "- `t::test_4`", "- ... and 2 more"]


def test_bugfix_record_oracle_is_the_unique_mutated_line_and_its_fix():
    site = _site("compare", "count_pos")  # `x > 0` -> `x >= 0` on line 13
    rec = bugfix_record(task_id="p/bugfix/0", family="bugfix", source="p", version="1", file="m.py",
                        pristine=SRC, site=site, failed=("t::a",), messages={"t::a": "boom"},
                        test_cmd="c", env={"PYTHONPATH": "{deps}"}, timeout_seconds=30)
    assert (rec.oracle.old_text, rec.oracle.new_text) == ("        if x >= 0:", "        if x > 0:")
    assert rec.files["m.py"] == SRC.decode().replace("x > 0", "x >= 0")
    assert (rec.target_line, rec.file_lines, rec.oracle.search_key) == (13, 15, "def count_pos(")
    assert "13" not in rec.prompts[0] and "count_pos" not in rec.prompts[0]
    assert rec.prompts[0].endswith("The bug is in `m.py`. Fix it in the library code; do not change "
                                   "the tests. The tests pass once the bug is fixed.")
    assert rec.check.fail_to_pass == ("t::a",) and rec.mutation.original == ">"


def test_non_unique_mutated_line_grows_into_a_unique_snippet():
    site = _site("int", "first")  # `xs[0]` -> `xs[1]`; `    return xs[1]` is unique already
    rec = bugfix_record(task_id="p/bugfix/1", family="bugfix", source="p", version="1", file="m.py",
                        pristine=SRC, site=site, failed=("t::a",), messages={}, test_cmd="c",
                        env={}, timeout_seconds=30)
    assert rec.oracle.old_text == "    return xs[1]"
    src2 = SRC + b"\n\ndef other(xs):\n    return xs[1]\n"
    rec2 = bugfix_record(task_id="p/bugfix/2", family="bugfix", source="p", version="1", file="m.py",
                         pristine=src2, site=site, failed=("t::a",), messages={}, test_cmd="c",
                         env={}, timeout_seconds=30)
    assert rec2.oracle.old_text == "def first(xs):\n    return xs[1]"
    assert rec2.oracle.new_text == "def first(xs):\n    return xs[0]"


def test_session_record_prompts_answers_and_steps_align():
    site = _site("binop", "middle")  # `n // 2` -> `n * 2`
    rec = session_record(task_id="p/session/0", source="p", version="1", file="m.py", pristine=SRC,
                         site=site, failed=("t::a",), messages={}, test_cmd="c", env={},
                         timeout_seconds=30, rng=random.Random(0), min_line=0)
    assert 3 <= len(rec.prompts) <= 4
    assert len(rec.oracle.steps) == len(rec.check.answers) == len(rec.prompts)
    assert rec.check.answers[:2] == ("middle", None)
    assert [s.kind for s in rec.oracle.steps[:3]] == ["locate", "fix", "answer"]
    # random.Random(0).random() = 0.844 >= 0.5: the follow-up asks for the return count
    assert "how many `return` statements" in rec.prompts[2] and rec.check.answers[2] == "1"
    assert rec.oracle.old_text == "    return xs[n * 2]"
