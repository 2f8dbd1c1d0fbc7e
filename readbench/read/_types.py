"""Records every read variant returns, and the variant base class.

Shapes are the shared interface of brief §1 (`ReadVariant`, `ReadResult`, `ReadDetails`);
the details carry what docs/specs/metrics.md "Reads and fragmentation" needs, so metrics
never parse notice text (docs/specs/variants.md "Shared by all variants").
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

from readbench.base.js import decode_utf8
from readbench.base.truncate import count_lines

if TYPE_CHECKING:
    from readbench.read._session import ReadSession

__all__ = [
    "PI_READ_PARAMETERS",
    "CallFacts",
    "ReadDetails",
    "ReadResult",
    "ReadVariant",
    "call_facts",
    "make_details",
    "decoded",
    "sha256_hex",
]


PI_READ_PARAMETERS: dict[str, str] = {
    "path": "Path to the file to read (relative or absolute)",
    "offset": "Line number to start reading from (1-indexed)",
    "limit": "Maximum number of lines to read",
}
"""pi's read schema parameter descriptions (pi-tools.md §1.1): `path` required, `offset` and
`limit` optional numbers. Every variant uses this schema (variants.md, first paragraph)."""


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of raw file bytes (the identity of a file state for dedup and maps)."""
    hit = _remembered(data)
    return hit[2] if hit is not None else hashlib.sha256(data).hexdigest()


#: A `bytes` object of at most this many bytes has its decoded text (`decoded`), line count and
#: SHA-256 remembered by identity, the latest `FILE_MEMO_SLOTS` of them and at most
#: `FILE_MEMO_TOTAL_BYTES` bytes in all (so at most ~5x that in memory with the texts): the replay's
#: read counterfactual (readbench.replay.read_counterfactual) runs every preset on the same rebuilt
#: file version, which is then decoded and hashed once for all of them.
FILE_MEMO_MAX_BYTES = 1_000_000
FILE_MEMO_SLOTS = 128
FILE_MEMO_TOTAL_BYTES = 16_000_000
_FILE_MEMO: dict[int, tuple[bytes, str, str, int]] = {}  # id(data) -> (data, text, sha256, lines)
_file_memo_bytes = [0]


def _remembered(data: bytes) -> tuple[bytes, str, str, int] | None:
    """The memo entry of `data` (made on first sight), None for a bytes object it does not hold
    (too big, or not immutable `bytes`)."""
    if type(data) is not bytes or len(data) > FILE_MEMO_MAX_BYTES:
        return None
    hit = _FILE_MEMO.get(id(data))
    if hit is not None:  # the memo holds `data`: its id is not re-used meanwhile
        return hit
    text = decode_utf8(data)
    hit = _FILE_MEMO[id(data)] = (data, text, hashlib.sha256(data).hexdigest(), count_lines(text))
    _file_memo_bytes[0] += len(data)
    while len(_FILE_MEMO) > FILE_MEMO_SLOTS or _file_memo_bytes[0] > FILE_MEMO_TOTAL_BYTES:
        _file_memo_bytes[0] -= len(_FILE_MEMO.pop(next(iter(_FILE_MEMO)))[0])
    return hit


def decoded(data: bytes) -> str:
    """`readbench.base.js.decode_utf8(data)` (Node's UTF-8 decoding), the same str object for the
    same bytes object while it is remembered (`FILE_MEMO_MAX_BYTES`)."""
    hit = _remembered(data)
    return hit[1] if hit is not None else decode_utf8(data)


