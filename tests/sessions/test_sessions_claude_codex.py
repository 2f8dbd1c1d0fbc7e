"""Claude Code and Codex import on hand-written fixtures following docs/specs/sessions.md §2-3:
split content blocks with an interleaved tool result, usage counted once, compaction, a
sub-agent file, 1h writes; Codex's doubled token_count events, effort changes and the older
item-only format."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser, ContentReasoning

from readbench.sessions import BilledUsage, load_file, load_sessions
from readbench.sessions.reads import read_calls

DATA = Path(__file__).parent / "data"
CLAUDE = DATA / "claude" / "s1.jsonl"


def test_claude_code_groups_split_blocks_into_one_call_with_usage_counted_once():
    main, = load_file(CLAUDE)
    assert (main.format, main.harness, main.harness_version, main.session_id) == ("claude-code", "claude-code", "2.1.39", "s1")
    assert len(main.calls) == 4  # msg_1 (three lines, a tool result between them), msg_2, msg_3, msg_4
    c0 = main.calls[0]
    # input fields from the lines, output_tokens the largest (the first lines hold a streaming placeholder of 1)
    assert c0.usage == BilledUsage(uncached_input_tokens=3, cache_read_tokens=0, cache_write_tokens=20000,
                                   output_tokens=120, cache_write_5m_tokens=0, cache_write_1h_tokens=20000)
    assert isinstance(c0.output.content[0], ContentReasoning)
    assert [(t.id, t.function) for t in c0.output.tool_calls] == [("t1", "Read"), ("t2", "Bash")]
    assert c0.ts_start_seconds == 1770890400.1  # the line just before it (a hook progress line): no request start is recorded
    assert c0.ts_first_token_seconds == 1770890402.0 and c0.ts_end_seconds == 1770890403.2
    # the API saw one assistant message and then both results, not the file's interleaving
    second = main.request(1)
    assert [type(m) for m in second] == [ChatMessageUser, ChatMessageAssistant, ChatMessageTool, ChatMessageTool]
    assert [(m.tool_call_id, m.function) for m in second[2:]] == [("t1", "Read"), ("t2", "Bash")]
    assert second[2].metadata["claude_code"]["toolUseResult"]["file"] == {
        "filePath": "/p/app.py", "numLines": 2, "startLine": 1, "totalLines": 2}


def test_claude_code_compaction_restarts_the_request_from_the_summary_and_links_the_sub_agent():
    main, = load_file(CLAUDE)
    assert [(e.kind, e.call_index) for e in main.events] == [("subagent", 2), ("compaction", 2)]
    assert main.events[0].detail == {"session_id": "ab12"} and main.events[1].detail["tokens_before"] == 20300
    last = main.request(3)
    assert [m.text for m in last] == ["This session is being continued. Summary: fixed app.py."]
    assert main.calls[3].context != main.calls[2].context
    assert main.issues.unknown_types == {"junk-we-do-not-know": 1}
    assert main.issues.warnings == [f"{CLAUDE}:18: invalid JSON (Expecting property name enclosed in double quotes, column 2)"]
    sub, = load_file(DATA / "claude" / "s1" / "subagents" / "agent-ab12.jsonl")
    assert (sub.session_id, sub.parent_session_id, len(sub.calls)) == ("ab12", "s1", 1)
    assert sub.calls[0].usage.cache_write_5m_tokens == 5000


def test_a_directory_walk_imports_the_main_session_and_its_sub_agent():
    found = list(load_sessions([DATA / "claude"]))
    assert [(s.session_id, s.parent_session_id) for s in found] == [("s1", None), ("ab12", "s1")]


def test_codex_current_format_counts_each_response_once_and_splits_cached_input():
    s, = load_file(DATA / "codex" / "rollout-current.jsonl")
    assert (s.format, s.harness_version, s.session_id) == ("codex", "0.58.0", "cx-1")
    assert len(s.calls) == 3  # the doubled token_count and the info=null one are not calls
    assert [c.usage for c in s.calls] == [
        BilledUsage(10128, 0, 0, 37, reasoning_tokens=0),
        BilledUsage(11872 - 9984, 9984, 0, 63, reasoning_tokens=40),
        BilledUsage(12100 - 11776, 11776, 0, 5, reasoning_tokens=0),
    ]
    assert [c.params for c in s.calls] == ["effort=high", "effort=high", "effort=medium"]
    assert [(e.kind, e.call_index, e.detail) for e in s.events] == [("thinking_change", 2, {"from": "high", "to": "medium"})]
    first = s.request(0)
    assert isinstance(first[0], ChatMessageSystem) and first[0].text == "You are Codex."
    assert [m.role for m in s.request(2)] == ["system", "user", "user", "assistant", "tool", "assistant", "user"]
    assert s.calls[1].output.text == "big.py imports os."


def test_codex_item_only_format_imports_as_an_unpriced_transcript():
    s, = load_file(DATA / "codex" / "rollout-legacy.jsonl")
    assert (s.format, s.session_id, s.priced) == ("codex-legacy", "cx-old", False)
    assert [c.n_messages for c in s.calls] == [1, 3]
    assert s.calls[1].output.text == "a.txt says hello"


def test_reads_of_every_harness_carry_the_range_and_the_cap_evidence():
    main, = load_file(CLAUDE)
    cc = read_calls(main)
    assert [(r.tool, r.path, r.blind, r.first_line, r.last_line, r.total_lines, r.capped, r.via_shell) for r in cc] == [
        ("Read", "/p/app.py", True, 1, 2, 2, False, False),
        # sed asked for 40 lines and printed one: the file ended there (1 line)
        ("Bash", "big.py", False, 1, 1, 1, False, True),
    ]
    codex, = load_file(DATA / "codex" / "rollout-current.jsonl")
    (r,) = read_calls(codex)
    # Codex cut the 200 asked lines at the 150 the command printed: a capped shell read
    assert (r.path, r.offset, r.limit, r.first_line, r.last_line, r.capped) == ("big.py", 1, 200, 1, 150, True)


def _codex_items_first(tmp_path: Path, usage: object | None = None) -> Path:
    """A rollout in the order real ones show (cli 0.77-0.125): a response's items stream first,
    its token_count comes when it completes, and the same count is written again after the
    next turn_context. `usage`: replaces every usage object (e.g. a redacted string)."""
    import json

    def tc(ts: str, inp: int, cached: int, out: int, total_in: int) -> dict:
        last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": 0}
        total = {"input_tokens": total_in, "cached_input_tokens": cached, "output_tokens": out}
        info = {"total_token_usage": total if usage is None else usage, "last_token_usage": last if usage is None else usage}
        return {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": info}}

    def item(ts: str, **payload: object) -> dict:
        return {"timestamp": ts, "type": "response_item", "payload": payload}

    ctx = {"timestamp": "2026-05-11T08:27:17.000Z", "type": "turn_context", "payload": {"model": "gpt-5.5", "effort": "medium"}}
    rows = [
        {"timestamp": "2026-05-11T08:27:17.000Z", "type": "session_meta", "payload": {"id": "cx-2", "cli_version": "0.125.0",
                                                                                   "base_instructions": {"text": "SYS"}}},
        item("2026-05-11T08:27:17.100Z", type="message", role="user", content=[{"type": "input_text", "text": "list"}]),
        ctx,
        {"timestamp": "2026-05-11T08:27:17.200Z", "type": "event_msg", "payload": {"type": "token_count", "info": None}},
        item("2026-05-11T08:27:21.000Z", type="reasoning", summary=[], encrypted_content="e1"),
        item("2026-05-11T08:27:22.000Z", type="function_call", name="exec_command", arguments='{"cmd": "ls"}', call_id="c1"),
        tc("2026-05-11T08:27:22.500Z", 18703, 0, 167, 18703),
        item("2026-05-11T08:27:23.000Z", type="function_call_output", call_id="c1", output="a.py"),
        ctx,
        tc("2026-05-11T08:27:23.100Z", 18703, 0, 167, 18703),  # the copy after turn_context: not a call
        item("2026-05-11T08:27:27.000Z", type="message", role="assistant", content=[{"type": "output_text", "text": "a.py"}]),
        tc("2026-05-11T08:27:27.500Z", 18911, 18304, 37, 37614),
    ]
    f = tmp_path / "rollout-items-first.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def test_codex_items_written_before_their_token_count_are_that_calls_output(tmp_path):
    s, = load_file(_codex_items_first(tmp_path))
    assert len(s.calls) == 2
    c0, c1 = s.calls
    assert [m.role for m in s.request(0)] == ["system", "user"]  # not its own reply
    assert [t.function for t in c0.output.tool_calls] == ["exec_command"]
    assert c0.usage == BilledUsage(18703, 0, 0, 167, reasoning_tokens=0)
    assert (c0.ts_start_seconds, c0.ts_first_token_seconds) == (1778488037.1, 1778488041.0)
    assert [m.role for m in s.request(1)] == ["system", "user", "assistant", "tool"]
    assert c1.output.text == "a.py"
    assert c1.usage == BilledUsage(18911 - 18304, 18304, 0, 37, reasoning_tokens=0)


def test_codex_rollout_with_redacted_usage_keeps_its_calls_unpriced(tmp_path):
    f = _codex_items_first(tmp_path, usage="[REDACTED]")
    s, = load_file(f)
    assert len(s.calls) == 2 and s.priced is False  # one call per response, the copy skipped
    assert [m.role for m in s.request(1)] == ["system", "user", "assistant", "tool"]
    assert s.issues.warnings == [f"{f}:7: token_count usage is '[REDACTED]', not token counts: the calls are imported unpriced"]
    assert s.issues.skipped["token_count:usage_not_recorded"] == 2


def line(kind: str, payload: dict, t: int) -> str:
    """One rollout line at 2026-05-11T10:00:<t>Z."""
    return json.dumps({"timestamp": f"2026-05-11T10:00:{t:02d}.000Z", "type": kind, "payload": payload})


def usage(total: int, inp: int, cached: int) -> dict:
    """A token_count payload: cumulative input `total`, this call's `inp` (of which `cached`)."""
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": 7}
    return {"type": "token_count", "info": {"total_token_usage": {"input_tokens": total}, "last_token_usage": last}}


