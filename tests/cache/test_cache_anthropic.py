"""Anthropic cache model: hand-computed reads, writes and costs (caching.md §1, §8.4)."""

from __future__ import annotations

import pytest
from rb_cache_helpers import agent_turns, blk, req, split

from readbench.cache.policies.anthropic import automatic_breakpoint, pi_breakpoints
from readbench.cache.simulate import simulate

SONNET5 = "claude-sonnet-5"  # min 1,024; input 2.00, output 10.00, 5m write 2.50, 1h write 4.00, read 0.20


def test_append_only_within_ttl_reads_previous_prompt_and_writes_the_new_tail():
    # T_k = 3,500 + 500 k; requests 10 s apart, well inside 5 min; every turn adds 2 positions.
    requests = [req(agent_turns(k), ts=10.0 * k) for k in range(5)]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (4000, 500, 0), (4500, 500, 0), (5000, 500, 0)]
    # Read share = 1 - sum(new) / sum(total) = 1 - 5,500 / 22,500 (§8.4 item 1).
    assert res.cache_read_ratio == pytest.approx(1 - 5500 / 22500, abs=1e-15)
    assert res.cache_read_tokens == 17000 and res.input_tokens == 22500


def test_a_change_rebills_from_the_last_entry_before_it_and_recovers_next_turn():
    # Request 3 rewrites tool_result 1 (as a pruner would). The newest live entry ending before
    # the change is the end of request 0 (tools+system+task = 3,500): read 3,500, write
    # 5,000 - 3,500 = 1,500 (tool_use 1 + the rewritten tail). Request 4 keeps the rewrite and
    # is back to steady state: read 5,000, write 500.
    requests = [req(agent_turns(k), ts=10.0 * k) for k in range(3)]
    requests += [req(agent_turns(k, changed=frozenset({1})), ts=10.0 * k) for k in (3, 4)]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (4000, 500, 0), (3500, 1500, 0), (5000, 500, 0)]


def test_a_change_in_the_system_prompt_rebills_all_but_the_tools():
    base = agent_turns(2, tools=1500)
    changed = list(base)
    changed[1] = blk("system-v2", 2000, "system")
    res = simulate([req(base, 0.0), req(changed, 10.0)], "anthropic-5m", SONNET5)
    # Only the tool breakpoint's entry (1,500 tokens) survives the change at block 1.
    assert split(res) == [(0, 5000, 0), (1500, 3500, 0)]


def test_a_breakpoint_below_the_minimum_writes_no_entry():
    # Same change, 1,000-token tools: the tool breakpoint (1,000 < 1,024) never wrote an entry.
    base = agent_turns(2)
    changed = list(base)
    changed[1] = blk("system-v2", 2000, "system")
    res = simulate([req(base, 0.0), req(changed, 10.0)], "anthropic-5m", SONNET5)
    assert split(res) == [(0, 4500, 0), (0, 4500, 0)]


def test_ttl_expiry_counted_from_request_start_makes_the_next_call_a_full_write():
    # Entries expire at start + 300 s; request 1 (t=250) refreshes to 550; request 2 at 550
    # finds it expired (expires_at <= ts_start) and writes everything again.
    requests = [req(agent_turns(0), 0.0, first=200.0), req(agent_turns(1), 250.0), req(agent_turns(2), 550.0)]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (0, 4500, 0)]


def test_one_hour_ttl_survives_a_ten_minute_gap():
    requests = [req(agent_turns(0), 0.0), req(agent_turns(1), 600.0)]
    assert split(simulate(requests, "anthropic-1h", SONNET5)) == [(0, 3500, 0), (3500, 500, 0)]
    assert split(simulate(requests, "anthropic-5m", SONNET5)) == [(0, 3500, 0), (0, 4000, 0)]


def test_documented_lookback_example_turn_three_misses():
    # caching.md §1.1: turn 1 writes at block 10; turn 2 (15 blocks) hits at 10, writes at 15;
    # turn 3 (35 blocks, one breakpoint at 35) misses: 15 is outside 35..16. 200 tokens a block.
    blocks = [blk(f"b{i}", 200, "text", role="user" if i % 2 == 0 else "assistant") for i in range(35)]
    requests = [
        req(blocks[:10], 0.0, breakpoints=(9,)),
        req(blocks[:15], 10.0, breakpoints=(14,)),
        req(blocks[:35], 20.0, breakpoints=(34,)),
    ]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert split(res) == [(0, 2000, 0), (2000, 1000, 0), (0, 7000, 0)]


