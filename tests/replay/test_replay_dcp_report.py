"""The DCP x cache table of `readbench replay`'s report names the denominator of each share."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from readbench.analysis._document import Table
from readbench.replay.dcp_report import dcp_section


def _row(session, config, delta, pruned, off_cost=10.0):
    return {"session_id": session, "config": config, "cache_model": "anthropic-5m",
            "input_tokens": 1000 - 100 * pruned, "sim_cost_usd": off_cost + delta, "cost_delta_usd": delta,
            "pruned_items": pruned, "footer_tokens_saved": 50 * pruned, "prefix_breaks": pruned}


def test_median_over_pruned_sessions_and_share_cheaper_over_all_are_labelled(tmp_path):
    """dcp-gated on 62 real pi sessions read "median -12.6 %" beside "3 %" cheaper: the median was over
    the 2 pruned sessions and the share over all 62 (issue 27 trial)."""
    rows = [_row(s, "off", 0.0, 0) for s in "abcd"]
    rows += [_row("a", "dcp-gated", -1.0, 1), _row("b", "dcp-gated", -3.0, 2),  # -10 %, -30 %
             _row("c", "dcp-gated", 0.0, 0), _row("d", "dcp-gated", 0.0, 0)]
    w = SimpleNamespace(table=lambda name: pd.DataFrame(rows), tmp=tmp_path)
    (table,) = [b for b in dcp_section(w) if isinstance(b, Table)]
    assert table.header[3] == "median cost change (pruned sessions)"
    assert table.header[8] == "sessions cheaper (of all)"
    assert table.rows == (("dcp-gated", "anthropic-5m", "4 (2)", "-20.0 %", "-4.00", "150", "300", "0.8",
                           "2 of 4 (50 %)"),)
