"""The API reference of the study site, written from the package's docstrings.

``reference_markdown()`` returns one Markdown page naming every name of ``recmetrics.__all__``
(and the public names of the submodules in it, ``rm.plots`` and ``rm.sampling``), grouped by the
module that defines it, each with its signature and its numpydoc docstring: the summary, the
sections (Parameters, Returns, Raises, Warns, Attributes as lists of names; Notes, References
and See Also as text; Examples as code), reStructuredText's inline markup turned into Markdown
(``code``, :math:`formulas` and ``.. math::`` blocks, which tools/book.py then typesets as
MathML, :func:`links` to the entry of the name). tools/book.py renders it as reference.html.
"""
from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from pathlib import Path

_SECTIONS = ("Parameters", "Other Parameters", "Returns", "Yields", "Raises", "Warns",
             "Warnings", "Attributes", "Methods", "See Also", "Notes", "References", "Examples")
_LISTED = {"Parameters", "Other Parameters", "Returns", "Yields", "Raises", "Warns", "Attributes"}

# Which module's heading each group of names goes under, in the order of recmetrics.__all__.
_MODULE_TITLES = {
    "_validation": "Warnings", "__init__": "Data", "classification": "Classification",
    "auc": "ROC and AUC", "ranking": "Ranked lists", "trec": "TREC files",
    "regression": "Rating errors", "probability": "Probabilities",
    "stats": "Statistics: intervals and tests", "tables": "Results tables",
    "_compare": "Results tables", "_display": "Reading a table: show", "evaluation": "Evaluating a model",
    "slices": "Evaluating a model", "beyond": "Beyond accuracy",
}


def anchor(name: str) -> str:
    """The id tools/book.py gives the heading of ``name`` (its slug)."""
    return re.sub(r"[^\w]+", "-", name.lower()).strip("-")


# ---------------------------------------------------------------------------------------------
# reStructuredText (as the docstrings use it) -> Markdown

_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|obj|exc|py:\w+):`~?([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")
_LINK = re.compile(r"`([^`<]+?)\s*<([^>]+)>`__?")
_FOOTNOTE_REF = re.compile(r"\s?\[(\d+)\]_")


def _inline(text: str, known: dict[str, str]) -> str:
    """Inline markup of one paragraph: roles, literals, math, links."""
    maths: list[str] = []

    def keep_math(match: re.Match) -> str:
        maths.append(match.group(1))
        return f"\0{len(maths) - 1}\0"

    text = _MATH_ROLE.sub(keep_math, text)

    def role(match: re.Match) -> str:
        target = match.group(1).strip()
        if "<" in target:                      # :func:`title <target>`
            target = target.split("<", 1)[1].rstrip(">")
        short = target.removeprefix("recmetrics.").removesuffix("()")
        shown = short.rsplit(".", 1)[-1] if match.group(0).count("~") else short
        href = known.get(short) or known.get(short.rsplit(".", 1)[-1])
        return f"[`{shown}`](#{href})" if href else f"`{shown}`"

    text = _ROLE.sub(role, text)
    text = _LITERAL.sub(lambda m: f"`{m.group(1)}`", text)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)   # the site links no further
    text = _FOOTNOTE_REF.sub(lambda m: f" [{m.group(1)}]", text)
    return re.sub("\0(\\d+)\0", lambda m: f"${maths[int(m.group(1))].strip()}$", text)


def _is_table_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\s*=+(\s+=+)+\s*", line))


def rst_to_markdown(text: str, known: dict[str, str]) -> str:
    """A block of docstring text (paragraphs, lists, math, literal blocks, simple tables)."""
    lines = textwrap.dedent(text).strip("\n").splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped.startswith(".. math::"):
            body = [stripped[len(".. math::"):].strip()]
            i += 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i].strip())
                i += 1
            formulas = [f.strip() for f in "\n".join(body).split("\n\n") if f.strip()]
            for formula in formulas:
                out += ["", " " * indent + "$$", *(" " * indent + f for f in formula.splitlines()),
                        " " * indent + "$$", ""]
            continue
        if re.match(r"\.\. \[(\d+)\]", stripped):            # a numbered reference
            out.append(" " * indent + re.sub(r"^\.\. \[(\d+)\]\s*", r"[\1] ", _inline(stripped, known)))
            i += 1
            continue
        if re.match(r"\.\. (note|warning|seealso)::", stripped):
            kind = stripped[3:].split("::")[0]
            rest = stripped.split("::", 1)[1].strip()
            out.append(" " * indent + f"**{kind.capitalize()}.** " + _inline(rest, known))
            i += 1
            continue
        if stripped.startswith(".. "):                        # other directives: skip the line
            i += 1
            continue
        if _is_table_rule(line):                              # a simple table: shown as set
            table = []
            rules = 0
            while i < len(lines) and lines[i].strip():
                if _is_table_rule(lines[i]):
                    rules += 1
                else:
                    table.append(_LITERAL.sub(r"\1    ", lines[i].replace("\\ ", "  ")))
                i += 1
                if rules == 3:
                    break
            out += ["", "```text", *textwrap.dedent("\n".join(table)).splitlines(), "```", ""]
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):   # a literal block follows
            # "Text::" reads "Text:", a lone "::" nothing
            lead = stripped[:-1] if not stripped.endswith(" ::") else stripped[:-2].rstrip()
            if lead:
                out.append(" " * indent + _inline(lead, known))
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                block.append(lines[i])
                i += 1
            out += ["", "```text", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""]
            continue
        out.append(line[:indent] + _inline(line[indent:], known) if stripped else "")
        i += 1
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# numpydoc -> Markdown


