"""How many tasks x epochs a decision needs: power analysis from a run's own pairs.

Miller (2024, §5.1 item 5 of docs/specs/anchors.md): to detect a paired difference delta
with power 1 - beta at two-sided level alpha, ``n = (z_{alpha/2} + z_beta)^2 (omega^2 +
sigma^2 / K) / delta^2`` tasks, where omega^2 is the variance of the per-task true difference
and sigma^2 / K the sampling variance of a task's mean over K epochs (sigma^2 here is the
variance of one epoch's paired difference, which is ``sigma_A^2 + sigma_B^2`` when the arms
are independent given the task, less when readbench's paired seeds correlate them). Tasks
come in source repositories that succeed or fail together (Miller §5.1 item 2), so the
variance of the mean difference over N tasks in repositories of m tasks is

    Var = (m * sigma_c^2 + omega^2 + sigma^2 / K) / N

with sigma_c^2 the between-repository variance of the true difference and omega^2 the
between-task variance within a repository. Because the report tests with t(G - 1) on
G = N / m repositories (`_cluster`), z is replaced by t quantiles on G - 1 degrees of freedom
and N is found by iteration.

All three components are estimated from the run's pairs by one-way ANOVA (epochs within
tasks, task means within repositories), each floored at 0. For paired success the variance of
one pair's difference is ``psi - delta^2`` (psi: the discordant share); under the alternative
the discordance must be at least |delta|, so the components are scaled to a total of
``max(psi, |delta|) - delta^2`` (Connor 1987); with no discordant pair in n, psi is its 95 %
upper bound ``1 - 0.05^(1/n)`` and all variance is put between tasks (epochs then do not
help), which is stated. Cost is planned on the log scale: delta = |log(cost ratio)|.

References
----------
.. [1] E. Miller, "Adding Error Bars to Evals", arXiv 2411.00640 (2024), power analysis.
.. [2] R. J. Connor, "Sample size for testing differences in proportions for the
   paired-sample design", Biometrics 43 (1987) 207-211.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize
from scipy import stats as sps

__all__ = ["PowerPlan", "VarianceComponents", "detectable_effect", "required_tasks", "variance_components"]

MAX_TASKS = 1_000_000
"""Upper end of the search; a plan that needs more says so instead of a number."""


@dataclass(frozen=True)
class VarianceComponents:
    """Variance components of one paired metric, estimated from a run (module docstring)."""

    scale: str
    """``"difference"`` (success, turns, ...) or ``"log-ratio"`` (cost, tokens)."""
    binary: bool
    """True for 0/1 success (the discordance rule applies)."""
    n_pairs: int
    """Pairs used."""
    n_tasks: int
    """Distinct tasks."""
    epochs: float
    """Mean epochs per task in the run."""
    n_clusters: int
    """Distinct clusters (repositories)."""
    tasks_per_cluster: float
    """m = n_tasks / n_clusters, assumed for new tasks too."""
    between_cluster: float
    """sigma_c^2: variance of the true difference between repositories (metric unit squared)."""
    between_task: float
    """omega^2: variance of the true difference between tasks of one repository."""
    within_task: float
    """sigma^2: variance of one epoch's difference around its task's mean (0 when K = 1 everywhere)."""
    discordance: float
    """Binary: share of discordant pairs (NaN otherwise)."""
    mean_difference: float
    """Observed mean difference (for binary, of the 0/1 outcomes)."""
    notes: tuple[str, ...]
    """Assumptions that had to be made (e.g. no epoch repeats, no discordant pair)."""

    @property
    def total(self) -> float:
        """Variance of one pair's difference: sigma_c^2 + omega^2 + sigma^2."""
        return self.between_cluster + self.between_task + self.within_task

    @property
    def icc(self) -> float:
        """Intra-repository correlation of true task differences, sigma_c^2 / (sigma_c^2 + omega^2)."""
        b = self.between_cluster + self.between_task
        return self.between_cluster / b if b > 0 else 0.0


@dataclass(frozen=True)
class PowerPlan:
    """Tasks needed to detect `effect` with the stated power (see `required_tasks`)."""

    effect: float
    """Effect on the analysis scale: a fraction for success, |log ratio| for cost."""
    power: float
    """Target power, e.g. 0.8."""
    alpha: float
    """Two-sided level, e.g. 0.05."""
    epochs: int
    """Epochs per task assumed."""
    n_tasks: int | None
    """Tasks needed (None when no number can be given; see `reason`)."""
    n_clusters: int | None
    """Repositories those tasks span at the run's tasks per repository."""
    reason: str
    """Empty, or why there is no number."""


