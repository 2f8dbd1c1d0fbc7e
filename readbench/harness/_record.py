"""The harness record: what a coding-agent harness's session shows of its tools (issue 23).

A `Harness` names the tools a harness gives its model, by role, with the argument keys that hold
a file path, a line range or a shell command, and the read preset that reproduces its own read
tool. Every consumer (`readbench.sessions` reads and file writes, `readbench.sim` evidence,
`readbench.replay` audit and calibration) asks the registry (`readbench.harness`) instead of
keeping its own tool lists. New facts about a harness are new optional fields here, set in the
harness's own module (`readbench/harness/<name>.py`); a consumer reads them from the record.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Harness", "NpmPin", "ReadArm", "ReadTool", "ShellTool", "command_of", "patch_paths"]

_SHELLS = ("bash", "sh", "zsh")


@dataclass(frozen=True)
class ReadTool:
    """A file-read tool: its name and the argument keys of the path, the first line (1-based) and
    the line count; `default_limit` is the lines it returns when no limit is given (None when it
    returns the whole file up to a cap, as pi's does); `numbered`: its result is the file's lines
    numbered as `cat -n` does (`{n}→text` or `{n:>6}<TAB>text`), with no notice (Claude Code's
    `Read`), where pi's is the raw text followed by a continuation notice."""

    name: str
    path_key: str
    offset_key: str = "offset"
    limit_key: str = "limit"
    default_limit: int | None = None
    numbered: bool = False


@dataclass(frozen=True)
class ShellTool:
    """A shell tool: its name, the argument key of its command (a string, or an argv list such as
    Codex's `["bash", "-lc", "sed -n '1,20p' f"]`), whether the command may be PowerShell
    (Codex's `shell_command` on Windows), and the text it returns for a command that printed
    nothing (`empty_output`; Claude Code's `(Bash completed with no output)`), None when it
    returns the empty output as is."""

    name: str
    command_key: str = "command"
    powershell: bool = False
    empty_output: str | None = None


@dataclass(frozen=True)
class NpmPin:
    """One installable release of a harness (GitHub issue 24): the npm package at an exact
    version with the registry's `dist.integrity` (sha512, what `npm ci` checks against the
    committed lock file `readbench/harness/npm/<harness>@<version>/package-lock.json`), its
    executable under `node_modules/.bin/`, and the Node.js it needs (the package's `engines`)."""

    package: str
    version: str
    integrity: str
    bin: str
    node: str = ""


@dataclass(frozen=True)
class ReadArm:
    """A read preset a real harness can express through its own extension point: every preset
    of read family `family` whose parameters equal `params` (the other parameters are free and
    carried into the extension), and how (`how`, shown by `readbench variants --agent`)."""

    family: str
    params: dict[str, Any]
    how: str


def command_of(arguments: dict[str, Any], keys: tuple[str, ...] = ("command", "cmd")) -> str | None:
    """The shell command line in a tool call's `arguments`: the first of `keys` present; an argv
    list `[<bash|sh|zsh>, "-c"|"-lc", CMD, ...]` gives CMD, any other list its `shlex.join`; None
    when there is no string or list command. The one command extraction every consumer uses."""
    cmd = next((arguments[k] for k in keys if k in arguments), None)
    if isinstance(cmd, list):
        if len(cmd) >= 3 and posixpath.basename(str(cmd[0])) in _SHELLS and cmd[1] in ("-lc", "-c"):
            return str(cmd[2])
        return shlex.join(str(c) for c in cmd)
    return cmd if isinstance(cmd, str) else None


@dataclass(frozen=True)
class Harness:
    """One coding-agent harness (module docstring).

    Attributes:
        name: registry name; a session's `harness` field names its record (`pi`, `claude-code`, ...).
        title: the product's own name.
        origin: where the facts come from (a spec section, a version).
        read_tools: file-read tools (name, argument keys).
        shell_tools: shell tools (name, command key).
        edit_tools: tools that change files (edit, write, patch, notebook edit).
        view_commands: for a multi-command editor tool in `edit_tools` (SWE-agent's
            `str_replace_editor`), the values of its `command` argument that only show a file
            (`view`): such a call changes nothing.
        search_tools: content-search tools (grep and its kind).
        path_keys: argument keys that name a file in its tool calls.
        read_preset: the registry read preset (`readbench variants`) that reproduces the
            harness's own read tool; None when it has none (Codex reads through its shell) or it
            depends on the run (an inspect log's task).
        sessions: what readbench imports of it (session formats, `readbench.sessions.registry`).
        npm: the releases readbench runs as an agent arm (`agents:` in a matrix; the first is
            the arm named after the harness, the others `<name>@<version>`); empty: readbench
            does not run it.
        own_read: what the `stock` preset means when the harness runs (its own read path,
            unchanged: no extension installed).
        read_arms: the other presets it can express, by family and parameters (`ReadArm`);
            any other preset on this harness is refused before the run.
        runs: how readbench runs it (command line, endpoint, where its session file lands).
    """

    name: str
    title: str
    origin: str
    read_tools: tuple[ReadTool, ...] = ()
    shell_tools: tuple[ShellTool, ...] = ()
    edit_tools: tuple[str, ...] = ()
    view_commands: dict[str, tuple[str, ...]] = field(default_factory=dict)
    search_tools: tuple[str, ...] = ()
    path_keys: tuple[str, ...] = ("path",)
    read_preset: str | None = None
    sessions: str = ""
    npm: tuple[NpmPin, ...] = ()
    own_read: str = ""
    read_arms: tuple[ReadArm, ...] = ()
    runs: str = ""

    def describe(self) -> dict[str, Any]:
        """Every field, JSON-ready (`readbench harnesses --json`)."""
        return dataclasses.asdict(self)


_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def patch_paths(text: str) -> list[str]:
    """The files an `apply_patch` envelope names (`*** Update|Add|Delete File: P`, `*** Move to: P`;
    Codex's patch format, sent as its `apply_patch` tool's input or through a shell), in order."""
    return [m.group(1) or m.group(2) for m in _PATCH_FILE.finditer(text)]
