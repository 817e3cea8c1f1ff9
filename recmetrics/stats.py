r"""Statistical tests: chi-square, bootstrap intervals, paired tests and their corrections.

Pearson's chi-square goodness-of-fit test (卡方检验) and its critical values
(scipy.stats does the distribution work; this module adds input checks and
names the parts of the result), the percentile bootstrap interval of a mean,
DeLong's test of two correlated AUCs, the paired bootstrap test of a mean
difference, and the adjustment of a family of p-values for multiple testing.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from . import _kernels
from ._delong import DeLongResult, delong_result
from ._validation import (ADJUSTMENTS, Adjustment, as_binary, as_counts, as_finite_numbers,
                          as_numbers, as_p_values, check_n_resamples, check_option,
                          check_probability, check_same_length, check_seed, undefined_value)

__all__ = ["ChiSquareResult", "chi_square_test", "chi_square_critical_value", "bootstrap_ci",
           "DeLongResult", "delong_test", "paired_bootstrap_test", "adjust_p_values"]

#: Draws held in memory at once by the bootstrap functions (about 16 MiB of indices).
BOOTSTRAP_CHUNK = 2_000_000


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
    means = _resampled_means(v, w, n_resamples, np.random.default_rng(check_seed(seed)))
    low, high = np.nanquantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def _resampled_means(values: np.ndarray, weights: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Weighted means of ``n_resamples`` draws of len(values) indices with replacement.

    The draws come in blocks of ``max(1, BOOTSTRAP_CHUNK // n)`` resamples, each
    block one ``rng.integers(0, n, size=(rows, n))`` call, so memory stays
    bounded. A draw whose weights sum to 0 has mean NaN.
    """
    n = values.size
    means = np.empty(n_resamples)
    chunk = max(1, BOOTSTRAP_CHUNK // n)
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        draws = rng.integers(0, n, size=(stop - start, n))
        wd = weights[draws]
        with np.errstate(invalid="ignore", divide="ignore"):
            means[start:stop] = (wd * values[draws]).sum(axis=1) / wd.sum(axis=1)
    return means


# --------------------------------------------------------------------------- paired tests


def delong_test(y_true, y_score_a, y_score_b) -> DeLongResult:
    r"""DeLong's test: do two models' AUCs on the same samples differ?

    Both models score the same m positives and n negatives, so their AUCs are
    correlated; DeLong, DeLong & Clarke-Pearson (1988) estimate the variance
    of their difference from the *placements* (structural components) of each
    sample, with :math:`\psi(x, y) = 1` if x > y, 1/2 if x = y, else 0:

    .. math::

        V_{10}(x_i) = \frac{1}{n}\sum_{j=1}^{n} \psi(x_i, y_j), \qquad
        V_{01}(y_j) = \frac{1}{m}\sum_{i=1}^{m} \psi(x_i, y_j),

        \mathrm{Var}(\widehat{\mathrm{AUC}}_B - \widehat{\mathrm{AUC}}_A) =
            \frac{S_{10}[V^B_{10} - V^A_{10}]}{m} + \frac{S_{01}[V^B_{01} - V^A_{01}]}{n},

        z = \frac{\widehat{\mathrm{AUC}}_B - \widehat{\mathrm{AUC}}_A}{\sqrt{\mathrm{Var}}},
        \qquad p = 2\,\Phi(-|z|),

    where :math:`x_i` are the positives' scores, :math:`y_j` the negatives',
    and S[.] is a sample variance (denominator m - 1, resp. n - 1). This is the
    paper's :math:`S_{AA} + S_{BB} - 2S_{AB}`, computed from the differences so
    that nothing cancels. Each placement is a difference of midranks (Sun & Xu
    2014), found by binary search: O(n log n) time, O(n) memory. The mean of
    :math:`V_{10}` is the AUC, ties worth 1/2, exactly as :func:`roc_auc`.

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes, shared by both models.
    y_score_a, y_score_b : sequence of float
        The two models' scores of the same samples, in the same order. No NaN.

    Returns
    -------
    DeLongResult
        ``auc_a``, ``auc_b``, ``difference`` (B - A), ``variance`` (of the
        difference), ``z`` and the two-sided ``p_value`` (normal approximation).

    Notes
    -----
    Degenerate inputs follow this policy:

    * one class only: every field NaN, with a
      :class:`~recmetrics.RecmetricsWarning` (AUC is undefined, as in :func:`roc_auc`);
    * one positive or one negative: the AUCs and their difference, but
      ``variance``, ``z`` and ``p_value`` NaN with a warning (a sample variance
      needs two values);
    * variance 0 and difference 0 (identical scores, or both models ranking
      every positive above every negative): ``z`` NaN and ``p_value`` 1.0,
      silently: there is no evidence of a difference;
    * variance 0 and a difference (every pair moves the same way, e.g. one model
      perfect and the other perfectly reversed): ``z`` = ±inf and ``p_value``
      0.0 with a warning, since the normal approximation has nothing to go on;
      :func:`paired_bootstrap_test` or more samples are the way out.

    References
    ----------
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two or
    more correlated receiver operating characteristic curves: a nonparametric approach.
    *Biometrics* 44(3), 837-845.
    Sun, X. & Xu, W. (2014). Fast implementation of DeLong's algorithm for comparing the areas
    under correlated receiver operating characteristic curves. *IEEE Signal Processing Letters*
    21(11), 1389-1393.

    Examples
    --------
    >>> r = delong_test([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [0.8, 0.7, 0.3, 0.2])
    >>> r.auc_a, r.auc_b, r.difference, r.variance
    (0.75, 1.0, 0.25, 0.125)
    >>> round(r.z, 4), round(r.p_value, 4)
    (0.7071, 0.4795)
    """
    labels = as_binary("y_true", y_true)
    scores_a = as_numbers("y_score_a", y_score_a)
    scores_b = as_numbers("y_score_b", y_score_b)
    check_same_length(y_true=labels, y_score_a=scores_a, y_score_b=scores_b)
    positive = labels.astype(bool)
    m = int(positive.sum())
    n = positive.size - m
    nan = float("nan")
    if m == 0 or n == 0:
        only = "negatives (0)" if m == 0 else "positives (1)"
        undefined_value(f"DeLong's test is undefined: y_true holds only {only}, so neither AUC "
                        "exists")
        return DeLongResult(nan, nan, nan, nan, nan, nan)
    return delong_from_placements(_kernels.placements(scores_a[positive], scores_a[~positive]),
                                  _kernels.placements(scores_b[positive], scores_b[~positive]))


def delong_from_placements(placements_a, placements_b) -> DeLongResult:
    """DeLong's test from each model's doubled placements (:func:`._kernels.placements`) of the
    same m >= 1 positives and n >= 1 negatives: the second half of :func:`delong_test`, for
    callers that reuse one model's placements in several tests (:func:`recmetrics.compare`)."""
    (v10_a, v01_a), (v10_b, v01_b) = placements_a, placements_b
    m, n = v10_a.size, v01_a.size
    auc_a = float(v10_a.sum() / (2 * m * n))  # (wins + wins_or_ties) / 2PN, as roc_auc
    auc_b = float(v10_b.sum() / (2 * m * n))
    return delong_result(auc_a, auc_b, m, n,
                          lambda: _kernels.delong_variance(v10_b - v10_a, v01_b - v01_a))


def paired_bootstrap_test(a, b, *, weights=None, n_resamples: int = 10_000, seed=0) -> float:
    r"""Paired bootstrap test that the mean of ``b - a`` is 0 (two-sided, shift method).

    With per-user differences :math:`d_u = b_u - a_u`, weights :math:`w_u` and
    observed mean :math:`\bar d = \sum_u w_u d_u / \sum_u w_u`, the differences
    are shifted so that the null hypothesis holds, :math:`\tilde d_u = d_u -
    \bar d`, and resampled: each of the ``n_resamples`` draws takes n users with
    replacement and records the weighted mean :math:`\bar d^*` of their
    :math:`\tilde d`. Then

    .. math:: p = \frac{1 + \#\{r : |\bar d^*_r| \ge |\bar d|\}}{1 + R}

    with R the draws (Efron & Tibshirani 1993, sec. 16.4; Sakai 2006). The +1
    counts the observed sample as one of the draws, so p is never 0. "At
    least as large" allows for rounding: :math:`|\bar d^*_r| \ge |\bar d| -
    10^{-10} \max_u |d_u|`.

    Parameters
    ----------
    a, b : sequence of float
        Per-user values of models A and B, paired by position (e.g. per-user
        NDCG@10). Finite numbers.
    weights : sequence of float, optional
        Weight of each user (e.g. impressions, for GAUC); default equal. A draw
        whose weights sum to 0 is left out of R.
    n_resamples : int, default 10000
        From 100 to 10,000,000; the smallest p-value reported is 1 / (1 + R).
    seed : int, numpy Generator or None, default 0
        Same seed, same p-value. The draws are those of :func:`bootstrap_ci`:
        blocks of ``max(1, BOOTSTRAP_CHUNK // n)`` resamples, each block one
        ``rng.integers(0, n, size=(rows, n))`` call.

    Returns
    -------
    float
        The two-sided p-value. 1.0 when ``a`` and ``b`` are identical. NaN with
        a :class:`~recmetrics.RecmetricsWarning` for a single user, whose
        shifted difference is 0 in every draw.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, sec. 16.4. Chapman &
    Hall.
    Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. *SIGIR*, 525-532.

    Examples
    --------
    >>> paired_bootstrap_test([0.2, 0.4, 0.6], [0.2, 0.4, 0.6])
    1.0
    >>> a = [0.1 * (i % 7) for i in range(50)]
    >>> paired_bootstrap_test(a, [x + 0.2 for x in a], n_resamples=1000)  # every user gains 0.2
    0.000999000999000999
    """
    va = as_finite_numbers("a", a)
    vb = as_finite_numbers("b", b)
    w = np.ones_like(va) if weights is None else as_counts("weights", weights)
    check_same_length(a=va, b=vb, weights=w)
    if not w.sum() > 0:
        raise ValueError("weights sum to 0; give at least one user a positive weight")
    n_resamples = check_n_resamples(n_resamples)
    rng = np.random.default_rng(check_seed(seed))
    if va.size == 1:
        return undefined_value("the paired bootstrap test needs at least two users: with one, "
                               "every resample repeats that user's shifted difference, 0")
    return paired_bootstrap(va, vb, w, n_resamples, rng)[0]


def paired_bootstrap(va: np.ndarray, vb: np.ndarray, w: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """:func:`paired_bootstrap_test` on checked input (two or more users): the p-value and the
    resampled weighted means of ``b - a`` (unshifted, draws with weight sum 0 left out), whose
    percentiles are the bootstrap interval of the difference (the same draws)."""
    d = vb - va
    observed = float(np.dot(w, d) / w.sum())
    means = _resampled_means(d - observed, w, n_resamples, rng)
    means = means[~np.isnan(means)]
    tolerance = 1e-10 * float(np.abs(d).max())
    extreme = int(np.count_nonzero(np.abs(means) >= abs(observed) - tolerance))
    return (1 + extreme) / (1 + means.size), means + observed


# --------------------------------------------------------------------------- multiple testing


def adjust_p_values(p_values, *, method: Adjustment = "holm") -> np.ndarray:
    r"""Adjust a family of p-values for multiple testing.

    An adjusted p-value is the smallest family-wise level (Holm, Bonferroni) or
    false-discovery rate (Benjamini-Hochberg) at which that test would be
    rejected, so "adjusted p <= alpha" is the procedure's decision at alpha
    (Wright 1992). With m p-values sorted ascending, :math:`p_{(1)} \le \dots
    \le p_{(m)}`:

    .. math::

        \text{bonferroni:}\quad \tilde p_i = \min(1,\ m\,p_i)

        \text{holm:}\quad \tilde p_{(i)} = \min\Big(1,\ \max_{j \le i}\,(m - j + 1)\,p_{(j)}\Big)

        \text{bh:}\quad \tilde p_{(i)} = \min\Big(1,\ \min_{j \ge i}\,\frac{m}{j}\,p_{(j)}\Big)

    The max (Holm's step-down) and min (BH's step-up) make the adjusted values
    keep the order of the raw ones; tied p-values get equal adjusted values.
    Holm controls the family-wise error rate under any dependence and rejects
    everything Bonferroni does; BH controls the false-discovery rate for
    independent or positively dependent tests.

    Parameters
    ----------
    p_values : sequence of float
        P-values in [0, 1], in any order. NaN marks a test that was not run: it
        stays NaN and does not count in m. May be empty.
    method : {"holm", "bonferroni", "bh", "none"}, default "holm"
        ``"none"`` returns the p-values unchanged (as a float array).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values (float64), in the order of the input.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
    Journal of Statistics* 6(2), 65-70.
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and
    powerful approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1),
    289-300.
    Wright, S. P. (1992). Adjusted P-values for simultaneous inference. *Biometrics* 48(4),
    1005-1013.

    Examples
    --------
    >>> adjust_p_values([0.01, 0.04, 0.03, float("nan")]).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_p_values([0.01, 0.04, 0.03], method="bh").tolist()
    [0.03, 0.04, 0.04]
    >>> adjust_p_values([0.01, 0.04, 0.03], method="bonferroni").tolist()
    [0.03, 0.12, 0.09]
    """
    method = check_option("method", method, ADJUSTMENTS)
    p = as_p_values("p_values", p_values)
    out = p.copy()
    run = ~np.isnan(p)
    q = p[run]
    m = q.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        out[run] = np.minimum(1.0, m * q)
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    i = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate((m - i + 1) * ranked)
    else:
        adjusted = np.minimum.accumulate((ranked * (m / i))[::-1])[::-1]  # m / i >= 1: >= p
    result = np.empty(m)
    result[order] = np.minimum(1.0, adjusted)
    out[run] = result
    return out
