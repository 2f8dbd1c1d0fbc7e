"""The mapped family (variant C): cut long reads to N numbered lines plus a structural map.

A portion over `max_lines` (default 400) is cut to its first N lines, every returned line
is numbered `{n:>6}\\t{line}`, and a notice follows:
`[Showing lines S-E of T. Use offset/limit to read other parts; the file map is below.]`
then, on the first cut of each file state, a map: one line per class / function / method
(Markdown: heading) with its line range, from tree-sitter. Later cuts of the same content
say `…; the file map was shown in call X.]`; files with no grammar get the notice only, and so
do files over `map_max_file_bytes` (4 MiB), whose notice says why: tree-sitter's tree of a
100 MB module took 113 s and 7.2 GB to build for a map of which 300 entries are shown.
Where C says nothing it is stock: pi's byte cap (51,200) and first-line message, the
beyond-EOF error and the "[R more lines in file…]" notice. No model calls.
Spec: docs/specs/variants.md "C".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from readbench.base.js import format_size, utf8_len
from readbench.read._outline import OutlineEntry, outline
from readbench.read._params import check_bool, check_choice, check_int, params_to_dict
from readbench.read._pi import (
    Selection,
    check_line_arg,
    select,
    stock_first_line_message,
)
from readbench.read._session import ReadSession, file_key_for
from readbench.read._types import CallFacts, ReadResult, ReadVariant, call_facts, decoded, make_details
from readbench.read.notices import cut_notice, more_notice, number_rows

__all__ = ["MappedParams", "MappedRead", "number_lines", "render_map"]


@dataclass(frozen=True)
class MappedParams:
    """Parameters of variant C.

    Attributes:
        max_lines: N, lines per read (the seed discusses 200-600).
        max_bytes: stock's UTF-8 byte cap on the file text of a portion; None = none.
        line_numbers: prefix each returned line with `{n:>6}\\t`.
        map: "lazy" (map on the first cut of each file state), "always" (every cut), "off".
        map_max_entries: longest map in entries; the rest is summarised in one line.
        map_reshow_if_pruned: in "lazy" mode, show the map again when the call that showed
            it is not in `visible_call_ids` (pruned from the model's last view); the spec's
            C never does (False).
        map_max_file_bytes: files larger than this (UTF-8 bytes) get no map; the notice says
            `no file map: the file is {size}, over the {cap} map limit`. None = no bound.
    """

    max_lines: int = 400
    max_bytes: int | None = 51200
    line_numbers: bool = True
    map: str = "lazy"
    map_max_entries: int = 300
    map_reshow_if_pruned: bool = False
    map_max_file_bytes: int | None = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        check_int("max_lines", self.max_lines, minimum=1)
        check_int("max_bytes", self.max_bytes, minimum=1, optional=True)
        check_bool("line_numbers", self.line_numbers)
        check_choice("map", self.map, ("lazy", "always", "off"))
        check_int("map_max_entries", self.map_max_entries, minimum=1)
        check_bool("map_reshow_if_pruned", self.map_reshow_if_pruned)
        check_int("map_max_file_bytes", self.map_max_file_bytes, minimum=1, optional=True)


def number_lines(lines: list[str], first: int) -> str:
    """`{n:>6}\\t{line}` for each line, numbered from `first`, joined by newlines."""
    return number_rows(lines, first, "padded-tab")


def render_map(path: str, entries: list[OutlineEntry], max_entries: int) -> str:
    """The map block: a header line, then one `OutlineEntry.render()` line per entry, at
    most `max_entries` of them plus a `… N more definitions not shown` line."""
    shown = entries[:max_entries]
    lines = [f"File map of {path} (definitions with line ranges):"]
    lines += [e.render() for e in shown]
    if len(entries) > max_entries:
        lines.append(f"... {len(entries) - max_entries} more definitions not shown")
    return "\n".join(lines)


class MappedRead(ReadVariant):
    """Variant C (preset `C`); see the module docstring."""

    family: ClassVar[str] = "mapped"
    Params: ClassVar[type] = MappedParams

    def __init__(self, name: str, origin: str, params: MappedParams) -> None:
        super().__init__(name, origin, params_to_dict(params))
        self.p = params

    @property
    def tool_description(self) -> str:
        """States N, the numbering and the map."""
        numbered = " Each line is prefixed with its line number." if self.p.line_numbers else ""
        mapped = (
            " A longer selection is cut to its first "
            f"{self.p.max_lines} lines; the first cut of a file is followed by a map of its "
            "classes, functions and headings with their line ranges."
            if self.p.map != "off"
            else f" A longer selection is cut to its first {self.p.max_lines} lines."
        )
        return (
            "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, "
            f"bmp). Images are sent as attachments. For text files, a read returns at most "
            f"{self.p.max_lines} lines.{numbered}{mapped} Use offset/limit to read the part "
            "you need."
        )

    def _body(self, sel: Selection, count: int) -> str:
        lines = sel.all_lines[sel.start0 : sel.start0 + count]
        if not self.p.line_numbers:
            return "\n".join(lines)
        return number_lines(lines, sel.start_display)

    def _map_part(
        self,
        text: str,
        path: str,
        key: str,
        facts: CallFacts,
        session: ReadSession,
        visible_call_ids: frozenset[str] | None,
    ) -> tuple[str, str, bool, str | None]:
        """(notice tail, map block, mapped now, map call) for a cut."""
        tail = "Use offset/limit to read other parts."
        if self.p.map == "off":
            return tail, "", False, None
        call = session.map_call(key)
        pruned = (
            self.p.map_reshow_if_pruned
            and visible_call_ids is not None
            and call not in visible_call_ids
        )
        bound = self.p.map_max_file_bytes
        if bound is not None and facts.file_bytes > bound:
            return (
                f"Use offset/limit to read other parts; no file map: the file is "
                f"{format_size(facts.file_bytes)}, over the {format_size(bound)} map limit.",
                "",
                False,
                None,
            )
        if self.p.map == "lazy" and session.map_shown(key, facts.content_sha256) and not pruned:
            return (
                f"Use offset/limit to read other parts; the file map was shown in call {call}.",
                "",
                False,
                call,
            )
        entries = outline(text, path)
        if not entries:
            return tail, "", False, None
        session.note_map(key, facts.content_sha256, facts.call_id)
        block = render_map(path, entries, self.p.map_max_entries)
        return (
            "Use offset/limit to read other parts; the file map is below.",
            block,
            True,
            facts.call_id,
        )

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
        """See `ReadVariant.read`. Records the shown lines and, on a mapped cut, the map."""
        offset = check_line_arg("offset", offset)
        limit = check_line_arg("limit", limit)
        key = file_key or file_key_for(path)
        text = decoded(data)
        facts = call_facts(self.name, text, data, path, offset, limit, call_id)
        sel = select(text, offset, limit)
        if isinstance(sel, str):
            return ReadResult(sel, True, make_details(facts, error="beyond_eof"))
        trunc = sel.truncated(self.p.max_lines, self.p.max_bytes)
        s, t = sel.start_display, sel.total_js_lines
        if trunc.first_line_exceeds_limit:
            msg = stock_first_line_message(
                self.p.max_bytes or 0, lambda n: utf8_len(sel.all_lines[n - 1])
            )(s, path)
            session.record_read(key, call_id, (), facts.content_sha256)
            return ReadResult(msg, False, make_details(facts, capped=True))
        if trunc.truncated:
            e = s + trunc.output_lines - 1
            tail, block, mapped, map_call = self._map_part(
                text, path, key, facts, session, visible_call_ids
            )
            by_size = f"{format_size(self.p.max_bytes or 0)} limit" if trunc.truncated_by == "bytes" else None
            out = f"{self._body(sel, trunc.output_lines)}\n\n{cut_notice(s, e, t, tail, by_size)}"
            if block:
                out = f"{out}\n{block}"
            ranges: tuple[tuple[int, int], ...] = ((s, e),)
            session.record_read(key, call_id, ranges, facts.content_sha256)
            return ReadResult(
                out,
                False,
                make_details(facts, ranges=ranges, capped=True, mapped=mapped, map_call=map_call),
            )
        span = sel.returned_span()
        count = span[1] - span[0] + 1 if span else 0
        body = self._body(sel, count) if self.p.line_numbers else trunc.content
        limited = sel.user_limited_lines
        if limited is not None and sel.start0 + limited < t:
            nxt = sel.start0 + limited + 1
            body = f"{body}\n\n{more_notice(t - nxt + 1, nxt)}"
        ranges = (span,) if span else ()
        session.record_read(key, call_id, ranges, facts.content_sha256)
        return ReadResult(body, False, make_details(facts, ranges=ranges))
