"""What a Codex CLI model saw of a tool output: the history truncation rollouts do not record.

A rollout keeps each tool output whole, but Codex records a truncated copy in the history it
sends (codex-rs `ContextManager::process_item`: `function_call_output` and
`custom_tool_call_output` items cut to the turn's `truncation_policy` × 1.2, "for serialization
and headers"), with codex-rs's middle truncation (`utils/string/src/truncate.rs`,
`utils/output-truncation/src/lib.rs`): tokens are estimated as 4 bytes each; a text over the
budget keeps its first and last budget/2 bytes (on character boundaries) around
`…N tokens truncated…` (N = the removed bytes / 4, rounded up) or, under a byte policy,
`…N chars truncated…`; a list of content items spends one budget over its text items in order,
cuts the first that does not fit and drops the rest (`[omitted K text items ...]`), keeping images.

On a real rollout (cli 0.122, policy `{"mode": "tokens", "limit": 10000}`) a 133,341-byte output
(32,837 tokens as recorded) grew the billed prompt by 12,635 tokens: the recorded text would have
overstated every later prompt by ~20k tokens. sessions.md §3 does not mention this cut.
Applied only when the rollout's `turn_context` records the policy.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["model_visible_output", "policy_budget"]

_BYTES_PER_TOKEN = 4
_SERIALIZATION_ALLOWANCE = 1.2


def policy_budget(policy: Any) -> tuple[str, int] | None:
    """`turn_context.truncation_policy` -> (mode, limit × 1.2) with mode `tokens` or `bytes`, or
    None when the rollout records none (or not in this form)."""
    if not isinstance(policy, dict):
        return None
    mode, limit = policy.get("mode"), policy.get("limit")
    if mode not in ("tokens", "bytes") or not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        return None
    return mode, math.ceil(limit * _SERIALIZATION_ALLOWANCE)  # codex-rs: (limit as f64 * 1.2).ceil()


def _approx_tokens(text: str) -> int:
    return math.ceil(len(text.encode()) / _BYTES_PER_TOKEN)


def _middle(text: str, max_bytes: int, tokens: bool) -> str:
    data = text.encode()
    if not data or len(data) <= max_bytes:
        return text
    left, right = max_bytes // 2, max_bytes - max_bytes // 2
    tail_start = len(data) - right
    prefix_end, suffix_start, removed_chars, pos = 0, len(data), 0, 0
    for ch in text:
        end = pos + len(ch.encode())
        if end <= left:
            prefix_end = end
        elif pos >= tail_start:
            suffix_start = min(suffix_start, pos)  # the first character of the tail
        else:
            removed_chars += 1
        pos = end
    suffix_start = max(suffix_start, prefix_end)
    if tokens:
        marker = f"…{math.ceil((len(data) - max_bytes) / _BYTES_PER_TOKEN)} tokens truncated…"
    else:
        marker = f"…{removed_chars} chars truncated…"
    return data[:prefix_end].decode() + marker + data[suffix_start:].decode()


def _truncate_text(text: str, mode: str, budget: int) -> str:
    if mode == "tokens":  # a text within budget x 4 bytes comes back whole (_middle); budget 0 leaves the marker
        return _middle(text, budget * _BYTES_PER_TOKEN, tokens=True)
    return _middle(text, budget, tokens=False)


def model_visible_output(output: Any, budget: tuple[str, int] | None) -> Any:
    """The tool output (a string, or a list of content items as recorded) as the model saw it
    under `budget` (`policy_budget`); unchanged when `budget` is None or the output fits."""
    if budget is None:
        return output
    mode, limit = budget
    if isinstance(output, str):
        return _truncate_text(output, mode, limit)
    if not isinstance(output, list):
        return output
    out: list[Any] = []
    remaining, omitted = limit, 0  # tokens (estimated) or bytes, as the policy counts
    for item in output:
        text = item.get("text") if isinstance(item, dict) and item.get("type") in ("input_text", "output_text") else None
        if not isinstance(text, str):
            out.append(item)
            continue
        if not text:
            continue
        if remaining == 0:
            omitted += 1
            continue
        cost = _approx_tokens(text) if mode == "tokens" else len(text.encode())
        if cost <= remaining:
            out.append(item)
            remaining -= cost
        else:
            snippet = _truncate_text(text, mode, remaining)
            if snippet:
                out.append({**item, "text": snippet})
            else:
                omitted += 1
            remaining = 0
    if omitted:
        out.append({"type": "input_text", "text": f"[omitted {omitted} text items ...]"})
    return out

