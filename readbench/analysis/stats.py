"""Statistics for comparing readbench arms: pure functions returning frozen records.

Aggregation rules come from shared/specs/metrics.md "Aggregation" and the statistics
anchors in shared/specs/anchors.md §5 and §9:

- success rate with a confidence interval, clustered by source repository
  (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640, §5.1 items 1-2);
- paired differences against the baseline arm per (task, epoch) (Miller §5.1 item 4),
  with a cluster bootstrap by repository (anchors.md §9);
- McNemar's exact test on discordant pairs for paired success, Wilcoxon signed-rank,
  medians and geometric means for heavy-tailed tokens and cost (anchors.md §5.2);
- Holm's step-down adjustment when several arms are compared with one baseline (§5.2).

Every random draw takes an explicit ``numpy.random.Generator`` (shared/STYLE.md item 6).
This module holds the proportion statistics; the paired ones live in `_paired.py` and, with
with `_summaries.py`, re-exported here so callers import everything from ``readbench.analysis.stats``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from ._paired import (
    cluster_bootstrap_mean,
    geometric_mean_ratio,
    mcnemar_exact,
    paired_difference,
    wilcoxon_signed_rank,
)
from ._records import (
    BootstrapInterval,
    ConfidenceInterval,
    HeavyTailSummary,
    McNemarResult,
    PairedDifference,
    ProportionEstimate,
    RatioEstimate,
    WilcoxonResult,
)
from ._summaries import heavy_tail_summary, holm_adjust
from ._validate import as_1d_float, check_confidence, cluster_codes

__all__ = [
    "BootstrapInterval",
    "ConfidenceInterval",
    "HeavyTailSummary",
    "McNemarResult",
    "PairedDifference",
    "ProportionEstimate",
    "RatioEstimate",
    "WilcoxonResult",
    "cluster_bootstrap_mean",
    "clustered_standard_error",
    "geometric_mean_ratio",
    "heavy_tail_summary",
    "holm_adjust",
    "mcnemar_exact",
    "paired_difference",
    "success_rate",
    "wilcoxon_signed_rank",
    "wilson_interval",
]


def _z(confidence: float) -> float:
    """Two-sided standard-normal quantile for `confidence` (0.95 -> 1.959963...)."""
    return float(-special.ndtri((1.0 - confidence) / 2.0))


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes : float
        Number of successes, ``0 <= successes <= n``. May be fractional when `n` is an
        effective (design-effect-adjusted) sample size.
    n : float
        Number of trials, must be > 0. May be fractional (effective sample size).
    confidence : float, default 0.95
        Confidence level, in the open interval (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high`` as fractions in [0, 1].

    Raises
    ------
    ValueError
        If ``n <= 0``, ``successes`` is outside ``[0, n]``, or `confidence` is outside (0, 1).

    Notes
    -----
    With p = successes / n and z the two-sided normal quantile, the interval is
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. Unlike the CLT interval it
    stays inside [0, 1] and does not collapse to a point at p = 0 or 1, which matters for
    the small task sets a benchmark arm has (anchors.md §5.2, Bowyer et al.).

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical
       inference", JASA 22 (1927).

    Examples
    --------
    >>> ci = wilson_interval(7, 10)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.3968, 0.8922)
    """
    confidence = check_confidence(confidence)
    n = float(n)
    successes = float(successes)
    if not np.isfinite(n) or n <= 0:
        raise ValueError(f"n ({n!r}) must be a finite number > 0")
    if not 0.0 <= successes <= n:
        raise ValueError(f"successes ({successes!r}) must be in [0, n] with n = {n!r}")
    z = _z(confidence)
    p = successes / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2.0 * n)) / denom
    half = z / denom * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return ConfidenceInterval(low=float(max(0.0, center - half)), high=float(min(1.0, center + half)))


