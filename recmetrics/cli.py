"""The ``recmetrics`` command: evaluate, compare and report on files of model scores.

    recmetrics evaluate PRED [--truth TRUTH] [--k 5 10 20] [--ci 0.95] [--format ...] [-o OUT]
    recmetrics evaluate LOGS --engine dask [--workers N] [--memory-limit SIZE]
                             [--scheduler ADDRESS] [--truth TRUTH] ...
    recmetrics evaluate LOGS --engine spark [--master local[2]] [--truth TRUTH] ...
    recmetrics compare A B [C ...] [--truth TRUTH] [--k ...] [--alpha 0.05] [--baseline NAME]
                       [--correction holm] [--format ...] [-o OUT]
    recmetrics report PRED [--truth TRUTH] [--k ...] [-o report.html]
    python -m recmetrics ...                      (the same)

PRED, A, B, ... hold one row per scored (user, item) with a score (and a label
column when no ``--truth`` file is given); TRUTH holds (user, item, label),
the label being a relevance grade (0 = not relevant).

With ``--engine dask`` PRED and TRUTH may be Parquet datasets (a file, a
directory of files or a glob) larger than memory: the table is computed by
:mod:`recmetrics.distributed` on a Dask cluster, a ``LocalCluster`` of
``--workers`` processes with ``--memory-limit`` each (started and shut down by
the command), or the running scheduler at ``--scheduler ADDRESS``. With
``--engine spark`` the same datasets are read by Spark and evaluated by
:mod:`recmetrics.spark` on ``--master`` (default ``local[*]``; needs Java 17+).

This module only parses arguments and formats results. Files are read and
written by :mod:`recmetrics.io` (encodings, separators, line numbers, atomic
output), every number comes from :func:`recmetrics.evaluate` and
:func:`recmetrics.compare`, and the report is rendered by
:mod:`recmetrics.report` (the ``report`` extra).

Bad input (a missing file or column, a bad option, a value recmetrics
rejects) ends the command with exit status 2 and one line on stderr,
``recmetrics: error: <what is wrong and what to do>``; no traceback, and no
output file is touched. Ctrl-C ends it with status 130 and
``recmetrics: interrupted``.

Quality gates for CI pipelines: ``evaluate --fail-under ndcg@10=0.30`` and
``compare BASE NEW --fail-if-worse ndcg@10,map@10`` write the normal output
unchanged, then end with exit status 3 and one line on stderr,
``recmetrics: gate failed: <the gate, the value, its interval or p-value>``,
when a gate fails (:data:`EXIT_CODES`).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import re
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import _memory, _metrics, _progress, _provenance
from . import _present as present
from . import io as rio
from ._ids import n_distinct
from ._options import CONVENTIONS
from ._progress import Progress
from ._validation import MAX_K, DuplicatePairs, check_n_resamples
from ._metrics import BEYOND_METRICS, DEFAULT_METRICS, METRICS, PROBABILITY_METRICS
from .evaluation import compare, evaluate

__all__ = ["main", "build_parser", "UsageError", "GateFailed", "format_evaluation",
           "format_comparison", "EXIT_CODES"]

PROG = "recmetrics"

#: Exit statuses of the command.
EXIT_CODES = {0: "success (and every --fail-under / --fail-if-worse gate passed)",
              2: "bad input: a file, column, option or gate recmetrics refuses",
              3: "a quality gate failed (--fail-under, --fail-if-worse); the output is written",
              130: "interrupted (Ctrl-C)"}
_EXIT_EPILOG = "exit status: " + "; ".join(f"{code} {what}" for code, what in EXIT_CODES.items())


class UsageError(Exception):
    """Bad input from the command line: reported as one line, exit status 2."""


class GateFailed(Exception):
    """A quality gate failed after the output was written: one line, exit status 3."""


# --------------------------------------------------------------------------- reading


def _model_column(names, model: int) -> str | None:
    """--score-col / --rank-col: one name for every file, or one per model (compare)."""
    if names is None or isinstance(names, str):
        return names
    return names[min(model, len(names) - 1)]


def _columns(args, *, with_score: bool = True, with_label: bool, model: int = 0
             ) -> dict[str, str]:
    columns = {"user": args.user_col, "item": args.item_col}
    if with_score:
        rank = _model_column(args.rank_col, model)
        columns.update({"rank": rank} if rank else {"score": _model_column(args.score_col, model)})
    if with_label:
        columns["label"] = args.label_col
    roles: dict[str, str] = {}
    for role, column in columns.items():  # --score-col label: the labels judged by themselves
        if column in roles:
            raise UsageError(f"--{roles[column]}-col and --{role}-col both name the column "
                             f"{column!r}, so it would be judged against itself (an AUC of 1.0, "
                             "say); give each its own column")
        roles[column] = role
    return columns


def _input_plan(args, *, by_activity: bool = True, roles=None) -> list[rio.Input]:
    """Every input file of the command (or of these ``roles``) with its per-file options, as
    recmetrics.io's table of inputs plans them (the report receives the same plan)."""
    scores = list(getattr(args, "models", None) or [args.pred])
    for model in range(len(scores)):  # the same column named for two roles: refused
        _columns(args, with_label=args.truth is None, model=model)
    files = {name: scores if name == "scores" else getattr(args, name, None)
             for name in rio.INPUT_ROLES if roles is None or name in roles}
    return rio.plan_inputs(files, user=args.user_col, item=args.item_col, score=args.score_col,
                           rank=args.rank_col, label=args.label_col, sep=args.sep,
                           encoding=args.encoding,
                           encodings={r.encoding: getattr(args, r.encoding)
                                      for r in rio.INPUT_ROLES.values() if r.encoding},
                           format_in=getattr(args, "format_in", "auto"),
                           by=getattr(args, "by", None), by_activity=by_activity,
                           models=_model_names(scores) if len(scores) > 1 else None)


def _read_inputs(plan: list[rio.Input], progress: Progress, pairs_later: tuple[str, ...] = ()
                 ) -> list[pd.DataFrame]:
    """Every input of the plan read by recmetrics.io (a progress stage for scores and truth);
    ``pairs_later`` as rio.read_inputs takes it."""
    def stage(spec: rio.Input):
        if spec.role not in ("scores", "truth"):
            return None
        path = Path(spec.path)
        progress.stage(f"reading {path.name}", total=path.stat().st_size if path.is_file()
                       else None, unit="B")
        return progress.bytes_read

    return rio.read_inputs(plan, progress=stage, pairs_later=pairs_later)


def _frame_of(plan: list[rio.Input], frames: list[pd.DataFrame], role: str):
    """The frame read for a role (the first one), or None."""
    return next((f for spec, f in zip(plan, frames) if spec.role == role), None)


#: File name endings read as TREC files (a run, or qrels for --truth) without --format-in trec.
TREC_SUFFIXES = rio.TREC_SUFFIXES


def _describe_input(path, frame: pd.DataFrame, args, *, truth: bool = False) -> dict:
    described = {"path": str(path), "rows": int(len(frame)),
                 "users": n_distinct(frame[args.user_col])}
    if truth and args.label_col not in frame.columns:
        described["labels"] = "none: every row is a relevant item (grade 1)"
    return described


def metrics_wanted(args) -> set[str]:
    return set(args.metrics or DEFAULT_METRICS)


def _metric_rows(args) -> int:
    return _metrics.n_rows(metrics_wanted(args), sorted(set(args.k)))


def _check_memory(args, *, n_users: int, n_rows: int, command: str = "evaluate") -> None:
    _memory.check(k=args.k, ideal=args.ideal, ndcg="ndcg" in metrics_wanted(args),
                  ci=getattr(args, "ci", None), n_resamples=args.n_resamples, n_users=n_users,
                  n_metric_rows=_metric_rows(args), command=command)


# --------------------------------------------------------------------------- formatting


# Numbers, p-values, names and text tables come from the one presentation module, _present;
# these names keep the command line's own look (an empty cell for a missing value, "-" for a
# p-value not computed).


def _number(value, digits: int = 4) -> str:
    return present.number(value, digits, missing="")


_percent = present.percent
_metric_name = present.metric_label


def _p_value(p) -> str:
    return present.p_value(p, missing="-")


_text_table = present.text_table


def _conventions_line(conventions: dict) -> str:
    beyond = [f"{name}={conventions[name]}" for name in ("head_share", "unseen")
              if name in conventions]  # only when beyond-accuracy metrics were computed
    return "; ".join([f"{c.name}={conventions[c.name]}" for c in CONVENTIONS] + beyond)


def _conventions_paragraph(conventions: dict) -> str:
    return textwrap.fill(f"conventions: {_conventions_line(conventions)}", width=100,
                         break_on_hyphens=False)


