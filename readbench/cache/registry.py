"""The cache-model registry: name -> factory, plus each cache model's default priced model.

docs/specs/caching.md §8. Cache models:

| name              | rules | module |
|-------------------|-------|--------|
| `anthropic-5m`    | Anthropic breakpoints, 5-minute TTL, 5m write price | policies/anthropic.py |
| `anthropic-1h`    | Anthropic breakpoints, 1-hour TTL, 1h write price   | policies/anthropic.py |
| `openai`          | automatic prefix (<= 5.5) or GPT-5.6+ breakpoints, by model | policies/openai.py |
| `gemini-implicit` | implicit longest-prefix caching                     | policies/gemini.py |
| `deepseek`        | full-match prefix units                            | policies/deepseek.py |
| `none`            | no caching (all input uncached)                     | policies/none.py |

A cache model is one `CacheModel` record (family, TTL, write tier, default priced model, the
rules' factory) in the `CACHE_MODELS` registry (`readbench.records.Registry`); a new one is a
policy module plus one row here. It is bound to a priced model from models.csv whose
`cache_family` must match (`none` accepts any model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from readbench.cache.policies.base import CachePolicy
from readbench.cache.prices import ModelSpec, get_model_spec
from readbench.records import Registry

__all__ = ["CACHE_MODELS", "CacheModel", "cache_model_for", "make_cache_model", "tier_ttl_seconds"]


def _anthropic(spec: ModelSpec, **params: Any) -> CachePolicy:
    from readbench.cache.policies.anthropic import AnthropicCache

    return AnthropicCache(spec, **params)


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


@dataclass(frozen=True)
class CacheModel:
    """One cache model: the rules a provider caches a prompt by, bound to a priced model when used.

    Attributes:
        name: registry name (`--cache`, matrix `cache_models`, the `_<name>` metric suffix).
        family: the models.csv `cache_family` of the models it prices (`anthropic`, `openai`,
            ...); None: any model (`none`).
        factory: `factory(spec: ModelSpec, **params) -> CachePolicy`, a fresh policy per run;
            `make_cache_model` passes it the record's `ttl_seconds` and `write_tier` when set.
        default_priced_model: the models.csv model it prices when none is given (the current
            mid-tier model of that provider in the bundled table).
        ttl_seconds: the idle time after which an entry is gone, when the cache model fixes it
            (Anthropic's 5-minute and 1-hour tiers, caching.md §1.3); None: per model
            (models.csv `ttl_seconds`) or no caching.
        write_tier: the prices.csv write-price column it bills writes at (`5m`, `1h`); None when
            writes cost the input price or the model's own column decides.
        provider_default: the cache model a recorded session of its family is replayed under
            (`readbench replay --cache auto`) and `readbench cache simulate` uses by default.
        origin: the rules' source.
    """

    name: str
    family: str | None
    factory: Callable[..., CachePolicy]
    default_priced_model: str
    origin: str
    ttl_seconds: float | None = None
    write_tier: str | None = None
    provider_default: bool = False

    def policy_params(self) -> dict[str, Any]:
        """The record's own parameters of its policy: `ttl_seconds` and `write_tier` when set."""
        return {k: v for k, v in (("ttl_seconds", self.ttl_seconds), ("write_tier", self.write_tier)) if v is not None}

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts (`readbench cache models --json`)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "factory"}


def _derive(base: CacheModel, name: str, overrides: dict[str, Any]) -> CacheModel:
    """`base` under another name with another default priced model, TTL or write tier."""
    allowed = {"default_priced_model", "ttl_seconds", "write_tier", "origin"}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ValueError(f"unknown cache model field(s) {unknown}; a derived cache model may set {sorted(allowed)}")
    if "default_priced_model" in overrides:
        spec = get_model_spec(overrides["default_priced_model"])
        if base.family is not None and spec.cache_family != base.family:
            raise ValueError(f"default_priced_model {spec.model!r} is priced under the {spec.cache_family} family, "
                             f"not {base.family}")
    origin = overrides.get("origin") or f"{base.origin}; {base.name} with {overrides}"
    derived = dataclasses.replace(base, name=name, provider_default=False, origin=origin,
                                  **{k: v for k, v in overrides.items() if k != "origin"})
    try:  # build it once, so a bad value fails here and names the cache model
        derived.factory(get_model_spec(derived.default_priced_model), **derived.policy_params())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache model {name!r} (from {base.name!r}): {exc}") from None
    return derived


