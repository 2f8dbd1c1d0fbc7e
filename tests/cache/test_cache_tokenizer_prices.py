"""count_tokens and the dated price/model tables (caching.md §6, §8.3)."""

from __future__ import annotations

import datetime as dt

import pytest

from readbench.cache.prices import get_model_spec, get_price, list_model_specs, list_prices
from readbench.cache.tokenizer import FAMILY_FACTORS, count_tokens, scale_tokens


def test_o200k_counts_known_strings():
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    # Special-token text is ordinary text (7 tokens), never the special token itself.
    assert count_tokens("<|endoftext|>") == 7


def test_family_factors_round_half_up():
    # anthropic 1131/800 = 1.41375: 1,000 -> 1,413.75 -> 1,414; 8 -> 11.31 -> 11
    assert scale_tokens(1000, "anthropic") == 1414
    assert scale_tokens(8, "anthropic") == 11
    # anthropic-legacy 87/80 = 1.0875: 80 -> 87; 40 -> 43.5 -> 44 (half up)
    assert scale_tokens(80, "anthropic-legacy") == 87
    assert scale_tokens(40, "anthropic-legacy") == 44
    # deepseek 49/50: 1,000 -> 980; gemini and openai unchanged
    assert scale_tokens(1000, "deepseek") == 980
    assert scale_tokens(1000, "gemini") == scale_tokens(1000, "openai") == 1000
    assert count_tokens("hello world", "anthropic") == 3  # 2 x 1.41375 = 2.83 -> 3


def test_long_text_is_chunked_and_counts_like_its_lines():
    line = "def f(x):\n    return x * 2  # doubles\n"
    text = line * 20_000
    assert len(text) == 760_000  # several 50,000-character chunks
    assert count_tokens(text) == 20_000 * count_tokens(line)


def test_lone_surrogates_are_counted_not_rejected():
    assert count_tokens("a\ud800b") == count_tokens("a\ufffdb")


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="unknown tokenizer family 'llama'; known: anthropic, anthropic-legacy"):
        count_tokens("x", "llama")
    with pytest.raises(TypeError, match="text must be str, got bytes"):
        count_tokens(b"x")  # type: ignore[arg-type]
    assert set(FAMILY_FACTORS) == {"openai", "anthropic", "anthropic-legacy", "deepseek", "gemini"}


SECTION_6_MODELS = [
    "claude-opus-5.5", "claude-opus-5", "claude-sonnet-5.5", "claude-sonnet-5", "claude-sonnet-4.6",
    "claude-haiku-5.5", "claude-haiku-4.5", "claude-fable-5.1", "gpt-4o", "gpt-4.1", "gpt-5", "gpt-5-mini",
    "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-6-sol", "gpt-6.1-sol", "gemini-2.5-pro",
    "gemini-2.5-flash", "gemini-3.8-flash", "deepseek-flash", "deepseek-flash-offpeak", "deepseek-v4-pro",
    "deepseek-v4-pro-offpeak", "deepseek-chat",
]


@pytest.mark.parametrize("model", SECTION_6_MODELS)
def test_every_section_6_model_is_priced_and_has_cache_parameters(model):
    row = get_price(model)
    spec = get_model_spec(model)
    assert row.provider == spec.provider
    assert row.input_usd_per_mtok > 0 and row.output_usd_per_mtok > 0


def test_price_rows_agree_with_the_read_multipliers_of_the_model_table():
    for row in list_prices():
        spec = get_model_spec(row.model)
        assert row.cache_read_usd_per_mtok == pytest.approx(row.input_usd_per_mtok * spec.read_multiplier, rel=1e-4), row


def test_write_prices_follow_the_documented_multipliers():
    for row in list_prices():
        if row.provider == "anthropic":  # 5m 1.25x, 1h 2x (§1.5)
            assert row.cache_write_5m_usd_per_mtok == pytest.approx(1.25 * row.input_usd_per_mtok)
            assert row.cache_write_1h_usd_per_mtok == pytest.approx(2.0 * row.input_usd_per_mtok)
        elif get_model_spec(row.model).rules == "openai-breakpoints":  # 30-min write 1.25x (§2.2)
            assert row.cache_write_30m_usd_per_mtok == pytest.approx(1.25 * row.input_usd_per_mtok)
        else:  # no write fee
            assert (row.cache_write_5m_usd_per_mtok, row.cache_write_1h_usd_per_mtok, row.cache_write_30m_usd_per_mtok) == (None, None, None)


def test_every_dated_price_set_has_a_base_band():
    keys = {(r.model, r.date) for r in list_prices()}
    for model, date in keys:
        assert any(r.model == model and r.date == date and r.band_prompt_tokens_above == 0 for r in list_prices())


def test_documented_minimums():
    assert [get_model_spec(m).min_cacheable_tokens for m in ("claude-sonnet-5.5", "claude-sonnet-5", "claude-opus-4.7", "claude-haiku-4.5")] == [512, 1024, 2048, 4096]
    assert get_model_spec("gemini-2.5-flash").min_cacheable_tokens == 2048
    assert get_model_spec("gemini-3.8-flash").min_cacheable_tokens == 4096
    assert get_model_spec("gpt-5").granularity_tokens == 128
    assert get_model_spec("gpt-5.5").granularity_tokens == 2048
    assert len({s.model for s in list_model_specs()}) == len(list_model_specs())


def test_bands_and_dates_select_the_right_row():
    assert get_price("gpt-5.6-sol", 272_000).input_usd_per_mtok == 5.00
    assert get_price("gpt-5.6-sol", 272_001).input_usd_per_mtok == 10.00
    assert get_price("gemini-2.5-pro", 200_001).cache_read_usd_per_mtok == 0.25
    # Gemini 3.8 Flash's promotional price doubles on 2027-01-01.
    assert get_price("gemini-3.8-flash").input_usd_per_mtok == 0.75
    assert get_price("gemini-3.8-flash", as_of=dt.date(2027, 1, 1)).input_usd_per_mtok == 1.50
    with pytest.raises(ValueError, match="no price for model 'gpt-5.6-terra' on or before 2026-07-01"):
        get_price("gpt-5.6-terra", as_of=dt.date(2026, 7, 1))
