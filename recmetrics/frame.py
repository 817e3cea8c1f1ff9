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
  no recall, AP, RR or NDCG: the user is **skipped** for the ranking metrics
  and counted in ``n_skipped``.
* A user with relevant items in ``truth`` but no row in ``pred`` scores 0 on
  every ranking metric and is counted in ``n_without_predictions``.
* Relevant items of ``truth`` that ``pred`` did not score still count in
  recall, AP (denominator "relevant") and the ideal DCG, as in trec_eval.

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

from ._validation import (RecmetricsWarning, as_frame, check_k, check_k_values, check_option,
                          check_probability, check_unique_pairs, id_column, numeric_column)
from .auc import GAUC_WEIGHTS, TIES, _auc_from_counts, _pair_counts_by_group
from .ranking import (AP_DENOMINATORS, GAINS, IDEALS, _ap_kernel, _dcg_kernel, _hit_rate_kernel,
                      _hits_kernel, _ideal_dcg_kernel, _Layout, _rr_kernel)
from .stats import bootstrap_ci

__all__ = ["evaluate", "compare", "METRICS"]

#: Metric names accepted by ``metrics=``, in the order they are reported.
METRICS = ("auc", "gauc", "precision", "recall", "hit_rate", "map", "mrr", "ndcg")
_AT_K = ("precision", "recall", "hit_rate", "map", "ndcg")


