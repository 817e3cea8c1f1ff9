r"""Is the probability right? Log loss, Brier score, normalized entropy, calibration, PR curve.

AUC and the other ranking metrics only look at the **order** of the scores:
any increasing transform of the scores (doubling them, squaring them) leaves
them unchanged. A click-through-rate model is also used as a **probability**
(bids and budgets multiply it), so it must be judged by metrics that see the
values themselves:

* log loss (对数损失) and the Brier score (布里尔分数): proper scoring rules,
  lowest when the predicted probability is the true one;
* normalized entropy (归一化熵): log loss relative to always predicting the
  base rate (He et al. 2014);
* the calibration curve (校准曲线, drawn as a reliability diagram 可靠性图)
  and the expected calibration error (期望校准误差, ECE).

The precision-recall curve (精确率-召回率曲线) and its step-wise area live here
too: like AUC they need only an order, but unlike AUC they change with the
share of positives, which is what an imbalanced data set needs to show.

Every function takes binary labels 0/1 and lists, arrays or Series. Each one
equals its scikit-learn counterpart where there is one (``log_loss``,
``brier_score_loss``, ``precision_recall_curve``,
``average_precision_score``, ``calibration.calibration_curve``).

Two layers: the kernels in :mod:`recmetrics._kernels` take clean
arrays (labels as 0/1 integers, probabilities as float64) and return
per-sample or per-bin arrays; the public functions validate, call them and
aggregate.
"""
from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from . import _kernels
from ._validation import (as_binary, as_numbers, as_probabilities, as_sample_weight, check_eps,
                          check_has_positive, check_n_bins, check_option, check_same_length,
                          undefined_value)

__all__ = ["log_loss", "brier_score", "normalized_entropy", "precision_recall_curve", "pr_auc",
           "calibration_curve", "expected_calibration_error", "CALIBRATION_STRATEGIES",
           "DEFAULT_EPS"]

#: Bin edges of :func:`calibration_curve`: equal widths, or equal counts.
CalibrationStrategy = Literal["uniform", "quantile"]
CALIBRATION_STRATEGIES: tuple[CalibrationStrategy, ...] = get_args(CalibrationStrategy)

#: Default clip of :func:`log_loss`: machine epsilon of float64 (2.22e-16), what
#: scikit-learn uses for float64 probabilities.
DEFAULT_EPS = _kernels.DEFAULT_EPS


def _labels_and_probs(y_true, y_prob) -> tuple[np.ndarray, np.ndarray]:
    labels = as_binary("y_true", y_true)
    probs = as_probabilities("y_prob", y_prob)
    check_same_length(y_true=labels, y_prob=probs)
    return labels, probs


