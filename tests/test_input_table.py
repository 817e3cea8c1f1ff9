"""Issue 35, the input half: one table of inputs, read one way by the command line, the report
and the provenance record.

Every role (scores, truth, users, history, catalog, item features, TREC run and qrels) is read
by ``recmetrics.io.read_input`` from the plan ``recmetrics.io.plan_inputs`` makes; the report
gets the same plan, so it accepts what ``evaluate`` accepts and gives the same numbers (checked
option by option, the options taken from the command line's parser); the provenance record
re-makes a run from itself alone.

The report tests run a short template (the real template's cells up to the metrics table, then
one cell that saves that table): the same reading and evaluating code, a fraction of the time.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import cli, report
from recmetrics import io as rio

USERS = ["u1", "u2", "josé", "u4", "u5", "u6"]
ITEMS = ["a", "b", "c", "d", "e"]
COUNTRY = {"u1": "fr", "u2": "fr", "josé": "es", "u4": "es", "u5": "de", "u6": "de"}


def _rows() -> pd.DataFrame:
    """Every user scores every item; each user has relevant and irrelevant items, scores are
    distinct probabilities."""
    out = []
    for i, user in enumerate(USERS):
        for j, item in enumerate(ITEMS):
            score = ((7 * i + 3 * j) % 11 + 1) / 13 + j / 1000
            grade = (i + 2 * j) % 3 if (i + j) % 4 else 0
            out.append((user, item, round(score, 6), grade))
    frame = pd.DataFrame(out, columns=["user", "item", "score", "label"])
    frame["rank"] = frame.groupby("user")["score"].rank(ascending=False).astype(int)
    assert frame.groupby("user")["label"].agg(lambda g: 0 < (g > 0).sum() < len(g)).all()
    return frame


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- the table


def _write(frame: pd.DataFrame, path: Path, sep: str = ",", encoding: str = "utf-8",
           newline: str = "\n") -> Path:
    path.write_bytes(frame.to_csv(index=False, sep=sep, lineterminator=newline)
                     .encode(encoding))
    return path


def _role_file(role: str, tmp_path: Path, name: str, **how) -> tuple[Path, pd.DataFrame]:
    """A file of the role and the frame it holds (as text, the ids as written)."""
    rows = _rows()
    frame = {"scores": rows[["user", "item", "score", "label"]],
             "truth": rows[["user", "item", "label"]],
             "users": pd.DataFrame({"user": USERS, "country": [COUNTRY[u] for u in USERS]}),
             "history": rows[rows.label > 0][["user", "item"]],
             "catalog": pd.DataFrame({"item": ITEMS + ["f"]}),
             "item_features": pd.DataFrame({"item": ITEMS, "x": [1.0, 0, 2, 0.5, 1],
                                            "y": [0.0, 1, 1, 3, 2]})}[role]
    return _write(frame, tmp_path / name, **how), frame


def _read(role: str, path: Path, **options) -> pd.DataFrame:
    files = {"scores": path if role == "scores" else str(path.parent / "none.csv"), role: path}
    plan = [spec for spec in rio.plan_inputs(files, **options) if spec.role == role]
    assert len(plan) == 1
    return rio.read_input(plan[0])


@pytest.mark.parametrize("role", list(rio.INPUT_ROLES))
def test_every_role_reads_a_comma_separated_txt_file_by_sniffing_its_separator(role, tmp_path):
    """Bug (issue 35): the command line and the report read --users FILE.txt as tab-separated
    while recmetrics.io sniffs a .txt file's separator; now every role is read by io."""
    path, frame = _role_file(role, tmp_path, f"{role}.txt")
    read = _read(role, path)
    for column in frame.columns:
        if column in ("user", "item", "country"):
            assert list(read[column].astype(str)) == list(frame[column].astype(str)), column
        else:
            np.testing.assert_array_equal(read[column].to_numpy(float), frame[column].to_numpy(float))


@pytest.mark.parametrize("role", list(rio.INPUT_ROLES))
def test_every_role_reads_a_file_whose_lines_end_in_cr_only_issue_35(role, tmp_path):
    path, frame = _role_file(role, tmp_path, f"{role}.csv", newline="\r")
    read = _read(role, path)
    assert len(read) == len(frame)
    key = "item" if role in ("catalog", "item_features") else "user"
    assert list(read[key].astype(str)) == list(frame[key].astype(str))


