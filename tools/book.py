"""Build the offline study site in build/ from the notebooks. Run through tasks.py:

    python3 tasks.py report [--execute]      every notebook -> build/index.html + one page each
    python tools/book.py [--out DIR] [--execute] [NOTEBOOK ...]

Every notebook is shown executed top to bottom, one HTML page each. A notebook's stored outputs
are reused when the fingerprint recorded with them (by tools/notebooks.py, which executes
notebooks: their code, the recmetrics package, the data, Python's and the libraries' versions)
equals the fingerprint now; otherwise, or for every notebook with ``--execute`` (``--no-cache``),
it is executed (two at a time) as ``tasks.py execute`` does. One line per notebook says which,
and what changed; the index says which pages reused outputs, recorded when. The test command
checks every stored output against a fresh run (nbval). Then the pages are written (the same
notebook makes the same page, byte for byte), each so:

* formulas are converted from LaTeX to MathML here, at build time (latex2mathml), so the pages
  typeset them with no network and no script; a formula that does not convert stops the build;
* the page is titled from the notebook's first heading and gets links home, to the previous and
  next page, and a table of contents of its sections;
* cells tagged ``remove-cell`` (only asserts, see tools/tag_cells.py) are left out, as are the
  inputs of ``remove-input`` and the outputs of ``remove-output`` cells (nbval still runs them);
* the answers of the exercises (from the first "*Answer" paragraph of a cell in the Exercises
  section, with the code cells that check them) are folded in ``<details>``;
* an error output shows its one-line message, never a traceback;
* every figure gets alt text (figure_alt_texts): the cell's ``metadata["alt"]``, else the
  figure's own description, recorded as the notebook runs (site_template/figure_alt.py runs in
  the kernel tools/notebooks.py starts: title, axes, legend and what a recmetrics plot
  summarised) and led by the cell's "# Figure: ..." comment or its section heading; notebooks
  executed elsewhere fall back to the comment or the Markdown above;
* the pages follow the notebooks' numbers, except that ``SITE_ORDER`` may move a page before
  another (notebook 14, on evaluation protocol, comes before the capstone, 10);
* after the notebooks come the user guide, docs/guide/*.md (``GUIDE_ORDER``), one page each
  (guide-NAME.html), and the API reference written from the docstrings (reference.html, by
  tools/api_reference.py), rendered by the same Markdown renderer and template; links between
  guide pages and to notebooks point at the built pages, and their figures are embedded.

Nothing on a page is loaded from the network: the CSS is inlined, figures are embedded PNG, and
a page that shows Chinese characters embeds the subset of Noto Sans CJK SC that holds them, and
a page with formulas a subset of STIX Two Math (site_template/fonts/, made by tools/site_fonts.py),
so it reads right on a machine with no Chinese or math font.
"""
from __future__ import annotations

import argparse
import base64
import copy
import html
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import latex2mathml.converter
import nbformat
from jinja2 import pass_context
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import TagRemovePreprocessor


