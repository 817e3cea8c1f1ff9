r"""Metrics of one ranked list: P@k, R@k, HR@k, AP, RR, CG/DCG/NDCG.

The teaching form: ``ranked`` is a sequence of distinct item ids, best first;
``relevant`` is a set of item ids (or, for NDCG, a mapping item -> grade).

Two layers, as in scikit-learn: private kernels work on a 2-d array of
relevance by position (one row per list, padded with zeros) and return one
value per row; the public functions validate, build that array and call
them. The DataFrame evaluation reuses the same kernels.

Conventions that change the number, spelled out:

* **Short lists.** A list shorter than ``k`` counts the missing positions as
  non-relevant: precision@k still divides by ``k`` (trec_eval's ``P_k``).
* **No relevant item.** Recall, hit rate, AP, RR and NDCG are undefined for a
  list with nothing relevant. The ``zero_division`` option decides: "warn"
  (0.0 with a :class:`~recmetrics.RecmetricsWarning`), 0.0, 1.0 or nan; the
  ``mean_*`` functions leave nan lists out of the mean.
* **AP denominator**, **gain** and **ideal DCG** are options; see
  :func:`average_precision` and :func:`ndcg`.
"""
from __future__ import annotations

import numpy as np

from ._validation import (as_grades, as_ranked, as_relevance, check_k, check_option,
                          check_same_number_of_lists, check_zero_division, zero_division_value)

__all__ = ["precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision",
           "reciprocal_rank", "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg",
           "ndcg", "AP_DENOMINATORS", "GAINS", "IDEALS"]

AP_DENOMINATORS = ("relevant", "min_k", "hits")
GAINS = ("exponential", "linear")
IDEALS = ("truth", "list", "full")


# --------------------------------------------------------------------------- kernels
# Each takes ``rel``: float array (n_lists, depth), relevance by position
# (0 = not relevant), already cut to the depth that counts.


def _discounts(depth: int) -> np.ndarray:
    """1 / log2(i + 1) for positions i = 1..depth."""
    return 1.0 / np.log2(np.arange(2, depth + 2))


def _precision_kernel(rel: np.ndarray, k: int) -> np.ndarray:
    return np.count_nonzero(rel > 0, axis=1) / k


