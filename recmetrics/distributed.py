r"""The same evaluation on Dask: logs larger than one machine's memory, the exact same numbers.

Install the extra (``pip install metricbook[dask]``), then pass Dask
DataFrames to :func:`recmetrics.evaluate` or
:func:`recmetrics.evaluate_per_user` (they come here), or call the functions
of this module, which also take ``npartitions``. The result is the pandas
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
  (:mod:`recmetrics._engine`), and its totals (sums of per-user values, users
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
import dataclasses
import functools
import logging
import os

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from . import _beyond, _engine, _partitions
from ._engine import check_options, check_rank, labelled_truth
from ._ids import integral_ids
from ._options import Options, conventions_of
from ._validation import (Adjustment, Denominator, EvalTies, Gain, GaucWeight, Ideal, NoRelevant,
                          PrDenominator, Unscored, Unseen)

__all__ = ["evaluate", "evaluate_per_user", "compare", "read_parquet", "local_cluster",
           "connect"]

#: Score quantiles taken from each input partition to place the bucket boundaries of AUC.
SAMPLE_QUANTILES = 64


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


def _as_dask(frame):
    if frame is None or type(frame).__module__.startswith("dask"):
        return frame
    if isinstance(frame, pd.DataFrame):
        return dd.from_pandas(frame, npartitions=1)
    raise ValueError(f"expected a pandas or Dask DataFrame, got {type(frame).__name__}")


def _integral_users(columns) -> bool:
    """The id policy's choice for the user columns, decided on the whole input."""
    kinds = [c.dtype for c in columns]
    if any(pd.api.types.is_bool_dtype(k) for k in kinds):
        return False            # boolean ids are the text True / False
    if all(pd.api.types.is_integer_dtype(k) and not (k.kind == "u" and k.itemsize >= 8)
           for k in kinds):
        return True             # uint64 is int64 only if every value fits: looked at below
    if not all(pd.api.types.is_numeric_dtype(k) for k in kinds):
        return False
    parts = [dask.delayed(integral_ids)(p) for c in columns for p in c.to_delayed()]
    return all(dask.compute(*parts))


def _keyed(part: pd.DataFrame, *, name: str, user: str, keep: list[str], integral: bool,
           order: bool, partition_info=None) -> pd.DataFrame:
    """Rows with canonical user ids, the shuffle key ``_h`` and, if asked, an order key."""
    out, hashes = _partitions.keyed_rows(part, name=name, user=user, keep=keep,
                                         integral=integral)
    out["_h"] = hashes
    if order:
        number = partition_info["number"] if partition_info else 0
        out["_first"] = (np.int64(number) << np.int64(32)) + np.arange(len(part), dtype=np.int64)
    return out


