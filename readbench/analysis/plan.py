"""`readbench plan`: tasks x epochs needed per comparison, from a run's table (`power`).

For every arm compared with its model's baseline (`compare.paired_comparisons`), the paired
success difference and the cost ratio per cache model are planned from the run's own
discordance, variance components and tasks per repository: the smallest design that detects
the requested effect, and the smallest effect the run's own design can detect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import _format as F
from .aggregate import prepare
from .compare import SUCCESS, PairedComparison, pair_rows
from .power import PowerPlan, VarianceComponents, detectable_effect, pairs_for_plan, required_tasks, variance_components

__all__ = ["PlanRow", "EPOCH_CHOICES", "format_plan", "plan_comparison", "plan_comparisons"]

EPOCH_CHOICES = (1, 2, 3, 5)
"""Epochs per task offered besides the run's own."""


@dataclass(frozen=True)
class PlanRow:
    """The plan of one metric of one arm against its baseline."""

    model: str
    """Model both arms ran."""
    arm: str
    """Treatment arm label."""
    metric: str
    """``"success"`` or ``cost_usd_{cache model}``."""
    components: VarianceComponents
    """Estimated from the run's pairs."""
    run_epochs: int
    """Epochs per task in the run (the most common count)."""
    detectable: float
    """Smallest effect the run's design detects (analysis scale: fraction or |log ratio|)."""
    plans: tuple[PowerPlan, ...]
    """Tasks needed at the run's epochs first, then at each of `EPOCH_CHOICES`."""

    @property
    def plan(self) -> PowerPlan:
        """The plan at the run's own number of epochs."""
        return self.plans[0]


def plan_comparison(pairs: pd.DataFrame, metric: str, *, effect: float, power: float = 0.8,
                    alpha: float = 0.05) -> tuple[VarianceComponents, int, float, tuple[PowerPlan, ...]] | None:
    """Variance components, run epochs, detectable effect and plans of one metric on `pairs`.

    `effect` is on the analysis scale (success: fraction; cost: |log ratio|). Returns None when
    fewer than 2 pairs have the metric.
    """
    log_scale = metric != SUCCESS
    d, tasks, clusters = pairs_for_plan(pairs, metric, log_scale=log_scale)
    if d.size < 2:
        return None
    vc = variance_components(d, tasks, clusters, binary=metric == SUCCESS,
                             scale="log-ratio" if log_scale else "difference")
    epochs = int(pd.Series(tasks).value_counts().mode().iloc[0])
    mde = detectable_effect(vc, n_tasks=vc.n_tasks, epochs=epochs, n_clusters=vc.n_clusters, power=power, alpha=alpha)
    plans = tuple(required_tasks(vc, effect, epochs=k, power=power, alpha=alpha)
                  for k in (epochs,) + tuple(k for k in EPOCH_CHOICES if k != epochs))
    return vc, epochs, mde, plans


def plan_comparisons(
    table: pd.DataFrame,
    comparisons: tuple[PairedComparison, ...],
    *,
    effect: float = 0.05,
    cost_ratio: float | None = 0.9,
    power: float = 0.8,
    alpha: float = 0.05,
    baseline: tuple[str, str] = ("stock", "off"),
    exclude=(),
) -> tuple[PlanRow, ...]:
    """Plan success (difference `effect`) and cost (ratio `cost_ratio`) of every comparison.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table the comparisons were computed from.
    comparisons : tuple of PairedComparison
        From `compare.paired_comparisons(table, baseline, exclude=exclude)`.
    effect : float, default 0.05
        Success difference to detect, a fraction in (0, 1) (0.05 = 5 percentage points).
    cost_ratio : float or None, default 0.9
        Cost ratio arm / baseline to detect (0.9 = 10 % cheaper), finite, > 0 and != 1; None skips cost.
    power, alpha : float
        Target power and two-sided level.

    Raises
    ------
    ValueError
        If `effect` or `cost_ratio` is out of range.
    """
    if not 0 < effect < 1:
        raise ValueError(f"effect ({effect!r}) must be a fraction in (0, 1), e.g. 0.05 for 5 pp")
    if cost_ratio is not None and (not 0 < cost_ratio < math.inf or cost_ratio == 1):
        raise ValueError(f"cost ratio ({cost_ratio!r}) must be finite, > 0 and != 1, e.g. 0.9 for 10% cheaper")
    df = prepare(table, exclude, baseline)
    rows: list[PlanRow] = []
    for c in comparisons:
        pairs = pair_rows(df[df["arm"] == c.arm], df[df["arm"] == c.baseline_arm])
        metrics = [(SUCCESS, effect)]
        if cost_ratio is not None:
            metrics += [(m.metric, abs(math.log(cost_ratio))) for m in c.metrics
                        if m.metric.startswith("cost_usd_") and m.scale == "ratio"]
        for metric, eff in metrics:
            got = plan_comparison(pairs, metric, effect=eff, power=power, alpha=alpha)
            if got is not None:
                vc, epochs, mde, plans = got
                rows.append(PlanRow(model=c.model, arm=c.arm, metric=metric, components=vc, run_epochs=epochs,
                                    detectable=mde, plans=plans))
    return tuple(rows)


