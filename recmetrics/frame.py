r"""Evaluate a model's scores from a DataFrame: every metric, over every user, in one call.

``pred`` holds one row per scored (user, item) with a score, and either a
label column or a separate ``truth`` frame of (user, item, label) where the
label is a relevance grade (0 = not relevant). Each user's items are ranked
by descending score; the ranking metrics are computed per user by the same
kernels as the single-list functions in :mod:`recmetrics.ranking` and
averaged over users.

Users and what happens to them
------------------------------
* A user with no relevant item (in ``truth``, or among ``pred``'s labels) has
  no recall, AP, RR or NDCG: by default the user is **skipped** for the
  ranking metrics and counted in ``n_skipped`` (see ``no_relevant`` below).
* A user with relevant items in ``truth`` but no row in ``pred`` scores 0 on
  every ranking metric and is counted in ``n_without_predictions``.
* Relevant items of ``truth`` that ``pred`` did not score still count in
  recall, AP (denominator "relevant") and the ideal DCG, as in trec_eval.

Ids
---
One id policy for DataFrames, CSV and Parquet: ids are compared as canonical
text. Surrounding whitespace is stripped and whole numbers are written as
integers, so ``7``, ``7.0``, ``"7"`` and ``" 7"`` are one id, and an int
column in ``pred`` joins a text column in ``truth``; any other text is kept
as it is, so ``"001"`` and ``"1"`` are two ids. When more than half of
truth's users with a relevant item (or more than 90% of at least ten
relevant rows) find no scored row in ``pred``, a :class:`~recmetrics.RecmetricsWarning` gives the counts and
example ids from both sides: the usual sign of ids written differently.

Users with no relevant item
---------------------------
``no_relevant`` decides, as in the single-list functions: ``"skip"`` (the
default) leaves them out of every ranking mean and counts them in
``n_skipped``; ``"zero"`` counts them as 0; ``"error"`` refuses.

Ties in score
-------------
``ties="average"`` returns the expected value of each metric over all
orders of tied items (McSherry & Najork 2008); for AUC a tied pair counts 1/2.
``"optimistic"`` ranks relevant items first within a tie (higher grades
first) and ``"pessimistic"`` last, which bound the average from above and
below. Peers break ties arbitrarily (trec_eval by document id, ranx by sort
order), so a constant score can look good or bad by accident; under the
default it scores exactly what random ordering would.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from . import _kernels
from ._validation import (DENOMINATORS, GAINS, GAUC_WEIGHTS, IDEALS, NO_RELEVANT, TIES,
                          Denominator, Gain, GaucWeight, Ideal, NoRelevant, RecmetricsWarning,
                          Ties, as_frame, caller_stacklevel, canonical_ids, check_k_values,
                          check_metrics, check_n_resamples, check_option, check_probability,
                          check_probability_scores, check_id_codes, check_seed, check_unique_keys,
                          numeric_column, plain,
                          warn_unmatched)
from .probability import DEFAULT_EPS
from .stats import bootstrap_ci

__all__ = ["evaluate", "evaluate_per_user", "compare", "METRICS", "DEFAULT_METRICS",
           "PROBABILITY_METRICS"]

#: Metric names accepted by ``metrics=``, in the order they are reported.
METRICS = ("auc", "gauc", "precision", "recall", "hit_rate", "map", "mrr", "ndcg",
           "logloss", "ne", "brier", "ece")
#: The metrics computed when ``metrics=None``: those that need no probabilities.
DEFAULT_METRICS = METRICS[:8]
_AT_K = ("precision", "recall", "hit_rate", "map", "ndcg")
_RANKING = _AT_K + ("mrr",)
#: Metrics that read the scores as probabilities of relevance (grade > 0).
PROBABILITY_METRICS = ("logloss", "ne", "brier", "ece")
#: Equal-width bins of the ``ece`` metric (as recmetrics.expected_calibration_error's default).
ECE_BINS = 10


def _codes(column: str, *frames) -> tuple[list[np.ndarray], pd.Index]:
    """Joint integer codes of one id column of several named frames, and the distinct ids.

    ``frames`` are (name, DataFrame) pairs. Each column is factorized as it is
    (hashing its native type; a missing id is refused), the id policy is
    applied to its distinct values only, and the canonical values of all
    columns are factorized together: the per-row work is one hash and one
    gather, whatever the id type.
    """
    parts = []
    for name, frame in frames:
        codes, uniques = pd.factorize(frame[column])
        check_id_codes(name, column, codes)
        parts.append((codes, uniques))
    canonical = canonical_ids(*(pd.Series(uniques) for _, uniques in parts))
    joined = np.concatenate(canonical) if isinstance(canonical[0], np.ndarray) else pd.concat(
        canonical, ignore_index=True)
    joint, uniques = pd.factorize(joined)
    offsets = np.cumsum([0] + [len(u) for _, u in parts])
    return [joint[offset + codes] for offset, (codes, _) in zip(offsets, parts)], pd.Index(uniques)


class _Prepared:
    """Validated input: rows ranked per user, judged relevant grades, and AUC pair counts."""

    def __init__(self, pred, truth, *, user, item, score, label, ties):
        columns = {"user": user, "item": item, "score": score}
        if truth is None:
            columns["label"] = label
        as_frame("pred", pred, columns)
        scores = numeric_column("pred", pred, score)
        n = len(pred)
        if truth is None:
            (users,), user_ids = _codes(user, ("pred", pred))
            (items,), _ = _codes(item, ("pred", pred))
            keys = users.astype(np.int64) * (int(items.max()) + 1) + items
            check_unique_keys("pred", keys, pred, user, item)
            grades = numeric_column("pred", pred, label, grades=True)
            missing_users, missing_grades = np.zeros(0, dtype=np.intp), np.zeros(0)
            self.n_without_predictions = 0
        else:
            as_frame("truth", truth, {"user": user, "item": item, "label": label})
            truth_grades = numeric_column("truth", truth, label, grades=True)
            (users, truth_users), user_ids = _codes(user, ("pred", pred), ("truth", truth))
            (items, truth_items), item_ids = _codes(item, ("pred", pred), ("truth", truth))
            width = len(item_ids)
            keys = users.astype(np.int64) * width + items
            check_unique_keys("pred", keys, pred, user, item)
            truth_keys = truth_users.astype(np.int64) * width + truth_items
            check_unique_keys("truth", truth_keys, truth, user, item)
            where = pd.Index(truth_keys).get_indexer(keys)
            scored = where >= 0
            grades = np.zeros(n)
            grades[scored] = truth_grades[where[scored]]
            found = np.zeros(truth_keys.size, dtype=bool)
            found[where[scored]] = True
            relevant = truth_grades > 0
            unscored = relevant & ~found
            judged_users = np.unique(truth_users[relevant])
            with_rows = np.zeros(len(user_ids), dtype=bool)
            with_rows[users] = True
            lacking = judged_users[~with_rows[judged_users]]
            self.n_without_predictions = int(lacking.size)
            if 2 * lacking.size > judged_users.size:
                warn_unmatched("users with a relevant item", lacking.size, judged_users.size,
                               list(user_ids[lacking[:3]]), list(user_ids[users[:3]]), "users",
                               share=0.5)
            else:
                missing_rows = np.flatnonzero(unscored)
                warn_unmatched("relevant (user, item) rows", missing_rows.size,
                               int(relevant.sum()),
                               [(user_ids[truth_users[r]], item_ids[truth_items[r]])
                                for r in missing_rows[:3]],
                               [(user_ids[u], item_ids[i]) for u, i in zip(users[:3], items[:3])],
                               "rows", share=0.9, at_least=10)
            missing_users, missing_grades = truth_users[unscored], truth_grades[unscored]
            # The users are those with scored rows or relevant truth rows; drop the rest.
            present = with_rows
            present[missing_users] = True
            remap = np.cumsum(present) - 1
            users, missing_users = remap[users], remap[missing_users]
            user_ids = user_ids[present]
        self.users = user_ids
        self.score_column = score
        self.n_users = len(user_ids)
        self.n_rows = n
        order, by_score = _kernels.rank_rows(users, scores, grades, ties)
        positive = grades[by_score] > 0
        self.n_positive = int(positive.sum())
        self.global_pairs = _kernels.group_pair_counts(
            np.zeros(n, dtype=np.int8), scores[by_score], positive, 1)[:2]
        del by_score, positive
        self.lists = users[order]
        self.scores = scores[order]
        self.grades = grades[order]
        del order, users, scores, grades
        new_group = _kernels.starts(self.scores) if ties == "average" else None
        layout = _kernels.Layout(self.lists, self.grades, self.n_users, new_group)
        relevant_rows = self.grades > 0
        self.ranked = _kernels.RankedLists(
            layout, np.r_[self.lists[relevant_rows], missing_users],
            np.r_[self.grades[relevant_rows], missing_grades])

    def user_auc(self, ties: str):
        """Per-user AUC (NaN for one-class users), positives and negatives."""
        wins, wins_or_ties, pos, neg = _kernels.group_pair_counts(
            self.lists, self.scores, self.grades > 0, self.n_users)
        return _kernels.auc_per_list(wins, wins_or_ties, pos, neg, ties), pos, neg

    def global_auc(self, ties: str) -> float:
        n_neg = self.n_rows - self.n_positive
        if self.n_positive == 0 or n_neg == 0:
            return float("nan")
        wins, wins_or_ties = (int(c[0]) for c in self.global_pairs)
        return float(_kernels.auc_from_counts(wins, wins_or_ties, self.n_positive * n_neg, ties))


def _check_options(*, k, metrics, ties, gain, ideal, denominator, gauc_weight, no_relevant) -> dict:
    return {"ks": check_k_values(k), "metrics": check_metrics(metrics, METRICS, DEFAULT_METRICS),
            "ties": check_option("ties", ties, TIES), "gain": check_option("gain", gain, GAINS),
            "ideal": check_option("ideal", ideal, IDEALS),
            "denominator": check_option("denominator", denominator, DENOMINATORS),
            "gauc_weight": check_option("gauc_weight", gauc_weight, GAUC_WEIGHTS),
            "no_relevant": check_option("no_relevant", no_relevant, NO_RELEVANT)}


def _conventions(o: dict) -> dict:
    return {"ties": o["ties"], "gain": o["gain"], "ideal": o["ideal"],
            "denominator": o["denominator"], "gauc_weight": o["gauc_weight"],
            "no_relevant": o["no_relevant"], "k": o["ks"]}


def _convention(metric: str, o: dict) -> str:
    """The conventions that change one metric's number, as shown in the table."""
    ties = f"ties={o['ties']}"
    if metric == "auc":
        return ties
    if metric in PROBABILITY_METRICS:
        return f"bins={ECE_BINS} uniform" if metric == "ece" else \
            ("natural log, clipped at eps" if metric in ("logloss", "ne") else "")
    if metric == "gauc":
        return f"gauc_weight={o['gauc_weight']}, {ties}"
    users = f"no_relevant={o['no_relevant']}"
    if metric == "map":
        return f"denominator={o['denominator']}, {ties}, {users}"
    if metric == "ndcg":
        return f"gain={o['gain']}, ideal={o['ideal']}, {ties}, {users}"
    return f"{ties}, {users}"


