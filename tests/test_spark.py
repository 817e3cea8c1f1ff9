"""The Spark engine gives in-memory evaluate's numbers: tables to 1e-12, per-user values equal.

Every test runs on one local Spark session (``local[2]``, bound to 127.0.0.1, no web UI, two
shuffle partitions) that the tests start themselves. A Spark job costs about a second, so the
generated logs are few; groups of 40 rows and AUC buckets of 2 rows cut them as big ones are cut.
"""
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import (assert_same_columns, assert_same_comparison, auc_literal,  # noqa: E402
                      import_extra)
from _engines import (assert_same_outcome, assert_same_table, draw_judged,  # noqa: E402,F401
                      draw_rows, kind_ids, many_buckets, outcome, spread_log)

pyspark = import_extra("pyspark")  # skipped without the spark extra, a failure under tasks.py test

import recmetrics as rm  # noqa: E402
from recmetrics import cli  # noqa: E402
from recmetrics import spark as rms  # noqa: E402

# PySpark warns that it does not yet fully support pandas 3 each time a test converts a frame
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning")


@pytest.fixture(scope="module")
def spark(spark_session):
    """The test run's one local session (conftest.py)."""
    return spark_session


def to_spark(spark, frame: pd.DataFrame | None, n_partitions: int = 2):
    """A Spark DataFrame of ``frame`` in ``n_partitions`` input partitions (some may be empty)."""
    if frame is None:
        return None
    return spark.createDataFrame(frame).repartition(n_partitions)


# --------------------------------------------------------------------------- generated logs


@st.composite
def logs(draw):
    """Ties, one-class users, users without rows in pred, relevant items pred did not score."""
    rows, unscored = draw_rows(draw, max_users=8)
    users, items, scores, grades = (list(c) for c in zip(*rows))
    user_kind = draw(st.sampled_from(["int", "float", "text"]))
    pred = pd.DataFrame({"user": kind_ids(user_kind, users, "pred"), "item": items,
                         "score": scores})
    truth = None
    if draw(st.booleans()):
        tu, ti, tg = draw_judged(draw, rows, unscored)
        truth = pd.DataFrame({"user": kind_ids(user_kind, tu, "truth"), "item": ti, "label": tg})
    else:
        pred["label"] = grades
    return pred, truth


OPTIONS = st.fixed_dictionaries({
    "k": st.sampled_from([1, [1, 2, 5]]),
    "ties": st.sampled_from(["average", "optimistic", "pessimistic"]),
    "gain": st.sampled_from(["exponential", "linear"]),
    "ideal": st.sampled_from(["truth", "full"]),
    "denominator": st.sampled_from(["relevant", "min_k", "hits"]),
    "gauc_weight": st.sampled_from(["impressions", "clicks", "uniform"]),
    "no_relevant": st.sampled_from(["skip", "zero", "error"]),
    "metrics": st.sampled_from([None, ["auc", "ndcg", "logloss", "ne", "brier", "ece"],
                                ["auc", "gauc", "map", "mrr"]]),
})


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(logs(), OPTIONS, st.integers(1, 7), st.booleans())
def test_spark_equals_in_memory_on_generated_logs(spark, log, options, n_parts, with_ci):
    pred, truth = log
    ci = dict(ci=0.9, n_resamples=100, seed=3) if with_ci else {}
    expected, said = outcome(lambda: rm.evaluate(pred, truth, **options, **ci,
                                                 **({"bootstrap": "poisson"} if ci else {})))
    spred, struth = to_spark(spark, pred, 3), to_spark(spark, truth)
    got, got_said = outcome(lambda: rms.evaluate(spred, struth, **options, **ci,
                                                 npartitions=n_parts))
    if not assert_same_outcome(expected, said, got, got_said, engine="Spark"):
        return
    users = rms.evaluate_per_user(spred, struth, npartitions=n_parts, **options)
    expected_users = rm.evaluate_per_user(pred, truth, **options)
    # Spark's repartition shuffles the rows: compare users as a set, in-memory order aside
    key = expected_users.columns[0]
    pd.testing.assert_frame_equal(
        users.sort_values(key, ignore_index=True),
        expected_users.sort_values(key, ignore_index=True), check_exact=False, rtol=1e-12,
        atol=1e-12)


# --------------------------------------------------------------------------- literal cases