def _tool(name: str):
    """A module of this folder by its path (``import notebooks`` could find notebooks/ instead)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"_recmetrics_tools_{name}",
                                                  Path(__file__).resolve().parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_notebooks = _tool("notebooks")          # tools/notebooks.py: how a notebook is executed
notebook_paths = _notebooks.notebook_paths
_fonts = _tool("site_fonts")             # tools/site_fonts.py: the embedded fonts
_api_reference = _tool("api_reference")  # tools/api_reference.py: docstrings -> Markdown

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
TEMPLATES = Path(__file__).resolve().parent / "site_template"
SITE_NAME = "recmetrics"
JOBS = _notebooks.JOBS         # notebooks executed at once (each in its own kernel)

GUIDE = ROOT / "docs" / "guide"
#: The user guide's pages in reading order (docs/guide/NAME.md -> guide-NAME.html); a page not
#: listed here follows them, by name.
GUIDE_ORDER = ("evaluate", "command-line", "conventions", "api", "engines", "speed", "contributing")
REFERENCE = "reference"        # the API reference's page: reference.html

HIDE_CELL, HIDE_INPUT, HIDE_OUTPUT = "remove-cell", "remove-input", "remove-output"
FIGURE_ALT = _notebooks.FIGURE_ALT      # run in the kernel: figures describe themselves
#: Execute one notebook and record its fingerprint: tools/notebooks.py's run, the one way.
run = _notebooks.run


# ---------------------------------------------------------------------------------------------
# Formulas: LaTeX -> MathML


class MathError(ValueError):
    """A formula that latex2mathml cannot typeset faithfully."""


# What latex2mathml does not know, rewritten to what it does (checked on every formula of
# every notebook: the build stops on anything that still leaves a backslash in the output).
_TEX_REWRITES = [
    (re.compile(r"\\arg\\(min|max)(?![A-Za-z])"), r"\\mathrm{arg\\,\1}"),
    (re.compile(r"\\dfrac(?![A-Za-z])"), r"\\frac"),
    # amsmath's aligned is align* inside a formula; latex2mathml knows only the latter
    (re.compile(r"\\(begin|end)\{(?:aligned|alignedat)\}(?:\{\d+\})?"), r"\\\1{align*}"),
    (re.compile(r"\\(begin|end)\{gathered\}"), r"\\\1{gather*}"),
    # the extra space after a line break, \\[4pt], is not understood: drop it
    (re.compile(r"\\\\\[[^\]]*\]"), r"\\\\"),
]
_TEXT_ARG = re.compile(r"\\(text|mathrm|textrm|textbf|textit|mbox)\{((?:[^{}]|\{[^{}]*\})*)\}")
_BARE_AMPERSAND = re.compile(r"&(?!#?[0-9A-Za-z]+;)")


def _unescape_text(match: re.Match) -> str:
    # inside \text{...}, \& \_ \% \$ \# are the characters themselves
    body = re.sub(r"\\([&_%$#])", r"\1", match.group(2))
    return f"\\{match.group(1)}{{{body}}}"


# latex2mathml draws \overline with a fixed-width bar (U+2015) that covers two letters of
# \overline{NDCG}; a stretchy U+203E is drawn from pieces that Chromium leaves dashed at text
# size. The overlined part becomes an <mrow class="site-overline">, barred by site.css (a
# border, crisp at any size and in any browser).
_OVERLINE_MO = '<mo accent="true">&#x02015;</mo></mover>'
# A name written as letters, DCG_u or TP, comes out as one italic <mi> per letter ("D C G"):
# a run of capitals that spells one of NAMES becomes one <mi>, which MathML sets upright, as
# \mathrm would. Other runs are left: PN in 1/(PN) and 2PR in F1 are products, S_{AA} an index.
NAMES = frozenset({"CG", "DCG", "IDCG", "NDCG", "AP", "MAP", "RR", "MRR", "HR", "AUC", "GAUC",
                   "TP", "FP", "FN", "TN", "TPR", "FPR", "TNR", "FNR", "ACC", "MSE", "RMSE", "MAE",
                   "ERR", "RBP", "ARP", "APLT", "ECE", "NE", "GT", "IPS", "SNIPS", "CTR"})
_SCRIPTED = "".join(rf"(?<!<{tag}>)" for tag in ("msub", "msup", "msubsup", "mover", "munder",
                                                  "munderover", "mfrac", "mroot"))
_CAPITALS = re.compile(_SCRIPTED + r"((?:<mi>[A-Z]</mi>){1,})(<msub>|<msup>|<msubsup>)<mi>([A-Z])</mi>"
                       r"|" + _SCRIPTED + r"(?:<mi>[A-Z]</mi>){2,}")
# \mathrm{NDCG} comes out as one <mi mathvariant="normal"> per letter: one <mi> for the word.
_UPRIGHT_LETTERS = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){2,}')


def _overlines(mathml: str) -> str:
    """``<mover><mrow>X</mrow><mo accent>―</mo></mover>`` -> ``<mrow class="site-overline">X</mrow>``."""
    while (end := mathml.find(_OVERLINE_MO)) >= 0:
        depth, i = 0, end
        while True:                                   # the <mover> this bar closes
            i = max(mathml.rfind("<mover>", 0, i), mathml.rfind("</mover>", 0, i))
            if mathml.startswith("</mover>", i):
                depth += 1
            elif depth == 0:
                break
            else:
                depth -= 1
        inner = mathml[i + len("<mover>"):end]
        mathml = (mathml[:i] + f'<mrow class="site-overline">{inner}</mrow>'
                  + mathml[end + len(_OVERLINE_MO):])
    return mathml


def _names(match: re.Match) -> str:
    if match.group(2):                  # the last capital carries a sub- or superscript
        letters = "".join(re.findall(r"<mi>([A-Z])</mi>", match.group(1))) + match.group(3)
        return f"{match.group(2)}<mi>{letters}</mi>" if letters in NAMES else match.group(0)
    letters = "".join(re.findall(r"<mi>([A-Z])</mi>", match.group(0)))
    return f"<mi>{letters}</mi>" if letters in NAMES else match.group(0)
# \log n and \ln p come out as <mi>log</mi><mi>n</mi>, which browsers set as "logn": add TeX's
# thin space after an operator name unless a parenthesis follows, as in \log(x).
_OPERATOR_NAME = re.compile(
    r"((?<!<msub>)<mi>(?:log|ln|lg|exp|sin|cos|tan|det|dim|sgn)</mi>"
    r"|<msub><mi>(?:log|ln|lg)</mi>(?:<mn>[^<]*</mn>|<mi>[^<]*</mi>)</msub>)"
    r'(?!<mo stretchy="false">&#x00028;|<mo>&#x00028;)(?=<m)')


# \big\{ and the like come out as <mo minsize=...>\{</mo>: the brace itself
_SIZED_ESCAPE = re.compile(r'(<mo minsize="[^"]*" maxsize="[^"]*">)\\([{}|])(</mo>)')
_BRACES = {"{": "&#x0007B;", "}": "&#x0007D;", "|": "&#x02016;"}


def _fix_mathml(mathml: str) -> str:
    mathml = _SIZED_ESCAPE.sub(lambda m: m.group(1) + _BRACES[m.group(2)] + m.group(3), mathml)
    mathml = _overlines(mathml)
    mathml = _CAPITALS.sub(_names, mathml)
    mathml = _UPRIGHT_LETTERS.sub(
        lambda m: f'<mi mathvariant="normal">{"".join(re.findall(r">([A-Za-z])<", m.group(0)))}</mi>',
        mathml)
    return _OPERATOR_NAME.sub(r'\1<mspace width="0.1667em"></mspace>', mathml)


def tex_to_mathml(tex: str, display: bool) -> str:
    """One formula as a ``<math>`` element; ``MathError`` when it would show raw LaTeX."""
    source = tex.strip()
    for pattern, replacement in _TEX_REWRITES:
        source = pattern.sub(replacement, source)
    source = _TEXT_ARG.sub(_unescape_text, source)
    try:
        mathml = latex2mathml.converter.convert(source, display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many types; report the formula
        raise MathError(f"cannot convert {tex!r}: {type(error).__name__}: {error}") from None
    mathml = _BARE_AMPERSAND.sub("&amp;", mathml)
    mathml = _fix_mathml(mathml)
    visible = html.unescape(re.sub(r"<[^>]+>", "", mathml))
    if ("\\" in visible or "<mi>&amp;</mi>" in mathml or re.search(r"\[[\d.]+(pt|em|ex|mm)\]", visible)
            or ("\\begin" in source and "<mtable" not in mathml)):
        raise MathError(f"cannot convert {tex!r}: the MathML would show {visible!r}")
    alt = html.escape(" ".join(tex.split()), quote=True)
    return mathml.replace("<math ", f'<math alttext="{alt}" ', 1)


class MathMLRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer, with formulas typeset as MathML instead of left for MathJax."""

    def block_math(self, body: str) -> str:
        return tex_to_mathml(body, display=True)

    def latex_environment(self, name: str, body: str) -> str:
        return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)

    def inline_math(self, body: str) -> str:
        return tex_to_mathml(body, display=False)

    def heading(self, text: str, level: int, **attrs) -> str:
        # nbconvert's add_anchor re-serialises the heading with ElementTree, which prefixes
        # MathML tags (ns0:math) so that browsers no longer typeset them; ids and anchor
        # links are added after the export instead (number_headings)
        return f'<h{level} id="">{text}</h{level}>\n'


