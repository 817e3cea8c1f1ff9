"""Property test of the command line on messy CSV files (issue 8, "How to check it").

Hypothesis draws a small data set (the *intended* data), writes it as a CSV file in a
random way (encoding, byte-order mark, separator and extension, line ends, quoting, blank
lines) and sometimes damages it (a decimal comma, a missing field, a stray byte that is
not UTF-8, a truncated last line). `recmetrics.cli.main` then runs on it in process.

The only outcomes allowed: exit 0 with AUC and MRR equal to a slow reference computed from
the intended data (pairs counted one by one, ranks by sorting one user at a time), or exit 2
with exactly one line on stderr. Never a traceback, never a changed input file. Where the
file is intact the outcome must be exit 0; where a row was damaged it must be exit 2.

Two more properties below: every kind of scores and truth file (CSV layouts and compressions,
Parquet id types) against the clean DataFrames' numbers; and (issue 35) every input role, every
format of the input table and every option of the parser against recmetrics.evaluate called in
Python. The examples are few enough that the file runs in about a minute.
"""
from __future__ import annotations

import json
import os
import re
import warnings

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from recmetrics import cli


def slow_auc(rows) -> float:
    """Mann-Whitney by counting every (relevant, irrelevant) pair; a tie counts 1/2."""
    pos = [s for _, _, s, y in rows if y > 0]
    neg = [s for _, _, s, y in rows if y == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def slow_mrr(rows) -> float:
    """Mean over users with a relevant item of 1 / rank of the first one (scores distinct)."""
    values = []
    for user in sorted({r[0] for r in rows}):
        ranked = sorted((r for r in rows if r[0] == user), key=lambda r: -r[2])
        hits = [i for i, r in enumerate(ranked, 1) if r[3] > 0]
        if hits:
            values.append(1 / hits[0])
    return sum(values) / len(values)


ID = st.text(alphabet="abcxyz019_用户é", min_size=1, max_size=5)


@st.composite
def data_sets(draw):
    users = draw(st.lists(ID, min_size=1, max_size=4, unique=True))
    items = draw(st.lists(ID, min_size=2, max_size=5, unique=True))
    pairs = draw(st.lists(st.tuples(st.sampled_from(users), st.sampled_from(items)),
                          min_size=2, max_size=14, unique=True))
    # distinct scores, so that the reference needs no tie convention for MRR
    scores = draw(st.lists(st.integers(-10**6, 10**6), min_size=len(pairs),
                           max_size=len(pairs), unique=True))
    labels = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(pairs),
                           max_size=len(pairs)))
    if all(y == 0 for y in labels):
        labels[0] = 1
    if all(y > 0 for y in labels):
        labels[-1] = 0
    return [(u, i, s / 1000, y) for (u, i), s, y in zip(pairs, scores, labels)]


LAYOUTS = st.fixed_dictionaries({
    "encoding": st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gbk", "latin-1"]),
    "sep": st.sampled_from([(",", ".csv", False), (";", ".csv", True), ("\t", ".tsv", False),
                            ("\t", ".txt", False), ("|", ".txt", False)]),
    "newline": st.sampled_from(["\n", "\r\n"]),
    "quote_ids": st.booleans(),
    "blank_lines": st.lists(st.integers(1, 20), max_size=3),
    "damage": st.sampled_from([None, None, None, "decimal comma", "missing field", "bad byte",
                               "truncated"]),
})


def _field(value: str, sep: str, quote: bool) -> str:
    if quote or sep in value or '"' in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def write(rows, layout, folder) -> tuple[str, list[str], bool]:
    """The file's path, the options it needs, and whether it was damaged."""
    sep, suffix, needs_sep = layout["sep"]
    encoding = layout["encoding"]
    lines = [sep.join(("user", "item", "score", "label"))]
    for u, i, s, y in rows:
        lines.append(sep.join((_field(u, sep, layout["quote_ids"]),
                               _field(i, sep, layout["quote_ids"]), repr(s), str(y))))
    damaged = False
    damage = layout["damage"]
    if damage == "decimal comma" and sep == ",":
        lines[1] = lines[1].rsplit(",", 2)[0] + "," + repr(rows[0][2]).replace(".", ",") + "," + \
            str(rows[0][3])
        damaged = "," in repr(rows[0][2]).replace(".", ",")
    elif damage == "missing field":
        lines[-1] = lines[-1].rsplit(sep, 1)[0]
        damaged = True
    elif damage == "truncated":
        lines[-1] = lines[-1].rsplit(sep, 2)[0] + sep
        damaged = True
    for position in layout["blank_lines"]:
        lines.insert(min(position, len(lines)), "")
    text = layout["newline"].join(lines) + layout["newline"]
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:          # e.g. "用" in Latin-1: that file cannot exist
        return "", [], False
    if damage == "bad byte" and encoding in ("utf-8", "utf-8-sig"):
        cut = data.rfind(b"\n", 0, len(data) - 1) + 1
        data = data[:cut] + b"\xff" + data[cut:]        # a byte no UTF-8 text holds
        damaged = True
    path = os.path.join(folder, "scores" + suffix)
    with open(path, "wb") as handle:
        handle.write(data)
    options = []
    if needs_sep:
        options += ["--sep", sep]
    if encoding in ("gbk", "latin-1"):
        options += ["--encoding", encoding]
    return path, options, damaged


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                  HealthCheck.too_slow])
@given(rows=data_sets(), layout=LAYOUTS)
def test_messy_csv_gives_the_reference_numbers_or_one_line(rows, layout, tmp_path_factory,
                                                           capsys):
    folder = str(tmp_path_factory.mktemp("prop"))
    path, options, damaged = write(rows, layout, folder)
    if not path:
        event("not encodable in this encoding")
        return
    before = open(path, "rb").read(), os.stat(path).st_mtime_ns
    code = cli.main(["evaluate", path, "--metrics", "auc", "mrr", "--format", "json", *options])
    out, err = capsys.readouterr()
    event(f"exit {code}" + (f" ({layout['damage']})" if damaged else ""))
    assert (open(path, "rb").read(), os.stat(path).st_mtime_ns) == before, "the input changed"
    assert "Traceback" not in err
    if code == 0:
        assert not damaged, f"a damaged file was read: {layout['damage']}"
        got = {m["metric"]: m["value"] for m in json.loads(out)["metrics"]}
        assert abs(got["auc"] - slow_auc(rows)) < 1e-12
        assert abs(got["mrr"] - slow_mrr(rows)) < 1e-12
        assert err == ""
    else:
        assert code == 2, err
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
        assert damaged, f"an intact file was refused: {lines[0]}"


