"""File reads in a recorded session, from every harness's own evidence (issue 14, sessions.md).

A `ReadCall` is one tool call that read (part of) a file:
- pi's `read` (`path`, `offset`, `limit`; pi-tools.md §1): the delivered range and the file's
  line count come from the continuation notices pi appends (`[Showing lines S-E of T ...]`,
  `[R more lines in file. Use offset=N ...]`, the legacy `... (R more lines not shown. Use
  offset=N ...)`, `[Line S is ..., exceeds ...]`);
- Claude Code's `Read` (`file_path`, `offset`, `limit`): the result's `toolUseResult.file`
  (`startLine`, `numLines`, `totalLines`) says what was delivered of how much;
- shell reads through any bash/shell tool (Codex's `shell`, pi's and Claude Code's `bash`):
  `cat F`, `nl -ba F`, `sed -n 'A,Bp' F`, `head -n N F`, `tail -n N F`, `nl -ba F | sed -n 'A,Bp'` (B may
  be `$`: to the end), each
  alone or after one `cd DIR && ` (pi's sessions mostly read that way; `cd` is kept in `cd`);
  PowerShell's `Get-Content [-Raw] [-Path|-LiteralPath] F [-TotalCount N | -Head N | -Tail N]`,
  optionally `| Select-Object [-Skip S] [-First N | -Last N]` (Codex's `shell_command` on Windows);
  Codex prefixes an output it cut for the model with `Total output lines: T` (T = lines the
  command printed; readbench.harness.codex_output reads every form of its result): such a read is
  `capped`. When the output is found and not cut, the lines it
  holds fix `last_line` (a range past the end of the file prints fewer lines), and a read that
  stopped short of what it asked for, or a `cat`, tells the file's line count.
A result the harness marks as an error (pi's `isError`, Claude Code's `is_error` or
`<tool_use_error>`) delivers no lines. Reads are collected from every call's response, in call order; the result text is looked up by
tool-call id in the session's contexts (a result that never reached a later request, e.g. of the
last call, has `result_chars` 0 and `found` False).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessageTool

from readbench.harness import read_tool, shell_command, shell_tool
from readbench.harness.codex_output import CUT_MARKER, parse_codex_output
from readbench.read import notices
from readbench.sessions._types import Session

__all__ = ["ReadCall", "cut_ranges", "read_calls", "shell_output", "tool_results"]

# pi's notices, parsed with the patterns of the read families that write them (readbench.read.notices)
_SHOWING, _MORE, _LEGACY_MORE, _TOO_LONG = notices.SHOWING, notices.MORE, notices.LEGACY_MORE, notices.LONG_LINE
_TOTAL_OUTPUT = re.compile(r"Total output lines: (\d+)")
_CC_NUMBERED = re.compile(r"^ *(\d+)→")
_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+|\$))?p$")
_CD = re.compile(r"^cd\s+(\S+|'[^']*'|\"[^\"]*\")\s*&&\s*")
_SHELL_ERROR = re.compile(r"^(?:cat|sed|head|tail|nl): ", re.M)


@dataclass(frozen=True)
class ReadCall:
    """One file read (module docstring).

    Attributes:
        call_index: the model call whose response asked for it.
        tool_call_id, tool: as recorded.
        path: the path as given.
        offset: first line asked for (1-based), None when not given.
        limit: lines asked for, None when not given.
        blind: neither offset nor limit (a whole-file read).
        via_shell: read through a shell command.
        first_line, last_line: the lines delivered (1-based, inclusive), when known.
        total_lines: the file's line count, when the harness says.
        capped: the tool cut the result short of what was asked (a cap hit); None when unknown.
        result_chars: characters of the result text (0 when not found).
        found: the result message was found in the session.
        position: the tool call's place among its response's tool calls (0-based).
        cd: for a shell read after `cd DIR && `, DIR (a relative `path` is relative to it).
        seen: the line ranges the model saw when the harness cut the middle out of the output
            (Codex's `…N chars truncated…`: `cut_ranges`); empty when it saw first..last whole.
    """

    call_index: int
    tool_call_id: str
    tool: str
    path: str
    offset: int | None
    limit: int | None
    blind: bool
    via_shell: bool
    first_line: int | None
    last_line: int | None
    total_lines: int | None
    capped: bool | None
    result_chars: int
    found: bool
    position: int = 0
    cd: str | None = None
    seen: tuple[tuple[int, int], ...] = ()


def cut_ranges(body: str, first: int, printed: int) -> tuple[tuple[int, int], ...]:
    """The line ranges a model saw of an output Codex cut in the middle: `body` as Codex passed it
    (readbench.harness.codex_output: `…N chars truncated…` between a head and a tail, each cut
    mid-line at the marker), the command printing `printed` lines from file line `first`. The
    whole lines before the marker are the head, those after the line the marker ends in the tail.
    Empty when `body` holds no marker.

    Example: 87 whole lines, the marker, 295 whole lines of a 3,999-line `nl -ba` ->
    ((1, 87), (3705, 3999)).
    """
    m = CUT_MARKER.search(body)
    if m is None:
        return ()
    head = body[: m.start()].count("\n")
    tail_text = body[m.end():].partition("\n")[2]
    tail = tail_text.count("\n") + (0 if tail_text.endswith("\n") or not tail_text else 1)
    last = first + printed - 1
    spans = [(first, first + head - 1)] if head else []
    if tail:
        spans.append((max(first + head, last - tail + 1), last))
    return tuple(spans)


#: A model-written line number or count above this is read as this: more lines than any file has,
#: and still a 32-bit value in the audit's tables (a `limit` of 1e19 overflowed their int64 column)
MAX_LINE_ARG = 2**31 - 1


def _int(v: Any) -> int | None:
    """A read argument (offset, limit: lines) as written by the model: an int, an integral float or
    a string of digits; None for anything else. Capped at +-`MAX_LINE_ARG`."""
    if isinstance(v, bool):
        return None
    out: int | None = None
    if isinstance(v, int):
        out = v
    elif isinstance(v, float) and v.is_integer():
        out = int(v)
    elif isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():  # not '²': isdigit, int() refuses it
        out = int(v)
    return None if out is None else max(-MAX_LINE_ARG, min(out, MAX_LINE_ARG))


def _tool_read(text: str, offset: int | None, limit: int | None, meta: dict[str, Any] | None,
               default_limit: int | None) -> tuple:
    """(first, last, total, capped) from a read tool's result; `default_limit`: the lines the tool
    returns when no limit is given (`ReadTool.default_limit`)."""
    f = ((meta or {}).get("claude_code") or {}).get("toolUseResult") or {}
    f = f.get("file") if isinstance(f, dict) else None
    if isinstance(f, dict) and _int(f.get("startLine")) is not None and _int(f.get("numLines")) is not None:
        first, n, total = _int(f["startLine"]), _int(f["numLines"]), _int(f.get("totalLines"))
        assert first is not None and n is not None  # tested above
        last = first + n - 1 if n else first - 1
        capped = None if total is None else (limit is None and last < total) or (limit is not None and n < limit and last < total)
        return first, last, total, capped
    start = offset or 1
    if _CC_NUMBERED.match(text):  # Claude Code's `cat -n` text without its toolUseResult: the numbers say
        nums = []
        for row in text.split("\n"):
            if not (numbered := _CC_NUMBERED.match(row)):
                break
            nums.append(int(numbered.group(1)))
        # Claude Code reads 2,000 lines unless told: fewer than that (or than the limit) is the end
        shown, asked = len(nums), default_limit if limit is None else limit
        return nums[0], nums[-1], nums[-1] if asked is not None and shown < asked else None, None
    if m := _TOO_LONG.match(text):
        return int(m.group(1)), None, None, True
    if m := _SHOWING.search(text):
        return int(m.group(1)), int(m.group(2)), int(m.group(3)), True
    if m := _MORE.search(text):
        last = int(m.group(2)) - 1
        return start, last, last + int(m.group(1)), False
    if m := _LEGACY_MORE.search(text):
        last = int(m.group(2)) - 1
        return start, last, last + int(m.group(1)), limit is None
    if text and not text.startswith(("Error", "ENOENT", "File not found")):
        n = text.count("\n") + (0 if text.endswith("\n") else 1)
        return start, start + n - 1, None if offset or limit else start + n - 1, False
    return None, None, None, None


def _shell_read(command: str) -> tuple[str, int | None, int | None, bool, str | None] | None:
    """(path, offset, limit, tail, cd) of a simple shell read, None for anything else."""
    cmd = command.strip()
    cd = None
    if m := _CD.match(cmd):
        cd = m.group(1).strip("'\"")
        cmd = cmd[m.end():]
    if " && " in cmd or ";" in cmd or "\n" in cmd or "||" in cmd:
        return None
    try:
        parts = [shlex.split(p) for p in cmd.split("|")]
    except ValueError:
        return None
    if not parts or not parts[0]:
        return None
    if len(parts) == 2 and parts[0][:2] == ["nl", "-ba"] and len(parts[0]) == 3 and parts[1][:2] == ["sed", "-n"]:
        m = _SED_RANGE.match(parts[1][2]) if len(parts[1]) == 3 else None
        if m and m.group(2) == "$":
            return parts[0][2], int(m.group(1)), None, False, cd
        if m:
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            return parts[0][2], a, b - a + 1, False, cd
        return None
    if len(parts) != 1:
        return None
    argv = parts[0]
    if any(a in (">", ">>", "<", "<<") or a.startswith((">", "<")) for a in argv):
        return None
    if argv[0] == "cat" and len(argv) == 2 and not argv[1].startswith("-"):
        return argv[1], None, None, False, cd
    if argv[:2] == ["nl", "-ba"] and len(argv) == 3 and not argv[2].startswith("-"):
        return argv[2], None, None, False, cd
    if argv[0] == "sed" and len(argv) == 4 and argv[1] == "-n":
        m = _SED_RANGE.match(argv[2])
        if m and m.group(2) == "$":
            return argv[3], int(m.group(1)), None, False, cd
        if m:
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            return argv[3], a, b - a + 1, False, cd
    if argv[0] in ("head", "tail") and len(argv) == 4 and argv[1] == "-n" and _int(argv[2]) is not None:
        return argv[3], None, _int(argv[2]), argv[0] == "tail", cd
    if argv[0] in ("head", "tail") and len(argv) == 3 and re.fullmatch(r"-\d+", argv[1]):
        return argv[2], None, int(argv[1][1:]), argv[0] == "tail", cd
    return None


def _powershell_read(command: str) -> tuple[str, int | None, int | None, bool, str | None] | None:
    """(path, offset, limit, tail, None) of a simple PowerShell `Get-Content` read (module
    docstring), None for anything else. Backslashes are path separators here, not escapes."""
    cmd = command.strip()
    if any(c in cmd for c in ("\n", ";", "&&", "{", "(", "$")) or cmd.count("|") > 1:
        return None
    first, pipe, second = cmd.partition("|")
    try:
        argv = shlex.split(first, posix=False)
        sel = shlex.split(second, posix=False) if second else []
    except ValueError:
        return None
    if not argv or argv[0].lower() not in ("get-content", "gc"):
        return None
    if pipe and not sel:  # a pipe into nothing
        return None
    path = head = tail = None
    raw, given = False, set()
    it = iter(argv[1:])
    for a in it:
        low = a.lower()
        if low in given:  # PowerShell refuses a parameter given twice
            return None
        given.add(low)
        if low == "-raw":
            raw = True
            continue
        if low in ("-path", "-literalpath", "-totalcount", "-head", "-first", "-tail", "-last", "-encoding"):
            v = next(it, None)
            if v is None or v.startswith("-"):
                return None
            if low in ("-path", "-literalpath"):
                if path is not None:
                    return None
                path = v
            elif low != "-encoding":
                n = _int(v)
                if n is None:
                    return None
                if low == "-tail":
                    tail = n
                else:
                    head = n
        elif a.startswith("-") or path is not None:
            return None
        else:
            path = a
    if path is None or (head is not None and tail is not None) or any(c in path for c in ",*?"):
        return None  # several files, or a wildcard
    if raw and sel:  # -Raw gives one string: Select-Object takes or skips all of it
        return None
    offset, limit, is_tail = None, head if tail is None else tail, tail is not None
    if sel:
        if sel[0].lower() not in ("select-object", "select") or is_tail or head is not None:
            return None
        keys = [x.lower() for x in sel[1::2]]
        opts = dict(zip(keys, sel[2::2]))
        if (len(sel) < 3 or len(sel) % 2 == 0 or len(set(keys)) != len(keys) or set(opts) - {"-skip", "-first", "-last"}
                or any(_int(v) is None for v in opts.values())):
            return None
        skip, n_first, n_last = (_int(opts.get(k)) for k in ("-skip", "-first", "-last"))
        if n_last is not None and (skip is not None or n_first is not None):
            return None
        if n_last is not None:
            limit, is_tail = n_last, True
        else:
            offset, limit = ((skip or 0) + 1 if skip else None), n_first
    return path.strip("'\""), offset, limit, is_tail, None


def shell_output(text: str, tool: str | None = None) -> str:
    """The command output inside a shell tool's result: Codex wraps it as JSON
    (`{"output": ..., "metadata": ...}`) or as `Exit code: N\nWall time: ...\nOutput:\n...`;
    other harnesses return it as is. A `Total output lines: T` line and the blank line after it
    (Codex's mark of a cut output) are dropped too. `tool`: the shell tool's name; its record's
    `empty_output` (Claude Code's `(Bash completed with no output)`) gives "" (no file line)."""
    shell = shell_tool(tool) if tool else None
    if shell is not None and shell.empty_output is not None and text == shell.empty_output:
        return ""
    if (codex := parse_codex_output(text)) is not None:
        return codex.body
    if m := re.match(r"Total output lines: \d+\n\n?", text):
        text = text[m.end():]
    return text


def tool_results(session: Session) -> dict[str, ChatMessageTool]:
    """Tool result messages by tool-call id (the first one seen, over every context)."""
    results: dict[str, ChatMessageTool] = {}
    for ctx in session.contexts:
        for m in ctx:
            if isinstance(m, ChatMessageTool) and m.tool_call_id:
                results.setdefault(m.tool_call_id, m)
    return results


def read_calls(session: Session, results: dict[str, ChatMessageTool] | None = None) -> list[ReadCall]:
    """Every file read of `session`, in call order (module docstring). `results`: the session's
    `tool_results`, when the caller has them already."""
    results = tool_results(session) if results is None else results
    out: list[ReadCall] = []
    for call in session.calls:
        if call.output is None:
            continue
        for pos, tc in enumerate(call.output.tool_calls or []):
            res = results.get(tc.id)
            text = res.text if res is not None else ""
            args = tc.arguments or {}
            if (tool := read_tool(tc.function)) is not None:
                path = args.get(tool.path_key)
                if not isinstance(path, str):
                    continue
                offset, limit = _int(args.get(tool.offset_key)), _int(args.get(tool.limit_key))
                if res is not None and (res.error is not None or text.startswith("<tool_use_error>")):
                    first = last = total = capped = None  # an error result delivers no file lines
                else:
                    first, last, total, capped = _tool_read(text, offset, limit, res.metadata if res else None,
                                                            tool.default_limit)
                out.append(ReadCall(call.index, tc.id, tc.function, path, offset, limit, offset is None and limit is None,
                                    False, first, last, total, capped, len(text), res is not None, pos))
            elif (shell := shell_tool(tc.function)) is not None:
                cmd = shell_command(args)
                parsed = _shell_read(cmd) if cmd else None
                if parsed is None and cmd and shell.powershell:
                    parsed = _powershell_read(cmd)
                if parsed is None:
                    continue
                path, offset, limit, tail, cd = parsed
                # Codex cuts a long output and says how long it was: the model saw only part of it
                codex = parse_codex_output(text)
                cut = codex.total_lines if codex is not None else (
                    _int(m.group(1)) if (m := _TOTAL_OUTPUT.search(text[:200])) else None)
                first = offset or (None if tail else 1)
                last = (first + limit - 1) if first is not None and limit is not None else None
                total = None
                if cut is not None and first is not None:
                    last = first + cut - 1 if last is None else min(last, first + cut - 1)
                elif res is not None and first is not None and res.error is None:
                    body = shell_output(text, tc.function)
                    if body and not _SHELL_ERROR.match(body):
                        n = body.count("\n") + (0 if body.endswith("\n") else 1)
                        if limit is None or n < limit:  # the file ended: its line count is known
                            total = first + n - 1
                        last = first + min(n, limit if limit is not None else n) - 1
                seen = cut_ranges(codex.body, first, cut) if codex is not None and cut and first is not None else ()
                out.append(ReadCall(call.index, tc.id, tc.function, path, offset, limit, offset is None and limit is None,
                                    True, first, last, total, cut is not None, len(text), res is not None, pos, cd, seen))
    return out
