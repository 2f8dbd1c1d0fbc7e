"""A real pi run forked from a stock pi trunk at B's first blocked read continues exactly as B's
independent pi run does (GitHub issue 25 item 2 for real harnesses; readbench.agents.pi_fork).

Real pi 0.84.4 in the local sandbox, readbench's simulated agent (sim-pager), the tiny corpus's
read-only locate task (so the workspace at the fork point is the setup's: no restore needed).
The trunk runs stock; B's fork point is the first call whose request holds a read B refuses
(readbench's own B on the file's bytes); the fork resumes pi on the trunk's session cut there,
B's refusal in place, under B's extension. Every request and reply of the fork equals B's
independent run's from that call on, the working directory's path aside (slow).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import as_solver
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

from readbench.agents import harness_agent
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
from readbench.fork.shadow import arm_key
from readbench.read import get_variant
from readbench.read._session import ReadSession
from readbench.run import task as rb_task
from readbench.sessions.pi import FORK_MARKER

pytestmark = [pytest.mark.slow]


sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
from corpus_fixture import records, tiny_corpus_fixture  # noqa: E402

tiny_corpus = tiny_corpus_fixture(own_cache=False)  # the installed pi pin lives in the user's cache


def _run(tmp_path, name, variant, families="locate", dcp="off", agent="pi", sandbox="local", **agent_args):
    task = rb_task.read_strategies_task(sandbox_kind=sandbox, families=families, variant=variant, dcp=dcp, agent=agent)
    task.solver = as_solver(harness_agent(agent=agent, variant=variant, dcp=dcp, keep_session=True, **agent_args))
    log = inspect_eval(task, model="readbench/sim-pager", log_dir=str(tmp_path / name), display="none")[0]
    assert log.status == "success", (name, log.error)
    return read_eval_log(log.location, resolve_attachments=True).samples[0]


def _calls(sample):
    """Each relayed call as plain data, the sample's working directory written `<cwd>` and unittest's
    run time (`Ran 1 test in 0.001s`, which differs between any two runs) written `<t>`."""
    cwd = json.loads(sample.store[SESSION_TEXT_KEY].splitlines()[0])["cwd"]
    out = []
    for e in sample.events:
        if not isinstance(e, ModelEvent):
            continue
        msgs = [(m.role, m.text, getattr(m, "tool_call_id", None),
                 [(c.id, c.function, c.arguments) for c in getattr(m, "tool_calls", None) or []]) for m in e.input]
        reply = e.output.message
        text = json.dumps({"input": msgs, "tools": [t.model_dump() for t in e.tools],
                           "reply": [reply.text, [(c.id, c.function, c.arguments) for c in reply.tool_calls or []]]})
        out.append(json.loads(re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\1<t>s", text.replace(cwd, "<cwd>"))))
    return out


def _first_difference(a, b):
    """(call, message index, the two messages) where two lists of `_calls` first differ, for a failure's text."""
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            i = next((i for i, (m, n) in enumerate(zip(x["input"], y["input"])) if m != n), None)
            return k, i, (x["input"][i], y["input"][i]) if i is not None else (x["reply"], y["reply"])
    return len(a), len(b)


def _b_fork_point(session_text, calc):
    """(call, tool_call_id, B's text) of the first read B refuses, from the trunk's session file."""
    entries = [json.loads(line) for line in session_text.splitlines()[1:]]
    replies = [e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
               and e["message"]["stopReason"] not in ("error", "aborted")]  # a retried request is no call
    for k, reply in enumerate(replies):
        for block in reply["content"]:
            if block["type"] == "toolCall" and block["name"] == "read" and block["arguments"]["path"] == "calc.py":
                a = block["arguments"]
                got = get_variant("B").read(calc, "calc.py", a.get("offset"), a.get("limit"), call_id=block["id"],
                                            session=ReadSession(), visible_call_ids=None)
                if got.details.blocked:
                    return k + 1, block["id"], got.text
    raise AssertionError("B blocks no read of the trunk")


