"""Out-of-sample predictions and intervals pooled over a user's sessions (issue 22 item 4).

A session's out-of-sample prediction (`readbench.replay.bill`: calibrated on the first half of its
calls, scored on the second) draws exogenous breaks at the first half's rates; one half of one
session sees few breaks, and its interval from its own first half cannot cover a bill that the
simulator's own error puts elsewhere. Once every session of a run is replayed, `pool_out_of_sample`
redoes both over the run's sessions, never letting a session's second half inform its own figures:

- **Break rates pooled** per (harness, priced model): a session's rate of each call kind is the
  breaks over priced calls of its own first half plus the *first halves* of the other sessions of
  its harness and model (`CALL_KINDS`: a kind no one saw takes its coarser kind's counts). The
  prediction is the simulated cost without breaks plus each kind's pooled rate times what a
  break at its calls would add (`break_cost_by_kind`: the whole cached prefix lost), times the
  share of the cached prefix the first halves' breaks actually lost (`break_loss`, pooled the same
  way: providers often re-read the system part after a break).
- **Interval by leave-one-out (split conformal)**: the relative errors e = billed / predicted - 1
  of the *other* sessions of the pool give the interval predicted x (1 + [e_(lo), e_(hi)]), where
  e_(lo), e_(hi) are the order statistics of split conformal prediction at `level`
  (lo = floor(alpha/2 (m+1)), hi = ceil((1-alpha/2)(m+1)) of m sessions; covers a new session of
  the pool with probability >= `level` when the sessions are exchangeable). Their errors hold the
  simulator's own residual and the break randomness together. The pool is the same harness and
  model when it has at least `MIN_POOL` other sessions, else the same harness, else every session;
  below that the session keeps its own first-half interval (`bill.break_interval`: breaks and the
  first half's per-call residuals) and the pool is `own`.

`pool_out_of_sample` also returns the agreement over the run (coverage, median |predicted - billed| /
billed, totals)
for the report (`pooled_section`) and docs/calibration.md.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from readbench.replay.records import CALL_KINDS, kind_rate

__all__ = ["LEVEL", "MIN_POOL", "pool_out_of_sample", "pooled_section"]

#: Nominal coverage of the pooled interval.
LEVEL = 0.90
#: Other sessions a pool needs: the smallest m whose split-conformal upper order statistic
#: ceil(0.95 (m + 1)) is finite at LEVEL = 0.90.
MIN_POOL = 19


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _eligible(s: dict[str, Any]) -> bool:
    inp = s.get("out_of_sample_inputs") or {}
    return (_finite(s.get("billed_cost_usd_out_of_sample")) and s["billed_cost_usd_out_of_sample"] > 0
            and _finite(inp.get("simulated_cost_usd_no_breaks")) and bool(inp.get("model")))


def _rates(counts: list[dict[str, list[int]]]) -> dict[str, float]:
    total: dict[str, list[int]] = {}
    for c in counts:
        for kind, (k, n) in c.items():
            t = total.setdefault(kind, [0, 0])
            t[0] += int(k)
            t[1] += int(n)
    return {kind: k / n for kind, (k, n) in total.items() if n}


def _loss(group: list[dict[str, Any]]) -> float:
    """The share of the cached prefix a break loses, pooled over the first halves' breaks (1 when
    none was seen)."""
    lost = sum((s["out_of_sample_inputs"].get("break_loss") or [0, 0])[0] for s in group)
    risk = sum((s["out_of_sample_inputs"].get("break_loss") or [0, 0])[1] for s in group)
    return lost / risk if risk > 0 else 1.0


def _predict(s: dict[str, Any], rates: dict[str, float], loss: float = 1.0) -> float:
    inp = s["out_of_sample_inputs"]
    return inp["simulated_cost_usd_no_breaks"] + loss * sum(kind_rate(rates, k) * c for k, c in inp["break_cost_by_kind"].items())


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
    first_half = {id(s): s["out_of_sample_inputs"]["break_counts"] for s in rows}
    by_group: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for s in rows:
        by_group.setdefault(key[id(s)], []).append(s)
    pred: dict[int, float] = {}
    for s in rows:  # own first half + the other sessions' first halves: no second half is used
        group = by_group[key[id(s)]]
        pred[id(s)] = _predict(s, _rates([first_half[id(d)] for d in group]), _loss(group))
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
    return [
        Heading(2, "Out-of-sample agreement over the folder"),
        Paragraph("Each session's second half predicted from its first half, with break rates pooled over the first "
                  "halves of the sessions of its harness and model, and a 90 % interval from the out-of-sample errors of "
                  "the other sessions (leave-one-out; readbench.replay.pooled). No session's second half informs its own "
                  f"prediction or interval. Interval pools: {pools}."),
        Table(("sessions scored", "bill inside the 90 % interval", "median |error|", "billed $ (2nd halves)",
               "predicted $", "total error"),
              ((str(stats["sessions"]), f"{stats['covered']}/{stats['sessions']} ({stats['coverage']:.1%})",
                f"{stats['median_abs_error']:.1%}", f"{stats['billed_usd']:.2f}", f"{stats['predicted_usd']:.2f}",
                f"{stats['total_error']:+.1%}"),)),
    ]
