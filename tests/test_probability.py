"""Log loss, Brier score, normalized entropy, PR curve, PR AUC and calibration.

Checked three ways: against scikit-learn on random cases (ties, probabilities of exactly 0 and
1, one sample to 10^5), against slow literal references written below (loops, fractions), and
by properties that follow from the definitions.
"""
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings, strategies as st
from sklearn import calibration as skc
from sklearn import metrics as skm

import recmetrics as rm
from recmetrics import _kernels, probability


# --------------------------------------------------------------------------- literal references

EPS = float(np.finfo(float).eps)


def log_loss_literal(y_true, y_prob, eps=EPS):
    """-mean log of the probability given to the true class, clipped to [eps, 1 - eps]."""
    total = 0.0
    for y, p in zip(y_true, y_prob):
        given = p if y == 1 else 1.0 - p
        given = min(max(given, eps), 1.0 - eps)
        total += -math.log(given) if given > 0 else math.inf
    return total / len(y_true)


def brier_literal(y_true, y_prob):
    """Exact mean of (p - y)^2 in fractions (every float is a fraction)."""
    return sum((Fraction(p) - y) ** 2 for y, p in zip(y_true, y_prob)) / len(y_true)


def entropy_literal(rate):
    return -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate))


def pr_curve_literal(y_true, y_score):
    """Threshold by threshold (ascending), counting with loops; then the point (recall 0, precision 1)."""
    positives = sum(y_true)
    precision, recall, thresholds = [], [], sorted(set(y_score))
    for t in thresholds:
        tp = sum(1 for y, s in zip(y_true, y_score) if s >= t and y == 1)
        predicted = sum(1 for s in y_score if s >= t)
        precision.append(Fraction(tp, predicted))
        recall.append(Fraction(tp, positives))
    return precision + [Fraction(1)], recall + [Fraction(0)], thresholds


def ap_literal(y_true, y_score):
    """Step-wise area: from the highest threshold down, (gain in recall) x (precision there)."""
    precision, recall, _ = pr_curve_literal(y_true, y_score)
    area, previous_recall = Fraction(0), Fraction(0)
    for p, r in zip(reversed(precision[:-1]), reversed(recall[:-1])):
        area += (r - previous_recall) * p
        previous_recall = r
    return area


def ranking_ap_literal(labels_in_rank_order):
    """AP of one ranked list: mean over the positives of the precision at their rank."""
    hits, total = 0, Fraction(0)
    for rank, y in enumerate(labels_in_rank_order, start=1):
        if y == 1:
            hits += 1
            total += Fraction(hits, rank)
    return total / hits


def expected_ranking_ap_literal(y_true, y_score):
    """Mean ranking AP over every order of the tied items (McSherry & Najork), by enumeration."""
    groups = {}
    for y, s in zip(y_true, y_score):
        groups.setdefault(s, []).append(y)
    blocks = [groups[s] for s in sorted(groups, reverse=True)]
    orders = [sorted(set(itertools.permutations(block))) for block in blocks]
    # each distinct label pattern of a block with t items and r positives stands for r!(t-r)!
    # orders, the same number for every pattern, so a plain mean over patterns is the expectation
    values = [ranking_ap_literal([y for block in choice for y in block])
              for choice in itertools.product(*orders)]
    return sum(values) / len(values)


def bin_of_literal(p, edges):
    """The bin holding p: the first (lo, hi] with p <= hi; the first bin also holds edges[0]."""
    for b in range(len(edges) - 2):
        if p <= edges[b + 1]:
            return b
    return len(edges) - 2


def calibration_literal(y_true, y_prob, edges):
    n_bins = len(edges) - 1
    members = [[] for _ in range(n_bins)]
    for y, p in zip(y_true, y_prob):
        members[bin_of_literal(p, edges)].append((y, p))
    prob_true = [sum(y for y, _ in m) / len(m) for m in members if m]
    prob_pred = [sum(p for _, p in m) / len(m) for m in members if m]
    sizes = [len(m) for m in members if m]
    return prob_true, prob_pred, sizes


