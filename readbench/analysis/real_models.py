"""The report's section on real models: what each model was, how it was reached and bounded,
the provider's own (native) usage beside the simulator's, and which token counts the list
prices were applied to (GitHub issue 18, items 2 and 8; docs/specs/metrics.md "Prompt cache
and cost": "the report compares native against simulated for the same provider").

Also, for every model: a warning when a paired comparison has too few pairs for an interval.

`log_settings` reads each log's header (the run's settings and provenance are in its
``eval.metadata``, written by readbench.run; the generate config, model args and base URL are
inspect's own fields), so a report rebuilt from logs alone says the same.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from . import _format as F
from ._document import Block, Bullets, Heading, Paragraph, Table

__all__ = ["MIN_PAIRS", "few_pairs_warnings", "log_settings", "real_model_section"]

MIN_PAIRS = 5
"""Fewer (task, epoch) pairs than this: the interval is shown but flagged as unreliable; fewer
than 2 clusters: no interval at all (CR2 needs two)."""
SIM_PREFIX = "readbench/sim-"


def log_settings(logs: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per model, the distinct settings its logs ran with (generate config, model args, base URL,
    time limit, and readbench's recorded provenance), in first-seen order; unreadable logs skipped."""
    from inspect_ai.log import read_eval_log

    out: dict[str, list[dict[str, Any]]] = {}
    for path in logs:
        try:
            header = read_eval_log(path, header_only=True)
        except Exception:  # noqa: BLE001 - completeness names unreadable logs
            continue
        ev = header.eval
        meta = ev.metadata or {}
        prov = (meta.get("readbench_provenance") or {}).get(ev.model, {})
        generate = {k: v for k, v in ev.model_generate_config.model_dump().items() if v not in (None, [], {})}
        entry = {"generate": generate, "model_args": dict(ev.model_args or {}),
                 "base_url": ev.model_base_url or prov.get("base_url") or "",
                 "time_limit": ev.config.time_limit,
                 "server": prov.get("server", ""), "chat_template": prov.get("chat_template", ""),
                 "server_header": prov.get("server_header", ""), "served_models": prov.get("served_models", [])}
        seen = out.setdefault(ev.model, [])
        if entry not in seen:
            seen.append(entry)
    return out


def _describe(model: str, s: dict[str, Any]) -> str:
    parts = [f"{model}: reached at {s['base_url'] or 'the provider default URL'}"]
    if s["server"] or s["server_header"]:
        parts.append("server " + " / ".join(x for x in (s["server"] and f"{s['server']} (declared)",
                                                           s["server_header"] and f"{s['server_header']} (HTTP Server header)") if x))
    if s["served_models"]:
        parts.append("serving " + ", ".join(s["served_models"]))
    parts.append(f"chat template {s['chat_template'] or 'not declared'}")
    gen = ", ".join(f"{k}={v}" for k, v in sorted(s["generate"].items()))
    parts.append(f"generate: {gen or 'inspect defaults'}")
    parts.append(f"time limit {s['time_limit']} s per sample" if s["time_limit"] else "no sample time limit")
    if s["model_args"]:
        parts.append(f"model args {json.dumps(s['model_args'], sort_keys=True)}")
    return "; ".join(parts)


def _differences(entries: list[dict[str, Any]]) -> str:
    keys = sorted({k for e in entries for k in e})
    diff = [k for k in keys if len({json.dumps(e.get(k), sort_keys=True, default=str) for e in entries}) > 1]
    return "; ".join(f"{k}: " + " vs ".join(json.dumps(e.get(k), sort_keys=True, default=str) for e in entries)
                     for k in diff)


def _sum(rows: pd.DataFrame, column: str) -> float:
    return float(rows[column].sum()) if column in rows and rows[column].notna().any() else math.nan


def _mean(rows: pd.DataFrame, column: str) -> float:
    return float(rows[column].mean()) if column in rows and rows[column].notna().any() else math.nan


