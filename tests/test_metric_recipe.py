"""The README's recipe "add a metric" is true: a row added to the registry alone, with its kernel,
reaches evaluate, evaluate_per_user, the command line and its gates, and the Dask and Spark
engines, with no other file touched.

The package is copied to a scratch folder, one row is added to the copy's
``recmetrics/_metrics.py``, and a fresh interpreter that imports the copy
evaluates the new metric ``hits`` (relevant items in the top k) everywhere,
checked against a literal count."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

ROW = '''    Metric("hits", "ranking", "per_k", "hits@k", conventions=_TIES_USERS,
           kernel=lambda x, cut, o: x.ranked.precision(cut, "k") * cut),
'''

DRIVER = r'''
import json, sys
import numpy as np, pandas as pd
import recmetrics as rm
from recmetrics import cli

out = {"module": rm.__file__}
rng = np.random.default_rng(0)
rows = [(u, i, float(rng.integers(0, 1000)), int(rng.random() < 0.3))
        for u in range(30) for i in rng.choice(50, size=12, replace=False)]
pred = pd.DataFrame(rows, columns=["user", "item", "score", "label"])
# literal: the relevant items among each user's 3 best scores (no ties by construction below)
pred["score"] += np.arange(len(pred)) * 1e-6
top = pred.sort_values(["user", "score"], ascending=[True, False]).groupby("user").head(3)
# users with nothing relevant are left out of the mean (no_relevant="skip")
judged = pred.groupby("user").label.max() > 0
out["literal"] = float(top.groupby("user").label.sum()[judged].mean())
table = rm.evaluate(pred, k=[3], metrics=["hits", "ndcg"])
out["evaluate"] = float(table[table.metric == "hits"].value.iloc[0])
out["per_user"] = float(rm.evaluate_per_user(pred, k=[3], metrics=["hits"])["hits@3"].mean())
path = sys.argv[1] + "/pred.csv"
pred.to_csv(path, index=False)
out["cli_gate"] = cli.main(["evaluate", path, "--metrics", "hits", "--k", "3", "--quiet",
                            "--fail-under", "hits@3=100", "-o", sys.argv[1] + "/out.json"])
out["cli"] = json.load(open(sys.argv[1] + "/out.json"))["metrics"][0]["value"]
import dask.dataframe as dd
out["dask"] = float(rm.evaluate(dd.from_pandas(pred, npartitions=3), k=[3],
                                metrics=["hits"]).value.iloc[0])
from recmetrics.spark import local_session
with local_session("local[1]", shuffle_partitions=2) as spark:
    frame = spark.createDataFrame(pred)
    out["spark"] = float(rm.evaluate(frame, k=[3], metrics=["hits"]).value.iloc[0])
print(json.dumps(out))
'''


def test_a_metric_added_to_the_registry_alone_reaches_every_path(tmp_path):
    pytest.importorskip("dask")
    pytest.importorskip("pyspark")
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "recmetrics", copy / "recmetrics",
                    ignore=shutil.ignore_patterns("__pycache__"))
    registry = copy / "recmetrics" / "_metrics.py"
    text = registry.read_text(encoding="utf-8")
    anchor = '    Metric("logloss", "probability"'
    assert text.count(anchor) == 1
    registry.write_text(text.replace(anchor, ROW + anchor), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["module"].startswith(str(copy))          # the copy was evaluated, not the package
    assert out["literal"] > 0
    for path in ("evaluate", "per_user", "cli", "dask", "spark"):
        assert out[path] == pytest.approx(out["literal"], abs=1e-12), path
    assert out["cli_gate"] == 3                           # the gate read the new metric's row
