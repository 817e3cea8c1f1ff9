"""The sliced evaluation: users (or items, by popularity) assigned to slices, each slice's
sums from one pass over the users, the sliced table; ``compare(by=)``.

What a slice row means, where the attributes come from and the popularity
classes are told in :mod:`recmetrics.slices`, the public module (with
:func:`~recmetrics.slices.disparity`, which reads the table).
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _pipeline, _kernels, _progress, _threads
from ._pipeline import Prepared, Summary
from ._ids import canonical_ids, user_hash
from ._ids import codes as id_codes
from ._kernels import DEFAULT_EPS
from ._metrics import ECE_BINS, POPULARITY_METRICS, PROBABILITY_METRICS
from ._options import Options
from ._validation import (RecmetricsWarning, as_frame, check_by, check_id_codes,
                          check_min_slice_size, numeric_column, plain)


#: Slice value of the overall row.
ALL = "(all)"
#: Slice value of users without a value of the attribute.
MISSING = "(missing)"
#: The kit's own slice labels, and what they stand for; no slice value of the data may be
#: written as one of them (refused, so that they cannot collide).
KIT_LABELS = {ALL: "the row of all users", MISSING: "the users without a value"}
#: The derived slicing by number of scored rows.
ACTIVITY = "activity"
#: Quantile buckets of ``"activity"``.
ACTIVITY_BUCKETS = 4
#: Default ``min_slice_size``: slices of fewer users are marked ``small_slice``.
MIN_SLICE_SIZE = 30


@dataclass(frozen=True)
class Slicing:
    """Users assigned to slices: a slice number per user and one row of labels per slice."""

    columns: list[str]      # the slice columns of the table (the ``by`` names)
    codes: np.ndarray       # per user: the slice number
    labels: pd.DataFrame    # one row per slice number: the value in each slice column

    @property
    def n_slices(self) -> int:
        return len(self.labels)


# --------------------------------------------------------------------------- checks


def check_users(users, user: str) -> pd.DataFrame:
    """The user attribute frame: the user column, each user once."""
    as_frame("users", users, {"user": user})
    codes_, uniques = pd.factorize(users[user])
    check_id_codes("users", user, codes_)
    text = pd.Index(canonical_ids(pd.Series(uniques), integral=False)[0])
    ids = text[codes_]
    if not ids.is_unique:
        repeated = ids.duplicated()
        row = int(np.flatnonzero(repeated)[0])
        raise ValueError(f"users has {int(repeated.sum()):,} duplicate user(s) in column "
                         f"{user!r} (first: {plain(users[user].iloc[row])!r} in row {row}); give "
                         "each user one row of attributes")
    return users


# --------------------------------------------------------------------------- user attributes


def text_ids(ids) -> pd.Index:
    """Canonical user ids as text, the one form in which every frame's ids compare."""
    return pd.Index(canonical_ids(pd.Series(np.asarray(ids)), integral=False)[0])


def prepared_text_ids(ids) -> pd.Index:
    """:func:`text_ids` of ids that are canonical already (a Prepared's users: int64 or text)."""
    values = np.asarray(ids)
    if values.dtype.kind in "iu":
        return pd.Index(values.astype(str).astype(object))
    return pd.Index(values.astype(object))


def row_users(ids: pd.Index, name: str, frame: pd.DataFrame, user: str) -> np.ndarray:
    """Each row's user as an index into ``ids`` (canonical text), -1 for users not in it."""
    user_codes, uniques = pd.factorize(frame[user])
    check_id_codes(name, user, user_codes)
    return ids.get_indexer(text_ids(uniques))[user_codes]


def _attribute(ids: pd.Index, rows: np.ndarray, name: str, frame: pd.DataFrame, column: str,
               shown=None) -> np.ndarray:
    """Per user of ``ids``: the column's value in ``frame`` (object array, None if absent).

    ``rows`` gives each row's user (index into ``ids``, -1 to ignore the row).
    Refuses a value that varies within a user.
    """
    value_codes, value_uniques = pd.factorize(frame[column], use_na_sentinel=False)
    kept = rows >= 0
    if not kept.all():
        rows, value_codes = rows[kept], value_codes[kept]
    first = np.full(len(ids), -1, dtype=np.intp)
    first[rows[::-1]] = value_codes[::-1]      # each user's value on its first row
    differ = np.flatnonzero(first[rows] != value_codes)
    if differ.size:
        row = int(differ[0])
        who = rows[row]
        raise ValueError(
            f"by column {column!r} of {name} varies within a user "
            f"({plain((ids if shown is None else shown)[who])!r} has "
            f"{plain(value_uniques[first[who]])!r} and {plain(value_uniques[value_codes[row]])!r}): "
            "a slice is a set of users, so the column must hold one value per user; put user "
            "attributes in users= (one row per user), or slice by a per-user column")
    out = np.full(len(ids), None, dtype=object)
    found = first >= 0
    out[found] = np.asarray(value_uniques, dtype=object)[first[found]]
    return out


