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
default it scores exactly what random ordering would. ``"trec"`` is
trec_eval's order (score descending, then the item id as text, descending),
for numbers that match trec_eval's; AUC and GAUC have no such order and are
refused under it (and left out of the default metrics).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import pandas as pd

from . import _beyond, _pipeline
from ._pipeline import (POSITIVES_ONLY, Prepared, check_rank, labelled_truth, rank_hint,
                      resolve_max_grade, top_grade_of)
from ._frames import engine_of, pandas_inputs
from ._metrics import DEFAULT_METRICS, ECE_BINS, GRADED, METRICS, PROBABILITY_METRICS
from ._options import conventions_of
from ._output import write_parquet
from ._request import Comparison, Evaluation
from ._validation import (Adjustment, Denominator, EvalTies, Gain, GaucWeight, Ideal, NoRelevant,
                          PrDenominator, Unscored, Unseen)

__all__ = ["evaluate", "evaluate_per_user", "compare", "METRICS", "DEFAULT_METRICS",
           "PROBABILITY_METRICS", "ECE_BINS"]

Bootstrap = Literal["multinomial", "poisson"]


_PARAMETERS = r"""
    pred : pandas.DataFrame
        One row per scored (user, item): columns ``user``, ``item``, ``score``
        and, when ``truth`` is None, ``label`` (a relevance grade >= 0; 0 = not
        relevant; AUC and GAUC treat grade > 0 as positive).
    truth : pandas.DataFrame, optional
        Judged (user, item, label) rows. Pairs of ``pred`` missing from it have
        grade 0; relevant pairs missing from ``pred`` count as not retrieved.
        A truth table of positives only (user, item; no ``label`` column, and
        no other label column named) gives every row grade 1: the usual
        held-out format. ``result.attrs["notes"]`` says so.
    k : int or sequence of int, default 10
        Cut-off(s) for precision, recall, hit rate, MAP, NDCG, ERR and MRR@k.
    metrics : sequence of str, optional
        Any of ``METRICS`` and of the beyond-accuracy metrics
        ``recmetrics.BEYOND_METRICS`` (catalog_coverage, ..., aplt: what the
        top-k lists hold, as :func:`recmetrics.beyond_accuracy` computes them,
        with the inputs ``history``, ``catalog`` and ``item_features``
        below; one row per cut-off, after the others); default
        ``DEFAULT_METRICS`` (AUC, GAUC and the ranking metrics; under
        ``ties="trec"`` the ranking metrics only). The measures other
        toolkits report, on request: ``"mrr@k"`` (MRR cut at each cut-off:
        rows ``mrr`` with ``k`` set, per-user columns ``mrr@5``...; ``"mrr"``
        stays uncut), ``"r_precision"`` (:func:`recmetrics.r_precision`),
        ``"bpref"`` (:func:`recmetrics.bpref`: judged non-relevant items are
        the truth rows of grade 0, or, without ``truth``, the rows of
        ``pred`` with label 0), ``"rbp"`` (:func:`recmetrics.rbp` with
        relevance grade / ``max_grade`` and persistence ``rbp_p``) and
        ``"err"`` (:func:`recmetrics.err` at each cut-off, with ``max_grade``).
        Under ``ties="average"`` each is the exact expected value over the
        orders of tied rows (R-precision and RBP are linear in which rows sit
        where; bpref's count of judged non-relevant rows above a relevant one
        in a tie with b of them is uniform on 0..b); ERR is refused
        (``ValueError``) when a tie in some top k mixes grades, for which it
        has no closed form. ``"logloss"``, ``"ne"`` (normalized entropy),
        ``"brier"`` and ``"ece"`` (expected calibration error, 10 equal bins)
        read each score as the probability that the row is relevant and are
        computed over all scored rows when asked for; scores outside [0, 1]
        are then refused.
    user, item, score, label : str
        Column names. Ids follow the id policy of the module docstring.
        Labels may be numbers or true/false (any case).
    rank : str, optional
        A column of ranks to read instead of ``score``: 1 is the top of the
        user's list and lower is better (gaps are allowed; any numbers, the
        order is what counts). Top-k lists are often written with a rank. A
        rank read as a score ranks every list upside down; when global AUC is
        below 0.4 and further below 0.5 than chance allows (5 standard errors
        of a random score) and no ``rank`` was given, a
        :class:`~recmetrics.RecmetricsWarning` suggests it.
    ties : {"average", "optimistic", "pessimistic", "trec"}, default "average"
        See the module docstring. ``"trec"`` is trec_eval's order (score
        descending, then the item id as text, descending; pytrec_eval the
        same): the numbers of trec_eval, with ``gain="linear"`` for its
        ``ndcg_cut``; AUC and GAUC are refused under it.
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
        functions.
    rbp_p : float, default 0.8
        RBP's persistence (``p`` of :func:`recmetrics.rbp`; trec_eval's
        default is 0.9), strictly between 0 and 1.
    max_grade : float, optional
        Top grade of the judging scale, for ``"err"`` (:math:`g_{max}`) and
        ``"rbp"`` (relevance = grade / max_grade), below 1024. Default: the
        top grade of the truth (of ``pred``'s labels without ``truth``), found
        once over all users, so binary labels give ERR's R = 1/2 and RBP's
        relevance 1. On Dask, pass it (a partition cannot see the others).
        trec_eval's RBP divides by each query's own top grade instead; the two
        agree on binary judgements.
    min_grade : float, optional
        Relevance threshold, as trec_eval's ``-l``: grades below it count as
        0 (judged, not relevant) in every metric. Default: relevant means
        grade > 0. trec_eval keeps those grades as NDCG gains; here they are
        0 there too.
    judged_only : bool, default False
        Drop the rows of ``pred`` missing from ``truth`` before ranking
        (condensed lists, Sakai 2007; trec_eval's ``-J``); without
        ``truth`` every row is judged.
    unscored : {"ignore", "below"}, default "ignore"
        Relevant truth rows that ``pred`` never scored, as in a top-k export:
        recall, MAP and NDCG always count them (as misses), but AUC and GAUC
        compare scored rows, so by default they leave them out, and the AUC
        and GAUC rows then carry a note (and a
        :class:`~recmetrics.RecmetricsWarning`) with their count.
        ``"below"`` ranks them below every scored row, tied with each other:
        each is a positive that loses to every scored negative, so AUC and
        recall describe the same list (exact: the pair counts of the scored
        rows are unchanged and the positives grow). Judged non-relevant
        rows never scored stay out. Pandas input, without ``by``, only.
    history : pandas.DataFrame, optional
        The training log (``user``, ``item`` rows) of the beyond-accuracy
        metrics: popularity (novelty, ARP, APLT), co-occurrence similarity
        (diversity, serendipity without ``item_features``) and each user's
        own items (serendipity). See :func:`recmetrics.beyond_accuracy`.
    catalog : sequence, optional
        Every item that could be recommended (catalog coverage, Gini).
    item_features : pandas.DataFrame, optional
        ``item`` and numeric feature columns: cosine similarity of diversity
        and serendipity instead of co-occurrence in ``history``.
    head_share : float, default 0.8
        APLT's popular head: the items holding this share of history rows.
    unseen : {"add_one", "zero", "error"}, default "add_one"
        Novelty of an item with no popularity row.
    npartitions : int, optional
        Dask or Spark input only: how many partitions (Spark: groups) the
        users are shuffled into. Default: one per 250,000 rows of ``pred``; a
        worker evaluates one at a time (about 150 bytes a row), so it bounds a
        worker's memory. Refused for pandas input."""


