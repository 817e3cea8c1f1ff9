"""Confusion-matrix metrics: source-document numbers, a literal reference, scikit-learn."""
import math
import warnings

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


# --------------------------------------------------------------------------- issue 23


def weighted_counts_literal(y_true, y_pred, w):
    tp = fp = fn = tn = 0.0
    for t, p, x in zip(y_true, y_pred, w):
        if t == 1 and p == 1:
            tp += x
        elif t == 0 and p == 1:
            fp += x
        elif t == 1 and p == 0:
            fn += x
        else:
            tn += x
    return tp, fp, fn, tn


def mcc_literal(tp, fp, fn, tn):
    d = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / d if d else 0.0


weighted_pairs = st.integers(1, 40).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 1), min_size=n, max_size=n),
                        st.lists(st.integers(0, 1), min_size=n, max_size=n),
                        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]), min_size=n, max_size=n)))


@given(weighted_pairs)
def test_weighted_confusion_matrix_matches_the_definition_and_sklearn(case):
    y_true, y_pred, w = case
    if not any(w):
        w[0] = 1.0
    cm = rm.confusion_matrix(y_true, y_pred, sample_weight=w)
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == pytest.approx(weighted_counts_literal(y_true, y_pred, w))
    tn, fp, fn, tp = skm.confusion_matrix(y_true, y_pred, labels=[0, 1], sample_weight=w).ravel()
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == pytest.approx((tp, fp, fn, tn))


@given(weighted_pairs, st.booleans())
def test_binary_rates_with_weights_match_sklearn(case, weighted):
    y_true, y_pred, w = case
    if not any(w):
        w[0] = 1.0
    w = w if weighted else None
    kw = dict(sample_weight=w)
    for zd in (0.0, 1.0):
        assert rm.precision(y_true, y_pred, zero_division=zd, **kw) == pytest.approx(
            skm.precision_score(y_true, y_pred, zero_division=zd, **kw))
        assert rm.recall(y_true, y_pred, zero_division=zd, **kw) == pytest.approx(
            skm.recall_score(y_true, y_pred, zero_division=zd, **kw))
        assert rm.specificity(y_true, y_pred, zero_division=zd, **kw) == pytest.approx(
            skm.recall_score(y_true, y_pred, pos_label=0, zero_division=zd, **kw))
        assert rm.f1_score(y_true, y_pred, zero_division=zd, **kw) == pytest.approx(
            skm.f1_score(y_true, y_pred, zero_division=zd, **kw))
        assert rm.fbeta_score(y_true, y_pred, beta=2.0, zero_division=zd, **kw) == pytest.approx(
            skm.fbeta_score(y_true, y_pred, beta=2.0, zero_division=zd, **kw))
    assert rm.accuracy(y_true, y_pred, **kw) == pytest.approx(skm.accuracy_score(y_true, y_pred, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one class only: recmetrics and sklearn both warn
        assert rm.matthews_corrcoef(y_true, y_pred, **kw) == pytest.approx(
            skm.matthews_corrcoef(y_true, y_pred, **kw), abs=1e-12)
        assert rm.balanced_accuracy(y_true, y_pred, **kw) == pytest.approx(
            skm.balanced_accuracy_score(y_true, y_pred, **kw))
    tp, fp, fn, tn = weighted_counts_literal(y_true, y_pred, w or [1] * len(y_true))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        assert rm.matthews_corrcoef(y_true, y_pred, **kw) == pytest.approx(mcc_literal(tp, fp, fn, tn))
        if tp + fn:
            assert rm.false_negative_rate(y_true, y_pred, **kw) == pytest.approx(fn / (fn + tp))
            assert rm.false_negative_rate(y_true, y_pred, **kw) == pytest.approx(
                1 - rm.recall(y_true, y_pred, **kw))
        if tn + fp:
            assert rm.specificity(y_true, y_pred, **kw) == pytest.approx(tn / (tn + fp))
        if tp + fn and tn + fp:
            assert rm.balanced_accuracy(y_true, y_pred, **kw) == pytest.approx(
                (tp / (tp + fn) + tn / (tn + fp)) / 2)


def test_binary_measures_on_a_hand_counted_matrix():
    # 3 TP, 1 FP, 2 FN, 4 TN
    y_true = [1, 1, 1, 0, 1, 1, 0, 0, 0, 0]
    y_pred = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert rm.specificity(y_true, y_pred) == 0.8
    assert rm.false_negative_rate(y_true, y_pred) == 0.4
    assert rm.balanced_accuracy(y_true, y_pred) == pytest.approx(0.7)
    assert rm.matthews_corrcoef(y_true, y_pred) == pytest.approx((12 - 2) / math.sqrt(4 * 5 * 5 * 6))
    cm = rm.confusion_matrix(y_true, y_pred)
    assert (cm.specificity, cm.tnr, cm.fnr) == (0.8, 0.8, 0.4)


def test_majority_class_predictor_exposes_what_accuracy_hides():
    y_true, y_pred = [1] + [0] * 99, [0] * 100
    assert rm.accuracy(y_true, y_pred) == 0.99
    assert rm.balanced_accuracy(y_true, y_pred) == 0.5
    with pytest.warns(rm.RecmetricsWarning, match="MCC is 0/0"):
        assert rm.matthews_corrcoef(y_true, y_pred) == 0.0
    assert math.isnan(rm.matthews_corrcoef(y_true, y_pred, zero_division=float("nan")))


def test_balanced_accuracy_with_one_actual_class_is_that_recall_with_a_warning():
    with pytest.warns(rm.RecmetricsWarning, match="one actual class only"):
        assert rm.balanced_accuracy([1, 1, 1], [1, 0, 1]) == pytest.approx(2 / 3)


def test_zero_weight_samples_change_nothing():
    y_true, y_pred = [1, 0, 1, 0, 1], [1, 1, 0, 0, 0]
    w = [1, 1, 1, 1, 0]
    for fn in (rm.precision, rm.recall, rm.specificity, rm.matthews_corrcoef, rm.f1_score):
        assert fn(y_true, y_pred, sample_weight=w) == pytest.approx(fn(y_true[:4], y_pred[:4]))


multiclass_pairs = st.integers(1, 40).flatmap(
    lambda n: st.tuples(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n),
                        st.lists(st.sampled_from("abce"), min_size=n, max_size=n),
                        st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n)))


