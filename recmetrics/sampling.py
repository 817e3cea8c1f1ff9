r"""Sampled metrics (采样评估指标): what they measure, and how to correct them.

Many papers do not rank a user's held-out item against the whole catalogue of
``n_items`` items. They draw ``n_negatives`` = *m* other items at random and
rank the held-out item among those *m* + 1 only, then report HR@10 or NDCG@10
of that short list. Krichene & Rendle (KDD 2020) showed that such sampled
metrics are biased, can reverse the order of two models even in expectation,
and, as *m* shrinks, all become functions of AUC. This module computes the
distribution of the sampled rank, the expected value of a sampled metric, and
two corrections that map sampled ranks back to an estimate of the exact metric.

The setting and its conventions, shared by every function here:

* **One held-out item per user** (leave-one-out). Its **exact rank** *R* is its
  position among all ``n_items`` items, best first, **1-based**: *R* - 1 other
  items beat it. Its **sampled rank** *r* is its position among itself and the
  *m* sampled negatives, 1 ≤ *r* ≤ *m* + 1.
* **Uniform sampling without replacement** of *m* of the *n* - 1 other items.
  Then *r* - 1 counts the sampled items among the *R* - 1 that beat the
  held-out item, so

  .. math::

      P(r \mid R) = \frac{\binom{R-1}{r-1}\binom{n-R}{m-r+1}}{\binom{n-1}{m}}
      \qquad (r - 1 \sim \mathrm{Hypergeometric}(n-1,\; R-1,\; m)),

  and with replacement, or for large *n*, the **binomial approximation**
  :math:`r - 1 \sim \mathrm{Binomial}(m, (R-1)/(n-1))`. Sampling by
  popularity, or sampling that may pick the held-out item's fellow positives,
  breaks this law and every result below.
* **Metrics of one relevant item at rank R in a list of L items** (L = *n* for
  the exact metric, L = *m* + 1 for the sampled one):

  =========================  ========================================  ============
  ``metric``                 value                                     cut-off ``k``
  =========================  ========================================  ============
  ``"auc"``                  :math:`(L - R)/(L - 1)`                   not allowed
  ``"hit_rate"``             :math:`\mathbb 1[R \le k]`                required
  ``"precision"``            :math:`\mathbb 1[R \le k]/k`              required
  ``"map"``                  :math:`\mathbb 1[R \le k]/R`              optional
  ``"ndcg"``                 :math:`\mathbb 1[R \le k]/\log_2(R + 1)`  optional
  =========================  ========================================  ============

  With a single relevant item AP equals the reciprocal rank, the three AP
  denominators of :func:`recmetrics.average_precision` coincide, IDCG = 1 and
  both NDCG gains agree; ``k=None`` means no cut-off. A reported number is
  the mean of the per-user values.

Two layers as elsewhere in recmetrics: private kernels work on float arrays of
ranks, with no checks; the public functions validate, call them and aggregate.
Nothing loops over users: per-user work is vectorised and the distribution
``P(r | R)`` is computed once per distinct exact rank, in bounded chunks.

References
----------
Krichene, W. & Rendle, S. (2020). On sampled metrics for item recommendation.
*Proceedings of the 26th ACM SIGKDD Conference on Knowledge Discovery and Data
Mining (KDD '20)*, 1748-1757. https://doi.org/10.1145/3394486.3403226
"""
from __future__ import annotations

import functools
from typing import Literal, get_args

import numpy as np

from ._validation import (TIES, Ties, as_counts, as_numbers, as_ranks, check_catalogue, check_count,
                          check_gamma, check_option, check_sampled_metric, check_seed)

__all__ = ["METRICS", "DISTRIBUTIONS", "CORRECTIONS", "RANK_PRIORS", "TIES",
           "rank_of_held_out", "sample_ranks", "sampled_rank_distribution", "exact_metric",
           "expected_sampled_metric", "bv_correction", "correct_sampled_metric"]

METRICS = ("auc", "hit_rate", "precision", "map", "ndcg")
Distribution = Literal["hypergeometric", "binomial"]
Correction = Literal["bv", "rescale"]
DISTRIBUTIONS = get_args(Distribution)
CORRECTIONS = get_args(Correction)
RANK_PRIORS = ("sampled", "uniform")

