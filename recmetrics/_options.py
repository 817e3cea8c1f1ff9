"""The options that change a number, defined once: the table and the typed object built from it.

:data:`CONVENTIONS` is the option table: each convention's name, choices
(the default first), help and the metrics whose number it changes. The
command line builds its flags from it, the report its parameters, the tidy
table its ``conventions`` column and ``attrs["conventions"]``.

:class:`Options` is what the engine receives: built once at the public
boundary by :meth:`Options.checked` from the keyword options (every value
checked there), frozen, and typed, so that no engine step re-spells an
option's name as a string.

Adding a convention
-------------------
1. Its ``Literal`` type and choices in :mod:`recmetrics._validation`.
2. A row of :data:`CONVENTIONS` (name, choices, help, scope).
3. A field of :class:`Options` with that name and type.
4. The keyword in the public signatures (``evaluate``, ``evaluate_per_user``,
   ``compare`` and their Dask versions) and their docstrings.
The command line's flag, the report's parameter, the provenance record and
the ``conventions`` column follow from the table.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ._validation import (DENOMINATORS, GAINS, GAUC_WEIGHTS, IDEALS, NO_RELEVANT, TIES,
                          Denominator, Gain, GaucWeight, Ideal, NoRelevant, Ties, check_k_values,
                          check_metrics, check_option)

#: The metrics that are means over users of a ranked list's value.
RANKING = ("precision", "recall", "hit_rate", "map", "mrr", "ndcg")


@dataclass(frozen=True)
class Convention:
    """One row of the option table."""

    name: str                   # the keyword, the table's key; the flag is --name-with-dashes
    choices: tuple[str, ...]    # the first is the default
    help: str                   # one line: what the choices mean
    scope: tuple[str, ...]      # the metrics whose number it changes
    general: bool = False       # shown after the metric's own conventions in its description

    @property
    def default(self) -> str:
        return self.choices[0]

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


CONVENTIONS: tuple[Convention, ...] = (
    Convention("ties", TIES,
               "tied scores: expected value over all orders (average) or the bounds",
               ("auc", "gauc") + RANKING, general=True),
    Convention("gain", GAINS, "NDCG gain: 2^rel - 1 or rel", ("ndcg",)),
    Convention("ideal", IDEALS, "NDCG ideal DCG (truth, as trec_eval)", ("ndcg",)),
    Convention("denominator", DENOMINATORS, "AP denominator (relevant, as trec_eval)", ("map",)),
    Convention("gauc_weight", GAUC_WEIGHTS, "GAUC user weights", ("gauc",)),
    Convention("no_relevant", NO_RELEVANT,
               "users with no relevant item: left out of the ranking means (skip), counted as 0 "
               "(zero), or refused (error)", RANKING, general=True),
)
CONVENTION = {c.name: c for c in CONVENTIONS}


def conventions_of(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The convention options out of a function's keyword arguments (e.g. its ``locals()``)."""
    return {c.name: namespace[c.name] for c in CONVENTIONS}


#: Equal-width bins of the ``ece`` metric (as recmetrics.expected_calibration_error's default).
ECE_BINS = 10
#: How the probability metrics' numbers are made, for their ``conventions`` column.
FIXED = {"ece": f"bins={ECE_BINS} uniform", "logloss": "natural log, clipped at eps",
         "ne": "natural log, clipped at eps", "brier": ""}


@dataclass(frozen=True)
class Options:
    """Checked options of one evaluation: cut-offs, metrics and every convention.

    Build it with :meth:`checked`; its fields are the table's names.
    """

    ks: tuple[int, ...]
    metrics: tuple[str, ...]
    ties: Ties
    gain: Gain
    ideal: Ideal
    denominator: Denominator
    gauc_weight: GaucWeight
    no_relevant: NoRelevant

    @classmethod
    def checked(cls, *, k, metrics, known: tuple[str, ...], default: tuple[str, ...],
                **conventions: Any) -> Options:
        """Check every option (``ValueError`` naming the bad one) and freeze them."""
        unknown = set(conventions) - set(CONVENTION)
        if unknown:
            raise TypeError(f"unknown convention option(s): {', '.join(sorted(unknown))}")
        # each value is one of its row's choices, the get_args of the field's Literal type
        values: dict[str, Any] = {name: check_option(name, conventions.get(name, c.default), c.choices)
                                  for name, c in CONVENTION.items()}
        return cls(ks=tuple(check_k_values(k)),
                   metrics=tuple(check_metrics(metrics, known, default)), **values)

    def replace(self, **changes: Any) -> Options:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Options(**values)

    def conventions(self) -> dict[str, Any]:
        """Every convention and the cut-offs, as ``attrs["conventions"]`` records them."""
        return {**{c.name: getattr(self, c.name) for c in CONVENTIONS}, "k": list(self.ks)}

    def describe(self, metric: str) -> str:
        """The conventions that change one metric's number, as the table's column shows them:
        the metric's own conventions first, then the general ones (ties, users)."""
        if metric in FIXED:
            return FIXED[metric]
        apply = [c for c in CONVENTIONS if metric in c.scope]
        ordered = [c for c in apply if not c.general] + [c for c in apply if c.general]
        return ", ".join(f"{c.name}={getattr(self, c.name)}" for c in ordered)