@pytest.mark.parametrize("role", list(rio.INPUT_ROLES))
def test_every_role_refuses_an_unclosed_quote_naming_file_and_line_issue_35(role, tmp_path):
    path, frame = _role_file(role, tmp_path, f"{role}.csv")
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(lines[2].split(",")[0], '"' + lines[2].split(",")[0], 1)
    lines[5] = lines[5].replace(lines[5].split(",")[0], lines[5].split(",")[0] + '"', 1)
    path.write_text("".join(lines))
    with pytest.raises(rio.FileProblem, match=rf"{path.name} line 3.*quote"):
        _read(role, path)


@pytest.mark.parametrize("role", ["scores", "truth", "users", "history", "catalog",
                                  "item_features"])
def test_every_role_reads_parquet_ids_stored_as_binary_as_text_issue_35(role, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, frame = _role_file(role, tmp_path, "unused.csv")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for name in ("user", "item", "country"):   # ids, and the text of slices
        if name in frame.columns:
            table = table.set_column(table.schema.get_field_index(name), name, pa.array(
                [v.encode() for v in frame[name]], pa.binary()))
    path = tmp_path / f"{role}.parquet"
    pq.write_table(table, path)
    read = _read(role, path)
    for name in {"user", "item", "country"} & set(frame.columns):
        assert list(read[name].astype(str)) == list(frame[name]), name


def test_a_role_the_plan_does_not_know_cannot_be_read():
    with pytest.raises(KeyError):
        rio.read_input({"role": "ratings", "path": "x.csv", "format": "csv",
                        "columns": {"user": "user"}})


# --------------------------------------------------------------------------- the command line


def test_a_comma_separated_users_txt_is_accepted_and_its_errors_name_it_issue_35(tmp_path,
                                                                                  capsys):
    """Bug: `--by country --users users.txt` with a comma-separated users.txt was refused (the
    command assumed a tab for .txt), and the message named the scores file."""
    pred = _write(_rows(), tmp_path / "scores.csv")
    users = _write(pd.DataFrame({"user": USERS, "country": [COUNTRY[u] for u in USERS]}),
                   tmp_path / "users.txt")
    same = _write(pd.read_csv(users), tmp_path / "users.csv")
    tables = []
    for path in (users, same):
        code, out, err = run(["evaluate", pred, "--by", "country", "--users", path,
                              "--min-slice-size", "1", "--metrics", "auc", "ndcg", "--format",
                              "json"], capsys)
        assert (code, err) == (0, ""), err
        tables.append(json.loads(out)["metrics"])
    assert tables[0] == tables[1]
    assert {row["country"] for row in tables[0]} >= {"fr", "es", "de"}
    # a users file without the user column: the message names the users file
    _write(pd.DataFrame({"person": USERS, "country": "fr"}), users)
    code, out, err = run(["evaluate", pred, "--by", "country", "--users", users], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{users} has no column 'user'" in err and f"{pred} " not in err


def _trec_files(tmp_path: Path, qrels_doc: str) -> tuple[Path, Path]:
    run_ = tmp_path / "a.run"
    run_.write_text("q1 Q0 7 1 2.0 s\nq1 Q0 8 2 1.0 s\nq2 Q0 3 1 0.5 s\nq2 Q0 4 2 0.2 s\n")
    qrels = tmp_path / "a.qrels"
    qrels.write_text(f"q1 0 {qrels_doc} 1\nq1 0 9 1\nq2 0 4 1\nq2 0 3 0\n")
    return run_, qrels


def test_trec_document_7_0_does_not_judge_document_7_issue_35(tmp_path, capsys):
    """Bug: the id policy of CSV files (7.0 and 7 are one id) applied to TREC files, so qrels
    document 7.0 judged the run's document 7: P@1 1.0 instead of trec_eval's 0 (it compares
    document ids as text). Now such ids are refused; written alike, the numbers are
    trec_eval's."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run_, qrels = _trec_files(tmp_path, "7.0")
    judged = {"q1": {"7.0": 1, "9": 1}, "q2": {"4": 1, "3": 0}}
    ranked = {"q1": {"7": 2.0, "8": 1.0}, "q2": {"3": 0.5, "4": 0.2}}
    measures = pytrec_eval.RelevanceEvaluator(judged, {"P"}).evaluate(ranked)
    assert measures["q1"]["P_5"] == 0.0  # trec_eval: 7.0 is not 7
    code, out, err = run(["evaluate", run_, "--truth", qrels, "--metrics", "precision",
                          "--k", "1"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "document id '7.0'" in err and "'7'" in err and "as text" in err
    # the ids written the same way: trec_eval's P@1 and P@2 (pytrec_eval)
    run_, qrels = _trec_files(tmp_path, "7")
    judged["q1"] = {"7": 1, "9": 1}
    measures = pytrec_eval.RelevanceEvaluator(judged, {"P.1,2"}).evaluate(ranked)
    code, out, err = run(["evaluate", run_, "--truth", qrels, "--metrics", "precision",
                          "--k", "1", "2", "--ties", "trec", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    got = {f"P_{r['k']}": r["value"] for r in json.loads(out)["metrics"]}
    for name in ("P_1", "P_2"):
        assert got[name] == pytest.approx(np.mean([m[name] for m in measures.values()]))


# --------------------------------------------------------------------------- the report


def _shortened(folder: Path, computed: str, name: str) -> Path:
    """The report template up to the cell that computes ``computed``, then a cell saving
    ``name`` (the table) to summary.pkl."""
    import nbformat

    nb = nbformat.read(report.TEMPLATE, as_version=4)
    last = next(i for i, c in enumerate(nb.cells) if computed in c.source)
    nb.cells = nb.cells[:last + 1] + [nbformat.v4.new_code_cell(
        f"import pickle\nwith open('summary.pkl', 'wb') as handle:\n    pickle.dump({name}, "
        "handle)")]
    path = folder / f"short-{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def short_template(tmp_path_factory) -> Path:
    """The report template up to its metrics table, then a cell saving that table."""
    return _shortened(tmp_path_factory.mktemp("template"), "summary, notes = quietly(rm.evaluate",
                      "summary")


def _report_table(argv, tmp_path: Path, template: Path, monkeypatch, capsys) -> pd.DataFrame:
    pytest.importorskip("nbclient")
    monkeypatch.setattr(report, "TEMPLATE", template)
    out = tmp_path / "report" / "r.html"
    out.parent.mkdir(exist_ok=True)
    code, _, err = run(["report", *argv, "-q", "-o", out], capsys)
    assert (code, err) == (0, ""), err
    with open(out.parent / "summary.pkl", "rb") as handle:
        return pickle.load(handle)


def _evaluate_table(argv, capsys) -> list[dict]:
    code, out, err = run(["evaluate", *argv, "--format", "json"], capsys)
    assert (code, err) == (0, ""), err
    return json.loads(out)["metrics"]


def _plain(value):
    """A cell as JSON holds it: None for missing, numbers as float, the rest as text."""
    if value is None or value is pd.NA or isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return str(value)


def _same_numbers(table: pd.DataFrame, rows: list[dict]) -> None:
    """The table holds exactly the rows of a JSON metric list, every number equal."""
    mine = sorted((tuple(_plain(v) for v in r.values()) for r in
                   table[list(rows[0])].to_dict(orient="records")), key=repr)
    theirs = sorted((tuple(_plain(v) for v in r.values()) for r in rows), key=repr)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert a == b


@pytest.mark.parametrize("compression", ["", ".gz"])
def test_report_reads_a_trec_run_and_qrels_as_evaluate_does_issue_35(compression, tmp_path,
                                                                     short_template,
                                                                     monkeypatch, capsys):
    """Bug: `recmetrics report a.run --truth a.qrels` failed in its notebook ("unknown file
    type (.run)") where `recmetrics evaluate` read the same files; and both refused a.run.gz
    (compressed TREC files), which the CSV path's table of compressions reads."""
    import gzip

    run_, qrels = _trec_files(tmp_path, "7")
    if compression:
        for path in (run_, qrels):
            path.with_name(path.name + compression).write_bytes(gzip.compress(path.read_bytes()))
        run_, qrels = (p.with_name(p.name + compression) for p in (run_, qrels))
    argv = [run_, "--truth", qrels, "--metrics", "precision", "ndcg", "mrr", "--k", "1", "2",
            "--ci", "0.9", "--n-resamples", "100"]
    _same_numbers(_report_table(argv, tmp_path, short_template, monkeypatch, capsys),
                  _evaluate_table(argv, capsys))


def test_report_with_history_and_a_beyond_accuracy_metric_works_issue_35(tmp_path,
                                                                        short_template,
                                                                        monkeypatch, capsys):
    """Bug: `report --history h.csv --metrics ndcg diversity` failed in its notebook saying
    "pass history=" (the per-user table was computed without the history)."""
    rows = _rows()
    pred = _write(rows, tmp_path / "scores.csv")
    history = _write(rows[rows.label > 0][["user", "item"]], tmp_path / "h.csv")
    argv = [pred, "--history", history, "--metrics", "ndcg", "diversity", "--k", "3",
            "--ci", "0.9", "--n-resamples", "100"]
    summary = _report_table(argv, tmp_path, short_template, monkeypatch, capsys)
    assert set(summary.metric) == {"ndcg", "diversity"}
    _same_numbers(summary, _evaluate_table(argv, capsys))


# ------------------------------------------------------------- the same options as evaluate

#: evaluate's options the report does not take, and why (anything else must be taken)
NOT_IN_REPORT = {
    "format": "the report is HTML", "output": "its own -o (report.html)",
    "fail_under": "a gate of the metric table, not a number",
    "fail_over": "a gate of the metric table, not a number",
    "raw_csv": "how text is written to a CSV file; the report is HTML",
    "engine": "the pandas engine only", "master": "Spark", "workers": "Dask",
    "memory_limit": "Dask", "scheduler": "Dask",
}


def _options_of(parser_command: str) -> dict:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[parser_command]
    return {a.dest: a for a in sub._actions if a.dest != "help" and a.option_strings}


def _non_default(action) -> list[str]:
    """A value of the option away from its default, from the option itself where it can."""
    if action.choices and action.nargs is None:
        return [next(c for c in action.choices if c != action.default)]
    return []


def _option_runs(tmp_path: Path) -> list[list]:
    """Command lines that together set every option of evaluate the report takes away from
    its default; files with other column names, a semicolon and Latin-1 / cp1252 text."""
    rows = _rows().rename(columns={"user": "uid", "item": "iid", "score": "s", "label": "y",
                                   "rank": "r"})
    pred = _write(rows[["uid", "iid", "s", "r"]], tmp_path / "scores.csv", sep=";",
                  encoding="cp1252")
    truth = _write(rows[["uid", "iid", "y"]], tmp_path / "truth.csv", sep=";",
                   encoding="latin-1")
    users = _write(pd.DataFrame({"uid": USERS, "country": [COUNTRY[u] for u in USERS]}),
                   tmp_path / "users.txt", sep=";", encoding="latin-1")
    history = _write(rows[rows.y > 0][["uid", "iid"]], tmp_path / "history.csv", sep=";",
                     encoding="latin-1")
    catalog = _write(pd.DataFrame({"iid": ITEMS + ["f"]}), tmp_path / "catalog.csv", sep=";")
    features = _write(pd.DataFrame({"iid": ITEMS, "x": [1.0, 0, 2, 0.5, 1],
                                    "z": [0.0, 1, 1, 3, 2]}), tmp_path / "features.csv", sep=";")
    trec_run = tmp_path / "run.txt"
    trec_run.write_text("".join(f"{u} Q0 {i} {r} {s} t\n" for u, i, s, r in
                                rows[["uid", "iid", "s", "r"]].itertuples(index=False)
                                if u != "josé"))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{u} 0 {i} {y}\n" for u, i, y in
                             rows[["uid", "iid", "y"]].itertuples(index=False) if u != "josé"))
    common = ["--user-col", "uid", "--item-col", "iid", "--label-col", "y", "--sep", ";",
              "--encoding", "latin-1", "--pred-encoding", "cp1252", "--truth-encoding",
              "latin-1", "--truth", truth, "--k", "2", "3", "--n-resamples", "100", "--seed",
              "5", "--ci", "0.9"]
    # unscored="below" is refused with --by: the second run sets it
    conventions = [v for a in _options_of("evaluate").values() if a.dest in
                   {c.name for c in rm._options.CONVENTIONS} - {"unscored"} for v in
                   ([a.option_strings[0], *_non_default(a)] if a.choices else [])]
    numbers = ["--rbp-p", "0.6", "--max-grade", "3", "--min-grade", "1"]
    ranking = [m for m in rm.evaluation.METRICS if m in rm._metrics.RANKING]
    return [
        [pred, *common, "--score-col", "s", "--by", "country", "--users", users,
         "--min-slice-size", "2", "--metrics", *rm.evaluation.METRICS, *conventions, *numbers],
        [pred, *common, "--rank-col", "r", "--bootstrap", "multinomial", "--judged-only",
         "--metrics", *ranking, "--ties", "pessimistic", "--format-in", "auto",
         "--unscored", "below"],
        [pred, *common, "--score-col", "s", "--history", history, "--catalog", catalog,
         "--item-features", features, "--head-share", "0.5", "--unseen", "zero",
         "--baselines", "--metrics", "ndcg", *cli.BEYOND_METRICS],
        [trec_run, "--truth", qrels, "--format-in", "trec", "--k", "2", "--n-resamples", "100",
         "--ci", "0.9", "--ties", "trec", "--metrics", *ranking],
    ]


def test_the_report_takes_every_option_of_evaluate_and_gives_the_same_numbers(
        tmp_path, short_template, monkeypatch, capsys):
    """Derived from the parser: every option of `evaluate` is an option of `report` (or named
    in NOT_IN_REPORT with the reason), is set away from its default by one of the runs, and
    each run's report shows evaluate's numbers."""
    evaluate_options, report_options = _options_of("evaluate"), _options_of("report")
    missing = set(evaluate_options) - set(report_options) - set(NOT_IN_REPORT)
    assert not missing, f"options of evaluate the report does not take: {missing}"
    runs = _option_runs(tmp_path)
    flags = _flags(evaluate_options)
    given = {flags[a].dest for argv in runs for a in argv if isinstance(a, str) and a in flags}
    untested = set(evaluate_options) - given - set(NOT_IN_REPORT) - {"quiet", "progress"}
    assert not untested, f"options no run sets: {untested}"
    for number, argv in enumerate(runs):
        folder = tmp_path / f"run{number}"
        folder.mkdir()
        summary = _report_table(argv, folder, short_template, monkeypatch, capsys)
        _same_numbers(summary, _evaluate_table(argv, capsys))


def _flags(options: dict) -> dict:
    return {flag: action for action in options.values() for flag in action.option_strings}


def test_the_report_compares_models_at_the_alpha_and_correction_compare_takes(
        tmp_path, monkeypatch, capsys):
    """The report of several models took neither --alpha nor --correction (it used 0.05 and
    holm whatever was asked); now they are compare's, and so are the numbers."""
    compare_options, report_options = _options_of("compare"), _options_of("report")
    assert {"alpha", "correction"} <= set(compare_options) & set(report_options)
    rows = _rows()
    a = _write(rows, tmp_path / "a.csv")
    b = _write(rows.assign(score=(rows.score * 7) % 1), tmp_path / "b.csv")
    c = _write(rows.assign(score=1 - rows.score), tmp_path / "c.csv")
    argv = [a, b, c, "--metrics", "auc", "ndcg", "mrr", "--k", "2", "--n-resamples", "200",
            "--seed", "4", "--alpha", "0.2", "--correction", "bh"]
    template = _shortened(tmp_path, "compared, notes = quietly(rm.compare", "compared")
    shown = _report_table(argv, tmp_path, template, monkeypatch, capsys)
    code, out, err = run(["compare", *argv, "--format", "json"], capsys)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["alpha"] == 0.2 and document["correction"] == "bh"
    _same_numbers(shown, document["metrics"])


# --------------------------------------------------------------------------- the record


def _replay(record: dict):
    """A run re-made from its provenance record alone: each input read as recorded, then the
    recorded call."""
    frames = {i["role"]: rio.read_input(i["read"]) for i in record["inputs"]}

    def value(v):
        if isinstance(v, dict) and "input" in v and set(v) <= {"input", "column"}:
            frame = frames[v["input"]]
            return frame[v["column"]] if "column" in v else frame
        if isinstance(v, dict):
            return {key: value(x) for key, x in v.items()}
        return v

    call = record["call"]
    return getattr(rm, call["function"])(**{k: value(v) for k, v in call["arguments"].items()})


def _recorded_runs(tmp_path: Path) -> dict[str, list]:
    rows = _rows()
    pred = _write(rows, tmp_path / "scores.csv")
    users = _write(pd.DataFrame({"user": USERS, "country": [COUNTRY[u] for u in USERS]}),
                   tmp_path / "users.txt", sep="\t")
    history = _write(rows[rows.label > 0][["user", "item"]], tmp_path / "history.csv")
    features = _write(pd.DataFrame({"item": ITEMS, "x": [1.0, 0, 2, 0.5, 1]}),
                      tmp_path / "features.csv")
    run_, qrels = _trec_files(tmp_path, "7")
    b = _write(rows.assign(score=1 - rows.score), tmp_path / "b.csv")
    return {
        "sliced": ["evaluate", pred, "--by", "country", "activity", "--users", users,
                   "--min-slice-size", "2", "--ci", "0.9", "--n-resamples", "100", "--seed", "3",
                   "--k", "2"],
        "with history": ["evaluate", pred, "--history", history, "--item-features", features,
                         "--metrics", "ndcg", "novelty", "diversity", "--head-share", "0.6",
                         "--baselines"],
        "TREC": ["evaluate", run_, "--truth", qrels, "--ties", "trec", "--metrics", "map",
                 "ndcg", "--k", "1", "2"],
        "compare": ["compare", pred, b, "--metrics", "ndcg", "auc", "--n-resamples", "200",
                    "--seed", "9"],
    }


@pytest.mark.parametrize("kind", ["sliced", "with history", "TREC", "compare"])
def test_a_recorded_run_is_made_again_from_its_record_alone(kind, tmp_path, capsys,
                                                            monkeypatch):
    argv = _recorded_runs(tmp_path)[kind]
    monkeypatch.chdir(tmp_path)
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert (code, err) == (0, ""), err
    document = json.loads(out)
    record = json.loads(json.dumps(document["provenance"]))   # as stored: plain JSON
    monkeypatch.chdir("/")                                     # paths from the record only
    _same_numbers(_replay(record), document["metrics"])


def test_the_record_lists_every_input_of_every_role_and_every_option(tmp_path, capsys):
    """Bug (issue 35): the provenance had no by, min_slice_size or users file, so a sliced run
    could not be re-made from it."""
    argv = _recorded_runs(tmp_path)["sliced"]
    code, out, _ = run([*argv, "--format", "json"], capsys)
    record = json.loads(out)["provenance"]
    roles = [i["role"] for i in record["inputs"]]
    assert roles == ["pred", "users"]
    users = record["inputs"][1]
    assert users["sha256"] and users["bytes"] == (tmp_path / "users.txt").stat().st_size
    assert users["read"]["role"] == "users" and users["read"]["format"] == "csv"
    options = record["options"]
    assert options["by"] == ["country", "activity"] and options["min_slice_size"] == 2
    assert options["users"] == str(tmp_path / "users.txt")
    # every parsed option that can change a number is there: all but the presentation ones
    parsed = set(_options_of("evaluate")) - {"format", "output", "quiet", "progress"}
    columns = {"user_col", "item_col", "score_col", "rank_col", "label_col"}
    assert parsed - columns <= set(options) and options["columns"]["user"] == "user"


# --------------------------------------------------------------------------- messy inputs found since

def test_a_refusal_is_one_line_even_after_warnings_and_names_flags_issue_35(tmp_path, capsys):
    """Found by the widened property test: a warning printed before the refusal made two
    lines on stderr (an unused --item-features file, then logloss refused on ranks), and the
    refusal said "pass score= a column" (a Python keyword) on the command line."""
    rows = _rows()
    pred = _write(rows, tmp_path / "scores.csv")
    features = _write(pd.DataFrame({"item": ITEMS, "x": [1.0, 0, 2, 0.5, 1]}),
                      tmp_path / "f.csv")
    import warnings

    with warnings.catch_warnings():  # as on a terminal: warnings printed, one line each
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code, out, err = run(["evaluate", pred, "--item-features", features, "--rank-col",
                              "rank", "--metrics", "logloss"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "--rank-col rank gives each row a rank" in err and "--score-col a column" in err
    assert "score=" not in err and "rank=" not in err
    # the warning alone, on a run that works, is still printed
    with warnings.catch_warnings():
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code, out, err = run(["evaluate", pred, "--item-features", features, "--metrics",
                              "ndcg"], capsys)
    assert code == 0 and err.startswith("recmetrics: warning: --item-features given"), err


@pytest.mark.parametrize("role", ["users", "item_features"])
def test_an_attribute_file_with_a_repeated_id_is_refused_naming_file_and_line_issue_35(
        role, tmp_path, capsys):
    """Bug: `--users FILE` (or --item-features) with a user listed twice was refused by
    recmetrics.evaluate as "users has 2 duplicate user(s) ... in row 1": the Python
    argument's name and a row number, not the file and its line."""
    rows = _rows()
    pred = _write(rows, tmp_path / "scores.csv")
    if role == "users":
        frame = pd.DataFrame({"user": ["u1", "u2", "u1"], "country": ["fr", "es", "de"]})
        extra = ["--by", "country", "--users"]
    else:
        frame = pd.DataFrame({"item": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]})
        extra = ["--metrics", "diversity", "--item-features"]
    path = _write(frame, tmp_path / f"{role}.csv")
    code, out, err = run(["evaluate", pred, *extra, path], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    key = rio.INPUT_ROLES[role].ids[0]
    assert f"{path} line 4: {key} '{frame[key][0]}' has a row already (on line 2)" in err


def test_a_file_of_a_header_only_names_its_own_columns_issue_35(tmp_path, capsys):
    """A header-only --catalog file was refused as needing "at least one scored (user, item)"
    (the scores file's words), though a catalog has an item column only."""
    pred = _write(_rows(), tmp_path / "scores.csv")
    catalog = tmp_path / "catalog.csv"
    catalog.write_text("item\n")
    code, out, err = run(["evaluate", pred, "--catalog", catalog, "--metrics",
                          "catalog_coverage"], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{catalog} has no data rows; it needs at least one row of item" in err


@pytest.mark.parametrize("how", ["utf-16 with a byte-order mark", "utf-8 with a byte-order mark",
                                 "CR-only line ends", "CRLF line ends"])
def test_trec_files_are_read_as_messy_csv_files_are_issue_35(how, tmp_path):
    """TREC files with a byte-order mark (UTF-16 saved by Windows editors; UTF-8 with BOM,
    whose mark became part of the first query id) or old-Mac line ends read as the plain
    file, as CSV files are (the CSV reader's rules for BOMs and line ends)."""
    text = "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq2 Q0 d1 1 0.5 s\n"
    plain = tmp_path / "plain.run"
    plain.write_text(text)
    messy = tmp_path / "messy.run"
    data = {"utf-16 with a byte-order mark": text.encode("utf-16"),
            "utf-8 with a byte-order mark": b"\xef\xbb\xbf" + text.encode(),
            "CR-only line ends": text.replace("\n", "\r").encode(),
            "CRLF line ends": text.replace("\n", "\r\n").encode()}[how]
    messy.write_bytes(data)
    pd.testing.assert_frame_equal(rm.read_trec_run(messy), rm.read_trec_run(plain))
    assert rm.read_trec_run(messy)["user"].tolist() == ["q1", "q1", "q2"]


@pytest.mark.parametrize("role", ["scores", "users"])
def test_a_parquet_file_naming_a_column_twice_is_refused_as_a_csv_file_is_issue_35(
        role, tmp_path, capsys):
    """Bug: a Parquet file whose schema names a column read twice (pyarrow writes such files)
    ended in a KeyError traceback (scores) or "not a readable Parquet file (Multiple matches
    for FieldRef...)" (users), where a CSV header naming a column twice is refused naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows()
    pred = tmp_path / "scores.parquet"
    names = ["user", "item", "score", "label", "user" if role == "scores" else "x"]
    pq.write_table(pa.Table.from_arrays([pa.array(rows[c]) for c in
                                         ("user", "item", "score", "label", "user")],
                                        names=names), pred)
    argv = ["evaluate", pred, "--metrics", "auc"]
    if role == "users":
        users = tmp_path / "users.parquet"
        pq.write_table(pa.Table.from_arrays([pa.array(USERS), pa.array(["fr"] * 6),
                                             pa.array(["de"] * 6)],
                                            names=["user", "country", "country"]), users)
        argv += ["--by", "country", "--users", users]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    column, second = ("user", 5) if role == "scores" else ("country", 3)
    assert f"names column '{column}' twice (columns {second - 4 if role == 'scores' else 2} " \
           f"and {second}); rename one of them" in err


def test_a_parquet_file_read_as_trec_is_refused_as_parquet_issue_35(tmp_path, capsys):
    """`--format-in trec` (or a TREC run beside it) made a Parquet truth file be read as qrels
    text, refused as "not UTF-8 text; pass --encoding": advice that cannot help."""
    run_, _ = _trec_files(tmp_path, "7")
    truth = tmp_path / "truth.parquet"
    _rows()[["user", "item", "label"]].to_parquet(truth, index=False)
    code, out, err = run(["evaluate", run_, "--truth", truth], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{truth} is a Parquet file, not a TREC qrels file" in err and "encoding" not in err
