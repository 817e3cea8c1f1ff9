"""Slices: every slice row equals evaluate / compare on the slice's users alone; Holm; disparity."""
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import recmetrics as rm
from recmetrics import cli
from recmetrics._pipeline import poisson_weights
from recmetrics._ids import user_hash

# rbp and err read max_grade (by default the whole input's top grade, which a slice alone may
# lack) and err refuses mixed-grade ties under ties="average": tested in test_frame instead
ALL_METRICS = [m for m in rm.evaluation.METRICS if m not in ("rbp", "err")]
COLUMNS = ["value", "n_users", "n_skipped", "n_without_predictions"]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_rows_equal(mine: pd.DataFrame, alone: pd.DataFrame, columns) -> None:
    """Row by row, to 1e-12, NaN equal to NaN; notes and metric names identical."""
    mine, alone = mine.reset_index(drop=True), alone.reset_index(drop=True)
    assert mine[["metric", "note"]].values.tolist() == alone[["metric", "note"]].values.tolist()
    assert mine["k"].fillna(-1).tolist() == alone["k"].fillna(-1).tolist()
    for column in columns:
        a, b = mine[column].to_numpy(float), alone[column].to_numpy(float)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=column)


@st.composite
def sliced_data(draw):
    """Few users, tied scores, users with one class, users only in truth, two attributes."""
    n_users = draw(st.integers(2, 10))
    pred, truth, users = [], [], []
    for u in range(n_users):
        n_items = draw(st.integers(0, 5))
        for i in range(n_items):
            pred.append((u, i, draw(st.sampled_from([0.1, 0.5, 0.5, 0.9]))))
            truth.append((u, i, draw(st.sampled_from([0, 0, 1, 2]))))
        if draw(st.booleans()):  # a relevant item never scored (alone: a user only in truth)
            truth.append((u, 10, 1))
        users.append((u, draw(st.sampled_from(["a", "b", "c"])), draw(st.sampled_from([0, 1]))))
    if not pred:
        pred.append((0, 0, 0.5))
        truth.append((0, 0, 0))
    return (pd.DataFrame(pred, columns=["user", "item", "score"]),
            pd.DataFrame(truth, columns=["user", "item", "label"]),
            pd.DataFrame(users, columns=["user", "group", "new"]))


def alone(pred, truth, members, **options):
    """evaluate on the given users' rows only (None when they have no scored row).

    A non-relevant truth row of a user without scores is added: it changes nothing (such a
    user is not evaluated) and keeps truth from being empty."""
    kept = pred[pred.user.isin(members)]
    if len(kept) == 0:
        return None
    judged = pd.concat([truth[truth.user.isin(members)],
                        pd.DataFrame({"user": [-1], "item": [99], "label": [0]})])
    return quiet(rm.evaluate, kept, judged, **options)


@settings(max_examples=60, deadline=None)
@given(sliced_data(), st.sampled_from([["group"], ["group", "new"]]),
       st.sampled_from(["skip", "zero"]), st.sampled_from(["average", "optimistic"]))
def test_every_slice_row_equals_evaluate_on_the_slice_alone_intervals_included(
        data, by, no_relevant, ties):
    pred, truth, users = data
    options = dict(metrics=ALL_METRICS, k=[1, 3], no_relevant=no_relevant, ties=ties, ci=0.9,
                   n_resamples=100, seed=7)
    table = quiet(rm.evaluate, pred, truth, by=by, users=users, min_slice_size=1, **options)
    everyone = quiet(rm.evaluate, pred, truth, **options)
    overall = table[(table[by] == "(all)").all(axis=1)]
    assert_rows_equal(overall, everyone, COLUMNS + ["ci_low", "ci_high"])
    present = set(pred.user) | set(truth.user[truth.label > 0])
    for key, members in users[users.user.isin(present)].groupby(by).user:
        key = key if isinstance(key, tuple) else (key,)
        mine = table[(table[by] == pd.Series(key, index=by)).all(axis=1)]
        assert mine["slice_size"].iloc[0] == len(members)
        expected = alone(pred, truth, set(members), **options)
        if expected is None:  # only users without a scored row: no ranking happened
            assert (mine["n_without_predictions"][mine.metric == "mrr"] == len(members)).all()
            continue
        assert_rows_equal(mine, expected, COLUMNS + ["ci_low", "ci_high"])


