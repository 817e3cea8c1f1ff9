"""recmetrics.plots: each figure draws the numbers of the matching metric function.

Headless: the Agg backend is chosen here, before pyplot is imported. Every test runs with
``plt.show`` replaced by a function that fails, and the figures drawn from the shipped sample
data are written as PNG files into a temporary folder (one per plotting function).
"""
import re
import subprocess
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

import recmetrics as rm
from recmetrics import plots


@pytest.fixture(autouse=True)
def no_show_and_closed_figures(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a recmetrics plot called plt.show()")

    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def sample():
    """The shipped click log: two models' scores of the same rows, with the labels."""
    truth = pd.read_csv(rm.DATA_DIR / "sample_truth.csv")
    a = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv").merge(truth, on=["user", "item"])
    b = pd.read_csv(rm.DATA_DIR / "sample_model_b.csv").merge(truth, on=["user", "item"])
    assert len(a) == len(truth) and (a[["user", "item"]].values == b[["user", "item"]].values).all()
    return {"a": a, "b": b, "y": a["label"].to_numpy(),
            "scores": {"model A": a["score"].to_numpy(), "model B": b["score"].to_numpy()}}


def new_axes() -> Axes:
    return plt.subplots()[1]


def line(ax: Axes, label_start: str):
    """The one line whose legend label starts with ``label_start``."""
    found = [ln for ln in ax.get_lines() if ln.get_label().startswith(label_start)]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def legend_texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# --------------------------------------------------------------------------- literal references


def gain_literal(y_true, y_score):
    """Target rows by descending score, a tie at a time: (share targeted, share of positives)."""
    n, positives = len(y_true), sum(y_true)
    points = [(0.0, 0.0)]
    for threshold in sorted(set(y_score), reverse=True):
        chosen = [t for t, s in zip(y_true, y_score) if s >= threshold]
        points.append((len(chosen) / n, sum(chosen) / positives))
    return points


def bin_counts_literal(y_prob, edges):
    """Rows per bin, bin b holding (edges[b], edges[b+1]] and the first bin also edges[0]."""
    counts = [0] * (len(edges) - 1)
    for p in y_prob:
        b = next(i for i in range(len(edges) - 1) if p <= edges[i + 1] or i == len(edges) - 2)
        counts[b] += 1
    return counts


# --------------------------------------------------------------------------- ROC and PR


def test_roc_lines_are_roc_curve_and_the_legend_shows_roc_auc(sample):
    ax = new_axes()
    assert plots.roc_curve(sample["y"], sample["scores"], ax=ax) is ax
    for name, scores in sample["scores"].items():
        fpr, tpr, _ = rm.roc_curve(sample["y"], scores)
        drawn = line(ax, name)
        np.testing.assert_array_equal(drawn.get_xdata(), fpr)
        np.testing.assert_array_equal(drawn.get_ydata(), tpr)
        assert f"{rm.roc_auc(sample['y'], scores):.3f}" in drawn.get_label()
        assert any(f"{rm.roc_auc(sample['y'], scores):.3f}" in t for t in legend_texts(ax))
    chance = line(ax, "chance")
    assert chance.get_xydata().tolist() == [[0, 0], [1, 1]]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == "ROC curve"


def test_curves_of_two_data_sets_on_one_axes_get_their_own_colours_and_one_reference():
    """Two calls on one Axes (two data sets, e.g. 50% and 1% positives): the second call's
    curves continue the colour cycle; a reference line with the same label is drawn once."""
    rng = np.random.default_rng(7)
    y1, y2 = rng.integers(0, 2, 200), (rng.random(400) < 0.05).astype(int)
    s1, s2 = y1 + rng.normal(0, 1, 200), y2 + rng.normal(0, 1, 400)
    for draw, reference in ((plots.roc_curve, "chance (AUC = 0.500)"),
                            (plots.gain_curve, "random targeting"),
                            (plots.lift_curve, "random targeting (lift 1)")):
        fig, ax = plt.subplots()
        draw(y1, s1, ax=ax, name="balanced")
        draw(y2, s2, ax=ax, name="rare")
        models = [line for line in ax.get_lines() if line.get_label().startswith(("balanced", "rare"))]
        assert [line.get_color() for line in models] == ["C0", "C1"], draw.__name__
        assert sum(line.get_label() == reference for line in ax.get_lines()) == 1, draw.__name__
        plt.close(fig)
    fig, ax = plt.subplots()
    plots.precision_recall_curve(y1, s1, ax=ax, name="balanced")
    plots.precision_recall_curve(y2, s2, ax=ax, name="rare")
    bases = sorted(line.get_ydata()[0] for line in ax.get_lines()
                   if line.get_label().startswith("base rate"))
    assert bases == pytest.approx(sorted([y1.mean(), y2.mean()]))  # one base rate per data set
    assert [line.get_color() for line in ax.get_lines() if line.get_label().startswith(
        ("balanced", "rare"))] == ["C0", "C1"]
    plt.close(fig)


def test_roc_bootstrap_band_is_seeded_and_surrounds_the_curve(sample):
    y, scores = sample["y"][:3000], sample["scores"]["model A"][:3000]

    def band(seed):
        ax = plots.roc_curve(y, scores, ax=new_axes(), ci=0.9, n_resamples=100, seed=seed)
        (poly,) = ax.collections
        return ax, poly.get_paths()[0].vertices

    ax, first = band(0)
    np.testing.assert_array_equal(first, band(0)[1])
    assert not np.array_equal(first, band(1)[1])
    assert any("90% bootstrap band (100 resamples)" in t for t in legend_texts(ax))
    # the band's lower and upper edges bracket the curve at most false positive rates
    fpr, tpr, _ = rm.roc_curve(y, scores)
    grid = np.linspace(0, 1, 201)
    curve = np.interp(grid, fpr, tpr)
    low, high = first[1:202, 1], first[203:404, 1][::-1]
    np.testing.assert_allclose(first[1:202, 0], grid)
    assert np.mean((low <= curve) & (curve <= high)) > 0.95


def test_pr_lines_are_precision_recall_curve_with_ap_and_the_base_rate(sample):
    ax = new_axes()
    assert plots.precision_recall_curve(sample["y"], sample["scores"], ax=ax) is ax
    for name, scores in sample["scores"].items():
        precision, recall, _ = rm.precision_recall_curve(sample["y"], scores)
        drawn = line(ax, name)
        np.testing.assert_array_equal(drawn.get_xdata(), recall)
        np.testing.assert_array_equal(drawn.get_ydata(), precision)
        assert drawn.get_drawstyle() == "steps-post"
        assert f"AP = {rm.pr_auc(sample['y'], scores):.3f}" in drawn.get_label()
    base = line(ax, "base rate")
    assert base.get_ydata()[0] == pytest.approx(sample["y"].mean())
    assert f"{sample['y'].mean():.3f}" in base.get_label()


def test_the_step_area_under_the_drawn_pr_line_is_pr_auc(sample):
    """steps-post over decreasing recall holds each threshold's precision over the recall it adds."""
    y, scores = sample["y"], sample["scores"]["model B"]
    drawn = line(plots.precision_recall_curve(y, scores, ax=new_axes()), "model")
    recall, precision = drawn.get_xdata(), drawn.get_ydata()
    area = sum((recall[i] - recall[i + 1]) * precision[i] for i in range(len(recall) - 1))
    assert area == pytest.approx(rm.pr_auc(y, scores), abs=1e-12)


# scores with infinities and the largest doubles, as the report is given them; by hand: the
# positives inf, -1.7e308, 0.5 beat 5, 1 (-inf) and 3 of the 5 negatives: AUC = 9 / 15
EDGE_Y = [1, 0, 0, 0, 1, 0, 1, 0]
EDGE_SCORES = [np.inf, 0.2, -np.inf, 1.7e308, -1.7e308, 1e308, 0.5, 0.4]


def order_literal(scores):
    """Each score's place among the distinct scores (1 = lowest), by sorting: the same order."""
    distinct = sorted(set(scores))
    return [distinct.index(s) + 1 for s in scores]


def test_roc_of_infinite_and_huge_scores_is_the_curve_of_their_order():
    ax = plots.roc_curve(EDGE_Y, EDGE_SCORES, ax=new_axes())
    fpr, tpr, _ = rm.roc_curve(EDGE_Y, order_literal(EDGE_SCORES))
    drawn = line(ax, "model")
    np.testing.assert_array_equal(drawn.get_xdata(), fpr)
    np.testing.assert_array_equal(drawn.get_ydata(), tpr)
    positives = [s for s, y in zip(EDGE_SCORES, EDGE_Y) if y]
    negatives = [s for s, y in zip(EDGE_SCORES, EDGE_Y) if not y]
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    assert sum(pairs) / len(pairs) == pytest.approx(9 / 15)
    assert drawn.get_label() == f"model (AUC = {9 / 15:.3f})"


def test_pr_of_infinite_scores_is_precision_recall_curve():
    ax = plots.precision_recall_curve(EDGE_Y, EDGE_SCORES, ax=new_axes())
    precision, recall, _ = rm.precision_recall_curve(EDGE_Y, EDGE_SCORES)
    drawn = line(ax, "model")
    np.testing.assert_array_equal(drawn.get_xdata(), recall)
    np.testing.assert_array_equal(drawn.get_ydata(), precision)


@pytest.mark.parametrize("labels, what", [([1, 1, 1], "positives (1)"), ([0, 0], "negatives (0)")])
def test_roc_of_one_class_warns_and_says_there_is_no_curve(labels, what):
    with pytest.warns(rm.RecmetricsWarning, match=f"only {re.escape(what)}"):
        ax = plots.roc_curve(labels, [0.5] * len(labels), ax=new_axes())
    assert ax.get_lines() == [] and ax.get_legend() is None
    assert plots.describe(ax).startswith(f"No ROC curve: y_true holds only {what} "
                                         f"({len(labels)} rows); the curve needs both classes.")
    assert "No ROC curve" in ax.texts[0].get_text()


def test_pr_without_a_positive_warns_and_with_positives_only_is_precision_one():
    with pytest.warns(rm.RecmetricsWarning, match="No precision-recall curve"):
        ax = plots.precision_recall_curve([0, 0, 0], [0.1, 0.2, 0.3], ax=new_axes())
    assert ax.get_lines() == [] and plots.describe(ax).startswith("No precision-recall curve")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plots.precision_recall_curve([1, 1], [0.1, 0.2], ax=new_axes())
    assert set(line(ax, "model").get_ydata()) == {1.0}


# --------------------------------------------------------------------------- calibration


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_points_are_calibration_curve_and_the_bars_count_the_bins(sample, strategy):
    y, probs = sample["y"], sample["scores"]["model A"]
    ax = new_axes()
    assert plots.calibration(y, probs, ax=ax, n_bins=8, strategy=strategy) is ax
    prob_true, prob_pred = rm.calibration_curve(y, probs, n_bins=8, strategy=strategy)
    drawn = line(ax, "model")
    np.testing.assert_array_equal(drawn.get_xdata(), prob_pred)
    np.testing.assert_array_equal(drawn.get_ydata(), prob_true)
    ece = rm.expected_calibration_error(y, probs, n_bins=8)
    assert f"ECE = {ece:.3f}" in drawn.get_label()
    (twin,) = [other for other in ax.figure.axes if other is not ax]
    bars = twin.patches
    edges = (np.linspace(0, 1, 9) if strategy == "uniform"
             else np.percentile(probs, np.linspace(0, 100, 9)))
    np.testing.assert_allclose([b.get_x() for b in bars], edges[:-1])
    np.testing.assert_allclose([b.get_width() for b in bars], np.diff(edges))
    assert [int(b.get_height()) for b in bars] == bin_counts_literal(probs.tolist(), edges.tolist())
    assert ("equal-width" if strategy == "uniform" else "equal-count") in ax.get_title()


def test_calibration_of_two_models_draws_both(sample):
    ax = plots.calibration(sample["y"], sample["scores"], ax=new_axes())
    for name, probs in sample["scores"].items():
        np.testing.assert_array_equal(line(ax, name).get_ydata(),
                                      rm.calibration_curve(sample["y"], probs)[0])


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("stat", ["density", "count"])
def test_score_distributions_are_the_histograms_of_each_class(sample, stat):
    y, scores = sample["y"], sample["scores"]["model A"]
    ax = plots.score_distributions(y, scores, ax=new_axes(), bins=12, stat=stat)
    edges = np.histogram_bin_edges(scores, 12)
    for patch, label in ((ax.patches[0], 1), (ax.patches[2], 0)):
        chosen = scores[y == label]
        counts = np.array([np.count_nonzero((chosen >= lo) & ((chosen < hi) | (hi == edges[-1])))
                           for lo, hi in zip(edges[:-1], edges[1:])])
        expected = counts / (chosen.size * np.diff(edges)) if stat == "density" else counts
        np.testing.assert_allclose(patch.get_data().values, expected, rtol=1e-12)
        np.testing.assert_array_equal(patch.get_data().edges, edges)
    assert any(f"{(y == 1).sum():,} rows" in t for t in legend_texts(ax))


def test_score_distributions_leave_infinite_scores_out_and_scale_huge_ones():
    ax = plots.score_distributions(EDGE_Y, EDGE_SCORES, ax=new_axes(), bins=4, stat="count")
    finite = [(y, s / 1e308) for y, s in zip(EDGE_Y, EDGE_SCORES) if abs(s) != np.inf]
    edges = np.linspace(-1.7, 1.7, 5)  # numpy's equal bins over the finite range, in 1e308
    np.testing.assert_allclose(ax.patches[0].get_data().edges, edges)
    for patch, label in ((ax.patches[0], 1), (ax.patches[2], 0)):
        chosen = [s for y, s in finite if y == label]
        counts = [sum(1 for v in chosen if lo <= v < hi or (hi == edges[-1] and v == hi))
                  for lo, hi in zip(edges[:-1], edges[1:])]
        assert patch.get_data().values.tolist() == counts
    assert "in units of 1e308" in ax.get_xlabel() and "2 infinite" in ax.get_xlabel()
    assert "not shown: 2 infinite" in plots.describe(ax)


def test_score_distributions_trim_cuts_the_tails_before_binning(sample):
    y, scores = sample["y"], sample["scores"]["model A"]
    ax = plots.score_distributions(y, scores, ax=new_axes(), bins=10, stat="count", trim=0.01)
    low, high = np.quantile(scores, [0.01, 0.99])
    kept = (scores >= low) & (scores <= high)
    np.testing.assert_allclose(ax.patches[0].get_data().edges,
                               np.linspace(scores[kept].min(), scores[kept].max(), 11))
    assert ax.patches[0].get_data().values.sum() == int((kept & (y == 1)).sum())
    assert ax.patches[2].get_data().values.sum() == int((kept & (y == 0)).sum())
    assert "0.01 of each tail cut" in ax.get_xlabel()


def test_per_user_distribution_counts_users_and_draws_their_mean(sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        users = rm.evaluate_per_user(sample["a"], k=10, metrics=["ndcg"])
    ax = plots.per_user_distribution(users, "ndcg@10", ax=new_axes(), bins=10)
    values = users["ndcg@10"].dropna().to_numpy()
    (patch,) = ax.patches
    literal = [sum(1 for v in values if lo <= v < hi or (hi == 1.0 and v == 1.0))
               for lo, hi in zip(np.linspace(0, 1, 11)[:-1], np.linspace(0, 1, 11)[1:])]
    assert patch.get_data().values.tolist() == literal
    mean_line = line(ax, "mean over users")
    table = rm.evaluate(sample["a"], k=10, metrics=["ndcg"])
    assert mean_line.get_xdata()[0] == pytest.approx(table["value"].iloc[0], abs=1e-12)
    n_missing = int(users["ndcg@10"].isna().sum())
    assert f"{len(values):,} users ({n_missing:,} without a value left out)" in ax.get_title()


# --------------------------------------------------------------------------- tables


def test_metric_vs_k_draws_each_metric_of_the_evaluate_table(sample):
    table = rm.evaluate(sample["a"], k=[1, 5, 10, 20], metrics=["precision", "ndcg", "mrr"],
                        ci=0.9, n_resamples=100)
    ax = plots.metric_vs_k(table, ax=new_axes())
    for metric in ("precision", "ndcg"):
        rows = table[table["metric"] == metric]
        drawn = line(ax, metric)
        assert drawn.get_xdata().tolist() == [1, 5, 10, 20]
        np.testing.assert_array_equal(drawn.get_ydata(), rows["value"].to_numpy())
    assert "mrr" not in legend_texts(ax)  # no cut-off
    # the error bars run from ci_low to ci_high
    segments = np.concatenate([c.get_segments() for c in ax.collections])
    lows = sorted(round(s[0][1], 12) for s in segments)
    assert lows == sorted(round(v, 12) for v in table.dropna(subset=["k"])["ci_low"])


def test_metric_vs_k_draws_an_interval_that_misses_its_value_as_it_is():
    """Bug: the report clipped error bars by hand, since a bootstrap of few resamples may give an
    interval beside the value and matplotlib refuses a negative error bar."""
    table = pd.DataFrame({"metric": ["ndcg", "ndcg"], "k": [1, 2], "value": [0.5, 0.6],
                          "ci_low": [0.55, np.nan], "ci_high": [0.7, np.nan]})
    ax = plots.metric_vs_k(table, ax=new_axes())
    (bars,) = ax.collections
    assert [s.tolist() for s in bars.get_segments()] == [[[1.0, 0.55], [1.0, 0.7]]]


def test_comparison_draws_the_differences_and_fills_the_significant_ones(sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        table = rm.compare(sample["a"], sample["b"], k=[5, 10],
                           metrics=["auc", "ndcg", "recall", "mrr"], n_resamples=500)
    ax = plots.comparison(table, ax=new_axes(), names=("A", "B"))
    points = {}
    for drawn in ax.get_lines()[1:]:  # after the line at 0
        for x, y in drawn.get_xydata():
            points[int(y)] = (x, drawn.get_label())
    y_of_row = np.arange(len(table))[::-1]
    for i, row in enumerate(table.itertuples()):
        x, label = points[y_of_row[i]]
        assert x == row.difference
        if np.isnan(row.p_randomization):
            assert label == "no paired test"
        else:
            assert label == ("p_randomization < 0.05" if row.p_randomization < 0.05
                             else "p_randomization ≥ 0.05")
    labels = {tick.get_position()[1]: tick.get_text() for tick in ax.get_yticklabels()}
    for i, row in enumerate(table.itertuples()):
        name = row.metric if pd.isna(row.k) else f"{row.metric}@{row.k}"
        assert labels[y_of_row[i]] == f"{name}: {row.value_a:.3f} → {row.value_b:.3f}"
    assert labels[len(table) - 1].startswith("auc: ")  # the first row on top


def test_comparison_draws_an_interval_for_the_difference_when_the_table_has_one():
    table = pd.DataFrame({"metric": ["ndcg", "logloss"], "k": pd.array([10, None], dtype="Int64"),
                          "value_a": [0.4, 0.5], "value_b": [0.43, 0.45],
                          "difference": [0.03, -0.05], "p_ttest": [0.3, np.nan],
                          "p_randomization": [0.2, np.nan],
                          "ci_low": [-0.01, np.nan], "ci_high": [0.07, np.nan]})
    ax = plots.comparison(table, ax=new_axes())
    (bars,) = ax.collections
    assert [s.tolist() for s in bars.get_segments()] == [[[-0.01, 1.0], [0.07, 1.0]]]
    assert line(ax, "p_randomization ≥ 0.05").get_markerfacecolor() == "white"
    assert "logloss: 0.500 → 0.450 (lower is better)" in [t.get_text() for t in ax.get_yticklabels()]


def test_forest_points_and_intervals_are_the_table_values():
    table = pd.DataFrame({"segment": ["new", "returning", "heavy"], "ndcg": [0.31, 0.52, 0.47],
                          "low": [0.25, 0.49, 0.40], "high": [0.37, 0.55, 0.54]})
    ax = plots.forest(table, ax=new_axes(), slice="segment", value="ndcg", ci_low="low",
                      ci_high="high", overall=0.48, metric="NDCG@10")
    points = line(ax, "NDCG@10")
    assert points.get_xdata().tolist() == [0.31, 0.52, 0.47]
    assert points.get_ydata().tolist() == [2, 1, 0]  # first row on top
    (bars,) = ax.collections
    assert [s.tolist() for s in bars.get_segments()] == [[[0.25, 2], [0.37, 2]], [[0.49, 1], [0.55, 1]],
                                                         [[0.40, 0], [0.54, 0]]]
    assert line(ax, "overall 0.480").get_xdata()[0] == 0.48
    assert [t.get_text() for t in ax.get_yticklabels()] == ["new", "returning", "heavy"]


def test_per_user_scatter_points_are_the_per_user_values_of_both_models(sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        a = rm.evaluate_per_user(sample["a"], k=10, metrics=["ndcg"])
        b = rm.evaluate_per_user(sample["b"], k=10, metrics=["ndcg"])
        compared = rm.compare(sample["a"], sample["b"], k=10, metrics=["ndcg"], n_resamples=100)
    b = b.iloc[::-1]  # another order: the points pair users, not rows
    ax = plots.per_user_scatter(a, b, "ndcg@10", ax=new_axes(), names=("A", "B"))
    of_b = dict(zip(b["user"], b["ndcg@10"]))
    expected = [[va, of_b[u]] for u, va in zip(a["user"], a["ndcg@10"])
                if va == va and of_b[u] == of_b[u]]  # x == x: not NaN
    assert ax.collections[0].get_offsets().tolist() == expected
    above = sum(1 for x, y in expected if y > x)
    below = sum(1 for x, y in expected if y < x)
    assert legend_texts(ax)[0] == (f"{len(expected):,} users: B higher for {above:,},\nA higher "
                                   f"for {below:,}, equal for {len(expected) - above - below:,}")
    mean_a = sum(x for x, _ in expected) / len(expected)
    mean_b = sum(y for _, y in expected) / len(expected)
    row = compared.iloc[0]
    assert (mean_a, mean_b) == (pytest.approx(row.value_a, abs=1e-12),
                                pytest.approx(row.value_b, abs=1e-12))
    assert legend_texts(ax)[1] == f"equal; means: A {row.value_a:.3f},\nB {row.value_b:.3f}"


# --------------------------------------------------------------------------- gain and lift


def test_gain_curve_is_the_literal_targeting_curve(sample):
    y, scores = sample["y"][:400], np.round(sample["scores"]["model A"][:400], 2)  # many ties
    drawn = line(plots.gain_curve(y, scores, ax=new_axes()), "model")
    np.testing.assert_allclose(drawn.get_xydata(), gain_literal(y.tolist(), scores.tolist()),
                               rtol=0, atol=1e-15)


def test_lift_is_gain_over_share_and_ends_at_one_one(sample):
    y, scores = sample["y"], sample["scores"]
    gain_ax = plots.gain_curve(y, scores, ax=new_axes())
    lift_ax = plots.lift_curve(y, scores, ax=new_axes())
    for name in scores:
        gain, lift = line(gain_ax, name).get_xydata(), line(lift_ax, name).get_xydata()
        assert gain[0].tolist() == [0, 0] and gain[-1].tolist() == [1, 1]
        assert lift[-1].tolist() == [1, 1]
        np.testing.assert_allclose(lift[:, 1], gain[1:, 1] / gain[1:, 0], rtol=1e-12)
    assert line(lift_ax, "random").get_ydata()[0] == 1


# --------------------------------------------------------------------------- every function


def every_plot(sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        per_user = rm.evaluate_per_user(sample["a"], k=10, metrics=["ndcg"])
        per_user_b = rm.evaluate_per_user(sample["b"], k=10, metrics=["ndcg"])
        at_k = rm.evaluate(sample["a"], k=[1, 5, 10], metrics=["recall", "ndcg"])
        compared = rm.compare(sample["a"], sample["b"], k=10, metrics=["ndcg", "mrr"],
                              n_resamples=200)
    slices = pd.DataFrame({"slice": ["small", "large"], "value": [0.6, 0.5], "ci_low": [0.55, 0.4],
                           "ci_high": [0.65, 0.6]})
    y, scores, one = sample["y"], sample["scores"], sample["scores"]["model A"]
    return {
        "roc_curve": lambda ax: plots.roc_curve(y, scores, ax=ax),
        "precision_recall_curve": lambda ax: plots.precision_recall_curve(y, scores, ax=ax),
        "calibration": lambda ax: plots.calibration(y, one, ax=ax),
        "score_distributions": lambda ax: plots.score_distributions(y, one, ax=ax),
        "per_user_distribution": lambda ax: plots.per_user_distribution(per_user, "ndcg@10", ax=ax),
        "metric_vs_k": lambda ax: plots.metric_vs_k(at_k, ax=ax),
        "comparison": lambda ax: plots.comparison(compared, ax=ax),
        "forest": lambda ax: plots.forest(slices, ax=ax, overall=0.55),
        "gain_curve": lambda ax: plots.gain_curve(y, scores, ax=ax),
        "lift_curve": lambda ax: plots.lift_curve(y, scores, ax=ax),
        "per_user_scatter": lambda ax: plots.per_user_scatter(per_user, per_user_b, "ndcg@10",
                                                              ax=ax),
    }


def test_every_function_is_tested_here(sample):
    assert set(every_plot(sample)) | {"describe"} == set(plots.__all__)


def test_every_plot_draws_on_a_new_figure_or_the_given_axes_and_saves(sample, tmp_path):
    for name, draw in every_plot(sample).items():
        before = set(plt.get_fignums())
        made = draw(None)
        assert isinstance(made, Axes) and set(plt.get_fignums()) - before == {made.figure.number}
        given = new_axes()
        assert draw(given) is given, name
        assert given.get_title() and given.get_xlabel() and given.get_legend() is not None, name
        text = plots.describe(given)
        assert text.split(". ")[0] and given.get_title().split("\n")[0] in text, name
        made.figure.savefig(tmp_path / f"{name}.png", dpi=60)
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        plt.close("all")
    assert len(list(tmp_path.glob("*.png"))) == len(plots.__all__) - 1


def test_describe_gives_the_summary_title_axes_and_legend():
    ax = plots.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], ax=new_axes(), name="ranker")
    text = plots.describe(ax)
    assert text.startswith("ROC curve of 1 model: ranker AUC 0.750.")
    assert "Title: ROC curve." in text and "x axis: false positive rate" in text
    assert "Legend: ranker (AUC = 0.750); chance (AUC = 0.500)." in text
    other = new_axes()
    other.set(title="mine", xlabel="t")
    assert plots.describe(other) == "Title: mine. x axis: t, from 0 to 1."


# --------------------------------------------------------------------------- bad input

BAD_INPUTS = [
    ("ax is not an Axes", lambda: plots.roc_curve([0, 1], [0.1, 0.2], ax="left"),
     "ax must be a matplotlib Axes or None, got str"),
    ("a dict of models and a name", lambda: plots.roc_curve([0, 1], {"A": [0.1, 0.2]}, name="B"),
     "name='B' names one model, but y_score is a dict"),
    ("an empty dict", lambda: plots.precision_recall_curve([0, 1], {}), "y_score is an empty dict"),
    ("scores of another length", lambda: plots.gain_curve([0, 1], {"A": [0.1, 0.2, 0.3]}),
     "inputs differ in length: y_true has 2, y_score has 3"),
    ("a probability above 1", lambda: plots.calibration([0, 1], [0.1, 1.2]),
     "y_prob must hold probabilities in [0, 1], found 1.2 at index 1"),
    ("an unknown strategy", lambda: plots.calibration([0, 1], [0.1, 0.2], strategy="equal"),
     "strategy"),
    ("ci of 95", lambda: plots.roc_curve([0, 1], [0.1, 0.2], ci=95), "ci=95 must be a number"),
    ("only infinite scores in a histogram",
     lambda: plots.score_distributions([0, 1], [-np.inf, np.inf]),
     "y_score holds only infinite scores (2)"),
    ("trim of a half", lambda: plots.score_distributions([0, 1], [0.1, 0.2], trim=0.5),
     "trim=0.5 is the share cut from each tail"),
    ("a missing column", lambda: plots.per_user_distribution(pd.DataFrame({"mrr": [1.0]}), "ndcg@10"),
     "table has no column 'ndcg@10'; its columns are 'mrr'"),
    ("a column of NaN only",
     lambda: plots.per_user_distribution(pd.DataFrame({"mrr": [np.nan]}), "mrr"),
     "table['mrr'] holds no value (all 1 are NaN)"),
    ("no metric with k",
     lambda: plots.metric_vs_k(pd.DataFrame({"metric": ["mrr"], "k": [None], "value": [0.5]})),
     "table has no metric with a cut-off k (its metrics are mrr)"),
    ("a metric not in the table",
     lambda: plots.metric_vs_k(pd.DataFrame({"metric": ["ndcg"], "k": [5], "value": [0.5]}),
                               metrics=["recall"]),
     "metrics names 'recall'"),
    ("text values", lambda: plots.forest(pd.DataFrame({"slice": ["a"], "value": ["high"]}),
                                         ci_low=None, ci_high=None),
     "table['value'] must hold numbers"),
    ("one interval end", lambda: plots.forest(pd.DataFrame({"slice": ["a"], "value": [0.1]}),
                                              ci_high=None),
     "ci_low and ci_high go together"),
    ("one class only", lambda: plots.lift_curve([1, 1], [0.1, 0.2]),
     "y_true holds only positives (1)"),
    ("a compare table without p-values",
     lambda: plots.comparison(pd.DataFrame({"metric": ["mrr"], "difference": [0.1]})),
     "table has no column 'p_randomization'"),
    ("one model name", lambda: plots.comparison(pd.DataFrame(), names="B"),
     "names='B' must be two model names"),
    ("per-user tables without the column",
     lambda: plots.per_user_scatter(pd.DataFrame({"user": [1], "mrr": [1.0]}),
                                    pd.DataFrame({"user": [1]}), "mrr"),
     "table_b has no column 'mrr'"),
    ("a user twice", lambda: plots.per_user_scatter(
        pd.DataFrame({"user": [1, 1], "mrr": [1.0, 0.5]}), pd.DataFrame({"user": [1], "mrr": [1.0]}),
        "mrr"), "table_a has a user in more than one row"),
    ("no user in both", lambda: plots.per_user_scatter(
        pd.DataFrame({"user": [1], "mrr": [1.0]}), pd.DataFrame({"user": [2], "mrr": [1.0]}),
        "mrr"), "no user has a value of 'mrr' in both tables"),
    ("describe without axes", lambda: plots.describe(None), "ax must be the matplotlib Axes"),
]


@pytest.mark.parametrize("what, call, message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_refused_with_a_message(what, call, message):
    """Each plotting function has a row (the table is checked below)."""
    with pytest.raises(ValueError) as refused:
        call()
    assert message in str(refused.value), str(refused.value)


def test_every_plotting_function_has_a_bad_input_row():
    import inspect

    table = inspect.getsource(sys.modules[__name__])
    table = table[table.index("BAD_INPUTS = ["):table.index("@pytest.mark.parametrize(\"what")]
    assert [name for name in plots.__all__ if f"plots.{name}(" not in table] == []


# --------------------------------------------------------------------------- lazy matplotlib


def test_import_recmetrics_and_reaching_plots_import_no_matplotlib():
    code = ("import sys, recmetrics as rm; from recmetrics import plots; rm.plots.roc_curve; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_score_distributions_legend_counts_every_row_even_when_tails_are_trimmed(sample):
    """Bug (issue 37): with trim the legend counted the rows left after cutting 0.1% of each
    tail (9,389 relevant rows instead of 9,576); it counts every row and says how many are
    drawn, and the median is over every row of the class."""
    y, scores = sample["y"], sample["scores"]["model A"]
    ax = plots.score_distributions(y, scores, ax=new_axes(), bins=10, trim=0.01)
    low, high = np.quantile(scores, [0.01, 0.99])
    drawn = (scores >= low) & (scores <= high)
    texts = legend_texts(ax)
    for label, text in ((1, texts[0]), (0, texts[1])):
        every = scores[y == label]
        assert text.endswith(f": {every.size:,} rows ({int((drawn & (y == label)).sum()):,} "
                             f"drawn), median {np.median(every):.3g}"), text
    untrimmed = legend_texts(plots.score_distributions(y, scores, ax=new_axes(), bins=10))
    assert "drawn" not in " ".join(untrimmed)


@pytest.mark.parametrize("layout", ["constrained", None, "side by side"])
def test_comparison_legend_is_inside_the_saved_figure(layout, tmp_path):
    """Bug (issue 37): plots.comparison saved with savefig cut its legend off (centred under
    Axes that long tick labels pushed to the right, it stuck out of the figure)."""
    table = pd.DataFrame({"metric": ["auc", "precision", "precision", "hit_rate"],
                          "k": pd.array([None, 5, 10, 10], dtype="Int64"),
                          "value_a": [0.67, 0.26, 0.19, 0.97], "value_b": [0.72, 0.29, 0.2, 0.96],
                          "difference": [0.05, 0.03, 0.01, -0.01],
                          "p_randomization": [np.nan, 0.01, 0.2, 0.5],
                          "ci_low": [0.03, 0.02, -0.01, -0.02], "ci_high": [0.07, 0.04, 0.03, 0.0]})
    if layout == "side by side":
        fig, axes = plt.subplots(1, 2, figsize=(12, 5), layout="constrained")
    else:
        fig, ax = plt.subplots(figsize=(8, 4), layout=layout)
        axes = [ax]
    for ax in axes:
        plots.comparison(table, ax=ax, names=("a model", "another model"))
    fig.savefig(tmp_path / "c.png")
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_legend().get_window_extent(renderer) for ax in axes]
    for box in boxes:
        assert 0 <= box.x0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
    if len(boxes) == 2:
        assert boxes[0].x1 <= boxes[1].x0            # side by side, not on top of each other
    plt.close(fig)
