"""Paired comparisons of two arms on shared (task, epoch) pairs, clustered by repository.

`paired_comparison(treatment_rows, baseline_rows, metric)` is the one function a caller needs
to compare arm X with arm Y on one metric: it pairs the rows, clusters the pairs by source
repository (by task when there is one repository, `aggregate.cluster_labels`) and returns an
estimate, a small-cluster CI and a p-value (`MetricComparison`). The rows may come from one
table or from two (a run against a committed baseline). `paired_comparisons(table)` runs it
for every arm against the baseline arm of its model and applies Holm's adjustment across the
report's confirmatory family.

Rules (docs/specs/metrics.md "Aggregation"; anchors.md §5.2, §9):

- success: mean paired difference of 0/1 outcomes (errored = failure), CR2 t interval and
  test (`stats.paired_difference`); McNemar's exact test beside it as a secondary test (it
  treats pairs as independent);
- heavy-tailed metrics (tokens, USD cost; `aggregate.HEAVY_TAILED_PREFIXES`): the
  geometric-mean ratio with the CR2 t interval and test on log ratios, and the Wilcoxon
  signed-rank test on the same log ratios (secondary);
- other metrics (turns, read calls, ratios): mean paired difference, CR2 t, Wilcoxon on raw
  differences (secondary).
- **Confirmatory family** (`CONFIRMATORY`): per model, success and cost per cache model of
  every arm against the baseline. Their primary p-values get Holm's step-down adjustment
  together; everything else is reported as exploratory, unadjusted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from . import stats
from .aggregate import cluster_labels, cost_columns, is_heavy, prepare

__all__ = [
    "MetricComparison",
    "PairedComparison",
    "compare_metric",
    "is_confirmatory",
    "pair_rows",
    "paired_columns",
    "paired_comparison",
    "paired_comparisons",
]

SUCCESS = "success"
"""Metric name of paired success (0/1; NaN, i.e. errored, counts as 0)."""


def is_confirmatory(metric: str) -> bool:
    """Success and cost (``cost_usd_{cache model}``) are the report's confirmatory metrics."""
    return metric == SUCCESS or (metric.startswith("cost_usd_") and not metric.startswith("cost_usd_unpruned_"))


CONFIRMATORY = "success and cost_usd_{cache model}, every arm vs the baseline arm of its model"
"""The family Holm's adjustment runs over (see `is_confirmatory`)."""


@dataclass(frozen=True)
class MetricComparison:
    """One metric of a treatment arm against a baseline arm on shared (task, epoch) pairs."""

    metric: str
    """``"success"`` or a table column (``turns``, ``cost_usd_openai``, ...)."""
    scale: str
    """``"difference"`` (estimate = mean of treatment - baseline) or ``"ratio"`` (estimate =
    geometric-mean ratio treatment / baseline, tested on log ratios)."""
    estimate: float
    """Mean difference (metric unit; success as a fraction) or geometric-mean ratio."""
    ci: stats.ConfidenceInterval
    """CR2 t interval on the same scale as `estimate`; NaN bounds with fewer than 2 clusters.
    Success: intersected with [-1, 1]; with no discordant pair, ``±(1 - 0.025^(1/G))`` (the exact
    upper bound of the discordance with the G clusters as units) instead of the empty [0, 0]."""
    p_value: float
    """Two-sided p-value of no effect from the same t test (the interval's inversion)."""
    p_holm: float
    """Holm-adjusted p across the confirmatory family; NaN for exploratory metrics."""
    confirmatory: bool
    """Whether the metric is in the confirmatory family (`is_confirmatory`)."""
    n_pairs: int
    """Pairs with the metric on both sides (for a ratio: both > 0)."""
    n_tasks: int
    """Distinct tasks among those pairs."""
    n_epochs: int
    """Distinct epochs among those pairs."""
    n_clusters: int
    """Clusters among those pairs."""
    median_treatment: float
    """Median of the treatment arm's values over the pairs."""
    median_baseline: float
    """Median of the baseline arm's values over the pairs."""
    difference: stats.PairedDifference
    """Mean paired difference (always; for ratios it is shown beside the ratio)."""
    ratio: stats.RatioEstimate | None
    """Geometric-mean ratio for heavy-tailed metrics, else None."""
    wilcoxon: stats.WilcoxonResult
    """Secondary signed-rank test (log ratios for heavy-tailed metrics)."""


