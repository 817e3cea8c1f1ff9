r"""The beyond-accuracy metrics' input and their place in :func:`recmetrics.evaluate`.

:class:`BeyondInputs` validates and integer-codes the input of
:func:`recmetrics.beyond_accuracy` (pred, history, truth, catalogue, item
features) and builds the context every partition of users shares
(:class:`recmetrics._kernels.BeyondContext`). :func:`evaluate_rows` runs the
same kernels for :func:`recmetrics.evaluate`: one row per metric and
cut-off, each per-user metric's values over the engine's users (so
:func:`recmetrics.evaluate_per_user` shows them) and, as a ratio of per-user
sums, its bootstrap interval from the engine's resampling of users
(:func:`recmetrics._pipeline.ratio_intervals`). :func:`baseline_scores` gives
the random and most-popular baselines' scores of the model's own candidate
rows; :func:`baseline_prepared` scores and ranks the model's prepared rows
so, for :func:`recmetrics.evaluate`'s ``baselines=True``. :func:`similarity_in_background`
builds history's co-occurrence similarity while the model's rows are prepared and, for
the random baseline, the costly part of its diversity (:func:`_whole_lists`).
"""
from __future__ import annotations

import functools
import warnings
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _kernels, _metrics, _pipeline, _threads
from ._ids import codes, locate, user_hash
from ._metrics import (AVERAGED_BEYOND, BEYOND_METRICS, COMPARES_LISTS, PER_USER_BEYOND,
                       READS_POPULARITY, READS_SIMILARITY)
from ._validation import (
    UNSEEN,
    RecmetricsWarning,
    as_catalog,
    as_frame,
    caller_stacklevel,
    check_head_share,
    check_known_items,
    check_metrics,
    check_option,
    check_unique_keys,
    feature_matrix,
    numeric_column,
)


def present(codes: np.ndarray, n: int) -> np.ndarray:
    """Boolean mask of the codes (< n) that occur."""
    mask = np.zeros(n, dtype=bool)
    mask[codes] = True
    return mask



def ranked_items(prep: _pipeline.Prepared) -> np.ndarray:
    """The item code of each ranked row of ``prep`` (built with ``keep_items=True``)."""
    if prep.items is None:
        raise RuntimeError("the beyond-accuracy metrics need Prepared(..., keep_items=True)")
    return prep.items

