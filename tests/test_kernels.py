"""The shared kernels (recmetrics._kernels) against literal sums and counts."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from recmetrics import _kernels, _threads


def test_harmonic_numbers_match_a_literal_sum_on_both_sides_of_the_exact_table():
    for n in (0, 1, 2, 10, 1024):
        assert _kernels.harmonic(np.array([n]))[0] == pytest.approx(math.fsum(1 / i for i in range(1, n + 1)),
                                                                    rel=1e-14, abs=1e-15)
    n = (1 << 20) + 12_345  # beyond the exact table: the asymptotic series
    assert _kernels.harmonic(np.array([n, 3]))[0] == pytest.approx(math.fsum(1 / i for i in range(1, n + 1)),
                                                                   rel=1e-13)


def test_discount_sums_match_a_literal_sum_on_both_sides_of_the_exact_table():
    literal = lambda k: math.fsum(1 / math.log2(i + 1) for i in range(1, k + 1))  # noqa: E731
    for k in (1, 2, 5, 1000, 1024):
        assert _kernels.discount_sum(np.array([k]))[0] == pytest.approx(literal(k), rel=1e-14)
    k = (1 << 20) + 54_321  # beyond the exact table: Euler-Maclaurin
    assert _kernels.discount_sum(np.array([k, 4]))[0] == pytest.approx(literal(k), rel=1e-13)
    # and it stays finite and increasing up to the largest accepted cut-off
    big = _kernels.discount_sum(np.array([10**6, 10**9, 2**31 - 1]))
    assert np.all(np.isfinite(big)) and np.all(np.diff(big) > 0)


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=30),
       st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=30))
def test_pair_counts_of_one_group_equal_a_literal_count(pos, neg):
    wins, wins_or_ties = _kernels.pair_counts(np.sort(pos), np.sort(neg))
    assert wins == sum(p > n for p in pos for n in neg)
    assert wins_or_ties == sum(p >= n for p in pos for n in neg)
    assert _kernels.pair_counts_pairwise(np.array(pos), np.array(neg)) == (wins, wins_or_ties)


def test_shifted_exponential_gain_keeps_ratios():
    grades = np.array([3.0, 1.0, 0.0])
    shift = np.full(3, 3.0)
    plain = _kernels.gain_values(grades, "exponential")
    shifted = _kernels.gain_values(grades, "exponential", shift)
    np.testing.assert_allclose(shifted * 2**3, plain)


@given(st.lists(st.integers(-2**40, 2**40) | st.sampled_from([0, 1, 7]), max_size=60))
def test_distinct_is_the_sorted_set_of_the_values(values):
    values = np.array(values, dtype=np.int64)
    np.testing.assert_array_equal(_kernels.distinct(values), sorted(set(values.tolist())))


@given(st.lists(st.integers(0, 200_000), max_size=60))
def test_group_order_is_a_stable_sort_of_the_keys(keys):
    """The counting (radix) sort behind rank_rows, on one 16-bit digit and on two."""
    keys = np.array(keys, dtype=np.int64)
    order = _kernels.group_order(keys, int(keys.max(initial=0)) + 1)
    np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"))


@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([0.0, 0.25, 0.5, 1.0, -np.inf]),
                          st.booleans(), st.integers(0, 3)), max_size=80),
       st.sampled_from([1, 2, 5, 1 << 16]), st.sampled_from([None, "up", "down"]),
       st.booleans())
def test_rank_rows_orders_by_list_then_score_and_counts_global_pairs(rows, chunk, tiebreak,
                                                                    shuffled):
    """Any chunk size (one list per chunk up to all in one), rows grouped or not, with or
    without a tie-break: the order of a literal sort, and the pair counts of a literal count."""
    rows = sorted(rows) if not shuffled else rows
    lists = np.array([r[0] for r in rows], dtype=np.intp)
    scores = np.array([r[1] for r in rows])
    positive = np.array([r[2] for r in rows], dtype=bool)
    grades = np.array([r[3] for r in rows], dtype=np.float64)
    breaks = None if tiebreak is None else grades if tiebreak == "up" else -grades
    old, _kernels.RANK_CHUNK = _kernels.RANK_CHUNK, chunk
    try:
        carried = np.empty_like(scores), np.empty_like(grades)
        order, pairs = _kernels.rank_rows(lists, scores, 7, tiebreak=breaks, positive=positive,
                                          carry=((scores, carried[0]), (grades, carried[1])))
    finally:
        _kernels.RANK_CHUNK = old
    assert sorted(order.tolist()) == list(range(len(rows)))
    # carried arrays arrive in the returned order, row for row
    assert carried[0].tolist() == [scores[i] for i in order]
    assert carried[1].tolist() == [grades[i] for i in order]
    got = [(lists[i], -scores[i]) + (() if breaks is None else (-breaks[i],)) for i in order]
    assert got == sorted(got)
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    assert pairs == (sum(a > b for a in pos for b in neg), sum(a >= b for a in pos for b in neg))


def _ranked(seed: int = 3):
    rng = np.random.default_rng(seed)
    lists = rng.integers(0, 500, 20_000)
    scores = rng.integers(0, 50, lists.size) / 7
    positive = rng.random(lists.size) < 0.2
    return lists, scores, positive


def test_rank_rows_gives_the_same_order_on_one_thread_and_on_several(monkeypatch):
    """Chunks ranked in threads or one after the other: the same order and the same pairs."""
    lists, scores, positive = _ranked()
    monkeypatch.setattr(_kernels, "RANK_CHUNK", 1000)            # 20 chunks
    monkeypatch.setenv("RECMETRICS_NUM_THREADS", "1")
    assert _threads.threads() == 1
    alone = _kernels.rank_rows(lists, scores, 500, positive=positive)
    monkeypatch.setenv("RECMETRICS_NUM_THREADS", "3")
    assert _threads.threads() == 3
    threaded = _kernels.rank_rows(lists, scores, 500, positive=positive)
    np.testing.assert_array_equal(alone[0], threaded[0])
    assert alone[1] == threaded[1]


def test_rank_rows_works_in_a_forked_child_after_the_parent_used_its_threads(monkeypatch):
    """The thread pool does not survive a fork: a child must make its own, not wait forever."""
    import multiprocessing

    lists, scores, positive = _ranked()
    monkeypatch.setattr(_kernels, "RANK_CHUNK", 1000)
    monkeypatch.setenv("RECMETRICS_NUM_THREADS", "2")
    expected = _kernels.rank_rows(lists, scores, 500, positive=positive)   # the parent's pool
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=lambda: queue.put(
        _kernels.rank_rows(lists, scores, 500, positive=positive)[1]))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "rank_rows hung in a forked child"
    assert child.exitcode == 0 and queue.get(timeout=5) == expected[1]


def literal_top_k(lists, items, scores, grades, n_lists, k, ties):
    """Ranked rows with P(in the top k) > 0, in rank order, from their tie group's positions:
    a group at positions first..last holds max(0, min(k, last) - first + 1) of the top k's
    places, shared evenly by its rows; and each list's top-k length."""
    rows, length = [], []
    for lst in range(n_lists):
        own = [r for r in range(len(lists)) if lists[r] == lst]
        length.append(min(k, len(own)))
        key = {r: (scores[r],) if ties == "average" else (scores[r], grades[r]) for r in own}
        for r in own:
            group = [q for q in own if key[q] == key[r]]
            first = own.index(group[0]) + 1
            held = max(0, min(k, first + len(group) - 1) - first + 1)
            if held:
                rows.append((lst, items[r], held / len(group), grades[r], group[0]))
    return rows, length


