"""Bad input: a table of (call, expected message) pairs, and the degenerate-input policies."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recmetrics as rm

# Each row: an id, a call that must raise ValueError, and a regex the message must match.
# Every message names the argument and says what to do.
def _scored():
    import pandas as pd
    return pd.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.2, 0.1]})


_SCORED = _scored()

BAD_INPUTS = [
    ("beyond accuracy: k", lambda: rm.beyond_accuracy(_SCORED, k=0),
     r"k=0 must be an integer >= 1; use k=1 for the top item only"),
    ("beyond accuracy: head share", lambda: rm.beyond_accuracy_per_user(_SCORED, k=2, head_share=2),
     r"head_share=2 must be a number in \(0, 1\]"),
    ("most popular: history columns", lambda: rm.most_popular([1], _SCORED.drop(columns="item")),
     r"history has no column 'item'; its columns are 'user', 'score'"),
    ("GAUC lengths name all three", lambda: rm.group_auc([0, 1, 1], [0.1, 0.2], [1, 1, 2]),
     r"inputs differ in length: y_true has 3, y_score has 2, groups has 3"),
    ("lengths differ", lambda: rm.roc_auc([0, 1, 1], [0.1, 0.2]),
     r"inputs differ in length: y_true has 3, y_score has 2; pass one value per sample"),
    ("empty labels", lambda: rm.accuracy([], []), r"y_true is empty; pass at least one value"),
    ("2-d labels", lambda: rm.accuracy([[0, 1]], [[0, 1]]), r"y_true must be one-dimensional"),
    ("scalar labels", lambda: rm.accuracy(1, 1), r"y_true must be a one-dimensional sequence"),
    ("NaN score", lambda: rm.roc_auc([0, 1, 0], [0.1, float("nan"), 0.3]),
     r"y_score contains 1 NaN value\(s\) \(first at index 1\); drop or impute them"),
    ("text scores", lambda: rm.roc_auc([0, 1], ["a", "b"]), r"y_score must hold numbers"),
    ("label 2", lambda: rm.precision([0, 2, 1], [0, 1, 1]),
     r"y_true must hold only 0 and 1, found 2 at index 1; map the positive class to 1"),
    ("label -1 in prediction", lambda: rm.recall([0, 1], [-1, 1]),
     r"y_pred must hold only 0 and 1, found -1 at index 0"),
    ("string labels", lambda: rm.f1_score(["yes", "no"], [1, 0]),
     r"y_true must hold binary labels 0/1.*map them to 0 and 1"),
    ("only negatives for ROC", lambda: rm.roc_curve([0, 0], [0.2, 0.3]),
     r"y_true holds only negatives \(0\)"),
    ("unknown AUC method", lambda: rm.roc_auc([0, 1], [0.1, 0.2], method="trapezoid"),
     r"method='trapezoid' is not a known option; use one of 'rank', 'pairwise'"),
    ("unknown GAUC weight", lambda: rm.group_auc([0, 1], [0.1, 0.2], [1, 1], gauc_weight="users"),
     r"gauc_weight='users' is not a known option; use one of 'impressions', 'clicks', 'uniform'"),
    ("+inf score in a ROC curve", lambda: rm.roc_curve([1, 0, 1], [np.inf, 0.2, 0.5]),
     r"y_score contains \+inf; the ROC curve starts at a threshold above every score"),
    ("groups length", lambda: rm.group_auc([0, 1], [0.1, 0.2], [1]),
     r"inputs differ in length: y_true has 2, y_score has 2, groups has 1"),
    ("missing group id", lambda: rm.group_auc([0, 1], [0.1, 0.2], ["a", None]),
     r"groups contains 1 missing value\(s\) \(first at index 1\); give every row a group id"),
    ("k zero", lambda: rm.precision_at_k([1, 2], {1}, k=0),
     r"k=0 must be an integer >= 1; use k=1 for the top item only"),
    ("k float", lambda: rm.recall_at_k([1, 2], {1}, k=2.0), r"k=2.0 must be a whole number >= 1; pass int\(2.0\)"),
    ("k text", lambda: rm.ndcg([1, 2], {1}, k="5"), r"k='5' must be a whole number >= 1; pass a whole number"),
    ("k bool", lambda: rm.hit_rate_at_k([1, 2], {1}, k=True), r"k=True must be a whole number >= 1"),
    ("k huge", lambda: rm.ndcg([1, 2], {1}, k=10**20), r"k=100000000000000000000 is too large; a cut-off of at most"),
    ("duplicate ranked item", lambda: rm.average_precision(["a", "b", "a"], {"a"}),
     r"ranked lists item 'a' twice \(positions 1 and 3\); each item may appear once"),
    ("ranked as a set", lambda: rm.reciprocal_rank({"a", "b"}, {"a"}),
     r"ranked must be a sequence of item ids in rank order \(best first\), got set"),
    ("negative grade", lambda: rm.ndcg(["a"], {"a": -1}),
     r"relevant\['a'\] = -1 is negative; relevance grades must be >= 0"),
    ("NaN grade", lambda: rm.ndcg(["a"], {"a": float("nan")}), r"relevant\['a'\] = nan is not a finite number"),
    ("negative grade by position", lambda: rm.dcg([1, -2]), r"grades has a negative grade \(-2.0 at position 2\)"),
    ("exponential gain overflow", lambda: rm.dcg([1024, 1]),
     r"grades has grade 1024, and the exponential gain 2\*\*grade - 1 overflows float64"),
    ("unknown gain", lambda: rm.dcg([1, 2], gain="log"),
     r"gain='log' is not a known option; use one of 'exponential', 'linear'"),
    ("unknown ideal", lambda: rm.ndcg([1], {1}, ideal="best"),
     r"ideal='best' is not a known option; use one of 'truth', 'list', 'full'"),
    ("unknown AP denominator", lambda: rm.average_precision([1], {1}, denominator="k"),
     r"denominator='k' is not a known option; use one of 'relevant', 'min_k', 'hits'"),
    ("relevance as a string", lambda: rm.ndcg(["a"], "a"), r"relevant must be a set of relevant items or a mapping"),
    ("unknown no_relevant", lambda: rm.recall_at_k([1], {1}, k=1, no_relevant="nan"),
     r"no_relevant='nan' is not a known option; use one of 'skip', 'zero', 'error'"),
    ("no relevant item refused", lambda: rm.mean_average_precision([[1], [2]], [{1}, set()], no_relevant="error"),
     r"relevant_lists\[1\] has no relevant item, so its average precision is undefined"),
    ("bad item in the second list", lambda: rm.mean_reciprocal_rank([[1], [2, 2]], [{1}, {2}]),
     r"ranked_lists\[1\] lists item 2 twice"),
    ("list counts differ", lambda: rm.mean_reciprocal_rank([[1], [2]], [{1}]),
     r"one ranking per user is needed: ranked_lists has 2, relevant_lists has 1"),
    ("no lists", lambda: rm.mean_average_precision([], []), r"ranked_lists is empty"),
    ("unknown zero_division", lambda: rm.precision([1], [0], zero_division="ignore"),
     r"zero_division='ignore' is not a known policy; use 'warn'"),
    ("zero_division 2", lambda: rm.recall([1], [0], zero_division=2), r"zero_division=2 is not a known policy"),
    ("beta zero", lambda: rm.fbeta_score([1], [1], beta=0), r"beta=0 must be a finite number > 0"),
    ("negative count", lambda: rm.chi_square_test([3, -7]),
     r"observed contains a negative count \(-7.0 at index 1\); counts must be >= 0"),
    ("one category", lambda: rm.chi_square_test([10]), r"observed needs at least two categories"),
    ("expected zero", lambda: rm.chi_square_test([3, 7], [10, 0]),
     r"expected has a zero count at index 1; expected counts must be > 0"),
    ("totals differ", lambda: rm.chi_square_test([3, 7], [6, 6]),
     r"observed sums to 10 but expected sums to 12; scale expected to the observed total"),
    ("alpha out of range", lambda: rm.chi_square_critical_value(1.5, 1),
     r"alpha=1.5 must be a number strictly between 0 and 1"),
    ("dof zero", lambda: rm.chi_square_critical_value(0.05, 0), r"dof=0 must be an integer >= 1"),
    ("negative count in a confusion matrix", lambda: rm.ConfusionMatrix(tp=-1, fp=0, fn=0, tn=0),
     r"tp=-1 must be a finite number >= 0 \(a count of samples, or a sum of their weights\)"),
    ("specificity, labels", lambda: rm.specificity([0, 2], [0, 1]), r"y_true must hold only 0 and 1"),
    ("FNR, weights", lambda: rm.false_negative_rate([0, 1], [0, 1], sample_weight=[1, float("nan")]),
     r"sample_weight contains 1 NaN value\(s\)"),
    ("balanced accuracy, lengths", lambda: rm.balanced_accuracy([0, 1], [0]),
     r"inputs differ in length: y_true has 2, y_pred has 1"),
    ("MCC zero_division", lambda: rm.matthews_corrcoef([0, 1], [0, 1], zero_division="skip"),
     r"zero_division='skip' is not a known policy"),
    ("R-precision, duplicates", lambda: rm.r_precision(["a", "a"], {"a"}),
     r"ranked lists item 'a' twice \(positions 1 and 2\)"),
    ("bpref, judged non-relevant as text", lambda: rm.bpref(["a"], {"a"}, "b"),
     r"judged_nonrelevant must be a set of item ids, got str"),
    ("RBP persistence", lambda: rm.rbp(["a"], {"a"}, p=0),
     r"p=0 must be a number strictly between 0 and 1"),
    ("ERR top grade", lambda: rm.err(["a"], {"a": 1}, max_grade=-1),
     r"max_grade=-1 must be a number > 0"),
    ("mean over lists, unknown metric", lambda: rm.mean_over_lists("auc", [["a"]], [{"a"}]),
     r"metric='auc' has no mean here; pass one of the functions"),
    ("TREC run, short line", lambda: rm.read_trec_run(__import__("io").StringIO("q Q0 d 1 0.5\n")),
     r"line 1 has 5 field\(s\), but a TREC run line has 6"),
    ("TREC qrels, grade", lambda: rm.read_trec_qrels(__import__("io").StringIO("q 0 d x\n")),
     r"line 1: the grade field is 'x', not a whole number"),
    ("bootstrap lengths", lambda: rm.bootstrap_ci([0.1, 0.2], weights=[1.0]),
     r"inputs differ in length: values has 2, weights has 1"),
    ("bootstrap resamples", lambda: rm.bootstrap_ci([0.1, 0.2], n_resamples=0),
     r"n_resamples=0 must be a whole number >= 100, e.g. 1000"),
    ("bootstrap seed", lambda: rm.bootstrap_ci([0.1, 0.2], seed="x"), r"seed='x' must be None, a whole number"),
    ("DeLong lengths", lambda: rm.delong_test([0, 1], [0.1, 0.2], [0.3]),
     r"inputs differ in length: y_true has 2, y_score_a has 2, y_score_b has 1"),
    ("paired bootstrap infinity", lambda: rm.paired_bootstrap_test([0.1, np.inf], [0.1, 0.2]),
     r"a contains 1 infinite value\(s\) \(first at index 1\); .* drop or clip them"),
    ("p-value above 1", lambda: rm.adjust_p_values([0.2, 1.2]),
     r"p_values must hold p-values in \[0, 1\] \(NaN for a test not run\), found 1.2 at index 1"),
    ("results table without a frame", lambda: rm.results_table({"model": ["x"]}),
     r"values must be a pandas DataFrame with one row per model and metric, got dict"),
    ("evaluate without a frame", lambda: rm.evaluate([[1, 2, 0.5]]),
     r"pred must be a pandas DataFrame or a table that exports the Arrow C stream \(Polars, "
     r"DuckDB, pyarrow\), got list; read your file with recmetrics.io.read_scores"),
    ("compare without a frame", lambda: rm.compare([[1, 2, 0.5]], [[1, 2, 0.5]]),
     r"pred_a is a collection of models, so pred_b must be omitted"),
    ("compare: one model", lambda: rm.compare({"A": _SCORED}),
     r"pred_a holds 1 model\(s\); compare needs at least two"),
    ("results table of a comparison: not a comparison",
     lambda: rm.results_table_from_comparison(_SCORED),
     r"table has no column 'model_a', 'model_b', .*; pass the table that recmetrics.compare "
     r"returns"),
    ("show: not a table", lambda: rm.show([1, 2]),
     r"table must be a pandas DataFrame returned by recmetrics.evaluate or recmetrics.compare, "
     r"got list"),
    ("show: digits", lambda: rm.show(_SCORED, digits=0), r"digits=0 must be a whole number >= 1"),
    ("disparity: not a sliced table", lambda: rm.disparity(_SCORED),
     r"table must be a table returned by recmetrics.evaluate\(..., by=...\)"),
    ("per-user evaluation without a frame", lambda: rm.evaluate_per_user({"user": [1]}),
     r"pred must be a pandas DataFrame or a table that exports the Arrow C stream \(Polars, "
     r"DuckDB, pyarrow\), got dict"),
    ("infinite rating", lambda: rm.rmse([1, 2], [1, float("inf")]), r"y_pred contains infinite values"),
    ("probability above 1", lambda: rm.log_loss([0, 1], [0.2, 1.5]),
     r"y_prob must hold probabilities in \[0, 1\], found 1.5 at index 1 \(1 value\(s\) outside "
     r"\[0, 1\]\); scores or logits are not probabilities: map them through a sigmoid"),
    ("negative probability", lambda: rm.expected_calibration_error([0, 1], [-0.1, 0.5]),
     r"y_prob must hold probabilities in \[0, 1\], found -0.1 at index 0"),
    ("infinite probability", lambda: rm.normalized_entropy([0, 1], [0.5, float("inf")]),
     r"y_prob must hold probabilities in \[0, 1\], found inf at index 1"),
    ("NaN probability", lambda: rm.brier_score([0, 1], [0.5, float("nan")]),
     r"y_prob contains 1 NaN value\(s\) \(first at index 1\); drop or impute them"),
    ("text probabilities", lambda: rm.brier_score([0, 1], ["0.2", "0.8"]), r"y_prob must hold numbers"),
    ("two-column probabilities", lambda: rm.log_loss([0, 1], [[0.9, 0.1], [0.2, 0.8]]),
     r"y_prob must be one-dimensional, got an array of shape \(2, 2\)"),
    ("eps too large", lambda: rm.log_loss([1], [0.5], eps=0.5),
     r"eps=0.5 must be a number with 0 <= eps < 0.5; probabilities are clipped to \[eps, 1 - eps\]"),
    ("eps as text", lambda: rm.log_loss([1], [0.5], eps="auto"), r"eps='auto' must be a number"),
    ("PR curve without a positive", lambda: rm.precision_recall_curve([0, 0], [0.1, 0.2]),
     r"y_true holds no positive \(1\); the precision-recall curve needs at least one positive"),
    ("PR AUC lengths", lambda: rm.pr_auc([0, 1, 1], [0.1, 0.2]),
     r"inputs differ in length: y_true has 3, y_score has 2"),
    ("PR AUC label 2", lambda: rm.pr_auc([0, 2], [0.1, 0.2]), r"y_true must hold only 0 and 1, found 2"),
    ("zero calibration bins", lambda: rm.calibration_curve([0, 1], [0.1, 0.2], n_bins=0),
     r"n_bins=0 must be a whole number >= 1 \(the number of bins"),
    ("fractional ECE bins", lambda: rm.expected_calibration_error([0, 1], [0.1, 0.2], n_bins=2.5),
     r"n_bins=2.5 must be a whole number >= 1"),
    ("unknown calibration strategy", lambda: rm.calibration_curve([0, 1], [0.1, 0.2], strategy="kmeans"),
     r"strategy='kmeans' is not a known option; use one of 'uniform', 'quantile'"),
    ("calibration lengths", lambda: rm.calibration_curve([0, 1], [0.1]),
     r"inputs differ in length: y_true has 2, y_prob has 1"),
    ("top-k lists: scores shape", lambda: rm.from_topk([[1, 2]], [[0.5]]),
     r"scores must have the shape of items \(one score per item id\)"),
    ("score matrix: exclude shape", lambda: rm.from_score_matrix([[0.1, 0.2]],
                                                                 exclude=[[True]]),
     r"exclude has shape \(1, 1\), scores \(1, 2\)"),
    ("split: test_size", lambda: rm.split_log(_SCORED.assign(timestamp=1), how="user_fraction"),
     r"how='user_fraction' needs test_size"),
    ("leakage: columns", lambda: rm.check_leakage(_SCORED, _SCORED.drop(columns="item")),
     r"test has no column 'item'"),
    ("power: effect", lambda: rm.paired_sample_size([0.1, 0.2, 0.5], [0.2, 0.3, 0.4], effect=0),
     r"effect=0 must be a finite number > 0"),
    ("power: identical differences", lambda: rm.paired_sample_size([0.1, 0.2], [0.2, 0.3],
                                                                   effect=0.01),
     r"values_b - values_a is the same for every user \(standard deviation 0\)"),
    ("power: users", lambda: rm.minimum_detectable_effect([0.1, 0.2, 0.5], [0.2, 0.3, 0.4],
                                                          n_users=1),
     r"n_users=1 must be a whole number >= 2"),
    ("A/B: rate", lambda: rm.ab_sample_size(0.05, 1.5),
     r"p_treatment=1.5 must be a number strictly between 0 and 1"),
    ("CSV: not a table", lambda: rm.to_csv([1, 2]), r"table must be a pandas DataFrame, got list"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in BAD_INPUTS],
                         ids=[row[0] for row in BAD_INPUTS])
def test_bad_input_raises_value_error_with_a_helpful_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_every_public_function_appears_in_the_bad_input_table():
    import inspect
    table = inspect.getsource(inspect.getmodule(test_bad_input_raises_value_error_with_a_helpful_message))
    table = table[table.index("BAD_INPUTS = ["):table.index("@pytest.mark.parametrize")]
    functions = [name for name in rm.__all__ if name[0].islower() and callable(getattr(rm, name))]
    # These share every check with a function that is in the table (same validation helpers).
    shared = {"confusion_matrix", "true_positive_rate", "false_positive_rate", "group_auc_details",
              "mse", "mae", "cg"}
    missing = [name for name in functions if f"rm.{name}(" not in table and name not in shared]
    assert not missing, f"no bad-input row for {missing}"


# --------------------------------------------------------------------------- degenerate input

DEGENERATE = [  # classification: scikit-learn's zero_division
    ("precision, nothing predicted positive", lambda zd: rm.precision([1, 0], [0, 0], zero_division=zd)),
    ("recall, no actual positive", lambda zd: rm.recall([0, 0], [1, 0], zero_division=zd)),
    ("FPR, no actual negative", lambda zd: rm.false_positive_rate([1, 1], [1, 0], zero_division=zd)),
    ("F1, all true negatives", lambda zd: rm.f1_score([0, 0], [0, 0], zero_division=zd)),
]


@pytest.mark.parametrize("call", [row[1] for row in DEGENERATE], ids=[row[0] for row in DEGENERATE])
def test_degenerate_input_warns_and_follows_zero_division(call):
    with pytest.warns(rm.RecmetricsWarning, match=r"returning 0.0 \(pass zero_division= to choose\)"):
        assert call("warn") == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the explicit policies are silent
        assert call(1.0) == 1.0
        assert call(0) == 0.0
        assert math.isnan(call(float("nan")))


NOTHING_RELEVANT = [  # ranking: one no_relevant policy
    ("recall@k", lambda nr: rm.recall_at_k([1, 2], set(), k=2, no_relevant=nr)),
    ("HR@k", lambda nr: rm.hit_rate_at_k([1, 2], [], k=2, no_relevant=nr)),
    ("AP", lambda nr: rm.average_precision([1, 2], {}, no_relevant=nr)),
    ("RR", lambda nr: rm.reciprocal_rank([1, 2], {3: 0}, no_relevant=nr)),
    ("NDCG", lambda nr: rm.ndcg([1, 2], {1: 0, 2: 0}, no_relevant=nr)),
]


@pytest.mark.parametrize("call", [row[1] for row in NOTHING_RELEVANT], ids=[row[0] for row in NOTHING_RELEVANT])
def test_nothing_relevant_follows_no_relevant(call):
    with pytest.warns(rm.RecmetricsWarning, match=r"is undefined: no relevant item; returning NaN"):
        assert math.isnan(call("skip"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the explicit policies are silent
        assert call("zero") == 0.0
    with pytest.raises(ValueError, match=r"no relevant item; pass no_relevant='skip' or 'zero'"):
        call("error")


def test_mean_functions_leave_lists_without_relevant_items_out_of_the_mean():
    ranked, relevant = [["a", "b"], ["c"], ["d", "e"]], [{"b"}, set(), {"d"}]
    with pytest.warns(rm.RecmetricsWarning, match="1 of 3 lists have no relevant item and are left out"):
        assert rm.mean_reciprocal_rank(ranked, relevant) == pytest.approx(0.75)
    assert rm.mean_reciprocal_rank(ranked, relevant, no_relevant="zero") == pytest.approx(0.5)
    with pytest.warns(rm.RecmetricsWarning, match="no list is left, so the mean is NaN"):
        assert math.isnan(rm.mean_average_precision([["a"]], [set()]))


def test_inputs_of_several_types_are_accepted():
    import pandas as pd
    y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    for convert in (list, tuple, np.asarray, pd.Series):
        assert rm.roc_auc(convert(y), convert(s)) == 0.75
    assert rm.roc_auc(np.array([False, False, True, True]), s) == 0.75
    assert rm.accuracy(np.array([0.0, 1.0]), [0, 1]) == 1.0
    assert rm.average_precision(np.array([3, 1, 2]), np.array([1])) == 0.5
    assert isinstance(rm.roc_auc(y, s), float) and isinstance(rm.ndcg([1], {1}), float)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        rm.roc_auc([0, 1], [0.1, 0.2], "pairwise")
    with pytest.raises(TypeError):
        rm.average_precision([1], {1}, 1)
    with pytest.raises(TypeError):
        rm.ndcg([1], {1}, 1)
    with pytest.raises(TypeError):  # k too: one rule for every function
        rm.precision_at_k([1, 2], {1}, 2)
    with pytest.raises(TypeError):
        rm.cg([1, 2], 1)


def test_warnings_point_at_the_callers_line_not_inside_recmetrics():
    """Bug fixed: warnings were reported from recmetrics' own files, so Python's
    once-per-location filter merged 0/0s from different lines of user code."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rm.precision([1, 0], [0, 0])
        rm.ndcg([1], {2: 0})
        rm.roc_auc([1, 1], [0.1, 0.2])
    assert [w.filename for w in caught] == [__file__, __file__, __file__]


