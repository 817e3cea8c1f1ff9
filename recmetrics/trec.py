r"""Reading TREC run and qrels files into the frames :func:`recmetrics.evaluate` takes.

A **run** file (one system's rankings) has six fields a line, separated by
white space::

    query  Q0  doc  rank  score  tag

and a **qrels** file (the judgements) four::

    query  iteration  doc  grade

Both are read with every id kept as text (TREC ids are strings: ``"001"``
and ``"1"`` are two documents), and the frames use recmetrics' column names:
``user`` for the query, ``item`` for the document, ``score`` and ``label``.
A malformed line raises ``ValueError`` naming the file and the line number.

Conventions that change the number, spelled out:

* **Order.** trec_eval ignores the ``rank`` field and sorts a query's
  documents by score, descending, breaking ties by document id, descending.
  :func:`recmetrics.evaluate` also ranks by score; by default it averages
  tied scores over their orders (``ties="average"``), and with
  ``ties="trec"`` it uses trec_eval's order, so that its numbers are
  trec_eval's (``gain="linear"`` for ``ndcg_cut``; tested on trec_eval's own
  test collection). :func:`read_trec_run` keeps ``rank`` for reference only.
* **Ids are text.** trec_eval compares ids as strings, so a qrels document
  ``7.0`` does not judge a run's document ``7``. The frames returned carry
  ``attrs["exact_ids"] = True`` (ids exact text); :func:`recmetrics.evaluate`,
  ``evaluate_per_user`` and ``compare`` honour it by refusing, naming both,
  two ids that differ as text but that their id policy reads as one
  (``7.0`` and ``7``), rather than let one judge the other; the command line
  does the same for TREC files. The marker survives filtering, ``assign``,
  ``rename`` and copies.
* **Files.** A path is read as UTF-8 (a byte-order mark skipped; ``\n``,
  ``\r\n`` or ``\r`` line ends), decompressed as its name says through the
  compressions every reader of the kit takes: ``run.gz``, ``qrels.bz2``,
  ``.xz``, ``.zst``, a ``.zip`` of one file.
* **Negative grades.** trec_eval reads a negative grade as "in the pool but
  not judged": neither relevant nor judged non-relevant (it matters for
  bpref and ``judged_only``). :func:`read_trec_qrels` leaves those lines out
  by default (``unjudged="drop"``), so that :func:`recmetrics.evaluate`
  reads them as trec_eval does; it keeps the grade as written in the
  ``grade`` column and gives evaluate the ``label`` column (relevant = grade
  > 0 in both). The judged non-relevant documents of
  :func:`recmetrics.bpref` are the rows with ``grade == 0``.
"""
from __future__ import annotations

import codecs
import contextlib
import io
import os
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from ._frames import EXACT_IDS
from ._output import (_first_line, bom_encoding, open_input, split_suffix, stream_errors,
                      utf8_read_as)
from ._validation import check_option

__all__ = ["read_trec_run", "read_trec_qrels"]

_RUN_FIELDS = ("query", "Q0", "doc", "rank", "score", "tag")
_QRELS_FIELDS = ("query", "iteration", "doc", "grade")


@contextlib.contextmanager
def _text(path, encoding: str | None = None):
    """The file as text: UTF-8, or the UTF-16 or UTF-32 a byte-order mark announces (the mark
    skipped, as the CSV reader does); \\r\\n and \\r line ends read as \\n; decompressed
    as its name says through the kit's one table of compressions (``run.gz``, ``qrels.bz2``,
    ``.xz``, ``.zst``, a ``.zip`` of one file). A text or binary stream is read as it is."""
    if hasattr(path, "read"):
        yield path
        return
    path, compression = Path(path), split_suffix(path)[1]
    with open_input(path, compression) as raw:
        bom = bom_encoding(raw.read(4))
    found = None if bom or encoding is None else utf8_read_as(path, compression, encoding)
    if found is not None:
        char, garbled = found
        raise ValueError(f"{path} is UTF-8 text (it holds {char!r} written as UTF-8), but "
                         f"encoding={encoding!r} would turn {char!r} into {garbled!r} and leave "
                         "such ids matching nothing; read it as UTF-8: leave encoding= out")
    encoding = bom or encoding or "utf-8"
    with open_input(path, compression) as raw, \
            io.TextIOWrapper(raw, encoding=encoding, newline=None) as text:
        yield text


