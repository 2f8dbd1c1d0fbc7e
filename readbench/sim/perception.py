"""The perception rule (docs/specs/sim-agent.md): what of a file is visible in the CURRENT input.

A result counts only if it is present in the message list of the current call AND shows the
file's current state: after a successful edit/write of a file, results of that file from
before it no longer count (the sim must read again). Mutations are known from the edit/write
exchanges still in the input and, when DCP dropped those, from the sim's own record of the
edits it made (``mutation_orders``: call numbers, compared through ``order_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from readbench.sim.observe import (
    Exchange,
    ReadObs,
    grep_complete,
    is_placeholder,
    norm_path,
    parse_bash,
    parse_grep,
    parse_read,
)
from readbench.sim.oracle import Goal

__all__ = [
    "FileView", "block_visible", "file_view", "find_snippet", "first_missing_line", "goal_perceived",
    "whole_file_visible",
]


@dataclass(frozen=True)
class FileView:
    """The visible current state of one file.

    Attributes:
        path: normalised path.
        lines: line number (1-based) -> exact text, from reads, greps and the sim's sed/grep bash.
        total_lines: the largest line count any current result stated or implied (None if unknown).
        stated_totals: every line count current results stated or implied (tools may disagree:
            pi counts the empty segment after a trailing newline, B's directive does not).
        texts: raw visible texts of current results (for verbatim matching of unplaced text,
            e.g. a test traceback printed by bash).
        grep_hits: line numbers of search matches (in input order, deduplicated).
        map_ranges: ``(label, start, end)`` structural-map entries visible for the file.
        searches: pattern -> match count of complete (unlimited) search listings of the file.
        latest_read: the parsed result of the most recent read of the file (current or not), or None.
        latest_read_args: its call arguments.
        latest_read_call_id: its tool call id.
    """

    path: str
    lines: dict[int, str]
    total_lines: int | None
    stated_totals: frozenset[int]
    texts: tuple[str, ...]
    grep_hits: tuple[int, ...]
    map_ranges: tuple[tuple[str, int, int], ...]
    searches: dict[str, int]
    latest_read: ReadObs | None
    latest_read_args: dict
    latest_read_call_id: str | None


def file_view(
    exs: Iterable[Exchange],
    path: str,
    *,
    mutation_orders: Iterable[int] = (),
    order_of: Callable[[str], int | None] = lambda _id: None,
    default_limit: int | None = None,
) -> FileView:
    """Build the :class:`FileView` of ``path`` from the exchanges of the current input.

    Args:
        exs: exchanges of the current input (readbench.sim.observe.exchanges).
        path: workspace-relative file path.
        mutation_orders: call numbers of the sim's own successful edits of ``path``.
        order_of: call number of a tool call id issued by the sim (None for foreign ids).
        default_limit: the read tool's stated default line limit (readbench.sim.observe.parse_read).
    """
    target = norm_path(path)
    exs = list(exs)
    last_mutation = max((e.position for e in exs if e.function in ("edit", "write") and not e.is_error
                         and norm_path(str(e.arguments.get("path", ""))) == target), default=-1)
    newest_order = max(mutation_orders, default=-1)

    def current(e: Exchange) -> bool:
        order = order_of(e.call_id)
        return e.position > last_mutation and (order is None or order > newest_order)

    lines: dict[int, str] = {}
    totals: list[int] = []
    texts: list[str] = []
    hits: list[int] = []
    maps: list[tuple[str, int, int]] = []
    searches: dict[str, int] = {}
    latest: ReadObs | None = None
    latest_args: dict = {}
    latest_id: str | None = None
    for e in exs:
        if e.function == "read" and norm_path(str(e.arguments.get("path", ""))) == target:
            obs = parse_read(e.text, e.is_error, e.arguments, default_limit)
            latest, latest_args, latest_id = obs, e.arguments, e.call_id
            if not current(e):
                continue
            lines.update(obs.lines)
            maps.extend(obs.map_ranges)
            if obs.total_lines is not None:
                totals.append(obs.total_lines)
            if obs.lines:
                texts.append(e.text)
        elif e.function == "grep" and current(e) and not is_placeholder(e.text):
            found = parse_grep(e.text, e.arguments.get("path"))
            searched_file = norm_path(str(e.arguments.get("path", "."))) == target
            if searched_file and not e.is_error and grep_complete(e.text):
                searches[str(e.arguments.get("pattern", ""))] = len(found.get(target, ({}, []))[1])
            if target in found:
                visible, matched = found[target]
                lines.update(visible)
                hits.extend(h for h in matched if h not in hits)
                texts.append(e.text)
        elif e.function == "bash" and current(e) and not is_placeholder(e.text):
            parsed = parse_bash(str(e.arguments.get("command", "")), e.text)
            if parsed is not None and parsed[0] == target:
                lines.update(parsed[1])
                hits.extend(h for h in parsed[2] if h not in hits)
                if parsed[3] is not None:  # grep -n exits 1 on no match: a complete, empty listing
                    searches[parsed[3]] = len(parsed[2])
            texts.append(e.text)
    return FileView(target, lines, max(totals, default=None), frozenset(totals), tuple(texts), tuple(hits),
                    tuple(maps), searches, latest, latest_args, latest_id)


def _runs(lines: dict[int, str]) -> list[tuple[int, str]]:
    """Maximal runs of consecutive visible lines as ``(first line, joined text)``."""
    runs: list[tuple[int, str]] = []
    start = prev = None
    chunk: list[str] = []
    for n in sorted(lines):
        if prev is not None and n != prev + 1:
            assert start is not None  # set with prev
            runs.append((start, "\n".join(chunk)))
            chunk = []
            start = None
        if start is None:
            start = n
        chunk.append(lines[n])
        prev = n
    if chunk:
        assert start is not None  # set with the first chunk line
        runs.append((start, "\n".join(chunk)))
    return runs


def find_snippet(view: FileView, snippet: str) -> int | None:
    """Where ``snippet`` is verbatim visible: its first line number, 0 if it is visible only in
    unplaced text (e.g. bash output), None if it is not visible at all."""
    for first, text in _runs(view.lines):
        index = text.find(snippet)
        if index >= 0:
            return first + text.count("\n", 0, index)
    if any(snippet in t for t in view.texts):
        return 0
    return None


def whole_file_visible(view: FileView) -> bool:
    """True if the file's line count is known and every line 1..total is visible.

    When one result states T lines and another T-1 (B's directive counts newline-terminated
    lines, pi also counts the empty segment after the final newline), seeing 1..T-1 suffices.
    """
    total = view.total_lines
    if total is None:
        return False
    if (total - 1) in view.stated_totals:
        total -= 1
    return all(n in view.lines for n in range(1, total + 1))


def first_missing_line(view: FileView, start: int = 1) -> int:
    """The first line number >= ``start`` that is not visible."""
    n = start
    while n in view.lines:
        n += 1
    return n


def block_visible(view: FileView, first: int, max_lines: int = 5000) -> bool:
    """True if the block starting at line ``first`` (a ``def``/``class``) is visible to its end.

    The block ends before the first later non-blank line indented no deeper than ``first``
    (closing brackets excepted), which must itself be visible, or at the end of the file. A
    visible structural-map entry starting at ``first`` states the end directly (C's map).
    """
    if first not in view.lines:
        return False
    for _, start, end in view.map_ranges:
        if start == first:
            return all(n in view.lines for n in range(start, end + 1))
    head = view.lines[first]
    indent = len(head) - len(head.lstrip())
    for n in range(first + 1, first + max_lines):
        if n not in view.lines:
            return view.total_lines is not None and n > view.total_lines
        text = view.lines[n]
        if text.strip() and len(text) - len(text.lstrip()) <= indent and text.lstrip()[0] not in ")]}":
            return True
    return False


def goal_perceived(goal: Goal, view: FileView) -> bool:
    """The perception rule for ``goal`` on the current view of its target file.

    Edits: every oldText is verbatim visible (whole-file edits also need every line).
    Questions: a whole-file count needs every line, or a complete search listing of its
    ``count_key`` with exactly ``answer`` matches; then the evidence text must be visible, the
    evidence line visible at a known number, and the evidence block visible to its end.
    """
    if goal.kind == "edit":
        if goal.whole_file and not whole_file_visible(view):
            return False
        return all(find_snippet(view, old) is not None for old, _ in goal.edits)
    if goal.whole_file and not whole_file_visible(view):
        counted = goal.count_key is not None and view.searches.get(goal.count_key) == int(goal.answer or -1)
        if not counted:
            return False
    if goal.evidence_text is not None and find_snippet(view, goal.evidence_text) is None:
        return False
    if goal.evidence_line is not None and goal.evidence_line not in view.lines:
        return False
    return goal.evidence_block_line is None or block_visible(view, goal.evidence_block_line)
