"""Every input check of recmetrics and its message, in one place.

Public functions call these helpers before any arithmetic. A check either
returns a clean numpy array / Python value or raises ``ValueError`` whose
message names the argument, says what is wrong and what to do about it.
Legal but degenerate input (a 0/0, a list with no relevant item) is not an
error: :func:`zero_division_value` warns with :class:`RecmetricsWarning` and
applies the caller's ``zero_division`` policy.
"""
from __future__ import annotations

import math
import numbers
import os
import sys
import types
import warnings
from collections.abc import Iterable, Mapping
from typing import Literal, TypeGuard, TypeVar, get_args, overload

import numpy as np


class RecmetricsWarning(UserWarning):
    """Warning for legal but degenerate input, such as a metric that is 0/0.

    The result then follows a documented policy (usually the ``zero_division``
    option); filter this class to silence or escalate all such warnings::

        warnings.simplefilter("error", recmetrics.RecmetricsWarning)
    """


# --------------------------------------------------------------------------- options
# The vocabulary of the options, one spelling each, shared by every function,
# table column and command-line flag.

Ties = Literal["average", "optimistic", "pessimistic"]
#: The tie policies of the evaluation over many lists: the three above and trec_eval's order.
EvalTies = Literal["average", "optimistic", "pessimistic", "trec"]
Gain = Literal["exponential", "linear"]
Ideal = Literal["truth", "list", "full"]
Denominator = Literal["relevant", "min_k", "hits"]
GaucWeight = Literal["impressions", "clicks", "uniform"]
NoRelevant = Literal["skip", "zero", "error"]
Adjustment = Literal["holm", "bonferroni", "bh", "none"]
PrecisionDenominator = Literal["k", "min_k"]
RecallDenominator = Literal["relevant", "min_k"]
#: The P@k and R@k denominators of the evaluation: k and R, or min(k, R) for both.
PrDenominator = Literal["standard", "min_k"]
Average = Literal["binary", "micro", "macro", "weighted"]
#: Relevant truth items that pred never scored (a top-k export), in AUC and GAUC.
Unscored = Literal["ignore", "below"]

TIES: tuple[Ties, ...] = get_args(Ties)
EVAL_TIES: tuple[EvalTies, ...] = get_args(EvalTies)
GAINS: tuple[Gain, ...] = get_args(Gain)
IDEALS: tuple[Ideal, ...] = get_args(Ideal)
DENOMINATORS: tuple[Denominator, ...] = get_args(Denominator)
GAUC_WEIGHTS: tuple[GaucWeight, ...] = get_args(GaucWeight)
NO_RELEVANT: tuple[NoRelevant, ...] = get_args(NoRelevant)
ADJUSTMENTS: tuple[Adjustment, ...] = get_args(Adjustment)
PRECISION_DENOMINATORS: tuple[PrecisionDenominator, ...] = get_args(PrecisionDenominator)
RECALL_DENOMINATORS: tuple[RecallDenominator, ...] = get_args(RecallDenominator)
PR_DENOMINATORS: tuple[PrDenominator, ...] = get_args(PrDenominator)
AVERAGES: tuple[Average, ...] = get_args(Average)
UNSCORED: tuple[Unscored, ...] = get_args(Unscored)

#: Largest cut-off accepted: beyond it k only means "the whole list".
MAX_K = 2**31 - 1


def is_real_number(value) -> TypeGuard[float]:
    """A real number that is not a bool (int, float, numpy scalars, Fraction...).

    Typed as a guard to ``float`` so that the comparisons after it type-check: every
    ``numbers.Real`` compares with ints and floats, which ``numbers.Real``'s stub does not say.
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_whole_number(value) -> TypeGuard[int]:
    """An integral number that is not a bool (int, numpy integers); a guard to ``int``, as above."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
#: Resampling counts accepted by the bootstrap and randomization tests.
MIN_RESAMPLES, MAX_RESAMPLES = 100, 10_000_000


Choice = TypeVar("Choice", bound=str)


def check_option(name: str, value: object, allowed: Iterable[Choice]) -> Choice:
    """Return ``value`` if it is one of ``allowed`` (typed as they are), else raise."""
    choices = tuple(allowed)
    for choice in choices:
        if isinstance(value, str) and value == choice:
            return choice
    shown = ", ".join(repr(a) for a in choices)
    raise ValueError(f"{name}={value!r} is not a known option; use one of {shown}")


