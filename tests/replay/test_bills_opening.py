"""Issue 22: the tool calls of a session's first user turn are a call kind of their own
(`opening`), so that their break rate does not stand for the later tool calls a second half holds.

Found on the real Claude Code sessions of docs/calibration.md §5: in the first halves, tool calls 1-3
broke 10 times in 412 (2.4 %), tool calls after the 6th 6 times in 3,111 (0.19 %); the pooled tool
rate, applied to the second halves' 3,986 tool calls (10 broke), expected 21."""

from __future__ import annotations

from readbench.cache.prices import canonical_model
from readbench.replay.calibrate import break_counts
from readbench.replay.records import CALL_KINDS, Break, kind_rate
from readbench.replay.requests import RequestSet
from readbench.sessions import load_file


def test_tool_calls_before_the_second_user_turn_are_the_opening(tmp_path, pi_session):
    b = pi_session()
    b.user("a").assistant("x", 0.0, (3, 0, 2000, 5), calls=(("c1", "read", {"path": "a"}),)).result("c1", "text")
    b.assistant("y", 3.0, (3, 2000, 10, 5), calls=(("c2", "read", {"path": "b"}),)).result("c2", "text")
    b.assistant("z", 6.0, (3, 2010, 10, 5))
    b.user("b").assistant("w", 9.0, (3, 2020, 10, 5), calls=(("c3", "read", {"path": "c"}),)).result("c3", "text")
    b.assistant("v", 12.0, (3, 2030, 10, 5))
    (p,) = load_file(b.write(tmp_path / "p.jsonl"))
    rs = RequestSet(p, "anthropic-legacy", [canonical_model(c.model) for c in p.calls])
    assert [rs.call_kind(i) for i in range(len(p.calls))] == ["prompt", "opening", "opening", "prompt", "tool"]
    # a break at an opening call counts for the opening, not for the later tool calls
    assert break_counts(p, rs, (Break(1, 0, 0),), range(len(p.calls))) == {
        "prompt": (0, 2), "user_turn": (0, 2), "opening": (1, 2), "tool": (0, 1)}
    # the opening is a kind of its own: no coarser kind lends it a rate, nor takes its rate
    assert CALL_KINDS["opening"] is None
    assert kind_rate({"opening": 0.5}, "tool") == 0.0
