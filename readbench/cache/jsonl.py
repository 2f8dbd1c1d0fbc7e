"""The JSONL request format read by `readbench cache simulate`.

One JSON object per line, one request per line, in start-time order:

    {"ts_start": 0.0, "ts_first_token": 2.5, "output_tokens": 150,
     "blocks": [{"kind": "tool_def", "id": "tools-v1", "tokens": 900},
                {"kind": "system", "text": "You are a coding agent ..."},
                {"kind": "text", "role": "user", "id": "task", "tokens": 400}],
     "breakpoints": [0, 1, 2]}

- `ts_start`, `ts_first_token` (seconds, any fixed origin; ts_first_token >= ts_start) and
  `output_tokens` (int >= 0) are required.
- Either `blocks` or `messages` (+ optional `tools`):
  * `blocks`: each has `kind` (tool_def, system, text, image, tool_use, tool_result, thinking,
    params); optional `role` (default: tool_def -> tools, system/params -> system,
    tool_use/thinking -> assistant, others -> user); `tokens` (int) or `text` (counted with
    the priced model's tokenizer); content identity from `id` (any string: equal ids mean
    byte-identical content) or else from `text`; optional `ends_message` (default true).
  * `messages`: inspect-ai ChatMessage JSON objects (as in an eval log), `tools`: inspect-ai
    ToolInfo JSON objects; rendered exactly as for the live benchmark (adapter.py).
- `breakpoints` (optional): explicit cache breakpoints as 0-based block indices (blocks
  format only); without them the cache model places its own (pi's placement for Anthropic).
  Only `anthropic-5m`/`anthropic-1h` and GPT-5.6+ models under `openai` use them; the
  automatic cache models (openai <= 5.5, gemini-implicit, deepseek) and `none` ignore them.
Blank lines are skipped; a file with no request is an error. Times must be finite; a block's
`tokens`, `output_tokens` and a request's total input are bounded by `MAX_REQUEST_TOKENS`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from readbench.cache.adapter import CallRecord, RequestBuilder
from readbench.cache.blocks import BLOCK_KINDS, Block, Request, content_hash
from readbench.cache.tokenizer import count_tokens

__all__ = ["MAX_REQUEST_TOKENS", "load_requests", "parse_request"]

#: Upper bound on the tokens of one block, of one request's input and of its output: five times
#: the largest context window any priced provider offers (2M, caching.md), so a typo such as
#: 1e23 is named instead of priced at 10^17 USD.
MAX_REQUEST_TOKENS = 10_000_000

_DEFAULT_ROLE = {
    "tool_def": "tools",
    "system": "system",
    "params": "system",
    "tool_use": "assistant",
    "thinking": "assistant",
}


def _block(obj: Any, where: str, family: str) -> Block:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a block must be an object, got {obj!r}")
    kind = obj.get("kind")
    if kind not in BLOCK_KINDS:
        raise ValueError(f"{where}: kind {kind!r} not in {sorted(BLOCK_KINDS)}")
    role = obj.get("role", _DEFAULT_ROLE.get(kind, "user"))
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where}: text must be a string")
    tokens = obj.get("tokens")
    if tokens is None:
        if text is None:
            tokens = 0 if kind == "params" else None
        else:
            tokens = count_tokens(text, family)
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise ValueError(f"{where}: give an integer 'tokens' or a 'text', got tokens={tokens!r}")
    if tokens > MAX_REQUEST_TOKENS:
        raise ValueError(f"{where}: tokens {tokens} is over the {MAX_REQUEST_TOKENS}-token bound of one request")
    ident = obj.get("id")
    if ident is None and text is None:
        raise ValueError(f"{where}: give an 'id' or a 'text' to identify the content")
    h = content_hash(kind, role, "id" if ident is not None else "text", str(ident) if ident is not None else str(text))
    try:
        return Block(kind, role, tokens, h, bool(obj.get("ends_message", True)))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _seconds(value: Any, key: str, where: str) -> float:
    """A JSON time in seconds: a finite number (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: {key} must be a finite number of seconds, got {value!r}")
    return float(value)


def parse_request(obj: Any, where: str, family: str, builder: RequestBuilder) -> Request:
    """One request from one decoded JSONL object (format in the module docstring).

    Raises:
        ValueError: a missing or malformed field; the message starts with `where`.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object")
    missing = [k for k in ("ts_start", "ts_first_token", "output_tokens") if k not in obj]
    if missing:
        raise ValueError(f"{where}: missing field {missing[0]!r}")
    ts_start, ts_first = (_seconds(obj[k], k, where) for k in ("ts_start", "ts_first_token"))
    output = obj["output_tokens"]
    if not isinstance(output, int) or isinstance(output, bool):
        raise ValueError(f"{where}: output_tokens must be an integer, got {output!r}")
    if output > MAX_REQUEST_TOKENS:
        raise ValueError(f"{where}: output_tokens {output} is over the {MAX_REQUEST_TOKENS}-token bound of one request")
    try:
        if "blocks" in obj:
            if "messages" in obj:
                raise ValueError("give either 'blocks' or 'messages', not both")
            if not isinstance(obj["blocks"], list):
                raise ValueError(f"blocks must be a list of block objects, got {obj['blocks']!r}")
            blocks = tuple(_block(b, f"block {j}", family) for j, b in enumerate(obj["blocks"]))
            total = sum(b.tokens for b in blocks)
            if total > MAX_REQUEST_TOKENS:
                raise ValueError(f"the blocks add up to {total} tokens, over the {MAX_REQUEST_TOKENS}-token bound")
            bps = obj.get("breakpoints")
            if bps is not None and not (
                isinstance(bps, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in bps)
            ):
                raise ValueError(f"breakpoints must be a list of block indices (integers), got {bps!r}")
            return Request(blocks, ts_start, ts_first, output, tuple(bps) if bps is not None else None)
        if "messages" not in obj:
            raise ValueError("missing field 'blocks' or 'messages'")
        if "breakpoints" in obj:
            raise ValueError("'breakpoints' applies to the blocks format only")
        from inspect_ai.model import ChatMessage
        from inspect_ai.tool import ToolInfo
        from pydantic import TypeAdapter, ValidationError

        try:
            messages = TypeAdapter(list[ChatMessage]).validate_python(obj["messages"])
            tools = [ToolInfo.model_validate(t) for t in obj.get("tools", [])]
        except ValidationError as exc:
            raise ValueError(f"invalid messages/tools: {exc.errors()[0]['msg']}") from None
        return builder.build(CallRecord(messages, tools, output, ts_start, ts_first), family)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def load_requests(path: str | Path, family: str) -> list[Request]:
    """Requests from a JSONL file, token counts in tokenizer `family` where text is given.

    Raises:
        ValueError: text that is not UTF-8, unreadable JSON or a bad request (the message names the
            file and line), or no request at all.
        OSError: the file cannot be read.
    """
    builder = RequestBuilder()
    out: list[Request] = []
    with open(path, "rb") as fh:  # decoded per line, so a byte that is not UTF-8 is named with its line
        for n, raw in enumerate(fh, 1):
            where = f"{path}:{n}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: invalid JSON ({exc.msg})") from None
            out.append(parse_request(obj, where, family, builder))
    if not out:
        raise ValueError(f"{path}: no requests (the file is empty)")
    return out
