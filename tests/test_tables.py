"""The results table: exact Markdown, LaTeX and HTML for a small example, escaping, ties, missing
values, significance markers and bad input."""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as st

import recmetrics as rm

NAN = float("nan")

#: Three models; knn has no log loss. auc ties at 0.75; logloss is lower-is-better.
VALUES = pd.DataFrame({
    "model": ["pop"] * 3 + ["knn"] * 3 + ["mf"] * 3,
    "metric": ["auc", "ndcg", "logloss"] * 3,
    "k": pd.array([None, 10, None] * 3, dtype="Int64"),
    "value": [0.70, 0.20, 0.60, 0.75, 0.25, NAN, 0.75, 0.30, 0.50],
})

#: Pairwise tests as a many-model compare would give them (difference = B - A).
PAIRWISE = pd.DataFrame({
    "model_a": ["pop", "pop", "knn", "pop", "pop", "knn", "pop", "pop"],
    "model_b": ["knn", "mf", "mf", "knn", "mf", "mf", "mf", "knn"],
    "metric": ["auc", "auc", "auc", "ndcg", "ndcg", "ndcg", "logloss", "logloss"],
    "k": pd.array([None, None, None, 10, 10, 10, None, None], dtype="Int64"),
    "difference": [0.05, 0.05, 0.0, 0.05, 0.10, 0.05, -0.10, NAN],
    # 0.05 = alpha counts as significant (p <= alpha); 0.9 and NaN do not
    "p_value_adjusted": [0.01, 0.02, 0.9, 0.05, 0.001, 0.03, 0.01, NAN],
})

MARKDOWN = """\
| # | model | auc | ndcg@10 | logloss |
| :-- | :-- | --: | --: | --: |
| a | pop | 0.700 | 0.200 | 0.600 |
| b | knn | **0.750**<sup>a</sup> | 0.250<sup>a</sup> | \u2014 |
| c | mf | **0.750**<sup>a</sup> | **0.300**<sup>ab</sup> | **0.500**<sup>a</sup> |
"""

LATEX = r"""\begin{tabular}{llrrr}
\toprule
\# & model & auc & ndcg@10 & logloss \\
\midrule
a & pop & 0.700 & 0.200 & 0.600 \\
b & knn & \textbf{0.750}$^{a}$ & 0.250$^{a}$ & --- \\
c & mf & \textbf{0.750}$^{a}$ & \textbf{0.300}$^{ab}$ & \textbf{0.500}$^{a}$ \\
\bottomrule
\end{tabular}
"""

HTML = """\
<table>
<thead>
<tr><th>#</th><th>model</th><th>auc</th><th>ndcg@10</th><th>logloss</th></tr>
</thead>
<tbody>
<tr><td>a</td><td>pop</td><td>0.700</td><td>0.200</td><td>0.600</td></tr>
<tr><td>b</td><td>knn</td><td><b>0.750</b><sup>a</sup></td><td>0.250<sup>a</sup></td><td>&mdash;</td></tr>
<tr><td>c</td><td>mf</td><td><b>0.750</b><sup>a</sup></td><td><b>0.300</b><sup>ab</sup></td><td><b>0.500</b><sup>a</sup></td></tr>
</tbody>
</table>
"""


def test_three_models_in_markdown_latex_and_html():
    table = rm.results_table(VALUES, PAIRWISE, digits=3)
    assert table.to_markdown() == MARKDOWN
    assert table.to_latex() == LATEX
    assert table.to_html() == HTML
    assert str(table) == MARKDOWN and table._repr_html_() == HTML


def test_the_frame_holds_the_values_models_by_columns():
    table = rm.results_table(VALUES, PAIRWISE, digits=3)
    expected = pd.DataFrame([[0.70, 0.20, 0.60], [0.75, 0.25, NAN], [0.75, 0.30, 0.50]],
                            index=pd.Index(["pop", "knn", "mf"], name="model"),
                            columns=["auc", "ndcg@10", "logloss"])
    pd.testing.assert_frame_equal(table.frame, expected)
    assert table.letters.to_dict() == {"pop": "a", "knn": "b", "mf": "c"}
    assert table.beats.loc["mf"].tolist() == ["a", "ab", "a"]
    assert table.best.to_numpy().tolist() == [[False, False, False], [True, False, False],
                                              [True, True, True]]


def test_pair_order_and_repetition_do_not_matter():
    """The same tests written B-vs-A (difference negated) and twice give the same table."""
    flipped = PAIRWISE.rename(columns={"model_a": "model_b", "model_b": "model_a"})
    flipped["difference"] = -flipped["difference"]
    both = pd.concat([PAIRWISE, flipped], ignore_index=True)
    assert rm.results_table(VALUES, both, digits=3).to_latex() == LATEX


