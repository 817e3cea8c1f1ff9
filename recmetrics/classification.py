r"""Confusion matrix (混淆矩阵) and the rates derived from it.

All functions take binary labels (0 = negative, 1 = positive) for both the
truth and the prediction, and an optional ``sample_weight`` (one weight >= 0
per sample, scikit-learn's meaning: the counts become sums of weights).
:func:`precision`, :func:`recall`, :func:`fbeta_score` and :func:`f1_score`
also take labels of any number of classes with ``average="micro"``,
``"macro"`` or ``"weighted"``, computed from a k-class confusion matrix as
scikit-learn does. Where a rate can be 0/0 (precision when nothing is
predicted positive, say) the ``zero_division`` option decides: ``"warn"``
(the default) returns 0.0 and emits :class:`~recmetrics.RecmetricsWarning`;
``0.0``, ``1.0`` or ``float("nan")`` return that value silently. This matches
scikit-learn's ``zero_division``.
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validation import (AVERAGES, Average, RecmetricsWarning, as_binary, as_labels,
                          as_sample_weight, caller_stacklevel, check_option, check_positive_real,
                          check_same_length, check_zero_division, zero_division_value)

__all__ = ["ConfusionMatrix", "confusion_matrix", "accuracy", "precision", "recall", "f1_score",
           "fbeta_score", "true_positive_rate", "false_positive_rate", "specificity",
           "false_negative_rate", "balanced_accuracy", "matthews_corrcoef"]


def _ratio(numerator, denominator, zero_division, what: str) -> float:
    if denominator == 0:
        return zero_division_value(zero_division, f"{what} is 0/0")
    return float(numerator / denominator)


def _shown(count: int | float) -> str:
    """A count as the HTML table shows it: thousands separated; a sum of weights to 4 decimals
    unless whole (0.1 + 0.2 shows as 0.3000, not 0.30000000000000004)."""
    if isinstance(count, int) or float(count).is_integer():
        return f"{int(count):,}"
    return f"{count:,.4f}"


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
    out as above; in a notebook it shows as an HTML table. The fields are whole
    numbers, or sums of weights (floats) when the matrix was built with
    ``sample_weight``.

    Examples
    --------
    >>> ConfusionMatrix(tp=30, fp=5, fn=10, tn=1955)
    ConfusionMatrix(tp=30, fp=5, fn=10, tn=1955)
              predicted 1  predicted 0
    actual 1           30           10
    actual 0            5         1955
    """

    tp: int | float
    fp: int | float
    fn: int | float
    tn: int | float

    def __post_init__(self):
        for name in ("tp", "fp", "fn", "tn"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name}={value!r} must be a finite number >= 0 (a count of "
                                 "samples, or a sum of their weights); build the matrix with "
                                 "confusion_matrix(y_true, y_pred)")

    def _cells(self) -> list[tuple[str, int | float, int | float]]:
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
        rows = "".join(f"<tr><th>{row}</th>" + cell.format(f"{_shown(a)} ({na})")
                       + cell.format(f"{_shown(b)} ({nb})") + "</tr>"
                       for (row, a, b), (na, nb) in zip(self._cells(), (("TP", "FN"), ("FP", "TN"))))
        return ("<table><caption>ConfusionMatrix, n = " + _shown(self.n) + "</caption>"
                "<thead><tr><th></th><th>predicted 1</th><th>predicted 0</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")

    @property
    def n(self) -> int | float:
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

    def _specificity(self, zero_division="warn") -> float:
        return _ratio(self.tn, self.tn + self.fp, zero_division,
                      "specificity = TN/(TN+FP) with no actual negative")

    def _fnr(self, zero_division="warn") -> float:
        return _ratio(self.fn, self.fn + self.tp, zero_division,
                      "FNR = FN/(FN+TP) with no actual positive")

    def _balanced_accuracy(self) -> float:
        rates = [self.tp / (self.tp + self.fn)] if self.tp + self.fn else []
        rates += [self.tn / (self.tn + self.fp)] if self.tn + self.fp else []
        if len(rates) == 1:
            warnings.warn("balanced accuracy with one actual class only is that class's recall "
                          "(y_true holds no " + ("negative" if self.tp + self.fn else "positive")
                          + "), as in scikit-learn", RecmetricsWarning,
                          stacklevel=caller_stacklevel())
        return float(sum(rates) / len(rates))

    def _mcc(self, zero_division="warn") -> float:
        tp, fp, fn, tn = self.tp, self.fp, self.fn, self.tn
        margins = ((tp + fp) * (tn + fn), (tp + fn) * (tn + fp))
        if margins[0] == 0 or margins[1] == 0:
            return zero_division_value(zero_division, "MCC is 0/0 (a whole row or column of the "
                                       "confusion matrix is 0: one class only, in y_true or "
                                       "y_pred)")
        return float((tp * tn - fp * fn) / (math.sqrt(margins[0]) * math.sqrt(margins[1])))

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
    specificity = property(_specificity, doc="true negative rate TN / (TN + FP)")
    tnr = property(_specificity, doc="true negative rate TN / (TN + FP), the same as specificity")
    fnr = property(_fnr, doc="false negative rate FN / (FN + TP) = 1 - recall")
    balanced_accuracy = property(_balanced_accuracy, doc="(TPR + TNR) / 2")
    mcc = property(_mcc, doc="Matthews correlation coefficient")

    @property
    def f1(self) -> float:
        """2 TP / (2 TP + FN + FP), the harmonic mean of precision and recall."""
        return self.fbeta(1.0)


