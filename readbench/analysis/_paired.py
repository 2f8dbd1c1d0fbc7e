"""Paired statistics: treatment arm vs the baseline arm on the same (task, epoch) pairs.

Re-exported by `readbench.analysis.stats`; see its module docstring for the spec sources
(docs/specs/metrics.md "Aggregation", anchors.md §5.1 item 4, §5.2, §9). Intervals and
tests of means use the small-cluster CR2 t method of `_cluster` (its docstring gives the
choice, the formulas and the references).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as sps

from ._cluster import cluster_mean
from ._records import (
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
    cluster_codes,
    same_length,
)

__all__ = [
    "geometric_mean_ratio",
    "mcnemar_exact",
    "paired_difference",
    "wilcoxon_signed_rank",
]


def _codes(clusters: Any, n: int) -> tuple[np.ndarray | None, str]:
    """Cluster codes, or None (one pair per cluster) when unclustered or a single label."""
    codes = cluster_codes(clusters, n)
    if codes is None or int(codes.max()) + 1 < 2:
        return None, "paired-t"
    return codes, "cr2-t"


def paired_difference(
    treatment: Any,
    baseline: Any,
    clusters: Any = None,
    *,
    confidence: float = 0.95,
) -> PairedDifference:
    """Mean paired difference ``treatment - baseline`` with a CR2 t interval and test.

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        The metric for the same n (task, epoch) pairs, aligned by position. Finite.
    clusters : array_like, shape (n,), optional
        Source repository of each pair's task. None, or a single distinct label, treats the
        pairs as independent (the classical paired t test).
    confidence : float, default 0.95
        Confidence level of the interval, in (0, 1).

    Returns
    -------
    PairedDifference
        Mean difference (unit of the metric; for 0/1 success a difference of fractions),
        CR2 t interval, CR2 SE, degrees of freedom, two-sided p-value, n pairs, n clusters.

    Raises
    ------
    ValueError
        If either input is empty or non-finite, their lengths differ (mismatched pairs),
        `clusters` mismatches, or `confidence` is outside (0, 1).

    Notes
    -----
    Analysing d_i = A_i - B_i on the same items removes the between-task variance that the
    two arms share (Miller §5.1 item 4); turns and tokens are confounded with task
    difficulty, so they are only compared within task (anchors.md §5.2, 2604.02547). The
    interval is ``mean ± t_{df} SE_CR2`` and the p-value the t test it inverts
    (`readbench.analysis._cluster`): 0 lies outside the 95 % interval exactly when p < 0.05.
    With every difference equal the SE is 0: the interval is that value and p is 1.0 when it
    is 0, else 0.0. With one pair (or one cluster) there is no variance estimate: NaN
    interval, SE and p.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640 (2024), paired
       differences; docs/specs/anchors.md §5.1 item 4.
    .. [2] R. M. Bell, D. F. McCaffrey, Survey Methodology 28 (2002); G. W. Imbens,
       M. Kolesár, Rev. Econ. Stat. 98 (2016): CR2 with Bell-McCaffrey degrees of freedom.

    Examples
    --------
    >>> r = paired_difference([3, 5, 4], [1, 2, 3])
    >>> r.mean_difference, r.n_pairs, r.df, r.method
    (2.0, 3, 2.0, 'paired-t')
    """
    confidence = check_confidence(confidence)
    a = as_1d_float(treatment, "treatment")
    b = as_1d_float(baseline, "baseline")
    same_length(a, "treatment", b, "baseline")
    d = a - b
    codes, method = _codes(clusters, d.size)
    cm = cluster_mean(d, codes, confidence)
    return PairedDifference(
        mean_difference=cm.estimate,
        ci=ConfidenceInterval(cm.low, cm.high),
        confidence=confidence,
        se=cm.se,
        df=cm.df,
        p_value=cm.p_value,
        n_pairs=int(d.size),
        n_clusters=cm.n_clusters,
        method=method,
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


def wilcoxon_signed_rank(treatment: Any, baseline: Any, *, log_scale: bool = False) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test on paired values (tokens, cost, turns).

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        The metric for the same pairs, aligned by position. Finite; with `log_scale`, >= 0.
    log_scale : bool, default False
        Rank ``log(treatment) - log(baseline)`` instead of ``treatment - baseline``, over the
        pairs with both values > 0: the test of the geometric-mean ratio shown beside it, for
        heavy-tailed metrics (anchors.md §5.2: runs of a task differ up to 30x in tokens).

    Returns
    -------
    WilcoxonResult
        scipy's statistic and p-value, the scale, pairs tested and non-zero differences.

    Raises
    ------
    ValueError
        If an input is empty or non-finite, the lengths differ, or (log scale) a value is
        negative.

    Notes
    -----
    Zero differences are dropped (``zero_method="wilcox"``); ``method="auto"`` gives the
    exact null distribution for <= 50 non-zero differences without ties, else the normal
    approximation. When every difference is zero (or no pair has both values > 0 on the log
    scale) there is nothing to rank: statistic 0.0, p-value 1.0. The test treats pairs as
    independent (it ignores clustering by repository): it is reported as a secondary test.

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
    if log_scale:
        _non_negative(a, "treatment")
        _non_negative(b, "baseline")
        keep = (a > 0) & (b > 0)
        d = np.log(a[keep]) - np.log(b[keep])
    else:
        d = a - b
    scale = "log-ratio" if log_scale else "difference"
    nonzero = int(np.count_nonzero(d))
    if nonzero == 0:
        return WilcoxonResult(scale=scale, statistic=0.0, p_value=1.0, n_pairs=int(d.size), n_nonzero=0)
    res = sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="auto")
    return WilcoxonResult(scale=scale, statistic=float(res.statistic), p_value=float(res.pvalue),
                          n_pairs=int(d.size), n_nonzero=nonzero)


def _non_negative(arr: np.ndarray, name: str) -> None:
    if (arr < 0).any():
        first = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be >= 0 for a ratio, got {float(arr[first])!r} at position {first}")


def geometric_mean_ratio(
    treatment: Any,
    baseline: Any,
    clusters: Any = None,
    *,
    confidence: float = 0.95,
) -> RatioEstimate:
    """Geometric mean of paired ratios treatment / baseline, with a CR2 t interval and test.

    Parameters
    ----------
    treatment, baseline : array_like, shape (n,)
        Non-negative metric values (tokens, USD) for the same pairs, aligned by position.
    clusters : array_like, shape (n,), optional
        Source repository per pair (see `paired_difference`).
    confidence : float, default 0.95

    Returns
    -------
    RatioEstimate
        ``exp(mean(log(t/b)))``, its interval (the CR2 t interval of the mean log ratio,
        exponentiated), the p-value of ratio = 1, the pairs used and excluded.

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
    >>> r = geometric_mean_ratio([2, 8], [1, 2])
    >>> round(r.ratio, 6)
    2.828427
    """
    confidence = check_confidence(confidence)
    a = as_1d_float(treatment, "treatment")
    b = as_1d_float(baseline, "baseline")
    same_length(a, "treatment", b, "baseline")
    _non_negative(a, "treatment")
    _non_negative(b, "baseline")
    codes = cluster_codes(clusters, a.size)
    keep = (a > 0) & (b > 0)
    if not keep.any():
        raise ValueError(f"no pair has both treatment and baseline > 0 (n pairs = {a.size}): ratio undefined")
    log_ratio = np.log(a[keep]) - np.log(b[keep])
    kept, method = _codes(None if codes is None else codes[keep], int(keep.sum()))
    cm = cluster_mean(log_ratio, kept, confidence)
    return RatioEstimate(
        ratio=float(np.exp(cm.estimate)),
        ci=ConfidenceInterval(float(np.exp(cm.low)), float(np.exp(cm.high))),
        confidence=confidence,
        p_value=cm.p_value,
        df=cm.df,
        n_pairs=int(keep.sum()),
        n_excluded=int((~keep).sum()),
        n_clusters=cm.n_clusters,
        method=method,
    )