def _is_missing(values: np.ndarray) -> np.ndarray:
    """None, NaN, NA or NaT: no value."""
    return pd.isna(values)


def column_codes(values: np.ndarray, column: str = "by") -> tuple[np.ndarray, list]:
    """Codes of per-user values in sorted order (order of appearance if they do not sort),
    with ``"(missing)"`` last.

    A value written exactly as one of the kit's own labels, :data:`ALL` or :data:`MISSING`,
    is refused: its slice could not be told from the row of all users or from the users
    without a value (disparity would drop the one or report the other twice)."""
    missing = _is_missing(values)
    present = values[~missing]
    try:
        codes_, uniques = pd.factorize(pd.Series(present, dtype=object), sort=True)
    except TypeError:
        codes_, uniques = pd.factorize(pd.Series(present, dtype=object))
    out = np.full(values.size, len(uniques), dtype=np.intp)
    out[~missing] = codes_
    labels = [plain(u) for u in uniques]
    taken = [u for u in labels if isinstance(u, str) and u in KIT_LABELS]
    if taken:
        raise ValueError(
            f"by column {column!r} holds the value {taken[0]!r}, which is how recmetrics "
            f"labels {KIT_LABELS[taken[0]]}: the two could not be told apart in the table; "
            f"rename that value first (e.g. frame[{column!r}].replace({taken[0]!r}, "
            f"{taken[0].strip('()')!r}))")
    return out, labels + ([MISSING] if missing.any() else [])


def activity_codes(n_rows: np.ndarray, n_buckets: int = ACTIVITY_BUCKETS, unit: str = ""
                   ) -> tuple[np.ndarray, list[str]]:
    """Users bucketed by their number of scored rows at quantiles, labelled ``"[lo, hi)"``
    (followed by ``unit`` when given: ``"[lo, hi) history rows"``).

    Inner edges are the quantiles 1/n, ..., (n-1)/n of the counts rounded up
    to whole numbers; equal edges merge, so there may be fewer buckets.
    """
    counts = np.asarray(n_rows, dtype=np.int64)
    if counts.size == 0:
        return np.zeros(0, dtype=np.intp), []
    inner = np.ceil(np.quantile(counts, np.arange(1, n_buckets) / n_buckets)).astype(np.int64)
    edges = np.unique(np.r_[counts.min(), inner, counts.max() + 1])
    edges = edges[(edges >= counts.min()) & (edges <= counts.max() + 1)]
    codes_ = np.searchsorted(edges, counts, side="right") - 1
    used, codes_ = np.unique(codes_, return_inverse=True)
    return codes_.astype(np.intp), [f"[{edges[b]}, {edges[b + 1]}){unit}" for b in used]


#: The label's unit of ``by="activity"`` buckets that count history rows.
HISTORY_ROWS = " history rows"


def history_activity(ids: pd.Index, history: pd.DataFrame, user: str) -> np.ndarray:
    """Each user's number of rows in ``history`` (the training log): ``by="activity"`` with
    ``history=`` buckets users by it, not by their scored rows (with "every unseen item" as
    candidates, the most active users have the fewest scored rows)."""
    if not isinstance(history, pd.DataFrame) or user not in history.columns:
        raise ValueError(f"history must be a pandas DataFrame with a {user!r} column (the "
                         "training log) to count each user's activity")
    rows = row_users(ids, "history", history, user)
    return np.bincount(rows[rows >= 0], minlength=len(ids)).astype(np.int64)


def slicing(ids: pd.Index, by: list[str], sources: list[tuple], users: pd.DataFrame | None,
            user: str, n_rows: np.ndarray | None, shown=None, unit: str = "") -> Slicing:
    """The slice of every user of ``ids`` (canonical text), from ``by``.

    ``sources`` are the (name, frame, rows) of the scored and judged rows,
    ``rows`` each row's user as an index into ``ids`` (None: found here);
    ``n_rows`` the users' numbers of scored rows (for ``"activity"``; None
    where activity is not offered); ``shown`` the ids as messages name them.
    """
    per_column, dims, labels = [], [], []
    for column, values in zip(by, user_values(ids, by, sources, users, user, n_rows, shown)):
        codes_, names = activity_codes(values, unit=unit) if values.dtype != object else \
            column_codes(values, column)
        per_column.append(codes_)
        dims.append(max(len(names), 1))
        labels.append(names)
    return coded_slicing(by, per_column, dims, labels, len(ids))