def _quantiles(scores: pd.Series) -> tuple[np.ndarray, int]:
    """Quantiles of one input partition's finite scores, and its number of rows."""
    values = pd.to_numeric(scores, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    n = values.size
    values = values[np.isfinite(values)]
    if values.size == 0:
        return values, n
    return np.quantile(values, np.linspace(0, 1, SAMPLE_QUANTILES + 1)), n


def _partition(pred: pd.DataFrame, truth: pd.DataFrame | None, number: int, **kwargs
               ) -> _partitions.Partial:
    """Evaluate one partition of whole users (see :func:`recmetrics._partitions.evaluate_group`)."""
    return _partitions.evaluate_group(pred, truth, number, **kwargs)


def _bucket_tasks(results: list, n_buckets: int, seed, n_resamples: int) -> list:
    """One task per (partition, bucket) taking that bucket's piece out of the partition's
    result, and one per bucket counting its pairs, all in one graph layer.

    (A delayed ``r[1][b]`` per piece would make a graph layer each, and a graph of
    many megabytes: 166 MiB at 10^8 rows.)
    """
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph
    from dask.typing import Key

    token = dask.base.tokenize([r.key for r in results], n_buckets, seed, n_resamples)
    piece, bucket = f"recmetrics-auc-piece-{token}", f"recmetrics-auc-bucket-{token}"
    layer: dict[Key, object] = {}
    for i, r in enumerate(results):
        for b in range(n_buckets):
            layer[(piece, i, b)] = (_piece_of, r.key, b)
    for b in range(n_buckets):
        layer[(bucket, b)] = (_partitions.bucket_counts,
                              [(piece, i, b) for i in range(len(results))], seed, n_resamples)
    graph = HighLevelGraph.from_collections(bucket, layer, dependencies=results)
    return [Delayed((bucket, b), graph, layer=bucket) for b in range(n_buckets)]


def _piece_of(result: _partitions.Partial, b: int):
    return result.pieces[b]


def _run(pred, truth, *, o: Options, names: dict, ci, n_resamples, seed, npartitions, users,
         path=None, beyond=None):
    pred, truth = _as_dask(pred), _as_dask(truth)
    user, rank = names["user"], names.get("rank")
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      names)
    frames = [(name, frame, keep) for (name, keep), frame in zip(inputs, (pred, truth))]
    integral = _integral_users([f[user] for _, f, _ in frames])
    # one pass over the scores: the rows to split, and the boundaries of AUC's buckets
    samples = dask.compute(*[dask.delayed(_quantiles)(p)
                             for p in pred[names["score"] if rank is None else rank].to_delayed()])
    n_rows = sum(n for _, n in samples)
    n_parts = _partitions.n_partitions(n_rows, npartitions)
    order = users == "collect"
    shuffled = []
    for name, frame, keep in frames:
        kwargs = dict(name=name, user=user, keep=keep, integral=integral, order=order)
        meta = _keyed(frame._meta, **kwargs)
        keyed = frame.map_partitions(_keyed, **kwargs, meta=meta)
        shuffled.append(keyed.shuffle(on="_h", npartitions=n_parts).to_delayed())
    pred_parts = shuffled[0]
    truth_parts = shuffled[1] if truth is not None else [None] * n_parts
    bounds = None
    if "auc" in o.metrics:
        bounds = _partitions.boundaries([q for q, _ in samples], n_rows, n_parts)
    poisson_seed = None if ci is None else _engine.poisson_seed(seed)
    run = dask.delayed(_partition)
    results = [run(p, t, number, o=o, names=names, integral=integral, bounds=bounds,
                   seed=poisson_seed, n_resamples=n_resamples, users=users, path=path,
                   beyond=beyond)
               for number, (p, t) in enumerate(zip(pred_parts, truth_parts))]
    summaries = [r.summary for r in results]
    tables = [r.table for r in results] if users is not None else []
    extras = [r.beyond for r in results] if beyond is not None else []
    buckets = []
    if bounds is not None:
        buckets = _bucket_tasks(results, bounds.size + 1, poisson_seed, n_resamples)
    summaries, tables, buckets, extras = dask.compute(summaries, tables, buckets, extras)
    s = _partitions.total(summaries)
    if buckets:
        _partitions.add_pairs(s, buckets, poisson_seed)
    return s, tables, extras


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
    """:func:`recmetrics.evaluate` on Dask DataFrames: the same tidy pandas table.

    Every option is :func:`recmetrics.evaluate`'s, with ``bootstrap`` fixed
    to ``"poisson"`` (the default here; ``"multinomial"`` needs every user in
    one process and is refused). ``by=`` (columns of ``pred`` or ``truth``, of
    ``users=``, a pandas or Dask frame, or "activity") gives the sliced table
    of :func:`recmetrics.evaluate`, exactly: each partition sums its users'
    values per *fine slice* (the users sharing every raw value), and the fine
    slices of all partitions are merged into the table's slices once every
    value is known. ``npartitions`` sets how many partitions the
    users are shuffled into (default: one per 250,000 rows, ``_partitions.PARTITION_ROWS``,
    of ``pred``); a worker evaluates one at a time (about 150 bytes a row), so
    it bounds a worker's memory. The
    computation runs on the current Dask scheduler (a ``distributed.Client``
    if one is active; :func:`local_cluster` starts one).

    The table's ``attrs["inputs"]`` holds what was read: ``pred_rows``,
    ``pred_users`` and, with ``truth``, ``truth_rows`` and ``truth_users``.
    Errors found inside a partition (a duplicate pair, a missing id, a
    non-numeric score) are raised with the in-memory message, whose counts
    and row numbers are then those of the partition.

    The beyond-accuracy metrics (``metrics=[..., "novelty", ...]`` with
    ``history=``, a pandas DataFrame) are exact distributed sums: every
    partition adds its users' per-item exposure (coverage, entropy, Gini,
    personalization) and per-user values (novelty, diversity, serendipity,
    ARP, APLT), with the history's popularity, long tail, similarity and
    each user's history items built once and shared by every partition.
    Personalization has no interval here (a user's value depends on every
    other user's list: refused with ``ci``); ``baselines`` are pandas-only.
    """
    b, o, ci, n_resamples, seed = _partitions.evaluate_options(
        metrics, k, conventions_of(locals()), dict(history=history, catalog=catalog,
                                                   item_features=item_features,
                                                   head_share=head_share, unseen=unseen),
        ci=ci, n_resamples=n_resamples, seed=seed, bootstrap=bootstrap, rank=rank,
        engine="Dask")
    truth, positives_only = labelled_truth(truth, label, default_label=label == "label")
    names = {"user": user, "item": item, "score": score, "label": label, "rank": rank}
    if by is not None or users is not None:
        _partitions.refuse_history_activity(by, history, "Dask")
        if b.metrics:
            raise ValueError("by= with the beyond-accuracy metrics is not supported on Dask "
                             "yet; evaluate them without by=, or in memory (pandas)")
        return _run_sliced(pred, truth, users, o=o, names=names, ci=ci, n_resamples=n_resamples,
                           seed=seed, npartitions=npartitions, by=by,
                           min_slice_size=min_slice_size, positives_only=positives_only)
    shared, beyond = None, None
    if b.metrics:
        pred, truth = _as_dask(pred), _as_dask(truth)
        shared, options = _partitions.beyond_setup(
            b, o, pred, truth, names, _distinct_items, ci=ci, seed=seed,
            n_resamples=n_resamples, engine="Dask")
        # the shared part as one graph key: sent to each worker once, not with every task
        beyond = dask.delayed(functools.partial)(
            _beyond.SharedBeyond.partition_sums,
            dask.delayed(shared, pure=True, traverse=False), **options)
    s, _, extras = _run(pred, truth, o=o, names=names, ci=ci, n_resamples=n_resamples,
                        seed=seed, npartitions=npartitions, users=None, beyond=beyond)
    return _partitions.evaluate_table(s, o, b, shared, extras, ci=ci, n_resamples=n_resamples,
                                      truth_given=truth is not None,
                                      positives_only=positives_only, rank=rank, score=score)


