"""ROC curve, AUC (both methods) and group AUC against literal references and peers."""
import math
import tracemalloc
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from sklearn import metrics as skm

import recmetrics as rm
from recmetrics import _kernels


def auc_literal(y_true, y_score):
    """The definition: every positive-negative pair, 1 for a win, 1/2 for a tie."""
    pos = [s for t, s in zip(y_true, y_score) if t == 1]
    neg = [s for t, s in zip(y_true, y_score) if t == 0]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


def gauc_literal(y_true, y_score, groups, weight="impressions"):
    """Per-group loop in the manner of source document 003, weights as documented."""
    rows = defaultdict(list)
    for t, s, g in zip(y_true, y_score, groups):
        rows[g].append((t, s))
    num = den = 0.0
    for members in rows.values():
        labels = [t for t, _ in members]
        if 0 < sum(labels) < len(labels):
            w = {"impressions": len(labels), "clicks": sum(labels), "uniform": 1}[weight]
            num += w * auc_literal(labels, [s for _, s in members])
            den += w
    return num / den


@st.composite
def scored_labels(draw, min_size=2, max_size=60):
    n = draw(st.integers(min_size, max_size))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if len(set(labels)) < 2:
        labels[0], labels[-1] = 0, 1
    # few distinct values so that ties are common
    scores = draw(st.lists(st.sampled_from([-1.5, 0.0, 0.1, 0.25, 0.5, 0.7, 1.0, 3.0]),
                           min_size=n, max_size=n))
    return labels, scores


# --------------------------------------------------------------------------- source documents

def test_source_003_example_1_counts_three_of_four_pairs():
    assert rm.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], method="pairwise") == 0.75
    assert rm.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], method="rank") == 0.75


def test_source_003_example_2_a_tie_counts_one_half():
    assert rm.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], method="pairwise") == 0.875
    assert rm.roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], method="rank") == 0.875


def test_source_003_tie_example_with_averaged_ranks_is_10_over_12():
    y = [0, 1, 1, 0, 0, 1, 1]
    s = [0.3, 0.5, 0.5, 0.5, 0.5, 0.7, 0.8]
    assert rm.roc_auc(y, s) == 10 / 12
    assert rm.roc_auc(y, s, method="pairwise") == 10 / 12
    ranks = stats.rankdata(s)  # averaged ranks: the four 0.5 scores share 3.5
    assert ranks.tolist() == [1, 3.5, 3.5, 3.5, 3.5, 6, 7]


def test_source_003_rank_code_bug_multiplies_by_tie_size():
    """Document 003's code takes sum(tie ranks) * size instead of / size: 9.58, not 0.833."""
    s = [0.3, 0.5, 0.5, 0.5, 0.5, 0.7, 0.8]
    y = [0, 1, 1, 0, 0, 1, 1]
    tie = [2, 3, 4, 5]
    wrong = (2 * sum(tie) * len(tie) + 6 + 7 - 0.5 * 4 * 5) / 12
    assert round(wrong, 2) == 9.58
    assert rm.roc_auc(y, s) == pytest.approx(0.8333333333333334)


# --------------------------------------------------------------------------- AUC

@given(scored_labels())
def test_both_methods_equal_the_literal_definition_exactly(data):
    y, s = data
    expected = auc_literal(y, s)
    rank, pairwise = rm.roc_auc(y, s), rm.roc_auc(y, s, method="pairwise")
    assert rank == pairwise  # bit for bit: both divide the same integer 2U by 2PN
    assert rank == pytest.approx(expected, abs=1e-12)


@given(scored_labels())
def test_auc_matches_sklearn_and_mann_whitney(data):
    y, s = data
    assert rm.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
    pos = [v for t, v in zip(y, s) if t]
    neg = [v for t, v in zip(y, s) if not t]
    u = stats.mannwhitneyu(pos, neg, alternative="two-sided", method="asymptotic").statistic
    assert rm.roc_auc(y, s) == pytest.approx(u / (len(pos) * len(neg)), abs=1e-12)


@given(scored_labels(), st.randoms(use_true_random=False))
def test_auc_properties(data, rnd):
    y, s = data
    auc = rm.roc_auc(y, s)
    assert 0.0 <= auc <= 1.0
    assert rm.roc_auc(y, [-v for v in s]) == pytest.approx(1 - auc, abs=1e-12)
    assert rm.roc_auc(y, [2 * v + 7 for v in s]) == auc  # monotone transforms do not matter
    order = list(range(len(y)))
    rnd.shuffle(order)
    assert rm.roc_auc([y[i] for i in order], [s[i] for i in order]) == auc
    assert rm.roc_auc(y, y) == 1.0  # a perfect ranking
    assert rm.roc_auc(y, [0.0] * len(y)) == 0.5  # all tied


