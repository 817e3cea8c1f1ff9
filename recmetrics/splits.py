r"""Split an interaction log into train and test, and check a split for leakage.

A model is only as honestly evaluated as its split: a random split lets it
learn from interactions that happened after the ones it is tested on (the
future leaks into training), and scores look better than they will in
production (notebook 14). :func:`split_log` offers the usual protocols,
exactly and vectorised; :func:`check_leakage` looks at any (train, test)
pair, however it was made.

The protocols (``how``)
-----------------------
``"leave_last"``
    Each user's last ``n`` interactions are the test rows (leave-one-out for
    ``n=1``); users with ``n`` rows or fewer stay wholly in train (they
    would have nothing to learn from).
``"user_fraction"``
    Each user's latest ``test_size`` share of rows: :math:`\lfloor
    \text{test\_size} \cdot n_u + 1/2 \rfloor` rows of a user with
    :math:`n_u` rows (so within half a row of the share).
``"global_time"``
    Every interaction after one cut in time, for all users alike: rows with
    time > ``at``; or, with ``test_size``, the latest
    :math:`\lfloor \text{test\_size} \cdot n + 1/2 \rfloor` rows of the
    whole log. No train row is later than a test row.
``"random"``
    A seeded random ``test_size`` share of the rows. When the log has a time
    column a :class:`~recmetrics.RecmetricsWarning` says that it leaks the
    future.

Ties in time
------------
One rule, everywhere: rows with the same time keep the order they have in
the log (a stable sort), so of two tied rows the one further down the log
counts as the later. The split is therefore deterministic, and a log
written in the order events arrived splits as they happened.

Examples
--------
>>> import pandas as pd
>>> log = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcab"),
...                     "timestamp": [3, 1, 2, 5, 5]})
>>> train, test = split_log(log)
>>> test.values.tolist()        # user 1's latest row; of user 2's tied rows, the later in the log
[[1, 'a', 3], [2, 'b', 5]]
>>> check_leakage(train, test, across_users=False).ok   # a per-user protocol
True
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ._validation import (RecmetricsWarning, caller_stacklevel, check_columns, check_option,
                          check_seed, check_whole, is_real_number, plain)

__all__ = ["split_log", "check_leakage", "Leakage", "HOWS"]

How = Literal["leave_last", "user_fraction", "global_time", "random"]
#: The protocols of :func:`split_log`.
HOWS: tuple[How, ...] = ("leave_last", "user_fraction", "global_time", "random")


def _frame(name: str, frame, columns: dict[str, str]) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame of interactions, got "
                         f"{type(frame).__name__}")
    check_columns(name, frame.columns, columns)


def _times(name: str, frame: pd.DataFrame, column: str) -> np.ndarray:
    """A time column as sortable numbers or datetimes, with no missing value."""
    values = frame[column]
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_dtype(values)) \
            or pd.api.types.is_bool_dtype(values):
        raise ValueError(f"{name} column {column!r} must hold numbers or datetimes, not "
                         f"{values.dtype}; convert it with pd.to_datetime or to numbers")
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"{name} column {column!r} has {int(missing.sum()):,} missing time(s) "
                         f"(first in row {int(np.flatnonzero(missing)[0])}); drop those rows or "
                         "fill their time")
    return values.to_numpy()


def _share(test_size, how: str) -> float:
    if test_size is None:
        raise ValueError(f"how={how!r} needs test_size, the share of rows to test on, e.g. "
                         "test_size=0.2")
    if not is_real_number(test_size) or not 0 < test_size < 1:
        raise ValueError(f"test_size={test_size!r} must be a number strictly between 0 and 1 "
                         "(the share of rows to test on), e.g. 0.2")
    return float(test_size)


def _by_user_in_time(users: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by user, in time order within a user (ties: log order), and each row's
    place counted from the user's latest row (0 = the latest), in that order."""
    order = np.argsort(times, kind="stable")
    order = order[np.argsort(users[order], kind="stable")]
    grouped = users[order]
    counts = np.bincount(grouped)
    ends = np.cumsum(counts)
    from_end = ends[grouped] - 1 - np.arange(grouped.size)
    return order, from_end


