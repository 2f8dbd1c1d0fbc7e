"""Sister `superseded-file-ops` (docs/specs/dcp.md §7.2; `supersededFileOpsStrategy`).

Only `read`/`write`/`edit` completed calls with a path (`path ?? file_path ?? filePath`,
resolved against cwd and normalised). Per path, walking newest -> oldest (the newest op is
never pruned):
1. a read is superseded by a later read whose line range covers it (a full read is [1, EOF));
2. unknown coverage (earlier read to EOF, later read bounded) is skipped;
3. any read is superseded by a later *successful* write/edit (takes priority);
4. a write/edit output is superseded by a later successful write/edit.
Errored writes never supersede; only results with non-empty text are proposed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from readbench.base.js import posix_normalize, posix_resolve
from readbench.dcp._sister_common import EXTENSION_ID, Proposal, completed_occurrences, result_text_chars
from readbench.dcp._strategy import DcpStrategy
from readbench.dcp._view import PiView

__all__ = ["STRATEGY", "apply", "STRATEGY_ID", "ReadRange", "propose", "range_covers", "read_range", "normalize_path"]

STRATEGY_ID = "superseded-file-ops"
_KINDS = ("read", "write", "edit")


@dataclass(frozen=True)
class ReadRange:
    """1-based line range of a read; `end` None = through end of file."""

    start: float  # JS numbers, as the tool call gave them
    end: float | None


def _positive(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and v == v and v != float("inf"):
        return v
    return None


def read_range(args: dict[str, Any]) -> ReadRange:
    """`computeFileReadRange`: start = offset or 1; end = start + limit - 1 when limit given."""
    offset, limit = _positive(args.get("offset")), _positive(args.get("limit"))
    start = offset if offset is not None else 1
    return ReadRange(start, start + limit - 1 if limit is not None else None)


def range_covers(later: ReadRange | None, earlier: ReadRange | None) -> bool:
    """`readRangeCovers`: does `later` fully cover `earlier` (unknown -> False)?"""
    if later is None or earlier is None:  # not a read (only reads have a range)
        return False
    if later.start > earlier.start:
        return False
    if later.end is None:
        return True
    if earlier.end is None:
        return False
    return later.end >= earlier.end


def normalize_path(raw: str, cwd: str | None) -> str:
    """`normalizeFileOpsPath`: resolve a relative path against `cwd` (if given), then normalise."""
    trimmed = raw.strip()
    if not trimmed:
        return trimmed
    if cwd and not trimmed.startswith("/"):
        return posix_normalize(posix_resolve(cwd, trimmed))
    return posix_normalize(trimmed)


def _path_arg(args: dict[str, Any]) -> str | None:
    raw = args.get("path")
    if raw is None:
        raw = args.get("file_path")
    if raw is None:
        raw = args.get("filePath")
    return raw if isinstance(raw, str) and raw.strip() else None


@dataclass(frozen=True)
class _Op:
    call_id: str
    kind: str
    path: str
    rng: ReadRange | None
    is_error: bool
    text_chars: int


def _changed(path: str, kind: str, cid: str) -> str:
    return f"[pruned by {EXTENSION_ID}: file has since changed — {path} was modified by a later {kind} (call {cid})]"


def _newer_read(path: str, cid: str) -> str:
    return f"[pruned by {EXTENSION_ID}: superseded by newer read of {path} (call {cid})]"


def _newer_write(path: str, kind: str, cid: str) -> str:
    return f"[pruned by {EXTENSION_ID}: superseded by newer {kind} of {path} (call {cid})]"


def propose(view: PiView, cwd: str | None) -> list[Proposal]:
    """Propose stale read/write/edit outputs per the four rules above."""
    by_path: dict[str, list[_Op]] = {}
    for occ in completed_occurrences(view):
        kind = occ.tool.strip().lower()
        if kind not in _KINDS:
            continue
        raw = _path_arg(occ.arguments)
        if raw is None:
            continue
        path = normalize_path(raw, cwd)
        if not path:
            continue
        rng = read_range(occ.arguments) if kind == "read" else None
        op = _Op(occ.call_id, kind, path, rng, occ.is_error, result_text_chars(view, occ.result_pos))
        by_path.setdefault(path, []).append(op)
    out: list[Proposal] = []
    for group in by_path.values():
        later_write: _Op | None = None
        covering: list[_Op] = []  # later reads, nearest first, dominated ones dropped
        for i in range(len(group) - 1, -1, -1):
            op = group[i]
            if i != len(group) - 1 and op.text_chars > 0:
                if op.kind == "read":
                    if later_write is not None:
                        out.append(Proposal(
                            STRATEGY_ID, op.call_id, "tool_result_content",
                            f"{op.path} has since been modified (see {later_write.kind} call {later_write.call_id})",
                            _changed(op.path, later_write.kind, later_write.call_id),
                        ))
                    else:
                        hit = next((r for r in covering if range_covers(r.rng, op.rng)), None)
                        if hit is not None:
                            out.append(Proposal(
                                STRATEGY_ID, op.call_id, "tool_result_content",
                                f"superseded by newer read of {op.path} (call {hit.call_id})",
                                _newer_read(op.path, hit.call_id),
                            ))
                elif later_write is not None:
                    out.append(Proposal(
                        STRATEGY_ID, op.call_id, "tool_result_content",
                        f"superseded by newer {later_write.kind} of {op.path} (call {later_write.call_id})",
                        _newer_write(op.path, later_write.kind, later_write.call_id),
                    ))
            if op.kind != "read":
                if not op.is_error:
                    later_write = op
            else:
                covering = [r for r in covering if not range_covers(op.rng, r.rng)]
                covering.insert(0, op)
    return out


def apply(view: PiView, params: Any) -> list[Proposal]:
    """`propose` with the configuration's `cwd` (the strategy record's rule)."""
    return propose(view, params.cwd)


STRATEGY = DcpStrategy(STRATEGY_ID, "sister", "diegopetrucci/pi-dynamic-context-pruning 0.1.6 "
                       "supersededFileOpsStrategy (dcp.md §7.2)", apply,
                       f"[pruned by {EXTENSION_ID}: ", flag="superseded_file_ops",
                       incremental="readbench.dcp._fast_sister:SisterSeq")
