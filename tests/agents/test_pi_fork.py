"""The pi session file a fork resumes (readbench.agents.pi_fork.fork_session_text), the fork's pi
argv, and the importer leaving the fork's start marker out (GitHub issue 25 item 2)."""

from __future__ import annotations

import json

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.agents.pi_fork import CONTINUE_EXTENSION, ArmResult, fork_session_text, may_change_files, snapshot_for
from readbench.agents.pi_run import pi_command, pi_files
from readbench.sessions import pi as pi_sessions

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-12-03T17:05:04.279Z","cwd":"/w/trunk"}'
LINES = [
    HEADER,
    '{"type":"model_change","id":"e1","parentId":null,"timestamp":"t","provider":"readbench","modelId":"inspect"}',
    '{"type":"message","id":"e2","parentId":"e1","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"Find X. é"}],"timestamp":1}}',
    '{"type":"message","id":"e3","parentId":"e2","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"stopReason":"toolUse","timestamp":2}}',
    '{"type":"message","id":"e4","parentId":"e3","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"calc.py\\n"}],"isError":false,"timestamp":3}}',
    '{"type":"message","id":"e5","parentId":"e4","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"calc.py"}}],"stopReason":"toolUse","timestamp":4}}',
    '{"type":"message","id":"e6","parentId":"e5","timestamp":"t","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"line 1\\n[Showing lines 1-2000]"}],"details":{"truncation":{"truncated":true}},"isError":false,"timestamp":5}}',
    '{"type":"message","id":"e7","parentId":"e6","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"ANSWER: 1"}],"stopReason":"stop","timestamp":6}}',
]
TRUNK = "\n".join(LINES) + "\n"


def test_the_fork_file_is_the_trunk_cut_before_the_fork_calls_reply_with_the_arms_result_in_place():
    got = fork_session_text(TRUNK, 2, {"c2": ArmResult("File has 2603 lines — too long.", True)}, cwd="/w/fork")
    assert got == "\n".join([
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-12-03T17:05:04.279Z","cwd":"/w/fork"}',
        *LINES[1:6],
        '{"type":"message","id":"e6","parentId":"e5","timestamp":"t","message":{"role":"toolResult","toolCallId":"c2",'
        '"toolName":"read","content":[{"type":"text","text":"File has 2603 lines — too long."}],"details":{},'
        '"isError":true,"timestamp":5}}',
    ]) + "\n"
    # no replacement and no cwd: the trunk's own lines, verbatim, up to call 1's request
    assert fork_session_text(TRUNK, 1, {}) == "\n".join(LINES[:5]) + "\n"


@pytest.mark.parametrize("call, results, message", [
    (0, {}, "call 0: the first call's request holds no tool result"),
    (4, {}, "call 4: the trunk made 3 model calls"),
    (1, {"c2": ArmResult("x", True)}, "['c2'] are not tool results of call 1's request (it holds ['c1'])"),
    (3, {}, "call 3's request ends with a 'assistant' message: pi continues only from tool results"),
])
def test_a_fork_point_pi_cannot_continue_from_is_refused_by_name(call, results, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        fork_session_text(TRUNK, call, results)


def test_a_branched_or_foreign_file_is_refused():
    branched = TRUNK.replace('"id":"e5","parentId":"e4"', '"id":"e5","parentId":"e2"')
    with pytest.raises(ValueError, match="entry e5 does not follow e4: a branched session"):
        fork_session_text(branched, 2, {})
    with pytest.raises(ValueError, match="not a pi version-3 session header"):
        fork_session_text(TRUNK.replace('"version":3', '"version":2'), 2, {})


def test_the_fork_runs_pi_on_the_session_with_the_continue_extension_and_no_prompt():
    files = pi_files("/tmp/rb", 13131, None, 200_000)
    argv = pi_command("node", "pi", files, [], "/tmp/rb/sessions/fork.jsonl", "/tmp/rb/readbench-continue.ts")
    assert argv[-4:] == ["-e", "/tmp/rb/readbench-continue.ts", "--session", "/tmp/rb/sessions/fork.jsonl"]
    assert "--" not in argv
    with pytest.raises(ValueError, match="a resumed pi run takes no prompt and needs the continue extension"):
        pi_command("node", "pi", files, ["p"], "/tmp/rb/sessions/fork.jsonl", "/tmp/rb/readbench-continue.ts")
    assert 'const MARKER = "readbench-continue";' in CONTINUE_EXTENSION


def test_the_importer_leaves_the_fork_marker_out(tmp_path):
    fork = fork_session_text(TRUNK, 2, {})
    marker = {"type": "custom_message", "id": "m1", "parentId": "e6", "timestamp": "t",
              "customType": pi_sessions.FORK_MARKER, "content": "", "display": False}
    other = {**marker, "id": "m2", "parentId": "m1", "customType": "note", "content": "a note"}
    path = tmp_path / "fork.jsonl"
    path.write_text(fork + json.dumps(marker) + "\n" + json.dumps(other) + "\n")
    session = pi_sessions.load(path)[0]
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "Find X. é"), ("assistant", ""), ("tool", "calc.py\n"), ("assistant", ""),
        ("tool", "line 1\n[Showing lines 1-2000]"), ("user", "a note")]


