r"""One way out: numbers, intervals, p-values and names as every output shows them.

Everything recmetrics shows a person or writes for a spreadsheet passes through here:
the command line's text tables (:mod:`recmetrics.cli`), :func:`recmetrics.show`
(:mod:`recmetrics._display`), :class:`recmetrics.ResultsTable` (Markdown, LaTeX, HTML) and
the HTML report. Two jobs:

Numbers
    :func:`number` (``0.6109``, ``+0.0123`` signed), :func:`count` (``12,345``),
    :func:`interval` (``[0.5964, 0.6243]``), :func:`p_value` (``<0.0001`` below the last
    decimal shown), :func:`percent` (``95%``, ``99.9%``) and :func:`metric_label`
    (``ndcg@10``); a missing number is :data:`MISSING`.

Text from the user, escaped for its target
    Ids, column, model and file names, titles and slice values are data: each target gets
    them so that they are shown as written and never act as markup or commands.

    * :func:`terminal`: control characters (ANSI escape sequences, carriage returns, tabs,
      newlines, other C0/C1 controls, and the bidirectional overrides that reorder a line)
      are shown as Python escapes (``\x1b``, ``\r``, ``\u202e``), so a slice value cannot
      recolour the terminal, erase a line or move the cursor;
    * :func:`html`: ``& < > " '`` as entities (``html.escape``), control characters as
      escapes;
    * :func:`latex`: ``\ & % $ # _ { } ~ ^`` as LaTeX commands; newlines as spaces;
    * :func:`markdown`: Markdown's special characters backslash-escaped, and ``|`` and line
      breaks, which would end a table cell or row, escaped or made spaces;
    * :func:`csv_cell`: OWASP's rule against CSV (formula) injection: a text cell that
      starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
      ``'``, so that a spreadsheet shows it as text instead of running it as a formula. Only
      text is changed: numbers (in numeric columns, and text that is wholly a decimal number
      such as ``-1.5``) stay as they are. :func:`csv_text` applies it to a table (its column
      names too) unless ``raw=True``.

Only the standard library, numpy and pandas are imported: the command line's evaluate path
loads this module.
"""
from __future__ import annotations

import csv
import html as _html
import math
import re
import unicodedata

import numpy as np
import pandas as pd

__all__ = ["MISSING", "number", "count", "interval", "p_value", "percent", "metric_label",
           "metric_labels", "terminal", "html", "latex", "markdown", "csv_cell", "neutralised",
           "csv_text", "text_table", "FORMULA_START"]

#: How a missing number is shown in text (an em dash).
MISSING = "\u2014"

#: The first characters that make a spreadsheet read a CSV cell as a formula (OWASP).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(isinstance(value, (float, np.floating)) and math.isnan(value))
    except TypeError:
        return False


# --------------------------------------------------------------------------- numbers

def number(value, digits: int = 4, *, signed: bool = False, missing: str = MISSING) -> str:
    """``value`` to ``digits`` decimals (``+0.0123`` with ``signed``); ``missing`` for NaN."""
    if _is_missing(value):
        return missing
    return f"{float(value):+.{digits}f}" if signed else f"{float(value):.{digits}f}"


def count(value, *, missing: str = MISSING) -> str:
    """A count with thousands separators (``12,345``); a fraction with 4 decimals."""
    if _is_missing(value):
        return missing
    as_float = float(value)
    return f"{int(as_float):,}" if as_float.is_integer() else f"{as_float:,.4f}"


def interval(low, high, digits: int = 4, *, signed: bool = False, missing: str = "") -> str:
    """``[low, high]`` to ``digits`` decimals; ``missing`` when either end is missing."""
    if _is_missing(low) or _is_missing(high):
        return missing
    return f"[{number(low, digits, signed=signed)}, {number(high, digits, signed=signed)}]"


def p_value(value, digits: int = 4, *, missing: str = MISSING) -> str:
    """A p-value as shown: ``<0.0001`` below the last decimal shown, else rounded."""
    if _is_missing(value):
        return missing
    floor = 10.0 ** -digits
    return f"<{floor:.{digits}f}" if float(value) < floor else f"{float(value):.{digits}f}"


def percent(level: float) -> str:
    """A level as a percentage with the digits it needs: 0.95 -> '95%', 0.999 -> '99.9%'."""
    return f"{level * 100:.10g}%"


