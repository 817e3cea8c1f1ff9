"""The Spark engine: how rows are shuffled by user, mapped and reduced on Spark.

What the engine computes is :mod:`recmetrics._partitions`' (shared with Dask);
how it stays exact, and its memory, is told in :mod:`recmetrics.spark`, the
public module (sessions, the ALS adapter and the Spark forms of the functions).
"""
from __future__ import annotations

import contextlib
import importlib
import functools
import urllib.parse
import pickle
import re
import uuid
import warnings

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import _beyond, _pipeline, _partitions, _progress
from ._pipeline import Summary, labelled_truth
from ._options import Options
from ._request import Columns, Comparison, Evaluation, Resampling, SliceRequest


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
def quiet():
    """PySpark warns at every pandas UDF that it does not yet fully support pandas 3; the
    columns this module hands it are plain numbers, text and bytes."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                category=FutureWarning)
        yield


@contextlib.contextmanager
def _tracked(description: str = "Spark tasks of this evaluation"):
    """The jobs started inside, in a job group of their own, their tasks counted in the running
    command's bar (done / known so far, with the time left) by Spark's status tracker."""
    spark = SparkSession.getActiveSession()
    if spark is None:
        yield
        return
    context = spark.sparkContext
    group = f"recmetrics-{uuid.uuid4().hex}"

    def tasks() -> tuple[int, int]:
        tracker = context.statusTracker()
        done = total = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                found = tracker.getStageInfo(stage)
                if found is not None:
                    done, total = done + found.numCompletedTasks, total + found.numTasks
        return done, total

    context.setJobGroup(group, description)
    try:
        with _progress.polled(description, "task", tasks):
            yield
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


@contextlib.contextmanager
def _worker_errors():
    """A ValueError raised inside a Python worker (the in-memory checks) raised as ValueError."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import PythonException

    try:
        yield
    except (PythonException, Py4JJavaError) as error:   # collect() / toLocalIterator()
        found = [message for name, message in re.findall(r"^([\w.]+): (.*)$", str(error),
                                                         flags=re.M)
                 if _value_error(name)]
        if found:
            raise ValueError(found[-1]) from None
        raise


def _value_error(name: str) -> bool:
    """Whether the exception class a worker's traceback names is ValueError or one of
    recmetrics' ValueErrors (``recmetrics._validation.DuplicatePairs``, ``FileProblem``)."""
    if name == "ValueError":
        return True
    module, _, attribute = name.rpartition(".")
    if module != "recmetrics" and not module.startswith("recmetrics."):
        return False
    try:
        found = getattr(importlib.import_module(module), attribute, None)
    except ImportError:
        return False
    return isinstance(found, type) and issubclass(found, ValueError)


def _as_spark(frame, spark: SparkSession):
    if frame is None or isinstance(frame, DataFrame):
        return frame
    if isinstance(frame, pd.DataFrame):
        return spark.createDataFrame(frame)
    raise ValueError(f"expected a pandas or Spark DataFrame, got {type(frame).__name__}")


def _labelled_truth(truth, label: str):
    """:func:`recmetrics._pipeline.labelled_truth` for pandas or Spark: a truth of positives only
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


def _run(pred, truth, *, o: Options, columns: Columns, resampling: Resampling, npartitions,
         users, path=None, beyond=None, sliced: dict | None = None):
    pred, truth = spark_frames(pred, truth)
    ci, n_resamples = resampling.ci, resampling.n_resamples
    user, score, rank = columns.user, columns.score, columns.rank
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      columns)
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
    poisson_seed = None if ci is None else _pipeline.poisson_seed(resampling.seed)
    kwargs = dict(o=o, columns=columns, integral=integral, bounds=bounds, seed=poisson_seed,
                  n_resamples=n_resamples, users=users, path=path, beyond=beyond)
    group = _group
    if sliced is not None:
        group = _sliced_group  # type: ignore[assignment]
        attributes = None
        if sliced["users"] is not None:
            attributes, hashes = _partitions.keyed_attributes(sliced["users"], user=user,
                                                              integral=integral)
            attributes["_p"] = (hashes % np.uint64(n_parts)).astype(np.int32)
        kwargs = dict(o=o, columns=columns, integral=integral, bounds=bounds, seed=poisson_seed,
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
                          if r["kind"] == _USERS], []
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
    return s, [], extras


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


def evaluate(pred, truth, request: Evaluation) -> pd.DataFrame:
    """:func:`recmetrics.evaluate` of Spark DataFrames (see :mod:`recmetrics.spark`)."""
    return _partitions.evaluate_on(ENGINE, pred, truth, request)


def _run_sliced(pred, truth, *, o: Options, columns: Columns, resampling: Resampling,
                npartitions, slicing: SliceRequest):
    """``evaluate(by=...)`` on Spark: fine slices per group, merged on the driver; ``users=``
    (pandas, or a Spark DataFrame, gathered here) is sent to each group with its users'
    rows."""
    users = slicing.users
    if isinstance(users, DataFrame):
        users = users.toPandas()
    sources = [("pred", list(pred.columns))] + \
        ([] if truth is None else [("truth", list(truth.columns))])
    by = slicing.by
    activity = _partitions.check_slices(by, None if users is None else list(users.columns),
                                        user=columns.user, sources=sources)
    s, (fine, plan, buckets) = _run(pred, truth, o=o, columns=columns, resampling=resampling,
                                    npartitions=npartitions, users=None,
                                    sliced={"by": by, "users": users, "activity": activity})
    return s, fine, plan, buckets


def _distinct_items(pred: DataFrame, judged: DataFrame, item: str
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The distinct items of pred and of judged as one-column pandas frames."""
    return (pred.select(item).distinct().toPandas(),
            judged.select(item).distinct().toPandas())


