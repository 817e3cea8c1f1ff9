"""DataFrame evaluation: tie policies by brute force, trec_eval, the single-list functions."""
import contextlib
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st
from sklearn.metrics import roc_auc_score

import recmetrics as rm

SINGLE = {  # metric -> the single-list function of the core package it must agree with
    "precision": lambda ranked, rel, k, o: rm.precision_at_k(ranked, set(i for i, g in rel.items() if g > 0), k=k),
    "recall": lambda ranked, rel, k, o: rm.recall_at_k(ranked, {i for i, g in rel.items() if g > 0}, k=k),
    "hit_rate": lambda ranked, rel, k, o: rm.hit_rate_at_k(ranked, {i for i, g in rel.items() if g > 0}, k=k),
    "map": lambda ranked, rel, k, o: rm.average_precision(ranked, {i for i, g in rel.items() if g > 0}, k=k,
                                                          denominator=o["denominator"]),
    "mrr": lambda ranked, rel, k, o: rm.reciprocal_rank(ranked, {i for i, g in rel.items() if g > 0}),
    "ndcg": lambda ranked, rel, k, o: rm.ndcg(ranked, rel, k=k, gain=o["gain"], ideal=o["ideal"]),
}


def value(table, metric, k=None):
    rows = table[(table.metric == metric) & ((table.k == k) if k is not None else table.k.isna())]
    assert len(rows) == 1
    return float(rows.value.iloc[0])


def orderings(items, scores):
    """Every ranking by descending score, tied items in every order."""
    groups = [list(g) for _, g in itertools.groupby(sorted(zip(scores, items), key=lambda p: -p[0]),
                                                     key=lambda p: p[0])]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [item for group in combo for _, item in group]


@st.composite
def one_user_with_ties(draw):
    n = draw(st.integers(1, 7))
    scores = draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=n, max_size=n))
    grades = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=n, max_size=n))
    if not any(grades):
        grades[draw(st.integers(0, n - 1))] = 1
    missing = draw(st.lists(st.sampled_from([1, 2]), max_size=2))  # relevant, never scored
    return scores, grades, missing


@settings(max_examples=120, deadline=None)
@given(one_user_with_ties(), st.integers(1, 6), st.sampled_from(["relevant", "min_k", "hits"]),
       st.sampled_from(["exponential", "linear"]), st.sampled_from(["truth", "full"]))
def test_every_tie_policy_against_brute_force_enumeration(case, k, denominator, gain, ideal):
    scores, grades, missing = case
    items = [f"i{j}" for j in range(len(scores))]
    pred = pd.DataFrame({"user": "u", "item": items, "score": scores})
    truth = pd.DataFrame({"user": "u", "item": items + [f"m{j}" for j in range(len(missing))],
                          "label": grades + missing})
    relevance = dict(zip(truth["item"], truth["label"]))
    options = {"denominator": denominator, "gain": gain, "ideal": ideal}
    tables = {ties: rm.evaluate(pred, truth, k=k, ties=ties, metrics=list(SINGLE), **options)
              for ties in ("average", "optimistic", "pessimistic")}
    for metric, single in SINGLE.items():
        cut = None if metric == "mrr" else k
        values = [single(order, relevance, k, options) for order in orderings(items, scores)]
        assert value(tables["average"], metric, cut) == pytest.approx(np.mean(values), abs=1e-12), metric
        # the bounds: the ranking with relevant (higher-graded) items first / last within a tie
        grade = dict(zip(items, grades))
        best = sorted(items, key=lambda i: (-scores[items.index(i)], -grade[i]))
        worst = sorted(items, key=lambda i: (-scores[items.index(i)], grade[i]))
        assert value(tables["optimistic"], metric, cut) == pytest.approx(single(best, relevance, k, options))
        assert value(tables["pessimistic"], metric, cut) == pytest.approx(single(worst, relevance, k, options))
        assert min(values) - 1e-12 <= value(tables["average"], metric, cut) <= max(values) + 1e-12


def test_a_constant_score_scores_exactly_what_random_order_would():
    rng = np.random.default_rng(5)
    n_users, n_items = 30, 12
    frame = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_items),
                          "item": np.tile(np.arange(n_items), n_users),
                          "label": (rng.random(n_users * n_items) < 0.25).astype(int)})
    constant = frame.assign(score=0.5)
    table = rm.evaluate(constant, k=3)
    # expected values of a uniformly random order, by formula
    n_rel = frame.groupby("user").label.sum()
    n_rel = n_rel[n_rel > 0]
    assert value(table, "auc") == 0.5 and value(table, "gauc") == 0.5
    assert value(table, "precision", 3) == pytest.approx((n_rel / n_items).mean())
    assert value(table, "recall", 3) == pytest.approx(3 / n_items)
    hr = 1 - n_rel.map(lambda r: math.comb(n_items - r, 3) / math.comb(n_items, 3))
    assert value(table, "hit_rate", 3) == pytest.approx(hr.mean())
    # and a random tie-break of the same constant scores lands on both sides of it
    shuffled = [rm.evaluate(frame.assign(score=rng.permutation(len(frame))), k=3) for _ in range(200)]
    assert np.mean([value(t, "ndcg", 3) for t in shuffled]) == pytest.approx(value(table, "ndcg", 3), abs=0.02)


def test_matches_trec_eval_on_binary_labels_with_distinct_scores():
    rng = np.random.default_rng(17)
    rows = []
    for u in range(60):
        n = rng.integers(5, 40)
        scores = rng.permutation(n) + rng.random()  # distinct within the user
        labels = (rng.random(n) < 0.2).astype(int)
        rows += [(f"u{u}", f"d{i}", float(s), int(l)) for i, (s, l) in enumerate(zip(scores, labels))]
    pred = pd.DataFrame(rows, columns=["user", "item", "score", "label"])
    qrels = {u: {d: int(l) for d, l in zip(g.item, g.label)} for u, g in pred.groupby("user")}
    run = {u: {d: float(s) for d, s in zip(g.item, g.score)} for u, g in pred.groupby("user")}
    judged = {u: q for u, q in qrels.items() if any(q.values())}
    result = pytrec_eval.RelevanceEvaluator(
        judged, {"P_5", "P_10", "recall_10", "map_cut_10", "recip_rank", "ndcg_cut_10"}).evaluate(
        {u: run[u] for u in judged})
    table = rm.evaluate(pred, k=[5, 10], gain="linear")
    mean = lambda m: np.mean([r[m] for r in result.values()])  # noqa: E731
    assert value(table, "precision", 5) == pytest.approx(mean("P_5"))
    assert value(table, "precision", 10) == pytest.approx(mean("P_10"))
    assert value(table, "recall", 10) == pytest.approx(mean("recall_10"))
    assert value(table, "map", 10) == pytest.approx(mean("map_cut_10"))
    assert value(table, "mrr") == pytest.approx(mean("recip_rank"))
    assert value(table, "ndcg", 10) == pytest.approx(mean("ndcg_cut_10"))
    assert value(table, "auc") == pytest.approx(roc_auc_score(pred.label, pred.score))
    assert value(table, "gauc") == pytest.approx(rm.group_auc(pred.label, pred.score, pred.user))
    assert table.n_users[table.metric == "precision"].iloc[0] == len(judged)
    assert table.n_skipped[table.metric == "precision"].iloc[0] == 60 - len(judged)


def test_one_user_equals_the_single_list_functions():
    pred = pd.DataFrame({"user": 7, "item": list("abcdefg"), "score": [7, 6, 5, 4, 3, 2, 1],
                         "label": [0, 2, 0, 1, 0, 0, 3]})
    ranked = list("abcdefg")
    grades = dict(zip(ranked, pred.label))
    relevant = {i for i, g in grades.items() if g}
    table = rm.evaluate(pred, k=3, denominator="min_k", ideal="full")
    per_user = rm.evaluate_per_user(pred, k=3, denominator="min_k", ideal="full")
    assert value(table, "precision", 3) == rm.precision_at_k(ranked, relevant, k=3)
    assert value(table, "recall", 3) == rm.recall_at_k(ranked, relevant, k=3)
    assert value(table, "map", 3) == rm.average_precision(ranked, relevant, k=3, denominator="min_k")
    assert value(table, "mrr") == rm.reciprocal_rank(ranked, relevant)
    assert value(table, "ndcg", 3) == pytest.approx(rm.ndcg(ranked, grades, k=3, ideal="full"))
    assert value(table, "auc") == rm.roc_auc(pred.label > 0, pred.score)
    assert per_user["ndcg@3"].iloc[0] == value(table, "ndcg", 3)
    assert per_user[["n_items", "n_relevant"]].values.tolist() == [[7, 3]]


