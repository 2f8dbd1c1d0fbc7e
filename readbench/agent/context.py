"""Per-sample state shared by the agent loop, the tools and the sim provider, kept in inspect's
sample store (so it is logged with the sample and never global).

The loop is the only writer of what the model *saw* and which call is executing; tools read it.
This is the "clean way to tell the tool" what the model received on its last call that
B+dedup needs (shared/specs/variants.md, "B+dedup and B+dedup-naive").

Store keys (all JSON values):
- ``readbench:oracle``   dict   the task's oracle for the simulated agent (shared/specs/sim-agent.md)
- ``readbench:workspace`` dict  {"cwd": str, "env": dict[str, str], "rg": str, "sandbox": str}
- ``readbench:pending``   list  tool calls of the assistant message being executed:
                                [{"id", "function", "arguments", "claimed": bool}]
- ``readbench:visible``   list  tool_call_ids whose results were intact (unpruned) in the
                                message list the model received on its last call
- ``readbench:read_session`` dict  the read variant's ReadSession (readbench.read)
- ``readbench:details:<call_id>`` dict  structured details of one tool result, moved into
                                ``ChatMessageTool.metadata["readbench"]`` by the loop
- ``readbench:calls``     list  one record per model call (see readbench.agent.loop.CallLog)
- ``readbench:stop_reason`` str  set when the loop ends for a reason other than an answer
- ``readbench:cache_metrics`` dict  the cache simulator's per-sample scalars (readbench.cache)
- ``readbench:native_metrics`` dict  Σ of the provider-reported usage (readbench.metrics.native)
- ``readbench:wall_seconds`` float  wall time of the agent loop (model calls + tools), seconds
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.util import store

ORACLE = "readbench:oracle"
WORKSPACE = "readbench:workspace"
PENDING = "readbench:pending"
VISIBLE = "readbench:visible"
READ_SESSION = "readbench:read_session"
CALLS = "readbench:calls"
STOP_REASON = "readbench:stop_reason"
CACHE_METRICS = "readbench:cache_metrics"
NATIVE_METRICS = "readbench:native_metrics"
WALL_SECONDS = "readbench:wall_seconds"
_DETAILS = "readbench:details:"


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
    pending = store().get(PENDING, [])
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
