"""Forked arms when a limit cuts the trunk (GitHub issue 25): the prefixes up to the cut are still
valid fork points for the arms that diverged before it; an arm still on the trunk at the cut is
recorded as ``cut`` (not diverged before the trunk's limit), its fork stops where the trunk did
with the trunk's stop reason, and the divergence table names it apart from "identical to trunk".
With the seeded simulated agent every arm's per-sample metrics equal an independent run's."""

from __future__ import annotations

import pytest
from fork_arms import ARMS, B_S250, LABELS, MODEL, eval_log, metric_diff, metrics
from inspect_ai.event import ModelEvent

from readbench.analysis.divergence import divergence_rows, divergence_summary
from readbench.base.store import CALLS
from readbench.fork.prefix import FORK
from readbench.fork.shadow import arm_key
from readbench.run.task import read_strategies


def test_a_trunk_cut_by_the_turn_limit_still_forks_every_arm(tiny_corpus, fixed_sandbox_dir):
    # without a limit (tests/fork/test_fork_equivalence.py) the B trunk makes 12 calls on bugfix/0
    # and 6 on locate/0; B-s250 leaves it at call 2 / 1 (result), B x pi-dcp at call 9 (request) /
    # never. With max_turns 4 both trunks stop at 4 calls: B-s250 still diverges before the cut,
    # B x pi-dcp does not (cut), the trunk's own arm is identical.
    root = tiny_corpus / "fork"
    trunk = eval_log(read_strategies(variant="B", dcp="off", sandbox_kind="local", max_turns=4,
                                       fork={"role": "trunk", "root": str(root), "arms": ARMS, "labels": LABELS}),
                  tiny_corpus / "trunk")
    points = {s.id: s.store[FORK]["arms"] for s in trunk.samples}
    assert {sid: {label: (p["call"], p["kind"]) for label, p in arms.items()} for sid, arms in points.items()} == {
        "logs/bugfix/0": {"B x off": (4, "never"), "B-s250 x off": (2, "result"), "B x pi-dcp": (4, "cut"),
                          "stock x off": (0, "request")},
        "logs/locate/0": {"B x off": (4, "never"), "B-s250 x off": (1, "result"), "B x pi-dcp": (4, "cut"),
                          "stock x off": (0, "request")},
    }
    cut = points["logs/bugfix/0"]["B x pi-dcp"]
    assert cut["reason"] == "not diverged within the trunk's 4 calls: the trunk stopped on its turn_limit"
    assert cut["stop_reason"] == "turn_limit"
    forks, independent = {}, {}
    for (variant, dcp), label in zip(ARMS, LABELS):
        forks[label] = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", max_turns=4,
                                                  fork={"role": "fork", "root": str(root),
                                                        "arm_key": arm_key(variant, dcp)}), tiny_corpus / "forks")
        independent[label] = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", max_turns=4),
                                   tiny_corpus / "independent")
    for label in LABELS:
        fork, indep = metrics(forks[label]), metrics(independent[label])
        assert fork.keys() == indep.keys()
        for sid in indep:
            assert metric_diff(fork[sid], indep[sid]) == {}, (label, sid)
            assert fork[sid]["stop_reason"] == "turn_limit"
    # the cut arm's fork makes no model call: it replays the trunk's 4 and stops with it
    assert all(not any(isinstance(e, ModelEvent) for e in s.events) for s in forks["B x pi-dcp"].samples)
    summary = divergence_summary(divergence_rows(tiny_corpus / "forks")).set_index("arm")
    pi = summary.loc[f"B × pi-dcp @ {MODEL}"]
    assert (pi["share_diverged"], pi["identical_to_trunk"], pi["cut_with_trunk"]) == (0.0, 0.0, 1.0)
    assert (pi["calls_not_spent"], pi["calls"]) == (8, 8)
    s250 = summary.loc[f"B-s250 × off @ {MODEL}"]
    assert (s250["share_diverged"], s250["identical_to_trunk"], s250["cut_with_trunk"]) == (1.0, 0.0, 0.0)
    assert s250["median_fork_call"] == 1.5


