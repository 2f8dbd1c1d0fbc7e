"""Dated price table and per-model cache parameters, read from the CSV files next to this module.

docs/specs/caching.md §6 (prices), §1.2 / §2 / §3 / §4 (minimums, multipliers, TTLs).
Prices move monthly: they are data (`prices.csv`, `models.csv`), never constants in code.

`prices.csv` (USD per million tokens; an empty cell = no such charge):
    model, provider, band_prompt_tokens_above (the row applies when the prompt, i.e.
    read + write + uncached input tokens, exceeds this; 0 = base band), input, output,
    cache_write_5m, cache_write_1h (Anthropic TTL tiers), cache_write_30m (OpenAI GPT-5.6+),
    cache_read, source, date (effective-from date when known, else the source's date).
`models.csv`:
    model, provider, cache_family (which cache models may price it), rules (the rule set the
    simulator applies), min_cacheable_tokens, read_multiplier (cache read price / input price,
    descriptive; billing uses prices.csv), granularity_tokens (hits are floored to a multiple),
    ttl_seconds (idle TTL for providers whose TTL is per model; empty for Anthropic, whose TTL
    the cache model sets), tokenizer (family for `count_tokens`), earlier_reasoning (`dropped`:
    the provider removes the reasoning / thinking blocks of earlier turns - those before the
    request's last plain user message - from what the model receives, so a new user turn changes
    the prefix at the previous turn's first reasoning block: OpenAI's Responses API, "any
    reasoning items from turn 1 are ignored and removed" (OpenAI cookbook "Better performance from
    reasoning models using the Responses API", 2025-05-11 [off]; not in caching.md §2); Anthropic
    models before Opus 4.5 / Sonnet 4.6 and Haiku <= 4.5, caching.md §1.4 "plain user message after
    thinking turns"; `kept` otherwise), source, date.
`aliases.csv`:
    alias, model, source: how providers and harnesses spell a model that the rules of
    `canonical_model` do not map by themselves (sessions.md §5: `claude-opus-4-6`, date
    suffixes, `provider/` prefixes are handled by rule).
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import re
from dataclasses import dataclass
from importlib import resources

__all__ = [
    "PRICES_AS_OF",
    "canonical_model",
    "ModelSpec",
    "PriceRow",
    "get_model_spec",
    "get_price",
    "list_model_specs",
    "list_prices",
    "price_date",
]

#: Date the bundled tables were compiled (caching.md header). Rows dated later are scheduled
#: changes (e.g. Gemini 3.8 Flash doubling on 2027-01-01) and apply only with a later `as_of`.
PRICES_AS_OF = dt.date(2026, 11, 29)

CACHE_FAMILIES = ("anthropic", "openai", "gemini", "deepseek")
RULES = ("anthropic", "openai-automatic", "openai-breakpoints", "gemini-implicit", "deepseek-units")


@dataclass(frozen=True)
class PriceRow:
    """One dated price band of one model; every price in USD per million tokens.

    `cache_write_*_usd_per_mtok` is None where the provider has no such write charge.
    """

    model: str
    provider: str
    band_prompt_tokens_above: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_write_5m_usd_per_mtok: float | None
    cache_write_1h_usd_per_mtok: float | None
    cache_write_30m_usd_per_mtok: float | None
    cache_read_usd_per_mtok: float
    source: str
    date: dt.date


@dataclass(frozen=True)
class ModelSpec:
    """Cache parameters of one model (see the module docstring for each column)."""

    model: str
    provider: str
    cache_family: str
    rules: str
    min_cacheable_tokens: int
    read_multiplier: float
    granularity_tokens: int
    ttl_seconds: float | None
    tokenizer: str
    source: str
    date: dt.date
    drops_earlier_reasoning: bool = False


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _opt_float(s: str) -> float | None:
    return float(s) if s.strip() else None


@functools.cache
def list_prices() -> tuple[PriceRow, ...]:
    """Every row of prices.csv, in file order."""
    out = []
    for r in _rows("prices.csv"):
        out.append(
            PriceRow(
                model=r["model"],
                provider=r["provider"],
                band_prompt_tokens_above=int(r["band_prompt_tokens_above"]),
                input_usd_per_mtok=float(r["input"]),
                output_usd_per_mtok=float(r["output"]),
                cache_write_5m_usd_per_mtok=_opt_float(r["cache_write_5m"]),
                cache_write_1h_usd_per_mtok=_opt_float(r["cache_write_1h"]),
                cache_write_30m_usd_per_mtok=_opt_float(r["cache_write_30m"]),
                cache_read_usd_per_mtok=float(r["cache_read"]),
                source=r["source"],
                date=dt.date.fromisoformat(r["date"]),
            )
        )
    return tuple(out)


@functools.cache
def list_model_specs() -> tuple[ModelSpec, ...]:
    """Every row of models.csv, in file order."""
    out = []
    for r in _rows("models.csv"):
        spec = ModelSpec(
            model=r["model"],
            provider=r["provider"],
            cache_family=r["cache_family"],
            rules=r["rules"],
            min_cacheable_tokens=int(r["min_cacheable_tokens"]),
            read_multiplier=float(r["read_multiplier"]),
            granularity_tokens=int(r["granularity_tokens"]),
            ttl_seconds=_opt_float(r["ttl_seconds"]),
            tokenizer=r["tokenizer"],
            source=r["source"],
            date=dt.date.fromisoformat(r["date"]),
            drops_earlier_reasoning=r.get("earlier_reasoning", "kept") == "dropped",
        )
        if spec.cache_family not in CACHE_FAMILIES or spec.rules not in RULES:
            raise ValueError(f"models.csv row {spec.model!r}: bad cache_family/rules")
        if r.get("earlier_reasoning", "kept") not in ("kept", "dropped"):
            raise ValueError(f"models.csv row {spec.model!r}: earlier_reasoning must be 'kept' or 'dropped', "
                             f"got {r['earlier_reasoning']!r}")
        out.append(spec)
    return tuple(out)


@functools.cache
def _aliases() -> dict[str, str]:
    return {r["alias"].strip().lower(): r["model"].strip() for r in _rows("aliases.csv")}


_DATE_SUFFIX = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")
_CLAUDE_DASHED = re.compile(r"^(claude-(?:opus|sonnet|haiku|fable|mythos))-(\d+)-(\d+)$")
_GPT_DASHED = re.compile(r"^(gpt-\d+)-(\d+)((?:-[a-z][a-z0-9]*)*)$")
_BEDROCK = re.compile(r"^(?:[a-z]{2,4}\.)?(?:anthropic|amazon|meta|deepseek)\.(.+?)(?:-v\d+(?::\d+)?)?$")


@functools.cache
def _known_models() -> frozenset[str]:
    return frozenset(s.model for s in list_model_specs()) | frozenset(r.model for r in list_prices())


@functools.lru_cache(maxsize=4096)
def canonical_model(name: str) -> str:
    """The models.csv name for a model id as a provider or harness spells it.

    Rules, in order (sessions.md §5: "providers write model ids with dashes"):
    lower-case; drop a `provider/` prefix (`anthropic/claude-...`, `openrouter/openai/gpt-5`)
    and a Bedrock wrapper (`us.anthropic.claude-...-v1:0`); drop a date suffix (`-20251101`,
    `@20250929`, `-2025-08-07`) and `-latest`; then the first of: an exact models.csv name, an
    `aliases.csv` alias, Claude's dashed version (`claude-opus-4-6` -> `claude-opus-4.6`), GPT's
    dashed version (`gpt-5-1-codex` -> `gpt-5.1-codex`, as a proxy spelled it in a real Codex
    rollout).
    A name no rule maps is returned in its cleaned form (lookups then fail with a message
    naming it).

    Examples:
        >>> canonical_model("claude-opus-4-6")
        'claude-opus-4.6'
        >>> canonical_model("anthropic/claude-sonnet-4-5-20250929")
        'claude-sonnet-4.5'
    """
    n = name.strip().lower()
    n = n.rsplit("/", 1)[-1]
    m = _BEDROCK.match(n)
    if m:
        n = m.group(1)
    n = _DATE_SUFFIX.sub("", n)
    n = n.removesuffix("-latest") or n
    known = _known_models()
    for candidate in (n, _aliases().get(n)):
        if candidate and candidate in known:
            return candidate
    m = _CLAUDE_DASHED.match(n)
    if m:
        dotted = f"{m.group(1)}-{m.group(2)}.{m.group(3)}"
        if dotted in known:
            return dotted
        if m.group(3) == "0" and f"{m.group(1)}-{m.group(2)}" in known:
            return f"{m.group(1)}-{m.group(2)}"
    m = _GPT_DASHED.match(n)
    if m and f"{m.group(1)}.{m.group(2)}{m.group(3)}" in known:
        return f"{m.group(1)}.{m.group(2)}{m.group(3)}"
    return _aliases().get(n, n)


def get_model_spec(model: str) -> ModelSpec:
    """The models.csv row for `model` (any spelling `canonical_model` maps).

    Raises:
        ValueError: `model` is not in models.csv (the message lists the known models).
    """
    model = canonical_model(model)
    for spec in list_model_specs():
        if spec.model == model:
            return spec
    known = ", ".join(s.model for s in list_model_specs())
    raise ValueError(f"unknown model {model!r}; known models: {known}")


def get_price(model: str, prompt_tokens: int = 0, *, as_of: dt.date = PRICES_AS_OF) -> PriceRow:
    """The price row billing a request of `prompt_tokens` input tokens to `model` on `as_of`.

    Among the rows dated on or before `as_of`, the latest date wins; within it, the band with
    the largest `band_prompt_tokens_above` below `prompt_tokens` (caching.md §1.5: Haiku 5.5
    bills every token of a >100k-token request at the higher band; §3 Gemini 2.5 Pro >200k;
    §6 gpt-5.6-sol >272k).

    `model` may be spelt any way `canonical_model` maps.

    Raises:
        ValueError: no price for `model` dated on or before `as_of` (the message names the
            file to add it to and lists the priced models).
    """
    model = canonical_model(model)
    rows = _dated_rows(model, as_of)
    if not rows:
        priced = sorted({r.model for r in list_prices()})
        later = sorted(r.date for r in list_prices() if r.model == model)
        when = f" (its first price row is dated {later[0].isoformat()})" if later else ""
        raise ValueError(
            f"no price for model {model!r} on or before {as_of.isoformat()}{when}: add a row to "
            f"readbench/cache/prices.csv (and its cache parameters to models.csv); "
            f"priced models: {', '.join(priced)}"
        )
    for r in rows:  # the latest date's bands, highest threshold first
        if r.band_prompt_tokens_above < max(prompt_tokens, 1):
            return r
    return rows[-1]


def price_rows(model: str, as_of: dt.date = PRICES_AS_OF) -> tuple[PriceRow, ...]:
    """Every band's row `get_price` chooses among for `model` on `as_of`: the rows of the latest
    date on or before `as_of`, highest `band_prompt_tokens_above` first; () when there is none.
    For callers that price many requests of one model (`readbench.cache.simulate.CacheSimulator`)."""
    return _dated_rows(canonical_model(model), as_of)


@functools.lru_cache(maxsize=1024)
def _dated_rows(model: str, as_of: dt.date) -> tuple[PriceRow, ...]:
    """The rows of `model`'s latest date on or before `as_of`, highest band threshold first."""
    rows = [r for r in list_prices() if r.model == model and r.date <= as_of]
    if not rows:
        return ()
    latest = max(r.date for r in rows)
    return tuple(sorted((r for r in rows if r.date == latest), key=lambda r: -r.band_prompt_tokens_above))


@functools.lru_cache(maxsize=4096)
def price_date(model: str, when: dt.date) -> dt.date:
    """The date to price `model` at for a session recorded on `when`: `when` itself, or the
    model's first price row when the table has nothing dated that early (the table's dates are
    effective-from dates where known, source dates otherwise: caching.md §6)."""
    dates = sorted(r.date for r in list_prices() if r.model == model)
    if dates and when < dates[0]:
        return dates[0]
    return when
