"""Checker pieces: pytest summary parsing (SUBFAILED counts), answer extraction and matching."""

import pytest

from readbench.corpus import Check, grade
from readbench.corpus._check import answer_matches, extract_answer, normalize_answer
from readbench.corpus._testrun import command_passed, parse_pytest_summary, scrub_message

OUT = """\
....F
=========================== short test summary info ============================
SUBFAILED(i=2) tests/test_a.py::T::test_x - AssertionError: 3 != 4
FAILED tests/test_a.py::test_y[a-b] - ValueError: bad <obj at 0x7f12ab34cd56>
FAILED tests/test_a.py::test_y[a-b] - second message ignored
ERROR tests/test_b.py::test_z - fixture 'db' not found
FAILED /work/x/tests/test_c.py::test_w
2 failed, 1 error in 0.1s
"""


def test_summary_parsing_counts_subfailed_and_errors():
    failed, errors, msgs = parse_pytest_summary(OUT, "/work/x")
    assert failed == ("/work/x/tests/test_c.py::test_w", "tests/test_a.py::T::test_x",
                      "tests/test_a.py::test_y[a-b]")
    assert errors == ("tests/test_b.py::test_z",)
    assert msgs["tests/test_a.py::T::test_x"] == "AssertionError: 3 != 4"
    assert msgs["tests/test_a.py::test_y[a-b]"] == "ValueError: bad <obj at 0x…>"
    assert msgs["tests/test_b.py::test_z"] == "fixture 'db' not found"


def test_scrub_message_drops_root_and_addresses():
    assert scrub_message("at /tmp/w1/pkg/m.py: <X at 0xdeadbeef12>", "/tmp/w1") == \
        "at pkg/m.py: <X at 0x…>"


def test_answer_extraction_takes_the_last_answer_line():
    reply = "I think ANSWER: 1 is wrong.\nANSWER: 12\nthinking...\n  ANSWER:  `13`  \n"
    assert extract_answer(reply) == "`13`"
    assert extract_answer("no answer here") is None


def test_normalisation_strips_quotes_and_whitespace_only():
    assert normalize_answer("  'Sample  larger than\tpopulation' ") == "Sample larger than population"
    assert normalize_answer('"\'x\'"') == "x"
    assert normalize_answer("'x\"") == "'x\""  # unmatched quotes stay
    assert answer_matches("ANSWER: 'utf-8'", "utf-8")
    assert answer_matches("ANSWER: 'utf-8'", "'utf-8'")
    assert not answer_matches("ANSWER: utf8", "utf-8")
    assert not answer_matches("", "0")


def test_oracle_problems_flags_an_answer_missing_from_its_line(tmp_path):
    from readbench.corpus._check import oracle_problems
    from readbench.corpus._records import Check, Oracle, Step, TaskRecord

    (tmp_path / "m.py").write_text("def f():\n    raise ValueError('boom')\n")

    def task(*steps):
        return TaskRecord(id="p/locate/0", family="locate", source="p", source_version="1",
                          prompts=("q",) * len(steps), file="m.py", file_lines=2, target_line=2,
                          oracle=Oracle.from_steps(list(steps)), check=Check(kind="answer"), files={})

    ok = Step(kind="answer", target_file="m.py", answer="boom", target_line=2)
    line = Step(kind="answer", target_file="m.py", search_key="def f(", answer="1", target_line=1)
    assert oracle_problems(task(ok, line), tmp_path) == []
    bad = Step(kind="answer", target_file="m.py", answer="bang", target_line=2)
    fix = Step(kind="fix", target_file="m.py", old_text="nope", new_text="x")
    assert oracle_problems(task(bad, fix), tmp_path) == [
        "step 0: answer 'bang' not on line 2", "step 1: old_text occurs 0 times"]


def test_one_grading_rule_for_the_self_check_and_the_scorer():
    answer = Check(kind="answer", answer="42")
    assert grade(answer, ["thinking", "ANSWER: 42"], None) == (True, (True,))
    assert grade(answer, ["ANSWER: 42", "changed my mind"], None) == (False, (False,))  # the last reply counts
    assert grade(answer, [], None) == (False, (False,))
    session = Check(kind="session", test_cmd="pytest -q", answers=("a", None, "c"))
    assert grade(session, ["ANSWER: a"], True) == (False, (True, False))  # a missing reply is ""
    assert grade(session, ["ANSWER: a", "fixed", "ANSWER: c"], False) == (False, (True, True))
    assert grade(session, ["ANSWER: a", "fixed", "ANSWER: c"], True) == (True, (True, True))
    assert grade(Check(kind="tests", test_cmd="pytest -q"), [], False) == (False, ())
    with pytest.raises(ValueError, match="no test command and no expected answer"):
        grade(Check(kind="session", answers=(None,)), ["done"], None)
    assert command_passed(0, "1 passed in 0.1s")
    assert not command_passed(0, "SUBFAILED(i=2) t.py::C::test - AssertionError\n1 passed")  # corpus.md §3.1
    assert not command_passed(0, "ERROR t.py - ImportError")
    assert not command_passed(1, "") and not command_passed(None, "")
