"""Generate the sample's training history, shipped in the package (seeded).

    .venv/bin/python data/make_sample_history.py              # rewrite recmetrics/data/sample_history.csv
    .venv/bin/python data/make_sample_history.py --out DIR    # write it to DIR instead

The beyond-accuracy metrics (``recmetrics.beyond_accuracy``) read popularity,
co-occurrence and each user's own items from a training log. This script
writes one for the sample of ``make_sample.py``: the interactions the same
2,000 users had *before* the logged impressions of ``sample_truth.csv``.
tests/test_beyond.py re-runs it and checks that it reproduces the committed
file byte for byte.

The world is the sample's (``make_sample.py``): the same 1,500 items with the
same Zipf popularity (exponent 1.1), drawn by the same Gumbel top-k scheme
(popularity-weighted, without repeats within a user). Besides:

* a user's number of interactions is lognormal (median 12, clipped to
  1..300), independent of the user's impressions; 3% of the users are new and
  have no history at all (serendipity leaves them out);
* a user's history never holds an item of the user's own impressions in
  ``sample_truth.csv``, as in a time split where a recommender is asked
  for items not yet consumed.

File (ids are strings as in the sample): ``sample_history.csv`` with columns
``user,item``, one row per interaction, sorted by user and item.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240602
NEW_USERS = 0.03

HERE = Path(__file__).resolve().parent
#: Where the file is shipped: inside the package, beside the sample.
PACKAGED = HERE.parent / "recmetrics" / "data"


def _make_sample():
    spec = importlib.util.spec_from_file_location("make_sample", HERE / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def simulate(seed: int = SEED) -> pd.DataFrame:
    """The training history as a (user, item) frame."""
    sample = _make_sample()
    truth, _, _ = sample.simulate()
    n_users, n_items = sample.N_USERS, sample.N_ITEMS
    rng = np.random.default_rng(seed)

    activity = np.clip(np.round(rng.lognormal(mean=np.log(12.0), sigma=0.9, size=n_users)), 1, 300)
    activity[rng.random(n_users) < NEW_USERS] = 0
    activity = activity.astype(np.int64)

    seen = (truth.user.str[1:].astype(np.int64).to_numpy(),
            truth.item.str[1:].astype(np.int64).to_numpy())
    # never an item of the user's impressions
    users, items = sample.draw_items(rng, sample.zipf_popularity(n_items), activity, exclude=seen)
    by_user_item = np.lexsort((items, users))
    return pd.DataFrame({"user": np.char.mod("u%04d", users[by_user_item]),
                         "item": np.char.mod("i%04d", items[by_user_item])})


def write(out: Path, seed: int = SEED) -> list[Path]:
    """Write ``sample_history.csv`` to ``out``; returns its path in a list."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "sample_history.csv"
    simulate(seed).to_csv(path, index=False, lineterminator="\n")
    return [path]


def main() -> None:
    _make_sample().command_line(__doc__.splitlines()[0], write, PACKAGED)


if __name__ == "__main__":
    main()