def confusion_matrix(y_true, y_pred, *, sample_weight=None) -> ConfusionMatrix:
    """Count true/false positives and negatives.

    Parameters
    ----------
    y_true, y_pred : sequence of 0/1
        Actual and predicted classes, one per sample (1 = positive).
    sample_weight : sequence of float or None, default None
        One weight >= 0 per sample: each cell then holds the sum of its
        samples' weights (scikit-learn's ``sample_weight``).

    Returns
    -------
    ConfusionMatrix
        With fields ``tp, fp, fn, tn`` (whole numbers, or sums of weights) and
        the rates as properties.

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
    >>> confusion_matrix([1, 0, 1, 0], [1, 1, 0, 0], sample_weight=[2, 1, 1, 0.5]).tn
    0.5
    """
    t = as_binary("y_true", y_true)
    p = as_binary("y_pred", y_pred)
    check_same_length(y_true=t, y_pred=p)
    w = as_sample_weight(sample_weight, t.size)
    counts = np.bincount(2 * t + p, weights=w, minlength=4)  # 0: tn, 1: fp, 2: fn, 3: tp
    cast = int if w is None else float
    return ConfusionMatrix(tp=cast(counts[3]), fp=cast(counts[1]), fn=cast(counts[2]),
                           tn=cast(counts[0]))


# --------------------------------------------------------------------------- k classes


@dataclass(frozen=True)
class _ClassCounts:
    """Per class (sorted labels): true positives, predicted and actual totals."""

    classes: np.ndarray
    tp: np.ndarray
    predicted: np.ndarray
    actual: np.ndarray


def _class_counts(y_true, y_pred, sample_weight) -> _ClassCounts:
    """The k-class confusion matrix's diagonal and margins, over the labels of both inputs."""
    t = as_labels("y_true", y_true)
    p = as_labels("y_pred", y_pred)
    n = check_same_length(y_true=t, y_pred=p)
    w = as_sample_weight(sample_weight, n)
    try:
        classes, codes = np.unique(np.concatenate([t, p]), return_inverse=True)
    except TypeError:
        raise ValueError("y_true and y_pred mix label types that cannot be sorted (numbers and "
                         "text, say); write every label the same way") from None
    k = classes.size
    matrix = np.bincount(codes[:n] * k + codes[n:], weights=w, minlength=k * k).reshape(k, k)
    return _ClassCounts(classes, np.diagonal(matrix).copy(), matrix.sum(axis=0),
                        matrix.sum(axis=1))


