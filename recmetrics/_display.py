r"""Results tables for people to read: :func:`show` and the :class:`ResultDisplay` it returns.

:func:`recmetrics.evaluate` and :func:`recmetrics.compare` return plain pandas
DataFrames, full precision, one convention string per row: the form code
reads. :func:`show` lays such a table out for a reader, in a notebook (HTML)
or a terminal (text): values to 4 decimals with the interval beside them,
p-values as ``<0.0001`` or ``0.0312``, the conventions said once below the
table instead of on every row, and the comparison's verdict naming the model
it favours.

Why a separate object, not a DataFrame that displays itself
------------------------------------------------------------
The table stays exactly a ``pandas.DataFrame`` (its type, columns, values and
dtypes), so that filtering, ``pd.testing.assert_frame_equal``, ``to_csv`` and
``print`` behave as they do on any DataFrame. The display is a second object
made from it on request, as pandas does with ``df.style`` (a ``Styler``),
scikit-learn with its ``*Display`` classes and ranx with its ``Report``.
pandas' documentation advises composition or accessors before subclassing a
DataFrame, and a subclass would change the type that code and tests see.
The HTML is written here, not by pandas, so it does not change with the
pandas version (a stored notebook output stays comparable).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from . import _present as present
from ._output import plan_output, write_output
from ._present import MISSING
from ._validation import check_whole

__all__ = ["ResultDisplay", "show", "to_csv"]

#: Columns folded into another shown column, or said once under the table.
_EVALUATE_FOLDED = {"k", "ci_low", "ci_high", "conventions"}
_COMPARE_FOLDED = {"k", "ci_low", "ci_high", "conventions", "verdict", "verdict_adjusted",
                   "n_users_a", "n_users_b",
                   *(f"p_{t}{s}" for t in ("ttest", "randomization", "bootstrap", "delong")
                     for s in ("", "_adjusted"))}
_VERDICTS = {"B better", "A better"}


@dataclass(frozen=True, eq=False)
class ResultDisplay:
    """A results table laid out for reading; made by :func:`show`.

    Attributes
    ----------
    table : pandas.DataFrame
        The table shown, as it was passed (not copied).
    cells : pandas.DataFrame
        What is shown, as text: one row per row of ``table`` (same index),
        one column per shown column, headed as shown.
    caption : tuple of str
        The lines said once under the table: conventions, tests, notes.
    kind : {"evaluate", "compare", "table"}
        Which function's table it is ("table": any other).
    digits : int
        Decimals shown.
    """

    table: pd.DataFrame
    cells: pd.DataFrame
    caption: tuple[str, ...]
    kind: Literal["evaluate", "compare", "table"]
    digits: int

    def _numeric(self) -> list[bool]:
        """Per shown column: right-aligned (numbers) or not."""
        return [bool(self.cells.iloc[:, i].map(_looks_numeric).all()) and len(self.cells) > 0
                for i in range(self.cells.shape[1])]

    def _rows(self) -> list[list[str]]:
        return [[str(v) for v in row] for row in self.cells.itertuples(index=False)]

    def to_html(self) -> str:
        """An HTML ``<table>``, the caption under it; every cell is HTML-escaped."""
        right = self._numeric()

        def cell(tag: str, text, i: int) -> str:
            style = ' style="text-align:right"' if right[i] else ' style="text-align:left"'
            return f"<{tag}{style}>{present.html(text)}</{tag}>"

        head = "".join(cell("th", c, i) for i, c in enumerate(self.cells.columns))
        body = "".join("<tr>" + "".join(cell("td", v, i) for i, v in enumerate(row)) + "</tr>"
                       for row in self._rows())
        caption = "<br>".join(present.html(line) for line in self.caption)
        caption = (f'<caption style="caption-side:bottom;text-align:left">{caption}</caption>'
                   if caption else "")
        return (f'<table class="recmetrics-{self.kind}">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def to_string(self) -> str:
        """Plain text: columns padded (numbers to the right), then the caption lines; control
        characters in any text are shown as escapes (``\\x1b``), never sent to the terminal."""
        right = {i for i, r in enumerate(self._numeric()) if r}
        lines = [present.text_table([str(c) for c in self.cells.columns], self._rows(), right,
                                    rule=False)]
        if self.caption:
            lines += [""] + [present.terminal(line) for line in self.caption]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """A Markdown (GitHub) table, then the caption lines as a paragraph; every cell
        escaped for Markdown (``|`` and line breaks cannot end a cell or a row)."""
        right = self._numeric()
        lines = ["| " + " | ".join(present.markdown(c) for c in self.cells.columns) + " |",
                 "| " + " | ".join("--:" if r else ":--" for r in right) + " |"]
        lines += ["| " + " | ".join(present.markdown(v) for v in row) + " |"
                  for row in self._rows()]
        if self.caption:
            lines += [""] + [present.markdown(line) + "  " for line in self.caption]
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        r"""A LaTeX ``tabular`` with booktabs rules; every cell escaped for LaTeX."""
        right = self._numeric()
        spec = "".join("r" if r else "l" for r in right)
        lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
                 " & ".join(present.latex(c) for c in self.cells.columns) + r" \\",
                 "\\midrule"]
        lines += [" & ".join(present.latex(v) for v in row) + r" \\" for row in self._rows()]
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return self.to_string()


def _looks_numeric(text: str) -> bool:
    head = str(text).lstrip("<+-").replace(",", "")
    return text == MISSING or (bool(head) and head[0].isdigit())


def _number(value, digits: int) -> str:
    return present.number(value, digits)


def _generic(series: pd.Series, digits: int) -> pd.Series:
    """A column this module does not know: numbers rounded, flags as yes/no, the rest as text."""
    if pd.api.types.is_bool_dtype(series):
        return series.map(lambda v: MISSING if pd.isna(v) else ("yes" if v else "no"))
    if pd.api.types.is_integer_dtype(series):  # ids, years, slice values: as written
        return series.map(lambda v: MISSING if pd.isna(v) else str(int(v)))
    if pd.api.types.is_float_dtype(series):
        return series.map(lambda v: _number(v, digits))
    return series.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v))
                      else str(v))


def _conventions(table: pd.DataFrame) -> str:
    """Every convention of the shown rows, once each, in order of first appearance; from the
    ``conventions`` column, else from ``attrs["conventions"]``."""
    seen: list[str] = []
    if "conventions" in table.columns:
        for text in table["conventions"]:
            for part in str(text).split(", ") if isinstance(text, str) else ():
                if part.strip() and part.strip() not in seen:
                    seen.append(part.strip())
    elif isinstance(table.attrs.get("conventions"), dict):
        seen = [f"{name}={value}" for name, value in table.attrs["conventions"].items()
                if name != "k"]
    return ", ".join(seen)


def _notes(table: pd.DataFrame) -> list[str]:
    notes = table.attrs.get("notes", [])
    return [str(n) for n in notes] if isinstance(notes, (list, tuple)) else []


def _shared_cell(shown: dict, table: pd.DataFrame, column: str, digits: int) -> None:
    """Put ``column`` in ``shown`` as every table shows it: the metric labels, the notes (only
    where some row has one), counts, and any other column as it comes."""
    if column == "metric":
        shown["metric"] = present.metric_labels(table)
    elif column == "note":
        if table["note"].map(lambda n: isinstance(n, str) and bool(n.strip())).any():
            shown["note"] = _generic(table["note"], digits)
    elif column.startswith("n_") or column == "slice_size":
        shown[column] = table[column].map(present.count)
    else:
        shown[column] = _generic(table[column], digits)


def _evaluate_cells(table: pd.DataFrame, digits: int) -> tuple[dict, list[str]]:
    shown: dict[str, pd.Series] = {}
    has_ci = {"ci_low", "ci_high"} <= set(table.columns)
    for column in table.columns:
        if column in _EVALUATE_FOLDED:
            continue
        if column == "value" and has_ci:
            shown["value [interval]"] = pd.Series(
                [_number(v, digits) if pd.isna(lo) or pd.isna(hi) else
                 f"{_number(v, digits)} {present.interval(lo, hi, digits)}"
                 for v, lo, hi in zip(table["value"], table["ci_low"], table["ci_high"])],
                index=table.index)
        elif column == "value":
            shown["value"] = table["value"].map(lambda v: _number(v, digits))
        else:
            _shared_cell(shown, table, column, digits)
    caption = []
    if has_ci:
        level = table.attrs.get("ci")
        caption.append("Interval: percentile bootstrap over users"
                       + (f", {float(level):.0%} level" if isinstance(level, (int, float))
                          else "") + ".")
    return shown, caption


def _table_cells(table: pd.DataFrame, digits: int) -> tuple[dict, list[str]]:
    """Any other table: the metric with its cut-off, counts, numbers rounded, flags as yes/no,
    the rest as text."""
    shown: dict[str, pd.Series] = {}
    for column in table.columns:
        if column == "k" and "metric" in table.columns:
            continue
        if column in ("conventions",):
            continue
        _shared_cell(shown, table, column, digits)
    return shown, []


def _model_names(table: pd.DataFrame) -> tuple[str, str] | None:
    """The two models' names when every row compares the same pair, else None."""
    if not {"model_a", "model_b"} <= set(table.columns) or len(table) == 0:
        return None
    pairs = table[["model_a", "model_b"]].drop_duplicates()
    if len(pairs) != 1:
        return None
    return str(pairs.iat[0, 0]), str(pairs.iat[0, 1])