def markdown_to_html(source: str) -> str:
    """Markdown with formulas, as nbconvert renders a notebook's Markdown cell."""
    return MarkdownWithMath(renderer=MathMLRenderer(escape=False, anchor_link_text="¶")).render(source)


class BookExporter(HTMLExporter):
    """The JupyterLab HTML export, with MathML formulas and the site's template (no CDN)."""

    def __init__(self, **kw):
        # no In [n] prompts: the hidden check cells would leave gaps in the numbering
        super().__init__(extra_template_basedirs=[str(TEMPLATES)], template_name="site",
                         exclude_input_prompt=True, exclude_output_prompt=True, **kw)

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = MathMLRenderer(escape=False, attachments=cell.get("attachments", {}),
                                  embed_images=True, anchor_link_text="¶")
        return MarkdownWithMath(renderer=renderer).render(source)


# ---------------------------------------------------------------------------------------------
# Notebook -> what the reader sees


def hide_tagged_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop ``remove-cell`` cells, ``remove-input`` inputs and ``remove-output`` outputs."""
    remover = TagRemovePreprocessor(enabled=True, remove_cell_tags={HIDE_CELL},
                                    remove_input_tags={HIDE_INPUT},
                                    remove_all_outputs_tags={HIDE_OUTPUT})
    nb, _ = remover.preprocess(copy.deepcopy(nb), {})
    return nb


_EXERCISES = re.compile(r"^#{1,3}\s.*\bExercises?\b", re.M | re.I)
_HEADING = re.compile(r"^#{1,3}\s", re.M)
_ANSWER = re.compile(r"^\s*\*{1,2}Answers?\b", re.M)


_FIGURE_COMMENT = re.compile(r"^\s*#\s*Figure:\s*(.+?)\s*$")
_COMMENT = re.compile(r"^\s*#\s*(?:Figure:\s*)?(.+?)\s*$")
_DEFAULT_ALT = "No description has been provided for this image"
ALT_LIMIT = 1000               # characters of alt text kept (a screen reader reads it all)


def _first_sentence(text: str) -> str:
    """The first sentence of at least 25 characters ("5. Picture:" is a heading, not one)."""
    return (re.match(r"(.{25,}?[.!?])(?:\s|$)|.{0,200}", text).group(1) or text[:200])[:300]


def _heading_text(markdown: str) -> str:
    """The last heading of a Markdown cell, as text without its section number."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", markdown, re.M)
    if not headings:
        return ""
    return re.sub(r"^\d+(?:\.\d+)*\s*[·.]?\s*", "", plain_text(headings[-1]).replace("¶", "")).strip()


