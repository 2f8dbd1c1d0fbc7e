"""The dedup family: B plus a one-line stub for repeat reads (`B+dedup`, `B+dedup-naive`).

A read is a repeat when an earlier successful read of the same file showed every line
the new read would return and the file has not changed since (no `note_file_changed`,
same content SHA-256). `dedup="context"` serves the stub only if that earlier result's call
id is in `visible_call_ids` (intact in what the model last received, after DCP);
`dedup="naive"` serves it whenever the repeat condition holds (Claude Code's behaviour,
whose failure is a stub pointing at a copy that was pruned or compacted away).
Spec: docs/specs/variants.md "B+dedup and B+dedup-naive"; metrics.md `dedup_stubs`,
`dedup_stub_misses`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from readbench.read._paged import PagedParams, PagedRead
from readbench.read._params import check_choice
from readbench.read._pi import check_line_arg
from readbench.read._session import ReadRecord, ReadSession, file_key_for
from readbench.read._types import ReadResult, call_facts, decoded, make_details
from readbench.read.notices import stub_notice

__all__ = ["DedupParams", "DedupRead", "stub_text"]


@dataclass(frozen=True)
class DedupParams(PagedParams):
    """`PagedParams` (B's defaults: `over_cap="block"`) plus the dedup policy.

    Attributes:
        dedup: "context" (stub only while the earlier result is in the model's last view)
            or "naive" (stub whenever the repeat condition holds).
    """

    over_cap: str = "block"
    dedup: str = "context"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("dedup", self.dedup, ("context", "naive"))


def stub_text(first: int, last: int, call_id: str) -> str:
    """The stub (variants.md; `readbench.read.notices.stub_notice`): `File unchanged since your
    read of lines {first}-{last} (call {call_id}); that content is already in your context.`"""
    return stub_notice(first, last, call_id)


class DedupRead(PagedRead):
    """B with dedup stubs; presets `B+dedup` (context-aware) and `B+dedup-naive`."""

    family: ClassVar[str] = "dedup"
    Params: ClassVar[type] = DedupParams

    def _pick(
        self, candidates: list[ReadRecord], visible_call_ids: frozenset[str] | None
    ) -> ReadRecord | None:
        named = [r for r in candidates if r.call_id is not None]
        if self.p.dedup == "naive":  # type: ignore[attr-defined]
            return named[0] if named else None
        if visible_call_ids is None:
            return None  # cannot tell what the model saw: serve the real text
        return next((r for r in named if r.call_id in visible_call_ids), None)

    def read(
        self,
        data: bytes,
        path: str,
        offset: int | None,
        limit: int | None,
        *,
        call_id: str | None,
        session: ReadSession,
        visible_call_ids: frozenset[str] | None,
        file_key: str | None = None,
    ) -> ReadResult:
        """See `ReadVariant.read`. A stub is a normal result (`is_error=False`) with no file
        text; `details.stubbed`, `stub_of_call`, and `stub_miss` (naive only: the earlier
        call was not in `visible_call_ids`)."""
        offset = check_line_arg("offset", offset)
        limit = check_line_arg("limit", limit)
        key = file_key or file_key_for(path)
        text = decoded(data)
        facts = call_facts(self.name, text, data, path, offset, limit, call_id)
        result = self.serve(text, path, offset, limit, facts)
        d = result.details
        if result.is_error or d.blocked or d.first_line is None or d.last_line is None:
            if not result.is_error and not d.blocked:
                session.record_read(key, call_id, d.line_ranges, facts.content_sha256)
            return result
        earlier = self._pick(
            session.covering_reads(key, d.first_line, d.last_line, facts.content_sha256),
            visible_call_ids,
        )
        if earlier is None:
            session.record_read(key, call_id, d.line_ranges, facts.content_sha256)
            return result
        assert earlier.call_id is not None  # _pick only returns named records
        first, last = next(
            (a, b) for a, b in earlier.ranges if a <= d.first_line and d.last_line <= b
        )
        miss = visible_call_ids is not None and earlier.call_id not in visible_call_ids
        session.note_read(key)
        return ReadResult(
            stub_text(first, last, earlier.call_id),
            False,
            make_details(facts, stubbed=True, stub_of_call=earlier.call_id, stub_miss=miss),
        )
