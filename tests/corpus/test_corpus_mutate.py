"""Mutation operators on a hand-written module: exact sites, spans and edits (corpus.md §3.1)."""

import random

import pytest

from readbench.corpus._bugfix import order_sites
from readbench.corpus._mutate import MutationSite, apply_site, find_sites, unique_snippet

SRC = '''X = 1 + 2


def f(a, b=3 < 4):
    if a < b and not a:
        return True
    return g(a, b) * 2


class C:
    def m(self, x):
        return x is None or x == "\u00e9" - 1  # e
'''.encode()


def test_sites_cover_each_operator_only_inside_function_bodies():
    got = [(s.operator, s.line, s.byte_start, s.byte_end, s.old, s.new, s.func) for s in find_sites(SRC)]
    assert got == [
        ("compare", 5, 40, 41, "<", "<=", "f"),
        ("boolop", 5, 44, 47, "and", "or", "f"),
        ("drop_not", 5, 48, 53, "not a", "a", "f"),
        ("return_bool", 6, 70, 74, "True", "False", "f"),
        ("swap_args", 7, 88, 92, "a, b", "b, a", "f"),
        ("binop", 7, 94, 95, "*", "//", "f"),
        ("int", 7, 96, 97, "2", "3", "f"),
        ("compare", 12, 146, 148, "is", "is not", "C.m"),
        ("boolop", 12, 154, 156, "or", "and", "C.m"),
        ("compare", 12, 159, 161, "==", "!=", "C.m"),
        # "é" is two UTF-8 bytes: offsets after it are byte offsets, not characters
        ("binop", 12, 167, 168, "-", "+", "C.m"),  # line 12 starts at byte 129
        ("int", 12, 169, 170, "1", "2", "C.m"),
    ]


def test_spans_are_utf8_byte_offsets_of_the_old_text():
    for s in find_sites(SRC):
        assert SRC[s.byte_start:s.byte_end] == s.old.encode()


def test_apply_changes_exactly_one_line():
    site = find_sites(SRC)[-2]  # `-` -> `+` after the non-ASCII literal
    out = apply_site(SRC, site)
    diff = [(a, b) for a, b in zip(SRC.splitlines(), out.splitlines()) if a != b]
    assert diff == [('        return x is None or x == "\u00e9" - 1  # e'.encode(),
                     '        return x is None or x == "\u00e9" + 1  # e'.encode())]


def test_apply_refuses_a_changed_file():
    site = find_sites(SRC)[0]
    with pytest.raises(ValueError, match="line 5: expected '<' at the site"):
        apply_site(SRC.replace(b"a < b", b"a > b"), site)


def test_not_paren_and_multiline_and_comment_gaps_are_skipped():
    src = b"def g(a, b):\n    x = (a <  # c\n         b)\n    return not(a)\n"
    assert [(s.operator, s.old) for s in find_sites(src)] == []


def test_decorated_function_code_line_is_first_decorator():
    src = b"@dec\n@dec2\ndef h(a):\n    return a + 1\n"
    (binop, lit) = find_sites(src)
    assert (binop.func_line, binop.code_line) == (3, 1)
    assert (lit.operator, lit.old, lit.new) == ("int", "1", "2")


def test_unique_snippet_grows_until_unique():
    text = "a\nx = 1\nb\nx = 1\nc\n"
    # the span is the second "1" (offset 14); line "x = 1" repeats, so one line is added above
    assert unique_snippet(text, 14, 15) == ("b\nx = 1", 8, 15)
    assert unique_snippet(text, 6, 7) == ("a\nx = 1", 0, 7)


def _site(line: int) -> MutationSite:
    return MutationSite("int", line, line, line + 1, "1", "2", f"f{line}", line, line)


def test_order_sites_interleaves_strata_deepest_first():
    sites = [_site(n) for n in (10, 20, 1500, 2500, 2600, 2700)]
    order = [s.line for s in order_sites(sites, random.Random(0), (1000, 2000))]
    assert order[:3] in ([2500, 1500, 10], [2500, 1500, 20], [2600, 1500, 10], [2600, 1500, 20],
                         [2700, 1500, 10], [2700, 1500, 20])
    assert sorted(order) == [10, 20, 1500, 2500, 2600, 2700]
    assert order == [s.line for s in order_sites(sites, random.Random(0), (1000, 2000))]
