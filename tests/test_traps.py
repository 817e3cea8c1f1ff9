"""The quiet traps of issue 37, each named by a test.

* top-k exports: relevant items pred never scored are misses for recall, but AUC and GAUC
  leave them out; they warn and note it, and ``unscored="below"`` ranks them below every
  scored row (checked against the same rows appended by hand below the lowest score, and
  scikit-learn);
* labels that look like a rating scale (1-5) warn and name ``min_grade``;
* ``by="activity"`` counts history rows when ``history=`` is given, and says so;
* ``beyond_accuracy`` names every metric it leaves out and why.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import recmetrics as rm
from recmetrics import RecmetricsWarning


def _top_k_export(seed=0, n_users=40, n_items=30, k=5):
    """Full candidate scores, their top-k export, and a truth of relevant and judged rows."""
    rng = np.random.default_rng(seed)
    full = pd.DataFrame([(u, i, float(rng.integers(0, 12))) for u in range(n_users)
                         for i in range(n_items)], columns=["user", "item", "score"])
    truth = full[rng.random(len(full)) < 0.15][["user", "item"]].assign(
        label=lambda f: rng.integers(0, 3, len(f)))
    # a user only truth knows, with relevant items
    truth = pd.concat([truth, pd.DataFrame({"user": [999, 999], "item": [1, 2],
                                            "label": [1, 0]})], ignore_index=True)
    top = full.sort_values(["user", "score"], ascending=[True, False], kind="stable") \
        .groupby("user").head(k).reset_index(drop=True)
    return full, top, truth


def _placed_below_by_hand(top, truth):
    """The relevant truth rows top never scored, appended with one score below all of top's."""
    merged = truth.merge(top[["user", "item"]], how="left", indicator=True)
    missing = merged[(merged._merge == "left_only") & (merged.label > 0)][["user", "item"]]
    return pd.concat([top, missing.assign(score=top.score.min() - 1.0)], ignore_index=True), \
        len(missing)


def test_top_k_export_warns_and_notes_that_auc_leaves_out_unscored_relevant_items():
    full, top, truth = _top_k_export()
    _, n_missing = _placed_below_by_hand(top, truth)
    n_relevant = int((truth.label > 0).sum())
    with pytest.warns(RecmetricsWarning, match=rf"{n_missing} of {n_relevant} relevant truth "
                                               r"rows were never scored by pred") as caught:
        table = rm.evaluate(top, truth, k=5)
    assert any("unscored='below'" in str(w.message) for w in caught)
    note = table.set_index("metric").note
    assert n_missing > 0 and f"{n_missing} of {n_relevant}" in note["auc"]
    assert note["gauc"] == note["auc"] and "recall, MAP and NDCG count them" in note["auc"]
    assert (table[~table.metric.isin(["auc", "gauc"])].note == "").all()
    assert table.attrs["notes"] == [note["auc"]]
    # the default number is the AUC of the scored rows only (unchanged), as scikit-learn's
    rows = top.merge(truth, how="left").fillna({"label": 0})
    assert table.value[0] == pytest.approx(roc_auc_score(rows.label > 0, rows.score), abs=1e-15)


def test_full_candidate_file_has_no_unscored_note():
    full, _, truth = _top_k_export()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = rm.evaluate(full, truth[truth.user != 999], k=5)
    assert (table.note == "").all() and table.attrs["notes"] == []


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic"])
@pytest.mark.parametrize("gauc_weight", ["impressions", "clicks", "uniform"])
def test_unscored_below_equals_the_rows_placed_below_by_hand(ties, gauc_weight):
    _, top, truth = _top_k_export(seed=1)
    by_hand, _ = _placed_below_by_hand(top, truth)
    options = dict(k=5, metrics=["auc", "gauc"], ties=ties, gauc_weight=gauc_weight)
    below = rm.evaluate(top, truth, unscored="below", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecmetricsWarning)   # by_hand still misses user 999's
        reference = rm.evaluate(by_hand, truth, **options)
    assert below.value.tolist() == reference.value.tolist()
    assert below.n_users[1] == reference.n_users[1]    # GAUC's users with both classes
    assert below.conventions[0].startswith("unscored=below")
    assert "ranked below every scored row" in below.attrs["notes"][0]
    if ties == "average":   # and the oracle
        rows = by_hand.merge(truth, how="left").fillna({"label": 0})
        assert below.value[0] == pytest.approx(roc_auc_score(rows.label > 0, rows.score),
                                               abs=1e-15)


@pytest.mark.parametrize("bootstrap", ["poisson", "multinomial"])
def test_unscored_below_intervals_equal_those_of_the_rows_placed_by_hand(bootstrap):
    _, top, truth = _top_k_export(seed=2)
    by_hand, _ = _placed_below_by_hand(top, truth)
    options = dict(k=5, metrics=["auc", "gauc", "recall"], ci=0.9, n_resamples=200,
                   bootstrap=bootstrap)
    below = rm.evaluate(top, truth, unscored="below", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecmetricsWarning)
        reference = rm.evaluate(by_hand, truth, **options)
    for column in ("value", "ci_low", "ci_high"):
        np.testing.assert_allclose(below[column][:2], reference[column][:2], rtol=0, atol=1e-15)
    # recall does not move: it counted the unscored items all along
    with pytest.warns(RecmetricsWarning):
        ignored = rm.evaluate(top, truth, **options)
    assert below.value[2] == ignored.value[2]


