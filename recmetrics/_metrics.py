"""The metric registry: what each metric is, one row per metric, every list derived from it.

A row (:class:`Metric`) says everything the rest of the package asks of a
metric: its name in ``metrics=``, the metric name of its table rows, the
public single-list function where there is one, its family, whether it takes
a cut-off, whether it reads graded relevance, whether it is a mean over users,
the conventions that change its number, which way is better, whether it is
computed by default, and its kernel (the per-user values from ranked lists).

Every list the package needs is computed here from the rows: the names
``evaluate`` accepts and their report order, the defaults, the ``@k`` rules
of the command line and its gates, lower-is-better, the convention scopes of
:data:`recmetrics._options.CONVENTIONS`, the metrics a popularity slice can
take, and the dispatch from a name to its kernel. No other module lists
metric names or branches on them.

Adding a metric
---------------
1. Its kernel over tie groups in :mod:`recmetrics._kernels` (tie-exact, with a
   slow literal reference in the tests).
2. One :class:`Metric` row in :data:`REGISTRY` (in report order), its kernel
   a function here of (lists, cut, options).
3. Where a single-list function exists, that function in
   :mod:`recmetrics.ranking` and its name in ``function``.

``evaluate``, ``evaluate_per_user``, ``compare``, the Dask and Spark engines,
the command line's ``--metrics`` and gates and the ``conventions`` column all
read the rows.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from . import _kernels

Family = Literal["pairwise", "ranking", "probability", "beyond"]
#: How a metric's table rows are cut: one row per cut-off ``k`` ("per_k", written ``ndcg@10``),
#: or one row without a cut-off ("none", written ``auc``).
Cut = Literal["per_k", "none"]


class RankedInput(Protocol):
    """What a ranking kernel reads: the ranked lists of some users, and what a few need more."""

    @property
    def ranked(self) -> _kernels.RankedLists: ...

    @property
    def layout_ties(self) -> bool: ...

    def bpref(self) -> np.ndarray: ...

    def top_grade(self) -> np.ndarray: ...


class KernelOptions(Protocol):
    """The conventions a ranking kernel reads (the fields of ``Options`` of the same names)."""

    @property
    def gain(self) -> str: ...

    @property
    def ideal(self) -> str: ...

    @property
    def denominator(self) -> str: ...

    @property
    def pr_denominator(self) -> str: ...

    @property
    def rbp_p(self) -> float: ...


Kernel = Callable[[RankedInput, "int | None", KernelOptions], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """One metric: a row of :data:`REGISTRY`."""

    name: str                    # the name in ``metrics=`` and ``--metrics``
    family: Family
    cut: Cut                     # rows per cut-off k, or one row
    what: str                    # in words, for messages ("precision@k", "NDCG")
    meaning: str = ""            # what the number says, one line (the report's metric table)
    row: str = ""                # the ``metric`` column of its table rows (default: name)
    function: str | None = None  # the public single-list function of recmetrics.ranking
    conventions: tuple[str, ...] = ()   # the conventions of _options.CONVENTIONS it reads
    graded: bool = False         # reads grades beyond relevant / not (max_grade)
    per_user: bool = True        # a mean over users of a per-user value
    higher_is_better: bool = True
    default: bool = False        # computed when ``metrics=None``
    popularity: bool = False     # defined per slice of items (``by="popularity"``)
    kernel: Kernel | None = None  # ranking metrics: per-user values from the ranked lists
    fixed: str | None = None     # how the number is made where no option changes it (probability)
    reads_popularity: bool = False  # beyond accuracy: reads the items' popularity in the history
    reads_similarity: bool = False  # beyond accuracy: sums the similarity of pairs of items
    list_value: ListValue | None = None       # beyond accuracy: each list's own value
    catalogue_value: CatalogueValue | None = None  # beyond accuracy: the value from all lists'
    #                                            sums (None: the mean of the lists' values)
    left_out: str = ""           # beyond accuracy: the lists without a value, in a note

    @property
    def table_name(self) -> str:
        return self.row or self.name

    def columns(self, ks: tuple[int, ...]) -> list[str]:
        """The per-user columns of a ranking metric: ``ndcg@10``, ...; ``mrr``; ``mrr@k``
        gives ``mrr@5``, ``mrr@10``, ... (MRR cut at each cut-off)."""
        if self.cut == "none":
            return [self.table_name]
        return [f"{self.table_name}@{k}" for k in ks]

    def values(self, lists: RankedInput, cut: int | None, options: KernelOptions) -> np.ndarray:
        """The per-list values of a ranking metric at one cut-off (None: uncut)."""
        if self.kernel is None:
            raise TypeError(f"{self.name} has no ranking kernel")
        return self.kernel(lists, cut, options)


# --------------------------------------------------------------------------- kernels


def _needs_cut(name: str, cut: int | None) -> int:
    if cut is None:
        raise ValueError(f"metric={name!r} needs a cut-off; pass k, e.g. k=10")
    return cut


#: The P@k / R@k denominators of the kernels under each ``pr_denominator``: (P's, R's).
_PR_KERNEL = {"standard": ("k", "relevant"), "min_k": ("min_k", "min_k")}


def _precision(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.precision(_needs_cut("precision", cut), _PR_KERNEL[o.pr_denominator][0])


def _recall(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.recall(cut, _PR_KERNEL[o.pr_denominator][1])


def _hit_rate(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.hit_rate(cut)


def _average_precision(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.average_precision(cut, o.denominator)


def _reciprocal_rank(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.reciprocal_rank(cut)


def _ndcg(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.ndcg(cut, o.gain, o.ideal)


def _r_precision(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.r_precision()


def _bpref(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.bpref()


def _rbp(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    return x.ranked.rbp(o.rbp_p) / x.top_grade()


def _err(x: RankedInput, cut: int | None, o: KernelOptions) -> np.ndarray:
    if x.layout_ties and cut is not None:  # the evaluation's ERR rows always have a cut-off
        _kernels.check_err_ties(x.ranked.layout, cut)
    return x.ranked.err(cut, x.top_grade())


# --------------------------------------------------------------------------- beyond accuracy

#: A beyond-accuracy metric's value for each list of ``top`` (NaN where undefined);
#: ``everyone``: the exposure summed over every user and the number of lists, when ``top``
#: holds only some users (personalization compares a list with all the others).
ListValue = Callable[["_kernels.TopK", "_kernels.BeyondContext",
                      "tuple[np.ndarray, int] | None"], np.ndarray]
#: A beyond-accuracy metric's value from the sums over every list, at cut-off k.
CatalogueValue = Callable[["_kernels.BeyondSums", "_kernels.BeyondContext", int], float]


def _novelty(top, ctx, everyone) -> np.ndarray:
    return top.mean_over_slots(_kernels.built(ctx.information, "information")[top.items])


def _arp(top, ctx, everyone) -> np.ndarray:
    return top.mean_over_slots(_kernels.built(ctx.popularity, "popularity")[top.items])


def _aplt(top, ctx, everyone) -> np.ndarray:
    return top.mean_over_slots(_kernels.built(ctx.tail, "tail")[top.items].astype(np.float64))


def _diversity(top, ctx, everyone) -> np.ndarray:
    return _kernels.diversity(top, ctx.similarity, ctx.whole_lists)


def _serendipity(top, ctx, everyone) -> np.ndarray:
    return _kernels.serendipity(top, ctx.similarity, *_kernels.built(ctx.history, "history"))


def _personalization_per_list(top, ctx, everyone) -> np.ndarray:
    s, n = everyone or (_kernels.exposure(top, ctx.n_items), int(np.count_nonzero(top.length)))
    return _kernels.personalization_per_list(top, s, n)


def _in_catalogue(sums, ctx) -> np.ndarray:
    return _kernels.built(sums.exposure, "exposure")[ctx.catalogue]


def _catalog_coverage(sums, ctx, k: int) -> float:
    n = int(np.count_nonzero(ctx.catalogue))
    hit = _kernels.covered(_kernels.built(sums.certain, "certain"),
                           _kernels.built(sums.log_miss, "log_miss"))[ctx.catalogue]
    return float(hit.sum() / n) if n else float("nan")


def _distributional_coverage(sums, ctx, k: int) -> float:
    return _kernels.entropy_bits(_in_catalogue(sums, ctx))


def _gini(sums, ctx, k: int) -> float:
    return _kernels.gini(_in_catalogue(sums, ctx))


def _personalization(sums, ctx, k: int) -> float:
    return _kernels.personalization(_kernels.built(sums.exposure, "exposure"),
                                    _kernels.built(sums.p_square, "p_square"), sums.n_lists, k)


# --------------------------------------------------------------------------- the rows

#: Equal-width bins of the ``ece`` metric (as recmetrics.expected_calibration_error's default).
ECE_BINS = 10
_NATURAL_LOG = "natural log, clipped at eps"

_TIES_USERS = ("ties", "no_relevant", "min_grade", "judged_only")
_FILTERS = ("min_grade", "judged_only")

#: Every metric, in the order the tables report them.
REGISTRY: tuple[Metric, ...] = (
    Metric("auc", "pairwise", "none", "AUC",
           meaning="P(a relevant row outscores an irrelevant one), all rows pooled",
           conventions=("ties", "unscored") + _FILTERS,
           default=True),
    Metric("gauc", "pairwise", "none", "GAUC",
           meaning="AUC within each user, averaged over users (gauc_weight weights)",
           conventions=("gauc_weight", "ties", "unscored") + _FILTERS, default=True),
    Metric("precision", "ranking", "per_k", "precision@k",
           meaning="share of the top k that is relevant",
           function="precision_at_k",
           conventions=("pr_denominator",) + _TIES_USERS, default=True, popularity=True,
           kernel=_precision),
    Metric("recall", "ranking", "per_k", "recall@k",
           meaning="share of the user's relevant items found in the top k",
           function="recall_at_k",
           conventions=("pr_denominator",) + _TIES_USERS, default=True, popularity=True,
           kernel=_recall),
    Metric("hit_rate", "ranking", "per_k", "hit rate@k",
           meaning="share of users with a relevant item in the top k",
           function="hit_rate_at_k",
           conventions=_TIES_USERS, default=True, popularity=True, kernel=_hit_rate),
    Metric("map", "ranking", "per_k", "average precision",
           meaning="average precision over the relevant items in the top k",
           function="average_precision",
           conventions=("denominator",) + _TIES_USERS, default=True, popularity=True,
           kernel=_average_precision),
    Metric("mrr", "ranking", "none", "reciprocal rank",
           meaning="1 / rank of the first relevant item",
           function="reciprocal_rank",
           conventions=_TIES_USERS, default=True, popularity=True, kernel=_reciprocal_rank),
    Metric("ndcg", "ranking", "per_k", "NDCG",
           meaning="discounted gain of the top k / the best possible",
           function="ndcg",
           conventions=("gain", "ideal") + _TIES_USERS, default=True, popularity=True,
           kernel=_ndcg),
    Metric("mrr@k", "ranking", "per_k", "reciprocal rank@k",
           meaning="1 / rank of the first relevant item, 0 below rank k",
           row="mrr", conventions=_TIES_USERS,
           kernel=_reciprocal_rank),
    Metric("r_precision", "ranking", "none", "R-precision",
           meaning="precision at R, the user's number of relevant items",
           function="r_precision",
           conventions=_TIES_USERS, kernel=_r_precision),
    Metric("bpref", "ranking", "none", "bpref",
           meaning="relevant items ranked above judged non-relevant ones",
           function="bpref", conventions=_TIES_USERS,
           kernel=_bpref),
    Metric("rbp", "ranking", "none", "RBP",
           meaning="expected relevance read by a user who goes on with probability p",
           function="rbp", graded=True,
           conventions=("rbp_p", "max_grade") + _TIES_USERS, kernel=_rbp),
    Metric("err", "ranking", "per_k", "ERR",
           meaning="expected 1 / rank where a cascading user stops, satisfied",
           function="err", graded=True,
           conventions=("max_grade",) + _TIES_USERS, kernel=_err),
    Metric("logloss", "probability", "none", "log loss",
           meaning="mean of -log(probability given to the actual label)",
           per_user=False, higher_is_better=False,
           conventions=_FILTERS, fixed=_NATURAL_LOG),
    Metric("ne", "probability", "none", "normalized entropy",
           meaning="log loss / log loss of the base rate",
           per_user=False,
           higher_is_better=False, conventions=_FILTERS, fixed=_NATURAL_LOG),
    Metric("brier", "probability", "none", "Brier score",
           meaning="mean squared error of the scores as probabilities",
           per_user=False, higher_is_better=False,
           conventions=_FILTERS, fixed=""),
    Metric("ece", "probability", "none", "expected calibration error",
           meaning="rows-weighted distance from the diagonal of the reliability diagram",
           per_user=False,
           higher_is_better=False, conventions=_FILTERS, fixed=f"bins={ECE_BINS} uniform"),
    Metric("catalog_coverage", "beyond", "per_k", "catalog coverage",
           meaning="share of the catalogue in some user's top k",
           per_user=False,
           catalogue_value=_catalog_coverage),
    Metric("distributional_coverage", "beyond", "per_k", "distributional coverage",
           meaning="entropy of how often items are in a top k",
           per_user=False,
           catalogue_value=_distributional_coverage),
    Metric("gini", "beyond", "per_k", "Gini index of exposure",
           meaning="inequality of how often items are in a top k",
           per_user=False,
           higher_is_better=False,
           catalogue_value=_gini),
    Metric("novelty", "beyond", "per_k", "novelty",
           meaning="mean self-information of the recommended items",
           reads_popularity=True,
           list_value=_novelty),
    Metric("diversity", "beyond", "per_k", "intra-list diversity",
           meaning="mean dissimilarity of the pairs in a top k",
           reads_similarity=True,
           list_value=_diversity, left_out="user(s) with fewer than 2 items"),
    Metric("serendipity", "beyond", "per_k", "serendipity",
           meaning="relevant and unlike the user's history",
           reads_similarity=True,
           list_value=_serendipity, left_out="user(s) without history"),
    Metric("personalization", "beyond", "per_k", "personalization",
           meaning="1 - overlap of two users' top k",
           list_value=_personalization_per_list,
           catalogue_value=_personalization),
    Metric("arp", "beyond", "per_k", "average recommendation popularity",
           meaning="mean popularity of the recommended items",
           reads_popularity=True,
           list_value=_arp),
    Metric("aplt", "beyond", "per_k", "average percentage of long-tail items",
           meaning="share of long-tail items in the top k",
           reads_popularity=True,
           list_value=_aplt),
)
METRIC: dict[str, Metric] = {m.name: m for m in REGISTRY}
#: What each table row's number says (``mrr@k`` shares ``mrr``'s rows: the first row wins).
MEANING: dict[str, str] = {}
for _m in REGISTRY:
    MEANING.setdefault(_m.table_name, _m.meaning)


def names(*families: Family) -> tuple[str, ...]:
    """The names of the metrics of some families (all of them without), in report order."""
    return tuple(m.name for m in REGISTRY if not families or m.family in families)


#: Names accepted by ``evaluate(metrics=...)`` besides the beyond-accuracy ones, in report order.
METRICS = names("pairwise", "ranking", "probability")
#: The metrics computed when ``metrics=None``.
DEFAULT_METRICS = tuple(m.name for m in REGISTRY if m.default)
#: Metrics that are means over users of a ranked list's value.
RANKING = names("ranking")
#: Ranking metrics with one value per user, not one per cut-off.
UNCUT = tuple(m.name for m in REGISTRY if m.family == "ranking" and m.cut == "none")
#: Metrics that compare rows of different lists, or the rows of a list with each other, with no
#: order of tied documents: undefined under ``ties="trec"``.
PAIRWISE = names("pairwise")
#: Metrics that read the scores as probabilities of relevance (grade > 0).
PROBABILITY_METRICS = names("probability")
#: Metrics that read ``max_grade`` (resolved once, from the whole truth, when not given).
GRADED = tuple(m.name for m in REGISTRY if m.graded)
#: Metric names of :func:`recmetrics.beyond_accuracy`, in the order they are reported.
BEYOND_METRICS = names("beyond")
#: Beyond-accuracy metrics with a value per user (averaged over the users where it is defined).
PER_USER_BEYOND = tuple(m.name for m in REGISTRY if m.family == "beyond" and m.per_user)
#: Beyond-accuracy metrics that read the items' popularity in the history.
READS_POPULARITY = tuple(m.name for m in REGISTRY if m.reads_popularity)
#: Beyond-accuracy metrics that sum the similarity of pairs of items (item features, or
#: co-occurrence in the history): the costly ones.
READS_SIMILARITY = tuple(m.name for m in REGISTRY if m.reads_similarity)
#: Metrics whose best value is the smallest; every other metric is better when larger.
LOWER_IS_BETTER: frozenset[str] = frozenset(m.name for m in REGISTRY if not m.higher_is_better)
#: Ranking metrics defined on a slice of the items (``by="popularity"``).
POPULARITY_METRICS = tuple(m.name for m in REGISTRY if m.popularity)
#: The public single-list functions of :mod:`recmetrics.ranking` and their metrics.
BY_FUNCTION: dict[str, Metric] = {m.function: m for m in REGISTRY if m.function}
#: Beyond-accuracy metrics whose row is the mean of the lists' own values (personalization's
#: comes from the exposure sums: a list's value compares it with every other list).
AVERAGED_BEYOND = tuple(m.name for m in REGISTRY
                        if m.list_value is not None and m.catalogue_value is None)
#: Beyond-accuracy metrics whose list value compares the list with every other list
#: (personalization): no partition holds what a user's value needs.
COMPARES_LISTS = tuple(m.name for m in REGISTRY
                       if m.list_value is not None and m.catalogue_value is not None)


def beyond_per_user(top, ctx, metrics, everyone=None) -> dict[str, np.ndarray]:
    """Each list's value of the beyond-accuracy metrics of ``metrics`` that have one (NaN where
    undefined): the rows' ``list_value``. ``everyone``: the exposure summed over every user
    and the number of lists, when ``top`` holds only some of them."""
    return {name: METRIC[name].list_value(top, ctx, everyone)  # type: ignore[misc]
            for name in metrics if METRIC[name].list_value is not None}


def beyond_sums(top, ctx, metrics, per_user: dict | None = None) -> _kernels.BeyondSums:
    """The :class:`~recmetrics._kernels.BeyondSums` of the lists of ``top`` (``per_user``: their
    values already computed, reused)."""
    averaged = [m for m in metrics if m in AVERAGED_BEYOND]
    if per_user is None:
        per_user = beyond_per_user(top, ctx, averaged)
    return with_totals(exposure_sums(top, ctx), {m: per_user[m] for m in averaged
                                                 if m in per_user})


def exposure_sums(top, ctx) -> _kernels.BeyondSums:
    """The per-item sums of :class:`~recmetrics._kernels.BeyondSums` over the lists of
    ``top``, without the lists' own values (see :func:`with_totals`)."""
    certain, log_miss = _kernels.coverage_parts(top, ctx.n_items)
    s, q = _kernels.personalization_parts(top, ctx.n_items)
    return _kernels.BeyondSums(n_lists=int(np.count_nonzero(top.length)), exposure=s,
                               certain=certain, log_miss=log_miss, p_square=q)