# --------------------------------------------------------------------------- every kind of input
#
# A second property: the same small data set (clean ids "u0", "i3"...) written as any kind
# of file recmetrics reads: CSV in an encoding, with a separator, compressed (zip too), or
# Parquet whose id columns have an unusual type (uint64 beyond int64, int8, bool, categorical,
# string[pyarrow], large_string, dictionary-encoded, whole floats); the truth file is of the
# same kind or CSV. `evaluate` and `compare` must give the numbers of the clean DataFrames, or
# exit 2 with one line where the file is not readable as asked (a UTF-8 file read as cp1252).

import hashlib  # noqa: E402
import io  # noqa: E402
import zipfile  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import recmetrics as rm  # noqa: E402


@st.composite
def clean_data(draw):
    """(pred rows (user, item, score A, score B), truth rows (user, item, label)) by index."""
    n_users, n_items = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.integers(0, n_items - 1)),
                          min_size=2, max_size=14, unique=True))
    scores = draw(st.lists(st.integers(-50, 50), min_size=2 * len(pairs),
                           max_size=2 * len(pairs)))
    labels = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(pairs),
                           max_size=len(pairs)))
    labels[0], labels[-1] = 1, 0
    pred = [(u, i, scores[2 * n] / 10, scores[2 * n + 1] / 10) for n, (u, i) in enumerate(pairs)]
    return pred, [(u, i, y) for (u, i), y in zip(pairs, labels)]


#: Parquet id types: how an index becomes an id, and the pyarrow type it is stored as
ID_TYPES = {
    "uint64 beyond int64": (lambda n, role: np.uint64(2**64 - 1) - np.asarray(n, np.uint64),
                            pa.uint64()),
    "uint64 small": (lambda n, role: np.asarray(n, np.uint64), pa.uint64()),
    "int8": (lambda n, role: np.asarray(n, np.int8) - np.int8(2), pa.int8()),
    "uint16": (lambda n, role: np.asarray(n, np.uint16) + np.uint16(65000), pa.uint16()),
    "bool": (lambda n, role: np.asarray(n) == 1, pa.bool_()),
    "categorical": (lambda n, role: [f"{role}{x}" for x in n],
                    pa.dictionary(pa.int8(), pa.string())),
    "string[pyarrow]": (lambda n, role: [f"{role} {x}" for x in n], pa.string()),
    "large_string": (lambda n, role: [f"{role}é{x}" for x in n], pa.large_string()),
    "dictionary": (lambda n, role: [f"{x:03d}" for x in n], pa.dictionary(pa.int32(),
                                                                          pa.large_string())),
    "whole floats": (lambda n, role: np.asarray(n, float) * 3 - 1, pa.float64()),
}

CSV_LAYOUTS = st.fixed_dictionaries({
    "prefix": st.sampled_from(["u", "Zoë", "café_"]),
    "encoding": st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "cp1252", "cp1252 pred only",
                                 "utf-8 read as cp1252"]),
    "sep": st.sampled_from([(",", ".csv", []), ("\t", ".tsv", []), (";", ".csv", ["--sep", ";"]),
                            ("|", ".txt", [])]),
    "compression": st.sampled_from(["", ".gz", ".bz2", ".xz", ".zst", ".zip"]),
})


def _compress(data: bytes, compression: str, member: str) -> bytes:
    import bz2
    import gzip
    import lzma

    if compression == ".gz":
        return gzip.compress(data)
    if compression == ".bz2":
        return bz2.compress(data)
    if compression == ".xz":
        return lzma.compress(data)
    if compression == ".zst":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as stream:
            stream.write(data)
        return sink.getvalue().to_pybytes()
    if compression == ".zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(member, data)
        return buffer.getvalue()
    return data


def write_csv(path_stem, header, rows, layout, *, encoding) -> str:
    sep, suffix, _ = layout["sep"]
    lines = [sep.join(header)] + [sep.join(str(v) for v in row) for row in rows]
    data = ("\n".join(lines) + "\n").encode(encoding)
    path = path_stem + suffix + layout["compression"]
    with open(path, "wb") as handle:
        handle.write(_compress(data, layout["compression"], os.path.basename(path_stem + suffix)))
    return path


def write_parquet(path, columns: dict) -> str:
    pq.write_table(pa.table(columns), path)
    return path


def _id_array(kind: str, indices, role: str):
    make, arrow_type = ID_TYPES[kind]
    values = make(indices, role)
    if pa.types.is_dictionary(arrow_type):
        return pa.array(values, arrow_type.value_type).dictionary_encode()
    return pa.array(values, arrow_type)


