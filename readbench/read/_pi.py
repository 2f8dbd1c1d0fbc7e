"""The mechanics of stock pi's read tool as pure functions: selection, the paged rendering,
notices. Every variant that "behaves as stock where it says nothing" builds on these.

Source: docs/specs/pi-tools.md §1.2 (algorithm) and §1.3 (notices), pi 0.84.1
`dist/core/tools/read.js`; its head truncation (`truncate.js`) is readbench.base.truncate. The caps
are parameters so that variant A (characters instead of bytes) and the B family (refuse instead
of cut) share this code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from readbench.base.idmemo import IdentityMemo
from readbench.base.js import format_size, js_slice_end, utf8_len
from readbench.base.truncate import Truncation, truncate_head
from readbench.read.notices import beyond_eof_notice, cap_notice, long_line_notice, more_notice

__all__ = [
    "Selection",
    "beyond_eof_message",
    "check_line_arg",
    "render_paged",
    "select",
    "split_lines",
    "stock_first_line_message",
]

#: Texts of at most this many characters have their line split and selections remembered by
#: identity (`split_lines`, `select`: the latest `MEMO_SLOTS`). The read counterfactual of a
#: replay (`readbench.replay.read_counterfactual`) serves each recorded read under every preset in
#: turn, on the same decoded text object (`readbench.read._types.decoded`): the presets then
#: split the file, select the portion and cut it once per cap instead of once each. 1 M characters
#: is `_types.FILE_MEMO_MAX_BYTES`, above which `decoded` gives a new text object per call anyway.
MEMO_MAX_CHARS = 1_000_000
MEMO_SLOTS = 8


@dataclass(frozen=True)
class Selection:
    """The requested portion of a decoded file (pi-tools.md §1.2 steps 3-5).

    `all_lines` is `text.split("\\n")`; `total_js_lines` (pi's T) is its length, so a
    trailing newline adds a phantom empty line and an empty file has T=1. `start0` is the
    0-based first selected segment, `end0` the exclusive end after JS `slice` rules.
    `user_limited_lines` is pi's `userLimitedLines` (`None` without a `limit`; it can be
    negative for a negative `limit`, as in JS).
    """

    all_lines: list[str]
    start0: int
    end0: int
    selected: str
    user_limited_lines: int | None
    _cuts: dict[tuple, Truncation] = field(default_factory=dict, compare=False, repr=False)

    def truncated(self, max_lines: int | None, max_size: int | None, measure: Callable[[str], int] = utf8_len,
                  size_unit: str = "bytes") -> Truncation:
        """`truncate_head(self.selected, max_lines, max_size, measure=..., size_unit=...)`,
        once per set of caps for this selection (presets of one family differ in their caps
        only: stock, B, B-soft and the dedup pair share one cut)."""
        key = (max_lines, max_size, measure, size_unit)
        hit = self._cuts.get(key)
        if hit is None:
            hit = self._cuts[key] = truncate_head(self.selected, max_lines, max_size, measure=measure,
                                                  size_unit=size_unit)
        return hit

    @property
    def total_js_lines(self) -> int:
        """pi's T: segments of `text.split("\\n")`, phantom line included."""
        return len(self.all_lines)

    @property
    def real_total_lines(self) -> int:
        """File lines without the phantom segment after a final newline (0 for "")."""
        t = len(self.all_lines)
        return t - 1 if self.all_lines[-1] == "" else t

    @property
    def start_display(self) -> int:
        """pi's `startLineDisplay` (1-based S)."""
        return self.start0 + 1

    def returned_span(self) -> tuple[int, int] | None:
        """1-based inclusive line range of the whole selection, phantom excluded."""
        last0 = min(self.end0, self.real_total_lines) - 1
        if last0 < self.start0:
            return None
        return (self.start0 + 1, last0 + 1)


def check_line_arg(name: str, value: object) -> int | None:
    """Validate an `offset`/`limit` argument: `None` or an integer (an integral float such
    as `5.0` from JSON is accepted).

    Raises:
        TypeError: for a bool, a non-integral float or any other type, naming `name`.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer or None, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise TypeError(f"{name} must be an integer or None, got {value!r}")


def beyond_eof_message(offset: int | None, total_js_lines: int) -> str:
    """pi's error for `start0 >= T`: `Offset {offset} is beyond end of file ({T} lines total)`."""
    return beyond_eof_notice(offset, total_js_lines)


