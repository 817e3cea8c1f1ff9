"""Adapters from a recommender's output to evaluate's long table (recmetrics.adapters).

Each adapter is checked against the long table built by hand, entry by entry
(a literal reference), and by evaluating both: the tables must be equal. The
recipes of the user guide run on arrays shaped exactly as implicit, LightFM
and RecBole return them (and with implicit itself when it is importable).
"""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

import recmetrics as rm
from recmetrics import RecmetricsWarning

RANKING = ["precision", "recall", "hit_rate", "map", "mrr", "ndcg"]


def _by_hand(users, items, scores):
    """The long table, one loop iteration per entry: the literal reference."""
    rows = []
    for i, user in enumerate(users):
        for j, item in enumerate(items[i]):
            if item is None or (isinstance(item, float) and np.isnan(item)):
                continue
            rows.append((user, item, float(scores[i][j])))
    return pd.DataFrame(rows, columns=["user", "item", "score"])


def _truth(rng, n_users, n_items):
    rows = [(u, i, int(rng.integers(0, 3))) for u in range(n_users) for i in range(n_items)
            if rng.random() < 0.3]
    return pd.DataFrame(rows, columns=["user", "item", "label"])


def _same_evaluation(a, b, truth, metrics):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecmetricsWarning)  # both sides warn alike
        ta = rm.evaluate(a, truth, k=[1, 3], metrics=metrics)
        tb = rm.evaluate(b, truth, k=[1, 3], metrics=metrics)
    pd.testing.assert_frame_equal(ta, tb)


# --------------------------------------------------------------------------- from_topk


def test_from_topk_equals_the_table_by_hand_and_its_evaluation():
    rng = np.random.default_rng(1)
    n_users, n_items, n = 30, 12, 5
    ids = np.stack([rng.permutation(n_items)[:n] for _ in range(n_users)])
    scores = -np.sort(-rng.random((n_users, n)), axis=1)
    users = [f"u{u}" for u in range(n_users)]
    got = rm.from_topk(ids, scores, users=users)
    expected = _by_hand(users, ids.tolist(), scores.tolist())
    pd.testing.assert_frame_equal(got, expected)
    truth = _truth(rng, n_users, n_items).assign(user=lambda f: "u" + f.user.astype(str))
    _same_evaluation(got, expected, truth, RANKING)


def test_from_topk_without_scores_follows_the_list_order():
    got = rm.from_topk([["b", "a", "c"], ["a"]], users=["x", "y"])
    assert got.values.tolist() == [["x", "b", 3.0], ["x", "a", 2.0], ["x", "c", 1.0],
                                   ["y", "a", 3.0]]


def test_from_topk_drops_none_and_nan_padding():
    items = np.array([[3.0, np.nan, 1.0], [2.0, 0.0, np.nan]])
    got = rm.from_topk(items)
    assert got[["user", "item"]].values.tolist() == [[0, 3.0], [0, 1.0], [1, 2.0], [1, 0.0]]
    assert got.score.tolist() == [3.0, 1.0, 3.0, 2.0]   # positions 0 and 2 of row 0
    ragged = rm.from_topk([[5, None, 7], [], [8]], [[0.5, None, 0.1], [], [0.9]])
    assert ragged.values.tolist() == [[0, 5, 0.5], [0, 7, 0.1], [2, 8, 0.9]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=8, unique=True), min_size=1, max_size=8))
def test_from_topk_property_matches_the_loop(lists):
    scores = [[float(len(x) - j) / 7 for j in range(len(x))] for x in lists]
    got = rm.from_topk(lists, scores)
    expected = _by_hand(list(range(len(lists))), lists, scores)
    assert got.values.tolist() == expected.values.tolist()


# --------------------------------------------------------------------------- from_score_matrix


def _matrix_by_hand(matrix, users, items, excluded, k):
    rows = []
    for i, user in enumerate(users):
        cells = [(items[j], matrix[i][j]) for j in range(len(items))
                 if not np.isnan(matrix[i][j]) and (i, j) not in excluded]
        if k is not None and len(cells) >= k:
            kth = sorted((s for _, s in cells), reverse=True)[k - 1]
            cells = [c for c in cells if c[1] >= kth]
        rows += [(user, item, float(s)) for item, s in cells]
    return pd.DataFrame(rows, columns=["user", "item", "score"])


