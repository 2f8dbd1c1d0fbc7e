"""The cache-model registry: name -> factory, plus each cache model's default priced model.

shared/specs/caching.md §8. Cache models:

| name              | rules | module |
|-------------------|-------|--------|
| `anthropic-5m`    | Anthropic breakpoints, 5-minute TTL, 5m write price | policies/anthropic.py |
| `anthropic-1h`    | Anthropic breakpoints, 1-hour TTL, 1h write price   | policies/anthropic.py |
| `openai`          | automatic prefix (<= 5.5) or GPT-5.6+ breakpoints, by model | policies/openai.py |
| `gemini-implicit` | implicit longest-prefix caching                     | policies/gemini.py |
| `deepseek`        | full-match prefix units                            | policies/deepseek.py |
| `none`            | no caching (all input uncached)                     | policies/none.py |

A cache model is bound to a priced model from models.csv; its `cache_family` must match
(`none` accepts any model). `DEFAULT_PRICED_MODELS` is the model each cache model prices by
default (the current mid-tier model of that provider in the bundled table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from readbench.cache.prices import ModelSpec, get_model_spec
from readbench.cache.policies.base import CachePolicy

__all__ = ["CACHE_MODELS", "DEFAULT_PRICED_MODELS", "make_cache_model"]


def _anthropic(ttl_seconds: float, tier: str) -> Callable[..., CachePolicy]:
    def factory(spec: ModelSpec, **params: Any) -> CachePolicy:
        from readbench.cache.policies.anthropic import AnthropicCache

        return AnthropicCache(spec, ttl_seconds=ttl_seconds, write_tier=tier, **params)

    return factory


def _openai(spec: ModelSpec, **params: Any) -> CachePolicy:
    from readbench.cache.policies.openai import make_openai

    return make_openai(spec, **params)


def _gemini(spec: ModelSpec, **params: Any) -> CachePolicy:
    from readbench.cache.policies.gemini import make_gemini

    return make_gemini(spec, **params)


def _deepseek(spec: ModelSpec, **params: Any) -> CachePolicy:
    from readbench.cache.policies.deepseek import DeepSeekUnits

    return DeepSeekUnits(spec, **params)


def _none(spec: ModelSpec, **params: Any) -> CachePolicy:
    from readbench.cache.policies.none import NoCache

    if params:
        raise ValueError(f"cache model 'none' takes no parameters, got {sorted(params)}")
    return NoCache()


#: name -> (cache_family it prices, or None for any; factory(spec, **params) -> CachePolicy).
CACHE_MODELS: dict[str, tuple[str | None, Callable[..., CachePolicy]]] = {
    "anthropic-5m": ("anthropic", _anthropic(300.0, "5m")),
    "anthropic-1h": ("anthropic", _anthropic(3600.0, "1h")),
    "openai": ("openai", _openai),
    "gemini-implicit": ("gemini", _gemini),
    "deepseek": ("deepseek", _deepseek),
    "none": (None, _none),
}

#: Default priced model per cache model (override with the `model`/`priced_models` arguments).
DEFAULT_PRICED_MODELS: dict[str, str] = {
    "anthropic-5m": "claude-sonnet-5.5",
    "anthropic-1h": "claude-sonnet-5.5",
    "openai": "gpt-5.6-terra",
    "gemini-implicit": "gemini-2.5-flash",
    "deepseek": "deepseek-flash",
    "none": "claude-sonnet-5.5",
}


def make_cache_model(name: str, model: str, **params: Any) -> CachePolicy:
    """A fresh cache model `name` bound to priced model `model` (fresh = empty per-run state).

    Args:
        name: a key of CACHE_MODELS.
        model: a model of models.csv whose cache_family fits `name`.
        **params: passed to the cache model (e.g. `placement`, `lookback_positions` for the
            Anthropic models, `ttl_seconds`, `mode` for GPT-5.6+).

    Raises:
        ValueError: unknown cache model or model, or a model of another provider family.
    """
    if name not in CACHE_MODELS:
        raise ValueError(f"unknown cache model {name!r}; known: {', '.join(CACHE_MODELS)}")
    family, factory = CACHE_MODELS[name]
    spec = get_model_spec(model)
    if family is not None and spec.cache_family != family:
        fits = [n for n, (f, _) in CACHE_MODELS.items() if f == spec.cache_family]
        raise ValueError(
            f"model {model!r} is priced under the {spec.cache_family} family; cache model "
            f"{name!r} needs a {family} model (for {model!r} use: {', '.join(fits)} or none)"
        )
    return factory(spec, **params)