def _without_mathtext(text: str) -> str:
    """Matplotlib's $...$ labels as words: ``$e = \\hat y - y$`` reads "e = hat y - y"."""
    def words(match: re.Match) -> str:
        inner = re.sub(r"\\([A-Za-z]+)\s*", r"\1 ", match.group(1))
        text = " ".join(re.sub(r"[{}\\_^]", " ", inner).split())
        inner = match.group(1)
        return (" " if inner[:1].isspace() else "") + text + (" " if inner[-1:].isspace() else "")
    return re.sub(r"\$([^$]+)\$", words, text)


def _explicit_alt(cell, n_figures: int) -> list[str] | None:
    """The author's alt text: ``cell.metadata["alt"]``, a string (every figure of the cell) or
    a list of strings (one per figure, in output order)."""
    alt = cell.metadata.get("alt")
    if isinstance(alt, str) and alt.strip():
        return [alt.strip()] * n_figures
    if isinstance(alt, list) and len(alt) == n_figures and all(
            isinstance(a, str) and a.strip() for a in alt):
        return [a.strip() for a in alt]
    return None


def figure_alt_texts(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Give every PNG output alt text (``output.metadata["site_alt"]``, read by the template).

    In order of preference:

    1. the cell's ``metadata["alt"]``: a string, or a list with one string per figure;
    2. what the figure says of itself, recorded when the notebook was executed (by
       tools/notebooks.py's ``run``, ``output.metadata["image/png"]["alt"]``, see
       site_template/figure_alt.py: title,
       axis labels and ranges, legend, and the summary a recmetrics plot records), led by
       the cell's "# Figure: ..." comment, else by the heading of its section;
    3. without that record (a notebook executed elsewhere): the "# Figure: ..." comment, else
       the first comment line of the cell, else the first sentence of the Markdown cell above,
       else the section's heading.

    Every text starts with "Figure: " and is cut at ``ALT_LIMIT`` characters.
    """
    previous = heading = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            prose = re.sub(r"^#{1,6}\s.*$", "", cell.source, flags=re.M)   # headings apart
            text = re.sub(r"^\d+(?:\.\d+)*\s*[·.]?\s*", "",            # no section number
                          plain_text(prose).replace("¶", "").strip())
            if text:
                previous = text
            heading = _heading_text(cell.source) or heading
            continue
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not pngs:
            continue
        lines = cell.source.splitlines()[:3]
        figure_comment = next((m.group(1) for line in lines if (m := _FIGURE_COMMENT.match(line))), "")
        comment = next((m.group(1) for line in lines if (m := _COMMENT.match(line))), "")
        explicit = _explicit_alt(cell, len(pngs))
        for i, output in enumerate(pngs):
            metadata = output.setdefault("metadata", {})
            recorded = metadata.get("image/png", {})
            described = _without_mathtext(recorded.get("alt", "")) if isinstance(recorded, dict) \
                else ""
            panel = f" (figure {i + 1} of {len(pngs)})" if len(pngs) > 1 else ""
            if explicit:
                alt = explicit[i]
            elif described:
                lead = (figure_comment or heading).rstrip(".")
                alt = f"{lead}{panel}. {described}" if lead else described
            else:
                alt = (comment or _first_sentence(previous) or heading or "a figure") + panel
            alt = " ".join(alt.split())
            if len(alt) > ALT_LIMIT:
                alt = alt[:ALT_LIMIT - 1].rstrip() + "…"
            metadata["site_alt"] = f"Figure: {alt}"
    return nb


def _part_of(cell: nbformat.NotebookNode, source: str, part: str) -> nbformat.NotebookNode:
    """A Markdown cell cut from ``cell``, with an id made from its id (not a random one: the same
    notebook makes the same page, byte for byte)."""
    return nbformat.v4.new_markdown_cell(source, id=f"{cell.get('id') or 'cell'}-{part}"[:64])


_SOURCE_SECTION = re.compile(r"^(#{1,3})\s.*\bWhere the source goes wrong\b.*$", re.M | re.I)


def fold_source_corrections(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Fold the body of the "Where the source goes wrong" section in one ``<details>``.

    The section's heading stays in view; what follows it, up to the next heading of the same
    or a higher level, is folded: a reader of the lesson meets the source posts' mistakes only
    when she asks for them (each is still quoted, corrected and asserted in the notebook).
    """
    start = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                  and _SOURCE_SECTION.search(c.source)), None)
    if start is None:
        return nb
    cell = nb.cells[start]
    match = _SOURCE_SECTION.search(cell.source)
    level = len(match.group(1))
    before, rest = cell.source[:match.end()], cell.source[match.end():].strip("\n")
    cells = list(nb.cells[:start]) + [_part_of(cell, before, "heading")]
    body = [_part_of(cell, rest, "body")] if rest.strip() else []
    end = start + 1
    ends = re.compile(rf"^#{{1,{level}}}\s", re.M)
    while end < len(nb.cells) and not (nb.cells[end].cell_type == "markdown"
                                       and ends.match(nb.cells[end].source.lstrip())):
        body.append(nb.cells[end])
        end += 1
    if not body:
        return nb
    body[0].metadata.setdefault("site", {}).update(
        open_fold="Show the source posts' mistakes and their corrections", fold_class="site-source")
    body[-1].metadata.setdefault("site", {})["close_fold"] = True
    nb.cells = cells + body + list(nb.cells[end:])
    return nb


