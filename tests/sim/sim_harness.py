"""Test harness for the simulated agent: an in-memory workspace with pi-shaped tools and a
driver that runs the provider the way readbench's agent loop does (project, generate, run tools).

Reads go through the real read variants (readbench.read); grep, bash and edit are minimal
pi-format fakes covering what the sim issues (single-file literal grep, ``sed -n``,
``grep -n -F``, the task's test command, exact-text edit).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams
from inspect_ai.util import Store

from readbench.read import ReadSession, get_variant
from readbench.sim.oracle import ORACLE_KEY
from readbench.sim.provider import generate_in_store

TEST_CMD = "python3 -m pytest tests/test_target.py -q"
#: Knob override that turns exploration calls off (the hand-set rows explore 4-14 calls per prompt).
NO_EXPLORATION = {"calls_per_prompt": [0, 0]}


def numbered_file(n_lines: int, trailing_newline: bool = True) -> str:
    """``n_lines`` distinct short lines (``row 00001 value``), e.g. 5000 -> T=5001 under pi counting."""
    text = "\n".join(f"row {i:05d} value" for i in range(1, n_lines + 1))
    return text + ("\n" if trailing_newline else "")


def tool_infos(variant: str, names: tuple[str, ...] = ("read", "grep", "bash", "edit", "write")) -> list[ToolInfo]:
    """ToolInfo list as the loop offers it (the read description comes from the variant)."""
    descriptions = {"read": get_variant(variant).tool_description}
    return [ToolInfo(name=n, description=descriptions.get(n, f"pi {n} tool"), parameters=ToolParams())
            for n in names]


@dataclass
class Workspace:
    """Files by relative path and the arm's read variant; ``fixed`` is the text whose presence
    makes the fake test command pass (None: the test command always passes)."""

    files: dict[str, str]
    variant: str = "stock"
    fixed: str | None = None
    session: ReadSession = field(default_factory=ReadSession)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    details: dict[str, Any] | None = None

    def run(self, call: ToolCall, visible: frozenset[str]) -> ChatMessageTool:
        """Execute one tool call and return its result message."""
        self.calls.append((call.function, dict(call.arguments)))
        self.details = None
        text, is_error = getattr(self, f"_{call.function}")(call, visible)
        metadata = {"readbench": self.details} if self.details is not None else None
        if is_error:
            return ChatMessageTool(content="", tool_call_id=call.id, function=call.function,
                                   error=ToolCallError("unknown", text), metadata=metadata)
        return ChatMessageTool(content=text, tool_call_id=call.id, function=call.function, metadata=metadata)

    def _read(self, call: ToolCall, visible: frozenset[str]) -> tuple[str, bool]:
        args = call.arguments
        data = self.files[args["path"]].encode()
        result = get_variant(self.variant).read(data, args["path"], args.get("offset"), args.get("limit"),
                                                call_id=call.id, session=self.session, visible_call_ids=visible)
        self.details = result.details.to_dict()  # what the loop stores in metadata["readbench"]
        return result.text, result.is_error

    def _grep(self, call: ToolCall, visible: frozenset[str]) -> tuple[str, bool]:
        path, pattern = call.arguments["path"], call.arguments["pattern"]
        limit = call.arguments.get("limit") or 100
        hits = [f"{os.path.basename(path)}:{i}: {line}"
                for i, line in enumerate(self.files[path].split("\n"), 1) if pattern in line]
        if not hits:
            return "No matches found", False
        if len(hits) >= limit:  # pi: the notice also fires when exactly `limit` matches exist
            return "\n".join(hits[:limit]) + (f"\n\n[{limit} matches limit reached. Use limit={2 * limit} "
                                                "for more, or refine pattern]"), False
        return "\n".join(hits), False

    def _bash(self, call: ToolCall, visible: frozenset[str]) -> tuple[str, bool]:
        command = call.arguments["command"]
        if command == TEST_CMD:
            ok = self.fixed is None or any(self.fixed in text for text in self.files.values())
            return ("1 passed\n", False) if ok else ("1 failed\n\n\nCommand exited with code 1", True)
        argv = shlex.split(command)
        if argv[0] == "ls":  # the entries of a directory, one per line (exploration calls)
            folder = os.path.normpath(argv[-1])
            prefix = "" if folder == "." else folder + "/"
            names = sorted({p[len(prefix):].split("/")[0] for p in self.files if p.startswith(prefix)})
            return ("\n".join(names) + "\n", False) if names else (f"ls: cannot access '{folder}'", True)
        lines = self.files[argv[-1]].split("\n")
        if argv[:2] == ["sed", "-n"]:
            first, last = (int(x) for x in argv[2].rstrip("p").split(","))
            return "".join(line + "\n" for line in lines[first - 1:last]), False
        hits = [f"{i}:{line}" for i, line in enumerate(lines, 1) if argv[4] in line]
        return ("\n".join(hits) + "\n", False) if hits else ("\n\nCommand exited with code 1", True)

    def _edit(self, call: ToolCall, visible: frozenset[str]) -> tuple[str, bool]:
        path = call.arguments["path"]
        if get_variant(self.variant).requires_read_before_edit and not self.session.has_read(path):
            return "File has not been read yet. Read it first before writing to it.", True
        text = self.files[path]
        for edit in call.arguments["edits"]:
            if text.count(edit["oldText"]) != 1:
                return f"Could not find the exact text in {path}.", True
            text = text.replace(edit["oldText"], edit["newText"])
        self.files[path] = text
        self.session.note_file_changed(path)
        return f"Successfully replaced 1 block(s) in {path}.", False


@dataclass
class Trace:
    """A finished session: the full history, each call's output and input, and the store."""

    messages: list[ChatMessage]
    outputs: list[ModelOutput]
    inputs: list[list[ChatMessage]]
    store: Store

    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """``(function, arguments)`` of every tool call, in order."""
        return [(c.function, dict(c.arguments)) for o in self.outputs for c in (o.message.tool_calls or [])]

    def reads(self) -> list[tuple[int | None, int | None]]:
        """``(offset, limit)`` of every read call."""
        return [(a.get("offset"), a.get("limit")) for f, a in self.tool_calls() if f == "read"]


