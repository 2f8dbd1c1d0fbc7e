"""The report: Markdown + self-contained HTML + PNG figures, computed from the tidy table.

It opens with the decision (what to ship per model x cache model, and the limit of the
evidence), then the figures, then the tables.

`render_report` is the single entry point (the ``readbench report`` command calls it). Every
number in the report comes from the table through `aggregate` and `stats`; the report states
n (tasks, epochs) and the number of clusters (source repositories) in every table
(docs/specs/metrics.md "Aggregation"; docs/specs/STYLE.md items 6-8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from . import _figures, _sections
from ._decision import ALPHA, decision_section, family_sizes, pareto_points
from ._document import Block, Bullets, Heading, Image, Paragraph, to_html, to_markdown
from ._placement import placement_section
from .aggregate import arm_summaries, prepare
from .compare import paired_comparisons
from .completeness import LogScan, incomplete_section, mark_partial
from .divergence import divergence_section
from .partition import partition_samples
from .plan import plan_comparisons
from .real_models import few_pairs_warnings, real_model_section
from .table import cache_models_in

__all__ = ["DEFAULT_COST_RATIO", "DEFAULT_EFFECT", "SIM_MODEL_PREFIX", "render_report"]

SIM_MODEL_PREFIX = "readbench/sim-"
"""Models whose name starts with this are the simulated agent (docs/specs/sim-agent.md)."""

DEFAULT_EFFECT = 0.05
"""Success difference (5 pp) whose required design the report states for non-significant comparisons."""
DEFAULT_COST_RATIO = 0.9
"""Cost ratio (10 % cheaper) whose required design the report states for non-significant cost comparisons."""


def _meta_text(value: Any) -> str:
    """A run.json value as one line: scalars as is, lists of scalars comma-joined, other
    values as compact JSON when under 200 characters; "" for anything longer or None."""
    if value is None:
        return ""
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return ", ".join(str(v) for v in value)
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) < 200 else ""


def _header(table: pd.DataFrame, run_meta: dict[str, Any]) -> list[Block]:
    models = sorted(set(table["model"]))
    title = str(run_meta.get("name") or run_meta.get("matrix") or run_meta.get("run_id") or "readbench run")
    blocks: list[Block] = [Heading(1, f"readbench report: {title}")]
    blocks.append(Paragraph(f"Model(s): {', '.join(models)}. Arms: {table['arm'].nunique()}; samples: "
                            f"{len(table)} ({table['sample_id'].nunique()} tasks × {table['epoch'].nunique()} epoch(s) "
                            f"per arm at most); clusters (source repositories): {table['source'].nunique()}; "
                            f"task families: {table['family'].nunique()}."))
    sim = [m for m in models if m.startswith(SIM_MODEL_PREFIX)]
    if sim:
        blocks.append(Paragraph(
            f"{', '.join(sim)} {'is a simulated agent' if len(sim) == 1 else 'are simulated agents'}: these results "
            "measure the harness mechanics (read-tool variants, DCP projection, prompt-cache pricing) under the "
            "stated simulated behaviours, not the quality of any LLM."))
    return blocks


def _real_models(table: pd.DataFrame, settings: dict[str, list[dict[str, Any]]], cache_models: list[str]) -> list[Block]:
    from readbench.cache.prices import PRICES_AS_OF
    from readbench.cache.registry import CACHE_MODELS
    from readbench.metrics.native import native_cost_model

    priced: dict[str, str | None] = {m: CACHE_MODELS.get(m).default_priced_model if m in CACHE_MODELS else None
                                     for m in cache_models}
    priced.update({m: native_cost_model(m) for m in set(table["model"]) if not m.startswith(SIM_MODEL_PREFIX)})
    return real_model_section(table, settings, cache_models, priced, str(PRICES_AS_OF))


def _methods(run_meta: dict[str, Any], baseline: tuple[str, str]) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Methods"), Paragraph(
        "Success rates: Wilson 95% intervals; with several clusters, on the effective sample size from the CR2 "
        "cluster-robust variance and with a t quantile on Bell-McCaffrey degrees of freedom (clusters - 1 for equal "
        "clusters), which keeps coverage near 95% with 6-12 repositories (tests/analysis/test_analysis_coverage.py; "
        "Cameron, Gelbach & Miller 2008; Bell & McCaffrey 2002; Imbens & Kolesár 2016; E. Miller, \"Adding Error "
        "Bars to Evals\", arXiv 2411.00640, 2024). Clusters are source repositories, or tasks when a group has one "
        "repository (so repeated epochs of a task are not treated as independent). Paired comparisons use the "
        f"baseline arm {baseline[0]} × {baseline[1]} of the same model, per (task, epoch): mean differences, and "
        "geometric-mean ratios for tokens and cost, each with a CR2 t interval and the t test it inverts. "
        f"Confirmatory family: success and cost per cache model of every arm, Holm-adjusted within a model at "
        f"{ALPHA:g}. Power and detectable effects: `readbench plan` (Miller's formula with repository clustering "
        "and t quantiles). Errored and limit-hit samples (including context overflows) count as failures and stay "
        "in every denominator; excluded samples leave every denominator.")]
    items = [f"{k}: {_meta_text(v)}" for k, v in sorted(run_meta.items()) if _meta_text(v)]
    if items:
        blocks.append(Bullets(tuple(items)))
    return blocks


def _figures_blocks(table: pd.DataFrame, kept: pd.DataFrame, summaries, comparisons, cache_models: list[str],
                    multi: bool, baseline: tuple[str, str], out: Path) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Figures")]
    points = pareto_points(summaries, cache_models, multi, baseline, comparisons)
    png = _figures.pareto_figure(points, out / "pareto.png")
    if png is not None:
        blocks.append(Image(png.name, "Success vs median cost per sample: the Pareto frontier per cache model; "
                                      "hollow and \"(n.s.)\": not significantly different from the baseline"))
    png = _figures.forest_figure(comparisons, out / "forest.png")
    if png is not None:
        blocks.append(Image(png.name, "Paired differences vs the baseline: success, cost, turns, read calls"))
    stock = kept[kept["variant"] == baseline[0]]
    rows = stock if stock["dcp"].nunique() > 1 else kept
    cells = pd.DataFrame([dict(dcp=d, cache_model=m, ratio=v) for m in cache_models
                          if f"cache_read_ratio_{m}" in rows for d, v in zip(rows["dcp"], rows[f"cache_read_ratio_{m}"])
                          if pd.notna(v)], columns=["dcp", "cache_model", "ratio"])
    subtitle = f"{baseline[0]} reads" if rows is stock else "all read variants"
    png = _figures.cache_ratio_figure(cells, out / "cache_ratio.png", subtitle)
    if png is not None:
        blocks.append(Image(png.name, f"Mean cache-read ratio by DCP configuration × cache model ({subtitle})"))
    frag = kept[kept["dcp"] == baseline[1]]
    frag = frag if not frag.empty else kept
    png = _figures.fragmentation_figure(frag, out / "fragmentation.png", f"DCP {baseline[1]}")
    if png is not None:
        blocks.append(Image(png.name, "Reads per file and re-read ratio by file size (lines)"))
    return blocks


def render_report(
    table: pd.DataFrame,
    out_dir: Path,
    *,
    baseline: tuple[str, str] = ("stock", "off"),
    run_meta: dict[str, Any],
    exclude: tuple[str, ...] = (),
    effect: float = DEFAULT_EFFECT,
    cost_ratio: float = DEFAULT_COST_RATIO,
    completeness: LogScan | None = None,
    model_settings: dict[str, list[dict[str, Any]]] | None = None,
    plan_from: str = "RUN_DIR",
    divergence: pd.DataFrame | None = None,
) -> Path:
    """Write ``report.md``, ``report.html``, ``partition.json`` and figures into `out_dir`.

    The report opens with the decision (`_decision`), then the figures, then the tables and
    the methods.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table (`table.tidy_table` or `table.read_table`).
    out_dir : Path
        Output directory (created if missing); files are overwritten.
    baseline : (variant, dcp), default ("stock", "off")
        Baseline arm of every model for the paired comparisons.
    run_meta : dict
        Run metadata (``run.json``); its entries are listed under Methods (see `_meta_text`);
        ``name``, ``matrix`` or ``run_id`` titles the report.
    exclude : tuple of str
        Sample ids or ``id#epoch`` keys removed from every denominator (listed as excluded).
    effect : float, default `DEFAULT_EFFECT`
        The smallest success difference that matters (fraction; `smallest.SmallestDifference`):
        below it the run makes no decision, and its required design is stated for every
        non-significant comparison.
    cost_ratio : float, default `DEFAULT_COST_RATIO`
        The smallest cost ratio that matters, likewise.
    completeness : completeness.LogScan, optional
        The run's log statuses: partial arms and unreadable logs get a flagged section, partial
        arms are marked ``[partial]`` in the tables and left out of the decision, the figures
        and the paired comparisons. None means every arm finished.
    model_settings : dict, optional
        `real_models.log_settings` of the run's logs: what each real model was and how it was
        reached and bounded (the "Real models" section; a warning when one model name ran
        with different settings).
    plan_from : str, default "RUN_DIR"
        The run directory named in the decision's `readbench plan` command.
    divergence : pandas.DataFrame, optional
        `divergence.divergence_summary` of a forked run (the "Divergence" section); None or
        empty for an independent run.

    Returns
    -------
    Path
        The ``report.md`` written.

    Raises
    ------
    ValueError
        If the table is empty, lacks a needed column, or every sample is excluded.
    """
    if table.empty:
        raise ValueError("table is empty: no samples to report")
    needed = ("arm", "model", "variant", "dcp", "sample_id", "epoch", "source", "family", "success",
              "stop_reason", "error", "limit", "input_tokens")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {missing} needed for the report")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    multi = table["model"].nunique() > 1
    partial = {a.arm for a in completeness.partial} if completeness else set()
    finished = table[~table["arm"].isin(partial)]
    shown = mark_partial(table, completeness) if completeness else table
    partition = partition_samples(shown, exclude, baseline)
    summaries = arm_summaries(shown, exclude=exclude, baseline=baseline)
    families = arm_summaries(shown, exclude=exclude, by_family=True, baseline=baseline)
    models = cache_models_in(table)

    blocks: list[Block] = _header(table, run_meta)
    if completeness is not None:
        blocks += incomplete_section(completeness, baseline)
    blocks += _real_models(table, model_settings or {}, models)
    if finished.empty:
        comparisons, notes = (), ("No arm finished: no paired comparison.",)
        blocks += [Heading(2, "Decision"), Paragraph("No arm finished: no decision.")]
    else:
        comparisons, notes = paired_comparisons(finished, baseline, exclude=exclude)
        plans = tuple(row for model, size in family_sizes(comparisons).items() for row in plan_comparisons(
            finished, tuple(c for c in comparisons if c.model == model), effect=effect, cost_ratio=cost_ratio,
            alpha=ALPHA / max(1, size), baseline=baseline, exclude=exclude))
        done = summaries if not partial else arm_summaries(finished, exclude=exclude, baseline=baseline)
        blocks += decision_section(done, comparisons, plans, models, multi, baseline, effect, cost_ratio,
                                   plan_from=plan_from)
        kept = prepare(finished, exclude, baseline)
        blocks += _figures_blocks(finished, kept, done, comparisons, models, multi, baseline, out)
    blocks += _sections.arms_section(summaries, multi)
    blocks += _sections.family_section(families, multi)
    if models:
        blocks += _sections.cache_section(summaries, models, multi)
        blocks += placement_section(shown, models, multi)
    if divergence is not None:
        blocks += divergence_section(divergence)
    blocks += _sections.paired_section(comparisons, notes, multi)
    blocks += few_pairs_warnings(tuple(comparisons), multi)
    blocks += _sections.partition_section(partition, multi)
    blocks += _methods(run_meta, baseline)

    (out / "partition.json").write_text(json.dumps(partition.to_dict(), indent=2) + "\n")
    md_path = out / "report.md"
    md_path.write_text(to_markdown(blocks))
    title = blocks[0].text if isinstance(blocks[0], Heading) else "readbench report"
    (out / "report.html").write_text(to_html(blocks, out, title))
    return md_path
