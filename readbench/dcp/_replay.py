"""Replay a recorded history through a DCP configuration, one model call at a time.

A call boundary is just before each assistant message (the method of the sister extension's
benchmark, docs/specs/dcp.md §7.5): at each boundary the prefix is projected, the sticky state
is carried to the next call, and the projection is compared with the previous call's projection
to find rewrites of history already sent (metrics.md `dcp_prefix_breaks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant

from readbench.dcp._project import prefix_break_index, project
from readbench.dcp._types import DcpState, Projection
from readbench.dcp._usage import pi_context_usage

__all__ = ["ReplayCall", "call_boundaries", "replay_projections"]


@dataclass(frozen=True)
class ReplayCall:
    """One replayed model call."""

    boundary: int
    """Number of history messages sent (the call happens before message `boundary`)."""
    projection: Projection
    """The projection of `messages[:boundary]`."""
    prefix_break: int | None
    """First position where this projection rewrites the previous call's, None if append-only."""


def call_boundaries(messages: list[ChatMessage]) -> list[int]:
    """Indices of assistant messages: each is preceded by one model call."""
    return [i for i, m in enumerate(messages) if isinstance(m, ChatMessageAssistant)]


def replay_projections(
    messages: list[ChatMessage],
    config: Any,
    *,
    context_window: int | None = None,
    cwd: str | None = None,
) -> list[ReplayCall]:
    """Project the history at every call boundary, threading the sticky state.

    `context_window` (tokens) enables pi-dcp's pressure bands via `readbench.dcp.pi_context_usage`
    (the usage each imported pi message recorded); None leaves the band `unknown`.

    Raises:
        ValueError: a bad `config` (see `get_config`).
    """
    out: list[ReplayCall] = []
    state = DcpState()
    previous: Projection | None = None
    for b in call_boundaries(messages):
        prefix = messages[:b]
        usage = pi_context_usage(prefix, context_window) if context_window else None
        proj = project(prefix, config, state=state, usage=usage, cwd=cwd)
        brk = prefix_break_index(previous.messages, proj.messages) if previous is not None else None
        out.append(ReplayCall(b, proj, brk))
        state, previous = proj.state, proj
    return out
