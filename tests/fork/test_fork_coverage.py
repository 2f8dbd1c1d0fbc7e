"""Issue 25 item 3: the small-cluster paired intervals still cover 93-97 % when arms are coupled
by forking (and are narrower than for independent runs).

Design (tests/analysis/test_analysis_coverage.py's, with forking): tasks in G repositories,
2 epochs, baseline success Phi(mu + u_repo + u_task), treatment Phi(mu + delta_repo + u_repo +
u_task). Forked: per (task, epoch) the arm leaves the trunk with probability ``pi_div``; where it
never does, its outcome IS the trunk's (identical trajectory, no effect: the pair's difference is
0 by construction); where it does, its outcome is drawn afresh after the fork. Independent: every
treatment outcome is drawn afresh and the effect applies everywhere the arm differs, i.e. on the
same ``pi_div`` share of (task, epoch) pairs. Truth (super-population):
``pi_div * (Phi((mu + delta) / sqrt(s2 + tau^2)) - Phi(mu / sqrt(s2)))``. 4,000 replicates,
fixed seeds; the intervals are the library's (`cr2_mean_se`, `cr2_df`, `t_quantile`), the same
as `paired_difference` computes.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from readbench.analysis.stats import cr2_df, cr2_mean_se, t_quantile

R = 4000
MU, SD_REPO, SD_TASK = 0.5, 0.5, 0.8


def _simulate(g, *, delta, tau, pi_div, forked, seed):
    rng = np.random.default_rng(seed)
    n_tasks = 10 * g
    repo = np.repeat(np.arange(g), 10)
    lin = MU + rng.normal(0.0, SD_REPO, (R, g))[:, repo] + rng.normal(0.0, SD_TASK, (R, n_tasks))
    effect = (delta + tau * rng.normal(size=(R, g)))[:, repo]
    p_base = norm.cdf(lin)[..., None]
    diverged = rng.random((R, n_tasks, 2)) < pi_div
    p_treat = np.where(diverged, norm.cdf(lin + effect)[..., None], p_base)
    u = rng.random((R, n_tasks, 2))
    base = u < p_base
    fresh = rng.random((R, n_tasks, 2)) < p_treat
    treat = np.where(diverged, fresh, base) if forked else fresh
    s2 = 1.0 + SD_REPO**2 + SD_TASK**2
    truth = pi_div * (norm.cdf((MU + delta) / np.sqrt(s2 + tau**2)) - norm.cdf(MU / np.sqrt(s2)))
    return treat.reshape(R, -1).astype(float), base.reshape(R, -1).astype(float), np.repeat(repo, 2), float(truth)


def _coverage(g, delta, tau, pi_div, forked, seed):
    treat, base, codes, truth = _simulate(g, delta=delta, tau=tau, pi_div=pi_div, forked=forked, seed=seed)
    q = t_quantile(0.95, cr2_df(np.bincount(codes)))
    d, se = cr2_mean_se(treat - base, codes, g)
    low, high = d - q * se, d + q * se
    return float(np.mean((low <= truth) & (truth <= high))), float(np.mean(high - low)), float(np.mean((low > 0) | (high < 0)))


@pytest.mark.parametrize("g, delta, tau, pi_div", [
    (6, 0.3, 0.0, 0.3), (6, 0.3, 0.4, 0.7), (12, 0.3, 0.0, 0.3), (12, 0.3, 0.4, 0.7), (6, 0.0, 0.0, 0.5),
    (12, 0.0, 0.0, 0.5),
])
def test_forked_intervals_cover_93_to_97_percent_and_are_narrower(g, delta, tau, pi_div):
    seed = int(g * 1000 + delta * 100 + tau * 10 + pi_div * 7)
    cover_f, width_f, reject_f = _coverage(g, delta, tau, pi_div, True, seed)
    cover_i, width_i, _ = _coverage(g, delta, tau, pi_div, False, seed + 1)
    print(f"\nG{g} delta {delta} tau {tau} diverged {pi_div:.0%}: forked coverage {cover_f:.4f} width {width_f:.4f}; "
          f"independent coverage {cover_i:.4f} width {width_i:.4f} (forked/independent {width_f / width_i:.2f})")
    assert 0.93 <= cover_f <= 0.97
    assert width_f < width_i
    if delta == 0.0:
        assert reject_f <= 0.06
