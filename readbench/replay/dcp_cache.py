"""Recorded sessions replayed under DCP configurations and cache models (issue 14 item 3).

docs/specs/dcp.md §7.5 (the sister's replay method: project the prefix at every call boundary,
carrying the sticky state), sessions.md §5 (the calibration the bill gives). For one session:

1. the session is calibrated on its own bill once and every arm simulated with it, per cache
   model (`readbench.replay.arms.ArmSimulator`, shared with the read-variant replay);
2. every DCP configuration projects each recorded request in call order (`readbench.dcp.project`,
   state threaded, one `ProjectionCache` per configuration; pi-dcp's pressure band from pi's
   context usage, readbench.dcp.pi_context_usage: the previous billed call's prompt and output
   plus chars/4 of what came after its reply);
3. the projected requests are simulated per cache model; `off` is the recorded requests themselves.
Per (configuration, cache model): simulated cost and cache-read ratio, the footer's "tokens
saved" (dcp.md §6), the real cost delta against `off`, the delta against the billed cost, and
prefix breaks (calls whose projection rewrote what an earlier call had sent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant

from readbench.dcp import (
    ContextUsage,
    get_config,
    pi_context_usage,
    prefix_break_index,
    project_calls,
    reported_tokens,
)
from readbench.replay.arms import ArmSimulator
from readbench.replay.billing import billed
from readbench.replay.timing import timed
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


@dataclass
class DcpReplay:
    """One session under DCP configurations x cache models.

    Attributes:
        rows: one dict per (configuration, cache model): the columns of `dcp.parquet`.
        calls: one dict per (configuration, call): prefix break, pruned items, footer tokens saved.
        notes: what could not be compared (unpriced models), in words.
        first_changed: configuration -> index of the first call whose projection differs from the
            recorded request (None: never; readbench.replay.fork_points), filled with `fork_points`.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    first_changed: dict[str, int | None] = field(default_factory=dict)


def _usage(session: Session, requests: list[list[ChatMessage]], i: int, window: int) -> ContextUsage:
    """pi's `getContextUsage` before call i (readbench.dcp.pi_context_usage, dcp.md §3): the
    reported usage is the last billed call j of the same context whose reply is in call i's
    request (an assistant message at position ``calls[j].n_messages``), its prompt + output
    tokens; chars/4 of everything when there is none."""
    request = requests[i]
    for j in range(i - 1, -1, -1):
        call = session.calls[j]
        if call.context != session.calls[i].context:
            continue
        u = billed(call)
        if u is not None and call.n_messages < len(request) and isinstance(request[call.n_messages], ChatMessageAssistant):
            return pi_context_usage(request, window, {call.n_messages: reported_tokens(u.input_tokens, u.output_tokens)})
    return pi_context_usage(request, window, {})


def _recorded(session: Session, window: int) -> tuple[list[list[ChatMessage]], list[ContextUsage]]:
    """The recorded request of every call and pi's usage before it (`_usage`)."""
    requests = [session.request(i) for i in range(len(session.calls))]
    return requests, [_usage(session, requests, i, window) for i in range(len(session.calls))]


def _all_projections(session: Session, configs: list[str], window: int,
                     recorded: tuple[list[list[ChatMessage]], list[ContextUsage]] | None = None,
                     ) -> dict[str, tuple[list[list[ChatMessage]], list[dict[str, Any]]]]:
    """Per configuration, each call's projected request and per-call statistics. `recorded`: the
    recorded requests and pi's usage before each call (`_recorded`), shared between configurations.
    The configurations are projected together, call by call (`readbench.dcp.project_calls`: the
    same results as threading `project` per configuration, with pi-dcp's per-message work shared)."""
    requests, usages = recorded if recorded is not None else _recorded(session, window)
    calls = session.calls
    new_context = [bool(i) and calls[i].context != calls[i - 1].context for i in range(len(calls))]
    out: dict[str, tuple[list[list[ChatMessage]], list[dict[str, Any]]]] = {}
    for c, proj in project_calls(requests, list(configs), list(usages), cwd=session.cwd).items():
        stats: list[dict[str, Any]] = []
        previous: list[ChatMessage] | None = None
        for i, messages in enumerate(proj.messages):
            # a new context (compaction) is not a DCP rewrite: compare within a context only
            brk = prefix_break_index(previous, messages) if previous is not None and not new_context[i] else None
            stats.append({"call": i, "prefix_break": brk, "pruned_items": proj.pruned_items[i],
                          "footer_tokens_saved": proj.footer_tokens_saved[i]})
            previous = messages
        out[c] = (proj.messages, stats)
    return out


def replay_dcp(
    session: Session,
    configs: list[str],
    cache_models: list[str],
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    arms: ArmSimulator | None = None,
    timings: dict[str, float] | None = None,
    fork_points: bool = False,
) -> DcpReplay:
    """Replay `session` under every DCP configuration x cache model (module docstring).

    Args:
        session: an imported session with at least one call.
        configs: DCP configuration names (`readbench dcp configs`); `off` is always included.
        cache_models: cache model names (`readbench cache models`).
        context_window: tokens, for pi-dcp's pressure bands.
        arms: the session's `ArmSimulator` when the caller shares it with other replays (its
            cache models must include `cache_models`); None = a new one.
        timings: stage -> CPU seconds, `dcp_project` and `dcp_simulate` added to (None = not timed).
        fork_points: also find each configuration's first changed call (`DcpReplay.first_changed`).

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
    with timed(timings, "dcp_project"):
        recorded = _recorded(session, context_window)
        projections = _all_projections(session, names, context_window, recorded)
    for c, (_, stats) in projections.items():
        out.calls.extend({"file": session.source, "session_id": session.session_id, "config": c, **s} for s in stats)
    if fork_points:
        from readbench.replay.fork_points import first_changed_call

        out.first_changed = {c: None if c == "off" else first_changed_call(recorded[0], projections[c][0])
                             for c in names}
    with timed(timings, "dcp_simulate"):
        sim = arms if arms is not None else ArmSimulator(session, cache_models)
        results = {c: sim.run(None if c == "off" else projections[c][0]) for c in names}
    billed_cost = sim.billed_cost_usd
    for k, cm in enumerate(sim.cache_models):
        if cm not in cache_models:
            continue
        base = results["off"][k]
        for c in names:
            stats = projections[c][1]
            r = results[c][k]
            own = r.priced_as_recorded
            out.rows.append({
                "file": session.source, "session_id": session.session_id, "format": session.format,
                "config": c, "cache_model": cm, "priced_as_recorded": own, "calls": len(session.calls),
                "sim_cost_usd": r.cost_usd, "cost_delta_usd": r.cost_usd - base.cost_usd,
                "billed_cost_usd": billed_cost if own else math.nan,
                "cost_delta_vs_billed_usd": (r.cost_usd - billed_cost) if own and not math.isnan(billed_cost) else math.nan,
                "cache_read_ratio": r.cache_read_tokens / r.input_tokens if r.input_tokens else math.nan,
                "input_tokens": r.input_tokens,
                "footer_tokens_saved": sum(s["footer_tokens_saved"] for s in stats),
                "pruned_items": sum(s["pruned_items"] for s in stats),
                "prefix_breaks": sum(1 for s in stats if s["prefix_break"] is not None),
            })
    return out