def _compare_cells(table: pd.DataFrame, digits: int) -> tuple[dict, list[str]]:
    names = _model_names(table)
    a, b = names if names else ("A", "B")
    verdict_column = "verdict_adjusted" if "verdict_adjusted" in table.columns else "verdict"
    shown: dict[str, pd.Series] = {}
    for column in table.columns:
        if column in _COMPARE_FOLDED or (names and column in ("model_a", "model_b")):
            continue
        if column == "value_a":
            shown[a if names else "value_a"] = table[column].map(lambda v: _number(v, digits))
        elif column == "value_b":
            shown[b if names else "value_b"] = table[column].map(lambda v: _number(v, digits))
        elif column == "difference":
            signed = table[column].map(lambda v: present.number(v, digits, signed=True))
            if {"ci_low", "ci_high"} <= set(table.columns):  # the interval beside the difference
                signed = pd.Series([s if pd.isna(lo) or pd.isna(hi) else
                                    f"{s} {present.interval(lo, hi, digits, signed=True)}"
                                    for s, lo, hi in zip(signed, table["ci_low"], table["ci_high"])],
                                   index=table.index)
            shown[f"{b} \u2212 {a}" if names else "difference"] = signed
        else:
            _shared_cell(shown, table, column, digits)
    caption = []
    p = _verdict_p(table)
    if p is not None:
        shown["p"] = p.map(lambda v: present.p_value(v, digits))
    if verdict_column in table.columns:
        shown["verdict"] = pd.Series(
            [_verdict_text(v, ma, mb) for v, ma, mb in zip(
                table[verdict_column],
                table["model_a"] if "model_a" in table.columns else [a] * len(table),
                table["model_b"] if "model_b" in table.columns else [b] * len(table))],
            index=table.index)
    if p is not None:
        caption.append(_test_line(table, verdict_column))
    if names is None and "difference" in table.columns:
        caption.append("difference: value_b \u2212 value_a (model_b \u2212 model_a).")
    scored = _scored_line(table)
    if scored:
        caption.append(scored)
    return shown, caption