def test_without_difference_the_values_decide_the_winner():
    assert rm.results_table(VALUES, PAIRWISE.drop(columns="difference"), digits=3).to_html() == HTML


def test_without_pairwise_there_are_no_letters():
    table = rm.results_table(VALUES, digits=2)
    assert table.to_markdown() == (
        "| model | auc | ndcg@10 | logloss |\n"
        "| :-- | --: | --: | --: |\n"
        "| pop | 0.70 | 0.20 | 0.60 |\n"
        "| knn | **0.75** | 0.25 | \u2014 |\n"
        "| mf | **0.75** | **0.30** | **0.50** |\n")
    assert table.to_latex().splitlines()[:3] == [r"\begin{tabular}{lrrr}", r"\toprule",
                                                 r"model & auc & ndcg@10 & logloss \\"]
    assert (table.beats == "").all().all() and table.letters.empty


def test_significant_vs_a_baseline_as_a_boolean_column():
    """Only comparisons against the baseline 'pop': a value beating it carries 'a'."""
    vs_baseline = pd.DataFrame({"model_a": ["pop", "pop"], "model_b": ["knn", "mf"],
                                "metric": ["ndcg", "ndcg"], "k": [10, 10],
                                "significant": [False, True]})
    table = rm.results_table(VALUES, vs_baseline, digits=3)
    assert table.beats["ndcg@10"].tolist() == ["", "", "a"]
    assert table.beats[["auc", "logloss"]].eq("").all().all()


def test_a_significant_loss_marks_the_other_model():
    """pop beats mf on logloss when pop's is lower: the marker goes to pop, with mf's letter."""
    values = VALUES.assign(value=[0.70, 0.20, 0.40, 0.75, 0.25, NAN, 0.75, 0.30, 0.50])
    pairwise = PAIRWISE.assign(difference=[0.05, 0.05, 0.0, 0.05, 0.10, 0.05, 0.10, NAN])
    table = rm.results_table(values, pairwise, digits=3)
    assert table.beats["logloss"].tolist() == ["c", "", ""]
    assert table.best["logloss"].tolist() == [True, False, False]


def test_names_are_escaped_in_each_format():
    values = pd.DataFrame({"model": ["a_b & c%", "<x> $\\ #1 ~^{}|*"],
                           "metric": ["hit_rate", "hit_rate"], "k": [10, 10],
                           "value": [0.5, 0.25]})
    table = rm.results_table(values, digits=1)
    latex = table.to_latex().splitlines()
    assert latex[2] == r"model & hit\_rate@10 \\"
    assert latex[4] == r"a\_b \& c\% & \textbf{0.5} \\"
    assert latex[5] == (r"<x> \$\textbackslash{} \#1 \textasciitilde{}\textasciicircum{}\{\}|*"
                        r" & 0.2 \\")
    assert table.to_html().splitlines()[2] == "<tr><th>model</th><th>hit_rate@10</th></tr>"
    assert "<tr><td>a_b &amp; c%</td><td><b>0.5</b></td></tr>" in table.to_html()
    assert "<tr><td>&lt;x&gt; $\\ #1 ~^{}|*</td><td>0.2</td></tr>" in table.to_html()
    markdown = table.to_markdown().splitlines()
    assert markdown[0] == r"| model | hit\_rate@10 |"
    assert markdown[2] == r"| a\_b & c% | **0.5** |"
    assert markdown[3] == r"| \<x\> $\\ #1 ~^{}\|\* | 0.2 |"


def test_ties_at_the_shown_precision_are_all_bold():
    values = pd.DataFrame({"model": ["x", "y", "z"], "metric": "recall",
                           "value": [0.30004, 0.29996, 0.2]})
    assert rm.results_table(values, digits=3).best["recall"].tolist() == [True, True, False]
    assert rm.results_table(values, digits=5).best["recall"].tolist() == [True, False, False]
    lowest = rm.results_table(values.assign(metric="ece"), digits=3)
    assert lowest.best["ece"].tolist() == [False, False, True]


def test_a_column_of_missing_values_has_no_best():
    values = pd.DataFrame({"model": ["x", "y"], "metric": "mrr", "value": [NAN, NAN]})
    table = rm.results_table(values)
    assert not table.best.any().any()
    assert table.to_markdown().splitlines()[2:] == ["| x | \u2014 |", "| y | \u2014 |"]
    assert "& --- \\\\" in table.to_latex()


def test_lower_is_better_is_the_documented_set_and_can_be_changed():
    assert rm.LOWER_IS_BETTER == {"logloss", "ne", "brier", "ece", "gini"}
    values = pd.DataFrame({"model": ["x", "y"], "metric": "auc", "value": [0.6, 0.7]})
    assert rm.results_table(values).best["auc"].tolist() == [False, True]
    assert rm.results_table(values, lower_is_better={"auc"}).best["auc"].tolist() == [True, False]


