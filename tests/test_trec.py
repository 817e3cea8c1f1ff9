"""TREC run/qrels readers, and the per-list metrics against trec_eval (pytrec_eval) per query."""
import codecs
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

import recmetrics as rm

CUTS = (1, 5, 10, 20)
MEASURES = {"P", "recall", "Rprec", "bpref", "recip_rank", "ndcg_cut", "map_cut"}


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def random_collection(seed, n_queries=12, n_docs=60):
    """Run lines (distinct scores), qrels lines (grades -1..3, some documents unjudged)."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(n_queries):
        query = f"q{q:03d}"
        docs = [f"d{d:03d}" for d in rng.choice(200, n_docs, replace=False)]
        depth = int(rng.integers(1, n_docs))
        scores = rng.permutation(np.arange(depth)) / 7 + rng.random() * 0.01
        for rank, (doc, score) in enumerate(zip(docs[:depth], scores), 1):
            run.append(f"{query} Q0 {doc} {rank} {score:.6f} sys")
        judged = rng.choice(n_docs, int(rng.integers(0, n_docs)), replace=False)
        for d in judged:
            grade = int(rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]))
            if q == 0:  # one query with nothing relevant
                grade = min(grade, 0)
            qrels.append(f"{query} 0 {docs[d]} {grade}")
    return run, qrels


def trec_order(frame):
    """Each query's documents in trec_eval's order: score descending, then docid descending."""
    ranked = {}
    for query, rows in frame.groupby("user", sort=False):
        rows = rows.sort_values(["score", "item"], ascending=False)
        ranked[query] = rows["item"].tolist()
    return ranked


def compare_with_trec_eval(run, qrels):
    """Every query of the run that is judged: recmetrics' single-list functions equal pytrec_eval."""
    judged_queries = set(qrels["user"])
    truth = {q: dict(zip(rows["item"], rows["grade"].astype(int)))
             for q, rows in qrels.groupby("user")}
    scores = {q: dict(zip(rows["item"], rows["score"].astype(float)))
              for q, rows in run.groupby("user") if q in judged_queries}
    measures = {"P", "recall", "Rprec", "bpref", "recip_rank"} | \
        {f"{m}.{','.join(map(str, CUTS))}" for m in ("ndcg_cut", "map_cut", "P", "recall")}
    expected = pytrec_eval.RelevanceEvaluator(truth, measures).evaluate(scores)
    ranked = trec_order(run)
    checked = 0
    for query, want in expected.items():
        grades = truth[query]
        relevant = {d: g for d, g in grades.items() if g > 0}
        nonrel = {d for d, g in grades.items() if g == 0}
        items = ranked[query]
        z = dict(no_relevant="zero")
        for k in CUTS:
            assert rm.precision_at_k(items, relevant, k=k, **z) == pytest.approx(want[f"P_{k}"])
            assert rm.recall_at_k(items, relevant, k=k, **z) == pytest.approx(want[f"recall_{k}"])
            assert rm.ndcg(items, relevant, k=k, gain="linear", **z) == pytest.approx(
                want[f"ndcg_cut_{k}"])
            assert rm.average_precision(items, relevant, k=k, **z) == pytest.approx(
                want[f"map_cut_{k}"])
        assert rm.r_precision(items, relevant, **z) == pytest.approx(want["Rprec"])
        assert rm.bpref(items, relevant, nonrel, **z) == pytest.approx(want["bpref"])
        assert rm.bpref(items, grades_without_negatives(grades), **z) == pytest.approx(want["bpref"])
        assert rm.reciprocal_rank(items, relevant, **z) == pytest.approx(want["recip_rank"])
        checked += 1
    return checked


def grades_without_negatives(grades):
    return {d: g for d, g in grades.items() if g >= 0}


# --------------------------------------------------------------------------- readers


def test_read_trec_run_keeps_ids_as_text_and_reads_every_field(tmp_path):
    path = write(tmp_path / "run", ["001 Q0 007 1 2.5 mine", "001\tQ0\t7 2 1.0 mine", "",
                                    "2 Q0 007 1 -3e-1 mine"])
    run = rm.read_trec_run(path)
    assert run.columns.tolist() == ["user", "item", "score", "rank", "tag"]
    assert run["user"].tolist() == ["001", "001", "2"]
    assert run["item"].tolist() == ["007", "7", "007"]     # "007" and "7" stay two documents
    assert run["score"].tolist() == [2.5, 1.0, -0.3]
    assert run["rank"].tolist() == [1, 2, 1] and run["tag"].tolist() == ["mine"] * 3