def _stall_from_call(monkeypatch, index):
    """The simulated agent's model call ``index`` (0-based, per sample) never returns: inspect's
    sample time limit cancels it. Earlier calls answer as usual."""
    import anyio
    from inspect_ai.util import store

    from readbench.base import store as rbstore
    from readbench.sim.provider import SimAgentAPI

    generate = SimAgentAPI.generate

    async def stalling(self, input, tools, tool_choice, config):  # noqa: A002
        if (store().get(rbstore.SIM) or {}).get("calls", 0) >= index:  # calls answered so far, replayed ones too
            await anyio.sleep(3600)
        return await generate(self, input, tools, tool_choice, config)

    monkeypatch.setattr(SimAgentAPI, "generate", stalling)


#: the sample time limit the stalled runs below wait out. The calls before the stall (3 model calls
#: and their tool runs) take 0.1-0.3 s warm and ~2 s in a cold process (measured, 2-core machine
#: under load 5); 10 s was 5 x 10 s of waiting (53 s of the test's 54 s in CI). 7 s keeps a margin
#: over a cold process on a CI machine whose other test worker is busy.
TIME_LIMIT = 7


@pytest.mark.slow  # 5 of its runs wait out the TIME_LIMIT-s sample time limit
def test_a_trunk_cut_by_the_time_limit_writes_its_prefixes(tiny_corpus, fixed_sandbox_dir, monkeypatch):
    # bugfix/0 only; the model's 4th call (index 3) stalls until the TIME_LIMIT-s sample time limit.
    # Before: the cancelled trunk wrote no prefix and every fork failed ("fork: no prefix").
    _stall_from_call(monkeypatch, 3)
    arms, labels = ARMS[:3], LABELS[:3]
    root = tiny_corpus / "fork"
    trunk = eval_log(read_strategies(variant="B", dcp="off", sandbox_kind="local", limit=1,
                                  fork={"role": "trunk", "root": str(root), "arms": arms, "labels": labels}),
                  tiny_corpus / "trunk", time_limit=TIME_LIMIT)
    [sample] = trunk.samples
    assert sample.limit is not None and sample.limit.type == "time"
    points = sample.store[FORK]["arms"]
    assert {label: (p["call"], p["kind"], p.get("stop_reason")) for label, p in points.items()} == {
        "B x off": (3, "never", "time_limit"), "B-s250 x off": (2, "result", None),
        "B x pi-dcp": (3, "cut", "time_limit")}
    forks, independent = {}, {}
    for (variant, dcp), label in zip(arms, labels):
        forks[label] = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", limit=1,
                                             fork={"role": "fork", "root": str(root), "arm_key": arm_key(variant, dcp)}),
                             tiny_corpus / "forks", time_limit=TIME_LIMIT)
        independent[label] = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", limit=1),
                                   tiny_corpus / "independent", time_limit=TIME_LIMIT)
    for label in labels:
        fork, indep = metrics(forks[label]), metrics(independent[label])
        assert metric_diff(fork["logs/bugfix/0"], indep["logs/bugfix/0"]) == {}, label
        assert fork["logs/bugfix/0"]["stop_reason"] == "time_limit" and fork["logs/bugfix/0"]["turns"] == 3
    # the arms that followed the trunk to its limit stop with it: no model call, no time limit of their own
    for label in ("B x off", "B x pi-dcp"):
        [s] = forks[label].samples
        assert not any(isinstance(e, ModelEvent) for e in s.events) and s.limit is None
    # the arm that left the trunk at call 2 runs live from there and meets the limit itself
    [s] = forks["B-s250 x off"].samples
    assert s.limit is not None and s.limit.type == "time"