def evaluate_per_user(pred, truth, request: Evaluation, per_user_path) -> pd.DataFrame | None:
    """:func:`recmetrics.evaluate_per_user` of Spark DataFrames: users in the order of their
    first row in ``pred`` (then ``truth``), the order of the Spark DataFrame's partitions (a
    pandas frame's row order when it was made from one)."""
    return _partitions.evaluate_per_user_on(ENGINE, pred, truth, request, per_user_path)


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


def compare(pred_a, pred_b, truth, request: Comparison) -> pd.DataFrame:
    """:func:`recmetrics.compare` of Spark DataFrames (:func:`recmetrics._partitions.compare_on`):
    the models' rows and the truth are grouped together by user with ``applyInPandas``, the
    partitions' results reduced by (kind, model or pair, bucket) in Spark and collected."""
    return _partitions.compare_on(ENGINE, pred_a, pred_b, truth, request)


def _compare_frames(frames: list, truth) -> tuple[list, object]:
    """The models' frames and the truth as Spark DataFrames of the session of the first that
    is one (pandas frames converted there)."""
    spark = next(f for f in frames + [truth] if isinstance(f, DataFrame)).sparkSession
    return [_as_spark(f, spark) for f in frames], _as_spark(truth, spark)


def _run_compare(frames: list, truth, inputs: list[dict], *, models: list, pairs: list,
                 o: Options, columns: Columns, npartitions) -> _partitions.CompareTotals:
    """:class:`recmetrics._partitions.Engine`'s ``run_compare`` on Spark."""
    user, item, label = columns.user, columns.item, columns.label
    every = frames + ([] if truth is None else [truth])
    integral = _integral_users(every, user)
    integral_items = _integral_users(every, item)
    schema = T.StructType([T.StructField(user, T.LongType() if integral else T.StringType()),
                           T.StructField(item, T.LongType() if integral_items
                                         else T.StringType()),
                           T.StructField("_s", T.DoubleType()), T.StructField("_y", T.DoubleType()),
                           T.StructField("_m", T.IntegerType()), T.StructField("_p", T.IntegerType()),
                           T.StructField("_first", T.LongType())])

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

    with _worker_errors():
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
        kwargs = dict(models=models, pairs=pairs, o=o, user=user, item=item, label=label,
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
    out = _partitions.CompareTotals([summaries.get(i, Summary()) for i in range(len(models))],
                                    [c[2] for c in counts],
                                    np.sum([c[0] for c in counts], axis=0))
    if bounds is not None:
        buckets = {(a, b): v for kind, a, b, _, v in results if kind == _C_PIECE}
        out.buckets = [[buckets.get((i, b), _partitions.empty_bucket(None, 0))
                        for b in range(bounds[i].size + 1)] for i in range(len(models))]
        totals = {(a, b, c): v for kind, a, b, c, v in results if kind == _C_TOTAL}
        out.delong = [([found for q, found in sums if q == p],
                       [[totals.get((p, side, b), (0, 0)) for b in range(bounds[m].size + 1)]
                        for side, m in enumerate(pair)],
                       np.sum([c[1][p] for c in counts], axis=0))
                      for p, pair in enumerate(pairs)]
    return out


def spark_frames(pred, truth) -> tuple:
    """pred and truth as Spark DataFrames of the session of the one that is (a pandas frame
    converted there)."""
    found = [f for f in (pred, truth) if isinstance(f, DataFrame)]
    if not found:
        raise ValueError("neither pred nor truth is a Spark DataFrame; pass Spark DataFrames, "
                         "or pandas ones to recmetrics.evaluate")
    spark = found[0].sparkSession
    return _as_spark(pred, spark), _as_spark(truth, spark)


def as_spark(frame):
    """A pandas DataFrame as a Spark DataFrame of the active session (the engine forms of
    :mod:`recmetrics.spark`); anything else as it is."""
    if not isinstance(frame, pd.DataFrame):
        return frame
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise ValueError("a pandas DataFrame was given to the Spark engine and no Spark session "
                         "is active; start one (recmetrics.spark.local_session()), or pass it "
                         "to recmetrics.evaluate, which evaluates pandas in this process")
    return spark.createDataFrame(frame)


class Spark:
    """The Spark engine (:class:`recmetrics._partitions.Engine`)."""

    name = "Spark"

    @contextlib.contextmanager
    def session(self):
        with quiet(), _tracked():
            yield

    def frames(self, pred, truth):
        return spark_frames(pred, truth)

    def labelled_truth(self, truth, label: str, *, default_label: bool):
        return _labelled_truth(truth, label)

    def distinct_items(self, pred, judged, item: str):
        return _distinct_items(pred, judged, item)

    def compare_frames(self, frames: list, truth):
        return _compare_frames(frames, truth)

    def share(self, shared, options: dict, pred):
        # the shared part as a broadcast variable: sent to each executor once
        spark = pred.sparkSession
        return functools.partial(_beyond.broadcast_partition_sums,
                                 spark.sparkContext.broadcast(shared), **options)

    run = staticmethod(_run)
    run_sliced = staticmethod(_run_sliced)
    run_compare = staticmethod(_run_compare)
    input_files = staticmethod(_input_files)


ENGINE = Spark()