def _verdict_p(table: pd.DataFrame) -> pd.Series | None:
    """The p-value each row's verdict reads: adjusted randomization, DeLong's for global AUC."""
    randomization = next((c for c in ("p_randomization_adjusted", "p_randomization")
                          if c in table.columns), None)
    delong = next((c for c in ("p_delong_adjusted", "p_delong") if c in table.columns), None)
    if randomization is None and delong is None:
        return None
    nan = pd.Series(np.nan, index=table.index)
    r = table[randomization] if randomization else nan
    d = table[delong] if delong else nan
    is_auc = table["metric"].eq("auc") if "metric" in table.columns else False
    return pd.Series(np.where(is_auc, d, r), index=table.index, dtype=np.float64)


def _verdict_text(verdict, model_a, model_b) -> str:
    """The verdict with the model's name: "B better" of a pair (old, new) reads "new better"."""
    if not isinstance(verdict, str):
        return MISSING
    if verdict in _VERDICTS:
        winner = str(model_b) if verdict == "B better" else str(model_a)
        return f"{winner} better"
    return verdict


def _test_line(table: pd.DataFrame, verdict_column: str) -> str:
    alpha, correction = table.attrs.get("alpha"), table.attrs.get("correction")
    adjusted = "p_randomization_adjusted" in table.columns or "p_delong_adjusted" in table.columns
    how = "p: paired randomization test (DeLong's test for global AUC)"
    if verdict_column == "verdict_adjusted":
        how += ", Holm-adjusted across the slices of each metric"
    elif adjusted and isinstance(correction, str):
        how += (", not adjusted (correction='none')" if correction == "none"
                else f", adjusted over the comparison's rows ({correction})")
    elif adjusted:
        how += ", adjusted for multiple testing"
    level = f" at alpha = {alpha:g}" if isinstance(alpha, (int, float)) else ""
    return f"{how}; the verdict reads it{level}."