def fold_answers(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Mark the answers of the exercises, to be folded in ``<details>`` by the template.

    In the Exercises section, a Markdown cell is cut at its first paragraph that starts with
    "*Answer" or "**Answer(s)"; that part, the code cells after it and any Markdown cell that
    itself starts with an answer form one fold, up to the next other Markdown cell.
    """
    cells, in_exercises, in_answer = [], False, False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if _HEADING.search(cell.source):
                in_exercises = bool(_EXERCISES.search(cell.source)) or (
                    in_exercises and not re.search(r"^#{1,2}\s", cell.source, re.M))
            match = _ANSWER.search(cell.source) if in_exercises else None
            if match is None:
                in_answer = False
                cells.append(cell)
                continue
            question, answer = cell.source[:match.start()], cell.source[match.start():]
            if question.strip():
                cells.append(_part_of(cell, question, "question"))
            answer_cell = _part_of(cell, answer, "answer")
            answer_cell.metadata["site"] = {"answer": True}
            cells.append(answer_cell)
            in_answer = True
        else:
            if in_answer:
                cell.metadata.setdefault("site", {})["answer"] = True
            cells.append(cell)
    for i, cell in enumerate(cells):
        if not cell.metadata.get("site", {}).get("answer"):
            continue
        site = cell.metadata["site"]
        if i == 0 or not cells[i - 1].metadata.get("site", {}).get("answer"):
            site["open_answer"] = "Show the answer (try the exercise first)"
        if i + 1 == len(cells) or not cells[i + 1].metadata.get("site", {}).get("answer"):
            site["close_answer"] = True
    nb.cells = cells
    return nb


def plain_text(markdown: str) -> str:
    """The text a line of Markdown shows (formulas as their MathML text)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markdown_to_html(markdown))).split())