def test_auc_exact_agreement_on_a_large_input_with_many_ties():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 20_000)
    s = rng.integers(0, 50, 20_000) / 7
    assert rm.roc_auc(y, s) == rm.roc_auc(y, s, method="pairwise")
    assert rm.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)


def test_pairwise_memory_stays_bounded_by_the_chunk(monkeypatch):
    monkeypatch.setattr(_kernels, "PAIRWISE_CHUNK", 1 << 16)
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(3000, int), np.zeros(3000, int)]  # 9 million pairs
    s = rng.random(6000)
    tracemalloc.start()
    value = rm.roc_auc(y, s, method="pairwise")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert value == rm.roc_auc(y, s)
    assert peak < 2_000_000  # all pairs at once would need > 9 MB of booleans


def test_infinite_scores_are_ordered_not_rejected():
    assert rm.roc_auc([0, 1, 0, 1], [-np.inf, np.inf, 0.0, 1.0]) == 1.0


# --------------------------------------------------------------------------- ROC curve

@given(scored_labels())
def test_roc_curve_matches_sklearn_without_dropping_points(data):
    y, s = data
    fpr, tpr, thr = rm.roc_curve(y, s)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_array_equal(thr[1:], sk_thr[1:])
    assert thr[0] == np.inf
    assert np.trapezoid(tpr, fpr) == pytest.approx(rm.roc_auc(y, s), abs=1e-12)


def test_roc_curve_by_hand():
    fpr, tpr, thr = rm.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert thr.tolist() == [np.inf, 0.8, 0.4, 0.35, 0.1]
    assert tpr.tolist() == [0, 0.5, 0.5, 1, 1]
    assert fpr.tolist() == [0, 0, 0.5, 0.5, 1]


# --------------------------------------------------------------------------- group AUC

@st.composite
def grouped(draw):
    y, s = draw(scored_labels(min_size=4, max_size=80))
    g = draw(st.lists(st.sampled_from(["u1", "u2", "u3", "u4", "u5"]), min_size=len(y),
                      max_size=len(y)))
    return y, s, g


@settings(max_examples=150)
@given(grouped(), st.sampled_from(["impressions", "clicks", "uniform"]))
def test_group_auc_equals_a_per_group_loop(data, weight):
    y, s, g = data
    try:
        expected = gauc_literal(y, s, g, weight)
    except ZeroDivisionError:
        with pytest.warns(rm.RecmetricsWarning, match="no group has an AUC; returning NaN"):
            assert math.isnan(rm.group_auc(y, s, g, gauc_weight=weight))
        return
    assert rm.group_auc(y, s, g, gauc_weight=weight) == pytest.approx(expected, abs=1e-12)


@given(grouped(), st.randoms(use_true_random=False))
def test_group_auc_does_not_depend_on_row_order(data, rnd):
    y, s, g = data
    order = list(range(len(y)))
    rnd.shuffle(order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)  # NaN when no group has an AUC
        value = rm.group_auc(y, s, g)
        shuffled = rm.group_auc([y[i] for i in order], [s[i] for i in order], [g[i] for i in order])
    assert shuffled == pytest.approx(value, abs=1e-12, nan_ok=True)


def test_group_auc_with_one_group_is_roc_auc():
    y, s = [0, 1, 1, 0, 0, 1, 1], [0.3, 0.5, 0.5, 0.5, 0.5, 0.7, 0.8]
    assert rm.group_auc(y, s, [9] * 7) == rm.roc_auc(y, s)


