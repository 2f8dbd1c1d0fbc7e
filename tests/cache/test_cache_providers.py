"""OpenAI, Gemini, DeepSeek and `none` cache models: hand-computed numbers (caching.md §2-§4)."""

from __future__ import annotations

import pytest
from rb_cache_helpers import agent_turns, blk, req, split

from readbench.cache.simulate import simulate


def test_openai_legacy_hits_are_floored_to_128_tokens():
    # gpt-5: automatic, no write fee, min 1,024, 128-token granularity.
    # R0 1,500 tokens: nothing cached yet. R1 = R0 + 600: longest cached prefix 1,500 ->
    # floor(1,500 / 128) x 128 = 11 x 128 = 1,408 read, 2,100 - 1,408 = 692 uncached.
    r0 = [blk("sys", 1000, "system"), blk("task", 500, "text")]
    r1 = r0 + [blk("a", 100, "text", role="assistant"), blk("u", 500, "text")]
    res = simulate([req(r0, 0.0), req(r1, 10.0)], "openai", "gpt-5")
    assert split(res) == [(0, 0, 1500), (1408, 0, 692)]
    assert res.cache_read_tokens % 128 == 0
    # Cost: 1,500 x 1.25 + (692 x 1.25 + 1,408 x 0.125) = 1,875 + 865 + 176 = 2,916 -> $0.002916
    assert res.cost_usd == pytest.approx(0.002916, abs=1e-12)


def test_openai_legacy_prefix_below_1024_is_not_cached():
    blocks = [blk("sys", 1000, "system")]
    res = simulate([req(blocks, 0.0), req(blocks + [blk("u", 20, "text")], 10.0)], "openai", "gpt-4.1")
    assert split(res) == [(0, 0, 1000), (0, 0, 1020)]


def test_openai_legacy_reads_a_prefix_shared_up_to_a_changed_block():
    # The change at block 2 leaves the 1,800-token prefix of blocks 0-1: 14 x 128 = 1,792.
    r0 = [blk("sys", 1000, "system"), blk("task", 800, "text"), blk("x", 300, "text", role="assistant")]
    r1 = r0[:2] + [blk("y", 300, "text", role="assistant")]
    res = simulate([req(r0, 0.0), req(r1, 10.0)], "openai", "gpt-5")
    assert split(res)[1] == (1792, 0, 308)


def test_gpt56_charges_writes_and_reads_at_1_35x_then_2_15x():
    # gpt-5.6-terra: input 2.00, 30-min write 2.50 (1.25x), read 0.20 (0.1x).
    # The same 3,000-token prompt 10 times: write once, read 9 times (§2.2 golden numbers):
    # 1 write + 1 read = 1.35 x input, 1 write + 9 reads = 2.15 x input.
    blocks = [blk("sys", 1000, "system"), blk("task", 2000, "text")]
    res = simulate([req(blocks, 10.0 * i) for i in range(10)], "openai", "gpt-5.6-terra")
    assert split(res) == [(0, 3000, 0)] + [(3000, 0, 0)] * 9
    per_input_usd = 3000 * 2.00 / 1e6
    assert sum(r.cost_usd for r in res.requests[:2]) == pytest.approx(1.35 * per_input_usd, abs=1e-12)
    assert res.cost_usd == pytest.approx(2.15 * per_input_usd, abs=1e-12)


def test_gpt56_agent_loop_reads_previous_tool_result_boundary_and_writes_the_new_tail():
    requests = [req(agent_turns(k), 60.0 * k) for k in range(3)]
    res = simulate(requests, "openai", "gpt-5.6-terra")
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (4000, 500, 0)]
    assert [r.write_tier for r in res.requests] == ["30m", "30m", "30m"]


def test_gpt56_entries_expire_thirty_minutes_after_last_use():
    requests = [req(agent_turns(0), 0.0), req(agent_turns(1), 1799.0), req(agent_turns(2), 1799.0 + 1800.0)]
    res = simulate(requests, "openai", "gpt-5.6-terra")
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (0, 4500, 0)]


@pytest.mark.parametrize(("turns", "expected"), [(20, (2100, 400, 0)), (21, (0, 2520, 0))])
def test_gpt56_looks_back_over_at_most_20_earlier_message_endings(turns, expected):
    # R0 writes at its implicit breakpoint, the end of user message u0 (2,100 tokens). R1 adds
    # `turns` (assistant, user) pairs of 10 + 10 tokens: with 20 the lookup (implicit + 20
    # earlier endings) still reaches u0; with 21 it does not, and the end of the developer
    # block (2,000) was never written, so R1 writes everything.
    head = [blk("sys", 2000, "system"), blk("u0", 100, "text")]
    tail = []
    for i in range(1, turns + 1):
        tail += [blk(f"a{i}", 10, "text", role="assistant"), blk(f"u{i}", 10, "text")]
    res = simulate([req(head, 0.0), req(head + tail, 10.0)], "openai", "gpt-5.6-terra")
    assert split(res) == [(0, 2100, 0), expected]


