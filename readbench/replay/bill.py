"""Billed vs simulated, call by call: the check of readbench's cache simulator against what the
provider charged (issue 12, docs/specs/sessions.md §5).

For one session and each cache model, three replays:
- `raw`: the recorded requests as they are (readbench's token counts, no head, no breaks, the
  cache model's default tier): what the simulator says with no help from the bill;
- `in_sample`: calibrated (`readbench.replay.calibrate`) on every call, then replayed;
- `out_of_sample`: calibrated on the first half of the calls only (token fit, head, tier,
  cold start and the breaks the bill shows in that half), then replayed; agreement is measured
  on the second half, which the fit never saw.
Each call gets its billed and simulated cache read, cache write, uncached input and cost, and a
reason for every miss on either side: the simulator's own diagnosis (`readbench.replay.simulate`),
and for a billed miss the recorded content's explanation, or `unexplained` when the content says
the provider should have read (the same facts the calibration turns into exogenous breaks).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from readbench.cache.adapter import RequestBuilder
from readbench.cache.prices import canonical_model, get_model_spec, get_price
from readbench.cache.registry import CACHE_MODELS, cache_model_for, tier_ttl_seconds
from readbench.cache.simulate import billed_usage_cost
from readbench.replay.billing import billed, cached_after, infer_tier
from readbench.replay.calibrate import calibrate, levels
from readbench.replay.pooled import _break_loss, _by_kind, break_interval
from readbench.replay.records import Calibration, kind_rate
from readbench.replay.requests import RequestSets
from readbench.replay.simulate import is_miss, price_date, run
from readbench.sessions import Session
from readbench.sim import is_simulated

__all__ = ["MODES", "SessionReplay", "auto_cache_model", "billed_cost", "break_interval",
           "replay_session", "session_date", "unpriced_note"]

MODES = ("raw", "in_sample", "out_of_sample")
WITHIN = 0.05


@dataclass
class SessionReplay:
    """One session replayed against its bill.

    Attributes:
        session: the imported session.
        calls: one dict per call x cache model x mode (the columns of `calls.parquet`).
        summaries: one dict per cache model x mode (the columns of `sessions.parquet`).
        calibrations: (cache model, mode) -> the Calibration used.
        levels: per priced model, the (context, counted tokens, blocks, billed prompt) rows of
            the billed calls (for a token fit pooled over sessions: calibrate.pooled_fits).
        notes: what could not be done (unpriced models, a family mismatch), in words.
    """

    session: Session
    calls: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    calibrations: dict[tuple[str, str], Calibration] = field(default_factory=dict)
    levels: dict[str, list[tuple[int, int, int, int]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _family_of(model: str) -> str | None:
    try:
        return get_model_spec(model).cache_family
    except ValueError:
        return None


def session_date(session: Session) -> dt.date:
    """The session's date (its first timestamped call), UTC; today's tables when untimed."""
    from readbench.cache.prices import PRICES_AS_OF

    for c in session.calls:
        if c.ts_start_seconds is not None:
            return dt.datetime.fromtimestamp(c.ts_start_seconds, dt.timezone.utc).date()
    return PRICES_AS_OF


def auto_cache_model(session: Session, tier: str | None) -> str | None:
    """The cache model of the session's dominant provider family (`cache_model_for`: the 1h
    Anthropic model when the recorded writes are 1h); None when no call names a known model."""
    counts: dict[str, int] = {}
    for c in session.calls:
        fam = _family_of(c.model)
        if fam:
            counts[fam] = counts.get(fam, 0) + 1
    if not counts:
        return None
    return cache_model_for(max(counts, key=counts.__getitem__), tier)


def unpriced_note(session: Session) -> str:
    """Why `--cache auto` found nothing to simulate: the recorded model ids readbench has no
    cache parameters for, and the files to add them to (their billed tokens are still reported)."""
    ids = sorted({c.model for c in session.calls if c.model})
    if not ids:
        what = "the file records no model id for its calls"
    else:
        what = "no cache parameters or price for " + ", ".join(repr(m) for m in ids)
    return (f"{what}: add the model to readbench/cache/models.csv and readbench/cache/prices.csv (or its spelling "
            "to readbench/cache/aliases.csv); its billed tokens are still reported; --cache NAME replays it "
            "as a what-if under a cache model's default model")


def _priced_models(session: Session, cache_model: str, notes: list[str]) -> tuple[list[str], list[bool]]:
    """Per call: the model the simulation prices, and whether the bill is comparable (the
    recorded model is priced and belongs to the cache model's family)."""
    family = CACHE_MODELS.get(cache_model).family
    default = CACHE_MODELS.get(cache_model).default_priced_model
    models, comparable = [], []
    warned: set[str] = set()
    for c in session.calls:
        m = canonical_model(c.model) if c.model else ""
        fam = _family_of(m)
        ok = fam is not None and (family is None or fam == family)
        if ok:
            try:
                get_price(m, 0, as_of=price_date(m, session_date(session)))
            except ValueError:
                ok = False
        if not ok and c.model not in warned:
            warned.add(c.model)
            # inspect logs record the simulated agent's outputs under its bare name (`sim-mixed`)
            if fam is None and (is_simulated(str(c.model))
                                or (session.harness == "inspect" and is_simulated(f"readbench/{c.model}"))):
                notes.append(f"model {c.model!r} is readbench's simulated agent: it has no provider and no bill; its calls "
                             f"are simulated as {default} (a what-if, not compared with a bill)")
            elif fam is None:
                notes.append(f"model {c.model!r} has no price: add it to readbench/cache/prices.csv and its cache "
                             f"parameters to models.csv; its calls are simulated as {default} and not compared with the bill")
            elif family is None or fam == family:
                n = sum(1 for x in session.calls if x.model == c.model)
                notes.append(f"model {c.model!r} ({m}) has cache parameters but no price on {session_date(session)}: add a "
                             f"row to readbench/cache/prices.csv; its {n} call{'s' if n != 1 else ''} are not compared "
                             "with the bill (their billed tokens are still reported)")
            elif family is not None and fam != family:
                # named, not "a {family} model": no article fits every family name (an openai, a gemini)
                notes.append(f"model {c.model!r} is of the {fam} cache family, not {family}: under {cache_model} its "
                             f"calls are priced as {default} (a what-if, not compared with the bill)")
        models.append(m if ok else default)
        comparable.append(ok and billed(c) is not None)
    return models, comparable


def _only_comparable(session: Session, comparable: list[bool]) -> Session:
    """`session` with the usage of the calls that are not `comparable` hidden (a shallow copy
    sharing the messages); `session` itself when every call is comparable or unpriced anyway."""
    import dataclasses

    if all(ok or c.usage is None for ok, c in zip(comparable, session.calls)):
        return session
    calls = [c if ok or c.usage is None else dataclasses.replace(c, usage=None)
             for ok, c in zip(comparable, session.calls)]
    return dataclasses.replace(session, calls=calls)


def billed_cost(session: Session, i: int, model: str, tier: str | None, when: dt.date) -> float:
    """What call i was billed (USD): `billed_usage_cost` of its recorded usage. NaN without usage.

    Raises:
        ValueError: `model` has no price.
    """
    u = session.calls[i].usage
    return math.nan if u is None else billed_usage_cost(u, model, tier, when)


def replay_session(session: Session, cache: str | list[str] = "auto", builder: RequestBuilder | None = None,
                   sets: RequestSets | None = None) -> SessionReplay:
    """Replay one session against its bill under each cache model (module docstring).

    Args:
        session: an imported session.
        cache: `auto` (the recorded provider's cache model and tier) or cache model names.
        builder: a RequestBuilder shared with the session's other replays (each message is then
            rendered once for all of them); None = a new one.
        sets: the session's RequestSets shared with its other replays (built on `builder`); None =
            new ones. Cache models pricing the same models in the same tokenizer family share a set.

    Returns:
        SessionReplay with per-call rows and per-(cache model, mode) summaries.

    Raises:
        ValueError: an unknown cache model name.
    """
    out = SessionReplay(session)
    if not session.calls:
        out.notes.append("no model calls")
        return out
    when = session_date(session)
    if cache == "auto":
        tier = infer_tier(session, [canonical_model(c.model) for c in session.calls], when)
        chosen = auto_cache_model(session, tier)
        if chosen is None:
            out.notes.append(unpriced_note(session))
            return out
        probe: list[str] = []
        if not any(_priced_models(session, chosen, probe)[1]):
            # every call's model lacks a price (or usage): nothing to compare; never replay it under a stand-in
            out.notes.extend(probe)
            return out
        names = [chosen]
    else:
        names = list(cache)
    for name in names:
        if name not in CACHE_MODELS:
            raise ValueError(f"unknown cache model {name!r}; known: {', '.join(CACHE_MODELS.names())}")
    if sets is None:
        sets = RequestSets(session, builder if builder is not None else RequestBuilder())
    for name in names:
        _replay_one(out, name, when, sets)
    return out


def _replay_one(out: SessionReplay, cache_model: str, when: dt.date, sets: RequestSets) -> None:
    models, comparable = _priced_models(out.session, cache_model, out.notes)
    # calibrate on the comparable calls' bills only: a call priced under a stand-in model keeps its
    # recorded request (the cache state it leaves) but its bill is not fitted as the stand-in's
    session = _only_comparable(out.session, comparable)
    family = get_model_spec(models[0]).tokenizer
    rs = sets.get(family, models, session)
    n = len(session.calls)
    if not out.levels:
        out.levels = levels(session, rs, [i for i in range(n) if comparable[i]])
    half = n // 2
    calibs = {
        "raw": Calibration(notes=("no calibration: recorded content only, readbench's token counts",)),
        "in_sample": calibrate(session, rs, cache_model, when, range(n)),
        "out_of_sample": calibrate(session, rs, cache_model, when, range(half)),
    }
    for mode, calib in calibs.items():
        out.calibrations[(cache_model, mode)] = calib
        tier = calib.tier or CACHE_MODELS.get(cache_model).write_tier or "5m"
        scored = range(half, n) if mode == "out_of_sample" else range(n)
        rows = _rows(session, rs, calib, cache_model, when, mode, models, comparable, tier,
                     unseen=range(half, n) if mode == "out_of_sample" else range(0))
        out.calls.extend(rows)
        residuals = [r["billed_cost_usd"] / r["sim_cost_usd"] - 1 for r in rows
                     if r["call"] < half and r["billed_input_tokens"] is not None and r["sim_cost_usd"]
                     and math.isfinite(r["sim_cost_usd"]) and math.isfinite(r["billed_cost_usd"])]
        summary = _summary(session, rows, scored, cache_model, mode, calib,
                           residuals if mode == "out_of_sample" else None)
        summary["break_loss_tokens"] = _break_loss(rows, half) if mode == "out_of_sample" else [0, 0]
        if mode == "out_of_sample" and not any(comparable[i] for i in range(half)):
            # nothing to fit on: the second half would be predicted from no bill at all
            for k in ("billed_cost_usd", "simulated_cost_usd", "cost_error", "simulated_cost_with_expected_breaks_usd",
                      "cost_error_with_expected_breaks", "calls_read_within_5pct"):
                summary[k] = math.nan
            summary["simulated_cost_interval_usd"] = [math.nan, math.nan]
            summary["notes"] = summary["notes"] + ["out of sample: not scored, the first half of the calls has no priced call to fit on"]
        out.summaries.append(summary)


def _break_usd(model: str, read: int, prompt: int, tier: str, when: dt.date) -> float:
    """The extra cost of an exogenous break at a call: writing instead of reading its `read`
    tokens (USD)."""
    if read == 0:
        return 0.0
    row = get_price(model, prompt, as_of=price_date(model, when))
    write = row.cache_write_1h_usd_per_mtok if tier == "1h" else row.cache_write_5m_usd_per_mtok
    if write is None:  # providers without a write charge bill a miss as uncached input
        write = row.input_usd_per_mtok
    return read * (write - row.cache_read_usd_per_mtok) / 1e6


def _rows(session, rs, calib, cache_model, when, mode, models, comparable, tier, unseen: range) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    breaks = {b.call_index for b in calib.breaks}
    prev_billed: int | None = None
    prev_model: str | None = None
    for i, usage, diag in run(session, rs, calib, cache_model, when, tier_ttl_seconds(tier)):
        call = session.calls[i]
        b = call.usage if comparable[i] else None
        row: dict[str, Any] = {
            "file": session.source, "session_id": session.session_id, "format": session.format, "call": i,
            "cache_model": cache_model, "mode": mode, "model": call.model, "priced_model": models[i],
            "ts_start": rs.times[i][0], "gap_seconds": diag.gap_seconds,
            "sim_input_tokens": usage.input_tokens, "sim_cache_read_tokens": usage.cache_read_tokens,
            "sim_cache_write_tokens": usage.cache_write_tokens, "sim_uncached_input_tokens": usage.uncached_input_tokens,
            "output_tokens": usage.output_tokens, "sim_cost_usd": usage.cost_usd if comparable[i] or call.usage is None else math.nan,
            "sim_expected_read_tokens": diag.expected_read_tokens, "sim_miss": diag.reason is not None,
            "sim_reason": diag.reason or "", "sim_why": diag.why, "sim_changed_message": diag.changed_message,
            "exogenous_break": i in breaks, "call_kind": rs.call_kind(i),
            "break_cost_usd": (_break_usd(models[i], usage.cache_read_tokens, usage.input_tokens, tier, when)
                               if i in unseen and comparable[i] else 0.0),
        }
        row["expected_break_cost_usd"] = kind_rate(calib.break_rates, row["call_kind"]) * row["break_cost_usd"]
        if b is not None:
            expected = prev_billed if prev_model == models[i] and prev_billed is not None else 0
            billed_miss = is_miss(b.cache_read_tokens, expected) or (expected == 0 and b.cache_read_tokens == 0)
            if not billed_miss:
                reason = ""
            elif diag.reason is not None:
                reason = diag.reason
            elif expected == 0:
                reason = "cold_start"
            else:
                reason = "unexplained"
            row.update({
                "billed_input_tokens": b.input_tokens, "billed_cache_read_tokens": b.cache_read_tokens,
                "billed_cache_write_tokens": b.cache_write_tokens, "billed_uncached_input_tokens": b.uncached_input_tokens,
                "billed_output_tokens": b.output_tokens, "billed_cost_usd": billed_cost(session, i, models[i], tier, when),
                "recorded_cost_usd": call.cost_usd, "billed_miss": billed_miss, "billed_reason": reason,
                "read_within_5pct": abs(usage.cache_read_tokens - b.cache_read_tokens) <= WITHIN * b.cache_read_tokens,
            })
            prev_billed, prev_model = cached_after(b, models[i], calib.granularity.get(models[i])), models[i]
        else:
            row.update({"billed_input_tokens": None, "billed_cache_read_tokens": None, "billed_cache_write_tokens": None,
                        "billed_uncached_input_tokens": None, "billed_output_tokens": None, "billed_cost_usd": math.nan,
                        "recorded_cost_usd": call.cost_usd, "billed_miss": None, "billed_reason": "",
                        "read_within_5pct": None})
        rows.append(row)
    return rows


def _dominant(models: list[str]) -> str | None:
    """The most frequent of `models` (first on ties), None when empty."""
    return max(dict.fromkeys(models), key=models.count) if models else None


def _summary(session, rows, scored, cache_model, mode, calib, residuals=None) -> dict[str, Any]:
    sel = [r for r in rows if r["call"] in scored]
    priced = [r for r in sel if r["billed_input_tokens"] is not None]

    def total(key: str, rs: list[dict[str, Any]]) -> float:
        vals = [r[key] for r in rs if r[key] is not None and not (isinstance(r[key], float) and math.isnan(r[key]))]
        return float(sum(vals)) if vals else math.nan

    billed_cost = total("billed_cost_usd", priced)
    sim_cost = total("sim_cost_usd", priced)
    expected = total("expected_break_cost_usd", priced)
    billed_in = total("billed_input_tokens", priced)
    sim_in = total("sim_input_tokens", priced)
    reasons: dict[str, int] = {}
    for r in priced:
        if r["billed_reason"]:
            reasons[r["billed_reason"]] = reasons.get(r["billed_reason"], 0) + 1
    return {
        "file": session.source, "session_id": session.session_id, "format": session.format,
        "harness": session.harness, "cache_model": cache_model, "mode": mode,
        "calls": len(session.calls), "scored_calls": len(sel), "priced_calls": len(priced),
        "billed_cost_usd": billed_cost, "simulated_cost_usd": sim_cost,
        "cost_error": (sim_cost - billed_cost) / billed_cost if billed_cost else math.nan,
        "simulated_cost_with_expected_breaks_usd": sim_cost + (0.0 if math.isnan(expected) else expected),
        "simulated_cost_interval_usd": (list(break_interval(priced, calib, sim_cost, residuals=residuals))
                                        if mode == "out_of_sample" and not math.isnan(sim_cost) else [math.nan, math.nan]),
        "break_counts": {k: list(v) for k, v in calib.break_counts.items()},
        "break_cost_usd_by_kind": _by_kind(priced),
        "priced_model": _dominant([r["priced_model"] for r in priced]),
        "cost_error_with_expected_breaks": ((sim_cost + (0.0 if math.isnan(expected) else expected)) - billed_cost) / billed_cost
        if billed_cost else math.nan,
        "billed_cache_read_ratio": total("billed_cache_read_tokens", priced) / billed_in if billed_in else math.nan,
        "simulated_cache_read_ratio": total("sim_cache_read_tokens", priced) / sim_in if sim_in else math.nan,
        "calls_read_within_5pct": (sum(bool(r["read_within_5pct"]) for r in priced) / len(priced)) if priced else math.nan,
        "billed_misses": sum(bool(r["billed_miss"]) for r in priced),
        "unexplained_misses": reasons.get("unexplained", 0),
        "billed_miss_reasons": reasons,
        "exogenous_breaks": len(calib.breaks), "break_rates": dict(calib.break_rates),
        "head_tokens": dict(calib.heads), "tier": calib.tier,
        "token_fit": {m: [round(f.a, 4), round(f.b, 2), f.n] for m, f in calib.tokens.items()},
        "notes": list(calib.notes),
    }
