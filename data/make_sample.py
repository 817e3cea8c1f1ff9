"""Generate the sample click log and two models' scores shipped in the package (seeded).

    .venv/bin/python data/make_sample.py              # rewrite the files in recmetrics/data/
    .venv/bin/python data/make_sample.py --out DIR    # write them to DIR instead

The files live in ``recmetrics/data/`` (``recmetrics.DATA_DIR``) so that they are part
of the built wheel. tests/test_sample_data.py re-runs this script and checks that it
reproduces the committed files (the CSV files byte for byte, the Parquet file as an
equal DataFrame).

The world it simulates
----------------------
* 2,000 users of very different activity: the number of impressions of a user
  is lognormal (median 9, clipped to 2..200), so the most active 10% of users
  own about a third of all rows, as in real logs.
* 1,500 items whose popularity follows a Zipf law (exponent 1.1): items are
  shown to users with probability proportional to popularity, without
  repeats within a user.
* A latent relevance (the log-odds of a click) for every (user, item) pair:
  a base rate, a popularity effect and a user-item affinity from 8-dimensional
  taste vectors. The label is one draw of the click: 1 = clicked, 0 = not.
  About 15% of impressions are clicks; a quarter of the users, mostly those
  with few impressions, clicked nothing (the ranking metrics skip them).
* Two models of known quality score every impression. Each score is the
  sigmoid of the true log-odds plus Gaussian noise, rounded to 4 decimals
  (so a few ties appear, as with real model outputs):

  - model A, the weaker one: noise standard deviation 1.4 on the log-odds,
    and it captures 60% of the user-item affinity;
  - model B, the stronger one: noise standard deviation 1.2, 80% of the
    affinity.

  Model B is better by construction, but not by much: ``recmetrics compare``
  finds it significantly better on AUC-like and rank-sensitive metrics (GAUC,
  MAP, MRR, NDCG) and not on hit rate@10, where both models are near 1.

Files (user and item ids are strings such as "u0042" and "i0317"):

    sample_truth.csv         user,item,label     the click log (one row per impression)
    sample_model_a.csv       user,item,score     model A's scores
    sample_model_b.csv       user,item,score     model B's scores
    sample_model_a.parquet   user,item,score     model A's scores again, as Parquet
    sample_log.csv           user,item,timestamp a timestamped interaction log (below)

The timestamped log (``sample_log.csv``)
----------------------------------------
A separate world, drawn from its own seed (the files above do not change), for
practising a protocol: split by time, train, evaluate (notebook 10).

* 1,000 users, 600 items, 180 days from 2024-01-01 (Unix seconds). Items are
  released over the period (a third at the start, the rest uniformly), with a
  Zipf popularity (exponent 1.0) and 8-dimensional tastes, as above.
* A user is active in a window of the period (lognormal length, median 30
  days) and holds 3 to 8 sessions in it, at whole minutes. Each of the user's
  interactions (lognormal count, median 15, clipped to 3..150) picks an item
  released before the user's last session, weighted by popularity, taste and
  recency (an item is 3x as likely in its first 30 days), without repeats,
  and happens in a session at or after the item's release: the rows of a
  session share one timestamp, so there are many ties, as in MovieLens.
* Rows are sorted by timestamp (ties in a random order), as a log is written.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240601
N_USERS = 2_000
N_ITEMS = 1_500
DIM = 8

HERE = Path(__file__).resolve().parent
#: Where the files are shipped: inside the package, so that a wheel carries them.
PACKAGED = HERE.parent / "recmetrics" / "data"


def zipf_popularity(n_items: int) -> np.ndarray:
    """The items' Zipf popularity (exponent 1.1), most popular first, summing to 1."""
    popularity = 1.0 / np.arange(1, n_items + 1) ** 1.1
    return popularity / popularity.sum()


