"""Claude Code's tools as the simulated agent speaks them (readbench.sim.dialect; GitHub issue 24 item 4).

Shapes probed on Claude Code 2.1.332 through inspect's sandbox agent bridge (notes/claude.md) and
read from real transcripts (docs/specs/sessions.md §2, variants.md "claude-code"):

| sim (pi)                                   | Claude Code                                                   |
|--------------------------------------------|---------------------------------------------------------------|
| `read {path, offset?, limit?}`             | `Read {file_path (absolute), offset?, limit?}` (offset 1-based) |
| `grep {pattern, path?, glob?, ignoreCase?, literal?, context?, limit?}` | `Grep {pattern (regex), path?, glob?, output_mode: "content", -n: true, -i?, -C?, head_limit?}` |
| `bash {command}`                           | `Bash {command, description}`                                 |
| `edit {path, edits: [{oldText, newText}]}` | `Edit {file_path, old_string, new_string}` (one edit a call)   |
| `write {path, content}`                    | `Write {file_path, content}`                                  |

Results, as the sim's perception expects pi's (readbench.sim.observe); a PreToolUse hook's denial
(`PreToolUse:Read hook error: <reason>`) is its reason alone (readbench.harness.claude_code.hook_reason):
- Read: 2.1.332 returns a whole file of any line count within its 25,000-token budget (the tool
  description's "Reads up to 2000 lines by default" does not hold) and, over it, the first lines
  within the budget followed by a separate `[Truncated: PARTIAL view — P: showing lines S-E of T
  total ...]` message -> pi's cap notice `[Showing lines S-E of T. Use offset=E+1 to continue.]`
  appended to the result; `{n}\\t` (2.1.x) or `{n:>6}→` (2.0.x) numbered lines -> `{n:>6}\\t` (the numbered form the
  sim parses, with the 2000-line default the tool's description states); `<system-reminder>`
  blocks dropped; the past-EOF reminder (`shorter than the provided offset (O). The file has T
  lines.`) -> pi's `Offset O is beyond end of file (T lines total)` error; the "File unchanged
  since last read" stub of later versions -> readbench's dedup stub for the range of the latest
  earlier read of that file; refusals (token budget, 256KB size) pass as they are: the read
  families' `block` notices match them (readbench.read.notices).
- Grep: `path:N:text` / `path-N-text` (directory search; paths relative to the working
  directory) or `N:text` / `N-text` (one file) -> pi's `rel:N: text` / `rel-N- text`, `rel`
  relative to the search path (a file's basename); `No matches found` as it is; the
  `[Showing results with pagination = limit: N]` line -> pi's `N matches limit reached` notice.
- Bash: an error `Exit code N\\n<output>` -> `<output>\\n\\nCommand exited with code N`;
  `(Bash completed with no output)` -> `(no output)`.
The working directory is the one the system prompt states (`Primary working directory: ...`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo

from readbench.harness.claude_code import hook_reason
from readbench.read.notices import beyond_eof_notice, cap_notice, stub_notice
from readbench.sim.dialect import Dialect, SimView

__all__ = ["DIALECT"]

_NAMES = {"Read": "read", "Grep": "grep", "Bash": "bash", "Edit": "edit", "Write": "write"}
_CWD = re.compile(r"(?:Primary working directory|Working directory): *(\S+)")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\n?", re.S)
_SHORTER = re.compile(r"shorter than the provided offset \((\d+)\)\. The file has (\d+) lines?")
_UNCHANGED = "File unchanged since last read"
_NUMBERED = re.compile(r"^ *(\d+)(?:→|\t)(.*)$")
_EXIT = re.compile(r"^Exit code (\d+)\n?")
_GREP_DIR = re.compile(r"^(.+?)([:-])(\d+)[:-](.*)$")
_GREP_FILE = re.compile(r"^(\d+)([:-])(.*)$")
_REGEX_META = set(".^$*+?()[]{}|\\")
_PARTIAL = re.compile(r"^\[Truncated: PARTIAL view .*?showing lines (\d+)-(\d+) of (\d+) total")
_PAGINATION = re.compile(r"\n*\[Showing results with pagination = limit: (\d+)(?:, offset: \d+)?\]\s*$")


def _cwd(messages: list[ChatMessage]) -> str | None:
    for m in messages:
        if isinstance(m, (ChatMessageSystem, ChatMessageUser)):
            found = _CWD.search(m.text)
            if found:
                return found.group(1).rstrip("/") or "/"
    return None


def _rel(path: Any, cwd: str | None) -> Any:
    if not isinstance(path, str) or cwd is None:
        return path
    if path == cwd:
        return "."
    return path[len(cwd) + 1:] if path.startswith(cwd + "/") else path


def _abs(path: str, cwd: str | None) -> str:
    if cwd is None or path.startswith("/"):
        return path
    return os.path.normpath(os.path.join(cwd, path))


def _unescape(pattern: str) -> tuple[str, bool]:
    """(pattern, literal): a regex with no unescaped metacharacter is the literal it spells."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in _REGEX_META:
            return pattern, False
        out.append(c)
        i += 1
    return "".join(out), True