def test_rm_evaluate_sends_spark_input_here_and_keeps_the_users_order(spark):
    pred = spread_log()
    spred = spark.createDataFrame(pred)  # one frame in row order: per-user order is pred's
    assert_same_table(rm.evaluate(pred, k=[1, 5]), rm.evaluate(spred, k=[1, 5]))
    pd.testing.assert_frame_equal(rm.evaluate_per_user(spred, k=[1, 5]),
                                  rm.evaluate_per_user(pred, k=[1, 5]), check_exact=False,
                                  rtol=1e-12, atol=1e-12)


def test_global_auc_with_heavy_ties_equals_counting_pairs_one_by_one(spark):
    rng = np.random.default_rng(5)
    pred = pd.DataFrame({"user": rng.integers(0, 30, 600), "item": np.arange(600),
                         "score": rng.integers(0, 4, 600) / 3, "label": rng.integers(0, 2, 600)})
    table = rms.evaluate(to_spark(spark, pred, 4), metrics=["auc"], npartitions=5)
    positive = pred.label > 0
    literal = auc_literal(pred.score[positive].tolist(), pred.score[~positive].tolist())
    assert table.value.iloc[0] == pytest.approx(literal, abs=1e-12)


def test_truth_only_users_unscored_items_and_positives_only_truth(spark):
    pred = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3], "item": [10, 11, 12, 10, 13, 10],
                         "score": [0.9, 0.4, 0.4, 0.2, 0.8, 0.5]})
    truth = pd.DataFrame({"user": ["1", "2", "2", "4", "3"], "item": [11, 13, 99, 10, 77]})
    unscored = "3 of 5 relevant truth rows were never scored"   # AUC's note (issue 37)
    with pytest.warns(rm.RecmetricsWarning, match=unscored):
        expected = rm.evaluate(pred, truth, k=[1, 2], ci=0.8, n_resamples=100,
                               bootstrap="poisson")
    with pytest.warns(rm.RecmetricsWarning, match=unscored):
        got = rms.evaluate(to_spark(spark, pred), to_spark(spark, truth), k=[1, 2], ci=0.8,
                           n_resamples=100, npartitions=3)
    assert_same_table(expected, got)
    assert got.attrs["notes"] == expected.attrs["notes"] != []
    assert unscored in got.attrs["notes"][1]
    assert got.n_without_predictions.max() == 1  # user 4 has a relevant item and no row
    assert got.attrs["inputs"] == {"pred_rows": 6, "pred_users": 3, "truth_rows": 5,
                                   "truth_users": 4}


def test_rank_column_equals_in_memory(spark):
    pred = spread_log(n_users=15, n_items=6, seed=2)
    pred["position"] = pred.groupby("user").score.rank(ascending=False, method="first")
    pred = pred.drop(columns="score")
    options = dict(rank="position", k=[1, 3], metrics=["ndcg", "map", "mrr", "auc"])
    assert_same_table(rm.evaluate(pred, **options),
                      rms.evaluate(to_spark(spark, pred, 3), npartitions=4, **options))


def test_poisson_interval_is_identical_on_pandas_dask_and_spark(spark):
    pred = spread_log(n_users=60, seed=11)
    options = dict(k=[1, 5], metrics=["auc", "gauc", "ndcg", "map", "mrr"], ci=0.9,
                   n_resamples=200, seed=17)
    pandas_table = rm.evaluate(pred, bootstrap="poisson", **options)
    spark_table = rms.evaluate(to_spark(spark, pred, 3), npartitions=4, **options)
    assert_same_table(pandas_table, spark_table)
    assert (spark_table.ci_low < spark_table.value).all()
    assert (spark_table.value < spark_table.ci_high).all()
    dask = import_extra("dask")
    dd = import_extra("dask.dataframe")
    with dask.config.set(scheduler="sync"):
        dask_table = rm.evaluate(dd.from_pandas(pred, npartitions=3), **options)
    for column in ("ci_low", "ci_high"):
        np.testing.assert_allclose(spark_table[column], dask_table[column], rtol=0, atol=1e-12)


def test_whole_float_truth_ids_meet_int_pred_ids_and_weigh_the_same_in_the_bootstrap(spark):
    pred = spread_log(n_users=10, n_items=4, seed=4)
    truth = pred[["user", "item", "label"]].astype({"user": float})
    options = dict(k=2, ci=0.9, n_resamples=100, seed=1, metrics=["ndcg", "map", "mrr"])
    expected = rm.evaluate(pred.drop(columns="label"), truth, bootstrap="poisson", **options)
    got = rm.evaluate(to_spark(spark, pred.drop(columns="label")), to_spark(spark, truth),
                      **options)
    assert_same_table(expected, got)