def _scored_line(table: pd.DataFrame) -> str:
    """Users each model scored before the comparison kept the shared ones, when they differ."""
    if not {"model_a", "model_b", "n_users_a", "n_users_b"} <= set(table.columns) \
            or len(table) == 0:
        return ""
    scored: dict[str, int] = {}
    for side in ("a", "b"):
        for model, n in zip(table[f"model_{side}"], table[f"n_users_{side}"]):
            scored.setdefault(str(model), int(n))
    if len(set(scored.values())) <= 1:
        return f"Every model scored {next(iter(scored.values())):,} users." if scored else ""
    return ("Users scored: " + ", ".join(f"{m} {n:,}" for m, n in scored.items())
            + "; each row compares the users both models scored.")


def show(table: pd.DataFrame, *, digits: int = 4) -> ResultDisplay:
    r"""Lay out a results table of :func:`evaluate` or :func:`compare` for a reader.

    ``table`` itself is not changed and stays a plain ``pandas.DataFrame``
    for code; the returned :class:`ResultDisplay` renders as HTML in Jupyter
    and as text in a terminal (``print``). Shown:

    * each metric with its cut-off (``ndcg@10``);
    * values rounded to ``digits`` decimals, with the bootstrap interval
      beside the value when the table has ``ci_low`` / ``ci_high``:
      ``0.6109 [0.5964, 0.6243]``; counts with thousands separators;
    * for a comparison: each model's value, the difference B − A with its
      sign and its interval (``ci_low`` / ``ci_high``), the p-value the verdict reads (the adjusted randomization
      p-value, DeLong's for global AUC; ``<0.0001`` below the last decimal
      shown) and the verdict naming the model it favours ("new better");
      with a single pair the columns are headed by the models' names;
    * the conventions of the shown rows once, under the table, instead of the
      ``conventions`` column repeated on every row; then the table's
      ``attrs["notes"]``, and each row's ``note`` when any row has one.

    Any other column (a slice, ``model``, a column you added) is shown as
    text, numbers rounded. Any other table the package returns
    (:func:`recmetrics.disparity`, :func:`recmetrics.evaluate_per_user`,
    :func:`recmetrics.beyond_accuracy`, ...) is shown column by column the
    same way (``kind="table"``). A filtered or reordered table is shown as it
    is; a missing number is an em dash. Text from the data is escaped for
    each output (:mod:`recmetrics._present`): HTML-escaped, control characters
    as escapes in text, ``|`` and line breaks harmless in Markdown.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`recmetrics.evaluate` (columns ``metric`` and
        ``value`` at least; with ``by=`` or ``baselines=True`` too) or of
        :func:`recmetrics.compare` (``value_a`` and ``value_b``), or rows
        and columns of one.
    digits : int, default 4
        Decimals of values, intervals, differences and p-values (1 to 15).

    Returns
    -------
    ResultDisplay
        ``.to_html()``, ``.to_string()``, ``.to_markdown()``, ``.to_latex()``,
        ``.cells`` (the shown text as a DataFrame) and ``.caption``.

    Notes
    -----
    Why a function and not a table that displays itself: ``evaluate`` and
    ``compare`` keep returning exactly a ``pandas.DataFrame`` (type, columns,
    values, dtypes), which code, ``assert_frame_equal`` and ``print`` rely
    on; the layout is a separate object, as ``DataFrame.style`` is in pandas
    and the ``*Display`` classes are in scikit-learn. Its HTML is written
    here, so it does not change with the pandas version.

    Examples
    --------
    >>> pred = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]})
    >>> from recmetrics import evaluate
    >>> print(show(evaluate(pred, k=2, metrics=["precision", "mrr"])))
    metric        value  n_users  n_skipped  n_without_predictions
    precision@2  0.5000        2          0                      0
    mrr          1.0000        2          0                      0
    <BLANKLINE>
    Conventions: ties=average, no_relevant=skip.
    """
    digits = check_whole("digits", digits, minimum=1, maximum=15, example="4")
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame returned by recmetrics.evaluate or "
                         f"recmetrics.compare, got {type(table).__name__}")
    columns = set(table.columns)
    kind: Literal["evaluate", "compare", "table"]
    if {"value_a", "value_b"} <= columns:
        kind = "compare"
        shown, caption = _compare_cells(table, digits)
    elif {"metric", "value"} <= columns:
        kind = "evaluate"
        shown, caption = _evaluate_cells(table, digits)
    else:  # disparity, evaluate_per_user, beyond_accuracy, most_popular, a table of yours
        kind = "table"
        shown, caption = _table_cells(table, digits)
    conventions = _conventions(table)
    lines = ([f"Conventions: {conventions}."] if conventions else []) + caption + _notes(table)
    cells = pd.DataFrame(shown, index=table.index)
    return ResultDisplay(table=table, cells=cells, caption=tuple(lines), kind=kind,
                         digits=digits)