def draw_items(rng: np.random.Generator, popularity: np.ndarray, activity: np.ndarray,
               exclude: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``activity[u]`` items for every user u, popularity-weighted, without repeats.

    Gumbel top-k: a user's items are the largest log p + Gumbel noise. The
    (users, items) index pairs of ``exclude`` are never drawn. Returns the
    (users, items) index arrays row-major: user by user.
    """
    n_users, n_items = activity.size, popularity.size
    keys = np.log(popularity)[None, :] + rng.gumbel(size=(n_users, n_items))
    if exclude is not None:
        keys[exclude] = -np.inf
    order = np.argsort(-keys, axis=1, kind="stable")
    take = np.arange(n_items)[None, :] < activity[:, None]
    return np.repeat(np.arange(n_users), activity), order[take]


def simulate(seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The click log and the two models' scores, as (truth, model_a, model_b) frames."""
    rng = np.random.default_rng(seed)

    # users: lognormal activity, clipped to [2, 200] impressions
    activity = np.clip(np.round(rng.lognormal(mean=np.log(9.0), sigma=0.9, size=N_USERS)), 2, 200)
    activity = activity.astype(np.int64)

    # items: Zipf popularity; which items a user sees = popularity-weighted sampling
    # without replacement
    popularity = zipf_popularity(N_ITEMS)
    users, items = draw_items(rng, popularity, activity)

    # latent relevance: log-odds of a click
    user_taste = rng.normal(size=(N_USERS, DIM)) / np.sqrt(DIM)
    item_taste = rng.normal(size=(N_ITEMS, DIM))
    affinity = np.einsum("nd,nd->n", user_taste[users], item_taste[items]) * 1.3
    pop_effect = 0.25 * (np.log(popularity[items]) - np.log(popularity).mean())
    logit = -3.0 + pop_effect + affinity
    label = (rng.random(users.size) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)

    def model(noise_sd: float, affinity_share: float) -> np.ndarray:
        seen = -3.0 + pop_effect + affinity_share * affinity
        noisy = seen + rng.normal(scale=noise_sd, size=users.size)
        return np.round(1.0 / (1.0 + np.exp(-noisy)), 4)

    score_a = model(1.4, 0.6)
    score_b = model(1.2, 0.8)

    # shuffle the rows, as a real log would not be sorted by user
    shuffle = rng.permutation(users.size)
    user_ids = np.char.mod("u%04d", users[shuffle])
    item_ids = np.char.mod("i%04d", items[shuffle])
    truth = pd.DataFrame({"user": user_ids, "item": item_ids, "label": label[shuffle]})
    model_a = pd.DataFrame({"user": user_ids, "item": item_ids, "score": score_a[shuffle]})
    model_b = pd.DataFrame({"user": user_ids, "item": item_ids, "score": score_b[shuffle]})
    return truth, model_a, model_b


#: The timestamped log's own seed and world (``simulate_log``).
LOG_SEED = 20261128
LOG_USERS, LOG_ITEMS, LOG_DAYS = 1_000, 600, 180
LOG_START = 1_704_067_200   # 2024-01-01 00:00:00 UTC
DAY = 86_400


def simulate_log(seed: int = LOG_SEED) -> pd.DataFrame:
    """The timestamped interaction log: (user, item, timestamp) rows in time order."""
    rng = np.random.default_rng(seed)
    period = LOG_DAYS * DAY
    release = np.where(rng.random(LOG_ITEMS) < 1 / 3, 0,
                       rng.integers(0, period, LOG_ITEMS)) // 60 * 60
    popularity = 1.0 / rng.permutation(np.arange(1, LOG_ITEMS + 1)) ** 1.0
    user_taste = rng.normal(size=(LOG_USERS, DIM)) / np.sqrt(DIM)
    item_taste = rng.normal(size=(LOG_ITEMS, DIM))
    length = np.clip(rng.lognormal(np.log(30 * DAY), 0.8, LOG_USERS), DAY, period)
    start = rng.random(LOG_USERS) * (period - length)
    n_sessions = rng.integers(3, 9, LOG_USERS)
    n_rows = np.clip(np.round(rng.lognormal(np.log(15), 0.8, LOG_USERS)), 3, 150).astype(int)
    rows = []
    for u in range(LOG_USERS):  # a data generator: one user at a time is clear and fast enough
        sessions = np.sort(start[u] + rng.random(n_sessions[u]) * length[u]) // 60 * 60
        available = release <= sessions[-1]
        age = np.maximum(sessions[-1] - release, 0)
        keys = (np.log(popularity) + 2.0 * item_taste @ user_taste[u]
                + np.log(np.where(age < 30 * DAY, 3.0, 1.0)) + rng.gumbel(size=LOG_ITEMS))
        keys[~available] = -np.inf
        chosen = np.argsort(-keys, kind="stable")[:min(n_rows[u], int(available.sum()))]
        # each item in a random session at or after its release
        first = np.searchsorted(sessions, release[chosen], side="left")
        session = first + (rng.random(chosen.size) * (sessions.size - first)).astype(int)
        rows += zip([u] * chosen.size, chosen.tolist(), sessions[session].astype(int).tolist())
    log = pd.DataFrame(rows, columns=["user", "item", "timestamp"])
    log = log.iloc[rng.permutation(len(log))].sort_values("timestamp", kind="stable")
    return pd.DataFrame({"user": np.char.mod("u%04d", log.user.to_numpy()),
                         "item": np.char.mod("i%04d", log.item.to_numpy()),
                         "timestamp": log.timestamp.to_numpy() + LOG_START})


def write(out: Path, seed: int = SEED) -> list[Path]:
    """Write the five sample files to ``out``; returns their paths."""
    truth, model_a, model_b = simulate(seed)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "sample_truth.csv", out / "sample_model_a.csv", out / "sample_model_b.csv",
             out / "sample_model_a.parquet", out / "sample_log.csv"]
    truth.to_csv(paths[0], index=False, lineterminator="\n")
    model_a.to_csv(paths[1], index=False, float_format="%.4f", lineterminator="\n")
    model_b.to_csv(paths[2], index=False, float_format="%.4f", lineterminator="\n")
    model_a.to_parquet(paths[3], index=False, compression="zstd")
    simulate_log().to_csv(paths[4], index=False, lineterminator="\n")
    return paths


def command_line(description: str, write: Callable[[Path], list[Path]], packaged: Path) -> None:
    """Write the files to ``--out`` (default: ``packaged``, recmetrics/data/) and list them."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=packaged,
                        help="folder to write to (default: recmetrics/data/)")
    args = parser.parse_args()
    for path in write(args.out):
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


def main() -> None:
    command_line(__doc__.splitlines()[0], write, PACKAGED)


if __name__ == "__main__":
    main()
