"""OpenAI Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`, sessions.md §3).

Current format: lines `{timestamp, type, payload}`. `response_item` payloads are the Responses
API items the model sees: `message` (user/developer/assistant), `reasoning`, `function_call`,
`function_call_output`, `custom_tool_call(_output)`. Usage is in `event_msg` payloads of type
`token_count`: Codex writes each one twice (again after the turn's `turn_context`), so a call is
a `token_count` whose cumulative `info.total_token_usage` differs from the previous one, billed
as its `info.last_token_usage` (when the usage is not numbers, e.g. `"[REDACTED]"` in a shared
export, a call is a `token_count` after new output items, imported without usage) (`input_tokens` includes `cached_input_tokens`: uncached =
input - cached; OpenAI models before GPT-5.6 have no write charge, caching.md §2.1). In the real
rollouts seen (cli 0.77-0.125) a response's output items (reasoning, calls, assistant text) are
written as they stream and its `token_count` when it completes: the call's request is every
item before those outputs and its output the items since. Codex 0.144 writes the tool outputs
of a response before its `token_count`: the request is still what came before the response's
outputs (the tool outputs go to the next call; attributing them to this one shifted every billed
prompt by one call on a real rollout). A `token_count` written before any output item (the other
order, told from where the file's first usage stands) takes the items that follow as its output;
in the items-first order a `token_count` with no new output (a compaction's own request) is a call
without a recorded output. The model
and reasoning effort come from the latest `turn_context` (an effort change is a
`thinking_change` event: `reasoning.effort` is part of the cached prefix, caching.md §2.2).
A `web_search_call` item records the search, not its results, which the model does see: on a
real gpt-5.5 rollout the billed prompt outgrew the recorded one by 2-6k tokens after each search
(the replay's calibration finds these as unrecorded insertions).
A tool output is imported as the model saw it: cut to the turn's `truncation_policy` as Codex
cuts its history (`readbench.sessions._codex_truncate`; rollouts keep the whole output).
A sub-agent spawned from a thread (`session_meta.source.subagent.thread_spawn`, cli 0.119+) begins
its rollout with the parent thread's history and token counts before its own `task_started`: those
calls are the parent's (billed in its rollout): imported with their requests, without usage,
`billed_in` naming the parent thread.
`session_meta.base_instructions.text` is the system prompt when recorded; a `session_meta` after
calls were made is a `resume` event; a `compacted` line replaces the history with its
`replacement_history`.
Review mode (`/review`, cli 0.77): between `entered_review_mode` and `exited_review_mode` the review
runs as its own conversation (its prompt is not a response item; its token counts restart from
zero: 3,113 input tokens against the thread's 94,337 on a real rollout): its calls get a context of
their own (the system prompt, then what the rollout records during the review), and on exit the
thread's context resumes with those items appended; the thread's counter resumes too, and the
`token_count` Codex writes again with the thread's last totals is that copy, not a new call (it was
billed twice).

Older format (Sept 2025): a first line `{id, timestamp, instructions}`, then bare items and
`{"record_type": "state"}` lines, no timestamps and no token counts: imported as a transcript
(format `codex-legacy`), one call per run of output items, unpriced.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem

from readbench.sessions._build import SessionBuilder, iso_seconds, iter_jsonl
from readbench.sessions._codex_items import ResponseItems, is_output
from readbench.sessions._codex_truncate import policy_budget
from readbench.sessions._types import BilledUsage, ImportIssues, Session, SessionFormat

__all__ = ["FORMATS", "load", "load_legacy"]

_ROLLOUT_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def _usage(last: Any, issues: ImportIssues | None = None, where: str = "") -> BilledUsage | None:
    if not isinstance(last, dict):
        return None
    try:
        inp = int(last.get("input_tokens") or 0)
        cached = int(last.get("cached_input_tokens") or 0)
        return BilledUsage(
            uncached_input_tokens=max(inp - cached, 0), cache_read_tokens=min(cached, inp), cache_write_tokens=0,
            output_tokens=int(last.get("output_tokens") or 0),
            reasoning_tokens=int(last["reasoning_output_tokens"]) if last.get("reasoning_output_tokens") is not None else None,
        )
    except (TypeError, ValueError, OverflowError) as exc:
        if issues is not None:
            issues.bad_usage(where, exc)
        return None


def load(path: Path) -> list[Session]:
    """Import one current-format Codex rollout (module docstring).

    Raises:
        OSError: the file cannot be read.
    """
    issues = ImportIssues()
    session = Session(str(path), "codex", "codex", None, path.stem, issues=issues)
    b = SessionBuilder(session)
    items = ResponseItems(b, issues)
    model, effort = "", None
    last_total: Any = None
    last_ts: float | None = None
    first_output_ts: float | None = None
    open_call: int | None = None  # index of the call whose outputs are being written
    # a response whose outputs were followed by its tool outputs before its token_count (cli
    # 0.144): (its context, messages it sent, its reply, first output, start, last output time)
    awaiting: tuple[int, int, ChatMessageAssistant, float | None, float | None, float | None] | None = None
    last_output_ts: float | None = None
    items_first = _items_first(path)
    # a sub-agent spawned from a thread (cli 0.119+) starts its rollout with the parent thread's
    # history, token_count events included, before its own task: those calls are the parent's
    spawned_from: str | None = None
    tasks = metas = 0
    review: tuple[list[ChatMessage], Any] | None = None  # in review mode: (the thread's messages, its last totals)
    review_start = 0
    for n, obj in iter_jsonl(path, issues):
        where = f"{path}:{n}"
        kind, payload = obj.get("type"), obj.get("payload")
        ts = iso_seconds(obj.get("timestamp"))
        if not isinstance(payload, dict):
            issues.warn(where, f"{kind} line without an object payload")
            continue
        if kind == "session_meta":
            spawn = (payload.get("source") or {}).get("subagent") if isinstance(payload.get("source"), dict) else None
            first_meta = metas == 0
            metas += 1
            if first_meta and isinstance(spawn, dict) and isinstance(spawn.get("thread_spawn"), dict):
                spawned_from = str(spawn["thread_spawn"].get("parent_thread_id") or "parent thread")
            if session.calls:  # written again when Codex resumes the rollout
                b.event("resume", ts, cli_version=payload.get("cli_version"))
            if spawned_from is None or first_meta:  # a spawned rollout's second meta is the parent thread's
                session.session_id = str(payload.get("id") or session.session_id)
            else:
                session.parent_session_id = spawned_from
            session.harness_version = payload.get("cli_version")
            session.cwd = payload.get("cwd")
            base = payload.get("base_instructions")
            text = base.get("text") if isinstance(base, dict) else payload.get("instructions")
            if isinstance(text, str) and text:
                b.reset([ChatMessageSystem(content=text)] + [m for m in b.live if not isinstance(m, ChatMessageSystem)])
        elif kind == "turn_context":
            items.budget = policy_budget(payload.get("truncation_policy"))
            if payload.get("model") and payload["model"] != model:
                if model:
                    b.event("model_change", ts, **{"from": model, "to": payload["model"]})
                model = str(payload["model"])
            if payload.get("effort") != effort:
                if effort is not None:
                    b.event("thinking_change", ts, **{"from": effort, "to": payload.get("effort")})
                effort = payload.get("effort")
        elif kind == "response_item":
            if is_output(payload):
                if not items.pending:
                    first_output_ts = ts
                last_output_ts = ts
                items.item(payload, where)
            else:
                sent = len(b.live)
                out = items.flush()
                ctx = len(session.contexts) - 1
                if out is not None and open_call is not None:
                    _attach_output(session, open_call, out)
                elif out is not None and (awaiting is None or awaiting[0] != ctx):
                    # its token_count is still to come, after this input; more outputs of the same
                    # response (parallel tool calls run while it streams) keep the first's request
                    awaiting = (ctx, sent, out, first_output_ts, last_ts, last_output_ts)
                open_call = None
                items.item(payload, where)
                last_ts = ts
        elif kind == "compacted":
            items.flush()
            open_call = None  # a response awaiting its token_count keeps the context it was sent in
            history = [it for it in payload.get("replacement_history") or [] if isinstance(it, dict)]
            msgs = [m for m in map(lambda it: items.history_item(it, where), history) if m is not None]
            system = [m for m in b.live if isinstance(m, ChatMessageSystem)]
            b.reset(system + msgs)
            b.event("compaction", ts)
        elif kind == "event_msg":
            if payload.get("type") == "task_started":
                tasks += 1
            if payload.get("type") in ("entered_review_mode", "exited_review_mode"):
                out = items.flush()
                if out is not None and open_call is not None:
                    _attach_output(session, open_call, out)
                open_call = None
            if payload.get("type") == "entered_review_mode" and review is None:
                review = (list(b.live), last_total)
                b.reset([m for m in b.live if isinstance(m, ChatMessageSystem)])
                review_start = len(b.live)
                continue
            if payload.get("type") == "exited_review_mode" and review is not None:
                b.reset(review[0] + b.live[review_start:])
                last_total, review = review[1], None
                continue
            if payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, dict):
                continue  # the turn's first token_count: no usage yet
            total = info.get("total_token_usage")
            if isinstance(total, dict):
                if total == last_total:
                    continue  # the copy written again after the next turn_context
                last_total = total
                usage = _usage(info.get("last_token_usage"), issues, where)
            else:
                # usage not recorded as numbers (e.g. an export that redacted it): one response is
                # one call when its output items came since the previous token_count
                if not items.pending and awaiting is None:
                    continue
                if not issues.skipped["token_count:usage_not_recorded"]:
                    issues.warn(where, f"token_count usage is {total!r}, not token counts: the calls are imported unpriced")
                issues.skipped["token_count:usage_not_recorded"] += 1
                usage = None
            billed_in = None
            if spawned_from is not None and tasks < 2 and usage is not None:
                billed_in, usage = f"codex thread {spawned_from}", None  # the parent's call, replayed
                issues.skipped["token_count:parent_thread"] += 1
            # every call here: this token_count's usage, under the turn's model and effort
            call = functools.partial(b.call, model=model, provider="openai", usage=usage, params=f"effort={effort}",
                                     billed_in=billed_in)
            if items.pending:
                # the response's items came first (what real rollouts show): they are this call's
                # output, and its request is what came before them
                index = call(ts_start_seconds=last_ts, ts_end_seconds=ts, ts_first_token_seconds=first_output_ts).index
                out = items.flush()
                if out is not None:
                    _attach_output(session, index, out)
                open_call = None
            elif awaiting is not None:
                # the response's tool outputs were written before its usage (cli 0.144): its
                # request is what came before its outputs, not those tool outputs
                ctx, sent, out, first, start, end = awaiting
                index = call(n_messages=sent, context=ctx, ts_start_seconds=start, ts_end_seconds=end,
                             ts_first_token_seconds=first).index
                _attach_output(session, index, out)
            elif items_first:
                # no output recorded for this usage (e.g. the compaction's own request)
                call(ts_start_seconds=last_ts, ts_end_seconds=ts)
            else:
                # the usage came first: the items that follow are this call's output
                open_call = call(ts_start_seconds=last_ts, ts_end_seconds=ts).index
            awaiting = None
            last_ts = ts
        else:
            issues.unknown_types[str(kind)] += 1
    out = items.flush()
    if out is not None and open_call is not None:
        _attach_output(session, open_call, out)
    return [session]


def _items_first(path: Path) -> bool:
    """Whether the rollout writes a response's output items before its `token_count` (every real
    rollout seen): the first `token_count` with usage follows an output item. False for the other
    order (usage first, its outputs after), where a `token_count` opens the call that follows."""
    seen_output = False
    for _, obj in iter_jsonl(path, ImportIssues()):
        payload = p if isinstance(p := obj.get("payload"), dict) else {}
        if obj.get("type") == "response_item" and is_output(payload):
            seen_output = True
        elif obj.get("type") == "event_msg" and payload.get("type") == "token_count" and isinstance(payload.get("info"), dict):
            return seen_output
    return True


def _attach_output(session: Session, index: int, output: ChatMessageAssistant) -> None:
    session.calls[index] = dataclasses.replace(session.calls[index], output=output)


def load_legacy(path: Path) -> list[Session]:
    """Import one older-format Codex transcript (module docstring): unpriced calls.

    Raises:
        OSError: the file cannot be read.
    """
    issues = ImportIssues()
    session = Session(str(path), "codex-legacy", "codex", None, path.stem, issues=issues)
    b = SessionBuilder(session)
    items = ResponseItems(b, issues)
    first = True
    for n, obj in iter_jsonl(path, issues):
        if first:
            first = False
            session.session_id = str(obj.get("id") or session.session_id)
            if isinstance(obj.get("instructions"), str) and obj["instructions"]:
                b.reset([ChatMessageSystem(content=obj["instructions"])])
            continue
        if obj.get("record_type") == "state":
            issues.skipped["state"] += 1
            continue
        output = is_output(obj)
        if output and not items.pending:
            b.call(model="", provider="openai")  # a response starts: it sent what came before
        if output:
            items.item(obj, f"{path}:{n}")
            continue
        out = items.flush()
        if out is not None:
            _attach_output(session, len(session.calls) - 1, out)
        items.item(obj, f"{path}:{n}")
    out = items.flush()
    if out is not None:
        _attach_output(session, len(session.calls) - 1, out)
    return [session]


def _sniff(head: bytes, objects: list[dict[str, Any]]) -> bool:
    return bool(objects) and all(set(o) >= {"type", "payload"} and o.get("type") in _ROLLOUT_TYPES for o in objects[:5])


def _sniff_legacy(head: bytes, objects: list[dict[str, Any]]) -> bool:
    if len(objects) < 1 or "instructions" not in objects[0] or "id" not in objects[0] or "type" in objects[0]:
        return False
    return all(o.get("record_type") == "state" or o.get("type") in ("message", "reasoning", "function_call",
               "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call",
               "web_search_call") for o in objects[1:])


FORMATS = [
    SessionFormat("codex", "codex", "OpenAI Codex CLI rollouts with token_count usage (~/.codex/sessions)", _sniff, load),
    SessionFormat("codex-legacy", "codex", "OpenAI Codex CLI transcripts of Sept 2025 (item lines, no usage: unpriced)",
                  _sniff_legacy, load_legacy),
]
