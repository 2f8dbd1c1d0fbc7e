"""The recorded-session form every importer produces (docs/specs/sessions.md §1-4).

A `Session` is one request sequence of one harness: the ordered model calls, what each call
sent (inspect `ChatMessage`s), what the provider billed for it, and the events around them
(model and thinking-level changes, compactions, resumes, sub-agent links).

Requests are stored as prefixes of a few growing message lists (`Session.contexts`): call i sent
`contexts[calls[i].context][:calls[i].n_messages]`. An agent loop only appends, so one list
usually serves hundreds of calls; a compaction, a dropped aborted reply or a branch starts a new
list (which shares the unchanged message objects). Memory is linear in the session's size, not
quadratic in its length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolInfo

__all__ = ["EVENT_KINDS", "BilledUsage", "Call", "Event", "ImportIssues", "Session", "SessionFormat"]

#: Event kinds (sessions.md §1-4): a model switch, a thinking-level (or effort) change, a
#: compaction (the prompt rebuilt from a summary), a resume/restart of the harness process,
#: a sub-agent started from this session, a switch of branch (pi's tree).
EVENT_KINDS = ("model_change", "thinking_change", "compaction", "resume", "subagent", "branch")


#: More tokens than any one call is billed for: 50x the largest context window sold in 2026
#: (2 M tokens). A recorded count above it is not a bill (a unit slip, a corrupt line): the
#: importers leave the call unpriced with a warning instead of letting it dominate every total
#: (or overflow a 64-bit column).
MAX_BILLED_TOKENS = 100_000_000


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """What the provider billed for one call, in tokens.

    Attributes:
        uncached_input_tokens: input billed at the full input price.
        cache_read_tokens: input read from the prompt cache.
        cache_write_tokens: input written to the cache, all TTL tiers together (0 for providers
            without a write charge, where writes bill as uncached input).
        output_tokens: generated tokens (reasoning included).
        cache_write_5m_tokens, cache_write_1h_tokens: the write split by TTL tier when the file
            records it (Claude Code's `cache_creation`, pi's `cacheWrite1h`); None = not recorded.
        reasoning_tokens: the reasoning part of `output_tokens` when recorded, else None.
    """

    uncached_input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    reasoning_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"BilledUsage.{name} must be an int >= 0, got {v!r}")
            if v > MAX_BILLED_TOKENS:
                raise ValueError(f"BilledUsage.{name} = {v} is more than any one call is billed "
                                 f"(> {MAX_BILLED_TOKENS:,} tokens)")

    @property
    def input_tokens(self) -> int:
        """The whole prompt: uncached + cache read + cache write (tokens)."""
        return self.uncached_input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class Call:
    """One model call of a session.

    Attributes:
        index: position in `Session.calls` (0-based).
        context, n_messages: the request sent is `Session.contexts[context][:n_messages]`.
        model: the model id as the file spells it (e.g. `claude-opus-4-6`); see
            `readbench.cache.canonical_model` for the priced name.
        provider: `anthropic`, `openai`, `google`, ... as recorded; None when the file does not say.
        ts_start_seconds: request start (Unix seconds); None when not recorded.
        ts_end_seconds: when the response was complete (Unix seconds), when recorded.
        ts_first_token_seconds: first output token (Unix seconds), when recorded.
        usage: billed usage; None when the file records none for this call (unpriced).
        cost_usd: the cost the harness recorded (USD), when it records one.
        cost_detail: the harness's cost by token class (USD; pi: `input`, `output`, `cacheRead`,
            `cacheWrite`), when recorded: the write price it implies tells the TTL tier.
        output: the response (text, thinking, tool calls), None when not recorded.
        params: fingerprint of request settings rendered into the cached prefix (e.g.
            `thinking=on`); a change voids the messages tier (caching.md §1.4).
        stop_reason: as recorded (`stop`, `toolUse`, `aborted`, `error`, `end_turn`, ...).
        tools: tool definitions sent, when recorded (the same tuple object across calls).
        kind: `model` for an ordinary call, `cache_warm` for a recorded pre-warm request.
        billing_id: the provider's id of the billed response when the file records one (Claude
            Code: `message.id` + `requestId`); calls with equal ids in the files of one session were
            billed once (`readbench.sessions.billing.bill_once`).
        billed_in: for a call whose bill another file (or an earlier line) of the same session
            carries: `file#session id` of that copy; its `usage` is then None.
    """

    index: int
    context: int
    n_messages: int
    model: str
    provider: str | None = None
    ts_start_seconds: float | None = None
    ts_end_seconds: float | None = None
    ts_first_token_seconds: float | None = None
    usage: BilledUsage | None = None
    cost_usd: float | None = None
    cost_detail: dict[str, float] | None = None
    output: ChatMessageAssistant | None = None
    params: str = ""
    stop_reason: str | None = None
    tools: tuple[ToolInfo, ...] | None = None
    kind: str = "model"
    billing_id: str | None = None
    billed_in: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened between calls.

    Attributes:
        kind: one of `EVENT_KINDS`.
        call_index: the first call it affects (= the number of calls before it).
        ts_seconds: when (Unix seconds), when recorded.
        detail: format-specific facts (e.g. `{"from": ..., "to": ...}` for a model change,
            `{"tokens_before": ...}` for a compaction, `{"session_id": ...}` for a sub-agent).
    """

    kind: str
    call_index: int
    ts_seconds: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"event kind {self.kind!r} not in {EVENT_KINDS}")