def test_read_trec_qrels_keeps_negative_grades_and_clips_the_label(tmp_path):
    path = write(tmp_path / "qrels", ["q1 0 d1 2", "q1 0 d2 0", "q1 0 d3 -1", "q2 0 d1 1"])
    qrels = rm.read_trec_qrels(path, unjudged="keep")
    assert qrels.columns.tolist() == ["user", "item", "label", "grade"]
    assert qrels["grade"].tolist() == [2, 0, -1, 1]
    assert qrels["label"].tolist() == [2, 0, 0, 1]


def test_read_trec_qrels_drops_pooled_unjudged_lines_by_default(tmp_path):
    """Bug fixed with bpref in evaluate: a negative grade read as label 0 made the document
    judged non-relevant, which trec_eval's bpref does not count."""
    path = write(tmp_path / "qrels", ["q1 0 d1 2", "q1 0 d2 0", "q1 0 d3 -1", "q2 0 d1 1"])
    qrels = rm.read_trec_qrels(path)
    assert qrels["item"].tolist() == ["d1", "d2", "d1"] and qrels["grade"].tolist() == [2, 0, 1]
    run = rm.read_trec_run(write(tmp_path / "run", ["q1 Q0 d3 1 3 s", "q1 Q0 d1 2 2 s"]))
    per_user = rm.evaluate_per_user(run, qrels, metrics=["bpref"], ties="trec")
    assert per_user.set_index("user").loc["q1", "bpref"] == 1.0  # d3 unjudged: nothing above d1
    kept = rm.read_trec_qrels(path, unjudged="keep")
    per_user = rm.evaluate_per_user(run, kept, metrics=["bpref"], ties="trec")
    assert per_user.set_index("user").loc["q1", "bpref"] == 0.0  # d3 read as judged non-relevant
    with pytest.raises(ValueError, match="unjudged='skip' is not a known option"):
        rm.read_trec_qrels(path, unjudged="skip")


@pytest.mark.parametrize("reader, lines, message", [
    (rm.read_trec_run, ["q1 Q0 d1 1 0.5 sys", "q1 Q0 d2 2 0.4"],
     r"line 2 has 5 field\(s\), but a TREC run line has 6: query Q0 doc rank score tag"),
    (rm.read_trec_run, ["q1 Q0 d1 1 high sys"], r"line 1: the score field is 'high', not a finite"),
    (rm.read_trec_run, ["q1 Q0 d1 1 nan sys"], r"line 1: the score field is 'nan'"),
    (rm.read_trec_run, ["q1 Q0 d1 1.5 0.3 sys"], r"line 1: the rank field is '1.5', not a whole"),
    (rm.read_trec_run, ["q1 Q0 d1 1 0.5 sys", "", "q1 Q0 d1 2 0.4 sys"],
     r"line 3 repeats query 'q1', document 'd1' \(first on line 1\)"),
    (rm.read_trec_run, ["q1 Q0 d1 1 0.5 sys extra"], r"line 1 has 7 field\(s\), but a TREC run"),
    (rm.read_trec_run, ["q1 Q0 d1 1 0.5 sys", "q1 Q0 d2 2 0.4 sys two more"],
     r"line 2 has 8 field\(s\), but a TREC run line has 6"),
    (rm.read_trec_run, [""], r"holds no run line|is empty"),
    (rm.read_trec_qrels, ["q1 0 d1 1", "q1 0 d2"],
     r"line 2 has 3 field\(s\), but a TREC qrels line has 4: query iteration doc grade"),
    (rm.read_trec_qrels, ["q1 0 d1 0.5"], r"line 1: the grade field is '0.5', not a whole number"),
    (rm.read_trec_qrels, ["q1 0 d1 1", "q1 0 d1 0"], r"line 2 repeats query 'q1', document 'd1'"),
])
def test_malformed_lines_raise_value_error_with_the_line_number(tmp_path, reader, lines, message):
    path = write(tmp_path / "file", lines)
    with pytest.raises(ValueError, match=message):
        reader(path)


