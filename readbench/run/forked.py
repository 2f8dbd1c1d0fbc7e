"""The forked design of a matrix run (`design: forked`, `readbench eval --design forked`;
GitHub issue 25).

Per task x epoch x model one trunk runs per SCHEMA GROUP of two or more arms: the arms whose
first request is the same (same system prompt and tool schemas, so only their tool results or DCP
projections can differ) share a trunk under the group's first arm in `Matrix.arms` order, which
shadows every arm of the group (readbench.fork.trunk). An arm of another group would fork at call 0
of that trunk anyway; as its own group's trunk it is paid once and its fork replays it whole. With
one group (e.g. stock under every DCP configuration) this is one trunk under the matrix's first arm.
An arm ALONE in its group runs as an ordinary independent eval (no trunk, no fork): its trunk would
be its own trajectory, paid once and then replayed once by its fork, which saves no model call and
cost the nightly matrix's 3 such arms (C, swe-agent, claude-code) a second sample's CPU each;
the report's divergence table names it "run independently"
(readbench.analysis.divergence.ALONE). The
trunk evals go to ``<run>/trunk``, the prefixes and workspace snapshots to ``<run>/fork``. Then one ordinary inspect eval per arm (the first arm
included) goes to ``<run>/logs``, exactly where an independent run puts its logs: each of its
samples starts from the arm's prefix (readbench.fork.solver) and replays the trunk's replies up
to the fork point, then runs live. So eval_set's resume and retries, the k8s sandbox, the table
and the report work unchanged; an arm that never diverges replays the whole trunk trajectory and
makes no model call.

pi (the matrix's `agents`: ``pi``, ``pi@1.6.0``): per pin one group of every pi arm (`pi_groups`: an
arm's read preset is an extension that only refuses calls, so all send pi's first request), one pi
trunk task under the group's first arm, then one pi fork task per arm (readbench.agents.pi_forked:
the trunk shadows the group's arms, readbench.agents.pi_shadow; a fork resumes pi on the trunk's
session cut at its fork point, the workspace restored, readbench.agents.pi_fork; an arm that never
left the trunk takes the trunk's sample). Claude Code and Codex arms run independently, as ordinary
evals in ``<run>/logs`` beside the forks, and the report's divergence table names them "run
independently", with the reason (readbench.analysis.divergence.NOT_FORKED: Claude Code 2.1.332
resumes only with a new prompt, which changes the request; issue 25 item 2: "where one cannot, say
so and run that arm independently").

Soundness (docs/specs/agents.md §6, coupling): below its fork point an arm's inputs are the
trunk's, so each arm's marginal distribution is that of an independent run; with the seeded
simulated agent the per-arm tables are equal (tests/fork).

What it saves: the calls below each fork point. readbench's built-in read presets other than
stock all send another ``read`` description than stock, so a stock trunk saves only its DCP
arms anything; B, B-soft, B+dedup and B+dedup-naive share one description and form one group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readbench.analysis.arms import spec_name
from readbench.fork.shadow import arm_key

__all__ = ["forked_tasks", "pi_groups", "schema_groups"]


def schema_groups(arms: list[list[Any]]) -> list[list[int]]:
    """Indices of ``arms`` grouped by their first request's fixed part: the system prompt (with
    a placeholder cwd) and the tool schemas of the arm's read preset; groups and members in
    ``arms`` order.

    Raises:
        ValueError: an unknown read preset.
    """
    from readbench.agent._forking import infos_json
    from readbench.agent.loop import tool_infos
    from readbench.agent.prompt import system_prompt
    from readbench.read import get_variant
    from readbench.tools import make_tools

    groups: dict[tuple[str, str], list[int]] = {}
    for i, (variant_spec, _) in enumerate(arms):
        variant = get_variant(variant_spec)
        key = (system_prompt(variant, "/cwd"), infos_json(tool_infos(make_tools(variant))))
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def forked_tasks(matrix: Any, sandbox_kind: str, root: Path) -> tuple[list[Any], list[Any]]:
    """One trunk task per schema group of two or more arms of readbench's loop (`schema_groups`) and
    per pi pin (`pi_groups`), then one task per arm (in `Matrix.agent_arms` order): a fork for an arm
    of readbench's loop in such a group or of pi, an ordinary task for an arm of the loop alone in its
    group and for another real harness's (run independently: see the module docstring).

    Args:
        matrix: the resolved matrix (readbench.run.matrix.Matrix).
        sandbox_kind: the resolved sandbox kind.
        root: absolute directory for prefixes and snapshots (``<run>/fork``).

    Returns:
        ``(trunk tasks: the loop's groups, then pi's, one task per arm in `Matrix.agent_arms` order)``;
        no trunk when the matrix has no arm of readbench's loop or pi.

    Raises:
        ValueError: as readbench.run.task.read_strategies_task.
    """
    from readbench.harness.agents import LOOP
    from readbench.run.task import read_strategies

    arms = [[v, d] for v, d, a in matrix.agent_arms() if a == LOOP]
    labels = [f"{spec_name(v)} × {spec_name(d)}" for v, d in arms]
    trunks, alone = [], set()
    for group in schema_groups(arms):
        if len(group) == 1:  # a trunk would be this arm's own trajectory, paid and then replayed whole
            alone.add(arm_key(*arms[group[0]]))
            continue
        variant, dcp = arms[group[0]]
        trunks.append(read_strategies(
            variant=variant, dcp=dcp, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
            fork={"role": "trunk", "root": str(root), "arms": [arms[i] for i in group],
                  "labels": [labels[i] for i in group]}, **matrix.task_args))
    pis = pi_groups(matrix.agent_arms())
    for agent, pi_arms in pis.items():
        pi_labels = [f"{spec_name(v)} × {spec_name(d)} × {agent}" for v, d in pi_arms]
        trunks.append(read_strategies(
            variant=pi_arms[0][0], dcp=pi_arms[0][1], agent=agent, cache_models=matrix.cache_models,
            sandbox_kind=sandbox_kind, fork={"role": "trunk", "root": str(root), "arms": pi_arms, "labels": pi_labels},
            **matrix.task_args))

    def task(v: Any, d: Any, a: str) -> Any:
        extra: dict[str, Any] = {} if a == LOOP else {"agent": a}
        if (a == LOOP and arm_key(v, d) not in alone) or a in pis:
            extra["fork"] = {"role": "fork", "root": str(root), "arm_key": arm_key(v, d)}
        return read_strategies(variant=v, dcp=d, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                               **extra, **matrix.task_args)

    # in `Matrix.agent_arms` order (the run's progress rows pair them with it)
    return trunks, [task(v, d, a) for v, d, a in matrix.agent_arms()]


def pi_groups(agent_arms: list[tuple[Any, Any, str]]) -> dict[str, list[list[Any]]]:
    """The pi arms of a matrix per pi pin (``pi``, ``pi@1.6.0``), as [variant, dcp] in ``agent_arms``
    order: one group each, its first arm the trunk's. Every pi arm of a pin sends the same first request
    (pi's system prompt and tool schemas: an arm's read preset is an extension that only refuses calls,
    readbench.agents.pi_extension), so the group shares one trunk (readbench.agents.pi_forked)."""
    from readbench.harness.agents import LOOP, get_agent

    groups: dict[str, list[list[Any]]] = {}
    for v, d, a in agent_arms:
        harness = None if a == LOOP else get_agent(a).harness
        if harness is not None and harness.name == "pi":
            groups.setdefault(a, []).append([v, d])
    return groups
