"""The Dask engine gives in-memory evaluate's numbers: tables to 1e-12, per-user values equal.

Most tests run on Dask's synchronous scheduler (fast, same graph); a few run on a real
2-worker LocalCluster, each under a time limit (a hung cluster fails the test, not the run).
"""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from conftest import assert_same_columns, assert_same_comparison, import_extra  # noqa: E402
from _engines import (assert_same_outcome, assert_same_table, draw_judged,  # noqa: E402,F401
                      draw_rows, kind_ids, many_buckets, outcome, spread_log)

dask = import_extra("dask")  # skipped without the dask extra, a failure under tasks.py test
dd = import_extra("dask.dataframe")
distributed = import_extra("distributed")

import recmetrics as rm  # noqa: E402
from recmetrics import distributed as rmd  # noqa: E402
from recmetrics._pipeline import poisson_auc_sums  # noqa: E402
from recmetrics._ids import user_hash  # noqa: E402


@contextlib.contextmanager
def time_limit(seconds: int):
    """Fail (TimeoutError) instead of hanging when a cluster deadlocks."""
    def expire(signum, frame):
        raise TimeoutError(f"no result within {seconds} s: the Dask cluster hangs")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def split(frame: pd.DataFrame, cuts) -> "dd.DataFrame":
    """A Dask DataFrame whose partitions are frame's rows cut at ``cuts`` (empty pieces kept)."""
    edges = [0] + sorted(cuts) + [len(frame)]
    pieces = [frame.iloc[a:b] for a, b in zip(edges[:-1], edges[1:])]
    return dd.from_delayed([dask.delayed(p) for p in pieces], meta=frame.iloc[:0],
                           verify_meta=False)


def assert_same_users(expected: pd.DataFrame, got: pd.DataFrame):
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- generated logs


@st.composite
def logs(draw):
    rows, unscored = draw_rows(draw, max_users=9)
    users, items, scores, grades = (list(c) for c in zip(*rows))
    with_truth = draw(st.booleans())
    user_kind = draw(st.sampled_from(["int", "float", "text", "category"]))
    item_kind = draw(st.sampled_from(["int", "text"]))
    pred = pd.DataFrame({"user": kind_ids(user_kind, users, "pred"),
                         "item": kind_ids(item_kind, items, "pred"), "score": scores})
    truth = None
    if with_truth:
        tu, ti, tg = draw_judged(draw, rows, unscored)
        truth = pd.DataFrame({"user": kind_ids(user_kind, tu, "truth"),
                              "item": kind_ids(item_kind, ti, "truth"), "label": tg})
        truth = truth.sample(frac=1, random_state=draw(st.integers(0, 9))).reset_index(drop=True)
    else:
        pred["label"] = grades
    order = draw(st.permutations(range(len(pred))))
    pred = pred.iloc[list(order)].reset_index(drop=True)
    pred_cuts = draw(st.lists(st.integers(0, len(pred)), max_size=6))
    truth_cuts = [] if truth is None else draw(st.lists(st.integers(0, len(truth)), max_size=3))
    return pred, truth, pred_cuts, truth_cuts


OPTIONS = st.fixed_dictionaries({
    "k": st.sampled_from([1, 3, [1, 2, 5]]),
    "ties": st.sampled_from(["average", "optimistic", "pessimistic"]),
    "gain": st.sampled_from(["exponential", "linear"]),
    "ideal": st.sampled_from(["truth", "full"]),
    "denominator": st.sampled_from(["relevant", "min_k", "hits"]),
    "gauc_weight": st.sampled_from(["impressions", "clicks", "uniform"]),
    "no_relevant": st.sampled_from(["skip", "skip", "zero", "error"]),
    "metrics": st.sampled_from([None, ["auc", "ndcg", "logloss", "ne", "brier", "ece"],
                                ["gauc", "map", "mrr"]]),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), OPTIONS, st.integers(1, 7), st.booleans())
