"""The agent loop: pi's tool loop with a DCP projection before every model call.

Shape (docs/specs/ARCHITECTURE.md, docs/specs/inspect-notes.md §1): the full history stays in
``state.messages`` (and the log); before EVERY ``generate`` the history is projected by the
arm's DCP configuration (readbench.dcp.project), and only the projection is sent. The model
is whatever inspect resolves (``readbench/sim-*`` or any provider). Tool calls run through
inspect's ``execute_tools`` with its truncation off (the read variant's caps are the
experiment). When the assistant answers without tool calls, the next user prompt of a
multi-prompt task is appended, or the sample ends.

Per call, the loop records a small `readbench.base.store.CallLog`, with the provider's own usage
(``native_*``); at the end -- in a ``finally``, so an errored sample keeps them -- the calls
(``readbench:calls``), the native sums (readbench.metrics.native) and the cache simulator's per-sample metrics
for the projected requests and for the same trajectory without projection (the counterfactual
of docs/specs/metrics.md).
"""

from __future__ import annotations

import hashlib
import time
from contextlib import nullcontext
from dataclasses import asdict
from typing import Any

from anyio import CancelScope, get_cancelled_exc_class
from inspect_ai.agent import Agent, AgentState, agent
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    execute_tools,
    get_model,
)
from inspect_ai.tool import Tool, ToolDef, ToolInfo
from inspect_ai.util import LimitExceededError, store

from readbench.agent._forking import infos_json, make_trunk, replay_of, time_cut
from readbench.base import store as rbstore
from readbench.base.budget import charge, spec_label
from readbench.base.idmemo import IdentityMemo
from readbench.base.store import CallLog
from readbench.cache import CallRecord, sample_cache_metrics
from readbench.dcp import DcpState, ProjectionCache, get_config, pi_context_usage, project, reported_tokens
from readbench.fork.trunk import request_fingerprint
from readbench.read import get_variant
from readbench.tools import make_tools


def native_fields(output: ModelOutput | None) -> dict[str, Any]:
    """The ``native_*`` fields and ``prompt_tokens``/``output_tokens`` of a `CallLog` for one
    model output (all None when the provider reported no usage)."""
    from readbench.sessions.inspect_log import native_usage

    u = native_usage(output.usage if output is not None else None)
    if u is None:
        return {"prompt_tokens": None, "output_tokens": None, **{f"native_{k}": None for k in _NATIVE_PARTS}}
    return {"prompt_tokens": u.input_tokens, "output_tokens": u.output_tokens, "native_input_tokens": u.input_tokens,
            "native_uncached_input_tokens": u.uncached_input_tokens, "native_cache_read_tokens": u.cache_read_tokens,
            "native_cache_write_tokens": u.cache_write_tokens, "native_output_tokens": u.output_tokens}


