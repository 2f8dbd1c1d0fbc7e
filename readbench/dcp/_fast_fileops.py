"""`superseded-file-ops` kept up to date as a history grows (readbench.dcp._fast_sister; docs/specs/
dcp.md Part B, readbench.dcp.strategies.sister_file_ops): per path, each file op's nearest later
successful write and, for a read, its nearest later covering read. An appended op can only fill
these in for ops that had none, so `FileOps.add` returns just the ops whose proposal is new or
changed, and `file_proposal` states it (the same reason and placeholder text as the reference).
"""

from __future__ import annotations

import functools
from typing import Any, Generic, Protocol, TypeVar

from readbench.dcp._sister_common import Proposal
from readbench.dcp.strategies import sister_file_ops as fo

__all__ = ["CallFacts", "FileOp", "FileOps", "file_proposal"]

RESULT = "tool_result_content"

_normalize_path = functools.lru_cache(maxsize=4096)(fo.normalize_path)


class CallFacts(Protocol):
    """What file-op tracking reads of a completed tool call (readbench.dcp._fast_sister._Call)."""

    cid: str
    ordinal: int
    tool: str
    args: Any
    err: bool
    chars: int


C = TypeVar("C", bound=CallFacts)


class FileOp(Generic[C]):
    """A file op of `superseded-file-ops` (its call `C`) with its nearest later write / covering read."""

    __slots__ = ("call", "kind", "path", "rng", "write", "read")

    def __init__(self, call: C, kind: str, path: str, rng: Any) -> None:
        self.call, self.kind, self.path, self.rng = call, kind, path, rng
        self.write: FileOp[C] | None = None
        self.read: FileOp[C] | None = None


class FileOps(Generic[C]):
    """The file ops of one growing history, by normalised path (module docstring).

    Args:
        cwd: the working directory relative paths are resolved against (`SisterParams.cwd`;
            None: relative paths are normalised as they are, `sister_file_ops.normalize_path`).
    """

    def __init__(self, cwd: str | None) -> None:
        self.cwd = cwd
        self.paths: dict[str, list[FileOp[C]]] = {}
        self.open_ops: dict[str, list[FileOp[C]]] = {}  # non-newest ops without a later write
        self.uncovered: dict[str, list[FileOp[C]]] = {}  # ... reads among them without a covering read

    def add(self, call: C) -> tuple[list[FileOp[C]], int]:
        """Record completed `call` if it is a file op (`read`, `write`, `edit` with a path): the
        earlier ops whose nearest later write (a successful write or edit) or covering read it
        now is, in the order their proposals are to be stated, and the ordinal of the first call
        on that path (the proposals' order key). ([], -1) for a call that is no file op."""
        kind = call.tool.strip().lower()
        if kind not in ("read", "write", "edit"):
            return [], -1
        raw = fo._path_arg(call.args)
        if raw is None:
            return [], -1
        path = _normalize_path(raw, self.cwd)
        if not path:
            return [], -1
        op = FileOp(call, kind, path, fo.read_range(call.args) if kind == "read" else None)
        group = self.paths.setdefault(path, [])
        opened = self.open_ops.setdefault(path, [])
        uncovered = self.uncovered.setdefault(path, [])
        if group:
            prev = group[-1]  # was the newest: never pruned until now
            opened.append(prev)
            if prev.kind == "read":
                uncovered.append(prev)
        group.append(op)
        first = group[0].call.ordinal
        filled: list[FileOp[C]] = []
        if kind != "read" and not call.err:
            for o in opened:
                o.write = op
                filled.append(o)
            opened.clear()
            uncovered.clear()
        elif kind == "read":
            start, end = op.rng.start, op.rng.end
            keep = []
            for o in uncovered:
                # fo.range_covers(op.rng, o.rng), inlined
                if start <= o.rng.start and (end is None or (o.rng.end is not None and end >= o.rng.end)):
                    o.read = op
                    filled.append(o)
                else:
                    keep.append(o)
            if len(keep) != len(uncovered):
                self.uncovered[path] = keep
        return filled, first


def file_proposal(op: FileOp[Any]) -> Proposal | None:
    """The proposal of a non-newest op from its nearest later write/read, or None when it has none
    (or its result was empty)."""
    if op.call.chars <= 0:
        return None
    path, cid = op.path, op.call.cid
    if op.kind == "read":
        if op.write is not None:
            w = op.write
            reason = f"{path} has since been modified (see {w.kind} call {w.call.cid})"
            text = fo._changed(path, w.kind, w.call.cid)
        elif op.read is not None:
            reason = f"superseded by newer read of {path} (call {op.read.call.cid})"
            text = fo._newer_read(path, op.read.call.cid)
        else:
            return None
    elif op.write is not None:
        w = op.write
        reason = f"superseded by newer {w.kind} of {path} (call {w.call.cid})"
        text = fo._newer_write(path, w.kind, w.call.cid)
    else:
        return None
    return Proposal(fo.STRATEGY_ID, cid, RESULT, reason, text)
