r"""The evaluation engine behind :func:`recmetrics.evaluate`, shared by pandas and Dask.

Both :mod:`recmetrics.evaluation` (one pandas process) and
:mod:`recmetrics.distributed` (a Dask cluster) run the same four steps:

1. :class:`Prepared`: validated rows ranked per user, with judged grades;
2. :func:`per_user`: a :class:`PerUser` of every per-user value (the kernels
   of :mod:`._kernels`) and the users each mean counts;
3. :func:`summarize`: a :class:`Summary` of totals over users (sums of
   per-user values, users counted and skipped, GAUC numerator and
   denominator, probability sums, Poisson bootstrap sums);
4. :func:`assemble`: the tidy table (notes, conventions, means) from a Summary.

Every step takes the checked, frozen :class:`~recmetrics._options.Options`.

Summaries of disjoint sets of users add up (``+``), so the Dask engine runs
steps 1-3 on each partition of users and step 4 once on their sum. Global
AUC is the one number that is not a sum over users: its pair counts come with
the Summary in memory, and from score buckets on Dask.

The Poisson bootstrap
---------------------
Each user gets, in resample *b*, a weight :math:`w_{ub} \sim \text{Poisson}(1)`
drawn from a hash of (user id, seed, b) (:func:`poisson_weights`): a
resample's weighted sums are sums over users, computed wherever the users
are, and do not depend on how users are split into partitions or in which
order they come. Global AUC's weighted pair counts of every resample come
from one sort of the rows (:class:`~recmetrics._kernels.WeightedPairs`, blocks
of resamples in threads); they are whole numbers, exact in float64, so the
blocks, the threads and the score buckets of Dask and Spark change no bit.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np
import pandas as pd

from . import _kernels, _progress
from ._ids import codes, join, user_hash
from ._kernels import DEFAULT_EPS
from ._metrics import (DEFAULT_METRICS, ECE_BINS, GRADED, METRIC, METRICS, PAIRWISE,
                       PROBABILITY_METRICS, RANKING)
from ._options import Options
from ._validation import (RecmetricsWarning, as_frame, caller_stacklevel, check_max_grade,
                          check_probability_scores, check_unique_keys, numeric_column,
                          warn_unmatched)

#: Ways to resample users for confidence intervals.
BOOTSTRAPS: tuple[Literal["multinomial", "poisson"], ...] = ("multinomial", "poisson")


@dataclass
class Unmatched:
    """Truth's users and relevant rows that found no scored row, for the id-mismatch warning."""

    n_lacking: int = 0           # users with a relevant truth row and no scored row
    n_judged: int = 0            # users with a relevant truth row
    n_missing_rows: int = 0      # relevant truth rows never scored
    n_relevant_rows: int = 0     # relevant truth rows
    lacking: list = field(default_factory=list)        # examples of each
    scored_users: list = field(default_factory=list)
    missing_rows: list = field(default_factory=list)
    scored_rows: list = field(default_factory=list)

    def __add__(self, other: Unmatched) -> Unmatched:
        return Unmatched(self.n_lacking + other.n_lacking, self.n_judged + other.n_judged,
                         self.n_missing_rows + other.n_missing_rows,
                         self.n_relevant_rows + other.n_relevant_rows,
                         (self.lacking + other.lacking)[:3],
                         (self.scored_users + other.scored_users)[:3],
                         (self.missing_rows + other.missing_rows)[:3],
                         (self.scored_rows + other.scored_rows)[:3])

    def warn(self) -> None:
        """Warn when most of truth's users, or nearly all its relevant rows, went unscored."""
        if 2 * self.n_lacking > self.n_judged:
            warn_unmatched("users with a relevant item", self.n_lacking, self.n_judged,
                           self.lacking, self.scored_users, "users", share=0.5)
        else:
            warn_unmatched("relevant (user, item) rows", self.n_missing_rows, self.n_relevant_rows,
                           self.missing_rows, self.scored_rows, "rows", share=0.9, at_least=10)


