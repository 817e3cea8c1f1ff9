"""evaluate(by="popularity"): head / torso / tail items by history popularity, each class's
row counting only its relevant items, against a literal reference, pytrec_eval, and evaluate
on the relabelled truth."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

import recmetrics as rm
from recmetrics._slices import POPULARITY_CLASSES, POPULARITY_METRICS, popularity_classes

COLUMNS = ["value", "n_users", "n_skipped", "n_without_predictions"]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def literal_classes(history_items, every_item) -> dict:
    """Item -> "head" / "torso" / "tail", written from the definition: items by history rows,
    most first; the head is the fewest reaching 20% of the rows, the not-tail the fewest
    reaching 80%, each with every item tied with its last item; unseen items are tail."""
    counts = pd.Series(history_items).value_counts()
    total = counts.sum()

    def fewest_reaching(share):
        taken, running = [], 0
        for item, count in counts.items():
            if running >= share * total:
                if count == counts[taken[-1]]:      # tied with the last one taken
                    taken.append(item)
                    continue
                break
            taken.append(item)
            running += count
        return set(taken)

    head, not_tail = fewest_reaching(0.2), fewest_reaching(0.8)
    return {i: "head" if i in head else "torso" if i in not_tail else "tail" for i in every_item}


def literal_metrics(pred, truth, klass, k):
    """Per class, the mean over users with a relevant item of that class of P@k, R@k, HR@k,
    AP@k (trec's map_cut), RR and NDCG@k (linear gain), from the definitions: binary labels,
    distinct scores; only the class's relevant items count as relevant, the list is whole."""
    out = {}
    for c in POPULARITY_CLASSES:
        values = {m: [] for m in POPULARITY_METRICS}
        for u, judged in truth.groupby("user"):
            relevant = {i for i, lab in zip(judged.item, judged.label) if lab > 0 and klass[i] == c}
            if not relevant:
                continue
            ranked = pred[pred.user == u].sort_values("score", ascending=False).item.tolist()
            hits = [i in relevant for i in ranked]
            top = hits[:k]
            values["precision"].append(sum(top) / k)
            values["recall"].append(sum(top) / len(relevant))
            values["hit_rate"].append(float(any(top)))
            values["map"].append(sum(sum(top[:r + 1]) / (r + 1) for r, h in enumerate(top) if h)
                                 / len(relevant))
            values["mrr"].append(1 / (hits.index(True) + 1) if any(hits) else 0.0)
            dcg = sum(1 / math.log2(r + 2) for r, h in enumerate(top) if h)
            ideal = sum(1 / math.log2(r + 2) for r in range(min(k, len(relevant))))
            values["ndcg"].append(dcg / ideal)
        out[c] = {m: (float(np.mean(v)) if v else float("nan"), len(v)) for m, v in values.items()}
    return out


def value(table, klass, metric):
    row = table[(table.popularity == klass) & (table.metric == metric)]
    return float(row.value.iloc[0]), int(row.n_users.iloc[0])


def random_log(seed, n_users=60, n_items=40, distinct=True):
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, size=rng.integers(3, 15), replace=False)
        scores = rng.permutation(items.size) + rng.random() if distinct \
            else rng.choice([0.1, 0.5, 0.9], size=items.size)
        rows += [(u, int(i), float(s)) for i, s in zip(items, scores)]
    pred = pd.DataFrame(rows, columns=["user", "item", "score"])
    truth = pred[["user", "item"]].assign(label=(rng.random(len(pred)) < 0.3).astype(int))
    unscored = pd.DataFrame({"user": rng.integers(0, n_users, 30), "item": n_items + rng.integers(0, 5, 30),
                             "label": 1}).drop_duplicates(["user", "item"])
    truth = pd.concat([truth, unscored], ignore_index=True)        # relevant items never scored
    weights = 1.0 / np.arange(1, n_items + 1)
    history = pd.DataFrame({"user": rng.integers(0, 100, 800),
                            "item": rng.choice(n_items, size=800, p=weights / weights.sum())})
    return pred, truth, history