def check_zero_division(zero_division) -> str | float:
    """Accept "warn", 0.0, 1.0 or nan as a zero-division policy."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return zero_division
    elif is_real_number(zero_division):
        value = float(zero_division)
        if value in (0.0, 1.0) or math.isnan(value):
            return value
    raise ValueError(
        f"zero_division={zero_division!r} is not a known policy; "
        "use 'warn' (0.0 with a RecmetricsWarning), 0.0, 1.0 or float('nan')"
    )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """Stack level of the first frame outside recmetrics, so warnings point at user code."""
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def zero_division_value(policy, message: str) -> float:
    """Value to return for a 0/0 under ``policy``; warns under "warn"."""
    if policy == "warn":
        warnings.warn(f"{message}; returning 0.0 (pass zero_division= to choose)",
                      RecmetricsWarning, stacklevel=caller_stacklevel())
        return 0.0
    return float(policy)


def check_whole(name: str, value, *, minimum: int, maximum: int, example: str) -> int:
    """A whole number in [minimum, maximum]; the message names the option and gives an example."""
    if not is_whole_number(value):
        if is_real_number(value) and math.isfinite(value) and float(value).is_integer():
            hint = f"pass int({value!r})"
        else:
            hint = f"pass a whole number such as {example}"
        raise ValueError(f"{name}={value!r} must be a whole number >= {minimum}; {hint}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} must be a whole number >= {minimum}, e.g. {example}")
    if value > maximum:
        raise ValueError(f"{name}={value!r} is too large; use at most {maximum:,}")
    return int(value)


@overload
def check_k(k, *, allow_none: Literal[False] = ...) -> int: ...
@overload
def check_k(k, *, allow_none: bool) -> int | None: ...
def check_k(k, *, allow_none: bool = False) -> int | None:
    """A cut-off must be a whole number >= 1 (or None where that means "all")."""
    if k is None and allow_none:
        return None
    if is_whole_number(k) and k < 1:
        raise ValueError(f"k={k!r} must be an integer >= 1; use k=1 for the top item only")
    if is_whole_number(k) and k > MAX_K:
        raise ValueError(f"k={k!r} is too large; a cut-off of at most {MAX_K:,} already covers "
                         "any list (use k=None, where offered, for the whole list)")
    return check_whole("k", k, minimum=1, maximum=MAX_K, example="10")


def check_n_resamples(n_resamples) -> int:
    """Resampling count of a bootstrap or randomization test."""
    return check_whole("n_resamples", n_resamples, minimum=MIN_RESAMPLES,
                       maximum=MAX_RESAMPLES, example="1000")


def check_seed(seed):
    """A seed accepted by numpy.random.default_rng: None, an int >= 0 or a Generator."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if is_whole_number(seed) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed={seed!r} must be None, a whole number >= 0 or a "
                     "numpy.random.Generator; pass e.g. seed=0")


def check_slicing(by, min_slice_size) -> tuple[list[str], int]:
    """``by=`` and ``min_slice_size=`` of a sliced evaluation, checked (``users=`` alone is
    refused: it gives attributes, ``by=`` names the ones to slice by)."""
    if by is None:
        raise ValueError("users= gives attributes to slice by; name them with by= (e.g. "
                         "by='country')")
    return check_by(by), check_min_slice_size(min_slice_size)


def check_by(by) -> list[str]:
    """``by`` as a list of distinct column names."""
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else None
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"by={by!r} must be a column name or a list of column names (of pred, "
                         "truth or users), or 'activity'")
    if len(set(names)) < len(names):
        raise ValueError(f"by={by!r} names a column twice; name each column once")
    return names


def check_min_slice_size(min_slice_size) -> int:
    """A whole number of users >= 1."""
    if isinstance(min_slice_size, bool) or not isinstance(min_slice_size, numbers.Integral) \
            or min_slice_size < 1:
        raise ValueError(f"min_slice_size={min_slice_size!r} must be a whole number of users "
                         ">= 1 (default 30)")
    return int(min_slice_size)


def no_relevant_value(policy: str, message: str, *, stacklevel: int | None = None) -> float:
    """Value of a metric that is undefined because nothing is relevant, under ``no_relevant``.

    "skip" returns NaN with a warning (a mean leaves it out), "zero" returns 0.0
    silently, "error" raises ValueError.
    """
    if policy == "zero":
        return 0.0
    if policy == "error":
        raise ValueError(f"{message}; pass no_relevant='skip' or 'zero' to accept such lists")
    warnings.warn(f"{message}; returning NaN (pass no_relevant='zero' to count it as 0)",
                  RecmetricsWarning, stacklevel=stacklevel or caller_stacklevel())
    return float("nan")


def check_positive_real(name: str, value) -> float:
    """A strictly positive, finite number (F-beta's beta, for instance)."""
    if not is_real_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={value!r} must be a finite number > 0")
    return float(value)


def check_max_fpr(max_fpr, ties: str) -> float | None:
    """Partial AUC's bound: None, or a number with 0 < max_fpr <= 1 (ties averaged)."""
    if max_fpr is None:
        return None
    if not is_real_number(max_fpr) or not 0 < max_fpr <= 1:
        raise ValueError(f"max_fpr={max_fpr!r} must be a number with 0 < max_fpr <= 1 (the "
                         "largest false positive rate of the partial AUC), e.g. 0.1")
    if ties != "average" and max_fpr < 1:
        raise ValueError(f"max_fpr={max_fpr!r} reads the partial AUC off the ROC curve, which "
                         f"joins tied scores by a straight line (ties='average'); ties={ties!r} "
                         "is not available with it")
    return float(max_fpr)


def check_probability(name: str, value) -> float:
    """A number strictly between 0 and 1 (a significance level, say)."""
    if not is_real_number(value) or not 0 < value < 1:
        raise ValueError(f"{name}={value!r} must be a number strictly between 0 and 1, e.g. 0.05")
    return float(value)


# --------------------------------------------------------------------------- arrays


def _as_1d(name: str, values) -> np.ndarray:
    if isinstance(values, (str, bytes)) or np.ndim(values) == 0:
        raise ValueError(f"{name} must be a one-dimensional sequence, got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {arr.shape}; "
                         "flatten it or pass one column")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; pass at least one value")
    return arr


def as_numbers(name: str, values) -> np.ndarray:
    """A non-empty 1-d float array without NaN (infinities are allowed)."""
    arr = _as_1d(name, values)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must hold numbers, got values of dtype {arr.dtype}; "
                         "convert them with pandas.to_numeric or astype(float)")
    arr = arr.astype(np.float64, copy=False)
    nan = np.isnan(arr)
    if nan.any():
        first = int(np.flatnonzero(nan)[0])
        raise ValueError(f"{name} contains {int(nan.sum())} NaN value(s) (first at index {first}); "
                         "drop or impute them")
    return arr