class BeyondInputs:
    """Validated, integer-coded input of :func:`beyond_accuracy` and its context.

    Built from the frames (:func:`recmetrics.beyond_accuracy`, which ranks the
    rows itself) or, inside :func:`recmetrics.evaluate`, by
    :meth:`from_prepared` from the rows the engine already checked, coded and
    ranked (only history, catalogue and features are coded here).
    """

    #: with :meth:`from_prepared`: the Prepared's item ids, and their codes here
    prepared_item_ids: pd.Index | None = None
    item_map: np.ndarray | None = None

    def __init__(self, pred, *, history, truth, catalog, item_features, metrics, head_share,
                 unseen, user, item, score, label, rank: str | None = None):
        as_frame("pred", pred, {"user": user, "item": item,
                                **({"rank": rank} if rank is not None else {"score": score})})
        self.scores = -numeric_column("pred", pred, rank) if rank is not None \
            else numeric_column("pred", pred, score)
        self.ranked = False
        frames = [("pred", pred)]
        if history is not None:
            as_frame("history", history, {"user": user, "item": item})
            frames.append(("history", history))
        if truth is not None:
            as_frame("truth", truth, {"user": user, "item": item, "label": label})
            frames.append(("truth", truth))
        self.metrics = self._metrics(metrics, history, truth, item_features)
        item_frames = self._item_frames(frames, catalog, item_features, item)
        user_codes, self.user_ids = codes(user, *frames)
        item_codes = self._code_items(item_frames, item)
        self.n_users = len(self.user_ids)
        self.n_lists = self.n_users
        by_name = {name: (u, item_codes[name]) for (name, _), u in zip(frames, user_codes)}
        self.users, self.items = by_name["pred"]
        keys = self.users.astype(np.int64) * self.n_items + self.items
        check_unique_keys("pred", keys, pred, user, item)

        # relevance grades of pred's rows, from truth
        self.grades = np.zeros(self.scores.size)
        truth_relevant: np.ndarray | None = None
        if truth is not None:
            t_users, t_items = by_name["truth"]
            t_keys = t_users.astype(np.int64) * self.n_items + t_items
            check_unique_keys("truth", t_keys, truth, user, item)
            t_grades = numeric_column("truth", truth, label, grades=True)
            where = locate(keys, t_keys, self.n_users * self.n_items)
            found = where >= 0
            self.grades[found] = t_grades[where[found]]
            truth_relevant = t_items[t_grades > 0]
        self._build(listed=[item_codes[name] for name, _ in frames],
                    sources=[name for name, _ in frames], catalog=item_codes.get("catalog"),
                    history=by_name.get("history"), truth_relevant=truth_relevant,
                    features=item_codes.get("item_features"),
                    item_features=item_features, item=item, head_share=head_share,
                    unseen=unseen)

    @classmethod
    def from_prepared(cls, prep: _pipeline.Prepared, *, history, truth, catalog, item_features,
                      metrics, head_share, unseen, user, item, label,
                      similarity: Future | None = None) -> BeyondInputs:
        """The input of :func:`evaluate_rows`: ``prep``'s ranked rows, user and item codes.

        ``truth`` is the relevance source (the truth frame, or pred's own
        label column); ``prep`` judged pred's rows from it already, so its
        item column is read only for the catalogue and, without history, for
        popularity. History, the catalogue and the features are coded
        jointly with ``prep``'s item ids, and history's users with its users.
        ``similarity`` (from :func:`similarity_in_background`) is history's
        co-occurrence similarity, built meanwhile on history's own codes.
        """
        self = object.__new__(cls)
        self.ranked = True
        self.metrics = cls._metrics(metrics, history, truth, item_features)
        self.users, self.scores, self.grades = prep.lists, prep.scores, prep.grades
        self.user_ids, self.n_users = prep.users, prep.n_users
        self.n_lists = prep.n_users
        item_frames = [("pred", pd.DataFrame({item: np.asarray(prep.item_ids)})),
                       ("truth", truth)]
        h_users: np.ndarray | None = None
        if history is not None:
            as_frame("history", history, {"user": user, "item": item})
            item_frames.append(("history", history))
            if similarity is None:  # else the similarity's own codes of history's users serve
                (_, h_users), joint_users = codes(user, ("pred", pd.DataFrame({user: prep.users})),
                                                  ("history", history))
                self.n_users = len(joint_users)    # history's own users count in co-occurrence
        by_name = self._code_items(self._item_frames(item_frames, catalog, item_features, item),
                                   item)
        # prep's item codes -> these codes (for a baseline's rows too, see reranked)
        self.prepared_item_ids, self.item_map = prep.item_ids, by_name["pred"]
        self.items = self.item_map[ranked_items(prep)]
        t_items = by_name["truth"]
        truth_relevant = t_items[numeric_column("truth", truth, label, grades=True) > 0] \
            if history is None else None
        with_history = history is not None
        self._build(listed=[self.items] + ([by_name["history"]] if with_history else []) + [t_items],
                    sources=["pred"] + (["history"] if with_history else []) + ["truth"],
                    catalog=by_name.get("catalog"),
                    history=(h_users, by_name["history"]) if with_history else None,
                    truth_relevant=truth_relevant, features=by_name.get("item_features"),
                    item_features=item_features, item=item, head_share=head_share,
                    unseen=unseen, pending=similarity)
        return self

    def _uses_features(self, item_features) -> bool:
        return item_features is not None and bool(set(READS_SIMILARITY) & set(self.metrics))

    def _item_frames(self, frames: list, catalog, item_features, item: str) -> list:
        """``frames`` (name, frame) followed by the catalogue and, when a metric uses them,
        the item features, both checked."""
        item_frames = list(frames)
        if catalog is not None:
            item_frames.append(("catalog", as_catalog(catalog, item)))
        if self._uses_features(item_features):
            as_frame("item_features", item_features, {"item": item})
            item_frames.append(("item_features", item_features))
        return item_frames

    def _code_items(self, item_frames: list, item: str) -> dict[str, np.ndarray]:
        """The item codes of each of ``item_frames`` by its name, coded jointly; sets
        ``item_ids`` and ``n_items``."""
        item_codes, self.item_ids = codes(item, *item_frames, ordered=False)
        self.n_items = len(self.item_ids)
        return {name: c for (name, _), c in zip(item_frames, item_codes)}

    def _build(self, *, listed: list[np.ndarray], sources: list[str], catalog: np.ndarray | None,
               history: tuple[np.ndarray | None, np.ndarray] | None,
               truth_relevant: np.ndarray | None,
               features: np.ndarray | None, item_features, item: str, head_share: float,
               unseen: str, pending: Future | None = None) -> None:
        """The catalogue, popularity, similarity and the users' own history, from item codes:
        ``listed`` those of the frames named ``sources`` (pred first), ``catalog``,
        ``history`` (user and item codes), ``truth_relevant`` and ``features`` those of
        ``catalog=``, history, truth's relevant rows and ``item_features=``; ``pending``
        (a :class:`HistorySimilarity` being built on history's own codes, by
        :func:`similarity_in_background`) the co-occurrence similarity and history's
        items by user, which history's user codes (then None) are not needed for."""
        # the catalogue
        self.catalogue = np.zeros(self.n_items, dtype=bool)
        if catalog is not None:
            self.catalogue[catalog] = True
            outside = np.flatnonzero(present(self.items, self.n_items) & ~self.catalogue)
            check_known_items("catalog", "that pred scores", outside, self.item_ids,
                              "add them to catalog, or drop their rows from pred")
            self.catalogue_source = "catalog"
        else:
            for codes_ in listed:
                self.catalogue[codes_] = True
            self.catalogue_source = " + ".join(sources)

        # popularity
        popularity = information = tail = None
        self.popularity_source = None
        if history is not None:
            pop_items, self.popularity_source = history[1], "history"
        elif truth_relevant is not None:
            pop_items, self.popularity_source = truth_relevant, "truth's relevant rows"
        if self.popularity_source is not None and set(READS_POPULARITY) & set(self.metrics):
            popularity = np.bincount(pop_items, minlength=self.n_items).astype(np.float64)
            self.n_popularity_rows = int(pop_items.size)
            if self.n_popularity_rows == 0:
                raise ValueError(f"{self.popularity_source} holds no rows to count popularity "
                                 "from; pass history= (the training log)")
            information = _kernels.item_information(popularity, self.n_popularity_rows,
                                                    "zero" if unseen == "zero" else "add_one")
            tail = _kernels.long_tail(popularity, head_share)
            self.n_head = int(np.count_nonzero(~tail))

        # similarity and the users' own history
        similarity: _kernels.FeatureSimilarity | _kernels.CooccurrenceSimilarity | None = None
        history_index = None
        whole_lists = None
        self.uses_features = features is not None
        if set(READS_SIMILARITY) & set(self.metrics):
            if features is not None:
                vectors = feature_matrix(item_features, item)
                if _kernels.distinct(features).size < features.size:
                    dup = pd.Index(features).duplicated()
                    first = int(np.flatnonzero(dup)[0])
                    raise ValueError(f"item_features has {int(dup.sum())} duplicate item(s) (first: "
                                     f"{item}={item_features[item].iloc[first]!r} in row {first}); "
                                     "keep one row per item")
                full = np.zeros((self.n_items, vectors.shape[1]))
                full[features] = vectors
                self.has_features = np.zeros(self.n_items, dtype=bool)
                self.has_features[features] = True
                similarity = _kernels.FeatureSimilarity(full)
                self.similarity_source = "cosine of item_features"
            elif pending is not None:   # built on history's own codes: mapped onto these
                built = pending.result()
                h_items = _kernels.built(history, "history")[1]
                item_map = built.item_map(h_items, self.n_items)
                similarity = built.similarity.recoded(item_map)
                whole_lists = built.whole_lists_of(self.user_ids[:self.n_lists],
                                                   self.item_ids, item_map)
                if "serendipity" in self.metrics:
                    history_index = built.history_index(self.user_ids[:self.n_lists], item_map,
                                                        self.n_items)
            else:
                h_users, h_items = _kernels.built(history, "history")
                similarity = _kernels.CooccurrenceSimilarity(
                    _kernels.built(h_users, "history's user codes"), h_items, self.n_users,
                    self.n_items)
            if features is None:
                self.similarity_source = "cosine of the items' user sets in history"
            if "serendipity" in self.metrics and history_index is None:
                h_users, h_items = _kernels.built(history, "history")
                if isinstance(similarity, _kernels.CooccurrenceSimilarity):
                    # its distinct (user, item) pairs by user, built already on these codes
                    start, items_ = similarity.by_user.indptr, similarity.by_user.indices
                    count = np.diff(start)
                else:
                    h_users = _kernels.built(h_users, "history's user codes")
                    pairs = np.sort(h_users.astype(np.int64) * self.n_items + h_items)
                    pairs = pairs[_kernels.starts(pairs)]          # distinct (user, item) pairs
                    count = np.bincount(pairs // self.n_items, minlength=self.n_users)
                    start, items_ = np.cumsum(count) - count, pairs % self.n_items
                # by list (history's users without a list come after the listed ones)
                history_index = (start[:self.n_lists], count[:self.n_lists], items_)
                if features is not None:
                    lacking = np.flatnonzero(present(h_items, self.n_items) & ~self.has_features)
                    check_known_items("item_features", "of history", lacking,
                                      self.item_ids, "add their features (serendipity compares "
                                      "each recommended item with the user's history items)")
        self.context = _kernels.BeyondContext(
            n_items=self.n_items, catalogue=self.catalogue, popularity=popularity,
            information=information, tail=tail, similarity=similarity, history=history_index,
            whole_lists=whole_lists)

    @staticmethod
    def _metrics(metrics, history, truth, item_features) -> list[str]:
        """``metrics=``: None for every metric the inputs allow; a named one must be computable."""
        needs = {"novelty": history is not None or truth is not None,
                 "arp": history is not None or truth is not None,
                 "aplt": history is not None or truth is not None,
                 "diversity": history is not None or item_features is not None,
                 "serendipity": history is not None and truth is not None}
        if metrics is None:
            return [m for m in BEYOND_METRICS if needs.get(m, True)]
        names = check_metrics(metrics, BEYOND_METRICS)
        advice = {"novelty": "history= (the training log) or truth=",
                  "arp": "history= (the training log) or truth=",
                  "aplt": "history= (the training log) or truth=",
                  "diversity": "item_features= or history= (for item co-occurrence)",
                  "serendipity": "history= (each user's own items) and truth= (what is relevant)"}
        for name in names:
            if not needs.get(name, True):
                raise ValueError(f"metrics={name!r} needs {advice[name]}; pass it, or leave "
                                 f"{name!r} out of metrics")
        return names

    @classmethod
    def left_out(cls, metrics, history, truth, item_features) -> list[str]:
        """With ``metrics=None``: a note per metric the inputs do not allow, saying why."""
        if metrics is not None:
            return []
        kept = cls._metrics(None, history, truth, item_features)
        why = {"novelty": "history= (the training log) or truth= (popularity)",
               "arp": "history= (the training log) or truth= (popularity)",
               "aplt": "history= (the training log) or truth= (popularity)",
               "diversity": "item_features= or history= (item similarity)",
               "serendipity": "history= (each user's own items) and truth= (what is relevant)"}
        return [f"{name} left out: it needs {why[name]}" for name in BEYOND_METRICS
                if name not in kept]

    def reranked(self, prep: _pipeline.Prepared) -> BeyondInputs:
        """The same input with the ranked rows of ``prep``, the same rows as this input's
        scored otherwise (a baseline's): popularity, similarity and the catalogue are kept."""
        if self.item_map is None or not (prep.item_ids.equals(self.prepared_item_ids)
                                         and prep.users.equals(self.user_ids)):
            raise RuntimeError("a baseline's rows must be the model's own (user, item) rows")
        copy = object.__new__(BeyondInputs)
        copy.__dict__.update(self.__dict__)
        copy.users, copy.scores, copy.grades = prep.lists, prep.scores, prep.grades
        copy.items = self.item_map[ranked_items(prep)]
        return copy

    def top_k(self, k: int, ties: str) -> _kernels.TopK:
        if self.ranked:
            return _kernels.top_k_ranked(self.users, self.items, self.scores, self.grades,
                                         self.n_lists, k, ties=ties)
        return _kernels.top_k(self.users, self.items, self.scores, self.n_lists, k,
                              grades=self.grades, ties=ties)

    def check_top(self, top: _kernels.TopK, unseen: str) -> None:
        """Refusals that depend on which items can reach a top k."""
        if self.uses_features:
            lacking = np.flatnonzero(present(top.items, self.n_items) & ~self.has_features)
            check_known_items("item_features", "that can reach a top k", lacking, self.item_ids,
                              "add their features (diversity and serendipity compare them)")
        if unseen == "error" and "novelty" in self.metrics:
            lacking = np.flatnonzero(present(top.items, self.n_items)
                                     & (self.context.popularity == 0))
            check_known_items(self.popularity_source or "history", "that can reach a top k", lacking,
                              self.item_ids, "pass unseen='add_one' or 'zero' to give them a "
                              "novelty, or add their interactions to history")

    def conventions(self, metric: str, ties: str, head_share: float, unseen: str) -> str:
        n_catalogue = int(np.count_nonzero(self.catalogue))
        text = {
            "catalog_coverage": f"expected distinct items / {n_catalogue:,} catalogue items "
                                f"({self.catalogue_source})",
            "distributional_coverage": "entropy in bits of the expected exposure counts",
            "gini": f"expected exposure counts over {n_catalogue:,} catalogue items, zeros "
                    "included; 0 = even",
            "personalization": "1 - mean over pairs of users of overlap / k",
        }
        if metric in READS_POPULARITY:
            source = f"{self.popularity_source} ({self.n_popularity_rows:,} rows)"
            text["novelty"] = f"mean -log2 p(i), p(i) from {source}; unseen items: {unseen}"
            text["arp"] = f"mean rows per item in {source}"
            text["aplt"] = (f"long tail = all but the {self.n_head:,} head items holding "
                            f"{head_share:.0%} of {source}")
        if metric in READS_SIMILARITY:
            text["diversity"] = f"mean pairwise 1 - similarity; {self.similarity_source}"
            text["serendipity"] = (f"sum over relevant (label > 0) top-k items of 1 - mean "
                                   f"similarity to the user's history, / list length; "
                                   f"{self.similarity_source}")
        return f"{text[metric]}; ties={ties}"




# --------------------------------------------------------------------------- inside evaluate


#: Catalogue-level metrics: no value per user, so no bootstrap interval over users.
AGGREGATE_ONLY = tuple(m for m in BEYOND_METRICS if m not in PER_USER_BEYOND)
#: The note of an aggregate-only row when intervals are asked for.
NO_INTERVAL = ("no interval: a catalogue-level value with no per-user value, which a bootstrap "
               "over users cannot resample")
#: Values of the ``model`` column when baselines are asked for.
MODELS = ("model", "random", "most_popular")


def _by_popularity(by) -> bool:
    """:func:`recmetrics._slices.by_popularity`, imported when a history is given: evaluating
    without ``by=`` needs nothing from slices."""
    from ._slices import by_popularity

    return by_popularity(by)


def _history_slices(by) -> bool:
    """``by=`` that reads the history: popularity slices, or activity (history rows per user)."""
    names = [by] if isinstance(by, str) else list(by or ())
    return "activity" in names or _by_popularity(by)


@dataclass(frozen=True)
class BeyondOptions:
    """The beyond-accuracy part of one :func:`recmetrics.evaluate` call, checked once.

    ``metrics`` are the beyond metrics asked for (empty: none), ``standard``
    the other names of ``metrics=`` (None: the default set; empty: none).
    """

    metrics: tuple[str, ...]
    standard: tuple[str, ...] | None
    history: Any
    catalog: Any
    item_features: Any
    head_share: float
    unseen: str
    baselines: bool

    @classmethod
    def checked(cls, metrics, *, known: tuple[str, ...], history, catalog, item_features,
                head_share, unseen, baselines, by=None) -> BeyondOptions:
        """Split ``metrics=`` into the engine's and the beyond ones; check the rest.

        ``by`` naming ``"popularity"`` (:mod:`recmetrics.slices`) uses ``history``."""
        standard: tuple[str, ...] | None
        beyond: tuple[str, ...]
        if metrics is None:
            standard, beyond = None, ()
        else:
            names = check_metrics(metrics, known + BEYOND_METRICS)
            beyond = tuple(m for m in names if m in BEYOND_METRICS)
            standard = tuple(m for m in names if m not in BEYOND_METRICS)
        if not isinstance(baselines, (bool, np.bool_)):
            raise ValueError(f"baselines={baselines!r} must be True or False")
        if baselines and history is None:
            raise ValueError("baselines=True needs history= (the training log): the most-popular "
                             "baseline scores each item by its rows there")
        if not beyond and not baselines:
            given = [name for name, value in (("history", history), ("catalog", catalog),
                                              ("item_features", item_features))
                     if value is not None and not (name == "history" and _history_slices(by))]
            if given:
                warnings.warn(f"{', '.join(given)} given but no beyond-accuracy metric asked for, "
                              f"so {'they are' if len(given) > 1 else 'it is'} not used; add e.g. "
                              "metrics=[..., 'novelty', 'catalog_coverage']", RecmetricsWarning,
                              stacklevel=caller_stacklevel())
        return cls(metrics=beyond, standard=standard, history=history, catalog=catalog,
                   item_features=item_features, head_share=check_head_share(head_share),
                   unseen=check_option("unseen", unseen, UNSEEN), baselines=bool(baselines))

    @property
    def only(self) -> bool:
        """Only beyond metrics were asked for."""
        return self.standard == ()

    def refuse_dask(self, engine: str = "Dask", *, baselines_only: bool = False) -> None:
        """What the distributed engines do not compute yet: refuse, never leave rows out.

        Their ``evaluate`` computes the beyond-accuracy rows but not the baselines
        (``baselines_only``); their ``evaluate_per_user`` neither's columns.
        """
        if baselines_only:
            if self.baselines:
                raise ValueError(f"baselines=True: the random and most-popular baselines are "
                                 f"computed on pandas input only, not on {engine} yet; pass "
                                 "pandas DataFrames (e.g. a sample of users), or leave it out")
            return
        asked = list(self.metrics) + (["baselines=True"] if self.baselines else [])
        given = [name for name, value in (("history", self.history), ("catalog", self.catalog),
                                          ("item_features", self.item_features))
                 if value is not None]
        if asked or given:
            raise ValueError(f"{', '.join(asked + [g + '=' for g in given])}: the beyond-accuracy "
                             f"per-user columns and baselines are computed on pandas input only, "
                             f"not on {engine} yet; pass pandas DataFrames (e.g. a sample of "
                             "users), or leave them out (evaluate gives the beyond-accuracy rows "
                             f"on {engine})")

    def conventions(self) -> dict:
        """What ``attrs["conventions"]`` records for the beyond rows."""
        return {"head_share": self.head_share, "unseen": self.unseen} if self.metrics else {}


@dataclass(frozen=True)
class HistorySimilarity:
    """History's co-occurrence similarity built on history's own codes, with those codes:
    :meth:`item_map` relates them to another coding of the same rows (the evaluation's,
    joint with pred's items), and :meth:`history_index` gives each of the evaluation's
    users their distinct history items in that coding."""

    similarity: _kernels.CooccurrenceSimilarity
    items: np.ndarray      # history's own item code of each row
    user_ids: pd.Index     # history's own distinct users (the rows of similarity.by_user)
    user: str              # history's user column
    #: pred's users and the squares of their whole candidate lists (:func:`_whole_lists`),
    #: computed after this in the background, when the random baseline's diversity needs them
    whole_lists: Future | None = None

    def whole_lists_of(self, list_ids: pd.Index, item_ids: pd.Index, item_map: np.ndarray
                       ) -> Callable[[], _kernels.WholeLists | None]:
        """The :class:`recmetrics._kernels.WholeLists` of the lists ``list_ids`` (canonical
        ids, as the evaluation codes them), when first asked for (waiting for them to be
        computed): pred's users matched by their distinct ids, coded jointly. None (they
        are computed again) unless pred's items were given this similarity's codes as the
        evaluation gives them (``item_ids`` and their codes here, ``item_map``)."""
        future = self.whole_lists

        @functools.cache
        def by_list() -> _kernels.WholeLists | None:
            if future is None:
                return None
            user_ids, items, own_item, whole = future.result()
            at_item = _positions(items, item_ids)
            if (at_item < 0).any() or not np.array_equal(item_map[at_item], own_item):
                return None
            at = _positions(list_ids, user_ids)
            found = at >= 0
            return _kernels.WholeLists(*(np.where(found, values[np.maximum(at, 0)], 0)
                                         for values in (whole.squares, whole.rows)))
        return by_list

    def item_map(self, items: np.ndarray, n_items: int) -> np.ndarray:
        """Each code of another coding of history's items (``items``, a code per row, of
        ``n_items`` in all) -> this coding's (-1: not in history). Both codings follow one
        id policy, so they group the rows alike; a coding that did not would change every
        count, and is refused rather than used."""
        to_own = np.full(n_items, -1, dtype=np.intp)
        to_own[items] = self.items
        if not (np.array_equal(to_own[items], self.items) and np.count_nonzero(to_own >= 0)
                == np.count_nonzero(np.bincount(self.items, minlength=1))):
            raise RuntimeError("history's rows are grouped differently by its own item ids and "
                               "jointly with pred's; its co-occurrence counts cannot be reused")
        return to_own

    def history_index(self, list_ids: pd.Index, item_map: np.ndarray,
                      n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Serendipity's history index of the users ``list_ids`` (canonical ids, as the
        evaluation codes them): per user the start and count of its distinct history items
        in the returned item codes (those of ``item_map``, ascending within a user, as
        the index built from those codes directly holds them; none for a user
        without history).

        The users are matched by their distinct ids, coded jointly under the id policy,
        not by hashing history's rows again.
        """
        user = self.user
        (lists, own), _ = codes(user, ("pred", pd.DataFrame({user: np.asarray(list_ids)})),
                                ("history", pd.DataFrame({user: np.asarray(self.user_ids)})))
        own_of = np.full(int(max(lists.max(initial=-1), own.max(initial=-1))) + 1, -1,
                         dtype=np.intp)
        own_of[own] = np.arange(own.size)
        own_user = own_of[lists]
        by_user = self.similarity.by_user
        seen = own_user >= 0
        per_user = np.diff(by_user.indptr)
        start = np.where(seen, by_user.indptr[:-1][np.maximum(own_user, 0)], 0)
        count = np.where(seen, per_user[np.maximum(own_user, 0)], 0)
        # this coding's item codes -> the caller's
        to_caller = np.full(self.similarity.n_items, -1, dtype=np.intp)
        mapped = np.flatnonzero(item_map >= 0)
        to_caller[item_map[mapped]] = mapped
        items = to_caller[by_user.indices]
        order_kept = to_caller[to_caller >= 0]
        if not (order_kept[1:] > order_kept[:-1]).all():
            # the codings order the items differently: each user's items sorted again
            keys = np.repeat(np.arange(per_user.size, dtype=np.int64), per_user) * n_items + items
            items = np.sort(keys) % n_items
        return start, count, items


def similarity_in_background(b: BeyondOptions, *, user: str, item: str, pred=None,
                             ties: str | None = None) -> Future | None:
    """Start building history's co-occurrence similarity (diversity and serendipity without
    ``item_features``) on history's own codes, before :func:`recmetrics.evaluate` prepares
    the scored rows, which it does not need: the product fills the core the preparation
    leaves idle. None when no metric asked for needs it.

    With ``baselines=True``, diversity and ``ties="average"`` (``pred`` and ``ties`` given),
    then the random baseline's costly part too, in a thread of its own: the squared norm of
    the sum of the unit vectors of each user's candidates (every row of a user is one tie
    group under a constant score), from pred's rows (:func:`_whole_lists`)."""
    if b.history is None or b.item_features is not None \
            or not set(READS_SIMILARITY) & set(b.metrics):
        return None
    as_frame("history", b.history, {"user": user, "item": item})
    whole: Future | None = None
    if b.baselines and "diversity" in b.metrics and ties == "average" and pred is not None:
        whole = Future()
    built = _threads.in_background(_history_similarity, b.history, user, item, whole)
    if whole is not None:
        _threads.in_background(_whole_lists, whole, built, pred, b.history, user, item)
    return built