def evaluate(pred, truth=None, *, k=10, metrics=None, user: str = "user", item: str = "item",
             score: str = "score", label: str = "label", rank: str | None = None,
             ties: EvalTies = "average",
             gain: Gain = "exponential", ideal: Ideal = "truth",
             denominator: Denominator = "relevant",
             pr_denominator: PrDenominator = "standard", gauc_weight: GaucWeight = "impressions",
             no_relevant: NoRelevant = "skip", rbp_p: float = 0.8,
             max_grade: float | None = None, min_grade: float | None = None,
             judged_only: bool = False, unscored: Unscored = "ignore",
             ci: float | None = None, n_resamples: int = 1000,
             seed=0, bootstrap: Bootstrap | None = None, history=None, catalog=None,
             item_features=None, head_share: float = 0.8, unseen: Unseen = "add_one",
             baselines: bool = False, by=None, users=None,
             min_slice_size: int = 30, npartitions: int | None = None) -> pd.DataFrame:
    r"""Evaluate scored (user, item) rows: AUC, GAUC, P@k, R@k, HR@k, MAP@k, MRR and NDCG@k.

    Parameters
    ----------{parameters}
    ci : float, optional
        Confidence level (e.g. 0.95) for percentile bootstrap intervals from
        resampling users (``n_resamples`` times, 100 to 10,000,000, seeded by
        ``seed``); adds columns ``ci_low`` and ``ci_high``. Every row is
        recomputed on the same resamples (global AUC with each user's rows
        weighted by the user's weight in the resample), so a metric's interval
        does not depend on which other metrics or cut-offs are asked for.
    bootstrap : {{"poisson", "multinomial"}}, default "poisson"
        How users are resampled. ``"poisson"`` gives each user a Poisson(1)
        weight per resample, drawn from a hash of (canonical user id,
        ``seed``, resample number): a user's weight depends on nothing else,
        so the interval is the same whatever the row order, whatever other
        users are present, and on every engine (pandas, Dask), and a subset of
        users evaluated alone gets the weights it had in the whole.
        ``"multinomial"`` draws n users with replacement (the classic
        bootstrap; pandas input only), from one generator seeded by ``seed``.
        Both estimate the same sampling distribution (Hanley & MacGibbon
        2006); they give slightly different intervals.
    baselines : bool, default False
        Add the same rows for two reference recommenders over pred's own
        (user, item) rows, against the same truth: ``random`` (every row the
        same score; under ``ties="average"`` the exact expected value of a
        uniformly random order, no simulation) and ``most_popular`` (each row
        scored by its item's rows in ``history``, as
        :func:`recmetrics.most_popular` scores it; needs ``history``). The
        table then starts with a ``model`` column: ``model``, ``random``,
        ``most_popular``. Probability metrics are refused with baselines.
    by : str or list of str, optional
        Slice the users (see :mod:`recmetrics.slices`): a per-user column of
        ``pred``, ``truth`` or ``users``, or ``"activity"`` (quantile buckets
        of the number of scored rows; of rows in ``history`` when it is given,
        labelled ``"[lo, hi) history rows"``); several names give their crossing.
        The table then has the slice column(s) first, ``slice_size`` (users
        in the slice) and ``small_slice``, one row per slice and metric, and
        the rows of all users with slice value ``"(all)"``. Every slice row
        equals this function on that slice's users alone, intervals
        included (Poisson bootstrap only: with ``ci``, ``"multinomial"`` is
        refused, since its draws depend on the whole set of users).
        :func:`recmetrics.disparity` reads the table. ``"popularity"``
        slices items instead: head, torso and tail items by their rows in
        ``history``, each row counting only that class's relevant items
        (precision, recall, hit rate, MAP, MRR, NDCG; see
        :mod:`recmetrics.slices`).
    users : pandas.DataFrame, optional
        User attributes for ``by``: the ``user`` column (each user once) and
        attribute columns.
    min_slice_size : int, default 30
        Slices of fewer users are kept, marked ``small_slice=True`` and
        listed in ``result.attrs["notes"]``.

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
        :func:`evaluate_per_user`. A beyond-accuracy row counts in
        ``n_users`` the users its value averages over (for catalogue-level
        metrics: the users with a list) and in ``n_skipped`` the users with a
        list it leaves out; its interval (``ci``) comes from the same
        resampling of users as the others, as a ratio of per-user sums
        (catalogue-level metrics, with no per-user value, get none: NaN and a
        note).

    Notes
    -----
    ``pred`` and ``truth`` may be Dask DataFrames (``pip install
    metricbook[dask]``): the same table is then computed on the Dask cluster
    by :func:`recmetrics.distributed.evaluate`, exactly, without collecting
    the rows in one process; Spark DataFrames likewise by
    :func:`recmetrics.spark.evaluate`. ``by=`` slices work there too, with
    the same numbers. The beyond-accuracy metrics and ``baselines`` are
    refused on Dask and Spark input for now (pandas only).

    References
    ----------
    McSherry, F. & Najork, M. (2008). Computing information retrieval performance measures
    efficiently in the presence of tied scores. *ECIR*.
    Hanley, J. A. & MacGibbon, B. (2006). Creating non-parametric bootstrap samples using
    Poisson frequencies. *Computer Methods and Programs in Biomedicine* 83(1), 57-62.
    Sakai, T. (2007). Alternatives to bpref. *SIGIR*, 71-78 (condensed lists: ``judged_only``).

    Examples
    --------
    >>> pred = pd.DataFrame({{"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]}})
    >>> table = evaluate(pred, k=2, metrics=["precision", "mrr"])
    >>> table[["metric", "value", "n_users"]].values.tolist()
    [['precision', 0.5, 2], ['mrr', 1.0, 2]]
    >>> table = evaluate(pred, k=1, metrics=["mrr@k", "r_precision", "bpref"], ties="trec")
    >>> table[["metric", "k", "value"]].values.tolist()
    [['mrr', 1, 1.0], ['r_precision', <NA>, 0.75], ['bpref', <NA>, 0.75]]
    """
    pred, truth, history, catalog, item_features, users = pandas_inputs(
        dict(pred=pred, truth=truth, history=history, catalog=catalog,
             item_features=item_features, users=users), ids=(user, item)).values()
    request = Evaluation.checked(locals())
    engine = _engine_of(pred, truth)
    if engine is not None:
        return engine.evaluate(pred, truth, request)
    _in_memory(request.npartitions)
    o, b, columns = request.options, request.beyond, request.columns
    truth, positives_only = labelled_truth(truth, label, default_label=columns.default_label)
    if request.slicing is not None:
        if o.unscored == "below":
            raise ValueError("unscored='below' with by= is not supported yet; evaluate each "
                             "slice's users without by=, or leave unscored at 'ignore'")
        if b.metrics or b.baselines:
            raise ValueError("by= with the beyond-accuracy metrics or baselines=True is not "
                             "supported yet; evaluate them without by=, or each slice's users "
                             "separately")
        return _evaluate_sliced(pred, truth, request, positives_only=positives_only)
    table, inputs, prep = _evaluate_model(pred, truth, request)
    if b.baselines:
        # the model's prepared rows and beyond input, re-scored; each baseline's beyond
        # numbers in a thread of their own, side by side, as soon as its rows are ranked
        started = []
        for model in _beyond.MODELS[1:]:
            rescored = _beyond.baseline_prepared(prep, history, model, ties=o.ties, user=user,
                                                 item=item, rank=rank, auc="auc" in o.metrics)
            started.append((rescored, _beyond.rows_in_background(
                rescored, pred, truth, o, b, user=user, item=item, label=label,
                inputs=inputs) if b.metrics else None))
        tables = [table] + [_evaluate_model(pred, truth, request, inputs, rescored, computed)[0]
                            for rescored, computed in started]
        attrs = table.attrs
        table = pd.concat([t.assign(model=model) for model, t in zip(_beyond.MODELS, tables)],
                          ignore_index=True)
        table = table[["model"] + [c for c in table.columns if c != "model"]]
        table.attrs = attrs
    table.attrs["notes"] = ([POSITIVES_ONLY] if positives_only else []) \
        + table.attrs.get("notes", [])
    rank_hint(table[table["model"] == "model"] if b.baselines else table, rank, score,
              prep.n_positive, prep.n_rows - prep.n_positive)
    return table


