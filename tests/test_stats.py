"""Chi-square test and critical values: source document 000 and scipy."""
import pytest
from hypothesis import given, strategies as st
from scipy import stats

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


@pytest.mark.parametrize("confidence", [0.9, 0.95])
@pytest.mark.parametrize("weighted", [False, True])
def test_bootstrap_ci_equals_a_percentile_bootstrap_drawn_by_hand(confidence, weighted):
    """Planted bug: a 90% interval reported as 95% passed every test (intervals were only
    checked to contain the value). The draws are replayed: a generator seeded with ``seed``
    draws all n_resamples x n user indices at once (below 2e6 draws, one chunk)."""
    import numpy as np

    rng = np.random.default_rng(3)
    values, weights = rng.random(40) ** 3, rng.integers(1, 20, 40).astype(float)
    got = rm.bootstrap_ci(values, weights=weights if weighted else None, confidence=confidence,
                          n_resamples=500, seed=5)
    draws = np.random.default_rng(5).integers(0, 40, size=(500, 40))
    w = weights if weighted else np.ones(40)
    means = [sum(w[i] * values[i] for i in d) / sum(w[i] for i in d) for d in draws]
    alpha = 1 - confidence
    expected = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    assert got == pytest.approx(tuple(expected), abs=1e-12)
    # a generator passed as seed is used as it is, continuing its sequence
    assert rm.bootstrap_ci(values, weights=weights if weighted else None, confidence=confidence,
                           n_resamples=500, seed=np.random.default_rng(5)) == got
