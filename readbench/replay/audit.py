"""`readbench replay --audit`: how a recorded session read its files (issue 14 item 1).

From every read of any harness (`readbench.sessions.reads`, each harness's own evidence) and the
file versions the session implies (`readbench.sessions.file_ops`), per session:

| column | meaning |
|---|---|
| `read_calls` | reads: the read tool of any harness plus simple shell reads (`cat`, `sed -n`, `head`, `tail`, `nl -ba`) |
| `blind_reads` | reads with neither offset nor limit |
| `shell_reads` | reads through a shell tool |
| `over_cap_reads` | reads of a file version over the read cap: more than 2,000 lines (pi's and Claude Code's line cap), more than 51,200 bytes of known lines (pi's byte cap), or a read of it from the start without a limit that was cut |
| `capped_reads` | results the tool cut short of what was asked (pi's `[Showing lines ...]`, Claude Code's `numLines` short of `totalLines` without a limit, Codex's `Total output lines`) |
| `partial_reads` | results that hold part of the file only (asked for, or cut) |
| `paging_reads` | reads starting on the line after the previous read of the same file ended |
| `paging_chains` | runs of one read and at least one such continuation |
| `restarts` | reads from line 1 of a file read before |
| `read_tokens` | tokens of every read result (each counted once, as sent) |
| `capped_read_tokens` | tokens of the capped results |
| `redelivered_reads`, `redelivered_lines` | reads that delivered lines an earlier read of the same file version had delivered with the same text, and those lines |
| `redelivered_tokens` | their share of those results' tokens: result tokens x re-delivered lines / delivered lines |
| `carried_tokens` | `redelivered_tokens` x the requests that re-sent each result (every later call, until a compaction dropped it) |
| `input_tokens` | every request's tokens: readbench's count of the recorded messages plus the unrecorded head (the first priced call's billed prompt minus its count, sessions.md §5) |
| `redelivered_input_share` | `carried_tokens / input_tokens` |
| `billed_cost_usd`, `redelivered_cost_usd`, `redelivered_cost_share` | the bill, and the part of it the re-deliveries carried: each call's billed input cost x its share of carried tokens (every input token of a request carries an equal part of its input cost) |
| `context_tokens`, `tool_result_tokens`, `read_result_tokens`, `read_tool_tokens`, `shell_result_tokens` | tokens of every message sent (each once), of tool results, of read results (read tool and shell reads), of the read tool's results and of shell-tool results: the public pi audit's 84 % / 52 % (sessions.md §6) |
| `sent_tokens`, `sent_tool_result_tokens`, `sent_read_result_tokens` | the same as sent: summed over every request (a message counts once per request that carries it; the recorded messages only) |
| `repeat_reads`, `exact_repeat_reads` | reads of a file read before, and those whose result text equals an earlier result of that file (what exact-text dedup can match: 4 % in the public audit) |

Tokens are readbench's count (`readbench.cache.count_tokens`) in the tokenizer family of the
session's first priced model (`openai` when none is priced). `audit_reads.parquet` has one row
per read with the same facts.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessageTool

from readbench.cache.adapter import RequestBuilder
from readbench.cache.prices import canonical_model, get_model_spec, get_price
from readbench.harness import shell_tool
from readbench.replay.billing import billed, infer_tier
from readbench.replay.simulate import price_date
from readbench.sessions import Session
from readbench.sessions.file_ops import FileVersion, track_versions
from readbench.sessions.reads import ReadCall, read_calls, tool_results

__all__ = ["AUDIT_COLUMNS", "AUDIT_READ_COLUMNS", "LINE_CAP", "BYTE_CAP", "Audit", "audit_session", "session_family"]

#: The read caps a file is "over" (pi-tools.md §1.2; Claude Code's default limit is 2,000 lines too).
LINE_CAP, BYTE_CAP = 2000, 51_200

_COUNTS = ("read_calls", "blind_reads", "shell_reads", "over_cap_reads", "capped_reads", "partial_reads",
           "paging_reads", "paging_chains", "restarts", "read_tokens", "capped_read_tokens", "redelivered_reads",
           "redelivered_lines", "redelivered_tokens", "carried_tokens", "input_tokens", "context_tokens",
           "tool_result_tokens", "read_result_tokens", "read_tool_tokens", "shell_result_tokens", "sent_tokens",
           "sent_tool_result_tokens", "sent_read_result_tokens", "repeat_reads", "exact_repeat_reads")
#: Columns of audit.parquet: one row per session.
AUDIT_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "format": "string", "harness": "string", "calls": "int64",
    "token_family": "string", **{k: "int64" for k in _COUNTS}, "head_tokens": "int64",
    "redelivered_input_share": "float64", "billed_cost_usd": "float64", "redelivered_cost_usd": "float64",
    "redelivered_cost_share": "float64",
}
#: Columns of audit_reads.parquet: one row per read.
AUDIT_READ_COLUMNS: dict[str, str] = {
    "file": "string", "session_id": "string", "call": "int64", "tool_call_id": "string", "tool": "string",
    "path": "string", "file_key": "string", "version": "int64", "offset": "int64", "limit": "int64", "blind": "bool",
    "via_shell": "bool", "first_line": "int64", "last_line": "int64", "file_lines": "int64", "capped": "bool",
    "over_cap": "bool", "partial": "bool", "paging": "bool", "restart": "bool", "result_tokens": "int64",
    "redelivered_lines": "int64", "redelivered_tokens": "int64", "carried_calls": "int64", "carried_tokens": "int64",
}


@dataclass
class Audit:
    """One session's read audit.

    Attributes:
        row: the columns of `audit.parquet` (module docstring).
        reads: one dict per read (the columns of `audit_reads.parquet`).
        tracked: the reads with their file versions (`readbench.sessions.file_ops.track_versions`).
        results: the session's tool results by tool-call id.
    """

    row: dict[str, Any]
    reads: list[dict[str, Any]] = field(default_factory=list)
    tracked: list[Any] = field(default_factory=list)
    results: dict[str, ChatMessageTool] = field(default_factory=dict)


def session_family(session: Session) -> str:
    """Tokenizer family of the session's first priced model (`openai` when none is)."""
    for c in session.calls:
        try:
            return get_model_spec(canonical_model(c.model)).tokenizer
        except ValueError:
            continue
    return "openai"


