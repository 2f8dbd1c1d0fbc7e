"""A pi fork that needs the trunk's workspace (GitHub issue 25 item 2 for real harnesses:
readbench.agents.pi_fork, and `design: forked` with pi arms, readbench.agents.pi_forked). Slow: real
pi 0.84.4 in the local sandbox, the seeded sim-pager, the tiny corpus's bugfix task (the sim edits
calc.py, then runs the tests).

The module runs one matrix of stock x off and stock x obs-mask-5 ONCE, forked and independently
(tests/fork/pi_fork_runs.py): the obs-mask-5 arm's projection first changes call 6's request, so its
fork restores the trunk's workspace (the edit) and resumes pi there under obs-mask-5; stock x off is
the trunk's own arm. Per arm the run's table equals the independent run's. Forks
resumed by hand from one hand-run trunk (its store keeps what the matrix's trunk drops): the
obs-mask-5 arm's equals the matrix's independent run request by request; a fork after the edit with
the trunk's own results goes on as the trunk only with the workspace restored.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log
from pi_fork_runs import MATRIX, calls, first_difference, matrix_runs, run, samples, table

from readbench.agents.pi_fork import snapshot_for
from readbench.agents.run import (
    CALL_TIMES_KEY,
    REPORTED_KEY,
    SESSION_TEXT_KEY,
    SHADOW_KEY,
    SIM_BEFORE_CALL_KEY,
    SNAPSHOTS_KEY,
)
from readbench.base.store import CACHE_METRICS, CALLS, NATIVE_METRICS
from readbench.dcp import project
from readbench.fork.prefix import FORK
from readbench.fork.shadow import arm_key
from readbench.replay.fork_points import first_changed_call

pytestmark = [pytest.mark.slow]

DCP_MATRIX = (MATRIX.replace("variants: [stock, B]", "variants: [stock]")
              .replace('dcp: ["off"]', 'dcp: ["off", obs-mask-5]').replace("families: locate", "families: bugfix"))


@pytest.fixture(scope="module")
def bugfix(tmp_path_factory):
    with matrix_runs(tmp_path_factory.mktemp("bugfix"), DCP_MATRIX) as d:
        yield d


def _trunk(d):
    [trunk] = samples(d / "results/forked/trunk")["stock"]
    return trunk


@pytest.fixture(scope="module")
def hand_trunk(bugfix):
    """The stock x off trunk run by hand (harness_agent keeps its session, sim memories, snapshots and
    shadow in its store; the matrix's trunk drops them once its prefix files hold them): the hand
    forks of this module start from it."""
    return run(bugfix, "hand-trunk", "stock", families="bugfix", snapshots=True,
               shadow=[["stock", "off"], ["stock", "obs-mask-5"]])


def test_a_forked_pi_dcp_arm_resumes_at_its_first_changed_request_with_the_trunks_workspace(bugfix):
    forked, indep = table(bugfix, "forked"), table(bugfix, "indep")
    assert list(forked["arm"]) == ["stock × obs-mask-5 × pi @ readbench/sim-pager",
                                   "stock × off × pi @ readbench/sim-pager"]
    pd.testing.assert_frame_equal(forked, indep)
    assert list(forked["success"]) == [1.0, 1.0]  # the fork's tests ran on the restored edit
    trunk = _trunk(bugfix)
    arms = trunk.store[FORK]["arms"]
    assert arms["stock × obs-mask-5 × pi"] == {"call": 6, "kind": "request", "reason": "its DCP projection differs"}
    assert arms["stock × off × pi"]["kind"] == "never"
    [log] = [read_eval_log(i.name, resolve_attachments=True) for i in list_eval_logs(str(bugfix / "results/forked/logs"))
             if read_eval_log(i.name, header_only=True).eval.task_args["dcp"] == "obs-mask-5"]
    [fork] = log.samples
    taken = max(int(k) for k in trunk.store[SNAPSHOTS_KEY] if int(k) <= 6)
    assert fork.store[FORK]["fork_point"] == {"call": 6, "kind": "request", "reason": "its DCP projection differs",
                                              "snapshot": f"call {taken}"}
    n = len(fork.store["readbench:calls"])
    assert n == 10 and sum(isinstance(e, ModelEvent) for e in fork.events) == n - 6
    # beyond the table: the matrix's fork makes the arm's independent calls 6-9, request by request
    [arm] = samples(bugfix / "results/indep/logs", key="dcp")["obs-mask-5"]
    assert calls(fork) == calls(arm)[6:], first_difference(calls(fork), calls(arm)[6:])
    assert fork.store[CALLS] == arm.store[CALLS]


def test_a_pi_fork_of_a_dcp_arm_continues_under_the_arms_projection_as_its_independent_run(bugfix, hand_trunk):
    # a stock x off trunk (both arms in shadow) and the matrix's obs-mask-5 independent run;
    # its fork point is the first trunk request its projection changes (the shadow, here over the
    # trunk's relayed requests); the fork is resumed by hand, the workspace restored, and its relay
    # projects under obs-mask-5
    trunk = hand_trunk
    [arm] = samples(bugfix / "results/indep/logs", key="dcp")["obs-mask-5"]
    requests = [list(e.input) for e in trunk.events if isinstance(e, ModelEvent)]
    call = first_changed_call(requests, [project(r, "obs-mask-5").messages for r in requests])
    assert call == 6 and len(requests) == 10
    trunk_calls, arm_calls = calls(trunk), calls(arm)
    assert trunk_calls[:call] == arm_calls[:call] and trunk_calls[call] != arm_calls[call]
    point = trunk.store[SHADOW_KEY][arm_key("stock", "obs-mask-5")]
    assert point == {"call": 6, "kind": "request", "reason": "its DCP projection differs", "results": {},
                     "dcp_state": {"version": 1, "decisions": []}}
    fork = run(bugfix, "hand-dcp-fork", "stock", families="bugfix", dcp="obs-mask-5", fork={
        "trunk": trunk.store[SESSION_TEXT_KEY], **point, "sim": trunk.store[SIM_BEFORE_CALL_KEY][call],
        "snapshot": snapshot_for(trunk.store[SNAPSHOTS_KEY], call), "reported": trunk.store[REPORTED_KEY],
        "calls": trunk.store[CALLS], "times": trunk.store[CALL_TIMES_KEY]})
    assert calls(fork) == arm_calls[call:], first_difference(calls(fork), arm_calls[call:])
    # the prefix's calls re-projected under obs-mask-5 (the trunk's ran under off): the arm's own log and figures
    assert fork.store[CALLS] == arm.store[CALLS]
    assert fork.store[CACHE_METRICS] == arm.store[CACHE_METRICS]
    assert fork.store[NATIVE_METRICS] == arm.store[NATIVE_METRICS]
    assert next(iter(fork.scores.values())).value == next(iter(arm.scores.values())).value


def test_a_pi_fork_after_an_edit_restores_the_trunks_workspace_and_continues_as_the_trunk(bugfix, hand_trunk):
    # the sim edits calc.py, then runs the tests; a fork at the call after the edit, with the trunk's
    # own results (no arm change), must find the edit in its workspace to go on as the trunk did
    trunk = hand_trunk
    text = trunk.store[SESSION_TEXT_KEY]
    replies = [json.loads(line)["message"] for line in text.splitlines()[1:]
               if json.loads(line).get("type") == "message" and json.loads(line)["message"]["role"] == "assistant"]
    replies = [r for r in replies if r["stopReason"] not in ("error", "aborted")]  # a retried request is no call
    call = 1 + next(k for k, r in enumerate(replies) if any(
        b["type"] == "toolCall" and b["name"] == "edit" for b in r["content"]))
    snaps = trunk.store[SNAPSHOTS_KEY]
    assert str(call) in snaps and snapshot_for(snaps, call) == snaps[str(call)]
    fork = {"trunk": text, "call": call, "results": {}, "sim": trunk.store[SIM_BEFORE_CALL_KEY][call]}
    restored = run(bugfix, "restored", "stock", families="bugfix", fork={**fork, "snapshot": snaps[str(call)]})
    trunk_calls = calls(trunk)
    assert len(trunk_calls) > call + 1  # the trunk went on after the edit (ran the tests)
    assert calls(restored) == trunk_calls[call:]
    assert next(iter(restored.scores.values())).value == next(iter(trunk.scores.values())).value
    # the same fork on the setup's workspace (no restore) does not: the edit is missing
    bare = run(bugfix, "bare", "stock", families="bugfix", fork=fork)
    assert calls(bare)[0] == trunk_calls[call]  # same request at the fork point ...
    assert calls(bare) != trunk_calls[call:]  # ... then another trajectory
