"""The report's opening section: what the evidence supports shipping, and what it cannot tell.

Per model x cache model: the arms on the Pareto frontier of success (higher) and median cost
per sample (lower); the arms significantly better or worse than the baseline on the
confirmatory family (success, cost; Holm-adjusted, `compare`); a recommendation; and the limit
of the evidence (the smallest success difference the run's design can detect, `power`), with
"to detect X you would need about N tasks x E epochs" for every non-significant comparison.

A recommendation only where the run supports one (GitHub issue 28): every decision carries the
difference the run detects (80 % power at Holm's first-step level alpha / m over the model's m
confirmatory tests), and a recommendation that rests on "no significant difference" in success or
cost needs the run to detect the smallest difference that matters there (`smallest`); otherwise
the section says "no decision: this run detects only ≥ X; `readbench plan` says what would".
Frontier arms not significantly different from the baseline are marked "(n.s.)".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import _format as F
from ._document import Block, Bullets, Heading, Paragraph, Table
from .aggregate import ArmSummary
from .compare import MetricComparison, PairedComparison
from .plan import PlanRow, need_text

__all__ = ["ALPHA", "Verdict", "decision_section", "family_sizes", "pareto_points", "verdict"]

ALPHA = 0.05
"""Family-wise level of the confirmatory tests (Holm)."""


@dataclass(frozen=True)
class Verdict:
    """Significant findings of one comparison for one cache model."""

    success: int
    """+1 significantly better success, -1 worse, 0 no detectable difference."""
    cost: int
    """-1 significantly cheaper, +1 costlier, 0 no detectable difference (or no cost metric)."""


def _sig(m: MetricComparison | None) -> bool:
    return m is not None and not math.isnan(m.p_holm) and m.p_holm < ALPHA


def verdict(c: PairedComparison, cache_model: str) -> Verdict:
    """The comparison's Holm-significant directions for success and for cost under `cache_model`."""
    s = c.success
    success = (1 if s.estimate > 0 else -1) if _sig(s) else 0
    m = c.metric(f"cost_usd_{cache_model}")
    cost = 0
    if _sig(m) and m is not None:
        cost = (-1 if m.estimate < 1 else 1) if m.scale == "ratio" else (-1 if m.estimate < 0 else 1)
    return Verdict(success=success, cost=cost)


def family_sizes(comparisons: tuple[PairedComparison, ...]) -> dict[str, int]:
    """Per model, the number of confirmatory tests Holm adjusts together (testable ones only)."""
    sizes: dict[str, int] = {}
    for c in comparisons:
        n = sum(1 for m in (c.success,) + c.metrics if m.confirmatory and not math.isnan(m.p_value))
        sizes[c.model] = sizes.get(c.model, 0) + n
    return sizes


def pareto_points(summaries: tuple[ArmSummary, ...], cache_models: list[str], multi_model: bool,
                  baseline: tuple[str, str], comparisons: tuple[PairedComparison, ...] = ()) -> pd.DataFrame:
    """One row per (model, cache model, arm): success, CI, median cost, frontier and baseline flags.

    An arm is on the frontier when no other arm of the same model has success >= and median
    cost <= with one of them strict. Arms without a cost for the cache model are left out.
    ``ns`` is True for an arm of `comparisons` that is significantly different from the baseline
    in neither success nor cost under that cache model (Holm): its place is within noise.
    """
    verdicts = {(c.arm, m): verdict(c, m) for c in comparisons for m in cache_models}
    rows = []
    for s in summaries:
        for m in cache_models:
            try:
                cost = s.metric(f"cost_usd_{m}").median
            except KeyError:
                continue
            if not math.isfinite(cost):
                continue
            v = verdicts.get((s.arm, m))
            rows.append(dict(model=s.model, cache_model=m, arm=s.arm if multi_model else s.arm.split(" @ ")[0],
                             full_arm=s.arm, success=s.success.rate, low=s.success.ci.low, high=s.success.ci.high,
                             cost_usd=cost, baseline=(s.variant, s.dcp) == baseline,
                             ns=v is not None and v.success == 0 and v.cost == 0))
    df = pd.DataFrame(rows, columns=["model", "cache_model", "arm", "full_arm", "success", "low", "high", "cost_usd",
                                     "baseline", "ns"])
    frontier = []
    for _, r in df.iterrows():
        same = df[(df["model"] == r["model"]) & (df["cache_model"] == r["cache_model"])]
        dominated = ((same["success"] >= r["success"]) & (same["cost_usd"] <= r["cost_usd"])
                     & ((same["success"] > r["success"]) | (same["cost_usd"] < r["cost_usd"]))).any()
        frontier.append(not dominated)
    df["frontier"] = frontier
    df["panel"] = [f"{m} · {c}" if multi_model else c for m, c in zip(df["model"], df["cache_model"])]
    return df