def _history_similarity(history: pd.DataFrame, user: str, item: str,
                        whole_lists: Future | None = None) -> HistorySimilarity:
    (users,), user_ids = codes(user, ("history", history))
    (items,), item_ids = codes(item, ("history", history), ordered=False)
    # its blocks one after another: the caller's preparation runs on the other core
    similarity = _kernels.CooccurrenceSimilarity(users, items, len(user_ids), len(item_ids),
                                                 parallel=False)
    return HistorySimilarity(similarity, items, user_ids, user, whole_lists)


def _whole_lists(target: Future, built: Future, pred, history, user: str, item: str) -> None:
    """Sets ``target`` to pred's distinct users, the item ids of pred and history and their
    codes in ``built``'s similarity (-1: outside the history), and the
    :class:`recmetrics._kernels.WholeLists` of the users' candidates (all their rows);
    or to the exception that stopped it."""
    try:
        done: HistorySimilarity = built.result()
        # users only matched here (by _positions): integer ids need no hashing
        (users,), user_ids = codes(user, ("pred", pred), ordered=False)
        (items, h_items), item_ids = codes(item, ("pred", pred), ("history", history),
                                           ordered=False)
        n = len(user_ids)
        rows = np.bincount(users, minlength=n)
        own_item = done.item_map(h_items, len(item_ids))
        own = own_item[items]
        inside = own >= 0
        users, own = users[inside], own[inside]
        if (users[1:] < users[:-1]).any():                 # users in ascending runs
            order = _kernels.group_order(users, n)
            users, own = users[order], own[order]
        squares, _, _ = done.similarity.group_products(users, own, users[:0], own[:0], n,
                                                       cross=False, own=False, parallel=False)
        target.set_result((user_ids, item_ids, own_item, _kernels.WholeLists(squares, rows)))
    except BaseException as exc:  # handed to whoever reads it
        target.set_exception(exc)