def test_frames_from_the_readers_go_straight_into_evaluate(tmp_path):
    run_lines, qrels_lines = random_collection(5)
    run = rm.read_trec_run(write(tmp_path / "run", run_lines))
    qrels = rm.read_trec_qrels(write(tmp_path / "qrels", qrels_lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)  # the query with nothing relevant
        table = rm.evaluate(run, qrels, k=5, metrics=["precision", "recall", "ndcg", "mrr"])
    # distinct scores: evaluate's order is trec_eval's, and each value is the mean of the
    # single-list function over the queries that have a relevant document
    ranked = trec_order(run)
    truth = {q: {d: g for d, g in zip(rows["item"], rows["grade"]) if g > 0}
             for q, rows in qrels.groupby("user")}
    queries = [q for q in ranked if truth.get(q)]
    for metric, fn, options in [("precision", rm.precision_at_k, dict(k=5)),
                                ("recall", rm.recall_at_k, dict(k=5)),
                                ("ndcg", rm.ndcg, dict(k=5))]:
        want = np.mean([fn(ranked[q], truth[q], **options) for q in queries])
        got = table[(table.metric == metric) & (table.k == 5)].value.iloc[0]
        assert got == pytest.approx(want)


# --------------------------------------------------------------------------- trec_eval


@pytest.mark.parametrize("seed", range(6))
def test_single_list_metrics_equal_trec_eval_per_query_on_random_collections(tmp_path, seed):
    run_lines, qrels_lines = random_collection(seed)
    run = rm.read_trec_run(write(tmp_path / "run", run_lines))
    qrels = rm.read_trec_qrels(write(tmp_path / "qrels", qrels_lines))
    assert compare_with_trec_eval(run, qrels) == qrels["user"].nunique()


def test_trec_eval_tie_order_reproduced_in_the_ranked_list(tmp_path):
    """Tied scores: trec_eval puts the larger docid first; so does trec_order, so they agree."""
    run = rm.read_trec_run(write(tmp_path / "run", [
        "q Q0 a 1 1.0 s", "q Q0 b 2 1.0 s", "q Q0 c 3 1.0 s", "q Q0 d 4 0.5 s"]))
    qrels = rm.read_trec_qrels(write(tmp_path / "qrels", ["q 0 a 1", "q 0 c 0", "q 0 d 1"]))
    assert trec_order(run)["q"] == ["c", "b", "a", "d"]
    assert compare_with_trec_eval(run, qrels) == 1


def _trec_eval_test_files(tmp_path):
    """trec_eval's own test collection, committed under tests/data/trec_eval (see its README)."""
    folder = os.path.join(os.path.dirname(__file__), "data", "trec_eval")
    return os.path.join(folder, "results.test"), os.path.join(folder, "qrels.test")


def test_trec_eval_own_test_collection_per_query(tmp_path):
    run_path, qrels_path = _trec_eval_test_files(tmp_path)
    run, qrels = rm.read_trec_run(run_path), rm.read_trec_qrels(qrels_path)
    assert compare_with_trec_eval(run, qrels) == len(set(run["user"]) & set(qrels["user"]))


# --------------------------------------------------------------------------- evaluate vs trec_eval
# evaluate(..., ties="trec") against pytrec_eval (trec_eval's C code) on random runs full of
# tied scores, with document ids whose text order differs from their number order.

EVAL_CUTS = (1, 3, 5, 10)


@st.composite
def tied_runs(draw):
    """run frame (user, item, score), qrels {query: {doc: grade}} with grades -1..3."""
    rows, qrels = [], {}
    for q in range(draw(st.integers(1, 4))):
        query = f"q{q}"
        n = draw(st.integers(1, 12))
        docs = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n, unique=True))
        for d in docs:
            rows.append((query, f"d{d}", float(draw(st.integers(0, 3)))))
        judged = draw(st.lists(st.integers(0, 30), max_size=15, unique=True))
        qrels[query] = {f"d{d}": draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
    return pd.DataFrame(rows, columns=["user", "item", "score"]), qrels


def _pytrec(run, qrels, measures, **options):
    scores = {q: dict(zip(r["item"], r["score"])) for q, r in run.groupby("user")}
    return pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(
        {q: s for q, s in scores.items() if q in qrels})


@settings(max_examples=120, deadline=None)
@given(tied_runs(), st.sampled_from([None, 2]), st.booleans())
def test_evaluate_with_trec_ties_equals_pytrec_eval(data, min_grade, judged_only):
    run, qrels = data
    truth = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()
                          if g >= 0], columns=["user", "item", "label"])  # negative: unjudged
    if truth.empty:
        return
    level = 1 if min_grade is None else min_grade
    cuts = ",".join(map(str, EVAL_CUTS))
    measures = {f"P.{cuts}", f"recall.{cuts}", f"map_cut.{cuts}", f"success.{cuts}", "Rprec",
                "bpref", "recip_rank"} | ({f"ndcg_cut.{cuts}"} if level == 1 else set())
    expected = _pytrec(run, qrels, measures, relevance_level=level,
                       judged_docs_only_flag=judged_only)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        per_user = rm.evaluate_per_user(
            run, truth, k=list(EVAL_CUTS), ties="trec", gain="linear", min_grade=min_grade,
            judged_only=judged_only, metrics=["precision", "recall", "map", "hit_rate", "mrr",
                                              "ndcg", "r_precision", "bpref"]).set_index("user")
    names = {"Rprec": "r_precision", "bpref": "bpref", "recip_rank": "mrr"}
    for k in EVAL_CUTS:
        names |= {f"P_{k}": f"precision@{k}", f"recall_{k}": f"recall@{k}",
                  f"map_cut_{k}": f"map@{k}", f"success_{k}": f"hit_rate@{k}",
                  f"ndcg_cut_{k}": f"ndcg@{k}"}
    for query, values in expected.items():
        relevant = sum(g >= level for g in qrels[query].values())
        if relevant == 0 or query not in per_user.index:
            continue  # trec_eval prints 0 there; evaluate leaves the user out (no_relevant)
        for measure, value in values.items():
            assert per_user.loc[query, names[measure]] == pytest.approx(value, abs=1e-12), \
                (query, measure)


