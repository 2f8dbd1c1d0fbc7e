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


def review_rollout(path: Path) -> Path:
    """A thread call (5,000 input, 4,096 cached, 10 output), a `/review` (cli 0.77) of two calls on
    its own counter (300 input; 500 input of which 256 cached; 10 output each), the thread's last
    token_count written again after the review (same totals), then the thread's next call (5,700
    input, 4,992 cached, 10 output)."""
    meta = {"cwd": "/p", "originator": "codex_cli_rs", "cli_version": "0.77.0", "model_provider": "openai"}

    def user(text: str) -> dict:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}

    def answer(text: str) -> dict:
        return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}

    rows = [
        _ev("00.000", "session_meta", {**meta, "id": "rev-1", "timestamp": "2026-04-15T17:58:00.000Z"}),
        _ev("00.100", "turn_context", {"cwd": "/p", "model": "gpt-5.2-codex", "effort": "medium"}),
        _ev("00.200", "response_item", user("open a PR")),
        _ev("01.000", "response_item", answer("done")),
        _ev("01.100", "event_msg", _count((5000, 4096, 10), (5000, 4096, 10))),
        _ev("05.000", "event_msg", {"type": "entered_review_mode", "target": {"type": "baseBranch", "branch": "main"}}),
        _ev("05.100", "event_msg", {"type": "user_message", "message": "Review the code changes against main."}),
        _ev("06.000", "event_msg", _count((300, 0, 10), (300, 0, 10))),
        _ev("07.000", "event_msg", _count((800, 256, 20), (500, 256, 10))),
        _ev("07.100", "response_item", user("<user_action>review: 1 finding</user_action>")),
        _ev("07.100", "event_msg", {"type": "exited_review_mode", "review_output": {"findings": []}}),
        _ev("07.200", "response_item", answer("One finding.")),
        _ev("09.000", "response_item", user("fix it")),
        _ev("09.100", "turn_context", {"cwd": "/p", "model": "gpt-5.2-codex", "effort": "medium"}),
        _ev("09.200", "event_msg", _count((5000, 4096, 10), (5000, 4096, 10))),
        _ev("11.000", "response_item", answer("fixed")),
        _ev("11.100", "event_msg", _count((10700, 9088, 20), (5700, 4992, 10))),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    return path
