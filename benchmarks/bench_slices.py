"""Cost of slicing: ``evaluate(..., by=one column with 10 slices)`` against the unsliced call.

    .venv/bin/python benchmarks/bench_slices.py            # 2*10^6 rows (bench_frame's data)
    .venv/bin/python benchmarks/bench_slices.py --quick    # 10x fewer users

Target (issue 21): at most 1.3x the time of the unsliced call on the 2*10^6-row benchmark
data (2*10^4 users x 100 items, ~5% relevant; see bench_frame.make_frame), for a user
attribute given two ways: a column of ``pred`` (checked to hold one value per user) and a
``users=`` frame of one row per user. The three calls are timed in turn, seven rounds, and
each keeps its best time: on a shared machine, load that comes and goes then hits all three
alike.
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
    best = {name: float("inf") for name in calls}
    for _ in range(7):
        for name, call in calls.items():
            best[name] = min(best[name], best_time(call, repeat=1))
    plain, by_users, by_column = best["plain"], best["users"], best["column"]
    print(f"{len(df):,} rows, {n_users:,} users, 10 slices")
    print(f"unsliced                 {plain:8.3f} s")
    print(f"by='group', users=frame  {by_users:8.3f} s  ratio {by_users / plain:.2f} (target <= 1.3)")
    print(f"by='group', pred column  {by_column:8.3f} s  ratio {by_column / plain:.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()
