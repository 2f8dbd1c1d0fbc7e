"""The simulated agent working through Codex CLI's tools: Codex's sim dialect (readbench.sim.dialect;
GitHub issue 24 item 4; agents.md §2).

Codex gives its model no read tool: a model reads, searches, edits and runs tests through its
shell (`exec_command {cmd}` in cli 0.171.0; `shell {command: argv}` and `shell_command {command}`
in other releases) and edits with `apply_patch`, which Codex intercepts when the shell command
invokes it (its freeform `apply_patch` tool is a custom tool, which inspect's bridge does not
pass to a non-OpenAI model). The sim decides in pi's vocabulary (read, bash, edit:
readbench.sim.policy); this module is the mapping both ways:

- actions -> Codex calls (`from_sim`, `codex_call`): a read of lines A..B is `nl -ba PATH | sed -n 'A,Bp'`,
  a read from A to the end `nl -ba PATH | sed -n 'A,$p'`, a whole-file read `nl -ba PATH`
  (numbered as `cat -n`, so the sim places each line it sees); bash commands (the sim's own
  `grep -n -F -e KEY -- PATH`, `sed -n`, `ls`, the task's test command) run as they are; an edit
  is an `apply_patch` envelope updating the file, its hunk the edited lines as currently visible
  with up to `CONTEXT_LINES` visible lines of context on each side;
- Codex's request -> what the sim perceives (`to_sim`, `codex_exchanges`): each shell call whose command
  has one of the forms above is seen as the action it came from (`read` with its range, `edit`
  of the patched file, else `bash` with the command), its text what the command printed as
  Codex shows it (readbench.harness.codex_output: the header lines dropped, the exit code the
  error flag; a cut output keeps its marker and `Total output lines`, which
  readbench.sim.observe.parse_read reads), so the perception rule holds on Codex's own output.

The prompts a request holds are its user messages other than Codex's own context blocks
(`<environment_context>`, AGENTS.md instructions, ...), which Codex sends as user messages:
`to_sim` leaves those out, so the sim counts only the task's prompts.
Mapping checked against codex-cli 0.171.0 run through inspect's sandbox agent bridge (the request
shapes and result texts in tests/agents/test_codex_tools.py are copied from it).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams

from readbench.harness.codex import CONTEXT_PREFIXES
from readbench.harness.codex_output import parse_codex_output
from readbench.sim.dialect import Dialect, SimView
from readbench.sim.observe import Exchange, exchanges, norm_path
from readbench.sim.perception import FileView, file_view

__all__ = ["CONTEXT_LINES", "DIALECT", "SHELL_TOOLS", "TOOL_NAMES", "codex_call", "codex_exchanges", "from_sim",
           "is_codex_request", "prompt_count", "read_command", "to_sim"]

SHELL_TOOLS = ("exec_command", "shell", "shell_command")
"""Codex's shell tools, in the order the sim prefers them when a request offers several."""

TOOL_NAMES = frozenset({"read", "bash", "edit"})
"""The sim's actions it can take through Codex's shell (pi's `grep` is the sim's own `grep -n` via bash)."""

CONTEXT_LINES = 3
"""Context lines a patch hunk carries on each side (as `apply_patch`'s own examples do), when visible."""

_CODEX_CONTEXT = CONTEXT_PREFIXES
_READ = re.compile(r"^nl -ba (?P<path>'[^']*'|\S+)(?: \| sed -n '(?P<first>\d+),(?P<last>\d+|\$)p')?$")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+)$", re.M)
_SHELL_ERROR = re.compile(r"^(?:nl|sed): ")


def is_codex_request(tools: list[ToolInfo]) -> bool:
    """True when a request's tools are Codex's: one of `SHELL_TOOLS` and none of pi's `read`/`bash`."""
    names = {t.name for t in tools}
    return bool(names & set(SHELL_TOOLS)) and not names & {"read", "bash"}


def prompt_count(messages: list[ChatMessage]) -> int:
    """The user prompts in `messages` (Codex's context blocks sent as user messages are not prompts)."""
    return sum(isinstance(m, ChatMessageUser) and not m.text.lstrip().startswith(_CODEX_CONTEXT) for m in messages)


