"""Recorded sessions in: one form for every harness's session files (docs/specs/sessions.md).

`load_sessions(paths)` walks files and directories, detects each file's format from its content
(`registry.FORMATS`: pi legacy and v3, Claude Code, Codex CLI, inspect eval logs) and yields
`Session`s: the ordered model calls, what each sent (inspect ChatMessages), what the provider
billed, and the events between them. Importing this package has no side effects.
"""

from readbench.sessions._types import EVENT_KINDS, BilledUsage, Call, Event, ImportIssues, Session

__all__ = [
    "EVENT_KINDS",
    "BilledUsage",
    "Call",
    "Event",
    "ImportFailure",
    "ImportIssues",
    "Session",
    "detect_format",
    "load_file",
    "load_messages",
    "load_sessions",
]


def __getattr__(name: str):  # the registry imports every importer: load it on first use
    if name in ("ImportFailure", "detect_format", "load_file", "load_messages", "load_sessions", "FORMATS"):
        from readbench.sessions import registry

        return getattr(registry, name)
    raise AttributeError(name)