def test_dask_equals_in_memory_on_generated_logs(log, options, n_parts, with_ci):
    pred, truth, pred_cuts, truth_cuts = log
    ci = dict(ci=0.9, n_resamples=100, seed=3) if with_ci else {}
    expected, said = outcome(lambda: rm.evaluate(pred, truth, **options, **ci,
                                                 **({"bootstrap": "poisson"} if ci else {})))
    dpred = split(pred, pred_cuts)
    dtruth = None if truth is None else split(truth, truth_cuts)
    with dask.config.set(scheduler="sync"):
        got, got_said = outcome(lambda: rmd.evaluate(dpred, dtruth, **options, **ci,
                                                     npartitions=n_parts))
        if not assert_same_outcome(expected, said, got, got_said, engine="Dask"):
            return
        users = rmd.evaluate_per_user(dpred, dtruth, npartitions=n_parts, **options)
    assert_same_users(rm.evaluate_per_user(pred, truth, **options), users)


# --------------------------------------------------------------------------- literal cases


def test_users_spread_over_partitions_are_shuffled_together():
    pred = spread_log()
    dpred = dd.from_pandas(pred, npartitions=6)
    with dask.config.set(scheduler="sync"):
        got = rm.evaluate(dpred, k=[1, 5])  # rm.evaluate sends Dask input to the Dask engine
        naive = pd.concat([rm.evaluate(p, k=[1, 5]).value for p in
                           (pred.iloc[i::6] for i in range(6))], axis=1).mean(axis=1)
    expected = rm.evaluate(pred, k=[1, 5])
    assert_same_table(expected, got)
    # evaluating the partitions as they come (each holding a slice of every user) is wrong
    assert np.abs(naive - expected.value).max() > 0.01


def test_truth_only_users_and_unscored_items_count_with_any_id_form():
    pred = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [10, 11, 10, 12, 10],
                         "score": [0.9, 0.1, 0.5, 0.5, 0.3]})
    truth = pd.DataFrame({"user": [" 1", "1", "2", "4", "4", "3"],
                          "item": ["10", "13", "12", "10", "11", "10"], "label": [1, 2, 1, 1, 0, 0]})
    unscored = "2 of 4 relevant truth rows were never scored"   # AUC's note (issue 37)
    with pytest.warns(rm.RecmetricsWarning, match=unscored):
        expected = rm.evaluate(pred, truth, k=[1, 2])
    assert expected.n_without_predictions.max() == 1  # user 4
    with dask.config.set(scheduler="sync"):
        for parts in (1, 3, 7):
            with pytest.warns(rm.RecmetricsWarning, match=unscored):
                got = rmd.evaluate(dd.from_pandas(pred, npartitions=2),
                                   dd.from_pandas(truth, npartitions=3), k=[1, 2],
                                   npartitions=parts)
            assert_same_table(expected, got)
            users = rmd.evaluate_per_user(dd.from_pandas(pred, npartitions=2), truth, k=[1, 2],
                                          npartitions=parts)
            assert_same_users(rm.evaluate_per_user(pred, truth, k=[1, 2]), users)
    assert users.user.tolist() == ["1", "2", "3", "4"]  # text ids (truth is text), pred's order


def test_global_auc_with_heavy_ties_is_exact_across_buckets():
    rng = np.random.default_rng(5)
    n = 20_000
    score = np.where(rng.random(n) < 0.7, 0.5, rng.integers(0, 50, n) / 49)  # 70% one score
    pred = pd.DataFrame({"user": rng.integers(0, 500, n), "item": np.arange(n), "score": score,
                         "label": (rng.random(n) < score / 2).astype(int)})
    expected = rm.evaluate(pred, metrics=["auc", "gauc"])
    with dask.config.set(scheduler="sync"):
        for ties in ("average", "optimistic", "pessimistic"):
            got = rmd.evaluate(dd.from_pandas(pred, npartitions=7), metrics=["auc", "gauc"],
                               ties=ties, npartitions=7)
            assert_same_table(rm.evaluate(pred, metrics=["auc", "gauc"], ties=ties), got)
    from sklearn.metrics import roc_auc_score
    assert expected.value[0] == pytest.approx(roc_auc_score(pred.label, pred.score), abs=1e-12)


def test_poisson_interval_is_the_same_in_memory_and_on_dask_and_contains_the_value():
    pred = spread_log(n_users=120, seed=2)
    options = dict(k=[3], ci=0.9, n_resamples=300, seed=11, metrics=["auc", "gauc", "ndcg", "mrr"])
    expected = rm.evaluate(pred, **options, bootstrap="poisson")
    assert (expected.ci_low < expected.value).all() and (expected.value < expected.ci_high).all()
    with dask.config.set(scheduler="sync"):
        for parts in (1, 4):
            assert_same_table(expected, rm.evaluate(dd.from_pandas(pred, npartitions=parts),
                                                    **options))
    # the multinomial default is another draw of the same distribution: close, not equal
    classic = rm.evaluate(pred, **options)
    assert np.abs(classic.ci_low - expected.ci_low).max() < 0.05


