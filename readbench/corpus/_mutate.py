"""Seeded one-token mutation sites found with `ast`, written as UTF-8 byte-span edits.

docs/specs/corpus.md §3.1 "How the generator works" and "Mutation operators": inside function
bodies only, compare flip (``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``is``/``is not``,
``in``/``not in``), ``+``/``-``, ``*``/``//``, ``and``/``or``, int literal 0-16 plus one,
``return True``/``False``, drop ``not``, swap the first two positional call arguments.

`ast` column offsets are UTF-8 byte offsets, so every site is a ``(byte_start, byte_end, new)``
replacement of the file's bytes: formatting and comments survive and exactly one line changes.
Pure functions over bytes; nothing here runs tests.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["MutationSite", "apply_site", "find_sites", "parses", "unique_snippet"]

_CMP_FLIP = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}
_BIN_FLIP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"), ast.FloorDiv: ("//", "*")}
_BOOL_FLIP = {ast.And: ("and", "or"), ast.Or: ("or", "and")}


@dataclass(frozen=True)
class MutationSite:
    """One candidate one-token edit.

    Attributes:
        operator: ``compare``, ``binop``, ``boolop``, ``int``, ``return_bool``, ``drop_not``,
            ``swap_args``.
        line: 1-based line of the edit.
        byte_start: UTF-8 byte offset (into the whole file) where the replaced span starts.
        byte_end: exclusive end offset of the replaced span.
        old: the replaced text (decoded span).
        new: the replacement text.
        func: qualified name of the innermost enclosing function (``Class.method``).
        func_line: 1-based ``def`` line of that function.
        code_line: first line of that function's code object (its first decorator, else the
            ``def`` line): the key a call-tracer sees as ``co_firstlineno``.
    """

    operator: str
    line: int
    byte_start: int
    byte_end: int
    old: str
    new: str
    func: str
    func_line: int
    code_line: int


def _line_offsets(data: bytes) -> list[int]:
    offs = [0, 0]  # offs[lineno] = byte offset of the line start (1-based)
    for i, b in enumerate(data):
        if b == 0x0A:
            offs.append(i + 1)
    return offs


def _gap_op(data: bytes, start: int, end: int, op: str) -> tuple[int, int] | None:
    """Locate ``op`` in the bytes between two operands; None if the gap is not just the op.

    The gap may hold whitespace and parentheses (``(a) < b``) but no comment or line break, so
    the edit stays on one line.
    """
    gap = data[start:end].decode("utf-8")
    if "#" in gap or "\n" in gap or "\\" in gap:
        return None
    words = op.split()
    pattern = r"\s+".join(re.escape(w) for w in words)
    if op[0].isalpha():
        pattern = rf"(?<![A-Za-z0-9_]){pattern}(?![A-Za-z0-9_])"
    else:
        pattern = rf"(?<![<>=!/*+-]){pattern}(?![<>=/*])"
    hits = list(re.finditer(pattern, gap))
    if len(hits) != 1:
        return None
    rest = gap[: hits[0].start()] + gap[hits[0].end() :]
    if rest.strip(" ()"):
        return None
    s = start + len(gap[: hits[0].start()].encode("utf-8"))
    return s, s + len(hits[0].group(0).encode("utf-8"))


class _Finder(ast.NodeVisitor):
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offs = _line_offsets(data)
        self.stack: list[tuple[str, int, bool]] = []  # (name, lineno, is_function)
        self.code_lines: list[int] = []  # co_firstlineno of the enclosing functions
        self.sites: list[MutationSite] = []

    # -- helpers -----------------------------------------------------------------------------
    def _start(self, node: ast.expr | ast.stmt) -> int:
        return self.offs[node.lineno] + node.col_offset

    def _end(self, node: ast.expr | ast.stmt) -> int:
        return self.offs[node.end_lineno or node.lineno] + (node.end_col_offset or 0)  # None only for made-up nodes

    def _in_function(self) -> bool:
        return any(is_fn for _, _, is_fn in self.stack)

    def _add(self, operator: str, start: int, end: int, new: str) -> None:
        if not self._in_function():
            return
        line = self.data.count(b"\n", 0, start) + 1
        if self.data.count(b"\n", start, end):
            return
        fn_line = next(ln for _, ln, is_fn in reversed(self.stack) if is_fn)
        code_line = self.code_lines[-1]
        self.sites.append(
            MutationSite(
                operator=operator,
                line=line,
                byte_start=start,
                byte_end=end,
                old=self.data[start:end].decode("utf-8"),
                new=new,
                func=".".join(n for n, _, _ in self.stack),
                func_line=fn_line,
                code_line=code_line,
            )
        )

    # -- scopes: only bodies count (decorators and defaults are evaluated at def time) -------
    def _visit_scope(self, node, is_fn: bool) -> None:
        for dec in node.decorator_list:
            self._visit_outside(dec)
        if is_fn:
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    self._visit_outside(d)
        self.stack.append((node.name, node.lineno, is_fn))
        if is_fn:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            self.code_lines.append(first)
        for stmt in node.body:
            self.visit(stmt)
        if is_fn:
            self.code_lines.pop()
        self.stack.pop()

    def _visit_outside(self, node: ast.AST) -> None:
        saved, self.stack = self.stack, []
        saved_code, self.code_lines = self.code_lines, []
        self.visit(node)
        self.stack, self.code_lines = saved, saved_code

    def visit_FunctionDef(self, node):
        self._visit_scope(node, True)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._visit_scope(node, False)

    # -- operators ---------------------------------------------------------------------------
    def visit_Compare(self, node):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            old, new = _CMP_FLIP[type(op)]
            span = _gap_op(self.data, self._end(left), self._start(right), old)
            if span:
                self._add("compare", span[0], span[1], new)
            left = right
        self.generic_visit(node)

    def visit_BinOp(self, node):
        flip = _BIN_FLIP.get(type(node.op))
        if flip:
            span = _gap_op(self.data, self._end(node.left), self._start(node.right), flip[0])
            if span:
                self._add("binop", span[0], span[1], flip[1])
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        old, new = _BOOL_FLIP[type(node.op)]
        span = _gap_op(self.data, self._end(node.values[0]), self._start(node.values[1]), old)
        if span:
            self._add("boolop", span[0], span[1], new)
        self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if type(v) is int and 0 <= v <= 16:
            s, e = self._start(node), self._end(node)
            if self.data[s:e] == str(v).encode():
                self._add("int", s, e, str(v + 1))

    def visit_Return(self, node):
        v = node.value
        if isinstance(v, ast.Constant) and type(v.value) is bool:
            s, e = self._start(v), self._end(v)
            self._add("return_bool", s, e, "False" if v.value else "True")
            return
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            s, e = self._start(node), self._start(node.operand)
            text = self.data[s:e].decode("utf-8")
            # `not x` -> `x`; skip `not(` forms and anything with comments or line breaks
            if re.fullmatch(r"not\s+", text):
                self._add("drop_not", s, self._end(node.operand), self.data[e : self._end(node.operand)].decode("utf-8"))
        self.generic_visit(node)

    def visit_Call(self, node):
        args = node.args
        if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]):
            a, b = args[0], args[1]
            sa, ea, sb, eb = self._start(a), self._end(a), self._start(b), self._end(b)
            ta, tb = self.data[sa:ea], self.data[sb:eb]
            if ta != tb:
                mid = self.data[ea:sb]
                new = (tb + mid + ta).decode("utf-8")
                self._add("swap_args", sa, eb, new)
        self.generic_visit(node)


def find_sites(data: bytes, *, check_syntax: bool = True) -> list[MutationSite]:
    """All mutation sites of a Python file, in source order (by byte_start, then operator).

    Args:
        data: the file's bytes (UTF-8).
        check_syntax: drop sites whose edit does not parse. One ``ast.parse`` per site costs
            minutes on a 300 KB file with 1,000 sites, so the build passes False and checks only
            the sites it tries (:func:`parses`).

    Returns:
        Sites; sites spanning lines are never produced.

    Raises:
        SyntaxError: ``data`` is not valid Python.
    """
    tree = ast.parse(data)
    finder = _Finder(data)
    finder.visit(tree)
    sites = sorted(finder.sites, key=lambda s: (s.byte_start, s.byte_end, s.operator))
    return [s for s in sites if parses(data, s)] if check_syntax else sites


def parses(data: bytes, site: MutationSite) -> bool:
    """Whether the file still parses after applying ``site``."""
    try:
        ast.parse(apply_site(data, site))
    except SyntaxError:
        return False
    return True


def apply_site(data: bytes, site: MutationSite) -> bytes:
    """Return ``data`` with the site's span replaced by ``site.new``.

    Raises:
        ValueError: the bytes at the span are not ``site.old`` (the file changed).
    """
    if data[site.byte_start : site.byte_end] != site.old.encode("utf-8"):
        raise ValueError(f"line {site.line}: expected {site.old!r} at the site, file differs")
    return data[: site.byte_start] + site.new.encode("utf-8") + data[site.byte_end :]


def unique_snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The shortest run of whole lines around ``text[start:end]`` that occurs once in ``text``.

    Starts with the line(s) holding the span (without the final newline) and grows one line at
    a time, alternately upward and downward, until the snippet is unique.

    Args:
        text: file text; ``start``/``end`` are character offsets of the edited span.

    Returns:
        (snippet, snippet_start, snippet_end) as character offsets in ``text``.

    Raises:
        ValueError: no unique run exists (the whole file repeats itself).
    """
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    grow_up = True
    while True:
        snippet = text[lo:hi]
        if snippet.strip() and text.count(snippet) == 1:
            return snippet, lo, hi
        if lo == 0 and hi == len(text):
            raise ValueError("no unique snippet around the span")
        if (grow_up and lo > 0) or hi == len(text):
            lo = text.rfind("\n", 0, lo - 1) + 1
        else:
            nxt = text.find("\n", hi + 1)
            hi = len(text) if nxt < 0 else nxt
        grow_up = not grow_up
