"""A pi trunk's .eval log (readbench.agents.pi_forked.pi_trunk_agent) holds neither its session text,
its sim memory per call, its shadow's results nor its workspace archives: its forks read them from the
prefix files, nothing reads them from the log. A real inspect eval (mockllm, local sandbox) runs the
trunk agent over a stand-in harness that leaves those keys as harness_agent does; the test searches
the whole log file (sample store and transcript events) for them."""

from __future__ import annotations

import base64
import json
import zipfile

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver
from inspect_ai.util import store

from readbench.agents import pi_forked, run
from readbench.base import store as rbstore
from readbench.fork.shadow import arm_key

SESSION = "SESSION-TEXT-OF-THE-TRUNK " * 400
ARCHIVE = b"ARCHIVE-OF-THE-WORKSPACE " * 200
SIM = "SIM-MEMORY-BEFORE-A-CALL"
READ = "A-READ-RESULT-THE-ARM-GETS " * 100


def _log_text(location: str) -> str:
    with zipfile.ZipFile(location) as z:
        return "".join(z.read(name).decode("utf-8", "replace") for name in z.namelist())


MARKERS = ("SESSION-TEXT-OF-THE-TRUNK", base64.b64encode(ARCHIVE).decode()[:40], SIM, "A-READ-RESULT")


@pytest.mark.parametrize("fails", [False, True])
def test_the_trunks_log_keeps_out_what_only_its_forks_read(tmp_path, monkeypatch, fails):
    work = tmp_path / "ws"
    work.mkdir()

    @solver
    def workspace():
        async def solve(state, generate):
            store().set(rbstore.WORKSPACE, {"cwd": str(work), "sandbox": "local", "env": {}})
            store().set(rbstore.ORACLE, {"task_id": "t/locate/0", "epoch": 1, "prompts": ["p"]})
            return state
        return solve

    def fake_harness_agent(**kwargs):
        async def execute(state):
            s = store()
            s.set(run.SESSION_TEXT_KEY, SESSION)
            s.set(run.SIM_BEFORE_CALL_KEY, [{"m": SIM}, {"m": SIM}])
            s.set(run.SNAPSHOTS_KEY, {"1": {"archive_b64": base64.b64encode(ARCHIVE).decode(), "deleted": ["./x"]}})
            s.set(run.SHADOW_KEY, {
                arm_key("B", "off"): {"call": None, "kind": "never", "reason": "r", "results": {}, "dcp_state": None},
                arm_key("stock", "off"): {"call": 0, "kind": "result", "reason": "its read results differ",
                                          "results": {"c0": [READ, False]}, "dcp_state": None}})
            s.set(rbstore.CALLS, [{"prompt_tokens": 1}, {"prompt_tokens": 2}])
            s.set(run.REPORTED_KEY, [None, None])
            s.set(run.CALL_TIMES_KEY, [[0.0, 0.1], [0.2, 0.3]])
            if fails:
                raise RuntimeError("pi exited with 1")
            return state
        return execute

    monkeypatch.setattr(run, "harness_agent", fake_harness_agent)
    trunk = pi_forked.pi_trunk_agent("pi", "B", "off", str(tmp_path / "fork"), [["B", "off"], ["stock", "off"]],
                                     labels=["B × off × pi", "stock × off × pi"])
    [log] = eval(Task(dataset=[Sample(input="p", id="t/locate/0")], solver=[workspace(), trunk], sandbox="local"),
                 model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    if fails:  # the harness failed: no prefix written, nothing of it in the errored sample's log either
        assert log.status == "error" and not (tmp_path / "fork").exists()
        text = _log_text(log.location)
        assert "pi exited with 1" in text and not [m for m in MARKERS if m in text]
        return
    assert log.status == "success", log.error
    sample_store = log.samples[0].store
    # the forks' prefix files hold them (the stock arm's: a result fork at call 0 resumes at request 1)
    [prefix] = [json.loads(p.read_text()) for p in (tmp_path / "fork").rglob("*.json")
                if json.loads(p.read_text())["arm_key"] == arm_key("stock", "off")]
    assert prefix["trunk"] == SESSION and prefix["sim"] == {"m": SIM}
    assert base64.b64decode(prefix["snapshot"]["archive_b64"]) == ARCHIVE
    assert prefix["point"]["results"] == {"c0": [READ, False]}
    # the log does not: its store keeps the snapshots' calls and sizes, the fork record and the usage
    for key in (run.SESSION_TEXT_KEY, run.SIM_BEFORE_CALL_KEY, run.SHADOW_KEY):
        assert key not in sample_store
    assert sample_store[run.SNAPSHOTS_KEY] == {"1": {"archive_bytes": len(ARCHIVE), "deleted": 1}}
    assert sample_store["readbench:fork"]["arms"]["stock × off × pi"] == {"call": 0, "kind": "result",
                                                                "reason": "its read results differ"}
    text = _log_text(log.location)
    assert not [m for m in MARKERS if m in text]