def metric_label(metric, k) -> str:
    """``ndcg@10``; the metric alone where ``k`` is missing."""
    return str(metric) if _is_missing(k) else f"{metric}@{int(k)}"


def metric_labels(table: pd.DataFrame) -> pd.Series:
    """The column ``metric`` with its cut-off from ``k`` (when the table has one)."""
    metric = table["metric"].map(str)
    if "k" not in table.columns:
        return metric
    return pd.Series([metric_label(m, k) for m, k in zip(metric, table["k"])], index=table.index)


# --------------------------------------------------------------------------- escaping

def _visible(char: str) -> str:
    if char == "\t":
        return "\\t"
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000
                                                  else f"\\U{code:08x}")


def _hidden(char: str) -> bool:
    """A control character (C0, DEL, C1) or a format character such as a bidirectional
    override, line or paragraph separator: it moves or hides text instead of showing it."""
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def terminal(text) -> str:
    r"""``text`` for a terminal: every control or format character as its escape (``\x1b``)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(_visible(c) if _hidden(c) else c for c in text)


def html(text) -> str:
    """``text`` for HTML: ``& < > " '`` as entities, control characters as escapes."""
    return _html.escape(terminal(text), quote=True)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _one_line(text) -> str:
    return re.sub(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]", " ", str(text))


def latex(text) -> str:
    r"""``text`` for LaTeX: ``\ & % $ # _ { } ~ ^`` as commands, line breaks as spaces, other
    control characters as (escaped) escapes."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in terminal(_one_line(text)))


_MARKDOWN_SPECIAL = set("\\`*_[]<>|")


def markdown(text) -> str:
    r"""``text`` for a Markdown table cell: line breaks as spaces (a newline would end the
    row), Markdown's special characters and ``|`` (which would end the cell)
    backslash-escaped, control characters as escapes."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in terminal(_one_line(text)))


def csv_cell(value):
    """A CSV/TSV cell neutralised against formula injection (OWASP): text starting with
    ``= + - @``, a tab or a carriage return gets a leading ``'``; text that is wholly a
    decimal number (``-1.5``), numbers and missing values are returned unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_START) \
            or _DECIMAL.fullmatch(value):
        return value
    return "'" + value


def neutralised(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose text cells and column names pass through :func:`csv_cell`;
    numeric, boolean and datetime columns are left as they are (a -0.5 stays a number)."""
    out = table.copy()
    for position in range(table.shape[1]):
        series = table.iloc[:, position]
        if pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series) \
                or isinstance(series.dtype, pd.CategoricalDtype):
            out.isetitem(position, series.astype(object).map(csv_cell))
    out.columns = [csv_cell(c) if isinstance(c, str) else c for c in table.columns]
    out.attrs = dict(table.attrs)
    return out


def csv_text(table: pd.DataFrame, *, sep: str = ",", raw: bool = False) -> str:
    """``table`` as CSV (``sep=","``) or TSV (``sep="\\t"``) text, without the index: text
    cells neutralised against formula injection (:func:`csv_cell`) unless ``raw``."""
    shown = table if raw else neutralised(table)
    # Python's csv writer quotes a cell holding the line terminator ("\n") but not a lone
    # carriage return, which readers (and spreadsheets) take for the end of the row: when some
    # text holds one, every text cell is quoted (numbers stay bare).
    quoting = csv.QUOTE_NONNUMERIC if _has_carriage_return(shown) else csv.QUOTE_MINIMAL
    return shown.to_csv(index=False, sep=sep, lineterminator="\n", quoting=quoting)


def _has_carriage_return(table: pd.DataFrame) -> bool:
    if any(isinstance(c, str) and "\r" in c for c in table.columns):
        return True
    for position in range(table.shape[1]):
        series = table.iloc[:, position]
        if pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series):
            if series.map(lambda v: isinstance(v, str) and "\r" in v).any():
                return True
    return False


# --------------------------------------------------------------------------- tables

def text_table(header: list, rows: list[list], right, *, rule: bool = True) -> str:
    """Columns padded to their widest cell (``right``: the positions aligned right), a rule
    of dashes under the header (``rule``); every cell shown by :func:`terminal`."""
    right = set(right)
    shown = [[terminal(c) for c in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in shown) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(row, widths))).rstrip() for row in shown]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
