"""Out-of-sample predictions and intervals pooled over a user's sessions (issue 22 item 4).

A session's out-of-sample prediction (`readbench.replay.bill`: calibrated on the first half of its
calls, scored on the second) draws exogenous breaks at the first half's rates; one half of one
session sees few breaks, and its interval from its own first half cannot cover a bill that the
simulator's own error puts elsewhere. Once every session of a run is replayed, `pool_out_of_sample`
redoes both over the run's sessions, never letting a session's second half inform its own figures:

- **Break rates pooled** per (harness, priced model): a session's rate of each call kind is the
  breaks over priced calls of its own first half plus the *first halves* of the other sessions of
  its harness and model (`CALL_KINDS`: a kind no one saw takes its coarser kind's counts). A fine
  kind (a notification turn, a resume: a user turn of a particular cause) is seen in a few calls
  per pool; its rate is the posterior mean around its coarser kind's rate, with the strength of
  that tie fitted by maximum likelihood over the harness's pools (`fine_kind_strength`, an
  empirical-Bayes beta-binomial): on the real sessions of docs/calibration.md §5 the fit finds no
  Claude Code fine kind breaking at a rate of its own, where one notification of three breaking in
  one pool had put a third of the largest sessions' expected break cost on 13 calls that never broke. The
  prediction is the simulated cost without breaks plus each kind's pooled rate times what a
  break at its calls would add (`break_cost_usd_by_kind`: the whole cached prefix lost), times the
  share of the cached prefix the first halves' breaks actually lost (`break_loss_tokens`, pooled the same
  way: providers often re-read the system part after a break).
- **Interval by leave-one-out (split conformal)**: the relative errors e = billed / predicted - 1
  of the *other* sessions of the pool give the interval predicted x (1 + [e_(lo), e_(hi)]), where
  e_(lo), e_(hi) are the order statistics of split conformal prediction at `level`
  (lo = floor(alpha/2 (m+1)), hi = ceil((1-alpha/2)(m+1)) of m sessions; covers a new session of
  the pool with probability >= `level` when the sessions are exchangeable). Their errors hold the
  simulator's own residual and the break randomness together. The pool is the same harness and
  model when it has at least `MIN_POOL` other sessions, else the same harness, else every session;
  below that the session keeps its own first-half interval (`bill.break_interval`: breaks and the
  spread of the first half's per-call residuals around the prediction) and the pool is `own`.
  With signed errors the pooled interval also carries the other sessions' mean error (split
  conformal's usual score); the first half's own mean error is not carried (`break_interval`).

The per-session pieces live here too: `break_interval` (a session's own first-half interval,
computed in the worker), `_break_loss` and `_by_kind` (what a session hands to the pooling).

`pool_out_of_sample` also returns the agreement over the run (coverage, median |predicted - billed| /
billed, totals)
for the report (`pooled_section`) and docs/calibration.md.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from readbench.replay.records import CALL_KINDS, Calibration, kind_rate

__all__ = ["INTERVAL_DRAWS", "KAPPA_BOUNDS", "LEVEL", "MIN_POOL", "fine_kind_strength", "break_interval", "pool_out_of_sample", "pooled_section"]

#: Nominal coverage of the pooled interval.
LEVEL = 0.90
#: Bounds of the fitted strength (prior pseudo-calls) tying a fine call kind's break rate to its
#: coarser kind's (`fine_kind_strength`): numerical bounds of the search, not a prior; at the upper
#: one the fine kind's rate is its coarser kind's to within n / 1e7.
KAPPA_BOUNDS = (0.1, 1e7)
#: Other sessions a pool needs: the smallest m whose split-conformal upper order statistic
#: ceil(0.95 (m + 1)) is finite at LEVEL = 0.90.
MIN_POOL = 19


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _eligible(s: dict[str, Any]) -> bool:
    inp = s.get("out_of_sample_inputs") or {}
    return (_finite(s.get("billed_cost_usd_out_of_sample")) and s["billed_cost_usd_out_of_sample"] > 0
            and _finite(inp.get("simulated_cost_usd_no_breaks")) and bool(inp.get("model")))


def _counts(counts: list[dict[str, list[int]]]) -> dict[str, tuple[int, int]]:
    total: dict[str, list[int]] = {}
    for c in counts:
        for kind, (k, n) in c.items():
            t = total.setdefault(kind, [0, 0])
            t[0] += int(k)
            t[1] += int(n)
    return {kind: (k, n) for kind, (k, n) in total.items()}


def _rates(counts: list[dict[str, list[int]]]) -> dict[str, float]:
    return {kind: k / n for kind, (k, n) in _counts(counts).items() if n}


def fine_kind_strength(cells: list[tuple[int, int, float]]) -> float:
    """How strongly a fine call kind's break rate follows its coarser kind's (`CALL_KINDS`), fitted
    from the data: `cells` are (breaks, priced calls, the coarser kind's rate) of the fine kind in
    each pool of one harness (first halves only); the breaks of a cell are taken as beta-binomial
    with mean the coarser rate and strength kappa (prior pseudo-calls); returns the maximum-
    likelihood kappa within [`KAPPA_BOUNDS`] (the upper bound: no evidence that the fine kind
    breaks at a rate of its own). A fine kind seen in a few calls then gets the posterior mean
    (k + kappa p) / (n + kappa) instead of its maximum-likelihood k / n (one notification turn of
    three broke in one pool's first halves: rate 1/3 where the pool's user turns broke at 2.6 %)."""
    from scipy import optimize, stats

    cells = [(k, n, min(max(p, 1e-9), 1 - 1e-9)) for k, n, p in cells if n > 0]
    if not cells:
        return KAPPA_BOUNDS[1]

    def nll(log_kappa: float) -> float:
        kappa = math.exp(log_kappa)
        return -sum(float(stats.betabinom.logpmf(k, n, p * kappa, (1 - p) * kappa)) for k, n, p in cells)

    lo, hi = (math.log(b) for b in KAPPA_BOUNDS)
    best = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    log_kappa = float(best.x)
    if nll(hi) <= float(best.fun) + 1e-9:  # a flat likelihood toward the bound: the fine kind follows its coarser kind
        log_kappa = hi
    return math.exp(log_kappa)


def _pool_rates(groups: dict[tuple[Any, Any], list[dict[str, Any]]]) -> dict[tuple[Any, Any], dict[str, float]]:
    """(harness, model) -> call kind -> break rate over the pool's first halves; a fine kind's rate
    is shrunk toward its coarser kind's by `fine_kind_strength`, fitted per harness and fine kind
    over that harness's pools."""
    counts = {g: _counts([s["out_of_sample_inputs"]["break_counts"] for s in ss]) for g, ss in groups.items()}
    rates = {g: {kind: k / n for kind, (k, n) in c.items() if n} for g, c in counts.items()}
    cells: dict[tuple[Any, str], list[tuple[tuple[Any, Any], int, int, float]]] = {}
    for g, c in counts.items():
        for kind, (k, n) in c.items():
            parent = CALL_KINDS.get(kind)
            if parent is not None and n and parent in rates[g]:
                cells.setdefault((g[0], kind), []).append((g, k, n, rates[g][parent]))
    for (_harness, kind), rows in cells.items():
        kappa = fine_kind_strength([(k, n, p) for _, k, n, p in rows])
        for g, k, n, p in rows:
            rates[g][kind] = (k + kappa * p) / (n + kappa)
    return rates


def _loss(group: list[dict[str, Any]]) -> float:
    """The share of the cached prefix a break loses, pooled over the first halves' breaks (1 when
    none was seen)."""
    lost = sum((s["out_of_sample_inputs"].get("break_loss_tokens") or [0, 0])[0] for s in group)
    risk = sum((s["out_of_sample_inputs"].get("break_loss_tokens") or [0, 0])[1] for s in group)
    return lost / risk if risk > 0 else 1.0


def _predict(s: dict[str, Any], rates: dict[str, float], loss: float = 1.0) -> float:
    inp = s["out_of_sample_inputs"]
    return inp["simulated_cost_usd_no_breaks"] + loss * sum(kind_rate(rates, k) * c for k, c in inp["break_cost_usd_by_kind"].items())


def _conformal(errors: list[float], level: float) -> tuple[float, float]:
    m = len(errors)
    e = sorted(errors)
    alpha = 1 - level
    lo_i = math.floor(alpha / 2 * (m + 1) + 1e-9)  # 1e-9: 0.05 x 20 is 0.999... in floating point
    hi_i = math.ceil((1 - alpha / 2) * (m + 1) - 1e-9)
    lo = e[lo_i - 1] if lo_i >= 1 else -1.0
    hi = e[hi_i - 1] if hi_i <= m else math.inf
    return lo, hi


def pool_out_of_sample(sessions: list[dict[str, Any]], level: float = LEVEL, min_pool: int = MIN_POOL) -> dict[str, Any]:
    """Pool the out-of-sample predictions of `sessions` (module docstring), in place.

    Args:
        sessions: per-session JSON objects (`readbench.replay.report.session_json`); each one
            with a scored second half gets `simulated_cost_usd_out_of_sample_pooled` (USD),
            `simulated_cost_usd_out_of_sample_pooled_interval` ([low, high] USD) and
            `out_of_sample_pool` (`{"pool": "harness+model" | "harness" | "all" | "own",
            "sessions": m}`).
        level: nominal coverage of the interval.
        min_pool: other sessions a pool needs.

    Returns:
        `{"sessions", "covered", "coverage", "median_abs_error", "billed_usd", "predicted_usd",
        "total_error", "pools"}` over the sessions with a scored second half (NaN figures when
        there are none); `pools` counts sessions by the pool their interval came from.
    """
    rows = [s for s in sessions if _eligible(s)]
    key = {id(s): (s.get("harness"), s["out_of_sample_inputs"]["model"]) for s in rows}
    by_group: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for s in rows:
        by_group.setdefault(key[id(s)], []).append(s)
    pred: dict[int, float] = {}
    pool_rates = _pool_rates(by_group)
    for s in rows:  # own first half + the other sessions' first halves: no second half is used
        group = by_group[key[id(s)]]
        pred[id(s)] = _predict(s, pool_rates[key[id(s)]], _loss(group))
    err = {id(s): s["billed_cost_usd_out_of_sample"] / pred[id(s)] - 1 if pred[id(s)] > 0 else math.nan for s in rows}
    pools: dict[str, int] = {}
    covered = 0
    for s in rows:
        p = pred[id(s)]
        label, others = "own", []
        for name, match in (("harness+model", lambda d: key[id(d)] == key[id(s)]),
                            ("harness", lambda d: d.get("harness") == s.get("harness")), ("all", lambda d: True)):
            cand = [err[id(d)] for d in rows if d is not s and match(d) and math.isfinite(err[id(d)])]
            if len(cand) >= min_pool:
                label, others = name, cand
                break
        if others:
            lo, hi = _conformal(others, level)
            interval = [p * (1 + lo), p * (1 + hi)]
        else:
            own = s.get("simulated_cost_usd_out_of_sample_interval") or [math.nan, math.nan]
            interval = [float(x) if _finite(x) else math.nan for x in own]
        b = s["billed_cost_usd_out_of_sample"]
        covered += bool(not any(math.isnan(x) for x in interval) and interval[0] <= b <= interval[1])
        s["simulated_cost_usd_out_of_sample_pooled"] = p
        s["simulated_cost_usd_out_of_sample_pooled_interval"] = [x if _finite(x) else None for x in interval]
        s["out_of_sample_pool"] = {"pool": label, "sessions": len(others)}
        pools[label] = pools.get(label, 0) + 1
    billed = sum(s["billed_cost_usd_out_of_sample"] for s in rows)
    predicted = sum(pred.values())
    # |simulated - billed| / billed, as cost_error elsewhere (the interval works on billed / predicted)
    errors = [abs(pred[id(s)] / s["billed_cost_usd_out_of_sample"] - 1) for s in rows]
    return {"sessions": len(rows), "covered": covered, "coverage": covered / len(rows) if rows else math.nan,
            "median_abs_error": statistics.median(errors) if errors else math.nan,
            "billed_usd": billed, "predicted_usd": predicted,
            "total_error": predicted / billed - 1 if billed else math.nan, "pools": pools, "level": level}


def pooled_section(w: Any) -> list[Any]:
    """The report's "Out-of-sample agreement over the folder" section (coverage of the pooled 90 %
    interval, median |error|, totals), from the writer's per-session objects."""
    from readbench.analysis._document import Heading, Paragraph, Table

    stats = getattr(w, "pooled", None) or pool_out_of_sample(w.sessions)
    if not stats["sessions"]:
        return []
    pools = ", ".join(f"{k}: {v}" for k, v in sorted(stats["pools"].items()))
    own = stats["pools"].get("own", 0)
    first_half = "the session's own first half: its break rates and the spread of its per-call errors around the prediction"
    where = "the out-of-sample errors of the other sessions (leave-one-out)"
    if own == stats["sessions"]:
        where = f"{first_half} (fewer than {MIN_POOL} other sessions to pool)"
    elif own:
        where += f" where {MIN_POOL} or more others exist, else ({own} of {stats['sessions']}) from {first_half}"
    return [
        Heading(2, "Out-of-sample agreement over the folder"),
        Paragraph("Each session's second half predicted from its first half, with break rates pooled over the first "
                  f"halves of the sessions of its harness and model, and a 90 % interval (readbench.replay.pooled) from "
                  f"{where}. No session's second half informs its own "
                  f"prediction or interval. Interval pools: {pools}."),
        Table(("sessions scored", "bill inside the 90 % interval", "median |error|", "billed $ (2nd halves)",
               "predicted $", "total error"),
              ((str(stats["sessions"]), f"{stats['covered']}/{stats['sessions']} ({stats['coverage']:.1%})",
                f"{stats['median_abs_error']:.1%}", f"{stats['billed_usd']:.2f}", f"{stats['predicted_usd']:.2f}",
                f"{stats['total_error']:+.1%}"),)),
    ]


#: Draws of `break_interval`'s Monte Carlo (fixed seed: the same interval on every run).
INTERVAL_DRAWS = 4000


def break_interval(rows: list[dict[str, Any]], calib: Calibration, base_cost: float,
                   level: float = 0.90, residuals: list[float] | None = None) -> tuple[float, float]:
    """The central `level` interval of a second half's cost (USD) from the session's own first
    half: its exogenous breaks as random as the first half's, and the simulator's per-call error
    as large as on the first half.

    Breaks: each kind's rate drawn from its Beta(k + 1/2, n - k + 1/2) posterior (Jeffreys prior
    over the first half's k breaks in n priced calls; a kind the first half never saw takes its
    coarser kind's counts, `CALL_KINDS`), then each unseen priced call breaks with its kind's rate,
    adding its `break_cost_usd`. Residuals: `residuals` are the first half's per-call relative
    errors (billed / simulated - 1, simulated under the first half's own calibration), centred on
    their mean; each draw resamples one per unseen priced call and adds it times the call's
    `sim_cost_usd` (a bootstrap of the per-call residual's spread). `base_cost`: the simulated cost
    without breaks. NaN bounds when no call can break and there is no residual to draw.

    Centred, because the interval is around the simulator's own prediction, which does not carry
    the first half's mean error: uncentred, a first half the simulator over-priced by 27 % (a token
    fit that failed on redacted content) moved the interval down by as much while the prediction
    stayed, and the report counted a bill 36.6 % off its prediction as inside the interval (a
    tester's synthetic Claude Code session, 2026-12-07). Its coverage now scores the prediction.

    `readbench.replay.pooled` replaces this interval by one pooled over the user's other sessions
    when there are enough of them."""
    with _one_blas_thread():
        return _break_interval(rows, calib, base_cost, level, residuals)


def _one_blas_thread() -> Any:
    """A context in which BLAS runs on the calling thread only (threadpoolctl).

    `break_interval`'s products (4,000 draws x a half session's calls) are large enough for
    OpenBLAS to hand part of each to other threads, which then spin waiting for more work: on the
    2-core machine of issue 26 that spin cost ~30 ms CPU per call, about twice the interval's own
    arithmetic and ~12 % of the bill check's CPU, and it competed with the other replay process.
    OpenBLAS splits the 4,000 output rows between its threads, 2,000 each on two cores, and each
    row is then summed as one thread sums it: the same interval to the bit there (checked for
    every product width up to 699); on a machine whose thread count splits 4,000 unevenly the
    last bit could differ, which one thread everywhere also rules out."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()  # finds the loaded BLAS once (numpy is loaded by now)
    return _CONTROLLER.limit(limits=1, user_api="blas")


_CONTROLLER: Any = None


def _break_interval(rows: list[dict[str, Any]], calib: Calibration, base_cost: float, level: float,
                    residuals: list[float] | None) -> tuple[float, float]:
    """`break_interval` on the calling thread (`_one_blas_thread`)."""
    import numpy as np

    calls = [(r["call_kind"], r["break_cost_usd"]) for r in rows if r.get("break_cost_usd")]
    res = np.array([e for e in residuals or () if math.isfinite(e)], dtype=float)
    sims = np.array([r["sim_cost_usd"] for r in rows if r.get("sim_cost_usd") is not None
                     and math.isfinite(r["sim_cost_usd"])], dtype=float)
    if not calls and not (len(res) and len(sims)):
        return math.nan, math.nan
    rng = np.random.default_rng(0)
    kinds = sorted({k for k, _ in calls})
    total = np.full(INTERVAL_DRAWS, base_cost)
    for kind in kinds:
        seen = kind
        while seen is not None and seen not in calib.break_counts:
            seen = CALL_KINDS.get(seen)  # a kind the fit never saw: its coarser kind's counts
        k, n = calib.break_counts.get(seen, (0, 0)) if seen is not None else (0, 0)
        p = rng.beta(k + 0.5, n - k + 0.5, INTERVAL_DRAWS)
        costs = np.array([c for kk, c in calls if kk == kind])
        hits = rng.random((INTERVAL_DRAWS, len(costs))) < p[:, None]
        total = total + hits @ costs
    if len(res) and len(sims):
        res = res - res.mean()  # the spread of the simulator's error, not its first-half bias (docstring)
        draws = res[rng.integers(0, len(res), (INTERVAL_DRAWS, len(sims)))]
        total = total + draws @ sims
    lo, hi = np.quantile(total, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _break_loss(rows: list[dict[str, Any]], half: int) -> list[int]:
    """[tokens lost, tokens at risk] over the exogenous breaks of the first `half` calls: at each,
    what the previous priced call of the same model left cached (billed read + write) and how much
    of it the bill did not read. A break often loses part of the prefix only (a provider re-reads
    the system part); `readbench.replay.pooled` scales the expected break cost by the pooled ratio."""
    lost = risk = 0
    prev: dict[str, int] = {}
    for r in rows:
        if r["billed_input_tokens"] is None:
            continue
        m = r["priced_model"]
        if r["call"] < half and r["exogenous_break"] and m in prev:
            risk += prev[m]
            lost += max(prev[m] - r["billed_cache_read_tokens"], 0)
        prev[m] = r["billed_cache_read_tokens"] + r["billed_cache_write_tokens"]
    return [lost, risk]


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Call kind -> the summed `break_cost_usd` of `rows` (what a break at each would add, USD)."""
    out: dict[str, float] = {}
    for r in rows:
        if r.get("break_cost_usd"):
            out[r["call_kind"]] = out.get(r["call_kind"], 0.0) + r["break_cost_usd"]
    return out