# --------------------------------------------------------------------------- ids as text (issue 35)

def _seven(tmp_path, qrels_doc):
    run = write(tmp_path / "a.run", ["q1 Q0 7 1 2.0 s", "q1 Q0 8 2 1.0 s",
                                     "q2 Q0 3 1 0.5 s", "q2 Q0 4 2 0.2 s"])
    qrels = write(tmp_path / "a.qrels", [f"q1 0 {qrels_doc} 1", "q1 0 9 1", "q2 0 4 1",
                                         "q2 0 3 0"])
    return run, qrels


def test_python_trec_document_7_0_does_not_judge_document_7_issue_35(tmp_path):
    """Bug (issue 35): rm.read_trec_run + rm.read_trec_qrels + rm.evaluate joined qrels
    document 7.0 with the run's document 7 under the id policy (P@1 1.0), while trec_eval
    compares ids as text (P@1 0 for q1). The frames now carry that their ids are exact text
    and evaluate, evaluate_per_user and compare refuse such ids, as the command line does."""
    run, qrels = _seven(tmp_path, "7.0")
    judged = {"q1": {"7.0": 1, "9": 1}, "q2": {"4": 1, "3": 0}}
    ranked = {"q1": {"7": 2.0, "8": 1.0}, "q2": {"3": 0.5, "4": 0.2}}
    assert pytrec_eval.RelevanceEvaluator(judged, {"P.1"}).evaluate(ranked)["q1"]["P_1"] == 0.0
    run, qrels = rm.read_trec_run(run), rm.read_trec_qrels(qrels)
    other = run.assign(score=-run["score"])
    calls = [lambda: rm.evaluate(run, qrels, metrics=["precision"], k=1),
             lambda: rm.evaluate_per_user(run, qrels, metrics=["precision"], k=1),
             lambda: rm.compare(run, other, qrels, metrics=["precision"], k=1),
             lambda: rm.compare({"a": run, "b": other}, truth=qrels, metrics=["precision"], k=1),
             # the marker survives the usual frame operations
             lambda: rm.evaluate(run[run["score"] > 0].copy(), qrels.rename(columns={}),
                                 metrics=["precision"], k=1)]
    for call in calls:
        with pytest.raises(ValueError, match=r"item id '7\.0' and pred\w*(\['a'\])?: item id "
                                             r"'7' are two ids .* exact text"):
            call()
    # written alike, the number is trec_eval's
    run, qrels = _seven(tmp_path, "7")
    judged["q1"] = {"7": 1, "9": 1}
    expected = pytrec_eval.RelevanceEvaluator(judged, {"P.1"}).evaluate(ranked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)
        table = rm.evaluate(rm.read_trec_run(run), rm.read_trec_qrels(qrels),
                            metrics=["precision"], k=1, ties="trec")
    assert table["value"].iloc[0] == pytest.approx(np.mean([m["P_1"] for m in expected.values()]))


