"""Node/JS text semantics used by stock (docs/specs/pi-tools.md §1.2-1.3): readbench.base.js and
readbench.base.truncate.count_lines."""

from __future__ import annotations

import pytest

from readbench.base.js import (
    decode_utf8,
    format_size,
    js_slice_end,
    js_to_fixed,
    utf8_len,
    utf16_head,
    utf16_len,
)
from readbench.base.truncate import count_lines


@pytest.mark.parametrize(
    ("n_bytes", "expected"),
    [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0KB"),
        (1280, "1.3KB"),  # exactly 1.25: JS toFixed rounds the tie up, Python's format to even
        (1792, "1.8KB"),  # exactly 1.75 -> 1.8 in both
        (51200, "50.0KB"),
        (60000, "58.6KB"),
        (1024 * 1024 - 1, "1024.0KB"),
        (1024 * 1024, "1.0MB"),
        (1024 * 1024 * 5 // 4, "1.3MB"),  # exactly 1.25 MiB
    ],
)
def test_format_size_matches_pi(n_bytes, expected):
    assert format_size(n_bytes) == expected


def test_format_size_rejects_negative():
    with pytest.raises(ValueError, match="n_bytes must be >= 0"):
        format_size(-1)


def test_to_fixed_ties_and_negatives():
    assert js_to_fixed(0.25, 1) == "0.3"
    assert js_to_fixed(2.5, 0) == "3"
    assert js_to_fixed(-1.25, 1) == "-1.3"
    assert js_to_fixed(0.1 + 0.2, 1) == "0.3"
    assert js_to_fixed(-0.01, 1) == "0.0"


def test_count_lines_drops_only_a_trailing_empty_segment():
    assert [count_lines(t) for t in ["", "a", "a\n", "a\n\n", "\n", "a\nb"]] == [0, 1, 1, 2, 1, 2]


def test_utf16_units_and_head_never_split_a_pair():
    assert utf16_len("a\U0001f600é") == 4
    assert utf16_head("a\U0001f600b", 2) == "a"
    assert utf16_head("a\U0001f600b", 3) == "a\U0001f600"
    assert utf16_head("abc", 0) == ""
    with pytest.raises(ValueError, match="max_units must be >= 0"):
        utf16_head("abc", -1)


def test_utf8_len_counts_lone_surrogates_as_three_bytes():
    assert utf8_len("é\U0001f600") == 6
    assert utf8_len("\ud800") == 3


def test_decode_keeps_bom_and_cr():
    assert decode_utf8(b"\xef\xbb\xbfa\r\n") == "\ufeffa\r\n"


def test_js_slice_end_negative_counts_from_end():
    assert [js_slice_end(e, 4) for e in (-1, -9, 2, 9)] == [3, 0, 2, 4]
