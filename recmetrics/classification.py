r"""Confusion matrix (混淆矩阵) and the rates derived from it.

All functions take binary labels (0 = negative, 1 = positive) for both the
truth and the prediction. Where a rate can be 0/0 (precision when nothing is
predicted positive, say) the ``zero_division`` option decides: ``"warn"``
(the default) returns 0.0 and emits :class:`~recmetrics.RecmetricsWarning`;
``0.0``, ``1.0`` or ``float("nan")`` return that value silently. This matches
scikit-learn's ``zero_division``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._validation import (as_binary, check_positive_real, check_same_length,
                          check_zero_division, zero_division_value)

__all__ = ["ConfusionMatrix", "confusion_matrix", "accuracy", "precision", "recall", "f1_score",
           "fbeta_score", "true_positive_rate", "false_positive_rate"]


def _ratio(numerator: int, denominator: int, zero_division, what: str) -> float:
    if denominator == 0:
        return zero_division_value(zero_division, f"{what} is 0/0")
    return numerator / denominator


@dataclass(frozen=True, repr=False)
class ConfusionMatrix:
    r"""Counts of a binary classifier's outcomes.

    ============== ================= =================
    \              predicted 1       predicted 0
    ============== ================= =================
    actual 1       ``tp``            ``fn``
    actual 0       ``fp``            ``tn``
    ============== ================= =================

    The properties apply the default zero-division policy (warn, return 0.0);
    the module-level functions accept ``zero_division=`` for other policies.
    Its repr is the constructor call followed by the matrix as a table, laid
    out as above; in a notebook it shows as an HTML table.

    Examples
    --------
    >>> ConfusionMatrix(tp=30, fp=5, fn=10, tn=1955)
    ConfusionMatrix(tp=30, fp=5, fn=10, tn=1955)
              predicted 1  predicted 0
    actual 1           30           10
    actual 0            5         1955
    """

    tp: int
    fp: int
    fn: int
    tn: int

    def __post_init__(self):
        for name in ("tp", "fp", "fn", "tn"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"{name}={value!r} must be a whole number >= 0 (a count of "
                                 "samples); build the matrix with confusion_matrix(y_true, y_pred)")

    def _cells(self) -> list[tuple[str, int, int]]:
        return [("actual 1", self.tp, self.fn), ("actual 0", self.fp, self.tn)]

    def __repr__(self) -> str:
        heads = ("predicted 1", "predicted 0")
        width = max(len(h) for h in heads)
        width = max(width, *(len(str(c)) for _, *cells in self._cells() for c in cells))
        lines = [f"ConfusionMatrix(tp={self.tp}, fp={self.fp}, fn={self.fn}, tn={self.tn})",
                 " " * 8 + "".join(f"  {h:>{width}}" for h in heads)]
        lines += [row + "".join(f"  {c:>{width}}" for c in cells) for row, *cells in self._cells()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The matrix as an HTML table (what Jupyter shows), with n and the counts' names."""
        cell = '<td style="text-align:right">{}</td>'
        rows = "".join(f"<tr><th>{row}</th>" + cell.format(f"{a:,} ({na})")
                       + cell.format(f"{b:,} ({nb})") + "</tr>"
                       for (row, a, b), (na, nb) in zip(self._cells(), (("TP", "FN"), ("FP", "TN"))))
        return ("<table><caption>ConfusionMatrix, n = " + f"{self.n:,}" + "</caption>"
                "<thead><tr><th></th><th>predicted 1</th><th>predicted 0</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def _accuracy(self, zero_division="warn") -> float:
        return _ratio(self.tp + self.tn, self.n, zero_division, "accuracy = (TP+TN)/n")

    def _precision(self, zero_division="warn") -> float:
        return _ratio(self.tp, self.tp + self.fp, zero_division,
                      "precision = TP/(TP+FP) with nothing predicted positive")

    def _recall(self, zero_division="warn") -> float:
        return _ratio(self.tp, self.tp + self.fn, zero_division,
                      "recall = TP/(TP+FN) with no actual positive")

    def _fpr(self, zero_division="warn") -> float:
        return _ratio(self.fp, self.fp + self.tn, zero_division,
                      "FPR = FP/(FP+TN) with no actual negative")

    def fbeta(self, beta: float, *, zero_division="warn") -> float:
        r"""F-beta: :math:`(1+\beta^2)TP / ((1+\beta^2)TP + \beta^2 FN + FP)`.

        Equal to the weighted harmonic mean of precision and recall whenever
        both are defined; this count form is 0/0 only when TP = FN = FP = 0.
        """
        beta = check_positive_real("beta", beta)
        zero_division = check_zero_division(zero_division)
        b2 = beta * beta
        return _ratio((1 + b2) * self.tp, (1 + b2) * self.tp + b2 * self.fn + self.fp,
                      zero_division, f"F-beta (beta={beta:g}) with TP = FN = FP = 0")

    accuracy = property(_accuracy, doc="(TP + TN) / (TP + FP + FN + TN)")
    precision = property(_precision, doc="TP / (TP + FP)")
    recall = property(_recall, doc="TP / (TP + FN)")
    tpr = property(_recall, doc="true positive rate TP / (TP + FN), the same as recall")
    fpr = property(_fpr, doc="false positive rate FP / (FP + TN)")

    @property
    def f1(self) -> float:
        """2 TP / (2 TP + FN + FP), the harmonic mean of precision and recall."""
        return self.fbeta(1.0)


def confusion_matrix(y_true, y_pred) -> ConfusionMatrix:
    """Count true/false positives and negatives.

    Parameters
    ----------
    y_true, y_pred : sequence of 0/1
        Actual and predicted classes, one per sample (1 = positive).

    Returns
    -------
    ConfusionMatrix
        With integer fields ``tp, fp, fn, tn`` and the rates as properties.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> cm = confusion_matrix([1, 0, 1, 0], [1, 1, 0, 0])
    >>> cm.tp, cm.fp, cm.fn, cm.tn
    (1, 1, 1, 1)
    >>> cm.precision
    0.5
    """
    t = as_binary("y_true", y_true)
    p = as_binary("y_pred", y_pred)
    check_same_length(y_true=t, y_pred=p)
    counts = np.bincount(2 * t + p, minlength=4)  # 0: tn, 1: fp, 2: fn, 3: tp
    return ConfusionMatrix(tp=int(counts[3]), fp=int(counts[1]), fn=int(counts[2]),
                           tn=int(counts[0]))


def accuracy(y_true, y_pred) -> float:
    r"""Accuracy (准确率): share of samples classified correctly.

    .. math:: \mathrm{Accuracy} = \frac{TP + TN}{TP + FP + FN + TN}

    Never 0/0 (the input may not be empty), so it takes no ``zero_division``.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> accuracy([1] + [0] * 99, [0] * 100)
    0.99
    """
    return confusion_matrix(y_true, y_pred)._accuracy()


def precision(y_true, y_pred, *, zero_division="warn") -> float:
    r"""Precision (精确率): of the samples predicted positive, the share that are positive.

    .. math:: \mathrm{Precision} = \frac{TP}{TP + FP}

    0/0 when nothing is predicted positive; ``zero_division`` decides.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> precision([1, 0, 1, 0], [1, 1, 0, 0])
    0.5
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred)._precision(zero_division)


def recall(y_true, y_pred, *, zero_division="warn") -> float:
    r"""Recall (召回率): of the actual positives, the share predicted positive.

    .. math:: \mathrm{Recall} = \mathrm{TPR} = \frac{TP}{TP + FN}

    0/0 when there is no actual positive; ``zero_division`` decides.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> recall([1, 1, 1, 0], [1, 0, 0, 0])
    0.3333333333333333
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred)._recall(zero_division)