def _distinct_items(pred: dd.DataFrame, judged: dd.DataFrame, item: str
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The distinct items of pred and of judged, in one pass, as one-column pandas frames."""
    pred_items, judged_items = dask.compute(pred[item].drop_duplicates(),
                                            judged[item].drop_duplicates())
    return pred_items.to_frame(item), judged_items.to_frame(item)


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
    """:func:`recmetrics.evaluate_per_user` on Dask DataFrames.

    Returns the per-user pandas table, users in the order of their first row
    in ``pred`` (then ``truth``), as in memory. With ``per_user_path`` each
    partition writes its users to ``per_user_path/part.NNNNN.parquet``
    instead (a directory every worker can write to), nothing is gathered,
    and None is returned; the rows then come in no particular order.
    """
    o = check_options(k=k, metrics=metrics, **conventions_of(locals()))
    _partitions.refuse_unscored(o, "Dask")
    check_rank(rank, o)
    truth, _ = labelled_truth(truth, label, default_label=label == "label")
    names = {"user": user, "item": item, "score": score, "label": label, "rank": rank}
    o_users, folder = _partitions.per_user_plan(o, per_user_path, _input_files(pred, truth))
    if folder is None:
        _, tables, _ = _run(pred, truth, o=o_users, names=names, ci=None, n_resamples=0, seed=0,
                            npartitions=npartitions, users="collect")
        return _partitions.user_rows(tables)
    with folder as path:
        _run(pred, truth, o=o_users, names=names, ci=None, n_resamples=0, seed=0,
             npartitions=npartitions, users="write", path=path)
    return None


def _input_files(*frames) -> list[str]:
    """The files and folders the Dask DataFrames read (their read_parquet / read_csv paths),
    as far as the expression tells; the per-user output must not be one of them."""
    found: list[str] = []
    for frame in frames:
        expr = getattr(frame, "expr", None)
        if expr is None:
            continue
        for node in expr.walk():
            for name in ("path", "filename", "urlpath"):
                try:
                    given = node.operand(name)
                except (KeyError, AttributeError, ValueError, IndexError):
                    continue
                for path in [given] if isinstance(given, (str, os.PathLike)) else (
                        given if isinstance(given, (list, tuple)) else ()):
                    if isinstance(path, (str, os.PathLike)):
                        found.append(os.fspath(path))
    return found


def _standard(part: pd.DataFrame, *, order: int, partition_info=None, **kwargs) -> pd.DataFrame:
    """One input partition of a comparison in the standard columns, with the shuffle key."""
    out, hashes = _partitions.standard_rows(part, **kwargs)
    out["_h"] = hashes
    number = partition_info["number"] if partition_info else 0
    out["_first"] = (np.int64(order) << np.int64(56)) + (np.int64(number) << np.int64(32)) \
        + np.arange(len(part), dtype=np.int64)
    return out


def _placement_layers(results: list, pairs: list, bounds: list) -> tuple[list, list]:
    """Tasks of DeLong's placements: per (pair, side, bucket) the placements within the bucket,
    per (pair, partition) the sums of :func:`recmetrics._partitions.placement_sums`. Returns
    (per pair and side, the buckets' totals) and (per pair, the partitions' sums)."""
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph
    from dask.typing import Key

    token = dask.base.tokenize([r.key for r in results], pairs, [b.tolist() for b in bounds])
    piece, bucket, part = (f"recmetrics-delong-{name}-{token}"
                           for name in ("piece", "bucket", "partition"))
    layer: dict[Key, object] = {}
    n_parts = len(results)
    for p, (i, j) in enumerate(pairs):
        for side, model in enumerate((i, j)):
            n_buckets = bounds[model].size + 1
            for b in range(n_buckets):
                for number, r in enumerate(results):
                    layer[(piece, p, side, b, number)] = (_delong_piece, r.key, p, side, b,
                                                          number)
                layer[(bucket, p, side, b)] = (_partitions.placement_bucket,
                                               [(piece, p, side, b, n) for n in range(n_parts)])
        for number, r in enumerate(results):
            sides = [[(bucket, p, side, b) for b in range(bounds[m].size + 1)]
                     for side, m in enumerate((i, j))]
            layer[(part, p, number)] = (_delong_sums, r.key, p, number, sides)
    graph = HighLevelGraph.from_collections(part, layer, dependencies=results)
    totals = [[[Delayed((bucket, p, side, b), graph, layer=part) for b in range(bounds[m].size + 1)]
               for side, m in enumerate(pair)] for p, pair in enumerate(pairs)]
    sums = [[Delayed((part, p, number), graph, layer=part) for number in range(n_parts)]
            for p in range(len(pairs))]
    return totals, sums


def _delong_piece(result: _partitions.ComparePartial, p: int, side: int, b: int, number: int):
    return number, result.delong[p, side][b]


def _delong_sums(result: _partitions.ComparePartial, p: int, number: int, sides: list) -> dict:
    found = [[(b, out[number]) for b, (_, out) in enumerate(side) if number in out]
             for side in sides]
    return _partitions.placement_sums((found[0], found[1]), int(result.rows[p][2]))


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
    """:func:`recmetrics.compare` on Dask DataFrames: the same table, the same tests.

    Every model's rows and the truth are shuffled together by user, so each
    partition holds whole users; each model is evaluated there on the users
    every model scored, and the totals are added. The per-user values of the
    shared users (a few numbers a user and metric) are gathered in this
    process, where the paired tests run exactly as in memory (the same draws
    for the same ``seed``). Global AUC's pair counts and DeLong's test come
    from score buckets: each row's placement among the pair's rows is found
    within its bucket, and the buckets below or above add a known offset, so
    the variance is exact. Options are :func:`recmetrics.compare`'s, without
    ``by=`` (``npartitions`` as in :func:`evaluate`).
    """
    o = check_options(k=k, metrics=metrics, **conventions_of(locals()))
    _partitions.refuse_unscored(o, "Dask")
    c = _partitions.check_compare(pred_a, pred_b, truth, o, score=score, rank=rank,
                                  n_resamples=n_resamples, seed=seed, alpha=alpha,
                                  correction=correction, baseline=baseline)
    models, pairs = c.models, c.pairs
    truth, _ = labelled_truth(truth, label, default_label=label == "label")
    frames = [_as_dask(m.frame) for m in models]
    truth = _as_dask(truth)
    inputs = _partitions.compare_inputs(models, [f.columns for f in frames],
                                        None if truth is None else truth.columns,
                                        user=user, item=item, label=label)
    every = frames + ([] if truth is None else [truth])
    integral = _integral_users([f[user] for f in every])
    integral_items = _integral_users([f[item] for f in every])
    standard = []
    for order, (frame, kwargs) in enumerate(zip(every, inputs)):
        kwargs = dict(kwargs, user=user, item=item, integral_users=integral,
                      integral_items=integral_items)
        meta = _standard(frame._meta, order=order, **kwargs)
        standard.append(frame.map_partitions(_standard, order=order, **kwargs, meta=meta))
    rows = dd.concat(standard)
    # one pass over the scores: the rows to split, and each model's bucket boundaries
    samples = dask.compute(*[[dask.delayed(_quantiles)(p) for p in s["_s"].to_delayed()]
                             for s in standard[:len(models)]])
    n_rows = sum(n for model in samples for _, n in model)
    n_parts = _partitions.n_partitions(n_rows, npartitions)
    bounds = None
    if "auc" in o.metrics:
        bounds = [_partitions.boundaries([q for q, _ in model], sum(n for _, n in model),
                                         n_parts) for model in samples]
    parts = rows.shuffle(on="_h", npartitions=n_parts).to_delayed()
    run = dask.delayed(_partitions.compare_group)
    bare = [dataclasses.replace(m, frame=None) for m in models]  # the tasks need no frame
    results = [run(p, number, models=bare, pairs=pairs, o=o, user=user, item=item,
                   label=label, has_truth=truth is not None, integral=integral, bounds=bounds)
               for number, p in enumerate(parts)]
    summaries = [[r.summaries[i] for r in results] for i in range(len(models))]
    users = [r.users for r in results]
    n_scored = [r.n_scored for r in results]
    counts = [r.rows for r in results]
    buckets: list = []
    totals: list = []
    sums: list = []
    if bounds is not None:
        for i in range(len(models)):
            getter = [dask.delayed(_model_pieces)(r, i) for r in results]
            buckets.append(_bucket_tasks(getter, bounds[i].size + 1, None, 0))
        totals, sums = _placement_layers(results, pairs, bounds)
    summaries, users, n_scored, counts, buckets, totals, sums = dask.compute(
        summaries, users, n_scored, counts, buckets, totals, sums)
    totals_s = [sum(s[1:], s[0]) for s in summaries]
    delong = []
    for i, s in enumerate(totals_s):
        if bounds is not None:
            _partitions.add_pairs(s, buckets[i], None)
    for p in range(len(pairs) if bounds is not None else 0):
        delong.append(_partitions.delong_of(sums[p], [[t for t, _ in side] for side in totals[p]],
                                            np.sum([c[p] for c in counts], axis=0)))
    return _partitions.compare_finish(models, pairs, o, summaries=totals_s, users=users,
                                      n_scored=np.sum(n_scored, axis=0), delong=delong,
                                      baseline=baseline, n_resamples=c.n_resamples, seed=c.seed,
                                      alpha=c.alpha, correction=c.correction)


def _model_pieces(result: _partitions.ComparePartial, i: int) -> _partitions.Partial:
    return _partitions.Partial(result.summaries[i], result.pieces[i])


def _run_sliced(pred, truth, users, *, o: Options, names: dict, ci, n_resamples, seed,
                npartitions, by, min_slice_size: int, positives_only: bool) -> pd.DataFrame:
    """``evaluate(by=...)`` on Dask: fine slices per partition, merged on the driver."""
    pred, truth, users = _as_dask(pred), _as_dask(truth), _as_dask(users)
    user, rank = names["user"], names.get("rank")
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      names)
    frames = [(name, frame, keep) for (name, keep), frame in zip(inputs, (pred, truth))]
    sources = [(name, list(frame.columns)) for name, frame, _ in frames]
    by, min_slice_size, activity = _partitions.check_slices(
        by, None if users is None else list(users.columns), min_slice_size, user=user,
        sources=sources)
    kept = [list(dict.fromkeys(keep + [c for c in by if c in frame.columns and c != user]))
            for _, frame, keep in frames]
    integral = _integral_users([f[user] for _, f, _ in frames])
    samples = dask.compute(*[dask.delayed(_quantiles)(p)
                             for p in pred[names["score"] if rank is None else rank].to_delayed()])
    n_rows = sum(n for _, n in samples)
    n_parts = _partitions.n_partitions(n_rows, npartitions)
    shuffled = []
    for (name, frame, _), keep in zip(frames, kept):
        kwargs = dict(name=name, user=user, keep=keep, integral=integral, order=False)
        keyed = frame.map_partitions(_keyed, **kwargs, meta=_keyed(frame._meta, **kwargs))
        shuffled.append(keyed.shuffle(on="_h", npartitions=n_parts).to_delayed())
    truth_parts = shuffled[1] if truth is not None else [None] * n_parts
    users_parts: list = [None] * n_parts
    if users is not None:
        meta = _attributes(users._meta, user=user, integral=integral)
        keyed = users.map_partitions(_attributes, user=user, integral=integral, meta=meta)
        users_parts = keyed.shuffle(on="_h", npartitions=n_parts).to_delayed()
    bounds = None
    if "auc" in o.metrics:
        bounds = _partitions.boundaries([q for q, _ in samples], n_rows, n_parts)
    poisson_seed = None if ci is None else _engine.poisson_seed(seed)
    run = dask.delayed(_sliced_partition)
    results = dask.persist(*[
        run(p, t, u, number, o=o, names=names, integral=integral, bounds=bounds,
            seed=poisson_seed, n_resamples=n_resamples, by=by)
        for number, (p, t, u) in enumerate(zip(shuffled[0], truth_parts, users_parts))])
    wholes = [dask.delayed(_whole_of)(r) for r in results]
    buckets: list = []
    if bounds is not None:
        buckets = _bucket_tasks(wholes, bounds.size + 1, poisson_seed, n_resamples)
    summaries, keys, fine, buckets = dask.compute([w.summary for w in wholes],
                                                  [r.keys for r in results],
                                                  [r.summaries for r in results], buckets)
    s = _partitions.total(summaries)
    if buckets:
        _partitions.add_pairs(s, buckets, poisson_seed)
    plan = _partitions.slice_plan(keys, fine, by, activity)
    slice_buckets: list = []
    if bounds is not None:
        count = dask.delayed(_partitions.slice_bucket_counts)
        slice_buckets = list(dask.compute(*[
            count([dask.delayed(_fine_pieces)(r, b) for r in results], plan.of_fine,
                  plan.slicing.n_slices, poisson_seed, n_resamples)
            for b in range(bounds.size + 1)]))
    return _partitions.finish_sliced(s, fine, plan, slice_buckets, o, ci=ci, seed=poisson_seed,
                                     min_slice_size=min_slice_size,
                                     positives_only=positives_only, rank=rank,
                                     score=names["score"])


def _attributes(part: pd.DataFrame, *, user: str, integral: bool) -> pd.DataFrame:
    out, hashes = _partitions.keyed_attributes(part, user=user, integral=integral)
    out["_h"] = hashes
    return out


def _sliced_partition(pred, truth, users, number, **kwargs) -> _partitions.SlicedPartial:
    if users is not None:
        users = users.drop(columns="_h")
    return _partitions.evaluate_sliced_group(pred.drop(columns="_h"),
                                             None if truth is None else truth.drop(columns="_h"),
                                             users, number, **kwargs)


def _whole_of(result: _partitions.SlicedPartial) -> _partitions.Partial:
    return result.whole


def _fine_pieces(result: _partitions.SlicedPartial, b: int) -> list:
    return [p[b] for p in result.pieces]
