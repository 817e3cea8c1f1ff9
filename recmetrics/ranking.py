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
from scipy.special import gammaln
from scipy.stats import hypergeom

from ._validation import (as_grades, as_ranked, as_relevance, check_k, check_option,
                          check_same_number_of_lists, check_zero_division, zero_division_value)

__all__ = ["precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision",
           "reciprocal_rank", "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg",
           "ndcg", "AP_DENOMINATORS", "GAINS", "IDEALS"]

AP_DENOMINATORS = ("relevant", "min_k", "hits")
GAINS = ("exponential", "linear")
IDEALS = ("truth", "list", "full")


# --------------------------------------------------------------------------- kernels
# All kernels work on a flat layout: the rows of many ranked lists, sorted by
# list and then by rank, each row with its list id, its 1-based position and
# its grade, plus the tie group it belongs to (rows of one list with equal
# scores). A tie group of size t holding r relevant rows may come in any of t!
# orders; the kernels return the expected value over those orders (McSherry &
# Najork 2008). A list without ties has groups of size 1 and the formulas
# reduce to the usual ones, so the teaching functions below and
# recmetrics.frame.evaluate run the same code.


class _Layout:
    """Rows of ``n_lists`` ranked lists, sorted by list then rank, with tie groups.

    Facts about tie groups are stored once per group in compact integers; the
    per-row views (``t``, ``r``, ``j``, ``first``, ``r_before``) are gathered
    on demand, so a layout of n rows holds about 24 bytes per row.
    """

    def __init__(self, lists: np.ndarray, grades: np.ndarray, n_lists: int,
                 new_group: np.ndarray | None = None):
        n = lists.size
        index = np.int32 if n < 2**31 - 1 else np.int64
        self.lists, self.grades, self.n_lists = lists, grades, n_lists
        new_list = np.empty(n, dtype=bool)
        new_list[:1] = True
        np.not_equal(lists[1:], lists[:-1], out=new_list[1:])
        new_group = np.ones(n, dtype=bool) if new_group is None else new_group | new_list
        list_start = np.flatnonzero(new_list)
        row_list_start = list_start[np.cumsum(new_list) - 1]
        self.pos = (np.arange(1, n + 1) - row_list_start).astype(index)  # 1-based position
        group_start = np.flatnonzero(new_group)
        self._row_group = (np.cumsum(new_group, dtype=np.int64) - 1).astype(index)
        rel_cum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(grades > 0, out=rel_cum[1:])
        size = np.diff(np.append(group_start, n))
        self._size = size.astype(index)
        self._rel = (rel_cum[group_start + size] - rel_cum[group_start]).astype(index)
        self._rel_before = (rel_cum[group_start] - rel_cum[row_list_start[group_start]]).astype(index)
        self._first = self.pos[group_start]  # position where each group starts
        self._group_start = group_start.astype(index)
        self.group_gain_mean = {}  # cache per gain
        self._first_hit = None

    # per-row views of the row's tie group
    t = property(lambda self: self._size[self._row_group].astype(np.float64),
                 doc="size of the row's tie group")
    r = property(lambda self: self._rel[self._row_group].astype(np.float64),
                 doc="relevant rows in the row's tie group")
    r_before = property(lambda self: self._rel_before[self._row_group].astype(np.float64),
                        doc="relevant rows of the same list ahead of the row's group")
    first = property(lambda self: self._first[self._row_group],
                     doc="position where the row's group starts")
    j = property(lambda self: self.pos - self.first + 1, doc="place of the row inside its group")

    def expected_relevance(self) -> np.ndarray:
        """P(the row's position holds a relevant item) = r / t."""
        return self.r / self.t

    def expected_gain(self, gain: str) -> np.ndarray:
        """Mean gain of the row's tie group: the expected gain at its position."""
        if gain not in self.group_gain_mean:
            g = _gain(self.grades, gain)
            sums = np.add.reduceat(g, self._group_start) if g.size else g
            self.group_gain_mean[gain] = (sums / self._size)[self._row_group] \
                if self._size.size < g.size else sums  # all groups single: the gains themselves
        return self.group_gain_mean[gain]

    def first_hit(self) -> np.ndarray:
        """P(the first relevant item of the list is at the row's position).

        Non-zero only in the list's first tie group that holds a relevant row:
        P(J = j) = C(t - j, r - 1) / C(t, r) for the j-th place of that group.
        """
        if self._first_hit is None:
            t, r, j = self.t, self.r, self.j
            rows = np.flatnonzero((r > 0) & (self.r_before == 0) & (t - j + 1 >= r))
            t, r, j = t[rows], r[rows], j[rows].astype(np.float64)
            log_p = (gammaln(t - j + 1) - gammaln(t - j - r + 2) - gammaln(r) + gammaln(r + 1)
                     + gammaln(t - r + 1) - gammaln(t + 1))
            self._first_hit = np.zeros(self.pos.size)
            self._first_hit[rows] = np.exp(log_p)
        return self._first_hit

    def ap_terms(self) -> np.ndarray:
        """Expected P@i * rel(i) at the row's position i.

        Given that place j of a group (t rows, r relevant, r_before relevant
        rows ahead of it) is relevant, the j - 1 places before it hold
        (j - 1)(r - 1)/(t - 1) relevant rows on average.
        """
        t, r = self.t, self.r
        within = np.where(t > 1, (self.j - 1) * (r - 1) / np.maximum(t - 1, 1), 0.0)
        within += self.r_before + 1
        within *= r / t
        return within / self.pos

    def top(self, k: int | None) -> np.ndarray:
        return np.ones(self.pos.size, dtype=bool) if k is None else self.pos <= k

    def per_list(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.bincount(self.lists[rows], weights=values[rows], minlength=self.n_lists)

    def straddling(self, k: int) -> np.ndarray:
        """Rows of a tie group that begins within the top k and ends below it."""
        first = self.first
        return (first <= k) & (first + self._size[self._row_group] - 1 > k)


def _discount(pos: np.ndarray) -> np.ndarray:
    """1 / log2(i + 1) for 1-based positions i."""
    return 1.0 / np.log2(pos + 1.0)


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    return np.exp2(grades) - 1.0 if gain == "exponential" else grades


def _hits_kernel(layout: _Layout, k: int | None) -> np.ndarray:
    """Expected number of relevant items in the top k of each list."""
    return layout.per_list(layout.expected_relevance(), layout.top(k))


def _hit_rate_kernel(layout: _Layout, k: int | None) -> np.ndarray:
    return layout.per_list(layout.first_hit(), layout.top(k))


def _rr_kernel(layout: _Layout, k: int | None) -> np.ndarray:
    return layout.per_list(layout.first_hit() / np.maximum(layout.pos, 1), layout.top(k))


def _dcg_kernel(layout: _Layout, k: int | None, gain: str) -> np.ndarray:
    return layout.per_list(layout.expected_gain(gain) * _discount(layout.pos), layout.top(k))


def _ideal_dcg_kernel(grades_desc: np.ndarray, lists: np.ndarray, n_lists: int, k: int | None,
                      gain: str) -> np.ndarray:
    """DCG of each list's ideal grades (given sorted by list, grade descending)."""
    return _dcg_kernel(_Layout(lists, grades_desc, n_lists), k, gain)


def _ap_kernel(layout: _Layout, k: int | None, denominator: str, n_relevant: np.ndarray) -> np.ndarray:
    """Expected AP@k of each list; ``n_relevant`` counts all relevant items, found or not."""
    top = layout.top(k)
    if denominator != "hits" or k is None:
        total = layout.per_list(layout.ap_terms(), top)
        d = n_relevant if denominator == "relevant" or k is None else np.minimum(k, n_relevant)
        if denominator == "hits":
            d = layout.per_list(layout.expected_relevance(), top)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, total / d, 0.0)
    # "hits" with a cut-off: the number of hits is random when a tie group
    # straddles position k, so condition on how many of its relevant rows
    # (h) land in the c places above the cut.
    straddle = layout.straddling(k)
    fixed = top & ~straddle
    s_fixed = layout.per_list(layout.ap_terms(), fixed)
    h_fixed = layout.per_list(layout.expected_relevance(), fixed)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(h_fixed > 0, s_fixed / h_fixed, 0.0)
    rows = np.flatnonzero(straddle & (layout.j == 1) & (layout.r > 0))  # one row per such group
    if rows.size:
        lists = layout.lists[rows]
        t, r, a = layout.t[rows], layout.r[rows], layout.first[rows].astype(np.float64)
        c = k - a + 1
        h_before, s_before = h_fixed[lists], s_fixed[lists]
        harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, k + 1))]
        d1 = harmonic[k] - harmonic[(a - 1).astype(int)]  # sum of 1/i for i = a .. k
        expected = np.zeros(rows.size)
        for h in range(0, int(min(r.max(), c.max())) + 1):
            p_h = hypergeom.pmf(h, t, r, c)
            slope = np.where(c > 1, (h - 1) / np.maximum(c - 1, 1), 0.0)
            c_h = (h / c) * ((h_before + 1) * d1 + slope * (c - a * d1))
            denom = h_before + h
            with np.errstate(invalid="ignore", divide="ignore"):
                value = np.where(denom > 0, (s_before + c_h) / denom, 0.0)
            expected += np.where(h <= np.minimum(r, c), p_h * value, 0.0)
        result[lists] = expected
    return result