def oracle(**fields: Any) -> dict[str, Any]:
    """An oracle dict with defaults for a bug-fix task on ``big.py``."""
    base = {"task_id": "t1", "epoch": 1, "family": "bugfix", "prompts": ["Fix the bug."],
            "target_file": "big.py", "test_cmd": TEST_CMD, "whole_file": False}
    base.update(fields)
    return base


def run_session(model: str, task_oracle: dict[str, Any], ws: Workspace, *, overrides: dict[str, Any] | None = None,
                project: Callable[[list[ChatMessage]], list[ChatMessage]] = list,
                tools: list[ToolInfo] | None = None, max_calls: int = 80, config: GenerateConfig | None = None) -> Trace:
    """Drive the provider like readbench's agent loop: project, generate, run the tool calls;
    a reply without tool calls gets the next prompt or ends the session. ``config`` is each
    call's GenerateConfig (``temperature > 0``: the sampled mode, readbench.sim.sampling).

    The traces state the sim's own navigation, so exploration calls (readbench.sim.explore) are
    off unless ``overrides`` sets ``calls_per_prompt``."""
    overrides = {**NO_EXPLORATION, **(overrides or {})}
    st = Store()
    st.set(ORACLE_KEY, task_oracle)
    prompts = list(task_oracle["prompts"])
    messages: list[ChatMessage] = [ChatMessageSystem(content="You are an expert coding assistant."),
                                   ChatMessageUser(content=prompts.pop(0))]
    infos = tools if tools is not None else tool_infos(ws.variant)
    outputs: list[ModelOutput] = []
    inputs: list[list[ChatMessage]] = []
    for _ in range(max_calls):
        view = project(messages)
        inputs.append(view)
        output = generate_in_store(st, model, overrides or {}, view, infos, config=config)
        outputs.append(output)
        messages.append(output.message)
        if output.stop_reason == "model_length":
            break
        if not output.message.tool_calls:
            if prompts:
                messages.append(ChatMessageUser(content=prompts.pop(0)))
                continue
            break
        visible = frozenset(m.tool_call_id for m, orig in zip(view, messages, strict=False)
                            if isinstance(m, ChatMessageTool) and m.text == orig.text)
        for call in output.message.tool_calls:
            messages.append(ws.run(call, visible))
    return Trace(messages, outputs, inputs, st)


def trace_session(trace: Trace, model: str = "sim", harness: str = "inspect") -> Any:
    """The trace as an imported recorded session (readbench.sessions.Session): call i sent
    ``trace.inputs[i]``; usage, output and the simulated clock come from the provider's output."""
    from readbench.sessions import BilledUsage, Session
    from readbench.sessions._build import SessionBuilder

    session = Session(source="trace", format="inspect", harness=harness, harness_version=None, session_id="trace")
    builder = SessionBuilder(session)
    for view, out in zip(trace.inputs, trace.outputs):
        builder.reset(list(view))
        meta = out.metadata or {}
        usage = out.usage
        builder.call(model=model, ts_start_seconds=meta.get("sim_ts_start_seconds"),
                     ts_first_token_seconds=meta.get("sim_ts_first_token_seconds"),
                     ts_end_seconds=meta.get("sim_ts_end_seconds"),
                     usage=BilledUsage(usage.input_tokens, 0, 0, usage.output_tokens), output=out.message,
                     stop_reason=out.stop_reason)
    builder.reset(list(trace.messages))  # the last call's tool results
    return session
