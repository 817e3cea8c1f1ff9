"""Memory and time of the Dask engine against in-memory evaluate, on a Parquet log spread over files.

    .venv/bin/python benchmarks/bench_distributed.py                  # 3*10^7 rows, 30 files
    .venv/bin/python benchmarks/bench_distributed.py --quick          # 3*10^6 rows, a smoke run
    .venv/bin/python benchmarks/bench_distributed.py --rows 1e8 --skip-memory-engine
    .venv/bin/python benchmarks/bench_distributed.py --spark          # Spark beside them, 3*10^7
    .venv/bin/python benchmarks/bench_distributed.py --spark --rows 1e5 --files 4   # a check
    .venv/bin/python benchmarks/bench_distributed.py --sizes 1e6 3e6 1e7 3e7 1e8 \
        --plot docs/dask-memory.png       # the engines guide's figure (in memory up to 3e7 rows)

Targets (issue 10): on a 3*10^7-row Parquet dataset written as 30 files, every user's rows
spread over the files, ``recmetrics evaluate --engine dask --workers 2 --memory-limit 1GiB``
gives the in-memory numbers to 1e-9, and the peak memory of its whole process tree (client,
scheduler, nannies and the two worker processes) is at most a third of in-memory
``evaluate``'s peak on the same data.

How it is measured
------------------
* The log: ``rows`` rows, ``rows / 50`` users, each row's user drawn at random (so every user
  has rows in most files), items unique per user, float32 scores (as CTR models write them:
  mostly distinct values), about 5% clicks that follow the score. Parquet row groups of
  250,000 rows; the Dask engine reads one partition per row group.
* Each run is a fresh Python process (the same command for both engines); the parent polls
  the resident memory (RSS) of that process and of all its descendants every 0.1 s and
  records the peak of the sum, and for Dask also the peak of each worker process. RSS counts
  shared libraries once per process, so the tree's figure is an upper bound.
* In memory: ``pandas.read_parquet`` of the directory, then ``recmetrics.evaluate``.
  Dask: the command ``recmetrics evaluate DIR --engine dask --workers 2 --memory-limit 1GiB``
  (run as ``recmetrics.cli.main`` in the measured process): a LocalCluster of single-threaded
  worker processes, one Dask partition per Parquet row group.
* Metrics: AUC, GAUC, P/R/HR/MAP/NDCG@10 and MRR (the default set), ties averaged.
* Exit status 1 when a table differs from in memory by more than 1e-9, or when Dask's peak is
  above a third of in memory's (at small sizes it is: three processes with pandas imported
  cost ~0.6 GiB, so the memory target only means something from ~10^7 rows).
* With ``--spark`` (issue 26) two more runs: the command
  ``recmetrics evaluate DIR --engine spark --master local[WORKERS]`` (the process tree then
  holds the JVM that PySpark starts and its Python workers), and Spark ML's
  ``BinaryClassificationEvaluator(metricName="areaUnderROC")`` on the same files, whose AUC
  is binned (``numBins`` 1000 by default: the scores are down-sampled to at most 1000
  thresholds), printed with its error against the exact global AUC.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _bench import print_table

HERE = Path(__file__).resolve().parent
ROW_GROUP = 250_000
ROWS_PER_USER = 50


def write_log(directory: Path, rows: int, files: int, seed: int = 10) -> None:
    """``rows`` rows over ``files`` Parquet files, users spread over all of them."""
    directory.mkdir(parents=True, exist_ok=True)
    n_users = max(1, rows // ROWS_PER_USER)
    start = 0
    for f in range(files):
        rng = np.random.default_rng([seed, f])
        n = rows // files + (f < rows % files)
        score = rng.random(n, dtype=np.float32)
        frame = pd.DataFrame({
            "user": rng.integers(0, n_users, n),
            "item": np.arange(start, start + n, dtype=np.int64),  # unique: one row per pair
            "score": score,
            "label": (rng.random(n) < 0.1 * score).astype(np.int8)})
        frame.to_parquet(directory / f"part-{f:03d}.parquet", row_group_size=ROW_GROUP,
                         index=False)
        start += n


# --------------------------------------------------------------------------- the measured runs


def child(engine: str, data: str, out: str, workers: int, memory_limit: str) -> None:
    """One evaluation in this process; writes its table and time to ``out`` (JSON)."""
    import recmetrics as rm

    started = time.perf_counter()
    if engine == "memory":
        table = rm.evaluate(pd.read_parquet(data))
    elif engine == "sparkml":  # Spark ML's evaluator: binned global AUC only
        from pyspark.ml.evaluation import BinaryClassificationEvaluator
        from pyspark.sql import functions as F
        from recmetrics.spark import local_session

        with local_session(f"local[{workers}]") as spark:
            frame = spark.read.parquet(data).select(
                F.col("score").cast("double").alias("rawPrediction"),
                (F.col("label") > 0).cast("double").alias("label"))
            auc = BinaryClassificationEvaluator(metricName="areaUnderROC").evaluate(frame)
        table = pd.DataFrame({"metric": ["auc"], "k": [None], "value": [auc]})
    else:  # the command line, as a user runs it
        from recmetrics.cli import main

        path = Path(out).with_suffix(".cli.json")
        flags = ["--engine", "dask", "--workers", str(workers), "--memory-limit", memory_limit] \
            if engine == "dask" else ["--engine", "spark", "--master", f"local[{workers}]"]
        status = main(["evaluate", data, *flags, "--quiet", "-o", str(path)])
        if status:
            raise SystemExit(status)
        table = pd.DataFrame(json.loads(path.read_text())["metrics"])
    seconds = time.perf_counter() - started
    Path(out).write_text(json.dumps({"seconds": seconds, "metric": table.metric.tolist(),
                                     "k": [None if pd.isna(k) else int(k) for k in table.k],
                                     "value": table.value.tolist()}))


def measure(engine: str, data: Path, workers: int, memory_limit: str) -> dict:
    """Run ``child`` in a fresh process; its table, time and peak memory (whole tree, worker)."""
    import psutil

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "table.json"
        proc = subprocess.Popen([sys.executable, __file__, "--child", engine, "--data", str(data),
                                 "--out", str(out), "--workers", str(workers),
                                 "--memory-limit", memory_limit], cwd=HERE)
        root = psutil.Process(proc.pid)
        peak = {"tree": 0, "worker": 0, "client": 0}
        done = threading.Event()

        def poll():
            while not done.is_set():
                try:
                    tree = [root] + root.children(recursive=True)
                    sizes = []
                    for p in tree:
                        try:
                            sizes.append(p.memory_info().rss)
                        except psutil.Error:
                            sizes.append(0)
                    peak["tree"] = max(peak["tree"], sum(sizes))
                    peak["client"] = max(peak["client"], sizes[0])
                    peak["worker"] = max([peak["worker"]] + sizes[1:])
                except psutil.Error:
                    pass
                time.sleep(0.1)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        code = proc.wait()
        done.set()
        thread.join()
        if code != 0:
            raise SystemExit(f"the {engine} run failed with exit status {code}")
        result = json.loads(out.read_text())
    result.update(peak_tree=peak["tree"], peak_worker=peak["worker"], peak_client=peak["client"])
    return result


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def plot(points: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for key, label, style in (("memory_tree", "in memory: the one process", "o-"),
                              ("dask_tree", "Dask: whole process tree", "s-"),
                              ("dask_worker", "Dask: largest worker", "^-")):
        xs = [p["rows"] for p in points if p.get(key)]
        ys = [p[key] / 2**30 for p in points if p.get(key)]
        if xs:
            ax.plot(xs, ys, style, label=label)
    limit = [p["limit"] for p in points][0]
    ax.axhline(limit / 2**30, color="grey", ls=":", lw=1, label="worker memory limit")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")  # 0.4, 1, 2: not 4x10^-1
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.set_xlabel("rows in the Parquet log")
    ax.set_ylabel("peak resident memory (GiB)")
    ax.set_title("recmetrics.evaluate: memory against rows (2 workers, 1 GiB each)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=3e7, help="rows of the log (default 3e7)")
    parser.add_argument("--sizes", type=float, nargs="*",
                        help="several row counts (memory against rows); overrides --rows")
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GiB")
    parser.add_argument("--quick", action="store_true", help="3*10^6 rows, a smoke run")
    parser.add_argument("--skip-memory-engine", action="store_true",
                        help="only the Dask engine (for logs too big for one process)")
    parser.add_argument("--memory-up-to", type=float, default=3e7,
                        help="run in-memory evaluate only up to this many rows (default 3e7)")
    parser.add_argument("--data", help="directory for the generated log (default: a temporary one)")
    parser.add_argument("--plot", help="write the memory-against-rows figure to this PNG")
    parser.add_argument("--spark", action="store_true",
                        help="also the Spark engine (local[WORKERS]) and Spark ML's evaluator")
    parser.add_argument("--child", choices=["memory", "dask", "spark", "sparkml"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.data, args.out, args.workers, args.memory_limit)
        return 0
    from dask.utils import parse_bytes

    sizes = [int(s) for s in (args.sizes or [3e6 if args.quick else args.rows])]
    limit = parse_bytes(args.memory_limit)
    rows_out, points, status = [], [], 0
    for rows in sizes:
        base = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rm-bench-"))
        data = base / f"log-{rows}"
        try:
            if not data.exists():
                started = time.perf_counter()
                write_log(data, rows, args.files)
                print(f"wrote {rows:,} rows in {args.files} files in "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
            dask_run = measure("dask", data, args.workers, args.memory_limit)
            point = {"rows": rows, "limit": limit, "dask_tree": dask_run["peak_tree"],
                     "dask_worker": dask_run["peak_worker"]}
            memory_run = None
            if not args.skip_memory_engine and rows <= args.memory_up_to:
                memory_run = measure("memory", data, args.workers, args.memory_limit)
                point["memory_tree"] = memory_run["peak_tree"]
            points.append(point)
            diff, ratio = float("nan"), float("nan")
            if memory_run:
                a, b = np.array(memory_run["value"]), np.array(dask_run["value"])
                diff = float(np.nanmax(np.abs(a - b)))
                ratio = dask_run["peak_tree"] / memory_run["peak_tree"]
                agree = memory_run["metric"] == dask_run["metric"] and diff <= 1e-9 and \
                    np.array_equal(np.isnan(a), np.isnan(b))
                status = status or (0 if agree and ratio <= 1 / 3 else 1)
                rows_out.append([f"{rows:,}", "in memory", f"{memory_run['seconds']:.0f} s",
                                 gib(memory_run["peak_tree"]), "", "", ""])
            rows_out.append([f"{rows:,}", f"Dask, {args.workers} workers x {args.memory_limit}",
                             f"{dask_run['seconds']:.0f} s", gib(dask_run["peak_tree"]),
                             f"{gib(dask_run['peak_worker'])} (client {gib(dask_run['peak_client'])})",
                             f"{diff:.1e}",
                             f"{ratio:.2f}" if memory_run else ""])
            if args.spark:
                spark_run = measure("spark", data, args.workers, args.memory_limit)
                ml_run = measure("sparkml", data, args.workers, args.memory_limit)
                exact = dict(zip(dask_run["metric"], dask_run["value"]))["auc"]
                against = memory_run or dask_run  # in memory when it ran, else Dask
                a, b = np.array(against["value"]), np.array(spark_run["value"])
                spark_diff = float(np.nanmax(np.abs(a - b)))
                agree = against["metric"] == spark_run["metric"] and spark_diff <= 1e-9 and \
                    np.array_equal(np.isnan(a), np.isnan(b))
                status = status or (0 if agree else 1)
                rows_out.append([f"{rows:,}", f"Spark, local[{args.workers}]",
                                 f"{spark_run['seconds']:.0f} s", gib(spark_run["peak_tree"]),
                                 f"{gib(spark_run['peak_worker'])} "
                                 f"(driver {gib(spark_run['peak_client'])})",
                                 f"{spark_diff:.1e} (vs {'memory' if memory_run else 'Dask'})",
                                 ""])
                rows_out.append([f"{rows:,}", "Spark ML BinaryClassificationEvaluator (AUC)",
                                 f"{ml_run['seconds']:.0f} s", gib(ml_run["peak_tree"]),
                                 f"{gib(ml_run['peak_worker'])}",
                                 f"AUC error {ml_run['value'][0] - exact:+.1e}", ""])
            print(f"{rows:,} rows done: {rows_out[-1]}", flush=True)
        finally:
            if not args.data:
                shutil.rmtree(base, ignore_errors=True)
    print()
    engines = "Dask and Spark engines" if args.spark else "Dask engine"
    print_table(f"recmetrics {engines} benchmark ({platform.machine()}, {os.cpu_count()} cores, "
                f"{args.files} Parquet files, users spread over all)",
                ["rows", "engine", "time", "peak memory (process tree)", "peak per worker (client)",
                 "max |Dask - memory|", "Dask / memory peak"], rows_out)
    if args.plot:
        plot(points, Path(args.plot))
        print(f"\nfigure: {args.plot}")
    return status


if __name__ == "__main__":
    sys.exit(main())
