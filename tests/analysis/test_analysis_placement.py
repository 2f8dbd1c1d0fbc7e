"""The report's cache breakpoint placement section (readbench.analysis._placement; issue 24 item 3)."""

from __future__ import annotations

import pandas as pd

from readbench.analysis._document import to_markdown
from readbench.analysis._placement import placement_section


def test_three_placements_per_real_harness_arm_and_none_for_the_loop():
    table = pd.DataFrame({
        "arm": ["stock × off @ m", "stock × off × claude-code @ m", "stock × off × claude-code @ m"],
        "cost_usd_anthropic-5m": [0.5, 0.10, 0.30],
        "harness_cost_usd_anthropic-5m": [None, 0.12, 0.32],
        "bridge_cost_usd_anthropic-5m": [None, 0.11, 0.29],
        "cache_read_ratio_anthropic-5m": [0.9, 0.5, 0.7],
        "harness_cache_read_ratio_anthropic-5m": [None, 0.4, 0.6],
        "bridge_cache_read_ratio_anthropic-5m": [None, 0.45, 0.65],
        "cost_usd_openai": [0.2, 0.1, 0.1],
    })
    blocks = placement_section(table, ["anthropic-5m", "openai"], multi_model=False)
    text = to_markdown(blocks)
    assert "## Cache breakpoint placement (real harnesses)" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| stock × off × claude-code")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["stock × off × claude-code", "anthropic-5m", "2", "$0.2000", "$0.2200", "$0.2000", "0.600",
                     "0.500", "0.550"]
    assert "| stock × off |" not in text  # the loop's arm has no bridged figures
    assert placement_section(table.drop(columns=["bridge_cost_usd_anthropic-5m"]), ["anthropic-5m"], False) == []


def test_a_harness_without_its_own_placement_shows_a_dash_not_a_crash():
    """Codex's rows carry the bridge's figures but no harness placement (automatic caching): its
    harness columns are empty (pd.NA in a nullable column); `readbench eval --matrix evals/agents.yaml`
    crashed in the report with "float() argument must be ... not 'NAType'"."""
    table = pd.DataFrame({
        "arm": ["stock × off × codex @ m"],
        "cost_usd_anthropic-5m": [0.25],
        "harness_cost_usd_anthropic-5m": pd.array([None], dtype="Float64"),
        "bridge_cost_usd_anthropic-5m": [0.2],
        "cache_read_ratio_anthropic-5m": [0.5],
        "harness_cache_read_ratio_anthropic-5m": pd.array([None], dtype="Float64"),
        "bridge_cache_read_ratio_anthropic-5m": [0.4],
    })
    text = to_markdown(placement_section(table, ["anthropic-5m"], multi_model=False))
    (row,) = [line for line in text.splitlines() if line.startswith("| stock × off × codex")]
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "stock × off × codex", "anthropic-5m", "1", "$0.2500", "—", "$0.2000", "0.500", "—", "0.400"]