def title_and_summary(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """The first heading (Markdown) and the first paragraph after it (Markdown)."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("# "):
                rest = "\n".join(lines[i + 1:]).strip()
                summary = rest.split("\n\n")[0] if rest else ""
                return line[2:].strip(), summary
    return "", ""


# ---------------------------------------------------------------------------------------------
# HTML after the export: heading ids, table of contents, links between pages

_HEADING_TAG = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)</h\1>', re.S)
_ANCHOR_LINK = re.compile(r'<a class="anchor-link" href="[^"]*">[^<]*</a>')


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w]+", "-", text.lower(), flags=re.U).strip("-")
    return slug or "section"


def number_headings(body: str) -> tuple[str, list[tuple[int, str, str]]]:
    """Give every heading a short unique id; return the page and its (level, id, text) list."""
    seen: dict[str, int] = {}
    headings: list[tuple[int, str, str]] = []

    def replace(match: re.Match) -> str:
        level, inner = int(match.group(1)), _ANCHOR_LINK.sub("", match.group(3))
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", inner)).split())
        slug = _slug(text)
        seen[slug] = seen.get(slug, 0) + 1
        if seen[slug] > 1:
            slug = f"{slug}-{seen[slug]}"
        headings.append((level, slug, inner))
        return (f'<h{level} id="{slug}">{inner}<a class="anchor-link" href="#{slug}" '
                f'aria-label="link to this section">¶</a></h{level}>')

    return _HEADING_TAG.sub(replace, body), headings


def table_of_contents(headings: list[tuple[int, str, str]]) -> str:
    items = [f'<li class="toc-h{level}"><a href="#{slug}">{_ANCHOR_LINK.sub("", inner)}</a></li>'
             for level, slug, inner in headings if level in (2, 3)]
    if not items:
        return ""
    return ('<nav class="site-toc" aria-label="On this page"><p class="site-toc-title">On this page</p>'
            f'<ul>{"".join(items)}</ul></nav>')


def link_pages(body: str, pages: set[str]) -> str:
    """Links to ``NN-name.ipynb`` (in any folder: the guide writes ``../../notebooks/``) become
    links to the built ``NN-name.html``; links to a guide page ``NAME.md`` to ``guide-NAME.html``,
    and to the README to the index."""
    def replace(match: re.Match) -> str:
        stem, anchor = match.group(1), match.group(2) or ""
        return f'href="{stem}.html{anchor}"' if stem in pages else match.group(0)

    def guide(match: re.Match) -> str:
        stem, anchor = match.group(1), match.group(2) or ""
        if stem == "README":
            return f'href="index.html{anchor}"'
        return f'href="guide-{stem}.html{anchor}"' if f"guide-{stem}" in pages else match.group(0)

    body = re.sub(r'href="(?:[\w.-]*/)*([\w.-]+)\.ipynb(#[^"]*)?"', replace, body)
    return re.sub(r'href="(?:[\w.-]*/)*([\w.-]+)\.md(#[^"]*)?"', guide, body)


def embed_images(body: str, folder: Path) -> str:
    """``<img src="figure.png">`` relative to ``folder`` becomes an embedded PNG."""
    def replace(match: re.Match) -> str:
        path = (folder / html.unescape(match.group(1))).resolve()
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'src="data:image/png;base64,{data}"'
    return re.sub(r'src="(?!data:)([^":]+\.png)"', replace, body)


def navigation(prev: tuple[str, str] | None, nxt: tuple[str, str] | None, where: str) -> str:
    parts = [f'<a class="site-home" href="index.html" rel="home">{SITE_NAME} · all pages</a>']
    if prev:
        parts.append(f'<a class="site-prev" href="{prev[0]}" rel="prev">← {html.escape(prev[1])}</a>')
    if nxt:
        parts.append(f'<a class="site-next" href="{nxt[0]}" rel="next">{html.escape(nxt[1])} →</a>')
    return f'<nav class="site-nav site-nav-{where}" aria-label="pages">{"".join(parts)}</nav>'


CSS = (TEMPLATES / "site.css").read_text(encoding="utf-8")


def font_face_css(path: Path, family: str, ranges: list[tuple[int, int]] | None = None) -> str:
    """The @font-face of an embedded font (site.css names "recmetrics CJK" and "recmetrics
    Math"); with ``ranges``, used for those characters only."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    unicode_range = ("unicode-range: " + ", ".join(f"U+{a:04X}-{b:04X}" for a, b in ranges) + "; "
                     if ranges else "")
    return (f'@font-face {{ font-family: "{family}"; font-style: normal; font-display: block; '
            f'src: url(data:font/woff2;base64,{data}) format("woff2"); {unicode_range}}}\n')


def embedded_fonts(body: str) -> str:
    """The @font-face rules a page needs: the Chinese font if it shows a Chinese character, the
    math font if it holds a formula."""
    css, shown = "", body.split("<body", 1)[-1]
    if _fonts.CJK.search(re.sub(r"<[^>]*>", "", shown)):
        css += font_face_css(_fonts.CJK_FONT, _fonts.CJK_FAMILY, _fonts.CJK_RANGES)
    if "<math" in shown:
        css += font_face_css(_fonts.MATH_FONT, _fonts.MATH_FAMILY)
    return css


def render_page(nb: nbformat.NotebookNode, title: str, prev, nxt, pages: set[str]) -> str:
    """One notebook, executed, as a self-contained HTML page titled ``title``."""
    shown = figure_alt_texts(fold_source_corrections(fold_answers(hide_tagged_cells(nb))))
    site = {"title": title, "css": CSS, "toc_marker": "<!--toc-->",
            "nav_top": navigation(prev, nxt, "top"), "nav_bottom": navigation(prev, nxt, "bottom")}
    body, _ = BookExporter().from_notebook_node(shown, resources={"site": site})
    body, headings = number_headings(body)
    body = body.replace("<!--toc-->", table_of_contents(headings), 1)
    fonts = embedded_fonts(body)
    if fonts:
        body = body.replace('<style type="text/css">', f'<style type="text/css">\n{fonts}', 1)
    return link_pages(body, pages)


def unlink_external(body: str) -> str:
    """A link out of the site becomes its text and, when they differ, the address after it:
    the site is read offline, and every link on it resolves on the disk."""
    def replace(match: re.Match) -> str:
        href, text = html.unescape(match.group(1)), match.group(2)
        shown = html.unescape(re.sub(r"<[^>]+>", "", text)).strip()
        return text if shown in (href, href.split("://", 1)[-1]) else f"{text} ({html.escape(href)})"
    return re.sub(r'<a href="((?:https?|ftp|mailto):[^"]*)"[^>]*>(.*?)</a>', replace, body, flags=re.S)


def markdown_page(markdown: str, title: str, prev, nxt, pages: set[str], folder: Path) -> str:
    """A Markdown document (a guide page, the reference) as a page, like a notebook's."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown, id="page")])
    return unlink_external(embed_images(render_page(nb, title, prev, nxt, pages), folder))


def guide_paths(folder: Path = GUIDE) -> list[Path]:
    """The guide's pages in reading order (``GUIDE_ORDER``, then any other by name)."""
    found = {p.stem: p for p in folder.glob("*.md")}
    return [found[n] for n in GUIDE_ORDER if n in found] + sorted(
        p for n, p in found.items() if n not in GUIDE_ORDER)


def markdown_title_and_summary(markdown: str) -> tuple[str, str]:
    """A Markdown document's first heading and the first paragraph after it."""
    return title_and_summary(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)]))


