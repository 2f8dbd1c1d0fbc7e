"""The DCP x cache section of `readbench replay`'s report (issue 14 items 3 and 5).

Reads `dcp.parquet` (one row per session x configuration x cache model, from
`readbench.replay.dcp_cache`) and renders: a table per configuration x cache model (sessions,
median and total real cost change against DCP off, the footer's "tokens saved", the input tokens
actually saved, prefix breaks per session, the share of sessions where pruning saved money) and
two figures: the cost change per configuration x cache model across sessions, and the footer's
estimate against the real change.
"""

from __future__ import annotations

import math
from typing import Any

from readbench.analysis._document import Heading, Image, Paragraph, Table

__all__ = ["dcp_section"]


def dcp_section(w: Any) -> list[Any]:
    """Document blocks for the DCP x cache replay; none when it did not run."""
    df = w.table("dcp")
    if df.empty:
        return []
    import numpy as np

    off = df[df["config"] == "off"].set_index(["session_id", "cache_model"])
    df = df.join(off[["input_tokens"]].rename(columns={"input_tokens": "off_input_tokens"}), on=["session_id", "cache_model"])
    df["off_cost"] = df["sim_cost_usd"] - df["cost_delta_usd"]
    df["cost_change_pct"] = np.where(df["off_cost"] > 0, 100 * df["cost_delta_usd"] / df["off_cost"], np.nan)
    df["input_saved"] = df["off_input_tokens"] - df["input_tokens"]
    rows = []
    for (cfg, cm), g in df[df["config"] != "off"].groupby(["config", "cache_model"], sort=True):
        touched = g[g["pruned_items"] > 0]
        rows.append((cfg, cm, f"{len(g)} ({len(touched)})", _pct(touched["cost_change_pct"].median()),
                     f"{g['cost_delta_usd'].sum():+.2f}",
                     f"{int(g['footer_tokens_saved'].sum()):,}", f"{int(g['input_saved'].sum()):,}",
                     f"{g['prefix_breaks'].mean():.1f}",
                     f"{int((g['cost_delta_usd'] < 0).sum())} of {len(g)} ({100 * (g['cost_delta_usd'] < 0).mean():.0f} %)"))
    blocks: list[Any] = [
        Heading(2, "DCP configurations x cache models"),
        Paragraph("Every recorded request projected by each DCP configuration (state carried call to call), built with "
                  "the session's calibration from its bill and simulated under each cache model. The cost change is "
                  "against DCP off (the recorded requests) under the same cache model; the footer's tokens saved is "
                  "pi-dcp's own estimate summed over calls; input tokens saved is what the provider would actually have "
                  "received less. A configuration saves tokens and can still cost more: each rewrite of history "
                  "already sent re-bills the prefix after it (prefix breaks). Sessions: all (pruned in); the median is "
                  "over the sessions where the configuration pruned something."),
        # the two denominators are in the headers: a median of -12.6 % beside "3 %" of sessions cheaper read as a
        # contradiction until one found the sentence above (issue 27 trial)
        Table(("configuration", "cache model", "sessions (pruned)", "median cost change (pruned sessions)",
               "total cost change $", "footer tokens saved", "input tokens saved", "prefix breaks / session",
               "sessions cheaper (of all)"), tuple(rows)),
    ]
    blocks += _figures(w, df)
    return blocks


def _pct(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.1f} %"


def _figures(w: Any, df: Any) -> list[Any]:
    import seaborn as sns
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sns.set_theme(style="whitegrid")
    data = df[df["config"] != "off"]
    out: list[Any] = []
    fig = Figure(figsize=(9, 0.5 + 0.45 * data["config"].nunique() * max(1, data["cache_model"].nunique()) / 2),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    sns.boxplot(data=data, x="cost_change_pct", y="config", hue="cache_model", ax=ax, fliersize=2)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("real cost change against DCP off (%)")
    ax.set_ylabel("")
    fig.savefig(w.tmp / "dcp_cost.png", dpi=110)
    out.append(Image("dcp_cost.png", "cost change per DCP configuration x cache model, across sessions"))

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    sns.scatterplot(data=data, x="footer_tokens_saved", y="cost_delta_usd", hue="config", style="cache_model", ax=ax, s=25)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("footer estimate: tokens saved (summed over calls)")
    ax.set_ylabel("real cost change (USD)")
    fig.savefig(w.tmp / "dcp_footer.png", dpi=110)
    out.append(Image("dcp_footer.png", "the footer's tokens saved against the real cost change, per session"))
    return out
