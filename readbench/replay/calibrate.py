"""Calibrate the replay of a recorded session from its own bill (issue 12, sessions.md §5).

Everything here is fitted from billed usage over a window of the session's calls, never from a
constant chosen for a file:

(a) `start_tokens`: the unrecorded system prompt and tool schemas = the first priced call's
    billed prompt minus the calibrated tokens of what the file records for it, per model (a
    harness may send each model its own system prompt) and per context (a later context's
    first call may carry more: Claude Code re-attaches files after a compaction);
(b) `fit_tokens`: billed ~ a x counted + b per block, per model: every priced call's billed
    prompt regressed on the tokens readbench counts in its recorded blocks and their number,
    with an intercept (the head); Huber-robust (statsmodels RLM), so the calls that carry
    unrecorded content do not drag it; fewer than `MIN_PAIRS` calls leave the identity;
(c) `infer_breaks`: exogenous prefix changes: a call whose billed cache read falls short of the
    simulated one (the recorded content did not change, so the simulator reads) is a break at
    the billed read's token position; a read inside the head also splits the head there;
(d) `infer_tier` (readbench.replay.billing): the TTL tier from the recorded write split (Claude
    Code, pi >= 0.84) or from the write price the harness's own cost implies (pi legacy records
    cost per token class);
(e) `cold_start_tokens`: the first call's billed cache read (written by an earlier session);
(f) `infer_insertions`: unrecorded content that enters a context mid-way and stays (sessions.md
    §2: Claude Code's reminders and plan-mode instructions, files re-attached after a
    compaction): a lasting rise of the billed prompt over the calibrated one; the token fit is
    then redone without it;
(g) `infer_granularity` (readbench.replay.billing): for providers that floor cache hits (OpenAI
    <= 5.5, DeepSeek, Gemini implicit; caching.md §2.1, §4), the granularity the billed reads show
    (every one a multiple of it), in place of the table's (gpt-5.5's bills read in multiples of
    512, not the 2,048 of caching.md §2.1).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

from readbench.cache.registry import tier_ttl_seconds
from readbench.replay.billing import billed, cached_after, infer_granularity, infer_tier
from readbench.replay.records import CALL_KINDS, Break, Calibration, Insertion, TokenFit
from readbench.replay.requests import RequestSet
from readbench.replay.simulate import MISS_MIN_TOKENS, SimulationPass, is_miss, run_key
from readbench.sessions import Session

__all__ = ["MAX_BREAK_PASSES", "MIN_PAIRS", "break_counts", "break_rates", "calibrate", "content_calibration", "levels",
           "pooled_fits", "fit_tokens", "infer_breaks", "infer_insertions", "insertion_offsets", "insertion_threshold",
           "start_tokens"]

#: Priced calls a model needs before its token fit replaces the identity.
MIN_PAIRS = 8
#: Token-fit slopes outside this range mean the recorded text is not what was billed (e.g. a
#: redacted session): the fit is refused. The widest gap the spec reports between tokenizers on
#: real text is ~1.4x (o200k vs Claude on Russian, caching.md §8.3).
PLAUSIBLE_A = (0.5, 2.0)
#: Passes of `infer_breaks` at most (each is one simulation of the session).
MAX_BREAK_PASSES = 25
#: Token refits at most once insertions are found (until the insertions found stop changing).
MAX_INSERTION_REFITS = 6


def levels(session: Session, rs: RequestSet, window: range | list[int],
           offsets: dict[int, int] | None = None) -> dict[str, list[tuple[int, int, int, int]]]:
    """model -> [(context, counted tokens, blocks, billed prompt)] of the priced calls in `window`;
    `offsets`: call -> billed tokens already explained otherwise (unrecorded insertions),
    subtracted from its billed prompt."""
    out: dict[str, list[tuple[int, int, int, int]]] = {}
    for i in window:
        call = session.calls[i]
        u = billed(call)
        if u is None or call.kind != "model":
            continue
        tokens, blocks = rs.counted_total(i)
        extra = offsets.get(i, 0) if offsets else 0
        out.setdefault(rs.models[i], []).append((call.context, tokens, blocks, u.input_tokens - extra))
    return out


def fit_tokens(
    session: Session, rs: RequestSet, window: range, offsets: dict[int, int] | None = None
) -> tuple[dict[str, TokenFit], dict[int, float], list[str]]:
    """Per-model `TokenFit`s and per-context heads over the calls in `window` (module docstring
    (a), (b)), and notes.

    Every priced call's billed prompt is head(context) + a x (tokens readbench counts in its
    recorded blocks) + b x (its recorded blocks): a Huber-robust regression (statsmodels RLM)
    per model with one intercept per context (what the harness sends unrecorded at the start of
    that context: the system prompt and tools, plus, after a Claude Code compaction, the files
    it re-attaches); the robust weights keep the calls that carry other unrecorded content from
    dragging the slope.

    `offsets` (call -> tokens) are subtracted from the billed prompts first: the unrecorded
    insertions found so far, which would otherwise pass for a steeper slope.

    Returns:
        (model -> TokenFit, context -> head tokens, notes): a model with fewer than `MIN_PAIRS`
        priced calls, or a fit outside `PLAUSIBLE_A`, keeps the identity and gets a note.
    """
    import numpy as np
    import statsmodels.api as sm

    fits: dict[str, TokenFit] = {}
    heads: dict[int, float] = {}
    notes: list[str] = []
    for model, rows in sorted(levels(session, rs, window, offsets).items()):
        if len(rows) < MIN_PAIRS:
            notes.append(f"{model}: {len(rows)} priced calls (< {MIN_PAIRS}): token counts uncalibrated")
            continue
        contexts = sorted({r[0] for r in rows})
        col = {c: k for k, c in enumerate(contexts)}
        x = np.zeros((len(rows), len(contexts) + 2))
        for j, (c, counted, blocks, _) in enumerate(rows):
            x[j, col[c]] = 1.0
            x[j, -2], x[j, -1] = counted, blocks
        y = np.array([r[3] for r in rows], dtype=float)
        try:
            res = sm.RLM(y, x, M=sm.robust.norms.HuberT()).fit()
        except (ValueError, np.linalg.LinAlgError) as exc:
            notes.append(f"{model}: token fit failed ({exc}): uncalibrated")
            continue
        a, b = float(res.params[-2]), float(res.params[-1])
        if not (math.isfinite(a) and math.isfinite(b)) or not PLAUSIBLE_A[0] <= a <= PLAUSIBLE_A[1]:
            notes.append(f"{model}: the recorded text does not explain the billed prompt (fit a={a:.3g}, b={b:.3g} "
                         f"outside {PLAUSIBLE_A}; redacted or missing content?): token counts uncalibrated")
            continue
        fits[model] = TokenFit(a, b, len(rows), "session fit")
        for c in contexts:
            heads.setdefault(c, float(res.params[col[c]]))
        notes.append(f"{model}: billed ~ {a:.4f} x counted + {b:.1f} per block ({len(rows)} calls, "
                     f"{len(contexts)} context{'s' if len(contexts) > 1 else ''})")
    return fits, heads, notes


def pooled_fits(levels: list[tuple[str, str, list[tuple[int, int, int, int]]]]) -> dict[str, tuple[float, float, int, int]]:
    """One token fit per model over many sessions: `levels` holds (session id, model, rows of
    `levels`); each (session, context) gets its own intercept. Returns model -> (a, b, calls,
    sessions) for the models with at least `MIN_PAIRS` calls and a fit inside `PLAUSIBLE_A`."""
    import numpy as np
    import statsmodels.api as sm

    by_model: dict[str, list[tuple[str, tuple[int, int, int, int]]]] = {}
    for sid, model, rows in levels:
        by_model.setdefault(model, []).extend((sid, r) for r in rows)
    out: dict[str, tuple[float, float, int, int]] = {}
    for model, rows in sorted(by_model.items()):
        if len(rows) < MIN_PAIRS:
            continue
        groups = sorted({(sid, r[0]) for sid, r in rows})
        col = {g: k for k, g in enumerate(groups)}
        x = np.zeros((len(rows), len(groups) + 2))
        for j, (sid, (c, counted, blocks, _)) in enumerate(rows):
            x[j, col[(sid, c)]] = 1.0
            x[j, -2], x[j, -1] = counted, blocks
        y = np.array([r[3] for _, r in rows], dtype=float)
        try:
            res = sm.RLM(y, x, M=sm.robust.norms.HuberT()).fit()
        except (ValueError, np.linalg.LinAlgError):
            continue
        a, b = float(res.params[-2]), float(res.params[-1])
        if math.isfinite(a) and math.isfinite(b) and PLAUSIBLE_A[0] <= a <= PLAUSIBLE_A[1]:
            out[model] = (a, b, len(rows), len({sid for sid, _ in rows}))
    return out


def start_tokens(session: Session, rs: RequestSet, fits: dict[str, TokenFit], window: range) -> dict[tuple[str, int], int]:
    """Unrecorded tokens at the start of each (model, context) (module docstring (a)): the billed
    prompt of its first priced call in `window` minus the calibrated tokens of what the file
    records for that call, at least 0."""
    out: dict[tuple[str, int], int] = {}
    for i in window:
        call = session.calls[i]
        u = billed(call)
        key = (rs.models[i], call.context)
        if u is None or key in out:
            continue
        fit = fits.get(rs.models[i], TokenFit())
        recorded = sum(fit.apply(b.tokens) for b in rs.recorded(i))
        out[key] = max(u.input_tokens - recorded, 0)
    return out


def infer_breaks(
    session: Session, rs: RequestSet, calib: Calibration, cache_model: str, when: dt.date, window: range
) -> Calibration:
    """Add the exogenous breaks the bill shows inside `window` (module docstring (c)).

    Simulates the session under `calib`. A priced call in `window` is a break when the bill
    shows a miss (its read falls short of what the previous priced call of the same model left
    cached, by more than the miss tolerance) while the simulator, on the recorded content,
    reads what it expected. The break sits at the billed read's token position (mapped into the
    simulator's token scale by the previous call's prompt ratio; a read inside the head also cuts
    the head there). Repeats (at most `MAX_BREAK_PASSES` passes) until a pass finds nothing new:
    a run of consecutive billed misses needs one pass per miss.

    Only the simulator's diagnosis at a billed miss decides a break, and which calls are billed
    misses the bill alone says (`_billed_misses`). So a pass that has found a break, and is
    therefore not the calibrated replay, diagnoses only the billed misses from then on and stops
    after the last one in `window` (on the synthetic 450-call sessions the first half's first
    pass stops near call 190 instead of 450); only a pass that finds nothing is simulated to the
    end and kept for the replay (`simulate.run`). The outcome is kept per request set
    (`RequestSet.inferred`) for the next calibration of the same requests (the DCP arms calibrate
    under the first cache model as the bill check did).
    """
    ttl = tier_ttl_seconds(calib.tier or "5m")
    key = (run_key(cache_model, when, ttl, calib), window.start, window.stop, window.step) if session is rs.session else None
    hit = rs.inferred.get(key) if key is not None else None
    if hit is not None:
        return calib if hit == (calib.head_cuts, calib.breaks) else replace(calib, head_cuts=hit[0], breaks=hit[1])
    misses = _billed_misses(session, rs, calib, window)
    for _ in range(MAX_BREAK_PASSES):
        known = {b.call_index for b in calib.breaks}
        found, cuts = _break_pass(session, rs, calib, cache_model, when, ttl, {i: c for i, c in misses.items() if i not in known})
        if not found:
            break
        calib = replace(calib, head_cuts=tuple(sorted(cuts)),
                        breaks=tuple(sorted(calib.breaks + tuple(found), key=lambda b: b.call_index)))
    if key is not None:
        rs.inferred[key] = (calib.head_cuts, calib.breaks)
    return calib


def _billed_misses(session: Session, rs: RequestSet, calib: Calibration, window: range) -> dict[int, int]:
    """The priced calls in `window` whose bill shows a miss (`infer_breaks`): the read falls
    short of what the previous priced call of the same model left cached. Call -> that cached
    prefix (billed tokens), in call order."""
    out: dict[int, int] = {}
    prev: dict[str, int] = {}  # model -> billed cached prefix
    for i, call in enumerate(session.calls):
        bill = billed(call)
        if bill is None:
            continue
        model = rs.models[i]
        before = prev.get(model)
        prev[model] = cached_after(bill, model, calib.granularity.get(model))
        if i in window and before is not None and is_miss(bill.cache_read_tokens, before):
            out[i] = before
    return out


def _break_pass(session: Session, rs: RequestSet, calib: Calibration, cache_model: str, when: dt.date, ttl: float,
                misses: dict[int, int]) -> tuple[list[Break], set[int]]:
    """One pass of `infer_breaks` over the billed `misses` not yet known as breaks (call -> the
    billed prefix its model's previous priced call left cached): (the breaks found, the head cuts
    with theirs)."""
    found: list[Break] = []
    cuts = set(calib.head_cuts)
    last = max(misses, default=-1)
    done = rs.runs.get(run_key(cache_model, when, ttl, calib))
    sim = SimulationPass(session, rs, calib, cache_model, when, ttl) if done is None else None
    prev: dict[str, int] = {}  # model -> simulated prompt of its previous priced call
    for i in range(len(session.calls)):
        if found and i > last:
            break  # no break can come after the last billed miss: the pass is not the replay, left here
        if done is not None:
            _, usage, diag = done[i]
        else:
            assert sim is not None
            _, usage, diag = sim.step(diagnose=not found or i in misses)
        bill = billed(session.calls[i])
        if bill is None:
            continue
        model = rs.models[i]
        before = prev.get(model)
        prev[model] = usage.input_tokens
        if i not in misses or diag is None or diag.reason is not None:
            continue  # not a billed miss, or the recorded content explains it
        assert before is not None  # a billed miss has a previous priced call of its model
        read = bill.cache_read_tokens
        cached = misses[i]
        if read <= MISS_MIN_TOKENS:
            pos = 0
        elif read < calib.head(model):
            pos = read
            cuts.add(pos)
        else:
            pos = int(round(read * before / max(cached, 1)))
        found.append(Break(i, pos, read))
    if sim is not None and not found:
        sim.keep()
    return found, cuts


def calibrate(session: Session, rs: RequestSet, cache_model: str, when: dt.date, window: range) -> Calibration:
    """Fit (a)-(e) of the module docstring on the calls in `window`.

    Everything but the exogenous breaks is a function of the requests and the bill, not of the
    cache model (`content_calibration`): it is fitted once per request set and window
    (`RequestSet.fitted`) for every cache model replayed on that set.

    Raises:
        ValueError: an unknown cache model, or a model without a price.
    """
    key = (window.start, window.stop, window.step, when)
    calib = rs.fitted.get(key)
    if calib is None:
        calib = rs.fitted[key] = content_calibration(session, rs, when, window)
    calib = infer_breaks(session, rs, calib, cache_model, when, window)
    n = len(calib.breaks)
    counts = break_counts(session, rs, calib.breaks, window)
    rates = {k: a / b for k, (a, b) in counts.items()}
    note = f"{n} exogenous prefix break{'s' if n != 1 else ''} inferred from the bill"
    if rates:
        note += " (rate per call: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(rates.items())) + ")"
    return replace(calib, break_rates=rates, break_counts=counts, notes=calib.notes + (note,))


def content_calibration(session: Session, rs: RequestSet, when: dt.date, window: range) -> Calibration:
    """(a), (b), (d), (e) and (f) of the module docstring fitted on the calls in `window`: the
    token fit, the unrecorded head and context starts, the TTL tier, the cold start and the
    unrecorded insertions, without exogenous breaks (the part of `calibrate` that no cache model
    enters)."""
    def base(offsets: dict[int, int] | None) -> tuple[Calibration, dict[tuple[str, int], int], list[str]]:
        fits, _fitted_heads, notes = fit_tokens(session, rs, window, offsets)
        starts = start_tokens(session, rs, fits, window)
        heads: dict[str, int] = {}
        for (model, _ctx), tokens in starts.items():  # in call order: a model's first context is its head
            heads.setdefault(model, tokens)
        extra = {k: t - heads[k[0]] for k, t in starts.items() if t - heads[k[0]] > MISS_MIN_TOKENS}
        return Calibration(tokens=fits, heads=heads, context_extra=extra), starts, notes

    calib0, starts, notes = base(None)
    found = infer_insertions(session, rs, calib0, window)
    for _ in range(MAX_INSERTION_REFITS):  # refit without them (they pass for a steeper slope), look again
        if not found:
            break
        calib0, starts, notes = base(insertion_offsets(session, found))
        again = infer_insertions(session, rs, calib0, window)
        settled = [(x.call_index, x.after_messages) for x in again] == [(x.call_index, x.after_messages) for x in found] \
            and all(abs(x.tokens - y.tokens) <= max(16, 0.005 * y.tokens) for x, y in zip(again, found))
        found = again
        if settled:
            break
    fits, heads, extra = calib0.tokens, calib0.heads, calib0.context_extra
    tier = infer_tier(session, rs.models, when)
    first = next((i for i in window if billed(session.calls[i]) is not None), None)
    cold = session.calls[first].usage.cache_read_tokens if first == 0 else 0
    head0 = heads.get(rs.models[0], 0)
    cuts = (cold,) if 0 < cold < head0 else ()
    notes.append("unrecorded head: " + (", ".join(f"{m} {t} tokens" for m, t in heads.items()) or "none")
                 + f"; TTL tier: {tier or 'unknown (5m assumed)'}; cold start: {cold} tokens")
    if extra:
        notes.append("unrecorded tokens at the start of later contexts (e.g. files re-attached after a compaction): "
                     + ", ".join(f"{m} context {c}: {t}" for (m, c), t in sorted(extra.items())))
    unseen = sorted({(rs.models[i], c.context) for i, c in enumerate(session.calls)} - set(starts))
    if unseen:
        notes.append(f"{len(unseen)} (model, context) pairs start outside the fitted calls: their unrecorded start "
                     "is taken as the model's head (or none)")
    granularity = infer_granularity(session, rs.models, window)
    if granularity:
        notes.append("hit granularity from the billed reads: " + ", ".join(f"{m} {g} tokens" for m, g in sorted(granularity.items())))
    if found:
        notes.append(f"{len(found)} unrecorded insertion{'s' if len(found) != 1 else ''} inferred from the bill "
                     f"(content entering a context mid-way and staying: {sum(x.tokens for x in found)} tokens in all; "
                     "first at call " + ", ".join(f"{x.call_index} (+{x.tokens})" for x in found[:5])
                     + (", ..." if len(found) > 5 else "") + ")")
    return Calibration(tokens=fits, heads=heads, head_cuts=cuts, context_extra=extra, tier=tier,
                       cold_start_tokens=cold, insertions=tuple(found), granularity=granularity, notes=tuple(notes))


def infer_insertions(session: Session, rs: RequestSet, calib: Calibration, window: range) -> list[Insertion]:
    """Unrecorded content entering a context mid-way (module docstring (f)).

    Per (model, context), the residual of each priced call in `window` is its billed prompt
    minus its calibrated prompt under `calib` (head, token fit, context starts). A call whose
    residual rises above the previous priced call's by more than `insertion_threshold` of its
    prompt, and stays up at the next priced call of the same context (at least half of the rise
    remains), starts an insertion of that rise, placed after the messages the previous call sent
    - unless the previous call was a one-call dip: a rise must also clear the residual of the call
    before it (real Codex rollouts carry token counts of foreign requests, e.g. 12,546 tokens
    between two ~50k-token prompts, whose recovery is no content entering the context).
    The first call of a context is its start, not an insertion (`start_tokens`); a rise at the
    last priced call of a context cannot be told from noise and is left alone.
    """
    resid: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for i in window:
        u = billed(session.calls[i])
        if u is None or session.calls[i].kind != "model":
            continue
        sim = rs.prompt_tokens(i, calib)
        resid.setdefault((rs.models[i], session.calls[i].context), []).append((i, u.input_tokens - sim))
    found: list[Insertion] = []
    for (_model, ctx), rows in resid.items():
        for k in range(1, len(rows) - 1):
            (prev_i, r0), (i, r1), (_, r2) = rows[k - 1], rows[k], rows[k + 1]
            rise = r1 - r0
            threshold = insertion_threshold(session.calls[i].usage.input_tokens)
            if rise <= threshold or r2 - r0 < rise / 2:
                continue
            if k >= 2 and r1 - rows[k - 2][1] <= threshold:
                continue  # the recovery from a one-call dip (a foreign request's bill), not a rise
            found.append(Insertion(i, ctx, _non_system(session, prev_i), int(rise)))
    return sorted(found, key=lambda x: x.call_index)


def insertion_threshold(prompt_tokens: int) -> int:
    """The smallest rise of the residual taken for an insertion (tokens): 2 % of the prompt, at
    least 1,024 (four times the miss floor: the token fit's per-call noise on the real sessions
    of sessions.md §5 is a few hundred tokens)."""
    return max(4 * MISS_MIN_TOKENS, int(0.02 * prompt_tokens))


def insertion_offsets(session: Session, insertions: list[Insertion]) -> dict[int, int]:
    """call -> billed tokens of the insertions it carries (same context, started at or before it)."""
    out: dict[int, int] = {}
    for i, call in enumerate(session.calls):
        t = sum(x.tokens for x in insertions if x.context == call.context and x.call_index <= i)
        if t:
            out[i] = t
    return out


def _non_system(session: Session, i: int) -> int:
    from inspect_ai.model import ChatMessageSystem

    return sum(1 for m in session.request(i) if not isinstance(m, ChatMessageSystem))


def break_counts(session: Session, rs: RequestSet, breaks: tuple[Break, ...], window: range) -> dict[str, tuple[int, int]]:
    """Per call kind (`RequestSet.call_kind`), (exogenous breaks, priced calls) in `window`, and
    per coarser kind (`CALL_KINDS`: `user_turn` counts every user turn) the same summed; kinds with
    no priced call in the window are absent."""
    at = {b.call_index for b in breaks}
    seen: dict[str, list[bool]] = {}
    for i in window:
        if billed(session.calls[i]) is not None:
            kind: str | None = rs.call_kind(i)
            while kind is not None:
                seen.setdefault(kind, []).append(i in at)
                kind = CALL_KINDS.get(kind)
    return {k: (sum(v), len(v)) for k, v in seen.items() if v}


def break_rates(session: Session, rs: RequestSet, breaks: tuple[Break, ...], window: range) -> dict[str, float]:
    """Per call kind, the share of priced calls in `window` that were exogenous breaks (the
    maximum-likelihood rate of `break_counts`)."""
    return {k: n_break / n for k, (n_break, n) in break_counts(session, rs, breaks, window).items()}
