"""Model spellings of providers and harnesses map to the dated tables (sessions.md §5), and the
models the recorded sessions use are priced (issue 12)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner

from readbench.cache._cli import cache_group
from readbench.cache.prices import canonical_model, get_model_spec, get_price


@pytest.mark.parametrize(
    "spelled, model",
    [
        ("claude-opus-4-6", "claude-opus-4.6"),
        ("claude-opus-4-5-20251101", "claude-opus-4.5"),
        ("anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4.5"),
        ("us.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4.5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4.5"),
        ("claude-sonnet-4-0", "claude-sonnet-4"),
        ("claude-3-5-haiku-20241022", "claude-haiku-3.5"),
        ("openai/gpt-5-2025-08-07", "gpt-5"),
        ("GPT-5.1-Codex", "gpt-5.1-codex"),
        ("gemini-3-pro", "gemini-3-pro-preview"),
        ("gpt-5-1-codex-2025-11-13", "gpt-5.1-codex"),  # a proxy's spelling, in a real Codex rollout
        ("gpt-5-4-mini", "gpt-5.4-mini"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4.5"),  # real Claude Code file
        ("no-such-model-7", "no-such-model-7"),
    ],
)
def test_canonical_model(spelled, model):
    assert canonical_model(spelled) == model


def test_recorded_models_have_dated_prices():
    # Anthropic pricing page: Opus 4.5 and 4.6 $5 / $25, writes $6.25 (5m) / $10 (1h), reads $0.50
    row = get_price("claude-opus-4-6", 10_000, as_of=dt.date(2026, 2, 12))
    assert (row.model, row.input_usd_per_mtok, row.output_usd_per_mtok, row.cache_write_5m_usd_per_mtok,
            row.cache_write_1h_usd_per_mtok, row.cache_read_usd_per_mtok) == ("claude-opus-4.6", 5.0, 25.0, 6.25, 10.0, 0.5)
    assert get_price("claude-sonnet-4-5", 250_000, as_of=dt.date(2025, 11, 20)).input_usd_per_mtok == 6.0  # > 200k band
    assert get_price("gpt-5.1-codex", as_of=dt.date(2025, 11, 17)).cache_read_usd_per_mtok == 0.125
    assert get_model_spec("claude-opus-4-6").min_cacheable_tokens == 4096
    # GitHub Docs' Copilot table: GPT-5.5 $5 / $30, cached $0.50; above 272k prompt tokens $10 / $45 / $1
    row = get_price("gpt-5.5", 20_000, as_of=dt.date(2026, 5, 11))
    assert (row.input_usd_per_mtok, row.output_usd_per_mtok, row.cache_read_usd_per_mtok) == (5.0, 30.0, 0.5)
    assert get_price("gpt-5.5", 300_000, as_of=dt.date(2026, 5, 11)).input_usd_per_mtok == 10.0
    assert get_price("openai/gpt-4o-mini", as_of=dt.date(2025, 5, 12)).cache_read_usd_per_mtok == 0.075


def test_an_unpriced_model_names_the_file_to_add_it_to():
    with pytest.raises(ValueError, match=r"no price for model 'claude-opus-4.6' on or before 2025-01-01 \(its first "
                       r"price row is dated 2026-02-05\): add a row to readbench/cache/prices.csv"):
        get_price("claude-opus-4-6", as_of=dt.date(2025, 1, 1))
    with pytest.raises(ValueError, match="no price for model 'mystery-9'.*prices.csv"):
        get_price("mystery-9")


def test_cache_simulate_takes_a_provider_spelling(tmp_path):
    p = tmp_path / "r.jsonl"
    blocks = [{"kind": "system", "id": "s", "tokens": 5000}]
    p.write_text(json.dumps({"ts_start": 0, "ts_first_token": 1, "output_tokens": 100, "blocks": blocks}) + "\n")
    res = CliRunner().invoke(cache_group, ["simulate", str(p), "--model", "claude-opus-4-6", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    # 5,000 tokens written at $6.25 + 100 output at $25 per million
    assert (d["model"], d["cost_usd"]) == ("claude-opus-4.6", pytest.approx((5000 * 6.25 + 100 * 25) / 1e6, abs=1e-12))
