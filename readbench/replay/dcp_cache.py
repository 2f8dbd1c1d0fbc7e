"""Recorded sessions replayed under DCP configurations and cache models (issue 14 item 3).

shared/specs/dcp.md §7.5 (the sister's replay method: project the prefix at every call boundary,
carrying the sticky state), sessions.md §5 (the calibration the bill gives). For one session:

1. the session is calibrated on its own bill once (`readbench.replay.calibrate`, in-sample: token
   fit, unrecorded head, TTL tier, cold start, exogenous breaks) per cache model whose family is
   the recorded provider's; other cache models (a what-if: the same requests priced at that
   provider's default model) get the token-free parts of it (head, cold start, breaks);
2. every DCP configuration projects each recorded request in call order (`readbench.dcp.project`,
   state threaded, one `ProjectionCache` per configuration; pi-dcp's pressure band from pi's
   usage estimate: the previous call's billed prompt and output plus chars/4 of what came after);
3. the projected requests are built with that calibration (`RequestSet(requests=...)`) and
   simulated per cache model (`SessionSimulator`); `off` is the recorded requests themselves.
Per (configuration, cache model): simulated cost and cache-read ratio, the footer's "tokens
saved" (dcp.md §6), the real cost delta against `off`, the delta against the billed cost, and
prefix breaks (calls whose projection rewrote what an earlier call had sent).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.cache.adapter import RequestBuilder
from readbench.cache.prices import canonical_model, get_model_spec
from readbench.cache.registry import CACHE_MODELS, DEFAULT_PRICED_MODELS
from readbench.dcp import ContextUsage, DcpState, ProjectionCache, get_config, prefix_break_index, project
from readbench.replay.bill import billed_cost, session_date
from readbench.replay.calibrate import billed, calibrate, infer_tier
from readbench.replay.dcp_replay import pi_estimate_tokens
from readbench.replay.requests import Calibration, RequestSet, call_records
from readbench.replay.simulate import SessionSimulator
from readbench.sessions import Session

__all__ = ["DCP_CALL_COLUMNS", "DCP_COLUMNS", "DEFAULT_CONTEXT_WINDOW", "DcpReplay", "replay_dcp"]

#: Columns of dcp.parquet: one row per session x configuration x cache model.
DCP_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "config": "string", "cache_model": "string",
    "priced_as_recorded": "bool", "calls": "int64", "sim_cost_usd": "float64", "cost_delta_usd": "float64",
    "billed_cost_usd": "float64", "cost_delta_vs_billed_usd": "float64", "cache_read_ratio": "float64",
    "input_tokens": "int64", "footer_tokens_saved": "int64", "pruned_items": "int64", "prefix_breaks": "int64",
}
#: Columns of dcp_calls.parquet: one row per session x configuration x call (prefix_break: the
#: first rewritten message index, null when the call only appended).
DCP_CALL_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "config": "string", "call": "int64", "prefix_break": "int64",
    "pruned_items": "int64", "footer_tokens_saved": "int64",
}
#: Context window (tokens) for pi-dcp's pressure bands when the caller gives none.
DEFAULT_CONTEXT_WINDOW = 200_000
_TTL = {"5m": 300.0, "1h": 3600.0}


@dataclass
class DcpReplay:
    """One session under DCP configurations x cache models.

    Attributes:
        rows: one dict per (configuration, cache model): the columns of `dcp.parquet`.
        calls: one dict per (configuration, call): prefix break, pruned items, footer tokens saved.
        notes: what could not be compared (unpriced models), in words.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _usage(session: Session, requests: list[list[ChatMessage]], i: int, window: int) -> ContextUsage:
    """pi's `getContextUsage` before call i (dcp.md §3): the previous billed call's prompt and
    output tokens plus chars/4 of the messages sent since; chars/4 of everything before any bill."""
    msgs = requests[i]
    for j in range(i - 1, -1, -1):
        u = billed(session.calls[j])
        if u is not None and session.calls[j].context == session.calls[i].context:
            tail = msgs[session.calls[j].n_messages:]
            return ContextUsage(u.input_tokens + u.output_tokens + sum(pi_estimate_tokens(m) for m in tail), window)
    return ContextUsage(sum(pi_estimate_tokens(m) for m in msgs if m.role != "system"), window)


def _projections(session: Session, config: str, window: int) -> tuple[list[list[ChatMessage]], list[dict[str, Any]]]:
    """Each call's projected request under `config`, and per-call statistics."""
    cfg = get_config(config)
    cache = ProjectionCache(max_histories=4)
    state = DcpState()
    out: list[list[ChatMessage]] = []
    stats: list[dict[str, Any]] = []
    recorded = [session.request(i) for i in range(len(session.calls))]
    previous: list[ChatMessage] | None = None
    for i in range(len(session.calls)):
        proj = project(recorded[i], cfg, state=state, usage=_usage(session, recorded, i, window), cwd=session.cwd,
                       cache=cache)
        state = proj.state
        brk = prefix_break_index(previous, proj.messages) if previous is not None else None
        # a new context (compaction) is not a DCP rewrite: compare within a context only
        if i and session.calls[i].context != session.calls[i - 1].context:
            brk = None
        out.append(proj.messages)
        stats.append({"call": i, "prefix_break": brk, "pruned_items": proj.stats.pruned_items,
                      "footer_tokens_saved": proj.stats.footer_tokens_saved})
        previous = proj.messages
    return out, stats


