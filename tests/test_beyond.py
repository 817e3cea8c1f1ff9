"""Beyond-accuracy metrics against literal references (every order of tied items enumerated),
Microsoft Recommenders' formulas re-implemented literally, additivity over users, baselines."""
import importlib.util
import itertools
import math
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import recmetrics as rm
from recmetrics import _kernels, _metrics
from recmetrics._beyond import BeyondInputs as _Inputs
from recmetrics.beyond import BEYOND_METRICS


# --------------------------------------------------------------------------- literal references


def orders(rows, ties="average"):
    """Every order of one user's (item, score, grade) rows that the scores allow: descending
    score, tied rows in any order (relevant first / last for optimistic / pessimistic)."""
    def key(row):
        _, score, grade = row
        return {"average": (score,), "optimistic": (score, grade),
                "pessimistic": (score, -grade)}[ties]

    ranked = sorted(rows, key=key, reverse=True)
    groups = [list(g) for _, g in itertools.groupby(ranked, key=key)]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [r[0] for part in parts for r in part]


def list_distribution(rows, k, ties="average"):
    """{top-k tuple (in rank order): probability} over every allowed order."""
    seen = Counter(tuple(order[:k]) for order in orders(rows, ties))
    total = sum(seen.values())
    return {lst: n / total for lst, n in seen.items()}


def by_user(pred):
    rows = defaultdict(list)
    for u, i, s, g in pred:
        rows[u].append((i, s, g))
    return rows


def joint_lists(pred, k, ties="average"):
    """Every joint assignment of top-k lists to users, with its probability (users independent)."""
    users = sorted(by_user(pred))
    dists = [list(list_distribution(by_user(pred)[u], k, ties).items()) for u in users]
    for combo in itertools.product(*dists):
        yield dict(zip(users, (lst for lst, _ in combo))), math.prod(p for _, p in combo)


def expected_per_user(pred, k, f, ties="average"):
    """{user: E[f(user, top-k list)]} over the orders of the user's tied items (f may be None)."""
    out = {}
    for u, rows in by_user(pred).items():
        values = [(f(u, lst), p) for lst, p in list_distribution(rows, k, ties).items()]
        out[u] = None if values[0][0] is None else sum(v * p for v, p in values)
    return out


def mean_defined(values):
    kept = [v for v in values.values() if v is not None]
    return sum(kept) / len(kept) if kept else float("nan")


def popularity_literal(history):
    counts = Counter(i for _, i in history)
    return counts, len(history)


def head_literal(counts, share):
    """The fewest most popular items whose rows reach ``share``, plus items tied with the last."""
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    total = sum(counts.values())
    head, running = [], 0
    for item, c in ranked:
        if running / total >= share:
            break
        head.append(item)
        running += c
    last = counts[head[-1]]
    return {i for i, c in counts.items() if c >= last and c > 0}


def cosine(a, b):
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b)) / (na * nb)


def cooccurrence_sim(history):
    users_of = defaultdict(set)
    for u, i in history:
        users_of[i].add(u)

    def sim(i, j):
        a, b = users_of.get(i, set()), users_of.get(j, set())
        if not a or not b:
            return 0.0
        return len(a & b) / math.sqrt(len(a) * len(b))
    return sim


def feature_sim(features):
    return lambda i, j: cosine(features[i], features[j])


def literal_all(pred, k, history, truth, catalogue, sim, *, ties="average", head_share=0.8,
                unseen="add_one"):
    """Every metric from its formula, averaged over every order of tied items."""
    counts, n_hist = popularity_literal(history)
    head = head_literal(counts, head_share)
    relevant = {(u, i) for u, i, g in truth if g > 0}
    own = defaultdict(set)
    for u, i in history:
        own[u].add(i)

    def info(i):
        if counts[i] > 0:
            return -math.log2(counts[i] / n_hist)
        return math.log2(n_hist + 1) if unseen == "add_one" else 0.0

    def diversity(u, lst):
        if len(lst) < 2:
            return None
        pairs = list(itertools.combinations(lst, 2))
        return sum(1 - sim(i, j) for i, j in pairs) / len(pairs)

    def serendipity(u, lst):
        if not own[u]:
            return None
        return sum((1 - sum(sim(i, j) for j in own[u]) / len(own[u]))
                   for i in lst if (u, i) in relevant) / len(lst)

    out = {
        "novelty": mean_defined(expected_per_user(
            pred, k, lambda u, lst: sum(info(i) for i in lst) / len(lst), ties)),
        "arp": mean_defined(expected_per_user(
            pred, k, lambda u, lst: sum(counts[i] for i in lst) / len(lst), ties)),
        "aplt": mean_defined(expected_per_user(
            pred, k, lambda u, lst: sum(i not in head for i in lst) / len(lst), ties)),
        "diversity": mean_defined(expected_per_user(pred, k, diversity, ties)),
        "serendipity": mean_defined(expected_per_user(pred, k, serendipity, ties)),
    }
    # joint metrics: every joint assignment of lists
    coverage = personal = 0.0
    exposure = Counter()
    users = sorted(by_user(pred))
    for lists, p in joint_lists(pred, k, ties):
        coverage += p * len(set().union(*map(set, lists.values()))) / len(catalogue)
        pairs = list(itertools.combinations(users, 2))
        if pairs:
            personal += p * (1 - sum(len(set(lists[u]) & set(lists[v])) / k
                                     for u, v in pairs) / len(pairs))
        for lst in lists.values():
            for i in lst:
                exposure[i] += p
    counts_all = [exposure[i] for i in catalogue]
    total = sum(counts_all)
    entropy = -sum(c / total * math.log2(c / total) for c in counts_all if c > 0)
    ascending = sorted(counts_all)
    n = len(ascending)
    gini = sum((2 * j - n - 1) * c for j, c in enumerate(ascending, start=1)) / (n * total)
    out.update(catalog_coverage=coverage, distributional_coverage=entropy, gini=gini,
               personalization=personal if len(users) > 1 else float("nan"))
    return out


# --------------------------------------------------------------------------- data