def _labels_scores_weights(y_true, y_score, sample_weight
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The checked inputs of a precision-recall curve, without the samples of weight 0.

    As in scikit-learn, a sample of weight 0 is dropped, so its score is no threshold.
    """
    labels = as_binary("y_true", y_true)
    scores = as_numbers("y_score", y_score)
    check_same_length(y_true=labels, y_score=scores)
    weights = as_sample_weight(sample_weight, labels.size)
    if weights is not None:
        kept = weights > 0
        labels, scores, weights = labels[kept], scores[kept], weights[kept]
    return labels, scores, weights


# --------------------------------------------------------------------------- losses


def log_loss(y_true, y_prob, *, eps: float = DEFAULT_EPS, sample_weight=None) -> float:
    r"""Log loss (对数损失, logistic loss, binary cross-entropy), in nats per sample.

    .. math::

        \mathrm{LogLoss} = -\frac{1}{n}\sum_{i=1}^{n}
            \Big(y_i \log \tilde p_i + (1 - y_i)\log(1 - \tilde p_i)\Big),
        \qquad \tilde p_i = \min(\max(p_i, \varepsilon), 1 - \varepsilon)

    The natural logarithm is used. 0 is perfect; predicting the base rate
    :math:`\bar y` for everyone gives the entropy :math:`H(\bar y)` (0.693 for
    a fair coin), see :func:`normalized_entropy`. A proper scoring rule: its
    expected value is smallest when :math:`p_i` is the true probability.

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes (one class only is allowed).
    y_prob : sequence of float in [0, 1]
        Predicted probability that the class is 1.
    eps : float, default ``DEFAULT_EPS`` (2.220446049250313e-16)
        The clip. :math:`\log 0 = -\infty`, so the probability given to the
        true class is clipped to ``[eps, 1 - eps]`` first; a confident miss
        (``p = 0`` for a positive) then costs :math:`-\log \varepsilon`
        (36.04 nats at the default) instead of infinity. ``eps=0`` turns the
        clip off. The default is float64's machine epsilon, which is what the
        installed scikit-learn (1.9) does for float64 probabilities: since
        1.5 it has no ``eps`` parameter and always clips at the machine
        epsilon of ``y_prob``'s dtype (1.2-1.4: ``eps="auto"``, the same;
        before 1.2: ``eps=1e-15``, which gives 34.54 for a confident miss).
        recmetrics computes in float64 whatever the input dtype; for float32
        probabilities scikit-learn clips at 1.19e-07, so pass
        ``eps=float(np.finfo(np.float32).eps)`` to match it there.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: the mean becomes the weighted mean
        :math:`\sum_i w_i \ell_i / \sum_i w_i` (scikit-learn's meaning).

    Returns
    -------
    float
        Equal to ``sklearn.metrics.log_loss(y_true, y_prob, labels=[0, 1])``.

    References
    ----------
    Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, sec. 4.3.2. Springer.
    Good, I. J. (1952). Rational decisions. *J. Royal Statistical Society B* 14(1), 107-114.

    Examples
    --------
    >>> round(log_loss([0, 1, 1], [0.2, 0.8, 0.5]), 6)   # -(ln 0.8 + ln 0.8 + ln 0.5) / 3
    0.379811
    >>> round(log_loss([1], [0.0]), 2), log_loss([1], [0.0], eps=0)
    (36.04, inf)
    """
    eps = check_eps(eps)
    labels, probs = _labels_and_probs(y_true, y_prob)
    weights = as_sample_weight(sample_weight, labels.size)
    return float(np.average(_kernels.log_loss(labels, probs, eps), weights=weights))


def brier_score(y_true, y_prob, *, sample_weight=None) -> float:
    r"""Brier score (布里尔分数): mean squared error of the predicted probability.

    .. math:: \mathrm{Brier} = \frac{1}{n}\sum_{i=1}^{n}(p_i - y_i)^2

    Between 0 (perfect) and 1 (certain and always wrong); predicting 0.5 for
    everyone gives 0.25, and predicting the base rate gives
    :math:`\bar y(1-\bar y)`. A proper scoring rule, like log loss, but
    bounded: one confident miss costs at most 1, not 36 nats.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_prob : sequence of float in [0, 1]
        Predicted probability that the class is 1.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: the weighted mean of the squared errors.

    Returns
    -------
    float
        Equal to ``sklearn.metrics.brier_score_loss(y_true, y_prob)`` (the
        binary form, not scikit-learn's multiclass sum over both classes,
        which is twice as large).

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. *Monthly
    Weather Review* 78(1), 1-3.

    Examples
    --------
    >>> round(brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 12)   # (0.01 + 0.01 + 0.04 + 0.09) / 4
    0.0375
    """
    labels, probs = _labels_and_probs(y_true, y_prob)
    weights = as_sample_weight(sample_weight, labels.size)
    return float(np.average(_kernels.brier(labels, probs), weights=weights))


def normalized_entropy(y_true, y_prob, *, eps: float = DEFAULT_EPS) -> float:
    r"""Normalized entropy (归一化熵, NE): log loss divided by the entropy of the base rate.

    .. math::

        \mathrm{NE} = \frac{\mathrm{LogLoss}(y, p)}{H(\bar y)}, \qquad
        H(\bar y) = -\big(\bar y \log \bar y + (1 - \bar y)\log(1 - \bar y)\big),
        \qquad \bar y = \frac{1}{n}\sum_i y_i

    :math:`H(\bar y)` is the log loss of the model that predicts the base
    rate (the click-through rate of the data) for every sample, so NE = 1
    means "no better than knowing the base rate", below 1 is better and 0 is
    perfect. Dividing by :math:`H(\bar y)` makes log losses comparable between
    data sets with different click rates (a 1% click rate has
    :math:`H = 0.056`, a fair coin 0.693).

    Parameters
    ----------
    y_true : sequence of 0/1
    y_prob : sequence of float in [0, 1]
    eps : float, default ``DEFAULT_EPS``
        The clip of :func:`log_loss`.

    Returns
    -------
    float
        NaN, with a :class:`~recmetrics.RecmetricsWarning`, when the base rate
        is 0 or 1 (all labels equal): then :math:`H(\bar y) = 0` and the ratio
        is undefined (0/0 for a perfect model, x/0 otherwise).

    References
    ----------
    He, X. et al. (2014). Practical lessons from predicting clicks on ads at Facebook.
    *ADKDD '14*, sec. 2.

    Examples
    --------
    >>> round(normalized_entropy([0, 0, 0, 1], [0.25, 0.25, 0.25, 0.25]), 12)   # the base rate
    1.0
    >>> round(normalized_entropy([0, 0, 0, 1], [0.1, 0.2, 0.1, 0.7]), 4)   # 0.19763 / 0.56234
    0.3515
    """
    eps = check_eps(eps)
    labels, probs = _labels_and_probs(y_true, y_prob)
    base_rate = float(np.mean(labels))
    if base_rate in (0.0, 1.0):
        return undefined_value(f"normalized entropy is undefined: the base rate is {base_rate:g} "
                               "(all labels are equal), so its entropy, the denominator, is 0")
    loss = float(np.mean(_kernels.log_loss(labels, probs, eps)))
    return loss / float(_kernels.binary_entropy(base_rate))


# --------------------------------------------------------------------------- PR curve


def precision_recall_curve(y_true, y_score, *, sample_weight=None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Precision-recall curve (精确率-召回率曲线): one point per distinct score as a threshold.

    A sample is predicted positive when its score is ``>= threshold``.

    .. math:: \mathrm{precision}(t) = \frac{TP(t)}{TP(t) + FP(t)}, \qquad
              \mathrm{recall}(t) = \frac{TP(t)}{P}

    Scikit-learn's layout, which this function copies exactly
    (``sklearn.metrics.precision_recall_curve(y_true, y_score)``, whose
    ``drop_intermediate`` defaults to False): ``thresholds`` holds every
    distinct score in **ascending** order; ``precision`` and ``recall`` have
    one entry more. Entry ``i < len(thresholds)`` is the point of threshold
    ``thresholds[i]``, so recall decreases from 1 (the lowest threshold
    predicts everything positive and its precision is the base rate) and the
    **last** entry is the point (recall 0, precision 1) that has no
    threshold; it makes the curve start on the precision axis. Tied samples
    cross a threshold together, so a tie of positives and negatives is one
    point, not one per sample.

    Parameters
    ----------
    y_true : sequence of 0/1
        Actual classes; at least one positive.
    y_score : sequence of float
        Scores (any real numbers, probabilities or not), higher meaning
        "more likely positive". No NaN.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: TP, FP and P become sums of weights. As in
        scikit-learn, samples of weight 0 are dropped first, so their scores
        are not thresholds.

    Returns
    -------
    precision, recall : numpy.ndarray
        Of length ``len(thresholds) + 1``, recall decreasing.
    thresholds : numpy.ndarray
        Distinct scores, ascending.

    References
    ----------
    Davis, J. & Goadrich, M. (2006). The relationship between precision-recall and ROC curves.
    *ICML*.

    Examples
    --------
    >>> precision, recall, thresholds = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> thresholds.tolist()
    [0.1, 0.35, 0.4, 0.8]
    >>> precision.round(4).tolist(), recall.tolist()
    ([0.5, 0.6667, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0])
    """
    labels, scores, weights = _labels_scores_weights(y_true, y_score, sample_weight)
    check_has_positive("y_true", labels)
    return _kernels.pr_curve(labels, scores, weights)


def pr_auc(y_true, y_score, *, sample_weight=None) -> float:
    r"""Area under the precision-recall curve (PR AUC), step-wise: scikit-learn's average precision.

    .. math:: \mathrm{AP} = \sum_{k} \big(R_k - R_{k-1}\big)\, P_k

    over the thresholds of :func:`precision_recall_curve` from the highest
    score down, :math:`R_0 = 0`: each step of recall is multiplied by the
    precision at the **end** of the step. No trapezoids: linear
    interpolation between PR points is too optimistic (Davis & Goadrich
    2006). Equal to ``sklearn.metrics.average_precision_score``.

    Unlike ROC AUC, whose value for a useless score is 0.5 whatever the
    classes, the value of a useless score here is the share of positives
    (0.01 with 1% positives): PR AUC shows how hard it is to find the few
    positives among many negatives, where ROC AUC can look fine.

    **Ties: how this differs from ranking AP.** Without tied scores this is
    exactly :func:`recmetrics.average_precision` of the list sorted by score
    (``denominator="relevant"``): the mean, over the positives, of the
    precision at each positive's rank. With ties the two differ. Here a
    group of tied samples is one threshold, and **every** positive of the
    group gets the precision at the **end** of the group. The ranking AP of
    recmetrics (``ties="average"`` in :func:`recmetrics.evaluate`) is instead
    the expected AP over all orders of the tied items (McSherry & Najork
    2008). The step-wise value is never below the AP of the order that puts
    each tie's negatives first, but it can be below or above the expected
    value: one positive tied with one negative gives 0.5 here against
    (1 + 1/2)/2 = 0.75; a negative followed by two tied positives gives
    2/3 here against (1/2 + 2/3)/2 = 7/12 in every order. A constant score
    gets the base rate here.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_score : sequence of float
        Any real scores, higher meaning "more likely positive". No NaN.
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: the area under the weighted curve of
        :func:`precision_recall_curve` (scikit-learn's
        ``average_precision_score(..., sample_weight=w)``).

    Returns
    -------
    float
        NaN with a :class:`~recmetrics.RecmetricsWarning` when there is no
        positive (of weight > 0) (scikit-learn warns and returns 0.0 instead); 1.0 when
        every sample is positive.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. McSherry, F. & Najork, M. (2008). Computing information retrieval performance
    measures efficiently in the presence of tied scores. *ECIR*.

    Examples
    --------
    >>> pr_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])   # 0.5 * 1 + 0.5 * 2/3
    0.8333333333333333
    >>> pr_auc([1, 0], [0.5, 0.5])                    # one tie: one threshold
    0.5
    >>> from recmetrics import average_precision      # ranking AP over the 2 orders
    >>> (average_precision(["pos", "neg"], {"pos"}) + average_precision(["neg", "pos"], {"pos"})) / 2
    0.75
    >>> round(pr_auc([0, 1, 1], [0.5, 0.1, 0.1]), 4)  # both tied positives get precision 2/3
    0.6667
    >>> round(average_precision(["neg", "pos1", "pos2"], {"pos1", "pos2"}), 4)   # (1/2 + 2/3) / 2
    0.5833
    """
    labels, scores, weights = _labels_scores_weights(y_true, y_score, sample_weight)
    if not labels.any():
        return undefined_value("PR AUC is undefined: y_true holds no positive (1), so recall is 0/0")
    precision, recall, _ = _kernels.pr_curve(labels, scores, weights)
    return _kernels.step_area(precision, recall)


# --------------------------------------------------------------------------- calibration


def calibration_curve(y_true, y_prob, *, n_bins: int = 10,
                      strategy: Literal["uniform", "quantile"] = "uniform"
                      ) -> tuple[np.ndarray, np.ndarray]:
    r"""Calibration curve (校准曲线): observed positive rate against mean predicted probability, per bin.

    The probabilities are grouped into bins; for every bin :math:`b` that is
    not empty,

    .. math:: \mathrm{observed}_b = \frac{1}{n_b}\sum_{i \in b} y_i, \qquad
              \mathrm{predicted}_b = \frac{1}{n_b}\sum_{i \in b} p_i .

    Plotted against each other they give the reliability diagram (可靠性图):
    a calibrated model (校准) lies on the diagonal, a model that predicts
    twice the true rate lies below it.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_prob : sequence of float in [0, 1]
    n_bins : int, default 10
        Number of bins (scikit-learn's default is 5).
    strategy : {"uniform", "quantile"}, default "uniform"
        ``"uniform"``: equal widths, edges ``np.linspace(0, 1, n_bins + 1)``.
        ``"quantile"``: edges at the quantiles of ``y_prob``
        (``np.percentile``, linear interpolation), so bins hold about equally
        many samples; tied probabilities can leave bins empty.

    Returns
    -------
    prob_true, prob_pred : numpy.ndarray
        Observed rate and mean prediction of each non-empty bin, in bin
        order, so possibly fewer than ``n_bins`` values.

    Notes
    -----
    Bin :math:`b` holds :math:`(e_b, e_{b+1}]`, the first bin also
    :math:`e_0`: a probability **exactly on an inner edge** (0.5 with 10
    uniform bins) goes to the **lower** bin, and 1.0 to the last bin. This is
    scikit-learn's ``np.searchsorted(edges[1:-1], y_prob)``, and the result
    equals ``sklearn.calibration.calibration_curve`` with the same
    ``n_bins`` and ``strategy``. Edges are floats: ``np.linspace`` gives
    0.30000000000000004 for the fourth edge of 10 bins, so 0.3 is below it.

    References
    ----------
    DeGroot, M. H. & Fienberg, S. E. (1983). The comparison and evaluation of forecasters.
    *The Statistician* 32(1/2), 12-22. Niculescu-Mizil, A. & Caruana, R. (2005). Predicting
    good probabilities with supervised learning. *ICML*.

    Examples
    --------
    >>> prob_true, prob_pred = calibration_curve([0, 0, 1, 1, 1], [0.1, 0.5, 0.5, 0.9, 1.0],
    ...                                          n_bins=2)
    >>> prob_true.tolist(), prob_pred.round(4).tolist()   # bins [0, 0.5] and (0.5, 1]
    ([0.3333333333333333, 1.0], [0.3667, 0.95])
    """
    n_bins = check_n_bins(n_bins)
    strategy = check_option("strategy", strategy, CALIBRATION_STRATEGIES)
    labels, probs = _labels_and_probs(y_true, y_prob)
    count, positives, prob_sum = _kernels.calibration_bins(
        labels, probs, _kernels.calibration_edges(probs, n_bins, strategy))
    kept = count != 0
    return positives[kept] / count[kept], prob_sum[kept] / count[kept]


def expected_calibration_error(y_true, y_prob, *, n_bins: int = 10) -> float:
    r"""Expected calibration error (期望校准误差, ECE): bin-size-weighted mean gap of the reliability diagram.

    .. math:: \mathrm{ECE} = \sum_{b} \frac{n_b}{n}\,
              \big|\mathrm{observed}_b - \mathrm{predicted}_b\big|

    over the non-empty bins of :func:`calibration_curve` with
    ``strategy="uniform"`` (the same bins and edge rule). 0 when every bin's
    observed rate equals its mean prediction; it ranges up to 1.

    ECE depends on the bins: more bins mean fewer samples per bin and a
    larger gap from noise alone, and a model can reach ECE 0 by predicting
    the base rate for everyone (calibrated, useless). Read it together
    with log loss or AUC. Other libraries bin differently (torchmetrics puts
    an edge value in the upper bin), so small differences are expected.

    Parameters
    ----------
    y_true : sequence of 0/1
    y_prob : sequence of float in [0, 1]
    n_bins : int, default 10

    Returns
    -------
    float

    References
    ----------
    Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities
    using Bayesian binning. *AAAI*. Guo, C. et al. (2017). On calibration of modern neural
    networks. *ICML*.

    Examples
    --------
    >>> round(expected_calibration_error([0, 0, 1, 1, 1], [0.1, 0.5, 0.5, 0.9, 1.0], n_bins=2), 4)
    0.04
    """
    n_bins = check_n_bins(n_bins)
    labels, probs = _labels_and_probs(y_true, y_prob)
    return _kernels.expected_calibration_error(labels, probs, n_bins)
