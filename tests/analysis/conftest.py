"""Fixtures for readbench.analysis tests: real inspect `.eval` logs made offline.

`make_logs` runs a stand-in ``read_strategies`` task through `inspect_ai.eval` with
``mockllm/model`` and no model call: its solver does nothing (or raises, to make an errored
sample) and its scorer ``readbench`` returns the flat metadata contract of
readbench/metrics/scorer.py with values chosen by the test. So the table reader is tested on
logs written by inspect itself, not on hand-built JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import pandas as pd

SAMPLES = [
    # id, source, family
    ("repoA/locate/1", "repoA", "locate"),
    ("repoA/locate/2", "repoA", "locate"),
    ("repoB/edit/1", "repoB", "edit"),
]


def _make_task(metrics_for: Callable[[str, str, str, int], dict[str, Any] | None], fail_ids: set[str]):
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Score, accuracy, scorer
    from inspect_ai.solver import solver

    @solver
    def noop(fail: frozenset[str]):
        async def solve(state, generate):
            if str(state.sample_id) in fail:
                raise RuntimeError("sandbox exploded")
            return state

        return solve

    @scorer(metrics=[accuracy()], name="readbench")
    def readbench_scorer(variant: str, dcp: str):
        async def score(state, target):
            meta = metrics_for(variant if isinstance(variant, str) else variant["name"], dcp,
                               str(state.sample_id), state.epoch)
            return Score(value=meta["success"], metadata=meta)

        return score

    @task
    def read_strategies(variant: Any = "stock", dcp: str = "off", cache_models: Any = "anthropic-5m,openai"):
        samples = [
            Sample(id=sid, input="find it", metadata={"family": fam, "source": src, "file": "a.py",
                                                      "file_lines": 1200, "target_line": 77})
            for sid, src, fam in SAMPLES
        ]
        return Task(dataset=MemoryDataset(samples), solver=noop(frozenset(fail_ids)),
                    scorer=readbench_scorer(variant, dcp), name="read_strategies")

    return read_strategies


def contract_metrics(success: float, stop_reason: str, base: float, models=("anthropic-5m", "openai")) -> dict[str, Any]:
    """A full scorer-contract metadata dict; numeric metrics derived from `base` so tests can predict them."""
    from readbench.analysis.table import BASE_METRICS, CACHE_METRICS

    meta: dict[str, Any] = {}
    for i, name in enumerate(BASE_METRICS):
        meta[name] = base + i
    meta["success"] = success
    meta["stop_reason"] = stop_reason
    for j, m in enumerate(models):
        for k, name in enumerate(CACHE_METRICS):
            meta[f"{name}_{m}"] = base + 100 * (j + 1) + k
    return meta


@pytest.fixture
def make_logs(tmp_path: Path):
    """Return ``make(arms, metrics_for, fail_ids=(), epochs=1) -> log_dir``."""

    def make(arms: list[dict[str, Any]], metrics_for, fail_ids=(), epochs: int = 1) -> Path:
        from inspect_ai import eval as inspect_eval

        read_strategies = _make_task(metrics_for, set(fail_ids))
        log_dir = tmp_path / "logs"
        tasks = [read_strategies(**arm) for arm in arms]
        logs = inspect_eval(tasks, model="mockllm/model", log_dir=str(log_dir), display="none",
                            fail_on_error=False, epochs=epochs, max_tasks=4)
        assert all(log.status in ("success", "error") for log in logs)
        return log_dir

    return make


def synthetic_table(rows: list[dict[str, Any]], cache_models=("openai",)) -> "pd.DataFrame":
    """A tidy table with every column of `table.tidy_table`; unspecified metrics are NaN.

    Each row dict needs variant, dcp, sample_id, source, family; model defaults to
    ``readbench/sim-mixed``, epoch to 1, error/limit to "".
    """
    import pandas as pd

    from readbench.analysis.arms import arm_label
    from readbench.analysis.table import BASE_METRICS, CACHE_METRICS, IDENTITY_COLUMNS

    cols = list(IDENTITY_COLUMNS) + list(BASE_METRICS) + [f"{n}_{m}" for m in cache_models for n in CACHE_METRICS]
    out = []
    for r in rows:
        row: dict[str, Any] = {c: float("nan") for c in cols}
        row.update({"run_id": "r1", "eval_set_id": "", "eval_id": "e", "log": "x.eval", "task_name": "read_strategies",
                    "model": "readbench/sim-mixed", "cache_models": ",".join(cache_models), "epoch": 1,
                    "file": "a.py", "error": "", "limit": "", "stop_reason": "", "agent": "readbench"})
        row.update(r)
        row["arm"] = arm_label(row["variant"], row["dcp"], row["model"], row["agent"])
        out.append(row)
    return pd.DataFrame(out, columns=cols)