def test_unscored_default_numbers_unchanged_and_below_only_moves_auc_and_gauc():
    _, top, truth = _top_k_export(seed=3)
    with pytest.warns(RecmetricsWarning):
        ignored = rm.evaluate(top, truth, k=[1, 5])
    below = rm.evaluate(top, truth, k=[1, 5], unscored="below")
    ranking = ~ignored.metric.isin(["auc", "gauc"])
    assert below.value[ranking].tolist() == ignored.value[ranking].tolist()
    assert below.conventions[ranking].tolist() == ignored.conventions[ranking].tolist()
    assert (below.value[~ranking] < ignored.value[~ranking]).all()
    per_user = rm.evaluate_per_user(top, truth, k=5, metrics=["gauc"], unscored="below")
    assert per_user.auc.notna().sum() == below.n_users[1]


def test_unscored_below_is_refused_where_it_is_not_computed():
    _, top, truth = _top_k_export()
    with pytest.raises(ValueError, match="unscored='below' with by= is not supported"):
        rm.evaluate(top, truth, unscored="below", by="activity")
    with pytest.raises(ValueError, match=r"compare\(unscored='below'\) is not supported"):
        rm.compare(top, top, truth, unscored="below")
    with pytest.raises(ValueError, match="unscored='nowhere' is not a known option"):
        rm.evaluate(top, truth, unscored="nowhere")


def test_unscored_below_is_refused_on_dask():
    dd = pytest.importorskip("dask.dataframe")
    _, top, truth = _top_k_export()
    with pytest.raises(ValueError, match="unscored='below' is not supported on Dask"):
        rm.evaluate(dd.from_pandas(top, npartitions=2), truth, unscored="below")


# --------------------------------------------------------------------------- rating scale


def test_rating_scale_labels_warn_that_every_positive_rating_is_relevant_and_name_min_grade():
    rng = np.random.default_rng(4)
    pred = pd.DataFrame({"user": np.repeat(np.arange(20), 5), "item": np.tile(np.arange(5), 20),
                         "score": rng.random(100)})
    ratings = pred[["user", "item"]].sample(40, random_state=0).assign(
        label=rng.integers(1, 6, 40))
    with pytest.warns(RecmetricsWarning, match=r"truth column 'label' looks like a rating scale "
                                               r"\(values 1, 2, 3, 4, 5; no 0\).*min_grade="):
        rm.evaluate(pred, ratings, k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rm.evaluate(pred, ratings, k=3, min_grade=4)                  # the scale is said
        rm.evaluate(pred, ratings.assign(label=ratings.label - 1), k=3)   # graded 0-4: judged
        rm.evaluate(pred, ratings.assign(label=1), k=3)                # positives only
    with pytest.warns(RecmetricsWarning, match="pred column 'label' looks like a rating scale"):
        rm.evaluate(pred.assign(label=rng.integers(1, 6, 100)), k=3, metrics=["ndcg"])


# --------------------------------------------------------------------------- activity


def test_activity_counts_history_rows_when_history_is_given():
    """With "every unseen item" as candidates, the users most active in history have the fewest
    scored rows: bucketing by scored rows would put them in the least active slice."""
    rng = np.random.default_rng(5)
    n_users, n_items = 60, 40
    seen = {u: set(rng.choice(n_items, size=int(rng.integers(1, 35)), replace=False).tolist())
            for u in range(n_users)}
    history = pd.DataFrame([(u, i) for u in seen for i in sorted(seen[u])],
                           columns=["user", "item"])
    pred = pd.DataFrame([(u, i, float(rng.random())) for u in seen for i in range(n_items)
                         if i not in seen[u]], columns=["user", "item", "score"])
    truth = pred.sample(200, random_state=1)[["user", "item"]].assign(label=1)
    table = rm.evaluate(pred, truth, k=5, metrics=["recall"], by="activity", history=history)
    labels = [v for v in table.activity.unique() if v != "(all)"]
    assert labels and all(v.endswith(" history rows") for v in labels)
    assert any("rows in history" in note for note in table.attrs["notes"])
    # the buckets are those of each user's history count (quantile edges, as by scored rows)
    counts = history.groupby("user").size()
    inner = np.ceil(np.quantile(counts, np.arange(1, 4) / 4)).astype(int)
    edges = np.unique(np.r_[counts.min(), inner, counts.max() + 1])
    expected = [f"[{lo}, {hi}) history rows" for lo, hi in zip(edges[:-1], edges[1:])]
    assert labels == expected
    sizes = table[table.activity != "(all)"].drop_duplicates("activity").slice_size.tolist()
    by_hand = np.bincount(np.searchsorted(edges, counts, side="right") - 1)
    assert sizes == by_hand[by_hand > 0].tolist()
    # without history: scored rows, labelled as before
    plain = rm.evaluate(pred, truth, k=5, metrics=["recall"], by="activity")
    assert not any(v.endswith("rows") for v in plain.activity.unique())


# --------------------------------------------------------------------------- beyond accuracy


def test_beyond_accuracy_notes_every_metric_it_leaves_out_and_why():
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"],
                         "score": [0.9, 0.5, 0.8, 0.7]})
    history = pd.DataFrame({"user": [1, 2, 3], "item": ["a", "b", "c"]})
    table = rm.beyond_accuracy(pred, k=2, history=history)
    assert "serendipity" not in table.metric.tolist()
    assert table.attrs["notes"] == ["serendipity left out: it needs history= (each user's own "
                                    "items) and truth= (what is relevant)"]
    bare = rm.beyond_accuracy(pred, k=1)
    left = {note.split(" ")[0] for note in bare.attrs["notes"]}
    assert left == {"novelty", "diversity", "serendipity", "arp", "aplt"}
    assert left.isdisjoint(bare.metric) and left | set(bare.metric) == set(rm.BEYOND_METRICS)
    named = rm.beyond_accuracy(pred, k=1, metrics=["gini"])
    assert named.attrs["notes"] == []