def _positions(ids: pd.Index, among: pd.Index) -> np.ndarray:
    """The place of each of ``ids`` among ``among`` (-1 where absent), both coded jointly
    under the id policy."""
    column = "id"
    (mine, theirs), joint = codes(column, ("ids", pd.DataFrame({column: np.asarray(ids)})),
                                  ("among", pd.DataFrame({column: np.asarray(among)})),
                                  ordered=False)
    place = np.full(len(joint), -1, dtype=np.intp)
    place[theirs] = np.arange(theirs.size)
    return place[mine]


def _as_truth(pred, truth, *, user, item, label):
    """Relevance for serendipity and tie bounds: ``truth``, or pred's own label column."""
    if truth is not None:
        return truth
    return pred[[user, item, label]]


@dataclass(frozen=True)
class BeyondEvaluated:
    """The beyond rows of one model and their per-user columns over the engine's users."""

    table: pd.DataFrame
    columns: dict[str, np.ndarray]
    inputs: BeyondInputs


@dataclass(frozen=True)
class BeyondComputed:
    """The numbers behind one model's beyond rows, computed without a warning (so in any
    thread): the input, and per cut-off the per-user values over ``prep``'s users and,
    when rows are wanted, the :class:`recmetrics._kernels.BeyondSums`."""

    inputs: BeyondInputs
    per_cut: dict[int, tuple[dict[str, np.ndarray], _kernels.BeyondSums | None]]


