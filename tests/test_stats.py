"""Chi-square test, DeLong's test, the paired bootstrap test and p-value adjustment: literal
references, scipy, scikit-learn and statsmodels."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats
from sklearn.metrics import roc_auc_score

import recmetrics as rm


def test_source_000_coin_three_heads_seven_tails():
    result = rm.chi_square_test([3, 7])
    assert result.statistic == pytest.approx((3 - 5) ** 2 / 5 + (7 - 5) ** 2 / 5) == 1.6
    assert result.dof == 1
    assert round(result.p_value, 3) == 0.206
    assert round(rm.chi_square_critical_value(0.25, 1), 3) == 1.323
    assert round(rm.chi_square_critical_value(0.10, 1), 3) == 2.706
    # 1.6 lies between the two critical values, so 0.10 < p < 0.25, as the table lookup says
    assert 0.10 < result.p_value < 0.25
    assert rm.chi_square_test([3, 7], [5, 5]) == result


@given(st.lists(st.integers(0, 200), min_size=2, max_size=8).filter(lambda c: sum(c) > 0))
def test_chi_square_matches_scipy(counts):
    ours = rm.chi_square_test(counts)
    theirs = stats.chisquare(counts)
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.p_value == pytest.approx(theirs.pvalue)
    assert ours.dof == len(counts) - 1


def test_chi_square_with_expected_counts_matches_scipy():
    observed, expected = [18, 22, 35, 25], [25, 25, 25, 25]
    ours = rm.chi_square_test(observed, expected)
    theirs = stats.chisquare(observed, expected)
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.p_value == pytest.approx(theirs.pvalue)


@pytest.mark.parametrize("alpha, dof", [(0.05, 1), (0.01, 3), (0.5, 10)])
def test_critical_value_inverts_the_p_value(alpha, dof):
    c = rm.chi_square_critical_value(alpha, dof)
    assert stats.chi2.sf(c, dof) == pytest.approx(alpha)
    assert c == pytest.approx(stats.chi2.ppf(1 - alpha, dof))


# --------------------------------------------------------------------------- DeLong's test

def psi(x, y):
    """DeLong's kernel: 1 if the positive scores higher, 1/2 for a tie, else 0."""
    return 1.0 if x > y else 0.5 if x == y else 0.0


def delong_literal(y_true, score_a, score_b):
    """DeLong et al. (1988), written out: structural components V10 / V01 by looping over pairs,
    their 2x2 sample covariance matrices S10 and S01, and Var(B - A) = c' (S10/m + S01/n) c."""
    pos = [i for i, t in enumerate(y_true) if t == 1]
    neg = [j for j, t in enumerate(y_true) if t == 0]
    m, n = len(pos), len(neg)
    v10, v01 = [], []
    for s in (score_a, score_b):
        v10.append([sum(psi(s[i], s[j]) for j in neg) / n for i in pos])
        v01.append([sum(psi(s[i], s[j]) for i in pos) / m for j in neg])
    auc = [sum(v) / m for v in v10]

    def covariance(v, r, q, size):
        return sum((v[r][k] - auc[r]) * (v[q][k] - auc[q]) for k in range(size)) / (size - 1)

    s = [[covariance(v10, r, q, m) / m + covariance(v01, r, q, n) / n for q in (0, 1)]
         for r in (0, 1)]
    variance = s[0][0] + s[1][1] - 2 * s[0][1]
    return auc[0], auc[1], variance


