r"""The same evaluation on Spark: the exact in-memory numbers from a Spark DataFrame.

Install the extra (``pip install metricbook[spark]``; Spark needs a Java 17+
runtime), then pass Spark DataFrames to :func:`recmetrics.evaluate`,
:func:`recmetrics.evaluate_per_user` or :func:`recmetrics.compare`
(``npartitions=`` sets how many groups the users are hashed into). This
module's :func:`evaluate`, :func:`evaluate_per_user` and :func:`compare` are
those functions with every pandas frame among the scores and the truth made a
Spark DataFrame of the active session first; :func:`local_session` and
:func:`connect` start a session, :func:`from_recommendations` reads ALS's
recommendations. The result is the pandas
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
  in-memory code (:mod:`recmetrics._pipeline`, through Arrow) and returns its
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
import os
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import evaluation
from ._frames import on_engine
from ._spark import as_spark, quiet

__all__ = ["evaluate", "evaluate_per_user", "compare", "local_session", "connect",
           "from_recommendations"]

evaluate = on_engine(evaluation.evaluate, as_spark, "Spark")
evaluate_per_user = on_engine(evaluation.evaluate_per_user, as_spark, "Spark")
compare = on_engine(evaluation.compare, as_spark, "Spark")


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
    with quiet():
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