def _request(*functions, named=True):
    calls = [ToolCall(id=f"c{i}", function=f, arguments={}) for i, f in enumerate(functions)]
    tools = [ChatMessageTool(content="r", tool_call_id=c.id, function=c.function if named else None) for c in calls]
    return [ChatMessageUser(content="p"), ChatMessageAssistant(content="", tool_calls=calls), *tools]


def test_a_snapshot_is_due_after_a_tool_that_may_change_files_and_a_fork_takes_the_latest():
    assert may_change_files(_request("read", "grep")) is False
    assert may_change_files(_request("read", "edit")) is True
    assert may_change_files(_request("bash", named=False)) is True  # name from the assistant's call
    assert may_change_files(_request("read", named=False)) is False
    assert may_change_files([ChatMessageUser(content="p")]) is False
    snaps = {"3": {"archive_b64": "a"}, "7": {"archive_b64": "b"}}
    assert [snapshot_for(snaps, k) for k in (2, 3, 6, 7, 9)] == [
        None, {"archive_b64": "a"}, {"archive_b64": "a"}, {"archive_b64": "b"}, {"archive_b64": "b"}]


def test_a_failed_request_pi_retried_is_no_call():
    # pi keeps a failed request's empty reply (stopReason error) in the file and retries: it is no call
    failed = ('{"type":"message","id":"x1","parentId":"e4","timestamp":"t","message":{"role":"assistant","content":[],'
              '"stopReason":"error","errorMessage":"Connection error.","timestamp":3}}')
    lines = [*LINES[:5], failed, LINES[5].replace('"parentId":"e4"', '"parentId":"x1"'), *LINES[6:]]
    got = fork_session_text("\n".join(lines) + "\n", 2, {"c2": ArmResult("refused", True)})
    assert got.splitlines()[:7] == lines[:7]
    assert json.loads(got.splitlines()[7])["message"]["content"] == [{"type": "text", "text": "refused"}]
    assert len(got.splitlines()) == 8


def test_a_fork_at_the_call_pi_retried_resumes_before_its_failed_attempts():
    # pi's request for call 1 failed twice (two empty replies with stopReason error/aborted in the file)
    # and the third attempt was call 1 (the relay records one call for it): a fork at call 1 resumes
    # from call 1's request, without the failed attempts, and makes the call itself
    failed = ('{"type":"message","id":"x1","parentId":"e4","timestamp":"t","message":{"role":"assistant","content":[],'
              '"stopReason":"error","errorMessage":"Connection error.","timestamp":3}}')
    again = failed.replace('"id":"x1","parentId":"e4"', '"id":"x2","parentId":"x1"').replace('"error"', '"aborted"', 1)
    lines = [*LINES[:5], failed, again, LINES[5].replace('"parentId":"e4"', '"parentId":"x2"'), *LINES[6:]]
    trunk = "\n".join(lines) + "\n"
    assert fork_session_text(trunk, 1, {}) == "\n".join(LINES[:5]) + "\n"
    got = fork_session_text(trunk, 1, {"c1": ArmResult("refused", True)}).splitlines()
    assert got[:4] == LINES[:4] and json.loads(got[4])["message"]["content"] == [{"type": "text", "text": "refused"}]
    assert len(got) == 5
    # a fork one call later keeps them (pi skips a failed reply when it sends the history)
    assert fork_session_text(trunk, 2, {}) == "\n".join(lines[:9]) + "\n"
