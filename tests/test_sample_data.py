"""data/make_sample.py: re-running it reproduces the packaged sample files; they stay small."""
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

import recmetrics as rm

DATA = rm.DATA_DIR
SCRIPT = Path(__file__).resolve().parent.parent / "data" / "make_sample.py"
FILES = ["sample_truth.csv", "sample_model_a.csv", "sample_model_b.csv", "sample_model_a.parquet",
         "sample_log.csv"]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("make_sample", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("sample")
    assert [p.name for p in module.write(out)] == FILES
    assert module.PACKAGED.resolve() == DATA.resolve()      # its default folder is the package's
    return out


@pytest.mark.parametrize("name", [f for f in FILES if f.endswith(".csv")])
def test_csv_files_are_reproduced_byte_for_byte(regenerated, name):
    assert (regenerated / name).read_bytes() == (DATA / name).read_bytes(), (
        f"recmetrics/data/{name} differs from what data/make_sample.py writes; re-run it and commit the result")


def test_parquet_file_holds_the_same_frame(regenerated):
    committed = pd.read_parquet(DATA / "sample_model_a.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(regenerated / "sample_model_a.parquet"), committed)
    pd.testing.assert_frame_equal(committed, pd.read_csv(DATA / "sample_model_a.csv"),
                                  check_dtype=False)


def test_sample_is_small_and_shaped_as_documented():
    assert sum((DATA / f).stat().st_size for f in FILES) < 3 * 2**20
    truth = pd.read_csv(DATA / "sample_truth.csv")
    per_user = truth.groupby("user").size()
    assert truth.user.nunique() == 2_000 and per_user.min() >= 2 and per_user.max() <= 200
    assert per_user.max() > 10 * per_user.median()                 # very different activity
    top = truth.item.value_counts()
    assert top.iloc[0] > 20 * top.median()                         # a popularity skew
    assert 0.10 < truth.label.mean() < 0.20


def test_timestamped_log_is_shaped_as_documented():
    """The log of notebook 10's protocol: one row per (user, item), in time order, with ties."""
    log = pd.read_csv(DATA / "sample_log.csv")
    assert list(log.columns) == ["user", "item", "timestamp"]
    assert log.user.nunique() == 1_000 and log.item.nunique() <= 600
    assert not log.duplicated(["user", "item"]).any()
    assert log.timestamp.is_monotonic_increasing
    assert log.duplicated(["user", "timestamp"]).mean() > 0.5          # sessions: tied times
    per_user = log.groupby("user").size()
    assert per_user.min() >= 3 and per_user.max() <= 150
