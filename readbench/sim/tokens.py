"""Token accounting of the simulated agent's requests and replies (for ``ModelOutput.usage``).

Counts use the project's offline tokenizer (readbench.cache.tokenizer.count_tokens, o200k_base;
docs/specs/caching.md §8.3). A request is rendered as a provider would serialise it: every
tool schema as JSON, then every message as its role, text, tool calls (JSON) or tool result,
each message with a fixed framing overhead. Counts of repeated texts are memoised by the
tokenizer, so a long session costs one tokenisation per new message.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolInfo

from readbench.base.idmemo import IdentityMemo
from readbench.cache.tokenizer import count_tokens

__all__ = ["MESSAGE_OVERHEAD_TOKENS", "REQUEST_OVERHEAD_TOKENS", "count_tokens", "output_tokens",
           "request_tokens"]

#: Framing tokens per message (role markers and separators; OpenAI chat format uses 3-4).
MESSAGE_OVERHEAD_TOKENS = 4
#: Framing tokens per request (the reply primer).
REQUEST_OVERHEAD_TOKENS = 3


def _render_message(message: ChatMessage) -> str:
    parts = [message.role, message.text]
    if isinstance(message, ChatMessageAssistant):
        for call in message.tool_calls or []:
            parts.append(json.dumps({"id": call.id, "name": call.function, "arguments": call.arguments},
                                    ensure_ascii=False, sort_keys=True))
    if isinstance(message, ChatMessageTool):
        parts.append(message.tool_call_id or "")
        if message.error is not None:
            parts.append(message.error.message)
    return "\n".join(parts)


def _render_tool(tool: ToolInfo) -> str:
    return json.dumps(tool.model_dump(exclude_none=True), ensure_ascii=False, sort_keys=True)


def _message_token_count(message: ChatMessage) -> int:
    return count_tokens(_render_message(message))


#: token counts of rendered messages by object identity, 8,192 kept. A sample's history messages (and
#: the unprojected ones of each request) are the same objects call after call (readbench.agent.loop),
#: so rendering each message again on every call (JSON of its tool calls, hashing its text for the
#: tokenizer's memo) made a sample's token counts O(calls^2) work (~3 % of a simulated sample's
#: process CPU, issue 26); messages are never mutated in place (a new message object replaces a
#: changed one, as readbench.dcp does).
_message_tokens: IdentityMemo[int] = IdentityMemo(_message_token_count, size=8192)


def request_tokens(messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
    """Prompt tokens of one request: tool schemas + messages + framing (tokens, o200k_base)."""
    total = REQUEST_OVERHEAD_TOKENS
    total += sum(count_tokens(_render_tool(t)) for t in tools)
    total += sum(_message_tokens(m) + MESSAGE_OVERHEAD_TOKENS for m in messages)
    return total


def output_tokens(text: str, function: str | None, arguments: dict[str, Any]) -> int:
    """Tokens the reply generates: its prose plus the tool call's name and JSON arguments."""
    total = count_tokens(text)
    if function is not None:
        total += count_tokens(function) + count_tokens(json.dumps(arguments, ensure_ascii=False))
    return total
