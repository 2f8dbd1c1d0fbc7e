"""The session-format registry: detect a file's format from its content and import it.

One entry per format (sessions.md §1-4). A format is a `SessionFormat` record (name, harness,
`sniff`, `load`) defined in its own module (`FORMATS = [...]`); adding a format is one module
plus one line in `_FORMAT_MODULES` (or `FORMATS.register(...)` at run time; the registry is a
`readbench.records.Registry`, in detection order). Detection never looks at the file name:
`sniff` sees the first JSON objects of a JSONL file (or, for inspect logs, the file's first bytes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage

from readbench.records import Registry
from readbench.sessions._types import Session, SessionFormat

__all__ = [
    "FORMATS",
    "ImportFailure",
    "detect_format",
    "iter_session_files",
    "load_file",
    "load_messages",
    "load_path",
    "load_sessions",
]

#: How many leading JSON lines `sniff` functions see.
SNIFF_LINES = 20
_SNIFF_BYTES = 1 << 20


@dataclass(frozen=True)
class ImportFailure:
    """A file that could not be imported: `path` and a one-line `reason`."""

    path: str
    reason: str


_FORMAT_MODULES = [
    "readbench.sessions.pi",
    "readbench.sessions.claude_code",
    "readbench.sessions.codex",
    "readbench.sessions.inspect_log",
]


#: name -> SessionFormat, in detection order (each module's `FORMATS`, loaded on first use).
FORMATS: Registry[SessionFormat] = Registry("session format", modules=_FORMAT_MODULES, attribute="FORMATS")


def _head(path: Path) -> tuple[bytes, list[dict[str, Any]]]:
    objects: list[dict[str, Any]] = []
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
        fh.seek(0)
        if head.startswith(b"PK\x03\x04"):
            return head, objects
        for raw in fh:
            if len(objects) >= SNIFF_LINES:
                break
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                if not objects:
                    break  # not JSONL from the start: leave it to the byte sniffers
                continue
            if isinstance(obj, dict):
                objects.append(obj)
    return head, objects


def detect_format(path: str | Path) -> SessionFormat:
    """The format of `path`, from its content.

    Raises:
        ValueError: no registered format recognises it (the message names the formats tried).
        OSError: the file cannot be read.
    """
    p = Path(path)
    head, objects = _head(p)
    for fmt in FORMATS:
        if fmt.sniff(head, objects):
            return fmt
    raise ValueError(f"{p}: not a recorded session of any known format (tried: {', '.join(FORMATS.names())})")


def load_file(path: str | Path) -> list[Session]:
    """Import every session in one file (a Claude Code or pi file holds one; an inspect log one
    per sample and epoch).

    Raises:
        ValueError: unknown format, or a file its format's importer cannot read (naming it).
        OSError: the file cannot be read.
    """
    p = Path(path)
    return detect_format(p).load(p)


def iter_session_files(paths: Iterable[str | Path]) -> Iterator[tuple[Path, bool]]:
    """Files under `paths` (directories recursively, sorted; hidden entries skipped), each with
    True when it was named explicitly.

    Raises:
        FileNotFoundError: a named path does not exist.
    """
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if not f.startswith("."):
                        yield Path(root) / f, False
        elif p.exists():
            yield p, True
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")


def load_sessions(paths: Iterable[str | Path]) -> Iterator[Session | ImportFailure]:
    """Import every session under `paths`, streaming: one file at a time.

    Yields a Session per imported session and an ImportFailure per file that is not a session
    of a known format or cannot be read; a failure never stops the walk. Files inside a
    directory that no format recognises are skipped silently when they are not JSON at all
    (e.g. a README), reported otherwise.

    Raises:
        FileNotFoundError: a named path does not exist (before anything is read).
    """
    files = list(iter_session_files(paths))
    for path, explicit in files:
        yield from load_path(path, explicit)


def load_path(path: Path, explicit: bool = True) -> Iterator[Session | ImportFailure]:
    """The sessions of one file, or one ImportFailure; a file that is not JSON at all and was
    found in a directory walk (not `explicit`) is skipped silently."""
    if not path.is_file():
        yield ImportFailure(str(path), "not a regular file")
        return
    try:
        fmt = detect_format(path)
    except ValueError as exc:
        if explicit or _looks_like_json(path):
            yield ImportFailure(str(path), str(exc).removeprefix(f"{path}: "))
        return
    except OSError as exc:
        yield ImportFailure(str(path), f"cannot read: {exc.strerror or exc}")
        return
    try:
        sessions = fmt.load(path)
    except (ValueError, OSError) as exc:
        yield ImportFailure(str(path), str(exc).removeprefix(f"{path}: "))
        return
    yield from sessions


def _looks_like_json(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            first = fh.read(1)
    except OSError:
        return False
    return first in (b"{", b"[") or path.suffix in (".jsonl", ".json", ".eval")


def load_messages(path: str | Path, warn: Callable[[str], None] | None = None) -> list[ChatMessage]:
    """The transcript of one recorded session file, or a JSON list of inspect chat messages.

    A file whose first non-blank character is `[` is read as a JSON list of inspect messages;
    anything else is imported by its format (the first session of the file) and its final
    context is returned (what the harness would send next: after a compaction, the summary and
    the kept messages; aborted replies left out). `warn` receives each import warning
    (`file:line: ...`) and a count of the rest, so a caller can show what was skipped.

    Raises:
        ValueError: malformed input, or a file of no known format (naming the file).
        FileNotFoundError: the file does not exist.
    """
    from pydantic import TypeAdapter

    p = Path(path)
    with open(p, "rb") as fh:
        first = fh.read(4096).lstrip()[:1]
    if first == b"[":
        try:
            return TypeAdapter(list[ChatMessage]).validate_json(p.read_bytes())
        except ValueError as exc:
            raise ValueError(f"{p}: not a JSON list of inspect chat messages ({str(exc).splitlines()[0]})") from None
    sessions = load_file(p)
    if not sessions:
        raise ValueError(f"{p}: holds no session")
    issues = sessions[0].issues
    if warn is not None:
        for w in issues.warnings:
            warn(w)
        if issues.malformed_lines > len(issues.warnings):
            warn(f"{p}: {issues.malformed_lines} malformed lines or entries in all")
        for kind, n in sorted(issues.unknown_types.items()):
            warn(f"{p}: {n} entr{'y' if n == 1 else 'ies'} of unknown type {kind!r} skipped")
    return sessions[0].messages
