"""Per-sample cache and cost scalars (docs/specs/metrics.md "Prompt cache and cost",
"DCP economics").

For every cache model m in the run:
- `cache_read_tokens_{m}`, `cache_write_tokens_{m}`, `uncached_input_tokens_{m}` (sums, tokens);
- `cache_read_ratio_{m}` = read / (read + write + uncached), 0.0 with no input;
- `cost_usd_{m}` (USD, at the dated prices of m's priced model);
and, when the unprojected requests are given (the same trajectory without DCP):
- `cost_usd_unpruned_{m}` and `dcp_cost_delta_{m}` = cost - unpruned cost (USD; negative =
  pruning saved money).
Values are floats (token sums are exact integers stored as floats for `samples_df`).
Token counts use the user's calibration for the priced model when one exists
(readbench.cache.calibration: billed ~ a x counted + b per block, fitted from their sessions).
"""

from __future__ import annotations

from collections.abc import Mapping

from readbench.cache.adapter import CallRecord, RequestBuilder
from readbench.cache.blocks import Request
from readbench.cache.calibration import token_fit
from readbench.cache.prices import get_model_spec
from readbench.cache.registry import CACHE_MODELS
from readbench.cache.simulate import simulate

__all__ = ["sample_cache_metrics"]


def sample_cache_metrics(
    calls: list[CallRecord],
    cache_models: list[str],
    *,
    unpruned_calls: list[CallRecord] | None = None,
    priced_models: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Flat per-sample cache metrics for each cache model (keys in the module docstring).

    Args:
        calls: the model calls of one sample, as sent (projected), in start-time order.
        cache_models: names of registered cache models (registry.CACHE_MODELS); each key is suffixed `_{name}`.
        unpruned_calls: the same calls with the unprojected message lists (same timestamps
            and output tokens): enables `cost_usd_unpruned_{m}` and `dcp_cost_delta_{m}`.
        priced_models: cache model -> priced model, overriding each cache model's `default_priced_model`.

    Returns:
        dict of metric name -> float.

    Raises:
        ValueError: unknown cache model or priced model, mismatched family, duplicate cache
            model names, or unpruned_calls of a different length than calls.
    """
    if len(set(cache_models)) != len(cache_models):
        raise ValueError(f"duplicate cache models in {cache_models}")
    if unpruned_calls is not None and len(unpruned_calls) != len(calls):
        raise ValueError(
            f"unpruned_calls has {len(unpruned_calls)} calls, calls has {len(calls)}: "
            "the counterfactual must be the same trajectory"
        )
    chosen = {m.name: m.default_priced_model for m in CACHE_MODELS}
    chosen.update(priced_models or {})
    builder = RequestBuilder()  # shared: unprojected messages are mostly the same objects
    requests_by_family: dict[str, list[Request]] = {}
    unpruned_by_family: dict[str, list[Request]] = {}
    out: dict[str, float] = {}
    # A projection that changed nothing (DCP off, or nothing prunable yet) sends the very same
    # message objects: the counterfactual then bills identically and needs no second simulation.
    identical = unpruned_calls is not None and all(
        len(c.messages) == len(u.messages) and all(a is b for a, b in zip(c.messages, u.messages))
        for c, u in zip(calls, unpruned_calls)
    )
    for m in cache_models:
        if m not in chosen:
            raise ValueError(f"unknown cache model {m!r}; known: {', '.join(CACHE_MODELS.names())}")
        model = chosen[m]
        spec = get_model_spec(model)
        fit = token_fit(spec.model, spec.tokenizer)
        calib = (fit.a, fit.b) if fit is not None else None
        family = f"{spec.tokenizer}:{calib}" if calib else spec.tokenizer
        if family not in requests_by_family:
            requests_by_family[family] = [builder.build(c, spec.tokenizer, calib) for c in calls]
        res = simulate(requests_by_family[family], m, model)
        out[f"cache_read_tokens_{m}"] = float(res.cache_read_tokens)
        out[f"cache_write_tokens_{m}"] = float(res.cache_write_tokens)
        out[f"uncached_input_tokens_{m}"] = float(res.uncached_input_tokens)
        out[f"cache_read_ratio_{m}"] = res.cache_read_ratio
        out[f"cost_usd_{m}"] = res.cost_usd
        if identical:
            out[f"cost_usd_unpruned_{m}"] = res.cost_usd
            out[f"dcp_cost_delta_{m}"] = 0.0
        elif unpruned_calls is not None:
            if family not in unpruned_by_family:
                unpruned_by_family[family] = [builder.build(c, spec.tokenizer, calib) for c in unpruned_calls]
            base = simulate(unpruned_by_family[family], m, model)
            out[f"cost_usd_unpruned_{m}"] = base.cost_usd
            out[f"dcp_cost_delta_{m}"] = res.cost_usd - base.cost_usd
    return out