def _averaged(counts: _ClassCounts, numerator, denominator, average: str, zero_division,
              what: str) -> float:
    """Micro (ratio of sums), macro (mean of ratios) or weighted (by support) average.

    A class whose ratio is 0/0 takes the ``zero_division`` value; with NaN it
    is left out of the macro and weighted means (scikit-learn's rule, as is
    the plain mean when the classes left have no support).
    """
    if average == "micro":
        return _ratio(numerator.sum(), denominator.sum(), zero_division, f"micro {what}")
    undefined = denominator == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        per_class = np.where(undefined, 0.0, numerator / np.where(undefined, 1, denominator))
    if undefined.any():
        shown = ", ".join(repr(c.item() if hasattr(c, "item") else c)
                          for c in counts.classes[undefined][:3])
        per_class[undefined] = zero_division_value(
            zero_division, f"{what} is 0/0 for {int(undefined.sum())} class(es) ({shown})")
    weights = counts.actual.astype(np.float64) if average == "weighted" else np.ones(per_class.size)
    kept = ~np.isnan(per_class)
    if not kept.any():
        return float("nan")
    if weights[kept].sum() == 0:  # only classes never in y_true are left: their plain mean
        return float(np.mean(per_class[kept]))
    return float(np.average(per_class[kept], weights=weights[kept]))


def _rate(y_true, y_pred, sample_weight, average, zero_division, *,
          binary: Callable[[ConfusionMatrix, str | float], float],
          per_class: Callable[[_ClassCounts], tuple[np.ndarray, np.ndarray]], what: str) -> float:
    """A rate of the confusion matrix: of class 1, or averaged over the classes.

    With ``average="binary"`` it is ``binary(matrix, zero_division)`` of the
    2 x 2 matrix; otherwise ``per_class`` gives every class's numerator and
    denominator, which :func:`_averaged` averages, naming the rate ``what``.
    """
    average = check_option("average", average, AVERAGES)
    zero_division = check_zero_division(zero_division)
    if average == "binary":
        return binary(confusion_matrix(y_true, y_pred, sample_weight=sample_weight), zero_division)
    counts = _class_counts(y_true, y_pred, sample_weight)
    numerator, denominator = per_class(counts)
    return _averaged(counts, numerator, denominator, average, zero_division, what)


# --------------------------------------------------------------------------- rates


def accuracy(y_true, y_pred, *, sample_weight=None) -> float:
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
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._accuracy()


_AVERAGE_DOC = """average : {"binary", "micro", "macro", "weighted"}, default "binary"
        ``"binary"``: labels 0/1, the rate of class 1. The others accept
        labels of any number of classes (numbers or text) and average over
        the classes found in ``y_true`` or ``y_pred``, as scikit-learn:
        ``"micro"`` pools the counts of all classes (for precision and recall
        that is the accuracy), ``"macro"`` is the plain mean of the classes'
        rates, ``"weighted"`` the mean weighted by each class's actual count
        (its support)."""


def precision(y_true, y_pred, *, average: Average = "binary", sample_weight=None,
              zero_division="warn") -> float:
    r"""Precision (精确率): of the samples predicted positive, the share that are positive.

    .. math:: \mathrm{Precision} = \frac{TP}{TP + FP}

    0/0 when nothing is predicted positive; ``zero_division`` decides.

    Parameters
    ----------
    y_true, y_pred : sequence
        Actual and predicted classes.
    AVERAGE
    sample_weight : sequence of float or None
        One weight >= 0 per sample (scikit-learn's meaning).
    zero_division : "warn", 0.0, 1.0 or nan, default "warn"

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> precision([1, 0, 1, 0], [1, 1, 0, 0])
    0.5
    >>> precision(["a", "b", "c", "c"], ["a", "c", "c", "b"], average="macro")   # (1 + 0 + 1/2) / 3
    0.5
    """
    return _rate(y_true, y_pred, sample_weight, average, zero_division,
                 binary=ConfusionMatrix._precision, per_class=lambda c: (c.tp, c.predicted),
                 what="precision = TP/(TP+FP)")


