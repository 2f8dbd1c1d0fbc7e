"""Billed vs simulated on hand-built sessions, values worked out by hand (issue 12).

Token counts are readbench's (`count_tokens(..., "anthropic-legacy")`, the family of Claude <= 4.6
in models.csv); everything else (breakpoints, reads, writes, prices) is computed here from
caching.md §1 and the dated prices: Sonnet 4.5 $3 input, $3.75 5m write, $6 1h write, $0.30 read,
$15 output per million tokens; Opus 4.6 $5 / $6.25 / $10 / $0.50 / $25.
"""

from __future__ import annotations

import json
import math

import pytest

from readbench.cache import count_tokens
from readbench.replay.bill import replay_session
from readbench.sessions import load_file

WORDS = " ".join(f"w{i}" for i in range(1500))  # a prompt well above Sonnet 4.5's 1,024-token minimum


def _tok(text: str) -> int:
    return count_tokens(text, "anthropic-legacy")


def _call_tokens(function: str, args: dict) -> int:
    # adapter.py renders a tool call as its name followed by the JSON of its arguments
    return _tok(function + json.dumps(args, ensure_ascii=False, separators=(",", ":")))


def _rows(rep, mode: str = "raw") -> list[dict]:
    return [r for r in rep.calls if r["mode"] == mode]


def test_raw_replay_of_two_calls_by_hand(tmp_path, pi_session):
    args = {"path": "a.py"}
    f = (pi_session()
         .user(WORDS)
         .assistant("Reading.", 0.0, (3, 0, 2050, 40), calls=(("c1", "read", args),))
         .result("c1", "x = 1\n" * 50)
         .assistant("Done.", 10.0, (3, 2050, 300, 12))
         .write(tmp_path / "s.jsonl"))
    (s,) = load_file(f)
    rep = replay_session(s)
    assert [m["cache_model"] for m in rep.summaries] == ["anthropic-5m"] * 3
    r0, r1 = _rows(rep)
    u0 = _tok(WORDS)
    new = _tok("Reading.") + _call_tokens("read", args) + _tok("x = 1\n" * 50)
    # call 0: pi marks the last user block; nothing cached yet: the whole prompt is written
    assert (r0["sim_cache_read_tokens"], r0["sim_cache_write_tokens"], r0["sim_uncached_input_tokens"]) == (0, u0, 0)
    assert r0["sim_cost_usd"] == pytest.approx((u0 * 3.75 + 40 * 15) / 1e6, abs=1e-12)
    assert (r0["sim_reason"], r0["billed_reason"]) == ("cold_start", "cold_start")
    # call 1, 10 s later: the lookback from the new tool result finds call 0's entry 3 positions back
    assert (r1["sim_cache_read_tokens"], r1["sim_cache_write_tokens"]) == (u0, new)
    assert r1["sim_cost_usd"] == pytest.approx((u0 * 0.30 + new * 3.75 + 12 * 15) / 1e6, abs=1e-12)
    assert r1["billed_cost_usd"] == pytest.approx((3 * 3 + 2050 * 0.30 + 300 * 3.75 + 12 * 15) / 1e6, abs=1e-12)
    assert r1["sim_reason"] == "" and r1["billed_miss"] is False
    assert r1["read_within_5pct"] is (abs(u0 - 2050) <= 0.05 * 2050)


