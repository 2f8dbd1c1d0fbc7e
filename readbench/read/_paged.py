"""The paged family: stock pi, A, nocap, B and B-soft — one implementation, parameters only.

- `stock`: pi 0.84.1 exactly (docs/specs/pi-tools.md §1-2): 2000 lines / 51,200 UTF-8
  bytes on the requested portion, continuation notices.
- `A`: the same with 1000 lines / 10,000 characters (JS `.length`, UTF-16 code units).
- `nocap`: no caps and no notice (early Cline).
- `B` / `B-soft`: where stock would cut, refuse with one line naming the file's size and a
  concrete range instead; within the caps exactly stock (variants.md "B").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from readbench.base.js import format_size, js_number_str, utf8_len, utf16_len
from readbench.base.truncate import Truncation, truncate_head
from readbench.read._params import check_bool, check_choice, check_int, params_to_dict
from readbench.read._pi import (
    Selection,
    check_line_arg,
    render_paged,
    select,
    stock_first_line_message,
)
from readbench.read._session import ReadSession, file_key_for
from readbench.read._types import CallFacts, ReadResult, ReadVariant, call_facts, decoded, make_details
from readbench.read.notices import block_notice, char_line_notice

__all__ = ["GIF_QUIRK_TEXT", "PagedParams", "PagedRead", "paged_description"]

PI_READ_DESCRIPTION_HEAD = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
    "Images are sent as attachments."
)
CONTINUE_SENTENCE = "When you need the full file, continue with offset until complete."
GIF_QUIRK_TEXT = (
    "Read image file [image/gif]\n"
    "[Image omitted: could not be resized below the inline image size limit.]"
)
B_SENTENCE = (
    "Read large files in targeted ranges: a read whose selection exceeds this limit returns "
    "an error with the file's line count and no content."
)


@dataclass(frozen=True)
class PagedParams:
    """Parameters of the paged family.

    Attributes:
        max_lines: line cap on the requested portion; None = no line cap.
        max_bytes: size cap in UTF-8 bytes; None = none. Exclusive with `max_chars`.
        max_chars: size cap in characters (JS `.length`, UTF-16 code units); None = none.
        over_cap: "truncate" (cut to whole lines + notice, stock/A) or "block" (no text,
            one-line error, B).
        as_error: for "block", return the message with `is_error=True` (B) or as a normal
            result (B-soft).
        suggest_limit: for "block", the `limit` the message suggests, lowered to what
            actually fits from the requested offset.
        limit_notice: append pi's "[R more lines in file…]" when a user `limit` stops
            before EOF (False for nocap).
        gif_quirk: pi 0.84.1 sniffs any file starting with the bytes `GIF` as an image and
            returns `GIF_QUIRK_TEXT` for it (pi-tools.md §1.4, fixed in pi 0.87.0). Other
            image files are not emulated (readbench reads text; a result carries text only).
    """

    max_lines: int | None = 2000
    max_bytes: int | None = 51200
    max_chars: int | None = None
    over_cap: str = "truncate"
    as_error: bool = True
    suggest_limit: int = 1000
    limit_notice: bool = True
    gif_quirk: bool = True

    def __post_init__(self) -> None:
        check_int("max_lines", self.max_lines, minimum=1, optional=True)
        check_int("max_bytes", self.max_bytes, minimum=1, optional=True)
        check_int("max_chars", self.max_chars, minimum=1, optional=True)
        if self.max_bytes is not None and self.max_chars is not None:
            raise ValueError(
                "parameters 'max_bytes' and 'max_chars' are exclusive; set one to null"
            )
        check_choice("over_cap", self.over_cap, ("truncate", "block"))
        check_bool("as_error", self.as_error)
        check_int("suggest_limit", self.suggest_limit, minimum=1)
        check_bool("limit_notice", self.limit_notice)
        check_bool("gif_quirk", self.gif_quirk)


def paged_description(p: PagedParams) -> str:
    """The tool description for paged params; equals pi's read description verbatim
    (pi-tools.md §2.1) for stock's defaults."""
    if p.max_bytes is not None:
        size = f"{js_number_str(p.max_bytes / 1024)}KB"
    elif p.max_chars is not None:
        size = f"{p.max_chars} characters"
    else:
        size = None
    lines = f"{p.max_lines} lines" if p.max_lines is not None else None
    caps = [c for c in (lines, size) if c]
    parts = [PI_READ_DESCRIPTION_HEAD]
    if caps:
        tail = " (whichever is hit first)" if len(caps) == 2 else ""
        parts.append(f"For text files, output is truncated to {' or '.join(caps)}{tail}.")
    else:
        parts.append("For text files, the whole requested portion is returned, with no truncation.")
    parts.append("Use offset/limit for large files.")
    if caps:
        parts.append(B_SENTENCE if p.over_cap == "block" else CONTINUE_SENTENCE)
    return " ".join(parts)


