"""The swe-agent family: SWE-agent's `str_replace_editor view` behind pi's read schema.

Mirrors `tools/edit_anthropic/bin/str_replace_editor` (SWE-agent, default config with
`USE_FILEMAP=true`; docs/specs/anchors.md §1, variants.md "swe-agent"):
- text: decoded as UTF-8, falling back to Latin-1 (its encoding ladder), with universal
  newlines (`Path.read_text`), tabs expanded;
- a whole-file read of a `.py` file longer than 16,000 characters shows the file map: every
  function body spanning 6+ lines (`end_row - start_row >= 5`) replaced by
  `... eliding lines a-b ...`, each line as `{n:6d} {line}`, between SWE-agent's two notes;
- otherwise `Here's the result of running \\`cat -n\\` on {path}:\\n` + lines `{n:6}\\t{line}` +
  `\\n`, where content over 16,000 characters is clipped and SWE-agent's `<response clipped>`
  note appended (before numbering, as SWE-agent does).
Adaptations: `offset`/`limit` stand for `view_range=[offset, offset+limit-1]` (a range past
EOF is clamped, as pi does); the notes name `read` with `offset`/`limit` instead of
`str_replace_editor view` with `view_range`; lines are split at `\\n` only (SWE-agent's
`splitlines()` also splits at form feeds, which shifts its numbers); a file over
`filemap_max_file_bytes` (4 MiB) gets the clipped `cat -n` view instead of the file map
(SWE-agent parses any size: 70 s and 4.6 GB on a 100 MB module to show 16,000 characters).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from readbench.base.idmemo import IdentityMemo
from readbench.read._outline import python_function_bodies
from readbench.read._params import check_bool, check_int, params_to_dict
from readbench.read._pi import MEMO_SLOTS, check_line_arg, split_lines
from readbench.read._session import ReadSession, file_key_for
from readbench.read._types import FILE_MEMO_MAX_BYTES, ReadResult, ReadVariant, call_facts, decoded, make_details

__all__ = ["SweAgentParams", "SweAgentRead", "swe_decode", "swe_filemap"]

TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. "
    "You should retry this tool after you have searched inside the file with `grep -n` in order "
    "to find the line numbers of what you are looking for.</NOTE>"
)
FILEMAP_HEAD = (
    "<NOTE>This file is too large to display entirely. Showing abbreviated version. "
    "Please use `read` with the `offset` and `limit` parameters to show selected lines next.</NOTE>"
)
FILEMAP_TAIL = (
    "<IMPORTANT><NOTE>The above file has been abbreviated. Please use `read` with `offset` "
    "and `limit` to look at relevant files in detail.</NOTE></IMPORTANT>"
)


@dataclass(frozen=True)
class SweAgentParams:
    """Parameters of the swe-agent family.

    Attributes:
        max_response_chars: SWE-agent's `MAX_RESPONSE_LEN` (Python characters).
        filemap: show the Python file map for long whole-file reads (`USE_FILEMAP`).
        elide_min_row_span: a function body is elided when `end_row - start_row` is at
            least this (SWE-agent: 5, i.e. bodies of 6+ lines).
        filemap_max_file_bytes: a file larger than this (bytes) is shown as the clipped
            `cat -n` view, never as a file map (readbench's bound; SWE-agent has none).
            None = no bound.
    """

    max_response_chars: int = 16_000
    filemap: bool = True
    elide_min_row_span: int = 5
    filemap_max_file_bytes: int | None = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        check_int("max_response_chars", self.max_response_chars, minimum=1)
        check_bool("filemap", self.filemap)
        check_int("elide_min_row_span", self.elide_min_row_span, minimum=1)
        check_int("filemap_max_file_bytes", self.filemap_max_file_bytes, minimum=1, optional=True)


def swe_decode(data: bytes) -> str:
    """SWE-agent's `read_file`: UTF-8, else Latin-1 (never fails); universal newlines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _swe_text(data: bytes) -> str:
    """`swe_decode(data)`, as the very text object `readbench.read._types.decoded` gives the other
    presets when the two are equal (valid UTF-8 without a carriage return): equal strings are
    interchangeable, and sharing the object lets this read reuse the file memo's line count and
    `readbench.read._pi.split_lines`' split instead of decoding, counting and splitting the file
    again on every read (the replay's read counterfactual serves every recorded read of a file
    version under every preset)."""
    text = swe_decode(data)
    shared = decoded(data)
    return shared if text == shared else text


_TEXTS: IdentityMemo[str] = IdentityMemo(_swe_text, MEMO_SLOTS)


def swe_filemap(text: str, min_row_span: int) -> list[tuple[str, int | None]]:
    """SWE-agent's `Filemap.show_filemap` as rows: (row text before tab expansion, the
    1-based file line it shows verbatim, or None for an `... eliding lines a-b ...` row)."""
    elide = [(a, b) for a, b in python_function_bodies(text) if b - a >= min_row_span]
    elided_rows = {row for a, b in elide for row in range(a, b + 1)}
    messages = [(a, f"... eliding lines {a + 1}-{b + 1} ...", False) for a, b in elide]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # as str.splitlines(): no phantom line after the final newline
    kept = [(i, line, True) for i, line in enumerate(lines) if i not in elided_rows]
    return [
        (f"{i + 1:6d} {line}", i + 1 if verbatim else None)
        for i, line, verbatim in sorted(messages + kept, key=lambda r: (r[0], r[1]))
    ]


def _filemap_rows(text: str, min_row_span: int) -> Iterator[tuple[str, int | None]]:
    """The rows of `swe_filemap(text, min_row_span)`, tabs expanded, in order, made one at a time
    (`_filemap_view` stops at the clip)."""
    elide = [(a, b) for a, b in python_function_bodies(text) if b - a >= min_row_span]
    elided_rows = {row for a, b in elide for row in range(a, b + 1)}
    lines = split_lines(text)  # shared: not changed here
    n = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    # swe_filemap sorts its (row, text) pairs: an elision's row is elided, so never a kept line's;
    # elisions of one row (none in Python) sort by their text, as there
    marks = sorted((a, f"... eliding lines {a + 1}-{b + 1} ...") for a, b in elide)
    k = 0
    for i in range(n):
        while k < len(marks) and marks[k][0] <= i:
            a, msg = marks[k]
            yield (f"{a + 1:6d} {msg}".expandtabs(), None)
            k += 1
        if i not in elided_rows:
            yield (f"{i + 1:6d} {lines[i]}".expandtabs(), i + 1)
    for a, msg in marks[k:]:
        yield (f"{a + 1:6d} {msg}".expandtabs(), None)


def _ranges_from(lines: list[int]) -> tuple[tuple[int, int], ...]:
    """Sorted line numbers -> inclusive runs."""
    out: list[tuple[int, int]] = []
    for n in lines:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return tuple(out)


class SweAgentRead(ReadVariant):
    """SWE-agent's file viewer (preset `swe-agent`); see the module docstring."""

    family: ClassVar[str] = "swe-agent"
    Params: ClassVar[type] = SweAgentParams

    def __init__(self, name: str, origin: str, params: SweAgentParams) -> None:
        super().__init__(name, origin, params_to_dict(params))
        self.p = params

    @property
    def tool_description(self) -> str:
        """SWE-agent's view semantics in pi's terms."""
        n = self.p.max_response_chars
        mapped = (
            f" A Python file longer than {n} characters read without offset/limit is shown "
            "abbreviated, with long function bodies elided."
            if self.p.filemap
            else ""
        )
        return (
            "Read the contents of a file. The result is shown as by `cat -n`, with line "
            f"numbers. Output longer than {n} characters is clipped.{mapped} Use offset "
            "(1-indexed) and limit to view specific lines."
        )

    def _clip(self, content: str) -> tuple[str, bool]:
        n = self.p.max_response_chars
        if len(content) <= n:
            return content, False
        return content[:n] + TRUNCATED_MESSAGE, True

    def _filemap_view(self, text: str) -> tuple[str, list[int]]:
        """(the clipped file map, the file lines it shows verbatim), as SWE-agent's view of
        `"\\n".join(swe_filemap(...) rows, tabs expanded)` clipped to `max_response_chars`, with the
        lines whose whole row fits. Rows are made only up to the first one the clip cuts: the
        joined rows up to and including row j are `used` characters long (rows and the newlines
        between them), so the first row with `used > max_response_chars` is both where the
        clipped text ends and the first row not shown, and a map whose rows never get there is
        not clipped. A 5,000-line file's map is cut after some 2,000 rows."""
        n = self.p.max_response_chars
        parts: list[str] = []
        shown: list[int] = []
        used = 0
        for row, line in _filemap_rows(text, self.p.elide_min_row_span):
            parts.append(row)
            used += len(row)
            if used > n:
                break
            if line is not None:
                shown.append(line)
            used += 1  # the newline
        clipped, _ = self._clip("\n".join(parts))
        return clipped, shown

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
        """See `ReadVariant.read`."""
        offset = check_line_arg("offset", offset)
        limit = check_line_arg("limit", limit)
        key = file_key or file_key_for(path)
        text = _TEXTS(data) if type(data) is bytes and len(data) <= FILE_MEMO_MAX_BYTES else swe_decode(data)
        facts = call_facts(self.name, text, data, path, offset, limit, call_id)
        lines = split_lines(text)  # shared with other presets' reads of this text: not changed here
        ranged = offset is not None or limit is not None
        if (
            not ranged
            and self.p.filemap
            and path.endswith(".py")
            and len(text) > self.p.max_response_chars
            and (self.p.filemap_max_file_bytes is None or len(data) <= self.p.filemap_max_file_bytes)
        ):
            clipped, shown = self._filemap_view(text)
            ranges = _ranges_from(shown)
            out = f"{FILEMAP_HEAD}\n{clipped}\n{FILEMAP_TAIL}\n"
            session.record_read(key, call_id, ranges, facts.content_sha256)
            return ReadResult(
                out, False, make_details(facts, ranges=ranges, capped=True, mapped=True)
            )
        init = offset if offset is not None else 1
        if init < 1 or init > len(lines):
            msg = (
                f"Invalid `offset`: {init}. It should be within the range of lines of the file: "
                f"[1, {len(lines)}]"
            )
            return ReadResult(msg, True, make_details(facts, error="bad_range"))
        if limit is not None and limit < 1:
            msg = f"Invalid `limit`: {limit}. It should be at least 1"
            return ReadResult(msg, True, make_details(facts, error="bad_range"))
        final = len(lines) if limit is None else min(init + limit - 1, len(lines))
        content = "\n".join(lines[init - 1 : final])
        clipped, was_clipped = self._clip(content)
        clipped = clipped.expandtabs()
        body = "\n".join(f"{i + init:6}\t{line}" for i, line in enumerate(clipped.split("\n")))
        out = f"Here's the result of running `cat -n` on {path}:\n{body}\n"
        last = min(final, facts.total_lines)
        if was_clipped:
            n = self.p.max_response_chars
            complete = content[:n].count("\n") + (1 if content[n] == "\n" else 0)
            last = min(last, init + complete - 1)
        ranges = ((init, last),) if last >= init else ()
        session.record_read(key, call_id, ranges, facts.content_sha256)
        return ReadResult(out, False, make_details(facts, ranges=ranges, capped=was_clipped))
