"""The report: Markdown + self-contained HTML + PNG figures, computed from the tidy table.

`render_report` is the single entry point (the ``readbench report`` command calls it). Every
number in the report comes from the table through `aggregate` and `stats`; the report states
n (tasks, epochs) and the number of clusters (source repositories) in every table
(shared/specs/metrics.md "Aggregation"; shared/STYLE.md items 6-8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import _figures, _sections
from ._document import Block, Bullets, Heading, Image, Paragraph, to_html, to_markdown
from .aggregate import arm_summaries, cost_columns, paired_comparisons, prepare
from .partition import partition_samples
from .table import cache_models_in

__all__ = ["SIM_MODEL_PREFIX", "render_report"]

SIM_MODEL_PREFIX = "readbench/sim-"
"""Models whose name starts with this are the simulated agent (shared/specs/sim-agent.md)."""

DEFAULT_SEED = 0
"""Seed of the bootstrap generator when the caller passes no `rng` (stated in the report)."""


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


def _header(table: pd.DataFrame, run_meta: dict[str, Any], baseline: tuple[str, str]) -> list[Block]:
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
    blocks.append(Paragraph(
        "Success rates: Wilson 95% intervals on the design-effect-adjusted sample size, from Miller's clustered "
        "standard error (E. Miller, \"Adding Error Bars to Evals\", arXiv 2411.00640, 2024). Clusters are source "
        "repositories, or tasks when a group has one repository (so repeated epochs of a task are not treated as "
        "independent); a group with a single cluster gets the unclustered interval. Paired comparisons use the "
        f"baseline arm {baseline[0]} × {baseline[1]} of the same model, per (task, epoch). Errored and limit-hit "
        "samples count as failures and stay in every denominator; excluded samples leave every denominator."))
    items = [f"{k}: {_meta_text(v)}" for k, v in sorted(run_meta.items()) if _meta_text(v)]
    if items:
        blocks.append(Bullets(tuple(items)))
    return blocks


def _token_pairs(df: pd.DataFrame, baseline: tuple[str, str]) -> pd.DataFrame:
    """Per-pair input-token ratio arm / baseline (same model, sample, epoch; both > 0)."""
    frames = []
    multi = df["model"].nunique() > 1
    for _, mrows in df.groupby("model", sort=False):
        base = mrows[(mrows["variant"] == baseline[0]) & (mrows["dcp"] == baseline[1])]
        if base.empty:
            continue
        other = mrows[~mrows["arm"].isin(set(base["arm"]))]
        merged = other.merge(base[["sample_id", "epoch", "input_tokens"]], on=["sample_id", "epoch"],
                             suffixes=("", "_b"))
        merged = merged[(merged["input_tokens"] > 0) & (merged["input_tokens_b"] > 0)]
        arm = merged["arm"] if multi else merged["arm"].str.split(" @ ").str[0]
        frames.append(pd.DataFrame({"arm": arm, "ratio": merged["input_tokens"] / merged["input_tokens_b"]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"arm": [], "ratio": []})


def render_report(
    table: pd.DataFrame,
    out_dir: Path,
    *,
    baseline: tuple[str, str] = ("stock", "off"),
    run_meta: dict[str, Any],
    rng: np.random.Generator | None = None,
    exclude: tuple[str, ...] = (),
    n_resamples: int = 2000,
) -> Path:
    """Write ``report.md``, ``report.html``, ``partition.json`` and figures into `out_dir`.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy table (`table.tidy_table` or `table.read_table`).
    out_dir : Path
        Output directory (created if missing); files are overwritten.
    baseline : (variant, dcp), default ("stock", "off")
        Baseline arm of every model for the paired comparisons.
    run_meta : dict
        Run metadata (``run.json``); its entries are listed in the header (see `_meta_text`);
        ``name``, ``matrix`` or ``run_id`` titles the report.
    rng : numpy.random.Generator, optional
        Randomness for the bootstraps; None means ``numpy.random.default_rng(DEFAULT_SEED)``
        (a local generator, never a global seed), and the report says so.
    exclude : tuple of str
        Sample ids or ``id#epoch`` keys removed from every denominator (listed as excluded).
    n_resamples : int, default 2000
        Bootstrap resamples per interval.

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
    seed_text = "generator passed by the caller" if rng is not None else f"seed {DEFAULT_SEED}"
    rng = rng if rng is not None else np.random.default_rng(DEFAULT_SEED)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    multi = table["model"].nunique() > 1
    partition = partition_samples(table, exclude, baseline)
    summaries = arm_summaries(table, exclude=exclude, baseline=baseline)
    families = arm_summaries(table, exclude=exclude, by_family=True, baseline=baseline)
    comparisons, notes = paired_comparisons(table, baseline, rng=rng, exclude=exclude, n_resamples=n_resamples)
    models = cache_models_in(table)

    blocks: list[Block] = _header(table, run_meta, baseline)
    blocks += _sections.arms_section(summaries, multi)
    blocks += _sections.family_section(families, multi)
    if models:
        blocks += _sections.cache_section(summaries, models, multi)
    blocks += _sections.paired_section(comparisons, notes, multi, n_resamples, seed_text)
    blocks += _sections.partition_section(partition, multi)

    figures: list[Block] = [Heading(2, "Figures")]
    success_png = _figures.success_figure(summaries, out / "success.png")
    figures.append(Image(success_png.name, "Success rate per arm with 95% CI"))
    kept = prepare(table, exclude, baseline)
    ratio_png = _figures.token_ratio_figure(_token_pairs(kept, baseline), out / "token_ratio.png")
    if ratio_png is not None:
        figures.append(Image(ratio_png.name, "Paired input-token ratio vs baseline"))
    cost_png = _figures.cost_figure(kept, cost_columns(table, "cost_usd_"), out / "cost.png")
    if cost_png is not None:
        figures.append(Image(cost_png.name, "Median cost per sample by cache model"))
    blocks += figures

    (out / "partition.json").write_text(json.dumps(partition.to_dict(), indent=2) + "\n")
    md_path = out / "report.md"
    md_path.write_text(to_markdown(blocks))
    title = blocks[0].text if isinstance(blocks[0], Heading) else "readbench report"
    (out / "report.html").write_text(to_html(blocks, out, title))
    return md_path
