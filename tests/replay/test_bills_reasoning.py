"""Earlier turns' reasoning left out of the rebuilt requests where the provider drops it (issue 22).

OpenAI's Responses API removes the reasoning items of earlier turns ("In turn 2, any reasoning
items from turn 1 are ignored and removed", OpenAI cookbook, 2025-05-11) and Anthropic models
before Opus 4.5 / Sonnet 4.6 strip earlier thinking at a plain user message (caching.md §1.4):
a new user turn then changes the prefix at the previous turn's first reasoning block, and the
cache read of that call is the prefix before it. Real Codex bills show it: a user turn reads the
previous turn's first prompt, not the previous call's. Token counts are readbench's; reads are
worked out by hand from caching.md §2.1 (OpenAI <= 5.5: whole prompt cached at block boundaries,
hits floored to 128 tokens) and §1.1 (Anthropic: pi's breakpoint on the last user block).
"""

from __future__ import annotations

import json

from readbench.cache import count_tokens
from readbench.cache.prices import get_model_spec
from readbench.replay.bill import replay_session
from readbench.sessions import load_file

WORDS = " ".join(f"w{i}" for i in range(1500))
THOUGHT = " ".join(f"t{i}" for i in range(300))
ARGS = {"path": "a.py"}
RESULT = "x = 1\n" * 200


def _session(tmp_path, pi_session, model: str):
    f = (pi_session(model=model)
         .user(WORDS)
         .assistant("", 0.0, (0, 0, 0, 40), calls=(("c1", "read", ARGS),), thinking=THOUGHT)
         .result("c1", RESULT)
         .assistant("Done.", 10.0, (0, 0, 0, 12), thinking=THOUGHT + " again")
         .user("next question " * 5)
         .assistant("Ok.", 20.0, (0, 0, 0, 5))
         .write(tmp_path / "s.jsonl"))
    (s,) = load_file(f)
    return s


def _raw(rep):
    return [r for r in rep.calls if r["mode"] == "raw"]


def test_a_new_user_turn_drops_the_previous_turns_reasoning_for_openai(tmp_path, pi_session):
    assert get_model_spec("gpt-5.4").drops_earlier_reasoning
    s = _session(tmp_path, pi_session, "gpt-5.4")
    rep = replay_session(s, ["openai"])
    r0, r1, r2 = _raw(rep)
    tok = lambda t: count_tokens(t, "openai")  # noqa: E731
    u0 = tok(WORDS)
    call = tok("read" + json.dumps(ARGS, separators=(",", ":")))
    # call 1, same turn: the reasoning is kept, the whole of call 0's prompt is read (floored to 128)
    assert r1["sim_input_tokens"] == u0 + tok(THOUGHT) + call + tok(RESULT)
    assert r1["sim_cache_read_tokens"] == u0 // 128 * 128
    # call 2, a new user turn: both thinking blocks of turn 1 are gone (neither counted nor hashed),
    # so only the first user message is still a cached prefix
    assert r2["sim_input_tokens"] == u0 + call + tok(RESULT) + tok("Done.") + tok("next question " * 5)
    assert r2["sim_cache_read_tokens"] == u0 // 128 * 128
    assert r2["sim_reason"] == "prefix_changed" and r2["sim_why"] == "an earlier message edited"


def test_models_that_keep_earlier_thinking_read_the_whole_previous_prompt(tmp_path, pi_session):
    assert not get_model_spec("claude-opus-4.6").drops_earlier_reasoning
    s = _session(tmp_path, pi_session, "claude-opus-4-6")
    r0, r1, r2 = _raw(replay_session(s, ["anthropic-5m"]))
    # pi's breakpoint sits on the last user block: call 2 reads what call 1 wrote (its whole prompt)
    assert r2["sim_cache_read_tokens"] == r1["sim_input_tokens"]
    assert r2["sim_reason"] == ""


def test_older_claude_models_strip_earlier_thinking_at_a_plain_user_message(tmp_path, pi_session):
    s = _session(tmp_path, pi_session, "claude-sonnet-4-5")
    r0, r1, r2 = _raw(replay_session(s, ["anthropic-5m"]))
    tok = lambda t: count_tokens(t, "anthropic-legacy")  # noqa: E731
    # only the first user message (call 0's breakpoint) is still a cached prefix at call 2
    assert r2["sim_cache_read_tokens"] == tok(WORDS) == r0["sim_input_tokens"]
    assert r2["sim_reason"] == "prefix_changed"
