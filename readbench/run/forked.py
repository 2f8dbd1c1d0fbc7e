"""The forked design of a matrix run (`design: forked`, `readbench eval --design forked`;
GitHub issue 25).

Per task x epoch x model one trunk runs per SCHEMA GROUP: the arms whose first request is the
same (same system prompt and tool schemas, so only their tool results or DCP projections can
differ) share a trunk under the group's first arm in `Matrix.arms` order, which shadows every arm
of the group (readbench.fork.trunk). An arm of another group would fork at call 0 of that trunk
anyway; as its own group's trunk it is paid once and its fork replays it whole. With one group
(e.g. stock under every DCP configuration) this is one trunk under the matrix's first arm. The
trunk evals go to ``<run>/trunk``, the prefixes and workspace snapshots to ``<run>/fork``. Then one ordinary inspect eval per arm (the first arm
included) goes to ``<run>/logs``, exactly where an independent run puts its logs: each of its
samples starts from the arm's prefix (readbench.fork.solver) and replays the trunk's replies up
to the fork point, then runs live. So eval_set's resume and retries, the k8s sandbox, the table
and the report work unchanged; an arm that never diverges replays the whole trunk trajectory and
makes no model call.

Real harnesses (pi, Claude Code, Codex; the matrix's `agents`): their arms run independently,
as ordinary evals in ``<run>/logs`` beside the forks, and the report's divergence table names them
"run independently", with the reason (readbench.analysis.divergence.NOT_FORKED). A fork resumes
readbench's loop from a prefix of messages. A pi trunk finds its arms' fork points in shadow and pi
can be restarted from its session cut there (readbench.agents.pi_shadow, pi_fork: tested against
independent pi runs), but pi trunk and fork evals are not built here yet; Claude Code 2.1.332
resumes only with a new prompt, which changes the request
(issue 25 item 2: "where one cannot, say so and run that arm independently").

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

__all__ = ["forked_tasks", "schema_groups"]


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
    """One trunk task per schema group (`schema_groups`) and one fork task per arm of readbench's
    loop (in `Matrix.arms` order), then one ordinary task per arm of a real harness (run
    independently: see the module docstring).

    Args:
        matrix: the resolved matrix (readbench.run.matrix.Matrix).
        sandbox_kind: the resolved sandbox kind.
        root: absolute directory for prefixes and snapshots (``<run>/fork``).

    Returns:
        ``(trunk tasks, one task per arm in `Matrix.agent_arms` order: a fork for an arm of
        readbench's loop, an ordinary task for a real harness's)``; no trunk when the matrix has no
        arm of readbench's loop.

    Raises:
        ValueError: as readbench.run.task.read_strategies_task.
    """
    from readbench.harness.agents import LOOP
    from readbench.run.task import read_strategies

    arms = [[v, d] for v, d, a in matrix.agent_arms() if a == LOOP]
    labels = [f"{spec_name(v)} × {spec_name(d)}" for v, d in arms]
    trunks = []
    for group in schema_groups(arms):
        variant, dcp = arms[group[0]]
        trunks.append(read_strategies(
            variant=variant, dcp=dcp, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
            fork={"role": "trunk", "root": str(root), "arms": [arms[i] for i in group],
                  "labels": [labels[i] for i in group]}, **matrix.task_args))
    # in `Matrix.agent_arms` order (the run's progress rows pair them with it)
    tasks = [read_strategies(variant=v, dcp=d, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                             fork={"role": "fork", "root": str(root), "arm_key": arm_key(v, d)}, **matrix.task_args)
             if a == LOOP else
             read_strategies(variant=v, dcp=d, agent=a, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                             **matrix.task_args)
             for v, d, a in matrix.agent_arms()]
    return trunks, tasks
