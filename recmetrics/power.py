r"""Experiment design: how many users a comparison needs, and what it can detect.

Three questions asked before an experiment, each answered for the test that will be run on it:

* :func:`paired_sample_size`: how many users an **offline** comparison of two models needs to
  detect a difference ``effect`` in a per-user metric (NDCG@10, say), from the per-user values
  of the two models on data you already have (the paired t-test; 配对样本量);
* :func:`minimum_detectable_effect`: the smallest difference a test set of ``n_users`` users
  detects with the given power (最小可检测效应, MDE);
* :func:`ab_sample_size`: the users per arm of an **online** A/B test of two click rates (the
  two-proportion z-test, which is the 2x2 chi-square test without Yates' correction).

Power (统计功效) is the probability that the test rejects "no difference" when the true
difference is the one given: with power 0.8, one experiment in five misses a real effect of that
size. The inputs the formulas need (the spread of the per-user differences, the base click rate)
come from data at hand, so the answers are estimates; plan with some margin.

scipy is imported by the functions that need it, not with the module.
"""
from __future__ import annotations

import math

import numpy as np

from ._validation import (as_finite_numbers, check_probability, check_same_length, check_whole,
                          is_real_number)

__all__ = ["paired_sample_size", "minimum_detectable_effect", "ab_sample_size"]

#: The largest sample size searched for (a larger answer means the effect is too small to test).
MAX_USERS = 10**12


def _alpha_power(alpha, power) -> tuple[float, float]:
    alpha = check_probability("alpha", alpha)
    power = check_probability("power", power)
    if power <= alpha:
        raise ValueError(f"power={power!r} must be larger than alpha={alpha!r}: a test with no "
                         "real difference already rejects with probability alpha; use e.g. "
                         "power=0.8")
    return alpha, power


def _sd_of_differences(values_a, values_b) -> float:
    """The standard deviation (n - 1 denominator) of the per-user differences b - a."""
    va = as_finite_numbers("values_a", values_a)
    vb = as_finite_numbers("values_b", values_b)
    n = check_same_length(values_a=va, values_b=vb)
    if n < 2:
        raise ValueError(f"values_a and values_b hold {n} user; pass the per-user values of at "
                         "least 2 users, paired by position")
    sd = float(np.std(vb - va, ddof=1))
    scale = max(float(np.abs(va).max()), float(np.abs(vb).max()))
    if not sd > 1e-12 * scale:   # 0 up to the rounding of b - a
        raise ValueError("values_b - values_a is the same for every user (standard deviation 0): "
                         "the spread of the differences sets the sample size, so pass per-user "
                         "values from real data (not means, not identical copies)")
    return sd


def _paired_power(dz: float, n: int, alpha: float) -> float:
    """Power of the two-sided one-sample t-test of n differences with standardized effect dz."""
    from scipy import stats  # here: scipy.stats costs ~45 MiB and 0.5 s to import

    df = n - 1
    critical = stats.t.isf(alpha / 2, df)
    shift = dz * math.sqrt(n)
    # the lower tail P(T' < -c) written as P(T'(-shift) > c): scipy's nct.cdf gives NaN far out
    return float(stats.nct.sf(critical, df, shift) + stats.nct.sf(critical, df, -shift))


