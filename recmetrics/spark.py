r"""The same evaluation on Spark: the exact in-memory numbers from a Spark DataFrame.

Install the extra (``pip install metricbook[spark]``; Spark needs a Java 17+
runtime), then pass Spark DataFrames to :func:`recmetrics.evaluate` or
:func:`recmetrics.evaluate_per_user` (they come here), or call the functions
of this module, which also take ``npartitions``. The result is the pandas
table that in-memory evaluation gives, to rounding (the sums are added in
another order). The design is the Dask engine's (:mod:`recmetrics.distributed`).

How it stays exact
------------------
* **Users are shuffled, not taken as they come.** Each row of ``pred`` and
  ``truth`` gets its canonical user id and the partition
  ``hash(canonical user id) mod P`` (a ``mapInPandas`` step running the id
  policy of :mod:`recmetrics._ids`); the two frames are then co-grouped by
  partition, so each group holds whole users, their unscored relevant items
  and the users only ``truth`` knows. Each group is evaluated by the
  in-memory code (:mod:`recmetrics._engine`, through Arrow) and returns its
  Summary pickled in a binary column; the driver adds the Summaries.
* **Ids follow the in-memory id policy.** Whether user ids compare as
  integers or as canonical text is decided once on the whole input, from
  the Spark types of every user column (whole-valued doubles are looked at
  by one aggregation), so ``7``, ``7.0`` and ``"7"`` meet in one group.
* **Global AUC without a global sort.** Score buckets come from approximate
  quantiles (they only balance the work); each group sends its distinct
  (score, positive) counts per bucket, each bucket counts its wins and ties
  exactly, and the term across buckets is added on the driver in Python
  integers.
* **Confidence intervals** use the Poisson bootstrap with hashed per-user
  weights (``bootstrap="poisson"``): user *u* weighs Poisson(1) in resample
  *b*, drawn from a hash of (u, seed, b), so the interval is the one that
  pandas and Dask give for the same seed, however the users are grouped.

Memory
------
A Python worker holds one group of whole users while it evaluates it (about
150 bytes a row; ``npartitions``, default one per 250,000 rows of ``pred``,
sets its size) and then one AUC bucket's pieces (about 9 bytes a distinct
(score, label) pair, 17 a row under the bootstrap). The shuffles are
Spark's own, through its disk.

Examples
--------
>>> import recmetrics as rm
>>> from recmetrics import spark as rms
>>> with rms.local_session("local[2]") as spark:               # doctest: +SKIP
...     table = rm.evaluate(spark.read.parquet("logs/"), k=10)
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import urllib.parse
import pickle
import re
import sys
import warnings

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import _beyond, _engine, _partitions
from ._engine import Summary, check_options, check_rank, labelled_truth
from ._options import Options, conventions_of
from ._validation import (Adjustment, Denominator, EvalTies, Gain, GaucWeight, Ideal, NoRelevant,
                          PrDenominator, Unscored, Unseen)

__all__ = ["evaluate", "evaluate_per_user", "compare", "local_session", "connect",
           "from_recommendations"]

#: Score quantiles taken of the whole input to place the bucket boundaries of AUC.
SAMPLE_QUANTILES = 256
#: What a group returns: a Summary (kind 0), an AUC bucket's piece (1) or a per-user table (2).
_OUT = "kind int, bucket int, payload binary"
_SUMMARY, _PIECE, _USERS = 0, 1, 2
#: Bucket of the beyond-accuracy sums' rows (the Summaries' is -1; AUC's buckets from 0).
_BEYOND_BUCKET = -2
#: What a group of evaluate(by=) adds: (bucket = group number) its fine slices' keys and
#: Summaries, and (bucket) its fine slices' AUC pieces of that bucket with its number.
_SLICE_KEYS, _SLICE_PIECE = 3, 4
_INTEGRAL_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


@contextlib.contextmanager
def local_session(master: str = "local[2]", *, shuffle_partitions: int | None = None,
                  app_name: str = "recmetrics"):
    """A SparkSession on ``master`` started here and stopped on exit.

    For one machine (``local[N]``) the driver binds to 127.0.0.1 and the web UI
    is off. The Python workers run this interpreter (``PYSPARK_PYTHON``, unless
    already set), so that they import the same recmetrics, numpy and pandas.
    ``shuffle_partitions`` sets ``spark.sql.shuffle.partitions`` (Spark's
    default is 200; two per core suits a small local session).

    >>> with local_session("local[2]") as spark:            # doctest: +SKIP
    ...     table = recmetrics.evaluate(spark.read.parquet("logs/"))
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"]))
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1"))
    if shuffle_partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(int(shuffle_partitions)))
    with _quiet():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    finally:
        spark.stop()


