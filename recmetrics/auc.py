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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validation import (as_binary, as_groups, as_numbers, check_both_classes, check_option,
                          check_same_length)

__all__ = ["roc_curve", "roc_auc", "group_auc", "group_auc_details", "GroupAUC"]

TIES = ("average", "optimistic", "pessimistic")
GAUC_WEIGHTS = ("impressions", "clicks", "uniform")

#: Largest number of positive-negative comparisons held in memory at once by
#: ``roc_auc(method="pairwise")`` (4 Mi booleans, about 4 MiB).
PAIRWISE_CHUNK = 1 << 22


def _labels_and_scores(y_true, y_score) -> tuple[np.ndarray, np.ndarray]:
    labels = as_binary("y_true", y_true)
    scores = as_numbers("y_score", y_score)
    check_same_length(y_true=labels, y_score=scores)
    return labels, scores


# --------------------------------------------------------------------------- kernels


def _pair_counts_by_group(keys: np.ndarray, positive: np.ndarray, pos_per_group: np.ndarray,
                          neg_per_group: np.ndarray, *, keys_sorted: bool = False
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the positive-negative pairs won and won-or-tied, as exact int64.

    ``keys`` must order rows by group first and score second, and be equal
    exactly for rows of one group with one score (a tie). Binary searches of
    each distinct positive key in the sorted negatives give ``lo = #neg
    below`` and ``hi = #neg below or tied`` (counted from the start of all
    negatives); summed over a group's positives, less the negatives of earlier
    groups, they are its wins W and W + T. With averaged ranks, the rank sum of
    the positives less P(P+1)/2 is U = W + T/2 (Mann-Whitney). Callers whose
    rows are already in ascending key order pass ``keys_sorted=True``.
    """
    pos_keys = keys[positive]
    neg_keys = keys[~positive]
    if not keys_sorted:
        pos_keys.sort()
        neg_keys.sort()
    # Runs of equal positive keys: one pair of binary searches per run.
    new_run = np.empty(pos_keys.size, dtype=bool)
    new_run[:1] = True
    np.not_equal(pos_keys[1:], pos_keys[:-1], out=new_run[1:])
    run_start = np.flatnonzero(new_run)
    run_length = np.diff(np.append(run_start, pos_keys.size))
    run_keys = pos_keys[run_start]
    # Runs never straddle two groups, so each group's positives are whole runs.
    pos_end = np.cumsum(pos_per_group)
    first_run = np.searchsorted(run_start, pos_end - pos_per_group)
    end_run = np.searchsorted(run_start, pos_end)
    offset = pos_per_group * (np.cumsum(neg_per_group) - neg_per_group)
    counts = []
    for side in ("left", "right"):
        running = np.zeros(run_start.size + 1, dtype=np.int64)
        np.cumsum(run_length * np.searchsorted(neg_keys, run_keys, side=side), out=running[1:])
        counts.append(running[end_run] - running[first_run] - offset)
    return counts[0], counts[1]


def _auc_from_counts(wins, wins_or_ties, pairs, ties: str):
    """AUC under a tie policy: a tied pair counts 1/2, 1 or 0."""
    if ties == "average":
        return (wins + wins_or_ties) / (2 * pairs)
    return (wins_or_ties if ties == "optimistic" else wins) / pairs


def _pair_counts_pairwise(pos_scores: np.ndarray, neg_scores: np.ndarray) -> tuple[int, int]:
    """Wins and wins-or-ties by comparing every positive with every negative, in chunks."""
    step = max(1, PAIRWISE_CHUNK // neg_scores.size)
    wins = ties = 0
    for start in range(0, pos_scores.size, step):
        block = pos_scores[start:start + step, None]
        wins += int(np.count_nonzero(block > neg_scores))
        ties += int(np.count_nonzero(block == neg_scores))
    return wins, wins + ties


# --------------------------------------------------------------------------- ROC curve


def roc_curve(y_true, y_score) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        Actual classes; both must occur.
    y_score : sequence of float
        Scores, higher meaning "more likely positive". No NaN.

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
    labels, scores = _labels_and_scores(y_true, y_score)
    n_pos, n_neg = check_both_classes("y_true", labels)
    if np.isposinf(scores).any():
        raise ValueError("y_score contains +inf; the ROC curve starts at a threshold above every "
                         "score, so clip or rescale infinite scores first")
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    tps = np.cumsum(labels[order], dtype=np.int64)
    last_of_threshold = np.r_[np.flatnonzero(np.diff(sorted_scores)), scores.size - 1]
    tps = np.r_[0, tps[last_of_threshold]]
    fps = np.r_[0, last_of_threshold + 1] - tps
    thresholds = np.r_[np.inf, sorted_scores[last_of_threshold]]
    return fps / n_neg, tps / n_pos, thresholds


# --------------------------------------------------------------------------- AUC


def roc_auc(y_true, y_score, *, method: str = "rank", ties: str = "average") -> float:
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
        so memory stays bounded; O(P N) time. Both return the same float.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        What a positive-negative pair with equal scores counts: 1/2 (the
        expected value over random orders of tied items; the definition),
        1 (an upper bound) or 0 (a lower bound).

    Returns
    -------
    float

    References
    ----------
    Hanley, J. A. & McNeil, B. J. (1982). The meaning and use of the area
    under a ROC curve. *Radiology* 143(1), 29-36.

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], method="pairwise")
    0.875
    """
    method = check_option("method", method, ("rank", "pairwise"))
    ties = check_option("ties", ties, TIES)
    labels, scores = _labels_and_scores(y_true, y_score)
    n_pos, n_neg = check_both_classes("y_true", labels)
    positive = labels.astype(bool)
    if method == "pairwise":
        wins, wins_or_ties = _pair_counts_pairwise(scores[positive], scores[~positive])
    else:
        wins, wins_or_ties = (int(c[0]) for c in _pair_counts_by_group(
            scores, positive, np.array([n_pos]), np.array([n_neg])))
    return float(_auc_from_counts(wins, wins_or_ties, n_pos * n_neg, ties))