def test_codex_rollouts_that_write_a_response_before_its_token_count(tmp_path):
    # the order of real rollouts (Codex CLI 0.77-0.125): the response's items, then its usage, then the tool output
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1",
            "arguments": json.dumps({"cmd": "sed -n '1,3p' a.py"})}
    lines = [line("session_meta", {"id": "cx", "cwd": "/r", "cli_version": "0.125.0"}, 0),
             line("turn_context", {"model": "gpt-5.3-codex", "effort": "medium"}, 0),
             line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, 1),
             line("event_msg", {"type": "token_count", "info": None}, 1),
             line("response_item", {"type": "reasoning", "summary": []}, 2),
             line("response_item", call, 2),
             line("event_msg", usage(100, 100, 0), 3),
             line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a\nb\nc\n"}, 3),
             line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}, 4),
             line("event_msg", usage(220, 120, 100), 5),
             line("event_msg", usage(220, 120, 100), 5)]  # written twice
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    assert len(s.calls) == 2
    assert [m.text for m in s.request(0)] == ["go"]  # the request holds what precedes the response
    assert [t.function for t in s.calls[0].output.tool_calls] == ["exec_command"] and s.calls[1].output.text == "done"
    assert [m.role for m in s.request(1)] == ["user", "assistant", "tool"]
    assert s.calls[1].usage.cache_read_tokens == 100
    (r,) = read_calls(s)
    assert (r.call_index, r.first_line, r.last_line, r.total_lines) == (0, 1, 3, None)


