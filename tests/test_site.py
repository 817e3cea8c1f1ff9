"""The study site (`python3 tasks.py report`), read as a newcomer on a laptop with no network would.

The site is built once per session (into a temporary folder, by tools/book.py, which executes
every notebook whose stored outputs' fingerprint does not match: tests/test_book.py), then every
page is opened in headless Chromium (Debian's package, driven by playwright, as in
test_report.py) with every request that is not a local file aborted. Checked:
no raw LaTeX outside code, every page titled on its own and linked home, every link resolves to
a built file or an anchor that exists, no assert line, traceback or machine path on any page,
answers folded, and the glossary is a real table. Screenshots of every page are saved to
build/site-screenshots/ for a human to look at.

After the notebooks come the user guide (docs/guide/*.md) and the API reference written from the
docstrings, which must name every public name. The pages carry their fonts: a second browser
sees only fonts with neither Chinese characters nor a MATH table (fontconfig limited to them, as
on a machine with no Chinese or math font installed), and Chinese text must still be drawn, with
the embedded subset (Chromium's own account of the fonts it used, and a screenshot that differs
from the same page without the embedded font), and formulas laid out with the embedded math font
(the cases brace stretched to its rows, the bar over NDCG as wide as the word, names upright).

Beside it, without a browser: the notebooks keep their check-only cells tagged (tools/tag_cells.py)
and the glossary (notebooks/glossary.csv) covers the package's public functions.
"""
from __future__ import annotations

import copy
import csv
import inspect
import os
import re
import subprocess
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
GUIDE_PAGES = [f"guide-{p.stem}" for p in book.guide_paths()]
PAGES = ["index", *(p.stem for p in book.site_order(NOTEBOOKS)),      # reading order
         *GUIDE_PAGES, book.REFERENCE]
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
    """The whole site, built once: one page per notebook (executed, or its stored outputs when
    their fingerprint matches) plus the index."""
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
                page.evaluate("document.fonts.ready.then(() => true)")
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


def test_every_notebook_and_guide_page_has_a_page_and_nothing_else_is_built(site):
    assert GUIDE_PAGES, "docs/guide/ has no page"
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


def test_the_reference_names_every_public_name(pages):
    """The API reference has an entry (a heading with its anchor) for every name of
    recmetrics.__all__, and for the public names of the submodules in it (rm.plots, rm.sampling)."""
    ids = set(pages[book.REFERENCE]["ids"])
    wanted = {name: book._api_reference.anchor(name) for name in rm.__all__}
    for name in rm.__all__:
        module = getattr(rm, name)
        if inspect.ismodule(module):
            wanted |= {f"{name}.{m}": book._api_reference.anchor(f"{name}.{m}") for m in module.__all__}
    missing = sorted(name for name, anchor in wanted.items() if anchor not in ids)
    assert not missing, f"the API reference has no entry for {missing}"
    assert pages[book.REFERENCE]["maths"], "the reference's formulas are not typeset"


def test_the_index_lists_the_guide_and_the_reference(pages):
    for stem in [*GUIDE_PAGES, book.REFERENCE]:
        assert f"{stem}.html" in pages["index"]["hrefs"], f"the index does not list {stem}"


def test_the_index_says_which_pages_were_executed_and_which_reused_stored_outputs(pages):
    """Issue 36: the site reuses stored outputs whose fingerprint matches (tests/test_book.py);
    its index must not claim every page was executed for this build."""
    text = pages["index"]["text"]
    executed = text.count("Executed when this site was built.")
    reused = len(re.findall(r"Outputs stored when the notebook was executed on \d{4}-\d\d-\d\d "
                            r"\d\d:\d\d UTC, reused: their fingerprint matches\.", text))
    if reused:
        assert executed + reused == len(NOTEBOOKS), (executed, reused)
        assert "the outputs stored in their notebook when it was last executed" in text
    else:
        assert executed == 0 and "executed top to bottom when this site was built:" in text


# --- the fonts a page carries -----------------------------------------------------------------

