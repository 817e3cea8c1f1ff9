"""The metric registry (recmetrics._metrics): every list derived from its rows agrees with what
the package does, and the one-name-per-concept options (pr_denominator, rbp_p, max_grade)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import _metrics, cli
from recmetrics._options import CONVENTIONS

# --------------------------------------------------------------------------- the rows


def test_report_order_and_defaults_are_those_of_the_tables():
    """The order the tables report and the defaults, written out once here as users see them."""
    assert _metrics.METRICS == ("auc", "gauc", "precision", "recall", "hit_rate", "map", "mrr",
                                "ndcg", "mrr@k", "r_precision", "bpref", "rbp", "err", "logloss",
                                "ne", "brier", "ece")
    assert _metrics.DEFAULT_METRICS == ("auc", "gauc", "precision", "recall", "hit_rate", "map",
                                        "mrr", "ndcg")
    assert rm.BEYOND_METRICS == ("catalog_coverage", "distributional_coverage", "gini",
                                 "novelty", "diversity", "serendipity", "personalization", "arp",
                                 "aplt")
    table = rm.evaluate(pd.read_csv(rm.DATA_DIR / "sample_model_a.csv"),
                        pd.read_csv(rm.DATA_DIR / "sample_truth.csv"), k=[5, 10])
    assert list(dict.fromkeys(table.metric)) == list(_metrics.DEFAULT_METRICS)
    assert [(m, None if pd.isna(k) else int(k)) for m, k in zip(table.metric, table.k)] == [
        row for m in _metrics.DEFAULT_METRICS for row in _metrics.table_rows(m, [5, 10])]


def test_every_row_is_consistent():
    for m in _metrics.REGISTRY:
        assert (m.kernel is not None) == (m.family == "ranking"), m.name
        if m.function is not None:   # the public single-list function exists, under that name
            assert callable(getattr(rm, m.function)), m.name
        for name in m.conventions:
            assert name in {c.name for c in CONVENTIONS}, (m.name, name)
        assert not (m.graded and m.family != "ranking")
        assert m.meaning and m.meaning != m.what, m.name   # a sentence for the report


def test_the_report_describes_metrics_from_the_registry_only():
    """Bug fixed: the report template kept its own dict of metric descriptions, keyed by names
    that drifted ("coverage" for catalog_coverage; none for err, rbp, bpref...)."""
    import json
    from pathlib import Path

    template = Path(rm.__file__).parent / "templates" / "report.ipynb"
    source = "".join("".join(c["source"]) for c in json.loads(template.read_text())["cells"])
    assert "WHAT = MEANING" in source and '"gauc": ' not in source
    assert set(_metrics.MEANING) == {m.table_name for m in _metrics.REGISTRY}


def test_convention_scopes_are_the_registry_rows_that_read_them():
    for c in CONVENTIONS:
        assert c.scope == tuple(m.name for m in _metrics.REGISTRY if c.name in m.conventions)
    # the probability metrics read no ranking convention, the beyond metrics none of these
    ties = next(c for c in CONVENTIONS if c.name == "ties")
    assert set(ties.scope) == set(_metrics.PAIRWISE + _metrics.RANKING)


def test_the_command_line_offers_every_metric_and_its_gates():
    parser = cli.build_parser()
    evaluate = next(a for a in parser._subparsers._group_actions[0].choices["evaluate"]._actions
                    if a.dest == "metrics")
    assert set(evaluate.choices) == set(_metrics.METRIC)
    for m in _metrics.REGISTRY:
        name = m.table_name + ("@10" if m.cut == "per_k" else "")
        gate = cli._ceiling if m.name in _metrics.LOWER_IS_BETTER else cli._threshold
        assert gate(f"{name}=0.5") == (m.table_name, 10 if m.cut == "per_k" else None, 0.5)


# --------------------------------------------------------------------------- pr_denominator


def _qrels_and_run(seed: int):
    rng = np.random.default_rng(seed)
    rows, qrels, run = [], {}, {}
    for u in range(40):
        n = int(rng.integers(4, 20))
        items = rng.choice(200, size=n, replace=False)
        scores = rng.integers(0, 6, size=n).astype(float)   # heavy ties
        labels = np.zeros(n, dtype=int)
        labels[rng.choice(n, size=int(rng.integers(1, 4)), replace=False)] = 1   # R < k mostly
        user = f"q{u}"
        qrels[user] = {f"d{i}": int(g) for i, g in zip(items, labels)}
        run[user] = {f"d{i}": float(s) for i, s in zip(items, scores)}
        rows += [(user, f"d{i}", s, g) for i, s, g in zip(items, scores, labels)]
    return pd.DataFrame(rows, columns=["user", "item", "score", "label"]), qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pr_denominator_min_k_equals_trec_eval_relative_p(seed):
    """evaluate(..., pr_denominator="min_k") is trec_eval's relative_P: hits in the top k over
    min(k, R), on runs where most users have R < k (trec_eval's order of tied documents)."""
    frame, qrels, run = _qrels_and_run(seed)
    ks = [1, 5, 10, 15]
    table = rm.evaluate(frame, k=ks, metrics=["precision", "recall"], ties="trec",
                        pr_denominator="min_k")
    measures = {f"relative_P.{k}" for k in ks}
    result = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for k in ks:
        want = np.mean([result[q][f"relative_P_{k}"] for q in qrels])
        got = table[(table.metric == "precision") & (table.k == k)].value.iloc[0]
        assert got == pytest.approx(want, abs=1e-12)
        # relative_P counts the same hits over the same denominator for recall
        assert table[(table.metric == "recall") & (table.k == k)].value.iloc[0] == \
            pytest.approx(want, abs=1e-12)
    assert "pr_denominator=min_k" in table.conventions.iloc[0]


def test_pr_denominator_standard_is_the_default_and_is_not_shown():
    frame, _, _ = _qrels_and_run(3)
    default = rm.evaluate(frame, k=[5], metrics=["precision", "recall", "map"])
    standard = rm.evaluate(frame, k=[5], metrics=["precision", "recall", "map"],
                           pr_denominator="standard")
    pd.testing.assert_frame_equal(default, standard, check_exact=True)
    assert "pr_denominator" not in " ".join(default.conventions)
    # the AP denominator is another option, and min_k does not change AP
    both = rm.evaluate(frame, k=[5], metrics=["map"], pr_denominator="min_k")
    assert both.value.iloc[0] == default[default.metric == "map"].value.iloc[0]


def test_pr_denominator_reaches_every_path():
    frame, _, _ = _qrels_and_run(4)
    per_user = rm.evaluate_per_user(frame, k=[5], metrics=["precision"], ties="trec",
                                    pr_denominator="min_k")
    table = rm.evaluate(frame, k=[5], metrics=["precision"], ties="trec", pr_denominator="min_k")
    assert per_user["precision@5"].mean() == pytest.approx(table.value.iloc[0], abs=1e-15)
    other = frame.assign(score=-frame.score)
    compared = rm.compare(frame, other, k=[5], metrics=["precision"], ties="trec",
                          pr_denominator="min_k", n_resamples=100)
    assert compared.value_a.iloc[0] == table.value.iloc[0]
    with pytest.raises(ValueError, match=r"pr_denominator='R' is not"):
        rm.evaluate(frame, k=[5], pr_denominator="R")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=8, unique=True),
       st.sets(st.integers(0, 12), min_size=1, max_size=6), st.integers(1, 10))
