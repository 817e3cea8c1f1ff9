r"""A results table of many models: best values in bold, significant wins as superscript letters.

:func:`results_table` takes metric values in tidy form (one row per model and
metric) and, optionally, pairwise comparisons, and returns a
:class:`ResultsTable` that writes itself as Markdown, LaTeX (booktabs) or HTML,
in the manner of ranx's ``Report`` (Bassani 2022): each model gets a letter
a, b, c, ... and each value carries the letters of the models it beats
significantly on that metric.

Nothing here computes a metric or a test: the numbers come from
:func:`recmetrics.evaluate`, and the p-values from the paired tests, adjusted
with :func:`recmetrics.adjust_p_values`.
"""
from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _present as present
from ._metrics import LOWER_IS_BETTER
from ._validation import as_p_values, as_tidy_frame, check_probability, check_whole, is_real_number

__all__ = ["LOWER_IS_BETTER", "ResultsTable", "results_table"]

#: Letters given to the models, in row order: a-z, then A-Z.
LETTERS = string.ascii_lowercase + string.ascii_uppercase

#: How a missing value (NaN, or no row for that model and metric) is written.
MISSING = {"markdown": present.MISSING, "latex": "---", "html": "&mdash;"}

_latex = present.latex
_markdown = present.markdown


@dataclass(frozen=True)
class ResultsTable:
    """Metric values of several models, with the best per column and the significant wins.

    Attributes
    ----------
    frame : pandas.DataFrame
        The values: one row per model (index ``model``, in order of first
        appearance) and one column per metric and cut-off (``"auc"``,
        ``"ndcg@10"``, ...), NaN where a value is missing.
    best : pandas.DataFrame of bool
        Same shape: the value is the best of its column as shown, i.e. after
        rounding to ``digits`` (so ties at the shown precision are all best).
    beats : pandas.DataFrame of str
        Same shape: the letters of the models this value beats significantly
        ("" for none), in row order.
    letters : pandas.Series of str
        Each model's letter; empty when no pairwise comparisons were given.
    digits : int
        Decimals shown.
    """

    frame: pd.DataFrame
    best: pd.DataFrame
    beats: pd.DataFrame
    letters: pd.Series
    digits: int

    def _cells(self, bold, sup, missing: str) -> list[list[str]]:
        rows = []
        for model in self.frame.index:
            row = []
            for column in self.frame.columns:
                value = self.frame.at[model, column]
                if pd.isna(value):
                    row.append(missing)
                    continue
                text = present.number(value, self.digits)
                if self.best.at[model, column]:
                    text = bold(text)
                marks = self.beats.at[model, column]
                row.append(text + sup(marks) if marks else text)
            rows.append(row)
        return rows

    def _head(self) -> list[str]:
        return (["#"] if len(self.letters) else []) + ["model"]

    def _row_head(self, model) -> list[str]:
        return ([self.letters[model]] if len(self.letters) else []) + [str(model)]

    def to_markdown(self) -> str:
        """A Markdown (GitHub) table: best values in ``**bold**``, wins as ``<sup>ab</sup>``,
        missing values as an em dash; model names and headers escaped for Markdown
        (:func:`recmetrics._present.markdown`: special characters and ``|`` backslash-escaped,
        line breaks as spaces)."""
        head = self._head() + [str(c) for c in self.frame.columns]
        align = [":--"] * len(self._head()) + ["--:"] * len(self.frame.columns)
        lines = ["| " + " | ".join(_markdown(h) for h in head) + " |",
                 "| " + " | ".join(align) + " |"]
        cells = self._cells(lambda t: f"**{t}**", lambda m: f"<sup>{m}</sup>", MISSING["markdown"])
        for model, row in zip(self.frame.index, cells):
            lines.append("| " + " | ".join([_markdown(h) for h in self._row_head(model)] + row)
                         + " |")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        r"""A LaTeX ``tabular`` with booktabs rules (``\usepackage{booktabs}``): best values in
        ``\textbf``, wins as ``$^{ab}$``, missing values as ``---``; LaTeX's special
        characters (``\ & % $ # _ { } ~ ^``) in names are escaped, line breaks made spaces."""
        head = self._head()
        spec = "l" * len(head) + "r" * len(self.frame.columns)
        titles = [_latex(h) for h in head] + [_latex(str(c)) for c in self.frame.columns]
        lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule", " & ".join(titles) + r" \\",
                 "\\midrule"]
        cells = self._cells(lambda t: f"\\textbf{{{t}}}", lambda m: f"$^{{{m}}}$",
                            MISSING["latex"])
        for model, row in zip(self.frame.index, cells):
            lines.append(" & ".join([_latex(h) for h in self._row_head(model)] + row) + r" \\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """An HTML ``<table>``: best values in ``<b>``, wins as ``<sup>``, missing values as
        ``&mdash;``; names are HTML-escaped."""
        def row(tag, cells):
            return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"

        head = [present.html(h) for h in self._head()]
        head += [present.html(c) for c in self.frame.columns]
        lines = ["<table>", "<thead>", row("th", head), "</thead>", "<tbody>"]
        cells = self._cells(lambda t: f"<b>{t}</b>", lambda m: f"<sup>{m}</sup>", MISSING["html"])
        for model, values in zip(self.frame.index, cells):
            lines.append(row("td", [present.html(h) for h in self._row_head(model)] + values))
        lines += ["</tbody>", "</table>"]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_markdown()


def _checked_labels(name: str, frame: pd.DataFrame) -> pd.Series:
    """Column label of each row (:func:`recmetrics._present.metric_label`: the metric, with
    "@k" when the row has a cut-off), the cut-offs checked."""
    metric = frame["metric"].map(str)
    if "k" not in frame.columns:
        return metric
    k = frame["k"]
    labels = metric.copy()
    for i, (m, cut) in enumerate(zip(metric, k)):
        if pd.isna(cut):
            continue
        if not is_real_number(cut) or cut < 1 or not float(cut).is_integer():
            raise ValueError(f"{name} column 'k' holds {cut!r} in row {i}; a cut-off is a whole "
                             "number >= 1, or missing (NaN) for a metric without one")
        labels.iat[i] = present.metric_label(m, cut)
    return labels


def _check_lower_is_better(lower_is_better) -> frozenset[str]:
    if isinstance(lower_is_better, str) or not isinstance(lower_is_better, Iterable) \
            or not all(isinstance(m, str) for m in lower_is_better):
        raise ValueError(f"lower_is_better={lower_is_better!r} must be a collection of metric "
                         "names such as {'logloss', 'brier'}; the default is LOWER_IS_BETTER")
    return frozenset(lower_is_better)


def results_table(values, pairwise=None, *, alpha: float = 0.05, digits: int = 4,
                  lower_is_better: Iterable[str] = LOWER_IS_BETTER) -> ResultsTable:
    r"""A table of models by metrics, best values marked, significant wins as letters.

    Each model (row) gets a letter, a, b, c, ... in order of first appearance
    in ``values``. A value carries the letter of every model it beats
    significantly on that metric and cut-off: model X beats Y when their
    comparison is significant and X's value is the better one, the larger, or
    the smaller for a metric in ``lower_is_better``. The best value of each
    column is marked (bold): the largest, or the smallest for a
    lower-is-better metric, compared as shown (rounded to ``digits``), so
    values that look equal are all bold. Missing values (NaN, or no row) are
    shown as an em dash and are never best.

    Parameters
    ----------
    values : pandas.DataFrame
        One row per model and metric: columns ``model``, ``metric``,
        ``value`` and optionally ``k`` (the cut-off; NaN/NA for a metric
        without one), e.g. the tables of :func:`recmetrics.evaluate`, one per
        model, concatenated with a ``model`` column. A column is labelled
        ``metric`` or ``metric@k``.
    pairwise : pandas.DataFrame, optional
        Pairwise comparisons, one row per pair of models and metric: columns
        ``model_a``, ``model_b``, ``metric``, optionally ``k``, and either
        ``p_value_adjusted`` (significant when ``<= alpha``, the decision of
        :func:`recmetrics.adjust_p_values`' procedures) or a boolean
        ``significant`` (e.g. significant vs a baseline). An optional
        ``difference`` (B - A, as :func:`recmetrics.compare` reports it) gives
        the winner's side; without it the values of ``values`` do. A pair's
        order and repetitions do not matter. Without ``pairwise`` there are no
        letters and no ``#`` column.
    alpha : float, default 0.05
        Significance level applied to ``p_value_adjusted``.
    digits : int, default 4
        Decimals shown (0 to 15).
    lower_is_better : collection of str, default LOWER_IS_BETTER
        Metric names whose best value is the smallest:
        ``{"logloss", "ne", "brier", "ece"}`` by default.

    Returns
    -------
    ResultsTable
        ``.frame`` (the values), ``.best``, ``.beats``, ``.letters`` and
        ``.to_markdown()``, ``.to_latex()``, ``.to_html()``.

    Raises
    ------
    ValueError
        For a missing column, a repeated (model, metric, k) row, a pairwise row
        naming a model or metric absent from ``values``, a model compared with
        itself, more than 52 models with ``pairwise``, or a ``difference`` whose
        sign contradicts ``values`` on a significant pair (the two tables would
        then disagree about the winner).

    References
    ----------
    Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
    comparison. *ECIR*, 259-264.

    Examples
    --------
    >>> values = pd.DataFrame({"model": ["pop", "pop", "mf", "mf"],
    ...                        "metric": ["ndcg", "logloss"] * 2, "k": [10, None] * 2,
    ...                        "value": [0.31, 0.52, 0.35, 0.48]})
    >>> pairwise = pd.DataFrame({"model_a": ["pop", "pop"], "model_b": ["mf", "mf"],
    ...                          "metric": ["ndcg", "logloss"], "k": [10, None],
    ...                          "p_value_adjusted": [0.01, 0.20]})
    >>> print(results_table(values, pairwise, digits=2).to_markdown(), end="")
    | # | model | ndcg@10 | logloss |
    | :-- | :-- | --: | --: |
    | a | pop | 0.31 | 0.52 |
    | b | mf | **0.35**<sup>a</sup> | **0.48** |
    """
    alpha = check_probability("alpha", alpha)
    digits = check_whole("digits", digits, minimum=0, maximum=15, example="4")
    lower = _check_lower_is_better(lower_is_better)
    values = as_tidy_frame("values", values, ("model", "metric", "value"), "model and metric",
                           complete=("model", "metric"))
    try:
        numbers_ = pd.to_numeric(values["value"]).astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("values column 'value' must hold numbers (NaN for a value not "
                         "computed); convert it with pandas.to_numeric") from None
    labels = _checked_labels("values", values)
    keys = pd.DataFrame({"model": values["model"].to_numpy(), "label": labels.to_numpy()})
    repeated = keys.duplicated().to_numpy()
    if repeated.any():
        first = int(np.flatnonzero(repeated)[0])
        raise ValueError(f"values has {int(repeated.sum())} repeated (model, metric, k) row(s) "
                         f"(first: model={keys['model'].iat[first]!r}, "
                         f"{keys['label'].iat[first]!r} in row {first}); keep one value each")
    models = pd.unique(keys["model"])
    columns = pd.unique(keys["label"])
    metric_of = dict(zip(labels, values["metric"].map(str)))
    frame = pd.DataFrame(np.nan, index=pd.Index(models, name="model"), columns=columns)
    frame.columns.name = None
    for model, label, value in zip(keys["model"], keys["label"], numbers_):
        frame.at[model, label] = value
    lower_column = np.array([metric_of[c] in lower for c in columns])

    shown = frame.map(lambda v: float(f"{v:.{digits}f}") if not pd.isna(v) else np.nan)
    signed = shown.to_numpy() * np.where(lower_column, -1.0, 1.0)
    top = np.max(np.where(np.isnan(signed), -np.inf, signed), axis=0)
    best = pd.DataFrame((signed == top) & ~np.isnan(signed), index=frame.index,
                        columns=frame.columns)

    beats = pd.DataFrame("", index=frame.index, columns=frame.columns)
    letters = pd.Series([], dtype=object)
    if pairwise is not None:
        letters, won = _wins(pairwise, frame, models, lower_column, alpha)
        for model in models:
            for label in columns:
                beats.at[model, label] = "".join(letters[loser] for loser in models
                                                 if (model, loser, label) in won)
    return ResultsTable(frame=frame, best=best, beats=beats, letters=letters, digits=digits)


def _wins(pairwise, frame: pd.DataFrame, models, lower_column: np.ndarray,
          alpha: float) -> tuple[pd.Series, set]:
    """Letters of the models, and the set of (winner, loser, column) of significant pairs."""
    pw = as_tidy_frame("pairwise", pairwise, ("model_a", "model_b", "metric"),
                       "pair of models and metric")
    if len(models) > len(LETTERS):
        raise ValueError(f"values holds {len(models)} models, but there are only "
                         f"{len(LETTERS)} letters (a-z, A-Z) to mark significant wins; compare "
                         "fewer models at once or leave pairwise=None")
    has_p, has_flag = "p_value_adjusted" in pw.columns, "significant" in pw.columns
    if has_p == has_flag:
        raise ValueError("pairwise needs exactly one of the columns 'p_value_adjusted' "
                         "(significant when <= alpha) and 'significant' (True/False); "
                         + ("it has both: drop one" if has_p else "it has neither"))
    if has_p:
        p = as_p_values("pairwise column 'p_value_adjusted'", pw["p_value_adjusted"].to_numpy())
        significant = p <= alpha  # NaN (no test) is never significant
    else:
        flag = pw["significant"]
        if not pd.api.types.is_bool_dtype(flag):
            raise ValueError(f"pairwise column 'significant' must hold True/False, got dtype "
                             f"{flag.dtype}; convert it with .astype(bool) after filling "
                             "missing values")
        significant = flag.to_numpy(dtype=bool)
    labels = _checked_labels("pairwise", pw).to_numpy()
    index = {model: i for i, model in enumerate(models)}
    where = {label: j for j, label in enumerate(frame.columns)}
    a, b = pw["model_a"].to_numpy(), pw["model_b"].to_numpy()
    for i in range(len(pw)):
        for side, model in (("model_a", a[i]), ("model_b", b[i])):
            if model not in index:
                raise ValueError(f"pairwise column {side!r} names model {model!r} (row {i}), which "
                                 f"values does not hold; its models are "
                                 f"{', '.join(map(repr, models))}")
        if labels[i] not in where:
            raise ValueError(f"pairwise row {i} compares {labels[i]!r}, which values does not "
                             f"hold; its columns are {', '.join(map(repr, frame.columns))}")
        if a[i] == b[i]:
            raise ValueError(f"pairwise row {i} compares model {a[i]!r} with itself; drop that row")
    values = frame.to_numpy()
    rows_a = np.array([index[m] for m in a])
    rows_b = np.array([index[m] for m in b])
    cols = np.array([where[label] for label in labels])
    from_values = values[rows_b, cols] - values[rows_a, cols]
    if "difference" in pw.columns:
        try:
            difference = pd.to_numeric(pw["difference"]).to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("pairwise column 'difference' must hold numbers (B - A)") from None
        clash = significant & (np.sign(difference) * np.sign(from_values) < 0)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise ValueError(
                f"pairwise row {i} says {b[i]!r} - {a[i]!r} = {difference[i]:g} on "
                f"{labels[i]!r}, but values gives {values[rows_b[i], cols[i]]:g} - "
                f"{values[rows_a[i], cols[i]]:g}: the two tables disagree about which model is "
                "better; build both from the same evaluation (difference is B - A)")
    else:
        difference = from_values
    better = np.sign(difference) * np.where(lower_column[cols], -1.0, 1.0)
    won = set()
    for row in np.flatnonzero(significant & (better != 0) & ~np.isnan(better)):
        winner, loser = (b[row], a[row]) if better[row] > 0 else (a[row], b[row])
        won.add((winner, loser, labels[row]))
    letters = pd.Series(list(LETTERS[:len(models)]), index=pd.Index(models, name="model"))
    return letters, won
