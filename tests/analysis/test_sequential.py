"""The anytime-valid confidence sequence of `readbench eval --sequential`
(readbench.analysis.sequential; Waudby-Smith & Ramdas 2024, Theorem 2): checked against a
step-by-step computation of the paper's formulas, and its time-uniform coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from readbench.analysis.sequential import confidence_sequence, decided


def _loop_cs(xs, alpha, cap=0.5):
    """The PrPl-EB sequence for x in [0, 1], one step at a time, straight from the paper."""
    out, s_x, s_sq, s_lam, s_lx, s_vpsi = [], 0.0, 0.0, 0.0, 0.0, 0.0
    mu_prev, sig_prev = 0.5, 0.25
    for t, x in enumerate(xs, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (sig_prev * t * math.log(1 + t))), cap)
        s_vpsi += 4 * (x - mu_prev) ** 2 * (-math.log(1 - lam) - lam) / 4
        s_lam += lam
        s_lx += lam * x
        s_x += x
        mu = (0.5 + s_x) / (t + 1)
        s_sq += (x - mu) ** 2
        sig_prev, mu_prev = (0.25 + s_sq) / (t + 1), mu
        c, r = s_lx / s_lam, (math.log(2 / alpha) + s_vpsi) / s_lam
        out.append((max(c - r, 0.0), min(c + r, 1.0)))
    return out


def test_matches_a_step_by_step_computation_and_maps_paired_differences():
    rng = np.random.default_rng(5)
    xs = rng.random(40)
    lower, upper = confidence_sequence(xs, 0.05)
    np.testing.assert_allclose(np.column_stack([lower, upper]), np.array(_loop_cs(xs, 0.05)), rtol=1e-12)
    d = rng.integers(-1, 2, 30).astype(float)  # paired success differences in {-1, 0, 1}
    lo_d, hi_d = confidence_sequence(d, 0.1, low=-1.0, high=1.0)
    ref = np.array(_loop_cs((d + 1) / 2, 0.1))
    np.testing.assert_allclose(lo_d, 2 * ref[:, 0] - 1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hi_d, 2 * ref[:, 1] - 1, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match=r"within \[-1.0, 1.0\]"):
        confidence_sequence([0.0, 2.0], low=-1.0, high=1.0)
    with pytest.raises(ValueError, match="alpha must be in"):
        confidence_sequence([0.5], 1.5)


@pytest.mark.parametrize("p_treat, p_base", [(0.5, 0.5), (0.7, 0.4), (0.9, 0.85)])
def test_time_uniform_coverage_of_paired_success_differences(p_treat, p_base):
    """2,000 runs of 400 tasks each; the truth must lie in the sequence at EVERY task in >= 95 %."""
    rng = np.random.default_rng(int(p_treat * 100 + p_base * 10))
    r, n = 2000, 400
    d = (rng.random((r, n)) < p_treat).astype(float) - (rng.random((r, n)) < p_base)
    lower, upper = confidence_sequence(d, 0.05, low=-1.0, high=1.0)
    truth = p_treat - p_base
    ever_missed = ((lower > truth) | (upper < truth)).any(axis=1).mean()
    print(f"\np {p_treat} vs {p_base}: missed at some task in {ever_missed:.4f} of runs; "
          f"width after 100 / 400 tasks {np.mean(upper[:, 99] - lower[:, 99]):.3f} / {np.mean(upper[:, -1] - lower[:, -1]):.3f}")
    assert ever_missed <= 0.05


def test_decided_names_a_difference_an_equivalence_or_nothing():
    assert decided([], 0.05, 0.4) is None
    assert decided([1.0, 0.0, -1.0, 0.0], 0.05, 0.4) is None
    differs = decided([1.0] * 60, 0.05, 0.4)
    assert differs is not None and differs.startswith("differs (CS +")
    same = decided([0.0] * 200, 0.05, 0.4)
    assert same is not None and same.startswith("equivalent within ±0.400 (CS -")
    with pytest.raises(ValueError, match="delta must be > 0"):
        decided([0.0], 0.05, 0.0)
