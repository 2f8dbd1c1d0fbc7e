"""Run a cache model over a request sequence and price it (docs/specs/caching.md §8.2 step 5).

Conservation holds per request: cache_read + cache_write + uncached == input tokens.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from readbench.cache.blocks import PrefixChainer, PreparedRequest, Request
from readbench.cache.policies.base import Usage
from readbench.cache.prices import PRICES_AS_OF, PriceRow, canonical_model, get_price, price_date, price_rows
from readbench.cache.registry import CACHE_MODELS, make_cache_model
from readbench.cache.store import CacheStore

__all__ = ["CacheSimulator", "RequestUsage", "SimulationResult", "billed_usage_cost", "price_usage", "simulate"]


@dataclass(frozen=True)
class RequestUsage:
    """Simulated usage and cost of one request.

    Attributes:
        index: position in the request sequence (0-based).
        input_tokens: all input tokens of the request (read + write + uncached).
        cache_read_tokens, cache_write_tokens, uncached_input_tokens: the split (tokens).
        output_tokens: generated tokens.
        write_tier: "5m", "1h", "30m" or None (no priced write).
        cost_usd: uncached x input + write x write price + read x read price + output x
            output price, at the price band of `input_tokens` (USD).
    """

    index: int
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_input_tokens: int
    output_tokens: int
    write_tier: str | None
    cost_usd: float


@dataclass(frozen=True)
class SimulationResult:
    """Per-request records and totals of one simulated request sequence.

    Attributes:
        cache_model, model: what was simulated and priced.
        prices_as_of: the date used to pick price rows.
        requests: one RequestUsage per request, in order.
        input_tokens, cache_read_tokens, cache_write_tokens, uncached_input_tokens,
            output_tokens: sums over requests (tokens).
        cost_usd: sum of request costs (USD).
        cache_read_ratio: cache_read / input tokens, in [0, 1]; 0.0 when there is no input
            (metrics.md "Prompt cache and cost").
    """

    cache_model: str
    model: str
    prices_as_of: dt.date
    requests: tuple[RequestUsage, ...]
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_input_tokens: int
    output_tokens: int
    cost_usd: float
    cache_read_ratio: float


def _write_price(row: PriceRow, tier: str) -> float:
    price = {
        "5m": row.cache_write_5m_usd_per_mtok,
        "1h": row.cache_write_1h_usd_per_mtok,
        "30m": row.cache_write_30m_usd_per_mtok,
    }[tier]
    if price is None:
        raise ValueError(f"prices.csv has no cache_write_{tier} price for {row.model!r}")
    return price


def price_usage(usage: Usage, output_tokens: int, model: str, *, as_of: dt.date = PRICES_AS_OF) -> float:
    """Cost in USD of one request's `usage` plus `output_tokens` for `model` on `as_of`.

    The band is chosen by the request's input tokens (read + write + uncached).

    Raises:
        ValueError: no price for `model`, or a write in a tier the model has no price for.
    """
    prompt = usage.cache_read_tokens + usage.cache_write_tokens + usage.uncached_input_tokens
    row = get_price(model, prompt, as_of=as_of)
    return _usd(row, usage, output_tokens)


def _usd(row: Any, usage: Any, output_tokens: int) -> float:
    """USD of one call's tokens at one price row (the arithmetic price_usage and
    CacheSimulator.step_totals share, so both give the same float)."""
    usd = (
        usage.uncached_input_tokens * row.input_usd_per_mtok
        + usage.cache_read_tokens * row.cache_read_usd_per_mtok
        + output_tokens * row.output_usd_per_mtok
    )
    if usage.cache_write_tokens:
        usd += usage.cache_write_tokens * _write_price(row, usage.write_tier or "")
    return usd / 1_000_000


def billed_usage_cost(u: Any, model: str, tier: str | None, when: dt.date) -> float:
    """Billed usage priced (USD) at `model`'s list prices on `when` (`readbench.cache.prices.
    price_date`): the write split by TTL tier when recorded, else every write at `tier` (5m when
    None). Shared by the replay's bill (readbench.replay.bill) and the live agent loop's
    ``native_cost_usd`` (readbench.metrics.native; docs/specs/metrics.md "Prompt cache and cost").

    Args:
        u: a `readbench.sessions.BilledUsage` (tokens: ``cache_read_tokens``, ``cache_write_tokens``,
            ``cache_write_5m_tokens``, ``cache_write_1h_tokens``, ``uncached_input_tokens``,
            ``output_tokens``).

    Raises:
        ValueError: `model` has no price.
    """
    if u.cache_write_5m_tokens is not None or u.cache_write_1h_tokens is not None:
        parts = [(u.cache_write_5m_tokens or 0, "5m"), (u.cache_write_1h_tokens or 0, "1h")]
    else:
        parts = [(u.cache_write_tokens, tier or "5m")]
    total = 0.0
    first = True
    for write, t in parts:
        if write == 0 and not first:
            continue
        usage = Usage(u.cache_read_tokens if first else 0, write, u.uncached_input_tokens if first else 0, t if write else None)
        # the band is chosen by the whole prompt: price each part at the row of the full prompt
        total += price_usage(usage, u.output_tokens if first else 0, model, as_of=price_date(model, when))
        first = False
    return total


class CacheSimulator:
    """One cache scope simulated one request at a time (the loop of `simulate`, exposed so a
    caller can look at the store between requests, seed it, or decide the next request from the
    previous usage: readbench.replay does all three).

    Args:
        cache_model, model, as_of, **params: as for `simulate`.
        store: a store to start from (e.g. seeded with entries an earlier session wrote);
            default empty.

    Raises:
        ValueError: as for `simulate` (unknown cache model or model, mismatched family, no price).
    """

    def __init__(
        self,
        cache_model: str = "anthropic-5m",
        model: str | None = None,
        *,
        as_of: dt.date = PRICES_AS_OF,
        store: CacheStore | None = None,
        **params: Any,
    ) -> None:
        if model is None:
            if cache_model not in CACHE_MODELS:
                raise ValueError(f"unknown cache model {cache_model!r}; known: {', '.join(CACHE_MODELS.names())}")
            model = CACHE_MODELS.get(cache_model).default_priced_model
        model = canonical_model(model)
        self.cache_model = cache_model
        self.model = model
        self.as_of = as_of
        self.policy = make_cache_model(cache_model, model, **params)
        get_price(model, 0, as_of=as_of)  # fail before simulating if the model has no price
        # the price rows of `model` on `as_of`, highest band first: `get_price` without its look-ups
        self._rows = price_rows(model, as_of)
        self.store = store if store is not None else CacheStore()
        self.chainer = PrefixChainer()
        self.requests: list[RequestUsage] = []
        self.last_prepared: PreparedRequest | None = None
        self._prev_ts = float("-inf")
        self._stepped = 0  # requests billed by `step` or `step_totals` (error messages name them)

    def step(self, req: Request) -> RequestUsage:
        """Bill one request (after every earlier one); returns its usage and cost.

        Raises:
            ValueError: the request starts before the previous one, or is invalid for the
                provider (e.g. more than 4 Anthropic breakpoints).
        """
        i = len(self.requests)
        usage, total, cost = self._bill(req)
        out = RequestUsage(
            index=i,
            input_tokens=total,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            uncached_input_tokens=usage.uncached_input_tokens,
            output_tokens=req.output_tokens,
            write_tier=usage.write_tier,
            cost_usd=cost,
        )
        self.requests.append(out)
        return out

    def step_totals(self, req: Request) -> tuple[int, int, float]:
        """Bill one request as `step` does, without keeping a record of it: returns (cache read
        tokens, input tokens, cost in USD), for callers that only sum them (the replay's arms).
        `requests` and `result` do not include it.

        Raises:
            ValueError: as `step`.
        """
        usage, total, cost = self._bill(req)
        return usage.cache_read_tokens, total, cost

    def _bill(self, req: Request) -> tuple[Usage, int, float]:
        i = self._stepped
        self._stepped += 1
        if req.ts_start_seconds < self._prev_ts:
            raise ValueError(
                f"request {i} starts at {req.ts_start_seconds} s, before request {i - 1} "
                f"({self._prev_ts} s): requests must be in start-time order"
            )
        self._prev_ts = req.ts_start_seconds
        prep = self.chainer.prepare(req)
        usage = self.policy.bill(prep, self.store)
        total = prep.total_tokens
        read, write, uncached = usage.cache_read_tokens, usage.cache_write_tokens, usage.uncached_input_tokens
        if read + write + uncached != total or min(read, write, uncached) < 0:
            raise AssertionError(f"cache model {self.cache_model!r} broke conservation on request {i}: {usage}")
        self.last_prepared = prep
        return usage, total, self._price(usage, req.output_tokens, total)

    def _price(self, usage: Usage, output_tokens: int, prompt: int) -> float:
        """`price_usage(usage, output_tokens, self.model, as_of=self.as_of)` (the same arithmetic,
        so the same float) from the rows looked up once; `prompt` = the usage's input tokens."""
        rows = self._rows
        row = rows[-1]
        floor = max(prompt, 1)
        for r in rows:  # get_price's band choice
            if r.band_prompt_tokens_above < floor:
                row = r
                break
        return _usd(row, usage, output_tokens)

    def result(self) -> SimulationResult:
        """Totals over every request stepped so far."""
        out = self.requests
        input_tokens = sum(r.input_tokens for r in out)
        read = sum(r.cache_read_tokens for r in out)
        return SimulationResult(
            cache_model=self.cache_model,
            model=self.model,
            prices_as_of=self.as_of,
            requests=tuple(out),
            input_tokens=input_tokens,
            cache_read_tokens=read,
            cache_write_tokens=sum(r.cache_write_tokens for r in out),
            uncached_input_tokens=sum(r.uncached_input_tokens for r in out),
            output_tokens=sum(r.output_tokens for r in out),
            cost_usd=sum(r.cost_usd for r in out),
            cache_read_ratio=read / input_tokens if input_tokens else 0.0,
        )


def simulate(
    requests: Sequence[Request],
    cache_model: str = "anthropic-5m",
    model: str | None = None,
    *,
    as_of: dt.date = PRICES_AS_OF,
    **params: Any,
) -> SimulationResult:
    """Simulate one cache scope over `requests` and price every request.

    Args:
        requests: in non-decreasing `ts_start_seconds` order (one conversation or one scope).
        cache_model: a name of `registry.CACHE_MODELS`.
        model: priced model (models.csv and prices.csv); default
            the cache model's `default_priced_model`.
        as_of: date for the price rows (default: the tables' compile date).
        **params: cache-model parameters (see `registry.make_cache_model`).

    Returns:
        SimulationResult with one record per request and totals.

    Raises:
        ValueError: requests out of start-time order (names the index), unknown cache model or
            model, mismatched provider family, missing price, or an invalid request for the
            provider (e.g. more than 4 Anthropic breakpoints).
    """
    sim = CacheSimulator(cache_model, model, as_of=as_of, **params)
    for req in requests:
        sim.step(req)
    return sim.result()
