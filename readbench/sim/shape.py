"""The reading shape of sessions: the six numbers ``readbench sim calibrate --against`` compares
between recorded sessions and the sim's own runs (issue 16).

Both sides go through the same code: the sim's runs are read back from their inspect logs with
readbench.sessions (format ``inspect``), so a difference is never a difference of definitions.
Reads are readbench.sessions.reads.ReadCall (any harness; shell reads included).

| metric | definition (pooled over sessions unless said) |
|---|---|
| ``blind_read_share`` | reads with neither offset nor limit / reads |
| ``reads_per_file`` | mean over sessions of reads / distinct files read |
| ``reread_ratio`` | mean over sessions of 1 - distinct (file, line) delivered / lines delivered; an edit of a file starts its lines afresh (as readbench.metrics.reads keys lines by content) |
| ``lines_per_read`` | lines delivered / reads whose delivered range is known |
| ``calls_per_prompt`` | model calls / user prompts |
| ``read_result_share`` | tokens of read results in the requests / tokens of all non-system messages in the requests (o200k; the system prompt and tool schemas are left out on both sides because recorded sessions do not hold them) |
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageTool

from readbench.cache import count_tokens
from readbench.sessions import Session
from readbench.sessions.reads import read_calls
from readbench.sim.evidence import prompt_tools

__all__ = ["METRICS", "Shape", "session_shape", "shape_of"]

_NAN = float("nan")

METRICS = ("blind_read_share", "reads_per_file", "reread_ratio", "lines_per_read", "calls_per_prompt",
           "read_result_share")


@dataclass(frozen=True)
class Shape:
    """The six metrics (module docstring) over ``sessions`` sessions, with the counts behind them.
    A metric the sessions do not define (no read, no delivered line, no request token) is NaN, not 0."""

    sessions: int
    calls: int
    prompts: int
    reads: int
    blind_read_share: float
    reads_per_file: float
    reread_ratio: float
    lines_per_read: float
    calls_per_prompt: float
    read_result_share: float
    median_file_lines: float | None
    """Median line count of the files read, where the harness says (a corpus contrast)."""


@dataclass(frozen=True)
class _One:
    calls: int
    prompts: int
    reads: int
    blind: int
    files: int
    delivered: int
    unique: int
    ranged_reads: int
    read_tokens: int
    tokens: int
    file_lines: tuple[int, ...]


def _tokens(message: ChatMessage, memo: dict[int, tuple[ChatMessage, int]]) -> int:
    hit = memo.get(id(message))
    if hit is None or hit[0] is not message:
        text = message.error.message if isinstance(message, ChatMessageTool) and message.error else message.text
        hit = (message, count_tokens(text))
        memo[id(message)] = hit
    return hit[1]


def session_shape(session: Session) -> _One:
    """Counts of one session (summed or averaged by :func:`shape_of`)."""
    reads = read_calls(session)
    prompts = prompt_tools(session)
    edits: dict[int, set[str]] = {}
    for p in prompts:
        for a in p.actions:
            if a.kind == "edit" and not a.error:
                edits.setdefault(a.call_index, set()).update(a.paths)
    seen: dict[str, set[int]] = {}
    delivered = unique = ranged = 0
    by_call: dict[int, list] = {}
    for r in reads:
        by_call.setdefault(r.call_index, []).append(r)
    for call in session.calls:
        for r in by_call.get(call.index, []):
            if not r.found or r.first_line is None or r.last_line is None or r.last_line < r.first_line:
                continue  # a read with no result delivered nothing: its range is only what was asked for
            lines = set(range(r.first_line, r.last_line + 1))
            path = r.path
            fresh = lines - seen.setdefault(path, set())
            seen[path] |= lines
            delivered += len(lines)
            unique += len(fresh)
            ranged += 1
        for path in edits.get(call.index, ()):
            for key in [k for k in seen if k == path or k.endswith("/" + path) or path.endswith("/" + k)]:
                seen[key] = set()
    read_ids = {r.tool_call_id for r in reads}
    memo: dict[int, tuple[ChatMessage, int]] = {}
    read_tokens = tokens = 0
    for call in session.calls:
        for m in session.request(call.index):
            if isinstance(m, ChatMessageSystem):
                continue
            n = _tokens(m, memo)
            tokens += n
            if isinstance(m, ChatMessageTool) and m.tool_call_id in read_ids:
                read_tokens += n
    return _One(calls=len(session.calls), prompts=len(prompts), reads=len(reads), blind=sum(r.blind for r in reads),
                files=len({r.path for r in reads}), delivered=delivered, unique=unique, ranged_reads=ranged,
                read_tokens=read_tokens, tokens=tokens,
                file_lines=tuple(r.total_lines for r in reads if r.total_lines))


def shape_of(sessions: Iterable[Session]) -> Shape:
    """The six metrics over ``sessions`` (module docstring).

    Raises:
        ValueError: no session with model calls.
    """
    ones = [session_shape(s) for s in sessions if s.calls]
    if not ones:
        raise ValueError("no session with model calls")
    reads = sum(o.reads for o in ones)
    with_files = [o for o in ones if o.files]
    with_lines = [o for o in ones if o.delivered]
    lines = sorted(n for o in ones for n in o.file_lines)
    return Shape(
        sessions=len(ones), calls=sum(o.calls for o in ones), prompts=sum(o.prompts for o in ones), reads=reads,
        blind_read_share=sum(o.blind for o in ones) / reads if reads else _NAN,
        reads_per_file=sum(o.reads / o.files for o in with_files) / len(with_files) if with_files else _NAN,
        reread_ratio=sum(1 - o.unique / o.delivered for o in with_lines) / len(with_lines) if with_lines else _NAN,
        lines_per_read=sum(o.delivered for o in ones) / ranged if (ranged := sum(o.ranged_reads for o in ones)) else _NAN,
        calls_per_prompt=sum(o.calls for o in ones) / max(1, sum(o.prompts for o in ones)),
        read_result_share=sum(o.read_tokens for o in ones) / tokens if (tokens := sum(o.tokens for o in ones)) else _NAN,
        median_file_lines=float(lines[len(lines) // 2]) if lines else None,
    )