def index_notebook(entries: list[tuple[str, str, str]],
                   documents: list[tuple[str, str, str]] = (),
                   sources: list[Source] | None = None) -> nbformat.NotebookNode:
    """The index as a notebook of Markdown, rendered by the same exporter as every page.
    ``sources``: where each entry's outputs come from (default: every one executed)."""
    sources = sources or [Source(True)] * len(entries)
    reused = sum(not how.executed for how in sources)
    lines = [f"# {SITE_NAME}: evaluation metrics for recommenders and classifiers, explained\n",
             "Each page below is a notebook of the kit, executed top to bottom"
             f"{'' if reused else ' when this site was built'}: every number on it was computed, "
             "printed and checked. New here? Open the "
             "first page, [Start here](00-start-here.ipynb): it suggests an order, says what each "
             "page needs and holds a glossary of every term (中文 / English).\n"]
    if reused:
        every = reused == len(entries)
        which = f"All {reused} pages show" if every else f"{reused} of the {len(entries)} pages (marked so below) show"
        others = "" if every else "; the others were executed when this site was built"
        lines.append(f"{which} the outputs stored in their notebook when it was last executed, at "
                     "the time given under each one: they were reused because everything they "
                     "depend on is as it was then (the notebook's code, the recmetrics package and its "
                     "data, and the versions of Python and of the libraries: a fingerprint of them is "
                     f"stored with the outputs){others}. The test command, `python3 tasks.py test`, "
                     "executes every notebook again and checks each stored output against the new "
                     "one (nbval); "
                     "`python3 tasks.py report --execute` builds the site executing every page.\n")
    for (href, title, summary), how in zip(entries, sources):
        lines.append(f"### [{title}]({href})\n")
        if summary:
            lines.append(summary + "\n")
        if reused and how.executed:
            lines.append("*Executed when this site was built.*\n")
        elif reused:
            lines.append(f"*Outputs stored when the notebook was executed on {how.stored_at}, "
                         "reused: their fingerprint matches.*\n")
    if documents:
        lines.append("## User guide and API reference\n")
        lines.append("How to evaluate your own model, on the command line too, the conventions behind "
                     "every number, the engines for logs too big for one machine, speed, and every "
                     "public name with its documentation.\n")
        for href, title, summary in documents:
            lines.append(f"### [{title}]({href})\n")
            if summary:
                lines.append(summary + "\n")
    lines.append("The pages need no network: formulas are typeset in the page (MathML), figures "
                 "are embedded, and so is the font of their Chinese text. Rebuild them with "
                 "`python3 tasks.py report`.")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("\n".join(lines), id="index")])


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".part")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


# A page moved before another one (the site otherwise follows the notebooks' numbers): the
# evaluation protocol (14) is read before the capstone (10) that applies it.
SITE_ORDER = {"14-evaluation-protocol": "10-evaluate-your-model"}


def site_order(paths: list[Path]) -> list[Path]:
    """``paths`` in reading order: by number, with each ``SITE_ORDER`` page before its target."""
    ordered = sorted(paths, key=lambda p: p.name)
    for stem, before in SITE_ORDER.items():
        moving = [p for p in ordered if p.stem == stem]
        targets = [i for i, p in enumerate(ordered) if p.stem == before]
        if moving and targets:
            ordered.remove(moving[0])
            ordered.insert([p.stem for p in ordered].index(before), moving[0])
    return ordered


class Source:
    """Where a page's outputs come from: ``executed`` now, or the notebook's stored outputs
    (``stored_at``: when they were recorded), reused because their fingerprint matches."""

    def __init__(self, executed: bool, stored_at: str = ""):
        self.executed, self.stored_at = executed, stored_at