def test_reciprocal_rank_of_an_empty_list_is_zero():
    """Bug fixed: an empty ranking crashed reciprocal_rank (argmax of an empty row)."""
    assert rm.reciprocal_rank([], {"a"}) == 0.0
    assert rm.mean_reciprocal_rank([["a"], []], [{"a"}, {"b"}]) == 0.5
    assert rm.hit_rate_at_k([], {"a"}, k=3) == 0.0 and rm.average_precision([], {"a"}) == 0.0


def test_ndcg_list_ideal_scores_zero_when_the_list_found_nothing():
    """ideal='list' divides by the list's own ideal DCG, 0 here; there was something to find: 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rm.ndcg([1, 2, 3], {8, 9}, ideal="list") == 0.0


@settings(max_examples=120, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4)), max_size=60),
       block=st.sampled_from([1, 3, 7, 1 << 20]), sparse=st.booleans())
def test_pairs_distinct_is_the_literal_set_test_whatever_the_block(pairs, block, sparse):
    """Keys made a block of rows at a time (or, for a sparse pair space, all at once and
    sorted) give the answer of comparing the pairs as a set."""
    from recmetrics import _validation

    users = np.array([u * (10**6 if sparse else 1) for u, _ in pairs], dtype=np.int64)
    items = np.array([i for _, i in pairs], dtype=np.int8)
    old, _validation.PAIR_BLOCK = _validation.PAIR_BLOCK, block
    try:
        got = _validation.pairs_distinct(users, items, 5)
    finally:
        _validation.PAIR_BLOCK = old
    assert got == (len(set(pairs)) == len(pairs))