# --------------------------------------------------------------------------- helpers


def _one_list(ranked, relevance, *, name="relevant"):
    """Validated (items, grades dict, layout of the whole list, number of relevant items)."""
    items = as_ranked("ranked", ranked)
    grades = as_relevance(name, relevance)
    row = np.array([grades.get(item, 0.0) for item in items], dtype=np.float64)
    layout = _Layout(np.zeros(row.size, dtype=np.intp), row, 1)
    return items, grades, layout, sum(1 for g in grades.values() if g > 0)


# --------------------------------------------------------------------------- P, R, HR


def precision_at_k(ranked, relevant, k: int) -> float:
    r"""Precision at k (P@k, 前 k 项精确率): share of the top k that is relevant.

    .. math:: P@k = \frac{|\{\text{relevant items in the top } k\}|}{k}

    A list shorter than ``k`` still divides by ``k`` (trec_eval ``P_k``).

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> precision_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, 2)
    0.5
    """
    k = check_k(k)
    layout = _one_list(ranked, relevant)[2]
    return float(_hits_kernel(layout, k)[0] / k)


def recall_at_k(ranked, relevant, k: int, *, zero_division="warn") -> float:
    r"""Recall at k (R@k, 前 k 项召回率): share of the relevant items found in the top k.

    .. math:: R@k = \frac{|\{\text{relevant items in the top } k\}|}{|\text{relevant}|}

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> recall_at_k(["a", "b", "c", "d"], {"b", "d", "x"}, 2)
    0.3333333333333333
    """
    k = check_k(k)
    zero_division = check_zero_division(zero_division)
    _, _, layout, n_rel = _one_list(ranked, relevant)
    if n_rel == 0:
        return zero_division_value(zero_division, "recall@k is undefined: no relevant item")
    return float(_hits_kernel(layout, k)[0] / n_rel)


