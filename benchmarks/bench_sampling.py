"""Speed of recmetrics.sampling at the issue's size: 10^6 users, m = 100 sampled negatives.

    .venv/bin/python benchmarks/bench_sampling.py            # full sizes (about two minutes)
    .venv/bin/python benchmarks/bench_sampling.py --quick    # 10x fewer users, a smoke run

Target (issue 5): every step of a sampled evaluation of 10^6 users with m = 100 runs "in
seconds": drawing the sampled ranks, the expected sampled metric, and both corrections.
Baselines, where one fits, are the obvious ways of doing the same thing:

  sample_ranks             vs drawing m item ids per user with Generator.choice(replace=False)
                           in a Python loop (timed on 2,000 users, scaled per user)
  expected_sampled_metric  vs scipy.stats.hypergeom.cdf / .pmf for every user (timed on a
                           subset, scaled per user)
  correct_sampled_metric   vs the naive sampled metric (a mean over users), for scale; the BV fit
                           costs the same for any number of users (it works over exact ranks),
                           timed on a first call (nothing cached)

Timings are the best of several runs (time.perf_counter) on the same data.
"""
from __future__ import annotations

import argparse
import platform

import numpy as np
from scipy import stats

from recmetrics import sampling
from _bench import best_time, print_table


def choice_loop(exact_ranks, n_items, n_negatives, seed):
    """The literal way: per user, draw m of the n - 1 other items by id and count those above."""
    rng = np.random.default_rng(seed)
    out = np.empty(len(exact_ranks), dtype=np.int64)
    for u, rank in enumerate(exact_ranks):
        chosen = rng.choice(n_items - 1, size=n_negatives, replace=False)   # ids 0..n-2, 0..R-2 above
        out[u] = 1 + np.count_nonzero(chosen < rank - 1)
    return out


def scipy_expected_hr(exact_ranks, n_items, n_negatives, k):
    return float(np.mean(stats.hypergeom.cdf(k - 1, n_items - 1, exact_ranks - 1, n_negatives)))


def scipy_expected_ap(exact_ranks, n_items, n_negatives):
    j = np.arange(n_negatives + 1)
    pmf = stats.hypergeom.pmf(j[None, :], n_items - 1, exact_ranks[:, None] - 1, n_negatives)
    return float(np.mean(pmf @ (1.0 / (j + 1))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer users")
    args = parser.parse_args()
    users = 1_000_000 // (10 if args.quick else 1)
    m = 100
    rows = []

    def fmt(seconds):
        return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"

    def row(what, ours, baseline_name="", baseline=None, note=""):
        if baseline is None:
            rows.append((what, fmt(ours), baseline_name or "-", "-", "-", note))
            return
        ratio = f"{baseline / ours:.0f}x faster" if baseline >= ours else f"{ours / baseline:.1f}x slower"
        rows.append((what, fmt(ours), baseline_name, fmt(baseline), ratio, note))

    rng = np.random.default_rng(2020)
    for n in (10_000, 1_000_000):
        # a plausible model: log exact rank ~ Normal(log(n)/2, 2), clipped to 1..n
        exact = np.clip(np.ceil(np.exp(rng.normal(np.log(n) / 2, 2.0, users))), 1, n).astype(np.int64)
        label = f"n={n:.0e}, {users:.0e} users, m={m}"

        t_sample = best_time(sampling.sample_ranks, exact, n, m, seed=1)
        few = exact[:2_000]
        t_loop = best_time(choice_loop, few, n, m, 1, repeat=1) * users / few.size
        row(f"sample_ranks, {label}", t_sample, "Generator.choice per user (scaled)", t_loop)
        sampled = sampling.sample_ranks(exact, n, m, seed=1)

        t_hr = best_time(sampling.expected_sampled_metric, exact, n, m, "hit_rate", k=10)
        part = exact[:20_000]
        t_scipy_hr = best_time(scipy_expected_hr, part, n, m, 10, repeat=1) * users / part.size
        assert abs(sampling.expected_sampled_metric(part, n, m, "hit_rate", k=10)
                   - scipy_expected_hr(part, n, m, 10)) < 1e-9
        row(f"expected_sampled_metric HR@10, {label}", t_hr, "scipy hypergeom.cdf (scaled)", t_scipy_hr,
            f"{np.unique(exact).size} distinct ranks")

        t_ap = best_time(sampling.expected_sampled_metric, exact, n, m, "average_precision", repeat=1)
        part = exact[:300]
        t_scipy_ap = best_time(scipy_expected_ap, part, n, m, repeat=1) * users / part.size
        assert abs(sampling.expected_sampled_metric(part, n, m, "average_precision")
                   - scipy_expected_ap(part, n, m)) < 1e-8
        row(f"expected_sampled_metric AP, {label}", t_ap, "scipy hypergeom.pmf (scaled)", t_scipy_ap,
            "all m + 1 sampled ranks")

        t_naive = best_time(sampling.exact_metric, sampled, m + 1, "hit_rate", k=10)
        t_rescale = best_time(sampling.correct_sampled_metric, sampled, n, m, "hit_rate", k=10,
                              method="rescale")
        row(f"correct_sampled_metric rescale, {label}", t_rescale, "naive sampled HR@10 (a mean)", t_naive)
        grid = sampling._rank_grid(n, m, 10)[0].size

        def cold_bv(sampled, n, m, **options):  # first fit for this (n, m): P(r | R) not cached
            sampling._all_ranks_pmf.cache_clear()
            return sampling.correct_sampled_metric(sampled, n, m, "hit_rate", k=10, **options)

        cached = grid == n and n * (m + 1) <= sampling.CHUNK_ENTRIES
        for prior in ("sampled", "uniform"):
            t_cold = best_time(cold_bv, sampled, n, m, rank_prior=prior)
            note = f"fit over {grid} exact ranks" + ("" if grid == n else " (grid)")
            if cached:
                t_warm = best_time(sampling.correct_sampled_metric, sampled, n, m, "hit_rate", k=10,
                                   rank_prior=prior)
                note += f"; {fmt(t_warm)} when P(r | R) is cached from an earlier call"
            row(f"correct_sampled_metric bv ({prior} prior), {label}", t_cold,
                "naive sampled HR@10 (a mean)", t_naive, note)

    print_table(f"recmetrics.sampling benchmark ({platform.processor() or platform.machine()}, "
                f"numpy {np.__version__}, {'quick' if args.quick else 'full'} sizes)",
                ["what", "recmetrics", "baseline", "baseline time", "ratio", "note"], rows)


if __name__ == "__main__":
    main()
