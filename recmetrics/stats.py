r"""Pearson's chi-square goodness-of-fit test (卡方检验) and its critical values.

scipy.stats does the distribution work; this module adds input checks and
names the parts of the result.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from . import _kernels
from ._validation import (as_counts, as_numbers, check_n_resamples, check_probability,
                          check_same_length, check_seed)

__all__ = ["ChiSquareResult", "chi_square_test", "chi_square_critical_value", "bootstrap_ci"]


class ChiSquareResult(NamedTuple):
    """Result of :func:`chi_square_test`."""

    statistic: float
    dof: int
    p_value: float


def chi_square_test(observed, expected=None) -> ChiSquareResult:
    r"""Pearson's chi-square test that counts follow the expected counts.

    .. math:: \chi^2 = \sum_{i=1}^{c} \frac{(O_i - E_i)^2}{E_i}, \qquad
              \text{dof} = c - 1, \qquad p = P(\chi^2_{\text{dof}} \ge \chi^2)

    The p-value is the probability, *if the null hypothesis holds*, of a
    statistic at least this large. A large p-value means the data do not
    contradict H0; it does not show that H0 is true.

    Parameters
    ----------
    observed : sequence of counts (>= 0), at least two categories
    expected : sequence of counts (> 0) or None
        None means all categories equally likely. Must sum to the same total
        as ``observed``.

    Returns
    -------
    ChiSquareResult
        ``statistic``, ``dof`` and ``p_value``.

    References
    ----------
    Pearson, K. (1900). On the criterion that a given system of deviations from the probable ...
    *Philosophical Magazine* 50(302), 157-175.

    Examples
    --------
    >>> r = chi_square_test([3, 7])          # 3 heads, 7 tails, fair coin expected
    >>> round(r.statistic, 4), r.dof, round(r.p_value, 4)
    (1.6, 1, 0.2059)
    """
    obs = as_counts("observed", observed)
    if obs.size < 2:
        raise ValueError("observed needs at least two categories (a chi-square test with one "
                         "category has 0 degrees of freedom)")
    if expected is None:
        exp = np.full(obs.size, obs.sum() / obs.size)
        if obs.sum() == 0:
            raise ValueError("observed sums to 0; a chi-square test needs at least one count")
    else:
        exp = as_counts("expected", expected)
        check_same_length(observed=obs, expected=exp)
        if (exp == 0).any():
            first = int(np.flatnonzero(exp == 0)[0])
            raise ValueError(f"expected has a zero count at index {first}; expected counts must "
                             "be > 0 (merge that category with another)")
        if not np.isclose(obs.sum(), exp.sum(), rtol=1e-8, atol=0):
            raise ValueError(f"observed sums to {obs.sum():g} but expected sums to "
                             f"{exp.sum():g}; scale expected to the observed total")
    statistic = float(np.sum((obs - exp) ** 2 / exp))
    dof = obs.size - 1
    from scipy.stats import chi2  # here: scipy.stats costs ~45 MiB and 0.5 s to import

    return ChiSquareResult(statistic, dof, float(chi2.sf(statistic, dof)))


def chi_square_critical_value(alpha: float, dof: int) -> float:
    r"""The value a chi-square statistic exceeds with probability ``alpha`` under H0.

    .. math:: c \text{ such that } P(\chi^2_{\text{dof}} \ge c) = \alpha

    References
    ----------
    Pearson, K. (1900). *Philosophical Magazine* 50(302), 157-175.

    Examples
    --------
    >>> round(chi_square_critical_value(0.10, 1), 3), round(chi_square_critical_value(0.25, 1), 3)
    (2.706, 1.323)
    """
    alpha = check_probability("alpha", alpha)
    if isinstance(dof, bool) or not isinstance(dof, numbers.Integral) or dof < 1:
        raise ValueError(f"dof={dof!r} must be an integer >= 1 (categories minus one)")
    from scipy.stats import chi2

    return float(chi2.isf(alpha, int(dof)))


def bootstrap_ci(values, *, weights=None, confidence: float = 0.95, n_resamples: int = 1000,
                 seed=None) -> tuple[float, float]:
    r"""Percentile bootstrap interval for the (weighted) mean of per-user values.

    Users are drawn with replacement ``n_resamples`` times; each draw's mean
    :math:`\sum_u c_u w_u v_u / \sum_u c_u w_u` (:math:`c_u` = times user *u*
    was drawn) is recorded, and the interval is the ``(1 - confidence)/2`` and
    ``(1 + confidence)/2`` quantiles of those means (Efron & Tibshirani 1993,
    ch. 13). Resampling users, not rows, keeps each user's items together.

    Parameters
    ----------
    values : sequence of float
        One value per user (e.g. per-user NDCG@10).
    weights : sequence of float, optional
        Weight of each user (e.g. impressions, for GAUC); default equal.
    confidence : float, default 0.95
    n_resamples : int, default 1000
        From 100 to 10,000,000: fewer cannot place a 95% percentile interval's
        ends; more change nothing at four decimals.
    seed : int, numpy Generator or None
        Same seed, same interval.

    Returns
    -------
    (low, high) : tuple of float

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13. Chapman &
    Hall.

    Examples
    --------
    >>> low, high = bootstrap_ci([0.0, 1.0] * 50, seed=0)
    >>> 0.39 < low < 0.5 < high < 0.61
    True
    """
    v = as_numbers("values", values)
    w = np.ones_like(v) if weights is None else as_counts("weights", weights)
    check_same_length(values=v, weights=w)
    confidence = check_probability("confidence", confidence)
    n_resamples = check_n_resamples(n_resamples)
    rng = np.random.default_rng(check_seed(seed))
    return _kernels.bootstrap_interval(v, w, confidence, n_resamples, rng)
