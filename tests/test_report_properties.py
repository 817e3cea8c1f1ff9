"""Property test of `recmetrics report` (issue 35/36 follow-up): its numbers are Python's.

A run is drawn as the command-line properties draw them (tests/test_cli_properties.py: every
input role, format and ending of the input table, encodings, byte-order marks, line ends,
column names, and the options of the report's parser, which are evaluate's and compare's):
one model as `evaluate` reads it, or two or three as `compare` does. `recmetrics report`
then runs in process on the files and must either

- exit 0, its tables (the notebook's own DataFrames, pickled by a cell added at the end)
  equal to 1e-12 the tables of recmetrics.evaluate / recmetrics.compare called in Python on
  the same data with the same options, the page showing them (the metric table's values, the
  results table and the slices table of a comparison), and the recipe it prints, run as
  printed, giving the same numbers again; or
- exactly when Python refuses, exit 2 with one line, the output as it was.

Never a changed input, never a file left behind. The template is the real one without the
four figure sections of one model (ROC, calibration, per-user distributions, metrics against
k: they draw, they compute no number of the tables; tests/test_report.py renders them), so
that an example costs a kernel start and the tables (about 10 s on the shared machine).
"""
from __future__ import annotations

import html
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import cli, report
from recmetrics import io as rio

from test_cli_properties import (COMPARE_NOT_DRAWN, COMPARE_OPTIONS, NOT_DRAWN, _argv,  # noqa: E402
                                 _compare_call, _hashes, _model_columns, _options_of, _outcome,
                                 _python_call, _same_table, _write_role, compare_runs, runs)

pytest.importorskip("nbclient")

REPORT_OPTIONS = _options_of("report")
#: the report's options: evaluate's (drawn by runs()) and compare's (drawn by compare_runs()),
#: less those neither draws, plus its own
REPORT_NOT_DRAWN = {
    "title": "the page's heading, not a number (test_report: hostile titles are escaped)",
    "output": "always given: -o FILE", "quiet": "given: stdout stays empty",
    "progress": "terminal output only",
}
#: the figure sections of one model: they compute no number of the tables, and are left out
FIGURES = ('section("ROC curve"', 'section("Are the scores probabilities?',
           'section("Per-user distributions"', 'section("Metrics against k"',
           "# Only for the shipped sample: the curve passes")
LEVELS = st.sampled_from([0.95, 0.9])


def test_the_drawn_options_are_every_option_of_the_report():
    """evaluate's options the report takes are drawn by runs(), compare's by compare_runs():
    an option of the report that is neither command's fails here until it is drawn."""
    evaluate, compare = _options_of("evaluate"), COMPARE_OPTIONS
    drawn = ((set(evaluate) - set(NOT_DRAWN)) | (set(compare) - set(COMPARE_NOT_DRAWN))
             | set(REPORT_NOT_DRAWN))
    assert set(REPORT_OPTIONS) - drawn == set(), "draw the new option, or say why not"


def _template(folder: Path) -> Path:
    """The report template less its figure sections of one model, then a cell pickling the
    tables it computed and the recipe it printed."""
    import nbformat

    nb = nbformat.read(report.TEMPLATE, as_version=4)
    for marker in FIGURES:
        assert sum(marker in c.source for c in nb.cells) == 1, marker
    nb.cells = [c for c in nb.cells if not any(marker in c.source for marker in FIGURES)]
    nb.cells.append(nbformat.v4.new_code_cell(
        "import pickle\nwith open('tables.pkl', 'wb') as handle:\n"
        "    pickle.dump({name: globals().get(name) for name in "
        "('summary', 'compared', 'by_slice', 'recipe')}, handle)"))
    path = folder / "report-tables.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def tables_template(tmp_path_factory) -> Path:
    return _template(tmp_path_factory.mktemp("template"))


@st.composite
def report_runs(draw):
    """(models, roles, files, columns, reading options, options, old output): one model as
    runs() draws it for evaluate, or two or three as compare_runs() draws them, with the
    report's interval level and one score or rank column for every file."""
    if draw(st.sampled_from([True, True, False])):
        roles, files, columns, io_options, options, old = draw(runs())
        models = {"scores": roles.pop("scores")}
        files = {("scores:scores" if role == "scores" else role): how
                 for role, how in files.items()}
        options["ci"] = options["ci"] or draw(LEVELS)
    else:
        models, roles, files, columns, io_options, options, old = draw(compare_runs())
        del options["baseline"]
        for role in ("score", "rank"):      # the report reads one column for every file
            if isinstance(columns[role], list):
                columns[role] = columns[role][0]
        options.update(ci=draw(LEVELS), bootstrap=draw(st.sampled_from(["poisson"] * 3
                                                                       + ["multinomial"])))
    return models, roles, files, columns, io_options, options, old


