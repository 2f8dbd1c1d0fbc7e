"""A run against a committed baseline run: which arms got significantly worse (the nightly verdict).

`compare_to_baseline(run, baseline)` pairs every arm of a run with the same arm (variant x DCP
x model label) of the baseline run on shared (task, epoch), with the paired statistics the
report uses (`compare.pair_rows` / `compare.compare_metric`: CR2 t intervals clustered by source
repository, geometric-mean ratios for tokens and cost), for each headline metric
(`HEADLINE_METRICS` and cost per cache model). GitHub issue 17; statistics: docs/specs/
metrics.md "Aggregation", anchors.md §5.2.

What "worse" means. A check tests H0 "the arm is not worse than the baseline by more than the
tolerance" against "it is worse beyond it" (a one-sided, tolerance-shifted CR2 t test):

- success (lower is worse): mean paired difference now - baseline below ``-tolerance.success``
  (default 5 percentage points);
- cost per cache model and input tokens (ratio scale): geometric-mean ratio now / baseline above
  ``1 + tolerance.relative`` (default 1.10), tested on log ratios;
- turns and read calls (difference scale): mean paired increase above ``tolerance.relative``
  times the baseline's mean over the pairs (default 10 %).

The one-sided p-values of every check of the run (every arm, model and metric) form one family
adjusted with Holm's step-down method; a check is a **regression** when its adjusted p is below
`ALPHA`. A deterministic change (every pair moved by the same amount, e.g. a price change) has a
CR2 standard error of 0: beyond the tolerance it is a regression with p = 0, within it none.

What is compared when the two runs differ (named, never silently passed or failed):

- arms only in the baseline (removed from the matrix), arms only in the run (new, no baseline):
  a note each, not compared;
- tasks only in the run (new in the corpus), only in the baseline (removed), or whose
  definition changed (family, source, file, file length or target line differ): a note each,
  left out of the pairs;
- epochs and cache models present on one side only: a note; pairs and metrics use the common ones;
- columns the run has and the baseline lacks are ignored (they are not headline metrics); a
  headline column the run lacks makes the run incomplete (no verdict), and so does an arm whose
  paired samples all lack a value the baseline has (e.g. every cost NaN); pairs with a value
  missing on one side are left out of that check, with a note;
- a partial arm (``arm_status``, `completeness`) is never a verdict: the comparison is
  incomplete (`BaselineComparison.exit_code` 2); so is a run whose compared arms pair fewer than
  half of their baseline samples (`MIN_COVERAGE`: the run no longer covers the baseline).

What the run could have caught (issue 28). Every check carries the smallest worsening it detects
with 80 % power at the first Holm step (one-sided alpha / m over the m testable checks; `_check_power`).
A success or cost check that cannot detect the smallest difference that matters
(`smallest.SmallestDifference`: a drop of ``success_pp``, a cost ratio of ``1 / cost_ratio``), or
cannot be tested at all, is **underpowered**: with no regression found, the comparison is
underpowered (`BaselineComparison.exit_code` 3), never "no regression".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import stats
from ._check_power import detectable_worsening
from ._checks import ALPHA, BaselineComparison, MetricCheck, Tolerance
from ._task_notes import TASK_KEYS
from ._task_notes import listing as _listing
from ._task_notes import task_notes as _task_notes
from .compare import SUCCESS, compare_metric, pair_rows
from .smallest import SmallestDifference
from .table import cache_models_in

__all__ = [
    "ALPHA",
    "HEADLINE_METRICS",
    "MIN_COVERAGE",
    "TASK_KEYS",
    "BaselineComparison",
    "MetricCheck",
    "Tolerance",
    "compare_to_baseline",
]

HEADLINE_METRICS = (SUCCESS, "turns", "input_tokens", "read_calls")
"""Metrics checked for every arm, besides ``cost_usd_{cache model}`` for each common cache model."""

MIN_COVERAGE = 0.5
"""Fewest paired samples, as a fraction of the compared arms' baseline samples, for a verdict."""

def _one_sided(x: np.ndarray, y: np.ndarray, clusters: np.ndarray) -> float:
    """p of H0 mean(x - y) <= 0 vs > 0 from the CR2 t test (`stats.paired_difference`)."""
    d = stats.paired_difference(x, y, clusters)
    if math.isnan(d.p_value):
        return float("nan")
    return d.p_value / 2.0 if d.mean_difference > 0 else 1.0 - d.p_value / 2.0