@contextlib.contextmanager
def connect(*, master: str | None = None):
    """A Spark session for the command line: (session, a phrase naming where the work runs).

    The active session is used when there is one and ``master`` is None or
    its master; else a :func:`local_session` on ``master`` (default
    ``local[*]``, one worker thread per core) is started and stopped on exit.
    """
    active = SparkSession.getActiveSession()
    if active is not None and master in (None, active.sparkContext.master):
        yield active, f"the running Spark session ({active.sparkContext.master})"
        return
    master = master or "local[*]"
    with local_session(master) as spark:
        yield spark, f"a Spark session on {master}"


@contextlib.contextmanager
def _quiet():
    """PySpark warns at every pandas UDF that it does not yet fully support pandas 3; the
    columns this module hands it are plain numbers, text and bytes."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                category=FutureWarning)
        yield


@contextlib.contextmanager
def _worker_errors():
    """A ValueError raised inside a Python worker (the in-memory checks) raised as ValueError."""
    from pyspark.errors.exceptions.captured import PythonException

    try:
        yield
    except PythonException as error:
        found = re.findall(r"^ValueError: (.*)$", str(error), flags=re.M)
        if found:
            raise ValueError(found[-1]) from None
        raise


def from_recommendations(df, *, user: str | None = None,
                         recommendations: str = "recommendations") -> DataFrame:
    """The long (user, item, score) Spark frame of ALS's ``recommendForAllUsers`` output.

    Spark ML's ``ALSModel.recommendForAllUsers(k)`` (and
    ``recommendForUserSubset``) returns one row per user: the user column
    (named as the model's ``userCol``) and ``recommendations``, an array of
    (item, rating) structs, best first. This explodes it, on the Spark engine
    (no row leaves Spark), into one row per recommended pair: columns
    ``user``, ``item`` (the struct's first field, named as the model's
    ``itemCol``) and ``score`` (its second, ALS's predicted rating), which
    :func:`recmetrics.evaluate` takes with a truth frame. Null items are
    dropped.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        ``recommendForAllUsers`` output.
    user : str, optional
        The user column; default: the one column besides ``recommendations``.
    recommendations : str, default "recommendations"
        The array column of (item, rating) structs.

    Examples
    --------
    >>> recs = als_model.recommendForAllUsers(100)            # doctest: +SKIP
    >>> table = recmetrics.evaluate(from_recommendations(recs), truth, k=10)  # doctest: +SKIP
    """
    if not isinstance(df, DataFrame):
        raise ValueError(f"df must be a Spark DataFrame (ALS recommendForAllUsers output), not "
                         f"{type(df).__name__}; for pandas lists use recmetrics.from_topk")
    columns = df.columns
    if recommendations not in columns:
        raise ValueError(f"df has no column {recommendations!r} (its columns: "
                         f"{', '.join(repr(c) for c in columns)}); pass recommendations= the "
                         "array column of (item, rating) structs")
    others = [c for c in columns if c != recommendations]
    if user is None:
        if len(others) != 1:
            raise ValueError(f"df has {len(others)} columns besides {recommendations!r} "
                             f"({', '.join(repr(c) for c in others)}); pass user= the user "
                             "column")
        user = others[0]
    elif user not in columns:
        raise ValueError(f"user={user!r} is not a column of df (its columns: "
                         f"{', '.join(repr(c) for c in columns)})")
    kind = df.schema[recommendations].dataType
    fields = getattr(getattr(kind, "elementType", None), "fields", None)
    if not isinstance(kind, T.ArrayType) or not fields or len(fields) != 2:
        raise ValueError(f"recommendations={recommendations!r} must be an array of (item, "
                         f"rating) structs, as recommendForAllUsers writes it; it is {kind.simpleString()}")
    item_field, rating_field = (f.name for f in fields)
    if not isinstance(fields[1].dataType, T.NumericType):
        raise ValueError(f"the second field of {recommendations!r} ({rating_field!r}) must be "
                         f"a number (the rating), not {fields[1].dataType.simpleString()}")
    exploded = df.select(F.col(user).alias("user"),
                         F.explode(F.col(recommendations)).alias("_rec"))
    return (exploded.select("user", F.col(f"_rec.{item_field}").alias("item"),
                            F.col(f"_rec.{rating_field}").cast("double").alias("score"))
            .where(F.col("item").isNotNull()))


def _as_spark(frame, spark: SparkSession):
    if frame is None or isinstance(frame, DataFrame):
        return frame
    if isinstance(frame, pd.DataFrame):
        return spark.createDataFrame(frame)
    raise ValueError(f"expected a pandas or Spark DataFrame, got {type(frame).__name__}")


def _labelled_truth(truth, label: str):
    """:func:`recmetrics._engine.labelled_truth` for pandas or Spark: a truth of positives only
    gets grade 1 on every row."""
    if isinstance(truth, DataFrame) and label == "label" and label not in truth.columns:
        return truth.withColumn(label, F.lit(1)), True
    return labelled_truth(truth, label, default_label=label == "label")


def _integral_users(frames: list[DataFrame], user: str) -> bool:
    """The id policy's choice for the user columns, decided on the whole input."""
    kinds = [f.schema[user].dataType for f in frames]
    if all(isinstance(k, _INTEGRAL_TYPES) for k in kinds):
        return True
    if not all(isinstance(k, _INTEGRAL_TYPES + (T.FloatType, T.DoubleType, T.DecimalType))
               for k in kinds):
        return False            # text, and booleans (the text True / False)
    if any(isinstance(k, T.DecimalType) and k.scale > 0 for k in kinds):
        return False            # pandas reads decimals as objects: text, as in memory
    for frame, kind in zip(frames, kinds):
        if isinstance(kind, _INTEGRAL_TYPES):
            continue
        c = F.col(user)
        if isinstance(kind, T.DecimalType):  # uint64 from Parquet: int64 if every value fits
            whole = c.isNotNull() & (c >= -(2**63)) & (c < 2**63)
        else:
            whole = (c.isNotNull() & ~F.isnan(c) & (F.abs(c) < float(2**63))
                     & (c == F.floor(c)))
        bad = frame.select(F.sum(F.when(whole, 0).otherwise(1)).alias("n")).collect()[0]["n"]
        if bad:
            return False
    return True


def _keyed_schema(frame: DataFrame, *, user: str, keep: list[str], integral: bool,
                  order: bool) -> T.StructType:
    fields = [T.StructField(user, T.LongType() if integral else T.StringType())
              if f.name == user else f for f in frame.schema.fields if f.name in keep]
    fields.append(T.StructField("_p", T.IntegerType()))
    if order:
        fields.append(T.StructField("_first", T.LongType()))
    return T.StructType(fields)


def _keyed(batches, *, name: str, user: str, keep: list[str], integral: bool, order: bool,
           n_parts: int):
    """Rows with canonical user ids, the group ``_p`` of their user and, if asked, the order."""
    for part in batches:
        out, hashes = _partitions.keyed_rows(part, name=name, user=user, keep=keep,
                                             integral=integral)
        out["_p"] = (hashes % np.uint64(n_parts)).astype(np.int32)
        if order:
            out["_first"] = part["_first"].to_numpy(dtype=np.int64)
        yield out


def _rows(kind: int, payloads: list[tuple[int, object]]) -> pd.DataFrame:
    return pd.DataFrame({"kind": np.full(len(payloads), kind, dtype=np.int32),
                         "bucket": np.array([b for b, _ in payloads], dtype=np.int32),
                         "payload": [pickle.dumps(p, protocol=5) for _, p in payloads]})


def _group(pred: pd.DataFrame, truth: pd.DataFrame | None, number: int, **kwargs
           ) -> pd.DataFrame:
    """Evaluate one group of whole users; its Summary, AUC pieces or per-user table as rows."""
    result = _partitions.evaluate_group(pred, truth, number, **kwargs)
    if kwargs["users"] is not None:
        return _rows(_USERS, [] if result.table is None else [(-1, result.table)])
    out = [_rows(_SUMMARY, [(-1, result.summary)])]
    if result.beyond is not None:
        out.append(_rows(_SUMMARY, [(_BEYOND_BUCKET, result.beyond)]))
    if result.pieces:
        out.append(_rows(_PIECE, list(enumerate(result.pieces))))
    return pd.concat(out, ignore_index=True)


def _reduce(key, rows: pd.DataFrame, *, seed: int | None, n_resamples: int) -> pd.DataFrame:
    """One bucket's exact pair counts, or (bucket -1, -2) the sum of every group's Summary or
    beyond-accuracy sums."""
    bucket = int(key[0])
    values = [pickle.loads(p) for p in rows["payload"]]
    result = sum(values[1:], values[0]) if bucket < 0 else \
        _partitions.bucket_counts(values, seed, n_resamples)
    return _rows(_SUMMARY if bucket < 0 else _PIECE, [(bucket, result)])


def _sliced_group(pred: pd.DataFrame, truth: pd.DataFrame | None, number: int, *,
                  attributes: pd.DataFrame | None, **kwargs) -> pd.DataFrame:
    """One group of whole users of evaluate(by=): its Partial and its fine slices as rows."""
    users = None if attributes is None else \
        attributes[attributes["_p"] == number].drop(columns="_p")
    r = _partitions.evaluate_sliced_group(pred, truth, users, number, **kwargs)
    out = [_rows(_SUMMARY, [(-1, r.whole.summary)]),
           _rows(_PIECE, list(enumerate(r.whole.pieces))),
           _rows(_SLICE_KEYS, [(number, (r.keys, r.summaries))])]
    if r.pieces:
        out.append(_rows(_SLICE_PIECE, [(b, (number, [p[b] for p in r.pieces]))
                                        for b in range(len(r.pieces[0]))]))
    return pd.concat(out, ignore_index=True)


def _slice_reduce(key, rows: pd.DataFrame, *, of_fine: list, n_slices: int, seed: int | None,
                  n_resamples: int) -> pd.DataFrame:
    """One score bucket's pair counts per slice, from every group's fine pieces of it."""
    fine: list = [[] for _ in of_fine]
    for payload in rows["payload"]:
        number, pieces = pickle.loads(payload)
        fine[number] = pieces
    counts = _partitions.slice_bucket_counts(fine, of_fine, n_slices, seed, n_resamples)
    return _rows(_SLICE_PIECE, [(int(key[0]), counts)])


def _run(pred, truth, *, o: Options, names: dict, ci, n_resamples, seed, npartitions, users,
         path=None, beyond=None, sliced: dict | None = None):
    spark = next(f for f in (pred, truth) if isinstance(f, DataFrame)).sparkSession
    pred, truth = _as_spark(pred, spark), _as_spark(truth, spark)
    user, score, rank = names["user"], names["score"], names.get("rank")
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      names)
    frames = [(name, frame, keep) for (name, keep), frame in zip(inputs, (pred, truth))]
    if sliced is not None:  # the by columns of each frame travel with its rows
        frames = [(name, frame, list(dict.fromkeys(
            keep + [c for c in sliced["by"] if c in frame.columns and c != user])))
            for name, frame, keep in frames]
    integral = _integral_users([f for _, f, _ in frames], user)
    # one pass over the scores: the rows to split, and the quantiles behind AUC's buckets
    ranked = F.col(score) if rank is None else -F.col(rank)
    value = ranked.cast("double")
    finite = value.isNotNull() & ~F.isnan(value) & (F.abs(value) < float("inf"))
    probabilities = np.linspace(0, 1, SAMPLE_QUANTILES + 1).tolist()
    first = pred.select(F.count(F.lit(1)).alias("n"), F.percentile_approx(
        F.when(finite, value), probabilities, 10_000).alias("q")).collect()[0]
    n_rows = int(first["n"])
    if n_rows == 0:
        raise ValueError("pred has no rows; pass at least one scored item")
    n_parts = _partitions.n_partitions(n_rows, npartitions)
    order = users == "collect"
    keyed = []
    for name, frame, keep in frames:
        if order:
            frame = frame.withColumn("_first", F.monotonically_increasing_id())
        schema = _keyed_schema(frame, user=user, keep=keep, integral=integral, order=order)
        kwargs = dict(name=name, user=user, keep=keep, integral=integral, order=order,
                      n_parts=n_parts)
        keyed.append(frame.mapInPandas(lambda b, kwargs=kwargs: _keyed(b, **kwargs), schema)
                     .groupBy("_p"))
    bounds = None
    if "auc" in o.metrics:
        samples = np.asarray(first["q"] or [], dtype=np.float64)
        bounds = _partitions.boundaries([samples], n_rows, n_parts)
    poisson_seed = None if ci is None else _engine.poisson_seed(seed)
    kwargs = dict(o=o, names=names, integral=integral, bounds=bounds, seed=poisson_seed,
                  n_resamples=n_resamples, users=users, path=path, beyond=beyond)
    group = _group
    if sliced is not None:
        group = _sliced_group  # type: ignore[assignment]
        attributes = None
        if sliced["users"] is not None:
            attributes, hashes = _partitions.keyed_attributes(sliced["users"], user=user,
                                                              integral=integral)
            attributes["_p"] = (hashes % np.uint64(n_parts)).astype(np.int32)
        kwargs = dict(o=o, names=names, integral=integral, bounds=bounds, seed=poisson_seed,
                      n_resamples=n_resamples, by=sliced["by"], attributes=attributes)
    if truth is None:
        out = keyed[0].applyInPandas(lambda key, p: group(p, None, int(key[0]), **kwargs), _OUT)
    else:
        out = keyed[0].cogroup(keyed[1]).applyInPandas(
            lambda key, p, t: group(p, t, int(key[0]), **kwargs), _OUT)
    if sliced is not None:
        return _finish_sliced(out, sliced, n_parts=n_parts, bounds=bounds, seed=poisson_seed,
                              n_resamples=n_resamples)
    with _worker_errors():
        if users is not None:
            return None, [pickle.loads(r["payload"]) for r in out.toLocalIterator()
                          if r["kind"] == _USERS]
        reduced = out.groupBy("bucket").applyInPandas(
            lambda key, rows: _reduce(key, rows, seed=poisson_seed, n_resamples=n_resamples),
            _OUT).collect()
    results = {r["bucket"]: pickle.loads(r["payload"]) for r in reduced}
    s = _partitions.total([results.pop(-1)])
    extras = [results.pop(_BEYOND_BUCKET, None)]
    if bounds is not None:
        buckets = [results.get(b, _partitions.empty_bucket(poisson_seed, n_resamples))
                   for b in range(bounds.size + 1)]
        _partitions.add_pairs(s, buckets, poisson_seed)
    return s, extras


def _finish_sliced(out: DataFrame, sliced: dict, *, n_parts: int, bounds, seed, n_resamples):
    """The total Summary, the fine slices and the per-slice bucket counts of evaluate(by=)."""
    out = out.persist()
    try:
        with _worker_errors():
            reduced = out.where(F.col("kind").isin(_SUMMARY, _PIECE)).groupBy("bucket") \
                .applyInPandas(lambda key, rows: _reduce(key, rows, seed=seed,
                                                         n_resamples=n_resamples), _OUT).collect()
            found = {r["bucket"]: pickle.loads(r["payload"])
                     for r in out.where(F.col("kind") == _SLICE_KEYS).collect()}
            keys = [found.get(n, ([], []))[0] for n in range(n_parts)]
            fine = [found.get(n, ([], []))[1] for n in range(n_parts)]
            plan = _partitions.slice_plan(keys, fine, sliced["by"], sliced["activity"])
            counted: dict = {}
            if bounds is not None:
                counted = {r["bucket"]: pickle.loads(r["payload"]) for r in
                           out.where(F.col("kind") == _SLICE_PIECE).groupBy("bucket")
                           .applyInPandas(lambda key, rows: _slice_reduce(
                               key, rows, of_fine=plan.of_fine, n_slices=plan.slicing.n_slices,
                               seed=seed, n_resamples=n_resamples), _OUT).collect()}
    finally:
        out.unpersist()
    results = {r["bucket"]: pickle.loads(r["payload"]) for r in reduced}
    s = _partitions.total([results.pop(-1)])
    buckets = []
    if bounds is not None:
        _partitions.add_pairs(s, [results.get(b, _partitions.empty_bucket(seed, n_resamples))
                                  for b in range(bounds.size + 1)], seed)
        empty = [_partitions.empty_bucket(seed, n_resamples)] * plan.slicing.n_slices
        buckets = [counted.get(b, empty) for b in range(bounds.size + 1)]
    return s, (fine, plan, buckets)


def evaluate(pred, truth=None, *, k=10, metrics=None, user: str = "user", item: str = "item",
             score: str = "score", label: str = "label", rank: str | None = None,
             ties: EvalTies = "average",
             gain: Gain = "exponential", ideal: Ideal = "truth",
             denominator: Denominator = "relevant",
             pr_denominator: PrDenominator = "standard", gauc_weight: GaucWeight = "impressions",
             no_relevant: NoRelevant = "skip", rbp_p: float = 0.8, max_grade: float | None = None,
             min_grade: float | None = None, judged_only: bool = False, unscored: Unscored = "ignore",
             ci: float | None = None, n_resamples: int = 1000,
             seed=0, bootstrap: str | None = None, by=None, users=None,
             min_slice_size: int = 30, npartitions: int | None = None,
             history=None, catalog=None, item_features=None, head_share: float = 0.8,
             unseen: Unseen = "add_one") -> pd.DataFrame:
    """:func:`recmetrics.evaluate` on Spark DataFrames: the same tidy pandas table.

    ``by=`` slices as :func:`recmetrics.distributed.evaluate` does, exactly;
    ``users=`` (pandas, or a Spark DataFrame, which is gathered here) is sent
    to each group with its users' rows.

    Every option is :func:`recmetrics.evaluate`'s, with ``bootstrap`` fixed
    to ``"poisson"`` (the default here; ``"multinomial"`` needs every user in
    one process and is refused). ``npartitions`` sets how many groups the
    users are hashed into (default: one per 250,000 rows, ``_partitions.PARTITION_ROWS``,
    of ``pred``); a Python worker evaluates one group at a time (about 150
    bytes a row). The work runs on the session of the Spark DataFrame passed
    (a pandas ``truth`` is converted on that session).

    The table's ``attrs["inputs"]`` holds what was read: ``pred_rows``,
    ``pred_users`` and, with ``truth``, ``truth_rows`` and ``truth_users``.
    Errors found inside a group (a duplicate pair, a missing id, a
    non-numeric score) are raised as ValueError with the in-memory message,
    whose counts and row numbers are then those of the group.

    The beyond-accuracy metrics (with ``history=``, a pandas DataFrame) are
    exact sums over the groups, as on Dask (:func:`recmetrics.distributed.evaluate`):
    popularity, long tail, similarity and the users' history items are built
    once on the driver and shipped with the task; personalization has no
    interval (refused with ``ci``).
    """
    b, o, ci, n_resamples, seed = _partitions.evaluate_options(
        metrics, k, conventions_of(locals()), dict(history=history, catalog=catalog,
                                                   item_features=item_features,
                                                   head_share=head_share, unseen=unseen),
        ci=ci, n_resamples=n_resamples, seed=seed, bootstrap=bootstrap, rank=rank,
        engine="Spark")
    truth, positives_only = _labelled_truth(truth, label)
    names = {"user": user, "item": item, "score": score, "label": label, "rank": rank}
    if by is not None or users is not None:
        _partitions.refuse_history_activity(by, history, "Spark")
        if b.metrics:
            raise ValueError("by= with the beyond-accuracy metrics is not supported on Spark "
                             "yet; evaluate them without by=, or in memory (pandas)")
        if isinstance(users, DataFrame):
            users = users.toPandas()
        sources = [("pred", list(pred.columns))] + \
            ([] if truth is None else [("truth", list(truth.columns))])
        by, min_slice_size, activity = _partitions.check_slices(
            by, None if users is None else list(users.columns), min_slice_size, user=user,
            sources=sources)
        with _quiet():
            s, (fine, plan, buckets) = _run(
                pred, truth, o=o, names=names, ci=ci, n_resamples=n_resamples, seed=seed,
                npartitions=npartitions, users=None,
                sliced={"by": by, "users": users, "activity": activity})
        return _partitions.finish_sliced(
            s, fine, plan, buckets, o, ci=ci,
            seed=None if ci is None else _engine.poisson_seed(seed),
            min_slice_size=min_slice_size, positives_only=positives_only, rank=rank,
            score=score)
    shared, beyond = None, None
    with _quiet():
        if b.metrics:
            spark = next(f for f in (pred, truth) if isinstance(f, DataFrame)).sparkSession
            pred, truth = _as_spark(pred, spark), _as_spark(truth, spark)
            shared, options = _partitions.beyond_setup(
                b, o, pred, truth, names, _distinct_items, ci=ci, seed=seed,
                n_resamples=n_resamples, engine="Spark")
            # the shared part as a broadcast variable: sent to each executor once
            beyond = functools.partial(_beyond.broadcast_partition_sums,
                                       spark.sparkContext.broadcast(shared), **options)
        s, extras = _run(pred, truth, o=o, names=names, ci=ci, n_resamples=n_resamples,
                         seed=seed, npartitions=npartitions, users=None, beyond=beyond)
    return _partitions.evaluate_table(s, o, b, shared, extras, ci=ci, n_resamples=n_resamples,
                                      truth_given=truth is not None,
                                      positives_only=positives_only, rank=rank, score=score)


def _distinct_items(pred: DataFrame, judged: DataFrame, item: str
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The distinct items of pred and of judged as one-column pandas frames."""
    return (pred.select(item).distinct().toPandas(),
            judged.select(item).distinct().toPandas())


def evaluate_per_user(pred, truth=None, *, k=10, metrics=None, user: str = "user",
                      item: str = "item", score: str = "score", label: str = "label",
                      rank: str | None = None,
                      ties: EvalTies = "average", gain: Gain = "exponential", ideal: Ideal = "truth",
                      denominator: Denominator = "relevant",
                      pr_denominator: PrDenominator = "standard",
                      gauc_weight: GaucWeight = "impressions", no_relevant: NoRelevant = "skip",
                      rbp_p: float = 0.8, max_grade: float | None = None,
                      min_grade: float | None = None, judged_only: bool = False, unscored: Unscored = "ignore",
                      per_user_path=None, npartitions: int | None = None) -> pd.DataFrame | None:
    """:func:`recmetrics.evaluate_per_user` on Spark DataFrames.

    Returns the per-user pandas table, users in the order of their first row
    in ``pred`` (then ``truth``), the order of the Spark DataFrame's
    partitions (a pandas frame's row order when it was made from one). With
    ``per_user_path`` each group writes its users to
    ``per_user_path/part.NNNNN.parquet`` instead (a directory every worker
    can write to), nothing is gathered, and None is returned.
    """
    o = check_options(k=k, metrics=metrics, **conventions_of(locals()))
    _partitions.refuse_unscored(o, "Spark")
    check_rank(rank, o)
    truth, _ = _labelled_truth(truth, label)
    names = {"user": user, "item": item, "score": score, "label": label, "rank": rank}
    o_users, folder = _partitions.per_user_plan(o, per_user_path, _input_files(pred, truth))
    if folder is None:
        with _quiet():
            _, tables = _run(pred, truth, o=o_users, names=names, ci=None, n_resamples=0,
                             seed=0, npartitions=npartitions, users="collect")
        return _partitions.user_rows(tables)
    with folder as path, _quiet():
        _run(pred, truth, o=o_users, names=names, ci=None, n_resamples=0, seed=0,
             npartitions=npartitions, users="write", path=path)
    return None


def _input_files(*frames) -> list[str]:
    """The files the Spark DataFrames read (``DataFrame.inputFiles``, local paths); the
    per-user output must not be one of them."""
    found: list[str] = []
    for frame in frames:
        if frame is None or not hasattr(frame, "inputFiles"):
            continue
        for uri in frame.inputFiles():
            parsed = urllib.parse.urlparse(uri)
            found.append(urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else uri)
    return found


#: What the steps of a comparison return: a kind, three integer keys and a pickled payload.
_COMPARE_OUT = "kind int, a int, b int, c int, payload binary"
(_C_SUMMARY, _C_PIECE, _C_USERS, _C_COUNTS, _C_DELONG, _C_TOTAL, _C_PLACED,
 _C_SUMS) = range(8)


def _crows(items: list[tuple[int, int, int, int, object]]) -> pd.DataFrame:
    return pd.DataFrame({"kind": np.array([x[0] for x in items], dtype=np.int32),
                         "a": np.array([x[1] for x in items], dtype=np.int32),
                         "b": np.array([x[2] for x in items], dtype=np.int32),
                         "c": np.array([x[3] for x in items], dtype=np.int32),
                         "payload": [pickle.dumps(x[4], protocol=5) for x in items]})


def _standard(batches, *, n_parts: int, **kwargs):
    """Rows of one input in the standard columns of a comparison, with their group ``_p``."""
    for part in batches:
        out, hashes = _partitions.standard_rows(part, **kwargs)
        out["_p"] = (hashes % np.uint64(n_parts)).astype(np.int32)
        out["_first"] = part["_first"].to_numpy(dtype=np.int64)
        yield out


def _compare_group(key, rows: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """One group of whole users of a comparison, as rows of _COMPARE_OUT."""
    number = int(key[0])
    r = _partitions.compare_group(rows.drop(columns="_p"), number, **kwargs)
    out: list = [(_C_SUMMARY, i, -1, 0, s) for i, s in enumerate(r.summaries)]
    out += [(_C_PIECE, i, b, 0, piece) for i, pieces in enumerate(r.pieces)
            for b, piece in enumerate(pieces)]
    out.append((_C_COUNTS, number, 0, 0, (r.n_scored, r.rows, r.users)))
    out += [(_C_DELONG, p, side, b, (number, piece))
            for (p, side), pieces in r.delong.items() for b, piece in enumerate(pieces)]
    return _crows(out)


def _compare_reduce(key, rows: pd.DataFrame) -> pd.DataFrame:
    """A model's Summaries added, one AUC bucket's counts, or one DeLong bucket's placements."""
    kind, a, b, c = (int(x) for x in key)
    values = [pickle.loads(p) for p in rows["payload"]]
    if kind == _C_SUMMARY:
        return _crows([(kind, a, b, c, sum(values[1:], values[0]))])
    if kind == _C_PIECE:
        return _crows([(kind, a, b, c, _partitions.bucket_counts(values, None, 0))])
    totals, placed = _partitions.placement_bucket(values)
    return _crows([(_C_TOTAL, a, b, c, totals)]
                  + [(_C_PLACED, a, number, b, (c, found)) for number, found in placed.items()])


def _placement_sums(key, rows: pd.DataFrame) -> pd.DataFrame:
    """One group's DeLong sums of one pair, from both sides' placements of its rows."""
    sides: tuple[list, list] = ([], [])
    for side, payload in zip(rows["c"], rows["payload"]):
        sides[int(side)].append(pickle.loads(payload))
    return _crows([(_C_SUMS, int(key[0]), int(key[1]), 0, _partitions.placement_sums(sides))])


def compare(pred_a, pred_b=None, truth=None, *, k=10, metrics=None, user: str = "user",
            item: str = "item", score="score", label: str = "label", rank=None,
            ties: EvalTies = "average", gain: Gain = "exponential", ideal: Ideal = "truth",
            denominator: Denominator = "relevant",
            pr_denominator: PrDenominator = "standard", gauc_weight: GaucWeight = "impressions",
            no_relevant: NoRelevant = "skip", rbp_p: float = 0.8,
            max_grade: float | None = None, min_grade: float | None = None,
            judged_only: bool = False, unscored: Unscored = "ignore", n_resamples: int = 10_000, seed=0,
            alpha: float = 0.05, baseline: str | None = None, correction: Adjustment = "holm",
            npartitions: int | None = None) -> pd.DataFrame:
    """:func:`recmetrics.compare` on Spark DataFrames: the same table, the same tests.

    The design is that of :func:`recmetrics.distributed.compare`: every
    model's rows and the truth are grouped together by user, each model is
    evaluated on the users every model scored, the shared users' per-user
    values are gathered in this process for the paired tests (the in-memory
    draws for the same ``seed``), and global AUC and DeLong's test come from
    score buckets, exactly. Options are :func:`recmetrics.compare`'s, without
    ``by=`` (``npartitions`` as in :func:`evaluate`).
    """
    o = check_options(k=k, metrics=metrics, **conventions_of(locals()))
    _partitions.refuse_unscored(o, "Spark")
    c = _partitions.check_compare(pred_a, pred_b, truth, o, score=score, rank=rank,
                                  n_resamples=n_resamples, seed=seed, alpha=alpha,
                                  correction=correction, baseline=baseline)
    models, pairs = c.models, c.pairs
    truth, _ = _labelled_truth(truth, label)
    spark = next(f for f in [m.frame for m in models] + [truth]
                 if isinstance(f, DataFrame)).sparkSession
    frames = [_as_spark(m.frame, spark) for m in models]
    truth = _as_spark(truth, spark)
    inputs = _partitions.compare_inputs(models, [f.columns for f in frames],
                                        None if truth is None else truth.columns,
                                        user=user, item=item, label=label)
    every = frames + ([] if truth is None else [truth])
    integral = _integral_users(every, user)
    integral_items = _integral_users(every, item)
    schema = T.StructType([T.StructField(user, T.LongType() if integral else T.StringType()),
                           T.StructField(item, T.LongType() if integral_items
                                         else T.StringType()),
                           T.StructField("_s", T.DoubleType()), T.StructField("_y", T.DoubleType()),
                           T.StructField("_m", T.IntegerType()), T.StructField("_p", T.IntegerType()),
                           T.StructField("_first", T.LongType())])
    bare = [dataclasses.replace(m, frame=None) for m in models]  # the workers need no frame

    def standard(n_parts: int) -> DataFrame:
        parts = []
        for frame, kwargs in zip(every, inputs):
            kwargs = dict(kwargs, user=user, item=item, integral_users=integral,
                          integral_items=integral_items, n_parts=n_parts)
            frame = frame.withColumn("_first", F.monotonically_increasing_id())
            parts.append(frame.mapInPandas(lambda b, kwargs=kwargs: _standard(b, **kwargs),
                                           schema))
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out

    with _quiet(), _worker_errors():
        # one pass over the scores: the rows to split, and each model's bucket boundaries
        value = F.col("_s")
        finite = ~F.isnan(value) & (F.abs(value) < float("inf"))
        probabilities = np.linspace(0, 1, SAMPLE_QUANTILES + 1).tolist()
        first = {r["_m"]: r for r in standard(1).where(F.col("_m") >= 0).groupBy("_m").agg(
            F.count(F.lit(1)).alias("n"),
            F.percentile_approx(F.when(finite, value), probabilities, 10_000).alias("q")
        ).collect()}
        n_rows = sum(int(r["n"]) for r in first.values())
        n_parts = _partitions.n_partitions(n_rows, npartitions)
        bounds = None
        if "auc" in o.metrics:
            bounds = [_partitions.boundaries(
                [np.asarray(first[i]["q"] or [], dtype=np.float64)] if i in first else [],
                int(first[i]["n"]) if i in first else 0, n_parts) for i in range(len(models))]
        kwargs = dict(models=bare, pairs=pairs, o=o, user=user, item=item, label=label,
                      has_truth=truth is not None, integral=integral, bounds=bounds)
        groups = standard(n_parts).groupBy("_p").applyInPandas(
            lambda key, rows: _compare_group(key, rows, **kwargs), _COMPARE_OUT).persist()
        try:
            counts = [pickle.loads(r["payload"]) for r in
                      groups.where(F.col("kind") == _C_COUNTS).orderBy("a").collect()]
            reduced = groups.where(F.col("kind").isin(_C_SUMMARY, _C_PIECE, _C_DELONG)).groupBy(
                "kind", "a", "b", "c").applyInPandas(lambda key, rows: _compare_reduce(key, rows),
                                                      _COMPARE_OUT).persist()
            try:
                results = [(r["kind"], r["a"], r["b"], r["c"], pickle.loads(r["payload"]))
                           for r in reduced.where(F.col("kind") != _C_PLACED).collect()]
                sums = [(r["a"], pickle.loads(r["payload"])) for r in
                        reduced.where(F.col("kind") == _C_PLACED).groupBy("a", "b")
                        .applyInPandas(lambda key, rows: _placement_sums(key, rows),
                                       _COMPARE_OUT).collect()]
            finally:
                reduced.unpersist()
        finally:
            groups.unpersist()
    summaries = {a: v for kind, a, _, _, v in results if kind == _C_SUMMARY}
    totals_s = [summaries.get(i, Summary()) for i in range(len(models))]
    delong = []
    if bounds is not None:
        buckets = {(a, b): v for kind, a, b, _, v in results if kind == _C_PIECE}
        for i, s in enumerate(totals_s):
            _partitions.add_pairs(s, [buckets.get((i, b), _partitions.empty_bucket(None, 0))
                                      for b in range(bounds[i].size + 1)], None)
        totals = {(a, b, c): v for kind, a, b, c, v in results if kind == _C_TOTAL}
        for p, pair in enumerate(pairs):
            sides = [[totals.get((p, side, b), (0, 0)) for b in range(bounds[m].size + 1)]
                     for side, m in enumerate(pair)]
            delong.append(_partitions.delong_of([found for q, found in sums if q == p], sides,
                                                np.sum([c[1][p] for c in counts], axis=0)))
    return _partitions.compare_finish(models, pairs, o, summaries=totals_s,
                                      users=[c[2] for c in counts],
                                      n_scored=np.sum([c[0] for c in counts], axis=0),
                                      delong=delong, baseline=baseline,
                                      n_resamples=c.n_resamples, seed=c.seed, alpha=c.alpha,
                                      correction=c.correction)
