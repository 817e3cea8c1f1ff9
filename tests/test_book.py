"""The study site reuses a notebook's stored outputs only when nothing they depend on changed.

Issue 36: `tasks.py report` executed all 16 notebooks on every build (336 s of its 485 s on a
fresh clone). tools/notebooks.py now records, with the outputs, a fingerprint of what they depend
on (the code cells, the recmetrics package's files, the notebooks folder's glossary and titles,
site_template/figure_alt.py, Python, the platform and the libraries' versions); tools/book.py
reuses stored outputs whose fingerprint equals the one now and executes the others, saying which.

These tests execute small notebooks of their own in a temporary folder (a kernel each, no browser).
"""
from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import book  # noqa: E402  (tools/book.py)

notebooks = book._notebooks          # tools/notebooks.py, the module book.py executes with
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))

code, markdown = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell


def _small_notebook() -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[
        markdown("# A small page\n\nOne number and one figure."),
        code("%matplotlib inline\nimport matplotlib.pyplot as plt\nimport recmetrics as rm"),
        code("auc = rm.roc_auc([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1])\nprint(f'AUC = {auc:.4f}')"),
        markdown("## A figure\n\nThe line below rises."),
        code("# Figure: a rising line\nfig, ax = plt.subplots()\nax.plot([0, 1], [0, 2])\n"
             "ax.set_title('A line')\nplt.show()"),
    ])


@pytest.fixture(scope="module")
def executed_once(tmp_path_factory) -> Path:
    """The small notebook, executed and stored by `tools/notebooks.py execute` (once a module)."""
    path = tmp_path_factory.mktemp("executed") / "small.ipynb"
    nbformat.write(_small_notebook(), path)
    notebooks.execute([path])
    return path


@pytest.fixture
def stored(executed_once, tmp_path) -> Path:
    """A copy of the executed notebook for one test to change."""
    return Path(shutil.copy(executed_once, tmp_path / "small.ipynb"))


def _stdout(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
                   if o.get("name") == "stdout")