def test_truth_frame_counts_unscored_items_and_users():
    pred = pd.DataFrame({"user": ["a", "a", "b", "b", "c"], "item": [1, 2, 1, 3, 1],
                         "score": [0.9, 0.1, 0.8, 0.7, 0.5]})
    truth = pd.DataFrame({"user": ["a", "a", "b", "d"], "item": [2, 9, 4, 1], "label": [1, 1, 1, 1]})
    # a: items 2 (scored, rank 2) and 9 (never scored); b: item 4 never scored; c: nothing relevant
    # d: relevant item but no predictions at all -> scores 0 and is counted
    table = rm.evaluate(pred, truth, k=2, metrics=["recall", "map", "mrr"])
    per_user = rm.evaluate_per_user(pred, truth, k=2, metrics=["recall", "map", "mrr"])
    assert per_user.set_index("user").loc[["a", "b", "d"], "recall@2"].tolist() == [0.5, 0.0, 0.0]
    assert per_user.set_index("user").loc["a", "map@2"] == pytest.approx(0.5 / 2)
    assert value(table, "recall", 2) == pytest.approx(0.5 / 3)
    row = table[table.metric == "recall"].iloc[0]
    assert (row.n_users, row.n_skipped, row.n_without_predictions) == (3, 1, 1)
    assert math.isnan(per_user.set_index("user").loc["c", "recall@2"])


def test_conventions_are_reported():
    pred = pd.DataFrame({"user": 1, "item": [1, 2], "score": [0.2, 0.1], "label": [0, 1]})
    table = rm.evaluate(pred, k=[1, 2], ties="pessimistic", gain="linear", denominator="hits")
    assert table.attrs["conventions"] == {"ties": "pessimistic", "gain": "linear", "ideal": "truth",
                                          "denominator": "hits", "gauc_weight": "impressions",
                                          "no_relevant": "skip", "rbp_p": 0.8,
                                          "max_grade": None, "min_grade": None,
                                          "judged_only": False, "pr_denominator": "standard",
                                          "unscored": "ignore",
                                          "k": [1, 2]}
    assert table.loc[table.metric == "ndcg", "conventions"].iloc[0] == \
        "gain=linear, ideal=truth, ties=pessimistic, no_relevant=skip"
    assert table.k.tolist()[:2] == [pd.NA, pd.NA] or table.k.isna().sum() == 3


def test_bootstrap_interval_is_seeded_and_contains_the_value():
    rng = np.random.default_rng(0)
    pred = pd.DataFrame({"user": np.repeat(np.arange(200), 10), "item": np.tile(np.arange(10), 200),
                         "score": rng.random(2000), "label": (rng.random(2000) < 0.3).astype(int)})
    a = rm.evaluate(pred, k=5, ci=0.9, n_resamples=300, seed=1)
    b = rm.evaluate(pred, k=5, ci=0.9, n_resamples=300, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert (a.ci_low <= a.value).all() and (a.value <= a.ci_high).all()
    assert (a.ci_high - a.ci_low > 0).all()


def test_auc_bootstrap_resample_equals_recomputing_auc_on_the_drawn_users():
    """The weighted shortcut must give the AUC of the resampled rows themselves."""
    from recmetrics._pipeline import AucResampler, Prepared as _Prepared
    rng = np.random.default_rng(4)
    pred = pd.DataFrame({"user": np.repeat(np.arange(15), 6), "item": np.tile(np.arange(6), 15),
                         "score": rng.integers(0, 5, 90) / 4, "label": (rng.random(90) < 0.4).astype(int)})
    prep = _Prepared(pred, None, user="user", item="item", score="score", label="label", ties="average")
    # three resamples, with the draws replayed by hand
    draws = np.random.default_rng(9).integers(0, prep.n_users, (3, prep.n_users))
    counts = np.stack([np.bincount(d, minlength=prep.n_users) for d in draws], axis=1)
    values = AucResampler(prep, "average").resample(counts.astype(float))
    for b, drawn in enumerate(draws):
        resampled = pd.concat([pred[pred.user == prep.users[u]] for u in drawn])
        assert values[b] == pytest.approx(roc_auc_score(resampled.label, resampled.score))


BAD_FRAMES = [
    ("not a frame", lambda p: rm.evaluate(p.to_dict()), r"pred must be a pandas DataFrame"),
    ("missing column", lambda p: rm.evaluate(p.drop(columns="score")),
     r"pred has no column 'score'; its columns are 'user', 'item', 'label'. Rename the column\(s\) or "
     r"pass score='<column name>'"),
    ("wrong column option", lambda p: rm.evaluate(p, user="uid"), r"pred has no column 'uid'.*pass user="),
    ("duplicate pairs", lambda p: rm.evaluate(pd.concat([p, p.iloc[:1]])),
     r"pred has 1 duplicate \(user, item\) row\(s\) \(first: user=1, item='a' in row 3; ids are "
     r"compared as text.*\); keep one row per pair"),
    ("duplicate pairs after the id policy",
     lambda p: rm.evaluate(p.assign(item=["a", " a", "b"], user=[1, 1.0, 2])),
     r"pred has 1 duplicate \(user, item\) row\(s\) \(first: user=1.0, item=' a' in row 1; ids are "
     r"compared as text, so 7, 7.0 and ' 7' are one id\)"),
    ("empty metrics", lambda p: rm.evaluate(p, metrics=[]), r"metrics is empty; pass None for every metric"),
    ("too few resamples", lambda p: rm.evaluate(p, ci=0.95, n_resamples=1),
     r"n_resamples=1 must be a whole number >= 100, e.g. 1000"),
    ("zero resamples", lambda p: rm.evaluate(p, ci=0.95, n_resamples=0),
     r"n_resamples=0 must be a whole number >= 100"),
    ("absurd resamples", lambda p: rm.evaluate(p, ci=0.95, n_resamples=10**12),
     r"n_resamples=1000000000000 is too large; use at most 10,000,000"),
    ("text seed", lambda p: rm.evaluate(p, seed="x"), r"seed='x' must be None, a whole number >= 0"),
    ("huge k", lambda p: rm.evaluate(p, k=10**20), r"k=100000000000000000000 is too large"),
    ("unknown no_relevant", lambda p: rm.evaluate(p, no_relevant="drop"),
     r"no_relevant='drop' is not a known option; use one of 'skip', 'zero', 'error'"),
    ("no relevant item refused", lambda p: rm.evaluate(p.assign(label=[1, 0, 0]), no_relevant="error"),
     r"1 user\(s\) have no relevant item \(e.g. 2\), so their ranking metrics are undefined"),
    ("compare with too few resamples", lambda p: rm.compare(p, p, n_resamples=5), r"n_resamples=5 must be"),
    ("missing item id", lambda p: rm.evaluate(p.assign(item=["a", None, "b"])),
     r"pred column 'item' has 1 missing id\(s\) \(first in row 1\); fill or drop those rows"),
    ("NaN score", lambda p: rm.evaluate(p.assign(score=[0.1, np.nan, 0.3])),
     r"pred column 'score' has 1 missing or NaN value\(s\) \(first in row 1\); drop or fill them"),
    ("one text score among numbers", lambda p: rm.evaluate(p.assign(score=[0.1, 0.2, "high"])),
     r"pred column 'score' must hold numbers, found 'high' in row 2; fix or drop that row"),
    ("text score", lambda p: rm.evaluate(p.assign(score=["x", "y", "z"])),
     r"pred column 'score' must hold numbers, found 'x' in row 0"),
    ("text label", lambda p: rm.evaluate(p.assign(label=["yes", "no", "no"])),
     r"pred column 'label' must hold numbers"),
    ("negative label", lambda p: rm.evaluate(p.assign(label=[1, -1, 0])),
     r"pred column 'label' has a negative relevance label \(-1 in row 1\)"),
    ("truth missing the label named", lambda p: rm.evaluate(p, p.drop(columns="label"), label="grade"),
     r"pred has no column 'grade'|truth has no column 'grade'"),
    ("bad k", lambda p: rm.evaluate(p, k=[5, 0]), r"k=0 must be an integer >= 1"),
    ("empty k", lambda p: rm.evaluate(p, k=[]), r"k is empty"),
    ("unknown metric", lambda p: rm.evaluate(p, metrics=["ndgc"]), r"metrics='ndgc' is not a known option"),
    ("unknown ties", lambda p: rm.evaluate(p, ties="random"), r"ties='random' is not a known option"),
    ("bad ci", lambda p: rm.evaluate(p, ci=95), r"ci=95 must be a number strictly between 0 and 1"),
    ("no rows", lambda p: rm.evaluate(p.iloc[:0]), r"pred has no rows"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in BAD_FRAMES], ids=[r[0] for r in BAD_FRAMES])
def test_bad_frames_raise_a_clear_value_error(call, message):
    pred = pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "score": [0.3, 0.2, 0.1],
                         "label": [1, 0, 1]})
    with pytest.raises(ValueError, match=message):
        call(pred)


