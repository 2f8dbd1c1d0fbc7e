"""Every notice a read family writes, each with the parser that reads it back (issue 23).

A notice is the text a read variant adds to, or returns instead of, file lines: pi's cap and
continuation notices (pi-tools.md §1.3), B's refusal, C's cut notice, the dedup stub, Claude
Code's token error and numbered lines, SWE-agent's clip and elision marks (variants.md). The
format function the family calls and the pattern every reader uses (recorded sessions:
`readbench.sessions.reads`/`file_ops`; the simulated agent's perception: `readbench.sim.observe`;
`readbench sim fit`: `readbench.sim.evidence`) sit side by side here, so the two cannot drift;
`tests/read/test_read_notices.py` parses every format back. Each family's record
(`readbench.read.registry.FAMILIES`) carries the `Notice` records it writes; a reader that wants
"any family's refusal" iterates them by `kind` (`readbench.read.registry.blocked`).

Patterns use named groups: `first`, `last`, `total` (lines), `next` (the offset to continue
at), `remaining` (lines after the returned ones), `line`, `call`, `tokens`.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "BEYOND_EOF", "BLOCK", "CAP_LINE", "CLIPPED", "CUT_LINE", "ELIDED", "LEGACY_MORE", "LEGACY_MORE_AT_END",
    "LONG_LINE", "MORE", "MORE_LINE", "NOTICES", "NUMBER_STYLES", "NUMBERED_LINE", "NOTICE_AT_END", "Notice",
    "NumberedFrame", "number_prefix", "number_rows", "numbered_frame", "SHOWING", "SHOWING_KB",
    "STUB", "TOKEN_BLOCK", "beyond_eof_notice", "block_notice", "cap_notice", "char_line_notice",
    "cut_notice", "long_line_notice", "more_notice", "stub_notice", "token_block_notice",
]


@dataclass(frozen=True)
class Notice:
    """One notice: its name, what it tells a reader (`kind`), its parser and its format.

    Attributes:
        name: unique name.
        kind: `range` (the lines returned and the file's length), `more` (lines left after a
            limit), `long_line` (the first line alone is over the cap), `block` (a refusal with
            no file text), `beyond_eof`, `stub` (already in context), `cut` (C's cut), `clip`,
            `elided`, `numbered` (a `cat -n` line).
        pattern: the parser (named groups, module docstring).
        format: the function the family writes it with; None for a notice readbench only reads
            (an older pi's).
        origin: the spec it follows.
    """

    name: str
    kind: str
    pattern: re.Pattern[str]
    format: Callable[..., str] | None
    origin: str


# -- pi's notices (stock, A, B's served reads, C's "more" notice; pi-tools.md §1.3) ------------

def cap_notice(first: int, last: int, total: int, size_label: str | None = None) -> str:
    """pi's cap notice: `[Showing lines S-E of T. Use offset=E+1 to continue.]`, with
    ` (<size_label>)` after T when a size cap cut the portion (`50.0KB limit`)."""
    label = f" ({size_label})" if size_label else ""
    return f"[Showing lines {first}-{last} of {total}{label}. Use offset={last + 1} to continue.]"


CAP_LINE = re.compile(r"^\[Showing lines (?P<first>\d+)-(?P<last>\d+) of (?P<total>\d+)(?: \([^)]*\))?\. "
                      r"Use offset=(?P<next>\d+) to continue\.\]$")
"""pi's cap notice as a whole line."""
SHOWING = re.compile(r"\[Showing lines (?P<first>\d+)-(?P<last>\d+) of (?P<total>\d+)")
"""The start pi's cap notice and C's cut notice share (what a reader of any pi version keys on)."""
SHOWING_KB = re.compile(r"\[Showing lines \d+-\d+ of \d+ \((?P<kb>[\d.]+)KB limit\)")
"""A cap notice of a portion cut by the byte cap: the cap in KB."""


def more_notice(remaining: int, next_offset: int) -> str:
    """pi's user-limit notice: `[R more lines in file. Use offset=N to continue.]`."""
    return f"[{remaining} more lines in file. Use offset={next_offset} to continue.]"


MORE_LINE = re.compile(r"^\[(?P<remaining>\d+) more lines in file\. Use offset=(?P<next>\d+) to continue\.\]$")
"""pi's user-limit notice as a whole line."""
MORE = re.compile(r"\[(?P<remaining>\d+) more lines in file\. Use offset=(?P<next>\d+)")
"""The start of pi's user-limit notice."""
LEGACY_MORE = re.compile(r"\.\.\. \((?P<remaining>\d+) more lines not shown\. Use offset=(?P<next>\d+)")
"""Older pi versions' user-limit notice (`... (R more lines not shown. Use offset=N ...)`)."""
NOTICE_AT_END = re.compile(r"\n\n\[(?:Showing lines \d+-\d+ of \d+|\d+ more lines in file\. Use offset=)[^\n]*\]$")
"""A cap, cut or user-limit notice closing a result (stripped to get the file lines)."""
LEGACY_MORE_AT_END = re.compile(r"\n\n\.\.\. \(\d+ more lines not shown\. Use offset=\d+[^\n]*\)$")
"""The older notice closing a result."""


def long_line_notice(line: int, size: str, cap: str, path: str, max_bytes: int) -> str:
    """pi's first-line-too-long text: `[Line S is {size}, exceeds {cap} limit. Use bash: sed -n
    'Sp' {path} | head -c {max_bytes}]` (sizes as `format_size` writes them)."""
    return f"[Line {line} is {size}, exceeds {cap} limit. Use bash: sed -n '{line}p' {path} | head -c {max_bytes}]"


LONG_LINE = re.compile(r"^\[Line (?P<line>\d+) is [\d.]+[KMG]?B, exceeds")
"""pi's first-line-too-long text (a byte cap)."""


def char_line_notice(line: int, chars: int, cap: int, path: str) -> str:
    """A's first-line-too-long text under its character cap (variants.md "A")."""
    return f"[Line {line} is {chars} chars, exceeds {cap} chars limit. Use bash: sed -n '{line}p' {path} | head -c {cap}]"


CHAR_LINE = re.compile(r"^\[Line (?P<line>\d+) is \d+ chars, exceeds \d+ chars limit\.")
"""A's first-line-too-long text."""


def beyond_eof_notice(offset: int | None, total: int) -> str:
    """pi's error for an offset past the end: `Offset {offset} is beyond end of file ({T} lines total)`."""
    return f"Offset {offset} is beyond end of file ({total} lines total)"


BEYOND_EOF = re.compile(r"Offset (?P<offset>\d+) is beyond end of file \((?P<total>\d+) lines total\)")


# -- B's refusal, the dedup stub, C's cut (variants.md "B", "B+dedup", "C") ---------------------

def block_notice(total: int, size: str, cap_label: str, offset: int, limit: int) -> str:
    """B's refusal of a read over its cap: the file's line count and size and a range to read."""
    return (f"File has {total} lines ({size}), over the {cap_label} read limit. Read it in ranges, e.g. "
            f"offset={offset} limit={limit}, or grep for what you need first.")


BLOCK = re.compile(r"^File has (?P<total>\d+) lines \([^)]*\), over the .*read limit")


def stub_notice(first: int, last: int, call_id: str) -> str:
    """The dedup stub: `File unchanged since your read of lines {first}-{last} (call {call_id});
    that content is already in your context.`"""
    return (f"File unchanged since your read of lines {first}-{last} (call {call_id}); "
            "that content is already in your context.")


STUB = re.compile(r"^File unchanged since your read of lines (?P<first>\d+)-(?P<last>\d+) \(call (?P<call>[^)]*)\)")


def cut_notice(first: int, last: int, total: int, tail: str, size_label: str | None = None) -> str:
    """C's cut notice: `[Showing lines S-E of T. <tail>]` (` (<size_label>)` after T when the byte
    cap cut), the tail saying where the map is."""
    label = f" ({size_label})" if size_label else ""
    return f"[Showing lines {first}-{last} of {total}{label}. {tail}]"


CUT_LINE = re.compile(r"^\[Showing lines (?P<first>\d+)-(?P<last>\d+) of (?P<total>\d+)\.(?P<tail>.*)\]$")
"""C's cut notice as a whole line (without a size label)."""


# -- Claude Code's Read (variants.md "claude-code", anchors.md §7) -------------------------------

def token_block_notice(tokens: int, max_tokens: int) -> str:
    """Claude Code's hard error for a result over its token budget."""
    return (f"File content ({tokens} tokens) exceeds maximum allowed tokens ({max_tokens}). "
            "Please use offset and limit parameters to read specific portions of the file, "
            "or use the GrepTool to search for specific content.")


TOKEN_BLOCK = re.compile(r"^File content \((?P<tokens>\d+) tokens\) exceeds maximum allowed tokens")
NUMBERED_LINE = re.compile(r"^ *(?P<line>\d+)(?:→|\t)(?P<text>.*)$")
"""One `cat -n` line in any of `NUMBER_STYLES` (real Claude Code writes `{n:>6}→text` or
`{n}<TAB>text`, the preset by default `{n:>6}<TAB>text`)."""

NUMBER_STYLES: dict[str, str] = {
    "padded-tab": "{n:>6}\t",
    "padded-arrow": "{n:>6}→",
    "tab": "{n}\t",
    "arrow": "{n}→",
}
"""Line-number prefixes of a `cat -n` listing, by name. `padded-tab` is `cat -n`'s own and the
claude-code preset's default (variants.md "claude-code"); real Claude Code transcripts show
`padded-arrow` (2.0.x, some 2.1.x; sessions.md §2's `     1→...`) and `tab` (2.1.1xx-2.1.9x),
varying even within one version, so a replay takes the style each recorded read shows
(`numbered_frame`)."""


def number_prefix(n: int, style: str) -> str:
    """The prefix of line `n` in `style` (a `NUMBER_STYLES` name), e.g. `     7→` for
    `padded-arrow`. Raises KeyError for an unknown style."""
    return NUMBER_STYLES[style].format(n=n)


_ROWS = {name: prefix.replace("{n", "{0") + "{1}" for name, prefix in NUMBER_STYLES.items()}
_PREFIX_FORMATS = {name: prefix.replace("{n", "{0").format for name, prefix in NUMBER_STYLES.items()}

#: Line numbers up to this one have their prefixes kept per style (`_prefixes`): at most about
#: 6 MB per style, held only once a listing reaches that far.
PREFIX_TABLE_MAX = 100_000
_PREFIX_TABLE: dict[str, list[str]] = {}


def _prefixes(style: str, first: int, count: int) -> list[str] | None:
    """`[number_prefix(n, style) for n in range(first, first + count)]`, sliced from a table of
    the prefixes made once per style and line number (a replay numbers the same line numbers
    under several presets and reads: formatting each was most of `number_rows`); None beyond
    `PREFIX_TABLE_MAX` or below 1. Raises KeyError for an unknown style."""
    fmt = _PREFIX_FORMATS[style]
    end = first + count
    if first < 1 or end - 1 > PREFIX_TABLE_MAX:
        return None
    table = _PREFIX_TABLE.setdefault(style, [""])  # index 0 unused: table[n] is line n's prefix
    if len(table) < end:
        table.extend(map(fmt, range(len(table), end)))
    return table[first:end]


def number_rows(lines: Iterable[str], first: int, style: str) -> str:
    """`number_prefix(n, style) + line` for each line, numbered from `first`, joined by
    newlines, at C speed: the prefixes come from `_prefixes`' table (formatted once per style
    and number), one format call per line past it (a 2,000-line listing under every read preset
    of a replay). Raises KeyError for an unknown style."""
    rows = _ROWS[style]
    lines = lines if isinstance(lines, list) else list(lines)
    prefixes = _prefixes(style, first, len(lines))
    if prefixes is None:
        return "\n".join(map(rows.format, itertools.count(first), lines))
    return "\n".join(map(operator.add, prefixes, lines))


@dataclass(frozen=True)
class NumberedFrame:
    """A numbered read result split into what the harness put around the listing and the listing.

    Attributes:
        prefix: text before the first numbered line, its newline included ("" when none), e.g.
            Claude Code's `<system-reminder>This memory is 4 days old...</system-reminder>\n`.
        body: the numbered lines (consecutive numbers), joined by `\n`.
        suffix: text after the last numbered line, from the newline that ends it ("" when
            none), e.g. Claude Code 2.0's `\n\n<system-reminder>\nWhenever you read a file...`.
        style: the `NUMBER_STYLES` name of the body's prefixes.
        first, last: the first and last line numbers of the body.
    """

    prefix: str
    body: str
    suffix: str
    style: str
    first: int
    last: int

    def wrap(self, text: str) -> str:
        """`text` (another read result of the same call) inside this frame's prefix and suffix."""
        return f"{self.prefix}{text}{self.suffix}"


_NUMBER_ROW = re.compile(r"^(?P<pad> *)(?P<line>\d+)(?P<sep>→|\t)")


def _canonical_run(rows: list[str], start: int) -> tuple[str, int, int] | None:
    """(style, first number, index of the body's last row) of the numbered body starting at
    `rows[start]` when the body is written exactly as `number_rows` writes one style (the
    listings Claude Code and the presets write), found by comparing each row's start with the
    expected prefix at C speed; None when this cannot tell (`numbered_frame` then reads the rows
    one by one).

    The same answer as the row-by-row reading: a row that starts with the expected prefix
    `number_prefix(n, style)` matches `_NUMBER_ROW` with that number and separator (the prefix is
    spaces, ASCII digits and the separator, which the pattern's greedy groups take whole), and
    its padding agrees with `style` (padded: 6 columns below 100,000, none above; unpadded: no
    spaces). The row-by-row reading stops at the first row that does not match or whose number
    is not the next one; the first row that does not start with the expected prefix is such a
    row unless it matches with the next number in another way (another style, leading zeros,
    non-ASCII digits): then None. The first row decides the style, so it must be below 100,000
    and start with its own style's prefix."""
    m = _NUMBER_ROW.match(rows[start])
    assert m is not None
    first = int(m.group("line"))
    if first >= 100_000:
        return None
    style = ("padded-" if m.group("pad") else "") + ("arrow" if m.group("sep") == "→" else "tab")
    fmt = NUMBER_STYLES[style].replace("{n", "{0").format
    if not rows[start].startswith(fmt(first)):
        return None
    expected = _prefixes(style, first, len(rows) - start)
    ok = list(map(str.startswith, itertools.islice(rows, start, None),
                  map(fmt, itertools.count(first)) if expected is None else expected))
    k = ok.index(False) if False in ok else len(ok)  # rows start..start+k-1 carry the prefixes
    if start + k < len(rows):
        stop = _NUMBER_ROW.match(rows[start + k])
        if stop is not None and int(stop.group("line")) == first + k:
            return None
    return style, first, start + k - 1


def numbered_frame(text: str) -> NumberedFrame | None:
    """Split a `cat -n` read result (Claude Code's `Read`) into prefix, numbered body and suffix.

    The body is the first run of rows carrying consecutive line numbers; rows before it are the
    prefix, rows after it the suffix. The style comes from the body's rows: padded when a number
    under 100,000 has leading spaces (to 6 columns), unpadded when one has none; arrow or tab
    from the separator. Returns None when no row is numbered, or the rows mix styles (then no
    style can reproduce the text).
    """
    rows = text.split("\n")
    start = next((i for i, row in enumerate(rows) if _NUMBER_ROW.match(row)), None)
    if start is None:
        return None
    fast = _canonical_run(rows, start)
    if fast is not None:
        style, first, end = fast
    else:
        end, expected, seps, padded = start, None, set(), set()
        for i in range(start, len(rows)):
            m = _NUMBER_ROW.match(rows[i])
            if m is None or (expected is not None and int(m.group("line")) != expected):
                break
            n = int(m.group("line"))
            seps.add(m.group("sep"))
            width = len(m.group("pad")) + len(m.group("line"))
            if n < 100_000:
                padded.add(bool(m.group("pad")) and width == 6)
                if m.group("pad") and width != 6:
                    return None
            end, expected = i, n + 1
        if len(seps) != 1 or len(padded) > 1:
            return None
        style = ("padded-" if padded == {True} else "") + ("arrow" if seps == {"→"} else "tab")
        first = int(_NUMBER_ROW.match(rows[start]).group("line"))  # type: ignore[union-attr]
    prefix = "".join(row + "\n" for row in rows[:start])
    suffix = "".join("\n" + row for row in rows[end + 1:])
    # the body's numbers run on from `first` one per row
    return NumberedFrame(prefix, "\n".join(rows[start:end + 1]), suffix, style, first, first + end - start)

# -- SWE-agent's view (variants.md "swe-agent") --------------------------------------------------

CLIPPED = "<response clipped>"
"""SWE-agent's clip mark (it cuts mid-line)."""
ELIDED = re.compile(r"^\.\.\. eliding lines (?P<first>\d+)-(?P<last>\d+) \.\.\.$")


def _kind(name: str, kind: str, pattern: re.Pattern[str] | str, fmt: Callable[..., str] | None, origin: str) -> Notice:
    return Notice(name, kind, pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern)), fmt,
                  origin)


