"""Spending limits of a run (`readbench eval --budget-usd`, `--sequential`; GitHub issue 25 item 5).

Spend is priced as the run goes at the list prices of one cache model (the matrix's first
``cache_models`` entry unless named): each sample's simulated cost under that model
(docs/specs/metrics.md "Prompt cache and cost": ``cost_usd_{model}``, the cache simulator's
price of the exact requests), less what a fork sample replayed from its trunk (those calls
were paid once, by the trunk; readbench.agent._forking.Replay.not_spent). A sample is charged
when it ends, finished or not; a resumed run starts from the spend of every sample already in
its logs (`spent_in_logs`).

Stopping is clean: the limit is checked when a sample STARTS (`gate`, called by the task's
setup). Once the spend reaches the budget (or, with ``--sequential``, once every compared arm
is decided, readbench.analysis.sequential), no further sample starts: each is refused with
`BudgetStop` before it makes a model call, so it errors at no cost and its arm's log is left
incomplete. Samples already running finish and are charged, so the spend can pass the budget
by at most the samples running at once. The run then reports how far it got and exits non-zero
(it did not finish); running the same command again with a larger ``--budget-usd`` resumes,
keeping every finished sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .names import spec_name

__all__ = ["Budget", "BudgetStop", "active", "charge", "gate", "record_outcome", "sample_spend", "spec_label", "spent_in_logs", "use"]


class BudgetStop(RuntimeError):
    """A sample refused at its start: the budget is spent or every compared arm is decided."""


@dataclass
class Budget:
    """One run's spending state (in this process).

    Attributes:
        limit_usd: the budget in USD (> 0), or None for no spend limit (``--sequential`` alone).
        cache_model: the cache model whose list prices price the spend.
        spent_usd: spend so far: the logs' samples at the start plus each sample charged since.
        samples_charged: samples charged in this process.
        samples_refused: samples refused by `gate` in this process.
        decided: a callable returning a reason (str) once sequential stopping applies, else None.
        stop_reason: why samples are being refused (None while none is).
    """

    limit_usd: float | None
    cache_model: str
    spent_usd: float = 0.0
    samples_charged: int = 0
    samples_refused: int = 0
    decided: Callable[[], str | None] | None = None
    stop_reason: str | None = None
    outcomes: dict[tuple[str, str], dict[tuple[str, int], float]] = field(default_factory=dict)
    """Success per (model, arm label) per (sample id, epoch): finished samples (``--sequential``)."""
    arms_by_eval: dict[str, str] = field(default_factory=dict)
    """The arm label of each running eval (inspect's eval id), set by the agent loop."""

    def __post_init__(self) -> None:
        if self.limit_usd is not None and (not math.isfinite(self.limit_usd) or self.limit_usd <= 0):
            raise ValueError(f"--budget-usd must be a positive number of USD, got {self.limit_usd!r}")

    def describe(self) -> str:
        """One line: spend against the budget and the price source."""
        limit = f" of {self.limit_usd:.4f}" if self.limit_usd is not None else ""
        return f"spent {self.spent_usd:.4f}{limit} USD at {self.cache_model} list prices"


_ACTIVE: Budget | None = None


def use(budget: Budget | None) -> None:
    """Make ``budget`` this process's run budget (None: no limit; `gate` and `charge` do nothing)."""
    global _ACTIVE
    _ACTIVE = budget


def active() -> Budget | None:
    """This process's run budget, or None."""
    return _ACTIVE


def gate() -> None:
    """Refuse to start a sample once the budget is spent or every compared arm is decided.

    Raises:
        BudgetStop: naming the spend and the budget (or the sequential decision).
    """
    b = _ACTIVE
    if b is None:
        return
    if b.stop_reason is None and b.limit_usd is not None and b.spent_usd >= b.limit_usd:
        b.stop_reason = f"budget spent: {b.describe()}"
    if b.stop_reason is None and b.decided is not None:
        reason = b.decided()
        if reason is not None:
            b.stop_reason = f"sequential stop: {reason}"
    if b.stop_reason is not None:
        b.samples_refused += 1
        raise BudgetStop(f"{b.stop_reason}; this sample did not start (re-run with a larger --budget-usd to resume)")


def sample_spend(cache_metrics: dict[str, Any] | None, fork: dict[str, Any] | None, cache_model: str) -> float:
    """What one sample paid at ``cache_model``'s list prices: its simulated cost less the cost of
    the calls a fork replayed from its trunk.

    Args:
        cache_metrics: the sample's ``readbench:cache_metrics`` store entry (None: no priced call).
        fork: its ``readbench:fork`` store entry (None or a trunk's: nothing replayed).
        cache_model: a cache model the run priced.

    Returns:
        USD, >= 0.

    Raises:
        ValueError: the sample was priced but not under ``cache_model``.
    """
    if not cache_metrics:
        return 0.0
    key = f"cost_usd_{cache_model}"
    if key not in cache_metrics:
        raise ValueError(f"the budget's cache model {cache_model!r} did not price this run's samples "
                         f"(priced: {sorted(k[9:] for k in cache_metrics if k.startswith('cost_usd_') and 'unpruned' not in k)})")
    replayed = ((fork or {}).get("prefix_cost_usd") or {}).get(cache_model) or 0.0
    return max(float(cache_metrics[key]) - float(replayed), 0.0)


def charge(cache_metrics: dict[str, Any] | None, fork: dict[str, Any] | None, arm: str | None = None) -> None:
    """Add one ended sample's spend (`sample_spend`) to the active budget; nothing without one.

    Args:
        arm: the sample's arm label (``variant × dcp``) for `record_outcome`; None for a trunk
            sample (its outcome is its first arm's fork's, recorded there).
    """
    b = _ACTIVE
    if b is None:
        return
    if arm is not None:
        from inspect_ai.log._samples import sample_active

        active_sample = sample_active()
        if active_sample is not None:
            b.arms_by_eval[active_sample.eval_id] = arm
    spend = sample_spend(cache_metrics, fork, b.cache_model)
    b.spent_usd += spend
    b.samples_charged += 1


def record_outcome(success: float) -> None:
    """Record the scored sample's success for sequential stopping (nothing without an active
    budget, or for a sample whose arm the loop did not name, e.g. a trunk's)."""
    b = _ACTIVE
    if b is None:
        return
    from inspect_ai.log._samples import sample_active

    s = sample_active()
    if s is None or s.eval_id not in b.arms_by_eval:
        return
    b.outcomes.setdefault((s.model, b.arms_by_eval[s.eval_id]), {})[(str(s.sample.id), s.epoch)] = float(success)


def spent_in_logs(run_dir: Path, cache_model: str, outcomes: dict[tuple[str, str], dict[tuple[str, int], float]]
                  | None = None) -> float:
    """Spend of every sample already in a run's logs (``logs`` and the forked design's ``trunk``).

    Args:
        outcomes: when given, filled like `Budget.outcomes` with the success of every scored
            sample in ``logs`` (a resumed ``--sequential`` run counts them).

    Raises:
        ValueError: as `sample_spend`.
    """
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_samples

    from .store import CACHE_METRICS, FORK

    total = 0.0
    for sub in ("trunk", "logs"):
        if not (run_dir / sub).is_dir():
            continue
        for info in list_eval_logs(str(run_dir / sub)):
            try:
                samples = list(read_eval_log_samples(info.name, all_samples_required=False))
            except Exception:  # noqa: BLE001 - an unreadable log is set aside by prepare_log_dir and re-run
                continue
            key: tuple[str, str] | None = None
            if sub == "logs" and outcomes is not None and samples:
                header = read_eval_log(info.name, header_only=True).eval
                args = header.task_args or {}
                key = (header.model, f"{spec_label(args.get('variant'))} × {spec_label(args.get('dcp'))}")
            for s in samples:
                total += sample_spend(s.store.get(CACHE_METRICS), s.store.get(FORK), cache_model)
                score = next(iter((s.scores or {}).values()), None)
                if key is not None and outcomes is not None and s.error is None and score is not None:
                    outcomes.setdefault(key, {})[(str(s.id), s.epoch)] = float(score.as_float())
    return total


def spec_label(spec: Any) -> str:
    """A variant/DCP spec's name for an arm label (readbench.base.names.spec_name; None as 'None')."""
    return str(spec_name(spec))