def test_group_auc_details_by_hand():
    # u1: pos 0.9 vs neg 0.2, 0.5 -> 1.0 (3 rows); u2: all clicks -> skipped;
    # u3: pos 0.4 vs negs 0.4, 0.6 -> (0.5 + 0) / 2 = 0.25 (3 rows, 1 click); u4: no click -> skipped
    y = [1, 0, 0, 1, 1, 1, 0, 0, 0]
    s = [0.9, 0.2, 0.5, 0.3, 0.1, 0.4, 0.4, 0.6, 0.7]
    g = ["u1", "u1", "u1", "u2", "u2", "u3", "u3", "u3", "u4"]
    d = rm.group_auc_details(y, s, g)
    assert d.n_groups == 4 and d.n_skipped == 2 and d.gauc_weight == "impressions"
    assert d.table["group"].tolist() == ["u1", "u2", "u3", "u4"]
    assert d.table["n"].tolist() == [3, 2, 3, 1]
    assert d.table["positives"].tolist() == [1, 2, 1, 0]
    np.testing.assert_array_equal(d.table["auc"].to_numpy(), [1.0, np.nan, 0.25, np.nan])
    assert d.value == (3 * 1.0 + 3 * 0.25) / 6
    assert rm.group_auc(y, s, g, gauc_weight="clicks") == (1 * 1.0 + 1 * 0.25) / 2
    assert rm.group_auc(y, s, g, gauc_weight="uniform") == 0.625


def test_group_auc_large_input_against_a_pandas_groupby():
    rng = np.random.default_rng(3)
    n = 30_000
    frame = pd.DataFrame({"g": rng.integers(0, 2_000, n), "y": rng.integers(0, 2, n),
                          "s": rng.integers(0, 20, n) / 3})
    per_group = []
    for _, part in frame.groupby("g"):
        if 0 < part.y.sum() < len(part):
            per_group.append((len(part), skm.roc_auc_score(part.y, part.s)))
    w, a = np.array(per_group).T
    assert rm.group_auc(frame.y, frame.s, frame.g) == pytest.approx(np.dot(w, a) / w.sum(), abs=1e-12)


@given(scored_labels())
def test_tie_policies_bound_the_average(data):
    y, s = data
    low = rm.roc_auc(y, s, ties="pessimistic")
    high = rm.roc_auc(y, s, ties="optimistic")
    assert low <= rm.roc_auc(y, s) <= high
    assert rm.roc_auc(y, s) == pytest.approx((low + high) / 2)
    assert rm.roc_auc(y, s, method="pairwise", ties="optimistic") == high
    pos = [v for t, v in zip(y, s) if t]
    neg = [v for t, v in zip(y, s) if not t]
    assert low == sum(p > n for p in pos for n in neg) / (len(pos) * len(neg))
    g = [i % 3 for i in range(len(y))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)  # NaN when no group has an AUC
        values = [rm.group_auc(y, s, g, ties=t) for t in ("pessimistic", "average", "optimistic")]
    assert all(math.isnan(v) for v in values) or values[0] <= values[1] <= values[2]


def test_tuple_group_ids_are_one_key_each():
    """Bug fixed: a list of tuples was read as a 2-d array and rejected."""
    y, s = [1, 0, 1, 0], [0.9, 0.1, 0.2, 0.8]
    assert rm.group_auc(y, s, [("u", 1), ("u", 1), ("v", 2), ("v", 2)]) == rm.group_auc(y, s, ["a", "a", "b", "b"])


def test_one_class_gives_nan_with_a_warning_everywhere():
    """One documented policy: AUC of one class is NaN with a warning (roc_auc, group_auc, evaluate)."""
    with pytest.warns(rm.RecmetricsWarning, match=r"AUC is undefined: y_true holds only positives"):
        assert math.isnan(rm.roc_auc([1, 1], [0.2, 0.3]))
    with pytest.warns(rm.RecmetricsWarning, match=r"GAUC is undefined"):
        assert math.isnan(rm.group_auc([0, 1], [0.1, 0.2], ["a", "b"]))
    pred = pd.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.2, 0.3], "label": [1, 1]})
    with pytest.warns(rm.RecmetricsWarning, match=r"auc is NaN: undefined: every scored row is relevant"):
        table = rm.evaluate(pred, metrics=["auc"])
    assert math.isnan(table.value.iloc[0]) and "every scored row is relevant" in table.note.iloc[0]


@settings(max_examples=100)
@given(grouped())
def test_group_pair_counts_equal_a_literal_count_per_group(data):
    """The shared linear kernel behind group_auc and evaluate: exact integer wins and ties."""
    y, s, g = data
    codes, _ = pd.factorize(pd.Series(g))
    order, _ = _kernels.rank_rows(codes, np.asarray(s, float), codes.max() + 1)
    wins, wins_or_ties, pos, neg = _kernels.group_pair_counts(
        codes[order], np.asarray(s, float)[order], np.asarray(y, bool)[order], codes.max() + 1)
    for code in range(codes.max() + 1):
        rows = [i for i in range(len(y)) if codes[i] == code]
        p = [s[i] for i in rows if y[i]]
        n = [s[i] for i in rows if not y[i]]
        assert (pos[code], neg[code]) == (len(p), len(n))
        assert wins[code] == sum(a > b for a in p for b in n)
        assert wins_or_ties[code] == sum(a >= b for a in p for b in n)


