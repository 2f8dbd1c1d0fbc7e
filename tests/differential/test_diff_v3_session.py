"""Differential: a version-3 pi session (ids, parentId branches) written by pi 0.84.1's own
SessionManager (driver/v3_session.mjs) and imported by readbench.sessions (issue 12,
docs/specs/pi-tools.md §6, sessions.md §1).

For every assistant message on the active branch, the request readbench rebuilds must be what pi
itself rebuilds (`buildSessionContext` + `convertToLlm`), as its Anthropic provider sends it (an
assistant message with no non-empty block is left out). The scenario has tool calls, the user's
own `!cmd`, an aborted reply, a thinking-level and a model change, a branch that abandons a
continuation, and a compaction by `firstKeptEntryId`.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from pi_driver_client import DRIVER_DIR
from test_diff_legacy_session import _as_sent, _assistant, _result, _user

from readbench.sessions import load_file

pytestmark = pytest.mark.differential

STEPS = [
    _user("Read a.txt.", 1000),                                                                        # 0
    _assistant([{"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.txt"}}], "toolUse", 2000),
    _result("toolu_1", "read", "line 1\nline 2\n", 3000),                                              # 2
    _assistant([{"type": "text", "text": "a.txt has two lines."}], "stop", 4000),                      # 3
    {"message": {"role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 0, "cancelled": False,
                 "truncated": False, "timestamp": 5000}},                                              # 4
    _user("Now b.", 6000),                                                                             # 5
    _assistant([], "aborted", 7000),                                                                   # 6
    _user("Now b, please.", 8000),                                                                     # 7
    {"thinking": "high"},                                                                              # 8
    _assistant([{"type": "toolCall", "id": "toolu_2", "name": "bash", "arguments": {"command": "cat b"}}], "toolUse", 9000),
    _result("toolu_2", "bash", "hi", 10000),                                                           # 10
    _assistant([{"type": "text", "text": "b says hi."}], "stop", 11000),                               # 11
    {"branch": 3},                                                                                     # 12: back to step 3
    _user("Instead, count the lines of a.txt.", 12000),                                               # 13
    _assistant([{"type": "text", "text": "2 lines."}], "stop", 13000),                                 # 14
    {"model": ["anthropic", "claude-opus-4-5"]},                                                       # 15
    {"compact": {"summary": "Read a.txt (2 lines).", "keepFrom": 13, "tokensBefore": 5000}},           # 16
    _user("Thanks.", 14000),                                                                           # 17
    _assistant([{"type": "text", "text": "You're welcome."}], "stop", 15000, model="claude-opus-4-5"),  # 18
]


@pytest.fixture(scope="module")
def v3(pi_driver, tmp_path_factory):  # pi_driver: the suite's skip/fail gate for the 0.84.1 package
    root = tmp_path_factory.mktemp("v3")
    request = {"cwd": str(root), "sessionDir": str(root / "sessions"), "steps": STEPS}
    done = subprocess.run(["node", str(DRIVER_DIR / "v3_session.mjs")], input=json.dumps(request), capture_output=True,
                          text=True, cwd=DRIVER_DIR, timeout=120,
                          env={**os.environ, "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(root / "agent")})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_active_branch_requests_are_what_pi_rebuilds_and_sends(v3):
    (s,) = load_file(v3["file"])
    assert s.harness_version == "session v3"
    by_entry = {c["entry"]: c["messages"] for c in v3["contexts"]}
    entries = [c.output.metadata["pi"]["entry"]["id"] for c in s.calls]
    # the calls of the abandoned continuation (steps 6, 9, 11) are not on the active path
    assert entries == [v3["contexts"][k]["entry"] for k in (0, 1, 5, 6)]
    for i, entry in enumerate(entries):
        assert [(m.role, m.text) for m in s.request(i)] == _as_sent(by_entry[entry]), f"call {i}"
    assert s.request(3)[0].text.startswith("The conversation history before this point was compacted")


def test_branch_model_change_and_compaction_are_events(v3):
    (s,) = load_file(v3["file"])
    assert [(e.kind, e.call_index) for e in s.events] == [("branch", 2), ("model_change", 3), ("compaction", 3)]
    assert [c.model for c in s.calls] == ["claude-sonnet-4-5"] * 3 + ["claude-opus-4-5"]
    assert s.calls[3].context != s.calls[2].context
    assert s.issues.skipped["assistant:off_branch"] == 3
