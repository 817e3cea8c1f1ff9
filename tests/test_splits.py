"""rm.split_log and rm.check_leakage on MovieLens-style logs with tied timestamps.

Every split is a partition of the log with its protocol's invariant, checked
against a literal per-user reference (a loop over users, the tie rule written
out: equal times keep the log's order). check_leakage flags a random split of a
timestamped log and passes the temporal ones.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import RecmetricsWarning


def movielens_like(seed: int, n_users: int = 40, n_items: int = 60, n_times: int = 25):
    """Ratings as MovieLens has them: one row per (user, item), a rating 1-5 and a timestamp;
    users of very different activity; few distinct times, so many ties; rows shuffled."""
    rng = np.random.default_rng(seed)
    activity = rng.integers(1, 25, n_users)
    rows = [(u, int(i), int(rng.integers(1, 6)), int(rng.integers(0, n_times)))
            for u in range(n_users)
            for i in rng.choice(n_items, size=min(int(activity[u]), n_items), replace=False)]
    log = pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])
    return log.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _is_partition(log, train, test):
    assert list(train.columns) == list(log.columns) == list(test.columns)
    assert not set(train.index) & set(test.index)
    together = pd.concat([train, test]).sort_index()
    pd.testing.assert_frame_equal(together, log)
    # each part keeps the log's order
    assert train.index.is_monotonic_increasing and test.index.is_monotonic_increasing


def _latest_rows_by_hand(log, how_many):
    """Per user, the indices of its latest ``how_many(n_u)`` rows: time order, ties in log
    order (the documented rule), one user at a time."""
    chosen = set()
    for _, rows in log.groupby("user", sort=False):
        ordered = sorted(rows.index, key=lambda i: (log.at[i, "timestamp"], i))
        take = how_many(len(ordered))
        chosen.update(ordered[len(ordered) - take:] if take else [])
    return chosen


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_leave_last_is_a_partition_with_n_latest_rows_per_user(seed, n):
    log = movielens_like(seed)
    train, test = rm.split_log(log, how="leave_last", n=n)
    _is_partition(log, train, test)
    assert set(test.index) == _latest_rows_by_hand(log, lambda m: n if m > n else 0)
    sizes = log.groupby("user").size()
    per_user = test.groupby("user").size().reindex(sizes.index, fill_value=0)
    assert (per_user == np.where(sizes > n, n, 0)).all()
    # none older than the user's train rows
    latest_train = train.groupby("user").timestamp.max()
    earliest_test = test.groupby("user").timestamp.min()
    assert (earliest_test >= latest_train.reindex(earliest_test.index)).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("test_size", [0.1, 0.2, 0.5, 0.75])
def test_user_fraction_gives_each_user_its_share_within_one_row(seed, test_size):
    log = movielens_like(seed)
    train, test = rm.split_log(log, how="user_fraction", test_size=test_size)
    _is_partition(log, train, test)
    assert set(test.index) == _latest_rows_by_hand(
        log, lambda m: int(np.floor(test_size * m + 0.5)))
    sizes = log.groupby("user").size()
    per_user = test.groupby("user").size().reindex(sizes.index, fill_value=0)
    assert (np.abs(per_user - test_size * sizes) <= 1).all()
    latest_train = train.groupby("user").timestamp.max()
    earliest_test = test.groupby("user").timestamp.min()
    assert (earliest_test >= latest_train.reindex(earliest_test.index).fillna(-1)).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_global_time_has_no_train_row_after_a_test_row(seed):
    log = movielens_like(seed)
    train, test = rm.split_log(log, how="global_time", at=17)
    _is_partition(log, train, test)
    assert set(test.index) == set(log.index[log.timestamp > 17])
    train, test = rm.split_log(log, how="global_time", test_size=0.3)
    _is_partition(log, train, test)
    assert len(test) == int(np.floor(0.3 * len(log) + 0.5))
    assert train.timestamp.max() <= test.timestamp.min()
    # ties at the cut: the later rows of the log go to test (the documented rule)
    order = sorted(log.index, key=lambda i: (log.at[i, "timestamp"], i))
    assert set(test.index) == set(order[len(log) - len(test):])


def test_global_time_takes_datetimes():
    log = movielens_like(3).assign(timestamp=lambda f: pd.to_datetime(f.timestamp, unit="D"))
    train, test = rm.split_log(log, how="global_time", at="1970-01-15")
    assert set(test.index) == set(log.index[log.timestamp > pd.Timestamp("1970-01-15")])
    aware = log.assign(timestamp=log.timestamp.dt.tz_localize("UTC"))
    _, test_aware = rm.split_log(aware, how="leave_last")
    assert set(test_aware.index) == set(rm.split_log(log, how="leave_last")[1].index)


def test_random_split_is_seeded_and_warns_that_it_leaks_the_future():
    log = movielens_like(4)
    with pytest.warns(RecmetricsWarning, match="how='random' ignores time"):
        train, test = rm.split_log(log, how="random", test_size=0.2, seed=7)
    _is_partition(log, train, test)
    assert len(test) == int(np.floor(0.2 * len(log) + 0.5))
    with pytest.warns(RecmetricsWarning):
        again = rm.split_log(log, how="random", test_size=0.2, seed=7)[1]
    assert again.index.equals(test.index)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no time column: nothing to leak, no warning
        rm.split_log(log.drop(columns="timestamp"), how="random", test_size=0.2)


def test_check_leakage_flags_a_random_split_of_a_timestamped_log():
    log = movielens_like(5, n_times=10_000)
    with pytest.warns(RecmetricsWarning):
        train, test = rm.split_log(log, how="random", test_size=0.2)
    with pytest.warns(RecmetricsWarning, match="test rows older than their own train rows"):
        found = rm.check_leakage(train, test, across_users=False)
    assert not found.ok and found.users_with_older_test > 0 and found.pairs_in_both == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_leakage_passes_the_temporal_splits(seed):
    log = movielens_like(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for how, options in [("leave_last", {}), ("user_fraction", {"test_size": 0.2})]:
            found = rm.check_leakage(*rm.split_log(log, how=how, **options), across_users=False)
            assert found.ok and found.older_test_rows == 0
        found = rm.check_leakage(*rm.split_log(log, how="global_time", test_size=0.2))
        assert found.ok and not found.periods_overlap


def test_check_leakage_counts_equal_a_loop_over_rows():
    rng = np.random.default_rng(9)
    train = pd.DataFrame({"user": rng.integers(0, 8, 60), "item": rng.integers(0, 30, 60),
                          "timestamp": rng.integers(0, 20, 60)})
    test = pd.DataFrame({"user": rng.integers(0, 10, 25), "item": rng.integers(0, 30, 25),
                         "timestamp": rng.integers(0, 20, 25)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecmetricsWarning)
        found = rm.check_leakage(train, test)
    latest = {u: max(t for v, t in zip(train.user, train.timestamp) if v == u)
              for u in set(train.user)}
    older = [(u, t) for u, t in zip(test.user, test.timestamp) if u in latest and t < latest[u]]
    assert found.older_test_rows == len(older)
    assert found.users_with_older_test == len({u for u, _ in older})
    train_pairs = set(zip(train.user, train.item))
    assert found.pairs_in_both == len(set(zip(test.user, test.item)) & train_pairs)
    end = max(train.timestamp)
    assert found.rows_before_train_ends == sum(t < end for t in test.timestamp)
    assert (found.test_starts, found.train_ends) == (min(test.timestamp), end)


def test_check_leakage_warns_for_a_pair_in_both():
    train = pd.DataFrame({"user": [1, 2], "item": ["a", "b"], "timestamp": [1, 1]})
    test = pd.DataFrame({"user": [1], "item": ["a"], "timestamp": [2]})
    with pytest.warns(RecmetricsWarning, match=r"1 \(user, item\) pair\(s\) are in both"):
        found = rm.check_leakage(train, test)
    assert found.pairs_in_both == 1 and not found.ok


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), min_size=1, max_size=40),
       st.sampled_from(["leave_last", "user_fraction", "global_time"]),
       st.integers(1, 3), st.floats(0.05, 0.95))
def test_property_temporal_splits_partition_the_log_without_leaks(rows, how, n, test_size):
    log = pd.DataFrame(rows, columns=["user", "timestamp"]).assign(
        item=lambda f: np.arange(len(f)))            # one row per (user, item), ties in time
    options = {"n": n} if how == "leave_last" else {"test_size": test_size}
    train, test = rm.split_log(log, how=how, **options)
    _is_partition(log, train, test)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rm.check_leakage(train, test, across_users=how == "global_time").ok
    if how == "global_time" and len(train) and len(test):
        assert train.timestamp.max() <= test.timestamp.min()


@pytest.mark.parametrize("call, message", [
    (lambda log: rm.split_log(log, how="latest"), "how"),
    (lambda log: rm.split_log(log.drop(columns="timestamp")), "timestamp"),
    (lambda log: rm.split_log(log, how="user_fraction"), "needs test_size"),
    (lambda log: rm.split_log(log, how="random", test_size=1.5), "test_size=1.5 must be"),
    (lambda log: rm.split_log(log, how="leave_last", n=0), "n"),
    (lambda log: rm.split_log(log, how="leave_last", test_size=0.2), "takes n"),
    (lambda log: rm.split_log(log, how="random", n=2, test_size=0.2), "n is for how='leave_last'"),
    (lambda log: rm.split_log(log, how="leave_last", at=3), "at is the cut"),
    (lambda log: rm.split_log(log, how="global_time", at=3, test_size=0.2), "not both"),
    (lambda log: rm.split_log(log, how="global_time", at="noon"), "at='noon' cannot be compared"),
    (lambda log: rm.split_log(log.assign(timestamp="x")), "must hold numbers or datetimes"),
    (lambda log: rm.split_log(log.assign(timestamp=np.nan)), "missing time"),
    (lambda log: rm.split_log(log.iloc[:0]), "log has no rows"),
    (lambda log: rm.split_log(log.values), "log must be a pandas DataFrame"),
    (lambda log: rm.check_leakage(log, log.drop(columns="item")), "test"),
    (lambda log: rm.check_leakage(log, log, across_users="yes"), "across_users"),
])
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call(movielens_like(0, n_users=5))