@dataclass(frozen=True)
class PairedComparison:
    """One arm against the baseline arm of the same model, on shared (task, epoch) pairs."""

    arm: str
    """Treatment arm label."""
    baseline_arm: str
    """Baseline arm label."""
    model: str
    """Model both arms ran."""
    n_pairs: int
    """(task, epoch) pairs present in both arms (excluded samples removed)."""
    n_tasks: int
    """Distinct tasks among the pairs."""
    n_epochs: int
    """Distinct epochs among the pairs."""
    n_clusters: int
    """Clusters among the pairs: source repositories, or tasks when there is one repository."""
    n_unmatched: int
    """Samples of either arm with no partner in the other (left out of every paired statistic)."""
    success: MetricComparison
    """Paired success difference (fraction; errored = 0), confirmatory."""
    mcnemar: stats.McNemarResult
    """Exact McNemar test on the success pairs (secondary: assumes independent pairs)."""
    metrics: tuple[MetricComparison, ...]
    """Paired metric comparisons (pairs with the metric present on both sides), `paired_columns` order."""

    def metric(self, column: str) -> MetricComparison | None:
        """The comparison of `column` (``"success"`` included), or None if it was not compared."""
        if column == SUCCESS:
            return self.success
        return next((m for m in self.metrics if m.metric == column), None)


def paired_columns(table: pd.DataFrame) -> list[str]:
    """Metric columns compared pairwise with the baseline (report order)."""
    cols = ["turns", "input_tokens", "read_calls", "reread_ratio"]
    cols += cost_columns(table, "cache_read_ratio_") + cost_columns(table, "cost_usd_")
    return [c for c in cols if c in table.columns]