@settings(max_examples=30, deadline=None)
@given(sliced_data())
def test_a_per_user_column_of_pred_and_truth_slices_as_the_users_frame_does(data):
    pred, truth, users = data
    group = users.set_index("user").group
    with_column = pred.assign(group=pred.user.map(group))
    truth_column = truth.assign(group=truth.user.map(group))
    options = dict(metrics=["auc", "gauc", "ndcg", "mrr"], ci=0.8, n_resamples=100, seed=3)
    from_frame = quiet(rm.evaluate, pred, truth, by="group", users=users, **options)
    from_rows = quiet(rm.evaluate, with_column, truth_column, by="group", **options)
    pd.testing.assert_frame_equal(from_frame, from_rows)


def test_a_column_only_in_pred_puts_users_only_in_truth_in_the_missing_slice():
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "score": [0.9, 0.1, 0.2, 0.8],
                         "label": [1, 0, 1, 0], "group": ["x", "x", "y", "y"]})
    truth = pd.concat([pred[["user", "item", "label"]],
                       pd.DataFrame({"user": [3], "item": [1], "label": [1]})])
    table = quiet(rm.evaluate, pred.drop(columns="label"), truth, by="group", metrics=["mrr"],
                  min_slice_size=1)
    assert table[["group", "slice_size", "value", "n_without_predictions"]].values.tolist() == [
        ["(all)", 3, 0.5, 1], ["x", 1, 1.0, 0], ["y", 1, 0.5, 0], ["(missing)", 1, 0.0, 1]]


def test_crossing_of_two_columns_has_one_slice_per_combination_present():
    rng = np.random.default_rng(5)
    n = 60
    pred = pd.DataFrame({"user": np.repeat(np.arange(n), 4), "item": np.tile(np.arange(4), n),
                         "score": rng.random(4 * n), "label": rng.integers(0, 2, 4 * n)})
    users = pd.DataFrame({"user": np.arange(n), "country": np.where(np.arange(n) < 40, "DE", "FR"),
                          "plan": np.where(np.arange(n) % 2 == 0, "free", "paid")})
    users.loc[users.country == "FR", "plan"] = "free"   # (FR, paid) is absent
    table = rm.evaluate(pred, by=["country", "plan"], users=users, metrics=["ndcg"], k=2,
                        min_slice_size=1)
    assert table[["country", "plan", "slice_size"]].values.tolist() == [
        ["(all)", "(all)", 60], ["DE", "free", 20], ["DE", "paid", 20], ["FR", "free", 20]]
    members = users.user[(users.country == "DE") & (users.plan == "paid")]
    expected = rm.evaluate(pred[pred.user.isin(members)], metrics=["ndcg"], k=2)
    assert table.value.iloc[2] == pytest.approx(expected.value.iloc[0], abs=1e-12)


def test_small_slices_are_kept_and_marked_with_a_note():
    pred = pd.DataFrame({"user": np.repeat(np.arange(40), 2), "item": np.tile([1, 2], 40),
                         "score": np.tile([0.9, 0.1], 40), "label": np.tile([1, 0], 40)})
    users = pd.DataFrame({"user": np.arange(40), "group": ["big"] * 35 + ["tiny"] * 5})
    table = rm.evaluate(pred, by="group", users=users, metrics=["mrr"])
    assert table[["group", "slice_size", "small_slice"]].values.tolist() == [
        ["(all)", 40, False], ["big", 35, False], ["tiny", 5, True]]
    assert any("fewer than 30 users" in note and "group=tiny" in note
               for note in table.attrs["notes"])
    table = rm.evaluate(pred, by="group", users=users, metrics=["mrr"], min_slice_size=5)
    assert not table.small_slice.any()


def literal_activity(counts, n_buckets=4):
    """Buckets [lo, hi) at the rounded-up quantiles, written out."""
    inner = sorted({int(np.ceil(np.quantile(counts, q / n_buckets))) for q in range(1, n_buckets)})
    edges = sorted({min(counts), *[e for e in inner if min(counts) <= e <= max(counts)],
                    max(counts) + 1})
    labels = []
    for c in counts:
        b = max(i for i in range(len(edges) - 1) if edges[i] <= c)
        labels.append(f"[{edges[b]}, {edges[b + 1]})")
    return labels


def test_activity_buckets_users_by_their_number_of_scored_rows():
    counts = [1, 2, 2, 3, 5, 8, 8, 13, 21, 34, 1, 4]
    rows = [(u, i, 0.5 + 0.01 * i, int(i == 0)) for u, c in enumerate(counts) for i in range(c)]
    pred = pd.DataFrame(rows, columns=["user", "item", "score", "label"])
    table = rm.evaluate(pred, by="activity", metrics=["mrr"], min_slice_size=1)
    expected = pd.Series(literal_activity(counts)).value_counts()
    got = table[table.activity != "(all)"].set_index("activity").slice_size
    assert got.to_dict() == expected.to_dict()
    lows = [int(label[1:].split(",")[0]) for label in got.index]
    assert lows == sorted(lows)      # buckets listed from the least active


