"""recmetrics.compare with many models (issue 22): pairs, tests, corrections, DeLong, export.

The two-model path is also covered by tests/test_evaluation.py (p-values replayed by hand) and
tests/test_cli.py; here it is checked to be unchanged by the many-model code.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recmetrics as rm

DATA = rm.DATA_DIR


@pytest.fixture(scope="module")
def sample():
    a = pd.read_csv(DATA / "sample_model_a.csv")
    b = pd.read_csv(DATA / "sample_model_b.csv")
    truth = pd.read_csv(DATA / "sample_truth.csv")
    rng = np.random.default_rng(22)
    c = a.assign(score=a.score + rng.normal(0, 0.3, len(a)))  # A with noise: a worse model
    return a, b, c, truth


# --------------------------------------------------------------------------- literal references


def holm_literal(p):
    """Holm (1979) step-down, written from the definition: sort, scale by m - j + 1, running max."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    m, out, running = len(p), [0.0] * len(p), 0.0
    for j, i in enumerate(order, start=1):
        running = max(running, (m - j + 1) * p[i])
        out[i] = min(1.0, running)
    return out


def bonferroni_literal(p):
    return [min(1.0, len(p) * x) for x in p]


def bh_literal(p):
    """Benjamini-Hochberg step-up: adjusted p_(i) = min over j >= i of m p_(j) / j."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    m, out = len(p), [0.0] * len(p)
    for rank, i in enumerate(order, start=1):
        out[i] = min(1.0, min(m * p[order[j - 1]] / j for j in range(rank, m + 1)))
    return out


LITERAL = {"holm": holm_literal, "bonferroni": bonferroni_literal, "bh": bh_literal,
           "none": lambda p: list(p)}


def adjusted_literal(column: pd.Series, method: str) -> np.ndarray:
    """The literal procedure over the rows that ran the test; NaN stays NaN."""
    values = column.to_numpy(dtype=float)
    run = ~np.isnan(values)
    out = np.full(values.size, np.nan)
    out[run] = LITERAL[method](list(values[run]))
    return out


# --------------------------------------------------------------------------- two models: unchanged


def test_two_frames_and_a_mapping_of_two_give_the_same_table(sample):
    a, b, _, truth = sample
    two = rm.compare(a, b, truth, k=[5, 10], n_resamples=300, seed=5)
    mapping = rm.compare({"A": a, "B": b}, truth=truth, k=[5, 10], n_resamples=300, seed=5)
    pd.testing.assert_frame_equal(two, mapping)
    assert set(two.model_a) == {"A"} and set(two.model_b) == {"B"}


def test_two_model_difference_and_t_test_equal_scipy_on_per_user_values(sample):
    """Independent of compare: evaluate_per_user for each model, then scipy.stats.ttest_rel."""
    a, b, _, truth = sample
    table = rm.compare(a, b, truth, metrics=["ndcg"], k=10, n_resamples=200)
    ua = rm.evaluate_per_user(a, truth, metrics=["ndcg"], k=10).set_index("user")["ndcg@10"]
    ub = rm.evaluate_per_user(b, truth, metrics=["ndcg"], k=10).set_index("user")["ndcg@10"]
    ub = ub.loc[ua.index]
    both = ua.notna() & ub.notna()
    row = table.iloc[0]
    assert row.n_users == both.sum() == 1511
    assert row.difference == pytest.approx((ub[both] - ua[both]).mean(), rel=1e-12)
    assert row.p_ttest == pytest.approx(stats.ttest_rel(ub[both], ua[both]).pvalue, rel=1e-9)


def test_the_first_pair_of_many_equals_the_two_model_comparison(sample):
    """The randomization draws run pair by pair, so the first pair's p-values are those of the
    two-model call; only the adjusted columns (a larger family) and verdicts may differ."""
    a, b, c, truth = sample
    two = rm.compare(a, b, truth, metrics=["gauc", "mrr", "ndcg"], n_resamples=300, seed=2)
    many = rm.compare({"A": a, "B": b, "C": c}, truth=truth, metrics=["gauc", "mrr", "ndcg"],
                      n_resamples=300, seed=2)
    assert many[["model_a", "model_b"]].drop_duplicates().values.tolist() == \
        [["A", "B"], ["A", "C"], ["B", "C"]]
    first = many[(many.model_a == "A") & (many.model_b == "B")].reset_index(drop=True)
    for column in ("metric", "k", "value_a", "value_b", "difference", "p_ttest", "p_randomization",
                   "p_bootstrap", "n_users", "n_users_a", "n_users_b", "note"):
        pd.testing.assert_series_equal(first[column], two[column], check_names=False,
                                       obj=column)


# --------------------------------------------------------------------------- many models


def test_every_model_has_one_value_per_metric_and_differences_are_b_minus_a(sample):
    a, b, c, truth = sample
    table = rm.compare([a, b, c], truth=truth, metrics=["auc", "gauc", "ndcg"], n_resamples=200)
    values = {}
    for r in table.itertuples():
        for model, value in ((r.model_a, r.value_a), (r.model_b, r.value_b)):
            values.setdefault((model, r.metric), set()).add(value)
        assert r.difference == r.value_b - r.value_a
    assert all(len(v) == 1 for v in values.values())  # the same users in every pair
    assert {m for m, _ in values} == {"model_1", "model_2", "model_3"}
    # each model's value is evaluate's to the last bit (both sum the same per-user array; a
    # BLAS dot product in compare once differed from evaluate's sum in the last digit)
    for name, model in zip(("model_1", "model_2", "model_3"), (a, b, c)):
        solo = rm.evaluate(model, truth, metrics=["auc", "ndcg"])
        for metric in ("auc", "ndcg"):
            assert values[(name, metric)] == {solo.value[solo.metric == metric].iloc[0]}


def test_baseline_compares_each_model_with_it(sample):
    a, b, c, truth = sample
    table = rm.compare({"a": a, "b": b, "c": c}, truth=truth, metrics=["mrr"], baseline="b",
                       n_resamples=200)
    assert table[["model_a", "model_b"]].values.tolist() == [["b", "a"], ["b", "c"]]
    assert table.attrs["baseline"] == "b" and table.attrs["models"] == ["a", "b", "c"]


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "none"])
def test_adjusted_columns_equal_the_literal_procedure_over_the_whole_table(sample, method):
    a, b, c, truth = sample
    table = rm.compare({"A": a, "B": b, "C": c}, truth=truth, k=[5, 10], n_resamples=200,
                       correction=method)
    assert table.attrs["correction"] == method
    for column in ("p_ttest", "p_randomization", "p_bootstrap", "p_delong"):
        np.testing.assert_allclose(table[f"{column}_adjusted"],
                                   adjusted_literal(table[column], method), rtol=1e-15, atol=0,
                                   err_msg=column)
    assert table.p_delong.notna().tolist() == (table.metric == "auc").tolist()
    # the verdict reads the adjusted randomization p-value, DeLong's for AUC
    for r in table.itertuples():
        p = r.p_delong_adjusted if r.metric == "auc" else r.p_randomization_adjusted
        expected = ("not tested" if math.isnan(p) else
                    ("B better" if r.difference > 0 else "A better") if p < 0.05
                    else "no significant difference")
        assert r.verdict == expected, (r.metric, r.k, p)


def test_holm_turns_a_chance_win_into_no_significant_difference():
    """Two models, seven metric rows: a raw p-value below alpha whose Holm-adjusted value is not."""
    rng = np.random.default_rng(1)
    n = 120
    a = pd.DataFrame({"user": np.repeat(np.arange(n), 6), "item": np.tile(np.arange(6), n),
                      "score": rng.random(6 * n), "label": (rng.random(6 * n) < 0.3).astype(int)})
    b = a.assign(score=a.score + rng.normal(0, 0.35, len(a)) + 0.1 * a.label)
    kwargs = dict(k=[1, 3], metrics=["precision", "recall", "mrr", "ndcg"], n_resamples=2000)
    raw = rm.compare(a, b, correction="none", **kwargs)
    holm = rm.compare(a, b, **kwargs)
    pd.testing.assert_series_equal(raw.p_randomization, holm.p_randomization)
    flipped = (raw.verdict != holm.verdict).to_numpy()
    assert flipped.any()
    assert (holm.verdict[flipped] == "no significant difference").all()
    assert (raw.p_randomization[flipped] < 0.05).all()
    assert (holm.p_randomization_adjusted[flipped] >= 0.05).all()


def test_p_bootstrap_is_paired_bootstrap_test_on_the_paired_users(sample):
    """Replayed: one generator spawned from the seed, consumed row by row in table order."""
    a, b, _, truth = sample
    table = rm.compare(a, b, truth, metrics=["gauc", "mrr"], n_resamples=300, seed=11)
    ua = rm.evaluate_per_user(a, truth, metrics=["gauc", "mrr"]).set_index("user")
    ub = rm.evaluate_per_user(b, truth, metrics=["gauc", "mrr"]).set_index("user").loc[ua.index]
    boot = np.random.default_rng(11).spawn(1)[0]
    for r in table.itertuples():
        column = "auc" if r.metric == "gauc" else r.metric
        both = ua[column].notna() & ub[column].notna()
        weights = None
        if r.metric == "gauc":  # impressions: both models score the same rows here
            weights = ua.n_items[both].to_numpy(float)
        expected = rm.paired_bootstrap_test(ua[column][both], ub[column][both], weights=weights,
                                            n_resamples=300, seed=boot)
        assert r.p_bootstrap == expected, r.metric


def test_difference_interval_is_the_percentile_of_the_paired_bootstrap_draws(sample):
    """Replayed literally: the same spawned generator, n users drawn with replacement per
    resample, the mean difference of each draw, then the alpha/2 and 1 - alpha/2 percentiles."""
    a, b, _, truth = sample
    alpha, n_resamples = 0.1, 400
    table = rm.compare(a, b, truth, metrics=["mrr"], n_resamples=n_resamples, seed=5, alpha=alpha)
    ua = rm.evaluate_per_user(a, truth, metrics=["mrr"]).set_index("user")
    ub = rm.evaluate_per_user(b, truth, metrics=["mrr"]).set_index("user").loc[ua.index]
    both = ua.mrr.notna() & ub.mrr.notna()
    d = (ub.mrr[both] - ua.mrr[both]).to_numpy()
    boot = np.random.default_rng(5).spawn(1)[0]
    draws = boot.integers(0, d.size, size=(n_resamples, d.size))
    means = [sum(d[i] for i in row) / d.size for row in draws]
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    row = table.iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high), rel=1e-12)
    assert row.ci_low < row.difference < row.ci_high
    assert table.attrs["confidence"] == pytest.approx(0.9)


def test_global_auc_interval_is_delongs_normal_interval(sample):
    a, b, _, truth = sample
    table = rm.compare(a, b, truth, metrics=["auc"], n_resamples=100, alpha=0.05)
    rows = a.merge(b, on=["user", "item"], suffixes=("_a", "_b")).merge(truth, how="left")
    y = (rows.label.fillna(0) > 0).astype(int)
    result = rm.delong_test(y, rows.score_a, rows.score_b)
    half = stats.norm.ppf(0.975) * math.sqrt(result.variance)
    row = table.iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx((result.difference - half,
                                                       result.difference + half), rel=1e-12)


def test_identical_models_have_a_zero_width_interval(sample):
    a, _, _, truth = sample
    table = rm.compare(a, a.copy(), truth, metrics=["mrr", "ndcg"], k=5, n_resamples=100)
    assert (table.ci_low == 0).all() and (table.ci_high == 0).all()


def test_delong_in_compare_is_delong_test_on_the_rows_both_models_scored(sample):
    a, b, _, truth = sample
    c = b[~b.user.isin(b.user.unique()[::3])]          # C skipped a third of the users ...
    c = c[c.groupby("user").cumcount() % 4 != 1]       # ... and some rows of the others
    with pytest.warns(rm.RecmetricsWarning, match=r"the models scored A: 2,000, B: 2,000, "
                                                  r"C: 1,333 users; all are compared on the "
                                                  r"1,333 users every model scored"), \
            pytest.warns(rm.RecmetricsWarning, match=r"relevant truth rows were never scored"):
        # C's dropped rows are relevant items it never scored: AUC leaves them out (issue 37)
        table = rm.compare({"A": a, "B": b, "C": c}, truth=truth, metrics=["auc", "mrr"],
                           n_resamples=100)
    shared = set(c.user)
    labels = truth.set_index(["user", "item"]).label
    for (name_a, pa), (name_b, pb) in (((("A", a)), ("C", c)), (("B", b), ("C", c)),
                                       (("A", a), ("B", b))):
        rows = pa[pa.user.isin(shared)].merge(pb[pb.user.isin(shared)], on=["user", "item"],
                                              suffixes=("_a", "_b"))
        y = labels.reindex(pd.MultiIndex.from_frame(rows[["user", "item"]])).fillna(0).to_numpy()
        expected = rm.delong_test((y > 0).astype(int), rows.score_a, rows.score_b)
        row = table[(table.model_a == name_a) & (table.model_b == name_b)
                    & (table.metric == "auc")].iloc[0]
        assert row.p_delong == pytest.approx(expected.p_value, rel=1e-12, abs=1e-300)
        assert row.n_users == 1333
        if "C" in (name_a, name_b):
            assert f"DeLong's test on the {len(rows):,} (user, item) rows both models" in row.note
        else:  # same rows: DeLong's AUCs are the table's
            assert row.note == ""
            assert (row.value_a, row.value_b) == pytest.approx((expected.auc_a, expected.auc_b),
                                                               rel=1e-12)


def test_labels_of_many_frames_form_one_truth_and_disagreements_are_refused(sample):
    a, b, c, truth = sample
    la, lb, lc = (frame.merge(truth) for frame in (a, b, c))
    with_labels = rm.compare({"A": la, "B": lb, "C": lc}, metrics=["mrr"], n_resamples=100)
    with_truth = rm.compare({"A": a, "B": b, "C": c}, truth=truth, metrics=["mrr"],
                            n_resamples=100)
    pd.testing.assert_frame_equal(with_labels, with_truth)
    flipped = lc.assign(label=1 - lc.label)
    with pytest.raises(ValueError, match=r"model 'A' and model 'C' give different labels to "
                                         r"27,470 \(user, item\) pair\(s\)"):
        rm.compare({"A": la, "B": lb, "C": flipped})


@pytest.mark.parametrize("call, message", [
    (lambda a, t: rm.compare({"A": a, "B": a}, t), r"pred_a is a collection of models, so pred_b "
                                                   r"must be omitted; pass truth by keyword"),
    (lambda a, t: rm.compare(a, truth=t), r"compare needs two models or more"),
    (lambda a, t: rm.compare({"A": a}, truth=t), r"pred_a holds 1 model\(s\); compare needs at "
                                                 r"least two"),
    (lambda a, t: rm.compare({"A": a, 3: a}, truth=t), r"pred_a names a model 3; name each model "
                                                       r"with a non-empty string"),
    (lambda a, t: rm.compare({"A": a, "B": a}, truth=t, baseline="C"),
     r"baseline='C' is not one of the models \('A', 'B'\)"),
    (lambda a, t: rm.compare({"A": a, "B": a}, truth=t, correction="fdr"), r"correction='fdr'"),
    (lambda a, t: rm.compare({"A": a, "B": a, "C": a}, truth=t, score=("score", "score")),
     r"score=\('score', 'score'\) must be a column name, or a sequence of names \(one per "
     r"model: 3\)"),
])
def test_bad_calls_raise_a_value_error_naming_the_argument(sample, call, message):
    with pytest.raises(ValueError, match=message):
        call(sample[0], sample[3])


def test_score_per_model_as_a_mapping(sample):
    a, b, _, truth = sample
    renamed = b.rename(columns={"score": "prob"})
    table = rm.compare({"A": a, "B": renamed}, truth=truth, score={"A": "score", "B": "prob"},
                       metrics=["mrr"], n_resamples=100)
    plain = rm.compare(a, b, truth, metrics=["mrr"], n_resamples=100)
    pd.testing.assert_frame_equal(table, plain)


# --------------------------------------------------------------------------- export


def _three_models():
    """30 users with one relevant item of two: 'good' ranks it first for every user, 'bad'
    second, 'mid' first for half of the users."""
    users = np.repeat(np.arange(30), 2)
    items = np.tile([0, 1], 30)
    relevant = items == 0
    truth = pd.DataFrame({"user": users, "item": items, "label": relevant.astype(int)})
    good = pd.DataFrame({"user": users, "item": items, "score": np.where(relevant, 0.9, 0.1)})
    bad = good.assign(score=np.where(relevant, 0.1, 0.9))
    mid = good.assign(score=np.where(relevant == (users % 2 == 0), 0.9, 0.1))
    return {"bad": bad, "mid": mid, "good": good}, truth


def test_results_table_from_comparison_marks_what_the_verdicts_say():
    models, truth = _three_models()
    table = rm.compare(models, truth=truth, metrics=["mrr"], n_resamples=100)
    assert table.verdict.tolist() == ["B better"] * 3  # mid > bad, good > bad, good > mid
    exported = rm.results_table_from_comparison(table)
    assert exported.to_markdown() == (
        "| # | model | mrr |\n"
        "| :-- | :-- | --: |\n"
        "| a | bad | 0.5000 |\n"
        "| b | mid | 0.7500<sup>a</sup> |\n"
        "| c | good | **1.0000**<sup>ab</sup> |\n")
    # a baseline table lists the models in the order given, not the pairs' order
    vs_good = rm.compare(models, truth=truth, metrics=["mrr"], n_resamples=100, baseline="good")
    assert rm.results_table_from_comparison(vs_good).frame.index.tolist() == ["bad", "mid", "good"]
    assert rm.results_table_from_comparison(vs_good).beats["mrr"].tolist() == ["", "", "ab"]
