"""Agent harnesses: one record per harness, one module each (issue 23).

`HARNESSES` is the registry (`readbench.records.Registry`): `pi`, `claude-code`, `codex`,
`inspect`, `swe-agent`, and `other` (other agents' tool names). A record (`Harness`) says which
of its tools read, run a shell, change files or search, with their argument keys, and which read
preset reproduces its read tool. Consumers classify a recorded tool call through the functions
below, which look at every registered harness (a session's tools are whatever its agent offered:
an inspect log may hold any agent's), so a new harness is one module plus one line in
`_MODULES`:

- `tool_role(function, arguments)`: `read`, `shell`, `edit`, `view` (an editor's show-only
  command, which changes nothing), `search`, or None;
- `read_tool(function)`: the `ReadTool` (argument keys) of a read tool;
- `shell_tool(function)`: the `ShellTool` of a shell tool;
- `shell_command(arguments)`: the command line of a shell call (the one command extraction);
- `path_keys()`: every argument key that names a file;
- `patch_paths(text)`: the files an `apply_patch` envelope names (Codex's patch format);
- `read_preset(harness)`: the read preset of a session's harness, or None.

Two harnesses may share a tool name only with the same role and argument keys (checked when the
index is built).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from readbench.harness._record import Harness, ReadTool, ShellTool, command_of, patch_paths
from readbench.records import Registry

__all__ = ["HARNESSES", "Harness", "ReadTool", "ShellTool", "patch_paths", "path_keys", "read_preset", "read_tool", "shell_command",
           "shell_tool", "tool_role"]

_MODULES = (
    "readbench.harness.pi",
    "readbench.harness.claude_code",
    "readbench.harness.codex",
    "readbench.harness.inspect_log",
    "readbench.harness.swe_agent",
    "readbench.harness.other",
)

HARNESSES: Registry[Harness] = Registry("harness", modules=_MODULES, attribute="HARNESS")
"""name -> Harness, in `_MODULES` order (`HARNESSES.register(...)` adds one at run time)."""


@dataclass(frozen=True)
class _Index:
    role: dict[str, str]
    read: dict[str, ReadTool]
    shell: dict[str, ShellTool]
    view: dict[str, frozenset[str]]
    path_keys: tuple[str, ...]
    command_keys: tuple[str, ...]


_cache: tuple[int, _Index] | None = None


def _index() -> _Index:
    """The tool index over every registered harness (rebuilt when the registry changes)."""
    global _cache
    key = HARNESSES.version
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    harnesses = list(HARNESSES)
    role: dict[str, str] = {}
    owner: dict[str, str] = {}
    read: dict[str, ReadTool] = {}
    shell: dict[str, ShellTool] = {}
    view: dict[str, frozenset[str]] = {}
    path: dict[str, None] = {}
    command: dict[str, None] = {}

    def claim(name: str, what: str, h: Harness) -> None:
        if role.get(name, what) != what:
            raise ValueError(f"harness {h.name!r}: tool {name!r} has role {what!r} here and role {role[name]!r} in "
                             f"harness {owner[name]!r}")
        role[name], owner[name] = what, owner.get(name, h.name)

    def same(table: dict[str, Any], name: str, value: Any, h: Harness) -> None:
        if table.setdefault(name, value) != value:
            raise ValueError(f"harness {h.name!r}: tool {name!r} has other arguments ({value}) than in harness "
                             f"{owner[name]!r} ({table[name]})")

    for h in harnesses:
        for t in h.read_tools:
            claim(t.name, "read", h)
            same(read, t.name, t, h)
        for s in h.shell_tools:
            claim(s.name, "shell", h)
            same(shell, s.name, s, h)
            command.setdefault(s.command_key, None)
        for name in h.edit_tools:
            claim(name, "edit", h)
            same(view, name, frozenset(h.view_commands.get(name, ())), h)
        for name in h.search_tools:
            claim(name, "search", h)
        path.update(dict.fromkeys(h.path_keys))
        path.update(dict.fromkeys(t.path_key for t in h.read_tools))
    index = _Index(role, read, shell, view, tuple(path), tuple(command))
    _cache = (key, index)
    return index


def tool_role(function: str | None, arguments: dict[str, Any] | None = None) -> str | None:
    """`read`, `shell`, `edit`, `view`, `search` or None (a tool no harness names) for a call of
    `function` with `arguments`; `view` is an editor call whose `command` only shows a file
    (SWE-agent's `str_replace_editor` `view`)."""
    index = _index()
    role = index.role.get(function or "")
    if role == "edit" and arguments and arguments.get("command") in index.view.get(function or "", ()):
        return "view"
    return role


def read_tool(function: str | None) -> ReadTool | None:
    """The read tool named `function` (its argument keys), or None."""
    return _index().read.get(function or "")


def shell_tool(function: str | None) -> ShellTool | None:
    """The shell tool named `function`, or None."""
    return _index().shell.get(function or "")


def shell_command(arguments: dict[str, Any]) -> str | None:
    """The command line of a shell call (`command_of` over every shell tool's command key)."""
    return command_of(arguments, _index().command_keys)


def path_keys() -> tuple[str, ...]:
    """Every argument key a harness names a file with (read tools' path keys included)."""
    return _index().path_keys


def read_preset(harness: str) -> str | None:
    """The read preset reproducing `harness`'s own read tool; None for an unknown harness or one
    without (Codex, inspect logs)."""
    return HARNESSES.get(harness).read_preset if harness in HARNESSES else None
