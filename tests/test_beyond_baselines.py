"""``evaluate(baselines=True)`` at the speed of the call without it (issue 36): the same numbers
as before, to the bit.

``tests/data/baselines_before.json`` holds every row of ``evaluate(..., baselines=True)`` over
a grid of inputs and options (the nine beyond-accuracy metrics and a few ranking ones; history
co-occurrence and item-feature similarity; every tie policy; cut-offs inside and straddling tie
groups and beyond some users' candidates; a rank column; intervals) as the implementation before
the closed-form baselines computed them, written by ``python tests/test_beyond_baselines.py
--write`` at commit 16a5f92; every float is stored exactly (``float.hex``). The new
implementation must give the same bytes.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import recmetrics as rm

FIXTURE = Path(__file__).parent / "data" / "baselines_before.json"
BEYOND = list(rm.BEYOND_METRICS)


def _world(seed: int, n_users: int = 50, n_items: int = 160, ties: float = 0.1):
    """pred (candidate counts 2 to 60 a user, scores rounded to ``ties`` so that tie groups
    straddle the cut-offs), truth, history (skewed popularity; some users and candidate items
    absent from it) and item features."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.8
    weights /= weights.sum()
    sizes = rng.integers(2, 61, n_users)
    sizes[:3] = [2, 4, 7]                     # fewer candidates than k
    users = np.repeat([f"u{i:03d}" for i in range(n_users)], sizes)
    items = np.concatenate([rng.choice(n_items, n, replace=False, p=weights) for n in sizes])
    scores = np.round(rng.random(users.size) / ties) * ties
    pred = pd.DataFrame({"user": users, "item": items, "score": scores})
    truth = pred[["user", "item"]].assign(label=(rng.random(users.size) < 0.15).astype(np.int64))
    truth.loc[truth.index[::17], "label"] = 2          # graded
    h_n = 30 * n_users
    history = pd.DataFrame({"user": [f"u{i:03d}" for i in rng.integers(3, n_users + 10, h_n)],
                            "item": rng.choice(n_items - 5, h_n, p=weights[:-5] / weights[:-5].sum())})
    features = pd.DataFrame({"item": np.arange(n_items), "f1": rng.normal(size=n_items),
                             "f2": rng.normal(size=n_items),
                             "f3": (rng.random(n_items) < 0.5).astype(float)})
    features.loc[5, ["f1", "f2", "f3"]] = 0.0          # a zero vector: similarity 0
    return pred, truth, history, features


def _cases():
    """(name, pred, truth, evaluate options) of the grid."""
    for seed in (0, 1):
        pred, truth, history, features = _world(seed)
        for ties in ("average", "optimistic", "pessimistic"):
            for similarity in ("history", "features"):
                extra = {"item_features": features} if similarity == "features" else {}
                yield (f"{seed}-{ties}-{similarity}", pred, truth,
                       dict(k=[1, 3, 5, 10, 50], metrics=BEYOND + ["ndcg", "precision", "auc"],
                            history=history, ties=ties, baselines=True, **extra))
        # the ranking metrics alone (the baselines' rows ranked for them, trec's order too)
        for ties in ("average", "optimistic", "trec"):
            yield (f"{seed}-{ties}-ranking-only", pred, truth,
                   dict(k=[3, 10], metrics=["ndcg", "map", "precision", "mrr", "recall"]
                        + (["auc", "gauc"] if ties != "trec" else []),
                        history=history, ties=ties, baselines=True))
    pred, truth, history, features = _world(2, ties=0.25)
    yield "unseen-zero-catalog", pred, truth, dict(
        k=[2, 8], metrics=BEYOND, history=history, baselines=True, unseen="zero",
        head_share=0.5, catalog=np.arange(170))
    ranked = pred.assign(rank=pred.groupby("user")["score"].rank(ascending=False,
                                                                 method="first"))
    yield "rank-column", ranked.drop(columns="score"), truth, dict(
        k=[4, 10], metrics=BEYOND, history=history, baselines=True, rank="rank")
    yield "intervals", pred, truth, dict(
        k=[5], metrics=BEYOND + ["ndcg"], history=history, baselines=True, ci=0.9,
        n_resamples=100, seed=4, item_features=features)
    pred, truth, history, features = _world(3, n_users=120, n_items=400, ties=1e-9)
    yield "larger-distinct-scores", pred, truth, dict(
        k=[10, 20], metrics=BEYOND, history=history, baselines=True)


def _table_record(table: pd.DataFrame) -> list:
    floats = [c for c in ("value", "ci_low", "ci_high") if c in table.columns]
    keys = ["model", "metric", "k", "n_users", "n_skipped", "note"]
    return [[str(row[c]) for c in keys] + [float(row[c]).hex() for c in floats]
            for _, row in table.iterrows()]


def grid() -> dict:
    """Every row of the grid, as stored in the fixture."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, pred, truth, options in _cases():
            out[name] = _table_record(rm.evaluate(pred, truth, **options))
    return out


def test_baselines_are_the_numbers_of_the_implementation_before_the_closed_forms():
    """Byte for byte: every row (the model's and both baselines') of the grid."""
    expected = json.loads(FIXTURE.read_text())
    got = grid()
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        FIXTURE.write_text(json.dumps(grid(), indent=0) + "\n")
        print(f"wrote {FIXTURE}")


def test_random_baseline_diversity_from_squares_summed_beforehand_equals_summing_in_place(
        monkeypatch):
    """The random baseline's squared group norms are computed in the background from pred's
    rows (_beyond._whole_lists) and used where a group is a whole list: the same bits as
    summing the group's rows in place, and they are used (on every list here)."""
    from recmetrics import _beyond, _kernels

    pred, truth, history, _ = _world(5, ties=1e-9)    # the model's scores: no large group
    used = []
    holds = _kernels.WholeLists.holds

    def spy(self, lists, size):
        used.append(holds(self, lists, size))
        return used[-1]

    options = dict(k=[3, 10], metrics=BEYOND, history=history, baselines=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        with monkeypatch.context() as m:
            m.setattr(_kernels.WholeLists, "holds", spy)
            got = rm.evaluate(pred, truth, **options)
        assert used == [True, True]          # the random baseline's, at both cut-offs
        with monkeypatch.context() as m:
            m.setattr(_beyond.HistorySimilarity, "whole_lists_of",
                      lambda self, *args: lambda: None)
            in_place = rm.evaluate(pred, truth, **options)
    assert _table_record(got) == _table_record(in_place)


def test_whole_lists_hold_only_for_groups_of_every_row_of_their_list():
    """WholeLists.holds: a group with fewer rows than its list (a model's tie straddling k)
    is not the list the squares were summed over."""
    from recmetrics import _kernels

    whole = _kernels.WholeLists(squares=np.array([1.5, 2.5, 0.0]), rows=np.array([4, 7, 0]))
    assert whole.holds(np.array([0, 1]), np.array([4.0, 7.0]))
    assert not whole.holds(np.array([0, 1]), np.array([4.0, 6.0]))
    assert not whole.holds(np.array([1]), np.array([4.0]))
