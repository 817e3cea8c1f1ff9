"""The ``recmetrics`` command: evaluate, compare and report on files of model scores.

    recmetrics evaluate PRED [--truth TRUTH] [--k 5 10 20] [--ci 0.95] [--format table|json|csv] [-o OUT]
    recmetrics compare A B [--truth TRUTH] [--k ...] [--alpha 0.05] [--format ...] [-o OUT]
    recmetrics report PRED [--truth TRUTH] [--k ...] [-o report.html]
    python -m recmetrics ...                      (the same)

PRED, A and B hold one row per scored (user, item) with a score (and a label
column when no ``--truth`` file is given); TRUTH holds (user, item, label),
the label being a relevance grade (0 = not relevant). Files are CSV
(``.csv``, optionally compressed: ``.csv.gz`` ...) or Parquet (``.parquet``,
``.pq``), told apart by their extension. User and item ids are read as text,
so ``7`` in one file matches ``7`` in the other whatever the file types.

This module only parses arguments and reads and writes files; every number
comes from :func:`recmetrics.evaluate` and :func:`recmetrics.compare`, and
the report is the notebook ``recmetrics/templates/report.ipynb`` executed
with the command's parameters and exported to one self-contained HTML file.

Bad input (a missing file or column, a bad option, a value recmetrics
rejects) ends the command with exit status 2 and one line on stderr,
``recmetrics: error: <what is wrong and what to do>``; no traceback, and no
output file is left half-written (output goes to a temporary file in the
target folder, renamed into place at the end).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from ._validation import (DENOMINATORS, GAINS, GAUC_WEIGHTS, IDEALS, TIES, check_unique_pairs,
                          id_column, numeric_column)
from .frame import METRICS, compare, evaluate

__all__ = ["main", "read_scores", "render_report", "UsageError"]

PROG = "recmetrics"
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".csv.zst")
PARQUET_SUFFIXES = (".parquet", ".pq")
TEMPLATE = Path(__file__).resolve().parent / "templates" / "report.ipynb"


class UsageError(Exception):
    """Bad input from the command line: reported as one line, exit status 2."""


# --------------------------------------------------------------------------- reading files


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    suffix = "".join(path.suffixes) or "no extension"
    raise UsageError(f"{path}: unknown file type ({suffix}); give a .csv or .parquet file "
                     "(the extension tells recmetrics how to read it)")


def _where(kind: str, position: int) -> str:
    """A data row's position as a reader finds it: the line in a CSV file, the row in Parquet."""
    return f"line {position + 2}" if kind == "csv" else f"row {position + 1}"


