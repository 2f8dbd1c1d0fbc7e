"""Per-sample memory of earlier reads: dedup (B+dedup), C's "map shown in call X", and
claude-code's read-before-edit rule.

It lives in inspect's per-sample store, so it round-trips through JSON (`to_dict` /
`from_dict`). Files are identified by a key: the adapter's resolved path when it passes
one, else the `path` argument normalised with `posixpath.normpath`.
Spec: docs/specs/variants.md "B+dedup and B+dedup-naive", "C", "claude-code".
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

__all__ = ["ReadRecord", "ReadSession", "file_key_for"]


def file_key_for(path: str) -> str:
    """The session key for a path argument: `posixpath.normpath(path)` ("./a.py" -> "a.py").

    Raises:
        ValueError: if `path` is empty.
    """
    if not path:
        raise ValueError("path must be a non-empty string")
    return posixpath.normpath(path)


@dataclass(frozen=True)
class ReadRecord:
    """One earlier read that returned file text.

    `ranges` are inclusive 1-based file-line ranges it showed; `epoch` is the file's change
    counter at the time (see `ReadSession.note_file_changed`); `content_sha256` the hash of
    the bytes it was served from.
    """

    call_id: str | None
    key: str
    ranges: tuple[tuple[int, int], ...]
    content_sha256: str
    epoch: int

    def covers(self, first: int, last: int) -> bool:
        """True when one of `ranges` contains every line of [first, last]."""
        return any(a <= first and last <= b for a, b in self.ranges)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "call_id": self.call_id,
            "key": self.key,
            "ranges": [list(r) for r in self.ranges],
            "content_sha256": self.content_sha256,
            "epoch": self.epoch,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadRecord:
        """Inverse of `to_dict`."""
        return cls(
            call_id=data["call_id"],
            key=data["key"],
            ranges=tuple((int(a), int(b)) for a, b in data["ranges"]),
            content_sha256=data["content_sha256"],
            epoch=int(data["epoch"]),
        )


class ReadSession:
    """Mutable per-sample read memory (one per sample, shared by every read call in it).

    Holds: the reads that returned file text (`records`), a change counter per file bumped
    by `note_file_changed` (edit/write/bash), the files read at least once (`has_read`), and
    for variant C which call showed each file's map for which content.
    """

    def __init__(self) -> None:
        self.records: list[ReadRecord] = []
        self._epochs: dict[str, int] = {}
        self._read_keys: set[str] = set()
        self._maps: dict[str, tuple[str, str | None]] = {}

    # -- file state -----------------------------------------------------------------------
    def epoch(self, key: str) -> int:
        """Change counter of `key` (0 until the first `note_file_changed`)."""
        return self._epochs.get(key, 0)

    def note_file_changed(self, path: str) -> None:
        """Record that a tool changed (or may have changed) the file at `path`.

        Later reads of it are never dedup repeats, and C shows its map again. Pass the same
        key the reads used (the adapter's resolved path, or the raw path argument).
        """
        key = file_key_for(path)
        self._epochs[key] = self.epoch(key) + 1
        self._maps.pop(key, None)

    def has_read(self, path: str) -> bool:
        """True if `path` was read successfully at least once in this sample (claude-code's
        edit rule); later changes do not reset it."""
        return file_key_for(path) in self._read_keys

    # -- reads ------------------------------------------------------------------------------
    def note_read(self, key: str) -> None:
        """Mark `key` as read without file text (e.g. claude-code's empty-file warning)."""
        self._read_keys.add(key)

    def record_read(
        self,
        key: str,
        call_id: str | None,
        ranges: tuple[tuple[int, int], ...],
        content_sha256: str,
    ) -> None:
        """Remember a read that returned the file lines in `ranges` (no-op for no ranges
        beyond marking the file read)."""
        self._read_keys.add(key)
        if ranges:
            self.records.append(ReadRecord(call_id, key, ranges, content_sha256, self.epoch(key)))

    def covering_reads(
        self, key: str, first: int, last: int, content_sha256: str
    ) -> list[ReadRecord]:
        """Earlier reads of the current state of `key` (same change counter and same content
        hash) that showed every line of [first, last], most recent first."""
        epoch = self.epoch(key)
        return [
            r
            for r in reversed(self.records)
            if r.key == key
            and r.epoch == epoch
            and r.content_sha256 == content_sha256
            and r.covers(first, last)
        ]

    # -- C's structural map -----------------------------------------------------------------
    def map_shown(self, key: str, content_sha256: str) -> bool:
        """True if an earlier call showed the map of this content of `key`."""
        entry = self._maps.get(key)
        return entry is not None and entry[0] == content_sha256

    def map_call(self, key: str) -> str | None:
        """The call id that showed `key`'s current map (None if none, or it had no id)."""
        entry = self._maps.get(key)
        return entry[1] if entry else None

    def note_map(self, key: str, content_sha256: str, call_id: str | None) -> None:
        """Remember that `call_id` showed the map of this content of `key`."""
        self._maps[key] = (content_sha256, call_id)

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (sorted keys for stable logs)."""
        return {
            "records": [r.to_dict() for r in self.records],
            "epochs": dict(sorted(self._epochs.items())),
            "read_keys": sorted(self._read_keys),
            "maps": {k: list(v) for k, v in sorted(self._maps.items())},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadSession:
        """Inverse of `to_dict`.

        Raises:
            ValueError: if a top-level key is missing or unknown.
        """
        expected = {"records", "epochs", "read_keys", "maps"}
        if set(data) != expected:
            raise ValueError(f"ReadSession dict needs keys {sorted(expected)}, got {sorted(data)}")
        session = cls()
        session.records = [ReadRecord.from_dict(r) for r in data["records"]]
        session._epochs = {str(k): int(v) for k, v in data["epochs"].items()}
        session._read_keys = set(data["read_keys"])
        session._maps = {str(k): (v[0], v[1]) for k, v in data["maps"].items()}
        return session

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReadSession) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"ReadSession(records={len(self.records)}, files_read={len(self._read_keys)})"
