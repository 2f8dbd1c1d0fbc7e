"""The cache-aware sister extension: gate, stickiness, floor, strategies (dcp.md Part B)."""

from __future__ import annotations

import json
import math

import pytest
from dcp_msgs import asst, step, tool, user

from readbench.dcp import DcpState, prefix_break_index, project
from readbench.dcp._gate import accepts, cost_model
from readbench.dcp.strategies.sister_file_ops import ReadRange, range_covers, read_range

DUP = "[pruned by dynamic-context-pruning: duplicate read call result; see newest occurrence (call c2)]"
GATE_OFF = {"base": "dcp-gated", "name": "gate-off", "gate_mode": "off"}


def test_cost_model_boundary_at_r_01_t_22():
    # accept iff removed / tail >= (1 - 0.1) / (0.1 * 22) = 0.40909...
    yes = cost_model(1000, 410, 0.1)
    assert (yes.penalty_tokens, yes.recurring_saving_tokens) == pytest.approx((900.0, 41.0))
    assert yes.break_even_calls == pytest.approx(900 / 41) and accepts(yes, 22)
    no = cost_model(1000, 409, 0.1)
    assert no.break_even_calls == pytest.approx(900 / 40.9) and not accepts(no, 22)
    assert cost_model(100, 0, 0.1).break_even_calls == math.inf
    assert cost_model(0, 0, 0.1).break_even_calls == 0.0
    assert accepts(no, 22, "always-apply") and accepts(no, 22, "off")


def _dup_session(last_prompt_tokens: int) -> list:
    """Old duplicate read (4000 chars = 1000 tokens) before the 4 protected user turns.

    Candidate: c1's result (position 2): removed = 1000 - ceil(96/4) = 976 tokens.
    Tail from position 2 = 1000 (c1) + 3 (c2 call args '{"path":"f"}') + 1000 (c2)
    + 3 x 1 ("u2".."u4") + last prompt tokens.
    """
    msgs = [user("go")]
    msgs += step("c1", "read", {"path": "f"}, "a" * 4000)
    msgs += step("c2", "read", {"path": "f"}, "a" * 4000)
    msgs += [user("u2"), user("u3"), user("u4"), user("p" * (4 * last_prompt_tokens))]
    return msgs


def test_gate_accepts_exactly_at_41_percent_of_the_tail():
    accepted = project(_dup_session(379), "dcp-gated")  # tail 2385: 976/2385 = 0.40922
    g = accepted.stats.gate
    assert (g.tail_tokens, g.removed_tokens, g.earliest_index, g.agent_state) == (2385, 976, 2, "idle")
    assert g.penalty_tokens == pytest.approx(0.9 * 2385)
    assert g.recurring_saving_tokens == pytest.approx(97.6)
    assert g.break_even_calls == pytest.approx(2146.5 / 97.6) and g.break_even_calls <= 22
    assert g.accepted and accepted.messages[2].text == DUP
    assert accepted.stats.pruned["dedupe"] == 1  # dedupe beat superseded-file-ops on the same target

    rejected = project(_dup_session(380), "dcp-gated")  # tail 2386: 976/2386 = 0.40905
    g = rejected.stats.gate
    assert (g.tail_tokens, g.removed_tokens) == (2386, 976)
    assert g.break_even_calls > 22 and not g.accepted
    assert rejected.stats.changed_indices == () and rejected.state == DcpState()


def test_decisions_are_sticky_and_each_target_changes_once():
    msgs = _dup_session(379)
    p1 = project(msgs, "dcp-gated")
    assert [d.key for d in p1.state.decisions] == ["dedupe:tool_result_content:c1"]
    # a huge new tail would now make the gate reject c1, but the decision is sticky
    grown = msgs + step("c3", "bash", {"command": "cat big"}, "q" * 40000)
    p2 = project(grown, "dcp-gated", state=p1.state)
    assert p2.messages[2].text == DUP and p2.stats.newly_pruned["dedupe"] == 0
    assert p2.stats.pruned["dedupe"] == 1 and p2.state == p1.state
    assert prefix_break_index(p1.messages, p2.messages) is None
    # without the state the same history is not pruned at all (gate rejects)
    assert project(grown, "dcp-gated").stats.changed_indices == ()


def test_rejected_batch_is_reproposed_on_the_next_call():
    p1 = project(_dup_session(380), "dcp-gated")
    assert not p1.stats.gate.accepted
    smaller = _dup_session(379)  # e.g. a history where the tail is 1 token shorter
    p2 = project(smaller, "dcp-gated", state=p1.state)
    assert p2.stats.gate.accepted and p2.stats.newly_pruned["dedupe"] == 1


def test_state_round_trips_through_json():
    p = project(_dup_session(379), "dcp-gated")
    data = json.loads(json.dumps(p.state.to_dict()))
    assert DcpState.from_dict(data) == p.state
    assert data["decisions"][0] == {
        "key": "dedupe:tool_result_content:c1",
        "strategy_id": "dedupe",
        "kind": "tool_result_content",
        "tool_call_id": "c1",
        "reason": "duplicate read call; see result of call c2",
        "placeholder": DUP,
    }
    with pytest.raises(ValueError, match="'kind'"):
        DcpState.from_dict({"version": 1, "decisions": [{**data["decisions"][0], "kind": "x"}]})