def split_sections(doc: str) -> list[tuple[str, str]]:
    """``[("", summary and extended text), (section title, body), ...]`` of a numpydoc docstring."""
    lines = doc.splitlines()
    sections: list[tuple[str, list[str]]] = [("", [])]
    i = 0
    while i < len(lines):
        title = lines[i].strip()
        if (title in _SECTIONS and i + 1 < len(lines)
                and re.fullmatch(r"-{3,}", lines[i + 1].strip())):
            sections.append((title, []))
            i += 2
            continue
        sections[-1][1].append(lines[i])
        i += 1
    return [(title, "\n".join(body).strip("\n")) for title, body in sections]


def _listed(body: str, known: dict[str, str]) -> str:
    """A Parameters-like section: ``name : type`` lines, each with an indented description."""
    items: list[tuple[str, list[str]]] = []
    for line in textwrap.dedent(body).splitlines():
        if line and not line[0].isspace():
            items.append((line.strip(), []))
        elif items:
            items[-1][1].append(line)
        elif line.strip():
            items.append(("", [line]))
    out = []
    for head, description in items:
        name, _, kind = head.partition(" : ")
        label = f"**`{name.strip()}`**" if name.strip() else ""
        if kind.strip():
            label += f" : {_inline(kind.strip(), known)}" if label else _inline(kind.strip(), known)
        text = rst_to_markdown("\n".join(description), known) if "".join(description).strip() else ""
        first, *rest = (text.splitlines() or [""])
        out.append(f"- {label}" + (f" — {first}" if first.strip() and label else first))
        out += [("  " + r) if r.strip() else "" for r in rest]
    return "\n".join(out)


def _examples(body: str, known: dict[str, str]) -> str:
    """Doctests as Python code blocks; text between them as paragraphs."""
    out, code, prose = [], [], []

    def flush_code():
        if code:
            out.extend(["", "```python", *code, "```", ""])
            code.clear()

    def flush_prose():
        if prose:
            out.extend(["", rst_to_markdown("\n".join(prose), known), ""])
            prose.clear()

    in_doctest = False
    for line in textwrap.dedent(body).splitlines():
        if line.lstrip().startswith((">>>", "...")) and (line.lstrip().startswith(">>>") or in_doctest):
            flush_prose()
            code.append(line)
            in_doctest = True
        elif in_doctest and line.strip():
            code.append(line)                                  # an expected output
        else:
            in_doctest = False
            flush_code()
            prose.append(line)
    flush_code()
    flush_prose()
    return "\n".join(out)


def docstring_markdown(doc: str, known: dict[str, str], level: int = 4) -> str:
    """A numpydoc docstring as Markdown, its sections under headings of ``level``."""
    parts = []
    for title, body in split_sections(doc):
        if not body.strip():
            continue
        if title == "":
            parts.append(rst_to_markdown(body, known))
        elif title in _LISTED:
            parts.append(f"**{title}**\n\n{_listed(body, known)}")
        elif title == "Examples":
            parts.append(f"**{title}**\n{_examples(body, known)}")
        elif title == "See Also":
            parts.append(f"**{title}**: " + _inline(" ".join(body.split()), known)
                         if ":" not in re.sub(r":\w+:`", "", body) else
                         f"**{title}**\n\n{_listed(body, known)}")
        else:
            parts.append(f"**{title}**\n\n{rst_to_markdown(body, known)}")
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------
# the page


