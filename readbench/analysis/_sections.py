"""Report sections: each turns aggregate records into document blocks (numbers via `_format`)."""

from __future__ import annotations

import numpy as np

from . import _format as F
from ._document import Block, Bullets, Heading, Paragraph, Table
from .aggregate import ArmSummary
from .compare import PairedComparison
from .partition import SamplePartition

__all__ = ["arms_section", "cache_section", "family_section", "paired_section", "partition_section"]

_LABELS = {
    "turns": "turns", "input_tokens": "input tokens", "read_calls": "read calls", "blind_reads": "blind reads",
    "capped_reads": "capped reads", "blocked_reads": "blocked reads", "reread_ratio": "reread ratio",
}
_MAX_IDS = 20


def label(column: str) -> str:
    """Human name of a metric column: ``cost_usd_openai`` -> ``cost USD (openai)``."""
    for prefix, name in (("cache_read_ratio_", "cache-read ratio"), ("cost_usd_unpruned_", "unpruned cost USD"),
                         ("dcp_cost_delta_", "DCP cost delta USD"), ("cost_usd_", "cost USD")):
        if column.startswith(prefix):
            return f"{name} ({column[len(prefix):]})"
    return _LABELS.get(column, column.replace("_", " "))


def _fmt_metric(column: str, value: float) -> str:
    if column.startswith(("cost_usd_", "dcp_cost_delta_")):
        return F.usd(value)
    if column.endswith("ratio") or column.startswith("cache_read_ratio_"):
        return F.num(value, 3)
    if column.endswith("tokens") or column.endswith("tokens_saved"):
        return F.num(value, 0)
    return F.num(value, 2)


def _fmt_delta(column: str, value: float) -> str:
    if column.startswith(("cost_usd_", "dcp_cost_delta_")):
        return F.signed_usd(value)
    if column.endswith("ratio") or column.startswith("cache_read_ratio_"):
        return F.signed(value, 3)
    return F.signed(value, 1)


def _n(s: ArmSummary) -> str:
    return f"{F.count(s.success.n)} ({s.n_tasks}×{s.n_epochs})"


def _arm(s: str, multi_model: bool) -> str:
    return s if multi_model else s.split(" @ ")[0]


_EFFORT = ("turns", "input_tokens", "read_calls", "blind_reads", "capped_reads", "blocked_reads", "reread_ratio")