def test_exact_ids_meet_the_id_policy_of_other_frames_only_where_it_is_the_same_text(tmp_path):
    """A CSV-read or pandas truth (id policy: 7.0 is 7) with a TREC run: the number 7.0 meets
    the TREC id "7" (one id under both readings), the TREC id "7.0" does not meet 7 silently."""
    run = rm.read_trec_run(write(tmp_path / "a.run", ["q1 Q0 7 1 2.0 s", "q1 Q0 8 2 1.0 s"]))
    truth = pd.DataFrame({"user": ["q1", "q1"], "item": [7.0, 9.0], "label": [1, 1]})
    assert rm.evaluate(run, truth, metrics=["precision"], k=1)["value"].iloc[0] == 1.0
    run = rm.read_trec_run(write(tmp_path / "b.run", ["q1 Q0 7.0 1 2.0 s", "q1 Q0 8 2 1.0 s"]))
    with pytest.raises(ValueError, match=r"pred: item id '7\.0' .* exact text"):
        rm.evaluate(run, truth, metrics=["precision"], k=1)
    # within one file: "07"... stay two ids (text), "7" and "7.00" are refused
    run = rm.read_trec_run(write(tmp_path / "c.run", ["q1 Q0 7 1 2.0 s", "q1 Q0 7.00 2 1.0 s"]))
    with pytest.raises(ValueError, match=r"item id '7\.00' and pred: item id '7'"):
        rm.evaluate(run, truth, metrics=["precision"], k=1)


COMPRESSED = {"gz": "gzip", "bz2": "bz2", "xz": "xz", "zst": "zstd", "zip": "zip"}


def _compress(path, suffix):
    """``path`` compressed by the real tools' libraries into ``path.suffix``."""
    import bz2
    import gzip
    import lzma
    import zipfile

    data, target = path.read_bytes(), path.with_name(path.name + "." + suffix)
    if suffix == "gz":
        target.write_bytes(gzip.compress(data))
    elif suffix == "bz2":
        target.write_bytes(bz2.compress(data))
    elif suffix == "xz":
        target.write_bytes(lzma.compress(data))
    elif suffix == "zst":
        import pyarrow as pa

        with pa.CompressedOutputStream(str(target), "zstd") as out:
            out.write(data)
    else:
        with zipfile.ZipFile(target, "w") as archive:
            archive.writestr(path.name, data)
    return target


