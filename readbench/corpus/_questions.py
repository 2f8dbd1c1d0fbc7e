"""Question generators over one Python file, answers computed with `ast` (pure, seeded).

- Locate-and-answer (docs/specs/corpus.md §3.2): the default value of a parameter, the single
  literal message of the only ``raise`` in a function, a function's ``def`` line, the number of
  ``return`` statements in a function. Only definitions past ``min_line`` whose qualified name
  occurs once in the file are asked about.
- Whole-file counts (§3.4 "Count and list questions"): ``raise X`` statements, functions with a
  parameter named P, methods defined in a class, module-level functions.

Each generator returns :class:`Question` values; the build turns them into task records.
"""

from __future__ import annotations

import ast
import functools
import random
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["LOCATE_KINDS", "WHOLEFILE_KINDS", "FunctionInfo", "Question", "functions",
           "locate_questions", "question_pairs", "wholefile_questions"]

LOCATE_KINDS = ("default", "raise_msg", "def_line", "return_count")
WHOLEFILE_KINDS = ("count_raise", "count_param", "count_methods", "count_toplevel")
_ANSWER_LINE = "Reply with the answer alone on a final line of the form `ANSWER: <value>`."


@dataclass(frozen=True)
class Question:
    """A generated question.

    Attributes:
        kind: one of LOCATE_KINDS or WHOLEFILE_KINDS.
        prompt: the user message (ends with the ``ANSWER:`` instruction).
        answer: the exact expected value.
        target_line: line holding the answer; None for whole-file counts.
        search_key: what a capable model would grep for; for whole-file counts it is set only
            when a grep count of it equals the answer, else None (the whole file is needed).
    """

    kind: str
    prompt: str
    answer: str
    target_line: int | None
    search_key: str | None


@dataclass(frozen=True)
class FunctionInfo:
    """A function or method: ``qualname`` like ``Class.method``, ``node`` its ast node."""

    qualname: str
    name: str
    line: int
    node: ast.FunctionDef | ast.AsyncFunctionDef


def functions(tree: ast.Module) -> list[FunctionInfo]:
    """All functions and methods at any depth, in source order, with dotted qualified names."""
    out: list[FunctionInfo] = []

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{node.name}"
                out.append(FunctionInfo(q, node.name, node.lineno, node))
                walk(node.body, q + ".")
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(node, field, None)
                    if isinstance(sub, list):
                        walk(sub, prefix)

    walk(tree.body, "")
    return out


def _own_nodes(fn: ast.AST):
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names


# a line as the parser (and ast.get_source_segment) counts lines: ended by \r\n, \r or \n only,
# never by \f, \v or the other breaks str.splitlines() knows; the end is kept
_SOURCE_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@functools.lru_cache(maxsize=4)
def _source_lines(text: str) -> tuple[str, ...]:
    """``text`` split into lines as :func:`ast.get_source_segment` splits it, once per text."""
    return tuple(_SOURCE_LINE.findall(text))


def _segment(text: str, node: ast.expr) -> str | None:
    """:func:`ast.get_source_segment` (unpadded) over lines split once per ``text``.

    The stdlib re-splits the whole source, one character at a time, on every call, which made
    question generation quadratic in a file's length: a third of a cold corpus build's CPU.
    Returns None when ``node`` lacks an end position, as the stdlib does.
    """
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    lines = _source_lines(text)
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return "".join([lines[first].encode()[node.col_offset:].decode(), *lines[first + 1:last],
                    lines[last].encode()[:node.end_col_offset].decode()])


def _unique(funcs: list[FunctionInfo]) -> list[FunctionInfo]:
    counts = Counter(f.qualname for f in funcs)
    return [f for f in funcs if counts[f.qualname] == 1]