def _anova(values: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    """One-way ANOVA: (mean square between, mean square within, n0) of `values` by `groups`."""
    labels, codes = np.unique(groups.astype(str), return_inverse=True)
    k, n = labels.size, values.size
    sizes = np.bincount(codes, minlength=k).astype(float)
    means = np.bincount(codes, weights=values, minlength=k) / sizes
    grand = values.mean()
    msb = float(np.sum(sizes * (means - grand) ** 2) / (k - 1)) if k > 1 else 0.0
    msw = float(np.sum((values - means[codes]) ** 2) / (n - k)) if n > k else float("nan")
    n0 = float((n - np.sum(sizes**2) / n) / (k - 1)) if k > 1 else 1.0
    return msb, msw, n0


def variance_components(differences, tasks, clusters, *, binary: bool, scale: str = "difference") -> VarianceComponents:
    """Estimate sigma_c^2, omega^2 and sigma^2 from per-pair differences.

    Parameters
    ----------
    differences : array_like, shape (n,)
        One paired difference per (task, epoch): treatment - baseline, or a log ratio. Finite.
    tasks, clusters : array_like, shape (n,)
        Task id and cluster (repository) of each pair.
    binary : bool
        Whether the differences are of 0/1 outcomes (values in {-1, 0, 1}).
    scale : {"difference", "log-ratio"}

    Returns
    -------
    VarianceComponents

    Raises
    ------
    ValueError
        If there are fewer than 2 pairs, lengths differ, or a value is non-finite.
    """
    d = np.asarray(differences, dtype=float)
    t = np.asarray(tasks).astype(str)
    c = np.asarray(clusters).astype(str)
    if d.ndim != 1 or d.size < 2 or t.shape != d.shape or c.shape != d.shape:
        raise ValueError(f"need at least 2 pairs with one task and cluster each, got {d.size} differences, "
                         f"{t.size} tasks, {c.size} clusters")
    if not np.isfinite(d).all():
        raise ValueError("differences must be finite")
    notes: list[str] = []
    task_ids, task_codes = np.unique(t, return_inverse=True)
    k_t = np.bincount(task_codes).astype(float)
    task_means = np.bincount(task_codes, weights=d) / k_t
    if (k_t > 1).any():
        _, within, _ = _anova(d, t)
    else:
        within = 0.0
        notes.append("one epoch per task: epoch-to-epoch variance cannot be separated from task variance "
                     "(more epochs are assumed not to help)")
    task_cluster = np.array([c[task_codes == i][0] for i in range(task_ids.size)])
    n_clusters = int(np.unique(c).size)
    k_bar = float(np.mean(1.0 / k_t))
    if n_clusters > 1 and n_clusters < task_ids.size:
        msb, msw, n0 = _anova(task_means, task_cluster)
        between_task = max(0.0, msw - within * k_bar)
        between_cluster = max(0.0, (msb - msw) / n0)
    else:
        var_means = float(np.var(task_means, ddof=1)) if task_ids.size > 1 else 0.0
        between_task, between_cluster = max(0.0, var_means - within * k_bar), 0.0
        if n_clusters == task_ids.size:
            notes.append("one task per cluster: repository-level correlation is not estimable (taken as 0)")
    psi = float(np.mean(d != 0)) if binary else float("nan")
    if binary and psi == 0.0:
        notes.append(f"no discordant pair in {d.size}: discordance taken at its 95% upper bound "
                     f"{1 - 0.05 ** (1 / d.size):.3f}, all of it between tasks")
    return VarianceComponents(
        scale=scale, binary=binary, n_pairs=int(d.size), n_tasks=int(task_ids.size), epochs=float(np.mean(k_t)),
        n_clusters=n_clusters, tasks_per_cluster=task_ids.size / n_clusters, between_cluster=between_cluster,
        between_task=between_task, within_task=within, discordance=psi, mean_difference=float(d.mean()),
        notes=tuple(notes),
    )


def _components_under(vc: VarianceComponents, effect: float) -> tuple[float, float, float]:
    """(sigma_c^2, omega^2, sigma^2) under the alternative `effect` (binary: Connor's rule)."""
    if not vc.binary:
        return vc.between_cluster, vc.between_task, vc.within_task
    psi = vc.discordance if vc.discordance > 0 else 1.0 - 0.05 ** (1.0 / vc.n_pairs)
    total = max(psi, abs(effect)) - effect * effect
    if vc.total <= 0:
        return 0.0, total, 0.0
    f = total / vc.total
    return vc.between_cluster * f, vc.between_task * f, vc.within_task * f


def _variance_of_mean(vc: VarianceComponents, effect: float, n_tasks: float, epochs: float) -> float:
    c, w, e = _components_under(vc, effect)
    return (vc.tasks_per_cluster * c + w + e / epochs) / n_tasks


def _quantiles(n_clusters: float, power: float, alpha: float) -> float:
    df = max(1.0, n_clusters - 1.0)
    return float(sps.t.ppf(1.0 - alpha / 2.0, df) + sps.t.ppf(power, df))


def required_tasks(
    vc: VarianceComponents, effect: float, *, epochs: int, power: float = 0.8, alpha: float = 0.05
) -> PowerPlan:
    """Smallest number of tasks (at `epochs` epochs each) that detects `effect` with `power`.

    Parameters
    ----------
    vc : VarianceComponents
        From `variance_components` on the run's pairs.
    effect : float
        Effect to detect, > 0, on the analysis scale (success: fraction, 0.05 = 5 pp; cost:
        |log ratio|, ``abs(log(0.9))`` for a 10 % saving).
    epochs : int
        Epochs per task, >= 1.
    power : float, default 0.8
        In (0, 1).
    alpha : float, default 0.05
        Two-sided level, in (0, 1).

    Returns
    -------
    PowerPlan
        ``n_tasks`` = the smallest N with ``(t_{1-alpha/2} + t_{power})^2 Var(N) <= effect^2``
        on G - 1 = N/m - 1 degrees of freedom; None (with a reason) when the pairs showed no
        variation at all (non-binary) or more than `MAX_TASKS` would be needed.

    Raises
    ------
    ValueError
        If effect, epochs, power or alpha is out of range.
    """
    effect = abs(float(effect))
    if not effect > 0 or (vc.binary and effect >= 1):
        raise ValueError(f"effect ({effect!r}) must be > 0 (and < 1 for a success difference)")
    if int(epochs) < 1:
        raise ValueError(f"epochs ({epochs!r}) must be >= 1")
    for name, v in (("power", power), ("alpha", alpha)):
        if not 0 < v < 1:
            raise ValueError(f"{name} ({v!r}) must be in the open interval (0, 1)")
    m = vc.tasks_per_cluster

    def plan(n: int | None, reason: str = "") -> PowerPlan:
        return PowerPlan(effect=effect, power=power, alpha=alpha, epochs=int(epochs), n_tasks=n,
                         n_clusters=None if n is None else math.ceil(n / m), reason=reason)

    if not vc.binary and vc.total <= 0:
        return plan(None, "the pairs showed no variation: the run cannot estimate the variance to plan with")

    def enough(n: int) -> bool:
        q = _quantiles(max(2.0, math.ceil(n / m)), power, alpha)
        return q * q * _variance_of_mean(vc, effect, n, epochs) <= effect * effect

    if not enough(MAX_TASKS):
        return plan(None, f"more than {MAX_TASKS:,} tasks")
    lo, hi = max(1, math.ceil(2 * m) - 1), MAX_TASKS  # at least 2 clusters
    if enough(lo):
        return plan(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return plan(hi)


def detectable_effect(
    vc: VarianceComponents, *, n_tasks: int, epochs: int, n_clusters: int, power: float = 0.8, alpha: float = 0.05,
    margin: float = 0.0,
) -> float:
    """Smallest effect the design (n_tasks x epochs in n_clusters) detects with `power`.

    Returns the effect on the analysis scale (success: fraction; log scale: |log ratio|); NaN
    when fewer than 2 clusters; inf when a binary effect would need more than certainty.
    Solves ``effect = margin + (t_{1-alpha/2} + t_{power}) sqrt(Var(effect))`` on G - 1 degrees
    of freedom (Var depends on the effect for success, `required_tasks`). `margin` >= 0 is the
    shift of a tolerance-shifted test (`regression`: "worse by more than the tolerance"); a
    one-sided test at level a is ``alpha=2 * a``.
    """
    if n_clusters < 2 or n_tasks < 1 or epochs < 1:
        return float("nan")
    q = _quantiles(n_clusters, power, alpha)
    m_run = vc.tasks_per_cluster
    vc_here = vc if abs(m_run - n_tasks / n_clusters) < 1e-12 else _with_m(vc, n_tasks / n_clusters)

    def gap(effect: float) -> float:
        return effect - margin - q * math.sqrt(_variance_of_mean(vc_here, effect, n_tasks, epochs))

    if not vc.binary:
        return float(margin + q * math.sqrt(_variance_of_mean(vc_here, 0.0, n_tasks, epochs)))
    if gap(1.0 - 1e-9) < 0:
        return float("inf")
    return float(optimize.brentq(gap, max(1e-9, margin), 1.0 - 1e-9, xtol=1e-10))


def _with_m(vc: VarianceComponents, m: float) -> VarianceComponents:
    from dataclasses import replace

    return replace(vc, tasks_per_cluster=m)


def pairs_for_plan(pairs: pd.DataFrame, metric: str, *, log_scale: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(differences, tasks, clusters) of `metric` from `compare.pair_rows` output.

    Success uses the 0/1 ``success01`` columns; `log_scale` takes log ratios over the pairs with
    both values > 0. Pairs missing the metric are dropped.
    """
    col = "success01" if metric == "success" else metric
    t, b = pairs[f"{col}_t"].astype(float), pairs[f"{col}_b"].astype(float)
    ok = t.notna() & b.notna()
    if log_scale:
        ok &= (t > 0) & (b > 0)
        d = np.log(t[ok].to_numpy()) - np.log(b[ok].to_numpy())
    else:
        d = (t[ok] - b[ok]).to_numpy()
    return d, pairs.loc[ok, "sample_id"].to_numpy(), pairs.loc[ok, "cluster"].to_numpy()
