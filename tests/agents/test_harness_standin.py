"""`harness_agent` with a stand-in harness: a local sample's harness directory
(readbench.agents.run.WORK_PREFIX, a `tempfile.mkdtemp` on the host) is removed when the sample ends
(after success, after the harness failed, when the sample is cancelled); a fork point numbered as the
loop's resumes pi at the right request. pi is not run: the sandbox, the bridge and the model are stand-ins (the sandbox writes and
reads the host's files, as inspect's local sandbox does), and "pi" writes a one-call session file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from inspect_ai.agent import AgentState
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.util import ExecResult, store
from inspect_ai.util._store import Store, init_subtask_store

from readbench.agents import install, run
from readbench.base import store as rbstore

SESSION = "\n".join(json.dumps(e, separators=(",", ":")) for e in [
    {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-12-03T17:05:04.279Z", "cwd": "/w"},
    {"type": "message", "id": "e1", "parentId": None, "timestamp": "t",
     "message": {"role": "user", "content": [{"type": "text", "text": "Find X."}], "timestamp": 1}},
    {"type": "message", "id": "e2", "parentId": "e1", "timestamp": "t",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "ANSWER: 1"}], "stopReason": "stop",
                 "timestamp": 2}},
]) + "\n"


class HostSandbox:
    """inspect's local sandbox in miniature: files and `find` on the host; the harness's own command
    (`how`: "ok" writes the session file, "fail" exits 1, "cancel" is cancelled) instead of pi."""

    def __init__(self, how: str) -> None:
        self.how = how

    async def write_file(self, path: str, contents: str | bytes) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(contents) if isinstance(contents, str) else Path(path).write_bytes(contents)

    async def read_file(self, path: str, text: bool = True) -> str | bytes:
        return Path(path).read_text() if text else Path(path).read_bytes()

    async def exec(self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None) -> ExecResult[str]:
        if argv[0] == "find":
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            return ExecResult(done.returncode == 0, done.returncode, done.stdout, done.stderr)
        if self.how == "cancel":
            raise asyncio.CancelledError()
        if self.how == "fail":
            return ExecResult(False, 1, "", "pi: boom")
        session_dir = Path(argv[argv.index("--session-dir") + 1])
        session_dir.mkdir(parents=True, exist_ok=True)
        (session_dir / "s1.jsonl").write_text(SESSION)
        return ExecResult(True, 0, "", "")


@contextlib.asynccontextmanager
async def _no_bridge(state, **kwargs):
    yield None


def _run_sample(monkeypatch, tmp_path, how: str, made: list[str], fork: dict | None = None) -> None:
    """Run harness_agent("pi") once against `HostSandbox(how)`, noting the harness directories it made in `made`."""
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(suffix=None, prefix=None, dir=None):  # noqa: A002 (tempfile.mkdtemp's own name)
        if prefix == run.WORK_PREFIX:
            made.append(real_mkdtemp(prefix=prefix, dir=str(tmp_path)))
            return made[-1]
        return real_mkdtemp(suffix, prefix, dir)

    init_subtask_store(Store())
    (tmp_path / "ws").mkdir(exist_ok=True)
    store().set(rbstore.WORKSPACE, {"cwd": str(tmp_path / "ws"), "sandbox": "local", "env": {}})
    store().set(rbstore.ORACLE, {"prompts": ["Find X."]})
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(install, "ensure_node", lambda: Path("/nonexistent/node/bin"))
    monkeypatch.setattr(install, "ensure_pin", lambda spec: Path("/nonexistent/pi"))
    monkeypatch.setattr(run, "sandbox", lambda: HostSandbox(how))
    monkeypatch.setattr(run, "sandbox_agent_bridge", _no_bridge)
    monkeypatch.setattr(run, "get_model", lambda: get_model("mockllm/model"))
    agent = run.harness_agent(agent="pi", cache_models=["openai"], keep_session=True, fork=fork)
    state = asyncio.run(agent(AgentState(messages=[ChatMessageUser(content="Find X.")])))
    assert state.output.completion == "ANSWER: 1"


def test_the_harness_directory_is_removed_after_the_sample_and_the_session_is_kept_first(monkeypatch, tmp_path):
    made: list[str] = []
    _run_sample(monkeypatch, tmp_path, "ok", made)
    assert len(made) == 1 and made[0].startswith(str(tmp_path / run.WORK_PREFIX))
    assert not Path(made[0]).exists()
    assert store().get(run.SESSION_TEXT_KEY) == SESSION  # read out of it before it went


@pytest.mark.parametrize("how, error", [("fail", RuntimeError), ("cancel", asyncio.CancelledError)])
def test_the_harness_directory_is_removed_when_the_harness_fails_or_the_sample_is_cancelled(
        monkeypatch, tmp_path, how, error):
    made: list[str] = []
    with pytest.raises(error):
        _run_sample(monkeypatch, tmp_path, how, made)
    assert len(made) == 1 and not Path(made[0]).exists()
    assert store().get(rbstore.STOP_REASON) == ("error" if how == "fail" else None)


TRUNK = "\n".join(json.dumps(e, separators=(",", ":")) for e in [
    {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/w"},
    {"type": "message", "id": "e1", "parentId": None, "timestamp": "t",
     "message": {"role": "user", "content": [{"type": "text", "text": "Find X."}], "timestamp": 1}},
    *[e for k in range(3) for e in (
        {"type": "message", "id": f"a{k}", "parentId": f"r{k - 1}" if k else "e1", "timestamp": "t",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": f"c{k}", "name": "read",
                                                       "arguments": {"path": "a.py"}}], "stopReason": "toolUse",
                     "timestamp": 2}},
        {"type": "message", "id": f"r{k}", "parentId": f"a{k}", "timestamp": "t",
         "message": {"role": "toolResult", "toolCallId": f"c{k}", "toolName": "read",
                     "content": [{"type": "text", "text": f"read {k}"}], "isError": False, "timestamp": 3}})],
]) + "\n"


@pytest.mark.parametrize("kind, resumed_at", [("result", 2), ("request", 1), (None, 1)])
def test_a_fork_point_is_numbered_as_the_loops_and_pi_resumes_after_a_shared_reply(monkeypatch, tmp_path, kind,
                                                                                   resumed_at):
    # {"call": 1, "kind": "result"}: the trunk's reply to call 1 is shared, its result (c1) is the arm's,
    # so pi resumes at request 2 (the trunk's replies 0 and 1 reused); a request fork at 1 makes call 1
    from readbench.agents.pi_fork import ArmResult, fork_session_text

    written: dict[str, str] = {}
    real_write = HostSandbox.write_file

    async def write_file(self, path, contents):
        written[path] = contents
        await real_write(self, path, contents)

    monkeypatch.setattr(HostSandbox, "write_file", write_file)
    results = {"c1": ["refused", True]} if kind == "result" else {}
    fork = {"trunk": TRUNK, "call": 1, "results": results, "sim": None, **({"kind": kind} if kind else {})}
    made: list[str] = []
    _run_sample(monkeypatch, tmp_path, "ok", made, fork=fork)
    [session] = [text for path, text in written.items() if path.endswith("/sessions/fork.jsonl")]
    expected = {k: ArmResult(v[0], v[1]) for k, v in results.items()}
    assert session == fork_session_text(TRUNK, resumed_at, expected, str(tmp_path / "ws"))
    assert len(session.splitlines()) == 2 + 2 * resumed_at