FONTS = book._fonts                       # tools/site_fonts.py
CJK_TEXT = re.compile(FONTS.CJK.pattern + "+")


def _cjk_of(path: Path) -> set[str]:
    return set(FONTS.CJK.findall(path.read_text(encoding="utf-8")))


def test_the_cjk_subset_covers_the_sources():
    """Every Chinese character the site's sources hold has a glyph in the committed subset; when
    this fails, run tools/site_fonts.py (see its docstring) and commit the new subset."""
    missing = FONTS.site_characters() - FONTS.font_characters(FONTS.CJK_FONT)
    assert not missing, f"the Chinese font subset lacks {''.join(sorted(missing))!r}: run tools/site_fonts.py"


def test_the_cjk_subset_covers_every_chinese_character_of_the_pages(site):
    shown = set().union(*(_cjk_of(path) for path in site.glob("*.html")))
    assert len(shown) > 100, "the pages show (almost) no Chinese: is the site built?"
    missing = shown - FONTS.font_characters(FONTS.CJK_FONT)
    assert not missing, f"the Chinese font subset lacks {''.join(sorted(missing))!r}: run tools/site_fonts.py"


def test_fonts_are_embedded_where_needed(site):
    for path in site.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        body = text.split("<body", 1)[1]
        cjk = bool(FONTS.CJK.search(re.sub(r"<[^>]*>", "", body)))
        assert (f'font-family: "{FONTS.CJK_FAMILY}"; ' in text) == cjk, path.name
        assert (f'font-family: "{FONTS.MATH_FAMILY}"; ' in text) == ("<math" in body), path.name


@pytest.fixture(scope="session")
def bare_fonts(tmp_path_factory) -> Path:
    """A fontconfig file that shows the browser only the installed fonts without Chinese glyphs
    and without a MATH table (DejaVu Sans and the like), as on a machine with neither."""
    folder = tmp_path_factory.mktemp("bare-fonts")
    listed = subprocess.run(["fc-list", "--format", "%{file}\n"], capture_output=True, text=True,
                            check=True).stdout.split()
    chinese = set(subprocess.run(["fc-list", ":lang=zh", "--format", "%{file}\n"], capture_output=True,
                                 text=True, check=True).stdout.split())
    kept = [Path(f) for f in listed if f not in chinese and "math" not in Path(f).name.lower()
            and Path(f).suffix.lower() in (".ttf", ".otf")]
    assert kept, "no installed font without Chinese glyphs or a MATH table to test with"
    fonts = folder / "fonts"
    fonts.mkdir()
    for i, path in enumerate(kept):
        (fonts / f"{i}-{path.name}").symlink_to(path)
    config = folder / "fonts.conf"
    config.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>'
                      f"<dir>{fonts}</dir><cachedir>{folder / 'cache'}</cachedir></fontconfig>\n")
    return config


def _without_font(site: Path, name: str, family: str, into: Path) -> Path:
    """A copy of a page whose embedded ``family`` is gone (the control)."""
    text = (site / f"{name}.html").read_text(encoding="utf-8")
    face = re.compile(r'@font-face \{ font-family: "' + re.escape(family) + r'";[^}]*\}')
    assert face.search(text), f"{name} embeds no {family}"
    into.mkdir(parents=True, exist_ok=True)
    copy_ = into / f"{name}.html"
    copy_.write_text(face.sub("", text), encoding="utf-8")
    return copy_


def _fonts_of(cdp, selector: str) -> list[tuple[str, list[dict]]]:
    """For each element matching ``selector``: its text and the fonts Chromium drew it with."""
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    found = []
    for node in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]:
        html = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
        text = re.sub(r"<[^>]*>", "", html)
        found.append((text, cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]))
    return found


