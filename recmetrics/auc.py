r"""ROC curve (ROC 曲线), AUC computed two ways, and group AUC (GAUC).

AUC is the probability that a randomly drawn positive scores higher than a
randomly drawn negative, a tie counting one half:

.. math::

    \mathrm{AUC} = \frac{1}{PN}\sum_{i \in \mathrm{pos}}\sum_{j \in \mathrm{neg}}
        \Big(\mathbb 1[s_i > s_j] + \tfrac12\,\mathbb 1[s_i = s_j]\Big)

Both methods below compute the integer :math:`2U = 2\,\#\mathrm{wins} +
\#\mathrm{ties}` exactly and divide it by :math:`2PN` once, so they return the
same float, bit for bit.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from . import _kernels
from ._validation import (GAUC_WEIGHTS, TIES, GaucWeight, Ties, as_binary, as_groups, as_numbers,
                          as_sample_weight, check_both_classes, check_max_fpr, check_option,
                          check_same_length, undefined_value)

__all__ = ["roc_curve", "roc_auc", "group_auc", "group_auc_details", "GroupAUC"]

#: Largest number of positive-negative comparisons held in memory at once by
#: ``roc_auc(method="pairwise")`` (4 Mi booleans, about 4 MiB).
PAIRWISE_CHUNK = _kernels.PAIRWISE_CHUNK


def _labels_and_scores(y_true, y_score, sample_weight=None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    labels = as_binary("y_true", y_true)
    scores = as_numbers("y_score", y_score)
    check_same_length(y_true=labels, y_score=scores)
    return labels, scores, as_sample_weight(sample_weight, labels.size)


# --------------------------------------------------------------------------- ROC curve


def _curve(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative false and true positives (counts or weights) and thresholds, from +inf down."""
    if weights is not None:  # weight-0 samples would only add thresholds (scikit-learn drops them)
        kept = weights > 0
        labels, scores, weights = labels[kept], scores[kept], weights[kept]
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    # compare neighbours with != (np.diff of two equal infinities is NaN, which split one threshold)
    last_of_threshold = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]),
                              scores.size - 1]
    if weights is None:
        tps = np.r_[0, np.cumsum(labels[order], dtype=np.int64)[last_of_threshold]]
        fps = np.r_[0, last_of_threshold + 1] - tps
    else:
        w = weights[order]
        tps = np.r_[0.0, np.cumsum(w * labels[order])[last_of_threshold]]
        fps = np.r_[0.0, np.cumsum(w * (1 - labels[order]))[last_of_threshold]]
    return fps, tps, np.r_[np.inf, sorted_scores[last_of_threshold]]


