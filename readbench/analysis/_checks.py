"""The records of `regression` (the nightly verdict): the tolerance, one check, the comparison."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import _format as F
from . import stats
from .compare import SUCCESS
from .smallest import SmallestDifference

__all__ = ["ALPHA", "BaselineComparison", "MetricCheck", "Tolerance"]

ALPHA = 0.05
"""Family-wise error rate of the regression checks (Holm across every check of the run)."""

@dataclass(frozen=True)
class Tolerance:
    """How much worse an arm may get before it counts as a regression."""

    success: float = 0.05
    """Largest tolerated drop in success, a fraction (0.05 = 5 percentage points), in [0, 1)."""
    relative: float = 0.10
    """Largest tolerated relative increase of cost, input tokens, turns and read calls, a
    fraction (0.10 = 10 %: a ratio of 1.10, or a mean increase of 10 % of the baseline's mean)."""

    def __post_init__(self) -> None:
        for name, value in (("success", self.success), ("relative", self.relative)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value < 1:
                raise ValueError(f"tolerance {name} must be a fraction in [0, 1), got {value!r}")

    def describe(self) -> str:
        """``"success −5.0 pp; cost and input tokens ×1.10; turns and read calls +10 % of the baseline mean"``."""
        return (f"success −{100 * self.success:.1f} pp; cost and input tokens ×{1 + self.relative:.2f}; "
                f"turns and read calls +{100 * self.relative:.0f} % of the baseline mean")


@dataclass(frozen=True)
class MetricCheck:
    """One metric of one arm, the run against the baseline on shared (task, epoch) pairs."""

    arm: str
    """Arm label, ``"{variant} × {dcp} @ {model}"``."""
    metric: str
    """``"success"`` or a table column (``turns``, ``cost_usd_openai``, ...)."""
    scale: str
    """``"difference"`` (estimate = mean of now - baseline) or ``"ratio"`` (geometric-mean ratio)."""
    baseline_value: float
    """Baseline over the pairs: mean (success as a fraction, turns, read calls) or median (ratio scale)."""
    current_value: float
    """The run over the same pairs, same statistic as `baseline_value`."""
    estimate: float
    """Mean paired difference, or geometric-mean ratio now / baseline."""
    ci: stats.ConfidenceInterval
    """95 % CR2 t interval of `estimate` (`compare.compare_metric`)."""
    bound: float
    """The tolerance on the estimate's scale: ``-0.05`` (success), ``1.10`` (ratio), or the largest
    tolerated mean increase in the metric's unit (turns, read calls)."""
    p_value: float
    """One-sided p of "not worse beyond `bound`"; NaN when untestable (fewer than 2 clusters)."""
    p_holm: float
    """Holm-adjusted `p_value` across every testable check of the comparison; NaN when untestable."""
    n_pairs: int
    """Pairs with the metric on both sides (ratio scale: both > 0)."""
    n_clusters: int
    """Clusters among those pairs (source repositories, or tasks when there is one)."""
    detectable: float = float("nan")
    """Smallest true worsening detected with 80 % power at the first Holm step (`_check_power`), on
    the estimate's scale but as a worsening: success drop (positive fraction), ratio, or mean
    increase; NaN when untestable, inf when no success drop would be."""
    smallest: float | None = None
    """The smallest worsening that matters on the same scale (success, cost), or None (no such
    threshold for turns, input tokens, read calls: their power is shown, not judged)."""

    @property
    def regression(self) -> bool:
        """Significantly worse than the baseline beyond the tolerance (Holm p < `ALPHA`)."""
        return not math.isnan(self.p_holm) and self.p_holm < ALPHA

    @property
    def underpowered(self) -> bool:
        """A success or cost check that cannot detect the smallest worsening that matters (or cannot be tested)."""
        return self.smallest is not None and not self.detectable <= self.smallest + 1e-12

    def detects(self) -> str:
        """``"detects a drop ≥ 31.2 pp"``, ``"detects ≥ ×1.31"``, ``"detects ≥ +2.10"``, or why nothing."""
        if math.isnan(self.detectable):
            return "detects nothing (fewer than 2 clusters)"
        if math.isinf(self.detectable):
            return "detects no drop up to 100 pp"
        if self.metric == SUCCESS:
            return f"detects a drop ≥ {100 * self.detectable:.1f} pp"
        return f"detects ≥ ×{self.detectable:.3f}" if self.scale == "ratio" else f"detects ≥ {F.signed(self.detectable, 2)}"

    def underpowered_line(self) -> str:
        """One line: the check, what it detects, and the smallest difference that matters."""
        that = (f"{100 * self.smallest:g} pp" if self.metric == SUCCESS else f"×{self.smallest:.3f}") \
            if self.smallest is not None else F.DASH
        return (f"{self.arm} · {self.metric}: this run {self.detects()}; the smallest difference that matters is "
                f"{that} (80% power, Holm level; `readbench plan` says what would)")

    def _fmt(self) -> tuple:
        if self.metric == SUCCESS:
            return F.pct, F.pp, (lambda x: f"{100 * x:+.1f} pp")
        if self.scale == "ratio":
            value = F.usd if self.metric.startswith("cost_usd_") else (lambda x: F.num(x, 0))
            return value, F.ratio, (lambda x: f"×{x:.2f}")
        return (lambda x: F.num(x, 2)), (lambda x: F.signed(x, 2)), (lambda x: F.signed(x, 2))

    def line(self) -> str:
        """One line: arm, metric, baseline -> now, estimate and interval, tolerance, adjusted p."""
        value, est, tol = self._fmt()
        stat = "median" if self.scale == "ratio" else "mean"
        return (f"{self.arm} · {self.metric}: {value(self.baseline_value)} -> {value(self.current_value)} "
                f"({stat} over {self.n_pairs} pairs, {self.n_clusters} clusters); {est(self.estimate)} "
                f"95% CI {F.interval(est, self.ci.low, self.ci.high)}, tolerance {tol(self.bound)}; "
                f"Holm-adjusted p {_p_text(self.p_holm)}; {self.detects()}")


@dataclass(frozen=True)
class BaselineComparison:
    """Every check of a run against a baseline, what was not compared, and the verdict."""

    checks: tuple[MetricCheck, ...]
    """One per (common arm, headline metric) with at least one pair, in arm then metric order."""
    notes: tuple[str, ...]
    """What differs between the runs and was left out (arms, tasks, epochs, cache models, ...)."""
    incomplete: tuple[str, ...]
    """Why the comparison cannot be a verdict (partial arms, missing columns, nothing in common)."""
    tolerance: Tolerance = field(default_factory=Tolerance)
    smallest: SmallestDifference = field(default_factory=SmallestDifference)

    @property
    def regressions(self) -> tuple[MetricCheck, ...]:
        """The checks that are regressions."""
        return tuple(c for c in self.checks if c.regression)

    @property
    def underpowered(self) -> tuple[MetricCheck, ...]:
        """The success and cost checks that cannot detect the smallest difference that matters."""
        return tuple(c for c in self.checks if c.underpowered)

    @property
    def exit_code(self) -> int:
        """2 when incomplete (no verdict), else 1 when any check is a regression, else 3 when a
        success or cost check is underpowered (no verdict of "no regression"), else 0."""
        return 2 if self.incomplete else (1 if self.regressions else (3 if self.underpowered else 0))

    def summary(self, baseline: str = "the baseline") -> str:
        """The verdict as one line."""
        tested = sum(1 for c in self.checks if not math.isnan(c.p_value))
        arms = len({c.arm for c in self.checks})
        if self.incomplete:
            return f"no verdict: {len(self.incomplete)} reason(s) above; compared {arms} arm(s) with {baseline} anyway"
        if not self.regressions and self.underpowered:
            worst = max(self.underpowered, key=lambda c: (c.metric == SUCCESS, _finite(c.detectable)))
            return (f"underpowered: {len(self.underpowered)} of the success and cost checks cannot detect the "
                    f"smallest difference that matters ({self.smallest.describe()}); e.g. {worst.underpowered_line()}; "
                    f"no regression found in {tested} checks of {arms} arm(s) against {baseline}, which is no "
                    "verdict")
        head = (f"{len(self.regressions)} regression(s)" if self.regressions else "no regression")
        return (f"{head} in {tested} checks of {arms} arm(s) against {baseline} (Holm across the checks at "
                f"{ALPHA:g}; tolerance: {self.tolerance.describe()}; every success and cost check detects "
                f"{self.smallest.describe()})" if not self.underpowered else
                f"{head} in {tested} checks of {arms} arm(s) against {baseline} (Holm across the checks at "
                f"{ALPHA:g}; tolerance: {self.tolerance.describe()}; {len(self.underpowered)} success or cost "
                "check(s) underpowered)")


def _finite(x: float) -> float:
    return x if math.isfinite(x) else float("inf")


def _p_text(p: float) -> str:
    """``"= 0.012"`` or ``"< 0.001"``."""
    text = F.p_value(p)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"