def _check(arm: str, pairs: pd.DataFrame, metric: str, tol: Tolerance) -> MetricCheck | None:
    comparison = compare_metric(pairs, metric)
    if comparison is None:
        return None
    col = "success01" if metric == SUCCESS else metric
    t, b = pairs[f"{col}_t"].astype(float), pairs[f"{col}_b"].astype(float)
    ok = t.notna() & b.notna()
    if comparison.scale == "ratio":
        ok &= (t > 0) & (b > 0)
    tv, bv, cl = t[ok].to_numpy(), b[ok].to_numpy(), pairs.loc[ok, "cluster"].to_numpy()
    if metric == SUCCESS:  # worse = lower: test mean(b - t) > tolerance
        bound = -tol.success
        p = _one_sided(bv, tv + tol.success, cl)
        base_value, now_value = float(bv.mean()), float(tv.mean())
    elif comparison.scale == "ratio":  # worse = higher: mean log ratio > log(1 + tolerance)
        bound = 1.0 + tol.relative
        p = _one_sided(np.log(tv), np.log(bv) + math.log(bound), cl)
        base_value, now_value = comparison.median_baseline, comparison.median_treatment
    else:  # worse = higher: mean increase > tolerance x the baseline's mean
        base_value, now_value = float(bv.mean()), float(tv.mean())
        bound = tol.relative * abs(base_value)
        p = _one_sided(tv, bv + bound, cl)
    if comparison.n_clusters < 2:  # `stats` reads one cluster label as independent pairs: epochs of one task are not
        p = float("nan")
    return MetricCheck(arm=arm, metric=metric, scale=comparison.scale, baseline_value=base_value,
                       current_value=now_value, estimate=comparison.estimate, ci=comparison.ci, bound=bound,
                       p_value=p, p_holm=float("nan"), n_pairs=comparison.n_pairs, n_clusters=comparison.n_clusters)


def _arm_set(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["arm"]))