def as_binary(name: str, values) -> np.ndarray:
    """A non-empty 1-d int8 array of 0/1 labels (bools and 0.0/1.0 accepted)."""
    arr = _as_1d(name, values)
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must hold binary labels 0/1, got values of dtype {arr.dtype}; "
                         "map them to 0 and 1 first")
    bad = ~((arr == 0) | (arr == 1))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must hold only 0 and 1, found {arr[first].item()!r} at index {first}; "
                         "map the positive class to 1 and the rest to 0")
    return arr.astype(np.int8)


def as_labels(name: str, values) -> np.ndarray:
    """A non-empty 1-d array of class labels (numbers or text), none missing."""
    import pandas as pd

    arr = _as_1d(name, values)
    missing = pd.isna(arr)
    if np.any(missing):
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} contains {int(np.sum(missing))} missing label(s) (first at "
                         f"index {first}); drop those samples or give them a class")
    return arr


def check_same_length(**arrays) -> int:
    """All arrays have one length; returns it."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"inputs differ in length: {described}; pass one value per sample")
    return next(iter(lengths.values()))


def check_both_classes(name: str, labels: np.ndarray) -> tuple[int, int]:
    """AUC needs at least one positive and one negative; returns (n_pos, n_neg)."""
    n_pos = int(np.count_nonzero(labels))
    n_neg = labels.size - n_pos
    if n_pos == 0 or n_neg == 0:
        only = "negatives (0)" if n_pos == 0 else "positives (1)"
        raise ValueError(f"{name} holds only {only}; AUC needs at least one positive and one "
                         "negative sample")
    return n_pos, n_neg


def as_groups(name: str, groups) -> np.ndarray:
    """Group keys (any hashable values, tuples included; no missing ones)."""
    import pandas as pd  # local: pandas is only needed for group keys

    if isinstance(groups, (list, tuple)) and groups and isinstance(groups[0], tuple):
        arr = np.empty(len(groups), dtype=object)
        arr[:] = groups  # keep tuples whole: one key each, not a 2-d array
    else:
        arr = _as_1d(name, groups)
    missing = pd.isna(arr)
    if np.any(missing):
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} contains {int(np.sum(missing))} missing value(s) (first at index "
                         f"{first}); give every row a group id")
    return arr


def as_counts(name: str, values) -> np.ndarray:
    """Non-negative, finite counts or frequencies."""
    arr = as_numbers(name, values)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains infinite values; pass finite counts")
    if (arr < 0).any():
        first = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} contains a negative count ({arr[first].item()!r} at index {first}); "
                         "counts must be >= 0")
    return arr


def as_finite_numbers(name: str, values) -> np.ndarray:
    """A non-empty 1-d float array of finite numbers (no NaN, no infinity)."""
    arr = as_numbers(name, values)
    infinite = np.isinf(arr)
    if infinite.any():
        first = int(np.flatnonzero(infinite)[0])
        raise ValueError(f"{name} contains {int(infinite.sum())} infinite value(s) (first at index "
                         f"{first}); a mean with an infinite value is not a number, so drop or "
                         "clip them")
    return arr


def as_p_values(name: str, values) -> np.ndarray:
    """A 1-d float array of p-values in [0, 1]; NaN allowed (a test not run), may be empty."""
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence of p-values, got "
                         f"{type(values).__name__}" + (f" of shape {np.shape(values)}"
                                                       if np.ndim(values) > 1 else ""))
    arr = np.asarray(values)
    if arr.size == 0:
        return np.empty(0)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must hold numbers, got values of dtype {arr.dtype}; "
                         "convert them with pandas.to_numeric or astype(float)")
    arr = arr.astype(np.float64)
    outside = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{name} must hold p-values in [0, 1] (NaN for a test not run), found "
                         f"{arr[first].item()!r} at index {first}; pass the tests' p-values, not "
                         "their statistics")
    return arr


# --------------------------------------------------------------------------- ranked lists


def as_ranked(name: str, ranked) -> list:
    """A ranked list of distinct item ids, best first (may be empty)."""
    if isinstance(ranked, (str, bytes, Mapping, set, frozenset)) or np.ndim(ranked) != 1:
        raise ValueError(f"{name} must be a sequence of item ids in rank order (best first), got "
                         f"{type(ranked).__name__}")
    items = list(ranked.tolist() if hasattr(ranked, "tolist") else ranked)
    seen: dict = {}
    for position, item in enumerate(items):
        if item in seen:
            raise ValueError(f"{name} lists item {item!r} twice (positions {seen[item] + 1} and "
                             f"{position + 1}); each item may appear once in a ranking")
        seen[item] = position
    return items


def as_relevance(name: str, relevance) -> dict:
    """Item -> grade mapping; a set, list or array of items means grade 1 each."""
    if isinstance(relevance, Mapping):
        grades = dict(relevance)
    elif isinstance(relevance, (str, bytes)):
        raise ValueError(f"{name} must be a set of relevant items or a mapping item -> grade, got "
                         "a string")
    else:
        try:
            items = list(relevance.tolist() if hasattr(relevance, "tolist") else relevance)
        except TypeError:
            raise ValueError(f"{name} must be a set of relevant items or a mapping item -> grade, "
                             f"got {type(relevance).__name__}") from None
        grades = dict.fromkeys(items, 1.0)
    for item, grade in grades.items():
        if not is_real_number(grade) or math.isnan(grade) or math.isinf(grade):
            raise ValueError(f"{name}[{item!r}] = {grade!r} is not a finite number; relevance "
                             "grades must be numbers >= 0")
        if grade < 0:
            raise ValueError(f"{name}[{item!r}] = {grade!r} is negative; relevance grades must be "
                             ">= 0 (0 = not relevant)")
    return {item: float(grade) for item, grade in grades.items()}


def as_items(name: str, items) -> set:
    """A collection of item ids (a set, list or array; not a string or a mapping)."""
    if isinstance(items, (str, bytes, Mapping)):
        raise ValueError(f"{name} must be a set of item ids, got {type(items).__name__}")
    try:
        return set(items.tolist() if hasattr(items, "tolist") else items)
    except TypeError:
        raise ValueError(f"{name} must be a set of item ids, got {type(items).__name__}") from None


def check_rbp_p(value, name: str = "rbp_p") -> float:
    """RBP's persistence ``rbp_p`` (``p`` in :func:`recmetrics.rbp`): strictly between 0 and 1."""
    if not is_real_number(value) or not 0 < value < 1:
        raise ValueError(f"{name}={value!r} must be a number strictly between 0 and 1 (RBP's "
                         "persistence: the probability that the user reads on), e.g. 0.8")
    return float(value)


