"""A real pi run forked from a stock pi trunk at B's first blocked read continues exactly as B's
independent pi run does (GitHub issue 25 item 2 for real harnesses: readbench.agents.pi_fork, and
`design: forked` with pi arms, readbench.agents.pi_forked). Slow: real pi 0.84.4 (and pi 1.6.0) in
the local sandbox, the seeded sim-pager, the tiny corpus's read-only locate task (so the workspace
at the fork point is the setup's).

The module runs one matrix of stock and B ONCE, forked and independently (tests/fork/pi_fork_runs.py):
one pi trunk (stock, the group's first arm) and one fork eval per pi arm. B refuses the trunk's read
of calc.py answered in call 2's request, so B's fork (a result fork at call 1, numbered as the loop's) resumes pi at request 2 with B's refusal in place
and makes calls 2-5 itself; stock is the trunk's own arm ("never"): its sample is the trunk's, no pi
run. Per arm the run's table equals the independent run's; a fork resumed by hand from the trunk's
session equals B's independent run request by request, the working directory's path aside.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from corpus_fixture import records, tiny_corpus_fixture
from inspect_ai.event import ModelEvent
from pi_fork_runs import MATRIX, b_fork_point, calls, matrix_runs, run, samples, table

from readbench.agents.run import (
    CALL_TIMES_KEY,
    REPORTED_KEY,
    SESSION_TEXT_KEY,
    SHADOW_KEY,
    SIM_BEFORE_CALL_KEY,
    SNAPSHOTS_KEY,
)
from readbench.analysis.divergence import divergence_rows
from readbench.base.store import CACHE_METRICS, CALLS, NATIVE_METRICS
from readbench.fork.prefix import FORK
from readbench.fork.shadow import arm_key
from readbench.sessions.pi import FORK_MARKER

pytestmark = [pytest.mark.slow]

tiny_corpus = tiny_corpus_fixture(own_cache=False)  # the installed pi pins live in the user's cache


@pytest.fixture(scope="module")
def locate(tmp_path_factory):
    with matrix_runs(tmp_path_factory.mktemp("locate"), MATRIX) as d:
        yield d


def _calc() -> bytes:
    return next(r for r in records() if r.id == "logs/locate/0").files["calc.py"].encode()


def test_a_forked_matrix_with_pi_arms_forks_b_at_its_call_and_equals_the_independent_run(locate):
    forked, indep = table(locate, "forked"), table(locate, "indep")
    assert list(forked["arm"]) == ["B × off × pi @ readbench/sim-pager", "stock × off × pi @ readbench/sim-pager"]
    pd.testing.assert_frame_equal(forked, indep)
    # one pi trunk (stock, the group's first arm) and one fork eval per pi arm
    [trunk] = samples(locate / "results/forked/trunk")["stock"]
    assert trunk.store[FORK] == {"role": "trunk", "arms": {
        "stock × off × pi": {"call": 5, "kind": "never", "reason": "not diverged within the trunk's 5 calls"},
        "B × off × pi": {"call": 1, "kind": "result", "reason": "its read results differ"}}}
    forks = samples(locate / "results/forked/logs")
    [b], [stock] = forks["B"], forks["stock"]
    # a result fork at call 1 (numbered as the loop's: the trunk's reply to call 1 shared, pi resumes at
    # request 2), the workspace restored from the trunk's latest snapshot at or before request 2
    taken = max(int(k) for k in trunk.store[SNAPSHOTS_KEY] if int(k) <= 2)
    assert b.store[FORK]["fork_point"] == {"call": 1, "kind": "result", "reason": "its read results differ",
                                           "snapshot": f"call {taken}"}
    assert b.store[FORK]["replayed_calls"] == 2
    b_calls = len(b.store["readbench:calls"])
    assert b_calls == 6 and sum(isinstance(e, ModelEvent) for e in b.events) == b_calls - 2  # calls 2-5 live
    # the trunk's own arm takes the trunk's sample: no pi run, no model call
    assert stock.store[FORK]["fork_point"]["kind"] == "never" and stock.store[FORK]["fork_point"]["snapshot"] == "final"
    assert not any(isinstance(e, ModelEvent) for e in stock.events)
    assert stock.store[FORK]["replayed_calls"] == len(trunk.store["readbench:calls"])
    # the divergence table: B forked at call 1, its first 2 calls not spent; stock is the trunk
    div = pd.read_csv(locate / "results/forked/divergence.csv").set_index("arm")
    m = "@ readbench/sim-pager"
    assert div.loc[f"B × off × pi {m}", ["trunk", "samples", "share_diverged", "run_independently",
                                         "median_fork_call", "calls_not_spent", "calls"]].tolist() == [
        False, 1, 1.0, 0.0, 1.0, 2, 6]
    assert 0 < div.loc[f"B × off × pi {m}", "share_saved_openai"] < 1
    assert div.loc[f"stock × off × pi {m}", ["trunk", "share_diverged", "calls_not_spent"]].tolist() == [True, 0, 0]
    rows = divergence_rows(locate / "results/forked/logs").set_index("arm")
    assert rows.loc[f"B × off × pi {m}", "prefix_input_tokens"] == sum(
        c["prompt_tokens"] for c in b.store["readbench:calls"][:2])
    assert json.loads((locate / "results/forked/run.json").read_text())["trunk_arms"] == ["stock × off × pi"]
    # beyond the table: the matrix's fork makes B's independent run's calls 2-5, request by request
    [b_indep] = samples(locate / "results/indep/logs")["B"]
    assert calls(b) == calls(b_indep)[2:]
    assert b.store[CALLS] == b_indep.store[CALLS]


def _check_b_fork(trunk, b, run_fork, calc):
    """A stock pi `trunk` (session kept, stock and B in shadow) and B's independent run `b`: the fork
    point a hand computation finds is the shadow's; `run_fork(fork)` resumes pi there under B and
    goes on exactly as `b`."""
    text = trunk.store[SESSION_TEXT_KEY]
    call, tool_call_id, refusal = b_fork_point(text, calc)
    assert call == 2 and refusal.startswith("File has 2603 lines")
    # the trunk's shadow found the same fork point and result (readbench.agents.pi_shadow)
    shadow = trunk.store[SHADOW_KEY]
    # (a result fork at call `call` - 1: the trunk's reply to it shared, pi resumes at request `call`)
    assert shadow[arm_key("B", "off")] == {"call": call - 1, "kind": "result", "reason": "its read results differ",
                                           "results": {tool_call_id: [refusal, True]},
                                           "dcp_state": {"version": 1, "decisions": []}}
    assert shadow[arm_key("stock", "off")]["kind"] == "never"
    fork = run_fork({"trunk": text, **shadow[arm_key("B", "off")], "sim": trunk.store[SIM_BEFORE_CALL_KEY][call],
                     "calls": trunk.store[CALLS], "times": trunk.store[CALL_TIMES_KEY],
                     "reported": trunk.store[REPORTED_KEY]})
    trunk_calls, b_calls, fork_calls = calls(trunk), calls(b), calls(fork)
    assert trunk_calls[:call] == b_calls[:call]  # the shared prefix
    assert trunk_calls[call] != b_calls[call]
    # the fork's first request is the trunk's request at the fork point with B's result in place ...
    expected = trunk_calls[call]["input"]
    expected[-1][1] = refusal
    assert fork_calls[0]["input"] == expected
    # ... and the fork goes on exactly as B's independent run: every request, tool schema and reply
    assert len(fork_calls) == len(b_calls) - call
    assert fork_calls == b_calls[call:]
    # seeded with the trunk's prefix calls, the fork's per-call log and cache and native figures are B's own
    assert fork.store[CALLS] == b.store[CALLS]
    assert fork.store[CACHE_METRICS] == b.store[CACHE_METRICS]
    assert fork.store[NATIVE_METRICS] == b.store[NATIVE_METRICS]
    assert len(fork.scores) == 1 and fork.scores.keys() == b.scores.keys()
    score = next(iter(fork.scores))
    assert fork.scores[score].value == b.scores[score].value
    # pi resumed the cut file in place: the prefix, the marker (never sent), then the fork's own entries
    lines = [json.loads(line) for line in fork.store[SESSION_TEXT_KEY].splitlines()]
    markers = [e for e in lines if e.get("type") == "custom_message"]
    assert [m["customType"] for m in markers] == [FORK_MARKER]
    assert not any(re.search(FORK_MARKER, m.text) for m in fork.messages)
    replies = [e for e in lines if e.get("type") == "message" and e["message"]["role"] == "assistant"
               and e["message"]["stopReason"] not in ("error", "aborted")]
    assert len(replies) == len(b_calls)  # the trunk's `call` replies, then the fork's own


def test_a_pi_fork_at_bs_first_blocked_read_continues_as_bs_independent_run(locate):
    # pi 0.84.4: a trunk run by hand (harness_agent keeps its session, sim memories and shadow in its
    # store; the matrix's trunk drops them once its prefix files hold them) and the matrix's
    # independent B run; the fork is resumed by hand (readbench.agents.pi_fork), not by the matrix
    trunk = run(locate, "hand-trunk", "stock", shadow=[["stock", "off"], ["B", "off"]])
    [b] = samples(locate / "results/indep/logs")["B"]
    _check_b_fork(trunk, b, lambda fork: run(locate, "hand-fork", "B", fork=fork), _calc())


def test_a_pi_1_6_0_fork_at_bs_first_blocked_read_continues_as_bs_independent_run(tiny_corpus):
    # the other pinned pi (its session format and resume flags of 1.6.0): its own trunk and B run
    trunk = run(tiny_corpus, "trunk", "stock", agent="pi@1.6.0", shadow=[["stock", "off"], ["B", "off"]])
    b = run(tiny_corpus, "b", "B", agent="pi@1.6.0")
    _check_b_fork(trunk, b, lambda fork: run(tiny_corpus, "fork", "B", agent="pi@1.6.0", fork=fork), _calc())