def holm(p_values):
    """Holm's step-down, written out: sort, multiply by m - i, running maximum, cap at 1."""
    p = [(value, i) for i, value in enumerate(p_values) if not np.isnan(value)]
    p.sort()
    m = len(p)
    out = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (value, i) in enumerate(p):
        running = max(running, min(1.0, (m - rank) * value))
        out[i] = running
    return out


def compare_data(seed=11, n=90):
    rng = np.random.default_rng(seed)
    truth = pd.DataFrame({"user": np.repeat(np.arange(n), 5), "item": np.tile(np.arange(5), n),
                          "label": (rng.random(5 * n) < 0.3).astype(int)})
    a = truth[["user", "item"]].assign(score=rng.random(5 * n))
    b = a.assign(score=a.score + 0.4 * truth.label * (truth.user % 3 != 0))
    users = pd.DataFrame({"user": np.arange(n), "cohort": np.array(["old", "mid", "new"])[
        np.arange(n) % 3]})
    return a, b, truth, users


def test_compare_by_slice_equals_compare_alone_and_holm_is_the_literal_step_down():
    a, b, truth, users = compare_data()
    options = dict(metrics=["gauc", "mrr", "ndcg"], k=3, n_resamples=500, seed=4)
    table = quiet(rm.compare, a, b, truth, by="cohort", users=users, **options)
    assert table.cohort.tolist()[:3] == ["(all)"] * 3
    for cohort, members in users.groupby("cohort").user:
        keep = lambda f, members=members: f[f.user.isin(members)]  # noqa: E731
        expected = quiet(rm.compare, keep(a), keep(b), keep(truth), **options)
        mine = table[table.cohort == cohort].reset_index(drop=True)
        for column in ["value_a", "value_b", "difference", "p_ttest", "p_randomization",
                       "n_users"]:
            np.testing.assert_allclose(mine[column].to_numpy(float),
                                       expected[column].to_numpy(float), rtol=1e-12,
                                       equal_nan=True)
    sliced = table[table.cohort != "(all)"]
    for _, group in sliced.groupby(["metric", sliced.k.fillna(-1)]):
        for column in ["p_ttest", "p_randomization"]:
            np.testing.assert_allclose(group[f"{column}_adjusted"].to_numpy(float),
                                       holm(group[column].to_numpy(float)), equal_nan=True)
    whole = table[table.cohort == "(all)"]
    assert (whole.p_randomization_adjusted == whole.p_randomization).all()
    columns = list(table.columns)
    assert columns.index("p_ttest_adjusted") == columns.index("p_ttest") + 1
    # B is better on 'mid' and 'new' only (the planted effect)
    verdicts = table[table.metric == "mrr"].set_index("cohort").verdict_adjusted
    assert verdicts["new"] == "B better" and verdicts["old"] != "B better"


def test_disparity_gap_and_its_interval_from_the_same_resamples():
    rng = np.random.default_rng(2)
    n = 120
    pred = pd.DataFrame({"user": np.repeat(np.arange(n), 6), "item": np.tile(np.arange(6), n),
                         "score": rng.random(6 * n), "label": (rng.random(6 * n) < 0.3).astype(int)})
    users = pd.DataFrame({"user": np.arange(n), "g": np.array(list("pqr"))[np.arange(n) % 3]})
    pred.loc[pred.user % 3 == 0, "score"] += 0.5 * pred.label   # slice p is served best
    table = quiet(rm.evaluate, pred, by="g", users=users, metrics=["mrr"], ci=0.9,
                  n_resamples=400, seed=1, min_slice_size=10)
    gaps = rm.disparity(table)
    row = gaps.iloc[0]
    values = table[table.g != "(all)"].set_index("g").value
    assert row.largest == f"g={values.idxmax()}" and row.smallest == f"g={values.idxmin()}"
    assert row.gap == pytest.approx(values.max() - values.min(), abs=1e-12)
    assert row.ratio == pytest.approx(values.min() / values.max(), abs=1e-12)
    # literal: per resample, each slice's weighted mean of per-user RR, then the gap
    per_user = rm.evaluate_per_user(pred, metrics=["mrr"]).merge(users, on="user")
    w = poisson_weights(user_hash(per_user.user.to_numpy()), 1, 0, 400)
    rr = per_user.mrr.to_numpy()
    counted = ~np.isnan(rr)

    def slice_means(name):
        rows = (per_user.g.to_numpy() == name) & counted
        return (np.nan_to_num(rr[rows]) @ w[rows]) / w[rows].sum(axis=0)

    literal = slice_means(values.idxmax()) - slice_means(values.idxmin())
    low, high = np.quantile(literal[np.isfinite(literal)], [0.05, 0.95])
    assert row.gap_ci_low == pytest.approx(low, abs=1e-12)
    assert row.gap_ci_high == pytest.approx(high, abs=1e-12)