#: Largest number of P(r | R) entries held in memory at once (4 Mi floats, 32 MiB).
CHUNK_ENTRIES = 1 << 22
#: numpy's Generator.hypergeometric needs fewer than 10^9 good and bad items each.
MAX_ITEMS_TO_DRAW = 10**9
#: The BV fit sums over every exact rank up to this catalogue size; beyond, over a grid
#: (``_rank_grid``): the first GRID_HEAD ranks one by one, the rest in at most GRID_BINS bins.
GRID_ALL_RANKS = 50_000
GRID_HEAD = 20_000
GRID_BINS = 20_000


# --------------------------------------------------------------------------- kernels
# Ranks arrive as float64 arrays, already checked; no function here validates.


def _log_binom(a, b):
    """log C(a, b) for real a >= b >= 0 (elementwise, via log-gamma)."""
    from scipy.special import gammaln  # here: scipy.special costs ~0.2 s to import

    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def _pmf_kernel(exact_ranks: np.ndarray, n_items: int, n_negatives: int, width: int,
                distribution: str) -> np.ndarray:
    """P(r = j + 1 | R) for j = 0 .. width - 1, one row per exact rank.

    Log-gamma differences keep the relative error of each entry near 1e-11 for
    catalogues of 10^4 items (it grows like machine epsilon x log n!).
    """
    good = exact_ranks[:, None] - 1.0          # items that beat the held-out one
    total = float(n_items - 1)                 # negatives to draw from
    m = float(n_negatives)
    j = np.arange(width, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if distribution == "hypergeometric":
            bad = total - good
            log_p = _log_binom(good, j) + _log_binom(bad, m - j) - _log_binom(total, m)
            possible = (j <= good) & (m - j <= bad)
            return np.where(possible, np.exp(np.where(possible, log_p, 0.0)), 0.0)
        from scipy.special import xlog1py, xlogy

        p = good / total
        log_p = _log_binom(m, j) + xlogy(j, p) + xlog1py(m - j, -p)
        return np.where(j <= m, np.exp(log_p), 0.0)


def _metric_kernel(ranks: np.ndarray, list_length: int, metric: str, k: int | None) -> np.ndarray:
    """Per-user value of ``metric`` for one relevant item at ``ranks`` among ``list_length``."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if metric == "auc":
        return (list_length - ranks) / (list_length - 1)
    inside = np.ones(ranks.shape, dtype=bool) if k is None else ranks <= k
    if metric == "hit_rate":
        return inside.astype(np.float64)
    if metric == "precision":
        if k is None:
            raise ValueError("metric='precision' needs a cut-off; pass k, e.g. k=10")
        return inside / k
    if metric == "map":
        return np.where(inside, 1.0 / ranks, 0.0)
    return np.where(inside, 1.0 / np.log2(ranks + 1.0), 0.0)          # ndcg


def _width(n_negatives: int, metric: str, k: int | None) -> int:
    """Sampled ranks 1 .. width can score non-zero; P(r | R) is needed only there."""
    if metric == "auc" or k is None:
        return n_negatives + 1
    return min(k, n_negatives + 1)


def _chunks(size: int, width: int):
    step = max(1, CHUNK_ENTRIES // max(width, 1))
    for start in range(0, size, step):
        yield slice(start, min(start + step, size))


def _expected_sampled_kernel(exact_ranks: np.ndarray, n_items: int, n_negatives: int, metric: str,
                             k: int | None, distribution: str) -> np.ndarray:
    """E[sampled metric | R] for each given exact rank."""
    width = _width(n_negatives, metric, k)
    values = _metric_kernel(np.arange(1, width + 1), n_negatives + 1, metric, k)
    out = np.empty(exact_ranks.size)
    for part in _chunks(exact_ranks.size, width):
        out[part] = _pmf_kernel(exact_ranks[part], n_items, n_negatives, width, distribution) @ values
    return out


def _rank_grid(n_items: int, n_negatives: int, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Exact ranks at which the BV fit evaluates P(r | R), and how many ranks each stands for.

    Up to ``GRID_ALL_RANKS`` items: every rank, each standing for itself. Beyond,
    the first ``GRID_HEAD`` ranks (and every rank up to the cut-off ``k``) and the
    last 2(m + 1) ranks stay single, and the ranks in between are grouped into at
    most ``GRID_BINS`` bins of equal width, each represented by its midpoint.
    P(r | R) changes on a scale of about n/m ranks there, far wider than a bin,
    so the sums over R change by a relative 1e-6 or less (midpoint rule).
    """
    if n_items <= GRID_ALL_RANKS:
        return np.arange(1, n_items + 1, dtype=np.float64), np.ones(n_items)
    head = max(GRID_HEAD, k or 0)
    tail_start = n_items - 2 * (n_negatives + 1)
    if head >= tail_start - GRID_BINS:
        return np.arange(1, n_items + 1, dtype=np.float64), np.ones(n_items)
    middle = tail_start - head                     # ranks head + 1 .. tail_start
    step = -(-middle // GRID_BINS)
    lower = np.arange(head + 1, tail_start + 1, step, dtype=np.float64)
    upper = np.minimum(lower + step - 1, tail_start)
    ranks = np.concatenate([np.arange(1, head + 1), (lower + upper) / 2,
                            np.arange(tail_start + 1, n_items + 1)]).astype(np.float64)
    widths = np.concatenate([np.ones(head), upper - lower + 1, np.ones(n_items - tail_start)])
    return ranks, widths


@functools.lru_cache(maxsize=2)
def _all_ranks_pmf(n_items: int, n_negatives: int) -> np.ndarray:
    """P(r | R) for every exact rank, kept for the next fit with the same n and m.

    Used only when the whole matrix fits in one chunk (at most CHUNK_ENTRIES
    entries), so the cache holds at most two 32 MiB arrays. Read-only.
    """
    pmf = _pmf_kernel(np.arange(1, n_items + 1, dtype=np.float64), n_items, n_negatives,
                      n_negatives + 1, "hypergeometric")
    pmf.setflags(write=False)
    return pmf


def _bv_kernel(n_items: int, n_negatives: int, metric: str, k: int | None, gamma: float,
               weights, sampled_share: np.ndarray | None) -> np.ndarray:
    """Corrected value of each sampled rank r = 1 .. m + 1 (Krichene & Rendle's BV).

    Solves ((1 - gamma) A'DA + gamma diag(c)) x = A'Db, accumulating A'DA,
    A'Db and c over chunks of exact ranks R = 1 .. n (on the grid of
    :func:`_rank_grid`), where A[R, r] = P(r | R), D = diag(p(R)), b[R] = M(R)
    and c = A'p. The rank weights p(R) are ``weights`` (an array over all n
    ranks, summed within each grid bin) or, when ``sampled_share`` is given,
    the sampled-rank shares h spread back over the exact ranks:
    p(R) = (m + 1)/n * sum_r h(r) P(r | R).
    """
    width = n_negatives + 1
    grid, counts = _rank_grid(n_items, n_negatives, k)
    if weights is not None:
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        weights = np.add.reduceat(np.asarray(weights, dtype=np.float64), starts)
    gram = np.zeros((width, width))
    rhs = np.zeros(width)
    mass = np.zeros(width)
    total = 0.0
    whole = grid.size == n_items and n_items * width <= CHUNK_ENTRIES
    for part in _chunks(grid.size, width):
        ranks = grid[part]
        if whole:                                  # one chunk: every rank, reusable
            pmf = _all_ranks_pmf(n_items, n_negatives)
        else:
            pmf = _pmf_kernel(ranks, n_items, n_negatives, width, "hypergeometric")
        if sampled_share is not None:
            p = (width / n_items) * (pmf @ sampled_share) * counts[part]
        else:
            p = weights[part]
        weighted = pmf * p[:, None]
        gram += weighted.T @ pmf
        rhs += weighted.T @ _metric_kernel(ranks, n_items, metric, k)
        mass += weighted.sum(axis=0)
        total += p.sum()
    system = (1.0 - gamma) * gram + gamma * np.diag(mass)
    return np.linalg.lstsq(system / total, rhs / total, rcond=None)[0]


def _rescale_kernel(sampled_ranks: np.ndarray, n_items: int, n_negatives: int, metric: str,
                    k: int | None) -> np.ndarray:
    """Exact metric at the rank estimate R^ = 1 + (r - 1)(n - 1)/m, per user."""
    estimate = 1.0 + (sampled_ranks - 1.0) * (n_items - 1) / n_negatives
    return _metric_kernel(estimate, n_items, metric, k)


# --------------------------------------------------------------------------- checks


# --------------------------------------------------------------------------- from scores


def rank_of_held_out(y_score, held_out, *, ties: Ties = "pessimistic") -> np.ndarray:
    r"""Exact rank of each user's held-out item among all items, from a score matrix.

    .. math:: R_u = 1 + \#\{i \ne h_u : s_{ui} > s_{u h_u}\}
              \;\big(+\; \#\{i \ne h_u : s_{ui} = s_{u h_u}\} \text{ if pessimistic}\big)

    Sampling negatives and ranking the held-out item among them, with the same
    tie rule, gives exactly the law of :func:`sample_ranks` applied to these
    ranks, so scores never need to be sampled item by item.

    Parameters
    ----------
    y_score : array of shape (n_users, n_items)
        Scores, higher meaning "recommend first". No NaN.
    held_out : sequence of int, length n_users
        Column (0-based item index) of each user's held-out item.
    ties : {"pessimistic", "optimistic"}, default "pessimistic"
        Whether items tied with the held-out item count as ranked above it
        (pessimistic: a constant scorer gets the worst rank, so ties earn no
        credit) or below it (optimistic). The package's third tie policy,
        ``"average"``, is refused here: it would give a fractional rank, and a
        metric of the average rank is not the average of the metric, which is
        what every function of this module needs.

    Returns
    -------
    numpy.ndarray of int64
        Ranks 1 .. n_items.

    References
    ----------
    Krichene & Rendle (2020), section 2 (the rank of the relevant item among
    all items, and among the sampled ones).

    Examples
    --------
    >>> scores = [[0.9, 0.1, 0.5, 0.5], [0.2, 0.8, 0.4, 0.6]]
    >>> rank_of_held_out(scores, [2, 3]).tolist()
    [3, 2]
    >>> rank_of_held_out(scores, [2, 3], ties="optimistic").tolist()
    [2, 2]
    """
    ties = check_option("ties", ties, TIES)
    if ties == "average":
        raise ValueError("ties='average' gives a fractional rank, and the sampled-metric functions "
                         "need whole ranks; use ties='pessimistic' (the usual choice) or "
                         "'optimistic', which bound the metric from below and above")
    scores = np.asarray(y_score)
    if scores.ndim != 2:
        raise ValueError(f"y_score must be a 2-d array (one row per user, one column per item), "
                         f"got shape {scores.shape}")
    n_users, n_items = scores.shape
    if n_users == 0 or n_items < 2:
        raise ValueError(f"y_score has shape {scores.shape}; pass at least one user and two items")
    flat = as_numbers("y_score", scores.reshape(-1)).reshape(scores.shape)
    columns = as_numbers("held_out", held_out)
    if columns.size != n_users:
        raise ValueError(f"held_out has {columns.size} entries but y_score has {n_users} rows; "
                         "pass one held-out item per user")
    bad = (columns != np.floor(columns)) | (columns < 0) | (columns >= n_items)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"held_out[{first}] = {columns[first].item()!r} is not a column of "
                         f"y_score; pass 0-based item indices 0..{n_items - 1}")
    rows = np.arange(n_users)
    target = flat[rows, columns.astype(np.int64)][:, None]
    above = np.count_nonzero(flat > target, axis=1)
    if ties == "pessimistic":
        above += np.count_nonzero(flat == target, axis=1) - 1      # less the item itself
    return (above + 1).astype(np.int64)


# --------------------------------------------------------------------------- sampling


def sample_ranks(exact_ranks, n_items: int, n_negatives: int, *, seed=None) -> np.ndarray:
    r"""Sampled rank of each user's held-out item among itself and m random negatives.

    For each user, ``n_negatives`` = *m* of the *n* - 1 other items are drawn
    uniformly **without replacement**; the sampled rank is 1 plus the number
    of drawn items that beat the held-out item. Only that number matters, and
    it follows :math:`\mathrm{Hypergeometric}(n - 1, R - 1, m)`, so it is drawn
    directly (one vectorised ``Generator.hypergeometric`` call) instead of
    drawing *m* item ids per user: same law, a fraction of the time.

    Parameters
    ----------
    exact_ranks : sequence of int
        Rank of each user's held-out item among all ``n_items`` items, 1-based.
    n_items : int
        Catalogue size *n* (>= 2).
    n_negatives : int
        Sampled negatives per user, 1 .. n_items - 1 (papers often use 99 or 100).
    seed : None, int or numpy.random.Generator
        Seed of ``numpy.random.default_rng``; the same seed repeats the draw.

    Returns
    -------
    numpy.ndarray of int64
        Sampled ranks 1 .. n_negatives + 1, one per user, in input order.

    References
    ----------
    Krichene & Rendle (2020), section 2 (sampled metrics).

    Examples
    --------
    >>> r = sample_ranks([1, 5000, 10_000], 10_000, 99, seed=7)
    >>> int(r[0]), int(r[2])          # rank 1 and last place are certain
    (1, 100)
    >>> 1 <= int(r[1]) <= 100
    True
    """
    n_items, n_negatives = check_catalogue(n_items, n_negatives)
    if n_items > MAX_ITEMS_TO_DRAW:
        raise ValueError(f"n_items={n_items} is above {MAX_ITEMS_TO_DRAW:,}, the largest catalogue "
                         "numpy's hypergeometric generator handles; the binomial approximation "
                         "(Generator.binomial(m, (R - 1)/(n - 1))) is exact to within m/n there")
    ranks = as_ranks("exact_ranks", exact_ranks, n_items, "n_items").astype(np.int64)
    rng = np.random.default_rng(check_seed(seed))
    above = rng.hypergeometric(ranks - 1, n_items - ranks, n_negatives)
    return above.astype(np.int64) + 1


def sampled_rank_distribution(exact_ranks, n_items: int, n_negatives: int, *,
                              distribution: Distribution = "hypergeometric") -> np.ndarray:
    r"""P(sampled rank = r | exact rank R) for r = 1 .. m + 1, one row per exact rank.

    .. math::

        \text{hypergeometric: } P(r \mid R) = \frac{\binom{R-1}{r-1}\binom{n-R}{m-r+1}}
        {\binom{n-1}{m}}, \qquad
        \text{binomial: } P(r \mid R) = \binom{m}{r-1} p^{r-1}(1-p)^{m-r+1},\;
        p = \frac{R-1}{n-1}

    Both have mean :math:`E[r - 1] = m (R - 1)/(n - 1)`; the binomial one
    (sampling with replacement) is slightly wider and approaches the exact law
    as *n* grows with *m* fixed.

    Parameters
    ----------
    exact_ranks : int or sequence of int
        Exact ranks, 1-based, at most ``n_items``.
    n_items, n_negatives : int
        Catalogue size *n* and number of sampled negatives *m*.
    distribution : {"hypergeometric", "binomial"}, default "hypergeometric"
        The exact law of sampling without replacement, or its approximation.

    Returns
    -------
    numpy.ndarray
        Shape (m + 1,) for a single rank, else (len(exact_ranks), m + 1); rows
        sum to 1. Memory grows as users x (m + 1): pass distinct ranks.

    References
    ----------
    Krichene & Rendle (2020), section 3 (the distribution of sampled ranks).

    Examples
    --------
    >>> p = sampled_rank_distribution(3, 5, 2)      # 2 of the 4 other items, 2 of them beat it
    >>> [round(x, 4) for x in p.tolist()]           # r = 1, 2, 3: 1/6, 4/6, 1/6
    [0.1667, 0.6667, 0.1667]
    >>> [round(x, 4) for x in sampled_rank_distribution(3, 5, 2, distribution="binomial").tolist()]
    [0.25, 0.5, 0.25]
    """
    distribution = check_option("distribution", distribution, DISTRIBUTIONS)
    n_items, n_negatives = check_catalogue(n_items, n_negatives)
    single = np.ndim(exact_ranks) == 0
    ranks = as_ranks("exact_ranks", np.atleast_1d(exact_ranks), n_items, "n_items")
    pmf = _pmf_kernel(ranks, n_items, n_negatives, n_negatives + 1, distribution)
    return pmf[0] if single else pmf


# --------------------------------------------------------------------------- metrics


def exact_metric(exact_ranks, n_items: int, metric: str, *, k: int | None = None) -> float:
    r"""Mean over users of a metric of the held-out item's rank among all items.

    .. math:: M = \frac{1}{|U|}\sum_{u \in U} M(R_u), \quad
              M(R) \in \Big\{\tfrac{n - R}{n - 1},\; \mathbb 1[R \le k],\;
              \tfrac{\mathbb 1[R \le k]}{k},\; \tfrac{\mathbb 1[R \le k]}{R},\;
              \tfrac{\mathbb 1[R \le k]}{\log_2(R + 1)}\Big\}

    for ``metric`` = "auc", "hit_rate", "precision", "map",
    "ndcg" (see the module docstring). The **naive sampled metric** is the same
    formula on the short list: ``exact_metric(sampled_ranks, n_negatives + 1,
    metric, k=k)``.

    Parameters
    ----------
    exact_ranks : sequence of int
        One rank per user, 1-based, at most ``n_items``.
    n_items : int
        Length of the ranked list (the catalogue, >= 2).
    metric : {"auc", "hit_rate", "precision", "map", "ndcg"}
    k : int or None
        Cut-off: required for hit rate and precision, optional for AP and NDCG
        (None: no cut-off), not allowed for AUC.

    Returns
    -------
    float

    References
    ----------
    Krichene & Rendle (2020), section 2 (metrics of one relevant item).

    Examples
    --------
    >>> exact_metric([2, 40, 100], 10_000, "hit_rate", k=10)
    0.3333333333333333
    >>> exact_metric([2, 40, 100], 10_000, "map")     # (1/2 + 1/40 + 1/100) / 3
    0.17833333333333334
    >>> round(exact_metric([1, 10_000], 10_000, "auc"), 4)
    0.5
    """
    n_items = check_count("n_items", n_items, 2, "a ranked list needs at least two items")
    metric, k = check_sampled_metric(metric, k, METRICS)
    ranks = as_ranks("exact_ranks", exact_ranks, n_items, "n_items")
    return float(np.mean(_metric_kernel(ranks, n_items, metric, k)))


def expected_sampled_metric(exact_ranks, n_items: int, n_negatives: int, metric: str, *,
                            k: int | None = None,
                            distribution: Distribution = "hypergeometric") -> float:
    r"""Expected value of the sampled metric, given each user's exact rank.

    .. math:: E[M_{\mathrm{sampled}}] = \frac{1}{|U|}\sum_{u \in U}
              \sum_{r=1}^{m+1} P(r \mid R_u)\, M_{m+1}(r)

    where :math:`M_{m+1}(r)` is the metric of rank *r* in a list of *m* + 1
    items (``exact_metric(r, m + 1, metric)``). It is what an experiment that
    samples *m* negatives reports on average over its random draws; for AUC it
    equals the exact AUC (sampling leaves AUC unbiased), for every other metric
    it does not. Computed once per distinct exact rank; with a cut-off only
    ``P(r <= k | R)`` is needed.

    Parameters
    ----------
    exact_ranks : sequence of int
        One rank per user, 1-based, at most ``n_items``.
    n_items, n_negatives : int
        Catalogue size *n* and number of sampled negatives *m*.
    metric : {"auc", "hit_rate", "precision", "map", "ndcg"}
    k : int or None
        Cut-off, applied to the sampled list (see :func:`exact_metric`).
    distribution : {"hypergeometric", "binomial"}, default "hypergeometric"
        Law of the sampled rank (see :func:`sampled_rank_distribution`).

    Returns
    -------
    float
        The mean over the given users.

    References
    ----------
    Krichene & Rendle (2020), section 3 (expected sampled metrics), figure 1
    (three models whose order flips under sampling).

    Examples
    --------
    >>> A = [100] * 5                                  # every user at exact rank 100
    >>> exact_metric(A, 10_000, "hit_rate", k=10)
    0.0
    >>> round(expected_sampled_metric(A, 10_000, 99, "hit_rate", k=10), 4)
    1.0
    >>> round(expected_sampled_metric(A, 10_000, 99, "auc"), 6) == round(exact_metric(A, 10_000, "auc"), 6)
    True
    """
    distribution = check_option("distribution", distribution, DISTRIBUTIONS)
    n_items, n_negatives = check_catalogue(n_items, n_negatives)
    metric, k = check_sampled_metric(metric, k, METRICS)
    ranks = as_ranks("exact_ranks", exact_ranks, n_items, "n_items")
    distinct, counts = np.unique(ranks, return_counts=True)
    per_rank = _expected_sampled_kernel(distinct, n_items, n_negatives, metric, k, distribution)
    return float(per_rank @ counts / ranks.size)


# --------------------------------------------------------------------------- corrections


def bv_correction(n_items: int, n_negatives: int, metric: str, *, k: int | None = None,
                  gamma: float = 0.01, rank_weights=None) -> np.ndarray:
    r"""Corrected metric value for each sampled rank (Krichene & Rendle's BV correction).

    Instead of scoring a sampled rank *r* with the metric of the short list,
    score it with :math:`\hat M(r)`, chosen so that over exact ranks *R* with
    weights *p(R)* the corrected value has little bias and little variance:

    .. math::

        \hat M = \arg\min_{x \in \mathbb R^{m+1}} \sum_{R=1}^{n} p(R)\Big[
            \big(E[x_r \mid R] - M(R)\big)^2 + \gamma\, \mathrm{Var}[x_r \mid R]\Big]

    with :math:`E[x_r \mid R] = \sum_r P(r \mid R)\,x_r` and *M(R)* the exact
    metric. Writing :math:`A_{Rr} = P(r \mid R)`, :math:`D = \mathrm{diag}(p)`,
    :math:`b_R = M(R)` and :math:`c = A^\top p`, the minimiser is the
    least-squares solution of

    .. math:: \big((1 - \gamma) A^\top D A + \gamma\, \mathrm{diag}(c)\big)\,\hat M = A^\top D b .

    ``gamma = 0`` is the paper's minimal-bias (MB) correction: as little
    bias as m + 1 values allow, but values that swing wildly from one sampled
    rank to the next; the system is then ill-conditioned, so the table
    depends on rounding (its mean over users hardly does). ``gamma = 1``
    minimises bias² + variance, the mean squared error, and gives the
    posterior mean :math:`\hat M(r) = E_p[M(R) \mid r]`. Small values such
    as 0.01 (the default) or 0.1 trade a little bias for much less variance.
    Corrected values may fall outside the metric's range for a single user;
    only their mean estimates the metric.

    The objective above (squared bias plus gamma times variance) and its
    normal equations are derived here from the paper's description of the
    trade-off; its text was not available to check how it scales gamma. A
    weighting of (1 - gamma') bias² + gamma' variance is the same fit with
    gamma = gamma' / (1 - gamma'), so small values barely differ.

    The fit sums over all n exact ranks, in chunks; it costs about
    n (m + 1)² operations, whatever the number of users. Above
    ``GRID_ALL_RANKS`` items it sums over a grid instead: the first
    ``GRID_HEAD`` ranks one by one, the rest in at most ``GRID_BINS`` bins
    of equal width (midpoint rule, relative change 1e-6 or less for
    gamma > 0). For catalogues that fit in one chunk, P(r | R) is cached
    for the next call with the same n and m.

    Parameters
    ----------
    n_items, n_negatives : int
        Catalogue size *n* and number of sampled negatives *m*.
    metric : {"auc", "hit_rate", "precision", "map", "ndcg"}
    k : int or None
        Cut-off of the *exact* metric being estimated.
    gamma : float in [0, 1], default 0.01
        Weight of the variance against the squared bias.
    rank_weights : None or sequence of n_items numbers >= 0
        *p(R)* for R = 1 .. n, the distribution of exact ranks the fit assumes
        (normalised here). None: uniform, :math:`p(R) = 1/n`.
        :func:`correct_sampled_metric` estimates it from the sampled ranks.

    Returns
    -------
    numpy.ndarray
        Shape (m + 1,): :math:`\hat M(r)` for r = 1 .. m + 1.

    References
    ----------
    Krichene & Rendle (2020), section 5 (corrected metrics: minimal bias and
    the bias-variance trade-off).

    Examples
    --------
    >>> table = bv_correction(10_000, 99, "hit_rate", k=10)
    >>> table.shape
    (100,)
    >>> full = bv_correction(10, 9, "ndcg", gamma=0.5)      # every item sampled: no correction
    >>> bool(np.allclose(full, 1 / np.log2(np.arange(2, 12))))
    True
    """
    n_items, n_negatives = check_catalogue(n_items, n_negatives)
    metric, k = check_sampled_metric(metric, k, METRICS)
    gamma = check_gamma(gamma)
    if rank_weights is None:
        weights = np.full(n_items, 1.0 / n_items)
    else:
        weights = as_counts("rank_weights", rank_weights)
        if weights.size != n_items:
            raise ValueError(f"rank_weights has {weights.size} entries but n_items={n_items}; "
                             "pass one weight per exact rank 1..n_items")
        if weights.sum() <= 0:
            raise ValueError("rank_weights sums to 0; give some exact rank a positive weight")
    return _bv_kernel(n_items, n_negatives, metric, k, gamma, weights, None)


def correct_sampled_metric(sampled_ranks, n_items: int, n_negatives: int, metric: str, *,
                           k: int | None = None, correction: Correction = "bv",
                           gamma: float = 0.01,
                           rank_prior: str = "sampled") -> float:
    r"""Estimate the exact metric from sampled ranks.

    ``correction="rescale"``, the simple estimate: map each sampled rank to the
    exact rank it estimates without bias, :math:`\hat R = 1 + (r - 1)(n - 1)/m`
    (since :math:`E[r - 1 \mid R] = m (R - 1)/(n - 1)`), and average the exact
    metric :math:`M(\hat R)` over users. It keeps AUC unbiased, but the metrics
    with a cut-off see only a coarse grid of ranks (1, 1 + (n - 1)/m, ...):
    with n = 10,000 and m = 99, a user with r = 1 counts as a hit at rank 1 and
    anyone else falls beyond rank 10, so HR@10 is overstated.

    ``correction="bv"``: the average of :math:`\hat M(r_u)`, the bias-variance
    correction of Krichene & Rendle computed by :func:`bv_correction`. The fit
    needs a distribution *p(R)* of exact ranks, which is unknown:

    * ``rank_prior="sampled"`` (default) spreads the observed sampled-rank
      shares *h(r)* back over the exact ranks that produce them,
      :math:`p(R) = \frac{m+1}{n}\sum_r h(r)\,P(r \mid R)` (one EM step from a
      uniform start; it sums to 1 because :math:`\sum_R P(r \mid R) = n/(m+1)`).
      It follows the data: a model whose held-out items sit near the top gets
      weights near the top. It cannot see inside the first n/(m + 1) or so
      exact ranks, which all produce r = 1 most of the time.
    * ``rank_prior="uniform"``: :math:`p(R) = 1/n`, the same table for every
      data set; it pulls corrected values towards what a random ranking gets,
      so it understates good models more.

    Parameters
    ----------
    sampled_ranks : sequence of int
        One sampled rank per user, 1 .. n_negatives + 1 (as from :func:`sample_ranks`).
    n_items, n_negatives : int
        Catalogue size *n* and number of sampled negatives *m* of the experiment.
    metric : {"auc", "hit_rate", "precision", "map", "ndcg"}
    k : int or None
        Cut-off of the exact metric being estimated.
    correction : {"bv", "rescale"}, default "bv"
    gamma : float in [0, 1], default 0.01
        BV only: weight of the variance against the squared bias.
    rank_prior : {"sampled", "uniform"}, default "sampled"
        BV only: the distribution of exact ranks the fit assumes.

    Returns
    -------
    float
        Estimate of :func:`exact_metric` for the users' unknown exact ranks.

    References
    ----------
    Krichene & Rendle (2020), section 5 (corrected metrics).

    Examples
    --------
    >>> rng = np.random.default_rng(5)
    >>> exact = np.ceil(10_000 * rng.random(20_000) ** 4).astype(int)    # a decent model
    >>> sampled = sample_ranks(exact, 10_000, 99, seed=6)
    >>> truth = exact_metric(exact, 10_000, "hit_rate", k=10)
    >>> naive = exact_metric(sampled, 100, "hit_rate", k=10)
    >>> corrected = correct_sampled_metric(sampled, 10_000, 99, "hit_rate", k=10)
    >>> bool(abs(corrected - truth) < abs(naive - truth) / 5)
    True
    """
    correction = check_option("correction", correction, CORRECTIONS)
    rank_prior = check_option("rank_prior", rank_prior, RANK_PRIORS)
    n_items, n_negatives = check_catalogue(n_items, n_negatives)
    metric, k = check_sampled_metric(metric, k, METRICS)
    gamma = check_gamma(gamma)
    ranks = as_ranks("sampled_ranks", sampled_ranks, n_negatives + 1, "n_negatives + 1")
    if correction == "rescale":
        return float(np.mean(_rescale_kernel(ranks, n_items, n_negatives, metric, k)))
    share = np.bincount(ranks.astype(np.int64) - 1, minlength=n_negatives + 1) / ranks.size
    if rank_prior == "uniform":
        table = _bv_kernel(n_items, n_negatives, metric, k, gamma,
                           np.full(n_items, 1.0 / n_items), None)
    else:
        table = _bv_kernel(n_items, n_negatives, metric, k, gamma, None, share)
    return float(share @ table)
