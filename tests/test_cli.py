"""The command line: every command and format, CSV and Parquet, a truth file, bad input as a table."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import _metrics, cli, report

DATA = rm.DATA_DIR
PRED_A, PRED_B = DATA / "sample_model_a.csv", DATA / "sample_model_b.csv"
PRED_A_PARQUET, TRUTH = DATA / "sample_model_a.parquet", DATA / "sample_truth.csv"
SCRIPT = shutil.which("recmetrics", path=str(Path(sys.executable).parent))


def run(argv, capsys):
    """main() in this process: (exit status, stdout, stderr)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_process(argv, *, module=False, **kwargs):
    command = [sys.executable, "-m", "recmetrics"] if module else [SCRIPT]
    return subprocess.run(command + [str(a) for a in argv], capture_output=True, text=True,
                          timeout=600, **kwargs)


def value(table, metric, k=None):
    rows = table[(table.metric == metric) & (table.k.isna() if k is None else table.k == k)]
    assert len(rows) == 1
    return float(rows.value.iloc[0])


@pytest.fixture(scope="module")
def sample():
    return pd.read_csv(PRED_A), pd.read_csv(PRED_B), pd.read_csv(TRUTH)


# --------------------------------------------------------------------------- evaluate


def test_evaluate_table_names_every_metric_and_the_conventions(capsys, sample):
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--k", "5", "10", "20"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---")) + 1
    names = [line.split()[0] for line in lines[start:lines.index("", start)]]
    assert names == ["auc", "gauc"] + [f"{m}@{k}" for m in ("precision", "recall", "hit_rate", "map")
                                       for k in (5, 10, 20)] + ["mrr", "ndcg@5", "ndcg@10", "ndcg@20"]
    expected = rm.evaluate(sample[0], sample[2], k=[5, 10, 20])
    ndcg10 = next(line for line in out.splitlines() if line.startswith("ndcg@10 "))
    assert ndcg10.split()[1] == f"{value(expected, 'ndcg', 10):.4f}"
    assert ("conventions: ties=average; gain=exponential; ideal=truth; denominator=relevant; "
            "gauc_weight=impressions; no_relevant=skip") in " ".join(out.split())
    assert f"{PRED_A} (27,470 rows, 2,000 users) against {TRUTH}" in out


def test_evaluate_json_equals_the_python_api(capsys, sample):
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--k", "5", "10", "--format", "json",
                          "--gain", "linear", "--denominator", "min_k"], capsys)
    assert (code, err) == (0, "")
    document = json.loads(out)
    expected = rm.evaluate(sample[0], sample[2], k=[5, 10], gain="linear", denominator="min_k")
    got = pd.DataFrame(document["metrics"])
    assert got.metric.tolist() == expected.metric.tolist()
    np.testing.assert_array_equal(got.value.to_numpy(), expected.value.to_numpy())
    assert [m["k"] for m in document["metrics"]] == [None if pd.isna(k) else int(k) for k in expected.k]
    assert document["conventions"] == {**expected.attrs["conventions"]}
    assert document["inputs"]["pred"] == {"path": str(PRED_A), "rows": 27_470, "users": 2_000}


def test_evaluate_csv_with_intervals_is_seeded(capsys, sample):
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--format", "csv", "--ci", "0.9",
            "--n-resamples", "200", "--seed", "3", "--metrics", "gauc", "ndcg", "mrr"]
    code, out, err = run(argv, capsys)
    assert (code, err) == (0, "")
    got = pd.read_csv(io.StringIO(out))
    assert run(argv, capsys)[1] == out                      # same seed, same intervals
    expected = rm.evaluate(sample[0], sample[2], metrics=["gauc", "ndcg", "mrr"], ci=0.9,
                           n_resamples=200, seed=3)
    assert got.columns.tolist() == expected.columns.tolist()
    np.testing.assert_allclose(got[["value", "ci_low", "ci_high"]].to_numpy(),
                               expected[["value", "ci_low", "ci_high"]].to_numpy(), rtol=1e-14)


def test_parquet_and_csv_give_the_same_numbers(capsys):
    from_csv = run(["evaluate", PRED_A, "--truth", TRUTH, "--format", "csv"], capsys)
    from_parquet = run(["evaluate", PRED_A_PARQUET, "--truth", TRUTH, "--format", "csv"], capsys)
    assert from_csv == from_parquet and from_csv[0] == 0


def test_parquet_truth_and_integer_ids_match_csv_text_ids(capsys, tmp_path):
    """Ids are compared as text: 7 in a Parquet int column matches "7" in a CSV file."""
    pred = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": [10, 11, 12, 10, 13],
                         "score": [0.9, 0.5, 0.1, 0.3, 0.8]})
    truth = pd.DataFrame({"user": [1, 2, 2], "item": [12, 10, 99], "label": [1, 1, 2]})
    pred.to_csv(tmp_path / "pred.csv", index=False)
    truth.to_parquet(tmp_path / "truth.parquet", index=False)
    # item 99 is relevant and never scored: AUC and GAUC say they leave it out (issue 37)
    with warnings.catch_warnings():
        warnings.simplefilter("always", rm.RecmetricsWarning)   # the command prints it
        code, out, err = run(["evaluate", tmp_path / "pred.csv", "--truth",
                              tmp_path / "truth.parquet", "--k", "2", "--format", "json"], capsys)
    assert code == 0 and err.startswith("recmetrics: warning: 1 of 3 relevant truth rows were "
                                        "never scored by pred")
    got = {(m["metric"], m["k"]): m["value"] for m in json.loads(out)["metrics"]}
    with pytest.warns(rm.RecmetricsWarning, match="1 of 3 relevant truth rows were never scored"):
        expected = rm.evaluate(pred, truth, k=2)
    # user 1: item 12 ranked 3rd; user 2: item 10 ranked 2nd, item 99 relevant but never scored
    assert got[("recall", 2)] == value(expected, "recall", 2) == pytest.approx((0 + 1 / 2) / 2)
    assert got[("mrr", None)] == value(expected, "mrr")