def test_a_run_of_parallel_tool_calls_is_one_position():
    # 40 parallel tool_use blocks then 40 tool_result blocks add 2 positions, not 80: the
    # previous entry (end of the task, 3,500 tokens) is found.
    head = agent_turns(0)
    uses = [blk(f"use{i}", 10, "tool_use") for i in range(40)]
    results = [blk(f"result{i}", 20, "tool_result") for i in range(40)]
    res = simulate([req(head, 0.0), req(head + uses + results, 10.0)], "anthropic-5m", SONNET5)
    assert split(res) == [(0, 3500, 0), (3500, 1200, 0)]


@pytest.mark.parametrize(("round_trips", "read"), [(9, 3500), (10, 3000)])
def test_sequential_tool_loop_longer_than_the_lookback_misses_the_moving_entry(round_trips, read):
    # 9 round trips = 18 positions + the task block = 19 <= 20: hit at 3,500. 10 round trips
    # push the task block to position 21; the system breakpoint (3,000) still hits.
    res = simulate([req(agent_turns(0), 0.0), req(agent_turns(round_trips), 10.0)], "anthropic-5m", SONNET5)
    total = 3500 + 500 * round_trips
    assert split(res)[1] == (read, total - read, 0)


def test_below_the_model_minimum_nothing_is_cached():
    # Haiku 4.5 needs 4,096 tokens; a 4,000-token prompt is neither written nor read.
    blocks = agent_turns(0, tools=1000, system=2500, user=500)
    res = simulate([req(blocks, 0.0), req(blocks, 10.0)], "anthropic-5m", "claude-haiku-4.5")
    assert split(res) == [(0, 0, 4000), (0, 0, 4000)]


def test_concurrent_requests_both_pay_the_write_until_the_first_token():
    blocks = agent_turns(0)
    # Request 1 starts at t=1, before request 0's first token at t=5: it cannot read.
    # Request 2 starts at t=6: it can.
    res = simulate([req(blocks, 0.0, first=5.0), req(blocks, 1.0), req(blocks, 6.0)], "anthropic-5m", SONNET5)
    assert split(res) == [(0, 3500, 0), (0, 3500, 0), (3500, 0, 0)]


def test_worked_three_request_cost_by_hand():
    # claude-sonnet-5: input 2.00, output 10.00, 5m write 2.50, read 0.20 USD/MTok.
    # R0 t=0:   write 3,500, out 200: 3,500 x 2.50 + 200 x 10 = 8,750 + 2,000 = 10,750 -> $0.010750
    # R1 t=10:  read 3,500, write 500, out 150:
    #           3,500 x 0.20 + 500 x 2.50 + 150 x 10 = 700 + 1,250 + 1,500 = 3,450 -> $0.003450
    # R2 t=400: R1's refresh ended at 310 s: write 4,500, out 100:
    #           4,500 x 2.50 + 100 x 10 = 11,250 + 1,000 = 12,250 -> $0.012250
    # Total $0.026450.
    requests = [req(agent_turns(0), 0.0, out=200), req(agent_turns(1), 10.0, out=150), req(agent_turns(2), 400.0, out=100)]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert [r.cost_usd for r in res.requests] == pytest.approx([0.010750, 0.003450, 0.012250], abs=1e-12)
    assert res.cost_usd == pytest.approx(0.026450, abs=1e-12)


def test_one_hour_writes_bill_at_the_1h_price():
    # 3,500 x 4.00 = 14,000 -> $0.014 (claude-sonnet-5 1h write 4.00 USD/MTok).
    res = simulate([req(agent_turns(0), 0.0)], "anthropic-1h", SONNET5)
    assert res.cost_usd == pytest.approx(0.014, abs=1e-12)
    assert res.requests[0].write_tier == "1h"


