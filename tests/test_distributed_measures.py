"""Issue 23's measures on the Dask engine: the in-memory numbers, partition by partition.

The Dask engine evaluates each partition of whole users with the in-memory engine, so
mrr@k, R-precision, bpref, RBP and ERR, the trec tie order, min_grade and judged_only follow;
these tests check it on logs with ties and unjudged rows, cut into several partitions.
"""
import numpy as np
import pandas as pd
import pytest

from conftest import import_extra  # noqa: E402

dask = import_extra("dask")
dd = import_extra("dask.dataframe")

import recmetrics as rm  # noqa: E402

METRICS = ["precision", "mrr", "mrr@k", "r_precision", "bpref", "rbp", "err"]


def log(seed=0, n_users=30, n_items=9):
    """Scores with many ties; truth judging about two thirds of the scored rows (grades 0-3)."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(n_users), n_items)
    items = np.tile([f"d{i}" for i in range(n_items)], n_users)
    pred = pd.DataFrame({"user": users, "item": items, "score": rng.integers(0, 4, users.size) / 3})
    judged = rng.random(users.size) < 0.66
    truth = pd.DataFrame({"user": users[judged], "item": items[judged],
                          "label": rng.choice([0, 0, 1, 2, 3], int(judged.sum()))})
    return pred.sample(frac=1, random_state=seed).reset_index(drop=True), truth


@pytest.mark.parametrize("options", [
    dict(ties="trec"),
    dict(ties="optimistic", min_grade=2),
    dict(ties="pessimistic", judged_only=True),
    dict(ties="trec", judged_only=True, min_grade=2, rbp_p=0.5),
])
def test_dask_equals_in_memory_for_the_new_measures(options):
    pred, truth = log()
    common = dict(k=[1, 3], metrics=METRICS, max_grade=3, **options)
    expected = rm.evaluate(pred, truth, **common)
    users = rm.evaluate_per_user(pred, truth, **common)
    with dask.config.set(scheduler="sync"):
        got = rm.evaluate(dd.from_pandas(pred, npartitions=4), dd.from_pandas(truth, npartitions=3),
                          **common)
        got_users = rm.evaluate_per_user(dd.from_pandas(pred, npartitions=4),
                                         dd.from_pandas(truth, npartitions=3), **common)
    assert expected[["metric", "k"]].equals(got[["metric", "k"]])
    np.testing.assert_allclose(got["value"], expected["value"], rtol=0, atol=1e-12)
    assert expected["conventions"].tolist() == got["conventions"].tolist()
    merged = users.merge(got_users, on="user", suffixes=("", "_dask"))
    assert len(merged) == len(users)
    for column in users.columns.drop("user"):
        if column in got_users:
            np.testing.assert_allclose(merged[column + "_dask"], merged[column], rtol=0,
                                       atol=1e-12, equal_nan=True)


def test_dask_refuses_rbp_and_err_without_max_grade():
    """In memory, max_grade defaults to the truth's top grade; a partition cannot know it."""
    pred, truth = log(1)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="max_grade="):
        rm.evaluate(dd.from_pandas(pred, npartitions=2), dd.from_pandas(truth, npartitions=2),
                    k=3, metrics=["err"], ties="trec")
