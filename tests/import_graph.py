"""The package's import graph, module by module, read from the source with `ast`: every import a module can run
(in functions too) and, apart, those under `if TYPE_CHECKING:` (a type's dependency, which a reader follows as
surely as a call's). Its circles are its strongly connected components of more than one module.

    python tests/import_graph.py            # the circles, with one import of each edge in them
    python tests/import_graph.py --dot      # the whole graph for Graphviz (dashed: type-only imports)
    python tests/import_graph.py --runtime  # the circles of the imports that run only
"""
from __future__ import annotations

import ast
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field

PACKAGE_NAME = "colstats_lab"
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE_NAME)


def runtime_imports(tree: ast.AST):
    """The import nodes of a module, skipping `if TYPE_CHECKING:` blocks (they never run)."""
    return (node for node, type_only in all_imports(tree) if not type_only)


def all_imports(tree: ast.AST):
    """(import node, whether it sits under `if TYPE_CHECKING:`) of every import of a module."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, type_only = stack.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            stack.extend((child, True) for child in node.body)
            stack.extend((child, type_only) for child in node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        stack.extend((child, type_only) for child in ast.iter_child_nodes(node))


def package_modules(package: str = PACKAGE) -> dict[str, str]:
    """Dotted module name -> its file, for every module of the package (a package by its `__init__.py`)."""
    modules = {}
    root = os.path.dirname(package)
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, name), root)[:-3].split(os.sep)
                modules[".".join(parts if name != "__init__.py" else parts[:-1])] = os.path.join(folder, name)
    return modules


@dataclass
class ImportGraph:
    """module -> imported module -> where (`path:line`), for the imports that run and for the type-only ones."""

    runtime: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    type_only: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))

    def edges(self, runtime_only: bool = False) -> dict[str, set[str]]:
        joined: dict[str, set[str]] = defaultdict(set)
        for graph in (self.runtime,) if runtime_only else (self.runtime, self.type_only):
            for module, imported in graph.items():
                joined[module] |= set(imported)
        return joined

    def where(self, module: str, imported: str) -> str:
        return self.runtime.get(module, {}).get(imported) or self.type_only[module][imported] + " (type only)"


def import_graph(package: str = PACKAGE) -> ImportGraph:
    modules = package_modules(package)
    graph = ImportGraph()
    for module, path in modules.items():
        is_package = path.endswith("__init__.py")
        base = module.split(".") if is_package else module.split(".")[:-1]
        for node, type_only in all_imports(ast.parse(open(path).read())):
            for target in _targets(node, base, modules):
                if target != module:
                    edges = graph.type_only if type_only else graph.runtime
                    edges[module].setdefault(target, f"{os.path.relpath(path, os.path.dirname(package))}:{node.lineno}")
    for module in list(graph.type_only):  # an edge that also runs is a runtime edge
        for target in list(graph.type_only[module]):
            if target in graph.runtime.get(module, {}):
                del graph.type_only[module][target]
    return graph


def _targets(node: ast.Import | ast.ImportFrom, base: list[str], modules: dict[str, str]) -> list[str]:
    """The package's modules an import names: `from .x import y` is module `x.y` where that is a module, else `x`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if node.level:
        origin = base[:len(base) - node.level + 1]
        module = ".".join(origin + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    if module.split(".")[0] != PACKAGE_NAME:
        return []
    return [f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module for alias in node.names]


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, following = work[-1]
            advanced = False
            for target in following:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
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
    return sorted(found)


def describe(graph: ImportGraph, circle: list[str]) -> str:
    members = set(circle)
    edges = graph.edges()
    lines = [f"{len(circle)} modules: " + ", ".join(circle)]
    lines += [f"  {module} -> {imported} at {graph.where(module, imported)}"
              for module in circle for imported in sorted(edges[module] & members)]
    return "\n".join(lines)


def dot(graph: ImportGraph) -> str:
    lines = ["digraph imports {", "  rankdir=LR; node [shape=box, fontsize=10];"]
    for style, edges in (("solid", graph.runtime), ("dashed", graph.type_only)):
        lines += [f'  "{a}" -> "{b}" [style={style}];' for a in sorted(edges) for b in sorted(edges[a])]
    return "\n".join(lines + ["}"])


def main(argv: list[str]) -> int:
    graph = import_graph()
    if "--dot" in argv:
        print(dot(graph))
        return 0
    found = circles(graph.edges(runtime_only="--runtime" in argv))
    for circle in found:
        print(describe(graph, circle))
    print(f"{len(found)} circle(s) among {len(package_modules())} modules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