def _read_fields(path, fields: tuple[str, ...], what: str, encoding: str | None = None
                 ) -> tuple[pd.DataFrame, np.ndarray]:
    """Every non-blank line split on white space into ``fields`` (text), with its line number."""
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"encoding={encoding!r}: unknown encoding; use a name such as "
                             "utf-8, latin-1, cp1252 or gbk") from None
    try:
        with _text(path, encoding) as text:
            return _split_fields(path, text, fields, what)
    except FileNotFoundError:
        raise
    except UnicodeDecodeError:
        line = _first_undecodable_line(path, encoding or "utf-8")
        raise ValueError(f"{path} line {line} is not {encoding or 'UTF-8'} text; pass "
                         "encoding= the file's encoding (a byte-order mark is honoured), or "
                         "save the file as UTF-8") from None
    except stream_errors() as error:  # a truncated .gz, a .zip member failing its CRC
        raise ValueError(f"{path} is not a readable {split_suffix(path)[1] or 'TREC'} file "
                         f"({_first_line(error)}); check its format") from None


def _first_undecodable_line(path, encoding: str) -> int:
    """The line of the first byte ``encoding`` cannot decode (only on the error path)."""
    with open_input(Path(path), split_suffix(path)[1]) as raw:
        for number, line in enumerate(raw.read().splitlines(), 1):
            try:
                line.decode(encoding)
            except UnicodeDecodeError:
                return number
    return 1


def _split_fields(path, text, fields: tuple[str, ...], what: str
                  ) -> tuple[pd.DataFrame, np.ndarray]:
    n = len(fields)
    try:
        frame = pd.read_csv(text, sep=r"\s+", header=None, names=range(n + 1), dtype=str,
                            skip_blank_lines=False, engine="c", quoting=3, na_filter=True,
                            keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty; a TREC {what} file has one line per "
                         f"({', '.join(fields)})") from None
    except pd.errors.ParserError as error:  # a line with more than n + 1 fields: find it
        long_line, long_count = _first_long_line(path, n)
        if long_line is None:
            raise ValueError(f"{path}: {error} (a TREC {what} line has {n} fields: "
                             f"{' '.join(fields)})") from None
        raise ValueError(f"{path} line {long_line} has {long_count} field(s), but a TREC {what} line has "
                         f"{n}: {' '.join(fields)}; fix or drop that line") from None
    line = np.arange(1, len(frame) + 1)
    present = frame.notna().to_numpy()
    blank = ~present.any(axis=1)
    frame, line, present = frame[~blank], line[~blank], present[~blank]
    if len(frame) == 0:
        raise ValueError(f"{path} holds no {what} line; a TREC {what} file has one line per "
                         f"({', '.join(fields)})")
    count = present.sum(axis=1)
    bad = count != n
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path} line {line[first]} has {count[first]} field(s), but a TREC "
                         f"{what} line has {n}: {' '.join(fields)}; fix or drop that line")
    frame = frame.iloc[:, :n]
    frame.columns = list(fields)
    return frame.reset_index(drop=True), line


def _first_long_line(path, n: int) -> tuple[int | None, int]:
    """The first line with more than ``n`` fields and its field count (only on the error path)."""
    if hasattr(path, "seek"):
        path.seek(0)
        lines = path.read().splitlines()
    else:
        with _text(path) as text:
            lines = text.read().splitlines()
    for number, text in enumerate(lines, 1):
        count = len(text.split())
        if count > n:
            return number, count
    return None, 0


