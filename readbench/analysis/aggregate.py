"""From the tidy table to per-arm summaries and paired comparisons with the baseline arm.

Rules (shared/specs/metrics.md "Aggregation"): success rate with CI; paired differences
against the baseline arm (``stock`` x ``off``, same model) per (task, epoch); medians and
geometric means for tokens and cost; every table states n (tasks, epochs) and the number of
clusters. The cluster unit is the source repository; when the group has a single repository
it is the task (sample id), so that repeated epochs of one task are never treated as
independent (anchors.md §5.1 item 2: "cluster by repository and by task template").
Denominators follow `partition.py`: excluded samples leave
every denominator, errored and limit-hit samples stay as failures (success = 0). Metric
summaries use the samples whose metric is present (errored samples have none), and say n.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from . import stats
from .partition import classify_rows, sort_rows

__all__ = [
    "ArmSummary",
    "MetricValue",
    "PairedComparison",
    "PairedMetric",
    "arm_summaries",
    "cluster_labels",
    "cost_columns",
    "paired_comparisons",
    "prepare",
]

HEAVY_TAILED_PREFIXES = ("input_tokens", "output_tokens", "peak_context_tokens", "read_tokens", "cost_usd_")
"""Metrics summarised by median / geometric mean and compared by geometric-mean ratio."""


def cluster_labels(rows: pd.DataFrame, source: str = "source", task: str = "sample_id") -> pd.Series:
    """Cluster label per row: the source repository, or the task id when there is one repository."""
    return rows[source] if rows[source].nunique() > 1 else rows[task]


def _is_heavy(column: str) -> bool:
    return column.startswith(HEAVY_TAILED_PREFIXES) and not column.startswith("cost_usd_unpruned_")


@dataclass(frozen=True)
class MetricValue:
    """One summarised metric of one group of samples."""

    column: str
    """Table column, e.g. ``input_tokens`` or ``cost_usd_openai``."""
    n: int
    """Samples with the metric present."""
    mean: float
    """Mean over those samples; NaN when n = 0."""
    median: float
    """Median over those samples; NaN when n = 0."""

    @property
    def headline(self) -> float:
        """The median for heavy-tailed metrics (tokens, USD cost), else the mean."""
        return self.median if _is_heavy(self.column) else self.mean


@dataclass(frozen=True)
class ArmSummary:
    """Success and effort of one arm, or one (arm, family) group."""

    arm: str
    """Arm label."""
    model: str
    """Model name."""
    variant: str
    """Read variant."""
    dcp: str
    """DCP configuration."""
    family: str
    """Task family, or ``""`` for all families."""
    n_tasks: int
    """Distinct sample ids in the denominator."""
    n_epochs: int
    """Distinct epochs in the denominator."""
    n_clusters: int
    """Clusters in the denominator: source repositories, or tasks when there is one repository."""
    n_errored: int
    """Errored samples (in the denominator as failures)."""
    n_limit_hit: int
    """Limit-hit samples (in the denominator as failures)."""
    success: stats.ProportionEstimate
    """Success rate; errored samples count as 0; clustered by `cluster_labels`."""
    metrics: tuple[MetricValue, ...]
    """Summaries of the effort / read / cache metrics, in `summary_columns` order."""

    def metric(self, column: str) -> MetricValue:
        """The summary of `column`; KeyError names the column if it was not summarised."""
        for m in self.metrics:
            if m.column == column:
                return m
        raise KeyError(f"metric {column!r} not summarised for arm {self.arm!r}")


@dataclass(frozen=True)
class PairedMetric:
    """One metric of one arm compared pairwise with the baseline arm."""

    column: str
    """Table column."""
    n_tasks: int
    """Distinct tasks among the pairs with the metric on both sides."""
    n_epochs: int
    """Distinct epochs among those pairs."""
    median_baseline: float
    """Median over the pairs of the baseline arm's values."""
    median_treatment: float
    """Median over the pairs of this arm's values."""
    difference: stats.PairedDifference
    """Mean of (arm - baseline) with a cluster bootstrap CI."""
    wilcoxon: stats.WilcoxonResult
    """Signed-rank test of the pairs."""
    ratio: stats.RatioEstimate | None
    """Geometric-mean ratio arm / baseline for heavy-tailed metrics (tokens, USD); else None,
    or None when no pair has both values > 0."""


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
    success: stats.PairedDifference
    """Paired success difference (fraction; errored = 0)."""
    mcnemar: stats.McNemarResult
    """Exact McNemar test on the success pairs."""
    mcnemar_p_holm: float
    """McNemar p-value Holm-adjusted over all arms compared with this model's baseline."""
    metrics: tuple[PairedMetric, ...]
    """Paired metric comparisons (pairs with the metric present on both sides)."""


