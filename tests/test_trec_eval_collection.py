"""trec_eval's own test collection (tests/data/trec_eval): its printed values, per topic and mean.

``out.test.aq`` is ``trec_eval -m all_trec -q qrels.test results.test`` and
``out.test.aql`` the same with graded judgements and ``-l2``. Both are
reproduced by :func:`recmetrics.evaluate` with ``ties="trec"`` (trec_eval's
order: score descending, then document id descending) and by the command line,
to the 4 decimals trec_eval prints.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm

DATA = Path(__file__).parent / "data" / "trec_eval"
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval prints 4 decimals: a printed value is within half a unit of the last place.
PRINTED = 0.5e-4 + 1e-12


def printed(name: str) -> dict[tuple[str, str], float]:
    """(measure, topic or 'all') -> value, from one of trec_eval's output files."""
    values = {}
    for line in (DATA / name).read_text().splitlines():
        measure, topic, value = line.split()
        try:
            values[(measure, topic)] = float(value)
        except ValueError:  # runid
            pass
    return values


def judgements(name: str) -> pd.DataFrame:
    """A qrels file as evaluate's truth: trec_eval reads a negative grade as pooled but not
    judged, neither relevant nor judged non-relevant, so those rows are left out."""
    qrels = rm.read_trec_qrels(DATA / name)   # unjudged="drop": the negative grades go
    assert (qrels["grade"] >= 0).all()
    return qrels


def our_values(per_user: pd.DataFrame, table: pd.DataFrame) -> dict[tuple[str, str], float]:
    """trec_eval's measure names -> recmetrics' values, per topic and 'all' (the mean)."""
    columns = {"Rprec": "r_precision", "bpref": "bpref", "recip_rank": "mrr", "rbp": "rbp"}
    for k in CUTS:
        columns |= {f"P_{k}": f"precision@{k}", f"recall_{k}": f"recall@{k}",
                    f"map_cut_{k}": f"map@{k}", f"ndcg_cut_{k}": f"ndcg@{k}"}
    for k in (1, 5, 10):
        columns[f"success_{k}"] = f"hit_rate@{k}"
    out = {}
    for topic, row in per_user.set_index("user").iterrows():
        for measure, column in columns.items():
            if column in row:
                out[(measure, topic)] = float(row[column])
        p, r = row["precision@500"], row["recall@500"]   # every topic retrieves 500 documents
        out[("set_F", topic)] = 2 * p * r / (p + r) if p + r else 0.0
    names = table["metric"] + np.where(table["k"].isna(), "",
                                       "@" + table["k"].astype("string").fillna(""))
    by_name = dict(zip(names, table["value"]))
    for measure, column in columns.items():
        if column in by_name:
            out[(measure, "all")] = float(by_name[column])
    per_topic = [v for (m, t), v in out.items() if m == "set_F" and t != "all"]
    if per_topic:
        out[("set_F", "all")] = float(np.mean(per_topic))
    return out


def check_against(expected: dict, ours: dict, measures: set[str]) -> int:
    checked = 0
    for (measure, topic), value in expected.items():
        if measure in measures:
            assert (measure, topic) in ours, (measure, topic)
            assert abs(ours[(measure, topic)] - value) <= PRINTED, (measure, topic,
                                                                     ours[(measure, topic)], value)
            checked += 1
    return checked


BINARY = {f"{m}_{k}" for m in ("P", "recall", "map_cut", "ndcg_cut") for k in CUTS} | \
    {"Rprec", "bpref", "recip_rank", "set_F", "success_1", "success_5", "success_10", "rbp"}
#: With -l2, trec_eval's ndcg keeps the grades below the level as gains, and RBP scales each
#: topic's grades by its own top grade; recmetrics' min_grade makes those grades non-relevant
#: everywhere, so only the measures of relevance as a yes/no are compared.
LEVELLED = BINARY - {f"ndcg_cut_{k}" for k in CUTS} - {"rbp"}


@pytest.fixture(scope="module")
def run():
    return rm.read_trec_run(DATA / "results.test")


def test_the_run_has_ties_that_trec_order_decides(run):
    """The collection exercises tie order: some topic holds documents of equal score."""
    assert run.duplicated(["user", "score"]).any()


