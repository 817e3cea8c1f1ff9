"""The beyond-accuracy metrics on Dask: exact distributed sums, equal to in-memory evaluate to
1e-12 whatever the partitions (ties, text and integer ids, features, a catalogue, labels in
pred, users only in truth, empty partitions), intervals included; what is refused."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import import_extra

dask = import_extra("dask")  # skipped without the dask extra
dd = import_extra("dask.dataframe")

import recmetrics as rm  # noqa: E402
from recmetrics import _partitions  # noqa: E402

BEYOND = list(rm.BEYOND_METRICS)
COMPARED = ["metric", "k", "n_users", "n_skipped", "n_without_predictions", "conventions", "note"]


@pytest.fixture(autouse=True, scope="module")
def synchronous_and_small_partitions():
    """Dask's synchronous scheduler, and partitions of 40 rows so that tiny logs are cut."""
    with pytest.MonkeyPatch.context() as patch, dask.config.set(scheduler="synchronous"):
        patch.setattr(_partitions, "PARTITION_ROWS", 40)
        yield


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        return f(*args, **kwargs)


def split(frame: pd.DataFrame, n: int):
    """A Dask DataFrame of ``n`` partitions of frame's rows as they come (a user may span
    several, one may be empty)."""
    edges = np.linspace(0, len(frame), n + 1).astype(int)
    pieces = [frame.iloc[a:b] for a, b in zip(edges[:-1], edges[1:])]
    return dd.from_delayed([dask.delayed(p) for p in pieces], meta=frame.iloc[:0])


def assert_same(mine: pd.DataFrame, memory: pd.DataFrame, columns=("value",)) -> None:
    mine, memory = mine.reset_index(drop=True), memory.reset_index(drop=True)
    assert mine[COMPARED].astype(str).values.tolist() == memory[COMPARED].astype(str).values.tolist()
    for column in columns:
        np.testing.assert_allclose(mine[column].to_numpy(float), memory[column].to_numpy(float),
                                   rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=column)


@st.composite
def worlds(draw):
    """Tied scores, graded labels, users only in truth or without a relevant item, history users
    that never score, items only in history, text or integer ids."""
    text = draw(st.booleans())
    n_users, n_items = draw(st.integers(1, 9)), draw(st.integers(2, 9))
    uid = (lambda u: f"u{u}") if text else (lambda u: u)
    iid = (lambda i: f"i{i}") if text else (lambda i: i)
    rows = []
    for u in range(n_users):
        for i in draw(st.sets(st.integers(0, n_items - 1), min_size=1, max_size=6)):
            rows.append((uid(u), iid(i), draw(st.sampled_from([0.2, 0.5, 0.5, 0.8])),
                         draw(st.sampled_from([0, 0, 1, 2]))))
    pred = pd.DataFrame(rows, columns=["user", "item", "score", "label"])
    extra = [(uid(n_users + 1), iid(0), 0.0, 1)] if draw(st.booleans()) else []
    truth = pd.concat([pred[["user", "item", "label"]],
                       pd.DataFrame([r[:2] + r[3:] for r in extra],
                                    columns=["user", "item", "label"])], ignore_index=True)
    history = pd.DataFrame(draw(st.lists(
        st.tuples(st.integers(0, n_users + 3).map(uid), st.integers(0, n_items + 2).map(iid)),
        min_size=1, max_size=40)), columns=["user", "item"])
    return pred, truth, history, n_items, iid


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from(["average", "optimistic", "pessimistic"]), st.integers(1, 4),
       st.sampled_from(["truth", "labels in pred", "features", "catalog"]))
def test_dask_equals_in_memory_to_1e_12(world, ties, n_parts, variant):
    pred, truth, history, n_items, iid = world
    options = dict(k=[1, 3], metrics=["ndcg"] + BEYOND, history=history, ties=ties,
                   head_share=0.5, unseen="add_one")
    if variant == "features":
        rng = np.random.default_rng(n_items)
        options["item_features"] = pd.DataFrame({"item": [iid(i) for i in range(n_items + 3)],
                                                 "a": rng.random(n_items + 3),
                                                 "b": rng.integers(0, 2, n_items + 3)})
    if variant == "catalog":
        options["catalog"] = [iid(i) for i in range(n_items + 5)]
        options["unseen"] = "zero"
    if variant == "labels in pred":
        memory = quiet(rm.evaluate, pred, **options)
        mine = quiet(rm.evaluate, split(pred, n_parts), **options)
    else:
        scored = pred.drop(columns="label")
        memory = quiet(rm.evaluate, scored, truth, **options)
        mine = quiet(rm.evaluate, split(scored, n_parts), split(truth, 2), **options)
    assert_same(mine, memory)


