r"""From a recommender's output to the long (user, item, score) table that evaluate takes.

Libraries hand back their recommendations in three shapes; each has an
adapter that returns a pandas DataFrame with columns ``user``, ``item`` and
``score``, one row per scored (user, item), ready for
:func:`recmetrics.evaluate` with a ``truth`` frame:

* **top-k lists** (implicit's ``recommend`` returns ``(ids, scores)``, two
  arrays of shape (users, N); RecBole's ``full_sort_topk`` a (users, k)
  tensor of item indices and one of scores; any list of per-user lists):
  :func:`from_topk`;
* **a score matrix** (users x items: LightFM's ``predict`` reshaped, any
  matrix factorisation's ``U @ V.T``), from which the training items must be
  removed and often only the best k kept: :func:`from_score_matrix`;
* **Spark ALS's** ``recommendForAllUsers``: a user column and an array of
  (item, rating) structs, on the Spark engine:
  :func:`recmetrics.spark.from_recommendations`.

Everything is vectorised (one pass over the entries, no loop over users).

What a top-k list means for AUC
-------------------------------
A top-k export scores only k items per user: relevant items outside the
list are misses for recall, MAP and NDCG (they count in the denominators),
but AUC and GAUC compare scored rows only, so by default they leave those
items out. :func:`recmetrics.evaluate` says so (a warning and a note); its
option ``unscored="below"`` ranks them below every scored row, tied, so
that AUC describes the same list as recall.

Examples
--------
implicit (``model.recommend(userids, user_items[userids], N=10)``):

>>> import numpy as np
>>> ids = np.array([[3, 1], [2, 0]]); scores = np.array([[0.9, 0.4], [0.8, 0.7]])
>>> from_topk(ids, scores, users=["u1", "u2"]).astype(object).values.tolist()
[['u1', 3, 0.9], ['u1', 1, 0.4], ['u2', 2, 0.8], ['u2', 0, 0.7]]

A score matrix with the training items removed and the best item kept:

>>> from_score_matrix(np.array([[0.1, 0.5, 0.3]]), exclude=np.array([[False, True, False]]),
...                   k=1).astype(object).values.tolist()
[[0, 2, 0.3]]
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._validation import check_whole, plain

__all__ = ["from_topk", "from_score_matrix"]


def _is_sparse(x) -> bool:
    """A scipy.sparse matrix or array, told without importing scipy."""
    return type(x).__module__.startswith("scipy.sparse")


def _labels(name: str, ids, n: int, what: str) -> np.ndarray:
    """The ids of n rows (or columns): ``ids`` checked, or 0..n-1."""
    if ids is None:
        return np.arange(n)
    values = np.asarray(ids.to_numpy() if isinstance(ids, (pd.Series, pd.Index)) else ids,
                        dtype=object if not isinstance(ids, np.ndarray) else None)
    if values.ndim != 1 or values.size != n:
        raise ValueError(f"{name} must hold one id per {what} ({n:,}); it has "
                         f"{values.size if values.ndim == 1 else values.shape}")
    if pd.isna(values).any():
        raise ValueError(f"{name} contains a missing id (at position "
                         f"{int(np.flatnonzero(pd.isna(values))[0])}); give every {what} an id")
    if not pd.Index(values).is_unique:
        duplicated = pd.Index(values)[pd.Index(values).duplicated()][0]
        raise ValueError(f"{name} contains the id {plain(duplicated)!r} more than once; each {what} "
                         "needs its own id")
    if values.dtype == object:
        values = pd.Series(values).infer_objects().to_numpy()  # ints stay ints, text text
    return values


def _frame(users: np.ndarray, items: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"user": users, "item": items, "score": scores.astype(np.float64)})


# --------------------------------------------------------------------------- top-k lists


def _as_2d(name: str, values) -> tuple[np.ndarray, np.ndarray, int]:
    """A 2-D array or a list of per-user lists, as (flat values, row of each value, rows)."""
    if hasattr(values, "detach"):  # a torch tensor (RecBole): to numpy without importing torch
        values = values.detach().cpu().numpy()
    if isinstance(values, np.ndarray):
        if values.ndim != 2:
            raise ValueError(f"{name} must be 2-D (one row per user, best first) or a list of "
                             f"per-user lists; it has shape {values.shape}")
        rows = np.repeat(np.arange(values.shape[0]), values.shape[1])
        return values.ravel(), rows, int(values.shape[0])
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, pd.Series)):
        raise ValueError(f"{name} must be a 2-D array or a list of per-user lists of item ids "
                         f"(best first), not {type(values).__name__}")
    values = list(values)
    bad = [i for i, v in enumerate(values[:1]) if isinstance(v, (str, bytes))]
    if bad or not all(hasattr(v, "__len__") for v in values):
        raise ValueError(f"{name} must be a list of per-user lists (one list per user, best "
                         "first); a row is not a list")
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    flat = list(itertools.chain.from_iterable(values))
    array = np.empty(len(flat), dtype=object)
    array[:] = flat
    return array, np.repeat(np.arange(len(values)), lengths), len(values)


def from_topk(items, scores=None, *, users=None) -> pd.DataFrame:
    r"""The long (user, item, score) table of per-user top-k lists.

    Parameters
    ----------
    items : 2-D array or list of per-user lists
        Item ids, one row per user, best first: implicit's ``ids`` of shape
        (users, N), RecBole's ``topk_index`` (mapped to tokens), or lists of
        different lengths. ``None`` and NaN entries (padding) are dropped;
        an item twice in one user's list is refused.
    scores : same shape as ``items``, optional
        The score of each entry (implicit's ``scores``). Without it, each
        entry gets a score that follows the list order: :math:`N - j` for
        the entry at position :math:`j = 0, 1, \ldots` of a list, N the
        longest list's length (so positions compare across users, and the
        ranking metrics see exactly the list's order). A NaN score of a kept
        entry is refused; ``-inf`` is a legal score.
    users : sequence, optional
        The id of each row (default 0 … n−1).

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``score``: one row per kept entry, users
        in the order of the rows, each list in its own order.

    Examples
    --------
    >>> from_topk([["b", "a"], ["c"]], users=[7, 8]).astype(object).values.tolist()
    [[7, 'b', 2.0], [7, 'a', 1.0], [8, 'c', 2.0]]
    """
    flat, rows, n_rows = _as_2d("items", items)
    user_ids = _labels("users", users, n_rows, "row of items")
    starts = np.searchsorted(rows, np.arange(n_rows))
    position = np.arange(rows.size) - starts[rows]
    if scores is None:
        width = int(position.max(initial=-1)) + 1
        values = (width - position).astype(np.float64)
    else:
        score_flat, score_rows, _ = _as_2d("scores", scores)
        if score_flat.size != flat.size or not np.array_equal(score_rows, rows):
            raise ValueError("scores must have the shape of items (one score per item id); "
                             f"items has {flat.size:,} entries, scores {score_flat.size:,}")
        try:
            values = np.asarray(score_flat, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("scores must hold numbers (one per item id)") from None
    keep = ~pd.isna(flat)
    if not keep.all():
        flat, rows, values = flat[keep], rows[keep], values[keep]
    if np.isnan(values).any():
        first = int(np.flatnonzero(np.isnan(values))[0])
        raise ValueError(f"scores has a NaN for item {plain(flat[first])!r} of row {int(rows[first])}; "
                         "drop that entry (set its item to None) or give it a score")
    if flat.dtype == object and flat.size:
        flat = pd.Series(flat).infer_objects().to_numpy()  # ints stay ints, text stays text
    pairs = pd.DataFrame({"row": rows, "item": flat})
    duplicated = pairs.duplicated().to_numpy()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        raise ValueError(f"items lists {plain(flat[first])!r} more than once in row "
                         f"{int(rows[first])} (user {plain(user_ids[rows[first]])!r}); a list holds each item once")
    return _frame(user_ids[rows], flat, values)


# --------------------------------------------------------------------------- score matrices


def _exclude_mask(exclude, shape: tuple[int, int], user_ids, item_ids):
    """The (row, column) cells to leave out, as sorted flat keys row * n_items + column."""
    n_users, n_items = shape
    if isinstance(exclude, pd.DataFrame):
        missing = [c for c in ("user", "item") if c not in exclude.columns]
        if missing:
            raise ValueError(f"exclude as a frame needs columns 'user' and 'item' (rows to "
                             f"leave out); it has no {', '.join(repr(c) for c in missing)} "
                             f"(its columns: {', '.join(repr(c) for c in exclude.columns)})")
        row = pd.Index(user_ids).get_indexer(exclude["user"])
        col = pd.Index(item_ids).get_indexer(exclude["item"])
        known = (row >= 0) & (col >= 0)
        if len(exclude) and not known.any():
            raise ValueError(f"exclude: none of its {len(exclude):,} (user, item) rows names a "
                             f"row and a column of scores (e.g. {plain(exclude['user'].iloc[0])!r}, "
                             f"{plain(exclude['item'].iloc[0])!r}); pass users= and items= with the "
                             "ids of the matrix's rows and columns, written as in exclude")
        return np.unique(row[known].astype(np.int64) * n_items + col[known])
    if _is_sparse(exclude):
        if exclude.shape != shape:
            raise ValueError(f"exclude has shape {exclude.shape}, scores {shape}; pass the "
                             "training matrix of the same users and items")
        coo = exclude.tocoo()
        nonzero = coo.data != 0
        return np.unique(coo.row[nonzero].astype(np.int64) * n_items + coo.col[nonzero])
    mask = np.asarray(exclude)
    if mask.shape != shape:
        raise ValueError(f"exclude has shape {mask.shape}, scores {shape}; pass a boolean "
                         "matrix of the same shape, a sparse training matrix or a (user, item) "
                         "frame")
    if mask.dtype != bool:
        raise ValueError(f"exclude as an array must be boolean (True = leave out), not "
                         f"{mask.dtype}; pass exclude=matrix > 0 or a sparse training matrix")
    return np.flatnonzero(mask.ravel()).astype(np.int64)


def _best_k(rows: np.ndarray, values: np.ndarray, n_users: int, k: int) -> np.ndarray:
    """Entries among their row's k best, and every entry tied with the k-th (rows grouped)."""
    order = np.lexsort((-values, rows))
    sorted_rows = rows[order]
    starts = np.searchsorted(sorted_rows, np.arange(n_users))
    counts = np.bincount(rows, minlength=n_users)
    kth = np.full(n_users, -np.inf)
    full = counts >= k
    kth[full] = values[order][starts[full] + k - 1]
    return values >= kth[rows]


def _from_dense(scores, users, items, exclude, k) -> pd.DataFrame:
    """:func:`from_score_matrix` of a dense matrix: a mask of the kept cells, then only those
    cells gathered (no per-cell index arrays of the whole matrix)."""
    if hasattr(scores, "detach"):
        scores = scores.detach().cpu().numpy()
    matrix = np.asarray(scores)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be a 2-D array (users x items) or a scipy.sparse "
                         f"matrix; it has shape {matrix.shape}")
    try:
        matrix = matrix.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise ValueError("scores must hold numbers (a users x items matrix)") from None
    shape = (int(matrix.shape[0]), int(matrix.shape[1]))
    user_ids = _labels("users", users, shape[0], "row of scores")
    item_ids = _labels("items", items, shape[1], "column of scores")
    keep = ~np.isnan(matrix)
    if exclude is not None:
        excluded = _exclude_mask(exclude, shape, user_ids, item_ids)
        keep.ravel()[excluded] = False
    if k is not None and shape[1]:
        k = check_whole("k", k, minimum=1, maximum=2**31 - 1, example="k=10")
        if k < shape[1]:
            # each row's k-th best kept score (-inf where fewer than k are kept: keep them all);
            # a kept score of -inf is tied with that k-th and kept, as it should be
            masked = np.where(keep, matrix, -np.inf)
            kth = -np.partition(-masked, k - 1, axis=1)[:, k - 1]
            keep &= masked >= kth[:, None]
    elif k is not None:
        check_whole("k", k, minimum=1, maximum=2**31 - 1, example="k=10")
    rows, cols = np.nonzero(keep)
    return _frame(user_ids[rows], item_ids[cols], matrix[rows, cols])