def check_min_grade(min_grade) -> float | None:
    """The relevance threshold: None (relevant = grade > 0) or a finite number > 0."""
    if min_grade is None:
        return None
    if not is_real_number(min_grade) or not math.isfinite(min_grade) or min_grade <= 0:
        raise ValueError(f"min_grade={min_grade!r} must be a number > 0 (grades below it are not "
                         "relevant, as trec_eval -l), or None for grade > 0")
    return float(min_grade)


def check_flag(name: str, value) -> bool:
    """A true/false option (a bool, or numpy's)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={value!r} must be True or False")
    return bool(value)


def check_max_grade(max_grade, top_judged: float | None = None) -> float | None:
    """The top grade of the judging scale (ERR, RBP): None (the top grade in the truth) or a
    number > 0 and below 1024, at least every judged grade (``top_judged``, when known)."""
    if max_grade is None:
        return None
    if not is_real_number(max_grade) or not math.isfinite(max_grade) or max_grade <= 0:
        raise ValueError(f"max_grade={max_grade!r} must be a number > 0 and below 1024 (the top "
                         "grade of the judging scale, e.g. 4), or None for the top grade in the "
                         "truth")
    if max_grade >= 1024:
        raise ValueError(f"max_grade={max_grade!r} is too large: 2**max_grade overflows float64 "
                         "from 1024 on; pass a number below 1024 (rescale the grades)")
    if top_judged is not None and top_judged > max_grade:
        raise ValueError(f"a judged grade ({top_judged:g}) is above max_grade={max_grade:g}; pass "
                         "the top grade of the judging scale as max_grade (or None for the top "
                         "grade in the truth)")
    return float(max_grade)


def as_sample_weight(sample_weight, n: int) -> np.ndarray | None:
    """None, or one finite weight >= 0 per sample (as float64), not all zero."""
    if sample_weight is None:
        return None
    w = as_numbers("sample_weight", sample_weight)
    if w.size != n:
        raise ValueError(f"sample_weight has {w.size} values but there are {n} samples; pass one "
                         "weight per sample")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"sample_weight must hold finite numbers >= 0, found "
                         f"{w[first].item()!r} at index {first}")
    if not (w > 0).any():
        raise ValueError("sample_weight is 0 for every sample; give some samples a weight > 0")
    return w


def as_grades(name: str, grades) -> np.ndarray:
    """Relevance grades by position: finite numbers >= 0 (may be empty)."""
    if isinstance(grades, (str, bytes)) or np.ndim(grades) != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence of relevance grades by "
                         "position")
    arr = np.asarray(grades)
    if arr.size == 0:
        return arr.astype(np.float64)
    arr = as_numbers(name, arr)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains infinite grades; relevance grades must be finite")
    if (arr < 0).any():
        first = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} has a negative grade ({arr[first].item()!r} at position {first + 1}); "
                         "relevance grades must be >= 0")
    return arr


def check_exponential_gain(name: str, grades: np.ndarray, gain: str) -> None:
    """2**grade - 1 overflows float64 from grade 1024 on: refuse, with the way out."""
    if gain == "exponential" and grades.size and grades.max() >= 1024:
        raise ValueError(f"{name} has grade {grades.max():g}, and the exponential gain 2**grade - 1 "
                         "overflows float64 from grade 1024 on; use gain='linear', or ndcg(), "
                         "which normalises without overflow")


def check_same_number_of_lists(**lists) -> int:
    lengths = {name: len(v) for name, v in lists.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"one ranking per user is needed: {described}")
    n = next(iter(lengths.values()))
    if n == 0:
        raise ValueError(f"{next(iter(lengths))} is empty; pass at least one ranked list")
    return n


# --------------------------------------------------------------------------- data frames


def as_frame(name: str, frame, columns: dict[str, str]):
    """A pandas DataFrame holding the given columns ({option name: column name})."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame or a table that exports the Arrow C "
                         f"stream (Polars, DuckDB, pyarrow), got {type(frame).__name__}; read "
                         "your file with recmetrics.io.read_scores or pandas.read_csv")
    check_columns(name, frame.columns, columns)
    if len(frame) == 0:
        raise ValueError(f"{name} has no rows; pass at least one scored item")
    return frame


#: Words that name each role's column in files as people write them, most telling first.
_ROLE_WORDS = {
    "user": ("user", "uid", "customer", "client", "member", "session", "query", "qid"),
    "item": ("item", "iid", "product", "movie", "doc", "video", "song", "article", "sku"),
    "score": ("score", "pred", "prob", "rating", "logit", "output"),
    "rank": ("rank", "position", "pos"),
    "label": ("label", "click", "relevan", "grade", "target", "star", "rel", "y"),
}


def likely_column(role: str, present, taken) -> str | None:
    """The column a user probably meant for ``role`` (``user_id`` for user), if one stands out."""
    free = [str(c) for c in present if str(c) not in taken]
    for word in _ROLE_WORDS.get(role, (role,)):
        found = [c for c in free if c.lower() == word or c.lower().startswith(word)
                 or c.lower().endswith(word) or f"_{word}" in c.lower() or f"{word}_" in c.lower()]
        if len(found) == 1:
            return found[0]
    return None