@st.composite
def worlds(draw, max_users=4, max_items=5):
    """A tiny world: pred with many ties, a history with repeats, truth grades, item features."""
    n_users = draw(st.integers(1, max_users))
    n_items = draw(st.integers(2, max_items))
    items = [f"i{j}" for j in range(n_items + 1)]     # one more item, never scored
    pred = []
    for u in range(n_users):
        mine = draw(st.lists(st.sampled_from(items[:n_items]), min_size=1, max_size=n_items,
                             unique=True))
        for i in mine:
            pred.append((u, i, draw(st.sampled_from([0.0, 0.5, 0.5, 1.0])),
                         draw(st.sampled_from([0, 0, 1, 2]))))
    history = draw(st.lists(st.tuples(st.integers(0, n_users + 1), st.sampled_from(items)),
                            min_size=1, max_size=12))
    features = {i: draw(st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.0]), min_size=3,
                                 max_size=3)) for i in items}
    k = draw(st.integers(1, 4))
    return pred, history, features, k


def frames(pred, history, features=None):
    p = pd.DataFrame([(u, i, s) for u, i, s, _ in pred], columns=["user", "item", "score"])
    t = pd.DataFrame([(u, i, g) for u, i, _, g in pred], columns=["user", "item", "label"])
    h = pd.DataFrame(history, columns=["user", "item"])
    f = None if features is None else pd.DataFrame(
        [(i, *v) for i, v in features.items()], columns=["item", "f0", "f1", "f2"])
    return p, t, h, f


def values(table):
    return dict(zip(table.metric, table.value))


def assert_close(got, expected, names, tol=1e-9):
    for name in names:
        g, e = got[name], expected[name]
        assert (math.isnan(g) and math.isnan(e)) or abs(g - e) <= tol * max(1, abs(e)), \
            (name, g, e)


# --------------------------------------------------------------------------- the literal references


@settings(max_examples=60)
@given(worlds(), st.sampled_from(["average", "optimistic", "pessimistic"]))
def test_every_metric_equals_its_literal_reference_over_every_order_of_ties(world, ties):
    pred, history, _, k = world
    p, t, h, _ = frames(pred, history)
    catalogue = sorted(set(p.item) | set(h.item))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        got = values(rm.beyond_accuracy(p, k=k, history=h, truth=t, ties=ties))
    expected = literal_all(pred, k, history, [(u, i, g) for u, i, _, g in pred], catalogue,
                           cooccurrence_sim(history), ties=ties)
    assert_close(got, expected, BEYOND_METRICS)


@settings(max_examples=40)
@given(worlds(), st.sampled_from(["add_one", "zero"]), st.sampled_from([0.5, 0.8, 1.0]))
def test_features_catalog_unseen_and_head_share_options_match_the_literal_reference(
        world, unseen, head_share):
    pred, history, features, k = world
    p, t, h, f = frames(pred, history, features)
    catalogue = sorted(features)                      # every item, one never scored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        got = values(rm.beyond_accuracy(p, k=k, history=h, truth=t, catalog=catalogue,
                                        item_features=f, unseen=unseen, head_share=head_share))
    expected = literal_all(pred, k, history, [(u, i, g) for u, i, _, g in pred], catalogue,
                           feature_sim(features), unseen=unseen, head_share=head_share)
    assert_close(got, expected, BEYOND_METRICS)


def test_a_vector_column_gives_the_same_as_numeric_feature_columns():
    p, t, h, f = frames([(0, "a", 1.0, 1), (0, "b", 0.5, 0), (0, "c", 0.5, 1), (1, "a", 1, 0)],
                        [(0, "a"), (2, "b")], {"a": [1, 0, 0], "b": [1, 1, 0], "c": [0, 0, 3]})
    vectors = pd.DataFrame({"item": f.item, "vec": list(f[["f0", "f1", "f2"]].to_numpy())})
    a = rm.beyond_accuracy(p, k=2, history=h, truth=t, item_features=f,
                           metrics=["diversity", "serendipity"])
    b = rm.beyond_accuracy(p, k=2, history=h, truth=t, item_features=vectors,
                           metrics=["diversity", "serendipity"])
    pd.testing.assert_frame_equal(a, b)
    # by hand: user 0's top 2 is a and b or a and c (1/2 each); sim(a,b) = 1/sqrt(2), sim(a,c) = 0
    assert a.value[0] == pytest.approx(1 - 0.5 / math.sqrt(2))


