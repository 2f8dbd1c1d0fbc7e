"""What a recorded session shows of its files: the lines each read delivered, the changes between
reads, and the file versions they imply (issue 14; docs/specs/sessions.md §1-3, variants.md
"B+dedup": "a read after the file changed (edit/write/bash) is never a repeat").

- `delivered_lines(read, message)`: the text of file lines `read.first_line..read.last_line` as
  the harness delivered them: pi's `read` text without its notice, Claude Code's `Read` text
  without its `cat -n` numbers (`     1→...`, `1<TAB>...`, ...: `notices.numbered_frame`, which also
  leaves out what Claude Code puts around them: a memory file's age reminder before, the
  malware reminder after), a shell read's output
  (`nl -ba` numbers removed); None when the result holds no file lines, was cut by Codex, or is
  a shell error (`sed: ...: No such file`).
- `file_writes(session)`: every tool call that changed, or may have changed, a file: the edit
  tools of every harness (`readbench.harness`: `edit`, `write`, `Edit`, `Write`, `MultiEdit`,
  `NotebookEdit`, `apply_patch`, `str_replace_editor` other than `view`, ...), and shell commands that redirect
  into a file, `sed -i`, `tee`, `mv`, `cp`, `rm`, `touch`, `patch`/`apply_patch` (named files), or
  `git checkout|reset|restore|stash|apply|pull|merge|rebase|switch|cherry-pick|revert`, a
  formatter with a write flag (`--write`, `--fix`, `-w`, `black`, `cargo fmt`): those may change
  any file (path None).
- `track_versions(session, reads)`: reads and writes in execution order (call, then the tool
  call's place in its response); a file's version ends at a write that names it or may change
  any file, and when a read shows a line whose text differs from what an earlier read of the
  same version showed, another line count, or lines past the known end (a change the session
  does not record, e.g. a generator run by a script). Each version collects
  every line any of its reads delivered, over the whole session, and its line count.

Line counts are file lines (pi-tools.md §1.2's `split("\\n")` without the phantom segment after a
final newline). pi's notices count that phantom (`[Showing lines 1-2000 of 5001]` for a
5,000-line file ending in a newline): a version whose end no read reached is assumed to end in a
newline (source files do), so its line count is the notice's T - 1.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessageTool

from readbench.harness import patch_paths, path_keys, read_tool, shell_command, tool_role
from readbench.read import notices
from readbench.sessions._types import Session
from readbench.sessions.reads import _TOTAL_OUTPUT, ReadCall, shell_output

__all__ = ["FileVersion", "FileWrite", "delivered_lines", "file_key", "file_writes", "track_versions"]

_CC_LINE = notices.NUMBERED_LINE
_NL_LINE = re.compile(r"^ *(\d+)\t(.*)$")
_PI_NOTICE, _PI_LEGACY_NOTICE = notices.NOTICE_AT_END, notices.LEGACY_MORE_AT_END
_SHELL_ERROR = re.compile(r"^(?:cat|sed|head|tail|nl): ", re.M)
_PI_BYTE_CUT = notices.SHOWING_KB
_GIT_ANY = {"checkout", "reset", "restore", "stash", "apply", "am", "pull", "merge", "rebase", "switch", "cherry-pick",
            "revert"}


def file_key(path: str, cwd: str | None) -> str:
    """A file's identity in a session: `path` made absolute against `cwd` (when relative and a
    cwd is known), then `posixpath.normpath`."""
    if cwd and not path.startswith(("/", "~")):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


@dataclass(frozen=True)
class FileWrite:
    """One tool call that changed (or may have changed) files.

    Attributes:
        call_index, position: the model call whose response asked for it, and the tool call's
            place among that response's tool calls.
        tool_call_id, tool: as recorded.
        paths: the file keys it names; empty with `any_file` when any file may have changed.
        any_file: the command may change files it does not name (git checkout, a formatter).
    """

    call_index: int
    position: int
    tool_call_id: str
    tool: str
    paths: tuple[str, ...]
    any_file: bool = False


def _shell_writes(command: str, cwd: str | None) -> tuple[list[str], bool]:
    """(file keys written, may write any file) of a shell command (module docstring)."""
    paths: list[str] = []
    anyf = False
    if "apply_patch" in command or "*** Begin Patch" in command:
        paths += patch_paths(command)
    for segment in re.split(r"&&|\|\||;|\n|\|", command):
        try:
            argv = shlex.split(segment, comments=True)
        except ValueError:
            argv = segment.split()
        if not argv:
            continue
        if argv[0] == "cd" and len(argv) >= 2:
            cwd = posixpath.join(cwd or "", argv[1]) if not argv[1].startswith("/") else argv[1]
            continue
        for k, a in enumerate(argv):
            target = None
            if a in (">", ">>", "1>", "2>", "&>") and k + 1 < len(argv):
                target = argv[k + 1]
            elif re.fullmatch(r"(?:\d|&)?>>?[^>&].*", a):
                target = a.lstrip("0123456789&").lstrip(">")
            if target and not target.startswith(("&", "/dev/")):
                paths.append(file_key(target, cwd))
        name = posixpath.basename(argv[0])
        args = [a for a in argv[1:] if not a.startswith("-")]
        if name == "sed" and any(a == "-i" or a.startswith("-i") for a in argv[1:]):
            paths += [file_key(a, cwd) for a in args[1:]]
        elif name in ("tee", "rm", "touch") and args:
            paths += [file_key(a, cwd) for a in args]
        elif name in ("mv", "cp") and len(args) >= 2:
            paths += [file_key(a, cwd) for a in (args if name == "mv" else args[-1:])]
        elif name == "git" and args and args[0] in _GIT_ANY:
            anyf = True
        elif name in ("black", "isort", "gofmt", "rustfmt") or (name == "cargo" and args[:1] == ["fmt"]):
            anyf = True
        elif any(a in ("--write", "--fix", "-w") for a in argv[1:]) or (name == "ruff" and "format" in args):
            anyf = True
    return paths, anyf


def file_writes(session: Session) -> list[FileWrite]:
    """Every tool call of `session` that changed or may have changed files (module docstring),
    in call order."""
    out: list[FileWrite] = []
    for call in session.calls:
        if call.output is None:
            continue
        for pos, tc in enumerate(call.output.tool_calls or []):
            args: dict[str, Any] = tc.arguments or {}
            name = tc.function or ""
            role = tool_role(name, args)
            if role == "edit":
                paths = [file_key(str(args[k]), session.cwd) for k in path_keys() if isinstance(args.get(k), str)]
                text = " ".join(str(v) for v in args.values() if isinstance(v, str))
                paths += [file_key(p, session.cwd) for p in patch_paths(text)]
                out.append(FileWrite(call.index, pos, tc.id, name, tuple(dict.fromkeys(paths)), not paths))
            elif role == "shell":
                cmd = shell_command(args)
                if cmd is None:
                    continue
                paths, anyf = _shell_writes(cmd, session.cwd)
                if paths or anyf:
                    out.append(FileWrite(call.index, pos, tc.id, name, tuple(dict.fromkeys(paths)), anyf))
    return out


def _numbered(read: ReadCall) -> bool:
    """The read's tool numbers its lines (`ReadTool.numbered`: Claude Code's `Read`)."""
    tool = read_tool(read.tool)
    return tool is not None and tool.numbered


def delivered_lines(read: ReadCall, message: ChatMessageTool | None) -> list[str] | None:
    """The text of lines `read.first_line..read.last_line` as delivered (module docstring), or
    None when the result holds no file lines this module can map."""
    if message is None or read.first_line is None or read.last_line is None or read.last_line < read.first_line:
        return None
    if message.error is not None:
        return None
    text = message.text
    count = read.last_line - read.first_line + 1
    if read.via_shell:
        if _TOTAL_OUTPUT.search(text[:200]):
            return None
        body = shell_output(text, read.tool)
        if _SHELL_ERROR.match(body):
            return None
        lines = body.split("\n")
        if lines and lines[-1] == "" and body.endswith("\n"):
            lines.pop()
        if lines and _NL_LINE.match(lines[0]):  # nl -ba: strip the numbers, which must run on
            parsed = [_NL_LINE.match(x) for x in lines]
            numbers = [int(m.group(1)) for m in parsed if m]
            if len(numbers) != len(lines) or numbers != list(range(read.first_line, read.first_line + len(lines))):
                return None
            lines = [m.group(2) for m in parsed]  # type: ignore[union-attr]
        return lines[:count] if len(lines) >= count else None
    if _numbered(read) or _CC_LINE.match(text.split("\n", 1)[0] or ""):
        frame = notices.numbered_frame(text)  # the harness's own prefix / suffix (a reminder) are no file lines
        if frame is None or frame.first != read.first_line:
            return None
        out = [m.group(2) for m in map(_CC_LINE.match, frame.body.split("\n"))]  # type: ignore[union-attr]
        return out if len(out) == count else None
    body = _PI_NOTICE.sub("", text, count=1)
    body = _PI_LEGACY_NOTICE.sub("", body, count=1)
    lines = body.split("\n")
    return lines[:count] if len(lines) >= count else None


@dataclass
class FileVersion:
    """One state of one file, as the session's reads showed it.

    Attributes:
        key: the file (`file_key`).
        index: 0, 1, ... per file, in order.
        lines: line number (1-based) -> text, every line any read of this version delivered.
        total_lines: the file's line count (file lines, no phantom), None when no read said.
        ends_with_newline: whether the file ends in a newline; None when no read reached its end.
        min_bytes: for some unknown lines, a lower bound on their UTF-8 size: pi's byte cap cut a
            read just before such a line, so it is at least as long as what the cap had left.
        full: every line from 1 to `total_lines` is known.
    """

    key: str
    index: int
    lines: dict[int, str] = field(default_factory=dict)
    total_lines: int | None = None
    ends_with_newline: bool | None = None
    min_bytes: dict[int, int] = field(default_factory=dict)
    _pi_total: int | None = None  # pi's T (phantom included) when that is all a read said

    @property
    def full(self) -> bool:
        """True when every line 1..total_lines is known."""
        n = self.line_count
        return n is not None and len(self.lines) >= n and all(k in self.lines for k in range(1, n + 1))

    @property
    def line_count(self) -> int | None:
        """File lines: `total_lines`, else pi's T - 1 (the module docstring's assumption)."""
        if self.total_lines is not None:
            return self.total_lines
        if self._pi_total is not None:
            return self._pi_total - 1 if self.ends_with_newline is not False else self._pi_total
        return None

    def text(self, width: int = 0) -> str | None:
        """The file's text with every unknown line replaced by `x` x max(`width`, its lower bound
        `min_bytes`); None without a line count."""
        n = self.line_count
        if n is None:
            return None
        filler = "x" * width
        rows = [filler] * n
        for k, t in self.lines.items():
            if k <= n:
                rows[k - 1] = t
        for k, b in self.min_bytes.items():
            if k <= n and k not in self.lines and b > width:
                rows[k - 1] = "x" * b
        body = "\n".join(rows)
        return body + "\n" if n and self.ends_with_newline is not False else body


def _evidence(read: ReadCall, message: ChatMessageTool | None) -> tuple[int | None, int | None, bool | None]:
    """(file lines, pi's T, ends with newline) a read shows about its file."""
    text = message.text if message is not None else ""
    if read.total_lines is None:
        if (not read.via_shell and not _numbered(read) and message is not None and message.error is None
                and read.last_line is not None and not _PI_NOTICE.search(text) and not _PI_LEGACY_NOTICE.search(text)):
            return read.last_line, None, text.endswith("\n")  # pi without a notice: the read reached the end
        return None, None, None
    if read.via_shell:
        return read.total_lines, None, shell_output(text, read.tool).endswith("\n") if text else None
    if _numbered(read):
        return read.total_lines, None, None
    if _PI_NOTICE.search(text) or _PI_LEGACY_NOTICE.search(text):
        return None, read.total_lines, None  # pi's T counts the phantom line after a final newline
    return read.total_lines, None, text.endswith("\n")  # pi returned the rest of the file


def track_versions(session: Session, reads: list[ReadCall], results: dict[str, ChatMessageTool]) -> tuple[
        list[tuple[ReadCall, FileVersion, list[str] | None, bool]], list[FileVersion]]:
    """Reads with the file version each one read (module docstring).

    Returns ([(read, version, delivered lines or None, the version started at this read)] in
    execution order, every version). Versions hold what the whole session showed of them.
    """
    events: list[tuple[int, int, int, Any]] = [(r.call_index, r.position, 1, r) for r in reads]
    events += [(w.call_index, w.position, 0, w) for w in file_writes(session)]
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    current: dict[str, FileVersion] = {}
    closed: set[str] = set()
    versions: list[FileVersion] = []
    counts: dict[str, int] = {}
    out: list[tuple[ReadCall, FileVersion, list[str] | None, bool]] = []
    for _, _, kind, ev in events:
        if kind == 0:
            closed.update(current if ev.any_file else ev.paths)
            continue
        r: ReadCall = ev
        base = session.cwd
        if r.cd:
            base = r.cd if r.cd.startswith("/") else posixpath.join(session.cwd or "", r.cd)
        key = file_key(r.path, base)
        msg = results.get(r.tool_call_id)
        lines = delivered_lines(r, msg)
        total, pi_total, nl = _evidence(r, msg) if lines is not None or r.total_lines is not None else (None, None, None)
        v = current.get(key)
        conflict = v is None or key in closed
        if not conflict and lines is not None:
            conflict = any(v.lines.get(r.first_line + k, t) != t for k, t in enumerate(lines))  # type: ignore[union-attr, operator]
        if not conflict and v is not None:  # a different line count: the file changed
            known = v.line_count
            if total is not None and known is not None and total != known:
                conflict = True
            if pi_total is not None and known is not None and known not in (pi_total, pi_total - 1):
                conflict = True
            if lines and known is not None and r.first_line + len(lines) - 1 > known:  # type: ignore[operator]
                conflict = True  # lines past the known end: the file grew
        if conflict:
            counts[key] = counts.get(key, -1) + 1
            v = FileVersion(key, counts[key])
            versions.append(v)
            current[key] = v
            closed.discard(key)
        assert v is not None
        if lines is not None:
            for k, t in enumerate(lines):
                v.lines[r.first_line + k] = t  # type: ignore[operator]
        if total is not None:
            v.total_lines = total
        if pi_total is not None and v._pi_total is None:
            v._pi_total = pi_total
        if nl is not None:
            v.ends_with_newline = nl
        if lines and msg is not None and (m := _PI_BYTE_CUT.search(msg.text[-200:])):
            after = r.first_line + len(lines)  # type: ignore[operator]
            low = round(float(m.group(1)) * 1024) - len("\n".join(lines).encode())
            v.min_bytes[after] = max(v.min_bytes.get(after, 0), low)
        out.append((r, v, lines, conflict))
    for v in versions:
        for k in [k for k in v.min_bytes if k in v.lines]:
            del v.min_bytes[k]
    return out, versions