def clustered_standard_error(values: Any, clusters: Any) -> float:
    """Miller's clustered standard error of a mean.

    Parameters
    ----------
    values : array_like, shape (n,)
        Per-sample scores (0/1 outcomes or paired differences). Finite; n >= 2.
    clusters : array_like, shape (n,)
        Cluster label of each value (the task's source repository). No missing labels.

    Returns
    -------
    float
        ``sqrt( sum e_i² / (n (n-1)) + (1/n²) sum_c sum_{i != j in c} e_i e_j )`` with
        ``e_i = s_i - mean(s)``. With one value per cluster this is the CLT standard
        error ``sd(s)/sqrt(n)``.

    Raises
    ------
    ValueError
        If `values` is empty, has fewer than 2 values or a non-finite value, or
        `clusters` has the wrong length or a missing label.

    Notes
    -----
    The cross-product term adds within-cluster covariance: items from the same repository
    succeed or fail together, so the naive SE understates the uncertainty (Miller reports
    clustered SEs up to 3.05x the naive SE on DROP). The result is never negative because
    ``1/(n(n-1)) > 1/n²``. With few clusters (say < 10) the estimate is itself noisy;
    tables therefore always print the number of clusters.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
       Evaluations", arXiv 2411.00640 (2024), eq. for clustered standard errors;
       shared/specs/anchors.md §5.1 item 2.

    Examples
    --------
    >>> round(clustered_standard_error([1, 1, 0, 0], ["a", "a", "b", "b"]), 4)
    0.3819
    """
    s = as_1d_float(values, "values")
    if s.size < 2:
        raise ValueError(f"values needs at least 2 values for a standard error, got {s.size}")
    codes = cluster_codes(clusters, s.size)
    assert codes is not None
    n = float(s.size)
    e = s - s.mean()
    sum_sq = float(np.sum(e * e))
    cluster_sums = np.bincount(codes, weights=e)
    cross = float(np.sum(cluster_sums * cluster_sums)) - sum_sq
    var = sum_sq / (n * (n - 1.0)) + cross / (n * n)
    return float(np.sqrt(max(var, 0.0)))


def success_rate(successes: Any, clusters: Any = None, confidence: float = 0.95) -> ProportionEstimate:
    """Success rate with a Wilson interval, widened by the cluster design effect.

    Parameters
    ----------
    successes : array_like of {0, 1}, shape (n,)
        One outcome per sample (task x epoch) of one arm. Must not be empty.
    clusters : array_like, shape (n,), optional
        Source repository of each sample. None (default) or a single distinct label means
        the interval is the plain Wilson interval.
    confidence : float, default 0.95
        Confidence level, in the open interval (0, 1).

    Returns
    -------
    ProportionEstimate
        Rate, n, number of clusters, interval, CLT and clustered SEs, design effect, method.

    Raises
    ------
    ValueError
        If `successes` is empty (an arm with no samples), holds a value other than 0/1, or
        `clusters` has the wrong length or a missing label; or `confidence` is out of range.

    Notes
    -----
    With more than one cluster the design effect is ``deff = (SE_clustered / SE_CLT)²``
    (Miller's two standard errors, `clustered_standard_error`), floored at 1 so that a
    negative intra-cluster correlation never makes the interval narrower than the
    independent case. The Wilson interval is then computed on the effective sample size
    ``n / deff`` at the same rate (Kish's design effect). When every outcome is equal
    SE_CLT is 0, nothing can be inflated and deff = 1. SEs are NaN when n < 2.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640 (2024), §5.1 items 1-2
       in shared/specs/anchors.md.
    .. [2] L. Kish, "Survey Sampling", Wiley (1965): the design effect.

    Examples
    --------
    >>> est = success_rate([1, 0, 1, 1])
    >>> est.rate, est.n, est.method
    (0.75, 4, 'wilson')
    """
    confidence = check_confidence(confidence)
    s = as_1d_float(successes, "successes")
    bad = (s != 0.0) & (s != 1.0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"successes must hold only 0 and 1, got {float(s[first])!r} at position {first}")
    codes = cluster_codes(clusters, s.size)
    n = s.size
    rate = float(s.mean())
    n_clusters = 1 if codes is None else int(codes.max()) + 1
    if n >= 2:
        e = s - rate
        se_clt = float(np.sqrt(np.sum(e * e) / (n * (n - 1.0))))
    else:
        se_clt = float("nan")
    se_cl = se_clt
    deff = 1.0
    method = "wilson"
    if n_clusters > 1 and n >= 2:
        se_cl = clustered_standard_error(s, codes)
        method = "wilson-design-effect"
        if se_clt > 0.0:
            deff = max(1.0, (se_cl / se_clt) ** 2)
    n_eff = n / deff
    ci = wilson_interval(rate * n_eff, n_eff, confidence)
    return ProportionEstimate(
        rate=rate,
        n=n,
        n_clusters=n_clusters,
        ci=ci,
        confidence=confidence,
        se_clt=se_clt,
        se_clustered=se_cl,
        design_effect=float(deff),
        method=method,
    )