def test_per_user_table_can_go_to_parquet(spark, tmp_path):
    pred = spread_log(n_users=30, seed=3)
    assert rms.evaluate_per_user(to_spark(spark, pred), per_user_path=tmp_path / "users",
                                 npartitions=4) is None
    written = pd.read_parquet(tmp_path / "users").sort_values("user", ignore_index=True)
    expected = rm.evaluate_per_user(pred).sort_values("user", ignore_index=True)
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-12, atol=1e-12)


BAD = [
    ("duplicate pair", lambda p: rm.evaluate(p.union(p.limit(1))),
     r"pred has 1 duplicate \(user, item\) row"),
    ("missing column", lambda p: rm.evaluate(p.drop("score")), r"pred has no column 'score'"),
    ("multinomial", lambda p: rm.evaluate(p, ci=0.9, bootstrap="multinomial"),
     r"on Spark use bootstrap='poisson'"),
]


@pytest.mark.parametrize("call, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_spark_input_raises_the_in_memory_message(spark, call, message):
    pred = spark.createDataFrame(spread_log(n_users=4, n_items=5))
    with pytest.raises(ValueError, match=message):
        call(pred)


def test_import_recmetrics_does_not_import_pyspark():
    code = ("import sys, recmetrics, recmetrics.cli; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'py4j'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- the command line


def test_command_line_reads_parquet_directories_and_globs_on_the_active_session(
        spark, tmp_path, capsys):
    pred = spread_log(n_users=25, seed=9)
    (tmp_path / "logs").mkdir()
    for i in range(3):
        pred.iloc[i::3].to_parquet(tmp_path / "logs" / f"part-{i}.parquet", index=False)
    (tmp_path / "logs" / "_SUCCESS").write_text("")
    expected = rm.evaluate(pred, k=[1, 5], ci=0.9, n_resamples=100, bootstrap="poisson")
    for path in (tmp_path / "logs", tmp_path / "logs" / "part-*.parquet"):
        out = tmp_path / "table.csv"
        assert 0 == cli.main(["evaluate", str(path), "--engine", "spark", "--k", "1", "5",
                              "--ci", "0.9", "--n-resamples", "100", "-o", str(out)])
        got = pd.read_csv(out, comment="#")
        np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.ci_low, expected.ci_low, rtol=0, atol=1e-12)
    assert not spark.sparkContext._jsc.sc().isStopped()  # the active session was not stopped


@pytest.mark.parametrize("flags, message", [
    (["--master", "local[2]"], "--master: for the Spark engine only"),
    (["--engine", "spark", "--workers", "2"], "--workers: for the Dask engine only"),
])
def test_command_line_engine_errors_are_one_line(flags, message, tmp_path, capsys):
    path = tmp_path / "p.parquet"
    spread_log(n_users=2, n_items=2).to_parquet(path)
    assert cli.main(["evaluate", str(path), *flags]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- compare (issue 26)


def in_order(spark, frame: pd.DataFrame):
    """A Spark DataFrame holding frame's rows in frame's order (the paired tests draw over
    users in the order of model A's rows, as in memory)."""
    return spark.createDataFrame(frame)


def compare_models(kind: str, seed: int = 0):
    """Three models of 30 users: scores from five values (ties within and across users),
    one-class users, users and rows only some model scored; ids ``kind``."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(30), 6)
    items = np.tile(np.arange(6), 30)
    label = (rng.random(users.size) < 0.3).astype(int)
    label[users < 3] = 0          # users without a relevant item
    label[(users >= 3) & (users < 5)] = 1   # users with relevant items only
    ids = users * 7 if kind == "int" else np.array([f"u{u}" for u in users], dtype=object)
    base = pd.DataFrame({"user": ids, "item": items, "label": label})
    models = {}
    for j in range(3):
        frame = base.assign(score=rng.integers(0, 5, users.size) / 4)
        if j == 1:   # model 1 lacks some rows, and user 29
            frame = frame[(rng.random(len(frame)) < 0.85) & (users != 29)]
        models[f"m{j}"] = frame.sample(frac=1, random_state=j).reset_index(drop=True)
    return models


@pytest.mark.parametrize("kind", ["int", "text"])
def test_spark_compare_of_many_models_equals_in_memory(spark, kind):
    models = compare_models(kind)
    options = dict(k=[1, 3], n_resamples=300, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        expected = rm.compare(models, **options)
        got = rm.compare({name: in_order(spark, f) for name, f in models.items()}, **options)
    assert_same_comparison(expected, got)
    assert got.loc[got.metric == "auc", "p_delong"].notna().all()
    assert "DeLong's test on the" in " ".join(got.loc[got.metric == "auc", "note"])


def test_spark_compare_of_two_frames_with_truth_rank_and_baseline(spark):
    models = compare_models("int", seed=3)
    a, b = models["m0"], models["m2"]
    truth = a[["user", "item", "label"]]
    a, b = (f.drop(columns=["label", "score"]).assign(
        position=f.groupby("user")["score"].rank(ascending=False, method="first"))
        for f in (a, b))
    options = dict(k=2, n_resamples=300, seed=1, baseline="B", ties="optimistic",
                   metrics=["auc", "gauc", "ndcg", "mrr"], rank="position")
    expected = rm.compare(a, b, truth, **options)
    got = rms.compare(in_order(spark, a), in_order(spark, b), truth, npartitions=3, **options)
    assert_same_comparison(expected, got)


def test_spark_compare_refuses_slices_and_disagreeing_labels(spark):
    models = compare_models("int")
    a, b = models["m0"], models["m2"].assign(label=1 - models["m2"]["label"])
    with pytest.raises(ValueError, match=r"compare\(\.\.\., by=\) takes pandas DataFrames"):
        rm.compare(in_order(spark, a), in_order(spark, b), by="user")
    with pytest.raises(ValueError, match="give different labels"):
        rm.compare(in_order(spark, a), in_order(spark, b))


# --------------------------------------------------------------------------- slices (issue 21)


def sliced_log(kind: str, seed: int = 3):
    """60 users, tied scores, one-class users, a per-user country (some missing), a users=
    frame of plans (one user absent from it, ten users not in the log), a truth with
    unscored relevant items and truth-only users."""
    rng = np.random.default_rng(seed)
    pred = pd.DataFrame({"user": rng.integers(0, 60, 400), "item": rng.integers(0, 40, 400)})
    pred = pred.drop_duplicates(["user", "item"]).reset_index(drop=True)
    pred["score"] = rng.integers(0, 5, len(pred)) / 4
    pred["label"] = (rng.random(len(pred)) < 0.3).astype(int)
    country = pd.Series(rng.choice(["DE", "FR", None], 60), index=range(60))
    pred["country"] = country[pred["user"]].to_numpy()
    truth = pd.concat([pred[["user", "item", "label"]],
                       pd.DataFrame({"user": [61, 62, 3], "item": [1, 2, 99], "label": [1, 2, 1]})],
                      ignore_index=True)
    users = pd.DataFrame({"user": np.arange(1, 70), "plan": rng.choice([1, 2, 10], 69)})
    if kind == "text":
        for frame in (pred, truth, users):
            frame["user"] = [f"u{u}" for u in frame["user"]]
    return pred.drop(columns="label"), truth, users


@pytest.mark.parametrize("kind, by, options", [
    ("int", "country", {}),
    ("text", ["country", "activity"], {"ci": 0.9, "n_resamples": 200, "seed": 4}),
    ("int", ["plan", "country"], {"metrics": ["auc", "gauc", "ndcg", "logloss", "ece"]}),
    ("text", "activity", {"k": [1, 5], "ties": "pessimistic"}),
], ids=["country", "crossed-activity-ci", "users-probability", "activity-text"])
def test_spark_slices_equal_in_memory(spark, kind, by, options):
    pred, truth, users = sliced_log(kind)
    call = dict(options, by=by, users=users if "plan" in by else None, min_slice_size=10)
    # the log's truth holds relevant rows pred never scored: AUC says so (issue 37), on both
    with pytest.warns(rm.RecmetricsWarning, match="never scored by pred"):
        expected = rm.evaluate(pred, truth, **call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        got = rm.evaluate(in_order(spark, pred), truth, **call)
    assert_same_columns(expected, got)
    assert got.attrs["notes"] == expected.attrs["notes"]


def test_spark_slices_take_a_spark_users_frame(spark):
    pred, truth, users = sliced_log("int", seed=5)
    with pytest.warns(rm.RecmetricsWarning, match="never scored by pred"):
        expected = rm.evaluate(pred, truth, by="plan", users=users, ci=0.9, n_resamples=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        got = rm.evaluate(in_order(spark, pred), in_order(spark, truth), by="plan",
                          users=in_order(spark, users), ci=0.9, n_resamples=200)
    assert got.attrs["notes"] == expected.attrs["notes"]
    np.testing.assert_allclose(got[["value", "ci_low", "ci_high"]].to_numpy(dtype=np.float64),
                               expected[["value", "ci_low", "ci_high"]].to_numpy(dtype=np.float64),
                               rtol=0, atol=1e-12)
    assert got["plan"].tolist() == expected["plan"].tolist()


def test_command_line_slices_on_spark(spark, tmp_path):
    """`--by` with `--engine spark` (it was ignored before: the table had no slices): a
    column of the log's files, crossed with a --users file's column."""
    pred, truth, users = sliced_log("int", seed=8)
    pred = pred.assign(label=truth["label"].iloc[:len(pred)].to_numpy())
    pred.to_parquet(tmp_path / "log.parquet", index=False)
    users.to_csv(tmp_path / "users.csv", index=False)
    tables = []
    for engine in ("pandas", "spark"):  # the command reads --users as text on either engine
        out = tmp_path / f"{engine}.csv"
        assert 0 == cli.main(["evaluate", str(tmp_path / "log.parquet"), "--engine", engine,
                              "--by", "country", "plan", "--users", str(tmp_path / "users.csv"),
                              "--k", "3", "-o", str(out)])
        tables.append(pd.read_csv(out, comment="#", keep_default_na=False))
    expected, got = tables
    assert len(got) > 16  # slice rows after the rows of all users
    assert got[["country", "plan", "metric"]].astype(str).values.tolist() == \
        expected[["country", "plan", "metric"]].astype(str).values.tolist()
    np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- from_recommendations


def _recommendations_by_hand(rows, user: str):
    """ALS's (user, [(item, rating), ...]) rows as the long table, entry by entry."""
    out = []
    for row in rows:
        for rec in row["recommendations"] or []:
            if rec[0] is not None:
                out.append((row[user], rec[0], float(rec[1])))
    return pd.DataFrame(out, columns=["user", "item", "score"])


def test_from_recommendations_of_real_als_equals_the_table_by_hand(spark):
    from pyspark.ml.recommendation import ALS

    rng = np.random.default_rng(5)
    ratings = pd.DataFrame([(u, i, float(rng.integers(1, 6))) for u in range(12)
                            for i in range(15) if rng.random() < 0.4],
                           columns=["userId", "movieId", "rating"])
    model = ALS(userCol="userId", itemCol="movieId", ratingCol="rating", rank=3, maxIter=3,
                seed=0, coldStartStrategy="drop").fit(spark.createDataFrame(ratings))
    recs = model.recommendForAllUsers(4)       # userId, recommendations: [(movieId, rating)]
    long = rms.from_recommendations(recs)
    assert long.columns == ["user", "item", "score"]
    expected = _recommendations_by_hand(recs.collect(), "userId")
    got = long.toPandas().sort_values(["user", "score"], ascending=[True, False],
                                      ignore_index=True)
    expected = expected.sort_values(["user", "score"], ascending=[True, False], ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    truth = pd.DataFrame([(u, i, 1) for u in range(12) for i in range(15) if rng.random() < 0.2],
                         columns=["user", "item", "label"])
    metrics = ["precision", "recall", "map", "ndcg", "mrr"]
    on_spark = rm.evaluate(long, truth, k=[2, 4], metrics=metrics)
    in_memory = rm.evaluate(expected, truth, k=[2, 4], metrics=metrics)
    assert_same_table(on_spark, in_memory)


def test_from_recommendations_drops_null_items_and_checks_its_input(spark):
    schema = ("u string, recommendations array<struct<item:string,rating:float>>")
    recs = spark.createDataFrame([("a", [("x", 0.5), (None, 0.1), ("y", 0.25)]), ("b", [])],
                                 schema)
    got = rms.from_recommendations(recs).toPandas()
    assert got.values.tolist() == [["a", "x", 0.5], ["a", "y", 0.25]]
    with pytest.raises(ValueError, match="df has no column 'recs'"):
        rms.from_recommendations(recs, recommendations="recs")
    with pytest.raises(ValueError, match="user='v' is not a column of df"):
        rms.from_recommendations(recs, user="v")
    with pytest.raises(ValueError, match="df must be a Spark DataFrame"):
        rms.from_recommendations(recs.toPandas())
    flat = spark.createDataFrame([("a", 1)], "u string, recommendations int")
    with pytest.raises(ValueError, match="must be an array of \\(item, rating\\) structs"):
        rms.from_recommendations(flat)
