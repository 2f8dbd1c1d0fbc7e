"""From the tidy table to per-arm summaries (paired comparisons: `compare`).

Rules (docs/specs/metrics.md "Aggregation"): success rate with CI; paired differences
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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import stats
from .partition import classify_rows, sort_rows

__all__ = [
    "ArmSummary",
    "MetricValue",
    "arm_summaries",
    "cluster_labels",
    "cost_columns",
    "is_heavy",
    "prepare",
    "summary_columns",
]

HEAVY_TAILED_PREFIXES = ("input_tokens", "output_tokens", "peak_context_tokens", "read_tokens", "cost_usd_")
"""Metrics summarised by median / geometric mean and compared by geometric-mean ratio."""


def cluster_labels(rows: pd.DataFrame, source: str = "source", task: str = "sample_id") -> pd.Series:
    """Cluster label per row: the source repository, or the task id when there is one repository."""
    return rows[source] if rows[source].nunique() > 1 else rows[task]


def is_heavy(column: str) -> bool:
    """Tokens and USD cost (`HEAVY_TAILED_PREFIXES`, not the unpruned counterfactual): medians, ratios."""
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
        return self.median if is_heavy(self.column) else self.mean


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