_NATIVE_PARTS = ("input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def rejected_request(output: ModelOutput, prompt_tokens: int | None) -> bool:
    """True when the provider refused the request and billed nothing for it: a context overflow
    or a refusal answered without a tool call (docs/specs/metrics.md "Outcome"), or a reply
    whose reported prompt is 0 tokens. Such a call enters no cache simulation."""
    refused = output.stop_reason in ("model_length", "content_filter") and not output.message.tool_calls
    return refused or prompt_tokens == 0


def fingerprint(message: ChatMessage) -> str:
    """A content fingerprint of one message as a provider would serialise it (sha1 hex)."""
    parts = [message.role, message.text]
    if isinstance(message, ChatMessageAssistant) and message.tool_calls:
        parts += [f"{c.id}:{c.function}:{sorted(c.arguments.items())!r}" for c in message.tool_calls]
    if isinstance(message, ChatMessageTool):
        parts += [message.tool_call_id or "", message.error.message if message.error else ""]
    return hashlib.sha1("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class FingerprintCache:
    """Fingerprints of messages by object identity: history messages and unchanged projected
    messages are the same objects call after call, so each is hashed once per sample."""

    def __init__(self) -> None:
        self._memo: IdentityMemo[str] = IdentityMemo(fingerprint)

    def __call__(self, messages: list[ChatMessage]) -> list[str]:
        return list(map(self._memo, messages))


def first_difference(previous: list[str], current: list[str]) -> int | None:
    """Index of the first position < len(previous) where the fingerprints differ, else None."""
    for i, fp in enumerate(previous):
        if i >= len(current) or current[i] != fp:
            return i
    return None


def intact_tool_results(history: list[ChatMessage], view: list[ChatMessage]) -> list[str]:
    """tool_call_ids whose result in ``view`` equals the original in ``history`` (same position)."""
    ids = []
    for orig, seen in zip(history, view):
        if isinstance(orig, ChatMessageTool) and orig.tool_call_id and (
            seen is orig or (isinstance(seen, ChatMessageTool) and seen.text == orig.text and seen.error == orig.error)
        ):
            ids.append(orig.tool_call_id)
    return ids


def tool_infos(tools: list[Tool]) -> list[ToolInfo]:
    """The schemas sent with every request (what the cache simulator prices as the tools prefix)."""
    infos = []
    for tool in tools:
        tdef = ToolDef(tool)
        infos.append(ToolInfo(name=tdef.name, description=tdef.description, parameters=tdef.parameters))
    return infos


def _times(output: ModelOutput, wall_start: float, wall_end: float, t0: float) -> tuple[float, float]:
    meta = output.metadata or {}
    if "sim_ts_start_seconds" in meta:
        return float(meta["sim_ts_start_seconds"]), float(meta["sim_ts_first_token_seconds"])
    return wall_start - t0, wall_end - t0


def _tripping_output() -> ModelOutput | None:
    """The output of the sample's last model call, from the transcript (the call a limit
    raised on, whose result never reached the loop)."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import transcript

    for event in reversed(transcript().events):
        if isinstance(event, ModelEvent):
            return event.output
    return None


def _native(published: list[dict[str, Any]], model_name: str) -> dict[str, float]:
    from readbench.metrics.native import native_metrics

    return native_metrics(published, model_name)


@agent
def pi_agent(
    variant: str | dict[str, Any] = "stock",
    dcp: str | dict[str, Any] = "off",
    cache_models: list[str] | None = None,
    context_window_tokens: int = 200_000,
    max_turns: int | None = None,
    fork: dict[str, Any] | None = None,
) -> Agent:
    """pi's agent loop under one arm.

    Args:
        variant: read preset name or spec dict (readbench.read.get_variant).
        dcp: DCP configuration name or spec dict (readbench.dcp.get_config).
        cache_models: cache models to price the trajectory under (readbench.cache);
            default ``["anthropic-5m", "openai", "deepseek"]``.
        context_window_tokens: window used for DCP pressure bands (tokens).
        max_turns: most model calls per sample; the loop stops before the call past it
            (``stop_reason = turn_limit``), so no call is made, billed and left uncounted, as
            when inspect's own turn limit raises after that call returns. None = no limit.
        fork: the forked design's trunk role (readbench.agent._forking: shadow every arm, write
            their prefixes); a fork sample needs nothing here (its setup leaves its prefix in the
            store, and the loop replays it: the trunk's replies and tool results up to the fork
            point, checked request by request, then live calls). None = an independent run.

    Raises:
        ValueError: an unknown variant or DCP configuration (raised when the agent is built).
    """
    read_variant = get_variant(variant)
    dcp_config = get_config(dcp)
    cache_models = list(cache_models or ["anthropic-5m", "openai", "deepseek"])

    async def execute(state: AgentState) -> AgentState:
        tools = make_tools(read_variant)
        infos = tool_infos(tools)
        # inspect parses a plain Tool's signature and docstring on every generate and tool call
        # (ToolDef, ~4 % of a simulated sample's CPU, issue 26); definitions made once per sample
        # give the same schemas and the same tool calls
        tdefs = [ToolDef(tool) for tool in tools]
        model = get_model()
        oracle: dict[str, Any] = store().get(rbstore.ORACLE, {})
        prompts: list[str] = list(oracle.get("prompts", []))[1:]  # the first is already in state
        dcp_state = DcpState()
        dcp_cache = ProjectionCache(max_histories=1)  # this sample's incremental projection state
        workspace: dict[str, Any] = store().get(rbstore.WORKSPACE, {})
        cwd = workspace.get("cwd")
        calls: list[CallLog] = []
        records: list[CallRecord] = []
        unpruned: list[CallRecord] = []
        previous_fps: list[str] = []
        reported: dict[int, int] = {}  # history index of each reply -> its reported context tokens
        fingerprints = FingerprintCache()
        last: ModelOutput | None = None
        in_generate = False
        t0 = time.monotonic()
        trunk = replay = None
        cut: str | None = None  # the loop's own turn limit ended the sample (a trunk's prefixes say so)
        if fork is not None and fork.get("role") == "trunk":
            trunk = await make_trunk(fork, read_variant, dcp_config, cwd or "", t0, tool_infos)
        else:
            replay = replay_of(cwd or "")
            if replay is not None:
                t0 -= replay.elapsed_seconds
        infos_text = infos_json(infos) if trunk or replay else ""

        def log_tripped(output: ModelOutput, ts: tuple[float, float]) -> None:
            """Log the call an inspect limit raised on after it returned (billed; its reply never
            reaches the history)."""
            native = native_fields(output)
            rejected = rejected_request(output, native["prompt_tokens"])
            calls.append(CallLog(
                n_history=len(history), n_input=len(view), earliest_changed_index=None, prefix_break=broke,
                pruned={}, footer_tokens_saved=0, band="", stop_reason=str(output.stop_reason),
                priced=not rejected, **native))
            if not rejected:
                out_tokens = native["output_tokens"] or 0
                records.append(CallRecord(view, infos, out_tokens, *ts))
                unpruned.append(CallRecord(history, infos, out_tokens, *ts))
        try:
            # a fork that left the trunk: inspect limits charged with the replayed prefix
            with replay.live_limits() if replay is not None else nullcontext():
                while True:
                    if max_turns is not None and len(calls) >= max_turns:
                        store().set(rbstore.STOP_REASON, "turn_limit")
                        cut = "turn_limit"
                        break
                    if replay is not None and replay.stops_at(len(calls)):  # a fork of an arm cut with its trunk
                        store().set(rbstore.STOP_REASON, replay.stop_reason)
                        break
                    history = list(state.messages)
                    usage = pi_context_usage(history, context_window_tokens, reported)
                    projection = project(history, dcp_config, state=dcp_state, cwd=cwd, cache=dcp_cache, usage=usage)
                    view = projection.messages
                    dcp_state = projection.state
                    fps = fingerprints(view)
                    broke = first_difference(previous_fps, fps) is not None
                    previous_fps = fps
                    intact = intact_tool_results(history, view)
                    store().set(rbstore.VISIBLE, intact)
                    request_fp = request_fingerprint(fps, infos_text) if trunk or replay else ""
                    if trunk is not None:
                        await trunk.before_call(len(calls), history, fps, usage, fingerprints)
                    recorded = replay.output(len(calls), request_fp) if replay is not None else None
                    if recorded is not None and replay.tripped(len(calls)):  # type: ignore[union-attr]
                        log_tripped(*recorded)  # the call the trunk's limit raised on, logged as the trunk did
                        store().set(rbstore.STOP_REASON, replay.stop_reason)  # type: ignore[union-attr]
                        break

                    wall_start = time.monotonic()
                    in_generate = True
                    output = recorded[0] if recorded else await model.generate(view, tdefs)
                    in_generate = False
                    wall_end = time.monotonic()
                    last = output
                    native = native_fields(output)
                    # A request the provider rejected is billed nothing (metrics.md "Outcome":
                    # context_overflow), so it enters no cache simulation.
                    rejected = rejected_request(output, native["prompt_tokens"])
                    calls.append(CallLog(
                        n_history=len(history), n_input=len(view),
                        earliest_changed_index=projection.stats.earliest_changed_index,
                        prefix_break=broke, pruned=dict(projection.stats.pruned),
                        footer_tokens_saved=projection.stats.footer_tokens_saved,
                        band=str(projection.stats.effective_band or projection.stats.band), context_tokens=usage.tokens,
                        visible_intact=len(intact), stop_reason=str(output.stop_reason), priced=not rejected,
                        **native,
                    ))
                    ts_start, ts_first = recorded[1] if recorded else _times(output, wall_start, wall_end, t0)
                    if trunk is not None:
                        trunk.after_call(output, (ts_start, ts_first), request_fp)
                    out_tokens = native["output_tokens"] or 0
                    if not rejected:
                        records.append(CallRecord(view, infos, out_tokens, ts_start, ts_first))
                        unpruned.append(CallRecord(history, infos, out_tokens, ts_start, ts_first))

                    state.output = output
                    tokens = reported_tokens(native["prompt_tokens"], native["output_tokens"])
                    if tokens is not None:  # pi's usage of this reply, at the index it is appended at
                        reported[len(state.messages)] = tokens
                    state.messages.append(output.message)
                    if output.stop_reason == "model_length" and not output.message.tool_calls:
                        store().set(rbstore.STOP_REASON, "context_overflow")
                        break
                    if not output.message.tool_calls:
                        if prompts:
                            state.messages.append(ChatMessageUser(content=prompts.pop(0)))
                            continue
                        break
                    pending = [{"id": c.id, "function": c.function, "arguments": c.arguments}
                               for c in output.message.tool_calls]
                    rbstore.publish_pending_calls(pending)
                    if trunk is not None:
                        await trunk.before_tools(len(calls) - 1, pending, frozenset(intact))
                    replayed = replay.tools(len(calls) - 1) if replay is not None else None
                    if replayed is None and replay is not None and replay.stops_at(len(calls)):
                        store().set(rbstore.STOP_REASON, replay.stop_reason)  # the trunk's limit cut these tools
                        break
                    if replayed is not None:
                        results: list[ChatMessage] = list(replayed)
                    else:
                        results = list((await execute_tools(state.messages, tdefs, max_output=0)).messages)
                        for message in results:
                            if isinstance(message, ChatMessageTool) and message.tool_call_id:
                                details = rbstore.pop_details(message.tool_call_id)
                                if details is not None:
                                    message.metadata = {**(message.metadata or {}), "readbench": details}
                    if trunk is not None:
                        trunk.after_tools(pending, results)
                    state.messages.extend(results)
            if trunk is not None:
                await trunk.finish(store().get(rbstore.READ_SESSION), cut=cut)
        except LimitExceededError as ex:
            store().set(rbstore.STOP_REASON, f"{ex.type}_limit")
            # a token limit: inspect raises after the call returned and was billed; a (fork's scoped)
            # time limit cancelled the call instead, which returned nothing, as the sample's own does
            if in_generate and ex.type != "time":
                tripped = _tripping_output()
                if tripped is not None and tripped is not last:
                    ts = _times(tripped, wall_start, time.monotonic(), t0)
                    log_tripped(tripped, ts)
                    if trunk is not None:  # in the prefix: a fork of an arm cut with the trunk logs it too
                        trunk.after_call(tripped, ts, request_fp, tripped=True)
            if trunk is not None:  # the prefixes up to the cut are still valid fork points
                await trunk.finish(store().get(rbstore.READ_SESSION), cut=f"{ex.type}_limit")
            raise
        except get_cancelled_exc_class():  # inspect's time limit cancels the sample (or the run was interrupted)
            limit = time_cut()
            if limit is not None:
                store().set(rbstore.STOP_REASON, limit)
                if trunk is not None:
                    with CancelScope(shield=True):
                        await trunk.finish(store().get(rbstore.READ_SESSION), cut=limit)
            raise
        except Exception:  # the sample errors (no scorer runs); a cancellation (time limit) is not one
            store().set(rbstore.STOP_REASON, "error")
            raise
        finally:
            # the calls enter the store once, as the agent ends, not after every call: inspect
            # snapshots and diffs the whole store around every span (tool call, model call), so a
            # list growing in the store cost O(calls^2) per sample
            published = [asdict(c) for c in calls]
            store().set(rbstore.CALLS, published)
            store().set(rbstore.WALL_SECONDS, time.monotonic() - t0)
            store().set(rbstore.NATIVE_METRICS, _native(published, model.name))
            if records:
                metrics = sample_cache_metrics(records, cache_models, unpruned_calls=unpruned)
                store().set(rbstore.CACHE_METRICS, metrics)
            if replay is not None:
                store().set(rbstore.FORK, {**store().get(rbstore.FORK, {}),
                                           **replay.not_spent(calls, records, cache_models)})
            charge(store().get(rbstore.CACHE_METRICS) if records else None, store().get(rbstore.FORK),
                   None if trunk is not None else f"{spec_label(variant)} × {spec_label(dcp)}")
        return state

    return execute
