"""The session-format registry: detect a file's format from its content and import it.

One entry per format (sessions.md §1-4). A format is a `SessionFormat` record (name, harness,
`sniff`, `load`) defined in its own module (`FORMATS = [...]`); adding a format is one module
plus one line in `_FORMAT_MODULES` (or `FORMATS.register(...)` at run time; the registry is a
`readbench.records.Registry`, in detection order). Detection never looks at the file name:
`sniff` sees the first JSON objects of a JSONL file (or, for inspect logs, the file's first bytes).
"""

from __future__ import annotations

import datetime as dt
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
    "group_session_files",
    "iter_session_files",
    "load_group",
    "load_file",
    "load_messages",
    "load_path",
    "load_sessions",
]

#: How many leading JSON lines `sniff` functions see.
SNIFF_LINES = 20
_SNIFF_BYTES = 1 << 20
#: Claude Code's bookkeeping lines (sessions.md §2 line types): no session content, and a new
#: session's file can open with many of them (the summaries of the project's earlier
#: conversations, anthropics/claude-code#2597), so they do not count toward `SNIFF_LINES`
_BOOKKEEPING_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation"})


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
        content = read = 0
        for raw in fh:
            read += len(raw)
            if content >= SNIFF_LINES or read > _SNIFF_BYTES:
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
                content += obj.get("type") not in _BOOKKEEPING_TYPES
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


# Directories a walk never enters: version control, environments and caches. Other hidden
# directories are walked: the harnesses keep sessions in `.pi/`, `.claude/` and `.codex/`, and a
# dotfiles backup named as a whole held 44 of its 62 pi session files there (issue 27 trial).
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache",
                          "__pycache__", "node_modules"})


def iter_session_files(paths: Iterable[str | Path]) -> Iterator[tuple[Path, bool]]:
    """Files under `paths` (directories recursively, sorted), each with True when it was named
    explicitly. A walk skips hidden files and the directories of `SKIPPED_DIRS`; it enters other
    hidden directories (`.pi/agent/sessions` inside a folder named as a whole), and follows links to
    directories (each directory is walked once, so a link back up ends there). A file reached
    twice (a folder named together with a folder or file inside it) is yielded once, where it
    is first reached: replayed twice, its sessions would be counted twice.

    Raises:
        FileNotFoundError: a named path does not exist.
    """
    seen: set[Path] = set()

    def first(path: Path) -> bool:
        key = path.resolve()
        if key in seen:
            return False
        seen.add(key)
        return True

    walked: set[Path] = set()  # directories entered (resolved): a link back up is not walked again
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p, followlinks=True):  # users link ~/.claude or project folders
                real = Path(root).resolve()
                if real in walked:
                    dirs[:] = []
                    continue
                walked.add(real)
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                for f in sorted(files):
                    if not f.startswith(".") and first(Path(root) / f):
                        yield Path(root) / f, False
        elif p.exists():
            if first(p):
                yield p, True
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")


def group_session_files(files: Iterable[tuple[Path, bool]]) -> list[list[tuple[Path, bool]]]:
    """`files` ((path, named explicitly), as `iter_session_files` yields them) grouped by the
    session they belong to: files whose format has a `group_key` and give the same key (Claude
    Code: a main file and its sub-agent files share the `sessionId`) form one group, in the order
    of their first file; every other file is a group of its own. A file that cannot be read or
    sniffed stands alone (its import reports why)."""
    groups: list[list[tuple[Path, bool]]] = []
    by_key: dict[tuple[str, str], int] = {}
    for path, explicit in files:
        key = _group_key(path)
        if key is not None and key in by_key:
            groups[by_key[key]].append((path, explicit))
            continue
        if key is not None:
            by_key[key] = len(groups)
        groups.append([(path, explicit)])
    return groups


def _group_key(path: Path) -> tuple[str, str] | None:
    try:
        if not path.is_file():
            return None
        head, objects = _head(path)
    except OSError:
        return None
    for fmt in FORMATS:
        if fmt.sniff(head, objects):
            k = fmt.group_key(objects) if fmt.group_key is not None else None
            return (fmt.name, k) if k is not None else None
    return None