def _jsonable(value):
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _tidy(table: pd.DataFrame, fmt: str, raw: bool = False):
    """The table itself: CSV or TSV text (text cells neutralised against formula injection
    unless ``raw``: :func:`recmetrics._present.csv_text`), or the DataFrame for Parquet."""
    if fmt == "parquet":
        return table.reset_index(drop=True)
    return present.csv_text(table, sep="\t" if fmt == "tsv" else ",", raw=raw)


def _records(table: pd.DataFrame) -> list[dict]:
    return [{key: _jsonable(value) for key, value in row.items()}
            for row in table.to_dict(orient="records")]


def format_evaluation(table: pd.DataFrame, inputs: dict, fmt: str, ci: float | None,
                      n_resamples: int, seed: int, bootstrap: str = "poisson",
                      provenance: dict | None = None, *, raw: bool = False) -> str:
    """The table of ``evaluate`` as ``fmt`` writes it (``raw``: CSV/TSV text cells as they
    are, not neutralised against formula injection)."""
    conventions = table.attrs["conventions"]
    if fmt in ("csv", "tsv", "parquet"):
        return _tidy(table, fmt, raw)
    if fmt == "json":
        document = {"command": "evaluate", "inputs": inputs, "conventions": conventions,
                    "ci": ci, "n_resamples": n_resamples if ci else None,
                    "seed": seed if ci else None, "bootstrap": bootstrap if ci else None,
                    "metrics": _records(table)}
        if provenance is not None:
            document["provenance"] = provenance
        return json.dumps(document, indent=2, allow_nan=False) + "\n"
    models = "model" in table.columns  # --baselines
    by = table.attrs.get("slice_columns", [])  # --by
    lead = by + (["slice users"] if by else []) + (["model"] if models else [])
    header = lead + ["metric", "value"] + \
        ([f"{_percent(ci)} CI"] if ci else []) + ["users", "skipped", "no predictions"]
    rows = []
    for row in table.itertuples(index=False):
        cells = [str(getattr(row, c)) for c in by] + \
            ([f"{row.slice_size:,}" + (" (small)" if row.small_slice else "")] if by else []) + \
            ([row.model] if models else []) + [_metric_name(row.metric, row.k),
                                               _number(row.value)]
        if ci:
            cells.append(present.interval(row.ci_low, row.ci_high))
        cells += [f"{row.n_users:,}", f"{row.n_skipped:,}", f"{row.n_without_predictions:,}"]
        rows.append(cells)
    right = set(range(len(lead) + 1, len(header))) | ({len(by)} if by else set())
    described = " against ".join(
        f"{present.terminal(d['path'])} ({d['rows']:,} rows, {d['users']:,} users"
        + ("; no label column: every row is a relevant item" if "labels" in d else "") + ")"
        for role, d in inputs.items() if role != "history")
    if "history" in inputs:
        d = inputs["history"]
        described += (f"; history {present.terminal(d['path'])} ({d['rows']:,} rows, "
                      f"{d['users']:,} users)")
    notes = [
        f"evaluated: {described}",
        "",
        _text_table(header, rows, right=right),
        "",
        *[textwrap.fill(present.terminal(note), width=100)
          for note in table.attrs.get("notes", []) if by],
        _conventions_paragraph(conventions),
        textwrap.fill("skipped: users with no relevant item (left out of the ranking means; for "
                      "GAUC, users with one class only); no predictions: users with relevant "
                      "items but no scored row (they count as 0).", width=100),
    ]
    if ci:
        drawn = ("each user weighs a Poisson(1) count drawn from a hash of (user, seed, "
                 "resample), and every metric is recomputed" if bootstrap == "poisson" else
                 "users are drawn with replacement and every metric recomputed")
        notes.append(textwrap.fill(
            f"CI: {_percent(ci)} percentile bootstrap over users ({n_resamples:,} resamples, seed "
            f"{seed}); {drawn}.", width=100))
    if provenance is not None:
        notes.append(_provenance_line(provenance))
    return "\n".join(notes) + "\n"


def _provenance_line(provenance: dict) -> str:
    digests = ", ".join(f"{i['role']} sha256 {i['sha256'][:12]}" for i in provenance["inputs"]
                        if i.get("sha256"))
    return textwrap.fill(f"provenance: {provenance['package']} {provenance['version']}, "
                         f"{provenance['created']}; {digests} (--format json records it all)",
                         width=100)


def format_comparison(table: pd.DataFrame, inputs: dict, fmt: str, alpha: float,
                      n_resamples: int, seed: int, provenance: dict | None = None, *,
                      raw: bool = False) -> str:
    """The table of ``compare`` as ``fmt`` writes it (``raw``: CSV/TSV text cells as they
    are, not neutralised against formula injection)."""
    conventions = table.attrs["conventions"]
    if fmt in ("csv", "tsv", "parquet"):
        return _tidy(table, fmt, raw)
    if fmt in ("markdown", "latex", "html"):
        from ._compare import results_table_from_comparison

        exported = results_table_from_comparison(table)
        return {"markdown": exported.to_markdown, "latex": exported.to_latex,
                "html": exported.to_html}[fmt]()
    if fmt == "json":
        document = {"command": "compare", "inputs": inputs, "conventions": conventions,
                    "alpha": alpha, "correction": table.attrs.get("correction"),
                    "baseline": table.attrs.get("baseline"), "n_resamples": n_resamples,
                    "seed": seed, "metrics": _records(table)}
        if provenance is not None:
            document["provenance"] = provenance
        return json.dumps(document, indent=2, allow_nan=False) + "\n"
    by = table.attrs.get("slice_columns", [])  # --by: Holm across the slices of each metric
    models = [role for role in inputs if role != "truth"]
    two = len(models) == 2
    header = by + ["metric"] + ([] if two else ["A", "B"]) + \
        (["A", "B"] if two else ["value A", "value B"]) + \
        ["B - A", "p (t-test)", "p (randomization)", "p (bootstrap)", "p (DeLong)",
         "p (Holm, slices)" if by else "p adjusted", "users", "verdict"]
    verdicts = table.verdict_adjusted if by else table.verdict
    rows = []
    for r, verdict in zip(table.itertuples(index=False), verdicts):
        verdict_p = r.p_delong_adjusted if r.metric == "auc" else r.p_randomization_adjusted
        rows.append([str(getattr(r, c)) for c in by]
                    + [_metric_name(r.metric, r.k)] + ([] if two else [r.model_a, r.model_b])
                    + [_number(r.value_a), _number(r.value_b), f"{r.difference:+.4f}",
                       _p_value(r.p_ttest), _p_value(r.p_randomization),
                       _p_value(r.p_bootstrap), _p_value(r.p_delong), _p_value(verdict_p),
                       f"{r.n_users:,}" if r.n_users else "-", verdict])
    first = len(by) + (1 if two else 3)
    right = set(range(first, len(header) - 1))
    better = verdicts.isin(["B better", "A better"])
    pairs = "" if two else " (B is the row's model B)"
    summary = (f"{int((verdicts == 'B better').sum())} of {len(table)} rows: B significantly "
               f"better{pairs}; {int((verdicts == 'A better').sum())}: A significantly "
               f"better; {int((~better & (verdicts != 'not tested')).sum())}: no "
               f"significant difference at alpha={alpha:g}.")
    lines = []
    for role in models:
        d = inputs[role]
        label = role.upper() if two else d.get("model", role)
        lines.append(f"{present.terminal(label)}: {present.terminal(d['path'])} "
                     f"({d['rows']:,} rows, {d['users']:,} users)")
    if "truth" in inputs:
        d = inputs["truth"]
        lines.append(f"truth: {present.terminal(d['path'])} ({d['rows']:,} rows, "
                     f"{d['users']:,} users)")
    tests = ("p-values are two-sided and paired over the users every model is evaluated on: a "
             f"paired t-test and a sign-flip randomization test ({n_resamples:,} resamples, "
             f"seed {seed}), and a paired bootstrap test; global AUC, not a mean over users, "
             "gets DeLong's test on the rows both models scored.")
    if by:  # compare_sliced: Holm within each metric's slices, nothing across metrics
        adjustment = (
            "'p (Holm, slices)' is the randomization p-value (DeLong's for AUC) adjusted by "
            "Holm's step-down across the slices of each metric (each p-value column the same "
            "way; --format csv or json gives them all); the rows of all users are not in that "
            "family and show their own p-value, and metrics are not corrected against each "
            f"other. The verdict reads it at alpha={alpha:g}.")
    else:
        correction = table.attrs.get("correction", "none")
        adjusted = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                    "none": "no"}[correction]
        adjustment = (
            "'p adjusted' is the randomization p-value (DeLong's for AUC) after "
            f"{adjusted} correction over all {len(table)} rows of the table (each p-value "
            "column is corrected the same way; --format csv or json gives them all); the "
            "verdict uses it. Were all models equally good, about "
            f"{_percent(alpha)} of the rows tested would come out 'significant' by chance "
            "without a correction.")
    lines += [
        "",
        _text_table(header, rows, right=right),
        "",
        summary,
        *([textwrap.fill("sliced: each slice's rows compare the slice's users alone.",
                         width=100)] if by else []),
        textwrap.fill(f"{tests} {adjustment}", width=100),
        _conventions_paragraph(conventions),
    ]
    if provenance is not None:
        lines.append(_provenance_line(provenance))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- quality gates