def effect_text(metric: str, effect: float, *, target: bool = False) -> str:
    """An analysis-scale effect in the reader's unit: ``"5.0 pp"`` or ``"a ratio of 0.900×"``.
    A `target` (the effect the user asked to detect) is always given as its ratio."""
    if math.isnan(effect):
        return F.DASH
    if metric == SUCCESS:
        return "more than 100 pp" if math.isinf(effect) else f"{100 * effect:.1f} pp"
    if effect > math.log(100.0) and not target:  # as the report says it (analysis/_decision._cost_only), not 8.8e42×
        return "no ratio between 0.01× and 100×"
    return f"a ratio of {math.exp(-effect):.3f}× (or {math.exp(effect):.3f}×)"


def need_text(plan: PowerPlan) -> str:
    """``"about 412 tasks × 2 epochs (42 repositories)"`` or the reason there is no number."""
    if plan.n_tasks is None:
        return f"no estimate ({plan.reason})"
    return f"about {plan.n_tasks:,} tasks × {plan.epochs} epoch(s) ({plan.n_clusters:,} repositories)"


def format_plan(rows: tuple[PlanRow, ...], *, power: float, alpha: float) -> str:
    """Plain-text answer of `readbench plan`, assumptions first."""
    lines = [
        f"Power {power:.0%}, two-sided level {alpha:g}; paired by (task, epoch) against the baseline arm; "
        "t quantiles on (repositories - 1) degrees of freedom.",
        "Assumes new tasks resemble the run's: same variance components (sigma_c^2 between repositories, "
        "omega^2 between tasks, sigma^2 between epochs) and the same tasks per repository "
        "(Miller 2024, arXiv 2411.00640, power analysis with clustering). Success variances are scaled to the "
        "discordance the effect needs (Connor 1987); cost is planned on the log scale.",
        "",
    ]
    for r in rows:
        vc = r.components
        head = f"{r.arm} vs baseline — {r.metric}"
        lines.append(head)
        lines.append(f"  run: {vc.n_tasks} tasks × {r.run_epochs} epoch(s) in {vc.n_clusters} cluster(s) "
                     f"({vc.tasks_per_cluster:.1f} tasks per cluster); observed mean difference "
                     f"{vc.mean_difference:+.4f}{' (log scale)' if vc.scale == 'log-ratio' else ''}")
        disc = "" if not vc.binary else f"discordance {vc.discordance:.3f}; "
        lines.append(f"  {disc}sigma_c^2 {vc.between_cluster:.4g}, omega^2 {vc.between_task:.4g}, "
                     f"sigma^2 {vc.within_task:.4g}; intra-repository correlation {vc.icc:.3f}")
        for note in vc.notes:
            lines.append(f"  assumption: {note}")
        lines.append(f"  this run detects at least {effect_text(r.metric, r.detectable)}")
        target = effect_text(r.metric, r.plan.effect, target=True)
        for p in r.plans:
            lines.append(f"  to detect {target}: {need_text(p)}")
        lines.append("")
    if not rows:
        lines.append("No comparison to plan: no arm has 2 or more samples (task × epoch) paired with its baseline "
                     "arm's; a plan needs at least 2 paired samples per arm (run more tasks or epochs).")
    return "\n".join(lines).rstrip() + "\n"
