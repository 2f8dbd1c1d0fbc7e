"""pi arms in the forked design (GitHub issue 25 item 2 for a real harness; readbench.run.forked).

Per task x epoch x model one pi trunk sample runs under the pi group's first arm (`pi_trunk_agent`:
`harness_agent` with its session kept, workspace snapshots and every pi arm of the group in shadow,
readbench.agents.pi_shadow), and at its end writes one prefix file per arm (`pi_prefix_path`, under
the run's fork directory beside the loop's prefixes): the arm's fork point and what a fork needs to
resume pi there (the trunk's session text, the sim's memory and the workspace snapshot at that call,
the trunk's per-call log, call times and reported usage). Then one ordinary inspect eval per pi arm
(`pi_fork_agent`) loads its prefix by arm key, as readbench.fork.solver does for the loop, so the
trunk's session never lands in an eval log's plan:
- fork kind ``request`` / ``result``: `harness_agent` with ``fork=...``: pi resumed on the trunk's
  session cut at the fork call, the arm's results in place, the workspace restored, the relay seeded
  with the prefix's calls (readbench.agents.pi_fork, relay): the sample equals the arm's independent
  run (calls, cache and native figures, score; tests/fork/test_fork_pi_e2e.py); in a sample with
  follow-up prompts the arm runs whole from its prompts instead (kind ``independent``,
  `MULTI_PROMPT`), and a fork at call 0 too (harness_agent; nothing replayed or saved);
- ``never`` (the trunk's own arm, an arm no read or projection of the trunk separates) and ``cut``
  (the trunk stopped on a limit before the arm differed): the trunk's sample itself (messages, final
  output, per-call log, cache/native figures, stop reason, the final workspace restored for the
  scorer), no pi run.

Each fork sample records ``readbench:fork`` as the loop's forks do (readbench.analysis.divergence):
``{"role": "fork", "arm", "prefix", "fork_point": {call, kind, reason, snapshot}, "replayed_calls",
"prefix_tokens": {"input", "output"}, "prefix_cost_usd": {cache model: USD}}``. Fork points are
numbered as the loop's (readbench.fork.shadow): a ``request`` fork at call k makes call k itself and
reuses the trunk's replies 0..k-1; a ``result`` fork at call k shares the trunk's reply to call k too
(its tool results are the arm's) and pi resumes at request k+1; the replayed calls are those reused
(k, or k+1 for a result fork), as readbench.fork.trunk counts them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from inspect_ai.util import sandbox, store
from pydantic import TypeAdapter

from readbench.base import store as rbstore
from readbench.fork.prefix import FORK, prefix_path
from readbench.fork.shadow import arm_key

__all__ = ["pi_fork_agent", "pi_prefix_path", "pi_trunk_agent", "store_info"]

_TRUNK_SAMPLE = ("never", "cut")
"""Fork kinds whose sample is the trunk's own (no pi run)."""

MULTI_PROMPT = ("a task with follow-up prompts: pi resumed at a fork point finishes only the prompt its cut "
                "session ends in (readbench.agents.pi_run sends no prompt with a resume), so this arm ran whole")
"""The reason a diverged pi arm of a multi-prompt sample (``session``, ``longsession`` families) runs
independently (fork kind ``independent``: nothing replayed or saved, readbench.analysis.divergence)."""


def pi_prefix_path(root: Path, model: str, sample_id: str, epoch: int, agent_name: str, key: str) -> Path:
    """The prefix file of pi arm `key` (readbench.fork.shadow.arm_key) under harness pin `agent_name`
    (``pi``, ``pi@1.6.0``) for one trunk sample; the pin is part of the name, so a loop arm with the
    same variant and DCP (readbench.fork.prefix.prefix_path) never shares it."""
    return prefix_path(root, model, sample_id, epoch, f"{re.sub(r'[^A-Za-z0-9._-]+', '_', agent_name)}-{key}")