@pytest.mark.parametrize("n_users", [3, 400])
def test_duplicate_pairs_are_found_with_few_or_many_possible_pairs(n_users):
    """The duplicate check takes a bitmap when users x items is small and a sort when it is
    large (400 x 400 pairs for 401 rows); both find the one repeated pair, in pred and truth."""
    pred = pd.DataFrame({"user": np.arange(n_users), "item": np.arange(n_users) * 7,
                         "score": np.linspace(0, 1, n_users), "label": np.arange(n_users) % 2})
    doubled = pd.concat([pred, pred.iloc[[n_users // 2]]], ignore_index=True)
    with pytest.raises(ValueError, match=rf"pred has 1 duplicate \(user, item\) row\(s\) \(first: "
                                         rf"user={n_users // 2}, item={n_users // 2 * 7} in row {n_users}"):
        rm.evaluate(doubled)
    with pytest.raises(ValueError, match=r"truth has 1 duplicate \(user, item\) row"):
        rm.evaluate(pred.drop(columns="label"), doubled)
    assert rm.evaluate(pred, metrics=["auc"]).value.notna().all()  # without the repeat: no complaint


def test_list_ideal_with_a_mixed_tie_across_the_cut_off_is_refused():
    pred = pd.DataFrame({"user": 1, "item": [1, 2, 3], "score": [0.9, 0.5, 0.5], "label": [0, 1, 0]})
    with pytest.raises(ValueError, match="ideal='list' with ties='average' is undefined here"):
        rm.evaluate(pred, k=2, ideal="list", metrics=["ndcg"])
    assert value(rm.evaluate(pred, k=2, ideal="list", ties="optimistic", metrics=["ndcg"]), "ndcg", 2) \
        == pytest.approx(1 / math.log2(3))


def test_compare_detects_a_real_difference_and_not_a_fake_one():
    rng = np.random.default_rng(8)
    n_users, n_items = 150, 20
    base = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_items),
                         "item": np.tile(np.arange(n_items), n_users)})
    base["label"] = (rng.random(len(base)) < 0.15).astype(int)
    noise = rng.normal(size=len(base))
    weak = base.assign(score=base.label * 0.3 + noise)
    strong = base.assign(score=base.label * 1.5 + noise)
    table = rm.compare(weak, strong, k=5, n_resamples=2000)
    ndcg = table[table.metric == "ndcg"].iloc[0]
    assert ndcg.value_b > ndcg.value_a and ndcg.difference == ndcg.value_b - ndcg.value_a
    assert ndcg.p_ttest < 0.001 and ndcg.p_randomization < 0.01
    assert table[table.metric == "gauc"].p_randomization.iloc[0] < 0.01
    assert math.isnan(table[table.metric == "auc"].p_ttest.iloc[0])
    # the same model against itself: no difference, p = 1
    same = rm.compare(weak, weak, k=5, n_resamples=200)
    assert (same.difference == 0).all() and (same.p_randomization.dropna() == 1.0).all()
    # A re-labelled copy of the weak model (same ranking, other noise) is not "significantly" better
    other = base.assign(score=base.label * 0.3 + rng.normal(size=len(base)))
    p_values = rm.compare(weak, other, k=5, n_resamples=2000, metrics=["ndcg"]).p_ttest
    assert (p_values > 0.001).all()


def test_compare_randomization_matches_scipy_permutation_test():
    from scipy import stats
    from recmetrics._compare import sign_flip_p_value as _sign_flip_p_value
    rng = np.random.default_rng(2)
    d = rng.normal(0.2, 1, size=12)
    ours = _sign_flip_p_value(d, np.ones(12), 4096, np.random.default_rng(0))
    exact = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    assert ours == pytest.approx(exact, abs=0.02)


# --------------------------------------------------------------------------- issue 8: no silent wrong result


def _two_models(seed=11, n_users=300, n_items=15):
    rng = np.random.default_rng(seed)
    base = pd.DataFrame({"user": np.repeat(np.arange(n_users), n_items),
                         "item": np.tile(np.arange(n_items), n_users)})
    base["label"] = (rng.random(len(base)) < 0.2).astype(int)
    noise = rng.normal(size=len(base))
    return base, base.assign(score=base.label * 1.5 + noise), base.assign(score=base.label * 0.2 + noise)


def test_compare_judges_both_models_on_the_users_both_scored():
    """Bug fixed: B scored only the easy users; its own-user means made it look better."""
    base, strong, weak = _two_models()
    # B (weak) keeps only users with many relevant items, where every metric is high
    easy = base.groupby("user").label.sum().nlargest(60).index
    b = weak[weak.user.isin(easy)]
    with pytest.warns(rm.RecmetricsWarning, match=r"model A scored 300 users and model B 60; both are "
                                                  r"compared on the 60 users both scored"):
        table = rm.compare(strong, b, k=5, n_resamples=500)
    on_shared = strong[strong.user.isin(easy)]
    for metric, cut in (("ndcg", 5), ("map", 5), ("mrr", None)):
        row = table[(table.metric == metric) & ((table.k == cut) if cut else table.k.isna())].iloc[0]
        assert row.value_a == pytest.approx(value(rm.evaluate(on_shared, k=5), metric, cut))
        assert row.value_b == pytest.approx(value(rm.evaluate(b, k=5), metric, cut))
        assert row.difference < 0 and row.p_randomization < 0.01  # B is worse where both were scored
        assert (row.n_users_a, row.n_users_b) == (300, 60)
    auc = table[table.metric == "auc"].iloc[0]
    assert auc.value_a == pytest.approx(roc_auc_score(on_shared.label, on_shared.score))
    assert auc.n_users == 60


def test_compare_refuses_labels_that_disagree():
    base, strong, weak = _two_models(n_users=20)
    flipped = weak.assign(label=np.where(weak.index == 7, 1 - weak.label, weak.label))
    with pytest.raises(ValueError, match=r"pred_a and pred_b give different labels to 1 \(user, item\) "
                                         r"pair\(s\) \(first: user=0, item=7: [01] in A, [01] in B\)"
                                         r".*pass it as truth="):
        rm.compare(strong, flipped)


def test_compare_without_truth_uses_both_files_labels_as_one_truth():
    """Relevant items only one model scored still count against the other."""
    a = pd.DataFrame({"user": 1, "item": [1, 2, 3], "score": [0.9, 0.5, 0.1], "label": [1, 0, 0]})
    b = pd.DataFrame({"user": 1, "item": [1, 4], "score": [0.2, 0.9], "label": [1, 1]})
    table = rm.compare(a, b, k=2, metrics=["recall"], n_resamples=100)
    row = table.iloc[0]
    assert (row.value_a, row.value_b) == (0.5, 1.0)  # item 4 is relevant and A never scored it


ID_VARIANTS = [  # (how the truth file writes ids, how pred writes them): all are one id each
    ("float ids from pandas", lambda s: s.astype(float), lambda s: s),
    ("'7.0' as text, as pandas writes a float column to CSV", lambda s: s.astype(float).astype(str),
     lambda s: s.astype(str)),
    ("spaces around ids", lambda s: " " + s.astype(str) + " ", lambda s: s),
    ("int column against a text column", lambda s: s.astype(str), lambda s: s),
    ("object column mixing 7 and '7'", lambda s: pd.Series([v if i % 2 else str(v) for i, v in enumerate(s)],
                                                            dtype=object), lambda s: s),
    ("categorical ids", lambda s: s.astype(str).astype("category"), lambda s: s.astype(float)),
]


@pytest.mark.parametrize("truth_ids, pred_ids", [r[1:] for r in ID_VARIANTS], ids=[r[0] for r in ID_VARIANTS])
def test_one_id_policy_for_every_way_of_writing_an_id(truth_ids, pred_ids):
    base, strong, _ = _two_models(n_users=40)
    truth = base[["user", "item", "label"]]
    expected = rm.evaluate(strong.drop(columns="label"), truth, k=5)
    messy_truth = truth.assign(user=truth_ids(truth.user), item=truth_ids(truth.item))
    messy_pred = strong.drop(columns="label").assign(user=pred_ids(strong.user), item=pred_ids(strong.item))
    got = rm.evaluate(messy_pred, messy_truth, k=5)
    pd.testing.assert_series_equal(got.value, expected.value)


def test_ids_that_do_not_join_are_reported_with_examples():
    base, strong, _ = _two_models(n_users=40)
    truth = base[["user", "item", "label"]].assign(user=base.user.map(lambda u: f"{u:03d}"))
    with pytest.warns(rm.RecmetricsWarning, match=r"of \d+ users with a relevant item in truth have no "
                                                  r"scored row in pred \(e.g. '000', '001', '002'; pred "
                                                  r"has users such as '0', '0', '0'\).*'001' is not '1'"):
        rm.evaluate(strong.drop(columns="label"), truth, k=5, metrics=["recall"])
    items_off = base[["user", "item", "label"]].assign(item=base.item + 1000)
    with pytest.warns(rm.RecmetricsWarning, match=r"relevant \(user, item\) rows in truth have no scored row"):
        rm.evaluate(strong.drop(columns="label"), items_off, k=5, metrics=["recall"])


def test_nan_results_say_why_in_the_table_and_in_a_warning():
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "score": [0.9, 0.1, 0.4, 0.3],
                         "label": [0, 0, 0, 0]})
    with pytest.warns(rm.RecmetricsWarning) as caught:
        table = rm.evaluate(pred, k=1)
    notes = dict(zip(table.metric, table.note))
    assert notes["auc"] == "undefined: no scored row is relevant, and AUC needs positives and negatives"
    assert notes["gauc"] == "undefined: no user has both a relevant and a non-relevant scored row"
    assert notes["ndcg"] == notes["mrr"] == "undefined: no user has a relevant item"
    assert table.value.isna().all()
    said = " ".join(str(w.message) for w in caught)
    for metric in ("auc", "gauc", "precision", "ndcg", "mrr"):
        assert f"{metric} is NaN: undefined" in said