def true_positive_rate(y_true, y_pred, *, zero_division="warn") -> float:
    r"""True positive rate (真正例率, TPR), the same number as recall.

    .. math:: \mathrm{TPR} = \frac{TP}{TP + FN}

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> true_positive_rate([1, 1, 0, 0], [1, 0, 1, 0])
    0.5
    """
    return recall(y_true, y_pred, zero_division=zero_division)


def false_positive_rate(y_true, y_pred, *, zero_division="warn") -> float:
    r"""False positive rate (假正例率, FPR): share of actual negatives predicted positive.

    .. math:: \mathrm{FPR} = \frac{FP}{FP + TN}

    0/0 when there is no actual negative; ``zero_division`` decides.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> false_positive_rate([1, 0, 0, 0], [1, 1, 0, 0])
    0.3333333333333333
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred)._fpr(zero_division)


def fbeta_score(y_true, y_pred, *, beta: float, zero_division="warn") -> float:
    r"""F-beta score (F-beta 值): recall weighted beta times as much as precision.

    .. math::

        F_\beta = \frac{(1+\beta^2)\,P\,R}{\beta^2 P + R}
                = \frac{(1+\beta^2)\,TP}{(1+\beta^2)\,TP + \beta^2 FN + FP}

    The count form is used, so F-beta is 0 (not 0/0) when TP = 0 but FP or FN
    is not, as in scikit-learn. It is 0/0 only when TP = FN = FP = 0.

    References
    ----------
    van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7.

    Examples
    --------
    >>> round(fbeta_score([1, 1, 0, 0], [1, 0, 1, 0], beta=2.0), 4)
    0.5
    """
    return confusion_matrix(y_true, y_pred).fbeta(beta, zero_division=zero_division)


def f1_score(y_true, y_pred, *, zero_division="warn") -> float:
    r"""F1 score (F1 值): harmonic mean of precision and recall.

    .. math:: F_1 = \frac{2PR}{P + R} = \frac{2\,TP}{2\,TP + FN + FP}

    References
    ----------
    van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7.

    Examples
    --------
    >>> f1_score([1] + [0] * 99, [0] * 100)
    0.0
    """
    return fbeta_score(y_true, y_pred, beta=1.0, zero_division=zero_division)
