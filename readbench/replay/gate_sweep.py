"""`readbench replay --gate-sweep`: the sister extension's gate benchmark on recorded sessions
(the report section is `readbench.replay.gate_report`).

The method of diegopetrucci's `scripts/benchmark.mjs` (docs/specs/dcp.md §7.5), which chose
the shipped break-even threshold T = 22 of the cache-aware gate (§7.4):

- **Call boundaries.** The sister walks one branch and puts a boundary before each assistant
  message. With a `Session` that is: boundary i = `session.request(i)`, the messages model call i
  sent (calls of kind `model` only: a recorded cache pre-warm is not an assistant message).
- **Candidates.** At each boundary the sister pipeline runs on the request with its default
  configuration and `gate_mode="off"` (`readbench.dcp.gate_candidates`), the decisions
  accumulating (sticky) from boundary to boundary, so each candidate is recorded once, at the
  first boundary where it is proposable. The `minCharsSaved` floor (200) applies, as in the
  sister's current benchmark (its 460-candidate run; the 556 run predates the floor).
- **Per candidate** (individually, not batched): `removed` = its estimated token saving, `tail`
  = estimated tokens from the message it changes to the end of the request (before this call's
  replacements), both with the extension's `ceil(chars/4)` estimate; `remaining_calls` = model
  calls at or after the boundary (the sister's `actualRemainingCalls`); agent state = the
  runtime, turn-START label the gate sees at that call (`idle` when the request ends with a user
  prompt, else `mid_loop`; the sister's re-labelled run `pe-zy4s`, not its first turn-END labels).
- **Realized benefit** at cached-price ratio r: `remaining·r·removed − (1−r)·tail`; break-even
  `(1−r)·tail / (r·removed)` calls; the benefit of threshold T is the sum over candidates with
  break-even <= T. T is swept over 1..30, the range doubling while the best T sits at its edge
  (hard cap 500); the best T (first argmax) is reported per r and per state (overall, mid_loop,
  idle). Units: token-units, i.e. full-price input-token equivalents.

**Compactions.** A compaction starts a new context: the requests after it no longer carry the
summarised messages, and candidates in the new context are recorded when first proposable there
(decisions made before it stay in the sticky state and match nothing). The sister's count runs
to the end of the session regardless (`remaining_calls`, basis `session`); readbench also counts
only the calls whose request still carries the changed message (`remaining_calls_context`,
basis `context`: the saving ends at the compaction). Both are swept.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from inspect_ai.model import ChatMessageTool

from readbench.dcp import DcpState, ProjectionCache, gate_candidates, get_config
from readbench.sessions import Session

__all__ = [
    "BASES", "CANDIDATE_COLUMNS", "R_VALUES", "STATES", "SWEEP_COLUMNS", "T_CAP", "T_START",
    "session_candidates", "sweep", "best_thresholds",
]

R_VALUES: tuple[float, ...] = (0.1, 0.25, 0.5, 0.9)
"""Cached-price ratios swept (dcp.md §7.4: Anthropic ~0.1, Gemini ~0.25, OpenAI ~0.5; 0.9 weak caching)."""
T_START, T_CAP = 30, 500
"""First sweep range 1..T_START; doubled while the best T is at its edge, never past T_CAP (§7.5)."""
STATES = ("overall", "mid_loop", "idle")
BASES = {"session": "remaining_calls", "context": "remaining_calls_context"}
"""Sweep basis -> the remaining-calls column it uses (module docstring, "Compactions")."""

#: Columns of gate_candidates.parquet (one row per candidate).
CANDIDATE_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "harness": "string",
    "call": "int64", "message_index": "int64", "strategy": "string", "kind": "string", "tool": "string",
    "tool_call_id": "string", "removed_tokens": "int64", "tail_tokens": "int64", "agent_state": "string",
    "remaining_calls": "int64", "remaining_calls_context": "int64",
}
#: Columns of gate_sweep.parquet (one row per basis x r x state x T).
SWEEP_COLUMNS: dict[str, str] = {
    "basis": "string", "r": "float64", "state": "string", "T": "int64", "candidates": "int64",
    "accepted": "int64", "realized_benefit": "float64", "best": "bool", "swept_to": "int64",
}


def _tool_name(msg: Any, call_id: str) -> str:
    if isinstance(msg, ChatMessageTool):
        return msg.function or ""
    return next((c.function for c in (getattr(msg, "tool_calls", None) or []) if c.id == call_id), "")


class _Carriers:
    """Where each context carries a tool call's result and its call (input-list indices)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._maps: dict[int, tuple[dict[str, int], dict[str, int]]] = {}
        model = [c for c in session.calls if c.kind == "model"]
        self.index = np.array([c.index for c in model], dtype=np.int64)
        self.context = np.array([c.context for c in model], dtype=np.int64)
        self.n = np.array([c.n_messages for c in model], dtype=np.int64)

    def _map(self, ctx: int) -> tuple[dict[str, int], dict[str, int]]:
        if ctx not in self._maps:
            results: dict[str, int] = {}
            calls: dict[str, int] = {}
            for i, m in enumerate(self.session.contexts[ctx]):
                if isinstance(m, ChatMessageTool) and m.tool_call_id is not None:
                    results.setdefault(m.tool_call_id, i)
                for c in getattr(m, "tool_calls", None) or []:
                    calls.setdefault(c.id, i)
            self._maps[ctx] = (results, calls)
        return self._maps[ctx]

    def still_sent(self, call: int, kind: str, call_id: str) -> int:
        """Model calls at or after `call` whose request still holds the message a candidate changes."""
        later = self.index >= call
        total = 0
        for ctx in np.unique(self.context[later]):
            results, calls = self._map(int(ctx))
            at = (results if kind == "tool_result_content" else calls).get(call_id)
            if at is not None:
                total += int(np.count_nonzero(later & (self.context == ctx) & (self.n > at)))
        return total


