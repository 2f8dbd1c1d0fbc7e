"""Shared pieces of the sister extension (docs/specs/dcp.md §7.1-§7.3): token estimator,
completed tool-call occurrences, recency boundary, protections, proposals.

Positions are `PiView` positions (the hook's message list: no system messages).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

from inspect_ai.model import ChatMessageTool

from readbench.base.js import js_stringify, utf16_len
from readbench.dcp._glob import glob_to_regex
from readbench.dcp._params import SisterParams
from readbench.dcp._view import PiView, blocks, calls_of, is_error, text_chars, tool_name

__all__ = [
    "EXTENSION_ID",
    "Occurrence",
    "Proposal",
    "completed_occurrences",
    "estimate_text_tokens",
    "estimate_content_tokens",
    "estimate_message_tokens",
    "recency_boundary",
    "is_protected",
    "pair_index",
]

EXTENSION_ID = "dynamic-context-pruning"
IMAGE_TOKENS = 1200
"""Fixed token estimate of one image block (`estimateTokensForContent`)."""


@dataclass(frozen=True)
class Proposal:
    """What a sister strategy proposes; the pipeline decides whether to apply it."""

    strategy_id: str
    tool_call_id: str
    kind: str
    """`tool_result_content` or `tool_call_input`."""
    reason: str
    placeholder: str | None

    @property
    def key(self) -> str:
        """Idempotency key `<strategy_id>:<kind>:<tool_call_id>`."""
        return f"{self.strategy_id}:{self.kind}:{self.tool_call_id}"

    @property
    def target(self) -> str:
        """Target key `<kind>:toolCallId:<id>` (strategy omitted)."""
        return f"{self.kind}:toolCallId:{self.tool_call_id}"


@dataclass(frozen=True)
class Occurrence:
    """A tool call that has a result (`collectCompletedToolCallOccurrences`)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    assistant_pos: int
    call_index: int
    result_pos: int
    is_error: bool


def estimate_text_tokens(text: str) -> int:
    """ceil(UTF-16 length / 4); 0 for empty text."""
    return math.ceil(utf16_len(text) / 4) if text else 0


def estimate_content_tokens(content: Any) -> int:
    """Σ ceil(chars/4) per text block + 1200 per image block."""
    total = 0
    for kind, text in blocks(content):
        if kind == "text":
            total += estimate_text_tokens(text)
        elif kind == "image":
            total += IMAGE_TOKENS
    return total


def estimate_message_tokens(view: PiView, pos: int, current: bool = False) -> int:
    """`estimateMessageTokens`: user/toolResult content; assistant text + thinking +
    JSON.stringify(arguments) of each tool call."""
    m = view.current(pos) if current else view.original(pos)
    if view.role(pos) != "assistant":
        return estimate_content_tokens(m.content)
    total = sum(estimate_text_tokens(t) for kind, t in blocks(m.content) if kind in ("text", "thinking"))
    return total + sum(estimate_text_tokens(js_stringify(c.arguments or {})) for c in calls_of(m))


def completed_occurrences(view: PiView) -> list[Occurrence]:
    """Every assistant tool call with a matching result, in message order (last result wins)."""
    result_pos: dict[str, int] = {}
    for pos in range(len(view)):
        m = view.original(pos)
        if isinstance(m, ChatMessageTool) and m.tool_call_id is not None:  # role "toolResult"
            result_pos[m.tool_call_id] = pos
    out: list[Occurrence] = []
    for pos in range(len(view)):
        for k, c in enumerate(calls_of(view.original(pos))):
            if c.id in result_pos:
                rp = result_pos[c.id]
                out.append(Occurrence(c.id, c.function, c.arguments or {}, pos, k, rp, is_error(cast(ChatMessageTool, view.original(rp)))))
    return out


def recency_boundary(view: PiView, recent_turns: int) -> int:
    """First protected position: the start of the `recent_turns`-th newest user turn.

    `recent_turns` 0 = nothing protected (boundary past the end); no user message = all protected.
    """
    if recent_turns <= 0:
        return len(view)
    starts = [p for p in range(len(view)) if view.role(p) == "user"]
    if not starts:
        return 0
    return starts[max(0, len(starts) - recent_turns)]


def _arg_strings(value: Any, depth: int = 2) -> list[str]:
    if isinstance(value, str):
        return [value]
    if depth <= 0:
        return []
    if isinstance(value, list):
        return [s for v in value for s in _arg_strings(v, depth - 1)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _arg_strings(v, depth - 1)]
    return []


def pair_index(view: PiView) -> dict[str, tuple[int | None, int, int | None]]:
    """`buildToolCallPairIndex`: call id -> (assistant position, call index, result position).

    The last assistant message holding the id wins (first block within it); the last result wins.
    """
    out: dict[str, list] = {}
    for pos in range(len(view)):
        m = view.original(pos)
        if isinstance(m, ChatMessageTool) and m.tool_call_id is not None:  # role "toolResult"
            out.setdefault(m.tool_call_id, [None, 0, None])[2] = pos
            continue
        seen: set[str] = set()
        for k, c in enumerate(calls_of(m)):
            if c.id in seen:
                continue
            seen.add(c.id)
            entry = out.setdefault(c.id, [None, 0, None])
            entry[0], entry[1] = pos, k
    return {cid: (e[0], e[1], e[2]) for cid, e in out.items()}


def is_protected(
    view: PiView, call_id: str, params: SisterParams, boundary: int, pairs: dict[str, tuple[int | None, int, int | None]]
) -> bool:
    """`isDecisionProtected`: call or result inside the recency window, protected tool name
    (case-insensitive) or a string argument (depth 2) matching a protected path glob."""
    apos, cidx, rpos = pairs.get(call_id, (None, 0, None))
    if rpos is not None and rpos >= boundary:
        return True
    if apos is not None and apos >= boundary:
        return True
    name = None
    if rpos is not None:
        name = tool_name(cast(ChatMessageTool, view.original(rpos)), view.call_names)
    elif apos is not None:
        name = calls_of(view.original(apos))[cidx].function
    names = {n.strip().lower() for n in params.protected_tools}
    if name and name.strip().lower() in names:
        return True
    if apos is None:
        return False
    globs = [glob_to_regex(g) for g in params.protected_path_globs]
    for s in _arg_strings(calls_of(view.original(apos))[cidx].arguments, 2):
        v = s.strip()
        if v and any(g.fullmatch(v) for g in globs):
            return True
    return False


def result_text_chars(view: PiView, pos: int) -> int:
    """Text length (UTF-16 units) of the result at `pos` (`contentTextLength`)."""
    return text_chars(view.original(pos).content)
