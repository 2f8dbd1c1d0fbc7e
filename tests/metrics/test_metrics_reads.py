"""Per-sample metrics from a hand-built history (metrics.md), exact values."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.cache import count_tokens
from readbench.metrics.reads import dcp_metrics, effort_metrics, read_metrics
from readbench.metrics.scorer import final_replies


def _read(call_id, args, text, **details):
    call = ChatMessageAssistant(content="", tool_calls=[ToolCall(id=call_id, function="read", arguments=args)])
    result = ChatMessageTool(content=text, tool_call_id=call_id, function="read",
                             metadata={"readbench": {"path": args["path"], "content_sha256": "h1", **details}})
    return [call, result]


def history():
    msgs = [ChatMessageUser(content="fix it")]
    msgs += _read("c1", {"path": "a.py"}, "x" * 40, first_line=1, last_line=10, capped=True)   # blind, 10 new
    msgs += _read("c2", {"path": "a.py", "offset": 6, "limit": 10}, "y" * 40, first_line=6, last_line=15)  # 5 new
    msgs += _read("c3", {"path": "a.py", "offset": 1, "limit": 5}, "stub", stubbed=True, stub_miss=True)
    msgs += _read("c4", {"path": "b.py"}, "", blocked=True)  # B refusal: no text
    msgs.append(ChatMessageAssistant(content="", tool_calls=[ToolCall(id="c5", function="bash", arguments={"command": "pytest"})]))
    msgs.append(ChatMessageTool(content="ok", tool_call_id="c5", function="bash"))
    msgs.append(ChatMessageAssistant(content="done"))
    return msgs


def test_read_metrics_exact():
    m = read_metrics(history())
    assert m["blind_reads"] == 2.0          # c1 and c4 have neither offset nor limit
    assert m["capped_reads"] == 1.0 and m["blocked_reads"] == 1.0
    assert m["dedup_stubs"] == 1.0 and m["dedup_stub_misses"] == 1.0
    assert m["files_read"] == 2.0 and m["reads_per_file"] == 2.0
    assert m["lines_delivered"] == 20.0      # 10 + 10 (the stub and the refusal deliver none)
    assert m["unique_lines_delivered"] == 15.0
    assert m["reread_ratio"] == 0.25
    assert m["mean_lines_per_read"] == 10.0
    tokens_c2 = count_tokens("y" * 40)
    assert m["reread_tokens"] == round(tokens_c2 * 5 / 10, 3)   # half of c2's lines were re-delivered
    assert m["read_tokens"] == sum(count_tokens(t) for t in ("x" * 40, "y" * 40, "stub", ""))


def test_effort_and_dcp_metrics_exact():
    calls = [
        {"prompt_tokens": 100, "output_tokens": 5, "pruned": {"deduplicate": 0}, "footer_tokens_saved": 0,
         "prefix_break": False},
        {"prompt_tokens": 300, "output_tokens": 7, "pruned": {"deduplicate": 2, "outputBodyReplace": 1},
         "footer_tokens_saved": 410, "prefix_break": True},
    ]
    e = effort_metrics(history(), calls)
    assert e["turns"] == 6.0 and e["tool_calls"] == 5.0
    assert e["read_calls"] == 4.0 and e["bash_calls"] == 1.0 and e["edit_calls"] == 0.0
    assert e["input_tokens"] == 400.0 and e["output_tokens"] == 12.0 and e["peak_context_tokens"] == 300.0
    assert dcp_metrics(calls) == {"dcp_pruned_items": 3.0, "dcp_footer_tokens_saved": 410.0, "dcp_prefix_breaks": 1.0}


def test_final_replies_one_per_user_prompt():
    msgs = [ChatMessageUser(content="q1"), ChatMessageAssistant(content="ANSWER: 1"),
            ChatMessageUser(content="q2"), ChatMessageAssistant(content="", tool_calls=[
                ToolCall(id="t", function="read", arguments={"path": "a"})]),
            ChatMessageTool(content="x", tool_call_id="t", function="read"),
            ChatMessageAssistant(content="ANSWER: 2")]
    assert final_replies(msgs) == ["ANSWER: 1", "ANSWER: 2"]