def test_poisson_auc_weights_equal_recomputing_auc_on_replicated_rows():
    """A Poisson resample's weighted pair counts are the AUC of each row repeated w times."""
    from sklearn.metrics import roc_auc_score
    rng = np.random.default_rng(4)
    n = 90
    users = np.repeat(np.arange(15), 6)
    scores = rng.integers(0, 5, n) / 4
    positive = rng.random(n) < 0.4
    hashes = user_hash(users)
    sums = poisson_auc_sums(scores, positive, hashes, seed=5, n_resamples=3)
    from recmetrics._pipeline import poisson_weights
    w = poisson_weights(hashes, 5, 0, 3).astype(int)
    for b in range(3):
        repeat = np.repeat(np.arange(n), w[:, b])
        auc = (sums[b, 0] + sums[b, 1]) / (2 * sums[b, 2] * sums[b, 3])
        assert auc == pytest.approx(roc_auc_score(positive[repeat], scores[repeat]), abs=1e-12)
    assert w.mean() == pytest.approx(1, abs=0.3)


def test_per_user_table_can_go_to_parquet(tmp_path):
    pred = spread_log(n_users=30)
    with dask.config.set(scheduler="sync"):
        assert rm.evaluate_per_user(dd.from_pandas(pred, npartitions=3), k=[2],
                                    per_user_path=tmp_path / "users") is None
    written = pd.read_parquet(tmp_path / "users").sort_values("user").reset_index(drop=True)
    # one file per partition of 40 rows that holds a user (360 rows: 9 partitions)
    assert 2 <= len(list((tmp_path / "users").glob("part.*.parquet"))) <= 9
    assert_same_users(rm.evaluate_per_user(pred, k=[2]), written)
    rm.evaluate_per_user(pred, k=[2], per_user_path=tmp_path / "memory.parquet")
    assert_same_users(rm.evaluate_per_user(pred, k=[2]), pd.read_parquet(tmp_path / "memory.parquet"))


BAD = [
    ("multinomial bootstrap", lambda p: rm.evaluate(p, ci=0.9, bootstrap="multinomial"),
     r"bootstrap='multinomial' draws users from one list held in one process"),
    ("unknown bootstrap", lambda p: rm.evaluate(p, ci=0.9, bootstrap="jackknife"),
     r"bootstrap='jackknife' is not a known option; use one of 'multinomial', 'poisson'"),
    ("missing column", lambda p: rm.evaluate(p.drop(columns="score")),
     r"pred has no column 'score'; its columns are 'user', 'item', 'label'"),
    ("no rows", lambda p: rm.evaluate(p[p.score > 5]), r"pred has no rows"),
    ("duplicate pairs", lambda p: rm.evaluate(dd.concat([p, p])), r"pred has \d+ duplicate"),
    ("missing ids", lambda p: rm.evaluate(p.assign(user=p.user.where(p.item != 3))),
     r"pred column 'user' has \d+ missing id"),
    ("bad k", lambda p: rm.evaluate(p, k=0), r"k=0 must be an integer >= 1"),
]


@pytest.mark.parametrize("call, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_dask_input_raises_the_in_memory_message(call, message):
    pred = dd.from_pandas(spread_log(n_users=4, n_items=5).astype({"user": float}), npartitions=2)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match=message):
        call(pred)


def test_import_recmetrics_does_not_import_dask():
    code = ("import sys, recmetrics; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- a real cluster


@pytest.fixture(scope="module")
def cluster():
    with time_limit(120), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
            silence_logs=50) as local, distributed.Client(local) as client:
        yield client