def recall(y_true, y_pred, *, average: Average = "binary", sample_weight=None,
           zero_division="warn") -> float:
    r"""Recall (召回率): of the actual positives, the share predicted positive.

    .. math:: \mathrm{Recall} = \mathrm{TPR} = \frac{TP}{TP + FN}

    0/0 when there is no actual positive; ``zero_division`` decides.

    Parameters
    ----------
    y_true, y_pred : sequence
        Actual and predicted classes.
    AVERAGE
    sample_weight : sequence of float or None
        One weight >= 0 per sample (scikit-learn's meaning).
    zero_division : "warn", 0.0, 1.0 or nan, default "warn"

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*,
    ch. 8. Cambridge University Press.

    Examples
    --------
    >>> recall([1, 1, 1, 0], [1, 0, 0, 0])
    0.3333333333333333
    >>> recall(["a", "b", "c", "c"], ["a", "c", "c", "b"], average="weighted")   # (1 + 0 + 2/2 * 2) / 4
    0.5
    """
    return _rate(y_true, y_pred, sample_weight, average, zero_division,
                 binary=ConfusionMatrix._recall, per_class=lambda c: (c.tp, c.actual),
                 what="recall = TP/(TP+FN)")


# (a docstring is None under python -OO)
precision.__doc__ = (precision.__doc__ or "").replace("AVERAGE", _AVERAGE_DOC)
recall.__doc__ = (recall.__doc__ or "").replace("AVERAGE", _AVERAGE_DOC)


def true_positive_rate(y_true, y_pred, *, sample_weight=None, zero_division="warn") -> float:
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
    return recall(y_true, y_pred, sample_weight=sample_weight, zero_division=zero_division)


def false_positive_rate(y_true, y_pred, *, sample_weight=None, zero_division="warn") -> float:
    r"""False positive rate (假正例率, FPR): share of actual negatives predicted positive.

    .. math:: \mathrm{FPR} = \frac{FP}{FP + TN} = 1 - \mathrm{specificity}

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
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._fpr(zero_division)


def specificity(y_true, y_pred, *, sample_weight=None, zero_division="warn") -> float:
    r"""Specificity (特异度, true negative rate TNR): share of actual negatives predicted negative.

    .. math:: \mathrm{TNR} = \frac{TN}{TN + FP} = 1 - \mathrm{FPR}

    The recall of the negative class: scikit-learn's
    ``recall_score(y_true, y_pred, pos_label=0)``. 0/0 when there is no
    actual negative; ``zero_division`` decides.

    References
    ----------
    Altman, D. G. & Bland, J. M. (1994). Diagnostic tests 1: sensitivity and specificity.
    *BMJ* 308, 1552.

    Examples
    --------
    >>> specificity([1, 0, 0, 0], [1, 1, 0, 0])
    0.6666666666666666
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._specificity(
        zero_division)