def test_intervals_equal_in_memory_and_only_beyond_metrics():
    rng = np.random.default_rng(5)
    rows = [(u, int(i)) for u in range(80) for i in rng.choice(30, size=6, replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item"]).assign(
        score=np.round(rng.random(len(rows)), 1))
    truth = pred[["user", "item"]].assign(label=(rng.random(len(pred)) < 0.3).astype(int))
    history = pd.DataFrame({"user": rng.integers(0, 100, 500), "item": rng.zipf(1.5, 500) % 35})
    metrics = [m for m in BEYOND if m != "personalization"]
    options = dict(k=[2, 5], history=history, ci=0.9, n_resamples=300, seed=7)
    memory = quiet(rm.evaluate, pred, truth, metrics=["recall"] + metrics, **options)
    mine = quiet(rm.evaluate, split(pred, 3), split(truth, 3), metrics=["recall"] + metrics,
                 **options)
    assert_same(mine, memory, ("value", "ci_low", "ci_high"))
    assert mine.ci_low.notna().sum() == memory.ci_low.notna().sum() > 0
    only = quiet(rm.evaluate, split(pred, 2), truth, metrics=BEYOND, k=3, history=history)
    assert_same(only, quiet(rm.evaluate, pred, truth, metrics=BEYOND, k=3, history=history))
    assert only.attrs["conventions"]["head_share"] == 0.8


@pytest.mark.parametrize("options, message", [
    (dict(metrics=["personalization"], ci=0.9), r"personalization has no interval on Dask"),
    (dict(metrics=["novelty"], history=None), r"novelty needs history|need history="),
    (dict(metrics=["gini"], history=None), r"on Dask the beyond-accuracy metrics need history="),
])
def test_refusals(options, message):
    pred = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1], "score": [0.3, 0.2, 0.1],
                         "label": [1, 0, 1]})
    history = pd.DataFrame({"user": [1, 2], "item": [1, 2]})
    call = {"history": history, **options}
    with pytest.raises(ValueError, match=message):
        quiet(rm.evaluate, split(pred, 2), **call)


def test_a_dask_history_is_read_once_and_gives_the_numbers_of_a_pandas_one():
    rng = np.random.default_rng(9)
    pred = pd.DataFrame({"user": np.repeat(np.arange(30), 4), "item": np.tile(np.arange(4), 30),
                         "score": np.round(rng.random(120), 1),
                         "label": rng.integers(0, 2, 120)})
    history = pd.DataFrame({"user": rng.integers(0, 40, 200), "item": rng.integers(0, 6, 200)})
    options = dict(k=2, metrics=BEYOND)
    mine = quiet(rm.evaluate, split(pred, 3), history=split(history, 2), **options)
    assert_same(mine, quiet(rm.evaluate, pred, history=history, **options))


def test_a_two_process_cluster_gives_the_in_memory_numbers():
    """The shared part travels to worker processes (pickled once, as a graph key)."""
    distributed = import_extra("distributed")
    rng = np.random.default_rng(12)
    rows = [(u, int(i)) for u in range(60) for i in rng.choice(25, size=5, replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item"]).assign(
        score=np.round(rng.random(len(rows)), 1), label=rng.integers(0, 2, len(rows)))
    history = pd.DataFrame({"user": rng.integers(0, 80, 300), "item": rng.integers(0, 28, 300)})
    options = dict(k=3, metrics=["ndcg"] + BEYOND, history=history)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=50) as local, \
            distributed.Client(local) as client, dask.config.set(scheduler=client), \
            distributed.get_task_stream(client) as stream:
        mine = quiet(rm.evaluate, split(pred, 3), **options)
    assert len(stream.data) > 0        # the tasks ran on the cluster's worker processes
    assert_same(mine, quiet(rm.evaluate, pred, **options))


def test_command_line_on_dask_reads_history_and_gives_the_pandas_numbers(tmp_path, capsys):
    """--history with --engine dask: the history is read once in pandas and shared; the JSON
    equals the pandas engine's on the same files, and the provenance lists the history."""
    import json

    from recmetrics.cli import main

    data = rm.DATA_DIR
    pd.read_csv(data / "sample_truth.csv").to_parquet(tmp_path / "truth.parquet")
    common = [str(data / "sample_model_a.parquet"), "--truth", str(tmp_path / "truth.parquet"),
              "--history", str(data / "sample_history.csv"), "--metrics", "ndcg", "novelty",
              "catalog_coverage", "arp", "--format", "json", "-q"]
    assert main(["evaluate", *common]) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert main(["evaluate", *common, "--engine", "dask", "--workers", "2",
                 "--memory-limit", "1GiB"]) == 0
    on_dask = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in on_dask["metrics"]] == [m["metric"] for m in in_memory["metrics"]]
    for got, expected in zip(on_dask["metrics"], in_memory["metrics"]):
        assert got["value"] == pytest.approx(expected["value"], rel=0, abs=1e-12), got["metric"]
    assert on_dask["inputs"]["history"]["path"].endswith("sample_history.csv")
