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
  list with nothing relevant. The ``no_relevant`` option decides, the same
  way here, in the ``mean_*`` functions and in :func:`recmetrics.evaluate`:
  ``"skip"`` (the default) leaves such a list out of a mean (a single list
  returns NaN with a :class:`~recmetrics.RecmetricsWarning`), ``"zero"``
  counts it as 0, ``"error"`` raises ``ValueError``.
* **AP denominator**, **gain** and **ideal DCG** are options; see
  :func:`average_precision` and :func:`ndcg`.

Every option, ``k`` included, is keyword-only: ``ndcg(ranked, relevant, k=5)``.
"""
from __future__ import annotations

import numpy as np

from . import _kernels
from ._validation import (DENOMINATORS, GAINS, IDEALS, NO_RELEVANT, Denominator, Gain, Ideal,
                          NoRelevant, RecmetricsWarning, as_grades, as_ranked, as_relevance,
                          caller_stacklevel, check_exponential_gain, check_k, check_option,
                          check_same_number_of_lists, no_relevant_value)

__all__ = ["precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision",
           "reciprocal_rank", "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg",
           "ndcg"]


# --------------------------------------------------------------------------- helpers


def _grades_of(ranked, relevant, where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(grade of each ranked position, every judged grade) of one validated list."""
    items = as_ranked(f"ranked{where}", ranked)
    grades = as_relevance(f"relevant{where}", relevant)
    row = np.fromiter((grades.get(item, 0.0) for item in items), dtype=np.float64,
                      count=len(items))
    return row, np.fromiter(grades.values(), dtype=np.float64, count=len(grades))


def _one_list(ranked, relevant) -> _kernels.RankedLists:
    row, judged = _grades_of(ranked, relevant)
    return _kernels.RankedLists.from_lists([row], [judged])


def _single(lists: _kernels.RankedLists, values: np.ndarray, no_relevant: str, what: str) -> float:
    if not lists.has_relevant[0]:
        return no_relevant_value(no_relevant, f"{what} is undefined: no relevant item")
    return float(values[0])


def _many_lists(ranked_lists, relevant_lists) -> _kernels.RankedLists:
    check_same_number_of_lists(ranked_lists=ranked_lists, relevant_lists=relevant_lists)
    rows, judged = [], []
    for i, (ranked, relevant) in enumerate(zip(ranked_lists, relevant_lists)):
        row, grades = _grades_of(ranked, relevant, f"_lists[{i}]")
        rows.append(row)
        judged.append(grades)
    return _kernels.RankedLists.from_lists(rows, judged)


def _mean(lists: _kernels.RankedLists, values: np.ndarray, no_relevant: str, what: str) -> float:
    """Mean over lists under the ``no_relevant`` policy (one warning for all skipped lists)."""
    empty = ~lists.has_relevant
    if empty.any():
        if no_relevant == "error":
            first = int(np.flatnonzero(empty)[0])
            raise ValueError(f"relevant_lists[{first}] has no relevant item, so its {what} is "
                             "undefined; pass no_relevant='skip' or 'zero' to accept such lists")
        if no_relevant == "zero":
            values = np.where(empty, 0.0, values)
        else:
            import warnings

            kept = int((~empty).sum())
            warnings.warn(f"{int(empty.sum())} of {empty.size} lists have no relevant item and are "
                          f"left out of the mean {what} (pass no_relevant='zero' to count them as 0)"
                          + ("; no list is left, so the mean is NaN" if kept == 0 else ""),
                          RecmetricsWarning, stacklevel=caller_stacklevel())
            values = values[~empty]
    return float(values.mean()) if values.size else float("nan")


# --------------------------------------------------------------------------- P, R, HR


def precision_at_k(ranked, relevant, *, k: int) -> float:
    r"""Precision at k (P@k, 前 k 项精确率): share of the top k that is relevant.

    .. math:: P@k = \frac{|\{\text{relevant items in the top } k\}|}{k}

    A list shorter than ``k`` still divides by ``k`` (trec_eval ``P_k``).

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> precision_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, k=2)
    0.5
    """
    k = check_k(k)
    return float(_one_list(ranked, relevant).precision(k)[0])


