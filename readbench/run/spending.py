"""Set up a run's spending limits before eval_set starts (`readbench eval --budget-usd`,
``--sequential``): the price source, the spend already in the run's logs, and the refusals of a
budget that is already spent (readbench.base.budget; GitHub issue 25 item 5)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from readbench.analysis.arms import LOOP_AGENT
from readbench.base.budget import Budget, spec_label, spent_in_logs, use

__all__ = ["sequential_decider", "start_budget"]


def sequential_decider(budget: Budget, plan: Any, alpha: float = 0.05) -> Callable[[], str | None]:
    """The ``--sequential`` stop: every compared arm (each arm but the baseline, stock × off, per
    model) is decided by its anytime-valid confidence sequence at ``alpha / k``
    (readbench.analysis.sequential), over the paired success differences of the longest prefix of
    the dataset (task order, then epoch) on which both arms finished, so the data arrive in an
    order fixed before the run. delta is the matrix's smallest success difference.

    Returns:
        A callable giving the reason to stop (every decision, one per arm) or None.
    """
    from readbench.analysis.sequential import decided

    m = plan.matrix
    labels = [f"{spec_label(v)} × {spec_label(d)}" for v, d in m.arms()]
    baseline = "stock × off"
    order = [(str(s.id), e) for s in plan.tasks[0].dataset for e in range(1, m.epochs + 1)]
    compared = [(model, a) for model in plan.models for a in labels if a != baseline]
    level = alpha / max(len(compared), 1)
    delta = m.smallest.success_pp / 100.0

    def check() -> str | None:
        reasons = []
        for model, arm in compared:
            base = budget.outcomes.get((model, baseline), {})
            treat = budget.outcomes.get((model, arm), {})
            diffs = []
            for key in order:
                if key not in base or key not in treat:
                    break
                diffs.append(treat[key] - base[key])
            verdict = decided(diffs, level, delta)
            if verdict is None:
                return None
            reasons.append(f"{arm} after {len(diffs)} pairs: {verdict}")
        return "every compared arm decided: " + "; ".join(reasons) if reasons else None

    return check


def start_budget(plan: Any, run_dir: Path, budget_usd: float | None, sequential: bool = False) -> Budget | None:
    """Make the run's `Budget` active for this process (None and nothing active without a limit).

    Args:
        plan: the checked run (readbench.run.runner.RunPlan).
        run_dir: ``results/<run-id>``: the spend of the samples already in its logs counts.
        budget_usd: ``--budget-usd`` (None: no limit).
        sequential: ``--sequential``: stop starting samples once `sequential_decider` decides.

    Raises:
        ValueError: a budget that is not a positive number, or one with an arm run by a real
            harness (readbench's loop alone prices its calls as it goes).
    """
    if budget_usd is None and not sequential:
        use(None)
        return None
    harnesses = sorted({a for _, _, a in plan.matrix.agent_arms() if a != LOOP_AGENT})
    if harnesses:
        raise ValueError(f"--budget-usd: arms run by {', '.join(harnesses)} are not priced as they go "
                         "(only readbench's own loop is); run them without a budget")
    model = plan.matrix.cache_models[0]
    budget = Budget(budget_usd, model)
    if sequential:
        labels = [f"{spec_label(v)} × {spec_label(d)}" for v, d in plan.matrix.arms()]
        if "stock × off" not in labels or len(labels) < 2:
            raise ValueError("--sequential compares arms with the baseline stock × off: the matrix needs that arm "
                             "and at least one other")
        budget.decided = sequential_decider(budget, plan)
    budget.spent_usd = spent_in_logs(run_dir, model, budget.outcomes if sequential else None)
    use(budget)
    return budget