def _candidates(kind: str, f: FunctionInfo, text: str, file: str):
    """Yield (question, answer, line, search_key) for one function and kind."""
    q, node = f.qualname, f.node
    what = "method" if "." in q else "function"
    key = f"def {f.name}("
    if kind == "def_line":
        yield (f"In `{file}`, on which line does the {what} `{q}` start? Give the line number of "
               f"its `def` line (1-based).", str(node.lineno), node.lineno, key)
    elif kind == "return_count":
        n = sum(isinstance(x, ast.Return) for x in _own_nodes(node))
        if n >= 2:
            yield (f"In `{file}`, how many `return` statements does the {what} `{q}` contain? Count "
                   f"only its own body, not nested functions or classes.", str(n), node.lineno, key)
    elif kind == "default":
        a = node.args
        pos = [*a.posonlyargs, *a.args]
        pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults))
        pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for arg, default in pairs:
            seg = _segment(text, default)
            if seg and "\n" not in seg and len(seg) <= 40:
                yield (f"In `{file}`, what is the default value of the parameter `{arg.arg}` of the "
                       f"{what} `{q}`? Give it exactly as written in the source.", seg,
                       default.lineno, key)
    elif kind == "raise_msg":
        raises = [x for x in _own_nodes(node) if isinstance(x, ast.Raise)]
        if len(raises) == 1:
            exc = raises[0].exc
            if (isinstance(exc, ast.Call) and len(exc.args) == 1 and not exc.keywords
                    and isinstance(exc.args[0], ast.Constant) and isinstance(exc.args[0].value, str)
                    and exc.args[0].value.strip() and "\n" not in exc.args[0].value):
                msg = exc.args[0]
                seg = _segment(text, msg) or ""
                # the answer must be verbatim on one line (no escapes, no implicit concatenation):
                # target_line is the message's line, where a reader sees it
                if msg.lineno == msg.end_lineno and isinstance(msg.value, str) and msg.value in seg:
                    yield (f"In `{file}`, the {what} `{q}` raises exactly one exception, with a "
                           f"literal message. What is the message? Give the text without quotes.",
                           msg.value, msg.lineno, key)


def locate_questions(
    text: str, file: str, n: int, rng: random.Random, min_line: int, start: int = 0
) -> list[Question]:
    """Up to ``n`` locate-and-answer questions, kinds taken round-robin in LOCATE_KINDS order.

    ``start`` rotates the order (kind ``LOCATE_KINDS[start % 4]`` first), so a build that asks
    one or two questions per file still balances the kinds across files.

    Args:
        text: the file's source.
        file: tree-relative path used in the prompt.
        n: how many questions.
        rng: the seeded generator (draws the candidate order).
        min_line: only definitions whose answer line is past this line.

    Returns:
        Questions about distinct functions; fewer than ``n`` if the pools run dry.

    Raises:
        SyntaxError: ``text`` is not Python.
    """
    tree = ast.parse(text)
    funcs = [f for f in _unique(functions(tree)) if f.line > min_line]
    pools = {}
    for kind in LOCATE_KINDS:
        pool = [(f, c) for f in funcs for c in _candidates(kind, f, text, file)]
        rng.shuffle(pool)
        pools[kind] = pool
    out: list[Question] = []
    used: set[str] = set()
    kinds = LOCATE_KINDS[start % len(LOCATE_KINDS):] + LOCATE_KINDS[:start % len(LOCATE_KINDS)]
    while len(out) < n and any(pools.values()):
        for kind in kinds:
            pool = pools[kind]
            while pool and len(out) < n:
                f, (prompt, answer, line, key) = pool.pop()
                if f.qualname in used:
                    continue
                used.add(f.qualname)
                out.append(Question(kind, f"{prompt} {_ANSWER_LINE}", answer, line, key))
                break
    return out


