"""The report's opening section: what the evidence supports shipping, and what it cannot tell.

Per model x cache model: the arms on the Pareto frontier of success (higher) and median cost
per sample (lower); the arms significantly better or worse than the baseline on the
confirmatory family (success, cost; Holm-adjusted, `compare`); a recommendation; and the limit
of the evidence (the smallest success difference the run's design can detect, `power`), with
"to detect X you would need about N tasks x E epochs" for every non-significant comparison.
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

__all__ = ["ALPHA", "Verdict", "decision_section", "pareto_points", "verdict"]

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


def pareto_points(summaries: tuple[ArmSummary, ...], cache_models: list[str], multi_model: bool,
                  baseline: tuple[str, str]) -> pd.DataFrame:
    """One row per (model, cache model, arm): success, CI, median cost, frontier and baseline flags.

    An arm is on the frontier when no other arm of the same model has success >= and median
    cost <= with one of them strict. Arms without a cost for the cache model are left out.
    """
    rows = []
    for s in summaries:
        for m in cache_models:
            try:
                cost = s.metric(f"cost_usd_{m}").median
            except KeyError:
                continue
            if not math.isfinite(cost):
                continue
            rows.append(dict(model=s.model, cache_model=m, arm=s.arm if multi_model else s.arm.split(" @ ")[0],
                             full_arm=s.arm, success=s.success.rate, low=s.success.ci.low, high=s.success.ci.high,
                             cost_usd=cost, baseline=(s.variant, s.dcp) == baseline))
    df = pd.DataFrame(rows, columns=["model", "cache_model", "arm", "full_arm", "success", "low", "high", "cost_usd",
                                     "baseline"])
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


def _recommend(comps: list[PairedComparison], cache_model: str, baseline_label: str, multi: bool,
               frontier: list[str]) -> str:
    verdicts = [(c, verdict(c, cache_model)) for c in comps]
    ok = [(c, v) for c, v in verdicts if v.success >= 0 and v.cost <= 0]
    better = [(c, v) for c, v in ok if v.success > 0]
    cheaper = [(c, v) for c, v in ok if v.cost < 0]
    if better:
        c, _ = max(better, key=lambda cv: cv[0].success.estimate)
        front = " It is on the Pareto frontier." if _short(c.arm, multi) in frontier else ""
        return (f"Ship {_short(c.arm, multi)}: significantly higher success than {baseline_label} "
                f"({_success_cell(c.success)}) without a significant cost increase under {cache_model}.{front}")
    if cheaper:
        c, _ = min(cheaper, key=lambda cv: cv[0].metric(f"cost_usd_{cache_model}").estimate)  # type: ignore[union-attr]
        front = " It is on the Pareto frontier." if _short(c.arm, multi) in frontier else ""
        return (f"Ship {_short(c.arm, multi)} to save cost under {cache_model}: cost "
                f"{_cost_cell(c.metric(f'cost_usd_{cache_model}'))} of {baseline_label}'s with no significant change "
                f"in success ({_success_cell(c.success)}).{front}")
    return (f"Keep {baseline_label}: no arm is significantly better in success or cheaper under {cache_model} "
            "without being significantly worse in the other.")


def _limit(comps: list[PairedComparison], plans: dict[tuple[str, str], PlanRow]) -> str:
    first = comps[0]
    rows = [plans[(c.arm, "success")] for c in comps if (c.arm, "success") in plans]
    design = (f"{first.n_tasks} task(s) × {first.n_epochs} epoch(s) from {first.n_clusters} "
              f"cluster(s) (source repositories; tasks when there is one repository)")
    finite = [r.detectable for r in rows if math.isfinite(r.detectable)]
    if not finite:
        return (f"{design} cannot separate arms in success at all: "
                f"{'one cluster leaves no variance estimate' if first.n_clusters < 2 else 'even a 100 pp difference would go undetected at 80% power'}.")
    lo, hi = min(finite), max(finite)
    span = f"{100 * lo:.1f} pp" if hi - lo < 0.0005 else f"{100 * lo:.1f}–{100 * hi:.1f} pp depending on the arm"
    return (f"{design} cannot separate arms closer than {span} in success (80% power, two-sided "
            f"{ALPHA:g}, from the run's own discordance and repository correlation).")


def _need_short(plan: PlanRow) -> str:
    p = plan.plan
    return f"no estimate ({p.reason})" if p.n_tasks is None else f"{p.n_tasks:,} tasks × {p.epochs} epoch(s)"


def _detects_ratio(log_effect: float) -> str:
    if not math.isfinite(log_effect):
        return "nothing"
    return f"≤{math.exp(-log_effect):.3f}× or ≥{math.exp(log_effect):.3f}×"


def decision_section(summaries: tuple[ArmSummary, ...], comparisons: tuple[PairedComparison, ...],
                     plans: tuple[PlanRow, ...], cache_models: list[str], multi_model: bool,
                     baseline: tuple[str, str], effect: float, cost_ratio: float) -> list[Block]:
    """Blocks of the "Decision" section (see the module docstring)."""
    blocks: list[Block] = [Heading(2, "Decision")]
    by_plan = {(r.arm, r.metric): r for r in plans}
    points = pareto_points(summaries, cache_models, multi_model, baseline)
    for model in dict.fromkeys(s.model for s in summaries):
        comps = [c for c in comparisons if c.model == model]
        base_label = f"{baseline[0]} × {baseline[1]}"
        if multi_model:
            blocks.append(Heading(3, f"Model {model}"))
        if not comps:
            blocks.append(Paragraph(f"No paired comparison for {model}: the decision needs the baseline arm "
                                    f"{base_label} and at least one other arm on the same tasks."))
            continue
        items = []
        for m in cache_models or [""]:
            front = list(points[(points["model"] == model) & (points["cache_model"] == m) & points["frontier"]]["arm"])
            if m:
                items.append(f"Priced as {m} — {_recommend(comps, m, base_label, multi_model, front)} "
                             f"Pareto frontier (success ↑, median cost ↓): {', '.join(front) or F.DASH}.")
            else:
                items.append(_recommend(comps, "no cache model", base_label, multi_model, []))
        blocks.append(Bullets(tuple(items)))
        better = [_short(c.arm, multi_model) for c in comps if verdict(c, cache_models[0] if cache_models else "").success > 0]
        worse = [_short(c.arm, multi_model) for c in comps if verdict(c, cache_models[0] if cache_models else "").success < 0]
        blocks.append(Paragraph(
            f"Success vs {base_label} (Holm-adjusted p < {ALPHA:g}): better — {', '.join(better) or 'none'}; "
            f"worse — {', '.join(worse) or 'none'}. Limit of the evidence: {_limit(comps, by_plan)}"))
        header = ("arm", "Δ success [95% CI]", "Holm p") + tuple(
            x for m in cache_models for x in (f"cost ratio, {m} [95% CI]", "Holm p")) + (
            f"to detect {100 * effect:.0f} pp (success)",)
        rows = []
        for c in comps:
            cells = [_short(c.arm, multi_model), _success_cell(c.success), F.p_value(c.success.p_holm)]
            for m in cache_models:
                mc = c.metric(f"cost_usd_{m}")
                cells += [_cost_cell(mc), F.p_value(mc.p_holm) if mc else F.DASH]
            plan = by_plan.get((c.arm, "success"))
            sig = verdict(c, cache_models[0] if cache_models else "").success != 0
            cells.append("significant" if sig else (need_text(plan.plan) if plan else F.DASH))
            rows.append(tuple(cells))
        blocks.append(Table(header, tuple(rows), caption=(
            f"Confirmatory comparisons with {base_label}: success and cost per cache model, Holm-adjusted together "
            f"within the model. For each non-significant success difference: the design needed to detect "
            f"{100 * effect:.0f} pp at 80% power (`readbench plan`).")))
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
                    cells.append(f"{_need_short(plan)}; this run: {_detects_ratio(plan.detectable)}")
            if any(cell not in (F.DASH, "significant") for cell in cells):
                cost_rows.append((_short(c.arm, multi_model),) + tuple(cells))
        if cost_rows:
            blocks.append(Table(("arm",) + tuple(cache_models), tuple(cost_rows), caption=(
                f"Non-significant cost comparisons: tasks × epochs needed to detect a cost ratio of {cost_ratio:g} "
                "(80% power), and the ratios this run can detect.")))
    return blocks