def _gate_metric(text: str) -> tuple[str, int | None]:
    """``ndcg@10`` -> ("ndcg", 10); ``auc`` -> ("auc", None); ``mrr@10`` -> ("mrr", 10), a row
    of ``mrr@k``. A metric with a cut-off named alone (``ndcg``) keeps None here and takes the
    one cut-off of --k (:func:`_check_gates`). Refuse what no metric's rows are called."""
    name, at, cut = text.strip().partition("@")
    if name not in _metrics.table_names():
        raise argparse.ArgumentTypeError(
            f"{text!r}: unknown metric {name!r}; use one of {', '.join(_metrics.table_names())} "
            "(with @k where it takes a cut-off, e.g. ndcg@10)")
    if not at:
        return name, None
    if _metrics.row_metric(name, 1) is None:
        raise argparse.ArgumentTypeError(f"{text!r}: {name} takes no cut-off; write {name}")
    try:
        return name, _cutoff(cut)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: the cut-off {error}") from None


def _gate(text: str, option: str, over: bool) -> tuple[str, int | None, float]:
    """``ndcg@10=0.30`` -> ("ndcg", 10, 0.3): a threshold of --fail-under (``over``: of
    --fail-over), on a metric whose better side is above it (below it for --fail-over)."""
    name, equals, number = text.partition("=")
    if not equals:
        raise argparse.ArgumentTypeError(f"{text!r} must be METRIC=VALUE, e.g. "
                                         + ("logloss=0.5" if over else "ndcg@10=0.30"))
    metric, cut = _gate_metric(name)
    lower = metric in _metrics.LOWER_IS_BETTER
    if lower != over:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {metric} is better when {'lower' if lower else 'higher'}, and {option} "
            f"fails values {'above' if over else 'below'} the threshold; gate it with "
            f"{'--fail-under' if over else '--fail-over'} {text.strip()}")
    try:
        value = float(number)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: {number.strip()!r} is not a number; write "
                                         f"e.g. {metric}{'' if cut is None else f'@{cut}'}=0.30")
    return metric, cut, value


def _threshold(text: str) -> tuple[str, int | None, float]:
    """``ndcg@10=0.30`` -> ("ndcg", 10, 0.3), for --fail-under."""
    return _gate(text, "--fail-under", over=False)


def _ceiling(text: str) -> tuple[str, int | None, float]:
    """``logloss=0.5`` -> ("logloss", None, 0.5), for --fail-over."""
    return _gate(text, "--fail-over", over=True)


def _worse_metrics(text: str) -> list[tuple[str, int | None]]:
    """``ndcg@10,map@10`` -> [("ndcg", 10), ("map", 10)], for --fail-if-worse."""
    gates = [_gate_metric(part) for part in text.split(",") if part.strip()]
    if not gates:
        raise argparse.ArgumentTypeError(f"{text!r} names no metric; write e.g. ndcg@10,map@10")
    for metric, _ in gates:
        if metric in PROBABILITY_METRICS:
            raise argparse.ArgumentTypeError(f"{text!r}: compare runs no paired test of "
                                             f"{metric}, so it cannot be significantly worse; "
                                             "gate a ranking metric, gauc or auc")
    return gates


def _check_gates(gates, args, option: str) -> list:
    """Every gated metric and cut-off is one the command computes (before any work); returns
    the gates with the cut-off of a metric named without one filled in (the one k of --k)."""
    checked = []
    for metric, cut, *rest in gates:
        name = metric if cut is None else f"{metric}@{cut}"
        spec = _metrics.row_metric(metric, cut)
        if spec is None:   # named alone, but its rows have a cut-off
            spec = _metrics.row_metric(metric, 1)
            ks = sorted(set(args.k))
            if spec is None or len(ks) != 1:
                raise UsageError(f"{option} {name}: {metric} has a row per cut-off; name one, "
                                 f"e.g. {metric}@{ks[0]}")
            cut = ks[0]
        if spec.name not in metrics_wanted(args):
            what = metric if spec.name == metric else \
                f"--metrics {spec.name}, which makes the {metric}@k rows,"
            raise UsageError(f"{option} {name}: {what} is not computed; add it to --metrics")
        if cut is not None and cut not in args.k:
            raise UsageError(f"{option} {name}: cut-off {cut} is not computed; add it to --k "
                             f"(now {' '.join(map(str, args.k))})")
        checked.append((metric, cut, *rest))
    return checked


def _row_of(table: pd.DataFrame, metric: str, cut: int | None) -> pd.DataFrame:
    return table[(table.metric == metric) & (table.k.isna() if cut is None else table.k == cut)]


def evaluation_gates(table: pd.DataFrame, thresholds, ci: float | None,
                     over: bool = False) -> list[str]:
    """The --fail-under gates that fail: the value is below the threshold (or NaN); with
    ``over``, the --fail-over gates: the value is above it (or NaN). A gate whose row the table
    lacks fails too (a gate that cannot be checked does not pass)."""
    failed = []
    option, side = ("--fail-over", "above") if over else ("--fail-under", "below")
    for metric, cut, threshold in thresholds:
        name = _metric_name(metric, cut)
        found = _row_of(table, metric, cut)
        if found.empty:
            failed.append(f"{option} {name}={threshold:g}: the table has no {name} row")
            continue
        row = found.iloc[0]
        if not (row.value <= threshold if over else row.value >= threshold):
            interval = ""
            if ci and "ci_low" in table.columns and not math.isnan(row.ci_low):
                interval = f" ({_percent(ci)} CI [{row.ci_low:.4f}, {row.ci_high:.4f}])"
            failed.append(f"{option} {name}={threshold:g}: {name} = {_number(row.value)}"
                          f"{interval} is {side} {threshold:g}")
    return failed


def _check_evaluation_gates(args) -> None:
    """--fail-under and --fail-over checked before any work, each cut-off filled in."""
    args.fail_under = _check_gates(args.fail_under or (), args, "--fail-under")
    args.fail_over = _check_gates(args.fail_over or (), args, "--fail-over")


def _evaluation_gates_pass(table: pd.DataFrame, args) -> None:
    """Raise :class:`GateFailed` naming every --fail-under and --fail-over gate that fails."""
    failed = (evaluation_gates(table, args.fail_under, args.ci)
              + evaluation_gates(table, args.fail_over, args.ci, over=True))
    if failed:
        raise GateFailed("; ".join(failed))


def comparison_gates(table: pd.DataFrame, metrics, base: str, alpha: float) -> list[str]:
    """The --fail-if-worse gates that fail: a model significantly worse than ``base``."""
    failed = []
    correction = table.attrs.get("correction", "none")
    for metric, cut in metrics:
        name = _metric_name(metric, cut)
        rows = _row_of(table, metric, cut)
        for r in rows[(rows.model_a == base) & (rows.verdict == "A better")].itertuples():
            p = r.p_delong_adjusted if metric == "auc" else r.p_randomization_adjusted
            failed.append(f"--fail-if-worse {name}: {r.model_b} is significantly worse than "
                          f"{base} on {name} ({_number(r.value_b)} vs {_number(r.value_a)}, "
                          f"difference {r.difference:+.4f}, adjusted p "
                          f"{'< 0.0001' if p < 1e-4 else f'= {p:.4f}'} < alpha {alpha:g}, "
                          f"{correction} correction)")
    return failed


# --------------------------------------------------------------------------- commands


def _conventions(args) -> dict:
    return {c.name: getattr(args, c.name) for c in CONVENTIONS}


def _options(args) -> dict:
    score, rank = args.score_col, args.rank_col
    if isinstance(score, list):  # compare: one name per model
        score = tuple(score) if len(score) > 1 else score[0]
    if isinstance(rank, list):
        rank = tuple(rank) if len(rank) > 1 else rank[0]
    return dict(k=args.k, metrics=args.metrics, user=args.user_col, item=args.item_col,
                score=score, label=args.label_col, rank=rank, **_conventions(args))


#: Parsed arguments that cannot change a number, left out of the provenance's options (every
#: other one is recorded, so that a new option cannot be left out).
_NOT_RECORDED = ("run", "argv", "output", "format", "quiet", "progress", "title")
_COLUMN_FLAGS = {"user_col": "user", "item_col": "item", "score_col": "score",
                 "rank_col": "rank", "label_col": "label"}


