"""Replay a recorded history through a DCP configuration, one model call at a time.

A call boundary is just before each assistant message (the method of the sister extension's
benchmark, shared/specs/dcp.md §7.5): at each boundary the prefix is projected, the sticky state
is carried to the next call, and the projection is compared with the previous call's projection
to find rewrites of history already sent (metrics.md `dcp_prefix_breaks`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from readbench.base.js import js_stringify, utf16_len
from readbench.dcp import ContextUsage, DcpState, Projection, prefix_break_index, project
from readbench.dcp._view import blocks, calls_of

__all__ = ["ReplayCall", "call_boundaries", "pi_context_usage", "pi_estimate_tokens", "replay_projections"]


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


def pi_estimate_tokens(msg: ChatMessage) -> int:
    """pi's `estimateTokens` (compaction.ts): ceil(chars / 4) where chars are user text,
    assistant text + thinking + tool name + JSON arguments, tool-result text + 4800 per image."""
    chars = 0
    if isinstance(msg, ChatMessageUser):
        chars = sum(utf16_len(t) for k, t in blocks(msg.content) if k == "text")
    elif isinstance(msg, ChatMessageAssistant):
        chars = sum(utf16_len(t) for k, t in blocks(msg.content) if k in ("text", "thinking"))
        chars += sum(utf16_len(c.function) + utf16_len(js_stringify(c.arguments)) for c in calls_of(msg))
    elif isinstance(msg, ChatMessageTool):
        for k, t in blocks(msg.content):
            chars += utf16_len(t) if k == "text" else 4800 if k == "image" else 0
    return math.ceil(chars / 4)


def _pi_usage_tokens(msg: ChatMessage) -> int | None:
    pi: dict[str, Any] = ((msg.metadata or {}).get("pi") or {}).get("message") or {}
    usage = pi.get("usage")
    if not isinstance(usage, dict) or pi.get("stopReason") in ("aborted", "error"):
        return None
    total = usage.get("totalTokens") or sum(usage.get(k, 0) or 0 for k in ("input", "output", "cacheRead", "cacheWrite"))
    return int(total)


def pi_context_usage(messages: list[ChatMessage], context_window: int | None) -> ContextUsage:
    """pi's `getContextUsage` before a call (dcp.md §3): the last non-aborted assistant's
    provider usage (`totalTokens`, else input+output+cacheRead+cacheWrite, read from an imported
    message's `metadata["pi"]`) plus `pi_estimate_tokens` of every later message; with no usage
    at all, the estimate of every message."""
    anchor = None
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], ChatMessageAssistant) and _pi_usage_tokens(messages[i]) is not None:
            anchor = i
            break
    if anchor is None:
        tokens = sum(pi_estimate_tokens(m) for m in messages if m.role != "system")
    else:
        tokens = (_pi_usage_tokens(messages[anchor]) or 0) + sum(
            pi_estimate_tokens(m) for m in messages[anchor + 1 :] if m.role != "system"
        )
    return ContextUsage(tokens, context_window)


def replay_projections(
    messages: list[ChatMessage],
    config: Any,
    *,
    context_window: int | None = None,
    cwd: str | None = None,
) -> list[ReplayCall]:
    """Project the history at every call boundary, threading the sticky state.

    `context_window` (tokens) enables pi-dcp's pressure bands via `pi_context_usage`; None
    leaves the band `unknown`. Raises ValueError for a bad `config` (see `get_config`).
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