def test_min_chars_saved_floor():
    def session(n: int, tool_name: str = "grep") -> list:
        args = {"pattern": "f"} if tool_name == "grep" else {"path": "f"}
        return (
            [user("go")]
            + step("c1", tool_name, args, "a" * n)
            + step("c2", tool_name, args, "a" * n)
            + [user("u2"), user("u3"), user("u4"), user("u5")]
        )

    # dedupe placeholder for grep is 96 chars: chars saved = n - 96, floor 200 -> needs n >= 296
    assert project(session(295), GATE_OFF).stats.changed_indices == ()
    assert project(session(296), GATE_OFF).stats.changed_indices == (2,)
    no_floor = {**GATE_OFF, "name": "no-floor", "min_chars_saved": 0}
    assert project(session(150), no_floor).stats.changed_indices == (2,)
    # the floor runs before the same-target collapse: for a read, dedupe (saves 199 chars) is
    # dropped and superseded-file-ops' shorter placeholder (saves 218) takes the target
    p = project(session(295, "read"), GATE_OFF)
    assert p.messages[2].text == "[pruned by dynamic-context-pruning: superseded by newer read of f (call c2)]"
    assert p.stats.pruned == {"dedupe": 0, "error-purge": 0, "superseded-file-ops": 1}


def test_recency_window_and_protections():
    def session(path: str, tool_name: str = "read") -> list:
        return (
            [user("go")]
            + step("c1", tool_name, {"path": path}, "a" * 1000)
            + step("c2", tool_name, {"path": path}, "a" * 1000)
        )

    recent = session("f") + [user("u2"), user("u3"), user("u4")]  # only 4 user turns: c1 in window
    assert project(recent, GATE_OFF).stats.changed_indices == ()
    old = recent + [user("u5")]
    assert project(old, GATE_OFF).stats.changed_indices == (2,)
    assert project(session("config/.env") + [user(f"u{i}") for i in range(4)], GATE_OFF).stats.changed_indices == ()
    assert project(session("x", "TODO") + [user(f"u{i}") for i in range(4)], GATE_OFF).stats.changed_indices == ()
    assert project([user("a")] + step("c1", "read", {"path": "f"}, "x" * 500), GATE_OFF).stats.gate.candidates == 0


def test_error_purge_replaces_arguments_after_more_than_four_turns():
    cmd = "run " + "-v " * 100  # 304 chars of arguments, above the 200-char floor
    base = [user("go")] + step("e1", "bash", {"command": cmd}, "exit 1", error=True)
    four = base + [user(f"u{i}") for i in range(4)]
    five = base + [user(f"u{i}") for i in range(5)]
    assert project(four, GATE_OFF).stats.changed_indices == ()
    p = project(five, GATE_OFF)
    assert p.messages[1].tool_calls[0].arguments == {
        "pruned": True,
        "reason": "errored bash call input older than 4 turns",
    }
    assert p.messages[2].text == "exit 1"  # the error result is kept
    assert five[1].tool_calls[0].arguments == {"command": cmd}


def test_superseded_file_ops_placeholders():
    msgs = [user("go")]
    msgs += step("r1", "read", {"path": "src/a.py"}, "old text " * 40)
    msgs += step("e1", "edit", {"path": "./src/a.py", "edits": []}, "Successfully replaced 1 block(s) in src/a.py.")
    msgs += step("r2", "read", {"path": "/w/src/a.py", "offset": 10, "limit": 5}, "y" * 400)
    msgs += step("r3", "read", {"file_path": "src/a.py", "offset": 5, "limit": 20}, "z" * 400)
    msgs += [user(f"u{i}") for i in range(4)]
    cfg = {**GATE_OFF, "name": "fo", "cwd": "/w", "min_chars_saved": 0}
    p = project(msgs, cfg)
    assert p.messages[2].text == (
        "[pruned by dynamic-context-pruning: file has since changed — /w/src/a.py was modified by a later edit (call e1)]"
    )
    assert p.messages[6].text == (
        "[pruned by dynamic-context-pruning: superseded by newer read of /w/src/a.py (call r3)]"
    )
    assert p.messages[8].text == "z" * 400  # newest op for the path
    assert p.messages[4].text.startswith("Successfully")  # nothing later superseded the edit


def test_read_range_coverage():
    assert read_range({}) == ReadRange(1, None)
    assert read_range({"offset": 10, "limit": 5}) == ReadRange(10, 14)
    assert range_covers(ReadRange(1, None), ReadRange(10, 14))
    assert range_covers(ReadRange(5, 24), ReadRange(10, 14))
    assert not range_covers(ReadRange(5, 24), ReadRange(10, None))  # unknown coverage: skip
    assert not range_covers(ReadRange(11, None), ReadRange(10, 14))


def test_agent_state_mid_loop_uses_its_threshold():
    msgs = _dup_session(379) + [asst("", ("c9", "bash", {"command": "true"})), tool("c9", "bash", "")]
    strict = {"base": "dcp-gated", "name": "strict-mid", "threshold_mid_loop": 1}
    g = project(msgs, strict).stats.gate
    assert g.agent_state == "mid_loop" and g.threshold_calls == 1 and not g.accepted