class Prepared:
    """Validated input: rows ranked per user, judged relevant grades, and AUC pair counts.

    ``check=False`` skips the frame checks (columns present, at least one
    row), which the Dask engine makes once on the whole input: a partition
    may be empty. ``integral_ids`` imposes the id form of the user column
    (see :func:`codes`). With ``rank``, that column is read instead of
    ``score``: 1 is the top, lower is better (the score is minus the rank).

    ``ties="trec"`` orders tied scores by item id as text, descending
    (trec_eval's order). ``min_grade`` sets grades below it to 0 (not
    relevant, still judged). ``judged_only`` drops the scored rows missing
    from ``truth`` before ranking (with labels in ``pred`` every row is judged).
    ``item_names`` maps item ids that are codes (as :mod:`._compare` passes
    them) to the ids they stand for, which ``ties="trec"`` orders.
    ``keep_items`` keeps each ranked row's item code (``items``; 8 bytes a
    row, so only when the beyond-accuracy metrics need them).
    """

    def __init__(self, pred, truth, *, user, item, score, label, ties, check=True,
                 integral_ids: bool | None = None, rank: str | None = None,
                 keep_row_users: bool = False, min_grade: float | None = None,
                 judged_only: bool = False, item_names=None, keep_items: bool = False):
        columns = {"user": user, "item": item}
        columns.update({"rank": rank} if rank is not None else {"score": score})
        if truth is None:
            columns["label"] = label
        if check:
            as_frame("pred", pred, columns)
        scores = -numeric_column("pred", pred, rank) if rank is not None \
            else numeric_column("pred", pred, score)
        n = len(pred)
        self.unmatched = Unmatched()
        if truth is None:
            (users,), user_ids = codes(user, ("pred", pred), integral=integral_ids)
            (items,), item_ids = codes(item, ("pred", pred), ordered=False)
            keys = users.astype(np.int64) * (int(items.max(initial=0)) + 1) + items
            check_unique_keys("pred", keys, pred, user, item)
            grades = numeric_column("pred", pred, label, grades=True)
            if check and min_grade is None:
                warn_rating_scale("pred", label, grades)
            grades = _threshold(grades, min_grade)
            judged = np.ones(n, dtype=bool)
            self.top_grade = float(grades.max(initial=0.0))
            # judged non-relevant items (grade 0) of each user: bpref's N
            n_nonrelevant = np.bincount(users[grades == 0], minlength=len(user_ids))
            missing_users, missing_grades = np.zeros(0, dtype=np.intp), np.zeros(0)
            self.n_without_predictions = 0
            truth_rows = None
        else:
            if check:
                as_frame("truth", truth, {"user": user, "item": item, "label": label})
            truth_grades = numeric_column("truth", truth, label, grades=True)
            if check and min_grade is None:
                warn_rating_scale("truth", label, truth_grades)
            truth_grades = _threshold(truth_grades, min_grade)
            self.top_grade = float(truth_grades.max(initial=0.0))
            # int32 codes (half the memory of intp, where the join's arrays peak); each
            # user's rows, items and truth rows made intp again where they are kept
            (users, truth_users), user_ids = codes(user, ("pred", pred), ("truth", truth),
                                                   integral=integral_ids, compact=True)
            (items, truth_items), item_ids = codes(item, ("pred", pred), ("truth", truth),
                                                   ordered=False, compact=True)
            width = len(item_ids)
            # one sort joins the pairs and checks both sides for duplicates
            joined = join(users, items, truth_users, truth_items, n_users=len(user_ids),
                          n_items=width)
            if not joined.pred_distinct:
                check_unique_keys("pred", users.astype(np.int64) * width + items, pred, user, item)
            if not joined.truth_distinct:
                check_unique_keys("truth", truth_users.astype(np.int64) * width + truth_items,
                                  truth, user, item)
            where = joined.where
            n_truth = truth_users.size
            del joined
            scored = where >= 0
            if judged_only:  # condensed lists: the unjudged rows are gone before ranking
                if keep_row_users:
                    raise ValueError("judged_only=True with by= is not supported; evaluate "
                                     "without judged_only, or drop the unjudged rows first")
                users, items, scores, where = users[scored], items[scored], scores[scored], \
                    where[scored]
                scored = scored[scored]
                n = int(scored.size)
            judged = scored
            # one gather and one scatter each, no mask: position -1 (not in truth) reads the
            # appended grade 0 and writes the appended flag
            grades = np.append(truth_grades, 0.0)[where]
            found = np.zeros(n_truth + 1, dtype=bool)
            found[where] = True
            found = found[:-1]
            del where
            relevant = truth_grades > 0
            unscored = relevant & ~found
            judged_users = np.zeros(len(user_ids), dtype=bool)
            judged_users[truth_users[relevant]] = True
            judged_users = np.flatnonzero(judged_users)
            with_rows = np.zeros(len(user_ids), dtype=bool)
            with_rows[users] = True
            lacking = judged_users[~with_rows[judged_users]]
            self.n_without_predictions = int(lacking.size)
            missing_rows = np.flatnonzero(unscored)
            self.unmatched = Unmatched(
                int(lacking.size), int(judged_users.size), int(missing_rows.size),
                int(relevant.sum()), list(user_ids[lacking[:3]]), list(user_ids[users[:3]]),
                [(user_ids[truth_users[r]], item_ids[truth_items[r]]) for r in missing_rows[:3]],
                [(user_ids[u], item_ids[i]) for u, i in zip(users[:3], items[:3])])
            del truth_items
            missing_users, missing_grades = truth_users[unscored], truth_grades[unscored]
            nonrel_lists = truth_users[truth_grades == 0]
            # The users are those with scored rows or relevant truth rows; drop the rest.
            present = with_rows
            present[missing_users] = True
            if present.all():  # the usual case: nothing to drop, no renumbering
                truth_rows = truth_users if keep_row_users else None
            else:
                remap = np.cumsum(present) - 1
                users, missing_users = remap[users], remap[missing_users]
                nonrel_lists = remap[nonrel_lists[present[nonrel_lists]]]
                truth_rows = np.where(present[truth_users], remap[truth_users], -1) \
                    if keep_row_users else None
                user_ids = user_ids[present]
            n_nonrelevant = np.bincount(nonrel_lists, minlength=len(user_ids))
            del nonrel_lists, truth_users, truth_grades
        self.users = user_ids
        # the item ids of ``items`` (codes, in the ranked order below): the beyond-accuracy
        # metrics read the ranked rows from here instead of ranking them again
        self.item_ids = item_ids
        # with keep_row_users: each row's user (an index into ``users``; -1 for truth's users
        # left out), in the rows' own order, for attributes read from the rows (slices)
        self.row_users = (users.astype(np.intp, copy=False), None if truth_rows is None else
                          truth_rows.astype(np.intp, copy=False)) if keep_row_users else None
        self.score_column = score if rank is None else rank
        self.n_users = len(user_ids)
        self.n_rows = n
        # relevant truth rows of each user that pred never scored (unscored="below" ranks them
        # below every scored row in AUC and GAUC)
        self.unscored = np.bincount(missing_users, minlength=self.n_users)
        positive = grades > 0
        self.n_positive = int(positive.sum())
        if item_names is not None:
            item_ids = pd.Index(item_names)[np.asarray(item_ids)]
        tiebreak = tie_order(ties, grades, items, item_ids)
        if not keep_items:
            del items
        # global AUC's (wins, wins or ties), counted while ranking; scores and grades are
        # put in rank order on the way
        self.scores, self.grades = np.empty_like(scores), np.empty_like(grades)
        order, self.pairs = _kernels.rank_rows(
            users, scores, self.n_users, tiebreak=tiebreak, positive=positive,
            carry=((scores, self.scores), (grades, self.grades)))
        del positive, tiebreak, scores, grades
        # rows now run by user code, ascending: each user's code repeated over its rows
        self.lists = np.repeat(np.arange(self.n_users), np.bincount(users, minlength=self.n_users))
        del users
        # each ranked row's item code (into item_ids), kept only for the beyond-accuracy metrics
        self.items: np.ndarray | None = items[order].astype(np.intp, copy=False) \
            if keep_items else None
        self.judged = judged[order] if not judged.all() else judged
        # judged non-relevant items (grade 0) of each user, scored or not: bpref's N
        self.n_nonrelevant = n_nonrelevant
        del order, judged
        self.layout_ties = ties == "average"
        new_group = _kernels.starts(self.scores) if ties == "average" else None
        layout = _kernels.Layout(self.lists, self.grades, self.n_users, new_group)
        relevant_rows = self.grades > 0
        self.ranked = _kernels.RankedLists(
            layout, np.r_[self.lists[relevant_rows], missing_users],
            np.r_[self.grades[relevant_rows], missing_grades])

    def new_groups(self) -> np.ndarray:
        """Rows that start a tie group (or a list): under ``ties="average"`` rows of equal
        score in a list are tied; under the other policies every row is its own group."""
        if self.layout_ties:
            return _kernels.starts(self.scores) | _kernels.starts(self.lists)
        return np.ones(self.lists.size, dtype=bool)

    def user_auc(self, ties: str, unscored: str = "ignore") -> UserAUC:
        """Per-user AUC (NaN for one-class users), positives and negatives. With
        ``unscored="below"`` a user's relevant truth rows that were never scored are positives
        below every scored row: they lose every pair, so they add to the positives only."""
        wins, wins_or_ties, pos, neg = _kernels.group_pair_counts(
            self.lists, self.scores, self.grades > 0, self.n_users)
        if unscored == "below":
            pos = pos + self.unscored
        return UserAUC(_kernels.auc_per_list(wins, wins_or_ties, pos, neg, ties), pos, neg)


