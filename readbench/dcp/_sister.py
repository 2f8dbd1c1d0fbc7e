"""The sister extension's pipeline for one call (docs/specs/dcp.md §7.1 "Order").

proposals of the registered sister strategies in order (`readbench.dcp._strategy`: dedupe,
error-purge, superseded-file-ops) on the unpruned view -> drop keys already
decided -> `minCharsSaved` floor (results with an image bypass it) -> collapse proposals for the
same target (earlier strategy wins) -> drop targets claimed by sticky decisions -> protection
filter -> token savings (drop <= 0) -> net-benefit gate on the whole batch -> apply sticky
decisions (oldest first) then accepted ones -> new state = old decisions + newly applied.
Sticky decisions bypass floor and gate but still pass the protection check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from inspect_ai.model import ChatMessageTool

from readbench.base.js import js_stringify, utf16_len
from readbench.dcp._gate import accepts, cost_model
from readbench.dcp._params import SisterParams
from readbench.dcp._sister_common import (
    Proposal,
    estimate_content_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
    is_protected,
    pair_index,
    recency_boundary,
)
from readbench.dcp._strategy import family_strategies
from readbench.dcp._types import DcpState, DecisionRecord, GateInfo, finite_or_none
from readbench.dcp._view import PiView, blocks, calls_of, is_error, text_chars
from readbench.dcp.strategies.sister_error_purge import pruned_arguments

__all__ = ["GateCandidate", "SisterOutcome", "run_sister", "agent_state"]


@dataclass(frozen=True)
class GateCandidate:
    """One fresh automatic candidate that reached the gate, measured on its own (the sister's
    benchmark, dcp.md §7.5: "per candidate (individually, not batched): tail from its own position").

    Tokens are the extension's estimates (`ceil(chars/4)`, 1200 per image; §7.1).
    """

    strategy_id: str
    kind: str
    """`tool_result_content` or `tool_call_input`."""
    tool_call_id: str
    index: int
    """Input-list index of the message it changes (the result, or the errored call's assistant message)."""
    tail_tokens: int
    """Estimated tokens of the messages `index..end`, before this call's replacements."""
    removed_tokens: int
    """Estimated tokens the replacement saves."""


@dataclass(frozen=True)
class SisterOutcome:
    """What `run_sister` did."""

    state: DcpState
    pruned: dict[str, int]
    newly_pruned: dict[str, int]
    footer_tokens_saved: int
    gate: GateInfo
    candidates: tuple[GateCandidate, ...] = ()
    """The batch the gate saw, in decision order (also when it rejected it or was off)."""


def agent_state(view: PiView) -> str:
    """`classifyAgentStateFromMessages`: last message is a user prompt -> `idle`, else `mid_loop`."""
    if len(view) == 0:
        return "idle"
    return "idle" if view.role(len(view) - 1) == "user" else "mid_loop"


def _effect(view: PiView, d: Proposal | DecisionRecord, pairs: dict) -> tuple[int, int, int] | None:
    """(position changed, chars saved, tokens saved) of applying `d` to the unpruned view, or
    None when it would not apply (target absent; input purge of a call that did not error)."""
    apos, cidx, rpos = pairs.get(d.tool_call_id, (None, 0, None))
    if rpos is None:
        return None
    result = cast(ChatMessageTool, view.original(rpos))
    if d.kind == "tool_result_content":
        text = d.placeholder if d.placeholder is not None else ""
        chars = max(0, text_chars(result.content) - utf16_len(text))
        tokens = max(0, estimate_content_tokens(result.content) - estimate_text_tokens(text))
        return rpos, chars, tokens
    if apos is None or not is_error(result):
        return None
    before = js_stringify(calls_of(view.original(apos))[cidx].arguments or {})
    after = js_stringify(pruned_arguments(d.reason))
    return apos, max(0, utf16_len(before) - utf16_len(after)), max(0, estimate_text_tokens(before) - estimate_text_tokens(after))


def _apply(view: PiView, d: Proposal | DecisionRecord, pairs: dict) -> int:
    """Apply `d`; returns the pi-dcp-style footer estimate (floor(original chars / 4))."""
    apos, cidx, rpos = pairs[d.tool_call_id]
    if d.kind == "tool_result_content":
        orig = view.original(rpos).content
        view.set_result_text(rpos, d.placeholder or "")
        return text_chars(orig) // 4
    before = js_stringify(calls_of(view.original(apos))[cidx].arguments or {})
    view.set_call_arguments(apos, d.tool_call_id, pruned_arguments(d.reason))
    return utf16_len(before) // 4


def _target(kind: str, call_id: str) -> str:
    return f"{kind}:toolCallId:{call_id}"


def run_sister(view: PiView, params: SisterParams, state: DcpState) -> SisterOutcome:
    """Run the sister pipeline on `view` (copy-on-write) and return the new state and numbers."""
    boundary = recency_boundary(view, params.recent_turns)
    pairs = pair_index(view)
    strategies = family_strategies("sister")
    ids = tuple(s.name for s in strategies)
    proposals: list[Proposal] = []
    for strategy in strategies:
        if strategy.enabled(params):
            proposals += strategy.apply(view, params)

    known = state.keys
    fresh: list[Proposal] = []
    seen: set[str] = set()
    for p in proposals:
        if p.key in known or p.key in seen:
            continue
        seen.add(p.key)
        fresh.append(p)

    if params.min_chars_saved > 0:
        kept = []
        for p in fresh:
            rpos = pairs.get(p.tool_call_id, (None, 0, None))[2]
            has_image = rpos is not None and any(k == "image" for k, _ in blocks(view.original(rpos).content))
            eff = _effect(view, p, pairs)
            if (p.kind == "tool_result_content" and has_image) or (eff is not None and eff[1] >= params.min_chars_saved):
                kept.append(p)
        fresh = kept

    priority = {sid: i for i, sid in enumerate(ids)}
    by_target: dict[str, Proposal] = {}
    for p in fresh:
        cur = by_target.get(p.target)
        if cur is None or priority[p.strategy_id] < priority[cur.strategy_id]:
            by_target[p.target] = p
    claimed = {_target(d.kind, d.tool_call_id) for d in state.decisions}

    candidates: list[tuple[Proposal, int, int]] = []
    for p in by_target.values():
        if p.target in claimed or is_protected(view, p.tool_call_id, params, boundary, pairs):
            continue
        eff = _effect(view, p, pairs)
        if eff is None or eff[2] <= 0:
            continue
        candidates.append((p, eff[0], eff[2]))

    a_state = agent_state(view)
    threshold = params.threshold_idle if a_state == "idle" else params.threshold_mid_loop
    if not candidates:
        gate = GateInfo(params.gate_mode, a_state, threshold, 0, None, 0, 0, 0.0, 0.0, None, False)
        accepted: list[Proposal] = []
    elif params.gate_mode == "off":
        removed = sum(c[2] for c in candidates)
        gate = GateInfo("off", a_state, threshold, len(candidates), None, 0, removed, 0.0, 0.0, None, True)
        accepted = [c[0] for c in candidates]
    else:
        earliest = min(c[1] for c in candidates)
        tail = sum(estimate_message_tokens(view, pos) for pos in range(earliest, len(view)))
        removed = sum(c[2] for c in candidates)
        model = cost_model(tail, removed, params.cached_price_ratio)
        ok = accepts(model, threshold, params.gate_mode)
        gate = GateInfo(
            params.gate_mode, a_state, threshold, len(candidates), view.index[earliest], tail, removed,
            model.penalty_tokens, model.recurring_saving_tokens, finite_or_none(model.break_even_calls), ok,
        )
        accepted = [c[0] for c in candidates] if ok else []

    pruned = {sid: 0 for sid in ids}
    newly = {sid: 0 for sid in ids}
    saved = 0
    applied_targets: set[str] = set()
    new_decisions = list(state.decisions)
    todo: list[DecisionRecord | Proposal] = [*state.decisions, *accepted]
    for d in todo:
        target = _target(d.kind, d.tool_call_id)
        if target in applied_targets or is_protected(view, d.tool_call_id, params, boundary, pairs):
            continue
        if _effect(view, d, pairs) is None:
            continue
        saved += _apply(view, d, pairs)
        applied_targets.add(target)
        pruned[d.strategy_id] = pruned.get(d.strategy_id, 0) + 1
        if isinstance(d, Proposal):
            newly[d.strategy_id] += 1
            new_decisions.append(DecisionRecord(d.key, d.strategy_id, d.kind, d.tool_call_id, d.reason, d.placeholder))
    measured: tuple[GateCandidate, ...] = ()
    if candidates:
        suffix = [0] * (len(view) + 1)
        for pos in range(len(view) - 1, -1, -1):
            suffix[pos] = suffix[pos + 1] + estimate_message_tokens(view, pos)
        measured = tuple(GateCandidate(p.strategy_id, p.kind, p.tool_call_id, view.index[pos], suffix[pos], tokens)
                         for p, pos, tokens in candidates)
    return SisterOutcome(DcpState(tuple(new_decisions)), pruned, newly, saved, gate, measured)
