"""Frozen result records returned by `readbench.analysis.stats`.

One small record per statistic, so a caller never receives "a float or an array"
(docs/specs/STYLE.md §4, "Small shared records"; §"What readbench should take" item 5).
Fractions are in [0, 1] (not percent); p-values are probabilities in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ConfidenceInterval",
    "HeavyTailSummary",
    "McNemarResult",
    "PairedDifference",
    "ProportionEstimate",
    "RatioEstimate",
    "WilcoxonResult",
]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval ``[low, high]`` in the estimate's unit."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""


@dataclass(frozen=True)
class ProportionEstimate:
    """A success rate with its interval (see `stats.success_rate`)."""

    rate: float
    """Observed mean of the 0/1 outcomes, a fraction in [0, 1]."""
    n: int
    """Number of outcomes (samples = task x epoch) in the denominator."""
    n_clusters: int
    """Number of distinct clusters (source repositories); 1 when unclustered."""
    ci: ConfidenceInterval
    """Wilson interval; when clustered, on the CR2 effective size with a t(df) quantile."""
    confidence: float
    """Confidence level of `ci`, e.g. 0.95."""
    se_clt: float
    """Miller's CLT standard error sqrt(sum (s - mean)^2 / (n (n - 1))); NaN when n < 2."""
    se_clustered: float
    """CR2 (small-sample clustered) standard error; equals `se_clt` when `n_clusters` <= 1."""
    design_effect: float
    """CR2 variance / (p(1-p)/n); n / G when every outcome is equal; 1.0 unclustered or when the CR2 SE is 0."""
    df: float
    """Degrees of freedom of the t quantile (Bell-McCaffrey; G - 1 for equal clusters); inf unclustered."""
    method: str
    """``"wilson"`` (unclustered) or ``"wilson-cr2-t"``."""


@dataclass(frozen=True)
class PairedDifference:
    """Mean of per-pair differences ``treatment - baseline`` (see `stats.paired_difference`)."""

    mean_difference: float
    """Mean of d_i = treatment_i - baseline_i, in the metric's unit."""
    ci: ConfidenceInterval
    """CR2 t interval of the mean difference; NaN bounds when there are fewer than 2 clusters."""
    confidence: float
    """Confidence level of `ci`."""
    se: float
    """CR2 standard error of the mean difference (the classical sd(d)/sqrt(n) unclustered); NaN
    with fewer than 2 clusters."""
    df: float
    """Degrees of freedom of the t reference (Bell-McCaffrey; G - 1 for equal clusters, n - 1 unclustered)."""
    p_value: float
    """Two-sided p-value of "no difference" from the same t(df): p < 1 - confidence exactly when
    `ci` excludes 0. NaN with fewer than 2 clusters."""
    n_pairs: int
    """Number of (task, epoch) pairs."""
    n_clusters: int
    """Distinct clusters among the pairs (pairs themselves when unclustered)."""
    method: str
    """``"cr2-t"`` (clusters given) or ``"paired-t"`` (unclustered)."""


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired 0/1 outcomes (see `stats.mcnemar_exact`)."""

    n_pairs: int
    """Number of pairs."""
    both_success: int
    """Pairs where both arms succeeded."""
    treatment_only: int
    """Discordant pairs where only the treatment arm succeeded."""
    baseline_only: int
    """Discordant pairs where only the baseline arm succeeded."""
    neither: int
    """Pairs where both arms failed."""
    p_value: float
    """Two-sided exact binomial p-value on the discordant pairs; 1.0 when there are none."""


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test on paired values (see `stats.wilcoxon_signed_rank`)."""

    scale: str
    """``"difference"`` (ranks of t - b) or ``"log-ratio"`` (ranks of log t - log b)."""
    statistic: float
    """scipy's two-sided statistic min(R+, R-); 0.0 when every difference is zero."""
    p_value: float
    """Two-sided p-value; 1.0 when every difference is zero."""
    n_pairs: int
    """Number of pairs tested (on the log scale: pairs with both values > 0)."""
    n_nonzero: int
    """Pairs with a non-zero difference (zeros are dropped, ``zero_method="wilcox"``)."""


@dataclass(frozen=True)
class RatioEstimate:
    """Geometric-mean ratio treatment / baseline (see `stats.geometric_mean_ratio`)."""

    ratio: float
    """exp(mean(log treatment - log baseline)); 1.0 means no change."""
    ci: ConfidenceInterval
    """CR2 t interval of the mean log ratio, exponentiated."""
    confidence: float
    """Confidence level of `ci`."""
    p_value: float
    """Two-sided t(df) p-value of ratio = 1 (mean log ratio = 0); NaN with fewer than 2 clusters."""
    df: float
    """Degrees of freedom of the t reference."""
    n_pairs: int
    """Pairs used (both values > 0)."""
    n_excluded: int
    """Pairs dropped because one value was <= 0 (log undefined)."""
    n_clusters: int
    """Distinct clusters among the pairs used."""
    method: str
    """``"cr2-t"`` or ``"paired-t"`` (see `PairedDifference.method`)."""


@dataclass(frozen=True)
class HeavyTailSummary:
    """Robust location summaries of a heavy-tailed metric (tokens, USD)."""

    n: int
    """Number of values."""
    mean: float
    """Arithmetic mean."""
    median: float
    """Median (average of the two middle values when n is even)."""
    geometric_mean: float
    """exp(mean(log v)) over the values > 0; NaN when none is > 0."""
    n_nonpositive: int
    """Values <= 0 left out of the geometric mean."""
