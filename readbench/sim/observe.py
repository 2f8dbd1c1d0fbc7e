"""What the simulated agent can see: tool results in the message list of the current call.

docs/specs/sim-agent.md ("The perception rule"): the sim may act only on text verbatim in a
tool result present in the input of the current call. This module parses that input (never the
full history) into exchanges (a tool call and its visible result) and parses each read result
as a model would: raw text with pi's notices (pi-tools.md §1.3), ``{n:>6}\\t`` numbered lines
(C, claude-code, swe-agent), B's block directive, C's cut notice and map, dedup stubs
(variants.md), grep's ``relpath:LINE: text`` lines (pi-tools.md §3.2), the sim's own bash
``sed -n``/``grep -n`` commands, and Codex's cut of a long shell output (``Total output lines: T``
and a mid-line ``…N chars truncated…`` marker; readbench.harness.codex_output).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool

from readbench.harness.codex_output import CUT_MARKER as _CODEX_CUT
from readbench.read import notices
from readbench.read.registry import blocked

__all__ = [
    "Exchange", "ReadObs", "default_read_limit", "exchanges", "grep_complete", "grep_more_limit",
    "is_placeholder", "norm_path", "parse_bash", "parse_grep", "parse_read",
]

# the read families' notices, parsed with the patterns they are written with (readbench.read.notices)
_CAP, _MORE, _CUT = notices.CAP_LINE, notices.MORE_LINE, notices.CUT_LINE
_LONG_LINE = notices.LONG_LINE
_BEYOND, _STUB = notices.BEYOND_EOF, notices.STUB
_CLIPPED, _ELIDED = notices.CLIPPED, notices.ELIDED  # swe-agent's clip marker cuts mid-line
_MAP_RANGE = re.compile(r"(\d+)\s*[-\u2013]\s*(\d+)")
_GREP_MATCH = re.compile(r"^(.*?):(\d+): (.*)$")
_GREP_CONTEXT = re.compile(r"^(.*?)-(\d+)- (.*)$")
_GREP_TRUNCATED = "... [truncated]"
_GREP_LIMIT = re.compile(r"(\d+) matches limit reached\. Use limit=(\d+)")
_CODEX_TOTAL = re.compile(r"^Total output lines: (\d+)\n\n?")  # Codex's header of a cut output
# Tombstones of a DCP extension readbench does not implement (complexthings/pi-dynamic-context-pruning,
# dcp.md "Other extensions"); the placeholders of the ones it does come from their strategy records.
_OTHER_PLACEHOLDERS = ("[Output removed", "[Error output removed")
_placeholders: tuple[int, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Exchange:
    """One tool call and its result as present in the input.

    Attributes:
        position: index of the ChatMessageTool in the input list.
        call_id: the tool call id.
        function: tool name (``read``, ``grep``, ``bash``, ``edit``, ``write``).
        arguments: the call's arguments as sent by the assistant (empty if that message is gone).
        text: the visible text (content text, or the error message for an error).
        is_error: True when the result carries an error (pi's isError).
    """

    position: int
    call_id: str
    function: str
    arguments: dict[str, Any]
    text: str
    is_error: bool


@dataclass(frozen=True)
class ReadObs:
    """What one read result shows.

    Attributes:
        lines: visible file lines, 1-based line number -> exact line text.
        total_lines: the file's line count if the result states or implies it (pi counting).
        next_offset: the offset a continuation notice asks for (cap, "more lines" or C cut).
        blocked: a "too big, read in ranges" error (B, claude-code's token budget).
        stub_range: the ``(first, last)`` lines a dedup stub says are already in context
            (a stub carries no text), else None.
        pruned: the result was replaced by a DCP placeholder (nothing visible).
        cut: C-style cut notice (a map may follow or was shown earlier).
        map_ranges: ``(label, start, end)`` entries of a structural map in the result.
        eof: the result reached the end of the file.
    """

    lines: dict[int, str] = field(default_factory=dict)
    total_lines: int | None = None
    next_offset: int | None = None
    blocked: bool = False
    stub_range: tuple[int, int] | None = None
    pruned: bool = False
    cut: bool = False
    map_ranges: tuple[tuple[str, int, int], ...] = ()
    eof: bool = False


def norm_path(path: str) -> str:
    """Normalise a workspace-relative path for comparison (``./a//b`` -> ``a/b``)."""
    return os.path.normpath(path.strip()) if path.strip() else "."


def default_read_limit(description: str | None) -> int | None:
    """The default line limit a read tool's description states ("reads up to N lines"), else None."""
    match = re.search(r"reads up to (\d+) lines", description or "")
    return int(match.group(1)) if match else None


def is_placeholder(text: str) -> bool:
    """True if ``text`` starts as a DCP placeholder does rather than tool output: the placeholder of
    a registered DCP strategy (``readbench.dcp._strategy``: pi-dcp's ``[DCP: ...``, the sister's
    ``[pruned by ...``, obs-mask's ``Old environment output: (``) or another extension's tombstone."""
    global _placeholders
    from readbench.dcp._strategy import STRATEGIES

    if _placeholders is None or _placeholders[0] != STRATEGIES.version:
        _placeholders = (STRATEGIES.version, tuple(dict.fromkeys(
            [s.placeholder for s in STRATEGIES if s.placeholder] + list(_OTHER_PLACEHOLDERS))))
    return text.startswith(_placeholders[1])


def exchanges(messages: list[ChatMessage]) -> list[Exchange]:
    """All tool results in ``messages`` joined with their calls, in input order."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out: list[Exchange] = []
    for position, message in enumerate(messages):
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                calls[call.id] = (call.function, dict(call.arguments or {}))
        elif isinstance(message, ChatMessageTool):
            call_id = message.tool_call_id or ""
            function, arguments = calls.get(call_id, (message.function or "", {}))
            is_error = message.error is not None
            text = message.error.message if is_error and message.error else message.text
            if is_error and message.text and message.text not in text:
                text = f"{message.text}\n{text}"
            out.append(Exchange(position, call_id, function or "", arguments, text, is_error))
    return out


def _split_notice(text: str) -> tuple[list[str], re.Match[str] | None, str, list[str]]:
    """Split a read result into (content lines, notice match, notice kind, lines after the notice)."""
    lines = text.split("\n")
    for i in range(len(lines) - 1, 0, -1):
        if lines[i - 1] != "" or not lines[i].startswith("["):
            continue
        for kind, pattern in (("cap", _CAP), ("more", _MORE), ("cut", _CUT)):
            match = pattern.match(lines[i])
            if match:
                return lines[: i - 1], match, kind, lines[i + 1:]
    return lines, None, "", []


def _number_prefix(line: str) -> tuple[int, str] | None:
    """``(n, text)`` if ``line`` is ``f"{n:>6}\\t{text}"`` (cat -n) or ``f"{n:6} {text}"`` (swe-agent's map)."""
    head = line[:6]
    if len(line) < 7 or line[6] not in "\t " or not head.strip().isdigit() or head != f"{int(head):>6}":
        return None
    return int(head), line[7:]


def _numbered(content: list[str]) -> tuple[dict[int, str], bool] | None:
    """``(line map, elided)`` of a numbered listing, or None if ``content`` is not one.

    A listing is numbered when at least 80% of its non-blank lines carry a number prefix
    (headers and notes such as swe-agent's ``<NOTE>`` lines are skipped). Elision markers
    (``... eliding lines a-b ...``) are not file text.
    """
    nonblank = [line for line in content if line.strip()]
    parsed = [_number_prefix(line) for line in nonblank]
    if not nonblank or sum(p is not None for p in parsed) < 0.8 * len(nonblank):
        return None
    lines: dict[int, str] = {}
    elided = False
    for item in parsed:
        if item is None:
            continue
        if _ELIDED.match(item[1]):
            elided = True
            continue
        lines[item[0]] = item[1]
    return lines, elided


def parse_read(text: str, is_error: bool, arguments: dict[str, Any], default_limit: int | None = None) -> ReadObs:
    """Parse one read result as the model sees it (memoised: see `_parse_read_memo`).

    The simulated agent re-perceives every read of its target file in the input of every call
    (readbench.sim.perception.file_view), so a sample of n calls parsed the same results O(n^2)
    times (~7 % of a simulated sample's process CPU, issue 26); a result is a pure function of
    these arguments, so each distinct one is parsed once. The returned `ReadObs` (its ``lines``
    dict too) may be shared between calls: callers must not mutate it.

    Args:
        text: the visible text of the result.
        is_error: whether the result is an error.
        arguments: the read call's ``{path, offset?, limit?}`` (offset 1-based; may be empty
            when the call was pruned, then a raw result is placed by its notice only).
        default_limit: the line limit the read tool's description states for a read without
            ``limit`` (claude-code: "reads up to 2000 lines"); a numbered result that fills the
            limit without a notice is taken to continue at the next line (lines).
    """
    try:  # the argument values' types are part of the key: 1, 1.0 and True hash alike
        key = tuple(sorted((k, type(v).__name__, v) for k, v in arguments.items()))
        hash(key)
    except TypeError:  # an unhashable argument value (a model's malformed call): parse it uncached
        return _parse_read(text, is_error, arguments, default_limit)
    return _parse_read_memo(text, is_error, key, default_limit)


@functools.lru_cache(maxsize=1024)
def _parse_read_memo(text: str, is_error: bool, key: tuple[tuple[str, str, Any], ...],
                     default_limit: int | None) -> ReadObs:
    """`_parse_read` of one distinct (result text, error flag, arguments, default limit); at most
    1,024 results kept (least recently used dropped), shared by the samples of a process."""
    return _parse_read(text, is_error, {k: v for k, _t, v in key}, default_limit)


def _parse_read(text: str, is_error: bool, arguments: dict[str, Any], default_limit: int | None) -> ReadObs:
    """`parse_read` itself, uncached."""
    first = text.split("\n", 1)[0]
    block = blocked(first)  # any read family's refusal (B's states the line count)
    if block:
        total = block.groupdict().get("total")
        return ReadObs(total_lines=int(total) if total is not None else None, blocked=True)
    stub = _STUB.match(first)
    if stub:
        return ReadObs(stub_range=(int(stub.group(1)), int(stub.group(2))))
    if is_placeholder(first):
        return ReadObs(pruned=True)
    beyond = _BEYOND.search(text)
    if is_error:
        return ReadObs(total_lines=int(beyond.group(2)) if beyond else None)
    long_line = _LONG_LINE.match(first)
    if long_line:
        return ReadObs(next_offset=int(long_line.group(1)) + 1)
    clipped = _CLIPPED in text
    if clipped:  # keep whole lines only: the clip cuts mid-line
        text = text[: text.index(_CLIPPED)].rsplit("\n", 1)[0]
    printed = None  # Codex cut the output's middle and said how many lines the command printed
    if total_match := _CODEX_TOTAL.match(text):
        printed, text = int(total_match.group(1)), text[total_match.end():]
    if cut_match := _CODEX_CUT.search(text):  # keep whole lines only: the cut is mid-line on both sides
        text = text[: cut_match.start()].rpartition("\n")[0] + "\n" + text[cut_match.end():].partition("\n")[2]
    content, notice, kind, after = _split_notice(text)
    offset = arguments.get("offset")
    limit = arguments.get("limit")
    start = max(1, int(offset)) if isinstance(offset, (int, float)) else 1
    total = next_offset = None
    end: int | None = None
    map_ranges: tuple[tuple[str, int, int], ...] = ()
    if notice is not None and kind in ("cap", "cut"):
        start, end, total = int(notice.group(1)), int(notice.group(2)), int(notice.group(3))
        next_offset = int(notice.group(4)) if kind == "cap" else (end + 1 if end < total else None)
    elif notice is not None:  # "more lines"
        next_offset = int(notice.group(2))
        end = next_offset - 1
        total = end + int(notice.group(1))
    if kind == "cut":
        ranges = []
        for line in after:
            match = _MAP_RANGE.search(line)
            if match:
                ranges.append((line.strip(), int(match.group(1)), int(match.group(2))))
        map_ranges = tuple(ranges)
    numbered = _numbered(content)
    elided = False
    if numbered is not None:
        lines, elided = numbered
    elif notice is None and not arguments:
        lines = {}  # a raw result whose call is gone and that states no range: unplaceable
    else:
        count = len(content) if end is None else max(0, end - start + 1)
        lines = {start + i: content[i] for i in range(min(count, len(content)))}
    eof = False
    if printed is not None and notice is None and numbered is not None:  # Codex's cut: the count states the end
        cap = int(limit) if isinstance(limit, (int, float)) else None
        if cap is None or printed < cap:
            eof, total = True, start + printed - 1
        else:
            next_offset = start + printed
    elif notice is None and lines and not clipped and not elided:
        last = max(lines)
        cap = int(limit) if isinstance(limit, (int, float)) else default_limit
        if numbered is None or cap is None or len(lines) < cap:
            eof, total = True, last
        else:
            next_offset = last + 1  # a full page with no notice: there may be more
    return ReadObs(lines=lines, total_lines=total, next_offset=next_offset, cut=(kind == "cut"),
                   map_ranges=map_ranges, eof=eof)


def grep_more_limit(text: str) -> int | None:
    """The larger ``limit`` a grep result's "matches limit reached" notice suggests, else None."""
    match = _GREP_LIMIT.search(text)
    return int(match.group(2)) if match else None


def grep_complete(text: str) -> bool:
    """True if a grep result lists every match (no match-count or byte limit was reached)."""
    return _GREP_LIMIT.search(text) is None and "KB limit reached" not in text


def parse_grep(text: str, search_path: str | None) -> dict[str, tuple[dict[int, str], list[int]]]:
    """Parse pi grep output into ``{path: (visible lines, match line numbers)}``.

    A single-file search prints the file's basename; a directory search prints paths relative
    to it (pi-tools.md §3.2). Lines cut to 500 chars are counted as hits but not as visible text.
    """
    base = norm_path(search_path or ".")
    out: dict[str, tuple[dict[int, str], list[int]]] = {}
    for line in text.split("\n"):
        match = _GREP_MATCH.match(line)
        is_hit = match is not None
        if match is None:
            match = _GREP_CONTEXT.match(line)
        if match is None:
            continue
        rel, number, body = match.group(1), int(match.group(2)), match.group(3)
        if rel == os.path.basename(base):
            path = base
        else:
            path = norm_path(os.path.join(base, rel)) if base != "." else norm_path(rel)
        visible, hits = out.setdefault(path, ({}, []))
        if not body.endswith(_GREP_TRUNCATED):
            visible[number] = body
        if is_hit:
            hits.append(number)
    return out


def parse_bash(command: str, text: str) -> tuple[str, dict[int, str], list[int], str | None] | None:
    """Parse the output of the sim's own ``sed -n 'S,Ep' PATH`` or ``grep -n -F -e KEY -- PATH``.

    Returns ``(path, visible lines, grep hit lines, grep key or None)`` or None for any other command.
    """
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    body = text[:-1] if text.endswith("\n") else text
    if len(argv) == 4 and argv[:2] == ["sed", "-n"]:
        match = re.fullmatch(r"(\d+),(\d+)p", argv[2])
        if match is None or body == "(no output)":
            return None
        start = int(match.group(1))
        chunk = body.split("\n")[: int(match.group(2)) - start + 1]
        return norm_path(argv[3]), {start + i: s for i, s in enumerate(chunk)}, [], None
    if len(argv) == 7 and argv[:4] == ["grep", "-n", "-F", "-e"] and argv[5] == "--":
        visible: dict[int, str] = {}
        for line in body.split("\n"):
            match = re.match(r"^(\d+):(.*)$", line)
            if match:
                visible[int(match.group(1))] = match.group(2)
        return norm_path(argv[6]), visible, sorted(visible), argv[4]
    return None