def _id_text(kind: str, indices, role: str) -> list[str]:
    """The ids of a Parquet kind as a CSV file would hold them."""
    values = ID_TYPES[kind][0](indices, role)
    return [str(v) for v in (values.tolist() if isinstance(values, np.ndarray) else values)]


def _hashes(paths) -> dict:
    return {p: (hashlib.sha256(open(p, "rb").read()).hexdigest(), os.stat(p).st_mtime_ns)
            for p in paths}


def _check_run(argv, capsys, paths, *, refused: bool):
    """Run the command line; returns its JSON document or None when it (rightly) refused."""
    before = _hashes(paths)
    with warnings.catch_warnings():  # as on a terminal: warnings are printed, one line each
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code = cli.main(argv)
    out, err = capsys.readouterr()
    assert _hashes(paths) == before, "an input file changed"
    assert "Traceback" not in err
    if code == 0:
        assert not refused, "a file read with the wrong encoding was accepted"
        assert all(line.startswith("recmetrics: warning: ") for line in err.splitlines()), err
        return json.loads(out)
    assert code == 2 and out == "", (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
    assert refused, f"an intact file was refused: {lines[0]}"
    assert "is UTF-8 text" in lines[0], lines[0]
    event("refused: a UTF-8 file read as cp1252")
    return None


@settings(max_examples=35, deadline=None,  # the third property draws every format too
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=clean_data(), kind=st.sampled_from(["csv"] * 8 + list(ID_TYPES)), layout=CSV_LAYOUTS,
       csv_truth=st.booleans())
def test_every_kind_of_input_gives_the_clean_numbers_or_one_line(data, kind, layout, csv_truth,
                                                                 tmp_path_factory, capsys):
    pred_rows, truth_rows = data
    users = sorted({u for u, *_ in pred_rows} | {u for u, *_ in truth_rows})
    items = {i for _, i, *_ in pred_rows} | {i for _, i, *_ in truth_rows}
    if kind == "bool" and (set(users) - {0, 1} or items - {0, 1}):
        kind = "categorical"                        # bool ids hold 0 and 1 (False, True) only
    event(kind if kind != "csv" else f"csv {layout['encoding']}")
    if kind == "csv":
        event(f"csv {layout['compression'] or 'uncompressed'}")
    folder = str(tmp_path_factory.mktemp("kinds"))
    options, refused = [], False
    u = [r[0] for r in pred_rows]
    i = [r[1] for r in pred_rows]
    tu = [r[0] for r in truth_rows]
    ti = [r[1] for r in truth_rows]
    if kind == "csv":
        prefix = layout["prefix"]
        encoding = {"cp1252 pred only": "cp1252", "utf-8 read as cp1252": "utf-8"}.get(
            layout["encoding"], layout["encoding"])
        truth_encoding = "utf-8" if layout["encoding"] == "cp1252 pred only" else encoding
        options += layout["sep"][2]
        if layout["encoding"] == "cp1252":
            options += ["--encoding", "cp1252"]
        elif layout["encoding"] == "cp1252 pred only":
            options += ["--pred-encoding", "cp1252"]
        elif layout["encoding"] == "utf-8 read as cp1252":
            options += ["--encoding", "cp1252"]
            refused = not prefix.isascii()          # mojibake ids: must be refused
        paths = [write_csv(os.path.join(folder, name), ("user", "item", "score"),
                           [(f"{prefix}{a}", f"i{b}", s) for a, b, s in zip(u, i, scores)],
                           layout, encoding=encoding)
                 for name, scores in (("a", [r[2] for r in pred_rows]),
                                      ("b", [r[3] for r in pred_rows]))]
        paths.append(write_csv(os.path.join(folder, "truth"), ("user", "item", "label"),
                               [(f"{prefix}{a}", f"i{b}", y) for a, b, (*_, y) in
                                zip(tu, ti, truth_rows)], layout, encoding=truth_encoding))
    else:
        paths = [write_parquet(os.path.join(folder, f"{name}.parquet"),
                               {"user": _id_array(kind, u, "u"), "item": _id_array(kind, i, "i"),
                                "score": pa.array([r[column] for r in pred_rows], pa.float64())})
                 for name, column in (("a", 2), ("b", 3))]
        labels = [r[2] for r in truth_rows]
        if csv_truth:
            truth = pd.DataFrame({"user": _id_text(kind, tu, "u"), "item": _id_text(kind, ti, "i"),
                                  "label": labels})
            paths.append(os.path.join(folder, "truth.csv"))
            truth.to_csv(paths[-1], index=False)
        else:
            paths.append(write_parquet(os.path.join(folder, "truth.parquet"),
                                       {"user": _id_array(kind, tu, "u"),
                                        "item": _id_array(kind, ti, "i"),
                                        "label": pa.array(labels, pa.int64())}))
    clean = {name: pd.DataFrame({"user": [f"u{a}" for a in u], "item": [f"i{b}" for b in i],
                                 "score": [r[column] for r in pred_rows]})
             for name, column in (("a", 2), ("b", 3))}
    clean_truth = pd.DataFrame({"user": [f"u{a}" for a in tu], "item": [f"i{b}" for b in ti],
                                "label": [r[2] for r in truth_rows]})
    common = ["--truth", paths[2], "--metrics", "auc", "mrr", "ndcg", "--k", "2", "--format",
              "json", *options]

    document = _check_run(["evaluate", paths[0], *common], capsys, paths, refused=refused)
    if document is not None:
        expected = rm.evaluate(clean["a"], clean_truth, metrics=["auc", "mrr", "ndcg"], k=[2])
        got = pd.DataFrame(document["metrics"])
        np.testing.assert_allclose(got.value.astype(float), expected.value.astype(float),
                                   rtol=0, atol=1e-12)
        assert got.n_users.tolist() == expected.n_users.tolist()

    document = _check_run(["compare", paths[0], paths[1], *common, "--n-resamples", "100"],
                          capsys, paths, refused=refused)
    if document is not None:
        with warnings.catch_warnings():  # tiny data: DeLong's variance may be undefined
            warnings.simplefilter("ignore", rm.RecmetricsWarning)
            expected = rm.compare(clean["a"], clean["b"], clean_truth,
                                  metrics=["auc", "mrr", "ndcg"], k=[2], n_resamples=100)
        got = pd.DataFrame(document["metrics"])
        for column in ("value_a", "value_b", "difference"):
            np.testing.assert_allclose(got[column].astype(float), expected[column].astype(float),
                                       rtol=0, atol=1e-12, err_msg=column)


# --------------------------------------------------------------------------- every role, format, option
#
# A third property (issue 35): a run of `recmetrics evaluate` drawn from every input role
# (scores, truth, users, history, catalog, item features; TREC runs and qrels), every format
# of the input table (recmetrics.io.INPUT_FORMATS: CSV, TSV and sniffed .txt, each possibly
# compressed, Parquet, TREC; encodings, byte-order marks, line ends) and every option of the
# command's parser, each set away from its default now and then. The options are taken from
# the parser: an option added to `evaluate` fails this test until it is drawn here or named
# in NOT_DRAWN with the reason. Each run must exit 0 with the numbers of recmetrics.evaluate
# called in Python on the same data with the same options (the keywords are the options'
# names), or, exactly when that call refuses, exit 2 with one line; an input never changes
# and the output file is whole or as it was.

import inspect  # noqa: E402
from pathlib import Path  # noqa: E402

from recmetrics import io as rio  # noqa: E402


def _options_of(command: str) -> dict:
    """The options of a command's parser: dest -> argparse action."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {a.dest: a for a in sub._actions if a.dest != "help" and a.option_strings}


EVALUATE_OPTIONS = _options_of("evaluate")
#: the roles' files and how they are written: drawn with the data, below
FILE_OPTIONS = {r.option.lstrip("-").replace("-", "_") for r in rio.INPUT_ROLES.values()
                if r.option.startswith("--")} | {
    f"{role}_col" for role in ("user", "item", "score", "label", "rank")} | {
    "format_in", "sep", "encoding", "by"} | {
    r.encoding for r in rio.INPUT_ROLES.values() if r.encoding}
#: options with values that are neither choices nor flags: the values drawn
VALUES = {
    "k": st.lists(st.integers(1, 4), min_size=1, max_size=2, unique=True),
    "metrics": st.lists(st.sampled_from([m for m in EVALUATE_OPTIONS["metrics"].choices
                                         if m not in rm.BEYOND_METRICS]), min_size=1,
                        max_size=4, unique=True),
    "rbp_p": st.sampled_from([0.8, 0.5]), "max_grade": st.sampled_from([None, None, 2, 3]),
    "min_grade": st.sampled_from([None, None, 1, 2]), "head_share": st.sampled_from([0.8, 0.5]),
    "ci": st.sampled_from([None, None, 0.9]), "n_resamples": st.sampled_from([100, 150]),
    "seed": st.integers(0, 3), "min_slice_size": st.integers(1, 3),
}
#: options that write or show the numbers rather than change them, shared by every command
NOT_DRAWN_OUTPUT = {
    "quiet": "terminal output only", "progress": "terminal output only",
    "format": "the run writes JSON, to read the numbers", "output": "always given: -o FILE",
    "raw_csv": "CSV text only, not numbers",
}
NOT_DRAWN = {
    **NOT_DRAWN_OUTPUT,
    "fail_under": "quality gates (exit 3): test_cli",
    "fail_over": "quality gates (exit 3): test_cli", "engine": "Dask and Spark: their own tests",
    "master": "Spark", "workers": "Dask", "memory_limit": "Dask", "scheduler": "Dask",
}


def _choices_and_flags(options: dict, *drawn) -> tuple[dict, dict]:
    """Choice options (conventions, bootstrap, unseen, correction) and flags, each to be drawn
    away from its default: every option with choices or no value not drawn otherwise."""
    taken = set().union(*drawn)
    choices = {d: a for d, a in options.items() if a.choices and d not in taken}
    flags = {d: a for d, a in options.items() if a.nargs == 0 and d not in taken}
    return choices, flags


CHOICES, FLAGS = _choices_and_flags(EVALUATE_OPTIONS, VALUES, FILE_OPTIONS, NOT_DRAWN)


def test_the_drawn_options_are_every_option_of_evaluate():
    drawn = set(FILE_OPTIONS) | set(VALUES) | set(CHOICES) | set(FLAGS) | set(NOT_DRAWN)
    assert set(EVALUATE_OPTIONS) - drawn == set(), "draw the new option, or say why not"
    assert drawn - set(EVALUATE_OPTIONS) == set(), "an option that evaluate no longer has"


def _option_values(draw, values=VALUES, choices=CHOICES, flags=FLAGS) -> dict:
    """dest -> value (the default most of the time)."""
    drawn = {d: draw(s) for d, s in values.items()}
    for dest, action in choices.items():
        drawn[dest] = draw(st.sampled_from([action.default] * 8 + list(action.choices)))
    for dest in flags:
        drawn[dest] = draw(st.sampled_from([False] * 4 + [True]))
    return drawn


SUFFIXES = {fmt: list(suffixes) for fmt, suffixes in rio.INPUT_FORMATS.items()}


def _scored_rows(draw, users: list[str], items: list[str]) -> pd.DataFrame:
    """(user, item, score, label, rank) rows: scores with ties, graded labels, and the rank of
    each row in its user's list (ties broken by item, descending)."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(users), st.sampled_from(items)),
                          min_size=2, max_size=12, unique=True))
    scores = draw(st.lists(st.integers(-20, 20), min_size=len(pairs), max_size=len(pairs)))
    labels = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(pairs),
                           max_size=len(pairs)))
    pred = pd.DataFrame({"user": [u for u, _ in pairs], "item": [i for _, i in pairs],
                         "score": [s / 4 for s in scores], "label": labels})
    return _with_ranks(pred)