@pytest.mark.parametrize("agent", ["pi", "pi@1.6.0"])
def test_a_pi_fork_at_bs_first_blocked_read_continues_as_bs_independent_run(tiny_corpus, agent):
    calc = next(r for r in records() if r.id == "logs/locate/0").files["calc.py"].encode()
    trunk = _run(tiny_corpus, "trunk", "stock", agent=agent, shadow=[["stock", "off"], ["B", "off"]])
    b = _run(tiny_corpus, "b", "B", agent=agent)
    text = trunk.store[SESSION_TEXT_KEY]
    call, tool_call_id, refusal = _b_fork_point(text, calc)
    assert call == 2 and refusal.startswith("File has 2603 lines")
    # the trunk's shadow found the same fork point and result (readbench.agents.pi_shadow)
    shadow = trunk.store[SHADOW_KEY]
    assert shadow[arm_key("B", "off")] == {"call": 2, "kind": "result", "reason": "its read results differ",
                                           "results": {tool_call_id: [refusal, True]},
                                           "dcp_state": {"version": 1, "decisions": []}}
    assert shadow[arm_key("stock", "off")]["kind"] == "never"
    fork = _run(tiny_corpus, "fork", "B", agent=agent, fork={
        "trunk": text, **shadow[arm_key("B", "off")], "sim": trunk.store[SIM_BEFORE_CALL_KEY][call],
        "calls": trunk.store[CALLS], "times": trunk.store[CALL_TIMES_KEY], "reported": trunk.store[REPORTED_KEY]})
    trunk_calls, b_calls, fork_calls = _calls(trunk), _calls(b), _calls(fork)
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


def test_a_pi_fork_after_an_edit_restores_the_trunks_workspace_and_continues_as_the_trunk(tiny_corpus):
    # bugfix: the sim edits calc.py, then runs the tests; a fork at the call after the edit, with the
    # trunk's own results (no arm change), must find the edit in its workspace to go on as the trunk did
    trunk = _run(tiny_corpus, "trunk", "stock", families="bugfix", snapshots=True)
    text = trunk.store[SESSION_TEXT_KEY]
    replies = [json.loads(line)["message"] for line in text.splitlines()[1:]
               if json.loads(line).get("type") == "message" and json.loads(line)["message"]["role"] == "assistant"]
    replies = [r for r in replies if r["stopReason"] not in ("error", "aborted")]  # a retried request is no call
    call = 1 + next(k for k, r in enumerate(replies) if any(
        b["type"] == "toolCall" and b["name"] == "edit" for b in r["content"]))
    snaps = trunk.store[SNAPSHOTS_KEY]
    assert str(call) in snaps and snapshot_for(snaps, call) == snaps[str(call)]
    fork = {"trunk": text, "call": call, "results": {}, "sim": trunk.store[SIM_BEFORE_CALL_KEY][call]}
    restored = _run(tiny_corpus, "restored", "stock", families="bugfix", fork={**fork, "snapshot": snaps[str(call)]})
    trunk_calls = _calls(trunk)
    assert len(trunk_calls) > call + 1  # the trunk went on after the edit (ran the tests)
    assert _calls(restored) == trunk_calls[call:]
    assert next(iter(restored.scores.values())).value == next(iter(trunk.scores.values())).value
    # the same fork on the setup's workspace (no restore) does not: the edit is missing
    bare = _run(tiny_corpus, "bare", "stock", families="bugfix", fork=fork)
    assert _calls(bare)[0] == trunk_calls[call]  # same request at the fork point ...
    assert _calls(bare) != trunk_calls[call:]  # ... then another trajectory