@pytest.mark.parametrize("qrels_file, output, options, measures", [
    ("qrels.test", "out.test.aq", {}, BINARY),
    ("qrels.rel_level", "out.test.aql", {"min_grade": 2}, LEVELLED),
])
def test_evaluate_reproduces_trec_eval(run, qrels_file, output, options, measures):
    truth = judgements(qrels_file)
    common = dict(k=list(CUTS) + [1], ties="trec", gain="linear", rbp_p=0.9, **options,
                  metrics=["precision", "recall", "hit_rate", "map", "mrr", "ndcg",
                           "r_precision", "bpref", "rbp"])
    table = rm.evaluate(run, truth, **common)
    per_user = rm.evaluate_per_user(run, truth, **common)
    checked = check_against(printed(output), our_values(per_user, table), measures)
    assert checked == 4 * len(measures)


def test_trec_order_is_the_run_ranked_by_score_then_document_id_descending(run):
    """ties='trec' equals ranking each topic by (score, document id) descending, written as
    ranks (no ties left), the order trec_eval's own rank field holds in results.test."""
    truth = judgements("qrels.test")
    ordered = run.sort_values(["user", "score", "item"], ascending=False)
    ranks = ordered.assign(place=ordered.groupby("user").cumcount() + 1)
    assert (ranks["place"] == ranks["rank"]).all()  # results.test's ranks are trec_eval's order
    options = dict(k=[5, 100], gain="linear", metrics=["precision", "map", "ndcg", "mrr@k",
                                                       "r_precision", "bpref", "err", "rbp"])
    by_trec = rm.evaluate_per_user(run, truth, ties="trec", **options)
    by_rank = rm.evaluate_per_user(ranks, truth, rank="place", ties="optimistic", **options)
    pd.testing.assert_frame_equal(by_trec.drop(columns="rbp_residual"),
                                  by_rank.drop(columns="rbp_residual").iloc[::-1]
                                  .reset_index(drop=True))


@pytest.mark.parametrize("qrels_file, output, options, measures", [
    ("qrels.test", "out.test.aq", [], BINARY - {"set_F"}),
    ("qrels.rel_level", "out.test.aql", ["--min-grade", "2"], LEVELLED - {"set_F"}),
])
def test_command_line_reproduces_trec_eval_means(tmp_path, qrels_file, output, options, measures):
    """``recmetrics evaluate results.test --truth QRELS --format-in trec --ties trec``: the
    printed means (set_F, a mean of per-topic F, is no row of the table)."""
    out = tmp_path / "table.json"
    subprocess.run([sys.executable, "-m", "recmetrics", "evaluate", str(DATA / "results.test"),
                    "--truth", str(DATA / qrels_file), "--format-in", "trec", "--ties", "trec",
                    "--gain", "linear", "--rbp-p", "0.9", "-q", "-o", str(out),
                    "--k", *map(str, (1,) + CUTS), *options,
                    "--metrics", "precision", "recall", "hit_rate", "map", "mrr", "ndcg",
                    "r_precision", "bpref", "rbp"],
                   check=True, env={**os.environ, "PYTHONPATH": str(Path(rm.__file__).parents[1])})
    rows = json.loads(out.read_text())["metrics"]
    table = pd.DataFrame(rows)
    table["k"] = table["k"].astype("Int64")
    ours = our_values(pd.DataFrame({"user": [], "precision@500": [], "recall@500": []}), table)
    expected = {key: value for key, value in printed(output).items() if key[1] == "all"}
    assert check_against(expected, ours, measures) == len(measures)


def test_trec_files_by_name_and_negative_grades(tmp_path):
    """A run named .run reads its --truth as qrels too; a negative grade is pooled but
    unjudged: not relevant, and not judged non-relevant (bpref's N)."""
    run = tmp_path / "sys.run"
    run.write_text("q1 Q0 a 1 3.0 s\nq1 Q0 c 2 2.0 s\nq1 Q0 b 3 1.0 s\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a -1\nq1 0 b 0\nq1 0 c 1\n")
    out = tmp_path / "t.json"
    subprocess.run([sys.executable, "-m", "recmetrics", "evaluate", str(run), "--truth",
                    str(qrels), "--ties", "trec", "--metrics", "bpref", "precision", "--k", "3",
                    "-q", "-o", str(out)], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(rm.__file__).parents[1])})
    values = {(r["metric"], r["k"]): r["value"] for r in json.loads(out.read_text())["metrics"]}
    # a is unjudged, so no judged non-relevant item is above c: its term is 1 (it would be
    # 1 - min(1, 1) / min(2, 1) = 0 were a judged non-relevant)
    assert values[("bpref", None)] == 1.0
    assert values[("precision", 3)] == pytest.approx(1 / 3)
