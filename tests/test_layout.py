"""The packages' import graph, read from the source (every import a module can run, in functions too; not
those under `if TYPE_CHECKING:`): it has no cycles, and the lower layers never reach up."""
from __future__ import annotations

import ast
import os
from collections import defaultdict
from itertools import pairwise

from import_graph import circles, describe, import_graph, runtime_imports

import colstats_lab

PACKAGE = os.path.dirname(os.path.abspath(colstats_lab.__file__))

# what each layer may import from the lab (besides its own modules); a package or module missing here
# may import anything, as long as the graph stays acyclic
MAY_IMPORT = {
    "errors": set(),
    "sizes": set(),
    "coltypes": {"errors"},
    "quoting": {"errors"},  # the one place a name or a value becomes SQL text
    "files": set(),
    "caches": set(),  # the process's budget of every cache, in bytes
    "storage": {"caches", "errors", "files"},  # the one seam to every file system: above it, nothing touches `os` for a file
    "file_columns": {"errors"},  # how a table's columns are found in its files: names and units, no I/O of its own
    # column statistics as data: Hive's model, sketches, quantiles, merges, drift, frequent items; no SQL, no I/O
    "column_statistics": {"coltypes", "errors", "file_columns", "quoting"},
    # Hive's rules in SQL
    "metastore": {"column_statistics", "coltypes", "errors", "file_columns", "files", "quoting", "storage"},
    "stats": {"caches", "column_statistics", "coltypes", "errors", "file_columns", "files", "metastore", "quoting",
              "storage"},
    # lexer, parser, statements: never the commands
    "sql": {"column_statistics", "coltypes", "errors", "metastore", "quoting", "tables"},
    "plans": {"quoting"},  # Spark's plans read operator by operator: no metastore, no Lab
    "ui": {"analyze", "column_statistics", "coltypes", "errors", "frames", "metastore", "plans", "pruning", "quoting",
           "sizes", "skew", "sql"},  # never Lab
}


def unit_of(module: str) -> str:
    """The package (or top-level module) a dotted module name belongs to: `colstats_lab.sql.parser` -> `sql`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def import_edges() -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> the `path:line`s importing it."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].split(os.sep)
            package_parts = relative[:-1]  # what relative imports start from, for a package its own folder
            module = ".".join(relative if name != "__init__.py" else relative[:-1])
            for node in runtime_imports(ast.parse(open(path).read())):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package_parts[:len(package_parts) - node.level + 1]
                    targets = [".".join(base + [node.module])] if node.module else \
                        [".".join(base + [alias.name]) for alias in node.names]
                else:
                    names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                    targets = [t for t in names if t and t.split(".")[0] == "colstats_lab"]
                for target in targets:
                    source, imported = unit_of(module), unit_of(target)
                    if source != imported:
                        edges[source][imported].append(f"{os.path.relpath(path, os.path.dirname(PACKAGE))}:{node.lineno}")
    return edges


def cycle_through(edges, start: str) -> list[str] | None:
    """A shortest import path from `start` back to itself, if there is one."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for unit in frontier:
            for imported in edges.get(unit, {}):
                if imported == start:
                    return paths[unit] + [start]
                if imported not in paths:
                    paths[imported] = paths[unit] + [imported]
                    following.append(imported)
        frontier = following
    return None


def test_the_packages_import_each_other_without_cycles():
    edges = import_edges()
    assert {"sql", "commands", "metastore", "lab", "ui", "workbench"} <= set(edges)  # the walk found them
    cycles = []
    for unit in sorted(edges):
        cycle = cycle_through(edges, unit)
        if cycle:
            cycles.append(" -> ".join(cycle) + "  (" + "; ".join(
                f"{a}->{b} at {edges[a][b][0]}" for a, b in pairwise(cycle)) + ")")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_module_imports_itself_back_through_imports_that_run():
    graph = import_graph()
    assert len(graph.runtime) > 150  # the walk found the package's modules
    found = circles(graph.edges(runtime_only=True))
    assert not found, "\n".join(describe(graph, c) for c in found)


