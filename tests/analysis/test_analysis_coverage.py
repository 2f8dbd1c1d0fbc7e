"""Coverage of the small-cluster intervals on simulated designs with a known truth (issue 15).

Design (as in the issue): tasks nested in G source repositories (10 tasks each, or unequal
sizes), 2 epochs, task difficulty correlated within a repository. On the probit scale the
baseline arm succeeds with probability Phi(mu + u_repo + u_task), the treatment arm with
Phi(mu + delta_repo + u_repo + u_task); u_repo ~ N(0, 0.5^2), u_task ~ N(0, 0.8^2), and
delta_repo = delta + tau * N(0, 1) (tau > 0: an effect that varies by repository). Epoch
outcomes are Bernoulli, either with common random numbers for the two arms (as readbench's
simulated agent pairs them) or independently. Repositories are drawn afresh per replicate, so
the truth is the super-population value, in closed form:
``E[Phi(a + Z s)] = Phi(a / sqrt(1 + s^2))``.

Every estimate uses the library's own functions (`cr2_mean_se`, `cr2_df`, `wilson_bounds`),
vectorised over replicates; `success_rate` and `paired_difference` are those functions on one
replicate (checked below). The CR2 numbers are checked against statsmodels' cluster-robust OLS
(balanced clusters: CR2 = CR1) and against the Bell-McCaffrey / Imbens-Kolesár matrix
definitions (unequal clusters). Replicates: 4,000 per design, so the Monte-Carlo standard
error of a 95 % coverage is 0.0034 and of a 5 % rejection rate 0.0034; seeds are fixed.
Measured values (``pytest tests/analysis/test_analysis_coverage.py -s`` prints them).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import sqrtm
from scipy.stats import norm
from statsmodels.regression.linear_model import OLS

from readbench.analysis.stats import (
    cr2_df,
    cr2_mean_se,
    paired_difference,
    success_rate,
    t_quantile,
    wilson_bounds,
)

R = 4000
MU, SD_REPO, SD_TASK = 0.5, 0.5, 0.8
UNEQUAL = (4, 6, 8, 10, 14, 18)


def _simulate(sizes, *, delta, tau, common, seed):
    """(treatment, baseline, codes, truth_difference, truth_baseline_rate); arrays (R, n)."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray(sizes)
    g, n_tasks = sizes.size, int(sizes.sum())
    repo = np.repeat(np.arange(g), sizes)
    u_repo = rng.normal(0.0, SD_REPO, (R, g))
    u_task = rng.normal(0.0, SD_TASK, (R, n_tasks))
    effect = delta + tau * rng.normal(size=(R, g))
    lin = MU + u_repo[:, repo] + u_task
    p_base, p_treat = norm.cdf(lin), norm.cdf(lin + effect[:, repo])
    u = rng.random((R, n_tasks, 2))
    v = u if common else rng.random((R, n_tasks, 2))
    base = (u < p_base[..., None]).astype(float).reshape(R, -1)
    treat = (v < p_treat[..., None]).astype(float).reshape(R, -1)
    s2 = 1.0 + SD_REPO**2 + SD_TASK**2
    truth_base = norm.cdf(MU / np.sqrt(s2))
    truth_diff = norm.cdf((MU + delta) / np.sqrt(s2 + tau**2)) - truth_base
    return treat, base, np.repeat(repo, 2), float(truth_diff), float(truth_base)


def _intervals(treat, base, codes):
    g = int(codes.max()) + 1
    q = t_quantile(0.95, cr2_df(np.bincount(codes)))
    d, se_d = cr2_mean_se(treat - base, codes, g)
    p, se_p = cr2_mean_se(base, codes, g)
    n = base.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        deff = np.where((p > 0) & (p < 1), np.where(se_p > 0, se_p**2 / (p * (1 - p) / n), 1.0), n / g)
    low_p, high_p = wilson_bounds(p, n / deff, q)
    return (d - q * se_d, d + q * se_d), (low_p, high_p)


DESIGNS = {
    # name: (G sizes, delta (probit), tau, common random numbers)
    "G6-constant-effect": ((10,) * 6, 0.3, 0.0, True),
    "G6-effect-varies-by-repo": ((10,) * 6, 0.3, 0.4, False),
    "G6-unequal-repos-varying-effect": (UNEQUAL, 0.3, 0.4, True),
    "G6-null": ((10,) * 6, 0.0, 0.0, False),
    "G12-constant-effect": ((10,) * 12, 0.3, 0.0, True),
    "G12-effect-varies-by-repo": ((10,) * 12, 0.3, 0.4, False),
    "G12-unequal-repos-varying-effect": (UNEQUAL * 2, 0.3, 0.4, True),
    "G12-null": ((10,) * 12, 0.0, 0.0, False),
}