def test_roc_curve_keeps_equal_infinite_scores_in_one_threshold():
    """Bug fixed: np.diff(-inf, -inf) is NaN, so two -inf scores made two thresholds."""
    fpr, tpr, thresholds = rm.roc_curve([1, 0, 0, 1], [0.5, -np.inf, -np.inf, 0.2])
    assert thresholds.tolist() == [np.inf, 0.5, 0.2, -np.inf]
    assert fpr.tolist() == [0.0, 0.0, 0.0, 1.0] and tpr.tolist() == [0.0, 0.5, 1.0, 1.0]


def test_group_auc_repr_is_one_line_without_the_per_group_table():
    """Issue 24: the repr printed the whole per-group table (2,000 rows for the sample log)."""
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(500), 4)
    labels = rng.integers(0, 2, groups.size)
    details = rm.group_auc_details(labels, rng.random(groups.size), groups, gauc_weight="clicks")
    text = repr(details)
    assert "\n" not in text and len(text) < 150
    assert text == (f"GroupAUC(value={details.value!r}, gauc_weight='clicks', n_groups=500, "
                    f"n_skipped={details.n_skipped}, table=<500 rows>)")
    assert details.n_skipped == sum(1 for g in range(500) if labels[groups == g].min()
                                    == labels[groups == g].max())


# --------------------------------------------------------------------------- issue 23: weights, partial AUC


def weighted_auc_literal(y_true, y_score, w):
    """Every positive-negative pair, counted w_i * w_j (a tie half)."""
    num = den = 0.0
    for t1, s1, w1 in zip(y_true, y_score, w):
        for t0, s0, w0 in zip(y_true, y_score, w):
            if t1 == 1 and t0 == 0:
                den += w1 * w0
                num += w1 * w0 * (1.0 if s1 > s0 else 0.5 if s1 == s0 else 0.0)
    return num / den


def partial_auc_literal(y_true, y_score, max_fpr, w=None):
    """Walk the ROC curve point by point from threshold +inf down, adding trapezoids until
    FPR reaches max_fpr (the last one cut by linear interpolation); then McClish's formula."""
    w = w or [1.0] * len(y_true)
    pos = sum(x for t, x in zip(y_true, w) if t == 1)
    neg = sum(x for t, x in zip(y_true, w) if t == 0)
    points = [(0.0, 0.0)]
    for threshold in sorted({s for s, x in zip(y_score, w) if x > 0}, reverse=True):
        tp = sum(x for t, s, x in zip(y_true, y_score, w) if t == 1 and s >= threshold)
        fp = sum(x for t, s, x in zip(y_true, y_score, w) if t == 0 and s >= threshold)
        points.append((fp / neg, tp / pos))
    area = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 >= max_fpr:
            break
        if x1 > max_fpr:
            y1 = y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0)
            x1 = max_fpr
        area += (x1 - x0) * (y0 + y1) / 2
    low, high = max_fpr ** 2 / 2, max_fpr
    return 0.5 * (1 + (area - low) / (high - low))


weights = st.sampled_from([0.0, 0.25, 1.0, 2.0, 7.5])


@given(scored_labels(), st.data())
def test_weighted_auc_equals_the_weighted_pair_count_and_sklearn(data, draw):
    y, s = data
    w = draw.draw(st.lists(weights, min_size=len(y), max_size=len(y)))
    w[y.index(1)] = w[y.index(0)] = 1.5   # both classes keep some weight
    want = weighted_auc_literal(y, s, w)
    assert rm.roc_auc(y, s, sample_weight=w) == pytest.approx(want, abs=1e-12)
    assert rm.roc_auc(y, s, sample_weight=w, method="pairwise") == pytest.approx(want, abs=1e-12)
    assert rm.roc_auc(y, s, sample_weight=w) == pytest.approx(
        skm.roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert rm.roc_auc(y, s, sample_weight=[1.0] * len(y)) == pytest.approx(rm.roc_auc(y, s))


@given(scored_labels(), st.data())
def test_weighted_roc_curve_is_sklearns(data, draw):
    y, s = data
    w = draw.draw(st.lists(weights, min_size=len(y), max_size=len(y)))
    w[y.index(1)] = w[y.index(0)] = 1.0
    fpr, tpr, thresholds = rm.roc_curve(y, s, sample_weight=w)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr, atol=1e-12)
    np.testing.assert_allclose(tpr, sk_tpr, atol=1e-12)
    np.testing.assert_array_equal(thresholds[1:], sk_thr[1:])   # sklearn's first is max + 1 or inf


