"""Records shared by the DCP projection: usage input, sticky state, per-call statistics.

See docs/specs/dcp.md (Part A for pi-dcp, Part B for the cache-aware sister extension).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage

__all__ = [
    "ContextUsage",
    "DcpState",
    "DecisionRecord",
    "GateInfo",
    "Projection",
    "ProjectionStats",
]

_DECISION_KINDS = ("tool_result_content", "tool_call_input")


@dataclass(frozen=True)
class ContextUsage:
    """Context usage before this call's pruning, as pi's `ctx.getContextUsage()` reports it.

    docs/specs/dcp.md §3: `usageRatio = tokens / context_window` only when `tokens` is a number
    and `context_window > 0`; otherwise the pressure band is `unknown` (effective `low`).
    """

    tokens: int | None
    """Estimated prompt tokens of the unpruned history (pi: last usage + chars/4 tail); None = unknown."""
    context_window: int | None
    """The model's context window in tokens; None or <= 0 = unknown."""

    @property
    def ratio(self) -> float | None:
        """`tokens / context_window` (a fraction, not a percent), or None when unknown."""
        if self.tokens is None or self.context_window is None or self.context_window <= 0:
            return None
        return self.tokens / self.context_window


@dataclass(frozen=True)
class DecisionRecord:
    """One sticky pruning decision of the sister extension (dcp.md §7.1, `PruneDecisionRecord`).

    Re-applied as-is on every later call (bypassing floor and gate; protection still checked).
    """

    key: str
    """Idempotency key `<strategy_id>:<kind>:<tool_call_id>`."""
    strategy_id: str
    """`dedupe`, `error-purge` or `superseded-file-ops`."""
    kind: str
    """`tool_result_content` (replace a result's content) or `tool_call_input` (replace call arguments)."""
    tool_call_id: str
    """The tool call the decision targets."""
    reason: str
    """Human-readable reason; for `tool_call_input` it is the `reason` stored in the new arguments."""
    placeholder: str | None
    """Replacement text for `tool_result_content`; None for `tool_call_input`."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the field names above."""
        return {
            "key": self.key,
            "strategy_id": self.strategy_id,
            "kind": self.kind,
            "tool_call_id": self.tool_call_id,
            "reason": self.reason,
            "placeholder": self.placeholder,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "DecisionRecord":
        """Inverse of `to_dict`. Raises ValueError naming the bad field."""
        if not isinstance(data, dict):
            raise ValueError(f"decision must be an object, got {type(data).__name__}")
        for name in ("key", "strategy_id", "kind", "tool_call_id", "reason"):
            if not isinstance(data.get(name), str):
                raise ValueError(f"decision field {name!r} must be a string, got {data.get(name)!r}")
        if data["kind"] not in _DECISION_KINDS:
            raise ValueError(f"decision field 'kind' must be one of {_DECISION_KINDS}, got {data['kind']!r}")
        placeholder = data.get("placeholder")
        if placeholder is not None and not isinstance(placeholder, str):
            raise ValueError(f"decision field 'placeholder' must be a string or null, got {placeholder!r}")
        return cls(data["key"], data["strategy_id"], data["kind"], data["tool_call_id"], data["reason"], placeholder)


@dataclass(frozen=True)
class DcpState:
    """Per-sample DCP memory carried between calls (stored in inspect's store as `to_dict()`).

    Only the sister configuration (`dcp-gated`) uses it: its applied decisions, in the order they
    were first applied (the extension's `dynamic-context-pruning:decision` entries, dcp.md §7.1).
    pi-dcp and observation masking are stateless and return the state unchanged.
    """

    decisions: tuple[DecisionRecord, ...] = ()
    """Sticky decisions, oldest first; each key appears once."""

    @property
    def keys(self) -> frozenset[str]:
        """Idempotency keys of all decisions."""
        return frozenset(d.key for d in self.decisions)

    def to_dict(self) -> dict[str, Any]:
        """`{"version": 1, "decisions": [...]}`."""
        return {"version": 1, "decisions": [d.to_dict() for d in self.decisions]}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "DcpState":
        """Inverse of `to_dict`; None gives an empty state. Raises ValueError on malformed input."""
        if data is None:
            return cls()
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError(f"DcpState dict must have version 1, got {data!r:.80}")
        raw = data.get("decisions")
        if not isinstance(raw, list):
            raise ValueError("DcpState field 'decisions' must be a list")
        return cls(tuple(DecisionRecord.from_dict(d) for d in raw))


@dataclass(frozen=True)
class GateInfo:
    """Numbers of the sister's net-benefit gate for one call (dcp.md §7.4, `evaluateNetBenefitGate`)."""

    mode: str
    """`on`, `off` (accept all, no modelling) or `always-apply` (model, never reject)."""
    agent_state: str
    """`idle` (last message is a user prompt) or `mid_loop`."""
    threshold_calls: float
    """Break-even threshold T in future calls for that agent state."""
    candidates: int
    """Fresh automatic candidates that reached the gate."""
    earliest_index: int | None
    """Earliest input-list index any candidate changes (p); None when not modelled."""
    tail_tokens: int
    """Estimated tokens (ceil(chars/4) rule) of messages p..end, before this call's replacements."""
    removed_tokens: int
    """Sum of the candidates' estimated token savings."""
    penalty_tokens: float
    """`(1 - r) * tail_tokens` (full-price-token units)."""
    recurring_saving_tokens: float
    """`r * removed_tokens` per later call."""
    break_even_calls: float | None
    """`penalty / recurring_saving`; None means infinite (penalty > 0, no saving) or not modelled."""
    accepted: bool
    """Whether the whole batch was accepted."""

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-ready dict of the fields above."""
        return {
            "mode": self.mode,
            "agent_state": self.agent_state,
            "threshold_calls": self.threshold_calls,
            "candidates": self.candidates,
            "earliest_index": self.earliest_index,
            "tail_tokens": self.tail_tokens,
            "removed_tokens": self.removed_tokens,
            "penalty_tokens": self.penalty_tokens,
            "recurring_saving_tokens": self.recurring_saving_tokens,
            "break_even_calls": self.break_even_calls,
            "accepted": self.accepted,
        }


def finite_or_none(x: float) -> float | None:
    """`x`, or None when it is infinite (JSON has no Infinity)."""
    return None if math.isinf(x) else x


@dataclass(frozen=True)
class ProjectionStats:
    """What one projection did (recorded per model call by the agent loop; metrics.md "DCP economics")."""

    config: str
    """Configuration name."""
    family: str
    """`off`, `pi-dcp`, `sister` or `obs-mask`."""
    pruned: dict[str, int]
    """Items replaced in this request, per strategy id (a strategy that ran and pruned nothing has 0)."""
    skipped: dict[str, dict[str, int]]
    """pi-dcp skip counters per strategy: `protected`, `recent`, `other` (dcp.md §2)."""
    newly_pruned: dict[str, int]
    """Sister only: decisions applied for the first time in this call, per strategy id."""
    footer_tokens_saved: int
    """pi-dcp footer estimate (dcp.md §6): Σ floor(text chars / 4) of the original content of items
    replaced in this request; the same estimator is used for the other families."""
    footer_text: str | None
    """pi-dcp's status-line text, or None when pi-dcp would clear it (0 saved, not debug)."""
    earliest_changed_index: int | None
    """Smallest input-list index whose message was replaced; None when the output equals the input."""
    changed_indices: tuple[int, ...]
    """All replaced input-list indices, ascending."""
    band: str | None
    """pi-dcp pressure band (`unknown`, `low`, `medium`, `high`, `critical`), None for other families."""
    effective_band: str | None
    """Band used for strategy gating (`unknown` counts as `low`)."""
    usage_ratio: float | None
    """tokens / context window as a fraction, when known."""
    gate: GateInfo | None
    """Sister gate numbers, None for other families."""

    @property
    def pruned_items(self) -> int:
        """Total items replaced in this request."""
        return sum(self.pruned.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (nested dicts copied)."""
        return {
            "config": self.config,
            "family": self.family,
            "pruned": dict(self.pruned),
            "pruned_items": self.pruned_items,
            "skipped": {k: dict(v) for k, v in self.skipped.items()},
            "newly_pruned": dict(self.newly_pruned),
            "footer_tokens_saved": self.footer_tokens_saved,
            "footer_text": self.footer_text,
            "earliest_changed_index": self.earliest_changed_index,
            "changed_indices": list(self.changed_indices),
            "band": self.band,
            "effective_band": self.effective_band,
            "usage_ratio": self.usage_ratio,
            "gate": self.gate.to_dict() if self.gate else None,
        }


@dataclass(frozen=True)
class Projection:
    """Result of `project`: the list to send, its statistics and the state for the next call."""

    messages: list[ChatMessage]
    """Same length and order as the input; unchanged messages are the input objects themselves."""
    stats: ProjectionStats
    """What was pruned and why."""
    state: DcpState = field(default_factory=DcpState)
    """State to store for the next call (the input state plus decisions applied now)."""