@pytest.mark.parametrize("suffix", sorted(COMPRESSED))
def test_compressed_trec_files_are_read_as_csv_files_are_issue_35(suffix, tmp_path):
    """Bug (issue 35): run.gz, qrels.bz2, ... were refused (unknown file type) although the CSV
    path reads every compression of the input table; now rm.read_trec_* and the command line
    read them through the same table, with the numbers of the plain files."""
    from recmetrics.io import INPUT_FORMATS

    assert f".run.{suffix}" in INPUT_FORMATS["trec"] and f".csv.{suffix}" in INPUT_FORMATS["csv"]
    run_lines, qrels_lines = random_collection(3, n_queries=4, n_docs=12)
    run, qrels = write(tmp_path / "x.run", run_lines), write(tmp_path / "x.qrels", qrels_lines)
    packed_run, packed_qrels = _compress(run, suffix), _compress(qrels, suffix)
    pd.testing.assert_frame_equal(rm.read_trec_run(packed_run), rm.read_trec_run(run))
    pd.testing.assert_frame_equal(rm.read_trec_qrels(packed_qrels), rm.read_trec_qrels(qrels))
    import subprocess
    import sys

    def cli(*files):
        done = subprocess.run([sys.executable, "-m", "recmetrics", "evaluate", str(files[0]),
                               "--truth", str(files[1]), "--ties", "trec", "--metrics", "ndcg",
                               "precision", "--format", "csv", "-q"],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert cli(packed_run, packed_qrels) == cli(run, qrels)
    # a damaged archive is one clear refusal naming the file
    packed_run.write_bytes(packed_run.read_bytes()[:20])
    with pytest.raises(ValueError, match=rf"{packed_run}"):
        rm.read_trec_run(packed_run)


def test_trec_files_take_the_encoding_csv_files_take_issue_35(tmp_path, capsys):
    """Bug (issue 35, an option one path knew and another did not): --encoding latin-1 was
    applied to CSV files but silently not to TREC files, which were then refused as "not
    UTF-8" with advice to re-save them; now the TREC readers take ``encoding=`` and the
    command line gives them --encoding, refusing (as for CSV) a UTF-8 file read as Latin-1."""
    from recmetrics import cli

    run = tmp_path / "a.run"
    run.write_bytes("q1 Q0 café 1 2.0 s\nq1 Q0 thé 2 1.0 s\n".encode("latin-1"))
    qrels = tmp_path / "a.qrels"
    qrels.write_bytes("q1 0 café 1\nq1 0 thé 0\n".encode("latin-1"))
    assert rm.read_trec_run(run, encoding="latin-1")["item"].tolist() == ["café", "thé"]
    assert rm.read_trec_qrels(qrels, encoding="latin-1")["item"].tolist() == ["café", "thé"]
    with pytest.raises(ValueError, match=r"a\.run line 1 is not UTF-8 text; pass encoding= "):
        rm.read_trec_run(run)
    argv = ["evaluate", str(run), "--truth", str(qrels), "--metrics", "precision", "--k", "1",
            "--format", "csv", "-q"]
    assert cli.main(argv + ["--encoding", "latin-1"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("precision,1,1.0,")
    assert cli.main(argv) == 2
    assert "pass --encoding the file's encoding" in capsys.readouterr().err
    run.write_text("q1 Q0 café 1 2.0 s\n", encoding="utf-8")   # UTF-8 asked to be read as Latin-1
    assert cli.main(argv + ["--pred-encoding", "latin-1"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{run} is UTF-8 text" in err


@pytest.mark.parametrize("reader", [rm.read_trec_run, rm.read_trec_qrels])
def test_python_trec_readers_refuse_a_utf8_file_read_as_latin1(tmp_path, reader):
    """Bug (one path knew, the other did not): the command line refused a UTF-8 TREC file read
    with --encoding latin-1, but rm.read_trec_run / read_trec_qrels with encoding="latin-1"
    read "café" as "cafÃ©", an id matching nothing in the other file. Now they refuse it;
    a real Latin-1 file, and a UTF-8 file whose byte-order mark says so, still read."""
    line = "q1 Q0 café 1 2.0 s\n" if reader is rm.read_trec_run else "q1 0 café 1\n"
    path = tmp_path / "utf8.txt"
    path.write_text(line, encoding="utf-8")
    with pytest.raises(ValueError, match=r"utf8\.txt is UTF-8 text \(it holds 'é' written as "
                                         r"UTF-8\), but encoding='latin-1' would turn 'é' into "
                                         r"'Ã©'.*leave encoding= out"):
        reader(path, encoding="latin-1")
    assert reader(path)["item"].tolist() == ["café"]
    path.write_bytes(line.encode("latin-1"))
    assert reader(path, encoding="latin-1")["item"].tolist() == ["café"]
    path.write_bytes(codecs.BOM_UTF8 + line.encode("utf-8"))     # the mark wins, as for CSV
    assert reader(path, encoding="latin-1")["item"].tolist() == ["café"]