def test_labels_in_the_scores_file_equal_a_truth_file(capsys, tmp_path, sample):
    merged = sample[0].merge(sample[2], on=["user", "item"]).rename(
        columns={"user": "uid", "item": "iid", "score": "p", "label": "clicked"})
    merged.to_csv(tmp_path / "merged.csv", index=False)
    with_truth = run(["evaluate", PRED_A, "--truth", TRUTH, "--format", "csv"], capsys)
    in_file = run(["evaluate", tmp_path / "merged.csv", "--user-col", "uid", "--item-col", "iid",
                   "--score-col", "p", "--label-col", "clicked", "--format", "csv"], capsys)
    assert in_file == with_truth and in_file[0] == 0


def test_output_file_is_written_whole_and_its_format_follows_the_extension(capsys, tmp_path):
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "-o", tmp_path / "m.json"], capsys)
    assert (code, out, err) == (0, "", "")
    assert json.loads((tmp_path / "m.json").read_text())["command"] == "evaluate"
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]       # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o666 & ~umask   # not a private temp file
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "-o", tmp_path / "m.csv"], capsys)
    assert code == 0 and pd.read_csv(tmp_path / "m.csv").metric.iloc[0] == "auc"


# --------------------------------------------------------------------------- compare


def test_compare_says_which_model_is_better(capsys, sample):
    code, out, err = run(["compare", PRED_A, PRED_B, "--truth", TRUTH, "--k", "5", "10",
                          "--n-resamples", "2000"], capsys)
    assert (code, err) == (0, "")
    lines = {line.split()[0]: line for line in out.splitlines() if line and line.split()[0] in
             ("gauc", "ndcg@10", "map@10", "hit_rate@10", "auc")}
    assert lines["gauc"].endswith("B better") and lines["ndcg@10"].endswith("B better")
    assert lines["hit_rate@10"].endswith("no significant difference")
    # global AUC is now tested by DeLong's test (it was "not tested" before issue 22)
    assert lines["auc"].endswith("B better")
    assert "paired t-test and a sign-flip randomization test (2,000 resamples, seed 0)" in \
        " ".join(out.split())
    assert "after Holm correction over all 13 rows of the table" in " ".join(out.split())


def test_compare_json_carries_the_api_p_values_and_a_verdict(capsys, sample):
    code, out, err = run(["compare", PRED_A, PRED_B, "--truth", TRUTH, "--metrics", "ndcg", "mrr",
                          "--n-resamples", "500", "--seed", "4", "--alpha", "0.01", "--format",
                          "json"], capsys)
    assert (code, err) == (0, "")
    document = json.loads(out)
    expected = rm.compare(sample[0], sample[1], sample[2], metrics=["ndcg", "mrr"], n_resamples=500,
                          seed=4)
    got = pd.DataFrame(document["metrics"])
    np.testing.assert_array_equal(got.difference, expected.difference)
    np.testing.assert_array_equal(got.p_randomization, expected.p_randomization)
    np.testing.assert_array_equal(got.p_ttest, expected.p_ttest)
    for column in ("p_bootstrap", "p_ttest_adjusted", "p_randomization_adjusted",
                   "p_bootstrap_adjusted"):
        np.testing.assert_array_equal(got[column], expected[column], err_msg=column)
    assert document["alpha"] == 0.01 and document["correction"] == "holm"
    for row in got.itertuples():  # the verdict reads the Holm-adjusted randomization p-value
        significant = row.p_randomization_adjusted < 0.01
        assert row.verdict == (("B better" if row.difference > 0 else "A better") if significant
                               else "no significant difference")


def test_compare_csv_and_parquet(capsys, sample):
    """Model A from Parquet or from CSV: the same numbers, and those of the Python API."""
    tables = []
    for pred_a in (PRED_A_PARQUET, PRED_A):
        code, out, err = run(["compare", pred_a, PRED_B, "--truth", TRUTH, "--format", "csv",
                              "--metrics", "gauc", "ndcg", "mrr", "--k", "5", "--n-resamples",
                              "200", "--seed", "3"], capsys)
        assert (code, err) == (0, "")
        tables.append(pd.read_csv(io.StringIO(out)))
    parquet, csv = tables
    assert parquet.columns.tolist() == [
        "model_a", "model_b", "metric", "k", "value_a", "value_b", "difference", "ci_low",
        "ci_high", "p_ttest", "p_ttest_adjusted", "p_randomization", "p_randomization_adjusted", "p_bootstrap",
        "p_bootstrap_adjusted", "p_delong", "p_delong_adjusted", "n_users", "n_users_a",
        "n_users_b", "conventions", "note", "verdict"]
    assert set(parquet.model_a) == {"sample_model_a"} and set(parquet.model_b) == {"sample_model_b"}
    pd.testing.assert_frame_equal(parquet, csv)
    expected = rm.compare(pd.read_parquet(PRED_A_PARQUET), sample[1], sample[2],
                          metrics=["gauc", "ndcg", "mrr"], k=5, n_resamples=200, seed=3)
    assert parquet.metric.tolist() == expected.metric.tolist() == ["gauc", "mrr", "ndcg"]
    for column in ("value_a", "value_b", "difference", "p_ttest", "p_randomization"):
        np.testing.assert_allclose(parquet[column], expected[column], rtol=1e-12, atol=0,
                                   err_msg=column)
    np.testing.assert_array_equal(parquet.n_users, expected.n_users)
    assert (parquet.value_b > parquet.value_a).all()  # B is the stronger model of the sample


