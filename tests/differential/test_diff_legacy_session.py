"""Differential: a legacy pi session (no `version`: pi <= 0.30, late 2025) written by pi 0.30.2's
own SessionManager (legacy_driver/legacy_session.mjs) and imported by readbench.sessions
(issue 12, docs/specs/sessions.md §1).

For every assistant message, the request readbench rebuilds must be what pi 0.30.2 itself rebuilds
from the same entries (`buildSessionContext` + `messageTransformer`), as pi's Anthropic provider
sends it (`convertMessages`: assistant messages with no non-empty block and empty user texts are
left out). The scenario has tool calls, the user's own `!cmd`, an aborted reply, a thinking-level
and a model change, and a compaction whose cut comes from pi's own `findCutPoint`.

pi 0.30.2 sends an aborted reply that streamed some content (with a `No result provided`
result for its unanswered tool calls); older pi (whose header names the model) did not. Both are
what the real bills show (readbench.sessions.pi's docstring), and the scenario has one of each
kind of aborted reply.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from readbench.sessions import load_file

pytestmark = pytest.mark.differential

LEGACY_DIR = Path(__file__).parent / "legacy_driver"
LEGACY_PACKAGE = LEGACY_DIR / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"


def _usage(inp: int, read: int, write: int, out: int) -> dict:
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write, "totalTokens": inp + read + write + out,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _assistant(content: list, stop: str, ms: int, model: str = "claude-sonnet-4-5", usage: dict | None = None) -> dict:
    return {"message": {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                        "model": model, "usage": usage or _usage(3, 1000, 200, 20), "stopReason": stop, "timestamp": ms}}


def _user(text: str, ms: int) -> dict:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}}


def _result(call_id: str, name: str, text: str, ms: int) -> dict:
    return {"message": {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                        "content": [{"type": "text", "text": text}], "isError": False, "timestamp": ms}}


STEPS = [
    _user("Read a.txt and list the folder.", 1000),
    _assistant([{"type": "thinking", "thinking": "Start with the file.", "thinkingSignature": "sig"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.txt"}}], "toolUse", 2000),
    _result("toolu_1", "read", "line 1\nline 2\n", 3000),
    _assistant([{"type": "text", "text": "a.txt has two lines."}], "stop", 4000),
    {"message": {"role": "bashExecution", "command": "ls", "output": "a.txt\nb.txt", "exitCode": 0, "cancelled": False,
                 "truncated": False, "timestamp": 5000}},
    _user("Summarise b.txt.", 6000),
    _assistant([], "aborted", 7000, usage=_usage(0, 0, 0, 0)),
    _user("Summarise b.txt, please.", 8000),
    # aborted mid-stream with a tool call and no result: pi 0.30.2 sends it, answering the call
    _assistant([{"type": "text", "text": "Let me look."},
                {"type": "toolCall", "id": "toolu_x", "name": "read", "arguments": {"path": "b.txt"}}], "aborted", 8500),
    _user("Go on.", 8800),
    {"thinking": "high"},
    _assistant([{"type": "toolCall", "id": "toolu_2", "name": "bash", "arguments": {"command": "cat b.txt"}}], "toolUse", 9000),
    _result("toolu_2", "bash", "b says hello", 10000),
    {"model": ["anthropic", "claude-opus-4-5"]},
    _assistant([{"type": "text", "text": "b.txt says hello."}], "stop", 11000, model="claude-opus-4-5"),
    {"compact": {"summary": "Read a.txt and b.txt.", "keepRecentTokens": 20}},
    _user("Now write c.txt.", 12000),
    _assistant([{"type": "text", "text": "Done."}], "stop", 13000, model="claude-opus-4-5"),
]


def _pi_text(msg: dict) -> tuple[str, str]:
    role = {"user": "user", "assistant": "assistant", "toolResult": "tool"}[msg["role"]]
    content = msg["content"]
    if isinstance(content, str):
        return role, content
    return role, "".join(b["text"] for b in content if b.get("type") == "text")


def _with_results(messages: list[dict]) -> list[dict]:
    """pi 0.30.2's `transformMessages`: a tool call with no result before the next assistant or
    user message gets a `No result provided` error result."""
    out: list[dict] = []
    pending: list[dict] = []
    seen: set[str] = set()
    for m in messages:
        if m["role"] in ("assistant", "user"):
            out += [{"role": "toolResult", "toolCallId": tc["id"], "content": [{"type": "text", "text": "No result provided"}]}
                    for tc in pending if tc["id"] not in seen]
            pending, seen = [], set()
            if m["role"] == "assistant":
                pending = [b for b in m["content"] if b["type"] == "toolCall"]
        elif m["role"] == "toolResult":
            seen.add(m["toolCallId"])
        out.append(m)
    return out


def _as_sent(messages: list[dict]) -> list[tuple[str, str]]:
    """pi's context as its Anthropic provider sends it (`transformMessages`, then assistant
    messages with no non-empty block and empty user texts dropped: `convertMessages`)."""
    out = []
    for m in _with_results(messages):
        if m["role"] == "assistant" and not any(
            (b["type"] == "text" and b["text"].strip()) or (b["type"] == "thinking" and b["thinking"].strip())
            or b["type"] == "toolCall" for b in m["content"]):
            continue
        if m["role"] == "user" and not _pi_text(m)[1].strip():
            continue
        out.append(_pi_text(m))
    return out


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    if shutil.which("node") is None or not LEGACY_PACKAGE.exists():
        missing = "differential: pi 0.30.2 npm package not installed; run `bash tests/differential/setup.sh`"
        if os.environ.get("READBENCH_REQUIRE_DIFFERENTIAL"):
            pytest.fail(missing + " (READBENCH_REQUIRE_DIFFERENTIAL is set)")
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("legacy")
    request = {"cwd": str(root), "sessionDir": str(root / "sessions"), "steps": STEPS}
    done = subprocess.run(["node", str(LEGACY_DIR / "legacy_session.mjs")], input=json.dumps(request), capture_output=True,
                          text=True, cwd=LEGACY_DIR, timeout=120, env={**os.environ, "PI_CODING_AGENT_DIR": str(root / "agent")})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pi_030_writes_the_legacy_format(legacy):
    header = json.loads(Path(legacy["file"]).read_text().splitlines()[0])
    assert header["type"] == "session" and "version" not in header and set(header) == {"type", "id", "timestamp", "cwd"}
    (s,) = load_file(legacy["file"])
    assert (s.format, s.harness_version, s.session_id) == ("pi", "legacy (no session version)", header["id"])


def test_every_request_is_what_pi_030_rebuilds_and_sends(legacy):
    (s,) = load_file(legacy["file"])
    assert len(s.calls) == len(legacy["contexts"]) == 7
    for i, pi_context in enumerate(legacy["contexts"]):
        ours = [(m.role, m.text) for m in s.request(i)]
        assert ours == _as_sent(pi_context), f"call {i}"
    # the `!ls` reached the model as pi's own text for it
    assert ("user", "Ran `ls`\n```\na.txt\nb.txt\n```") in [(m.role, m.text) for m in s.request(3)]


def test_events_usage_and_request_settings_follow_the_entries(legacy):
    (s,) = load_file(legacy["file"])
    assert [(e.kind, e.call_index) for e in s.events] == [("thinking_change", 4), ("model_change", 5), ("compaction", 6)]
    assert [c.params for c in s.calls] == ["thinking=off"] * 4 + ["thinking=on"] * 3
    assert [c.model for c in s.calls] == ["claude-sonnet-4-5"] * 5 + ["claude-opus-4-5"] * 2
    assert [c.stop_reason for c in s.calls] == ["toolUse", "stop", "aborted", "aborted", "toolUse", "stop", "stop"]
    assert s.calls[0].usage.input_tokens == 1203 and s.calls[2].usage.input_tokens == 0
    assert s.calls[6].context != s.calls[5].context  # the compaction rebuilt the prompt
    # the empty aborted reply is left out, the one that streamed a tool call is sent and answered
    assert [(m.role, m.text) for m in s.request(4)][-4:] == [
        ("user", "Summarise b.txt, please."), ("assistant", "Let me look."), ("tool", "No result provided"), ("user", "Go on.")]
    assert s.issues.skipped["assistant:aborted"] == 1 and s.issues.skipped["assistant:aborted:sent"] == 1
