r"""Rating-prediction errors: MSE, RMSE, MAE (均方误差, 均方根误差, 平均绝对误差).

Lower is better for all three; 0 means every prediction is exact. MSE and
RMSE square each error, so one large miss weighs more than several small ones;
MAE weighs every unit of error the same.
"""
from __future__ import annotations

import math

import numpy as np

from ._validation import as_numbers, check_same_length

__all__ = ["mse", "rmse", "mae"]


def _errors(y_true, y_pred) -> np.ndarray:
    truth = as_numbers("y_true", y_true)
    pred = as_numbers("y_pred", y_pred)
    check_same_length(y_true=truth, y_pred=pred)
    if not (np.isfinite(truth).all() and np.isfinite(pred).all()):
        name = "y_true" if not np.isfinite(truth).all() else "y_pred"
        raise ValueError(f"{name} contains infinite values; errors need finite numbers")
    return pred - truth


def mse(y_true, y_pred) -> float:
    r"""Mean squared error (MSE, 均方误差).

    .. math:: \mathrm{MSE} = \frac{1}{n}\sum_{i=1}^{n}(y_i - \hat y_i)^2

    References
    ----------
    Herlocker, J. L. et al. (2004). Evaluating collaborative filtering recommender systems. *ACM
    TOIS* 22(1), 5-53.

    Examples
    --------
    >>> mse([3, 4, 5], [2.5, 4, 6])
    0.4166666666666667
    """
    e = _errors(y_true, y_pred)
    return float(np.mean(e * e))


def rmse(y_true, y_pred) -> float:
    r"""Root mean squared error (RMSE, 均方根误差), in the units of the ratings.

    .. math:: \mathrm{RMSE} = \sqrt{\frac{1}{n}\sum_{i=1}^{n}(y_i - \hat y_i)^2}

    References
    ----------
    Herlocker, J. L. et al. (2004). Evaluating collaborative filtering recommender systems. *ACM
    TOIS* 22(1), 5-53.

    Examples
    --------
    >>> round(rmse([3, 4, 5], [2.5, 4, 6]), 4)
    0.6455
    """
    return math.sqrt(mse(y_true, y_pred))


def mae(y_true, y_pred) -> float:
    r"""Mean absolute error (MAE, 平均绝对误差).

    .. math:: \mathrm{MAE} = \frac{1}{n}\sum_{i=1}^{n}|y_i - \hat y_i|

    References
    ----------
    Herlocker, J. L. et al. (2004). Evaluating collaborative filtering recommender systems. *ACM
    TOIS* 22(1), 5-53.

    Examples
    --------
    >>> mae([3, 4, 5], [2.5, 4, 6])
    0.5
    """
    return float(np.mean(np.abs(_errors(y_true, y_pred))))
