"""Differential: real pi 0.84.1 session JSONL (SDK `createAgentSession` + pi-ai's faux provider,
driver/session_driver.mjs) imported by readbench.sessions (issue 12) and exported back (issue 9).

Per scenario: every message entry of pi's file must come back from parse -> export with the same
id, timestamp and message object (deep JSON equality); the tool results pi's real tools wrote into
the session must equal what readbench's pure functions give for the same calls.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pi_diff_gen import AGREED
from pi_driver_client import DRIVER_DIR

from readbench.read import ReadSession, get_variant
from readbench.sessions import load_file
from readbench.sessions.pi_messages import export_session
from readbench.tools.pi.bash import format_bash_output
from readbench.tools.pi.edit import apply_edits, normalize_edit_args
from readbench.tools.pi.write import write_success_text

pytestmark = pytest.mark.differential

FILES = {"a.txt": b"line 1\nline 2\nline 3\n", "crlf.txt": b"x = '1'\r\ny = 2\r\n"}


def call(name: str, call_id: str, **arguments) -> dict:
    return {"toolCall": name, "id": call_id, "arguments": arguments}


SCENARIOS = {
    "read-bash": [
        [{"text": "Reading."}, call("read", "c1", path="a.txt", limit=2)],
        [call("bash", "c2", command="echo hi; exit 3")],
        [{"text": "Done."}],
    ],
    "edit-write-parallel": [
        [{"thinking": "plan"}, call("edit", "c1", path="crlf.txt", edits=[{"oldText": "x = \u20181\u2019", "newText": "x = 3"}]),
         call("write", "c2", path="new/\u00e9\U0001f600.txt", content="h\u00e9\U0001f600\n")],
        [call("read", "c3", path="crlf.txt"), call("read", "c4", path="a.txt", offset=9)],
        [call("edit", "c5", path="a.txt", edits=[{"oldText": "line", "newText": "L"}])],
        [{"text": "ok \u2014 d\u00e9j\u00e0 vu"}],
    ],  # fmt: skip
}


def run_session(scenario: list, root: Path, env: dict) -> Path:
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    request = {"cwd": str(root), "sessionDir": str(root / "sessions"), "prompt": "Go \u00e9", "turns": scenario}
    done = subprocess.run(
        ["node", str(DRIVER_DIR / "session_driver.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=DRIVER_DIR,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, f"session driver failed: {done.stderr[-2000:]}"
    return Path(json.loads(done.stdout.splitlines()[-1])["sessionFile"])


def expected_tool_text(name: str, args: dict, files: dict[str, bytes]) -> tuple[str, bool]:
    """What readbench's pure functions say pi's tool returns, replaying file state in `files`."""
    if name == "read":
        result = get_variant("stock").read(
            files[args["path"]], args["path"], args.get("offset"), args.get("limit"),
            call_id=None, session=ReadSession(), visible_call_ids=None,
        )  # fmt: skip
        return result.text, result.is_error
    if name == "edit":
        parsed = normalize_edit_args(args)
        outcome = apply_edits(files[parsed.path], parsed.path, parsed)
        if outcome.ok:
            files[parsed.path] = outcome.new_content
            return outcome.success_text, False
        return outcome.error_text, True
    if name == "write":
        files[args["path"]] = args["content"].encode()
        return write_success_text(args["content"], args["path"]), False
    if name == "bash" and args["command"] == "echo hi; exit 3":
        result = format_bash_output(b"hi\n", 3)
        return result.text, result.is_error
    raise AssertionError(f"no readbench expectation for {name} {args}")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_pi_session_round_trips_and_tool_results_agree(pi_driver, tmp_path, name):
    path = run_session(SCENARIOS[name], tmp_path, pi_driver.env)
    original = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    (session,) = load_file(path)
    message_entries = [e for e in original if e["type"] == "message"]
    assert len(session.messages) == len(message_entries)
    assert len(session.calls) == sum(e["message"]["role"] == "assistant" for e in message_entries)

    exported = [json.loads(line) for line in export_session(session.messages, original[0]).splitlines()]
    assert exported[0] == original[0], "header differs"
    for before, after in zip(message_entries, exported[1:], strict=True):
        assert (after["id"], after["timestamp"]) == (before["id"], before["timestamp"])
        assert after["message"] == before["message"], f"{name}: message entry {before['id']} changed on round trip"
        AGREED["session"] += 1

    files = dict(FILES)
    calls = {}
    for entry in message_entries:
        message = entry["message"]
        if message["role"] == "assistant":
            calls.update({b["id"]: b for b in message["content"] if b["type"] == "toolCall"})
        elif message["role"] == "toolResult":
            block = calls[message["toolCallId"]]
            got = (message["content"][0]["text"], message["isError"])
            assert expected_tool_text(block["name"], block["arguments"], files) == got, f"{name}: {block}"
            AGREED["session"] += 1
