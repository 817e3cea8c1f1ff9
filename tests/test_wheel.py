"""The built wheel carries the sample data and its command works from any folder (issue 9).

The wheel is built from a copy of the project's files (so nothing is written into the
work tree), installed with ``pip install --target`` into an empty folder, and run as
``python -m recmetrics`` from a third folder with PYTHONPATH naming that folder only: the
import must come from the wheel, not from this checkout's editable install.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ["sample_model_a.csv", "sample_model_b.csv", "sample_truth.csv", "sample_model_a.parquet"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """An empty folder into which the freshly built wheel was installed (no dependencies)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "notebooks", "benchmarks", "*.egg-info", "__pycache__",
        ".hypothesis", ".pytest_cache"))
    wheels = base / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q",
                           "-w", str(wheels)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [wheel] = wheels.glob("metricbook-*.whl")
    target = base / "target"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                           str(target), str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return target


def _run_elsewhere(installed: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(installed)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_wheel_ships_the_sample_data(installed):
    for name in SAMPLE:
        shipped = installed / "recmetrics" / "data" / name
        assert shipped.read_bytes() == (rm.DATA_DIR / name).read_bytes(), name
    assert (installed / "recmetrics" / "templates" / "report.ipynb").is_file()


def test_python_m_recmetrics_from_another_folder_equals_evaluate(installed, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run_elsewhere(installed, elsewhere, "-c",
                           "import recmetrics as rm; print(rm.__file__); print(rm.DATA_DIR)")
    assert where.returncode == 0, where.stderr
    module_file, data_dir = where.stdout.splitlines()
    assert Path(module_file).is_relative_to(installed)          # the wheel, not this checkout
    assert Path(data_dir) == installed / "recmetrics" / "data"

    data = Path(data_dir)
    done = _run_elsewhere(installed, elsewhere, "-m", "recmetrics", "evaluate",
                          str(data / "sample_model_a.csv"), "--truth", str(data / "sample_truth.csv"),
                          "--k", "5", "10", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    got = pd.DataFrame(json.loads(done.stdout)["metrics"])
    expected = rm.evaluate(pd.read_csv(data / "sample_model_a.csv"),
                           pd.read_csv(data / "sample_truth.csv"), k=[5, 10])
    assert got.metric.tolist() == expected.metric.tolist()
    np.testing.assert_array_equal(got.value.to_numpy(), expected.value.to_numpy())
    assert 0.6 < got.value.iloc[0] < 0.75                          # global AUC of model A
    assert sorted(p.name for p in elsewhere.iterdir()) == []       # nothing written there