def with_totals(sums: _kernels.BeyondSums, means: dict[str, np.ndarray]) -> _kernels.BeyondSums:
    """``sums`` with the totals and counts of the lists' values ``means`` (per metric whose
    row averages them, NaN where undefined)."""
    sums.totals = {m: float(np.nansum(v)) for m, v in means.items()}
    sums.counts = {m: int(np.count_nonzero(~np.isnan(v))) for m, v in means.items()}
    return sums


def beyond_values(sums, ctx, metrics, k: int) -> dict[str, float]:
    """Each beyond-accuracy metric of ``metrics`` from the sums over every list (NaN where
    undefined): the row's ``catalogue_value``, or the mean of the lists' values."""
    out = {}
    for name in metrics:
        row = METRIC[name]
        if row.catalogue_value is not None:
            out[name] = row.catalogue_value(sums, ctx, k)
        else:
            n = sums.counts.get(name, 0)
            out[name] = sums.totals[name] / n if n else float("nan")
    return out


def scope(convention: str) -> tuple[str, ...]:
    """The metrics whose number a convention changes, in report order."""
    return tuple(m.name for m in REGISTRY if convention in m.conventions)


def table_rows(metric: str, ks) -> list[tuple[str, int | None]]:
    """The (table metric name, k) of each row a metric of ``metrics=`` makes."""
    m = METRIC[metric]
    return [(m.table_name, None)] if m.cut == "none" else [(m.table_name, int(k)) for k in ks]


def n_rows(metrics, ks) -> int:
    """How many rows of the table these metrics make at these cut-offs."""
    return sum(len(table_rows(m, ks)) for m in metrics)


def row_metric(table_name: str, cut: int | None) -> Metric | None:
    """The metric of ``metrics=`` whose rows are named ``table_name``, with (``cut`` given) or
    without a cut-off: ``("mrr", 10)`` is ``mrr@k``, ``("mrr", None)`` is ``mrr``."""
    want = "none" if cut is None else "per_k"
    return next((m for m in REGISTRY if m.table_name == table_name and m.cut == want), None)


def table_names() -> tuple[str, ...]:
    """The distinct metric names of table rows, in report order."""
    return tuple(dict.fromkeys(m.table_name for m in REGISTRY))
