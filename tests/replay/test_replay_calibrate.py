"""Calibration from the bill recovers what was planted (issue 12, sessions.md §5).

A session is built whose bill comes from a known truth: billed tokens = 1.2 x readbench's count +
10 per block, an unrecorded head of 3,000 tokens, and a restart before call 12 that re-rendered
the system prompt (an exogenous break at position 0). Fitting the first half of the calls must
recover a, b, the head and the break, and predict the second half's bill.
"""

from __future__ import annotations

import pytest
from replay_sessions import HEAD, INSERT_AT, INSERTED, RESTART, A, B, planted_session, session_day

from readbench.cache.prices import canonical_model
from readbench.replay.bill import replay_session
from readbench.replay.calibrate import calibrate
from readbench.replay.requests import RequestSet
from readbench.sessions import load_file


def test_first_half_fit_recovers_the_planted_tokens_head_and_restart(tmp_path, pi_session):
    path, usages = planted_session(tmp_path, pi_session)
    assert usages[RESTART].cache_read_tokens == 0 and usages[RESTART - 1].cache_read_tokens > 0
    (s,) = load_file(path)
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic-legacy", models)
    half = range(len(s.calls) // 2)
    cal = calibrate(s, rs, "anthropic-5m", session_day(s), half)
    fit = cal.tokens[models[0]]
    assert fit.a == pytest.approx(A, abs=0.01) and fit.b == pytest.approx(B, abs=2.0)
    assert cal.heads[models[0]] == pytest.approx(HEAD, abs=30)
    assert [(b.call_index, b.token_position) for b in cal.breaks] == [(RESTART, 0)]
    assert cal.tier is None and cal.cold_start_tokens == 0  # pi legacy without cost: no tier evidence
    # one user turn: its tool calls are the session's opening (`RequestSet.call_kind`)
    assert cal.break_rates == {"prompt": 0.0, "user_turn": 0.0, "opening": pytest.approx(1 / (len(half) - 1))}


def test_the_fit_predicts_the_second_half(tmp_path, pi_session):
    path, _ = planted_session(tmp_path, pi_session)
    (s,) = load_file(path)
    rep = replay_session(s)
    by = {m["mode"]: m for m in rep.summaries}
    # raw: readbench's counts without the head and the factor: far from the bill
    assert by["raw"]["calls_read_within_5pct"] < 0.2
    # out of sample: every read of the second half within 5 %, the second half's cost within 1 %
    oos = by["out_of_sample"]
    assert oos["scored_calls"] == len(s.calls) - len(s.calls) // 2
    assert oos["calls_read_within_5pct"] == 1.0
    assert oos["cost_error"] == pytest.approx(0.0, abs=0.01)
    assert by["in_sample"]["calls_read_within_5pct"] == 1.0
    assert by["in_sample"]["unexplained_misses"] == 0 and by["raw"]["unexplained_misses"] == 1


def test_unrecorded_content_entering_the_context_is_found_and_kept_for_the_second_half(tmp_path, pi_session):
    path, usages = planted_session(tmp_path, pi_session, insertion=True)
    (s,) = load_file(path)
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic-legacy", models)
    cal = calibrate(s, rs, "anthropic-5m", session_day(s), range(len(s.calls) // 2))
    # found at its call, after the messages the previous call sent, at its billed size
    (ins,) = cal.insertions
    assert (ins.call_index, ins.context, ins.after_messages) == (INSERT_AT, 0, s.calls[INSERT_AT - 1].n_messages)
    assert ins.tokens == pytest.approx(INSERTED, abs=40)
    # the refit without it still recovers the planted slope, per-block tokens, head and restart
    fit = cal.tokens[models[0]]
    assert fit.a == pytest.approx(A, abs=0.01) and fit.b == pytest.approx(B, abs=2.0)
    assert cal.heads[models[0]] == pytest.approx(HEAD, abs=30)
    assert [(b.call_index, b.token_position) for b in cal.breaks] == [(RESTART, 0)]
    assert any(n.startswith("1 unrecorded insertion inferred from the bill") for n in cal.notes)
    # the content stays in the context: the second half's reads and cost are predicted
    by = {m["mode"]: m for m in replay_session(s).summaries}
    assert by["out_of_sample"]["calls_read_within_5pct"] == 1.0
    assert by["out_of_sample"]["cost_error"] == pytest.approx(0.0, abs=0.01)
    # without the insertion in the calibration the reads after it run short by its size
    assert by["raw"]["calls_read_within_5pct"] < 0.2