NOTICES: dict[str, Notice] = {n.name: n for n in (
    _kind("cap", "range", CAP_LINE, cap_notice, "pi-tools.md §1.3"),
    _kind("more", "more", MORE_LINE, more_notice, "pi-tools.md §1.3"),
    _kind("legacy_more", "more", LEGACY_MORE, None, "pi before 0.3x (sessions.md §1)"),
    _kind("long_line", "long_line", LONG_LINE, long_line_notice, "pi-tools.md §1.3"),
    _kind("char_line", "long_line", CHAR_LINE, char_line_notice, "variants.md \"A\""),
    _kind("beyond_eof", "beyond_eof", BEYOND_EOF, beyond_eof_notice, "pi-tools.md §1.4"),
    _kind("block", "block", BLOCK, block_notice, "variants.md \"B\""),
    _kind("stub", "stub", STUB, stub_notice, "variants.md \"B+dedup\""),
    _kind("cut", "cut", CUT_LINE, cut_notice, "variants.md \"C\""),
    _kind("token_block", "block", TOKEN_BLOCK, token_block_notice, "variants.md \"claude-code\""),
    _kind("numbered", "numbered", NUMBERED_LINE, None, "variants.md \"claude-code\"; real Claude Code transcripts"),
    _kind("clipped", "clip", CLIPPED, None, "variants.md \"swe-agent\""),
    _kind("elided", "elided", ELIDED, None, "variants.md \"swe-agent\""),
)}
"""name -> Notice."""

