"""The cost of comparing many models with recmetrics.compare, as a multiple of one evaluate.

    .venv/bin/python benchmarks/bench_compare.py            # full size: 2*10^6 rows per model
    .venv/bin/python benchmarks/bench_compare.py --quick    # 10x fewer users, a smoke run

Target (issue 22, "Many models at once"): the ids of every model and of the truth are coded
once, together, and each model is then evaluated once on integer codes, so that comparing 5
models costs at most 5x one ``evaluate(pred, truth)`` of one model, the tests aside.

How it is measured
------------------
* The data of ``bench_evaluate.py`` (2*10^4 users x 100 scored items, ~5% relevant, string ids in
  ``object`` columns), the labels moved to a truth frame; 5 models score the same rows, each
  with its own seeded noise. All 8 default metrics at k = 10 (AUC, GAUC, P, R, HR, MAP, MRR,
  NDCG).
* "evaluation" is compare's first step alone (``recmetrics._compare.evaluate_models``: the ids
  of every model and of the truth coded once, then each model evaluated once on integer
  codes): the part the 5x target is about. "compare, ... n_resamples=100" is the whole call with
  the fewest resamples allowed: evaluation plus DeLong's test (placements once per model) and
  the tests per pair and metric row; "with the tests" runs the default 10,000 resamples of the
  randomization and bootstrap tests, which grow with pairs x metric rows x users x resamples,
  whatever the evaluation costs.
* Times are the best of several runs (time.perf_counter); the full-resample run once.
"""
from __future__ import annotations

import argparse
import platform
import warnings

import numpy as np
import pandas as pd

import recmetrics as rm
from _bench import best_time, print_table
from recmetrics._compare import evaluate_models, models_of
from recmetrics._pipeline import check_options
from bench_frame import K, METRICS_RM, make_frame


def make_models(n_users: int, n_items: int, n_models: int) -> tuple[dict, pd.DataFrame]:
    """n_models score frames of the same rows (seeded noise each) and one truth frame."""
    frame = make_frame(n_users, n_items)
    truth = frame[["user", "item", "label"]]
    models = {}
    for m in range(n_models):
        rng = np.random.default_rng(100 + m)
        models[f"model_{m + 1}"] = pd.DataFrame({
            "user": frame.user, "item": frame.item,
            "score": frame.score.to_numpy() + rng.normal(0, 0.1 * m, len(frame))})
    return models, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer users")
    args = parser.parse_args()
    n_users, n_items = (2_000 if args.quick else 20_000), 100
    models, truth = make_models(n_users, n_items, 5)
    first = models["model_1"]
    options = dict(k=K, metrics=METRICS_RM)

    # the numbers agree before they are timed: compare's values are evaluate's
    table = rm.compare(models, truth=truth, n_resamples=100, baseline="model_1", **options)
    alone = rm.evaluate(models["model_3"], truth, **options)
    got = table[table.model_b == "model_3"].value_b.to_numpy()
    np.testing.assert_allclose(got, alone.value.to_numpy(), rtol=1e-12)

    one = best_time(rm.evaluate, first, truth, **options)
    rows = [["evaluate, 1 model", f"{one:.2f}", "1.0x"]]
    o = check_options(k=K, metrics=METRICS_RM)
    for n_models in (2, 5):
        subset = dict(list(models.items())[:n_models])
        given = models_of(subset, None, truth, score="score", rank=None)
        seconds = best_time(evaluate_models, given, truth, o, user="user", item="item",
                            label="label")
        rows.append([f"evaluation of {n_models} models (compare's first step)", f"{seconds:.2f}",
                     f"{seconds / one:.1f}x"])
        for pairs, baseline in (("every pair", None), ("vs baseline", "model_1")):
            if n_models == 2 and baseline is not None:
                continue
            seconds = best_time(rm.compare, subset, truth=truth, n_resamples=100,
                                baseline=baseline, **options)
            n_pairs = n_models * (n_models - 1) // 2 if baseline is None else n_models - 1
            rows.append([f"compare, {n_models} models, {pairs} ({n_pairs} pairs), "
                         "n_resamples=100", f"{seconds:.2f}", f"{seconds / one:.1f}x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        seconds = best_time(rm.compare, models, truth=truth, baseline="model_1", repeat=1,
                            **options)
    rows.append(["compare, 5 models, vs baseline (4 pairs), with the tests (10,000 resamples)",
                 f"{seconds:.2f}", f"{seconds / one:.1f}x"])
    print_table(f"recmetrics.compare of many models on {len(first):,} rows per model "
                f"({n_users:,} users; Python {platform.python_version()}, numpy "
                f"{np.__version__}, pandas {pd.__version__}; "
                f"{'quick' if args.quick else 'full'} size)",
                ["what", "seconds", "x one evaluate"], rows)


if __name__ == "__main__":
    main()