@pytest.mark.parametrize("k", [None, 1, 3, 20])
@pytest.mark.parametrize("form", ["bool", "sparse", "frame", "none"])
def test_from_score_matrix_equals_the_table_by_hand(form, k):
    rng = np.random.default_rng(2)
    n_users, n_items = 25, 9
    matrix = rng.integers(0, 4, (n_users, n_items)) / 4   # many ties, so k keeps tied rows
    train = rng.random((n_users, n_items)) < 0.25
    users = [f"u{u}" for u in range(n_users)]
    items = [100 + j for j in range(n_items)]
    excluded = set(zip(*np.nonzero(train))) if form != "none" else set()
    exclude = {"bool": train, "sparse": sparse.csr_matrix(train.astype(np.float32)),
               "frame": pd.DataFrame([(users[i], items[j]) for i, j in sorted(excluded)],
                                     columns=["user", "item"]),
               "none": None}[form]
    got = rm.from_score_matrix(matrix, users=users, items=items, exclude=exclude, k=k)
    expected = _matrix_by_hand(matrix.tolist(), users, items, excluded, k)
    pd.testing.assert_frame_equal(got, expected)
    truth = _truth(rng, n_users, n_items).assign(user=lambda f: "u" + f.user.astype(str),
                                                 item=lambda f: f.item + 100)
    _same_evaluation(got, expected, truth, ["auc", "gauc"] + RANKING)


def test_from_score_matrix_sparse_scores_are_the_stored_entries():
    dense = np.array([[0.0, 0.5, 0.0, 0.2], [0.9, 0.0, 0.0, 0.1]])
    stored = sparse.coo_matrix(dense)
    stored = sparse.coo_matrix((np.r_[stored.data, 0.0], (np.r_[stored.row, 1],
                                                          np.r_[stored.col, 2])), shape=(2, 4))
    got = rm.from_score_matrix(stored.tocsr(), k=2)   # the explicit 0 of (1, 2) is a score
    assert got.values.tolist() == [[0, 1, 0.5], [0, 3, 0.2], [1, 0, 0.9], [1, 3, 0.1]]
    got = rm.from_score_matrix(stored, exclude=sparse.csr_matrix(dense > 0.3))
    assert got.values.tolist() == [[0, 3, 0.2], [1, 2, 0.0], [1, 3, 0.1]]


def test_from_score_matrix_drops_nan_cells_and_keeps_ties_with_the_kth():
    matrix = np.array([[0.3, np.nan, 0.3, 0.3, 0.1]])
    got = rm.from_score_matrix(matrix, k=1)
    assert got.item.tolist() == [0, 2, 3]   # every row tied with the first


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_from_score_matrix_property_matches_the_loop(n_users, n_items, k, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 3, (n_users, n_items)).astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    train = rng.random(matrix.shape) < 0.3
    got = rm.from_score_matrix(sparse.csr_matrix(np.nan_to_num(matrix, nan=0) + 1), k=k,
                               exclude=train)
    expected = _matrix_by_hand((np.nan_to_num(matrix, nan=0) + 1).tolist(),
                               list(range(n_users)), list(range(n_items)),
                               set(zip(*np.nonzero(train))), k)
    assert got.values.tolist() == expected.values.tolist()


# --------------------------------------------------------------------------- recipes


def test_recipe_implicit_ids_and_scores():
    """implicit: ``ids, scores = model.recommend(userids, user_items[userids], N=...)``,
    two (users, N) arrays, int32 item indices and float scores; userids index the matrix."""
    userids = np.array([0, 2, 5])
    ids = np.array([[4, 1, 0], [3, 0, 2], [1, 2, 4]], dtype=np.int32)
    scores = np.array([[0.9, 0.5, 0.4], [0.8, 0.3, 0.2], [0.7, 0.7, 0.1]])
    item_names = np.array(["i0", "i1", "i2", "i3", "i4"])
    pred = rm.from_topk(item_names[ids], scores, users=userids)
    assert pred.values.tolist() == _by_hand(userids, item_names[ids].tolist(),
                                            scores.tolist()).values.tolist()
    truth = pd.DataFrame({"user": [0, 2, 5, 5], "item": ["i1", "i3", "i4", "i0"]})
    table = rm.evaluate(pred, truth, k=3, metrics=["recall", "ndcg"])
    # by hand: recall@3 = mean(1, 1, 1/2)
    assert table.value.iloc[0] == pytest.approx((1 + 1 + 0.5) / 3, abs=1e-15)