def _split(text: str) -> list[str]:
    return text.split("\n")


_LINES: IdentityMemo[list[str]] = IdentityMemo(_split, MEMO_SLOTS)


def split_lines(text: str) -> list[str]:
    """`text.split("\\n")`, the same list for the same text object while it is remembered
    (`MEMO_MAX_CHARS`): callers must not change it."""
    return _LINES(text) if len(text) <= MEMO_MAX_CHARS else text.split("\n")


def select(text: str, offset: int | None, limit: int | None) -> Selection | str:
    """Apply `offset` then `limit` as pi does; return the selection, or the beyond-EOF error
    text when `start0 >= T`.

    `offset` is 1-based; 0, negative and `None` all mean line 1. With a `limit` the portion
    is `all_lines[start0 : min(start0 + limit, T)]` (JS `slice`: a negative end counts from
    the end); without one it runs to EOF. pi-tools.md §1.2 steps 3-5. The same Selection object
    for the same text object and arguments while it is remembered (`MEMO_MAX_CHARS`).
    """
    if len(text) <= MEMO_MAX_CHARS:
        return _SELECTIONS(text, offset, limit)
    return _select(text, offset, limit)


def _select(text: str, offset: int | None, limit: int | None) -> Selection | str:
    all_lines = split_lines(text)
    total = len(all_lines)
    start0 = max(0, offset - 1) if offset else 0
    if start0 >= total:
        return beyond_eof_message(offset, total)
    if limit is not None:
        end_line = min(start0 + limit, total)
        end0 = js_slice_end(end_line, total)
        user_limited: int | None = end_line - start0
    else:
        end0 = total
        user_limited = None
    selected = "\n".join(all_lines[start0:end0]) if end0 > start0 else ""
    return Selection(all_lines, start0, max(end0, start0), selected, user_limited)


_SELECTIONS: IdentityMemo[Selection | str] = IdentityMemo(_select, MEMO_SLOTS)


def render_paged(
    sel: Selection,
    trunc: Truncation,
    path: str,
    *,
    size_limit_label: str,
    first_line_message: Callable[[int, str], str],
    limit_notice: bool = True,
) -> tuple[str, tuple[int, int] | None]:
    """Assemble pi's output text and the 1-based line span it returns.

    Precedence (pi-tools.md §1.3): first-line-too-long, then a cap hit ("Showing lines"),
    then the user-limit notice ("[R more lines in file…]"), else the raw slice.

    Args:
        sel: the selection.
        trunc: `truncate_head` applied to `sel.selected`.
        path: the raw `path` argument (used verbatim by `first_line_message`).
        size_limit_label: the part in parentheses for a size-cap notice, e.g. "50.0KB limit".
        first_line_message: builds the first-line-too-long text from (S, path).
        limit_notice: False suppresses the user-limit notice (the `nocap` preset).

    Returns:
        (text, span) where span is (first, last) of the file lines in the text, or None.
    """
    s = sel.start_display
    t = sel.total_js_lines
    if trunc.first_line_exceeds_limit:
        return first_line_message(s, path), None
    if trunc.truncated:
        e = s + trunc.output_lines - 1
        notice = cap_notice(s, e, t, None if trunc.truncated_by == "lines" else size_limit_label)
        span = (s, e) if trunc.output_lines > 0 else None
        return f"{trunc.content}\n\n{notice}", span
    span = sel.returned_span()
    limited = sel.user_limited_lines
    if limit_notice and limited is not None and sel.start0 + limited < t:
        remaining = t - (sel.start0 + limited)
        next_offset = sel.start0 + limited + 1
        return f"{trunc.content}\n\n{more_notice(remaining, next_offset)}", span
    return trunc.content, span


def stock_first_line_message(
    max_bytes: int, line_bytes: Callable[[int], int]
) -> Callable[[int, str], str]:
    """pi's first-line-too-long text builder for a byte cap `max_bytes`:
    `[Line S is {size}, exceeds {cap} limit. Use bash: sed -n 'Sp' {path} | head -c {cap}]`.
    `line_bytes(S)` gives the UTF-8 size of line S."""

    def build(s: int, path: str) -> str:
        size = format_size(line_bytes(s))
        cap = format_size(max_bytes)
        return long_line_notice(s, size, cap, path, max_bytes)

    return build
