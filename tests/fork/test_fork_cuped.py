"""Issue 25 item 3, CUPED with the trunk's own metrics as covariate: why readbench does not use it.

In a forked run the covariate (a trunk metric: its tokens, turns, outcome) is the SAME for both
arms of a pair, because the pair shares the trunk. CUPED's adjusted mean difference is then
``mean(d) - theta * (mean(X) - mean(X)) = mean(d)``: the estimate cannot move. What changes is
the interval: regressing ``d`` on the centred covariate and taking the residuals' standard error
drops ``theta^2 Var(mean X)``, which is a real part of the estimate's sampling variance over
tasks (the covariate is drawn with the task, not fixed by design). The interval is narrower only
by being too narrow. (Classical CUPED, Deng et al., WSDM 2013, gains because the covariate's mean
differs between two independently sampled groups; a paired, shared covariate has no such
difference left to remove, and the coupled prefix already cancels the pre-fork part of each
metric in ``d``.) The simulation below, shaped like a token metric whose saving grows with the
trajectory after the fork point, shows the CUPED interval under-covering while the paired CR2
interval covers; the CUPED computation is checked against statsmodels' OLS. The report
therefore states that CUPED is not applied (readbench/analysis/divergence.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from readbench.analysis.stats import cr2_df, cr2_mean_se, t_quantile

R = 4000
SAVE = 0.3  # share of the post-fork tokens the arm saves


def _simulate(g: int, pi_div: float, seed: int):
    """Trunk tokens X (gamma, shape 4, per-repo scale), arm = trunk's prefix + its own suffix."""
    rng = np.random.default_rng(seed)
    n = 10 * g
    repo = np.repeat(np.arange(g), 10)
    scale = rng.uniform(0.5, 1.5, (R, g))[:, repo]
    x = rng.gamma(4.0, 1.0, (R, n)) * scale
    diverged = rng.random((R, n)) < pi_div
    fork_share = rng.uniform(0.2, 0.9, (R, n))
    noise = rng.gamma(25.0, 1.0 / 25.0, (R, n))  # mean 1
    arm = np.where(diverged, x * fork_share + x * (1 - fork_share) * (1 - SAVE) * noise, x)
    truth = pi_div * 4.0 * 1.0 * 0.45 * ((1 - SAVE) - 1)  # E[X] = 4 * E[scale] = 4; E[1 - share] = 0.45
    return arm - x, x, repo, truth


def _cuped(d: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """theta = cov(d, X) / var(X) per replicate, and the residuals d - theta (X - mean X)."""
    xc = x - x.mean(axis=-1, keepdims=True)
    theta = (d * xc).sum(axis=-1) / (xc * xc).sum(axis=-1)
    return theta, d - theta[..., None] * xc


def test_cuped_matches_statsmodels_ols_and_leaves_the_estimate_unchanged():
    d, x, _, _ = _simulate(6, 0.5, seed=11)
    theta, resid = _cuped(d[:3], x[:3])
    for r in range(3):
        fit = sm.OLS(d[r], sm.add_constant(x[r] - x[r].mean())).fit()
        assert fit.params[1] == pytest.approx(theta[r], rel=1e-10)
        assert fit.params[0] == pytest.approx(d[r].mean(), rel=1e-10)  # CUPED estimate = paired mean
        np.testing.assert_allclose(fit.resid + fit.params[0], resid[r], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("g", [12, 60])
def test_cuped_with_the_shared_trunk_covariate_narrows_intervals_by_under_covering(g):
    d, x, repo, truth = _simulate(g, 0.5, seed=g)
    q = t_quantile(0.95, cr2_df(np.bincount(repo)))
    mean, se = cr2_mean_se(d, repo, g)
    _, resid = _cuped(d, x)
    mean_c, se_c = cr2_mean_se(resid, repo, g)
    np.testing.assert_allclose(mean_c, mean, atol=1e-12)
    cover = float(np.mean((mean - q * se <= truth) & (truth <= mean + q * se)))
    cover_c = float(np.mean((mean_c - q * se_c <= truth) & (truth <= mean_c + q * se_c)))
    width, width_c = float(np.mean(2 * q * se)), float(np.mean(2 * q * se_c))
    print(f"\nG{g}: paired CR2 coverage {cover:.4f} width {width:.4f}; CUPED coverage {cover_c:.4f} "
          f"width {width_c:.4f} ({width_c / width:.2f}x)")
    assert 0.93 <= cover <= 0.97
    assert width_c < width
    assert cover_c < 0.92