def test_no_circle_even_through_imports_made_for_types_only():
    """The metastore's repositories are built with their siblings and typed by them, bottom up, so even the
    imports that only name a type close no circle (the issue's five, the metastore's 16-module knot among them,
    are gone)."""
    graph = import_graph()
    found = circles(graph.edges())
    assert not found, "\n".join(describe(graph, c) for c in found)


# the metastore's layers, bottom up, and what each may import of the metastore (type-only imports too)
METASTORE_LAYERS = {
    "db": {"db"},  # the database alone
    "rows": {"db", "rows"},  # plain functions and data over a database
    "settings": {"rows"},
    "repositories": {"db", "rows", "settings", "repositories"},
    "changes": {"db", "rows", "settings", "repositories"},
    "commits": {"rows", "repositories", "changes"},
}


def test_the_metastore_layers_import_only_downward():
    """db, then rows, then the repositories, then the commit; `store.py`'s Metastore above them all (the issue's
    "each a folder that shows it")."""
    graph = import_graph()
    prefix = "colstats_lab.metastore."
    wrong = []
    for module, imported in graph.edges().items():
        if not module.startswith(prefix):
            continue
        layer = module[len(prefix):].split(".")[0]
        allowed = METASTORE_LAYERS.get(layer)
        for target in imported:
            if allowed is None or not target.startswith(prefix):
                continue
            name = target[len(prefix):]
            if not any(name == a or name.startswith(a + ".") for a in allowed):
                wrong.append(f"{module} -> {target} ({graph.where(module, target)})")
    assert {m[len(prefix):].split(".")[0] for m in graph.edges() if m.startswith(prefix)} >= set(METASTORE_LAYERS)
    assert not wrong, "\n".join(wrong)


def test_the_circle_finder_finds_a_circle_and_a_type_only_import_written_here(tmp_path):
    """The graph and the circle finder, on a package written here: a runs b, b names a for a type only."""
    package = tmp_path / "colstats_lab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
                                  "def g():\n    return 1\n")
    (package / "c.py").write_text("from colstats_lab import a\n")
    graph = import_graph(str(package))
    assert graph.runtime["colstats_lab.a"] == {"colstats_lab.b": "colstats_lab/a.py:2"}
    assert set(graph.type_only["colstats_lab.b"]) == {"colstats_lab.a"}
    assert circles(graph.edges()) == [["colstats_lab.a", "colstats_lab.b"]]
    assert circles(graph.edges(runtime_only=True)) == []


def test_lower_layers_never_import_upper_ones():
    edges = import_edges()
    reaching_up = [f"{unit} imports {imported} at {', '.join(where)}"
                   for unit, allowed in MAY_IMPORT.items()
                   for imported, where in edges.get(unit, {}).items() if imported not in allowed]
    assert not reaching_up, "\n".join(reaching_up)


def test_the_walk_sees_in_function_imports_and_skips_type_checking_ones():
    """The two kinds of import the graph must tell apart, checked on source written here."""
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from colstats_lab.lab import Lab\n"
              "def f():\n    from colstats_lab.sql import parse\n    return parse\n")
    seen = [node.module for node in runtime_imports(ast.parse(source))]
    assert "colstats_lab.sql" in seen and "colstats_lab.lab" not in seen


def test_views_and_the_workbench_read_through_lab_never_the_metastore():
    """A view presents what a Lab method returns; the magics and the dashboard go through Lab too."""
    reaching = []
    for package in ("ui", "workbench"):
        folder = os.path.join(PACKAGE, package)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                tree = ast.parse(open(path).read())
                # where the metastore is (`lab.metastore.path`, `.url`, `.engine`) is the lab's to say; its API is not
                located = {id(node.value) for node in ast.walk(tree)
                           if isinstance(node, ast.Attribute) and node.attr in ("path", "url", "engine")}
                reaching += [f"{package}/{name}:{node.lineno}" for node in ast.walk(tree)
                             if isinstance(node, ast.Attribute) and node.attr == "metastore" and id(node) not in located]
    assert not reaching, "reads the metastore past Lab: " + ", ".join(reaching)