def test_single_list_pr_denominator_and_its_old_spelling(ranked, relevant, k):
    hits = len(set(ranked[:k]) & relevant)
    assert rm.precision_at_k(ranked, relevant, k=k) == hits / k
    assert rm.precision_at_k(ranked, relevant, k=k, pr_denominator="min_k") == \
        hits / min(k, len(relevant))
    assert rm.recall_at_k(ranked, relevant, k=k, pr_denominator="min_k") == \
        hits / min(k, len(relevant))
    assert rm.recall_at_k(ranked, relevant, k=k) == hits / len(relevant)
    # the old spelling gives the same numbers
    assert rm.precision_at_k(ranked, relevant, k=k, denominator="min_k") == \
        rm.precision_at_k(ranked, relevant, k=k, pr_denominator="min_k")
    assert rm.recall_at_k(ranked, relevant, k=k, denominator="relevant") == \
        rm.recall_at_k(ranked, relevant, k=k, pr_denominator="standard")


def test_the_old_and_new_spellings_together_are_refused():
    with pytest.raises(ValueError, match=r"pass pr_denominator= only: denominator= is its old "
                                         r"spelling in precision_at_k"):
        rm.precision_at_k(["a"], {"a"}, k=1, pr_denominator="min_k", denominator="k")
    with pytest.raises(ValueError, match=r"pass rbp_p= only: p= is its old spelling"):
        rm.rbp(["a"], {"a"}, rbp_p=0.5, p=0.5)
    with pytest.raises(ValueError, match=r"denominator='relevant' is not"):
        rm.precision_at_k(["a"], {"a"}, k=1, denominator="relevant")


def test_rbp_p_is_the_name_everywhere_and_one_check():
    ranked, relevant = ["a", "b", "c"], {"a", "c"}
    assert rm.rbp(ranked, relevant, rbp_p=0.5) == rm.rbp(ranked, relevant, p=0.5)
    frame = pd.DataFrame({"user": 1, "item": ranked, "score": [3.0, 2.0, 1.0],
                          "label": [1, 0, 1]})
    table = rm.evaluate(frame, metrics=["rbp"], rbp_p=0.5)
    assert table.value.iloc[0] == rm.rbp(ranked, relevant, rbp_p=0.5).value
    message = r"must be a number strictly between 0 and 1 \(RBP's persistence"
    for call in (lambda: rm.rbp(ranked, relevant, rbp_p=1.5),
                 lambda: rm.rbp(ranked, relevant, p=1.5),
                 lambda: rm.evaluate(frame, metrics=["rbp"], rbp_p=1.5),
                 lambda: rm.mean_over_lists(rm.rbp, [ranked], [relevant], rbp_p=1.5)):
        with pytest.raises(ValueError, match=message):
            call()


def test_max_grade_has_one_check_and_one_message():
    frame = pd.DataFrame({"user": 1, "item": ["a", "b"], "score": [2.0, 1.0], "label": [3, 0]})
    message = r"a judged grade \(3\) is above max_grade=2; pass the top grade of the judging scale"
    for call in (lambda: rm.err(["a", "b"], {"a": 3}, max_grade=2),
                 lambda: rm.evaluate(frame, metrics=["err"], max_grade=2, ties="trec")):
        with pytest.raises(ValueError, match=message):
            call()
    for call in (lambda: rm.err(["a"], {"a": 1}, max_grade=0),
                 lambda: rm.evaluate(frame, metrics=["err"], max_grade=0, ties="trec")):
        with pytest.raises(ValueError, match=r"max_grade=0 must be a number > 0 and below 1024"):
            call()