def _auc_note(prep: _Prepared) -> str:
    if prep.n_positive == 0:
        return "undefined: no scored row is relevant, and AUC needs positives and negatives"
    return "undefined: every scored row is relevant, and AUC needs positives and negatives"


_GAUC_NOTE = "undefined: no user has both a relevant and a non-relevant scored row"
_RANKING_NOTE = "undefined: no user has a relevant item"


def _per_user(prep: _Prepared, o: dict):
    """Every requested per-user value, as {column: array}, with the users each mean counts.

    Returns (columns, counted, auc_parts): ``counted`` marks the users the
    ranking means include under ``no_relevant``; ``auc_parts`` is (per-user
    AUC, positives, negatives) when GAUC is requested.
    """
    ranked = prep.ranked
    has_relevant = ranked.has_relevant
    if o["no_relevant"] == "error" and not has_relevant.all():
        lacking = np.flatnonzero(~has_relevant)
        raise ValueError(f"{lacking.size:,} user(s) have no relevant item (e.g. "
                         f"{', '.join(repr(u) for u in prep.users[lacking[:3]])}), so their "
                         "ranking metrics are undefined; pass no_relevant='skip' to leave them out "
                         "or 'zero' to count them as 0")
    counted = has_relevant if o["no_relevant"] == "skip" else np.ones(prep.n_users, dtype=bool)
    columns, auc_parts = {}, None
    if "gauc" in o["metrics"]:
        auc_parts = prep.user_auc(o["ties"])
        columns["auc"] = auc_parts[0]
    for metric in (m for m in o["metrics"] if m in _RANKING):
        for cut in ([None] if metric == "mrr" else o["ks"]):
            values = ranked.metric(metric, cut, gain=o["gain"], ideal=o["ideal"],
                                   denominator=o["denominator"])
            values = np.where(has_relevant, values, 0.0 if o["no_relevant"] == "zero" else np.nan)
            columns[metric if cut is None else f"{metric}@{cut}"] = values
    return columns, counted, auc_parts