def _input_keys(plan: list[rio.Input]) -> list[str]:
    """Each input's name in the JSON and provenance: pred (or a, b, ... for several scores
    files), then the role (truth, users, history, catalog, item_features)."""
    several = sum(spec.role == "scores" for spec in plan) > 1
    return [(_role(i) if several else "pred") if spec.role == "scores" else spec.role
            for i, spec in enumerate(plan)]


def _provenance_of(args, plan: list[rio.Input] | None = None, frames=None, *, call=None,
                   inputs: dict | None = None) -> dict:
    """Versions, time, the command line, every input and every option.

    Each file of the ``plan`` is recorded with its size, its SHA-256 (of the bytes read when
    the reader hashed them while reading, ``frame.attrs["sha256"]``), rows, users and how it
    was read (``read``: recmetrics.io's Input, every per-file option); ``inputs`` adds
    datasets read by an engine. The options are every parsed argument but those that cannot
    change a number; ``call`` (function name, keyword arguments) records the call of
    recmetrics.evaluate or compare, each frame named by the input it was read from, so that
    the run can be re-made from the record alone.
    """
    described = {}
    keys = _input_keys(plan or [])
    for key, spec, frame in zip(keys, plan or [], frames or []):
        user = spec.columns.get("user")
        described[key] = {**_provenance.describe_input(
            spec.path, rows=len(frame), users=n_distinct(frame[user]) if user in frame else None,
            digest=frame.attrs.get("sha256")),
            "read": {**spec.as_dict(), "path": str(Path(spec.path).resolve())}}
    for key, d in (inputs or {}).items():  # datasets read by an engine
        described[key] = _provenance.describe_input(d["path"], rows=d.get("rows"),
                                                    users=d.get("users"))
    options = {"command": args.command, "metrics": list(args.metrics or DEFAULT_METRICS),
               "columns": {role: getattr(args, dest) for dest, role in _COLUMN_FLAGS.items()}}
    options.update({dest: value for dest, value in vars(args).items()
                    if dest not in _NOT_RECORDED and dest not in _COLUMN_FLAGS
                    and dest not in options})
    record = _provenance.record(argv=getattr(args, "argv", None), inputs=described,
                                options=options)
    if call is not None:
        function, arguments = call
        record["call"] = {"function": function,
                          "arguments": _recorded_arguments(arguments, plan or [], frames or [],
                                                           keys)}
    return record


def _recorded_arguments(arguments: dict, plan, frames, keys) -> dict:
    """evaluate's or compare's keyword arguments as plain values: a frame is named by the
    input it was read from ({"input": "pred"}), a column of one by its name too."""
    read = {id(frame): key for key, frame in zip(keys, frames)}
    by_keyword = {rio.INPUT_ROLES[spec.role].keyword: key for key, spec in zip(keys, plan)}

    def plain(name, value):
        if isinstance(value, pd.DataFrame):
            return {"input": read[id(value)]}
        if isinstance(value, pd.Series):
            return {"input": by_keyword[name], "column": value.name}
        if isinstance(value, dict):
            return {k: plain(name, v) for k, v in value.items()}
        if isinstance(value, tuple):
            return list(value)
        return value

    return {name: plain(name, value) for name, value in arguments.items()}


#: Every input file option of the commands, by the name used in messages (the output guard
#: refuses to write over any of them).
_INPUT_OPTIONS = (("truth", "--truth"), ("history", "--history"), ("users", "--users"),
                  ("catalog", "--catalog"), ("item_features", "--item-features"))


def _inputs(args) -> dict[str, list[str]]:
    """Every file the command reads, of every role: role name -> paths."""
    scores = [p for p in (getattr(args, "pred", None), *getattr(args, "models", ()))
              if p is not None]
    inputs = {"scores": scores}
    for name, flag in _INPUT_OPTIONS:
        given = getattr(args, name, None)
        if given is not None:
            inputs[flag] = [given]
    return inputs


def _plan(args) -> rio.Output:
    allowed = COMPARE_FORMATS if args.command == "compare" else FORMATS
    return rio.plan_output(args.output, fmt=args.format, inputs=_inputs(args), allowed=allowed)


#: the smallest --memory-limit accepted for a local Dask worker (bytes)
MIN_WORKER_MEMORY = 256 * 2**20

_DASK_ONLY = (("workers", "--workers"), ("memory_limit", "--memory-limit"),
              ("scheduler", "--scheduler"))


def _check_spark(args) -> None:
    """--master is for Spark; Spark needs pyspark and a Java runtime."""
    if args.engine != "spark":
        if getattr(args, "master", None) is not None:
            raise UsageError("--master: for the Spark engine only; add --engine spark")
        return
    given = [flag for name, flag in _DASK_ONLY if getattr(args, name) is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: for the Dask engine only; with --engine spark "
                         "give --master")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError("--engine spark needs PySpark: pip install 'metricbook[spark]'") from None
    import shutil
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and os.path.exists(
            os.path.join(java_home, "bin", "java"))):
        raise UsageError("--engine spark needs a Java 17+ runtime and none was found (no java on "
                         "PATH, no JAVA_HOME); install one, e.g. apt-get install "
                         "openjdk-17-jre-headless")


