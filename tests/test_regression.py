"""MSE, RMSE, MAE against literal loops and scikit-learn."""
import math

import pytest
from hypothesis import given, strategies as st
from sklearn import metrics as skm

import recmetrics as rm

finite = st.floats(-1e3, 1e3, allow_nan=False)
pairs = st.integers(1, 40).flatmap(lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n),
                                                       st.lists(finite, min_size=n, max_size=n)))


@given(pairs)
def test_errors_match_literal_loops_and_sklearn(pair):
    y, p = pair
    n = len(y)
    assert rm.mse(y, p) == pytest.approx(sum((a - b) ** 2 for a, b in zip(y, p)) / n, rel=1e-9, abs=1e-9)
    assert rm.mae(y, p) == pytest.approx(sum(abs(a - b) for a, b in zip(y, p)) / n, rel=1e-9, abs=1e-9)
    assert rm.mse(y, p) == pytest.approx(skm.mean_squared_error(y, p), rel=1e-9, abs=1e-9)
    assert rm.mae(y, p) == pytest.approx(skm.mean_absolute_error(y, p), rel=1e-9, abs=1e-9)
    assert rm.rmse(y, p) == pytest.approx(math.sqrt(rm.mse(y, p)))
    assert rm.rmse(y, p) >= rm.mae(y, p) - 1e-9  # RMSE is never below MAE


def test_one_big_miss_costs_more_under_rmse_than_many_small_ones():
    truth = [3, 3, 3, 3]
    small, big = [4, 2, 4, 2], [3, 3, 3, 7]  # both MAE 1
    assert rm.mae(truth, small) == rm.mae(truth, big) == 1.0
    assert rm.rmse(truth, small) == 1.0 and rm.rmse(truth, big) == 2.0