def test_per_user_values_average_to_the_table_and_match_the_literal_per_user_values():
    pred = [(0, "a", 1.0, 1), (0, "b", 0.5, 0), (0, "c", 0.5, 1), (1, "a", 0.3, 0),
            (1, "b", 0.3, 1), (1, "d", 0.3, 0), (2, "d", 1.0, 1)]
    history = [(0, "a"), (1, "a"), (1, "b"), (3, "c"), (3, "a"), (0, "a")]
    p, t, h, _ = frames(pred, history)
    per_user = rm.beyond_accuracy_per_user(p, k=2, history=h, truth=t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        table = values(rm.beyond_accuracy(p, k=2, history=h, truth=t))
    for name in ("novelty", "diversity", "serendipity", "personalization", "arp", "aplt"):
        assert per_user[name].mean() == pytest.approx(table[name], abs=1e-12)
    counts, _ = popularity_literal(history)
    arp = expected_per_user(pred, 2, lambda u, lst: sum(counts[i] for i in lst) / len(lst))
    assert per_user.arp.tolist() == pytest.approx([arp[u] for u in per_user.user])
    assert per_user.n_items.tolist() == [2, 2, 1]
    assert math.isnan(per_user.diversity[2])          # one item: no pair


# --------------------------------------------------------------------------- Microsoft Recommenders


def ms_cooccurrence_similarity(train):
    """recommenders.evaluation.python_evaluation._get_cooccurrence_similarity, literally."""
    a = train.rename(columns={"item": "i1"})
    b = train.rename(columns={"item": "i2"})
    pairs = a.merge(b, on="user")
    pairs = pairs[pairs.i1 <= pairs.i2]
    pair_count = pairs.groupby(["i1", "i2"]).size().rename("count").reset_index()
    sqrt_count = (train.groupby("item").size() ** 0.5).rename("sq")
    sim = pair_count.merge(sqrt_count, left_on="i1", right_index=True).merge(
        sqrt_count, left_on="i2", right_index=True, suffixes=("1", "2"))
    sim["sim"] = sim["count"] / (sim.sq1 * sim.sq2)
    return sim[["i1", "i2", "sim"]]


def ms_diversity(train, reco):
    """user_diversity then diversity: pairs i1 < i2 of a list, missing similarity 0."""
    a = reco[["user", "item"]].rename(columns={"item": "i1"})
    b = reco[["user", "item"]].rename(columns={"item": "i2"})
    pairs = a.merge(b, on="user")
    pairs = pairs[pairs.i1 < pairs.i2]
    pairs = pairs.merge(ms_cooccurrence_similarity(train), on=["i1", "i2"], how="left")
    pairs["sim"] = pairs["sim"].fillna(0)
    return (1 - pairs.groupby("user")["sim"].mean()).mean()


def ms_serendipity(train, reco):
    """user_item_serendipity (with a relevance column), user_serendipity, serendipity."""
    sim = ms_cooccurrence_similarity(train)
    joined = reco[["user", "item"]].merge(train.rename(columns={"item": "t"}), on="user")
    joined["i1"] = joined[["item", "t"]].min(axis=1)
    joined["i2"] = joined[["item", "t"]].max(axis=1)
    joined = joined.merge(sim, on=["i1", "i2"], how="left")
    joined["sim"] = joined["sim"].fillna(0)
    avg = joined.groupby(["user", "item"])["sim"].mean().rename("avg").reset_index()
    per_item = avg.merge(reco, on=["user", "item"])
    per_item["s"] = (1 - per_item.avg) * per_item.relevance
    return per_item.groupby("user")["s"].mean().mean()


def ms_novelty(train, reco):
    n = len(train)
    item_novelty = -np.log2(train.groupby("item").size() / n)
    counts = reco.groupby("item").size().rename("count").reset_index()
    joined = counts.merge(item_novelty.rename("nov"), left_on="item", right_index=True)
    return (joined["count"] * joined.nov).sum() / len(reco)


def ms_distributional_coverage(reco):
    p = reco.groupby("item").size() / len(reco)
    return -(p * np.log2(p)).sum()


def ms_catalog_coverage(train, reco):
    return reco.item.nunique() / train.item.nunique()


@pytest.mark.parametrize("seed", range(5))
def test_microsoft_recommenders_definitions_where_they_coincide(seed):
    """Top-k lists of exactly k items, no ties, recommended items outside each user's history."""
    rng = np.random.default_rng(seed)
    n_users, n_items, k = 12, 15, 4
    pop = 1 / np.arange(1, n_items + 1)
    train_rows, reco_rows = [], []
    for u in range(n_users):
        seen = rng.choice(n_items, size=rng.integers(1, 6), replace=False, p=pop / pop.sum())
        train_rows += [(u, int(i)) for i in seen]
        rest = np.setdiff1d(np.arange(n_items), seen)
        chosen = rng.choice(rest, size=k + 2, replace=False)
        scores = rng.permutation(k + 2).astype(float)
        reco_rows += [(u, int(i), s) for i, s in zip(chosen, scores)]
    train = pd.DataFrame(train_rows, columns=["user", "item"])
    pred = pd.DataFrame(reco_rows, columns=["user", "item", "score"])
    truth = pred.assign(label=rng.integers(0, 2, len(pred)))[["user", "item", "label"]]
    top = pred[pred.groupby("user").score.rank(ascending=False) <= k]
    reco = top.merge(truth, on=["user", "item"]).rename(columns={"label": "relevance"})
    got = values(rm.beyond_accuracy(pred, k=k, history=train, truth=truth))
    assert got["diversity"] == pytest.approx(ms_diversity(train, reco), abs=1e-12)
    assert got["serendipity"] == pytest.approx(ms_serendipity(train, reco), abs=1e-12)
    assert got["distributional_coverage"] == pytest.approx(ms_distributional_coverage(reco),
                                                           abs=1e-12)
    # MS's novelty leaves items unseen in training out of the sum: unseen="zero"
    zero = values(rm.beyond_accuracy(pred, k=k, history=train, metrics="novelty", unseen="zero"))
    assert zero["novelty"] == pytest.approx(ms_novelty(train, reco), abs=1e-12)
    # catalog coverage: the same when the catalogue is the training items and pred stays in it
    inside = pred[pred.item.isin(train.item)]
    inside_top = inside[inside.groupby("user").score.rank(ascending=False) <= k]
    cov = values(rm.beyond_accuracy(inside, k=k, catalog=train.item.unique(),
                                    metrics="catalog_coverage"))
    assert cov["catalog_coverage"] == pytest.approx(ms_catalog_coverage(train, inside_top))


# --------------------------------------------------------------------------- additivity


@settings(max_examples=40)
@given(worlds(max_users=6, max_items=6), st.data())
def test_sums_over_two_disjoint_sets_of_users_add_up_to_the_whole(world, data):
    pred, history, _, k = world
    p, t, h, _ = frames(pred, history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        inputs = _Inputs(p, history=h, truth=t, catalog=None, item_features=None, metrics=None,
                         head_share=0.8, unseen="add_one", user="user",
                         item="item", score="score", label="label")
    side = np.array(data.draw(st.lists(st.booleans(), min_size=inputs.n_users,
                                       max_size=inputs.n_users)))[inputs.users]

    def top(rows):
        return _kernels.top_k(inputs.users[rows], inputs.items[rows], inputs.scores[rows],
                              inputs.n_users, k, grades=inputs.grades[rows])

    def sums(rows):
        return _metrics.beyond_sums(top(rows), inputs.context, inputs.metrics)

    everything = np.ones(side.size, dtype=bool)
    whole = sums(everything)
    added = sums(side) + sums(~side)
    # per-user values of a partition, personalization given the exposure of everyone
    per_user = _metrics.beyond_per_user(top(everything), inputs.context, inputs.metrics)
    everyone = (whole.exposure, whole.n_lists)
    for part in (side, ~side):
        got = _metrics.beyond_per_user(top(part), inputs.context, inputs.metrics, everyone)
        users = np.unique(inputs.users[part])
        for name, value in got.items():
            assert np.allclose(value[users], per_user[name][users], rtol=0, atol=1e-12,
                               equal_nan=True), name
    a = _metrics.beyond_values(whole, inputs.context, inputs.metrics, k)
    b = _metrics.beyond_values(added, inputs.context, inputs.metrics, k)
    for name in inputs.metrics:
        assert (math.isnan(a[name]) and math.isnan(b[name])) or abs(a[name] - b[name]) <= 1e-12, \
            name
    assert added.n_lists == whole.n_lists


# --------------------------------------------------------------------------- the random baseline


def test_random_baseline_mean_of_2000_shuffles_equals_the_exact_average_over_ties():
    rng = np.random.default_rng(7)
    n_users, n_items, k = 40, 12, 3
    rows = [(u, f"i{i}") for u in range(n_users)
            for i in rng.choice(n_items, size=rng.integers(2, 9), replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item"]).assign(score=1.0)
    history = pd.DataFrame({"user": rng.integers(0, 60, 300),
                            "item": [f"i{i}" for i in rng.zipf(1.5, 300) % n_items]})
    truth = pred.assign(label=rng.integers(0, 2, len(pred)))[["user", "item", "label"]]
    exact = values(rm.beyond_accuracy(pred, k=k, history=history, truth=truth))
    inputs = _Inputs(pred, history=history, truth=truth, catalog=None, item_features=None,
                     metrics=None, head_share=0.8, unseen="add_one",
                     user="user", item="item", score="score", label="label")
    draws, exposures = [], []
    for _ in range(2000):
        scores = rng.permutation(inputs.scores.size).astype(float)     # one random order
        top = _kernels.top_k(inputs.users, inputs.items, scores, inputs.n_users, k,
                             grades=inputs.grades)
        sums = _metrics.beyond_sums(top, inputs.context, inputs.metrics)
        draws.append(_metrics.beyond_values(sums, inputs.context, inputs.metrics, k))
        exposures.append(sums.exposure)
    linear = [m for m in inputs.metrics if m not in ("distributional_coverage", "gini")]
    for name in linear:
        sample = np.array([d[name] for d in draws])
        error = sample.std(ddof=1) / math.sqrt(sample.size)
        assert abs(sample.mean() - exact[name]) <= 5 * error + 1e-12, name
    # entropy and Gini are defined on the expected exposure: the mean exposure over shuffles
    mean_exposure = np.mean(exposures, axis=0)[inputs.catalogue]
    assert _kernels.entropy_bits(mean_exposure) == pytest.approx(
        exact["distributional_coverage"], abs=0.01)
    assert _kernels.gini(mean_exposure) == pytest.approx(exact["gini"], abs=0.01)


def test_expected_catalog_coverage_is_the_mean_number_of_distinct_items_by_hand():
    # two users, each choosing 1 of the same 2 tied items: E[distinct] = 1 + 1/2
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "b"], "score": 0.0})
    got = values(rm.beyond_accuracy(pred, k=1, metrics=["catalog_coverage", "personalization",
                                                        "gini", "distributional_coverage"]))
    assert got["catalog_coverage"] == 0.75
    assert got["personalization"] == 0.5       # the lists overlap with probability 1/2
    assert got["gini"] == 0.0 and got["distributional_coverage"] == 1.0   # even in expectation


# --------------------------------------------------------------------------- properties


@settings(max_examples=30)
@given(worlds(max_users=5, max_items=5), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(world, random):
    pred, history, _, k = world
    p, t, h, _ = frames(pred, history)
    shuffled = p.iloc[random.sample(range(len(p)), len(p))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        a = rm.beyond_accuracy(p, k=k, history=h, truth=t)
        b = rm.beyond_accuracy(shuffled, k=k, history=h, truth=t)
    assert np.allclose(a.value, b.value, rtol=0, atol=1e-12, equal_nan=True)


def test_extremes_identical_lists_disjoint_lists_even_exposure():
    same = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "b"], "score": [2, 1, 2, 1]})
    apart = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "c", "d"], "score": [2, 1, 2, 1]})
    s = values(rm.beyond_accuracy(same, k=2, metrics=["personalization", "gini",
                                                      "catalog_coverage"]))
    d = values(rm.beyond_accuracy(apart, k=2, metrics=["personalization", "gini",
                                                       "catalog_coverage"]))
    assert s == {"personalization": 0.0, "gini": 0.0, "catalog_coverage": 1.0}
    assert d == {"personalization": 1.0, "gini": 0.0, "catalog_coverage": 1.0}
    # one item shown to everyone out of a catalogue of 4: Gini = (n - 1)/n
    one = values(rm.beyond_accuracy(same, k=1, catalog=["a", "b", "c", "d"], metrics="gini"))
    assert one["gini"] == pytest.approx(0.75)