# --------------------------------------------------------------------------- processes


def test_the_console_script_and_python_m_print_the_same(tmp_path):
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "ndcg", "--k", "3"]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}  # the provenance line's time
    script, module = run_process(argv, env=env), run_process(argv, module=True, env=env)
    assert script.returncode == module.returncode == 0
    assert script.stdout == module.stdout and "ndcg@3" in script.stdout
    assert script.stderr == module.stderr == ""          # no progress bar when not a terminal


def test_help_lists_the_three_commands():
    done = run_process(["--help"], module=True)
    assert done.returncode == 0
    for command in ("evaluate", "compare", "report"):
        assert command in done.stdout


def test_a_progress_bar_is_shown_on_a_terminal_only():
    import pty
    import threading

    leader, follower = pty.openpty()
    seen = []

    def drain():
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:        # the terminal closed
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run([SCRIPT, "evaluate", str(PRED_A), "--truth", str(TRUTH), "--ci", "0.9",
                               "--n-resamples", "100"], stdout=subprocess.PIPE, stderr=follower,
                              timeout=600)
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    shown = b"".join(seen)
    assert done.returncode == 0
    assert b"[1/4] reading sample_model_a.csv" in shown and b"[2/4] reading sample_truth.csv" in shown
    assert b"[3/4] bootstrapping intervals (100 resamples)" in shown
    assert b"510k/510k" in shown                         # the reading bar counts the file's bytes
    quiet = run_process(["evaluate", PRED_A, "--truth", TRUTH, "--quiet"])
    assert quiet.returncode == 0 and quiet.stderr == ""


# --------------------------------------------------------------------------- bad input


def _write(path: Path, text: str | bytes) -> Path:
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def _parquet(path: Path, text: str) -> Path:
    """The CSV text as a Parquet file (ids as strings)."""
    pd.read_csv(io.StringIO(text), dtype={"user": str, "item": str}).to_parquet(path)
    return path


GOOD = "user,item,score\nu1,a,0.9\nu1,b,0.2\nu2,a,0.4\n"
TRUTH_TEXT = "user,item,label\nu1,a,1\nu2,a,0\n"


def _tie_straddling_k(tmp):
    _write(tmp / "ties.csv", "user,item,score,label\nu,a,0.5,1\nu,b,0.5,0\nu,c,0.5,2\n")
    return ["evaluate", tmp / "ties.csv", "--ideal", "list", "--k", "1"]


