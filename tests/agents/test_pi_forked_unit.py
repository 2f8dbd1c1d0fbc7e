"""readbench.agents.pi_forked without pi: which path a pi fork sample takes (GitHub issue 25 item 2).

A pi resumed at a fork point finishes only the prompt its cut session ends in (pi_run sends no
prompt with a resume), so a diverged pi arm of a sample with follow-up prompts must run whole from
its prompts, recorded as kind ``independent``; a single-prompt sample resumes from the prefix.
"""

from __future__ import annotations

import asyncio
import json

from inspect_ai.agent import AgentState
from inspect_ai.util import store
from inspect_ai.util._store import Store, init_subtask_store

from readbench.agents import pi_forked, run
from readbench.base import store as rbstore
from readbench.fork.prefix import FORK

KEY = "B-key"


def _fork_sample(tmp_path, monkeypatch, prompts):
    """Run `pi_fork_agent` on a prefix whose arm forked at call 1 (kind result: the trunk's reply to
    call 1 shared, the arm's result after it, pi resuming at request 2); `harness_agent`
    recorded instead of run. Returns (the harness_agent kwargs, the sample's readbench:fork record)."""
    init_subtask_store(Store())
    store().set(rbstore.WORKSPACE, {"cwd": "/w"})
    store().set(rbstore.ORACLE, {"task_id": "t/session/0", "epoch": 1, "prompts": prompts})
    monkeypatch.setattr(pi_forked, "store_info", lambda: ("readbench/sim-pager", "t/session/0", 1))
    path = pi_forked.pi_prefix_path(tmp_path, "readbench/sim-pager", "t/session/0", 1, "pi", KEY)
    path.parent.mkdir(parents=True)
    point = {"call": 1, "kind": "result", "reason": "its read results differ", "results": {"c1": ["no", True]},
             "dcp_state": None}
    path.write_text(json.dumps({"arm": ["B", "off"], "arm_key": KEY, "cwd": "/w", "point": point, "trunk": "T",
                                "sim": None, "snapshot": None, "snapshot_call": None, "reported": None,
                                "calls": [], "times": []}))
    given = {}

    def fake_harness_agent(**kwargs):
        given.update(kwargs)

        async def execute(state):
            if kwargs.get("fork") is not None:
                store().set(run.NOT_SPENT_KEY, {"prefix_tokens": {"input": 7, "output": 1},
                                                "prefix_cost_usd": {"openai": 0.5}})
            return state

        return execute

    monkeypatch.setattr(run, "harness_agent", fake_harness_agent)
    agent = pi_forked.pi_fork_agent("pi", "B", "off", str(tmp_path), KEY, cache_models=["openai"])
    asyncio.run(agent(AgentState(messages=[])))
    return given, store().get(FORK)


def test_a_diverged_pi_arm_of_a_multi_prompt_sample_runs_whole_and_says_why(tmp_path, monkeypatch):
    given, record = _fork_sample(tmp_path, monkeypatch, ["first", "second", "third"])
    assert "fork" not in given  # pi run from the prompts, not resumed
    assert record == {"role": "fork", "arm": ["B", "off"], "prefix": str(pi_forked.pi_prefix_path(
        tmp_path, "readbench/sim-pager", "t/session/0", 1, "pi", KEY)),
        "fork_point": {"kind": "independent", "reason": pi_forked.MULTI_PROMPT}, "replayed_calls": 0,
        "prefix_tokens": {"input": 0, "output": 0}, "prefix_cost_usd": {"openai": 0.0}}


def test_a_diverged_pi_arm_of_a_single_prompt_sample_resumes_at_its_fork_point(tmp_path, monkeypatch):
    given, record = _fork_sample(tmp_path, monkeypatch, ["only"])
    assert (given["fork"]["call"], given["fork"]["kind"]) == (1, "result")  # harness_agent resumes at request 2
    assert given["fork"]["results"] == {"c1": ["no", True]}
    assert record["fork_point"] == {"call": 1, "kind": "result", "reason": "its read results differ",
                                    "snapshot": None}
    # calls 0 and 1 reused (call 1's reply shared), as the loop's result forks count them
    assert (record["replayed_calls"], record["prefix_tokens"], record["prefix_cost_usd"]) == (
        2, {"input": 7, "output": 1}, {"openai": 0.5})