def compute_rows(prep: _pipeline.Prepared, pred, truth, o, b: BeyondOptions, *, user, item, label,
                 rows=True, inputs: BeyondInputs | None = None,
                 similarity: Future | None = None) -> BeyondComputed:
    """The numbers behind :func:`evaluate_rows`' rows (``rows=False``: the per-user values
    only) for ``prep``'s rows, already checked, coded, judged and ranked (``pred`` is not
    read again): refusals are raised, nothing is warned. ``inputs`` (a previous result's,
    for a baseline's rows of the same pred) saves coding history and building the
    similarity again; ``similarity`` (:func:`similarity_in_background`, started before
    ``prep`` was made) saves building it here."""
    if inputs is not None:
        data = inputs.reranked(prep)
    else:
        data = BeyondInputs.from_prepared(
            prep, history=b.history, truth=_as_truth(pred, truth, user=user, item=item,
                                                     label=label),
            catalog=b.catalog, item_features=b.item_features, metrics=list(b.metrics),
            head_share=b.head_share, unseen=b.unseen, user=user, item=item, label=label,
            similarity=similarity)
    per_user = [m for m in data.metrics if m in PER_USER_BEYOND]
    averaged = [m for m in per_user if m in AVERAGED_BEYOND]
    per_cut = {}
    for cut in o.ks:
        top = data.top_k(cut, o.ties)
        data.check_top(top, b.unseen)
        # the sums over pairs of items in threads of their own, beside the other values
        aside = {m: _threads.in_background(_metrics.beyond_per_user, top, data.context, [m])
                 for m in per_user if m in READS_SIMILARITY}
        values = _metrics.beyond_per_user(top, data.context,
                                          [m for m in per_user if m not in aside])
        sums = _metrics.exposure_sums(top, data.context) if rows else None
        for future in aside.values():
            values.update(future.result())
        values_per_user = {m: values[m] for m in per_user if m in values}
        per_cut[cut] = (values_per_user, _metrics.with_totals(
            sums, {m: values_per_user[m] for m in averaged if m in values_per_user})
            if sums is not None else None)
    return BeyondComputed(data, per_cut)