def missing_columns(present, columns: dict[str, str]) -> list[tuple[str, str, str | None]]:
    """Every wanted column that is absent: (role, column, the likely intended column or None)."""
    present = [str(c) for c in present]
    taken = {c for c in columns.values() if c in present}
    missing = []
    for role, column in columns.items():
        if column not in present:
            guess = likely_column(role, present, taken)
            if guess is not None:
                taken.add(guess)
            missing.append((role, column, guess))
    return missing


def check_columns(name: str, present, columns: dict[str, str]) -> None:
    """The frame's columns ``present`` hold every wanted column ({option name: column name});
    else one message naming every missing column and, where one stands out, the likely one."""
    missing = missing_columns(present, columns)
    check_distinct_columns(name, columns)
    if missing:
        wanted = ", ".join(repr(column) for _, column, _ in missing)
        have = ", ".join(repr(str(c)) for c in present) or "none"
        advice = ", ".join(f"{role}={guess!r}" if guess else f"{role}='<column name>'"
                           for role, _, guess in missing)
        raise ValueError(f"{name} has no column {wanted}; its columns are {have}. Rename the "
                         f"column(s) or pass {advice}")


def as_tidy_frame(name: str, frame, required: tuple[str, ...], what: str, *,
                  complete: tuple[str, ...] | None = None):
    """A pandas DataFrame holding the columns ``required`` (fixed names; ``what`` says what a
    row is), at least one row and no missing value in the columns ``complete`` (default: all
    of ``required``)."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with one row per {what}, got "
                         f"{type(frame).__name__}")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        have = ", ".join(repr(str(c)) for c in frame.columns) or "none"
        raise ValueError(f"{name} has no column {', '.join(map(repr, missing))}; its columns are "
                         f"{have}. It needs the columns {', '.join(map(repr, required))} (one row "
                         f"per {what}): rename yours with DataFrame.rename(columns=...)")
    if len(frame) == 0:
        raise ValueError(f"{name} has no rows; pass at least one {what}")
    for column in required if complete is None else complete:
        blank = pd.isna(frame[column]).to_numpy()
        if blank.any():
            first = int(np.flatnonzero(blank)[0])
            raise ValueError(f"{name} column {column!r} has {int(blank.sum())} missing value(s) "
                             f"(first in row {first}); fill or drop those rows")
    return frame


def check_distinct_columns(name: str, columns: dict[str, str]) -> None:
    """Each role of one frame ({option name: column name}) names a column of its own.

    ``score="label"`` without a truth frame would judge the labels against themselves (AUC 1).
    """
    seen: dict[str, str] = {}
    for option, column in columns.items():
        if column in seen:
            raise ValueError(f"{name}: {seen[column]}={column!r} and {option}={column!r} name the "
                             f"same column, so {name} would be judged against itself (an AUC of "
                             f"1.0, say); pass each of {seen[column]}= and {option}= its own "
                             "column")
        seen[column] = option


def _row(i: int) -> str:
    return f"row {i}"


def id_column(name: str, frame, column: str, *, where=_row) -> None:
    """User or item ids: no missing values."""
    import pandas as pd

    missing = pd.isna(frame[column]).to_numpy()
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} column {column!r} has {int(missing.sum())} missing id(s) (first "
                         f"in {where(first)}); fill or drop those rows")


def _true_false(values):
    """Labels written as true / false (any case, as pandas writes a bool column): 1 / 0."""
    import pandas as pd

    text = values.astype("str").str.strip().str.lower()
    known = text.isin(["true", "false"]) | values.isna()
    if known.all() and (text == "true").any() | (text == "false").any():
        return pd.Series(np.where(text == "true", 1.0, np.where(values.isna(), np.nan, 0.0)),
                         index=values.index)
    return values


def numeric_column(name: str, frame, column: str, *, grades: bool = False,
                   where=_row) -> np.ndarray:
    """A column of numbers without NaN (and finite, >= 0 when ``grades``), as float64.

    ``where`` turns a 0-based row number into words for messages ("row 17" by
    default; the command line says "line 19" of the file).
    """
    import pandas as pd

    values = frame[column]
    if pd.api.types.is_bool_dtype(values):
        values = values.astype(np.int8)
    if grades and not pd.api.types.is_numeric_dtype(values):
        values = _true_false(values)
    if not pd.api.types.is_numeric_dtype(values):
        converted = pd.to_numeric(values, errors="coerce")
        bad = (pd.isna(converted) & pd.notna(values)).to_numpy()
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} column {column!r} must hold numbers, found "
                             f"{plain(values.iloc[first])!r} in {where(first)}; fix or drop that "
                             "row")
        values = converted
    exact = values.dropna() if pd.api.types.is_integer_dtype(values) else values.iloc[:0]
    if len(exact) and (int(exact.max()) > 2**53 or int(exact.min()) < -2**53):
        warnings.warn(f"{name} column {column!r} holds integers above 2**53, which float64 cannot "
                      "tell apart: some distinct values will compare equal (ties); rescale them "
                      "or pass ranks", RecmetricsWarning, stacklevel=caller_stacklevel())
    # a numpy column has no missing value but NaN: converted without na_value, which copies
    arr = values.to_numpy(dtype=np.float64) if isinstance(values.dtype, np.dtype) else \
        values.to_numpy(dtype=np.float64, na_value=np.nan)
    nan = np.isnan(arr)
    if nan.any():
        first = int(np.flatnonzero(nan)[0])
        raise ValueError(f"{name} column {column!r} has {int(nan.sum())} missing or NaN value(s) "
                         f"(first in {where(first)}); drop or fill them")
    if grades and (arr < 0).any():
        first = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} column {column!r} has a negative relevance label "
                         f"({arr[first]:g} in {where(first)}); labels must be >= 0 "
                         "(0 = not relevant)")
    if grades and not np.isfinite(arr).all():
        raise ValueError(f"{name} column {column!r} has infinite labels; labels must be finite")
    return arr


# --------------------------------------------------------------------------- ids
# The id policy itself lives in recmetrics._ids; these are its checks.


def check_id_codes(name: str, column: str, codes: np.ndarray) -> None:
    """Codes from ``pandas.factorize`` of an id column: -1 marks a missing id."""
    missing = codes < 0
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} column {column!r} has {int(missing.sum())} missing id(s) (first "
                         f"in row {first}); fill or drop those rows")


def all_distinct(keys: np.ndarray) -> bool:
    """Whether non-negative integer keys are pairwise distinct.

    A bitmap of the key space when it is at most 8 bytes a key (no larger than
    the keys themselves); otherwise a sort, which needs far less memory than a
    hash table of the keys.
    """
    top = int(keys.max(initial=-1)) + 1
    if top <= 8 * keys.size + 65536:
        seen = np.zeros(top, dtype=bool)
        seen[keys] = True
        return np.count_nonzero(seen) == keys.size
    ordered = np.sort(keys)
    return not (ordered[1:] == ordered[:-1]).any()


#: Rows whose (user, item) keys :func:`pairs_distinct` makes at a time.
PAIR_BLOCK = 1 << 20


def pairs_distinct(users: np.ndarray, items: np.ndarray, n_items: int) -> bool:
    """Whether the (user, item) code pairs are pairwise distinct: :func:`all_distinct` of
    ``users * n_items + items``, the keys made a block of rows at a time when a bitmap of
    the pair space serves (no array of 8 bytes a row)."""
    n = users.size
    top = (int(users.max(initial=-1)) + 1) * n_items
    if top > 8 * n + 65536:
        return all_distinct(users.astype(np.int64) * n_items + items)
    seen = np.zeros(top, dtype=bool)
    step = PAIR_BLOCK
    for start in range(0, n, step):
        keys = users[start:start + step].astype(np.int64)
        keys *= n_items
        keys += items[start:start + step]
        seen[keys] = True
    return np.count_nonzero(seen) == n


class DuplicatePairs(ValueError):
    """Two rows of one (user, item) pair in a frame (:func:`check_unique_keys`): the command
    line, which leaves that check of the files it reads to the join, then names the file
    and line (``recmetrics.io.check_pairs``)."""


def check_unique_keys(name: str, keys: np.ndarray, frame, user: str, item: str, *,
                      where=_row) -> None:
    """One row per (user, item): ``keys`` are the pairs as int64 codes (else DuplicatePairs,
    a ValueError)."""
    import pandas as pd

    if all_distinct(keys):
        return
    duplicated = pd.Index(keys).duplicated()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        row = {c: frame[c].iloc[first] for c in (user, item)}  # each column keeps its type
        raise DuplicatePairs(f"{name} has {int(duplicated.sum())} duplicate ({user}, {item}) "
                             f"row(s) (first: {user}={plain(row[user])!r}, "
                             f"{item}={plain(row[item])!r} in {where(first)}; ids are compared "
                             "as text, so 7, 7.0 and ' 7' are one id); keep one row per pair")


def warn_unmatched(what: str, n_missing: int, n_total: int, missing_examples, other_examples,
                   other: str, *, share: float, at_least: int = 1) -> None:
    """Warn when more than ``share`` of truth's users or relevant rows find no scored row."""
    if n_total < at_least or n_missing <= share * n_total:
        return
    shown = ", ".join(repr(x) for x in missing_examples[:3])
    seen = ", ".join(repr(x) for x in other_examples[:3])
    warnings.warn(
        f"{n_missing:,} of {n_total:,} {what} in truth have no scored row in pred (e.g. {shown}; "
        f"pred has {other} such as {seen}); if the ids should match, write them the same way in "
        "both (ids are compared as text: spaces stripped, 7.0 read as 7, but '001' is not '1')",
        RecmetricsWarning, stacklevel=caller_stacklevel())


