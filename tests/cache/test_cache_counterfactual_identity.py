"""The counterfactual shortcut: when the projection sent the very same message objects, the
unpruned cost is the projected cost, and equals what a full second simulation gives."""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from readbench.cache import CallRecord, sample_cache_metrics


def _calls(history, copies: bool):
    calls = []
    for i in range(1, len(history) + 1):
        msgs = [m.model_copy() for m in history[:i]] if copies else history[:i]
        calls.append(CallRecord(msgs, [], 50, 10.0 * i, 10.0 * i + 1.0))
    return calls


def test_identical_projection_reuses_the_projected_bill():
    history = [ChatMessageSystem(content="system " * 400)] + [
        ChatMessageUser(content=f"turn {i} " + "word " * 300) for i in range(6)
    ]
    calls = _calls(history, copies=False)
    shortcut = sample_cache_metrics(calls, ["anthropic-5m", "openai"], unpruned_calls=_calls(history, copies=False))
    full = sample_cache_metrics(calls, ["anthropic-5m", "openai"], unpruned_calls=_calls(history, copies=True))
    for m in ("anthropic-5m", "openai"):
        assert shortcut[f"dcp_cost_delta_{m}"] == 0.0
        assert shortcut[f"cost_usd_unpruned_{m}"] == shortcut[f"cost_usd_{m}"]
        assert full[f"cost_usd_unpruned_{m}"] == shortcut[f"cost_usd_unpruned_{m}"]
        assert full[f"dcp_cost_delta_{m}"] == 0.0
