"""Shared test settings.

Hypothesis: no per-example deadline (timing on a shared CI machine is not what these tests
check), and a fixed seed under CI so that a failure there can be replayed exactly.

Optional extras (dask): a test module that needs one imports it with :func:`import_extra`,
which skips the module when the extra is missing, except under ``RECMETRICS_REQUIRE_EXTRAS=1``
(set by ``tasks.py test``, which installs every extra), where a missing extra fails the run.
"""
import importlib
import os
import shutil
import subprocess
from pathlib import Path

# Outputs record their creation time; tests that compare two runs byte for byte (and their
# child processes) see one fixed time, as reproducible builds do. test_provenance checks the clock.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")

import pytest
from hypothesis import settings

# the engines' shared assertions (tests/_engines.py) explain their failures as the tests' own do
pytest.register_assert_rewrite("_engines")

settings.register_profile("recmetrics", deadline=None, derandomize=bool(os.environ.get("CI")),
                          print_blob=True)
settings.load_profile("recmetrics")


#: Set to 1 where every extra is installed (tasks.py test): a missing one is then an error.
REQUIRE_EXTRAS = "RECMETRICS_REQUIRE_EXTRAS"


def import_extra(module: str):
    """Import an optional extra's module; skip without it, or fail when extras are required."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if os.environ.get(REQUIRE_EXTRAS) == "1":
            raise ImportError(f"{module} is not importable ({error}) but {REQUIRE_EXTRAS}=1 says "
                              "every extra is installed; install them: "
                              "pip install -e '.[dask]'") from error
        pytest.skip(f"{module} is not installed (pip install -e '.[dask]')",
                    allow_module_level=True)


#: Headless Chromium flags shared by the browser tests (report, site).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def apt_install(packages: list[str]) -> None:
    """Install Debian packages (the tests run as root on Debian); fail, never skip, if that fails."""
    if not packages:
        return
    assert shutil.which("apt-get"), f"apt-get is needed to install {' '.join(packages)}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run("apt-get update && apt-get install -y --no-install-recommends "
                          + " ".join(packages), shell=True, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (f"installing {' '.join(packages)} failed:\n"
                                  + done.stdout[-2000:] + done.stderr[-2000:])


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium, with fonts for Chinese text and formulas, installed if missing."""
    wanted = {"/usr/bin/chromium": "chromium",
              "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc": "fonts-wqy-microhei",
              "/usr/share/texmf/fonts/opentype/public/tex-gyre-math": "fonts-texgyre-math"}
    apt_install([package for path, package in wanted.items() if not Path(path).exists()])
    return Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def spark_session():
    """One local Spark session (2 cores, 2 shuffle partitions) for every Spark test module
    (test_spark, test_beyond_spark): its JVM starts once a test run, not once a module. Each
    module's own ``spark`` fixture takes it, with that module's settings."""
    from recmetrics import spark as rms  # the modules that ask for it imported pyspark already

    with rms.local_session("local[2]", shuffle_partitions=2) as session:
        yield session


# --------------------------------------------------------------------------- literal references


def auc_literal(positive_scores, negative_scores) -> float:
    """AUC by counting pairs one by one: a win counts 1, a tie 1/2 (NaN without a pair)."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positive_scores for n in negative_scores]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def group_auc_literal(frame, gauc_weight: str, *, user="user", score="score",
                      label="label") -> float:
    """GAUC as a loop over users: each user's AUC, weighted by its rows ("impressions"), its
    positive rows ("clicks") or 1 ("uniform"); users with one class only are left out."""
    numerator = denominator = 0.0
    for _, rows in frame.groupby(user, sort=False):
        positive = rows[label] > 0
        pos, neg = rows[score][positive].tolist(), rows[score][~positive].tolist()
        if not pos or not neg:
            continue
        weight = {"impressions": len(rows), "clicks": len(pos), "uniform": 1}[gauc_weight]
        numerator += weight * auc_literal(pos, neg)
        denominator += weight
    return numerator / denominator


def assert_same_columns(expected, got):
    """Every column of a table of an engine against in memory's: text and counts equal,
    numbers to 1e-12 (NaN where in memory has NaN)."""
    import numpy as np

    assert list(got.columns) == list(expected.columns)
    for column in expected.columns:
        if expected[column].dtype.kind == "f":
            np.testing.assert_allclose(got[column].to_numpy(dtype=np.float64),
                                       expected[column].to_numpy(dtype=np.float64),
                                       rtol=0, atol=1e-12, err_msg=column)
        else:
            assert got[column].astype(object).where(got[column].notna(), None).tolist() == \
                expected[column].astype(object).where(expected[column].notna(), None).tolist(), \
                column


def assert_same_comparison(expected, got):
    """rm.compare's table from the Dask or Spark engine against in memory's: every column
    (:func:`assert_same_columns`) and the attributes."""
    assert_same_columns(expected, got)
    for key in ("conventions", "alpha", "correction", "models", "baseline"):
        assert got.attrs[key] == expected.attrs[key], key