def read_command(path: str, offset: int | None = None, limit: int | None = None) -> str:
    """The shell command of a read of `path` from line `offset` (1-based) for `limit` lines
    (module docstring); without both, the whole file."""
    quoted = shlex.quote(path)
    if offset is None and limit is None:
        return f"nl -ba {quoted}"
    first = max(1, int(offset or 1))
    last = "$" if limit is None else str(first + max(1, int(limit)) - 1)
    return f"nl -ba {quoted} | sed -n '{first},{last}p'"


def _command(call: ToolCall) -> str | None:
    args = call.arguments or {}
    value = args.get("cmd", args.get("command"))
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        if len(value) == 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and value[1] in ("-lc", "-c"):
            return value[2]
        return shlex.join(value)
    return value if isinstance(value, str) else None


def _as_action(command: str) -> tuple[str, dict[str, Any]]:
    """The sim action a shell command came from (module docstring)."""
    if m := _READ.match(command.strip()):
        args: dict[str, Any] = {"path": shlex.split(m.group("path"))[0]}
        if m.group("first") is not None:
            args["offset"] = int(m.group("first"))
            if m.group("last") != "$":
                args["limit"] = int(m.group("last")) - args["offset"] + 1
        return "read", args
    if command.lstrip().startswith("apply_patch") and (p := _PATCH_FILE.search(command)):
        return "edit", {"path": p.group(1).strip()}
    return "bash", {"command": command}


def _exchange(position: int, call_id: str, command: str, text: str, error: bool, exit_code: int | None,
              total_lines: int | None) -> Exchange:
    """One shell exchange as the sim perceives it: the action the command came from, the output
    as Codex shows it, failed when the command exited non-zero (an edit: unless Codex says `Success.`;
    a read: also when `nl`/`sed` complain)."""
    function, arguments = _as_action(command)
    failed = error or exit_code not in (None, 0)
    if function == "edit":
        failed = failed or not text.startswith("Success.")
    elif function == "read":
        failed = failed or _SHELL_ERROR.match(text) is not None
        if total_lines is not None:  # the count Codex states of a cut output
            text = f"Total output lines: {total_lines}\n\n{text}"
    return Exchange(position, call_id, function, arguments, text, failed)


def _perceive(messages: list[ChatMessage]) -> tuple[list[Exchange], set[str], int | None]:
    """(exchanges, the ids of `write_stdin` polls folded into the command they polled, the session
    of a command still running at the end or None)."""
    calls: dict[str, ToolCall] = {}
    out: list[Exchange] = []
    shown: dict[int, tuple[str, str, int | None, int | None, bool]] = {}  # index -> command, text, exit, total, error
    running: dict[int, int] = {}  # unified-exec session -> index in out
    polls: set[str] = set()
    for position, message in enumerate(messages):
        if isinstance(message, ChatMessageAssistant):
            for made in message.tool_calls or []:
                calls[made.id] = made
            continue
        if not isinstance(message, ChatMessageTool):
            continue
        call_id = message.tool_call_id or ""
        call = calls.get(call_id)
        text = message.error.message if message.error is not None else message.text
        parsed = parse_codex_output(text)
        if call is not None and call.function == "write_stdin":  # a poll: more of a running command's output
            polls.add(call_id)
            session = (call.arguments or {}).get("session_id")
            index = running.pop(int(session), None) if isinstance(session, (int, float)) else None
            if index is not None:
                polled, before, _, total, error = shown[index]
                body = before + (parsed.body if parsed is not None else text)
                code = parsed.exit_code if parsed is not None else None
                shown[index] = (polled, body, code, total, error or message.error is not None)
                out[index] = _exchange(out[index].position, out[index].call_id, polled, body, shown[index][4], code, total)
                if parsed is not None and parsed.session_id is not None:
                    running[parsed.session_id] = index
            continue
        command = _command(call) if call is not None else None
        if command is None:  # a non-shell tool, or a call DCP dropped: its name is all there is
            out.append(Exchange(position, call_id, call.function if call else (message.function or ""),
                                dict(call.arguments or {}) if call else {}, text, message.error is not None))
            continue
        body = parsed.body if parsed is not None else text
        code = parsed.exit_code if parsed is not None else None
        total = parsed.total_lines if parsed is not None else None
        shown[len(out)] = (command, body, code, total, message.error is not None)
        if parsed is not None and parsed.session_id is not None:
            running[parsed.session_id] = len(out)
        out.append(_exchange(position, call_id, command, body, message.error is not None, code, total))
    return out, polls, next(iter(running), None)