def ece_literal(y_true, y_prob, n_bins):
    edges = np.linspace(0.0, 1.0, n_bins + 1).tolist()
    prob_true, prob_pred, sizes = calibration_literal(y_true, y_prob, edges)
    return sum(n / len(y_true) * abs(o - e) for o, e, n in zip(prob_true, prob_pred, sizes))


# --------------------------------------------------------------------------- random cases

# Probabilities that stress the conventions: exactly 0 and 1, bin edges, values next to 0 and 1,
# and the float edges of 10 uniform bins (0.30000000000000004 ...) next to their decimals.
SPECIAL = [0.0, 1.0, 0.5, 0.1, 0.2, 0.3, 0.7, 0.9, 1e-300, 1e-17, 1 - 1e-16, 0.9999999,
           *np.linspace(0, 1, 11).tolist(), *np.linspace(0, 1, 4).tolist()]


@st.composite
def labelled_probabilities(draw, min_size=1, max_size=80, need_positive=False):
    n = draw(st.integers(min_size, max_size))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if need_positive and not any(labels):
        labels[draw(st.integers(0, n - 1))] = 1
    value = st.one_of(st.sampled_from(SPECIAL), st.floats(0.0, 1.0))
    if draw(st.booleans()):   # few distinct values: heavy ties
        pool = draw(st.lists(value, min_size=1, max_size=4))
        value = st.sampled_from(pool)
    probs = draw(st.lists(value, min_size=n, max_size=n))
    return labels, probs


def assert_close(a, b, tol=1e-12):
    assert math.isclose(a, b, rel_tol=tol, abs_tol=tol), (a, b)


@settings(max_examples=300)
@given(labelled_probabilities())
def test_log_loss_and_brier_equal_scikit_learn(case):
    y, p = case
    assert_close(rm.log_loss(y, p), skm.log_loss(y, p, labels=[0, 1]))
    assert_close(rm.brier_score(y, p), skm.brier_score_loss(y, p))
    assert_close(rm.log_loss(y, p), log_loss_literal(y, p))
    assert_close(rm.brier_score(y, p), float(brier_literal(y, p)))


@settings(max_examples=300)
@given(labelled_probabilities(need_positive=True))
def test_precision_recall_curve_is_scikit_learns_array_for_array(case):
    y, s = case
    precision, recall, thresholds = rm.precision_recall_curve(y, s)
    sk_precision, sk_recall, sk_thresholds = skm.precision_recall_curve(y, s)
    assert np.array_equal(thresholds, sk_thresholds)
    assert np.array_equal(precision, sk_precision) and np.array_equal(recall, sk_recall)
    lit_precision, lit_recall, lit_thresholds = pr_curve_literal(y, s)
    assert thresholds.tolist() == lit_thresholds
    assert precision.tolist() == [float(v) for v in lit_precision]
    assert recall.tolist() == [float(v) for v in lit_recall]


@settings(max_examples=300)
@given(labelled_probabilities(need_positive=True))
def test_pr_auc_equals_average_precision_score(case):
    y, s = case
    value = rm.pr_auc(y, s)
    assert_close(value, skm.average_precision_score(y, s))
    assert_close(value, float(ap_literal(y, s)))


@settings(max_examples=300)
@given(labelled_probabilities(), st.integers(1, 12), st.sampled_from(["uniform", "quantile"]))
def test_calibration_curve_equals_scikit_learn(case, n_bins, strategy):
    y, p = case
    prob_true, prob_pred = rm.calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    sk_true, sk_pred = skc.calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    assert prob_true.shape == sk_true.shape
    np.testing.assert_allclose(prob_true, sk_true, rtol=0, atol=1e-12)
    np.testing.assert_allclose(prob_pred, sk_pred, rtol=0, atol=1e-12)
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100).tolist()
    else:
        edges = np.linspace(0.0, 1.0, n_bins + 1).tolist()
    lit_true, lit_pred, _ = calibration_literal(y, p, edges)
    np.testing.assert_allclose(prob_true, lit_true, rtol=0, atol=1e-12)
    np.testing.assert_allclose(prob_pred, lit_pred, rtol=0, atol=1e-12)