def _execute_or_reuse(paths: list[Path], jobs: int, execute: bool = False
                      ) -> list[tuple[nbformat.NotebookNode, Source]]:
    """Each notebook of ``paths`` with its outputs: the stored ones when the fingerprint recorded
    with them equals the one now (tools/notebooks.py), else executed ``jobs`` at a time; with
    ``execute``, every one executed. One line per notebook says which, and why."""
    started = time.perf_counter()
    context = _notebooks.Context()
    stored = [nbformat.read(path, as_version=4) for path in paths]
    todo = []
    for path, nb in zip(paths, stored):
        changed = ["--execute given"] if execute else _notebooks.changes(nb, context)
        if changed:
            print(f"  {path.name}: executing: {'; '.join(changed)}", flush=True)
            todo.append(path)
        else:
            print(f"  {path.name}: reused stored outputs (fingerprint matches; executed "
                  f"{_notebooks.executed_at(nb)})", flush=True)
    if todo:
        print(f"executing {len(todo)} notebook(s), {jobs} at a time", flush=True)
    done = [0]

    def one(path: Path) -> nbformat.NotebookNode:
        began = time.perf_counter()
        nb = run(path, context)
        done[0] += 1
        print(f"  [{done[0]:>2}/{len(todo)}] {path.name} ({time.perf_counter() - began:.0f} s)", flush=True)
        return nb

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        executed = dict(zip(todo, pool.map(one, todo)))
    print(f"executed {len(todo)} notebook(s), reused the stored outputs of {len(paths) - len(todo)}, "
          f"in {time.perf_counter() - started:.0f} s", flush=True)
    return [(executed[path], Source(True)) if path in executed
            else (nb, Source(False, _notebooks.executed_at(nb))) for path, nb in zip(paths, stored)]


def build(paths: list[Path], out: Path = BUILD, jobs: int = JOBS, execute: bool = False) -> list[Path]:
    """Write ``out``/index.html plus one page for each of ``paths``, executed or with their stored
    outputs (``_execute_or_reuse``; ``execute``: every one executed); return the pages."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    paths = site_order(paths)
    notebooks = _execute_or_reuse(paths, jobs, execute)
    executed = [nb for nb, _ in notebooks]

    # the guide's pages and the reference, as Markdown, after the notebooks
    documents = [(f"guide-{p.stem}", p.read_text(encoding="utf-8"), p.parent, p.name)
                 for p in guide_paths()]
    documents.append((REFERENCE, _api_reference.reference_markdown(), ROOT, "the API reference"))

    stems = {p.stem for p in paths} | {stem for stem, *_ in documents}
    info = []
    for path, nb in zip(paths, executed):
        title, summary = title_and_summary(nb)
        info.append((f"{path.stem}.html", title or path.stem, summary))
    for stem, markdown, _, _ in documents:
        title, summary = markdown_title_and_summary(markdown)
        info.append((f"{stem}.html", title or stem, summary))
    sources = [(path.name, nb, None) for path, nb in zip(paths, executed)] + [
        (name, markdown, folder) for _, markdown, folder, name in documents]
    written = []
    for i, (name, source, folder) in enumerate(sources):
        prev = (info[i - 1][0], plain_text(info[i - 1][1])) if i > 0 else None
        nxt = (info[i + 1][0], plain_text(info[i + 1][1])) if i + 1 < len(info) else None
        title = f"{plain_text(info[i][1])} · {SITE_NAME}"
        try:
            page = (render_page(source, title, prev, nxt, stems) if folder is None
                    else markdown_page(source, title, prev, nxt, stems, folder))
        except MathError as error:
            sys.exit(f"book.py: {name}: {error}")
        target = out / info[i][0]
        _write(target, page)
        written.append(target)
        print(f"wrote {target.relative_to(out.parent) if out.parent in target.parents else target}",
              flush=True)
    first = (info[0][0], plain_text(info[0][1])) if info else None
    index_nb = index_notebook(info[:len(paths)], info[len(paths):], [how for _, how in notebooks])
    index = unlink_external(render_page(index_nb, plain_text(title_and_summary(index_nb)[0]),
                                        None, first, stems))
    _write(out / "index.html", index)
    print(f"wrote the index and {len(written)} page(s) ({len(paths)} notebooks, "
          f"{len(documents)} of the guide and reference) in {time.perf_counter() - started:.0f} s")
    return [out / "index.html", *written]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to build (default: all)")
    parser.add_argument("--out", type=Path, default=BUILD, help="output folder (default: build/)")
    parser.add_argument("--execute", "--no-cache", action="store_true",
                        help="execute every notebook, even one whose stored outputs' fingerprint "
                             "matches (by default those are reused)")
    args = parser.parse_args(argv)
    build(notebook_paths(args.notebooks), args.out.resolve(), execute=args.execute)


if __name__ == "__main__":
    main(sys.argv[1:])
