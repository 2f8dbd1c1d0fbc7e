"""The per-sample store contract: what the run stage, the agent loop and the tools write into
inspect's sample store, and what the metrics, the scorer and the report read back (so it is logged
with the sample and never global). One module owns every key and the per-call record.

The loop is the only writer of what the model *saw* and which call is executing; tools read it.
This is the "clean way to tell the tool" what the model received on its last call that
B+dedup needs (docs/specs/variants.md, "B+dedup and B+dedup-naive").

Store keys (all JSON values; writer -> readers):
- ``readbench:oracle``   dict   the task's oracle for the simulated agent (docs/specs/sim-agent.md);
                                setup solver (readbench.run.task) -> agent loop, sim provider
- ``readbench:workspace`` dict  {"cwd": str, "env": dict[str, str], "rg": str, "sandbox": str};
                                setup solver -> tools, scorer, agent loop
- ``readbench:pending``   list  tool calls of the assistant message being executed:
                                [{"id", "function", "arguments", "claimed": bool}]; loop -> tools
- ``readbench:visible``   list  tool_call_ids whose results were intact (unpruned) in the
                                message list the model received on its last call; loop -> read tool
- ``readbench:read_session`` dict  the read variant's ReadSession (readbench.read); read tool
- ``readbench:details:<call_id>`` dict  structured details of one tool result, moved into
                                ``ChatMessageTool.metadata["readbench"]`` by the loop; tools -> loop
- ``readbench:sim``       dict  the simulated agent's memory (readbench.sim.memory); sim provider
- ``readbench:calls``     list  one `CallLog` (as a dict) per model call; loop -> scorer, metrics
- ``readbench:stop_reason`` str  set when the loop ends for a reason other than an answer;
                                loop -> scorer (metrics.md ``stop_reason``)
- ``readbench:cache_metrics`` dict  the cache simulator's per-sample scalars (readbench.cache);
                                loop -> scorer
- ``readbench:native_metrics`` dict  Σ of the provider-reported usage (readbench.metrics.native);
                                loop -> scorer
- ``readbench:wall_seconds`` float  wall time of the agent loop (model calls + tools), seconds;
                                loop -> scorer
- ``readbench:fork``      dict  the forked design (readbench.fork): in a trunk sample
                                ``{"role": "trunk", "arms": {label: fork point}}``, in a fork sample
                                ``{"role": "fork", "arm", "prefix", "fork_point", "replayed_calls",
                                "prefix_tokens", "prefix_cost_usd"}``; trunk loop / fork setup + loop
                                -> readbench.analysis.divergence

`SAMPLE_RESULT_KEYS` are the keys the scorer turns into per-sample metrics; an errored sample's
metrics are read from the same keys of its logged store (readbench.metrics.scorer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.util import store

__all__ = [
    "CACHE_METRICS",
    "CALLS",
    "FORK",
    "NATIVE_METRICS",
    "ORACLE",
    "PENDING",
    "READ_SESSION",
    "SAMPLE_RESULT_KEYS",
    "SIM",
    "STOP_REASON",
    "VISIBLE",
    "WALL_SECONDS",
    "WORKSPACE",
    "CallLog",
    "claim_call_id",
    "pop_details",
    "publish_pending_calls",
    "set_details",
    "visible_call_ids",
    "workspace",
]

ORACLE = "readbench:oracle"
WORKSPACE = "readbench:workspace"
PENDING = "readbench:pending"
VISIBLE = "readbench:visible"
READ_SESSION = "readbench:read_session"
SIM = "readbench:sim"
CALLS = "readbench:calls"
STOP_REASON = "readbench:stop_reason"
CACHE_METRICS = "readbench:cache_metrics"
NATIVE_METRICS = "readbench:native_metrics"
WALL_SECONDS = "readbench:wall_seconds"
FORK = "readbench:fork"
_DETAILS = "readbench:details:"
SAMPLE_RESULT_KEYS = (CALLS, STOP_REASON, NATIVE_METRICS, CACHE_METRICS, WALL_SECONDS)
"""The keys the loop leaves for the scorer (per-sample metrics, docs/specs/metrics.md)."""


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
        context_tokens: pi's context usage the band was computed from (tokens; readbench.dcp.
            pi_context_usage on the unprojected history; None for a call recorded after a limit).
        prompt_tokens: the whole prompt the provider reported for this call: uncached + cache
            read + cache write (tokens; None if not reported).
        output_tokens: output tokens reported.
        visible_intact: tool results intact in this call's input.
        native_input_tokens, native_uncached_input_tokens, native_cache_read_tokens,
            native_cache_write_tokens, native_output_tokens: the provider-reported usage split
            (`readbench.sessions.inspect_log.native_usage`; None if not reported).
        stop_reason: inspect's ``ModelOutput.stop_reason`` (``stop``, ``tool_calls``,
            ``max_tokens``: the reply was cut at max_tokens, ``model_length``, ...).
        priced: the call entered the cache simulation; False for a request the provider
            rejected (a context overflow, a refusal, or one it reported 0 input tokens for).
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
    context_tokens: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    native_input_tokens: int | None = None
    native_uncached_input_tokens: int | None = None
    native_cache_read_tokens: int | None = None
    native_cache_write_tokens: int | None = None
    native_output_tokens: int | None = None
    stop_reason: str = ""
    priced: bool = True


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _canonical(arguments: dict[str, Any]) -> str:
    """Arguments as the tool sees them: None (omitted) dropped, 5.0 == 5 (inspect coerces
    JSON numbers to the annotated type)."""
    return json.dumps(_plain(arguments), sort_keys=True, default=str)


def publish_pending_calls(calls: list[dict[str, Any]]) -> None:
    """Record the tool calls about to be executed, in message order.

    Args:
        calls: ``[{"id": str, "function": str, "arguments": dict}]``.
    """
    store().set(PENDING, [{**c, "claimed": False} for c in calls])


def claim_call_id(function: str, arguments: dict[str, Any]) -> str | None:
    """Return the id of the first unclaimed pending call to ``function`` with ``arguments``.

    inspect does not hand a tool its own call id; the loop publishes the assistant message's
    calls before executing them (sequentially: our tools are not parallel), and each tool
    claims the first matching one. Returns None outside the loop (e.g. the CLI).
    """
    pending: list[dict[str, Any]] = store().get(PENDING, [])
    key = _canonical(arguments)
    for call in pending:
        if not call["claimed"] and call["function"] == function and _canonical(call["arguments"]) == key:
            call["claimed"] = True
            store().set(PENDING, pending)
            return str(call["id"])
    return None


def set_details(call_id: str | None, details: dict[str, Any]) -> None:
    """Attach structured details (plain JSON) to the result of tool call ``call_id``."""
    if call_id is not None:
        store().set(_DETAILS + call_id, details)


def pop_details(call_id: str) -> dict[str, Any] | None:
    """Remove and return the details recorded for ``call_id`` (None if the tool set none)."""
    key = _DETAILS + call_id
    value = store().get(key)
    if value is not None:
        store().delete(key)
    return value


def visible_call_ids() -> frozenset[str] | None:
    """Tool-call ids whose results were intact in the model's last input (None before any call)."""
    value = store().get(VISIBLE)
    return None if value is None else frozenset(value)


def workspace() -> dict[str, Any]:
    """The sample's workspace facts written by the setup solver (cwd, env, rg path, sandbox)."""
    ws = store().get(WORKSPACE)
    if ws is None:
        raise RuntimeError("readbench workspace is not initialised: run the read_strategies task's setup solver first")
    return ws