def _python(models: dict, roles: dict, columns: dict, options: dict):
    """What the report computes, called in Python: evaluate for one model; compare of every
    model for several, and by slice for two with by=."""
    if len(models) == 1:
        call = _python_call({"scores": models["scores"], **roles}, columns, options)
        return {"summary": rm.evaluate(models["scores"], **call)}
    rank = "rank" if columns["rank"] else None
    plain = {d: v for d, v in options.items() if d not in ("by", "min_slice_size")}
    tables = {"compared": _compare_call(models, {"truth": roles["truth"]}, plain)(rank)}
    if options.get("by"):
        by_slice = _compare_call(models, roles, {**plain, "by": options["by"], "correction":
                                                 "holm", "min_slice_size":
                                                 options["min_slice_size"]})(rank)
        tables["by_slice"] = by_slice.assign(model_a="a", model_b="b")
    return tables


def _shown_metrics(page: str) -> dict[str, float]:
    """The metric table of a report of one model: metric name -> the value shown."""
    table = re.search(r'<table class="report metrics">(.*?)</table>', page, re.S).group(1)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]
    return {re.sub(r"<[^>]+>", "", cells[0]): float(cells[2]) for cells in rows}


def _overall(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows the metric table shows: all users, the model (not a baseline)."""
    rows = summary
    for column in summary.attrs.get("slice_columns") or []:
        rows = rows[rows[column] == rm.slices.ALL]
    return rows[rows.model == "model"] if "model" in rows.columns else rows


def _metric_name(metric, cut) -> str:
    return metric if pd.isna(cut) else f"{metric}@{int(cut)}"


@settings(max_examples=6, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate,
                                                Phase.shrink],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=report_runs())
def test_the_report_gives_the_python_numbers_or_one_line(drawn, tables_template,
                                                         tmp_path_factory, monkeypatch, capsys):
    models, roles, files, columns, io_options, options, old_output = drawn
    monkeypatch.setattr(report, "TEMPLATE", tables_template)
    folder = Path(tmp_path_factory.mktemp("report"))
    paths = {name: _write_role(folder, "scores", frame, files[f"scores:{name}"],
                               _model_columns(columns, number), io_options, name=name)
             for number, (name, frame) in enumerate(models.items())}
    for role, frame in roles.items():
        if role in files:
            paths[role] = _write_role(folder, role, frame, files[role], columns, io_options)
    out = folder / "out" / "report.html"
    out.parent.mkdir()
    if old_output:
        out.write_text("old\n")
    argv = ["report", *(str(paths[name]) for name in models), "-q", "-o", str(out)]
    for role in roles:
        if role in paths:
            argv += [rio.INPUT_ROLES[role].option, str(paths[role])]
    argv += _argv(REPORT_OPTIONS, columns, io_options,
                  {d: v for d, v in options.items() if d in REPORT_OPTIONS})
    event(f"{len(models)} model(s)" + (", by" if options.get("by") else ""))
    expected, refusal = _outcome(lambda: _python(models, roles, columns, options))
    inputs = list(map(str, paths.values()))
    before, listing = _hashes(inputs), sorted(p.name for p in out.parent.iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code = cli.main(argv)
    printed, err = capsys.readouterr()
    assert _hashes(inputs) == before, "an input file changed"
    assert "Traceback" not in err and printed == ""
    if refusal is not None:
        event(f"refusal: {str(refusal)[:60]}")
        assert code == 2, f"Python refused ({refusal}) but the report exited {code}: {err}"
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
        assert sorted(p.name for p in out.parent.iterdir()) == listing, "a file was left behind"
        assert not old_output or out.read_text() == "old\n"
        return
    assert code == 0, f"the report refused what Python accepts: {err}"
    assert all(line.startswith("recmetrics: warning: ") for line in err.splitlines()), err
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.html", "tables.pkl"]
    with open(out.parent / "tables.pkl", "rb") as handle:
        computed = pickle.load(handle)
    page = out.read_text(encoding="utf-8")
    for name, table in expected.items():           # the notebook's tables: Python's numbers
        _same_table(computed[name], table)
    if "summary" in expected:                       # the page shows them
        shown = _shown_metrics(page)
        overall = _overall(expected["summary"])
        assert set(shown) == {_metric_name(m, c) for m, c in zip(overall.metric, overall.k)}
        for metric, cut, value in zip(overall.metric, overall.k, overall.value):
            np.testing.assert_allclose(shown[_metric_name(metric, cut)], value, rtol=0,
                                       atol=5e-5 + 1e-12, err_msg=_metric_name(metric, cut))
    else:   # the tables rm.results_table_from_comparison and rm.show make (the export writes
        text = html.unescape(page)  # their entities as characters: compared as text)
        assert html.unescape(rm.results_table_from_comparison(expected["compared"]).to_html()) \
            in text
        if "by_slice" in expected:
            assert html.unescape(rm.show(expected["by_slice"]).to_html()) in text
    # the recipe printed on the page, run as printed, gives the table again
    recipe = computed["recipe"]
    assert html.unescape(re.search(r'<pre class="recipe"><code>(.*?)</code></pre>', page,
                                   re.S).group(1)) == recipe
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(recipe, namespace)  # noqa: S102 (the report's own recipe, on the test's files)
    _same_table(namespace["table"], expected.get("summary", expected.get("compared")))
    if "by_slice" in expected:
        _same_table(namespace["by_slice"], expected["by_slice"])


# --------------------------------------------------------------------------- bugs it found


def _regression_files(folder: Path, *, labels) -> list[str]:
    """Models a and b on four users of two countries, and the users file."""
    rows = pd.DataFrame({"user": [u for u in ("u1", "u2", "u3", "u4") for _ in range(3)],
                         "item": ["i1", "i2", "i3"] * 4, "label": labels})
    rows.assign(score=[0.9, 0.2, 0.5, 0.1, 0.8, 0.3, 0.7, 0.6, 0.2, 0.4, 0.3, 0.9]).to_csv(
        folder / "a.csv", index=False)
    rows.assign(score=[0.1, 0.8, 0.4, 0.9, 0.2, 0.3, 0.6, 0.7, 0.5, 0.3, 0.8, 0.1]).to_csv(
        folder / "b.csv", index=False)
    pd.DataFrame({"user": ["u1", "u2", "u3", "u4"], "country": ["fr", "de", "fr", "de"]}
                 ).to_csv(folder / "users.csv", index=False)
    return [str(folder / "a.csv"), str(folder / "b.csv")]


def _report_tables(argv, folder: Path, template: Path, monkeypatch, capsys) -> dict:
    monkeypatch.setattr(report, "TEMPLATE", template)
    out = folder / "out" / "report.html"
    out.parent.mkdir()
    code = cli.main(["report", *argv, "-q", "-o", str(out)])
    printed, err = capsys.readouterr()
    assert (code, printed, err) == (0, "", ""), err
    with open(out.parent / "tables.pkl", "rb") as handle:
        return pickle.load(handle)


GRADES = [2, 0, 1, 0, 1, 0, 0, 0, 2, 1, 0, 0]


@pytest.mark.parametrize("models, labels, options", [
    (1, GRADES, ["--metrics", "err", "--k", "2", "--by", "country", "--users", "users.csv",
                 "--min-slice-size", "1"]),
    (2, [0] * 12, ["--metrics", "logloss", "map", "--k", "2"]),
], ids=["one model by slice, err alone", "log loss, and no relevant item"])
def test_a_report_whose_headline_metric_is_not_in_the_per_user_tables_is_written(
        models, labels, options, tmp_path, tables_template, monkeypatch, capsys):
    """Bugs (found by the report property): the figures that single out a headline metric
    took its column name without the cut-off when no NDCG, MAP, recall... was asked for: the
    slices section of one model with `--metrics err --k 2` found no row of err without k (an
    IndexError in its notebook, exit 2); log loss has no per-user column at all, and with no
    relevant item no user has a value to pair ("no user has a value of 'map@2' in both
    tables"). Exit 2 where `evaluate` and `compare` give the table; now the per-user figure
    takes the first metric with values to pair, or says there is none."""
    paths = _regression_files(tmp_path, labels=labels)[:models]
    argv = [*paths, *(str(tmp_path / o) if o == "users.csv" else o for o in options),
            "--n-resamples", "100"]
    tables = _report_tables(argv, tmp_path, tables_template, monkeypatch, capsys)
    assert tables["summary" if models == 1 else "compared"] is not None


def test_a_report_of_two_models_by_slice_on_err_alone_draws_and_its_recipe_runs(
        tmp_path, tables_template, monkeypatch, capsys):
    """Bugs (found by the report property): with `--metrics err --k 2` the report of two
    models failed in its notebook ("table_a has no column 'err'": the per-user column is
    err@2); and the recipe of `report a.csv b.csv --by COL` put by= into the call comparing
    every model (rm.compare(preds, ..., by=...)), which refuses ("by= compares two models,
    pred_a and pred_b"): run as printed, it reproduced nothing. Now the figure reads err@2,
    and the recipe is that call without by=, then the slices table's own call of the two."""
    paths = _regression_files(tmp_path, labels=GRADES)
    argv = [*paths, "--metrics", "err", "--k", "2", "--max-grade", "2", "--by", "country",
            "--users", str(tmp_path / "users.csv"), "--min-slice-size", "1",
            "--n-resamples", "100"]
    tables = _report_tables(argv, tmp_path, tables_template, monkeypatch, capsys)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        exec(tables["recipe"], namespace)  # noqa: S102
    _same_table(namespace["table"], tables["compared"])
    _same_table(namespace["by_slice"], tables["by_slice"])
    assert set(tables["by_slice"].country) == {"(all)", "fr", "de"}
