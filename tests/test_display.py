"""rm.show: the tables of evaluate and compare laid out for reading. The HTML and the text are
parsed back and compared with the table's own numbers; the table stays a plain DataFrame."""
from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import recmetrics as rm
from recmetrics import _present as present

NAN = float("nan")
DASH = "\u2014"


class _Cells(HTMLParser):
    """The header, body rows and caption of the one table of an HTML string, as text."""

    def __init__(self):
        super().__init__()
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.caption: list[str] = []
        self._where: list[str] = []
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("th", "td", "caption"):
            self._text = []
        if tag == "tr" and "tbody" in self._where:
            self.rows.append([])
        if tag == "br" and "caption" in self._where:
            self.caption.append("".join(self._text))
            self._text = []
        if tag != "br":
            self._where.append(tag)

    def handle_endtag(self, tag):
        self._where.pop()
        text = "".join(self._text)
        if tag == "th" and "thead" in self._where:
            self.header.append(text)
        elif tag == "td":
            self.rows[-1].append(text)
        elif tag == "caption":
            self.caption.append(text)

    def handle_data(self, data):
        self._text.append(data)


def cells(display) -> _Cells:
    parser = _Cells()
    parser.feed(display._repr_html_())
    return parser


def column(parsed: _Cells, name: str) -> list[str]:
    return [row[parsed.header.index(name)] for row in parsed.rows]


def shown_as(text: str, value: float, digits: int = 4) -> bool:
    """``text`` is ``value`` written with exactly ``digits`` decimals (an em dash for NaN)."""
    if math.isnan(value):
        return text == DASH
    if not re.fullmatch(rf"[+-]?\d+\.\d{{{digits}}}", text):
        return False
    return abs(float(text) - value) <= 0.5 * 10 ** -digits + 1e-12


@pytest.fixture(scope="module")
def sample():
    a = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    b = pd.read_csv(rm.DATA_DIR / "sample_model_b.csv")
    truth = pd.read_csv(rm.DATA_DIR / "sample_truth.csv")
    return a, b, truth


@pytest.fixture(scope="module")
def evaluated(sample):
    a, _, truth = sample
    return rm.evaluate(a, truth, k=[5, 10], ci=0.95, n_resamples=200)


@pytest.fixture(scope="module")
def compared(sample):
    a, b, truth = sample
    return rm.compare({"old": a, "new": b}, truth=truth, k=10, n_resamples=200)


# ------------------------------------------------------------------------------- evaluate


def test_evaluate_shows_every_value_rounded_with_its_interval(evaluated):
    parsed = cells(rm.show(evaluated))
    assert len(parsed.rows) == len(evaluated)
    for text, row in zip(column(parsed, "value [interval]"), evaluated.itertuples()):
        value, low, high = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", text).groups()
        assert shown_as(value, row.value) and shown_as(low, row.ci_low) \
            and shown_as(high, row.ci_high), (text, row)
    expected_labels = [m if pd.isna(k) else f"{m}@{k}" for m, k in zip(evaluated.metric,
                                                                       evaluated.k)]
    assert column(parsed, "metric") == expected_labels
    assert [int(t.replace(",", "")) for t in column(parsed, "n_users")] == \
        evaluated.n_users.tolist()


def test_conventions_are_said_once_not_per_row(evaluated):
    display = rm.show(evaluated)
    parsed = cells(display)
    assert "conventions" not in parsed.header
    for text in (display.to_html(), display.to_string()):
        for convention in ("ties=average", "gain=exponential", "denominator=relevant",
                           "gauc_weight=impressions", "no_relevant=skip"):
            assert text.count(convention) == 1, (convention, text)
    # every convention of every row is in the caption
    said = parsed.caption[0]
    for row in evaluated.conventions:
        assert all(part in said for part in row.split(", ")), (row, said)


def test_the_text_shows_the_same_cells_as_the_html(evaluated):
    display = rm.show(evaluated)
    text = display.to_string()
    assert repr(display) == text == str(display)
    for row in display.cells.itertuples(index=False):
        line = next(line for line in text.splitlines() if line.startswith(row[0] + " "))
        assert re.split(r"\s{2,}", line.strip()) == [v for v in row if v != ""]


