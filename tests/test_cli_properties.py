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
import warnings

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


def _evaluate_options() -> dict:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["evaluate"]
    return {a.dest: a for a in sub._actions if a.dest != "help" and a.option_strings}


EVALUATE_OPTIONS = _evaluate_options()
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
NOT_DRAWN = {
    "quiet": "terminal output only", "progress": "terminal output only",
    "format": "the run writes JSON, to read the numbers", "output": "always given: -o FILE",
    "raw_csv": "CSV text only, not numbers", "fail_under": "quality gates (exit 3): test_cli",
    "fail_over": "quality gates (exit 3): test_cli", "engine": "Dask and Spark: their own tests",
    "master": "Spark", "workers": "Dask", "memory_limit": "Dask", "scheduler": "Dask",
}
#: choice options (conventions, bootstrap, unseen) and flags, each drawn away from its default
CHOICES = {d: a for d, a in EVALUATE_OPTIONS.items() if a.choices and d not in VALUES
           and d not in FILE_OPTIONS and d not in NOT_DRAWN}
FLAGS = {d: a for d, a in EVALUATE_OPTIONS.items() if a.nargs == 0 and d not in NOT_DRAWN}


def test_the_drawn_options_are_every_option_of_evaluate():
    drawn = set(FILE_OPTIONS) | set(VALUES) | set(CHOICES) | set(FLAGS) | set(NOT_DRAWN)
    assert set(EVALUATE_OPTIONS) - drawn == set(), "draw the new option, or say why not"
    assert drawn - set(EVALUATE_OPTIONS) == set(), "an option that evaluate no longer has"


def _option_values(draw) -> dict:
    """dest -> value (the default most of the time)."""
    values = {d: draw(s) for d, s in VALUES.items()}
    for dest, action in CHOICES.items():
        values[dest] = draw(st.sampled_from([action.default] * 8 + list(action.choices)))
    for dest in FLAGS:
        values[dest] = draw(st.sampled_from([False] * 4 + [True]))
    return values


SUFFIXES = {fmt: list(suffixes) for fmt, suffixes in rio.INPUT_FORMATS.items()}


@st.composite
def runs(draw):
    n_users, n_items = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    users = ["josé", "u1", "u2", "u3"][:n_users]
    items = [f"i{j}" for j in range(n_items)]
    pairs = draw(st.lists(st.tuples(st.sampled_from(users), st.sampled_from(items)),
                          min_size=2, max_size=12, unique=True))
    scores = draw(st.lists(st.integers(-20, 20), min_size=len(pairs), max_size=len(pairs)))
    labels = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(pairs),
                           max_size=len(pairs)))
    pred = pd.DataFrame({"user": [u for u, _ in pairs], "item": [i for _, i in pairs],
                         "score": [s / 4 for s in scores], "label": labels})
    pred["rank"] = pred.sort_values(["score", "item"], ascending=False).groupby(
        "user").cumcount().reindex(pred.index) + 1
    roles = {"scores": pred, "truth": None}
    if draw(st.booleans()):
        truth = pred[["user", "item", "label"]]
        if draw(st.booleans()):  # a relevant item no model scored
            truth = pd.concat([truth, pd.DataFrame({"user": [pairs[0][0]], "item": ["i9"],
                                                    "label": [1]})], ignore_index=True)
        roles["truth"] = truth
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
        roles["users"] = pd.DataFrame({"user": users, "country": (["fr", "de"] * 2)[:n_users]})
    # how every file is written: its format, then its name ending from the input table
    files = {}
    for role, frame in roles.items():
        if frame is None:
            continue
        formats = ["csv", "csv", "parquet"] + (["trec"] if rio.INPUT_ROLES[role].trec else [])
        fmt = draw(st.sampled_from(formats))
        if role == "truth" and files["scores"]["format"] == "trec":
            fmt = "trec"                           # a TREC run's truth is qrels
        if role == "scores" and fmt == "trec" and roles["truth"] is None:
            fmt = "csv"                            # a run holds no labels
        files[role] = {"format": fmt, "suffix": draw(st.sampled_from(SUFFIXES[fmt])),
                       "txt_sep": draw(st.sampled_from([",", ";", "|", "\t"])),
                       "bom": draw(st.booleans()),
                       "newline": draw(st.sampled_from(["\n", "\r\n", "\r"]))}
    columns = {r: draw(st.sampled_from([r, r, f"{r}_id"])) for r in ("user", "item", "label")}
    columns["score"] = draw(st.sampled_from(["score", "s"]))
    columns["rank"] = draw(st.sampled_from([None, None, "rank"]))
    io_options = {"sep": draw(st.sampled_from([None, None, ";"])),
                  "encoding": draw(st.sampled_from([None, None, "latin-1", "utf-16"])),
                  "pred_encoding": draw(st.sampled_from([None, None, "cp1252"])),
                  "truth_encoding": draw(st.sampled_from([None, None, "utf-8"])),
                  "format_in": "auto"}
    if all(f["format"] == "trec" for r, f in files.items() if r in ("scores", "truth")) \
            and "truth" in files:
        io_options["format_in"] = draw(st.sampled_from(["auto", "trec"]))
    return roles, files, columns, io_options, options, draw(st.booleans())


