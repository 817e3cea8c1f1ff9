r"""Slices: every metric per cohort of users, with intervals, and where a model wins or loses.

A **slice** is a set of users that share an attribute: a country, a sign-up
month, an activity level. ``evaluate(pred, truth, by=...)`` and
``compare(pred_a, pred_b, truth, by=...)`` (:mod:`recmetrics.evaluation`) return
the usual tidy table once per slice, with the slice's value(s) in the first
columns and an overall row whose slice value is ``"(all)"``.

What a slice row means
----------------------
Every number of a slice's row is the number :func:`recmetrics.evaluate`
gives on that slice's users alone (their rows of ``pred`` and ``truth``),
intervals included: the Poisson bootstrap gives each user a weight that
depends only on (user id, seed, resample), so a slice's resample sums are
the sums of its own users' weighted values. The engine computes each user's
value once and sums the users of each slice (``np.bincount`` and one matrix
product per slice): slicing costs one pass over the users, not one
evaluation per slice. Global AUC compares rows of different users, so each
slice's AUC is counted over the slice's rows only.

Where the attribute comes from (``by``)
---------------------------------------
* a column of ``pred`` or ``truth`` (or both): an attribute of the user, so
  it must take one value per user; a value that varies within a user is
  refused;
* a column of the ``users`` frame (one row per user: the user column and
  attribute columns);
* ``"activity"``: users bucketed by their number of scored rows into
  :data:`ACTIVITY_BUCKETS` quantile buckets, each labelled by its edges,
  ``"[3, 7)"`` = 3 to 6 scored rows (a column of that name wins over it).

Several names give their crossing: one slice per combination present. A user
with no value (absent from ``users``, or only in ``truth`` when the column is
in ``pred``) is in the slice ``"(missing)"``.

Items by popularity (``by="popularity"``)
-----------------------------------------
``evaluate(pred, truth, by="popularity", history=...)`` slices the relevant
*items* instead of the users: is the model right about popular items only?
Items are classed by their rows in ``history`` (the training log), sorted
most popular first, with the cumulative shares of Abdollahpouri et al.
(2020) (:data:`POPULARITY_SHARES`):

* **head**: the fewest most popular items whose rows reach 20% of all rows;
* **tail**: every item outside the fewest that reach 80%, i.e. the least
  popular items holding the last 20% of the rows (APLT's long tail at its
  default ``head_share=0.8``), and every item history never saw;
* **torso**: the rest.

An item tied in popularity with the last item of the head (or of the
not-tail) goes with it, so no class depends on the order of ties. A class's
row is :func:`recmetrics.evaluate` with only that class's relevant items
counted as relevant: the other relevant rows are judged 0, and the lists are
left whole (a head item ranked first pushes the tail items down, as in
Cremonesi et al. 2010's long-tail recall). So recall@k of the tail is the
share of each user's relevant tail items in the top k, precision@k the tail
hits per slot, MRR the first relevant tail item, NDCG's ideal is built from
the tail items. It applies to the metrics that read which items are
relevant, :data:`POPULARITY_METRICS` (precision, recall, hit rate, MAP, MRR,
NDCG; the default then); AUC and GAUC are refused (they would count another
class's relevant items as negatives), as are the probability metrics (they
judge rows, not relevant items) and the beyond-accuracy metrics. A class
averages over the users with a relevant item of it (``slice_size``; under
``no_relevant="skip"``; ``"error"`` is refused); intervals are each class's
own Poisson bootstrap over users. It is not crossed with user slicings, and
a column named ``popularity`` wins over it.

References: Abdollahpouri, H., Mansoury, M., Burke, R. & Mobasher, B.
(2020). The connection between popularity bias, calibration, and fairness
in recommendation. *RecSys*. Cremonesi, P., Koren, Y. & Turrin, R. (2010).
Performance of recommender algorithms on top-N recommendation tasks.
*RecSys*.

Small slices
------------
A slice of fewer than ``min_slice_size`` users (default 30) is reported, never
dropped, with ``small_slice=True`` and a note in ``result.attrs["notes"]``:
its intervals are wide and its point value is noisy.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._slices import (ACTIVITY, ACTIVITY_BUCKETS, ALL, MIN_SLICE_SIZE, MISSING, POPULARITY,
                      POPULARITY_CLASSES, POPULARITY_METRICS, POPULARITY_SHARES, row_name,
                      slice_label)

__all__ = ["disparity", "ALL", "MISSING", "ACTIVITY", "ACTIVITY_BUCKETS", "MIN_SLICE_SIZE",
           "POPULARITY", "POPULARITY_CLASSES", "POPULARITY_SHARES", "POPULARITY_METRICS"]


def disparity(table: pd.DataFrame, *, include_small: bool = False) -> pd.DataFrame:
    r"""Who is served worst: per metric, the best and worst slice, their gap and ratio.

    For each metric (and cut-off) of a table from ``evaluate(..., by=...)``,
    the slices with the largest and the smallest value, the gap
    :math:`v_{\max} - v_{\min}` and the ratio :math:`v_{\min} / v_{\max}`.
    When the table has intervals (``ci=``), the gap gets a percentile
    interval from the same Poisson resamples: in each resample, the value of
    the largest slice less that of the smallest (the two slices chosen on the
    point values, so the interval is that of their difference; it does not
    account for having picked the extreme pair among many).

    Parameters
    ----------
    table : pandas.DataFrame
        A table returned by :func:`recmetrics.evaluate` with ``by=``.
    include_small : bool, default False
        Whether slices marked ``small_slice`` may be the largest or smallest.
        Small slices are noisy, so by default they are left out.

    Returns
    -------
    pandas.DataFrame
        ``metric, k, largest, value_largest, smallest, value_smallest, gap,
        ratio, n_slices`` (slices compared), and ``gap_ci_low, gap_ci_high``
        with intervals. Slices are written ``column=value``, joined by ``, ``
        for crossings. Metrics where lower is better (log loss, Brier, ECE,
        NE) are listed the same way: read ``largest`` as the worst there.

    Examples
    --------
    >>> import recmetrics as rm
    >>> pred = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [1, 2] * 3,
    ...                      "score": [0.9, 0.1, 0.2, 0.8, 0.7, 0.6], "label": [1, 0] * 3,
    ...                      "group": ["a", "a", "b", "b", "b", "b"]})
    >>> table = rm.evaluate(pred, metrics=["mrr"], by="group", min_slice_size=1)
    >>> disparity(table)[["metric", "largest", "smallest", "gap"]].values.tolist()
    [['mrr', 'group=a', 'group=b', 0.25]]
    """
    columns = table.attrs.get("slice_columns")
    if not isinstance(table, pd.DataFrame) or not columns:
        raise ValueError("table must be a table returned by recmetrics.evaluate(..., by=...), "
                         "which names its slice columns in attrs['slice_columns']")
    if not isinstance(include_small, (bool, np.bool_)):
        raise ValueError(f"include_small={include_small!r} must be True or False")
    resampled = table.attrs.get("resamples", {})
    ci = table.attrs.get("ci")
    keep = ~(table[columns] == ALL).all(axis=1)
    if not include_small:
        keep &= ~table["small_slice"].astype(bool)
    rows = []
    for (metric, k), group in table[keep].groupby(["metric", table["k"].fillna(-1)], sort=False):
        k = None if k == -1 else int(k)
        group = group[group["value"].notna()]
        row = {"metric": metric, "k": k, "largest": None, "value_largest": np.nan,
               "smallest": None, "value_smallest": np.nan, "gap": np.nan, "ratio": np.nan,
               "n_slices": len(group)}
        if ci is not None:
            row["gap_ci_low"], row["gap_ci_high"] = np.nan, np.nan
        if len(group):
            top = group.loc[group["value"].idxmax()]
            bottom = group.loc[group["value"].idxmin()]
            top_key, bottom_key = tuple(top[columns]), tuple(bottom[columns])
            row.update(largest=slice_label(columns, top_key), value_largest=float(top.value),
                       smallest=slice_label(columns, bottom_key),
                       value_smallest=float(bottom.value),
                       gap=float(top.value - bottom.value),
                       ratio=float(bottom.value / top.value) if top.value != 0 else np.nan)
            name = row_name(metric, k)
            high, low = resampled.get(top_key + (name,)), resampled.get(bottom_key + (name,))
            if ci is not None and high is not None and low is not None:
                gaps = high - low
                gaps = gaps[np.isfinite(gaps)]
                if gaps.size:
                    lo, hi = np.quantile(gaps, [(1 - ci) / 2, (1 + ci) / 2])
                    row["gap_ci_low"], row["gap_ci_high"] = float(lo), float(hi)
        rows.append(row)
    result = pd.DataFrame(rows)
    if len(result):
        result["k"] = result["k"].astype("Int64")
    return result