def session_candidates(session: Session, config: Any = "dcp-gated") -> list[dict[str, Any]]:
    """Every gate candidate of `session`, recorded at the first call where it is proposable.

    `config`: a sister-family DCP configuration (name, dict or `DcpConfig`; default the
    extension's defaults); its gate is switched off and `cwd` set to the session's.
    Returns rows with the `CANDIDATE_COLUMNS` (tokens: the extension's estimates), in call
    order. Raises ValueError for a configuration outside the sister family.
    """
    cfg = get_config(config)
    if cfg.family != "sister":
        raise ValueError(f"the gate sweep needs a sister-family DCP configuration, got {cfg.name!r} ({cfg.family})")
    cfg = dataclasses.replace(cfg, params=dataclasses.replace(cfg.params, gate_mode="off", cwd=session.cwd))  # type: ignore[type-var]  # sister: SisterParams
    cache = ProjectionCache(max_histories=4)
    carriers = _Carriers(session)
    state = DcpState()
    rows: list[dict[str, Any]] = []
    remaining = len(carriers.index)
    for call in session.calls:
        if call.kind != "model":
            continue
        request = session.request(call.index)
        step = gate_candidates(request, cfg, state=state, cache=cache)
        state = step.state
        for c in step.candidates:
            rows.append({
                "file": session.source, "session_id": session.session_id, "format": session.format,
                "harness": session.harness, "call": call.index, "message_index": c.index,
                "strategy": c.strategy_id, "kind": c.kind, "tool": _tool_name(request[c.index], c.tool_call_id),
                "tool_call_id": c.tool_call_id, "removed_tokens": c.removed_tokens, "tail_tokens": c.tail_tokens,
                "agent_state": step.gate.agent_state, "remaining_calls": remaining,
                "remaining_calls_context": carriers.still_sent(call.index, c.kind, c.tool_call_id),
            })
        remaining -= 1
    return rows


