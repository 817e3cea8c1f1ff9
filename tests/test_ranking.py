"""Per-list ranking metrics against literal references, scikit-learn and trec_eval."""
import math

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, strategies as st
from sklearn.metrics import ndcg_score

import recmetrics as rm

# --------------------------------------------------------------------------- literal references


def precision_literal(ranked, relevant, k):
    return sum(1 for item in ranked[:k] if item in relevant) / k


def recall_literal(ranked, relevant, k):
    return sum(1 for item in ranked[:k] if item in relevant) / len(relevant)


def ap_literal(ranked, relevant, k, denominator):
    """AP as a loop: P@i summed at each hit, then divided by the chosen denominator."""
    hits, total = 0, 0.0
    cut = ranked if k is None else ranked[:k]
    for i, item in enumerate(cut, start=1):
        if item in relevant:
            hits += 1
            total += hits / i
    d = {"relevant": len(relevant), "hits": hits,
         "min_k": len(relevant) if k is None else min(k, len(relevant))}[denominator]
    return total / d if total else 0.0


def dcg_literal(grades, gain):
    g = (lambda r: 2 ** r - 1) if gain == "exponential" else (lambda r: r)
    return sum(g(r) / math.log2(i + 1) for i, r in enumerate(grades, start=1))


def ndcg_literal(ranked, grades, k, gain, ideal):
    cut = ranked[:k]
    actual = dcg_literal([grades.get(i, 0) for i in cut], gain)
    if ideal == "truth":
        best = sorted(grades.values(), reverse=True)[:k]
    elif ideal == "list":
        best = sorted((grades.get(i, 0) for i in cut), reverse=True)
    else:
        best = [max(grades.values())] * k
    return actual / dcg_literal(best, gain)


@st.composite
def ranking_case(draw):
    """A ranking of distinct items and a relevance judgement with at least one relevant item."""
    catalogue = list(range(30))
    n = draw(st.integers(1, 20))
    ranked = draw(st.permutations(catalogue))[:n]
    relevant = draw(st.sets(st.sampled_from(catalogue), min_size=1, max_size=12))
    k = draw(st.integers(1, 25))
    return ranked, relevant, k


@st.composite
def graded_case(draw):
    ranked, relevant, k = draw(ranking_case())
    grades = {item: draw(st.integers(1, 4)) for item in relevant}
    for item in draw(st.sets(st.sampled_from(range(30)), max_size=5)):
        grades.setdefault(item, 0)  # judged but not relevant
    return ranked, grades, k


@given(ranking_case())
def test_precision_recall_hit_rate_match_literal_loops(case):
    ranked, relevant, k = case
    assert rm.precision_at_k(ranked, relevant, k=k) == pytest.approx(precision_literal(ranked, relevant, k))
    assert rm.recall_at_k(ranked, relevant, k=k) == pytest.approx(recall_literal(ranked, relevant, k))
    assert rm.hit_rate_at_k(ranked, relevant, k=k) == float(any(i in relevant for i in ranked[:k]))


@given(ranking_case(), st.sampled_from(["relevant", "min_k", "hits"]), st.booleans())
def test_average_precision_matches_a_literal_loop(case, denominator, use_k):
    ranked, relevant, k = case
    k = k if use_k else None
    assert rm.average_precision(ranked, relevant, k=k, denominator=denominator) == pytest.approx(
        ap_literal(ranked, relevant, k, denominator))


@given(ranking_case())
def test_reciprocal_rank_matches_a_literal_loop(case):
    ranked, relevant, k = case
    first = next((i for i, item in enumerate(ranked[:k], start=1) if item in relevant), None)
    assert rm.reciprocal_rank(ranked, relevant, k=k) == (1 / first if first else 0.0)


@given(graded_case(), st.sampled_from(["exponential", "linear"]), st.sampled_from(["truth", "list", "full"]))
def test_ndcg_matches_a_literal_loop_under_every_convention(case, gain, ideal):
    ranked, grades, k = case
    expected_ideal = ndcg_literal(ranked, grades, k, gain, ideal) if ideal != "list" or any(
        grades.get(i, 0) for i in ranked[:k]) else None
    if expected_ideal is None:  # the list holds nothing relevant: its own ideal is 0
        assert rm.ndcg(ranked, grades, k=k, gain=gain, ideal=ideal) == 0.0
        return
    assert rm.ndcg(ranked, grades, k=k, gain=gain, ideal=ideal) == pytest.approx(expected_ideal)