@agent
def pi_trunk_agent(agent_name: str, variant: Any, dcp: Any, root: str, arms: list[list[Any]],
                   labels: list[str] | None = None, cache_models: list[str] | None = None, context_window_tokens: int = 200_000,
                   max_turns: int | None = None) -> Agent:
    """A pi trunk sample: `harness_agent` under (variant, dcp) with its session kept, snapshots and
    `arms` in shadow; at the end one prefix file per arm (`pi_prefix_path`, module docstring).

    Args:
        agent_name: the pi pin (``pi``, ``pi@1.6.0``).
        root: the run's fork directory (absolute).
        arms: every pi arm of the group as [variant, dcp], the trunk's own included.
        labels: the arms' labels (``variant × dcp × pin``) for the trunk's ``readbench:fork`` record
            (``{"role": "trunk", "arms": {label: {call, kind, reason}}}``, as the loop's trunk); default their arm keys.
        cache_models, context_window_tokens, max_turns: as `harness_agent`.

    Raises:
        ValueError: as `harness_agent`. Nothing is written when the harness fails (its forks then
            refuse to start, naming the missing prefix).
    """
    from readbench.agents.pi_fork import snapshot_for
    from readbench.agents.run import (
        CALL_TIMES_KEY,
        REPORTED_KEY,
        SESSION_TEXT_KEY,
        SHADOW_KEY,
        SIM_BEFORE_CALL_KEY,
        SNAPSHOTS_KEY,
        harness_agent,
    )
    from readbench.fork.snapshot import drop_mark, mark_workspace, take_snapshot

    inner = harness_agent(agent=agent_name, variant=variant, dcp=dcp, cache_models=cache_models,
                          context_window_tokens=context_window_tokens, max_turns=max_turns, keep_session=True,
                          snapshots=True, shadow=[list(a) for a in arms])

    async def execute(state: AgentState) -> AgentState:
        cwd = str(rbstore.workspace().get("cwd") or "")
        mark = await mark_workspace(sandbox(), cwd)
        try:
            state = await inner(state)
            final = (await take_snapshot(sandbox(), cwd, mark)).to_dict()
        except BaseException:
            _keep_out_of_log()
            raise
        finally:
            await drop_mark(sandbox(), mark)
        s = store()
        points, stop = s.get(SHADOW_KEY) or {}, s.get(rbstore.STOP_REASON)
        sample = {"messages": [m.model_dump(mode="json") for m in state.messages],
                  "output": state.output.model_dump(mode="json"), "final_snapshot": final,
                  "store": {k: s.get(k) for k in rbstore.SAMPLE_RESULT_KEYS}}
        info, sims, snaps = store_info(), s.get(SIM_BEFORE_CALL_KEY) or [], s.get(SNAPSHOTS_KEY) or {}
        summary = {}
        for (v, d), label in zip(arms, labels or [arm_key(v, d) for v, d in arms]):
            key = arm_key(v, d)
            point = dict(points[key])
            if point["kind"] == "never" and stop and key != arm_key(variant, dcp):
                point["kind"], point["reason"] = "cut", f"{point['reason']}: the trunk stopped on its {stop}"
            if point["kind"] in _TRUNK_SAMPLE:  # the trunk's whole trajectory: all its calls replayed
                point["call"] = len(s.get(rbstore.CALLS) or [])
            call = point["call"] + (1 if point["kind"] == "result" else 0)  # the request pi resumes at
            summary[label] = {k: point[k] for k in ("call", "kind", "reason")}
            prefix: dict[str, Any] = {"arm": [v, d], "arm_key": key, "cwd": cwd, "point": point}
            if point["kind"] in _TRUNK_SAMPLE:
                prefix["sample"] = sample
            else:
                prefix.update({"trunk": s.get(SESSION_TEXT_KEY), "sim": sims[call] if call < len(sims) else None,
                               "snapshot": snapshot_for(snaps, call),
                               "snapshot_call": max((int(k) for k in snaps if int(k) <= call), default=None),
                               "reported": s.get(REPORTED_KEY), "calls": s.get(rbstore.CALLS),
                               "times": s.get(CALL_TIMES_KEY)})
            path = pi_prefix_path(Path(root), *info, agent_name, key)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(prefix))
        s.set(FORK, {"role": "trunk", "arms": summary})
        _keep_out_of_log()
        return state

    return execute


def _keep_out_of_log() -> None:
    """Drop from the trunk sample's store (so from its .eval log: the store and the span's store-change
    events are written after the agent returns) what only its forks read, from the prefix files: the
    session text, the sim's memory per call, the shadow's fork points (the arms' own read results;
    ``readbench:fork`` keeps each arm's call, kind and reason); each workspace snapshot is reduced to its
    archive's size and the number of files it deletes (``{str(call): {"archive_bytes", "deleted"}}``)."""
    import base64

    from readbench.agents.run import SESSION_TEXT_KEY, SHADOW_KEY, SIM_BEFORE_CALL_KEY, SNAPSHOTS_KEY

    s = store()
    for key in (SESSION_TEXT_KEY, SIM_BEFORE_CALL_KEY, SHADOW_KEY):
        if key in s.keys():
            s.delete(key)
    if SNAPSHOTS_KEY in s.keys():
        s.set(SNAPSHOTS_KEY, {k: {"archive_bytes": len(base64.b64decode(v["archive_b64"])), "deleted": len(v["deleted"])}
                              for k, v in (s.get(SNAPSHOTS_KEY) or {}).items()})


def store_info() -> tuple[str, str, int]:
    """(model, sample id, epoch) of the running sample (the sample's ORACLE record, readbench.run.task)."""
    oracle = store().get(rbstore.ORACLE) or {}
    return str(get_model()), str(oracle.get("task_id")), int(oracle.get("epoch") or 1)


