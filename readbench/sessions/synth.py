"""Valid synthetic recorded sessions, for benchmarks and tests (issue 14).

`write_pi_session` writes a pi session JSONL (the legacy format real pi sessions of late 2025
use, sessions.md §1) shaped like the sessions seen in the field: ~450 calls in ~12 user prompts,
tool results carrying most of the context with reads first and bash second (the public 756-session
pi audit: 84 % of context tokens were tool results, 52 % of them reads, 25 % bash; sessions.md §6),
blind reads of big files capped at pi's 2,000 lines with its continuation notice, paging, and
re-reads. Its bill is made by a simple, stated rule, not by readbench's simulator: every call
reads the previous call's whole prompt from cache when it starts less than `ttl_seconds` after it
and no restart happened, writes the rest but `UNCACHED` tokens, and restarts (a full miss) happen
on a fraction `p_restart` of user prompts; prompt tokens are ceil(chars / 4) per block plus a
head. Everything is drawn from one `random.Random(seed)`: the same arguments give the same file.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

__all__ = ["write_pi_session"]

UNCACHED = 3
_T0_MS = 1763683200000  # 2025-11-21T00:00:00Z


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _file_lines(name: str, n: int, rng: random.Random) -> list[str]:
    words = ("value", "compute", "offset", "result", "config", "render", "buffer", "parse", "token", "session")
    return [f"    {rng.choice(words)}_{k} = {rng.choice(words)}({name!r}, {k})  # line {k}" for k in range(1, n + 1)]


def write_pi_session(
    path: str | Path,
    *,
    seed: int = 0,
    calls: int = 450,
    prompts: int = 12,
    files: int = 24,
    ttl_seconds: float = 300.0,
    p_restart: float = 0.3,
    head_tokens: int = 2000,
    model: str = "claude-sonnet-4-5",
) -> Path:
    """Write one synthetic pi session (module docstring) to `path`; returns the path.

    Args:
        path: where to write (overwritten).
        seed: the random seed.
        calls: model calls in all (>= prompts).
        prompts: user prompts; each starts a tool loop of about calls / prompts calls.
        files: source files the agent reads (100 to 6,000 lines each).
        ttl_seconds: the cache lifetime of the billing rule.
        p_restart: share of user prompts that start with a full cache miss.
        head_tokens: unrecorded system prompt + tools, in billed tokens.
        model: the model id written in the file.

    Raises:
        ValueError: calls < prompts or prompts < 1.
    """
    if prompts < 1 or calls < prompts:
        raise ValueError(f"need 1 <= prompts <= calls, got prompts={prompts}, calls={calls}")
    rng = random.Random(seed)
    names = [f"src/mod_{k}.py" for k in range(files)]
    sizes = {n: rng.choice([rng.randint(100, 900), rng.randint(1000, 2000), rng.randint(2000, 6000)]) for n in names}
    lines: list[dict[str, Any]] = [{"type": "session", "id": f"synthetic-{seed}", "timestamp": "2025-11-21T00:00:00.000Z",
                                    "cwd": "/repo", "provider": "anthropic", "modelId": model, "thinkingLevel": "off"}]
    prompt_tokens = head_tokens
    prev_start, prev_prompt = -1e9, 0
    t = 0.0
    paging: dict[str, int] = {}  # file -> next offset of a capped read
    per_prompt = [calls // prompts + (1 if k < calls % prompts else 0) for k in range(prompts)]
    call_no = 0

    def add(message: dict[str, Any], ms: float) -> int:
        lines.append({"type": "message", "timestamp": _iso(_T0_MS + int(ms * 1000)), "message": message})
        return sum(_tokens(b["text"]) for b in message.get("content", []) if b.get("type") == "text")

    for p in range(prompts):
        t += rng.uniform(30, 400) if p else 0.0
        restart = p > 0 and rng.random() < p_restart
        prompt_tokens += add({"role": "user", "content": [{"type": "text", "text": f"Task {p}: look into {rng.choice(names)}."}],
                              "timestamp": _T0_MS}, t)
        for k in range(per_prompt[p]):
            name = rng.choice(names)
            last = k == per_prompt[p] - 1
            roll = rng.random()
            if last:
                call = None
            elif roll < 0.55:
                start = paging.pop(name, None) if name in paging and rng.random() < 0.6 else None
                blind = start is None and rng.random() < 0.5
                offset = start or (None if blind else rng.randint(1, max(1, sizes[name] - 200)))
                limit = None if blind or start else rng.choice([80, 150, 300])
                call = ("read", {"path": name, **({"offset": offset} if offset else {}), **({"limit": limit} if limit else {})})
            elif roll < 0.8:
                call = ("bash", {"command": f"python -m pytest tests/test_{rng.randint(0, 9)}.py -x"})
            else:
                call = ("edit", {"path": name, "edits": [{"oldText": "value_1 =", "newText": "value_1 :="}]})
            out_tokens = rng.randint(40, 400)
            text = "Let me check." if call else "Done: the change is in place."
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if call:
                content.append({"type": "toolCall", "id": f"call_{call_no}", "name": call[0], "arguments": call[1]})
            start = t
            hit = call_no > 0 and start - prev_start < ttl_seconds and not (restart and k == 0)
            read = prev_prompt - UNCACHED if hit else 0  # the previous prompt, cached up to its last block
            write = prompt_tokens - read - UNCACHED
            lines.append({"type": "message", "timestamp": _iso(_T0_MS + int((t + 2.0) * 1000)), "message": {
                "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                "model": model, "usage": {"input": UNCACHED, "output": out_tokens, "cacheRead": read, "cacheWrite": write,
                                          "totalTokens": prompt_tokens + out_tokens},
                "stopReason": "toolUse" if call else "stop", "timestamp": _T0_MS + int(start * 1000)}})
            prev_prompt, prev_start = prompt_tokens, start
            prompt_tokens += _tokens(text) + out_tokens // 4
            if call:
                result = _result(call, sizes, paging, rng)
                prompt_tokens += add({"role": "toolResult", "toolCallId": f"call_{call_no}", "toolName": call[0],
                                      "content": [{"type": "text", "text": result}], "isError": False,
                                      "timestamp": _T0_MS}, t + 2.5)
            call_no += 1
            t += rng.uniform(3, 12)
    out = Path(path)
    out.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    return out


def _result(call: tuple[str, dict[str, Any]], sizes: dict[str, int], paging: dict[str, int], rng: random.Random) -> str:
    name, args = call
    if name == "read":
        path = args["path"]
        total = sizes[path]
        body = _file_lines(path, total, random.Random(path))
        start = args.get("offset", 1)
        limit = args.get("limit")
        end = min(total, start - 1 + (limit or 2000))
        text = "\n".join(body[start - 1:end])
        if limit is None and end < total:  # pi's line cap (pi-tools.md §1.3)
            paging[path] = end + 1
            return f"{text}\n\n[Showing lines {start}-{end} of {total}. Use offset={end + 1} to continue.]"
        if limit is not None and end < total:
            return f"{text}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
        return text
    if name == "bash":
        n = rng.randint(5, 120)
        return "\n".join(f"tests/test_x.py::test_{j} PASSED" for j in range(n))
    return f"Successfully replaced 1 block(s) in {args['path']}."


def _iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
