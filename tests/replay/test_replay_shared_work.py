"""Issue 26: work a replay repeats is done once, with the same results (the pinned digests of
tests/replay/test_replay_pinned.py check whole replays; these check each sharing on its own)."""

from __future__ import annotations

from readbench.cache.blocks import Block
from readbench.cache.prices import canonical_model
from readbench.replay.arms import ArmSimulator
from readbench.replay.prefix import salted
from readbench.replay.records import Calibration, TokenFit
from readbench.replay.requests import RequestSet
from readbench.replay.simulate import calibrated_requests
from readbench.replay.thinking import EarlierReasoning
from readbench.sessions import load_file
from readbench.sessions.synth import write_pi_session


def _b(kind: str, role: str, tag: str, ends: bool = True) -> Block:
    return Block(kind, role, 10, tag.encode().ljust(16, b"."), ends)


def _marker(b: Block) -> Block:
    return Block("thinking", b.role, 0, salted(b.content_hash, 2**31 - 1), True)


def test_earlier_reasoning_is_dropped_call_after_call_as_from_each_call_alone():
    sys_, u1, u2 = _b("system", "system", "sys"), _b("text", "user", "u1"), _b("text", "user", "u2")
    t1, t1end = _b("thinking", "assistant", "t1", False), _b("thinking", "assistant", "t1e")
    use1, res1 = _b("tool_use", "assistant", "use1"), _b("tool_result", "user", "res1")
    t2, use2, res2 = _b("thinking", "assistant", "t2", False), _b("tool_use", "assistant", "use2"), _b("tool_result", "user", "res2")
    a = (sys_, u1, t1, use1, res1)  # first turn: its own reasoning is kept
    b = a + (t2, use2, res2)  # same turn, one more tool call
    c = b + (t1end, u2)  # a new user turn: every thinking block before it goes, t1end leaves its marker
    d = c + (_b("text", "assistant", "x"),)  # same turn again: the same head
    e = (sys_, u2, t1, use1)  # a new context (compaction): no user turn after the reasoning
    f = (sys_, t1, u1)  # thinking before the only user message
    drop = EarlierReasoning(raw := set())
    got = [drop(x) for x in (a, b, c, d, e, f)]
    assert got[0] is a and got[1] is b and got[4] is e
    assert got[2] == (sys_, u1, use1, res1, use2, res2, _marker(t1end), u2)
    assert got[3] == got[2] + (d[-1],)
    assert got[2][6] is got[3][6] and id(got[2][6]) in raw  # one marker object, not calibrated
    assert got[5] == (sys_, u1)


def test_call_kinds_of_a_long_opening_in_any_order(tmp_path, pi_session):
    b = pi_session()
    b.user("a")
    for k in range(1500):
        b.assistant("x", 3.0 * k, (3, 2000, 10, 5), calls=((f"c{k}", "read", {"path": "a"}),)).result(f"c{k}", "text")
    b.assistant("done", 4500.0, (3, 2000, 10, 5))
    (p,) = load_file(b.write(tmp_path / "p.jsonl"))
    rs = RequestSet(p, "anthropic", [canonical_model(c.model) for c in p.calls])
    # the last call asked first: worked out without one nested look-up per earlier call
    assert rs.call_kind(1500) == "opening"
    assert [rs.call_kind(i) for i in range(len(p.calls))] == ["prompt"] + ["opening"] * 1500


def test_a_pass_of_requests_is_built_once_per_calibration_content(tmp_path):
    (s,) = load_file(write_pi_session(tmp_path / "s.jsonl", seed=3, calls=40))
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic", models)
    first = list(calibrated_requests(rs, Calibration(notes=("one",))))
    again = list(calibrated_requests(rs, Calibration(notes=("another object, same content",))))
    assert len(first) == len(s.calls) and all(x is y for x, y in zip(first, again))
    fit = Calibration(tokens={models[0]: TokenFit(1.5, 2.0, 10)})
    other = list(calibrated_requests(rs, fit))
    fresh = RequestSet(s, "anthropic", models)
    built = [fresh.request(i, fit, c.usage.output_tokens if c.usage is not None else 0) for i, c in enumerate(s.calls)]
    assert other == built and other[-1].cum_tokens == built[-1].cum_tokens
    assert other[-1].cum_tokens != first[-1].cum_tokens  # the fit gives other tokens


def test_an_arm_rendering_like_the_recorded_requests_shares_their_sets(tmp_path):
    (s,) = load_file(write_pi_session(tmp_path / "s.jsonl", seed=4, calls=40))
    sim = ArmSimulator(s, ["anthropic-5m", "openai"])
    same = [list(s.request(i)) for i in range(len(s.calls))]  # new lists, the same messages
    changed = [list(r) for r in same]
    changed[-1] = changed[-1][:-1]
    for cm in ("anthropic-5m", "openai"):
        assert sim._request_set(cm, same) is sim._request_set(cm, None)
        assert sim._request_set(cm, changed) is not sim._request_set(cm, None)
    assert sim.run(same) == sim.run(None)