def recall_at_k(ranked, relevant, *, k: int, no_relevant: NoRelevant = "skip") -> float:
    r"""Recall at k (R@k, 前 k 项召回率): share of the relevant items found in the top k.

    .. math:: R@k = \frac{|\{\text{relevant items in the top } k\}|}{|\text{relevant}|}

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> recall_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, k=2)
    0.3333333333333333
    """
    k = check_k(k)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _one_list(ranked, relevant)
    return _single(lists, lists.recall(k), no_relevant, "recall@k")


def hit_rate_at_k(ranked, relevant, *, k: int, no_relevant: NoRelevant = "skip") -> float:
    r"""Hit rate at k (HR@k, 命中率): 1.0 if any of the top k is relevant, else 0.0.

    .. math:: HR@k = \mathbb 1\big[\,|\{\text{relevant items in the top } k\}| > 0\,\big]

    Averaged over users this is the share of users with at least one hit.
    Some texts call ``hits / relevant`` "hit ratio"; that number is
    :func:`recall_at_k`.

    References
    ----------
    He, X. et al. (2017). Neural collaborative filtering. *WWW* (hit ratio with one held-out
    item).

    Examples
    --------
    >>> hit_rate_at_k(["a", "b", "c"], {"c"}, k=2), hit_rate_at_k(["a", "b", "c"], {"c"}, k=3)
    (0.0, 1.0)
    """
    k = check_k(k)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _one_list(ranked, relevant)
    return _single(lists, lists.hit_rate(k), no_relevant, "hit rate@k")


# --------------------------------------------------------------------------- AP, RR


def average_precision(ranked, relevant, *, k: int | None = None,
                      denominator: Denominator = "relevant",
                      no_relevant: NoRelevant = "skip") -> float:
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
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant: NaN with a warning, 0.0, or ValueError.

    References
    ----------
    Buckley, C. & Voorhees, E. M. (2000). Evaluating evaluation measure stability. *SIGIR*.
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

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
    denominator = check_option("denominator", denominator, DENOMINATORS)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _one_list(ranked, relevant)
    return _single(lists, lists.average_precision(k, denominator), no_relevant,
                   "average precision")


def reciprocal_rank(ranked, relevant, *, k: int | None = None,
                    no_relevant: NoRelevant = "skip") -> float:
    r"""Reciprocal rank (RR, 倒数排名): 1 / position of the first relevant item.

    .. math:: RR = \frac{1}{\mathrm{rank}_1}, \text{ or 0 if no relevant item is in the top } k

    References
    ----------
    Voorhees, E. M. (1999). The TREC-8 question answering track report. *TREC-8*.

    Examples
    --------
    >>> reciprocal_rank(["movie1", "movie2", "movie3"], {"movie3"})
    0.3333333333333333
    """
    k = check_k(k, allow_none=True)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _one_list(ranked, relevant)
    return _single(lists, lists.reciprocal_rank(k), no_relevant, "reciprocal rank")


def mean_average_precision(ranked_lists, relevant_lists, *, k: int | None = None,
                           denominator: Denominator = "relevant",
                           no_relevant: NoRelevant = "skip") -> float:
    r"""Mean average precision (MAP@k, 平均精度均值): AP@k averaged over users.

    .. math:: MAP@k = \frac{1}{|U|}\sum_{u \in U} AP_u@k

    Lists with no relevant item follow ``no_relevant``: by default they are
    left out of the mean, with one warning saying how many (as
    :func:`recmetrics.evaluate` does, which reports them as ``n_skipped``).
    All lists go through one vectorised kernel.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> mean_average_precision([["a", "b"], ["c", "d"]], [{"a"}, {"d"}])
    0.75
    """
    k = check_k(k, allow_none=True)
    denominator = check_option("denominator", denominator, DENOMINATORS)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _many_lists(ranked_lists, relevant_lists)
    return _mean(lists, lists.average_precision(k, denominator), no_relevant, "average precision")