def test_exponential_gain_does_not_overflow_on_large_grades():
    """Bug fixed: 2**grade overflowed to inf from grade 1024 on, and NDCG became NaN silently."""
    from fractions import Fraction
    grades = [1030, 0, 1028, 1031, 5]
    pred = pd.DataFrame({"user": 1, "item": range(5), "score": [5, 4, 3, 2, 1], "label": grades})
    got = value(rm.evaluate(pred, k=3, metrics=["ndcg"]), "ndcg", 3)
    # exact rational arithmetic with Python integers, discounts as floats
    disc = [1 / math.log2(i + 2) for i in range(3)]
    dcg = sum(Fraction(2 ** g - 1) * Fraction(d) for g, d in zip(grades[:3], disc))
    idcg = sum(Fraction(2 ** g - 1) * Fraction(d) for g, d in zip(sorted(grades, reverse=True)[:3], disc))
    assert got == pytest.approx(float(dcg / idcg), rel=1e-12)
    assert rm.ndcg(list(range(5)), dict(enumerate(grades)), k=3) == pytest.approx(got, rel=1e-12)
    with pytest.raises(ValueError, match=r"grades has grade 1031, and the exponential gain 2\*\*grade - 1 "
                                         r"overflows float64 from grade 1024 on; use gain='linear'"):
        rm.dcg(grades)


def test_integer_scores_above_2_to_the_53_warn():
    pred = pd.DataFrame({"user": 1, "item": [1, 2], "score": [2**53 + 1, 2**53], "label": [1, 0]})
    with pytest.warns(rm.RecmetricsWarning, match=r"pred column 'score' holds integers above 2\*\*53"):
        rm.evaluate(pred, metrics=["auc"])


def test_ideal_full_with_a_huge_cut_off_needs_no_memory():
    pred = pd.DataFrame({"user": 1, "item": [1, 2, 3], "score": [3, 2, 1], "label": [0, 1, 0]})
    table = rm.evaluate(pred, k=10**9, ideal="full", metrics=["ndcg", "map"], denominator="hits")
    assert 0 < value(table, "ndcg", 10**9) < 0.01  # one hit against a billion ideal positions
    assert value(table, "map", 10**9) == 0.5


@pytest.mark.parametrize("no_relevant", ["skip", "zero"])
def test_no_relevant_is_one_policy_for_mean_functions_and_evaluate(no_relevant):
    """Bug fixed: MAP was 0.53 from mean_average_precision and 0.79 from evaluate on the same data."""
    ranked = [["a", "b", "c"], ["a", "b"], ["c", "a", "b"], ["b", "c"]]
    relevant = [{"b"}, set(), {"a", "c"}, set()]
    frame = pd.DataFrame([(u, i, -p, int(i in relevant[u])) for u, items in enumerate(ranked)
                          for p, i in enumerate(items)], columns=["user", "item", "score", "label"])
    table = rm.evaluate(frame, k=3, no_relevant=no_relevant, metrics=["map", "mrr"])
    def context():  # a fresh guard for each call
        return pytest.warns(rm.RecmetricsWarning, match="2 of 4 lists have no relevant item") \
            if no_relevant == "skip" else warnings_none()
    with context():
        assert rm.mean_average_precision(ranked, relevant, k=3, no_relevant=no_relevant) == \
            pytest.approx(value(table, "map", 3))
    with context():
        assert rm.mean_reciprocal_rank(ranked, relevant, no_relevant=no_relevant) == \
            pytest.approx(value(table, "mrr"))
    assert value(table, "map", 3) == pytest.approx((0.5 + 1.0) / 2 if no_relevant == "skip" else 1.5 / 4)


@contextlib.contextmanager
def warnings_none():
    """Any warning inside the block is an error; a fresh guard on every use.

    Bug fixed: this returned one ExitStack that worked once, so a second ``with`` on the same
    object ran unguarded.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_warnings_none_guards_every_use():
    for _ in range(2):
        with pytest.raises(UserWarning, match="caught"), warnings_none():
            warnings.warn("caught", UserWarning, stacklevel=1)


def test_probability_metrics_equal_scikit_learn_and_the_single_functions():
    from sklearn.metrics import brier_score_loss, log_loss
    rng = np.random.default_rng(21)
    n = 3000
    pred = pd.DataFrame({"user": rng.integers(0, 150, n), "item": np.arange(n),
                         "score": np.r_[0.0, 1.0, rng.random(n - 2)]})
    pred["label"] = (rng.random(n) < pred.score).astype(int)
    pred.loc[0, "label"], pred.loc[1, "label"] = 1, 0  # confident misses: the clip matters
    table = rm.evaluate(pred, metrics=["logloss", "ne", "brier", "ece"], ci=0.9, n_resamples=200)
    assert value(table, "logloss") == pytest.approx(log_loss(pred.label, pred.score), rel=1e-12)
    assert value(table, "brier") == pytest.approx(brier_score_loss(pred.label, pred.score), rel=1e-12)
    assert value(table, "ne") == pytest.approx(rm.normalized_entropy(pred.label, pred.score), rel=1e-12)
    assert value(table, "ece") == pytest.approx(rm.expected_calibration_error(pred.label, pred.score), rel=1e-12)
    row = table[table.metric == "logloss"].iloc[0]
    assert row.ci_low < row.value < row.ci_high
    assert list(rm.evaluate(pred).metric.unique()) == list(rm.evaluation.DEFAULT_METRICS)  # not by default


def test_probability_metrics_refuse_scores_that_are_not_probabilities():
    pred = pd.DataFrame({"user": 1, "item": [1, 2, 3], "logit": [2.5, -1.0, 0.3], "label": [1, 0, 0]})
    with pytest.raises(ValueError, match=r"pred column 'logit' holds 2 score\(s\) outside \[0, 1\] \(e.g. 2.5\), "
                                         r"so logloss, ece cannot treat the scores as probabilities"):
        rm.evaluate(pred, score="logit", metrics=["auc", "logloss", "ece"])


@pytest.mark.parametrize("n_items", [3, 500])
def test_a_separate_truth_frame_gives_the_numbers_of_labels_in_pred(n_items):
    """The join on (user, item) takes a direct table when users x items is small and a hash
    table when it is large (300 users x 500 items); both give the single-frame numbers."""
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(300), 3)
    pred = pd.DataFrame({"user": users.astype(str), "item": [f"i{x}" for x in
                                                            rng.integers(0, n_items, users.size)],
                         "score": rng.random(users.size), "label": rng.integers(0, 3, users.size)})
    pred = pred.drop_duplicates(["user", "item"])
    truth = pred[pred.label > 0].drop(columns="score").sample(frac=1, random_state=1)
    alone = rm.evaluate(pred, k=[1, 3], metrics=["auc", "gauc", "map", "ndcg", "recall"])
    joined = rm.evaluate(pred.drop(columns="label"), truth, k=[1, 3],
                         metrics=["auc", "gauc", "map", "ndcg", "recall"])
    pd.testing.assert_frame_equal(alone, joined)


@pytest.mark.parametrize("spread", [1, -1, 10**12])
def test_integer_item_ids_give_the_numbers_of_the_same_ids_as_text(spread):
    """Integer item ids over a short span are coded by offset, without a hash (negative ids
    too); over a huge span (10^12 apart) by the hash. Both give what text ids give."""
    rng = np.random.default_rng(11)
    users = np.repeat(np.arange(50), 6)
    items = np.concatenate([rng.choice(40, 6, replace=False) for _ in range(50)]) * spread
    pred = pd.DataFrame({"user": users, "item": items, "score": rng.random(users.size),
                         "label": rng.integers(0, 2, users.size)})
    truth = pred[pred.label > 0].drop(columns="score")
    as_text = pred.assign(item=pred.item.astype(str))
    options = dict(k=[2, 5], metrics=["auc", "gauc", "map", "ndcg", "recall", "mrr"])
    expected = rm.evaluate(as_text, **options)
    pd.testing.assert_frame_equal(rm.evaluate(pred, **options), expected)
    pd.testing.assert_frame_equal(rm.evaluate(pred.drop(columns="label"), truth, **options),
                                  expected)
    pd.testing.assert_frame_equal(
        rm.evaluate(pred.drop(columns="label"), truth.assign(item=truth.item.astype(str)),
                    **options), expected)  # int in pred, text in truth: the hash, one id form


# ------------------------------------------------------------------- issue 27: numbers recmetrics did not compute
# Each test below compares with a reference written here from the definition (a loop over users,
# a bootstrap drawn by hand, scipy, or fractions worked out by hand), never with another
# recmetrics function that shares the code under test.


def _uneven_users(seed=6, n_users=30):
    """Users with 2 to 30 rows and their own click rates, scores with ties, some one-class users:
    impressions, clicks and uniform weights give three different GAUCs."""
    rng = np.random.default_rng(seed)
    frames = []
    for u in range(n_users):
        n = int(rng.integers(2, 31))
        rate = rng.choice([0.0, 0.1, 0.4, 0.8, 1.0], p=[0.1, 0.3, 0.3, 0.2, 0.1])
        frames.append(pd.DataFrame({"user": u, "item": np.arange(n),
                                    "score": rng.integers(0, 5, n) / 4,
                                    "label": (rng.random(n) < rate).astype(int)}))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("gauc_weight", ["impressions", "clicks", "uniform"])
def test_gauc_follows_gauc_weight_as_a_literal_loop_over_users(gauc_weight):
    """Planted bug: evaluate ignoring gauc_weight passed the suite, which compared evaluate
    with rm.group_auc (the same weight kernel)."""
    from conftest import group_auc_literal

    pred = _uneven_users()
    expected = {w: group_auc_literal(pred, w) for w in ("impressions", "clicks", "uniform")}
    assert len({round(v, 9) for v in expected.values()}) == 3  # the weights change the number
    table = rm.evaluate(pred, metrics=["auc", "gauc", "mrr"], gauc_weight=gauc_weight)
    assert value(table, "gauc") == pytest.approx(expected[gauc_weight], rel=1e-12)
    assert table.attrs["conventions"]["gauc_weight"] == gauc_weight
    assert rm.group_auc(pred.label, pred.score, pred.user, gauc_weight=gauc_weight) == \
        pytest.approx(expected[gauc_weight], rel=1e-12)
    # compare, model against itself: both values are that GAUC
    row = rm.compare(pred, pred, metrics=["gauc"], gauc_weight=gauc_weight, n_resamples=100).iloc[0]
    assert row.value_a == pytest.approx(expected[gauc_weight], rel=1e-12)
    assert row.value_b == pytest.approx(expected[gauc_weight], rel=1e-12)


def _distinct_log(seed=3, n_users=40):
    """Users of 3 to 9 rows with distinct scores within each user (ties only across users),
    some with no relevant row and some with relevant rows only."""
    rng = np.random.default_rng(seed)
    frames = []
    for u in range(n_users):
        n = int(rng.integers(3, 10))
        frames.append(pd.DataFrame({"user": u, "item": rng.permutation(20)[:n],
                                    "score": rng.permutation(n) / 4,
                                    "label": (rng.random(n) < rng.choice([0.0, 0.3, 0.6, 1.0]))
                                    .astype(int)}))
    return pd.concat(frames, ignore_index=True)


def _per_user_literal(pred: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per user, from the definitions (binary labels, distinct scores): P@k, RR, NDCG@k with
    linear gain, the user's AUC and row count; NaN where a value is undefined."""
    from conftest import auc_literal

    rows = []
    for u, g in pred.groupby("user", sort=False):
        rel = g.sort_values("score", ascending=False).label.to_numpy()
        n_rel = int(rel.sum())
        pos, neg = g.score[g.label > 0].tolist(), g.score[g.label == 0].tolist()
        if n_rel == 0:
            precision = rr = ndcg = float("nan")
        else:
            precision = rel[:k].sum() / k
            rr = 1 / (1 + int(np.argmax(rel)))
            dcg = sum(r / math.log2(i + 1) for i, r in enumerate(rel[:k], start=1))
            ndcg = dcg / sum(1 / math.log2(i + 1) for i in range(1, min(k, n_rel) + 1))
        rows.append({"user": u, "n": len(g), "precision": precision, "mrr": rr, "ndcg": ndcg,
                     "auc": auc_literal(pos, neg)})
    return pd.DataFrame(rows)


