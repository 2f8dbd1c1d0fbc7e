"""swe-agent: SWE-agent's str_replace_editor view (docs/specs/variants.md "swe-agent",
anchors.md §1) behind pi's read schema."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from read_helpers import run

from readbench.read import get_variant
from readbench.read._swe_agent import FILEMAP_HEAD, FILEMAP_TAIL, TRUNCATED_MESSAGE

HEADER = "Here's the result of running `cat -n` on f.txt:\n"

SRC = """import os


def small():
    return 1


def big(x):
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    f = 6
    g = 7
    h = 8
    return a


class K:
    def m(self):
        def inner():
            return 2
        y = 1
        y += 1
        y += 2
        return inner()
"""


def test_small_file_is_cat_n_with_tabs_expanded_and_the_phantom_row():
    r = run("swe-agent", b"a\n\tb\n")
    assert r.text == HEADER + "     1\ta\n     2\t        b\n     3\t\n"
    assert (r.details.first_line, r.details.last_line, r.details.capped) == (1, 2, False)


def test_range_maps_offset_and_limit_to_a_view_range():
    r = run("swe-agent", b"a\n\tb\nc\n", offset=2, limit=1)
    assert r.text == HEADER + "     2\t        b\n"
    assert run("swe-agent", b"a\nb\n", offset=2, limit=99).text == HEADER + "     2\tb\n     3\t\n"


def test_offset_outside_the_file_is_an_error():
    r = run("swe-agent", b"a\nb\n", offset=9)
    assert (
        r.text == "Invalid `offset`: 9. It should be within the range of lines of the file: [1, 3]"
    )
    assert r.is_error and r.details.error == "bad_range"
    assert run("swe-agent", b"a\n", limit=0).text == "Invalid `limit`: 0. It should be at least 1"


def test_output_over_16000_chars_is_clipped_with_swe_agents_note():
    data = ("x" * 99 + "\n").encode() * 200  # 20,000 chars; 16,000 = 160 whole lines
    r = run("swe-agent", data)
    rows = "\n".join(f"{i:6}\t{'x' * 99}" for i in range(1, 161))
    assert r.text == HEADER + rows + f"\n   161\t{TRUNCATED_MESSAGE}\n"
    assert (r.details.capped, r.details.last_line) == (True, 160)


def test_clip_inside_a_line_does_not_count_that_line():
    data = ("y" * 149 + "\n").encode() * 200  # 16,000 / 150 = 106 whole lines + 100 chars
    r = run("swe-agent", data)
    assert r.details.last_line == 106
    assert r.text.endswith(f"   107\t{'y' * 100}{TRUNCATED_MESSAGE}\n")


def test_python_file_over_the_limit_shows_the_file_map():
    preset = {"base": "swe-agent", "name": "swe-250", "max_response_chars": 250}
    assert len(SRC) > 250
    r = run(preset, SRC.encode(), path="k.py")
    fmap = "\n".join(
        [
            "     1 import os",
            "     2 ",
            "     3 ",
            "     4 def small():",
            "     5     return 1",
            "     6 ",
            "     7 ",
            "     8 def big(x):",
            "     9 ... eliding lines 9-17 ...",
            "    18 ",
            "    19 ",
            "    20 class K:",
            "    21     def m(self):",
            "    22 ... eliding lines 22-27 ...",
        ]
    )
    assert r.text == f"{FILEMAP_HEAD}\n{fmap}\n{FILEMAP_TAIL}\n"
    d = r.details
    assert (d.mapped, d.capped, d.line_ranges, d.returned_lines) == (
        True,
        True,
        ((1, 8), (18, 21)),
        12,
    )
    # a ranged read or a non-Python file is never mapped
    assert run(preset, SRC.encode(), offset=1, path="k.py").details.mapped is False
    assert run(preset, SRC.encode(), path="k.txt").details.mapped is False


def test_argparse_file_map_rows_match_the_file():
    data = Path(argparse.__file__).read_bytes()
    r = run("swe-agent", data, path="argparse.py")
    lines = data.decode().split("\n")
    rows = r.text.split("\n")[1:]
    checked = 0
    for row in rows:
        m = re.match(r"^ *(\d+) (.*)$", row)
        if not m or m[2].startswith("... eliding lines") or TRUNCATED_MESSAGE in row:
            continue
        assert m[2] == lines[int(m[1]) - 1].expandtabs()
        checked += 1
    assert checked == r.details.returned_lines > 300
    assert "... eliding lines 119-131 ..." in r.text  # _AttributeHolder.__repr__ body


def test_invalid_utf8_falls_back_to_latin1_and_crlf_is_normalised():
    r = run("swe-agent", b"caf\xe9\r\nx\ry\n")
    assert r.text == HEADER + "     1\tcafé\n     2\tx\n     3\ty\n     4\t\n"


def test_description_names_the_numbers():
    assert get_variant("swe-agent").tool_description == (
        "Read the contents of a file. The result is shown as by `cat -n`, with line numbers. "
        "Output longer than 16000 characters is clipped. A Python file longer than 16000 "
        "characters read without offset/limit is shown abbreviated, with long function bodies "
        "elided. Use offset (1-indexed) and limit to view specific lines."
    )


def test_python_file_over_the_filemap_size_bound_is_shown_clipped_without_parsing(monkeypatch):
    # issue 13, defect 8: swe-agent on a 100 MB .py parsed it all (70 s, 4.6 GB) for 16 KB
    import readbench.read._swe_agent as swe

    def boom(*args):
        raise AssertionError("the file map must not be built for a file over the bound")

    monkeypatch.setattr(swe, "python_function_bodies", boom)
    preset = {"base": "swe-agent", "name": "swe-250-small-map", "max_response_chars": 250,
              "filemap_max_file_bytes": 100}
    r = run(preset, SRC.encode(), path="k.py")
    plain = run({"base": "swe-agent", "name": "swe-250-nomap", "max_response_chars": 250, "filemap": False},
                SRC.encode(), path="k.py")
    assert r.text == plain.text and r.text.startswith("Here's the result of running `cat -n` on k.py:\n")
    assert TRUNCATED_MESSAGE in r.text
    assert (r.details.mapped, r.details.capped) == (False, True)
    assert get_variant("swe-agent").params["filemap_max_file_bytes"] == 4 * 1024 * 1024
