"""The beyond-accuracy metrics inside recmetrics.evaluate, evaluate_per_user and the command line:
the same numbers as recmetrics.beyond_accuracy, bootstrap intervals that depend on nothing but
the metric, the random and most-popular baselines, and refusals."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import cli
from recmetrics.evaluation import DEFAULT_METRICS

DATA = rm.DATA_DIR
PER_USER = ("novelty", "diversity", "serendipity", "personalization", "arp", "aplt")
AGGREGATE = ("catalog_coverage", "distributional_coverage", "gini")
COMPARED = ["metric", "k", "value", "n_users", "conventions", "note"]


@pytest.fixture(scope="module")
def sample():
    pred = pd.read_csv(DATA / "sample_model_a.csv")
    truth = pd.read_csv(DATA / "sample_truth.csv")
    history = pd.read_csv(DATA / "sample_history.csv")
    return pred, truth, history


def small(seed=3, n_users=25, n_items=15):
    """A small world with ties in score (rounded), history, truth and item features."""
    rng = np.random.default_rng(seed)
    rows = [(f"u{u}", f"i{i}") for u in range(n_users)
            for i in rng.choice(n_items, size=rng.integers(1, 9), replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item"]).assign(
        score=np.round(rng.random(len(rows)), 1))
    truth = pred[["user", "item"]].assign(label=rng.integers(0, 2, len(pred)))
    history = pd.DataFrame({"user": [f"u{u}" for u in rng.integers(0, n_users + 5, 200)],
                            "item": [f"i{i}" for i in rng.zipf(1.6, 200) % n_items]})
    features = pd.DataFrame({"item": [f"i{i}" for i in range(n_items)],
                             "a": rng.random(n_items), "b": rng.integers(0, 2, n_items),
                             "c": rng.random(n_items)})
    return pred, truth, history, features


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        return f(*args, **kwargs)


# --------------------------------------------------------------------------- the same numbers


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic"])
@pytest.mark.parametrize("options", [
    {},
    {"features": True},
    {"catalog": True, "head_share": 0.5, "unseen": "zero"},
])
def test_evaluate_rows_equal_beyond_accuracy_on_the_same_inputs(ties, options):
    pred, truth, history, features = small()
    kwargs = {"history": history, "ties": ties, "head_share": options.get("head_share", 0.8),
              "unseen": options.get("unseen", "add_one")}
    if options.get("features"):
        kwargs["item_features"] = features
    if options.get("catalog"):
        kwargs["catalog"] = [f"i{i}" for i in range(40)]
    expected = quiet(rm.beyond_accuracy, pred, k=[2, 4], truth=truth, **kwargs)
    got = quiet(rm.evaluate, pred, truth, k=[2, 4], metrics=list(rm.BEYOND_METRICS), **kwargs)
    got = got.sort_values(["metric", "k"]).reset_index(drop=True)[COMPARED]
    expected = expected.sort_values(["metric", "k"]).reset_index(drop=True)[COMPARED]
    expected["k"] = expected["k"].astype("Int64")
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-12, atol=1e-12)


def test_history_ids_typed_otherwise_give_the_numbers_of_the_same_ids_typed_alike():
    # evaluate builds history's similarity on history's own codes (in a thread, while it
    # prepares pred) and maps pred's items onto them: ids written "7", " 7" and 7.0 in history
    # are pred's 7, history items pred never scores and pred items history never holds included
    pred, truth, history, _ = small(seed=11)
    def as_int(frame):   # "u3" -> 3, "i7" -> 7
        return frame.assign(**{c: frame[c].str[1:].astype(int) for c in ("user", "item")})

    pred_i, truth_i, history_i = as_int(pred), as_int(truth), as_int(history)
    history_i = pd.concat([history_i, pd.DataFrame({"user": [0, 1], "item": [97, 98]})])
    messy = history_i.assign(
        user=history_i.user.astype(float),
        item=[[f"{i}", f" {i}", f"{i}.0"][n % 3] for n, i in enumerate(history_i.item)])
    metrics = ["diversity", "serendipity", "novelty"]
    tidy = quiet(rm.evaluate, pred_i, truth_i, k=[2, 4], metrics=metrics, history=history_i)
    got = quiet(rm.evaluate, pred_i, truth_i, k=[2, 4], metrics=metrics, history=messy)
    expected = quiet(rm.beyond_accuracy, pred_i, k=[2, 4], truth=truth_i, history=messy,
                     metrics=metrics)
    pd.testing.assert_frame_equal(got[COMPARED], tidy[COMPARED], check_exact=True)
    got = got.sort_values(["metric", "k"]).reset_index(drop=True)
    expected = expected.sort_values(["metric", "k"]).reset_index(drop=True)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12, atol=1e-12)
    assert np.isfinite(got.value).all()


@pytest.mark.parametrize("typed", ["alike", "as text"])
def test_history_index_from_the_background_coding_is_the_one_of_the_joint_coding(typed):
    # serendipity's index (each user's distinct history items) comes from the similarity built
    # on history's own codes, users matched by their ids: it must list the same items in the
    # same order (so sums keep their bits) as the index built on the joint codes, whether the
    # two codings order the items alike (int ids) or not (text ids, first appearance)
    from recmetrics import _beyond, _pipeline

    pred, truth, history, _ = small(seed=5)
    if typed == "alike":
        pred, truth, history = (f.assign(item=f["item"].str[1:].astype(int))
                                for f in (pred, truth, history))
    b = _beyond.BeyondOptions.checked(["serendipity"], known=(), history=history, catalog=None,
                                      item_features=None, head_share=0.8, unseen="add_one",
                                      baselines=False)
    prep = _pipeline.Prepared(pred, truth, user="user", item="item", score="score",
                            label="label", ties="average", keep_items=True)
    options = dict(history=history, truth=truth, catalog=None, item_features=None,
                   metrics=["serendipity"], head_share=0.8, unseen="add_one", user="user",
                   item="item", label="label")
    joint = _beyond.BeyondInputs.from_prepared(prep, **options)
    pending = _beyond.similarity_in_background(b, user="user", item="item")
    own = _beyond.BeyondInputs.from_prepared(prep, **options, similarity=pending)
    assert pending is not None and own.context.similarity.item_map is not None
    def by_list(index):
        start, count, items = index
        return [items[s:s + c].tolist() for s, c in zip(start, count)]
    assert by_list(own.context.history) == by_list(joint.context.history)
    assert sum(map(len, by_list(own.context.history))) > 0


def test_beyond_rows_follow_the_engine_rows_and_leave_them_unchanged(sample):
    pred, truth, history = sample
    plain = rm.evaluate(pred, truth, k=10, ci=0.9, n_resamples=200)
    mixed = rm.evaluate(pred, truth, k=10, ci=0.9, n_resamples=200,
                        metrics=list(DEFAULT_METRICS) + ["novelty", "gini"], history=history)
    pd.testing.assert_frame_equal(mixed.iloc[:len(plain)], plain)
    assert mixed.metric.tolist()[len(plain):] == ["gini", "novelty"]


def test_the_default_metrics_and_table_are_unchanged(sample):
    pred, truth, _ = sample
    table = rm.evaluate(pred, truth)
    assert tuple(table.metric.unique()) == DEFAULT_METRICS
    assert "model" not in table.columns


def test_labels_in_pred_serve_as_truth(sample):
    pred, truth, history = sample
    labelled = pred.merge(truth, on=["user", "item"])
    a = rm.evaluate(labelled, metrics=["serendipity"], history=history)
    b = rm.beyond_accuracy(pred, metrics=["serendipity"], history=history, truth=truth)
    assert a.value.iloc[0] == pytest.approx(b.value.iloc[0], rel=1e-12)


def test_rank_column_gives_the_numbers_of_the_scores():
    pred, truth, history, _ = small()
    # a rank per user from the scores (1 = best), ties kept as equal ranks
    ranked = pred.assign(rank=pred.groupby("user")["score"].rank(ascending=False, method="min"))
    a = quiet(rm.evaluate, ranked.drop(columns="score"), truth, k=3, rank="rank",
              metrics=list(rm.BEYOND_METRICS), history=history)
    b = quiet(rm.evaluate, pred, truth, k=3, metrics=list(rm.BEYOND_METRICS), history=history)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)


def test_per_user_columns_equal_beyond_accuracy_per_user():
    pred, truth, history, features = small()
    users = quiet(rm.evaluate_per_user, pred, truth, k=[3, 5], history=history,
                  item_features=features, metrics=["ndcg"] + list(rm.BEYOND_METRICS))
    for cut in (3, 5):
        expected = quiet(rm.beyond_accuracy_per_user, pred, k=cut, history=history, truth=truth,
                         item_features=features).set_index("user")
        for name in PER_USER:
            got = users.set_index("user")[f"{name}@{cut}"].reindex(expected.index)
            np.testing.assert_allclose(got.to_numpy(), expected[name].to_numpy(), rtol=1e-12,
                                       atol=1e-12, equal_nan=True)
    assert not any(c.startswith(AGGREGATE) for c in users.columns)
    table = quiet(rm.evaluate, pred, truth, k=[3, 5], history=history, item_features=features,
                  metrics=list(PER_USER))
    for row in table.itertuples():
        column = users[f"{row.metric}@{row.k}"]
        assert column.mean() == pytest.approx(row.value, rel=1e-12), row.metric
        assert column.notna().sum() == row.n_users


# --------------------------------------------------------------------------- intervals


@pytest.mark.parametrize("bootstrap", ["poisson", "multinomial"])
def test_intervals_exist_and_do_not_change_when_other_metrics_are_added(sample, bootstrap):
    pred, truth, history = sample
    options = {"k": 10, "ci": 0.9, "n_resamples": 300, "seed": 5, "bootstrap": bootstrap,
               "history": history}
    alone = rm.evaluate(pred, truth, metrics=["novelty"], **options)
    crowd = rm.evaluate(pred, truth, metrics=["auc", "ndcg", "mrr"] + list(rm.BEYOND_METRICS),
                        **options)
    novelty = crowd[crowd.metric == "novelty"]
    assert (novelty.ci_low.iloc[0], novelty.ci_high.iloc[0]) == \
        (alone.ci_low.iloc[0], alone.ci_high.iloc[0])
    for row in crowd.itertuples():
        if row.metric in PER_USER:
            assert row.ci_low < row.value < row.ci_high, row.metric
        elif row.metric in AGGREGATE:
            assert np.isnan(row.ci_low) and np.isnan(row.ci_high)
            assert "no interval" in row.note
    assert "no interval" not in " ".join(rm.evaluate(pred, truth, metrics=["gini"],
                                                     history=history).note)


def test_multinomial_interval_equals_a_literal_bootstrap_of_the_per_user_values(sample):
    pred, truth, history = sample
    table = rm.evaluate(pred, truth, k=10, metrics=["aplt"], history=history, ci=0.8,
                        n_resamples=200, seed=11, bootstrap="multinomial")
    per_user = rm.beyond_accuracy_per_user(pred, k=10, history=history, metrics=["aplt"])
    # the engine's users: every user with a scored row or a relevant truth row, first seen first
    users = pd.unique(pd.concat([pred.user, truth.user[truth.label > 0]]))
    values = per_user.set_index("user").aplt.reindex(users).to_numpy()
    rng = np.random.default_rng(11)
    means = []
    for _ in range(200):
        drawn = rng.integers(0, users.size, users.size)
        kept = values[drawn][~np.isnan(values[drawn])]
        means.append(kept.mean())
    low, high = np.quantile(means, [0.1, 0.9])
    assert table.ci_low.iloc[0] == pytest.approx(low, rel=1e-12)
    assert table.ci_high.iloc[0] == pytest.approx(high, rel=1e-12)


# --------------------------------------------------------------------------- baselines


def test_baselines_add_a_model_column_with_three_models(sample):
    pred, truth, history = sample
    table = rm.evaluate(pred, truth, k=10, metrics=["ndcg", "novelty"], history=history,
                        baselines=True)
    assert table.columns[0] == "model"
    assert table.model.tolist() == ["model"] * 2 + ["random"] * 2 + ["most_popular"] * 2
    model = rm.evaluate(pred, truth, k=10, metrics=["ndcg", "novelty"], history=history)
    np.testing.assert_array_equal(table[table.model == "model"].value, model.value)


def test_random_baseline_is_the_constant_score_under_average_ties(sample):
    pred, truth, history = sample
    metrics = ["auc", "gauc", "ndcg", "map"] + list(rm.BEYOND_METRICS)
    table = rm.evaluate(pred, truth, k=[5, 10], metrics=metrics, history=history, baselines=True)
    constant = rm.evaluate(pred.assign(score=3.5), truth, k=[5, 10], metrics=metrics,
                           history=history)
    np.testing.assert_array_equal(table[table.model == "random"].value, constant.value)


def test_random_baseline_equals_the_mean_of_2000_random_shuffles():
    """2,000 shuffles at once: the users are copied 2,000 times (ids "r:u"), each copy with its own
    random scores; a copy's per-user mean is one shuffle's value. History's users are other
    people, so popularity and feature similarity do not change with the copies."""
    pred, truth, history, features = small(seed=8, n_users=12)
    history = history.assign(user="h" + history.user)
    metrics = ["ndcg", "precision", "novelty", "diversity", "arp", "aplt"]
    k = 3
    table = quiet(rm.evaluate, pred, truth, k=k, metrics=metrics, history=history,
                  item_features=features, baselines=True)
    exact = table[table.model == "random"].set_index("metric").value
    n = 2000
    rng = np.random.default_rng(0)
    copy = np.repeat(np.arange(n), len(pred))
    users = pd.Series(np.tile(pred.user.to_numpy(), n), dtype=object)
    shuffled = pd.DataFrame({"user": copy.astype(str).astype(object) + ":" + users,
                             "item": np.tile(pred.item.to_numpy(), n),
                             "score": rng.random(copy.size)})
    judged = shuffled[["user", "item"]].assign(label=np.tile(truth.label.to_numpy(), n))
    per_user = quiet(rm.evaluate_per_user, shuffled, judged, k=k, metrics=metrics,
                     history=history, item_features=features)
    per_user["copy"] = per_user.user.str.split(":").str[0]
    draws = per_user.groupby("copy")[[f"{m}@{k}" for m in metrics]].mean()
    for name in metrics:
        sample = draws[f"{name}@{k}"].to_numpy()
        error = sample.std(ddof=1) / np.sqrt(n)
        assert abs(sample.mean() - exact[name]) <= 5 * error + 1e-12, name


def test_most_popular_baseline_scores_the_candidates_as_most_popular_does():
    pred, truth, history, _ = small()
    table = quiet(rm.evaluate, pred, truth, k=3, metrics=["ndcg", "mrr", "novelty", "arp"],
                  history=history, baselines=True)
    scores = rm.most_popular(pred.user, history, catalog=pred.item.unique())
    rescored = pred[["user", "item"]].merge(scores, on=["user", "item"], how="left")
    assert rescored.score.notna().all()
    expected = quiet(rm.evaluate, rescored, truth, k=3, metrics=["ndcg", "mrr", "novelty", "arp"],
                     history=history)
    np.testing.assert_allclose(table[table.model == "most_popular"].value, expected.value,
                               rtol=1e-12)
    # the most-popular baseline recommends more popular items than the random one
    arp = table[table.metric == "arp"].set_index("model").value
    assert arp["most_popular"] > arp["random"]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("kwargs, message", [
    ({"metrics": ["novelty"], "history": pd.DataFrame({"user": [1]})},
     "history.*item"),
    ({"metrics": ["serendipity"]}, "serendipity.*needs history"),
    ({"metrics": ["diversity"], "history": "h",
      "item_features": pd.DataFrame({"item": ["zzz"], "x": [1.0]})}, "item_features lacks"),
    ({"metrics": ["novelty", "nope"]}, "metrics"),
    ({"baselines": True}, "baselines=True needs history"),
    ({"baselines": True, "history": "h", "metrics": ["logloss"]}, "no probabilities"),
    ({"metrics": ["aplt"], "history": "h", "head_share": 0}, "head_share"),
    ({"metrics": ["novelty"], "history": "h", "unseen": "drop"}, "unseen"),
])
def test_bad_input_is_refused_with_a_message_that_says_what_to_do(sample, kwargs, message):
    pred, truth, history = sample
    kwargs = {key: history if isinstance(value, str) and value == "h" else value
              for key, value in kwargs.items()}
    with pytest.raises(ValueError, match=message):
        rm.evaluate(pred, truth, **kwargs)


def test_history_without_a_beyond_metric_warns_that_it_is_unused(sample):
    pred, truth, history = sample
    with pytest.warns(rm.RecmetricsWarning, match="history given but no beyond-accuracy"):
        rm.evaluate(pred, truth, history=history)


def test_dask_refuses_what_it_does_not_compute_yet_not_silently_dropped(sample):
    # evaluate's beyond rows on Dask: tests/test_beyond_distributed.py
    dd = pytest.importorskip("dask.dataframe")
    pred, truth, history = sample
    with pytest.raises(ValueError, match="pandas input only, not on Dask"):
        rm.evaluate_per_user(dd.from_pandas(pred, npartitions=2), truth, metrics=["gini"])
    with pytest.raises(ValueError, match="pandas input only, not on Dask"):
        rm.evaluate(dd.from_pandas(pred, npartitions=2), truth, metrics=["ndcg"],
                    history=history, baselines=True)


# --------------------------------------------------------------------------- command line


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_flags_give_the_numbers_of_the_python_api(capsys, sample, tmp_path):
    pred, truth, history = sample
    features = pd.DataFrame({"item": pd.unique(pd.concat([pred.item, history.item]))})
    rng = np.random.default_rng(1)
    features = features.assign(x=rng.random(len(features)), y=rng.random(len(features)))
    features.to_csv(tmp_path / "features.csv", index=False)
    catalog = pd.DataFrame({"item": [f"i{i:04d}" for i in range(1600)]})
    catalog.to_csv(tmp_path / "catalog.csv", index=False)
    code, out, err = run(["evaluate", DATA / "sample_model_a.csv", "--truth",
                          DATA / "sample_truth.csv", "--history", DATA / "sample_history.csv",
                          "--catalog", tmp_path / "catalog.csv", "--item-features",
                          tmp_path / "features.csv", "--metrics", "ndcg",
                          *rm.BEYOND_METRICS, "--k", "5", "10", "--head-share", "0.7",
                          "--unseen", "zero", "--baselines", "--ci", "0.9", "--n-resamples",
                          "200", "--format", "csv", "-q"], capsys)
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    expected = rm.evaluate(pred, truth, k=[5, 10], metrics=["ndcg"] + list(rm.BEYOND_METRICS),
                           history=history, catalog=catalog.item, item_features=features,
                           head_share=0.7, unseen="zero", baselines=True, ci=0.9,
                           n_resamples=200)
    assert got.model.tolist() == expected.model.tolist()
    assert got.metric.tolist() == expected.metric.tolist()
    for column in ("value", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[column], expected[column], rtol=1e-9, equal_nan=True)


def test_cli_text_table_names_the_model_of_each_row(capsys):
    code, out, err = run(["evaluate", DATA / "sample_model_a.csv", "--truth",
                          DATA / "sample_truth.csv", "--history", DATA / "sample_history.csv",
                          "--metrics", "novelty", "--baselines", "-q"], capsys)
    assert code == 0, err
    lines = [line.split()[:2] for line in out.splitlines() if "novelty@10" in line]
    assert lines == [["model", "novelty@10"], ["random", "novelty@10"],
                     ["most_popular", "novelty@10"]]
    assert "head_share=0.8; unseen=add_one" in " ".join(out.split())


@pytest.mark.parametrize("files, flags, message", [
    ({"history.csv": "user,thing\nu0000,i0001\n"}, ["--history", "history.csv", "--metrics",
                                                    "novelty"], "has no column 'item'"),
    ({"features.csv": "item,x\ni9999,1\n"}, ["--history", DATA / "sample_history.csv",
                                             "--item-features", "features.csv", "--metrics",
                                             "diversity"], "--item-features lacks"),
    ({}, ["--metrics", "serendipity"], "needs --history"),
    ({}, ["--baselines"], "--baselines needs --history"),
    ({}, ["--history", DATA / "sample_history.csv", "--baselines", "--engine", "dask"],
     "pandas engine only"),
    ({}, ["--head-share", "2", "--metrics", "aplt"], "not in"),
])
def test_cli_bad_beyond_input_is_one_line_and_exit_2(capsys, tmp_path, files, flags, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    flags = [tmp_path / f if isinstance(f, str) and f in files else f for f in flags]
    code, _, err = run(["evaluate", DATA / "sample_model_a.csv", "--truth",
                        DATA / "sample_truth.csv", *flags, "-q"], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("recmetrics: error: "), err
    assert pytest.importorskip("re").search(message, err), err