def pair_rows(treatment: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """Inner join of two arms' rows on (sample_id, epoch), with a ``cluster`` column.

    Parameters
    ----------
    treatment, baseline : pandas.DataFrame
        Rows of one arm each (tidy-table columns; at least sample_id, epoch, source). They
        may come from different tables (e.g. a run and a committed baseline run).

    Returns
    -------
    pandas.DataFrame
        One row per shared (sample_id, epoch); columns suffixed ``_t`` and ``_b``, plus
        ``success01_t`` / ``success01_b`` (success with NaN as 0) and ``cluster``.

    Raises
    ------
    ValueError
        If a needed column is missing, or an arm has the same (sample_id, epoch) twice.
    """
    for name, rows in (("treatment", treatment), ("baseline", baseline)):
        missing = [c for c in ("sample_id", "epoch", "source") if c not in rows.columns]
        if missing:
            raise ValueError(f"{name} rows lack column(s) {missing} needed to pair samples")
        if rows.duplicated(["sample_id", "epoch"]).any():
            raise ValueError(f"{name} rows repeat a (sample_id, epoch): pass the rows of one arm")
    t, b = treatment.copy(), baseline.copy()
    for rows in (t, b):
        if "success01" not in rows.columns:
            rows["success01"] = rows["success"].fillna(0.0).astype(float) if "success" in rows else np.nan
    merged = t.merge(b, on=["sample_id", "epoch"], suffixes=("_t", "_b"), how="inner")
    merged["cluster"] = cluster_labels(merged, source="source_t") if len(merged) else pd.Series(dtype=object)
    return merged


def compare_metric(pairs: pd.DataFrame, metric: str, *, confidence: float = 0.95) -> MetricComparison | None:
    """Compare `metric` on pairs from `pair_rows`; None when no pair has it on both sides.

    ``metric="success"`` compares 0/1 success (errored = 0). Heavy-tailed metrics are
    compared by geometric-mean ratio when some pair has both values > 0 (module docstring).
    ``p_holm`` is NaN here; `paired_comparisons` fills it for the confirmatory family.

    Raises
    ------
    ValueError
        If the metric's columns are missing from `pairs`.
    """
    col = "success01" if metric == SUCCESS else metric
    if f"{col}_t" not in pairs.columns or f"{col}_b" not in pairs.columns:
        raise ValueError(f"pairs lack the columns of metric {metric!r} ({col}_t, {col}_b)")
    t, b = pairs[f"{col}_t"].astype(float), pairs[f"{col}_b"].astype(float)
    ok = t.notna() & b.notna()
    if not ok.any():
        return None
    tv, bv, cl = t[ok].to_numpy(), b[ok].to_numpy(), pairs.loc[ok, "cluster"].to_numpy()
    diff = stats.paired_difference(tv, bv, cl, confidence=confidence)
    ratio = None
    if metric != SUCCESS and is_heavy(metric) and ((tv > 0) & (bv > 0)).any() and (tv >= 0).all() and (bv >= 0).all():
        ratio = stats.geometric_mean_ratio(tv, bv, cl, confidence=confidence)
    used = ok & (t > 0) & (b > 0) if ratio is not None else ok
    primary = ratio if ratio is not None else diff
    ci = primary.ci
    if metric == SUCCESS and not (tv != bv).any() and diff.n_clusters >= 2:
        # No discordant pair: the t interval collapses to [0, 0]. Bound the discordance instead, with
        # the clusters as the independent units (as `stats.success_rate` does for constant outcomes):
        # the exact one-sided (1 + confidence)/2 upper bound for 0 events in G trials.
        bound = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / diff.n_clusters)
        ci = stats.ConfidenceInterval(-bound, bound)
    elif metric == SUCCESS and not math.isnan(ci.low):  # a difference of proportions lies in [-1, 1]
        ci = stats.ConfidenceInterval(max(-1.0, ci.low), min(1.0, ci.high))
    return MetricComparison(
        metric=metric, scale="ratio" if ratio is not None else "difference",
        estimate=ratio.ratio if ratio is not None else diff.mean_difference,
        ci=ci, p_value=primary.p_value, p_holm=float("nan"), confirmatory=is_confirmatory(metric),
        n_pairs=int(used.sum()), n_tasks=int(pairs.loc[used, "sample_id"].nunique()),
        n_epochs=int(pairs.loc[used, "epoch"].nunique()), n_clusters=int(pairs.loc[used, "cluster"].nunique()),
        median_treatment=float(np.median(tv)), median_baseline=float(np.median(bv)),
        difference=diff, ratio=ratio, wilcoxon=stats.wilcoxon_signed_rank(tv, bv, log_scale=ratio is not None),
    )


def paired_comparison(
    treatment: pd.DataFrame, baseline: pd.DataFrame, metric: str, *, confidence: float = 0.95
) -> MetricComparison:
    """Paired comparison of arm X (`treatment` rows) vs arm Y (`baseline` rows) on `metric`.

    Parameters
    ----------
    treatment, baseline : pandas.DataFrame
        Rows of one arm each (tidy-table columns), from one table or two.
    metric : str
        ``"success"`` or a metric column (e.g. ``"cost_usd_openai"``, ``"turns"``).
    confidence : float, default 0.95

    Returns
    -------
    MetricComparison
        Estimate (difference, or geometric-mean ratio for tokens and cost), CR2 t interval,
        p-value, pair and cluster counts. ``p_holm`` is NaN (one comparison: no family).

    Raises
    ------
    ValueError
        If the arms share no (task, epoch) with the metric on both sides, or a column is missing.

    Examples
    --------
    >>> t = pd.DataFrame({"sample_id": ["a/1", "a/2", "b/1", "b/2"], "epoch": 1,
    ...                   "source": ["a", "a", "b", "b"], "success": [1.0, 1.0, 1.0, 0.0]})
    >>> b = t.assign(success=[0.0, 1.0, 0.0, 0.0])
    >>> r = paired_comparison(t, b, "success")
    >>> r.estimate, r.n_pairs, r.n_clusters, r.scale
    (0.5, 4, 2, 'difference')
    """
    pairs = pair_rows(treatment, baseline)
    result = compare_metric(pairs, metric, confidence=confidence) if len(pairs) else None
    if result is None:
        raise ValueError(f"the two arms share no (task, epoch) with metric {metric!r} on both sides")
    return result