@given(scored_labels(), st.sampled_from([0.01, 0.1, 0.25, 0.5, 0.8, 1.0]), st.booleans(), st.data())
def test_partial_auc_equals_sklearn_and_the_curve_walked_by_hand(data, max_fpr, weighted, draw):
    y, s = data
    w = None
    if weighted:
        w = draw.draw(st.lists(weights, min_size=len(y), max_size=len(y)))
        w[y.index(1)] = w[y.index(0)] = 1.0
    got = rm.roc_auc(y, s, max_fpr=max_fpr, sample_weight=w)
    assert got == pytest.approx(skm.roc_auc_score(y, s, max_fpr=max_fpr, sample_weight=w), abs=1e-12)
    assert got == pytest.approx(partial_auc_literal(y, s, max_fpr, w), abs=1e-12)


@given(scored_labels(), st.sampled_from([0.05, 0.3, 0.7]))
def test_partial_auc_properties(data, max_fpr):
    y, s = data
    assert rm.roc_auc(y, y, max_fpr=max_fpr) == pytest.approx(1.0)          # perfect
    assert rm.roc_auc(y, [0.0] * len(y), max_fpr=max_fpr) == pytest.approx(0.5)  # useless
    assert rm.roc_auc(y, s, max_fpr=1.0) == rm.roc_auc(y, s)


def test_partial_auc_and_weights_bad_input():
    with pytest.raises(ValueError, match=r"max_fpr=0 must be a number with 0 < max_fpr <= 1"):
        rm.roc_auc([0, 1], [0.1, 0.2], max_fpr=0)
    with pytest.raises(ValueError, match=r"ties='optimistic' is not available with it"):
        rm.roc_auc([0, 1], [0.1, 0.2], max_fpr=0.5, ties="optimistic")
    with pytest.raises(ValueError, match=r"sample_weight is 0 for every sample"):
        rm.roc_auc([0, 1], [0.1, 0.2], sample_weight=[0, 0])
    with pytest.warns(rm.RecmetricsWarning, match="only negatives \\(0\\) with a weight above 0"):
        assert math.isnan(rm.roc_auc([0, 1], [0.1, 0.2], sample_weight=[1, 0]))
    with pytest.raises(ValueError, match=r"y_true holds only negatives"):
        rm.roc_curve([0, 1], [0.1, 0.2], sample_weight=[1, 0])


# --------------------------------------------------------------------------- sorts of values


def scores_that_share_top_bits(rng, n):
    """Scores whose order keys differ only in their lowest bits (one truncated key, several
    scores: score_ranks' second pass), with -0.0 and 0.0 (one score) and infinities."""
    base = rng.choice([1.0, -2.5, 0.0, 3e-300], n)
    scores = base + rng.integers(0, 6, n) * np.spacing(np.abs(base) + 1e-300)
    scores[rng.random(n) < 0.05] = -0.0
    scores[rng.random(n) < 0.05] = np.inf
    scores[rng.random(n) < 0.05] = -np.inf
    return scores


@pytest.mark.parametrize("kind", ["rounded", "distinct", "close"])
def test_score_ranks_are_the_dense_ranks_of_numpy_unique(kind):
    rng = np.random.default_rng(3)
    for n in (1, 2, 17, 1000, 70_000):
        scores = {"rounded": np.round(rng.normal(size=n), 1), "distinct": rng.normal(size=n),
                  "close": scores_that_share_top_bits(rng, n)}[kind]
        ranks, n_distinct = _kernels.score_ranks(scores)
        values, inverse = np.unique(scores, return_inverse=True)
        assert n_distinct == values.size
        assert np.array_equal(ranks.astype(np.int64), inverse)


