"""The study site (`python3 tasks.py report`), read as a newcomer on a laptop with no network would.

The site is built once per session (into a temporary folder, by tools/book.py, which executes
every notebook), then every page is opened in headless Chromium (Debian's package, driven by
playwright, as in test_report.py) with every request that is not a local file aborted. Checked:
no raw LaTeX outside code, every page titled on its own and linked home, every link resolves to
a built file or an anchor that exists, no assert line, traceback or machine path on any page,
answers folded, and the glossary is a real table. Screenshots of every page are saved to
build/site-screenshots/ for a human to look at.

Beside it, without a browser: the notebooks keep their check-only cells tagged (tools/tag_cells.py)
and the glossary (notebooks/glossary.csv) covers the package's public functions.
"""
from __future__ import annotations

import copy
import csv
import inspect
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from conftest import CHROMIUM_ARGS

import recmetrics as rm
from recmetrics import sampling

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import book  # noqa: E402  (tools/book.py)
import tag_cells  # noqa: E402  (tools/tag_cells.py)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
PAGES = ["index", *(p.stem for p in book.site_order(NOTEBOOKS))]     # reading order
SCREENSHOTS = ROOT / "build" / "site-screenshots"
GLOSSARY = ROOT / "notebooks" / "glossary.csv"

# LaTeX that must never reach a reader: a control word, display-math dollars, or a $...$ pair
# holding TeX syntax.
RAW_LATEX = re.compile(r"\\[A-Za-z]+|\$\$|\$[^$\n]{0,80}[\\^_{][^$\n]{0,80}\$")
MACHINE_PATH = re.compile(r"(/work/|/tmp/|/root/|/home/|[A-Za-z]:\\Users\\)")
ASSERT_LINE = re.compile(r"^\s*assert\b", re.M)

COLLECT = r"""() => {
  for (const d of document.querySelectorAll('details')) d.open = true;   // answers, unfolded
  const hidden = el => !el.checkVisibility();
  const codeLike = el => el.closest('pre, code, script, style, math, .jp-InputArea-editor');
  const prose = [], maths = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el || hidden(el) || codeLike(el)) continue;
    prose.push(walker.currentNode.textContent);
  }
  for (const m of document.querySelectorAll('math')) maths.push(m.textContent);
  const ids = new Set(Array.from(document.querySelectorAll('[id]'), e => e.id));
  const heading = document.querySelector('h1');
  return {
    title: document.title,
    h1: heading ? heading.innerText.replace('¶', '').trim() : '',
    text: document.body.innerText,
    prose: prose.join(' '),
    maths: maths,
    mathNamespaces: Array.from(document.querySelectorAll('math'), m => m.namespaceURI),
    hrefs: Array.from(document.querySelectorAll('a[href]'), a => a.getAttribute('href')),
    ids: Array.from(ids),
    homeLinks: document.querySelectorAll('nav a[href="index.html"]').length,
    answers: document.querySelectorAll('details').length,
    sources: Array.from(document.querySelectorAll('details.site-source'), d => d.innerText.length),
    tables: Array.from(document.querySelectorAll('table'), t => ({
      header: Array.from(t.querySelectorAll('thead th'), th => th.innerText.trim()),
      rows: t.querySelectorAll('tbody tr').length})),
    images: Array.from(document.images, i => i.complete && i.naturalWidth > 0),
    alts: Array.from(document.images, i => i.getAttribute('alt') || ''),
    folds: Array.from(document.querySelectorAll('details'), d => {
      const summary = d.querySelector('summary');
      return d.innerText.replace(summary ? summary.innerText : '', '').trim().length;
    }),
  };
}"""




