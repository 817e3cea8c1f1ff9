"""Time of the beyond-accuracy metrics against recmetrics.evaluate's default metrics, one frame.

    .venv/bin/python benchmarks/bench_beyond.py            # 2*10^6 scored rows
    .venv/bin/python benchmarks/bench_beyond.py --quick    # 10x fewer users
    .venv/bin/python benchmarks/bench_beyond.py --profile  # cProfile of evaluate(default + 9)
    .venv/bin/python benchmarks/bench_beyond.py --baselines  # baselines=True, 1,000 x 1,400
    .venv/bin/python benchmarks/bench_beyond.py --msr /tmp/msr-data   # data for bench_msr.py

The frame is bench_evaluate.py's shape: 2*10^4 users x 100 scored items (of 2*10^4, drawn with a
Zipf popularity), scores rounded to 3 decimals (so ties straddle position 10 now and then), about
5% relevant rows in a separate truth frame. The history holds 50 interactions per user drawn the
same way (10^6 rows), so co-occurrence similarity (diversity, serendipity) comes from it.
Timed: evaluate with the default metrics, rm.beyond_accuracy (all 9),
rm.evaluate(metrics=the 9 beyond metrics, history=...), rm.evaluate(metrics=default + the 9)
(issue 20's target: at most 1.5x the default's time), and the same without diversity and
serendipity (the co-occurrence counts are what costs: a sparse product over the upper block
triangle of the item x item matrix, see recmetrics._kernels.CooccurrenceSimilarity; evaluate
builds it in a background thread while it prepares the scored rows, and computes the beyond
numbers beside the default metrics). The five calls run in interleaved rounds (one of each a
round, in a rotating order, after a warm-up round), so that a slow stretch of a shared
machine hits every call alike; printed are each call's median and best time and their
ratios to the default's, and the target's ratio round by round.

With ``--baselines`` it times instead ``evaluate(metrics=the 9, history=..., baselines=True)``
against the same call without baselines on 1,000 users x 1,400 candidates each (of 2,000 items
drawn with a Zipf popularity; the history holds each user's 100 other items, 10^5 rows; 1% of
the candidates relevant), in interleaved rounds (issue 36's target: at most 2x). The baselines
re-score and rank the model's prepared rows (recmetrics._beyond.baseline_prepared: no id
coding or truth join again; the most-popular one ranked by its items' codes, one sort) and
reuse its beyond input (popularity, similarity, histories); each baseline's beyond numbers
are computed in a thread of its own, diversity and serendipity beside the other metrics.
The random baseline is one tie group of 1,400 rows per user: its diversity and serendipity
are summed in closed form (see recmetrics._kernels.expected_similarity_sum and
serendipity), not over its 10^6 pairs a user, and the costly part of its diversity (the
squared norm of the sum of each user's candidates' unit vectors, a sparse product of about
7*10^7 multiply-adds) is computed from pred's rows in the background while the model's
rows are prepared (recmetrics._beyond._whole_lists); printed too is the ratio round by
round, and the load average before and after.

With ``--msr DIR`` it writes instead what ``benchmarks/bench_msr.py`` needs to time Microsoft
Recommenders' pandas functions on the same data in another virtual environment (see there):
each user's top 10 rows (ties broken by item id, so no tie policy is involved), the history
without those (user, item) pairs (Recommenders refuses recommendations already in the
training data), the relevance labels, and the time and values of recmetrics.evaluate with
the 9 beyond metrics on exactly that input.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from statistics import median

from _bench import best_time, interleaved_times, print_table

import recmetrics as rm
from recmetrics.evaluation import DEFAULT_METRICS


def make(n_users: int, per_user: int = 100, n_items: int = 20_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.9
    weights /= weights.sum()

    def draw(rows_each):
        keys = np.log(weights)[None, :] + rng.gumbel(size=(n_users, n_items))
        items = np.argpartition(-keys, rows_each, axis=1)[:, :rows_each]
        return np.repeat(np.arange(n_users), rows_each), items.ravel()

    users, items = draw(per_user)
    pred = pd.DataFrame({"user": users, "item": items,
                         "score": np.round(rng.random(users.size), 3)})
    truth = pred[["user", "item"]].assign(label=(rng.random(users.size) < 0.05).astype(np.int64))
    h_users, h_items = draw(per_user // 2)
    history = pd.DataFrame({"user": h_users, "item": h_items})
    return pred, truth, history


def make_candidates(n_users: int = 1_000, n_candidates: int = 1_400, n_items: int = 2_000,
                    n_history: int = 100, seed: int = 0):
    """Every user's candidates (items outside the user's history, random scores), truth and
    history, as for a baseline comparison on MovieLens-sized data."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.9
    keys = np.log(weights / weights.sum())[None, :] + rng.gumbel(size=(n_users, n_items))
    order = np.argsort(-keys, axis=1)
    history_items, candidates = order[:, :n_history], order[:, n_history:n_history + n_candidates]
    pred = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_candidates),
                         "item": candidates.ravel(), "score": rng.random(candidates.size)})
    truth = pred[["user", "item"]].assign(label=(rng.random(len(pred)) < 0.01).astype(np.int64))
    history = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_history),
                            "item": history_items.ravel()})
    return pred, truth, history