def question_pairs(text: str, file: str, n: int, rng: random.Random, min_line: int,
                   exclude: frozenset[str] = frozenset()) -> list[tuple[Question, Question]]:
    """Up to ``n`` pairs of questions, each pair about one function past ``min_line``: first a
    body question (default value, raise message or ``return`` count, drawn in that order of
    preference per function), then its ``def`` line (the long-session family asks the second one
    several prompts later, after DCP's recency protections have expired, readbench.corpus._long).

    Args:
        text, file, rng, min_line: as :func:`locate_questions`.
        n: how many pairs.
        exclude: qualified names not to ask about (e.g. the functions that hold bugs).

    Returns:
        Pairs about distinct functions, in the rng's order; fewer than ``n`` if the pool runs dry.

    Raises:
        SyntaxError: ``text`` is not Python.
    """
    funcs = [f for f in _unique(functions(ast.parse(text))) if f.line > min_line and f.qualname not in exclude]
    rng.shuffle(funcs)
    out: list[tuple[Question, Question]] = []
    for f in funcs:
        if len(out) >= n:
            break
        body = [c for kind in ("default", "raise_msg", "return_count") for c in
                [(kind, *x) for x in _candidates(kind, f, text, file)][:1]]
        if not body:
            continue
        kind, prompt, answer, line, key = body[int(rng.random() * len(body))]
        [(_, dprompt, danswer, dline, dkey)] = [("def_line", *x) for x in _candidates("def_line", f, text, file)]
        out.append((Question(kind, f"{prompt} {_ANSWER_LINE}", answer, line, key),
                    Question("def_line", f"{dprompt} {_ANSWER_LINE}", danswer, dline, dkey)))
    return out


def _exc_name(node: ast.Raise) -> str | None:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Name):
        return exc.id
    return None


def _grep_count(text: str, needle: str) -> int:
    """Occurrences of ``needle`` not followed by an identifier character (what grep -c finds)."""
    return len(re.findall(re.escape(needle) + r"(?![A-Za-z0-9_])", text))


def _wholefile_pool(kind: str, tree: ast.Module, file: str, text: str) -> list[tuple[str, str, str | None]]:
    """(prompt, answer, search_key) candidates; search_key only when a grep count is exact."""
    funcs = functions(tree)
    if kind == "count_raise":
        c = Counter(_exc_name(x) for x in ast.walk(tree) if isinstance(x, ast.Raise) and x.exc)
        return [(f"How many `raise {name}` statements (raising `{name}` itself, called or not; "
                 f"not subclasses or re-raises) does `{file}` contain?", str(k),
                 f"raise {name}" if _grep_count(text, f"raise {name}") == k else None)
                for name, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0] or ""))
                if name and k >= 3][:3]
    if kind == "count_param":
        c = Counter(p for f in funcs for p in set(_params(f.node)) if p not in ("self", "cls"))
        return [(f"How many functions and methods in `{file}` (at any nesting level) have a "
                 f"parameter named `{p}` (of any kind: positional, keyword-only, *args or "
                 f"**kwargs)?", str(k), None) for p, k in sorted(c.items()) if 3 <= k <= 60]
    if kind == "count_methods":
        out: list[tuple[str, str, str | None]] = []
        for cls in (x for x in ast.walk(tree) if isinstance(x, ast.ClassDef)):
            k = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in cls.body)
            same = [x for x in ast.walk(tree) if isinstance(x, ast.ClassDef) and x.name == cls.name]
            if k >= 5 and len(same) == 1:
                out.append((f"How many methods (`def` or `async def` statements directly in the "
                            f"class body, including properties and static methods) does class "
                            f"`{cls.name}` in `{file}` define?", str(k), None))
        return out
    if kind == "count_toplevel":
        k = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in tree.body)
        return [(f"How many module-level functions (`def` or `async def` at the top level, not "
                 f"methods or nested functions) does `{file}` define?", str(k), None)] if k else []
    raise ValueError(f"unknown whole-file kind {kind!r}")


def wholefile_questions(
    text: str, file: str, n: int, rng: random.Random, start: int = 0
) -> list[Question]:
    """Up to ``n`` whole-file count questions, kinds round-robin in WHOLEFILE_KINDS order
    rotated by ``start`` (see :func:`locate_questions`).

    Raises:
        SyntaxError: ``text`` is not Python.
    """
    tree = ast.parse(text)
    pools = {}
    for kind in WHOLEFILE_KINDS:
        pool = _wholefile_pool(kind, tree, file, text)
        rng.shuffle(pool)
        pools[kind] = pool
    out: list[Question] = []
    k = start % len(WHOLEFILE_KINDS)
    kinds = WHOLEFILE_KINDS[k:] + WHOLEFILE_KINDS[:k]
    while len(out) < n and any(pools.values()):
        for kind in kinds:
            if pools[kind] and len(out) < n:
                prompt, answer, key = pools[kind].pop()
                out.append(Question(kind, f"{prompt} {_ANSWER_LINE}", answer, None, key))
    return out