def _arms(s):
    """The recorded requests, and an arm whose calls drop and re-add messages (fresh lists,
    some fresh message copies), as a pruner's projections do."""
    arm = []
    for i in range(len(s.calls)):
        req = list(s.request(i))
        if i % 7 == 3 and len(req) > 4:
            req = req[:2] + [m.model_copy() for m in req[2:4]] + req[4:]
        arm.append(req)
    return [None, arm]


def _reasoning_session(tmp_path, pi_session):
    """Turns of tool calls with reasoning: a dropping model leaves out earlier turns' thinking."""
    b = pi_session()
    t = 0.0
    for turn in range(6):
        b.user(f"task {turn}")
        for k in range(4):
            cid = f"c{turn}-{k}"
            b.assistant("", t, (3, 2000, 10, 5), thinking=f"think {turn} {k}", calls=((cid, "read", {"path": f"f{k}"}),))
            b.result(cid, f"text {turn} {k}\n" * (k + 1))
            t += 3.0
        b.assistant(f"done {turn}", t, (3, 2000, 10, 5), thinking=f"wrap {turn}")
        t += 3.0
    (s,) = load_file(b.write(tmp_path / "r.jsonl"))
    return s


def test_consecutive_calls_share_the_prefix_the_builder_hands_over(tmp_path, pi_session):
    """`RequestBuilder.prefix_hint` is a lower bound on two consecutive calls' identical blocks;
    `RequestSet` turns it into the exact prefix of consecutive bases (dropped reasoning, mixed
    dropping and keeping models included), and its requests equal those built with every prefix
    scanned."""
    from readbench.cache.adapter import RequestBuilder
    from readbench.replay.prefix import identical_prefix
    from readbench.replay.requests import call_records
    from readbench.sessions.synth import write_claude_session

    for s in (*load_file(write_pi_session(tmp_path / "p.jsonl", seed=5, calls=60)),
              *load_file(write_claude_session(tmp_path / "c.jsonl", seed=6, calls=60)),
              _reasoning_session(tmp_path, pi_session)):
        builder, unhinted = RequestBuilder(), RequestBuilder()
        unhinted.prefix_hint = lambda call, prev_call: None  # every prefix scanned
        n = len(s.calls)
        calib = Calibration(tokens={"gpt-5.6-terra": TokenFit(1.1, 3.0, 10)}, heads={"gpt-5.6-terra": 500})
        for requests in _arms(s):
            records = call_records(s, requests)
            hinted = 0
            for family, models in (("openai", ["gpt-5.6-terra"] * n), ("deepseek", ["deepseek-flash"] * n),
                                   ("openai", ["gpt-5.6-terra" if i % 3 else "gemini-2.5-flash" for i in range(n)])):
                rs = RequestSet(s, family, models, builder=builder, records=records)
                for i in range(1, n):
                    lb = builder.prefix_hint(records[i], records[i - 1])
                    if lb is not None:
                        hinted += 1
                        assert lb <= identical_prefix(builder.blocks(records[i]), builder.blocks(records[i - 1]))
                    if rs._same[i] is not None:
                        assert rs._same[i] == identical_prefix(rs.base[i], rs.base[i - 1])
                scanned = RequestSet(s, family, models, builder=unhinted, records=records)
                assert scanned.base == rs.base
                scanned._same = [None] * n  # `request` scans every prefix
                for i in range(n):
                    assert rs.request(i, calib, 7) == scanned.request(i, calib, 7)
                    assert rs._last[3:5] == scanned._last[3:5]  # prefix hashes and cumulative tokens
            assert hinted > n  # the hint is there for most calls
        if s.session_id == "replay-test":  # the reasoning session: earlier turns' thinking was dropped
            assert rs.base[-1] != builder.blocks(records[-1], "openai")


def test_earlier_reasoning_reports_the_prefix_its_outputs_share():
    sys_, u1, u2 = _b("system", "system", "sys"), _b("text", "user", "u1"), _b("text", "user", "u2")
    t1, use1, res1 = _b("thinking", "assistant", "t1"), _b("tool_use", "assistant", "use1"), _b("tool_result", "user", "res1")
    a = (sys_, u1, t1, use1, res1)
    calls = [a, a + (u2,), a + (u2, t1), a + (u2, use1, res1), (sys_, u2), (sys_, u2, res1)]
    from readbench.replay.prefix import identical_prefix

    runs, known = [], 0
    for hinted in (False, True):
        drop = EarlierReasoning(set())
        outs = []
        for k, x in enumerate(calls):
            p = (calls[k - 1], identical_prefix(x, calls[k - 1])) if hinted and k else None
            outs.append(drop(x, p))
            if k and drop.same is not None:
                known += 1
                assert drop.same == identical_prefix(outs[k], outs[k - 1])
        runs.append(outs)
    assert runs[0] == runs[1] and known >= 4  # the same output, told with or without the caller's prefix