def _with_ranks(pred: pd.DataFrame) -> pd.DataFrame:
    pred = pred.reset_index(drop=True)
    pred["rank"] = pred.sort_values(["score", "item"], ascending=False).groupby(
        "user").cumcount().reindex(pred.index) + 1
    return pred


def _draw_truth(draw, pred: pd.DataFrame) -> pd.DataFrame | None:
    """None (the labels are pred's) or a truth file of pred's rows, now and then with a
    relevant item no model scored, or of the relevant rows alone without a label column (read
    as positives only)."""
    if not draw(st.booleans()):
        return None
    truth = pred[["user", "item", "label"]]
    if draw(st.booleans()):  # a relevant item no model scored
        truth = pd.concat([truth, pd.DataFrame({"user": [pred.user.iloc[0]], "item": ["i9"],
                                                "label": [1]})], ignore_index=True)
    if draw(st.sampled_from([False, False, False, True])):
        truth = truth[truth.label > 0][["user", "item"]].reset_index(drop=True)
    return truth


def _draw_how(draw, role: str, formats: list[str]) -> dict:
    """How one file is written: its format, its name ending from the input table, the
    separator of a .txt file, a byte-order mark and line ends."""
    fmt = draw(st.sampled_from(formats))
    return {"format": fmt, "suffix": draw(st.sampled_from(SUFFIXES[fmt])),
            "txt_sep": draw(st.sampled_from([",", ";", "|", "\t"])),
            "bom": draw(st.booleans()),
            "newline": draw(st.sampled_from(["\n", "\r\n", "\r"]))}