def _interval_reference(table, per_user, weights_of, auc_of) -> dict:
    """Percentile interval of every row of ``table`` from resample weights given by hand.

    ``weights_of(name, n)`` returns the (n_resamples, n) weights of the n users that a row's mean
    counts (counts of draws, or Poisson weights), in the users' order; ``auc_of(weights)`` the
    global AUC of one resample with the users weighted so.
    """
    level = (1 - 0.9) / 2, (1 + 0.9) / 2  # the ci=0.9 the tests ask for
    out = {}
    for row in table.itertuples():
        name = row.metric if pd.isna(row.k) else f"{row.metric}@{row.k}"
        if row.metric == "auc":
            resampled = np.array([auc_of(w) for w in weights_of("auc", len(per_user))])
        else:
            column = "auc" if row.metric == "gauc" else row.metric
            kept = per_user[per_user[column].notna()]
            v = kept[column].to_numpy()
            size = kept.n.to_numpy() if row.metric == "gauc" else np.ones(len(kept))  # impressions
            w = weights_of(name, len(kept)) * size
            with np.errstate(invalid="ignore", divide="ignore"):
                resampled = (w @ v) / w.sum(axis=1)
        resampled = resampled[np.isfinite(resampled)]
        out[name] = tuple(np.quantile(resampled, level))
    return out


def test_multinomial_intervals_equal_a_bootstrap_drawn_by_hand():
    """Planted bug: a 90% interval reported as 95% was caught by one notebook output only.

    The draws are replayed from the documented sequence: one generator seeded with ``seed``;
    resample b draws n users with replacement (``rng.integers(0, n, n)``, n = every user of
    the table), and every row is evaluated on those same counts. Each resample's statistic is
    then recomputed from the per-user values written here.
    """
    from sklearn.metrics import roc_auc_score

    pred = _distinct_log()
    per_user = _per_user_literal(pred, k=3)
    table = rm.evaluate(pred, k=3, metrics=["auc", "gauc", "precision", "mrr", "ndcg"],
                        gain="linear", ci=0.9, n_resamples=200, seed=7, bootstrap="multinomial")
    assert table.metric.tolist() == ["auc", "gauc", "precision", "mrr", "ndcg"]
    rng = np.random.default_rng(7)
    n = len(per_user)
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n)
                       for _ in range(200)]).astype(float)  # (resample, user)

    def weights_of(name, _):
        if name == "auc":
            return counts
        column = "auc" if name == "gauc" else name.split("@")[0]
        return counts[:, per_user[column].notna().to_numpy()]

    groups = [g for _, g in pred.groupby("user", sort=False)]

    def auc_of(counts):
        rows = pd.concat([g for g, c in zip(groups, counts) for _ in range(int(c))])
        return roc_auc_score(rows.label, rows.score)

    expected = _interval_reference(table, per_user, weights_of, auc_of)
    for row in table.itertuples():
        name = row.metric if pd.isna(row.k) else f"{row.metric}@{row.k}"
        assert (row.ci_low, row.ci_high) == pytest.approx(expected[name], abs=1e-12), name
    # the literal values themselves
    assert value(table, "gauc") == pytest.approx(
        np.average(per_user.auc.dropna(), weights=per_user.n[per_user.auc.notna()]), rel=1e-12)
    assert value(table, "ndcg", 3) == pytest.approx(per_user.ndcg.mean(), rel=1e-12)


def poisson_weight_table(user_ids, seed: int, n_resamples: int) -> np.ndarray:
    """Poisson(1) weights of integer user ids (rows) in resamples 0 .. n_resamples - 1.

    The one place the tests reach the private weight generator: a user's key is pandas'
    hash of its (int64) id, and resample b's weight comes from that key, ``seed`` and b.
    """
    from recmetrics._pipeline import poisson_weights

    hashes = pd.util.hash_array(np.asarray(user_ids, dtype=np.int64))
    return poisson_weights(hashes, seed, 0, n_resamples)


def test_poisson_weights_follow_the_poisson_1_distribution():
    """Planted bug: a weight table truncated at 3 passed every test (mean 1 +- 0.3 was the check).

    Chi-square goodness of fit over counts 0, 1, ..., 5 and 6+ of 2000 users x 100 resamples,
    against Poisson(1); a table cut at 3 misses the ~1.9% of weights >= 4 and fails by far.
    """
    from scipy import stats

    w = poisson_weight_table(np.arange(2000), seed=12, n_resamples=100)
    assert w.shape == (2000, 100) and (w == np.round(w)).all()
    probabilities = np.r_[stats.poisson.pmf(np.arange(6), 1), stats.poisson.sf(5, 1)]

    def p_value(weights):
        counts = np.bincount(np.minimum(weights.astype(int).ravel(), 6), minlength=7)
        return stats.chisquare(counts, probabilities * counts.sum()).pvalue

    assert p_value(w) > 1e-3
    assert p_value(np.minimum(w, 3)) < 1e-12  # the test sees a truncation at 3
    # one resample across users, and one user across resamples, are Poisson(1) too
    assert p_value(w[:, 0]) > 1e-3
    assert p_value(poisson_weight_table([7], seed=12, n_resamples=2000)) > 1e-3
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.1  # resamples are not copies


def test_poisson_intervals_equal_a_percentile_bootstrap_with_the_same_weights():
    """The Poisson bootstrap's interval from the weights of poisson_weight_table, recomputed on
    the per-user values written here; global AUC on each user's rows repeated w times."""
    from sklearn.metrics import roc_auc_score

    pred = _distinct_log(seed=4, n_users=50)
    per_user = _per_user_literal(pred, k=3)
    table = rm.evaluate(pred, k=3, metrics=["auc", "gauc", "precision", "mrr", "ndcg"],
                        gain="linear", ci=0.9, n_resamples=150, seed=21, bootstrap="poisson")
    w = poisson_weight_table(per_user.user, seed=21, n_resamples=150).T  # (resample, user)

    def weights_of(name, n):
        if name == "auc":
            return w
        column = "auc" if name == "gauc" else name.split("@")[0]
        return w[:, per_user[column].notna().to_numpy()]

    groups = [g for _, g in pred.groupby("user", sort=False)]

    def auc_of(weights):
        rows = pd.concat([g for g, c in zip(groups, weights) for _ in range(int(c))])
        return roc_auc_score(rows.label, rows.score)

    expected = _interval_reference(table, per_user, weights_of, auc_of)
    for row in table.itertuples():
        name = row.metric if pd.isna(row.k) else f"{row.metric}@{row.k}"
        assert (row.ci_low, row.ci_high) == pytest.approx(expected[name], abs=1e-12), name


