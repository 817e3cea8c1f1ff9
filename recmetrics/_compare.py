r"""Many models compared at once: the engine behind :func:`recmetrics.compare`.

Every model is evaluated once, on the users every model scored, against one
truth; the id columns of all models and of the truth are coded together once,
and each model's rows reach :class:`~recmetrics._pipeline.Prepared` as integer
codes, so that comparing n models costs about n evaluations plus the tests.
Each pair of models (every pair, or each model against a baseline) then gets
one row per metric with paired tests, and each p-value column is adjusted for
multiple testing over all the rows of the table.

:func:`results_table_from_comparison` turns such a table into a
:class:`~recmetrics.ResultsTable` (Markdown, LaTeX, HTML).
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _pipeline, _kernels, _progress
from ._pipeline import GAUC_NOTE, RANKING_NOTE, Prepared
from ._metrics import LOWER_IS_BETTER, PROBABILITY_METRICS
from ._ids import codes, locate
from ._options import Options
from ._validation import (ADJUSTMENTS, Adjustment, RecmetricsWarning, as_frame,
                          caller_stacklevel, check_option, check_unique_keys, numeric_column,
                          plain)
from .stats import (DeLongResult, adjust_p_values, delong_from_placements, delong_test,
                    paired_bootstrap)
from .tables import ResultsTable, results_table

__all__ = ["results_table_from_comparison", "P_COLUMNS"]

#: The p-value columns of a comparison, each followed in the table by ``<column>_adjusted``.
P_COLUMNS = ("p_ttest", "p_randomization", "p_bootstrap", "p_delong")

#: Columns of :func:`recmetrics.compare`'s table, in order.
COLUMNS = ("model_a", "model_b", "metric", "k", "value_a", "value_b", "difference",
           "ci_low", "ci_high",
           *(c for p in P_COLUMNS for c in (p, f"{p}_adjusted")),
           "n_users", "n_users_a", "n_users_b", "conventions", "note", "verdict")


@dataclass(frozen=True)
class Model:
    """One model to compare: its name in the table, how messages name the argument, its rows
    and the column read as its score (or rank)."""

    name: str
    arg: str
    frame: object
    score: str
    rank: str | None


def models_of(pred_a, pred_b, truth, *, score, rank) -> list[Model]:
    """The models of a call: ``(pred_a, pred_b)`` named A and B, or a mapping / list of frames."""
    if pred_b is not None:
        if isinstance(pred_a, Mapping) or isinstance(pred_a, (list, tuple)):
            raise ValueError("pred_a is a collection of models, so pred_b must be omitted; pass "
                             "truth by keyword: compare({'A': a, 'B': b}, truth=truth)")
        named, args = {"A": pred_a, "B": pred_b}, {"A": "pred_a", "B": "pred_b"}
    elif isinstance(pred_a, Mapping):
        named = dict(pred_a)
        for name in named:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"pred_a names a model {name!r}; name each model with a "
                                 "non-empty string, e.g. {'popularity': pred_pop, 'mf': pred_mf}")
        args = {name: f"model {name!r}" for name in named}
    elif isinstance(pred_a, (list, tuple)):
        named = {f"model_{i}": frame for i, frame in enumerate(pred_a, start=1)}
        args = {name: f"model {name!r}" for name in named}
    else:
        raise ValueError("compare needs two models or more: pass pred_a and pred_b, or a mapping "
                         "of names to score frames as pred_a, e.g. compare({'A': a, 'B': b, "
                         "'C': c}, truth=truth)")
    if len(named) < 2:
        raise ValueError(f"pred_a holds {len(named)} model(s); compare needs at least two")
    scores, ranks = _per_model("score", score, list(named)), _per_model("rank", rank, list(named))
    return [Model(name, args[name], frame, s, r)
            for (name, frame), s, r in zip(named.items(), scores, ranks)]


def _per_model(option: str, value, names: list[str]) -> list:
    """One column name for every model, one per model (a sequence in model order, or a mapping
    from model name), as a list in model order."""
    if value is None or isinstance(value, str):
        return [value] * len(names)
    if isinstance(value, Mapping) and set(value) == set(names) \
            and all(isinstance(v, str) for v in value.values()):
        return [value[name] for name in names]
    if isinstance(value, (tuple, list)) and len(value) == len(names) \
            and all(isinstance(v, str) for v in value):
        return list(value)
    pair = "model A's, model B's" if names == ["A", "B"] else f"one per model: {len(names)}"
    raise ValueError(f"{option}={value!r} must be a column name, or a sequence of names "
                     f"({pair}), or a mapping from each model's name to its column")


def pairs_of(names: list[str], baseline: str | None) -> list[tuple[int, int]]:
    """(A, B) positions of the pairs compared: every pair in model order, or baseline vs each."""
    if baseline is None:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise ValueError(f"baseline={baseline!r} is not one of the models "
                         f"({', '.join(map(repr, names))}); pass one of their names, or None to "
                         "compare every pair")
    b = names.index(baseline)
    return [(b, j) for j in range(len(names)) if j != b]


def shared_truth(models: list[Model], *, user, item, label) -> pd.DataFrame:
    """Every model's labels as one truth frame; refuse when two models disagree on a pair."""
    named = [(m.arg, m.frame) for m in models]
    for m in models:
        as_frame(m.arg, m.frame, {"user": user, "item": item, "label": label})
    grades = [numeric_column(m.arg, m.frame, label, grades=True) for m in models]
    users, user_ids = codes(user, *named)
    items, item_ids = codes(item, *named, ordered=False)
    keys = [u.astype(np.int64) * len(item_ids) + i for u, i in zip(users, items)]
    for m, k in zip(models, keys):
        check_unique_keys(m.arg, k, m.frame, user, item)
    union_keys, union_grades, owner = keys[0], grades[0], np.zeros(keys[0].size, dtype=np.intp)
    for j in range(1, len(models)):
        where = pd.Index(union_keys).get_indexer(keys[j])
        both = np.flatnonzero(where >= 0)
        differ = both[grades[j][both] != union_grades[where[both]]]
        if differ.size:
            first = differ[0]
            i = int(owner[where[first]])
            a, b = models[i], models[j]
            raise ValueError(
                f"{a.arg} and {b.arg} give different labels to {differ.size:,} (user, item) "
                f"pair(s) (first: {user}={plain(user_ids[users[j][first]])!r}, "
                f"{item}={plain(item_ids[items[j][first]])!r}: "
                f"{union_grades[where[first]]:g} in {a.name}, {grades[j][first]:g} in {b.name}), "
                "so the models would be judged against different truths; put the labels in one "
                "truth table and pass it as truth= (--truth FILE on the command line)")
        new = where < 0
        union_keys = np.r_[union_keys, keys[j][new]]
        union_grades = np.r_[union_grades, grades[j][new]]
        owner = np.r_[owner, np.full(int(new.sum()), j, dtype=np.intp)]
    width = len(item_ids)
    return pd.DataFrame({user: user_ids[union_keys // width], item: item_ids[union_keys % width],
                         label: union_grades})


@dataclass(frozen=True)
class Evaluated:
    """One model evaluated on the shared users: its table, per-user values over all user codes
    (NaN where undefined or absent), its GAUC weights, and its rows for DeLong's test."""

    table: pd.DataFrame
    order: np.ndarray                 # user codes in the order of the model's own users
    columns: dict[str, np.ndarray]    # per-user values indexed by user code
    gauc_weights: np.ndarray | None   # indexed by user code
    scored: tuple                     # (row keys, scores, truth keys, truth grades, key space)
    cache: dict = field(default_factory=dict)

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The model's scored rows for DeLong's test, made when a pair first needs them: (user,
        item) keys ascending, their scores (minus the rank) and whether each is relevant."""
        if "rows" not in self.cache:
            keys, scores, truth_keys, truth_grades, space = self.scored
            order = np.argsort(keys, kind="stable")
            keys, scores = keys[order], scores[order]
            where = locate(keys, truth_keys, space)
            grades = np.zeros(keys.size)
            grades[where >= 0] = truth_grades[where[where >= 0]]
            self.cache["rows"] = keys, scores, grades > 0
        return self.cache["rows"]

    def placements(self) -> tuple[np.ndarray, np.ndarray]:
        """DeLong's placements of all the model's rows, computed once for every pair."""
        if "placements" not in self.cache:
            _, scores, positive = self.rows()
            self.cache["placements"] = _kernels.placements(scores[positive], scores[~positive])
        return self.cache["placements"]


def _evaluate(m: Model, frame: pd.DataFrame, truth: pd.DataFrame, truth_keys: np.ndarray,
              n_user_ids: int, width: int, user_ids, item_ids, o: Options, *, user, item,
              label) -> Evaluated:
    """Evaluate one model whose id columns hold joint integer codes (and truth's too)."""
    prep = Prepared(frame, truth, user=user, item=item, score=m.score, label=label, ties=o.ties,
                    rank=m.rank, min_grade=o.min_grade, judged_only=o.judged_only,
                    item_names=item_ids)
    prep_users = order = np.asarray(prep.users, dtype=np.intp)
    # messages name ids as the user wrote them, not as codes
    prep.users = user_ids[order]
    u = prep.unmatched
    u.lacking = [user_ids[c] for c in u.lacking]
    u.scored_users = [user_ids[c] for c in u.scored_users]
    u.missing_rows = [(user_ids[a], item_ids[b]) for a, b in u.missing_rows]
    u.scored_rows = [(user_ids[a], item_ids[b]) for a, b in u.scored_rows]
    evaluated = _pipeline.evaluate_prepared(prep, o)
    columns = {}
    for name, values in evaluated.users.columns.items():
        full = np.full(n_user_ids, np.nan)
        full[order] = values
        columns[name] = full
    weights = None
    if "gauc" in o.metrics:
        pos = np.bincount(prep.lists[prep.grades > 0], minlength=prep.n_users)
        neg = prep.ranked.n_rows - pos  # the weights need counts, not a second AUC pass
        weights = np.zeros(n_user_ids)
        weights[order] = _kernels.gauc_weights(pos, neg, o.gauc_weight)
    keys = frame[user].to_numpy(np.int64) * width + frame[item].to_numpy()
    scores = frame[m.score].to_numpy(np.float64) if m.rank is None \
        else -frame[m.rank].to_numpy(np.float64)
    scored = (keys, scores, truth_keys, truth[label].to_numpy(np.float64), n_user_ids * width)
    return Evaluated(evaluated.table, np.asarray(prep_users, dtype=np.intp), columns, weights,
                     scored)


@dataclass(frozen=True)
class Shared:
    """Every model evaluated on the users all of them scored (step 1 of a comparison)."""

    evaluated: list[Evaluated]
    n_scored: np.ndarray               # users each model scored, before restricting
    n_shared: int                      # users every model scored
    defined: dict[str, np.ndarray]     # per-user column -> defined under every model (by code)
    gauc_weights: np.ndarray | None    # the mean of the models' GAUC weights (by code)

    @classmethod
    def of(cls, evaluated: list[Evaluated], o: Options, n_scored: np.ndarray, n_shared: int, *,
           n_users: int) -> Shared:
        """The models' evaluations on their shared users (``n_users`` codes): where every
        model's per-user value is defined, and with GAUC each user's mean weight."""
        defined = {name: np.logical_and.reduce([~np.isnan(e.columns[name]) for e in evaluated])
                   for name in evaluated[0].columns}
        gauc_w = None
        if "gauc" in o.metrics:  # each user weighs the mean of the models' weights
            gauc_w = np.zeros(n_users)
            for e in evaluated:
                if e.gauc_weights is not None:  # set whenever gauc is asked for
                    gauc_w += e.gauc_weights / len(evaluated)
        return cls(evaluated, n_scored, n_shared, defined, gauc_w)


def compare_models(models: list[Model], truth, o: Options, *, user: str, item: str, label: str,
                   baseline: str | None, n_resamples: int, seed, alpha: float,
                   correction: Adjustment) -> pd.DataFrame:
    """The comparison table of :func:`recmetrics.compare` (options already checked):
    :func:`evaluate_models`, then :func:`pairwise_table`."""
    correction = check_option("correction", correction, ADJUSTMENTS)
    names = [m.name for m in models]
    pairs = pairs_of(names, baseline)
    shared = evaluate_models(models, truth, o, user=user, item=item, label=label)
    table = pairwise_table(shared, names, pairs, o, n_resamples=n_resamples, seed=seed,
                           alpha=alpha, correction=correction)
    table.attrs["baseline"] = baseline
    return table


def evaluate_models(models: list[Model], truth, o: Options, *, user: str, item: str,
                    label: str) -> Shared:
    """Code the ids of every model and of the truth once, then evaluate each model once."""
    if truth is None:
        truth = shared_truth(models, user=user, item=item, label=label)
    for m in models:
        as_frame(m.arg, m.frame, {"user": user, "item": item,
                                  **({"score": m.score} if m.rank is None else {"rank": m.rank}),
                                  **({"label": label} if label in getattr(m.frame, "columns", ()) else {})})
    as_frame("truth", truth, {"user": user, "item": item, "label": label})
    # one id form for every frame, coded once: each model is then evaluated on integer codes
    named = [(m.arg, m.frame) for m in models] + [("truth", truth)]
    user_codes, user_ids = codes(user, *named)
    item_codes, item_ids = codes(item, *named, ordered=False)
    n_ids, width = len(user_ids), len(item_ids)
    scored = np.zeros((len(models), n_ids), dtype=bool)
    for i in range(len(models)):
        scored[i, user_codes[i]] = True
    shared: np.ndarray = np.asarray(scored.all(axis=0))
    n_scored = scored.sum(axis=1).astype(int)
    n_shared = int(shared.sum())
    check_shared(models, n_scored, n_shared)
    for i, m in enumerate(models):  # checked on the frames as given: messages name their rows
        check_unique_keys(m.arg, user_codes[i].astype(np.int64) * width + item_codes[i], m.frame,
                          user, item)
    truth_grades = numeric_column("truth", truth, label, grades=True)
    check_unique_keys("truth", user_codes[-1].astype(np.int64) * width + item_codes[-1], truth,
                      user, item)
    in_truth = shared[user_codes[-1]]
    truth_codes = pd.DataFrame({user: user_codes[-1][in_truth], item: item_codes[-1][in_truth],
                                label: truth_grades[in_truth]})
    truth_keys = truth_codes[user].to_numpy(np.int64) * width + truth_codes[item].to_numpy()
    evaluated = []
    done = _progress.counter("evaluating each model", len(models), "model")
    for i, m in enumerate(models):
        column = m.score if m.rank is None else m.rank
        values = numeric_column(m.arg, m.frame, column)
        keep = shared[user_codes[i]]
        frame = pd.DataFrame({user: user_codes[i][keep], item: item_codes[i][keep],
                              column: values[keep]})
        evaluated.append(_evaluate(m, frame, truth_codes, truth_keys, n_ids, width, user_ids,
                                   item_ids, o, user=user, item=item, label=label))
        done(1)
    return Shared.of(evaluated, o, n_scored, n_shared, n_users=n_ids)


def check_shared(models: list[Model], n_scored: np.ndarray, n_shared: int) -> None:
    """Refuse models that share no user; warn when some users are left out of the comparison."""
    names = [m.name for m in models]
    two = len(models) == 2
    if n_shared == 0:
        counts = (f"{n_scored[0]:,} and {n_scored[1]:,} users" if two else
                  ", ".join(f"{m.name}: {n:,}" for m, n in zip(models, n_scored)) + " users")
        raise ValueError(f"{' and '.join(m.arg for m in models) if two else 'the models'} share "
                         f"no user ({counts}), so there is nothing to compare; check that all "
                         "hold the same users' ids, written the same way")
    if n_shared < n_scored.max():
        said = (f"model A scored {n_scored[0]:,} users and model B {n_scored[1]:,}; both are "
                f"compared on the {n_shared:,} users both scored" if two and names == ["A", "B"]
                else "the models scored " + ", ".join(f"{m.name}: {n:,}"
                                                      for m, n in zip(models, n_scored))
                + f" users; all are compared on the {n_shared:,} users every model scored")
        warnings.warn(said, RecmetricsWarning, stacklevel=caller_stacklevel())


def pairwise_table(shared: Shared, names: list[str], pairs: list[tuple[int, int]], o: Options,
                   *, n_resamples: int, seed, alpha: float, correction: Adjustment,
                   delong_of=None) -> pd.DataFrame:
    """One row per pair and metric: values, B - A, the paired tests and their corrections.

    ``delong_of``, if given, gives DeLong's (result or None, note) of the pair of model positions
    (i, j) in place of the test on the rows of the Evaluated models (the Dask and Spark
    engines compute it from partitions)."""
    from scipy import stats as _stats

    evaluated, n_scored, n_shared = shared.evaluated, shared.n_scored, shared.n_shared
    defined, gauc_w = shared.defined, shared.gauc_weights
    rng = np.random.default_rng(seed)
    boot_rng = rng.spawn(1)[0]  # its own stream: the randomization draws stay those of old
    rows = []
    done = _progress.counter("paired tests of each pair of models", len(pairs), "pair")
    for i, j in pairs:
        ea, eb = evaluated[i], evaluated[j]
        delong = None if "auc" not in o.metrics else _delong(ea, eb) if delong_of is None \
            else delong_of(i, j)
        for a, b in zip(ea.table.itertuples(index=False), eb.table.itertuples(index=False)):
            row = _row(a, b, ea, eb, defined, gauc_w, delong, n_shared, len(names), rng,
                       boot_rng, n_resamples, alpha, _stats)
            rows.append({"model_a": names[i], "model_b": names[j], **row,
                         "n_users_a": int(n_scored[i]), "n_users_b": int(n_scored[j]),
                         "conventions": a.conventions})
        done(1)
    result = pd.DataFrame(rows)
    for p in P_COLUMNS:
        result[f"{p}_adjusted"] = adjust_p_values(result[p].to_numpy(dtype=np.float64),
                                                  method=correction)
    result["k"] = result["k"].astype("Int64")
    result["verdict"] = [_verdict(r.metric, r.difference, r.p_randomization_adjusted,
                                  r.p_delong_adjusted, alpha)
                         for r in result.itertuples(index=False)]
    result = result[list(COLUMNS)]
    result.attrs["conventions"] = evaluated[0].table.attrs["conventions"]
    result.attrs["alpha"] = alpha
    result.attrs["confidence"] = 1 - alpha
    result.attrs["correction"] = correction
    result.attrs["models"] = names
    return result


def _delong(ea: Evaluated, eb: Evaluated) -> tuple[DeLongResult | None, str]:
    """DeLong's test on the rows both models scored (of the shared users), and a note."""
    keys_a, scores_a, _ = ea.rows()
    keys_b, scores_b, positive_b = eb.rows()
    if np.array_equal(keys_a, keys_b):  # the same rows (the usual case): placements once each
        if positive_b.all() or not positive_b.any():
            return None, ""  # AUC undefined: the row's note says so
        return delong_from_placements(ea.placements(), eb.placements()), ""
    where = pd.Index(keys_a).get_indexer(keys_b)
    common = np.flatnonzero(where >= 0)
    if common.size == 0:
        return None, "no (user, item) row is scored by both models, so DeLong's test was not run"
    y = positive_b[common]
    if y.all() or not y.any():
        return None, ""  # AUC undefined: the row's note says so
    result = delong_test(y.astype(np.int8), scores_a[where[common]], scores_b[common])
    note = ""
    if common.size < max(keys_a.size, keys_b.size):
        note = (f"DeLong's test on the {common.size:,} (user, item) rows both models scored "
                f"(of {keys_a.size:,} and {keys_b.size:,})")
    return result, note


def _row(a, b, ea: Evaluated, eb: Evaluated, defined, gauc_w, delong, n_shared: int,
         n_models: int, rng, boot_rng, n_resamples: int, alpha: float, _stats) -> dict:
    """One metric of one pair: values on the shared users, B - A with its 1 - alpha interval,
    and the paired p-values."""
    nan = float("nan")
    metric, cut = a.metric, a.k
    value_a, value_b, n, note = a.value, b.value, 0, ""
    p = dict.fromkeys(P_COLUMNS, nan)
    ci = (nan, nan)
    if metric == "auc":  # not a mean over users: DeLong's test on the rows
        n = n_shared
        result, delong_note = delong
        if result is not None:
            p["p_delong"] = result.p_value
            if np.isfinite(result.variance):  # DeLong's normal interval of B - A
                half = float(_stats.norm.ppf(1 - alpha / 2)) * np.sqrt(result.variance)
                ci = (result.difference - half, result.difference + half)
        note = "; ".join(x for x in (a.note or b.note, delong_note) if x)
    elif metric in PROBABILITY_METRICS:  # not a mean over users: no test
        n = n_shared
        note = a.note or b.note
    else:
        column = "auc" if metric == "gauc" else (metric if pd.isna(cut) else f"{metric}@{cut}")
        users = ea.order
        both = defined[column][users]
        va, vb = ea.columns[column][users][both], eb.columns[column][users][both]
        n = int(both.sum())
        w = gauc_w[users][both] if metric == "gauc" else np.ones(n)
        if n == 0:
            value_a = value_b = nan
            note = GAUC_NOTE + (" under both models" if n_models == 2 else " under every model") \
                if metric == "gauc" else RANKING_NOTE
        else:  # summed as evaluate sums (over the model's own users in its order, 0 where
            # left out), so a model's value is evaluate's to the last bit when all are shared
            total = w.sum()
            value_a, value_b = (float(np.where(
                defined[column][e.order],
                (gauc_w[e.order] if metric == "gauc" else 1.0)
                * np.nan_to_num(e.columns[column][e.order]), 0.0).sum() / total)
                for e in (ea, eb))
        d = vb - va
        if n >= 2 and np.any(d != 0):
            p["p_randomization"] = sign_flip_p_value(d, w, n_resamples, rng)
            p["p_bootstrap"], means = paired_bootstrap(va, vb, w, n_resamples, boot_rng)
            low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])  # the same draws
            ci = (float(low), float(high))
            if metric != "gauc":
                with warnings.catch_warnings():  # near-constant differences: p still valid
                    warnings.simplefilter("ignore", RuntimeWarning)
                    p["p_ttest"] = float(_stats.ttest_rel(vb, va).pvalue)
        elif n >= 1:  # identical per-user values: no evidence of a difference
            p["p_ttest"] = p["p_randomization"] = p["p_bootstrap"] = 1.0
            ci = (0.0, 0.0) if n >= 2 else ci
    return {"metric": metric, "k": cut, "value_a": value_a, "value_b": value_b,
            "difference": value_b - value_a, "ci_low": ci[0], "ci_high": ci[1], **p,
            "n_users": n, "note": note}