@given(graded_case())
def test_ndcg_properties(case):
    ranked, grades, k = case
    for gain in ("exponential", "linear"):
        value = rm.ndcg(ranked, grades, k=k, gain=gain)
        assert 0.0 <= value <= 1.0 + 1e-12
        # ideal="list" never lies below the standard, "full" never above it
        assert rm.ndcg(ranked, grades, k=k, gain=gain, ideal="full") <= value + 1e-12
        if value > 0:
            assert rm.ndcg(ranked, grades, k=k, gain=gain, ideal="list") >= value - 1e-12
    perfect = sorted(grades, key=lambda i: -grades[i])
    assert rm.ndcg(perfect, grades, k=k) == pytest.approx(1.0)


@given(ranking_case())
def test_perfect_and_hopeless_rankings(case):
    _, relevant, k = case
    perfect = sorted(relevant) + [i for i in range(100, 110)]
    assert rm.average_precision(perfect, relevant) == 1.0
    assert rm.reciprocal_rank(perfect, relevant) == 1.0
    assert rm.recall_at_k(perfect, relevant, k=len(relevant)) == 1.0
    hopeless = list(range(100, 120))
    for metric in (rm.average_precision, rm.reciprocal_rank, rm.ndcg):
        assert metric(hopeless, relevant) == 0.0
    assert rm.hit_rate_at_k(hopeless, relevant, k=k) == 0.0


# --------------------------------------------------------------------------- peers


@given(st.lists(st.integers(0, 3), min_size=2, max_size=15), st.integers(1, 15), st.randoms(use_true_random=False))
def test_ndcg_linear_gain_matches_sklearn(grades, k, rnd):
    if not any(grades):
        return
    items = list(range(len(grades)))
    scores = list(range(len(grades), 0, -1))  # distinct scores, item 0 ranked first
    rnd.shuffle(items)  # shuffled ranking: item i has grade grades[i]
    relevance = dict(enumerate(grades))
    ranked = items
    sk_scores = np.empty(len(grades))
    sk_scores[ranked] = scores
    expected = ndcg_score([grades], [sk_scores], k=k)
    assert rm.ndcg(ranked, relevance, k=k, gain="linear") == pytest.approx(expected, abs=1e-12)


def test_ranking_metrics_match_trec_eval():
    rng = np.random.default_rng(11)
    qrels, run, cases = {}, {}, {}
    for q in range(40):
        n_items = 30
        relevant = set(rng.choice(n_items, size=rng.integers(1, 8), replace=False).tolist())
        scores = rng.permutation(n_items).astype(float)  # distinct scores
        ranked = [int(i) for i in np.argsort(-scores)]
        qid = f"q{q}"
        qrels[qid] = {f"d{i}": 1 for i in relevant}
        run[qid] = {f"d{i}": float(scores[i]) for i in range(n_items)}
        cases[qid] = (ranked, relevant)
    measures = {"P_5", "P_10", "recall_10", "map_cut_10", "map", "recip_rank", "ndcg_cut_10", "ndcg"}
    result = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for qid, (ranked, relevant) in cases.items():
        r = result[qid]
        assert rm.precision_at_k(ranked, relevant, k=5) == pytest.approx(r["P_5"])
        assert rm.precision_at_k(ranked, relevant, k=10) == pytest.approx(r["P_10"])
        assert rm.recall_at_k(ranked, relevant, k=10) == pytest.approx(r["recall_10"])
        assert rm.average_precision(ranked, relevant, k=10) == pytest.approx(r["map_cut_10"])
        assert rm.average_precision(ranked, relevant) == pytest.approx(r["map"])
        assert rm.reciprocal_rank(ranked, relevant) == pytest.approx(r["recip_rank"])
        assert rm.ndcg(ranked, relevant, k=10, gain="linear") == pytest.approx(r["ndcg_cut_10"])
        assert rm.ndcg(ranked, relevant, gain="linear") == pytest.approx(r["ndcg"])


# --------------------------------------------------------------------------- source documents


def test_source_000_graded_list_holds_with_linear_gain_only():
    grades = [3, 1, 2, 3, 2]
    assert rm.cg(grades) == 11
    assert math.floor(rm.dcg(grades, gain="linear") * 100) / 100 == 6.69  # the document truncates 6.6967
    assert round(rm.dcg(sorted(grades, reverse=True), gain="linear"), 2) == 7.14
    relevance = {f"d{i}": g for i, g in enumerate(grades)}
    ranked = list(relevance)
    assert round(rm.ndcg(ranked, relevance, gain="linear"), 2) == 0.94
    # the formula printed beside the example is exponential, which gives 0.912
    assert round(rm.ndcg(ranked, relevance, gain="exponential"), 3) == 0.912
    assert round(rm.dcg(grades), 3) == 13.306