BAD = [  # (id, argv builder, message regex); every case also writes -o to a folder that must stay empty
    ("missing pred file", lambda t: ["evaluate", t / "nope.csv"], r"nope\.csv: no such file; check the path"),
    ("missing truth file", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth", t / "t.csv"],
     r"t\.csv: no such file"),
    ("unknown file type", lambda t: ["evaluate", _write(t / "p.xlsx", GOOD)],
     r"p\.xlsx: unknown file type \(\.xlsx\); give a \.csv, \.tsv, \.txt \(optionally compressed, "
     r"e\.g\. \.csv\.gz\) or \.parquet file"),
    ("a TREC file without its extension", lambda t: ["evaluate", _write(t / "results.test", GOOD)],
     r"results\.test: unknown file type \(\.test\); .* a TREC run or qrels file is read as \.run, "
     r"\.qrels or \.trec, or with --format-in trec"),
    ("a folder as input", lambda t: ["evaluate", (t / "d.csv").mkdir() or t / "d.csv"], r"d\.csv is a folder"),
    ("empty file", lambda t: ["evaluate", _write(t / "p.csv", "")], r"p\.csv is empty; a CSV file needs a header"),
    ("header only", lambda t: ["evaluate", _write(t / "p.csv", "user,item,score,label\n")],
     r"p\.csv has no data rows"),
    ("not text", lambda t: ["evaluate", _write(t / "p.csv", b"\x81\x00garbage\x00\n\x9c")],
     r"p\.csv: byte 81 in line 1 cannot be read as UTF-8; it is not UTF-8; pass --encoding"),
    ("not parquet", lambda t: ["evaluate", _write(t / "p.parquet", GOOD)],
     r"p\.parquet is not a readable Parquet file .*; check its format"),
    ("missing score column", lambda t: ["evaluate", _write(t / "p.csv", "user,item,label\nu,a,1\n")],
     r"p\.csv has no column 'score' \(its columns: 'user', 'item', 'label'\); rename the column\(s\) or "
     r"pass --score-col NAME"),
    ("wrong --user-col", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth",
                                    _write(t / "t.csv", TRUTH_TEXT), "--user-col", "uid"],
     r"p\.csv has no column 'uid' .*pass --user-col user$"),  # the likely column, named
    ("no labels and no truth", lambda t: ["evaluate", _write(t / "p.csv", GOOD)],
     r"p\.csv has no column 'label' .*pass --label-col NAME, or give the labels in a separate file "
     r"with --truth FILE"),
    ("truth without the label named", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth",
                                                 _write(t / "t.csv", "user,item,stars\nu1,a,1\n"),
                                                 "--label-col", "grade"],
     r"t\.csv has no column 'grade' .*pass --label-col stars$"),
    ("duplicate pairs", lambda t: ["evaluate", _write(t / "p.csv", GOOD + "u1,b,0.3\n"), "--truth",
                                   _write(t / "t.csv", TRUTH_TEXT)],
     r"p\.csv has 1 duplicate \(user, item\) row\(s\) \(first: user='u1', item='b' in line 5\); keep one "
     r"row per pair"),
    # issue 36: evaluate leaves the check of the files' pairs to its join (one sort), then
    # names the file and line as the reader did, the first file first
    ("duplicate truth pairs", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth",
                                         _write(t / "t.csv", TRUTH_TEXT + "\nu1,a,0\n")],
     r"t\.csv has 1 duplicate \(user, item\) row\(s\) \(first: user='u1', item='a' in line 5\); "
     r"keep one row per pair"),
    ("duplicate pairs in both", lambda t: ["evaluate", _write(t / "p.csv", GOOD + "u2,a,0.1\n"),
                                           "--truth", _write(t / "t.csv", TRUTH_TEXT + "u1,a,0\n")],
     r"p\.csv has 1 duplicate \(user, item\) row\(s\) \(first: user='u2', item='a' in line 5\)"),
    ("duplicate pairs in Parquet", lambda t: ["evaluate", _parquet(t / "p.parquet", GOOD + "u1,a,0.3\n"),
                                              "--truth", _write(t / "t.csv", TRUTH_TEXT)],
     r"p\.parquet has 1 duplicate \(user, item\) row\(s\) \(first: user='u1', item='a' in row 4\); "
     r"keep one row per pair"),
    ("duplicate pairs under the id policy", lambda t: ["evaluate", _write(t / "p.csv", GOOD + "u1, a,0.3\n"),
                                                       "--truth", _write(t / "t.csv", TRUTH_TEXT)],
     r"pred has 1 duplicate \(user, item\) row\(s\) \(first: user='u1', item=' a' in row 3; ids are "
     r"compared as text, so 7, 7\.0 and ' 7' are one id\); keep one row per pair"),
    ("NaN score", lambda t: ["evaluate", _write(t / "p.csv", GOOD + "u3,a,\n"), "--truth",
                             _write(t / "t.csv", TRUTH_TEXT)],
     r"p\.csv column 'score' has 1 missing or NaN value\(s\) \(first in line 5\); drop or fill them"),
    ("text score", lambda t: ["evaluate", _write(t / "p.csv", GOOD + "u3,a,high\n"), "--truth",
                              _write(t / "t.csv", TRUTH_TEXT)],
     r"p\.csv column 'score' must hold numbers, found 'high' in line 5; fix or drop that row"),
    ("text label", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth",
                              _write(t / "t.csv", TRUTH_TEXT + "u2,b,yes\n")],
     r"t\.csv column 'label' must hold numbers, found 'yes' in line 4"),
    ("negative label", lambda t: ["evaluate", _write(t / "p.csv", GOOD), "--truth",
                                  _write(t / "t.csv", TRUTH_TEXT + "u2,b,-1\n")],
     r"t\.csv column 'label' has a negative relevance label \(-1 in line 4\); labels must be >= 0"),
    ("empty user id", lambda t: ["evaluate", _write(t / "p.csv", GOOD + ",c,0.5\n"), "--truth",
                                 _write(t / "t.csv", TRUTH_TEXT)],
     r"p\.csv column 'user' has 1 missing id\(s\) \(first in line 5\); fill or drop those rows"),
    ("k is zero", lambda t: ["evaluate", PRED_A, "--truth", TRUTH, "--k", "5", "0"],
     r"argument --k: 0 is not >= 1; a cut-off counts the top items, e.g\. --k 5 10 20; see "
     r"'recmetrics evaluate --help'"),
    ("k is text", lambda t: ["evaluate", PRED_A, "--k", "ten"], r"argument --k: 'ten' is not a whole number"),
    ("unknown metric", lambda t: ["evaluate", PRED_A, "--metrics", "ndgc"],
     r"argument --metrics: invalid choice: 'ndgc' \(choose from '?auc'?, '?gauc'?,"),
    ("unknown tie policy", lambda t: ["compare", PRED_A, PRED_B, "--ties", "random"],
     r"argument --ties: invalid choice: 'random'"),
    ("ci as a percentage", lambda t: ["evaluate", PRED_A, "--ci", "95"],
     r"argument --ci: '95' must be a number strictly between 0 and 1, e\.g\. 0\.95"),
    ("zero resamples", lambda t: ["compare", PRED_A, PRED_B, "--n-resamples", "0"],
     r"argument --n-resamples: '0' must be a whole number >= 100"),
    ("unknown option", lambda t: ["evaluate", PRED_A, "--topk", "5"], r"unrecognized arguments: --topk 5"),
    ("unknown command", lambda t: ["evalute", PRED_A], r"argument COMMAND: invalid choice: 'evalute'"),
    ("no PRED", lambda t: ["evaluate"], r"the following arguments are required: PRED"),
    ("output folder missing", lambda t: ["evaluate", PRED_A, "--truth", TRUTH, "-o", t / "no" / "m.json"],
     r"-o .*m\.json: folder .*no does not exist; create it first"),
    ("output is a folder", lambda t: ["evaluate", PRED_A, "--truth", TRUTH, "-o", t],
     r"-o .*: is a folder; give a file name"),
    ("report into a missing folder", lambda t: ["report", PRED_A, "--truth", TRUTH, "-o", t / "no" / "r.html"],
     r"-o .*r\.html: folder .*no does not exist; create it first"),
    ("report not html", lambda t: ["report", PRED_A, "--truth", TRUTH, "-o", t / "report.pdf"],
     r"-o .*report\.pdf: cannot write \.pdf files; name the file \.html, \.htm"),
    ("report of a missing file", lambda t: ["report", t / "nope.parquet", "-o", t / "r.html"],
     r"nope\.parquet: no such file"),
    ("compare names the bad file", lambda t: ["compare", PRED_A, _write(t / "b.csv", GOOD + "u1,a,0.1\n"),
                                              "--truth", TRUTH],
     r"b\.csv has 1 duplicate \(user, item\) row\(s\)"),
    ("ValueError from recmetrics", _tie_straddling_k,
     r"--ideal list with --ties average is undefined here: a tie of scores straddles position k=1"),
]


