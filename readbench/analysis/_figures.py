"""Report figures (PNG, seaborn on matplotlib's Agg canvas; no pyplot global state)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .aggregate import ArmSummary

__all__ = ["cost_figure", "success_figure", "token_ratio_figure"]

_DPI = 120


def _new_figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _short(arm: str, multi_model: bool) -> str:
    return arm if multi_model else arm.split(" @ ")[0]


def success_figure(summaries: tuple[ArmSummary, ...], path: Path) -> Path:
    """Success rate per arm with its interval (percent), one row per arm. Returns `path`."""
    import seaborn as sns

    sns.set_theme(style="whitegrid")
    multi = len({s.model for s in summaries}) > 1
    labels = [_short(s.arm, multi) for s in summaries]
    rates = np.array([100 * s.success.rate for s in summaries])
    low = rates - np.array([100 * s.success.ci.low for s in summaries])
    high = np.array([100 * s.success.ci.high for s in summaries]) - rates
    fig = _new_figure(7.5, 0.45 * len(summaries) + 1.4)
    ax = fig.subplots()
    y = np.arange(len(summaries))
    ax.errorbar(rates, y, xerr=[low, high], fmt="o", color="#1f5fa8", ecolor="#7aa6d6", capsize=4)
    for yi, r, s in zip(y, rates, summaries):
        ax.annotate(f"{r:.1f}% (n={s.success.n})", (r, yi), xytext=(6, 6), textcoords="offset points", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(-2, 102)
    ax.set_xlabel("success rate, % (95% CI; Wilson, design effect by source repository)")
    ax.set_title("Success rate per arm")
    fig.savefig(path, dpi=_DPI)
    return path


def token_ratio_figure(pairs: pd.DataFrame, path: Path) -> Path | None:
    """Per-pair input-token ratio arm / baseline on a log2 axis (box + points).

    `pairs` has columns ``arm`` and ``ratio`` (one row per (task, epoch) pair with both
    values > 0). Returns `path`, or None when `pairs` is empty (nothing to draw).
    """
    if pairs.empty:
        return None
    import seaborn as sns

    sns.set_theme(style="whitegrid")
    data = pairs.assign(log2_ratio=np.log2(pairs["ratio"].to_numpy(float)))
    n_arms = data["arm"].nunique()
    fig = _new_figure(7.5, 0.5 * n_arms + 1.6)
    ax = fig.subplots()
    with warnings.catch_warnings():
        # seaborn 0.13.2 passes matplotlib's deprecated `vert=` to bxp (matplotlib >= 3.11 warns)
        warnings.filterwarnings("ignore", message="vert: bool was deprecated", category=DeprecationWarning)
        sns.boxplot(data=data, x="log2_ratio", y="arm", ax=ax, color="#cfe0f3", fliersize=0, width=0.55)
    sns.stripplot(data=data, x="log2_ratio", y="arm", ax=ax, color="#1f5fa8", size=3, alpha=0.6, jitter=0.15)
    ax.axvline(0.0, color="#b33", linewidth=1)
    ticks = ax.get_xticks()
    ax.set_xticks(ticks, [f"{2.0 ** t:.2g}×" for t in ticks])
    ax.set_xlabel("input tokens, arm / baseline, per (task, epoch); log scale")
    ax.set_ylabel("")
    ax.set_title("Paired input-token ratio vs baseline")
    fig.savefig(path, dpi=_DPI)
    return path


def cost_figure(table: pd.DataFrame, cost_cols: list[str], path: Path) -> Path | None:
    """Median cost (USD) per arm and cache model, bars grouped by arm. None if no cost column."""
    if not cost_cols:
        return None
    import seaborn as sns

    sns.set_theme(style="whitegrid")
    long = table.melt(id_vars=["arm"], value_vars=cost_cols, var_name="cache_model", value_name="cost_usd")
    long["cache_model"] = long["cache_model"].str.removeprefix("cost_usd_")
    long = long.dropna(subset=["cost_usd"])
    if long.empty:
        return None
    if table["model"].nunique() == 1:
        long["arm"] = long["arm"].str.split(" @ ").str[0]
    n_arms = long["arm"].nunique()
    fig = _new_figure(7.5, 0.55 * n_arms + 1.8)
    ax = fig.subplots()
    sns.barplot(data=long, x="cost_usd", y="arm", hue="cache_model", estimator=np.median, errorbar=None, ax=ax,
                orient="h")
    ax.set_xlabel("median cost per sample, USD (simulated provider prices)")
    ax.set_ylabel("")
    ax.set_title("Cost per sample by cache model")
    ax.legend(title="cache model", fontsize=8, title_fontsize=8)
    fig.savefig(path, dpi=_DPI)
    return path