def _formats(role: str) -> list[str]:
    return ["csv", "csv", "parquet"] + (["trec"] if rio.INPUT_ROLES[role].trec else [])


def _draw_io(draw, files: dict) -> dict:
    """The reading options: --sep, the encodings (every one, per role), --format-in."""
    io_options = {"sep": draw(st.sampled_from([None, None, ";"])),
                  "encoding": draw(st.sampled_from([None, None, "latin-1", "utf-16"])),
                  "pred_encoding": draw(st.sampled_from([None, None, "cp1252"])),
                  "truth_encoding": draw(st.sampled_from([None, None, "utf-8"])),
                  "format_in": "auto"}
    text = [f["format"] for r, f in files.items() if r.split(":")[0] in ("scores", "truth")]
    if all(f == "trec" for f in text) and "truth" in files:
        io_options["format_in"] = draw(st.sampled_from(["auto", "trec"]))
    return io_options


@st.composite
def runs(draw):
    n_users, n_items = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    users = ["josé", "u1", "u2", "u3"][:n_users]
    items = [f"i{j}" for j in range(n_items)]
    pred = _scored_rows(draw, users, items)
    pairs = list(zip(pred.user, pred.item))
    roles = {"scores": pred, "truth": _draw_truth(draw, pred)}
    options = _option_values(draw)
    if draw(st.booleans()):
        roles["history"] = pd.DataFrame({"user": [u for u, _ in pairs[::2]],
                                         "item": [i for _, i in pairs[::2]]})
    if draw(st.booleans()):
        roles["catalog"] = pd.DataFrame({"item": items + ["i8"]})
    if draw(st.booleans()):
        roles["item_features"] = pd.DataFrame({"item": items, "x": np.arange(n_items) % 3,
                                               "y": np.arange(n_items) % 2})
    beyond = [m for m in rm.BEYOND_METRICS if m in EVALUATE_OPTIONS["metrics"].choices]
    if any(r in roles for r in ("history", "catalog", "item_features")) and draw(st.booleans()):
        options["metrics"] += draw(st.lists(st.sampled_from(beyond), min_size=1, max_size=3,
                                            unique=True))
    if draw(st.sampled_from([False, False, True])):   # by= and beyond metrics: both refuse
        options["by"] = ["country"]
        roles["users"] = _users_frame(users)
    # how every file is written: its format, then its name ending from the input table
    files = {}
    for role, frame in roles.items():
        if frame is None:
            continue
        files[role] = _draw_how(draw, role, _formats(role))
        if role == "truth" and files["scores"]["format"] == "trec":
            files[role]["format"] = "trec"          # a TREC run's truth is qrels
        if role == "scores" and files[role]["format"] == "trec" and roles["truth"] is None:
            files[role]["format"] = "csv"           # a run holds no labels
        _fit_suffix(draw, files[role])
    columns = _draw_columns(draw)
    return roles, files, columns, _draw_io(draw, files), options, draw(st.booleans())


def _fit_suffix(draw, how: dict) -> None:
    """After a forced change of format: a name ending of the new format."""
    if how["suffix"] not in SUFFIXES[how["format"]]:
        how["suffix"] = draw(st.sampled_from(SUFFIXES[how["format"]]))


def _users_frame(users: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"user": users, "country": (["fr", "de"] * 2)[:len(users)]})


