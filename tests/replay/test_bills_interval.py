"""Issue 22 item 4: out-of-sample predictions with break rates pooled over sessions and intervals
from the other sessions' errors (leave-one-out), checked on simulated sessions whose truth is
known, and on values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from readbench.replay.bill import break_interval
from readbench.replay.pooled import pool_out_of_sample
from readbench.replay.records import Calibration


def _session(billed: float, sim: float, counts: dict, costs: dict, harness: str = "pi", model: str = "m") -> dict:
    return {"harness": harness, "billed_cost_usd_out_of_sample": billed,
            "simulated_cost_usd_out_of_sample_interval": [sim, sim],
            "out_of_sample_inputs": {"model": model, "break_counts": counts, "break_cost_usd_by_kind": costs,
                                     "simulated_cost_usd_no_breaks": sim}}


def test_break_rates_are_pooled_over_first_halves_and_the_interval_over_the_other_sessions():
    # 20 sessions of one harness and model; first halves: session 0 saw 1 break in 4 tool calls, the
    # others 0 in 4: every session's pooled tool rate is 1 / 80
    sessions = [_session(10.0 * (1 + k / 100), 10.0, {"tool": [1 if k == 0 else 0, 4]}, {"tool": 8.0}) for k in range(20)]
    stats = pool_out_of_sample(sessions)
    p = 10.0 + 8.0 / 80
    assert [s["simulated_cost_usd_out_of_sample_pooled"] for s in sessions] == pytest.approx([p] * 20)
    # session 0's interval: the 19 others' errors e_k = 10 (1 + k/100) / p - 1, k = 1..19; m = 19:
    # lo = the floor(0.05 x 20) = 1st smallest (k = 1), hi = the ceil(0.95 x 20) = 19th (k = 19)
    lo, hi = sessions[0]["simulated_cost_usd_out_of_sample_pooled_interval"]
    assert (lo, hi) == pytest.approx((10.0 * 1.01, 10.0 * 1.19))
    assert sessions[0]["out_of_sample_pool"] == {"pool": "harness+model", "sessions": 19}
    # the two extremes fall outside the range of the other 19 (session 0 billed 10.0 < 10.1, session
    # 19 billed 11.9 > 11.8), every other one is inside its own: 18 of 20 covered
    assert sessions[19]["simulated_cost_usd_out_of_sample_pooled_interval"] == pytest.approx([10.0, 11.8])
    assert stats["covered"] == 18 and stats["sessions"] == 20
    assert stats["billed_usd"] == pytest.approx(sum(10.0 * (1 + k / 100) for k in range(20)))
    assert stats["total_error"] == pytest.approx(20 * p / stats["billed_usd"] - 1)


def test_a_small_pool_falls_back_to_the_harness_then_to_the_sessions_own_interval():
    few = [_session(10.0, 10.0, {}, {}, model="x")] + [_session(11.0, 10.0, {}, {}, model="y") for _ in range(19)]
    pool_out_of_sample(few)
    assert few[0]["out_of_sample_pool"] == {"pool": "harness", "sessions": 19}
    alone = [_session(10.0, 9.0, {}, {}, harness=h) for h in ("pi", "codex")]
    stats = pool_out_of_sample(alone)
    assert [s["out_of_sample_pool"]["pool"] for s in alone] == ["own", "own"]
    assert alone[0]["simulated_cost_usd_out_of_sample_pooled_interval"] == [9.0, 9.0]
    assert stats["covered"] == 0


def test_the_pooled_interval_covers_90_percent_of_simulated_sessions_whose_truth_is_known():
    # the truth: each session's second half has n tool calls that break at rate 0.04 (a break adds
    # `cost`), and the simulator's own error multiplies the bill by exp(N(0.03, 0.08)) (a per-user
    # bias and spread); first halves of n calls show the breaks at the same rate
    rng = np.random.default_rng(7)
    sessions, truth = [], []
    for _ in range(400):
        n, sim, cost = int(rng.integers(20, 200)), float(rng.uniform(1, 30)), float(rng.uniform(0.05, 0.5))
        first = int(rng.binomial(n, 0.04))
        breaks = int(rng.binomial(n, 0.04))
        billed = (sim + breaks * cost) * math.exp(rng.normal(0.03, 0.08))
        sessions.append(_session(billed, sim, {"tool": [first, n]}, {"tool": n * cost}))
        truth.append(sim + 0.04 * n * cost)
    stats = pool_out_of_sample(sessions)
    assert 0.86 <= stats["coverage"] <= 0.95
    assert stats["pools"] == {"harness+model": 400}
    # the pooled rate (all first halves) is close to the true 0.04: predictions close to the truth
    preds = np.array([s["simulated_cost_usd_out_of_sample_pooled"] for s in sessions])
    assert np.median(np.abs(preds / np.array(truth) - 1)) < 0.01


def test_the_own_interval_holds_the_first_halfs_per_call_residuals():
    # no break can happen; two unseen calls simulated at $1 each; first-half residuals -10 % and +10 %:
    # the draws are 2 + {-0.2, 0, +0.2} with probabilities 1/4, 1/2, 1/4: the 90 % interval is 1.8 .. 2.2
    calib = Calibration(break_counts={}, break_rates={})
    rows = [{"call_kind": "tool", "break_cost_usd": 0.0, "sim_cost_usd": 1.0}] * 2
    assert break_interval(rows, calib, 2.0, residuals=[-0.1, 0.1]) == pytest.approx((1.8, 2.2))
    assert all(math.isnan(x) for x in break_interval(rows, calib, 2.0))  # neither breaks nor residuals


def test_the_own_interval_is_around_the_prediction_not_shifted_by_the_first_halfs_mean_error():
    # a first half the simulator over-priced by 30 % at every call: its errors, centred, have no
    # spread, so two unseen calls simulated at $1 each give 2.0 .. 2.0 (uncentred: 1.4 .. 1.4, an
    # interval that excluded the prediction of 2.0 and "covered" a bill 30 % below it)
    calib = Calibration(break_counts={}, break_rates={})
    rows = [{"call_kind": "tool", "break_cost_usd": 0.0, "sim_cost_usd": 1.0}] * 2
    assert break_interval(rows, calib, 2.0, residuals=[-0.3] * 4) == pytest.approx((2.0, 2.0))
    # errors -20 % and 0: centred on their mean -10 %, they are -10 % and +10 %: as in the test above
    assert break_interval(rows, calib, 2.0, residuals=[-0.2, 0.0]) == pytest.approx((1.8, 2.2))


def test_the_report_says_where_each_sessions_interval_came_from():
    from types import SimpleNamespace

    from readbench.analysis._document import Paragraph
    from readbench.replay.pooled import pooled_section

    def text(sessions: list) -> str:
        return next(x.text for x in pooled_section(SimpleNamespace(sessions=sessions)) if isinstance(x, Paragraph))

    alone = text([_session(9.0, 10.0, {}, {})])
    assert ("a 90 % interval (readbench.replay.pooled) from the session's own first half: its break rates and the spread "
            "of its per-call errors around the prediction (fewer than 19 other sessions to pool). ") in alone
    assert alone.endswith("Interval pools: own: 1.")
    many = text([_session(10.0, 10.0, {}, {}) for _ in range(20)])
    assert "from the out-of-sample errors of the other sessions (leave-one-out). " in many
    assert many.endswith("Interval pools: harness+model: 20.")
    # one session predicted at $0 has no error to pool: each of the other 19 has only 18 others
    # with an error, and keeps its own interval; the $0 one pools the 19
    mixed = text([_session(10.0, 0.0, {}, {})] + [_session(10.0, 10.0, {}, {}) for _ in range(19)])
    assert ("from the out-of-sample errors of the other sessions (leave-one-out) where 19 or more others exist, else "
            "(19 of 20) from the session's own first half: its break rates") in mixed


def test_the_own_interval_is_the_same_on_one_blas_thread_as_on_several(monkeypatch):
    # a half session's size: 225 unseen calls, 3 kinds that can break, 225 first-half residuals; the
    # products run on one BLAS thread (no second one left spinning), giving what several gave
    from threadpoolctl import threadpool_info

    from readbench.replay import pooled

    rng = np.random.default_rng(5)
    kinds = ["tool", "prompt", "resume"]
    rows = [{"call_kind": kinds[i % 3], "break_cost_usd": float(rng.random()) * (i % 4 > 0),
             "sim_cost_usd": float(rng.random())} for i in range(225)]
    calib = Calibration(break_counts={"tool": (3, 150), "user_turn": (1, 20)})
    residuals = list(rng.normal(0, 0.1, 225))
    seen = []
    real = pooled._break_interval

    def spy(*args):
        seen.append([x["num_threads"] for x in threadpool_info() if x["user_api"] == "blas"])
        return real(*args)

    monkeypatch.setattr(pooled, "_break_interval", spy)
    one = break_interval(rows, calib, 50.0, residuals=residuals)
    assert seen and all(n == 1 for n in seen[0])
    assert one == real(rows, calib, 50.0, 0.90, residuals)  # as many threads as BLAS likes: equal to the bit


def test_the_median_error_is_relative_to_the_bill():
    # predictions 10.0 each (no breaks); bills 8, 10, 12.5: errors |10/8 - 1| = 25 %, 0, 20 % -> median 20 %
    stats = pool_out_of_sample([_session(b, 10.0, {}, {}) for b in (8.0, 10.0, 12.5)])
    assert stats["median_abs_error"] == pytest.approx(0.20)


def test_the_expected_break_cost_is_scaled_by_the_pooled_share_of_the_prefix_breaks_lost():
    # first halves: 2 breaks in 8 tool calls in all; they lost 150 of 200 and 0 of 200 cached tokens:
    # share 150 / 400; prediction = 10 + 0.375 x (2 / 8) x 4.0
    a = _session(10.0, 10.0, {"tool": [1, 4]}, {"tool": 4.0})
    b = _session(10.0, 10.0, {"tool": [1, 4]}, {"tool": 4.0})
    a["out_of_sample_inputs"]["break_loss_tokens"] = [150, 200]
    b["out_of_sample_inputs"]["break_loss_tokens"] = [0, 200]
    pool_out_of_sample([a, b])
    assert a["simulated_cost_usd_out_of_sample_pooled"] == pytest.approx(10.0 + 0.375 * 0.25 * 4.0)


def test_break_loss_counts_what_each_first_half_break_did_not_read():
    from readbench.replay.bill import _break_loss

    def row(call, read, write, brk=False, model="m"):
        return {"call": call, "billed_input_tokens": read + write, "billed_cache_read_tokens": read,
                "billed_cache_write_tokens": write, "exogenous_break": brk, "priced_model": model}
    # call 1 leaves 1,000 cached; call 2 breaks reading 300 (700 lost); call 4 breaks but is in the second half
    rows = [row(0, 0, 1000), row(1, 1000, 0), row(2, 300, 900, True), row(3, 1200, 50), row(4, 0, 1300, True)]
    assert _break_loss(rows, half=3) == [700, 1000]
