"""Sample sizes and minimum detectable effects (recmetrics.power): against statsmodels' power
classes, a literal normal-formula reference, and seeded simulations of the tests themselves."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import (power_proportions_2indep,
                                          samplesize_proportions_2indep_onetail)

import recmetrics as rm


def _pair(sd: float, n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-user values whose differences b - a have standard deviation exactly ``sd``."""
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    d = rng.normal(size=n)
    d = (d - d.mean()) / d.std(ddof=1) * sd
    return a, a + d


# ------------------------------------------------------------------ paired: statsmodels' TTestPower

def _statsmodels_power(dz: float, n: int, alpha: float) -> float:
    """TTestPower's two-sided power. Its lower tail is scipy's nct.cdf, which is NaN far out,
    where that tail is below Phi(-dz sqrt(n)) < 1e-12: then the upper tail alone."""
    power = TTestPower().power(effect_size=dz, nobs=n, alpha=alpha)
    if np.isnan(power):
        assert NormalDist().cdf(-dz * math.sqrt(n)) < 1e-12
        power = TTestPower().power(effect_size=dz, nobs=n, alpha=alpha / 2, alternative="larger")
    return float(power)


@pytest.mark.parametrize("sd", [0.05, 0.28, 1.0])
@pytest.mark.parametrize("effect", [0.005, 0.01, 0.05, 0.2])
@pytest.mark.parametrize("alpha, power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.05, 0.95)])
def test_paired_sample_size_is_the_smallest_n_with_statsmodels_power(sd, effect, alpha, power):
    a, b = _pair(sd)
    n = rm.paired_sample_size(a, b, effect=effect, alpha=alpha, power=power)
    dz = effect / np.std(b - a, ddof=1)
    assert _statsmodels_power(dz, n, alpha) >= power - 1e-9
    if n > 2:
        assert _statsmodels_power(dz, n - 1, alpha) < power
    if n > 3:   # statsmodels' root solver, rounded up, gives the same whole number
        solved = float(np.ravel(TTestPower().solve_power(effect_size=dz, alpha=alpha,
                                                         power=power))[0])
        if abs(_statsmodels_power(dz, solved, alpha) - power) < 1e-6:
            assert n == math.ceil(solved - 1e-6)


@pytest.mark.parametrize("sd", [0.05, 0.28, 1.0])
@pytest.mark.parametrize("n_users", [2, 3, 10, 100, 1511, 100_000])
@pytest.mark.parametrize("alpha, power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_minimum_detectable_effect_equals_statsmodels(sd, n_users, alpha, power):
    a, b = _pair(sd)
    mde = rm.minimum_detectable_effect(a, b, n_users=n_users, alpha=alpha, power=power)
    # statsmodels' power at the returned effect is the target power
    assert _statsmodels_power(mde / sd, n_users, alpha) == pytest.approx(power, abs=1e-9)
    # and its root solver agrees within its own tolerance (about 1e-4 relative), where it
    # converges: at n_users=3, alpha=0.01, power=0.9 it stops at an effect of power 0.41
    solved = float(np.ravel(TTestPower().solve_power(nobs=n_users, alpha=alpha, power=power))[0])
    if abs(_statsmodels_power(solved, n_users, alpha) - power) < 1e-4:
        assert mde == pytest.approx(solved * sd, rel=1e-3)


def test_the_two_paired_helpers_are_inverses():
    a, b = _pair(0.28)
    for n_users in (50, 600, 6000):
        mde = rm.minimum_detectable_effect(a, b, n_users=n_users)
        assert rm.paired_sample_size(a, b, effect=mde * (1 + 1e-9)) == n_users
        assert rm.paired_sample_size(a, b, effect=mde * 0.99) > n_users


def test_paired_sample_size_is_near_the_normal_formula():
    """(z_{1-a/2} + z_{1-b})^2 / dz^2, written out; the t-test needs a user or two more."""
    a, b = _pair(0.28)
    z = NormalDist().inv_cdf
    normal = (z(0.975) + z(0.8)) ** 2 / (0.01 / 0.28) ** 2       # the review's 6,000 users
    n = rm.paired_sample_size(a, b, effect=0.01)
    assert normal <= n <= normal + 3
    assert 6100 < n < 6200


def test_paired_sample_size_uses_the_spread_not_the_mean_of_the_differences():
    a, b = _pair(0.2)
    assert rm.paired_sample_size(a, b + 0.3, effect=0.02) == rm.paired_sample_size(a, b, effect=0.02)
    assert rm.paired_sample_size(b, a, effect=0.02) == rm.paired_sample_size(a, b, effect=0.02)


# ------------------------------------------------------------------ A/B: two proportions

def _fleiss(pc: float, pt: float, alpha: float, power: float, ratio: float) -> float:
    """The pooled-null two-proportion sample size, from the textbook formula, without scipy."""
    z = NormalDist().inv_cdf
    pbar = (pc + ratio * pt) / (1 + ratio)
    s0 = math.sqrt(pbar * (1 - pbar) * (1 + 1 / ratio))
    s1 = math.sqrt(pc * (1 - pc) + pt * (1 - pt) / ratio)
    return ((z(1 - alpha / 2) * s0 + z(power) * s1) / (pt - pc)) ** 2


@pytest.mark.parametrize("pc, pt", [(0.05, 0.057), (0.05, 0.045), (0.1, 0.12), (0.3, 0.25),
                                    (0.5, 0.52), (0.01, 0.012), (0.9, 0.95)])
@pytest.mark.parametrize("alpha, power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
@pytest.mark.parametrize("ratio", [1.0, 0.5, 3.0])
def test_ab_sample_size_equals_statsmodels_pooled_two_proportion_formula(pc, pt, alpha, power,
                                                                          ratio):
    n = rm.ab_sample_size(pc, pt, alpha=alpha, power=power, ratio=ratio)
    expected = samplesize_proportions_2indep_onetail(pc - pt, pt, power, ratio=ratio, alpha=alpha)
    assert n == math.ceil(expected - 1e-6)
    assert n == math.ceil(_fleiss(pc, pt, alpha, power, ratio) - 1e-6)
    # statsmodels' power of the pooled z-test (both tails) at n reaches the target, at n - 1 not
    # by more than the far tail's share (below alpha / 2)
    reached = power_proportions_2indep(pc - pt, pt, n, ratio=ratio, alpha=alpha).power
    assert reached >= power - 1e-9
    before = power_proportions_2indep(pc - pt, pt, n - 1, ratio=ratio, alpha=alpha).power
    assert before < power + alpha / 2


def test_ab_sample_size_of_the_page_14_example():
    """5.0% -> 5.7% click rate: 10,000 users per arm give power 0.59; 80% needs about 16,200."""
    n = rm.ab_sample_size(0.05, 0.057)
    assert 16_000 < n < 16_400
    at_10000 = power_proportions_2indep(0.007, 0.05, 10_000).power
    assert at_10000 == pytest.approx(0.59, abs=0.005)


def test_ab_sample_size_is_symmetric_in_the_direction_of_the_change():
    """With equal arms both variances are symmetric in the two rates: a rise and a fall of the
    same size need the same users."""
    assert rm.ab_sample_size(0.05, 0.057) == rm.ab_sample_size(0.057, 0.05)
    assert rm.ab_sample_size(0.05, 0.057, ratio=2.0) != rm.ab_sample_size(0.057, 0.05, ratio=2.0)


# ------------------------------------------------------------------ simulations of the tests

def test_a_paired_t_test_at_the_computed_sample_size_has_the_power():
    """Normal per-user differences with the planned mean and spread: the share of 4,000 seeded
    experiments whose paired t-test rejects is 0.8 within 3 Monte Carlo standard errors."""
    rng = np.random.default_rng(38)
    a, b = _pair(0.23, n=300, seed=5)
    n = rm.paired_sample_size(a, b, effect=0.03)
    reps = 4000
    d = rng.normal(0.03, 0.23, size=(reps, n))
    rate = float(np.mean(stats.ttest_1samp(d, 0.0, axis=1).pvalue < 0.05))
    assert abs(rate - 0.8) < 3 * math.sqrt(0.8 * 0.2 / reps)


def test_with_skewed_tied_differences_the_power_is_near_the_target():
    """Differences like NDCG's (15% exact zeros, a long right tail): the t-test's power is no
    longer exactly the noncentral t's. Measured here 0.82 (20,000 runs) for a planned 0.80;
    4,000 runs stay within 0.8 +- 0.04."""
    rng = np.random.default_rng(38)
    pool = np.where(rng.random(5000) < 0.15, 0.0, rng.exponential(0.25, 5000) - 0.25)
    a = rng.random(pool.size)
    n = rm.paired_sample_size(a, a + pool, effect=0.03)
    reps = 4000
    d = rng.choice(pool - pool.mean() + 0.03, size=(reps, n))
    rate = float(np.mean(stats.ttest_1samp(d, 0.0, axis=1).pvalue < 0.05))
    assert abs(rate - 0.8) < 0.04


def test_the_minimum_detectable_effect_is_detected_with_the_power():
    rng = np.random.default_rng(7)
    a, b = _pair(0.3, n=500, seed=3)
    mde = rm.minimum_detectable_effect(a, b, n_users=400, power=0.9)
    reps = 4000
    d = rng.normal(mde, 0.3, size=(reps, 400))
    rate = float(np.mean(stats.ttest_1samp(d, 0.0, axis=1).pvalue < 0.05))
    assert abs(rate - 0.9) < 3 * math.sqrt(0.9 * 0.1 / reps)


def test_an_ab_test_at_the_computed_sample_size_has_the_power():
    """Binomial click counts in two arms of the computed sizes, the pooled z-test (= 2x2
    chi-square): 0.8 of 20,000 seeded experiments reject, within 3 Monte Carlo errors."""
    rng = np.random.default_rng(14)
    pc, pt, ratio = 0.05, 0.057, 2.0
    n = rm.ab_sample_size(pc, pt, ratio=ratio)
    m = math.ceil(ratio * n)
    reps = 20_000
    xc, xt = rng.binomial(n, pc, reps), rng.binomial(m, pt, reps)
    pooled = (xc + xt) / (n + m)
    z = (xt / m - xc / n) / np.sqrt(pooled * (1 - pooled) * (1 / n + 1 / m))
    rate = float(np.mean(np.abs(z) > stats.norm.isf(0.025)))
    assert abs(rate - 0.8) < 3 * math.sqrt(0.8 * 0.2 / reps)


# ------------------------------------------------------------------ bad input

A, B = [0.1, 0.4, 0.3, 0.8], [0.2, 0.4, 0.5, 0.7]
BAD = [
    (lambda: rm.paired_sample_size(A, B, effect=0), "effect=0 must be a finite number > 0"),
    (lambda: rm.paired_sample_size(A, B, effect=-0.01), "effect=-0.01 must be"),
    (lambda: rm.paired_sample_size(A, B, effect=float("nan")), "effect=nan must be"),
    (lambda: rm.paired_sample_size(A, B, effect="0.1"), "effect='0.1' must be"),
    (lambda: rm.paired_sample_size(A, B[:3], effect=0.1), "values_a has 4, values_b has 3"),
    (lambda: rm.paired_sample_size([0.1], [0.2], effect=0.1), "hold 1 user"),
    (lambda: rm.paired_sample_size(A, [x + 0.1 for x in A], effect=0.1), "standard deviation 0"),
    (lambda: rm.paired_sample_size([0.1, float("nan")], B[:2], effect=0.1),
     "values_a contains 1 NaN"),
    (lambda: rm.paired_sample_size(A, B, effect=0.1, alpha=1.5), "alpha=1.5 must be a number"),
    (lambda: rm.paired_sample_size(A, B, effect=0.1, power=0), "power=0 must be a number"),
    (lambda: rm.paired_sample_size(A, B, effect=0.1, alpha=0.2, power=0.1),
     "power=0.1 must be larger than alpha=0.2"),
    (lambda: rm.paired_sample_size(A, B, effect=1e-9), "choose a larger effect"),
    (lambda: rm.minimum_detectable_effect(A, B, n_users=1), "n_users=1 must be a whole number >= 2"),
    (lambda: rm.minimum_detectable_effect(A, B, n_users=10.5), "n_users=10.5 must be a whole number"),
    (lambda: rm.minimum_detectable_effect(A, [1, 2], n_users=10), "values_a has 4, values_b has 2"),
    (lambda: rm.ab_sample_size(0, 0.1), "p_control=0 must be a number strictly between 0 and 1"),
    (lambda: rm.ab_sample_size(0.1, 1.2), "p_treatment=1.2 must be a number strictly between"),
    (lambda: rm.ab_sample_size(0.1, 0.1), "p_treatment=0.1 equals p_control"),
    (lambda: rm.ab_sample_size(0.1, 0.2, ratio=0), "ratio=0 must be a finite number > 0"),
    (lambda: rm.ab_sample_size(0.1, 0.2, ratio=float("inf")), "ratio=inf must be"),
    (lambda: rm.ab_sample_size(0.1, 0.2, alpha=0), "alpha=0 must be a number"),
]


@pytest.mark.parametrize("call, message", BAD)
def test_bad_input_is_a_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert message in str(raised.value)