def _table(prep: _Prepared, o: dict, *, ci=None, n_resamples=1000, seed=0):
    """The tidy table: one row per metric and cut-off."""
    columns, counted, auc_parts = _per_user(prep, o)
    rng = np.random.default_rng(seed)
    n_counted = int(counted.sum())
    n_skipped = prep.n_users - n_counted
    rows, undefined = [], {}

    def add(metric, cut, value, n_users, n_skipped, n_without, note="", values=None,
            weights=None, interval=None):
        row = {"metric": metric, "k": cut, "value": float(value), "n_users": n_users,
               "n_skipped": n_skipped, "n_without_predictions": n_without,
               "conventions": _convention(metric, o), "note": note}
        if note:
            undefined.setdefault(metric, note)
        if ci is not None:
            low, high = interval or (float("nan"), float("nan"))
            if values is not None and len(values) > 1:
                low, high = bootstrap_ci(values, weights=weights, confidence=ci,
                                         n_resamples=n_resamples, seed=rng)
            row["ci_low"], row["ci_high"] = low, high
        rows.append(row)

    if "auc" in o["metrics"]:
        value = prep.global_auc(o["ties"])
        interval = _auc_bootstrap(prep, o["ties"], ci, n_resamples, rng) \
            if ci is not None and not np.isnan(value) else None
        add("auc", None, value, int((prep.ranked.n_rows > 0).sum()), 0, 0,
            _auc_note(prep) if np.isnan(value) else "", interval=interval)
    if auc_parts is not None:
        user_auc, pos, neg = auc_parts
        weights = _kernels.gauc_weights(pos, neg, o["gauc_weight"])
        defined = ~np.isnan(user_auc)
        value = _kernels.gauc(user_auc, weights)
        add("gauc", None, value, int(defined.sum()), int((~defined).sum()), 0,
            _GAUC_NOTE if np.isnan(value) else "", user_auc[defined], weights[defined])
    for name, values in columns.items():
        if name == "auc":
            continue
        metric, _, cut = name.partition("@")
        kept = values[counted]
        value = kept.mean() if kept.size else float("nan")
        add(metric, int(cut) if cut else None, value, n_counted, n_skipped,
            prep.n_without_predictions, _RANKING_NOTE if np.isnan(value) else "", kept)
    probability = [m for m in o["metrics"] if m in PROBABILITY_METRICS]
    if probability:
        _probability_rows(prep, probability, add)
    for metric, note in undefined.items():
        warnings.warn(f"{metric} is NaN: {note}", RecmetricsWarning, stacklevel=caller_stacklevel())
    table = pd.DataFrame(rows)
    table["k"] = table["k"].astype("Int64")
    table.attrs["conventions"] = _conventions(o)
    return table, columns


