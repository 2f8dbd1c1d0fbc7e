"""The log generator is deterministic and its planted facts are true of the text."""

import hashlib
import random

import pytest

from readbench.corpus._logs import SERVICES, generate_log, log_questions


def test_same_seed_same_bytes_other_seed_other_bytes():
    a, fa = generate_log(7, 3000)
    b, fb = generate_log(7, 3000)
    c, _ = generate_log(8, 3000)
    assert a == b and fa == fb
    assert hashlib.sha256(a.encode()).hexdigest() != hashlib.sha256(c.encode()).hexdigest()


def test_planted_facts_hold_in_the_text():
    text, facts = generate_log("x", 900)
    lines = text.splitlines()
    assert len(lines) == facts.n_lines == 900 and text.endswith("\n")
    fatal = [i + 1 for i, ln in enumerate(lines) if " FATAL " in ln]
    assert fatal == [facts.fatal_line] and facts.fatal_line > 600
    assert text.count(f"req={facts.fatal_request}") == 1
    assert f" {facts.fatal_service} " in lines[facts.fatal_line - 1]
    denied = [i + 1 for i, ln in enumerate(lines) if "permission denied" in ln]
    assert denied == [facts.denied_line] and 300 < facts.denied_line <= 600
    assert f"user={facts.denied_user} " in lines[facts.denied_line - 1]
    for s in SERVICES:
        assert sum(ln.split()[1:3] == ["ERROR", s] for ln in lines) == facts.error_counts[s]


def test_log_questions_answers():
    text, facts = generate_log(1, 120)
    p, a, line, key = log_questions(facts, "logs/service.log", "fatal_line", random.Random(0))
    assert (a, line, key) == (str(facts.fatal_line), facts.fatal_line, "FATAL")
    p, a, line, key = log_questions(facts, "logs/service.log", "error_count", random.Random(0))
    service = random.Random(0).choice(SERVICES)
    assert (a, line, key) == (str(facts.error_counts[service]), None, f"ERROR {service}")
    with pytest.raises(ValueError, match="unknown log question kind 'nope'"):
        log_questions(facts, "x", "nope", random.Random(0))


def test_too_short_log_is_rejected():
    with pytest.raises(ValueError, match="n_lines must be >= 30, got 29"):
        generate_log(1, 29)