def paired_sample_size(values_a, values_b, *, effect, alpha=0.05, power=0.8) -> int:
    r"""Users an offline comparison of two models needs to detect a mean difference ``effect``.

    The comparison is the paired two-sided t-test of the per-user differences
    :math:`d_u = b_u - a_u` (the test ``rm.compare`` reports as ``p_ttest``; its randomization
    test has nearly the same power with many users). With :math:`s` the standard deviation of
    the differences (denominator :math:`n - 1`) and the standardized effect
    :math:`\delta = \text{effect} / s` (Cohen's :math:`d_z`), the power with :math:`n` users is

    .. math:: 1 - \beta(n) = P(T'_{n-1,\lambda} > t_{1-\alpha/2,\,n-1})
              + P(T'_{n-1,\lambda} < -t_{1-\alpha/2,\,n-1}), \qquad \lambda = \delta\sqrt{n},

    with :math:`T'` the noncentral t distribution, and the answer is the smallest whole
    :math:`n \ge 2` with :math:`1 - \beta(n) \ge` ``power``. The normal approximation
    :math:`n \approx (z_{1-\alpha/2} + z_{1-\beta})^2 / \delta^2` is within a few users of it.
    This is statsmodels' ``TTestPower().solve_power(effect_size=δ, alpha=alpha, power=power)``
    rounded up.

    Parameters
    ----------
    values_a, values_b : sequence of float
        Per-user values of models A and B on data you have (a pilot or the current test set),
        paired by position; finite numbers, at least 2 users. Only the spread of
        ``values_b - values_a`` is used, not its mean.
    effect : float
        The difference in the mean of the metric to detect, > 0 (in the metric's units, e.g.
        0.01 of NDCG@10). The test is two-sided, so a loss of that size is detected as well.
    alpha : float, default 0.05
        Significance level of the two-sided test.
    power : float, default 0.8
        Probability of detecting a true difference of ``effect``; larger than ``alpha``.

    Returns
    -------
    int
        The number of users (each scored by both models).

    See Also
    --------
    minimum_detectable_effect : the other way round, the effect a given number of users detects.

    References
    ----------
    Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.,
    chapter 2. Erlbaum.
    Sakai, T. (2016). Topic set size design. *Information Retrieval Journal* 19(3), 256-283.

    Examples
    --------
    >>> a = [0.2, 0.5, 0.4, 0.9, 0.3, 0.6, 0.1, 0.7]
    >>> b = [0.3, 0.5, 0.6, 0.8, 0.5, 0.6, 0.3, 0.8]   # differences: sd 0.1126
    >>> paired_sample_size(a, b, effect=0.05)
    42
    """
    sd = _sd_of_differences(values_a, values_b)
    if not is_real_number(effect) or not math.isfinite(effect) or effect <= 0:
        raise ValueError(f"effect={effect!r} must be a finite number > 0: the difference in the "
                         "mean of the metric to detect, e.g. effect=0.01")
    alpha, power = _alpha_power(alpha, power)
    dz = float(effect) / sd
    return _smallest_n(lambda n: _paired_power(dz, n, alpha) >= power, dz, alpha, power)