def test_popularity_falls_back_to_truths_relevant_rows_and_says_so():
    pred = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [2, 1]})
    truth = pd.DataFrame({"user": [1, 2, 2], "item": ["a", "a", "b"], "label": [1, 1, 0]})
    table = rm.beyond_accuracy(pred, k=1, truth=truth, metrics=["arp", "novelty"])
    assert values(table) == {"arp": 2.0, "novelty": 0.0}
    assert "truth's relevant rows (2 rows)" in table.conventions[0]


def test_head_includes_items_tied_with_its_last_item():
    counts = np.array([5.0, 3, 3, 1, 0])        # 5 + 3 reach 8/12 < 0.8; the tied 3 joins
    assert _kernels.long_tail(counts, 0.8).tolist() == [False, False, False, True, True]
    assert _kernels.long_tail(counts, 0.3).tolist() == [False, True, True, True, True]
    assert _kernels.long_tail(np.array([7.0, 3.0]), 0.7).tolist() == [False, True]


def test_pair_probability_of_two_rows_of_a_straddling_tie_group():
    # one user, 4 tied rows, k = 2: P(two given rows both in) = 2*1/(4*3)
    top = _kernels.top_k(np.zeros(4, dtype=np.intp), np.arange(4), np.zeros(4), 1, 2)
    assert top.p.tolist() == [0.5] * 4
    assert top.pair_probability(np.array([0]), np.array([1])).tolist() == [pytest.approx(1 / 6)]


# --------------------------------------------------------------------------- degenerate input


def test_one_user_has_no_personalization_and_warns():
    pred = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [2, 1]})
    with pytest.warns(rm.RecmetricsWarning, match="personalization@1 is undefined"):
        table = rm.beyond_accuracy(pred, k=1, metrics="personalization")
    assert math.isnan(table.value[0]) and table.note[0] == "needs at least two users with a list"


def test_users_without_history_are_left_out_of_serendipity_and_counted():
    pred = pd.DataFrame({"user": [1, 2], "item": ["a", "a"], "score": [1, 1]})
    truth = pd.DataFrame({"user": [1, 2], "item": ["a", "a"], "label": [1, 1]})
    history = pd.DataFrame({"user": [1], "item": ["b"]})
    table = rm.beyond_accuracy(pred, k=1, history=history, truth=truth, metrics="serendipity")
    assert table.value[0] == 1.0 and table.n_users[0] == 1
    assert table.note[0] == "1 user(s) without history left out"


# --------------------------------------------------------------------------- bad input

PRED = pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "score": [0.3, 0.2, 0.1]})
HISTORY = pd.DataFrame({"user": [1, 3], "item": ["a", "c"]})
TRUTH = pd.DataFrame({"user": [1], "item": ["a"], "label": [1]})