def test_executing_stores_outputs_alt_texts_and_the_fingerprint(executed_once):
    nb = nbformat.read(executed_once, as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == [1, 2, 3]
    assert _stdout(nb) == "AUC = 0.7500\n"
    pngs = [o for o in nb.cells[4].outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1
    # the kernel ran site_template/figure_alt.py: the stored figure describes itself
    assert pngs[0].metadata["image/png"]["alt"].startswith("Title: A line.")
    record = nb.metadata[notebooks.RECORD]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", record["executed"])
    fingerprint = record["fingerprint"]
    assert fingerprint == notebooks.fingerprint(nb)
    assert fingerprint["python"] == f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    for name in ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "ipython"):
        assert fingerprint["libraries"][name] == importlib.metadata.version(name)
    assert notebooks.changes(nb) == []


def test_a_matching_fingerprint_reuses_the_stored_outputs(stored, monkeypatch, capsys):
    def no_run(*args, **kwargs):
        raise AssertionError("executed although the fingerprint matches")

    monkeypatch.setattr(book, "run", no_run)
    [(nb, source)] = book._execute_or_reuse([stored], jobs=1)
    assert nb == nbformat.read(stored, as_version=4)
    assert not source.executed and source.stored_at == notebooks.executed_at(nb)
    out = capsys.readouterr().out
    assert f"small.ipynb: reused stored outputs (fingerprint matches; executed {source.stored_at})" in out


def test_a_markdown_edit_keeps_the_fingerprint(stored):
    nb = nbformat.read(stored, as_version=4)
    nb.cells[3].source += " Steeply."
    nb.cells[2].metadata["tags"] = ["remove-input"]          # a tag the kernel never sees
    assert notebooks.changes(nb) == []


def test_a_changed_code_cell_is_executed_again(stored, capsys):
    nb = nbformat.read(stored, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace("AUC =", "AUC of the example =")
    nbformat.write(nb, stored)
    assert notebooks.changes(nb) == ["its code cells changed"]
    [(executed, source)] = book._execute_or_reuse([stored], jobs=1)
    assert source.executed
    assert _stdout(executed) == "AUC of the example = 0.7500\n"          # the new output
    assert notebooks.changes(executed) == []                            # recorded afresh
    assert "small.ipynb: executing: its code cells changed" in capsys.readouterr().out


def test_a_tag_that_changes_how_a_cell_runs_changes_the_fingerprint(stored):
    nb = nbformat.read(stored, as_version=4)
    nb.cells[2].metadata["tags"] = ["raises-exception"]
    assert notebooks.changes(nb) == ["its code cells changed"]


def test_a_notebook_without_a_fingerprint_is_executed(stored, capsys):
    nb = nbformat.read(stored, as_version=4)
    del nb.metadata[notebooks.RECORD]
    nbformat.write(nb, stored)
    [(executed, source)] = book._execute_or_reuse([stored], jobs=1)
    assert source.executed and _stdout(executed) == "AUC = 0.7500\n"
    assert "executing: no fingerprint recorded" in capsys.readouterr().out


def test_execute_forces_every_notebook_to_run(stored, capsys):
    [(_, source)] = book._execute_or_reuse([stored], jobs=1, execute=True)
    assert source.executed
    assert "small.ipynb: executing: --execute given" in capsys.readouterr().out


def test_a_changed_package_file_changes_the_fingerprint(stored, tmp_path, monkeypatch):
    package = tmp_path / "recmetrics"
    shutil.copytree(notebooks.package_folder(), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert notebooks.package_digest(package) == notebooks.package_digest()
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "auc.cpython-311.pyc").write_bytes(b"compiled")
    assert notebooks.package_digest(package) == notebooks.package_digest()   # not a source
    nb = nbformat.read(stored, as_version=4)
    monkeypatch.setattr(notebooks, "package_folder", lambda: package)
    assert notebooks.changes(nb) == []
    auc = package / "auc.py"
    auc.write_text(auc.read_text(encoding="utf-8") + "\n# one more line\n", encoding="utf-8")
    assert notebooks.changes(nb) == ["the recmetrics package's files changed"]
    auc.write_text(auc.read_text(encoding="utf-8").removesuffix("\n# one more line\n"), encoding="utf-8")
    assert notebooks.changes(nb) == []
    (package / "data" / "new.csv").write_text("a,b\n1,2\n", encoding="utf-8")   # a data file too
    assert notebooks.changes(nb) == ["the recmetrics package's files changed"]


def test_a_changed_glossary_or_title_changes_the_fingerprint(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "glossary.csv").write_text("zh,en\n指标,metric\n", encoding="utf-8")
    nbformat.write(_small_notebook(), folder / "01-small.ipynb")
    before = notebooks.notebooks_digest(folder)
    (folder / "glossary.csv").write_text("zh,en\n指标,metrics\n", encoding="utf-8")
    after_glossary = notebooks.notebooks_digest(folder)
    nb = _small_notebook()
    nb.cells[0].source = "# A smaller page"
    nbformat.write(nb, folder / "01-small.ipynb")
    after_title = notebooks.notebooks_digest(folder)
    assert len({before, after_glossary, after_title}) == 3


def test_a_changed_library_version_or_python_changes_the_fingerprint(stored, monkeypatch):
    nb = nbformat.read(stored, as_version=4)
    numpy = importlib.metadata.version("numpy")
    real = notebooks.installed_version
    monkeypatch.setattr(notebooks, "installed_version",
                        lambda name: "0.0.1" if name in ("numpy", "pandas") else real(name))
    assert notebooks.changes(nb) == [f"numpy {numpy} -> 0.0.1, "
                                     f"pandas {importlib.metadata.version('pandas')} -> 0.0.1"]
    monkeypatch.setattr(notebooks, "installed_version", real)
    monkeypatch.setattr(notebooks.platform, "python_version", lambda: "3.99.0")
    recorded = nb.metadata[notebooks.RECORD]["fingerprint"]["python"]
    assert notebooks.changes(nb) == [f"Python {recorded} -> 3.99.0"]


def test_a_changed_figure_alt_script_changes_the_fingerprint(stored, tmp_path, monkeypatch):
    nb = nbformat.read(stored, as_version=4)
    script = tmp_path / "figure_alt.py"
    script.write_text(notebooks.FIGURE_ALT.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    monkeypatch.setattr(notebooks, "FIGURE_ALT", script)
    assert notebooks.changes(nb) == ["tools/site_template/figure_alt.py changed"]


def test_stale_only_executes_the_notebooks_whose_fingerprint_changed(stored, tmp_path, capsys):
    changed = tmp_path / "changed.ipynb"
    nb = nbformat.read(stored, as_version=4)
    nb.cells[2].source += "\nprint('and one more line')"
    nbformat.write(nb, changed)
    kept_before = stored.read_bytes()
    notebooks.execute([stored, changed], stale_only=True)
    assert stored.read_bytes() == kept_before
    assert _stdout(nbformat.read(changed, as_version=4)) == "AUC = 0.7500\nand one more line\n"
    out = capsys.readouterr().out
    assert "small.ipynb: fingerprint matches, kept" in out
    assert "executing " in out and "changed.ipynb: its code cells changed" in out


def test_the_page_from_reused_outputs_equals_the_page_from_executed_outputs(stored):
    """The same notebook, its stored outputs reused or executed afresh by book.py, makes the
    same page, byte for byte (the figure's PNG and its alt text included)."""
    reused = nbformat.read(stored, as_version=4)
    fresh = book.run(stored)
    assert fresh.metadata[notebooks.RECORD]["fingerprint"] == reused.metadata[notebooks.RECORD]["fingerprint"]
    pages = [book.render_page(nb, "A small page · recmetrics", None, None, {"small"}) for nb in (reused, fresh)]
    assert 'alt="Figure: a rising line. Title: A line.' in pages[0]
    assert pages[0] == pages[1]


def test_the_index_says_which_pages_reused_stored_outputs():
    entries = [("01-a.html", "Page one", "First."), ("02-b.html", "Page two", "Second.")]
    stored = book.Source(False, "2026-11-28 17:40 UTC")
    mixed = book.index_notebook(entries, sources=[book.Source(True), stored]).cells[0].source
    assert "executed top to bottom:" in mixed and "when this site was built:" not in mixed
    assert ("1 of the 2 pages (marked so below) show the outputs stored in their notebook when it "
            "was last executed") in mixed
    assert "the others were executed when this site was built" in mixed
    assert "nbval" in mixed and "report --execute" in mixed
    assert re.search(r"Page one\]\(01-a.html\)\n+First.\n+\*Executed when this site was built.\*", mixed)
    assert re.search(r"Page two\]\(02-b.html\)\n+Second.\n+\*Outputs stored when the notebook was "
                     r"executed on 2026-11-28 17:40 UTC, reused: their fingerprint matches.\*", mixed)
    reused = book.index_notebook(entries, sources=[stored, stored]).cells[0].source
    assert "All 2 pages show the outputs stored" in reused and "the others" not in reused
    assert reused.count("Outputs stored when the notebook was executed on 2026-11-28 17:40 UTC") == 2
    executed = book.index_notebook(entries, sources=[book.Source(True), book.Source(True)]).cells[0].source
    assert "executed top to bottom when this site was built:" in executed
    assert "Executed when" not in executed and "Outputs stored" not in executed and "nbval" not in executed


def _imported_modules(nb: nbformat.NotebookNode) -> set[str]:
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found.add(node.module.partition(".")[0])
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_library_a_notebook_imports_is_in_the_fingerprint(path):
    """A library outside the fingerprint could change a stored output unnoticed."""
    nb = nbformat.read(path, as_version=4)
    owners = importlib.metadata.packages_distributions()
    fingerprinted = set(notebooks.Context().libraries)
    for module in _imported_modules(nb) - set(sys.stdlib_module_names) - {"recmetrics"}:
        distributions = {notebooks._normal(d) for d in owners.get(module, [])}
        assert distributions & fingerprinted, f"{path.name} imports {module} ({distributions}), not fingerprinted"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_stored_notebook_records_its_fingerprint(path):
    """Stored with `python3 tasks.py execute`: a record the site can compare (it may be stale
    after a change to the package; the site then executes that notebook)."""
    nb = nbformat.read(path, as_version=4)
    record = notebooks.record(nb)
    assert record is not None, f"run: python3 tasks.py execute {path.relative_to(ROOT)}"
    assert record["fingerprint"]["scheme"] == notebooks.SCHEME
    assert set(record["fingerprint"]) == set(notebooks.fingerprint(nb))


def test_tasks_report_passes_execute_on_to_the_site_builder(monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_recmetrics_tasks_book", ROOT / "tasks.py")
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    started = []
    monkeypatch.setattr(tasks, "ensure_venv", lambda extras: None)
    monkeypatch.setattr(tasks, "_run_saying", lambda *args: started.append([str(a) for a in args]))
    tasks.main(["report", "--execute"])
    assert started == [[str(tasks.PYTHON), "tools/book.py", "--execute"]]


def _lesson() -> nbformat.NotebookNode:
    """Markdown that the site cuts into new cells: a section on the source's mistakes, an answer."""
    return nbformat.v4.new_notebook(cells=[
        markdown("# A lesson\n\nIt teaches."),
        markdown("## 2 · Where the source goes wrong\n\nIt says 2 + 2 = 5."),
        code("assert 2 + 2 == 4", execution_count=1),
        markdown("## 3 · Exercises\n\n1. What is 2 + 2?\n\n*Answer.* 4."),
        markdown("## 4 · Summary\n\nDone."),
    ])


def test_the_same_notebook_makes_the_same_page_byte_for_byte():
    """The cells the site cuts out of a notebook (folds, answers) took random ids, so that two
    builds of one notebook differed; they take ids made from the cell they were cut from."""
    lesson = _lesson()
    pages = [book.render_page(lesson, "A lesson · recmetrics", None, None, {"a"}) for _ in range(2)]
    assert "<details" in pages[0] and 'id="cell-id=' in pages[0]
    assert pages[0] == pages[1]
    guide = [book.markdown_page("# Guide\n\nText.", "Guide · recmetrics", None, None, {"a"}, ROOT)
             for _ in range(2)]
    assert guide[0] == guide[1]