def _check_engine(args) -> None:
    if args.engine == "spark" or getattr(args, "master", None) is not None:
        _check_spark(args)
        return
    if args.engine != "dask":
        given = [flag for name, flag in _DASK_ONLY if getattr(args, name) is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: for the Dask engine only; add --engine dask")
        return
    if getattr(args, "baselines", False):
        raise UsageError("--baselines: the random and most-popular baselines are computed by the "
                         "pandas engine only; leave out --engine dask")
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError("--engine dask needs Dask: pip install 'metricbook[dask]'") from None
    if args.scheduler is not None and (args.workers is not None or args.memory_limit is not None):
        raise UsageError("--workers and --memory-limit set up a local cluster; with --scheduler "
                         "the running cluster's workers are used, so leave them out")
    if args.memory_limit is not None and args.memory_limit != "auto":
        from dask.utils import parse_bytes
        try:
            limit = parse_bytes(args.memory_limit)
        except (ValueError, TypeError):
            raise UsageError(f"--memory-limit {args.memory_limit!r} is not a size; give e.g. "
                             "1GiB, 512MB or auto") from None
        if limit < MIN_WORKER_MEMORY:  # a worker this small pauses forever: refuse, never hang
            raise UsageError(f"--memory-limit {args.memory_limit} is below the minimum of "
                             f"{MIN_WORKER_MEMORY // 2**20} MiB per worker (a Dask worker uses "
                             "about that much before it holds any data); give e.g. 1GiB or auto")


def _engine_beyond(args) -> tuple[dict, dict]:
    """--history, --catalog, --item-features for the Dask and Spark engines (read here, in
    pandas, and shared with every partition), and their provenance; --baselines refused."""
    if getattr(args, "baselines", False):
        raise UsageError(f"--baselines: the random and most-popular baselines are computed by "
                         f"the pandas engine only; leave out --engine {args.engine}")
    asked = set(args.metrics or ()) & set(BEYOND_METRICS)
    if not (asked or args.history or args.catalog or args.item_features):
        return {}, {}
    inputs: dict = {}
    plan = _input_plan(args, roles=("history", "catalog", "item_features"))
    beyond = _beyond(args, plan, rio.read_inputs(plan), inputs)
    del beyond["baselines"]
    return beyond, inputs


def _engine_slicing(args, pred_files: list) -> tuple[dict, list[str]]:
    """--by / --users / --min-slice-size for the Dask and Spark engines: evaluate's options,
    and the --by columns to read with PRED's files (those its first file has; a name found
    nowhere is refused by evaluate, with its message)."""
    import pyarrow.parquet as pq

    if not args.by:
        if args.users:
            raise UsageError("--users gives attributes to slice by; name them with --by COL")
        return {}, []
    plan = _input_plan(args, roles=("users",))
    users = rio.read_input(plan[0]) if plan else None
    names = set(pq.read_schema(pred_files[0]).names)
    wanted = [c for c in args.by if (users is None or c not in users.columns)
              and c != "activity" and c in names]
    return {"by": list(args.by), "users": users, "min_slice_size": args.min_slice_size}, wanted


@contextlib.contextmanager
def _engine_frames(args, pred_files: list, pred_columns: list[str], truth_files, truth_columns):
    """The engine's session (Dask cluster or Spark), where it runs, and PRED and --truth read
    as its DataFrames; the session ends on exit."""
    if args.engine == "spark":
        from . import spark

        with spark.connect(master=args.master) as (session, where):
            pred = session.read.parquet(*pred_files).select(*pred_columns)
            truth = None if truth_files is None else session.read.parquet(*truth_files).select(
                *truth_columns)
            yield where, pred, truth
        return
    from . import distributed

    with distributed.connect(scheduler=args.scheduler, workers=args.workers,
                             memory_limit=args.memory_limit) as where:
        pred = distributed.read_parquet(pred_files, columns=pred_columns)
        truth = None if truth_files is None else distributed.read_parquet(
            truth_files, columns=truth_columns)
        yield where, pred, truth


def _evaluate_on_engine(args, output, progress: Progress) -> pd.DataFrame:
    """``recmetrics evaluate --engine dask|spark``: Parquet PATH and --truth evaluated on the
    engine, the table written as the pandas engine writes it."""
    pred_columns = _columns(args, with_label=args.truth is None)
    hints = {"label": "pass --label-col NAME, or give the labels in a separate file with "
                      "--truth FILE"} if args.truth is None else {}
    pred_files = rio.parquet_dataset(args.pred, columns=pred_columns, hints=hints)
    truth_files, truth_columns = None, {}
    if args.truth:
        truth_columns = _columns(args, with_score=False, with_label=True)
        truth_files = rio.parquet_dataset(args.truth, columns=truth_columns)
    sliced, by_columns = _engine_slicing(args, pred_files)
    beyond, beyond_inputs = _engine_beyond(args)
    with _engine_frames(args, pred_files, list(pred_columns.values()) + by_columns, truth_files,
                        list(truth_columns.values())) as (where, pred, truth):
        progress.stage(f"computing {_metric_rows(args)} metrics on {where}")
        table = evaluate(pred, truth, ci=args.ci, n_resamples=args.n_resamples, seed=args.seed,
                         bootstrap=args.bootstrap, **sliced, **beyond, **_options(args))
    counts = table.attrs.get("inputs", {})
    inputs = {"pred": {"path": str(args.pred), "files": len(pred_files),
                       "rows": counts.get("pred_rows", 0), "users": counts.get("pred_users", 0)}}
    if truth_files is not None:  # given with --truth
        inputs["truth"] = {"path": str(args.truth), "files": len(truth_files),
                           "rows": counts.get("truth_rows", 0),
                           "users": counts.get("truth_users", 0)}
    inputs.update(beyond_inputs)
    progress.stage("writing")
    content = format_evaluation(table, inputs, output.format, args.ci, args.n_resamples,
                                args.seed, bootstrap="poisson",
                                provenance=_provenance_of(args, inputs=inputs), raw=args.raw_csv)
    rio.write_output(output, content)
    return table


def _beyond(args, plan: list[rio.Input], frames: list[pd.DataFrame], inputs: dict) -> dict:
    """--history, --catalog, --item-features (read with the other inputs) and the beyond
    options, as evaluate's keyword arguments."""
    beyond = {"head_share": args.head_share, "unseen": args.unseen, "baselines": args.baselines}
    history = _frame_of(plan, frames, "history")
    if history is not None:
        beyond["history"] = history
        inputs["history"] = _describe_input(args.history, history, args)
    catalog = _frame_of(plan, frames, "catalog")
    if catalog is not None:
        beyond["catalog"] = catalog[args.item_col]
    features = _frame_of(plan, frames, "item_features")
    if features is not None:
        beyond["item_features"] = features
    return beyond


def cmd_evaluate(args) -> None:
    _check_engine(args)
    output = _plan(args)                 # before any work: a bad -o costs nothing
    if args.engine in ("dask", "spark"):
        _check_evaluation_gates(args)
        progress = _progress.for_command(args, 2)
        try:
            table = _evaluate_on_engine(args, output, progress)
        finally:
            progress.close()
        _evaluation_gates_pass(table, args)
        return
    _check_evaluation_gates(args)
    progress = _progress.for_command(args, 3 + bool(args.truth))
    try:
        plan = _input_plan(args)
        # without --by, evaluate's join checks scores and truth for a repeated pair (one sort
        # for both): not checked again while reading; check_pairs names the line of one
        later = () if args.by else ("scores", "truth")
        frames = _read_inputs(plan, progress, later)
        pred, truth = frames[0], _frame_of(plan, frames, "truth")
        inputs = {"pred": _describe_input(args.pred, pred, args)}
        if truth is not None:
            inputs["truth"] = _describe_input(args.truth, truth, args, truth=True)
        beyond = _beyond(args, plan, frames, inputs)
        _check_memory(args, n_users=max(d["users"] for d in inputs.values()), n_rows=len(pred))
        progress.stage(f"bootstrapping intervals ({args.n_resamples:,} resamples)" if args.ci
                       else f"computing {_metric_rows(args)} metrics")
        arguments = dict(pred=pred, truth=truth, ci=args.ci, n_resamples=args.n_resamples,
                         seed=args.seed, bootstrap=args.bootstrap,
                         **_slicing(args, plan, frames), **_options(args), **beyond)
        try:
            table = evaluate(**arguments)
        except DuplicatePairs:
            rio.check_pairs(plan, frames)  # a pair written twice: its file and line
            raise
        provenance = _provenance_of(args, plan, frames, call=("evaluate", arguments))
        del pred, truth, frames, arguments
        progress.stage("writing")
        content = format_evaluation(table, inputs, output.format, args.ci, args.n_resamples,
                                    args.seed, bootstrap=args.bootstrap, provenance=provenance,
                                    raw=args.raw_csv)
        rio.write_output(output, content)
    finally:
        progress.close()
    _evaluation_gates_pass(table, args)


#: the name endings of input files (io.INPUT_FORMATS, compressions included: a.run.gz -> a)
_MODEL_SUFFIXES = {part for suffixes in rio.INPUT_FORMATS.values() for suffix in suffixes
                   for part in Path("x" + suffix).suffixes}


def _model_names(paths: list[str]) -> list[str]:
    """Each file's stem (``runs/mf.csv`` -> ``mf``); the paths as given when two stems clash,
    numbered when one file is given twice."""
    stems = []
    for path in paths:
        name = Path(path).name
        while Path(name).suffix.lower() in _MODEL_SUFFIXES:
            name = name[:-len(Path(name).suffix)]
        stems.append(name or Path(path).name)
    if len(set(stems)) == len(stems):
        return stems
    names = [str(p) for p in paths]
    if len(set(names)) == len(names):
        return names
    return [f"{name} ({i})" for i, name in enumerate(names, start=1)]  # one file given twice


def _role(position: int) -> str:
    """The input's role in the JSON and provenance: a, b, c, ... (then model_27, ...)."""
    return chr(ord("a") + position) if position < 26 else f"model_{position + 1}"


def _slicing(args, plan: list[rio.Input], frames: list[pd.DataFrame]) -> dict:
    """--by / --users / --min-slice-size as evaluate's by=, users= and min_slice_size= (the
    --by columns of the scores file, model A's for compare, were read with it, as text)."""
    if not args.by:
        if args.users:
            raise UsageError("--users gives attributes to slice by; name them with --by COL")
        return {}
    return {"by": list(args.by), "users": _frame_of(plan, frames, "users"),
            "min_slice_size": args.min_slice_size}


def cmd_compare(args) -> None:
    if len(args.models) < 2:
        raise UsageError(f"compare needs at least two scores files, got {len(args.models)}; "
                         "e.g. recmetrics compare base.csv new.csv")
    names = _model_names(args.models)
    if args.baseline is not None and args.baseline not in names:
        raise UsageError(f"--baseline {args.baseline}: no such model; the models are "
                         f"{', '.join(names)} (the files' names without extension)")
    for option, given in (("--score-col", args.score_col), ("--rank-col", args.rank_col)):
        if isinstance(given, list) and len(given) not in (1, len(names)):
            raise UsageError(f"{option}: give one column name for every file, or one per file "
                             f"({len(names)}); got {len(given)}")
    if (args.by or args.users) and args.correction != "holm":
        raise UsageError(f"--correction {args.correction}: with --by the p-values are adjusted by "
                         "Holm's step-down across the slices of each metric; leave out "
                         "--correction")
    if (args.by or args.users) and args.baseline is not None:  # it was ignored: B - A stayed
        raise UsageError(f"--baseline {args.baseline}: with --by each slice compares the second "
                         "file (B) with the first (A); leave out --baseline and give the "
                         "baseline's file first")
    gates = _check_gates([g for group in args.fail_if_worse or () for g in group], args,
                         "--fail-if-worse")
    output = _plan(args)
    progress = _progress.for_command(args, 3 + len(names) + bool(args.truth))
    try:
        plan = _input_plan(args, by_activity=False)
        read = _read_inputs(plan, progress)
        frames = {spec.model: frame for spec, frame in zip(plan, read) if spec.role == "scores"}
        inputs = {}
        for model, (name, path) in enumerate(zip(names, args.models)):
            inputs[_role(model)] = {**_describe_input(path, frames[name], args), "model": name}
        truth = _frame_of(plan, read, "truth")
        if truth is not None:
            inputs["truth"] = _describe_input(args.truth, truth, args, truth=True)
        _check_memory(args, n_users=max(d["users"] for d in inputs.values()),
                      n_rows=max(len(f) for f in frames.values()), command="compare")
        progress.stage(f"paired tests over users ({args.n_resamples:,} resamples)")
        if args.by or args.users:
            if len(names) != 2:
                raise UsageError("--by compares two models; give two scores files, or compare "
                                 "many models without --by")
            first, second = names
            arguments = dict(pred_a=frames[first], pred_b=frames[second], truth=truth,
                             n_resamples=args.n_resamples, seed=args.seed, alpha=args.alpha,
                             **_slicing(args, plan, read), **_options(args))
        else:
            arguments = dict(pred_a=frames, truth=truth, n_resamples=args.n_resamples,
                             seed=args.seed, alpha=args.alpha, baseline=args.baseline,
                             correction=args.correction, **_options(args))
        table = compare(**arguments)
        provenance = _provenance_of(args, plan, read, call=("compare", arguments))
        del frames, truth, read, arguments
        progress.stage("writing")
        content = format_comparison(table, inputs, output.format, args.alpha, args.n_resamples,
                                    args.seed, provenance=provenance, raw=args.raw_csv)
        rio.write_output(output, content)
    finally:
        progress.close()
    failed = comparison_gates(table, gates, args.baseline or names[0], args.alpha)
    if failed:
        raise GateFailed("; ".join(failed))


def _check_report(args) -> None:
    """What the report template cannot do, refused before any file is read."""
    several = len(args.models) > 1
    if several and (args.by or args.users):
        if len(args.models) != 2:
            raise UsageError("--by compares two models per slice; give two scores files, or "
                             "report on many models without --by")
        if "activity" in (args.by or ()):
            raise UsageError("--by activity (quartiles of each user's scored rows) slices the "
                             "report of one model; two models scored different rows, so slice "
                             "them by a user attribute (a column of the first file or of --users)")
    if several and (args.history or args.baselines or args.catalog or args.item_features):
        raise UsageError("--history, --catalog, --item-features and --baselines go with the "
                         "report of one model; give one scores file")
    beyond = bool(args.metrics) and bool(set(args.metrics) & set(BEYOND_METRICS))
    if (args.by or args.users) and (args.baselines or beyond):
        raise UsageError("--by with --baselines or the beyond-accuracy metrics is not supported "
                         "yet; make one report with --by and another with --baselines")
    if args.baselines and not args.history:
        raise UsageError("--baselines needs --history FILE: the most-popular baseline scores "
                         "each item by its rows in the training log")
    if args.by and args.ci is not None and args.bootstrap == "multinomial":
        raise UsageError("--by with --bootstrap multinomial: slice intervals need the Poisson "
                         "bootstrap (each user's weight independent of the others); drop "
                         "--bootstrap multinomial")


def cmd_report(args) -> None:
    from . import report

    report.require_jupyter()             # one line with the pip command when the extra is missing
    _check_report(args)
    output = rio.plan_output(args.output, inputs=_inputs(args), allowed=("html",))
    names = _model_names(args.models)
    progress = _progress.for_command(args, 1 + len(names) + bool(args.truth))
    try:
        # Check everything the notebook will need before starting it, so that bad
        # input gets a one-line message here rather than a failed cell there.
        plan = _input_plan(args)
        frames = _read_inputs(plan, progress)
        users = max(n_distinct(f[args.user_col]) for spec, f in zip(plan, frames)
                    if spec.role in ("scores", "truth"))
        _check_memory(args, n_users=int(users), n_rows=max(
            len(f) for spec, f in zip(plan, frames) if spec.role == "scores"))
        _slicing(args, plan, frames)   # --users without --by: refused here
        provenance = _provenance_of(args, plan, frames)
        del frames
        # the notebook runs in the output's folder: every file by its absolute path
        plan = [replace(spec, path=str(Path(spec.path).resolve())) for spec in plan]
        paths = {spec.role: spec.path for spec in plan}
        resolved = [spec.path for spec in plan if spec.role == "scores"]
        parameters = {
            "inputs": [spec.as_dict() for spec in plan],
            "pred_path": resolved[0],
            "truth_path": paths.get("truth"),
            "pred_name": args.models[0] if len(names) == 1 else names[0],
            "truth_name": args.truth,
            "title": args.title,
            "k": list(args.k),
            "metrics": args.metrics,
            "user": args.user_col, "item": args.item_col, "score": args.score_col,
            "rank": args.rank_col, "label": args.label_col,
            "conventions": _conventions(args),
            "ci": args.ci, "n_resamples": args.n_resamples, "seed": args.seed,
            "bootstrap": args.bootstrap,
            "models": dict(zip(names, resolved)) if len(names) > 1 else None,
            "by": list(args.by) if args.by else None,
            "users_path": paths.get("users"),
            "min_slice_size": args.min_slice_size,
            "history_path": paths.get("history"),
            "catalog_path": paths.get("catalog"),
            "item_features_path": paths.get("item_features"),
            "head_share": args.head_share, "unseen": args.unseen, "baselines": args.baselines,
            "provenance": provenance,
        }
        if len(names) > 1:  # the comparison's level and correction, as compare's
            parameters.update(alpha=args.alpha, correction=args.correction)
        progress.stage("running the report notebook", total=report.template_cells(),
                       unit="cell")
        workdir = Path(output.real_path).parent if output.real_path else Path.cwd()
        report.render_report(parameters, output, on_cell=progress.step, workdir=workdir)
    finally:
        progress.close()
    if not args.quiet and output.mode == "atomic" and output.real_path is not None:
        print(f"wrote {present.terminal(output.target)} "
              f"({Path(output.real_path).stat().st_size / 1024:,.0f} KiB)")


# --------------------------------------------------------------------------- arguments


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (raised, not printed)."""

    def error(self, message):
        raise UsageError(f"{message}; see '{self.prog} --help'")


def _cutoff(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give cut-offs such as "
                                         "--k 5 10 20") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1; a cut-off counts the top items, "
                                         "e.g. --k 5 10 20")
    if value > MAX_K:
        raise argparse.ArgumentTypeError(
            f"{text} is too large; use at most {MAX_K:,} (a cut-off longer than every list "
            "already counts each list whole)")
    return value


def _resamples(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number, e.g. 1000") from None
    try:  # the same bounds as recmetrics.evaluate and compare
        return check_n_resamples(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).replace(f"n_resamples={value!r}",
                                                            repr(text))) from None


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number strictly between 0 and 1, "
                                         "e.g. 0.95")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2 ** 128:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 0, e.g. 0")
    return value


def _convention_number(flag: str):
    """The argparse type of a numeric convention: a finite number (its own check follows)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give {flag} a "
                                             "number, e.g. 2")
        return value
    return parse


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a share in (0, 1], "
                                         "e.g. 0.8") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1]; give e.g. 0.8")
    return value