def test_a_trunk_cut_by_a_token_limit_replays_the_call_that_tripped_it(tiny_corpus, fixed_sandbox_dir):
    # inspect's token limit raises after the call that crosses it returned (billed; its reply never
    # enters the history). The limit is set between the cumulative tokens of calls 0-3 and 0-4 of an
    # unlimited run, so call 4 trips it: the trunk logs 5 calls, and a fork that followed the trunk to
    # the limit logs the same 5, the last as the tripping call, with stop_reason token_limit.
    arms, labels = [ARMS[0], ARMS[2]], [LABELS[0], LABELS[2]]
    free = eval_log(read_strategies(variant="B", dcp="off", sandbox_kind="local", limit=1), tiny_corpus / "free")
    totals = [e.output.usage.total_tokens for e in free.samples[0].events if isinstance(e, ModelEvent)]
    cumulative = [sum(totals[: k + 1]) for k in range(len(totals))]
    token_limit = (cumulative[3] + cumulative[4]) // 2
    root = tiny_corpus / "fork"
    trunk = eval_log(read_strategies(variant="B", dcp="off", sandbox_kind="local", limit=1,
                                  fork={"role": "trunk", "root": str(root), "arms": arms, "labels": labels}),
                  tiny_corpus / "trunk", token_limit=token_limit)
    [sample] = trunk.samples
    assert sample.limit is not None and sample.limit.type == "token"
    points = sample.store[FORK]["arms"]
    assert {label: (p["call"], p["kind"], p.get("stop_reason")) for label, p in points.items()} == {
        "B x off": (5, "never", "token_limit"), "B x pi-dcp": (5, "cut", "token_limit")}
    for (variant, dcp), label in zip(arms, labels):
        fork = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", limit=1,
                                     fork={"role": "fork", "root": str(root), "arm_key": arm_key(variant, dcp)}),
                     tiny_corpus / "forks", token_limit=token_limit)
        indep = eval_log(read_strategies(variant=variant, dcp=dcp, sandbox_kind="local", limit=1),
                      tiny_corpus / "independent", token_limit=token_limit)
        f, i = metrics(fork)["logs/bugfix/0"], metrics(indep)["logs/bugfix/0"]
        assert metric_diff(f, i) == {}, label
        assert f["stop_reason"] == "token_limit" and f["turns"] == 4  # replies in the history
        [s] = fork.samples
        assert not any(isinstance(e, ModelEvent) for e in s.events)
        logged = s.store[CALLS]
        assert len(logged) == 5 and logged[4]["band"] == "" and logged == indep.samples[0].store[CALLS]


def test_a_diverged_forks_token_limit_is_charged_with_the_replayed_prefix(tiny_corpus, fixed_sandbox_dir):
    # B-s250 leaves the B trunk at call 2 on bugfix/0 (a result). The token limit is set between
    # the cumulative tokens of B-s250's calls 0-4 and 0-5 of an unlimited independent run, so the
    # independent run trips on call 5. The fork replays calls 0-2 (inspect never counts them; the
    # reply to call 2 asks for the read whose result differs) and runs live from call 3: charged with the prefix's tokens it trips on call 5 too (before: on a
    # later call, the limit counting only its live calls), and its metrics equal the independent run's.
    arms, labels = [ARMS[0], ARMS[1]], [LABELS[0], LABELS[1]]
    free = eval_log(read_strategies(variant=B_S250, dcp="off", sandbox_kind="local", limit=1), tiny_corpus / "free")
    totals = [e.output.usage.total_tokens for e in free.samples[0].events if isinstance(e, ModelEvent)]
    cumulative = [sum(totals[: k + 1]) for k in range(len(totals))]
    assert len(totals) > 6
    token_limit = (cumulative[4] + cumulative[5]) // 2
    root = tiny_corpus / "fork"
    trunk = eval_log(read_strategies(variant="B", dcp="off", sandbox_kind="local", limit=1,
                                  fork={"role": "trunk", "root": str(root), "arms": arms, "labels": labels}),
                  tiny_corpus / "trunk", token_limit=token_limit)
    point = trunk.samples[0].store[FORK]["arms"]["B-s250 x off"]
    assert (point["call"], point["kind"]) == (2, "result")
    fork = eval_log(read_strategies(variant=B_S250, dcp="off", sandbox_kind="local", limit=1,
                                 fork={"role": "fork", "root": str(root), "arm_key": arm_key(B_S250, "off")}),
                 tiny_corpus / "forks", token_limit=token_limit)
    indep = eval_log(read_strategies(variant=B_S250, dcp="off", sandbox_kind="local", limit=1),
                  tiny_corpus / "independent", token_limit=token_limit)
    [fs], [ins] = fork.samples, indep.samples
    assert ins.limit is not None and ins.limit.type == "token" and len(ins.store[CALLS]) == 6
    assert fs.limit is not None and fs.limit.type == "token"
    assert fs.store[CALLS] == ins.store[CALLS]  # the same 6 calls, the last the tripping one
    f, i = metrics(fork)["logs/bugfix/0"], metrics(indep)["logs/bugfix/0"]
    assert metric_diff(f, i) == {}
    assert f["stop_reason"] == "token_limit"
    # the result of call 2 differs, so calls 0-2 are replayed (not made again) and 3-5 are live
    assert fs.store[FORK]["replayed_calls"] == 3 and sum(isinstance(e, ModelEvent) for e in fs.events) == 3