@given(st.lists(st.one_of(st.floats(-5, 5, allow_nan=False), st.just(NAN)), min_size=1,
                max_size=12),
       st.sampled_from(["ndcg", "brier"]), st.integers(0, 6))
def test_best_is_the_extreme_of_the_shown_values(values, metric, digits):
    """Literal rule: format every value, read it back, bold those equal to the max (min)."""
    frame = pd.DataFrame({"model": [f"m{i}" for i in range(len(values))], "metric": metric,
                          "value": values})
    table = rm.results_table(frame, digits=digits)
    shown = [float(f"{v:.{digits}f}") for v in values if not math.isnan(v)]
    extreme = (min if metric == "brier" else max)(shown) if shown else None
    expected = [not math.isnan(v) and float(f"{v:.{digits}f}") == extreme for v in values]
    assert table.best[metric].tolist() == expected
    assert table.to_markdown().count("**") == 2 * sum(expected)


def test_more_than_52_models_cannot_be_lettered():
    models = [f"m{i}" for i in range(53)]
    values = pd.DataFrame({"model": models, "metric": "auc", "value": np.linspace(0, 1, 53)})
    pairwise = pd.DataFrame({"model_a": ["m0"], "model_b": ["m1"], "metric": ["auc"],
                             "p_value_adjusted": [0.01]})
    assert len(rm.results_table(values).frame) == 53
    with pytest.raises(ValueError, match="53 models, but there are only 52 letters"):
        rm.results_table(values, pairwise)


def _pairwise(**changes):
    return PAIRWISE.assign(**changes)


BAD = [
    (lambda: rm.results_table([1, 2]), r"values must be a pandas DataFrame with one row per model "
                                       r"and metric, got list"),
    (lambda: rm.results_table(VALUES.drop(columns="value")),
     r"values has no column 'value'; its columns are 'model', 'metric', 'k'"),
    (lambda: rm.results_table(VALUES.iloc[:0]), r"values has no rows"),
    (lambda: rm.results_table(VALUES.assign(model=[None] + ["x"] * 8)),
     r"values column 'model' has 1 missing value\(s\) \(first in row 0\)"),
    (lambda: rm.results_table(pd.concat([VALUES, VALUES.iloc[:1]])),
     r"values has 1 repeated \(model, metric, k\) row\(s\) \(first: model='pop', 'auc' in row 9\)"),
    (lambda: rm.results_table(VALUES.assign(value="high")), r"values column 'value' must hold "
                                                            r"numbers"),
    (lambda: rm.results_table(VALUES.assign(k=[0.5] * 9)), r"values column 'k' holds 0.5 in row 0"),
    (lambda: rm.results_table(VALUES, alpha=5), r"alpha=5 must be a number strictly between 0 "
                                                r"and 1"),
    (lambda: rm.results_table(VALUES, digits=-1), r"digits=-1 must be a whole number >= 0"),
    (lambda: rm.results_table(VALUES, lower_is_better="logloss"),
     r"lower_is_better='logloss' must be a collection of metric names"),
    (lambda: rm.results_table(VALUES, PAIRWISE.drop(columns="p_value_adjusted")),
     r"pairwise needs exactly one of the columns 'p_value_adjusted' .* it has neither"),
    (lambda: rm.results_table(VALUES, _pairwise(significant=True)), r"it has both: drop one"),
    (lambda: rm.results_table(VALUES, _pairwise(p_value_adjusted=2.0)),
     r"pairwise column 'p_value_adjusted' must hold p-values in \[0, 1\]"),
    (lambda: rm.results_table(VALUES, PAIRWISE.drop(columns="p_value_adjusted")
                              .assign(significant=1.0)),
     r"pairwise column 'significant' must hold True/False, got dtype float64"),
    (lambda: rm.results_table(VALUES, _pairwise(model_b=["als"] + ["mf"] * 7)),
     r"pairwise column 'model_b' names model 'als' \(row 0\), which values does not hold; its "
     r"models are 'pop', 'knn', 'mf'"),
    (lambda: rm.results_table(VALUES, _pairwise(metric=["map"] + ["auc"] * 7)),
     r"pairwise row 0 compares 'map', which values does not hold"),
    (lambda: rm.results_table(VALUES, _pairwise(model_b=["pop"] + ["mf"] * 7)),
     r"pairwise row 0 compares model 'pop' with itself"),
    (lambda: rm.results_table(VALUES, _pairwise(difference=[-0.05] + [0.05] * 7)),
     r"pairwise row 0 says 'knn' - 'pop' = -0.05 on 'auc', but values gives 0.75 - 0.7: the two "
     r"tables disagree"),
]


@pytest.mark.parametrize("call, message", BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
