"""Native usage: what the provider reported for each call, summed per sample beside the cache
simulator's figures (docs/specs/metrics.md "Prompt cache and cost": "For a real provider that
reports usage, also `native_cache_read_tokens` etc. as reported"; GitHub issue 18).

The per-call numbers come from the agent loop's `CallLog` (``native_*`` fields, normalised from
inspect's `ModelUsage` by `readbench.sessions.inspect_log.native_usage`, the same function the
session importer uses); the cost is the same pricing `readbench replay` applies to a bill
(`readbench.cache.simulate.billed_usage_cost`). Pure functions over plain dicts.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

__all__ = ["NATIVE_METRICS", "native_cost_model", "native_metrics"]

NATIVE_METRICS = (
    "native_calls", "native_input_tokens", "native_uncached_input_tokens", "native_cache_read_tokens",
    "native_cache_write_tokens", "native_output_tokens", "native_cache_read_ratio", "native_cost_usd",
)
"""Per-sample native columns: calls that reported usage, Σ whole prompt (uncached + cache read +
cache write), Σ each part and Σ output (tokens), cache read / whole prompt (NaN when no call
reported input), and the reported tokens at the model's own list price (USD; NaN when readbench
has no price for the model, e.g. a local server's)."""


def native_cost_model(model_name: str) -> str | None:
    """The priced model (models.csv name) of an inspect model name, or None when readbench has no
    price for it (`readbench.cache.prices.canonical_model`)."""
    from readbench.cache.prices import canonical_model, get_price

    name = canonical_model(model_name)
    try:
        get_price(name, 0)
    except ValueError:
        return None
    return name


def native_metrics(calls: list[dict[str, Any]], model_name: str, when: dt.date | None = None) -> dict[str, float]:
    """Σ of the provider-reported usage over a sample's calls (`NATIVE_METRICS`).

    Args:
        calls: the loop's per-call logs (`readbench.base.store.CallLog` as dicts); a call whose
            ``native_input_tokens`` is None reported no usage and counts in no sum.
        model_name: inspect's model name (``claude-sonnet-4-5``, ``local/smollm2``), for the price.
        when: the price date (default: today, UTC).

    Returns:
        dict of `NATIVE_METRICS` -> float (tokens, USD). ``native_calls`` is 0 and every other
        value NaN when no call reported usage.
    """
    from readbench.cache.simulate import billed_usage_cost
    from readbench.sessions import BilledUsage

    reported = [c for c in calls if c.get("native_input_tokens") is not None]
    out = {name: math.nan for name in NATIVE_METRICS}
    out["native_calls"] = float(len(reported))
    if not reported:
        return out
    parts = ("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
    for part in parts:
        out[f"native_{part}"] = float(sum(c[f"native_{part}"] for c in reported))
    out["native_input_tokens"] = float(sum(c["native_input_tokens"] for c in reported))
    prompt = out["native_input_tokens"]
    out["native_cache_read_ratio"] = out["native_cache_read_tokens"] / prompt if prompt else math.nan
    priced = native_cost_model(model_name)
    if priced is not None:
        day = when or dt.datetime.now(dt.timezone.utc).date()
        out["native_cost_usd"] = float(sum(
            billed_usage_cost(BilledUsage(*(int(c[f"native_{p}"]) for p in parts)), priced, None, day)
            for c in reported))
    return out