def scores_of_kind(rng, kind, n):
    """Scores with heavy ties, none, -0.0 beside 0.0, infinities, or one value only."""
    return {"rounded": np.round(rng.normal(size=n), 1), "distinct": rng.normal(size=n),
            "close": scores_that_share_top_bits(rng, n),
            "binary": rng.integers(0, 2, n).astype(float),
            "constant": np.full(n, 0.25),
            "zeros": rng.choice([-0.0, 0.0, 5e-324, 1.0, np.inf], n),
            "rounded4": np.round(rng.random(n), 4)}[kind]


KINDS = ["rounded", "distinct", "close", "binary", "constant", "zeros", "rounded4"]


@pytest.mark.parametrize("kind", KINDS)
def test_group_pair_counts_from_sorted_values_equal_those_of_the_ranked_rows(kind):
    rng = np.random.default_rng(4)
    for n, n_groups in ((1, 1), (50, 3), (5000, 400), (60_000, 7), (3000, 5000)):
        scores = scores_of_kind(rng, kind, n)
        codes = rng.integers(0, n_groups, n)
        positive = rng.random(n) < rng.choice([0.0, 0.3, 1.0], p=[0.1, 0.8, 0.1])
        order, _ = _kernels.rank_rows(codes, scores, n_groups)
        ranked = _kernels.group_pair_counts(codes[order], scores[order], positive[order],
                                            n_groups)
        got = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups)
        for a, b in zip(got, ranked):
            assert a.dtype == np.int64 and np.array_equal(a, b)
        # the counts of the groups rows have, in a given order (codes no row has left out)
        present = rng.permutation(np.unique(codes))
        picked = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups, present)
        for a, b in zip(picked, ranked):
            assert np.array_equal(a, b[present])


def literal_group_counts(codes, scores, positive, n_groups):
    """Wins and wins-or-ties per group, pair by pair, from the definition."""
    wins = np.zeros(n_groups, dtype=np.int64)
    wins_or_ties = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):
        pos, neg = scores[(codes == g) & positive], scores[(codes == g) & ~positive]
        wins[g] = (pos[:, None] > neg[None, :]).sum()
        wins_or_ties[g] = (pos[:, None] >= neg[None, :]).sum()
    return wins, wins_or_ties


@pytest.mark.parametrize("kind", KINDS)
def test_group_pair_counts_unsorted_equal_a_literal_pair_count(kind):
    # issue 36: the one-sort kernel (Mann-Whitney places less the tied pairs) against pairs
    rng = np.random.default_rng(14)
    for n, n_groups in ((1, 1), (2, 1), (40, 4), (400, 30)):
        scores = scores_of_kind(rng, kind, n)
        codes = rng.integers(0, n_groups, n)
        positive = rng.random(n) < 0.4
        wins, wins_or_ties, pos, neg = _kernels.group_pair_counts_unsorted(
            codes, scores, positive, n_groups)
        expected = literal_group_counts(codes, scores, positive, n_groups)
        assert np.array_equal(wins, expected[0]) and np.array_equal(wins_or_ties, expected[1])
        assert np.array_equal(pos, np.bincount(codes[positive], minlength=n_groups))
        assert np.array_equal(neg, np.bincount(codes[~positive], minlength=n_groups))


def ranked_group_counts(codes, scores, positive, n_groups):
    """The path that ranks the rows (rank_rows, then the linear pass over ranked rows)."""
    order, _ = _kernels.rank_rows(codes, scores, n_groups)
    return _kernels.group_pair_counts(codes[order], scores[order], positive[order], n_groups)


#: Scores a few ulps apart around values across the range (1e-300 to 1e300, negatives,
#: -0.0 and 0.0, the smallest subnormal, infinities): many share a cut score key.
CLOSE_SCORES = np.unique(np.concatenate(
    [base + np.arange(-3, 4) * np.spacing(base) for base in (1.0, -2.5, 1e-300, 1e300, -1e300,
                                                            0.1, 3.0)]
    + [[0.0, -0.0, 5e-324, -5e-324, np.inf, -np.inf, 1e-300, -1e-300]]))


@st.composite
def clashing_rows(draw):
    """(codes, scores, positive, n_groups): one group or several, scores from CLOSE_SCORES
    or any float (ties, -0.0 beside 0.0, infinities)."""
    n = draw(st.integers(1, 60))
    n_groups = draw(st.sampled_from([1, 2, 5]))
    score = st.one_of(st.sampled_from(CLOSE_SCORES.tolist() + [-0.0]),
                      st.floats(allow_nan=False))
    scores = np.array(draw(st.lists(score, min_size=n, max_size=n)), dtype=np.float64)
    codes = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n)))
    positive = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return codes, scores, positive, n_groups


