"""Tables from other libraries: any object that exports the Arrow C stream (a Polars DataFrame, a
DuckDB relation, a pyarrow Table or RecordBatchReader) is taken wherever a pandas DataFrame is,
and gives pandas' numbers to the last bit."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import recmetrics as rm
from recmetrics import _frames

polars = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

DATA = rm.DATA_DIR


def _reader(frame: pd.DataFrame):
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=97))


#: Each library's table made from a pandas frame, as a user of that library holds it.
KINDS = {
    "pyarrow Table": lambda f: pa.Table.from_pandas(f, preserve_index=False),
    "pyarrow RecordBatchReader": _reader,
    "Polars": lambda f: polars.from_pandas(f),
    "DuckDB": lambda f: duckdb.from_arrow(pa.Table.from_pandas(f, preserve_index=False)),
}


@pytest.fixture(scope="module")
def sample():
    return (pd.read_csv(DATA / "sample_model_a.csv"), pd.read_csv(DATA / "sample_model_b.csv"),
            pd.read_csv(DATA / "sample_truth.csv"), pd.read_csv(DATA / "sample_history.csv"))


def _ties_and_int_ids(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3000
    return pd.DataFrame({"user": rng.integers(0, 200, n), "item": rng.integers(0, 300, n),
                         "score": rng.integers(0, 5, n) / 4, "label": rng.integers(0, 3, n)}
                        ).drop_duplicates(["user", "item"]).reset_index(drop=True)


@pytest.mark.parametrize("kind", KINDS)
def test_evaluate_equals_pandas(kind, sample):
    pred, _, truth, history = sample
    to = KINDS[kind]
    metrics = list(rm.evaluation.DEFAULT_METRICS) + ["diversity", "novelty", "serendipity"]
    want = rm.evaluate(pred, truth, k=[5, 10], metrics=metrics, history=history, ci=0.9,
                       n_resamples=100, seed=3)
    got = rm.evaluate(to(pred), to(truth), k=[5, 10], metrics=metrics, history=to(history),
                      ci=0.9, n_resamples=100, seed=3)
    pd.testing.assert_frame_equal(want, got, check_exact=True)


@pytest.mark.parametrize("kind", KINDS)
def test_integer_ids_ties_and_grades_equal_pandas(kind):
    frame = _ties_and_int_ids()
    to = KINDS[kind]
    options = dict(k=[1, 5], metrics=["auc", "gauc", "ndcg", "map", "err", "rbp"],
                   ties="optimistic")
    pd.testing.assert_frame_equal(rm.evaluate(frame, **options), rm.evaluate(to(frame), **options),
                                  check_exact=True)
    per_user = rm.evaluate_per_user(frame, k=[3], metrics=["ndcg", "mrr"])
    pd.testing.assert_frame_equal(per_user, rm.evaluate_per_user(to(frame), k=[3],
                                                                 metrics=["ndcg", "mrr"]),
                                  check_exact=True)


@pytest.mark.parametrize("kind", KINDS)
def test_compare_equals_pandas(kind, sample):
    pred_a, pred_b, truth, _ = sample
    to = KINDS[kind]
    options = dict(k=[10], n_resamples=200, seed=1)
    want = rm.compare(pred_a, pred_b, truth, **options)
    pd.testing.assert_frame_equal(want, rm.compare(to(pred_a), to(pred_b), to(truth), **options),
                                  check_exact=True)
    many = rm.compare({"a": pred_a, "b": pred_b}, truth=truth, **options)
    pd.testing.assert_frame_equal(many, rm.compare({"a": to(pred_a), "b": to(pred_b)},
                                                   truth=to(truth), **options), check_exact=True)


def test_slices_with_a_users_table_equal_pandas(sample):
    pred_a, pred_b, truth, _ = sample
    users = pd.DataFrame({"user": pred_a.user.unique()})
    users["group"] = np.where(np.arange(len(users)) % 3 == 0, "new", "old")
    want = rm.evaluate(pred_a, truth, k=[10], by="group", users=users)
    got = rm.evaluate(polars.from_pandas(pred_a), truth, k=[10], by="group",
                      users=polars.from_pandas(users))
    pd.testing.assert_frame_equal(want, got, check_exact=True)
    want = rm.compare(pred_a, pred_b, truth, k=[10], by="group", users=users, n_resamples=100)
    got = rm.compare(pred_a, pred_b, duckdb.from_arrow(pa.Table.from_pandas(truth)), k=[10],
                     by="group", users=pa.Table.from_pandas(users), n_resamples=100)
    pd.testing.assert_frame_equal(want, got, check_exact=True)


def test_beyond_accuracy_equals_pandas(sample):
    pred, _, truth, history = sample
    want = rm.beyond_accuracy(pred, k=10, history=history, truth=truth)
    got = rm.beyond_accuracy(polars.from_pandas(pred), k=10, history=polars.from_pandas(history),
                             truth=pa.Table.from_pandas(truth))
    pd.testing.assert_frame_equal(want, got, check_exact=True)
    want = rm.most_popular([1, 2], history, k=3)
    pd.testing.assert_frame_equal(want, rm.most_popular([1, 2], polars.from_pandas(history), k=3))


def test_duckdb_decimals_and_polars_string_views_are_read_as_numbers_and_ids():
    """DuckDB gives a literal 0.5 as DECIMAL(2,1) and Polars exports strings as string views:
    both are read (as float64 scores and hashed ids), not refused or turned into objects."""
    relation = duckdb.sql("select * from (values ('u1', 'a', 0.9, 1), ('u1', 'b', 0.5, 0), "
                          "('u2', 'a', 0.3, 0), ('u2', 'c', 0.8, 1)) t(user, item, score, label)")
    assert pa.types.is_decimal(pa.table(relation).schema.field("score").type)
    frame = pd.DataFrame({"user": ["u1", "u1", "u2", "u2"], "item": ["a", "b", "a", "c"],
                          "score": [0.9, 0.5, 0.3, 0.8], "label": [1, 0, 0, 1]})
    pd.testing.assert_frame_equal(rm.evaluate(frame, k=1), rm.evaluate(relation, k=1),
                                  check_exact=True)
    converted = _frames.as_pandas(polars.from_pandas(frame), ("user", "item"))
    assert converted.score.dtype == np.float64
    assert isinstance(converted.user.dtype, pd.CategoricalDtype)


def test_what_is_not_a_table_is_still_refused():
    with pytest.raises(ValueError, match=r"pred must be a pandas DataFrame or a table that "
                                         r"exports the Arrow C stream"):
        rm.evaluate([[1, "a", 0.5, 1]])


def test_detection_imports_no_library():
    """Asking what kind a frame is reads its type's module; pandas is not an Arrow stream here
    although it exports one."""
    assert _frames.is_arrow_stream(polars.DataFrame({"a": [1]}))
    assert not _frames.is_arrow_stream(pd.DataFrame({"a": [1]}))
    assert _frames.engine_of(pd.DataFrame(), {"m": polars.DataFrame()}) is None