def test_the_table_stays_a_plain_dataframe(evaluated):
    before = evaluated.copy(deep=True)
    rm.show(evaluated)
    assert type(evaluated) is pd.DataFrame
    pd.testing.assert_frame_equal(evaluated, before)
    assert evaluated.attrs == before.attrs
    # pandas operations on it: plain DataFrames, the same values, and still shown
    top = evaluated[evaluated.metric.isin(["ndcg", "map"])].sort_values("value")
    assert type(top) is pd.DataFrame
    assert top.value.tolist() == sorted(evaluated.value[evaluated.metric.isin(["ndcg", "map"])])
    parsed = cells(rm.show(top))
    assert [float(v.split()[0]) for v in column(parsed, "value [interval]")] == \
        [round(v, 4) for v in top.value]
    narrow = evaluated[["metric", "k", "value"]]
    parsed = cells(rm.show(narrow))
    assert parsed.header == ["metric", "value"]
    assert parsed.caption and "ties=average" in parsed.caption[0]     # from attrs


def test_notes_of_the_table_and_of_rows_are_shown(sample):
    a, _, truth = sample
    table = rm.evaluate(a, truth[truth.label > 0].drop(columns="label"), metrics=["mrr"])
    assert table.attrs["notes"]
    display = rm.show(table)
    assert all(note in display.caption for note in table.attrs["notes"])
    one = pd.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.5, 0.4], "label": [1, 1]})
    with pytest.warns(rm.RecmetricsWarning):
        gauc = rm.evaluate(one, metrics=["gauc"])
    parsed = cells(rm.show(gauc))
    assert column(parsed, "value") == [DASH]
    assert column(parsed, "note") == gauc.note.tolist()


def test_sliced_and_baseline_tables_keep_their_extra_columns(sample):
    a, _, truth = sample
    users = pd.DataFrame({"user": a.user.unique()})
    users["group"] = np.where(np.arange(len(users)) % 3 == 0, "x", "y")
    sliced = rm.evaluate(a, truth, by="group", users=users, metrics=["ndcg"], ci=0.9,
                         n_resamples=100)
    parsed = cells(rm.show(sliced))
    assert parsed.header[:3] == ["group", "slice_size", "small_slice"]
    assert column(parsed, "group") == sliced.group.tolist()
    assert column(parsed, "small_slice") == ["yes" if s else "no" for s in sliced.small_slice]
    assert any("90% level" in line for line in parsed.caption)
    history = pd.read_csv(rm.DATA_DIR / "sample_history.csv")
    base = rm.evaluate(a, truth, baselines=True, history=history, metrics=["mrr"])
    parsed = cells(rm.show(base))
    assert column(parsed, "model") == base.model.tolist()
    assert all(shown_as(t, v) for t, v in zip(column(parsed, "value"), base.value))


# ------------------------------------------------------------------------------- compare


def test_two_models_headed_by_their_names_with_p_and_verdict(compared):
    parsed = cells(rm.show(compared))
    assert parsed.header == ["metric", "old", "new", "new \u2212 old", "n_users", "p", "verdict"]
    for name, source in (("old", "value_a"), ("new", "value_b")):
        assert all(shown_as(t, v) for t, v in zip(column(parsed, name), compared[source]))
    differences = column(parsed, "new \u2212 old")  # "+0.0426 [+0.0345, +0.0507]"
    for text, row in zip(differences, compared.itertuples()):
        value, interval = text.split(" ", 1)
        assert value[0] in "+-" and shown_as(value, row.difference), text
        low, high = interval.strip("[]").split(", ")
        assert shown_as(low, row.ci_low) and shown_as(high, row.ci_high), text
    for text, row in zip(column(parsed, "p"), compared.itertuples()):
        p = row.p_delong_adjusted if row.metric == "auc" else row.p_randomization_adjusted
        assert text == ("<0.0001" if p < 1e-4 else f"{p:.4f}"), (text, p)
    names = {"B better": "new better", "A better": "old better"}
    assert column(parsed, "verdict") == [names.get(v, v) for v in compared.verdict]
    caption = " ".join(parsed.caption)
    assert "holm" in caption and "alpha = 0.05" in caption
    assert caption.count("ties=average") == 1


