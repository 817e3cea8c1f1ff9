r"""The same evaluation on Dask: logs larger than one machine's memory, the exact same numbers.

Install the extra (``pip install metricbook[dask]``), then pass Dask
DataFrames to :func:`recmetrics.evaluate`, :func:`recmetrics.evaluate_per_user`
or :func:`recmetrics.compare` (``npartitions=`` sets how many partitions the
users are shuffled into). This module's :func:`evaluate`,
:func:`evaluate_per_user` and :func:`compare` are those functions with every
pandas frame among the scores and the truth made a Dask frame first, so that
the Dask engine runs whatever is passed; :func:`local_cluster`,
:func:`connect` and :func:`read_parquet` set up the cluster and the input. The result is the pandas
table that in-memory evaluation gives, to rounding (the sums are added in
another order).

How it stays exact
------------------
* **Users are shuffled, not taken as they come.** A user's rows may lie in
  many files; every row of ``pred`` and ``truth`` is sent to the partition
  ``hash(canonical user id) mod P`` (Dask's shuffle, peer-to-peer on a
  distributed cluster, on disk), so each partition holds whole users, their
  unscored relevant items and the users that only ``truth`` knows. Each
  partition is evaluated by the same code as in memory
  (:mod:`recmetrics._pipeline`), and its totals (sums of per-user values, users
  counted, skipped, without predictions) are added up.
* **Ids follow the in-memory id policy.** Whether user ids compare as
  integers or as canonical text is decided once for the whole input (as in
  memory, from every user column involved), so ``7``, ``7.0`` and ``"7"``
  meet in one partition and join as they would in pandas.
* **Global AUC without a global sort.** Score boundaries are taken from a
  sample (quantiles of each input partition: they only balance the work);
  each partition collapses its scored rows to distinct (bucket, score,
  positive) counts, each bucket counts its wins and ties exactly, and the
  term across buckets (a positive beats every negative of a lower bucket) is
  added in Python integers, which do not overflow.
* **Confidence intervals** use the Poisson bootstrap of
  :func:`recmetrics.evaluate` (``bootstrap="poisson"``): user *u* weighs
  Poisson(1) in resample *b*, drawn from a hash of (u, seed, b), so each
  resample is a sum over users and the interval is the same however the users
  are partitioned, and the same as in memory.

Memory
------
A worker holds one shuffled partition at a time while it evaluates it (about
150 bytes a row; ``npartitions``, default one per 250,000 rows of ``pred``,
sets its size), the input partition it is reading (read Parquet by row group:
:func:`read_parquet`), and its share of global AUC's distinct (score, label)
counts until every partition is done (about 5 bytes a row for float32
scores; Dask spills them to disk under pressure). The user shuffle goes
through disk on a distributed cluster; :func:`local_cluster` keeps its
buffers small.

Examples
--------
>>> import dask.dataframe as dd, pandas as pd, recmetrics as rm
>>> pred = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": list("ababa"),
...                      "score": [0.9, 0.2, 0.4, 0.4, 0.7], "label": [1, 0, 0, 1, 1]})
>>> table = rm.evaluate(dd.from_pandas(pred, npartitions=2), k=1, metrics=["auc", "mrr"])
>>> table[["metric", "value"]].values.tolist() == \
...     rm.evaluate(pred, k=1, metrics=["auc", "mrr"])[["metric", "value"]].values.tolist()
True
"""
from __future__ import annotations

import contextlib
import logging
import os

import dask
import dask.dataframe as dd

from . import evaluation
from ._dask import as_dask
from ._frames import on_engine

__all__ = ["evaluate", "evaluate_per_user", "compare", "read_parquet", "local_cluster",
           "connect"]

evaluate = on_engine(evaluation.evaluate, as_dask, "Dask")
evaluate_per_user = on_engine(evaluation.evaluate_per_user, as_dask, "Dask")
compare = on_engine(evaluation.compare, as_dask, "Dask")


def read_parquet(path, *, columns=None) -> dd.DataFrame:
    """A Parquet dataset (a directory, a file, a glob or a list of them) as a Dask DataFrame.

    One partition per row group, so that what a worker reads at once is
    bounded by how the files were written, not by their size.
    """
    return dd.read_parquet(path, columns=columns, split_row_groups=True)


@contextlib.contextmanager
def local_cluster(n_workers: int | None = None, *, memory_limit="auto"):
    """A ``distributed.Client`` of a LocalCluster started here and shut down on exit.

    One single-threaded worker process per core (or ``n_workers``), each with
    ``memory_limit`` (e.g. ``"1GiB"``; "auto" shares the machine's memory).
    The buffers of Dask's peer-to-peer shuffle, 1 GiB per worker by default,
    are scaled to a sixteenth (sending) and a thirty-second (writing to disk)
    of the limit, and results wait on disk once they take 40% of it (Dask: 60%),
    so that a worker with a small limit shuffles through its disk and keeps room
    for the partition it evaluates.

    >>> with local_cluster(2, memory_limit="1GiB") as client:   # doctest: +SKIP
    ...     table = recmetrics.evaluate(read_parquet("logs/"))
    """
    from dask.utils import format_bytes, parse_bytes
    from distributed import Client, LocalCluster
    from distributed.system import MEMORY_LIMIT

    n_workers = n_workers or os.cpu_count() or 1
    limit = MEMORY_LIMIT // n_workers if memory_limit in (None, "auto") \
        else parse_bytes(memory_limit) if isinstance(memory_limit, str) else int(memory_limit)
    config = {"distributed.p2p.comm.buffer": format_bytes(max(limit // 16, 16 * 2**20)),
              "distributed.p2p.storage.buffer": format_bytes(max(limit // 32, 8 * 2**20)),
              "distributed.worker.memory.target": 0.4, "distributed.worker.memory.spill": 0.6}
    with dask.config.set(config), \
            LocalCluster(n_workers=n_workers, threads_per_worker=1, memory_limit=limit,
                         processes=True, dashboard_address=":0",
                         silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


@contextlib.contextmanager
def connect(*, scheduler: str | None = None, workers: int | None = None, memory_limit=None):
    """A Dask client for the command line: to ``scheduler``, or to a :func:`local_cluster`.

    Yields a phrase naming where the work runs. An unreachable scheduler is a
    ``ValueError`` that says so.
    """
    from distributed import Client

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as error:
            lines = str(error).strip().splitlines()
            first = lines[0] if lines else type(error).__name__
            raise ValueError(f"cannot reach the Dask scheduler at {scheduler} ({first}); check "
                             "the address and that it runs") from None
        with client:
            yield f"the Dask scheduler at {scheduler}"
        return
    workers = workers or os.cpu_count() or 1
    limit = memory_limit or "auto"
    with local_cluster(workers, memory_limit=limit):
        yield f"a local Dask cluster of {workers} worker(s), memory limit {limit} each"