#: Distinct positive whole labels, and no label 0, from which labels look like a rating scale.
RATING_SCALE_VALUES = 4


def warn_rating_scale(name: str, column: str, grades: np.ndarray) -> None:
    """Warn when labels look like ratings (no 0, several positive whole values, e.g. 1-5): every
    label above 0 is relevant, so a rating of 1 would count as a hit; ``min_grade`` says which
    ratings count. Cheap on click logs: a label 0 or a single value ends the check early."""
    if not grades.size or grades.min() <= 0 or grades.min() == grades.max():
        return
    values = np.unique(grades)
    if values.size < RATING_SCALE_VALUES or not np.array_equal(values, np.round(values)):
        return
    shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if values.size > 6 else "")
    warnings.warn(f"{name} column {column!r} looks like a rating scale (values {shown}; no 0): "
                  f"every label above 0 counts as relevant, so a rating of {values[0]:g} is a "
                  f"hit as much as one of {values[-1]:g}; pass min_grade= the lowest rating that "
                  f"is relevant (e.g. min_grade={values[-2]:g}; --min-grade on the command line)",
                  RecmetricsWarning, stacklevel=caller_stacklevel())


def _threshold(grades: np.ndarray, min_grade: float | None) -> np.ndarray:
    """Grades below ``min_grade`` set to 0 (judged, not relevant)."""
    return grades if min_grade is None else np.where(grades >= min_grade, grades, 0.0)


def tie_order(ties: str, grades: np.ndarray, items: np.ndarray, item_ids) -> np.ndarray | None:
    """The key that orders rows of equal score (descending), or None to keep ties.

    optimistic: higher grades first; pessimistic: lower grades first; trec:
    the item id as text, descending, as trec_eval's ``comp_sim_docno``
    (``strcmp`` of the document numbers; text compared by code point, which
    is the order of UTF-8 bytes).
    """
    if ties == "average":
        return None
    if ties == "optimistic":
        return grades
    if ties == "pessimistic":
        return -grades
    text = np.asarray(pd.Index(item_ids).astype(str), dtype=str)
    place = np.empty(text.size, dtype=np.int64)
    place[np.argsort(text, kind="stable")] = np.arange(text.size)
    return place[items]


@dataclass(frozen=True)
class UserAUC:
    """Each user's own AUC (NaN with one class only) and counts of positive and negative rows."""

    values: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray


@dataclass(frozen=True)
class PerUser:
    """Every per-user value of one prepared set of users.

    ``columns`` maps a per-user column (``ndcg@10``, ``mrr``, ``auc``) to an
    array over the users; ``counted`` marks the users the ranking means
    include under ``no_relevant``; ``auc`` is set when GAUC is requested.
    """

    columns: dict[str, np.ndarray]
    counted: np.ndarray
    auc: UserAUC | None = None


# --------------------------------------------------------------------------- options


def check_options(*, k, metrics, **conventions) -> Options:
    """The checked options of one evaluation, for the metrics of this engine."""
    return Options.checked(k=k, metrics=metrics, known=METRICS, default=DEFAULT_METRICS,
                           **conventions)


# --------------------------------------------------------------------------- inputs


#: The note of a truth table without a label column.
POSITIVES_ONLY = "truth has no label column: every truth row is a relevant item (grade 1)"


def labelled_truth(truth, label: str, *, default_label: bool) -> tuple[Any, bool]:
    """``truth`` with a label column: a table of positives only (no ``label`` column, and
    none asked for by name) gets grade 1 on every row. Returns (truth, positives_only)."""
    if truth is None or not default_label or label in getattr(truth, "columns", [label]):
        return truth, False
    return truth.assign(**{label: 1}), True


def check_rank(rank: str | None, o: Options) -> None:
    """Ranks order the rows but are no probabilities: refuse the metrics that need them."""
    asked = [m for m in o.metrics if m in PROBABILITY_METRICS]
    if rank is not None and asked:
        raise ValueError(f"rank={rank!r} gives each row a rank, not a probability, so "
                         f"{', '.join(asked)} cannot be computed; leave them out of metrics or "
                         "pass score= a column of probabilities")


#: Global AUC below this, and below 0.5 by more than RANK_HINT_Z standard errors of a random
#: score, suggests that the score column holds ranks (1 = best).
RANK_HINT_AUC, RANK_HINT_Z = 0.4, 5.0


def rank_hint(table: pd.DataFrame, rank: str | None, score, n_positive: int,
              n_negative: int) -> None:
    """Warn when global AUC is far below 0.5, beyond chance: the scores may be ranks.

    Chance is judged by the standard error of AUC under random scores,
    sqrt((P + N + 1) / (12 P N)) (the Mann-Whitney U null). Only under
    ``ties="average"``: the bounds of the other policies are far from 0.5 by design
    when many scores tie.
    """
    auc = table.loc[table.metric == "auc", "value"]
    conventions = table.attrs.get("conventions", {})
    if rank is not None or conventions.get("ties") != "average" or not len(auc) \
            or not n_positive or not n_negative:
        return  # the bounds of optimistic / pessimistic ties may sit far from 0.5 by design
    if conventions.get("unscored") == "below":
        return  # unscored positives below every row pull AUC down by design, not by chance
    value = float(auc.iloc[0])
    spread = ((n_positive + n_negative + 1) / (12 * n_positive * n_negative)) ** 0.5
    if value < RANK_HINT_AUC and 0.5 - value > RANK_HINT_Z * spread:
        warnings.warn(f"global AUC is {value:.4f}, far below 0.5 (random scores): if column "
                      f"{score!r} holds ranks (1 = best, lower is better), pass rank={score!r} to "
                      "read it as a rank", RecmetricsWarning, stacklevel=caller_stacklevel())