def _over_cap(v: FileVersion, capped_from_start: bool) -> bool:
    n = v.line_count
    known_bytes = sum(len(t.encode()) + 1 for t in v.lines.values())
    return (n is not None and n > LINE_CAP) or known_bytes > BYTE_CAP or capped_from_start


def _call_input_cost(session: Session, i: int, tier: str | None, when: dt.date) -> tuple[float, float]:
    """(billed cost, its input part) of call i in USD; NaN when unpriced."""
    from readbench.replay.bill import billed_cost

    u = billed(session.calls[i])
    if u is None:
        return math.nan, math.nan
    model = canonical_model(session.calls[i].model)
    try:
        total = billed_cost(session, i, model, tier, when)
        out = u.output_tokens * get_price(model, u.input_tokens, as_of=price_date(model, when)).output_usd_per_mtok / 1e6
    except ValueError:
        return math.nan, math.nan
    return total, total - out


def audit_session(session: Session, builder: RequestBuilder | None = None) -> Audit:
    """The read audit of `session` (module docstring). `builder`: the RequestBuilder the session's
    other replays use (its memo counts each message once for all of them)."""
    builder = builder if builder is not None else RequestBuilder()
    family = session_family(session)
    results = tool_results(session)
    reads = read_calls(session, results)
    tracked, _ = track_versions(session, reads, results)
    tok = {m.tool_call_id: builder.message_tokens(m, family) for m in results.values()}
    # per context: tokens before each message, and where each tool result sits
    cum: list[list[int]] = []
    cum_tool: list[list[int]] = []  # the same for tool results only, and for read results only
    cum_read: list[list[int]] = []
    where: list[dict[str, int]] = []
    context_tokens = tool_tokens = shell_tokens = 0
    read_ids = {r.tool_call_id for r in reads}
    seen: set[int] = set()
    for ctx in session.contexts:
        acc, acc_t, acc_r = [0], [0], [0]
        pos: dict[str, int] = {}
        for k, m in enumerate(ctx):
            n = builder.message_tokens(m, family)
            acc.append(acc[-1] + n)
            is_tool = isinstance(m, ChatMessageTool)
            acc_t.append(acc_t[-1] + (n if is_tool else 0))
            acc_r.append(acc_r[-1] + (n if isinstance(m, ChatMessageTool) and m.tool_call_id in read_ids else 0))
            if isinstance(m, ChatMessageTool) and m.tool_call_id:
                pos.setdefault(m.tool_call_id, k)
            if id(m) not in seen:
                seen.add(id(m))
                context_tokens += n
                if isinstance(m, ChatMessageTool):
                    tool_tokens += n
                    shell_tokens += n if shell_tool(m.function) is not None else 0
        cum.append(acc)
        cum_tool.append(acc_t)
        cum_read.append(acc_r)
        where.append(pos)
    row: dict[str, Any] = {k: 0 for k in _COUNTS}
    row.update(file=session.source, session_id=session.session_id, format=session.format, harness=session.harness,
               calls=len(session.calls), token_family=family, context_tokens=context_tokens,
               tool_result_tokens=tool_tokens, shell_result_tokens=shell_tokens,
               sent_tokens=sum(cum[c.context][c.n_messages] for c in session.calls),
               sent_tool_result_tokens=sum(cum_tool[c.context][c.n_messages] for c in session.calls),
               sent_read_result_tokens=sum(cum_read[c.context][c.n_messages] for c in session.calls))
    seen_lines: dict[int, set[int]] = {}  # id(version) -> lines delivered so far
    capped_start: dict[int, bool] = {}
    for r, v, _lines, _new in tracked:
        if r.capped and r.limit is None and (r.first_line or 1) == 1:
            capped_start[id(v)] = True
    last: dict[str, ReadCall] = {}
    texts: dict[str, set[str]] = {}
    chain_open: dict[str, bool] = {}
    redelivered: list[tuple[str, int]] = []  # (tool_call_id, tokens)
    out_reads: list[dict[str, Any]] = []
    for r, v, lines, _new in tracked:
        t = tok.get(r.tool_call_id, 0)
        prev = last.get(v.key)
        paging = prev is not None and prev.last_line is not None and r.first_line == prev.last_line + 1
        restart = prev is not None and r.first_line == 1
        over = _over_cap(v, capped_start.get(id(v), False))
        n_lines = v.line_count
        partial = r.first_line is not None and (r.first_line > 1 or (n_lines is not None and (r.last_line or 0) < n_lines))
        got = seen_lines.setdefault(id(v), set())
        again = 0
        if lines is not None and r.first_line is not None:
            span = range(r.first_line, r.first_line + len(lines))
            again = sum(1 for k in span if k in got)
            got.update(span)
        re_tokens = round(t * again / len(lines)) if lines and again else 0
        text = results[r.tool_call_id].text if r.tool_call_id in results else None
        if prev is not None:
            row["repeat_reads"] += 1
            row["exact_repeat_reads"] += text is not None and text in texts.get(v.key, ())
        if text is not None:
            texts.setdefault(v.key, set()).add(text)
        if paging:
            row["paging_reads"] += 1
            row["paging_chains"] += not chain_open.get(v.key, False)
        chain_open[v.key] = paging
        row["read_calls"] += 1
        row["blind_reads"] += r.blind
        row["shell_reads"] += r.via_shell
        row["over_cap_reads"] += over
        row["capped_reads"] += bool(r.capped)
        row["partial_reads"] += partial
        row["restarts"] += restart
        row["read_tokens"] += t
        row["capped_read_tokens"] += t if r.capped else 0
        row["redelivered_reads"] += again > 0
        row["redelivered_lines"] += again
        row["redelivered_tokens"] += re_tokens
        if re_tokens:
            redelivered.append((r.tool_call_id, re_tokens))
        out_reads.append({
            "file": session.source, "session_id": session.session_id, "call": r.call_index, "tool_call_id": r.tool_call_id,
            "tool": r.tool, "path": r.path, "file_key": v.key, "version": v.index, "offset": r.offset, "limit": r.limit,
            "blind": r.blind, "via_shell": r.via_shell, "first_line": r.first_line, "last_line": r.last_line,
            "file_lines": n_lines, "capped": r.capped, "over_cap": over, "partial": partial, "paging": paging,
            "restart": restart, "result_tokens": t, "redelivered_lines": again, "redelivered_tokens": re_tokens,
            "carried_calls": 0, "carried_tokens": 0,
        })
        last[v.key] = r
    row["read_result_tokens"] = sum(tok.get(r.tool_call_id, 0) for r in reads)
    row["read_tool_tokens"] = sum(tok.get(r.tool_call_id, 0) for r in reads if not r.via_shell)
    _carry(session, row, out_reads, redelivered, where, cum)
    return Audit(row, out_reads, tracked, results)


