"""The package's layers, read from its source: every import between recmetrics modules (at
module level and inside function bodies) goes to the same layer or one below, the import graph
has no cycle, and no module takes a private name from a public module.

The known breaches would be listed below (KNOWN_*); the test fails when one is added and also
when one is mended but still listed, so the lists only shrink. Both are empty: the sliced
evaluation left the public ``slices`` module for the private ``_slices`` (``slices`` keeps
``disparity`` and the constants), and the engines take the checked request from ``frame``
instead of re-spelling its signature, so nothing imports upwards.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "recmetrics"

#: Each module's layer, lowest first. A module may import its own layer and those below.
LAYERS: dict[str, int] = {
    # 0: checks, option types, warnings; progress bars, memory estimates, threads
    "_validation": 0, "_progress": 0, "_memory": 0, "_present": 0, "_output": 0, "_threads": 0,
    # 1: numpy kernels and the id policy
    "_kernels": 1, "_ids": 1, "_frames": 1, "_delong": 1,
    # 2: the metric registry and the public topic modules
    "_metrics": 2, "auc": 2, "classification": 2, "probability": 2, "ranking": 2,
    "regression": 2, "sampling": 2, "stats": 2, "power": 2, "trec": 2, "tables": 2,
    # 3: one-process evaluation (options, prepared rows, per-user values, beyond, slices, compare)
    "adapters": 3, "splits": 3, "_options": 3, "_request": 3, "_pipeline": 3, "_compare": 3,
    "_beyond": 3, "beyond": 3, "_slices": 3, "slices": 3,
    # 4: the partitioned engines: their shared core, Dask's and Spark's moves
    "_partitions": 4, "_dask": 4, "_spark": 4,
    # 5: the public evaluation API
    "evaluation": 5,
    # 6: the engines' public modules (cluster set-up, the engine forms), files, presentation
    "distributed": 6, "spark": 6, "io": 6, "_provenance": 6, "_display": 6, "plots": 6, "report": 6,
    # 7: the command line
    "cli": 7, "__main__": 7,
    # the package: its lazy __init__ names everything
    "__init__": 8,
}

#: Imports that go up a layer: (importer, imported).
KNOWN_UPWARD: set[tuple[str, str]] = set()
#: Private names taken from public modules: (importer, module, name).
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()
#: The package's version, read by the provenance record, is not an upward import.
ALLOWED = {("_provenance", "__init__")}


def _modules() -> dict[str, Path]:
    return {path.stem: path for path in sorted(PACKAGE.glob("*.py"))}


def _imports(path: Path, modules) -> tuple[set[str], set[tuple[str, str]]]:
    """The recmetrics modules ``path`` imports (anywhere in it), and the (module, name) pairs
    of private names it takes from them (``from .m import _x`` and ``m._x`` after
    ``from . import m``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported, private, aliases = set(), set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:            # from . import a, b
                for alias in node.names:
                    if alias.name in modules:
                        imported.add(alias.name)
                        aliases[alias.asname or alias.name] = alias.name
                    else:                      # from . import __version__
                        imported.add("__init__")
            elif node.module.split(".")[0] in modules:
                module = node.module.split(".")[0]
                imported.add(module)
                private |= {(module, a.name) for a in node.names if a.name.startswith("_")}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "recmetrics" and len(parts) > 1 and parts[1] in modules:
                    imported.add(parts[1])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            private.add((aliases[node.value.id], node.attr))
    return imported, private


def _graph():
    modules = _modules()
    edges, private = {}, set()
    for name, path in modules.items():
        imported, taken = _imports(path, modules)
        edges[name] = imported - {name}
        private |= {(name, module, attr) for module, attr in taken
                    if not module.startswith("_")}
    return modules, edges, private


def test_every_module_has_a_layer():
    modules = _modules()
    assert sorted(set(modules) - set(LAYERS)) == [], "put each new module in LAYERS"
    assert sorted(set(LAYERS) - set(modules)) == [], "a module in LAYERS no longer exists"


def test_imports_go_down_only():
    _, edges, _ = _graph()
    upward = {(a, b) for a, targets in edges.items() for b in targets
              if LAYERS[b] > LAYERS[a] and (a, b) not in ALLOWED}
    assert upward - KNOWN_UPWARD == set(), "an import goes up a layer"
    assert KNOWN_UPWARD - upward == set(), "a known upward import is gone: remove it from the list"


def test_no_import_cycle():
    """Depth-first search over every import, function-level ones included, less the known
    upward edges (each of which closes a cycle today)."""
    _, edges, _ = _graph()
    graph = {a: {b for b in targets if (a, b) not in KNOWN_UPWARD | ALLOWED}
             for a, targets in edges.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_no_private_name_from_a_public_module():
    _, _, private = _graph()
    assert private - KNOWN_PRIVATE == set(), "a private name is taken from a public module"
    assert KNOWN_PRIVATE - private == set(), "a known breach is gone: remove it from the list"


def test_the_checks_find_what_they_look_for(tmp_path):
    """The AST reading sees imports inside function bodies and attribute access on modules."""
    for name in ("a", "stats"):
        (tmp_path / f"{name}.py").write_text("")
    source = tmp_path / "b.py"
    source.write_text("def f():\n    from . import stats\n    return stats._hidden()\n"
                      "def g():\n    from .a import _x\n")
    imported, private = _imports(source, {"a": None, "stats": None, "b": None})
    assert imported == {"a", "stats"}
    assert private == {("stats", "_hidden"), ("a", "_x")}