# --------------------------------------------------------------------------- group AUC


@dataclass(frozen=True)
class GroupAUC:
    """Group AUC with its parts.

    Attributes
    ----------
    value : float
        The weighted mean AUC over groups that have both classes.
    weight : str
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
    weight: str
    n_groups: int
    n_skipped: int
    table: pd.DataFrame


def group_auc_details(y_true, y_score, groups, *, weight: str = "impressions",
                      ties: str = "average") -> GroupAUC:
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
    weight = check_option("weight", weight, GAUC_WEIGHTS)
    ties = check_option("ties", ties, TIES)
    labels = as_binary("y_true", y_true)
    scores = as_numbers("y_score", y_score)
    keys = as_groups("groups", groups)
    check_same_length(y_true=labels, y_score=scores, groups=keys)
    codes, uniques = pd.factorize(keys)
    n_groups = len(uniques)
    # group code and label in one integer: one count and one gather instead of two
    code_label = codes.astype(np.int32 if 2 * n_groups < 2**31 else np.int64) * 2 + labels
    del codes
    per_group = np.bincount(code_label, minlength=2 * n_groups).reshape(n_groups, 2)
    neg_per_group, pos_per_group = per_group[:, 0], per_group[:, 1]
    n_per_group = neg_per_group + pos_per_group
    kept = (pos_per_group > 0) & (neg_per_group > 0)
    if not kept.any():
        raise ValueError("groups: every group holds only positives or only negatives, so no "
                         "group has an AUC; GAUC needs at least one group with both classes")

    # Sort key: group first, then score. One argsort by score turns scores into
    # dense integer ranks (equal scores share one), so (group, rank) fits one
    # int64 and ties stay exact whether scores repeat or not.
    order = np.argsort(scores)
    sorted_scores = scores[order]
    dense_rank = np.empty(scores.size, dtype=np.int64)
    dense_rank[:1] = 0
    np.not_equal(sorted_scores[1:], sorted_scores[:-1], out=dense_rank[1:])
    np.cumsum(dense_rank, out=dense_rank)
    del sorted_scores
    sort_keys = code_label[order].astype(np.int64)
    del order
    positive = (sort_keys & 1).astype(bool)
    sort_keys >>= 1
    sort_keys *= int(dense_rank[-1]) + 1
    sort_keys += dense_rank
    del dense_rank
    wins, wins_or_ties = _pair_counts_by_group(sort_keys, positive, pos_per_group, neg_per_group)

    pairs = pos_per_group * neg_per_group
    auc = np.full(n_groups, np.nan)
    auc[kept] = _auc_from_counts(wins[kept], wins_or_ties[kept], pairs[kept], ties)
    weights = {"impressions": n_per_group, "clicks": pos_per_group,
               "uniform": np.ones(n_groups, dtype=np.int64)}[weight] * kept
    value = float(np.dot(weights[kept], auc[kept]) / weights[kept].sum())
    table = pd.DataFrame({"group": uniques, "n": n_per_group, "positives": pos_per_group,
                          "auc": auc, "weight": weights})
    return GroupAUC(value=value, weight=weight, n_groups=n_groups,
                    n_skipped=int(n_groups - kept.sum()), table=table)


def group_auc(y_true, y_score, groups, *, weight: str = "impressions",
              ties: str = "average") -> float:
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
    weight : {"impressions", "clicks", "uniform"}, default "impressions"
        :math:`w_g` = rows of the group (Alibaba's GAUC, Zhou et al. 2018),
        its positives, or 1 for each group.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        As in :func:`roc_auc`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If no group has both classes.

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
    ...           weight="uniform")
    0.5
    """
    return group_auc_details(y_true, y_score, groups, weight=weight, ties=ties).value
