"""pi's view of an inspect message list, and a copy-on-write working list.

pi's `context` hook sees `user`, `assistant` and `toolResult` messages only (pi-tools.md §5.3:
system messages are removed before the hook). `PiView` is that subsequence of an inspect
`list[ChatMessage]`; every algorithm in this package indexes positions in the view and `PiView`
maps them back to input-list indices. Role mapping: ChatMessageUser = `user`,
ChatMessageAssistant (+ `.tool_calls`) = `assistant` with `toolCall` blocks,
ChatMessageTool = `toolResult` (`.error is not None` = `isError`).

Replacements never touch the input: `PiView.replace` stores a `model_copy(update=...)` that keeps
the message id; `PiView.current(pos)` returns the latest version, so later strategies see earlier
strategies' placeholders exactly as in the extensions (which mutate a deep copy in sequence).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall

from readbench.base.js import utf16_len

__all__ = ["PiView", "blocks", "text_of", "text_chars", "is_error", "tool_name", "calls_of"]


def blocks(content: Any) -> list[tuple[str, str]]:
    """Content as pi blocks: `("text", text)`, `("image", "")`, `("thinking", text)`, `("other", "")`.

    A plain-string content is one text block (how pi stores a string result).
    """
    if isinstance(content, str):
        return [("text", content)]
    out: list[tuple[str, str]] = []
    for c in content or []:
        if isinstance(c, ContentText):
            out.append(("text", c.text))
        elif isinstance(c, ContentImage):
            out.append(("image", ""))
        elif isinstance(c, ContentReasoning):
            out.append(("thinking", c.reasoning))
        else:
            out.append(("other", ""))
    return out


def text_of(content: Any) -> str:
    """Concatenated text blocks of `content`."""
    return "".join(t for kind, t in blocks(content) if kind == "text")


def text_chars(content: Any) -> int:
    """Σ JS length of text blocks (images and other blocks count 0)."""
    return sum(utf16_len(t) for kind, t in blocks(content) if kind == "text")


def is_error(msg: ChatMessageTool) -> bool:
    """pi's `isError`: the inspect tool message carries an error."""
    return msg.error is not None


def calls_of(msg: ChatMessage) -> list[ToolCall]:
    """Tool calls of an assistant message (empty for other roles)."""
    if isinstance(msg, ChatMessageAssistant):
        return list(msg.tool_calls or [])
    return []


def tool_name(msg: ChatMessageTool, call_names: dict[str, str]) -> str:
    """The result's tool name: `.function`, else the name of its call, else ``""``."""
    if msg.function:
        return msg.function
    return call_names.get(msg.tool_call_id or "", "")


class PiView:
    """Non-system subsequence of `messages` with copy-on-write replacement."""

    def __init__(self, messages: list[ChatMessage]) -> None:
        self.input = messages
        self.index = [i for i, m in enumerate(messages) if m.role != "system"]
        self._orig = [messages[i] for i in self.index]
        self._cur = list(self._orig)
        self.call_names: dict[str, str] = {}
        for m in self._orig:
            for c in calls_of(m):
                self.call_names[c.id] = c.function

    def __len__(self) -> int:
        return len(self._orig)

    def original(self, pos: int) -> ChatMessage:
        """Message at view position `pos` as given."""
        return self._orig[pos]

    def current(self, pos: int) -> ChatMessage:
        """Message at `pos` including replacements made so far."""
        return self._cur[pos]

    def role(self, pos: int) -> str:
        """pi role: `user`, `assistant` or `toolResult`."""
        m = self._orig[pos]
        if isinstance(m, ChatMessageTool):
            return "toolResult"
        if isinstance(m, ChatMessageUser):
            return "user"
        return "assistant"

    def replace(self, pos: int, **update: Any) -> ChatMessage:
        """Replace fields of the current message at `pos` with a copy (id kept); returns it."""
        new = self._cur[pos].model_copy(update=update)
        self._cur[pos] = new
        return new

    def set_result_text(self, pos: int, text: str) -> None:
        """Replace a tool result's whole content by one text block `text` (images dropped).

        For an errored result the error message is replaced too: inspect's providers send
        `error.message` instead of the content for errored tool messages, so without this the
        replacement would not reach the model.
        """
        m = self._cur[pos]
        update: dict[str, Any] = {"content": text}
        if isinstance(m, ChatMessageTool) and m.error is not None:
            update["error"] = dataclasses.replace(m.error, message=text)
        self.replace(pos, **update)

    def set_call_arguments(self, pos: int, call_id: str, arguments: dict[str, Any]) -> None:
        """Replace the arguments of tool call `call_id` in the assistant message at `pos`.

        `ToolCall` is a dataclass in inspect-ai 0.3.285: the call is copied with
        `dataclasses.replace` and the message with `model_copy` (the input call is untouched).
        """
        m = self._cur[pos]
        calls = [dataclasses.replace(c, arguments=arguments) if c.id == call_id else c for c in calls_of(m)]
        self.replace(pos, tool_calls=calls)

    def changed_positions(self) -> list[int]:
        """View positions whose message was replaced."""
        return [p for p in range(len(self._orig)) if self._cur[p] is not self._orig[p]]

    def output(self) -> list[ChatMessage]:
        """The full list (system messages included) with replacements applied."""
        out = list(self.input)
        for pos, i in enumerate(self.index):
            out[i] = self._cur[pos]
        return out