def _engine_of(*frames):
    """The engine module that evaluates these frames (see :func:`recmetrics._frames.engine_of`),
    imported when first needed; None for pandas, evaluated in this process."""
    engine = engine_of(*frames)
    if engine == "spark":
        from . import _spark
        return _spark
    if engine == "distributed":
        from . import _dask
        return _dask
    return None


def _in_memory(npartitions) -> None:
    if npartitions is not None:
        raise ValueError(f"npartitions={npartitions!r} splits Dask or Spark input; pandas input "
                         "is evaluated in this process: leave npartitions out, or pass Dask or "
                         "Spark DataFrames")


def _evaluate_model(pred, truth, request: Evaluation, inputs=None, prep=None, computed=None
                    ) -> tuple[pd.DataFrame, _beyond.BeyondInputs | None, Prepared]:
    """The tidy table of one model: the engine's rows, then the beyond-accuracy rows; the
    beyond input (``inputs``: that of the same rows, reused for a baseline); the prepared rows
    (``prep``: a baseline's, made from the model's, see _beyond.baseline_prepared), and their
    beyond numbers when started already (``computed``, _beyond.rows_in_background's)."""
    o, b, columns = request.options, request.beyond, request.columns
    similarity = _beyond.similarity_in_background(b, user=columns.user, item=columns.item,
                                                  pred=pred, ties=o.ties) \
        if inputs is None else None
    if prep is None:
        prep = Prepared(pred, truth, ties=o.ties, min_grade=o.min_grade,
                        judged_only=o.judged_only, keep_items=bool(b.metrics) or b.baselines,
                        **columns.names)
    o = resolve_max_grade(o, prep.top_grade)
    parts = []
    if b.metrics and computed is None:
        # in a thread while the engine's metrics are computed (both only read prep)
        run = _beyond.rows_in_background if o.metrics else _beyond.compute_rows
        computed = run(prep, pred, truth, o, b, user=columns.user, item=columns.item,
                       label=columns.label, inputs=inputs, similarity=similarity)
    if o.metrics:
        parts.append(_pipeline.evaluate_prepared(prep, o, **request.resampling.names).table)
    if computed is not None:
        beyond = _beyond.evaluate_rows(prep, o, b, computed, **request.resampling.names)
        parts.append(beyond.table)
        inputs = beyond.inputs
    table = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    table.attrs["conventions"] = {**o.conventions(), **b.conventions()}
    return table, inputs, prep