@settings(max_examples=300)
@given(labelled_probabilities(), st.integers(1, 12))
def test_expected_calibration_error_equals_the_literal_sum(case, n_bins):
    y, p = case
    assert_close(rm.expected_calibration_error(y, p, n_bins=n_bins), ece_literal(y, p, n_bins))
    # the same bins as scikit-learn's calibration curve, weighted by their sizes
    sk_true, sk_pred = skc.calibration_curve(y, p, n_bins=n_bins)
    sizes = np.bincount(np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p), minlength=n_bins)
    sizes = sizes[sizes > 0]
    assert_close(rm.expected_calibration_error(y, p, n_bins=n_bins),
                 float(np.sum(sizes / len(y) * np.abs(sk_true - sk_pred))))


@settings(max_examples=200)
@given(labelled_probabilities(min_size=2))
def test_normalized_entropy_is_log_loss_over_the_base_rate_entropy(case):
    y, p = case
    rate = sum(y) / len(y)
    if rate in (0, 1):
        with pytest.warns(rm.RecmetricsWarning):
            assert math.isnan(rm.normalized_entropy(y, p))
    else:
        assert_close(rm.normalized_entropy(y, p),
                     skm.log_loss(y, p, labels=[0, 1]) / entropy_literal(rate))


@pytest.mark.parametrize("n, base_rate", [(1, 0.5), (2, 0.5), (1_000, 0.3), (100_000, 0.01)])
def test_tiny_and_large_cases_against_scikit_learn(n, base_rate):
    rng = np.random.default_rng(12)
    y = (rng.random(n) < base_rate).astype(int)
    y[0] = 1
    p = np.clip(rng.beta(0.5, 4, n), 0, 1)
    p[:: 97] = 0.0          # probabilities exactly 0 and 1, wrong about half the time
    p[1:: 89] = 1.0
    p = np.round(p, 3) if n > 2 else p   # many ties at this size
    assert_close(rm.log_loss(y, p), skm.log_loss(y, p, labels=[0, 1]))
    assert_close(rm.brier_score(y, p), skm.brier_score_loss(y, p))
    assert_close(rm.pr_auc(y, p), skm.average_precision_score(y, p))
    for a, b in zip(rm.precision_recall_curve(y, p), skm.precision_recall_curve(y, p)):
        assert np.array_equal(a, b)
    for strategy in ("uniform", "quantile"):
        for a, b in zip(rm.calibration_curve(y, p, n_bins=10, strategy=strategy),
                        skc.calibration_curve(y, p, n_bins=10, strategy=strategy)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- conventions

def test_a_probability_on_a_bin_edge_joins_the_lower_bin_and_1_the_last():
    edges = np.linspace(0, 1, 11)
    # one sample on each inner edge (0.1, 0.2, 0.30000000000000004, ...), plus 0 and 1
    p = [0.0, *edges[1:-1].tolist(), 1.0]
    y = [1] * len(p)
    prob_true, prob_pred = rm.calibration_curve(y, p, n_bins=10)
    # bin 0 holds 0.0 and 0.1; bin b holds edges[b + 1]; 1.0 is in the last bin (0.9, 1]
    assert prob_pred.tolist() == pytest.approx([0.05, 0.2, edges[3], 0.4, 0.5, edges[6], edges[7],
                                               0.8, 0.9, 1.0], abs=1e-15)
    sk_true, sk_pred = skc.calibration_curve(y, p, n_bins=10)
    assert np.array_equal(prob_pred, sk_pred) and np.array_equal(prob_true, sk_true)
    # the decimal 0.3 is below the float edge 0.30000000000000004, so it is in (0.2, 0.3]
    _, only = rm.calibration_curve([1, 1], [0.25, 0.3], n_bins=10)
    assert only.tolist() == [0.275]
    # 0.5 sits on an edge: with 0.45 it forms bin (0.4, 0.5]; 0.55 is alone in (0.5, 0.6]
    prob_true, prob_pred = rm.calibration_curve([0, 1, 1], [0.45, 0.5, 0.55], n_bins=10)
    assert prob_true.tolist() == [0.5, 1.0] and prob_pred.tolist() == pytest.approx([0.475, 0.55])


def test_quantile_bins_with_ties_leave_empty_bins_out():
    y, p = [0, 1, 0, 1, 1, 0], [0.2, 0.2, 0.2, 0.2, 0.9, 0.9]
    prob_true, prob_pred = rm.calibration_curve(y, p, n_bins=4, strategy="quantile")
    # quartile edges: 0.2, 0.2, 0.2, 0.725, 0.9 -> every 0.2 in bin 0, both 0.9 in bin 3
    assert prob_true.tolist() == [0.5, 0.5] and prob_pred.tolist() == pytest.approx([0.2, 0.9])
    sk = skc.calibration_curve(y, p, n_bins=4, strategy="quantile")
    assert np.array_equal(prob_true, sk[0]) and np.array_equal(prob_pred, sk[1])


def test_log_loss_clip_follows_eps():
    eps = float(np.finfo(float).eps)
    assert rm.log_loss([1], [0.0]) == -math.log(eps) == pytest.approx(36.04365338911715)
    assert rm.log_loss([0], [1.0]) == -math.log(eps)   # 1 - eps is exact, so both sides agree
    assert rm.log_loss([1], [0.0], eps=1e-15) == pytest.approx(-math.log(1e-15))   # sklearn < 1.2
    assert rm.log_loss([1, 0], [0.0, 0.5], eps=0) == math.inf
    assert rm.log_loss([1, 0], [1.0, 0.0], eps=0) == 0.0
    assert rm.log_loss([1, 0], [0.7, 0.3], eps=0.4) == pytest.approx(-math.log(0.6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no numpy divide-by-zero warning for eps=0
        rm.log_loss([1], [0.0], eps=0)


def test_float32_probabilities_match_scikit_learn_with_float32_eps():
    p = np.array([0.0, 1.0, 0.25, 0.75], dtype=np.float32)
    y = [1, 0, 1, 0]
    eps32 = float(np.finfo(np.float32).eps)
    assert rm.log_loss(y, p, eps=eps32) == pytest.approx(skm.log_loss(y, p, labels=[0, 1]), rel=1e-6)
    assert rm.log_loss(y, p) > skm.log_loss(y, p, labels=[0, 1]) + 10   # float64 clip is tighter


def test_pr_curve_worked_example_by_hand():
    # scores 0.8 (pos), 0.4 (neg), 0.35 (pos), 0.1 (neg); thresholds ascending
    precision, recall, thresholds = rm.precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert thresholds.tolist() == [0.1, 0.35, 0.4, 0.8]
    assert precision.tolist() == [2 / 4, 2 / 3, 1 / 2, 1 / 1, 1.0]
    assert recall.tolist() == [1.0, 1.0, 0.5, 0.5, 0.0]
    assert rm.pr_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)


def test_equal_infinite_scores_are_one_threshold():
    """np.diff(sorted scores) is NaN between two equal infinities (inf - inf), which would split
    one tie into two thresholds; the curve compares neighbours with != instead.
    (scikit-learn rejects infinite scores; a ranking needs only their order.)"""
    y, s = [1, 0, 0, 1, 1], [np.inf, -np.inf, -np.inf, 0.2, np.inf]
    precision, recall, thresholds = rm.precision_recall_curve(y, s)
    assert thresholds.tolist() == [-np.inf, 0.2, np.inf]
    lit_precision, lit_recall, _ = pr_curve_literal(y, s)
    assert precision.tolist() == [float(v) for v in lit_precision]
    assert recall.tolist() == [float(v) for v in lit_recall]
    assert rm.pr_auc(y, s) == pytest.approx(float(ap_literal(y, s)))


def test_inputs_of_several_types_are_accepted():
    y, p = [0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]
    expected = rm.log_loss(y, p)
    for convert in (list, tuple, np.asarray, pd.Series):
        assert rm.log_loss(convert(y), convert(p)) == expected
    assert rm.brier_score(np.array([False, True]), [0.0, 1.0]) == 0.0
    for value in (rm.log_loss(y, p), rm.brier_score(y, p), rm.normalized_entropy(y, p),
                  rm.pr_auc(y, p), rm.expected_calibration_error(y, p)):
        assert type(value) is float


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        rm.log_loss([0, 1], [0.1, 0.2], 1e-15)
    with pytest.raises(TypeError):
        rm.calibration_curve([0, 1], [0.1, 0.2], 5)
    with pytest.raises(TypeError):
        rm.expected_calibration_error([0, 1], [0.1, 0.2], 5)


# --------------------------------------------------------------------------- degenerate input

def test_normalized_entropy_with_base_rate_0_or_1_warns_and_is_nan():
    for y in ([0, 0, 0], [1, 1]):
        with pytest.warns(rm.RecmetricsWarning, match=r"normalized entropy is undefined: the base "
                          r"rate is [01] \(all labels are equal\).*returning NaN"):
            assert math.isnan(rm.normalized_entropy(y, [0.5] * len(y)))


def test_pr_auc_without_positives_warns_and_is_nan_while_scikit_learn_says_0():
    with pytest.warns(rm.RecmetricsWarning, match=r"PR AUC is undefined: y_true holds no positive"):
        assert math.isnan(rm.pr_auc([0, 0], [0.3, 0.7]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert skm.average_precision_score([0, 0], [0.3, 0.7]) == 0.0


def test_only_positives_give_pr_auc_1_and_precision_1_everywhere():
    precision, recall, _ = rm.precision_recall_curve([1, 1, 1], [0.2, 0.2, 0.9])
    assert precision.tolist() == [1.0, 1.0, 1.0] and recall.tolist() == [1.0, 1 / 3, 0.0]
    assert rm.pr_auc([1, 1, 1], [0.2, 0.2, 0.9]) == 1.0


def test_warnings_point_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rm.normalized_entropy([1], [0.5])
        rm.pr_auc([0], [0.5])
    assert [w.filename for w in caught] == [__file__, __file__]


# --------------------------------------------------------------------------- properties

def test_perfect_calibration_gives_ece_0():
    # in each bin the observed rate equals the (single) prediction: 1 of 4 at 0.25, 3 of 4 at 0.75
    y = [1, 0, 0, 0, 1, 1, 1, 0, 1]
    p = [0.25] * 4 + [0.75] * 4 + [1.0]
    assert rm.expected_calibration_error(y, p) == 0.0
    prob_true, prob_pred = rm.calibration_curve(y, p)
    assert prob_true.tolist() == prob_pred.tolist() == [0.25, 0.75, 1.0]


@settings(max_examples=100)
@given(st.integers(1, 40), st.integers(1, 40))
def test_predicting_the_base_rate_gives_log_loss_equal_to_entropy_and_ne_1(n_pos, n_neg):
    y = [1] * n_pos + [0] * n_neg
    rate = n_pos / (n_pos + n_neg)
    p = [rate] * len(y)
    assert_close(rm.log_loss(y, p), entropy_literal(rate))
    assert_close(rm.normalized_entropy(y, p), 1.0)
    assert_close(rm.brier_score(y, p), rate * (1 - rate))
    # one bin, |mean(y) - mean(p)|: the mean of n equal floats may be off by n rounding steps
    # (hypothesis found 1.1e-15 for 39 positives and 2 negatives)
    assert rm.expected_calibration_error(y, p) == pytest.approx(0.0, abs=len(y) * 2.3e-16)
    # a constant score is one threshold: PR AUC is the base rate
    assert_close(rm.pr_auc(y, p), rate)


@settings(max_examples=200)
@given(labelled_probabilities(min_size=2, need_positive=True))
def test_ranking_metrics_ignore_halving_the_probabilities(case):
    y, p = case
    assume(all(v == 0 or v >= 1e-300 for v in p))   # halving a subnormal number rounds
    halved = [v / 2 for v in p]         # twice too low; same order (halving is exact)
    assert rm.pr_auc(y, halved) == rm.pr_auc(y, p)
    if 0 < sum(y) < len(y):
        assert rm.roc_auc(y, halved) == rm.roc_auc(y, p)


def test_twice_too_high_predictions_cost_log_loss_and_calibration_not_auc():
    rng = np.random.default_rng(7)
    true_p = rng.uniform(0.01, 0.4, 50_000)
    y = (rng.random(true_p.size) < true_p).astype(int)
    inflated = 2 * true_p
    assert rm.roc_auc(y, inflated) == rm.roc_auc(y, true_p)
    assert rm.log_loss(y, inflated) > rm.log_loss(y, true_p) + 0.05
    assert rm.brier_score(y, inflated) > rm.brier_score(y, true_p)
    assert rm.expected_calibration_error(y, inflated) > 0.15 > 0.02 > rm.expected_calibration_error(y, true_p)


@settings(max_examples=200)
@given(labelled_probabilities(need_positive=True))
def test_row_order_does_not_matter(case):
    y, p = case
    order = np.random.default_rng(len(y)).permutation(len(y))
    ys, ps = [y[i] for i in order], [p[i] for i in order]
    assert_close(rm.log_loss(ys, ps), rm.log_loss(y, p))
    assert rm.pr_auc(ys, ps) == rm.pr_auc(y, p)
    for a, b in zip(rm.precision_recall_curve(ys, ps), rm.precision_recall_curve(y, p)):
        assert np.array_equal(a, b)
    assert_close(rm.expected_calibration_error(ys, ps), rm.expected_calibration_error(y, p))


@settings(max_examples=200)
@given(labelled_probabilities(need_positive=True), st.integers(1, 12))
def test_ranges(case, n_bins):
    y, p = case
    assert 0 <= rm.brier_score(y, p) <= 1
    assert 0 <= rm.log_loss(y, p) <= -math.log(np.finfo(float).eps) + 1e-12
    assert 0 <= rm.expected_calibration_error(y, p, n_bins=n_bins) <= 1
    assert 0 < rm.pr_auc(y, p) <= 1
    precision, recall, thresholds = rm.precision_recall_curve(y, p)
    assert np.all(np.diff(recall) <= 0) and np.all(np.diff(thresholds) > 0)
    assert precision[-1] == 1 and recall[-1] == 0 and recall[0] == 1
    assert len(rm.calibration_curve(y, p, n_bins=n_bins)[0]) <= n_bins


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 1), st.floats(0, 1)), min_size=1, max_size=30,
                unique_by=lambda row: row[1]))
