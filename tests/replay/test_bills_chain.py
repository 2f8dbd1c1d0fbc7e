"""Issue 22 item 3: the requests rebuilt from a Claude Code transcript hold every message the
model received, in two layouts of real files (sessions.md §7): hook `progress` lines written late
and chained from an earlier line (Claude Code 2.1.78-2.1.86), and parallel tool calls whose results
hang under their own tool_use lines."""

from __future__ import annotations

from cc_sessions import CCFile, usage
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from readbench.sessions import load_file

SID = "c4a1e000-0000-4000-8000-000000000003"


def _shape(messages) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for m in messages:
        if isinstance(m, ChatMessageTool):
            out.append(("tool", m.tool_call_id))
        elif isinstance(m, ChatMessageAssistant):
            out.append(("assistant", tuple(t.id for t in m.tool_calls or ()) or m.text))
        elif isinstance(m, ChatMessageUser):
            out.append(("user", m.text))
    return out


def _transcript(tmp_path):
    f = CCFile(SID, version="2.1.81")
    u = usage(3, 0, 4000, 10)
    f.user("first prompt")
    a1 = f.tool("msg_c1", "req_c1", "toolu_1", "Read", {"file_path": "/p/a"}, u)
    f.result("toolu_1", "alpha")
    f.tool("msg_c1", "req_c1", "toolu_2", "Read", {"file_path": "/p/b"}, u)  # the same response's second block
    f.result("toolu_2", "beta")
    f.text("msg_c2", "req_c2", "done", u)
    # the turn's hook lines, written after it, chained from its first tool_use line
    f.progress("PreToolUse:Read", parent=a1, tool_use_id="toolu_1")
    f.progress("PostToolUse:Read", tool_use_id="toolu_1")
    f.progress("PostToolUse:Read", tool_use_id="toolu_2")
    f.user("second prompt")  # hangs under the last progress line
    f.text("msg_c3", "req_c3", "ok", u)
    f.user("third prompt")
    a5 = f.tool("msg_c4", "req_c4", "toolu_3", "Read", {"file_path": "/p/c"}, u)
    a6 = f.tool("msg_c4", "req_c4", "toolu_4", "Read", {"file_path": "/p/d"}, u)
    f.result("toolu_4", "delta", parent=a6)
    r3 = f.result("toolu_3", "gamma", parent=a5)  # parallel: under its own tool_use line
    f.text("msg_c5", "req_c5", "both read", u, parent=r3)
    (s,) = load_file(f.write(tmp_path / f"{SID}.jsonl"))
    return s


def test_requests_keep_the_messages_a_late_progress_chain_skips(tmp_path):
    s = _transcript(tmp_path)
    assert [c.billing_id for c in s.calls] == [f"msg_c{k}:req_c{k}" for k in range(1, 6)]
    turn1 = [("user", "first prompt"), ("assistant", ("toolu_1", "toolu_2")), ("tool", "toolu_1"),
             ("tool", "toolu_2")]
    assert _shape(s.request(0)) == [("user", "first prompt")]
    assert _shape(s.request(1)) == turn1
    # without the fix the chain ran second prompt -> progress lines -> the first tool_use line,
    # dropping both results and the reply "done"
    assert _shape(s.request(2)) == turn1 + [("assistant", "done"), ("user", "second prompt")]
    assert len({c.context for c in s.calls}) == 1  # every request extends the one before


def test_requests_keep_every_result_of_parallel_tool_calls(tmp_path):
    s = _transcript(tmp_path)
    head = [("user", "first prompt"), ("assistant", ("toolu_1", "toolu_2")), ("tool", "toolu_1"), ("tool", "toolu_2"),
            ("assistant", "done"), ("user", "second prompt"), ("assistant", "ok"), ("user", "third prompt")]
    assert _shape(s.request(3)) == head
    # the path from the last reply runs gamma -> toolu_3's line -> the prompt: toolu_4's line and
    # its result hang off it and are kept, results in the order they were written
    assert _shape(s.request(4)) == head + [("assistant", ("toolu_3", "toolu_4")), ("tool", "toolu_4"), ("tool", "toolu_3")]