def read_scores(path, *, columns: dict[str, str], numbers: tuple[str, ...] = (),
                grades: tuple[str, ...] = (), hints: dict[str, str] | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file of (user, item, ...) rows and check it, naming the file.

    Parameters
    ----------
    path : str or Path
        ``.csv`` (optionally compressed) or ``.parquet`` / ``.pq``.
    columns : dict
        Role -> column name, e.g. ``{"user": "user", "item": "item", "score": "score"}``.
        The roles ``user`` and ``item`` are read as text (ids); the rest as numbers.
    numbers : tuple of str
        Roles that must hold numbers without NaN (scores).
    grades : tuple of str
        Roles that must hold numbers >= 0 without NaN (relevance labels).
    hints : dict, optional
        Role -> how to point at another column (default ``--<role>-col NAME``).

    Returns
    -------
    pandas.DataFrame
        Only the requested columns, in the order given; ids as strings.

    Raises
    ------
    UsageError
        With a one-line message naming the file, the column and what to do.
    """
    path = Path(path)
    hints = hints or {}
    kind = _kind(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file; check the path")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a .csv or .parquet file")
    try:
        if kind == "csv":
            present = list(pd.read_csv(path, nrows=0).columns)
        else:
            import pyarrow.parquet as pq

            present = list(pq.read_schema(path).names)
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path} is empty; a CSV file needs a header line naming its columns, "
                         f"e.g. {','.join(columns.values())}") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as error:
        raise UsageError(f"{path} is not a readable {'CSV' if kind == 'csv' else 'Parquet'} "
                         f"file ({_first_line(error)}); check its format") from None

    for role, column in columns.items():
        if column not in present:
            have = ", ".join(repr(str(c)) for c in present) or "none"
            hint = hints.get(role, f"pass --{role}-col NAME")
            raise UsageError(f"{path} has no column {column!r} (its columns: {have}); rename the "
                             f"column or {hint}")
    wanted = list(dict.fromkeys(columns.values()))
    try:
        if kind == "csv":
            ids = {columns[r]: str for r in ("user", "item") if r in columns}
            frame = pd.read_csv(path, usecols=wanted, dtype=ids, low_memory=False)
        else:
            frame = pd.read_parquet(path, columns=wanted)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as error:
        raise UsageError(f"{path} is not a readable {'CSV' if kind == 'csv' else 'Parquet'} "
                         f"file ({_first_line(error)}); check its format") from None
    frame = frame[wanted]
    if len(frame) == 0:
        raise UsageError(f"{path} has no data rows; it needs at least one scored (user, item)")

    where = lambda row: _where(kind, row)  # noqa: E731  (0-based row -> "line N" in the file)
    try:
        for role in ("user", "item"):
            if role in columns:
                id_column(str(path), frame, columns[role], where=where)
                values = frame[columns[role]]
                if not pd.api.types.is_string_dtype(values):
                    if pd.api.types.is_float_dtype(values) and (values % 1 == 0).all():
                        values = values.astype(np.int64)  # 7.0 -> "7", as the CSV reader reads it
                    frame[columns[role]] = values.astype(str)
        for role in numbers + grades:
            frame[columns[role]] = numeric_column(str(path), frame, columns[role],
                                                  grades=role in grades, where=where)
        if "user" in columns and "item" in columns:
            check_unique_pairs(str(path), frame, columns["user"], columns["item"], where=where)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return frame


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _columns(args, *, with_score: bool = True, with_label: bool) -> dict[str, str]:
    columns = {"user": args.user_col, "item": args.item_col}
    if with_score:
        columns["score"] = args.score_col
    if with_label:
        columns["label"] = args.label_col
    return columns


def _read_pred(path, args) -> pd.DataFrame:
    """A predictions file: user, item, score (and label when there is no truth file)."""
    with_label = args.truth is None
    hints = {"label": "pass --label-col NAME, or give the labels in a separate file with "
                      "--truth FILE"} if with_label else {}
    return read_scores(path, columns=_columns(args, with_label=with_label), numbers=("score",),
                       grades=("label",) if with_label else (), hints=hints)


def _read_truth(path, args) -> pd.DataFrame:
    return read_scores(path, columns=_columns(args, with_score=False, with_label=True),
                       grades=("label",))


# --------------------------------------------------------------------------- writing files


def _check_output(target: str | os.PathLike) -> Path:
    """An output path whose folder exists and that is not a folder itself (checked up front)."""
    target = Path(target)
    if target.is_dir():
        raise UsageError(f"-o {target}: is a folder; give a file name such as {target / 'out'}")
    if not target.parent.is_dir():
        raise UsageError(f"-o {target}: folder {target.parent} does not exist; create it first")
    return target


@contextmanager
def _atomic_output(target: str | os.PathLike):
    """Yield a temporary text file beside ``target``; rename it into place only on success."""
    target = _check_output(target)
    folder = target.parent
    try:
        handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", dir=folder,
                                             prefix=f".{target.name}.", suffix=".part",
                                             delete=False)
    except OSError as error:
        raise UsageError(f"-o {target}: cannot write in {folder} ({error.strerror}); choose "
                         "another folder") from None
    try:
        with handle:
            yield handle
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(handle.name, 0o666 & ~umask)  # temporary files are private; outputs are not
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _emit(text: str, output) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with _atomic_output(output) as handle:
        handle.write(text)


# --------------------------------------------------------------------------- progress


class _Progress:
    """A tqdm bar of named stages on stderr; silent when stderr is not a terminal or --quiet."""

    def __init__(self, total: int, quiet: bool):
        from tqdm.auto import tqdm

        # shutil falls back to 80 x 24 where the terminal reports no size (tqdm would then
        # draw nothing)
        size = shutil.get_terminal_size()
        self.bar = tqdm(total=total, file=sys.stderr, leave=False, unit="step",
                        disable=quiet or not sys.stderr.isatty(), ncols=min(100, size.columns),
                        nrows=size.lines,
                        bar_format="{desc:<34}{bar}| {n_fmt}/{total_fmt} [{elapsed}]")

    def stage(self, description: str) -> None:
        self.bar.set_description_str(description)

    def step(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


# --------------------------------------------------------------------------- formatting


def _number(value, digits: int = 4) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


def _p_value(p) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _metric_name(metric: str, k) -> str:
    return metric if pd.isna(k) else f"{metric}@{int(k)}"


def _text_table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = []
    for row in [header] + rows:
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _conventions_line(conventions: dict) -> str:
    return (f"ties={conventions['ties']}; NDCG gain={conventions['gain']}, "
            f"ideal={conventions['ideal']}; AP denominator={conventions['denominator']}; "
            f"GAUC weight={conventions['gauc_weight']}")


def _jsonable(value):
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _records(table: pd.DataFrame) -> list[dict]:
    return [{key: _jsonable(value) for key, value in row.items()}
            for row in table.to_dict(orient="records")]


def _describe_input(path, frame: pd.DataFrame, args) -> dict:
    return {"path": str(path), "rows": int(len(frame)),
            "users": int(frame[args.user_col].nunique())}


def format_evaluation(table: pd.DataFrame, inputs: dict, fmt: str, ci: float | None,
                      n_resamples: int, seed: int) -> str:
    conventions = table.attrs["conventions"]
    if fmt == "csv":
        return table.to_csv(index=False, lineterminator="\n")
    if fmt == "json":
        document = {"command": "evaluate", "inputs": inputs, "conventions": conventions,
                    "ci": ci, "n_resamples": n_resamples if ci else None,
                    "seed": seed if ci else None, "metrics": _records(table)}
        return json.dumps(document, indent=2, allow_nan=False) + "\n"
    header = ["metric", "value"] + ([f"{ci:.0%} CI"] if ci else []) + \
        ["users", "skipped", "no predictions"]
    rows = []
    for row in table.itertuples(index=False):
        cells = [_metric_name(row.metric, row.k), _number(row.value)]
        if ci:
            cells.append("" if math.isnan(row.ci_low)
                         else f"[{row.ci_low:.4f}, {row.ci_high:.4f}]")
        cells += [f"{row.n_users:,}", f"{row.n_skipped:,}", f"{row.n_without_predictions:,}"]
        rows.append(cells)
    described = " against ".join(f"{d['path']} ({d['rows']:,} rows, {d['users']:,} users)"
                                 for d in inputs.values())
    notes = [
        f"evaluated: {described}",
        "",
        _text_table(header, rows, right=set(range(1, len(header)))),
        "",
        f"conventions: {_conventions_line(conventions)}",
        textwrap.fill("skipped: users with no relevant item (left out of the ranking means; for "
                      "GAUC, users with one class only); no predictions: users with relevant "
                      "items but no scored row (they count as 0).", width=100),
    ]
    if ci:
        notes.append(textwrap.fill(
            f"CI: {ci:.0%} percentile bootstrap over users ({n_resamples:,} resamples, seed "
            f"{seed}); users are drawn with replacement and every metric recomputed.", width=100))
    return "\n".join(notes) + "\n"


def _verdict(row, alpha: float) -> str:
    p = row.p_randomization if not math.isnan(row.p_randomization) else row.p_ttest
    if math.isnan(p):
        return "not tested"
    if p < alpha and row.difference != 0:
        return "B better" if row.difference > 0 else "A better"
    return "no significant difference"


def format_comparison(table: pd.DataFrame, inputs: dict, fmt: str, alpha: float,
                      n_resamples: int, seed: int) -> str:
    table = table.copy()
    table["verdict"] = [_verdict(row, alpha) for row in table.itertuples(index=False)]
    conventions = table.attrs["conventions"]
    if fmt == "csv":
        return table.to_csv(index=False, lineterminator="\n")
    if fmt == "json":
        document = {"command": "compare", "inputs": inputs, "conventions": conventions,
                    "alpha": alpha, "n_resamples": n_resamples, "seed": seed,
                    "metrics": _records(table)}
        return json.dumps(document, indent=2, allow_nan=False) + "\n"
    header = ["metric", "A", "B", "B - A", "p (t-test)", "p (randomization)", "users", "verdict"]
    rows = [[_metric_name(r.metric, r.k), _number(r.value_a), _number(r.value_b),
             f"{r.difference:+.4f}", _p_value(r.p_ttest), _p_value(r.p_randomization),
             f"{r.n_users:,}" if r.n_users else "-", r.verdict]
            for r in table.itertuples(index=False)]
    names = {role: f"{d['path']} ({d['rows']:,} rows, {d['users']:,} users)"
             for role, d in inputs.items()}
    better = table.verdict.isin(["B better", "A better"])
    summary = (f"{int((table.verdict == 'B better').sum())} of {len(table)} rows: B significantly "
               f"better; {int((table.verdict == 'A better').sum())}: A significantly better; "
               f"{int((~better & (table.verdict != 'not tested')).sum())}: no significant "
               f"difference at alpha={alpha:g}.")
    lines = [f"A: {names['a']}", f"B: {names['b']}"]
    if "truth" in names:
        lines.append(f"truth: {names['truth']}")
    lines += [
        "",
        _text_table(header, rows, right={1, 2, 3, 4, 5, 6}),
        "",
        summary,
        textwrap.fill(
            "p-values are two-sided and paired over the users both models are evaluated on: a "
            f"paired t-test and a sign-flip randomization test ({n_resamples:,} resamples, "
            f"seed {seed}); the verdict uses the randomization p-value. Global AUC is not a mean "
            "over users and gets no p-value; compare GAUC instead. Were the two models equally good, "
            f"about {alpha:.0%} of the rows tested would still come out 'significant' by "
            "chance.", width=100),
        f"conventions: {_conventions_line(conventions)}",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the report


_REPORT_HTML_TEMPLATE = r"""{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
<style type="text/css">
  body.jp-Notebook { max-width: 1100px; margin: 0 auto; padding: 1.5em 2em 4em; }
  .jp-RenderedHTMLCommon { font-size: 15px; line-height: 1.5; }
  .jp-RenderedHTMLCommon h1 { font-size: 1.9em; margin-top: 0.4em; }
  .jp-RenderedHTMLCommon h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
  .jp-RenderedHTMLCommon table { font-size: 14px; }
  .jp-OutputArea-output img { max-width: 100%; height: auto; }
</style>
{%- endblock extra_css -%}
"""


def _parameters_cell(parameters: dict):
    import nbformat

    lines = ["# Parameters injected by `recmetrics report`"]
    lines += [f"{name} = {value!r}" for name, value in parameters.items()]
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    cell.metadata["tags"] = ["injected-parameters"]
    return cell


def render_report(parameters: dict, output, *, progress: _Progress | None = None,
                  template: str | os.PathLike | None = None, workdir=None) -> None:
    """Execute the report notebook with ``parameters`` and write it to ``output`` as HTML.

    The parameters cell is injected after the template's cell tagged
    ``parameters``; figures are embedded as base64 PNG and code cells are hidden,
    so the HTML file stands alone (no scripts or styles fetched from the network).
    """
    import nbformat
    from jinja2 import DictLoader
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError
    from nbconvert import HTMLExporter

    nb = nbformat.read(template or TEMPLATE, as_version=4)
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    position = tagged[0] + 1 if tagged else 0
    nb.cells.insert(position, _parameters_cell(parameters))
    title = parameters.get("title") or f"recmetrics report: {parameters.get('pred_name')}"
    nb.metadata["title"] = title

    def executed(cell, cell_index, **_):
        if progress is not None and cell.cell_type == "code":
            progress.step()

    client = NotebookClient(nb, timeout=None, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir or Path.cwd())}},
                            on_cell_executed=executed)
    try:
        # The kernel's own log lines (ipykernel warnings) would reach our stderr: drop them.
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except CellExecutionError as error:
        failed = next((c for c in nb.cells if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        detail = next((f"{o['ename']}: {o['evalue']}" for o in (failed or {}).get("outputs", [])
                       if o.get("output_type") == "error"), _first_line(error))
        raise ReportError(f"the report notebook failed ({_first_line(Exception(detail))}); no "
                          "report was written") from None
    except DeadKernelError:
        raise ReportError("the Python kernel running the report died (out of memory?); no report "
                          "was written") from None

    if progress is not None:
        progress.stage("writing the HTML report")
    exporter = HTMLExporter(extra_loaders=[DictLoader({"recmetrics_report.html.j2":
                                                       _REPORT_HTML_TEMPLATE})],
                            template_file="recmetrics_report.html.j2", exclude_input=True,
                            exclude_input_prompt=True, exclude_output_prompt=True,
                            embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    with _atomic_output(output) as handle:
        handle.write(body)


class ReportError(UsageError):
    """The report notebook failed on input that passed the command's checks."""


def _report_cells() -> int:
    import nbformat

    return sum(c.cell_type == "code" for c in nbformat.read(TEMPLATE, as_version=4).cells) + 1


# --------------------------------------------------------------------------- commands


def _options(args) -> dict:
    return dict(k=args.k, metrics=args.metrics, user=args.user_col, item=args.item_col,
                score=args.score_col, label=args.label_col, ties=args.ties, gain=args.gain,
                ideal=args.ideal, denominator=args.denominator, gauc_weight=args.gauc_weight)


def _format(args) -> str:
    if args.format:
        return args.format
    suffix = Path(args.output).suffix.lower() if args.output else ""
    return {".json": "json", ".csv": "csv"}.get(suffix, "table")


def cmd_evaluate(args) -> None:
    if args.output:
        _check_output(args.output)
    progress = _Progress(4 if args.truth else 3, args.quiet)
    try:
        progress.stage(f"reading {Path(args.pred).name}")
        pred = _read_pred(args.pred, args)
        progress.step()
        truth = None
        inputs = {"pred": _describe_input(args.pred, pred, args)}
        if args.truth:
            progress.stage(f"reading {Path(args.truth).name}")
            truth = _read_truth(args.truth, args)
            inputs["truth"] = _describe_input(args.truth, truth, args)
            progress.step()
        progress.stage("bootstrapping intervals" if args.ci else "computing metrics")
        table = evaluate(pred, truth, ci=args.ci, n_resamples=args.n_resamples, seed=args.seed,
                         **_options(args))
        progress.step()
        progress.stage("writing")
        text = format_evaluation(table, inputs, _format(args), args.ci, args.n_resamples,
                                 args.seed)
        progress.step()
    finally:
        progress.close()
    _emit(text, args.output)


def cmd_compare(args) -> None:
    if args.output:
        _check_output(args.output)
    progress = _Progress(4 if args.truth else 3, args.quiet)
    try:
        frames, inputs = {}, {}
        for role, path in (("a", args.a), ("b", args.b)):
            progress.stage(f"reading {Path(path).name}")
            frames[role] = _read_pred(path, args)
            inputs[role] = _describe_input(path, frames[role], args)
        progress.step()
        truth = None
        if args.truth:
            progress.stage(f"reading {Path(args.truth).name}")
            truth = _read_truth(args.truth, args)
            inputs["truth"] = _describe_input(args.truth, truth, args)
            progress.step()
        progress.stage("paired tests over users")
        table = compare(frames["a"], frames["b"], truth, n_resamples=args.n_resamples,
                        seed=args.seed, **_options(args))
        progress.step()
        text = format_comparison(table, inputs, _format(args), args.alpha, args.n_resamples,
                                 args.seed)
        progress.step()
    finally:
        progress.close()
    _emit(text, args.output)


def cmd_report(args) -> None:
    output = _check_output(args.output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {output}: the report is an HTML file; give a name ending in .html")
    progress = _Progress(1 + (1 if args.truth else 0) + _report_cells(), args.quiet)
    try:
        # Check everything the notebook will need before starting it, so that bad
        # input gets a one-line message here rather than a failed cell there.
        progress.stage(f"checking {Path(args.pred).name}")
        pred = _read_pred(args.pred, args)
        progress.step()
        if args.truth:
            progress.stage(f"checking {Path(args.truth).name}")
            truth = _read_truth(args.truth, args)
            progress.step()
        else:
            truth = None
        parameters = {
            "pred_path": str(Path(args.pred).resolve()),
            "truth_path": str(Path(args.truth).resolve()) if args.truth else None,
            "pred_name": args.pred,
            "truth_name": args.truth,
            "title": args.title,
            "k": list(args.k),
            "metrics": args.metrics,
            "user": args.user_col, "item": args.item_col, "score": args.score_col,
            "label": args.label_col,
            "ties": args.ties, "gain": args.gain, "ideal": args.ideal,
            "denominator": args.denominator, "gauc_weight": args.gauc_weight,
            "ci": args.ci, "n_resamples": args.n_resamples, "seed": args.seed,
        }
        del pred, truth
        progress.stage("running the report notebook")
        render_report(parameters, output, progress=progress, workdir=output.resolve().parent)
        progress.step()
    finally:
        progress.close()
    if not args.quiet:
        print(f"wrote {output} ({output.stat().st_size / 1024:,.0f} KiB)")


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
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1, e.g. 1000")
    return value


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
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 0, e.g. 0")
    return value


def _add_common(parser: argparse.ArgumentParser, *, k_default, n_resamples: int,
                ci_default) -> None:
    parser.add_argument("--truth", metavar="TRUTH",
                        help="file of (user, item, label) rows; without it the labels are read "
                             "from the label column of the scores file")
    parser.add_argument("--k", type=_cutoff, nargs="+", default=k_default, metavar="K",
                        help=f"cut-offs for the @k metrics (default: {' '.join(map(str, k_default))})")
    parser.add_argument("--metrics", nargs="+", choices=METRICS, metavar="METRIC",
                        help=f"metrics to compute, any of {', '.join(METRICS)} (default: all)")
    columns = parser.add_argument_group("column names")
    for role in ("user", "item", "score", "label"):
        columns.add_argument(f"--{role}-col", default=role, metavar="NAME",
                             help=f"column of the {role} (default: {role})")
    conventions = parser.add_argument_group("conventions (the defaults are recmetrics.evaluate's)")
    conventions.add_argument("--ties", choices=TIES, default="average",
                             help="tied scores: expected value over all orders (average) or the "
                                  "bounds (default: average)")
    conventions.add_argument("--gain", choices=GAINS, default="exponential",
                             help="NDCG gain: 2^rel - 1 or rel (default: exponential)")
    conventions.add_argument("--ideal", choices=IDEALS, default="truth",
                             help="NDCG ideal DCG (default: truth, as trec_eval)")
    conventions.add_argument("--denominator", choices=DENOMINATORS, default="relevant",
                             help="AP denominator (default: relevant, as trec_eval)")
    conventions.add_argument("--gauc-weight", choices=GAUC_WEIGHTS, default="impressions",
                             help="GAUC user weights (default: impressions)")
    stats = parser.add_argument_group("statistics")
    if ci_default is not False:
        stats.add_argument("--ci", type=_level, default=ci_default, metavar="LEVEL",
                           help="confidence level of bootstrap intervals over users, e.g. 0.95 "
                                f"(default: {ci_default or 'no intervals'})")
    stats.add_argument("--n-resamples", type=_positive, default=n_resamples, metavar="N",
                       help=f"bootstrap / randomization resamples (default: {n_resamples})")
    stats.add_argument("--seed", type=_seed, default=0, metavar="S",
                       help="random seed of the resampling (default: 0)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Evaluate recommender / ranking model scores from "
                                            "CSV or Parquet files.",
                     epilog="Run 'recmetrics COMMAND --help' for a command's options.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    formats = ("table", "json", "csv")

    ev = commands.add_parser("evaluate", help="print the metric table of one model",
                             description="AUC, GAUC, precision/recall/hit rate@k, MAP@k, MRR and "
                                         "NDCG@k of one file of scores.")
    ev.add_argument("pred", metavar="PRED", help="scores file (.csv or .parquet)")
    _add_common(ev, k_default=[10], n_resamples=1000, ci_default=None)
    ev.add_argument("--format", choices=formats,
                    help="output format (default: from -o's extension, else table)")
    ev.add_argument("-o", "--output", metavar="OUT", help="write to this file instead of stdout")
    ev.set_defaults(run=cmd_evaluate)

    cp = commands.add_parser("compare", help="is model B better than model A?",
                             description="Both models' metrics, B - A, and paired p-values over "
                                         "users.")
    cp.add_argument("a", metavar="A", help="scores of model A (.csv or .parquet)")
    cp.add_argument("b", metavar="B", help="scores of model B (.csv or .parquet)")
    _add_common(cp, k_default=[10], n_resamples=10_000, ci_default=False)
    cp.add_argument("--alpha", type=_level, default=0.05,
                    help="significance level of the verdict column (default: 0.05)")
    cp.add_argument("--format", choices=formats,
                    help="output format (default: from -o's extension, else table)")
    cp.add_argument("-o", "--output", metavar="OUT", help="write to this file instead of stdout")
    cp.set_defaults(run=cmd_compare)

    rp = commands.add_parser("report", help="write a self-contained HTML report of one model",
                             description="Metric table with confidence intervals, ROC curve, "
                                         "per-user distributions and metrics against k, as one "
                                         "HTML file.")
    rp.add_argument("pred", metavar="PRED", help="scores file (.csv or .parquet)")
    _add_common(rp, k_default=[5, 10, 20], n_resamples=1000, ci_default=0.95)
    rp.add_argument("--title", help="title of the report (default: from the file name)")
    rp.add_argument("-o", "--output", metavar="OUT", default="report.html",
                    help="HTML file to write (default: report.html)")
    rp.set_defaults(run=cmd_report)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            args = build_parser().parse_args(argv)
            args.run(args)
    except (UsageError, ValueError) as error:
        message = " ".join(str(error).split())
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0
