"""One session's requests, or any alternative to them, simulated with the bill's calibration
(the path every what-if replay shares: DCP configurations, read variants; issue 14 items 2, 3).

docs/specs/sessions.md §5 (the calibration the bill gives), dcp.md §7.5 (a replay re-builds
each recorded request and prices it under the provider's cache rules). An *arm* is a request
per call (`list[list[ChatMessage]]`, the same length as `session.calls`); `None` is the recorded
requests (`off`). For one session, `ArmSimulator`:

1. calibrates once, in-sample, on the recorded requests under the first cache model whose family
   is the recorded provider's (`readbench.replay.calibrate`: token fit, unrecorded head, TTL tier,
   cold start, exogenous breaks); other cache models (a what-if: the same requests priced at that
   provider's default model) get its token-free parts (head, cold start, breaks);
2. renders every arm with one shared `RequestBuilder` (each message object once) and simulates
   it per cache model (`SessionSimulator`), the recorded output tokens and times carried over;
   an arm whose rendered blocks equal an earlier arm's at every call (a configuration that pruned
   nothing, two that pruned alike) is not simulated again: the same requests give the same result.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.cache.adapter import RequestBuilder
from readbench.cache.blocks import Block
from readbench.cache.prices import canonical_model, get_model_spec, get_price
from readbench.cache.registry import CACHE_MODELS, tier_ttl_seconds
from readbench.replay.bill import billed_cost, session_date
from readbench.replay.billing import billed, infer_tier
from readbench.replay.calibrate import calibrate
from readbench.replay.records import Calibration
from readbench.replay.requests import RequestSet, RequestSets, call_records
from readbench.replay.simulate import SessionSimulator, calibrated_requests, price_date, run_key
from readbench.sessions import Session

__all__ = ["ArmResult", "ArmSimulator", "session_billed_cost"]

_UNSEEN: Any = object()



@dataclass(frozen=True)
class ArmResult:
    """One arm under one cache model.

    Attributes:
        cache_model: the cache model's name.
        priced_as_recorded: the session's own models are priced (the cache model's family is
            the recorded provider's); False for a what-if at the provider's default model.
        cost_usd: simulated cost of every call (USD).
        cache_read_tokens, input_tokens: summed over calls (tokens, calibrated).
    """

    cache_model: str
    priced_as_recorded: bool
    cost_usd: float
    cache_read_tokens: int
    input_tokens: int


def _priced(session: Session, cache_model: str) -> tuple[list[str], bool]:
    """Per call, the model to price under `cache_model`, and whether the session is priced as
    recorded (a recorded model without a price on the session's date is priced as the cache
    model's default, as in the bill check: `readbench.replay.bill`).

    A cache model of no family (`none`: no prompt caching) prices every recorded model, but it
    replays the session as recorded only when the bill shows no cache reads or writes: a session
    whose provider cached, priced without a cache, is a what-if (a tester's replay of a session
    mixing Claude and GPT calls put `none`'s $145.56 into the read-variant headline against a
    $30.33 bill, 2026-12-07)."""
    family = CACHE_MODELS.get(cache_model).family
    when = session_date(session)
    models = []
    own = family is not None or not any(
        (u := billed(c)) is not None and (u.cache_read_tokens or u.cache_write_tokens) for c in session.calls)
    for c in session.calls:
        m = canonical_model(c.model) if c.model else ""
        try:
            fam = get_model_spec(m).cache_family
            get_price(m, 0, as_of=price_date(m, when))
        except ValueError:
            fam = None
        if fam is None or (family is not None and fam != family):
            m, own = CACHE_MODELS.get(cache_model).default_priced_model, False
        models.append(m)
    return models, own


def session_billed_cost(session: Session) -> float:
    """The session's billed cost (USD) from its recorded usage; NaN when a model has no price."""
    when = session_date(session)
    tier = infer_tier(session, [canonical_model(c.model) for c in session.calls], when)
    total = 0.0
    for i, c in enumerate(session.calls):
        if billed(c) is None:
            continue
        try:
            total += billed_cost(session, i, canonical_model(c.model), tier, when)
        except ValueError:
            return math.nan
    return total


class ArmSimulator:
    """Simulates arms of one session under cache models (module docstring).

    Args:
        session: an imported session with at least one call.
        cache_models: cache model names (`readbench cache models`).
        builder: a RequestBuilder to share with the session's other replays.
        calibrations: cache model -> an in-sample calibration of the recorded requests already
            fitted under it (the bill check's, `SessionReplay.calibrations[(cm, "in_sample")]`):
            used instead of fitting again when it is the calibrating cache model's.
        sets: the session's RequestSets of its recorded requests, shared with the bill check
            (built on `builder`): the `off` arm then reuses its renderings; None = new ones.

    Raises:
        ValueError: an unknown cache model, or a session without calls.
    """

    def __init__(self, session: Session, cache_models: list[str], builder: RequestBuilder | None = None,
                 calibrations: dict[str, Calibration] | None = None, sets: RequestSets | None = None) -> None:
        if not session.calls:
            raise ValueError(f"{session.source}: session {session.session_id!r} has no model calls to replay")
        for cm in cache_models:
            if cm not in CACHE_MODELS:
                raise ValueError(f"unknown cache model {cm!r}; known: {', '.join(CACHE_MODELS.names())}")
        self.session = session
        self.when: dt.date = session_date(session)
        self.builder = builder if builder is not None else RequestBuilder()
        self._shared = sets if sets is not None else RequestSets(session, self.builder)
        priced = {cm: _priced(session, cm) for cm in cache_models}
        self.cache_models = sorted(cache_models, key=lambda m: not priced[m][1])  # own families first
        self._priced = priced
        self._records: dict[int, list] = {}  # arm id -> its CallRecords
        self._sets: dict[tuple[str, int, tuple[str, ...]], RequestSet] = {}
        self._keep: dict[int, Any] = {}  # arm objects by id, so their ids stay unique
        self._canon: dict[int, list[list[ChatMessage]] | None] = {}  # arm id -> first arm rendering alike
        self._renders: list[tuple[list[list[ChatMessage]] | None, list[tuple[Block, ...]]]] = []
        self._calib: Calibration | None = (calibrations or {}).get(self.cache_models[0]) if self.cache_models else None
        self._off: dict[str, ArmResult] | None = None
        self._results: dict[tuple[str, int], ArmResult] = {}  # (cache model, id(request set)) -> result
        self._what_if: Calibration | None = None
        self.billed_cost_usd = session_billed_cost(session)

    def _canonical(self, requests: list[list[ChatMessage]] | None) -> list[list[ChatMessage]] | None:
        """The first arm seen whose every call renders to the same blocks as `requests` (in
        o200k tokens, as sent: `RequestBuilder.blocks`), `requests` itself when none does.

        Every request set of an arm is a function of those blocks (its tokenizer family's
        counts, calibration and dropped reasoning all derive from them), so an arm that renders
        like an earlier one (a configuration that pruned nothing, two that pruned alike) takes
        the earlier arm's sets without building any."""
        hit = self._canon.get(id(requests), _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        self._keep[id(requests)] = requests
        records = self._arm_records(requests)
        rendered = [self.builder.blocks(r) for r in records]
        same = next((arm for arm, other in self._renders if other == rendered), _UNSEEN)
        if same is _UNSEEN:
            self._renders.append((requests, rendered))
            same = requests
        self._canon[id(requests)] = same
        return same

    def _arm_records(self, requests: list[list[ChatMessage]] | None) -> list:
        """The calls of arm `requests` as CallRecords (one list per arm: the builder renders each
        call once for all families)."""
        if requests is None:
            return self._shared.records()
        records = self._records.get(id(requests))
        if records is None:
            records = self._records[id(requests)] = call_records(self.session, requests)
        return records

    def _request_set(self, cm: str, requests: list[list[ChatMessage]] | None) -> RequestSet:
        requests = self._canonical(requests)
        models, _ = self._priced[cm]
        family = get_model_spec(models[0]).tokenizer
        key = (family, id(requests), tuple(models))
        if key not in self._sets:
            self._keep[id(requests)] = requests
            if requests is None:  # the recorded requests: the set the bill check replayed
                rs = self._shared.get(family, models)
            else:
                rs = RequestSet(self.session, family, models, builder=self.builder, records=self._arm_records(requests),
                                calibrated=self._shared.calibrated.setdefault(family, {}),
                                sizes=self._shared.sizes(family))
            # an arm that renders to the same blocks as one already set up (a configuration that
            # pruned nothing, two that pruned alike) shares its set, so its simulation is reused
            same = next((o for o in self._sets.values() if o.family == family and o.models == models
                         and o.base == rs.base), None)
            self._sets[key] = same if same is not None else rs
        return self._sets[key]

    def calibration(self, cache_model: str) -> Calibration:
        """The calibration used under `cache_model` (module docstring, step 1)."""
        if self._calib is None:
            first = self.cache_models[0]
            self._calib = calibrate(self.session, self._request_set(first, None), first, self.when,
                                    range(len(self.session.calls)))
        calib = self._calib
        if self._priced[cache_model][1]:
            return calib
        if self._what_if is None:  # one object for every what-if model and arm (the request sets memoise by it)
            self._what_if = Calibration(
                heads=calib.heads, head_cuts=calib.head_cuts, context_extra=calib.context_extra, tier=calib.tier,
                cold_start_tokens=calib.cold_start_tokens, breaks=calib.breaks,
                notes=("what-if: the recorded session is not priced under this cache model's family",))
        return self._what_if

    def priced_as_recorded(self, cache_model: str) -> bool:
        """True when `cache_model` prices the session's own models (its provider's family)."""
        return self._priced[cache_model][1]

    def run(self, requests: list[list[ChatMessage]] | None, cache_models: list[str] | None = None) -> list[ArmResult]:
        """The arm `requests` (None = the recorded requests) under `cache_models` (default every
        cache model), in `self.cache_models` order. Arms are told apart by identity: pass the same
        list object to get the memoised rendering. Cache models whose requests are the same (the
        same tokenizer family, priced models and calibration: `anthropic-5m` and `anthropic-1h`)
        are stepped together, each call's request built once for all of them.

        Raises:
            ValueError: a cache model this simulator was not built with.
        """
        names = self.cache_models if cache_models is None else [c for c in self.cache_models if c in cache_models]
        unknown = set(cache_models or ()) - set(self.cache_models)
        if unknown:
            raise ValueError(f"cache model(s) {sorted(unknown)} not in this replay's {self.cache_models}")
        self._simulate_all(names, requests)
        if requests is None:
            return [self.off(cm) for cm in names]
        return [self._simulate(cm, requests) for cm in names]

    def off(self, cache_model: str) -> ArmResult:
        """The recorded requests under `cache_model` (simulated once)."""
        if self._off is None:
            self._off = {}
        if cache_model not in self._off:
            self._off[cache_model] = self._simulate(cache_model, None)
        return self._off[cache_model]

    def _simulate(self, cm: str, requests: list[list[ChatMessage]] | None) -> ArmResult:
        self._simulate_all([cm], requests)
        return self._results[(cm, id(self._request_set(cm, requests)))]

    def _simulate_all(self, names: list[str], requests: list[list[ChatMessage]] | None) -> None:
        """Simulate the arm under every cache model of `names` not simulated yet: those that share
        a request set and a calibration in one pass over the calls (`_simulate_set`)."""
        groups: dict[tuple[int, int], tuple[Calibration, RequestSet, list[str]]] = {}
        for cm in names:
            calib = self.calibration(cm)
            rs = self._request_set(cm, requests)
            if (cm, id(rs)) not in self._results:
                groups.setdefault((id(calib), id(rs)), (calib, rs, []))[2].append(cm)
        for calib, rs, cms in groups.values():
            for cm, result in zip(cms, self._simulate_set(cms, calib, rs)):
                self._results[(cm, id(rs))] = result

    def _simulate_set(self, cms: list[str], calib: Calibration, rs: RequestSet) -> list[ArmResult]:
        """The requests of `rs` under `calib`, simulated under each of `cms` (one result each, in
        order): each call's request is built once and stepped through every cache model's
        simulator (they keep no state in common)."""
        ttl = tier_ttl_seconds(calib.tier or "5m")
        cost = [0.0] * len(cms)
        read = [0] * len(cms)
        total = [0] * len(cms)
        todo = []
        for k, cm in enumerate(cms):
            # the same requests already simulated by the bill check (`readbench.replay.simulate.run`,
            # e.g. the recorded requests under their in-sample calibration): summed, not re-run
            done = rs.runs.get(run_key(cm, self.when, ttl, calib))
            if done is None:
                todo.append(k)
                continue
            for _, usage, _ in done:
                cost[k] += usage.cost_usd
                read[k] += usage.cache_read_tokens
                total[k] += usage.input_tokens
        sims = [(k, SessionSimulator(cms[k], self.when, calib.granularity)) for k in todo]
        for i, req in enumerate(calibrated_requests(rs, calib) if sims else ()):
            model = rs.models[i]
            for k, sim in sims:
                if i == 0 and calib.cold_start_tokens > 0:
                    sim.seed(rs.models[0], req, calib.cold_start_tokens, req.ts_start_seconds - 1.0, ttl)
                r, n, c = sim.step_totals(model, req)
                cost[k] += c
                read[k] += r
                total[k] += n
        return [ArmResult(cm, self._priced[cm][1], cost[k], read[k], total[k]) for k, cm in enumerate(cms)]
