r"""Figures of the metrics (指标图): ROC, PR, reliability, distributions, k, comparisons, slices.

Every function draws the numbers of the matching recmetrics function, so a
figure and a table never disagree: the ROC line is :func:`recmetrics.roc_curve`,
its legend shows :func:`recmetrics.roc_auc`, the reliability diagram's points
are :func:`recmetrics.calibration_curve`, and so on. Each one

* takes the user's labels and scores, or a table returned by
  :func:`recmetrics.evaluate`, :func:`recmetrics.evaluate_per_user` or
  :func:`recmetrics.compare`;
* draws on ``ax`` when one is given, else on a new figure
  (``matplotlib.pyplot.subplots``), and returns the Axes it drew on;
* sets a title, axis labels and a legend, and never calls ``plt.show()``
  (a notebook shows the figure by itself; a script calls ``show`` or
  ``savefig``);
* records a one-sentence summary of what the figure shows, which
  :func:`describe` returns together with the title, axis labels and legend:
  alt text for the report, a web page or a screen reader.

Functions that take scores accept one model's scores or a dict
``{model name: scores}`` to draw several models on one Axes.

matplotlib is imported when a figure is drawn, not when recmetrics is
imported: ``import recmetrics`` stays fast for the command line and Dask
workers.

Examples
--------
>>> import recmetrics as rm
>>> from matplotlib.figure import Figure        # no window: works without a display
>>> ax = Figure().subplots()
>>> rm.plots.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], ax=ax) is ax
True
>>> print(rm.plots.describe(ax))                # doctest: +NORMALIZE_WHITESPACE
ROC curve of 1 model: model AUC 0.750. Title: ROC curve. x axis: false positive rate (share of
negatives scored at or above the threshold), from 0 to 1. y axis: true positive rate (share of
positives scored at or above the threshold), from 0 to 1. Legend: model (AUC = 0.750); chance
(AUC = 0.500).
"""
from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from . import _kernels, auc, probability
from .evaluation import PROBABILITY_METRICS
from ._validation import (RecmetricsWarning, as_binary, as_frame, as_models, as_numbers,
                          as_probabilities, caller_stacklevel, check_axes, check_n_bins,
                          check_n_resamples, check_option, check_probability, check_same_length,
                          check_seed, is_real_number, table_column)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["describe", "roc_curve", "precision_recall_curve", "calibration", "score_distributions",
           "per_user_distribution", "metric_vs_k", "comparison", "forest", "gain_curve",
           "lift_curve", "per_user_scatter"]

#: The summary sentence of each Axes a function of this module drew on (weak keys: an Axes
#: that is closed and dropped takes its summary with it).
_SUMMARIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_CHANCE: dict[str, Any] = dict(ls="--", color="0.45", lw=1)
#: gid of a model's curve: a second call on the same Axes continues the colour cycle after it
_MODEL_GID = "recmetrics-model"


def _first_colour(ax: Axes) -> int:
    """How many model curves these functions already drew on ``ax`` (the next colour's index),
    so that curves of several calls on one Axes (e.g. two data sets) get distinct colours."""
    return sum(1 for line in ax.get_lines() if line.get_gid() == _MODEL_GID)


def _reference_line(ax: Axes, xs, ys, label: str) -> None:
    """A dashed reference line (chance, base rate), drawn once per label on an Axes."""
    if not any(line.get_label() == label for line in ax.get_lines()):
        ax.plot(xs, ys, **_CHANCE, label=label)


# --------------------------------------------------------------------------- shared steps


def _axes(ax, figsize=(6.0, 5.0)) -> Axes:
    """The Axes to draw on: the caller's, or one on a new pyplot figure."""
    ax = check_axes(ax)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _finish(ax: Axes, summary: str) -> Axes:
    _SUMMARIES[ax] = summary
    return ax


def _labels_and_scores(y_true, y_score, *, probabilities: bool = False):
    labels = as_binary("y_true", y_true)
    check = as_probabilities if probabilities else as_numbers
    name = "y_prob" if probabilities else "y_score"
    scores = check(name, y_score)
    check_same_length(y_true=labels, **{name: scores})
    return labels, scores


def _legend_below(ax: Axes, ncol: int) -> None:
    """Legend a fixed distance (in points) below the Axes, in as many of ``ncol`` columns as
    fit in the figure's width, centred under the Axes but moved sideways as far as needed to
    stay inside the figure: long tick labels on the left shift the Axes to the right, and a
    legend sticking out of the figure cannot be brought back by a layout engine, so savefig
    would cut it off."""
    from matplotlib.transforms import blended_transform_factory, offset_copy

    # matplotlib's stub types fig as Figure; offset_copy reads only fig.dpi_scale_trans, which a
    # SubFigure (what ax.figure may be) has as well
    below = offset_copy(ax.transAxes, fig=ax.figure, y=-38, units="points")  # type: ignore[arg-type]
    left, right = 0.0, 1.0                   # the Axes' share of the figure's width
    spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
    if spec is not None:
        n_columns = spec.get_gridspec().ncols
        left, right = spec.colspan.start / n_columns, spec.colspan.stop / n_columns

    def place(columns: int, x: float | None = None):
        if x is None:                        # centred under the Axes
            return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
                             ncol=columns, frameon=False)
        return ax.legend(loc="upper center", bbox_to_anchor=(x, 0), frameon=False, ncol=columns,
                         bbox_transform=blended_transform_factory(ax.figure.transSubfigure,
                                                                  below))

    legend = place(ncol)
    renderer = getattr(ax.figure.canvas, "get_renderer", None)
    if renderer is None or legend is None:
        return
    engine = getattr(ax.figure, "get_layout_engine", lambda: None)()
    if engine is not None:                   # where the layout will put the Axes
        engine.execute(ax.figure)
    figure = ax.figure.get_window_extent()
    while ncol > 1 and legend.get_window_extent(renderer()).width > \
            0.98 * figure.width * (right - left):
        ncol -= 1
        legend = place(ncol)
    extent = legend.get_window_extent(renderer())
    x0, x1 = ((extent.x0 - figure.x0) / figure.width, (extent.x1 - figure.x0) / figure.width)
    if x0 < left or x1 > right:              # sticks out: moved sideways into its share
        half = (x1 - x0) / 2
        place(ncol, min(max((x0 + x1) / 2, left + half + 0.005), right - half - 0.005))


def _no_curve(ax: Axes, labels: np.ndarray, what: str, needs: str) -> str:
    """Labels of one class: warn, write on ``ax`` why there is no curve, return the sentence."""
    only = "negatives (0)" if not labels.any() else "positives (1)"
    sentence = f"No {what}: y_true holds only {only} ({labels.size:,} rows); the curve needs {needs}"
    warnings.warn(sentence + ", so an empty figure that says so was drawn", RecmetricsWarning,
                  stacklevel=caller_stacklevel())
    ax.text(0.5, 0.5, sentence.replace("; ", ";\n"), ha="center", va="center",
            transform=ax.transAxes, color="0.3")
    return sentence + "."