def split_log(log, *, how: How = "leave_last", n: int = 1, test_size: float | None = None,
              at=None, seed=0, user: str = "user", item: str = "item",
              time: str = "timestamp") -> tuple[pd.DataFrame, pd.DataFrame]:
    r"""Split an interaction log into (train, test) by one of the usual protocols.

    Parameters
    ----------
    log : pandas.DataFrame
        One row per interaction: ``user``, ``item`` and (for every ``how``
        but ``"random"``) ``time`` columns; other columns are carried along.
    how : {"leave_last", "user_fraction", "global_time", "random"}
        The protocol (module docstring).
    n : int, default 1
        ``"leave_last"``: test rows per user.
    test_size : float, optional
        The test share: per user (``"user_fraction"``), of the whole log
        (``"global_time"`` without ``at``, ``"random"``).
    at : number or datetime, optional
        ``"global_time"``: the cut; rows with time > ``at`` are the test rows.
    seed : int or numpy Generator, default 0
        ``"random"``: the draw.
    user, item, time : str
        Column names.

    Returns
    -------
    (train, test) : two pandas.DataFrame
        The log's rows (every column, the original index), each in the log's
        order; together exactly the log. Ties in time keep the log's order
        (module docstring).

    Examples
    --------
    >>> log = pd.DataFrame({"user": [1] * 5, "item": list("abcde"),
    ...                     "timestamp": [1, 2, 3, 4, 5]})
    >>> train, test = split_log(log, how="user_fraction", test_size=0.4)
    >>> test.item.tolist()
    ['d', 'e']
    >>> train, test = split_log(log, how="global_time", at=3)
    >>> train.item.tolist(), test.item.tolist()
    (['a', 'b', 'c'], ['d', 'e'])
    """
    how = check_option("how", how, HOWS)
    needs_time = how != "random"
    columns = {"user": user, "item": item}
    if needs_time:
        columns["time"] = time
    _frame("log", log, columns)
    if not len(log):
        raise ValueError("log has no rows; pass at least one interaction")
    if how != "leave_last" and n != 1:
        raise ValueError(f"n is for how='leave_last' (test rows per user); with how={how!r} "
                         "pass test_size")
    if how != "global_time" and at is not None:
        raise ValueError(f"at is the cut of how='global_time'; with how={how!r} leave it out")
    if how == "leave_last" and test_size is not None:
        raise ValueError("how='leave_last' takes n (test rows per user), not test_size; use "
                         "how='user_fraction' for a share of each user's rows")
    test = np.zeros(len(log), dtype=bool)
    if how == "random":
        share = _share(test_size, how)
        rng = np.random.default_rng(check_seed(seed))
        n_test = int(np.floor(share * len(log) + 0.5))
        test[rng.permutation(len(log))[:n_test]] = True
        if time in log.columns:
            warnings.warn(f"how='random' ignores time: test rows are older than train rows of "
                          f"the same users, so the model learns from the future it is tested on "
                          f"and scores higher than it will in use; split by time "
                          f"(how='leave_last', 'user_fraction' or 'global_time', column "
                          f"{time!r}) unless the order of events truly does not matter",
                          RecmetricsWarning, stacklevel=caller_stacklevel())
    else:
        times = _times("log", log, time)
        if how == "global_time":
            if at is not None:
                if test_size is not None:
                    raise ValueError("how='global_time' takes at (the cut) or test_size (the "
                                     "share after the cut), not both")
                try:
                    test = np.asarray(times > (np.datetime64(pd.Timestamp(at).tz_localize(None))
                                               if np.issubdtype(times.dtype, np.datetime64)
                                               else at))
                except (TypeError, ValueError):
                    raise ValueError(f"at={at!r} cannot be compared with the times of column "
                                     f"{time!r} ({times.dtype}); pass a value of that kind") from None
            else:
                share = _share(test_size, how)
                n_test = int(np.floor(share * len(log) + 0.5))
                order = np.argsort(times, kind="stable")
                test[order[len(log) - n_test:]] = True
        else:
            users = pd.factorize(log[user], use_na_sentinel=False)[0]
            order, from_end = _by_user_in_time(users, times)
            counts = np.bincount(users)[users[order]]
            if how == "leave_last":
                n = check_whole("n", n, minimum=1, maximum=2**31 - 1, example="n=1")
                test[order] = (from_end < n) & (counts > n)
            else:
                share = _share(test_size, how)
                test[order] = from_end < np.floor(share * counts + 0.5)
    return log[~test], log[test]


# --------------------------------------------------------------------------- leakage


@dataclass(frozen=True)
class Leakage:
    """What :func:`check_leakage` found: counts of each kind of leak (0: none)."""

    users_with_older_test: int    # users with a test row older than one of their train rows
    older_test_rows: int          # those users' test rows older than their latest train row
    test_starts: object           # the earliest test time (None without times)
    train_ends: object            # the latest train time (None without times)
    rows_before_train_ends: int   # test rows older than the latest train row (any user)
    pairs_in_both: int            # (user, item) pairs in train and in test
    across_users: bool            # whether the global period was checked

    @property
    def periods_overlap(self) -> bool:
        """The test period starts before the train period ends."""
        return self.rows_before_train_ends > 0

    @property
    def ok(self) -> bool:
        """No leak found by the checks that were asked for."""
        return not (self.users_with_older_test or self.pairs_in_both
                    or (self.across_users and self.periods_overlap))


def _keys(users: np.ndarray, items: np.ndarray) -> np.ndarray:
    return users.astype(np.int64) * (int(items.max(initial=0)) + 1) + items