def _probability_rows(prep: _Prepared, metrics: list[str], add) -> None:
    """Log loss, normalized entropy, Brier score and ECE over every scored row.

    The score is read as the probability that the row is relevant (grade > 0).
    Relevant truth rows that were never scored have no probability and do not
    count, as for AUC. Log loss and Brier get bootstrap intervals over users
    (each user's mean loss, weighted by rows); NE and ECE, ratios of sums, do not.
    """
    check_probability_scores("pred", prep.score_column, prep.scores, metrics)
    labels = (prep.grades > 0).astype(np.int8)
    rows = prep.ranked.n_rows
    has_rows = rows > 0
    n_users = int(has_rows.sum())
    base_rate = float(labels.mean())
    for metric in metrics:
        if metric in ("logloss", "brier", "ne"):
            loss = _kernels.log_loss(labels, prep.scores, DEFAULT_EPS) if metric != "brier" \
                else _kernels.brier(labels, prep.scores)
            per_user = np.bincount(prep.lists, weights=loss, minlength=prep.n_users)[has_rows] \
                / rows[has_rows]
            if metric == "ne":
                if base_rate in (0.0, 1.0):
                    add(metric, None, float("nan"), n_users, 0, 0,
                        "undefined: every scored row has the same class, so the entropy of the "
                        "base rate (the denominator) is 0")
                else:
                    add(metric, None, loss.mean() / float(_kernels.binary_entropy(base_rate)),
                        n_users, 0, 0)
            else:
                add(metric, None, loss.mean(), n_users, 0, 0, "", per_user, rows[has_rows])
        else:
            add(metric, None, _kernels.expected_calibration_error(labels, prep.scores, ECE_BINS),
                n_users, 0, 0)


def _user_table(prep: _Prepared, columns: dict) -> pd.DataFrame:
    ranked = prep.ranked
    table = pd.DataFrame({"user": prep.users, "n_items": ranked.n_rows,
                          "n_positives": np.bincount(prep.lists[prep.grades > 0],
                                                     minlength=prep.n_users),
                          "n_relevant": ranked.n_relevant, **columns})
    return table


