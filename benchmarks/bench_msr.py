"""Microsoft Recommenders' beyond-accuracy functions on bench_beyond.py's data, against recmetrics.

Recommenders (``pip install recommenders``) is not a dependency of this project, so this script
runs in a virtual environment of its own, on files that bench_beyond.py writes:

    .venv/bin/python benchmarks/bench_beyond.py --msr /tmp/msr-data          # recmetrics' venv
    python3 -m venv /tmp/msr && /tmp/msr/bin/pip install recommenders        # once
    /tmp/msr/bin/python benchmarks/bench_msr.py /tmp/msr-data                # Recommenders' venv

(``--quick`` on the first command gives 10x fewer users.) The data: each user's top 10 rows of
bench_beyond's frame (ties broken by item id), the relevance labels of those rows, and the
history without the (user, item) pairs of the lists, which Recommenders refuses. recmetrics'
side, timed by bench_beyond.py, is ``rm.evaluate(top10, truth, k=10, metrics=<the 9 beyond
metrics>, history=..., unseen="zero")`` (best of three). Recommenders' side is one call each
of catalog_coverage, distributional_coverage, novelty, diversity (co-occurrence similarity)
and serendipity (relevance = the labels), in that order, timed once in all (they cache the
similarity between calls, as in their own use).

Where the definitions coincide the values must agree (checked, printed):

* distributional_coverage: both the entropy in bits of the recommended items' counts;
* novelty: both -log2(rows of the item / rows of history) averaged over the recommended rows,
  an item absent from history counting 0 (recmetrics ``unseen="zero"``);
* diversity: both 1 - mean over pairs of a list of the cosine of the items' co-occurrence
  counts in history, averaged over users;
* serendipity: both the mean over a user's list of label * (1 - mean similarity to the user's
  history items), averaged over the users with history;
* catalog_coverage differs: Recommenders divides the distinct recommended items by the
  distinct items of history, recmetrics by its catalogue (pred, history and truth's items
  unless catalog= is given), so it is compared only when those two sets are the same.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/msr-data")
    try:
        from recommenders.evaluation import python_evaluation as pe
    except ImportError as error:
        print(f"recommenders is not importable here ({error}); run this script with the "
              "Python of a virtual environment where `pip install recommenders` succeeded")
        return
    data = np.load(folder / "msr_data.npz")
    ours = json.loads((folder / "recmetrics.json").read_text())
    reco = pd.DataFrame({"userID": data["reco_user"], "itemID": data["reco_item"],
                         "relevance": data["reco_label"].astype(np.float64)})
    train = pd.DataFrame({"userID": data["train_user"], "itemID": data["train_item"]})
    calls = {
        "catalog_coverage": lambda: pe.catalog_coverage(train, reco),
        "distributional_coverage": lambda: pe.distributional_coverage(train, reco),
        "novelty": lambda: pe.novelty(train, reco),
        "diversity": lambda: pe.diversity(train, reco),
        "serendipity": lambda: pe.serendipity(train, reco, col_relevance="relevance"),
    }
    values, seconds = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # their pandas FutureWarnings
        for name, call in calls.items():
            start = time.perf_counter()
            values[name] = float(call())
            seconds[name] = time.perf_counter() - start
    total = sum(seconds.values())
    same_catalogue = set(reco.itemID) <= set(train.itemID)
    print(f"# Microsoft Recommenders vs recmetrics on {len(reco):,} top-10 rows, "
          f"{len(train):,} history rows\n")
    print("| metric | Recommenders | recmetrics | agree | Recommenders seconds |")
    print("|---|---|---|---|---|")
    for name in calls:
        mine = ours["values"][f"{name}"]
        compared = name != "catalog_coverage" or same_catalogue
        agree = (("yes" if np.isclose(values[name], mine, rtol=1e-9, atol=1e-12) else "NO")
                 if compared else "other definition")
        print(f"| {name} | {values[name]:.12g} | {mine:.12g} | {agree} | {seconds[name]:.2f} |")
    print(f"\nRecommenders, the five calls: {total:.2f} s; recmetrics.evaluate with the 9 beyond "
          f"metrics: {ours['seconds']:.2f} s; ratio {total / ours['seconds']:.1f}x")


if __name__ == "__main__":
    main()
