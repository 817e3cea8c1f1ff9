"""Time of bootstrap intervals (``ci=0.95``, 1,000 resamples) against the call without them, and
against a loop of scikit-learn's weighted ``roc_auc_score`` over the same resamples (issue 36).

    .venv/bin/python benchmarks/bench_intervals.py            # 1.5*10^6 scored rows
    .venv/bin/python benchmarks/bench_intervals.py --quick    # 10x fewer users

The frame: 10^4 users, each with 100 to 200 scored candidates (about 1.5*10^6 rows), about 5%
relevant (labels in the same frame), scores rounded to 3 decimals, so ties are everywhere
(within users and across them). Timed in interleaved rounds (one call of each a round, in a
rotating order, after a warm-up round), so that a slow stretch of the shared machine falls on
every call alike:

* ``rm.evaluate(df, k=10)``: the default metrics, no interval;
* ``rm.evaluate(df, k=10, ci=0.95)``: the same with intervals from 1,000 Poisson resamples
  (issue 36's target: at most 20x the call without ``ci``);
* ``rm.evaluate(df, k=10, metrics=["auc"], ci=0.95)``: global AUC's interval alone;
* a loop of ``sklearn.metrics.roc_auc_score(label, score, sample_weight=w)`` where ``w`` gives
  each row its user's Poisson weight in the resample, the weights recmetrics draws (so the
  AUCs are those of recmetrics' resamples, checked to 1e-12 before timing). The loop runs
  ``--sklearn-resamples`` resamples (default 20) and its time is scaled linearly to 1,000
  (every resample costs the same: one weighted AUC of all rows); target: at least 20x the
  time of the ``ci`` call.
"""
from __future__ import annotations

import argparse
import os
import platform
from statistics import median

import numpy as np
import pandas as pd
from _bench import interleaved_times, print_table

import recmetrics as rm
from recmetrics._pipeline import poisson_seed, poisson_weights
from recmetrics._ids import user_hash

N_RESAMPLES = 1000


def make(n_users: int, seed: int = 0) -> pd.DataFrame:
    """n_users x 100-200 candidates, ~5% relevant, scores rounded to 3 decimals (ties)."""
    rng = np.random.default_rng(seed)
    per_user = rng.integers(100, 201, n_users)
    users = np.repeat(np.arange(n_users), per_user)
    items = np.concatenate([rng.permutation(2_000)[:m] for m in per_user])
    label = (rng.random(users.size) < 0.05).astype(np.int64)
    score = np.round(rng.random(users.size) * 0.8 + 0.2 * label, 3)
    return pd.DataFrame({"user": users, "item": items, "score": score, "label": label})


def sklearn_loop(df: pd.DataFrame, n_resamples: int, seed: int = 0) -> np.ndarray:
    """Global AUC of each of the first ``n_resamples`` Poisson resamples, by scikit-learn."""
    from sklearn.metrics import roc_auc_score

    ids, rows = np.unique(df.user.to_numpy(), return_inverse=True)
    hashes = user_hash(pd.Index(ids))
    label, score = df.label.to_numpy(), df.score.to_numpy()
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        w = poisson_weights(hashes, poisson_seed(seed), b, 1)[:, 0]
        out[b] = roc_auc_score(label, score, sample_weight=w[rows])
    return out


def ours_first(df: pd.DataFrame, n_resamples: int) -> np.ndarray:
    """recmetrics' global AUC of the same resamples (the values behind its interval)."""
    from recmetrics._pipeline import Prepared, user_auc_sums

    prep = Prepared(df, None, user="user", item="item", score="score", label="label",
                    ties="average")
    sums = user_auc_sums(prep.scores, prep.grades > 0, prep.lists, user_hash(prep.users),
                         poisson_seed(0), n_resamples)
    return (sums[:, 0] + sums[:, 1]) / (2 * sums[:, 2] * sums[:, 3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds of the calls (default 3)")
    parser.add_argument("--sklearn-resamples", type=int, default=20,
                        help="resamples the scikit-learn loop runs (scaled to 1,000; default 20)")
    args = parser.parse_args()
    df = make(1_000 if args.quick else 10_000)
    m = args.sklearn_resamples
    agree = np.abs(sklearn_loop(df, m) - ours_first(df, m)).max()
    assert agree < 1e-12, agree
    calls = {
        "rm.evaluate(df, k=10)": lambda: rm.evaluate(df, k=10),
        "rm.evaluate(df, k=10, ci=0.95)": lambda: rm.evaluate(df, k=10, ci=0.95),
        "rm.evaluate(df, k=10, metrics=['auc'], ci=0.95)":
            lambda: rm.evaluate(df, k=10, metrics=["auc"], ci=0.95),
        f"sklearn roc_auc_score loop, {m} resamples": lambda: sklearn_loop(df, m),
    }
    times = interleaved_times(calls, rounds=args.rounds)
    names = list(calls)
    base, ci, auc_only, loop = (times[n] for n in names)
    scale = N_RESAMPLES / m
    rows = [[name, f"{median(t):.2f}", f"{min(t):.2f}"] for name, t in times.items()]
    rows.append([f"sklearn loop scaled to {N_RESAMPLES:,} resamples (x{scale:g})",
                 f"{median(loop) * scale:.1f}", f"{min(loop) * scale:.1f}"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores "
          f"({platform.processor() or platform.platform()}), python {platform.python_version()}, "
          f"numpy {np.__version__}; load average before: {os.getloadavg()[0]:.1f}\n")
    print_table(f"intervals on {len(df):,} rows, {df.user.nunique():,} users, "
                f"{N_RESAMPLES:,} resamples ({args.rounds} interleaved rounds)",
                ["call", "median s", "best s"], rows)
    ratio = [c / b for c, b in zip(ci, base)]
    speedup = [l_ * scale / c for l_, c in zip(loop, ci)]
    print(f"\nci / no ci, round by round: {', '.join(f'{r:.1f}' for r in ratio)} "
          f"(median {median(ratio):.1f}x; target at most 20x)")
    print(f"sklearn loop (scaled) / ci call, round by round: "
          f"{', '.join(f'{r:.0f}' for r in speedup)} (median {median(speedup):.0f}x; "
          f"target at least 20x)")
    print(f"AUC-only ci call / no ci: {median(auc_only) / median(base):.1f}x; "
          f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