_A = "Anthropic breakpoints (caching.md §1; policies/anthropic.py)"
CACHE_MODELS: Registry[CacheModel] = Registry("cache model", (
    CacheModel("anthropic-5m", "anthropic", _anthropic, "claude-sonnet-5.5", f"{_A}, 5-minute TTL",
               ttl_seconds=300.0, write_tier="5m", provider_default=True),
    CacheModel("anthropic-1h", "anthropic", _anthropic, "claude-sonnet-5.5", f"{_A}, 1-hour TTL",
               ttl_seconds=3600.0, write_tier="1h"),
    CacheModel("openai", "openai", _openai, "gpt-5.6-terra",
               "automatic prefix (<= GPT-5.5) or GPT-5.6+ breakpoints, by model (caching.md §2; policies/openai.py)",
               provider_default=True),
    CacheModel("gemini-implicit", "gemini", _gemini, "gemini-2.5-flash",
               "implicit longest-prefix caching (caching.md §3; policies/gemini.py)", provider_default=True),
    CacheModel("deepseek", "deepseek", _deepseek, "deepseek-flash",
               "full-match prefix units (caching.md §4; policies/deepseek.py)", provider_default=True),
    CacheModel("none", None, _none, "claude-sonnet-5.5", "no caching: all input uncached (policies/none.py)"),
), derive=_derive)
"""name -> CacheModel (`CACHE_MODELS.register(...)` adds one at run time)."""


def cache_model_for(family: str | None, tier: str | None = None) -> str | None:
    """The cache model a session of provider `family` is replayed under: the one of that family
    billing writes at `tier` when there is one (a Claude Code session billed at 1-hour writes:
    `anthropic-1h`), else the family's `provider_default`; None for an unknown family."""
    if family is None:
        return None
    same = [m for m in CACHE_MODELS if m.family == family]
    return next((m.name for m in same if tier is not None and m.write_tier == tier),
                next((m.name for m in same if m.provider_default), None))


def tier_ttl_seconds(tier: str | None, default: float = 300.0) -> float:
    """The TTL (seconds) of write-price tier `tier` (`5m` -> 300, `1h` -> 3600), from the cache
    model that bills at it; `default` for None or a tier no cache model fixes."""
    return next((m.ttl_seconds for m in CACHE_MODELS if tier is not None and m.write_tier == tier
                 and m.ttl_seconds is not None), default)


def make_cache_model(name: str, model: str, **params: Any) -> CachePolicy:
    """A fresh cache model `name` bound to priced model `model` (fresh = empty per-run state).

    Args:
        name: a registered cache model (`CACHE_MODELS`).
        model: a model of models.csv whose cache_family fits `name`.
        **params: passed to the cache model (e.g. `placement`, `lookback_positions` for the
            Anthropic models, `ttl_seconds`, `mode` for GPT-5.6+).

    Raises:
        ValueError: unknown cache model or model, or a model of another provider family.
    """
    if name not in CACHE_MODELS:
        raise ValueError(f"unknown cache model {name!r}; known: {', '.join(CACHE_MODELS.names())}")
    cm = CACHE_MODELS.get(name)
    spec = get_model_spec(model)
    if cm.family is not None and spec.cache_family != cm.family:
        fits = [m.name for m in CACHE_MODELS if m.family == spec.cache_family]
        raise ValueError(
            f"model {model!r} is priced under the {spec.cache_family} family; cache model "
            f"{name!r} needs a {cm.family} model (for {model!r} use: {', '.join(fits)} or none)"
        )
    return cm.factory(spec, **{**cm.policy_params(), **params})
