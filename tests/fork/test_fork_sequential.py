"""`readbench eval --sequential` (GitHub issue 25 item 5): the stop rule over recorded outcomes
(readbench.run.spending.sequential_decider) and the gate that refuses further samples."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from readbench.analysis.smallest import SmallestDifference
from readbench.base.budget import Budget, BudgetStop, gate, use
from readbench.run.spending import sequential_decider

MODEL = "readbench/sim-pager"


def _plan(n_tasks, arms):
    dataset = [SimpleNamespace(id=f"t{i:03d}") for i in range(n_tasks)]
    matrix = SimpleNamespace(arms=lambda: arms, epochs=1, smallest=SmallestDifference(success_pp=40.0))
    return SimpleNamespace(matrix=matrix, models=[MODEL], tasks=[SimpleNamespace(dataset=dataset)])


def _record(budget, arm, values, start=0):
    for i, v in enumerate(values, start=start):
        budget.outcomes.setdefault((MODEL, arm), {})[(f"t{i:03d}", 1)] = float(v)


def test_decides_only_when_every_compared_arm_is_decided_on_the_dataset_prefix():
    plan = _plan(200, [("stock", "off"), ("B", "off"), ("stock", "pi-dcp")])
    budget = Budget(None, "openai")
    check = sequential_decider(budget, plan)
    _record(budget, "stock × off", [0] * 200)
    _record(budget, "B × off", [1] * 200)  # +100 pp on every task: decided early
    assert check() is None  # stock × pi-dcp has no pair yet
    _record(budget, "stock × pi-dcp", [0] * 40)  # no difference after 40 pairs: not yet inside ±40 pp (50 are)
    assert check() is None
    _record(budget, "stock × pi-dcp", [0] * 160, start=40)
    reason = check()
    assert reason is not None and reason.startswith("every compared arm decided: B × off after 200 pairs: differs (CS +")
    assert "stock × pi-dcp after 200 pairs: equivalent within ±0.400" in reason
    # pairs count only along the dataset order: a missing task ends the prefix
    del budget.outcomes[(MODEL, "stock × pi-dcp")][("t010", 1)]
    assert check() is None


def test_gate_refuses_once_decided_and_names_why():
    plan = _plan(100, [("stock", "off"), ("B", "off")])
    budget = Budget(None, "openai")
    budget.decided = sequential_decider(budget, plan)
    use(budget)
    try:
        gate()  # nothing decided: the sample starts
        _record(budget, "stock × off", [0] * 100)
        _record(budget, "B × off", [1] * 100)
        with pytest.raises(BudgetStop, match=r"^sequential stop: every compared arm decided: B × off after 100 pairs"):
            gate()
        assert budget.samples_refused == 1
    finally:
        use(None)
