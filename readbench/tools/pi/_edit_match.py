"""pi 0.84.1's edit matching (`dist/core/tools/edit-diff.js`), ported line for line.

`apply_edits_to_normalized_content` takes LF-normalised, BOM-free text and a list of
`(old_text, new_text)` pairs and returns the new text, or raises `PiEditError` with pi's exact
message (docs/specs/pi-tools.md §4). Positions are Python code points where pi uses UTF-16
code units; every position is taken from a match of a whole well-formed string, so the two agree
on which text is replaced.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from readbench.base.js import js_trim_end, utf16_len

__all__ = ["PiEditError", "apply_edits_to_normalized_content", "normalize_for_fuzzy_match", "normalize_to_lf"]


class PiEditError(Exception):
    """An edit that pi rejects; `str(error)` is pi's exact tool-result text (isError true)."""


_SMART_SINGLE = re.compile("[\u2018\u2019\u201a\u201b]")
_SMART_DOUBLE = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPECIAL_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


def normalize_to_lf(text: str) -> str:
    """pi `normalizeToLF`: CRLF, then any lone CR, become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_for_fuzzy_match(text: str) -> str:
    """pi `normalizeForFuzzyMatch` (pi-tools.md §4): NFKC, per-line JS `trimEnd`, smart quotes to
    ASCII, the Unicode dashes U+2010-U+2015 and U+2212 to `-`, special spaces to a space.

    Note: NFKC uses Python's Unicode database (14.0 on Python 3.11); Node 20 uses ICU's (17.0), so
    characters assigned after Unicode 14 with compatibility mappings can normalise differently.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(js_trim_end(line) for line in text.split("\n"))
    text = _SMART_SINGLE.sub("'", text)
    text = _SMART_DOUBLE.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPECIAL_SPACES.sub(" ", text)


@dataclass(frozen=True)
class _Match:
    found: bool
    index: int
    length: int
    used_fuzzy: bool


@dataclass(frozen=True)
class _Replacement:
    edit_index: int
    match_index: int
    match_length: int
    new_text: str


def _fuzzy_find_text(content: str, old_text: str) -> _Match:
    exact = content.find(old_text)
    if exact != -1:
        return _Match(True, exact, len(old_text), False)
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    fuzzy_index = fuzzy_content.find(fuzzy_old)
    if fuzzy_index == -1:
        return _Match(False, -1, 0, False)
    return _Match(True, fuzzy_index, len(fuzzy_old), True)


def _count_occurrences(content: str, old_text: str) -> int:
    """pi `countOccurrences`: `fuzzyContent.split(fuzzyOldText).length - 1`, always in fuzzy space.

    JS `split("")` splits into UTF-16 code units, so an empty separator counts length - 1.
    """
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    if not fuzzy_old:
        return utf16_len(fuzzy_content) - 1
    return fuzzy_content.count(fuzzy_old)


def _split_lines_with_endings(content: str) -> list[str]:
    return _LINES_WITH_ENDINGS.findall(content)


def _line_spans(content: str) -> list[tuple[int, int]]:
    spans = []
    offset = 0
    for line in _split_lines_with_endings(content):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    return spans


def _replacement_line_range(spans: list[tuple[int, int]], replacement: _Replacement) -> tuple[int, int]:
    start = replacement.match_index
    end = replacement.match_index + replacement.match_length
    start_line = next((i for i, (s, e) in enumerate(spans) if s <= start < e), -1)
    if start_line == -1:
        raise PiEditError("Replacement range is outside the base content.")
    end_line = start_line
    while end_line < len(spans) and spans[end_line][1] < end:
        end_line += 1
    if end_line >= len(spans):
        raise PiEditError("Replacement range is outside the base content.")
    return start_line, end_line + 1


def _apply_replacements(content: str, replacements: list[_Replacement], offset: int = 0) -> str:
    result = content
    for replacement in reversed(replacements):
        at = replacement.match_index - offset
        result = result[:at] + replacement.new_text + result[at + replacement.match_length :]
    return result


def _apply_preserving_unchanged_lines(original: str, base: str, replacements: list[_Replacement]) -> str:
    """pi `applyReplacementsPreservingUnchangedLines`: rewrite only the lines a fuzzy replacement
    touches (from the normalised base) and copy every other line back from the original."""
    original_lines = _split_lines_with_endings(original)
    base_spans = _line_spans(base)
    if len(original_lines) != len(base_spans):
        raise PiEditError("Cannot preserve unchanged lines because the base content has a different line count.")
    groups: list[list] = []  # [start_line, end_line, replacements]
    for replacement in sorted(replacements, key=lambda r: r.match_index):
        start_line, end_line = _replacement_line_range(base_spans, replacement)
        if groups and start_line < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], end_line)
            groups[-1][2].append(replacement)
            continue
        groups.append([start_line, end_line, [replacement]])
    parts = []
    line_index = 0
    for start_line, end_line, group_replacements in groups:
        parts.append("".join(original_lines[line_index:start_line]))
        group_start = base_spans[start_line][0]
        group_end = base_spans[end_line - 1][1]
        parts.append(_apply_replacements(base[group_start:group_end], group_replacements, group_start))
        line_index = end_line
    parts.append("".join(original_lines[line_index:]))
    return "".join(parts)


def apply_edits_to_normalized_content(content: str, edits: list[tuple[str, str]], path: str) -> str:
    """pi `applyEditsToNormalizedContent` (pi-tools.md §4): apply all edits, each matched against the
    original `content`, and return the new text.

    Args:
        content: the file text with the BOM stripped and line endings normalised to LF.
        edits: `(old_text, new_text)` pairs, in the order the model sent them.
        path: the path argument exactly as the model sent it (it appears in error texts).

    Raises:
        PiEditError: with pi's exact text for an empty oldText, a missing or non-unique match,
            overlapping edits, an unchanged result, or a fuzzy match pi cannot map back to lines.
    """
    normalized = [(normalize_to_lf(old), normalize_to_lf(new)) for old, new in edits]
    n_edits = len(normalized)
    for i, (old, _) in enumerate(normalized):
        if not old:
            raise PiEditError(
                f"oldText must not be empty in {path}."
                if n_edits == 1
                else f"edits[{i}].oldText must not be empty in {path}."
            )
    used_fuzzy = any(_fuzzy_find_text(content, old).used_fuzzy for old, _ in normalized)
    base = normalize_for_fuzzy_match(content) if used_fuzzy else content
    matched: list[_Replacement] = []
    for i, (old, new) in enumerate(normalized):
        match = _fuzzy_find_text(base, old)
        if not match.found:
            raise PiEditError(
                f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
                if n_edits == 1
                else f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
            )
        occurrences = _count_occurrences(base, old)
        if occurrences > 1:
            raise PiEditError(
                f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
                if n_edits == 1
                else f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
            )
        matched.append(_Replacement(i, match.index, match.length, new))
    matched.sort(key=lambda r: r.match_index)
    for previous, current in zip(matched, matched[1:]):
        if previous.match_index + previous.match_length > current.match_index:
            raise PiEditError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    new_content = (
        _apply_preserving_unchanged_lines(content, base, matched) if used_fuzzy else _apply_replacements(base, matched)
    )
    if new_content == content:
        raise PiEditError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            if n_edits == 1
            else f"No changes made to {path}. The replacements produced identical content."
        )
    return new_content