def test_without_ties_pr_auc_is_the_ranking_average_precision(rows):
    y = [label for label, _ in rows]
    if not any(y):
        y[0] = 1
    s = [score for _, score in rows]
    ranked = sorted(range(len(s)), key=lambda i: -s[i])
    relevant = {i for i in range(len(y)) if y[i] == 1}
    assert_close(rm.pr_auc(y, s), rm.average_precision(ranked, relevant))
    assert_close(rm.pr_auc(y, s), float(ranking_ap_literal([y[i] for i in ranked])))


@settings(max_examples=150)
@given(st.lists(st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.5, 0.9])), min_size=1,
                max_size=8))
def test_with_ties_pr_auc_is_at_least_the_pessimistic_ranking_ap(rows):
    """scikit-learn's step-wise AP gives every positive of a tie the precision at the end of the
    tie: never less than the AP of the order with the tie's negatives first, but it may be above
    or below the expected AP over all orders of the tie (McSherry & Najork)."""
    y = [label for label, _ in rows]
    if not any(y):
        y[0] = 1
    s = [score for _, score in rows]
    negatives_first = sorted(range(len(s)), key=lambda i: (-s[i], y[i]))
    assert rm.pr_auc(y, s) >= float(ranking_ap_literal([y[i] for i in negatives_first])) - 1e-12
    if len(set(s)) == len(s):
        assert_close(rm.pr_auc(y, s), float(expected_ranking_ap_literal(y, s)))


