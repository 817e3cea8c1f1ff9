"""What a written result records (issue 18): versions, time, command line, inputs, options;
and intervals that depend only on the metric they belong to."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import recmetrics as rm
from recmetrics._options import CONVENTIONS
from recmetrics.cli import main

PRED_A = str(rm.DATA_DIR / "sample_model_a.csv")
TRUTH = str(rm.DATA_DIR / "sample_truth.csv")


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_records_versions_time_command_inputs_and_every_option(capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--k", "3", "7", "--ties", "pessimistic",
            "--no-relevant", "zero", "--ci", "0.9", "--n-resamples", "100", "--seed", "4",
            "--format", "json"]
    code, out, err = run(argv, capsys)
    assert (code, err) == (0, "")
    provenance = json.loads(out)["provenance"]
    assert provenance["package"] == "metricbook" and provenance["version"] == rm.__version__
    assert set(provenance["libraries"]) == {"python", "numpy", "pandas", "pyarrow"}
    assert provenance["libraries"]["numpy"] == np.__version__
    assert provenance["created"] == "2023-11-14T22:13:20Z"
    assert provenance["argv"] == ["recmetrics", *argv]
    for described, (role, path) in zip(provenance["inputs"], [("pred", PRED_A), ("truth", TRUTH)]):
        data = open(path, "rb").read()
        assert described["role"] == role
        assert described["path"] == os.path.abspath(path)
        assert described["bytes"] == len(data)
        assert described["sha256"] == hashlib.sha256(data).hexdigest()
        assert described["rows"] == data.count(b"\n") - 1
    options = provenance["options"]
    assert options["k"] == [3, 7] and options["ci"] == 0.9 and options["n_resamples"] == 100
    assert options["seed"] == 4 and options["bootstrap"] == "poisson"
    assert options["ties"] == "pessimistic" and options["no_relevant"] == "zero"
    assert {c.name for c in CONVENTIONS} <= set(options)
    assert options["columns"] == {"user": "user", "item": "item", "score": "score", "rank": None,
                                  "label": "label"}
    assert {"sep", "encoding", "metrics"} <= set(options)


def test_without_source_date_epoch_the_time_is_now(monkeypatch):
    import datetime as dt

    from recmetrics._provenance import created

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    stamp = dt.datetime.strptime(created(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    assert abs((dt.datetime.now(dt.timezone.utc) - stamp).total_seconds()) < 120


def test_the_same_inputs_and_time_give_the_same_json(capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    argv = ["evaluate", PRED_A, "--truth", TRUTH, "--ci", "0.95", "--n-resamples", "100",
            "--format", "json"]
    first, second = run(argv, capsys)[1], run(argv, capsys)[1]
    assert first == second


def test_compare_json_records_provenance_too(capsys):
    code, out, _ = run(["compare", PRED_A, str(rm.DATA_DIR / "sample_model_b.csv"), "--truth",
                        TRUTH, "--metrics", "mrr", "--n-resamples", "100", "--format", "json"],
                       capsys)
    assert code == 0
    provenance = json.loads(out)["provenance"]
    assert [i["role"] for i in provenance["inputs"]] == ["a", "b", "truth"]
    assert provenance["options"]["alpha"] == 0.05


def test_version_prints_the_distribution_and_its_version():
    done = subprocess.run([sys.executable, "-m", "recmetrics", "--version"], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, f"metricbook {rm.__version__}")


def test_a_level_with_decimals_is_printed_with_them(capsys):
    code, out, _ = run(["evaluate", PRED_A, "--truth", TRUTH, "--metrics", "mrr", "--ci", "0.999",
                        "--n-resamples", "100"], capsys)
    assert code == 0 and "99.9% CI" in out and "100% CI" not in out


# --------------------------------------------------------------------------- intervals


@pytest.fixture(scope="module")
def sample():
    pred = pd.read_csv(PRED_A)
    truth = pd.read_csv(TRUTH)
    users = pred.user.drop_duplicates().iloc[:300]
    return pred[pred.user.isin(users)], truth[truth.user.isin(users)]


@settings(max_examples=12, deadline=None)
@given(metrics=st.lists(st.sampled_from(rm.evaluation.DEFAULT_METRICS), min_size=1, unique=True),
       ks=st.lists(st.sampled_from([1, 3, 5, 10, 20]), min_size=1, max_size=3, unique=True),
       bootstrap=st.sampled_from(["poisson", "multinomial"]))
def test_a_metrics_interval_does_not_depend_on_what_else_is_asked(sample, metrics, ks, bootstrap):
    pred, truth = sample
    options = dict(ci=0.9, n_resamples=100, seed=7, bootstrap=bootstrap)
    everything = rm.evaluate(pred, truth, k=[1, 3, 5, 10, 20], **options)
    some = rm.evaluate(pred, truth, k=ks, metrics=metrics, **options)
    merged = some.merge(everything, on=["metric", "k"], suffixes=("", "_all"))
    assert len(merged) == len(some)
    assert merged.ci_low.tolist() == merged.ci_low_all.tolist()
    assert merged.ci_high.tolist() == merged.ci_high_all.tolist()


def test_the_command_line_interval_of_recall_at_10_is_the_same_for_any_other_cut_offs(capsys):
    intervals = []
    for ks in (["10"], ["5", "10"], ["5", "10", "20"]):
        code, out, _ = run(["evaluate", PRED_A, "--truth", TRUTH, "--k", *ks, "--ci", "0.95",
                            "--n-resamples", "200", "--format", "json"], capsys)
        rows = json.loads(out)["metrics"]
        intervals.append(next((r["ci_low"], r["ci_high"]) for r in rows
                              if r["metric"] == "recall" and r["k"] == 10))
    assert intervals[0] == intervals[1] == intervals[2]


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_the_recorded_sha256_is_of_the_bytes_read(suffix, tmp_path, capsys, monkeypatch):
    """A plain CSV file is hashed while pyarrow reads it (so the file is not read again for
    its digest), a Parquet file in a thread while it is read and its ids coded (issue 36);
    compressed files are hashed after. Either way the digest is hashlib's of the whole file."""
    from recmetrics import _provenance

    frame = pd.read_csv(PRED_A)
    path = tmp_path / f"scores{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False)
    hashed_after = []
    real = _provenance.sha256
    monkeypatch.setattr(_provenance, "sha256", lambda p: hashed_after.append(p) or real(p))
    code, out, err = run(["evaluate", path, "--truth", TRUTH, "--format", "json"], capsys)
    assert (code, err) == (0, "")
    described = {d["role"]: d for d in json.loads(out)["provenance"]["inputs"]}
    assert described["pred"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert described["truth"]["sha256"] == hashlib.sha256(open(TRUTH, "rb").read()).hexdigest()
    # the plain CSV files (scores and truth) and the Parquet file were hashed while read
    assert [p.name for p in hashed_after] == ([path.name] if suffix == ".csv.gz" else [])
