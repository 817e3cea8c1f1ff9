r"""Metrics of one ranked list: P@k, R@k, HR@k, AP, RR, CG/DCG/NDCG, R-precision, bpref, RBP, ERR.

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
  :func:`average_precision` and :func:`ndcg`. P@k and R@k take a
  ``denominator`` too (k or R by default, or min(k, R)).
* **Judged non-relevant vs. unjudged.** Most metrics treat every item not in
  ``relevant`` as non-relevant. :func:`bpref` uses only judged items, and
  :func:`rbp` can report the weight of unjudged ones as its residual.
* **Means.** :func:`mean_over_lists` averages any of these over lists with
  one kernel call (``mean_average_precision`` and ``mean_reciprocal_rank``
  are two of its cases, kept by name).

Every option, ``k`` included, is keyword-only: ``ndcg(ranked, relevant, k=5)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels

from ._metrics import BY_FUNCTION
from ._validation import (DENOMINATORS, GAINS, IDEALS, NO_RELEVANT, PR_DENOMINATORS,
                          PRECISION_DENOMINATORS, RECALL_DENOMINATORS, Denominator, Gain, Ideal,
                          NoRelevant, PrDenominator, PrecisionDenominator, RecallDenominator,
                          RecmetricsWarning, as_grades, as_items, as_ranked, as_relevance,
                          caller_stacklevel, check_exponential_gain, check_k, check_max_grade,
                          check_option, check_rbp_p, check_same_number_of_lists, no_relevant_value)

__all__ = ["precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision",
           "reciprocal_rank", "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg",
           "ndcg", "r_precision", "bpref", "rbp", "RBP", "err", "mean_over_lists"]


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
    return _judged_lists(ranked_lists, relevant_lists, many=True).lists


@dataclass(frozen=True)
class _Judged:
    """Ranked lists, and where the judged non-relevant and the unjudged items of each sit.

    Rows are (list, 1-based position) pairs sorted by list, then position.
    ``n_nonrel`` counts each list's judged non-relevant items, retrieved or not.
    """

    lists: _kernels.RankedLists
    nonrel_lists: np.ndarray
    nonrel_pos: np.ndarray
    n_nonrel: np.ndarray
    unjudged_lists: np.ndarray
    unjudged_pos: np.ndarray
    top_grade: float


def _rows(sets: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(p) for p in sets), dtype=np.int64, count=len(sets))
    pos = np.fromiter((q for p in sets for q in p), dtype=np.int64, count=int(lengths.sum()))
    return np.repeat(np.arange(len(sets)), lengths), pos


def _judged_lists(ranked_lists, relevant_lists, *, many: bool, judged_nonrelevant=None,
                  judged=None) -> _Judged:
    """Validate lists (one, or one per user when ``many``) and lay them out for the kernels.

    ``judged_nonrelevant`` (bpref) and ``judged`` (RBP's residual) hold one
    collection of items per list, or None.
    """
    if many:
        check_same_number_of_lists(ranked_lists=ranked_lists, relevant_lists=relevant_lists)
        for name, extra in (("judged_nonrelevant", judged_nonrelevant), ("judged", judged)):
            if extra is not None:
                if isinstance(extra, (str, bytes, set, frozenset, dict)):
                    raise ValueError(f"{name} must hold one collection of items per list, got "
                                     f"{type(extra).__name__}")
                check_same_number_of_lists(ranked_lists=ranked_lists, **{name: extra})
    rows, judged_grades, nonrel_at, unjudged_at, n_nonrel = [], [], [], [], []
    top_grade = 0.0
    for i, (ranked, relevant) in enumerate(zip(ranked_lists, relevant_lists)):
        where = f"_lists[{i}]" if many else ""
        items = as_ranked(f"ranked{where}", ranked)
        grades = as_relevance(f"relevant{where}", relevant)
        rows.append(np.fromiter((grades.get(item, 0.0) for item in items), dtype=np.float64,
                                count=len(items)))
        judged_grades.append(np.fromiter(grades.values(), dtype=np.float64, count=len(grades)))
        top_grade = max(top_grade, max(grades.values(), default=0.0))
        if judged_nonrelevant is not None:
            nonrel = as_items(f"judged_nonrelevant{where}", judged_nonrelevant[i])
            both = [item for item in nonrel if grades.get(item, 0.0) > 0]
            if both:
                raise ValueError(f"item {both[0]!r} is both relevant (in relevant{where}) and "
                                 f"judged non-relevant (in judged_nonrelevant{where}); judge each "
                                 "item once")
            nonrel |= {item for item, grade in grades.items() if grade == 0}
            nonrel_at.append([p for p, item in enumerate(items, 1) if item in nonrel])
            n_nonrel.append(len(nonrel))
        if judged is not None:
            seen = as_items(f"judged{where}", judged[i]) | set(grades)
            unjudged_at.append([p for p, item in enumerate(items, 1) if item not in seen])
    nonrel_lists, nonrel_pos = _rows(nonrel_at)
    unjudged_lists, unjudged_pos = _rows(unjudged_at)
    return _Judged(_kernels.RankedLists.from_lists(rows, judged_grades), nonrel_lists, nonrel_pos,
                   np.array(n_nonrel, dtype=np.int64), unjudged_lists, unjudged_pos, top_grade)


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

#: The old spelling of ``pr_denominator`` in :func:`precision_at_k` and :func:`recall_at_k`:
#: their ``denominator`` choices, in the order of :data:`PR_DENOMINATORS` ("standard", "min_k").
_OLD_PR_DENOMINATORS = {"precision_at_k": PRECISION_DENOMINATORS,
                        "recall_at_k": RECALL_DENOMINATORS}


def _pr_denominator(name: str, pr_denominator, denominator) -> str:
    """``pr_denominator`` of P@k or R@k, from it or from ``denominator`` (its old spelling)."""
    if denominator is None:
        return check_option("pr_denominator", "standard" if pr_denominator is None
                            else pr_denominator, PR_DENOMINATORS)
    if pr_denominator is not None:
        raise ValueError(f"pass pr_denominator= only: denominator= is its old spelling in {name} "
                         f"(got both, {pr_denominator!r} and {denominator!r})")
    old = _OLD_PR_DENOMINATORS[name]
    return PR_DENOMINATORS[old.index(check_option("denominator", denominator, old))]


def _rbp_p(rbp_p, p) -> float:
    """RBP's persistence from ``rbp_p`` or from ``p`` (its old spelling), one check."""
    if p is None:
        return check_rbp_p(0.8 if rbp_p is None else rbp_p)
    if rbp_p is not None:
        raise ValueError(f"pass rbp_p= only: p= is its old spelling (got both, {rbp_p!r} and "
                         f"{p!r})")
    return check_rbp_p(p, "p")



def precision_at_k(ranked, relevant, *, k: int, pr_denominator: PrDenominator | None = None,
                   no_relevant: NoRelevant = "skip",
                   denominator: PrecisionDenominator | None = None) -> float:
    r"""Precision at k (P@k, 前 k 项精确率): share of the top k that is relevant.

    .. math:: P@k = \frac{|\{\text{relevant items in the top } k\}|}{D}

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or mapping item -> grade
        The relevant items (grade > 0).
    k : int
        Cut-off.
    pr_denominator : {"standard", "min_k"}, default "standard"
        *D*, as in :func:`recmetrics.evaluate`. ``"standard"``: ``k``; a list
        shorter than ``k`` still divides by ``k`` (trec_eval ``P_k``, the
        textbook). ``"min_k"``: min(k, relevant), so a perfect top k scores 1
        when fewer than k items are relevant (trec_eval's ``relative_P``; at
        k = R it is :func:`r_precision`).
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant: NaN with a warning, 0.0, or ValueError (the
        policy of every per-list metric and of :func:`recmetrics.evaluate`,
        which leaves such lists out of its mean).

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> precision_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, k=2)
    0.5
    >>> precision_at_k(["a", "b", "c", "d"], {"b"}, k=4)
    0.25
    >>> precision_at_k(["a", "b", "c", "d"], {"b"}, k=4, pr_denominator="min_k")
    1.0
    """
    return _one("precision_at_k", ranked, relevant, no_relevant, k=k,
                pr_denominator=pr_denominator, denominator=denominator)


def recall_at_k(ranked, relevant, *, k: int, pr_denominator: PrDenominator | None = None,
                no_relevant: NoRelevant = "skip",
                denominator: RecallDenominator | None = None) -> float:
    r"""Recall at k (R@k, 前 k 项召回率): share of the relevant items found in the top k.

    .. math:: R@k = \frac{|\{\text{relevant items in the top } k\}|}{D}

    Parameters
    ----------
    pr_denominator : {"standard", "min_k"}, default "standard"
        *D*, as in :func:`recmetrics.evaluate`. ``"standard"``: all relevant
        items, R (trec_eval ``recall_k``). ``"min_k"``: min(k, R), so that
        finding k of more than k relevant items scores 1 (the "R-capped"
        recall of RecTools and RecPack).
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant: NaN with a warning, 0.0, or ValueError.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> recall_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, k=2)
    0.3333333333333333
    >>> recall_at_k(["a", "b", "c", "d"], {"a", "b", "x"}, k=2, pr_denominator="min_k")
    1.0
    """
    return _one("recall_at_k", ranked, relevant, no_relevant, k=k,
                pr_denominator=pr_denominator, denominator=denominator)


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


# --------------------------------------------------------------------------- R-prec, bpref


def r_precision(ranked, relevant, *, no_relevant: NoRelevant = "skip") -> float:
    r"""R-precision (R-Prec, R 精确率): precision at R, the number of relevant items.

    .. math:: \mathrm{RPrec} = \frac{|\{\text{relevant items in the top } R\}|}{R}, \qquad
              R = |\text{relevant}|

    A perfect ranking scores 1 whatever R is, and at rank R precision equals
    recall. A list shorter than R counts the missing places as misses
    (trec_eval ``Rprec``).

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or mapping item -> grade
        The relevant items (grade > 0).
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant (R = 0): NaN with a warning, 0.0, or ValueError.

    References
    ----------
    Buckley, C. & Voorhees, E. M. (2000). Evaluating evaluation measure stability. *SIGIR*.
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> r_precision(["a", "b", "c", "d"], {"a", "c", "x"})   # R = 3: a and c in the top 3
    0.6666666666666666
    """
    return _one("r_precision", ranked, relevant, no_relevant)


def bpref(ranked, relevant, judged_nonrelevant=(), *, no_relevant: NoRelevant = "skip") -> float:
    r"""bpref (binary preference): how rarely judged non-relevant items outrank relevant ones.

    .. math::

        \mathrm{bpref} = \frac{1}{R}\sum_{r} \left(1 - \frac{\min(n_r, R)}{\min(N, R)}\right)

    summed over the relevant items *r* in the list, where :math:`n_r` is the
    number of **judged** non-relevant items ranked above *r*, *R* the number of
    relevant items and *N* the number of judged non-relevant items (in the
    list or not). A term with :math:`n_r = 0` is 1, which also covers N = 0.
    Items that were not judged are ignored, wherever they are: that is the
    point of bpref, which stays stable when judgements are incomplete.

    This is trec_eval's ``bpref`` (``m_bpref.c``). The formula printed in
    Buckley & Voorhees (2004) counts the non-relevant items above *r* among
    the first R judged non-relevant ones retrieved (the cap
    :math:`\min(n_r, R)`) but divides by R; trec_eval divides by
    :math:`\min(N, R)`, so the two differ only when fewer than R items are
    judged non-relevant.

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or mapping item -> grade
        Judged items: grade > 0 is relevant; a grade of 0 in a mapping marks
        a judged non-relevant item.
    judged_nonrelevant : collection of items, default ()
        More judged non-relevant items (an item may not be relevant too).
        The judged non-relevant items are these and the grade-0 entries of
        ``relevant``. In a TREC qrels file (:func:`recmetrics.read_trec_qrels`)
        they are the rows with grade 0; trec_eval reads a negative grade as
        "pooled but not judged", so leave those out.
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant (R = 0): NaN with a warning, 0.0, or ValueError.

    References
    ----------
    Buckley, C. & Voorhees, E. M. (2004). Retrieval evaluation with incomplete information.
    *SIGIR*, 25-32.

    Examples
    --------
    >>> # judged: a, c relevant; b, d, e non-relevant; u unjudged (ignored)
    >>> bpref(["u", "a", "b", "c", "d"], {"a": 1, "c": 1, "b": 0, "d": 0, "e": 0})
    0.75
    >>> bpref(["u", "a", "b", "c", "d"], {"a", "c"}, {"b", "d", "e"})   # the same judgements
    0.75
    """
    return _one("bpref", ranked, relevant, no_relevant, judged_nonrelevant=judged_nonrelevant)


# --------------------------------------------------------------------------- RBP, ERR


@dataclass(frozen=True)
class RBP:
    """Rank-biased precision and its residual.

    Attributes
    ----------
    value : float
        The RBP of the judged items, a lower bound of the true RBP.
    residual : float
        How much RBP could still grow: the weight of the places below the list
        and of the unjudged places in it. The true RBP lies in
        ``[value, value + residual]``.
    """

    value: float
    residual: float


def rbp(ranked, relevant, *, rbp_p: float | None = None, judged=None,
        no_relevant: NoRelevant = "skip", p: float | None = None) -> RBP:
    r"""Rank-biased precision (RBP, 秩偏精确率) with its residual (Moffat & Zobel 2008).

    A user reads the first item and then goes on to the next one with
    probability *p*; RBP is the expected relevance per item read:

    .. math:: \mathrm{RBP} = (1 - p)\sum_{i=1}^{d} r_i\,p^{\,i-1}, \qquad
              \text{residual} = p^{\,d} + (1 - p)\sum_{i \le d,\ i \text{ unjudged}} p^{\,i-1}

    for a list of depth *d* with relevance :math:`r_i \in [0, 1]`. RBP is not
    divided by anything that depends on the judgements, so it needs no ideal
    ranking; the expected number of items read is :math:`1/(1 - p)` (5 at
    p = 0.8). The residual is the most that items not seen could add: the
    places below the list (:math:`p^d`) and, when ``judged`` is given, the
    unjudged places in it.

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or mapping item -> grade
        A set: relevance 1 each. A mapping: graded relevance in [0, 1]
        (divide graded judgements by the top grade first). Items not
        mentioned have relevance 0.
    rbp_p : float, default 0.8
        Persistence *p*, strictly between 0 and 1 (Moffat & Zobel use 0.5, 0.8
        and 0.95); the name of the option in :func:`recmetrics.evaluate` too.
    judged : collection of items or None, default None
        The judged items. None: every item in ``ranked`` counts as judged (an
        item not in ``relevant`` is non-relevant), so the residual is
        :math:`p^d`. Given: the ranked items that are neither in ``judged``
        nor in ``relevant`` are unjudged; they add 0 to the value and their
        weight to the residual.
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant RBP is 0 by its formula, but recmetrics
        treats every per-list metric alike (as :func:`recmetrics.evaluate`
        does): NaN value with a warning, 0.0, or ValueError. The residual is
        reported in every case.
    p : float, optional
        The old spelling of ``rbp_p``, still accepted (not with ``rbp_p``).

    Returns
    -------
    RBP
        ``value`` and ``residual``.

    References
    ----------
    Moffat, A. & Zobel, J. (2008). Rank-biased precision for measurement of retrieval
    effectiveness. *ACM TOIS* 27(1), 2:1-2:27.

    Examples
    --------
    >>> result = rbp(["a", "b", "c"], {"a", "c"}, rbp_p=0.5)   # 0.5 * (1 + 0.25)
    >>> result.value, result.residual
    (0.625, 0.125)
    >>> rbp(["a", "b", "c"], {"a", "c"}, rbp_p=0.5, judged={"a", "c"}).residual   # + 0.5 * 0.5 for b
    0.375
    """
    return _one("rbp", ranked, relevant, no_relevant, rbp_p=rbp_p, p=p, judged=judged)


def err(ranked, relevant, *, k: int | None = None, max_grade: float | None = None,
        no_relevant: NoRelevant = "skip") -> float:
    r"""Expected reciprocal rank (ERR, 期望倒数排名; Chapelle et al. 2009).

    A cascade user reads down the list and stops at item *i* satisfied with
    probability :math:`R_i`; ERR is the expected value of 1 / (the rank where
    the user stops):

    .. math:: \mathrm{ERR@k} = \sum_{r=1}^{k} \frac{1}{r}\,R_r \prod_{i<r} (1 - R_i), \qquad
              R_i = \frac{2^{g_i} - 1}{2^{g_{max}}}

    Unlike RR it rewards several good items near the top and, unlike NDCG, a
    good item counts less when an excellent one comes before it.

    Parameters
    ----------
    ranked : sequence
        Distinct item ids, best first.
    relevant : set or mapping item -> grade
        Grades >= 0; a set gives each of its items grade 1.
    k : int or None, default None
        Cut-off; None uses the whole list.
    max_grade : float or None, default None
        :math:`g_{max}`, the top grade of the judging scale (4 on a 0-4
        scale; at most 1023). None uses the largest judged grade given (of
        this list here; of all lists in :func:`mean_over_lists`). **This
        changes the number**: with binary relevance and None, a relevant item
        has :math:`R = 1/2`; pass the scale's top grade so that lists judged
        on one scale are comparable.
    no_relevant : {"skip", "zero", "error"}, default "skip"
        When nothing is relevant: NaN with a warning, 0.0, or ValueError.

    References
    ----------
    Chapelle, O., Metzler, D., Zhang, Y. & Grinspan, P. (2009). Expected reciprocal rank for
    graded relevance. *CIKM*, 621-630.

    Examples
    --------
    >>> err(["a", "b", "c"], {"a": 1, "c": 2}, max_grade=2)   # 1/4 + (3/4)(3/4)/3
    0.4375
    """
    return _one("err", ranked, relevant, no_relevant, k=k, max_grade=max_grade)


# --------------------------------------------------------------------------- means


def _options(name: str, options: dict) -> dict:
    """The options of metric ``name`` checked, under their public names (P@k's and R@k's old
    ``denominator`` resolved into ``pr_denominator``, RBP's old ``p`` into ``rbp_p``)."""
    o = dict(options)
    if "k" in o:
        o["k"] = check_k(o["k"], allow_none=name not in ("precision_at_k", "recall_at_k",
                                                       "hit_rate_at_k"))
    if name in _OLD_PR_DENOMINATORS:
        o["pr_denominator"] = _pr_denominator(name, o.pop("pr_denominator", None),
                                              o.pop("denominator", None))
    elif "denominator" in o:
        o["denominator"] = check_option("denominator", o["denominator"], DENOMINATORS)
    if "gain" in o:
        o["gain"] = check_option("gain", o["gain"], GAINS)
    if "ideal" in o:
        o["ideal"] = check_option("ideal", o["ideal"], IDEALS)
    if "rbp_p" in o or "p" in o:
        o["rbp_p"] = _rbp_p(o.pop("rbp_p", None), o.pop("p", None))
    return o


@dataclass(frozen=True)
class _Conventions:
    """The conventions the registry's kernels read (:class:`recmetrics._metrics.KernelOptions`),
    at their defaults unless a function's options say otherwise."""

    gain: str = "exponential"
    ideal: str = "truth"
    denominator: str = "relevant"
    pr_denominator: str = "standard"
    rbp_p: float = 0.8

    @classmethod
    def of(cls, o: dict) -> _Conventions:
        return cls(**{f: o[f] for f in ("gain", "ideal", "denominator", "pr_denominator", "rbp_p")
                      if f in o})


class _Input:
    """What the registry's kernels read from judged single lists
    (:class:`recmetrics._metrics.RankedInput`); lists of distinct items have no ties."""

    layout_ties = False

    def __init__(self, data: _Judged, top: float) -> None:
        self.data, self.top = data, top

    @property
    def ranked(self) -> _kernels.RankedLists:
        return self.data.lists

    def bpref(self) -> np.ndarray:
        data = self.data
        layout = data.lists.layout
        return _kernels.bpref(layout.lists, layout.pos, data.nonrel_lists, data.nonrel_pos,
                              data.lists.n_relevant, data.n_nonrel)

    def top_grade(self) -> np.ndarray:
        return np.full(self.data.lists.n_relevant.size, self.top)


def _values(name: str, data: _Judged, o: dict) -> np.ndarray:
    """Per-list values of the metric of function ``name`` from the registry's kernel."""
    top = data.top_grade
    if "max_grade" in o:
        max_grade = check_max_grade(o["max_grade"], data.top_grade)
        top = data.top_grade if max_grade is None else max_grade
    return BY_FUNCTION[name].values(_Input(data, top), o.get("k"), _Conventions.of(o))


def _check_rbp_grades(top_grade: float, name: str) -> None:
    if top_grade > 1:
        raise ValueError(f"{name} holds grade {top_grade:g}, but RBP takes relevance in [0, 1]; "
                         "divide the grades by the top grade of the scale first")


def _one(name: str, ranked, relevant, no_relevant, **options):
    """Metric ``name`` of one list through the kernels, under the ``no_relevant`` policy."""
    no_relevant = check_option("no_relevant", no_relevant, NO_RELEVANT)
    o = _options(name, options)
    extra = {key: o.pop(key) for key in ("judged_nonrelevant", "judged") if key in o}
    if name == "bpref" and extra["judged_nonrelevant"] is None:
        extra["judged_nonrelevant"] = ()
    extra = {key: [value] for key, value in extra.items() if value is not None}
    data = _judged_lists([ranked], [relevant], many=False, **extra)
    what = BY_FUNCTION[name].what
    if name == "rbp":
        _check_rbp_grades(data.top_grade, "relevant")
        residual = float(_kernels.rbp_residual(data.lists.n_rows, o["rbp_p"], data.unjudged_lists,
                                               data.unjudged_pos)[0])
        return RBP(_single(data.lists, data.lists.rbp(o["rbp_p"]), no_relevant, what), residual)
    return _single(data.lists, _values(name, data, o), no_relevant, what)


def mean_over_lists(metric, ranked_lists, relevant_lists, **options):
    r"""Any per-list metric of this module averaged over lists (users, queries).

    .. math:: \overline{M} = \frac{1}{|U|}\sum_{u \in U} M(\text{ranked}_u, \text{relevant}_u)

    ``mean_over_lists(rm.r_precision, ranked_lists, relevant_lists)`` is the
    mean of ``rm.r_precision(ranked_lists[u], relevant_lists[u])`` over *u*,
    computed by one vectorised kernel call for all the lists (the kernels of
    :func:`recmetrics.evaluate`), not list by list.

    Parameters
    ----------
    metric : function or str
        One of :func:`precision_at_k`, :func:`recall_at_k`,
        :func:`hit_rate_at_k`, :func:`average_precision`,
        :func:`reciprocal_rank`, :func:`ndcg`, :func:`r_precision`,
        :func:`bpref`, :func:`rbp`, :func:`err`, or its name.
    ranked_lists : sequence of sequences
        One ranked list per user.
    relevant_lists : sequence of sets or mappings
        One judgement per user, in the same order.
    **options
        The metric's own keyword options, under the same names and with the
        same defaults (``k=``, ``denominator=``, ``gain=``, ``p=``...), and
        ``no_relevant=`` (default ``"skip"``: lists with nothing relevant are
        left out of the mean, with one warning saying how many, as in
        :func:`recmetrics.evaluate`). The per-list arguments of
        :func:`bpref` (``judged_nonrelevant``) and :func:`rbp` (``judged``)
        are given as sequences with one collection per list.

    Returns
    -------
    float, or RBP for :func:`rbp`
        For RBP, the mean value and the mean residual over the same lists.

    Examples
    --------
    >>> import recmetrics as rm
    >>> mean_over_lists(rm.r_precision, [["a", "b"], ["c", "d"]], [{"a"}, {"d", "x"}])
    0.75
    >>> mean_over_lists("precision_at_k", [["a", "b"], ["c", "d"]], [{"a"}, {"d"}], k=2)
    0.5
    """
    import inspect

    name = getattr(metric, "__name__", metric)
    if not isinstance(name, str) or name not in BY_FUNCTION:
        known = ", ".join(BY_FUNCTION)
        raise ValueError(f"metric={metric!r} has no mean here; pass one of the functions (or "
                         f"names) {known}")
    signature = inspect.signature(globals()[name])
    allowed = [p.name for p in signature.parameters.values() if p.kind == p.KEYWORD_ONLY]
    allowed += [p for p in ("judged_nonrelevant",) if p in signature.parameters]
    for key in options:
        if key not in allowed:
            raise ValueError(f"{key}= is not an option of {name}; its options are "
                             f"{', '.join(a + '=' for a in allowed)}")
    required = [p.name for p in signature.parameters.values()
                if p.kind == p.KEYWORD_ONLY and p.default is p.empty and p.name not in options]
    if required:
        raise ValueError(f"{name} needs {', '.join(r + '=' for r in required)}; pass it, e.g. "
                         f"{required[0]}=10")
    full = {p.name: p.default for p in signature.parameters.values()
            if p.kind == p.KEYWORD_ONLY and p.default is not p.empty}
    if "judged_nonrelevant" in allowed:
        full["judged_nonrelevant"] = None
    full.update(options)
    no_relevant = check_option("no_relevant", full.pop("no_relevant"), NO_RELEVANT)
    o = _options(name, full)
    extra = {key: o.pop(key) for key in ("judged_nonrelevant", "judged") if key in o}
    if name == "bpref" and extra["judged_nonrelevant"] is None:
        extra["judged_nonrelevant"] = [()] * len(ranked_lists)
    extra = {key: value for key, value in extra.items() if value is not None}
    data = _judged_lists(ranked_lists, relevant_lists, many=True, **extra)
    what = BY_FUNCTION[name].what
    if name == "rbp":
        _check_rbp_grades(data.top_grade, "relevant_lists")
        residual = _kernels.rbp_residual(data.lists.n_rows, o["rbp_p"], data.unjudged_lists,
                                         data.unjudged_pos)
        value = _mean(data.lists, data.lists.rbp(o["rbp_p"]), no_relevant, what)
        kept = data.lists.has_relevant if no_relevant == "skip" else np.ones(residual.size, bool)
        return RBP(value, float(residual[kept].mean()) if kept.any() else float("nan"))
    return _mean(data.lists, _values(name, data, o), no_relevant, what)
