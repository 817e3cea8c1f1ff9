"""recmetrics.sampling against literal references, Monte Carlo draws and the paper's claims."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import recmetrics as rm
from recmetrics import sampling

METRIC_CASES = [("auc", None), ("hit_rate", 1), ("hit_rate", 10), ("precision", 5),
                ("map", None), ("map", 10), ("ndcg", None), ("ndcg", 10)]

# --------------------------------------------------------------------------- literal references


def pmf_literal(R, n, m):
    """P(r | R) for r = 1..m+1 as exact fractions: C(R-1, r-1) C(n-R, m-r+1) / C(n-1, m)."""
    total = math.comb(n - 1, m)
    return [Fraction(math.comb(R - 1, j) * math.comb(n - R, m - j), total) for j in range(m + 1)]


def binomial_literal(R, n, m):
    p = Fraction(R - 1, n - 1)
    return [math.comb(m, j) * p ** j * (1 - p) ** (m - j) for j in range(m + 1)]


def metric_literal(R, L, metric, k):
    """One relevant item at rank R in a list of L items, written out case by case."""
    if metric == "auc":
        return (L - R) / (L - 1)                   # negatives below / all negatives
    if k is not None and R > k:
        return 0.0
    return {"hit_rate": 1.0, "precision": 1 / k if k else None, "map": 1 / R,
            "ndcg": 1 / math.log2(R + 1)}[metric]


def draw_negatives_literal(rng, R, n, m):
    """Sample m of the n - 1 other items by id, without replacement, and rank the held-out one.

    Items are numbered by exact position; the held-out item is at position R, so
    the other items above it are positions 1..R-1.
    """
    others = np.delete(np.arange(1, n + 1), R - 1)
    chosen = rng.choice(others, size=m, replace=False)
    return 1 + int(np.count_nonzero(chosen < R))


def bv_literal(n, m, metric, k, gamma, p):
    """The BV normal equations built from exact fractions, solved densely."""
    A = np.array([[float(x) for x in pmf_literal(R, n, m)] for R in range(1, n + 1)])
    b = np.array([metric_literal(R, n, metric, k) for R in range(1, n + 1)])
    p = np.asarray(p, dtype=float) / np.sum(p)
    lhs = (1 - gamma) * A.T @ (p[:, None] * A) + gamma * np.diag(A.T @ p)
    return np.linalg.solve(lhs, A.T @ (p * b)), A, b, p


# --------------------------------------------------------------------------- the rank distribution


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1),
                                                      st.integers(1, n))))
def test_hypergeometric_pmf_matches_exact_fractions(case):
    n, m, R = case
    got = sampling.sampled_rank_distribution(R, n, m)
    want = np.array([float(x) for x in pmf_literal(R, n, m)])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert got.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1),
                                                      st.integers(1, n))))
def test_binomial_pmf_matches_exact_fractions(case):
    n, m, R = case
    got = sampling.sampled_rank_distribution(R, n, m, distribution="binomial")
    want = np.array([float(x) for x in binomial_literal(R, n, m)])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


def test_pmf_matches_scipy_for_a_realistic_catalogue():
    ranks = np.array([1, 2, 40, 100, 743, 5342, 9266, 10_000])
    got = sampling.sampled_rank_distribution(ranks, 10_000, 99)
    want = stats.hypergeom.pmf(np.arange(100)[None, :], 9_999, ranks[:, None] - 1, 99)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-300)
    binom = stats.binom.pmf(np.arange(100)[None, :], 99, (ranks[:, None] - 1) / 9_999)
    np.testing.assert_allclose(sampling.sampled_rank_distribution(ranks, 10_000, 99, distribution="binomial"),
                               binom, rtol=1e-8, atol=1e-300)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5_000).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, min(n - 1, 300)),
                                                         st.integers(1, n))))
def test_both_laws_have_mean_m_times_the_share_above(case):
    n, m, R = case
    r = np.arange(1, m + 2)
    for method in ("hypergeometric", "binomial"):
        p = sampling.sampled_rank_distribution(R, n, m, distribution=method)
        assert p.sum() == pytest.approx(1.0, abs=1e-9)
        assert p @ (r - 1) == pytest.approx(m * (R - 1) / (n - 1), rel=1e-9, abs=1e-9)


def test_hypergeometric_and_binomial_agree_for_large_catalogues():
    ranks = np.array([1, 5, 50, 500, 5_000, 50_000, 500_000, 999_999])
    hyper = sampling.sampled_rank_distribution(ranks, 1_000_000, 50)
    binom = sampling.sampled_rank_distribution(ranks, 1_000_000, 50, distribution="binomial")
    total_variation = 0.5 * np.abs(hyper - binom).sum(axis=1)
    assert total_variation.max() < 1e-4
    for metric, k in METRIC_CASES:
        a = sampling.expected_sampled_metric(ranks, 1_000_000, 50, metric, k=k)
        b = sampling.expected_sampled_metric(ranks, 1_000_000, 50, metric, k=k, distribution="binomial")
        assert a == pytest.approx(b, abs=1e-4)
    # ... and not for a small one: with n = 20 and m = 15 the laws differ visibly
    small = 0.5 * np.abs(sampling.sampled_rank_distribution(10, 20, 15)
                         - sampling.sampled_rank_distribution(10, 20, 15, distribution="binomial")).sum()
    assert small > 0.2


# --------------------------------------------------------------------------- drawing


def test_sample_ranks_has_the_law_of_drawing_item_ids_without_replacement():
    n, m, users = 60, 12, 4_000
    rng = np.random.default_rng(11)
    for R in (1, 2, 17, 45, 60):
        literal = np.array([draw_negatives_literal(rng, R, n, m) for _ in range(users)])
        fast = sampling.sample_ranks(np.full(users, R), n, m, seed=R)
        assert literal.min() >= 1 and fast.max() <= m + 1
        if R == 1:
            assert (literal == 1).all() and (fast == 1).all()
            continue
        if R == n:
            assert (literal == m + 1).all() and (fast == m + 1).all()
            continue
        table = np.array([np.bincount(literal, minlength=m + 2), np.bincount(fast, minlength=m + 2)])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table).pvalue > 1e-3


def test_expected_sampled_metric_matches_monte_carlo():
    n, m = 2_000, 49
    ranks = np.array([1, 3, 8, 30, 90, 250, 700, 1_500, 2_000])
    repeats = 4_000
    sampled = sampling.sample_ranks(np.tile(ranks, repeats), n, m, seed=99).reshape(repeats, -1)
    for metric, k in METRIC_CASES:
        per_draw = np.vectorize(lambda r, metric=metric, k=k: metric_literal(int(r), m + 1, metric, k))(sampled)
        monte_carlo = per_draw.mean(axis=1)                     # one mean per repeat
        expected = sampling.expected_sampled_metric(ranks, n, m, metric, k=k)
        se = monte_carlo.std(ddof=1) / math.sqrt(repeats)
        assert abs(monte_carlo.mean() - expected) < 4 * se + 1e-12, (metric, k)


def test_expected_sampled_metric_matches_exact_fractions():
    n, m = 200, 19
    ranks = [1, 2, 7, 20, 21, 150, 200]
    for metric, k in METRIC_CASES:
        want = np.mean([sum(float(p) * metric_literal(j + 1, m + 1, metric, k)
                            for j, p in enumerate(pmf_literal(R, n, m))) for R in ranks])
        assert sampling.expected_sampled_metric(ranks, n, m, metric, k=k) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_seed_repeats_a_draw_and_generators_are_accepted():
    ranks = np.arange(1, 1_001)
    a = sampling.sample_ranks(ranks, 1_000, 99, seed=3)
    assert np.array_equal(a, sampling.sample_ranks(ranks, 1_000, 99, seed=3))
    assert not np.array_equal(a, sampling.sample_ranks(ranks, 1_000, 99, seed=4))
    b = sampling.sample_ranks(ranks, 1_000, 99, seed=np.random.default_rng(3))
    assert np.array_equal(a, b)
    assert a.dtype == np.int64 and a.shape == ranks.shape


def test_sampling_every_other_item_gives_back_the_exact_rank():
    ranks = np.array([1, 2, 3, 50, 99, 100])
    assert np.array_equal(sampling.sample_ranks(ranks, 100, 99, seed=0), ranks)
    np.testing.assert_allclose(sampling.sampled_rank_distribution(ranks, 100, 99), np.eye(100)[ranks - 1])
    for metric, k in METRIC_CASES:
        assert sampling.expected_sampled_metric(ranks, 100, 99, metric, k=k) == \
            pytest.approx(sampling.exact_metric(ranks, 100, metric, k=k), abs=1e-12)


# --------------------------------------------------------------------------- ranks from scores


def rank_literal(row, held, ties):
    target = row[held]
    above = sum(1 for i, s in enumerate(row) if i != held and (s > target or (ties == "pessimistic" and s == target)))
    return above + 1


def test_rank_of_held_out_matches_a_literal_count_with_ties():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, size=(300, 25)).astype(float)      # many ties
    held = rng.integers(0, 25, size=300)
    for ties in ("pessimistic", "optimistic"):
        want = [rank_literal(row.tolist(), h, ties) for row, h in zip(scores, held)]
        assert sampling.rank_of_held_out(scores, held, ties=ties).tolist() == want


def test_sampling_scores_item_by_item_has_the_law_of_sample_ranks():
    """Draw negatives from a score matrix literally; compare with ranks -> sample_ranks."""
    rng = np.random.default_rng(8)
    n, m, users = 40, 9, 3_000
    scores = np.round(rng.normal(size=(users, n)), 1)             # some ties
    held = rng.integers(0, n, size=users)
    literal = []
    for row, h in zip(scores, held):
        others = np.delete(np.arange(n), h)
        chosen = rng.choice(others, size=m, replace=False)
        literal.append(1 + int(np.count_nonzero(row[chosen] >= row[h])))   # pessimistic ties
    exact = sampling.rank_of_held_out(scores, held)
    fast = sampling.sample_ranks(exact, n, m, seed=1)
    table = np.array([np.bincount(literal, minlength=m + 2), np.bincount(fast, minlength=m + 2)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    assert np.mean(literal) == pytest.approx(
        1 + m * np.mean((exact - 1) / (n - 1)), abs=4 * np.std(literal) / math.sqrt(users))


# --------------------------------------------------------------------------- the metrics


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
       st.sampled_from(METRIC_CASES))
def test_exact_metric_is_the_ranking_metric_of_a_list_with_one_relevant_item(case, metric_case):
    n, R = case
    metric, k = metric_case
    items = list(range(n))
    held = R - 1                                   # the item at position R
    value = sampling.exact_metric([R], n, metric, k=k)
    assert value == pytest.approx(metric_literal(R, n, metric, k), abs=1e-12)
    if metric == "auc":
        labels = np.zeros(n, dtype=int)
        labels[held] = 1
        want = rm.roc_auc(labels, -np.arange(n))  # scores fall with position
    elif metric == "hit_rate":
        want = rm.hit_rate_at_k(items, {held}, k=k)
    elif metric == "precision":
        want = rm.precision_at_k(items, {held}, k=k)
    elif metric == "map":
        want = rm.average_precision(items, {held}, k=k)
    else:
        want = rm.ndcg(items, {held}, k=k)
    assert value == pytest.approx(want, abs=1e-12)


def test_exact_metric_averages_over_users():
    assert sampling.exact_metric([212, 2, 743, 5342, 1548], 10_000, "hit_rate", k=10) == 0.2
    assert sampling.exact_metric([1, 4], 10, "precision", k=5) == pytest.approx(0.2)
    assert isinstance(sampling.exact_metric([1], 2, "auc"), float)


# --------------------------------------------------------------------------- AUC is unbiased


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 100_000).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(1, min(n - 1, 500)),
                        st.lists(st.integers(1, n), min_size=1, max_size=20))),
    st.sampled_from(["hypergeometric", "binomial"]))
def test_sampled_auc_is_unbiased(case, method):
    n, m, ranks = case
    expected = sampling.expected_sampled_metric(ranks, n, m, "auc", distribution=method)
    assert expected == pytest.approx(sampling.exact_metric(ranks, n, "auc"), abs=1e-9)


def test_sampled_auc_is_unbiased_in_a_simulation_and_hit_rate_is_not():
    rng = np.random.default_rng(21)
    n, m = 10_000, 99
    exact = np.ceil(n * rng.random(200_000) ** 3).astype(int)
    sampled = sampling.sample_ranks(exact, n, m, seed=22)
    auc_exact = sampling.exact_metric(exact, n, "auc")
    auc_sampled = sampling.exact_metric(sampled, m + 1, "auc")
    # per-user sampled AUC has variance <= 1/(4m); the mean's standard error is below 1e-4
    assert abs(auc_sampled - auc_exact) < 5e-4
    hr_exact = sampling.exact_metric(exact, n, "hit_rate", k=10)
    hr_sampled = sampling.exact_metric(sampled, m + 1, "hit_rate", k=10)
    assert hr_sampled > 3 * hr_exact


# --------------------------------------------------------------------------- the paper's example

A = [100, 100, 100, 100, 100]
B = [40, 40, 8437, 9266, 4482]
C = [212, 2, 743, 5342, 1548]


def test_sampling_reverses_the_order_of_the_three_models_in_expectation():
    n, m = 10_000, 99
    exact = {name: sampling.exact_metric(R, n, "hit_rate", k=10) for name, R in zip("ABC", (A, B, C))}
    expected = {name: sampling.expected_sampled_metric(R, n, m, "hit_rate", k=10)
                for name, R in zip("ABC", (A, B, C))}
    assert exact == {"A": 0.0, "B": 0.0, "C": 0.2}
    assert expected["A"] > expected["C"] > expected["B"]
    ap_exact = {name: sampling.exact_metric(R, n, "map") for name, R in zip("ABC", (A, B, C))}
    ap_sampled = {name: sampling.expected_sampled_metric(R, n, m, "map")
                  for name, R in zip("ABC", (A, B, C))}
    assert ap_exact["C"] > ap_exact["B"] > ap_exact["A"]
    assert ap_sampled["A"] > ap_sampled["B"] > ap_sampled["C"]          # fully reversed


def test_with_few_samples_every_metric_orders_models_like_auc():
    """Krichene & Rendle: as m shrinks, the sampled metrics collapse to AUC."""
    n = 10_000
    models = [A, B, C, [1, 5000, 5000, 9000, 9000], [300] * 5, [20, 20, 3000, 3000, 6000]]
    auc = [sampling.exact_metric(R, n, "auc") for R in models]
    for metric, k in [("hit_rate", 1), ("map", None), ("ndcg", 10)]:
        values = [sampling.expected_sampled_metric(R, n, 1, metric, k=k) for R in models]
        # with m = 1 (a list of two) every metric is an increasing linear function of AUC
        assert np.argsort(values).tolist() == np.argsort(auc).tolist()
        slope = np.polyfit(auc, values, 1)
        np.testing.assert_allclose(np.polyval(slope, auc), values, atol=1e-12)


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize("metric, k", [("hit_rate", 3), ("map", None), ("ndcg", 4),
                                       ("auc", None), ("precision", 2)])
@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.3, 1.0])
def test_bv_correction_solves_the_paper_normal_equations(metric, k, gamma):
    n, m = 30, 5
    weights = np.random.default_rng(1).random(n) + 0.1
    want, A_, b, p = bv_literal(n, m, metric, k, gamma, weights)
    got = sampling.bv_correction(n, m, metric, k=k, gamma=gamma, rank_weights=weights)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)

    def objective(x):
        mean = A_ @ x
        var = (A_ * x ** 2).sum(axis=1) - mean ** 2
        return float(p @ ((mean - b) ** 2 + gamma * var))
    rng = np.random.default_rng(2)
    for _ in range(20):                                    # no nearby point does better
        assert objective(got) <= objective(got + 1e-3 * rng.normal(size=m + 1)) + 1e-15


def test_bv_with_gamma_one_is_the_posterior_mean_of_the_exact_metric():
    n, m = 50, 6
    weights = np.linspace(2, 0.1, n)
    got = sampling.bv_correction(n, m, "ndcg", k=5, gamma=1.0, rank_weights=weights)
    A_ = np.array([[float(x) for x in pmf_literal(R, n, m)] for R in range(1, n + 1)])
    b = np.array([metric_literal(R, n, "ndcg", 5) for R in range(1, n + 1)])
    posterior = A_ * weights[:, None]
    posterior /= posterior.sum(axis=0)
    np.testing.assert_allclose(got, posterior.T @ b, rtol=1e-9)


def test_uniform_weights_are_the_default_of_bv_correction():
    np.testing.assert_allclose(sampling.bv_correction(300, 20, "hit_rate", k=5),
                               sampling.bv_correction(300, 20, "hit_rate", k=5, rank_weights=np.ones(300)))


def test_the_sampled_rank_prior_spreads_the_sampled_shares_over_exact_ranks():
    n, m = 80, 7
    sampled = np.array([1, 1, 1, 2, 3, 3, 5, 8, 8, 8, 8])
    share = np.bincount(sampled - 1, minlength=m + 1) / sampled.size
    A_ = np.array([[float(x) for x in pmf_literal(R, n, m)] for R in range(1, n + 1)])
    prior = (m + 1) / n * A_ @ share
    assert prior.sum() == pytest.approx(1.0, abs=1e-12)                 # sum_R P(r | R) = n/(m+1)
    table = sampling.bv_correction(n, m, "map", gamma=0.05, rank_weights=prior)
    got = sampling.correct_sampled_metric(sampled, n, m, "map", gamma=0.05)
    assert got == pytest.approx(float(np.mean(table[sampled - 1])), abs=1e-12)
    uniform = sampling.bv_correction(n, m, "map", gamma=0.05)
    assert sampling.correct_sampled_metric(sampled, n, m, "map", gamma=0.05,
                                           rank_prior="uniform") == pytest.approx(np.mean(uniform[sampled - 1]))


def test_rescale_maps_each_sampled_rank_to_its_unbiased_exact_rank():
    n, m = 10_000, 99
    sampled = np.array([1, 2, 3, 100])
    estimate = 1 + (sampled - 1) * (n - 1) / m                          # 1, 102, 203, 10000
    assert estimate.tolist() == [1.0, 102.0, 203.0, 10_000.0]
    assert sampling.correct_sampled_metric(sampled, n, m, "hit_rate", k=10, correction="rescale") == 0.25
    want = np.mean([1 / e for e in estimate])
    assert sampling.correct_sampled_metric(sampled, n, m, "map", correction="rescale") == pytest.approx(want)
    # for AUC the rescaled estimate is the sampled AUC itself
    assert sampling.correct_sampled_metric(sampled, n, m, "auc", correction="rescale") == \
        pytest.approx(sampling.exact_metric(sampled, m + 1, "auc"))


def test_corrections_are_exact_when_every_item_is_sampled():
    n = 40
    ranks = np.array([1, 1, 2, 5, 9, 17, 40])
    for metric, k in METRIC_CASES:
        truth = sampling.exact_metric(ranks, n, metric, k=k)
        for method in ("bv", "rescale"):
            assert sampling.correct_sampled_metric(ranks, n, n - 1, metric, k=k, correction=method) == \
                pytest.approx(truth, abs=1e-9)


def simulated_population(seed, users=20_000, n=10_000):
    """Twelve models: log exact rank ~ Normal(mu, sd), a range of quality and spread."""
    rng = np.random.default_rng(seed)
    models = []
    for mu in (2.5, 3.5, 4.5, 5.5):
        for sd in (0.5, 1.5, 2.5):
            models.append(np.clip(np.ceil(np.exp(rng.normal(mu, sd, users))), 1, n).astype(int))
    return models


@pytest.mark.parametrize("metric, k", [("hit_rate", 10), ("ndcg", 10), ("map", None),
                                       ("precision", 5)])
def test_corrections_reduce_the_error_against_the_exact_metric(metric, k):
    n, m = 10_000, 99
    errors = {"naive": [], "rescale": [], "bv": [], "bv uniform": []}
    exact, corrected, naive = [], [], []
    for i, ranks in enumerate(simulated_population(seed=2020, users=5_000)):
        sampled = sampling.sample_ranks(ranks, n, m, seed=i)
        truth = sampling.exact_metric(ranks, n, metric, k=k)
        estimates = {"naive": sampling.exact_metric(sampled, m + 1, metric, k=k),
                     "rescale": sampling.correct_sampled_metric(sampled, n, m, metric, k=k, correction="rescale"),
                     "bv": sampling.correct_sampled_metric(sampled, n, m, metric, k=k),
                     "bv uniform": sampling.correct_sampled_metric(sampled, n, m, metric, k=k,
                                                                   rank_prior="uniform")}
        for name, value in estimates.items():
            errors[name].append(abs(value - truth))
        exact.append(truth)
        corrected.append(estimates["bv"])
        naive.append(estimates["naive"])
    mean_error = {name: float(np.mean(e)) for name, e in errors.items()}
    assert mean_error["rescale"] < mean_error["naive"]
    assert mean_error["bv"] < mean_error["rescale"] / 3
    assert mean_error["bv uniform"] < mean_error["naive"] / 3
    assert max(errors["bv"]) < min(errors["naive"])          # better for every single model

    def concordance(values):
        pairs = [(i, j) for i in range(len(exact)) for j in range(i + 1, len(exact))]
        return np.mean([np.sign(exact[i] - exact[j]) == np.sign(values[i] - values[j]) for i, j in pairs])
    assert concordance(corrected) > concordance(naive)


# --------------------------------------------------------------------------- bad inputs

BAD_INPUTS = [
    ("n_items too small", lambda: sampling.sample_ranks([1], 1, 1),
     r"n_items=1 must be a whole number >= 2 \(the catalogue holds the held-out item and at least one other\)"),
    ("n_items float", lambda: sampling.expected_sampled_metric([1], 100.0, 9, "auc"),
     r"n_items=100.0 must be a whole number >= 2 .*; pass int\(100.0\)"),
    ("n_negatives zero", lambda: sampling.sample_ranks([1], 10, 0),
     r"n_negatives=0 must be a whole number >= 1 \(at least one sampled negative\)"),
    ("catalogue too large to draw", lambda: sampling.sample_ranks([1], 2 * 10**9, 99),
     r"n_items=2000000000 is above 1,000,000,000, the largest catalogue numpy's hypergeometric"),
    ("too many negatives", lambda: sampling.sampled_rank_distribution(1, 100, 100),
     r"n_negatives=100 is more than the 99 other items \(n_items - 1\); .* pass n_negatives <= 99"),
    ("rank zero", lambda: sampling.sample_ranks([3, 0, 2], 10, 5),
     r"exact_ranks contains 1 value\(s\) outside 1..10 \(first: 0 at index 1\); ranks are 1-based"),
    ("rank beyond catalogue", lambda: sampling.exact_metric([11], 10, "auc"),
     r"exact_ranks contains 1 value\(s\) outside 1..10 \(first: 11 at index 0\).*at most n_items"),
    ("fractional rank", lambda: sampling.expected_sampled_metric([2.5], 10, 5, "ndcg"),
     r"exact_ranks contains 1 value\(s\) that are not whole numbers \(first: 2.5 at index 0\)"),
    ("NaN rank", lambda: sampling.exact_metric([1, float("nan")], 10, "auc"),
     r"exact_ranks contains 1 NaN value\(s\) \(first at index 1\)"),
    ("empty ranks", lambda: sampling.sample_ranks([], 10, 5), r"exact_ranks is empty"),
    ("2-d ranks", lambda: sampling.exact_metric([[1, 2]], 10, "auc"), r"exact_ranks must be one-dimensional"),
    ("sampled rank beyond m + 1", lambda: sampling.correct_sampled_metric([1, 101], 10_000, 99, "hit_rate", k=10),
     r"sampled_ranks contains 1 value\(s\) outside 1..100 \(first: 101 at index 1\).*at most n_negatives \+ 1"),
    ("unknown metric", lambda: sampling.exact_metric([1], 10, "average_precision"),
     r"metric='average_precision' is not a known option; use one of 'auc', 'hit_rate', "
     r"'precision', 'map', 'ndcg'"),
    ("k with AUC", lambda: sampling.expected_sampled_metric([1], 10, 5, "auc", k=10),
     r"k=10 does not apply to metric='auc'.*leave k=None"),
    ("hit rate without k", lambda: sampling.exact_metric([1], 10, "hit_rate"),
     r"metric='hit_rate' needs a cut-off; pass k, e.g. k=10"),
    ("k zero", lambda: sampling.exact_metric([1], 10, "ndcg", k=0), r"k=0 must be an integer >= 1"),
    ("unknown distribution", lambda: sampling.expected_sampled_metric([1], 10, 5, "auc", distribution="poisson"),
     r"distribution='poisson' is not a known option; use one of 'hypergeometric', 'binomial'"),
    ("unknown correction", lambda: sampling.correct_sampled_metric([1], 10, 5, "auc", correction="mb"),
     r"correction='mb' is not a known option; use one of 'bv', 'rescale'"),
    ("gamma above 1", lambda: sampling.correct_sampled_metric([1], 10, 5, "auc", gamma=1.5),
     r"gamma=1.5 must be a number from 0 to 1 \(0: least bias, 1: least mean squared error\)"),
    ("gamma text", lambda: sampling.bv_correction(10, 5, "auc", gamma="0.1"), r"gamma='0.1' must be a number"),
    ("unknown prior", lambda: sampling.correct_sampled_metric([1], 10, 5, "auc", rank_prior="empirical"),
     r"rank_prior='empirical' is not a known option; use one of 'sampled', 'uniform'"),
    ("weights length", lambda: sampling.bv_correction(10, 5, "auc", rank_weights=[1, 2]),
     r"rank_weights has 2 entries but n_items=10; pass one weight per exact rank"),
    ("negative weight", lambda: sampling.bv_correction(3, 1, "auc", rank_weights=[1, -1, 1]),
     r"rank_weights contains a negative count"),
    ("zero weights", lambda: sampling.bv_correction(3, 1, "auc", rank_weights=[0, 0, 0]),
     r"rank_weights sums to 0"),
    ("negative seed", lambda: sampling.sample_ranks([1], 10, 5, seed=-1),
     r"seed=-1 must be None, a whole number >= 0 or a numpy.random.Generator"),
    ("seed text", lambda: sampling.sample_ranks([1], 10, 5, seed="abc"), r"seed='abc' must be None"),
    ("scores 1-d", lambda: sampling.rank_of_held_out([0.1, 0.2], [0]),
     r"y_score must be a 2-d array \(one row per user, one column per item\), got shape \(2,\)"),
    ("held_out length", lambda: sampling.rank_of_held_out([[0.1, 0.2]], [0, 1]),
     r"held_out has 2 entries but y_score has 1 rows; pass one held-out item per user"),
    ("held_out column", lambda: sampling.rank_of_held_out([[0.1, 0.2]], [2]),
     r"held_out\[0\] = 2.0 is not a column of y_score; pass 0-based item indices 0..1"),
    ("NaN score", lambda: sampling.rank_of_held_out([[0.1, float("nan")]], [0]), r"y_score contains 1 NaN"),
    ("unknown ties", lambda: sampling.rank_of_held_out([[0.1, 0.2]], [0], ties="random"),
     r"ties='random' is not a known option; use one of 'average', 'optimistic', 'pessimistic'"),
    ("average ties give no whole rank", lambda: sampling.rank_of_held_out([[0.1, 0.2]], [0], ties="average"),
     r"ties='average' gives a fractional rank, and the sampled-metric functions need whole ranks"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in BAD_INPUTS], ids=[row[0] for row in BAD_INPUTS])
def test_bad_input_raises_value_error_with_a_helpful_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_every_public_function_appears_in_the_bad_input_table():
    import inspect
    source = inspect.getsource(inspect.getmodule(test_bad_input_raises_value_error_with_a_helpful_message))
    table = source[source.index("BAD_INPUTS = ["):source.index("@pytest.mark.parametrize(\"call, message\"")]
    functions = [name for name in sampling.__all__ if name[0].islower()]
    missing = [name for name in functions if f"sampling.{name}(" not in table]
    assert not missing, f"no bad-input row for {missing}"


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        sampling.exact_metric([1], 10, "hit_rate", 5)
    with pytest.raises(TypeError):
        sampling.sample_ranks([1], 10, 5, 3)
    with pytest.raises(TypeError):
        sampling.correct_sampled_metric([1], 10, 5, "auc", None, "rescale")


def test_results_are_plain_floats():
    assert isinstance(sampling.exact_metric([1], 10, "auc"), float)
    assert isinstance(sampling.expected_sampled_metric([1], 10, 5, "auc"), float)
    assert isinstance(sampling.correct_sampled_metric([1], 10, 5, "auc"), float)


@pytest.mark.parametrize("metric, k", [("hit_rate", 10), ("map", None), ("auc", None)])
def test_bv_on_the_rank_grid_of_a_large_catalogue_matches_the_sum_over_every_rank(monkeypatch, metric, k):
    n, m = 60_000, 50
    rng = np.random.default_rng(4)
    sampled = sampling.sample_ranks(np.ceil(n * rng.random(5_000) ** 3).astype(int), n, m, seed=5)
    weights = 1 / np.arange(1, n + 1) ** 0.5
    every = (sampling.correct_sampled_metric(sampled, n, m, metric, k=k),
             sampling.bv_correction(n, m, metric, k=k, rank_weights=weights))
    monkeypatch.setattr(sampling, "GRID_ALL_RANKS", 1_000)      # force a coarse grid:
    monkeypatch.setattr(sampling, "GRID_HEAD", 500)             # bins of 30 ranks
    monkeypatch.setattr(sampling, "GRID_BINS", 2_000)
    grid, counts = sampling._rank_grid(n, m, k)
    assert counts.sum() == n and grid.size < 3_000 and counts.max() == 30
    gridded = (sampling.correct_sampled_metric(sampled, n, m, metric, k=k),
               sampling.bv_correction(n, m, metric, k=k, rank_weights=weights))
    assert gridded[0] == pytest.approx(every[0], abs=1e-5)
    np.testing.assert_allclose(gridded[1], every[1], atol=1e-4)