def load_group(files: list[tuple[Path, bool]]) -> list[Session | ImportFailure]:
    """The sessions of one group of `group_session_files` (or ImportFailures), with each billed
    call counted once across them (`readbench.sessions.billing.bill_once`). A session with the
    format and id of an earlier one of the group is a copy of its file (a backup, a synced folder,
    a copy taken before the session went on) and keeps its bills: the replay replays an exact copy
    once and warns about a diverging one (`readbench.replay._cli._copy_of_earlier`)."""
    from readbench.sessions.billing import bill_once

    items: list[Session | ImportFailure] = []
    for path, explicit in files:
        items.extend(load_path(path, explicit))
    seen: set[tuple[str, str]] = set()
    distinct = []
    for x in items:
        if isinstance(x, Session) and (x.format, x.session_id) not in seen:
            seen.add((x.format, x.session_id))
            distinct.append(x)
    bill_once(distinct)
    return items


def load_sessions(paths: Iterable[str | Path]) -> Iterator[Session | ImportFailure]:
    """Import every session under `paths`, streaming: one session's files at a time
    (`group_session_files`; a call its files repeat is billed once: `load_group`).

    Yields a Session per imported session and an ImportFailure per file that is not a session
    of a known format or cannot be read; a failure never stops the walk. Files inside a
    directory that no format recognises are skipped silently when they are not JSON at all
    (e.g. a README), reported otherwise.

    Raises:
        FileNotFoundError: a named path does not exist (before anything is read).
    """
    for group in group_session_files(list(iter_session_files(paths))):
        yield from load_group(group)


# inspect's own bookkeeping beside the logs of a log directory: JSON, never a session. The README's
# `readbench replay results/smoke/logs` warned about eval-set.json (issue 27 trial).
INSPECT_LOG_DIR_FILES = frozenset({"eval-set.json", "logs.json"})


def load_path(path: Path, explicit: bool = True) -> Iterator[Session | ImportFailure]:
    """The sessions of one file, or one ImportFailure; a file found in a directory walk (not
    `explicit`) is skipped silently when it is not JSON at all or is one of inspect's log-directory
    files (`INSPECT_LOG_DIR_FILES`). An importer that fails on the file with an error it did not
    foresee (a value of an unexpected type) gives an ImportFailure naming the error, so one odd
    file never stops the import of the others."""
    if not explicit and path.name in INSPECT_LOG_DIR_FILES:
        return
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
    except Exception as exc:  # noqa: BLE001 - a value the importer did not foresee: this file fails, the walk goes on
        yield ImportFailure(str(path), f"the {fmt.name} importer could not read this file: {type(exc).__name__}: {exc}")
        return
    for session in sessions:
        check_times(session)
        yield session


#: call start times outside these (Unix seconds: 2020-01-01 and 2100-01-01 UTC) are not plausible
#: times of a recorded model call
PLAUSIBLE_SECONDS = (1_577_836_800.0, 4_102_444_800.0)


def check_times(session: Session) -> None:
    """Warn (`session.issues`) when a call's recorded start time is not a plausible date
    (`PLAUSIBLE_SECONDS`): milliseconds written as seconds, or a corrupt value. The cache
    simulation reads the gaps between calls as TTL expiries, so such a session's simulated cost is
    wrong (a tester's pi session with its times in the wrong unit simulated at $176 against a $30
    bill, with no word; 2026-12-07). One warning per session, naming the first such call."""
    lo, hi = PLAUSIBLE_SECONDS
    bad = next(((c.index, t) for c in session.calls if (t := c.ts_start_seconds) is not None and not lo <= t < hi), None)
    if bad is None:
        return
    index, t = bad
    when = (dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="seconds")
            if -6e10 < t < 2.5e11 else f"{t:.4g} s")
    session.issues.warn(session.source, f"call {index} starts at {when}, not a date between 2020 and 2100 (a time "
                        "in the wrong unit, or a corrupt one?): the gaps between calls, and so the simulated cache "
                        "expiries and cost, are not to be trusted")


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