def _column_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a column name cannot be empty")
    return text


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1, e.g. 2")
    return value


def _separator(text: str) -> str:
    named = {"\\t": "\t", "tab": "\t", "TAB": "\t", "comma": ",", "semicolon": ";", "pipe": "|",
             "space": " "}
    value = named.get(text, text)
    if len(value) != 1 or value in "\"\r\n":
        raise argparse.ArgumentTypeError(f"{text!r} must be one character such as ',' ';' '|' or "
                                         "'\\t' (or tab, semicolon)")
    return value


def _encoding(text: str) -> str:
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a known encoding; use a name such as "
                                         "utf-8, gbk, gb18030, big5, shift_jis, latin-1, cp1252 "
                                         "or utf-16") from None
    return text


def _add_common(parser: argparse.ArgumentParser, *, k_default, n_resamples: int,
                ci_default, beyond: bool | None = None) -> None:
    parser.add_argument("--truth", metavar="TRUTH",
                        help="file of (user, item, label) rows; without it the labels are read "
                             "from the label column of the scores file")
    parser.add_argument("--k", type=_cutoff, nargs="+", default=k_default, metavar="K",
                        help=f"cut-offs for the @k metrics (default: {' '.join(map(str, k_default))})")
    if beyond is None:  # evaluate (and report): the beyond-accuracy metrics and their inputs
        beyond = ci_default is None
    parser.add_argument("--metrics", nargs="+", choices=METRICS + (BEYOND_METRICS if beyond else ()),
                        metavar="METRIC",
                        help=f"metrics to compute, any of {', '.join(METRICS)} (default: "
                             f"{' '.join(DEFAULT_METRICS)}; logloss, ne, brier and ece need "
                             "scores that are probabilities)" + (
                                 f"; beyond accuracy: {', '.join(BEYOND_METRICS)} (not in the "
                                 "default; see --history)" if beyond else ""))
    files = parser.add_argument_group("reading the files")
    per_model = ci_default is False  # compare: a score or rank column per model
    for role in ("user", "item", "score", "label"):
        if role == "score" and per_model:
            files.add_argument("--score-col", default="score", nargs="+", metavar="NAME",
                               type=_column_name,
                               help="column of the score (default: score); one name per file "
                                    "gives each model its own")
            continue
        files.add_argument(f"--{role}-col", default=role, metavar="NAME", type=_column_name,
                           help=f"column of the {role} (default: {role})" + (
                               "; a truth file without it is read as positives only (every "
                               "row relevant)" if role == "label" else ""))
    files.add_argument("--rank-col", metavar="NAME", type=_column_name,
                       nargs="+" if per_model else None,
                       help="read this column of ranks instead of a score: 1 is the top, lower "
                            "is better" + ("; one name per file gives each model its own"
                                           if per_model else ""))
    files.add_argument("--format-in", choices=("auto", "trec"), default="auto",
                       help="how to read the input files: auto (from the name: "
                            f"{', '.join(TREC_SUFFIXES)}, optionally compressed as CSV files may be, "
                            "are TREC files, a run and --truth qrels; "
                            "else CSV, TSV, text or Parquet) or trec (every file is TREC: the "
                            "scores files runs, --truth qrels; negative grades are pooled but "
                            "unjudged, as in trec_eval)")
    files.add_argument("--sep", type=_separator, metavar="CHAR",
                       help="field separator of CSV files (default: ',' for .csv, a tab for "
                            ".tsv, found from the header for .txt); '\\t' or tab for a tab")
    files.add_argument("--encoding", type=_encoding, metavar="NAME",
                       help="text encoding of every CSV and TREC file (default: utf-8; a "
                            "byte-order mark is always honoured), e.g. gbk, latin-1, cp1252, "
                            "utf-16; a UTF-8 file asked to be read as latin-1 or cp1252 is "
                            "refused")
    files.add_argument("--pred-encoding", type=_encoding, metavar="NAME",
                       help="text encoding of the scores file(s) only, overriding --encoding "
                            "(e.g. an Excel export in cp1252 beside a UTF-8 truth file)")
    files.add_argument("--truth-encoding", type=_encoding, metavar="NAME",
                       help="text encoding of the --truth file only, overriding --encoding")
    if beyond:
        extra = parser.add_argument_group("beyond accuracy (with --metrics novelty, ...)")
        extra.add_argument("--history", metavar="FILE",
                           help="training log of (user, item) rows: popularity (novelty, arp, "
                                "aplt), co-occurrence similarity and each user's own items "
                                "(serendipity)")
        extra.add_argument("--catalog", metavar="FILE",
                           help="file with an item column: every item that could be recommended "
                                "(default: the items of the input files)")
        extra.add_argument("--item-features", metavar="FILE",
                           help="item column and numeric feature columns: cosine similarity of "
                                "diversity and serendipity instead of co-occurrence in --history")
        extra.add_argument("--head-share", type=_share, default=0.8, metavar="SHARE",
                           help="share of --history rows held by the popular head (aplt; "
                                "default: 0.8)")
        extra.add_argument("--unseen", choices=("add_one", "zero", "error"), default="add_one",
                           help="novelty of an item never seen in the popularity source "
                                "(default: add_one)")
        extra.add_argument("--baselines", action="store_true",
                           help="add rows for a random recommender (a constant score, exact "
                                "under --ties average) and a most-popular one (scores = --history "
                                "popularity) over the same candidate rows; adds a model column")
    conventions = parser.add_argument_group("conventions (the defaults are recmetrics.evaluate's)")
    for c in CONVENTIONS:
        if c.choices:
            conventions.add_argument(c.flag, choices=c.choices, default=c.default,
                                     help=f"{c.help} (default: {c.default})")
        elif c.is_flag:
            conventions.add_argument(c.flag, action="store_true", help=c.help)
        else:
            conventions.add_argument(c.flag, type=_convention_number(c.flag), default=c.default,
                                     metavar="X", help=c.help)
    stats = parser.add_argument_group("statistics")
    if ci_default is not False:
        stats.add_argument("--ci", type=_level, default=ci_default, metavar="LEVEL",
                           help="confidence level of bootstrap intervals over users, e.g. 0.95 "
                                f"(default: {ci_default or 'no intervals'})")
    stats.add_argument("--n-resamples", type=_resamples, default=n_resamples, metavar="N",
                       help=f"bootstrap / randomization resamples (default: {n_resamples})")
    stats.add_argument("--seed", type=_seed, default=0, metavar="S",
                       help="random seed of the resampling (default: 0)")
    if ci_default is not False:
        stats.add_argument("--bootstrap", choices=("poisson", "multinomial"), default="poisson",
                           help="how users are resampled: a Poisson(1) weight per user hashed "
                                "from (user, seed, resample), the same on every engine and for "
                                "any subset of users, or draws with replacement (default: "
                                "poisson)")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    shown.add_argument("--progress", action="store_true",
                       help="show progress on stderr even when it is not a terminal")


