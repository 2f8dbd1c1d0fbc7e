"""The forked design of a matrix run (`design: forked`, `readbench eval --design forked`;
GitHub issue 25).

Per task x epoch x model one trunk runs under the matrix's FIRST arm (``variants[0] x dcp[0]``)
and shadows every arm (readbench.fork.trunk): the trunk eval goes to ``<run>/trunk``, the prefixes
and workspace snapshots to ``<run>/fork``. Then one ordinary inspect eval per arm (the first arm
included) goes to ``<run>/logs``, exactly where an independent run puts its logs: each of its
samples starts from the arm's prefix (readbench.fork.solver) and replays the trunk's replies up
to the fork point, then runs live. So eval_set's resume and retries, the k8s sandbox, the table
and the report work unchanged; an arm that never diverges replays the whole trunk trajectory and
makes no model call.

Soundness (shared/specs/agents.md §6, coupling): below its fork point an arm's inputs are the
trunk's, so each arm's marginal distribution is that of an independent run; with the seeded
simulated agent the per-arm tables are equal (tests/fork).

What it saves: the calls below each fork point. An arm whose system prompt or tool schemas differ
from the trunk's forks at call 0 and costs what an independent run costs; readbench's built-in
read presets other than stock all send another ``read`` description than stock, so against a
stock trunk only DCP arms (and presets sharing the trunk's schema, e.g. B / B+dedup / B-soft
against a B trunk) are saved anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readbench.analysis.arms import spec_name
from readbench.fork.shadow import arm_key

__all__ = ["forked_tasks", "trunk_arm"]


def trunk_arm(matrix: Any) -> tuple[Any, Any]:
    """The arm the trunk runs under: the matrix's first arm (``variants[0] x dcp[0]``)."""
    return matrix.arms()[0]


def forked_tasks(matrix: Any, sandbox_kind: str, root: Path) -> tuple[Any, list[Any]]:
    """The trunk task and one fork task per arm (in `Matrix.arms` order).

    Args:
        matrix: the resolved matrix (readbench.run.matrix.Matrix).
        sandbox_kind: the resolved sandbox kind.
        root: absolute directory for prefixes and snapshots (``<run>/fork``).

    Raises:
        ValueError: as readbench.run.task.read_strategies_task.
    """
    from readbench.run.task import read_strategies

    arms = [[v, d] for v, d in matrix.arms()]
    labels = [f"{spec_name(v)} × {spec_name(d)}" for v, d in arms]
    variant, dcp = trunk_arm(matrix)
    trunk = read_strategies(variant=variant, dcp=dcp, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                            fork={"role": "trunk", "root": str(root), "arms": arms, "labels": labels},
                            **matrix.task_args)
    forks = [read_strategies(variant=v, dcp=d, cache_models=matrix.cache_models, sandbox_kind=sandbox_kind,
                             fork={"role": "fork", "root": str(root), "arm_key": arm_key(v, d)}, **matrix.task_args)
             for v, d in arms]
    return trunk, forks
