"""Shared importer machinery: streaming JSONL lines with named warnings, and the context
bookkeeping that turns "the messages the harness would send now" into `Call` prefixes.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.sessions._types import Call, Event, ImportIssues, Session

__all__ = ["SessionBuilder", "iter_jsonl", "iso_seconds"]


def iter_jsonl(path: Path, issues: ImportIssues, *, start: int = 1) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line number, object)` for each JSON-object line of `path`, one line at a time.

    Blank lines are skipped. A line that is not valid UTF-8, not JSON, or not a JSON object is
    recorded in `issues` as a warning naming `path:line` and skipped; reading goes on. A line
    holding several whole objects back to back (a lost newline) is a warning too, and each of
    its objects is yielded, under the same line number.

    Raises:
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start):
            if not raw.strip():
                continue
            where = f"{path}:{n}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                issues.warn(where, f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            try:
                obj = json.loads(line)
            except RecursionError:  # issue 27 probe: 100,000 nested brackets were a traceback
                issues.warn(where, "invalid JSON (nested deeper than the JSON parser's recursion limit)")
                continue
            except json.JSONDecodeError as exc:
                joined = _split_joined(line) if exc.msg == "Extra data" else None
                if joined is None:
                    issues.warn(where, f"invalid JSON ({exc.msg}, column {exc.colno})")
                    continue
                issues.warn(where, f"{len(joined)} JSON objects on one line (a missing newline): each read as an entry")
                for obj in joined:
                    yield n, obj
                continue
            if not isinstance(obj, dict):
                issues.warn(where, f"expected a JSON object, got {type(obj).__name__}")
                continue
            yield n, obj


_DECODER = json.JSONDecoder()


def _split_joined(line: str) -> list[dict[str, Any]] | None:
    """The objects of a line that holds several whole JSON objects written back to back (seen in
    real pi sessions, where two appends lost the newline between them); None unless the whole
    line is such objects."""
    out: list[dict[str, Any]] = []
    pos, end = 0, len(line.rstrip())
    while pos < end:
        try:
            obj, pos = _DECODER.raw_decode(line, pos)
        except json.JSONDecodeError:
            return None
        if not isinstance(obj, dict):
            return None
        out.append(obj)
        while pos < end and line[pos] in " \t\r":
            pos += 1
    return out if len(out) > 1 else None


def iso_seconds(value: Any) -> float | None:
    """Unix seconds from an ISO-8601 string (`Z` or an offset) or from Unix milliseconds.

    Returns None for a missing or unreadable value (never raises).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) / 1000.0
    if isinstance(value, str) and value:
        try:
            t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)
        return t.timestamp()
    return None


class SessionBuilder:
    """Accumulates one session while an importer walks its file.

    The importer keeps "the messages the harness would send next" by calling `append` (the
    usual case) or `reset` (a compaction, an edit, a dropped reply: anything that is not an
    append), and `call(...)` at each model call. Appends extend the current context list in
    place; a reset starts a new one, so earlier calls keep their exact prefixes.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._live: list[ChatMessage] | None = None  # the current context list

    @property
    def live(self) -> list[ChatMessage]:
        """The messages the harness would send now (do not mutate: use append/reset)."""
        return self._live if self._live is not None else []

    def append(self, message: ChatMessage) -> None:
        """Add one message at the end of what the next call sends."""
        if self._live is None:
            self.reset([])
        self.live.append(message)

    def reset(self, messages: list[ChatMessage]) -> None:
        """Replace what the next call sends with `messages` (starts a new context list)."""
        self._live = list(messages)
        self.session.contexts.append(self._live)

    def call(self, n_messages: int | None = None, context: int | None = None, **fields: Any) -> Call:
        """Record one model call that sends the current messages; returns the Call.

        `n_messages`, `context`: the call sent only the first `n_messages` of context `context`
        (a call whose usage the file records after later messages, e.g. Codex's tool outputs, or
        after a compaction started a new context); default all of the current context. `fields`
        are the other `Call` attributes (model, provider, usage, ...).

        Raises:
            ValueError: `context` is not a context of the session, or `n_messages` is negative or
                beyond that context.
        """
        if self._live is None:
            self.reset([])
        ctx = len(self.session.contexts) - 1 if context is None else context
        if not 0 <= ctx < len(self.session.contexts):
            raise ValueError(f"context={context} is not a context of the session (0..{len(self.session.contexts) - 1})")
        msgs = self.session.contexts[ctx]
        n = len(msgs) if n_messages is None else n_messages
        if not 0 <= n <= len(msgs):
            raise ValueError(f"n_messages={n_messages} is outside context {ctx} (0..{len(msgs)})")
        call = Call(index=len(self.session.calls), context=ctx, n_messages=n, **fields)
        self.session.calls.append(call)
        return call

    def event(self, kind: str, ts_seconds: float | None = None, **detail: Any) -> None:
        """Record an event before the next call."""
        self.session.events.append(Event(kind, len(self.session.calls), ts_seconds, detail))
