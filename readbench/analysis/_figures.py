"""Report figures (PNG, seaborn on matplotlib's Agg canvas; no pyplot global state).

Four figures a reader looks at instead of reading tables (issue 15): the success-cost Pareto
plot per model x cache model, a forest plot of paired differences against the baseline
(success, cost, turns, reads), the cache-read ratio by DCP configuration x cache model, and
read fragmentation (reads per file, re-read ratio) by file size.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from readbench.corpus.sizes import SIZE_BUCKETS, size_bucket

from .compare import PairedComparison

__all__ = ["cache_ratio_figure", "forest_figure", "fragmentation_figure", "pareto_figure"]

_DPI = 110


def _new_figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _theme() -> None:
    import seaborn as sns

    sns.set_theme(style="whitegrid", font_scale=0.8)


def pareto_figure(points: pd.DataFrame, path: Path) -> Path | None:
    """Success rate (with CI) against median cost per sample, one panel per model x cache model.

    `points` has columns panel, arm, success, low, high, cost_usd, frontier (bool), baseline
    (bool) and optionally ns (bool: not significantly different from the baseline, `_decision.
    pareto_points`). Frontier arms are joined by a line; n.s. arms are drawn hollow and their
    labels end in "(n.s.)". Returns `path`, or None when `points` is empty.
    """
    if points.empty:
        return None
    _theme()
    panels = list(dict.fromkeys(points["panel"]))
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig = _new_figure(4.2 * cols + 0.6, 3.6 * rows + 0.4)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, panel in zip(axes, panels):
        p = points[points["panel"] == panel]
        x, y = p["cost_usd"].to_numpy(float), 100 * p["success"].to_numpy(float)
        err = [y - 100 * p["low"].to_numpy(float), 100 * p["high"].to_numpy(float) - y]
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor="#b9c9dd", elinewidth=1, zorder=1)
        colors = np.where(p["frontier"], "#c0392b", "#1f5fa8")
        ns = p["ns"].to_numpy(bool) if "ns" in p else np.zeros(len(p), bool)
        ax.scatter(x, y, c=np.where(ns, "white", colors), s=np.where(p["baseline"], 70, 30), marker="o", zorder=2,
                   edgecolors=np.where(p["baseline"], "black", np.where(ns, colors, "none")), linewidths=1.2)
        front = p[p["frontier"]].sort_values("cost_usd")
        ax.plot(front["cost_usd"], 100 * front["success"], color="#c0392b", linewidth=1, zorder=1)
        named = p[p["frontier"] | p["baseline"]]  # the rest are in the tables; labelling all of them overlaps
        flags = named["ns"] if "ns" in named else [False] * len(named)
        for k, (xi, yi, arm, n) in enumerate(zip(named["cost_usd"], 100 * named["success"], named["arm"], flags)):
            ax.annotate(f"{arm} (n.s.)" if n else arm, (xi, yi), xytext=(4, -10 - 9 * k), textcoords="offset points",
                        fontsize=7)
        if len(x) and x.min() > 0 and x.max() / x.min() > 20:
            ax.set_xscale("log")
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("median cost per sample, USD")
        ax.set_ylabel("success, % (95% CI)")
        ax.set_ylim(-3, 103)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.suptitle("Success vs cost: Pareto frontier in red and named, baseline circled; hollow (n.s.): not "
                 "significantly different from the baseline", fontsize=10)
    fig.savefig(path, dpi=_DPI)
    return path


def _forest_rows(comparisons: tuple[PairedComparison, ...], multi_model: bool) -> tuple[list[str], list[tuple]]:
    labels = [c.arm if multi_model else c.arm.split(" @ ")[0] for c in comparisons]
    panels: list[tuple] = []
    panels.append(("success, Δ pp", "difference", [(c.success, "") for c in comparisons], 100.0))
    cost = [[(m, m.metric[len("cost_usd_"):]) for m in c.metrics if m.metric.startswith("cost_usd_")
             and m.scale == "ratio"] for c in comparisons]
    panels.append(("cost, ratio arm / baseline", "ratio", cost, 1.0))
    for col, title in (("turns", "turns, Δ"), ("read_calls", "read calls, Δ")):
        panels.append((title, "difference", [(c.metric(col), "") for c in comparisons], 1.0))
    return labels, panels


def forest_figure(comparisons: tuple[PairedComparison, ...], path: Path) -> Path | None:
    """Paired estimates with 95% CIs per arm: success (pp), cost ratio per cache model, turns, reads.

    Returns `path`, or None when there is no comparison.
    """
    fig = _forest(comparisons)
    if fig is None:
        return None
    fig.savefig(path, dpi=_DPI)
    return path


def _forest(comparisons: tuple[PairedComparison, ...]):
    """The forest plot's Figure (None without comparisons). The cache-model legend sits below the
    panels: inside the cost panel (`loc="best"`) it covered the intervals, as every height of a
    one-arm panel has a line (issue 27 trial)."""
    if not comparisons:
        return None
    _theme()
    multi = len({c.model for c in comparisons}) > 1
    labels, panels = _forest_rows(comparisons, multi)
    fig = _new_figure(12.0, 0.32 * len(labels) + 2.0)  # + the legend row below
    axes = fig.subplots(1, len(panels), sharey=True)
    y = np.arange(len(labels))
    palette = ["#1f5fa8", "#c0392b", "#27ae60", "#8e44ad", "#d35400"]
    for ax, (title, scale, per_arm, factor) in zip(axes, panels):
        if scale == "ratio":
            names = sorted({name for row in per_arm for _, name in row})
            seen: set[str] = set()
            for yi, row in zip(y, per_arm):
                for m, name in row:
                    k = names.index(name)
                    off = (k - (len(names) - 1) / 2) * 0.18
                    _point(ax, yi + off, m.estimate, m.ci.low, m.ci.high, palette[k % len(palette)],
                           None if name in seen else name)
                    seen.add(name)
            ax.axvline(1.0, color="#555", linewidth=0.8)
            ax.set_xscale("log")
            from matplotlib.ticker import FuncFormatter, NullFormatter

            low, high = ax.get_xlim()
            ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0) if low <= t <= high]
            ax.set_xticks(ticks)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}×"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            if names:
                handles, texts = ax.get_legend_handles_labels()
                fig.legend(handles, texts, loc="outside lower center", ncols=len(names), fontsize=7,
                           title="cost ratio per cache model", title_fontsize=7)
        else:
            for yi, (m, _) in zip(y, per_arm):
                if m is not None:
                    _point(ax, yi, factor * m.estimate, factor * m.ci.low, factor * m.ci.high, palette[0], None)
            ax.axvline(0.0, color="#555", linewidth=0.8)
        ax.set_title(title, fontsize=9)
    axes[0].set_yticks(y, labels)
    axes[0].invert_yaxis()
    fig.suptitle("Paired differences vs the baseline arm (95% CI, CR2 t by repository)", fontsize=10)
    return fig


def _point(ax, y: float, est: float, low: float, high: float, color: str, label: str | None) -> None:
    if not np.isfinite(est):
        return
    if np.isfinite(low) and np.isfinite(high):
        ax.plot([low, high], [y, y], color=color, linewidth=1.2, alpha=0.7)
    else:  # no interval (fewer than 2 clusters): an open marker says so
        ax.scatter([est], [y], facecolors="none", edgecolors=color, s=30)
        return
    ax.scatter([est], [y], color=color, s=18, label=label, zorder=3)


def cache_ratio_figure(cells: pd.DataFrame, path: Path, subtitle: str) -> Path | None:
    """Heat map of the mean cache-read ratio, rows = DCP configuration, columns = cache model.

    `cells` has columns dcp, cache_model, ratio. None when it is empty.
    """
    if cells.empty:
        return None
    import seaborn as sns

    _theme()
    grid = cells.pivot_table(index="dcp", columns="cache_model", values="ratio", aggfunc="mean", sort=False)
    fig = _new_figure(1.4 * grid.shape[1] + 3.0, 0.42 * grid.shape[0] + 1.6)
    ax = fig.subplots()
    sns.heatmap(grid, annot=True, fmt=".3f", cmap="viridis", vmin=0.0, vmax=1.0, ax=ax,
                cbar_kws={"label": "cache-read ratio"}, annot_kws={"fontsize": 7})
    ax.set_xlabel("cache model")
    ax.set_ylabel("DCP configuration")
    ax.set_title(f"Mean cache-read ratio ({subtitle})", fontsize=9)
    fig.savefig(path, dpi=_DPI)
    return path


def size_bin(lines: pd.Series) -> pd.Series:
    """File-size bucket label of each `file_lines` value (readbench.corpus.sizes, the buckets of
    `readbench tasks stats`); NaN stays NaN."""
    return lines.astype(float).map(size_bucket)


def fragmentation_figure(rows: pd.DataFrame, path: Path, subtitle: str) -> Path | None:
    """Mean reads per file and re-read ratio by file size (lines), one bar per read variant.

    `rows` has columns variant, file_lines, reads_per_file, reread_ratio. None when no row
    has a file size and a read metric.
    """
    data = rows.dropna(subset=["file_lines"]).copy()
    data = data.dropna(subset=["reads_per_file", "reread_ratio"], how="all")
    if data.empty:
        return None
    import seaborn as sns

    _theme()
    data["file size, lines"] = size_bin(data["file_lines"])
    order = [label for _, label in SIZE_BUCKETS if (data["file size, lines"] == label).any()]
    fig = _new_figure(11.0, 3.8)
    axes = fig.subplots(1, 2)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        for ax, col, title in ((axes[0], "reads_per_file", "reads per file"),
                               (axes[1], "reread_ratio", "re-read ratio")):
            sns.barplot(data=data, x="file size, lines", y=col, hue="variant", order=order, errorbar=None, ax=ax)
            ax.set_ylabel(f"mean {title}")
            ax.set_title(title, fontsize=9)
            ax.legend(fontsize=6, title="read variant", title_fontsize=6, ncols=2)
    fig.suptitle(f"Read fragmentation by file size ({subtitle})", fontsize=10)
    fig.savefig(path, dpi=_DPI)
    return path