def test_one_hour_writes_are_priced_and_chosen_from_the_recorded_split(tmp_path):
    from pathlib import Path

    (s,) = load_file(Path(__file__).parents[1] / "sessions" / "data" / "claude" / "s1.jsonl")
    rep = replay_session(s)
    assert rep.summaries[0]["cache_model"] == "anthropic-1h"
    assert rep.calibrations[("anthropic-1h", "in_sample")].tier == "1h"
    r = _rows(rep)
    # billed: Opus 4.6, every write in the 1h tier ($10/MTok)
    assert r[0]["billed_cost_usd"] == pytest.approx((3 * 5 + 20000 * 10 + 120 * 25) / 1e6, abs=1e-12)
    assert r[1]["billed_cost_usd"] == pytest.approx((3 * 5 + 20000 * 0.50 + 150 * 10 + 9 * 25) / 1e6, abs=1e-12)
    # raw: the recorded content alone is far below Opus 4.6's 4,096-token minimum: nothing is cached
    assert all(x["sim_cache_read_tokens"] == 0 and x["sim_cache_write_tokens"] == 0 for x in r)
    prompt0 = _tok("Fix the bug in app.py")
    assert r[0]["sim_cost_usd"] == pytest.approx((prompt0 * 5 + 120 * 25) / 1e6, abs=1e-12)
    assert [x["sim_reason"] for x in r] == ["cold_start", "below_minimum", "below_minimum", "below_minimum"]


def test_in_sample_head_from_the_first_bill_and_a_ttl_expiry_under_five_minutes(tmp_path):
    from pathlib import Path

    (s,) = load_file(Path(__file__).parents[1] / "sessions" / "data" / "claude" / "s1.jsonl")
    rep = replay_session(s, ["anthropic-5m"])
    cal = rep.calibrations[("anthropic-5m", "in_sample")]
    # (a): 3 priced calls of Opus 4.6 in that context, too few for a token fit: the head is the
    # first bill minus readbench's count of the recorded prompt
    assert cal.tokens == {}
    assert cal.heads == {"claude-opus-4.6": 20003 - _tok("Fix the bug in app.py")}
    r = _rows(rep, "in_sample")
    assert r[0]["sim_cache_write_tokens"] == 20003 and r[0]["sim_cache_read_tokens"] == 0
    # the second call starts 10 min after the first: a 5-minute entry is gone
    assert (r[1]["sim_reason"], r[1]["sim_cache_read_tokens"]) == ("ttl_expired", 0)
    # the bill read it (1h writes): a billed hit the 5m model misses
    assert r[1]["billed_miss"] is False
    # the calibration is stated, never silent (issue 12 deliverable 5)
    head = 20003 - _tok("Fix the bug in app.py")
    assert cal.notes == (
        "claude-opus-4.6: 4 priced calls (< 8): token counts uncalibrated",
        f"unrecorded head: claude-opus-4.6 {head} tokens; TTL tier: 1h; cold start: 0 tokens",
        "1 exogenous prefix break inferred from the bill (rate per call: opening 0.000, prompt 0.333, user_turn 0.333)",
    )


def test_every_miss_gets_a_reason(tmp_path, pi_session):
    big = WORDS
    b = pi_session()
    b.user(big).assistant("a", 0.0, (3, 0, 2100, 5))
    b.user("q1").assistant("b", 400.0, (3, 0, 2110, 5))  # 400 s > 5 min: expired
    for k in range(25):  # 25 user texts (each its own lookback position) before the next call
        b.bash(f"echo {k}", f"{k}")
    b.assistant("c", 410.0, (3, 0, 2400, 5))  # the newest entry is 26 positions back
    b.entry({"type": "thinking_level_change", "timestamp": "2025-11-21T00:07:00.000Z", "thinkingLevel": "high"})
    b.user("q2").assistant("d", 420.0, (3, 0, 2420, 5))  # thinking params changed
    b.user(WORDS.replace("w", "v")).assistant("e", 423.0, (3, 0, 4440, 5), took_s=5.0)
    b.user("q4").assistant("f", 425.0, (3, 0, 4460, 5))  # starts before e's first token (428 s)
    b.user("q5").assistant("g", 440.0, (3, 0, 4480, 5))  # content unchanged, yet the bill read nothing
    (s,) = load_file(b.write(tmp_path / "s.jsonl"))
    r = _rows(replay_session(s))
    assert [x["sim_reason"] for x in r] == ["cold_start", "ttl_expired", "lookback_exceeded", "prefix_changed", "",
                                            "concurrent_request", ""]
    assert r[3]["sim_why"] == "thinking or request parameters"
    assert [x["billed_reason"] for x in r][-1] == "unexplained"


