"""The beyond-accuracy metrics on Spark (local[2]): the numbers of in-memory evaluate to 1e-12,
intervals included; personalization's interval refused."""
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import import_extra

pyspark = import_extra("pyspark")  # skipped without the spark extra

import recmetrics as rm  # noqa: E402
from recmetrics import _partitions  # noqa: E402

BEYOND = list(rm.BEYOND_METRICS)
COMPARED = ["metric", "k", "n_users", "n_skipped", "n_without_predictions", "conventions", "note"]


@pytest.fixture(scope="module")
def spark(spark_session):
    """The test run's one local session (conftest.py), with partitions of 40 rows here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_partitions, "PARTITION_ROWS", 40)    # several groups of users
        yield spark_session


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        return f(*args, **kwargs)


def world(seed=5, text=False):
    rng = np.random.default_rng(seed)
    name = (lambda p, i: f"{p}{i}") if text else (lambda p, i: int(i))
    rows = [(name("u", u), name("i", i)) for u in range(70)
            for i in rng.choice(30, size=rng.integers(1, 8), replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item"]).assign(
        score=np.round(rng.random(len(rows)), 1))
    truth = pred[["user", "item"]].assign(label=rng.choice([0, 0, 1, 2], len(pred)))
    history = pd.DataFrame({"user": [name("u", u) for u in rng.integers(0, 90, 400)],
                            "item": [name("i", i) for i in rng.zipf(1.5, 400) % 33]})
    return pred, truth, history


def assert_same(mine, memory, columns=("value",)):
    mine, memory = mine.reset_index(drop=True), memory.reset_index(drop=True)
    assert mine[COMPARED].astype(str).values.tolist() == memory[COMPARED].astype(str).values.tolist()
    for column in columns:
        np.testing.assert_allclose(mine[column].to_numpy(float), memory[column].to_numpy(float),
                                   rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=column)


@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("ties", ["average", "optimistic"])
def test_spark_equals_in_memory(spark, text, ties):
    pred, truth, history = world(text=text)
    options = dict(k=[2, 5], metrics=["ndcg"] + BEYOND, history=history, ties=ties)
    memory = quiet(rm.evaluate, pred, truth, **options)
    mine = quiet(rm.evaluate, spark.createDataFrame(pred), spark.createDataFrame(truth), **options)
    assert_same(mine, memory)


def test_spark_intervals_and_labels_in_pred(spark):
    pred, truth, history = world(seed=8)
    labelled = pred.merge(truth, on=["user", "item"])
    metrics = [m for m in BEYOND if m != "personalization"]
    options = dict(k=3, metrics=metrics, history=history, ci=0.9, n_resamples=200, seed=3)
    memory = quiet(rm.evaluate, labelled, **options)
    mine = quiet(rm.evaluate, spark.createDataFrame(labelled), **options)
    assert_same(mine, memory, ("value", "ci_low", "ci_high"))
    with pytest.raises(ValueError, match="personalization has no interval on Spark"):
        quiet(rm.evaluate, spark.createDataFrame(labelled), k=3, metrics=["personalization"],
              history=history, ci=0.9)