def test_ties_move_pr_auc_below_or_above_the_expected_ranking_ap():
    # one positive tied with one negative: 1/2 by thresholds, (1 + 1/2) / 2 over the two orders
    assert rm.pr_auc([1, 0], [0.5, 0.5]) == 0.5
    assert expected_ranking_ap_literal([1, 0], [0.5, 0.5]) == Fraction(3, 4)
    # a negative, then two tied positives: every order is (1/2 + 2/3) / 2, the thresholds give
    # both positives the precision 2/3 of the end of the tie
    assert rm.pr_auc([0, 1, 1], [0.5, 0.1, 0.1]) == pytest.approx(2 / 3)
    assert expected_ranking_ap_literal([0, 1, 1], [0.5, 0.1, 0.1]) == Fraction(7, 12)


def test_kernels_take_clean_arrays_and_return_per_sample_or_per_bin_values():
    y = np.array([0, 1, 1], dtype=np.int8)
    p = np.array([0.2, 0.8, 0.5])
    per_sample = _kernels.log_loss(y, p, probability.DEFAULT_EPS)
    assert per_sample.tolist() == pytest.approx([-math.log(0.8), -math.log(0.8), -math.log(0.5)])
    assert _kernels.brier(y, p).tolist() == pytest.approx([0.04, 0.04, 0.25])
    count, positives, prob_sum = _kernels.calibration_bins(y, p, np.linspace(0, 1, 3))
    assert count.tolist() == [2, 1] and positives.tolist() == [1, 1]
    assert prob_sum.tolist() == pytest.approx([0.7, 0.8])


