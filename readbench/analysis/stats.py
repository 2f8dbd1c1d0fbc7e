"""Statistics for comparing readbench arms: pure functions returning frozen records.

Aggregation rules come from docs/specs/metrics.md "Aggregation" and the statistics
anchors in docs/specs/anchors.md §5 and §9:

- success rate with a confidence interval, clustered by source repository (Miller 2024,
  "Adding Error Bars to Evals", arXiv 2411.00640, §5.1 items 1-2), with the small-cluster
  CR2 variance and a t reference (`_cluster`: good coverage at 6-12 repositories);
- paired differences against the baseline arm per (task, epoch) (Miller §5.1 item 4), with a
  CR2 t interval and the t test it inverts (`_paired.paired_difference`);
- McNemar's exact test on discordant pairs as a secondary test (it ignores clustering),
  Wilcoxon signed-rank on log ratios, medians and geometric means for heavy-tailed tokens and
  cost (anchors.md §5.2);
- Holm's step-down adjustment across the report's confirmatory comparisons (§5.2).

This module holds the proportion statistics; the paired ones live in `_paired.py` and, with
`_summaries.py` and `_cluster.py`, are re-exported here so callers import everything from
``readbench.analysis.stats``. Nothing here draws random numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from ._cluster import ClusterMean, cluster_mean, cr2_df, cr2_mean_se, t_quantile
from ._paired import (
    geometric_mean_ratio,
    mcnemar_exact,
    paired_difference,
    wilcoxon_signed_rank,
)
from ._records import (
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
    "ClusterMean",
    "ConfidenceInterval",
    "HeavyTailSummary",
    "McNemarResult",
    "PairedDifference",
    "ProportionEstimate",
    "RatioEstimate",
    "WilcoxonResult",
    "cluster_mean",
    "cr2_df",
    "cr2_mean_se",
    "geometric_mean_ratio",
    "heavy_tail_summary",
    "holm_adjust",
    "mcnemar_exact",
    "paired_difference",
    "success_rate",
    "t_quantile",
    "wilcoxon_signed_rank",
    "wilson_bounds",
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


def wilson_bounds(rate: Any, n: Any, quantile: Any) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Wilson score bounds for rates `rate` on (effective) sizes `n` at a quantile.

    ``(p + q²/2n ± q·sqrt(p(1-p)/n + q²/4n²)) / (1 + q²/n)``, clipped to [0, 1]; `quantile` is
    z for the classical interval or a t quantile for the small-cluster one. Arrays broadcast.
    """
    p, m, q = (np.asarray(x, dtype=float) for x in (rate, n, quantile))
    denom = 1.0 + q * q / m
    center = (p + q * q / (2.0 * m)) / denom
    half = q / denom * np.sqrt(p * (1.0 - p) / m + q * q / (4.0 * m * m))
    return np.maximum(0.0, center - half), np.minimum(1.0, center + half)


def success_rate(successes: Any, clusters: Any = None, confidence: float = 0.95) -> ProportionEstimate:
    """Success rate with a Wilson interval; clustered: on the CR2 effective size with a t quantile.

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
        Rate, n, number of clusters, interval, CLT and CR2 SEs, design effect, degrees of
        freedom, method.

    Raises
    ------
    ValueError
        If `successes` is empty (an arm with no samples), holds a value other than 0/1, or
        `clusters` has the wrong length or a missing label; or `confidence` is out of range.

    Notes
    -----
    With G >= 2 clusters the variance of the rate is the CR2 variance (`_cluster`), the
    design effect is ``deff = V_CR2 / (p(1-p)/n)`` and the Wilson interval is computed on the
    effective size ``n / deff`` (Kish) with the two-sided t quantile on the Bell-McCaffrey
    degrees of freedom (G - 1 for equal clusters) in place of z. The Wilson form keeps the
    interval inside [0, 1] (Bowyer et al., anchors.md §5.2). The design effect is not floored
    at 1: with 6 clusters the CR2 variance is noisy, the t quantile already pays for that
    noise, and flooring it made the interval over-cover (97 % at a nominal 95 % in the
    coverage test). When every outcome is equal the data say nothing about the intra-cluster
    correlation; the effective size is then G (the bound at correlation 1), so 60 successes
    from 6 repositories read as 6 independent successes, not 60. When every cluster has
    exactly the overall rate (SE 0 with 0 < p < 1) deff is 1. Unclustered, the interval is
    the classical Wilson interval (z, n). Coverage is checked at G = 6 and 12 by
    tests/analysis/test_analysis_coverage.py. SEs are NaN when n < 2.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640 (2024), §5.1 items 1-2
       in docs/specs/anchors.md.
    .. [2] L. Kish, "Survey Sampling", Wiley (1965): the design effect.
    .. [3] R. M. Bell, D. F. McCaffrey, Survey Methodology 28 (2002); G. W. Imbens,
       M. Kolesár, Rev. Econ. Stat. 98 (2016): CR2 and its degrees of freedom.

    Examples
    --------
    >>> est = success_rate([1, 0, 1, 1])
    >>> est.rate, est.n, est.method
    (0.75, 4, 'wilson')
    >>> est = success_rate([1, 1, 0, 1, 0, 0], clusters=list("aabbcc"))
    >>> est.method, est.df, round(est.ci.low, 4), round(est.ci.high, 4)
    ('wilson-cr2-t', 2.0, 0.0362, 0.9638)
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
    se_clt = float(np.sqrt(np.sum((s - rate) ** 2) / (n * (n - 1.0)))) if n >= 2 else float("nan")
    if n_clusters < 2:
        ci = wilson_interval(rate * n, n, confidence)
        return ProportionEstimate(rate=rate, n=n, n_clusters=n_clusters, ci=ci, confidence=confidence,
                                  se_clt=se_clt, se_clustered=se_clt, design_effect=1.0, df=float("inf"),
                                  method="wilson")
    assert codes is not None
    cm = cluster_mean(s, codes, confidence)
    if not 0.0 < rate < 1.0:
        deff = n / n_clusters  # constant outcomes: the bound at intra-cluster correlation 1
    elif cm.se == 0.0:
        deff = 1.0  # every cluster has exactly the overall rate: no clustering information
    else:
        deff = cm.se**2 / (rate * (1.0 - rate) / n)
    low, high = wilson_bounds(rate, n / deff, t_quantile(confidence, cm.df))
    return ProportionEstimate(
        rate=rate,
        n=n,
        n_clusters=n_clusters,
        ci=ConfidenceInterval(float(low), float(high)),
        confidence=confidence,
        se_clt=se_clt,
        se_clustered=cm.se,
        design_effect=float(deff),
        df=cm.df,
        method="wilson-cr2-t",
    )