def cost_columns(table: pd.DataFrame, prefix: str) -> list[str]:
    """Columns ``{prefix}{cache model}`` present in `table`, sorted by cache model."""
    from .table import cache_models_in

    return [f"{prefix}{m}" for m in cache_models_in(table) if f"{prefix}{m}" in table.columns]


def summary_columns(table: pd.DataFrame) -> list[str]:
    """Metric columns of the per-arm table (report order)."""
    cols = ["turns", "input_tokens", "read_calls", "blind_reads", "capped_reads", "blocked_reads",
            "reread_ratio", "dcp_footer_tokens_saved"]
    for prefix in ("cache_read_ratio_", "cost_usd_", "cost_usd_unpruned_", "dcp_cost_delta_"):
        cols += cost_columns(table, prefix)
    return [c for c in cols if c in table.columns]


def paired_columns(table: pd.DataFrame) -> list[str]:
    """Metric columns compared pairwise with the baseline (report order)."""
    cols = ["turns", "input_tokens", "read_calls", "reread_ratio"]
    cols += cost_columns(table, "cache_read_ratio_") + cost_columns(table, "cost_usd_")
    return [c for c in cols if c in table.columns]


def prepare(table: pd.DataFrame, exclude=(), baseline: tuple[str, str] = ("stock", "off")) -> pd.DataFrame:
    """Rows in every denominator in `partition.sort_rows` order, with ``bucket`` and ``success01``
    (success, NaN -> 0.0) added.

    Raises ValueError if the table is empty or lacks a column `partition.classify_rows` needs.
    """
    if table.empty:
        raise ValueError("table is empty: nothing to aggregate")
    for col in ("arm", "model", "variant", "dcp"):
        if col not in table.columns:
            raise ValueError(f"table lacks column {col!r} needed to aggregate")
    bucket = classify_rows(table, exclude)
    df = sort_rows(table.assign(bucket=bucket), baseline)
    df = df[df["bucket"] != "excluded"].copy()
    df["success01"] = df["success"].fillna(0.0).astype(float)
    return df


def _summarise(rows: pd.DataFrame, columns: list[str], family: str) -> ArmSummary:
    first = rows.iloc[0]
    clusters = cluster_labels(rows)
    metrics = []
    for col in columns:
        vals = rows[col].dropna().to_numpy(dtype=float)
        mean = float(vals.mean()) if vals.size else float("nan")
        median = float(np.median(vals)) if vals.size else float("nan")
        metrics.append(MetricValue(column=col, n=int(vals.size), mean=mean, median=median))
    return ArmSummary(
        arm=str(first["arm"]), model=str(first["model"]), variant=str(first["variant"]), dcp=str(first["dcp"]),
        family=family, n_tasks=int(rows["sample_id"].nunique()), n_epochs=int(rows["epoch"].nunique()),
        n_clusters=int(clusters.nunique()), n_errored=int((rows["bucket"] == "errored").sum()),
        n_limit_hit=int((rows["bucket"] == "limit_hit").sum()),
        success=stats.success_rate(rows["success01"].to_numpy(), clusters.to_numpy()),
        metrics=tuple(metrics),
    )


def arm_summaries(
    table: pd.DataFrame, *, exclude=(), by_family: bool = False, baseline: tuple[str, str] = ("stock", "off")
) -> tuple[ArmSummary, ...]:
    """Summaries per arm (``by_family=False``) or per (arm, family), in table order.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table (`table.tidy_table`).
    exclude : iterable of str
        Sample ids or keys removed from every denominator (`partition.classify_rows`).
    by_family : bool, default False
        One summary per (arm, family) instead of per arm.
    baseline : (variant, dcp), default ("stock", "off")
        Listed first within each model.

    Returns
    -------
    tuple of ArmSummary
        Success rate (Wilson, design-effect-adjusted by source) and mean and median of every
        metric of `summary_columns` (`MetricValue.headline` picks the median for tokens and USD).

    Raises
    ------
    ValueError
        If the table is empty, every sample is excluded, or a needed column is missing.
    """
    df = prepare(table, exclude, baseline)
    if df.empty:
        raise ValueError("every sample is excluded: no denominator left")
    columns = summary_columns(table)
    keys = ["arm", "family"] if by_family else ["arm"]
    out = []
    for key, rows in df.groupby(keys, sort=False):
        family = str(key[1]) if by_family else ""
        out.append(_summarise(rows, columns, family))
    return tuple(out)


