r"""What the Dask and Spark engines share: evaluating partitions of whole users, exactly.

:mod:`recmetrics.distributed` (Dask) and :mod:`recmetrics.spark` differ in
how they move rows; what they compute is here, once:

1. :func:`check_inputs` and :func:`keyed_rows`: the columns each input
   needs, and each row's canonical user id with the hash that sends it to
   the partition ``hash(canonical user id) mod P``;
2. :func:`evaluate_group`: one partition of whole users through the
   in-memory steps of :mod:`recmetrics._pipeline` (a :class:`Partial`: its
   Summary, its global-AUC pieces per score bucket, its per-user table);
3. :func:`bucket_counts`: one score bucket's exact pair counts (and Poisson
   resample sums) from every partition's piece of it;
4. :func:`total` and :func:`add_pairs`: the Summaries added, and global AUC's
   term across buckets (a positive beats every negative of a lower bucket)
   added in Python integers, which do not overflow;
5. :func:`finish`: the tidy table, as :func:`recmetrics.evaluate` gives it.

The boundaries of the score buckets only balance the work: whatever they
are, every pair of rows is counted once, within a bucket or across two.

``evaluate(by=...)`` adds fine slices to each partition
(:func:`evaluate_sliced_group`), coded into the table's slices on the driver
(:func:`slice_plan`, :func:`slice_bucket_counts`, :func:`finish_sliced`);
:func:`recmetrics.compare` has its own steps below (:func:`compare_group`,
the placements of DeLong's test, :func:`compare_finish`).
"""
from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from . import _beyond, _pipeline, _kernels, _slices
from ._pipeline import Prepared, Summary, check_rank, rank_hint
from ._ids import keyed_users, user_hash
from ._metrics import GRADED
from ._options import Options
from ._output import directory_output
from ._request import Columns, Comparison, Evaluation, Resampling, SliceRequest
from ._validation import check_columns
from ._delong import DeLongResult, delong_result

#: Rows of pred per partition of users (a worker evaluates one partition at a time, at about
#: 150 bytes a row); ``npartitions=`` overrides it.
PARTITION_ROWS = 250_000
#: Scored rows per bucket of global AUC (a bucket's rows meet in one task): at most as many
#: buckets as partitions, and one bucket per this many rows.
BUCKET_ROWS = 2_000_000
#: Key of a truth-only user's first row, after every pred row (users keep the input order).
TRUTH_ORDER = 1 << 62


# --------------------------------------------------------------------------- options and inputs


def refuse_unscored(o: Options, engine: str) -> None:
    """``unscored="below"`` is computed in one pandas process only (for now)."""
    if o.unscored == "below":
        raise ValueError(f"unscored='below' is not supported on {engine} yet (its AUC intervals "
                         "and slices would need the unscored rows of every partition); evaluate "
                         "in memory (pandas) with unscored='below', or leave it at 'ignore'")


def refuse_unresolved_grade(o: Options, engine: str) -> None:
    """ERR and RBP divide by the top grade of the judging scale; in memory it defaults to the
    top grade of the whole truth, which no partition sees: the engines need ``max_grade``."""
    graded = [m for m in o.metrics if m in GRADED]
    if graded and o.max_grade is None:
        raise ValueError(f"{', '.join(graded)} on {engine} divide(s) by the top grade of the "
                         "judging scale, which a partition cannot find in the others' truth: "
                         "pass max_grade=, e.g. max_grade=1 for binary labels")


def refuse_history_activity(by, history, engine: str) -> None:
    """``by="activity"`` with ``history=`` counts history rows, in memory only (for now)."""
    names = [by] if isinstance(by, str) else list(by or ())
    if history is not None and "activity" in names:
        raise ValueError(f"by='activity' with history= buckets users by their history rows, "
                         f"which {engine} does not support yet (it would count scored rows, "
                         "another slicing); evaluate in memory (pandas), or pass users= a frame "
                         "of each user's history count and slice by that column")