def paired_comparisons(
    table: pd.DataFrame, baseline: tuple[str, str] = ("stock", "off"), *, exclude=(), confidence: float = 0.95
) -> tuple[tuple[PairedComparison, ...], tuple[str, ...]]:
    """Compare every non-baseline arm with the baseline arm of the same model.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table.
    baseline : (variant, dcp), default ("stock", "off")
        The baseline arm within each model.
    exclude : iterable of str
        Sample ids or keys removed from every denominator.
    confidence : float, default 0.95

    Returns
    -------
    comparisons : tuple of PairedComparison
        In table order, with ``p_holm`` filled across each model's confirmatory family.
    notes : tuple of str
        One sentence per model that has no baseline arm, or arm with no shared pair.

    Raises
    ------
    ValueError
        If the table is empty or a needed column is missing.
    """
    df = prepare(table, exclude, baseline)
    columns = paired_columns(table)
    comparisons: list[PairedComparison] = []
    notes: list[str] = []
    # under several agents (GitHub issue 24) each agent's arms are paired with that agent's baseline
    keys = ["model", "agent"] if "agent" in df.columns else ["model"]
    for key, mrows in df.groupby(keys, sort=False, dropna=False):
        model, agent = (key[0], key[1]) if len(keys) == 2 else (key[0] if isinstance(key, tuple) else key, None)
        base = mrows[(mrows["variant"] == baseline[0]) & (mrows["dcp"] == baseline[1])]
        others = [a for a in mrows["arm"].unique() if a not in set(base["arm"])]
        if base.empty:
            if others:
                under = f" under agent {agent}" if isinstance(agent, str) and agent != "readbench" else ""
                notes.append(f"No baseline arm ({baseline[0]} × {baseline[1]}) for model {model}{under}: "
                             "its arms have no paired comparison.")
            continue
        found: list[PairedComparison] = []
        for arm in others:
            trows = mrows[mrows["arm"] == arm]
            pairs = pair_rows(trows, base)
            if pairs.empty:
                notes.append(f"Arm {arm} shares no (task, epoch) with its baseline: no paired comparison.")
                continue
            success = compare_metric(pairs, SUCCESS, confidence=confidence)
            assert success is not None  # success01 is never NaN
            metrics = tuple(m for m in (compare_metric(pairs, c, confidence=confidence) for c in columns) if m)
            found.append(PairedComparison(
                arm=str(arm), baseline_arm=str(base["arm"].iloc[0]), model=str(model), n_pairs=len(pairs),
                n_tasks=int(pairs["sample_id"].nunique()), n_epochs=int(pairs["epoch"].nunique()),
                n_clusters=int(pairs["cluster"].nunique()), n_unmatched=len(trows) + len(base) - 2 * len(pairs),
                success=success, mcnemar=stats.mcnemar_exact(pairs["success01_t"], pairs["success01_b"]),
                metrics=metrics,
            ))
        comparisons += _holm(found)
    return tuple(comparisons), tuple(notes)


def _holm(comparisons: list[PairedComparison]) -> list[PairedComparison]:
    """Fill ``p_holm`` of every confirmatory metric of one model's comparisons (one family).

    A NaN p-value (fewer than 2 clusters: no test) stays out of the family and keeps NaN.
    """
    slots = [(i, m.metric) for i, c in enumerate(comparisons) for m in (c.success,) + c.metrics
             if m.confirmatory and not math.isnan(m.p_value)]
    raw = [comparisons[i].metric(metric).p_value for i, metric in slots]  # type: ignore[union-attr]
    adjusted = dict(zip(slots, stats.holm_adjust(raw)))
    out = []
    for i, c in enumerate(comparisons):
        def fill(m: MetricComparison) -> MetricComparison:
            return replace(m, p_holm=adjusted[(i, m.metric)]) if (i, m.metric) in adjusted else m
        out.append(replace(c, success=fill(c.success), metrics=tuple(fill(m) for m in c.metrics)))
    return out
