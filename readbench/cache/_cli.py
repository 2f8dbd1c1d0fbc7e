"""`readbench cache simulate|models` (request format: readbench/cache/jsonl.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import click

__all__ = ["cache_group"]


@click.group("cache")
def cache_group() -> None:
    """Provider prompt-cache simulator and dated prices (docs/specs/caching.md)."""


@cache_group.command("simulate")
@click.argument("requests_path", metavar="REQUESTS.jsonl", type=click.Path(dir_okay=False))
@click.option("--model", "model", required=True, help="Priced model (see `readbench cache models`).")
@click.option(
    "--cache-model",
    "cache_model",
    default=None,
    help="Cache model; default: the model's provider (anthropic-5m, openai, gemini-implicit, deepseek).",
)
@click.option("--placement", default=None, help="Anthropic breakpoint placement: pi (default), automatic, pi+automatic, none.")
@click.option("--json", "as_json", is_flag=True, help="Print the SimulationResult as JSON.")
def simulate_cmd(requests_path: str, model: str, cache_model: str | None, placement: str | None, as_json: bool) -> None:
    """Simulate caching over REQUESTS.jsonl (one request per line) and price it.

    Prints one row per request (input, read, write, uncached, output tokens, cost in USD) and
    the totals with the cache-read ratio.
    """
    from readbench.cache.jsonl import load_requests
    from readbench.cache.prices import get_model_spec
    from readbench.cache.registry import CACHE_MODELS, cache_model_for
    from readbench.cache.simulate import simulate

    try:
        spec = get_model_spec(model)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--model") from None
    cm = cache_model or cache_model_for(spec.cache_family) or "none"
    if cm not in CACHE_MODELS:
        raise click.BadParameter(f"unknown cache model {cm!r}; known: {', '.join(CACHE_MODELS.names())}",
                                 param_hint="--cache-model")
    params: dict[str, Any] = {}  # simulate's cache-model parameters
    if placement is not None:
        if CACHE_MODELS.get(cm).family != "anthropic":
            anthropic = "/".join(m.name for m in CACHE_MODELS if m.family == "anthropic")
            raise click.BadParameter(f"--placement applies to {anthropic}, not {cm!r}", param_hint="--placement")
        params["placement"] = placement
    try:
        requests = load_requests(requests_path, spec.tokenizer)
        result = simulate(requests, cm, model, **params)
    except OSError as exc:
        raise click.BadParameter(f"cannot read {requests_path!r}: {exc.strerror}", param_hint="REQUESTS.jsonl") from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        d = dataclasses.asdict(result)
        d["prices_as_of"] = result.prices_as_of.isoformat()
        click.echo(json.dumps(d, indent=2))
        return
    click.echo(f"cache model {result.cache_model}, model {result.model}, prices as of {result.prices_as_of.isoformat()}")
    header = f"{'#':>4} {'input':>10} {'read':>10} {'write':>10} {'uncached':>10} {'output':>8} {'cost_usd':>12}"
    click.echo(header)
    for r in result.requests:
        click.echo(
            f"{r.index:>4} {r.input_tokens:>10} {r.cache_read_tokens:>10} {r.cache_write_tokens:>10} "
            f"{r.uncached_input_tokens:>10} {r.output_tokens:>8} {r.cost_usd:>12.6f}"
        )
    click.echo(
        f"{'all':>4} {result.input_tokens:>10} {result.cache_read_tokens:>10} {result.cache_write_tokens:>10} "
        f"{result.uncached_input_tokens:>10} {result.output_tokens:>8} {result.cost_usd:>12.6f}"
    )
    click.echo(f"cache-read ratio {result.cache_read_ratio:.4f}")


@cache_group.command("models")
@click.option("--json", "as_json", is_flag=True, help="Print the cache models as JSON (not the price table).")
def models_cmd(as_json: bool) -> None:
    """List cache models, and every model with its cache parameters and dated prices."""
    from readbench.cache.prices import list_model_specs, list_prices
    from readbench.cache.registry import CACHE_MODELS

    if as_json:
        click.echo(json.dumps(CACHE_MODELS.describe(), indent=2))
        return
    click.echo("cache models (default priced model):")
    for m in CACHE_MODELS:
        ttl = f"{m.ttl_seconds:g} s" if m.ttl_seconds is not None else "per model" if m.family else "-"
        click.echo(f"  {m.name:<16} family={m.family or 'any':<10} default={m.default_priced_model:<18} "
                   f"ttl={ttl:<10} writes={m.write_tier or '-'}")
    click.echo("models (USD per million tokens; '-' = no such charge or no price):")
    click.echo(
        f"  {'model':<24} {'rules':<19} {'min':>5} {'band>':>7} {'input':>7} {'output':>7} "
        f"{'w5m':>7} {'w1h':>7} {'w30m':>7} {'read':>7}  date"
    )
    prices = list_prices()

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:g}"

    for spec in list_model_specs():
        rows = [p for p in prices if p.model == spec.model]
        head = f"  {spec.model:<24} {spec.rules:<19} {spec.min_cacheable_tokens:>5}"
        if not rows:
            click.echo(f"{head} {'-':>7} {'-':>7} {'-':>7} {'-':>7} {'-':>7} {'-':>7} {'-':>7}  (unpriced)")
        for p in rows:
            click.echo(
                f"{head} {p.band_prompt_tokens_above:>7} {fmt(p.input_usd_per_mtok):>7} {fmt(p.output_usd_per_mtok):>7} "
                f"{fmt(p.cache_write_5m_usd_per_mtok):>7} {fmt(p.cache_write_1h_usd_per_mtok):>7} "
                f"{fmt(p.cache_write_30m_usd_per_mtok):>7} {fmt(p.cache_read_usd_per_mtok):>7}  {p.date.isoformat()}"
            )
