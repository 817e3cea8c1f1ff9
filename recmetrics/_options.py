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
1. Its ``Literal`` type and choices in :mod:`recmetrics._validation` (a
   number or a true/false switch instead: no choices, a default ``value``
   and a ``check``; the command line makes it a numeric flag or a switch).
2. A row of :data:`CONVENTIONS` (name, choices, help, scope).
3. A field of :class:`Options` with that name and type.
4. The keyword in the public signatures (``evaluate``, ``evaluate_per_user``,
   ``compare``: the only ones; the Dask and Spark forms are the same functions) and
   their docstrings.
The command line's flag, the report's parameter, the provenance record and
the ``conventions`` column follow from the table.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ._metrics import METRIC, PAIRWISE, scope
from ._validation import (DENOMINATORS, EVAL_TIES, GAINS, GAUC_WEIGHTS, IDEALS, NO_RELEVANT,
                          PR_DENOMINATORS, UNSCORED, Denominator, EvalTies, Gain, GaucWeight,
                          Ideal, NoRelevant, PrDenominator, Unscored, check_flag, check_k_values,
                          check_max_grade, check_metrics, check_min_grade, check_option,
                          check_rbp_p)


@dataclass(frozen=True)
class Convention:
    """One row of the option table.

    An option with ``choices`` takes one of them (the first is the default);
    an option without (a number or a flag) has the default ``value`` and is
    checked by ``check``. ``quiet`` options are named in a metric's
    description only when they differ from their default (filters of the
    input that most evaluations leave off, and ``pr_denominator``, whose
    default is what precision@k and recall@k mean everywhere).
    """

    name: str                   # the keyword, the table's key; the flag is --name-with-dashes
    choices: tuple[str, ...]    # the first is the default; empty for a number or a flag
    help: str                   # one line: what the choices mean
    scope: tuple[str, ...]      # the metrics whose number it changes
    general: bool = False       # shown after the metric's own conventions in its description
    value: Any = None           # the default of an option without choices
    check: Callable[[Any], Any] | None = None   # the check of an option without choices
    quiet: bool = False         # described only when not at its default

    @property
    def default(self) -> Any:
        return self.choices[0] if self.choices else self.value

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def is_flag(self) -> bool:
        """A true/false option: a command-line switch."""
        return not self.choices and isinstance(self.value, bool)

    def checked(self, value: Any) -> Any:
        if self.choices:
            return check_option(self.name, value, self.choices)
        if self.check is None:
            raise TypeError(f"convention {self.name} has neither choices nor a check")
        return self.check(value)


CONVENTIONS: tuple[Convention, ...] = (
    Convention("ties", EVAL_TIES,
               "tied scores: expected value over all orders (average), the bounds, or trec_eval's "
               "order (trec: document id descending, as text)",
               scope("ties"), general=True),
    Convention("gain", GAINS, "NDCG gain: 2^rel - 1 or rel", scope("gain")),
    Convention("ideal", IDEALS, "NDCG ideal DCG (truth, as trec_eval)", scope("ideal")),
    Convention("denominator", DENOMINATORS, "AP denominator (relevant, as trec_eval)",
               scope("denominator")),
    Convention("gauc_weight", GAUC_WEIGHTS, "GAUC user weights", scope("gauc_weight")),
    Convention("no_relevant", NO_RELEVANT,
               "users with no relevant item: left out of the ranking means (skip), counted as 0 "
               "(zero), or refused (error)", scope("no_relevant"), general=True),
    Convention("rbp_p", (), "RBP persistence p: the chance of reading on (default 0.8)",
               scope("rbp_p"), value=0.8, check=check_rbp_p),
    Convention("max_grade", (), "top grade of the scale, for ERR and RBP (default: the top grade "
               "in the truth)", scope("max_grade"), value=None, check=check_max_grade),
    Convention("min_grade", (), "relevance threshold: grades below it are not relevant, as "
               "trec_eval -l (default: grade > 0)", scope("min_grade"), general=True, value=None,
               check=check_min_grade, quiet=True),
    Convention("judged_only", (), "drop the scored rows missing from the truth before ranking "
               "(condensed lists, as trec_eval -J)", scope("judged_only"), general=True,
               value=False, check=lambda v: check_flag("judged_only", v), quiet=True),
    Convention("pr_denominator", PR_DENOMINATORS,
               "P@k and R@k denominators: k and R (standard), or min(k, R) for both (min_k, "
               "trec_eval's relative_P)", scope("pr_denominator"), quiet=True),
    Convention("unscored", UNSCORED, "relevant truth items pred never scored (a top-k export): "
               "left out of AUC and GAUC (ignore, with a warning), or ranked below every scored "
               "row, tied (below), as recall counts them", scope("unscored"), quiet=True),
)
CONVENTION = {c.name: c for c in CONVENTIONS}


def conventions_of(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The convention options out of a function's keyword arguments (e.g. its ``locals()``);
    a convention the function does not take gets its default."""
    return {c.name: namespace.get(c.name, c.default) for c in CONVENTIONS}




@dataclass(frozen=True)
class Options:
    """Checked options of one evaluation: cut-offs, metrics and every convention.

    Build it with :meth:`checked`; its fields are the table's names.
    """

    ks: tuple[int, ...]
    metrics: tuple[str, ...]
    ties: EvalTies
    gain: Gain
    ideal: Ideal
    denominator: Denominator
    gauc_weight: GaucWeight
    no_relevant: NoRelevant
    rbp_p: float = 0.8
    max_grade: float | None = None
    min_grade: float | None = None
    judged_only: bool = False
    pr_denominator: PrDenominator = "standard"
    unscored: Unscored = "ignore"

    @classmethod
    def checked(cls, *, k, metrics, known: tuple[str, ...], default: tuple[str, ...],
                **conventions: Any) -> Options:
        """Check every option (``ValueError`` naming the bad one) and freeze them."""
        unknown = set(conventions) - set(CONVENTION)
        if unknown:
            raise TypeError(f"unknown convention option(s): {', '.join(sorted(unknown))}")
        # each value is one of its row's choices, the get_args of the field's Literal type
        values: dict[str, Any] = {name: c.checked(conventions.get(name, c.default))
                                  for name, c in CONVENTION.items()}
        names = check_metrics(metrics, known, default)
        if values["ties"] == "trec":
            pairwise = [m for m in names if m in PAIRWISE]
            if pairwise and metrics is not None:
                raise ValueError(
                    f"ties='trec' orders tied documents by id, as trec_eval does for its ranking "
                    f"measures; {', '.join(pairwise)} compare(s) rows across that order and has "
                    "no trec_eval definition: leave it out of metrics, or use ties='average'")
            names = [m for m in names if m not in PAIRWISE]
        return cls(ks=tuple(check_k_values(k)), metrics=tuple(names), **values)

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
        fixed = METRIC[metric].fixed
        if fixed is not None:
            filters = [f"{c.name}={getattr(self, c.name)}" for c in CONVENTIONS
                       if metric in c.scope and c.quiet and getattr(self, c.name) != c.default]
            return ", ".join(([fixed] if fixed else []) + filters)
        apply = [c for c in CONVENTIONS if metric in c.scope
                 and not (c.quiet and getattr(self, c.name) == c.default)]
        ordered = [c for c in apply if not c.general] + [c for c in apply if c.general]
        return ", ".join(f"{c.name}={getattr(self, c.name)}" for c in ordered)
