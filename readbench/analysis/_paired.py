"""Paired statistics: treatment arm vs the baseline arm on the same (task, epoch) pairs.

Re-exported by `readbench.analysis.stats`; see its module docstring for the spec sources
(shared/specs/metrics.md "Aggregation", anchors.md §5.1 item 4, §5.2, §9).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as sps

from ._records import (
    BootstrapInterval,
    ConfidenceInterval,
    McNemarResult,
    PairedDifference,
    RatioEstimate,
    WilcoxonResult,
)
from ._validate import (
    as_1d_float,
    as_binary,
    check_confidence,
    check_resamples,
    check_rng,
    cluster_codes,
    same_length,
)

__all__ = [
    "cluster_bootstrap_mean",
    "geometric_mean_ratio",
    "mcnemar_exact",
    "paired_difference",
    "wilcoxon_signed_rank",
]


def cluster_bootstrap_mean(
    values: Any,
    clusters: Any = None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Percentile bootstrap interval for a mean, resampling whole clusters.

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite values (e.g. paired differences or log ratios). Must not be empty.
    clusters : array_like, shape (n,), optional
        Cluster label per value (source repository). With None or a single distinct label,
        the n observations are resampled independently.
    rng : numpy.random.Generator
        Source of randomness, e.g. ``numpy.random.default_rng(0)``. Required keyword.
    n_resamples : int, default 2000
        Number of bootstrap resamples, >= 1.
    confidence : float, default 0.95
        Confidence level, in (0, 1).

    Returns
    -------
    BootstrapInterval
        The observed mean and the percentile interval of the resampled means.

    Raises
    ------
    ValueError
        If `values` is empty or non-finite, `clusters` mismatches, or `n_resamples` /
        `confidence` is out of range.
    TypeError
        If `rng` is not a ``numpy.random.Generator``.

    Notes
    -----
    Cluster bootstrap: draw G clusters with replacement from the G observed clusters and
    take the mean over all values of the drawn clusters (clusters of unequal size are
    weighted by their size, as the pooled mean is). Unclustered, draw n indices with
    replacement, exactly as ``scipy.stats.bootstrap(method="percentile")`` does. Memory is
    O(n_resamples x n) (or x G). Percentiles use linear interpolation
    (``numpy.quantile``). With identical values the interval collapses to that value. With a
    single value (one unit to resample) there is no sampling distribution: the interval is
    ``(nan, nan)``.
    With few clusters (< 10) the cluster bootstrap under-covers; the caller reports G.

    References
    ----------
    .. [1] A. C. Cameron, J. B. Gelbach, D. L. Miller, "Bootstrap-based improvements for
       inference with clustered errors", Rev. Econ. Stat. 90 (2008).
    .. [2] shared/specs/anchors.md §9: "compare them within task ... with cluster bootstrap
       by repository".

    Examples
    --------
    >>> r = cluster_bootstrap_mean([1.0, 1.0, 1.0], rng=np.random.default_rng(0))
    >>> r.estimate, r.ci.low, r.ci.high, r.method
    (1.0, 1.0, 1.0, 'bootstrap')
    """
    rng = check_rng(rng)
    n_resamples = check_resamples(n_resamples)
    confidence = check_confidence(confidence)
    v = as_1d_float(values, "values")
    codes = cluster_codes(clusters, v.size)
    n_clusters = 1 if codes is None else int(codes.max()) + 1
    alpha = 1.0 - confidence
    if (n_clusters if n_clusters > 1 else v.size) < 2:
        nan = float("nan")
        return BootstrapInterval(estimate=float(v.mean()), ci=ConfidenceInterval(nan, nan), confidence=confidence,
                                 n=int(v.size), n_clusters=n_clusters, n_resamples=n_resamples, method="bootstrap")
    if n_clusters <= 1:
        idx = rng.integers(0, v.size, size=(n_resamples, v.size))
        boot = v[idx].mean(axis=1)
        method = "bootstrap"
    else:
        assert codes is not None
        sums = np.bincount(codes, weights=v, minlength=n_clusters)
        counts = np.bincount(codes, minlength=n_clusters).astype(float)
        idx = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
        boot = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        method = "cluster-bootstrap"
    low, high = np.quantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0])
    return BootstrapInterval(
        estimate=float(v.mean()),
        ci=ConfidenceInterval(float(low), float(high)),
        confidence=confidence,
        n=int(v.size),
        n_clusters=n_clusters,
        n_resamples=n_resamples,
        method=method,
    )