def compare_to_baseline(run: pd.DataFrame, baseline: pd.DataFrame, *, tolerance: Tolerance | None = None,
                        expected_arms: Sequence[str] | None = None, min_coverage: float = MIN_COVERAGE,
                        smallest: SmallestDifference | None = None) -> BaselineComparison:
    """Check every arm and headline metric of `run` against the same arm of `baseline`.

    Parameters
    ----------
    run, baseline : pandas.DataFrame
        Tidy tables (`table.tidy_table`, one row per arm x sample x epoch), e.g. a nightly run's
        ``table.parquet`` and the committed ``analysis/baselines/nightly/table.parquet``. An
        ``arm_status`` column (`completeness.drop_unfinished`) marks partial arms.
    tolerance : Tolerance, optional
        What counts as worse (module docstring); default `Tolerance()`.
    expected_arms : sequence of str, optional
        Arm labels the run's matrix asked for (``run.json``); an expected arm with no row in
        `run` makes the comparison incomplete.
    min_coverage : float, default `MIN_COVERAGE`
        Fewest paired (task, epoch) of the compared arms, as a fraction of those arms' baseline
        samples, for a verdict; below it the comparison is incomplete (the run no longer covers
        the baseline: a corpus that lost most of its tasks must not pass on the few left).
    smallest : SmallestDifference, optional
        The smallest success drop and cost ratio that matter (module docstring); default
        `SmallestDifference()` (5 pp, 0.9).

    Returns
    -------
    BaselineComparison
        The checks (Holm-adjusted across all of them, each with the worsening it detects),
        notes on what was not compared, and the reasons, if any, that the run is no verdict;
        ``exit_code`` is 0, 1, 2 or 3.

    Raises
    ------
    ValueError
        If a table lacks an identity column (arm, model, sample_id, epoch, source, family) or
        repeats an (arm, sample_id, epoch).
    """
    tol = tolerance or Tolerance()
    for name, table in (("run", run), ("baseline", baseline)):
        missing = [c for c in ("arm", "model", "sample_id", "epoch", "source", "family") if c not in table.columns]
        if missing:
            raise ValueError(f"the {name} table lacks column(s) {missing}")
        if table.duplicated(["arm", "sample_id", "epoch"]).any():
            raise ValueError(f"the {name} table repeats an (arm, sample_id, epoch)")
    incomplete: list[str] = []
    notes: list[str] = []
    if "arm_status" in run.columns:
        for arm, status in run.drop_duplicates("arm")[["arm", "arm_status"]].itertuples(index=False):
            if isinstance(status, str) and status:
                incomplete.append(f"{arm} ({status}): a partial arm is never a verdict")
        run = run[run["arm_status"].fillna("") == ""] if incomplete else run
    for arm in expected_arms or ():
        if arm not in set(run["arm"]) and not any(i.startswith(f"{arm} (") for i in incomplete):
            incomplete.append(f"{arm}: in the run's matrix but it has no sample in the table")
    if "arm_status" in baseline.columns:
        partial = sorted(set(baseline.loc[baseline["arm_status"].fillna("") != "", "arm"]))
        if partial:
            notes.append(f"baseline arm(s) {', '.join(partial)} are partial in the baseline itself: not compared")
            baseline = baseline[~baseline["arm"].isin(partial)]
    lacking = [m for m in HEADLINE_METRICS if m not in run.columns and m in baseline.columns]
    if lacking:
        incomplete.append(f"this run's table lacks headline column(s) {lacking} that the baseline has")
    metrics = [m for m in HEADLINE_METRICS if m in run.columns and m in baseline.columns]
    for m in HEADLINE_METRICS:
        if m not in baseline.columns:
            notes.append(f"{m}: not in the baseline's table, not compared")
    run_cache, base_cache = cache_models_in(run), cache_models_in(baseline)
    for m in sorted(set(base_cache) - set(run_cache)):
        notes.append(f"cache model {m}: in the baseline only, cost not compared")
    for m in sorted(set(run_cache) - set(base_cache)):
        notes.append(f"cache model {m}: new in this run (no baseline), cost not compared")
    metrics += [f"cost_usd_{m}" for m in base_cache if m in run_cache]

    run_arms, base_arms = _arm_set(run), _arm_set(baseline)
    for arm in base_arms:
        if arm not in run_arms and not any(i.startswith(f"{arm} (") for i in incomplete):
            notes.append(f"arm {arm}: in the baseline, not in this run (removed from the matrix?), not compared")
    for arm in run_arms:
        if arm not in base_arms:
            notes.append(f"arm {arm}: new in this run, no baseline to compare with; `make baseline` starts tracking it")
    same_tasks, task_notes = _task_notes(run, baseline)
    notes += task_notes
    run_epochs, base_epochs = sorted(set(run["epoch"])), sorted(set(baseline["epoch"]))
    if run_epochs != base_epochs:
        notes.append(f"epochs: baseline {base_epochs}, this run {run_epochs}: pairs use the common ones")

    checks: list[MetricCheck] = []
    check_pairs: list[pd.DataFrame] = []
    paired = expected = 0
    for arm in run_arms:
        if arm not in base_arms:
            continue
        now = run[(run["arm"] == arm) & run["sample_id"].isin(same_tasks)]
        then = baseline[(baseline["arm"] == arm) & baseline["sample_id"].isin(same_tasks)]
        pairs = pair_rows(now, then)
        paired, expected = paired + len(pairs), expected + int((baseline["arm"] == arm).sum())
        if pairs.empty:
            notes.append(f"arm {arm}: shares no (task, epoch) with the baseline, not compared")
            continue
        for m in metrics:
            col = "success01" if m == SUCCESS else m
            now_nan, then_nan = pairs[f"{col}_t"].isna(), pairs[f"{col}_b"].isna()
            c = _check(arm, pairs, m, tol)
            if c is None:  # no pair has the metric on both sides: never a silent pass
                if now_nan.all() and not then_nan.all():
                    incomplete.append(f"{arm} · {m}: no value in any of this run's {len(pairs)} paired samples "
                                      "(the baseline has them): not checked")
                else:
                    notes.append(f"{arm} · {m}: no pair has a value on both sides, not compared")
                continue
            if (now_nan | then_nan).any():
                notes.append(f"{arm} · {m}: {int((now_nan | then_nan).sum())} of {len(pairs)} pairs left out, "
                             f"no value ({int(now_nan.sum())} in this run, {int(then_nan.sum())} in the baseline)")
            checks.append(c)
            check_pairs.append(pairs)
    if not checks and not incomplete:
        incomplete.append("nothing to compare: no arm shares a (task, epoch) with the baseline")
    elif checks and paired < min_coverage * expected:
        incomplete.append(f"only {paired} of the {expected} baseline samples of the compared arms have a partner in "
                          f"this run (< {100 * min_coverage:.0f} %): it no longer covers the baseline; if the corpus "
                          "or the epochs shrank on purpose, make an accepted run the baseline (`make baseline`)")
    testable = [i for i, c in enumerate(checks) if not math.isnan(c.p_value)]
    adjusted = dict(zip(testable, stats.holm_adjust([checks[i].p_value for i in testable])))
    level = ALPHA / max(1, len(testable))
    small = smallest or SmallestDifference()
    checks = [_with_holm(c, adjusted.get(i, float("nan")), detectable_worsening(p, c.metric, c.scale, c.bound, level),
                         _smallest_of(c, small)) for i, (c, p) in enumerate(zip(checks, check_pairs))]
    untested = [c for c in checks if math.isnan(c.p_value)]
    if untested:
        notes.append(f"{len(untested)} check(s) untested (fewer than 2 clusters: no variance estimate): "
                     f"{_listing([f'{c.arm} · {c.metric}' for c in untested], 3)}")
    return BaselineComparison(tuple(checks), tuple(notes), tuple(incomplete), tol, small)


def _smallest_of(check: MetricCheck, smallest: SmallestDifference) -> float | None:
    """The smallest worsening that matters for `check`, on its scale; None for the other metrics."""
    if check.metric == SUCCESS:
        return smallest.success
    if check.metric.startswith("cost_usd_") and check.scale == "ratio":
        return smallest.cost_increase
    return None


def _with_holm(check: MetricCheck, p_holm: float, detectable: float, smallest: float | None) -> MetricCheck:
    from dataclasses import replace

    return replace(check, p_holm=p_holm, detectable=detectable, smallest=smallest)