def test_gemini_implicit_reads_longest_prefix_without_write_fee():
    # gemini-2.5-flash: min 2,048, exact counts, input 0.30, read 0.03.
    requests = [req(agent_turns(0), 0.0), req(agent_turns(1), 10.0)]
    res = simulate(requests, "gemini-implicit", "gemini-2.5-flash")
    assert split(res) == [(0, 0, 3500), (3500, 0, 500)]
    # 3,500 x 0.30 + 3,500 x 0.03 + 500 x 0.30 = 1,050 + 105 + 150 = 1,305 -> $0.001305
    assert res.cost_usd == pytest.approx(0.001305, abs=1e-12)


def test_gemini_minimum_4096_on_3x_models():
    blocks = agent_turns(0)  # 3,500 tokens < 4,096
    res = simulate([req(blocks, 0.0), req(blocks, 10.0)], "gemini-implicit", "gemini-3.8-flash")
    assert split(res) == [(0, 0, 3500), (0, 0, 3500)]


def test_deepseek_partial_unit_is_a_miss_and_common_prefix_becomes_a_unit():
    # R0 = A+B persists unit A+B (1,500). R1 = A+C matches no unit in full: all miss; it
    # persists the common prefix A (1,000). R2 = A+D hits A; the hit is floored to 64-token
    # storage units: 15 x 64 = 960, the partial 40 tokens are a miss.
    a, b, c, d = blk("A", 1000, "system"), blk("B", 500, "text"), blk("C", 500, "text"), blk("D", 500, "text")
    res = simulate([req([a, b], 0.0), req([a, c], 10.0), req([a, d], 20.0)], "deepseek", "deepseek-flash")
    assert split(res) == [(0, 0, 1500), (0, 0, 1500), (960, 0, 540)]
    # deepseek-flash (peak): miss 0.30, hit 0.006 USD/MTok; no output.
    # 1,500 x 0.30 x 2 + 540 x 0.30 + 960 x 0.006 = 900 + 162 + 5.76 = 1,067.76 -> $0.00106776
    assert res.cost_usd == pytest.approx(0.00106776, abs=1e-12)


def test_deepseek_next_request_hits_the_end_of_output_unit():
    # R1 = R0 (1,500) + the assistant output (100) + a tool result (300): the end-of-output
    # unit (1,600 = 25 x 64) is fully matched.
    r0 = [blk("sys", 1000, "system"), blk("task", 500, "text")]
    r1 = r0 + [blk("out", 100, "tool_use"), blk("res", 300, "tool_result")]
    res = simulate([req(r0, 0.0), req(r1, 10.0)], "deepseek", "deepseek-flash")
    assert split(res) == [(0, 0, 1500), (1600, 0, 300)]


def test_none_bills_everything_uncached_at_the_input_price():
    # claude-sonnet-5 input 2.00, output 10.00: (3,500 + 4,000) x 2 + 2 x 100 x 10 = 17,000.
    requests = [req(agent_turns(k), 10.0 * k, out=100) for k in range(2)]
    res = simulate(requests, "none", "claude-sonnet-5")
    assert split(res) == [(0, 0, 3500), (0, 0, 4000)]
    assert res.cost_usd == pytest.approx(0.017, abs=1e-12)
    assert res.cache_read_ratio == 0.0


def test_family_mismatch_names_the_fitting_cache_models():
    with pytest.raises(ValueError, match=r"model 'gpt-5' is priced under the openai family; cache model 'anthropic-5m'"):
        simulate([req(agent_turns(0), 0.0)], "anthropic-5m", "gpt-5")


def test_unknown_cache_model_and_model_are_named():
    with pytest.raises(ValueError, match="unknown cache model 'bedrock'"):
        simulate([], "bedrock")
    with pytest.raises(ValueError, match="unknown model 'claude-9'"):
        simulate([], "anthropic-5m", "claude-9")


def test_unpriced_model_fails_before_simulating():
    with pytest.raises(ValueError, match="no price for model 'gemini-3.1-pro'.*readbench/cache/prices.csv"):
        simulate([], "gemini-implicit", "gemini-3.1-pro")


def test_requests_out_of_start_order_are_rejected_with_the_index():
    with pytest.raises(ValueError, match=r"request 1 starts at 5.0 s, before request 0 \(10.0 s\)"):
        simulate([req(agent_turns(0), 10.0), req(agent_turns(0), 5.0)], "none", "claude-sonnet-5")


def test_empty_sequence_has_zero_totals():
    res = simulate([], "anthropic-5m")
    assert (res.input_tokens, res.cost_usd, res.cache_read_ratio, res.model) == (0, 0.0, 0.0, "claude-sonnet-5.5")
