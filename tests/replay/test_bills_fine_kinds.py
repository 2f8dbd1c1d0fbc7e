"""Issue 22: the pooled break rate of a fine call kind (a notification turn, a resume) seen in a
handful of calls is tied to its coarser kind's rate as strongly as the harness's pools show
(`readbench.replay.pooled.fine_kind_strength`), instead of its maximum-likelihood k / n.

Found on the real Claude Code sessions of docs/calibration.md §5: one notification turn of three in
the claude-opus-5 pool's first halves broke, and the rate 1/3 put $10.69 of expected break cost on
13 second-half notification turns, none of which broke (the pool's user turns broke at 2.6 %)."""

from __future__ import annotations

import pytest

from readbench.replay.pooled import KAPPA_BOUNDS, fine_kind_strength, pool_out_of_sample


def _session(counts: dict, costs: dict, model: str) -> dict:
    return {"harness": "claude-code", "billed_cost_usd_out_of_sample": 10.0,
            "simulated_cost_usd_out_of_sample_interval": [10.0, 10.0],
            "out_of_sample_inputs": {"model": model, "break_counts": counts, "break_cost_usd_by_kind": costs,
                                     "simulated_cost_usd_no_breaks": 10.0}}


def test_a_fine_kind_seen_in_three_calls_takes_its_coarser_kinds_rate_when_the_pools_show_no_difference():
    # the real cells (Claude Code notification turns, first halves): opus-5 1 of 3, sonnet-4.6 0 of 1,
    # sonnet-4.5 0 of 1; here the opus pool's user turns break 20 times in 760
    a = [_session({"user_turn": [1, 38], "prompt": [0, 35], "notification": [1, 3]}, {"notification": 1.0}, "opus")]
    a += [_session({"user_turn": [1, 38], "prompt": [1, 38]}, {"notification": 1.0}, "opus") for _ in range(19)]
    b = [_session({"user_turn": [1, 28], "prompt": [1, 27], "notification": [0, 1]}, {}, "sonnet")]
    c = [_session({"user_turn": [1, 9], "prompt": [1, 8], "notification": [0, 1]}, {}, "sonnet-old")]
    pool_out_of_sample(a + b + c)
    # opus pool: user turns 20 of 760 broke; notification 1 of 3; the fit ties them (kappa at its bound)
    parent = 20 / 760
    kappa = KAPPA_BOUNDS[1]
    rate = (1 + kappa * parent) / (3 + kappa)
    assert rate == pytest.approx(parent, rel=1e-5)
    assert a[0]["simulated_cost_usd_out_of_sample_pooled"] == pytest.approx(10.0 + rate, rel=1e-9)
    assert a[0]["simulated_cost_usd_out_of_sample_pooled"] < 10.0 + 1 / 3 - 0.3  # was 10 + 1/3


def test_a_fine_kind_that_breaks_at_a_rate_of_its_own_in_every_pool_keeps_it():
    # resume turns broke 5, 6, 4 and 5 times in 10 in four pools whose user turns break ~8x less
    # often: the fitted strength is a few pseudo-calls and each pool keeps most of its own resume rate
    ks = (5, 6, 4, 5)
    pools = [_session({"user_turn": [k + 2, 110], "prompt": [2, 100], "resume": [k, 10]}, {"resume": 1.0}, model)
             for k, model in zip(ks, "wxyz", strict=True)]
    pool_out_of_sample(pools)
    kappa = fine_kind_strength([(k, 10, (k + 2) / 110) for k in ks])
    assert kappa < 5
    for k, s in zip(ks, pools, strict=True):
        rate = (k + kappa * (k + 2) / 110) / (10 + kappa)
        assert s["simulated_cost_usd_out_of_sample_pooled"] == pytest.approx(10.0 + rate, rel=1e-12)
        assert rate > 0.3  # the maximum-likelihood rates 0.4-0.6, the user turns' 0.06


def test_fine_kind_strength_by_hand():
    # no cell: nothing to fit, the fine kind follows its coarser kind
    assert fine_kind_strength([]) == KAPPA_BOUNDS[1]
    # cells exactly at their coarser rate (0 of 10 under rate 0; 5 of 10 under 0.5): no evidence of a
    # rate of their own
    assert fine_kind_strength([(0, 10, 0.0), (5, 10, 0.5), (5, 10, 0.5)]) == pytest.approx(KAPPA_BOUNDS[1])
    # all-or-nothing cells around a rate of 0.5 (0 of 10, 10 of 10, twice): strongly over-dispersed
    assert fine_kind_strength([(0, 10, 0.5), (10, 10, 0.5), (0, 10, 0.5), (10, 10, 0.5)]) < 1.0
