"""Random pi-shaped histories for the fast-path equivalence tests (tests/dcp only)."""

from __future__ import annotations

import random

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser, ContentText
from inspect_ai.tool import ToolCall, ToolCallError

PATHS = ["src/a.py", "./src/a.py", "/repo/src/a.py", "notes/progress.md", "docs/x.plan.md", "CHANGELOG.md",
         "src/b.py", "plans/p.md", ".env", "keys/id_rsa"]
COMMANDS = ["pytest -q", "ls -la", "npm test", "cat src/a.py", "ruff check .", "go test ./..."]


def _args(rng: random.Random, fn: str) -> dict:
    if fn == "read":
        args: dict = {"path": rng.choice(PATHS)}
        if rng.random() < 0.4:
            args["offset"] = rng.choice([1, 5, 20])
        if rng.random() < 0.4:
            args["limit"] = rng.choice([10, 50, None])
        return args
    if fn in ("edit", "write"):
        key = "path" if rng.random() < 0.9 else "file"
        body = "z" * rng.choice([10, 400])
        return {key: rng.choice(PATHS), "oldText": body, "newText": body + "!"} if fn == "edit" else {key: rng.choice(PATHS), "content": body}
    if fn == "bash":
        return {"command": rng.choice(COMMANDS)}
    if fn == "grep":
        return {"pattern": rng.choice(["def", "class"]), "path": rng.choice(PATHS[:3])}
    return {"items": [rng.choice(["a", "b"])]}


def _output(rng: random.Random) -> str | list:
    head = rng.choice(["PASS all", "FAIL test_x", "ok", "", "Error: boom"])
    body = head + "\n" + "line of output text\n" * rng.choice([0, 3, 40, 80])
    if rng.random() < 0.1:
        return [ContentText(text=body), ContentText(text="tail " * rng.choice([1, 300]))]
    if rng.random() < 0.05:
        return "[DCP: already pruned]"
    return body


def random_history(seed: int, length: int = 120, ill_formed: float = 0.0) -> list:
    """A deterministic history of about `length` messages: system, user prompts, tool round trips
    (one to three calls), text-only assistant messages, errors, repeated calls and, with
    probability `ill_formed` per step, a reused call id or an orphan result."""
    rng = random.Random(seed)
    msgs: list = [ChatMessageSystem(content="sys"), ChatMessageUser(content="task")]
    n = 0
    while len(msgs) < length:
        r = rng.random()
        if r < 0.16:
            msgs.append(ChatMessageUser(content=f"prompt {len(msgs)}"))
            continue
        if r < 0.24:
            msgs.append(ChatMessageAssistant(content=rng.choice(["thinking aloud", "", "  ", "done"])))
            continue
        calls = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            n += 1
            cid = f"c{n}"
            if ill_formed and rng.random() < ill_formed and n > 2:
                cid = f"c{n - 1}"
            fn = rng.choice(["read", "read", "read", "bash", "edit", "write", "grep", "todo"])
            calls.append(ToolCall(id=cid, function=fn, arguments=_args(rng, fn)))
        msgs.append(ChatMessageAssistant(content=rng.choice(["", "let me look"]), tool_calls=calls))
        for c in calls:
            if rng.random() < 0.05:
                continue  # a call without a result
            err = rng.random() < 0.15
            out = _output(rng)
            text = out if isinstance(out, str) else "x"
            msgs.append(ChatMessageTool(content=out, tool_call_id=c.id, function=c.function if rng.random() < 0.9 else None,
                                        error=ToolCallError(type="unknown", message=text) if err else None))
        if ill_formed and rng.random() < ill_formed:
            msgs.append(ChatMessageTool(content="orphan", tool_call_id=f"x{len(msgs)}", function="bash"))
        if rng.random() < 0.1:
            msgs.append(ChatMessageAssistant(content="progress note"))
    return msgs