class PagedRead(ReadVariant):
    """pi's read with parametric caps; presets `stock`, `A`, `nocap`, `B`, `B-soft`.

    Behaviour (pi-tools.md §1.2-1.3): offset/limit select a portion, the caps apply to
    that portion, whole lines only, one notice. With `over_cap="block"` a portion over a
    cap returns only `File has N lines (size), over the …` (variants.md "B").
    """

    family: ClassVar[str] = "paged"
    Params: ClassVar[type] = PagedParams

    def __init__(self, name: str, origin: str, params: PagedParams) -> None:
        super().__init__(name, origin, params_to_dict(params))
        self.p = params

    @property
    def tool_description(self) -> str:
        """See `paged_description`."""
        return paged_description(self.p)

    # -- pure core --------------------------------------------------------------------------
    def _size_cap(self) -> tuple[int | None, Any, str]:
        if self.p.max_chars is not None:
            return self.p.max_chars, utf16_len, "chars"
        return self.p.max_bytes, utf8_len, "bytes"

    def _size_limit_label(self) -> str:
        if self.p.max_chars is not None:
            return f"{self.p.max_chars} chars limit"
        return f"{format_size(self.p.max_bytes or 0)} limit"

    def _first_line_message(self, sel: Selection) -> Any:
        if self.p.max_chars is not None:
            cap = self.p.max_chars

            def build(s: int, path: str) -> str:
                return char_line_notice(s, utf16_len(sel.all_lines[s - 1]), cap, path)

            return build
        return stock_first_line_message(
            self.p.max_bytes or 0, lambda s: utf8_len(sel.all_lines[s - 1])
        )

    def _cap_label(self) -> str:
        parts = []
        if self.p.max_lines is not None:
            parts.append(f"{self.p.max_lines}-line")
        if self.p.max_chars is not None:
            parts.append(f"{self.p.max_chars}-char")
        elif self.p.max_bytes is not None:
            parts.append(format_size(self.p.max_bytes))
        return "/".join(parts)

    def serve(
        self, text: str, path: str, offset: int | None, limit: int | None, facts: CallFacts
    ) -> ReadResult:
        """The result for one read of the decoded `text`, without touching any session."""
        if self.p.gif_quirk and text.startswith("GIF"):
            return ReadResult(GIF_QUIRK_TEXT, False, make_details(facts))
        sel = select(text, offset, limit)
        if isinstance(sel, str):
            return ReadResult(sel, True, make_details(facts, error="beyond_eof"))
        cap, measure, unit = self._size_cap()
        trunc = sel.truncated(self.p.max_lines, cap, measure, unit)
        if trunc.truncated and self.p.over_cap == "block":
            return self._blocked(sel, trunc, path, facts)
        out, span = render_paged(
            sel,
            trunc,
            path,
            size_limit_label=self._size_limit_label(),
            first_line_message=self._first_line_message(sel),
            limit_notice=self.p.limit_notice,
        )
        return ReadResult(
            out,
            False,
            make_details(facts, ranges=(span,) if span else (), capped=trunc.truncated),
        )

    def _blocked(
        self, sel: Selection, trunc: Truncation, path: str, facts: CallFacts
    ) -> ReadResult:
        if trunc.first_line_exceeds_limit:
            msg = self._line_too_long_message(sel, path, facts)
            label = "first_line_too_long"
        else:
            suggest = min(self.p.suggest_limit, trunc.output_lines)
            msg = block_notice(facts.total_lines, format_size(facts.file_bytes), self._cap_label(), sel.start_display,
                               suggest)
            label = "over_cap"
        return ReadResult(msg, self.p.as_error, make_details(facts, blocked=True, error=label))

    def _line_too_long_message(self, sel: Selection, path: str, facts: CallFacts) -> str:
        """B's refusal when the first requested line alone is over the size cap.

        Like B's over-cap message it names the file's line count and size and a concrete
        range (variants.md "B": the numbers are real), here the lines after the long one
        (before it when it is the last line), with the largest `limit` up to
        `suggest_limit` whose portion fits the caps; it keeps pi's sed hint for the line
        itself. No range is suggested when the neighbouring line is over the cap too or the
        file is that one line.
        """
        s = sel.start_display
        cap, measure, unit = self._size_cap()
        line_size = measure(sel.all_lines[s - 1])
        size = f"{line_size} chars" if unit == "chars" else format_size(line_size)
        limit_label = self._size_limit_label().removesuffix(" limit")
        n = facts.total_lines
        head = (
            f"File has {n} line{'s' if n != 1 else ''} ({format_size(facts.file_bytes)}); line {s} alone is "
            f"{size}, over the {limit_label} read limit."
        )
        sed = f"sed -n '{s}p' {path} | head -c {cap}"
        span = self._fitting_range(sel, s + 1, n) if s < n else self._fitting_range(sel, 1, s - 1)
        if span is None:
            return f"{head} Use bash: {sed}"
        offset, limit = span
        return f"{head} Read other lines in ranges, e.g. offset={offset} limit={limit}, or this line with bash: {sed}"

    def _fitting_range(self, sel: Selection, first: int, last: int) -> tuple[int, int] | None:
        """(offset, limit) from line `first`: at most `suggest_limit` lines, none after
        `last`, as many as fit the caps; None when line `first` alone does not fit."""
        if first < 1 or first > last:
            return None
        cap, measure, unit = self._size_cap()
        want = min(self.p.suggest_limit, last - first + 1)
        window = "\n".join(sel.all_lines[first - 1 : first - 1 + want])
        trunc = truncate_head(window, self.p.max_lines, cap, measure=measure, size_unit=unit)
        kept = want if not trunc.truncated else trunc.output_lines
        return (first, kept) if kept > 0 else None

    # -- the tool call ----------------------------------------------------------------------
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
        """See `ReadVariant.read`; records successful reads in `session`."""
        offset = check_line_arg("offset", offset)
        limit = check_line_arg("limit", limit)
        text = decoded(data)
        facts = call_facts(self.name, text, data, path, offset, limit, call_id)
        result = self.serve(text, path, offset, limit, facts)
        if not result.is_error and not result.details.blocked:
            session.record_read(
                file_key or file_key_for(path),
                call_id,
                result.details.line_ranges,
                facts.content_sha256,
            )
        return result