def test_source_001_top5_example_needs_ideal_full():
    # Hits at positions 2 and 3 (as the document counts them), two relevant items in all.
    ranked, relevant = ["a", "b", "c", "d"], {"b", "c"}
    assert round(rm.dcg([0, 1, 1, 0, 0], gain="exponential"), 2) == 1.13
    assert round(rm.dcg([1] * 5), 3) == 2.948
    assert round(rm.ndcg(ranked, relevant, k=5, ideal="full"), 4) == 0.3836
    assert round(1.13 / 2.948, 3) == 0.383  # the document divides rounded numbers
    assert round(rm.ndcg(ranked, relevant, k=5), 3) == 0.693  # the standard IDCG
    # and the document's actual lists share no item at all
    assert rm.ndcg([3, 46, 9, 1], {8, 64}, k=5) == 0.0


def test_source_001_three_movies_mrr_is_one_third():
    assert rm.mean_reciprocal_rank([["movie1", "movie2", "movie3"]], [{"movie3"}]) == 1 / 3


def test_ap_denominators_on_one_example():
    ranked, relevant = ["a", "x", "b", "y", "z"], {"a", "b", "c", "d", "e", "f"}
    # hits at 1 and 3: P@1 = 1, P@3 = 2/3; sum = 5/3
    assert rm.average_precision(ranked, relevant, k=5) == pytest.approx(5 / 3 / 6)
    assert rm.average_precision(ranked, relevant, k=5, denominator="min_k") == pytest.approx(5 / 3 / 5)
    assert rm.average_precision(ranked, relevant, k=5, denominator="hits") == pytest.approx(5 / 3 / 2)


def test_precision_at_k_counts_missing_positions_as_misses():
    assert rm.precision_at_k(["a", "b"], {"a", "b"}, k=5) == 0.4


def test_cg_and_dcg_cut_off():
    assert rm.cg([3, 1, 2], k=2) == 4
    assert rm.dcg([1, 1, 1], k=1) == 1.0
    assert rm.dcg([]) == 0.0 and rm.cg([]) == 0.0


# --------------------------------------------------------------------------- issue 23: more measures


def r_precision_literal(ranked, relevant):
    r = len(relevant)
    return sum(1 for item in ranked[:r] if item in relevant) / r


def bpref_literal(ranked, relevant, nonrelevant):
    """trec_eval's m_bpref.c read as a loop: each relevant item, the judged non-relevant above."""
    r, n = len(relevant), len(nonrelevant)
    total, above = 0.0, 0
    for item in ranked:
        if item in nonrelevant:
            above += 1
        elif item in relevant:
            total += 1.0 if above == 0 else 1.0 - min(above, r) / min(n, r)
    return total / r


def rbp_literal(ranked, grades, p, judged=None):
    value = sum((1 - p) * grades.get(item, 0) * p ** (i - 1) for i, item in enumerate(ranked, 1))
    residual = p ** len(ranked)
    if judged is not None:
        seen = set(judged) | set(grades)
        residual += sum((1 - p) * p ** (i - 1) for i, item in enumerate(ranked, 1)
                        if item not in seen)
    return value, residual


def err_literal(ranked, grades, k, g_max):
    """Chapelle et al. (2009), Algorithm 2: the cascade, one position at a time."""
    p, total = 1.0, 0.0
    for r, item in enumerate(ranked[:k], 1):
        stop = (2 ** grades.get(item, 0) - 1) / 2 ** g_max
        total += p * stop / r
        p *= 1 - stop
    return total


@st.composite
def judged_case(draw):
    """A ranking, relevant items, judged non-relevant items (disjoint) and some unjudged ones."""
    ranked, relevant, k = draw(ranking_case())
    others = [i for i in range(30) if i not in relevant]
    nonrelevant = draw(st.sets(st.sampled_from(others), max_size=15)) if others else set()
    return ranked, relevant, nonrelevant, k


@given(ranking_case())
def test_r_precision_matches_a_literal_loop_and_is_precision_and_recall_at_r(case):
    ranked, relevant, _ = case
    value = rm.r_precision(ranked, relevant)
    assert value == pytest.approx(r_precision_literal(ranked, relevant))
    assert value == pytest.approx(rm.precision_at_k(ranked, relevant, k=len(relevant)))
    assert value == pytest.approx(rm.recall_at_k(ranked, relevant, k=len(relevant)))