def _call_to_sim(function: str, args: dict[str, Any], cwd: str | None) -> tuple[str, dict[str, Any]]:
    if function == "Read":
        out = {"path": _rel(args.get("file_path"), cwd)}
        out.update({k: args[k] for k in ("offset", "limit") if args.get(k) is not None})
        return "read", out
    if function == "Grep":
        pattern, literal = _unescape(str(args.get("pattern", "")))
        out = {"pattern": pattern}
        if literal:
            out["literal"] = True
        for key, sim in (("path", "path"), ("glob", "glob"), ("-i", "ignoreCase"), ("-C", "context"),
                         ("head_limit", "limit")):
            if args.get(key) is not None:
                out[sim] = _rel(args[key], cwd) if key == "path" else args[key]
        return "grep", out
    if function == "Bash":
        return "bash", {"command": args.get("command")}
    if function == "Edit":
        return "edit", {"path": _rel(args.get("file_path"), cwd),
                        "edits": [{"oldText": args.get("old_string"), "newText": args.get("new_string")}]}
    if function == "Write":
        return "write", {"path": _rel(args.get("file_path"), cwd), "content": args.get("content")}
    return function, args


def _read_text(text: str, earlier: tuple[int, int, str] | None) -> tuple[str, bool]:
    """A Read result as the sim reads results: (text, is_error)."""
    shorter = _SHORTER.search(text)
    if shorter:
        return beyond_eof_notice(int(shorter.group(1)), int(shorter.group(2))), True
    if text.startswith(_UNCHANGED) and earlier is not None:
        return stub_notice(*earlier), False
    text = _REMINDER.sub("", text).rstrip("\n")
    lines = text.split("\n")
    parsed = [_NUMBERED.match(line) for line in lines]
    if lines and all(parsed):
        return "\n".join(f"{int(p.group(1)):>6}\t{p.group(2)}" for p in parsed if p), False
    return text, False


def _grep_text(text: str, search: str | None, cwd: str | None) -> str:
    """Claude Code's content-mode Grep output in pi's `rel:N: text` form (module docstring)."""
    paged = _PAGINATION.search(text)
    notice = ""
    if paged:
        text, n = text[:paged.start()], int(paged.group(1))
        notice = f"\n\n[{n} matches limit reached. Use limit={2 * n} for more, or refine pattern]"
    base = _abs(search, cwd) if search else cwd
    lines = [line for line in text.split("\n") if line and line != "--"]
    single = bool(search) and bool(lines) and all(_GREP_FILE.match(line) for line in lines)  # one file: no path
    out = []
    for line in text.split("\n"):
        if line == "--":
            continue
        match = _GREP_FILE.match(line) if single else None
        if match is not None and base is not None:
            out.append(f"{os.path.basename(base)}{'-' if match.group(2) == '-' else ':'}{match.group(1)}"
                       f"{match.group(2)} {match.group(3)}")
            continue
        match = _GREP_DIR.match(line)
        if match is None or base is None:
            out.append(line)
            continue
        path = _abs(match.group(1), cwd)
        rel = os.path.relpath(path, base) if path.startswith(base.rstrip("/") + "/") else path
        sep = match.group(2)
        out.append(f"{rel}{sep}{match.group(3)}{sep} {match.group(4)}")
    return "\n".join(out) + notice


def _bash_text(text: str, is_error: bool) -> str:
    if text.strip() == "(Bash completed with no output)":
        return "(no output)"
    code = _EXIT.match(text) if is_error else None
    if code is None:
        return text
    body = text[code.end():] or "(no output)"
    return f"{body}\n\nCommand exited with code {code.group(1)}"


