r"""What the Dask and Spark engines share: evaluating partitions of whole users, exactly.

:mod:`recmetrics.distributed` (Dask) and :mod:`recmetrics.spark` differ in
how they move rows; what they compute is here, once:

1. :func:`check_inputs` and :func:`keyed_rows`: the columns each input
   needs, and each row's canonical user id with the hash that sends it to
   the partition ``hash(canonical user id) mod P``;
2. :func:`evaluate_group`: one partition of whole users through the
   in-memory steps of :mod:`recmetrics._engine` (a :class:`Partial`: its
   Summary, its global-AUC pieces per score bucket, its per-user table);
3. :func:`bucket_counts`: one score bucket's exact pair counts (and Poisson
   resample sums) from every partition's piece of it;
4. :func:`total` and :func:`add_pairs`: the Summaries added, and global AUC's
   term across buckets (a positive beats every negative of a lower bucket)
   added in Python integers, which do not overflow;
5. :func:`finish`: the tidy table, as :func:`recmetrics.evaluate` gives it.

The boundaries of the score buckets only balance the work: whatever they
are, every pair of rows is counted once, within a bucket or across two.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import _engine, _kernels
from ._engine import BOOTSTRAPS, Prepared, Summary, rank_hint
from ._ids import keyed_users, user_hash
from ._options import Options
from ._validation import (check_columns, check_n_resamples, check_option, check_probability,
                          check_seed)

#: Rows of pred per partition of users (a worker evaluates one partition at a time, at about
#: 150 bytes a row); ``npartitions=`` overrides it.
PARTITION_ROWS = 250_000
#: Scored rows per bucket of global AUC (a bucket's rows meet in one task): at most as many
#: buckets as partitions, and one bucket per this many rows.
BUCKET_ROWS = 2_000_000
#: Key of a truth-only user's first row, after every pred row (users keep the input order).
TRUTH_ORDER = 1 << 62


# --------------------------------------------------------------------------- options and inputs


def check_intervals(*, ci, n_resamples, seed, bootstrap, engine: str):
    """The interval options of a distributed evaluation: (ci, n_resamples, seed).

    Only the Poisson bootstrap splits over partitions of users; the
    multinomial one is refused with a message naming ``engine``.
    """
    bootstrap = check_option("bootstrap", "poisson" if bootstrap is None else bootstrap, BOOTSTRAPS)
    if bootstrap != "poisson":
        raise ValueError("bootstrap='multinomial' draws users from one list held in one process; "
                         f"on {engine} use bootstrap='poisson' (the default here), which gives the "
                         "same interval as evaluate(..., bootstrap='poisson') on pandas")
    if ci is not None:
        ci = check_probability("ci", ci)
        n_resamples = check_n_resamples(n_resamples)
    return ci, n_resamples, check_seed(seed)


def check_inputs(pred_columns, truth_columns, names: dict) -> list[tuple[str, list[str]]]:
    """Check the columns of pred (and truth, unless its columns are None): the (name, columns
    kept) of each input, pred first."""
    user, item, label, rank = names["user"], names["item"], names["label"], names.get("rank")
    wanted = {"user": user, "item": item,
              **({"score": names["score"]} if rank is None else {"rank": rank})}
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
                   names: dict, integral: bool, bounds: np.ndarray | None, seed: int | None,
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
    user, label = names["user"], names["label"]
    has_truth = truth is not None and len(truth) and \
        (pd.to_numeric(truth[label], errors="coerce") > 0).any()
    inputs = {"truth_rows": 0 if truth is None else len(truth),
              "truth_users": 0 if truth is None else int(truth[user].nunique())}
    if len(pred) == 0 and not has_truth:
        empty = (np.zeros(0), np.zeros(0, dtype=bool),
                 None if seed is None else np.zeros(0, dtype=np.uint64))
        return Partial(Summary(inputs=inputs), [] if bounds is None else
                       [empty] * (bounds.size + 1))
    prep = Prepared(pred, truth, user=user, item=names["item"], score=names["score"],
                    label=label, ties=o.ties, check=False, integral_ids=integral,
                    rank=names.get("rank"), min_grade=o.min_grade, judged_only=o.judged_only)
    per_user = _engine.per_user(prep, o)
    if users is not None:
        counted = Summary(n_rows=prep.n_rows, inputs=inputs)
        table = _engine.user_table(prep, per_user.columns, user)
        if users == "write":
            if path is None:
                raise ValueError("writing the per-user table needs a folder; pass per_user_path=")
            table.to_parquet(Path(path) / f"part.{number:05d}.parquet", index=False)
            return Partial(counted, [])
        table["_first"] = first_rows(prep.users, pred, truth, user)
        return Partial(counted, [], table)
    ratios = _engine.user_ratios(prep, per_user, o)
    s = _engine.summarize(prep, per_user, o, ratios)
    s.inputs = inputs
    hashes = None
    if seed is not None:
        hashes = user_hash(prep.users)
        s.resamples = _engine.poisson_sums(hashes, ratios, seed, n_resamples)
    return Partial(s, [] if bounds is None else pieces(prep, bounds, hashes),
                   beyond=None if beyond is None else beyond(prep))


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


def pieces(prep: Prepared, bounds: np.ndarray, hashes: np.ndarray | None) -> list:
    """Scored rows per score bucket, as small as exactness allows.

    Each piece is (scores, positive, extra): the distinct (score, positive)
    pairs with their counts (``extra`` None when every count is 1), or, when
    the Poisson bootstrap needs them, the rows with their users' hashes.
    Scores are kept as float32 when that is exact. These pieces wait in
    worker memory until every partition is done.
    """
    scores, positive = prep.scores, prep.grades > 0
    order = np.lexsort((positive, scores))
    scores, positive = scores[order], positive[order]
    if hashes is None:
        first = np.flatnonzero(_kernels.starts(scores) | _kernels.starts(positive))
        count = np.diff(np.append(first, scores.size))
        scores, positive = scores[first], positive[first]
        extra = None if count.size == 0 or count.max() == 1 else \
            count.astype(np.int32 if count.max() < 2**31 else np.int64)
    else:
        extra = hashes[prep.lists[order]]
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
    return exact, _engine.poisson_auc_sums(scores, positive, hashes, seed, n_resamples)


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
        s.resamples["auc"] = _engine.combine_auc_sums([b for _, b in buckets])


# --------------------------------------------------------------------------- the results


def finish(s: Summary, o: Options, *, ci: float | None, truth_given: bool, positives_only: bool,
           rank: str | None, score: str) -> pd.DataFrame:
    """The tidy table of :func:`recmetrics.evaluate` from the total Summary."""
    s.unmatched.warn()
    intervals = _engine.poisson_intervals(s, o, ci) if ci is not None else None
    table = _engine.assemble(s, o, ci=ci, intervals=intervals)
    table.attrs["inputs"] = {"pred_rows": s.n_rows, "pred_users": s.n_with_rows,
                             **(s.inputs if truth_given else {})}
    table.attrs["notes"] = [_engine.POSITIVES_ONLY] if positives_only else []
    rank_hint(table, rank, score, s.n_positive, s.n_rows - s.n_positive)
    return table


def user_rows(tables: list) -> pd.DataFrame:
    """The gathered per-user tables as one, users in the order of their first input row."""
    tables = [t for t in tables if t is not None]
    if not tables:
        raise ValueError("pred has no rows; pass at least one scored item")
    table = pd.concat(tables, ignore_index=True)
    return table.sort_values("_first", kind="stable").drop(columns="_first").reset_index(drop=True)