def _draw_columns(draw) -> dict:
    columns = {r: draw(st.sampled_from([r, r, f"{r}_id"])) for r in ("user", "item", "label")}
    columns["score"] = draw(st.sampled_from(["score", "s"]))
    columns["rank"] = draw(st.sampled_from([None, None, "rank"]))
    return columns


def _write_role(folder: Path, role: str, frame: pd.DataFrame, how: dict, columns: dict,
                io_options: dict, *, name: str | None = None) -> Path:
    path = folder / f"{name or role}{how['suffix']}"
    base, compression = rio.split_suffix(path)
    names = {"user": columns["user"], "item": columns["item"], "label": columns["label"],
             "score": columns["score"], "rank": columns["rank"] or "rank"}
    encoding = {"scores": io_options["pred_encoding"], "truth": io_options["truth_encoding"]
                }.get(role) or io_options["encoding"] or "utf-8"
    if how["bom"] and encoding == "utf-8":
        encoding = "utf-8-sig"
    if how["format"] == "trec":  # text in the encoding asked for, as CSV files
        if role == "scores":
            lines = [f"{u} Q0 {i} {r} {s!r} tag" for u, i, s, r in
                     frame[["user", "item", "score", "rank"]].itertuples(index=False)]
        else:
            lines = [f"{u} 0 {i} {y}" for u, i, y in  # positives only: grade 1
                     frame.assign(label=frame.get("label", 1))[["user", "item", "label"]]
                     .itertuples(index=False)]
        data = "".join(line + how["newline"] for line in lines).encode(encoding)
        path.write_bytes(_compress(data, compression and Path(path.name).suffix,
                                   path.stem))
        return path
    frame = frame.rename(columns=names)
    if how["format"] == "parquet":
        frame.to_parquet(path, index=False)
        return path
    sep = io_options["sep"] or {".csv": ",", ".tsv": "\t"}.get(base, how["txt_sep"])
    text = frame.to_csv(index=False, sep=sep, lineterminator=how["newline"])
    path.write_bytes(_compress(text.encode(encoding), compression and Path(path.name).suffix,
                               path.stem))
    return path


def _python_call(roles, columns, options):
    """recmetrics.evaluate's keywords: the drawn options under their own names (the parser's
    dests are evaluate's keywords), the roles' frames, the ranks when --rank-col is given."""
    keywords = set(inspect.signature(rm.evaluate).parameters)
    call = {d: v for d, v in options.items() if d in keywords}
    for role, frame in roles.items():
        if role == "scores":
            continue
        keyword = rio.INPUT_ROLES[role].keyword
        call[keyword] = frame["item"] if role == "catalog" and frame is not None else frame
    if columns["rank"]:
        call["rank"] = "rank"
    return call


def _outcome(function):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return function(), None
        except ValueError as error:
            return None, error


def _argv(actions: dict, columns: dict, io_options: dict, options: dict) -> list[str]:
    """The command line of the drawn columns, reading options and options (those at their
    default left out); a list value is given as one flag and its values."""
    argv = []
    for role in ("user", "item", "label", "score", "rank"):
        named = columns[role]
        if named is None or named == role != "rank":
            continue
        argv += [f"--{role}-col", *([named] if isinstance(named, str) else named)]
    for dest, value in {**io_options, **options}.items():
        action = actions[dest]
        if value is None or value == action.default or value is False:
            continue
        flag = action.option_strings[-1]
        argv += [flag] if value is True else [flag, *map(str, value)] \
            if isinstance(value, list) else [flag, str(value)]
    return argv