def quiet_delong(*args):
    """delong_test with the degenerate-case warnings (documented, tested below) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        return rm.delong_test(*args)


@st.composite
def two_models(draw, min_size=4, max_size=40):
    """Labels with at least two positives and two negatives; scores with many ties."""
    n = draw(st.integers(min_size, max_size))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    labels[:4] = [0, 0, 1, 1]
    values = st.sampled_from([-2.0, 0.0, 0.1, 0.25, 0.5, 0.7, 1.0, 3.0])
    a = draw(st.lists(values, min_size=n, max_size=n))
    b = draw(st.lists(values, min_size=n, max_size=n))
    return labels, a, b


@given(two_models())
def test_delong_variance_equals_the_literal_pairwise_formula(data):
    y, a, b = data
    result = quiet_delong(y, a, b)
    auc_a, auc_b, variance = delong_literal(y, a, b)
    assert result.auc_a == pytest.approx(auc_a, rel=1e-12)
    assert result.auc_b == pytest.approx(auc_b, rel=1e-12)
    assert result.variance == pytest.approx(variance, rel=1e-9, abs=1e-15)
    if result.variance > 0:
        z = (auc_b - auc_a) / math.sqrt(variance)
        assert result.z == pytest.approx(z, rel=1e-6)
        assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-6, abs=1e-15)


@given(two_models())
def test_delong_aucs_are_roc_auc_and_sklearn(data):
    y, a, b = data
    result = quiet_delong(y, a, b)
    assert result.auc_a == rm.roc_auc(y, a)  # the same integers over the same 2PN: bit for bit
    assert result.auc_b == rm.roc_auc(y, b)
    assert result.auc_a == pytest.approx(roc_auc_score(y, a), rel=1e-12)
    assert result.auc_b == pytest.approx(roc_auc_score(y, b), rel=1e-12)
    assert result.difference == result.auc_b - result.auc_a


@given(two_models())
def test_delong_swapping_models_negates_the_difference_and_keeps_the_p_value(data):
    y, a, b = data
    forward, backward = quiet_delong(y, a, b), quiet_delong(y, b, a)
    assert backward.difference == -forward.difference
    assert backward.variance == pytest.approx(forward.variance, rel=1e-12, abs=1e-18)
    assert backward.p_value == pytest.approx(forward.p_value, rel=1e-12)


@given(two_models())
def test_delong_negated_scores_keep_the_variance(data):
    """AUC(-s) = 1 - AUC(s): each placement V becomes 1 - V, so differences only change sign."""
    y, a, b = data
    plain, negated = quiet_delong(y, a, b), quiet_delong(y, [-x for x in a], [-x for x in b])
    assert negated.auc_a == pytest.approx(1 - plain.auc_a, abs=1e-12)
    assert negated.variance == pytest.approx(plain.variance, rel=1e-9, abs=1e-15)


def test_delong_hand_example():
    """Two positives, two negatives. A scores positives 0.9, 0.4 and negatives 0.5, 0.1; B puts
    both positives (0.8, 0.7) above both negatives (0.3, 0.2).
    A: V10 = (2/2, 1/2), V01 = (1/2 for the negative at 0.5, 2/2 for the one at 0.1): AUC 3/4.
    B: V10 = V01 = (1, 1): AUC 1. Differences B - A: V10 (0, 1/2), V01 (1/2, 0); each has
    sample variance (1/4^2 + 1/4^2) / 1 = 1/8, so Var = (1/8)/2 + (1/8)/2 = 1/8,
    z = (1/4) / sqrt(1/8) = 1/sqrt(2) and p = 2 Phi(-1/sqrt(2)) = erfc(1/2) = 0.4795."""
    r = rm.delong_test([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [0.8, 0.7, 0.3, 0.2])
    assert (r.auc_a, r.auc_b, r.difference) == (0.75, 1.0, 0.25)
    assert r.variance == 0.125
    assert r.z == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    assert r.p_value == pytest.approx(math.erfc(0.5), rel=1e-15)
    assert round(r.p_value, 4) == 0.4795
    assert isinstance(r, rm.DeLongResult) and r._fields == (
        "auc_a", "auc_b", "difference", "variance", "z", "p_value")


def _auc_by_ranks(y, s):
    ranks = stats.rankdata(s)  # Mann-Whitney with averaged ranks, independent of recmetrics
    m = int(y.sum())
    return (ranks[y == 1].sum() - m * (m + 1) / 2) / (m * (y.size - m))


def test_delong_standard_error_matches_a_paired_bootstrap():
    """A literal stratified paired bootstrap (positives and negatives resampled apart, both
    models on the same draw, as DeLong's variance holds m and n fixed) of AUC_B - AUC_A: its
    standard deviation over 2,000 draws (Monte Carlo error about 1.6%) agrees with
    sqrt(variance) within 10%, and so do the normal p-values built on each."""
    rng = np.random.default_rng(7)
    n = 400
    y = (rng.random(n) < 0.4).astype(int)
    common = rng.normal(size=n)  # shared by both models: correlated AUCs
    a = y * 1.0 + common + rng.normal(scale=0.8, size=n)
    b = y * 1.3 + common + rng.normal(scale=0.8, size=n)
    result = rm.delong_test(y, a, b)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    draws = np.random.default_rng(2024)
    differences = []
    for _ in range(2000):
        idx = np.r_[draws.choice(pos, pos.size), draws.choice(neg, neg.size)]
        differences.append(_auc_by_ranks(y[idx], b[idx]) - _auc_by_ranks(y[idx], a[idx]))
    se_bootstrap = float(np.std(differences, ddof=1))
    assert 0.9 < se_bootstrap / math.sqrt(result.variance) < 1.1
    p_bootstrap = 2 * stats.norm.sf(abs(result.difference) / se_bootstrap)
    assert 0.05 < result.p_value < 0.2  # a case where the p-value is worth comparing
    assert p_bootstrap == pytest.approx(result.p_value, abs=0.02)


def test_delong_one_class_is_nan_with_a_warning():
    with pytest.warns(rm.RecmetricsWarning, match="only positives"):
        result = rm.delong_test([1, 1, 1], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1])
    assert all(math.isnan(x) for x in result)


def test_delong_one_positive_gives_aucs_but_no_variance():
    with pytest.warns(rm.RecmetricsWarning, match="at least two positives and two negatives"):
        result = rm.delong_test([1, 0, 0], [0.9, 0.2, 0.5], [0.3, 0.2, 0.5])
    assert (result.auc_a, result.auc_b) == (1.0, 0.5)
    assert result.difference == -0.5
    assert all(math.isnan(x) for x in (result.variance, result.z, result.p_value))


@pytest.mark.parametrize("b", [[0.9, 0.8, 0.1, 0.2], [5.0, 7.0, -1.0, 0.0]],
                         ids=["identical", "both-perfect"])
def test_delong_zero_variance_and_no_difference_is_p_one(b):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = rm.delong_test([1, 1, 0, 0], [0.9, 0.8, 0.1, 0.2], b)
    assert (result.difference, result.variance, result.p_value) == (0.0, 0.0, 1.0)
    assert math.isnan(result.z)


def test_delong_zero_variance_with_a_difference_warns_and_is_p_zero():
    with pytest.warns(rm.RecmetricsWarning, match="variance of the AUC difference is 0"):
        result = rm.delong_test([1, 1, 0, 0], [0.9, 0.8, 0.1, 0.2], [0.1, 0.2, 0.9, 0.8])
    assert (result.auc_a, result.auc_b, result.variance, result.p_value) == (1.0, 0.0, 0.0, 0.0)
    assert result.z == -math.inf


@pytest.mark.parametrize("args, message", [
    (([1, 0], [0.1, 0.2], [0.1]), r"inputs differ in length: y_true has 2, y_score_a has 2, "
                                  r"y_score_b has 1"),
    (([1, 0], [0.1, float("nan")], [0.1, 0.2]), r"y_score_a contains 1 NaN value"),
    (([1, 0], [0.1, 0.2], ["x", "y"]), r"y_score_b must hold numbers"),
    (([1, 2], [0.1, 0.2], [0.1, 0.2]), r"y_true must hold only 0 and 1, found 2 at index 1"),
    (([], [], []), r"y_true is empty"),
])
def test_delong_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        rm.delong_test(*args)


def test_delong_accepts_infinite_scores_as_roc_auc_does():
    y, a, b = [1, 1, 0, 0, 1], [np.inf, 0.2, -np.inf, 0.3, 0.9], [0.5, 0.2, 0.1, 0.3, np.inf]
    result = rm.delong_test(y, a, b)
    assert (result.auc_a, result.auc_b) == (rm.roc_auc(y, a), rm.roc_auc(y, b))
    assert result.variance == pytest.approx(delong_literal(y, a, b)[2], rel=1e-12)


# --------------------------------------------------------------------------- p-value adjustment


def holm_literal(p):
    """Holm (1979) step-down: sort, multiply the j-th smallest by m - j + 1, running maximum."""
    run = [i for i, x in enumerate(p) if not math.isnan(x)]
    m, out, running = len(run), list(p), 0.0
    for j, i in enumerate(sorted(run, key=lambda i: p[i])):  # j = 0 for the smallest
        running = max(running, min(1.0, (m - j) * p[i]))
        out[i] = running
    return out


def bonferroni_literal(p):
    m = sum(not math.isnan(x) for x in p)
    return [x if math.isnan(x) else min(1.0, m * x) for x in p]


def bh_literal(p):
    """Benjamini-Hochberg (1995) step-up: the smallest m/j p_(j) over j at or above the rank."""
    run = [i for i, x in enumerate(p) if not math.isnan(x)]
    ranked = sorted(run, key=lambda i: p[i])
    m, out = len(run), list(p)
    for r, i in enumerate(ranked):
        out[i] = min(1.0, min(m / (j + 1) * p[ranked[j]] for j in range(r, m)))
    return out


LITERAL = {"holm": holm_literal, "bonferroni": bonferroni_literal, "bh": bh_literal,
           "none": list}

p_vectors = st.lists(st.one_of(st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.04, 0.05, 0.2, 0.5,
                                                 1.0, float("nan")]),
                               st.floats(0, 1)), max_size=30)


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "none"])
@given(p=p_vectors)
def test_adjust_p_values_equals_the_literal_procedure(method, p):
    got = rm.adjust_p_values(p, method=method)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (len(p),)
    np.testing.assert_allclose(got, LITERAL[method](p), rtol=1e-12, atol=0)  # NaN where NaN


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                            ("bh", "fdr_bh")])
@given(p=st.lists(st.one_of(st.sampled_from([0.0, 0.01, 0.03, 0.05, 1.0]), st.floats(0, 1)),
                  min_size=1, max_size=30))
def test_adjust_p_values_matches_statsmodels(method, theirs, p):
    from unittest import mock

    from statsmodels.stats.multitest import multipletests

    with mock.patch("gc.collect"):  # statsmodels' Holm collects garbage on every call (0.15 s)
        expected = multipletests(p, method=theirs)[1]
    # atol: a subnormal p-value (below 2.2e-308) holds fewer significant digits, so p * m / i
    # computed in another order differs there by more than rtol (2.2e-313: 6.11895311096e-313
    # against statsmodels' 6.1189531109e-313)
    np.testing.assert_allclose(rm.adjust_p_values(p, method=method), expected, rtol=1e-12,
                               atol=1e-300)


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
@given(p=p_vectors)
def test_adjust_p_values_leaves_nan_out_of_the_count(method, p):
    got = rm.adjust_p_values(p, method=method)
    run = ~np.isnan(np.asarray(p, dtype=float))
    assert np.isnan(got[~run]).all()
    np.testing.assert_array_equal(got[run], rm.adjust_p_values(np.asarray(p)[run], method=method))


@given(p=p_vectors)
def test_adjusted_p_values_keep_the_order_and_holm_lies_between_bh_and_bonferroni(p):
    raw = np.asarray(p, dtype=float)
    run = ~np.isnan(raw)
    holm, bonf, bh = (rm.adjust_p_values(p, method=m)[run] for m in ("holm", "bonferroni", "bh"))
    raw = raw[run]
    for adjusted in (holm, bonf, bh):
        assert (adjusted >= raw).all() and (adjusted <= 1).all()
        order = np.argsort(raw, kind="stable")
        assert (np.diff(adjusted[order]) >= 0).all()  # monotone in the raw p-values
        assert all(len(set(adjusted[raw == x])) == 1 for x in raw)  # tied p-values stay tied
    assert (bh <= holm * (1 + 1e-12)).all() and (holm <= bonf).all()


def test_adjust_p_values_keeps_the_input_order_and_accepts_series_and_empty():
    import pandas as pd

    p = pd.Series([0.04, 0.01, 0.03], index=["c", "a", "b"])
    # sorted 0.01, 0.03, 0.04: Holm 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    np.testing.assert_allclose(rm.adjust_p_values(p), [0.06, 0.03, 0.06])
    assert rm.adjust_p_values([]).shape == (0,)
    assert np.isnan(rm.adjust_p_values([float("nan")] * 2, method="bh")).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(p_values=[0.1, 1.5]), r"p_values must hold p-values in \[0, 1\] .*found 1.5 at index 1"),
    (dict(p_values=[-0.1]), r"found -0.1 at index 0"),
    (dict(p_values=["0.1"]), r"p_values must hold numbers"),
    (dict(p_values=[[0.1, 0.2]]), r"p_values must be a one-dimensional sequence"),
    (dict(p_values=0.1), r"p_values must be a one-dimensional sequence"),
    (dict(p_values=[0.1], method="fdr_bh"), r"method='fdr_bh' is not a known option; use one of "
                                            r"'holm', 'bonferroni', 'bh', 'none'"),
])
def test_adjust_p_values_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rm.adjust_p_values(**kwargs)


# --------------------------------------------------------------------------- paired bootstrap


def bootstrap_literal(a, b, draws, weights=None):
    """The shift method by hand: centre the differences, then one weighted mean per draw."""
    w = weights or [1.0] * len(a)
    d = [y - x for x, y in zip(a, b)]
    observed = sum(wi * di for wi, di in zip(w, d)) / sum(w)
    shifted = [di - observed for di in d]
    slack = 1e-10 * max(abs(di) for di in d)
    extreme = kept = 0
    for row in draws:
        total = sum(w[j] for j in row)
        if total == 0:
            continue
        kept += 1
        extreme += abs(sum(w[j] * shifted[j] for j in row) / total) >= abs(observed) - slack
    return (1 + extreme) / (1 + kept)


paired_values = st.integers(2, 25).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0]), min_size=n, max_size=n)))


@given(paired_values, st.integers(0, 2**32))
def test_paired_bootstrap_equals_a_literal_loop_over_the_same_draws(data, seed):
    a, b, w = data
    n_resamples = 300  # n * 300 draws fit in one block, so the draws are one integers() call
    draws = np.random.default_rng(seed).integers(0, len(a), size=(n_resamples, len(a)))
    got = rm.paired_bootstrap_test(a, b, n_resamples=n_resamples, seed=seed)
    assert got == pytest.approx(bootstrap_literal(a, b, draws), rel=1e-12)
    if sum(w) > 0:
        got = rm.paired_bootstrap_test(a, b, weights=w, n_resamples=n_resamples, seed=seed)
        assert got == pytest.approx(bootstrap_literal(a, b, draws, w), rel=1e-12)


@given(paired_values)
def test_paired_bootstrap_properties(data):
    a, b, _ = data
    assert rm.paired_bootstrap_test(a, a, n_resamples=200) == 1.0
    assert rm.paired_bootstrap_test(a, b, n_resamples=200) == \
        rm.paired_bootstrap_test(b, a, n_resamples=200)  # two-sided: |mean| of negated draws
    shifted = [x + 10.0 for x in a]
    assert rm.paired_bootstrap_test(a, shifted, n_resamples=200) == 1 / 201


def test_paired_bootstrap_agrees_with_the_paired_t_test_on_a_large_sample():
    """For 400 users with normal differences, the bootstrap and t distributions of the mean
    nearly coincide: p-values within 0.01 (Monte Carlo error at 20,000 draws: about 0.002)."""
    rng = np.random.default_rng(0)
    a = rng.random(400)
    b = a + rng.normal(0.1, 1.0, 400)
    p_t = stats.ttest_rel(b, a).pvalue
    assert 0.01 < p_t < 0.2
    assert rm.paired_bootstrap_test(a, b, n_resamples=20_000, seed=1) == pytest.approx(p_t, abs=0.01)


def test_paired_bootstrap_is_reproducible_and_accepts_a_generator():
    a, b = [0.1, 0.5, 0.3, 0.9, 0.2], [0.2, 0.4, 0.6, 0.9, 0.5]
    assert rm.paired_bootstrap_test(a, b, seed=5) == rm.paired_bootstrap_test(a, b, seed=5)
    assert rm.paired_bootstrap_test(a, b, seed=np.random.default_rng(5)) == \
        rm.paired_bootstrap_test(a, b, seed=5)


def test_paired_bootstrap_single_user_is_nan_with_a_warning():
    with pytest.warns(rm.RecmetricsWarning, match="at least two users"):
        assert math.isnan(rm.paired_bootstrap_test([0.1], [0.9]))


def test_bootstrap_ci_unchanged_by_the_shared_resampler():
    """bootstrap_ci and paired_bootstrap_test draw through one helper; the interval of a fixed
    input and seed is the one the literal loop gives (means of the same integers() blocks)."""
    v = np.arange(20) / 19.0
    draws = np.random.default_rng(0).integers(0, 20, size=(1000, 20))
    means = [sum(v[j] for j in row) / 20 for row in draws]
    low, high = rm.bootstrap_ci(v, seed=0)
    assert (low, high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(a=[0.1, 0.2], b=[0.1]), r"inputs differ in length: a has 2, b has 1"),
    (dict(a=[0.1, np.inf], b=[0.1, 0.2]), r"a contains 1 infinite value\(s\) \(first at index 1\)"),
    (dict(a=[0.1, 0.2], b=[0.1, np.nan]), r"b contains 1 NaN value"),
    (dict(a=[0.1, 0.2], b=[0.1, 0.3], weights=[0, 0]), r"weights sum to 0"),
    (dict(a=[0.1, 0.2], b=[0.1, 0.3], weights=[1, -1]), r"weights contains a negative count"),
    (dict(a=[0.1, 0.2], b=[0.1, 0.3], n_resamples=10), r"n_resamples=10 must be a whole number "
                                                       r">= 100"),
    (dict(a=[0.1, 0.2], b=[0.1, 0.3], seed=-1), r"seed=-1 must be None"),
])
def test_paired_bootstrap_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rm.paired_bootstrap_test(**kwargs)