def _auc_bootstrap(prep: _Prepared, ties: str, confidence: float, n_resamples: int, rng):
    """Percentile interval of global AUC when users are resampled with replacement.

    A resample only changes row weights (how often each user was drawn), so the
    rows are sorted once. Each positive's lower and tied negatives are located
    once (``lo``, ``hi`` in the sorted negatives); the negatives between two
    consecutive such boundaries are summarised per user in a sparse (gap x
    user) count matrix, and the positives per user and boundary in another.
    A chunk of resamples, as a (user x resample) matrix of draw counts, then
    costs two sparse products: a weighted Mann-Whitney U for every resample.
    """
    from scipy import sparse

    positive = prep.grades > 0
    if positive.all() or not positive.any():
        return float("nan"), float("nan")
    neg_order = np.argsort(prep.scores[~positive], kind="stable")
    neg_sorted = prep.scores[~positive][neg_order]
    neg_users = prep.lists[~positive][neg_order]
    pos_scores, pos_users = prep.scores[positive], prep.lists[positive]
    lo = np.searchsorted(neg_sorted, pos_scores, side="left")
    hi = np.searchsorted(neg_sorted, pos_scores, side="right")
    bounds, where = np.unique(np.r_[lo, hi], return_inverse=True)
    gap_of_neg = np.searchsorted(bounds, np.arange(neg_sorted.size), side="right") - 1
    keep = gap_of_neg >= 0  # negatives below the lowest boundary are below every positive
    n_gaps, n_users = bounds.size, prep.n_users
    # negatives of each user between boundary g and g + 1; a resample's cumulative sum over
    # gaps gives, at boundary g, the weight of the negatives below it
    gaps = sparse.csr_matrix((np.ones(int(keep.sum())), (gap_of_neg[keep], neg_users[keep])),
                             shape=(n_gaps, n_users))
    n_pos = lo.size
    at_lo = sparse.csr_matrix((np.ones(n_pos), (where[:n_pos], pos_users)), shape=(n_gaps, n_users))
    at_hi = sparse.csr_matrix((np.ones(n_pos), (where[n_pos:], pos_users)), shape=(n_gaps, n_users))
    pos_per_user = np.bincount(pos_users, minlength=n_users).astype(np.float64)
    neg_per_user = np.bincount(neg_users, minlength=n_users).astype(np.float64)
    below_all = np.bincount(neg_users[~keep], minlength=n_users).astype(np.float64)
    values = np.empty(n_resamples)
    chunk = max(1, min(n_resamples, 4_000_000 // max(n_gaps, n_users)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        counts = np.empty((n_users, size))
        for b in range(size):
            counts[:, b] = np.bincount(rng.integers(0, n_users, n_users), minlength=n_users)
        per_gap = gaps @ counts
        below = np.cumsum(per_gap, axis=0)
        below -= per_gap  # negatives in earlier gaps, i.e. below boundary g ...
        below += below_all @ counts  # ... plus those below every boundary
        wins = np.einsum("gr,gr->r", at_lo @ counts, below)
        wins_or_ties = np.einsum("gr,gr->r", at_hi @ counts, below)
        pairs = (pos_per_user @ counts) * (neg_per_user @ counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[start:start + size] = _kernels.auc_from_counts(wins, wins_or_ties, pairs, ties)
    low, high = np.nanquantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


_PARAMETERS = r"""
    pred : pandas.DataFrame
        One row per scored (user, item): columns ``user``, ``item``, ``score``
        and, when ``truth`` is None, ``label`` (a relevance grade >= 0; 0 = not
        relevant; AUC and GAUC treat grade > 0 as positive).
    truth : pandas.DataFrame, optional
        Judged (user, item, label) rows. Pairs of ``pred`` missing from it have
        grade 0; relevant pairs missing from ``pred`` count as not retrieved.
    k : int or sequence of int, default 10
        Cut-off(s) for precision, recall, hit rate, MAP and NDCG.
    metrics : sequence of str, optional
        Any of ``METRICS``; default ``DEFAULT_METRICS`` (AUC, GAUC and the
        ranking metrics). ``"logloss"``, ``"ne"`` (normalized entropy),
        ``"brier"`` and ``"ece"`` (expected calibration error, 10 equal bins)
        read each score as the probability that the row is relevant and are
        computed over all scored rows when asked for; scores outside [0, 1]
        are then refused.
    user, item, score, label : str
        Column names. Ids follow the id policy of the module docstring.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        See the module docstring.
    gain, ideal : str
        NDCG conventions, as in :func:`recmetrics.ndcg` (defaults "exponential",
        "truth").
    denominator : str
        AP denominator, as in :func:`recmetrics.average_precision` (default
        "relevant": all relevant items, as trec_eval's map_cut).
    gauc_weight : {"impressions", "clicks", "uniform"}, default "impressions"
        GAUC user weights, as in :func:`recmetrics.group_auc`.
    no_relevant : {"skip", "zero", "error"}, default "skip"
        Users with no relevant item: left out of the ranking means (counted in
        ``n_skipped``), counted as 0, or refused; as in the single-list
        functions."""


def evaluate(pred, truth=None, *, k=10, metrics=None, user: str = "user", item: str = "item",
             score: str = "score", label: str = "label", ties: Ties = "average",
             gain: Gain = "exponential", ideal: Ideal = "truth",
             denominator: Denominator = "relevant", gauc_weight: GaucWeight = "impressions",
             no_relevant: NoRelevant = "skip", ci: float | None = None, n_resamples: int = 1000,
             seed=0) -> pd.DataFrame:
    r"""Evaluate scored (user, item) rows: AUC, GAUC, P@k, R@k, HR@k, MAP@k, MRR and NDCG@k.

    Parameters
    ----------{parameters}
    ci : float, optional
        Confidence level (e.g. 0.95) for percentile bootstrap intervals from
        resampling users (``n_resamples`` times, 100 to 10,000,000, seeded by
        ``seed``); adds columns ``ci_low`` and ``ci_high``. Means over users
        use :func:`recmetrics.bootstrap_ci`; global AUC is recomputed on each
        resample with the drawn users' rows weighted by how often they were
        drawn.

    Returns
    -------
    pandas.DataFrame
        One row per metric and cut-off: ``metric, k, value, n_users,
        n_skipped, n_without_predictions, conventions, note`` (``k`` is
        missing for AUC, GAUC and MRR). ``n_users`` counts the users averaged
        (for AUC: all users with scored rows; for GAUC: users with both
        classes). ``note`` says why a value is NaN (a
        :class:`~recmetrics.RecmetricsWarning` says it too). The conventions
        used are also in ``result.attrs["conventions"]``. Per-user values:
        :func:`evaluate_per_user`.

    References
    ----------
    McSherry, F. & Najork, M. (2008). Computing information retrieval performance measures
    efficiently in the presence of tied scores. *ECIR*.

    Examples
    --------
    >>> pred = pd.DataFrame({{"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]}})
    >>> table = evaluate(pred, k=2, metrics=["precision", "mrr"])
    >>> table[["metric", "value", "n_users"]].values.tolist()
    [['precision', 0.5, 2], ['mrr', 1.0, 2]]
    """
    o = _check_options(k=k, metrics=metrics, ties=ties, gain=gain, ideal=ideal,
                       denominator=denominator, gauc_weight=gauc_weight, no_relevant=no_relevant)
    if ci is not None:
        ci = check_probability("ci", ci)
        n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    prep = _Prepared(pred, truth, user=user, item=item, score=score, label=label, ties=o["ties"])
    return _table(prep, o, ci=ci, n_resamples=n_resamples, seed=seed)[0]


evaluate.__doc__ = evaluate.__doc__.format(parameters=_PARAMETERS)


def evaluate_per_user(pred, truth=None, *, k=10, metrics=None, user: str = "user",
                      item: str = "item", score: str = "score", label: str = "label",
                      ties: Ties = "average", gain: Gain = "exponential", ideal: Ideal = "truth",
                      denominator: Denominator = "relevant",
                      gauc_weight: GaucWeight = "impressions",
                      no_relevant: NoRelevant = "skip") -> pd.DataFrame:
    r"""One row per user with every per-user value behind :func:`evaluate`'s means.

    Parameters
    ----------{parameters}

    Returns
    -------
    pandas.DataFrame
        ``user, n_items, n_positives, n_relevant`` and one column per metric
        and cut-off (``ndcg@10``, ``mrr``, ...; ``auc`` is the user's own AUC
        when GAUC is requested). A user left out of a mean has NaN there: no
        relevant item (under ``no_relevant="skip"``) or, for ``auc``, one
        class only. ``n_items`` counts scored rows; ``n_relevant`` counts
        relevant items, scored or not. ``gauc_weight`` is accepted for
        symmetry with :func:`evaluate` and does not change any column.

    Examples
    --------
    >>> pred = pd.DataFrame({{"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]}})
    >>> users = evaluate_per_user(pred, k=2, metrics=["mrr"])
    >>> users["user"].tolist(), users["mrr"].tolist()
    ([1, 2], [1.0, 1.0])
    """
    o = _check_options(k=k, metrics=metrics, ties=ties, gain=gain, ideal=ideal,
                       denominator=denominator, gauc_weight=gauc_weight, no_relevant=no_relevant)
    prep = _Prepared(pred, truth, user=user, item=item, score=score, label=label, ties=o["ties"])
    return _user_table(prep, _per_user(prep, o)[0])


evaluate_per_user.__doc__ = evaluate_per_user.__doc__.format(parameters=_PARAMETERS)


def _sign_flip_p_value(d: np.ndarray, w: np.ndarray, n_resamples: int, rng) -> float:
    """Two-sided paired randomization test of a weighted mean difference (signs flipped)."""
    observed = abs(np.dot(w, d) / w.sum())
    wd = w * d
    extreme = 0
    chunk = max(1, 2_000_000 // d.size)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.integers(0, 2, size=(size, d.size), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ wd) / w.sum() >= observed - 1e-12))
    return (extreme + 1) / (n_resamples + 1)


def _shared_truth(pred_a, pred_b, *, user, item, label) -> pd.DataFrame:
    """Both files' labels as one truth frame; refuse when they disagree on a pair."""
    for name, frame in (("pred_a", pred_a), ("pred_b", pred_b)):
        as_frame(name, frame, {"user": user, "item": item, "label": label})
    grades_a = numeric_column("pred_a", pred_a, label, grades=True)
    grades_b = numeric_column("pred_b", pred_b, label, grades=True)
    (users_a, users_b), user_ids = _codes(user, ("pred_a", pred_a), ("pred_b", pred_b))
    (items_a, items_b), item_ids = _codes(item, ("pred_a", pred_a), ("pred_b", pred_b))
    keys_a = users_a.astype(np.int64) * len(item_ids) + items_a
    keys_b = users_b.astype(np.int64) * len(item_ids) + items_b
    check_unique_keys("pred_a", keys_a, pred_a, user, item)
    check_unique_keys("pred_b", keys_b, pred_b, user, item)
    where = pd.Index(keys_a).get_indexer(keys_b)
    both = np.flatnonzero(where >= 0)
    differ = both[grades_b[both] != grades_a[where[both]]]
    if differ.size:
        first = differ[0]
        raise ValueError(
            f"pred_a and pred_b give different labels to {differ.size:,} (user, item) pair(s) "
            f"(first: {user}={plain(user_ids[users_b[first]])!r}, "
            f"{item}={plain(item_ids[items_b[first]])!r}: "
            f"{grades_a[where[first]]:g} in A, {grades_b[first]:g} in B), so the models would be "
            "judged against different truths; put the labels in one truth table and pass it as "
            "truth= (--truth FILE on the command line)")
    only_b = where < 0
    return pd.DataFrame({user: np.r_[user_ids[users_a], user_ids[users_b[only_b]]],
                         item: np.r_[item_ids[items_a], item_ids[items_b[only_b]]],
                         label: np.r_[grades_a, grades_b[only_b]]})


def compare(pred_a, pred_b, truth=None, *, k=10, metrics=None, user: str = "user",
            item: str = "item", score: str = "score", label: str = "label",
            ties: Ties = "average", gain: Gain = "exponential", ideal: Ideal = "truth",
            denominator: Denominator = "relevant", gauc_weight: GaucWeight = "impressions",
            no_relevant: NoRelevant = "skip", n_resamples: int = 10_000,
            seed=0) -> pd.DataFrame:
    r"""Is model B better than model A? Per metric: both values, B - A, and paired p-values.

    Like is compared with like. Both models are judged on the **same users**:
    those that both scored (at least one row each). Users only one model
    scored are left out, with a :class:`~recmetrics.RecmetricsWarning` giving
    the counts, because a mean over different users can make the worse model
    look better. Both models are judged against the **same truth**: ``truth``
    if given, else the union of the label columns of both frames (which must
    agree on every pair both scored; if they differ, pass ``truth``).

    Every value, the difference and the tests use those users only. Each
    per-user metric is paired over the users where it is defined for both, and
    the mean difference is tested two ways: the paired t-test
    (``scipy.stats.ttest_rel``) and a paired randomization test that flips the
    sign of each user's difference at random ``n_resamples`` times
    (p = (1 + #|flipped mean| >= |observed mean|) / (1 + n_resamples)). GAUC
    is the weighted mean of per-user AUCs over users with both classes under
    both models, each user weighted by the mean of the two models' weights
    (equal when both scored the same rows), and is tested by randomization
    only. Global AUC is recomputed on the shared users' rows; it is not a mean
    over users, so it gets no paired p-value.

    Returns
    -------
    pandas.DataFrame
        ``metric, k, value_a, value_b, difference, p_ttest, p_randomization,
        n_users, n_users_a, n_users_b, conventions, note``; ``difference`` is
        B - A, ``n_users`` the users paired for that metric, ``n_users_a`` /
        ``n_users_b`` the users each model scored before restricting to the
        shared ones.

    References
    ----------
    Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical significance
    tests for information retrieval evaluation. *CIKM*.

    Examples
    --------
    >>> a = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "score": [0.2, 0.9, 0.1, 0.8],
    ...                   "label": [1, 0, 1, 0]})
    >>> b = a.assign(score=[0.9, 0.2, 0.8, 0.1])
    >>> compare(a, b, k=1, metrics=["mrr"])[["metric", "value_a", "value_b", "difference"]].values.tolist()
    [['mrr', 0.5, 1.0, 0.5]]
    """
    from scipy import stats as _stats

    o = _check_options(k=k, metrics=metrics, ties=ties, gain=gain, ideal=ideal,
                       denominator=denominator, gauc_weight=gauc_weight, no_relevant=no_relevant)
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    if truth is None:
        truth = _shared_truth(pred_a, pred_b, user=user, item=item, label=label)
    for name, frame in (("pred_a", pred_a), ("pred_b", pred_b)):
        as_frame(name, frame, {"user": user, "item": item, "score": score})
    as_frame("truth", truth, {"user": user, "item": item, "label": label})
    # one id form for all three frames, so that the two evaluations pair their users
    named = (("pred_a", pred_a), ("pred_b", pred_b), ("truth", truth))
    codes = {column: _codes(column, *named) for column in (user, item)}
    pred_a, pred_b, truth = (
        frame.assign(**{column: codes[column][1][codes[column][0][i]] for column in (user, item)})
        for i, (_, frame) in enumerate(named))
    (users_a, users_b, users_t), user_ids = codes[user]
    in_a = np.zeros(len(user_ids), dtype=bool)
    in_a[users_a] = True
    in_b = np.zeros(len(user_ids), dtype=bool)
    in_b[users_b] = True
    shared = in_a & in_b
    n_a, n_b, n_shared = int(in_a.sum()), int(in_b.sum()), int(shared.sum())
    if n_shared == 0:
        raise ValueError(f"pred_a and pred_b share no user ({n_a:,} and {n_b:,} users), so there is "
                         "nothing to compare; check that both hold the same users' ids, written "
                         "the same way")
    if n_shared < max(n_a, n_b):
        warnings.warn(f"model A scored {n_a:,} users and model B {n_b:,}; both are compared on the "
                      f"{n_shared:,} users both scored", RecmetricsWarning,
                      stacklevel=caller_stacklevel())
    preps, tables, columns = [], [], []
    for frame, codes in ((pred_a, users_a), (pred_b, users_b)):
        kept = frame if shared[codes].all() else frame[shared[codes]]
        prep = _Prepared(kept, truth[shared[users_t]], user=user, item=item, score=score,
                         label=label, ties=o["ties"])
        table, per_user = _table(prep, o)
        preps.append(prep)
        tables.append(table)
        columns.append(pd.DataFrame(per_user, index=prep.users))
    paired = columns[0].merge(columns[1], left_index=True, right_index=True, suffixes=("_a", "_b"))
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in zip(tables[0].itertuples(index=False), tables[1].itertuples(index=False)):
        metric, cut = a.metric, a.k
        value_a, value_b, p_t, p_r, n, note = a.value, b.value, float("nan"), float("nan"), 0, ""
        if metric == "auc" or metric in PROBABILITY_METRICS:  # not a mean over users: no test
            n = n_shared
            note = a.note or b.note
        else:
            column = "auc" if metric == "gauc" else (metric if pd.isna(cut) else f"{metric}@{cut}")
            va, vb = paired[f"{column}_a"].to_numpy(), paired[f"{column}_b"].to_numpy()
            both = ~(np.isnan(va) | np.isnan(vb))
            n = int(both.sum())
            if metric == "gauc":
                w = np.zeros(len(paired))
                for prep in preps:
                    _, pos, neg = prep.user_auc(o["ties"])
                    own = pd.Series(_kernels.gauc_weights(pos, neg, o["gauc_weight"]),
                                    index=prep.users)
                    w += own.reindex(paired.index).to_numpy() / 2
                w = w[both]
            else:
                w = np.ones(n)
            if n == 0:
                value_a = value_b = float("nan")
                note = _GAUC_NOTE + " under both models" if metric == "gauc" else _RANKING_NOTE
            else:
                value_a = float(np.dot(w, va[both]) / w.sum())
                value_b = float(np.dot(w, vb[both]) / w.sum())
            d = vb[both] - va[both]
            if n >= 2 and np.any(d != 0):
                p_r = _sign_flip_p_value(d, w, n_resamples, rng)
                if metric != "gauc":
                    with warnings.catch_warnings():  # near-constant differences: p still valid
                        warnings.simplefilter("ignore", RuntimeWarning)
                        p_t = float(_stats.ttest_rel(vb[both], va[both]).pvalue)
            elif n >= 1:
                p_t = p_r = 1.0  # identical per-user values: no evidence of a difference
        rows.append({"metric": metric, "k": cut, "value_a": value_a, "value_b": value_b,
                     "difference": value_b - value_a, "p_ttest": p_t, "p_randomization": p_r,
                     "n_users": n, "n_users_a": n_a, "n_users_b": n_b,
                     "conventions": a.conventions, "note": note})
    result = pd.DataFrame(rows)
    result["k"] = result["k"].astype("Int64")
    result.attrs["conventions"] = tables[0].attrs["conventions"]
    return result