def test_two_worker_cluster_equals_in_memory_with_truth_and_intervals(cluster):
    pred = spread_log(n_users=200, seed=7)
    truth = pred[["user", "item", "label"]].assign(user=lambda t: t.user.astype(str))
    truth = pd.concat([truth, pd.DataFrame({"user": ["900", "901"], "item": [1, 2],
                                            "label": [1, 1]})])
    pred = pred.drop(columns="label")
    options = dict(k=[1, 5], ci=0.9, n_resamples=200, seed=1,
                   metrics=["auc", "gauc", "ndcg", "map", "logloss", "ece"])
    unscored = "2 of 576 relevant truth rows were never scored"   # users 900, 901 (issue 37)
    with time_limit(120):
        with pytest.warns(rm.RecmetricsWarning, match=unscored):
            got = rm.evaluate(dd.from_pandas(pred, npartitions=5),
                              dd.from_pandas(truth, npartitions=3), **options)
        users = rm.evaluate_per_user(dd.from_pandas(pred, npartitions=5), truth, k=[1, 5])
    with pytest.warns(rm.RecmetricsWarning, match=unscored):
        expected = rm.evaluate(pred, truth, **options, bootstrap="poisson")
    assert_same_table(expected, got)
    assert_same_users(rm.evaluate_per_user(pred, truth, k=[1, 5]), users)


def test_command_line_on_a_local_process_cluster_reads_parquet_directories_and_globs(tmp_path):
    """`recmetrics evaluate LOGS --engine dask`: spawned workers, row groups, users across files."""
    from recmetrics.cli import main

    pred = spread_log(n_users=150, seed=9)
    truth = pred[["user", "item", "label"]]
    (tmp_path / "logs").mkdir()
    (tmp_path / "truth").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(pred)), 4)):
        pred.iloc[rows].drop(columns="label").to_parquet(tmp_path / "logs" / f"part-{i}.parquet",
                                                         row_group_size=100)
        truth.iloc[rows[::-1]].to_parquet(tmp_path / "truth" / f"t-{i}.parquet")
    assert rmd.read_parquet(str(tmp_path / "logs")).npartitions > 4  # one per row group
    out = tmp_path / "table.json"
    with time_limit(150):
        status = main(["evaluate", str(tmp_path / "logs"), "--truth", str(tmp_path / "truth" / "t-*.parquet"),
                       "--engine", "dask", "--workers", "2", "--memory-limit", "1GiB",
                       "--k", "1", "10", "--ci", "0.9", "--n-resamples", "100", "-o", str(out)])
    assert status == 0
    document = json.loads(out.read_text())
    expected = rm.evaluate(pred.drop(columns="label"), truth, k=[1, 10], ci=0.9, n_resamples=100,
                           bootstrap="poisson")
    got = pd.DataFrame(document["metrics"])
    np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.ci_low, expected.ci_low, rtol=0, atol=1e-12)
    assert document["inputs"]["pred"] == {"path": str(tmp_path / "logs"), "files": 4,
                                          "rows": len(pred), "users": 150}
    assert document["bootstrap"] == "poisson"