evaluate.__doc__ = (evaluate.__doc__ or "").format(parameters=_PARAMETERS)  # None under python -OO


def _evaluate_sliced(pred, truth, request: Evaluation, *, positives_only: bool) -> pd.DataFrame:
    """``evaluate(by=...)`` in memory: the users' attributes checked, then
    :mod:`recmetrics.slices`."""
    from . import _slices as slices

    o, c, r, sliced = request.options, request.columns, request.resampling, request.slicing
    if sliced is None:
        raise RuntimeError("_evaluate_sliced without by=")
    by, users, history = sliced.by, sliced.users, request.beyond.history
    if users is not None:
        users = slices.check_users(users, c.user)
    if r.ci is not None and r.bootstrap == "multinomial":
        raise ValueError("bootstrap='multinomial' cannot give per-slice intervals with by=: its "
                         "draws depend on the whole set of users, so a slice would not get the "
                         "interval it gets alone; use bootstrap='poisson' (the default)")
    if slices.by_popularity(by, [pred, truth, users]):
        table = slices.evaluate_popularity(
            pred, truth, o, history=history, named_metrics=request.named_metrics, users=users,
            by=by, ci=r.ci, n_resamples=r.n_resamples, seed=r.seed,
            min_slice_size=sliced.min_slice_size, **c.names)
        if positives_only:
            table.attrs["notes"].insert(0, POSITIVES_ONLY)
        return table
    prep = Prepared(pred, truth, ties=o.ties, keep_row_users=True, min_grade=o.min_grade,
                    judged_only=o.judged_only, **c.names)
    o = resolve_max_grade(o, prep.top_grade)
    if prep.row_users is None:  # keep_row_users=True sets them
        raise RuntimeError("the prepared rows lost their users")
    pred_rows, truth_rows = prep.row_users
    prep.row_users = None
    sources = [("pred", pred, pred_rows)] + ([("truth", truth, truth_rows)]
                                              if truth is not None else [])
    ids = slices.prepared_text_ids(prep.users)
    # by="activity" counts history rows when history is given (say so in the labels)
    frames = [frame for _, frame, _ in sources] + ([users] if users is not None else [])
    counted = slices.ACTIVITY in by and history is not None and not any(
        slices.ACTIVITY in frame.columns for frame in frames)
    activity = slices.history_activity(ids, history, c.user) if counted else prep.ranked.n_rows
    sl = slices.slicing(ids, by, sources, users, c.user, activity, shown=prep.users,
                        unit=slices.HISTORY_ROWS if counted else "")
    del pred_rows, truth_rows, sources
    table = slices.evaluate_sliced(prep, o, sl, ci=r.ci, n_resamples=r.n_resamples, seed=r.seed,
                                   min_slice_size=sliced.min_slice_size)
    if counted:
        table.attrs["notes"].append("activity: each user's rows in history (the training log), "
                                    "not their scored rows")
    if positives_only:
        table.attrs["notes"].insert(0, POSITIVES_ONLY)
    rank_hint(table[(table[by] == slices.ALL).all(axis=1)], c.rank, c.score, prep.n_positive,
              prep.n_rows - prep.n_positive)
    return table