def _usage_table(table: pd.DataFrame, cache_models: list[str]) -> Table:
    rows: list[tuple[str, ...]] = []
    for arm, g in table.groupby("arm", sort=True):
        have = g[g["native_calls"].fillna(0) > 0] if "native_calls" in g else g.iloc[0:0]
        native_in, native_read = _sum(have, "native_input_tokens"), _sum(have, "native_cache_read_tokens")
        for m in cache_models:
            sim = [f"{k}_{m}" for k in ("cache_read_tokens", "cache_write_tokens", "uncached_input_tokens")]
            sim_in = sum(_sum(have, c) for c in sim) if all(c in have for c in sim) else math.nan
            sim_read = _sum(have, f"cache_read_tokens_{m}")
            rows.append((str(arm).split(" @ ")[0] if table["model"].nunique() == 1 else str(arm), m, str(len(have)),
                         F.num(_mean(have, "native_input_tokens"), 0),
                         F.num(sim_in / len(have) if len(have) else math.nan, 0),
                         F.num(_mean(have, "native_cache_read_tokens"), 0), F.num(_mean(have, f"cache_read_tokens_{m}"), 0),
                         F.num(native_read / native_in if native_in else math.nan, 3),
                         F.num(sim_read / sim_in if sim_in else math.nan, 3),
                         F.usd(_mean(have, "native_cost_usd")), F.usd(_mean(have, f"cost_usd_{m}"))))
    header = ("arm", "cache model", "n", "mean native input tokens", "mean simulated input tokens",
              "mean native cache read", "mean simulated cache read", "native cache-read ratio",
              "simulated cache-read ratio", "mean native cost USD", "mean simulated cost USD")
    return Table(header, tuple(rows), caption=(
        "Per sample, over the samples whose provider reported usage (errored samples included: what they used "
        "until the error). Native: the provider's own counts (uncached + cache read + cache write). Simulated: "
        "readbench's offline token counts of the same requests under the cache model's rules. Ratios: Σ cache "
        "read / Σ input."))


def real_model_section(table: pd.DataFrame, settings: dict[str, list[dict[str, Any]]], cache_models: list[str],
                       priced: dict[str, str | None], prices_as_of: str) -> list[Block]:
    """The "Real models" section (no blocks when every model is simulated).

    Args:
        table: the tidy table (native_* columns from readbench.metrics.native).
        settings: `log_settings` of the run's logs.
        cache_models: the run's cache models.
        priced: cache model -> the model whose list prices price it (its `default_priced_model`, readbench.cache.registry), and
            each real model -> its own priced model or None (readbench has no price for it).
        prices_as_of: the price table's date (ISO).
    """
    real = sorted(m for m in set(table["model"]) if not m.startswith(SIM_PREFIX))
    if not real:
        return []
    blocks: list[Block] = [Heading(2, "Real models")]
    items = []
    for model in real:
        entries = settings.get(model, [])
        items += [_describe(model, e) for e in entries] or [f"{model}: no settings recorded in its logs"]
    blocks.append(Bullets(tuple(items)))
    for model in real:
        entries = settings.get(model, [])
        if len(entries) > 1:
            blocks.append(Paragraph(
                f"Warning: {model} ran with different settings in different logs ({_differences(entries)}); "
                "its arms are paired as if they were one model, so a difference between them may be the settings'."))
    sim_prices = ", ".join(f"{m} at {priced.get(m) or '?'}" for m in cache_models)
    own = [f"{m} at its own ({priced[m]})" if priced.get(m) else f"{m}: none (readbench has no price for it)"
           for m in real]
    blocks.append(Paragraph(
        "Costs of real models are list prices (readbench/cache/prices.csv, as of " + prices_as_of + ") applied to "
        "token counts, never an invoice. `cost USD (cache model)` applies them to readbench's own token counts: the "
        "offline tokenizer's count of each request the agent sent, split into cache read, cache write and uncached "
        f"input by the cache model's rules ({sim_prices}). The native cost applies them to the provider's reported "
        f"counts ({'; '.join(own)}). The effort tables' input and output tokens are the provider's counts."))
    blocks.append(_usage_table(table[table["model"].isin(real)], cache_models))
    return blocks


def few_pairs_warnings(comparisons: tuple[Any, ...], multi_model: bool) -> list[Block]:
    """A paragraph naming the paired comparisons with too few pairs for an interval (fewer than
    2 clusters: none; fewer than `MIN_PAIRS` pairs: unreliable); no blocks when there are none."""
    items = []
    for c in comparisons:
        name = c.arm if multi_model else c.arm.split(" @ ")[0]
        base = c.baseline_arm if multi_model else c.baseline_arm.split(" @ ")[0]
        if c.n_clusters < 2:
            items.append(f"{name} vs {base}: {c.n_pairs} pair(s) in {c.n_clusters} cluster(s): no interval "
                         "(CR2 needs 2 clusters); the difference is descriptive only")
        elif c.n_pairs < MIN_PAIRS:
            items.append(f"{name} vs {base}: {c.n_pairs} pairs: too few for a reliable interval "
                         f"(fewer than {MIN_PAIRS}); read it as descriptive")
    if not items:
        return []
    return [Paragraph("Warning: some comparisons have too few pairs for an interval."), Bullets(tuple(items))]