@settings(max_examples=300)
@given(clashing_rows(), st.sampled_from([1, 2, 3, 5, 8, None]), st.sampled_from([0.0, 1.0]))
def test_group_pair_counts_with_cut_score_keys_equal_pairs_and_the_ranked_path(data, score_bits,
                                                                              share):
    # issue 36: score keys cut to a few bits (distinct scores on one key); runs of one group
    # and such a key holding both classes counted again exactly (share 1.0), or the dense
    # ranks of the scores (share 0.0, the path before): the same counts as pair by pair
    codes, scores, positive, n_groups = data
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_kernels, "CLASH_SHARE", share)
        got = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups,
                                                  score_bits=score_bits)
    wins, wins_or_ties = literal_group_counts(codes, scores, positive, n_groups)
    assert np.array_equal(got[0], wins) and np.array_equal(got[1], wins_or_ties)
    assert np.array_equal(got[2], np.bincount(codes[positive], minlength=n_groups))
    assert np.array_equal(got[3], np.bincount(codes[~positive], minlength=n_groups))
    for a, b in zip(got, ranked_group_counts(codes, scores, positive, n_groups)):
        assert a.dtype == np.int64 and np.array_equal(a, b)


@pytest.mark.parametrize("kind, score_bits", [("distinct", 4), ("distinct", 12),
                                              ("distinct", 20), ("close", 4), ("close", 12),
                                              ("rounded", 4)])
def test_clashing_runs_are_counted_again_exactly(kind, score_bits, monkeypatch):
    # issue 36: many groups, score keys cut to a few bits so that runs of one group and one
    # key hold distinct scores of both classes; they are found and counted again (the test
    # checks that they were), and every group's counts are those of the ranked path
    rng = np.random.default_rng(36)
    n, n_groups = 20_000, 700
    scores = scores_of_kind(rng, kind, n)
    codes = rng.integers(0, n_groups, n)
    positive = rng.random(n) < 0.4
    counted = []
    recount = _kernels._recounted_runs

    def spy(*args):
        counted.append(args[-1].size)
        return recount(*args)

    monkeypatch.setattr(_kernels, "_recounted_runs", spy)
    monkeypatch.setattr(_kernels, "CLASH_SHARE", 1.0)
    got = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups,
                                              score_bits=score_bits)
    assert counted and counted[0] > 0                       # clashing runs were counted again
    for a, b in zip(got, ranked_group_counts(codes, scores, positive, n_groups)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("n_threads", ["2", "3", "4"])
def test_group_pair_counts_in_threads_equal_the_ranked_path(n_threads, monkeypatch):
    # issue 36: the keys partitioned in place at equal shares, each share sorted in a
    # thread, then counted in ranges cut at group starts; one group may span several shares
    # (ranges left empty), and clashing runs are counted again
    monkeypatch.setenv("RECMETRICS_NUM_THREADS", n_threads)
    monkeypatch.setattr(_kernels, "GROUP_AUC_SPLIT", 1)
    rng = np.random.default_rng(39)
    n = 30_000
    for codes, n_groups in ((rng.integers(0, 900, n), 900),
                            (np.where(rng.random(n) < 0.8, 7, rng.integers(0, 20, n)), 20),
                            (np.zeros(n, dtype=np.intp), 1)):
        for scores, score_bits in ((scores_of_kind(rng, "close", n), 12),
                                   (rng.random(n), 16), (np.round(rng.random(n), 3), None)):
            positive = rng.random(n) < 0.3
            got = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups,
                                                      score_bits=score_bits)
            for a, b in zip(got, ranked_group_counts(codes, scores, positive, n_groups)):
                assert np.array_equal(a, b)


def test_ties_on_a_decimal_grid_are_not_counted_again(monkeypatch):
    # issue 36: scores rounded to 4 decimals cut to 43 bits stay apart: their runs of both
    # classes are ties, found so by the sorted scores, and not counted again
    rng = np.random.default_rng(38)
    n, n_groups = 50_000, 5000
    scores, codes = np.round(rng.random(n), 4), rng.integers(0, n_groups, n)
    positive = rng.random(n) < 0.3
    monkeypatch.setattr(_kernels, "_recounted_runs", None)            # not called
    got = _kernels.group_pair_counts_unsorted(codes, scores, positive, n_groups, score_bits=43)
    assert _kernels.score_cut(scores, 43).shift > 0
    for a, b in zip(got, ranked_group_counts(codes, scores, positive, n_groups)):
        assert np.array_equal(a, b)
    assert (got[1] > got[0]).any()                                   # with ties


