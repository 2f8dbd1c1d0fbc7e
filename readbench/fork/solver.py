"""The fork sample's setup: after the ordinary setup (readbench.run.task.setup_workspace), start
the sample at its arm's fork point (GitHub issue 25 item 2).

It finds the prefix the trunk wrote for this (model, sample, epoch, arm), restores the trunk's
workspace at the fork point (readbench.fork.snapshot), puts the model provider's memory
(``readbench:sim``) and the arm's read session there into the store, and records in the store
(``readbench:fork``, logged with the sample) that this is a fork, of which arm, from which
prefix, at which call and of which kind. The agent loop then replays the prefix
(readbench.agent._forking.Replay) and runs on live.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox, store

from readbench.base import store as rbstore
from readbench.fork.prefix import FORK, load_prefix, prefix_path, snapshot_path
from readbench.fork.snapshot import Snapshot, restore_snapshot

__all__ = ["fork_setup"]


@solver
def fork_setup(root: str, arm_key: str) -> Solver:
    """Start a fork sample at its prefix (see the module docstring).

    Args:
        root: the run's fork directory (results/<run>/fork).
        arm_key: readbench.fork.shadow.arm_key of the sample's arm.

    Raises:
        RuntimeError: the trunk left no prefix for this sample (it did not finish: run the
            trunk again, or this arm independently), or the workspace could not be restored.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cwd = store().get(rbstore.WORKSPACE, {}).get("cwd", "")
        model = str(get_model())
        path = prefix_path(Path(root), model, str(state.sample_id), state.epoch, arm_key)
        if not path.is_file():
            raise RuntimeError(f"fork: no prefix {path}: the trunk sample {state.sample_id} (epoch {state.epoch}, "
                               f"{model}) did not finish; re-run to resume the trunk, or run this arm independently")
        prefix = load_prefix(path, cwd)
        fork = prefix.fork
        if fork.snapshot is not None:
            snap = snapshot_path(Path(root), model, str(state.sample_id), state.epoch, fork.call)
            await restore_snapshot(sandbox(), cwd, Snapshot.from_dict(json.loads(snap.read_text())))
        if fork.sim is not None:
            store().set(rbstore.SIM, fork.sim)
        if fork.read_session is not None:
            store().set(rbstore.READ_SESSION, fork.read_session)
        store().set(FORK, {"role": "fork", "arm": prefix.arm, "prefix": str(path), "fork_point": fork.summary(),
                           "replayed_calls": prefix.replayed_calls})
        return state

    return solve