def check_probability_scores(name: str, column: str, scores: np.ndarray, metrics) -> None:
    """Scores used as probabilities (log loss, calibration) must lie in [0, 1]."""
    outside = ~((scores >= 0) & (scores <= 1))
    if outside.any():
        example = scores[outside][0]
        raise ValueError(f"{name} column {column!r} holds {int(outside.sum()):,} score(s) outside "
                         f"[0, 1] (e.g. {example:g}), so {', '.join(metrics)} cannot treat the scores "
                         "as probabilities; drop those metrics, or map the scores through a sigmoid "
                         "or a calibrator first (AUC and the ranking metrics accept any score)")


def check_unique_pairs(name: str, frame, user: str, item: str, *, where=_row) -> None:
    """One row per (user, item) as written (the file's own values, before the id policy)."""
    import pandas as pd

    def factorized(column):  # ids read from a file are already categorical: no second hash
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            return values.array.codes, len(values.cat.categories)
        codes_, uniques = pd.factorize(values)
        return codes_, len(uniques)

    users, _ = factorized(user)
    items, n_items = factorized(item)
    if pairs_distinct(users, items, n_items):  # the usual case
        return
    duplicated = frame.duplicated([user, item]).to_numpy()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        row = {c: frame[c].iloc[first] for c in (user, item)}  # each column keeps its type
        raise ValueError(f"{name} has {int(duplicated.sum())} duplicate ({user}, {item}) row(s) "
                         f"(first: {user}={plain(row[user])!r}, {item}={plain(row[item])!r} in "
                         f"{where(first)}); keep one row per pair")