def test_a_pi_fork_of_a_dcp_arm_continues_under_the_arms_projection_as_its_independent_run(tiny_corpus):
    # bugfix, stock x off trunk; arm stock x obs-mask-5 (the bridge filter's projection): its fork point is
    # the first trunk request its projection changes (the shadow, here over the trunk's relayed requests);
    # the fork resumes pi there, the workspace restored, and its relay projects under obs-mask-5
    from readbench.dcp import project
    from readbench.replay.fork_points import first_changed_call

    trunk = _run(tiny_corpus, "trunk", "stock", families="bugfix", snapshots=True,
                 shadow=[["stock", "off"], ["stock", "obs-mask-5"]])
    arm = _run(tiny_corpus, "arm", "stock", families="bugfix", dcp="obs-mask-5")
    requests = [list(e.input) for e in trunk.events if isinstance(e, ModelEvent)]
    call = first_changed_call(requests, [project(r, "obs-mask-5").messages for r in requests])
    assert call == 6 and len(requests) == 10
    trunk_calls, arm_calls = _calls(trunk), _calls(arm)
    assert trunk_calls[:call] == arm_calls[:call] and trunk_calls[call] != arm_calls[call]
    point = trunk.store[SHADOW_KEY][arm_key("stock", "obs-mask-5")]
    assert point == {"call": 6, "kind": "request", "reason": "its DCP projection differs", "results": {},
                     "dcp_state": {"version": 1, "decisions": []}}
    fork = _run(tiny_corpus, "fork", "stock", families="bugfix", dcp="obs-mask-5", fork={
        "trunk": trunk.store[SESSION_TEXT_KEY], **point, "sim": trunk.store[SIM_BEFORE_CALL_KEY][call],
        "snapshot": snapshot_for(trunk.store[SNAPSHOTS_KEY], call), "reported": trunk.store[REPORTED_KEY],
        "calls": trunk.store[CALLS], "times": trunk.store[CALL_TIMES_KEY]})
    assert _calls(fork) == arm_calls[call:], _first_difference(_calls(fork), arm_calls[call:])
    # the prefix's calls re-projected under obs-mask-5 (the trunk's ran under off): the arm's own log and figures
    assert fork.store[CALLS] == arm.store[CALLS]
    assert fork.store[CACHE_METRICS] == arm.store[CACHE_METRICS]
    assert fork.store[NATIVE_METRICS] == arm.store[NATIVE_METRICS]
    assert next(iter(fork.scores.values())).value == next(iter(arm.scores.values())).value


@pytest.mark.docker
def test_in_docker_a_pi_forks_requests_are_byte_identical_to_the_independent_runs(tiny_corpus):
    # every container has the same workspace path, so the fork's session header, system prompt and
    # every request equal B's independent run's without any path normalised
    trunk = _run(tiny_corpus, "trunk", "stock", sandbox="docker", shadow=[["stock", "off"], ["B", "off"]])
    b = _run(tiny_corpus, "b", "B", sandbox="docker")
    point = trunk.store[SHADOW_KEY][arm_key("B", "off")]
    assert (point["call"], point["kind"]) == (2, "result")
    fork = _run(tiny_corpus, "fork", "B", sandbox="docker", fork={
        "trunk": trunk.store[SESSION_TEXT_KEY], **point, "sim": trunk.store[SIM_BEFORE_CALL_KEY][2]})
    cwds = {json.loads(x.store[SESSION_TEXT_KEY].splitlines()[0])["cwd"] for x in (trunk, b, fork)}
    assert len(cwds) == 1
    b_events = [e for e in b.events if isinstance(e, ModelEvent)]
    fork_events = [e for e in fork.events if isinstance(e, ModelEvent)]
    assert len(fork_events) == len(b_events) - 2
    for mine, theirs in zip(fork_events, b_events[2:]):
        assert [m.model_dump(exclude={"id"}) for m in mine.input] == [m.model_dump(exclude={"id"}) for m in theirs.input]
        assert [t.model_dump() for t in mine.tools] == [t.model_dump() for t in theirs.tools]
