"""The Dask engine: how rows are shuffled by user, mapped and reduced on a Dask cluster.

What the engine computes is :mod:`recmetrics._partitions`' (shared with Spark);
how it stays exact, and its memory, is told in :mod:`recmetrics.distributed`,
the public module (cluster helpers and the Dask forms of the functions).
"""
from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from . import _beyond, _pipeline, _partitions, _progress
from ._pipeline import labelled_truth
from ._ids import integral_ids
from ._options import Options
from ._request import Columns, Comparison, Evaluation, Resampling, SliceRequest

#: Score quantiles taken from each input partition to place the bucket boundaries of AUC.
SAMPLE_QUANTILES = 64


def as_dask(frame):
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


def _counted(results: list) -> list:
    """The partitions' results persisted on the cluster (same keys), the running command's bar
    counting the partitions done, with the time left, on a distributed cluster (the local
    schedulers compute them before returning)."""
    results = list(dask.persist(*results))
    try:
        from distributed import as_completed, futures_of
    except ImportError:
        return results
    futures = futures_of(results)
    if not futures:    # computed by a local scheduler already
        return results
    step = _progress.counter("evaluating partitions of users", len(futures), "partition")
    for _ in as_completed(futures):
        step(1)
    return results


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


def _run(pred, truth, *, o: Options, columns: Columns, resampling: Resampling, npartitions,
         users, path=None, beyond=None):
    pred, truth = as_dask(pred), as_dask(truth)
    ci, n_resamples = resampling.ci, resampling.n_resamples
    user, rank = columns.user, columns.rank
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      columns)
    frames = [(name, frame, keep) for (name, keep), frame in zip(inputs, (pred, truth))]
    integral = _integral_users([f[user] for _, f, _ in frames])
    # one pass over the scores: the rows to split, and the boundaries of AUC's buckets
    samples = dask.compute(*[dask.delayed(_quantiles)(p)
                             for p in pred[columns.score if rank is None else rank].to_delayed()])
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
    poisson_seed = None if ci is None else _pipeline.poisson_seed(resampling.seed)
    run = dask.delayed(_partition)
    results = [run(p, t, number, o=o, columns=columns, integral=integral, bounds=bounds,
                   seed=poisson_seed, n_resamples=n_resamples, users=users, path=path,
                   beyond=beyond)
               for number, (p, t) in enumerate(zip(pred_parts, truth_parts))]
    results = _counted(results)
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


def evaluate(pred, truth, request: Evaluation) -> pd.DataFrame:
    """:func:`recmetrics.evaluate` of Dask DataFrames (see :mod:`recmetrics.distributed`)."""
    return _partitions.evaluate_on(ENGINE, pred, truth, request)


def _distinct_items(pred: dd.DataFrame, judged: dd.DataFrame, item: str
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The distinct items of pred and of judged, in one pass, as one-column pandas frames."""
    pred_items, judged_items = dask.compute(pred[item].drop_duplicates(),
                                            judged[item].drop_duplicates())
    return pred_items.to_frame(item), judged_items.to_frame(item)


def evaluate_per_user(pred, truth, request: Evaluation, per_user_path) -> pd.DataFrame | None:
    """:func:`recmetrics.evaluate_per_user` of Dask DataFrames."""
    return _partitions.evaluate_per_user_on(ENGINE, pred, truth, request, per_user_path)


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


def _run_compare(frames: list, truth, inputs: list[dict], *, models: list, pairs: list,
                 o: Options, columns: Columns, npartitions) -> _partitions.CompareTotals:
    """:class:`recmetrics._partitions.Engine`'s ``run_compare`` on Dask (see
    :func:`recmetrics._partitions.compare_on`)."""
    user, item, label = columns.user, columns.item, columns.label
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
    results = [run(p, number, models=models, pairs=pairs, o=o, user=user, item=item,
                   label=label, has_truth=truth is not None, integral=integral, bounds=bounds)
               for number, p in enumerate(parts)]
    results = _counted(results)
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
    out = _partitions.CompareTotals([sum(s[1:], s[0]) for s in summaries], users,
                                    np.sum(n_scored, axis=0))
    if bounds is not None:
        out.buckets = buckets
        out.delong = [(sums[p], [[t for t, _ in side] for side in totals[p]],
                       np.sum([c[p] for c in counts], axis=0)) for p in range(len(pairs))]
    return out


def compare(pred_a, pred_b, truth, request: Comparison) -> pd.DataFrame:
    """:func:`recmetrics.compare` of Dask DataFrames (:func:`recmetrics._partitions.compare_on`)."""
    return _partitions.compare_on(ENGINE, pred_a, pred_b, truth, request)


def _model_pieces(result: _partitions.ComparePartial, i: int) -> _partitions.Partial:
    return _partitions.Partial(result.summaries[i], result.pieces[i])


def _run_sliced(pred, truth, *, o: Options, columns: Columns, resampling: Resampling,
                npartitions, slicing: SliceRequest):
    """``evaluate(by=...)`` on Dask: fine slices per partition, merged on the driver."""
    pred, truth, users = as_dask(pred), as_dask(truth), as_dask(slicing.users)
    ci, n_resamples = resampling.ci, resampling.n_resamples
    by = slicing.by
    user, rank = columns.user, columns.rank
    inputs = _partitions.check_inputs(pred.columns, None if truth is None else truth.columns,
                                      columns)
    frames = [(name, frame, keep) for (name, keep), frame in zip(inputs, (pred, truth))]
    sources = [(name, list(frame.columns)) for name, frame, _ in frames]
    activity = _partitions.check_slices(by, None if users is None else list(users.columns),
                                        user=user, sources=sources)
    kept = [list(dict.fromkeys(keep + [c for c in by if c in frame.columns and c != user]))
            for _, frame, keep in frames]
    integral = _integral_users([f[user] for _, f, _ in frames])
    samples = dask.compute(*[dask.delayed(_quantiles)(p)
                             for p in pred[columns.score if rank is None else rank].to_delayed()])
    n_rows = sum(n for _, n in samples)
    n_parts = _partitions.n_partitions(n_rows, npartitions)
    shuffled = []
    for (name, frame, _), keep in zip(frames, kept):
        kwargs: dict[str, Any] = dict(name=name, user=user, keep=keep, integral=integral,
                                      order=False)
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
    poisson_seed = None if ci is None else _pipeline.poisson_seed(resampling.seed)
    run = dask.delayed(_sliced_partition)
    results = _counted([
        run(p, t, u, number, o=o, columns=columns, integral=integral, bounds=bounds,
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
    return s, fine, plan, slice_buckets


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


class Dask:
    """The Dask engine (:class:`recmetrics._partitions.Engine`)."""

    name = "Dask"

    def session(self):
        return contextlib.nullcontext()

    def frames(self, pred, truth):
        return as_dask(pred), as_dask(truth)

    def labelled_truth(self, truth, label: str, *, default_label: bool):
        return labelled_truth(truth, label, default_label=default_label)

    def distinct_items(self, pred, judged, item: str):
        return _distinct_items(pred, judged, item)

    def compare_frames(self, frames: list, truth):
        return [as_dask(f) for f in frames], as_dask(truth)

    def share(self, shared, options: dict, pred):
        # the shared part as one graph key: sent to each worker once, not with every task
        return dask.delayed(functools.partial)(
            _beyond.SharedBeyond.partition_sums,
            dask.delayed(shared, pure=True, traverse=False), **options)

    run = staticmethod(_run)
    run_sliced = staticmethod(_run_sliced)
    run_compare = staticmethod(_run_compare)
    input_files = staticmethod(_input_files)


ENGINE = Dask()