def to_sim(messages: list[ChatMessage], tools: list[ToolInfo]) -> SimView:
    """Claude Code's request in pi's names, shapes and result texts (module docstring).

    Args:
        messages: the request's messages as the bridge hands them over (inspect messages).
        tools: the tools offered.

    Returns:
        SimView with `context = {"cwd": <working directory or None>}`.
    """
    context = _pi_context(messages)
    cwd = context["cwd"]
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    last_read: dict[str, tuple[int, int, str]] = {}
    out: list[ChatMessage] = []
    for m in messages:
        if isinstance(m, ChatMessageUser) and m.text and not _REMINDER.sub("", m.text).strip():
            continue  # a reminder-only user turn is no prompt
        partial = _PARTIAL.match(m.text) if isinstance(m, ChatMessageSystem) else None
        if partial and out and isinstance(out[-1], ChatMessageTool) and out[-1].function == "read":
            first, last, total = (int(g) for g in partial.groups())  # the notice after a token-capped Read
            out[-1] = out[-1].model_copy(update={"content": f"{out[-1].text}\n\n{cap_notice(first, last, total)}"})
            continue
        if isinstance(m, ChatMessageAssistant) and m.tool_calls:
            mapped = []
            for c in m.tool_calls:
                function, args = calls[c.id] = _pi_call(c, context)
                mapped.append(ToolCall(id=c.id, function=function, arguments=args))
            out.append(m.model_copy(update={"tool_calls": mapped}))
            continue
        if isinstance(m, ChatMessageTool):
            function, args = calls.get(m.tool_call_id or "", (_NAMES.get(m.function or "", m.function or ""), {}))
            is_error = m.error is not None
            text = hook_reason(m.error.message if m.error is not None else m.text)
            if function == "read":
                path = str(args.get("path", ""))
                text, became_error = _read_text(text, last_read.get(path))
                is_error = is_error or became_error
                numbered = [int(n) for n in re.findall(r"^ *(\d+)\t", text, re.M)]
                if numbered and not is_error:
                    last_read[path] = (min(numbered), max(numbered), m.tool_call_id or "")
            elif function == "grep" and not is_error:
                text = _grep_text(text, args.get("path") and _abs(str(args["path"]), cwd), cwd)
            elif function == "bash":
                text = _bash_text(text, is_error)
            update: dict[str, Any] = {"function": function, "content": text}
            if is_error:
                from inspect_ai.tool import ToolCallError

                update["error"] = ToolCallError("unknown", text)
            out.append(m.model_copy(update=update))
            continue
        out.append(m)
    offered = [t.model_copy(update={"name": _NAMES[t.name]}) if t.name in _NAMES else t for t in tools]
    return SimView(out, offered, context)


def _escape(pattern: str) -> str:
    return "".join(f"\\{c}" if c in _REGEX_META else c for c in pattern)


def from_sim(function: str, arguments: dict[str, Any], context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The sim's pi-shaped call as Claude Code's tool call (module docstring).

    Raises:
        ValueError: an edit with more than one replacement (Claude Code's Edit takes one), or a
            tool Claude Code has no counterpart for.
    """
    cwd = context.get("cwd")
    out: dict[str, Any]
    if function == "read":
        out = {"file_path": _abs(str(arguments["path"]), cwd)}
        out.update({k: arguments[k] for k in ("offset", "limit") if arguments.get(k) is not None})
        return "Read", out
    if function == "grep":
        pattern = str(arguments["pattern"])
        out = {"pattern": _escape(pattern) if arguments.get("literal") else pattern, "output_mode": "content",
               "-n": True}
        if arguments.get("path") is not None:
            out["path"] = _abs(str(arguments["path"]), cwd)
        for sim, key in (("glob", "glob"), ("ignoreCase", "-i"), ("context", "-C"), ("limit", "head_limit")):
            if arguments.get(sim) is not None:
                out[key] = arguments[sim]
        return "Grep", out
    if function == "bash":
        command = str(arguments["command"])
        return "Bash", {"command": command, "description": command.split("\n", 1)[0][:60]}
    if function == "edit":
        edits = arguments.get("edits") or []
        if len(edits) != 1:
            raise ValueError(f"Claude Code's Edit makes one replacement per call; the sim asked for {len(edits)}")
        return "Edit", {"file_path": _abs(str(arguments["path"]), cwd), "old_string": edits[0]["oldText"],
                        "new_string": edits[0]["newText"]}
    if function == "write":
        return "Write", {"file_path": _abs(str(arguments["path"]), cwd), "content": arguments.get("content", "")}
    raise ValueError(f"the simulated agent's tool {function!r} has no Claude Code counterpart")


def _pi_context(messages: list[ChatMessage]) -> dict[str, Any]:
    """`{"cwd": <the working directory the system prompt states, or None>}` (`to_sim`, `from_sim`)."""
    return {"cwd": _cwd(messages)}


def _pi_call(call: ToolCall, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A Claude Code tool call in pi's name and argument shape (paths relative to `context["cwd"]`)."""
    return _call_to_sim(call.function, dict(call.arguments or {}), context["cwd"])


DIALECT = Dialect(
    name="claude-code",
    origin="Claude Code 2.1.332 probed through inspect's sandbox agent bridge (notes/claude.md); sessions.md §2",
    tools=frozenset(_NAMES),
    to_sim=to_sim,
    from_sim=from_sim,
    pi_context=_pi_context,
    pi_call=_pi_call,
)