def evaluate_per_user(pred, truth=None, *, k=10, metrics=None, user: str = "user",
                      item: str = "item", score: str = "score", label: str = "label",
                      rank: str | None = None, ties: EvalTies = "average",
                      gain: Gain = "exponential", ideal: Ideal = "truth",
                      denominator: Denominator = "relevant",
                      pr_denominator: PrDenominator = "standard",
                      gauc_weight: GaucWeight = "impressions",
                      no_relevant: NoRelevant = "skip", rbp_p: float = 0.8,
                      max_grade: float | None = None, min_grade: float | None = None,
                      judged_only: bool = False, unscored: Unscored = "ignore",
                      per_user_path=None, history=None,
                      catalog=None, item_features=None, head_share: float = 0.8,
                      unseen: Unseen = "add_one",
                      npartitions: int | None = None) -> pd.DataFrame | None:
    r"""One row per user with every per-user value behind :func:`evaluate`'s means.

    Parameters
    ----------{parameters}
    per_user_path : str or path, optional
        Write the table to Parquet there instead of returning it (a file for
        pandas input; a directory of one file per partition for Dask input,
        which never gathers the users in one process), and return None.

    Returns
    -------
    pandas.DataFrame or None
        The user column (named as in ``pred``; ``user`` if that name is taken
        by another column of the table), ``n_items, n_positives, n_relevant``
        and one column per metric
        and cut-off (``ndcg@10``, ``mrr``, ...; ``auc`` is the user's own AUC
        when GAUC is requested). A user left out of a mean has NaN there: no
        relevant item (under ``no_relevant="skip"``) or, for ``auc``, one
        class only. ``n_items`` counts scored rows; ``n_relevant`` counts
        relevant items, scored or not. With ``"rbp"``, ``rbp_residual`` is
        the RBP weight the judgements leave open (:func:`recmetrics.rbp`'s
        residual: :math:`p^d` below the list plus the expected weight of its
        unjudged rows; the true RBP lies in [rbp, rbp + rbp_residual] on
        relevance in [0, 1]). ``gauc_weight`` is accepted for
        symmetry with :func:`evaluate` and does not change any column. The
        beyond-accuracy metrics with a per-user value add a column per
        cut-off (``novelty@10``, ``diversity@10``, ...; NaN where undefined,
        e.g. serendipity for a user without history); catalogue-level ones
        (coverage, entropy, Gini) have none. Users
        come in the order of their first row in ``pred`` (then in
        ``truth``), for Dask input too.

    Examples
    --------
    >>> pred = pd.DataFrame({{"user": [1, 1, 1, 2, 2], "item": list("abcab"),
    ...                      "score": [0.9, 0.5, 0.1, 0.3, 0.8], "label": [1, 0, 1, 0, 1]}})
    >>> users = evaluate_per_user(pred, k=2, metrics=["mrr"])
    >>> users["user"].tolist(), users["mrr"].tolist()
    ([1, 2], [1.0, 1.0])
    """
    pred, truth, history, catalog, item_features = pandas_inputs(
        dict(pred=pred, truth=truth, history=history, catalog=catalog,
             item_features=item_features), ids=(user, item)).values()
    request = Evaluation.checked(locals())
    engine = _engine_of(pred, truth)
    if engine is not None:
        return engine.evaluate_per_user(pred, truth, request, per_user_path)
    _in_memory(request.npartitions)
    o, b = request.options, request.beyond
    truth, _ = labelled_truth(truth, label, default_label=request.columns.default_label)
    similarity = _beyond.similarity_in_background(b, user=user, item=item)
    prep = Prepared(pred, truth, ties=o.ties, min_grade=o.min_grade, judged_only=o.judged_only,
                    keep_items=bool(b.metrics), **request.columns.names)
    o = resolve_max_grade(o, prep.top_grade)
    computed = None
    if b.metrics:
        # in a thread while the engine's columns are computed (both only read prep)
        run = _beyond.rows_in_background if o.metrics else _beyond.compute_rows
        computed = run(prep, pred, truth, o, b, user=user, item=item, label=label, rows=False,
                       similarity=similarity)
    columns = _pipeline.user_columns(prep, o)
    if computed is not None:
        columns.update(_beyond.evaluate_rows(prep, o, b, computed).columns)
    table = _pipeline.user_table(prep, columns, user)
    if per_user_path is None:
        return table
    write_parquet(table, per_user_path)   # whole or not at all
    return None