def to_csv(table: pd.DataFrame, path=None, *, sep: str = ",", raw: bool = False) -> str | None:
    r"""A results table as CSV (or TSV with ``sep="\t"``), as ``recmetrics evaluate -o t.csv``
    writes it: every column at full precision, no index, and text cells neutralised against
    formula (CSV) injection.

    A text cell (an id, a slice value, a model name, a column name) that starts with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'``, so that a
    spreadsheet opening the file shows it as text instead of running it as a formula (OWASP's
    rule). Numbers are never changed (a -0.5 stays -0.5, in a numeric column or as text
    that is wholly a number). ``raw=True`` writes the text as it is.

    Parameters
    ----------
    table : pandas.DataFrame
        Any table (of :func:`recmetrics.evaluate`, :func:`recmetrics.compare`, ...).
    path : str or path, optional
        Write the text there (atomically, through recmetrics' output guard) and return None;
        without it the text is returned.
    sep : str, default ","
        The field separator.
    raw : bool, default False
        Write text cells as they are, not neutralised.

    Examples
    --------
    >>> table = pd.DataFrame({"country": ["=1+2", "fr"], "metric": ["ndcg", "ndcg"],
    ...                       "value": [-0.5, 0.25]})
    >>> print(to_csv(table), end="")
    country,metric,value
    '=1+2,ndcg,-0.5
    fr,ndcg,0.25
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    if not isinstance(sep, str) or len(sep) != 1:
        raise ValueError(f"sep={sep!r} must be one character such as ',' or '\\t'")
    text = present.csv_text(table, sep=sep, raw=bool(raw))
    if path is None:
        return text
    output = plan_output(path, allowed=("csv", "tsv", "table"), option="path")
    write_output(output, text)
    return None