def plain(value):
    """A numpy scalar as the Python value it holds, so messages read 1, not np.int64(1)."""
    return value.item() if isinstance(value, np.generic) else value


def check_k_values(k) -> list[int]:
    """One cut-off or a sequence of them, as a sorted list of distinct ints."""
    values = [k] if isinstance(k, numbers.Integral) or not isinstance(k, Iterable) \
        or isinstance(k, str) else list(k)
    if not values:
        raise ValueError("k is empty; pass a cut-off such as 10 or a list such as [5, 10, 20]")
    return sorted({check_k(v) for v in values})


def check_metrics(metrics, known: tuple[str, ...], default: tuple[str, ...] | None = None) -> list[str]:
    """``metrics=``: None (the default set), one name or a non-empty sequence of known names,
    returned in ``known`` order."""
    if metrics is None:
        return list(default or known)
    names = [metrics] if isinstance(metrics, str) else list(metrics) \
        if isinstance(metrics, Iterable) else [metrics]
    if not names:
        raise ValueError("metrics is empty; pass None for every metric or names such as "
                         "['auc', 'ndcg']")
    for name in names:
        check_option("metrics", name, known)
    return [m for m in known if m in names]


# --------------------------------------------------------------------------- probabilities
# Checks of recmetrics.probability (issue 12): predicted probabilities, the log-loss clip,
# calibration bins, and the one degenerate case (a metric undefined for the data) that
# warns and returns NaN instead of raising.


def as_probabilities(name: str, values) -> np.ndarray:
    """A non-empty 1-d float array of probabilities in [0, 1] (no NaN, no infinity)."""
    arr = as_numbers(name, values)
    outside = ~((arr >= 0) & (arr <= 1))
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{name} must hold probabilities in [0, 1], found {arr[first].item()!r} at "
                         f"index {first} ({int(outside.sum())} value(s) outside [0, 1]); scores "
                         "or logits are not probabilities: map them through a sigmoid or "
                         "calibrate them first (roc_auc and pr_auc accept any score)")
    return arr


def check_eps(eps) -> float:
    """The log-loss clip: a number with 0 <= eps < 0.5."""
    if not is_real_number(eps) or not 0 <= eps < 0.5:
        raise ValueError(f"eps={eps!r} must be a number with 0 <= eps < 0.5; probabilities are "
                         "clipped to [eps, 1 - eps] (0 = no clip, then a confident miss costs inf)")
    return float(eps)


def check_n_bins(n_bins) -> int:
    """A number of calibration bins: a whole number >= 1."""
    if not is_whole_number(n_bins) or n_bins < 1:
        raise ValueError(f"n_bins={n_bins!r} must be a whole number >= 1 (the number of bins "
                         "the probabilities are grouped into), e.g. 10")
    return int(n_bins)


def check_has_positive(name: str, labels: np.ndarray) -> int:
    """Recall divides by the number of positives; returns it (> 0) or raises."""
    n_pos = int(np.count_nonzero(labels))
    if n_pos == 0:
        raise ValueError(f"{name} holds no positive (1); the precision-recall curve needs at least "
                         "one positive sample (recall = TP / P)")
    return n_pos


def undefined_value(message: str) -> float:
    """NaN for a metric the data leave undefined, with a RecmetricsWarning saying why."""
    warnings.warn(f"{message}; returning NaN", RecmetricsWarning, stacklevel=caller_stacklevel())
    return float("nan")


# --------------------------------------------------------------------------- sampled metrics
# Checks of recmetrics.sampling: catalogue sizes, ranks, the metric and its cut-off, gamma.


def check_count(name: str, value, minimum: int, why: str) -> int:
    """A whole number >= ``minimum`` (bools and non-integral floats refused)."""
    if not is_whole_number(value):
        if is_real_number(value) and math.isfinite(value) and float(value).is_integer():
            hint = f"; pass int({value!r})"
        else:
            hint = ""
        raise ValueError(f"{name}={value!r} must be a whole number >= {minimum} ({why}){hint}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} must be a whole number >= {minimum} ({why})")
    return int(value)


def check_catalogue(n_items, n_negatives) -> tuple[int, int]:
    n_items = check_count("n_items", n_items, 2,
                           "the catalogue holds the held-out item and at least one other")
    n_negatives = check_count("n_negatives", n_negatives, 1, "at least one sampled negative")
    if n_negatives > n_items - 1:
        raise ValueError(f"n_negatives={n_negatives} is more than the {n_items - 1} other items "
                         f"(n_items - 1); negatives are drawn without replacement, so pass "
                         f"n_negatives <= {n_items - 1}")
    return n_items, n_negatives


def as_ranks(name: str, values, upper: int, upper_name: str) -> np.ndarray:
    """Whole ranks 1 .. upper as float64 (the kernels' input)."""
    ranks = as_numbers(name, values)
    not_whole = ~np.isfinite(ranks) | (ranks != np.floor(ranks))
    if not_whole.any():
        first = int(np.flatnonzero(not_whole)[0])
        raise ValueError(f"{name} contains {int(not_whole.sum())} value(s) that are not whole "
                         f"numbers (first: {ranks[first].item()!r} at index {first}); ranks are "
                         "positions 1, 2, 3, ...")
    outside = (ranks < 1) | (ranks > upper)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{name} contains {int(outside.sum())} value(s) outside 1..{upper} "
                         f"(first: {ranks[first].item():g} at index {first}); ranks are 1-based "
                         f"(best = 1) and at most {upper_name}")
    return ranks


