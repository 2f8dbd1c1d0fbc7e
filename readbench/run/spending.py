"""Set up a run's spending limits before eval_set starts (`readbench eval --budget-usd`,
``--sequential``): the price source, the spend already in the run's logs, and the refusals of a
budget that is already spent (readbench.base.budget; GitHub issue 25 item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readbench.analysis.arms import LOOP_AGENT
from readbench.base.budget import Budget, spent_in_logs, use

__all__ = ["start_budget"]


def start_budget(plan: Any, run_dir: Path, budget_usd: float | None) -> Budget | None:
    """Make the run's `Budget` active for this process (None and nothing active without a limit).

    Args:
        plan: the checked run (readbench.run.runner.RunPlan).
        run_dir: ``results/<run-id>``: the spend of the samples already in its logs counts.
        budget_usd: ``--budget-usd`` (None: no limit).

    Raises:
        ValueError: a budget that is not a positive number, or one with an arm run by a real
            harness (readbench's loop alone prices its calls as it goes).
    """
    if budget_usd is None:
        use(None)
        return None
    harnesses = sorted({a for _, _, a in plan.matrix.agent_arms() if a != LOOP_AGENT})
    if harnesses:
        raise ValueError(f"--budget-usd: arms run by {', '.join(harnesses)} are not priced as they go "
                         "(only readbench's own loop is); run them without a budget")
    model = plan.matrix.cache_models[0]
    budget = Budget(budget_usd, model)
    budget.spent_usd = spent_in_logs(run_dir, model)
    use(budget)
    return budget
