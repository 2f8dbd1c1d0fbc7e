"""The real pi (npm @earendil-works/pi-coding-agent 0.84.4) inside a networkless container, driven
by readbench's simulated agent (sim-pager: it reads blind first) through inspect's sandbox agent bridge (GitHub issue 24): one task,
stock and B, DCP off and pi-dcp. Every sample is scored from pi's own session file.

The same four runs (made once, a module-scoped fixture) also serve the Docker pi fork (GitHub issue
25 item 2, readbench.agents.pi_fork): stock x off runs as a trunk (its session kept, stock and B in
shadow) and B x off keeps its session; a fork of the trunk at B's fork point, in its own container,
makes requests byte-identical to B x off's."""

from __future__ import annotations

import json

import pytest
from corpus_fixture import eval_ok, write_corpus
from inspect_ai.agent import as_solver
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

from readbench.agents import harness_agent
from readbench.agents.run import SESSION_TEXT_KEY, SHADOW_KEY, SIM_BEFORE_CALL_KEY
from readbench.corpus import task_index
from readbench.fork.shadow import arm_key
from readbench.run import task as rb_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

B_REFUSAL = "File has 2603 lines (38.3KB), over the 2000-line/50.0KB read limit. Read it in ranges, e.g. offset="
ARMS = [(v, d) for v in ("stock", "B") for d in ("off", "pi-dcp")]
#: the trunk's and B's runs keep their sessions (and the trunk shadows stock and B) for the fork test
KEEP = {("stock", "off"): {"keep_session": True, "shadow": [["stock", "off"], ["B", "off"]]},
        ("B", "off"): {"keep_session": True}}


def _task(variant, dcp, **agent_args):
    task = rb_task.read_strategies_task(sandbox_kind="docker", families="locate", variant=variant, dcp=dcp, agent="pi")
    if agent_args:  # harness_agent as the task's own solver makes it, with the fork's records kept
        task.solver = as_solver(harness_agent(agent="pi", variant=variant, dcp=dcp, **agent_args))
    return task


@pytest.fixture(scope="module")
def docker_runs(tmp_path_factory):
    """(the tiny corpus's directory, {arm: its sample}) of the four arms run once in Docker; the
    environment (READBENCH_TASKS at the tiny corpus; READBENCH_CACHE as set: the installed pi pin
    and its image live in the user's cache) kept for the module."""
    d = tmp_path_factory.mktemp("pi-docker")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("READBENCH_TASKS", str(write_corpus(d)))
        task_index.cache_clear()
        # the four arms at once (max_tasks; inspect's default for one model is one task at a time): a
        # sample mostly waits on its container's start and stop and on the bridge (5 pi runs here: ~37 CPU s
        # in ~190 s of wall run one by one), and containers share no workspace
        logs = eval_ok([_task(v, dc, **KEEP.get((v, dc), {})) for v, dc in ARMS], "readbench/sim-pager", d / "logs",
                       max_tasks=len(ARMS))
        out = {arm: read_eval_log(log.location, resolve_attachments=True).samples for arm, log in zip(ARMS, logs)}
        yield d, out
        task_index.cache_clear()


def test_real_pi_runs_every_arm_in_a_container_and_is_scored_from_its_session(docker_runs):
    _, runs = docker_runs
    for (variant, _dcp), [sample] in runs.items():
        score = sample.scores["readbench"]
        assert score.value == 1.0, score.explanation
        meta = score.metadata
        # the metrics come from pi's session and the bridge's relayed calls
        assert meta["read_calls"] >= 1 and meta["turns"] >= 2 and meta["input_tokens"] > 0
        assert meta["native_input_tokens"] == meta["input_tokens"] and meta["cost_usd_anthropic-5m"] > 0
        # pi's transcript, not readbench's loop: no readbench system prompt in the history
        assert sample.messages[0].role == "user"
        texts = [m.error.message if m.error else m.text for m in sample.messages if m.role == "tool"
                 and m.function == "read"]
        refused = [t for t in texts if t.startswith("File has")]
        if variant == "B":  # the extension's refusal, B's exact text
            assert refused and all(t.startswith(B_REFUSAL) and t.endswith(", or grep for what you need first.")
                                   for t in refused)
            assert meta["blocked_reads"] == len(refused)
        else:  # pi's own read never refuses
            assert refused == [] and meta["blocked_reads"] == 0


def test_in_docker_a_pi_forks_requests_are_byte_identical_to_the_independent_runs(docker_runs):
    # every container has the same workspace path, so the fork's session header, system prompt and
    # every request equal B's independent run's without any path normalised
    d, runs = docker_runs
    [trunk], [b] = runs[("stock", "off")], runs[("B", "off")]
    point = trunk.store[SHADOW_KEY][arm_key("B", "off")]
    assert (point["call"], point["kind"]) == (1, "result")  # numbered as the loop's: pi resumes at request 2
    [log] = eval_ok(_task("B", "off", keep_session=True, fork={
        "trunk": trunk.store[SESSION_TEXT_KEY], **point, "sim": trunk.store[SIM_BEFORE_CALL_KEY][2]}),
        "readbench/sim-pager", d / "fork")
    [fork] = read_eval_log(log.location, resolve_attachments=True).samples
    cwds = {json.loads(x.store[SESSION_TEXT_KEY].splitlines()[0])["cwd"] for x in (trunk, b, fork)}
    assert len(cwds) == 1
    b_events = [e for e in b.events if isinstance(e, ModelEvent)]
    fork_events = [e for e in fork.events if isinstance(e, ModelEvent)]
    assert len(fork_events) == len(b_events) - 2
    for mine, theirs in zip(fork_events, b_events[2:]):
        assert [m.model_dump(exclude={"id"}) for m in mine.input] == [m.model_dump(exclude={"id"}) for m in theirs.input]
        assert [t.model_dump() for t in mine.tools] == [t.model_dump() for t in theirs.tools]
