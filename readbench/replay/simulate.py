"""Simulate a recorded session's requests and say why each cache miss happened.

docs/specs/caching.md §8.2 (the per-request algorithm), sessions.md §5 (the causes a bill
shows). One `CacheSimulator` per priced model (a model switch starts a new cache scope,
caching.md §1.4). Before each request the simulator's store is inspected for the prefix the
previous request of the same scope left cached (the longest of its prefixes that has an entry),
so that a miss gets a mechanical reason:

| reason | when |
|---|---|
| `cold_start` | the first request of a scope (or nothing cached yet) |
| `prefix_changed` | the cached prefix is not a prefix of this request: `why` names the first changed block (system prompt or tools, thinking or request parameters, compaction, an earlier message edited, model switch) |
| `ttl_expired` | the entry had expired when the request started |
| `concurrent_request` | the entry was written by a request whose first token had not arrived yet |
| `below_minimum` | the cached prefix is shorter than the model's minimum cacheable length |
| `lookback_exceeded` | the entry is live but more than the lookback window behind every breakpoint |

A call is a miss when its read falls short of what the previous call left cached (floored to the
model's hit granularity) by more than `MISS_TOLERANCE` (5 %, at least `MISS_MIN_TOKENS`).

`run` steps a whole session's calibrated requests (`readbench.replay.requests.RequestSet`) through
one cache model, and replays a simulation already run on the same requests instead of repeating it;
`SimulationPass` is one such simulation stepped by its caller, which `readbench.replay.calibrate.
infer_breaks` leaves early (and diagnoses sparingly) when the pass cannot be the calibrated replay.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from readbench.cache.blocks import PreparedRequest, Request
from readbench.cache.prices import get_model_spec, price_date
from readbench.cache.simulate import CacheSimulator, RequestUsage

if TYPE_CHECKING:
    from readbench.replay.records import Calibration
    from readbench.replay.requests import RequestSet
    from readbench.sessions import Session

__all__ = ["MISS_MIN_TOKENS", "MISS_TOLERANCE", "Diagnosis", "SessionSimulator", "SimulationPass", "calibrated_requests",
           "price_date", "run", "run_key"]

MISS_TOLERANCE = 0.05
MISS_MIN_TOKENS = 256


@dataclass(frozen=True)
class Diagnosis:
    """What the previous call of the same scope left cached, and why this call missed it.

    Attributes:
        expected_read_tokens: tokens of the longest prefix of the previous request that had a
            cache entry just before this call (0 for the first call of a scope).
        reason: None for a hit, else one of the module docstring's reasons.
        why: for `prefix_changed`, what changed (e.g. `system prompt or tools`), else "".
        changed_message: for `prefix_changed` inside the conversation, the index of the first
            changed non-system message, else None.
        gap_seconds: start-to-start time since the previous call of the scope (s), None for the first.
    """

    expected_read_tokens: int
    reason: str | None
    why: str = ""
    changed_message: int | None = None
    gap_seconds: float | None = None


def is_miss(read: int, expected: int) -> bool:
    """True when `read` falls short of `expected` by more than the tolerance (module docstring)."""
    return expected - read > max(MISS_TOLERANCE * expected, MISS_MIN_TOKENS)


def _message_index(blocks: tuple, k: int) -> int:
    return sum(1 for b in blocks[:k] if b.ends_message and b.role not in ("tools", "system"))


def _why(blocks: tuple, k: int, compaction: bool) -> tuple[str, int | None]:
    if k < len(blocks):
        b = blocks[k]
        if b.kind == "params":
            return "thinking or request parameters", None
        if b.role in ("tools", "system"):
            return "system prompt or tools", None
    if compaction:
        return "compaction", _message_index(blocks, k)
    return "an earlier message edited", _message_index(blocks, k)


def _floored(model: str, tokens: int, granularity: int | None = None) -> int:
    """`tokens` floored to the multiple of the model's hit granularity its provider reports
    (`granularity`, else models.csv `granularity_tokens`: OpenAI's implicit breakpoints, DeepSeek's
    storage units; 1 for Anthropic): a read that short of the cached prefix is a hit, not a miss."""
    g = max(granularity if granularity is not None else get_model_spec(model).granularity_tokens, 1)
    return tokens // g * g


#: models.csv rule sets whose policies floor hits to a granularity (`granularity_tokens` override).
GRANULAR_RULES = ("openai-automatic", "gemini-implicit", "deepseek-units")


class SessionSimulator:
    """Steps one cache model through a session's requests, one scope per priced model.

    Args:
        cache_model: a name of `readbench.cache.CACHE_MODELS`.
        as_of: the session's date; each model is priced at `price_date(model, as_of)`.
        granularity: model -> hit granularity (tokens) in place of models.csv's, for the models whose
            rules floor hits (`GRANULAR_RULES`; `Calibration.granularity`).

    Raises:
        ValueError: an unknown cache model, or a model without a price (naming the file to add it to).
    """

    def __init__(self, cache_model: str, as_of: dt.date, granularity: dict[str, int] | None = None) -> None:
        self.cache_model = cache_model
        self.as_of = as_of
        self.granularity = dict(granularity or {})
        self._sims: dict[str, CacheSimulator] = {}
        self._prev: dict[str, tuple[PreparedRequest, float, int]] = {}  # model -> (prep, start, call)
        self.last_model: str | None = None

    def _sim(self, model: str) -> CacheSimulator:
        sim = self._sims.get(model)
        if sim is None:
            g = self.granularity.get(model)
            params: dict[str, Any] = (
                {"granularity_tokens": g} if g is not None and get_model_spec(model).rules in GRANULAR_RULES else {})
            sim = self._sims[model] = CacheSimulator(self.cache_model, model, as_of=price_date(model, self.as_of), **params)
        return sim

    def seed(self, model: str, request: Request, tokens: int, ts_seconds: float, ttl_seconds: float) -> None:
        """Before the first request: an entry for the longest prefix of `request` of at most
        `tokens` tokens (+ the miss tolerance), written at `ts_seconds` by an earlier session (a
        cold start whose first call read cache)."""
        from readbench.cache.blocks import chain_hashes

        sim = self._sim(model)
        hashes = chain_hashes(request.blocks)
        cum = 0
        best = None
        for h, b in zip(hashes, request.blocks):
            if cum + b.tokens > tokens * (1 + MISS_TOLERANCE) + MISS_MIN_TOKENS:
                break
            cum += b.tokens
            best = (h, cum)
        if best is not None and best[1] > 0:
            sim.store.put(best[0], best[1], now_seconds=ts_seconds, expires_at_seconds=ts_seconds + ttl_seconds,
                          readable_from_seconds=float("-inf"))

    def step_totals(self, model: str, request: Request) -> tuple[int, int, float]:
        """Bill `request` for `model` without a record or a diagnosis (`CacheSimulator.
        step_totals`): (cache read tokens, input tokens, cost in USD). Calls stepped this way are
        not diagnosed against by a later `step`.

        Raises:
            ValueError: as `CacheSimulator.step`.
        """
        out = self._sim(model).step_totals(request)
        self.last_model = model
        return out

    def step(self, model: str, request: Request, *, compaction: bool = False,
             diagnose: bool = True) -> tuple[RequestUsage, Diagnosis | None]:
        """Bill `request` for `model`; returns its usage and the diagnosis of its read (None
        when `diagnose` is False: the store is then not inspected, which is faster).

        Raises:
            ValueError: as `CacheSimulator.step`.
        """
        sim = self._sim(model)
        if not diagnose:
            usage = sim.step(request)
            self.last_model = model
            self._prev[model] = (sim.last_prepared, request.ts_start_seconds, len(sim.requests) - 1)
            return usage, None
        now = request.ts_start_seconds
        prev = self._prev.get(model)
        switched = self.last_model is not None and self.last_model != model
        expected, key = 0, None
        if prev is not None:
            prep = prev[0]
            for i in range(len(prep.hashes) - 1, -1, -1):
                if sim.store.peek(prep.hashes[i]) is not None:
                    key, expected = i, prep.cum_tokens[i]
                    break
            entry = sim.store.peek(prep.hashes[key]) if key is not None else None
            entry_state = (entry.expires_at_seconds, entry.readable_from_seconds) if entry is not None else None
        usage = sim.step(request)
        cur = sim.last_prepared
        assert cur is not None
        self.last_model = model
        gap = now - prev[1] if prev is not None else None
        self._prev[model] = (cur, now, len(sim.requests) - 1)
        if prev is None:
            why = "model switch" if switched else ""
            return usage, Diagnosis(0, "cold_start" if usage.cache_read_tokens == 0 else None, why, None, gap)
        if key is None:  # the previous request left nothing: too short to cache, or gone (expired, purged)
            if usage.cache_read_tokens > 0:
                return usage, Diagnosis(0, None, "", None, gap)
            short = prev[0].total_tokens < get_model_spec(model).min_cacheable_tokens
            return usage, Diagnosis(0, "below_minimum" if short else "ttl_expired", "", None, gap)
        if not is_miss(usage.cache_read_tokens, _floored(model, expected, self.granularity.get(model))):
            return usage, Diagnosis(expected, None, "", None, gap)
        prep = prev[0]
        if key >= len(cur.hashes) or cur.hashes[key] != prep.hashes[key]:
            k = next((j for j, (a, b) in enumerate(zip(prep.hashes, cur.hashes)) if a != b), min(len(prep.hashes), len(cur.hashes)))
            why, msg = _why(cur.request.blocks, k, compaction)
            return usage, Diagnosis(expected, "prefix_changed", why, msg, gap)
        expires, readable = entry_state if entry_state is not None else (float("-inf"), float("-inf"))
        if expires <= now:
            reason = "ttl_expired"
        elif readable > now:
            reason = "concurrent_request"
        elif expected < get_model_spec(model).min_cacheable_tokens:
            reason = "below_minimum"
        else:
            reason = "lookback_exceeded"
        return usage, Diagnosis(expected, reason, "", None, gap)


def _simulation_key(calib: Calibration) -> tuple:
    """The fields of `calib` that the requests of a RequestSet depend on (not its rates or notes)."""
    return (tuple(sorted((m, (f.a, f.b, f.n)) for m, f in calib.tokens.items())), tuple(sorted(calib.heads.items())),
            calib.head_cuts, tuple(sorted(calib.context_extra.items())), calib.cold_start_tokens, calib.breaks,
            calib.insertions, tuple(sorted(calib.granularity.items())))


def run_key(cache_model: str, when: dt.date, ttl_seconds: float, calib: Calibration) -> tuple:
    """The key of `RequestSet.runs` under which `run` keeps the simulation of a set's requests
    under `calib`, `cache_model`, `when` and (with a cold start) `ttl_seconds`."""
    return (cache_model, when, ttl_seconds if calib.cold_start_tokens > 0 else None, _simulation_key(calib))


#: Passes of built requests a RequestSet keeps (`calibrated_requests`): those of the calibrations
#: used last (a bill check's cache model runs up to 5 passes: raw, two per half; ~1.5 MB each for
#: 450 calls).
KEPT_PASSES = 8


def calibrated_requests(rs: RequestSet, calib: Calibration) -> Iterator[Request]:
    """`rs.request(i, calib, output tokens)` of every call i of `rs.session` in order (output
    tokens as recorded, 0 when unrecorded). Requests are a function of the fields of `calib` that
    `run_key` names, so a pass already built under an equal calibration (another cache model's
    pass on the same calibration: anthropic-5m and anthropic-1h, both halves' first break pass)
    is replayed from `rs.passes` (the last `KEPT_PASSES`) instead of built again. A pass its
    consumer left early (an `infer_breaks` pass past its last candidate) is kept as far as it was
    built, and the next consumer builds on from there."""
    key = _simulation_key(calib)
    built = rs.passes.pop(key, None)
    if built is None:
        built = []
        if len(rs.passes) >= KEPT_PASSES:
            rs.passes.pop(next(iter(rs.passes)))
    rs.passes[key] = built  # now the latest used
    calls = rs.session.calls
    for i, call in enumerate(calls):
        if i < len(built):
            yield built[i]
            continue
        req = rs.request(i, calib, call.usage.output_tokens if call.usage is not None else 0)
        built.append(req)
        yield req


class SimulationPass:
    """One simulation of `rs`'s requests under `calib`, a cache model, a date and a TTL, stepped
    call by call by its caller: `run` steps it to the end; `readbench.replay.calibrate.
    infer_breaks` stops a pass that cannot be the calibrated replay once it is past the last call
    it looks at, and diagnoses only those calls (caching.md §8.2; the diagnosis does not change the
    simulation, `SessionSimulator.step`).

    Args:
        session, rs, calib, cache_model, when, ttl_seconds: as for `run`.

    Raises:
        ValueError: an unknown cache model, or a model without a price.
    """

    def __init__(self, session: Session, rs: RequestSet, calib: Calibration, cache_model: str, when: dt.date,
                 ttl_seconds: float) -> None:
        self._rs = rs
        self._calib = calib
        self._ttl = ttl_seconds
        self.key = run_key(cache_model, when, ttl_seconds, calib)
        self._sim = SessionSimulator(cache_model, when, calib.granularity)
        self._compactions = {e.call_index for e in session.events if e.kind == "compaction"}
        self._requests = enumerate(calibrated_requests(rs, calib))
        #: (call, usage, diagnosis) of every call stepped so far, while each was diagnosed; None after
        #: a call stepped without a diagnosis (the pass can then not be kept: `keep`)
        self.results: list[tuple[int, RequestUsage, Diagnosis | None]] | None = []

    def step(self, diagnose: bool = True) -> tuple[int, RequestUsage, Diagnosis | None]:
        """Step the next call: (its index, its usage, its diagnosis or None when not `diagnose`).

        Raises:
            StopIteration: every call was stepped.
            ValueError: as `SessionSimulator.step`.
        """
        i, req = next(self._requests)
        calib = self._calib
        if i == 0 and calib.cold_start_tokens > 0:
            self._sim.seed(self._rs.models[0], req, calib.cold_start_tokens, req.ts_start_seconds - 1.0, self._ttl)
        usage, diag = self._sim.step(self._rs.models[i], req, compaction=i in self._compactions, diagnose=diagnose)
        if self.results is not None:
            if diagnose:
                self.results.append((i, usage, diag))
            else:
                self.results = None
        return i, usage, diag

    def keep(self) -> bool:
        """Keep the results in `rs.runs` (for `run` to replay) when every call was stepped with
        its diagnosis; returns whether they were kept."""
        results = self.results
        if results is None or len(results) != len(self._rs.session.calls):
            return False
        runs = self._rs.runs
        if len(runs) >= 16:  # bounded: the passes of both windows under two cache models sharing the set
            # (`readbench.replay.requests.RequestSets`), then the replays reuse the last of each
            runs.pop(next(iter(runs)))
        runs[self.key] = results
        return True


def run(session: Session, rs: RequestSet, calib: Calibration, cache_model: str, when: dt.date, ttl_seconds: float):
    """Simulate every call of `session` under `calib`; yields (call index, RequestUsage, Diagnosis).

    A simulation is a function of the requests (`rs` under the fields of `calib` they depend
    on), the cache model, the date and, with a cold start, `ttl_seconds`: one already run on
    `rs` is replayed from `rs.runs` (the last pass of `infer_breaks` is the calibrated replay).

    Raises:
        ValueError: an unknown cache model, or a model without a price.
    """
    done = rs.runs.get(run_key(cache_model, when, ttl_seconds, calib))
    if done is not None:
        yield from done
        return
    sim = SimulationPass(session, rs, calib, cache_model, when, ttl_seconds)
    for _ in range(len(session.calls)):
        yield sim.step()
    sim.keep()
