"""Cost of slicing: ``evaluate(..., by=one column with 10 slices)`` against the unsliced call.

    .venv/bin/python benchmarks/bench_slices.py            # 2*10^6 rows (bench_frame's data)
    .venv/bin/python benchmarks/bench_slices.py --quick    # 10x fewer users

Target (issue 21): at most 1.3x the time of the unsliced call on the 2*10^6-row benchmark
data (2*10^4 users x 100 items, ~5% relevant; see bench_frame.make_frame), for a user
attribute given two ways: a column of ``pred`` (checked to hold one value per user) and a
``users=`` frame of one row per user. The three calls are timed in turn, --rounds rounds (11), and
each keeps its best time: on a shared machine, load that comes and goes then hits all three
alike. The median of the per-round ratios (sliced / unsliced in the same round) is printed too.
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import recmetrics as rm
from _bench import best_time
from bench_frame import K, METRICS_RM, make_frame


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    n_users = 2_000 if args.quick else 20_000
    df = make_frame(n_users, 100)
    rng = np.random.default_rng(21)
    group = rng.integers(0, 10, n_users)
    users = pd.DataFrame({"user": np.char.mod("u%06d", np.arange(n_users)), "group": group})
    with_column = df.assign(group=np.repeat(group, 100))
    calls = {"plain": lambda: rm.evaluate(df, k=K, metrics=METRICS_RM),
             "users": lambda: rm.evaluate(df, k=K, metrics=METRICS_RM, by="group", users=users),
             "column": lambda: rm.evaluate(with_column, k=K, metrics=METRICS_RM, by="group")}
    times = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            times[name].append(best_time(call, repeat=1))
    plain = np.array(times["plain"])
    print(f"{len(df):,} rows, {n_users:,} users, 10 slices, {args.rounds} rounds")
    print(f"{'call':<26} {'best':>8} {'best / unsliced best':>21} {'median per-round ratio':>23}")
    print(f"{'unsliced':<26} {plain.min():7.3f}s")
    for name, label in (("users", "by='group', users=frame"), ("column", "by='group', pred column")):
        own = np.array(times[name])
        print(f"{label:<26} {own.min():7.3f}s {own.min() / plain.min():21.2f} "
              f"{np.median(own / plain):23.2f}")
    print("target: at most 1.3x the unsliced call")

if __name__ == "__main__":
    main()
