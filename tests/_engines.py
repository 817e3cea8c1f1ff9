"""What the Dask and Spark engine tests share: small partitions, the outcome of a call, the
table comparison, the id kinds of generated logs and a log spread over every partition."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, strategies as st

import recmetrics as rm
from recmetrics import _partitions


@pytest.fixture(autouse=True, scope="module")
def many_buckets():
    """Partitions (Spark's groups) of 40 rows and AUC score buckets of 2, so that tiny logs are
    cut as big ones."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_partitions, "BUCKET_ROWS", 2)
        patch.setattr(_partitions, "PARTITION_ROWS", 40)
        yield


def outcome(call):
    """(result, RecmetricsWarning messages cut before their examples) or the ValueError raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except ValueError as error:
            return error, []
    said = sorted(str(w.message).split(" (e.g.")[0] for w in caught
                  if issubclass(w.category, rm.RecmetricsWarning))
    return result, said


def assert_same_table(expected: pd.DataFrame, got: pd.DataFrame):
    assert list(got.columns) == list(expected.columns)
    assert got.metric.tolist() == expected.metric.tolist()
    assert got.k.tolist() == expected.k.tolist()
    for column in ("n_users", "n_skipped", "n_without_predictions", "conventions", "note"):
        assert got[column].tolist() == expected[column].tolist(), column
    for column in ("value", "ci_low", "ci_high"):
        if column in expected:
            np.testing.assert_allclose(got[column], expected[column], rtol=0, atol=1e-12,
                                       err_msg=column)
    assert got.attrs["conventions"] == expected.attrs["conventions"]


def assert_same_outcome(expected, said, got, got_said, *, engine: str,
                        assert_same=assert_same_table) -> bool:
    """The in-memory outcome (``expected`` and the warnings ``said``) and an engine's: both
    refused, or ``assert_same`` tables and the same warnings. True where both gave a table."""
    if isinstance(expected, ValueError):
        assert isinstance(got, ValueError), f"in memory refused ({expected}), {engine} did not"
        return False
    assert not isinstance(got, ValueError), got
    assert_same(expected, got)
    assert got_said == said
    return True


def draw_rows(draw, *, max_users: int) -> tuple[list, list]:
    """A generated log's scored rows (user, item, score, grade) and the judged items pred did
    not score (user, item, grade): ties, one-class users, users without rows in pred."""
    n_users = draw(st.integers(1, max_users))
    rows, unscored = [], []
    for u in range(n_users):
        n_items = draw(st.integers(0, 5))
        scores = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.75, 1.0]),
                               min_size=n_items, max_size=n_items))
        grades = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=n_items, max_size=n_items))
        rows += [(u, i, s, g) for i, (s, g) in enumerate(zip(scores, grades))]
        unscored += [(u, 50 + j, draw(st.sampled_from([0, 1, 2])))
                     for j in range(draw(st.sampled_from([0, 0, 1, 2])))]
    assume(rows)
    return rows, unscored


def draw_judged(draw, rows: list, unscored: list) -> tuple[list, list, list]:
    """truth's users, items and grades: some of ``rows`` (every relevant one) and the
    ``unscored``; the first row where that leaves none."""
    judged = [(u, i, g) for u, i, _, g in rows if draw(st.booleans()) or g > 0] + unscored
    if not judged:
        judged = [(rows[0][0], rows[0][1], rows[0][3])]
    tu, ti, tg = (list(c) for c in zip(*judged))
    return tu, ti, tg


def kind_ids(kind: str, values, side: str):
    """Ids of ``kind`` (int, float, text, category) for the integers ``values`` of pred or
    truth (``side``), written differently on the two sides where the id policy makes them one."""
    if kind == "int":
        return np.asarray(values, dtype=np.int64) * 7
    if kind == "float":  # whole numbers as float in truth, int in pred: one id each
        return np.asarray(values, dtype=np.float64 if side == "truth" else np.int64) * 7
    if kind == "text":  # written with spaces in truth: the id policy strips them
        return np.array([(" u%d " if side == "truth" else "u%d") % v for v in values], dtype=object)
    return pd.Categorical(["u%d" % v for v in values])  # categorical


def spread_log(n_users=40, n_items=12, seed=0):
    """Each user's rows spread over every input partition (rows ordered by item, not by user)."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(n_users), n_items)
    items = np.tile(np.arange(n_items), n_users)
    pred = pd.DataFrame({"user": users, "item": items, "score": rng.integers(0, 6, users.size) / 5,
                         "label": (rng.random(users.size) < 0.25).astype(int)})
    return pred.sort_values(["item", "user"], kind="stable").reset_index(drop=True)
