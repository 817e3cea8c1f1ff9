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
import pytest
from hypothesis import given
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import _kernels
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
    from recmetrics._pipeline import poisson_auc_sums

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


def _literal_pair_sums(scores, positive, groups, weights) -> np.ndarray:
    """Weighted wins, wins-or-ties, positives and negatives, pair by pair: a (positive i,
    negative j) pair weighs w[group i] * w[group j]; won when s_i > s_j, tied when equal."""
    out = np.zeros((weights.shape[1], 4))
    for b in range(weights.shape[1]):
        w = weights[groups, b]
        for i in np.flatnonzero(positive):
            for j in np.flatnonzero(~positive):
                pair = w[i] * w[j]
                out[b, 0] += pair * (scores[i] > scores[j])
                out[b, 1] += pair * (scores[i] >= scores[j])
        out[b, 2], out[b, 3] = w[positive].sum(), w[~positive].sum()
    return out


@st.composite
def _weighted_rows(draw):
    n = draw(st.integers(0, 30))
    n_groups = draw(st.integers(1, 6))
    n_resamples = draw(st.integers(1, 5))
    scores = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    positive = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    groups = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n)),
                      dtype=np.intp)
    weights = np.array(draw(st.lists(st.integers(0, 4), min_size=n_groups * n_resamples,
                                     max_size=n_groups * n_resamples)),
                       dtype=float).reshape(n_groups, n_resamples)
    return scores / 2, positive, groups, weights


@given(_weighted_rows())
def test_weighted_pair_counts_equal_a_literal_pair_loop(rows):
    """Random ties within and across groups, groups weighted 0 (not drawn) or more, rows of
    one class only, no rows: every count is the literal one, exactly."""
    scores, positive, groups, weights = rows
    pairs = _kernels.WeightedPairs(scores, positive, groups, weights.shape[0])
    expected = _literal_pair_sums(scores, positive, groups, weights)
    assert np.array_equal(pairs.sums(weights), expected)
    assert np.array_equal(pairs.resampled(lambda a, size: weights[:, a:a + size],
                                          weights.shape[1]), expected)


@given(_weighted_rows())
def test_weighted_auc_equals_scikit_learn_with_sample_weights(rows):
    """AUC with tied pairs counted 1/2 from the counts: scikit-learn's weighted AUC."""
    from sklearn.metrics import roc_auc_score

    scores, positive, groups, weights = rows
    sums = _kernels.WeightedPairs(scores, positive, groups, weights.shape[0]).sums(weights)
    for b in range(weights.shape[1]):
        w = weights[groups, b]
        if w[positive].sum() == 0 or w[~positive].sum() == 0:
            continue
        auc = _kernels.auc_from_counts(sums[b, 0], sums[b, 1], sums[b, 2] * sums[b, 3],
                                       "average")
        assert auc == pytest.approx(roc_auc_score(positive, scores, sample_weight=w), abs=1e-12)


def test_blocks_and_threads_do_not_change_a_bit(monkeypatch):
    """The same sums whatever the block size (1 resample to all of them) and thread count."""
    from recmetrics._pipeline import user_auc_sums

    rng = np.random.default_rng(3)
    n, n_users = 3000, 200
    users = rng.integers(0, n_users, n)
    scores = rng.integers(0, 50, n) / 10
    positive = rng.random(n) < 0.1
    hashes = user_hash(np.arange(n_users))
    reference = user_auc_sums(scores, positive, users, hashes, 7, 300)
    for block, n_threads in ((1, "1"), (7, "2"), (300, "3")):
        monkeypatch.setattr(_kernels, "RESAMPLE_BLOCK", block)
        monkeypatch.setenv("RECMETRICS_NUM_THREADS", n_threads)
        assert np.array_equal(user_auc_sums(scores, positive, users, hashes, 7, 300), reference)


# --------------------------------------------------------------------------- saying what is coming


def test_a_long_bootstrap_is_announced_first_with_how_to_make_it_cheaper(monkeypatch, capsys):
    """One line on stderr before intervals predicted to take more than half a minute; none
    before quick ones. (The forecast's rate is raised here: the data is small.)"""
    from recmetrics import _pipeline

    pred, _ = _log("ties", 0)
    rm.evaluate(pred, k=5, ci=0.9, n_resamples=100)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_pipeline, "AUC_RESAMPLE_SECONDS", 1e-3)   # 480 rows x 100: 48 s
    rm.evaluate(pred, k=5, ci=0.9, n_resamples=100)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("recmetrics: bootstrap intervals (100 resamples of 480 rows) "
                               "should take about 48 s here; pass fewer resamples")
    assert "leave 'auc' out of metrics" in lines[0] and "top-k file" in lines[0]
    rm.evaluate(pred, k=5, metrics=["ndcg"], ci=0.9, n_resamples=100)   # no AUC: quick
    assert capsys.readouterr().err == ""


def test_the_resample_loops_show_the_fraction_done_and_the_time_left(monkeypatch):
    """Inside a command that shows progress, the bootstrap of global AUC is a counted bar with
    tqdm's estimate of the time left; in memory, by slice, and with the multinomial draws."""
    import io

    from recmetrics import _progress

    pred, _ = _log("ties", 0)
    pred["group"] = np.where(pred.user % 2 == 0, "a", "b")
    for options, label in ((dict(), "bootstrapping global AUC: "),
                           (dict(by="group", min_slice_size=2),
                            "bootstrapping global AUC of each slice: "),
                           (dict(bootstrap="multinomial"), "bootstrapping intervals: ")):
        buffer = io.StringIO()
        progress = _progress.Progress(3, enabled=True, file=buffer)
        monkeypatch.setattr(_progress, "_current", progress)
        progress.stage("computing")
        rm.evaluate(pred, k=5, ci=0.9, n_resamples=300, **options)
        progress.close()
        shown = buffer.getvalue()
        assert f"[1/3] {label}" in shown, shown
        total = 600 if "by" in options else 300       # two slices of 300 resamples each
        assert f" {total}/{total} [" in shown, shown  # every resample counted
        assert "<?" in shown or "<00:" in shown, shown        # the time left
    assert _progress._current is None                    # closed: no command is running


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    cases = grid()
    FIXTURE.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(cases[k])}"
                                           for k in sorted(cases)) + "\n}\n")