BAD = [
    (dict(pred=PRED.drop(columns="score")), "pred has no column 'score'"),
    (dict(pred=PRED, k=0), "k=0 must be an integer >= 1"),
    (dict(pred=PRED, metrics=["coverage"]), "metrics='coverage' is not a known option"),
    (dict(pred=PRED, metrics=["novelty"]), "metrics='novelty' needs history="),
    (dict(pred=PRED, history=HISTORY, metrics="serendipity"),
     "metrics='serendipity' needs history= .* and truth="),
    (dict(pred=PRED, metrics="diversity"), "metrics='diversity' needs item_features= or history="),
    (dict(pred=PRED, history=HISTORY, head_share=0), r"head_share=0 must be a number in \(0, 1\]"),
    (dict(pred=PRED, history=HISTORY, unseen="skip"), "unseen='skip' is not a known option"),
    (dict(pred=PRED, ties="random"), "ties='random' is not a known option"),
    (dict(pred=PRED, catalog=["a"]), r"catalog lacks 1 item\(s\) that pred scores \(e.g. 'b'\)"),
    (dict(pred=PRED, catalog="abc"), "catalog must be a sequence of item ids"),
    (dict(pred=PRED, catalog=[]), "catalog is empty"),
    (dict(pred=pd.concat([PRED, PRED.iloc[:1]])), r"pred has 1 duplicate \(user, item\) row"),
    (dict(pred=PRED, history=HISTORY, metrics="novelty", unseen="error"),
     r"history lacks 1 item\(s\) that can reach a top k \(e.g. 'b'\)"),
    (dict(pred=PRED, item_features=pd.DataFrame({"item": ["a"], "f": [1.0]}),
          metrics="diversity"), r"item_features lacks 1 item\(s\) that can reach a top k"),
    (dict(pred=PRED, item_features=pd.DataFrame({"item": ["a", "a", "b"], "f": [1.0, 2, 3]}),
          metrics="diversity"), r"item_features has 1 duplicate item"),
    (dict(pred=PRED, item_features=pd.DataFrame({"item": ["a", "b"], "v": [[1, 2], [1]]}),
          metrics="diversity"), "vectors of different lengths"),
    (dict(pred=PRED, item_features=pd.DataFrame({"item": ["a", "b"], "f": [1.0, None]}),
          metrics="diversity"), "item_features column 'f' has 1 missing or NaN"),
    (dict(pred=PRED, history=HISTORY, truth=TRUTH, metrics="serendipity",
          item_features=pd.DataFrame({"item": ["a", "b"], "f": [1.0, 2.0]})),
     r"item_features lacks 1 item\(s\) of history \(e.g. 'c'\)"),
    (dict(pred=PRED, truth=TRUTH.assign(label=-1)), "negative relevance label"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_bad_input_is_refused_with_a_message_that_says_what_to_do(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rm.beyond_accuracy(**kwargs)


# --------------------------------------------------------------------------- the popularity baseline


def most_popular_literal(users, history, exclude, k=None):
    counts = Counter(i for _, i in history)
    own = defaultdict(set)
    for u, i in history:
        own[u].add(i)
    out = []
    for u in users:
        mine = sorted(((i, c) for i, c in counts.items() if not (exclude and i in own[u])),
                      key=lambda ic: -ic[1])
        if k is not None and len(mine) > k:
            kth = mine[k - 1][1]
            mine = [(i, c) for i, c in mine if c >= kth]
        out += [(u, i, float(c)) for i, c in mine]
    return sorted(out)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abcdef")), min_size=1, max_size=20),
       st.lists(st.integers(0, 7), min_size=1, max_size=5, unique=True), st.booleans(),
       st.one_of(st.none(), st.integers(1, 4)))
def test_most_popular_matches_its_literal_construction(history, users, exclude, k):
    h = pd.DataFrame(history, columns=["user", "item"])
    got = rm.most_popular(users, h, k=k, exclude_history=exclude)
    assert sorted(got.itertuples(index=False, name=None)) == most_popular_literal(
        users, history, exclude, k)
    # by user, then by descending score
    for _, rows in got.groupby("user", sort=False):
        assert rows.score.is_monotonic_decreasing


def test_most_popular_scores_catalogue_items_never_seen_at_zero():
    h = pd.DataFrame({"user": [1, 2], "item": ["a", "a"]})
    got = rm.most_popular([9], h, catalog=["a", "z"])
    assert got.to_dict("list") == {"user": [9, 9], "item": ["a", "z"], "score": [2.0, 0.0]}


def test_most_popular_evaluated_on_the_sample_reaches_the_expected_popularity_bias():
    history = pd.read_csv(rm.DATA_DIR / "sample_history.csv")
    truth = pd.read_csv(rm.DATA_DIR / "sample_truth.csv")
    users = truth.user.unique()
    pred = rm.most_popular(users, history, k=10, exclude_history=True)
    table = values(rm.beyond_accuracy(pred, k=10, history=history, truth=truth,
                                      metrics=["aplt", "personalization", "catalog_coverage"]))
    assert table["aplt"] == 0.0                 # only head items
    same = rm.most_popular(users, history, k=10)
    alike = values(rm.beyond_accuracy(same, k=10, metrics="personalization"))
    assert alike["personalization"] < 0.01 < table["personalization"] < 0.5   # one list for all
    # a constant score over the same candidates is the random baseline: more of the tail
    random = values(rm.beyond_accuracy(pred.assign(score=0.0), k=10, history=history,
                                       metrics=["arp"]))
    popular = values(rm.beyond_accuracy(pred, k=10, history=history, metrics=["arp"]))
    assert random["arp"] < popular["arp"]


# --------------------------------------------------------------------------- the sample history

HISTORY_SCRIPT = Path(__file__).resolve().parent.parent / "data" / "make_sample_history.py"


def test_make_sample_history_reproduces_the_shipped_file_byte_for_byte(tmp_path):
    spec = importlib.util.spec_from_file_location("make_sample_history", HISTORY_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.PACKAGED.resolve() == rm.DATA_DIR.resolve()
    (path,) = module.write(tmp_path)
    assert path.read_bytes() == (rm.DATA_DIR / "sample_history.csv").read_bytes(), (
        "recmetrics/data/sample_history.csv differs from what data/make_sample_history.py "
        "writes; re-run it and commit the result")


def test_sample_history_is_shaped_as_documented():
    history = pd.read_csv(rm.DATA_DIR / "sample_history.csv")
    truth = pd.read_csv(rm.DATA_DIR / "sample_truth.csv")
    assert list(history.columns) == ["user", "item"]
    assert (rm.DATA_DIR / "sample_history.csv").stat().st_size < 2**20
    assert set(history.user) <= set(truth.user) and 0.9 < history.user.nunique() / 2000 < 1
    assert history.merge(truth, on=["user", "item"]).empty         # nothing of the impressions
    assert not history.duplicated().any()
    top = history.item.value_counts()
    assert top.iloc[0] > 20 * top.median()                         # the sample's Zipf skew


@pytest.mark.parametrize("n_items", [40, 100_000])   # int32 keys, and int64 past ~65,000 items
def test_cooccurrence_similarity_equals_the_literal_cosine_with_either_key_width(n_items):
    rng = np.random.default_rng(n_items)
    users = rng.integers(0, 30, 300)
    items = rng.choice([0, 1, 2, 7, n_items // 2, n_items - 1], 300)
    history = list(zip(users.tolist(), items.tolist()))
    similarity = _kernels.CooccurrenceSimilarity(users, items, 30, n_items)
    assert similarity.key_type == (np.int32 if n_items == 40 else np.int64)
    assert all(keys.dtype == similarity.key_type for keys, _ in similarity.blocks
               if keys is not None)            # None: a dense block, a count per key
    pairs = np.array([(i, j) for i in (0, 1, 2, 3, 7, n_items // 2, n_items - 1)
                      for j in (0, 2, 5, 7, n_items // 2, n_items - 1)])
    got = similarity(pairs[:, 0], pairs[:, 1])
    literal = cooccurrence_sim(history)
    np.testing.assert_allclose(got, [literal(i, j) for i, j in pairs], rtol=1e-14, atol=1e-15)


def cooccurrence_one_product(users, items, n_users, n_items):
    """Cosine of co-occurrence counts from the whole product at once (the single-product path
    this module used before the block-triangular one), as a dense items x items array."""
    from scipy import sparse

    incidence = sparse.csr_matrix((np.ones(users.size), (items, users)),
                                  shape=(n_items, max(n_users, 1)))
    incidence.sum_duplicates()
    incidence.data[:] = 1
    co = (incidence @ incidence.T).toarray()
    norm = np.sqrt(np.diff(incidence.indptr).astype(np.float64))
    denominator = norm[:, None] * norm[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, co / denominator, 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 24)), max_size=120),
       st.integers(1, 30), st.integers(1, 12))
def test_cooccurrence_blocks_equal_the_whole_product_and_the_literal_cosine(history, n_items,
                                                                           blocks):
    # items beyond n_items - 1 are folded in; repeated (user, item) rows count once
    history = [(u, i % n_items) for u, i in history]
    users = np.array([u for u, _ in history], dtype=np.int64)
    items = np.array([i for _, i in history], dtype=np.int64)
    similarity = _kernels.CooccurrenceSimilarity(users, items, 13, n_items, blocks=blocks)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n_items), np.arange(n_items)))
    got = similarity(i, j)                              # every pair, both orders, i == j too
    np.testing.assert_array_equal(got, cooccurrence_one_product(users, items, 13, n_items)[i, j])
    literal = cooccurrence_sim(history)
    np.testing.assert_allclose(got, [literal(a, b) for a, b in zip(i, j)], rtol=1e-14,
                               atol=1e-15)
    assert np.array_equal(got, similarity(j, i))        # symmetric by construction


def test_cooccurrence_dense_and_sparse_blocks_both_equal_the_whole_product():
    # a Zipf history: the popular items' blocks are dense (a count per pair), the tail's sparse
    rng = np.random.default_rng(7)
    weights = 1.0 / np.arange(1, 301) ** 1.1
    users = np.repeat(np.arange(200), 30)
    items = rng.choice(300, users.size, p=weights / weights.sum())
    similarity = _kernels.CooccurrenceSimilarity(users, items, 200, 300, blocks=6)
    kinds = [keys is None for keys, _ in similarity.blocks]
    assert any(kinds) and not all(kinds)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(300), np.arange(300)))
    np.testing.assert_array_equal(similarity(i, j),
                                  cooccurrence_one_product(users, items, 200, 300)[i, j])


def test_diversity_and_serendipity_do_not_depend_on_the_number_of_threads(monkeypatch):
    # their pairs are cut into one range a thread; a list's pairs stay in one range, so its
    # total is summed in the same order whatever the cut (the same bits on any machine)
    rng = np.random.default_rng(5)
    pred = pd.DataFrame({"user": np.repeat(np.arange(300), 12), "item": rng.integers(0, 80, 3600),
                         "score": np.round(rng.random(3600), 1)}).drop_duplicates(["user", "item"])
    truth = pred[["user", "item"]].assign(label=rng.integers(0, 2, len(pred)))
    history = pd.DataFrame({"user": rng.integers(0, 300, 4000), "item": rng.integers(0, 80, 4000)})
    tables = []
    for n in ("1", "2", "3", "7"):
        monkeypatch.setenv("RECMETRICS_NUM_THREADS", n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rm.RecmetricsWarning)
            tables.append(rm.evaluate_per_user(pred, truth, k=[3, 5],
                                               metrics=["diversity", "serendipity"],
                                               history=history))
    for other in tables[1:]:
        pd.testing.assert_frame_equal(other, tables[0], check_exact=True)


def test_cooccurrence_blocks_cover_the_items_in_as_many_blocks_as_asked():
    rng = np.random.default_rng(0)
    users, items = rng.integers(0, 13, 100), rng.integers(0, 25, 100)
    similarity = _kernels.CooccurrenceSimilarity(users, items, 13, 25, blocks=6)
    assert similarity.edges[0] == 0 and similarity.edges[-1] == 25
    assert similarity.edges.size - 1 == 6                 # six blocks of the upper triangle
    i, j = (a.ravel() for a in np.meshgrid(np.arange(25), np.arange(25)))
    np.testing.assert_array_equal(similarity(i, j),
                                  cooccurrence_one_product(users, items, 13, 25)[i, j])


# --------------------------------------------------------------------------- closed-form pairs


def pair_enumerating_similarity_sum(top, similarity, whole_lists=None):
    """The pair-enumerating expected_similarity_sum this module used before the closed form
    of large straddling tie groups, kept literally as the slow reference: every pair of rows
    of a list that may both be in its top k, weighted by their joint probability (no sums
    computed beforehand: ``whole_lists`` is not read)."""
    n = top.lists.size
    list_end = np.zeros(n, dtype=np.int64)
    if n:
        new = np.flatnonzero(_kernels.starts(top.lists))
        ends = np.append(new[1:], n)
        list_end = np.repeat(ends, np.diff(np.append(new, n)))
    partners = list_end - np.arange(n) - 1
    row, place = _kernels._expand(partners)
    b = row + 1 + place
    weight = top.pair_probability(row, b) * similarity(top.items[row], top.items[b])
    return np.bincount(top.lists[row], weights=weight, minlength=top.n_lists)


def literal_similarity_sum(top, sim):
    """Per list, from the definition: sum over pairs of rows of P(both in the top k) sim(i, j)."""
    out = np.zeros(top.n_lists)
    for a in range(top.lists.size):
        for b in range(a + 1, top.lists.size):
            if top.lists[a] == top.lists[b]:
                if top.group[a] == top.group[b] and top.slots[a] < top.size[a]:
                    s, t = top.slots[a], top.size[a]
                    both = s * (s - 1) / (t * (t - 1))
                else:
                    both = top.p[a] * top.p[b]
                out[top.lists[a]] += both * sim(int(top.items[a]), int(top.items[b]))
    return out


def random_tops(seed, n_lists=60, n_items=90):
    """Lists with constant scores (one tie group each: the random baseline), scores with ties
    and distinct scores, under several cut-offs."""
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 50, n_lists)
    lists = np.repeat(np.arange(n_lists), per)
    items = np.concatenate([rng.choice(n_items, p, replace=False) for p in per])
    for scores in (np.zeros(lists.size), np.round(rng.random(lists.size), 1),
                   rng.random(lists.size)):
        for k in (1, 3, 10):
            yield _kernels.top_k(lists, items, scores, n_lists, k)


