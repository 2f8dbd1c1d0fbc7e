"""The report's "Cache breakpoint placement" section (GitHub issue 24 item 3): for real harnesses
run through inspect's sandbox agent bridge, the relayed requests priced three ways per Anthropic
cache model — under readbench's placement (pi's client: the `cost_usd_{m}` every arm is compared on),
under the harness's own placement (`harness_cost_usd_{m}`) and under the placement the bridge
actually used (inspect's Anthropic provider, `bridge_cost_usd_{m}`; a real model's native cost is
billed under that one). Columns written by readbench.agents.cache_placement."""

from __future__ import annotations

import pandas as pd

from . import _format as F
from ._document import Block, Heading, Table

__all__ = ["placement_section"]


def placement_section(table: pd.DataFrame, cache_models: list[str], multi_model: bool) -> list[Block]:
    """Mean cost USD and cache-read ratio per arm and cache model under the three placements;
    empty when no sample carries the bridged figures (readbench's own loop only)."""
    rows = []
    for m in cache_models:
        harness, bridge = f"harness_cost_usd_{m}", f"bridge_cost_usd_{m}"
        if bridge not in table.columns:
            continue
        for arm, group in table.groupby("arm", sort=True):
            got = group[bridge].notna()
            if not got.any():
                continue
            g = group[got]

            def mean(col: str) -> float:
                # a harness with no placement of its own (Codex: automatic caching) has the column empty;
                # nullable columns' mean is then pd.NA, which float() refuses
                value = pd.to_numeric(g[col], errors="coerce").mean() if col in g.columns else None
                return float("nan") if value is None or pd.isna(value) else float(value)

            name = str(arm) if multi_model else str(arm).split(" @ ")[0]
            rows.append((name, m, str(int(got.sum())), F.usd(mean(f"cost_usd_{m}")), F.usd(mean(harness)),
                         F.usd(mean(bridge)), F.num(mean(f"cache_read_ratio_{m}"), 3),
                         F.num(mean(f"harness_cache_read_ratio_{m}"), 3), F.num(mean(f"bridge_cache_read_ratio_{m}"), 3)))
    if not rows:
        return []
    header = ("arm", "cache model", "n", "mean cost USD, readbench's placement (pi's client)",
              "mean cost USD, the harness's own placement", "mean cost USD, the bridge's placement (inspect's)",
              "cache-read ratio, readbench's", "the harness's", "the bridge's")
    return [Heading(2, "Cache breakpoint placement (real harnesses)"),
            Table(header, tuple(rows), caption=(
                "The same relayed requests of each real-harness sample priced under three breakpoint placements. "
                "readbench's (pi's Anthropic client) is the cost every arm is compared on above. The harness's own "
                "is where it puts cache_control itself (Claude Code 2.1.332: its 2nd and 3rd system blocks and the "
                "newest user block, no tool; — for a harness without placements of its own, e.g. Codex on the Responses API's automatic caching); the bridge's is where inspect's Anthropic provider puts it (last "
                "system block, last tool, second-to-last message block, automatic caching): inspect's bridge does "
                "not forward the harness's markers, so a real model's native bill through the bridge is under the "
                "bridge's placement. n = samples with the figures."))]
