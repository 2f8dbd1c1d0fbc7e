"""pi's context usage before a model call (`getContextUsage`): the pressure DCP's bands read.

docs/specs/dcp.md §3, pi-mono `compaction.ts` (`estimateContextTokens`, `calculateContextTokens`,
`estimateTokens`) and `AgentSession.getContextUsage`: the context tokens the provider reported
for the last assistant message that has a usage (prompt + output: pi's `totalTokens`, else
`input + output + cacheRead + cacheWrite`), plus the chars/4 estimate of every message after it;
with no reported usage at all, the estimate of every message. The system prompt is not one of
pi's messages and is never counted.

One copy for every path that projects a history: the live agent loop (readbench.agent.loop,
usage from each call's `ModelOutput`), the DCP replay of a recorded session
(readbench.replay.dcp_cache, usage from the bill), and `readbench dcp replay` on a pi session
file (usage recorded in each imported message's ``metadata["pi"]``). The same history with the
same reported usage gives the same number, so the same pressure band, on every path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from readbench.base.js import js_stringify, utf16_len
from readbench.dcp._types import ContextUsage
from readbench.dcp._view import blocks, calls_of

__all__ = ["IMAGE_CHARS", "pi_context_usage", "pi_estimate_tokens", "pi_recorded_tokens", "reported_tokens"]

IMAGE_CHARS = 4800
"""pi's estimate of an image in a tool result: 4,800 characters (1,200 tokens)."""


def pi_estimate_tokens(msg: ChatMessage) -> int:
    """pi's `estimateTokens` (compaction.ts): ceil(chars / 4) where chars are user text,
    assistant text + thinking + tool name + JSON arguments, tool-result text + `IMAGE_CHARS` per
    image; characters are UTF-16 code units (JS `String.length`). Tokens; 0 for a system message."""
    chars = 0
    if isinstance(msg, ChatMessageUser):
        chars = sum(utf16_len(t) for k, t in blocks(msg.content) if k == "text")
    elif isinstance(msg, ChatMessageAssistant):
        chars = sum(utf16_len(t) for k, t in blocks(msg.content) if k in ("text", "thinking"))
        chars += sum(utf16_len(c.function) + utf16_len(js_stringify(c.arguments)) for c in calls_of(msg))
    elif isinstance(msg, ChatMessageTool):
        for k, t in blocks(msg.content):
            chars += utf16_len(t) if k == "text" else IMAGE_CHARS if k == "image" else 0
    return math.ceil(chars / 4)


def reported_tokens(prompt_tokens: int | None, output_tokens: int | None) -> int | None:
    """pi's context tokens of one call from what the provider reported (`calculateContextTokens`):
    the whole prompt (uncached + cache read + cache write) plus the output, in tokens; None when
    nothing was reported or the prompt is 0 tokens (a request aborted before the provider
    answered: pi skips aborted and errored messages, and records zeros for them)."""
    if prompt_tokens is None or prompt_tokens <= 0:
        return None
    return prompt_tokens + (output_tokens or 0)


def pi_recorded_tokens(msg: ChatMessage) -> int | None:
    """The context tokens an imported pi assistant message recorded (``metadata["pi"]["message"]
    ["usage"]``: `totalTokens`, else input + output + cacheRead + cacheWrite); None for an
    aborted or errored message or one without usage."""
    pi: dict[str, Any] = ((msg.metadata or {}).get("pi") or {}).get("message") or {}
    usage = pi.get("usage")
    if not isinstance(usage, dict) or pi.get("stopReason") in ("aborted", "error"):
        return None
    total = usage.get("totalTokens") or sum(usage.get(k, 0) or 0 for k in ("input", "output", "cacheRead", "cacheWrite"))
    return int(total)


def pi_context_usage(messages: list[ChatMessage], context_window: int | None,
                     reported: Mapping[int, int | None] | None = None) -> ContextUsage:
    """pi's `getContextUsage` before a call on `messages` (module docstring).

    Args:
        messages: the history the call is made on (unprojected; a system message is skipped).
        context_window: the model's context window in tokens (None: unknown, no band).
        reported: context tokens the provider reported for the assistant message at each index
            of `messages` (`reported_tokens`); indexes missing from it have none. None: read
            each message's recorded pi usage (`pi_recorded_tokens`).

    Returns:
        ContextUsage(tokens, context_window) with tokens >= 0.
    """
    anchor, tokens = len(messages), 0
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if not isinstance(msg, ChatMessageAssistant):
            continue
        found = pi_recorded_tokens(msg) if reported is None else reported.get(i)
        if found is not None:
            anchor, tokens = i, found
            break
    start = anchor + 1 if anchor < len(messages) else 0
    return ContextUsage(tokens + sum(pi_estimate_tokens(m) for m in messages[start:] if m.role != "system"),
                        context_window)