def similarities(seed, n_items=90):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n_items, 4))
    vectors[::9] = 0                                     # similar to nothing
    users, items = rng.integers(0, 40, 700), rng.integers(0, n_items - 10, 700)
    cooccurrence = _kernels.CooccurrenceSimilarity(users, items, 40, n_items)
    item_map = rng.permutation(n_items)
    item_map[:7] = -1                                    # outside the history
    return {"features": _kernels.FeatureSimilarity(vectors), "cooccurrence": cooccurrence,
            "recoded": cooccurrence.recoded(item_map)}


@pytest.mark.parametrize("kind", ["features", "cooccurrence", "recoded"])
def test_closed_form_of_a_large_tie_group_equals_the_pair_enumerating_sum(kind):
    similarity = similarities(3)[kind]
    for top in random_tops(4):
        got = _kernels.expected_similarity_sum(top, similarity)
        reference = pair_enumerating_similarity_sum(top, similarity)
        np.testing.assert_allclose(got, reference, rtol=0, atol=1e-12)
        # lists without a straddling group larger than k: the same pairs in the same order,
        # so the same bits as before
        large = np.zeros(top.n_lists, dtype=bool)
        large[top.lists[~top.whole & (top.size > top.k)]] = True
        assert np.array_equal(got[~large], reference[~large])