FORMATS = ("table", "json", "csv", "tsv", "parquet")
#: compare also writes the results table of its models (recmetrics.results_table_from_comparison)
COMPARE_FORMATS = FORMATS + ("markdown", "latex", "html")
_OUT_HELP = ("write to this file instead of standard output ('-'); the extension picks the "
             "format: .txt (table), .json, .csv, .tsv, .csv.gz/.bz2/.xz/.zst, .parquet")


_RAW_HELP = ("CSV and TSV output: write text cells as they are; by default a text cell starting "
             "with = + - @, a tab or a carriage return gets a leading ' so that a spreadsheet "
             "does not run it as a formula (OWASP's rule against CSV injection; numbers are "
             "never changed)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Evaluate recommender / ranking model scores from "
                                            "CSV or Parquet files.",
                     epilog="Run 'recmetrics COMMAND --help' for a command's options. "
                            + _EXIT_EPILOG + ".")
    parser.add_argument("--version", action="version",
                        version=f"{_provenance.DISTRIBUTION} {_provenance.version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ev = commands.add_parser("evaluate", help="print the metric table of one model",
                             description="AUC, GAUC, precision/recall/hit rate@k, MAP@k, MRR and "
                                         "NDCG@k of one file of scores.", epilog=_EXIT_EPILOG)
    ev.add_argument("pred", metavar="PRED", help="scores file (.csv, .tsv, .txt or .parquet)")
    _add_common(ev, k_default=[10], n_resamples=1000, ci_default=None)
    ev.add_argument("--format", choices=FORMATS,
                    help="output format (default: from -o's extension, else table)")
    ev.add_argument("-o", "--output", metavar="OUT", help=_OUT_HELP)
    ev.add_argument("--raw-csv", action="store_true", help=_RAW_HELP)
    ev.add_argument("--fail-under", type=_threshold, nargs="+", metavar="METRIC=VALUE",
                    help="quality gate: after writing the output, exit with status 3 when a "
                         "metric is below its threshold, e.g. --fail-under ndcg@10=0.30 "
                         "auc=0.7 (with --ci the message gives the interval too); a metric "
                         "with a cut-off named alone takes the one k of --k")
    ev.add_argument("--fail-over", type=_ceiling, nargs="+", metavar="METRIC=VALUE",
                    help="quality gate for metrics that are better when lower ("
                         + ", ".join(m for m in _metrics.METRIC if m in _metrics.LOWER_IS_BETTER)
                         + "): exit with status 3 when one is above its threshold, e.g. "
                         "--fail-over logloss=0.45")
    sl = ev.add_argument_group("slices")
    sl.add_argument("--by", nargs="+", metavar="COL",
                    help="evaluate per slice of users: per-user columns of PRED or of --users, "
                         "or 'activity' (quartiles of scored rows per user); several columns "
                         "give their crossing")
    sl.add_argument("--users", metavar="FILE",
                    help="user attributes for --by: the user column and one column per attribute")
    sl.add_argument("--min-slice-size", type=_workers, default=30, metavar="N",
                    help="slices of fewer users are kept but marked small_slice (default: 30)")
    engine = ev.add_argument_group("engine (logs larger than memory)")
    engine.add_argument("--engine", choices=("pandas", "dask", "spark"), default="pandas",
                        help="pandas: read everything into this process (default); dask: "
                             "compute on a Dask cluster, PRED and TRUTH being Parquet files, "
                             "directories of them or globs (pip install 'metricbook[dask]'); "
                             "spark: the same on Spark (pip install 'metricbook[spark]', Java "
                             "17+)")
    engine.add_argument("--master", metavar="URL",
                        help="the Spark master, e.g. local[2] or spark://host:7077 (default: "
                             "the active session, else local[*])")
    engine.add_argument("--workers", type=_workers, metavar="N",
                        help="worker processes of the local Dask cluster (default: one per core)")
    engine.add_argument("--memory-limit", metavar="SIZE",
                        help="memory limit of each local worker, e.g. 1GiB, at least 256MiB "
                             "(default: auto, the machine's memory shared between the workers)")
    engine.add_argument("--scheduler", metavar="ADDRESS",
                        help="use the running Dask scheduler at ADDRESS (e.g. tcp://host:8786) "
                             "instead of starting a local cluster")
    ev.set_defaults(run=cmd_evaluate)

    cp = commands.add_parser("compare", help="which of two or more models is better?",
                             description="Every model's metrics on the users all of them scored, "
                                         "B - A for every pair (or each model against "
                                         "--baseline), and paired p-values over users, "
                                         "corrected for multiple testing.",
                             epilog=_EXIT_EPILOG)
    cp.add_argument("models", metavar="MODEL", nargs="+",
                    help="scores files of the models (.csv, .tsv, .txt or .parquet), two or "
                         "more; each model is named by its file name without extension")
    _add_common(cp, k_default=[10], n_resamples=10_000, ci_default=False)
    cps = cp.add_argument_group("slices")
    cps.add_argument("--by", nargs="+", metavar="COL",
                     help="compare per slice of users: per-user columns of A or of --users; "
                          "several columns give their crossing; Holm-adjusted p-values across slices")
    cps.add_argument("--users", metavar="FILE",
                     help="user attributes for --by: the user column and one column per attribute")
    cps.add_argument("--min-slice-size", type=_workers, default=30, metavar="N",
                     help="slices of fewer users are kept but marked small_slice (default: 30)")
    cp.add_argument("--alpha", type=_level, default=0.05,
                    help="significance level of the verdict column (default: 0.05)")
    cp.add_argument("--baseline", metavar="NAME",
                    help="compare each model with this one (a file name without extension) "
                         "instead of every pair")
    cp.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"), default="holm",
                    help="multiple-testing correction of every p-value column over all rows of "
                         "the table; the verdict uses the corrected p-value (default: holm)")
    cp.add_argument("--format", choices=COMPARE_FORMATS,
                    help="output format (default: from -o's extension, else table); markdown, "
                         "latex and html write the results table: models by metrics, best in "
                         "bold, significant wins as superscript letters")
    cp.add_argument("-o", "--output", metavar="OUT", help=_OUT_HELP + ", .md, .tex, .html")
    cp.add_argument("--raw-csv", action="store_true", help=_RAW_HELP)
    cp.add_argument("--fail-if-worse", type=_worse_metrics, nargs="+", metavar="METRICS",
                    help="quality gate: after writing the output, exit with status 3 when a model "
                         "is significantly worse than the first file (or --baseline) on one of "
                         "these metrics at --alpha after --correction, e.g. --fail-if-worse "
                         "ndcg@10,map@10")
    cp.set_defaults(run=cmd_compare)

    rp = commands.add_parser("report", help="write a self-contained HTML report of one model "
                                             "(or a comparison of several)",
                             description="Metric table with confidence intervals, ROC curve, "
                                         "per-user distributions and metrics against k, as one "
                                         "HTML file (needs pip install metricbook[report]); "
                                         "with --by a section per slice of users, with "
                                         "--baselines the random and most-popular rows, and "
                                         "for two or more scores files the comparison of the "
                                         "models.")
    rp.add_argument("models", metavar="PRED", nargs="+",
                    help="scores file (.csv, .tsv, .txt or .parquet); two or more compare the "
                         "models (each named by its file name without extension)")
    _add_common(rp, k_default=[10], n_resamples=1000, ci_default=0.95, beyond=True)
    rps = rp.add_argument_group("slices")
    rps.add_argument("--by", nargs="+", metavar="COL",
                     help="a section per slice of users: per-user columns of PRED (the first "
                          "file) or of --users, or for one model 'activity' (quartiles of "
                          "scored rows per user); several columns give their crossing; with two "
                          "scores files, the comparison per slice (Holm across slices)")
    rps.add_argument("--users", metavar="FILE",
                     help="user attributes for --by: the user column and one column per attribute")
    rps.add_argument("--min-slice-size", type=_workers, default=30, metavar="N",
                     help="slices of fewer users are kept but marked small (default: 30)")
    rpc = rp.add_argument_group("comparison (two or more models)")
    rpc.add_argument("--alpha", type=_level, default=0.05,
                     help="significance level of the comparison's verdicts (default: 0.05)")
    rpc.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"),
                     default="holm",
                     help="multiple-testing correction of the comparison's p-values over all "
                          "its rows (default: holm)")
    rp.add_argument("--title", help="title of the report (default: from the file name)")
    rp.add_argument("-o", "--output", metavar="OUT", default="report.html",
                    help="HTML file to write (default: report.html)")
    rp.set_defaults(run=cmd_report, format=None)
    return parser