def test_compare_p_values_equal_scipy_and_a_sign_flip_drawn_by_hand():
    """Planted bug: p_ttest was only checked against thresholds. Here: scipy.stats.ttest_rel on
    per-user values written from the definitions, over the users both models scored, and the
    randomization p-value replayed from compare's generator (seeded with ``seed``; per metric in
    table order, one (n_resamples, n) draw of signs)."""
    from scipy import stats

    a = _distinct_log(seed=8, n_users=60)
    rng = np.random.default_rng(1)
    b = a.assign(score=a.groupby("user").score.transform(lambda s: rng.permutation(s.to_numpy())))
    b = b[b.user >= 5]  # B did not score users 0 .. 4
    with pytest.warns(rm.RecmetricsWarning, match="model A scored 60 users and model B 55"):
        table = rm.compare(a, b, k=3, metrics=["precision", "mrr"], n_resamples=500, seed=9)
    ua = _per_user_literal(a[a.user >= 5], k=3).set_index("user")
    ub = _per_user_literal(b, k=3).set_index("user").loc[ua.index]
    flips = np.random.default_rng(9)
    assert table.metric.tolist() == ["precision", "mrr"]
    for row in table.itertuples():
        va, vb = ua[row.metric].to_numpy(), ub[row.metric].to_numpy()
        both = ~(np.isnan(va) | np.isnan(vb))
        va, vb = va[both], vb[both]
        assert row.n_users == both.sum() and row.n_users > 20
        assert row.value_a == pytest.approx(va.mean(), rel=1e-12)
        assert row.value_b == pytest.approx(vb.mean(), rel=1e-12)
        assert row.p_ttest == pytest.approx(stats.ttest_rel(vb, va).pvalue, rel=1e-9)
        d = vb - va
        signs = flips.integers(0, 2, size=(500, d.size), dtype=np.int8) * 2 - 1
        extreme = sum(abs(float(np.dot(s, d))) / d.size >= abs(d.mean()) - 1e-12 for s in signs)
        assert row.p_randomization == (extreme + 1) / 501
        assert 0.001 < row.p_ttest < 1  # a real test, not a degenerate p-value


# --------------------------------------------------------------------------- ties worked by hand
#
# Two users, k = 3, ties="average" (the mean over every order of tied items).
#
# u1 scores a 0.9 (grade 2) | b, c, d 0.5 (c grade 1) | e 0.1 (grade 1); truth adds f (grade 1,
#    never scored), so u1 has 4 relevant items. The tie {b, c, d} holds ranks 2-4 and straddles
#    k = 3. Only c's rank matters; it is 2, 3 or 4, each with probability 1/3:
#      c at 2 (a c b d e): hits in the top 3 at 1, 2: P@1 + P@2 = 1 + 1       = 2,   2 hits
#      c at 3 (a b c d e): hits at 1, 3:              P@1 + P@3 = 1 + 2/3     = 5/3, 2 hits
#      c at 4 (a b d c e): hit at 1:                  P@1                     = 1,   1 hit
#    AP@3 "relevant" (/4):   (1/2 + 5/12 + 1/4) / 3 = (6 + 5 + 3)/12 / 3 = 7/18
#    AP@3 "min_k" (/min(3, 4) = 3): (2/3 + 5/9 + 1/3) / 3 = (6 + 5 + 3)/9 / 3 = 14/27
#    AP@3 "hits" (/hits in the top 3): (2/2 + (5/3)/2 + 1/1) / 3 = (1 + 5/6 + 1) / 3 = 17/18
#      (the ratio of the means, (14/9) / (5/3) = 14/15, is not AP: the hits are random here)
#    RR = 1 (a is first in every order).
#    NDCG@3, L = 1/log2(3), exponential gain 2^g - 1 (a: 3, c, e, f: 1):
#      DCG@3: c at 2: 3 + L; c at 3: 3 + 1/2; c at 4: 3; mean 19/6 + L/3
#      IDCG@3 "truth" (grades 2, 1, 1): 3 + L + 1/2 = 7/2 + L;  "full" (grade 2 thrice): 9/2 + 3L
#      linear gain (a: 2): DCG 13/6 + L/3, IDCG "truth" 5/2 + L
#
# u2 scores p, q, r, s 0.8 (p grade 2, q grade 1) | t 0.3 (grade 0). The tie holds ranks 1-4 and
#    straddles k = 3. The ranks of the two relevant items are one of 6 equally likely pairs:
#      {1,2}: P@1 + P@2 = 2,         2 hits     {2,3}: P@2 + P@3 = 1/2 + 2/3 = 7/6, 2 hits
#      {1,3}: P@1 + P@3 = 5/3,       2 hits     {2,4}: P@2       = 1/2,             1 hit
#      {1,4}: P@1       = 1,         1 hit      {3,4}: P@3       = 1/3,             1 hit
#    AP@3 "relevant" (/2) = "min_k" (/min(3, 2) = 2): (2 + 5/3 + 1 + 7/6 + 1/2 + 1/3) / 2 / 6
#      = (40/6) / 12 = 5/9
#    AP@3 "hits": (1 + 5/6 + 1 + 7/12 + 1/2 + 1/3) / 6 = (51/12) / 6 = 17/24
#    RR: first relevant rank 1, 1, 1, 2, 2, 3 over the six pairs: (3 + 1/2 + 1/2 + 1/3) / 6 = 13/18
#    NDCG@3: each of ranks 1-3 holds the tie's mean gain: exponential (3 + 1 + 0 + 0)/4 = 1,
#      DCG@3 = 1 + L + 1/2 = 3/2 + L, IDCG "truth" (grades 2, 1) = 3 + L;
#      IDCG "full" (grade 2 thrice) = 3 (3/2 + L), so NDCG = 1/3;
#      linear mean gain 3/4: DCG 3/4 (3/2 + L) = 9/8 + 3L/4, IDCG 2 + L
L3 = 1 / math.log2(3)
TIE_PRED = pd.DataFrame({"user": ["u1"] * 5 + ["u2"] * 5, "item": list("abcde") + list("pqrst"),
                         "score": [0.9, 0.5, 0.5, 0.5, 0.1, 0.8, 0.8, 0.8, 0.8, 0.3]})
TIE_TRUTH = pd.DataFrame({"user": ["u1"] * 4 + ["u2"] * 2, "item": list("acef") + list("pq"),
                          "label": [2, 1, 1, 1, 2, 1]})
F = Fraction
TIE_EXPECTED = {  # (column, options): (u1, u2)
    ("map@3", "relevant"): (F(7, 18), F(5, 9)),
    ("map@3", "min_k"): (F(14, 27), F(5, 9)),
    ("map@3", "hits"): (F(17, 18), F(17, 24)),
    ("mrr", None): (F(1), F(13, 18)),
    ("ndcg@3", ("exponential", "truth")): ((19 / 6 + L3 / 3) / (7 / 2 + L3), (3 / 2 + L3) / (3 + L3)),
    ("ndcg@3", ("exponential", "full")): ((19 / 6 + L3 / 3) / (9 / 2 + 3 * L3), (3 / 2 + L3) / (3 * (3 / 2 + L3))),
    ("ndcg@3", ("linear", "truth")): ((13 / 6 + L3 / 3) / (5 / 2 + L3), (9 / 8 + 3 * L3 / 4) / (2 + L3)),
}
# each order of the ties as a ranked list, with its probability and the values worked out above
TIE_ORDERS = {
    "u1": [(["a", "c", "b", "d", "e"], F(1, 3), {"relevant": F(1, 2), "min_k": F(2, 3), "hits": F(1), "rr": F(1)}),
           (["a", "b", "c", "d", "e"], F(1, 3), {"relevant": F(5, 12), "min_k": F(5, 9), "hits": F(5, 6), "rr": F(1)}),
           (["a", "b", "d", "c", "e"], F(1, 3), {"relevant": F(1, 4), "min_k": F(1, 3), "hits": F(1), "rr": F(1)})],
    "u2": [(["p", "q", "r", "s", "t"], F(1, 6), {"relevant": F(1), "hits": F(1), "rr": F(1)}),
           (["p", "r", "q", "s", "t"], F(1, 6), {"relevant": F(5, 6), "hits": F(5, 6), "rr": F(1)}),
           (["p", "r", "s", "q", "t"], F(1, 6), {"relevant": F(1, 2), "hits": F(1), "rr": F(1)}),
           (["r", "p", "q", "s", "t"], F(1, 6), {"relevant": F(7, 12), "hits": F(7, 12), "rr": F(1, 2)}),
           (["r", "p", "s", "q", "t"], F(1, 6), {"relevant": F(1, 4), "hits": F(1, 2), "rr": F(1, 2)}),
           (["r", "s", "p", "q", "t"], F(1, 6), {"relevant": F(1, 6), "hits": F(1, 3), "rr": F(1, 3)})],
}