@given(judged_case())
def test_bpref_matches_trec_evals_loop_either_way_of_giving_judgements(case):
    ranked, relevant, nonrelevant, _ = case
    want = bpref_literal(ranked, relevant, nonrelevant)
    assert rm.bpref(ranked, relevant, nonrelevant) == pytest.approx(want)
    grades = {**{i: 0 for i in nonrelevant}, **{i: 1 for i in relevant}}
    assert rm.bpref(ranked, grades) == pytest.approx(want)
    assert 0.0 <= rm.bpref(ranked, relevant, nonrelevant) <= 1.0


@given(judged_case())
def test_bpref_ignores_unjudged_items_wherever_they_are(case):
    ranked, relevant, nonrelevant, _ = case
    judged_only = [i for i in ranked if i in relevant or i in nonrelevant]
    padded = [100 + i for i in range(5)] + judged_only[:3] + [200] + judged_only[3:]
    assert rm.bpref(padded, relevant, nonrelevant) == pytest.approx(
        rm.bpref(judged_only, relevant, nonrelevant))


def test_bpref_uses_trec_evals_min_denominator_on_a_hand_example():
    # R = 2, N = 5: the denominator is min(N, R) = 2 and n_r is capped at R
    ranked = ["n1", "a", "n2", "n3", "b"]
    relevant, nonrelevant = {"a", "b"}, {"n1", "n2", "n3", "n4", "n5"}
    # a: 1 - 1/2; b: 1 - min(3, 2)/2 = 0
    assert rm.bpref(ranked, relevant, nonrelevant) == 0.25
    # nothing judged non-relevant: every retrieved relevant item counts 1
    assert rm.bpref(["x", "a"], {"a", "b"}) == 0.5


def test_bpref_refuses_an_item_judged_both_ways():
    with pytest.raises(ValueError, match=r"item 'a' is both relevant .* and judged non-relevant"):
        rm.bpref(["a"], {"a"}, {"a"})


@given(ranking_case(), st.sampled_from([0.5, 0.8, 0.95]), st.booleans())
def test_rbp_value_and_residual_match_the_formula(case, p, give_judged):
    ranked, relevant, _ = case
    judged = set(range(0, 30, 3)) if give_judged else None
    result = rm.rbp(ranked, relevant, p=p, judged=judged)
    value, residual = rbp_literal(ranked, dict.fromkeys(relevant, 1), p, judged)
    assert result.value == pytest.approx(value)
    assert result.residual == pytest.approx(residual)
    assert 0.0 <= result.value <= result.value + result.residual <= 1.0 + 1e-12


def test_rbp_graded_relevance_and_its_bounds():
    result = rm.rbp(["a", "b"], {"a": 0.5, "b": 1.0}, p=0.5)
    assert (result.value, result.residual) == (0.5 * (0.5 + 0.5), 0.25)
    with pytest.raises(ValueError, match=r"RBP takes relevance in \[0, 1\]"):
        rm.rbp(["a"], {"a": 2})
    with pytest.raises(ValueError, match=r"p=1 must be a number strictly between 0 and 1"):
        rm.rbp(["a"], {"a"}, p=1)


@given(graded_case(), st.booleans())
def test_err_matches_the_cascade_loop(case, use_k):
    ranked, grades, k = case
    k = k if use_k else None
    top = max(grades.values())
    for g_max in (top, top + 2):
        want = err_literal(ranked, grades, k or len(ranked), g_max)
        assert rm.err(ranked, grades, k=k, max_grade=g_max) == pytest.approx(want, abs=1e-15)
    assert rm.err(ranked, grades, k=k) == pytest.approx(
        err_literal(ranked, grades, k or len(ranked), top), abs=1e-15)


def test_err_binary_relevance_and_grade_checks():
    # one relevant item at rank 3 with g_max = 1: R = 1/2, ERR = 1/6
    assert rm.err(["x", "y", "a"], {"a"}) == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match=r"a judged grade \(3\) is above max_grade=2"):
        rm.err(["a"], {"a": 3}, max_grade=2)
    with pytest.raises(ValueError, match=r"max_grade=2000 is too large"):
        rm.err(["a"], {"a": 3}, max_grade=2000)