def _paired_se(d: np.ndarray, codes: np.ndarray | None) -> float:
    """Miller's paired SE sd(d)/sqrt(n), with the clustered cross-product term when G > 1."""
    n = d.size
    if n < 2:
        return float("nan")
    e = d - d.mean()
    sum_sq = float(np.sum(e * e))
    var = sum_sq / (n * (n - 1.0))
    if codes is not None and int(codes.max()) + 1 > 1:
        cs = np.bincount(codes, weights=e)
        var += (float(np.sum(cs * cs)) - sum_sq) / (n * n)
    return float(np.sqrt(max(var, 0.0)))


def paired_difference(
    treatment: Any,
    baseline: Any,
    clusters: Any = None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> PairedDifference:
    """Mean paired difference ``treatment - baseline`` with a (cluster) bootstrap interval.

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        The metric for the same n (task, epoch) pairs, aligned by position. Finite.
    clusters : array_like, shape (n,), optional
        Source repository of each pair's task; the bootstrap resamples repositories.
    rng : numpy.random.Generator
        Required keyword; see `cluster_bootstrap_mean`.
    n_resamples : int, default 2000
        Bootstrap resamples.
    confidence : float, default 0.95
        Confidence level of the interval.

    Returns
    -------
    PairedDifference
        Mean difference (unit of the metric; for 0/1 success a difference of fractions),
        bootstrap interval, Miller's paired SE, n pairs, n clusters.

    Raises
    ------
    ValueError
        If either input is empty or non-finite, their lengths differ (mismatched pairs),
        or `clusters` mismatches.

    Notes
    -----
    Analysing d_i = A_i - B_i on the same items removes the between-task variance that the
    two arms share (Miller §5.1 item 4); turns and tokens are confounded with task
    difficulty, so they are only compared within task (anchors.md §5.2, 2604.02547).

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640 (2024), paired
       differences; shared/specs/anchors.md §5.1 item 4.

    Examples
    --------
    >>> r = paired_difference([3, 5, 4], [1, 2, 3], rng=np.random.default_rng(0))
    >>> r.mean_difference, r.n_pairs
    (2.0, 3)
    """
    a = as_1d_float(treatment, "treatment")
    b = as_1d_float(baseline, "baseline")
    same_length(a, "treatment", b, "baseline")
    d = a - b
    codes = cluster_codes(clusters, d.size)
    boot = cluster_bootstrap_mean(d, codes, rng=rng, n_resamples=n_resamples, confidence=confidence)
    return PairedDifference(
        mean_difference=boot.estimate,
        ci=boot.ci,
        confidence=boot.confidence,
        se=_paired_se(d, codes),
        n_pairs=int(d.size),
        n_clusters=boot.n_clusters,
        method=boot.method,
    )


def mcnemar_exact(treatment_success: Any, baseline_success: Any) -> McNemarResult:
    """Exact McNemar test for paired 0/1 outcomes.

    Parameters
    ----------
    treatment_success, baseline_success : array_like of {0, 1}, shape (n,)
        Success of each arm on the same (task, epoch) pairs, aligned by position.

    Returns
    -------
    McNemarResult
        The 2x2 counts and the two-sided exact p-value.

    Raises
    ------
    ValueError
        If an input is empty, holds a value other than 0/1, or the lengths differ.

    Notes
    -----
    Only discordant pairs carry information (anchors.md §5.2). Under H0 the treatment-only
    count is Binomial(b + c, 1/2); the p-value is ``scipy.stats.binomtest(b, b + c, 0.5)``.
    With no discordant pair there is no evidence either way and the p-value is 1.0. The
    test treats pairs as independent; it does not account for clustering by repository.

    References
    ----------
    .. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
       proportions or percentages", Psychometrika 12 (1947).

    Examples
    --------
    >>> r = mcnemar_exact([1, 1, 1, 1, 0], [0, 0, 0, 0, 0])
    >>> r.treatment_only, r.baseline_only, r.p_value
    (4, 0, 0.125)
    """
    a = as_binary(treatment_success, "treatment_success")
    b = as_binary(baseline_success, "baseline_success")
    same_length(a, "treatment_success", b, "baseline_success")
    both = int(np.sum((a == 1) & (b == 1)))
    t_only = int(np.sum((a == 1) & (b == 0)))
    b_only = int(np.sum((a == 0) & (b == 1)))
    neither = int(np.sum((a == 0) & (b == 0)))
    discordant = t_only + b_only
    p = 1.0 if discordant == 0 else float(sps.binomtest(t_only, discordant, 0.5).pvalue)
    return McNemarResult(
        n_pairs=int(a.size), both_success=both, treatment_only=t_only, baseline_only=b_only,
        neither=neither, p_value=p,
    )


def wilcoxon_signed_rank(treatment: Any, baseline: Any) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test on paired values (tokens, cost, turns).

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        The metric for the same pairs, aligned by position. Finite.

    Returns
    -------
    WilcoxonResult
        scipy's statistic and p-value, n pairs and n non-zero differences.

    Raises
    ------
    ValueError
        If an input is empty or non-finite, or the lengths differ.

    Notes
    -----
    Zero differences are dropped (``zero_method="wilcox"``); ``method="auto"`` gives the
    exact null distribution for <= 50 non-zero differences without ties, else the normal
    approximation. When every difference is zero there is nothing to rank: statistic 0.0,
    p-value 1.0.

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1
       (1945); implementation ``scipy.stats.wilcoxon``.

    Examples
    --------
    >>> r = wilcoxon_signed_rank([2, 3, 4, 5], [1, 1, 1, 1])
    >>> r.statistic, r.p_value
    (0.0, 0.125)
    """
    a = as_1d_float(treatment, "treatment")
    b = as_1d_float(baseline, "baseline")
    same_length(a, "treatment", b, "baseline")
    d = a - b
    nonzero = int(np.count_nonzero(d))
    if nonzero == 0:
        return WilcoxonResult(statistic=0.0, p_value=1.0, n_pairs=int(d.size), n_nonzero=0)
    res = sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="auto")
    return WilcoxonResult(
        statistic=float(res.statistic), p_value=float(res.pvalue), n_pairs=int(d.size), n_nonzero=nonzero
    )


def geometric_mean_ratio(
    treatment: Any,
    baseline: Any,
    clusters: Any = None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> RatioEstimate:
    """Geometric mean of paired ratios treatment / baseline, with a bootstrap interval.

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        Non-negative metric values (tokens, USD) for the same pairs, aligned by position.
    clusters : array_like, shape (n,), optional
        Source repository per pair; the bootstrap resamples repositories.
    rng : numpy.random.Generator
        Required keyword.
    n_resamples : int, default 2000
    confidence : float, default 0.95

    Returns
    -------
    RatioEstimate
        ``exp(mean(log(t/b)))`` and its interval (bootstrap of the mean log ratio,
        exponentiated), the pairs used and excluded.

    Raises
    ------
    ValueError
        If an input is empty, non-finite or negative, the lengths differ, or no pair has
        both values > 0.

    Notes
    -----
    Token and cost distributions are heavy-tailed (runs of a task differ up to 30x,
    anchors.md §5.2), so effects are compared on the log scale. Pairs with a zero on either
    side have no log ratio; they are dropped and counted in ``n_excluded``.

    Examples
    --------
    >>> r = geometric_mean_ratio([2, 8], [1, 2], rng=np.random.default_rng(0))
    >>> round(r.ratio, 6)
    2.828427
    """
    a = as_1d_float(treatment, "treatment")
    b = as_1d_float(baseline, "baseline")
    same_length(a, "treatment", b, "baseline")
    for arr, name in ((a, "treatment"), (b, "baseline")):
        if (arr < 0).any():
            first = int(np.flatnonzero(arr < 0)[0])
            raise ValueError(f"{name} must be >= 0 for a ratio, got {float(arr[first])!r} at position {first}")
    codes = cluster_codes(clusters, a.size)
    keep = (a > 0) & (b > 0)
    if not keep.any():
        raise ValueError(f"no pair has both treatment and baseline > 0 (n pairs = {a.size}): ratio undefined")
    log_ratio = np.log(a[keep]) - np.log(b[keep])
    kept_codes = None if codes is None else codes[keep]
    boot = cluster_bootstrap_mean(log_ratio, kept_codes, rng=rng, n_resamples=n_resamples, confidence=confidence)
    return RatioEstimate(
        ratio=float(np.exp(boot.estimate)),
        ci=ConfidenceInterval(float(np.exp(boot.ci.low)), float(np.exp(boot.ci.high))),
        confidence=boot.confidence,
        n_pairs=int(keep.sum()),
        n_excluded=int((~keep).sum()),
        n_clusters=boot.n_clusters,
        method=boot.method,
    )