@dataclass(frozen=True)
class ReadDetails:
    """Structured facts about one read call (stored in `ChatMessageTool.metadata["readbench"]`).

    Line numbers are 1-based file lines. A file's lines are those of `text.split("\\n")`
    without the phantom empty segment after a final newline, so an empty file has 0 lines
    and `"a\\nb\\n"` has 2 (pi's notices count the phantom one; these fields do not).
    """

    variant: str
    """Preset name of the variant that produced the result."""
    path: str
    """The raw `path` argument."""
    offset: int | None
    """Requested `offset` (1-based), as given; None when absent."""
    limit: int | None
    """Requested `limit` in lines, as given; None when absent."""
    call_id: str | None
    """Tool call id of this read (None when unknown, e.g. from the CLI)."""
    first_line: int | None
    """First file line whose text is in the result; None when no file text was returned."""
    last_line: int | None
    """Last file line whose text is in the result; None when no file text was returned."""
    total_lines: int
    """Lines in the whole file (no phantom line)."""
    file_bytes: int
    """Size of the raw file in bytes."""
    returned_lines: int
    """File lines whose text is in the result (sum over `line_ranges`)."""
    line_ranges: tuple[tuple[int, int], ...]
    """Inclusive (first, last) ranges of file lines in the result; more than one only for a
    swe-agent file map, which elides function bodies."""
    capped: bool
    """The requested portion was cut by a cap (line/byte/char cap, C's cut, swe-agent clip,
    claude-code's default limit or long-line cut)."""
    blocked: bool
    """The read was refused and returned no file text (B's over-cap error, claude-code's
    token error). Stock's first-line-too-long message counts as `capped`, not blocked."""
    stubbed: bool
    """A dedup stub was served instead of the text."""
    stub_of_call: str | None
    """For a stub, the call id of the earlier read it points to."""
    stub_miss: bool
    """A stub was served although that earlier result was not in the model's last view
    (possible only for B+dedup-naive; metrics.md `dedup_stub_misses`)."""
    mapped: bool
    """A structural map (C) or file map (swe-agent) is in the result."""
    map_call: str | None
    """C: the call whose result carries this file's map (this call when `mapped`)."""
    content_sha256: str
    """SHA-256 of the raw file bytes."""
    error: str | None = None
    """A short machine label when the result is an error: "beyond_eof", "over_cap",
    "first_line_too_long", "over_token_budget", "bad_range"; None otherwise."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        out["line_ranges"] = [list(r) for r in self.line_ranges]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReadDetails:
        """Inverse of `to_dict`.

        Raises:
            ValueError: if a field is missing or unknown (naming it).
        """
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown ReadDetails fields: {sorted(unknown)}")
        kwargs = dict(data)
        kwargs["line_ranges"] = tuple((int(a), int(b)) for a, b in data.get("line_ranges", ()))
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ValueError(f"bad ReadDetails dict: {exc}") from exc


@dataclass(frozen=True)
class ReadResult:
    """What the model receives from one read call.

    `text` is the whole tool-result text; `is_error` maps to pi's `isError` (inspect's
    `ChatMessageTool.error` is set when true).
    """

    text: str
    is_error: bool
    details: ReadDetails

    def to_dict(self) -> dict[str, Any]:
        """`{"text", "is_error", "details"}`, JSON-ready."""
        return {"text": self.text, "is_error": self.is_error, "details": self.details.to_dict()}


@dataclass(frozen=True)
class CallFacts:
    """Per-call facts every family needs to fill `ReadDetails`."""

    variant: str
    path: str
    offset: int | None
    limit: int | None
    call_id: str | None
    total_lines: int
    file_bytes: int
    content_sha256: str


class ReadVariant(ABC):
    """A read-tool variant: pi's `read {path, offset?, limit?}` with one behaviour.

    Subclasses are the families (one module each); presets are (family, params) pairs in
    `readbench.read.registry`. Instances are immutable after construction.

    Attributes:
        name: preset name (e.g. "stock", "B+dedup", or a user-defined one).
        origin: one line saying where the behaviour comes from.
        params: the effective parameters (JSON-ready dict).
        tool_description: the `description` sent with the tool schema.
        prompt_lines: system-prompt lines the read tool contributes (snippet, guidelines).
        requires_read_before_edit: the paired edit tool refuses files not read first.
    """

    family: ClassVar[str] = ""
    Params: ClassVar[type]  # the family's frozen parameter record (see registry.Preset.build)
    requires_read_before_edit: bool = False

    def __init__(self, name: str, origin: str, params: dict[str, Any]) -> None:
        self.name = name
        self.origin = origin
        self.params = dict(params)

    @property
    @abstractmethod
    def tool_description(self) -> str:
        """The tool description sent with the schema."""

    @property
    def prompt_lines(self) -> list[str]:
        """pi's read snippet and guideline (pi-tools.md §2.2); families may override."""
        return ["- read: Read file contents", "Use read to examine files instead of cat or sed."]

    @abstractmethod
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
        """Serve one read of a file whose bytes the adapter already fetched.

        Args:
            data: raw file bytes.
            path: the raw `path` argument (appears verbatim in some messages).
            offset: 1-based first line, or None.
            limit: maximum lines, or None.
            call_id: this tool call's id (recorded in the session; stubs and maps name it).
            session: the sample's read memory; updated in place.
            visible_call_ids: ids of tool calls whose results were intact in the message
                list the model received on its last call (after DCP projection); None when
                the caller cannot tell.
            file_key: the resolved file identity for the session (e.g. the absolute path in
                the sandbox); defaults to the normalised `path`.

        Returns:
            The result the model receives. Tool errors are results with `is_error=True`.

        Raises:
            TypeError: if `offset` or `limit` is not an integer or None.
        """

    def describe(self) -> dict[str, Any]:
        """`{"name", "family", "origin", "params"}` for logs and `readbench variants`."""
        return {
            "name": self.name,
            "family": self.family,
            "origin": self.origin,
            "params": self.params,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, params={self.params!r})"


def call_facts(
    variant: str,
    text: str,
    data: bytes,
    path: str,
    offset: int | None,
    limit: int | None,
    call_id: str | None,
) -> CallFacts:
    """Per-call facts for `ReadDetails`; `text` is `data` decoded (its line count is the
    file's `total_lines`)."""
    hit = _remembered(data)
    return CallFacts(
        variant=variant,
        path=path,
        offset=offset,
        limit=limit,
        call_id=call_id,
        total_lines=hit[3] if hit is not None and hit[1] is text else count_lines(text),
        file_bytes=len(data),
        content_sha256=hit[2] if hit is not None else hashlib.sha256(data).hexdigest(),
    )


def make_details(
    facts: CallFacts,
    *,
    ranges: tuple[tuple[int, int], ...] = (),
    capped: bool = False,
    blocked: bool = False,
    stubbed: bool = False,
    stub_of_call: str | None = None,
    stub_miss: bool = False,
    mapped: bool = False,
    map_call: str | None = None,
    error: str | None = None,
) -> ReadDetails:
    """Build `ReadDetails` from the per-call facts and the outcome."""
    ranges = tuple(r for r in ranges if r[1] >= r[0])
    return ReadDetails(
        variant=facts.variant,
        path=facts.path,
        offset=facts.offset,
        limit=facts.limit,
        call_id=facts.call_id,
        first_line=ranges[0][0] if ranges else None,
        last_line=ranges[-1][1] if ranges else None,
        total_lines=facts.total_lines,
        file_bytes=facts.file_bytes,
        returned_lines=sum(b - a + 1 for a, b in ranges),
        line_ranges=ranges,
        capped=capped,
        blocked=blocked,
        stubbed=stubbed,
        stub_of_call=stub_of_call,
        stub_miss=stub_miss,
        mapped=mapped,
        map_call=map_call,
        content_sha256=facts.content_sha256,
        error=error,
    )
