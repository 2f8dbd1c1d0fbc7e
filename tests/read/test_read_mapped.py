"""Variant C: cut to N numbered lines plus a tree-sitter structural map whose line ranges
are checked against Python's own `ast` (docs/specs/variants.md "C")."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
from read_helpers import run

from readbench.read import ReadSession, get_variant
from readbench.read._outline import outline

KINDS = {ast.ClassDef: "class", ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def"}
MAP_LINE = re.compile(
    r"^(?P<indent> *)(?P<kind>class|def|async def) (?P<name>\S+) \(lines (?P<a>\d+)-(?P<b>\d+)\)$"
)


def ast_definitions(source: str) -> list[tuple[str, str, int, int, int]]:
    """(kind, name, lineno, end_lineno, depth) of every class/def in document order."""
    out: list[tuple[str, str, int, int, int]] = []

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if type(child) in KINDS:
                out.append((KINDS[type(child)], child.name, child.lineno, child.end_lineno, depth))
                visit(child, depth + 1)
            else:
                visit(child, depth)

    visit(ast.parse(source), 0)
    return out


def parse_map(text: str) -> list[tuple[str, str, int, int, int]]:
    block = text.split("the file map is below.]\n", 1)[1]
    rows = block.split("\n")[1:]  # after the "File map of ..." header
    out = []
    for row in rows:
        m = MAP_LINE.match(row)
        assert m, f"unexpected map row {row!r}"
        out.append((m["kind"], m["name"], int(m["a"]), int(m["b"]), len(m["indent"]) // 2))
    return out


def realistic_module(n_classes: int = 12) -> str:
    """A multi-class module with decorators, async defs, nested functions, trailing comments,
    multi-line strings and calls, ~50 lines per class."""
    parts = ['"""Inventory service."""\n\nimport asyncio\nfrom dataclasses import dataclass\n\n\n']
    for i in range(n_classes):
        parts.append(
            textwrap.dedent(
                f'''\
                @dataclass
                class Item{i}:
                    """An item.

                    With a long docstring.
                    """

                    name: str
                    count: int = 0

                    @property
                    def label(self) -> str:
                        return f"{{self.name}}:{{self.count}}"

                    async def refresh(self, client) -> None:
                        data = await client.get(
                            "/items/{i}",
                            timeout=3,
                        )
                        self.count = data["count"]
                        # trailing comment inside the body

                    def grow(self, by: int = 1) -> int:
                        def clamp(v):
                            if v > 100:
                                return 100
                            return v

                        self.count = clamp(self.count + by)
                        return self.count
                    # comment after the method, at class indentation

                    class Meta:
                        table = "items_{i}"


                def make_item{i}(name: str) -> Item{i}:
                    item = Item{i}(name)
                    text = """multi
                line
                string"""
                    return item


                '''
            )
        )
    parts.append("async def main():\n    await asyncio.sleep(0)\n")
    return "".join(parts)


def test_small_file_is_numbered_without_notice():
    r = run("C", b"a\n\tb\n")
    assert r.text == "     1\ta\n     2\t\tb"
    assert (r.details.capped, r.details.mapped, r.details.last_line) == (False, False, 2)


def test_first_cut_of_python_file_carries_map_matching_ast():
    src = realistic_module()
    n_lines = src.count("\n")
    assert n_lines > 400
    r = run("C", src.encode(), path="pkg/items.py", call_id="call_1")
    lines = src.split("\n")
    expected_body = "\n".join(f"{i + 1:>6}\t{lines[i]}" for i in range(400))
    head = f"{expected_body}\n\n[Showing lines 1-400 of {n_lines + 1}. Use offset/limit to read other parts; the file map is below.]\nFile map of pkg/items.py (definitions with line ranges):\n"
    assert r.text.startswith(head)
    assert parse_map(r.text) == ast_definitions(src)
    d = r.details
    assert (d.capped, d.mapped, d.map_call, d.first_line, d.last_line) == (
        True,
        True,
        "call_1",
        1,
        400,
    )


def test_later_cuts_point_back_to_the_call_that_showed_the_map():
    src = realistic_module().encode()
    s = ReadSession()
    run("C", src, path="items.py", call_id="call_1", session=s)
    r = run("C", src, path="items.py", call_id="call_2", session=s)
    n = src.count(b"\n") + 1
    assert r.text.endswith(
        f"[Showing lines 1-400 of {n}. Use offset/limit to read other parts; the file map was shown in call call_1.]"
    )
    assert (r.details.mapped, r.details.map_call) == (False, "call_1")
    s.note_file_changed("items.py")
    again = run("C", src, path="items.py", call_id="call_3", session=s)
    assert again.details.mapped is True and "the file map is below." in again.text


def test_map_always_and_off():
    src = realistic_module().encode()
    s = ReadSession()
    always = {"base": "C", "name": "C-always", "map": "always"}
    run(always, src, path="a.py", call_id="c1", session=s)
    assert run(always, src, path="a.py", call_id="c2", session=s).details.mapped is True
    off = run({"base": "C", "name": "C-off", "map": "off"}, src, path="a.py")
    t = src.count(b"\n") + 1
    assert off.text.endswith(f"[Showing lines 1-400 of {t}. Use offset/limit to read other parts.]")


def test_ranged_read_numbers_lines_from_the_offset():
    src = realistic_module()
    r = run("C", src.encode(), offset=401, limit=5, path="items.py")
    lines = src.split("\n")
    body = "\n".join(f"{i:>6}\t{lines[i - 1]}" for i in range(401, 406))
    t = len(lines)
    assert r.text == f"{body}\n\n[{t - 405} more lines in file. Use offset=406 to continue.]"
    assert (r.details.first_line, r.details.last_line, r.details.capped) == (401, 405, False)


def test_file_without_grammar_gets_the_notice_only():
    data = "".join(f"row {i}\n" for i in range(1, 1001)).encode()
    r = run("C", data, path="data.csv")
    assert r.text.endswith(
        "   400\trow 400\n\n[Showing lines 1-400 of 1001. Use offset/limit to read other parts.]"
    )
    assert r.details.mapped is False and r.details.map_call is None


def test_markdown_headings_map_with_section_ranges():
    md = (
        ["# Guide", "intro"]
        + ["text"] * 400
        + [
            "## Install",
            "pip",
            "",
            "```",
            "# not a heading",
            "```",
            "## Use",
            "run",
            "# Appendix",
            "end",
        ]
    )
    r = run("C", ("\n".join(md) + "\n").encode(), path="README.md")
    block = r.text.split("the file map is below.]\n", 1)[1]
    assert block == (
        "File map of README.md (definitions with line ranges):\n"
        "# Guide (lines 1-410)\n"
        "  ## Install (lines 403-408)\n"
        "  ## Use (lines 409-410)\n"
        "# Appendix (lines 411-412)"
    )


def test_byte_cap_still_applies_with_its_label():
    data = (("x" * 199 + "\n") * 400).encode()  # 400 lines, 80,000 bytes
    r = run("C", data, path="wide.txt")
    # 199 + 200 * 255 = 51,199 bytes -> 256 lines.
    assert r.text.endswith(
        "[Showing lines 1-256 of 401 (50.0KB limit). Use offset/limit to read other parts.]"
    )


def test_c_line_cap_is_a_parameter():
    v = get_variant({"base": "C", "name": "C-200", "max_lines": 200})
    assert "at most 200 lines" in v.tool_description
    data = "".join(f"r{i}\n" for i in range(1, 301)).encode()
    assert (
        "[Showing lines 1-200 of 301."
        in run({"base": "C", "name": "C-200", "max_lines": 200}, data, path="x.txt").text
    )


@pytest.mark.parametrize("module", [argparse, ast, dataclasses])
def test_outline_of_real_stdlib_files_matches_ast(module):
    src = Path(module.__file__).read_text(encoding="utf-8")
    got = [
        (e.kind, e.name, e.start_line, e.end_line, e.depth) for e in outline(src, module.__file__)
    ]
    assert got == ast_definitions(src)
    assert len(got) > 20


def test_map_of_argparse_through_the_variant_matches_ast():
    src = Path(argparse.__file__).read_text(encoding="utf-8")
    r = run(
        {"base": "C", "name": "C-big", "map_max_entries": 10_000}, src.encode(), path="argparse.py"
    )
    assert parse_map(r.text) == ast_definitions(src)


def test_long_maps_are_summarised():
    src = realistic_module()
    r = run({"base": "C", "name": "C-short", "map_max_entries": 5}, src.encode(), path="m.py")
    n = len(ast_definitions(src))
    assert r.text.endswith(f"\n... {n - 5} more definitions not shown")


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "a.js",
            "class A {\n  m() {\n    return 1\n  }\n}\nfunction f() {}\n",
            [("class", "A", 1, 5, 0), ("method", "m", 2, 4, 1), ("function", "f", 6, 6, 0)],
        ),
        (
            "a.go",
            "package x\n\nfunc F() {\n}\n\ntype T struct{}\n",
            [("func", "F", 3, 4, 0), ("type", "T", 6, 6, 0)],
        ),
        (
            "a.rs",
            "struct S;\nimpl S {\n    fn m(&self) {}\n}\n",
            [("struct", "S", 1, 1, 0), ("impl", "S", 2, 4, 0), ("fn", "m", 3, 3, 1)],
        ),
        ("a.c", "int f(int x) {\n  return x;\n}\n", [("function", "f", 1, 3, 0)]),
        (
            "a.rb",
            "class A\n  def m\n  end\nend\n",
            [("class", "A", 1, 4, 0), ("def", "m", 2, 3, 1)],
        ),
        ("a.txt", "class A:\n    pass\n", None),
    ],
)
def test_outline_other_languages(path, source, expected):
    got = outline(source, path)
    assert (
        None if got is None else [(e.kind, e.name, e.start_line, e.end_line, e.depth) for e in got]
    ) == expected


def test_description_snapshot():
    assert get_variant("C").tool_description == (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
        "Images are sent as attachments. For text files, a read returns at most 400 lines. Each "
        "line is prefixed with its line number. A longer selection is cut to its first 400 lines; "
        "the first cut of a file is followed by a map of its classes, functions and headings with "
        "their line ranges. Use offset/limit to read the part you need."
    )


def test_map_reshow_if_pruned_shows_the_map_again_only_when_its_call_left_the_view():
    src = realistic_module().encode()
    aware = {"base": "C", "name": "C-aware", "map_reshow_if_pruned": True}
    s = ReadSession()
    run(aware, src, path="a.py", call_id="c1", session=s)
    kept = run(aware, src, path="a.py", call_id="c2", session=s, visible=frozenset({"c1"}))
    assert (kept.details.mapped, kept.details.map_call) == (False, "c1")
    pruned = run(aware, src, path="a.py", call_id="c3", session=s, visible=frozenset({"c2"}))
    assert (pruned.details.mapped, pruned.details.map_call) == (True, "c3")
    # the spec's C points back regardless
    s = ReadSession()
    run("C", src, path="a.py", call_id="c1", session=s)
    assert run("C", src, path="a.py", call_id="c2", session=s, visible=frozenset()).details.mapped is False


def test_a_file_over_the_map_size_bound_gets_a_stated_fallback_and_is_never_parsed(monkeypatch):
    # issue 13, defect 8: C on a 100 MB .py parsed it all (113 s, 7.2 GB) for a 16 KB answer
    import readbench.read._mapped as mapped

    def boom(*args):
        raise AssertionError("the outline must not be built for a file over the bound")

    monkeypatch.setattr(mapped, "outline", boom)
    src = realistic_module()
    preset = {"base": "C", "name": "C-tiny-map", "map_max_file_bytes": 1024}
    r = run(preset, src.encode(), path="m.py")
    size = f"{len(src.encode()) / 1024:.1f}KB"
    assert r.text.endswith(
        f"[Showing lines 1-400 of {src.count(chr(10)) + 1}. Use offset/limit to read other parts; "
        f"no file map: the file is {size}, over the 1.0KB map limit.]"
    )
    assert (r.details.capped, r.details.mapped) == (True, False)
    assert get_variant("C").params["map_max_file_bytes"] == 4 * 1024 * 1024


def test_one_parse_serves_the_outline_and_the_function_bodies_of_a_text(monkeypatch):
    from readbench.read import _outline

    text = "class K:\n    def f(self):\n        return 1\n\n\nasync def g():\n    pass\n"
    _outline._parsed.cache_clear()
    parses = []
    real = _outline._parse
    monkeypatch.setattr(_outline, "_parse", lambda t, lang: parses.append(lang) or real(t, lang))
    first = _outline.outline(text, "m.py")
    assert [(e.kind, e.name, e.start_line, e.end_line) for e in first] == [
        ("class", "K", 1, 3), ("def", "f", 2, 3), ("async def", "g", 6, 7)]
    assert _outline.python_function_bodies(text) == [(2, 2), (6, 6)]
    first.clear()  # a caller's list is its own
    assert len(_outline.outline(text, "m.py")) == 3
    assert parses == ["python"]
    monkeypatch.setattr(_outline, "MEMO_MAX_CHARS", 100)
    big = text * 2  # too big to keep: parsed each time
    _outline.outline(big, "m.py")
    _outline.python_function_bodies(big)
    assert parses == ["python", "python", "python"]


def test_one_walk_gives_the_python_outline_and_every_function_body():
    from readbench.read import _outline
    from readbench.read._outline import OutlineEntry as E

    text = (
        "import os\n\n@dec\nclass K(Base):\n    x = 1\n\n    def f(self):\n        def inner():\n"
        "            return 2\n        return inner\n\n    async def g(self):\n        pass\n\n"
        "if os.name:\n    def h():\n        lambda: 0\n        class L:\n            def m(self): ...\n"
        "    def broken(:\n        pass\n"
    )
    tree = _outline._parse(text, "python")
    bodies: list[tuple[int, int]] = []
    entries = _outline._code_outline(tree.root_node, "python", bodies)
    # 1-based inclusive lines; nested defs and the class inside `if` included, the broken def kept
    assert entries == [E("class", "K", 4, 13, 0), E("def", "f", 7, 10, 1), E("def", "inner", 8, 9, 2),
                       E("async def", "g", 12, 13, 1), E("def", "h", 16, 19, 0), E("class", "L", 18, 19, 1),
                       E("def", "m", 19, 19, 2), E("def", "broken", 20, 21, 0)]
    # 0-based (start_row, end_row) of each body, in document order (SWE-agent's body query)
    assert bodies == [(7, 9), (8, 8), (12, 12), (16, 18), (18, 18), (20, 20)]
    assert _outline._code_outline(tree.root_node, "python") == entries
    assert _outline.python_function_bodies(text) == bodies


def test_python_expression_kinds_are_the_grammars_expression_statements():
    """`_PYTHON_EXPRESSIONS` is every concrete kind under the grammar's `expression_statement`
    supertype, and holds no definition or statement."""
    from readbench.read import _outline

    lang = _outline._parser("python").language
    if not hasattr(lang, "subtypes"):
        pytest.skip("this tree-sitter binding does not list a grammar's supertypes")
    supertypes = {lang.node_kind_for_id(t): t for t in lang.supertypes}  # node_kind_is_supertype says True of any kind
    found: set[str] = set()
    todo = [supertypes["expression_statement"]]
    while todo:
        for t in lang.subtypes(todo.pop()):
            if t in supertypes.values():
                todo.append(t)
            else:
                found.add(lang.node_kind_for_id(t))
    assert _outline._PYTHON_EXPRESSIONS == found
    assert not found & {"function_definition", "class_definition", "decorated_definition", "block", "module",
                        "if_statement", "with_statement", "ERROR", "expression_statement"}


class _Node:
    """A stand-in tree-sitter node (type, named children, has_error, rows) for the walk."""

    def __init__(self, type_: str, row: int, children: list["_Node"] | None = None, error: bool = False) -> None:
        self.type, self.named_children = type_, children or []
        self.children = self.named_children
        self.child_count = len(self.named_children)
        self.is_named = True
        self.has_error = error or any(c.has_error for c in self.named_children)
        self.start_point = (row, 0)
        self.end_point = (max([row] + [c.end_point[0] for c in self.named_children]), 5)

    def child_by_field_name(self, name: str) -> "_Node | None":
        if name == "name":
            return _Name()
        return next((c for c in self.named_children if c.type == "block"), None) if name == "body" else None


class _Name:
    text = b"f"


def test_the_walk_enters_an_expression_only_when_its_subtree_has_an_error():
    """A clean expression subtree cannot hold a definition and is skipped; one with an error (where
    recovery may nest anything) is walked, so a definition under it is still found."""
    from readbench.read import _outline
    from readbench.read._outline import OutlineEntry as E

    def tree(error: bool) -> _Node:
        fn = _Node("function_definition", 3, [_Node("block", 4, [_Node("pass_statement", 4)])])
        return _Node("module", 0, [_Node("assignment", 1, [fn, _Node("ERROR", 5, error=error)])])

    bodies: list[tuple[int, int]] = []
    assert _outline._code_outline(tree(True), "python", bodies) == [E("def", "f", 4, 5, 0)]
    assert bodies == [(4, 4)]
    # no error anywhere (a real clean tree never nests a def in an assignment): not entered
    bodies = []
    assert _outline._code_outline(tree(False), "python", bodies) == [] and bodies == []