def test_err_kernel_keeps_its_precision_after_many_lists():
    """The product over earlier items is a sum of logs reset after each list: the last of
    20,000 lists gets the same value as alone."""
    lists = [["a", "b", "c", "d"]] * 20_000
    grades = [{"a": 4, "b": 3, "c": 4, "d": 1}] * 20_000
    alone = rm.err(lists[0], grades[0], max_grade=4)
    assert alone == pytest.approx(err_literal(lists[0], grades[0], 4, 4), abs=1e-15)
    from recmetrics.ranking import _judged_lists
    data = _judged_lists(lists, grades, many=True)
    values = data.lists.err(None, np.full(20_000, 4.0))
    assert np.abs(values - alone).max() <= 1e-15


@given(ranking_case())
def test_reciprocal_rank_cut_off_and_mean(case):
    ranked, relevant, k = case
    first = next((i for i, item in enumerate(ranked, start=1) if item in relevant), None)
    assert rm.reciprocal_rank(ranked, relevant) == (1 / first if first else 0.0)
    cut = 1 / first if first and first <= k else 0.0
    assert rm.reciprocal_rank(ranked, relevant, k=k) == cut
    assert rm.mean_reciprocal_rank([ranked, ranked], [relevant, relevant], k=k) == cut


@given(ranking_case())
def test_precision_and_recall_denominators(case):
    ranked, relevant, k = case
    hits = sum(1 for item in ranked[:k] if item in relevant)
    assert rm.precision_at_k(ranked, relevant, k=k, denominator="k") == pytest.approx(hits / k)
    assert rm.precision_at_k(ranked, relevant, k=k, denominator="min_k") == pytest.approx(
        hits / min(k, len(relevant)))
    assert rm.recall_at_k(ranked, relevant, k=k, denominator="min_k") == pytest.approx(
        hits / min(k, len(relevant)))
    assert rm.recall_at_k(ranked, relevant, k=k) == pytest.approx(hits / len(relevant))


def test_precision_at_k_follows_no_relevant_like_the_other_list_metrics():
    with pytest.warns(rm.RecmetricsWarning, match="precision@k is undefined: no relevant item"):
        assert math.isnan(rm.precision_at_k(["a", "b"], set(), k=2))
    assert rm.precision_at_k(["a", "b"], set(), k=2, no_relevant="zero") == 0.0
    with pytest.raises(ValueError, match="no relevant item"):
        rm.precision_at_k(["a", "b"], set(), k=2, no_relevant="error")
    with pytest.raises(ValueError, match=r"denominator='relevant' is not a known option; use one of 'k', 'min_k'"):
        rm.precision_at_k(["a"], {"a"}, k=1, denominator="relevant")


ONE_LIST = {
    rm.precision_at_k: dict(k=3), rm.recall_at_k: dict(k=3, denominator="min_k"),
    rm.hit_rate_at_k: dict(k=2), rm.average_precision: dict(k=4, denominator="min_k"),
    rm.reciprocal_rank: dict(k=3), rm.ndcg: dict(k=4, gain="linear"), rm.r_precision: {},
    rm.err: dict(max_grade=4),
}


@given(st.lists(graded_case(), min_size=1, max_size=6))
def test_mean_over_lists_is_the_mean_of_the_single_list_values(cases):
    ranked_lists = [c[0] for c in cases]
    grade_lists = [c[1] for c in cases]
    for metric, options in ONE_LIST.items():
        singles = [metric(r, g, **options, no_relevant="zero") for r, g in zip(ranked_lists, grade_lists)]
        assert rm.mean_over_lists(metric, ranked_lists, grade_lists, no_relevant="zero",
                                  **options) == pytest.approx(np.mean(singles))
    nonrel = [{i for i, g in grades.items() if g == 0} for grades in grade_lists]
    relevant = [{i for i, g in grades.items() if g > 0} for grades in grade_lists]
    assert rm.mean_over_lists(rm.bpref, ranked_lists, relevant, judged_nonrelevant=nonrel) == \
        pytest.approx(np.mean([bpref_literal(r, s, n) for r, s, n in zip(ranked_lists, relevant, nonrel)]))
    result = rm.mean_over_lists("rbp", ranked_lists, relevant, p=0.7)
    literal = [rbp_literal(r, dict.fromkeys(s, 1), 0.7) for r, s in zip(ranked_lists, relevant)]
    assert result.value == pytest.approx(np.mean([v for v, _ in literal]))
    assert result.residual == pytest.approx(np.mean([res for _, res in literal]))