def _numbers(path, frame: pd.DataFrame, column: str, line: np.ndarray, *, whole: bool
             ) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if whole:
        bad |= values != np.round(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        kind = "a whole number" if whole else "a finite number"
        raise ValueError(f"{path} line {line[first]}: the {column} field is "
                         f"{frame[column].iloc[first]!r}, not {kind}; fix or drop that line")
    return values


def _unique(path, frame: pd.DataFrame, line: np.ndarray) -> None:
    duplicated = frame.duplicated(["query", "doc"]).to_numpy()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        query, doc = frame["query"].iloc[first], frame["doc"].iloc[first]
        earlier = int(np.flatnonzero(((frame["query"] == query) & (frame["doc"] == doc))
                                     .to_numpy())[0])
        raise ValueError(f"{path} line {line[first]} repeats query {query!r}, document {doc!r} "
                         f"(first on line {line[earlier]}); keep one line per (query, document)")


def read_trec_run(path: str | os.PathLike, *, encoding: str | None = None) -> pd.DataFrame:
    """Read a TREC run file (``query Q0 doc rank score tag``) into a frame.

    Parameters
    ----------
    path : str or path-like
        The run file: six fields a line, separated by spaces or tabs. Blank
        lines are skipped. The ``Q0`` field is not checked (trec_eval ignores
        it too). Compressed files (``run.gz``, ``.bz2``, ``.xz``, ``.zst``,
        ``.zip``) are read as their name says.
    encoding : str, optional
        The file's text encoding (``"latin-1"``, ``"gbk"``...); default UTF-8.
        A byte-order mark (UTF-8, UTF-16, UTF-32) wins, as for CSV files.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (query id, text), ``item`` (document id, text),
        ``score`` (float64), ``rank`` (int64, as written) and ``tag`` (text),
        one row per line in file order: ready for
        ``recmetrics.evaluate(run, qrels)``. The ranking is by ``score``;
        ``rank`` is not used (as in trec_eval). ``attrs["exact_ids"]`` is
        True: the ids are exact text, and evaluate refuses two of them that
        its id policy would read as one (``7`` and ``7.0``; see above).

    Raises
    ------
    ValueError
        With the line number, for a line without six fields, a score that is
        not a finite number, a rank that is not a whole number, or a
        (query, document) pair listed twice.

    References
    ----------
    trec_eval, the TREC evaluation program: https://github.com/usnistgov/trec_eval

    Examples
    --------
    >>> import io
    >>> run = read_trec_run(io.StringIO("q1 Q0 d7 1 2.5 sys\\nq1 Q0 d3 2 1.0 sys\\n"))
    >>> run[["user", "item", "score"]].values.tolist()
    [['q1', 'd7', 2.5], ['q1', 'd3', 1.0]]
    """
    frame, line = _read_fields(path, _RUN_FIELDS, "run", encoding)
    score = _numbers(path, frame, "score", line, whole=False)
    rank = _numbers(path, frame, "rank", line, whole=True)
    _unique(path, frame, line)
    run = pd.DataFrame({"user": frame["query"].astype(str), "item": frame["doc"].astype(str),
                        "score": score, "rank": rank.astype(np.int64),
                        "tag": frame["tag"].astype(str)})
    run.attrs[EXACT_IDS] = True
    return run


def read_trec_qrels(path: str | os.PathLike, *, unjudged: Literal["drop", "keep"] = "drop",
                    encoding: str | None = None) -> pd.DataFrame:
    """Read a TREC qrels file (``query iteration doc grade``) into a frame.

    Parameters
    ----------
    path : str or path-like
        The judgements: four fields a line, separated by spaces or tabs; the
        grade is a whole number, possibly negative. Blank lines are skipped;
        the iteration field is not used. Compressed files are read as their
        name says, as in :func:`read_trec_run`.
    unjudged : {"drop", "keep"}, default "drop"
        Lines with a negative grade, which trec_eval reads as "pooled but not
        judged": neither relevant nor judged non-relevant. ``"drop"`` leaves
        them out, so that :func:`recmetrics.evaluate` sees those documents as
        unjudged too (bpref, ``judged_only``) and gives trec_eval's numbers.
        ``"keep"`` keeps them with ``label`` 0, which evaluate would read as
        judged non-relevant.
    encoding : str, optional
        As in :func:`read_trec_run`.

    Returns
    -------
    pandas.DataFrame
        Columns ``user`` (query id, text), ``item`` (document id, text),
        ``label`` (int64: the grade, negatives set to 0) and ``grade`` (int64,
        as written), one row per line in file order. Relevant means grade > 0,
        as in trec_eval. bpref's judged non-relevant documents are
        ``grade == 0``. ``attrs["exact_ids"]`` is True, as in
        :func:`read_trec_run`.

    Raises
    ------
    ValueError
        With the line number, for a line without four fields, a grade that is
        not a whole number, or a (query, document) pair judged twice.

    References
    ----------
    trec_eval, the TREC evaluation program: https://github.com/usnistgov/trec_eval

    Examples
    --------
    >>> import io
    >>> text = "q1 0 d7 2\\nq1 0 d3 0\\nq1 0 d9 -1\\n"
    >>> read_trec_qrels(io.StringIO(text)).values.tolist()
    [['q1', 'd7', 2, 2], ['q1', 'd3', 0, 0]]
    >>> read_trec_qrels(io.StringIO(text), unjudged="keep").values.tolist()
    [['q1', 'd7', 2, 2], ['q1', 'd3', 0, 0], ['q1', 'd9', 0, -1]]
    """
    unjudged = check_option("unjudged", unjudged, ("drop", "keep"))
    frame, line = _read_fields(path, _QRELS_FIELDS, "qrels", encoding)
    grade = _numbers(path, frame, "grade", line, whole=True).astype(np.int64)
    _unique(path, frame, line)
    qrels = pd.DataFrame({"user": frame["query"].astype(str), "item": frame["doc"].astype(str),
                          "label": np.maximum(grade, 0), "grade": grade})
    if unjudged == "drop":
        qrels = qrels[qrels["grade"] >= 0].reset_index(drop=True)
    qrels.attrs[EXACT_IDS] = True
    return qrels
