"""readbench.corpus._long: several bugs in one file, their fix snippets, and chain grouping."""

from __future__ import annotations

import pytest

from readbench.corpus._bugfix import Outcome
from readbench.corpus._long import apply_sites, fix_snippets, pick_chains
from readbench.corpus._mutate import MutationSite

SRC = b"def a(x):\n    return x + 1\n\n\ndef b(y):\n    return y < 2\n\n\ndef c(z):\n    return z * 3\n"


def _site(old: str, new: str, func: str, line: int, code_line: int) -> MutationSite:
    start = SRC.index(old.encode(), SRC.index(f"def {func}(".encode()))
    return MutationSite("binop", line, start, start + len(old), old, new, func, code_line, code_line)


SITES = [_site("+", "-", "a", 2, 1), _site("<", "<=", "b", 6, 5), _site("*", "//", "c", 10, 9)]


def test_every_site_applied_at_once_and_each_fix_is_a_unique_snippet():
    assert apply_sites(SRC, SITES) == SRC.replace(b"x + 1", b"x - 1").replace(b"y < 2", b"y <= 2").replace(
        b"z * 3", b"z // 3")
    text, fixes = fix_snippets(SRC, SITES)
    assert fixes == [("    return x - 1", "    return x + 1"), ("    return y <= 2", "    return y < 2"),
                     ("    return z // 3", "    return z * 3")]
    for old, _ in fixes:
        assert text.count(old) == 1


def test_overlapping_spans_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        apply_sites(SRC, [SITES[0], MutationSite("int", 2, SITES[0].byte_start, SITES[0].byte_end + 2, "+ 1", "+ 2",
                                                 "a", 1, 1)])


def test_chains_prefer_bugs_whose_tests_do_not_call_each_other():
    out = lambda *ids: Outcome("killed", ids, {}, 1.0)  # noqa: E731
    kept = [(SITES[0], out("t_a")), (SITES[1], out("t_b")), (SITES[2], out("t_c")),
            (_site("+", "-", "a", 2, 1), out("t_a2"))]
    callers = {1: ["t_a", "t_a2"], 5: ["t_b", "t_a2"], 9: ["t_c"]}
    # t_a2 calls b as well: the disjoint group is (a, b, c); the leftover cannot fill a second group
    assert pick_chains(kept, callers, 2, bugs=3) == [kept[:3]]
    callers[9] = ["t_c", "t_a"]  # now a's test calls c: no disjoint group, the mutants in order instead
    assert pick_chains(kept, callers, 1, bugs=3) == [kept[:3]]
    # pairs: a and b are independent (neither test calls the other's function), so are c and a2
    assert pick_chains(kept, callers, 2, bugs=2) == [kept[:2], kept[2:]]