def test_disparity_leaves_small_slices_out_unless_asked():
    pred = pd.DataFrame({"user": np.repeat(np.arange(40), 2), "item": np.tile([1, 2], 40),
                         "score": np.r_[np.tile([0.9, 0.1], 35), np.tile([0.1, 0.9], 5)],
                         "label": np.tile([1, 0], 40)})
    users = pd.DataFrame({"user": np.arange(40), "group": ["big"] * 35 + ["tiny"] * 5})
    table = rm.evaluate(pred, by="group", users=users, metrics=["mrr"])
    assert rm.disparity(table).n_slices.tolist() == [1]
    assert rm.disparity(table, include_small=True)[["smallest", "gap"]].values.tolist() == [
        ["group=tiny", 0.5]]


def bad_inputs():
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "score": [0.9, 0.1, 0.2, 0.8],
                         "label": [1, 0, 1, 0], "g": ["x", "y", "y", "y"]})
    users = pd.DataFrame({"user": [1, 2, 2], "g": ["x", "y", "z"]})
    return pred, users


BAD = [
    (dict(by="country"), r"by names 'country', which is not a column of pred"),
    (dict(by="g"), r"by column 'g' of pred varies within a user \(1 has 'x' and 'y'\)"),
    (dict(by="h", users="dup"), r"users has 1 duplicate user\(s\)"),
    (dict(by=["g", "g"]), r"by=\['g', 'g'\] names a column twice"),
    (dict(by=3), r"by=3 must be a column name"),
    (dict(by="activity", min_slice_size=0), r"min_slice_size=0 must be a whole number"),
    (dict(users="dup"), r"users= gives attributes to slice by; name them with by="),
    (dict(by="activity", ci=0.9, bootstrap="multinomial"), r"bootstrap='multinomial' cannot"),
]


@pytest.mark.parametrize("options, message", BAD)
def test_bad_input_is_refused_naming_the_argument(options, message):
    pred, users = bad_inputs()
    if options.get("users") == "dup":
        options = dict(options, users=users)
    with pytest.raises(ValueError, match=message):
        rm.evaluate(pred, **options)


def test_cli_evaluate_by_writes_the_slice_columns(tmp_path, capsys):
    pred = pd.DataFrame({"user": ["u1", "u1", "u2", "u2", "u3", "u3"], "item": [1, 2] * 3,
                         "score": [0.9, 0.1, 0.2, 0.8, 0.6, 0.7], "label": [1, 0] * 3,
                         "plan": ["free", "free", "paid", "paid", "paid", "paid"]})
    users = pd.DataFrame({"user": ["u1", "u2", "u3"], "country": ["DE", "DE", "007"]})
    pred.to_csv(tmp_path / "pred.csv", index=False)
    users.to_csv(tmp_path / "users.csv", index=False)
    code = cli.main(["evaluate", str(tmp_path / "pred.csv"), "--by", "country", "plan",
                     "--users", str(tmp_path / "users.csv"), "--min-slice-size", "2",
                     "--metrics", "mrr", "--format", "csv", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    written = pd.read_csv(io.StringIO(out), dtype={"country": str})
    expected = rm.evaluate(pred, by=["country", "plan"], users=users.assign(
        country=users.country.astype(str)), metrics=["mrr"], min_slice_size=2)
    assert written[["country", "plan", "slice_size", "small_slice", "value"]].values.tolist() == \
        expected[["country", "plan", "slice_size", "small_slice", "value"]].values.tolist()
    assert "007" in written.country.tolist()      # an id-like attribute stays as written


def literal_pairs(positives, negatives):
    """Every (positive, negative) pair compared: wins and wins-or-ties."""
    wins = sum(1 for p in positives for q in negatives if p > q)
    ties = sum(1 for p in positives for q in negatives if p == q)
    return wins, wins + ties


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 0.1, 0.5, 0.5 + 1e-12, 0.5 - 1e-12, 1e-300, 1e40,
                                 -1e40, 1e39, np.inf, -np.inf, 0.3, 0.30000001]),
                min_size=1, max_size=30),
       st.lists(st.booleans(), min_size=30, max_size=30), st.floats(0, 0.05))