def _signature(name: str, obj) -> str:
    try:
        signature = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""
    signature = re.sub(r"(: |-> )'([^']*)'", r"\1\2", signature)     # postponed annotations
    text = f"{name}{signature}"
    if len(text) <= 90:
        return text
    # one parameter a line, as black would lay it out
    params = re.split(r",\s(?![^\[\(\{]*[\]\)\}])", signature[1:signature.rindex(")")])
    tail = signature[signature.rindex(")") + 1:]
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){tail}"


def _constant_doc(module, name: str) -> str:
    """The ``#:`` comment above ``name = ...`` in its module's source."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return ""
    match = re.search(rf"((?:^#:.*\n)+)^{re.escape(name)}\b", source, re.M)
    return " ".join(line[2:].strip() for line in match.group(1).splitlines()) if match else ""


def _entry(qualname: str, obj, module, known: dict[str, str]) -> list[str]:
    lines = [f"### {qualname}", ""]
    short = qualname.rsplit(".", 1)[-1]
    if inspect.isfunction(obj) or inspect.isclass(obj):
        signature = _signature(qualname if "." in qualname else short, obj)
        if signature:
            lines += ["```python", signature, "```", ""]
        doc = inspect.getdoc(obj) or ""
        if inspect.isclass(obj) and doc == inspect.getdoc(obj.__mro__[1]):
            doc = ""
        lines += [docstring_markdown(doc, known), ""]
        if inspect.isclass(obj):
            lines += _members(short, obj, known)
    else:
        doc = _constant_doc(module, short)
        # a path is the reader's own: shown as the package-relative folder it is
        value = (f"Path(...)  # {Path(obj).relative_to(Path(module.__file__).parent.parent)}/"
                 if isinstance(obj, Path) else repr(obj))
        lines += ["```python", f"{short} = {value}", "```", "",
                  rst_to_markdown(doc, known) if doc else "", ""]
    return lines


def _members(class_name: str, cls, known: dict[str, str]) -> list[str]:
    """The public methods and properties a class defines itself, each with its docstring."""
    lines = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        function = member.fget if isinstance(member, property) else member
        if isinstance(function, (staticmethod, classmethod)):
            function = function.__func__
        if not callable(function) and not isinstance(member, property):
            continue
        doc = inspect.getdoc(function) or ""
        if not doc:
            continue
        kind = "property" if isinstance(member, property) else "method"
        call = "" if kind == "property" else _signature("", function).replace("(self, ", "(").replace("(self)", "()")
        lines += [f"`{class_name}.{name}{call}` ({kind})", "",
                  textwrap.indent(docstring_markdown(doc, known), "> ", lambda s: True), ""]
    return lines


def _home(rm, name: str) -> str:
    homes = getattr(rm, "_HOME", {})
    return homes.get(name, "__init__")


def reference_markdown() -> str:
    """The reference page: every name of ``recmetrics.__all__``, grouped by module."""
    import recmetrics as rm

    names = list(rm.__all__)
    submodules = [n for n in names if inspect.ismodule(getattr(rm, n))]
    known = {n: anchor(n) for n in names}
    for sub in submodules:
        module = getattr(rm, sub)
        for member in getattr(module, "__all__", ()):
            known[f"{sub}.{member}"] = anchor(f"{sub}.{member}")
            known.setdefault(member, anchor(f"{sub}.{member}"))

    lines = ["# API reference", "",
             "Every public name of `recmetrics` (`import recmetrics as rm`), with its signature "
             "and its docstring as `help(rm.name)` shows it: the formula, the convention, the "
             "references and an example that the test suite runs. Every option is keyword-only; "
             "[The API at a glance](guide-api.html) puts them all on one screen, and the "
             "[conventions](guide-conventions.html) say what each option changes. The engines "
             "for Dask and Spark (`recmetrics.distributed`, `recmetrics.spark`, extras) take the "
             "same arguments as `evaluate`, `evaluate_per_user` and `compare`.", ""]
    current = None
    for name in names:
        obj = getattr(rm, name)
        if inspect.ismodule(obj):
            title = f"rm.{name}"
            lines += [f"## {title}", "", rst_to_markdown(inspect.getdoc(obj) or "", known), ""]
            lines += [f"### {name}", "",
                      f"The module `recmetrics.{name}`; its names: "
                      + ", ".join(f"[`{m}`](#{anchor(f'{name}.{m}')})" for m in obj.__all__) + ".", ""]
            for member in obj.__all__:
                lines += _entry(f"{name}.{member}", getattr(obj, member), obj, known)
            current = None
            continue
        home = _home(rm, name)
        title = _MODULE_TITLES.get(home, home)
        if title != current:
            lines += [f"## {title}", ""]
            current = title
        module = importlib.import_module(f"recmetrics.{home}" if home != "__init__" else "recmetrics")
        lines += _entry(name, obj, module, known)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference_markdown())