@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0]),
                          st.integers(0, 2)), max_size=60),
       st.integers(1, 12), st.sampled_from(["average", "optimistic", "pessimistic"]))
def test_top_k_holds_each_row_with_its_literal_probability(rows, k, ties):
    """Tie groups straddling position k (some running to the end of a long list), lists
    shorter than k, lists without rows: top_k_ranked reads only the rows that can reach the
    top k, and gives each the probability its group's places give it."""
    n_lists = 6
    lists = np.array([r[0] for r in rows], dtype=np.intp)
    scores = np.array([r[1] for r in rows])
    grades = np.array([r[2] for r in rows], dtype=np.float64)
    tiebreak = None if ties == "average" else grades if ties == "optimistic" else -grades
    order, _ = _kernels.rank_rows(lists, scores, n_lists, tiebreak=tiebreak)
    ranked = [lists[order], np.arange(lists.size), scores[order], grades[order]]
    top = _kernels.top_k_ranked(*ranked, n_lists, k, ties=ties)
    expected, length = literal_top_k(*ranked, n_lists, k, ties)
    assert top.lists.tolist() == [e[0] for e in expected]
    assert top.items.tolist() == [e[1] for e in expected]    # a ranked row's place here
    assert top.p.tolist() == pytest.approx([e[2] for e in expected], rel=1e-15)
    assert top.grades.tolist() == [e[3] for e in expected]
    assert top.length.tolist() == length
    # two rows share a group number exactly when they share a tie group
    first_of_group = np.array([e[4] for e in expected])
    np.testing.assert_array_equal(top.group[:, None] == top.group[None, :],
                                  first_of_group[:, None] == first_of_group[None, :])
