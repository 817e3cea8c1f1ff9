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
