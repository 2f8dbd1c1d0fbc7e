"""Small-cluster inference for a mean: CR2 standard error, Bell-McCaffrey degrees of freedom,
t intervals and t tests (re-exported by `readbench.analysis.stats`).

Why this method. readbench runs have few source repositories (6-12 in a nightly run, 2 in
the smoke run), and tasks of one repository succeed or fail together. The percentile cluster
bootstrap and z intervals under-cover badly with so few clusters (a simulation of 60 tasks in
6 repositories covered the truth 85-89 % of the time at a nominal 95 %; issue 15). The
remedies in the literature are the wild cluster bootstrap (Cameron, Gelbach & Miller 2008),
with Webb's six-point weights below about 10 clusters, and the bias-reduced CR2 variance with
a t reference distribution (Bell & McCaffrey 2002; Imbens & Kolesár 2016; Pustejovsky &
Tipton 2018). For the statistic readbench needs, the mean of one arm's outcomes or of paired
differences (an intercept-only regression), CR2 has a closed form, is deterministic (no
resampling noise, no seed), vectorises over thousands of simulated replicates, and its t test
is exactly the inversion of its interval, so the p-value and the interval never disagree.
A Rademacher wild bootstrap with G = 6 clusters has only 2^6 sign patterns, so its p-value
cannot go below 1/32; CR2-t has no such floor. The coverage test
(tests/analysis/test_analysis_coverage.py) checks 93-97 % coverage and a false-positive rate
<= 6 % at G = 6 and G = 12.

Formulas, for values v_1..v_n in G clusters of sizes n_g (residuals e_i = v_i - mean(v),
cluster residual sums S_g):

- CR2 variance of the mean: ``V = sum_g S_g^2 / (n^2 (1 - n_g / n))``. (The CR2 adjustment
  ``(I - H_gg)^(-1/2)`` with ``H_gg = J / n`` multiplies S_g by ``(1 - n_g/n)^(-1/2)``.) With
  equal cluster sizes V equals the CR1 variance ``G/(G-1) sum_g S_g^2 / n^2`` that
  statsmodels' cluster-robust OLS reports; with singleton clusters it is the classical
  ``s^2 / n``. It is Miller's clustered variance (2024, §5.1 item 2 of docs/specs/anchors.md)
  with a small-sample correction.
- Degrees of freedom (Bell & McCaffrey 2002, Imbens & Kolesár 2016): Satterthwaite's
  ``tr(C)^2 / tr(C^2)`` for ``C = W^(1/2) (diag(n_g) - n n' / n) W^(1/2)``,
  ``W = diag(1 / (1 - n_g/n))``; this is G - 1 for equal cluster sizes and smaller when they
  are unequal. With one value per cluster it is n - 1, so an unclustered paired difference
  gets exactly the paired t test.

References
----------
.. [1] A. C. Cameron, J. B. Gelbach, D. L. Miller, "Bootstrap-based improvements for
   inference with clustered errors", Rev. Econ. Stat. 90 (2008) 414-427.
.. [2] R. M. Bell, D. F. McCaffrey, "Bias reduction in standard errors for linear regression
   with multi-stage samples", Survey Methodology 28 (2002) 169-181.
.. [3] G. W. Imbens, M. Kolesár, "Robust standard errors in small samples: some practical
   advice", Rev. Econ. Stat. 98 (2016) 701-712.
.. [4] J. E. Pustejovsky, E. Tipton, "Small-sample methods for cluster-robust variance
   estimation and hypothesis testing in fixed effects models", JBES 36 (2018) 672-683.
.. [5] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
   Evaluations", arXiv 2411.00640 (2024).
.. [6] M. D. Webb, "Reworking wild bootstrap-based inference for clustered errors",
   Canadian J. Econ. 56 (2023) 839-858 (six-point weights; the alternative not taken here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

__all__ = ["ClusterMean", "cluster_mean", "cr2_df", "cr2_mean_se", "t_quantile"]


@dataclass(frozen=True)
class ClusterMean:
    """A mean with its CR2 standard error, t interval and t test of mean = 0."""

    estimate: float
    """Mean of the values."""
    se: float
    """CR2 standard error of the mean; 0.0 when every value is equal; NaN when G < 2."""
    df: float
    """Bell-McCaffrey degrees of freedom (G - 1 for equal cluster sizes); NaN when G < 2."""
    low: float
    """Lower bound ``estimate - t_{df} se``; NaN when G < 2."""
    high: float
    """Upper bound ``estimate + t_{df} se``; NaN when G < 2."""
    p_value: float
    """Two-sided p-value of mean = 0 from t(df); 1.0 when se = 0 and estimate = 0, 0.0 when
    se = 0 and estimate != 0; NaN when G < 2."""
    n: int
    """Number of values."""
    n_clusters: int
    """Number of clusters G (n when every value is its own cluster)."""


def cr2_df(cluster_sizes: np.ndarray) -> float:
    """Bell-McCaffrey degrees of freedom of the CR2 mean for clusters of these sizes.

    Parameters
    ----------
    cluster_sizes : ndarray of int, shape (G,)
        Values per cluster, each >= 1; G >= 2.

    Returns
    -------
    float
        ``tr(C)^2 / tr(C^2)`` (module docstring); G - 1 when all sizes are equal.

    Examples
    --------
    >>> cr2_df(np.array([10, 10, 10, 10, 10, 10])), round(cr2_df(np.array([1, 1, 10])), 4)
    (5.0, 1.198)

    Raises
    ------
    ValueError
        If fewer than 2 clusters are given.
    """
    m = np.asarray(cluster_sizes, dtype=float)
    if m.size < 2:
        raise ValueError(f"degrees of freedom need at least 2 clusters, got {m.size}")
    if np.all(m == m[0]):
        return float(m.size - 1)  # the closed form; the matrix route rounds to 2.0000000000000004
    n = m.sum()
    w = 1.0 / (1.0 - m / n)
    core = np.diag(m) - np.outer(m, m) / n
    c = np.sqrt(w)[:, None] * core * np.sqrt(w)[None, :]
    return float(np.trace(c) ** 2 / np.sum(c * c))


def cr2_mean_se(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Means and CR2 standard errors of many replicates sharing one cluster layout.

    Parameters
    ----------
    values : ndarray, shape (R, n) or (n,)
        R replicates of n values (finite).
    codes : ndarray of int, shape (n,)
        Cluster code 0..G-1 of each value position.
    n_clusters : int
        G, >= 2; every code in 0..G-1 must occur.

    Returns
    -------
    mean, se : ndarray, shape (R,) (or scalars' 0-d arrays for 1-D input)
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[-1]
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    mean = v.mean(axis=-1)
    e = v - mean[..., None]
    indicator = np.zeros((n, n_clusters))
    indicator[np.arange(n), codes] = 1.0
    sums = e @ indicator
    var = np.sum(sums * sums / (1.0 - sizes / n), axis=-1) / (n * n)
    return mean, np.sqrt(np.maximum(var, 0.0))


def t_quantile(confidence: float, df: float) -> float:
    """Two-sided t quantile, e.g. ``t_quantile(0.95, 5) = 2.5706``."""
    return float(sps.t.ppf(0.5 + confidence / 2.0, df))


def cluster_mean(values: np.ndarray, codes: np.ndarray | None, confidence: float) -> ClusterMean:
    """CR2 mean, interval and test for validated inputs (`codes` None = one value per cluster).

    With fewer than 2 clusters there is no variance estimate: se, df, bounds and p are NaN.
    """
    v = np.asarray(values, dtype=float)
    n = int(v.size)
    if codes is None:
        codes = np.arange(n)
    g = int(codes.max()) + 1 if n else 0
    est = float(v.mean())
    if g < 2:
        nan = float("nan")
        return ClusterMean(est, nan, nan, nan, nan, nan, n, max(g, 1))
    df = cr2_df(np.bincount(codes, minlength=g))
    _, se_arr = cr2_mean_se(v, codes, g)
    se = float(se_arr)
    if se == 0.0:
        p = 1.0 if est == 0.0 else 0.0
        return ClusterMean(est, 0.0, df, est, est, p, n, g)
    q = t_quantile(confidence, df)
    p = float(2.0 * sps.t.sf(abs(est) / se, df))
    return ClusterMean(est, se, df, est - q * se, est + q * se, p, n, g)
