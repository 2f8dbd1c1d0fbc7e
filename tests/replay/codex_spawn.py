"""A synthetic Codex rollout of a sub-agent spawned from a thread (cli 0.119+): the parent's history
and token counts first, then the sub-agent's own task (issue 22; nothing copied from a real file)."""

from __future__ import annotations

import json
from pathlib import Path


def _ev(ts: str, kind: str, payload: dict) -> dict:
    return {"timestamp": f"2026-04-15T17:58:{ts}Z", "type": kind, "payload": payload}


def _count(total: tuple[int, int, int], last: tuple[int, int, int]) -> dict:
    def u(t):
        return {"input_tokens": t[0], "cached_input_tokens": t[1], "output_tokens": t[2], "reasoning_output_tokens": 0,
                "total_tokens": t[0] + t[2]}
    return {"type": "token_count", "info": {"total_token_usage": u(total), "last_token_usage": u(last)}}


def spawned_rollout(path: Path) -> Path:
    """Parent call: 1,000 input, 10 output; the sub-agent's call: 1,500 input of which 900 cached, 20 output."""
    meta = {"cwd": "/p", "originator": "codex_vscode", "cli_version": "0.119.0", "model_provider": "openai"}
    rows = [
        _ev("35.546", "session_meta", {**meta, "id": "sub-1", "timestamp": "2026-04-15T17:58:35.546Z",
                                       "source": {"subagent": {"thread_spawn": {"parent_thread_id": "par-1", "depth": 1}}}}),
        _ev("35.549", "session_meta", {**meta, "id": "par-1", "timestamp": "2026-04-15T17:50:00.000Z", "source": "vscode"}),
        _ev("35.549", "event_msg", {"type": "task_started"}),
        _ev("35.550", "turn_context", {"cwd": "/p", "model": "gpt-5.4", "effort": "medium"}),
        _ev("35.550", "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "parent asks"}]}),
        _ev("35.550", "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "parent answer"}]}),
        _ev("35.550", "event_msg", _count((1000, 0, 10), (1000, 0, 10))),
        _ev("35.560", "event_msg", {"type": "task_started"}),
        _ev("35.564", "turn_context", {"cwd": "/p", "model": "gpt-5.4", "effort": "medium"}),
        _ev("35.589", "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "sub task"}]}),
        _ev("35.989", "event_msg", _count((1000, 0, 10), (1000, 0, 10))),
        _ev("39.225", "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "sub answer"}]}),
        _ev("39.301", "event_msg", _count((2500, 900, 30), (1500, 900, 20))),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    return path
