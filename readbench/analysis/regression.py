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
  headline column the run lacks makes the run incomplete (no verdict);
- a partial arm (``arm_status``, `completeness`) is never a verdict: the comparison is
  incomplete (`BaselineComparison.exit_code` 2); so is a run whose compared arms pair fewer than
  half of their baseline samples (`MIN_COVERAGE`: the run no longer covers the baseline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _format as F
from . import stats
from .compare import SUCCESS, compare_metric, pair_rows
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

ALPHA = 0.05
"""Family-wise error rate of the regression checks (Holm across every check of the run)."""

HEADLINE_METRICS = (SUCCESS, "turns", "input_tokens", "read_calls")
"""Metrics checked for every arm, besides ``cost_usd_{cache model}`` for each common cache model."""

MIN_COVERAGE = 0.5
"""Fewest paired samples, as a fraction of the compared arms' baseline samples, for a verdict."""

TASK_KEYS = ("family", "source", "file", "file_lines", "target_line")
"""Task metadata that must be equal for a sample id to be the same task in both runs."""


@dataclass(frozen=True)
class Tolerance:
    """How much worse an arm may get before it counts as a regression."""

    success: float = 0.05
    """Largest tolerated drop in success, a fraction (0.05 = 5 percentage points), in [0, 1)."""
    relative: float = 0.10
    """Largest tolerated relative increase of cost, input tokens, turns and read calls, a
    fraction (0.10 = 10 %: a ratio of 1.10, or a mean increase of 10 % of the baseline's mean)."""

    def __post_init__(self) -> None:
        for name, value in (("success", self.success), ("relative", self.relative)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value < 1:
                raise ValueError(f"tolerance {name} must be a fraction in [0, 1), got {value!r}")

    def describe(self) -> str:
        """``"success −5.0 pp; cost and input tokens ×1.10; turns and read calls +10 % of the baseline mean"``."""
        return (f"success −{100 * self.success:.1f} pp; cost and input tokens ×{1 + self.relative:.2f}; "
                f"turns and read calls +{100 * self.relative:.0f} % of the baseline mean")


@dataclass(frozen=True)
class MetricCheck:
    """One metric of one arm, the run against the baseline on shared (task, epoch) pairs."""

    arm: str
    """Arm label, ``"{variant} × {dcp} @ {model}"``."""
    metric: str
    """``"success"`` or a table column (``turns``, ``cost_usd_openai``, ...)."""
    scale: str
    """``"difference"`` (estimate = mean of now - baseline) or ``"ratio"`` (geometric-mean ratio)."""
    baseline_value: float
    """Baseline over the pairs: mean (success as a fraction, turns, read calls) or median (ratio scale)."""
    current_value: float
    """The run over the same pairs, same statistic as `baseline_value`."""
    estimate: float
    """Mean paired difference, or geometric-mean ratio now / baseline."""
    ci: stats.ConfidenceInterval
    """95 % CR2 t interval of `estimate` (`compare.compare_metric`)."""
    bound: float
    """The tolerance on the estimate's scale: ``-0.05`` (success), ``1.10`` (ratio), or the largest
    tolerated mean increase in the metric's unit (turns, read calls)."""
    p_value: float
    """One-sided p of "not worse beyond `bound`"; NaN when untestable (fewer than 2 clusters)."""
    p_holm: float
    """Holm-adjusted `p_value` across every testable check of the comparison; NaN when untestable."""
    n_pairs: int
    """Pairs with the metric on both sides (ratio scale: both > 0)."""
    n_clusters: int
    """Clusters among those pairs (source repositories, or tasks when there is one)."""

    @property
    def regression(self) -> bool:
        """Significantly worse than the baseline beyond the tolerance (Holm p < `ALPHA`)."""
        return not math.isnan(self.p_holm) and self.p_holm < ALPHA

    def _fmt(self) -> tuple:
        if self.metric == SUCCESS:
            return F.pct, F.pp, (lambda x: f"{100 * x:+.1f} pp")
        if self.scale == "ratio":
            value = F.usd if self.metric.startswith("cost_usd_") else (lambda x: F.num(x, 0))
            return value, F.ratio, (lambda x: f"×{x:.2f}")
        return (lambda x: F.num(x, 2)), (lambda x: F.signed(x, 2)), (lambda x: F.signed(x, 2))

    def line(self) -> str:
        """One line: arm, metric, baseline -> now, estimate and interval, tolerance, adjusted p."""
        value, est, tol = self._fmt()
        stat = "median" if self.scale == "ratio" else "mean"
        return (f"{self.arm} · {self.metric}: {value(self.baseline_value)} -> {value(self.current_value)} "
                f"({stat} over {self.n_pairs} pairs, {self.n_clusters} clusters); {est(self.estimate)} "
                f"95% CI {F.interval(est, self.ci.low, self.ci.high)}, tolerance {tol(self.bound)}; "
                f"Holm-adjusted p {_p_text(self.p_holm)}")


@dataclass(frozen=True)
class BaselineComparison:
    """Every check of a run against a baseline, what was not compared, and the verdict."""

    checks: tuple[MetricCheck, ...]
    """One per (common arm, headline metric) with at least one pair, in arm then metric order."""
    notes: tuple[str, ...]
    """What differs between the runs and was left out (arms, tasks, epochs, cache models, ...)."""
    incomplete: tuple[str, ...]
    """Why the comparison cannot be a verdict (partial arms, missing columns, nothing in common)."""
    tolerance: Tolerance = field(default_factory=Tolerance)

    @property
    def regressions(self) -> tuple[MetricCheck, ...]:
        """The checks that are regressions."""
        return tuple(c for c in self.checks if c.regression)

    @property
    def exit_code(self) -> int:
        """2 when incomplete (no verdict), else 1 when any check is a regression, else 0."""
        return 2 if self.incomplete else (1 if self.regressions else 0)

    def summary(self, baseline: str = "the baseline") -> str:
        """The verdict as one line."""
        tested = sum(1 for c in self.checks if not math.isnan(c.p_value))
        arms = len({c.arm for c in self.checks})
        if self.incomplete:
            return f"no verdict: {len(self.incomplete)} reason(s) above; compared {arms} arm(s) with {baseline} anyway"
        head = (f"{len(self.regressions)} regression(s)" if self.regressions else "no regression")
        return (f"{head} in {tested} checks of {arms} arm(s) against {baseline} (Holm across the checks at "
                f"{ALPHA:g}; tolerance: {self.tolerance.describe()})")


def _p_text(p: float) -> str:
    """``"= 0.012"`` or ``"< 0.001"``."""
    text = F.p_value(p)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"


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


def _listing(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def _value(v: object) -> str:
    """A task field for a note: ``8604`` for 8604.0, ``'a.py'`` for a string."""
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return f"{float(v):g}"
    return repr(str(v))


def _by_family(rows: pd.DataFrame, ids: set[str]) -> str:
    fam = rows[rows["sample_id"].isin(ids)].drop_duplicates("sample_id")["family"].value_counts()
    return ", ".join(f"{name}: {n}" for name, n in sorted(fam.items()))


def _task_notes(run: pd.DataFrame, base: pd.DataFrame) -> tuple[set[str], list[str]]:
    """The sample ids comparable in both runs, and notes on the others."""
    keys = [k for k in TASK_KEYS if k in run.columns and k in base.columns]
    r = run.drop_duplicates("sample_id").set_index("sample_id")[keys]
    b = base.drop_duplicates("sample_id").set_index("sample_id")[keys]
    notes = []
    new = sorted(set(r.index) - set(b.index))
    gone = sorted(set(b.index) - set(r.index))
    common = sorted(set(r.index) & set(b.index))
    changed = []
    for sid in common:
        diffs = [f"{k} {_value(b.at[sid, k])} -> {_value(r.at[sid, k])}" for k in keys
                 if not (pd.isna(r.at[sid, k]) and pd.isna(b.at[sid, k])) and r.at[sid, k] != b.at[sid, k]]
        if diffs:
            changed.append(f"{sid} ({'; '.join(diffs)})")
    if new:
        notes.append(f"{len(new)} task(s) new since the baseline, not compared ({_by_family(run, set(new))}): "
                     f"{_listing(new)}; `make baseline` after an accepted run starts tracking them")
    if gone:
        notes.append(f"{len(gone)} task(s) of the baseline missing from this run, not compared "
                     f"({_by_family(base, set(gone))}): {_listing(gone)}")
    if changed:
        notes.append(f"{len(changed)} task(s) changed since the baseline (same id, other task), not compared: "
                     f"{_listing(changed, 3)}")
    same = set(common) - {c.split(" (")[0] for c in changed}
    return same, notes


def _arm_set(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["arm"]))


def compare_to_baseline(run: pd.DataFrame, baseline: pd.DataFrame, *, tolerance: Tolerance | None = None,
                        expected_arms: Sequence[str] | None = None, min_coverage: float = MIN_COVERAGE
                        ) -> BaselineComparison:
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

    Returns
    -------
    BaselineComparison
        The checks (Holm-adjusted across all of them), notes on what was not compared, and the
        reasons, if any, that the run is no verdict; ``exit_code`` is 0, 1 or 2.

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
        checks += [c for c in (_check(arm, pairs, m, tol) for m in metrics) if c is not None]
    if not checks and not incomplete:
        incomplete.append("nothing to compare: no arm shares a (task, epoch) with the baseline")
    elif checks and paired < min_coverage * expected:
        incomplete.append(f"only {paired} of the {expected} baseline samples of the compared arms have a partner in "
                          f"this run (< {100 * min_coverage:.0f} %): it no longer covers the baseline; if the corpus "
                          "or the epochs shrank on purpose, make an accepted run the baseline (`make baseline`)")
    testable = [i for i, c in enumerate(checks) if not math.isnan(c.p_value)]
    adjusted = dict(zip(testable, stats.holm_adjust([checks[i].p_value for i in testable])))
    checks = [_with_holm(c, adjusted.get(i, float("nan"))) for i, c in enumerate(checks)]
    untested = [c for c in checks if math.isnan(c.p_value)]
    if untested:
        notes.append(f"{len(untested)} check(s) untested (fewer than 2 clusters: no variance estimate): "
                     f"{_listing([f'{c.arm} · {c.metric}' for c in untested], 3)}")
    return BaselineComparison(tuple(checks), tuple(notes), tuple(incomplete), tol)


def _with_holm(check: MetricCheck, p_holm: float) -> MetricCheck:
    from dataclasses import replace

    return replace(check, p_holm=p_holm)