def _order(scores: np.ndarray) -> np.ndarray:
    """Scores with infinities replaced by dense ranks (1 = lowest): the same order, ties kept,
    so every threshold curve (ROC, precision-recall) has the same points."""
    if np.isfinite(scores).all():
        return scores
    return np.unique(scores, return_inverse=True)[1].astype(np.float64) + 1.0


def _scaled(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Values in units of 10^e when the largest is at least 1e100 (bin edges of -1.7e308 and
    1.7e308 overflow: their range is inf); (values, 0) otherwise."""
    top = float(np.abs(values).max()) if values.size else 0.0
    if top < 1e100:
        return values, 0
    e = int(np.floor(np.log10(top)))
    return values / 10.0 ** e, e


def _limits(low: float, high: float) -> str:
    return f"from {low:.3g} to {high:.3g}"


def describe(ax: Axes) -> str:
    """Alt text of a figure: what it shows, its title, axis labels, ranges and legend.

    The first sentence is the summary the plotting function of this module
    recorded for ``ax`` (the models and their headline numbers, say);
    the rest is read from the Axes itself, so any Axes can be described.
    Use it where a figure needs a text equivalent: the ``alt`` attribute of
    an ``<img>``, a caption, or a test that the figure says what it should.

    Parameters
    ----------
    ax : matplotlib.axes.Axes

    Returns
    -------
    str
        One paragraph of plain text.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> ax = forest(pd.DataFrame({"slice": ["new", "old"], "value": [0.3, 0.5],
    ...                           "ci_low": [0.2, 0.45], "ci_high": [0.4, 0.55]}), ax=ax, overall=0.45)
    >>> describe(ax).split(". ")[0]
    'Forest plot of 2 slices: lowest new 0.300 [0.200, 0.400], highest old 0.500 [0.450, 0.550], overall 0.450'
    """
    ax = check_axes(ax)
    if ax is None:
        raise ValueError("ax must be the matplotlib Axes to describe, got None")
    parts = [_SUMMARIES[ax]] if ax in _SUMMARIES else []
    title = " ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t)
    if title:
        parts.append(f"Title: {' '.join(title.split())}.")
    for axis, label, (low, high) in (("x", ax.get_xlabel(), ax.get_xlim()),
                                     ("y", ax.get_ylabel(), ax.get_ylim())):
        if label:
            parts.append(f"{axis} axis: {' '.join(label.split())}, {_limits(low, high)}.")
    legend = ax.get_legend()
    if legend is not None:
        entries = [" ".join(t.get_text().split()) for t in legend.get_texts()]
        parts.append("Legend: " + "; ".join(e for e in entries if e) + ".")
    return " ".join(parts)


# --------------------------------------------------------------------------- ROC


def _roc_band(labels, scores, grid, confidence, n_resamples, rng):
    """Percentile band of TPR at each FPR of ``grid`` over stratified bootstrap resamples."""
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    curves = np.empty((n_resamples, grid.size))
    for r in range(n_resamples):  # one ROC curve per resample: a loop over resamples, not rows
        rows = np.r_[rng.choice(positives, positives.size), rng.choice(negatives, negatives.size)]
        fpr, tpr, _ = auc.roc_curve(labels[rows], scores[rows])
        curves[r] = np.interp(grid, fpr, tpr)
    return np.quantile(curves, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)


def roc_curve(y_true, y_score, ax: Axes | None = None, *, name: str | None = None,
              ci: float | None = None, n_resamples: int = 200, seed=0) -> Axes:
    r"""ROC curves of one or several models, AUC in the legend, with the chance diagonal.

    Each line is :func:`recmetrics.roc_curve` (one point per distinct
    score) and its legend entry shows :func:`recmetrics.roc_auc` (ties
    count 1/2). The dashed diagonal is a score that carries no information
    (AUC 0.5).

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes; both must occur.
    y_score : sequence of float, or dict {str: sequence of float}
        One model's scores, or several models' scores of the same rows
        keyed by model name.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 6 x 5 inch figure.
    name : str, optional
        Legend name of a single model (default "model"); a dict's keys name
        its models.
    ci : float, optional
        Confidence level (e.g. 0.95) of a shaded band around each curve:
        positives and negatives are resampled apart with replacement
        (stratified bootstrap, as pROC does, so every resample has both
        classes), ``n_resamples`` times, and the band holds the percentile
        interval of the true positive rate at each false positive rate
        (vertical averaging, Fawcett 2006, sec. 8).
    n_resamples : int, default 200
        Resamples of the band (100 to 10,000,000).
    seed : int, numpy Generator or None, default 0
        Seed of the band's resamples: the same seed draws the same band.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Infinite scores (``inf``, ``-inf``) are legal: the curve depends on the
    order of the scores only, so a model with one is drawn from the dense
    ranks of its scores (the same points; :func:`recmetrics.roc_curve`
    itself refuses ``+inf``, which has no threshold above it), and its AUC
    is :func:`recmetrics.roc_auc` of the scores as given. Labels of one
    class only (no curve exists) give a
    :class:`~recmetrics.RecmetricsWarning` and an Axes that says so in
    its middle and in :func:`describe`.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874. Robin, X. et al. (2011). pROC. *BMC Bioinformatics* 12, 77.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = roc_curve([0, 0, 1, 1], {"A": [0.1, 0.4, 0.35, 0.8], "B": [0.2, 0.1, 0.6, 0.7]},
    ...                ax=Figure().subplots())
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['A (AUC = 0.750)', 'B (AUC = 1.000)', 'chance (AUC = 0.500)']
    """
    models = as_models("y_score", y_score, name)
    if ci is not None:
        ci = check_probability("ci", ci)
        n_resamples = check_n_resamples(n_resamples)
    rng = np.random.default_rng(check_seed(seed))
    labels = as_binary("y_true", y_true)
    checked = [(label, _labels_and_scores(labels, scores)[1]) for label, scores in models]
    ax = _axes(ax)
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title="ROC curve",
           xlabel="false positive rate\n(share of negatives scored at or above the threshold)",
           ylabel="true positive rate\n(share of positives scored at or above the threshold)")
    if labels.all() or not labels.any():
        return _finish(ax, _no_curve(ax, labels, "ROC curve", "both classes"))
    curves = []
    for label, scores in checked:
        ordered = _order(scores)
        fpr, tpr, _ = auc.roc_curve(labels, ordered)
        curves.append((label, ordered, fpr, tpr, auc.roc_auc(labels, scores)))
    grid = np.linspace(0, 1, 201)
    for i, (label, scores, fpr, tpr, value) in enumerate(curves, start=_first_colour(ax)):
        ax.plot(fpr, tpr, color=f"C{i}", lw=2, label=f"{label} (AUC = {value:.3f})",
                gid=_MODEL_GID)
        if ci is not None:
            low, high = _roc_band(labels, scores, grid, ci, n_resamples, rng)
            ax.fill_between(grid, low, high, color=f"C{i}", alpha=0.2, lw=0,
                            label=f"{ci:.0%} bootstrap band ({n_resamples} resamples)"
                            if label == curves[0][0] else None)
    _reference_line(ax, [0, 1], [0, 1], "chance (AUC = 0.500)")
    ax.legend(loc="lower right")
    aucs = ", ".join(f"{label} AUC {value:.3f}" for label, _, _, _, value in curves)
    return _finish(ax, f"ROC curve of {len(curves)} model{'s' * (len(curves) > 1)}: {aucs}"
                       + (f", with {ci:.0%} bootstrap bands." if ci is not None else "."))


# --------------------------------------------------------------------------- PR


def precision_recall_curve(y_true, y_score, ax: Axes | None = None, *,
                           name: str | None = None) -> Axes:
    r"""Precision-recall curves with average precision (PR AUC) in the legend and the base rate.

    Each line is :func:`recmetrics.precision_recall_curve` drawn as steps
    (each threshold's precision held over the recall it adds), so the area
    under the steps is exactly :func:`recmetrics.pr_auc`, shown as "AP".
    The dashed line is the base rate, the share of positives: the precision,
    and the AP, of a score that carries no information.

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes; at least one positive.
    y_score : sequence of float, or dict {str: sequence of float}
        One model's scores, or several models' scores keyed by model name.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.
    name : str, optional
        Legend name of a single model (default "model").

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Infinite scores are legal (the curve depends on their order only).
    Labels without a positive (precision and recall are 0/0) give a
    :class:`~recmetrics.RecmetricsWarning` and an Axes that says there is
    no curve; labels of positives only draw precision 1 at every recall.

    References
    ----------
    Davis, J. & Goadrich, M. (2006). The relationship between precision-recall and ROC curves.
    *ICML*. Saito, T. & Rehmsmeier, M. (2015). The precision-recall plot is more informative
    than the ROC plot when evaluating binary classifiers on imbalanced datasets. *PLoS ONE*
    10(3), e0118432.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], ax=Figure().subplots())
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['model (AP = 0.833)', 'base rate 0.500 (a random score)']
    """
    models = as_models("y_score", y_score, name)
    labels = as_binary("y_true", y_true)
    checked = [(label, _labels_and_scores(labels, scores)[1]) for label, scores in models]
    ax = _axes(ax)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), title="Precision-recall curve",
           xlabel="recall (share of positives at or above the threshold)",
           ylabel="precision (share of rows at or above\nthe threshold that are positive)")
    if not labels.any():
        return _finish(ax, _no_curve(ax, labels, "precision-recall curve", "a positive"))
    curves = []
    for label, scores in checked:
        precision, recall, _ = probability.precision_recall_curve(labels, scores)
        curves.append((label, precision, recall, probability.pr_auc(labels, scores)))
    base = float(labels.mean())
    for i, (label, precision, recall, value) in enumerate(curves, start=_first_colour(ax)):
        ax.plot(recall, precision, drawstyle="steps-post", color=f"C{i}", lw=2,
                label=f"{label} (AP = {value:.3f})", gid=_MODEL_GID)
    _reference_line(ax, [0, 1], [base, base], f"base rate {base:.3f} (a random score)")
    ax.legend(loc="upper right")
    aps = ", ".join(f"{label} AP {value:.3f}" for label, _, _, value in curves)
    return _finish(ax, f"Precision-recall curve of {len(curves)} model"
                       f"{'s' * (len(curves) > 1)}: {aps}; base rate {base:.3f}.")


# --------------------------------------------------------------------------- calibration


def calibration(y_true, y_prob, ax: Axes | None = None, *, name: str | None = None,
                n_bins: int = 10, strategy: Literal["uniform", "quantile"] = "uniform") -> Axes:
    r"""Reliability diagram (可靠性图): observed rate against predicted probability, bin counts below.

    The points are :func:`recmetrics.calibration_curve` (one per non-empty
    bin: mean predicted probability, share of positives); a calibrated model
    lies on the dashed diagonal, points below it mean over-prediction. The
    bars at the bottom, on the right-hand axis, count the rows in each bin
    (bin edges as :func:`recmetrics.calibration_curve` draws them), so a
    point resting on a handful of rows can be told apart. The legend
    shows :func:`recmetrics.expected_calibration_error`, which always uses
    ``n_bins`` equal-width bins (also under ``strategy="quantile"``).

    Parameters
    ----------
    y_true : sequence of 0/1
    y_prob : sequence of float in [0, 1], or dict {str: sequence of float in [0, 1]}
        Predicted probabilities of one model, or of several keyed by name.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure. A twin Axes sharing its x axis
        (``ax.twinx()``) holds the counts.
    name : str, optional
        Legend name of a single model (default "model").
    n_bins : int, default 10
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins or equal-count bins, as in
        :func:`recmetrics.calibration_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with the points (not the twin with the counts).

    References
    ----------
    DeGroot, M. H. & Fienberg, S. E. (1983). The comparison and evaluation of forecasters.
    *The Statistician* 32(1/2), 12-22. Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015).
    Obtaining well calibrated probabilities using Bayesian binning. *AAAI*.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = calibration([0, 0, 1, 1, 1], [0.1, 0.5, 0.5, 0.9, 1.0], n_bins=2, ax=Figure().subplots())
    >>> ax.lines[1].get_xydata().round(4).tolist()      # (mean prediction, observed rate) per bin
    [[0.3667, 0.3333], [0.95, 1.0]]
    """
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    models = as_models("y_prob", y_prob, name)
    n_bins = check_n_bins(n_bins)
    strategy = check_option("strategy", strategy, probability.CALIBRATION_STRATEGIES)
    labels = as_binary("y_true", y_true)
    curves = []
    for label, probs in models:
        labels, probs = _labels_and_scores(labels, probs, probabilities=True)
        prob_true, prob_pred = probability.calibration_curve(labels, probs, n_bins=n_bins,
                                                             strategy=strategy)
        edges = _kernels.calibration_edges(probs, n_bins, strategy)
        count = _kernels.calibration_bins(labels, probs, edges)[0]
        ece = probability.expected_calibration_error(labels, probs, n_bins=n_bins)
        curves.append((label, prob_true, prob_pred, edges, count, ece))
    ax = _axes(ax)
    counts = ax.twinx()
    ax.set_zorder(counts.get_zorder() + 1)  # the points above the count bars
    ax.patch.set_visible(False)
    ax.plot([0, 1], [0, 1], **_CHANCE, label="perfectly calibrated")
    for i, (label, prob_true, prob_pred, edges, count, ece) in enumerate(curves):
        ax.plot(prob_pred, prob_true, "o-", color=f"C{i}", lw=2, ms=5,
                label=f"{label} (ECE = {ece:.3f})")
        fill = to_rgba(f"C{i}", 0.2) if len(curves) == 1 else "none"  # several: outlines only
        counts.bar(edges[:-1], count, width=np.diff(edges), align="edge", color=fill,
                   edgecolor=to_rgba(f"C{i}", 0.7), lw=0.8)
    top = max(int(c[4].max()) for c in curves)
    counts.set_ylim(0, top * 3.5)  # the bars fill the lower part of the panel
    counts.set_yticks([t for t in MaxNLocator(3).tick_values(0, top) if 0 <= t <= top])
    counts.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    counts.set_ylabel("rows in the bin (bars)", color="0.35", loc="bottom")
    counts.tick_params(axis="y", colors="0.35")
    counts.grid(False)
    kind = "equal-width" if strategy == "uniform" else "equal-count"
    title = f"Reliability diagram ({n_bins} {kind} bins)"
    if strategy == "quantile":
        title += f"\nECE over {n_bins} equal-width bins"
    ax.set(xlim=(0, 1), ylim=(0, 1), title=title,
           xlabel="mean predicted probability in the bin",
           ylabel="observed share of positives in the bin")
    ax.legend(loc="upper left")
    eces = ", ".join(f"{c[0]} ECE {c[5]:.3f}" for c in curves)
    return _finish(ax, f"Reliability diagram of {len(curves)} model{'s' * (len(curves) > 1)} "
                       f"with {n_bins} {kind} bins: {eces}; bars count the rows per bin "
                       f"(largest bin {top:,} rows).")


# --------------------------------------------------------------------------- score distributions


def score_distributions(y_true, y_score, ax: Axes | None = None, *, bins: int = 30,
                        stat: Literal["density", "count"] = "density",
                        trim: float = 0.0) -> Axes:
    r"""Histograms of the scores of relevant (1) and non-relevant (0) rows, on shared bins.

    A model that separates the classes puts the two histograms apart; the
    overlap is where it ranks negatives above positives (what 1 - AUC
    counts). The bins are ``numpy.histogram_bin_edges`` of the finite
    scores (after ``trim``), the same for both classes.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_score : sequence of float
        Infinite scores are legal: they have no place on a histogram's axis,
        so they are left out of the bars and counted in the x label. The
        legend counts every row of each class and gives its median over all
        of them; "(N drawn)" when some are left out (infinite, or trimmed).
        Scores of 1e100 or more in size are drawn in units of
        :math:`10^e` (named in the x label): bin edges of ``-1.7e308`` and
        ``1.7e308`` would overflow.
    ax : matplotlib.axes.Axes, optional
    bins : int, default 30
    stat : {"density", "count"}, default "density"
        ``"density"``: each histogram has area 1, so a rare class is as
        visible as a common one; ``"count"``: rows per bin.
    trim : float, default 0
        Share of the finite scores cut from each tail before binning (e.g.
        0.001), so that a few outliers do not squeeze the rest into one bin;
        the x label says so. Densities are those of the rows kept.

    Returns
    -------
    matplotlib.axes.Axes
        Its patches are ``StepPatch`` es whose ``get_data()`` gives the
        heights and edges drawn: for each class, relevant first, the filled
        one, then its outline.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = score_distributions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], bins=2, stat="count",
    ...                          ax=Figure().subplots())
    >>> ax.patches[0].get_data().edges.round(2).tolist()
    [0.1, 0.45, 0.8]
    >>> ax.patches[0].get_data().values.tolist(), ax.patches[2].get_data().values.tolist()
    ([1, 1], [2, 0])
    """
    bins = check_n_bins(bins)
    stat = check_option("stat", stat, ("density", "count"))
    if not is_real_number(trim) or not 0 <= trim < 0.5:
        raise ValueError(f"trim={trim!r} is the share cut from each tail, so it must be a number "
                         "from 0 up to (not including) 0.5, e.g. 0.001")
    trim = float(trim)
    labels, scores = _labels_and_scores(y_true, y_score)
    finite = np.isfinite(scores)
    n_infinite = int((~finite).sum())
    if not finite.any():
        raise ValueError(f"y_score holds only infinite scores ({scores.size:,}); a histogram needs "
                         "finite scores")
    kept = finite
    if trim > 0:
        low, high = np.quantile(scores[finite], [trim, 1 - trim])
        kept = finite & (scores >= low) & (scores <= high)
    values, e = _scaled(scores[kept])
    every_label = labels
    labels = labels[kept]
    edges = np.histogram_bin_edges(values, bins)
    ax = _axes(ax, figsize=(6.5, 4.2))
    summary = []
    for i, (value, what) in enumerate(((1, "relevant (label 1)"), (0, "not relevant (label 0)"))):
        chosen = values[labels == value]
        every = scores[every_label == value]     # the class's rows, trimmed or infinite too
        if every.size == 0:
            summary.append(f"no {what} row")
            continue
        heights = np.histogram(chosen, edges, density=stat == "density")[0]
        color = ("C1", "C0")[i]
        median = float(np.median(every))
        shown = "" if chosen.size == every.size else f" ({chosen.size:,} drawn)"
        ax.stairs(heights, edges, fill=True, color=color, alpha=0.3)
        ax.stairs(heights, edges, color=color, lw=1.8,
                  label=f"{what}: {every.size:,} rows{shown}, median {median:.3g}")
        summary.append(f"{what} {every.size:,} rows{shown} with median score {median:.3g}")
    left_out = [f"{n_infinite:,} infinite" if n_infinite else "",
                f"{trim:.3g} of each tail cut" if trim else ""]
    left_out = [x for x in left_out if x]
    xlabel = "score" + (f" (in units of 1e{e})" if e else "")
    if left_out:
        xlabel += f"\n({'; '.join(left_out)}: not shown)"
        summary.append(f"not shown: {', '.join(left_out)}")
    ax.set(title="Scores of relevant and non-relevant rows", xlabel=xlabel,
           ylabel="density (each histogram has area 1)" if stat == "density" else "rows",
           xlim=(edges[0], edges[-1]))
    ax.set_ylim(0, ax.get_ylim()[1] * 1.2)  # room for the legend above the tallest bar
    ax.legend(loc="upper right")
    return _finish(ax, f"Histograms of the scores by class over {bins} shared bins: "
                       + "; ".join(summary) + ".")


# --------------------------------------------------------------------------- tables


def per_user_distribution(table: pd.DataFrame, column: str, ax: Axes | None = None, *,
                          bins: int = 20) -> Axes:
    r"""Histogram of one per-user metric over users, with its mean over users.

    Reads a table of :func:`recmetrics.evaluate_per_user` (or any table
    with one row per user). Users whose value is NaN (no relevant item, or
    for ``auc`` one class only) are left out and counted in the title. The
    vertical line is the unweighted mean of the remaining values, which is
    what :func:`recmetrics.evaluate` reports for a ranking metric under
    ``no_relevant="skip"`` (GAUC weighs users instead). Values in [0, 1]
    get ``bins`` equal bins over [0, 1]; others
    ``numpy.histogram_bin_edges``.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per user.
    column : str
        The metric's column, e.g. ``"ndcg@10"``.
    ax : matplotlib.axes.Axes, optional
    bins : int, default 20

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> users = pd.DataFrame({"user": [1, 2, 3, 4], "mrr": [1.0, 0.5, float("nan"), 0.5]})
    >>> ax = per_user_distribution(users, "mrr", ax=Figure().subplots())
    >>> ax.get_title()
    'mrr per user\n3 users (1 without a value left out)'
    >>> ax.get_legend().get_texts()[0].get_text()
    'mean over users = 0.667'
    """
    as_frame("table", table, {"column": column})
    bins = check_n_bins(bins)
    values = table_column("table", table, column, "column")
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        raise ValueError(f"table[{column!r}] holds no value (all {values.size:,} are NaN), so there "
                         "is no distribution to draw; pick a metric defined for some users")
    if not np.isfinite(kept).all():
        raise ValueError(f"table[{column!r}] holds an infinite value; a histogram needs finite values")
    in_unit = kept.min() >= 0 and kept.max() <= 1
    edges = np.linspace(0, 1, bins + 1) if in_unit else np.histogram_bin_edges(kept, bins)
    heights = np.histogram(kept, edges)[0]
    mean = float(kept.mean())
    ax = _axes(ax, figsize=(6.5, 4.2))
    ax.stairs(heights, edges, fill=True, color="C0", alpha=0.75)
    ax.axvline(mean, color="C3", lw=2, label=f"mean over users = {mean:.3f}")
    left = values.size - kept.size
    ax.set_ylim(0, heights.max() * 1.25)  # room for the legend above the tallest bar
    ax.set(title=f"{column} per user\n{kept.size:,} users"
                 + (f" ({left:,} without a value left out)" if left else ""),
           xlabel=column, ylabel="users", xlim=(edges[0], edges[-1]))
    ax.legend(loc="upper right")
    return _finish(ax, f"Histogram of {column} over {kept.size:,} users, mean {mean:.3f}, median "
                       f"{np.median(kept):.3f}; {int((kept == 0).sum()):,} users at 0 and "
                       f"{left:,} without a value.")


def metric_vs_k(table: pd.DataFrame, ax: Axes | None = None, *, metrics=None) -> Axes:
    r"""Each metric against its cut-off k, from an :func:`recmetrics.evaluate` table with several k.

    One line per metric that has a cut-off (P@k, R@k, HR@k, MAP@k, NDCG@k);
    AUC, GAUC and MRR have none and are left out. When the table has
    ``ci_low`` and ``ci_high`` (``evaluate(..., ci=0.95)``), each point gets
    its bootstrap interval as an error bar.

    Parameters
    ----------
    table : pandas.DataFrame
        ``evaluate(pred, truth, k=[1, 5, 10, 20])``: columns ``metric, k,
        value`` and optionally ``ci_low, ci_high``.
    ax : matplotlib.axes.Axes, optional
    metrics : sequence of str, optional
        Which metrics to draw, in this order; default every metric with a k.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines`` holds one line per metric whose data are the table's
        ``k`` and ``value`` (sorted by k); ``ax.collections`` one set of
        vertical bars per metric with intervals, each from ``ci_low`` to
        ``ci_high`` exactly (also where an interval from few resamples does
        not contain the value). Rows without an interval (NaN) get no bar.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> table = pd.DataFrame({"metric": ["ndcg", "ndcg", "mrr"], "k": [5, 10, None],
    ...                       "value": [0.4, 0.45, 0.6]})
    >>> ax = metric_vs_k(table, ax=Figure().subplots())
    >>> ax.lines[0].get_xydata().tolist()
    [[5.0, 0.4], [10.0, 0.45]]
    """
    as_frame("table", table, {"metric": "metric", "k": "k", "value": "value"})
    ks = table_column("table", table, "k", "k")
    values = table_column("table", table, "value", "value")
    has_k = ~np.isnan(ks)
    available = list(dict.fromkeys(table["metric"][has_k]))
    if not available:
        raise ValueError("table has no metric with a cut-off k (its metrics are "
                         f"{', '.join(map(str, dict.fromkeys(table['metric'])))}); evaluate with "
                         "metrics such as 'ndcg' or 'recall' and k=[5, 10, 20]")
    if metrics is None:
        metrics = available
    else:
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        for metric in metrics:
            if metric not in available:
                raise ValueError(f"metrics names {metric!r}, which the table has no row with a k "
                                 f"for; pick from {', '.join(available)}")
    with_ci = {"ci_low", "ci_high"} <= set(table.columns)
    if with_ci:
        low, high = (table_column("table", table, c, c) for c in ("ci_low", "ci_high"))
    ax = _axes(ax, figsize=(6.5, 4.2))
    summary = []
    for i, metric in enumerate(metrics):
        rows = np.flatnonzero(has_k & (table["metric"] == metric).to_numpy())
        rows = rows[np.argsort(ks[rows], kind="stable")]
        k, v = ks[rows], values[rows]
        ax.plot(k, v, "o-", color=f"C{i}", lw=1.8, ms=5, label=metric)
        if with_ci and not np.isnan(low[rows]).all():
            # a bar from ci_low to ci_high as they are: a bootstrap from few resamples may
            # not straddle the value, which an error bar (value - low) could not draw
            bar = ~np.isnan(low[rows]) & ~np.isnan(high[rows])
            ax.vlines(k[bar], low[rows][bar], high[rows][bar], color=f"C{i}", lw=1.2)
        summary.append(f"{metric} " + ", ".join(f"{x:.3f} at k={int(kk)}" for kk, x in zip(k, v)))
    shown = np.unique(ks[has_k])
    if shown.max() / shown.min() >= 20:
        ax.set_xscale("log")
    if shown.size <= 12:
        ax.set_xticks(shown, [f"{int(k)}" for k in shown])
        ax.minorticks_off()
    ax.set(title="Metrics at cut-off k" + (" with bootstrap intervals" if with_ci else ""),
           xlabel="cut-off k", ylabel="value (mean over users)")
    ax.legend(loc="best")
    return _finish(ax, "Metrics against the cut-off k: " + "; ".join(summary) + ".")


def _row_names(table) -> list[str]:
    """``metric@k``, or ``metric`` for a row without a cut-off."""
    ks = table["k"] if "k" in table.columns else [None] * len(table)
    return [str(m) if pd.isna(k) else f"{m}@{int(k)}" for m, k in zip(table["metric"], ks)]


def comparison(table: pd.DataFrame, ax: Axes | None = None, *,
               p_value: Literal["p_randomization", "p_ttest", "p_randomization_adjusted",
                                "p_ttest_adjusted"] = "p_randomization",
               alpha: float = 0.05, ci_low: str = "ci_low", ci_high: str = "ci_high",
               names: tuple[str, str] = ("A", "B")) -> Axes:
    r"""Model comparison: B - A per metric, filled where the paired test gives p < ``alpha``.

    Reads a :func:`recmetrics.compare` table, one row per metric and cut-off.
    Each row is a point at ``difference`` (B - A) on a shared axis with a
    line at 0: a filled marker where ``p_value`` < ``alpha``, a hollow one
    where not, a cross where the row has no paired test (global AUC, the
    probability metrics). Each row's label gives both values, A then B;
    for the probability metrics (log loss, NE, Brier, ECE) lower is
    better, and their labels say so.
    When the table has the columns ``ci_low`` and ``ci_high`` (an interval
    for the difference), they are drawn as horizontal bars; ``compare``
    does not compute them today.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``metric, k, value_a, value_b, difference`` and ``p_value``.
    ax : matplotlib.axes.Axes, optional
    p_value : {"p_randomization", "p_ttest", "p_randomization_adjusted", "p_ttest_adjusted"}, \
default "p_randomization"
        The p-value column that decides filled or hollow: an ``_adjusted``
        one (corrected for multiple testing by ``compare``) matches the
        table's ``verdict``.
    alpha : float, default 0.05
    ci_low, ci_high : str, default "ci_low", "ci_high"
        Columns of an interval for the difference, drawn when both exist.
    names : (str, str), default ("A", "B")
        Names of model A and model B in the labels.

    Returns
    -------
    matplotlib.axes.Axes
        Metrics from top to bottom in table order; rows with an undefined
        difference (NaN) keep their label, marked "undefined", without a point.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> table = pd.DataFrame({"metric": ["auc", "ndcg"], "k": pd.array([None, 10], dtype="Int64"),
    ...                       "value_a": [0.70, 0.40], "value_b": [0.72, 0.41],
    ...                       "difference": [0.02, 0.01], "p_ttest": [None, 0.2],
    ...                       "p_randomization": [None, 0.01]})
    >>> ax = comparison(table, ax=Figure().subplots())
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['auc: 0.700 → 0.720', 'ndcg@10: 0.400 → 0.410']
    """
    p_value = check_option("p_value", p_value, ("p_randomization", "p_ttest",
                                                "p_randomization_adjusted", "p_ttest_adjusted"))
    alpha = check_probability("alpha", alpha)
    if (isinstance(names, str) or len(names) != 2):
        raise ValueError(f"names={names!r} must be two model names, e.g. ('A', 'B')")
    as_frame("table", table, {"metric": "metric", "p_value": p_value})
    value_a, value_b, difference, p = (table_column("table", table, c, c) for c in
                                       ("value_a", "value_b", "difference", p_value))
    with_ci = ci_low in table.columns and ci_high in table.columns
    labels = [f"{row}: " + ("undefined" if np.isnan(d) else f"{a:.3f} → {b:.3f}")
              + (" (lower is better)" if metric in PROBABILITY_METRICS else "")
              for row, metric, a, b, d in zip(_row_names(table), table["metric"], value_a,
                                              value_b, difference)]
    y = np.arange(len(table))[::-1]
    ax = _axes(ax, figsize=(8.0, 1.6 + 0.45 * len(table)))
    ax.axvline(0, **_CHANCE)
    significant = ~np.isnan(p) & (p < alpha)
    tested = ~np.isnan(p)
    drawn = ~np.isnan(difference)
    ends = difference[drawn]
    if with_ci:
        low, high = (table_column("table", table, c, c) for c in (ci_low, ci_high))
        bars = drawn & ~np.isnan(low) & ~np.isnan(high)
        ax.hlines(y[bars], low[bars], high[bars], color="C0", lw=2,
                  label=f"interval ({ci_low} to {ci_high})")
        ends = np.r_[ends, low[bars], high[bars]]
    kinds: tuple[tuple[np.ndarray, dict[str, Any], str], ...] = (
        (significant & drawn, dict(marker="o", color="C0", ls="none", ms=8),
         f"{p_value} < {alpha:g}"),
        (tested & ~significant & drawn, dict(marker="o", mfc="white", mec="C0", ls="none",
                                              ms=8, mew=1.5),
         f"{p_value} ≥ {alpha:g}"),
        (~tested & drawn, dict(marker="X", color="0.4", ls="none", ms=8),
         "no paired test"))
    for chosen, style, label in kinds:
        if chosen.any():
            ax.plot(difference[chosen], y[chosen], **style, label=label)
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, len(table) - 0.3)
    spread = float(np.abs(ends).max()) if ends.size else 0.0
    spread = spread if spread > 0 else 1.0
    ax.set_xlim(-1.25 * spread, 1.25 * spread)
    ax.set(title=f"{names[1]} vs {names[0]}: difference per metric",
           xlabel=f"difference {names[1]} - {names[0]} (right of 0: {names[1]} higher)")
    ax.grid(axis="y", visible=False)
    _legend_below(ax, ncol=3)
    better = [n for n, d, s in zip(_row_names(table), difference, significant) if s]
    return _finish(ax, f"Differences {names[1]} minus {names[0]} for {len(table)} metrics; "
                       f"{int(significant.sum())} with {p_value} below {alpha:g}"
                       + (f" ({', '.join(better)})" if better else "") + ".")


def forest(table: pd.DataFrame, ax: Axes | None = None, *, slice: str = "slice",
           value: str = "value", ci_low: str | None = "ci_low", ci_high: str | None = "ci_high",
           overall: float | None = None, n: str | None = None, metric: str | None = None) -> Axes:
    r"""Forest plot: a metric's value and interval per slice, the overall value as a vertical line.

    One row per slice, top to bottom in table order: a point at the value and
    a horizontal bar from ``ci_low`` to ``ci_high``. Slices whose interval
    lies wholly on one side of the overall value differ from it clearly;
    overlapping intervals do not prove equality.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per slice.
    ax : matplotlib.axes.Axes, optional
    slice, value : str, default "slice", "value"
        Columns of the slice's name and its value.
    ci_low, ci_high : str or None, default "ci_low", "ci_high"
        Columns of the interval; None draws points only.
    overall : float, optional
        The value over all slices, drawn as a dashed vertical line.
    n : str, optional
        A column of slice sizes (users, rows) added to the labels.
    metric : str, optional
        The metric's name for the axis label and title; default the
        ``value`` column's name.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines[0]`` holds the points, (value, row position).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> table = pd.DataFrame({"slice": ["new users", "returning"], "value": [0.3, 0.5],
    ...                       "ci_low": [0.2, 0.45], "ci_high": [0.4, 0.55], "users": [80, 920]})
    >>> ax = forest(table, overall=0.48, n="users", metric="NDCG@10", ax=Figure().subplots())
    >>> ax.lines[0].get_xdata().tolist(), [t.get_text() for t in ax.get_yticklabels()]
    ([0.3, 0.5], ['new users (n = 80)', 'returning (n = 920)'])
    """
    if (ci_low is None) != (ci_high is None):
        raise ValueError("ci_low and ci_high go together: pass both column names, or None for both")
    as_frame("table", table, {"slice": slice})
    values = table_column("table", table, value, "value")
    names = [str(s) for s in table[slice]]
    if n is not None:
        sizes = table_column("table", table, n, "n")
        names = [f"{s} (n = {int(c):,})" if not np.isnan(c) else s for s, c in zip(names, sizes)]
    if overall is not None:
        overall = float(as_numbers("overall", [overall])[0])
    metric = value if metric is None else str(metric)
    y = np.arange(len(table))[::-1].astype(float)
    ax = _axes(ax, figsize=(6.5, 1.3 + 0.4 * len(table)))
    if ci_low is not None and ci_high is not None:  # both or neither, checked above
        low = table_column("table", table, ci_low, "ci_low")
        high = table_column("table", table, ci_high, "ci_high")
        ax.hlines(y, low, high, color="C0", lw=2, label="interval")
    ax.plot(values, y, "s", color="C0", ms=7, label=metric)
    if overall is not None:
        ax.axvline(overall, color="C3", ls="--", lw=1.5, label=f"overall {overall:.3f}")
    ax.set_yticks(y, names)
    ax.set_ylim(-0.7, len(table) - 0.3)
    ax.grid(axis="y", visible=False)
    ax.set(title=f"{metric} by slice", xlabel=metric)
    _legend_below(ax, ncol=3)

    def shown(i):
        text = f"{names[i]} {values[i]:.3f}"
        return text + (f" [{low[i]:.3f}, {high[i]:.3f}]" if ci_low is not None else "")

    order = np.argsort(values, kind="stable")
    order = order[~np.isnan(values[order])]
    summary = f"Forest plot of {len(table)} slices"
    if order.size:
        summary += f": lowest {shown(order[0])}, highest {shown(order[-1])}"
    if overall is not None:
        summary += f", overall {overall:.3f}"
    return _finish(ax, summary + ".")


# --------------------------------------------------------------------------- gain and lift


def _gain_points(labels, scores):
    """Share of rows targeted and share of positives captured, at each distinct score.

    From :func:`recmetrics.roc_curve`: at a threshold the rows targeted are
    TP + FP and the positives captured TP, with TP = TPR P and FP = FPR N
    (rounded back to the whole counts they are).
    """
    fpr, tpr, _ = auc.roc_curve(labels, scores)
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    tp = np.rint(tpr * n_pos)
    targeted = tp + np.rint(fpr * n_neg)
    return targeted / labels.size, tp / n_pos


def gain_curve(y_true, y_score, ax: Axes | None = None, *, name: str | None = None) -> Axes:
    r"""Cumulative gain: share of positives captured against share of rows targeted, best first.

    Rows are targeted in order of descending score; at each distinct score
    (tied rows are targeted together)

    .. math:: \mathrm{targeted}(t) = \frac{\#\{i: s_i \ge t\}}{n}, \qquad
              \mathrm{gain}(t) = \frac{\#\{i: y_i = 1, s_i \ge t\}}{P}

    The diagonal is random targeting; the dotted line is a perfect score
    (every positive first), which reaches 1 at the base rate.

    Parameters
    ----------
    y_true : sequence of 0/1
        Both classes must occur.
    y_score : sequence of float, or dict {str: sequence of float}
    ax : matplotlib.axes.Axes, optional
    name : str, optional
        Legend name of a single model (default "model").

    Returns
    -------
    matplotlib.axes.Axes
        One line per model from (0, 0) to (1, 1).

    References
    ----------
    Ling, C. X. & Li, C. (1998). Data mining for direct marketing: problems and solutions.
    *KDD*, 73-79.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = gain_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], ax=Figure().subplots())
    >>> ax.lines[0].get_xydata().tolist()
    [[0.0, 0.0], [0.25, 0.5], [0.5, 0.5], [0.75, 1.0], [1.0, 1.0]]
    """
    return _gain_or_lift(y_true, y_score, ax, name, lift=False)


def lift_curve(y_true, y_score, ax: Axes | None = None, *, name: str | None = None) -> Axes:
    r"""Lift: how many times the base rate the targeted rows' positive rate is, best first.

    .. math:: \mathrm{lift}(t) = \frac{\mathrm{gain}(t)}{\mathrm{targeted}(t)}
              = \frac{\#\{y_i = 1, s_i \ge t\} / \#\{s_i \ge t\}}{P / n}

    with the quantities of :func:`gain_curve`, from the first distinct score
    on (lift is 0/0 before any row is targeted). Targeting everyone gives
    lift 1, the horizontal line; a perfect score starts at 1 / base rate.

    Parameters
    ----------
    y_true : sequence of 0/1
        Both classes must occur.
    y_score : sequence of float, or dict {str: sequence of float}
    ax : matplotlib.axes.Axes, optional
    name : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per model ending at (1, 1).

    References
    ----------
    Ling, C. X. & Li, C. (1998). Data mining for direct marketing: problems and solutions.
    *KDD*, 73-79.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = lift_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], ax=Figure().subplots())
    >>> ax.lines[0].get_xydata().round(4).tolist()
    [[0.25, 2.0], [0.5, 1.0], [0.75, 1.3333], [1.0, 1.0]]
    """
    return _gain_or_lift(y_true, y_score, ax, name, lift=True)


def _gain_or_lift(y_true, y_score, ax, name, *, lift: bool) -> Axes:
    models = as_models("y_score", y_score, name)
    labels = as_binary("y_true", y_true)
    curves = []
    for label, scores in models:
        labels, scores = _labels_and_scores(labels, scores)
        targeted, gain = _gain_points(labels, scores)
        curves.append((label, targeted, gain))
    base = float(labels.mean())
    ax = _axes(ax)
    summary = []
    for i, (label, targeted, gain) in enumerate(curves, start=_first_colour(ax)):
        # the first point with at least 10% of the rows targeted, for the legend
        at = int(np.searchsorted(targeted, 0.1))
        if lift:
            ax.plot(targeted[1:], gain[1:] / targeted[1:], color=f"C{i}", lw=2, gid=_MODEL_GID,
                    label=f"{label} (lift {gain[at] / targeted[at]:.2f} at the top "
                          f"{targeted[at]:.1%})")
            summary.append(f"{label} lift {gain[at] / targeted[at]:.2f} at the top {targeted[at]:.1%}")
        else:
            ax.plot(targeted, gain, color=f"C{i}", lw=2, gid=_MODEL_GID,
                    label=f"{label} ({gain[at]:.1%} of positives in the top {targeted[at]:.1%})")
            summary.append(f"{label} captures {gain[at]:.1%} of positives in the top "
                           f"{targeted[at]:.1%}")
    if lift:
        _reference_line(ax, [0, 1], [1, 1], "random targeting (lift 1)")
        ax.set(xlim=(0, 1), title="Lift curve", ylabel="lift (positive rate of the targeted rows\n"
                                                        "divided by the base rate)")
        ax.set_ylim(bottom=0)
    else:
        _reference_line(ax, [0, 1], [0, 1], "random targeting")
        ax.plot([0, base, 1], [0, 1, 1], ls=":", color="0.3", lw=1.2,
                label=f"perfect score (base rate {base:.3f})")
        ax.set(xlim=(0, 1), ylim=(0, 1.02), aspect="equal", title="Cumulative gain curve",
               ylabel="share of positives captured")
    ax.set_xlabel("share of rows targeted, highest scores first")
    ax.legend(loc="upper right" if lift else "lower right", fontsize="small")
    kind = "Lift" if lift else "Cumulative gain"
    return _finish(ax, f"{kind} curve of {len(curves)} model{'s' * (len(curves) > 1)} "
                       f"(base rate {base:.3f}): " + "; ".join(summary) + ".")


# --------------------------------------------------------------------------- two models, per user


def per_user_scatter(table_a: pd.DataFrame, table_b: pd.DataFrame, column: str,
                     ax: Axes | None = None, *, names: tuple[str, str] = ("A", "B"),
                     user: str = "user") -> Axes:
    r"""Each user's value of one metric under model A (x) against model B (y), with y = x.

    Reads two tables of :func:`recmetrics.evaluate_per_user` (one row per
    user) and pairs them on ``user``: a point per user whose value is
    defined (not NaN) in both. Points above the diagonal are users B serves
    better. The legend counts the users above, below and on it, and gives
    the two means over the paired users (the means :func:`recmetrics.compare`
    reports for a metric averaged over users, when the tables hold the same
    users). Many users share values such as 0 and 1, so points are drawn
    translucent: a darker point stands for more users.

    Parameters
    ----------
    table_a, table_b : pandas.DataFrame
        Per-user tables of model A and model B.
    column : str
        The metric's column, e.g. ``"ndcg@10"``.
    ax : matplotlib.axes.Axes, optional
    names : (str, str), default ("A", "B")
        Names of model A and model B in the labels.
    user : str, default "user"
        The user column of both tables.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.collections[0].get_offsets()`` holds the points (value under A,
        value under B), in the order of ``table_a``'s users.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> a = pd.DataFrame({"user": [1, 2, 3], "mrr": [1.0, 0.5, float("nan")]})
    >>> b = pd.DataFrame({"user": [2, 1, 3], "mrr": [1.0, 1.0, 0.25]})
    >>> ax = per_user_scatter(a, b, "mrr", ax=Figure().subplots(), names=("old", "new"))
    >>> ax.collections[0].get_offsets().tolist()
    [[1.0, 1.0], [0.5, 1.0]]
    >>> [t.get_text() for t in ax.get_legend().get_texts()][0]
    '2 users: new higher for 1,\nold higher for 0, equal for 1'
    """
    if isinstance(names, str) or len(names) != 2:
        raise ValueError(f"names={names!r} must be two model names, e.g. ('A', 'B')")
    for name, table in (("table_a", table_a), ("table_b", table_b)):
        as_frame(name, table, {"user": user, "column": column})
        table_column(name, table, column, "column")
    if table_a[user].duplicated().any() or table_b[user].duplicated().any():
        which = "table_a" if table_a[user].duplicated().any() else "table_b"
        raise ValueError(f"{which} has a user in more than one row; pass per-user tables "
                         "(recmetrics.evaluate_per_user), one row per user")
    paired = table_a[[user, column]].merge(table_b[[user, column]], on=user, how="inner",
                                           suffixes=("_a", "_b"), sort=False)
    x = paired[f"{column}_a"].to_numpy(np.float64)
    y = paired[f"{column}_b"].to_numpy(np.float64)
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[both], y[both]
    if x.size == 0:
        raise ValueError(f"no user has a value of {column!r} in both tables (the tables share "
                         f"{len(paired):,} users); pair tables of the same users and a metric "
                         "defined for some of them")
    above, below = int((y > x).sum()), int((y < x).sum())
    equal = x.size - above - below
    ax = _axes(ax, figsize=(5.6, 5.4))
    ax.scatter(x, y, s=14, color="C0", alpha=max(0.2, min(0.6, 150 / x.size)), lw=0,
               label=f"{x.size:,} users: {names[1]} higher for {above:,},\n{names[0]} higher "
                     f"for {below:,}, equal for {equal:,}")
    low = float(min(x.min(), y.min()))
    high = float(max(x.max(), y.max()))
    if 0 <= low and high <= 1:
        low, high = 0.0, 1.0
    pad = 0.03 * (high - low or 1.0)
    ax.plot([low - pad, high + pad], [low - pad, high + pad], **_CHANCE,
            label=f"equal; means: {names[0]} {x.mean():.3f},\n{names[1]} {y.mean():.3f}")
    ax.set(xlim=(low - pad, high + pad), ylim=(low - pad, high + pad), aspect="equal",
           title=f"{column} per user: {names[1]} against {names[0]}",
           xlabel=f"{column} of {names[0]}", ylabel=f"{column} of {names[1]}")
    _legend_below(ax, ncol=1)
    return _finish(ax, f"Scatter of {column} per user, {names[0]} on x and {names[1]} on y, "
                       f"{x.size:,} users: {names[1]} higher for {above:,}, {names[0]} higher "
                       f"for {below:,}, equal for {equal:,}; means {x.mean():.3f} and "
                       f"{y.mean():.3f}.")