def _short(arm: str, multi_model: bool) -> str:
    return arm if multi_model else arm.split(" @ ")[0]


def _success_cell(m: MetricComparison) -> str:
    return f"{F.pp(m.estimate)} {F.interval(F.pp, m.ci.low, m.ci.high)}"


def _cost_cell(m: MetricComparison | None) -> str:
    if m is None:
        return F.DASH
    if m.scale == "ratio":
        return f"{F.ratio(m.estimate)} {F.interval(F.ratio, m.ci.low, m.ci.high)}"
    return f"{F.signed_usd(m.estimate)} {F.interval(F.signed_usd, m.ci.low, m.ci.high)}"


@dataclass(frozen=True)
class _Power:
    """What one model's comparisons can detect (80 % power, the model's Holm level)."""

    plans: dict[tuple[str, str], PlanRow]
    effect: float
    """Smallest success difference that matters, a fraction."""
    cost_ratio: float
    """Smallest cost ratio that matters."""
    level: float
    """Two-sided level of the first Holm step, ALPHA / family size."""
    plan_command: str

    def success(self, arm: str) -> float:
        row = self.plans.get((arm, "success"))
        return row.detectable if row else float("nan")

    def cost(self, arm: str, cache_model: str) -> float:
        row = self.plans.get((arm, f"cost_usd_{cache_model}"))
        return row.detectable if row else float("nan")

    def success_ok(self, arm: str) -> bool:
        return self.success(arm) <= self.effect + 1e-12

    def cost_ok(self, arm: str, cache_model: str) -> bool:
        return self.cost(arm, cache_model) <= abs(math.log(self.cost_ratio)) + 1e-12


def _pp_detect(x: float) -> str:
    if math.isnan(x):
        return "nothing (fewer than 2 clusters)"
    return "no difference up to 100 pp" if math.isinf(x) else f"{100 * x:.1f} pp"


def _success_only(x: float) -> str:
    """What follows "this run detects": ``"only ≥ 96.6 pp in success"``, or that it detects none."""
    if math.isnan(x):
        return "no success difference at all (fewer than 2 clusters of tasks)"
    return "only a 100 pp success difference (every task flipped)" if x >= 0.9995 else f"only ≥ {100 * x:.1f} pp in success"


def _cost_only(log_effect: float) -> str:
    """What follows "this run detects" for cost: ``"only cost ratios ≤0.870× or ≥1.150×"``, or that it detects none."""
    if math.isnan(log_effect):
        return "no cost difference at all (fewer than 2 clusters of tasks)"
    if log_effect > math.log(100.0):
        return "only cost ratios below 0.01× or above 100×"
    return f"only cost ratios {_ratio_detect(log_effect)}"


def _ratio_detect(log_effect: float) -> str:
    if math.isnan(log_effect):
        return "nothing (fewer than 2 clusters)"
    if log_effect > math.log(100.0):
        return "no ratio between 0.01× and 100×"
    return f"≤{math.exp(-log_effect):.3f}× or ≥{math.exp(log_effect):.3f}×"


def _no_decision(missing: list[str], power: _Power, found: str = "") -> str:
    """``no decision: this run detects only ≥ X; `readbench plan` says what would`` with the details
    (each of ``missing`` starts with "only ..." or "no ... at all")."""
    return (f"no decision: this run detects {'; and '.join(missing)}; `readbench plan` says what would "
            f"(`{power.plan_command}`).{found}")