@pytest.mark.parametrize("name", list(DESIGNS))
def test_intervals_cover_93_to_97_percent_and_null_rejects_at_most_6_percent(name):
    sizes, delta, tau, common = DESIGNS[name]
    treat, base, codes, truth_d, truth_p = _simulate(sizes, delta=delta, tau=tau, common=common,
                                                     seed=sum(map(ord, name)))
    (low_d, high_d), (low_p, high_p) = _intervals(treat, base, codes)
    cover_d = float(np.mean((low_d <= truth_d) & (truth_d <= high_d)))
    cover_p = float(np.mean((low_p <= truth_p) & (truth_p <= high_p)))
    reject = float(np.mean((low_d > 0) | (high_d < 0)))
    print(f"\n{name}: truth Δ {truth_d:+.4f}; coverage Δ {cover_d:.4f}, baseline rate {cover_p:.4f}; "
          f"rejection of Δ = 0 at 5%: {reject:.4f}")
    assert 0.93 <= cover_d <= 0.97
    assert 0.93 <= cover_p <= 0.97
    if delta == 0.0 and tau == 0.0:
        assert reject <= 0.06


def test_vectorised_path_is_the_public_functions():
    treat, base, codes, _, _ = _simulate((10,) * 6, delta=0.3, tau=0.4, common=False, seed=3)
    (low_d, high_d), (low_p, high_p) = _intervals(treat, base, codes)
    for r in range(5):
        d = paired_difference(treat[r], base[r], codes)
        assert (d.ci.low, d.ci.high) == (pytest.approx(low_d[r], abs=1e-12), pytest.approx(high_d[r], abs=1e-12))
        p = success_rate(base[r], codes)
        assert (p.ci.low, p.ci.high) == (pytest.approx(low_p[r], abs=1e-12), pytest.approx(high_p[r], abs=1e-12))


def test_cr2_equals_statsmodels_cluster_robust_ols_for_equal_clusters():
    # Intercept-only OLS, cluster-robust with statsmodels' small-sample correction
    # G/(G-1) (n-1)/(n-k), k = 1: that is CR1, equal to CR2 when clusters have equal sizes.
    # statsmodels' t interval uses df = G - 1. Tolerance 1e-10 (same algebra, different code).
    treat, base, codes, _, _ = _simulate((10,) * 6, delta=0.3, tau=0.4, common=False, seed=5)
    for r in range(10):
        d = treat[r] - base[r]
        fit = OLS(d, np.ones((d.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
        ours = paired_difference(treat[r], base[r], codes)
        assert ours.se == pytest.approx(float(fit.bse[0]), rel=1e-10)
        low, high = fit.conf_int(0.05)[0]
        assert (ours.ci.low, ours.ci.high) == (pytest.approx(low, abs=1e-10), pytest.approx(high, abs=1e-10))
        assert ours.p_value == pytest.approx(float(fit.pvalues[0]), abs=1e-10)


def _bell_mccaffrey_by_matrices(y: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """Independent CR2 SE and df of the intercept from the n x n definitions.

    V = (X'X)^-1 sum_g X_g' A_g e_g e_g' A_g X_g (X'X)^-1 with A_g = (I - H_gg)^(-1/2);
    df (Imbens & Kolesár 2016, eq. for the Bell-McCaffrey adjustment under Omega = I): the
    columns G_g = (I - H)_{., g} A_g X_g (X'X)^-1, df = (sum lambda)^2 / sum lambda^2 over
    the eigenvalues of G'G.
    """
    n = y.size
    x = np.ones((n, 1))
    xtx_inv = np.linalg.inv(x.T @ x)
    h = x @ xtx_inv @ x.T
    e = y - h @ y
    meat = np.zeros((1, 1))
    cols = []
    for g in np.unique(codes):
        idx = np.flatnonzero(codes == g)
        a_g = np.real(sqrtm(np.linalg.inv(np.eye(idx.size) - h[np.ix_(idx, idx)])))
        u = x[idx].T @ a_g @ e[idx]
        meat += np.outer(u, u)
        cols.append((np.eye(n) - h)[:, idx] @ a_g @ x[idx] @ xtx_inv)
    var = float((xtx_inv @ meat @ xtx_inv)[0, 0])
    gmat = np.hstack(cols)
    lam = np.linalg.eigvalsh(gmat.T @ gmat)
    return np.sqrt(var), float(lam.sum() ** 2 / np.sum(lam**2))


def test_cr2_and_df_match_the_matrix_definitions_for_unequal_clusters():
    treat, base, codes, _, _ = _simulate(UNEQUAL, delta=0.3, tau=0.4, common=False, seed=9)
    for r in range(3):
        se, df = _bell_mccaffrey_by_matrices(treat[r] - base[r], codes)
        ours = paired_difference(treat[r], base[r], codes)
        assert ours.se == pytest.approx(se, rel=1e-9)
        assert ours.df == pytest.approx(df, rel=1e-9)