def rows_in_background(prep: _pipeline.Prepared, pred, truth, o, b: BeyondOptions, *, user,
                       item, label, rows=True, inputs: BeyondInputs | None = None,
                       similarity: Future | None = None) -> Future:
    """:func:`compute_rows` in a thread of its own, for :func:`evaluate_rows`' ``computed``:
    the engine's own metrics of the same ``prep`` are computed meanwhile (both only read it),
    and warnings stay in the caller's thread."""
    return _threads.in_background(lambda: compute_rows(
        prep, pred, truth, o, b, user=user, item=item, label=label, rows=rows, inputs=inputs,
        similarity=similarity))


def evaluate_rows(prep: _pipeline.Prepared, o, b: BeyondOptions,
                  computed: BeyondComputed | Future, *, ci=None, n_resamples=1000, seed=0,
                  bootstrap="poisson") -> BeyondEvaluated:
    """The beyond-accuracy rows of :func:`recmetrics.evaluate` for one model, from
    ``computed`` (:func:`compute_rows` of ``prep``, or :func:`rows_in_background`'s future
    of it): the rows, their warnings and their intervals are made here, in the caller's
    thread.

    Values are those of :func:`recmetrics.beyond_accuracy` on the same input
    (the same kernels and sums). A per-user metric's column over ``prep``'s
    users is NaN where the metric is undefined; as (value, 1) and (0, 0)
    it is a ratio of per-user sums, and its interval comes from
    :func:`recmetrics._pipeline.ratio_intervals`.
    """
    done = computed.result() if isinstance(computed, Future) else computed
    data = done.inputs
    per_user = [m for m in data.metrics if m in PER_USER_BEYOND]
    records, columns, ratios = [], {}, {}
    for cut in o.ks:
        values_per_user, sums = done.per_cut[cut]
        for name in per_user:
            columns[f"{name}@{cut}"] = values_per_user[name]    # prep's users, in its order
        if sums is None:
            continue
        values = _metrics.beyond_values(sums, data.context, data.metrics, cut)
        for name in data.metrics:
            n, note = counted(name, cut, sums, values)
            if name in per_user and n > 1:
                defined = ~np.isnan(columns[f"{name}@{cut}"])
                ratios[f"{name}@{cut}"] = (np.where(defined, columns[f"{name}@{cut}"], 0.0),
                                           defined.astype(np.float64))
            elif ci is not None and name in AGGREGATE_ONLY:
                note = f"{note}; {NO_INTERVAL}" if note else NO_INTERVAL
            records.append({"metric": name, "k": cut, "value": float(values[name]), "n_users": n,
                            "n_skipped": sums.n_lists - n, "n_without_predictions": 0,
                            "conventions": data.conventions(name, o.ties, b.head_share, b.unseen),
                            "note": note})
    table = pd.DataFrame(records, columns=["metric", "k", "value", "n_users", "n_skipped",
                                           "n_without_predictions", "conventions", "note"])
    table["k"] = table["k"].astype("Int64")
    if ci is not None:
        intervals = _pipeline.ratio_intervals(prep, ratios, ci=ci, n_resamples=n_resamples,
                                            seed=seed, bootstrap=bootstrap)
        nan = (float("nan"), float("nan"))
        names = [f"{m}@{c}" for m, c in zip(table["metric"], table["k"])]
        table["ci_low"] = [intervals.get(n, nan)[0] for n in names]
        table["ci_high"] = [intervals.get(n, nan)[1] for n in names]
    return BeyondEvaluated(table, columns, data)


def counted(name: str, cut: int, sums, values: dict) -> tuple[int, str]:
    """How many lists ``name``'s value at ``cut`` is taken over, and its note; warns where
    the value is undefined (NaN)."""
    n = sums.counts.get(name, sums.n_lists)
    note = note_of(name, n, sums.n_lists)
    if np.isnan(values[name]):
        warnings.warn(f"{name}@{cut} is undefined here ({note}); returning NaN",
                      RecmetricsWarning, stacklevel=caller_stacklevel())
    return n, note


def note_of(name: str, n: int, n_lists: int) -> str:
    """Why a beyond row leaves users out, or is undefined."""
    row = _metrics.METRIC[name]
    left_out = n_lists - n
    if name in COMPARES_LISTS and n_lists < 2:
        return "needs at least two users with a list"   # a list compared with the others
    if row.left_out and left_out:
        return f"{left_out:,} {row.left_out} left out"
    return ""


# --------------------------------------------------------------------------- baselines


def baseline_scores(pred, history, model: str, *, user: str, item: str, score: str,
                    rank: str | None) -> pd.DataFrame:
    """pred's own (user, item) rows re-scored by a baseline.

    ``"random"``: every row the same score, which under ``ties="average"``
    gives the exact expected value of a uniformly random order of each user's
    candidates. ``"most_popular"``: each row scored by its item's rows in
    ``history`` (0 for an item never seen), the score
    :func:`recmetrics.most_popular` gives it. With ``rank``, the column is a
    rank: a constant, or minus the popularity (1 = best, lower is better).
    """
    column = rank if rank is not None else score
    if model == "random":
        values = np.zeros(len(pred))
    else:
        as_frame("history", history, {"user": user, "item": item})
        (items, h_items), item_ids = codes(item, ("pred", pred), ("history", history),
                                           ordered=False)
        popularity = np.bincount(h_items, minlength=len(item_ids)).astype(np.float64)
        values = popularity[items] if rank is None else -popularity[items]
    return pred.assign(**{column: values})


class _Rescored(_pipeline.Prepared):
    """A baseline's prepared rows (:func:`baseline_prepared`): the model's, scored and ranked
    again. The layout of its ranked lists, which only the ranking metrics read (not the
    beyond-accuracy ones), is built when first read."""

    #: the model's ranked lists (their ideal lists are the baseline's too)
    model_ranked: _kernels.RankedLists

    @functools.cached_property
    def ranked(self) -> _kernels.RankedLists:  # type: ignore[override]
        layout = _kernels.Layout(self.lists, self.grades, self.n_users,
                                 _kernels.starts(self.scores) if self.layout_ties else None)
        return _kernels.RankedLists(layout, self.model_ranked.ideal_lists,
                                    self.model_ranked.ideal_grades)


