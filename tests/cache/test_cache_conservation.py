"""Conservation and sanity properties for every cache model (caching.md §8.4 item 6)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rb_cache_helpers import blk, req

from readbench.cache.policies.base import Usage
from readbench.cache.simulate import CacheSimulator, price_usage, simulate

CASES = [
    ("anthropic-5m", "claude-sonnet-5"),
    ("anthropic-1h", "claude-haiku-5.5"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5.6-terra"),
    ("gemini-implicit", "gemini-2.5-flash"),
    ("deepseek", "deepseek-flash"),
    ("none", "claude-sonnet-5"),
]

KINDS = ["text", "tool_use", "tool_result", "thinking", "system", "tool_def"]

block_st = st.builds(
    lambda label, tokens, kind: blk(f"b{label}", tokens, kind),
    st.integers(0, 30),
    st.integers(0, 3000),
    st.sampled_from(KINDS),
)

step_st = st.tuples(
    st.integers(0, 40),  # how many blocks of the previous request to keep
    st.lists(block_st, max_size=6),  # new blocks appended
    st.floats(0, 2000, allow_nan=False),  # gap to the previous start (s)
    st.floats(0, 120, allow_nan=False),  # time to first token (s)
    st.integers(0, 5000),  # output tokens
)


def _requests(steps):
    out, prev, t = [], [], 0.0
    for keep, new, gap, ttft, output in steps:
        blocks = prev[:keep] + new
        t += gap
        out.append(req(blocks, t, first=t + ttft, out=output))
        prev = blocks
    return out


@pytest.mark.parametrize(("cache_model", "model"), CASES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_st, min_size=1, max_size=12))
def test_read_write_uncached_sum_to_the_input_of_every_request(cache_model, model, steps):
    requests = _requests(steps)
    res = simulate(requests, cache_model, model)
    seen_max = 0
    for r, q in zip(res.requests, requests):
        total = sum(b.tokens for b in q.blocks)
        assert r.input_tokens == total
        assert r.cache_read_tokens + r.cache_write_tokens + r.uncached_input_tokens == total
        assert min(r.cache_read_tokens, r.cache_write_tokens, r.uncached_input_tokens) >= 0
        # A read never exceeds the largest earlier prompt (DeepSeek's end-of-output units also
        # cover the previous output, so there only the request's own size bounds it).
        bound = total if cache_model == "deepseek" else min(total, seen_max)
        assert r.cache_read_tokens <= bound
        assert r.cost_usd >= 0
        seen_max = max(seen_max, total)
    assert res.requests[0].cache_read_tokens == 0
    assert 0.0 <= res.cache_read_ratio <= 1.0


@pytest.mark.parametrize(("cache_model", "model"), CASES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_st, min_size=1, max_size=12))
def test_step_totals_bills_as_step_and_price_usage(cache_model, model, steps):
    # the replay's arms sum `step_totals` (no per-request record, price rows looked up once):
    # the same read and input tokens, and the same float cost as `price_usage` of `step`'s usage
    requests = _requests(steps)
    recorded, lean = CacheSimulator(cache_model, model), CacheSimulator(cache_model, model)
    for q in requests:
        r = recorded.step(q)
        usage = Usage(r.cache_read_tokens, r.cache_write_tokens, r.uncached_input_tokens, r.write_tier)
        assert r.cost_usd == price_usage(usage, q.output_tokens, recorded.model)
        assert lean.step_totals(q) == (r.cache_read_tokens, r.input_tokens, r.cost_usd)
    assert lean.requests == []


def test_step_totals_prices_a_long_prompt_at_its_band():
    # claude-haiku-5.5 bills every token of a > 100k-token prompt at the higher band (prices.csv:
    # $0.50 in / $2.50 out per Mtok, against $0.10 / $0.50 up to 100k); the `none` cache model
    # leaves all 120,000 input tokens uncached
    sim = CacheSimulator("none", "claude-haiku-5.5")
    q = req([blk("big", 120_000)], 0.0, out=1000)
    read, total, cost = sim.step_totals(q)
    assert (read, total) == (0, 120_000)
    assert cost == (120_000 * 0.50 + 1000 * 2.50) / 1_000_000