@agent
def pi_fork_agent(agent_name: str, variant: Any, dcp: Any, root: str, key: str,
                  cache_models: list[str] | None = None, context_window_tokens: int = 200_000,
                  max_turns: int | None = None) -> Agent:
    """A pi fork sample: the arm's prefix (`pi_prefix_path`) loaded, then pi resumed at the fork
    point, or the trunk's sample taken where the arm never left it (module docstring).

    Args:
        agent_name, variant, dcp: the arm; key: its readbench.fork.shadow.arm_key.
        root: the run's fork directory (absolute).
        cache_models, context_window_tokens, max_turns: as `harness_agent`.

    Raises:
        RuntimeError: the trunk left no prefix for this sample (its sample failed or did not run).
        ValueError: as `harness_agent`.
    """
    from readbench.agents.run import NOT_SPENT_KEY, harness_agent

    models = list(cache_models or ["anthropic-5m", "openai", "deepseek"])

    async def execute(state: AgentState) -> AgentState:
        cwd = str(rbstore.workspace().get("cwd") or "")
        model, sample_id, epoch = store_info()
        path = pi_prefix_path(Path(root), model, sample_id, epoch, agent_name, key)
        if not path.is_file():
            raise RuntimeError(f"pi fork: no prefix {path}: the pi trunk sample {sample_id} (epoch {epoch}, {model}) "
                               "did not finish; re-run to resume the trunk, or run this arm independently")
        text = path.read_text()
        trunk_cwd = json.loads(text)["cwd"]
        if trunk_cwd and trunk_cwd != cwd:  # another sandbox directory: the fork's own paths
            text = text.replace(json.dumps(trunk_cwd)[1:-1], json.dumps(cwd)[1:-1])
        prefix = json.loads(text)
        point = prefix["point"]
        summary = {"call": point["call"], "kind": point["kind"], "reason": point["reason"], "snapshot": None}
        nothing_spared = {"prefix_tokens": {"input": 0, "output": 0}, "prefix_cost_usd": {m: 0.0 for m in models}}
        prompts = (store().get(rbstore.ORACLE) or {}).get("prompts") or []
        if point["kind"] in _TRUNK_SAMPLE:
            state, spent = await _take_trunk_sample(state, prefix["sample"], cwd, models)
            summary["snapshot"] = "final"  # the trunk's workspace at its end, restored for the scorer
        elif len(prompts) > 1:  # a resumed pi runs only the prompt its cut session ends in
            summary = {"kind": "independent", "reason": MULTI_PROMPT}
            state = await harness_agent(agent=agent_name, variant=variant, dcp=dcp, cache_models=models,
                                        context_window_tokens=context_window_tokens, max_turns=max_turns)(state)
            point, spent = {"call": 0}, nothing_spared
        else:
            fork = {k: prefix[k] for k in ("trunk", "sim", "snapshot", "reported", "calls", "times")}
            fork.update({k: point[k] for k in ("call", "kind", "results", "dcp_state")})
            if prefix["snapshot_call"] is not None:  # the trunk's workspace before call k, restored
                summary["snapshot"] = f"call {prefix['snapshot_call']}"
            inner = harness_agent(agent=agent_name, variant=variant, dcp=dcp, cache_models=models,
                                  context_window_tokens=context_window_tokens, max_turns=max_turns, fork=fork)
            state = await inner(state)
            spent = store().get(NOT_SPENT_KEY) or nothing_spared  # none: forked at call 0, run from the prompts
        store().set(FORK, {"role": "fork", "arm": prefix["arm"], "prefix": str(path), "fork_point": summary,
                           "replayed_calls": _replayed(point), **spent})
        return state

    return execute


def _replayed(point: dict[str, Any]) -> int:
    """The trunk's calls a fork at `point` reuses, as the loop's forks count them (readbench.fork.trunk):
    the calls before the fork call, and the fork call itself for a ``result`` fork (its reply is shared)."""
    return int(point["call"]) + (1 if point.get("kind") == "result" else 0)


async def _take_trunk_sample(state: AgentState, sample: dict[str, Any], cwd: str,
                             cache_models: list[str]) -> tuple[AgentState, dict[str, Any]]:
    """The trunk's sample as this fork's: its final workspace restored, its messages, output and
    result store keys (readbench.base.store.SAMPLE_RESULT_KEYS); returns (state, what was not spent:
    every call, at the trunk's whole cost)."""
    from readbench.fork.snapshot import Snapshot, restore_snapshot

    await restore_snapshot(sandbox(), cwd, Snapshot.from_dict(sample["final_snapshot"]))
    state.messages = TypeAdapter(list[ChatMessage]).validate_python(sample["messages"])
    state.output = ModelOutput.model_validate(sample["output"])
    for k, v in sample["store"].items():
        if v is not None:
            store().set(k, v)
    calls = sample["store"].get(rbstore.CALLS) or []
    metrics = sample["store"].get(rbstore.CACHE_METRICS) or {}
    spent = {"prefix_tokens": {"input": sum(c.get("prompt_tokens") or 0 for c in calls),
                               "output": sum(c.get("output_tokens") or 0 for c in calls)},
             "prefix_cost_usd": {m: metrics.get(f"cost_usd_{m}") for m in cache_models}}
    return state, spent
