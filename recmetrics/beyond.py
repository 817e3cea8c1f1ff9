r"""Beyond accuracy: what the top-k lists hold, whoever they are right for.

A model can rank well and still recommend the same hundred best-sellers to
everyone. These metrics look at the lists themselves:

======================== ==================================================== ==========
metric                   what it measures                                     per user
======================== ==================================================== ==========
catalog_coverage         share of the catalogue in at least one top-k list    no
distributional_coverage  entropy (bits) of how often items are shown          no
gini                     inequality of that exposure over the catalogue       no
novelty                  mean -log2 popularity share of the recommended items yes
diversity                mean pairwise dissimilarity within a list            yes
serendipity              relevant items unlike the user's own history         yes
personalization          1 - mean overlap between two users' lists            yes [#]_
arp                      average popularity (history rows) of listed items    yes
aplt                     share of listed items in the long tail               yes
======================== ==================================================== ==========

.. [#] A user's personalization compares the user's list with every other
   user's; the mean over users is the global value.

The top-k list of a user is the k highest-scored items of that user in
``pred``. **Popularity** (novelty, ARP, APLT) counts rows of ``history=``,
the training log, or, without it, the relevant rows (label > 0) of ``truth``.
The **catalogue** is ``catalog=``, or else every item of history, pred and
truth. **Similarity** (diversity, serendipity) is the cosine of the items'
``item_features=`` vectors or, without them, of their user-incidence vectors
in the history (co-occurrence).

Ties
----
Items of equal score may come in any order, and peers take whichever order
the sort gives. Here ``ties="average"`` returns, for every metric that is
linear in the top-k lists, its **exact expected value over all orders of
tied items**: a row of a tie group that straddles position k (t rows, s of the
k places left to them) is in the top k with probability s/t, and two of its
rows both with s(s-1)/(t(t-1)). That covers novelty, ARP, APLT, diversity,
serendipity (linear in the rows), personalization (the expected pair overlap
is :math:`\sum_i (S_i^2 - Q_i)/2`, with :math:`S_i, Q_i` the sums over users
of :math:`p_{ui}` and :math:`p_{ui}^2`, as users are ordered independently)
and catalog coverage (the expected number of distinct items,
:math:`\sum_i 1 - \prod_u (1 - p_{ui})`). Entropy and Gini are not linear in
the lists: they are computed from the **expected exposure counts**
:math:`e_i = \sum_u p_{ui}` (fractional), the exposure that random
tie-breaking gives on average. They equal the usual value whenever no tie
straddles position k, do not depend on row order, and add up over users
(the expected entropy over orders would need every joint order). With
``"optimistic"`` (``"pessimistic"``) relevant rows (per ``truth``) are put
first (last) within equal scores, and rows still tied are averaged over.

The same metrics are names in :func:`recmetrics.evaluate`'s ``metrics=``
(with ``history=``, ``catalog=``, ``item_features=``, ``head_share=``,
``unseen=``; the command line's ``--metrics novelty ... --history FILE``),
where the per-user ones get bootstrap intervals and per-user columns, and
``baselines=True`` adds the random and most-popular baselines' rows.

A random recommender is a constant score: evaluated under ``ties="average"``
it gives the exact expected value of a uniformly random top k of each user's
candidates, with no simulation, for every metric that is a mean over users or
list slots. Gini and entropy are the exception (see Ties): at the expected
exposure counts a random recommender looks more even than any real set of
random lists (on the shipped sample Gini@10 0.235, against about 0.29 over
seeded random orders), so compare them with seeded random scores instead. :func:`most_popular` builds the other usual
baseline.

Adding over users (a distributed engine)
----------------------------------------
Every value follows from sums over users (``_kernels.BeyondSums``, which add
with ``+``), so each partition of users computes its own and the sums are
added before the final division:

* novelty, diversity, serendipity, ARP, APLT: the sum of the per-user values
  and the number of users where it is defined;
* distributional coverage and Gini: the exposure per item
  :math:`e_i = \sum_u p_{ui}`;
* catalog coverage: per item, the users whose top k surely holds it and
  :math:`\sum_u \log(1 - p_{ui})` over the others;
* personalization: per item :math:`S_i = \sum_u p_{ui}` (the exposure) and
  :math:`Q_i = \sum_u p_{ui}^2`, and the number of users n; then
  :math:`1 - \sum_i (S_i^2 - Q_i) / (k\, n (n - 1))`.

What the partitions share is computed once from the whole input: item
popularity, the long-tail set and the similarity (``_kernels.BeyondContext``);
serendipity also needs each partition's users' own history rows, and a
user's own personalization value needs the exposure summed over everyone.
:func:`recmetrics.evaluate` on Dask or Spark DataFrames adds them this way
(``_beyond.SharedBeyond``): every value equals the in-memory one, intervals
included, except that personalization has no interval there (a user's value
needs every other user's list).

Cost
----
Ranking is that of :func:`recmetrics.evaluate`. Diversity enumerates the
pairs of rows that can be in a top k: k(k-1)/2 a user, and t(t-1)/2 when a tie
group of t <= k rows straddles position k. A larger straddling group (a
constant score makes each user's whole list one group: the random baseline)
has its pairs summed in closed form, since similarity is an inner product of
unit vectors u (features, or scaled user-incidence vectors): the sum over its
pairs is (||sum u||^2 - sum ||u||^2) / 2 and its pairs with the rows above it
a dot product of two sums, linear in the group's rows (one sparse product;
equal to the enumerated sum to about 1e-15). Serendipity compares each relevant top-k row with the
user's history items. Co-occurrence similarity holds every pair of items that
share a history user (one sparse product; about 12 bytes a pair).
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from . import _kernels, _metrics
from ._beyond import BeyondInputs, counted
from ._frames import as_pandas, pandas_inputs
from ._metrics import BEYOND_METRICS, PER_USER_BEYOND
from ._ids import codes, locate
from ._validation import (TIES, UNSEEN, Ties, Unseen, as_catalog, as_frame,
                          check_head_share, check_k_values, check_option)

__all__ = ["beyond_accuracy", "beyond_accuracy_per_user", "most_popular", "BEYOND_METRICS"]

def _check_options(k, metrics, ties, head_share, unseen):
    return (check_k_values(k), check_option("ties", ties, TIES), check_head_share(head_share),
            check_option("unseen", unseen, UNSEEN))


_PARAMETERS = r"""
    pred : pandas.DataFrame
        One row per scored (user, item): columns ``user``, ``item``, ``score``.
        Each user's top k are the k highest-scored rows.
    k : int or sequence of int, default 10
        Cut-off(s).
    history : pandas.DataFrame, optional
        The training log: one row per (user, item) interaction (repeats
        count as more popularity; co-occurrence and serendipity use the
        distinct pairs). Popularity and co-occurrence come from it.
    truth : pandas.DataFrame, optional
        Judged (user, item, label) rows: what is relevant (label > 0) for
        serendipity and for ``ties="optimistic"``/``"pessimistic"``; the
        popularity source when ``history`` is None.
    catalog : sequence, optional
        Every item that could be recommended; default: the items of
        history, pred and truth. pred's items must be in it.
    item_features : pandas.DataFrame, optional
        Column ``item`` and either numeric feature columns or one column
        holding a vector per item. Gives the similarity of diversity and
        serendipity (else co-occurrence in history). Every item that can
        reach a top k, and for serendipity every history item, needs one; a
        zero vector is similar to nothing (similarity 0).
    metrics : sequence of str, optional
        Any of ``BEYOND_METRICS``. Default: every metric the inputs allow
        (novelty, ARP and APLT need history or truth, diversity needs
        item_features or history, serendipity needs history and truth); a
        named metric whose input is missing is refused. Each metric the
        default leaves out is named, with the input it needs, in
        ``result.attrs["notes"]``.
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        See the module docstring.
    head_share : float, default 0.8
        APLT's head: the fewest most popular items whose popularity rows
        reach this share of all rows, plus every item tied in popularity with
        the last of them (so that the head does not depend on the order of
        ties). The long tail is every other catalogue item.
    unseen : {"add_one", "zero", "error"}, default "add_one"
        Novelty of an item with no popularity row: p = 1/(N + 1), N the
        popularity rows (``"add_one"``, as if seen once more than never); 0
        (``"zero"``: Microsoft Recommenders leaves such items out of its sum
        but keeps them in its count); or refuse (``"error"``).
    user, item, score, label : str
        Column names. Ids follow the id policy of :func:`recmetrics.evaluate`."""


def beyond_accuracy(pred, *, k=10, history=None, truth=None, catalog=None, item_features=None,
                    metrics=None, ties: Ties = "average", head_share: float = 0.8,
                    unseen: Unseen = "add_one", user: str = "user", item: str = "item",
                    score: str = "score", label: str = "label") -> pd.DataFrame:
    r"""Coverage, concentration, novelty, diversity, serendipity, personalization, popularity bias.

    With :math:`L_u` the top-k list of user u, :math:`m_u = |L_u| = \min(k, n_u)`,
    U the users with a scored row, I the catalogue, :math:`c_i` the number of
    lists holding item i and :math:`\mathrm{pop}(i)` its popularity rows
    (of N):

    * catalog_coverage = :math:`|\bigcup_u L_u| / |I|` (Shani & Gunawardana 2011);
    * distributional_coverage = :math:`-\sum_i q_i \log_2 q_i`,
      :math:`q_i = c_i / \sum_j c_j` (ibid., eq. 21);
    * gini = :math:`\sum_{j=1}^{n} (2j - n - 1)\, c_{(j)} / (n \sum_i c_i)`
      over the n = |I| catalogue items, counts ascending, zeros included;
      0 = even exposure, (n - 1)/n = one item only;
    * novelty = :math:`\frac{1}{|U|}\sum_u \frac{1}{m_u}\sum_{i \in L_u} -\log_2
      \frac{\mathrm{pop}(i)}{N}` (Castells, Vargas & Wang 2011; equal to
      Microsoft Recommenders' ``novelty`` when every list has k items);
    * diversity = :math:`\frac{1}{|U_2|}\sum_u \binom{m_u}{2}^{-1}
      \sum_{\{i,j\} \subset L_u} (1 - \mathrm{sim}(i, j))` over the users
      :math:`U_2` with :math:`m_u \ge 2` (intra-list diversity, Ziegler et al.
      2005; Zhang et al. 2012 eq. 3), sim the cosine of feature vectors or
      of the items' user sets in history, :math:`|U_i \cap U_j| /
      \sqrt{|U_i||U_j|}` (as Microsoft Recommenders);
    * serendipity = :math:`\frac{1}{|U_H|}\sum_u \frac{1}{m_u}\sum_{i \in L_u}
      \mathrm{rel}(u, i) \big(1 - \frac{1}{|H_u|}\sum_{j \in H_u}
      \mathrm{sim}(i, j)\big)` over the users :math:`U_H` with a history
      :math:`H_u` (Zhang et al. 2012), rel = 1 for label > 0 in truth;
    * personalization = :math:`1 - \binom{|U|}{2}^{-1} \sum_{u < v}
      |L_u \cap L_v| / k` (as Evidently), with
      :math:`\sum_{u<v} |L_u \cap L_v| = \sum_i c_i (c_i - 1)/2`;
    * arp = :math:`\frac{1}{|U|}\sum_u \frac{1}{m_u}\sum_{i \in L_u}
      \mathrm{pop}(i)` and aplt = :math:`\frac{1}{|U|}\sum_u
      \frac{|L_u \cap \Gamma|}{m_u}`, Γ the long tail (Abdollahpouri, Burke &
      Mobasher 2017, 2019).

    Where Microsoft Recommenders' definitions differ: its catalog coverage
    divides by the items of the training data (here the catalogue); its
    diversity and serendipity take whatever list they are given (here the
    top k, ties averaged); its serendipity refuses lists that repeat history
    items (here such an item is simply similar to itself) and, with no
    relevance column, counts every item as relevant (here truth is needed).

    Parameters
    ----------{parameters}

    Returns
    -------
    pandas.DataFrame
        One row per metric and cut-off: ``metric, k, value, n_users,
        conventions, note``. ``n_users`` counts the users the value averages
        over (for the catalogue-level metrics: the users with a list).

    References
    ----------
    Shani, G. & Gunawardana, A. (2011). Evaluating recommendation systems.
    *Recommender Systems Handbook*, 257-297.
    Castells, P., Vargas, S. & Wang, J. (2011). Novelty and diversity metrics
    for recommender systems: choice, discovery and relevance. *ECIR workshop
    DDR*.
    Ziegler, C.-N., McNee, S. M., Konstan, J. A. & Lausen, G. (2005).
    Improving recommendation lists through topic diversification. *WWW*.
    Zhang, Y. C., Séaghdha, D. Ó., Quercia, D. & Jambor, T. (2012). Auralist:
    introducing serendipity into music recommendation. *WSDM*.
    Abdollahpouri, H., Burke, R. & Mobasher, B. (2017). Controlling popularity
    bias in learning-to-rank recommendation. *RecSys*.

    Examples
    --------
    >>> import pandas as pd
    >>> pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.5, 0.8, 0.8]})
    >>> history = pd.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "b"]})
    >>> table = beyond_accuracy(pred, k=1, history=history,
    ...                         metrics=["catalog_coverage", "personalization", "arp"])
    >>> table[["metric", "value"]].round(4).to_dict("list")
    {'metric': ['catalog_coverage', 'personalization', 'arp'], 'value': [0.5, 0.5, 2.25]}
    """
    ks, ties, head_share, unseen = _check_options(k, metrics, ties, head_share, unseen)
    pred, history, truth, catalog, item_features = pandas_inputs(
        dict(pred=pred, history=history, truth=truth, catalog=catalog,
             item_features=item_features), ids=(user, item)).values()
    data = BeyondInputs(pred, history=history, truth=truth, catalog=catalog,
                        item_features=item_features, metrics=metrics, head_share=head_share,
                        unseen=unseen, user=user, item=item, score=score, label=label)
    rows = []
    for cut in ks:
        top = data.top_k(cut, ties)
        data.check_top(top, unseen)
        sums = _metrics.beyond_sums(top, data.context, data.metrics)
        values = _metrics.beyond_values(sums, data.context, data.metrics, cut)
        for name in data.metrics:
            n, note = counted(name, cut, sums, values)
            rows.append({"metric": name, "k": cut, "value": values[name], "n_users": n,
                         "conventions": data.conventions(name, ties, head_share, unseen),
                         "note": note})
    table = pd.DataFrame(rows, columns=["metric", "k", "value", "n_users", "conventions", "note"])
    table.attrs["notes"] = BeyondInputs.left_out(metrics, history, truth, item_features)
    return table


def beyond_accuracy_per_user(pred, *, k: int = 10, history=None, truth=None, catalog=None,
                             item_features=None, metrics=None, ties: Ties = "average",
                             head_share: float = 0.8, unseen: Unseen = "add_one",
                             user: str = "user", item: str = "item", score: str = "score",
                             label: str = "label") -> pd.DataFrame:
    r"""Per-user values of the beyond-accuracy metrics that have one, at one cut-off.

    The metrics with a per-user value (novelty, diversity, serendipity,
    personalization, ARP, APLT) are the means of these columns over the
    users where they are defined (NaN elsewhere: diversity needs two items,
    serendipity a history), so bootstrap intervals and slices by user apply.
    A user's personalization is 1 - mean over the *other* users of the
    overlap / k, so it depends on who else is evaluated. Catalogue-level
    metrics (coverage, entropy, Gini) have no per-user value and are left out.

    Parameters
    ----------{parameters}

    Returns
    -------
    pandas.DataFrame
        One row per user of pred (in order of first appearance): ``user``,
        ``n_items`` (the length of the top k) and one column per metric.

    Examples
    --------
    >>> import pandas as pd
    >>> pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.5, 0.8, 0.8]})
    >>> history = pd.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "b"]})
    >>> beyond_accuracy_per_user(pred, k=1, history=history, metrics=["arp"])
       user  n_items  arp
    0     1        1  3.0
    1     2        1  1.5
    """
    (cut,), ties, head_share, unseen = _check_options(k, metrics, ties, head_share, unseen)
    pred, history, truth, catalog, item_features = pandas_inputs(
        dict(pred=pred, history=history, truth=truth, catalog=catalog,
             item_features=item_features), ids=(user, item)).values()
    data = BeyondInputs(pred, history=history, truth=truth, catalog=catalog,
                        item_features=item_features, metrics=metrics, head_share=head_share,
                        unseen=unseen, user=user, item=item, score=score, label=label)
    top = data.top_k(cut, ties)
    data.check_top(top, unseen)
    wanted = [m for m in data.metrics if m in PER_USER_BEYOND]
    values = _metrics.beyond_per_user(top, data.context, wanted)
    present = np.flatnonzero(top.length > 0)
    table = pd.DataFrame({user: data.user_ids[present], "n_items": top.length[present]})
    for name in wanted:
        table[name] = values[name][present]
    return table


def most_popular(users, history, *, k: int | None = None, exclude_history: bool = False,
                 catalog=None, user: str = "user", item: str = "item",
                 score: str = "score") -> pd.DataFrame:
    r"""The "most popular" baseline's scores: every item scored by its rows in ``history``.

    Each user of ``users`` gets every item of the history (and of
    ``catalog``, at score 0) scored by its popularity, the same list for
    everyone; ``exclude_history=True`` leaves out each user's own history
    items. With ``k``, a user keeps only the rows that can reach the top k:
    the k best and every row tied with the k-th, so ``ties="average"`` is
    still exact.

    The other usual baseline, a random recommender, needs no frame of its
    own: give every candidate row the same score and evaluate under
    ``ties="average"``, which returns the exact expected value of a random
    order (no simulation, no seed) of every metric but Gini and entropy, which
    it gives at the expected exposure counts (see the module's Ties section).

    Parameters
    ----------
    users : sequence
        The users to recommend to (repeats are dropped).
    history : pandas.DataFrame
        The training log (columns ``user``, ``item``).
    k : int, optional
        Keep the rows that can reach the top k (default: every item).
    exclude_history : bool, default False
        Leave out the items of each user's own history.
    catalog : sequence, optional
        Items to score too (0 when absent from history).
    user, item, score : str
        Column names of the history and of the result.

    Returns
    -------
    pandas.DataFrame
        Columns ``user``, ``item``, ``score`` (float), by user then by
        descending score.

    Examples
    --------
    >>> import pandas as pd
    >>> history = pd.DataFrame({"user": [1, 2, 2, 3], "item": ["a", "a", "b", "c"]})
    >>> most_popular([1, 4], history, k=1, exclude_history=True).to_dict("list")
    {'user': [1, 1, 4], 'item': ['b', 'c', 'a'], 'score': [1.0, 1.0, 2.0]}
    """
    history = as_pandas(history, (user, item))
    as_frame("history", history, {"user": user, "item": item})
    if k is not None:
        (k,) = check_k_values(k)
    series = users if isinstance(users, pd.Series) else pd.Series(list(users))
    wanted = pd.DataFrame({user: series.drop_duplicates().to_numpy()})
    if len(wanted) == 0:
        raise ValueError("users is empty; pass the users to recommend to")
    frames = [("users", wanted), ("history", history)]
    item_frames = [("history", history)]
    if catalog is not None:
        item_frames.append(("catalog", as_catalog(catalog, item)))
    (u_codes, h_users), user_ids = codes(user, *frames)
    item_codes, item_ids = codes(item, *item_frames)
    h_items = item_codes[0]
    n_items = len(item_ids)
    popularity = np.bincount(h_items, minlength=n_items).astype(np.float64)
    order = np.lexsort((np.arange(n_items), -popularity))       # by popularity, then first seen
    if exclude_history:
        seen = np.sort(h_users.astype(np.int64) * n_items + h_items)
        seen = seen[_kernels.starts(seen)]
        per_user = np.bincount(seen // n_items, minlength=len(user_ids))
        depth = int(per_user[u_codes].max(initial=0))
    else:
        depth = 0
    if k is not None:
        # enough of the global order for every user's top k after exclusions, plus ties
        last = min(k + depth, n_items) - 1
        order = order[popularity[order] >= popularity[order[last]]] if n_items else order
    rows_user = np.repeat(u_codes, order.size)
    rows_item = np.tile(order, u_codes.size)
    if exclude_history:
        keys = rows_user.astype(np.int64) * n_items + rows_item
        keep = locate(keys, seen, len(user_ids) * n_items) < 0
        rows_user, rows_item = rows_user[keep], rows_item[keep]
    rows_score = popularity[rows_item]
    if k is not None and rows_user.size:
        # a user's k-th best score among the rows left, as a threshold
        start = np.flatnonzero(np.r_[True, rows_user[1:] != rows_user[:-1]])
        length = np.diff(np.r_[start, rows_user.size])
        kth = rows_score[start + np.minimum(length, k) - 1]
        keep = rows_score >= np.repeat(kth, length)
        rows_user, rows_item, rows_score = rows_user[keep], rows_item[keep], rows_score[keep]
    return pd.DataFrame({user: user_ids[rows_user], item: item_ids[rows_item],
                         score: rows_score})


for _f in (beyond_accuracy, beyond_accuracy_per_user):
    _f.__doc__ = (_f.__doc__ or "").replace("{parameters}", _PARAMETERS)  # None under python -OO
