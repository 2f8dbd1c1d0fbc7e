"""No import cycle in readbench, counting every import: module level, inside functions (lazy) and
under ``if TYPE_CHECKING``, read from the source with `ast` (docs/architecture.md, "Layers").

Two graphs: between readbench's top-level units (``readbench.run``, ``readbench.dcp``, ...: a
package and everything in it is one node) and between its modules. Each must be acyclic.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "readbench"


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``*.py`` under `root` (a package dir)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_edges(root: Path) -> dict[str, dict[str, list[int]]]:
    """importer -> imported module -> line numbers, every import inside the package `root`.

    ``from a import b`` is an edge to ``a.b`` when that is a module, else to ``a``; relative
    imports are resolved; a name that is not a module of the package is cut back to its
    nearest enclosing module (``from readbench.dcp._types import X`` -> ``readbench.dcp._types``).
    """
    modules = module_names(root)
    edges: dict[str, dict[str, list[int]]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package[: len(package) - (node.level - 1)]
                    base = ".".join(parent + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.setdefault(name, {}).setdefault(target, []).append(node.lineno)
    return edges


def unit_of(module: str) -> str:
    """The top-level unit of a module: ``readbench.run.task`` -> ``run``; the package itself is ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    nodes = sorted(set(graph) | {w for targets in graph.values() for w in targets})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def unit_graph(edges: dict[str, dict[str, list[int]]]) -> dict[str, set[str]]:
    """Edges between top-level units (an import of the package ``readbench`` itself is no edge)."""
    graph: dict[str, set[str]] = {}
    for importer, targets in edges.items():
        for target in targets:
            a, b = unit_of(importer), unit_of(target)
            if a != b and b:
                graph.setdefault(a, set()).add(b)
    return graph


def explain(component: list[str], edges: dict[str, dict[str, list[int]]], unit_level: bool) -> str:
    """The imports inside one cycle, as ``file:line importer -> imported`` lines."""
    key = unit_of if unit_level else (lambda m: m)
    lines = []
    for importer, targets in sorted(edges.items()):
        for target, linenos in sorted(targets.items()):
            if key(importer) in component and key(target) in component and key(importer) != key(target):
                lines.append(f"  {importer}:{linenos[0]} imports {target}")
    return f"cycle {' <-> '.join(component)}:\n" + "\n".join(lines)


def test_no_cycle_between_readbenchs_packages():
    edges = import_edges(PACKAGE)
    graph = unit_graph(edges)
    assert {"agent", "dcp", "tools"} <= graph["run"]  # the graph is really read (run builds the agent's task)
    found = cycles(graph)
    assert not found, "\n".join(explain(c, edges, unit_level=True) for c in found)


def test_no_cycle_between_readbenchs_modules():
    edges = import_edges(PACKAGE)
    graph = {importer: set(targets) for importer, targets in edges.items()}
    found = cycles(graph)
    assert not found, "\n".join(explain(c, edges, unit_level=False) for c in found)


def test_base_imports_nothing_above_it():
    edges = import_edges(PACKAGE)
    above = {target for importer, targets in edges.items() if unit_of(importer) == "base" for target in targets
             if unit_of(target) != "base"}
    assert above == set()


def test_a_lazy_import_in_a_function_closes_a_cycle(tmp_path):
    pkg = tmp_path / "readbench"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from readbench.b.y import f\n")
    (pkg / "b" / "__init__.py").write_text("")
    (pkg / "b" / "y.py").write_text("def f():\n    from ..a import z\n    return z\n")
    (pkg / "a" / "z.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import readbench.b\n")
    edges = import_edges(pkg)
    # `from ..a import z` runs the package readbench.a (whose import of b.y closes the module cycle)
    assert edges == {"readbench.a": {"readbench.b.y": [1]}, "readbench.b.y": {"readbench.a": [2], "readbench.a.z": [2]},
                     "readbench.a.z": {"readbench.b": [3]}}
    assert cycles(unit_graph(edges)) == [["a", "b"]]
    assert cycles({m: set(t) for m, t in edges.items()}) == [["readbench.a", "readbench.b.y"]]
    assert "readbench.b.y:2 imports readbench.a.z" in explain(["a", "b"], edges, unit_level=True)
