"""The agent loop: pi's tool loop with a DCP projection before every model call.

Shape (shared/ARCHITECTURE.md, shared/specs/inspect-notes.md §1): the full history stays in
``state.messages`` (and the log); before EVERY ``generate`` the history is projected by the
arm's DCP configuration (readbench.dcp.project), and only the projection is sent. The model
is whatever inspect resolves (``readbench/sim-*`` or any provider). Tool calls run through
inspect's ``execute_tools`` with its truncation off (the read variant's caps are the
experiment). When the assistant answers without tool calls, the next user prompt of a
multi-prompt task is appended, or the sample ends.

Per call, the loop records a small :class:`CallLog` in the store (``readbench:calls``) and,
at the end, the cache simulator's per-sample metrics for the projected requests and for the
same trajectory without projection (the counterfactual of shared/specs/metrics.md).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

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

from readbench.agent import context
from readbench.cache import CallRecord, sample_cache_metrics
from readbench.dcp import ContextUsage, DcpState, ProjectionCache, get_config, project
from readbench.read import get_variant
from readbench.tools import make_tools


@dataclass(frozen=True)
class CallLog:
    """What one model call sent and what the projection changed (one per call, in order).

    Attributes:
        n_history: messages in the full history at the call (the unprojected request is
            ``state.messages[:n_history]``).
        n_input: messages actually sent (the projection keeps the count; pruning replaces content).
        earliest_changed_index: first position where the projection differs from the history,
            None if the projection was the identity.
        prefix_break: True if this call's input differs from the previous call's input at a
            position before the previous input's end (a rewrite of history already sent).
        pruned: items pruned per DCP strategy in this call.
        footer_tokens_saved: pi-dcp's footer estimate for this call (tokens, dcp.md §6).
        band: the pressure band the projection used (dcp.md §3; "low" when usage is unknown).
        prompt_tokens: input tokens the model reported for this call (None if not reported).
        output_tokens: output tokens reported.
        visible_intact: tool results intact in this call's input.
    """

    n_history: int
    n_input: int
    earliest_changed_index: int | None
    prefix_break: bool
    pruned: dict[str, int]
    footer_tokens_saved: int
    band: str
    prompt_tokens: int | None
    output_tokens: int | None
    visible_intact: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


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
        self._by_id: dict[int, tuple[ChatMessage, str]] = {}

    def __call__(self, messages: list[ChatMessage]) -> list[str]:
        out = []
        for message in messages:
            hit = self._by_id.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, fingerprint(message))
                self._by_id[id(message)] = hit
            out.append(hit[1])
        return out


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
            seen is orig or (seen.text == orig.text and seen.error == orig.error)
        ):
            ids.append(orig.tool_call_id)
    return ids


def context_usage(history: list[ChatMessage], last: ModelOutput | None, window_tokens: int) -> ContextUsage:
    """pi's context-usage estimate (dcp.md §3): the last response's total tokens plus chars/4 of
    the messages after it; None tokens before the first response."""
    if last is None or last.usage is None:
        return ContextUsage(tokens=None, context_window=window_tokens)
    tail = 0
    for message in reversed(history):
        if isinstance(message, ChatMessageAssistant):
            break
        tail += len(message.text) // 4
    return ContextUsage(tokens=last.usage.total_tokens + tail, context_window=window_tokens)


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


@agent
def pi_agent(
    variant: str | dict[str, Any] = "stock",
    dcp: str | dict[str, Any] = "off",
    cache_models: list[str] | None = None,
    context_window_tokens: int = 200_000,
) -> Agent:
    """pi's agent loop under one arm.

    Args:
        variant: read preset name or spec dict (readbench.read.get_variant).
        dcp: DCP configuration name or spec dict (readbench.dcp.get_config).
        cache_models: cache models to price the trajectory under (readbench.cache);
            default ``["anthropic-5m", "openai", "deepseek"]``.
        context_window_tokens: window used for DCP pressure bands (tokens).

    Raises:
        ValueError: an unknown variant or DCP configuration (raised when the agent is built).
    """
    read_variant = get_variant(variant)
    dcp_config = get_config(dcp)
    cache_models = list(cache_models or ["anthropic-5m", "openai", "deepseek"])

    async def execute(state: AgentState) -> AgentState:
        tools = make_tools(read_variant)
        infos = tool_infos(tools)
        model = get_model()
        oracle = store().get(context.ORACLE, {})
        prompts: list[str] = list(oracle.get("prompts", []))[1:]  # the first is already in state
        dcp_state = DcpState()
        dcp_cache = ProjectionCache(max_histories=1)  # this sample's incremental projection state
        cwd = store().get(context.WORKSPACE, {}).get("cwd")
        calls: list[CallLog] = []
        records: list[CallRecord] = []
        unpruned: list[CallRecord] = []
        previous_fps: list[str] = []
        fingerprints = FingerprintCache()
        last: ModelOutput | None = None
        t0 = time.monotonic()
        try:
            while True:
                history = list(state.messages)
                projection = project(
                    history, dcp_config, state=dcp_state, cwd=cwd, cache=dcp_cache,
                    usage=context_usage(history, last, context_window_tokens),
                )
                view = projection.messages
                dcp_state = projection.state
                fps = fingerprints(view)
                broke = first_difference(previous_fps, fps) is not None
                previous_fps = fps
                intact = intact_tool_results(history, view)
                store().set(context.VISIBLE, intact)

                wall_start = time.monotonic()
                output = await model.generate(view, tools)
                wall_end = time.monotonic()
                last = output
                usage = output.usage
                calls.append(CallLog(
                    n_history=len(history), n_input=len(view),
                    earliest_changed_index=projection.stats.earliest_changed_index,
                    prefix_break=broke, pruned=dict(projection.stats.pruned),
                    footer_tokens_saved=projection.stats.footer_tokens_saved,
                    band=str(projection.stats.effective_band or projection.stats.band),
                    prompt_tokens=None if usage is None else usage.input_tokens
                    + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0),
                    output_tokens=None if usage is None else usage.output_tokens,
                    visible_intact=len(intact),
                ))
                store().set(context.CALLS, [asdict(c) for c in calls])
                ts_start, ts_first = _times(output, wall_start, wall_end, t0)
                out_tokens = 0 if usage is None else usage.output_tokens
                # A request over the context window is rejected by the provider and billed nothing
                # (metrics.md "Outcome": context_overflow), so it enters no cache simulation.
                overflow = output.stop_reason == "model_length" and not output.message.tool_calls
                if not overflow:
                    records.append(CallRecord(view, infos, out_tokens, ts_start, ts_first))
                    unpruned.append(CallRecord(history, infos, out_tokens, ts_start, ts_first))

                state.output = output
                state.messages.append(output.message)
                if overflow:
                    store().set(context.STOP_REASON, "context_overflow")
                    break
                if not output.message.tool_calls:
                    if prompts:
                        state.messages.append(ChatMessageUser(content=prompts.pop(0)))
                        continue
                    break
                context.publish_pending_calls([
                    {"id": c.id, "function": c.function, "arguments": c.arguments}
                    for c in output.message.tool_calls
                ])
                result = await execute_tools(state.messages, tools, max_output=0)
                for message in result.messages:
                    if isinstance(message, ChatMessageTool) and message.tool_call_id:
                        details = context.pop_details(message.tool_call_id)
                        if details is not None:
                            message.metadata = {**(message.metadata or {}), "readbench": details}
                state.messages.extend(result.messages)
        except LimitExceededError as ex:
            store().set(context.STOP_REASON, f"{ex.type}_limit")
            raise
        finally:
            store().set(context.WALL_SECONDS, time.monotonic() - t0)
            if records:
                metrics = sample_cache_metrics(records, cache_models, unpruned_calls=unpruned)
                store().set(context.CACHE_METRICS, metrics)
        return state

    return execute