# --------------------------------------------------------------------------- issue 23: weights


@st.composite
def weighted_probabilities(draw, need_positive=False):
    y, p = draw(labelled_probabilities(need_positive=need_positive))
    w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=len(y), max_size=len(y)))
    keep = next((i for i, t in enumerate(y) if t == 1), 0) if need_positive else 0
    w[keep] = 2.0
    return y, p, w


@settings(max_examples=200)
@given(weighted_probabilities())
def test_weighted_log_loss_and_brier_equal_scikit_learn_and_the_weighted_mean(case):
    y, p, w = case
    assert_close(rm.log_loss(y, p, sample_weight=w), skm.log_loss(y, p, labels=[0, 1], sample_weight=w))
    assert_close(rm.brier_score(y, p, sample_weight=w), skm.brier_score_loss(y, p, sample_weight=w))
    brier = sum(Fraction(x) * (Fraction(q) - t) ** 2 for t, q, x in zip(y, p, w)) / sum(map(Fraction, w))
    assert_close(rm.brier_score(y, p, sample_weight=w), float(brier))
    # whole weights are repetitions
    whole = [int(x) for x in w]
    if any(whole) and all(x == int(x) for x in w):
        rep_y = [t for t, x in zip(y, whole) for _ in range(x)]
        rep_p = [q for q, x in zip(p, whole) for _ in range(x)]
        assert_close(rm.log_loss(y, p, sample_weight=w), rm.log_loss(rep_y, rep_p))