def averaged_literal(y_true, y_pred, average, rate, beta=1.0):
    """Per-class counts by loops, then the average as scikit-learn documents it."""
    classes = sorted(set(y_true) | set(y_pred))
    tp = {c: sum(t == p == c for t, p in zip(y_true, y_pred)) for c in classes}
    pred = {c: sum(p == c for p in y_pred) for c in classes}
    true = {c: sum(t == c for t in y_true) for c in classes}
    b2 = beta * beta
    num = {"precision": lambda c: tp[c], "recall": lambda c: tp[c], "f": lambda c: (1 + b2) * tp[c]}[rate]
    den = {"precision": lambda c: pred[c], "recall": lambda c: true[c],
           "f": lambda c: b2 * true[c] + pred[c]}[rate]
    if average == "micro":
        return sum(num(c) for c in classes) / sum(den(c) for c in classes)
    values = [num(c) / den(c) if den(c) else 0.0 for c in classes]
    weights = [true[c] if average == "weighted" else 1 for c in classes]
    return sum(v * w for v, w in zip(values, weights)) / sum(weights)


@given(multiclass_pairs, st.sampled_from(["micro", "macro", "weighted"]), st.booleans())
def test_multiclass_averages_match_sklearn_and_a_literal_loop(case, average, weighted):
    y_true, y_pred, w = case
    kw = dict(sample_weight=w if weighted else None)
    for zd in (0.0, 1.0, float("nan")):
        pairs = [(rm.precision, skm.precision_score, {}), (rm.recall, skm.recall_score, {}),
                 (rm.f1_score, skm.f1_score, {}), (rm.fbeta_score, skm.fbeta_score, dict(beta=0.5))]
        for ours, theirs, extra in pairs:
            got = ours(y_true, y_pred, average=average, zero_division=zd, **extra, **kw)
            want = theirs(y_true, y_pred, average=average, zero_division=zd, **extra, **kw)
            assert got == pytest.approx(want, nan_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        for rate, fn, extra in [("precision", rm.precision, {}), ("recall", rm.recall, {}),
                                ("f", rm.fbeta_score, dict(beta=2.0))]:
            assert fn(y_true, y_pred, average=average, **extra) == pytest.approx(
                averaged_literal(y_true, y_pred, average, rate, extra.get("beta", 1.0)))


def test_micro_precision_and_recall_of_single_label_classes_are_the_accuracy():
    y_true, y_pred = ["a", "b", "c", "c", "b"], ["a", "c", "c", "b", "b"]
    acc = sum(t == p for t, p in zip(y_true, y_pred)) / 5
    assert rm.precision(y_true, y_pred, average="micro") == acc
    assert rm.recall(y_true, y_pred, average="micro") == acc


def test_multiclass_bad_input():
    with pytest.raises(ValueError, match=r"average='samples' is not a known option; use one of 'binary', 'micro'"):
        rm.precision([0, 1], [0, 1], average="samples")
    with pytest.raises(ValueError, match=r"y_true must hold only 0 and 1"):
        rm.precision([0, 2], [0, 1])
    with pytest.raises(ValueError, match=r"y_true contains 1 missing label\(s\) \(first at index 1\)"):
        rm.recall(["a", None], ["a", "b"], average="macro")
    with pytest.raises(ValueError, match=r"sample_weight must hold finite numbers >= 0, found -1.0 at index 1"):
        rm.precision([0, 1], [0, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match=r"sample_weight has 1 values but there are 2 samples"):
        rm.accuracy([0, 1], [0, 1], sample_weight=[1])


@pytest.mark.parametrize("fn, extra, y_true, y_pred, average, expected, message", [
    (rm.precision, {}, ["a", "b"], ["a", "a"], "macro", (1 / 2 + 0) / 2,
     r"precision = TP/\(TP\+FP\) is 0/0 for 1 class\(es\) \('b'\); returning 0.0"),
    (rm.recall, {}, ["a", "b"], ["a", "c"], "weighted", (1 * 1 + 0 * 1) / 2,
     r"recall = TP/\(TP\+FN\) is 0/0 for 1 class\(es\) \('c'\); returning 0.0"),
    (rm.fbeta_score, dict(beta=3.0, sample_weight=[1, 0]), ["a", "b"], ["a", "b"], "weighted", 1.0,
     r"F-beta \(beta=3\) with TP = FN = FP = 0 is 0/0 for 1 class\(es\) \('b'\); returning 0.0"),
    (rm.precision, {}, ["a", "b", "c", "d"], ["e", "e", "e", "e"], "macro", 0.0,
     r"precision = TP/\(TP\+FP\) is 0/0 for 4 class\(es\) \('a', 'b', 'c'\); returning 0.0"),
])
def test_averaged_rates_warn_naming_the_rate_and_the_classes_that_are_0_over_0(
        fn, extra, y_true, y_pred, average, expected, message):
    with pytest.warns(rm.RecmetricsWarning, match=message):
        assert fn(y_true, y_pred, average=average, **extra) == pytest.approx(expected)