def _recommend(comps: list[PairedComparison], cache_model: str, baseline_label: str, multi: bool,
               frontier: list[str], power: _Power) -> str:
    verdicts = [(c, verdict(c, cache_model)) for c in comps]
    ok = [(c, v) for c, v in verdicts if v.success >= 0 and v.cost <= 0]
    better = [(c, v) for c, v in ok if v.success > 0]
    cheaper = [(c, v) for c, v in ok if v.cost < 0]
    smallest = f"{100 * power.effect:g} pp"
    ratio = f"{power.cost_ratio:g}×"
    if better:
        c, _ = max(better, key=lambda cv: cv[0].success.estimate)
        arm = _short(c.arm, multi)
        front = " It is on the Pareto frontier." if arm in frontier else ""
        if not power.cost_ok(c.arm, cache_model):
            return _no_decision([f"{_cost_only(power.cost(c.arm, cache_model))} for {arm} under "
                                 f"{cache_model} (the smallest that matters: {ratio})"], power,
                                f" {arm} has significantly higher success than {baseline_label} "
                                f"({_success_cell(c.success)}), but a cost increase that matters could go undetected.")
        return (f"Ship {arm}: significantly higher success than {baseline_label} "
                f"({_success_cell(c.success)}) without a significant cost increase under {cache_model} (this run "
                f"detects cost ratios {_ratio_detect(power.cost(c.arm, cache_model))}).{front}")
    if cheaper:
        c, _ = min(cheaper, key=lambda cv: cv[0].metric(f"cost_usd_{cache_model}").estimate)  # type: ignore[union-attr]
        arm = _short(c.arm, multi)
        front = " It is on the Pareto frontier." if arm in frontier else ""
        cost = _cost_cell(c.metric(f"cost_usd_{cache_model}"))
        if not power.success_ok(c.arm):
            return _no_decision([f"{_success_only(power.success(c.arm))} for {arm} (the smallest that "
                                 f"matters: {smallest})"], power,
                                f" {arm} is significantly cheaper under {cache_model} (cost {cost} of "
                                f"{baseline_label}'s), but a success drop that matters could go undetected.")
        return (f"Ship {arm} to save cost under {cache_model}: cost {cost} of {baseline_label}'s with no significant "
                f"change in success ({_success_cell(c.success)}; this run detects "
                f"{_pp_detect(power.success(c.arm))}).{front}")
    weak_s = [c for c in comps if not power.success_ok(c.arm)]
    weak_c = [c for c in comps if not power.cost_ok(c.arm, cache_model)]
    if weak_s or weak_c:
        missing = []
        if weak_s:
            worst = max((power.success(c.arm) for c in weak_s), key=lambda x: x if not math.isnan(x) else math.inf)
            missing.append(f"{_success_only(worst)} ({len(weak_s)} of {len(comps)} arm(s); the smallest "
                           f"that matters: {smallest})")
        if weak_c:
            worst = max((power.cost(c.arm, cache_model) for c in weak_c),
                        key=lambda x: x if not math.isnan(x) else math.inf)
            missing.append(f"{_cost_only(worst)} under {cache_model} ({len(weak_c)} of {len(comps)} "
                           f"arm(s); the smallest that matters: {ratio})")
        return _no_decision(missing, power, f" No arm is significantly better or cheaper than {baseline_label}.")
    return (f"Keep {baseline_label}: no arm is significantly better in success or cheaper under {cache_model} "
            "without being significantly worse in the other, and every arm would have shown a difference of "
            f"{smallest} in success and a cost ratio of {ratio} (80% power, Holm level).")


def _limit(comps: list[PairedComparison], power: _Power, family: int) -> str:
    first = comps[0]
    design = (f"{first.n_tasks} task(s) × {first.n_epochs} epoch(s) from {first.n_clusters} "
              f"cluster(s) (source repositories; tasks when there is one repository)")
    level = f"two-sided {ALPHA:g}/{family} = {power.level:.3g}, Holm's first step over {family} confirmatory tests"
    values = [power.success(c.arm) for c in comps]
    finite = [x for x in values if math.isfinite(x)]
    if not finite:
        why = ('one cluster leaves no variance estimate' if first.n_clusters < 2 else
               'even a 100 pp difference would go undetected at 80% power')
        return f"{design} cannot separate arms in success at all ({level}): {why}."
    lo, hi = min(finite), max(finite)
    span = f"{100 * lo:.1f} pp" if hi - lo < 0.0005 else f"{100 * lo:.1f}–{100 * hi:.1f} pp depending on the arm"
    more = "" if len(finite) == len(values) else f" (and nothing at all for {len(values) - len(finite)} arm(s))"
    return (f"{design} cannot separate arms closer than {span}{more} in success (80% power, {level}; from the "
            "run's own discordance and repository correlation).")


def _need_short(plan: PlanRow) -> str:
    p = plan.plan
    return f"no estimate ({p.reason})" if p.n_tasks is None else f"{p.n_tasks:,} tasks × {p.epochs} epoch(s)"


