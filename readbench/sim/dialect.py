"""How the simulated agent speaks a real harness's tools (GitHub issue 24 item 4; docs/specs/agents.md).

The simulated agent (readbench.sim) decides in pi's tool names and argument shapes (`read {path,
offset, limit}`, `grep`, `bash`, `edit {path, edits}`, `write`) and perceives pi's result texts
(readbench.sim.observe). A real harness driven through inspect's sandbox agent bridge offers its
own tools (Claude Code: `Read {file_path, offset, limit}`, `Grep`, `Bash`, `Edit`, `Write`; Codex:
a shell) and returns its own result texts. A `Dialect` is the two-way mapping for one harness:

- `to_sim(messages, tools)`: the request as the harness sent it -> the same conversation in pi's
  names, argument shapes and result texts (what the sim's perception parses), the tools offered
  renamed likewise, and a context dict for the way back (e.g. the working directory the harness's
  system prompt states). Only what is visible in the request is used (the perception rule).
- `from_sim(function, arguments, context)`: the sim's pi-shaped action -> the harness's tool call.

`dialect_for(tools)` picks the dialect from the tools a request offers (None: pi's own names, the
sim's native dialect, as readbench's loop and the real pi offer). The sim's token counts, ids and
memory are unchanged: usage is counted on the request as sent and on the call as returned.

A new harness is one module exposing `DIALECT` plus a line in `_MODULES` (readbench.records.Registry).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall, ToolInfo

from readbench.records import Registry

__all__ = ["DIALECTS", "Dialect", "SimView", "dialect_for", "pi_calls", "pi_named"]

_MODULES = ("readbench.sim.dialect_claude", "readbench.sim.dialect_codex")


@dataclass(frozen=True)
class SimView:
    """A request in the sim's dialect: `messages` and `tools` in pi's names and shapes, and
    `context` (what `from_sim` needs, e.g. `{"cwd": "/work"}`)."""

    messages: list[ChatMessage]
    tools: list[ToolInfo]
    context: dict[str, Any]


@dataclass(frozen=True)
class Dialect:
    """One harness's tools as the simulated agent speaks them (module docstring).

    Attributes:
        name: the harness's registry name (readbench.harness: `claude-code`, `codex`).
        origin: where the mapped shapes come from (a probe of a version, a spec section).
        tools: tool names only this harness offers; a request offering any of them is in this dialect.
        to_sim: `(messages, tools) -> SimView`; pure (copies, never mutates its input).
        from_sim: `(function, arguments, context) -> (function, arguments)`: the sim's pi-shaped
            call as this harness's tool call.
        pi_context: `messages -> context`: what `pi_call` and `from_sim` need from a request's
            messages (e.g. the working directory its system prompt states). None: DCP sees the
            harness's own names (`pi_named` is the identity).
        pi_call: `(tool call, context) -> (pi function, pi arguments)`: one of the harness's tool
            calls in pi's name and argument shape only (readbench's DCP strategies key on pi's
            tool names and `path`; `pi_named`); a call it does not map keeps its name and
            arguments. `pi_calls` applies it to every call of a request.
    """

    name: str
    origin: str
    tools: frozenset[str]
    to_sim: Callable[[list[ChatMessage], list[ToolInfo]], SimView]
    from_sim: Callable[[str, dict[str, Any], dict[str, Any]], tuple[str, dict[str, Any]]]
    pi_context: Callable[[list[ChatMessage]], dict[str, Any]] | None = None
    pi_call: Callable[[ToolCall, dict[str, Any]], tuple[str, dict[str, Any]]] | None = None

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts."""
        return {"name": self.name, "origin": self.origin, "tools": sorted(self.tools)}


DIALECTS: Registry[Dialect] = Registry("sim dialect", modules=_MODULES, attribute="DIALECT")
"""harness name -> Dialect (pi's own names need none)."""


def dialect_for(tools: list[ToolInfo]) -> Dialect | None:
    """The dialect of a request offering `tools`: the first registered one naming any offered
    tool, else None (pi's names: the sim's own)."""
    names = {t.name for t in tools}
    return next((d for d in DIALECTS if d.tools & names), None)


def pi_calls(messages: list[ChatMessage], dialect: Dialect) -> tuple[
        dict[str, tuple[str, dict[str, Any]]], dict[str, Any]]:
    """`({tool call id: (pi function, pi arguments)}, context)`: every tool call of `messages`'
    assistant turns through `dialect.pi_call` (every call, a `write_stdin` poll under its own name
    too: `pi_named` looks each one up), and the `from_sim` context (`dialect.pi_context`). Empty for
    a dialect with no `pi_context`/`pi_call`."""
    if dialect.pi_context is None or dialect.pi_call is None:
        return {}, {}
    context = dialect.pi_context(messages)
    to_pi = dialect.pi_call
    return ({c.id: to_pi(c, context) for m in messages if isinstance(m, ChatMessageAssistant)
             for c in m.tool_calls or []}, context)


def pi_named(messages: list[ChatMessage], dialect: Dialect | None) -> tuple[
        list[ChatMessage], Callable[[list[ChatMessage]], list[ChatMessage]]]:
    """`messages` with the harness's tool calls in pi's names and argument shapes (results' texts
    unchanged), and the function that puts a projection of them (readbench.dcp.project: messages
    dropped, results replaced by placeholders) back in the harness's names and arguments, by tool
    call id (a call whose arguments the projection changed, e.g. a purged error's input, in the
    harness's shape through `from_sim`). With no dialect or one without `pi_call`, both are the identity."""
    if dialect is None:
        return list(messages), list
    mapped, context = pi_calls(messages, dialect)
    if not mapped:
        return list(messages), list
    original: dict[str, Any] = {}
    named: list[ChatMessage] = []
    for m in messages:
        if isinstance(m, ChatMessageAssistant) and m.tool_calls:
            calls = []
            for c in m.tool_calls:
                original[c.id] = c
                function, arguments = mapped.get(c.id, (c.function, c.arguments))
                calls.append(dataclasses.replace(c, function=function, arguments=arguments))
            named.append(m.model_copy(update={"tool_calls": calls}))
        elif isinstance(m, ChatMessageTool) and m.tool_call_id in mapped:
            original[f"result:{m.tool_call_id}"] = m.function
            named.append(m.model_copy(update={"function": mapped[m.tool_call_id][0]}))
        else:
            named.append(m)

    def back(call: Any) -> Any:
        """The harness's call for a projected pi-named one: the original when DCP left its
        arguments alone, else the changed arguments in the harness's shape (`from_sim`), or the
        original when they have none (that pruning is then not applied)."""
        first = original.get(call.id)
        if first is None or call.id not in mapped:  # a call the dialect leaves as it is
            return call if first is None else first
        if call.function == mapped[call.id][0] and call.arguments == mapped[call.id][1]:
            return first
        try:
            function, arguments = dialect.from_sim(call.function, dict(call.arguments), context)
        except (ValueError, KeyError, TypeError, IndexError):
            return first
        return dataclasses.replace(first, function=function, arguments=arguments)

    def restore(projected: list[ChatMessage]) -> list[ChatMessage]:
        out: list[ChatMessage] = []
        for m in projected:
            if isinstance(m, ChatMessageAssistant) and m.tool_calls:
                out.append(m.model_copy(update={"tool_calls": [back(c) for c in m.tool_calls]}))
            elif isinstance(m, ChatMessageTool) and f"result:{m.tool_call_id}" in original:
                out.append(m.model_copy(update={"function": original[f"result:{m.tool_call_id}"]}))
            else:
                out.append(m)
        return out

    return named, restore