def _pair_metric(col: str, merged: pd.DataFrame, rng, n_resamples: int) -> PairedMetric | None:
    t, b, clusters = merged[f"{col}_t"], merged[f"{col}_b"], merged["cluster"]
    ok = t.notna() & b.notna()
    if not ok.any():
        return None
    tv, bv, cl = t[ok].to_numpy(float), b[ok].to_numpy(float), clusters[ok].to_numpy()
    ratio = None
    if _is_heavy(col) and ((tv > 0) & (bv > 0)).any() and (tv >= 0).all() and (bv >= 0).all():
        ratio = stats.geometric_mean_ratio(tv, bv, cl, rng=rng, n_resamples=n_resamples)
    return PairedMetric(
        column=col, n_tasks=int(merged.loc[ok, "sample_id"].nunique()),
        n_epochs=int(merged.loc[ok, "epoch"].nunique()), median_baseline=float(np.median(bv)), median_treatment=float(np.median(tv)),
        difference=stats.paired_difference(tv, bv, cl, rng=rng, n_resamples=n_resamples),
        wilcoxon=stats.wilcoxon_signed_rank(tv, bv), ratio=ratio,
    )


def paired_comparisons(
    table: pd.DataFrame,
    baseline: tuple[str, str] = ("stock", "off"),
    *,
    rng: np.random.Generator,
    exclude=(),
    n_resamples: int = 2000,
) -> tuple[tuple[PairedComparison, ...], tuple[str, ...]]:
    """Compare every non-baseline arm with the baseline arm of the same model.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table.
    baseline : (variant, dcp), default ("stock", "off")
        The baseline arm within each model.
    rng : numpy.random.Generator
        Randomness for every bootstrap, consumed in table order (arms, then metrics).
    exclude : iterable of str
        Sample ids or keys removed from every denominator.
    n_resamples : int, default 2000
        Bootstrap resamples per interval.

    Returns
    -------
    comparisons : tuple of PairedComparison
        In table order. Pairs join on (model, sample_id, epoch); samples without a partner
        are counted in ``n_unmatched`` and left out.
    notes : tuple of str
        One sentence per model that has no baseline arm, or arm with no shared pair.

    Raises
    ------
    ValueError
        If the table is empty or a needed column is missing.
    """
    df = prepare(table, exclude, baseline)
    comparisons: list[PairedComparison] = []
    notes: list[str] = []
    pending: list[tuple[int, float]] = []
    for model, mrows in df.groupby("model", sort=False):
        base = mrows[(mrows["variant"] == baseline[0]) & (mrows["dcp"] == baseline[1])]
        others = [a for a in mrows["arm"].unique() if a not in set(base["arm"])]
        if base.empty:
            if others:
                notes.append(f"No baseline arm ({baseline[0]} × {baseline[1]}) for model {model}: "
                             "its arms have no paired comparison.")
            continue
        first_index = len(comparisons)
        for arm in others:
            trows = mrows[mrows["arm"] == arm]
            merged = trows.merge(base, on=["sample_id", "epoch"], suffixes=("_t", "_b"), how="inner")
            unmatched = len(trows) + len(base) - 2 * len(merged)
            if merged.empty:
                notes.append(f"Arm {arm} shares no (task, epoch) with its baseline: no paired comparison.")
                continue
            merged["cluster"] = cluster_labels(merged, source="source_t")
            clusters = merged["cluster"]
            success = stats.paired_difference(merged["success01_t"], merged["success01_b"], clusters,
                                              rng=rng, n_resamples=n_resamples)
            mcn = stats.mcnemar_exact(merged["success01_t"], merged["success01_b"])
            metrics = []
            for col in paired_columns(table):
                pm = _pair_metric(col, merged, rng, n_resamples)
                if pm is not None:
                    metrics.append(pm)
            comparisons.append(PairedComparison(
                arm=str(arm), baseline_arm=str(base["arm"].iloc[0]), model=str(model), n_pairs=len(merged),
                n_tasks=int(merged["sample_id"].nunique()), n_epochs=int(merged["epoch"].nunique()),
                n_clusters=int(clusters.nunique()), n_unmatched=int(unmatched), success=success,
                mcnemar=mcn, mcnemar_p_holm=float("nan"), metrics=tuple(metrics),
            ))
        adjusted = stats.holm_adjust([c.mcnemar.p_value for c in comparisons[first_index:]])
        pending += list(zip(range(first_index, len(comparisons)), adjusted))
    for i, p in pending:
        comparisons[i] = replace(comparisons[i], mcnemar_p_holm=p)
    return tuple(comparisons), tuple(notes)
