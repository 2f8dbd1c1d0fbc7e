"""Forked arms (GitHub issue 25 item 4): with the seeded simulated agent, a trunk eval plus one
fork eval per arm gives every arm exactly the per-sample metrics of an independent run of it,
while the forks make only the model calls after their fork points."""

from __future__ import annotations

import pytest
from fork_arms import ARMS, LABELS, eval_log, metric_diff, metrics
from inspect_ai.event import ModelEvent

from readbench.fork.prefix import FORK
from readbench.fork.shadow import arm_key
from readbench.run.task import read_strategies_task


@pytest.fixture()
def forked_run(tiny_corpus, fixed_sandbox_dir):
    root = tiny_corpus / "fork"
    trunk = eval_log(read_strategies_task(variant="B", dcp="off", sandbox_kind="local",
                                       fork={"role": "trunk", "root": str(root), "arms": ARMS, "labels": LABELS}),
                  tiny_corpus / "trunk")
    forks, independent = {}, {}
    for (variant, dcp), label in zip(ARMS, LABELS):
        forks[label] = eval_log(read_strategies_task(variant=variant, dcp=dcp, sandbox_kind="local",
                                                  fork={"role": "fork", "root": str(root),
                                                        "arm_key": arm_key(variant, dcp)}), tiny_corpus / "forks")
        independent[label] = eval_log(read_strategies_task(variant=variant, dcp=dcp, sandbox_kind="local"),
                                   tiny_corpus / "independent")
    return trunk, forks, independent


def test_forked_arms_equal_independent_runs_and_skip_the_shared_calls(forked_run):
    trunk, forks, independent = forked_run
    points = {s.id: s.store[FORK]["arms"] for s in trunk.samples}
    # where each arm left the trunk (hand-checked against the trunk's transcript)
    assert {sid: {label: (p["call"], p["kind"]) for label, p in arms.items()} for sid, arms in points.items()} == {
        "logs/bugfix/0": {"B x off": (12, "never"), "B-s250 x off": (2, "result"), "B x pi-dcp": (9, "request"),
                          "stock x off": (0, "request")},
        "logs/locate/0": {"B x off": (6, "never"), "B-s250 x off": (1, "result"), "B x pi-dcp": (6, "never"),
                          "stock x off": (0, "request")},
    }
    assert points["logs/bugfix/0"]["stock x off"]["reason"] == "call 0: the tool schemas differ"
    for sample in trunk.samples:  # a result fork's call is the trunk's first read B blocks
        replies = [m for m in sample.messages if m.role == "assistant"]
        call = points[sample.id]["B-s250 x off"]["call"]
        [read] = replies[call].tool_calls
        assert read.function == "read" and "limit" not in read.arguments
        assert points[sample.id]["B-s250 x off"]["reason"] == f"read {read.id} of {read.arguments['path']!r} returns another result"
        assert all(c.function != "read" or "limit" in c.arguments for r in replies[:call] for c in r.tool_calls or [])
    for label in LABELS:
        fork, indep = metrics(forks[label]), metrics(independent[label])
        assert fork.keys() == indep.keys()
        for sid in indep:
            assert metric_diff(fork[sid], indep[sid]) == {}, (label, sid)
        for sample in forks[label].samples:
            info = sample.store[FORK]
            assert info["role"] == "fork" and info["fork_point"] == points[sample.id][label]
            live = sum(isinstance(e, ModelEvent) for e in sample.events)
            assert live == fork[sample.id]["turns"] - info["replayed_calls"]
    # an arm that never left the trunk takes its trajectory without a single model call
    assert all(not any(isinstance(e, ModelEvent) for e in s.events) for s in forks["B x off"].samples)