def test_codex_0144_writes_tool_outputs_before_the_token_count_of_the_response_that_called_them(tmp_path):
    # the order of a real Codex CLI 0.144.1 rollout: reasoning, the tool call, the tool's output,
    # then the token_count of the response that made the call (billed: the request before it)
    lines = [line("session_meta", {"id": "cx", "cwd": "/r", "cli_version": "0.144.1"}, 0),
             line("turn_context", {"model": "gpt-5.5", "effort": "medium"}, 0),
             line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, 1),
             line("response_item", {"type": "reasoning", "summary": []}, 2),
             line("response_item", {"type": "custom_tool_call", "name": "exec", "call_id": "c1", "input": "ls"}, 3),
             line("response_item", {"type": "custom_tool_call_output", "call_id": "c1", "output": "a.py"}, 13),
             line("event_msg", usage(100, 100, 0), 13),
             line("response_item", {"type": "reasoning", "summary": []}, 15),
             line("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c2",
                                    "arguments": json.dumps({"cmd": "cat a.py"})}, 16),
             line("response_item", {"type": "function_call_output", "call_id": "c2", "output": "x = 1\n"}, 17),
             line("event_msg", usage(230, 130, 100), 17),
             line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}, 20),
             line("event_msg", usage(370, 140, 128), 21)]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    assert len(s.calls) == 3
    assert [m.role for m in s.request(0)] == ["user"]  # not the tool output written before its usage
    assert [m.role for m in s.request(1)] == ["user", "assistant", "tool"]
    assert [m.role for m in s.request(2)] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [t.function for t in s.calls[0].output.tool_calls] == ["exec"]
    assert [t.function for t in s.calls[1].output.tool_calls] == ["exec_command"] and s.calls[2].output.text == "done"
    assert [c.usage.input_tokens for c in s.calls] == [100, 130, 140]
    t0 = 1778493600.0  # 2026-05-11T10:00:00Z
    c0 = s.calls[0]  # starts at the user message, ends at its last output (the tool ran 10 s after)
    assert (c0.ts_start_seconds - t0, c0.ts_first_token_seconds - t0, c0.ts_end_seconds - t0) == (1.0, 2.0, 3.0)
    assert (s.calls[1].ts_start_seconds - t0, s.calls[1].ts_end_seconds - t0) == (13.0, 16.0)


def _rollout(tmp_path: Path, rows: list[tuple[str, dict]]) -> Path:
    path = tmp_path / "rollout.jsonl"
    head = [("session_meta", {"id": "cx", "cli_version": "0.144.1"}), ("turn_context", {"model": "gpt-5.4"})]
    path.write_text("\n".join(line(k, v, i) for i, (k, v) in enumerate(head + rows)) + "\n")
    return path