def check_sampled_metric(metric, k, known: tuple[str, ...]) -> tuple[str, int | None]:
    """A metric of recmetrics.sampling and its cut-off (required, optional or refused)."""
    metric = check_option("metric", metric, known)
    if metric == "auc":
        if k is not None:
            raise ValueError(f"k={k!r} does not apply to metric='auc', which looks at the whole "
                             "list; leave k=None")
        return metric, None
    if k is None and metric in ("hit_rate", "precision"):
        raise ValueError(f"metric={metric!r} needs a cut-off; pass k, e.g. k=10")
    return metric, check_k(k, allow_none=True)


def check_gamma(gamma) -> float:
    if not is_real_number(gamma) or not 0 <= gamma <= 1:
        raise ValueError(f"gamma={gamma!r} must be a number from 0 to 1 (0: least bias, "
                         "1: least mean squared error); the default is 0.01")
    return float(gamma)


# --------------------------------------------------------------------------- plots
# Checks of recmetrics.plots: the axes to draw on, several models' scores, table columns.


def check_axes(ax):
    """None or a matplotlib Axes (matplotlib is imported only when an Axes is passed)."""
    if ax is None:
        return None
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}; pass "
                         "e.g. ax from fig, ax = plt.subplots(), or leave it out for a new figure")
    return ax


def as_models(name: str, scores, label: str | None) -> list[tuple[str, object]]:
    """One model's scores, or a dict {model name: scores}, as a list of (name, scores)."""
    if isinstance(scores, Mapping):
        if not scores:
            raise ValueError(f"{name} is an empty dict; pass {{model name: scores}} with at least "
                             "one model, or one model's scores")
        if label is not None:
            raise ValueError(f"name={label!r} names one model, but {name} is a dict whose keys "
                             "already name the models; leave name= out")
        return [(str(key), value) for key, value in scores.items()]
    return [("model" if label is None else str(label), scores)]


def table_column(name: str, frame, column: str, option: str) -> np.ndarray:
    """A numeric column of a result table as float64 (NaN allowed: a value left undefined)."""
    check_columns(name, frame.columns, {option: column})
    values = frame[column]
    if not (_numeric_series(values) or values.isna().all()):
        raise ValueError(f"{name}[{column!r}] must hold numbers, got dtype {values.dtype}; pass "
                         f"{option}= the name of a numeric column")
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _numeric_series(series) -> bool:
    """A pandas Series of numbers (bools excluded)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return is_numeric_dtype(series.dtype) and not is_bool_dtype(series.dtype)


# --------------------------------------------------------------------------- beyond accuracy
# Checks of recmetrics.beyond: the long-tail share, the unseen-item policy, catalogues, features.

Unseen = Literal["add_one", "zero", "error"]
UNSEEN: tuple[str, ...] = get_args(Unseen)


def check_head_share(head_share) -> float:
    """The share of history rows the head of popular items holds: a number in (0, 1]."""
    if not is_real_number(head_share) or not 0 < head_share <= 1:
        raise ValueError(f"head_share={head_share!r} must be a number in (0, 1], the share of "
                         "history rows held by the popular head (the usual value is 0.8)")
    return float(head_share)


def as_catalog(catalog, item: str):
    """``catalog=``: a non-empty sequence of item ids, as a one-column DataFrame."""
    import pandas as pd

    if isinstance(catalog, (str, bytes, pd.DataFrame)) or not isinstance(catalog, Iterable):
        raise ValueError(f"catalog must be a sequence of item ids (a list, array or Series), got "
                         f"{type(catalog).__name__}; pass e.g. catalog=items_df['{item}']")
    values = pd.Series(list(catalog) if not isinstance(catalog, pd.Series) else catalog.to_numpy())
    if len(values) == 0:
        raise ValueError("catalog is empty; pass every item that could be recommended, or leave "
                         "catalog=None to use the items seen in history, pred and truth")
    id_column("catalog", pd.DataFrame({item: values}), item, where=lambda i: f"position {i}")
    return pd.DataFrame({item: values})


def feature_matrix(frame, item: str) -> np.ndarray:
    """``item_features``: numeric columns beside ``item``, or one column of equal-length vectors,
    as a float64 matrix (one row per row of the frame) without NaN."""
    others = [c for c in frame.columns if c != item]
    if not others:
        raise ValueError(f"item_features has no column beside {item!r}; add numeric feature "
                         "columns or one column holding a vector per item")
    if len(others) == 1 and frame[others[0]].dtype == object:
        column = others[0]
        try:
            vectors = [np.asarray(v, dtype=np.float64).ravel() for v in frame[column]]
        except (TypeError, ValueError):
            raise ValueError(f"item_features column {column!r} must hold numbers or vectors of "
                             "numbers (lists or arrays)") from None
        lengths = {v.size for v in vectors}
        if len(lengths) > 1:
            raise ValueError(f"item_features column {column!r} holds vectors of different lengths "
                             f"({sorted(lengths)[:3]}); give every item a vector of one length")
        matrix = np.vstack(vectors) if vectors else np.zeros((0, 1))
        if np.isnan(matrix).any():
            row = int(np.flatnonzero(np.isnan(matrix).any(axis=1))[0])
            raise ValueError(f"item_features column {column!r} has NaN in row {row}; fill or drop "
                             "that item's features")
        if not np.isfinite(matrix).all():
            raise ValueError(f"item_features column {column!r} has infinite values; features must "
                             "be finite")
        return matrix
    matrix = np.column_stack([numeric_column("item_features", frame, c) for c in others])
    if not np.isfinite(matrix).all():
        raise ValueError("item_features has infinite values; features must be finite")
    return matrix


def check_known_items(name: str, what: str, missing: np.ndarray, ids, advice: str) -> None:
    """Items (codes) that should have been found in ``name`` and were not."""
    if missing.size:
        shown = ", ".join(repr(plain(ids[i])) for i in missing[:3])
        raise ValueError(f"{name} lacks {missing.size:,} item(s) {what} (e.g. {shown}); {advice}")