def test_mean_over_lists_skips_lists_without_relevant_items_and_checks_its_options():
    with pytest.warns(rm.RecmetricsWarning, match="1 of 2 lists have no relevant item"):
        assert rm.mean_over_lists(rm.r_precision, [["a"], ["b"]], [{"a"}, set()]) == 1.0
    with pytest.raises(ValueError, match=r"gain= is not an option of r_precision"):
        rm.mean_over_lists(rm.r_precision, [["a"]], [{"a"}], gain="linear")
    with pytest.raises(ValueError, match=r"precision_at_k needs k="):
        rm.mean_over_lists(rm.precision_at_k, [["a"]], [{"a"}])
    with pytest.raises(ValueError, match=r"metric=<built-in function len> has no mean here"):
        rm.mean_over_lists(len, [["a"]], [{"a"}])
    with pytest.raises(ValueError, match=r"one ranking per user is needed: ranked_lists has 1, "
                                         r"judged_nonrelevant has 2"):
        rm.mean_over_lists(rm.bpref, [["a"]], [{"a"}], judged_nonrelevant=[set(), set()])


# --------------------------------------------------------------------------- kernels under ties


def _tied_layout(grades, group_sizes):
    from recmetrics import _kernels
    lists = np.zeros(len(grades), dtype=np.intp)
    new_group = np.zeros(len(grades), dtype=bool)
    new_group[np.cumsum([0] + list(group_sizes[:-1]))] = True
    return _kernels.Layout(lists, np.asarray(grades, dtype=np.float64), 1, new_group)


@given(st.lists(st.integers(0, 1), min_size=1, max_size=7).flatmap(
    lambda g: st.tuples(st.just(g), st.lists(st.integers(1, 3), min_size=1, max_size=7))),
    st.sampled_from([0.5, 0.8]))
def test_r_precision_and_rbp_kernels_give_the_mean_over_the_orders_of_tied_items(case, p):
    """Linear metrics under ties: the kernel value equals the average over every order
    of each tie group (written out with itertools.permutations)."""
    import itertools
    from recmetrics import _kernels
    grades, sizes = case
    total, sizes_used = 0, []
    for s in sizes:
        if total >= len(grades):
            break
        s = min(s, len(grades) - total)
        sizes_used.append(s)
        total += s
    if total < len(grades):
        sizes_used.append(len(grades) - total)
    layout = _tied_layout(grades, sizes_used)
    n_rel = np.array([max(sum(grades), 1)])
    got_rp = _kernels.r_precision(layout, n_rel)[0]
    got_rbp = _kernels.rbp(layout, p)[0]
    bounds = np.cumsum([0] + sizes_used)
    orders = itertools.product(*[itertools.permutations(grades[a:b]) for a, b in zip(bounds, bounds[1:])])
    rp, rb, count = 0.0, 0.0, 0
    for order in orders:
        row = [g for group in order for g in group]
        rp += sum(row[:n_rel[0]]) / n_rel[0]
        rb += sum((1 - p) * g * p ** i for i, g in enumerate(row))
        count += 1
    assert got_rp == pytest.approx(rp / count)
    assert got_rbp == pytest.approx(rb / count)


@given(judged_case(), st.sampled_from([0.5, 0.8]))
def test_new_measures_on_perfect_and_hopeless_rankings(case, p):
    _, relevant, nonrelevant, _ = case
    perfect = sorted(relevant) + sorted(nonrelevant)
    assert rm.r_precision(perfect, relevant) == 1.0
    assert rm.bpref(perfect, relevant, nonrelevant) == 1.0
    assert rm.err(perfect, relevant) == pytest.approx(err_literal(perfect, dict.fromkeys(relevant, 1),
                                                                  len(perfect), 1))
    assert rm.rbp(perfect, relevant, p=p).value == pytest.approx(1 - p ** len(relevant))
    hopeless = sorted(nonrelevant) + list(range(100, 110))
    for metric in (rm.r_precision, rm.err):
        assert metric(hopeless, relevant) == 0.0
    assert rm.bpref(hopeless, relevant, nonrelevant) == 0.0
    assert rm.rbp(hopeless, relevant, p=p).value == 0.0
    # a better ranking never scores lower: moving a relevant item up by one place
    if nonrelevant:
        worse = sorted(nonrelevant)[:1] + sorted(relevant) + sorted(nonrelevant)[1:]
        for metric in (rm.r_precision, rm.err, rm.reciprocal_rank):
            assert metric(perfect, relevant) >= metric(worse, relevant)
        assert rm.bpref(perfect, relevant, nonrelevant) >= rm.bpref(worse, relevant, nonrelevant)