def hit_rate_at_k(ranked, relevant, k: int, *, zero_division="warn") -> float:
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
    >>> hit_rate_at_k(["a", "b", "c"], {"c"}, 2), hit_rate_at_k(["a", "b", "c"], {"c"}, 3)
    (0.0, 1.0)
    """
    k = check_k(k)
    zero_division = check_zero_division(zero_division)
    _, _, layout, n_rel = _one_list(ranked, relevant)
    if n_rel == 0:
        return zero_division_value(zero_division, "hit rate@k is undefined: no relevant item")
    return float(_hit_rate_kernel(layout, k)[0])


# --------------------------------------------------------------------------- AP, RR


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
    denominator = check_option("denominator", denominator, AP_DENOMINATORS)
    zero_division = check_zero_division(zero_division)
    _, _, layout, n_rel = _one_list(ranked, relevant)
    if n_rel == 0:
        return zero_division_value(zero_division, "average precision is undefined: no relevant item")
    return float(_ap_kernel(layout, k, denominator, np.array([n_rel]))[0])


def reciprocal_rank(ranked, relevant, *, k: int | None = None, zero_division="warn") -> float:
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
    zero_division = check_zero_division(zero_division)
    _, _, layout, n_rel = _one_list(ranked, relevant)
    if n_rel == 0:
        return zero_division_value(zero_division, "reciprocal rank is undefined: no relevant item")
    return float(_rr_kernel(layout, k)[0])


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

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

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

    References
    ----------
    Voorhees, E. M. (1999). The TREC-8 question answering track report. *TREC-8*.

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
    grades = as_grades("gains", gains)
    return float(_ideal_dcg_kernel(grades, np.zeros(grades.size, dtype=np.intp), 1, k, gain)[0])


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
    items, grades, layout, _ = _one_list(ranked, relevance, name="relevance")
    depth = len(items) if k is None else k
    if ideal == "truth":
        best = np.sort(np.fromiter(grades.values(), dtype=np.float64, count=len(grades)))[::-1]
        best = best if k is None else best[:k]
    elif ideal == "list":
        best = np.sort(layout.grades[:depth])[::-1]
    else:
        best = np.full(depth, max(grades.values(), default=0.0))
    idcg = float(_ideal_dcg_kernel(best, np.zeros(best.size, dtype=np.intp), 1, None, gain)[0])
    if idcg == 0.0:
        why = ("NDCG is undefined: the list holds no relevant item, so its own ideal DCG is 0"
               if ideal == "list" and any(g > 0 for g in grades.values())
               else "NDCG is undefined: no relevant item")
        return zero_division_value(zero_division, why)
    return float(_dcg_kernel(layout, k, gain)[0]) / idcg