def _frame(candidates: pd.DataFrame | list[dict[str, Any]]) -> pd.DataFrame:
    if isinstance(candidates, list):
        candidates = pd.DataFrame(candidates) if candidates else pd.DataFrame(columns=list(CANDIDATE_COLUMNS))
    df = candidates
    needed = ["removed_tokens", "tail_tokens", "agent_state", *BASES.values()]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"gate-sweep candidates lack column(s) {', '.join(missing)}")
    if df[needed].isna().any().any():
        raise ValueError("gate-sweep candidates have empty values in " + ", ".join(c for c in needed if df[c].isna().any()))
    if len(df) and ((df["removed_tokens"] <= 0).any() or (df["tail_tokens"] < df["removed_tokens"]).any()):
        raise ValueError("gate-sweep candidates need removed_tokens > 0 and tail_tokens >= removed_tokens")
    return df


def sweep(
    candidates: pd.DataFrame | list[dict[str, Any]],
    r_values: tuple[float, ...] = R_VALUES,
    *,
    t_start: int = T_START,
    t_cap: int = T_CAP,
) -> pd.DataFrame:
    """Realized benefit of every threshold T, per basis, r and agent state (dcp.md §7.5).

    `candidates`: rows or a frame with `removed_tokens`, `tail_tokens`, `agent_state` and the
    remaining-calls columns of `BASES`. Returns one row per (basis, r, state, T) with the
    `SWEEP_COLUMNS`: `candidates` in the group, `accepted` (break-even <= T),
    `realized_benefit` (token-units), `best` (True on the first argmax within 1..`swept_to`)
    and `swept_to`, that group's final range after doubling. T runs to the largest `swept_to`
    of the (basis, r). Raises ValueError for r outside (0, 1], a bad T range or bad candidates.
    """
    df = _frame(candidates)
    if not 1 <= t_start <= t_cap:
        raise ValueError(f"gate sweep needs 1 <= t_start <= t_cap, got t_start={t_start}, t_cap={t_cap}")
    for r in r_values:
        if not 0 < r <= 1:
            raise ValueError(f"cached-price ratio r must be in (0, 1], got {r!r}")
    tail = df["tail_tokens"].to_numpy(dtype=float)
    removed = df["removed_tokens"].to_numpy(dtype=float)
    labels = df["agent_state"].to_numpy(dtype=object)
    ts = np.arange(1, t_cap + 1)
    out: list[pd.DataFrame] = []
    for basis, column in BASES.items():
        remaining = df[column].to_numpy(dtype=float)
        for r in r_values:
            penalty = (1 - r) * tail  # the order of benchmark.mjs's arithmetic
            break_even = penalty / (r * removed)
            realized = remaining * r * removed - penalty
            groups = []
            for state in STATES:
                mask = np.ones(len(df), bool) if state == "overall" else labels == state
                order = np.argsort(break_even[mask], kind="stable")
                cum = np.concatenate([[0.0], np.cumsum(realized[mask][order])])
                accepted = np.searchsorted(break_even[mask][order], ts, side="right")
                benefit = cum[accepted]
                hi = t_start
                while hi < t_cap and int(np.argmax(benefit[:hi])) == hi - 1:
                    hi = min(2 * hi, t_cap)
                groups.append((state, int(mask.sum()), accepted, benefit, hi, int(np.argmax(benefit[:hi]))))
            top = max(g[4] for g in groups)
            for state, n, accepted, benefit, hi, best in groups:
                out.append(pd.DataFrame({
                    "basis": basis, "r": float(r), "state": state, "T": ts[:top], "candidates": n,
                    "accepted": accepted[:top], "realized_benefit": benefit[:top],
                    "best": np.arange(top) == best, "swept_to": hi,
                }))
    return pd.concat(out, ignore_index=True).astype(SWEEP_COLUMNS)


def best_thresholds(curves: pd.DataFrame) -> pd.DataFrame:
    """The best-T rows of `sweep`'s result: one per (basis, r, state)."""
    return curves[curves["best"]].reset_index(drop=True)