def test_classes_of_a_hand_example():
    # 100 rows: a holds 50 (>= 20%: the head); a, b, c reach 80, d is tied with c; e, f and the
    # unseen g are the tail
    history = ["a"] * 50 + ["b"] * 20 + ["c"] * 10 + ["d"] * 10 + ["e"] * 5 + ["f"] * 5
    counts = pd.Series(history).value_counts().reindex(list("abcdefg"), fill_value=0)
    got = dict(zip(counts.index, np.array(POPULARITY_CLASSES)[popularity_classes(
        counts.to_numpy(dtype=float))]))
    assert got == {"a": "head", "b": "torso", "c": "torso", "d": "torso", "e": "tail",
                   "f": "tail", "g": "tail"}
    assert got == literal_classes(history, list("abcdefg"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=25))
def test_classes_equal_the_literal_definition(counts):
    history = [i for i, c in enumerate(counts) for _ in range(c)]
    got = np.array(POPULARITY_CLASSES)[popularity_classes(np.array(counts, dtype=float))]
    assert dict(enumerate(got)) == literal_classes(history, range(len(counts)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_class_equals_the_literal_reference_and_pytrec_eval(seed):
    pred, truth, history = random_log(seed)
    k = 5
    table = quiet(rm.evaluate, pred, truth, k=k, by="popularity", history=history,
                  gain="linear", min_slice_size=1)
    klass = literal_classes(history.item, set(pred.item) | set(truth.item))
    expected = literal_metrics(pred, truth, klass, k)
    run = {str(u): {str(i): float(s) for i, s in zip(g.item, g.score)}
           for u, g in pred.groupby("user")}
    for c in POPULARITY_CLASSES:
        for metric in POPULARITY_METRICS:
            got, n = value(table, c, metric)
            want, n_want = expected[c][metric]
            assert n == n_want, (c, metric)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (c, metric)
        # pytrec_eval on qrels that keep only the class's relevant items
        qrels = {str(u): {str(i): int(lab > 0 and klass[i] == c) for i, lab in zip(g.item, g.label)}
                 for u, g in truth.groupby("user")}
        judged = {u: q for u, q in qrels.items() if any(q.values())}
        result = pytrec_eval.RelevanceEvaluator(
            judged, {f"P_{k}", f"recall_{k}", f"map_cut_{k}", "recip_rank", f"ndcg_cut_{k}"}
        ).evaluate({u: run.get(u, {}) for u in judged})
        mean = lambda m: np.mean([r[m] for r in result.values()])  # noqa: B023, E731
        assert value(table, c, "precision")[0] == pytest.approx(mean(f"P_{k}"))
        assert value(table, c, "recall")[0] == pytest.approx(mean(f"recall_{k}"))
        assert value(table, c, "map")[0] == pytest.approx(mean(f"map_cut_{k}"))
        assert value(table, c, "mrr")[0] == pytest.approx(mean("recip_rank"))
        assert value(table, c, "ndcg")[0] == pytest.approx(mean(f"ndcg_cut_{k}"))
    everyone = quiet(rm.evaluate, pred, truth, k=k, metrics=list(POPULARITY_METRICS), gain="linear")
    overall = table[table.popularity == "(all)"].drop(
        columns=["popularity", "slice_size", "small_slice"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(overall[everyone.columns], everyone, check_dtype=False)


@st.composite
def tied_logs(draw):
    """Tied scores, graded labels, users without any relevant item, labels in pred or truth."""
    n_users = draw(st.integers(1, 8))
    rows = []
    for u in range(n_users):
        for i in draw(st.sets(st.integers(0, 7), min_size=1, max_size=6)):
            rows.append((u, i, draw(st.sampled_from([0.2, 0.5, 0.5, 0.8])),
                         draw(st.sampled_from([0, 0, 1, 2]))))
    pred = pd.DataFrame(rows, columns=["user", "item", "score", "label"])
    history = pd.DataFrame({"user": 0, "item": draw(st.lists(st.integers(0, 9), min_size=1,
                                                              max_size=30))})
    return pred, history, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(tied_logs(), st.sampled_from(["average", "optimistic", "pessimistic"]))
def test_each_class_is_evaluate_on_the_truth_without_the_other_classes_relevant_items(case, ties):
    pred, history, separate = case
    truth = pred[["user", "item", "label"]] if separate else None
    scored = pred.drop(columns="label") if separate else pred
    table = quiet(rm.evaluate, scored, truth, k=[1, 3], by="popularity", history=history,
                  ties=ties, min_slice_size=1, ci=0.9, n_resamples=200, seed=4)
    klass = literal_classes(history.item, set(pred.item))
    for c in POPULARITY_CLASSES:
        keep = np.array([klass[i] == c for i in pred.item])
        relabelled = pred.assign(label=np.where(keep, pred.label, 0))
        alone = quiet(rm.evaluate, relabelled.drop(columns="label") if separate else relabelled,
                      relabelled[["user", "item", "label"]] if separate else None, k=[1, 3],
                      metrics=list(POPULARITY_METRICS), ties=ties, ci=0.9, n_resamples=200,
                      seed=4)
        mine = table[table.popularity == c].reset_index(drop=True)
        for column in COLUMNS + ["ci_low", "ci_high"]:
            np.testing.assert_allclose(mine[column].to_numpy(float), alone[column].to_numpy(float),
                                       rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=column)
        n_with = relabelled[relabelled.label > 0].user.nunique()
        assert (mine.slice_size == n_with).all()


def test_default_metrics_are_the_six_that_apply_and_a_column_named_popularity_wins():
    pred, truth, history = random_log(5)
    table = quiet(rm.evaluate, pred, truth, by="popularity", history=history)
    assert table.metric.unique().tolist() == list(POPULARITY_METRICS)
    assert table.popularity.unique().tolist() == ["(all)", *POPULARITY_CLASSES]
    assert "head" in table.attrs["notes"][0] and "20%" in table.attrs["notes"][0]
    assert table.attrs["slice_columns"] == ["popularity"]
    gaps = rm.disparity(table, include_small=True)
    assert set(gaps.metric) == set(POPULARITY_METRICS)
    users = pd.DataFrame({"user": range(60), "popularity": ["x", "y"] * 30})
    by_column = quiet(rm.evaluate, pred, truth, metrics=["mrr"], by="popularity", users=users)
    assert set(by_column.popularity) == {"(all)", "x", "y"}


def test_history_with_popularity_slicing_does_not_warn_that_history_is_unused():
    pred, truth, history = random_log(6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rm.evaluate(pred, truth, metrics=["recall"], by="popularity", history=history,
                    min_slice_size=1)


@pytest.mark.parametrize("options, message", [
    (dict(metrics=["recall", "auc"]), r"applies to precision, recall.*not to auc"),
    (dict(metrics=["logloss"]), r"not to logloss"),
    (dict(metrics=["novelty"]), r"by= with the beyond-accuracy metrics"),
    (dict(history=None), r"needs history="),
    (dict(by=["popularity", "group"]), r"not crossed with other slicings"),
    (dict(no_relevant="error"), r"no_relevant='error'"),
    (dict(history=pd.DataFrame({"user": [], "item": []})), r"history has no rows"),
    (dict(history=pd.DataFrame({"user": [1]})), r"history"),
])
def test_refusals(options, message):
    pred, truth, history = random_log(7)
    pred = pred.assign(group="g")
    call = {"by": "popularity", "history": history, **options}
    with pytest.raises(ValueError, match=message):
        quiet(rm.evaluate, pred, truth, **call)