def decision_section(summaries: tuple[ArmSummary, ...], comparisons: tuple[PairedComparison, ...],
                     plans: tuple[PlanRow, ...], cache_models: list[str], multi_model: bool,
                     baseline: tuple[str, str], effect: float, cost_ratio: float,
                     plan_from: str = "RUN_DIR") -> list[Block]:
    """Blocks of the "Decision" section (see the module docstring).

    `plans` must be computed at each model's Holm level (`holm_levels`); `effect` and
    `cost_ratio` are the smallest differences that matter; `plan_from` names the run directory
    in the `readbench plan` command the section prints.
    """
    blocks: list[Block] = [Heading(2, "Decision")]
    by_plan = {(r.arm, r.metric): r for r in plans}
    points = pareto_points(summaries, cache_models, multi_model, baseline, comparisons)
    families = family_sizes(comparisons)
    for model in dict.fromkeys(s.model for s in summaries):
        comps = [c for c in comparisons if c.model == model]
        base_label = f"{baseline[0]} × {baseline[1]}"
        if multi_model:
            blocks.append(Heading(3, f"Model {model}"))
        if not comps:
            blocks.append(Paragraph(f"No paired comparison for {model}: the decision needs the baseline arm "
                                    f"{base_label} and at least one other arm on the same tasks."))
            continue
        family = max(1, families.get(model, 1))
        level = ALPHA / family
        power = _Power(by_plan, effect, cost_ratio, level,
                       f"readbench plan --from {plan_from} --effect {effect:g} --cost-ratio {cost_ratio:g} "
                       f"--alpha {level:.3g}")
        items = []
        for m in cache_models or [""]:
            here = points[(points["model"] == model) & (points["cache_model"] == m) & points["frontier"]]
            front = [f"{a} (n.s.)" if ns and not b else a for a, ns, b in zip(here["arm"], here["ns"], here["baseline"])]
            if m:
                items.append(f"Priced as {m} — {_recommend(comps, m, base_label, multi_model, list(here['arm']), power)} "
                             f"Pareto frontier (success ↑, median cost ↓): {', '.join(front) or F.DASH}.")
            else:
                items.append(_recommend(comps, "no cache model", base_label, multi_model, [], power))
        blocks.append(Bullets(tuple(items)))
        if points["ns"].any():
            blocks.append(Paragraph(f"n.s.: not significantly different from {base_label} in success or in cost under "
                                    "that cache model (Holm): its place on the frontier is within noise."))
        first = cache_models[0] if cache_models else ""
        better = [_short(c.arm, multi_model) for c in comps if verdict(c, first).success > 0]
        worse = [_short(c.arm, multi_model) for c in comps if verdict(c, first).success < 0]
        blocks.append(Paragraph(
            f"Success vs {base_label} (Holm-adjusted p < {ALPHA:g}): better — {', '.join(better) or 'none'}; "
            f"worse — {', '.join(worse) or 'none'}. Smallest differences that matter: {100 * effect:g} pp in "
            f"success, a cost ratio of {cost_ratio:g}. Limit of the evidence: {_limit(comps, power, family)}"))
        header = ("arm", "Δ success [95% CI]", "Holm p", "this run detects (success)") + tuple(
            x for m in cache_models for x in (f"cost ratio (geometric mean over tasks), {m} [95% CI]", "Holm p")) + (
            f"to detect {100 * effect:g} pp (success)",)
        rows = []
        marks = False
        for c in comps:
            marks |= bool(F.few_mark(c.success.n_clusters))
            cells = [_short(c.arm, multi_model), F.marked(_success_cell(c.success), c.success.n_clusters),
                     F.p_value(c.success.p_holm), _pp_detect(power.success(c.arm))]
            for m in cache_models:
                mc = c.metric(f"cost_usd_{m}")
                cells += [F.marked(_cost_cell(mc), mc.n_clusters) if mc else F.DASH,
                          F.p_value(mc.p_holm) if mc else F.DASH]
            plan = by_plan.get((c.arm, "success"))
            sig = verdict(c, first).success != 0
            cells.append("significant" if sig else (need_text(plan.plan) if plan else F.DASH))
            rows.append(tuple(cells))
        blocks.append(Table(header, tuple(rows), caption=(
            f"Confirmatory comparisons with {base_label}: success and cost per cache model, Holm-adjusted together "
            f"within the model. Detectable differences and designs at 80% power and Holm's first-step level "
            f"{level:.3g}; for each non-significant success difference, the design needed to detect "
            f"{100 * effect:g} pp (`readbench plan`).") + F.few_footnote(marks)))
        cost_rows = []
        for c in comps:
            cells = []
            for m in cache_models:
                mc = c.metric(f"cost_usd_{m}")
                plan = by_plan.get((c.arm, f"cost_usd_{m}"))
                if mc is None or plan is None:
                    cells.append(F.DASH)
                elif _sig(mc):
                    cells.append("significant")
                else:
                    cells.append(f"{_need_short(plan)}; this run: {_ratio_detect(plan.detectable)}")
            if any(cell not in (F.DASH, "significant") for cell in cells):
                cost_rows.append((_short(c.arm, multi_model),) + tuple(cells))
        if cost_rows:
            blocks.append(Table(("arm",) + tuple(cache_models), tuple(cost_rows), caption=(
                f"Non-significant cost comparisons: tasks × epochs needed to detect a cost ratio of {cost_ratio:g} "
                f"(80% power, level {level:.3g}), and the ratios this run can detect.")))
    return blocks