class Engine(Protocol):
    """What a partitioned engine (:mod:`recmetrics._dask`, :mod:`recmetrics._spark`) provides:
    how its rows are shuffled by user, mapped and reduced. :func:`evaluate_on` and
    :func:`evaluate_per_user_on` are the rest, the same for both."""

    name: str   # in messages: "Dask", "Spark"

    def session(self) -> AbstractContextManager:
        """Around every job of one call (Spark: its warnings filtered and worker errors
        raised as ValueError)."""

    def frames(self, pred, truth) -> tuple:
        """pred and truth as the engine's DataFrames (a pandas truth converted)."""

    def labelled_truth(self, truth, label: str, *, default_label: bool) -> tuple:
        """:func:`recmetrics._pipeline.labelled_truth` on the engine's frames."""

    def distinct_items(self, pred, judged, item: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The distinct items of pred and of judged, as one-column pandas frames."""

    def share(self, shared: _beyond.SharedBeyond, options: dict, pred):
        """The beyond-accuracy set-up sent once to every worker (of ``pred``'s cluster), as a
        function of a partition's Prepared rows (see :func:`evaluate_group`'s ``beyond``)."""

    def run(self, pred, truth, *, o: Options, columns: Columns, resampling: Resampling,
            npartitions: int | None, users: str | None, path=None, beyond=None
            ) -> tuple[Summary | None, list, list]:
        """Every partition of whole users evaluated (:func:`evaluate_group`) and reduced:
        the total Summary (with AUC's pairs), the per-user tables (``users``), the beyond
        sums."""

    def run_sliced(self, pred, truth, *, o: Options, columns: Columns,
                   resampling: Resampling, npartitions: int | None, slicing: SliceRequest
                   ) -> tuple[Summary, list, SlicePlan, list]:
        """``evaluate(by=...)``: the slicing checked on the inputs' columns, every partition
        evaluated by fine slice (:func:`evaluate_sliced_group`); the total Summary, the fine
        Summaries, the plan and the per-slice bucket counts (:func:`finish_sliced`)."""

    def input_files(self, *frames) -> list[str]:
        """The files the frames read: the per-user output must not be one of them."""

    def compare_frames(self, frames: list, truth) -> tuple[list, object]:
        """The models' frames and the truth (or None) as the engine's DataFrames."""

    def run_compare(self, frames: list, truth, inputs: list[dict], *, models: list,
                    pairs: list, o: Options, columns: Columns, npartitions: int | None
                    ) -> CompareTotals:
        """Every model's and the truth's rows shuffled together by user, every partition
        compared (:func:`compare_group`), and the results gathered on the driver."""


def evaluate_on(engine: Engine, pred, truth, request: Evaluation) -> pd.DataFrame:
    """:func:`recmetrics.evaluate` on a partitioned engine: the same table as in memory."""
    o, b, c, r = request.options, request.beyond, request.columns, request.resampling
    b.refuse_dask(engine.name, baselines_only=True)
    refuse_unscored(o, engine.name)
    refuse_unresolved_grade(o, engine.name)
    r.poisson_only(engine.name)
    truth, positives_only = engine.labelled_truth(truth, c.label, default_label=c.default_label)
    seed = None if r.ci is None else _pipeline.poisson_seed(r.seed)
    if request.slicing is not None:
        refuse_history_activity(request.slicing.by, b.history, engine.name)
        if b.metrics:
            raise ValueError(f"by= with the beyond-accuracy metrics is not supported on "
                             f"{engine.name} yet; evaluate them without by=, or in memory "
                             "(pandas)")
        with engine.session():
            s, fine, plan, buckets = engine.run_sliced(
                pred, truth, o=o, columns=c, resampling=r, npartitions=request.npartitions,
                slicing=request.slicing)
        return finish_sliced(s, fine, plan, buckets, o, ci=r.ci, seed=seed,
                             min_slice_size=request.slicing.min_slice_size,
                             positives_only=positives_only, rank=c.rank, score=c.score)
    shared, beyond = None, None
    with engine.session():
        if b.metrics:
            pred, truth = engine.frames(pred, truth)
            shared, options = beyond_setup(b, o, pred, truth, c, engine.distinct_items,
                                           ci=r.ci, seed=r.seed, n_resamples=r.n_resamples,
                                           engine=engine.name)
            beyond = engine.share(shared, options, pred)
        total_, _, extras = engine.run(pred, truth, o=o, columns=c, resampling=r,
                                       npartitions=request.npartitions, users=None,
                                       beyond=beyond)
    if total_ is None:
        raise RuntimeError("the engine's run gave no Summary")
    return evaluate_table(total_, o, b, shared, extras, ci=r.ci, n_resamples=r.n_resamples,
                          truth_given=truth is not None, positives_only=positives_only,
                          rank=c.rank, score=c.score)


def evaluate_per_user_on(engine: Engine, pred, truth, request: Evaluation, per_user_path
                         ) -> pd.DataFrame | None:
    """:func:`recmetrics.evaluate_per_user` on a partitioned engine: the in-memory table, users
    in the order of their first row; or, with ``per_user_path``, one Parquet file per
    partition written there by the workers (nothing gathered) and None."""
    o, c = request.options, request.columns
    request.beyond.refuse_dask(engine.name)
    refuse_unscored(o, engine.name)
    refuse_unresolved_grade(o, engine.name)
    truth, _ = engine.labelled_truth(truth, c.label, default_label=c.default_label)
    o_users, folder = per_user_plan(o, per_user_path, engine.input_files(pred, truth))
    none = Resampling(None, 0, 0)
    if folder is None:
        with engine.session():
            _, tables, _ = engine.run(pred, truth, o=o_users, columns=c, resampling=none,
                                      npartitions=request.npartitions, users="collect")
        return user_rows(tables)
    with folder as path, engine.session():
        engine.run(pred, truth, o=o_users, columns=c, resampling=none,
                   npartitions=request.npartitions, users="write", path=path)
    return None


def evaluate_table(s: Summary, o: Options, b, shared, extras: list, *, ci, n_resamples: int,
                   truth_given: bool, positives_only: bool, rank, score) -> pd.DataFrame:
    """The tidy table of an engine's ``evaluate``: the accuracy rows from the total Summary,
    then, when ``shared`` (the beyond-accuracy set-up) is given, the beyond rows from the
    partitions' sums ``extras``."""
    table = finish(s, o, ci=ci, truth_given=truth_given, positives_only=positives_only,
                   rank=rank, score=score) if shared is None or o.metrics else None
    if shared is None:
        return table
    return _beyond.distributed_table(table, s, shared, extras, o, b, ci=ci,
                                     truth_given=truth_given, positives_only=positives_only,
                                     n_resamples=n_resamples)


def check_inputs(pred_columns, truth_columns, columns: Columns) -> list[tuple[str, list[str]]]:
    """Check the columns of pred (and truth, unless its columns are None): the (name, columns
    kept) of each input, pred first."""
    user, item, label, rank = columns.user, columns.item, columns.label, columns.rank
    wanted = {"user": user, "item": item,
              **({"score": columns.score} if rank is None else {"rank": rank})}
    if truth_columns is None:
        wanted["label"] = label
    check_columns("pred", pred_columns, wanted)
    inputs = [("pred", list(wanted.values()))]
    if truth_columns is not None:
        check_columns("truth", truth_columns, {"user": user, "item": item, "label": label})
        inputs.append(("truth", [user, item, label]))
    return inputs


def keyed_rows(part: pd.DataFrame, *, name: str, user: str, keep: list[str], integral: bool
               ) -> tuple[pd.DataFrame, np.ndarray]:
    """The ``keep`` columns of one input partition with canonical user ids, and each row's
    user hash (the partition of a row is its hash modulo the number of partitions)."""
    canonical, hashes = keyed_users(part[user], name=name, column=user, integral=integral)
    out = part[keep].copy()
    out[user] = canonical
    return out, hashes


def n_partitions(n_rows: int, npartitions: int | None) -> int:
    """Partitions of users: ``npartitions``, or one per PARTITION_ROWS rows of pred."""
    return int(npartitions or max(1, -(-n_rows // PARTITION_ROWS)))


def boundaries(samples: list[np.ndarray], n_rows: int, n_parts: int) -> np.ndarray:
    """Inner bucket boundaries from score quantiles: a bucket holds the scores s with
    b[i - 1] <= s < b[i]; at most one bucket per partition and per BUCKET_ROWS rows."""
    n_buckets = int(min(n_parts, max(1, -(-n_rows // BUCKET_ROWS))))
    values = np.concatenate([s for s in samples if s.size] or [np.zeros(0)])
    if values.size == 0 or n_buckets < 2:
        return np.zeros(0)
    return np.unique(np.quantile(values, np.linspace(0, 1, n_buckets + 1))[1:-1])


# --------------------------------------------------------------------------- one partition


@dataclass
class Partial:
    """What one partition of whole users gives: its Summary, its scored rows split by score
    bucket (see :func:`pieces`; empty without global AUC), and its per-user table (None
    unless asked for and gathered)."""

    summary: Summary
    pieces: list
    table: pd.DataFrame | None = None
    beyond: object = None    # what ``beyond(prep)`` returned (see evaluate_group), if asked


def evaluate_group(pred: pd.DataFrame, truth: pd.DataFrame | None, number: int, *, o: Options,
                   columns: Columns, integral: bool, bounds: np.ndarray | None, seed: int | None,
                   n_resamples: int, users: str | None, path: str | None,
                   beyond=None) -> Partial:
    """Evaluate one partition of whole users with the in-memory steps.

    ``users`` None gives the Summary (with Poisson sums when ``seed`` is
    given) and the AUC pieces for ``bounds``; "collect" gives the per-user
    table with each user's first-row key ``_first``; "write" writes that
    table to ``path/part.NNNNN.parquet``. With ``users`` the Summary only
    counts the rows. ``beyond``, a function of the Prepared rows, adds its result
    (the beyond-accuracy sums, :mod:`recmetrics._beyond`) from the same rows.
    """
    user, label = columns.user, columns.label
    has_truth, inputs = _truth_of(truth, user, label)
    if len(pred) == 0 and not has_truth:
        empty = (np.zeros(0), np.zeros(0, dtype=bool),
                 None if seed is None else np.zeros(0, dtype=np.uint64))
        return Partial(Summary(inputs=inputs), [] if bounds is None else
                       [empty] * (bounds.size + 1))
    prep = Prepared(pred, truth, user=user, item=columns.item, score=columns.score,
                    label=label, ties=o.ties, check=False, integral_ids=integral,
                    rank=columns.rank, min_grade=o.min_grade, judged_only=o.judged_only,
                    keep_items=beyond is not None)
    if users is not None:
        counted = Summary(n_rows=prep.n_rows, inputs=inputs)
        table = _pipeline.user_table(prep, _pipeline.user_columns(prep, o), user)
        if users == "write":
            if path is None:
                raise ValueError("writing the per-user table needs a folder; pass per_user_path=")
            table.to_parquet(Path(path) / f"part.{number:05d}.parquet", index=False)
            return Partial(counted, [])
        table["_first"] = first_rows(prep.users, pred, truth, user)
        return Partial(counted, [], table)
    per_user = _pipeline.per_user(prep, o)
    ratios = _pipeline.user_ratios(prep, per_user, o)
    partial = _whole(prep, per_user, ratios, o, inputs=inputs, bounds=bounds, seed=seed,
                     n_resamples=n_resamples)
    if beyond is not None:
        partial.beyond = beyond(prep)
    return partial


def _whole(prep: Prepared, per_user, ratios: dict, o: Options, *, inputs: dict, bounds, seed,
           n_resamples: int) -> Partial:
    """The Summary (with Poisson sums) and AUC pieces of every user of a partition."""
    s = _pipeline.summarize(prep, per_user, o, ratios)
    s.inputs = inputs
    hashes = None
    if seed is not None:
        hashes = user_hash(prep.users)
        s.resamples = _pipeline.poisson_sums(hashes, ratios, seed, n_resamples)
    return Partial(s, [] if bounds is None else pieces(prep, bounds, hashes))


def check_slices(by: list[str], users_columns, *, user: str,
                 sources: list[tuple[str, list]]) -> list[bool]:
    """``by`` (checked: :class:`SliceRequest`) checked on the inputs' columns as in memory
    (``users_columns`` None without ``users=``): whether each name is "activity"."""
    if users_columns is not None:
        check_columns("users", users_columns, {"user": user})
    named = sources + ([("users", list(users_columns))] if users_columns is not None else [])
    empty = [(name, pd.DataFrame(columns=list(columns)), None) for name, columns in named]
    _slices.user_values(pd.Index([]), by, empty[:len(sources)],  # refuses an unknown name
                       empty[-1][1] if users_columns is not None else None, user,
                       np.zeros(0, dtype=np.int64))
    return [not any(c in columns and c != user for _, columns in named) for c in by]


def keyed_attributes(part: pd.DataFrame, *, user: str, integral: bool
                     ) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows of ``users=`` with their ids in the form of pred's (int64 or canonical text) and
    each row's user hash; ids that cannot be pred's (text among integer ids) are dropped,
    as in memory they match no user."""
    text = pd.Series(np.asarray(_slices.text_ids(part[user]), dtype=object), index=part.index)
    out = part.copy()
    if integral:
        whole = text.str.fullmatch(r"-?\d+").fillna(False).to_numpy(dtype=bool)
        out = out[whole]
        ids = pd.to_numeric(text[whole]).to_numpy(dtype=np.int64)
    else:
        ids = text.to_numpy()
    out[user] = ids
    return out, user_hash(ids)


@dataclass
class SlicedPartial:
    """What one partition of whole users gives to ``evaluate(by=...)``: the Partial of all its
    users, and per *fine slice* (the users sharing every by name's raw value: the value of a
    column, None when missing, or for "activity" the number of scored rows) its key, Summary
    (with Poisson sums of the ratios) and AUC pieces by bucket. Fine slices of all partitions
    are merged into the table's slices once every value is known (:func:`slice_plan`)."""

    whole: Partial
    keys: list
    summaries: list
    pieces: list


def evaluate_sliced_group(pred: pd.DataFrame, truth: pd.DataFrame | None,
                          users: pd.DataFrame | None, number: int, *, o: Options, columns: Columns,
                          integral: bool, bounds: np.ndarray | None, seed: int | None,
                          n_resamples: int, by: list[str]) -> SlicedPartial:
    """Evaluate one partition of whole users, by fine slice (see :class:`SlicedPartial`):
    each user's values are computed once, and each fine slice sums its users' values."""
    user, label = columns.user, columns.label
    has_truth, inputs = _truth_of(truth, user, label)
    if len(pred) == 0 and not has_truth:
        empty = evaluate_group(pred, None, number, o=o, columns=columns, integral=integral,
                               bounds=bounds, seed=seed, n_resamples=n_resamples, users=None,
                               path=None)
        empty.summary.inputs = inputs
        return SlicedPartial(empty, [], [], [])
    if users is not None and len(users):  # (a partition may hold none of its rows)
        _slices.check_users(users, user)
    prep = Prepared(pred, truth, user=user, item=columns.item, score=columns.score,
                    label=label, ties=o.ties, check=False, integral_ids=integral,
                    rank=columns.rank, keep_row_users=True, min_grade=o.min_grade,
                    judged_only=o.judged_only)
    pred_rows, truth_rows = prep.row_users or (None, None)
    prep.row_users = None
    sources = [("pred", pred, pred_rows)] + ([("truth", truth, truth_rows)]
                                              if truth is not None else [])
    values = _slices.user_values(_slices.prepared_text_ids(prep.users), by, sources, users, user,
                                prep.ranked.n_rows, shown=prep.users)
    per_column, uniques = [], []
    for v in values:
        column = pd.Series(v, dtype=object)
        if v.dtype == object:  # every missing value as None
            column = column.where(column.notna(), None)
        codes_, found = pd.factorize(column, use_na_sentinel=False)
        per_column.append(codes_)
        uniques.append(np.asarray(found, dtype=object))
    dims = [max(len(u), 1) for u in uniques]
    present, codes = np.unique(np.ravel_multi_index(per_column, dims), return_inverse=True)
    codes = codes.astype(np.intp)
    keys = [tuple(u[i] for u, i in zip(uniques, at))
            for at in zip(*np.unravel_index(present, dims))]
    per_user = _pipeline.per_user(prep, o)
    ratios = _pipeline.user_ratios(prep, per_user, o)
    whole = _whole(prep, per_user, ratios, o, inputs=inputs, bounds=bounds, seed=seed,
                   n_resamples=n_resamples)
    n = len(keys)
    no_auc = o.replace(metrics=tuple(m for m in o.metrics if m != "auc"))
    parts = _slices.slice_summaries(prep, per_user, no_auc, ratios, codes, n)
    if seed is not None:
        for part, sums in zip(parts, _slices.slice_resamples(prep, ratios, no_auc, codes, n, seed,
                                                             n_resamples)):
            part.resamples = sums
    fine_pieces: list = []
    if bounds is not None:
        hashes = user_hash(prep.users) if seed is not None else None
        rows, edges = _slices.slice_rows(prep, codes, n)
        fine_pieces = [pieces(prep, bounds, hashes, rows[edges[f]:edges[f + 1]])
                       for f in range(n)]
    return SlicedPartial(whole, keys, parts, fine_pieces)


@dataclass
class SlicePlan:
    """The table's slices from every partition's fine slices: the Slicing (codes per user, for
    the slice sizes), and per partition the slice of each of its fine slices."""

    slicing: _slices.Slicing
    of_fine: list


def slice_plan(keys: list[list], summaries: list[list], by: list[str], activity: list[bool]
               ) -> SlicePlan:
    """Code the fine slices of all partitions as :func:`recmetrics._slices.slicing` codes the
    users in memory: a column's values sorted, "(missing)" last; "activity" in quantile
    buckets of every user's number of scored rows."""
    flat = [k for part in keys for k in part]
    weight = np.array([s.n_users for part in summaries for s in part], dtype=np.int64)
    per_column, dims, labels = [], [], []
    for j, is_activity in enumerate(activity):
        values = [k[j] for k in flat]
        if is_activity:
            counts = np.asarray(values, dtype=np.int64)
            distinct, at = np.unique(counts, return_inverse=True)
            every = np.repeat(distinct, np.bincount(at, weights=weight, minlength=distinct.size)
                              .astype(np.int64))
            user_codes, names_ = _slices.activity_codes(every)
            first = np.searchsorted(every, distinct)  # every is sorted: each count's first user
            present = first < every.size
            bucket = np.zeros(distinct.size, dtype=np.intp)
            bucket[present] = user_codes[first[present]]
            codes_ = bucket[at]
        else:
            distinct_values = pd.unique(pd.Series(values, dtype=object))
            value_codes, names_ = _slices.column_codes(np.asarray(distinct_values, dtype=object),
                                                       by[j])
            codes_ = value_codes[pd.Index(distinct_values).get_indexer(
                pd.Series(values, dtype=object))]
        per_column.append(codes_)
        dims.append(max(len(names_), 1))
        labels.append(names_)
    sl = _slices.coded_slicing(by, per_column, dims, labels, len(flat))
    user_codes = np.repeat(sl.codes, weight)
    final = _slices.Slicing(sl.columns, user_codes.astype(np.intp), sl.labels)
    of_fine, start = [], 0
    for part in keys:
        of_fine.append(sl.codes[start:start + len(part)])
        start += len(part)
    return SlicePlan(final, of_fine)


def slice_bucket_counts(fine: list, of_fine: list, n_slices: int, seed: int | None,
                        n_resamples: int) -> list:
    """One score bucket's exact pair counts per slice, from every partition's fine pieces of
    the bucket and the slice of each fine slice."""
    grouped: list[list] = [[] for _ in range(n_slices)]
    for part, codes in zip(fine, of_fine):
        for piece, code in zip(part, codes):
            grouped[code].append(piece)
    return [bucket_counts(g, seed, n_resamples) for g in grouped]


def finish_sliced(whole: Summary, fine: list[list], plan: SlicePlan, buckets: list, o: Options,
                  *, ci: float | None, seed: int | None, min_slice_size: int,
                  positives_only: bool, rank: str | None, score: str) -> pd.DataFrame:
    """The table of ``evaluate(by=...)`` from the total of all users, every partition's fine
    Summaries, the plan, and per bucket the per-slice pair counts."""
    sl = plan.slicing
    n = sl.n_slices
    totals = [Summary() for _ in range(n)]
    for summaries, codes in zip(fine, plan.of_fine):
        for s, code in zip(summaries, codes):
            totals[code] = totals[code] + s
    if buckets:
        for i, total_ in enumerate(totals):
            add_pairs(total_, [b[i] for b in buckets], seed)
    whole.unmatched.warn()
    table = _slices.sliced_table(whole, totals, sl, o, ci=ci, n_users=whole.n_users,
                                min_slice_size=min_slice_size)
    if positives_only:
        table.attrs["notes"].insert(0, _pipeline.POSITIVES_ONLY)
    rank_hint(table[(table[sl.columns] == _slices.ALL).all(axis=1)], rank, score,
              whole.n_positive, whole.n_rows - whole.n_positive)
    return table


def _truth_of(truth: pd.DataFrame | None, user: str, label: str) -> tuple[bool, dict]:
    """Whether a partition's truth has a relevant row, and its rows and users counted."""
    has_truth = truth is not None and len(truth) > 0 and \
        bool((pd.to_numeric(truth[label], errors="coerce") > 0).any())
    return has_truth, {"truth_rows": 0 if truth is None else len(truth),
                       "truth_users": 0 if truth is None else int(truth[user].nunique())}


def first_rows(users: pd.Index, pred: pd.DataFrame, truth: pd.DataFrame | None,
               user: str) -> np.ndarray:
    """Each user's first row in the input (pred's rows, then truth's), as an int64 key."""
    key = np.full(len(users), -1, dtype=np.int64)
    for frame, offset in ((pred, 0), (truth, TRUTH_ORDER)):
        lacking = np.flatnonzero(key < 0)
        if frame is None or not lacking.size or not len(frame):
            continue
        first = frame.groupby(user, sort=False)["_first"].min()
        where = first.index.get_indexer(users[lacking])
        found = where >= 0
        key[lacking[found]] = first.to_numpy(dtype=np.int64)[where[found]] + offset
    return key


def compact(scores: np.ndarray) -> np.ndarray:
    """The scores as float32 when that loses nothing (CTR models write float32), else float64."""
    narrow = scores.astype(np.float32)
    return narrow if np.array_equal(narrow, scores) else scores


def pieces(prep: Prepared, bounds: np.ndarray, hashes: np.ndarray | None,
           rows: np.ndarray | None = None) -> list:
    """Scored rows per score bucket, as small as exactness allows.

    Each piece is (scores, positive, extra): the distinct (score, positive)
    pairs with their counts (``extra`` None when every count is 1), or, when
    the Poisson bootstrap needs them, the rows with their users' hashes.
    Scores are kept as float32 when that is exact. These pieces wait in
    worker memory until every partition is done.
    """
    scores, positive = prep.scores, prep.grades > 0
    lists = prep.lists
    if rows is not None:  # these rows only (a slice's)
        scores, positive, lists = scores[rows], positive[rows], lists[rows]
    order = np.lexsort((positive, scores))
    scores, positive = scores[order], positive[order]
    if hashes is None:
        first = np.flatnonzero(_kernels.starts(scores) | _kernels.starts(positive))
        count = np.diff(np.append(first, scores.size))
        scores, positive = scores[first], positive[first]
        extra = None if count.size == 0 or count.max() == 1 else \
            count.astype(np.int32 if count.max() < 2**31 else np.int64)
    else:
        extra = hashes[lists[order]]
    cut = np.searchsorted(scores, bounds, side="left")
    edges = np.r_[0, cut, scores.size]
    scores = compact(scores)
    return [(scores[a:b], positive[a:b], None if extra is None else extra[a:b])
            for a, b in zip(edges[:-1], edges[1:])]


# --------------------------------------------------------------------------- adding up


def empty_bucket(seed: int | None, n_resamples: int) -> tuple:
    """The counts of a bucket without scored rows."""
    return (0, 0, 0, 0), (None if seed is None else np.zeros((n_resamples, 4)))


def bucket_counts(pieces: list, seed: int | None, n_resamples: int) -> tuple:
    """Exact wins, wins-or-ties, positives and negatives of one bucket (Python ints), and the
    Poisson resample sums when ``seed`` is given."""
    pieces = [p for p in pieces if p[0].size]
    if not pieces:
        return empty_bucket(seed, n_resamples)
    scores = np.concatenate([p[0].astype(np.float64) for p in pieces])
    positive = np.concatenate([p[1] for p in pieces])
    if seed is None:
        count = np.concatenate([np.ones(p[0].size, dtype=np.int64) if p[2] is None
                                else p[2].astype(np.int64) for p in pieces])
    else:
        count = np.ones(scores.size, dtype=np.int64)
    order = np.argsort(scores, kind="stable")
    scores, positive, count = scores[order], positive[order], count[order]
    first = np.flatnonzero(_kernels.starts(scores))
    pos = np.add.reduceat(np.where(positive, count, 0), first)
    neg = np.add.reduceat(np.where(positive, 0, count), first)
    below = np.cumsum(neg) - neg
    wins = int(np.dot(pos, below))
    ties = int(np.dot(pos, neg))
    exact = (wins, wins + ties, int(pos.sum()), int(neg.sum()))
    if seed is None:
        return exact, None
    hashes = np.concatenate([p[2] for p in pieces])[order]
    return exact, _pipeline.poisson_auc_sums(scores, positive, hashes, seed, n_resamples)


def total(summaries: list[Summary]) -> Summary:
    """The Summaries of disjoint partitions added; an empty pred is refused."""
    s = sum(summaries[1:], summaries[0]) if summaries else Summary()
    if s.n_rows == 0:
        raise ValueError("pred has no rows; pass at least one scored item")
    return s


def add_pairs(s: Summary, buckets: list[tuple], seed: int | None) -> None:
    """Set global AUC's pair counts (and resample sums) of ``s`` from its buckets in ascending
    order of score: a positive of a bucket beats every negative of the buckets below."""
    wins = wins_or_ties = negatives_below = 0
    for (w, wt, p, n), _ in buckets:
        wins += w + p * negatives_below
        wins_or_ties += wt + p * negatives_below
        negatives_below += n
    s.pairs = (wins, wins_or_ties)
    if seed is not None:
        s.resamples["auc"] = _pipeline.combine_auc_sums([b for _, b in buckets])


# --------------------------------------------------------------------------- the results


def finish(s: Summary, o: Options, *, ci: float | None, truth_given: bool, positives_only: bool,
           rank: str | None, score: str) -> pd.DataFrame:
    """The tidy table of :func:`recmetrics.evaluate` from the total Summary."""
    s.unmatched.warn()
    intervals = _pipeline.poisson_intervals(s, o, ci) if ci is not None else None
    table = _pipeline.assemble(s, o, ci=ci, intervals=intervals)
    table.attrs["inputs"] = {"pred_rows": s.n_rows, "pred_users": s.n_with_rows,
                             **(s.inputs if truth_given else {})}
    table.attrs["notes"] = ([_pipeline.POSITIVES_ONLY] if positives_only else []) \
        + table.attrs.get("notes", [])
    rank_hint(table, rank, score, s.n_positive, s.n_rows - s.n_positive)
    return table


def beyond_setup(b, o: Options, pred, truth, columns: Columns, distinct_items, *, ci: float | None,
                 seed, n_resamples: int, engine: str) -> tuple[_beyond.SharedBeyond, dict]:
    """:func:`recmetrics._beyond.distributed_setup` for a Dask or Spark pred and truth (truth
    None when the labels are in pred): their columns checked, and their distinct items read by
    ``distinct_items(pred, judged, item)``, which returns both as one-column pandas frames."""
    check_inputs(pred.columns, None if truth is None else truth.columns, columns)
    item = columns.item
    pred_items, judged_items = distinct_items(pred, truth if truth is not None else pred, item)
    return _beyond.distributed_setup(b, o, ci=ci, seed=seed, n_resamples=n_resamples,
                                     pred_items=pred_items, judged_items=judged_items,
                                     user=columns.user, item=item, engine=engine)


def per_user_plan(o: Options, per_user_path, inputs=()) -> tuple[Options, directory_output | None]:
    """The options of a distributed evaluate_per_user (no AUC, which has no per-user value)
    and its output folder (None: the tables are gathered), checked before any work: not one of
    ``inputs`` (the files the engine reads) nor inside one, new or empty; the parts are written
    to a temporary folder beside it, renamed onto it when all are written."""
    folder = None
    if per_user_path is not None:
        folder = directory_output(per_user_path, inputs=inputs, option="per_user_path")
    return o.replace(metrics=tuple(m for m in o.metrics if m != "auc")), folder


def user_rows(tables: list) -> pd.DataFrame:
    """The gathered per-user tables as one, users in the order of their first input row."""
    tables = [t for t in tables if t is not None]
    if not tables:
        raise ValueError("pred has no rows; pass at least one scored item")
    table = pd.concat(tables, ignore_index=True)
    return table.sort_values("_first", kind="stable").drop(columns="_first").reset_index(drop=True)



# --------------------------------------------------------------------------- compare
#
# recmetrics.compare on partitions of whole users. Every model's rows and the truth are put in
# one frame of standard columns (the user's user and item columns with canonical ids, "_s" the
# signed score: the score, or minus the rank, "_y" the label, "_m" the model's position or
# TRUTH for the truth, "_first" the input order), shuffled by user. Each partition then gives
# (compare_group): per model, the Summary of its evaluation on the partition's users that every
# model scored and its global-AUC pieces; per shared user, every model's per-user values, GAUC
# weight and first-row key; per pair of models, the rows both scored, split by score bucket
# under each model, for DeLong's test.
#
# DeLong's test needs each row's doubled placement among the pair's rows (2 x negatives below
# it + ties, per positive; 2 x positives above + ties, per negative) under both models, paired
# by row. A bucket task finds the placements within its bucket (placement_bucket); the rows of
# lower (or higher) buckets add the same offset to every row of a bucket, known once every
# bucket is counted. So each partition's rows are then summed by (bucket under A, bucket under
# B) (placement_sums): count, sum and sum of squares of the within-bucket difference B - A,
# and the sums of each side; the driver adds the offsets to these sums exactly, in Python
# integers (delong_of).

#: ``_m`` of the truth's rows in the standard frame of a comparison.
TRUTH = -1
STANDARD = ("_s", "_y", "_m", "_first")


def standard_rows(part: pd.DataFrame, *, model: int, arg: str, user: str, item: str,
                  column: str | None, negate: bool, label: str | None, integral_users: bool,
                  integral_items: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """One input partition in the standard columns of a comparison, and each row's user hash.

    ``column`` is the model's score (or rank, with ``negate``) column, None for the truth;
    ``label`` the label column to keep, None when there is none.
    """
    from ._ids import canonical_ids
    from ._validation import numeric_column

    users, hashes = keyed_users(part[user], name=arg, column=user, integral=integral_users)
    codes_, uniques = pd.factorize(part[item])
    from ._ids import check_id_codes
    check_id_codes(arg, item, codes_)
    canonical = canonical_ids(pd.Series(uniques), integral=integral_items)[0]
    items = canonical[codes_] if isinstance(canonical, np.ndarray) else \
        pd.Series(canonical.array.take(codes_), index=part.index)
    out = pd.DataFrame({user: users, item: items}, index=part.index)
    scores = np.full(len(part), np.nan) if column is None else numeric_column(arg, part, column)
    out["_s"] = -scores if negate else scores
    out["_y"] = np.full(len(part), np.nan) if label is None else \
        numeric_column(arg, part, label, grades=True)
    out["_m"] = np.int32(model)
    return out.reset_index(drop=True), hashes


def compare_plan(pred_a, pred_b, truth, request: Comparison, engine: str
                 ) -> tuple[list, list[tuple[int, int]]]:
    """The models of a distributed comparison (their ranks checked as in memory) and the pairs
    compared."""
    from ._compare import models_of, pairs_of

    refuse_unscored(request.options, engine)
    refuse_unresolved_grade(request.options, engine)
    c = request.columns
    models = models_of(pred_a, pred_b, truth, score=c.score, rank=c.rank)
    for m in models:
        check_rank(m.rank, request.options)
    return models, pairs_of([m.name for m in models], request.baseline)


@dataclass
class CompareTotals:
    """What an engine's ``run_compare`` gathers on the driver, for :func:`compare_on`."""

    summaries: list[Summary]        # per model, added over the partitions
    users: list                     # per partition, its shared users' values
    n_scored: np.ndarray            # users each model scored
    buckets: list | None = None     # with AUC: per model, the bucket counts (add_pairs)
    delong: list | None = None      # with AUC: per pair, the arguments of delong_of


def compare_on(engine: Engine, pred_a, pred_b, truth, request: Comparison) -> pd.DataFrame:
    """:func:`recmetrics.compare` on a partitioned engine: the same table, the same tests.

    Every model's rows and the truth are shuffled together by user, so each partition holds
    whole users; each model is evaluated there on the users every model scored, and the
    totals are added. The per-user values of the shared users (a few numbers a user and
    metric) are gathered in this process, where the paired tests run exactly as in memory
    (the same draws for the same ``seed``). Global AUC's pair counts and DeLong's test come
    from score buckets: each row's placement among the pair's rows is found within its
    bucket, and the buckets below or above add a known offset, so the variance is exact.
    """
    o, c = request.options, request.columns
    models, pairs = compare_plan(pred_a, pred_b, truth, request, engine.name)
    truth, _ = engine.labelled_truth(truth, c.label, default_label=c.default_label)
    frames, truth = engine.compare_frames([m.frame for m in models], truth)
    inputs = compare_inputs(models, [f.columns for f in frames],
                            None if truth is None else truth.columns,
                            user=c.user, item=c.item, label=c.label)
    bare = [replace(m, frame=None) for m in models]  # the tasks need no frame
    with engine.session():
        t = engine.run_compare(frames, truth, inputs, models=bare, pairs=pairs, o=o,
                               columns=c, npartitions=request.npartitions)
    delong = []
    if t.buckets is not None and t.delong is not None:
        for s, buckets in zip(t.summaries, t.buckets):
            add_pairs(s, buckets, None)
        delong = [delong_of(*arguments) for arguments in t.delong]
    return compare_finish(models, pairs, o, summaries=t.summaries, users=t.users,
                          n_scored=t.n_scored, delong=delong, baseline=request.baseline,
                          n_resamples=request.n_resamples, seed=request.seed,
                          alpha=request.alpha, correction=request.correction)


def compare_inputs(models: list, model_columns: list, truth_columns, *, user: str, item: str,
                   label: str) -> list[dict]:
    """Check the columns of every model (and of the truth, unless its columns are None): the
    options of :func:`standard_rows` for each, the models first."""
    out = []
    for i, (m, columns) in enumerate(zip(models, model_columns)):
        column = m.score if m.rank is None else m.rank
        wanted = {"user": user, "item": item,
                  **({"score": column} if m.rank is None else {"rank": column}),
                  **({"label": label} if truth_columns is None else {})}
        check_columns(m.arg, columns, wanted)
        out.append(dict(model=i, arg=m.arg, column=column, negate=m.rank is not None,
                        label=label if truth_columns is None else None))
    if truth_columns is not None:
        check_columns("truth", truth_columns, {"user": user, "item": item, "label": label})
        out.append(dict(model=TRUTH, arg="truth", column=None, negate=False, label=label))
    return out


@dataclass
class ComparePartial:
    """What one partition of whole users gives to a comparison (see compare_group)."""

    summaries: list[Summary]        # per model, on the partition's shared users
    pieces: list[list]              # per model: global-AUC pieces by bucket
    users: pd.DataFrame | None      # per shared user: _first<i>, <i>:<column>, _w<i>
    n_scored: np.ndarray            # users each model scored
    rows: np.ndarray                # per pair: rows of A, rows of B, rows both scored
    delong: dict                    # (pair, side) -> pieces by bucket: (scores, positive, row)


def compare_group(rows: pd.DataFrame, number: int, *, models: list, pairs: list, o: Options,
                  user: str, item: str, label: str, has_truth: bool, integral: bool,
                  bounds: list | None) -> ComparePartial:
    """One partition of whole users of a comparison: each model evaluated on the users every
    model scored, as :func:`recmetrics._compare.evaluate_models` does in memory."""
    from ._compare import Model, shared_truth
    from ._ids import codes
    from ._validation import check_unique_keys

    n = len(models)
    frames = []
    for i in range(n):
        f = rows[rows["_m"] == i]
        frames.append(f.assign(**{label: f["_y"]}) if not has_truth else f)
    if has_truth:
        t = rows[rows["_m"] == TRUTH]
        truth = pd.DataFrame({user: t[user].to_numpy(), item: t[item].to_numpy(),
                              label: t["_y"].to_numpy()})
    else:
        local = [Model(m.name, m.arg, f[[user, item, label]], m.score, m.rank)
                 for m, f in zip(models, frames) if len(f)]
        truth = shared_truth(local, user=user, item=item, label=label) if local else \
            pd.DataFrame({user: rows[user].iloc[:0], item: rows[item].iloc[:0],
                          label: np.zeros(0)})
    named = [(m.arg, f) for m, f in zip(models, frames)]
    if n and any(len(f) for f in frames):
        user_codes, _ = codes(user, *named, integral=integral)
        item_codes, item_ids = codes(item, *named, ordered=False)
        for m, f, u, it in zip(models, frames, user_codes, item_codes):
            check_unique_keys(m.arg, u.astype(np.int64) * len(item_ids) + it, f, user, item)
    scored = [pd.Index(pd.unique(f[user])) for f in frames]
    shared = scored[0]
    for s in scored[1:]:
        shared = shared.intersection(s, sort=False)
    n_scored = np.array([len(s) for s in scored], dtype=np.int64)
    keep = [f[f[user].isin(shared)] for f in frames]
    truth = truth[truth[user].isin(shared)]
    summaries, pieces_, tables = [], [], {}
    empty = (np.zeros(0), np.zeros(0, dtype=bool), None)
    position = pd.Index(shared)
    for i, (m, f) in enumerate(zip(models, keep)):
        if not len(shared):
            summaries.append(Summary())
            pieces_.append([] if bounds is None else [empty] * (bounds[i].size + 1))
            continue
        column = m.score if m.rank is None else m.rank
        frame = pd.DataFrame({user: f[user].to_numpy(), item: f[item].to_numpy(),
                              column: -f["_s"].to_numpy() if m.rank is not None
                              else f["_s"].to_numpy(), "_first": f["_first"].to_numpy()})
        prep = Prepared(frame, truth, user=user, item=item, score=column, label=label,
                        ties=o.ties, check=False, integral_ids=integral, rank=m.rank,
                        min_grade=o.min_grade, judged_only=o.judged_only)
        per_user = _pipeline.per_user(prep, o)
        ratios = _pipeline.user_ratios(prep, per_user, o)
        summaries.append(_pipeline.summarize(prep, per_user, o, ratios))
        pieces_.append([] if bounds is None else pieces(prep, bounds[i], None))
        at = position.get_indexer(prep.users)
        tables[f"_first{i}"] = _scatter(len(shared), at, first_rows(prep.users, frame, None,
                                                                    user), np.int64)
        for name, values in per_user.columns.items():
            tables[f"{i}:{name}"] = _scatter(len(shared), at, values, np.float64)
        if "gauc" in o.metrics:
            pos = np.bincount(prep.lists[prep.grades > 0], minlength=prep.n_users)
            tables[f"_w{i}"] = _scatter(len(shared), at, _kernels.gauc_weights(
                pos, prep.ranked.n_rows - pos, o.gauc_weight), np.float64)
    users = pd.DataFrame(tables) if len(shared) else None
    counts = np.zeros((len(pairs), 3), dtype=np.int64)
    delong: dict = {}
    if "auc" in o.metrics and bounds is not None:
        grades = truth.set_index([user, item])[label] if len(truth) else None
        for p, (i, j) in enumerate(pairs):
            a, b = keep[i], keep[j]
            both = a[[user, item, "_s"]].merge(b[[user, item, "_s"]], on=[user, item],
                                               suffixes=("_a", "_b"))
            counts[p] = len(a), len(b), len(both)
            positive = np.zeros(len(both), dtype=bool)
            if grades is not None and len(both):
                where = grades.index.get_indexer(pd.MultiIndex.from_frame(both[[user, item]]))
                found = where >= 0
                positive[found] = grades.to_numpy()[where[found]] > 0
            row = np.arange(len(both), dtype=np.int64)
            for side, (model, s) in enumerate(((i, both["_s_a"]), (j, both["_s_b"]))):
                delong[p, side] = _split(s.to_numpy(dtype=np.float64), positive, row,
                                         bounds[model])
    return ComparePartial(summaries, pieces_, users, n_scored, counts, delong)


def _scatter(size: int, at: np.ndarray, values: np.ndarray, dtype) -> np.ndarray:
    out = np.zeros(size, dtype=dtype) if dtype is np.int64 else np.full(size, np.nan)
    out[at] = values
    return out


def _split(scores: np.ndarray, positive: np.ndarray, row: np.ndarray, bounds: np.ndarray) -> list:
    """(scores, positive, row) of one side of a pair, split by score bucket."""
    order = np.argsort(scores, kind="stable")
    scores, positive, row = scores[order], positive[order], row[order]
    edges = np.r_[0, np.searchsorted(scores, bounds, side="left"), scores.size]
    return [(scores[a:b], positive[a:b], row[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def placement_bucket(pieces: list[tuple[int, tuple]]) -> tuple:
    """Doubled placements within one bucket of one side of a pair, from every partition's
    piece (partition number, (scores, positive, row)): ((positives, negatives) of the bucket,
    {partition: (rows, placements, positive)})."""
    pieces = [(number, p) for number, p in pieces if p[0].size]
    if not pieces:
        return (0, 0), {}
    scores = np.concatenate([p[0] for _, p in pieces])
    positive = np.concatenate([p[1] for _, p in pieces])
    v10, v01 = _kernels.placements(scores[positive], scores[~positive])
    placement = np.empty(scores.size, dtype=np.int64)
    placement[positive], placement[~positive] = v10, v01
    out, start = {}, 0
    for number, p in pieces:
        out[number] = (p[2], placement[start:start + p[0].size], p[1])
        start += p[0].size
    return (int(positive.sum()), int((~positive).sum())), out


def placement_sums(sides: tuple[list, list], n_rows: int | None = None) -> dict:
    """One partition's rows of one pair, summed by (bucket under A, bucket under B), for
    positives and negatives: {(positive, bucket A, bucket B): [rows, sum of B - A, sum of
    its squares, sum of A, sum of B]} (Python ints), from each side's list of
    (bucket, (rows, placements within the bucket, positive)) of this partition."""
    if n_rows is None:  # every row of the pair lies in one bucket of each side
        n_rows = sum(len(rows) for _, (rows, _, _) in sides[0])
    bucket = np.full((2, n_rows), -1, dtype=np.int64)
    within = np.zeros((2, n_rows), dtype=np.int64)
    is_positive = np.zeros(n_rows, dtype=bool)
    for side, found in enumerate(sides):
        for b, (rows, placement, positive) in found:
            bucket[side, rows] = b
            within[side, rows] = placement
            is_positive[rows] = positive
    out: dict = {}
    if n_rows == 0:
        return out
    keys = np.stack([is_positive.astype(np.int64), bucket[0], bucket[1]])
    order = np.lexsort(keys[::-1])
    keys, a, b = keys[:, order], within[0, order], within[1, order]
    first = np.flatnonzero(_kernels.starts(keys[0]) | _kernels.starts(keys[1])
                           | _kernels.starts(keys[2]))
    bounds_ = np.append(first, n_rows)
    for lo, hi in zip(bounds_[:-1], bounds_[1:]):
        e = (b[lo:hi] - a[lo:hi]).astype(object)  # Python ints: no overflow
        out[int(keys[0, lo]), int(keys[1, lo]), int(keys[2, lo])] = [
            hi - lo, int(e.sum()), int((e * e).sum()), int(a[lo:hi].sum()), int(b[lo:hi].sum())]
    return out


def delong_of(part_sums: list[dict], totals: Sequence[list], rows: np.ndarray
              ) -> tuple[DeLongResult | None, str]:
    """DeLong's test of one pair (None where it was not run) and its note, as
    :func:`recmetrics._compare` gives them
    in memory, from every partition's placement sums of the pair (:func:`placement_sums`),
    each side's (positives, negatives) per bucket, and (rows of A, rows of B, rows both
    scored)."""
    from fractions import Fraction

    sums: dict = {}
    for found in part_sums:
        for key, values in found.items():
            old = sums.setdefault(key, [0, 0, 0, 0, 0])
            for x in range(5):
                old[x] += values[x]
    n_a, n_b, n_common = (int(x) for x in rows)
    if n_common == 0:
        return None, "no (user, item) row is scored by both models, so DeLong's test was not run"
    offsets = []
    for side in totals:  # per bucket: 2 x negatives below (positives), 2 x positives above
        pos = np.array([t[0] for t in side], dtype=object)
        neg = np.array([t[1] for t in side], dtype=object)
        below = np.r_[0, np.cumsum(neg)[:-1]] if neg.size else neg
        above = (np.cumsum(pos[::-1])[::-1] - pos) if pos.size else pos
        offsets.append((2 * below, 2 * above))
    m = n = 0
    total: dict = {True: [0, 0, 0, 0], False: [0, 0, 0, 0]}  # sum d, sum d^2, sum A, sum B
    for (positive, ka, kb), (count, e, e2, sa, sb) in sums.items():
        oa = int(offsets[0][0 if positive else 1][ka])
        ob = int(offsets[1][0 if positive else 1][kb])
        delta = ob - oa
        t = total[bool(positive)]
        t[0] += e + count * delta
        t[1] += e2 + 2 * delta * e + count * delta * delta
        t[2] += sa + count * oa
        t[3] += sb + count * ob
        if positive:
            m += count
        else:
            n += count
    if m == 0 or n == 0:
        return None, ""  # AUC undefined: the row's note says so
    note = "" if n_common == max(n_a, n_b) else (
        f"DeLong's test on the {n_common:,} (user, item) rows both models scored "
        f"(of {n_a:,} and {n_b:,})")
    auc_a = float(total[True][2] / (2 * m * n))
    auc_b = float(total[True][3] / (2 * m * n))
    def variance(t: list, count: int) -> Fraction:  # sample variance, denominator count - 1
        return (Fraction(t[1]) - Fraction(t[0] * t[0], count)) / (count - 1)

    return delong_result(auc_a, auc_b, m, n,
                          lambda: float(variance(total[True], m) / (4 * n * n) / m
                                        + variance(total[False], n) / (4 * m * m) / n)), note


def compare_finish(models: list, pairs: list, o: Options, *, summaries: list[Summary],
                   users: list, n_scored: np.ndarray, delong: list, baseline: str | None,
                   n_resamples: int, seed, alpha: float, correction) -> pd.DataFrame:
    """The table of :func:`recmetrics.compare` from every partition's results added up:
    per model its total Summary (with its pair counts), the shared users' per-user values,
    and DeLong's (p-value, note) per pair."""
    from ._compare import Evaluated, Shared, check_shared, pairwise_table

    frames = [u for u in users if u is not None]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    n_shared = len(table)
    check_shared(models, n_scored, n_shared)
    evaluated = []
    for i, s in enumerate(summaries):
        s.unmatched.warn()
        prefix = f"{i}:"
        columns = {c[len(prefix):]: table[c].to_numpy(dtype=np.float64)
                   for c in table.columns if c.startswith(prefix)}
        weights = table[f"_w{i}"].to_numpy(dtype=np.float64) if f"_w{i}" in table else None
        order = np.argsort(table[f"_first{i}"].to_numpy(dtype=np.int64), kind="stable")
        evaluated.append(Evaluated(_pipeline.assemble(s, o), order, columns, weights, ()))
    shared = Shared.of(evaluated, o, n_scored, n_shared, n_users=n_shared)
    result = pairwise_table(shared, [m.name for m in models], pairs, o, n_resamples=n_resamples,
                            seed=seed, alpha=alpha, correction=correction,
                            delong_of=lambda i, j: delong[pairs.index((i, j))])
    result.attrs["baseline"] = baseline
    return result