# --------------------------------------------------------------------------- notes


GAUC_NOTE = "undefined: no user has both a relevant and a non-relevant scored row"
RANKING_NOTE = "undefined: no user has a relevant item"


def auc_note(n_positive: int) -> str:
    if n_positive == 0:
        return "undefined: no scored row is relevant, and AUC needs positives and negatives"
    return "undefined: every scored row is relevant, and AUC needs positives and negatives"


def column_names(o: Options) -> list[str]:
    """Per-user columns of the ranking metrics, in table order (``ndcg@10``, ``mrr``, ...)."""
    return [name for metric in o.metrics if metric in RANKING
            for name in METRIC[metric].columns(o.ks)]


# --------------------------------------------------------------------------- per user


def per_user(prep: Prepared, o: Options) -> PerUser:
    """Every requested per-user value, with the users each mean counts."""
    ranked = prep.ranked
    has_relevant = ranked.has_relevant
    if o.no_relevant == "error" and not has_relevant.all():
        lacking = np.flatnonzero(~has_relevant)
        raise ValueError(f"{lacking.size:,} user(s) have no relevant item (e.g. "
                         f"{', '.join(repr(u) for u in prep.users[lacking[:3]])}), so their "
                         "ranking metrics are undefined; pass no_relevant='skip' to leave them out "
                         "or 'zero' to count them as 0")
    counted = has_relevant if o.no_relevant == "skip" else np.ones(prep.n_users, dtype=bool)
    columns: dict[str, np.ndarray] = {}
    auc = None
    if "gauc" in o.metrics:
        auc = prep.user_auc(o.ties, o.unscored)
        columns["auc"] = auc.values
    lists = _RankedInput(prep, o)
    for metric in (METRIC[m] for m in o.metrics if m in RANKING):
        for name in metric.columns(o.ks):
            cut = int(name.partition("@")[2]) if "@" in name else None
            values = metric.values(lists, cut, o)
            values = np.where(has_relevant, values, 0.0 if o.no_relevant == "zero" else np.nan)
            columns[name] = values
    return PerUser(columns=columns, counted=counted, auc=auc)


class _RankedInput:
    """What the ranking kernels of the registry read from one prepared set of users
    (:class:`recmetrics._metrics.RankedInput`); the top grade is checked once, when read."""

    def __init__(self, prep: Prepared, o: Options) -> None:
        self.prep, self.o = prep, o
        self._top: np.ndarray | None = None

    @property
    def ranked(self) -> _kernels.RankedLists:
        return self.prep.ranked

    @property
    def layout_ties(self) -> bool:
        return self.prep.layout_ties

    def bpref(self) -> np.ndarray:
        prep = self.prep
        return _kernels.bpref_ranked(prep.lists, prep.grades, prep.judged, prep.new_groups(),
                                     prep.ranked.n_relevant, prep.n_nonrelevant)

    def top_grade(self) -> np.ndarray:
        if self._top is None:
            self._top = np.full(self.prep.n_users, check_graded(self.prep, self.o))
        return self._top


def check_graded(prep: Prepared, o: Options) -> float:
    """``max_grade`` of RBP and ERR: resolved (:func:`resolve_max_grade`) and above every grade."""
    if o.max_grade is None:
        raise ValueError("max_grade is not resolved; pass max_grade=, the top grade of the "
                         "judging scale")
    check_max_grade(o.max_grade, prep.top_grade)
    return o.max_grade


def resolve_max_grade(o: Options, top_grade: float) -> Options:
    """Options with ``max_grade`` set, when RBP or ERR is asked for and it was not given: the
    top grade of the whole input's truth (1 when nothing is relevant)."""
    if o.max_grade is not None or not any(m in GRADED for m in o.metrics):
        return o
    return o.replace(max_grade=top_grade if top_grade > 0 else 1.0)


def top_grade_of(frames, label: str, min_grade: float | None) -> float:
    """The largest grade in the label columns of some pandas frames (those that have one)."""
    tops = [float(_threshold(numeric_column(name, frame, label, grades=True), min_grade)
                  .max(initial=0.0))
            for name, frame in frames if frame is not None and label in frame.columns]
    return max(tops, default=0.0)


def rbp_residual(prep: Prepared, p: float) -> np.ndarray:
    """Per user: the RBP weight that the judgements leave open, :math:`p^d` below the list
    plus the expected weight of its unjudged places (a tie group of t places from position
    a gives each of its rows the mean weight :math:`p^{a-1}(1 - p^t)/t`)."""
    new = prep.new_groups()
    group = np.cumsum(new) - 1
    n = prep.lists.size
    index = np.arange(n)
    list_start = np.maximum.accumulate(np.where(_kernels.starts(prep.lists), index, 0)) \
        if n else index
    group_start = np.flatnonzero(new)
    size = np.diff(np.append(group_start, n))[group]
    first = (group_start[group] - list_start + 1).astype(np.float64)
    weight = np.power(p, first - 1) * (1.0 - np.power(p, size)) / size
    unjudged = np.bincount(prep.lists[~prep.judged], weights=weight[~prep.judged],
                           minlength=prep.n_users)
    return np.power(p, prep.ranked.n_rows.astype(np.float64)) + unjudged


def user_columns(prep: Prepared, o: Options) -> dict[str, np.ndarray]:
    """Every per-user column of :func:`recmetrics.evaluate_per_user` but the beyond-accuracy
    ones: each metric's values, and with RBP its residual (every engine reads this)."""
    columns = per_user(prep, o).columns
    if "rbp" in o.metrics:
        columns["rbp_residual"] = rbp_residual(prep, o.rbp_p)
    return columns


def user_table(prep: Prepared, columns: dict[str, np.ndarray], user: str = "user"
               ) -> pd.DataFrame:
    """One row per user: the id (in a column named ``user`` unless the table uses that name),
    counts, and every per-user value."""
    ranked = prep.ranked
    counts = {"n_items": ranked.n_rows,
              "n_positives": np.bincount(prep.lists[prep.grades > 0], minlength=prep.n_users),
              "n_relevant": ranked.n_relevant}
    name = "user" if user in counts or user in columns or user == "_first" else user
    return pd.DataFrame({name: prep.users, **counts, **columns})