def codex_exchanges(messages: list[ChatMessage]) -> list[Exchange]:
    """The tool results of a Codex request as the sim perceives them (module docstring), in input
    order; a command Codex left running is one exchange with the output of every `write_stdin`
    poll of it appended, failed or not by the exit code the last poll states."""
    return _perceive(messages)[0]


def _hunk(view: FileView, old: str, new: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(context before, old lines, new lines, context after) of one replacement, from the visible
    lines of the file: the whole lines holding `old`, with `old` replaced by `new` in them."""
    numbers = sorted(view.lines)
    for i, n in enumerate(numbers):
        run = [n]
        while i + len(run) < len(numbers) and numbers[i + len(run)] == run[-1] + 1:
            run.append(numbers[i + len(run)])
        text = "\n".join(view.lines[k] for k in run)
        at = text.find(old)
        if at < 0:
            continue
        first = run[0] + text.count("\n", 0, at)
        last = run[0] + text.count("\n", 0, at + len(old.rstrip("\n")))
        block = "\n".join(view.lines[k] for k in range(first, last + 1))
        start = at - sum(len(view.lines[k]) + 1 for k in range(run[0], first))
        changed = block[:start] + new + block[start + len(old):]
        before = [view.lines[k] for k in range(max(run[0], first - CONTEXT_LINES), first)]
        after = [view.lines[k] for k in range(last + 1, min(run[-1], last + CONTEXT_LINES) + 1)]
        return before, block.split("\n"), changed.split("\n"), after
    return [], old.rstrip("\n").split("\n"), new.rstrip("\n").split("\n"), []


def patch_command(path: str, edits: list[dict[str, str]], view: FileView) -> str:
    """The `apply_patch` shell command of pi-shaped `edits` (`oldText` -> `newText`) of `path`."""
    lines = ["*** Begin Patch", f"*** Update File: {path}"]
    for edit in edits:
        before, old, new, after = _hunk(view, str(edit.get("oldText", "")), str(edit.get("newText", "")))
        lines.append("@@")
        lines += [f" {s}" for s in before] + [f"-{s}" for s in old] + [f"+{s}" for s in new] + [f" {s}" for s in after]
    lines.append("*** End Patch")
    return "apply_patch <<'EOF'\n" + "\n".join(lines) + "\nEOF"


def codex_call(function: str, arguments: dict[str, Any], call_id: str, tools: list[ToolInfo],
               exchanges: list[Exchange]) -> ToolCall:
    """The Codex tool call carrying the sim's action `function(arguments)` (module docstring).

    Args:
        function, arguments: the action in pi's vocabulary (`read`, `bash`, `edit`).
        call_id: the sim's deterministic call id.
        tools: the request's tools (the shell tool offered decides the call's shape).
        exchanges: the request's exchanges as perceived (an edit's hunk is written from them).

    Raises:
        ValueError: an action with no Codex form, or a request offering none of `SHELL_TOOLS`.
    """
    if function == "read":
        command = read_command(str(arguments["path"]), arguments.get("offset"), arguments.get("limit"))
    elif function == "bash":
        command = str(arguments["command"])
    elif function == "edit":
        path = str(arguments["path"])
        if not arguments.get("edits"):
            raise ValueError(f"an edit of {path} with no replacement has no apply_patch form")
        command = patch_command(path, list(arguments.get("edits") or []), file_view(exchanges, norm_path(path)))
    else:
        raise ValueError(f"the sim's action {function!r} has no Codex form (it acts through read, bash, edit)")
    names = [t.name for t in tools]
    shell = next((s for s in SHELL_TOOLS if s in names), None)
    if shell == "exec_command":
        return ToolCall(id=call_id, function=shell, arguments={"cmd": command})
    if shell == "shell":
        return ToolCall(id=call_id, function=shell, arguments={"command": ["bash", "-lc", command]})
    if shell == "shell_command":
        return ToolCall(id=call_id, function=shell, arguments={"command": command})
    raise ValueError(f"a Codex request with none of its shell tools {SHELL_TOOLS}: {names}")


def _is_context(message: ChatMessage) -> bool:
    return isinstance(message, ChatMessageUser) and message.text.lstrip().startswith(_CODEX_CONTEXT)


def to_sim(messages: list[ChatMessage], tools: list[ToolInfo]) -> SimView:
    """Codex's request in pi's names, shapes and result texts (module docstring): Codex's context
    blocks left out, each shell call as the action it came from, each result as `codex_exchanges`
    perceives it (a failed command an error result); the tools offered are the sim's `TOOL_NAMES`.
    `context`: the shell tool to answer with and the converted messages (an edit's hunk is written
    from what they show); `wait`, when a command Codex yielded on (`Process running with session ID
    N`, after its 10 s default wait) has not ended yet, the `write_stdin` poll of it the sim sends
    instead of deciding (readbench.sim.provider); the polls themselves are left out of the view."""
    exs, polls, waiting = _perceive(messages)
    perceived = {e.call_id: e for e in exs}
    out: list[ChatMessage] = []
    for message in messages:
        if _is_context(message) or (isinstance(message, ChatMessageTool) and message.tool_call_id in polls):
            continue
        if isinstance(message, ChatMessageAssistant) and message.tool_calls:
            calls = [ToolCall(id=c.id, function=perceived[c.id].function, arguments=perceived[c.id].arguments)
                     if c.id in perceived else c for c in message.tool_calls if c.id not in polls]
            out.append(message.model_copy(update={"tool_calls": calls or None}))
        elif isinstance(message, ChatMessageTool) and (ex := perceived.get(message.tool_call_id or "")) is not None:
            if ex.is_error:
                out.append(ChatMessageTool(content="", tool_call_id=ex.call_id, function=ex.function,
                                           error=ToolCallError("unknown", ex.text)))
            else:
                out.append(ChatMessageTool(content=ex.text, tool_call_id=ex.call_id, function=ex.function))
        else:
            out.append(message)
    names = [t.name for t in tools]
    shell = next((s for s in SHELL_TOOLS if s in names), "")
    offered = [ToolInfo(name=n, description=f"through Codex's {shell}", parameters=ToolParams()) for n in sorted(TOOL_NAMES)]
    context: dict[str, Any] = {"shell": shell, "messages": out}
    if waiting is not None and "write_stdin" in names:  # poll the command until it ends, then decide
        context["wait"] = ("write_stdin", {"session_id": waiting, "chars": ""})
    return SimView(out, offered if shell else [], context)


def from_sim(function: str, arguments: dict[str, Any], context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The sim's pi-shaped call as Codex's shell call (`codex_call`; `context` from `to_sim`).

    Raises:
        ValueError: an action with no Codex form, or a request that offered no shell tool.
    """
    shell = str(context.get("shell") or "")
    call = codex_call(function, arguments, "", [ToolInfo(name=shell, description="", parameters=ToolParams())] if shell else [],
                      exchanges(list(context.get("messages") or [])))
    return call.function, dict(call.arguments)


def _pi_context(messages: list[ChatMessage]) -> dict[str, Any]:
    """`from_sim`'s context for Codex's own messages (readbench.sim.dialect.pi_named): the shell tool
    the first shell call used (the one to answer with) and the messages."""
    shell = next((c.function for m in messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or []
                  if c.function in SHELL_TOOLS and _command(c) is not None), "")
    return {"shell": shell, "messages": list(messages)}


def _pi_call(call: ToolCall, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A Codex shell call as the pi tool call it stands for (`read` with its path and range, `edit`
    with its path, else `bash` with the command), so readbench's DCP strategies, which key on pi's
    names and `path`, see Codex's reads, edits and test runs; a `write_stdin` poll or another tool
    keeps its name."""
    command = _command(call) if call.function in SHELL_TOOLS else None
    return _as_action(command) if command is not None else (call.function, dict(call.arguments or {}))


DIALECT = Dialect(
    name="codex",
    origin="codex-cli 0.171.0 probed through inspect's sandbox agent bridge (notes/codex.md); sessions.md §3",
    tools=frozenset(SHELL_TOOLS),
    to_sim=to_sim,
    from_sim=from_sim,
    pi_context=_pi_context,
    pi_call=_pi_call,
)