def sign_flip_p_value(d: np.ndarray, w: np.ndarray, n_resamples: int, rng) -> float:
    """Two-sided paired randomization test of a weighted mean difference (signs flipped)."""
    observed = abs(np.dot(w, d) / w.sum())
    wd = w * d
    extreme = 0
    chunk = max(1, 2_000_000 // d.size)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.integers(0, 2, size=(size, d.size), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ wd) / w.sum() >= observed - 1e-12))
    return (extreme + 1) / (n_resamples + 1)


def _verdict(metric: str, difference: float, p_randomization: float, p_delong: float,
             alpha: float) -> str:
    """Which model of the pair a row favours: the adjusted randomization p-value (DeLong's for
    global AUC) at level ``alpha``."""
    p = p_delong if metric == "auc" else p_randomization
    if np.isnan(p):
        return "not tested"
    if p < alpha and difference != 0:
        return "B better" if difference > 0 else "A better"
    return "no significant difference"


# --------------------------------------------------------------------------- export


def results_table_from_comparison(table: pd.DataFrame, *, digits: int = 4,
                                  lower_is_better=LOWER_IS_BETTER) -> ResultsTable:
    r"""The results table of a :func:`recmetrics.compare` table: models by metrics, wins marked.

    Each model's value is the one ``compare`` computed on the users every
    model scored (its ``value_a`` or ``value_b``: the same in every pair the
    model is in). A value carries the letter of every model it beats where
    the row's ``verdict`` says so (the adjusted randomization p-value, DeLong's
    for global AUC, below ``alpha`` after the table's correction), so the
    letters say exactly what the verdicts say. Rendered by
    :func:`recmetrics.results_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        A table returned by :func:`recmetrics.compare` (columns ``model_a``,
        ``model_b``, ``metric``, ``k``, ``value_a``, ``value_b``,
        ``difference``, ``verdict``).
    digits : int, default 4
        Decimals shown.
    lower_is_better : collection of str, default LOWER_IS_BETTER
        Metrics whose best value is the smallest.

    Returns
    -------
    ResultsTable
        With ``.to_markdown()``, ``.to_latex()`` and ``.to_html()``.

    Examples
    --------
    >>> a = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [1, 2] * 3,
    ...                   "score": [0.2, 0.9, 0.1, 0.8, 0.3, 0.4], "label": [1, 0] * 3})
    >>> b = a.assign(score=[0.9, 0.2, 0.8, 0.1, 0.4, 0.3])
    >>> from recmetrics import compare
    >>> t = compare({"old": a, "new": b}, k=1, metrics=["mrr"], n_resamples=100)
    >>> print(results_table_from_comparison(t, digits=2).to_markdown(), end="")
    | # | model | mrr |
    | :-- | :-- | --: |
    | a | old | 0.50 |
    | b | new | **1.00** |
    """
    needed = ("model_a", "model_b", "metric", "k", "value_a", "value_b", "difference", "verdict")
    lacking = [c for c in needed if c not in getattr(table, "columns", needed)]
    if lacking:
        raise ValueError(f"table has no column {', '.join(map(repr, lacking))}; pass the table "
                         "that recmetrics.compare returns")
    as_frame("table", table, {c: c for c in needed})
    sides = [table[["model_" + s, "metric", "k", "value_" + s]].set_axis(
        ["model", "metric", "k", "value"], axis=1) for s in ("a", "b")]
    values = pd.concat(sides, ignore_index=True).drop_duplicates(["model", "metric", "k"])
    order = {name: i for i, name in enumerate(table.attrs.get("models", []))}
    if order:  # the models in the order they were given, not the order of the pairs
        values = values.sort_values("model", key=lambda s: s.map(order), kind="stable")
    pairwise = table[["model_a", "model_b", "metric", "k", "difference"]].assign(
        significant=table["verdict"].isin(["A better", "B better"]).to_numpy())
    return results_table(values, pairwise, digits=digits, lower_is_better=lower_is_better)