def user_ratios(prep: Prepared, users: PerUser, o: Options) -> dict:
    """Per table row that is a mean over users: (numerator, denominator) per user.

    The row's value is sum(numerator) / sum(denominator); the bootstrap
    reweights users. Users a mean leaves out have 0 in both.
    """
    ratios = {}
    if users.auc is not None:
        auc = users.auc
        weights = _kernels.gauc_weights(auc.positives, auc.negatives, o.gauc_weight)
        defined = ~np.isnan(auc.values)
        ratios["gauc"] = (np.where(defined, weights * np.nan_to_num(auc.values), 0.0),
                          np.where(defined, weights, 0.0))
    counted = users.counted
    for name in column_names(o):
        ratios[name] = (np.where(counted, np.nan_to_num(users.columns[name]), 0.0),
                        counted.astype(np.float64))
    asked = [m for m in o.metrics if m in PROBABILITY_METRICS]
    if asked:
        check_probability_scores("pred", prep.score_column, prep.scores, asked)
    probability = [m for m in asked if m in ("logloss", "brier")]
    if probability:
        labels, scores = (prep.grades > 0).astype(np.int8), prep.scores
        rows = prep.ranked.n_rows.astype(np.float64)
        for metric in probability:
            loss = _kernels.log_loss(labels, scores, DEFAULT_EPS) if metric == "logloss" \
                else _kernels.brier(labels, scores)
            ratios[metric] = (np.bincount(prep.lists, weights=loss, minlength=prep.n_users), rows)
    return ratios


# --------------------------------------------------------------------------- summaries


@dataclass
class Summary:
    """Totals over a set of users behind the tidy table; Summaries of disjoint users add up.

    ``pairs`` (global AUC's wins and wins-or-ties over all scored rows) is the
    exception: it compares rows of different users, so it is set once for the
    whole input (None until then).
    """

    n_users: int = 0                 # users in the table: scored rows or a relevant truth row
    n_with_rows: int = 0             # users with a scored row
    n_counted: int = 0               # users the ranking means count (no_relevant)
    n_without_predictions: int = 0   # users with a relevant truth row and no scored row
    n_rows: int = 0                  # scored rows
    n_positive: int = 0              # scored rows with grade > 0
    sums: dict = field(default_factory=dict)   # row name -> (sum of numerators, of denominators)
    n_defined: dict = field(default_factory=dict)  # row name -> users with a defined value
    gauc_undefined: int = 0          # users with one class only
    probability: dict = field(default_factory=dict)  # "logloss"/"brier": loss sums; "bins"
    unmatched: Unmatched = field(default_factory=Unmatched)
    resamples: dict = field(default_factory=dict)  # row name -> (n_resamples, 2) Poisson sums
    inputs: dict = field(default_factory=dict)     # the Dask engine's truth rows and users
    pairs: tuple | None = None

    def __add__(self, other: Summary) -> Summary:
        """Field by field: counts add, dicts add key by key, ``pairs`` only when both have them."""
        return Summary(**{f.name: _add(f.name, getattr(self, f.name), getattr(other, f.name))
                          for f in fields(self)})


def _add(name: str, a: Any, b: Any) -> Any:
    if name == "pairs":
        return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])
    if name == "sums":  # (numerator, denominator) pairs
        zero = (0.0, 0.0)
        return {key: (a.get(key, zero)[0] + b.get(key, zero)[0],
                      a.get(key, zero)[1] + b.get(key, zero)[1])
                for key in dict.fromkeys(list(a) + list(b))}
    if isinstance(a, dict):
        return {key: (a[key] + b[key]) if key in a and key in b else a.get(key, b.get(key))
                for key in list(a) + [k for k in b if k not in a]}
    return a + b


def summarize(prep: Prepared, users: PerUser, o: Options, ratios: dict) -> Summary:
    """The totals of one prepared set of users (all of them in memory, a partition on Dask)."""
    s = Summary(n_users=prep.n_users, n_with_rows=int((prep.ranked.n_rows > 0).sum()),
                n_counted=int(users.counted.sum()), n_without_predictions=prep.n_without_predictions,
                n_rows=prep.n_rows, n_positive=prep.n_positive, unmatched=prep.unmatched)
    for name, (numerator, denominator) in ratios.items():
        s.sums[name] = (float(numerator.sum()), float(denominator.sum()))
        s.n_defined[name] = int(np.count_nonzero(denominator))
    if users.auc is not None:
        s.n_defined["gauc"] = int((~np.isnan(users.auc.values)).sum())
        s.gauc_undefined = prep.n_users - s.n_defined["gauc"]
    probability = [m for m in o.metrics if m in PROBABILITY_METRICS]
    if probability:
        labels = (prep.grades > 0).astype(np.int8)
        if "ne" in probability and "logloss" not in ratios:
            s.probability["logloss"] = float(_kernels.log_loss(labels, prep.scores,
                                                               DEFAULT_EPS).sum())
        for metric in ("logloss", "brier"):
            if metric in ratios:
                s.probability[metric] = s.sums[metric][0]
        if "ece" in probability:
            edges = _kernels.calibration_edges(prep.scores, ECE_BINS, "uniform")
            s.probability["bins"] = np.array(_kernels.calibration_bins(labels, prep.scores, edges),
                                             dtype=np.float64)
    return s


# --------------------------------------------------------------------------- the table


