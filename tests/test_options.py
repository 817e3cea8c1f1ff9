"""The option table and the typed options object: one definition, used everywhere."""
from dataclasses import fields
from typing import get_args, get_type_hints

import pytest

import recmetrics as rm
from recmetrics._pipeline import check_options
from recmetrics._options import CONVENTIONS, Options
from recmetrics.cli import build_parser


def test_every_convention_is_a_typed_field_of_options_in_table_order():
    names = [f.name for f in fields(Options)]
    assert names == ["ks", "metrics"] + [c.name for c in CONVENTIONS]
    hints = get_type_hints(Options)
    for c in CONVENTIONS:
        if c.choices:
            assert get_args(hints[c.name]) == c.choices, c.name
        else:  # a number or a flag: its default is a value of its type, and passes its check
            assert c.checked(c.default) == c.default, c.name


def test_the_command_line_flags_come_from_the_table():
    evaluate = build_parser()._subparsers._group_actions[0].choices["evaluate"]
    actions = {a.dest: a for a in evaluate._actions}
    for c in CONVENTIONS:
        assert actions[c.name].option_strings == [c.flag]
        assert tuple(actions[c.name].choices or ()) == c.choices
        assert actions[c.name].default == c.default


def test_public_defaults_are_the_table_defaults():
    import inspect

    for function in (rm.evaluate, rm.evaluate_per_user, rm.compare):
        parameters = inspect.signature(function).parameters
        for c in CONVENTIONS:
            assert parameters[c.name].default == c.default, (function.__name__, c.name)


def test_checked_options_are_frozen_and_refuse_bad_values_by_name():
    o = check_options(k=[10, 5], metrics=None)
    assert o.ks == (5, 10) and o.ties == "average" and o.no_relevant == "skip"
    with pytest.raises(AttributeError):
        o.ties = "optimistic"  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"gauc_weight='rows' is not a known option; use one of "
                                         r"'impressions', 'clicks', 'uniform'"):
        check_options(k=10, metrics=None, gauc_weight="rows")


@pytest.mark.parametrize("metric, expected", [
    ("auc", "ties=pessimistic"),
    ("gauc", "gauc_weight=clicks, ties=pessimistic"),
    ("map", "denominator=min_k, ties=pessimistic, no_relevant=zero"),
    ("ndcg", "gain=linear, ideal=full, ties=pessimistic, no_relevant=zero"),
    ("recall", "ties=pessimistic, no_relevant=zero"),
    ("ece", "bins=10 uniform"),
])
def test_each_metric_names_the_conventions_that_change_it(metric, expected):
    o = check_options(k=10, metrics=None, ties="pessimistic", gain="linear", ideal="full",
                      denominator="min_k", gauc_weight="clicks", no_relevant="zero")
    assert o.describe(metric) == expected


def test_the_table_records_every_convention_with_the_cut_offs():
    import pandas as pd

    pred = pd.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.2, 0.1], "label": [1, 0]})
    table = rm.evaluate(pred, k=[3, 1], gain="linear")
    assert table.attrs["conventions"] == {**{c.name: c.default for c in CONVENTIONS},
                                          "gain": "linear", "k": [1, 3]}


def test_the_option_signature_is_written_once_per_public_function():
    """Every convention is a keyword of evaluate, evaluate_per_user and compare only (read from
    the source): the engines receive the checked request, and the Dask and Spark forms are the
    same functions, with the same signature for help() and editors."""
    import ast
    import inspect
    from pathlib import Path

    package = Path(rm.__file__).parent
    conventions = {c.name for c in CONVENTIONS}
    found = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = {a.arg for a in node.args.args + node.args.kwonlyargs}
                if conventions <= arguments:
                    found.append(f"{path.stem}.{node.name}")
    assert sorted(found) == ["evaluation.compare", "evaluation.evaluate", "evaluation.evaluate_per_user"]
    pytest.importorskip("dask")
    from recmetrics import distributed

    for name in ("evaluate", "evaluate_per_user", "compare"):
        assert inspect.signature(getattr(distributed, name)) == \
            inspect.signature(getattr(rm, name))