def _smallest_n(enough, dz: float, alpha: float, power: float) -> int:
    """The smallest whole n >= 2 for which ``enough(n)`` holds (power grows with n)."""
    from scipy import stats

    guess = ((stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / dz) ** 2
    if guess > MAX_USERS:
        raise ValueError(f"the effect is {dz:.3g} standard deviations of the per-user "
                         f"differences: about {guess:.3g} users would be needed, more than "
                         f"{MAX_USERS:,}; choose a larger effect")
    high = max(2, math.ceil(guess))
    while not enough(high):
        high *= 2
    low = max(1, min(high - 1, math.floor(guess) - 1))
    while low >= 2 and enough(low):   # the guess overshot: walk the lower end down
        low = max(1, low // 2)
    while high - low > 1:             # enough(high), not enough(low) (or low = 1)
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def minimum_detectable_effect(values_a, values_b, *, n_users, alpha=0.05, power=0.8) -> float:
    r"""The smallest mean difference ``n_users`` users detect with the given power.

    The inverse of :func:`paired_sample_size` for the same paired two-sided t-test: the
    standardized effect :math:`\delta` solving :math:`1 - \beta(n) =` ``power`` at
    :math:`n =` ``n_users`` (noncentral t, found by root search), times the standard deviation
    :math:`s` of the per-user differences ``values_b - values_a``:

    .. math:: \text{MDE} = \delta^*\, s \;\approx\; (z_{1-\alpha/2} + z_{1-\beta})\, s / \sqrt{n}.

    This is statsmodels' ``TTestPower().solve_power(nobs=n_users, alpha=alpha, power=power)``
    times :math:`s`.

    Parameters
    ----------
    values_a, values_b : sequence of float
        Per-user values of models A and B, paired by position; finite, at least 2 users. Only
        the spread of the differences is used.
    n_users : int
        Users in the planned test set, at least 2.
    alpha : float, default 0.05
        Significance level of the two-sided test.
    power : float, default 0.8
        Probability of detecting a true difference of the returned size; larger than ``alpha``.

    Returns
    -------
    float
        The difference in the metric's units (e.g. of mean NDCG@10).

    Examples
    --------
    >>> a = [0.2, 0.5, 0.4, 0.9, 0.3, 0.6, 0.1, 0.7]
    >>> b = [0.3, 0.5, 0.6, 0.8, 0.5, 0.6, 0.3, 0.8]
    >>> round(minimum_detectable_effect(a, b, n_users=42), 4)
    0.0499
    """
    sd = _sd_of_differences(values_a, values_b)
    n = check_whole("n_users", n_users, minimum=2, maximum=MAX_USERS, example="2000")
    alpha, power = _alpha_power(alpha, power)
    from scipy import optimize

    high = 1.0
    while _paired_power(high, n, alpha) < power:
        high *= 2
    dz = optimize.brentq(lambda d: _paired_power(d, n, alpha) - power, 0.0, high,
                         xtol=1e-14, rtol=1e-12)
    return float(dz * sd)


def ab_sample_size(p_control, p_treatment, *, alpha=0.05, power=0.8, ratio=1.0) -> int:
    r"""Users per arm of an A/B test to detect a change in click rate from ``p_control``.

    The test is the two-sided two-proportion z-test with the **pooled** variance under the null
    hypothesis (the 2x2 chi-square test without Yates' correction, :math:`z^2 = \chi^2`). With
    :math:`n` users in the control arm, :math:`r n` in the treatment arm, :math:`p_c, p_t` the
    two rates, :math:`\Delta = p_t - p_c` and :math:`\bar p = (p_c + r p_t) / (1 + r)`:

    .. math:: n = \left\lceil \frac{\big(z_{1-\alpha/2}\,\sigma_0 + z_{1-\beta}\,\sigma_1\big)^2}
              {\Delta^2} \right\rceil, \quad
              \sigma_0^2 = \bar p (1 - \bar p)\Big(1 + \frac{1}{r}\Big), \quad
              \sigma_1^2 = p_c(1 - p_c) + \frac{p_t(1 - p_t)}{r}

    (Fleiss, Levin & Paik 2003, chapter 4, without the continuity correction). The variance
    under the null is the pooled one the test uses, under the alternative the one the rates
    give; the far tail of the two-sided test is left out (its probability is below
    :math:`\alpha/2`). This equals statsmodels'
    ``samplesize_proportions_2indep_onetail(p_control - p_treatment, p_treatment, power,
    ratio=ratio, alpha=alpha)`` rounded up.

    Parameters
    ----------
    p_control : float
        Click rate (a share of users, or of impressions when they are the unit that is
        randomized) in the control arm, strictly between 0 and 1.
    p_treatment : float
        The rate in the treatment arm that should be detected; strictly between 0 and 1, not
        equal to ``p_control``.
    alpha : float, default 0.05
        Significance level of the two-sided test.
    power : float, default 0.8
        Probability of detecting the change; larger than ``alpha``.
    ratio : float, default 1.0
        Treatment users per control user (:math:`r`; 1 for equal arms).

    Returns
    -------
    int
        Users in the **control** arm; the treatment arm needs ``ceil(ratio * n)``, the same
        number for equal arms.

    References
    ----------
    Fleiss, J. L., Levin, B., Paik, M. C. (2003). *Statistical Methods for Rates and
    Proportions*, 3rd ed., chapter 4. Wiley.
    Kohavi, R., Tang, D., Xu, Y. (2020). *Trustworthy Online Controlled Experiments*, chapter 17.
    Cambridge University Press.

    Examples
    --------
    >>> ab_sample_size(0.05, 0.057)        # a 14% lift of a 5% click rate
    16222
    >>> ab_sample_size(0.05, 0.057, ratio=3.0)   # one control user for three treated
    10945
    """
    pc = check_probability("p_control", p_control)
    pt = check_probability("p_treatment", p_treatment)
    if pc == pt:
        raise ValueError(f"p_treatment={p_treatment!r} equals p_control: there is no change to "
                         "detect; give the rate the treatment should reach")
    alpha, power = _alpha_power(alpha, power)
    if not is_real_number(ratio) or not math.isfinite(ratio) or ratio <= 0:
        raise ValueError(f"ratio={ratio!r} must be a finite number > 0 (treatment users per "
                         "control user), e.g. 1.0 for equal arms")
    r = float(ratio)
    from scipy import stats

    pooled = (pc + r * pt) / (1 + r)
    sd_null = math.sqrt(pooled * (1 - pooled) * (1 + 1 / r))
    sd_alternative = math.sqrt(pc * (1 - pc) + pt * (1 - pt) / r)
    root_n = (stats.norm.isf(alpha / 2) * sd_null + stats.norm.isf(1 - power) * sd_alternative) \
        / abs(pt - pc)
    n = root_n**2
    return max(1, math.ceil(n - 1e-9 * n))   # 1e-9: a value that is whole up to rounding stays