def assemble(s: Summary, o: Options, *, ci: float | None = None, intervals: dict | None = None,
             warn: bool = True) -> pd.DataFrame:
    """The tidy table, one row per metric and cut-off, from the totals of all users.

    ``intervals`` maps a row name ("auc", "gauc", "ndcg@10", "logloss", ...)
    to its (low, high) bootstrap interval; rows without one get NaN when
    ``ci`` is given.
    """
    rows: list[dict[str, Any]] = []
    undefined: dict[str, str] = {}
    intervals = intervals or {}
    n_skipped = s.n_users - s.n_counted

    def add(name, value, n_users, n_skipped, n_without, note=""):
        metric, _, cut = name.partition("@")
        row = {"metric": metric, "k": int(cut) if cut else None, "value": float(value),
               "n_users": n_users, "n_skipped": n_skipped, "n_without_predictions": n_without,
               "conventions": o.describe(metric), "note": note}
        if note:
            undefined.setdefault(metric, note)
        if ci is not None:
            row["ci_low"], row["ci_high"] = intervals.get(name, (float("nan"), float("nan")))
        rows.append(row)

    unscored = unscored_note(s, o)
    if "auc" in o.metrics:
        value = global_auc(s, o)
        add("auc", value, s.n_with_rows, 0, 0,
            auc_note(s.n_positive) if np.isnan(value) else unscored)
    if "gauc" in o.metrics:
        numerator, denominator = s.sums["gauc"]
        n_defined = s.n_defined["gauc"]
        value = numerator / denominator if n_defined else float("nan")
        add("gauc", value, n_defined, s.gauc_undefined, 0, unscored if n_defined else GAUC_NOTE)
    for name in column_names(o):
        total = s.sums[name][0]
        value = total / s.n_counted if s.n_counted else float("nan")
        add(name, value, s.n_counted, n_skipped, s.n_without_predictions,
            RANKING_NOTE if np.isnan(value) else "")
    n = s.n_rows
    for metric in (m for m in o.metrics if m in PROBABILITY_METRICS):
        if metric in ("logloss", "brier"):
            add(metric, s.probability[metric] / n, s.n_with_rows, 0, 0)
        elif metric == "ne":
            base_rate = s.n_positive / n
            if base_rate in (0.0, 1.0):
                add(metric, float("nan"), s.n_with_rows, 0, 0,
                    "undefined: every scored row has the same class, so the entropy of the "
                    "base rate (the denominator) is 0")
            else:
                add(metric, (s.probability["logloss"] / n)
                    / float(_kernels.binary_entropy(base_rate)), s.n_with_rows, 0, 0)
        else:
            count, positives, prob_sum = s.probability["bins"]
            kept = count != 0
            gap = np.abs(positives[kept] / count[kept] - prob_sum[kept] / count[kept])
            add(metric, float(np.sum(count[kept] / n * gap)), s.n_with_rows, 0, 0)
    if warn:
        for metric, note in undefined.items():
            if note == unscored:  # one warning for AUC and GAUC, naming both
                continue
            warnings.warn(f"{metric} is NaN: {note}", RecmetricsWarning,
                          stacklevel=caller_stacklevel())
        if unscored and any(row["note"] == unscored for row in rows):
            warnings.warn(unscored, RecmetricsWarning, stacklevel=caller_stacklevel())
    table = pd.DataFrame(rows)
    table["k"] = table["k"].astype("Int64")
    table.attrs["conventions"] = o.conventions()
    placed = unscored_note(s, o, placed=True) if o.unscored == "below" else ""
    noted = unscored if unscored and any(row["note"] == unscored for row in rows) else placed
    table.attrs["notes"] = [noted] if noted else []
    return table


def unscored_note(s: Summary, o: Options, *, placed: bool = False) -> str:
    """The note of AUC and GAUC when truth holds relevant rows that pred never scored (a top-k
    export): under ``unscored="ignore"`` what that means; ``placed``: what "below" did."""
    missing, relevant = s.unmatched.n_missing_rows, s.unmatched.n_relevant_rows
    if not missing or not any(m in o.metrics for m in PAIRWISE):
        return ""
    if placed:
        return (f"unscored='below': {missing:,} of {relevant:,} relevant truth rows that pred "
                "never scored are ranked below every scored row, tied, in AUC and GAUC")
    if o.unscored == "below":
        return ""
    return (f"{missing:,} of {relevant:,} relevant truth rows were never scored by pred (a top-k "
            "export?): AUC and GAUC compare scored rows only and leave them out, while recall, "
            "MAP and NDCG count them as misses, so the two describe different lists; pass "
            "unscored='below' to rank them below every scored row")


def global_auc(s: Summary, o: Options) -> float:
    """Global AUC of the scored rows; under ``unscored="below"`` the relevant truth rows that
    were never scored are positives below every scored row (they lose every pair)."""
    n_neg = s.n_rows - s.n_positive
    n_pos = s.n_positive + (s.unmatched.n_missing_rows if o.unscored == "below" else 0)
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    if s.pairs is None:
        raise ValueError("the global AUC needs the Summary's pair counts; summarize every part with them")
    wins, wins_or_ties = s.pairs
    return float(_kernels.auc_from_counts(wins, wins_or_ties, n_pos * n_neg, o.ties))


def interval_rows(s: Summary, o: Options) -> list[str]:
    """Rows that get a bootstrap interval: AUC when defined, and means over two users or more."""
    names = []
    if "auc" in o.metrics and not np.isnan(global_auc(s, o)):
        names.append("auc")
    if "gauc" in o.metrics and s.n_defined["gauc"] > 1:
        names.append("gauc")
    if s.n_counted > 1:
        names += column_names(o)
    names += [m for m in o.metrics if m in ("logloss", "brier") and s.n_with_rows > 1]
    return names


# --------------------------------------------------------------------------- the multinomial bootstrap