def from_score_matrix(scores, *, users=None, items=None, exclude=None, k=None) -> pd.DataFrame:
    r"""The long (user, item, score) table of a users × items score matrix.

    Parameters
    ----------
    scores : 2-D array or scipy.sparse matrix
        One row per user, one column per item. Dense: every cell is a scored
        pair, except NaN cells (not scored: dropped). Sparse: the stored
        entries are the scored pairs (an explicit 0 is a score of 0; cells
        not stored are not scored).
    users, items : sequence, optional
        The ids of the rows and of the columns (default 0 … n−1).
    exclude : optional
        Pairs to leave out, typically the training interactions (a model
        that scores the items a user already has ranks them on top): a
        boolean matrix of the same shape (True = leave out), a scipy.sparse
        matrix of the same shape (its nonzero entries are left out; the
        user-item matrix most libraries train on), or a DataFrame with
        columns ``user`` and ``item`` (ids as ``users`` and ``items`` write
        them; rows naming a user or an item outside the matrix are ignored,
        and a frame none of whose rows matches is refused).
    k : int, optional
        Keep each user's k best-scored pairs (after ``exclude``) and every
        pair tied with the k-th, so that no tie is cut arbitrarily; a user
        with fewer pairs keeps them all. Default: keep every pair.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``score``, users in row order, items in
        column order within a user.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.2, 0.2], [0.1, 0.8, 0.3]])
    >>> from_score_matrix(scores, users=["u", "v"], items=list("abc"), k=2).astype(object).values.tolist()
    [['u', 'a', 0.9], ['u', 'b', 0.2], ['u', 'c', 0.2], ['v', 'b', 0.8], ['v', 'c', 0.3]]
    """
    if not _is_sparse(scores):
        return _from_dense(scores, users, items, exclude, k)
    coo = scores.tocoo()
    shape = (int(coo.shape[0]), int(coo.shape[1]))
    rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
    try:
        values = np.asarray(coo.data, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("scores must hold numbers") from None
    order = np.lexsort((cols, rows))  # row-major, whatever order the entries were stored in
    rows, cols, values = rows[order], cols[order], values[order]
    if rows.size > 1 and not (np.diff(rows * shape[1] + cols) > 0).all():
        raise ValueError("scores (sparse) stores a cell twice; call scores.sum_duplicates() "
                         "or keep one score per (user, item)")
    keep = ~np.isnan(values)
    user_ids = _labels("users", users, shape[0], "row of scores")
    item_ids = _labels("items", items, shape[1], "column of scores")
    if exclude is not None:
        excluded = _exclude_mask(exclude, shape, user_ids, item_ids)
        keep &= ~np.isin(rows * shape[1] + cols, excluded)
    rows, cols, values = rows[keep], cols[keep], values[keep]
    if k is not None:
        k = check_whole("k", k, minimum=1, maximum=2**31 - 1, example="k=10")
        best = _best_k(rows, values, shape[0], k)
        rows, cols, values = rows[best], cols[best], values[best]
    return _frame(user_ids[rows], item_ids[cols], values)