def mean_reciprocal_rank(ranked_lists, relevant_lists, *, k: int | None = None,
                         no_relevant: NoRelevant = "skip") -> float:
    r"""Mean reciprocal rank (MRR, 平均倒数排名): RR averaged over users.

    .. math:: MRR = \frac{1}{|U|}\sum_{u \in U} \frac{1}{\mathrm{rank}_u}

    References
    ----------
    Voorhees, E. M. (1999). The TREC-8 question answering track report. *TREC-8*.

    Examples
    --------
    >>> mean_reciprocal_rank([["a", "b", "c"], ["d", "e"]], [{"c"}, {"d"}])
    0.6666666666666666
    """
    k = check_k(k, allow_none=True)
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _many_lists(ranked_lists, relevant_lists)
    return _mean(lists, lists.reciprocal_rank(k), no_relevant, "reciprocal rank")


# --------------------------------------------------------------------------- CG, DCG, NDCG


def cg(grades, *, k: int | None = None) -> float:
    r"""Cumulative gain (CG@k, 累计增益): the sum of the top k relevance grades.

    .. math:: CG@k = \sum_{i=1}^{k} \mathrm{rel}_i

    Blind to order: any permutation of the top k gives the same CG.

    References
    ----------
    Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques. *ACM
    TOIS* 20(4), 422-446.

    Examples
    --------
    >>> cg([3, 1, 2, 3, 2])
    11.0
    """
    k = check_k(k, allow_none=True)
    return float(as_grades("grades", grades)[:k].sum())


def dcg(grades, *, k: int | None = None, gain: Gain = "exponential") -> float:
    r"""Discounted cumulative gain (DCG@k, 折损累计增益).

    .. math::

        DCG@k = \sum_{i=1}^{k} \frac{g(\mathrm{rel}_i)}{\log_2(i + 1)}, \qquad
        g(r) = 2^r - 1 \;(\text{exponential}) \text{ or } r \;(\text{linear})

    Parameters
    ----------
    grades : sequence of float
        Relevance grade of each position, best position first (>= 0).
    k : int or None
        Cut-off; None uses every position.
    gain : {"exponential", "linear"}, default "exponential"
        Exponential gain (Burges et al. 2005) stresses highly relevant items;
        linear gain (Järvelin & Kekäläinen 2002, trec_eval, scikit-learn's
        ``dcg_score``) uses the grade itself. Equal for 0/1 grades.

    References
    ----------
    Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques. *ACM
    TOIS* 20(4), 422-446. Burges, C. et al. (2005). Learning to rank using gradient descent.
    *ICML*.

    Examples
    --------
    >>> round(dcg([3, 1, 2, 3, 2], gain="linear"), 4)
    6.6967
    >>> round(dcg([3, 1, 2, 3, 2]), 4)
    13.3062
    """
    k = check_k(k, allow_none=True)
    gain = check_option("gain", gain, GAINS)
    values = as_grades("grades", grades)
    check_exponential_gain("grades", values[:k], gain)
    layout = _kernels.Layout(np.zeros(values.size, dtype=np.intp), values, 1)
    return float(_kernels.dcg(layout, k, gain)[0])


def ndcg(ranked, relevant, *, k: int | None = None, gain: Gain = "exponential",
         ideal: Ideal = "truth", no_relevant: NoRelevant = "skip") -> float:
    r"""Normalised DCG (NDCG@k, 归一化折损累计增益): DCG@k divided by an ideal DCG.

    .. math:: NDCG@k = \frac{DCG@k}{IDCG@k}

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : mapping item -> grade, or set of items
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
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant: NaN with a warning, 0.0, or ValueError. (With
        ``ideal="list"``, a list that holds none of the relevant items scores
        0: its own ideal DCG is 0, but there was something to find.)

    Notes
    -----
    Grades of 1024 and more overflow :math:`2^g - 1` in float64; NDCG is then
    computed with every gain divided by :math:`2^{g_{max}}` (the list's top
    grade), which leaves the ratio unchanged.

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
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    lists = _one_list(ranked, relevant)
    return _single(lists, lists.ndcg(k, gain, ideal), no_relevant, "NDCG")