def test_a_prefix_edit_names_the_changed_message(tmp_path, pi_session):
    b = pi_session().user(WORDS).assistant("a", 0.0, (3, 0, 2100, 5))
    b.user("second").assistant("b", 5.0, (3, 2100, 10, 5))
    b.entry({"type": "compaction", "timestamp": "2025-11-21T00:00:09.000Z", "summary": "S", "firstKeptEntryIndex": 3,
             "tokensBefore": 2200})
    b.user("third").assistant("c", 10.0, (3, 0, 60, 5))
    (s,) = load_file(b.write(tmp_path / "s.jsonl"))
    r = _rows(replay_session(s))
    assert (r[2]["sim_reason"], r[2]["sim_why"], r[2]["sim_changed_message"]) == ("prefix_changed", "compaction", 0)


def test_an_unpriced_model_is_named_with_the_files_to_add_it_to_and_its_tokens_still_reported(tmp_path, pi_session):
    from readbench.replay.report import session_json

    b = pi_session(model="mystery-9")
    b.user("hi").assistant("a", 0.0, (3, 100, 2000, 5)).user("more").assistant("b", 10.0, (4, 2100, 50, 7))
    (s,) = load_file(b.write(tmp_path / "s.jsonl"))
    rep = replay_session(s)
    assert rep.summaries == [] and rep.notes == [
        "no cache parameters or price for 'mystery-9': add the model to readbench/cache/models.csv and "
        "readbench/cache/prices.csv (or its spelling to readbench/cache/aliases.csv); its billed tokens are still "
        "reported; --cache NAME replays it as a what-if under a cache model's default model"]
    j = session_json(rep, 0, 0)
    assert (j["calls"], j["calls_with_usage"], j["priced_calls"], j["billed_cost_usd"]) == (2, 2, 0, None)
    assert j["billed_tokens"] == {"uncached_input": 7, "cache_read": 2200, "cache_write": 2050, "output": 12}


