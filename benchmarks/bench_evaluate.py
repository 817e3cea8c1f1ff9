"""Speed and memory of recmetrics.evaluate on a DataFrame, against ranx and pytrec_eval, in one run.

    .venv/bin/python benchmarks/bench_evaluate.py            # full size: 2*10^6 rows (about 2 minutes)
    .venv/bin/python benchmarks/bench_evaluate.py --quick    # 10x fewer users, a smoke run

Targets (issue 9, "Speed"; issue 4 for memory): on 2*10^6 rows (2*10^4 users x 100 scored
items, ~5% relevant, seeded), computing AUC, GAUC, P@10, R@10, HR@10, MAP@10, MRR and NDCG@10
together from the DataFrame with ``recmetrics.evaluate`` must be

  * at least 5x faster than ranx computing ndcg@10, map@10, mrr, precision@10 and recall@10,
    its Qrels / Run construction from the same DataFrame (``from_df``) included;
  * at least 3x faster than pytrec_eval computing the same five measures, building its dicts
    from the DataFrame included;
  * within a peak of 4x the bytes of the input columns (tracemalloc, which sees numpy's and
    pandas' allocations).

The same is measured with the labels in a separate truth frame (``evaluate(pred, truth)``),
the path the command line runs: the join on (user, item) is then part of the time.

How it is measured
------------------
* One DataFrame serves all three libraries: user and item ids are strings in ``object``
  columns (ranx's ``from_df`` accepts nothing else), scores are distinct float64 (no tie
  conventions involved), labels int64 0/1.
* ranx compiles its kernels with numba on first use: it is warmed up on a tiny run first, so
  the timings exclude the JIT compilation. ranx runs with its default threads (all cores).
* Before timing, the numbers are checked to agree where the conventions match: binary labels
  make exponential and linear gain equal; MAP@10 divides by all relevant items in all three
  (recmetrics ``denominator="relevant"``, trec_eval's map_cut, ranx's AP); users without a
  relevant item are skipped by all three (ranx with ``make_comparable=True``).
* Times are the best of several runs (time.perf_counter). Memory is measured in a separate run
  of evaluate with tracemalloc, on this DataFrame and on one with int64 ids (the compact case,
  where the 4x target is hardest).
"""
from __future__ import annotations

import argparse
import gc
import platform
import tracemalloc
import warnings

import numpy as np
import pandas as pd

import recmetrics as rm
from _bench import best_time, print_table

K = 10
METRICS_RM = ["auc", "gauc", "precision", "recall", "hit_rate", "map", "mrr", "ndcg"]
METRICS_RANX = [f"ndcg@{K}", f"map@{K}", "mrr", f"precision@{K}", f"recall@{K}"]
METRICS_TREC = {f"ndcg_cut_{K}", f"map_cut_{K}", "recip_rank", f"P_{K}", f"recall_{K}"}


def make_frame(n_users: int, n_items: int, seed: int = 2024) -> pd.DataFrame:
    """n_users x n_items scored rows, ~5% relevant, distinct scores that carry some signal."""
    rng = np.random.default_rng(seed)
    n = n_users * n_items
    label = (rng.random(n) < 0.05).astype(np.int64)
    score = rng.random(n) + 0.3 * label          # distinct floats; relevant rows score higher
    users = np.repeat(np.arange(n_users), n_items)
    items = rng.permuted(np.tile(np.arange(n_items), (n_users, 1)), axis=1).ravel()
    return pd.DataFrame({"user": pd.Series(np.char.mod("u%06d", users), dtype=object),
                         "item": pd.Series(np.char.mod("i%06d", items), dtype=object),
                         "score": score, "label": label})


def run_recmetrics(df: pd.DataFrame, **options) -> pd.DataFrame:
    return rm.evaluate(df, k=K, metrics=METRICS_RM, **options)