def _run_against_python(argv, folder: Path, inputs: list[str], old_output: bool, expected,
                        refusal, capsys, *, python: str) -> pd.DataFrame | None:
    """Run the command line (its output -o folder/out.json) and hold it to the Python call's
    outcome: the same refusal as one line with exit 2 (the output as it was), or exit 0 with
    its JSON's table, returned; never a changed input, never a file left behind."""
    if old_output:
        (folder / "out.json").write_text("old\n")
    before = _hashes(inputs)
    listing = sorted(p.name for p in folder.iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code = cli.main(argv)
    out, err = capsys.readouterr()
    assert _hashes(inputs) == before, "an input file changed"
    assert "Traceback" not in err and out == ""
    assert sorted(p.name for p in folder.iterdir()) == sorted(set(listing) | {"out.json"}) \
        if code == 0 else listing, "a file was left behind"
    if refusal is not None:
        event("refused by both")
        event(f"refusal: {str(refusal)[:60]}")
        assert code == 2, f"{python} refused ({refusal}) but the command exited {code}"
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
        assert not old_output or (folder / "out.json").read_text() == "old\n"
        return None
    assert code == 0, f"the command refused what {python} accepts: {err}"
    assert all(line.startswith("recmetrics: warning: ") for line in err.splitlines()), err
    return pd.DataFrame(json.loads((folder / "out.json").read_text())["metrics"])


def _same_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Every column of ``expected`` the JSON has: numbers to 1e-12, the rest as text."""
    assert len(got) == len(expected)
    for column in expected.columns:
        if column not in got.columns:
            continue
        if pd.api.types.is_numeric_dtype(expected[column]) and column != "k":
            np.testing.assert_allclose(got[column].astype(float), expected[column].astype(float),
                                       rtol=0, atol=1e-12, err_msg=column)
        else:
            assert _texts(got[column]) == _texts(expected[column]), column


@settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate,
                                                 Phase.shrink],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=runs())
def test_every_role_format_and_option_gives_the_python_numbers_or_one_line_issue_35(
        drawn, tmp_path_factory, capsys):
    roles, files, columns, io_options, options, old_output = drawn
    folder = Path(tmp_path_factory.mktemp("roles"))
    paths = {role: _write_role(folder, role, roles[role], how, columns, io_options)
             for role, how in files.items()}
    argv = ["evaluate", str(paths["scores"]), "-o", str(folder / "out.json")]
    for role, path in paths.items():
        if role != "scores":
            argv += [rio.INPUT_ROLES[role].option, str(path)]
    argv += _argv(EVALUATE_OPTIONS, columns, io_options, options)
    for how in files.values():
        event(f"{how['format']} {how['suffix']}")
    expected, refusal = _outcome(lambda: rm.evaluate(roles["scores"], **_python_call(
        roles, columns, options)))
    got = _run_against_python(argv, folder, list(map(str, paths.values())), old_output,
                              expected, refusal, capsys, python="recmetrics.evaluate")
    if got is not None:
        _same_table(got, expected)


def _texts(values: pd.Series) -> list[str]:
    """A column as text, a missing value as "" (JSON's null, pandas' NA); 1.0 as 1."""
    return ["" if v is None or v is pd.NA or isinstance(v, float) and np.isnan(v) else
            str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else
            str(v) for v in values.astype(object)]


# --------------------------------------------------------------------------- compare: every option
#
# The same property for `recmetrics compare A B [C]` against recmetrics.compare: two or three
# models, each file of its own format (CSV, TSV, .txt, compressed, Parquet, a TREC run), its
# own score or rank column or one for all, a truth file or the models' labels, --by with a
# --users file, --baseline, and every option of compare's parser (a new option fails
# test_the_drawn_options_are_every_option_of_compare until it is drawn or named in
# COMPARE_NOT_DRAWN). Each run equals recmetrics.compare in Python (values, differences,
# intervals, every p-value column, to 1e-12) or, exactly when that call refuses, exits 2 with
# one line; inputs unchanged, the output whole or as it was.

COMPARE_OPTIONS = _options_of("compare")
COMPARE_VALUES = {
    **{d: VALUES[d] for d in ("k", "rbp_p", "max_grade", "min_grade", "n_resamples", "seed",
                              "min_slice_size")},
    "metrics": st.lists(st.sampled_from(COMPARE_OPTIONS["metrics"].choices), min_size=1,
                        max_size=4, unique=True),
    "alpha": st.sampled_from([0.05, 0.05, 0.2, 0.01]),
}
#: drawn with the models: a model's name, a name that is none, or none
COMPARE_MODEL_OPTIONS = {"baseline"}
COMPARE_NOT_DRAWN = {**NOT_DRAWN_OUTPUT,
                     "fail_if_worse": "quality gate (exit 3): test_cli"}
COMPARE_FILE_OPTIONS = FILE_OPTIONS & set(COMPARE_OPTIONS)
COMPARE_CHOICES, COMPARE_FLAGS = _choices_and_flags(
    COMPARE_OPTIONS, COMPARE_VALUES, COMPARE_FILE_OPTIONS, COMPARE_MODEL_OPTIONS,
    COMPARE_NOT_DRAWN)


def test_the_drawn_options_are_every_option_of_compare():
    drawn = (COMPARE_FILE_OPTIONS | set(COMPARE_VALUES) | COMPARE_MODEL_OPTIONS
             | set(COMPARE_CHOICES) | set(COMPARE_FLAGS) | set(COMPARE_NOT_DRAWN))
    assert set(COMPARE_OPTIONS) - drawn == set(), "draw the new option, or say why not"
    assert drawn - set(COMPARE_OPTIONS) == set(), "an option that compare no longer has"
    assert "correction" in COMPARE_CHOICES and "judged_only" in COMPARE_FLAGS


@st.composite
def compare_runs(draw):
    """Models a, b (c) scoring the same or fewer rows with their own scores (the labels of a
    row the same in every file), files, columns (a score or rank column per model or one for
    all), reading options, compare's options."""
    n_users, n_items = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    users = ["josé", "u1", "u2", "u3"][:n_users]
    items = [f"i{j}" for j in range(n_items)]
    first = _scored_rows(draw, users, items)
    names = ["a", "b", "c"][:draw(st.sampled_from([2, 2, 3]))]
    models = {"a": first}
    for name in names[1:]:
        kept = draw(st.lists(st.booleans(), min_size=len(first), max_size=len(first)))
        kept = [True] * len(first) if draw(st.booleans()) or not any(kept) else kept
        frame = first[kept].copy()
        frame["score"] = [s / 4 for s in draw(st.lists(st.integers(-20, 20), min_size=len(frame),
                                                       max_size=len(frame)))]
        models[name] = _with_ranks(frame)
    truth = _draw_truth(draw, first)
    options = _option_values(draw, COMPARE_VALUES, COMPARE_CHOICES, COMPARE_FLAGS)
    roles = {"truth": truth}
    if draw(st.sampled_from([False, False, True])):
        options["by"] = ["country"]
        roles["users"] = _users_frame(users)
    elif draw(st.sampled_from([False] * 7 + [True])):  # attributes but no --by: refused
        roles["users"] = _users_frame(users)
    # a model's name or one that is none (refused); with --by, refused whatever it names
    options["baseline"] = draw(st.sampled_from([None] * (8 if options.get("by") else 4)
                                               + names + ["z"]))
    files = {f"scores:{name}": _draw_how(draw, "scores", _formats("scores")) for name in names}
    for how in files.values():
        if how["format"] == "trec" and truth is None:
            how["format"] = "csv"                   # a run holds no labels
            _fit_suffix(draw, how)
    for role, frame in roles.items():
        if frame is not None:
            files[role] = _draw_how(draw, role, _formats(role))
    if "truth" in files and any(files[f"scores:{n}"]["format"] == "trec" for n in names):
        files["truth"]["format"] = "trec"           # a TREC run's truth is qrels
        _fit_suffix(draw, files["truth"])
    columns = _draw_columns(draw)
    per_model = {"score": draw(st.sampled_from([None, ["score"], ["s"], ["s", "p", "q"]])),
                 "rank": draw(st.sampled_from([None, ["rank"], ["rank", "r2", "r3"]]))}
    for role, named in per_model.items():
        columns[role] = named[:len(names)] if named and len(named) > 1 else \
            named[0] if named else columns[role]
    return models, roles, files, columns, _draw_io(draw, files), options, draw(st.booleans())


def _model_columns(columns: dict, model: int) -> dict:
    """The columns of one model's file: its own score and rank column when one per model."""
    return {role: name[model] if isinstance(name, list) else name
            for role, name in columns.items()}


def _compare_call(models: dict, roles: dict, options: dict):
    """recmetrics.compare as the command line means it: the models by their files' names
    (or, with by=, the two as pred_a and pred_b, named A and B), the drawn options as
    keywords; the frames keep their own column names (score, rank), the files have others."""
    keywords = set(inspect.signature(rm.compare).parameters)
    call = {d: v for d, v in options.items() if d in keywords}
    call["truth"] = roles["truth"]
    if "users" in roles:
        call["users"] = roles["users"]
    if options.get("by") and len(models) == 2:
        return lambda rank: rm.compare(*models.values(), rank=rank, **call)
    return lambda rank: rm.compare(models, rank=rank, **call)


@settings(max_examples=45, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate,
                                                 Phase.shrink],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=compare_runs())