def test_haiku_55_bills_every_token_at_the_higher_band_above_100k():
    # <= 100,000 prompt tokens: 100,000 x 0.125 (5m write) + 1,000 x 0.50 = 13,000 -> $0.013.
    # 120,000: 120,000 x 0.625 + 1,000 x 2.50 = 77,500 -> $0.0775.
    at = simulate([req([blk("p", 100_000, "system")], 0.0, out=1000)], "anthropic-5m", "claude-haiku-5.5")
    above = simulate([req([blk("p", 120_000, "system")], 0.0, out=1000)], "anthropic-5m", "claude-haiku-5.5")
    assert at.cost_usd == pytest.approx(0.013, abs=1e-12)
    assert above.cost_usd == pytest.approx(0.0775, abs=1e-12)


def test_pi_breakpoints_mark_last_tool_system_and_last_user_block():
    blocks = agent_turns(2)  # tool_def, system, task, use1, result1, use2, result2
    assert pi_breakpoints(blocks) == (0, 1, 6)
    two_tools = [blk("t1", 10, "tool_def"), blk("t2", 10, "tool_def")] + blocks[1:]
    assert pi_breakpoints(two_tools) == (1, 2, 7)
    ends_with_assistant = blocks + [blk("answer", 50, "text", role="assistant")]
    assert pi_breakpoints(ends_with_assistant) == (0, 1)


def test_automatic_breakpoint_walks_back_over_thinking_and_empty_blocks():
    blocks = [blk("s", 2000, "system"), blk("u", 100, "text"), blk("th", 50, "thinking"), blk("e", 0, "text")]
    assert automatic_breakpoint(blocks) == 1
    assert automatic_breakpoint([blk("th", 50, "thinking")]) is None


def test_automatic_placement_caches_without_pi_markers():
    requests = [req(agent_turns(0), 0.0), req(agent_turns(1), 10.0)]
    res = simulate(requests, "anthropic-5m", SONNET5, placement="automatic")
    assert split(res) == [(0, 3500, 0), (3500, 500, 0)]


def test_more_than_four_breakpoints_is_rejected_like_the_api():
    blocks = agent_turns(2)
    with pytest.raises(ValueError, match="5 cache breakpoints in one request, more than the 4"):
        simulate([req(blocks, 0.0, breakpoints=(0, 1, 2, 3, 4))], "anthropic-5m", SONNET5)


def test_unknown_placement_is_rejected():
    with pytest.raises(ValueError, match="unknown placement 'everywhere'"):
        simulate([req(agent_turns(0), 0.0)], "anthropic-5m", SONNET5, placement="everywhere")


def test_a_breakpoint_on_a_thinking_block_is_rejected():
    blocks = [blk("s", 2000, "system"), blk("th", 50, "thinking")]
    with pytest.raises(ValueError, match="breakpoint 1 is on a thinking block, which cannot carry cache_control"):
        simulate([req(blocks, 0.0, breakpoints=(1,))], "anthropic-5m", SONNET5)


def test_a_pruner_that_rerenders_every_turn_never_recovers():
    # From request 2 on, tool_result 1 gets a different placeholder every turn (e.g. a counter
    # in the stub): each request reads only the entry at the end of the task (3,500, refreshed
    # by every hit) and rewrites the rest.
    def turns(k: int, version: int):
        blocks = agent_turns(k)
        blocks[4] = blk(f"result1-stub-v{version}", 20, "tool_result")
        return blocks

    requests = [req(agent_turns(0), 0.0), req(agent_turns(1), 10.0)]
    requests += [req(turns(k, k), 10.0 * k) for k in (2, 3, 4)]
    res = simulate(requests, "anthropic-5m", SONNET5)
    # T_k with the 20-token stub = 3,500 + 500 k - 380 for k >= 2: 4,120, 4,620, 5,120.
    assert split(res) == [(0, 3500, 0), (3500, 500, 0), (3500, 620, 0), (3500, 1120, 0), (3500, 1620, 0)]


def test_documented_pride_and_prejudice_example():
    # caching.md §8.4 item 7: a 188,086-token system prompt marked for caching, followed by a
    # 21-token user message: the first call writes 188,086 (21 uncached), the second reads them.
    blocks = [blk("book", 188_086, "system"), blk("question", 21, "text")]
    requests = [req(blocks, 0.0, breakpoints=(0,)), req(blocks, 30.0, breakpoints=(0,))]
    res = simulate(requests, "anthropic-5m", SONNET5)
    assert split(res) == [(0, 188_086, 21), (188_086, 0, 21)]