def user_values(ids: pd.Index, by: list[str], sources: list[tuple], users: pd.DataFrame | None,
                user: str, n_rows: np.ndarray | None, shown=None) -> list[np.ndarray]:
    """Per name of ``by``, each user's value before coding: an object array of the column's
    values (None where the user has none), or for ``"activity"`` the users' numbers of
    scored rows (int64). Arguments as in :func:`slicing`."""
    out = []
    frames = list(sources) + ([("users", users, None)] if users is not None else [])
    located = {}
    for column in by:
        holders = [(name, frame, rows) for name, frame, rows in frames
                   if column in frame.columns and column != user]
        if not holders and column == ACTIVITY and n_rows is not None:
            out.append(np.asarray(n_rows, dtype=np.int64))
        elif not holders:
            where = ", ".join(name for name, _, _ in frames)
            extra = f", or {ACTIVITY!r}" if n_rows is not None else ""
            raise ValueError(f"by names {column!r}, which is not a column of {where}; pass a "
                             f"column of one of them (or users= a frame of user attributes)"
                             f"{extra}")
        else:
            values = np.full(len(ids), None, dtype=object)
            for name, frame, rows in holders:
                if rows is None:
                    if name not in located:
                        located[name] = row_users(ids, name, frame, user)
                    rows = located[name]
                own = _attribute(ids, rows, name, frame, column, shown)
                have, had = ~_is_missing(own), ~_is_missing(values)
                clash = np.flatnonzero(have & had & (own != values))
                if clash.size:
                    u = clash[0]
                    raise ValueError(
                        f"by column {column!r} gives user "
                        f"{plain((ids if shown is None else shown)[u])!r} the value "
                        f"{plain(values[u])!r} in one frame and {plain(own[u])!r} in {name}; "
                        "make the frames agree, or keep the column in one of them")
                values[have & ~had] = own[have & ~had]
            out.append(values)
    return out


def coded_slicing(by: list[str], per_column: list[np.ndarray], dims: list[int],
                  labels: list[list], n_users: int) -> Slicing:
    """The Slicing of users coded per column (codes, number of codes, labels of each)."""
    if n_users == 0:
        return Slicing(by, np.zeros(0, dtype=np.intp), pd.DataFrame(columns=by))
    joint = np.ravel_multi_index(per_column, dims)
    present, codes_ = np.unique(joint, return_inverse=True)
    parts = np.unravel_index(present, dims)
    table = pd.DataFrame({column: np.asarray(names, dtype=object)[part]
                          for column, names, part in zip(by, labels, parts)})
    return Slicing(by, codes_.astype(np.intp), table)


# --------------------------------------------------------------------------- per-slice sums


def _bins(values, codes: np.ndarray, n: int) -> np.ndarray:
    """Sum of ``values`` (a boolean or number per element) per slice code."""
    return np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=n)


def _count(mask: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes[mask], minlength=n)