@settings(max_examples=200)
@given(weighted_probabilities(need_positive=True))
def test_weighted_precision_recall_curve_is_scikit_learns(case):
    y, s, w = case
    precision, recall, thresholds = rm.precision_recall_curve(y, s, sample_weight=w)
    sk_precision, sk_recall, sk_thresholds = skm.precision_recall_curve(y, s, sample_weight=w)
    np.testing.assert_array_equal(thresholds, sk_thresholds)
    np.testing.assert_allclose(precision, sk_precision, atol=1e-12)
    np.testing.assert_allclose(recall, sk_recall, atol=1e-12)
    assert_close(rm.pr_auc(y, s, sample_weight=w), skm.average_precision_score(y, s, sample_weight=w))
    # literal: threshold by threshold over the samples of weight > 0
    kept = [(t, q, x) for t, q, x in zip(y, s, w) if x > 0]
    for threshold, prec, rec in zip(thresholds, precision, recall):
        tp = sum(x for t, q, x in kept if q >= threshold and t == 1)
        predicted = sum(x for t, q, x in kept if q >= threshold)
        assert prec == pytest.approx(tp / predicted) and rec == pytest.approx(
            tp / sum(x for t, _, x in kept if t == 1))


def test_a_positive_of_weight_0_is_dropped_before_the_curve_looks_for_a_positive():
    y, s, w = [1, 0, 0], [0.9, 0.2, 0.1], [0, 1, 1]
    with pytest.raises(ValueError, match=r"y_true holds no positive \(1\); the precision-recall curve"):
        rm.precision_recall_curve(y, s, sample_weight=w)
    with pytest.warns(rm.RecmetricsWarning, match=r"PR AUC is undefined: y_true holds no positive"):
        assert math.isnan(rm.pr_auc(y, s, sample_weight=w))
