"""What one call of ``evaluate``, ``evaluate_per_user`` or ``compare`` asks for, checked once.

The public functions (:mod:`recmetrics.evaluation`) spell every option once, in
their signatures; their first step turns the keyword arguments into the typed,
frozen objects of this module, and every engine (in memory, Dask, Spark)
receives those objects, never a re-spelled signature:

* :class:`Columns`: the input column names;
* :class:`~recmetrics._options.Options`: cut-offs, metrics and every convention;
* :class:`~recmetrics._beyond.BeyondOptions`: the beyond-accuracy metrics and
  their inputs;
* :class:`Resampling`: the bootstrap of the intervals (``ci``);
* :class:`SliceRequest`: ``by=`` slices;
* :class:`Evaluation` and :class:`Comparison`: one call's objects together.

An engine adds only the refusals of what it cannot compute yet
(:meth:`Resampling.poisson_only`, ``unscored="below"``, ...), each naming the
engine.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._beyond import BeyondOptions
from ._pipeline import BOOTSTRAPS, check_options, check_rank
from ._metrics import METRICS, PROBABILITY_METRICS
from ._options import Options, conventions_of
from ._validation import (ADJUSTMENTS, Adjustment, check_n_resamples, check_option, check_probability,
                          check_seed, check_slicing, check_whole)


@dataclass(frozen=True)
class Columns:
    """The column names of the inputs (``rank``: a column of ranks read instead of ``score``)."""

    user: str = "user"
    item: str = "item"
    score: str = "score"
    label: str = "label"
    rank: str | None = None

    @property
    def names(self) -> dict[str, Any]:
        """As keyword arguments (``Prepared(..., **columns.names)``)."""
        return {"user": self.user, "item": self.item, "score": self.score, "label": self.label,
                "rank": self.rank}

    @property
    def default_label(self) -> bool:
        """The label column has its default name: a truth without it is positives only."""
        return self.label == "label"


@dataclass(frozen=True)
class Resampling:
    """The bootstrap of the intervals: ``ci`` None gives none."""

    ci: float | None = None
    n_resamples: int = 1000
    seed: Any = 0
    bootstrap: str = "poisson"

    @classmethod
    def checked(cls, *, ci, n_resamples, seed, bootstrap) -> Resampling:
        bootstrap = check_option("bootstrap", "poisson" if bootstrap is None else bootstrap,
                                 BOOTSTRAPS)
        if ci is not None:
            ci = check_probability("ci", ci)
            n_resamples = check_n_resamples(n_resamples)
        return cls(ci, n_resamples, check_seed(seed), bootstrap)

    @property
    def names(self) -> dict[str, Any]:
        return {"ci": self.ci, "n_resamples": self.n_resamples, "seed": self.seed,
                "bootstrap": self.bootstrap}

    def poisson_only(self, engine: str) -> None:
        """Only the Poisson bootstrap splits over partitions of users (or slices)."""
        if self.bootstrap != "poisson":
            raise ValueError("bootstrap='multinomial' draws users from one list held in one "
                             f"process; on {engine} use bootstrap='poisson' (the default here), "
                             "which gives the same interval as evaluate(..., "
                             "bootstrap='poisson') on pandas")


@dataclass(frozen=True)
class SliceRequest:
    """``by=`` (distinct names), the ``users=`` attributes (a frame of the caller's, checked
    by the engine that reads it) and ``min_slice_size``."""

    by: list[str]
    users: Any
    min_slice_size: int

    @classmethod
    def checked(cls, by, users, min_slice_size) -> SliceRequest | None:
        """None without ``by`` and ``users``; ``users`` alone is refused."""
        if by is None and users is None:
            return None
        by, min_slice_size = check_slicing(by, min_slice_size)
        return cls(by, users, min_slice_size)


def check_npartitions(npartitions) -> int | None:
    """The number of partitions (Dask) or groups (Spark) users are shuffled into."""
    if npartitions is None:
        return None
    return check_whole("npartitions", npartitions, minimum=1, maximum=10**7, example="8")


def options_of(k, b: BeyondOptions, conventions: dict) -> Options:
    """The engine's options: its own metrics (none when only beyond metrics are asked for)."""
    o = check_options(k=k, metrics=b.standard or None, **conventions)
    if b.metrics and (o.ties == "trec" or o.min_grade is not None or o.judged_only):
        raise ValueError("the beyond-accuracy metrics take ties='average', 'optimistic' or "
                         "'pessimistic' and no min_grade or judged_only; evaluate them "
                         "separately from the trec_eval conventions")
    return o.replace(metrics=()) if b.only else o


@dataclass(frozen=True)
class Evaluation:
    """One call of ``evaluate`` or ``evaluate_per_user``, checked."""

    options: Options
    beyond: BeyondOptions
    columns: Columns
    resampling: Resampling
    slicing: SliceRequest | None
    named_metrics: bool            # metrics= was given (not the default set)
    npartitions: int | None

    @classmethod
    def checked(cls, arguments: Mapping[str, Any]) -> Evaluation:
        """From the public function's keyword arguments (its ``locals()``); an option the
        function does not take gets its default (``evaluate_per_user`` has no ``ci``, no
        ``by``, no ``baselines``)."""
        a = dict(arguments)
        metrics = a["metrics"]
        b = BeyondOptions.checked(metrics, known=METRICS, history=a["history"],
                                  catalog=a["catalog"], item_features=a["item_features"],
                                  head_share=a["head_share"], unseen=a["unseen"],
                                  baselines=a.get("baselines", False), by=a.get("by"))
        o = options_of(a["k"], b, conventions_of(a))
        columns = Columns(a["user"], a["item"], a["score"], a["label"], a["rank"])
        check_rank(columns.rank, o)
        asked = [m for m in o.metrics if m in PROBABILITY_METRICS]
        if b.baselines and asked:
            raise ValueError(f"baselines=True scores rows by a constant and by item popularity, "
                             f"which are no probabilities, so {', '.join(asked)} cannot be "
                             "computed for them; leave them out of metrics, or evaluate without "
                             "baselines")
        resampling = Resampling.checked(ci=a.get("ci"), n_resamples=a.get("n_resamples", 1000),
                                        seed=a.get("seed", 0), bootstrap=a.get("bootstrap"))
        slicing = SliceRequest.checked(a.get("by"), a.get("users"),
                                       a.get("min_slice_size", 30))
        return cls(o, b, columns, resampling, slicing, named_metrics=metrics is not None,
                   npartitions=check_npartitions(a.get("npartitions")))


@dataclass(frozen=True)
class Comparison:
    """One call of ``compare``, checked (its models are read by the engine that runs it)."""

    options: Options
    columns: Columns               # score and rank: the arguments, one or one per model
    n_resamples: int
    seed: Any
    alpha: float
    baseline: str | None
    correction: Adjustment
    slicing: SliceRequest | None
    npartitions: int | None

    @classmethod
    def checked(cls, arguments: Mapping[str, Any]) -> Comparison:
        a = dict(arguments)
        return cls(check_options(k=a["k"], metrics=a["metrics"], **conventions_of(a)),
                   Columns(a["user"], a["item"], a["score"], a["label"], a["rank"]),
                   n_resamples=check_n_resamples(a["n_resamples"]), seed=check_seed(a["seed"]),
                   alpha=check_probability("alpha", a["alpha"]), baseline=a["baseline"],
                   correction=check_option("correction", a["correction"], ADJUSTMENTS),
                   slicing=SliceRequest.checked(a.get("by"), a.get("users"),
                                                a.get("min_slice_size", 30)),
                   npartitions=check_npartitions(a.get("npartitions")))