def test_hand_worked_ties_single_list_functions_order_by_order():
    """The single-list functions take one ranked list (no ties): each order of the ties gives the
    value worked out by hand, and the orders' mean is the tie-averaged value."""
    for user, orders in TIE_ORDERS.items():
        u = 0 if user == "u1" else 1
        grades = dict(zip(TIE_TRUTH.item[TIE_TRUTH.user == user], TIE_TRUTH.label[TIE_TRUTH.user == user]))
        relevant = set(grades)
        assert sum(p for _, p, _ in orders) == 1
        for denominator in ("relevant", "min_k", "hits"):
            by_hand = {"min_k": "relevant"}.get(denominator, denominator) if user == "u2" else denominator
            for ranked, _, hand in orders:
                assert rm.average_precision(ranked, relevant, k=3, denominator=denominator) == \
                    pytest.approx(float(hand[by_hand]), rel=1e-12), (user, ranked, denominator)
            mean = sum(p * hand[by_hand] for _, p, hand in orders)
            assert mean == TIE_EXPECTED[("map@3", denominator)][u]
        for ranked, _, hand in orders:
            assert rm.reciprocal_rank(ranked, relevant) == pytest.approx(float(hand["rr"]), rel=1e-12)
        assert sum(p * hand["rr"] for _, p, hand in orders) == TIE_EXPECTED[("mrr", None)][u]
    # NDCG of u1 order by order: DCG@3 = 3 + L, 3 + 1/2, 3 (exponential gain)
    grades = {"a": 2, "c": 1, "e": 1, "f": 1}
    for (ranked, _, _), dcg in zip(TIE_ORDERS["u1"], (3 + L3, 3.5, 3.0)):
        assert rm.ndcg(ranked, grades, k=3) == pytest.approx(dcg / (7 / 2 + L3), rel=1e-12)
        assert rm.ndcg(ranked, grades, k=3, ideal="full") == pytest.approx(dcg / (9 / 2 + 3 * L3), rel=1e-12)


@pytest.mark.parametrize("column, options", list(TIE_EXPECTED),
                         ids=["-".join([c, *([o] if isinstance(o, str) else o or [])]) for c, o in TIE_EXPECTED])
def test_hand_worked_ties_through_evaluate(column, options):
    """Planted bug: AP's "hits" denominator wrong when a tie straddles k was caught in 5 of 10
    random seeds; here it meets fractions worked out by hand (comments above)."""
    kwargs = {"denominator": options} if column.startswith("map") else \
        dict(zip(("gain", "ideal"), options)) if column.startswith("ndcg") else {}
    metric = column.split("@")[0]
    per_user = rm.evaluate_per_user(TIE_PRED, TIE_TRUTH, k=3, metrics=[metric], **kwargs)
    expected = [float(v) for v in TIE_EXPECTED[(column, options)]]
    assert per_user.user.tolist() == ["u1", "u2"]
    assert per_user[column].tolist() == pytest.approx(expected, rel=1e-12)
    table = rm.evaluate(TIE_PRED, TIE_TRUTH, k=3, metrics=[metric], **kwargs)
    assert value(table, metric, None if metric == "mrr" else 3) == pytest.approx(np.mean(expected), rel=1e-12)


# --------------------------------------------------------------------------- issue 23: the
# measures other toolkits test, in evaluate. Slow literal references from the formulas, on one
# list in a fixed order; ties="average" is checked against the mean over every order of the
# tied rows (brute force), the other policies against the order they name.


def _rr_at(grades, k):
    for i, g in enumerate(grades[:k], 1):
        if g > 0:
            return 1.0 / i
    return 0.0


def _r_precision(grades, big_r):
    return sum(1 for g in grades[:big_r] if g > 0) / big_r if big_r else math.nan


def _bpref(grades, judged, big_r, big_n):
    """trec_eval's m_bpref.c, literally: judged non-relevant rows seen so far."""
    total, nonrel_so_far = 0.0, 0
    for g, j in zip(grades, judged):
        if g > 0:
            total += 1.0 - min(nonrel_so_far, big_r) / min(big_n, big_r) if nonrel_so_far else 1.0
        elif j:
            nonrel_so_far += 1
    return total / big_r if big_r else math.nan


def _rbp(grades, p, top):
    return (1 - p) * sum(g / top * p ** i for i, g in enumerate(grades))


def _rbp_residual(judged, p):
    return p ** len(judged) + (1 - p) * sum(p ** i for i, j in enumerate(judged) if not j)


def _err_at(grades, k, top):
    value, go_on = 0.0, 1.0
    for i, g in enumerate(grades[:k], 1):
        stop = (2.0 ** g - 1) / 2.0 ** top
        value += go_on * stop / i
        go_on *= 1 - stop
    return value


def _orders(rows, ties):
    """The orders of one user's rows (score, item, grade, judged) a tie policy stands for."""
    if ties == "optimistic":
        return [sorted(rows, key=lambda r: (-r[0], -r[2]))]
    if ties == "pessimistic":
        return [sorted(rows, key=lambda r: (-r[0], r[2]))]
    if ties == "trec":
        return [sorted(rows, key=lambda r: (r[0], str(r[1])), reverse=True)]
    groups = [list(g) for _, g in itertools.groupby(sorted(rows, key=lambda r: -r[0]),
                                                    key=lambda r: r[0])]
    return [[row for part in parts for row in part]
            for parts in itertools.product(*(list(itertools.permutations(g)) for g in groups))]


@st.composite
def tied_judged_users(draw):
    """pred (user, item, score) with many ties, and truth with judged rows, unjudged scored
    rows and relevant rows that were never scored."""
    pred, truth = [], []
    for user in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 5))
        for item in range(n):
            pred.append((user, f"i{item}", draw(st.sampled_from([0.0, 1.0, 2.0]))))
            state = draw(st.sampled_from(["unjudged", 0, 0, 1, 2, 3]))
            if state != "unjudged":
                truth.append((user, f"i{item}", state))
        for extra in range(draw(st.integers(0, 2))):
            truth.append((user, f"x{extra}", draw(st.integers(0, 3))))
    return (pd.DataFrame(pred, columns=["user", "item", "score"]),
            pd.DataFrame(truth, columns=["user", "item", "label"]) if truth else
            pd.DataFrame({"user": [0], "item": ["x9"], "label": [0]}))


def _expected(pred, truth, user, ties, k, p, top):
    grade = {(u, i): g for u, i, g in truth.itertuples(index=False)}
    rows = [(s, i, grade.get((u, i), 0), (u, i) in grade)
            for u, i, s in pred.itertuples(index=False) if u == user]
    mine = truth[truth["user"] == user]
    big_r, big_n = int((mine["label"] > 0).sum()), int((mine["label"] == 0).sum())
    values: dict[str, list] = {}
    for order in _orders(rows, ties):
        grades = [r[2] for r in order]
        judged = [r[3] for r in order]
        one = {f"mrr@{k}": _rr_at(grades, k), "r_precision": _r_precision(grades, big_r),
               "bpref": _bpref(grades, judged, big_r, big_n), "rbp": _rbp(grades, p, top),
               f"err@{k}": _err_at(grades, k, top), "rbp_residual": _rbp_residual(judged, p)}
        for name, value in one.items():
            values.setdefault(name, []).append(value)
    return {name: float(np.mean(v)) for name, v in values.items()}, values


NEW_METRICS = ["mrr@k", "r_precision", "bpref", "rbp", "err"]


@settings(max_examples=150, deadline=None)
@given(tied_judged_users(), st.sampled_from(["average", "optimistic", "pessimistic", "trec"]),
       st.integers(1, 4), st.sampled_from([0.5, 0.8]))
def test_new_measures_equal_their_literal_formulas_under_every_tie_policy(data, ties, k, p):
    pred, truth = data
    options = dict(k=k, metrics=NEW_METRICS, ties=ties, rbp_p=p, max_grade=3)
    try:
        per_user = rm.evaluate_per_user(pred, truth, **options)
    except ValueError as error:  # ERR under averaged ties: refused only for a mixed tie in top k
        assert ties == "average" and "mixes relevance grades" in str(error)
        options["metrics"] = [m for m in NEW_METRICS if m != "err"]
        per_user = rm.evaluate_per_user(pred, truth, **options)
        refused = True
    else:
        refused = False
    mixed_somewhere = False
    for user, row in per_user.set_index("user").iterrows():
        expected, spread = _expected(pred, truth, user, ties, k, p, 3.0)
        relevant = int((truth[(truth["user"] == user)]["label"] > 0).sum())
        for name, value in expected.items():
            if name not in row:
                continue
            if relevant == 0 and name != "rbp_residual":
                assert np.isnan(row[name]), name  # no_relevant="skip"
                continue
            if name == "rbp_residual" and ties in ("optimistic", "pessimistic"):
                continue  # unjudged and judged rows of grade 0 may tie in any order there
            assert row[name] == pytest.approx(value, abs=1e-12), (user, name, ties)
        if relevant and ties == "average" and np.ptp(spread[f"err@{k}"]) > 1e-12:
            mixed_somewhere = True
    if ties == "average" and mixed_somewhere:
        assert refused  # ERR differs between orders: it must be refused, never averaged wrongly