def false_negative_rate(y_true, y_pred, *, sample_weight=None, zero_division="warn") -> float:
    r"""False negative rate (假反例率, FNR, miss rate): share of actual positives missed.

    .. math:: \mathrm{FNR} = \frac{FN}{FN + TP} = 1 - \mathrm{recall}

    0/0 when there is no actual positive; ``zero_division`` decides.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recognition Letters* 27(8),
    861-874.

    Examples
    --------
    >>> false_negative_rate([1, 1, 1, 0], [1, 0, 0, 0])
    0.6666666666666666
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._fnr(zero_division)


def balanced_accuracy(y_true, y_pred, *, sample_weight=None) -> float:
    r"""Balanced accuracy (平衡准确率): the mean of the recall of each class.

    .. math:: \mathrm{BA} = \frac{\mathrm{TPR} + \mathrm{TNR}}{2}
              = \frac12\Big(\frac{TP}{TP + FN} + \frac{TN}{TN + FP}\Big)

    Predicting the majority class for everyone scores 0.5 however rare the
    positives are, where accuracy can look excellent. When ``y_true`` holds
    one class only, the other recall is 0/0 and left out, so the value is
    the recall of that class, with a :class:`~recmetrics.RecmetricsWarning`
    (scikit-learn's ``balanced_accuracy_score`` does the same).

    References
    ----------
    Brodersen, K. H., Ong, C. S., Stephan, K. E. & Buhmann, J. M. (2010). The balanced accuracy
    and its posterior distribution. *ICPR*, 3121-3124.

    Examples
    --------
    >>> balanced_accuracy([1] + [0] * 99, [0] * 100)   # accuracy 0.99
    0.5
    """
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._balanced_accuracy()


def matthews_corrcoef(y_true, y_pred, *, sample_weight=None, zero_division="warn") -> float:
    r"""Matthews correlation coefficient (马修斯相关系数, MCC, phi coefficient).

    .. math:: \mathrm{MCC} = \frac{TP\cdot TN - FP\cdot FN}
              {\sqrt{(TP + FP)(TP + FN)(TN + FP)(TN + FN)}}

    The Pearson correlation of the 0/1 truth and prediction: 1 perfect, 0 no
    better than chance, -1 always wrong. It uses all four cells, so it stays
    low for a classifier that only predicts the majority class. 0/0 when a
    row or column of the matrix is 0 (one class only in ``y_true`` or in
    ``y_pred``); ``zero_division`` decides, and the default (0.0 with a
    warning) is scikit-learn's value.

    References
    ----------
    Matthews, B. W. (1975). Comparison of the predicted and observed secondary structure of T4
    phage lysozyme. *Biochimica et Biophysica Acta* 405(2), 442-451. Chicco, D. & Jurman, G.
    (2020). The advantages of the Matthews correlation coefficient (MCC) over F1 score and
    accuracy. *BMC Genomics* 21, 6.

    Examples
    --------
    >>> round(matthews_corrcoef([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]), 4)   # (4 - 1) / 9
    0.3333
    """
    zero_division = check_zero_division(zero_division)
    return confusion_matrix(y_true, y_pred, sample_weight=sample_weight)._mcc(zero_division)


def fbeta_score(y_true, y_pred, *, beta: float, average: Average = "binary", sample_weight=None,
                zero_division="warn") -> float:
    r"""F-beta score (F-beta 值): recall weighted beta times as much as precision.

    .. math::

        F_\beta = \frac{(1+\beta^2)\,P\,R}{\beta^2 P + R}
                = \frac{(1+\beta^2)\,TP}{(1+\beta^2)\,TP + \beta^2 FN + FP}

    The count form is used, so F-beta is 0 (not 0/0) when TP = 0 but FP or FN
    is not, as in scikit-learn. It is 0/0 only when TP = FN = FP = 0. With
    ``average="macro"`` or ``"weighted"`` the classes' F-beta values are
    averaged (not the F-beta of averaged precision and recall), as in
    scikit-learn.

    Parameters
    ----------
    AVERAGE

    References
    ----------
    van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7.

    Examples
    --------
    >>> round(fbeta_score([1, 1, 0, 0], [1, 0, 1, 0], beta=2.0), 4)
    0.5
    """
    beta = check_positive_real("beta", beta)
    b2 = beta * beta
    return _rate(y_true, y_pred, sample_weight, average, zero_division,
                 binary=lambda matrix, policy: matrix.fbeta(beta, zero_division=policy),
                 per_class=lambda c: ((1 + b2) * c.tp, b2 * c.actual + c.predicted),
                 what=f"F-beta (beta={beta:g}) with TP = FN = FP = 0")


def f1_score(y_true, y_pred, *, average: Average = "binary", sample_weight=None,
             zero_division="warn") -> float:
    r"""F1 score (F1 值): harmonic mean of precision and recall.

    .. math:: F_1 = \frac{2PR}{P + R} = \frac{2\,TP}{2\,TP + FN + FP}

    Parameters
    ----------
    AVERAGE

    References
    ----------
    van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., ch. 7.

    Examples
    --------
    >>> f1_score([1] + [0] * 99, [0] * 100)
    0.0
    """
    return fbeta_score(y_true, y_pred, beta=1.0, average=average, sample_weight=sample_weight,
                       zero_division=zero_division)


fbeta_score.__doc__ = (fbeta_score.__doc__ or "").replace("AVERAGE", _AVERAGE_DOC)
f1_score.__doc__ = (f1_score.__doc__ or "").replace("AVERAGE", _AVERAGE_DOC)
