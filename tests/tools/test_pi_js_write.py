"""readbench.tools.pi write text and the JavaScript helpers the pi tools rely on."""

from __future__ import annotations

import pytest

from readbench.base.js import format_size, js_json_stringify, js_number_str, js_to_fixed, js_trim_end, utf16_slice_head
from readbench.base.truncate import truncate_head, truncate_tail
from readbench.tools.pi.write import write_success_text


def test_write_success_counts_utf16_units():
    assert write_success_text("h\u00e9\U0001f600", "sub/w.txt") == "Successfully wrote 4 bytes to sub/w.txt"
    assert write_success_text("", "e") == "Successfully wrote 0 bytes to e"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"), (-0.0, "0"), (2.0, "2"), (0.1, "0.1"), (1e-7, "1e-7"), (0.00001, "0.00001"),
        (0.000001, "0.000001"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1.5e300, "1.5e+300"),
        (-3.5, "-3.5"), (2**60, "1152921504606847000"), (5e-324, "5e-324"), (123.456, "123.456"),
    ],
)  # fmt: skip
def test_js_number_str_matches_node(value, expected):
    # Expected values printed by node 20: String(value).
    assert js_number_str(value) == expected


def test_to_fixed_rounds_ties_up_like_js():
    assert js_to_fixed(1.25, 1) == "1.3"
    assert format_size(1280) == "1.3KB"
    assert format_size(51_200) == "50.0KB"
    assert format_size(1023) == "1023B"
    assert format_size(1024 * 1024) == "1.0MB"


def test_trim_end_uses_js_whitespace_set():
    assert js_trim_end("a \t\u00a0\u3000\ufeff\u2028") == "a"
    assert js_trim_end("a\x1c\x85") == "a\x1c\x85"  # Python's rstrip() would strip these


def test_utf16_slice_can_split_a_pair():
    assert utf16_slice_head("a\U0001f600b", 2) == "a\ud83d"
    assert utf16_slice_head("a\U0001f600b", 3) == "a\U0001f600"


def test_json_stringify_like_js():
    assert js_json_stringify({"a": [1.0, "\ud800", None, True], "b": {}}) == (
        '{\n  "a": [\n    1,\n    "\\ud800",\n    null,\n    true\n  ],\n  "b": {}\n}'
    )


def test_truncate_head_and_tail_counts():
    head = truncate_head("a\nb\nc\n", max_lines=2)
    assert (head.content, head.truncated_by, head.total_lines, head.output_lines) == ("a\nb", "lines", 3, 2)
    tail = truncate_tail("a\nb\nc\n", max_lines=2)
    assert (tail.content, tail.truncated_by, tail.total_lines, tail.output_lines) == ("b\nc", "lines", 3, 2)
    first = truncate_head("x" * 10 + "\ny", max_bytes=5)
    assert (first.content, first.first_line_exceeds_limit) == ("", True)