def _priced(session: Session, cache_model: str) -> tuple[list[str], bool]:
    """Per call, the model to price under `cache_model`, and whether they are the recorded ones."""
    family = CACHE_MODELS[cache_model][0]
    models = []
    own = True
    for c in session.calls:
        m = canonical_model(c.model) if c.model else ""
        try:
            fam = get_model_spec(m).cache_family
        except ValueError:
            fam = None
        if fam is None or (family is not None and fam != family):
            m, own = DEFAULT_PRICED_MODELS[cache_model], False
        models.append(m)
    return models, own


def _simulate(session: Session, rs: RequestSet, calib: Calibration, cache_model: str, when: dt.date) -> tuple[float, int, int]:
    """(cost USD, cache read tokens, input tokens) of `rs` under `calib`."""
    sim = SessionSimulator(cache_model, when)
    ttl = _TTL.get(calib.tier or "5m", 300.0)
    cost, read, total = 0.0, 0, 0
    for i, call in enumerate(session.calls):
        out = call.usage.output_tokens if call.usage is not None else 0
        req = rs.request(i, calib, out)
        if i == 0 and calib.cold_start_tokens > 0:
            sim.seed(rs.models[0], req, calib.cold_start_tokens, req.ts_start_seconds - 1.0, ttl)
        usage, _ = sim.step(rs.models[i], req, diagnose=False)
        cost += usage.cost_usd
        read += usage.cache_read_tokens
        total += usage.input_tokens
    return cost, read, total


def replay_dcp(
    session: Session,
    configs: list[str],
    cache_models: list[str],
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
) -> DcpReplay:
    """Replay `session` under every DCP configuration x cache model (module docstring).

    Args:
        session: an imported session with at least one call.
        configs: DCP configuration names (`readbench dcp configs`); `off` is always included.
        cache_models: cache model names (`readbench cache models`).
        context_window: tokens, for pi-dcp's pressure bands.

    Raises:
        ValueError: an unknown configuration or cache model.
    """
    out = DcpReplay()
    if not session.calls:
        out.notes.append("no model calls")
        return out
    names = ["off"] + [c for c in configs if c != "off"]
    for c in names:
        get_config(c)
    when = session_date(session)
    projections = {c: _projections(session, c, context_window) for c in names}
    for c, (_, stats) in projections.items():
        out.calls.extend({"file": session.source, "session_id": session.session_id, "config": c, **s} for s in stats)
    builder = RequestBuilder()
    billed_cost = _billed_cost(session)
    calib: Calibration | None = None  # the bill's calibration, fitted once under the recorded provider's rules
    sets: dict[tuple[str, tuple[str, ...]], RequestSet] = {}
    records = {c: call_records(session, None if c == "off" else projections[c][0]) for c in names}
    for cm in cache_models:
        if cm not in CACHE_MODELS:
            raise ValueError(f"unknown cache model {cm!r}; known: {', '.join(CACHE_MODELS)}")
    for cm in sorted(cache_models, key=lambda m: not _priced(session, m)[1]):  # own families first
        models, own = _priced(session, cm)
        family = get_model_spec(models[0]).tokenizer

        def request_set(config: str) -> RequestSet:
            key = (f"{family}:{config}", tuple(models))
            if key not in sets:
                sets[key] = RequestSet(session, family, models, builder=builder, records=records[config])
            return sets[key]

        if calib is None:
            calib = calibrate(session, request_set("off"), cm, when, range(len(session.calls)))
        use = calib if own else Calibration(
            heads=calib.heads, head_cuts=calib.head_cuts, context_extra=calib.context_extra, tier=calib.tier,
            cold_start_tokens=calib.cold_start_tokens, breaks=calib.breaks,
            notes=("what-if: the recorded session is not priced under this cache model's family",))
        base_cost = None
        for c in names:
            stats = projections[c][1]
            cost, read, total = _simulate(session, request_set(c), use, cm, when)
            if c == "off":
                base_cost = cost
            out.rows.append({
                "file": session.source, "session_id": session.session_id, "format": session.format,
                "config": c, "cache_model": cm, "priced_as_recorded": own, "calls": len(session.calls),
                "sim_cost_usd": cost, "cost_delta_usd": cost - (base_cost if base_cost is not None else cost),
                "billed_cost_usd": billed_cost if own else math.nan,
                "cost_delta_vs_billed_usd": (cost - billed_cost) if own and not math.isnan(billed_cost) else math.nan,
                "cache_read_ratio": read / total if total else math.nan, "input_tokens": total,
                "footer_tokens_saved": sum(s["footer_tokens_saved"] for s in stats),
                "pruned_items": sum(s["pruned_items"] for s in stats),
                "prefix_breaks": sum(1 for s in stats if s["prefix_break"] is not None),
            })
    return out


def _billed_cost(session: Session) -> float:
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