def run_recmetrics_truth(pred: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    return rm.evaluate(pred, truth, k=K, metrics=METRICS_RM)


def run_ranx(df: pd.DataFrame) -> dict:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_df(df[df.label > 0], q_id_col="user", doc_id_col="item", score_col="label")
    run = Run.from_df(df, q_id_col="user", doc_id_col="item", score_col="score")
    return evaluate(qrels, run, METRICS_RANX, make_comparable=True)


def run_pytrec_eval(df: pd.DataFrame) -> dict:
    import pytrec_eval

    qrel: dict = {}
    relevant = df[df.label > 0]
    for user, item, label in zip(relevant.user.tolist(), relevant.item.tolist(),
                                 relevant.label.tolist()):
        qrel.setdefault(user, {})[item] = label
    run: dict = {}
    for user, item, score in zip(df.user.tolist(), df.item.tolist(), df.score.tolist()):
        run.setdefault(user, {})[item] = score
    per_user = pytrec_eval.RelevanceEvaluator(qrel, METRICS_TREC).evaluate(run)
    return {m: float(np.mean([r[m] for r in per_user.values()])) for m in METRICS_TREC}


def peak_memory(fn, *args) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def column_bytes(df: pd.DataFrame) -> int:
    """Bytes of the input columns (object columns counted deep: their str objects too)."""
    return int(df.memory_usage(index=False, deep=True).sum())


def speed(ours: float, baseline: float) -> str:
    return f"{baseline / ours:.1f}x faster" if baseline >= ours else f"{ours / baseline:.2f}x slower"


def value(table: pd.DataFrame, metric: str, k=None) -> float:
    rows = table[(table.metric == metric) & (table.k.isna() if k is None else table.k == k)]
    return float(rows.value.iloc[0])


def main() -> None:
    warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")  # inside ranx
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer users")
    args = parser.parse_args()
    n_users, n_items = (2_000 if args.quick else 20_000), 100
    df = make_frame(n_users, n_items)
    assert df.groupby("user").score.nunique().eq(n_items).all(), "scores must be distinct per user"

    # ranx: JIT-compile its numba kernels on tiny data, outside the timings
    run_ranx(make_frame(20, 10, seed=1))

    # ---- the numbers agree before anything is timed
    ours = run_recmetrics(df, gain="linear")
    theirs = run_ranx(df)
    trec = run_pytrec_eval(df)
    pairs = [("ndcg", K, f"ndcg@{K}", f"ndcg_cut_{K}"), ("map", K, f"map@{K}", f"map_cut_{K}"),
             ("mrr", None, "mrr", "recip_rank"), ("precision", K, f"precision@{K}", f"P_{K}"),
             ("recall", K, f"recall@{K}", f"recall_{K}")]
    agreement = []
    for metric, cut, ranx_name, trec_name in pairs:
        mine = value(ours, metric, cut)
        assert abs(mine - theirs[ranx_name]) < 1e-9, (metric, mine, theirs[ranx_name])
        assert abs(mine - trec[trec_name]) < 1e-9, (metric, mine, trec[trec_name])
        agreement.append(f"{metric}{'' if cut is None else f'@{cut}'} = {mine:.6f}")
    from sklearn.metrics import roc_auc_score
    assert abs(value(ours, "auc") - roc_auc_score(df.label, df.score)) < 1e-12
    assert abs(value(ours, "gauc") - rm.group_auc(df.label, df.score, df.user)) < 1e-12

    # ---- speed: default conventions (exponential gain; equal to linear on 0/1 labels)
    repeats = (3, 2, 2)
    t_ours = best_time(run_recmetrics, df, repeat=repeats[0])
    pred, truth = df[["user", "item", "score"]], df[["user", "item", "label"]]
    split = run_recmetrics_truth(pred, truth)
    assert np.allclose(split.value.to_numpy(), run_recmetrics(df).value.to_numpy(), rtol=0, atol=1e-12)
    t_split = best_time(run_recmetrics_truth, pred, truth, repeat=repeats[0])
    t_ranx = best_time(run_ranx, df, repeat=repeats[1])
    t_trec = best_time(run_pytrec_eval, df, repeat=repeats[2])

    # ---- memory: this DataFrame, and the same with int64 ids
    compact = pd.DataFrame({"user": np.repeat(np.arange(n_users, dtype=np.int64), n_items),
                            "item": df.item.str.slice(1).astype(np.int64).to_numpy(),
                            "score": df.score.to_numpy(), "label": df.label.to_numpy()})
    peak_str, bytes_str = peak_memory(run_recmetrics, df), column_bytes(df)
    peak_int, bytes_int = peak_memory(run_recmetrics, compact), column_bytes(compact)

    n = len(df)
    rows = [
        ("recmetrics.evaluate: AUC, GAUC, P@10, R@10, HR@10, MAP@10, MRR, NDCG@10",
         f"{t_ours:.2f} s", "ranx from_df + evaluate: NDCG@10, MAP@10, MRR, P@10, R@10",
         f"{t_ranx:.2f} s", speed(t_ours, t_ranx), ">= 5x faster",
         "met" if t_ranx / t_ours >= 5 else "NOT met"),
        ("the same", f"{t_ours:.2f} s", "pytrec_eval: dicts from the DataFrame + evaluate, same 5",
         f"{t_trec:.2f} s", speed(t_ours, t_trec), ">= 3x faster",
         "met" if t_trec / t_ours >= 3 else "NOT met"),
        ("the same, labels in a separate truth frame (joined on user, item)", f"{t_split:.2f} s",
         "ranx, as above", f"{t_ranx:.2f} s", speed(t_split, t_ranx), ">= 5x faster",
         "met" if t_ranx / t_split >= 5 else "NOT met"),
        ("the same, separate truth frame", f"{t_split:.2f} s", "pytrec_eval, as above",
         f"{t_trec:.2f} s", speed(t_split, t_trec), ">= 3x faster",
         "met" if t_trec / t_split >= 3 else "NOT met"),
        ("peak memory of evaluate, string (object) ids", f"{peak_str / 2**20:.0f} MiB",
         "bytes of the input columns (deep)", f"{bytes_str / 2**20:.0f} MiB",
         f"{peak_str / bytes_str:.2f}x", "<= 4x", "met" if peak_str <= 4 * bytes_str else "NOT met"),
        ("peak memory of evaluate, int64 ids", f"{peak_int / 2**20:.0f} MiB",
         "bytes of the input columns", f"{bytes_int / 2**20:.0f} MiB",
         f"{peak_int / bytes_int:.2f}x", "<= 4x", "met" if peak_int <= 4 * bytes_int else "NOT met"),
    ]
    print_table(f"recmetrics DataFrame benchmark ({platform.machine()}, {n:,} rows = {n_users:,} "
                f"users x {n_items} items, {df.label.mean():.1%} relevant; numpy {np.__version__}, "
                f"pandas {pd.__version__}; {'quick' if args.quick else 'full'} size)",
                ["recmetrics", "time / memory", "baseline", "baseline", "ratio", "target", ""], rows)
    print(f"\nAgreement checked before timing (linear gain, AP denominator = relevant, distinct "
          f"scores; ranx and pytrec_eval equal to 1e-9): {', '.join(agreement)}; AUC equals "
          "scikit-learn's and GAUC recmetrics.group_auc. ranx was JIT-warmed on tiny data first. "
          f"Times are the best of {repeats[0]} (recmetrics), {repeats[1]} (ranx) and "
          f"{repeats[2]} (pytrec_eval) runs.")


if __name__ == "__main__":
    main()