def check_leakage(train, test, *, user: str = "user", item: str = "item",
                  time: str | None = "timestamp", across_users: bool = True) -> Leakage:
    r"""Check a (train, test) split for the three common leaks, warning for each found.

    1. **A user's test rows older than their train rows**: the model has
       seen what the user did after the moment it is tested on (a random
       split does this to nearly every user).
    2. **The test period starts before the train period ends**
       (``across_users``): other users' later interactions are in train, so
       trends of the test period leak into the model (Ji et al. 2023). A
       per-user protocol (``leave_last``, ``user_fraction``) does this by
       design: pass ``across_users=False`` to check only 1 and 3 for it.
    3. **A (user, item) pair in both**: the model is tested on an
       interaction it was trained on (repeated consumption aside, usually a
       duplicated row or a split by row instead of by event).

    Each leak found gives a :class:`~recmetrics.RecmetricsWarning` with its
    counts and an example. Exact (every row counts, ties in time are not
    leaks) and vectorised.

    Parameters
    ----------
    train, test : pandas.DataFrame
        Interaction rows with ``user``, ``item`` and ``time`` columns.
    user, item : str
        Column names.
    time : str or None, default "timestamp"
        The time column; None (or a column neither frame has) checks the
        pairs only.
    across_users : bool, default True
        Also check the global period (2).

    Returns
    -------
    Leakage
        The counts; ``.ok`` is True when no checked leak was found.

    References
    ----------
    Ji, Y., Sun, A., Zhang, J. & Li, C. (2023). A critical study on data
    leakage in recommender system offline evaluation. *ACM TOIS* 41(3).

    Examples
    --------
    >>> train = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "timestamp": [1, 5]})
    >>> test = pd.DataFrame({"user": [1], "item": ["c"], "timestamp": [3]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     found = check_leakage(train, test)
    >>> found.users_with_older_test, found.older_test_rows, found.pairs_in_both
    (1, 1, 0)
    """
    if not isinstance(across_users, bool):
        raise ValueError(f"across_users={across_users!r} must be True or False")
    has_time = time is not None and (time in getattr(train, "columns", ())
                                     or time in getattr(test, "columns", ()))
    columns = {"user": user, "item": item, **({"time": time} if has_time and time else {})}
    _frame("train", train, columns)
    _frame("test", test, columns)
    both = pd.concat([train[[user, item]], test[[user, item]]], ignore_index=True)
    users = pd.factorize(both[user], use_na_sentinel=False)[0]
    items = pd.factorize(both[item], use_na_sentinel=False)[0]
    keys = _keys(users, items)
    n_train = len(train)
    train_keys, test_keys = np.unique(keys[:n_train]), keys[n_train:]
    shared = np.isin(test_keys, train_keys)
    pairs_in_both = int(np.unique(test_keys[shared]).size)
    stack = caller_stacklevel()
    if pairs_in_both:
        first = n_train + int(np.flatnonzero(shared)[0])
        warnings.warn(f"{pairs_in_both:,} (user, item) pair(s) are in both train and test (e.g. "
                      f"{plain(both[user].iloc[first])!r}, {plain(both[item].iloc[first])!r}): "
                      "the model is tested on interactions it was trained on; drop them from "
                      "test, unless repeated consumption is what you evaluate",
                      RecmetricsWarning, stacklevel=stack)
    users_older = older_rows = before_end = 0
    starts = ends = None
    if has_time and time is not None and len(train) and len(test):
        times = np.concatenate([_times("train", train, time), _times("test", test, time)])
        train_users, test_users = users[:n_train], users[n_train:]
        train_times, test_times = times[:n_train], times[n_train:]
        n_users = int(users.max(initial=-1)) + 1
        # each user's latest train time: sort by time, the last row of a user wins
        order = np.argsort(train_times, kind="stable")
        latest = np.full(n_users, -1, dtype=np.int64)
        latest[train_users[order]] = order
        has_train = latest[test_users] >= 0
        older = np.zeros(test_users.size, dtype=bool)
        older[has_train] = test_times[has_train] < train_times[latest[test_users[has_train]]]
        older_rows = int(older.sum())
        users_older = int(np.unique(test_users[older]).size)
        train_end, test_start = train_times.max(), test_times.min()
        starts, ends = plain(test_start), plain(train_end)
        before_end = int((test_times < train_end).sum())
        if users_older:
            first = int(np.flatnonzero(older)[0])
            warnings.warn(f"{users_older:,} user(s) have test rows older than their own train "
                          f"rows ({older_rows:,} test rows; e.g. user "
                          f"{plain(test[user].iloc[first])!r}): the model learns from what the "
                          "user did after the moment it is tested on; split by time (rm.split_log "
                          "with how='leave_last', 'user_fraction' or 'global_time')",
                          RecmetricsWarning, stacklevel=stack)
        if across_users and before_end:
            warnings.warn(f"the test period starts ({starts}) before the train period ends "
                          f"({ends}): {before_end:,} test rows are older than the latest train "
                          "row, so later interactions of other users are in train; split at one "
                          "time (rm.split_log(how='global_time')), or pass across_users=False "
                          "for a per-user protocol", RecmetricsWarning, stacklevel=stack)
    return Leakage(users_older, older_rows, starts, ends, before_end, pairs_in_both,
                   across_users)