def test_score_cut_keeps_the_order_and_finds_every_clash():
    # keys cut to max_bits: in order, equal for equal scores; the shared keys are those of
    # several distinct scores, and the clashing rows those with such a key
    rng = np.random.default_rng(37)
    for scores, max_bits in ((np.round(rng.random(5000), 3), 40), (rng.random(5000), 20),
                             (rng.random(5000), 62), (scores_that_share_top_bits(rng, 5000), 30),
                             (rng.normal(size=5000) * 1e300, 8), (np.full(50, -0.0), 5),
                             (rng.choice([0.0, -0.0, 2.0], 500), 1)):
        cut = _kernels.score_cut(scores, max_bits)
        keys = cut.keys(scores)
        assert cut.bits <= max_bits and (cut.bits == 0 or int(keys.max()) < 2**cut.bits)
        values, inverse = np.unique(scores, return_inverse=True)          # -0.0 == 0.0
        by_value = np.zeros(values.size, dtype=np.uint64)
        by_value[inverse] = keys
        assert np.array_equal(keys, by_value[inverse])           # equal scores, equal keys
        assert (np.diff(by_value.astype(object)) >= 0).all()     # in the scores' order
        clash, clashing_rows = cut.clashes(scores)
        shared, per_key = np.unique(by_value, return_counts=True)
        assert np.array_equal(clash, shared[per_key > 1])
        assert clashing_rows == np.isin(keys, clash).sum()
        if not cut.shift:                                        # nothing cut: apart
            assert clash.size == 0


@pytest.mark.parametrize("keys", [
    np.array([5, 3, 5, 9, 3, 3, -2]), np.array([5, 3, 5], dtype=np.int8),
    np.array([2**40, 2**40 + 3, 2**40], dtype=np.int64), np.array([7, 7, 1], dtype=np.uint64),
    np.array([100, -100, 127, -128], dtype=np.int8),
    np.array([0, 2**62, 5]),                           # too wide a span: None, pandas codes
    np.array([2**64 - 1, 2**64 - 2], dtype=np.uint64),  # beyond int64: None
])
def test_value_offsets_find_the_uniques_of_pandas_factorize(keys):
    coded = _kernels.value_offsets(keys)
    codes, uniques = pd.factorize(keys)
    if int(keys.max()) - int(keys.min()) > 1000 or int(keys.max()) >= 2**63:
        assert coded is None
        return
    offsets, span, firsts = coded
    assert span == int(keys.max()) - int(keys.min()) + 1
    assert np.array_equal(offsets, keys.astype(object) - int(keys.min()))
    assert np.array_equal(keys[firsts], uniques) and keys[firsts].dtype == uniques.dtype
    assert np.array_equal(firsts, [np.flatnonzero(codes == c)[0] for c in range(uniques.size)])


@pytest.mark.parametrize("groups", ["int", "wide", "text"])
@pytest.mark.parametrize("kind", ["rounded", "distinct"])
def test_group_auc_details_equal_the_ranked_path_bit_for_bit(groups, kind, monkeypatch):
    # issue 36: group AUC from sorts of values; the table and value are those of the path
    # that ranks the rows (kept for more groups and distinct scores than 63 bits hold)
    rng = np.random.default_rng(5)
    n = 20_000
    scores = np.round(rng.normal(size=n), 2) if kind == "rounded" else rng.random(n)
    labels = (rng.random(n) < 0.3).astype(int)
    keys = rng.integers(0, 3000, n)
    keys = {"int": keys, "wide": keys * 2**40, "text": np.char.mod("g%d", keys)}[groups]
    for weight in ("impressions", "clicks", "uniform"):
        got = rm.group_auc_details(labels, scores, keys, gauc_weight=weight)
        with monkeypatch.context() as m:
            m.setattr(_kernels, "group_pair_counts_unsorted", lambda *args: None)
            ranked = rm.group_auc_details(labels, scores, keys, gauc_weight=weight)
        assert got.value == ranked.value
        pd.testing.assert_frame_equal(got.table, ranked.table, check_exact=True)