def test_closed_form_equals_the_literal_definition_on_a_small_world():
    similarity = similarities(8, n_items=30)["features"]
    rng = np.random.default_rng(8)
    lists = np.repeat(np.arange(4), [12, 7, 3, 9])
    items = np.concatenate([rng.choice(30, n, replace=False) for n in (12, 7, 3, 9)])
    scores = np.r_[np.ones(2), np.zeros(10), np.zeros(7), [3, 2, 1], np.r_[5, np.zeros(8)]]
    top = _kernels.top_k(lists, items, scores, 4, 4)
    literal = literal_similarity_sum(top, lambda i, j: float(similarity.unit[i] @
                                                             similarity.unit[j]))
    np.testing.assert_allclose(_kernels.expected_similarity_sum(top, similarity), literal,
                               rtol=0, atol=1e-12)


def test_random_baseline_diversity_matches_the_pair_enumerating_reference(monkeypatch):
    # evaluate(baselines=True): the random baseline is one tie group per user, summed in
    # closed form; with the pairs enumerated instead, every value agrees to 1e-12
    rng = np.random.default_rng(11)
    pred = pd.DataFrame({"user": np.repeat(np.arange(40), 60),
                         "item": np.concatenate([rng.choice(150, 60, replace=False)
                                                 for _ in range(40)]),
                         "score": rng.random(2400)})
    truth = pred[["user", "item"]].assign(label=(rng.random(2400) < 0.1).astype(int))
    history = pd.DataFrame({"user": rng.integers(0, 50, 3000), "item": rng.integers(0, 150, 3000)})
    features = pd.DataFrame({"item": np.arange(150), "f1": rng.normal(size=150),
                             "f2": rng.normal(size=150)})
    for extra in ({}, {"item_features": features}):
        args = dict(k=[5, 10], metrics=list(BEYOND_METRICS), history=history, baselines=True,
                    **extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rm.RecmetricsWarning)
            got = rm.evaluate(pred, truth, **args)
            with monkeypatch.context() as m:
                m.setattr(_kernels, "expected_similarity_sum", pair_enumerating_similarity_sum)
                reference = rm.evaluate(pred, truth, **args)
        assert (got["model"] == reference["model"]).all()
        np.testing.assert_allclose(got["value"], reference["value"], rtol=0, atol=1e-12)
        model = got["model"] == "model"          # no large tie group: the very same numbers
        assert got.loc[model, "value"].tolist() == reference.loc[model, "value"].tolist()
        differs = (got["value"] != reference["value"]).to_numpy()
        assert set(got["metric"][differs]) <= {"diversity"}


# --------------------------------------------------------------------------- issue 36: baselines


def test_rank_by_codes_orders_rows_as_rank_rows_and_keeps_equal_rows_in_order():
    # a baseline's rows ranked by the dense ranks of their scores and tiebreaks
    rng = np.random.default_rng(21)
    for trial in range(60):
        sizes = rng.integers(0, 30, int(rng.integers(1, 20)))
        lists = np.repeat(np.arange(sizes.size), sizes)
        n = lists.size
        scores = [np.zeros(n), np.round(rng.normal(size=n), 1), rng.normal(size=n),
                  rng.choice([-0.0, 0.0, 1.0, np.inf, -np.inf], n)][trial % 4]
        tiebreak = None if trial % 3 == 0 else rng.integers(0, 3, n).astype(float)
        _, codes = np.unique(-scores, return_inverse=True)
        n_codes = int(codes.max(initial=0)) + 1
        if tiebreak is not None:
            tie_codes, n_ties = _kernels.descending_codes(tiebreak)
            assert np.array_equal(tie_codes, np.unique(-tiebreak, return_inverse=True)[1])
            codes, n_codes = codes * n_ties + tie_codes, n_codes * n_ties
        order = _kernels.rank_by_codes(lists, sizes.size, codes, n_codes)
        if n == 0:
            assert order.size == 0
            continue
        expected, _ = _kernels.rank_rows(lists, scores, sizes.size, tiebreak=tiebreak)
        assert np.array_equal(np.sort(order), np.arange(n))
        assert np.array_equal(lists[order], lists[expected])
        assert np.array_equal(scores[order], scores[expected])
        if tiebreak is not None:
            assert np.array_equal(tiebreak[order], tiebreak[expected])
        # rows of one list, score and tiebreak: in their own order
        same = (lists[order][1:] == lists[order][:-1]) & (scores[order][1:] == scores[order][:-1])
        if tiebreak is not None:
            same &= tiebreak[order][1:] == tiebreak[order][:-1]
        assert (order[1:][same] > order[:-1][same]).all()


