"""Files and frames as users have them (issue 18): ranks, positives-only truth, true/false labels,
other column names, a score column per model. Each expectation comes from the same data written
the usual way (score, label 0/1, default names), evaluated by rm.evaluate."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.cli import main

DATA = rm.DATA_DIR


@pytest.fixture(scope="module")
def sample():
    pred = pd.read_csv(DATA / "sample_model_a.csv")
    truth = pd.read_csv(DATA / "sample_truth.csv")
    users = pred.user.drop_duplicates().iloc[:400]
    pred, truth = pred[pred.user.isin(users)], truth[truth.user.isin(users)]
    # distinct scores within each user, so that a rank says all a score says
    pred = pred.assign(score=pred.score + np.arange(len(pred)) * 1e-9)
    ranks = pred.assign(rank=pred.groupby("user")["score"].rank(ascending=False, method="first")
                        .astype(int)).drop(columns="score")
    return pred, truth, ranks


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def same(a: pd.DataFrame, b: pd.DataFrame):
    np.testing.assert_allclose(a.value.to_numpy(), b.value.to_numpy(), rtol=0, atol=1e-12)
    assert a.metric.tolist() == b.metric.tolist()


def test_a_rank_column_gives_the_numbers_of_the_scores_it_orders(sample):
    pred, truth, ranks = sample
    metrics = ["gauc", "precision", "map", "mrr", "ndcg"]  # within users: ranks order them alike
    same(rm.evaluate(pred, truth, k=[1, 5], metrics=metrics),
         rm.evaluate(ranks, truth, k=[1, 5], metrics=metrics, rank="rank"))
    # gaps and any scale: only the order counts
    gappy = ranks.assign(rank=ranks["rank"] * 10 + 3)
    same(rm.evaluate(ranks, truth, k=5, metrics=metrics, rank="rank"),
         rm.evaluate(gappy, truth, k=5, metrics=metrics, rank="rank"))
    per_user = rm.evaluate_per_user(ranks, truth, k=5, metrics=["ndcg"], rank="rank")
    np.testing.assert_allclose(per_user["ndcg@5"], rm.evaluate_per_user(
        pred, truth, k=5, metrics=["ndcg"])["ndcg@5"], atol=1e-12)


def test_a_rank_read_as_a_score_is_flagged(sample):
    pred, truth, ranks = sample
    as_score = ranks.rename(columns={"rank": "score"})
    with pytest.warns(rm.RecmetricsWarning, match=r"global AUC is 0\.\d{4}, far below 0\.5 .* "
                                                  r"pass rank='score' to read it as a rank"):
        table = rm.evaluate(as_score, truth, metrics=["auc"])
    assert table.value.iloc[0] < 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rm.evaluate(as_score, truth, metrics=["auc"], rank="score")


def test_ranks_are_no_probabilities(sample):
    _, truth, ranks = sample
    with pytest.raises(ValueError, match=r"rank='rank' gives each row a rank, not a probability, "
                                         r"so logloss cannot be computed"):
        rm.evaluate(ranks, truth, metrics=["logloss"], rank="rank")


def test_the_command_line_reads_a_rank_column_with_other_column_names(sample, tmp_path, capsys):
    pred, truth, ranks = sample
    path = tmp_path / "ranks.csv"
    ranks.rename(columns={"user": "user_id", "item": "movie_id"}).to_csv(path, index=False)
    truth_path = tmp_path / "truth.csv"
    truth.rename(columns={"user": "user_id", "item": "movie_id"}).to_csv(truth_path, index=False)
    code, _, err = run(["evaluate", path, "--truth", truth_path], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.endswith("rename the column(s) or pass --user-col user_id --item-col movie_id "
                        "--rank-col rank\n")
    code, out, err = run(["evaluate", path, "--truth", truth_path, "--user-col", "user_id",
                          "--item-col", "movie_id", "--rank-col", "rank", "--k", "5",
                          "--metrics", "map", "ndcg", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    got = pd.DataFrame(json.loads(out)["metrics"])
    same(rm.evaluate(pred, truth, k=5, metrics=["map", "ndcg"]), got)


def test_a_truth_of_positives_only_means_every_row_is_relevant(sample, tmp_path, capsys):
    pred, truth, _ = sample
    positives = truth[truth.label > 0][["user", "item"]]
    expected = rm.evaluate(pred, truth, k=[3, 10])
    got = rm.evaluate(pred, positives, k=[3, 10])
    same(expected, got)
    assert got.attrs["notes"] == ["truth has no label column: every truth row is a relevant item "
                                  "(grade 1)"]
    assert expected.attrs["notes"] == []
    path = tmp_path / "held_out.csv"
    positives.to_csv(path, index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    code, out, err = run(["evaluate", tmp_path / "pred.csv", "--truth", path, "--k", "3", "10",
                          "--format", "json"], capsys)
    assert (code, err) == (0, "")
    document = json.loads(out)
    same(expected, pd.DataFrame(document["metrics"]))
    assert document["inputs"]["truth"]["labels"] == "none: every row is a relevant item (grade 1)"
    code, out, _ = run(["evaluate", tmp_path / "pred.csv", "--truth", path], capsys)
    assert code == 0 and "no label column: every row is a relevant item" in " ".join(out.split())


def test_a_label_asked_for_by_name_must_exist(sample):
    pred, truth, _ = sample
    with pytest.raises(ValueError, match=r"truth has no column 'clicked'"):
        rm.evaluate(pred, truth[["user", "item"]], label="clicked")


def test_true_false_labels_are_one_and_zero(sample, tmp_path, capsys):
    pred, truth, _ = sample
    expected = rm.evaluate(pred, truth, k=5)
    spelled = truth.assign(label=np.where(truth.label > 0, "True", "false"))
    same(expected, rm.evaluate(pred, spelled, k=5))
    truth.assign(label=truth.label > 0).to_csv(tmp_path / "truth.csv", index=False)  # True/False
    pred.to_csv(tmp_path / "pred.csv", index=False)
    code, out, err = run(["evaluate", tmp_path / "pred.csv", "--truth", tmp_path / "truth.csv",
                          "--k", "5", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    same(expected, pd.DataFrame(json.loads(out)["metrics"]))
    with pytest.raises(ValueError, match=r"must hold numbers, found 'yes'"):
        rm.evaluate(pred, truth.assign(label="yes"))


def test_compare_takes_a_score_column_per_model_and_returns_the_verdict(sample, tmp_path, capsys):
    pred, truth, _ = sample
    b = pd.read_csv(DATA / "sample_model_b.csv")
    b = b[b.user.isin(pred.user)]
    expected = rm.compare(pred, b, truth, k=5, metrics=["map", "ndcg"], n_resamples=200)
    got = rm.compare(pred, b.rename(columns={"score": "prob"}), truth, k=5,
                     metrics=["map", "ndcg"], n_resamples=200, score=("score", "prob"))
    pd.testing.assert_frame_equal(expected, got)
    for row in got.itertuples():
        p = row.p_randomization
        want = ("B better" if row.difference > 0 else "A better") if p < 0.05 else \
            "no significant difference"
        assert row.verdict == want
    pred.to_csv(tmp_path / "a.csv", index=False)
    b.rename(columns={"score": "prob"}).to_csv(tmp_path / "b.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    code, out, err = run(["compare", tmp_path / "a.csv", tmp_path / "b.csv", "--truth",
                          tmp_path / "t.csv", "--k", "5", "--metrics", "map", "ndcg",
                          "--n-resamples", "200", "--score-col", "score", "prob", "--format",
                          "json"], capsys)
    assert (code, err) == (0, "")
    rows = pd.DataFrame(json.loads(out)["metrics"])
    assert rows.verdict.tolist() == got.verdict.tolist()
    np.testing.assert_allclose(rows.difference, got.difference, atol=1e-12)


def test_the_per_user_table_keeps_the_users_column_name(sample):
    pred, truth, _ = sample
    renamed = rm.evaluate_per_user(pred.rename(columns={"user": "user_id"}),
                                   truth.rename(columns={"user": "user_id"}), user="user_id",
                                   k=5, metrics=["mrr"])
    assert renamed.columns[0] == "user_id"
    assert renamed.user_id.tolist() == rm.evaluate_per_user(pred, truth, k=5,
                                                            metrics=["mrr"]).user.tolist()
    clash = rm.evaluate_per_user(pred.rename(columns={"user": "mrr"}),
                                 truth.rename(columns={"user": "mrr"}), user="mrr", k=5,
                                 metrics=["mrr"])
    assert clash.columns[0] == "user"  # 'mrr' is a metric column: the id keeps 'user'


def test_compare_refuses_a_score_column_that_is_the_label_column(sample):
    """Bug: --score-col label judged the labels against themselves (AUC 1.0)."""
    pred, truth, _ = sample
    labelled = pred.merge(truth, on=["user", "item"], how="left").fillna({"label": 0})
    with pytest.raises(ValueError, match=r"pred_a: score='label' and label='label' name the same "
                                         r"column"):
        rm.compare(labelled, labelled, score="label")
