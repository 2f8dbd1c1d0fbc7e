"""Valid synthetic recorded sessions, for benchmarks and tests (issue 14).

One script (`session_script`) is rendered in two formats: pi's session JSONL (the legacy format
real pi sessions of late 2025 use, sessions.md §1: `write_pi_session`) and a Claude Code
transcript (sessions.md §2: `write_claude_session`). The script is shaped like the sessions seen
in the field: ~450 calls in ~12 user prompts; tool results carry most of the context, reads first
and bash second (the public 756-session pi audit: 84 % of context tokens were tool results,
52 % of them reads, 25 % bash; sessions.md §6); blind reads of big files capped (2,000 lines or 50 KB)
with pi's continuation notice, paging, ranged reads and re-reads; a compaction whenever the
prompt passes `compact_at` tokens (the summary plus the last `keep_calls` round trips remain).
The bill follows a simple, stated rule, not readbench's simulator: a call reads the previous
call's prompt from cache when it starts less than `ttl_seconds` after it, no restart happened and
no compaction came between; it writes the rest but `UNCACHED` tokens; a restart (a full miss)
happens on a fraction `p_restart` of user prompts. Prompt tokens are ceil(chars / 4) per message
plus a head. Everything is drawn from one `random.Random(seed)`: the same arguments give the
same file.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Step", "session_script", "write_claude_session", "write_pi_session"]

UNCACHED = 3
_T0 = 1763683200.0  # 2025-11-21T00:00:00Z


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass
class Step:
    """One event of a session script.

    `kind` is `prompt` (user text), `call` (one model call: its reply `text`, an optional tool call
    `tool`/`args` and the tool's `result`, billed `usage` = (uncached, read, write, output)), or
    `compaction` (`text` = the summary, `keep` = round trips kept). `at` is seconds after the start.
    """

    kind: str
    at: float
    text: str = ""
    tool: str | None = None
    args: dict[str, Any] | None = None
    result: str = ""
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    keep: int = 0


@functools.lru_cache(maxsize=64)
def _file_bytes(name: str, n: int) -> bytes:
    """The synthetic file `name` of `n` lines, ending in a newline (as source files do)."""
    rng = random.Random(name)
    words = ("value", "compute", "offset", "result", "config", "render", "buffer", "parse", "token", "session")
    lines = [f"    {rng.choice(words)}_{k} = {rng.choice(words)}({name!r}, {k})  # line {k}" for k in range(1, n + 1)]
    return ("\n".join(lines) + "\n").encode()


def _result(tool: str, args: dict[str, Any], sizes: dict[str, int], paging: dict[str, int], rng: random.Random) -> str:
    if tool == "read":  # exactly what pi's read returns (readbench's stock emulation, pi-tools.md §1)
        from readbench.read import get_variant
        from readbench.read._session import ReadSession

        path = args["path"]
        res = get_variant("stock").read(_file_bytes(path, sizes[path]), path, args.get("offset"), args.get("limit"),
                                        call_id=None, session=ReadSession(), visible_call_ids=None)
        d = res.details
        if d.capped and args.get("limit") is None and d.last_line is not None:
            paging[path] = d.last_line + 1
        return res.text
    if tool == "bash":
        return "\n".join(f"tests/test_x.py::test_{j} PASSED" for j in range(rng.randint(10, 380)))
    return f"Successfully replaced 1 block(s) in {args['path']}."


def session_script(
    *, seed: int = 0, calls: int = 450, prompts: int = 12, files: int = 24, ttl_seconds: float = 300.0,
    p_restart: float = 0.3, head_tokens: int = 2000, compact_at: int = 150_000, keep_calls: int = 6,
) -> list[Step]:
    """The events of one synthetic session (module docstring).

    Raises:
        ValueError: calls < prompts or prompts < 1.
    """
    if prompts < 1 or calls < prompts:
        raise ValueError(f"need 1 <= prompts <= calls, got prompts={prompts}, calls={calls}")
    rng = random.Random(seed)
    names = [f"src/mod_{k}.py" for k in range(files)]
    sizes = {n: rng.choice([rng.randint(50, 400), rng.randint(400, 1500), rng.randint(1500, 6000)]) for n in names}
    steps: list[Step] = []
    sent: list[int] = []  # tokens of each message now in the prompt (after the head)
    prev_prompt, prev_start, t, call_no = 0, -1e9, 0.0, 0
    compacted = False
    paging: dict[str, int] = {}
    per_prompt = [calls // prompts + (1 if k < calls % prompts else 0) for k in range(prompts)]
    for p in range(prompts):
        t += rng.uniform(30, 400) if p else 0.0
        restart = p > 0 and rng.random() < p_restart
        text = f"Task {p}: look into {rng.choice(names)}."
        steps.append(Step("prompt", t, text))
        sent.append(_tokens(text))
        for k in range(per_prompt[p]):
            prompt = head_tokens + sum(sent)
            if prompt > compact_at:
                keep = keep_calls
                summary = f"Summary of the work so far ({len(sent)} messages): " + "done; " * 200
                kept = sent[-2 * keep:]
                steps.append(Step("compaction", t, summary, keep=keep))
                sent = [_tokens(summary)] + kept
                compacted = True
                prompt = head_tokens + sum(sent)
            name = rng.choice(names)
            tool, args = None, None
            if k < per_prompt[p] - 1:
                roll = rng.random()
                if roll < 0.3:
                    start = paging.pop(name, None) if name in paging and rng.random() < 0.6 else None
                    blind = start is None and rng.random() < 0.15
                    offset = start or (None if blind else rng.randint(1, max(1, sizes[name] - 200)))
                    limit = None if blind or start else rng.choice([40, 80, 150])
                    tool, args = "read", {"path": name, **({"offset": offset} if offset else {}),
                                          **({"limit": limit} if limit else {})}
                elif roll < 0.75:
                    tool, args = "bash", {"command": f"python -m pytest tests/test_{rng.randint(0, 9)}.py -x"}
                else:
                    tool, args = "edit", {"path": name, "edits": [{"oldText": "value_1 =", "newText": "value_1 :="}]}
            out = rng.randint(40, 400)
            hit = call_no > 0 and t - prev_start < ttl_seconds and not (restart and k == 0) and not compacted
            read = prev_prompt - UNCACHED if hit else 0
            words = " ".join(rng.choice(("the", "test", "value", "fails", "because", "offset", "is", "wrong", "so", "I"))
                             for _ in range(rng.randint(60, 500)))
            reply = f"Let me check: {words}." if tool else f"Done: {words}."
            result = _result(tool, args, sizes, paging, rng) if tool and args is not None else ""
            steps.append(Step("call", t, reply, tool, args, result, (UNCACHED, read, prompt - read - UNCACHED, out)))
            prev_prompt, prev_start, compacted = prompt, t, False
            sent.append(_tokens(reply) + out // 4)
            if tool:
                sent.append(_tokens(result))
            call_no += 1
            t += rng.uniform(3, 12)
    return steps


def _total_lines(result: str, last: int) -> int:
    """The file's line count from pi's notice in `result` (whose T counts the phantom line after
    the final newline, pi-tools.md §1.2), else `last` (the read reached the end)."""
    from readbench.read.notices import MORE, SHOWING

    if m := SHOWING.search(result):
        return int(m.group("total")) - 1
    if m := MORE.search(result):
        return int(m.group("next")) - 1 + int(m.group("remaining")) - 1
    return last


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def write_pi_session(path: str | Path, *, model: str = "claude-sonnet-4-5", **script: Any) -> Path:
    """Write `session_script(**script)` as a pi legacy session JSONL at `path`; returns the path."""
    steps = session_script(**script)
    lines: list[dict[str, Any]] = [{"type": "session", "id": f"synthetic-{script.get('seed', 0)}", "timestamp": _iso(_T0),
                                    "cwd": "/repo", "provider": "anthropic", "modelId": model, "thinkingLevel": "off"}]
    message_lines: list[int] = []  # line index of each message entry, in order
    for n, st in enumerate(steps):
        if st.kind == "prompt":
            message_lines.append(len(lines))
            lines.append({"type": "message", "timestamp": _iso(_T0 + st.at), "message": {
                "role": "user", "content": [{"type": "text", "text": st.text}], "timestamp": int((_T0 + st.at) * 1000)}})
        elif st.kind == "compaction":
            first = message_lines[-2 * st.keep] if len(message_lines) >= 2 * st.keep else message_lines[0]
            lines.append({"type": "compaction", "timestamp": _iso(_T0 + st.at), "summary": st.text,
                          "firstKeptEntryIndex": first, "tokensBefore": 0})
        else:
            inp, read, write, out = st.usage
            content: list[dict[str, Any]] = [{"type": "text", "text": st.text}]
            if st.tool:
                content.append({"type": "toolCall", "id": f"call_{n}", "name": st.tool, "arguments": st.args})
            message_lines.append(len(lines))
            lines.append({"type": "message", "timestamp": _iso(_T0 + st.at + 2.0), "message": {
                "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                "model": model, "usage": {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write,
                                          "totalTokens": inp + read + write + out},
                "stopReason": "toolUse" if st.tool else "stop", "timestamp": int((_T0 + st.at) * 1000)}})
            if st.tool:
                message_lines.append(len(lines))
                lines.append({"type": "message", "timestamp": _iso(_T0 + st.at + 2.5), "message": {
                    "role": "toolResult", "toolCallId": f"call_{n}", "toolName": st.tool,
                    "content": [{"type": "text", "text": st.result}], "isError": False, "timestamp": 0}})
    out_path = Path(path)
    out_path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    return out_path


def write_claude_session(path: str | Path, *, model: str = "claude-opus-4-6", **script: Any) -> Path:
    """Write `session_script(**script)` as a Claude Code transcript at `path` (tools named as
    Claude Code names them: Read, Bash, Edit; Read results numbered `{n:>6}→{line}` with
    `toolUseResult.file` and no notice; usage on every block line, writes in the 5m tier);
    returns the path. The bill is the script's (computed on pi's rendering), not re-derived."""
    steps = session_script(**script)
    sid = f"synthetic-{script.get('seed', 0)}"
    base = {"isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": sid, "version": "2.1.39"}
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    names = {"read": "Read", "bash": "Bash", "edit": "Edit"}

    def add(obj: dict[str, Any]) -> None:
        nonlocal parent
        uid = f"u{len(lines)}"
        lines.append({**base, "parentUuid": parent, "uuid": uid, **obj})
        parent = uid

    for n, st in enumerate(steps):
        if st.kind == "prompt":
            add({"type": "user", "timestamp": _iso(_T0 + st.at), "message": {"role": "user", "content": st.text}})
        elif st.kind == "compaction":
            parent = None
            add({"type": "system", "subtype": "compact_boundary", "timestamp": _iso(_T0 + st.at),
                 "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 0}})
            add({"type": "user", "isCompactSummary": True, "timestamp": _iso(_T0 + st.at),
                 "message": {"role": "user", "content": st.text}})
        else:
            inp, read, write, out = st.usage
            usage = {"input_tokens": inp, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                     "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
                     "output_tokens": out}
            msg = {"model": model, "id": f"msg_{n}", "type": "message", "role": "assistant", "usage": usage}
            add({"type": "assistant", "timestamp": _iso(_T0 + st.at + 1.0),
                 "message": {**msg, "content": [{"type": "text", "text": st.text}], "stop_reason": None}})
            if st.tool:
                args = dict(st.args or {})
                if st.tool == "read":
                    args = {"file_path": args.pop("path"), **args}
                add({"type": "assistant", "timestamp": _iso(_T0 + st.at + 2.0), "message": {
                    **msg, "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": names[st.tool], "input": args}],
                    "stop_reason": "tool_use"}})
                meta: dict[str, Any] = {"stdout": st.result} if st.tool == "bash" else {"type": "text"}
                result = st.result
                if st.tool == "read":  # Claude Code numbers the lines (`     1→...`) and adds no notice
                    first = args.get("offset", 1)
                    body = st.result.split("\n\n[")[0].removesuffix("\n").split("\n")
                    meta["file"] = {"filePath": args["file_path"], "numLines": len(body), "startLine": first,
                                    "totalLines": _total_lines(st.result, first + len(body) - 1)}
                    result = "\n".join(f"{first + k:>6}→{line}" for k, line in enumerate(body))
                add({"type": "user", "timestamp": _iso(_T0 + st.at + 2.5), "toolUseResult": meta, "message": {
                    "role": "user", "content": [{"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": result}]}})
    out_path = Path(path)
    out_path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    return out_path
