"""Tag the code cells that only check (asserts) with ``remove-cell``, so the study site hides them.

    python tools/tag_cells.py [NOTEBOOK ...]          tag them (default: every notebook)
    python tools/tag_cells.py --check [NOTEBOOK ...]  list what would change; exit 1 if anything

A cell qualifies when every statement in it is an ``assert`` (at least one; a ``for`` loop whose
body is only asserts counts too), apart from blank lines, comments and imports of ``math``; and
so does a cell without output that holds asserts plus lines computing what they compare, when no
later cell that is shown reads a name it binds (hiding it takes nothing from what follows).
nbval still runs such cells (the tag only tells the HTML build, tools/book.py, to leave them
out, as Jupyter Book's ``remove-cell`` does). Only the metadata changes, so re-running this
after editing a notebook needs no re-execution. A tagged cell that has output (it gained a
print, say) is reported, not untagged: the tag may have been set by hand, and tests/test_site.py
fails on a hidden cell that has output.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TAG = "remove-cell"
ALLOWED_IMPORTS = {"math"}


def _count_asserts(body: list[ast.stmt]) -> int | None:
    """How many asserts ``body`` holds, or None when it does anything else."""
    asserts = 0
    for node in body:
        if isinstance(node, ast.Assert):
            asserts += 1
        elif isinstance(node, ast.Import) and all(a.name in ALLOWED_IMPORTS for a in node.names):
            continue
        elif isinstance(node, ast.ImportFrom) and node.module in ALLOWED_IMPORTS:
            continue
        elif isinstance(node, ast.For) and not node.orelse:
            inner = _count_asserts(node.body)       # a loop of asserts checks each item
            if inner is None:
                return None
            asserts += inner
        else:
            return None
    return asserts


def only_checks(source: str) -> bool:
    """True when ``source`` is asserts only (also in a for loop), comments, blanks, ``import math``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:          # IPython magics and the like: never an assert-only cell
        return False
    return bool(_count_asserts(tree.body))


class _Names(ast.NodeVisitor):
    """Names a cell binds and reads (line of first use), leaving out comprehension variables,
    which live only inside their comprehension."""

    def __init__(self) -> None:
        self.hidden: list[set[str]] = []
        self.stores: dict[str, int] = {}
        self.loads: dict[str, int] = {}

    def _comprehension(self, node) -> None:
        targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        self.hidden.append(targets)
        self.generic_visit(node)
        self.hidden.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Name(self, node: ast.Name) -> None:
        if any(node.id in scope for scope in self.hidden):
            return
        into = self.loads if isinstance(node.ctx, ast.Load) else self.stores
        into.setdefault(node.id, node.lineno)

    def _binds(self, node) -> None:
        self.stores.setdefault(node.name, node.lineno)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _binds

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.stores.setdefault((alias.asname or alias.name).split(".")[0], node.lineno)

    visit_ImportFrom = visit_Import


def _names(tree: ast.AST) -> _Names:
    names = _Names()
    names.visit(tree)
    return names


def _bound_names(tree: ast.Module) -> set[str]:
    return set(_names(tree).stores)


def _reads_before_binding(source: str, name: str) -> tuple[bool, bool]:
    """(reads ``name`` before binding it, binds it) for one later cell's source."""
    try:
        names = _names(ast.parse(source))
    except SyntaxError:                 # magics: fall back to a plain text search
        return bool(re.search(rf"\b{re.escape(name)}\b", source)), False
    load, store = names.loads.get(name), names.stores.get(name)
    return load is not None and (store is None or load <= store), store is not None


def private_check(source: str, later: list[str]) -> bool:
    """True for a cell of asserts plus helper lines whose values no later cell reads.

    Such a cell (it must print nothing) only checks: what it computes serves its own asserts,
    so hiding it takes nothing from the cells that follow.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    if not any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        return False
    calls = {node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    if calls & {"print", "display", "exec", "eval"}:
        return False
    for name in _bound_names(tree):
        for cell_source in later:
            read, rebinds = _reads_before_binding(cell_source, name)
            if read:
                return False
            if rebinds:
                break
    return True


def tag_notebook(path: Path, write: bool = True) -> tuple[list[int], list[int]]:
    """Tag the qualifying cells; return (cells newly tagged, tagged cells that have output).

    Repeated until nothing changes: a name that only hidden cells read is no reason to show
    the cell that binds it.
    """
    nb = nbformat.read(path, as_version=4)
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    added: list[int] = []
    changed = True
    while changed:
        changed = False
        for n, (index, cell) in enumerate(code):
            tags = cell.metadata.get("tags", [])
            if TAG in tags:
                continue
            later = [c.source for _, c in code[n + 1:] if TAG not in c.metadata.get("tags", [])]
            if only_checks(cell.source) or (not cell.get("outputs") and private_check(cell.source, later)):
                cell.metadata["tags"] = [*tags, TAG]
                added.append(index)
                changed = True
    stale = [i for i, c in code if TAG in c.metadata.get("tags", []) and c.get("outputs")]
    if added and write:
        nbformat.write(nb, path)
    return sorted(added), stale


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    paths = [Path(a) for a in args] or sorted(NOTEBOOKS.glob("*.ipynb"))
    status = 0
    for path in paths:
        added, stale = tag_notebook(path, write=not check)
        name = path.name
        if added:
            verb = "would tag" if check else "tagged"
            print(f"{name}: {verb} {len(added)} assert-only cell(s) {TAG!r}: {added}")
            status = 1 if check else status
        for index in stale:
            print(f"{name}: cell {index} is tagged {TAG!r} but has output, which the site "
                  "hides: move the output to a cell of its own, or untag it", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