def multinomial_intervals(prep: Prepared, ratios: dict, s: Summary | None, o: Options | None,
                          ci: float, n_resamples: int, seed, wanted: list | None = None) -> dict:
    """Percentile intervals from drawing users with replacement (one pandas process only).

    Resample *b* draws n users with replacement from the generator seeded by
    ``seed`` (n = every user of the table); every row is evaluated on the same
    draws, as a ratio of (draw-count weighted) sums over users, so a row's
    interval does not depend on which other metrics or cut-offs are asked for.
    ``wanted`` names the rows (default: :func:`interval_rows` of ``s`` and ``o``).
    """
    if wanted is None:
        if s is None or o is None:
            raise ValueError("multinomial_intervals needs the summary and options, or wanted=")
        wanted = interval_rows(s, o)
    if not wanted:
        return {}
    rng = np.random.default_rng(seed)
    n = prep.n_users
    auc = AucResampler(prep, o.ties, o.unscored) if "auc" in wanted and o is not None else None
    rows = [name for name in wanted if name != "auc"]
    numerators = np.stack([ratios[name][0] for name in rows]) if rows else np.zeros((0, n))
    denominators = np.stack([ratios[name][1] for name in rows]) if rows else np.zeros((0, n))
    values = np.empty((len(wanted), n_resamples))
    chunk = max(1, min(n_resamples, 4_000_000 // max(n, auc.n_gaps if auc else 1)))
    done = _progress.counter("bootstrapping intervals", n_resamples, "resample")
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        counts = np.empty((n, size))
        for b in range(size):
            counts[:, b] = np.bincount(rng.integers(0, n, n), minlength=n)
        offset = len(wanted) - len(rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            for i in range(len(rows)):  # row by row: a row's sums do not depend on the others
                values[offset + i, start:start + size] = \
                    (numerators[i] @ counts) / (denominators[i] @ counts)
        if auc is not None:
            values[0, start:start + size] = auc.resample(counts)
        done(size)
    quantiles = [(1 - ci) / 2, (1 + ci) / 2]
    intervals = {}
    for name, row in zip(wanted, values):
        if np.isfinite(row).any():
            low, high = np.nanquantile(np.where(np.isfinite(row), row, np.nan), quantiles)
            intervals[name] = (float(low), float(high))
    return intervals


class AucResampler:
    """Global AUC of the scored rows with each user's rows weighted by a per-user count.

    A resample only changes row weights (how often each user was drawn), so the
    rows are sorted once (:class:`~recmetrics._kernels.WeightedPairs`); a chunk of
    resamples, as a (user x resample) matrix of weights, then costs a few sparse
    products per block of resamples, blocks in threads: a weighted Mann-Whitney U
    for every resample.
    """

    def __init__(self, prep: Prepared, ties: str, unscored: str = "ignore"):
        self.ties = ties
        self.pairs = _kernels.WeightedPairs(prep.scores, prep.grades > 0, prep.lists,
                                            prep.n_users)
        self.n_gaps = self.pairs.n_bounds
        # unscored="below": each user's relevant items pred never scored are positives below
        # every row, in the pairs but never a win or a tie
        self.unscored = prep.unscored.astype(np.float64) if unscored == "below" else None

    def resample(self, weights: np.ndarray) -> np.ndarray:
        """AUC for each column of a (user x resample) weight matrix (NaN with one class)."""
        sums = self.pairs.resampled(lambda start, size: weights[:, start:start + size],
                                    weights.shape[1])
        if self.unscored is not None:
            sums[:, 2] += self.unscored @ weights
        with np.errstate(invalid="ignore", divide="ignore"):
            return _kernels.auc_from_counts(sums[:, 0], sums[:, 1], sums[:, 2] * sums[:, 3],
                                            self.ties)


# --------------------------------------------------------------------------- the Poisson bootstrap

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: P(X <= k) for X ~ Poisson(1), k = 0, 1, ...; beyond k = 24 the tail is below 1e-25.
_POISSON_CDF = np.cumsum(np.exp(-1.0) / np.cumprod(np.r_[1.0, np.arange(1.0, 25.0)]))
#: Most (user x resample) weights held at once.
POISSON_CHUNK = 1 << 22


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 whose bits look independent."""
    x = x ^ (x >> np.uint64(30))
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def poisson_seed(seed) -> int:
    """The integer that keys the Poisson weights: ``seed`` itself, or one drawn from it."""
    if isinstance(seed, (int, np.integer)):
        return int(seed)
    return int(np.random.default_rng(seed).integers(0, 2**63))


def poisson_weights(hashes: np.ndarray, seed: int, start: int, size: int) -> np.ndarray:
    """Poisson(1) weights of users (rows) in resamples start .. start + size - 1 (columns)."""
    resample = np.arange(start, start + size, dtype=np.uint64)
    key = _mix(np.full(size, seed % 2**64, dtype=np.uint64) * _GOLDEN + resample * _M1 + _M2)
    bits = _mix(hashes[:, None] ^ key[None, :])
    uniform = (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.float64)


def poisson_sums(hashes: np.ndarray, ratios: dict, seed: int, n_resamples: int) -> dict:
    """Per ratio row: (n_resamples, 2) sums of Poisson-weighted numerators and denominators."""
    if not ratios:
        return {}
    names = list(ratios)
    numerators = np.stack([ratios[n][0] for n in names])
    denominators = np.stack([ratios[n][1] for n in names])
    out = np.zeros((len(names), n_resamples, 2))
    chunk = max(1, min(n_resamples, POISSON_CHUNK // max(1, hashes.size)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        w = poisson_weights(hashes, seed, start, size)
        for i in range(len(names)):  # row by row: a row's sums do not depend on the others
            out[i, start:start + size, 0] = numerators[i] @ w
            out[i, start:start + size, 1] = denominators[i] @ w
    return {name: out[i] for i, name in enumerate(names)}


def poisson_auc_sums(scores: np.ndarray, positive: np.ndarray, hashes: np.ndarray, seed: int,
                     n_resamples: int, done: Callable[[int], None] | None = None) -> np.ndarray:
    """Poisson-weighted pair counts of a set of scored rows, per resample.

    Returns an (n_resamples, 4) array: weighted wins, wins-or-ties, positives
    and negatives, where a row weighs its user's weight (``hashes``: each row's
    user hash). The rows' users are found from their hashes, then
    :func:`user_auc_sums`.
    """
    if scores.size == 0:
        return np.zeros((n_resamples, 4))
    user_hashes, users = np.unique(hashes, return_inverse=True)
    return user_auc_sums(scores, positive, users.ravel(), user_hashes, seed, n_resamples,
                         done)


def user_auc_sums(scores: np.ndarray, positive: np.ndarray, users: np.ndarray,
                  user_hashes: np.ndarray, seed: int, n_resamples: int,
                  done: Callable[[int], None] | None = None) -> np.ndarray:
    """:func:`poisson_auc_sums` of rows given by user (``users`` indexes ``user_hashes``).

    Rows are sorted by score once (:class:`~recmetrics._kernels.WeightedPairs`);
    each block of resamples draws its users' weights (:func:`poisson_weights`)
    and costs a few sparse products, blocks in threads. Every sum is a whole
    number (exact in float64), so the result does not depend on the blocks.
    ``done`` hears of each finished block's number of resamples (progress).
    """
    if scores.size == 0:
        if done is not None:
            done(n_resamples)
        return np.zeros((n_resamples, 4))
    pairs = _kernels.WeightedPairs(scores, positive, users, user_hashes.size)
    return pairs.resampled(lambda start, size: poisson_weights(user_hashes, seed, start, size),
                           n_resamples, done)


def combine_auc_sums(buckets: list[np.ndarray]) -> np.ndarray:
    """Pair counts of score buckets in ascending order, each (n_resamples, 4), as one.

    A positive in a higher bucket beats every negative in the lower ones.
    """
    total = np.zeros_like(buckets[0])
    negatives_below = np.zeros(total.shape[0])
    for b in buckets:
        cross = b[:, 2] * negatives_below
        total[:, 0] += b[:, 0] + cross
        total[:, 1] += b[:, 1] + cross
        total[:, 2:] += b[:, 2:]
        negatives_below += b[:, 3]
    return total


def poisson_intervals(s: Summary, o: Options, ci: float) -> dict:
    """Percentile intervals from the Poisson resample sums of a Summary."""
    quantiles = [(1 - ci) / 2, (1 + ci) / 2]
    intervals = {}
    for name in interval_rows(s, o):
        sums = s.resamples[name]
        with np.errstate(invalid="ignore", divide="ignore"):
            if name == "auc":
                values = _kernels.auc_from_counts(sums[:, 0], sums[:, 1], sums[:, 2] * sums[:, 3],
                                                  o.ties)
            else:
                values = sums[:, 0] / sums[:, 1]
        interval = percentile_interval(values, quantiles)
        if interval is not None:
            intervals[name] = interval
    return intervals


def percentile_interval(values: np.ndarray, quantiles: list[float]
                        ) -> tuple[float, float] | None:
    """The ``quantiles`` (low, high) of a row's resampled values, over the finite ones (a
    resample with no user for the row gives 0/0); None where no value is finite."""
    values = values[np.isfinite(values)]
    if not values.size:
        return None
    low, high = np.quantile(values, quantiles)
    return float(low), float(high)


def ratio_interval(pair: np.ndarray, quantiles: list[float]) -> tuple[float, float] | None:
    """:func:`percentile_interval` of a ratio row from its resampled (numerator, denominator)
    sums, one resample a row of ``pair``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = pair[:, 0] / pair[:, 1]
    return percentile_interval(values, quantiles)


def ratio_intervals(prep: Prepared, ratios: dict, *, ci: float, n_resamples: int, seed,
                    bootstrap: str) -> dict:
    """Percentile intervals of rows that are ratios of per-user sums, on their own.

    ``ratios`` maps a row name to (numerator, denominator) arrays over
    ``prep``'s users, as :func:`user_ratios` gives them. The users are
    reweighted exactly as for the other rows (the same Poisson weights, or the
    same multinomial draws), row by row, so a row's interval does not depend
    on which other rows are asked for. Rows used by other metrics' extensions
    (the beyond-accuracy means of :mod:`recmetrics._beyond`) come through here.
    """
    if not ratios:
        return {}
    if bootstrap == "multinomial":
        return multinomial_intervals(prep, ratios, None, None, ci, n_resamples, seed,
                                     wanted=list(ratios))
    sums = poisson_sums(user_hash(prep.users), ratios, poisson_seed(seed), n_resamples)
    quantiles = [(1 - ci) / 2, (1 + ci) / 2]
    intervals = {}
    for name, pair in sums.items():
        interval = ratio_interval(pair, quantiles)
        if interval is not None:
            intervals[name] = interval
    return intervals


def prepared_resamples(prep: Prepared, ratios: dict, o: Options, seed: int, n_resamples: int,
                       *, auc: bool = True) -> dict:
    """Poisson sums of every ratio row of a prepared set of users (and of AUC if asked)."""
    hashes = user_hash(prep.users)
    sums = poisson_sums(hashes, ratios, seed, n_resamples)
    if auc and "auc" in o.metrics:
        sums["auc"] = user_auc_sums(prep.scores, prep.grades > 0, prep.lists, hashes, seed,
                                    n_resamples, _progress.counter(
                                        "bootstrapping global AUC", n_resamples, "resample"))
        if o.unscored == "below" and prep.unscored.any():  # positives that lose every pair
            unscored = prep.unscored.astype(np.float64)
            sums["auc"][:, 2] += poisson_sums(hashes, {"u": (unscored, unscored)}, seed,
                                              n_resamples)["u"][:, 0]
    return sums


#: Seconds per scored row and resample of global AUC's interval, and per user, resample and
#: other row with an interval, measured on a shared 2-core machine (benchmarks/
#: bench_intervals.py): the basis of :func:`announce_intervals`' forecast.
AUC_RESAMPLE_SECONDS, RATIO_RESAMPLE_SECONDS = 4e-9, 1e-9


def announce_intervals(prep: Prepared, n_rows_with_interval: int, n_resamples: int,
                       auc: bool, slices: int = 0) -> None:
    """Say before a bootstrap predicted to take more than half a minute how long it should
    take and how to make it cheaper (:func:`recmetrics._progress.announce`)."""
    auc_seconds = AUC_RESAMPLE_SECONDS * prep.n_rows * n_resamples * (1 + bool(slices)) * auc
    seconds = auc_seconds + RATIO_RESAMPLE_SECONDS * prep.n_users * n_resamples * \
        n_rows_with_interval
    cheaper = ["pass fewer resamples (n_resamples=, --n-resamples)"]
    if auc_seconds > seconds / 2:
        cheaper += ["leave 'auc' out of metrics (its interval is most of the work)",
                    "or evaluate a top-k file (each user's top rows only) if AUC over every "
                    "candidate is not what you need"]
    _progress.announce(seconds, f"bootstrap intervals ({n_resamples:,} resamples of "
                       f"{prep.n_rows:,} rows)", ", ".join(cheaper))


# --------------------------------------------------------------------------- in memory


@dataclass(frozen=True)
class Evaluated:
    """What one pandas process computes: the tidy table and the per-user values behind it."""

    table: pd.DataFrame
    users: PerUser


def evaluate_prepared(prep: Prepared, o: Options, *, ci: float | None = None,
                      n_resamples: int = 1000, seed=0, bootstrap: str = "poisson"
                      ) -> Evaluated:
    """The tidy table and the per-user values of one pandas process."""
    users = per_user(prep, o)
    ratios = user_ratios(prep, users, o)
    s = summarize(prep, users, o, ratios)
    s.pairs = prep.pairs
    intervals = None
    if ci is not None:
        announce_intervals(prep, len(ratios), n_resamples, "auc" in o.metrics)
        if bootstrap == "poisson":
            s.resamples = prepared_resamples(prep, ratios, o, poisson_seed(seed), n_resamples)
            intervals = poisson_intervals(s, o, ci)
        else:
            intervals = multinomial_intervals(prep, ratios, s, o, ci, n_resamples, seed)
    prep.unmatched.warn()
    return Evaluated(assemble(s, o, ci=ci, intervals=intervals), users)
