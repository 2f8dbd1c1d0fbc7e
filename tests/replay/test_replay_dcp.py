"""Call-by-call replay of a history through DCP configurations (dcp.md §2.5, §7.5)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.dcp import call_boundaries, pi_context_usage, replay_projections
from readbench.dcp._cli import dcp_group
from readbench.sessions import load_messages

DATA = Path(__file__).parents[1] / "sessions" / "data" / "pi_session_v3.jsonl"


def _read(cid: str, path: str, out: str) -> list:
    call = ToolCall(id=cid, function="read", arguments={"path": path})
    return [ChatMessageAssistant(content="", tool_calls=[call]), ChatMessageTool(content=out, tool_call_id=cid, function="read")]


def _history() -> list:
    msgs = [ChatMessageUser(content="u1"), *_read("c1", "a.py", "x" * 1300), ChatMessageAssistant(content="done")]
    for i in range(2, 11):
        msgs += [ChatMessageUser(content=f"u{i}"), ChatMessageAssistant(content="ok")]
    msgs += [ChatMessageUser(content="u11"), *_read("c2", "b.py", "small"), ChatMessageAssistant(content="done")]
    return msgs


def test_turn_counter_breaks_the_prefix_once_per_user_turn():
    msgs = _history()
    calls = replay_projections(msgs, "pi-dcp")
    assert [c.boundary for c in calls] == call_boundaries(msgs)
    breaks = [(c.boundary, c.prefix_break) for c in calls if c.prefix_break is not None]
    # u_i sits at 2i: c1 (position 2) is first pruned at the call after u9 (turnAge 8), re-rendered after
    # u10 (Turn 9) and u11 (Turn 10); the calls inside a turn are append-only
    assert breaks == [(19, 2), (21, 2), (23, 2)]
    stable = replay_projections(msgs, "pi-dcp-stable")
    assert [(c.boundary, c.prefix_break) for c in stable if c.prefix_break is not None] == [(19, 2)]


def test_pi_context_usage_uses_last_provider_usage_plus_estimate():
    msgs = load_messages(DATA)
    # before the final assistant: usage 2829 of call_2's assistant + ceil(31 / 4) for its result
    assert pi_context_usage(msgs[:5], 10000).tokens == 2829 + 8
    assert pi_context_usage(msgs[:1], 10000).tokens == 3  # "Read a.py": no usage yet, ceil(9/4)
    assert pi_context_usage(msgs[:5], 10000).ratio == 0.2837


def test_pi_context_usage_anchors_on_the_last_reported_reply():
    call = ToolCall(id="c1", function="read", arguments={"path": "a.py"})
    msgs = [ChatMessageSystem(content="s" * 400), ChatMessageUser(content="Read a.py"),
            ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content="x" * 101, tool_call_id="c1", function="read"), ChatMessageAssistant(content="done")]
    # the system prompt is never counted; "Read a.py" ceil(9/4) = 3; the call "read" + '{"path":"a.py"}'
    # ceil(19/4) = 5; the result ceil(101/4) = 26; "done" 1
    assert pi_context_usage(msgs[:4], 1000, {}).tokens == 3 + 5 + 26
    assert pi_context_usage(msgs[:4], 1000, {2: 700}).tokens == 700 + 26
    assert pi_context_usage(msgs, 1000, {2: 700}).tokens == 700 + 26 + 1
    assert pi_context_usage(msgs, 1000, {2: 700, 4: 900}).tokens == 900
    assert pi_context_usage(msgs[:4], 1000, {3: 5}).tokens == 3 + 5 + 26  # only an assistant reply anchors
    assert pi_context_usage(msgs[:4], 1000, {2: 700}).ratio == 0.726


def test_cli_replay_reports_totals():
    res = CliRunner().invoke(dcp_group, ["replay", str(DATA), "--config", "pi-dcp", "--context-window", "200000"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "calls=3 dcp_pruned_items=0 dcp_footer_tokens_saved=0 dcp_prefix_breaks=0"


def test_sister_targets_change_once_while_pi_dcp_rewrites_them():
    msgs = [ChatMessageUser(content="u1")]
    msgs += _read("c1", "a.py", "y" * 2000)
    msgs += _read("c2", "a.py", "y" * 2000)
    msgs.append(ChatMessageAssistant(content="done"))
    for i in range(2, 14):
        msgs += [ChatMessageUser(content=f"u{i}"), ChatMessageAssistant(content="ok")]

    def versions(calls) -> dict[int, list[str]]:
        seen: dict[int, list[str]] = {}
        for c in calls:
            for i in c.projection.stats.changed_indices:
                text = c.projection.messages[i].text
                if not seen.get(i) or seen[i][-1] != text:
                    seen.setdefault(i, []).append(text)
        return seen

    gated = replay_projections(msgs, {"base": "dcp-gated", "name": "gate-off", "gate_mode": "off"})
    assert versions(gated) == {
        2: ["[pruned by dynamic-context-pruning: duplicate read call result; see newest occurrence (call c2)]"]
    }
    assert [c.boundary for c in gated if c.prefix_break is not None] == [13]  # once: after u5
    pi = replay_projections(msgs, "pi-dcp")
    v = versions(pi)
    assert v[2] == ["[DCP: Exact duplicate of a later tool call. Pruned to save tokens.]"]
    assert [t.split("(Turn ")[1][:2] for t in v[4]] == ["8)", "9)", "10", "11", "12"]