def _rank_rows(users: np.ndarray, scores: np.ndarray, grades: np.ndarray,
               ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Row orders: by user then score descending (then the tie policy), and by score alone.

    Sorting by score first and then regrouping users stably through one sort of
    int64 keys ``user * n + place`` is about twice as fast as ``np.lexsort``
    and needs no extra key arrays.
    """
    n = scores.size
    if ties == "average":  # the order inside a tie does not matter
        by_score = np.argsort(scores)[::-1]
    else:  # higher grades first (optimistic) or last (pessimistic) within a tie
        by_score = np.lexsort((-grades if ties == "optimistic" else grades, -scores))
    keys = users[by_score].astype(np.int64)
    keys *= n
    keys += np.arange(n)
    keys.sort()
    np.remainder(keys, n, out=keys)
    return by_score[keys], by_score


class _Prepared:
    """Validated input, rows ranked per user, and the per-user facts the metrics share."""

    def __init__(self, pred, truth, *, user, item, score, label, ties):
        columns = {"user": user, "item": item, "score": score}
        if truth is None:
            columns["label"] = label
        as_frame("pred", pred, columns)
        id_column("pred", pred, user)
        id_column("pred", pred, item)
        check_unique_pairs("pred", pred, user, item)
        scores = numeric_column("pred", pred, score)
        if truth is None:
            grades = numeric_column("pred", pred, label, grades=True)
            missing_users, missing_grades = pred[user].iloc[:0], np.zeros(0)
        else:
            as_frame("truth", truth, {"user": user, "item": item, "label": label})
            id_column("truth", truth, user)
            id_column("truth", truth, item)
            check_unique_pairs("truth", truth, user, item)
            truth_grades = numeric_column("truth", truth, label, grades=True)
            judged = pd.DataFrame({"_u": truth[user].to_numpy(), "_i": truth[item].to_numpy(),
                                   "_g": truth_grades})
            keys = pd.DataFrame({"_u": pred[user].to_numpy(), "_i": pred[item].to_numpy()})
            merged = keys.merge(judged, on=["_u", "_i"], how="left", sort=False)
            grades = merged["_g"].fillna(0.0).to_numpy()
            # relevant items the model did not score: they count in recall, AP and IDCG
            unscored = judged[judged["_g"] > 0].merge(keys, on=["_u", "_i"], how="left",
                                                      indicator=True)
            unscored = unscored[unscored["_merge"] == "left_only"]
            missing_users, missing_grades = unscored["_u"], unscored["_g"].to_numpy()
        user_ids = pred[user] if len(missing_users) == 0 else pd.concat(
            [pred[user], pd.Series(missing_users)], ignore_index=True)
        codes, uniques = pd.factorize(user_ids)
        self.users = uniques
        self.n_users = len(uniques)
        self.n_rows = len(pred)
        missing_user = codes[self.n_rows:].copy()
        order, by_score = _rank_rows(codes[:self.n_rows], scores, grades, ties)
        # global AUC counts now, while the rows are in score order (ascending for the kernel)
        ascending = by_score[::-1]
        positive = grades[ascending] > 0
        self.n_positive = int(positive.sum())
        self.global_pairs = _pair_counts_by_group(
            scores[ascending], positive, np.array([self.n_positive]),
            np.array([self.n_rows - self.n_positive]), keys_sorted=True)
        del ascending, by_score, positive
        self.lists = codes[order]
        self.scores = scores[order]
        self.grades = grades[order]
        del order, codes, scores, grades
        new_group = None
        if ties == "average":
            new_group = np.empty(self.n_rows, dtype=bool)
            new_group[:1] = True
            np.not_equal(self.scores[1:], self.scores[:-1], out=new_group[1:])
        self.layout = _Layout(self.lists, self.grades, self.n_users, new_group)

        # Every judged relevant grade per user, found or not (for recall, AP, IDCG).
        rel_lists = np.r_[self.lists[self.grades > 0], missing_user]
        rel_grades = np.r_[self.grades[self.grades > 0], missing_grades]
        self.n_relevant = np.bincount(rel_lists, minlength=self.n_users)
        ideal_order = np.lexsort((-rel_grades, rel_lists))
        self.ideal_lists, self.ideal_grades = rel_lists[ideal_order], rel_grades[ideal_order]
        self.n_rows_per_user = np.bincount(self.lists, minlength=self.n_users)
        self.evaluated = self.n_relevant > 0
        self.without_predictions = self.evaluated & (self.n_rows_per_user == 0)

    def ideal_dcg(self, k: int, gain: str, ideal: str) -> np.ndarray:
        if ideal == "truth":
            return _ideal_dcg_kernel(self.ideal_grades, self.ideal_lists, self.n_users, k, gain)
        if ideal == "full":
            top = np.zeros(self.n_users)
            np.maximum.at(top, self.ideal_lists, self.ideal_grades)
            full = np.repeat(top, k)
            return _ideal_dcg_kernel(full, np.repeat(np.arange(self.n_users), k), self.n_users,
                                     None, gain)
        # "list": the user's own top-k grades, re-sorted
        layout = self.layout
        straddle = layout.straddling(k)
        if straddle.any():
            group_id = np.cumsum(layout.j == 1)[straddle]
            grade = layout.grades[straddle]
            mixed = pd.Series(grade).groupby(group_id).nunique().gt(1)
            if mixed.any():
                raise ValueError(
                    f"ideal='list' with ties='average' is undefined here: a tie of scores "
                    f"straddles position k={k} and mixes grades, so the list's own top {k} is "
                    "random; use ideal='truth' (the standard), or ties='optimistic' or "
                    "'pessimistic'")
        top = layout.top(k)
        lists, grades = self.lists[top], self.grades[top]
        order = np.lexsort((-grades, lists))
        return _ideal_dcg_kernel(grades[order], lists[order], self.n_users, None, gain)


def _per_user_ranking(prep: _Prepared, metric: str, k, *, gain, ideal, denominator):
    layout = prep.layout
    if metric == "precision":
        return _hits_kernel(layout, k) / k
    if metric == "recall":
        with np.errstate(invalid="ignore", divide="ignore"):
            return _hits_kernel(layout, k) / prep.n_relevant
    if metric == "hit_rate":
        return _hit_rate_kernel(layout, k)
    if metric == "map":
        return _ap_kernel(layout, k, denominator, prep.n_relevant)
    if metric == "mrr":
        return _rr_kernel(layout, None)
    dcg = _dcg_kernel(layout, k, gain)
    idcg = prep.ideal_dcg(k, gain, ideal)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / idcg, 0.0)


def _user_auc(prep: _Prepared, ties: str):
    """Per-user AUC (NaN for single-class users) from the rows ranked per user."""
    positive = prep.grades > 0
    pos = np.bincount(prep.lists[positive], minlength=prep.n_users)
    neg = prep.n_rows_per_user - pos
    # Rows run by user, then score descending; read backwards they run by user
    # descending, then score ascending. A dense index of (user, score) along
    # that backward order is then an ascending group-major key, equal exactly
    # for ties: what the AUC kernel needs, already sorted.
    back = slice(None, None, -1)
    lists, scores = prep.lists[back], prep.scores[back]
    steps = np.empty(prep.n_rows, dtype=np.int64)
    steps[:1] = 0
    np.not_equal(scores[1:], scores[:-1], out=steps[1:])
    steps[1:] |= lists[1:] != lists[:-1]
    keys = np.cumsum(steps, out=steps)
    wins, wins_or_ties = _pair_counts_by_group(keys, positive[back], pos[::-1], neg[::-1],
                                               keys_sorted=True)
    wins, wins_or_ties = wins[::-1], wins_or_ties[::-1]
    pairs = pos * neg
    auc = np.full(prep.n_users, np.nan)
    ok = pairs > 0
    auc[ok] = _auc_from_counts(wins[ok], wins_or_ties[ok], pairs[ok], ties)
    return auc, pos, neg


def _global_auc(prep: _Prepared, ties: str) -> float:
    n_neg = prep.n_rows - prep.n_positive
    if prep.n_positive == 0 or n_neg == 0:
        return float("nan")
    wins, wins_or_ties = (int(c[0]) for c in prep.global_pairs)
    return float(_auc_from_counts(wins, wins_or_ties, prep.n_positive * n_neg, ties))


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
            values[start:start + size] = _auc_from_counts(wins, wins_or_ties, pairs, ties)
    low, high = np.nanquantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def evaluate(pred, truth=None, *, k=10, metrics=None, user: str = "user", item: str = "item",
             score: str = "score", label: str = "label", ties: str = "average",
             per_user: bool = False, gain: str = "exponential", ideal: str = "truth",
             denominator: str = "relevant", gauc_weight: str = "impressions", ci: float | None = None,
             n_resamples: int = 1000, seed: int | None = 0):
    r"""Evaluate scored (user, item) rows: AUC, GAUC, P@k, R@k, HR@k, MAP@k, MRR and NDCG@k.

    Parameters
    ----------
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
        Any of ``METRICS``; default all.
    user, item, score, label : str
        Column names.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        See the module docstring.
    per_user : bool, default False
        Also return one row per user with every per-user value.
    gain, ideal : str
        NDCG conventions, as in :func:`recmetrics.ndcg` (defaults "exponential",
        "truth").
    denominator : str
        AP denominator, as in :func:`recmetrics.average_precision` (default
        "relevant": all relevant items, as trec_eval's map_cut).
    gauc_weight : str
        GAUC weights, as ``weight`` in :func:`recmetrics.group_auc`.
    ci : float, optional
        Confidence level (e.g. 0.95) for percentile bootstrap intervals from
        resampling users (``n_resamples`` times, seeded by ``seed``); adds
        columns ``ci_low`` and ``ci_high``. Means over users use
        :func:`recmetrics.bootstrap_ci`; global AUC is recomputed on each
        resample with the drawn users' rows weighted by how often they were drawn.

    Returns
    -------
    pandas.DataFrame, or (DataFrame, DataFrame) when ``per_user``
        One row per metric and cut-off: ``metric, k, value, n_users,
        n_skipped, n_without_predictions, conventions`` (``k`` is missing for
        AUC, GAUC and MRR). ``n_users`` counts the users averaged (for AUC: all
        users with rows; for GAUC: users with both classes). The conventions
        used are also in ``result.attrs["conventions"]``.

    References
    ----------
    McSherry, F. & Najork, M. (2008). Computing information retrieval performance measures
    efficiently in the presence of tied scores. *ECIR*.

    Examples
    --------
    >>> pred = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]})
    >>> table = evaluate(pred, k=2, metrics=["precision", "mrr"])
    >>> table[["metric", "value", "n_users"]].values.tolist()
    [['precision', 0.5, 2], ['mrr', 1.0, 2]]
    """
    ties = check_option("ties", ties, TIES)
    gain = check_option("gain", gain, GAINS)
    ideal = check_option("ideal", ideal, IDEALS)
    denominator = check_option("denominator", denominator, AP_DENOMINATORS)
    gauc_weight = check_option("gauc_weight", gauc_weight, GAUC_WEIGHTS)
    ks = check_k_values(k)
    if metrics is None:
        metrics = METRICS
    elif isinstance(metrics, str):
        metrics = [metrics]
    for m in metrics:
        check_option("metrics", m, METRICS)
    if ci is not None:
        ci = check_probability("ci", ci)

    prep = _Prepared(pred, truth, user=user, item=item, score=score, label=label, ties=ties)
    conventions = {"ties": ties, "gain": gain, "ideal": ideal, "ap_denominator": denominator,
                   "gauc_weight": gauc_weight, "k": ks}
    n_eval = int(prep.evaluated.sum())
    n_skip = int(prep.n_users - n_eval)
    if n_eval == 0 and any(m in _AT_K + ("mrr",) for m in metrics):
        warnings.warn("no user has a relevant item, so the ranking metrics are undefined (NaN)",
                      RecmetricsWarning, stacklevel=2)

    rows, columns = [], {"user": prep.users}
    rng = np.random.default_rng(seed)

    def add(metric, cut, value, n_users, n_skipped, n_without, convention, per_user_values=None,
            weights=None, interval=None):
        row = {"metric": metric, "k": cut, "value": float(value), "n_users": n_users,
               "n_skipped": n_skipped, "n_without_predictions": n_without,
               "conventions": convention}
        if ci is not None:
            low, high = interval or (float("nan"), float("nan"))
            if per_user_values is not None and len(per_user_values) > 1:
                low, high = bootstrap_ci(per_user_values, weights=weights, confidence=ci,
                                         n_resamples=n_resamples, seed=rng)
            row["ci_low"], row["ci_high"] = low, high
        rows.append(row)

    if "auc" in metrics:
        interval = _auc_bootstrap(prep, ties, ci, n_resamples, rng) if ci is not None else None
        add("auc", None, _global_auc(prep, ties), prep.n_users - int(prep.without_predictions.sum()),
            0, 0, f"ties={ties}", interval=interval)
    if "gauc" in metrics or per_user:
        user_auc, pos, neg = _user_auc(prep, ties)
        columns["auc"] = user_auc
    if "gauc" in metrics:
        has_auc = ~np.isnan(user_auc)
        w = {"impressions": pos + neg, "clicks": pos, "uniform": np.ones(prep.n_users)}[gauc_weight]
        value = np.dot(w[has_auc], user_auc[has_auc]) / w[has_auc].sum() if has_auc.any() \
            else float("nan")
        add("gauc", None, value, int(has_auc.sum()), int((~has_auc).sum()), 0,
            f"weight={gauc_weight}, ties={ties}", user_auc[has_auc], w[has_auc])

    n_without = int(prep.without_predictions.sum())
    for metric in [m for m in METRICS if m in metrics and (m in _AT_K or m == "mrr")]:
        for cut in ([None] if metric == "mrr" else ks):
            values = _per_user_ranking(prep, metric, cut, gain=gain, ideal=ideal,
                                       denominator=denominator)
            kept = values[prep.evaluated]
            convention = {"map": f"denominator={denominator}, ties={ties}",
                          "ndcg": f"gain={gain}, ideal={ideal}, ties={ties}"}.get(
                              metric, f"ties={ties}")
            add(metric, cut, kept.mean() if kept.size else float("nan"), n_eval, n_skip,
                n_without, convention, kept)
            name = metric if cut is None else f"{metric}@{cut}"
            columns[name] = np.where(prep.evaluated, values, np.nan)

    result = pd.DataFrame(rows)
    result["k"] = result["k"].astype("Int64")
    result.attrs["conventions"] = conventions
    if not per_user:
        return result
    table = pd.DataFrame(columns)
    table.insert(1, "n_items", prep.n_rows_per_user)
    table.insert(2, "n_positives", np.bincount(prep.lists[prep.grades > 0], minlength=prep.n_users))
    table.insert(3, "n_relevant", prep.n_relevant)
    return result, table


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


def compare(pred_a, pred_b, truth=None, *, k=10, metrics=None, user: str = "user",
            item: str = "item", score: str = "score", label: str = "label", ties: str = "average",
            gain: str = "exponential", ideal: str = "truth", denominator: str = "relevant",
            gauc_weight: str = "impressions", n_resamples: int = 10_000, seed: int | None = 0):
    r"""Is model B better than model A? Per metric: both values, B - A, and paired p-values.

    Both models are evaluated with :func:`evaluate` (same options). Each
    per-user metric is paired over the users it is defined for in both, and
    the mean difference is tested two ways: the paired t-test
    (``scipy.stats.ttest_rel``) and a paired randomization test that flips
    the sign of each user's difference at random ``n_resamples`` times
    (p = (1 + #|flipped mean| >= |observed mean|) / (1 + n_resamples)). GAUC
    is tested as the weighted mean of per-user AUC differences (weights from
    model A: impressions, positives or 1), by randomization only. Global AUC is
    not a mean over users, so it gets no paired p-value.

    Returns
    -------
    pandas.DataFrame
        ``metric, k, value_a, value_b, difference, p_ttest, p_randomization,
        n_users, conventions``; ``difference`` is B - A.

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

    options = dict(k=k, metrics=metrics, user=user, item=item, score=score, label=label, ties=ties,
                   gain=gain, ideal=ideal, denominator=denominator, gauc_weight=gauc_weight)
    table_a, users_a = evaluate(pred_a, truth, per_user=True, **options)
    table_b, users_b = evaluate(pred_b, truth, per_user=True, **options)
    check_option("n_resamples", "ok", ("ok",)) if isinstance(n_resamples, int) and n_resamples >= 1         else check_k(n_resamples, name="n_resamples")
    rng = np.random.default_rng(seed)
    paired = users_a.merge(users_b, on="user", how="inner", suffixes=("_a", "_b"))
    rows = []
    for (_, a), (_, b) in zip(table_a.iterrows(), table_b.iterrows()):
        metric, cut = a["metric"], a["k"]
        p_t = p_r = float("nan")
        n = 0
        if metric != "auc":
            column = "auc" if metric == "gauc" else (metric if pd.isna(cut) else f"{metric}@{cut}")
            va, vb = paired[f"{column}_a"].to_numpy(), paired[f"{column}_b"].to_numpy()
            both = ~(np.isnan(va) | np.isnan(vb))
            d = vb[both] - va[both]
            n = int(both.sum())
            if metric == "gauc":
                w = {"impressions": paired["n_items_a"], "clicks": paired["n_positives_a"],
                     "uniform": pd.Series(np.ones(len(paired)))}[gauc_weight].to_numpy()[both]
            else:
                w = np.ones(n)
            if n >= 2 and np.any(d != 0):
                p_r = _sign_flip_p_value(d, w.astype(np.float64), n_resamples, rng)
                if metric != "gauc":
                    with warnings.catch_warnings():  # near-constant differences: p still valid
                        warnings.simplefilter("ignore", RuntimeWarning)
                        p_t = float(_stats.ttest_rel(vb[both], va[both]).pvalue)
            elif n >= 1:
                p_t = p_r = 1.0  # identical per-user values: no evidence of a difference
        rows.append({"metric": metric, "k": cut, "value_a": a["value"], "value_b": b["value"],
                     "difference": b["value"] - a["value"], "p_ttest": p_t,
                     "p_randomization": p_r, "n_users": n, "conventions": a["conventions"]})
    result = pd.DataFrame(rows)
    result["k"] = result["k"].astype("Int64")
    result.attrs["conventions"] = table_a.attrs["conventions"]
    return result