def test_compare_gives_the_python_numbers_or_one_line_for_every_option(drawn, tmp_path_factory,
                                                                       capsys):
    models, roles, files, columns, io_options, options, old_output = drawn
    folder = Path(tmp_path_factory.mktemp("compare"))
    paths = {}
    for number, name in enumerate(models):
        paths[name] = _write_role(folder, "scores", models[name], files[f"scores:{name}"],
                                  _model_columns(columns, number), io_options, name=name)
    for role in roles:
        if role in files:
            paths[role] = _write_role(folder, role, roles[role], files[role], columns, io_options)
    argv = ["compare", *(str(paths[name]) for name in models), "-o", str(folder / "out.json")]
    for role in roles:
        if role in paths:
            argv += [rio.INPUT_ROLES[role].option, str(paths[role])]
    argv += _argv(COMPARE_OPTIONS, columns, io_options, options)
    for how in files.values():
        event(f"{how['format']} {how['suffix']}")
    event(f"{len(models)} models" + (", by" if options.get("by") else "")
          + (", baseline" if options["baseline"] else ""))
    call = _compare_call(models, roles, options)
    expected, refusal = _outcome(lambda: call("rank" if columns["rank"] else None))
    got = _run_against_python(argv, folder, list(map(str, paths.values())), old_output,
                              expected, refusal, capsys, python="recmetrics.compare")
    if got is not None:
        _same_table(got, expected)


def _two_models_and_users(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    a = pd.DataFrame({"user": ["u1", "u1", "u2", "u2", "u3", "u3"],
                      "item": ["i1", "i2", "i1", "i2", "i1", "i2"],
                      "score": [0.2, 0.9, 0.1, 0.8, 0.5, 0.4], "label": [1, 0, 1, 0, 0, 1]})
    b = a.assign(score=[0.9, 0.2, 0.8, 0.1, 0.4, 0.5])
    users = pd.DataFrame({"user": ["u1", "u2", "u3"], "country": ["fr", "de", "fr"]})
    for name, frame in (("a", a), ("b", b), ("users", users)):
        frame.to_csv(folder / f"{name}.csv", index=False)
    return a, b, users


def test_compare_by_refuses_the_baseline_and_correction_it_ignored(tmp_path, capsys):
    """Bug (found by the compare property): with by=, recmetrics.compare ignored baseline=
    (any name, even none of the models: B - A stayed B - A) and correction= (Holm across
    slices whatever was asked), and `recmetrics compare --by` ignored --baseline (exit 0,
    the difference the other way round from what --baseline b asks). Now all refuse."""
    a, b, users = _two_models_and_users(tmp_path)
    common = dict(k=1, metrics=["mrr"], by=["country"], users=users, min_slice_size=1,
                  n_resamples=100)
    for wrong, said in (({"baseline": "B"}, "baseline='B' with by="),
                        ({"baseline": "nothing"}, "baseline='nothing' with by="),
                        ({"correction": "bonferroni"}, "correction='bonferroni' with by=")):
        with pytest.raises(ValueError, match=re.escape(said)):
            rm.compare(a, b, **common, **wrong)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        table = rm.compare(a, b, **common)       # correction="holm", the default, is what runs
    assert table[table.country == "(all)"].difference.tolist() == [0.5]
    argv = ["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--by", "country",
            "--users", str(tmp_path / "users.csv"), "--k", "1", "--metrics", "mrr",
            "--min-slice-size", "1", "--n-resamples", "100", "-o", str(tmp_path / "out.json")]
    for wrong in (["--baseline", "b"], ["--baseline", "a"], ["--correction", "bh"]):
        code = cli.main(argv + wrong)
        out, err = capsys.readouterr()
        assert (code, out) == (2, ""), err
        assert len(err.splitlines()) == 1 and err.startswith(f"recmetrics: error: {wrong[0]} ")
        assert not (tmp_path / "out.json").exists()