@pytest.mark.parametrize("build, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_exits_2_with_one_line_and_no_output(build, message, tmp_path, capsys):
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    outputs.mkdir()
    argv = [str(a) for a in build(inputs)]
    if "-o" not in argv:
        argv += ["-o", str(outputs / ("r.html" if argv and argv[0] == "report" else "m.json"))]
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("recmetrics: error: ")
    assert "Traceback" not in err
    assert re.search(message, lines[0]), lines[0]
    assert list(outputs.iterdir()) == []
    leftovers = [p.name for p in inputs.rglob("*") if p.name.endswith(".part")]
    assert leftovers == []


@pytest.mark.parametrize("case", ["missing pred file", "unknown metric", "duplicate pairs",
                                  "ValueError from recmetrics"])
def test_bad_input_in_a_real_process(case, tmp_path):
    build, message = next(c[1:] for c in BAD if c[0] == case)
    for module in (False, True):
        folder = tmp_path / ("python -m" if module else "script")
        folder.mkdir()
        done = run_process(build(folder), module=module)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("recmetrics: error: ")
        assert "Traceback" not in done.stderr


def test_a_failed_command_leaves_an_existing_output_untouched(tmp_path, capsys):
    target = _write(tmp_path / "metrics.json", "previous results\n")
    code, _, err = run(["evaluate", _write(tmp_path / "p.csv", GOOD), "-o", target], capsys)
    assert code == 2 and "has no column 'label'" in err
    assert target.read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json", "p.csv"]


def test_a_report_notebook_that_fails_writes_nothing(tmp_path, capsys, monkeypatch):
    """A cell that raises: one line naming the error, exit 2, no HTML and no temporary file."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("k = [10]"),
        nbformat.v4.new_code_cell("raise ValueError('pred has nothing to plot; give more rows')")])
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    template = tmp_path / "broken.ipynb"
    nbformat.write(nb, template)
    monkeypatch.setattr(report, "TEMPLATE", template)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = run(["report", PRED_A, "--truth", TRUTH, "-o", out_dir / "r.html"], capsys)
    assert code == 2 and out == ""
    assert err.splitlines() == ["recmetrics: error: the report notebook failed (ValueError: pred has "
                                "nothing to plot; give more rows); no report was written"]
    assert list(out_dir.iterdir()) == []


# --------------------------------------------------------------------------- reported cases


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "{labelled}", "--score-col", "label"],
     "--score-col and --label-col both name the column 'label', so it would be judged against "
     "itself"),
    (["evaluate", "{labelled}", "--label-col", "score"], "--score-col and --label-col both name "
                                                         "the column 'score'"),
    (["compare", "{labelled}", "{labelled}", "--score-col", "label"], "--score-col and --label-col"),
    (["evaluate", "{labelled}", "--item-col", "user"], "--user-col and --item-col both name"),
])
def test_a_score_column_that_is_the_label_column_is_refused(argv, message, tmp_path, capsys,
                                                            sample):
    """Bug: --score-col label evaluated the labels against themselves: AUC 1.0."""
    labelled = tmp_path / "labelled.csv"
    sample[0].merge(sample[2]).to_csv(labelled, index=False)
    code, out, err = run([a.replace("{labelled}", str(labelled)) for a in argv], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"recmetrics: error: {message}"), err


def test_score_equal_to_label_is_refused_in_python(sample):
    labelled = sample[0].merge(sample[2])
    with pytest.raises(ValueError, match=r"^pred: score='label' and label='label' name the same "
                                         r"column, so pred would be judged against itself"):
        rm.evaluate(labelled, score="label")
    with pytest.raises(ValueError, match="name the same column"):
        rm.evaluate_per_user(labelled, score="label")
    # with a truth frame, a pred column named like truth's label column is a score like any other
    scored = sample[0].rename(columns={"score": "label"})
    got = rm.evaluate(scored, sample[2], score="label", metrics=["auc"]).value.iloc[0]
    assert got == rm.evaluate(sample[0], sample[2], metrics=["auc"]).value.iloc[0]


def test_a_confidence_level_is_printed_with_the_digits_it_needs(capsys):
    """Bug: --ci 0.999 was labelled "100% CI"."""
    for level, shown in (("0.999", "99.9%"), ("0.95", "95%"), ("0.9", "90%"), ("0.9995", "99.95%")):
        code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "auc", "--ci",
                              level, "--n-resamples", "100"], capsys)
        assert (code, err) == (0, "")
        header = next(line for line in out.splitlines() if line.startswith("metric"))
        assert header.split()[2:4] == [shown, "CI"], header
        assert f"CI: {shown} percentile bootstrap" in out
        assert "100%" not in out
    code, out, err = run(["compare", PRED_A, PRED_B, "--truth", TRUTH, "--metrics", "auc",
                          "--alpha", "0.001", "--n-resamples", "100"], capsys)
    assert code == 0 and "about 0.1% of the rows tested" in " ".join(out.split())


# --------------------------------------------------------------------------- many models, gates


def _three_files(tmp_path):
    """30 users with one relevant item of two: 'good' ranks it first for every user, 'bad'
    second, 'mid' first for half of the users (mrr 1, 0.5 and 0.75)."""
    users = np.repeat(np.arange(30), 2)
    items = np.tile([0, 1], 30)
    relevant = items == 0
    paths = {}
    for name, first in (("bad", ~relevant), ("mid", relevant == (users % 2 == 0)),
                        ("good", relevant)):
        paths[name] = tmp_path / f"{name}.csv"
        pd.DataFrame({"user": users, "item": items, "score": np.where(first, 0.9, 0.1)}) \
            .to_csv(paths[name], index=False)
    paths["truth"] = tmp_path / "truth.csv"
    pd.DataFrame({"user": users, "item": items, "label": relevant.astype(int)}) \
        .to_csv(paths["truth"], index=False)
    return paths


EXPORTED = {
    "markdown": "| # | model | mrr |\n"
                "| :-- | :-- | --: |\n"
                "| a | bad | 0.5000 |\n"
                "| b | mid | 0.7500<sup>a</sup> |\n"
                "| c | good | **1.0000**<sup>ab</sup> |\n",
    "latex": "\\begin{tabular}{llr}\n"
             "\\toprule\n"
             "\\# & model & mrr \\\\\n"
             "\\midrule\n"
             "a & bad & 0.5000 \\\\\n"
             "b & mid & 0.7500$^{a}$ \\\\\n"
             "c & good & \\textbf{1.0000}$^{ab}$ \\\\\n"
             "\\bottomrule\n"
             "\\end{tabular}\n",
    "html": "<table>\n<thead>\n<tr><th>#</th><th>model</th><th>mrr</th></tr>\n</thead>\n"
            "<tbody>\n"
            "<tr><td>a</td><td>bad</td><td>0.5000</td></tr>\n"
            "<tr><td>b</td><td>mid</td><td>0.7500<sup>a</sup></td></tr>\n"
            "<tr><td>c</td><td>good</td><td><b>1.0000</b><sup>ab</sup></td></tr>\n"
            "</tbody>\n</table>\n",
}


@pytest.mark.parametrize("fmt", ["markdown", "latex", "html"])
def test_compare_many_files_exports_the_results_table(fmt, tmp_path, capsys):
    paths = _three_files(tmp_path)
    argv = ["compare", paths["bad"], paths["mid"], paths["good"], "--truth", paths["truth"],
            "--metrics", "mrr", "--n-resamples", "100"]
    code, out, err = run(argv + ["--format", fmt], capsys)
    assert (code, err) == (0, "")
    assert out == EXPORTED[fmt]
    suffix = {"markdown": ".md", "latex": ".tex", "html": ".html"}[fmt]
    code, out, err = run(argv + ["-o", tmp_path / f"table{suffix}"], capsys)
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / f"table{suffix}").read_text() == EXPORTED[fmt]


def test_compare_many_files_json_names_the_models_and_the_correction(tmp_path, capsys):
    paths = _three_files(tmp_path)
    code, out, err = run(["compare", paths["bad"], paths["mid"], paths["good"], "--truth",
                          paths["truth"], "--metrics", "mrr", "--n-resamples", "100",
                          "--baseline", "mid", "--correction", "bonferroni", "--format", "json"],
                         capsys)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert (document["correction"], document["baseline"]) == ("bonferroni", "mid")
    assert [document["inputs"][r]["model"] for r in ("a", "b", "c")] == ["bad", "mid", "good"]
    got = pd.DataFrame(document["metrics"])
    assert got[["model_a", "model_b"]].values.tolist() == [["mid", "bad"], ["mid", "good"]]
    assert got.difference.tolist() == [-0.25, 0.25]
    np.testing.assert_allclose(got.p_randomization_adjusted,
                               np.minimum(1, 2 * got.p_randomization), rtol=1e-15)


def _without_provenance(out: str) -> dict:
    """A JSON document without its provenance (which records the time and the command line)."""
    document = json.loads(out)
    document.pop("provenance")
    return document


@pytest.mark.parametrize("gate, status, message", [
    (["--fail-under", "ndcg@10=0.30", "auc=0.6"], 0, None),
    (["--fail-under", "ndcg@10=0.7"], 3,
     r"recmetrics: gate failed: --fail-under ndcg@10=0\.7: ndcg@10 = 0\.6109 is below 0\.7$"),
    (["--fail-under", "auc=0.6", "mrr=0.99", "--ci", "0.9"], 3,
     r"recmetrics: gate failed: --fail-under mrr=0\.99: mrr = 0\.6050 \(90% CI "
     r"\[0\.\d{4}, 0\.\d{4}\]\) is below 0\.99$"),
])
def test_evaluate_fail_under_gate(gate, status, message, capsys):
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--n-resamples", "200", "--format", "json"]
    extra = gate[gate.index("--ci"):] if "--ci" in gate else []
    code, out, err = run(argv + gate, capsys)
    assert code == status
    if message is None:
        assert err == ""
    else:
        assert len(err.splitlines()) == 1 and re.match(message, err.strip()), err
    # the output is what it is without the gate
    assert _without_provenance(out) == _without_provenance(run(argv + extra, capsys)[1])


def _gated(metric, cut):
    """The command line of one registry metric at k = 10 with a gate it cannot pass, and the
    table row the gate reads."""
    spec = _metrics.METRIC[metric]
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--k", "10", "--metrics", metric,
            "--format", "json"]
    if spec.family == "beyond":
        argv += ["--history", DATA / "sample_history.csv"]
    if spec.name == "err":
        argv += ["--ties", "optimistic"]   # ERR under averaged ties is refused on mixed ties
    name = spec.table_name + ("" if cut is None else f"@{cut}")
    lower = metric in _metrics.LOWER_IS_BETTER
    gate = ["--fail-over", f"{name}=-1"] if lower else ["--fail-under", f"{name}=1e9"]
    return argv + gate, spec.table_name, (None if spec.cut == "none" else 10)


@pytest.mark.parametrize("metric", [m.name for m in _metrics.REGISTRY])
def test_every_registry_metric_can_be_gated_with_and_without_its_cut_off(metric, capsys):
    """Every metric of the registry is gated by --fail-under (--fail-over when lower is
    better), named as its rows are (ndcg@10, mrr@10 for mrr@k, auc) and, when its rows have a
    cut-off and --k gives one, named alone (ndcg): each gate reads the value the table holds."""
    spec = _metrics.METRIC[metric]
    # named alone, "mrr" is the uncut MRR of --metrics mrr, not a row of mrr@k
    alone = _metrics.row_metric(spec.table_name, None) in (None, spec)
    forms = ([None] if alone else []) + ([10] if spec.cut == "per_k" else [])
    for cut in forms:
        argv, row_name, row_k = _gated(metric, cut)
        code, out, err = run(argv, capsys)
        rows = pd.DataFrame(json.loads(out)["metrics"])
        value = rows[(rows.metric == row_name)
                     & (rows.k.isna() if row_k is None else rows.k == row_k)].value
        assert len(value) == 1
        shown = f"{row_name}{'' if row_k is None else f'@{row_k}'}"
        side = "above -1" if metric in _metrics.LOWER_IS_BETTER else "below 1e+09"
        assert code == 3 and len(err.splitlines()) == 1, err
        assert f": {shown} = {float(value.iloc[0]):.4f} is {side}" in err, err


def test_fail_under_err_no_longer_ends_in_a_traceback(capsys):
    """The design review's reproduction: ``--metrics err --ties optimistic --fail-under err=0.3``
    computed the table, then ended in an IndexError (it looked for an err row without k). ERR
    has a row per cut-off; named alone with one --k, the gate reads err@10."""
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "err", "--k", "10",
                          "--ties", "optimistic", "--fail-under", "err=0.3", "--format", "json"],
                         capsys)
    row = json.loads(out)["metrics"][0]
    assert (row["metric"], row["k"]) == ("err", 10)
    assert code == (0 if row["value"] >= 0.3 else 3), err
    code, _, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "err", "--k", "10",
                        "--ties", "optimistic", "--fail-under", "err@10=0.99"], capsys)
    assert code == 3 and err.strip() == (f"recmetrics: gate failed: --fail-under err@10=0.99: "
                                         f"err@10 = {row['value']:.4f} is below 0.99")


def test_err_at_k_and_mrr_at_k_can_be_gated(capsys):
    """Both were refused as gates ("err takes no cut-off", "mrr takes no cut-off")."""
    for metric, gate in (("err", "err@10=0.1"), ("mrr@k", "mrr@10=0.1")):
        code, _, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", metric, "--k",
                            "10", "--ties", "optimistic", "--fail-under", gate], capsys)
        assert (code, err) == (0, "")


def test_evaluate_fail_under_names_the_interval_bounds(capsys):
    code, out, err = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "mrr", "--ci", "0.9",
                          "--n-resamples", "200", "--format", "json", "--fail-under",
                          "mrr=0.99"], capsys)
    row = json.loads(out)["metrics"][0]
    assert code == 3
    assert f"mrr = {row['value']:.4f} (90% CI [{row['ci_low']:.4f}, {row['ci_high']:.4f}])" in err


def test_compare_fail_if_worse_gate(capsys):
    common = ["--truth", TRUTH, "--n-resamples", "500", "--metrics", "ndcg", "map", "mrr"]
    # B is the better model of the sample: B as the new model passes ...
    code, out, err = run(["compare", PRED_A, PRED_B, *common, "--fail-if-worse",
                          "ndcg@10,map@10"], capsys)
    assert (code, err) == (0, "")
    # ... and A as the new model (BASE = B) fails, with the adjusted p-value in one line
    argv = ["compare", PRED_B, PRED_A, *common, "--format", "json"]
    code, out, err = run(argv + ["--fail-if-worse", "ndcg@10,map@10"], capsys)
    assert code == 3 and len(err.splitlines()) == 1, err
    rows = pd.DataFrame(json.loads(out)["metrics"]).set_index("metric")
    p = rows.loc["ndcg", "p_randomization_adjusted"]
    assert err.startswith("recmetrics: gate failed: --fail-if-worse ndcg@10: sample_model_a is "
                          "significantly worse than sample_model_b on ndcg@10 (0.6109 vs 0.6383, "
                          f"difference -0.0273, adjusted p = {p:.4f} < alpha 0.05, holm "
                          "correction); --fail-if-worse map@10: "), err
    assert rows.loc["ndcg", "verdict"] == "A better"
    # the output is the one written without the gate
    assert _without_provenance(out) == _without_provenance(run(argv, capsys)[1])
    # at a stricter alpha the same change is not significant: the gate reads the verdicts
    code, _, err = run(["compare", PRED_B, PRED_A, *common, "--alpha", "0.0001",
                        "--fail-if-worse", "ndcg@10"], capsys)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("argv, message", [
    (["evaluate", PRED_A, "--k", "5", "10", "--fail-under", "ndcg=0.3"],
     "--fail-under ndcg: ndcg has a row per cut-off; name one, e.g. ndcg@5"),
    (["evaluate", PRED_A, "--fail-under", "ndcg@10=high"], "'high' is not a number"),
    (["evaluate", PRED_A, "--fail-under", "ndcg@10=nan"], "'nan' is not a number"),
    (["evaluate", PRED_A, "--fail-under", "ndcg@10"], "'ndcg@10' must be METRIC=VALUE"),
    (["evaluate", PRED_A, "--fail-under", "ndgc@10=0.3"], "'ndgc@10': unknown metric 'ndgc'"),
    (["evaluate", PRED_A, "--fail-under", "mrr@10=0.3"],
     "--fail-under mrr@10: --metrics mrr@k, which makes the mrr@k rows, is not computed; add it "
     "to --metrics"),
    (["evaluate", PRED_A, "--fail-under", "bpref@10=0.3"], "'bpref@10': bpref takes no cut-off"),
    (["evaluate", PRED_A, "--fail-under", "logloss=0.3"], "logloss is better when lower, and "
     "--fail-under fails values below the threshold; gate it with --fail-over logloss=0.3"),
    (["evaluate", PRED_A, "--fail-over", "ndcg@10=0.3"], "ndcg is better when higher, and "
     "--fail-over fails values above the threshold; gate it with --fail-under ndcg@10=0.3"),
    (["evaluate", PRED_A, "--fail-under", "ndcg@5=0.3"], "--fail-under ndcg@5: cut-off 5 is not "
                                                         "computed; add it to --k"),
    (["evaluate", PRED_A, "--metrics", "auc", "--fail-under", "mrr=0.3"],
     "--fail-under mrr: mrr is not computed; add it to --metrics"),
    (["compare", PRED_A, PRED_B, "--k", "5", "10", "--fail-if-worse", "ndcg"],
     "--fail-if-worse ndcg: ndcg has a row per cut-off; name one, e.g. ndcg@5"),
    (["compare", PRED_A, PRED_B, "--fail-if-worse", "ndcg@10,foo"], "'foo': unknown metric"),
    (["compare", PRED_A, PRED_B, "--fail-if-worse", "ndcg@20"], "cut-off 20 is not computed"),
    (["compare", PRED_A, PRED_B, "--fail-if-worse", "brier"], "compare runs no paired test of "
                                                               "brier"),
    (["compare", PRED_A], "compare needs at least two scores files, got 1"),
    (["compare", PRED_A, PRED_B, "--baseline", "c"], "--baseline c: no such model; the models "
                                                     "are sample_model_a, sample_model_b"),
    (["compare", PRED_A, PRED_B, "--format", "markdown", "-o", "x.tex"],
     "-o x.tex names a LATEX file but --format markdown was given"),
])
def test_bad_gates_and_options_exit_2_with_one_line(argv, message, capsys, tmp_path):
    code, out, err = run([*argv[:1], *argv[1:]] if "-o" not in argv else
                         [a if a != "x.tex" else tmp_path / "x.tex" for a in argv], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("recmetrics: error: ") and message in err.replace(str(tmp_path) + "/", ""), err


def test_exit_codes_are_documented_in_help(capsys):
    for argv in (["--help"], ["evaluate", "--help"], ["compare", "--help"]):
        with pytest.raises(SystemExit):
            cli.main(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert "exit status: 0 success" in text and "3 a quality gate failed" in text
        assert "2 bad input" in text


# --------------------------------------------------------------------------- issue 23: TREC input,
# the new measures and the trec_eval conventions on the command line


def _trec_files(tmp_path):
    run_file = tmp_path / "sys.trec"
    run_file.write_text("q1 Q0 a 1 3.0 s\nq1 Q0 b 2 2.0 s\nq1 Q0 c 3 2.0 s\nq1 Q0 d 4 1.0 s\n"
                   "q2 Q0 a 1 1.0 s\nq2 Q0 b 2 0.5 s\n")
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("q1 0 b 1\nq1 0 c 2\nq1 0 d 0\nq1 0 a -1\nq2 0 b 3\nq2 0 a 0\n")
    return run_file, qrels


def test_cli_evaluates_trec_files_with_the_new_measures_as_evaluate_does(tmp_path, capsys):
    run_file, qrels = _trec_files(tmp_path)
    out = tmp_path / "t.csv"
    options = ["--ties", "trec", "--min-grade", "2", "--judged-only", "--rbp-p", "0.5",
               "--max-grade", "3", "--k", "1", "2", "--metrics", "mrr@k", "r_precision",
               "bpref", "rbp", "err"]
    code, _, err = run(["evaluate", run_file, "--truth", qrels, "-o", out, "-q", *options], capsys)
    assert code == 0, err
    table = pd.read_csv(out)
    expected = rm.evaluate(rm.read_trec_run(run_file), rm.read_trec_qrels(qrels), ties="trec",
                           min_grade=2, judged_only=True, rbp_p=0.5, max_grade=3, k=[1, 2],
                           metrics=["mrr@k", "r_precision", "bpref", "rbp", "err"])
    assert table["metric"].tolist() == expected["metric"].tolist()
    np.testing.assert_allclose(table["value"], expected["value"], rtol=0, atol=1e-12)
    # by hand, q1 condensed to c, b, d (a unjudged and dropped; b and c tie, and trec puts the
    # larger id first), relevant c only (grade 2 >= 2): RR 1 at both cut-offs; q2: a, then b
    # (relevant): RR 0 at 1 and 1/2 at 2
    assert value(table, "mrr", 1) == pytest.approx(0.5) and value(table, "mrr", 2) == 0.75


@pytest.mark.parametrize("argv, message", [
    (["--ties", "trec", "--metrics", "auc"], "--ties trec orders tied documents by id"),
    (["--rbp-p", "2", "--metrics", "rbp"], "--rbp-p 2.0 must be a number strictly between 0 and 1"),
    (["--min-grade", "x"], "argument --min-grade: 'x' is not a finite number"),
    (["--metrics", "err", "--ties", "average"],
     "metric 'err' with --ties average: a tie of scores in some user's top 10 mixes relevance "
     "grades, and ERR's expected value over the orders of such a tie has no closed form here; "
     "use --ties optimistic or --ties pessimistic (the bounds) or --ties trec"),
])
def test_cli_refuses_bad_trec_options_in_one_line(tmp_path, capsys, argv, message):
    run_file, qrels = _trec_files(tmp_path)
    code, _, err = run(["evaluate", run_file, "--truth", qrels, "-q", *argv], capsys)
    assert code == 2 and message in err, err


def test_cli_a_trec_run_needs_its_qrels(tmp_path, capsys):
    run_file, _ = _trec_files(tmp_path)
    code, _, err = run(["evaluate", run_file, "-q"], capsys)
    assert code == 2 and "is a TREC run, which holds no labels; pass the judgements with " \
        "--truth QRELS" in err
