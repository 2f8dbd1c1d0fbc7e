"""pi session JSONL import/export (shared/specs/pi-tools.md §6) on a hand-written v3 file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ContentReasoning, ContentText

from readbench.replay.pi_session import export_session, load_messages, parse_session, to_pi_message

DATA = Path(__file__).parent / "data" / "pi_session_v3.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def test_import_follows_the_active_branch():
    s = parse_session(DATA.read_text(), str(DATA))
    assert [e["id"] for e in s.branch] == [
        "718c95a7", "cf30d83e", "2701d53b", "17a519b7", "3ed8b2d1", "8c1d2e3f", "631943fa",
        "9d9d9d9d", "aa11bb22", "b0b0b0b0", "c0c0c0c0",
    ]  # the abandoned assistant reply 5a5a5a5a is not on it
    assert s.skipped == {"model_change": 1, "thinking_level_change": 1, "custom": 1, "label": 1, "session_info": 1}
    assert [m.role for m in s.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_import_maps_calls_results_errors_and_usage():
    m = parse_session(DATA.read_text()).messages
    assert isinstance(m[0], ChatMessageUser) and m[0].text == "Read a.py"
    a = m[1]
    assert isinstance(a, ChatMessageAssistant)
    assert [(c.id, c.function, c.arguments) for c in a.tool_calls] == [("call_1", "read", {"path": "a.py", "limit": 2})]
    assert isinstance(a.content[0], ContentReasoning) and a.content[0].signature == "sig-1"
    assert isinstance(a.content[1], ContentText) and a.content[1].text == "Reading."
    assert a.model == "claude-x"
    assert a.metadata["pi"]["message"]["usage"]["totalTokens"] == 2729
    assert a.metadata["pi"]["entry"] == {"id": "17a519b7", "parentId": "2701d53b", "timestamp": "2026-01-01T10:00:01.000Z"}
    ok, err = m[2], m[4]
    assert isinstance(ok, ChatMessageTool) and (ok.tool_call_id, ok.function, ok.error) == ("call_1", "read", None)
    assert (err.tool_call_id, err.function) == ("call_2", "bash")
    assert err.error is not None and err.error.message == "hi\n\n\nCommand exited with code 3"


def test_round_trip_of_message_objects():
    originals = {e["id"]: e["message"] for e in _lines() if e.get("type") == "message"}
    s = parse_session(DATA.read_text())
    for msg in s.messages:
        eid = msg.metadata["pi"]["entry"]["id"]
        assert to_pi_message(msg) == originals[eid], eid
    again = parse_session(export_session(s.messages, s.header))
    assert [to_pi_message(x) for x in again.messages] == [to_pi_message(x) for x in s.messages]
    assert [e["id"] for e in again.branch] == ["2701d53b", "17a519b7", "3ed8b2d1", "8c1d2e3f", "631943fa", "b0b0b0b0"]


def test_export_of_plain_inspect_messages_chains_new_ids():
    msgs = [ChatMessageUser(content="hi"), ChatMessageAssistant(content="hello")]
    text = export_session(msgs)
    entries = [json.loads(x) for x in text.splitlines()]
    assert entries[0]["version"] == 3
    assert [(e["id"], e["parentId"]) for e in entries[1:]] == [("m0001", None), ("m0002", "m0001")]
    assert entries[2]["message"] == {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}


def test_load_messages_accepts_a_json_list_of_inspect_messages(tmp_path):
    msgs = parse_session(DATA.read_text()).messages
    f = tmp_path / "msgs.json"
    f.write_text(json.dumps([m.model_dump(mode="json") for m in msgs]))
    loaded = load_messages(f)
    assert [m.model_dump() for m in loaded] == [m.model_dump() for m in msgs]
    assert [m.role for m in load_messages(DATA)] == [m.role for m in msgs]


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"type":"session","version":2,"id":"s"}\n', "version 2 is not supported"),
        ('{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n', "no session header"),
        ('{"type":"session","version":3,"id":"s"}\n{not json\n', ":2: invalid JSON"),
        ('{"type":"session","version":3,"id":"s"}\n{"type":"label","id":"b","parentId":"zz"}\n', "unknown parentId 'zz'"),
        ('{"type":"session","version":3,"id":"s"}\n{"type":"message","parentId":null}\n', ":2: entry has no string 'id'"),
    ],
)
def test_malformed_sessions_raise_clear_errors(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_session(text, "s.jsonl")