def _carry(session: Session, row: dict[str, Any], out_reads: list[dict[str, Any]], redelivered: list[tuple[str, int]],
           where: list[dict[str, int]], cum: list[list[int]]) -> None:
    """Carried tokens per call and over the session, the head, the input and cost shares."""
    from readbench.replay.bill import session_date

    when = session_date(session)
    tier = infer_tier(session, [canonical_model(c.model) for c in session.calls], when)
    by_ctx: list[tuple[list[int], list[int]]] = []  # per context: sorted positions, prefix sums of tokens
    for pos in where:
        items = sorted((pos[cid], t) for cid, t in redelivered if cid in pos)
        acc = [0]
        for _, t in items:
            acc.append(acc[-1] + t)
        by_ctx.append(([p for p, _ in items], acc))
    carried_calls: dict[str, int] = {}
    head = 0
    for c in session.calls:
        u = billed(c)
        if u is not None:
            head = max(0, u.input_tokens - cum[c.context][c.n_messages])
            break
    carried = inputs = 0
    cost = cost_carried = 0.0
    priced = False
    for i, c in enumerate(session.calls):
        positions, acc = by_ctx[c.context]
        k = bisect.bisect_left(positions, c.n_messages)
        here = acc[k]
        carried += here
        counted = cum[c.context][c.n_messages] + head
        inputs += counted
        for cid, _ in redelivered:
            p = where[c.context].get(cid)
            if p is not None and p < c.n_messages:
                carried_calls[cid] = carried_calls.get(cid, 0) + 1
        total, inp = _call_input_cost(session, i, tier, when)
        if not math.isnan(total):
            priced = True
            cost += total
            cost_carried += inp * here / counted if counted else 0.0
    for r in out_reads:
        n = carried_calls.get(r["tool_call_id"], 0) if r["redelivered_tokens"] else 0
        r["carried_calls"], r["carried_tokens"] = n, n * r["redelivered_tokens"]
    row.update(carried_tokens=carried, input_tokens=inputs, head_tokens=head,
               redelivered_input_share=carried / inputs if inputs else math.nan,
               billed_cost_usd=cost if priced else math.nan, redelivered_cost_usd=cost_carried if priced else math.nan,
               redelivered_cost_share=cost_carried / cost if priced and cost else math.nan)