def test_command_line_uses_a_running_scheduler(cluster, tmp_path, capsys):
    from recmetrics.cli import main

    pred = spread_log(n_users=30, seed=3)
    pred.to_parquet(tmp_path / "log.parquet")
    with time_limit(120):
        assert main(["evaluate", str(tmp_path / "log.parquet"), "--engine", "dask", "--scheduler",
                     cluster.scheduler.address, "--format", "csv", "--metrics", "auc", "ndcg"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    expected = rm.evaluate(pred, metrics=["auc", "ndcg"])
    np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)


CLI_ERRORS = [
    (["--workers", "2"], "--workers: for the Dask engine only; add --engine dask"),
    (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"],
     "with --scheduler the running cluster's workers are used"),
    (["--engine", "dask", "--memory-limit", "lots"], "--memory-limit 'lots' is not a size"),
    (["--engine", "dask", "--workers", "0"], "'0' must be a whole number >= 1"),
    (["--engine", "dask", "--truth", "{tmp}/nothing-*.parquet"], "matches no file"),
    (["--engine", "dask", "--truth", "{tmp}"], "has no column 'label'"),
]


@pytest.mark.parametrize("flags, message", CLI_ERRORS, ids=[" ".join(f[0]) for f in CLI_ERRORS])
def test_command_line_engine_errors_are_one_line(flags, message, tmp_path, capsys):
    from recmetrics.cli import main

    spread_log(n_users=3).drop(columns="label").to_parquet(tmp_path / "log.parquet")
    flags = [f.replace("{tmp}", str(tmp_path)) for f in flags]
    assert main(["evaluate", str(tmp_path / "log.parquet"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recmetrics: error: ") and message in err and err.count("\n") == 1


def test_gauc_under_every_weight_on_a_cluster_equals_a_literal_loop_over_users(cluster):
    """Planted bug: evaluate ignoring gauc_weight passed, since the Dask tests compare with the
    in-memory engine; here both meet a loop over users written in conftest."""
    from conftest import group_auc_literal

    rng = np.random.default_rng(13)
    n = 1500
    pred = pd.DataFrame({"user": rng.integers(0, 60, n) ** 2, "item": np.arange(n),
                         "score": rng.integers(0, 6, n) / 5})
    rate = 0.05 + 0.9 * (pred.user % 7) / 7  # clicks and impressions differ by user
    pred["label"] = (rng.random(n) < rate).astype(int)
    expected = {w: group_auc_literal(pred, w) for w in ("impressions", "clicks", "uniform")}
    assert len({round(v, 9) for v in expected.values()}) == 3
    with time_limit(120):
        for gauc_weight, literal in expected.items():
            got = rm.evaluate(dd.from_pandas(pred, npartitions=4), metrics=["gauc", "ndcg"],
                              gauc_weight=gauc_weight)
            assert got.value[got.metric == "gauc"].iloc[0] == pytest.approx(literal, rel=1e-12)
            assert got.attrs["conventions"]["gauc_weight"] == gauc_weight


def spark_output(folder, pred: pd.DataFrame) -> pd.DataFrame:
    """A Spark job's output folder, half committed: part files, and in _temporary/ the files of
    tasks still running (5 more users); _SUCCESS and .crc files beside them. Returns what was
    committed."""
    folder.mkdir()
    committed = pred[pred.user < 60]
    for i, rows in enumerate(np.array_split(np.arange(len(committed)), 3)):
        committed.iloc[rows].to_parquet(folder / f"part-0000{i}.parquet")
        (folder / f".part-0000{i}.parquet.crc").write_bytes(b"crc")
    running = folder / "_temporary" / "0" / "_temporary" / "attempt_1"
    running.mkdir(parents=True)
    pred[pred.user >= 60].to_parquet(running / "part-00003.parquet")
    pred[pred.user < 5].to_parquet(folder / ".hidden-copy.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    return committed


def test_command_line_skips_spark_temporary_and_hidden_files(cluster, tmp_path, capsys):
    """Bug: `--engine dask` read Spark's uncommitted _temporary/ files: 65 users, not 60."""
    from recmetrics.cli import main

    pred = spread_log(n_users=65, seed=4)
    committed = spark_output(tmp_path / "logs", pred)
    expected = rm.evaluate(committed, metrics=["auc", "mrr"])
    for path in (tmp_path / "logs", tmp_path / "logs" / "**" / "*.parquet"):
        with time_limit(120):
            assert main(["evaluate", str(path), "--engine", "dask", "--scheduler",
                         cluster.scheduler.address, "--format", "json", "--metrics", "auc",
                         "mrr"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["inputs"]["pred"]["files"] == 3
        assert document["inputs"]["pred"]["users"] == 60
        got = pd.DataFrame(document["metrics"])
        np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)


def test_uint64_user_ids_beyond_int64_on_dask(cluster):
    pred = spread_log(n_users=30, seed=5)
    big = pred.assign(user=(pred.user.to_numpy().astype(np.uint64) + np.uint64(2**64 - 30)))
    truth = big[["user", "item", "label"]].assign(user=lambda t: t.user.astype(str))
    names = pred.assign(user="u" + pred.user.astype(str))
    expected = rm.evaluate(names.drop(columns="label"), names[["user", "item", "label"]],
                           k=[1, 5], metrics=["auc", "gauc", "mrr", "ndcg"])
    with time_limit(120):
        got = rm.evaluate(dd.from_pandas(big.drop(columns="label"), npartitions=3),
                          dd.from_pandas(truth, npartitions=2), k=[1, 5],
                          metrics=["auc", "gauc", "mrr", "ndcg"])
    assert_same_table(expected, got)


@pytest.mark.parametrize("limit", ["50MB", "255MiB", "1000"])
def test_a_memory_limit_below_the_floor_is_refused_before_a_cluster_starts(limit, tmp_path,
                                                                           capsys, monkeypatch):
    """Bug: `--memory-limit 50MB` started workers that paused forever: a hang, no word."""
    from recmetrics.cli import main

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(rmd, "local_cluster", no_cluster)
    spread_log(n_users=3).to_parquet(tmp_path / "log.parquet")
    assert main(["evaluate", str(tmp_path / "log.parquet"), "--engine", "dask",
                 "--memory-limit", limit]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"recmetrics: error: --memory-limit {limit} is below the minimum of "
                          "256 MiB per worker")


def test_parquet_dataset_lists_committed_files_only(tmp_path, capsys):
    from recmetrics import io as rio
    from recmetrics.cli import main

    spark_output(tmp_path / "logs", spread_log(n_users=65, seed=4))
    columns = {"user": "user", "item": "item", "score": "score"}
    listed = [os.path.relpath(f, tmp_path / "logs") for f in
              rio.parquet_dataset(tmp_path / "logs", columns=columns)]
    assert listed == [f"part-0000{i}.parquet" for i in range(3)]
    # a folder whose own name starts with '_' is named by the user: it counts
    (tmp_path / "logs").rename(tmp_path / "_logs")
    assert len(rio.parquet_dataset(f"{tmp_path}/_logs/*.parquet", columns=columns)) == 3
    # nothing committed yet: one line saying so
    only = tmp_path / "running"
    (only / "_temporary" / "0").mkdir(parents=True)
    spread_log(n_users=3).to_parquet(only / "_temporary" / "0" / "part-00000.parquet")
    (only / "_SUCCESS").write_bytes(b"")
    assert main(["evaluate", str(only), "--engine", "dask", "--metrics", "auc"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"recmetrics: error: {only} holds only files whose path starts with "
                          "'_' or '.' below it")
    assert "_temporary" in err


# --------------------------------------------------------------------------- compare (issue 26)


#: Dask's synchronous scheduler, with the task shuffle (the module's cluster, once started,
#: would make the shuffle default to peer-to-peer, which needs it).
SYNC = {"scheduler": "sync", "dataframe.shuffle.method": "tasks"}


@st.composite
def comparisons(draw):
    """Two or three models over a few users: tied scores, one-class users, users that only
    some model scored, rows that only one model scored; int or text ids; truth given or
    taken from the models' labels; rank columns instead of scores now and then."""
    n_users = draw(st.integers(1, 8))
    grade = {}
    n_models = draw(st.sampled_from([2, 2, 3]))
    kind = draw(st.sampled_from(["int", "text"]))
    frames = []
    for _ in range(n_models):
        rows = []
        for u in range(n_users):
            for i in range(draw(st.integers(0, 4))):
                g = grade.setdefault((u, i), draw(st.sampled_from([0, 0, 1, 2])))
                rows.append((u, i, draw(st.sampled_from([0.0, 0.5, 0.5, 1.0, 0.25])), g))
        if not rows:
            rows = [(0, 0, 0.5, grade.setdefault((0, 0), 1))]
        u, i, s, g = (list(c) for c in zip(*rows))
        frame = pd.DataFrame({"user": kind_ids(kind, u, "pred"), "item": i, "score": s,
                              "label": g})
        order = draw(st.permutations(range(len(frame))))
        frames.append(frame.iloc[list(order)].reset_index(drop=True))
    truth = None
    if draw(st.booleans()):
        judged = [(u, i, g) for (u, i), g in grade.items()] + [(0, 9, 1)]
        tu, ti, tg = (list(c) for c in zip(*judged))
        truth = pd.DataFrame({"user": kind_ids(kind, tu, "truth"), "item": ti, "label": tg})
        frames = [f.drop(columns="label") for f in frames]
    rank = None
    if draw(st.booleans()):  # the models rank their rows (1 = best) instead of scoring them
        frames = [f.assign(position=f.groupby("user")["score"].rank(
            ascending=False, method="first")).drop(columns="score") for f in frames]
        rank = "position"
    names = [f"m{j}" for j in range(n_models)]
    cuts = [draw(st.lists(st.integers(0, len(f)), max_size=4)) for f in frames]
    return dict(zip(names, frames)), truth, rank, cuts


COMPARE_OPTIONS = st.fixed_dictionaries({
    "k": st.sampled_from([1, 3]),
    "ties": st.sampled_from(["average", "optimistic"]),
    "gauc_weight": st.sampled_from(["impressions", "uniform"]),
    "metrics": st.sampled_from([None, ["auc", "gauc", "mrr"], ["ndcg", "precision"]]),
    "baseline": st.sampled_from([None, "m0"]),
})


def _compare_call(truth, rank, options):
    return dict(truth=truth, rank=rank, n_resamples=200, seed=5, **options)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(comparisons(), COMPARE_OPTIONS, st.integers(1, 5))
def test_dask_compare_equals_in_memory_compare(case, options, n_parts):
    models, truth, rank, cuts = case
    kwargs = _compare_call(truth, rank, options)
    expected, said = outcome(lambda: rm.compare(models, **kwargs))
    dmodels = {name: split(f, c) for (name, f), c in zip(models.items(), cuts)}
    with dask.config.set(SYNC):
        got, got_said = outcome(lambda: rm.compare(
            dmodels, **dict(kwargs, truth=None if truth is None else split(truth, []))))
    event("refused" if isinstance(expected, ValueError) else "compared")
    assert_same_outcome(expected, said, got, got_said, engine="Dask",
                        assert_same=assert_same_comparison)


def test_dask_compare_of_two_frames_with_a_baseline_and_npartitions():
    pred = spread_log(n_users=30, n_items=8, seed=4)
    other = pred.assign(score=np.random.default_rng(5).integers(0, 4, len(pred)) / 3)
    expected = rm.compare(pred, other, n_resamples=300, k=[1, 5])
    with dask.config.set(SYNC):
        got = rmd.compare(dd.from_pandas(pred, npartitions=4, sort=False),
                          dd.from_pandas(other, npartitions=3, sort=False), n_resamples=300,
                          k=[1, 5], npartitions=3)
    assert_same_comparison(expected, got)
    assert got.loc[got.metric == "auc", "p_delong"].notna().all()


def test_delong_from_bucket_placements_equals_delong_test_for_any_buckets():
    """The offsets of lower and higher buckets make the within-bucket placements global: the
    p-value equals scipy-free delong_test's on the same rows, whatever the boundaries."""
    from recmetrics import _partitions
    from recmetrics.stats import delong_test

    rng = np.random.default_rng(8)
    n = 400
    y = rng.random(n) < 0.3
    a, b = rng.integers(0, 9, n) / 8, rng.integers(0, 5, n) / 4
    expected = delong_test(y.astype(int), a, b)
    for bounds in (np.zeros(0), np.array([0.5]), np.array([0.1, 0.3, 0.6, 0.9])):
        parts = np.array_split(np.arange(n), 3)  # three partitions of rows
        pieces = [[], []]
        for number, rows in enumerate(parts):
            for side, s in enumerate((a, b)):
                split_ = _partitions._split(s[rows], y[rows], np.arange(rows.size), bounds)
                for bucket, piece in enumerate(split_):
                    pieces[side].append((bucket, number, piece))
        totals, placed = [[], []], [{}, {}]
        for side in (0, 1):
            for bucket in range(bounds.size + 1):
                t, found = _partitions.placement_bucket(
                    [(number, p) for b_, number, p in pieces[side] if b_ == bucket])
                totals[side].append(t)
                for number, value in found.items():
                    placed[side].setdefault(number, []).append((bucket, value))
        sums = [_partitions.placement_sums((placed[0].get(k, []), placed[1].get(k, [])))
                for k in range(len(parts))]
        result, note = _partitions.delong_of(sums, totals, np.array([n, n, n]))
        assert note == ""
        assert result.p_value == pytest.approx(expected.p_value, rel=1e-12, abs=0)
        assert result.variance == pytest.approx(expected.variance, rel=1e-12, abs=0)
        assert result.difference == pytest.approx(expected.difference, rel=1e-12, abs=1e-15)


def test_two_worker_cluster_compare_equals_in_memory(cluster):
    """The comparison's tasks run in worker processes (the peer-to-peer shuffle, pickled
    partial results), with a truth frame and three models."""
    pred = spread_log(n_users=60, n_items=6, seed=11)
    truth = pred[["user", "item", "label"]]
    rng = np.random.default_rng(12)
    models = {name: pred.drop(columns="label").assign(score=rng.integers(0, 5, len(pred)) / 4)
              for name in ("a", "b", "c")}
    options = dict(k=[1, 3], n_resamples=300, seed=2, metrics=["auc", "gauc", "ndcg", "mrr"])
    with time_limit(180):
        got = rm.compare({name: dd.from_pandas(f, npartitions=3, sort=False)
                          for name, f in models.items()}, truth=truth, **options)
    assert_same_comparison(rm.compare(models, truth=truth, **options), got)


# --------------------------------------------------------------------------- slices (issue 21)


def assert_same_sliced(expected: pd.DataFrame, got: pd.DataFrame):
    """evaluate(by=)'s table: every column, the notes and the slice columns."""
    assert_same_columns(expected, got)
    assert got.attrs["notes"] == expected.attrs["notes"]
    assert got.attrs["slice_columns"] == expected.attrs["slice_columns"]


@st.composite
def sliced_logs(draw):
    """A generated log with a per-user column in pred (some users without a value), a users=
    frame (some users absent, one not in the log) and the slicing asked for."""
    pred, truth, pred_cuts, truth_cuts = draw(logs())
    ids = pd.unique(pred["user"].astype(object))
    country = {u: draw(st.sampled_from(["DE", "FR", None])) for u in ids}
    pred["country"] = [country[u] for u in pred["user"].astype(object)]
    users = pd.DataFrame({"user": list(ids), "plan": [draw(st.sampled_from([1, 2, 10]))
                                                     for _ in ids]})
    users = users.iloc[:max(1, len(users) - 1)]
    by = draw(st.sampled_from([["country"], ["activity"], ["plan"], ["country", "activity"],
                               ["plan", "country"]]))
    return pred, truth, pred_cuts, truth_cuts, users if "plan" in by else None, by


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliced_logs(), OPTIONS, st.integers(1, 5), st.booleans(), st.booleans())
def test_dask_slices_equal_in_memory_slices(log, options, n_parts, with_ci, dask_users):
    pred, truth, pred_cuts, truth_cuts, users, by = log
    ci = dict(ci=0.9, n_resamples=100, seed=3) if with_ci else {}
    call = dict(options, by=by, users=users, min_slice_size=2, **ci)
    expected, said = outcome(lambda: rm.evaluate(pred, truth, **call))
    dusers = dd.from_pandas(users, npartitions=2, sort=False) if dask_users and users is not None \
        else users
    with dask.config.set(SYNC):
        got, got_said = outcome(lambda: rmd.evaluate(
            split(pred, pred_cuts), None if truth is None else split(truth, truth_cuts),
            **dict(call, users=dusers), npartitions=n_parts))
    event("refused" if isinstance(expected, ValueError) else "sliced")
    assert_same_outcome(expected, said, got, got_said, engine="Dask",
                        assert_same=assert_same_sliced)


def test_dask_slices_refuse_what_memory_refuses():
    pred = spread_log(n_users=10, n_items=3)
    dpred = dd.from_pandas(pred, npartitions=2)
    with pytest.raises(ValueError, match="by names 'country', which is not a column of pred"):
        rm.evaluate(dpred, by="country")
    with pytest.raises(ValueError, match="users= gives attributes to slice by"):
        rm.evaluate(dpred, users=pd.DataFrame({"user": [1]}))
    varying = pred.assign(country=np.where(pred["item"] % 2, "DE", "FR"))
    with dask.config.set(SYNC), pytest.raises(ValueError, match="varies within a user"):
        rm.evaluate(dd.from_pandas(varying, npartitions=2), by="country")


def test_command_line_slices_on_a_running_scheduler(cluster, tmp_path, capsys):
    """`--by` with `--engine dask` (it was ignored before: the table had no slices)."""
    from recmetrics.cli import main

    pred = spread_log(n_users=30, seed=3)
    pred["country"] = np.where(pred["user"] % 3 == 0, "DE", "FR")
    pred.to_parquet(tmp_path / "log.parquet")
    with time_limit(120):
        assert main(["evaluate", str(tmp_path / "log.parquet"), "--engine", "dask", "--scheduler",
                     cluster.scheduler.address, "--format", "csv", "--by", "country",
                     "activity", "--metrics", "auc", "ndcg"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    expected = rm.evaluate(pred, metrics=["auc", "ndcg"], by=["country", "activity"])
    assert got["country"].tolist() == expected["country"].tolist()
    assert got["activity"].tolist() == expected["activity"].tolist()
    np.testing.assert_allclose(got.value, expected.value, rtol=0, atol=1e-12)
