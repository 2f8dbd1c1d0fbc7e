"""JavaScript-compatible helpers the extensions' thresholds depend on."""

from __future__ import annotations

from readbench.base.js import js_stringify, posix_normalize, posix_resolve, utf16_head, utf16_len
from readbench.dcp._glob import glob_to_regex


def test_lengths_and_slices_count_utf16_units():
    assert (utf16_len("abc"), utf16_len("é"), utf16_len("a😀b"), utf16_len("")) == (3, 1, 4, 0)
    assert utf16_head("a😀b", 3) == "a😀" and utf16_head("a😀b", 2) == "a"  # never splits a pair
    assert utf16_head("abc", 0) == "" and utf16_head("abc", 10) == "abc"


def test_stringify_matches_json_stringify():
    assert js_stringify({"path": "a.py", "limit": 2.0, "x": None, "u": "é\n"}) == '{"path":"a.py","limit":2,"x":null,"u":"é\\n"}'
    assert js_stringify([1.5, True]) == "[1.5,true]"


def test_posix_normalize_and_resolve_match_node():
    assert posix_normalize("./a//b/../c/") == "a/c/"
    assert posix_normalize("/../x") == "/x"
    assert posix_normalize("../a/./b") == "../a/b"
    assert posix_normalize("") == "." and posix_normalize("./") == "./"
    assert posix_resolve("/w", "src/./a.py") == "/w/src/a.py"
    assert posix_resolve("/w", "/abs/dir/") == "/abs/dir"


def test_glob_translation():
    g = glob_to_regex("**/*.plan.md")
    assert g.fullmatch("x.plan.md") and g.fullmatch("a/b/x.plan.md") and not g.fullmatch("a/x.plan.mdx")
    assert glob_to_regex("**/secrets/**").fullmatch("/home/u/secrets/k/v")
    assert not glob_to_regex("src/*.py").fullmatch("src/a/b.py")
    assert glob_to_regex("f?.py").fullmatch("f1.py") and not glob_to_regex("f?.py").fullmatch("f/.py")
    assert not glob_to_regex("**/.env").fullmatch("a/.env\n")  # JS `$` never matches before a newline
