r"""The ranked layout and the kernels every public layer calls.

Nothing here checks its input: the public functions (:mod:`recmetrics.auc`,
:mod:`recmetrics.ranking`, :mod:`recmetrics.evaluation`) validate, then call these
and aggregate. There is one kernel per metric, so the single-list teaching
functions, the ``mean_*`` functions and :func:`recmetrics.evaluate` compute a
number with the same code.

The layout
----------
Many ranked lists are stored flat: their rows sorted by list and then by
rank, each row with its list id, its 1-based position and its relevance grade
(0 = not relevant), plus the **tie group** it belongs to (rows of one list
with equal scores). A tie group of size *t* holding *r* relevant rows may come
in any of *t*! orders; the kernels return the expected value over those orders
(McSherry & Najork 2008). A list without ties has groups of size 1 and the
formulas reduce to the usual ones. Only the rows of tie groups that hold a
relevant row are materialised (:class:`Layout`): every other row adds 0 to
every metric.

Ranking
-------
:func:`rank_rows` puts rows in that order without one global sort: lists are
cut into chunks of about :data:`RANK_CHUNK` rows, and each chunk is sorted in
cache, in threads (numpy releases the GIL while sorting). The number of
threads is the number of cores this process may use, or the environment
variable ``RECMETRICS_NUM_THREADS``.

Pair counts for AUC
-------------------
AUC kernels return the integers W (positive-negative pairs won) and W + T
(won or tied) per group, exactly in int64, and :func:`auc_from_counts` turns
them into a value under a tie policy. Group AUC counts them from sorts of
uint64 values, not of indices (:func:`group_pair_counts_unsorted`): numpy
sorts values several times faster than it argsorts them.
"""
from __future__ import annotations

import functools
import math

from dataclasses import dataclass, field, fields
from typing import Callable, TypeVar

import numpy as np

from ._threads import thread_map, threads

#: Default clip of probabilities for the log loss: the float64 machine epsilon.
DEFAULT_EPS = float(np.finfo(np.float64).eps)

#: Above this grade 2**grade - 1 is computed relative to the list's top grade (no overflow).
EXP_GAIN_SHIFT_ABOVE = 1000

#: Rows per chunk of :func:`rank_rows`: whole lists, sorted in cache, one thread each.
RANK_CHUNK = 1 << 16

#: Largest number of positive-negative comparisons held in memory at once by the pairwise AUC.
PAIRWISE_CHUNK = 1 << 22

# Partial sums of 1/i and of 1/log2(i + 1) are summed term by term up to this many terms
# (rounding error ~1e-15); beyond, closed forms are more accurate than a long running sum.
_EXACT_TERMS = 1024


# --------------------------------------------------------------------------- ordering