def roc_curve(y_true, y_score, *, sample_weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""ROC curve: one (FPR, TPR) point per distinct score used as a threshold.

    A sample is predicted positive when its score is ``>= threshold``. The
    thresholds run from ``+inf`` (nothing predicted positive, the point
    (0, 0)) down through every distinct score (the last one predicts every
    sample positive, the point (1, 1)). This is scikit-learn's
    ``roc_curve(..., drop_intermediate=False)``.

    .. math:: \mathrm{TPR}(t) = \frac{\#\{i: y_i=1, s_i \ge t\}}{P}, \quad
              \mathrm{FPR}(t) = \frac{\#\{i: y_i=0, s_i \ge t\}}{N}

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes; both must occur (with a weight > 0).
    y_score : sequence of float
        Scores, higher meaning "more likely positive". No NaN.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: the counts become sums of weights. As in
        scikit-learn, samples of weight 0 are dropped first, so their scores
        are not thresholds.

    Returns
    -------
    fpr, tpr, thresholds : numpy.ndarray
        Of equal length (number of distinct scores + 1), thresholds decreasing.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> fpr, tpr, thr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    labels, scores, weights = _labels_and_scores(y_true, y_score, sample_weight)
    check_both_classes("y_true", labels if weights is None else labels[weights > 0])
    if np.isposinf(scores).any():
        raise ValueError("y_score contains +inf; the ROC curve starts at a threshold above every "
                         "score, so clip or rescale infinite scores first")
    fps, tps, thresholds = _curve(labels, scores, weights)
    return fps / fps[-1], tps / tps[-1], thresholds


# --------------------------------------------------------------------------- AUC


def _partial_auc(fpr: np.ndarray, tpr: np.ndarray, max_fpr: float) -> float:
    """McClish-standardised area of the ROC curve over FPR in [0, max_fpr]."""
    stop = int(np.searchsorted(fpr, max_fpr, side="right"))
    y = np.interp(max_fpr, fpr[stop - 1:stop + 1], tpr[stop - 1:stop + 1])
    x, t = np.r_[fpr[:stop], max_fpr], np.r_[tpr[:stop], y]
    area = float(np.sum(np.diff(x) * (t[1:] + t[:-1]) / 2))
    low, high = 0.5 * max_fpr ** 2, max_fpr
    return 0.5 * (1 + (area - low) / (high - low))


def roc_auc(y_true, y_score, *, method: Literal["rank", "pairwise"] = "rank",
            ties: Ties = "average", max_fpr: float | None = None, sample_weight=None) -> float:
    r"""Area under the ROC curve (AUC): P(score of a positive > score of a negative).

    .. math::

        \mathrm{AUC} = \frac{\sum_{i \in \mathrm{pos}} r_i - P(P+1)/2}{P\,N}

    where :math:`r_i` is the rank of positive *i* among all samples by
    ascending score (1 = lowest) and tied scores share the average of the
    ranks they span; this equals counting pairs with a tie worth 1/2.

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes; both must occur.
    y_score : sequence of float
        Scores, higher meaning "more likely positive". No NaN.
    method : {"rank", "pairwise"}, default "rank"
        ``"rank"``: Mann-Whitney U with averaged ranks, O(n log n): positives
        and negatives are sorted apart and each positive is located among the
        negatives by binary search. ``"pairwise"``: the definition, comparing
        all P x N pairs in chunks of at most ``PAIRWISE_CHUNK`` comparisons,
        so memory stays bounded; O(P N) time. Both return the same float
        (without weights).
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        What a positive-negative pair with equal scores counts: 1/2 (the
        expected value over random orders of tied items; the definition),
        1 (an upper bound) or 0 (a lower bound).
    max_fpr : float or None, default None
        Partial AUC: the area under the ROC curve (:func:`roc_curve`) for
        false positive rates up to ``max_fpr`` (0 < max_fpr <= 1), linearly
        interpolated at ``max_fpr``, then standardised as McClish (1989)
        proposes so that a useless score gets 0.5 and a perfect one 1:

        .. math:: \frac12\Big(1 + \frac{A - m^2/2}{m - m^2/2}\Big)

        for the raw area *A* and ``max_fpr`` *m*. Equal to scikit-learn's
        ``roc_auc_score(..., max_fpr=m)``. The curve joins a tie of scores by
        a straight segment, so this needs ``ties="average"``; ``method`` does
        not apply. ``max_fpr=1`` is the whole AUC.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: a positive-negative pair counts the
        product of their weights (scikit-learn's weighted AUC, the area under
        the weighted ROC curve).

    Returns
    -------
    float
        NaN, with a :class:`~recmetrics.RecmetricsWarning`, when ``y_true``
        holds one class only (or one class has weight 0): AUC compares
        positives with negatives, so it is undefined then (the same policy as
        :func:`group_auc` and :func:`recmetrics.evaluate`).

    References
    ----------
    Hanley, J. A. & McNeil, B. J. (1982). The meaning and use of the area
    under a ROC curve. *Radiology* 143(1), 29-36. McClish, D. K. (1989).
    Analyzing a portion of the ROC curve. *Medical Decision Making* 9(3),
    190-195.

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], method="pairwise")
    0.875
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], max_fpr=0.5)   # area 0.25: (1 + 0.125 / 0.375) / 2
    0.6666666666666666
    """
    method = check_option("method", method, ("rank", "pairwise"))
    ties = check_option("ties", ties, TIES)
    max_fpr = check_max_fpr(max_fpr, ties)
    labels, scores, weights = _labels_and_scores(y_true, y_score, sample_weight)
    positive = labels.astype(bool)
    if weights is None:
        n_pos: float = int(positive.sum())
        n_neg: float = positive.size - n_pos
    else:
        n_pos, n_neg = float(weights[positive].sum()), float(weights[~positive].sum())
    if n_pos == 0 or n_neg == 0:
        only = "negatives (0)" if n_pos == 0 else "positives (1)"
        return undefined_value(f"AUC is undefined: y_true holds only {only}"
                               + ("" if weights is None else " with a weight above 0"))
    if max_fpr is not None and max_fpr < 1:
        if np.isposinf(scores).any():
            raise ValueError("y_score contains +inf; the partial AUC is read off the ROC curve, "
                             "which starts above every score, so clip infinite scores first")
        fps, tps, _ = _curve(labels, scores, weights)
        return _partial_auc(fps / fps[-1], tps / tps[-1], max_fpr)
    pos, neg = scores[positive], scores[~positive]
    if weights is not None:
        wins, wins_or_ties = _kernels.weighted_pair_counts(
            pos, weights[positive], neg, weights[~positive], pairwise=method == "pairwise")
    elif method == "pairwise":
        wins, wins_or_ties = _kernels.pair_counts_pairwise(pos, neg)
    else:
        pos.sort()
        neg.sort()
        wins, wins_or_ties = _kernels.pair_counts(pos, neg)
    return float(_kernels.auc_from_counts(wins, wins_or_ties, n_pos * n_neg, ties))


# --------------------------------------------------------------------------- group AUC


@dataclass(frozen=True, repr=False)
class GroupAUC:
    """Group AUC with its parts.

    Attributes
    ----------
    value : float
        The weighted mean AUC over groups that have both classes.
    gauc_weight : str
        The weighting used: "impressions", "clicks" or "uniform".
    n_groups : int
        Number of distinct groups.
    n_skipped : int
        Groups left out because all their labels are 0 or all are 1.
    table : pandas.DataFrame
        One row per group, in order of first appearance: ``group, n,
        positives, auc, weight`` (``auc`` is NaN and ``weight`` 0 for a
        skipped group).
    """

    value: float
    gauc_weight: str
    n_groups: int
    n_skipped: int
    table: pd.DataFrame

    def __repr__(self) -> str:
        """One line: the value, the weighting and the group counts; the table by its size only.

        Examples
        --------
        >>> group_auc_details([1, 0, 1, 1, 0], [0.9, 0.2, 0.1, 0.3, 0.6], ["a", "a", "b", "b", "b"])
        GroupAUC(value=0.4, gauc_weight='impressions', n_groups=2, n_skipped=0, table=<2 rows>)
        """
        return (f"GroupAUC(value={self.value!r}, gauc_weight={self.gauc_weight!r}, "
                f"n_groups={self.n_groups}, n_skipped={self.n_skipped}, "
                f"table=<{len(self.table)} rows>)")

    def _repr_html_(self) -> str:
        """What Jupyter shows: the value and the counts as a small table; the per-group table
        by its size only (it is ``.table``, one row per group)."""
        rows = [("GAUC", f"{self.value:.4f}"), ("gauc_weight", self.gauc_weight),
                ("groups", f"{self.n_groups:,}"), ("skipped (one class only)", f"{self.n_skipped:,}"),
                ("table", f"{len(self.table):,} rows: .table")]
        body = "".join(f"<tr><th style=\"text-align:left\">{html.escape(k)}</th>"
                       f"<td style=\"text-align:right\">{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<table><caption>GroupAUC</caption><tbody>{body}</tbody></table>"


def group_auc_details(y_true, y_score, groups, *, gauc_weight: GaucWeight = "impressions",
                      ties: Ties = "average") -> GroupAUC:
    r"""Group AUC (GAUC) with the per-group table; see :func:`group_auc`.

    References
    ----------
    Zhou, G. et al. (2018). Deep Interest Network for click-through rate prediction. *KDD*.

    Examples
    --------
    >>> d = group_auc_details([1, 0, 1, 1, 0], [0.9, 0.2, 0.1, 0.3, 0.6], ["a", "a", "b", "b", "b"])
    >>> d.table[["group", "n", "positives", "auc"]].values.tolist()
    [['a', 2, 1, 1.0], ['b', 3, 2, 0.0]]
    >>> d.value, d.n_skipped
    (0.4, 0)
    """
    gauc_weight = check_option("gauc_weight", gauc_weight, GAUC_WEIGHTS)
    ties = check_option("ties", ties, TIES)
    labels = as_binary("y_true", y_true)
    scores = as_numbers("y_score", y_score)
    keys = as_groups("groups", groups)
    check_same_length(y_true=labels, y_score=scores, groups=keys)
    coded = _kernels.value_offsets(keys)
    if coded is not None:        # integer keys: no hash table; the uniques pandas finds
        codes, n_codes, firsts = coded
        uniques, table_codes = keys[firsts], codes[firsts]
    else:
        codes, uniques = pd.factorize(keys)
        n_codes = len(uniques)
        table_codes = np.arange(n_codes)
    n_groups = len(uniques)
    positive = labels.astype(bool)
    counts = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_codes,
                                                 table_codes)
    if counts is None:           # more groups and distinct scores than 63 bits hold
        dense = np.zeros(n_codes, dtype=np.intp)
        dense[table_codes] = np.arange(n_groups)   # codes of first appearance, 0, 1, ...
        codes = dense[codes]
        order, _ = _kernels.rank_rows(codes, scores, n_groups)
        counts = _kernels.group_pair_counts(codes[order], scores[order], positive[order],
                                            n_groups)
        del order
    wins, wins_or_ties, pos, neg = counts
    auc = _kernels.auc_per_list(wins, wins_or_ties, pos, neg, ties)
    kept = ~np.isnan(auc)
    weights = _kernels.gauc_weights(pos, neg, gauc_weight) * kept
    if kept.any():
        value = _kernels.gauc(auc, weights)
    else:
        value = undefined_value("GAUC is undefined: every group holds only positives or only "
                           "negatives, so no group has an AUC")
    table = pd.DataFrame({"group": uniques, "n": pos + neg, "positives": pos, "auc": auc,
                          "weight": weights.astype(np.int64)})  # rows, positives or 1: whole
    return GroupAUC(value=value, gauc_weight=gauc_weight, n_groups=n_groups,
                    n_skipped=int(n_groups - kept.sum()), table=table)


def group_auc(y_true, y_score, groups, *, gauc_weight: GaucWeight = "impressions",
              ties: Ties = "average") -> float:
    r"""Group AUC (GAUC, 分组 AUC): AUC within each group (user), then a weighted mean.

    .. math:: \mathrm{GAUC} = \frac{\sum_g w_g\,\mathrm{AUC}_g}{\sum_g w_g}

    Groups whose labels are all 0 or all 1 have no AUC and are skipped (this
    is the usual policy, not a warning); :func:`group_auc_details` reports how
    many. AUC within a group uses averaged ranks, ties worth 1/2.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_score : sequence of float
    groups : sequence of hashable
        Group (user) id of each row; any order, groups need not be contiguous.
    gauc_weight : {"impressions", "clicks", "uniform"}, default "impressions"
        :math:`w_g` = rows of the group (Alibaba's GAUC, Zhou et al. 2018),
        its positives, or 1 for each group.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        As in :func:`roc_auc`.

    Returns
    -------
    float

    Returns NaN with a :class:`~recmetrics.RecmetricsWarning` if no group has
    both classes.

    References
    ----------
    Zhu, H. et al. (2017). Optimized cost per click in Taobao display
    advertising. *KDD*. Zhou, G. et al. (2018). Deep Interest Network for
    click-through rate prediction. *KDD*.

    Examples
    --------
    >>> group_auc([1, 0, 1, 1, 0], [0.9, 0.2, 0.1, 0.3, 0.6], ["a", "a", "b", "b", "b"])
    0.4
    >>> group_auc([1, 0, 1, 1, 0], [0.9, 0.2, 0.1, 0.3, 0.6], ["a", "a", "b", "b", "b"],
    ...           gauc_weight="uniform")
    0.5
    """
    return group_auc_details(y_true, y_score, groups, gauc_weight=gauc_weight, ties=ties).value