def baseline_prepared(prep: _pipeline.Prepared, history, model: str, *, ties: str, user: str,
                      item: str, rank: str | None, auc: bool = True) -> _pipeline.Prepared:
    """The model's prepared rows (``prep``, built with ``keep_items=True``) scored by a
    baseline and ranked again: the :class:`recmetrics._pipeline.Prepared` of
    :func:`baseline_scores`' frame, without coding the ids, joining truth and checking the
    rows a second time (the rows, users, items and grades are the model's own).

    A baseline's score is a value per item (a constant, or the item's popularity), so the
    rows are ranked by the items' dense ranks (and the tie policy's), packed with the
    list in one sort (:func:`recmetrics._kernels.rank_by_codes`), without sorting the
    scores themselves; the random baseline's rows, one tie group a list, are in order
    already. Rows of equal baseline score may come in another order within their tie group
    than in a Prepared of that frame; every metric takes the expected value over a tie
    group's orders (or breaks its ties by grade), so only the order of a floating-point
    sum can differ (about 1e-16 relative). ``auc=False``: the global AUC's pair counts
    are not counted (``pairs`` is None; the global AUC is not asked for).
    """
    items = ranked_items(prep)
    n_item_codes = len(prep.item_ids)
    if model == "random":
        by_item = np.zeros(n_item_codes)
        values = np.zeros(items.size)
    else:
        as_frame("history", history, {"user": user, "item": item})
        # history rows per item of prep's, coded as the Prepared of that frame would code them
        (listed, h_items), ids = codes(item, ("pred", pd.DataFrame({item: np.asarray(prep.item_ids)})),
                                       ("history", history), ordered=False)
        by_item = np.bincount(h_items, minlength=len(ids))[listed].astype(np.float64)
        values = by_item[items]
        if rank is not None:
            values = -values
    scores = -values if rank is not None else values        # as Prepared reads the column
    new = object.__new__(_Rescored)
    new.__dict__.update({name: value for name, value in prep.__dict__.items()
                         if name != "ranked"})
    new.model_ranked = prep.ranked
    tiebreak = _pipeline.tie_order(ties, prep.grades, items, prep.item_ids)
    if model == "random" and tiebreak is None:   # one tie group a list: in order already
        new.scores, new.grades, new.items, new.judged = scores, prep.grades, items, prep.judged
        new.pairs = (0, prep.n_positive * (prep.n_rows - prep.n_positive))   # every pair tied
        return new
    # dense ranks, 0 = the best: of the items' scores, then of the tie policy's order
    _, score_code = np.unique(-by_item, return_inverse=True)
    n_codes = int(score_code.max(initial=0)) + 1
    row_code = score_code[items]
    if tiebreak is not None:
        if ties == "trec":      # an order of the items too
            place = _pipeline.tie_order(ties, prep.grades, np.arange(n_item_codes),
                                        prep.item_ids)
            if place is None:
                raise RuntimeError("ties='trec' orders the items")
            tie_item, n_ties = _kernels.descending_codes(place)
            tie_code = tie_item[items]
        else:
            tie_code, n_ties = _kernels.descending_codes(tiebreak)
        row_code = row_code * n_ties + tie_code
        n_codes *= n_ties
    order = _kernels.rank_by_codes(prep.lists, prep.n_users, row_code, n_codes)
    if order is None:        # more lists, distinct scores and rows than 64 bits hold
        new.scores, new.grades = np.empty_like(scores), np.empty_like(prep.grades)
        order, new.pairs = _kernels.rank_rows(
            prep.lists, scores, prep.n_users, tiebreak=tiebreak, positive=prep.grades > 0,
            carry=((scores, new.scores), (prep.grades, new.grades)))
        new.items = items[order]
    else:
        new.items, new.grades = items[order], prep.grades[order]
        # the most-popular scores are the items' (-(-x) is x), gathered from the small table
        new.scores = scores[order] if model == "random" else by_item[new.items]
        if model == "random":      # every pair tied
            new.pairs = (0, prep.n_positive * (prep.n_rows - prep.n_positive))
        elif not auc:
            new.pairs = None
        else:
            counts = _kernels.group_pair_counts_unsorted(np.zeros(scores.size, dtype=np.intp),
                                                         scores, prep.grades > 0, 1)
            if counts is None:
                raise RuntimeError("one group's pair counts always fit")
            new.pairs = (int(counts[0][0]), int(counts[1][0]))
    new.judged = prep.judged if prep.judged.all() else prep.judged[order]
    return new


# --------------------------------------------------------------------------- on Dask


@dataclass
class PartitionSums:
    """What one partition of whole users gives for the beyond-accuracy rows: per cut-off, its
    :class:`recmetrics._kernels.BeyondSums`, and with intervals the Poisson resample sums of
    each per-user metric (``"novelty@10"`` -> (n_resamples, 2): weighted values, weighted
    users where defined). Partitions of disjoint users add up (``+``)."""

    sums: dict[int, _kernels.BeyondSums]
    resamples: dict[str, np.ndarray]

    def __add__(self, other: PartitionSums) -> PartitionSums:
        return PartitionSums(
            {k: self.sums[k] + other.sums[k] for k in self.sums},
            {name: self.resamples[name] + other.resamples[name] for name in self.resamples})


