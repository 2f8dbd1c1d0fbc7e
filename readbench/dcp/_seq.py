"""Incremental per-history columns shared by the fast projection paths (`_cache.py`).

The agent loop calls `project` before every model call on a history that only grows: the
messages of call k are the same Python objects at the same positions in call k+1. A `SeqBase`
remembers the messages it has consumed and, per `PiView` position (system messages excluded,
as in `readbench.dcp._view`), the facts that depend only on the message itself and on what
came before it. `SeqBase.sync` appends the new tail when the input extends the consumed
messages (identity check, `operator.is_`), and reports `False` when it does not (the caller
then starts a fresh sequence).

Assumption (documented on `ProjectionCache`): messages are not mutated in place after they
were passed to `project`; inspect and the agent loop replace messages, they never edit them.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser

from readbench.dcp._view import blocks, calls_of, text_chars

__all__ = ["SeqBase", "copy_with_text"]


def copy_with_text(msg: ChatMessage, text: str) -> ChatMessage:
    """`PiView.set_result_text` applied to an original message: content (and error message) = `text`."""
    update: dict[str, Any] = {"content": text}
    if isinstance(msg, ChatMessageTool) and msg.error is not None:
        update["error"] = dataclasses.replace(msg.error, message=text)
    return msg.model_copy(update=update)


class SeqBase:
    """Columns over the view positions of one growing history.

    Attributes (index = view position unless noted): `msgs` input messages consumed (input
    index); `index` input index; `roles` pi role (`user`, `assistant`, `toolResult`); `users`
    view positions of user prompts; `results` view positions of tool results; `r_chars` per
    result ordinal, Σ UTF-16 length of its text blocks; `r_copy` per result ordinal, the last
    replacement made `(text, copy)` (reused while the text is unchanged).
    """

    def __init__(self) -> None:
        self.msgs: list[ChatMessage] = []
        self.index: list[int] = []
        self.roles: list[str] = []
        self.users: list[int] = []
        self.results: list[int] = []
        self.r_chars: list[int] = []
        self.r_copy: list[tuple[str, ChatMessage] | None] = []

    def sync(self, messages: list[ChatMessage]) -> bool:
        """Consume the messages appended since the last call; False when `messages` does not
        start with exactly the consumed message objects (nothing is consumed then)."""
        done = len(self.msgs)
        if len(messages) < done or not all(map(operator.is_, self.msgs, messages)):
            return False
        self.consume(messages)
        return True

    def consume(self, messages: list[ChatMessage]) -> None:
        """`sync` for a caller that knows `messages` starts with the consumed message objects
        (it checked them against another sequence that consumed the same messages)."""
        for i in range(len(self.msgs), len(messages)):
            m = messages[i]
            self.msgs.append(m)
            if m.role == "system":
                continue
            pos = len(self.roles)
            self.index.append(i)
            if isinstance(m, ChatMessageTool):
                role = "toolResult"
            elif isinstance(m, ChatMessageUser):
                role = "user"
            else:
                role = "assistant"
            self.roles.append(role)
            if role == "user":
                self.users.append(pos)
            elif role == "toolResult":
                self.results.append(pos)
                self.r_chars.append(text_chars(m.content))
                self.r_copy.append(None)
            self.add(pos, m, role)

    def add(self, pos: int, msg: ChatMessage, role: str) -> None:
        """Hook for subclasses: record family-specific facts of the message at `pos`."""

    def replaced(self, ordinal: int, text: str) -> ChatMessage:
        """The result `ordinal` with its content replaced by `text` (cached copy when unchanged)."""
        hit = self.r_copy[ordinal]
        if hit is not None and hit[0] == text:
            return hit[1]
        new = copy_with_text(self.msgs[self.index[self.results[ordinal]]], text)
        self.r_copy[ordinal] = (text, new)
        return new


def text_only(msg: ChatMessage) -> bool:
    """`_text_only_assistant` for an assistant message: no tool calls, some non-blank text block."""
    if calls_of(msg):
        return False
    return any(kind == "text" and t.strip() for kind, t in blocks(msg.content))