_TIED = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcab"),
                      "score": [0.9, 0.5, 0.5, 0.3, 0.8], "label": [2, 0, 1, 0, 1]})


@pytest.mark.parametrize("options, message", [
    (dict(metrics=["rbp"], rbp_p=1.0), r"rbp_p=1.0 must be a number strictly between 0 and 1"),
    (dict(metrics=["rbp"], rbp_p="0.8"), r"rbp_p='0.8' must be a number"),
    (dict(metrics=["err"], max_grade=0, ties="trec"), r"max_grade=0 must be a number > 0 and "
                                                      r"below 1024"),
    (dict(metrics=["err"], max_grade=1, ties="trec"),
     r"a judged grade \(2\) is above max_grade=1; pass the top grade"),
    (dict(min_grade=0), r"min_grade=0 must be a number > 0 \(grades below it are not relevant"),
    (dict(judged_only="yes"), r"judged_only='yes' must be True or False"),
    (dict(metrics=["auc", "ndcg"], ties="trec"),
     r"ties='trec' orders tied documents by id.*auc compare\(s\).*use ties='average'"),
    (dict(metrics=["gauc"], ties="trec"), r"gauc compare\(s\) rows across that order"),
    (dict(metrics=["err"]), r"metric 'err' with ties='average': a tie of scores in some user's "
                            r"top 10 mixes relevance grades.*use ties='optimistic' or "
                            r"ties='pessimistic'.*or ties='trec'"),
    (dict(metrics=["novelty"], ties="trec"), r"the beyond-accuracy metrics take ties="),
    (dict(metrics=["mrr@x"]), r"metrics='mrr@x' is not a known option"),
])
def test_the_new_options_refuse_bad_values_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        rm.evaluate(_TIED, **options)


def test_err_under_average_ties_is_computed_when_every_tie_holds_one_grade():
    """A tie of two rows of grade 1: every order gives the same ERR, so it is not refused."""
    pred = pd.DataFrame({"user": 1, "item": list("abc"), "score": [0.5, 0.5, 0.1],
                         "label": [1, 1, 0]})
    table = rm.evaluate(pred, k=2, metrics=["err"], max_grade=1)
    assert table["value"].iloc[0] == pytest.approx(0.5 + 0.5 * 0.5 / 2)


def test_max_grade_defaults_to_the_top_grade_of_the_whole_truth():
    """Even a grade only on an unscored truth row sets g_max (one scale for every user)."""
    pred = pd.DataFrame({"user": [1, 2], "item": ["a", "a"], "score": [1.0, 1.0]})
    truth = pd.DataFrame({"user": [1, 2], "item": ["a", "z"], "label": [1, 3]})
    table = rm.evaluate(pred, truth, k=1, metrics=["err", "rbp"], rbp_p=0.5)
    values = dict(zip(table["metric"], table["value"]))
    # user 1: R = (2 - 1) / 2**3, ERR@1 = 1/8, RBP = 0.5 * 1/3; user 2: nothing found, 0
    assert values["err"] == pytest.approx((1 / 8 + 0) / 2)
    assert values["rbp"] == pytest.approx((0.5 / 3 + 0) / 2)
    assert "max_grade=3.0" in table["conventions"].iloc[0]


def test_default_metrics_under_trec_ties_leave_auc_and_gauc_out():
    table = rm.evaluate(_TIED, k=1, ties="trec")
    assert table["metric"].tolist() == ["precision", "recall", "hit_rate", "map", "mrr", "ndcg"]


def test_min_grade_and_judged_only_literally():
    pred = pd.DataFrame({"user": 1, "item": list("abcd"), "score": [4.0, 3.0, 2.0, 1.0]})
    truth = pd.DataFrame({"user": 1, "item": ["b", "c", "d", "z"], "label": [1, 0, 2, 2]})
    # relevant at min_grade=2: d (place 4) and z (never scored); a is unjudged
    table = rm.evaluate(pred, truth, k=4, min_grade=2, metrics=["precision", "mrr", "bpref"])
    values = dict(zip(table["metric"], table["value"]))
    assert values["precision"] == pytest.approx(1 / 4) and values["mrr"] == pytest.approx(1 / 4)
    # judged non-relevant: b (grade 1 < 2) and c; both above d: 1 - min(2, 2) / min(2, 2) = 0
    assert values["bpref"] == 0.0
    assert "min_grade=2.0" in table["conventions"].iloc[0]
    condensed = rm.evaluate(pred, truth, k=4, min_grade=2, judged_only=True,
                            metrics=["precision", "mrr"])
    values = dict(zip(condensed["metric"], condensed["value"]))
    # a is gone: b, c, d at places 1-3
    assert values["precision"] == pytest.approx(1 / 4) and values["mrr"] == pytest.approx(1 / 3)
    assert "judged_only=True" in condensed["conventions"].iloc[0]


def test_compare_reads_the_new_measures_and_trec_order():
    a = _TIED
    b = _TIED.assign(score=[0.1, 0.5, 0.9, 0.8, 0.3])
    table = rm.compare(a, b, k=2, metrics=["mrr@k", "r_precision", "bpref", "err"],
                       ties="trec", n_resamples=100)
    assert table["metric"].tolist() == ["mrr", "r_precision", "bpref", "err"]
    for metric, k in zip(table["metric"], table["k"]):
        cut = {} if pd.isna(k) else {"k": int(k)}
        column = metric if pd.isna(k) else f"{metric}@{int(k)}"
        for side, frame in (("a", a), ("b", b)):
            one = rm.evaluate_per_user(frame, k=2, metrics=[metric + ("@k" if metric == "mrr"
                                                                      else "")],
                                       ties="trec", max_grade=2)
            assert table.loc[(table.metric == metric), f"value_{side}"].iloc[0] == \
                pytest.approx(one[column].mean()), (metric, side, cut)


def test_compare_by_slices_passes_the_trec_options_to_every_slice():
    """min_grade, judged_only and rbp's options reach each slice: a slice's row is compare on
    that slice's users alone with the same options."""
    rng = np.random.default_rng(23)
    n = 40
    rows = pd.DataFrame({"user": np.repeat(np.arange(n), 6), "item": np.tile(np.arange(6), n)})
    a = rows.assign(score=rng.integers(0, 4, len(rows)).astype(float))
    b = rows.assign(score=rng.integers(0, 4, len(rows)).astype(float))
    truth = rows.sample(frac=0.7, random_state=1).assign(label=lambda t: rng.integers(0, 4, len(t)))
    users = pd.DataFrame({"user": np.arange(n), "group": np.where(np.arange(n) % 3, "x", "y")})
    options = dict(k=3, metrics=["ndcg", "bpref", "rbp"], ties="trec", min_grade=2,
                   judged_only=True, rbp_p=0.7, max_grade=3, n_resamples=200, seed=4)
    sliced = rm.compare(a, b, truth, by="group", users=users, **options)
    for group in ("x", "y"):
        members = users.user[users.group == group]
        alone = rm.compare(*(f[f.user.isin(members)] for f in (a, b, truth)),
                           correction="none", **options)
        got = sliced[sliced.group == group]
        for column in ("value_a", "value_b", "difference", "p_randomization", "ci_low", "ci_high"):
            np.testing.assert_allclose(got[column], alone[column], rtol=1e-12, err_msg=column)
    with pytest.raises(ValueError, match=r"compare\(by=...\) with rbp needs max_grade="):
        rm.compare(a, b, truth, by="group", users=users, metrics=["rbp"])


def test_new_measures_get_bootstrap_intervals_and_slices_like_the_others():
    rng = np.random.default_rng(7)
    n = 60
    pred = pd.DataFrame({"user": np.repeat(np.arange(n), 5), "item": np.tile(list("abcde"), n),
                         "score": rng.integers(0, 3, 5 * n).astype(float),
                         "label": rng.choice([0, 0, 1, 2], 5 * n)})
    metrics = ["mrr@k", "r_precision", "bpref", "rbp", "err"]
    table = rm.evaluate(pred, k=3, metrics=metrics, ties="trec", ci=0.9, n_resamples=200)
    assert table[["ci_low", "ci_high"]].notna().all().all()
    assert ((table.ci_low <= table.value) & (table.value <= table.ci_high)).all()
    users = pd.DataFrame({"user": np.arange(n), "half": np.where(np.arange(n) < 30, "x", "y")})
    sliced = rm.evaluate(pred, k=3, metrics=metrics, ties="trec", by="half", users=users,
                         max_grade=2, min_slice_size=1)
    alone = rm.evaluate(pred[pred.user < 30], k=3, metrics=metrics, ties="trec", max_grade=2)
    mine = sliced[sliced["half"] == "x"]
    assert mine["metric"].tolist() == alone["metric"].tolist()
    np.testing.assert_allclose(mine["value"].to_numpy(), alone["value"].to_numpy(), atol=1e-12)