def slice_rows(prep: Prepared, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The prepared rows grouped by slice (row indices) and each slice's bounds in them.

    The rows already run user by user, so the users are ordered by slice
    (a sort of the users, not of the rows) and their row ranges laid end to end.
    """
    lengths = prep.ranked.n_rows
    first = np.cumsum(lengths) - lengths
    by_slice = np.argsort(codes, kind="stable")
    lengths, first = lengths[by_slice], first[by_slice]
    shift = np.repeat(first - (np.cumsum(lengths) - lengths), lengths)
    rows = np.arange(shift.size, dtype=np.int64)
    rows += shift
    per_slice = np.bincount(codes, weights=prep.ranked.n_rows, minlength=n).astype(np.int64)
    return rows, np.r_[0, np.cumsum(per_slice)]


#: Share of a slice's negatives whose float32 score equals a positive's above which
#: :func:`pair_counts` sorts the float64 scores instead.
FLOAT32_COLLISIONS = 0.02


def pair_counts(positives: np.ndarray, negatives: np.ndarray) -> tuple[int, int]:
    """Wins and wins-or-ties of positives (sorted ascending) over negatives (any order).

    Exact, with a cheaper sort: rounding to float32 never reverses an order
    (``a < b`` implies ``f(a) <= f(b)``), so a negative whose float32 value is
    below a positive's is below the positive. Only negatives whose float32
    value equals some positive's are compared in float64; when more than
    :data:`FLOAT32_COLLISIONS` of them do (tied or coarse scores), the float64
    scores are sorted and counted by :func:`recmetrics._kernels.pair_counts`.
    """
    if positives.size == 0 or negatives.size == 0:
        return 0, 0
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, still in order
        neg32 = negatives.astype(np.float32)
        pos32 = positives.astype(np.float32)
    sorted32 = np.sort(neg32)
    lo = np.searchsorted(sorted32, pos32, "left")       # float32 below: surely below
    wins = int(lo.sum())
    collide = sorted32[np.minimum(lo, sorted32.size - 1)] == pos32
    if not collide.any():
        return wins, wins
    values32 = _kernels.distinct(pos32[collide])
    n_grey = int((np.searchsorted(sorted32, values32, "right")
                  - np.searchsorted(sorted32, values32, "left")).sum())
    if n_grey > FLOAT32_COLLISIONS * negatives.size:
        return _kernels.pair_counts(positives, np.sort(negatives))
    at = np.minimum(np.searchsorted(values32, neg32), values32.size - 1)
    grey = np.sort(negatives[values32[at] == neg32])    # float64 values, float32 collisions
    with np.errstate(over="ignore"):
        grey32 = grey.astype(np.float32)
    p, p32 = positives[collide], pos32[collide]
    start = np.searchsorted(grey32, p32, "left")         # the grey run of p's float32 value
    end = np.searchsorted(grey32, p32, "right")
    below = np.clip(np.searchsorted(grey, p, "left"), start, end) - start
    not_above = np.clip(np.searchsorted(grey, p, "right"), start, end) - start
    return wins + int(below.sum()), wins + int(not_above.sum())


def slice_pairs(prep: Prepared, rows: np.ndarray, bounds: np.ndarray
                ) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Global AUC's (wins, wins-or-ties) over each slice's rows only, and its positive rows.

    Each slice's positives are sorted and its negatives counted against them
    by :func:`pair_counts` (slices in threads).
    """
    n = bounds.size - 1

    def count(s: int) -> tuple[int, int, int]:
        own = rows[bounds[s]:bounds[s + 1]]
        sc = prep.scores[own]
        pos = prep.grades[own] > 0
        positives = np.sort(sc[pos])
        return (*pair_counts(positives, sc[~pos]), positives.size)

    counted = _threads.thread_map(count, range(n))
    return [c[:2] for c in counted], np.array([c[2] for c in counted], dtype=np.int64)


def slice_summaries(prep: Prepared, users: _pipeline.PerUser, o: Options, ratios: dict,
                    codes: np.ndarray, n: int) -> list[Summary]:
    """The :class:`~recmetrics._pipeline.Summary` of each slice's users, as
    :func:`recmetrics._pipeline.summarize` makes it for those users alone."""
    rows_per_user = prep.ranked.n_rows
    size = np.bincount(codes, minlength=n)
    with_rows = _count(rows_per_user > 0, codes, n)
    counted = _count(users.counted, codes, n)
    n_rows = np.bincount(codes, weights=rows_per_user, minlength=n).astype(np.int64)
    pairs: Sequence[tuple[int, int] | None]
    if "auc" in o.metrics:
        pairs, n_positive = slice_pairs(prep, *slice_rows(prep, codes, n))
    else:
        pairs = [None] * n
        n_positive = np.bincount(codes, weights=np.bincount(
            prep.lists[prep.grades > 0], minlength=prep.n_users), minlength=n).astype(np.int64)
    sums = {name: (_bins(num, codes, n), _bins(den, codes, n)) for name, (num, den)
            in ratios.items()}
    defined = {name: _count(den != 0, codes, n) for name, (_, den) in ratios.items()}
    gauc_defined = _count(~np.isnan(users.auc.values), codes, n) if users.auc is not None \
        else None
    probability = [m for m in o.metrics if m in PROBABILITY_METRICS]
    row_slice = codes[prep.lists] if probability else None
    labels = (prep.grades > 0).astype(np.int8) if probability else None
    logloss = None
    if "ne" in probability and "logloss" not in ratios:
        assert labels is not None and row_slice is not None  # set when probability is asked
        logloss = _bins(_kernels.log_loss(labels, prep.scores, DEFAULT_EPS), row_slice, n)
    bins = None
    if "ece" in probability:
        edges = _kernels.calibration_edges(prep.scores, ECE_BINS, "uniform")
        assert labels is not None and row_slice is not None  # set when probability is asked
        ids = row_slice * ECE_BINS + np.searchsorted(edges[1:-1], prep.scores)
        bins = [np.bincount(ids, weights=w, minlength=n * ECE_BINS).reshape(n, ECE_BINS)
                for w in (None, labels, prep.scores)]
    # relevant truth rows never scored, and all relevant rows, per slice: the unscored note
    unscored = np.bincount(codes, weights=prep.unscored, minlength=n).astype(np.int64)
    relevant = np.bincount(codes, weights=prep.ranked.n_relevant, minlength=n).astype(np.int64)
    out = []
    for s in range(n):
        summary = Summary(n_users=int(size[s]), n_with_rows=int(with_rows[s]),
                          n_counted=int(counted[s]), n_without_predictions=int(size[s] - with_rows[s]),
                          n_rows=int(n_rows[s]), n_positive=int(n_positive[s]), pairs=pairs[s],
                          unmatched=_pipeline.Unmatched(n_missing_rows=int(unscored[s]),
                                                      n_relevant_rows=int(relevant[s])))
        for name in ratios:
            summary.sums[name] = (float(sums[name][0][s]), float(sums[name][1][s]))
            summary.n_defined[name] = int(defined[name][s])
        if gauc_defined is not None:
            summary.n_defined["gauc"] = int(gauc_defined[s])
            summary.gauc_undefined = int(size[s] - gauc_defined[s])
        if logloss is not None:
            summary.probability["logloss"] = float(logloss[s])
        for metric in ("logloss", "brier"):
            if metric in ratios:
                summary.probability[metric] = summary.sums[metric][0]
        if bins is not None:
            summary.probability["bins"] = np.array([b[s] for b in bins], dtype=np.float64)
        out.append(summary)
    return out


def slice_resamples(prep: Prepared, ratios: dict, o: Options, codes: np.ndarray, n: int,
                    seed: int, n_resamples: int) -> list[dict]:
    """Per slice: the Poisson resample sums :func:`recmetrics._pipeline.prepared_resamples`
    gives for its users alone.

    Users are ordered by slice once; a chunk of weights (users x resamples),
    drawn from the users' hashes, is multiplied by each slice's block of every
    per-user ratio: one pass over the users per chunk. Global AUC's weighted
    pair counts are counted over each slice's rows.
    """
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n + 1))
    hashes = user_hash(prep.users)
    names = list(ratios)
    out = [{name: np.zeros((n_resamples, 2)) for name in names} for _ in range(n)]
    if names:
        numerators = np.stack([ratios[name][0][order] for name in names])
        denominators = np.stack([ratios[name][1][order] for name in names])
        sorted_hashes = hashes[order]
        chunk = max(1, min(n_resamples, _pipeline.POISSON_CHUNK // max(1, sorted_hashes.size)))
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            w = _pipeline.poisson_weights(sorted_hashes, seed, start, size)
            for s in range(n):
                block = slice(bounds[s], bounds[s + 1])
                num, den = numerators[:, block] @ w[block], denominators[:, block] @ w[block]
                for i, name in enumerate(names):
                    out[s][name][start:start + size, 0] = num[i]
                    out[s][name][start:start + size, 1] = den[i]
    if "auc" in o.metrics:
        rows_order, row_bounds = slice_rows(prep, codes, n)
        done = _progress.counter("bootstrapping global AUC of each slice", n * n_resamples,
                                 "resample")
        for s in range(n):
            rows = rows_order[row_bounds[s]:row_bounds[s + 1]]
            out[s]["auc"] = _pipeline.poisson_auc_sums(prep.scores[rows], prep.grades[rows] > 0,
                                                     hashes[prep.lists[rows]], seed, n_resamples,
                                                     done)
    return out


def resample_values(s: Summary, o: Options) -> dict:
    """Per row with an interval: the row's value in every resample (NaN where undefined)."""
    values = {}
    for name in _pipeline.interval_rows(s, o):
        sums = s.resamples[name]
        with np.errstate(invalid="ignore", divide="ignore"):
            if name == "auc":
                values[name] = _kernels.auc_from_counts(sums[:, 0], sums[:, 1],
                                                        sums[:, 2] * sums[:, 3], o.ties)
            else:
                values[name] = sums[:, 0] / sums[:, 1]
    return values


# --------------------------------------------------------------------------- evaluate(by=)

#: Note of the probability metrics of a slice whose users have relevant items but no scored row.
NO_SCORED_ROW = "undefined: no user of the slice has a scored row"


def assemble_slice(s: Summary, o: Options, *, ci, intervals, warn: bool) -> pd.DataFrame:
    """:func:`recmetrics._pipeline.assemble`, and for a slice without a scored row (its users
    are only in truth; ``evaluate`` alone would refuse the empty rows) NaN probability rows."""
    asked = [m for m in o.metrics if m in PROBABILITY_METRICS]
    if s.n_rows or not asked:
        return _pipeline.assemble(s, o, ci=ci, intervals=intervals, warn=warn)
    table = _pipeline.assemble(s, o.replace(metrics=tuple(m for m in o.metrics if m not in asked)),
                             ci=ci, intervals=intervals, warn=warn)
    extra = pd.DataFrame({"metric": asked, "k": pd.array([pd.NA] * len(asked), dtype="Int64"),
                          "value": np.nan, "n_users": 0, "n_skipped": 0,
                          "n_without_predictions": 0,
                          "conventions": [o.describe(m) for m in asked], "note": NO_SCORED_ROW})
    if ci is not None:
        extra["ci_low"], extra["ci_high"] = np.nan, np.nan
    out = pd.concat([table, extra], ignore_index=True)
    out.attrs["conventions"] = o.conventions()
    return out



def row_name(metric: str, k) -> str:
    """The engine's name of a table row: ``ndcg@10``, ``mrr``, ``auc``."""
    return metric if k is None or pd.isna(k) else f"{metric}@{int(k)}"


def evaluate_sliced(prep: Prepared, o: Options, sl: Slicing, *, ci: float | None,
                    n_resamples: int, seed, min_slice_size: int) -> pd.DataFrame:
    """The tidy table of every slice and of all users, from one pass over the users."""
    users = _pipeline.per_user(prep, o)
    ratios = _pipeline.user_ratios(prep, users, o)
    n = sl.n_slices
    everyone = _pipeline.summarize(prep, users, o, ratios)
    everyone.pairs = prep.pairs
    parts = slice_summaries(prep, users, o, ratios, sl.codes, n)
    if ci is not None:
        _pipeline.announce_intervals(prep, len(ratios) * (n + 1), n_resamples, "auc" in o.metrics,
                                   slices=n)
        seed = _pipeline.poisson_seed(seed)
        per_slice = slice_resamples(prep, ratios, o, sl.codes, n, seed, n_resamples)
        for part, sums in zip(parts, per_slice):
            part.resamples = sums
        # all users: the sum of the slices' sums (the slices partition the users)
        everyone.resamples = {name: sum(p.resamples[name] for p in parts) for name in ratios}
        if "auc" in o.metrics:
            everyone.resamples.update(_pipeline.prepared_resamples(prep, {}, o, seed, n_resamples))
    prep.unmatched.warn()
    return sliced_table(everyone, parts, sl, o, ci=ci, n_users=prep.n_users,
                        min_slice_size=min_slice_size)


def sliced_table(everyone: Summary, parts: list[Summary], sl: Slicing, o: Options, *,
                 ci: float | None, n_users: int, min_slice_size: int) -> pd.DataFrame:
    """The tidy table of all users (``everyone``) and of every slice (``parts``, in the order
    of ``sl.labels``), with intervals from the Summaries' Poisson sums when ``ci`` is given."""
    n = sl.n_slices
    tables, resampled = [], {}
    sizes = np.bincount(sl.codes, minlength=n)
    keys = [(ALL,) * len(sl.columns)] + [tuple(row) for row in sl.labels.itertuples(index=False)]
    for i, (key, s) in enumerate(zip(keys, [everyone] + parts)):
        intervals = _pipeline.poisson_intervals(s, o, ci) if ci is not None else None
        table = assemble_slice(s, o, ci=ci, intervals=intervals, warn=i == 0)
        if ci is not None:
            for name, values in resample_values(s, o).items():
                resampled[key + (name,)] = values
        size = n_users if i == 0 else int(sizes[i - 1])
        for position, (column, value) in enumerate(zip(sl.columns, key)):
            table.insert(position, column, value)
        table.insert(len(sl.columns), "slice_size", size)
        table.insert(len(sl.columns) + 1, "small_slice", i > 0 and size < min_slice_size)
        tables.append(table)
    result = pd.concat(tables, ignore_index=True)
    result["k"] = result["k"].astype("Int64")
    result.attrs["conventions"] = tables[0].attrs["conventions"]
    notes = [f"sliced by {', '.join(sl.columns)}: {n:,} slice(s); each slice row is evaluate() on "
             f"that slice's users alone; the rows of {ALL!r} are all users"]
    small = [", ".join(f"{c}={v}" for c, v in zip(sl.columns, key))
             for key, size in zip(keys[1:], sizes) if size < min_slice_size]
    if small:
        notes.append(f"{len(small):,} slice(s) have fewer than {min_slice_size:,} users "
                     f"(small_slice=True): {'; '.join(small[:5])}{' ...' if len(small) > 5 else ''}"
                     "; their values are noisy")
    result.attrs["notes"] = notes
    result.attrs["slice_columns"] = list(sl.columns)
    if ci is not None:
        result.attrs["ci"] = ci
        result.attrs["resamples"] = resampled
    return result


# --------------------------------------------------------------------------- disparity


def slice_label(columns: list[str], key: tuple) -> str:
    """A slice written as ``country=DE, activity=[3, 7)``."""
    return ", ".join(f"{c}={v}" for c, v in zip(columns, key))


# --------------------------------------------------------------------------- compare(by=)


def _row_slices(frame: pd.DataFrame, name: str, user: str, ids: pd.Index,
                codes: np.ndarray) -> np.ndarray:
    """The slice of each row of ``frame`` (from its user), -1 for users not in ``ids``."""
    user_codes, uniques = pd.factorize(frame[user])
    check_id_codes(name, user, user_codes)
    where = ids.get_indexer(text_ids(uniques))
    per_unique = np.where(where >= 0, codes[np.maximum(where, 0)], -1)
    return per_unique[user_codes]


def compare_sliced(compare, pred_a, pred_b, truth, *, by, users, min_slice_size, user, item,
                   label, **options) -> pd.DataFrame:
    """``compare`` (:func:`recmetrics.compare`, passed in by it: this layer does not import the
    public API) on all users and on each slice's users alone, with Holm across slices."""
    from .stats import adjust_p_values

    by = check_by(by)
    min_slice_size = check_min_slice_size(min_slice_size)
    if users is not None:
        users = check_users(users, user)
    named = [("pred_a", pred_a), ("pred_b", pred_b)] + ([("truth", truth)]
                                                        if truth is not None else [])
    for name, frame in named:
        as_frame(name, frame, {"user": user})
    options = {**options, "correction": "none"}  # corrected here, across slices
    everyone = compare(pred_a, pred_b, truth, user=user, item=item, label=label, **options)
    ids = pd.Index(pd.unique(np.concatenate([np.asarray(text_ids(pd.unique(f[user])), dtype=object)
                                             for _, f in named])))
    sl = slicing(ids, by, [(name, frame, None) for name, frame in named], users, user, None)
    rows = [_row_slices(frame, name, user, ids, sl.codes) for name, frame in named]
    in_a, in_b = (np.zeros(len(ids), dtype=bool) for _ in range(2))
    for seen, frame in ((in_a, pred_a), (in_b, pred_b)):
        seen[ids.get_indexer(text_ids(pd.unique(frame[user])))] = True
    shared_sizes = np.bincount(sl.codes[in_a & in_b], minlength=sl.n_slices)
    tables = [everyone]
    keys = [(ALL,) * len(by)]
    sizes = [0]
    for s, key in enumerate(sl.labels.itertuples(index=False)):
        parts = [frame[r == s] for (_, frame), r in zip(named, rows)]
        a, b = parts[0], parts[1]
        t = parts[2] if truth is not None else None
        if len(a) == 0 or len(b) == 0:
            continue  # a slice one model never scored has nothing to compare
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RecmetricsWarning)
            try:
                table = compare(a, b, t, user=user, item=item, label=label, **options)
            except ValueError as error:
                if "share no user" not in str(error):
                    raise
                continue
        tables.append(table)
        keys.append(tuple(key))
        sizes.append(int(shared_sizes[s]))
    out = []
    sizes[0] = int((in_a & in_b).sum())
    for i, (key, table, size) in enumerate(zip(keys, tables, sizes)):
        table = table.copy()
        for position, (column, value) in enumerate(zip(by, key)):
            table.insert(position, column, value)
        table.insert(len(by), "slice_size", size)
        table.insert(len(by) + 1, "small_slice", bool(i) and size < min_slice_size)
        out.append(table)
    result = pd.concat(out, ignore_index=True)
    alpha = everyone.attrs["alpha"]
    sliced = ~(result[by] == ALL).all(axis=1)
    for column in ("p_ttest", "p_randomization", "p_bootstrap", "p_delong"):
        if column not in result:
            continue
        adjusted = np.full(len(result), np.nan)
        for _, group in result[sliced].groupby(["metric", result["k"].fillna(-1)], sort=False):
            adjusted[group.index] = adjust_p_values(group[column].to_numpy(dtype=np.float64),
                                                    method="holm")
        adjusted[~sliced.to_numpy()] = result.loc[~sliced, column].to_numpy(dtype=np.float64)
        if f"{column}_adjusted" in result:  # compare's own column (correction="none": raw)
            result[f"{column}_adjusted"] = adjusted
        else:
            result.insert(result.columns.get_loc(column) + 1, f"{column}_adjusted", adjusted)
    from ._compare import _verdict
    result["verdict_adjusted"] = [
        _verdict(r.metric, r.difference, r.p_randomization_adjusted,
                 getattr(r, "p_delong_adjusted", float("nan")), alpha)
        for r in result.itertuples(index=False)]
    result["k"] = result["k"].astype("Int64")
    result.attrs.update(everyone.attrs)
    result.attrs["slice_columns"] = by
    result.attrs["notes"] = [
        f"compared by {', '.join(by)}: each slice row is compare() on that slice's users alone; "
        "*_adjusted columns are Holm-adjusted across the slices of each metric, not across "
        "metrics (the "
        f"{ALL!r} row is not in the family)"]
    return result


# --------------------------------------------------------------------------- evaluate(by="popularity")

#: The derived item-level slicing by history popularity.
POPULARITY = "popularity"
#: Its classes, most popular first.
POPULARITY_CLASSES = ("head", "torso", "tail")
#: Cumulative shares of history rows that cut the items: the head reaches the first, the tail
#: holds what lies beyond the second (APLT's long tail at its default ``head_share``).
POPULARITY_SHARES = (0.2, 0.8)


def by_popularity(by, frames: Sequence[pd.DataFrame | None] = ()) -> bool:
    """Whether ``by`` asks for the popularity slicing (a column of that name wins over it)."""
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else []
    return POPULARITY in names and not any(
        frame is not None and POPULARITY in frame.columns for frame in frames)


def popularity_classes(popularity: np.ndarray) -> np.ndarray:
    r"""Per item: 0 (head), 1 (torso) or 2 (tail) from its history rows.

    Items sorted by popularity, descending: the head is the fewest most
    popular items whose rows reach :data:`POPULARITY_SHARES`\[0] (20%) of all
    rows, the tail every item outside the fewest that reach
    :data:`POPULARITY_SHARES`\[1] (80%), the torso the rest; an item tied in
    popularity with the last item of a head goes with it (so no cut depends
    on the order of ties), and an item never seen is in the tail.
    """
    head = ~_kernels.long_tail(popularity, POPULARITY_SHARES[0])
    tail = _kernels.long_tail(popularity, POPULARITY_SHARES[1])
    return np.where(head, 0, np.where(tail, 2, 1)).astype(np.int8)


def _popularity_metrics(o: Options, named: bool) -> Options:
    """The metrics of ``o`` a popularity class applies to; a named other one is refused."""
    other = [m for m in o.metrics if m not in POPULARITY_METRICS]
    if other and named:
        raise ValueError(
            f"by={POPULARITY!r} slices the relevant items by popularity, which applies to "
            f"{', '.join(POPULARITY_METRICS)}; not to {', '.join(other)} (AUC and GAUC would "
            "count another class's relevant items as negatives, the probability metrics judge "
            "rows, not relevant items); leave them out of metrics")
    if o.no_relevant == "error":
        raise ValueError(f"by={POPULARITY!r} with no_relevant='error' would refuse every user "
                         "without a relevant item of some class; pass no_relevant='skip' (the "
                         "default: a class counts the users with a relevant item of it) or 'zero'")
    return o.replace(metrics=tuple(m for m in o.metrics if m in POPULARITY_METRICS))


def evaluate_popularity(pred, truth, o: Options, *, history, named_metrics: bool, users,
                        by: list[str], ci: float | None, n_resamples: int, seed,
                        min_slice_size: int, user: str, item: str, score: str, label: str,
                        rank: str | None) -> pd.DataFrame:
    """``evaluate(by="popularity")`` (see the module docstring): each class's row is
    :func:`recmetrics.evaluate` with only the relevant items of that class counted as
    relevant, and the overall row. ``named_metrics``: ``metrics=`` was given (a metric
    that does not apply is then refused; else the default is the ones that apply).

    One evaluation per class (four in all), each of the whole pred: the classes change
    the judged grades, and under ``ties="optimistic"``/``"pessimistic"`` the order too.
    """
    if len(by) > 1 or users is not None:
        raise ValueError(f"by={POPULARITY!r} slices items, not users, and is not crossed with "
                         "other slicings; pass by='popularity' alone, and slice by user "
                         "attributes in a separate call")
    if history is None:
        raise ValueError(f"by={POPULARITY!r} needs history= (the training log: user, item "
                         "rows) to count each item's popularity")
    o = _popularity_metrics(o, named_metrics)
    as_frame("history", history, {"user": user, "item": item})
    # relevance lives in truth, or in pred's own label column
    judged = ("truth", truth) if truth is not None else ("pred", pred)
    (j_items, h_items), item_ids = id_codes(item, judged, ("history", history), ordered=False)
    popularity = np.bincount(h_items, minlength=len(item_ids)).astype(np.float64)
    row_class = popularity_classes(popularity)[j_items]
    grades = numeric_column(judged[0], judged[1], label, grades=True)
    seed = _pipeline.poisson_seed(seed)
    tables, resampled, sizes = [], {}, []
    for c, name in enumerate((ALL,) + POPULARITY_CLASSES):
        # the class's relevant items keep their grade, every other judged row gets 0
        frame = judged[1] if c == 0 else judged[1].assign(
            **{label: np.where(row_class == c - 1, grades, 0.0)})
        prep = Prepared(frame if truth is None else pred, None if truth is None else frame,
                        user=user, item=item, score=score, label=label, ties=o.ties, rank=rank)
        per_user = _pipeline.per_user(prep, o)
        ratios = _pipeline.user_ratios(prep, per_user, o)
        s = _pipeline.summarize(prep, per_user, o, ratios)
        s.pairs = prep.pairs
        intervals = None
        if ci is not None:
            s.resamples = _pipeline.prepared_resamples(prep, ratios, o, seed, n_resamples)
            intervals = _pipeline.poisson_intervals(s, o, ci)
            for row, values in resample_values(s, o).items():
                resampled[(name, row)] = values
        if c == 0:
            prep.unmatched.warn()
        table = _pipeline.assemble(s, o, ci=ci, intervals=intervals, warn=c == 0)
        size = prep.n_users if c == 0 else int(np.count_nonzero(prep.ranked.n_relevant))
        table.insert(0, POPULARITY, name)
        table.insert(1, "slice_size", size)
        table.insert(2, "small_slice", c > 0 and size < min_slice_size)
        tables.append(table)
        sizes.append(size)
    result = pd.concat(tables, ignore_index=True)
    result["k"] = result["k"].astype("Int64")
    result.attrs["conventions"] = tables[0].attrs["conventions"]
    notes = [f"sliced by {POPULARITY}: items classed by their rows in history (head: the most "
             f"popular items holding {POPULARITY_SHARES[0]:.0%} of the rows, tail: the least "
             f"popular holding the last {1 - POPULARITY_SHARES[1]:.0%} and every item history "
             "never saw, torso: the rest); a class's rows count only its relevant items as "
             f"relevant, the lists are unchanged; slice_size = users with a relevant item of the "
             f"class; the rows of {ALL!r} count every relevant item"]
    small = [name for name, size in zip(POPULARITY_CLASSES, sizes[1:]) if size < min_slice_size]
    if small:
        notes.append(f"{len(small):,} class(es) have fewer than {min_slice_size:,} users with a "
                     f"relevant item of the class (small_slice=True): {', '.join(small)}; their "
                     "values are noisy")
    result.attrs["notes"] = notes
    result.attrs["slice_columns"] = [POPULARITY]
    if ci is not None:
        result.attrs["ci"] = ci
        result.attrs["resamples"] = resampled
    return result