evaluate_per_user.__doc__ = (evaluate_per_user.__doc__ or "").format(parameters=_PARAMETERS)


def compare(pred_a, pred_b=None, truth=None, *, k=10, metrics=None, user: str = "user",
            item: str = "item", score: str | Sequence[str] | Mapping[str, str] = "score",
            label: str = "label", rank: str | Sequence[str] | Mapping[str, str] | None = None,
            ties: EvalTies = "average", gain: Gain = "exponential", ideal: Ideal = "truth",
            denominator: Denominator = "relevant",
            pr_denominator: PrDenominator = "standard", gauc_weight: GaucWeight = "impressions",
            no_relevant: NoRelevant = "skip", rbp_p: float = 0.8, max_grade: float | None = None,
            min_grade: float | None = None, judged_only: bool = False,
            unscored: Unscored = "ignore", n_resamples: int = 10_000,
            seed=0, alpha: float = 0.05, baseline: str | None = None,
            correction: Adjustment = "holm", by=None, users=None,
            min_slice_size: int = 30, npartitions: int | None = None) -> pd.DataFrame:
    r"""Is model B better than model A? Or which of many models is better than which?

    Two models: ``compare(pred_a, pred_b, truth)``, named A and B. Many:
    ``compare({"pop": p, "mf": m, "gnn": g}, truth=truth)`` (a mapping from
    names to score frames, or a list of frames named ``model_1``, ``model_2``,
    ...), with ``pred_b`` omitted and ``truth`` passed by keyword. Every pair
    is compared (in the order given: A is the earlier model), or, with
    ``baseline="pop"``, each other model against the baseline (A is the
    baseline, so ``difference`` is model minus baseline).

    Like is compared with like. All models are judged on the **same users**:
    those that every model scored (at least one row each). Users some model
    did not score are left out, with a :class:`~recmetrics.RecmetricsWarning`
    giving the counts, because a mean over different users can make the worse
    model look better. All models are judged against the **same truth**:
    ``truth`` if given, else the union of the label columns of all frames
    (which must agree on every pair two models scored; if they differ, pass
    ``truth``). The id columns of all frames are coded once, together, so
    that comparing n models costs about n evaluations plus the tests.

    Every value, the difference and the tests use those users only. Each
    per-user metric is paired over the users where it is defined for every
    model, and the mean difference B - A is tested three ways: the paired
    t-test (``scipy.stats.ttest_rel``), a paired randomization test that flips
    the sign of each user's difference at random ``n_resamples`` times
    (p = (1 + #|flipped mean| >= |observed mean|) / (1 + n_resamples)), and
    the paired bootstrap test of :func:`recmetrics.paired_bootstrap_test`
    (``n_resamples`` draws). GAUC is the weighted mean of per-user AUCs over
    users with both classes under every model, each user weighted by the mean
    of the models' weights (equal when all scored the same rows), and is
    tested by randomization and bootstrap only. Global AUC is recomputed on
    the shared users' rows; it is not a mean over users, and is tested by
    DeLong's test (:func:`recmetrics.delong_test`, ties worth 1/2) on the
    (user, item) rows both models scored (the note says so when that is not
    every row). Probability metrics get no test.

    Multiple testing: ``correction`` adjusts each p-value column with
    :func:`recmetrics.adjust_p_values` **over all the rows of the table** (all
    pairs and all metrics; rows without that test do not count), into
    ``<column>_adjusted`` beside it. Even with two models, the default Holm
    correction applies across the metric rows: the raw p-values are those of
    a single test, the adjusted ones those of the family. ``verdict`` reads
    the adjusted p-values.

    Dask or Spark DataFrames are compared on their cluster
    (:func:`recmetrics.distributed.compare`, :func:`recmetrics.spark.compare`):
    the same table and, for the same ``seed`` and the same row order, the same
    p-values.

    ``score`` (or ``rank``, read as in :func:`evaluate`) may name a column
    per model: ``score=("score", "prob")`` reads A's ``score`` and B's
    ``prob``; with many models, a sequence in model order or a mapping from
    model name to column.

    Parameters
    ----------
    pred_a, pred_b : pandas.DataFrame
        The two models' scored rows, as ``pred`` of :func:`evaluate`; or, in
        ``pred_a`` alone, a mapping of names to such frames (or a list).
    truth : pandas.DataFrame, optional
        As in :func:`evaluate`.
    n_resamples : int, default 10000
        Draws of the randomization and bootstrap tests.
    seed : int, numpy Generator or None, default 0
        Seeds both tests (each its own stream: the randomization draws do not
        depend on the bootstrap's).
    alpha : float, default 0.05
        Level of the verdict, applied to the adjusted p-values.
    baseline : str, optional
        Compare each model with this one only (its name in the mapping; "A"
        or "B" for two frames). Default: every pair.
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        Multiple-testing adjustment of every p-value column over all rows.
    npartitions : int, optional
        Dask or Spark input only, as in :func:`evaluate`.

    Other parameters are those of :func:`evaluate`.

    With ``by`` (and ``users``, ``min_slice_size``, as in :func:`evaluate`;
    ``"activity"`` is not offered here) the table is repeated per slice, each
    slice row being this function on that slice's users alone (same seed),
    after the rows of all users (slice value ``"(all)"``). Testing every
    slice multiplies the chances of a false "significant": the columns
    ``p_ttest_adjusted``, ``p_randomization_adjusted`` and
    ``verdict_adjusted`` apply Holm's step-down across the slices of each
    metric (:func:`recmetrics.adjust_p_values`), beside the raw ones; so
    ``baseline`` and a ``correction`` other than ``"holm"`` are refused with
    ``by`` (pass the baseline model as ``pred_a``).

    Returns
    -------
    pandas.DataFrame
        ``model_a, model_b, metric, k, value_a, value_b, difference, ci_low,
        ci_high, p_ttest, p_ttest_adjusted, p_randomization,
        p_randomization_adjusted, p_bootstrap, p_bootstrap_adjusted, p_delong,
        p_delong_adjusted, n_users, n_users_a, n_users_b, conventions, note,
        verdict``, one row per pair and metric; ``model_a`` / ``model_b`` name
        the models the row compares, ``difference`` is B - A and
        ``ci_low`` / ``ci_high`` its ``1 - alpha`` interval (for a mean over
        users, the percentile interval of the paired bootstrap's own draws,
        the draws behind ``p_bootstrap``; for global AUC, DeLong's normal
        interval, difference +- z * sqrt(variance); not adjusted for the
        number of tests), ``n_users`` the users paired for
        that metric, ``n_users_a`` / ``n_users_b`` the users each model scored
        before restricting to the shared ones. ``verdict`` reads the adjusted
        randomization p-value (DeLong's for global AUC) at level ``alpha``: "B
        better", "A better" (B and A being ``model_b`` and ``model_a``), "no
        significant difference" or "not tested". ``result.attrs`` holds
        ``conventions``, ``alpha``, ``confidence`` (``1 - alpha``),
        ``correction``, ``models`` and ``baseline``. :func:`recmetrics.results_table_from_comparison` turns
        the table into Markdown, LaTeX or HTML.

    References
    ----------
    Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical significance
    tests for information retrieval evaluation. *CIKM*.
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
    Journal of Statistics* 6(2), 65-70.
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two or
    more correlated receiver operating characteristic curves. *Biometrics* 44(3), 837-845.

    Examples
    --------
    >>> a = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "score": [0.2, 0.9, 0.1, 0.8],
    ...                   "label": [1, 0, 1, 0]})
    >>> b = a.assign(score=[0.9, 0.2, 0.8, 0.1])
    >>> compare(a, b, k=1, metrics=["mrr"])[["metric", "value_a", "value_b", "difference"]].values.tolist()
    [['mrr', 0.5, 1.0, 0.5]]
    >>> c = a.assign(score=[0.5, 0.4, 0.4, 0.5])
    >>> t = compare({"a": a, "b": b, "c": c}, k=1, metrics=["mrr"], baseline="a")
    >>> t[["model_a", "model_b", "difference"]].values.tolist()
    [['a', 'b', 0.5], ['a', 'c', 0.25]]
    """
    if unscored == "below":
        raise ValueError("compare(unscored='below') is not supported yet (DeLong's test would "
                         "need the unscored rows too); evaluate each model with "
                         "unscored='below', or compare with unscored='ignore'")
    pred_a, pred_b, truth, users = pandas_inputs(
        dict(pred_a=pred_a, pred_b=pred_b, truth=truth, users=users), ids=(user, item)).values()
    request = Comparison.checked(locals())
    engine = _engine_of(pred_a, pred_b, truth)
    if request.slicing is not None:
        if engine is not None:
            raise ValueError("compare(..., by=) takes pandas DataFrames; compare each slice's "
                             "users separately on Dask or Spark, or collect a sample of users "
                             "first")
        if pred_b is None:
            raise ValueError("by= compares two models, pred_a and pred_b; compare many models "
                             "without by=, or each pair by slice")
        # by= compares B with A in every slice, Holm across the slices: an option that picks
        # the pairs or the correction would be ignored, so it is refused
        if baseline is not None:
            raise ValueError(f"baseline={baseline!r} with by=: each slice compares pred_b with "
                             "pred_a; leave out baseline= (pass the baseline model as pred_a)")
        if request.correction != "holm":
            raise ValueError(f"correction={correction!r} with by=: the p-values are adjusted by "
                             "Holm's step-down across the slices of each metric; leave out "
                             "correction=")
        graded = set(GRADED) & set(request.options.metrics)
        if graded and max_grade is None:  # one scale for every slice, not each slice's top grade
            raise ValueError(f"compare(by=...) with {', '.join(sorted(graded))} needs max_grade= "
                             "(the top grade of the judging scale), so that every slice divides "
                             "by the same grade; pass it, e.g. max_grade=4")
        from ._slices import compare_sliced
        return compare_sliced(compare, pred_a, pred_b, truth, by=by, users=users,
                              min_slice_size=min_slice_size, user=user, item=item, label=label,
                              k=k, metrics=metrics, score=score, rank=rank,
                              n_resamples=n_resamples, seed=seed, alpha=alpha,
                              **conventions_of(locals()))
    if engine is not None:  # the same table from Dask or Spark DataFrames
        return engine.compare(pred_a, pred_b, truth, request)
    _in_memory(request.npartitions)
    from ._compare import compare_models, models_of

    o = request.options
    models = models_of(pred_a, pred_b, truth, score=score, rank=rank)
    for model in models:
        check_rank(model.rank, o)
    truth, _ = labelled_truth(truth, label, default_label=request.columns.default_label)
    o = resolve_max_grade(o, top_grade_of([("truth", truth)] if truth is not None else
                                          [(m.name, m.frame) for m in models], label,
                                          o.min_grade))
    return compare_models(models, truth, o, user=user, item=item, label=label, baseline=baseline,
                          n_resamples=request.n_resamples, seed=request.seed,
                          alpha=request.alpha, correction=request.correction)