@functools.cache
def _flags() -> dict[str, str]:
    """Python keyword -> the flag giving it, from the parser itself (every subcommand's long
    option under its dest, which is the keyword of recmetrics.evaluate / compare; the
    column options under the keyword they feed), so that no option is left out."""
    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    commands = list(choices.values()) if isinstance(choices, dict) else []
    flags: dict[str, str] = {}
    for command in commands:
        for action in command._actions:
            if action.option_strings and action.dest != "help":
                flags.setdefault(action.dest, next((o for o in action.option_strings
                                                    if o.startswith("--")),
                                                   action.option_strings[0]))
    flags.update({keyword: flags[dest] for dest, keyword in _COLUMN_FLAGS.items()
                  if dest in flags})
    return flags


@functools.cache
def _switches() -> re.Pattern:
    """``baselines=True`` of a switch (a flag taking no value): the flag alone."""
    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    commands = list(choices.values()) if isinstance(choices, dict) else []
    names = {action.dest for command in commands for action in command._actions
             if action.option_strings and action.nargs == 0 and action.dest != "help"}
    return re.compile(r"(?<![\w.'\"-])(" + "|".join(sorted(names, key=len, reverse=True))
                      + r")=True\b")


@functools.cache
def _py_option() -> re.Pattern:
    return re.compile(r"(?<![\w.'\"/\\-])(?<!position )(" + "|".join(sorted(_flags(), key=len,
                                                                         reverse=True))
                      + r")=(?:'([\w.-]+)'|(?=\S)|\s)")


def _as_flags(message: str) -> str:
    """"n_resamples=1 must be ..." -> "--n-resamples 1 must be ..." (the option as typed);
    "pass score= a column" -> "pass --score-col a column". ``user=`` and ``item=`` with a
    value ("user='u1'") name a row's ids, not the option, and stay."""
    def flag(match: re.Match) -> str:
        if match.group(1) in ("user", "item") and not match.group(0)[-1].isspace():
            return match.group(0)
        return _flags()[match.group(1)] + " " + (match.group(2) or "")

    message = _switches().sub(lambda m: _flags()[m.group(1)], message)
    message = _py_option().sub(flag, message)
    return _py_name().sub(lambda m: _flags()[m.group(1)], message)


@functools.cache
def _py_name() -> re.Pattern:
    """A keyword with an underscore named on its own ("item_features given but ..."), which
    cannot be a word of the sentence: its flag instead; not inside a file name or path
    (".../item_features.csv")."""
    names = sorted((n for n in _flags() if "_" in n), key=len, reverse=True)
    return re.compile(r"(?<![\w.'\"/\\-])(" + "|".join(names) + r")(?![\w='\"/\\-]|\.\w)")


def _one_line(message) -> str:
    return present.terminal(_as_flags(" ".join(str(message).split())))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (:data:`EXIT_CODES`: 0 ok, 2 bad input,
    3 a quality gate failed, 130 interrupted)."""
    import warnings

    noted: list[str] = []  # warnings, printed once the command has done its work: a refusal
    #                        is one line, never preceded by warnings about the run it stops

    def note(message, category, filename, lineno, file=None, line=None):
        noted.append(f"{PROG}: warning: {_one_line(message)}")

    def print_notes():
        for line in noted:
            print(line, file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = note
            typed = list(sys.argv[1:] if argv is None else argv)
            args = build_parser().parse_args(typed)
            args.argv = [PROG, *typed]
            try:
                args.run(args)
            except GateFailed:
                print_notes()
                raise
            print_notes()
    except UsageError as error:
        print(f"{PROG}: error: {present.terminal(' '.join(str(error).split()))}",
              file=sys.stderr)
        return 2
    except GateFailed as error:
        print(f"{PROG}: gate failed: {present.terminal(' '.join(str(error).split()))}",
              file=sys.stderr)
        return 3
    except rio.FileProblem as error:  # its paths as given: no option spelled inside a path
        print(f"{PROG}: error: {_one_line(error)}", file=sys.stderr)   # is rewritten
        return 2
    except ValueError as error:
        print(f"{PROG}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG}: error: out of memory; use fewer --n-resamples, a smaller --k, or a "
              "machine with more memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `recmetrics ... | head`: the reader left; not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    return 0
