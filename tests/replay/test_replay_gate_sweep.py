"""`readbench replay --gate-sweep`: the sister's gate benchmark (docs/specs/dcp.md §7.5) on a
hand-built session whose candidates, realized benefits and best T are computed by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.replay._cli import replay_cmd
from readbench.replay.gate_sweep import best_thresholds, session_candidates, sweep
from readbench.sessions import Call, Session

# Token estimates (dcp.md §7.1, ceil(chars/4)): "go", "u1", "ok", ... = 1; the grep call's
# arguments '{"pattern":"x"}' (15 chars) = 4; a 96-char placeholder
# "[pruned by dynamic-context-pruning: duplicate grep call result; see newest occurrence (call g2)]" = 24.


def _u(text: str) -> ChatMessageUser:
    return ChatMessageUser(content=text)


def _grep(cid: str, pattern: str) -> ChatMessageAssistant:
    return ChatMessageAssistant(content="", tool_calls=[ToolCall(id=cid, function="grep", arguments={"pattern": pattern})])


def _out(cid: str, chars: int) -> ChatMessageTool:
    return ChatMessageTool(content="a" * chars, tool_call_id=cid, function="grep")


def _ok() -> ChatMessageAssistant:
    return ChatMessageAssistant(content="ok")


def hand_session() -> Session:
    """20 calls (one before each assistant message), a compaction before call 12.

    Context 0 (calls 0-11): 0 U go | 1 A grep g1 | 2 T g1 8000 chars | 3 A grep g2 | 4 T g2 400 chars
    | 5 U u1 | 6 ok | 7 U u2 | 8 ok | 9 U u3 | 10 ok | 11 U u4 | 12 A grep g3 | 13 T g3 400 chars
    | 14 ok | 15 U u5 | 16 ok | ... | 23 U u9 | 24 ok.
    Context 1 (calls 12-19, after the compaction): 0 U summary | 1 A grep h1 (pattern y) | 2 T h1
    4000 chars | 3 A grep h2 | 4 T h2 400 chars | 5 U v1 | 6 ok | ... | 15 U v6 | 16 ok.
    """
    ctx0 = [_u("go"), _grep("g1", "x"), _out("g1", 8000), _grep("g2", "x"), _out("g2", 400)]
    for k in range(1, 5):
        ctx0 += [_u(f"u{k}")] + ([_ok()] if k < 4 else [])
    ctx0 += [_grep("g3", "x"), _out("g3", 400), _ok()]
    for k in range(5, 10):
        ctx0 += [_u(f"u{k}"), _ok()]
    ctx1 = [_u("summary"), _grep("h1", "y"), _out("h1", 4000), _grep("h2", "y"), _out("h2", 400)]
    for k in range(1, 7):
        ctx1 += [_u(f"v{k}"), _ok()]
    calls = []
    for c, ctx in enumerate((ctx0, ctx1)):
        for n, m in enumerate(ctx):
            if isinstance(m, ChatMessageAssistant):
                calls.append(Call(len(calls), c, n, "claude-sonnet-4-5"))
    return Session(source="hand.jsonl", format="pi", harness="pi", harness_version=None, session_id="hand",
                   contexts=[ctx0, ctx1], calls=calls)


def test_hand_session_layout():
    s = hand_session()
    assert len(s.calls) == 20 and [c.index for c in s.calls if c.context == 1] == list(range(12, 20))
    assert [c.n_messages for c in s.calls[:7]] == [1, 3, 6, 8, 10, 12, 14]


def test_each_candidate_is_recorded_once_at_the_first_call_where_it_is_proposable():
    rows = session_candidates(hand_session())
    got = [(r["call"], r["message_index"], r["strategy"], r["tool"], r["tool_call_id"], r["removed_tokens"],
            r["tail_tokens"], r["agent_state"], r["remaining_calls"], r["remaining_calls_context"]) for r in rows]
    # Call 5 sends ctx0[:12], ending with u4: user prompts at 0, 5, 7, 9, 11, so the last four turns
    # start at 5 and g1 (1, 2) leaves the recency window; its duplicate g2 is the newest: g1's
    # result is proposed (idle: the request ends with a prompt). Tail 2..11 = g1 2000 + g2 call 4
    # + g2 100 + u1 ok u2 ok u3 ok u4 7. Call 6 sends ctx0[:14] ending with g3's result (mid_loop):
    # g3 is now the newest, g1 is already decided, g2's result (4000 -> 400 chars) is fresh; tail
    # 4..13 = 100 + 7 + 4 + 100. Call 17 is the 6th call of context 1, the same shape as call 5.
    # Remaining calls: 20 - call; while sent: g1 in calls 5..11 (7), g2 in 6..11 (6), h1 in 17..19.
    assert got == [
        (5, 2, "dedupe", "grep", "g1", 2000 - 24, 2000 + 4 + 100 + 7, "idle", 15, 7),
        (6, 4, "dedupe", "grep", "g2", 100 - 24, 100 + 7 + 4 + 100, "mid_loop", 14, 6),
        (17, 2, "dedupe", "grep", "h1", 1000 - 24, 1000 + 4 + 100 + 7, "idle", 3, 3),
    ]


# Candidates of the hand session: (removed, tail, state, remaining to the end, remaining while sent).
# A = g1 (1976, 2111, idle, 15, 7), B = g2 (76, 211, mid_loop, 14, 6), C = h1 (976, 1111, idle, 3, 3).
# Break-even (1-r)·tail / (r·removed) and realized benefit n·r·removed - (1-r)·tail:
#   r = 0.1:  A 1899.9/197.6 = 9.61,  B 189.9/7.6 = 24.99,  C 999.9/97.6 = 10.24
#             A 15·197.6 - 1899.9 = 1064.1 (7·197.6 - 1899.9 = -516.7), B 14·7.6 - 189.9 = -83.5 (-144.3),
#             C 3·97.6 - 999.9 = -707.1
#   r = 0.25: A 1583.25/494 = 3.21, B 158.25/19 = 8.33, C 833.25/244 = 3.41
#             A 7410 - 1583.25 = 5826.75 (3458 - 1583.25 = 1874.75), B 266 - 158.25 = 107.75 (-44.25), C -101.25
#   r = 0.5:  A 1055.5/988 = 1.07, B 105.5/38 = 2.78, C 555.5/488 = 1.14
#             A 14820 - 1055.5 = 13764.5 (5860.5), B 532 - 105.5 = 426.5 (122.5), C 1464 - 555.5 = 908.5
#   r = 0.9:  all below 1; A 26676 - 211.1 = 26464.9 (12237.7), B 957.6 - 21.1 = 936.5 (389.3),
#             C 2635.2 - 111.1 = 2524.1
BEST = {  # (basis, r, state) -> (best T, realized benefit, accepted)
    ("session", 0.1, "overall"): (10, 1064.1, 1), ("session", 0.1, "idle"): (10, 1064.1, 1),
    ("session", 0.1, "mid_loop"): (1, 0.0, 0),
    ("session", 0.25, "overall"): (9, 5826.75 - 101.25 + 107.75, 3), ("session", 0.25, "idle"): (4, 5725.5, 2),
    ("session", 0.25, "mid_loop"): (9, 107.75, 1),
    ("session", 0.5, "overall"): (3, 13764.5 + 908.5 + 426.5, 3), ("session", 0.5, "idle"): (2, 14673.0, 2),
    ("session", 0.5, "mid_loop"): (3, 426.5, 1),
    ("session", 0.9, "overall"): (1, 26464.9 + 936.5 + 2524.1, 3), ("session", 0.9, "idle"): (1, 28989.0, 2),
    ("session", 0.9, "mid_loop"): (1, 936.5, 1),
    ("context", 0.1, "overall"): (1, 0.0, 0), ("context", 0.1, "idle"): (1, 0.0, 0),
    ("context", 0.1, "mid_loop"): (1, 0.0, 0),
    ("context", 0.25, "overall"): (4, 1874.75 - 101.25, 2), ("context", 0.25, "idle"): (4, 1773.5, 2),
    ("context", 0.25, "mid_loop"): (1, 0.0, 0),
    ("context", 0.5, "overall"): (3, 5860.5 + 908.5 + 122.5, 3), ("context", 0.5, "idle"): (2, 6769.0, 2),
    ("context", 0.5, "mid_loop"): (3, 122.5, 1),
    ("context", 0.9, "overall"): (1, 12237.7 + 2524.1 + 389.3, 3), ("context", 0.9, "idle"): (1, 14761.8, 2),
    ("context", 0.9, "mid_loop"): (1, 389.3, 1),
}


def test_gate_sweep_on_the_hand_session_finds_the_hand_computed_best_t():
    curves = sweep(session_candidates(hand_session()))
    best = best_thresholds(curves)
    got = {(b.basis, b.r, b.state): (b.T, b.realized_benefit, b.accepted) for b in best.itertuples()}
    assert set(got) == set(BEST)
    for key, (t, benefit, accepted) in BEST.items():
        assert got[key][0] == t and got[key][2] == accepted, key
        assert got[key][1] == pytest.approx(benefit, abs=1e-6), key
    # the whole r = 0.1 curve: A accepted from T = 10, C from T = 11, B from T = 25
    one = curves[(curves.basis == "session") & (curves.r == 0.1) & (curves.state == "overall")]
    assert list(one["T"]) == list(range(1, 31)) and set(one["swept_to"]) == {30} and set(one["candidates"]) == {3}
    expected = [0.0] * 9 + [1064.1] + [1064.1 - 707.1] * 14 + [1064.1 - 707.1 - 83.5] * 6
    assert list(one["realized_benefit"]) == pytest.approx(expected, abs=1e-6)
    assert list(one["accepted"]) == [0] * 9 + [1] + [2] * 14 + [3] * 6


def _rows(*cands: tuple[int, int, int]) -> list[dict]:
    """(tail, removed, remaining) rows, all mid_loop; at r = 0.5 break-even = tail / removed."""
    return [{"tail_tokens": t, "removed_tokens": rm, "agent_state": "mid_loop", "remaining_calls": n,
             "remaining_calls_context": n} for t, rm, n in cands]


def test_the_range_doubles_while_the_best_t_is_at_its_edge():
    # break-even 29.5 and 45 (realized 100·5 - 147.5 = 352.5 and 500 - 225 = 275): the best of 1..30
    # is at the edge, so the range doubles to 60, where 45 is best; 100 (realized 1000 - 500 = 500)
    # is never looked at, as in the sister's sweep.
    best = best_thresholds(sweep(_rows((295, 10, 100), (450, 10, 100), (1000, 10, 200)), (0.5,)))
    row = best[(best.basis == "session") & (best.state == "overall")].iloc[0]
    assert (row["T"], row.swept_to, row.accepted) == (45, 60, 2) and row.realized_benefit == pytest.approx(627.5)
    idle = best[(best.basis == "session") & (best.state == "idle")].iloc[0]
    assert (idle["T"], idle.swept_to, idle.candidates, idle.realized_benefit) == (1, 30, 0, 0.0)


def test_the_range_stops_at_the_hard_cap():
    # break-even 29.5, 59.5, 119.5, 239.5, 479.5, 499.5, each realized > 0: 30 -> 60 -> ... -> 480 -> 500
    cands = [(int(be * 10), 10, 1000) for be in (29.5, 59.5, 119.5, 239.5, 479.5, 499.5)]
    curves = sweep(_rows(*cands), (0.5,))
    row = best_thresholds(curves).query("basis == 'session' and state == 'overall'").iloc[0]
    assert (row["T"], row.swept_to, row.accepted) == (500, 500, 6)
    assert curves["T"].max() == 500


def test_exact_break_even_is_accepted():
    # r = 0.5: tail 100, removed 10 -> break-even exactly 10 calls; realized 3·5 - 50 = -35
    curves = sweep(_rows((100, 10, 3)), (0.5,))
    one = curves.query("basis == 'session' and state == 'overall'")
    assert list(one["accepted"][8:11]) == [0, 1, 1] and list(one["realized_benefit"][8:11]) == [0.0, -35.0, -35.0]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match=r"r must be in \(0, 1\], got 0"):
        sweep(_rows((100, 10, 3)), (0,))
    with pytest.raises(ValueError, match="lack column.*remaining_calls_context"):
        sweep([{"tail_tokens": 1, "removed_tokens": 1, "agent_state": "idle", "remaining_calls": 1}])
    with pytest.raises(ValueError, match="t_start <= t_cap"):
        sweep(_rows((100, 10, 3)), t_start=40, t_cap=30)
    with pytest.raises(ValueError, match="sister-family.*'pi-dcp'"):
        session_candidates(hand_session(), "pi-dcp")
    empty = sweep([])
    assert set(empty["realized_benefit"]) == {0.0} and set(empty[empty.best]["T"]) == {1}


def test_cli_writes_the_sweep_tables_figure_and_report_section(tmp_path, pi_session):
    b = pi_session().user("go")
    b.assistant("", 0, (10, 0, 10, 5), calls=(("g1", "grep", {"pattern": "x"}),)).result("g1", "a" * 8000, "grep")
    b.assistant("", 10, (10, 0, 10, 5), calls=(("g2", "grep", {"pattern": "x"}),)).result("g2", "a" * 400, "grep")
    for k, at in enumerate((20, 30, 40, 50), start=1):
        b.user(f"u{k}").assistant("ok", at, (10, 0, 10, 5))
    path = b.write(tmp_path / "s.jsonl")
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(path), "--out", str(out), "--gate-sweep"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["calls.parquet", "cost.png", "gate_candidates.parquet", "gate_sweep.parquet",
                                                     "gate_sweep.png", "report.html", "report.md", "sessions.parquet"]
    cands = pd.read_parquet(out / "gate_candidates.parquet")
    # the 6th and last call sends ...u4: g1's result leaves the recency window (as call 5 of hand_session)
    assert cands[["call", "tool_call_id", "removed_tokens", "tail_tokens", "agent_state", "remaining_calls"]].values.tolist() == [
        [5, "g1", 1976, 2111, "idle", 1]]
    report = (out / "report.md").read_text()
    # one remaining call: r = 0.9 accepts it at T = 1 (1·1778.4 - 211.1 = 1567.3); r = 0.5 would lose
    # 988 - 1055.5, so T = 1 (break-even 1.07) accepts nothing
    assert "| 0.9 | T=1: 1,567 (1/1) | T=1: 0 (0/0) | T=1: 1,567 (1/1) |" in report
    assert "| 0.5 | T=1: 0 (0/1) | T=1: 0 (0/0) | T=1: 0 (0/1) |" in report
    assert "1 candidate(s) in 1 file(s), 1 session(s) of 1 replayed." in report and "![realized benefit" in report
    curves = pd.read_parquet(out / "gate_sweep.parquet")
    assert len(curves) == 2 * 4 * 3 * 30 and curves["best"].sum() == 24


def test_cli_reports_a_corpus_without_candidates(tmp_path, pi_session):
    path = pi_session().user("go").assistant("hi", 0, (10, 0, 10, 5)).write(tmp_path / "s.jsonl")
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_cmd, [str(path), "--out", str(out), "--gate-sweep", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["gate_candidates"] == 0
    assert "No gate candidates in 1 session(s)" in (out / "report.md").read_text()
    assert not (out / "gate_candidates.parquet").exists() and not (out / "gate_sweep.parquet").exists()
    res = CliRunner().invoke(replay_cmd, [str(path), "--out", str(tmp_path / "plain"), "--json"])
    assert "gate_candidates" not in json.loads(res.stdout) and "Cache-aware gate" not in (tmp_path / "plain" / "report.md").read_text()
