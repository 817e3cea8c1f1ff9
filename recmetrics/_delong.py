"""DeLong's test of two AUCs from their variance: the result and the test's end, shared by
:func:`recmetrics.delong_test` (one process) and the engines' bucket sums (``_partitions``)."""
from __future__ import annotations

import math
import warnings
from typing import NamedTuple

from ._validation import RecmetricsWarning, caller_stacklevel


class DeLongResult(NamedTuple):
    """Result of :func:`delong_test`: both AUCs, B - A, its variance, z and the p-value."""

    auc_a: float
    auc_b: float
    difference: float
    variance: float
    z: float
    p_value: float


def delong_result(auc_a: float, auc_b: float, m: int, n: int, variance) -> DeLongResult:
    """DeLong's test of the AUCs ``auc_a`` and ``auc_b`` of the same m positives and n
    negatives, ``variance()`` giving the variance of their difference (called only where
    m, n >= 2). Warns where the variance is undefined, or 0 although the AUCs differ."""
    nan = float("nan")
    difference = auc_b - auc_a
    if m < 2 or n < 2:
        only = f"{m} positive" if m < 2 else f"{n} negative"
        warnings.warn(f"the variance of the AUC difference is undefined: y_true holds only "
                      f"{only}, and DeLong's variance needs at least two positives and two "
                      "negatives; variance, z and p_value are NaN", RecmetricsWarning,
                      stacklevel=caller_stacklevel())
        return DeLongResult(auc_a, auc_b, difference, nan, nan, nan)
    var = variance()
    if var > 0:
        z = difference / math.sqrt(var)
        return DeLongResult(auc_a, auc_b, difference, var, z, math.erfc(abs(z) / math.sqrt(2)))
    if difference == 0:
        return DeLongResult(auc_a, auc_b, difference, 0.0, nan, 1.0)
    warnings.warn(f"the variance of the AUC difference is 0 although the AUCs differ by "
                  f"{difference:g}: every positive and every negative moves by the same amount, so "
                  "the normal approximation has nothing to go on; z is infinite and p_value 0.0 "
                  "(try paired_bootstrap_test or more samples)", RecmetricsWarning,
                  stacklevel=caller_stacklevel())
    return DeLongResult(auc_a, auc_b, difference, 0.0, math.copysign(math.inf, difference), 0.0)