def _effort_row(s: ArmSummary, name: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    cells = [name, _n(s), str(s.n_clusters), F.pct(s.success.rate),
             F.marked(F.ci_pct(s.success.ci.low, s.success.ci.high), s.n_clusters)]
    for col in columns:
        try:
            cells.append(_fmt_metric(col, s.metric(col).headline))
        except KeyError:
            cells.append(F.DASH)
    return tuple(cells)


def _effort_header(columns: tuple[str, ...]) -> tuple[str, ...]:
    stat = {c: ("median " if c == "input_tokens" else "mean ") for c in columns}
    return ("arm", "n (tasks×epochs)", "clusters", "success", "95% CI") + tuple(stat[c] + label(c) for c in columns)


def arms_section(summaries: tuple[ArmSummary, ...], multi_model: bool) -> list[Block]:
    """Per-arm success and effort table, with errored / limit-hit counts."""
    cols = _EFFORT
    rows = tuple(_effort_row(s, _arm(s.arm, multi_model), cols) + (str(s.n_errored), str(s.n_limit_hit))
                 for s in summaries)
    return [
        Heading(2, "Arms"),
        Table(_effort_header(cols) + ("errored", "limit-hit"), rows,
              caption="n = samples in the denominator (tasks × epochs); clusters = source repositories (tasks when "
                      "there is one repository). "
                      "Errored and limit-hit samples count as failures. Means over samples with metrics; "
                      "input tokens: median." + F.few_footnote(any(F.few_mark(s.n_clusters) for s in summaries))),
    ]


def family_section(summaries: tuple[ArmSummary, ...], multi_model: bool) -> list[Block]:
    """Per-family row groups of the per-arm table."""
    cols = ("turns", "input_tokens", "read_calls", "reread_ratio")
    rows: list[tuple[str, ...]] = []
    for family in sorted({s.family for s in summaries}):
        rows.append((f"§ family: {family}",) + ("",) * (4 + len(cols)))
        rows += [_effort_row(s, _arm(s.arm, multi_model), cols) for s in summaries if s.family == family]
    return [Heading(2, "By task family"),
            Table(_effort_header(cols), tuple(rows), caption="Same definitions as the arm table, per task family."
                  + F.few_footnote(any(F.few_mark(s.n_clusters) for s in summaries)))]


def cache_section(summaries: tuple[ArmSummary, ...], cache_models: list[str], multi_model: bool) -> list[Block]:
    """Cache-read ratio and cost per cache model; DCP footer estimate next to the real cost delta."""
    header = ("arm", "cache model", "n", "clusters", "mean cache-read ratio", "median cost USD", "mean cost USD",
              "mean unpruned cost USD", "mean DCP footer estimate, tokens saved", "mean real DCP cost delta USD",
              "real delta / unpruned")
    rows = []
    for s in summaries:
        have = {x.column: x for x in s.metrics}
        nan = float("nan")

        def mean(col: str) -> float:
            return have[col].mean if col in have else nan

        for m in cache_models:
            cost = have.get(f"cost_usd_{m}")
            unpruned, delta = mean(f"cost_usd_unpruned_{m}"), mean(f"dcp_cost_delta_{m}")
            rel = delta / unpruned if np.isfinite(unpruned) and unpruned != 0 else nan
            rows.append((_arm(s.arm, multi_model), m, str(cost.n if cost else 0), str(s.n_clusters),
                         F.num(mean(f"cache_read_ratio_{m}"), 3), F.usd(cost.median if cost else nan),
                         F.usd(mean(f"cost_usd_{m}")), F.usd(unpruned), F.num(mean("dcp_footer_tokens_saved"), 0),
                         F.usd(delta), F.pct(rel)))
    return [
        Heading(2, "Prompt cache and cost"),
        Table(header, tuple(rows),
              caption="n = samples with cost metrics (errored samples have none); tasks × epochs as in the arm "
                      "table. Per cache model, simulated from each sample's exact request sequence. The DCP footer "
                      "estimate is pi-dcp's own chars/4 claim of tokens saved; the real delta is cost minus the "
                      "cost of the same requests without pruning (negative = pruning saved money)."),
    ]


def paired_section(comparisons: tuple[PairedComparison, ...], notes: tuple[str, ...],
                   multi_model: bool) -> list[Block]:
    """Paired success and paired metrics vs the baseline arm, with the secondary tests."""
    blocks: list[Block] = [Heading(2, "Paired comparisons with the baseline")]
    if not comparisons:
        blocks.append(Paragraph("No paired comparison: " + (" ".join(notes) or "only the baseline arm ran.")))
        return blocks
    blocks.append(Paragraph(
        "Pairs are the same (task, epoch) in the arm and in the baseline arm of the same model. Intervals and "
        "p-values: CR2 cluster-robust t by source repository (tasks when there is one repository), Bell-McCaffrey "
        "degrees of freedom (df; clusters - 1 for equal clusters). Holm p: adjusted across the confirmatory family "
        "(success and cost of every arm of the model); other metrics are exploratory. McNemar (success) and "
        "Wilcoxon (log ratios for tokens and cost) are secondary tests that treat pairs as independent."))
    rows = []
    for c in comparisons:
        m, s = c.mcnemar, c.success
        rows.append((_arm(c.arm, multi_model), _arm(c.baseline_arm, multi_model),
                     f"{F.count(c.n_pairs)} ({c.n_tasks}×{c.n_epochs})", str(c.n_clusters), str(c.n_unmatched),
                     F.pp(s.estimate), F.marked(F.interval(F.pp, s.ci.low, s.ci.high), s.n_clusters),
                     F.num(s.difference.df, 1),
                     F.p_value(s.p_value), F.p_value(s.p_holm),
                     f"{m.both_success}/{m.treatment_only}/{m.baseline_only}/{m.neither}", F.p_value(m.p_value)))
    blocks.append(Table(
        ("arm", "baseline", "pairs (tasks×epochs)", "clusters", "unmatched", "Δ success", "95% CI", "df", "p",
         "Holm p", "both / arm only / baseline only / neither", "McNemar p"), tuple(rows),
        caption="Paired success (errored = failure)."
        + F.few_footnote(any(F.few_mark(c.success.n_clusters) for c in comparisons))))
    mrows = []
    for c in comparisons:
        for pm in c.metrics:
            d = pm.difference
            ratio = pm.ratio
            mrows.append((_arm(c.arm, multi_model), label(pm.metric), f"{F.count(pm.n_pairs)} ({pm.n_tasks}×{pm.n_epochs})",
                          str(pm.n_clusters), _fmt_metric(pm.metric, pm.median_baseline),
                          _fmt_metric(pm.metric, pm.median_treatment), _fmt_delta(pm.metric, d.mean_difference),
                          F.marked(F.interval(lambda x: _fmt_delta(pm.metric, x), d.ci.low, d.ci.high), pm.n_clusters),
                          F.DASH if ratio is None else F.ratio(ratio.ratio),
                          F.DASH if ratio is None else F.marked(F.interval(F.ratio, ratio.ci.low, ratio.ci.high),
                                                                pm.n_clusters),
                          F.p_value(pm.p_value), F.p_value(pm.p_holm), F.p_value(pm.wilcoxon.p_value)))
    blocks.append(Table(
        ("arm", "metric", "pairs (tasks×epochs)", "clusters", "median baseline", "median arm", "mean Δ", "95% CI",
         "geo-mean ratio", "95% CI", "p", "Holm p", "Wilcoxon p"), tuple(mrows),
        caption="Paired metrics (pairs with the metric on both sides). p: of the ratio for tokens and cost, else of "
                "the mean difference; Holm p only for the confirmatory cost metrics."
                + F.few_footnote(any(F.few_mark(pm.n_clusters) for c in comparisons for pm in c.metrics))))
    if notes:
        blocks.append(Bullets(tuple(notes)))
    return blocks


def partition_section(partition: SamplePartition, multi_model: bool) -> list[Block]:
    """Every sample accounted for: bucket counts per arm and the non-completed ids."""
    rows = []
    items = []
    for p in partition.arms:
        name = _arm(p.arm, multi_model)
        rows.append((name, f"{p.n_total} ({p.n_tasks}×{p.n_epochs})", str(p.n_clusters), str(len(p.completed)), str(len(p.solved)), str(len(p.limit_hit)),
                     str(len(p.errored)), str(len(p.excluded)), str(p.n_denominator)))
        for bucket in ("errored", "limit_hit", "excluded"):
            ids = getattr(p, bucket)
            if ids:
                shown = ", ".join(ids[:_MAX_IDS])
                more = f" … (+{len(ids) - _MAX_IDS} more in partition.json)" if len(ids) > _MAX_IDS else ""
                items.append(f"{name} — {bucket.replace('_', '-')}: {shown}{more}")
    blocks: list[Block] = [
        Heading(2, "Sample partition"),
        Table(("arm", "total (tasks×epochs)", "repositories", "completed", "solved", "limit-hit", "errored", "excluded", "denominator"),
              tuple(rows), caption="Disjoint buckets; denominator = total − excluded. Full id lists: partition.json."),
    ]
    if items:
        blocks.append(Bullets(tuple(items)))
    return blocks