@pytest.fixture
def bare_browser(chromium, bare_fonts):
    """Headless Chromium that sees the fonts of ``bare_fonts`` only (one per test: a session-wide
    one would hold playwright's loop while the ``pages`` fixture starts its own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS,
                                    env={**os.environ, "FONTCONFIG_FILE": str(bare_fonts)})
        try:
            yield browser
        finally:
            browser.close()


def _families(config: Path) -> set[str]:
    """The font families a fontconfig file shows."""
    listed = subprocess.run(["fc-list", "--format", "%{family}\n"], capture_output=True, text=True,
                            check=True, env={**os.environ, "FONTCONFIG_FILE": str(config)}).stdout
    return {name for line in listed.splitlines() for name in line.split(",")}


GLOSSARY_CELLS = "#glossary-under-test td:first-child"
MARK_GLOSSARY = """() => {
  const table = Array.from(document.querySelectorAll('table')).find(
      t => t.querySelector('th') && t.querySelector('th').textContent.trim() === '中文');
  table.id = 'glossary-under-test';
  table.scrollIntoView();
}"""


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
               else route.abort())
    page.goto(path.as_uri(), wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    return page, cdp


def test_chinese_text_is_drawn_without_a_chinese_font_installed(site, bare_browser, bare_fonts,
                                                               tmp_path):
    """The glossary's Chinese terms are drawn with the embedded subset, one glyph per character,
    by a browser that sees no Chinese font; without the embedded font they are drawn with the
    installed fonts only (empty boxes: compare the two screenshots in build/site-screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    installed = _families(bare_fonts)
    assert installed and not installed & {"Noto Sans CJK SC", "WenQuanYi Micro Hei"}, installed
    name, cells = "00-start-here", GLOSSARY_CELLS
    page, cdp = _open(bare_browser, site / f"{name}.html")
    page.evaluate(MARK_GLOSSARY)
    terms = [(text, fonts) for text, fonts in _fonts_of(cdp, cells) if FONTS.CJK.search(text)]
    assert len(terms) > 20, f"the glossary has {len(terms)} Chinese terms"
    for text, fonts in terms:
        embedded = [f for f in fonts if f["isCustomFont"] and f["familyName"] == FONTS.CJK_FAMILY]
        assert embedded, f"{text!r} is not drawn with the embedded font: {fonts}"
        assert embedded[0]["glyphCount"] == len(FONTS.CJK.findall(text)), (text, fonts)
    glossary = page.locator("#glossary-under-test")
    page.screenshot(path=str(SCREENSHOTS / f"{name}-glossary-no-cjk-font.png"))
    shown = glossary.screenshot()
    page.close()

    control, cdp = _open(bare_browser, _without_font(site, name, FONTS.CJK_FAMILY, tmp_path))
    control.evaluate(MARK_GLOSSARY)
    used = {f["familyName"] for _, fonts in _fonts_of(cdp, cells) for f in fonts}
    assert used and FONTS.CJK_FAMILY not in used and used <= installed, used
    control.screenshot(path=str(SCREENSHOTS / f"{name}-glossary-font-blocked.png"))
    assert control.locator("#glossary-under-test").screenshot() != shown, \
        "the page looks the same without its Chinese font"
    control.close()


BOXES = r"""() => {
  const boxes = {};
  const cases = Array.from(document.querySelectorAll('math')).find(
      m => (m.getAttribute('alttext') || '').includes('\\begin{cases}'));
  if (cases) {
    cases.scrollIntoView();
    const brace = cases.querySelector('mo[fence="true"][form="prefix"]');
    boxes.brace = brace.getBoundingClientRect().height;
    boxes.rows = brace.nextElementSibling.getBoundingClientRect().height;
  }
  const bar = document.querySelector('math .site-overline');
  if (bar) {
    const style = getComputedStyle(bar);
    boxes.barWidth = parseFloat(style.borderTopWidth);
    boxes.barStyle = style.borderTopStyle;
    boxes.overlined = bar.getBoundingClientRect().width;
    boxes.content = bar.firstElementChild.getBoundingClientRect().width;
  }
  return boxes;
}"""


def test_formulas_are_laid_out_with_the_embedded_math_font(site, bare_browser):
    """On a browser with no math font: every formula is drawn with the embedded one, the cases
    brace of NDCG's gain stretches over both rows, the bar over NDCG covers the whole word, and
    no page sets a metric's name letter by letter (D C G in italics)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page, cdp = _open(bare_browser, site / "05-ndcg.html")
    page.evaluate("() => { for (const d of document.querySelectorAll('details')) d.open = true; }")
    tokens = [(text, fonts) for text, fonts in _fonts_of(cdp, "math mi, math mo, math mn, math mtext")
              if text.strip()]
    assert len(tokens) > 100
    for text, fonts in tokens:
        families = {f["familyName"] for f in fonts}
        assert families and families <= {FONTS.MATH_FAMILY, FONTS.CJK_FAMILY}, \
            f"{text!r} is drawn with {families}"
    boxes = page.evaluate(BOXES)
    assert boxes["brace"] >= 0.9 * boxes["rows"], f"the cases brace does not stretch: {boxes}"
    assert boxes["barStyle"] == "solid" and boxes["barWidth"] > 0, boxes
    assert boxes["overlined"] >= boxes["content"] > 0, boxes
    for alttext, shot in (("begin{cases}", "cases"), ("overline{", "overline")):
        formula = page.locator(f'math[alttext*="{alttext}"]').first
        formula.scroll_into_view_if_needed()
        formula.screenshot(path=str(SCREENSHOTS / f"05-ndcg-formula-{shot}.png"))
    page.close()
    letters = re.compile("".join(rf"<mi>{c}</mi>" for c in "DCG"))
    for name in PAGES:
        text = (site / f"{name}.html").read_text(encoding="utf-8")
        assert not letters.search(text), f"{name} sets DCG letter by letter"
    assert "<mi>NDCG</mi>" in (site / "05-ndcg.html").read_text(encoding="utf-8")



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
    # the bar over all four letters: a rule over the mrow (site.css), not a fixed-width dash
    (r"\overline{\mathrm{NDCG}}", '<mrow class="site-overline"><mrow><mrow><mi mathvariant="normal">NDCG</mi>',
     "&#x02015;"),
    (r"\overline{x + \overline{y}}", '<mrow class="site-overline"><mrow><mi>x</mi><mo>&#x0002B;</mo>'
     '<mrow class="site-overline">', "mover"),
    # names written as letters come out as one upright <mi>, with their scripts kept
    (r"DCG_u@k", "<msub><mi>DCG</mi><mi>u</mi></msub>", "<mi>D</mi>"),
    (r"\frac{TP}{TP + FN}", "<mi>TP</mi><mo>&#x0002B;</mo><mi>FN</mi>", "<mi>T</mi>"),
    (r"IDCG_u^2", "<msubsup><mi>IDCG</mi><mi>u</mi><mn>2</mn></msubsup>", None),
    (r"\mathrm{rel}_i", '<mi mathvariant="normal">rel</mi>', None),
    # ... but products and indices are not names
    (r"\frac{1}{PN}", "<mi>P</mi><mi>N</mi>", "<mi>PN</mi>"),
    (r"\frac{2PR}{P+R}", "<mi>P</mi><mi>R</mi>", "<mi>PR</mi>"),
    (r"U_H", "<msub><mi>U</mi><mi>H</mi></msub>", None),
    (r"A_P", "<msub><mi>A</mi><mi>P</mi></msub>", "<mi>AP</mi>"),
    # \Big\{ is a brace, not a backslash
    (r"\Big\{ x \Big\}", 'maxsize="1.623em">&#x0007B;</mo>', ">\\{</mo>"),
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


def test_links_out_of_the_site_become_text():
    body = ('<a href="https://github.com/usnistgov/trec_eval">https://github.com/usnistgov/trec_eval</a>, '
            '<a href="https://docs.dask.org">Dask</a>, <a href="05-ndcg.html#x">NDCG</a>')
    assert book.unlink_external(body) == ('https://github.com/usnistgov/trec_eval, '
                                          'Dask (https://docs.dask.org), <a href="05-ndcg.html#x">NDCG</a>')


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
