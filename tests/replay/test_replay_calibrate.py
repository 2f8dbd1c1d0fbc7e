"""Calibration from the bill recovers what was planted (issue 12, sessions.md §5).

A session is built whose bill comes from a known truth: billed tokens = 1.2 x readbench's count +
10 per block, an unrecorded head of 3,000 tokens, and a restart before call 12 that re-rendered
the system prompt (an exogenous break at position 0). Fitting the first half of the calls must
recover a, b, the head and the break, and predict the second half's bill.
"""

from __future__ import annotations

import pytest
from replay_sessions import A, B, HEAD, RESTART, planted_session, session_day

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
    assert cal.break_rates == {"prompt": 0.0, "tool": pytest.approx(1 / (len(half) - 1))}


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