def test_many_models_keep_the_pair_columns(sample):
    a, b, truth = sample
    c = a.assign(score=a.score.to_numpy()[::-1])
    table = rm.compare({"pop": a, "mf": b, "rev": c}, truth=truth, metrics=["ndcg", "auc"],
                       n_resamples=100)
    parsed = cells(rm.show(table))
    assert parsed.header[:5] == ["model_a", "model_b", "metric", "value_a", "value_b"]
    assert column(parsed, "model_a") == table.model_a.tolist()
    winners = [b if v == "B better" else a if v == "A better" else None
               for v, a, b in zip(table.verdict, table.model_a, table.model_b)]
    for text, winner, verdict in zip(column(parsed, "verdict"), winners, table.verdict):
        assert text == (f"{winner} better" if winner else verdict)
    assert any("value_b \u2212 value_a" in line for line in parsed.caption)


def test_sliced_comparison_reads_the_adjusted_verdict(sample):
    a, b, truth = sample
    users = pd.DataFrame({"user": a.user.unique()})
    users["group"] = np.where(np.arange(len(users)) % 2 == 0, "even", "odd")
    table = rm.compare(a, b, truth, by="group", users=users, metrics=["mrr"], n_resamples=100)
    parsed = cells(rm.show(table))
    assert column(parsed, "verdict") == table.verdict_adjusted.tolist()
    for text, p in zip(column(parsed, "p"), table.p_randomization_adjusted):
        assert text == ("<0.0001" if p < 1e-4 else f"{p:.4f}")
    assert any("across the slices" in line for line in parsed.caption)


# ------------------------------------------------------------------------------- formats


@pytest.mark.parametrize("p, digits, text", [
    (0.0, 4, "<0.0001"), (4e-5, 4, "<0.0001"), (1e-4, 4, "0.0001"), (0.03124, 4, "0.0312"),
    (0.03125001, 4, "0.0313"), (1.0, 4, "1.0000"), (NAN, 4, DASH), (0.004, 2, "<0.01"),
    (0.05, 2, "0.05"),
])
def test_p_value_format(p, digits, text):
    assert present.p_value(p, digits) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6) | st.just(NAN), min_size=1, max_size=6),
       st.integers(1, 8))
def test_every_shown_value_is_the_value_rounded(values, digits):
    table = pd.DataFrame({"metric": ["m"] * len(values), "value": values})
    shown = column(cells(rm.show(table, digits=digits)), "value")
    assert all(shown_as(t, v, digits) for t, v in zip(shown, values)), (shown, values)


def test_html_escapes_names():
    table = pd.DataFrame({"model_a": ["<a>"], "model_b": ["b&c"], "metric": ["mrr"],
                          "k": pd.array([None], dtype="Int64"), "value_a": [0.5],
                          "value_b": [0.75], "difference": [0.25], "verdict": ["B better"]})
    html = rm.show(table).to_html()
    assert "<a>" not in html and "&lt;a&gt;" in html and "b&amp;c better" in html


@pytest.mark.parametrize("table, options, message", [
    ([1, 2], {}, r"table must be a pandas DataFrame .* got list"),
    (pd.DataFrame({"metric": ["m"], "value": [1.0]}), {"digits": 0},
     r"digits=0 must be a whole number >= 1"),
    (pd.DataFrame({"metric": ["m"], "value": [1.0]}), {"digits": 2.5},
     r"digits=2.5 must be a whole number"),
])
def test_bad_input(table, options, message):
    with pytest.raises(ValueError, match=message):
        rm.show(table, **options)


# ------------------------------------------------------------------------------- short reprs


def test_group_auc_repr_is_one_line_without_the_table():
    n = 500
    details = rm.group_auc_details([1, 0] * n, np.arange(2 * n), np.arange(2 * n) // 2)
    text = repr(details)
    assert "\n" not in text and "table=<500 rows>" in text and len(text) < 150
    parsed = cells(details)
    assert len(parsed.rows) == 5 and parsed.caption == ["GroupAUC"]    # not 500 rows
    assert [row[0] for row in parsed.rows] == [f"{details.value:.4f}", "impressions", "500",
                                               "0", "500 rows: .table"]


def test_confusion_matrix_html_shows_weights_rounded():
    cm = rm.confusion_matrix([1, 0, 1, 0], [1, 1, 0, 0], sample_weight=[0.1, 0.2, 1, 3])
    html = cm._repr_html_()
    assert "0.1000 (TP)" in html and "0.2000 (FP)" in html and "3 (TN)" in html
    assert "n = 4.3000" in html and "0.30000000000000004" not in html
    text = repr(rm.confusion_matrix([1, 0, 1], [1, 1, 0]))
    assert text.splitlines()[1:] == ["          predicted 1  predicted 0",
                                     "actual 1            1            1",
                                     "actual 0            1            0"]
