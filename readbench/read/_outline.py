"""Structural outlines from tree-sitter: definitions (and Markdown headings) with line ranges.

Used by variant C's file map and the swe-agent file map (docs/specs/variants.md "C",
"swe-agent"). Grammars come from `tree-sitter-language-pack` 0.13, which ships them in the
wheel; 1.x downloads grammars at run time and fails offline, hence the pin in
pyproject.toml. Imports are lazy so `readbench.read` imports without tree-sitter loaded.

Line numbers are 1-based rows of `text.split("\\n")` (tree-sitter counts rows at `\\n` too).
A definition's range runs from its keyword line (`def`/`class`, after decorators, as in
Python's `ast` `lineno`) to the last line of its last non-comment token (`ast` `end_lineno`).
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from typing import Any

__all__ = ["OutlineEntry", "language_for_path", "outline", "python_function_bodies"]

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".md": "markdown",
    ".markdown": "markdown",
}

_JS_KINDS = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function*",
    "method_definition": "method",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
}

# node type -> label, per language. Python's `async def` is detected separately.
_KINDS: dict[str, dict[str, str]] = {
    "python": {"class_definition": "class", "function_definition": "def"},
    "javascript": _JS_KINDS,
    "typescript": _JS_KINDS,
    "tsx": _JS_KINDS,
    "go": {"function_declaration": "func", "method_declaration": "method", "type_spec": "type"},
    "rust": {
        "function_item": "fn",
        "struct_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "mod",
    },
    "java": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "method_declaration": "method",
        "constructor_declaration": "constructor",
    },
    "c": {"function_definition": "function", "struct_specifier": "struct"},
    "cpp": {
        "function_definition": "function",
        "struct_specifier": "struct",
        "class_specifier": "class",
        "namespace_definition": "namespace",
    },
    "ruby": {
        "class": "class",
        "module": "module",
        "method": "def",
        "singleton_method": "def self.",
    },
}

# Subtrees that never hold a definition the map reports; skipping them keeps a 2 MB file's
# walk from visiting every expression node. Python statements (def/class) only occur in
# blocks, so skipping expression-level nodes cannot change a Python outline.
_SKIP_COMMON = frozenset(
    {"comment", "string", "string_literal", "template_string", "number", "identifier"}
)
_SKIP_PYTHON = _SKIP_COMMON | frozenset(
    {
        "expression_statement",
        "return_statement",
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "assert_statement",
        "raise_statement",
        "delete_statement",
        "global_statement",
        "nonlocal_statement",
        "pass_statement",
        "break_statement",
        "continue_statement",
        "print_statement",
        "exec_statement",
        "type_alias_statement",
        "parameters",
        "argument_list",
        "decorator",
        "type",
        "concatenated_string",
    }
)


#: The node types of Python's expression statements: the concrete kinds under tree-sitter-python's
#: `expression_statement` supertype (assignments, `yield`, calls, operators, literals, lambdas,
#: comprehensions; tests/read/test_read_mapped.py checks the list against the grammar's own).
#: This grammar makes `expression_statement` a hidden supertype, so these nodes stand in blocks
#: where the statement was (`_SKIP_PYTHON`'s "expression_statement" no longer matches one).
#: None of them is a definition, and none holds a statement: Python's expressions (lambda bodies,
#: f-string interpolations and comprehensions included) are made of expressions only
#: (`_code_outline`; docs/specs/variants.md "C").
_PYTHON_EXPRESSIONS = frozenset(
    {
        "as_pattern", "assignment", "attribute", "augmented_assignment", "await", "binary_operator",
        "boolean_operator", "call", "comparison_operator", "concatenated_string", "conditional_expression",
        "dictionary", "dictionary_comprehension", "ellipsis", "false", "float", "generator_expression",
        "identifier", "integer", "lambda", "list", "list_comprehension", "list_splat", "named_expression",
        "none", "not_operator", "parenthesized_expression", "set", "set_comprehension", "string",
        "subscript", "true", "tuple", "tuple_expression", "unary_operator", "yield",
    }
)


_NAME_TYPES = {
    "identifier",
    "field_identifier",
    "qualified_identifier",
    "destructor_name",
    "operator_name",
    "type_identifier",
    "property_identifier",
    "constant",
}


@dataclass(frozen=True)
class OutlineEntry:
    """One definition or heading.

    `kind` is a label such as "class", "def", "async def", "fn", or "#"*level for a
    Markdown heading; `depth` its nesting among entries (0 = top level); lines 1-based,
    inclusive.
    """

    kind: str
    name: str
    start_line: int
    end_line: int
    depth: int

    def render(self) -> str:
        """One map line, e.g. `  def parse (lines 12-40)`."""
        return (
            f"{'  ' * self.depth}{self.kind} {self.name} (lines {self.start_line}-{self.end_line})"
        )


def language_for_path(path: str) -> str | None:
    """The grammar name for a file path by extension (".py" -> "python"), or None."""
    return _EXTENSIONS.get(posixpath.splitext(path)[1].lower())


@functools.lru_cache(maxsize=16)
def _parser(language: str) -> Any:
    from tree_sitter_language_pack import get_parser  # lazy: heavy native import

    return get_parser(language)  # type: ignore[arg-type]  # a value of _EXTENSIONS: one of the pack's names


def _parse(text: str, language: str) -> Any:
    return _parser(language).parse(text.encode("utf-8", errors="surrogatepass"))


def _effective_end_row(node: Any) -> int:
    """0-based row of the last non-comment token under `node`."""
    while node.child_count:
        children = [c for c in node.children if c.type != "comment"]
        if not children:
            break
        node = children[-1]
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:  # a token ending in a newline
        row -= 1
    return row


def _name_of(node: Any, language: str) -> str:
    name = node.child_by_field_name("name")
    if name is None and language in ("c", "cpp"):
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in _NAME_TYPES:
            decl = decl.child_by_field_name("declarator")
        name = decl
    if name is None and node.type == "impl_item":
        name = node.child_by_field_name("type")
    if name is None:
        return "?"
    return name.text.decode("utf-8", errors="replace")


def _kind_of(node: Any, language: str) -> str | None:
    if not node.is_named:  # e.g. Ruby's `class` keyword token has type "class" too
        return None
    kind = _KINDS[language].get(node.type)
    if kind is None:
        return None
    if node.type == "function_definition" and node.children and node.children[0].type == "async":
        return "async def"  # Python
    if (
        node.type in ("struct_specifier", "class_specifier")
        and node.child_by_field_name("body") is None
    ):
        return None  # a forward declaration or a type use, not a definition
    return kind


def _code_outline(root: Any, language: str, bodies: list[tuple[int, int]] | None = None) -> list[OutlineEntry]:
    """Outline entries of a parsed tree, in preorder over every named node outside the skip set.

    ``bodies``, when given, also receives the 0-based (start_row, end_row) of every
    ``function_definition``'s body met on the way (Python): the same nodes in the same order as
    SWE-agent's body query (`python_function_bodies`), so one walk serves both (a tree's nodes cost
    a Python object each).

    A Python expression-level node (`_PYTHON_EXPRESSIONS`) is not entered when its subtree holds no
    ERROR or MISSING node (`has_error`; asked once of the root when the whole tree is clean): a
    tree-sitter node without errors follows its grammar rule, and no Python expression rule holds a
    statement, so such a subtree holds no definition (nor a function body) and skipping it changes
    neither list. Only a subtree with an error, where recovery may have nested anything, is walked."""
    entries: list[OutlineEntry] = []
    skip = _SKIP_PYTHON if language == "python" else _SKIP_COMMON
    expressions = _PYTHON_EXPRESSIONS if language == "python" else frozenset()
    clean = not root.has_error

    def visit(node: Any, depth: int) -> None:
        if bodies is not None and node.type == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                bodies.append((body.start_point[0], body.end_point[0]))
        for child in node.named_children:
            kind_name = child.type
            if kind_name in skip or (kind_name in expressions and (clean or not child.has_error)):
                continue
            kind = _kind_of(child, language)
            if kind is None:
                visit(child, depth)
                continue
            entries.append(
                OutlineEntry(
                    kind=kind,
                    name=_name_of(child, language),
                    start_line=child.start_point[0] + 1,
                    end_line=_effective_end_row(child) + 1,
                    depth=depth,
                )
            )
            visit(child, depth + 1)

    visit(root, 0)
    return entries


def _markdown_outline(root: Any, n_lines: int) -> list[OutlineEntry]:
    heads: list[tuple[int, int, str]] = []  # (row, level, title)

    def visit(node: Any) -> None:
        for child in node.children:
            if child.type == "atx_heading":
                marker = child.children[0].type  # atx_h{n}_marker
                level = int(marker[5]) if marker.startswith("atx_h") else 1
                content = child.child_by_field_name("heading_content")
                title = content.text.decode("utf-8", errors="replace").strip() if content else ""
                heads.append((child.start_point[0], level, title))
            elif child.type == "setext_heading":
                underline = child.children[-1].type
                level = 1 if underline == "setext_h1_underline" else 2
                content = child.child_by_field_name("heading_content")
                title = content.text.decode("utf-8", errors="replace").strip() if content else ""
                heads.append((child.start_point[0], level, title.splitlines()[0] if title else ""))
            else:
                visit(child)

    visit(root)
    entries: list[OutlineEntry] = []
    stack: list[int] = []  # levels of open headings
    for i, (row, level, title) in enumerate(heads):
        end = n_lines
        for row2, level2, _ in heads[i + 1 :]:
            if level2 <= level:
                end = row2  # 0-based row of next heading == 1-based line before it
                break
        while stack and stack[-1] >= level:
            stack.pop()
        entries.append(OutlineEntry("#" * level, title, row + 1, max(end, row + 1), len(stack)))
        stack.append(level)
    return entries


def outline(text: str, path: str) -> list[OutlineEntry] | None:
    """Definitions (or Markdown headings) of `text` in document order, or None when no
    grammar applies to `path`'s extension.

    Args:
        text: the decoded file text.
        path: used only for its extension.

    Returns:
        Entries with 1-based inclusive line ranges and nesting depth; [] when the grammar
        applies but finds no definitions.
    """
    language = language_for_path(path)
    if language is None:
        return None
    if len(text) <= MEMO_MAX_CHARS:
        return list(_parsed(text, language)[0])
    return _outline_of(_parse(text, language), text, language)


def _outline_of(tree: Any, text: str, language: str) -> list[OutlineEntry]:
    if language == "markdown":
        n_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return _markdown_outline(tree.root_node, n_lines)
    return _code_outline(tree.root_node, language)


#: Texts up to this many characters have their parse results memoised (`_parsed`, the last 16
#: texts: at most 16 M characters held): a replay asks for the same file's outline and function
#: bodies under several read presets (C, swe-agent).
MEMO_MAX_CHARS = 1_000_000


@functools.lru_cache(maxsize=16)
def _parsed(text: str, language: str) -> tuple[tuple[OutlineEntry, ...], tuple[tuple[int, int], ...]]:
    """(outline, Python function bodies) of `text` from one parse (bodies empty for other languages)."""
    tree = _parse(text, language)
    if language == "python":
        bodies: list[tuple[int, int]] = []
        entries = _code_outline(tree.root_node, "python", bodies)
        return tuple(entries), tuple(bodies)
    return tuple(_outline_of(tree, text, language)), ()


def python_function_bodies(text: str) -> list[tuple[int, int]]:
    """0-based (start_row, end_row) of every Python function body (`function_definition`'s
    `body` field, nested ones included) in document order, as SWE-agent's file map finds
    them with the query `(function_definition body: (_) @body)` (anchors.md §1)."""
    if len(text) <= MEMO_MAX_CHARS:
        return list(_parsed(text, "python")[1])
    bodies: list[tuple[int, int]] = []
    _code_outline(_parse(text, "python").root_node, "python", bodies)
    return bodies