@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The whole site, built once: every notebook executed, one page each plus the index."""
    out = tmp_path_factory.mktemp("site")
    book.build(book.notebook_paths([]), out)
    return out


@pytest.fixture(scope="session")
def pages(site, chromium) -> dict[str, dict]:
    """What a reader sees on every page, collected offline in headless Chromium."""
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    seen: dict[str, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            blocked: list[str] = []

            def only_files(route):
                if route.request.url.startswith("file:"):
                    route.continue_()
                else:
                    blocked.append(route.request.url)
                    route.abort()

            context.route("**/*", only_files)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            for name in sorted(path.stem for path in site.glob("*.html")):
                blocked.clear()
                errors.clear()
                page.goto((site / f"{name}.html").as_uri(), wait_until="load")
                page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
                facts = page.evaluate(COLLECT)
                first_formula = page.locator("math[display=block]").first
                if first_formula.count():
                    first_formula.scroll_into_view_if_needed()
                    page.screenshot(path=str(SCREENSHOTS / f"{name}-formula.png"))
                facts["blocked"], facts["errors"] = list(blocked), list(errors)
                seen[name] = facts
            narrow = context.new_page()
            narrow.set_viewport_size({"width": 420, "height": 900})
            narrow.goto((site / "00-start-here.html").as_uri(), wait_until="load")
            narrow.screenshot(path=str(SCREENSHOTS / "00-start-here-narrow.png"))
        finally:
            browser.close()
    return seen


def test_every_notebook_has_a_page_and_nothing_else_is_built(site):
    assert sorted(p.stem for p in site.glob("*.html")) == sorted(PAGES)
    assert not list(site.glob("*.part")), "a page was left half-written"


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_offline(pages, name):
    facts = pages[name]
    assert facts["blocked"] == [], f"{name} asked the network for {facts['blocked']}"
    assert facts["errors"] == [], f"{name} raised script errors: {facts['errors']}"
    assert all(facts["images"]), f"{name}: an image did not load"


@pytest.mark.parametrize("name", PAGES)
def test_page_has_its_own_title_and_a_link_home(pages, name):
    facts = pages[name]
    assert facts["h1"], f"{name} has no first heading"
    expected = facts["h1"] if name == "index" else f"{facts['h1']} · recmetrics"
    assert facts["title"] == expected, (facts["title"], facts["h1"])
    assert facts["homeLinks"] >= 2, f"{name}: a link home at the top and at the bottom"
    titles = [pages[other]["title"] for other in pages]
    assert titles.count(facts["title"]) == 1, f"title {facts['title']!r} is not unique"


@pytest.mark.parametrize("name", PAGES)
def test_no_raw_latex_outside_code(pages, name):
    facts = pages[name]
    raw = sorted(set(RAW_LATEX.findall(facts["prose"])))
    assert not raw, f"{name} shows raw LaTeX: {raw[:10]}"
    assert all("\\" not in m for m in facts["maths"]), f"{name}: a formula shows a backslash"
    assert set(facts["mathNamespaces"]) <= {"http://www.w3.org/1998/Math/MathML"}


def test_formulas_are_typeset(pages):
    counts = {name: len(pages[name]["maths"]) for name in PAGES}
    assert all(counts[p.stem] > 0 for p in NOTEBOOKS if p.stem != "00-start-here"), counts


@pytest.mark.parametrize("name", PAGES)
def test_no_assert_traceback_or_machine_path(pages, name):
    text = pages[name]["text"]
    asserts = ASSERT_LINE.findall(text)
    assert not asserts, f"{name} shows {len(asserts)} assert line(s); tag the cell (tools/tag_cells.py)"
    assert "Traceback" not in text, f"{name} shows a traceback"
    paths = sorted(set(MACHINE_PATH.findall(text)))
    assert not paths, f"{name} shows machine paths: {paths}"


@pytest.mark.parametrize("name", PAGES)
def test_every_link_resolves(site, pages, name):
    facts = pages[name]
    for href in facts["hrefs"]:
        parts = urlsplit(href)
        assert not parts.scheme and not parts.netloc, f"{name}: {href} leaves the site"
        if parts.path:
            target = (site / unquote(parts.path)).resolve()
            assert target.parent == site.resolve() and target.is_file(), f"{name}: dead link {href}"
            ids = pages[target.stem]["ids"]
        else:
            ids = facts["ids"]
        if parts.fragment:
            assert unquote(parts.fragment) in ids, f"{name}: {href} points at no anchor"


def test_pages_are_chained_by_previous_and_next(pages):
    for before, after in zip(PAGES[1:], PAGES[2:]):
        assert f"{after}.html" in pages[before]["hrefs"], f"{before} does not link to {after}"
        assert f"{before}.html" in pages[after]["hrefs"], f"{after} does not link back to {before}"
    for stem in PAGES[1:]:
        assert f"{stem}.html" in pages["index"]["hrefs"], f"the index does not list {stem}"


def test_exercise_answers_are_folded(pages):
    with_exercises = [p.stem for p in NOTEBOOKS
                      if any(c.cell_type == "markdown" and re.search(r"^#+ .*Exercises", c.source, re.M)
                             for c in nbformat.read(p, as_version=4).cells)]
    assert with_exercises
    for stem in with_exercises:
        assert pages[stem]["answers"] > 0, f"{stem}: answers are not folded"


def test_source_corrections_are_folded(pages):
    with_section = [p.stem for p in NOTEBOOKS
                    if any(c.cell_type == "markdown" and book._SOURCE_SECTION.search(c.source)
                           for c in nbformat.read(p, as_version=4).cells)]
    assert len(with_section) >= 10
    for stem in with_section:
        folds = pages[stem]["sources"]
        assert len(folds) == 1 and folds[0] > 500, f"{stem}: the source's mistakes are not folded ({folds})"


def test_source_section_folds_up_to_the_next_heading_of_its_level():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## 3 · Lesson\ntext"),
        nbformat.v4.new_markdown_cell("## 4 · Where the source goes wrong\n### 4.1 First\nquoted"),
        nbformat.v4.new_code_cell("assert True"),
        nbformat.v4.new_markdown_cell("### 4.2 Second\nmore"),
        nbformat.v4.new_markdown_cell("## 5 · Key takeaways\n- one")])
    cells = book.fold_source_corrections(nb).cells
    sources = [c.source for c in cells]
    assert sources == ["## 3 · Lesson\ntext", "## 4 · Where the source goes wrong",
                       "### 4.1 First\nquoted", "assert True", "### 4.2 Second\nmore",
                       "## 5 · Key takeaways\n- one"]
    site = [c.metadata.get("site", {}) for c in cells]
    assert "open_fold" in site[2] and site[4].get("close_fold")
    assert not any("open_fold" in s or "close_fold" in s for i, s in enumerate(site) if i not in (2, 4))


@pytest.mark.parametrize("name", PAGES)
def test_every_figure_has_alt_text_and_every_fold_has_content(pages, name):
    facts = pages[name]
    for alt in facts["alts"]:
        assert alt.strip() and alt != book._DEFAULT_ALT, f"{name}: a figure has no alt text ({alt!r})"
        assert len(alt) > len("Figure: ") + 10, f"{name}: alt text {alt!r} says nothing"
    assert all(length > 0 for length in facts["folds"]), f"{name}: an empty <details> fold"


def test_the_protocol_page_comes_before_the_capstone():
    order = [p.stem for p in book.site_order(NOTEBOOKS)]
    if "14-evaluation-protocol" in order and "10-evaluate-your-model" in order:
        assert order.index("14-evaluation-protocol") + 1 == order.index("10-evaluate-your-model")
    assert sorted(order) == sorted(p.stem for p in NOTEBOOKS)


def test_index_renders_its_markdown(pages):
    assert "`" not in pages["index"]["prose"], "the index shows Markdown backticks"


def test_glossary_is_a_real_table(pages):
    tables = [t for t in pages["00-start-here"]["tables"] if t["header"][:2] == ["中文", "English"]]
    assert len(tables) == 1, pages["00-start-here"]["tables"]
    with open(GLOSSARY, encoding="utf-8", newline="") as f:
        assert tables[0]["rows"] == len(list(csv.DictReader(f)))
    assert tables[0]["header"] == ["中文", "English", "page", "formula", "recmetrics"]


# --- without a browser ------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_check_only_cells_are_hidden_and_hidden_cells_show_nothing(path):
    added, _ = tag_cells.tag_notebook(path, write=False)
    assert not added, f"run tools/tag_cells.py: cells {added} only check and are not tagged"
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if "remove-cell" in cell.metadata.get("tags", []):
            assert not cell.get("outputs"), f"cell {index} is hidden on the site but has output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_stored_figure_gets_alt_text(path):
    nb = book.figure_alt_texts(nbformat.read(path, as_version=4))
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                alt = output.get("metadata", {}).get("site_alt", "")
                assert alt.startswith("Figure: ") and len(alt) > 18, (index, alt)


def _figure_notebook(path: Path) -> Path:
    """Three figure cells: a titled plot, a recmetrics ROC plot with a "# Figure:" comment and
    a cell whose author wrote the alt text of its two figures in its metadata."""
    code = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        code("%matplotlib inline\nimport matplotlib.pyplot as plt\nimport recmetrics as rm"),
        nbformat.v4.new_markdown_cell("## 3. Pictures of things\n\nWhat follows is drawn."),
        code("fig, ax = plt.subplots()\nax.plot([0, 1], [0, 2], label='twice')\n"
             "ax.set_title('A steep line')\nax.set_xlabel('input')\nax.legend()\nplt.show()"),
        code("# Figure: the ROC curve of a four-sample example\n"
             "rm.plots.roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1])\nplt.show()"),
        code("for k in (1, 2):\n    plt.plot([0, k])\n    plt.show()",
             metadata={"alt": ["a flat-ish line", "a steeper line"]}),
    ])
    nbformat.write(nb, path / "figures.ipynb")
    return path / "figures.ipynb"


def test_figures_describe_themselves_when_the_site_runs_them(tmp_path):
    executed = book.run(_figure_notebook(tmp_path))
    outputs = [[o for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
               for c in executed.cells]
    recorded = [o.metadata.get("image/png", {}).get("alt", "") for o in outputs[2] + outputs[3]]
    assert "Title: A steep line." in recorded[0] and "x axis: input" in recorded[0]
    assert "Legend: twice." in recorded[0]
    assert recorded[1].startswith("ROC curve of 1 model: model AUC 0.750"), recorded[1]
    alts = [o.metadata["site_alt"] for cell in book.figure_alt_texts(executed).cells
            for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    assert alts == [
        f"Figure: Pictures of things. {recorded[0]}",                      # section heading first
        f"Figure: the ROC curve of a four-sample example. {recorded[1]}",   # the "# Figure:" comment
        "Figure: a flat-ish line", "Figure: a steeper line"]                # metadata["alt"]


def test_alt_text_without_a_recorded_description_falls_back_to_the_page():
    code, markdown = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    nb = nbformat.v4.new_notebook(cells=[
        markdown("## Pictures\n\nThe curve below rises quickly and then flattens out."),
        code("# Figure: a curve that flattens\nplt.plot(x)", outputs=[png]),
        code("plt.plot(x)", outputs=[copy.deepcopy(png)]),
        code("plt.plot(x)", outputs=[copy.deepcopy(png), copy.deepcopy(png)],
             metadata={"alt": "two panels of the same curve"}),
        code("plt.plot(x)", outputs=[copy.deepcopy(png)], metadata={"alt": ["one", "two"]}),
    ])
    alts = [o.metadata["site_alt"] for cell in book.figure_alt_texts(nb).cells
            for o in cell.get("outputs", [])]
    assert alts == ["Figure: a curve that flattens",
                    "Figure: The curve below rises quickly and then flattens out.",
                    "Figure: two panels of the same curve", "Figure: two panels of the same curve",
                    # a list of the wrong length is ignored: the page's sentence instead
                    "Figure: The curve below rises quickly and then flattens out."]


@pytest.mark.parametrize("label, read", [
    (r"error, $e = \hat y - y$ (stars)", "error, e = hat y - y (stars)"),
    (r"$\alpha_{1}$ and $\chi^2$", "alpha 1 and chi 2"),
    ("no formula, 5 dollars", "no formula, 5 dollars"),
])
def test_alt_text_reads_matplotlib_formulas_as_words(label, read):
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="},
                                 metadata={"image/png": {"alt": f"x axis: {label}."}})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Errors"), nbformat.v4.new_code_cell("", outputs=[png])])
    alt = book.figure_alt_texts(nb).cells[1].outputs[0].metadata["site_alt"]
    assert alt == f"Figure: Errors. x axis: {read}."


@pytest.mark.parametrize("tex, wanted, unwanted", [
    (r"\overline{NDCG}", 'stretchy="true" accent="true">&#x0203E;', "&#x02015;"),   # bar over all four
    (r"\log n", '<mi>log</mi><mspace width="0.1667em"></mspace><mi>n</mi>', None),    # operator spacing
    (r"\ln p", '<mi>ln</mi><mspace width="0.1667em"></mspace><mi>p</mi>', None),
    (r"\log_2 x", '</msub><mspace width="0.1667em"></mspace><mi>x</mi>', None),
    (r"\log(x)", "<mi>log</mi><mo", "mspace"),                                       # none before (
    (r"\log_2(i+1)", "</msub><mo", "mspace"),
])
def test_formula_fixes(tex, wanted, unwanted):
    mathml = book.tex_to_mathml(tex, display=False)
    assert wanted in mathml, mathml
    assert unwanted is None or unwanted not in mathml, mathml


def _glossary() -> list[dict[str, str]]:
    with open(GLOSSARY, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _public_names() -> set[str]:
    """rm.<name> for every public function and class, and rm.sampling.<name> for functions."""
    names = {f"rm.{n}" for n in rm.__all__
             if inspect.isfunction(getattr(rm, n)) or inspect.isclass(getattr(rm, n))}
    names |= {f"rm.sampling.{n}" for n in sampling.__all__ if inspect.isfunction(getattr(sampling, n))}
    return names


def _exists(name: str) -> bool:
    module, _, attribute = name.rpartition(".")
    namespace = {"rm": rm, "rm.sampling": sampling}.get(module)
    return namespace is not None and attribute in getattr(namespace, "__all__", ())


def test_glossary_has_a_row_for_every_public_function():
    named = {name for row in _glossary() for name in row["functions"].split()}
    missing = sorted(_public_names() - named)
    assert not missing, f"data/glossary.csv has no row for {missing}"


def test_glossary_rows_name_existing_functions_and_notebooks():
    rows = _glossary()
    assert rows and list(rows[0]) == ["zh", "en", "formula", "functions", "notebook"]
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    for row in rows:
        assert row["zh"].strip() and row["en"].strip(), row
        assert re.search(r"[\u4e00-\u9fff]", row["zh"]), f"no Chinese term in {row}"
        assert row["notebook"] in notebooks, f"no notebook {row['notebook']!r}: {row}"
        for name in row["functions"].split():
            assert name.startswith("rm."), f"write functions as rm.<name>: {name!r}"
            assert _exists(name), f"{name} is not public in recmetrics: {row}"
        if row["formula"]:
            book.tex_to_mathml(row["formula"], display=False)   # raises on what would show raw


SOURCES = ROOT.parent / "shared" / "seeds"     # the five source documents, kept beside the repository


def _squeeze(text: str) -> str:
    return re.sub(r"[\s$]+", "", text)


@pytest.mark.skipif(not SOURCES.is_dir(), reason="the source documents are not beside this checkout")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_quoted_passages_are_verbatim(path):
    """Every Chinese passage a notebook quotes (a "> " block) is in a source document as written."""
    documents = [_squeeze(p.read_text(encoding="utf-8")) for p in sorted(SOURCES.glob("*.txt"))]
    quotes = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            quotes += [line[1:].strip() for line in cell.source.splitlines()
                       if line.startswith(">") and re.search(r"[\u4e00-\u9fff]", line)]
    for quote in quotes:
        parts = re.findall(r"`([^`]+)`", quote) or [quote]   # code spans are checked one by one
        for part in parts:
            assert any(_squeeze(part) in doc for doc in documents), f"not found as written: {part!r}"