def group_order(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """Stable order of rows by small non-negative integer keys (< ``n_keys``).

    A least-significant-digit radix sort on 16-bit digits: numpy sorts
    ``uint16`` stably by counting, so one digit costs a linear pass (two for
    more than 65,536 keys) instead of a comparison sort.
    """
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    rest, top = keys >> 16, (max(int(n_keys), 1) - 1) >> 16
    while top:
        digit = (rest[order] & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        rest, top = rest >> 16, top >> 16
    return order


def rank_rows(lists: np.ndarray, scores: np.ndarray, n_lists: int, *,
              tiebreak: np.ndarray | None = None, positive: np.ndarray | None = None,
              carry: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
              ) -> tuple[np.ndarray, tuple[int, int] | None]:
    """Row order by list, then by score descending (equal scores by ``tiebreak`` descending).

    Lists are cut into chunks of whole lists of about :data:`RANK_CHUNK`
    rows; rows are gathered by chunk (one counting pass, none when the rows
    already run by list), and each chunk is sorted by score, then stably by
    list (counting again), in threads. A small chunk sorts in cache, so this
    is faster than one ``np.argsort`` of all the scores even on one core.

    With ``positive`` (a boolean per row), also returns the global AUC pair
    counts (wins, wins or ties) of every positive against every negative: a
    chunk's negatives, already in score order, are located among all the
    positives sorted once (binary search with sorted needles), so no global
    sort is needed. Otherwise the second value is None.

    ``carry`` holds (source, out) pairs: each ``out`` receives ``source`` in
    the row order returned (``source[order]``), gathered chunk by chunk in the
    threads instead of in one pass over the whole array afterwards.
    """
    n = scores.size
    rows_per_list = np.bincount(lists, minlength=n_lists)
    list_start = np.cumsum(rows_per_list)
    list_start -= rows_per_list
    chunk_of_list = list_start // RANK_CHUNK
    n_chunks = int(chunk_of_list[-1]) + 1 if n else 0
    if n == 0 or not (lists[1:] < lists[:-1]).any():
        order = np.arange(n)
    else:
        order = group_order(chunk_of_list[lists], n_chunks)
    first_list = np.searchsorted(chunk_of_list, np.arange(n_chunks + 1))
    bounds = np.append(list_start, n)[first_list]
    del rows_per_list, list_start, chunk_of_list
    if positive is not None:
        pos_sorted = np.sort(scores[positive])
        n_pos = pos_sorted.size

    def rank_chunk(c: int):
        lo, hi = bounds[c], bounds[c + 1]
        rows = order[lo:hi]
        s = scores[rows]
        by_score = np.argsort(s) if tiebreak is None else np.lexsort((tiebreak[rows], s))
        counts = None
        if positive is not None:
            neg = s[by_score][~positive[rows][by_score]]
            # positives at or below each negative; those equal to it are tied
            not_above = np.searchsorted(pos_sorted, neg, "right")
            maybe_tied = np.flatnonzero(not_above)
            tied = maybe_tied[pos_sorted[not_above[maybe_tied] - 1] == neg[maybe_tied]]
            n_ties = int((not_above[tied] - np.searchsorted(pos_sorted, neg[tied], "left")).sum())
            wins = n_pos * neg.size - int(not_above.sum())
            counts = (wins, wins + n_ties)
        by_score = by_score[::-1]
        local = lists[rows][by_score] - first_list[c]
        ranked = by_score[group_order(local, first_list[c + 1] - first_list[c])]
        for source, out in carry:
            out[lo:hi] = (s if source is scores else source[rows])[ranked]
        order[lo:hi] = rows[ranked]
        return counts

    counts = thread_map(rank_chunk, range(n_chunks))
    if positive is None:
        return order, None
    return order, (sum(c[0] for c in counts), sum(c[1] for c in counts))


def descending_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's dense rank from the largest (0 = the largest value) and the number of
    distinct values. Cheap where most values are 0 (a grade column): only the others are
    sorted, and each value is found among the distinct ones by a binary search."""
    levels = distinct(np.append(values[values != 0], 0.0))
    return levels.size - 1 - np.searchsorted(levels, values), levels.size


def rank_by_codes(lists: np.ndarray, n_lists: int, codes: np.ndarray, n_codes: int
                  ) -> np.ndarray | None:
    """:func:`rank_rows`' order of rows that already run by list (``lists`` ascending), from
    small non-negative integer codes instead of scores: by list, then by ``codes`` ascending
    (0 = the best score, see :func:`descending_codes`), rows of equal code in their own
    order (:func:`rank_rows` leaves that open). (list, code, row) packed in one uint64 and
    sorted: one sort of values, without sorting the scores first to find their keys (a
    baseline's score is a value per item, coded from the items). None when the bits do
    not fit in 64."""
    n = codes.size
    row_bits, code_bits = _bits(n), _bits(n_codes)
    if _bits(n_lists) + code_bits + row_bits > 64:
        return None
    keys = lists.astype(np.uint64)
    keys <<= np.uint64(code_bits)
    keys |= codes.astype(np.uint64, copy=False)
    keys <<= np.uint64(row_bits)
    keys |= np.arange(n, dtype=np.uint64)
    if not (keys[1:] > keys[:-1]).all():      # else in order already (one code a list)
        keys.sort()
    keys &= np.uint64((1 << row_bits) - 1) if row_bits < 64 else np.uint64(2**64 - 1)
    return keys.view(np.int64)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: one sort and a :func:`starts` mask. (numpy 2.4's
    ``np.unique`` without ``return_*`` options hashes instead, about 40x slower than the
    sort on 1.4 million distinct int64 values.)"""
    ordered = np.sort(np.ravel(values))
    return ordered[starts(ordered)]


def starts(values: np.ndarray) -> np.ndarray:
    """Boolean mask of rows whose value differs from the previous row's (row 0 included)."""
    new = np.empty(values.size, dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new


# --------------------------------------------------------------------------- AUC


def pair_counts(pos_sorted: np.ndarray, neg_sorted: np.ndarray) -> tuple[int, int]:
    """Wins and wins-or-ties of one group, from its positive and negative scores sorted ascending.

    One pair of binary searches per run of equal positive scores: ``lo`` =
    negatives below, ``hi`` = negatives below or tied.
    """
    run_start = np.flatnonzero(starts(pos_sorted))
    run_length = np.diff(np.append(run_start, pos_sorted.size))
    run_scores = pos_sorted[run_start]
    lo = np.searchsorted(neg_sorted, run_scores, side="left")
    hi = np.searchsorted(neg_sorted, run_scores, side="right")
    return int(np.dot(run_length, lo)), int(np.dot(run_length, hi))


def pair_counts_pairwise(pos_scores: np.ndarray, neg_scores: np.ndarray) -> tuple[int, int]:
    """Wins and wins-or-ties by comparing every positive with every negative, in chunks."""
    step = max(1, PAIRWISE_CHUNK // neg_scores.size)
    wins = ties = 0
    for start in range(0, pos_scores.size, step):
        block = pos_scores[start:start + step, None]
        wins += int(np.count_nonzero(block > neg_scores))
        ties += int(np.count_nonzero(block == neg_scores))
    return wins, wins + ties


def weighted_pair_counts(pos: np.ndarray, pos_w: np.ndarray, neg: np.ndarray,
                         neg_w: np.ndarray, pairwise: bool = False) -> tuple[float, float]:
    """Weighted wins and wins-or-ties: a pair (i, j) counts w_i * w_j.

    By binary search of each positive among the negatives sorted by score,
    with running sums of their weights; or, with ``pairwise``, by comparing
    every pair in chunks of at most :data:`PAIRWISE_CHUNK` comparisons.
    """
    if pairwise:
        step = max(1, PAIRWISE_CHUNK // neg.size)
        wins = ties = 0.0
        for start in range(0, pos.size, step):
            block, weight = pos[start:start + step, None], pos_w[start:start + step]
            wins += float(weight @ ((block > neg) @ neg_w))
            ties += float(weight @ ((block == neg) @ neg_w))
        return wins, wins + ties
    order = np.argsort(neg, kind="stable")
    neg_sorted = neg[order]
    below = np.zeros(neg.size + 1)
    np.cumsum(neg_w[order], out=below[1:])
    lo = below[np.searchsorted(neg_sorted, pos, side="left")]
    hi = below[np.searchsorted(neg_sorted, pos, side="right")]
    return float(pos_w @ lo), float(pos_w @ hi)


def group_pair_counts(lists: np.ndarray, scores: np.ndarray, positive: np.ndarray,
                      n_lists: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per list: wins, wins-or-ties, positives and negatives, in one linear pass.

    Rows must run by list, then by score descending (equal scores adjacent).
    A positive beats the negatives after its run of equal scores within its
    list, and ties with the negatives inside the run. With ``N(i)`` the
    negatives among the first i rows and a list ending at row e, a run [s, t)
    holding p positives adds p * (N(e) - N(t)) wins and p * (N(e) - N(s))
    wins or ties; summed over a list's runs, that is P * N(e) less the sums
    of p * N(t) and p * N(s), so only per-run counts are ever materialised.
    """
    n = scores.size
    count = np.int32 if n < 2**31 - 1 else np.int64
    new_list = starts(lists)
    new_run = starts(scores)
    new_run |= new_list
    run_start = np.flatnonzero(new_run)
    del new_run
    neg_cum: np.ndarray = np.zeros(n + 1, dtype=count)
    np.cumsum(~positive, out=neg_cum[1:])
    neg_at_start = neg_cum[run_start]                      # N(s) per run
    neg_at_end = np.append(neg_at_start[1:], neg_cum[n])   # N(t): the next run's start
    pos_cum: np.ndarray = np.zeros(n + 1, dtype=count)
    np.cumsum(positive, out=pos_cum[1:])
    pos_in_run = np.diff(np.append(pos_cum[run_start], pos_cum[n]))
    list_start = np.flatnonzero(new_list)
    list_end = np.append(list_start[1:], n)
    first_run = np.searchsorted(run_start, list_start)
    ids = lists[list_start]
    del new_list, run_start

    def per_list(values):
        full = np.zeros(n_lists, dtype=np.int64)
        full[ids] = values
        return full

    pos = per_list(pos_cum[list_end] - pos_cum[list_start])
    neg = per_list(neg_cum[list_end] - neg_cum[list_start])
    base = per_list(pos_cum[list_end] - pos_cum[list_start]).astype(np.int64) * \
        per_list(neg_cum[list_end])
    out = []
    for neg_at in (neg_at_end, neg_at_start):
        weighted = pos_in_run.astype(np.int64)
        weighted *= neg_at
        out.append(base - per_list(np.add.reduceat(weighted, first_run) if weighted.size else 0))
        del weighted
    return out[0], out[1], pos, neg


def _bits(n: int) -> int:
    """Bits that hold every integer in [0, n)."""
    return max(int(n) - 1, 0).bit_length()


def float_order_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys in the order of the float64 ``values`` (-0.0 and 0.0 one key; no NaN): the
    bits of a negative number inverted, those of another with the sign bit set."""
    keys = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)   # -0.0 + 0.0 = 0.0
    mask = keys >> np.uint64(63)
    np.negative(mask, out=mask)                        # all ones where negative, else 0
    mask |= np.uint64(1 << 63)
    keys ^= mask
    return keys


def score_ranks(scores: np.ndarray, ordered: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Each score's dense rank (0 = the smallest) and the number of distinct scores, from
    sorts of values, not of indices (several times faster than an argsort).

    Each row's key is the top bits of its score's order key (:func:`float_order_keys`) with
    the row number in the low bits: one sort orders the rows by score, equal scores by row.
    Distinct scores that share those top bits (few: about n^2 / 2^(64 - row bits) pairs)
    are found from the sorted scores themselves and their rows put in order, bucket by
    bucket. The i-th row of that order has the i-th smallest score, so the ranks follow
    from the sorted scores, and one scatter gives them to the rows. ``ordered``, when
    given, is ``np.sort(float_order_keys(scores))`` (not sorted again).
    """
    n = scores.size
    if n == 0:
        return np.zeros(0, dtype=np.uint64), 0
    row_bits = _bits(n)
    shift = np.uint64(row_bits)
    full = float_order_keys(scores)
    keys = full >> shift
    keys <<= shift
    keys |= np.arange(n, dtype=np.uint64)
    keys.sort()
    if ordered is None:
        ordered = np.sort(full)                 # the scores in that order, once it is right
    new_score = starts(ordered)
    top = ordered >> shift
    clash = np.flatnonzero(new_score[1:] & (top[1:] == top[:-1]))
    order = keys & np.uint64((1 << row_bits) - 1)
    if clash.size:          # buckets of one truncated key but several scores: sorted again
        buckets = distinct(top[clash])
        del top
        truncated = keys >> shift
        lo = np.searchsorted(truncated, buckets, side="left")
        hi = np.searchsorted(truncated, buckets, side="right")
        del truncated
        rows_at, place = _expand(hi - lo)
        at = lo[rows_at] + place
        rows = order[at]
        local = np.lexsort((rows, full[rows.astype(np.intp)], rows_at))
        order[at] = rows[local]
    del keys, full
    dense = np.cumsum(new_score, dtype=np.uint64)
    dense -= np.uint64(1)
    ranks = np.empty(n, dtype=np.uint64)
    ranks[order.view(np.int64)] = dense
    return ranks, int(dense[-1]) + 1


def _sorted_key_counts(keys: np.ndarray, bits: int) -> tuple[np.ndarray, ...]:
    """:func:`group_pair_counts_unsorted`'s counts of packed (group, score key, positive) keys,
    sorted: per group present, its code, wins or ties, ties, positives and negatives; then
    the runs that hold both classes (``group << bits | score key``, ascending), counted as
    all tied."""
    n = keys.size
    is_pos = np.bitwise_and(keys, np.uint64(1), out=np.empty(n, dtype=np.uint8),
                            casting="unsafe").view(bool)
    group = keys >> np.uint64(bits + 1)
    group_start = np.flatnonzero(starts(group))
    ids = group[group_start].astype(np.intp)
    del group
    n_pos = np.add.reduceat(is_pos, group_start, dtype=np.int64) if n else group_start
    first_pos = np.cumsum(n_pos) - n_pos
    pos_rows = np.flatnonzero(is_pos)
    after_negative = np.flatnonzero(is_pos[1:] > is_pos[:-1]) + 1    # positives after negatives
    del is_pos
    n_neg = np.diff(group_start, append=n) - n_pos
    place_sum = np.zeros(pos_rows.size + 1, dtype=np.int64)
    np.cumsum(pos_rows, out=place_sum[1:])
    del pos_rows
    wins_or_ties = np.diff(place_sum[first_pos], append=place_sum[-1])
    wins_or_ties -= n_pos * group_start + n_pos * (n_pos - 1) // 2
    del place_sum
    mixed = after_negative[keys[after_negative] - keys[after_negative - 1] == np.uint64(1)]
    del after_negative
    negatives = mixed - np.searchsorted(keys, keys[mixed - 1], side="left")
    positives = np.searchsorted(keys, keys[mixed], side="right") - mixed
    tie_sum = np.zeros(mixed.size + 1, dtype=np.int64)
    np.cumsum(negatives * positives, out=tie_sum[1:])
    ties = np.diff(tie_sum[np.searchsorted(mixed, group_start)], append=tie_sum[-1])
    return ids, wins_or_ties, ties, n_pos, n_neg, keys[mixed] >> np.uint64(1)


@dataclass(frozen=True)
class ScoreCut:
    """The scores' keys in their order (:func:`float_order_keys`, or their bits when no score is
    negative), less the smallest and cut to a number of bits (:func:`score_cut`)."""
    raw: bool             #: no score is negative: the keys are the scores' bits
    smallest: np.uint64   #: the smallest score's key
    shift: int            #: bits cut off each key (less the smallest) to make a score key
    bits: int             #: bits the score keys then take

    def keys(self, scores: np.ndarray) -> np.ndarray:
        """Each score's key less the smallest, shifted right by :attr:`shift` bits: in the
        scores' order, equal for equal scores (-0.0 and 0.0 too), and for distinct scores
        whose keys differ in the cut bits alone."""
        if not self.bits:                           # one score (or none)
            return np.zeros(scores.size, dtype=np.uint64)
        keys = (scores + 0.0).view(np.uint64) if self.raw else float_order_keys(scores)
        keys -= self.smallest                       # -0.0 + 0.0 = 0.0: one key
        keys >>= np.uint64(self.shift)
        return keys

    def clashes(self, scores: np.ndarray) -> tuple[np.ndarray, int]:
        """The score keys (sorted) that several distinct scores share, and the rows whose
        key is one of those, from one sort of the floats (then passes in place; the
        distinct keys apart when there are many ties)."""
        if not self.shift:                          # nothing cut: the keys part the scores
            return np.zeros(0, dtype=np.uint64), 0
        floats = np.sort(scores)                    # (numpy sorts floats faster than
        floats += 0.0                               # it partitions them); -0.0 + 0.0 = 0.0
        keys = floats.view(np.uint64) if self.raw else float_order_keys(floats)
        new_score = starts(keys)
        first = None
        if 2 * np.count_nonzero(new_score) <= keys.size:   # ties: distinct keys, first rows
            first = np.flatnonzero(new_score)
            keys = keys[first]
            first = np.append(first, floats.size)
        top = keys                                  # in place: the sorted copy is ours
        top -= self.smallest
        top >>= np.uint64(self.shift)
        shared = top[1:] == top[:-1]
        if first is None:                           # ... a new score on the key before
            shared &= new_score[1:]
        del new_score
        clash = top[1:][shared]                     # sorted, with repeats
        clash = clash[starts(clash)]
        lo, hi = np.searchsorted(top, clash, side="left"), np.searchsorted(top, clash, side="right")
        return clash, int((hi - lo if first is None else first[hi] - first[lo]).sum())


def score_cut(scores: np.ndarray, max_bits: int) -> ScoreCut:
    """The scores' keys cut to at most ``max_bits`` bits (>= 1): each less the smallest,
    shifted right by just enough (from the smallest and largest score alone). The cut keeps
    the order (a smaller key is a smaller score) and equal scores share a key, but distinct
    scores closer than about 2^-max_bits of the keys' span may share one too
    (:meth:`ScoreCut.clashes`). Scores spaced widely enough for the bits (rounded to a few
    decimals: their smallest gap is at least 2^-max_bits of the span) never do."""
    if not scores.size:
        return ScoreCut(raw=True, smallest=np.uint64(0), shift=0, bits=0)
    ends = np.array([scores.min(), scores.max()]) + 0.0      # -0.0 + 0.0 = 0.0
    raw = bool(ends[0] >= 0)
    keys = ends.view(np.uint64) if raw else float_order_keys(ends)
    span = int(keys[1] - keys[0])
    shift = max(span.bit_length() - max_bits, 0)
    return ScoreCut(raw=raw, smallest=keys[0], shift=shift, bits=(span >> shift).bit_length())


#: Share of the rows above which :func:`group_pair_counts_unsorted` gives the scores dense
#: ranks (:func:`score_ranks`, a second sort) rather than count runs again, when the rows
#: whose cut score key distinct scores share hold more: scores a few ulps apart over a
#: wide range.
CLASH_SHARE = 0.25

#: Fibonacci hashing's multiplier (2^64 / the golden ratio): keys times it, top bits kept,
#: spread keys whose low bits are alike (scores on a decimal grid) over a table.
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)


def _recounted_runs(codes: np.ndarray, scores: np.ndarray, positive: np.ndarray,
                    cut: ScoreCut, runs: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """Exact counts inside runs of rows of one group and one cut score key that hold both
    classes (``runs``: ``group << bits | score key``, sorted): per run, its group code,
    wins or ties, ties, and positives x negatives (the ties the packed sort counted).

    Its rows are found by a table of the runs' score keys, hashed (one gather a row), then
    checked exactly; they are put in order by (run, dense rank of the score among them,
    positive) in one packed key and counted as :func:`_sorted_key_counts` counts. None
    when those keys do not fit in 64 bits (more than 2^31 such rows)."""
    score_keys = cut.keys(scores)
    table_bits = min(max(_bits(64 * runs.size), 12), 26)
    top = np.uint64(64 - table_bits)
    table = np.zeros(1 << table_bits, dtype=bool)
    table[((runs & np.uint64((1 << cut.bits) - 1)) * _FIBONACCI >> top).astype(np.intp)] = True
    hashed = score_keys * _FIBONACCI
    hashed >>= top
    rows = np.flatnonzero(table[hashed.astype(np.intp)])
    del hashed
    run = np.left_shift(codes[rows], cut.bits, dtype=np.uint64, casting="unsafe")
    run |= score_keys[rows]
    del score_keys
    at = np.minimum(np.searchsorted(runs, run), runs.size - 1)
    inside = runs[at] == run
    rows, at = rows[inside], at[inside]
    rank, n_distinct = score_ranks(scores[rows])
    rank_bits = _bits(n_distinct)
    if _bits(runs.size) + rank_bits + 1 > 64:
        return None
    keys = at.astype(np.uint64)
    keys <<= np.uint64(rank_bits)
    keys |= rank
    keys <<= np.uint64(1)
    keys |= positive[rows]
    keys.sort()
    ids, wins_or_ties, ties, n_pos, n_neg, _ = _sorted_key_counts(keys, rank_bits)
    return (runs[ids] >> np.uint64(cut.bits)).astype(np.intp), wins_or_ties, ties, n_pos * n_neg


#: Rows from which :func:`group_pair_counts_unsorted` sorts and counts ranges of groups apart,
#: one a thread.
GROUP_AUC_SPLIT = 1 << 20


def sort_in_threads(values: np.ndarray) -> list[int]:
    """Sort ``values`` in place; from :data:`GROUP_AUC_SPLIT` values, in threads (numpy
    releases the GIL): partitioned in place at equal shares (``ndarray.partition``, linear),
    then each share sorted in a thread. Returns the shares' bounds ([0, n] for one)."""
    n = values.size
    n_parts = min(threads(), 4) if n >= GROUP_AUC_SPLIT else 1
    cuts = [0] + [n * p // n_parts for p in range(1, n_parts)] + [n]
    if n_parts < 2:
        values.sort()
        return cuts
    values.partition(cuts[1:-1])
    thread_map(lambda p: values[cuts[p]:cuts[p + 1]].sort(), range(n_parts))
    return cuts


def _packed_counts(codes: np.ndarray, score_keys: np.ndarray, bits: int, positive: np.ndarray
                   ) -> tuple[np.ndarray, ...]:
    """:func:`_sorted_key_counts` of the rows' (group, score key, positive) keys (``score_keys``
    becomes them), sorted by :func:`sort_in_threads`, then counted in threads in ranges cut
    at group starts."""
    keys = score_keys
    keys <<= np.uint64(1)
    keys |= positive
    keys |= np.left_shift(codes, bits + 1, dtype=np.uint64, casting="unsafe")
    del score_keys
    cuts = sort_in_threads(keys)
    if len(cuts) < 3:
        return _sorted_key_counts(keys, bits)
    n_parts = len(cuts) - 1
    group_bits = np.uint64(bits + 1)              # the ranges: from a group's first row on
    cuts[1:-1] = np.searchsorted(keys, keys[cuts[1:-1]] >> group_bits << group_bits).tolist()
    counted = thread_map(lambda p: _sorted_key_counts(keys[cuts[p]:cuts[p + 1]], bits), range(n_parts))
    return tuple(np.concatenate([c[f] for c in counted]) for f in range(6))


def group_pair_counts_unsorted(codes: np.ndarray, scores: np.ndarray, positive: np.ndarray,
                               n_codes: int, groups: np.ndarray | None = None, *,
                               score_bits: int | None = None
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`group_pair_counts` of rows in any order: per group (``codes`` < ``n_codes``)
    wins, wins-or-ties, positives and negatives, exactly, from one sort of uint64 values.

    Each row's key is (group, score key, positive) in one uint64; one sort of the keys
    puts every group's rows in ascending score, and among equal scores the negatives
    first. So a positive at place j of its group (0-based) has j rows before it that
    score at most its score, of which its group's earlier positives are the rest: summed
    over a group's P positives, the wins or ties are the sum of their places less
    P(P - 1)/2 (Mann-Whitney). A run of tied rows that holds both classes starts its
    positives right after a negative whose key is one less; its q negatives and p
    positives make p * q ties, which the wins leave out.

    The score key is the score's order key cut to the bits the group code leaves
    (:func:`score_cut`). It keeps the order, and parts distinct scores spaced widely enough
    for the bits (scores rounded to a few decimals), but distinct scores close together
    may share a key (distinct random floats: a few hundred pairs in 5 million). Only a run
    of one group and one key that holds both classes may then be miscounted (as all
    tied), so nothing more is done when there is none (distinct random floats in many
    groups: almost surely none). Else the scores are sorted to find the keys that
    distinct scores share (:meth:`ScoreCut.clashes`); runs on other keys are ties,
    counted right; those on a shared key are counted again exactly apart
    (:func:`_recounted_runs`) and each group's counts corrected by the difference. When
    more than :data:`CLASH_SHARE` of the rows have a shared key (scores a few ulps apart
    over a wide range), the scores' dense ranks (:func:`score_ranks`) are the score keys
    instead, if they fit. ``score_bits`` caps the score key's bits (tests cut it to make
    clashes).

    Returns arrays indexed by code (0 for a code no row has), or, with ``groups`` (codes
    that rows have), arrays of those groups in that order. None when the group code takes
    more than 61 bits, or the runs counted again hold more than 2^31 rows.
    """
    n = scores.size
    group_bits = _bits(n_codes)
    max_bits = 62 - group_bits if score_bits is None else min(score_bits, 62 - group_bits)
    if max_bits < 1:
        return None
    cut = score_cut(scores, max_bits)
    ids, wins_or_ties, ties, n_pos, n_neg, runs = _packed_counts(
        codes, cut.keys(scores), cut.bits, positive)
    if cut.shift and runs.size:        # runs of one key and both classes: ties, or clashes?
        clash, clashing_rows = cut.clashes(scores)
        score = runs & np.uint64((1 << cut.bits) - 1)
        at = np.minimum(np.searchsorted(clash, score), max(clash.size - 1, 0))
        runs = runs[clash[at] == score] if clash.size else runs[:0]
        if runs.size and clashing_rows > CLASH_SHARE * n:
            ranks, n_distinct = score_ranks(scores)        # dense ranks: sorted again
            if group_bits + _bits(n_distinct) <= 62:
                ids, wins_or_ties, ties, n_pos, n_neg, _ = _packed_counts(
                    codes, ranks, _bits(n_distinct), positive)
                runs = runs[:0]
            del ranks
    if runs.size:                      # counted again exactly; each group's counts corrected
        exact = _recounted_runs(codes, scores, positive, cut, runs)
        if exact is None:
            return None
        run_group, run_wins_or_ties, run_ties, counted_ties = exact
        place = np.searchsorted(ids, run_group)     # ids ascend: parts are ranges of codes
        np.add.at(wins_or_ties, place, run_wins_or_ties - counted_ties)
        np.add.at(ties, place, run_ties - counted_ties)
    counts = (wins_or_ties - ties, wins_or_ties, n_pos, n_neg)
    if groups is not None:
        if ids.size < n_codes:           # codes no row has: each group's place among ids
            place = np.zeros(n_codes, dtype=np.intp)
            place[ids] = np.arange(ids.size)
            groups = place[groups]
        return tuple(c[groups] for c in counts)   # type: ignore[return-value]
    out = tuple(np.zeros(n_codes, dtype=np.int64) for _ in counts)
    for full, c in zip(out, counts):
        full[ids] = c
    return out   # type: ignore[return-value]


def value_offsets(keys: np.ndarray) -> tuple[np.ndarray, int, np.ndarray] | None:
    """Integer group keys as codes without a hash table: each key less the smallest, when
    they span at most a few times as many values as there are rows. Returns (codes, the
    span, the first row of each distinct key in order of first appearance), so that
    ``keys[firsts]`` are the uniques ``pandas.factorize`` finds and ``codes[firsts]`` their
    codes here; None for keys of another kind or a wider span. The codes are int32 when
    they and the row numbers fit (half the memory traffic)."""
    if keys.dtype.kind not in "iu" or keys.size == 0:
        return None
    lo, hi = int(keys.min()), int(keys.max())
    span = hi - lo + 1
    if span > 4 * keys.size + 65536 or hi >= 2**63:
        return None
    wide = keys.view(np.int64) if keys.dtype == np.uint64 else keys.astype(np.int64, copy=False)
    index = np.int32 if max(span, keys.size) < 2**31 else np.int64
    offsets = np.subtract(wide, lo, out=np.empty(keys.size, dtype=index), casting="unsafe")
    first: np.ndarray = np.full(span, keys.size, dtype=index)
    np.minimum.at(first, offsets, np.arange(keys.size, dtype=index))
    return offsets, span, np.sort(first[first < keys.size]).astype(np.intp)


def auc_from_counts(wins, wins_or_ties, pairs, ties: str):
    """AUC under a tie policy: a tied pair counts 1/2, 1 or 0."""
    if ties == "average":
        return (wins + wins_or_ties) / (2 * pairs)
    return (wins_or_ties if ties == "optimistic" else wins) / pairs


def placements(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""DeLong's structural components of one model, doubled so that they are whole numbers.

    Per positive: 2 x (negatives scored below it) + (negatives tied with it),
    that is :math:`2n\,V_{10}`. Per negative: 2 x (positives scored above it) +
    (positives tied with it), that is :math:`2m\,V_{01}`. Both sum to
    ``wins + wins_or_ties`` of :func:`pair_counts`. Each is a difference of
    midranks (Sun & Xu 2014): the midrank of a positive among all samples less
    its midrank among the positives is (below + below-or-tied) / 2 negatives,
    found here by two binary searches per sample.
    """
    # sorted queries: the binary searches then walk memory in order (about 2x faster)
    pos_order, neg_order = np.argsort(pos, kind="stable"), np.argsort(neg, kind="stable")
    pos_sorted, neg_sorted = pos[pos_order], neg[neg_order]
    v10 = np.empty(pos.size, dtype=np.int64)
    v01 = np.empty(neg.size, dtype=np.int64)
    v10[pos_order] = np.searchsorted(neg_sorted, pos_sorted, side="left") + \
        np.searchsorted(neg_sorted, pos_sorted, side="right")
    v01[neg_order] = 2 * pos.size - np.searchsorted(pos_sorted, neg_sorted, side="left") - \
        np.searchsorted(pos_sorted, neg_sorted, side="right")
    return v10, v01


def delong_variance(d10: np.ndarray, d01: np.ndarray) -> float:
    """Variance of an AUC (or of a difference of two AUCs) from doubled placements.

    ``d10`` holds one doubled placement (or difference of two) per positive,
    ``d01`` one per negative (:func:`placements`); with m positives and n
    negatives, :math:`S_{10}/m + S_{01}/n` where S are sample variances
    (denominator m - 1, n - 1) of :math:`V_{10} = d_{10} / 2n` and
    :math:`V_{01} = d_{01} / 2m`. Whole numbers below 2**53 are exact in
    float64, so constant placements give exactly 0.
    """
    m, n = d10.size, d01.size
    s10 = np.var(d10.astype(np.float64), ddof=1) / (4.0 * n * n)
    s01 = np.var(d01.astype(np.float64), ddof=1) / (4.0 * m * m)
    return float(s10 / m + s01 / n)


#: Most resamples per block of :class:`WeightedPairs` (one thread's unit of work).
RESAMPLE_BLOCK = 64
#: Largest (boundary or group) x resample block of :class:`WeightedPairs` held at once per thread.
RESAMPLE_CELLS = 1 << 21


class WeightedPairs:
    r"""Pair counts of scored rows when each row weighs its group's weight (a user's weight
    in a bootstrap resample), for many weightings at once, from one sort.

    The negatives are sorted by score once; each positive's negatives below (``lo``) and
    below or tied (``hi``) are located once by binary search. The distinct values of
    ``lo`` and ``hi`` are the *boundaries*: the weight of the negatives below a boundary
    is all a positive needs. The negatives between two consecutive boundaries are counted
    per group in a sparse (boundary x group) matrix, the positives at each boundary in
    two more. A block of weightings, as a (group x resample) matrix :math:`W`, costs three
    sparse products and a cumulative sum over the boundaries:

    .. math:: \text{below} = \operatorname{cumsum}(B W) - B W + b^\top W, \qquad
              \text{wins} = \textstyle\sum_g (L W)_g\,\text{below}_g, \qquad
              \text{wins or ties} = \textstyle\sum_g (H W)_g\,\text{below}_g

    (:math:`B` the negatives between boundaries, :math:`b` those below the first,
    :math:`L`, :math:`H` each positive at its ``lo`` and ``hi`` boundary). Work per
    resample is one pass over the (boundary, group) pairs of the negatives, at most one
    per negative. Blocks of resamples run in threads (:func:`_map`; scipy's sparse
    products release the GIL).

    With whole-number weights (bootstrap counts) every sum is a whole number, exact in
    float64 below :math:`2^{53}` whatever the order of the additions: blocks and threads
    change no bit, and the counts equal those of the resampled rows themselves.
    """

    def __init__(self, scores: np.ndarray, positive: np.ndarray, groups: np.ndarray,
                 n_groups: int):
        from scipy import sparse

        negative = ~positive
        neg_scores = scores[negative]
        order = np.argsort(neg_scores, kind="stable")
        neg_sorted, neg_groups = neg_scores[order], groups[negative][order]
        pos_scores, pos_groups = scores[positive], groups[positive]
        lo = np.searchsorted(neg_sorted, pos_scores, side="left")
        hi = np.searchsorted(neg_sorted, pos_scores, side="right")
        bounds, where = np.unique(np.r_[lo, hi], return_inverse=True)
        self.n_bounds, self.n_groups = int(bounds.size), int(n_groups)
        # each negative's gap: after boundary g, before g + 1 (-1: below every boundary)
        mark = np.zeros(neg_sorted.size + 1, dtype=np.intp)
        mark[bounds] = 1
        gap = np.cumsum(mark[:-1]) - 1
        # negatives at or above the last boundary are below no positive
        between = (gap >= 0) & (gap < self.n_bounds - 1)
        shape = (self.n_bounds, self.n_groups)
        self.between = sparse.csr_matrix(
            (np.ones(int(between.sum())), (gap[between], neg_groups[between])), shape=shape)
        n_pos = lo.size
        self.at_lo = sparse.csr_matrix((np.ones(n_pos), (where[:n_pos], pos_groups)), shape=shape)
        self.at_hi = sparse.csr_matrix((np.ones(n_pos), (where[n_pos:], pos_groups)), shape=shape)
        self.below_first = np.bincount(neg_groups[gap < 0], minlength=self.n_groups
                                       ).astype(np.float64)
        self.positives = np.bincount(pos_groups, minlength=self.n_groups).astype(np.float64)
        self.negatives = np.bincount(neg_groups, minlength=self.n_groups).astype(np.float64)

    @property
    def block(self) -> int:
        """Resamples per block: at most :data:`RESAMPLE_BLOCK`, and a block's largest
        (boundary or group) x resample matrix at most :data:`RESAMPLE_CELLS` cells."""
        return max(1, min(RESAMPLE_BLOCK, RESAMPLE_CELLS // max(self.n_bounds, self.n_groups, 1)))

    def sums(self, weights: np.ndarray) -> np.ndarray:
        """(resample, 4) weighted wins, wins-or-ties, positives and negatives, for each
        column of a (group x resample) weight matrix."""
        weights = np.asarray(weights, dtype=np.float64)
        per_gap = self.between @ weights
        below = np.cumsum(per_gap, axis=0)
        below -= per_gap                          # the negatives of earlier gaps ...
        below += self.below_first @ weights       # ... and those below every boundary
        out = np.empty((weights.shape[1], 4))
        out[:, 0] = np.einsum("gr,gr->r", self.at_lo @ weights, below)
        out[:, 1] = np.einsum("gr,gr->r", self.at_hi @ weights, below)
        out[:, 2] = self.positives @ weights
        out[:, 3] = self.negatives @ weights
        return out

    def resampled(self, weights_of: Callable[[int, int], np.ndarray], n_resamples: int,
                  done: Callable[[int], None] | None = None) -> np.ndarray:
        """:meth:`sums` of resamples 0 .. n_resamples - 1 in blocks, on the thread pool;
        ``weights_of(start, size)`` gives a block's (group x resample) weights, ``done``
        hears of each finished block's size."""
        step = self.block

        def run(i: int) -> np.ndarray:
            start = i * step
            size = min(step, n_resamples - start)
            sums = self.sums(weights_of(start, size))
            if done is not None:
                done(size)
            return sums

        blocks = thread_map(run, range(-(-n_resamples // step)))
        return np.concatenate(blocks) if blocks else np.zeros((0, 4))


def auc_per_list(wins, wins_or_ties, pos, neg, ties: str) -> np.ndarray:
    """AUC of every list, NaN where a list lacks positives or negatives."""
    pairs = pos * neg
    auc = np.full(pairs.size, np.nan)
    ok = pairs > 0
    auc[ok] = auc_from_counts(wins[ok], wins_or_ties[ok], pairs[ok], ties)
    return auc


def gauc_weights(pos: np.ndarray, neg: np.ndarray, gauc_weight: str) -> np.ndarray:
    """GAUC weight of each group: its rows, its positives, or 1 (float64)."""
    if gauc_weight == "impressions":
        return (pos + neg).astype(np.float64)
    if gauc_weight == "clicks":
        return pos.astype(np.float64)
    return np.ones(pos.size)


def gauc(auc: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean of the defined per-group AUCs (NaN when none is defined)."""
    kept = ~np.isnan(auc)
    if not kept.any():
        return float("nan")
    return float(np.dot(weights[kept], auc[kept]) / weights[kept].sum())


# --------------------------------------------------------------------------- sums


def harmonic(n: np.ndarray) -> np.ndarray:
    """H(n) = 1 + 1/2 + ... + 1/n (H(0) = 0): summed up to 1024 terms, beyond by the
    asymptotic series ln n + gamma + 1/(2n) - 1/(12n^2) + 1/(120n^4) (error below 1e-20)."""
    n = np.asarray(n, dtype=np.int64)
    top = int(n.max(initial=0))
    table = np.zeros(min(top, _EXACT_TERMS) + 1)
    np.cumsum(1.0 / np.arange(1, table.size), out=table[1:])
    x = np.maximum(n, 1).astype(np.float64)
    series = np.log(x) + np.euler_gamma + 1 / (2 * x) - 1 / (12 * x**2) + 1 / (120 * x**4)
    return np.where(n < table.size, table[np.minimum(n, table.size - 1)], series)


def discount(pos: np.ndarray) -> np.ndarray:
    """1 / log2(i + 1) for 1-based positions i."""
    return 1.0 / np.log2(pos + 1.0)


def log_factorials(n: int) -> np.ndarray:
    """log(m!) for m = 0..n, each as accurate as ``math.lgamma`` (scipy.special costs 0.15 s to
    import; the command line's default metrics should not pay it)."""
    return np.fromiter((math.lgamma(m + 1.0) for m in range(n + 1)), dtype=np.float64, count=n + 1)


def discount_sum(k: np.ndarray) -> np.ndarray:
    r"""S(k) = sum of 1/log2(i + 1) for i = 1..k, for any k up to 2**31.

    Summed up to 1024 terms; beyond, Euler-Maclaurin on f(x) = ln 2 / ln(x + 1),
    whose integral is ln 2 * li(x + 1) (relative error below 1e-15).
    """
    k = np.asarray(k, dtype=np.int64)
    exact_top = int(min(k.max(initial=0), _EXACT_TERMS))
    table = np.zeros(exact_top + 1)
    np.cumsum(discount(np.arange(1, exact_top + 1)), out=table[1:])
    out = table[np.minimum(k, exact_top)]
    far = k > exact_top
    if far.any():
        a, b = float(exact_top), k[far].astype(np.float64)
        ln2 = np.log(2.0)
        f = lambda x: ln2 / np.log(x + 1)  # noqa: E731
        df = lambda x: -ln2 / ((x + 1) * np.log(x + 1) ** 2)  # noqa: E731
        from scipy.special import expi  # here: scipy.special costs ~0.2 s to import

        integral = ln2 * (expi(np.log(b + 1)) - expi(np.log(a + 1)))
        # sum over i = a..b, less f(a): the terms a + 1 .. b
        out[far] = table[exact_top] + integral + (f(a) + f(b)) / 2 + (df(b) - df(a)) / 12 - f(a)
    return out


def gain_values(grades: np.ndarray, gain: str, shift: np.ndarray | None = None) -> np.ndarray:
    """Gain of each grade: 2**g - 1 or g. With ``shift`` (per row), 2**(g - shift) - 2**-shift."""
    if gain == "linear":
        return grades
    if shift is None:
        return np.exp2(grades) - 1.0
    return np.exp2(grades - shift) - np.exp2(-shift)


# --------------------------------------------------------------------------- probabilities


def log_loss(labels: np.ndarray, probs: np.ndarray, eps: float) -> np.ndarray:
    """Per-sample log loss: -log of the probability given to the true class, clipped.

    As scikit-learn: the probability of the true class (``p`` for a positive,
    ``1 - p`` for a negative, subtracted before clipping) is clipped to
    ``[eps, 1 - eps]``. With ``eps = 0`` a confident miss costs ``inf``.
    """
    given = np.where(labels == 1, probs, 1.0 - probs)
    np.clip(given, eps, 1.0 - eps, out=given)
    with np.errstate(divide="ignore"):
        return -np.log(given)


def brier(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per-sample squared error of the probability, (p - y)^2."""
    diff = probs - labels
    return diff * diff


def binary_entropy(rate):
    """Entropy in nats of a 0/1 variable with P(1) = rate (0 at rate 0 or 1)."""
    rate = np.asarray(rate, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(rate * np.log(rate) + (1.0 - rate) * np.log1p(-rate))
    return np.where((rate > 0) & (rate < 1), h, 0.0)


def pr_curve(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and thresholds in scikit-learn's layout.

    One threshold per distinct score, ascending; precision and recall have
    one more entry, the final point (precision 1, recall 0) that has no
    threshold. Needs at least one positive (of weight > 0). With
    ``weights``, counts are sums of weights; samples of weight 0 must have
    been dropped (they would add thresholds, as scikit-learn drops them).
    """
    order = np.argsort(scores, kind="stable")[::-1]
    sorted_scores = scores[order]
    # last row of each run of equal scores (== keeps equal infinities together)
    last = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]), scores.size - 1]
    if weights is None:
        tps = np.cumsum(labels[order], dtype=np.int64)[last]
        predicted = last + 1                     # rows with score >= threshold
    else:
        w = weights[order]
        tps = np.cumsum(w * labels[order])[last]
        predicted = np.cumsum(w)[last]
    precision = tps / predicted
    recall = tps / tps[-1]
    return (np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0],
            sorted_scores[last][::-1].copy())


def step_area(precision: np.ndarray, recall: np.ndarray) -> float:
    """Step-wise area under a PR curve from :func:`pr_curve`: sum of dR * P.

    Written as scikit-learn writes it (recall decreasing, last precision 1),
    so the float is the same; the clip turns a rounding -0.0 into 0.0.
    """
    return max(0.0, float(-np.sum(np.diff(recall) * precision[:-1])))


def calibration_edges(probs: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """n_bins + 1 bin edges: equal widths on [0, 1], or quantiles of the probabilities."""
    if strategy == "quantile":
        return np.percentile(probs, np.linspace(0, 1, n_bins + 1) * 100)
    return np.linspace(0.0, 1.0, n_bins + 1)


def calibration_bins(labels: np.ndarray, probs: np.ndarray, edges: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bin: number of samples, number of positives, sum of probabilities.

    Bin ``b`` holds the probabilities in ``(edges[b], edges[b + 1]]``; the first
    bin also holds ``edges[0]``. A probability exactly on an inner edge joins
    the lower bin, and 1.0 the last one (scikit-learn's ``searchsorted`` on the
    inner edges).
    """
    n_bins = edges.size - 1
    ids = np.searchsorted(edges[1:-1], probs)
    count = np.bincount(ids, minlength=n_bins)
    positives = np.bincount(ids, weights=labels, minlength=n_bins)
    prob_sum = np.bincount(ids, weights=probs, minlength=n_bins)
    return count, positives, prob_sum



def expected_calibration_error(labels: np.ndarray, probs: np.ndarray, n_bins: int) -> float:
    """Bin-size-weighted mean |observed rate - mean probability| over equal-width bins."""
    count, positives, prob_sum = calibration_bins(labels, probs,
                                                  calibration_edges(probs, n_bins, "uniform"))
    kept = count != 0
    gap = np.abs(positives[kept] / count[kept] - prob_sum[kept] / count[kept])
    return float(np.sum(count[kept] / probs.size * gap))


# --------------------------------------------------------------------------- the layout


class Layout:
    """Rows of ``n_lists`` ranked lists, sorted by list then rank, with tie groups.

    Only the **active** rows are held: the rows of tie groups that contain a
    relevant row (grade > 0). Every per-list metric here is a sum of terms
    that are zero on any other row (a group without a relevant row has no
    hit, no gain and no AP term), so with ~5% relevant rows the kernels touch
    ~5% of the rows. The per-row views (``lists``, ``grades``, ``pos``, ``t``,
    ``r``, ``j``, ``first``, ``r_before``) are arrays over the active rows in
    row order; facts about tie groups are stored once per group.
    """

    def __init__(self, lists: np.ndarray, grades: np.ndarray, n_lists: int,
                 new_group: np.ndarray | None = None):
        n = lists.size
        index = np.int32 if n < 2**31 - 1 else np.int64
        self.n_lists = n_lists
        new_list = starts(lists)
        list_start = np.flatnonzero(new_list)
        self.rows_per_list = np.zeros(n_lists, dtype=np.int64)
        self.rows_per_list[lists[list_start]] = np.diff(np.append(list_start, n))
        relevant = np.flatnonzero(grades > 0)
        # index (into ``relevant``) of the first relevant row of each relevant row's list
        new_rel_list = starts(lists[relevant])
        first_rel = np.maximum.accumulate(np.where(new_rel_list, np.arange(relevant.size), 0))
        if new_group is not None:
            new_group = new_group | new_list
        if new_group is None or new_group.all():  # no ties: each relevant row is its own group
            group_start, size = relevant, np.ones(relevant.size, dtype=index)
            rel = size
            first_rel_in_group = np.arange(relevant.size)
        else:
            all_starts = np.flatnonzero(new_group)
            group = np.searchsorted(all_starts, relevant, side="right") - 1
            first_rel_in_group = np.flatnonzero(starts(group))
            group = group[first_rel_in_group]
            group_start = all_starts[group]
            size = np.append(all_starts, n)[group + 1] - group_start
            rel = np.diff(np.append(first_rel_in_group, relevant.size))
        del new_list, new_group
        # one entry per active group
        self._size: np.ndarray = size.astype(index)
        self._rel: np.ndarray = rel.astype(index)
        self._rel_before: np.ndarray = (first_rel_in_group - first_rel[first_rel_in_group]).astype(index)
        own_list_start = list_start[np.searchsorted(list_start, group_start, side="right") - 1]
        self._first: np.ndarray = (group_start - own_list_start + 1).astype(index)  # its first row's position
        self._offset = np.cumsum(self._size, dtype=np.int64) - self._size  # into the active rows
        # the active rows
        self._row_group: np.ndarray = np.repeat(np.arange(self._size.size, dtype=index), self._size)
        place = np.arange(self._row_group.size, dtype=index) - self._offset[self._row_group]
        rows = group_start[self._row_group] + place
        self.lists, self.grades = lists[rows], grades[rows]
        self.pos = self._first[self._row_group] + place  # 1-based position within the list
        self._expected_gain: dict[tuple[str, bool], np.ndarray] = {}
        self._first_hit: np.ndarray | None = None

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

    @property
    def has_ties(self) -> bool:
        return self._size.size < self.pos.size

    def group_ids(self) -> np.ndarray:
        """Tie-group index of every active row."""
        return self._row_group

    def expected_relevance(self) -> np.ndarray:
        """P(the row's position holds a relevant item) = r / t."""
        return self.r / self.t

    def expected_gain(self, gain: str, shift: np.ndarray | None = None) -> np.ndarray:
        """Mean gain of the row's tie group: the expected gain at its position."""
        key = (gain, shift is not None)
        if key not in self._expected_gain:
            g = gain_values(self.grades, gain, None if shift is None else shift[self.lists])
            if self.has_ties and g.size:
                g = (np.add.reduceat(g, self._offset) / self._size)[self._row_group]
            self._expected_gain[key] = g
        return self._expected_gain[key]

    def first_hit(self) -> np.ndarray:
        """P(the first relevant item of the list is at the row's position).

        Non-zero only in the list's first tie group that holds a relevant row:
        P(J = j) = C(t - j, r - 1) / C(t, r) for the j-th place of that group.
        """
        if self._first_hit is None:
            t, r, j = self.t, self.r, self.j
            rows = np.flatnonzero((r > 0) & (self.r_before == 0) & (t - j + 1 >= r))
            t, r, j = t[rows], r[rows], j[rows].astype(np.float64)
            self._first_hit = np.zeros(self.pos.size)
            self._first_hit[rows[t == 1]] = 1.0  # a group of one: its row is the first hit
            tied = t > 1
            if tied.any():
                t, r, j = (x[tied].astype(np.int64) for x in (t, r, j))
                lf = log_factorials(int(t.max()))
                log_p = (lf[t - j] - lf[t - j - r + 1] - lf[r - 1]
                         + lf[r] + lf[t - r] - lf[t])
                self._first_hit[rows[tied]] = np.exp(log_p)
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


# --------------------------------------------------------------------------- per-list kernels


def hits(layout: Layout, k: int | None) -> np.ndarray:
    """Expected number of relevant items in the top k of each list."""
    return layout.per_list(layout.expected_relevance(), layout.top(k))


def hit_rate(layout: Layout, k: int | None) -> np.ndarray:
    return layout.per_list(layout.first_hit(), layout.top(k))


def reciprocal_rank(layout: Layout, k: int | None) -> np.ndarray:
    return layout.per_list(layout.first_hit() / np.maximum(layout.pos, 1), layout.top(k))


def dcg(layout: Layout, k: int | None, gain: str, shift: np.ndarray | None = None) -> np.ndarray:
    return layout.per_list(layout.expected_gain(gain, shift) * discount(layout.pos), layout.top(k))


def average_precision(layout: Layout, k: int | None, denominator: str,
                      n_relevant: np.ndarray) -> np.ndarray:
    """Expected AP@k of each list; ``n_relevant`` counts all relevant items, found or not."""
    top = layout.top(k)
    if denominator != "hits" or k is None:
        total = layout.per_list(layout.ap_terms(), top)
        if denominator == "hits":
            d = layout.per_list(layout.expected_relevance(), top)
        else:
            d = n_relevant if denominator == "relevant" or k is None else np.minimum(k, n_relevant)
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
        from scipy.stats import hypergeom  # here: scipy.stats costs ~45 MiB and 0.5 s to import

        lists = layout.lists[rows]
        t, r, a = layout.t[rows], layout.r[rows], layout.first[rows].astype(np.int64)
        c = (k - a + 1).astype(np.float64)
        h_before, s_before = h_fixed[lists], s_fixed[lists]
        d1 = harmonic(np.full(a.size, k)) - harmonic(a - 1)  # sum of 1/i for i = a .. k
        a = a.astype(np.float64)
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


def r_precision(layout: Layout, n_relevant: np.ndarray) -> np.ndarray:
    """Expected relevant items in the top R of each list, over R (R = its relevant items).

    The cut-off differs by list: a row counts when its position is at most its
    own list's R. Under ties the expected relevance r / t of each row is summed
    (linear, so a tie group straddling R is handled exactly). 0/0 = NaN where
    R = 0. trec_eval's ``Rprec``: a list shorter than R counts the missing
    places as misses.
    """
    rows = layout.pos <= n_relevant[layout.lists]
    with np.errstate(invalid="ignore", divide="ignore"):
        return layout.per_list(layout.expected_relevance(), rows) / n_relevant


def bpref(rel_lists: np.ndarray, rel_pos: np.ndarray, nonrel_lists: np.ndarray,
          nonrel_pos: np.ndarray, n_relevant: np.ndarray, n_nonrel: np.ndarray) -> np.ndarray:
    r"""bpref of each list from the positions of its retrieved judged rows (no ties).

    .. math:: \mathrm{bpref} = \frac1R \sum_{r} \Big(1 - \frac{\min(n_r, R)}{\min(N, R)}\Big)

    over the retrieved relevant rows r, with :math:`n_r` the judged
    non-relevant rows of the same list ranked above r, R the judged relevant
    and N the judged non-relevant items of the list (retrieved or not). A term
    with :math:`n_r = 0` is 1 (trec_eval's ``m_bpref.c`` special case, which
    also covers N = 0). Rows are given as (list, 1-based position); every
    array of rows must be sorted by list, then position. NaN where R = 0.
    """
    n_lists = n_relevant.size
    span = int(max(rel_pos.max(initial=0), nonrel_pos.max(initial=0))) + 1
    rel_key = rel_lists.astype(np.int64) * span + rel_pos
    nonrel_key = nonrel_lists.astype(np.int64) * span + nonrel_pos
    above = np.searchsorted(nonrel_key, rel_key) - \
        np.searchsorted(nonrel_key, rel_lists.astype(np.int64) * span)
    big_r = n_relevant[rel_lists].astype(np.float64)
    scale = np.minimum(n_nonrel[rel_lists], n_relevant[rel_lists]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, big_r) / scale, 1.0)
        return np.bincount(rel_lists, weights=term, minlength=n_lists) / n_relevant


def bpref_ranked(lists: np.ndarray, grades: np.ndarray, judged: np.ndarray,
                 new_group: np.ndarray, n_relevant: np.ndarray, n_nonrel: np.ndarray
                 ) -> np.ndarray:
    r"""Expected bpref of each list over the orders of its tied rows.

    Rows run by list, then rank; ``new_group`` marks the first row of each tie
    group (every row, for a strict order). For a relevant row, the judged
    non-relevant rows ranked above it are the :math:`n_0` of earlier groups
    plus X of the b in its own group, and X is uniform on 0..b (the row's
    place among those b is uniform), so

    .. math:: E[\min(n_0 + X, R)] = rac{1}{b + 1}\Big(\sum_{v=n_0}^{h} v
              + \max(0, n_0 + b - R)\,R\Big), \qquad h = \min(n_0 + b, R)

    and the term :math:`1 - E[\min(n, R)] / \min(N, R)` is linear in it (1
    when N = 0, where no row is judged non-relevant). NaN where R = 0.
    """
    n_lists = n_relevant.size
    nonrel = judged & (grades == 0)
    group = np.cumsum(new_group) - 1
    group_start = np.flatnonzero(new_group)
    before = np.zeros(lists.size + 1, dtype=np.int64)
    np.cumsum(nonrel, out=before[1:])
    in_group = np.diff(np.append(before[group_start], before[-1]))     # b per group
    list_first = np.flatnonzero(starts(lists))
    own_list = np.searchsorted(list_first, group_start, side="right") - 1
    above = before[group_start] - before[list_first[own_list]]          # n0 per group
    rel = np.flatnonzero(grades > 0)
    g = group[rel]
    n0, b = above[g].astype(np.float64), in_group[g].astype(np.float64)
    big_r = n_relevant[lists[rel]].astype(np.float64)
    high = np.minimum(n0 + b, big_r)
    total = np.where(n0 >= big_r, (b + 1) * big_r,
                     (n0 + high) * (high - n0 + 1) / 2 + np.maximum(0.0, n0 + b - big_r) * big_r)
    scale = np.minimum(n_nonrel[lists[rel]], n_relevant[lists[rel]]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(scale > 0, 1.0 - total / (b + 1) / scale, 1.0)
        return np.bincount(lists[rel], weights=term, minlength=n_lists) / n_relevant


def check_err_ties(layout: Layout, k: int) -> None:
    """Refuse ERR@k under averaged ties when a tie group in the top k mixes grades.

    ERR multiplies the stop chances of the rows above a row, so its expected
    value over the orders of a group of mixed grades has no closed form the
    kernels compute; a group of one grade gives the same ERR in every order.
    """
    if not layout.has_ties:
        return
    groups = layout.group_ids()
    grades = layout.grades
    low = np.full(groups.max(initial=-1) + 1, np.inf)
    high = np.full(low.size, -np.inf)
    np.minimum.at(low, groups, grades)
    np.maximum.at(high, groups, grades)
    mixed = (low[groups] != high[groups]) & (layout.first <= k)
    if mixed.any():
        raise ValueError(
            f"metric 'err' with ties='average': a tie of scores in some user's top {k} mixes "
            "relevance grades, and ERR's expected value over the orders of such a tie has no "
            "closed form here; use ties='optimistic' or ties='pessimistic' (the bounds) or "
            "ties='trec' (trec_eval's order), or leave 'err' out of metrics")


def rbp(layout: Layout, p: float) -> np.ndarray:
    r"""Rank-biased precision of each list: :math:`(1 - p)\sum_i g_i\,p^{i-1}`.

    ``g`` is the grade of the row, in [0, 1]; under ties the group's mean grade
    (the expected grade at that place; RBP is linear in the grades).
    """
    weight = (1.0 - p) * np.power(p, layout.pos - 1.0)
    return layout.per_list(layout.expected_gain("linear") * weight, layout.top(None))


def rbp_residual(depth: np.ndarray, p: float, unjudged_lists: np.ndarray,
                 unjudged_pos: np.ndarray) -> np.ndarray:
    r"""RBP residual of each list: :math:`p^d` for the places below depth d, plus
    :math:`(1 - p)p^{i-1}` for every unjudged place i within the list."""
    unjudged = np.bincount(unjudged_lists, minlength=depth.size,
                           weights=(1.0 - p) * np.power(p, unjudged_pos - 1.0))
    return np.power(p, depth.astype(np.float64)) + unjudged


def err(layout: Layout, k: int | None, max_grade: np.ndarray) -> np.ndarray:
    r"""Expected reciprocal rank of each list (a strict order: no ties).

    .. math:: \mathrm{ERR} = \sum_{r} \frac{1}{r} R_r \prod_{i<r} (1 - R_i), \qquad
              R = \frac{2^g - 1}{2^{g_{max}}}

    ``max_grade`` is :math:`g_{max}` per list (<= 1023). Only rows with a grade
    above 0 have R > 0, so the product runs over the active rows. It is taken
    as a sum of logarithms: a running sum over all rows that is set back to
    about 0 after each list (a compensating entry, the list's own sum), so the
    rounding error of a list does not grow with the lists before it.
    """
    top = layout.top(k)
    lists, g, pos = layout.lists[top], layout.grades[top], layout.pos[top].astype(np.float64)
    n_lists = layout.n_lists
    if lists.size == 0:
        return np.zeros(n_lists)
    g_max = max_grade[lists]
    stop = np.exp2(g - g_max) - np.exp2(-g_max)              # R_i, without overflow
    keep_going = np.log((1.0 - np.exp2(g - g_max)) + np.exp2(-g_max))  # log(1 - R_i), finite
    new_list = starts(lists)
    first = np.flatnonzero(new_list)
    list_sum = np.add.reduceat(keep_going, first)
    # one slot per row plus one after each list holding minus that list's sum
    slot = np.arange(lists.size) + np.cumsum(new_list) - 1
    values = np.zeros(lists.size + first.size)
    values[slot] = keep_going
    values[np.append(first[1:] + np.arange(1, first.size), values.size) - 1] = -list_sum
    running = np.cumsum(values)
    before = running[slot] - keep_going                      # log of prod_{i<r} (1 - R_i)
    return np.bincount(lists, weights=stop / pos * np.exp(before), minlength=n_lists)


class RankedLists:
    """Ranked lists (a :class:`Layout`) with every judged relevant grade of each list.

    ``rel_lists`` / ``rel_grades`` hold one entry per relevant (grade > 0)
    judged item, found in the list or not: they give the recall and AP
    denominators and the ideal DCG (trec_eval's convention).
    """

    def __init__(self, layout: Layout, rel_lists: np.ndarray, rel_grades: np.ndarray):
        self.layout = layout
        n_lists = layout.n_lists
        self.n_relevant = np.bincount(rel_lists, minlength=n_lists)
        order = np.lexsort((-rel_grades, rel_lists))
        self.ideal_lists, self.ideal_grades = rel_lists[order], rel_grades[order]
        self.n_rows = layout.rows_per_list
        self.top_grade = np.zeros(n_lists)
        np.maximum.at(self.top_grade, rel_lists, rel_grades)

    @classmethod
    def from_lists(cls, grades_by_list: list[np.ndarray], judged_by_list: list[np.ndarray]):
        """Lists given in rank order (no ties), each with its judged relevant grades."""
        lengths = np.fromiter((g.size for g in grades_by_list), dtype=np.int64,
                              count=len(grades_by_list))
        n_lists = lengths.size
        lists = np.repeat(np.arange(n_lists), lengths)
        grades = np.concatenate(grades_by_list) if n_lists else np.zeros(0)
        judged_lengths = np.fromiter((g.size for g in judged_by_list), dtype=np.int64,
                                     count=n_lists)
        rel_lists = np.repeat(np.arange(n_lists), judged_lengths)
        rel_grades = np.concatenate(judged_by_list) if n_lists else np.zeros(0)
        relevant = rel_grades > 0
        return cls(Layout(lists, grades.astype(np.float64), n_lists), rel_lists[relevant],
                   rel_grades[relevant].astype(np.float64))

    @property
    def has_relevant(self) -> np.ndarray:
        return self.n_relevant > 0

    def exp_shift(self, gain: str) -> np.ndarray | None:
        """Per-list top grade when 2**grade would overflow float64, else None."""
        if gain == "exponential" and self.top_grade.size and \
                self.top_grade.max() > EXP_GAIN_SHIFT_ABOVE:
            return self.top_grade
        return None

    # the metrics, one value per list
    def precision(self, k: int, denominator: str = "k") -> np.ndarray:
        """P@k over k, or over min(k, R) (``"min_k"``; NaN where R = 0)."""
        d = k if denominator == "k" else np.minimum(k, self.n_relevant)
        with np.errstate(invalid="ignore", divide="ignore"):
            return hits(self.layout, k) / d

    def recall(self, k: int | None, denominator: str = "relevant") -> np.ndarray:
        """R@k over R, or over min(k, R) (``"min_k"``); NaN where R = 0."""
        d = self.n_relevant if denominator == "relevant" or k is None else \
            np.minimum(k, self.n_relevant)
        with np.errstate(invalid="ignore", divide="ignore"):
            return hits(self.layout, k) / d

    def r_precision(self) -> np.ndarray:
        return r_precision(self.layout, self.n_relevant)

    def rbp(self, p: float) -> np.ndarray:
        return rbp(self.layout, p)

    def err(self, k: int | None, max_grade: np.ndarray) -> np.ndarray:
        return err(self.layout, k, max_grade)

    def hit_rate(self, k: int | None) -> np.ndarray:
        return hit_rate(self.layout, k)

    def reciprocal_rank(self, k: int | None) -> np.ndarray:
        return reciprocal_rank(self.layout, k)

    def average_precision(self, k: int | None, denominator: str) -> np.ndarray:
        return average_precision(self.layout, k, denominator, self.n_relevant)

    def ideal_dcg(self, k: int | None, gain: str, ideal: str,
                  shift: np.ndarray | None = None) -> np.ndarray:
        """IDCG@k of each list under an ideal convention (see :func:`recmetrics.ndcg`)."""
        n_lists = self.layout.n_lists
        if ideal == "truth":
            ideal_layout = Layout(self.ideal_lists, self.ideal_grades, n_lists)
            return dcg(ideal_layout, k, gain, shift)
        if ideal == "full":  # every one of the k (or list-length) positions holds the top grade
            depth = self.n_rows if k is None else np.full(n_lists, k)
            top_gain = gain_values(self.top_grade, gain, shift)
            return top_gain * discount_sum(depth)
        # "list": the list's own top-k grades, re-sorted
        layout = self.layout
        if k is not None and layout.has_ties:
            straddle = layout.straddling(k)
            if straddle.any():
                groups, grades = layout.group_ids()[straddle], layout.grades[straddle]
                order = np.lexsort((grades, groups))
                groups, grades = groups[order], grades[order]
                mixed = starts(groups) | (grades != np.r_[grades[:1], grades[:-1]])
                if (np.bincount(groups, weights=mixed)[groups[starts(groups)]] > 1).any():
                    raise ValueError(
                        f"ideal='list' with ties='average' is undefined here: a tie of scores "
                        f"straddles position k={k} and mixes grades, so the list's own top {k} "
                        "is random; use ideal='truth' (the standard), or ties='optimistic' or "
                        "'pessimistic'")
        top = layout.top(k)
        lists, grades = layout.lists[top], layout.grades[top]
        order = np.lexsort((-grades, lists))
        return dcg(Layout(lists[order], grades[order], n_lists), None, gain, shift)

    def ndcg(self, k: int | None, gain: str, ideal: str) -> np.ndarray:
        """NDCG@k of each list; 0 where the ideal DCG is 0 (nothing relevant to find)."""
        shift = self.exp_shift(gain)
        found = dcg(self.layout, k, gain, shift)
        best = self.ideal_dcg(k, gain, ideal, shift)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(best > 0, found / best, 0.0)


# --------------------------------------------------------------------------- beyond accuracy
# Kernels of recmetrics.beyond: what a top-k list holds, not whether it is right. Every
# quantity is an expectation over the orders of tied items, computed exactly: a row of a tie
# group that straddles position k is in the top k with probability (places left)/(group size).

#: Largest number of item pairs (diversity) or (item, history item) pairs (serendipity)
#: materialised at once.
PAIR_CHUNK = 1 << 22


@dataclass
class TopK:
    """Every row that may be in a user's top k, with its probability of being there.

    Rows run by list (user), then by rank. ``p`` is 1 for a row whose tie
    group ends within the top k and ``slots / size`` for a row of the group
    that straddles position k; rows of groups that start below k are dropped.
    """

    lists: np.ndarray     # list (user) code of each row
    items: np.ndarray     # item code of each row
    p: np.ndarray         # P(the row is in the top k)
    group: np.ndarray     # tie group of each row (a running number)
    slots: np.ndarray     # places of the top k left to the row's group: k - first position + 1
    size: np.ndarray      # size of the row's tie group
    grades: np.ndarray    # relevance grade of each row (0 = not relevant)
    length: np.ndarray    # per list: min(k, rows of the list), the length of its top k
    n_lists: int
    k: int
    group_rows: np.ndarray  # per tie group, in row order: its rows here

    @functools.cached_property
    def whole(self) -> np.ndarray:
        """Rows surely in the top k (their tie group ends at or above k)."""
        return self.slots >= self.size

    @functools.cached_property
    def large_group(self) -> np.ndarray:
        """Rows of a tie group that straddles position k with more than
        :data:`CLOSED_FORM_GROUP` times k rows (a baseline's constant score makes every
        longer list one): the beyond-accuracy kernels sum over them in closed form."""
        return ~self.whole & (self.size > CLOSED_FORM_GROUP * self.k)

    def mean_over_slots(self, values: np.ndarray) -> np.ndarray:
        """Per list: expected mean of a per-row value over the list's top k (NaN without rows)."""
        total = np.bincount(self.lists, weights=self.p * values, minlength=self.n_lists)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.length > 0, total / self.length, np.nan)

    def pair_probability(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """P(rows a and b, of one list, are both in its top k).

        At most one tie group of a list straddles k, so two rows of different
        groups are in independently of each other (one of them surely);
        two rows of the straddling group are both in with probability
        s (s - 1) / (t (t - 1)) for s places left to a group of t rows.
        """
        same = (self.group[a] == self.group[b]) & ~self.whole[a]
        both = self.p[a] * self.p[b]
        s, t = self.slots[a[same]], self.size[a[same]]
        both[same] = s * (s - 1) / (t * (t - 1.0))
        return both


def top_k(lists: np.ndarray, items: np.ndarray, scores: np.ndarray, n_lists: int, k: int, *,
          grades: np.ndarray | None = None, ties: str = "average") -> TopK:
    """The rows that may enter each list's top k (see :class:`TopK`).

    ``ties="optimistic"`` ("pessimistic") first puts relevant rows, higher
    grades first, ahead of (behind) the others of equal score; rows still
    tied are averaged over, as with ``"average"``.
    """
    grades = np.zeros(scores.size) if grades is None else grades
    tiebreak = None if ties == "average" else grades if ties == "optimistic" else -grades
    order, _ = rank_rows(lists, scores, n_lists, tiebreak=tiebreak)
    return top_k_ranked(lists[order], items[order], scores[order], grades[order], n_lists, k,
                        ties=ties)


def top_k_ranked(lists: np.ndarray, items: np.ndarray, scores: np.ndarray, grades: np.ndarray,
                 n_lists: int, k: int, *, ties: str = "average") -> TopK:
    """:func:`top_k` of rows already ranked as :func:`rank_rows` ranks them with the same
    ``ties`` (by list code ascending, then by descending score, and under ``"optimistic"``
    / ``"pessimistic"`` by descending / ascending grade within equal scores): the ranked
    rows of :class:`recmetrics._pipeline.Prepared`.

    Only each list's first k rows and the rest of a tie group that straddles position k
    are read (about k rows a list, not all of them): a row below k enters the top k only
    in a group that starts above it.
    """
    bounds = np.searchsorted(lists, np.arange(n_lists + 1))
    rows_per_list = np.diff(bounds)
    length = np.minimum(rows_per_list, k)
    end = bounds[:-1] + length                     # past each list's row at position k
    # lists whose row k + 1 ties with row k: their group runs on past position k
    longer = np.flatnonzero(rows_per_list > k)
    at_k = end[longer] - 1
    tie = scores[at_k + 1] == scores[at_k]
    if ties != "average":
        tie &= grades[at_k + 1] == grades[at_k]
    longer, at_k = longer[tie], at_k[tie]
    all_new_group = None
    if longer.size and 4 * int((rows_per_list[longer] - k).sum()) > scores.size:
        # most rows lie after position k in a tie (a baseline's constant score): each
        # group's end from the starts of every group, in a few passes over all rows
        all_new_group = _new_groups(lists, scores, grades, ties)
        group_starts = np.append(np.flatnonzero(all_new_group), scores.size)
        end[longer] = group_starts[np.searchsorted(group_starts, at_k, side="right")]
    elif longer.size:
        # the rows after position k of those lists: the tied ones come first (rows are
        # ranked), so counting them gives each group's end
        after, place = _expand(rows_per_list[longer] - k)
        rows = end[longer][after] + place
        tied = scores[rows] == scores[at_k[after]]
        if ties != "average":
            tied &= grades[rows] == grades[at_k[after]]
        end[longer] += np.bincount(after[tied], minlength=longer.size)
    if np.array_equal(end, bounds[1:]):          # every row may enter: no gather
        new_group = all_new_group if all_new_group is not None else \
            _new_groups(lists, scores, grades, ties)
        new_list = starts(lists)
    else:
        list_of, place = _expand(end - bounds[:-1])
        rows = bounds[:-1][list_of] + place
        lists, items, scores, grades = lists[rows], items[rows], scores[rows], grades[rows]
        new_list = starts(lists)
        new_group = _new_groups(lists, scores, grades, ties)
    # per tie group (a list's first row starts one), then repeated over the group's rows
    group_start = np.flatnonzero(new_group)
    rows_per_group = np.diff(np.append(group_start, scores.size))
    list_start = np.flatnonzero(new_list)
    # every group here starts within the top k, at position ``first``
    first = group_start - list_start[np.searchsorted(list_start, group_start, side="right") - 1] + 1
    slots = (k - first + 1).astype(np.float64)
    size = rows_per_group.astype(np.float64)
    return TopK(lists=lists, items=items,
                p=np.repeat(np.minimum(slots / size, 1.0), rows_per_group),
                group=np.repeat(np.arange(group_start.size), rows_per_group),
                slots=np.repeat(slots, rows_per_group), size=np.repeat(size, rows_per_group),
                grades=grades, length=length, n_lists=n_lists, k=k, group_rows=rows_per_group)


def _new_groups(lists: np.ndarray, scores: np.ndarray, grades: np.ndarray, ties: str
                ) -> np.ndarray:
    """Rows of ranked lists that start a tie group: a new list, score or (unless ``ties`` is
    ``"average"``) grade."""
    new_group = starts(lists)
    new_group |= starts(scores)
    if ties != "average":
        new_group |= starts(grades)
    return new_group


def exposure(top: TopK, n_items: int) -> np.ndarray:
    """Expected number of top-k lists holding each item (a float per item code)."""
    return np.bincount(top.items, weights=top.p, minlength=n_items)


def coverage_parts(top: TopK, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item: lists that surely hold it, and the sum of log P(a list misses it) over the
    lists that may hold it. Both add over disjoint sets of lists."""
    whole = top.whole
    certain = np.bincount(top.items[whole], minlength=n_items)
    # P is one number a tie group: its log once a group, spread over the group's rows
    first = np.cumsum(top.group_rows) - top.group_rows      # each group's first row
    open_ = ~whole[first]                                    # the groups that straddle k
    log_p = np.repeat(np.log1p(-top.p[first[open_]]), top.group_rows[open_])
    log_miss = np.bincount(top.items[~whole], weights=log_p, minlength=n_items)
    return certain, log_miss


def covered(certain: np.ndarray, log_miss: np.ndarray) -> np.ndarray:
    """P(some list holds the item) = 1 - prod over lists of P(the list misses it)."""
    return np.where(certain > 0, 1.0, -np.expm1(log_miss))


def entropy_bits(counts: np.ndarray) -> float:
    """Shannon entropy in bits of the distribution proportional to ``counts`` (0 log 0 = 0)."""
    total = counts.sum()
    q = counts[counts > 0] / total
    return float(-np.dot(q, np.log2(q))) if q.size else float("nan")


def gini(counts: np.ndarray) -> float:
    """Gini index of counts (zeros included): sum_j (2j - n - 1) c_(j) / (n sum c), c ascending."""
    n, total = counts.size, counts.sum()
    if n == 0 or total <= 0:
        return float("nan")
    c = np.sort(counts)
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    return float(np.dot(weights, c) / (n * total))


def long_tail(counts: np.ndarray, head_share: float) -> np.ndarray:
    """Items outside the head: the head is the fewest most popular items whose counts reach
    ``head_share`` of the total, with every item tied in count with the last of them."""
    total = counts.sum()
    if total <= 0:
        return np.ones(counts.size, dtype=bool)
    ordered = np.sort(counts)[::-1]
    reached = np.cumsum(ordered) / total >= head_share
    threshold = ordered[int(np.argmax(reached))] if reached.any() else ordered[-1]
    return ~((counts >= threshold) & (counts > 0))


def item_information(counts: np.ndarray, n_rows: int, unseen: str) -> np.ndarray:
    """-log2 p(i) with p(i) = counts / n_rows; an item never seen gets p = 1/(n_rows + 1)
    (``unseen="add_one"``) or the value 0 (``"zero"``)."""
    with np.errstate(divide="ignore"):
        info = -np.log2(counts / n_rows)
    fill = np.log2(n_rows + 1.0) if unseen == "add_one" else 0.0
    return np.where(counts > 0, info, fill)


def personalization_parts(top: TopK, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item: sum over lists of p and of p**2 (they add over disjoint sets of lists)."""
    return (np.bincount(top.items, weights=top.p, minlength=n_items),
            np.bincount(top.items, weights=top.p * top.p, minlength=n_items))


def personalization(s: np.ndarray, q: np.ndarray, n_lists: int, k: int) -> float:
    """1 - mean over pairs of lists of |L_u & L_v| / k.

    The overlaps summed over pairs are sum_i c_i (c_i - 1) / 2 for c_i the
    lists holding item i; with c_i a sum of independent 0/1 variables of
    means p, E[c_i (c_i - 1)] = (sum p)**2 - sum p**2 = s_i**2 - q_i.
    """
    if n_lists < 2:
        return float("nan")
    overlap = float(np.sum(s * s - q)) / 2.0
    return 1.0 - overlap / (k * (n_lists * (n_lists - 1) / 2.0))


def personalization_per_list(top: TopK, s: np.ndarray, n_lists: int) -> np.ndarray:
    """Per list u: 1 - mean over the other lists v of E|L_u & L_v| / k; the mean of these over
    lists is :func:`personalization`."""
    overlap = np.bincount(top.lists, weights=top.p * (s[top.items] - top.p), minlength=top.n_lists)
    if n_lists < 2:
        return np.full(top.n_lists, np.nan)
    value = 1.0 - overlap / (top.k * (n_lists - 1.0))
    return np.where(top.length > 0, value, np.nan)


def _chunks(counts: np.ndarray, limit: int):
    """Ranges [lo, hi) of rows whose ``counts`` add up to about ``limit`` (at least one row)."""
    ends = np.cumsum(counts)
    lo = 0
    while lo < counts.size:
        done = ends[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, done + limit, side="right")))
        yield lo, min(hi, counts.size)
        lo = hi


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows with ``counts`` partners each: the row of each partner slot and its 0-based
    place among the row's partners."""
    row = np.repeat(np.arange(counts.size), counts)
    place = np.arange(row.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return row, place


#: A tie group that straddles position k with more rows than this many times k has its pairs
#: summed in closed form (:func:`expected_similarity_sum`), not one by one.
CLOSED_FORM_GROUP = 1


def expected_similarity_sum(top: TopK, similarity,
                            whole_lists: Callable[[], WholeLists | None] | None = None
                            ) -> np.ndarray:
    r"""Per list: E[sum over pairs of items of its top k of sim(i, j)], every pair of rows that may
    be in the top k weighted by :meth:`TopK.pair_probability`.

    The pairs are enumerated, except those of a tie group that straddles position k with
    more than :data:`CLOSED_FORM_GROUP` times k rows (a constant score makes every list one
    such group: the random baseline). Similarity is an inner product of unit vectors
    :math:`u_i` (feature vectors, or items' user-incidence vectors, scaled), so with
    :math:`G` that group (t rows, s of the k places left to it) and :math:`W` the list's
    rows above it (surely in the top k), its pairs add up in closed form:
    :math:`\sum_{i<j \in G} \mathrm{sim}(i, j) = (\lVert \sum_G u_i \rVert^2 - \sum_G
    \lVert u_i \rVert^2) / 2`, each weighted :math:`s (s - 1) / (t (t - 1))`, and
    :math:`\sum_{i \in W, j \in G} \mathrm{sim}(i, j) = (\sum_W u_i) \cdot (\sum_G
    u_j)`, each weighted :math:`s / t`: linear in the group's rows instead of quadratic.
    The pairs of W are enumerated as any other list's. ``whole_lists`` gives
    :math:`\lVert \sum_G u_i \rVert^2` of every list whose group holds all its rows (the
    random baseline's), computed beforehand from the same rows (:class:`WholeLists`).
    """
    n = top.lists.size
    grouped = top.large_group
    rows = np.flatnonzero(~grouped)       # the rows whose pairs are enumerated
    firsts = np.cumsum(top.group_rows) - top.group_rows   # each tie group's first row
    group_first = firsts[grouped[firsts]]   # of each large straddling group (one a list)
    list_first = firsts[starts(top.lists[firsts])]
    # a row pairs with the rows after it up to the end of its list or, above a large
    # straddling group, up to the group (the last of its list: rows after it are not in top)
    stop = np.zeros(top.n_lists, dtype=np.intp)
    stop[top.lists[list_first]] = np.append(list_first[1:], n)
    stop[top.lists[group_first]] = group_first
    partners = stop[top.lists[rows]] - rows - 1
    cuts = np.flatnonzero(starts(top.lists[rows]))        # where a list's rows begin

    def chunk(lo: int, hi: int) -> np.ndarray:
        row, place = _expand(partners[lo:hi])
        a = rows[lo:hi][row]
        b = a + 1 + place
        weight = top.pair_probability(a, b) * similarity(top.items[a], top.items[b])
        return np.bincount(top.lists[a], weights=weight, minlength=top.n_lists)

    # ranges of whole lists: a list's pairs are summed in one bincount, in row order, so its
    # total is the same whatever the ranges (and the number of threads) are
    total = sum(_map_chunks(chunk, partners, cuts), np.zeros(top.n_lists))
    if group_first.size:
        total += _grouped_similarity_sum(top, similarity, rows, group_first, whole_lists)
    return total


def _grouped_similarity_sum(top: TopK, similarity, rows: np.ndarray, group_first: np.ndarray,
                            whole_lists: Callable[[], WholeLists | None] | None = None
                            ) -> np.ndarray:
    """Per list: the expected similarity of the pairs :func:`expected_similarity_sum` leaves
    out (those with a row of a large straddling group, ``top.large_group``, whose first
    rows are ``group_first``), in closed form; ``rows`` are the other rows (those above
    such a group among them)."""
    grouped = top.large_group
    if rows.size:
        lists, items = top.lists[grouped], top.items[grouped]
    else:                                     # every row (a baseline's constant score)
        lists, items = top.lists, top.items
    at = top.lists[group_first]
    with_group = np.zeros(top.n_lists, dtype=bool)
    with_group[at] = True
    above = rows[with_group[top.lists[rows]]]              # the rows above a group
    s, t = top.slots[group_first], top.size[group_first]
    known = whole_lists() if whole_lists is not None else None
    if known is not None and not known.holds(at, t):
        known = None
    square, cross, own = similarity.group_products(
        lists, items, top.lists[above], top.items[above], top.n_lists,
        square=known is None, own=True, cross=above.size > 0)
    if known is not None:
        square = known.squares
    total = np.zeros(top.n_lists)
    total[at] = (square[at] - own[at]) / 2.0 * (s * (s - 1) / (t * (t - 1.0))) + cross[at] * (s / t)
    return total


def _map_chunks(fn, counts: np.ndarray, cuts: np.ndarray | None = None) -> list:
    """``fn(lo, hi)`` over ranges of rows with about :data:`PAIR_CHUNK` pairs in all
    (``counts`` a row), at least one range a thread, in threads (:func:`_map`); ``cuts``
    (ascending row numbers) are the only rows a range may start at."""
    limit = min(PAIR_CHUNK, -(-int(counts.sum()) // threads()))
    ends = [hi for _, hi in _chunks(counts, max(limit, 1))]
    if cuts is not None:
        ends = sorted({int(cuts[at]) if at < cuts.size else counts.size
                       for at in np.searchsorted(cuts, ends)} - {0})
    ranges = list(zip([0] + ends[:-1], ends))
    return thread_map(lambda n: fn(*ranges[n]), range(len(ranges)))


def diversity(top: TopK, similarity,
              whole_lists: Callable[[], WholeLists | None] | None = None) -> np.ndarray:
    """Per list: 1 - E[sum of pairwise similarities] / (m (m - 1) / 2); NaN for m < 2.
    ``whole_lists``: see :func:`expected_similarity_sum`."""
    m = top.length.astype(np.float64)
    pairs = m * (m - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m >= 2, 1.0 - expected_similarity_sum(top, similarity, whole_lists)
                        / pairs, np.nan)


def serendipity(top: TopK, similarity, hist_start: np.ndarray, hist_count: np.ndarray,
                hist_items: np.ndarray) -> np.ndarray:
    r"""Per list: expected (1/m) sum over relevant top-k rows of 1 - mean_j sim(i, j), j over the
    user's history items (``hist_items`` by user, from ``hist_start``, ``hist_count`` of them);
    NaN for a user without history or without rows.

    The relevant rows of a tie group that straddles position k with more than
    :data:`CLOSED_FORM_GROUP` times k rows (the random baseline's) are summed in closed
    form, as :func:`expected_similarity_sum` sums that group's pairs: each is in the top k
    with probability s / t, and with unit vectors :math:`u_i` (similarity is their inner
    product) their mean similarities to the history H add up to
    :math:`(\sum_{i \in G} u_i) \cdot (\sum_{j \in H} u_j) / |H|`. The other rows
    are compared with each history item.
    """
    with_history = (top.grades > 0) & (hist_count[top.lists] > 0)
    grouped = top.large_group
    if grouped.any():
        in_group = np.flatnonzero(with_history & grouped)
        with_history &= ~grouped
    rows = np.flatnonzero(with_history)
    counts = hist_count[top.lists[rows]]

    def chunk(lo: int, hi: int) -> np.ndarray:
        row, place = _expand(counts[lo:hi])
        r = rows[lo:hi][row]
        j = hist_items[hist_start[top.lists[r]] + place]
        return np.bincount(row, weights=similarity(top.items[r], j), minlength=hi - lo)

    mean_sim = np.concatenate([np.zeros(0), *_map_chunks(chunk, counts)])
    mean_sim /= np.maximum(counts, 1)
    total = np.bincount(top.lists[rows], weights=top.p[rows] * (1.0 - mean_sim),
                        minlength=top.n_lists)
    if grouped.any() and in_group.size:
        total = total + _grouped_serendipity(top, similarity, in_group, hist_start,
                                             hist_count, hist_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((hist_count > 0) & (top.length > 0), total / top.length, np.nan)


def _grouped_serendipity(top: TopK, similarity, in_group: np.ndarray, hist_start: np.ndarray,
                         hist_count: np.ndarray, hist_items: np.ndarray) -> np.ndarray:
    """Per list: the expected sum of 1 - mean similarity to the history over the relevant
    rows ``in_group`` of a large straddling tie group (rows with history), in closed form."""
    lists = top.lists[in_group]
    first = np.flatnonzero(starts(lists))
    at = lists[first]
    owner, place = _expand(hist_count[at])
    h_lists = at[owner]
    h_items = hist_items[hist_start[h_lists] + place]
    _, cross, _ = similarity.group_products(lists, top.items[in_group], h_lists, h_items,
                                            top.n_lists, square=False)
    n_rel = np.diff(np.append(first, lists.size))
    s, t = top.slots[in_group[first]], top.size[in_group[first]]
    total = np.zeros(top.n_lists)
    total[at] = (s / t) * (n_rel - cross[at] / hist_count[at])
    return total


class FeatureSimilarity:
    """Cosine similarity of items' feature vectors (0 when either vector is 0)."""

    def __init__(self, vectors: np.ndarray):
        norm = np.sqrt(np.einsum("nd,nd->n", vectors, vectors))
        self.unit = np.divide(vectors, norm[:, None], out=np.zeros_like(vectors),
                              where=norm[:, None] > 0)

    def __call__(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return np.einsum("nd,nd->n", self.unit[i], self.unit[j])

    def group_products(self, labels: np.ndarray, items: np.ndarray, other_labels: np.ndarray,
                       other_items: np.ndarray, n_labels: int, *, square: bool = True,
                       cross: bool = True, own: bool | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """See :func:`group_products`."""
        return group_products(self.unit, labels, items, other_labels, other_items, n_labels,
                              square=square, cross=cross, own=own)


def group_products(vectors, labels: np.ndarray, items: np.ndarray, other_labels: np.ndarray,
                   other_items: np.ndarray, n_labels: int, *, square: bool = True,
                   cross: bool = True, own: bool | None = None, parallel: bool = True
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per label g < ``n_labels``, with :math:`R_g` the sum of the rows of ``vectors`` (a dense
    array or a scipy CSR matrix, a row per item) of ``items`` labelled g and :math:`L_g` that
    of ``other_items`` labelled g (``other_labels``): :math:`\lVert R_g \rVert^2`,
    :math:`L_g \cdot R_g` and the sum of the squared norms of the rows summed in
    :math:`R_g`. Each sum is a sparse product (labels x items by items x dimensions), taken
    over ranges of labels so that at most about :data:`PAIR_CHUNK` numbers are held at once
    (a range a thread). Both ``labels`` and ``other_labels`` come in ascending runs.
    ``square=False``, ``cross=False`` and ``own=False`` (by default ``own`` is ``square``)
    leave the first, the second and the last zeros, without computing them; a label's
    numbers do not depend on which are computed. ``parallel=False``: the ranges one after
    another in the calling thread (a build in the background).
    """
    dense = isinstance(vectors, np.ndarray)
    n_items = vectors.shape[0]
    squares, crosses = np.zeros(n_labels), np.zeros(n_labels)
    owns: np.ndarray = np.zeros(n_labels)
    if square if own is None else own:
        own_per_item = np.asarray(np.einsum("nd,nd->n", vectors, vectors) if dense
                                  else vectors.multiply(vectors).sum(axis=1)).ravel()
        owns = np.bincount(labels, weights=own_per_item[items], minlength=n_labels)
    if not square and not cross:
        return squares, crosses, owns
    if not cross:
        other_labels, other_items = other_labels[:0], other_items[:0]
    present = np.union1d(labels[starts(labels)], other_labels[starts(other_labels)])
    # labels a range: the rows summed per label take about width numbers each
    width = vectors.shape[1] if dense else max(1, int(np.diff(vectors.indptr)[items].sum())
                                               // max(present.size, 1))
    step = max(1, PAIR_CHUNK // max(width, 1))
    bounds_r = np.searchsorted(labels, present)
    bounds_l = np.searchsorted(other_labels, present)

    def sums(lab: np.ndarray, its: np.ndarray, lo: int, hi: int):
        """The sum of the rows of ``its`` per label of ``present[lo:hi]``: ``lab`` those
        labels' runs (a label's place among them from one binary search a run)."""
        first = np.flatnonzero(starts(lab))
        place = np.repeat(np.searchsorted(present[lo:hi], lab[first]),
                          np.diff(np.append(first, lab.size)))
        pick = _pick_matrix(place, its, hi - lo, n_items)
        return pick @ vectors if dense else sparse_product(pick, vectors)

    def label_range(c: int) -> None:      # in threads: scipy's product releases the GIL
        lo = c * step
        hi = min(lo + step, present.size)
        end_r = bounds_r[hi] if hi < present.size else labels.size
        end_l = bounds_l[hi] if hi < present.size else other_labels.size
        r = sums(labels[bounds_r[lo]:end_r], items[bounds_r[lo]:end_r], lo, hi)
        if square:
            squares[present[lo:hi]] = np.einsum("nd,nd->n", r, r) if dense \
                else np.asarray(r.multiply(r).sum(axis=1)).ravel()
        if end_l > bounds_l[lo]:
            l = sums(other_labels[bounds_l[lo]:end_l], other_items[bounds_l[lo]:end_l], lo, hi)
            crosses[present[lo:hi]] = np.einsum("nd,nd->n", l, r) if dense \
                else np.asarray(l.multiply(r).sum(axis=1)).ravel()

    ranges = range(-(-present.size // step))
    if parallel:
        thread_map(label_range, ranges)
    else:
        for c in ranges:
            label_range(c)
    return squares, crosses, owns


def _pick_matrix(rows: np.ndarray, columns: np.ndarray, n_rows: int, n_columns: int):
    """The CSR matrix counting each (row, column) pair, as ``scipy.sparse.csr_matrix((ones,
    (rows, columns)))`` makes it (columns sorted within a row, duplicates summed): the same
    arrays, so products with it are the same to the bit, from one sort of int64 keys
    instead of scipy's per-row sorts, or, where the pairs fill at least a quarter of the
    rows x columns, from counting them in place."""
    from scipy import sparse

    keys = rows.astype(np.int64) * n_columns + columns
    if n_rows * n_columns <= 4 * keys.size:
        # dense enough (a baseline's candidates by list): counted in place, no sort
        counted = np.bincount(keys, minlength=n_rows * n_columns)
        keys = np.flatnonzero(counted)
        counts = counted[keys].astype(np.float64)
    else:
        keys.sort()
        new = starts(keys)
        first = np.flatnonzero(new)
        counts = np.diff(np.append(first, keys.size)).astype(np.float64)
        keys = keys[new]
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // n_columns, minlength=n_rows), out=indptr[1:])
    index = np.int32 if max(n_columns, keys.size) < 2**31 else np.int64
    return sparse.csr_matrix((counts, (keys % n_columns).astype(index), indptr.astype(index)),
                             shape=(n_rows, n_columns))


def sparse_product(left, right):
    """``left @ right`` of two scipy CSR matrices, computed in one pass where it can be.

    scipy's product makes two passes over the work: one to count the result's
    entries, one to compute them. Here the result's size is bounded instead
    (the multiply-adds, at most the whole rows x columns) and only the second
    pass runs (``scipy.sparse._sparsetools.csr_matmat``, which scipy's own
    product calls): about 35% less time on the co-occurrence blocks, for
    buffers of at most that bound. Where that routine is missing or refuses
    the arguments (another scipy), the public product runs instead.
    """
    from scipy import sparse

    try:
        from scipy.sparse._sparsetools import csr_matmat
    except ImportError:  # another scipy: its public product
        return left @ right
    n_rows, n_cols = left.shape[0], right.shape[1]
    # every multiply-add adds at most one entry, and there are at most n_rows * n_cols
    bound = min(int(np.diff(right.indptr)[left.indices].sum()), n_rows * n_cols)
    index = np.int32 if max(bound, left.nnz, right.nnz, n_rows, n_cols) < 2**31 else np.int64
    indptr = np.empty(n_rows + 1, dtype=index)
    indices = np.empty(bound, dtype=index)
    data = np.empty(bound, dtype=np.result_type(left.dtype, right.dtype))
    try:
        csr_matmat(n_rows, n_cols, left.indptr.astype(index, copy=False),
                   left.indices.astype(index, copy=False), left.data,
                   right.indptr.astype(index, copy=False),
                   right.indices.astype(index, copy=False), right.data, indptr, indices, data)
    except (TypeError, ValueError):  # another signature: the public product
        return left @ right
    nnz = int(indptr[-1])
    return sparse.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(n_rows, n_cols))


#: Row blocks of the co-occurrence product (:class:`CooccurrenceSimilarity`): each block of
#: items is multiplied with itself and the items after it only, so the product does
#: (1 + 1/n) / 2 of the work of the whole symmetric matrix.
COOCCURRENCE_BLOCKS = 8


class CooccurrenceSimilarity:
    """Cosine similarity of items' user-incidence vectors in the history:
    |U_i & U_j| / sqrt(|U_i| |U_j|), U_i the distinct users with item i (0 when either is empty).

    The co-occurrence counts are sparse products of the items x users
    incidence matrix A with its transpose, looked up by (i, j) as sorted
    integer keys (int32 below about 46,000 items). The count matrix is
    symmetric, so only its upper block triangle is computed: the items are
    cut into :data:`COOCCURRENCE_BLOCKS` blocks of about equal work, and
    block b, items lo:hi, is ``A[lo:] @ A[lo:hi].T``: every item from lo on
    against the block's items (about 56% of the work of the whole product,
    and of its memory). Multiplied this way round, the product's running
    sums are a row of hi - lo items (in cache), only the block's rows are
    transposed, and the CSC form of the result (a counting sort, linear)
    lists each block item's partners j in order, so its keys
    ``base_b + (i - lo) * (n - lo) + (j - lo)`` come out sorted. The blocks
    run in threads (scipy releases the GIL) and are searched one by one.
    A pair (i, j) is looked up as (min, max). Time and memory grow with the
    number of co-occurring item pairs, sum over history users of (their
    distinct items)**2 / 2: 8 to 12 bytes a pair. The product is the floor
    of the cost: in a benchmark of 10^6 history rows (50 items a user),
    about 3*10^7 multiply-adds.

    Computing only the pairs a metric needs does not pay there: the pairs of
    the top-k lists and of (relevant item, history item) reach nearly every
    item of a 20,000-item catalogue, and |U_i & U_j| pair by pair costs
    min(|U_i|, |U_j|), about 300 on average, against about 20 a needed pair
    for the product; enumerating every history user's item pairs in numpy
    and keeping the needed ones costs about 3x the product.

    ``parallel=False`` computes the blocks one after another in the calling
    thread: for a build in the background, beside other work that needs
    the other core.
    """

    def __init__(self, users: np.ndarray, items: np.ndarray, n_users: int, n_items: int, *,
                 blocks: int = COOCCURRENCE_BLOCKS, parallel: bool = True):
        from scipy import sparse  # here: only diversity and serendipity need it

        incidence = sparse.csr_matrix((np.ones(users.size, dtype=np.int32), (items, users)),
                                      shape=(n_items, max(n_users, 1)))
        incidence.sum_duplicates()
        incidence.data[:] = 1                        # distinct (user, item) pairs
        #: the same distinct pairs by user (users x items, each row's items sorted)
        self.by_user = incidence.T.tocsr()
        per_item = np.diff(incidence.indptr)
        self.norm = np.sqrt(per_item.astype(np.float64))
        self.n_items = n_items
        #: items x users, distinct pairs (the rows of :meth:`group_products`' unit vectors)
        self.incidence = incidence
        # block edges: about equal shares of the whole product's work, sum over the item's
        # users of their distinct items
        per_user = np.diff(self.by_user.indptr)
        work = np.cumsum(np.bincount(np.repeat(np.arange(n_items), per_item),
                                     weights=per_user[incidence.indices], minlength=n_items))
        shares = work[-1] * np.arange(1, blocks) / blocks \
            if n_items else np.zeros(0)
        edges = np.concatenate([[0], np.searchsorted(work, shares, side="right"), [n_items]])
        self.edges = edges = edges[starts(edges)]    # sorted already: distinct edges
        # block b (items lo:hi, partners lo:n_items) holds keys base_b + (i - lo) * (n - lo) +
        # (j - lo): every block's keys after the previous block's
        height = np.diff(edges)
        width = n_items - edges[:-1]
        self.base = np.concatenate([[0], np.cumsum(height * width)])
        n_keys = int(self.base[-1])
        # int32 keys when every key fits (half the memory, and the binary searches of
        # __call__ touch half the cache lines)
        self.key_type = np.dtype(np.int32 if n_keys < 2**31 else np.int64)
        # per item i as the smaller of a pair in block b: its key is offset[i] + j, offset =
        # base_b + (i - lo) * (n - lo) - lo
        block_of = np.repeat(np.arange(height.size), height)
        self.offset = (self.base[block_of] + (np.arange(n_items) - edges[block_of]) * width[block_of]
                       - edges[block_of]).astype(self.key_type)

        def block(b: int) -> tuple[np.ndarray | None, np.ndarray]:
            lo, hi = int(edges[b]), int(edges[b + 1])
            # exact int32 counts (at most n_users): rows j - lo, columns i - lo
            co = sparse_product(incidence[lo:], incidence[lo:hi].T.tocsr())
            if height[b] * width[b] <= 2 * co.nnz:
                # at least half the block's pairs co-occur (the popular items' blocks): every
                # count in place, key - base_b, in no more memory than keys and counts take
                dense = np.zeros(height[b] * width[b], dtype=co.data.dtype)
                at = co.indices.astype(np.int64) * width[b]
                at += np.repeat(np.arange(width[b]), np.diff(co.indptr))
                dense[at] = co.data
                return None, dense
            # column i - lo of the CSC form holds the block item's partners j - lo in order
            co = co.tocsc()
            keys = np.repeat(self.offset[lo:hi] + self.key_type.type(lo), np.diff(co.indptr))
            keys += co.indices.astype(self.key_type, copy=False)
            return keys, co.data

        #: per block: its keys (ascending) and their counts, or (None, every count of the
        #: block by key - base_b) for a dense block
        self.blocks = thread_map(block, range(height.size)) if parallel \
            else [block(b) for b in range(height.size)]
        #: the caller's item codes -> these (None: the same codes); see :meth:`recoded`
        self.item_map: np.ndarray | None = None

    def recoded(self, item_map: np.ndarray) -> CooccurrenceSimilarity:
        """The same similarity looked up by another coding of the items: ``item_map`` gives
        each of those codes this similarity's code, or -1 for an item outside the history
        (similarity 0 with every item, as an item without users has here)."""
        if self.item_map is not None:
            raise RuntimeError("recoded() takes the similarity's own codes, not recoded ones")
        copy = object.__new__(CooccurrenceSimilarity)
        copy.__dict__.update(self.__dict__)
        # the code n_items stands for "outside": norm 0, so every similarity with it is 0
        copy.item_map = np.where(item_map < 0, self.n_items, item_map)
        copy.norm = np.append(self.norm, 0.0)
        copy.offset = np.append(self.offset, self.offset.dtype.type(0))
        return copy

    def group_products(self, labels: np.ndarray, items: np.ndarray, other_labels: np.ndarray,
                       other_items: np.ndarray, n_labels: int, *, square: bool = True,
                       cross: bool = True, own: bool | None = None, parallel: bool = True
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`group_products` of the items' unit vectors: their user-incidence rows
        divided by their norms, whose inner products are this similarity (an item outside
        the history, or without users, is the zero vector)."""
        unit = self.unit
        owns: np.ndarray = np.zeros(n_labels)
        if square if own is None else own:
            # group_products' own sums, from each item's squared norm looked up in the
            # caller's codes: an item outside the history adds 0.0, which leaves every sum
            # (of numbers >= 0) as it is
            per_item = np.asarray(unit.multiply(unit).sum(axis=1)).ravel()
            if self.item_map is not None:
                per_item = np.append(per_item, 0.0)[self.item_map]
            owns = np.bincount(labels, weights=per_item[items], minlength=n_labels)
        if not square and not cross:
            return np.zeros(n_labels), np.zeros(n_labels), owns
        if self.item_map is not None:
            items, other_items = self.item_map[items], self.item_map[other_items]
            inside, other_inside = items < self.n_items, other_items < self.n_items
            labels, items = labels[inside], items[inside]
            other_labels, other_items = other_labels[other_inside], other_items[other_inside]
        squares, crosses, _ = group_products(unit, labels, items, other_labels, other_items,
                                             n_labels, square=square, cross=cross, own=False,
                                             parallel=parallel)
        return squares, crosses, owns

    @functools.cached_property
    def unit(self):
        """The items' unit vectors (items x users, CSR): their user-incidence rows divided
        by their norms (the zero vector for an item without users)."""
        from scipy import sparse

        scale = np.divide(1.0, self.norm[:self.n_items], out=np.zeros(self.n_items),
                          where=self.norm[:self.n_items] > 0)
        a = self.incidence
        return sparse.csr_matrix((np.repeat(scale, np.diff(a.indptr)), a.indices, a.indptr),
                                 shape=a.shape)

    def __call__(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        if self.item_map is not None:
            i, j = self.item_map[i], self.item_map[j]
        low, high = np.minimum(i, j), np.maximum(i, j)
        key = self.offset[low] + high.astype(self.key_type, copy=False)
        co = np.zeros(key.size)
        # sorted needles: consecutive binary searches touch nearby keys (cache-friendly); the
        # needle and its place sorted together as one int64 when both fit in 32 bits
        if key.size < 2**31 and self.key_type == np.int32:
            both = key.astype(np.int64) << 32
            both |= np.arange(key.size)
            both.sort()
            by_key, needles = both & 0xFFFFFFFF, (both >> 32).astype(np.int32)
        else:
            by_key = np.argsort(key)
            needles = key[by_key]
        found = np.zeros(key.size)
        cuts = np.searchsorted(needles, self.base[1:-1].astype(needles.dtype))
        for (keys, counts), base, lo, hi in zip(self.blocks, self.base, np.r_[0, cuts],
                                                np.r_[cuts, key.size]):
            if hi == lo:
                continue
            if keys is None:   # dense: a count per key
                at = needles[lo:hi] - needles.dtype.type(base)
                # a recoded "outside" item may point past the block (its similarity is 0)
                found[lo:hi] = counts[np.minimum(at, counts.size - 1)]
            elif keys.size:
                at = np.minimum(np.searchsorted(keys, needles[lo:hi]), keys.size - 1)
                found[lo:hi] = np.where(keys[at] == needles[lo:hi], counts[at], 0)
        co[by_key] = found
        denominator = self.norm[i] * self.norm[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, co / denominator, 0.0)




@dataclass(frozen=True)
class WholeLists:
    r"""Per list: :math:`\lVert \sum_i u_i \rVert^2` over all its rows' items, as
    :func:`group_products` gives it for a group that holds every row of the list (the
    random baseline's under ``ties="average"``), computed beforehand (in the background,
    while the model's rows are prepared), and the list's rows it was summed over."""

    squares: np.ndarray
    rows: np.ndarray

    def holds(self, lists: np.ndarray, size: np.ndarray) -> bool:
        """Whether the groups of ``lists``, of ``size`` rows each, are those whole lists (a
        group holds rows of its list only, and a list's rows are distinct items)."""
        return bool(np.array_equal(self.rows[lists], size))


@dataclass(frozen=True)
class BeyondContext:
    """What every partition of users shares: computed once from the whole input.

    Item codes index every per-item array. ``history`` holds the history's
    distinct items by user code (start, count, items), needed by serendipity
    for the users at hand only.
    """

    n_items: int
    catalogue: np.ndarray                   # bool per item code: in the catalogue
    popularity: np.ndarray | None = None    # history rows per item code
    information: np.ndarray | None = None   # -log2 p(i) per item code
    tail: np.ndarray | None = None          # bool per item code: in the long tail
    similarity: object = None               # FeatureSimilarity or CooccurrenceSimilarity
    history: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    #: the squares of the lists' whole candidate sets, computed beforehand (see WholeLists)
    whole_lists: Callable[[], WholeLists | None] | None = None


@dataclass
class BeyondSums:
    """Sums over a set of users from which every beyond-accuracy value follows.

    Sums of disjoint sets of users add up (``+``), field by field: a
    distributed engine computes one per partition and adds them.
    """

    n_lists: int = 0                         # users with at least one scored row
    exposure: np.ndarray | None = None       # per item: sum over users of P(item in top k)
    certain: np.ndarray | None = None        # per item: users whose top k surely holds it
    log_miss: np.ndarray | None = None       # per item: sum of log P(top k misses it), other users
    p_square: np.ndarray | None = None       # per item: sum over users of P(item in top k)**2
    totals: dict = field(default_factory=dict)   # per-user metric: sum over users where defined
    counts: dict = field(default_factory=dict)   # per-user metric: users where defined

    def __add__(self, other: BeyondSums) -> BeyondSums:
        def add(a, b):
            if a is None or b is None:
                return b if a is None else a
            if isinstance(a, dict):
                return {key: a.get(key, 0) + b.get(key, 0) for key in a.keys() | b.keys()}
            return a + b
        return BeyondSums(**{f.name: add(getattr(self, f.name), getattr(other, f.name))
                             for f in fields(self)})


_T = TypeVar("_T")


def built(value: _T | None, what: str) -> _T:
    """A part of the context or of the sums that the metrics asked for need (built with them)."""
    if value is None:
        raise ValueError(f"{what} was not computed; build the context and the sums with the "
                         "metrics that need it")
    return value