def _write_role(folder: Path, role: str, frame: pd.DataFrame, how: dict, columns: dict,
                io_options: dict) -> Path:
    path = folder / f"{role}{how['suffix']}"
    base, compression = rio.split_suffix(path)
    names = {"user": columns["user"], "item": columns["item"], "label": columns["label"],
             "score": columns["score"]}
    encoding = {"scores": io_options["pred_encoding"], "truth": io_options["truth_encoding"]
                }.get(role) or io_options["encoding"] or "utf-8"
    if how["bom"] and encoding == "utf-8":
        encoding = "utf-8-sig"
    if how["format"] == "trec":  # text in the encoding asked for, as CSV files
        if role == "scores":
            lines = [f"{u} Q0 {i} {r} {s!r} tag" for u, i, s, r in
                     frame[["user", "item", "score", "rank"]].itertuples(index=False)]
        else:
            lines = [f"{u} 0 {i} {y}" for u, i, y in
                     frame[["user", "item", "label"]].itertuples(index=False)]
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
    for role in ("user", "item", "label", "score"):
        if columns[role] != role:
            argv += [f"--{role}-col", columns[role]]
    if columns["rank"]:
        argv += ["--rank-col", columns["rank"]]
    for dest, value in io_options.items():
        if value is not None and value != EVALUATE_OPTIONS[dest].default:
            argv += [EVALUATE_OPTIONS[dest].option_strings[-1], value]
    for dest, value in options.items():
        action = EVALUATE_OPTIONS[dest]
        if value is None or value == action.default or value is False:
            continue
        flag = action.option_strings[-1]
        argv += [flag] if value is True else [flag, *map(str, value)] \
            if isinstance(value, list) else [flag, str(value)]
    for how in files.values():
        event(f"{how['format']} {how['suffix']}")
    if old_output:
        (folder / "out.json").write_text("old\n")
    before = _hashes(list(map(str, paths.values())))
    listing = sorted(p.name for p in folder.iterdir())

    expected, refusal = _outcome(lambda: rm.evaluate(roles["scores"], **_python_call(
        roles, columns, options)))
    with warnings.catch_warnings():
        warnings.simplefilter("default", rm.RecmetricsWarning)
        code = cli.main(argv)
    out, err = capsys.readouterr()
    assert _hashes(list(map(str, paths.values()))) == before, "an input file changed"
    assert "Traceback" not in err and out == ""
    assert sorted(p.name for p in folder.iterdir()) == sorted(set(listing) | {"out.json"}) \
        if code == 0 else listing, "a file was left behind"
    if refusal is not None:
        event("refused by both")
        event(f"refusal: {str(refusal)[:60]}")
        assert code == 2, f"recmetrics.evaluate refused ({refusal}) but the command exited {code}"
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
        assert not old_output or (folder / "out.json").read_text() == "old\n"
        return
    assert code == 0, f"the command refused what recmetrics.evaluate accepts: {err}"
    assert all(line.startswith("recmetrics: warning: ") for line in err.splitlines()), err
    got = pd.DataFrame(json.loads((folder / "out.json").read_text())["metrics"])
    assert len(got) == len(expected)
    for column in expected.columns:
        if column not in got.columns:
            continue
        if pd.api.types.is_numeric_dtype(expected[column]) and column != "k":
            np.testing.assert_allclose(got[column].astype(float), expected[column].astype(float),
                                       rtol=0, atol=1e-12, err_msg=column)
        else:
            assert _texts(got[column]) == _texts(expected[column]), column


def _texts(values: pd.Series) -> list[str]:
    """A column as text, a missing value as "" (JSON's null, pandas' NA); 1.0 as 1."""
    return ["" if v is None or v is pd.NA or isinstance(v, float) and np.isnan(v) else
            str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else
            str(v) for v in values.astype(object)]