def _user(t: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}


def _fc(c: str) -> dict:
    return {"type": "function_call", "name": "exec_command", "call_id": c, "arguments": "{}"}


def _fco(c: str) -> dict:
    return {"type": "function_call_output", "call_id": c, "output": "out"}


def test_codex_0144_a_compaction_between_a_response_and_its_usage_shifts_nothing(tmp_path):
    # the response that called c1 was sent before the compaction; the compaction's own request
    # has no recorded output; every later bill stays with its own request
    done = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
    rows = [("response_item", _user("go")), ("response_item", _fc("c1")), ("response_item", _fco("c1")),
            ("compacted", {"replacement_history": [_user("go"), _user("summary")]}), ("event_msg", usage(10, 10, 0)),
            ("event_msg", usage(15, 5, 0)),
            ("response_item", _fc("c2")), ("response_item", _fco("c2")), ("event_msg", usage(35, 20, 0)),
            ("response_item", done), ("event_msg", usage(65, 30, 0))]
    (s,) = load_file(_rollout(tmp_path, rows))
    got = [(c.context, c.n_messages, c.usage.input_tokens, [t.id for t in (c.output.tool_calls or [])] if c.output else None)
           for c in s.calls]
    assert got == [(0, 1, 10, ["c1"]), (1, 2, 5, None), (1, 2, 20, ["c2"]), (1, 4, 30, [])]
    assert [m.text for m in s.request(0)] == ["go"]


def test_codex_0144_parallel_tool_outputs_written_while_the_response_streams_keep_its_request(tmp_path):
    rows = [("response_item", _user("go")), ("response_item", _fc("c1")), ("response_item", _fco("c1")),
            ("response_item", _fc("c2")), ("response_item", _fco("c2")), ("event_msg", usage(10, 10, 0))]
    (s,) = load_file(_rollout(tmp_path, rows))
    assert [(c.n_messages, c.usage.input_tokens) for c in s.calls] == [(1, 10)]


def test_codex_review_mode_is_its_own_conversation_and_the_threads_repeated_count_is_not_billed_again(tmp_path):
    # cli 0.77 `/review` (issue 22): the review's counter restarts from zero; on exit Codex writes the
    # thread's last token_count again (same totals) before the thread's next call
    user = lambda text, t: line("response_item", {"type": "message", "role": "user",  # noqa: E731
                                                  "content": [{"type": "input_text", "text": text}]}, t)
    answer = lambda text, t: line("response_item", {"type": "message", "role": "assistant",  # noqa: E731
                                                    "content": [{"type": "output_text", "text": text}]}, t)
    lines = [line("session_meta", {"id": "cx", "cwd": "/r", "cli_version": "0.77.0",
                                   "base_instructions": {"text": "You are Codex."}}, 0),
             line("turn_context", {"model": "gpt-5.2-codex", "effort": "medium"}, 0),
             user("open a PR", 1), answer("done: PR 1", 2),
             line("event_msg", usage(5000, 5000, 4096), 2),
             line("event_msg", {"type": "entered_review_mode", "target": {"type": "baseBranch", "branch": "main"}}, 3),
             line("event_msg", {"type": "user_message", "message": "Review the code changes against main."}, 3),
             line("event_msg", {"type": "token_count", "info": None}, 3),
             line("event_msg", usage(300, 300, 0), 4),
             line("event_msg", usage(300, 300, 0), 4),  # written twice
             line("event_msg", usage(800, 500, 256), 5),
             user("<user_action>review of main: 1 finding</user_action>", 6),
             line("event_msg", {"type": "exited_review_mode", "review_output": {"findings": []}}, 6),
             answer("One finding: the error shape.", 6),
             user("fix it", 7),
             line("turn_context", {"model": "gpt-5.2-codex", "effort": "medium"}, 7),
             line("event_msg", usage(5000, 5000, 4096), 7),  # the thread's last count again: not a call
             answer("fixed", 8),
             line("event_msg", usage(10700, 5700, 4992), 8)]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    assert [c.usage.input_tokens for c in s.calls] == [5000, 300, 500, 5700]
    # the review's calls send the system prompt only (their prompt is not recorded): a context of their own
    assert {s.calls[1].context, s.calls[2].context} == {s.calls[1].context} != s.calls[0].context
    assert [m.text for m in s.request(1)] == ["You are Codex."]
    # the thread resumes with everything recorded since, the review's outcome included
    assert [m.text for m in s.request(3)] == ["You are Codex.", "open a PR", "done: PR 1",
                                             "<user_action>review of main: 1 finding</user_action>",
                                             "One finding: the error shape.", "fix it"]