def test_recipe_implicit_itself():
    implicit = pytest.importorskip("implicit.nearest_neighbours")
    train = sparse.csr_matrix(np.array([[1, 0, 0, 1, 0, 0], [0, 1, 1, 0, 0, 0],
                                        [1, 1, 0, 0, 1, 0], [0, 0, 1, 1, 0, 1]],
                                       dtype=np.float32))
    model = implicit.CosineRecommender(K=6)
    model.fit(train, show_progress=False)
    userids = np.arange(4)
    ids, scores = model.recommend(userids, train[userids], N=2)
    assert ids.shape == scores.shape == (4, 2)
    pred = rm.from_topk(ids, scores, users=userids)
    assert pred.values.tolist() == _by_hand(userids, ids.tolist(), scores.tolist()).values.tolist()


def test_recipe_lightfm_score_matrix_without_training_items():
    """LightFM: ``model.predict(user_ids, item_ids)`` scores (user, item) pairs as one 1-D
    float32 array; predicting every pair and reshaping gives the (users, items) matrix, and
    the training interactions (a scipy.sparse coo_matrix) are left out."""
    n_users, n_items = 4, 5
    rng = np.random.default_rng(3)
    # model.predict(np.repeat(users, n_items), np.tile(items, n_users)): one float32 per pair
    predicted = rng.random(n_users * n_items).astype(np.float32)
    interactions = sparse.coo_matrix(rng.random((n_users, n_items)) < 0.3, dtype=np.int32)
    pred = rm.from_score_matrix(predicted.reshape(n_users, n_items), exclude=interactions, k=3)
    dense = predicted.reshape(n_users, n_items).astype(np.float64)
    excluded = set(zip(interactions.row.tolist(), interactions.col.tolist()))
    expected = _matrix_by_hand(dense.tolist(), list(range(n_users)), list(range(n_items)),
                               excluded, 3)
    pd.testing.assert_frame_equal(pred, expected)


def test_recipe_recbole_topk():
    """RecBole: ``topk_score, topk_iid_list = full_sort_topk(uid_series, model, test_data,
    k=10)``, two (users, k) tensors; internal ids map back with dataset.id2token."""
    topk_score = np.array([[2.5, 1.0], [3.0, -0.5]], dtype=np.float32)
    topk_iid_list = np.array([[3, 1], [2, 3]])                  # internal item ids, 0 = [PAD]
    id2token = np.array(["[PAD]", "m10", "m20", "m30"])           # dataset.field2id_token["item_id"]
    uid_series = np.array([1, 2])
    user_tokens = np.array(["[PAD]", "alice", "bob"])
    pred = rm.from_topk(id2token[topk_iid_list], topk_score, users=user_tokens[uid_series])
    assert pred.values.tolist() == [["alice", "m30", 2.5], ["alice", "m10", 1.0],
                                    ["bob", "m20", 3.0], ["bob", "m30", -0.5]]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, message", [
    (lambda: rm.from_topk(np.arange(3)), "items must be 2-D"),
    (lambda: rm.from_topk("abc"), "items must be a 2-D array"),
    (lambda: rm.from_topk([[1, 2]], [[0.5]]), "scores must have the shape of items"),
    (lambda: rm.from_topk([[1, 2]], [[0.5, np.nan]]), "scores has a NaN"),
    (lambda: rm.from_topk([[1, 1]]), "items lists 1 more than once"),
    (lambda: rm.from_topk([[1], [2]], users=["a"]), "users must hold one id per row"),
    (lambda: rm.from_topk([[1], [2]], users=["a", "a"]), "users contains the id 'a'"),
    (lambda: rm.from_score_matrix(np.ones(3)), "scores must be a 2-D array"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), items=[1]), "items must hold one id per"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), exclude=np.ones((2, 3), bool)),
     "exclude has shape"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), exclude=np.ones((2, 2))),
     "exclude as an array must be boolean"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), exclude=pd.DataFrame({"u": [1]})),
     "exclude as a frame needs columns"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), exclude=pd.DataFrame(
        {"user": ["x"], "item": ["y"]})), "exclude: none of its 1"),
    (lambda: rm.from_score_matrix(np.ones((2, 2)), k=0), "k"),
    (lambda: rm.from_score_matrix(sparse.coo_matrix((np.ones(2), ([0, 0], [1, 1])),
                                                    shape=(2, 2))), "stores a cell twice"),
])
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