class SharedBeyond:
    """What every partition of a distributed evaluation shares, built once from the whole
    input: the items (of pred, truth, history, ``catalog=``, ``item_features=``), the
    catalogue, popularity, long tail, similarity, and each history user's distinct items.

    Partitions map their own item and user ids to these (:meth:`partition_sums`), so every
    per-item array and every per-user value is the one of :func:`recmetrics.evaluate` in
    memory.
    """

    def __init__(self, pred_items: pd.DataFrame, truth_items: pd.DataFrame | None, *,
                 history, catalog, item_features, b: BeyondOptions, user: str, item: str):
        if history is None:
            raise ValueError(f"{', '.join(b.metrics)}: on Dask the beyond-accuracy metrics need "
                             "history= (the training log, a pandas DataFrame): popularity and "
                             "co-occurrence are counted from it once and shared by every "
                             "partition")
        data = object.__new__(BeyondInputs)
        data.ranked = True
        data.metrics = BeyondInputs._metrics(list(b.metrics), history, True, item_features)
        as_frame("history", history, {"user": user, "item": item})
        (h_users,), history_users = codes(user, ("history", history))
        data.user_ids, data.n_users = history_users, len(history_users)
        data.n_lists = data.n_users          # the history index runs over history's users
        item_frames = [("pred", pred_items)] + ([("truth", truth_items)]
                                                 if truth_items is not None else [])
        item_frames.append(("history", history))
        by_name = data._code_items(data._item_frames(item_frames, catalog, item_features, item),
                                   item)
        data.items = by_name["pred"]
        listed = ["pred", "history"] + (["truth"] if truth_items is not None else [])
        data._build(listed=[by_name[n] for n in listed], sources=listed,
                    catalog=by_name.get("catalog"), history=(h_users, by_name["history"]),
                    truth_relevant=None, features=by_name.get("item_features"),
                    item_features=item_features, item=item, head_share=b.head_share,
                    unseen=b.unseen)
        self.data = data

    def partition_sums(self, prep: _pipeline.Prepared, *, ks, ties: str, unseen: str,
                       seed: int | None, n_resamples: int) -> PartitionSums:
        """The beyond-accuracy sums of one partition's prepared users."""
        data = self.data
        items = _positions(prep.item_ids, data.item_ids)[ranked_items(prep)]
        if items.size and items.min() < 0:
            raise RuntimeError("an item of pred is missing from the shared items")
        ctx = data.context
        if ctx.history is not None:
            # the partition's users' own history items, by their place in the shared index
            start, count, history_items = ctx.history
            where = _positions(prep.users, data.user_ids)
            found = where >= 0
            own_start = np.where(found, start[np.maximum(where, 0)], 0)
            own_count = np.where(found, count[np.maximum(where, 0)], 0)
            ctx = replace(ctx, history=(own_start, own_count, history_items))
        per_user = [m for m in data.metrics
                    if m in AVERAGED_BEYOND]
        sums, ratios = {}, {}
        for cut in ks:
            top = _kernels.top_k_ranked(prep.lists, items, prep.scores, prep.grades,
                                        prep.n_users, cut, ties=ties)
            data.check_top(top, unseen)
            values = _metrics.beyond_per_user(top, ctx, per_user)
            sums[cut] = _metrics.beyond_sums(top, ctx, list(values), values)
            for name, v in values.items():
                defined = ~np.isnan(v)
                ratios[f"{name}@{cut}"] = (np.where(defined, v, 0.0), defined.astype(np.float64))
        resamples = {} if seed is None else _pipeline.poisson_sums(user_hash(prep.users), ratios,
                                                                 seed, n_resamples)
        return PartitionSums(sums, resamples)

    def empty(self, ks, seed: int | None, n_resamples: int) -> PartitionSums:
        """The sums of a partition without users."""
        n = self.data.n_items
        zero = _kernels.BeyondSums(exposure=np.zeros(n), certain=np.zeros(n, dtype=np.int64),
                                   log_miss=np.zeros(n), p_square=np.zeros(n))
        per_user = [m for m in self.data.metrics
                    if m in AVERAGED_BEYOND]
        zero.totals = {m: 0.0 for m in per_user}
        zero.counts = {m: 0 for m in per_user}
        resamples = {} if seed is None else {f"{m}@{cut}": np.zeros((n_resamples, 2))
                                              for m in per_user for cut in ks}
        return PartitionSums({cut: replace(zero) for cut in ks}, resamples)

    def rows(self, total: PartitionSums, o, b: BeyondOptions, *, ci: float | None
             ) -> pd.DataFrame:
        """The beyond-accuracy rows from the sums of every partition, as in memory."""
        data = self.data
        records, intervals = [], {}
        quantiles = [(1 - ci) / 2, (1 + ci) / 2] if ci is not None else None
        for cut in o.ks:
            sums = total.sums[cut]
            values = _metrics.beyond_values(sums, data.context, data.metrics, cut)
            for name in data.metrics:
                n, note = counted(name, cut, sums, values)
                row = f"{name}@{cut}"
                if quantiles is not None and row in total.resamples and n > 1:
                    interval = _pipeline.ratio_interval(total.resamples[row], quantiles)
                    if interval is not None:
                        intervals[row] = interval
                elif ci is not None and name in AGGREGATE_ONLY:
                    note = f"{note}; {NO_INTERVAL}" if note else NO_INTERVAL
                records.append({"metric": name, "k": cut, "value": float(values[name]),
                                "n_users": n, "n_skipped": sums.n_lists - n,
                                "n_without_predictions": 0,
                                "conventions": data.conventions(name, o.ties, b.head_share,
                                                                b.unseen),
                                "note": note})
        table = pd.DataFrame(records, columns=["metric", "k", "value", "n_users", "n_skipped",
                                               "n_without_predictions", "conventions", "note"])
        table["k"] = table["k"].astype("Int64")
        if ci is not None:
            nan = (float("nan"), float("nan"))
            names = [f"{m}@{c}" for m, c in zip(table["metric"], table["k"])]
            table["ci_low"] = [intervals.get(n, nan)[0] for n in names]
            table["ci_high"] = [intervals.get(n, nan)[1] for n in names]
        return table


def distributed_setup(b: BeyondOptions, o, *, ci: float | None, seed, n_resamples: int,
                      pred_items: pd.DataFrame, judged_items: pd.DataFrame, user: str,
                      item: str, engine: str) -> tuple[SharedBeyond, dict]:
    """The shared part of a distributed engine's beyond rows, and the options of
    :meth:`SharedBeyond.partition_sums` (which gives one partition's
    :class:`PartitionSums` from its Prepared rows). ``pred_items`` and ``judged_items`` hold
    the distinct items of pred and of truth (pred's, if the labels are in pred). A Dask or
    Spark ``history`` is collected here: popularity and similarity need all of it, once. The
    engine ships the shared part to its workers once (a graph key, a broadcast variable),
    not with every task."""
    compared = [m for m in b.metrics if m in COMPARES_LISTS]
    if ci is not None and compared:
        raise ValueError(f"{', '.join(compared)} has no interval on {engine}: a user's value compares "
                         "the user's list with every other user's, which no partition holds; "
                         "leave it out of metrics, or evaluate without ci=")
    history = b.history
    if hasattr(history, "compute"):          # a Dask frame: the whole log is read once, here
        history = history.compute()
    elif hasattr(history, "toPandas"):       # a Spark one
        history = history.toPandas()
    b = replace(b, history=history)
    shared = SharedBeyond(pred_items, judged_items, history=b.history, catalog=b.catalog,
                          item_features=b.item_features, b=b, user=user, item=item)
    options = {"ks": o.ks, "ties": o.ties, "unseen": b.unseen, "n_resamples": n_resamples,
               "seed": None if ci is None else _pipeline.poisson_seed(seed)}
    return shared, options


def broadcast_partition_sums(shared, prep: _pipeline.Prepared, **options) -> PartitionSums:
    """:meth:`SharedBeyond.partition_sums` of a shared part held by a Spark broadcast."""
    return shared.value.partition_sums(prep, **options)


def distributed_table(table: pd.DataFrame | None, s: _pipeline.Summary, shared: SharedBeyond,
                      parts: list, o, b: BeyondOptions, *, ci: float | None, truth_given: bool,
                      positives_only: bool, n_resamples: int) -> pd.DataFrame:
    """The engine's table (None when only beyond metrics were asked for) with the beyond
    rows of the partitions' :class:`PartitionSums` (None for a partition without users)."""
    if table is None:  # finish's attrs without its (empty) rows
        s.unmatched.warn()
        table = pd.DataFrame()
        table.attrs["inputs"] = {"pred_rows": s.n_rows, "pred_users": s.n_with_rows,
                                 **(s.inputs if truth_given else {})}
        table.attrs["notes"] = [_pipeline.POSITIVES_ONLY] if positives_only else []
    total = sum((p for p in parts if p is not None),
                shared.empty(o.ks, None if ci is None else 0, n_resamples))
    rows = shared.rows(total, o, b, ci=ci)
    attrs = table.attrs
    table = pd.concat([table, rows], ignore_index=True) if len(table) else rows
    table.attrs = attrs
    table.attrs["conventions"] = {**o.conventions(), **b.conventions()}
    return table