@dataclass
class ImportIssues:
    """What an import could not take as is, counted (never fatal for one line).

    Attributes:
        warnings: one message per problem, each naming `file:line`, in file order (the first
            `MAX_WARNINGS` only; `malformed_lines` counts them all).
        malformed_lines: lines that are not JSON objects, or entries that break the format.
        unknown_types: entry types the importer does not know, with counts.
        skipped: known entries that are not part of any request (by kind), with counts.
    """

    MAX_WARNINGS = 50

    warnings: list[str] = field(default_factory=list)
    malformed_lines: int = 0
    unknown_types: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)

    def bad_usage(self, where: str, exc: Exception) -> None:
        """Record a call whose recorded usage is not a bill (NaN, negative or non-numeric token
        counts): it stays in the session, unpriced, and the warning says why (GitHub issue 27)."""
        self.warn(where, f"usage is not a bill ({exc}): the call is left unpriced")

    def warn(self, where: str, message: str) -> None:
        """Record one malformed line or entry: `where` is `file:line`."""
        self.malformed_lines += 1
        if len(self.warnings) < self.MAX_WARNINGS:
            self.warnings.append(f"{where}: {message}")


@dataclass
class Session:
    """One imported session (module docstring).

    Attributes:
        source: the file it came from.
        format: the importer's registry name (`pi`, `claude-code`, `codex`, `codex-legacy`,
            `inspect`).
        harness: `pi`, `claude-code`, `codex` or `inspect`.
        harness_version: as recorded, else None.
        session_id: the file's own session id (or a sample id for inspect logs).
        parent_session_id: for a sub-agent, the session that started it.
        contexts: growing message lists; each call sends a prefix of one of them.
        calls: the model calls, in request order.
        events: model/thinking changes, compactions, resumes, sub-agent links, in order.
        issues: malformed lines, unknown and skipped entries.
        cwd: the working directory recorded by the harness, when it records one.
    """

    source: str
    format: str
    harness: str
    harness_version: str | None
    session_id: str
    parent_session_id: str | None = None
    contexts: list[list[ChatMessage]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    issues: ImportIssues = field(default_factory=ImportIssues)
    cwd: str | None = None

    def request(self, index: int) -> list[ChatMessage]:
        """The messages call `index` sent (a new list; the message objects are shared).

        Raises:
            IndexError: no such call.
        """
        call = self.calls[index]
        return self.contexts[call.context][: call.n_messages]

    @property
    def priced(self) -> bool:
        """True when at least one call carries billed usage."""
        return any(c.usage is not None for c in self.calls)

    @property
    def messages(self) -> list[ChatMessage]:
        """The final transcript: the last context, whole (what the next call would extend)."""
        return list(self.contexts[-1]) if self.contexts else []


@dataclass(frozen=True)
class SessionFormat:
    """One importable format.

    Attributes:
        name: registry key (`pi`, `claude-code`, `codex`, `codex-legacy`, `inspect`).
        harness: the harness that writes it (a `readbench.harness` record's name).
        description: one line for `readbench replay --help` and error messages.
        sniff: `(head_bytes, first_objects) -> bool`; `first_objects` are the first
            `SNIFF_LINES` JSON-object lines (empty for a non-JSONL file).
        load: `(path) -> list[Session]`; raises ValueError naming `path` for an unreadable file.
        group_key: `(first_objects) -> key or None`: files of one format with the same key hold
            one session's request sequences (Claude Code: a session's main file and its sub-agent
            files share the `sessionId`) and are imported together, so that a call they repeat is
            billed once (`readbench.sessions.billing.bill_once`); None = every file stands alone.
    """

    name: str
    harness: str
    description: str
    sniff: Callable[[bytes, list[dict[str, Any]]], bool]
    load: Callable[[Path], list["Session"]]
    group_key: Callable[[list[dict[str, Any]]], str | None] | None = None

    def describe(self) -> dict[str, Any]:
        """`{"name", "harness", "description"}` (the registry's listing)."""
        return {"name": self.name, "harness": self.harness, "description": self.description}