def _codex(tmp_path, reads: list[int], prompts: list[int], model: str = "gpt-5.1-codex"):
    """A gpt-5.1-codex rollout (items first, then token_count, as real ones are written): call k
    sends one more tool result and is billed prompts[k] input tokens of which reads[k] cached."""
    import json

    rows = [{"timestamp": "2026-01-02T16:39:45.000Z", "type": "session_meta", "payload": {"id": "cx", "cli_version": "0.77.0"}},
            {"timestamp": "2026-01-02T16:39:45.000Z", "type": "turn_context", "payload": {"model": model, "effort": "low"}},
            {"timestamp": "2026-01-02T16:39:45.000Z", "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}}]
    total = 0
    for k, (read, prompt) in enumerate(zip(reads, prompts)):
        t = f"2026-01-02T16:40:{10 + 5 * k:02d}.000Z"
        total += prompt
        rows.append({"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{k}"}})
        last = {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": 10}
        rows.append({"timestamp": t, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": total}, "last_token_usage": last}}})
        rows.append({"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"c{k}", "output": " ".join(f"w{j}" for j in range(600))}})
    f = tmp_path / "rollout.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def test_a_provider_without_write_charges_leaves_the_whole_prompt_cached(tmp_path):
    # OpenAI before GPT-5.6 caches every prompt automatically (caching.md §2.1): after call 1 its
    # whole 3,300-token prompt (floored to 128: 3,200) is cached, so calls 2 and 3 reading 0 are
    # both misses the recorded content does not explain (it only grew), not cold starts
    f = _codex(tmp_path, reads=[0, 1920, 0, 0, 5888], prompts=[2000, 3300, 4600, 5900, 7200])
    (s,) = load_file(f)
    rep = replay_session(s)
    assert rep.summaries[0]["cache_model"] == "openai"
    raw = _rows(rep, "raw")
    assert [r["billed_reason"] for r in raw] == ["cold_start", "", "unexplained", "unexplained", ""]
    # in sample both misses become exogenous breaks (one inference pass each)
    assert [b.call_index for b in rep.calibrations[("openai", "in_sample")].breaks] == [2, 3]
    ins = _rows(rep, "in_sample")
    # the unrecorded head makes call 0's simulated prompt the billed 2,000 tokens; call 1 reads
    # it floored to gpt-5.1-codex's 128-token hits: 1,920, as billed
    assert (ins[0]["sim_input_tokens"], ins[1]["sim_cache_read_tokens"]) == (2000, 1920)
    assert [r["sim_cache_read_tokens"] for r in ins[2:4]] == [0, 0]
    # gpt-5.1-codex: $1.25 uncached, $0.125 cached, $10 output per million
    assert raw[1]["billed_cost_usd"] == pytest.approx((1380 * 1.25 + 1920 * 0.125 + 10 * 10) / 1e6, abs=1e-12)


def test_the_out_of_sample_interval_is_the_beta_binomial_of_the_first_halfs_breaks():
    from readbench.replay.bill import break_interval
    from readbench.replay.records import Calibration

    # 1 break in 2 prompt calls: p ~ Beta(1.5, 1.5) (Jeffreys). Two unseen prompt calls costing
    # $1 each if they break: P(0) = E[(1-p)^2] = P(2) = E[p^2] = 1/16 + 1/4 = 0.3125, P(1) = 0.375,
    # so the central 90 % interval of the cost is base + 0 .. base + 2
    calib = Calibration(break_counts={"prompt": (1, 2)}, break_rates={"prompt": 0.5})
    rows = [{"call_kind": "prompt", "break_cost_usd": 1.0}, {"call_kind": "prompt", "break_cost_usd": 1.0},
            {"call_kind": "tool", "break_cost_usd": 5.0}]  # tool calls: 0 of 0 seen, Beta(0.5, 0.5)
    lo, hi = break_interval(rows[:2], calib, 10.0)
    assert (lo, hi) == (10.0, 12.0)
    assert all(math.isnan(x) for x in break_interval([], calib, 10.0))  # no call can break: no interval
    lo, hi = break_interval(rows, calib, 10.0)
    assert lo == 10.0 and hi == 17.0  # Beta(0.5, 0.5) puts ~half its mass near 1: the tool call may well break


def _claude(tmp_path, turns: list[tuple[str, str]]):
    """A Claude Code transcript: each (kind, text) is a user line (kind `user`) or a progress line
    (kind `hook`: a SessionStart hook named `text`), each user line answered by one response."""
    import json

    base = {"isSidechain": False, "userType": "external", "cwd": "/p", "sessionId": "k1", "version": "2.1.39"}
    rows, parent, n = [], None, 0
    for kind, text in turns:
        n += 1
        ts = f"2026-02-12T10:{n:02d}:00.000Z"
        if kind == "hook":
            rows.append({**base, "parentUuid": parent, "type": "progress", "uuid": f"p{n}", "timestamp": ts,
                         "data": {"type": "hook_progress", "hookEvent": "SessionStart", "hookName": text}})
            parent = f"p{n}"
            continue
        rows.append({**base, "parentUuid": parent, "type": "user", "uuid": f"u{n}", "timestamp": ts,
                     "message": {"role": "user", "content": text}})
        rows.append({**base, "parentUuid": f"u{n}", "type": "assistant", "uuid": f"a{n}", "timestamp": ts,
                     "message": {"model": "claude-opus-4-6", "id": f"m{n}", "role": "assistant",
                                 "content": [{"type": "text", "text": "ok"}],
                                 "usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 5000,
                                           "output_tokens": 2}}})
        parent = f"a{n}"
    f = tmp_path / "k1.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def test_call_kinds_come_from_recorded_facts(tmp_path, pi_session):
    from readbench.cache.prices import canonical_model
    from readbench.replay.requests import RequestSet

    f = _claude(tmp_path, [("hook", "SessionStart:startup"), ("user", "fix it"),
                           ("user", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
                           ("user", "<local-command-stdout>Reconnected to tidewave.</local-command-stdout>"),
                           ("hook", "SessionStart:resume"), ("hook", "SessionStart:resume"), ("user", "go on")])
    (s,) = load_file(f)
    # the hook before the first call is the session's own start; the resume is one event
    assert [(e.kind, e.call_index, e.detail) for e in s.events] == [("resume", 3, {"hook": "SessionStart:resume"})]
    rs = RequestSet(s, "anthropic", [canonical_model(c.model) for c in s.calls])
    assert [rs.call_kind(i) for i in range(len(s.calls))] == ["prompt", "notification", "command", "resume"]
    b = pi_session()
    b.user("a").assistant("x", 0.0, (3, 0, 2000, 5)).user("b").assistant("", 5.0, (0, 0, 0, 0), stop="aborted")
    b.user("c").assistant("y", 9.0, (3, 2000, 10, 5), calls=(("c1", "read", {"path": "a"}),)).result("c1", "text")
    b.assistant("z", 12.0, (3, 2010, 10, 5))
    (p,) = load_file(b.write(tmp_path / "p.jsonl"))
    rs = RequestSet(p, "anthropic-legacy", [canonical_model(c.model) for c in p.calls])
    assert [rs.call_kind(i) for i in range(len(p.calls))] == ["prompt", "prompt", "after_abort", "tool"]


def test_a_read_floored_to_the_models_hit_granularity_is_a_hit(tmp_path):
    # GPT-5.5 caches at implicit breakpoints every 2,048 tokens (caching.md §2.1): after a
    # 22,000-token prompt the next call can read at most 20,480 (10 x 2,048), which is no miss;
    # after 22,600 tokens, 22,528 (11 x 2,048)
    f = _codex(tmp_path, reads=[0, 20480, 22528], prompts=[22000, 22600, 23200], model="gpt-5.5")
    (s,) = load_file(f)
    ins = _rows(replay_session(s), "in_sample")
    assert [(r["sim_cache_read_tokens"], r["sim_reason"], r["billed_reason"]) for r in ins] == [
        (0, "cold_start", "cold_start"), (20480, "", ""), (22528, "", "")]


def test_readbench_s_own_simulated_agent_is_named_as_such_not_as_a_model_to_price(tmp_path, pi_session):
    import dataclasses

    f = (pi_session().user(WORDS).assistant("Done.", 0.0, (3, 0, 2050, 40)).write(tmp_path / "s.jsonl"))
    (s,) = load_file(f)
    s.calls[:] = [dataclasses.replace(c, model="readbench/sim-mixed", provider=None) for c in s.calls]
    rep = replay_session(s, ["anthropic-5m"])
    notes = list(rep.notes)
    assert ("model 'readbench/sim-mixed' is readbench's simulated agent: it has no provider and no bill; its calls are "
            "simulated as claude-sonnet-5.5 (a what-if, not compared with a bill)") in notes
    assert not any("add it to readbench/cache/prices.csv" in n for n in notes)


def test_a_model_of_another_cache_family_is_named_with_both_families(tmp_path, pi_session):
    """The note reads for every family name (it said "not a openai model")."""
    f = (pi_session().user(WORDS).assistant("Done.", 0.0, (3, 0, 2050, 40)).write(tmp_path / "s.jsonl"))
    (s,) = load_file(f)
    rep = replay_session(s, ["openai", "anthropic-5m", "gemini-implicit"])
    assert [n for n in rep.notes if "cache family" in n] == [
        "model 'claude-sonnet-4-5' is of the anthropic cache family, not openai: under openai its calls are priced "
        "as gpt-5.6-terra (a what-if, not compared with the bill)",
        "model 'claude-sonnet-4-5' is of the anthropic cache family, not gemini: under gemini-implicit its calls "
        "are priced as gemini-2.5-flash (a what-if, not compared with the bill)",
    ]
