"""Bootstrap intervals computed from one sort (issue 36): the same numbers as before, and the
weighted pair counts behind global AUC's intervals against a literal reference.

``tests/data/intervals_before.json`` holds the intervals of a grid of inputs and options as the
implementation before issue 36 computed them (a loop over resamples, each a pass over every
row), written by ``python tests/test_intervals.py --write`` at commit 4425843; every float is
stored exactly (``float.hex``). The new implementation must give the same bytes.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import recmetrics as rm
from recmetrics._ids import user_hash

FIXTURE = Path(__file__).parent / "data" / "intervals_before.json"


def _log(kind: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A scored log of one of several shapes (pred, truth or None)."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 40, 12
    users = np.repeat(np.arange(n_users), n_items)
    items = np.tile(np.arange(n_items), n_users)
    n = users.size
    label = (rng.random(n) < 0.2).astype(np.int64)
    if kind == "ties":          # a few distinct scores: many ties across and within users
        score = rng.integers(0, 5, n) / 4
    elif kind == "distinct":
        score = rng.random(n) + 0.2 * label
    elif kind == "graded":      # grades 0-3, ties, users with one class only
        label = rng.integers(0, 4, n) * (rng.random(n) < 0.3)
        score = np.round(rng.random(n) + 0.1 * label, 1)
        label[users < 3] = 0                    # three users without a relevant row
        label[(users >= 3) & (users < 5)] = 2   # two users whose every row is relevant
    elif kind == "probabilities":
        score = np.clip(np.round(rng.random(n) * 0.6 + 0.3 * label, 2), 0.0, 1.0)
    else:
        raise ValueError(kind)
    pred = pd.DataFrame({"user": users, "item": items, "score": score, "label": label})
    if kind != "graded":
        return pred, None
    # a truth frame: pred without its labels, some relevant rows unscored, an unscored user
    truth = pred[["user", "item", "label"]].copy()
    extra = pd.DataFrame({"user": [100, 100, 7], "item": [1, 2, 99], "label": [1, 2, 3]})
    truth = pd.concat([truth, extra], ignore_index=True)
    return pred.drop(columns="label").iloc[rng.permutation(n)], truth


def _cases():
    """(name, pred, truth, evaluate options) of the grid."""
    for kind in ("ties", "distinct", "graded", "probabilities"):
        for data_seed in (0, 1):
            pred, truth = _log(kind, data_seed)
            metrics = ["auc", "gauc", "logloss", "brier", "ndcg"] if kind == "probabilities" \
                else None
            for ties in ("average", "optimistic", "pessimistic"):
                for bootstrap in ("poisson", "multinomial"):
                    for seed, n_resamples in ((0, 100), (3, 257)):
                        name = f"{kind}-{data_seed}-{ties}-{bootstrap}-{seed}-{n_resamples}"
                        yield name, pred, truth, dict(
                            k=5, metrics=metrics, ties=ties, ci=0.9, n_resamples=n_resamples,
                            seed=seed, bootstrap=bootstrap)
    pred, _ = _log("ties", 2)
    pred["group"] = np.where(pred.user % 3 == 0, "a", "b")
    yield "slices-by-group", pred, None, dict(k=5, ci=0.9, n_resamples=150, seed=2, by="group",
                                              min_slice_size=2)


def _table_record(table: pd.DataFrame) -> list:
    keys = [c for c in table.columns if c not in ("value", "ci_low", "ci_high", "n_users",
                                                   "n_skipped", "n_without_predictions",
                                                   "conventions", "note", "slice_size")]
    return [[str(row[c]) for c in keys] + [float(row.ci_low).hex(), float(row.ci_high).hex()]
            for _, row in table.iterrows()]


def _auc_sums_record() -> dict:
    from recmetrics._engine import poisson_auc_sums

    out = {}
    for seed in (0, 5):
        rng = np.random.default_rng(seed)
        n = 500
        users = rng.integers(0, 60, n)
        scores = rng.integers(0, 30, n) / 7
        positive = rng.random(n) < 0.3
        sums = poisson_auc_sums(scores, positive, user_hash(users), seed, 120)
        out[f"poisson_auc_sums-{seed}"] = [[float(v).hex() for v in row] for row in sums]
    return out


def grid() -> dict:
    """Every interval of the grid, as stored in the fixture."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, pred, truth, options in _cases():
            out[name] = _table_record(rm.evaluate(pred, truth, **options))
    out.update(_auc_sums_record())
    return out


def test_intervals_are_the_numbers_of_the_implementation_before_issue_36():
    """Byte for byte: every interval of the grid, and the raw Poisson pair sums."""
    expected = json.loads(FIXTURE.read_text())
    got = grid()
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    cases = grid()
    FIXTURE.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(cases[k])}"
                                           for k in sorted(cases)) + "\n}\n")