def main_baselines(rounds: int) -> None:
    pred, truth, history = make_candidates()
    beyond = list(rm.BEYOND_METRICS)
    calls = {
        "rm.evaluate(metrics=the 9, history=...)":
            lambda: rm.evaluate(pred, truth, k=10, metrics=beyond, history=history),
        "the same with baselines=True":
            lambda: rm.evaluate(pred, truth, k=10, metrics=beyond, history=history,
                                baselines=True),
    }
    cpu: dict[str, list[float]] = {name: [] for name in calls}

    def timed(name, call):           # the process's CPU time too (every thread), each call
        def run():
            start = time.process_time()
            call()
            cpu[name].append(time.process_time() - start)
        return run

    load = os.getloadavg()[0]
    times = interleaved_times({name: timed(name, call) for name, call in calls.items()},
                              rounds=rounds)
    cpu = {name: t[1:] for name, t in cpu.items()}      # without the warm-up round
    base = times["rm.evaluate(metrics=the 9, history=...)"]
    base_cpu = cpu["rm.evaluate(metrics=the 9, history=...)"]
    rows = [[name, f"{median(t):.2f}", f"{median(t) / median(base):.2f}",
             f"{median(cpu[name]):.2f}", f"{median(cpu[name]) / median(base_cpu):.2f}"]
            for name, t in times.items()]
    print_table(f"baselines=True on {len(pred):,} rows: 1,000 users x 1,400 candidates "
                f"({rounds} interleaved rounds)",
                ["call", "median s", "ratio of medians", "median CPU s", "CPU ratio"], rows)
    each = [b / a for a, b in zip(base, times["the same with baselines=True"])]
    print(f"\nbaselines=True over without, round by round: "
          f"{', '.join(f'{r:.2f}' for r in each)}")
    print(f"load average (1 min) before {load:.2f}, after {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7,
                        help="interleaved rounds of the five calls (default 7)")
    parser.add_argument("--profile", action="store_true",
                        help="print where evaluate(metrics=default + the 9) spends its time")
    parser.add_argument("--msr", type=Path, metavar="DIR",
                        help="write the data and recmetrics' values for bench_msr.py to DIR")
    parser.add_argument("--baselines", action="store_true",
                        help="time baselines=True on 1,000 users x 1,400 candidates instead")
    args = parser.parse_args()
    if args.baselines:
        main_baselines(args.rounds)
        return
    pred, truth, history = make(2_000 if args.quick else 20_000)
    if args.msr is not None:
        write_msr(args.msr, pred, truth, history)
        return
    beyond = list(rm.BEYOND_METRICS)
    cheap = [m for m in beyond if m not in ("diversity", "serendipity")]
    default = list(DEFAULT_METRICS)
    if args.profile:
        import cProfile
        import pstats

        small = pred[pred.user < 100], truth[truth.user < 100]   # imports, off the profile
        rm.evaluate(*small, k=10, metrics=default + beyond, history=history)
        with cProfile.Profile() as profile:
            rm.evaluate(pred, truth, k=10, metrics=default + beyond, history=history)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
        return
    calls = {
        "rm.evaluate (default metrics)": lambda: rm.evaluate(pred, truth, k=10),
        "rm.beyond_accuracy (all 9 metrics)":
            lambda: rm.beyond_accuracy(pred, k=10, history=history, truth=truth),
        "rm.evaluate(metrics=the 9 beyond metrics)":
            lambda: rm.evaluate(pred, truth, k=10, metrics=beyond, history=history),
        "rm.evaluate(metrics=default + the 9)":
            lambda: rm.evaluate(pred, truth, k=10, metrics=default + beyond, history=history),
        "rm.evaluate(metrics=default + 7: no diversity, serendipity)":
            lambda: rm.evaluate(pred, truth, k=10, metrics=default + cheap, history=history),
    }
    times = interleaved_times(calls, rounds=args.rounds)
    base = times["rm.evaluate (default metrics)"]
    rows = [[name, f"{median(t):.2f}", f"{median(t) / median(base):.2f}",
             f"{min(t):.2f}", f"{min(t) / min(base):.2f}"] for name, t in times.items()]
    print_table(f"beyond-accuracy metrics vs evaluate on {len(pred):,} rows ({args.rounds} "
                "interleaved rounds)",
                ["call", "median s", "ratio of medians", "best s", "ratio of bests"], rows)
    calls_ratio = [a / b for a, b in zip(times["rm.evaluate(metrics=default + the 9)"], base)]
    print(f"\ndefault + the 9 over default, round by round: "
          f"{', '.join(f'{r:.2f}' for r in sorted(calls_ratio))}")


def write_msr(folder: Path, pred, truth, history) -> None:
    """bench_msr.py's input: tie-free top-10 lists, the history without them, our values."""
    ranked = pred.sort_values(["user", "score", "item"], ascending=[True, False, True])
    top = ranked.groupby("user").head(10)
    top = top.merge(truth, on=["user", "item"])
    seen = history.merge(top[["user", "item"]], on=["user", "item"], how="left", indicator=True)
    history = history[(seen["_merge"] == "left_only").to_numpy()].reset_index(drop=True)
    pred_top, truth_top = top[["user", "item", "score"]], top[["user", "item", "label"]]
    beyond = list(rm.BEYOND_METRICS)

    def ours():
        return rm.evaluate(pred_top, truth_top, k=10, metrics=beyond, history=history,
                           unseen="zero")
    seconds = best_time(ours)
    table = ours()
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "msr_data.npz", reco_user=top.user.to_numpy(), reco_item=top.item.to_numpy(),
             reco_label=top.label.to_numpy(), train_user=history.user.to_numpy(),
             train_item=history.item.to_numpy())
    (folder / "recmetrics.json").write_text(json.dumps({
        "seconds": seconds, "values": dict(zip(table.metric, table.value)),
        "rows": len(top), "history_rows": len(history)}, indent=1))
    print(f"wrote {folder}/msr_data.npz ({len(top):,} top-10 rows, {len(history):,} history "
          f"rows) and recmetrics.json (evaluate with the 9 beyond metrics: {seconds:.2f} s)")


if __name__ == "__main__":
    main()