def test_pick_matrix_is_scipys_coo_matrix_to_the_bit():
    from scipy import sparse

    rng = np.random.default_rng(22)
    for trial in range(100):
        n_rows, n_columns = int(rng.integers(1, 20)), int(rng.integers(1, 30))
        m = int(rng.integers(0, 150))
        rows, columns = rng.integers(0, n_rows, m), rng.integers(0, n_columns, m)
        expected = sparse.csr_matrix((np.ones(m), (rows, columns)), shape=(n_rows, n_columns))
        got = _kernels._pick_matrix(rows, columns, n_rows, n_columns)
        for name in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), name
        vectors = sparse.random(n_columns, 7, density=0.4, format="csr", random_state=trial)
        product, reference = _kernels.sparse_product(got, vectors), expected @ vectors
        assert product.data.tobytes() == reference.data.tobytes()
        assert np.array_equal(product.indices, reference.indices)


def test_top_k_of_constant_scores_is_every_row_with_probability_k_over_t():
    # a baseline's constant score: every row may enter, each list one tie group
    rng = np.random.default_rng(23)
    sizes = np.array([0, 3, 12, 40, 7])
    lists = np.repeat(np.arange(sizes.size), sizes)
    items = rng.integers(0, 50, lists.size)
    grades = (rng.random(lists.size) < 0.3).astype(float)
    top = _kernels.top_k_ranked(lists, items, np.zeros(lists.size), grades, sizes.size, 5)
    assert np.array_equal(top.lists, lists) and np.array_equal(top.items, items)
    size = np.repeat(sizes, sizes).astype(float)
    np.testing.assert_array_equal(top.size, size)
    np.testing.assert_array_equal(top.p, np.minimum(5 / size, 1.0))
    np.testing.assert_array_equal(top.slots, np.full(lists.size, 5.0))
    np.testing.assert_array_equal(top.length, np.minimum(sizes, 5))


@pytest.mark.parametrize("features", [False, True])
def test_serendipity_of_a_large_tie_group_in_closed_form_equals_the_pairs(features,
                                                                           monkeypatch):
    # issue 36: a large straddling tie group's relevant rows summed in closed form, as
    # diversity sums its pairs; with every pair enumerated instead, the same to 1e-12
    rng = np.random.default_rng(24)
    pred = pd.DataFrame({"user": np.repeat(np.arange(30), 50),
                         "item": np.concatenate([rng.choice(120, 50, replace=False)
                                                 for _ in range(30)]),
                         "score": rng.random(1500)})
    pred.loc[pred.user < 10, "score"] = 0.5          # a third of the users: one tie group
    pred.loc[pred.user.between(10, 14), "score"] = np.round(rng.random(250), 1)  # small ties
    truth = pred[["user", "item"]].assign(label=(rng.random(1500) < 0.2).astype(int))
    history = pd.DataFrame({"user": rng.integers(0, 35, 2500),
                            "item": rng.integers(0, 140, 2500)})
    extra = {"item_features": pd.DataFrame({"item": np.arange(140),
                                            "f1": rng.normal(size=140),
                                            "f2": rng.normal(size=140)})} if features else {}
    args = dict(k=[3, 10], metrics=["serendipity"], history=history, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        got = rm.evaluate_per_user(pred, truth, **args)
        with monkeypatch.context() as m:
            m.setattr(_kernels, "CLOSED_FORM_GROUP", 10**9)     # every row pair by pair
            reference = rm.evaluate_per_user(pred, truth, **args)
    for column in ("serendipity@3", "serendipity@10"):
        np.testing.assert_allclose(got[column], reference[column], rtol=0, atol=1e-12)
        tied = (got["user"] < 15).to_numpy()         # the other users: the very same numbers
        assert got[column][~tied].tolist() == reference[column][~tied].tolist()


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic"])
@pytest.mark.parametrize("ranked", [False, True])
def test_baselines_from_the_models_rows_equal_the_rescored_frames(ties, ranked):
    # issue 36: baselines=True re-scores and ranks the model's prepared rows; the numbers are
    # those of evaluate on the baseline's frame (baseline_scores), to a rounding of sums
    from recmetrics._beyond import baseline_scores

    rng = np.random.default_rng(25)
    pred = pd.DataFrame({"user": np.repeat([f"u{i}" for i in range(40)], 30),
                         "item": np.concatenate([rng.choice(90, 30, replace=False)
                                                 for _ in range(40)]),
                         "score": np.round(rng.random(1200), 2)})
    truth = pred[["user", "item"]].assign(label=(rng.random(1200) < 0.15).astype(int))
    history = pd.DataFrame({"user": rng.integers(0, 60, 3000).astype(str),
                            "item": rng.integers(0, 100, 3000)})
    rank = None
    if ranked:
        pred["rank"] = pred.groupby("user")["score"].rank(ascending=False, method="first")
        pred, rank = pred.drop(columns="score"), "rank"
    metrics = ["auc", "gauc", "ndcg", "map", "mrr"] + list(BEYOND_METRICS)
    columns = {"rank": rank} if ranked else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        table = rm.evaluate(pred, truth, k=[5, 10], metrics=metrics, history=history,
                            baselines=True, ties=ties, **columns)
        for model in ("random", "most_popular"):
            frame = baseline_scores(pred, history, model, user="user", item="item",
                                    score="score", rank=rank)
            alone = rm.evaluate(frame, truth, k=[5, 10], metrics=metrics, history=history,
                                ties=ties, **columns)
            got = table[table.model == model]
            assert got.metric.tolist() == alone.metric.tolist()
            np.testing.assert_allclose(got.value, alone.value, rtol=1e-14, atol=1e-15)