def _recall_kernel(rel: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    return np.count_nonzero(rel > 0, axis=1) / n_relevant


def _hit_kernel(rel: np.ndarray) -> np.ndarray:
    return (rel > 0).any(axis=1).astype(np.float64)


def _ap_kernel(rel: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """sum over relevant positions i of P@i, divided by ``denominator``."""
    hits = rel > 0
    precision_at_i = np.cumsum(hits, axis=1) / np.arange(1, rel.shape[1] + 1)
    total = np.where(hits, precision_at_i, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, total / denominator, 0.0)


def _rr_kernel(rel: np.ndarray) -> np.ndarray:
    hits = rel > 0
    first = np.argmax(hits, axis=1)
    return np.where(hits.any(axis=1), 1.0 / (first + 1), 0.0)


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    return np.exp2(grades) - 1.0 if gain == "exponential" else grades


def _dcg_kernel(rel: np.ndarray, gain: str) -> np.ndarray:
    return _gain(rel, gain) @ _discounts(rel.shape[1])


# --------------------------------------------------------------------------- helpers


def _relevance_by_position(ranked, relevance, k, *, name="relevant"):
    """Validated (items, grades dict, k, 1 x depth relevance row)."""
    items = as_ranked("ranked", ranked)
    grades = as_relevance(name, relevance)
    depth = len(items) if k is None else min(k, len(items))
    row = np.array([grades.get(item, 0.0) for item in items[:depth]], dtype=np.float64)
    return items, grades, row[None, :]


def _n_relevant(grades: dict) -> int:
    return sum(1 for g in grades.values() if g > 0)


def _undefined(zero_division, metric: str) -> float:
    return zero_division_value(zero_division, f"{metric} is undefined: no relevant item")


# --------------------------------------------------------------------------- P, R, HR


def precision_at_k(ranked, relevant, k: int) -> float:
    r"""Precision at k (P@k, 前 k 项精确率): share of the top k that is relevant.

    .. math:: P@k = \frac{|\{\text{relevant items in the top } k\}|}{k}

    A list shorter than ``k`` still divides by ``k`` (trec_eval ``P_k``).

    Examples
    --------
    >>> precision_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, 2)
    0.5
    """
    k = check_k(k)
    _, _, rel = _relevance_by_position(ranked, relevant, k)
    return float(_precision_kernel(rel, k)[0])


def recall_at_k(ranked, relevant, k: int, *, zero_division="warn") -> float:
    r"""Recall at k (R@k, 前 k 项召回率): share of the relevant items found in the top k.

    .. math:: R@k = \frac{|\{\text{relevant items in the top } k\}|}{|\text{relevant}|}

    Examples
    --------
    >>> recall_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, 2)
    0.3333333333333333
    """
    k = check_k(k)
    zero_division = check_zero_division(zero_division)
    _, grades, rel = _relevance_by_position(ranked, relevant, k)
    n_rel = _n_relevant(grades)
    if n_rel == 0:
        return _undefined(zero_division, "recall@k")
    return float(_recall_kernel(rel, np.array([n_rel]))[0])


def hit_rate_at_k(ranked, relevant, k: int, *, zero_division="warn") -> float:
    r"""Hit rate at k (HR@k, 命中率): 1.0 if any of the top k is relevant, else 0.0.

    Averaged over users this is the share of users with at least one hit.
    Some texts call ``hits / relevant`` "hit ratio"; that number is
    :func:`recall_at_k`.

    Examples
    --------
    >>> hit_rate_at_k(["a", "b", "c"], {"c"}, 2), hit_rate_at_k(["a", "b", "c"], {"c"}, 3)
    (0.0, 1.0)
    """
    k = check_k(k)
    zero_division = check_zero_division(zero_division)
    _, grades, rel = _relevance_by_position(ranked, relevant, k)
    if _n_relevant(grades) == 0:
        return _undefined(zero_division, "hit rate@k")
    return float(_hit_kernel(rel)[0])


# --------------------------------------------------------------------------- AP, RR


def _ap_denominator(denominator: str, n_rel: int, n_hits: int, k: int | None) -> int:
    if denominator == "relevant":
        return n_rel
    if denominator == "min_k":
        return n_rel if k is None else min(k, n_rel)
    return n_hits


def average_precision(ranked, relevant, *, k: int | None = None, denominator: str = "relevant",
                      zero_division="warn") -> float:
    r"""Average precision (AP@k, 平均精度): mean of P@i over the ranks i of the hits.

    .. math:: AP@k = \frac{1}{D}\sum_{i=1}^{k} P@i \cdot \mathrm{rel}(i)

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or sequence
        The relevant item ids.
    k : int or None, default None
        Cut-off; None uses the whole list.
    denominator : {"relevant", "min_k", "hits"}, default "relevant"
        *D*. ``"relevant"``: all relevant items, found or not (trec_eval
        ``map``/``map_cut``, ranx, the source documents). ``"min_k"``:
        min(k, relevant), so that a perfect top-k scores 1 when more than k
        items are relevant (RecBole, Microsoft Recommenders). ``"hits"``: the
        relevant items found in the top k (rewards short, precise lists; 0
        when nothing is found).
    zero_division : "warn", 0.0, 1.0 or nan
        Result when nothing is relevant.

    Examples
    --------
    >>> ranked, relevant = ["a", "b", "c", "d", "e"], {"a", "c", "x", "y"}
    >>> average_precision(ranked, relevant, k=3)   # (1/1 + 2/3) / 4
    0.41666666666666663
    >>> average_precision(ranked, relevant, k=3, denominator="min_k")   # / min(3, 4)
    0.5555555555555555
    >>> average_precision(ranked, relevant, k=3, denominator="hits")   # / 2
    0.8333333333333333
    """
    k = check_k(k, allow_none=True)
    denominator = check_option("denominator", denominator, AP_DENOMINATORS)
    zero_division = check_zero_division(zero_division)
    _, grades, rel = _relevance_by_position(ranked, relevant, k)
    n_rel = _n_relevant(grades)
    if n_rel == 0:
        return _undefined(zero_division, "average precision")
    d = _ap_denominator(denominator, n_rel, int(np.count_nonzero(rel)), k)
    return float(_ap_kernel(rel, np.array([d]))[0])


def reciprocal_rank(ranked, relevant, *, k: int | None = None, zero_division="warn") -> float:
    r"""Reciprocal rank (RR, 倒数排名): 1 / position of the first relevant item.

    .. math:: RR = \frac{1}{\mathrm{rank}_1}, \text{ or 0 if no relevant item is in the top } k

    Examples
    --------
    >>> reciprocal_rank(["movie1", "movie2", "movie3"], {"movie3"})
    0.3333333333333333
    """
    k = check_k(k, allow_none=True)
    zero_division = check_zero_division(zero_division)
    _, grades, rel = _relevance_by_position(ranked, relevant, k)
    if _n_relevant(grades) == 0:
        return _undefined(zero_division, "reciprocal rank")
    return float(_rr_kernel(rel)[0])


def _mean_over_lists(metric, ranked_lists, relevant_lists, **options) -> float:
    check_same_number_of_lists(ranked_lists=ranked_lists, relevant_lists=relevant_lists)
    values = np.array([metric(r, g, **options) for r, g in zip(ranked_lists, relevant_lists)])
    if np.isnan(values).all():
        return float("nan")
    return float(np.nanmean(values))


def mean_average_precision(ranked_lists, relevant_lists, *, k: int | None = None,
                           denominator: str = "relevant", zero_division="warn") -> float:
    r"""Mean average precision (MAP@k, 平均精度均值): AP@k averaged over users.

    .. math:: MAP@k = \frac{1}{|U|}\sum_{u \in U} AP_u@k

    Lists with no relevant item follow ``zero_division``; with
    ``zero_division=float("nan")`` they are left out of the mean.

    Examples
    --------
    >>> mean_average_precision([["a", "b"], ["c", "d"]], [{"a"}, {"d"}])
    0.75
    """
    return _mean_over_lists(average_precision, ranked_lists, relevant_lists, k=k,
                            denominator=denominator, zero_division=zero_division)


def mean_reciprocal_rank(ranked_lists, relevant_lists, *, k: int | None = None,
                         zero_division="warn") -> float:
    r"""Mean reciprocal rank (MRR, 平均倒数排名): RR averaged over users.

    .. math:: MRR = \frac{1}{|U|}\sum_{u \in U} \frac{1}{\mathrm{rank}_u}

    Examples
    --------
    >>> mean_reciprocal_rank([["a", "b", "c"], ["d", "e"]], [{"c"}, {"d"}])
    0.6666666666666666
    """
    return _mean_over_lists(reciprocal_rank, ranked_lists, relevant_lists, k=k,
                            zero_division=zero_division)


# --------------------------------------------------------------------------- CG, DCG, NDCG


def cg(gains, k: int | None = None) -> float:
    r"""Cumulative gain (CG@k, 累计增益): the sum of the top k relevance grades.

    .. math:: CG@k = \sum_{i=1}^{k} \mathrm{rel}_i

    Blind to order: any permutation of the top k gives the same CG.

    Examples
    --------
    >>> cg([3, 1, 2, 3, 2])
    11.0
    """
    k = check_k(k, allow_none=True)
    grades = as_grades("gains", gains)[:k]
    return float(grades.sum())


def dcg(gains, k: int | None = None, *, gain: str = "exponential") -> float:
    r"""Discounted cumulative gain (DCG@k, 折损累计增益).

    .. math::

        DCG@k = \sum_{i=1}^{k} \frac{g(\mathrm{rel}_i)}{\log_2(i + 1)}, \qquad
        g(r) = 2^r - 1 \;(\text{exponential}) \text{ or } r \;(\text{linear})

    Parameters
    ----------
    gains : sequence of float
        Relevance grade of each position, best position first (>= 0).
    k : int or None
        Cut-off; None uses every position.
    gain : {"exponential", "linear"}, default "exponential"
        Exponential gain (Burges et al. 2005) stresses highly relevant items;
        linear gain (Järvelin & Kekäläinen 2002, trec_eval, scikit-learn's
        ``dcg_score``) uses the grade itself. Equal for 0/1 grades.

    Examples
    --------
    >>> round(dcg([3, 1, 2, 3, 2], gain="linear"), 4)
    6.6967
    >>> round(dcg([3, 1, 2, 3, 2]), 4)
    13.3062
    """
    k = check_k(k, allow_none=True)
    gain = check_option("gain", gain, GAINS)
    grades = as_grades("gains", gains)[:k]
    return float(_dcg_kernel(grades[None, :], gain)[0])


def _ideal_grades(grades: dict, row: np.ndarray, depth: int, ideal: str) -> np.ndarray:
    if ideal == "truth":
        judged = np.sort(np.fromiter(grades.values(), dtype=np.float64, count=len(grades)))[::-1]
        return judged[:depth]
    if ideal == "list":
        return np.sort(row)[::-1]
    return np.full(depth, max(grades.values(), default=0.0))


def ndcg(ranked, relevance, *, k: int | None = None, gain: str = "exponential",
         ideal: str = "truth", zero_division="warn") -> float:
    r"""Normalised DCG (NDCG@k, 归一化折损累计增益): DCG@k divided by an ideal DCG.

    .. math:: NDCG@k = \frac{DCG@k}{IDCG@k}

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevance : mapping item -> grade, or set of items
        Judged grades (>= 0); a set gives each of its items grade 1. Items not
        mentioned have grade 0.
    k : int or None, default None
        Cut-off. None uses the whole list (and, for ``ideal="truth"``, every
        judged item).
    gain : {"exponential", "linear"}, default "exponential"
        See :func:`dcg`.
    ideal : {"truth", "list", "full"}, default "truth"
        How IDCG is built. ``"truth"``: the best possible top k from all
        judged items, found or not (trec_eval ``ndcg_cut``, scikit-learn,
        ranx; the standard). ``"list"``: the returned list's own grades
        re-sorted (ignores relevant items the system missed, so it
        overstates). ``"full"``: every one of the k positions holds the top
        grade (as if k relevant items existed; understates when fewer do).
    zero_division : "warn", 0.0, 1.0 or nan
        Result when IDCG is 0 (nothing relevant).

    References
    ----------
    Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of
    IR techniques. *ACM TOIS* 20(4). Burges, C. et al. (2005). Learning to
    rank using gradient descent. *ICML*.

    Examples
    --------
    >>> grades = {"d1": 3, "d2": 1, "d3": 2, "d4": 3, "d5": 2}
    >>> round(ndcg(["d1", "d2", "d3", "d4", "d5"], grades, gain="linear"), 4)
    0.9378
    >>> ranked, relevant = [3, 46, 9, 1, 7], {46, 9}
    >>> round(ndcg(ranked, relevant, k=5), 3), round(ndcg(ranked, relevant, k=5, ideal="full"), 3)
    (0.693, 0.384)
    """
    k = check_k(k, allow_none=True)
    gain = check_option("gain", gain, GAINS)
    ideal = check_option("ideal", ideal, IDEALS)
    zero_division = check_zero_division(zero_division)
    items, grades, row = _relevance_by_position(ranked, relevance, k, name="relevance")
    if ideal == "truth":
        depth = len(grades) if k is None else k
    else:
        depth = len(items) if k is None else k
    idcg = float(_dcg_kernel(_ideal_grades(grades, row[0], depth, ideal)[None, :], gain)[0])
    if idcg == 0.0:
        return _undefined(zero_division, "NDCG")
    return float(_dcg_kernel(row, gain)[0]) / idcg
