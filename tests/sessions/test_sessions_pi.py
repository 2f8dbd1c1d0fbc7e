"""pi session import (docs/specs/sessions.md §1, pi-tools.md §6) on hand-written files:
version 3 with a branch, legacy (no version) with compaction, aborted replies and `!cmd`, and the
inverse export of message objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ContentReasoning, ContentText

from readbench.sessions import BilledUsage, load_file, load_messages
from readbench.sessions.pi_messages import (
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    export_session,
    to_pi_message,
)

DATA = Path(__file__).parent / "data" / "pi_session_v3.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, rows: list[dict | str], name: str = "s.jsonl") -> Path:
    f = tmp_path / name
    f.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return f


def test_v3_import_follows_the_active_branch():
    (s,) = load_file(DATA)
    assert (s.format, s.harness, s.harness_version) == ("pi", "pi", "session v3")
    # 3 assistant messages on the branch; the abandoned reply 5a5a5a5a is counted, not a call
    assert [c.output.text for c in s.calls] == ["Reading.", "", "The command failed with exit code 3."]
    assert s.issues.skipped == {"custom": 1, "label": 1, "session_info": 1, "assistant:off_branch": 1}
    assert [m.role for m in s.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [c.n_messages for c in s.calls] == [1, 3, 5]
    assert [e.kind for e in s.events] == ["model_change", "thinking_change", "branch"]
    assert s.events[2].call_index == 1  # the branch switch happened before the second call


def test_v3_import_maps_calls_results_errors_and_usage():
    (s,) = load_file(DATA)
    m = s.messages
    assert isinstance(m[0], ChatMessageUser) and m[0].text == "Read a.py"
    a = m[1]
    assert isinstance(a, ChatMessageAssistant)
    assert [(c.id, c.function, c.arguments) for c in a.tool_calls] == [("call_1", "read", {"path": "a.py", "limit": 2})]
    assert isinstance(a.content[0], ContentReasoning) and a.content[0].signature == "sig-1"
    assert isinstance(a.content[1], ContentText) and a.content[1].text == "Reading."
    assert a.metadata["pi"]["entry"] == {"id": "17a519b7", "parentId": "2701d53b", "timestamp": "2026-01-01T10:00:01.000Z"}
    ok, err = m[2], m[4]
    assert isinstance(ok, ChatMessageTool) and (ok.tool_call_id, ok.function, ok.error) == ("call_1", "read", None)
    assert err.error is not None and err.error.message == "hi\n\n\nCommand exited with code 3"
    c0 = s.calls[0]
    assert c0.usage == BilledUsage(uncached_input_tokens=1359, cache_read_tokens=0, cache_write_tokens=1359, output_tokens=11)
    assert (c0.model, c0.provider, c0.cost_usd, c0.params, c0.stop_reason) == ("claude-x", "anthropic", 0.0092, "thinking=off", "toolUse")
    assert c0.ts_start_seconds == 1767261601.0  # message.timestamp (ms): the request start
    assert c0.ts_end_seconds == 1767261601.0  # the entry's ISO timestamp


def test_round_trip_of_message_objects():
    originals = {e["id"]: e["message"] for e in _lines() if e.get("type") == "message"}
    (s,) = load_file(DATA)
    for msg in s.messages:
        assert to_pi_message(msg) == originals[msg.metadata["pi"]["entry"]["id"]]


def test_export_of_plain_inspect_messages_chains_new_ids():
    text = export_session([ChatMessageUser(content="hi"), ChatMessageAssistant(content="hello")])
    entries = [json.loads(x) for x in text.splitlines()]
    assert entries[0]["version"] == 3
    assert [(e["id"], e["parentId"]) for e in entries[1:]] == [("m0001", None), ("m0002", "m0001")]
    assert entries[2]["message"] == {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}


def test_load_messages_accepts_a_json_list_of_inspect_messages(tmp_path):
    msgs = load_file(DATA)[0].messages
    f = tmp_path / "msgs.json"
    f.write_text(json.dumps([m.model_dump(mode="json") for m in msgs]))
    assert [m.model_dump() for m in load_messages(f)] == [m.model_dump() for m in msgs]
    assert [m.role for m in load_messages(DATA)] == [m.role for m in msgs]


def _usage(inp: int, read: int, write: int, out: int) -> dict:
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write, "totalTokens": inp + read + write + out,
            "cost": {"total": 0.5}}


def _asst(text: str, ms: int, stop: str = "stop", calls: tuple = (), model: str = "claude-sonnet-4-5") -> dict:
    content = [{"type": "text", "text": text}] + [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": "a"}} for c in calls]
    return {"type": "message", "timestamp": "2025-11-20T10:00:00.000Z", "message": {
        "role": "assistant", "content": content, "provider": "anthropic", "model": model,
        "usage": _usage(3, 100, 10, 5), "stopReason": stop, "timestamp": ms}}


def _user(text: str) -> dict:
    return {"type": "message", "timestamp": "2025-11-20T10:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}}


def _result(call_id: str, text: str) -> dict:
    return {"type": "message", "timestamp": "2025-11-20T10:00:00.000Z", "message": {
        "role": "toolResult", "toolCallId": call_id, "toolName": "read", "content": [{"type": "text", "text": text}],
        "isError": False, "timestamp": 1}}


LEGACY_HEADER = {"type": "session", "id": "legacy-1", "timestamp": "2025-11-20T10:00:00.000Z", "cwd": "/p",
                 "provider": "anthropic", "modelId": "claude-sonnet-4-5", "thinkingLevel": "off"}


def test_legacy_aborted_reply_and_its_results_leave_later_prompts(tmp_path):
    f = _write(tmp_path, [
        LEGACY_HEADER,                                   # line index 0
        _user("go"),                                     # 1
        _asst("try", 1000, stop="aborted", calls=("c1",)),  # 2: aborted, never sent again
        _result("c1", "partial"),                        # 3: its result is dropped too
        _user("again"),                                  # 4
        _asst("ok", 2000),                               # 5
        {"type": "message", "timestamp": "2025-11-20T10:00:03.000Z", "message": {
            "role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 2, "cancelled": False,
            "truncated": False, "timestamp": 3}},        # 6: the user's !ls, sent as user text
        _asst("done", 4000),                             # 7
    ])
    (s,) = load_file(f)
    assert s.harness_version == "legacy (no session version)"
    assert [c.output.text for c in s.calls] == ["try", "ok", "done"]
    assert [[m.text for m in s.request(i)] for i in range(3)] == [
        ["go"],
        ["go", "again"],
        ["go", "again", "ok", "Ran `ls`\n```\na.py\n```\n\nCommand exited with code 2"],
    ]
    assert s.issues.skipped == {"assistant:aborted": 1, "toolResult:of_dropped_reply": 1}
    assert len(s.contexts) == 1  # the aborted reply was never appended: one growing context


def test_legacy_compaction_rebuilds_from_the_summary_and_the_kept_lines(tmp_path):
    f = _write(tmp_path, [
        LEGACY_HEADER,        # 0
        _user("one"),         # 1
        _asst("a1", 1000),    # 2
        _user("two"),         # 3
        _asst("a2", 2000),    # 4
        {"type": "compaction", "timestamp": "2025-11-20T10:00:05.000Z", "summary": "S", "firstKeptEntryIndex": 3,
         "tokensBefore": 1234},  # 5: keep from line index 3 ("two") on
        _user("three"),       # 6
        _asst("a3", 6000),    # 7
    ])
    (s,) = load_file(f)
    summary = COMPACTION_SUMMARY_PREFIX + "S" + COMPACTION_SUMMARY_SUFFIX
    assert [m.text for m in s.request(2)] == [summary, "two", "a2", "three"]
    assert s.calls[2].context != s.calls[1].context  # a compaction starts a new context
    (ev,) = [e for e in s.events if e.kind == "compaction"]
    assert (ev.call_index, ev.detail["tokens_before"]) == (2, 1234)


def test_thinking_level_sets_the_cached_params_and_is_an_event(tmp_path):
    f = _write(tmp_path, [
        LEGACY_HEADER, _user("q"), _asst("a", 1000),
        {"type": "thinking_level_change", "timestamp": "2025-11-20T10:00:02.000Z", "thinkingLevel": "high"},
        _user("q2"), _asst("b", 3000),
        {"type": "thinking_level_change", "timestamp": "2025-11-20T10:00:04.000Z", "thinkingLevel": "low"},
        _user("q3"), _asst("c", 5000),
    ])
    (s,) = load_file(f)
    assert [c.params for c in s.calls] == ["thinking=off", "thinking=on", "thinking=on"]
    assert [(e.kind, e.detail["to"], e.call_index) for e in s.events] == [("thinking_change", "high", 1), ("thinking_change", "low", 2)]


def test_bad_lines_and_unknown_roles_are_counted_warnings_naming_file_and_line(tmp_path):
    f = _write(tmp_path, [
        LEGACY_HEADER,
        _user("q"),
        "{not json",
        {"type": "message", "message": {"role": "developer", "content": "x"}},
        {"type": "message", "message": "a string"},
        {"type": "message", "message": {"role": "user", "content": 42}},
        {"type": "mystery"},
        _asst("a", 1000),
    ])
    (s,) = load_file(f)
    assert [c.n_messages for c in s.calls] == [1]  # only the good user prompt was sent
    assert s.issues.malformed_lines == 4
    w = s.issues.warnings
    assert w[0] == f"{f}:3: invalid JSON (Expecting property name enclosed in double quotes, column 2)"
    assert w[1].startswith(f"{f}:4: unknown message role 'developer'")
    assert w[2] == f"{f}:5: message must be an object, got str"
    assert w[3] == f"{f}:6: content must be a string or a list of blocks, got int"
    assert s.issues.unknown_types == {"mystery": 1}


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"type": "session", "version": 7, "id": "s"}], "pi session version 7 is not supported"),
        ([_user("x")], "not a recorded session of any known format (tried: pi, claude-code, codex, codex-legacy, inspect)"),
    ],
)
def test_unreadable_files_raise_errors_naming_the_file(tmp_path, rows, message):
    f = _write(tmp_path, rows)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_file(f)
    assert str(f) in str(info.value)


def test_dcp_project_names_the_entries_it_could_not_take(tmp_path):
    from click.testing import CliRunner

    from readbench.dcp._cli import dcp_group

    f = _write(tmp_path, [LEGACY_HEADER, {"type": "message", "message": {"role": "developer", "content": "x"}},
                          {"type": "message", "message": "oops"}, _user("hi")])
    res = CliRunner().invoke(dcp_group, ["project", str(f), "--config", "pi-dcp"])
    assert res.exit_code == 0, res.output
    assert f"warning: {f}:2: unknown message role 'developer'" in res.stderr
    assert f"warning: {f}:3: message must be an object, got str" in res.stderr
    assert "[0] user: hi" in res.stdout


def test_two_entries_on_one_line_are_both_read_and_the_line_is_named(tmp_path):
    # Seen in two real pi sessions: an assistant message and the compaction after it written
    # back to back with no newline. Both entries count, in order (the compaction's
    # firstKeptEntryIndex counts entries, not lines).
    rows = [LEGACY_HEADER, _user("one"), _asst("a1", 1000), _user("two")]
    joined = json.dumps(_asst("a2", 2000)) + json.dumps(
        {"type": "compaction", "timestamp": "2025-11-20T10:00:05.000Z", "summary": "S", "firstKeptEntryIndex": 3,
         "tokensBefore": 99})
    f = _write(tmp_path, [*rows, joined, _user("three"), _asst("a3", 6000)])
    (s,) = load_file(f)
    assert [c.output.text for c in s.calls] == ["a1", "a2", "a3"]
    summary = COMPACTION_SUMMARY_PREFIX + "S" + COMPACTION_SUMMARY_SUFFIX
    assert [m.text for m in s.request(2)] == [summary, "two", "a2", "three"]
    assert s.issues.warnings == [f"{f}:5: 2 JSON objects on one line (a missing newline): each read as an entry"]
    assert s.issues.malformed_lines == 1


def test_pi_026_to_030_sends_an_aborted_reply_that_streamed_content(tmp_path):
    # Headers without provider/modelId/thinkingLevel are pi 0.26-0.30: its provider sends an
    # aborted reply with a non-empty block and answers its unanswered tool call; an empty one is
    # still left out (the real bills show both: readbench.sessions.pi's docstring)
    header = {"type": "session", "id": "new-legacy", "timestamp": "2025-12-24T00:00:00.000Z", "cwd": "/p"}
    f = _write(tmp_path, [
        header, _user("go"),
        _asst("", 1000, stop="aborted"),                          # empty: left out
        _user("again"),
        _asst("let me read", 2000, stop="aborted", calls=("c1",)),  # streamed text and a call: sent
        _user("go on"),
        _asst("done", 3000),
    ])
    (s,) = load_file(f)
    last = s.request(2)
    assert [(type(m).__name__, m.text) for m in last] == [
        ("ChatMessageUser", "go"), ("ChatMessageUser", "again"), ("ChatMessageAssistant", "let me read"),
        ("ChatMessageTool", "No result provided"), ("ChatMessageUser", "go on")]
    assert last[3].tool_call_id == "c1" and last[3].error is not None
    assert s.issues.skipped == {"assistant:aborted": 1, "assistant:aborted:sent": 1}


def test_a_line_nested_past_the_parsers_limit_is_a_named_malformed_line(tmp_path):
    # issue 27 probe: a line of 100,000 nested brackets raised RecursionError out of `readbench replay`
    deep = '{"type":"message","message":' + "[" * 100_000 + "]" * 100_000 + "}"
    f = _write(tmp_path, [LEGACY_HEADER, _user("q"), deep, _asst("a", 1000)])
    (s,) = load_file(f)
    assert [c.n_messages for c in s.calls] == [1]
    assert s.issues.malformed_lines == 1
    assert s.issues.warnings == [f"{f}:3: invalid JSON (nested deeper than the JSON parser's recursion limit)"]


def test_nan_or_negative_usage_is_a_named_unpriced_call(tmp_path):
    # issue 27 probe: NaN or negative token counts made a call silently unbilled (no note said why)
    nan, neg = _asst("a", 1000), _asst("b", 2000)
    nan["message"]["usage"]["input"] = float("nan")
    neg["message"]["usage"]["cacheRead"] = -500
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [LEGACY_HEADER, _user("q"), nan, _user("q2"), neg, _user("q3"),
                                                     _asst("c", 3000)]) + "\n")
    (s,) = load_file(f)
    assert [c.usage is None for c in s.calls] == [True, True, False]
    assert s.issues.warnings == [
        f"{f}:3: usage is not a bill (cannot convert float NaN to integer): the call is left unpriced",
        f"{f}:5: usage is not a bill (BilledUsage.cache_read_tokens must be an int >= 0, got -500): the call is "
        "left unpriced",
    ]


def _legacy_line(obj: dict) -> str:
    return json.dumps(obj) + "\n"


def _legacy_pi(header: dict, turns: list[tuple[str, int, int]]) -> str:
    """A legacy pi file: per turn (tool call id, request start ms, uncached input tokens) a user
    prompt, an assistant reply with one read call and its result."""
    lines = [_legacy_line({"type": "session", "timestamp": "2025-12-09T00:00:00.000Z", "cwd": "/repo",
                           "provider": "anthropic", "modelId": "claude-opus-4-5", "thinkingLevel": "off", **header})]
    for call_id, start, tokens in turns:
        lines.append(_legacy_line({"type": "message", "timestamp": "2025-12-08T22:41:05.306Z", "message": {
            "role": "user", "content": [{"type": "text", "text": f"look at {call_id}"}], "timestamp": start - 5}}))
        lines.append(_legacy_line({"type": "message", "timestamp": "2025-12-08T22:41:09.000Z", "message": {
            "role": "assistant", "content": [{"type": "toolCall", "id": call_id, "name": "read",
                                              "arguments": {"path": "a.py"}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-5",
            "usage": {"input": tokens, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 10,
                      "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0, "cacheWrite": 0, "total": 0.0}},
            "stopReason": "toolUse", "timestamp": start}}))
        lines.append(_legacy_line({"type": "message", "timestamp": "2025-12-08T22:41:10.000Z", "message": {
            "role": "toolResult", "toolCallId": call_id, "toolName": "read",
            "content": [{"type": "text", "text": "x = 1"}], "isError": False, "timestamp": start + 10}}))
    return "".join(lines)


def test_legacy_branch_file_bills_the_calls_it_copies_once(tmp_path: Path) -> None:
    """A legacy branch file (`branchedFrom`, sessions.md §1) starts with its parent's entries as
    they are: beside the parent, those calls keep their place in the branch's requests but are
    billed in the parent's file only; the branch's own call keeps its bill."""
    from readbench.sessions import load_sessions

    parent_id, branch_id = "d97339c6-6c10-4827-846b-9ff1d9c3dc37", "ffae836b-9420-4060-ac13-7745215f90ff"
    parent = tmp_path / f"2025-12-09T00-52-54-397Z_{parent_id}.jsonl"
    parent.write_text(_legacy_pi({"id": parent_id}, [("toolu_1", 1765233665294, 2775), ("toolu_2", 1765233669399, 40)]))
    branch = tmp_path / f"2025-12-09T00-53-29-825Z_{branch_id}.jsonl"
    branch.write_text(_legacy_pi(
        {"id": branch_id, "branchedFrom": f"/Users/u/.pi/agent/sessions/--repo--/{parent.name}"},
        [("toolu_1", 1765233665294, 2775), ("toolu_2", 1765233669399, 40), ("toolu_3", 1765233700000, 77)]))
    sessions = {s.session_id: s for s in load_sessions([tmp_path])}
    assert [c.usage.input_tokens if c.usage else None for c in sessions[parent_id].calls] == [2775, 40]
    assert [c.usage.input_tokens if c.usage else None for c in sessions[branch_id].calls] == [None, None, 77]
    assert [c.billed_in for c in sessions[branch_id].calls] == [f"{parent}#{parent_id}"] * 2 + [None]
    assert [c.n_messages for c in sessions[branch_id].calls] == [1, 4, 7]  # the requests are unchanged
    assert sessions[branch_id].issues.skipped["call:billed_in_another_copy"] == 2
