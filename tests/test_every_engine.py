"""Every metric of the registry on every engine and input path gives the in-memory numbers
(issue 34: "a registry-parametrised test runs every metric on every engine against the
in-memory values"; "Polars, DuckDB and pyarrow inputs give pandas' numbers on every engine path
that takes them").

The metrics are the rows of ``recmetrics._metrics.REGISTRY``, read when the tests are collected:
a metric added to the registry is tested here with no edit. The paths are pandas in memory (the
reference), a pyarrow Table, a Polars DataFrame, a DuckDB relation, a Dask DataFrame, a Spark
DataFrame and the command line on CSV and on Parquet files (pandas engine) and on Parquet files
with ``--engine spark``. For each (metric, path) the table rows of the metric (value, interval,
n_users, n_skipped, n_without_predictions, conventions, note) equal the in-memory rows to 1e-12
(counts and text exactly), or the path refuses with a ValueError (exit status 2 on the command
line) whose message names the reason, where :func:`refusal` lists that refusal. A refusal that
appears where none is listed, or a listed one that disappears, fails: a refusal cannot hide a
missing path. ``evaluate_per_user`` and ``compare`` are checked the same way on the paths that
take them.

Cost: each (call, scenario, path) is one engine call for every metric that path computes (the
in-memory reference is the same call on pandas, with the same metrics, since the table of
``compare`` corrects p-values over the metrics of the call), plus one call per listed refusal;
the parametrised tests only read the results. One Spark session (conftest.py) and Dask's
synchronous scheduler serve the whole file; partitions of 40 rows and AUC buckets of 2 rows
(tests/_engines.py) cut the small log into several partitions.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import warnings
from functools import cache

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from conftest import assert_same_columns, import_extra
from _engines import many_buckets  # noqa: F401  (autouse: small partitions and AUC buckets)

import recmetrics as rm
from recmetrics import _metrics, cli

# PySpark warns that it does not yet fully support pandas 3 each time a frame is converted
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning")

REGISTRY = _metrics.REGISTRY
NAMES = [m.name for m in REGISTRY]
KS = [1, 3, 5]

# --------------------------------------------------------------------------- the data


def world(seed: int = 11) -> dict:
    """36 users scoring 2-8 of 24 text-id items with scores from five values in [0, 1] (heavy
    ties, probabilities for logloss and the rest); graded truth (0, 1, 2) judging about 85% of
    the scored rows; three users with no relevant item; relevant items no model scored; users
    only in the truth; a history (popularity, co-occurrence, each user's own items) with users
    and items the scores lack; a catalogue and numeric item features; a second model (model B
    of compare) that rescored the rows with other ties and left some rows out."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 36, 24
    rows = [(u, f"i{i}", float(rng.choice([0.0, 0.25, 0.5, 0.5, 0.75, 1.0])))
            for u in range(n_users) for i in rng.choice(n_items, rng.integers(2, 9), replace=False)]
    pred = pd.DataFrame(rows, columns=["user", "item", "score"])
    truth = pred[["user", "item"]].assign(label=rng.choice([0, 0, 0, 1, 2], len(pred)))
    truth.loc[truth.user.isin([0, 1, 2]), "label"] = 0           # users without a relevant item
    truth = truth[rng.random(len(truth)) < 0.85]                   # unjudged scored rows
    extra = pd.DataFrame([(3, "i100", 2), (4, "i101", 1), (5, "i102", 1),    # never scored
                          (900, "i5", 1), (901, "i6", 2), (902, "i7", 0)],   # only in truth
                         columns=["user", "item", "label"])
    truth = pd.concat([truth, extra], ignore_index=True).sample(frac=1, random_state=1)
    history = pd.DataFrame({"user": rng.integers(0, n_users + 10, 300),
                            "item": [f"i{i}" for i in rng.zipf(1.6, 300) % (n_items + 5)]})
    n_all = n_items + 6
    features = pd.DataFrame({"item": [f"i{i}" for i in range(n_all)],
                             "f1": rng.integers(0, 3, n_all).astype(float),
                             "f2": rng.random(n_all).round(1)})
    pred_b = pred.assign(score=rng.integers(0, 5, len(pred)) / 4)
    pred_b = pred_b[rng.random(len(pred_b)) < 0.9]
    return {"pred": pred.reset_index(drop=True), "pred_b": pred_b.reset_index(drop=True),
            "truth": truth.reset_index(drop=True),
            # the command line refuses duplicate (user, item) rows of a history file
            "history": history.drop_duplicates(ignore_index=True),
            "catalog": np.array([f"i{i}" for i in range(n_all)], dtype=object),
            "item_features": features}


WORLD = world()

# --------------------------------------------------------------------------- the scenarios

#: Options of each scenario (the beyond-accuracy and interval ones are given to the calls that
#: take them). "defaults": every convention at its default, intervals; "conventions": the
#: conventions away from their defaults (max_grade given), no intervals; "trec": trec_eval's
#: tie order, relevance threshold and condensed lists, and unscored relevant items ranked
#: below every scored row, intervals.
SCENARIOS = {
    "defaults": dict(k=KS, ci=0.9, n_resamples=100, seed=3, bootstrap="poisson"),
    "conventions": dict(k=KS, ties="pessimistic", gain="linear", ideal="full",
                        denominator="min_k", pr_denominator="min_k", gauc_weight="clicks",
                        no_relevant="zero", rbp_p=0.6, max_grade=3, head_share=0.7,
                        unseen="zero"),
    "trec": dict(k=KS, ties="trec", min_grade=2, judged_only=True, unscored="below", ci=0.9,
                 n_resamples=100, seed=3, bootstrap="poisson"),
}
INTERVAL = ("ci", "n_resamples", "seed", "bootstrap")
BEYOND = ("head_share", "unseen")


def call_options(call: str, scenario: str) -> dict:
    """The scenario's options that ``call`` takes (compare: its own resamples, no interval)."""
    options = dict(SCENARIOS[scenario])
    if call != "evaluate":
        options = {key: value for key, value in options.items() if key not in INTERVAL}
    if call == "compare":
        options = {key: value for key, value in options.items() if key not in BEYOND}
        options.update(n_resamples=200, seed=5)
    return options


# --------------------------------------------------------------------------- expected refusals

#: The paths that shuffle users into partitions (Dask, Spark, the command line on Spark).
PARTITIONED = ("dask", "spark", "cli spark")


def said(option: str, value: str | None = None) -> str:
    """An option as a message spells it: ``ties='trec'`` in Python, ``--ties trec`` on the
    command line (a regular expression)."""
    python = f"{option}='{value}'" if value is not None else f"{option}="
    flag = f"--{option.replace('_', '-')}" + (f" {value}" if value is not None else "")
    return f"(?:{re.escape(python)}|{re.escape(flag)})"


def refusal(call: str, scenario: str, engine: str, metric: _metrics.Metric) -> str | None:
    """The message (a regular expression) of the ValueError with which ``engine`` refuses
    ``metric`` in ``call`` under ``scenario`` (exit status 2 on the command line); None where
    it gives the in-memory numbers.

    Every refusal is listed here, from the registry's fields and the engines' known limits: a
    path that refuses anything else, or stops refusing what is listed, fails the test. Where
    several reasons hold, the path may give any of them."""
    o = SCENARIOS[scenario]
    reasons = []
    # in memory too, so on every path
    if call == "compare" and o.get("unscored") == "below":
        reasons.append(rf"compare\({said('unscored', 'below')}\) is not supported")
    if call == "compare" and metric.family == "beyond":     # compare takes no history
        reasons.append(rf"{said('metrics', metric.name)} is not a known option"
                       rf"|invalid choice: '{metric.name}'")
    if metric.family == "beyond" and (o.get("ties") == "trec" or "min_grade" in o
                                      or o.get("judged_only")):
        reasons.append(rf"the beyond-accuracy metrics take {said('ties', 'average')}, "
                       r"'optimistic' or 'pessimistic' and no (?:min_grade|--min-grade) or "
                       r"(?:judged_only|--judged-only)")
    if metric.family == "pairwise" and o.get("ties") == "trec":
        reasons.append(rf"{said('ties', 'trec')} orders tied documents by id")
    if metric.name == "err" and o.get("ties", "average") == "average":   # the data's ties
        reasons.append(r"ERR's expected value over the orders of such a tie has no closed form")
    # the partitioned engines' limits
    if engine in PARTITIONED:
        if o.get("unscored") == "below":
            reasons.append(rf"{said('unscored', 'below')} is not supported on (Dask|Spark)")
        if call == "per_user" and metric.family == "beyond":
            reasons.append(r"pandas input only, not on (Dask|Spark)")
        if metric.graded and o.get("max_grade") is None:   # a partition cannot see the top grade
            reasons.append(rf"pass {said('max_grade')}")
        if metric.name == "personalization" and call == "evaluate" and o.get("ci"):
            reasons.append(r"personalization has no interval on (Dask|Spark)")
    return "|".join(reasons) or None


#: (call, scenario, engine, metric) where a path differs from in memory (metric None: the table
#: as a whole): bugs, each with its reproduction in the reason; the test is an expected failure
#: (strict) until it is fixed.
KNOWN_DIFFERENCES: dict[tuple[str, str, str, str | None], str] = {
    # fixed, each with its test: the Dask and Spark per-user tables lacked rbp_residual; a
    # ValueError in a Spark worker of evaluate_per_user reached the caller as Py4JJavaError;
    # the command line's CSV ids hashed as text gave other Poisson intervals than Parquet's
}

#: Paths whose bootstrap intervals differ from in memory (their values, counts and text are
#: compared): the command line on CSV (test_command_line_on_csv_gives_pythons_intervals).
INTERVALS_DIFFER: tuple[str, ...] = ()

# --------------------------------------------------------------------------- the paths


def _arrow_kind(convert, series):
    """An input path through one Arrow-exporting library: every table converted, the catalogue
    a sequence of that library (or numpy)."""
    def inputs(data: dict) -> dict:
        out = {key: convert(value) if isinstance(value, pd.DataFrame) else value
               for key, value in data.items()}
        out["catalog"] = series(data["catalog"])
        return out
    return inputs


def _polars():
    return import_extra("polars")


def _duckdb():
    return import_extra("duckdb")


ARROW_KINDS = {
    "pyarrow": _arrow_kind(lambda f: pa.Table.from_pandas(f, preserve_index=False), pa.array),
    "polars": _arrow_kind(lambda f: _polars().from_pandas(f), lambda c: _polars().Series(c)),
    "duckdb": _arrow_kind(
        lambda f: _duckdb().from_arrow(pa.Table.from_pandas(f, preserve_index=False)),
        lambda c: c),
}

SYNC = {"scheduler": "sync", "dataframe.shuffle.method": "tasks"}


_FOLDERS: dict = {}


class Paths:
    """Runs ``evaluate`` / ``evaluate_per_user`` / ``compare`` on one path with some metrics.

    The test run's Spark session and a folder for the command line's files are asked of
    pytest only when a path needs them."""

    def __init__(self, request):
        self.request = request

    # inputs of each path: the data converted, with the in-memory call to make

    def spark(self):
        import_extra("pyspark")
        return self.request.getfixturevalue("spark_session")

    def inputs(self, engine: str, call: str) -> dict:
        data = dict(WORLD)
        if engine == "pandas":
            return data
        if engine in ARROW_KINDS:
            return ARROW_KINDS[engine](data)
        polars = _polars()
        if engine == "dask":
            import_extra("dask")
            dd = import_extra("dask.dataframe")
            for key, n in (("pred", 3), ("pred_b", 3), ("truth", 2), ("history", 2)):
                data[key] = dd.from_pandas(data[key], npartitions=n)
            # a side table from another library beside Dask frames
            data["item_features"] = pa.Table.from_pandas(data["item_features"],
                                                         preserve_index=False)
            return data
        if engine == "spark":
            spark = self.spark()
            # evaluate's rows shuffled over input partitions; per-user tables and the paired
            # tests of compare follow the order of the rows, so those keep it
            shuffled = call == "evaluate"
            for key in ("pred", "pred_b", "truth", "history"):
                frame = spark.createDataFrame(data[key])
                data[key] = frame.repartition(3) if shuffled else frame
            data["item_features"] = polars.from_pandas(data["item_features"])
            return data
        raise AssertionError(engine)

    def run(self, call: str, engine: str, metrics: list[str], options: dict) -> pd.DataFrame:
        if engine.startswith("cli"):
            return self.command_line(call, engine, metrics, options)
        data = self.inputs(engine, call)
        beyond = [name for name in metrics if _metrics.METRIC[name].family == "beyond"]
        side = {key: data[key] for key in ("history", "catalog", "item_features")} \
            if beyond else {}
        if not beyond:
            options = {key: value for key, value in options.items() if key not in BEYOND}
        context = contextlib.nullcontext()
        if engine == "dask":
            context = import_extra("dask").config.set(SYNC)
        with context:
            if call == "evaluate":
                return rm.evaluate(data["pred"], data["truth"], metrics=metrics, **options,
                                   **side)
            if call == "per_user":
                return rm.evaluate_per_user(data["pred"], data["truth"], metrics=metrics,
                                            **options, **side)
            return rm.compare(data["pred"], data["pred_b"], data["truth"], metrics=metrics,
                              **options)

    # the command line

    def folder(self, suffix: str):
        if suffix in _FOLDERS:
            return _FOLDERS[suffix]
        path = self.request.getfixturevalue("tmp_path_factory").mktemp("every-engine")
        _FOLDERS[suffix] = path
        names = {"pred": "A", "pred_b": "B"}
        for key in ("pred", "pred_b", "truth", "history", "item_features"):
            file = path / f"{names.get(key, key)}{suffix}"
            frame = WORLD[key]
            if suffix == ".csv":
                frame.to_csv(file, index=False)
            else:
                frame.to_parquet(file, index=False)
        pd.DataFrame({"item": WORLD["catalog"]}).to_csv(path / "catalog.csv", index=False)
        return path

    def command_line(self, call: str, engine: str, metrics: list[str],
                     options: dict) -> pd.DataFrame:
        suffix = ".csv" if engine == "cli csv" else ".parquet"
        folder = self.folder(suffix)
        beyond = any(_metrics.METRIC[name].family == "beyond" for name in metrics)
        if not beyond:
            options = {key: value for key, value in options.items() if key not in BEYOND}
        flags = []
        for key, value in options.items():
            flag = "--" + key.replace("_", "-")
            if value is True:
                flags.append(flag)
            else:
                flags += [flag, *map(str, value if isinstance(value, list) else [value])]
        if beyond:
            flags += ["--history", folder / f"history{suffix}", "--catalog",
                      folder / "catalog.csv", "--item-features", folder / f"item_features{suffix}"]
        if engine == "cli spark":
            self.spark()                                   # the active session is used
            flags += ["--engine", "spark"]
        models = [folder / f"A{suffix}"] + ([folder / f"B{suffix}"] if call == "compare" else [])
        out = folder / f"out-{call}.json"
        out.unlink(missing_ok=True)
        argv = [call, *models, "--truth", folder / f"truth{suffix}", "--metrics", *metrics,
                *flags, "-q", "-o", out]
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            status = cli.main([str(a) for a in argv])
        if status == 2:
            raise ValueError(stderr.getvalue().strip())
        assert status == 0, stderr.getvalue()
        document = json.loads(out.read_text())
        table = pd.DataFrame(document["metrics"])
        table["k"] = table["k"].astype("Int64")
        table.attrs["conventions"] = document["conventions"]
        return table


# --------------------------------------------------------------------------- the outcomes


class Crashed(Exception):
    """A path raised something else than a table or a ValueError (kept, so that the tests of
    every metric of the call report it without running the call again)."""


def attempt(run):
    """The table, the ValueError raised, or :class:`Crashed`; RecmetricsWarnings are the
    data's (their text is in the note column, which is compared)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        try:
            return run()
        except ValueError as error:
            return error
        except Exception as error:  # noqa: BLE001 - reported by the tests that read it
            lines = str(error).splitlines()
            return Crashed(f"{type(error).__name__} instead of a ValueError: "
                           + " / ".join(lines[:1] + [x for x in lines if "Error:" in x][:3]))


class MemoryRefused(Exception):
    """In memory refused a call that :func:`refusal` does not list as refused."""


_OUTCOMES: dict = {}


def outcomes(request, call: str, scenario: str, engine: str) -> dict:
    """{metric: (engine's table, in-memory table) or the ValueError the engine raised}, each
    path run once for the metrics it is expected to compute (then metric by metric where that
    batch is refused) and once per listed refusal."""
    key = (call, scenario, engine)
    if key in _OUTCOMES:
        return _OUTCOMES[key]
    paths = Paths(request)
    options = call_options(call, scenario)
    listed = [n for n in NAMES if refusal(call, scenario, engine, _metrics.METRIC[n])]
    batch = [n for n in NAMES if n not in listed]
    result = {}

    def run(names):
        want = attempt(lambda: paths.run(call, "pandas", names, options))
        if isinstance(want, Exception):
            return MemoryRefused(want)
        got = want if engine == "pandas" else attempt(
            lambda: paths.run(call, engine, names, options))
        return got if isinstance(got, Exception) else (got, want)

    found = run(batch) if batch else None
    if isinstance(found, Exception):        # find which metrics are refused (or crash)
        for name in batch:
            result[name] = run([name])
    else:
        result.update({name: found for name in batch})
    for name in listed:
        result[name] = attempt(lambda name=name: paths.run(call, engine, [name], options))
    _OUTCOMES[key] = result
    return result


def rows_of(table: pd.DataFrame, metric: _metrics.Metric) -> pd.DataFrame:
    """The rows ``metric`` makes in a table of evaluate or compare (``mrr`` has no k, ``mrr@k``
    has one)."""
    uncut = table["k"].isna()
    mine = (table["metric"] == metric.table_name) & (uncut if metric.cut == "none" else ~uncut)
    return table[mine].reset_index(drop=True)


@cache
def per_user_alone(scenario: str) -> dict:
    """{metric: the columns of the in-memory per-user table of that metric alone}."""
    out = {}
    for m in REGISTRY:
        side = ({key: WORLD[key] for key in ("history", "catalog", "item_features")}
                if m.family == "beyond" else {})
        options = {key: value for key, value in call_options("per_user", scenario).items()
                   if side or key not in BEYOND}
        alone = attempt(lambda m=m, options=options, side=side: rm.evaluate_per_user(
            WORLD["pred"], WORLD["truth"], metrics=[m.name], **options, **side))
        if not isinstance(alone, ValueError):
            out[m.name] = list(alone.columns)
    return out


def per_user_columns(scenario: str, name: str) -> list[str]:
    """The per-user columns of a metric: the user and the counts every per-user table has,
    then what the metric adds (gauc: the user's AUC; rbp: rbp and rbp_residual; the
    catalogue-level and probability metrics: nothing)."""
    tables = per_user_alone(scenario)
    shared = set.intersection(*(set(c) for c in tables.values()))
    return [c for c in tables[name] if c in shared] + \
        [c for c in tables[name] if c not in shared]


def cases(call: str, engines: tuple[str, ...], *, whole: bool = False):
    """(scenario, engine, metric) parameters, or (scenario, engine) for the tables as a whole,
    the known differences marked xfail(strict)."""
    out = []
    for scenario in SCENARIOS:
        for engine in engines:
            if engine == "cli spark" and scenario not in CLI_SPARK_SCENARIOS:
                continue
            for name in [None] if whole else NAMES:
                reason = KNOWN_DIFFERENCES.get((call, scenario, engine, name))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                values = (scenario, engine) if whole else (scenario, engine, name)
                out.append(pytest.param(*values, marks=marks, id="-".join(values)))
    return out


def check_refusal(call, scenario, engine, name, found) -> bool:
    """Assert the refusal listed for (call, scenario, engine, metric), or that there is none;
    True where the engine gave a table to compare."""
    expected = refusal(call, scenario, engine, _metrics.METRIC[name])
    assert not isinstance(found, MemoryRefused), \
        f"in memory refuses {name} in {call} ({scenario}), which refusal() does not list: {found}"
    assert not isinstance(found, Crashed), f"{engine}, {name} in {call} ({scenario}): {found}"
    if expected is not None:
        assert isinstance(found, ValueError), \
            f"{engine} no longer refuses {name} in {call} ({scenario}): drop its refusal"
        assert re.search(expected, str(found)), f"refused for another reason: {found}"
        return False
    assert not isinstance(found, ValueError), f"{engine} refuses {name} in {call}: {found}"
    return True


def assert_same_rows(got: pd.DataFrame, want: pd.DataFrame, columns):
    assert got["k"].tolist() == want["k"].tolist()
    for column in ("n_users", "n_skipped", "n_without_predictions", "conventions", "note"):
        assert got[column].tolist() == want[column].tolist(), column
    for column in columns:
        np.testing.assert_allclose(got[column].to_numpy(np.float64),
                                   want[column].to_numpy(np.float64), rtol=0, atol=1e-12,
                                   err_msg=column)


# --------------------------------------------------------------------------- evaluate

EVALUATE_PATHS = ("pandas", "pyarrow", "polars", "duckdb", "dask", "spark", "cli csv",
                  "cli parquet", "cli spark")
#: The command line on Spark reads Parquet and hands it to the Spark engine; its conventions
#: are those of the other command-line paths, checked in every scenario: one scenario here.
CLI_SPARK_SCENARIOS = ("defaults",)


@pytest.mark.parametrize("scenario, engine, name", cases("evaluate", EVALUATE_PATHS))
def test_evaluate_rows_equal_in_memory_or_the_listed_refusal(request, scenario, engine, name):
    found = outcomes(request, "evaluate", scenario, engine)[name]
    if not check_refusal("evaluate", scenario, engine, name, found):
        return
    got, want = found
    metric = _metrics.METRIC[name]
    mine, memory = rows_of(got, metric), rows_of(want, metric)
    assert len(memory) == (1 if metric.cut == "none" else len(KS))
    intervals = ("ci_low", "ci_high") if "ci" in SCENARIOS[scenario] else ()
    if engine in INTERVALS_DIFFER:      # see test_command_line_on_csv_gives_pythons_intervals
        intervals = ()
    assert_same_rows(mine, memory, ("value",) + intervals)


@pytest.mark.parametrize("scenario, engine", cases("evaluate", EVALUATE_PATHS[1:], whole=True))
def test_evaluate_tables_have_the_in_memory_columns_rows_and_conventions(request, scenario, engine):
    """Beyond each metric's rows: the same columns, the same rows in the same order, and the
    same conventions record, for the metrics the path computes."""
    found = [f for f in outcomes(request, "evaluate", scenario, engine).values()
             if isinstance(f, tuple)]
    if not found:
        assert all(refusal("evaluate", scenario, engine, m) for m in REGISTRY)
        return
    got, want = found[0]
    assert list(got.columns) == list(want.columns)
    assert got[["metric", "k"]].astype(str).values.tolist() == \
        want[["metric", "k"]].astype(str).values.tolist()
    assert got.attrs["conventions"] == want.attrs["conventions"]


# --------------------------------------------------------------------------- evaluate_per_user

PER_USER_PATHS = ("pandas", "pyarrow", "polars", "duckdb", "dask", "spark")


@pytest.mark.parametrize("scenario, engine, name", cases("per_user", PER_USER_PATHS))
def test_per_user_columns_equal_in_memory_or_the_listed_refusal(request, scenario, engine, name):
    found = outcomes(request, "per_user", scenario, engine)[name]
    if not check_refusal("per_user", scenario, engine, name, found):
        return
    got, want = found
    columns = per_user_columns(scenario, name)
    assert set(columns) <= set(want.columns)
    assert_same_columns(want[columns], got[columns])


@pytest.mark.parametrize("scenario, engine", cases("per_user", PER_USER_PATHS[1:], whole=True))
def test_per_user_tables_have_the_in_memory_columns_and_users(request, scenario, engine):
    found = [f for f in outcomes(request, "per_user", scenario, engine).values()
             if isinstance(f, tuple)]
    if not found:
        assert all(refusal("per_user", scenario, engine, m) for m in REGISTRY)
        return
    got, want = found[0]
    assert_same_columns(want, got)


# --------------------------------------------------------------------------- compare

COMPARE_PATHS = ("pandas", "pyarrow", "polars", "duckdb", "dask", "spark", "cli csv",
                 "cli parquet")


@pytest.mark.parametrize("scenario, engine, name", cases("compare", COMPARE_PATHS))
def test_compare_rows_equal_in_memory_or_the_listed_refusal(request, scenario, engine, name):
    found = outcomes(request, "compare", scenario, engine)[name]
    if not check_refusal("compare", scenario, engine, name, found):
        return
    got, want = found
    metric = _metrics.METRIC[name]
    mine, memory = rows_of(got, metric), rows_of(want, metric)
    assert len(memory) == (1 if metric.cut == "none" else len(KS))
    assert_same_columns(memory, mine)


@pytest.mark.parametrize("scenario, engine", cases("compare", COMPARE_PATHS[1:], whole=True))
def test_compare_tables_have_the_in_memory_columns_rows_and_conventions(request, scenario, engine):
    found = [f for f in outcomes(request, "compare", scenario, engine).values()
             if isinstance(f, tuple)]
    if not found:
        assert all(refusal("compare", scenario, engine, m) for m in REGISTRY)
        return
    got, want = found[0]
    assert_same_columns(want, got)
    assert got.attrs["conventions"] == want.attrs["conventions"]


def test_command_line_on_csv_gives_pythons_intervals(tmp_path):
    """Bug fixed (found by the matrix above): the command line reads a CSV file's integer user
    ids as text, a Parquet file's as int64, and the Poisson bootstrap hashed the ids as read,
    so the CSV file's interval was another; a text id that is a whole number now hashes as
    that number (one id, one hash)."""
    pred = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4, 4], "item": ["a", "b"] * 4,
                         "score": [0.9, 0.1, 0.8, 0.3, 0.5, 0.5, 0.2, 0.7],
                         "label": [1, 0, 0, 1, 1, 0, 0, 1]})
    pred.to_csv(tmp_path / "log.csv", index=False)
    options = dict(k=[1], metrics=["mrr"], ci=0.9, n_resamples=100, bootstrap="poisson")
    want = rm.evaluate(pd.read_csv(tmp_path / "log.csv"), **options)
    argv = ["evaluate", tmp_path / "log.csv", "--metrics", "mrr", "--k", "1", "--ci", "0.9",
            "--n-resamples", "100", "--bootstrap", "poisson", "-q", "-o", tmp_path / "out.json"]
    assert cli.main([str(a) for a in argv]) == 0
    got = json.loads((tmp_path / "out.json").read_text())["metrics"][0]
    assert got["value"] == pytest.approx(want.value.iloc[0], abs=1e-12)
    assert [got["ci_low"], got["ci_high"]] == pytest.approx(
        [want.ci_low.iloc[0], want.ci_high.iloc[0]], abs=1e-12)
