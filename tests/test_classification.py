"""Confusion-matrix metrics: source-document numbers, a literal reference, scikit-learn."""
import math

import pytest
from hypothesis import given, strategies as st
from sklearn import metrics as skm

import recmetrics as rm


def literal_counts(y_true, y_pred):
    """The definition, one sample at a time."""
    tp = fp = fn = tn = 0
    for t, p in zip(y_true, y_pred):
        if t == 1 and p == 1:
            tp += 1
        elif t == 0 and p == 1:
            fp += 1
        elif t == 1 and p == 0:
            fn += 1
        else:
            tn += 1
    return tp, fp, fn, tn


binary_pairs = st.integers(1, 60).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 1), min_size=n, max_size=n),
                        st.lists(st.integers(0, 1), min_size=n, max_size=n)))


@given(binary_pairs)
def test_confusion_matrix_matches_the_definition_and_sklearn(pair):
    y_true, y_pred = pair
    cm = rm.confusion_matrix(y_true, y_pred)
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == literal_counts(y_true, y_pred)
    tn, fp, fn, tp = skm.confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == (tp, fp, fn, tn)


@given(binary_pairs, st.sampled_from([0.5, 1.0, 2.0, 3.7]))
def test_rates_match_sklearn_with_every_zero_division_policy(pair, beta):
    y_true, y_pred = pair
    for zd in (0.0, 1.0):
        assert rm.precision(y_true, y_pred, zero_division=zd) == pytest.approx(
            skm.precision_score(y_true, y_pred, zero_division=zd))
        assert rm.recall(y_true, y_pred, zero_division=zd) == pytest.approx(
            skm.recall_score(y_true, y_pred, zero_division=zd))
        assert rm.fbeta_score(y_true, y_pred, beta=beta, zero_division=zd) == pytest.approx(
            skm.fbeta_score(y_true, y_pred, beta=beta, zero_division=zd))
        assert rm.f1_score(y_true, y_pred, zero_division=zd) == pytest.approx(
            skm.f1_score(y_true, y_pred, zero_division=zd))
    assert rm.accuracy(y_true, y_pred) == pytest.approx(skm.accuracy_score(y_true, y_pred))


@given(binary_pairs)
def test_fbeta_is_the_weighted_harmonic_mean_where_defined(pair):
    y_true, y_pred = pair
    cm = rm.confusion_matrix(y_true, y_pred)
    if cm.tp > 0:
        p, r = cm.tp / (cm.tp + cm.fp), cm.tp / (cm.tp + cm.fn)
        for beta in (0.5, 1.0, 2.0):
            b2 = beta * beta
            assert cm.fbeta(beta) == pytest.approx((1 + b2) * p * r / (b2 * p + r))


def test_rates_from_a_hand_counted_matrix():
    # 3 TP, 1 FP, 2 FN, 4 TN
    y_true = [1, 1, 1, 0, 1, 1, 0, 0, 0, 0]
    y_pred = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    cm = rm.confusion_matrix(y_true, y_pred)
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == (3, 1, 2, 4)
    assert cm.accuracy == 0.7 == rm.accuracy(y_true, y_pred)
    assert cm.precision == 0.75 == rm.precision(y_true, y_pred)
    assert cm.recall == 0.6 == cm.tpr == rm.true_positive_rate(y_true, y_pred)
    assert cm.fpr == 0.2 == rm.false_positive_rate(y_true, y_pred)
    assert cm.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert cm.fbeta(2) == pytest.approx(5 * 0.75 * 0.6 / (4 * 0.75 + 0.6))


def test_source_001_one_positive_ninety_nine_negatives_all_predicted_negative():
    """Source document 001 says precision is 0.99 here; that number is the accuracy."""
    y_true, y_pred = [1] + [0] * 99, [0] * 100
    assert rm.accuracy(y_true, y_pred) == 0.99
    assert math.isnan(rm.precision(y_true, y_pred, zero_division=float("nan")))
    with pytest.warns(rm.RecmetricsWarning, match="precision = TP/\\(TP\\+FP\\) with nothing predicted positive"):
        assert rm.precision(y_true, y_pred) == 0.0
    assert rm.recall(y_true, y_pred) == 0.0
    assert rm.f1_score(y_true, y_pred) == 0.0


def test_confusion_matrix_properties_warn_on_zero_division():
    cm = rm.confusion_matrix([0, 0], [0, 0])
    with pytest.warns(rm.RecmetricsWarning):
        assert cm.recall == 0.0
    with pytest.warns(rm.RecmetricsWarning):
        assert cm.f1 == 0.0
    assert math.isnan(cm.fbeta(1.0, zero_division=float("nan")))
    assert cm.fpr == 0.0 and cm.accuracy == 1.0


def test_confusion_matrix_repr_is_the_constructor_and_a_labelled_table():
    cm = rm.confusion_matrix([1] * 12 + [0] * 1005, [1] * 9 + [0] * 3 + [1] * 5 + [0] * 1000)
    assert repr(cm).splitlines() == [
        "ConfusionMatrix(tp=9, fp=5, fn=3, tn=1000)",
        "          predicted 1  predicted 0",
        "actual 1            9            3",
        "actual 0            5         1000",
    ]
    first = repr(cm).splitlines()[0]
    assert eval(first, {"ConfusionMatrix": rm.ConfusionMatrix}) == cm
    wide = rm.ConfusionMatrix(tp=123_456_789_012, fp=0, fn=1, tn=2)
    lines = repr(wide).splitlines()
    assert len({len(line) for line in lines[1:]}) == 1  # columns stay aligned
    assert lines[2].split() == ["actual", "1", "123456789012", "1"]


def test_confusion_matrix_html_is_a_table_with_labels_and_counts():
    html = rm.ConfusionMatrix(tp=1234, fp=5, fn=6, tn=7)._repr_html_()
    assert html.startswith("<table>") and html.endswith("</table>")
    assert "<caption>ConfusionMatrix, n = 1,252</caption>" in html
    assert ("<tr><th>actual 1</th><td style=\"text-align:right\">1,234 (TP)</td>"
            "<td style=\"text-align:right\">6 (FN)</td></tr>") in html
    assert "<th>predicted 1</th><th>predicted 0</th>" in html