def test_pair_counts_through_float32_equal_every_pair_compared(values, labels, share):
    """float32 collisions (values 1e-12 apart, -0.0 and 0.0, overflow to inf) are counted in
    float64, by the grey path or by the float64 sort, whichever the share picks."""
    from recmetrics import _slices as slices
    scores = np.array(values)
    pos = np.array(labels[:scores.size])
    original = slices.FLOAT32_COLLISIONS
    slices.FLOAT32_COLLISIONS = share
    try:
        got = slices.pair_counts(np.sort(scores[pos]), scores[~pos])
    finally:
        slices.FLOAT32_COLLISIONS = original
    assert got == literal_pairs(scores[pos], scores[~pos])


def test_pair_counts_of_continuous_scores_equal_the_float64_count():
    from recmetrics import _kernels
    from recmetrics import _slices as slices
    rng = np.random.default_rng(0)
    scores = rng.random(50_000)
    scores[1::97] = np.nextafter(scores[0::97][:scores[1::97].size], 2)   # one ulp apart
    scores[2::89] = scores[0::89][:scores[2::89].size]                     # exact ties
    pos = rng.random(scores.size) < 0.05
    expected = _kernels.pair_counts(np.sort(scores[pos]), np.sort(scores[~pos]))
    assert slices.pair_counts(np.sort(scores[pos]), scores[~pos]) == expected


def test_cli_compare_by_writes_holm_adjusted_columns(tmp_path, capsys):
    a, b, truth, users = compare_data()
    for name, frame in (("a", a), ("b", b), ("truth", truth), ("users", users)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    code = cli.main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--truth",
                     str(tmp_path / "truth.csv"), "--by", "cohort", "--users",
                     str(tmp_path / "users.csv"), "--metrics", "mrr", "--n-resamples", "500",
                     "--format", "csv", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    written = pd.read_csv(io.StringIO(out))
    expected = quiet(rm.compare, a, b, truth, by="cohort", users=users, metrics=["mrr"],
                     n_resamples=500)
    assert written.cohort.tolist() == expected.cohort.tolist()
    np.testing.assert_allclose(written.p_randomization_adjusted,
                               expected.p_randomization_adjusted, rtol=1e-12)


@pytest.mark.parametrize("taken", ["(all)", "(missing)"])
@pytest.mark.parametrize("where", ["pred", "users"])
def test_a_slice_value_written_as_the_kits_own_label_is_refused(taken, where):
    """Bug (issue 35): slice values literally "(all)" or "(missing)" could not be told from
    the kit's own rows: rm.disparity dropped the real "(all)" slice and reported "(missing)"
    (the data's and the users without a value) as both the best and the worst slice. Such a
    value is now refused, naming the column and how to rename it; renamed, it is a slice."""
    pred = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [1, 2] * 3,
                         "score": [0.9, 0.1, 0.2, 0.8, 0.7, 0.6], "label": [1, 0] * 3})
    values = {1: taken, 2: "b", 3: None}
    options: dict = {"metrics": ["mrr"], "by": "group", "min_slice_size": 1}
    if where == "pred":
        pred["group"] = pred.user.map(values)
    else:
        options["users"] = pd.DataFrame({"user": [1, 2, 3], "group": [taken, "b", None]})
    with pytest.raises(ValueError, match=rf"by column 'group' holds the value "
                                         rf"'{re.escape(taken)}'.*rename that value first"):
        rm.evaluate(pred, **options)
    if where == "pred":
        pred["group"] = pred["group"].replace(taken, taken.strip("()"))
    else:
        options["users"]["group"] = options["users"]["group"].replace(taken, taken.strip("()"))
    table = rm.evaluate(pred, **options)
    assert table.group.tolist() == ["(all)", taken.strip("()"), "b", "(missing)"] \
        if taken == "(all)" else table.group.tolist() == ["(all)", "b", "missing", "(missing)"]
    gaps = rm.disparity(table)
    assert gaps.n_slices.tolist() == [3]
    assert gaps.largest.iloc[0] != gaps.smallest.iloc[0]


def test_compare_by_refuses_the_kits_own_label_too():
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2] * 2, "score": [0.9, 0.1, 0.2, 0.8],
                         "label": [1, 0] * 2, "group": ["(all)", "(all)", "b", "b"]})
    with pytest.raises(ValueError, match="by column 'group' holds the value '\\(all\\)'"):
        rm.compare(pred, pred.assign(score=-pred.score), by="group", min_slice_size=1,
                   n_resamples=100)
