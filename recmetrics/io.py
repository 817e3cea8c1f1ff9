"""Reading score and truth files, and writing outputs without ever damaging a file.

Reading
-------
:func:`read_scores` reads one CSV or Parquet file of (user, item, ...) rows and
checks it, naming the file and the **line** of the file in every message:

* CSV (``.csv``, ``.tsv``, ``.txt``, each optionally compressed: ``.gz``, ``.bz2``,
  ``.xz``, ``.zst``, ``.zip``) is read with pyarrow's multi-threaded CSV reader.
  User and item ids are read as text, exactly as written (no number parsing:
  ``007`` stays ``007``); scores and labels as float64. Id canonicalisation and
  the joining of files are :func:`recmetrics.evaluate`'s job.
* The separator follows the extension (``,`` for ``.csv``, a tab for ``.tsv``,
  whichever of tab, ``;``, ``|`` and ``,`` the header line holds for ``.txt``) unless
  ``sep`` is given. A file whose only column contains ``;`` or a tab gets a hint.
* The encoding is UTF-8 unless ``encoding`` is given (``"gbk"`` for a Chinese Excel
  export, ``"latin-1"``, ``"utf-16"``...). A byte-order mark is accepted and wins:
  UTF-8, UTF-16 and UTF-32 files with a BOM are read without any option. A file
  that is not valid UTF-8 is refused with the line of the first bad byte and the
  ``--encoding`` to try; a UTF-8 file with non-ASCII text asked to be read in a one-byte
  encoding (latin-1, cp1252) is refused too, its ids would be mojibake matching nothing.
* A ``.zip`` archive must hold exactly one file, the CSV file.
* A row with more (or fewer) fields than the header is an error naming its line
  (an unquoted decimal comma ``0,876`` is the usual cause), never silently cut.
* Line numbers are those of the file as an editor shows them: blank lines and
  quoted values that span lines are counted.
* Parquet (``.parquet``, ``.pq``) is read with pyarrow; columns keep their types, except
  ids stored as BINARY, read as their UTF-8 text.

Every input file (scores, truth, users, history, catalog, item features; CSV, Parquet or
TREC) is described by :data:`INPUT_ROLES` and planned by :func:`plan_inputs` into
:class:`Input` records (each file's columns, separator, encoding and format), which
:func:`read_input` / :func:`read_inputs` read: the command line, the report template and the
provenance record all use them, so no caller has its own suffix rules.

Writing
-------
:func:`plan_output` and :func:`write_output` (from :mod:`recmetrics._output`, the one output
guard) check a target before any computation (its format, that it is none of the run's
inputs of any role, a hard link or a symlink to one included, that it can be written) and
write it atomically: a temporary file beside it, ``fsync``-ed, renamed into place; a failure
leaves the target as it was. ``-`` means standard output.

Every problem is a :class:`FileProblem` (a ``ValueError``) whose message names the
file and what to do; the command line prints it as one line.
"""
from __future__ import annotations

import codecs
import csv
import glob
import io as _io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import _ids
from ._threads import in_background
from ._output import (COMPRESSIONS, OUTPUT_FORMATS, FileProblem, Output, _Counting,
                      _first_line, atomic_file, bom_encoding, open_input, plan_output,
                      refuse_inputs, single_byte, split_suffix, stream_errors,
                      utf8_read_as, write_output)
from ._provenance import sha256
from ._validation import (check_unique_pairs, id_column, likely_column, missing_columns,
                          numeric_column)

__all__ = ["FileProblem", "read_scores", "parquet_dataset", "input_kind", "Output", "plan_output", "write_output",
           "refuse_inputs", "atomic_file",
           "CSV_SUFFIXES", "PARQUET_SUFFIXES", "OUTPUT_FORMATS", "INPUT_ROLES", "INPUT_FORMATS",
           "TREC_SUFFIXES", "Input", "plan_inputs", "read_input", "read_inputs", "input_columns",
           "check_pairs"]


# --------------------------------------------------------------------------- file kinds

_COMPRESSIONS = COMPRESSIONS
_TEXT_SEPARATORS = {".csv": ",", ".tsv": "\t", ".txt": None}
CSV_SUFFIXES = tuple(f"{base}{comp}" for base in _TEXT_SEPARATORS for comp in ("", *_COMPRESSIONS))
PARQUET_SUFFIXES = (".parquet", ".pq")
_SEP_NAMES = {",": "a comma", ";": "a semicolon", "\t": "a tab", "|": "a bar"}


def input_kind(path) -> tuple[str, str | None, str | None]:
    """(kind, compression, default separator) of an input file, from its name.

    ``kind`` is "csv" or "parquet"; the separator is None for ``.txt`` (found from
    the header line) and for Parquet.
    """
    path = Path(path)
    base, compression = split_suffix(path)
    if base in _TEXT_SEPARATORS:
        return "csv", compression, _TEXT_SEPARATORS[base]
    if base in PARQUET_SUFFIXES and compression is None:
        return "parquet", None, None
    suffix = "".join(path.suffixes) or "no extension"
    raise FileProblem(f"{path}: unknown file type ({suffix}); give a .csv, .tsv, .txt (optionally "
                      "compressed, e.g. .csv.gz) or .parquet file (the extension tells recmetrics "
                      "how to read it); a TREC run or qrels file is read as .run, .qrels or .trec, "
                      "or with --format-in trec (optionally compressed, e.g. .run.gz; "
                      "rm.read_trec_run / rm.read_trec_qrels in Python)")


# --------------------------------------------------------------------------- reading text


def _detect_encoding(head: bytes, encoding: str | None) -> str:
    """The encoding to read with: a byte-order mark wins, then ``encoding``, then UTF-8."""
    return bom_encoding(head) or (codecs.lookup(encoding).name if encoding else "utf-8")


def _refuse_utf8_read_as(path: Path, compression, encoding: str) -> None:
    """Refuse a file asked to be read as a single-byte encoding that is valid UTF-8 text
    (:func:`recmetrics._output.utf8_read_as`)."""
    found = utf8_read_as(path, compression, encoding)
    if found is not None:
        char, garbled = found
        raise FileProblem(f"{path} is UTF-8 text (it holds {char!r} written as UTF-8), but it "
                          f"was to be read as {encoding}, which would turn {char!r} into "
                          f"{garbled!r} and leave such ids matching nothing; read this file as "
                          "UTF-8 (--encoding applies to every file unless --pred-encoding or "
                          "--truth-encoding gives one file its own)")


def _check_encoding_name(encoding: str | None) -> None:
    if encoding is None:
        return
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise FileProblem(f"--encoding {encoding}: unknown encoding; use a name such as utf-8, "
                          "gbk, gb18030, big5, shift_jis, latin-1, cp1252 or utf-16") from None


def _encoding_advice(given: str | None) -> str:
    if given is None or codecs.lookup(given).name == "utf-8":
        return ("it is not UTF-8; pass --encoding with the file's encoding, e.g. --encoding gbk "
                "(Excel on a Chinese system), --encoding latin-1 or cp1252 (Western Europe), "
                "--encoding utf-16 (\"Unicode text\"), or save it as UTF-8")
    return f"it is not {given} text either; check --encoding (or save the file as UTF-8)"


def _first_bad_byte(path: Path, compression, encoding: str) -> tuple[int, bytes] | None:
    """(line, the bad bytes) of the first byte ``encoding`` cannot decode, or None."""
    factory = codecs.getincrementaldecoder(encoding)
    decoder = factory()
    line, after_cr = 1, False
    with open_input(path, compression) as stream:
        while True:
            block = stream.read(1 << 20)
            final = not block
            state = decoder.getstate()
            try:
                text = decoder.decode(block, final=final)
            except UnicodeDecodeError as error:
                before = factory()
                before.setstate(state)
                line += _line_ends(before.decode(block[:error.start], final=False), after_cr)
                return line, block[error.start:error.end]
            line += _line_ends(text, after_cr)
            after_cr = text.endswith("\r") if text else after_cr
            if final:
                return None


def _line_ends(text: str, after_cr: bool = False) -> int:
    """Line ends in ``text``: \\n, \\r\\n and \\r alone (old Mac files) count one each; a
    \\n that follows a \\r ending the text before (``after_cr``) was counted there."""
    return text.count("\n") + text.count("\r") - text.count("\r\n") \
        - (after_cr and text.startswith("\n"))


def _text_lines(path: Path, compression, encoding: str):
    """The decoded file as a text stream with universal newlines left alone (for csv)."""
    return _io.TextIOWrapper(open_input(path, compression), encoding=encoding, newline="",
                             errors="replace")


def _physical_rows(path: Path, compression, encoding: str, sep: str):
    """(first line, fields) of each non-blank row as the csv module reads it, header first."""
    with _text_lines(path, compression, encoding) as text:
        reader = csv.reader(text, delimiter=sep, quotechar='"', doublequote=True, strict=False)
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except (StopIteration, csv.Error):
                return
            if fields:
                yield start, fields


@dataclass
class _CsvSource:
    path: Path
    compression: str | None
    encoding: str
    sep: str
    header: list[str]

    def line_of_row(self, row: int) -> int | None:
        """The line on which data row ``row`` (0-based) starts, counted as an editor counts."""
        for index, (line, _) in enumerate(_physical_rows(self.path, self.compression,
                                                         self.encoding, self.sep)):
            if index == row + 1:
                return line
        return None

    def where(self, row: int) -> str:
        line = self.line_of_row(row)
        return f"line {line}" if line is not None else f"data row {row + 1}"

    def first_ragged_row(self) -> tuple[int, list[str]] | None:
        width = len(self.header)
        for index, (line, fields) in enumerate(_physical_rows(self.path, self.compression,
                                                              self.encoding, self.sep)):
            if index and len(fields) != width:
                return line, fields
        return None


def _sniff_separator(header_line: str) -> str:
    counts = {sep: header_line.count(sep) for sep in ("\t", ";", "|", ",")}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ","


def _read_header(path: Path, compression, encoding: str | None, sep: str | None) -> _CsvSource:
    """Decode the first line, find the encoding and separator, and parse the column names."""
    with open_input(path, compression) as stream:
        head = stream.read(1 << 16)
        while head and b"\n" not in head.lstrip(b"\r\n"):
            more = stream.read(1 << 16)
            if not more:
                break
            head += more
    used = _detect_encoding(head, encoding)
    text = codecs.getincrementaldecoder(used)(errors="strict")
    try:
        decoded = text.decode(head, final=False)
    except UnicodeDecodeError as error:
        line = _line_ends(head[:error.start].decode("latin-1")) + 1
        bad = head[error.start:error.end].hex(" ")
        raise FileProblem(f"{path}: byte {bad} in line {line} cannot be read as "
                          f"{encoding or 'UTF-8'}; {_encoding_advice(encoding)}") from None
    except UnicodeError as error:  # "UTF-16 stream does not start with BOM", say
        raise FileProblem(f"{path} cannot be read as {encoding or 'UTF-8'} ({error}); "
                          f"{_encoding_advice(encoding)}") from None
    if encoding is not None and used == codecs.lookup(encoding).name and single_byte(used):
        _refuse_utf8_read_as(path, compression, encoding)
    decoded = decoded.lstrip("\ufeff")
    lines = [ln for ln in decoded.splitlines() if ln.strip()]
    if not lines:
        raise FileProblem(f"{path} is empty; a CSV file needs a header line naming its columns")
    if sep is None:
        sep = _sniff_separator(lines[0])
    first = next(csv.reader(_io.StringIO(decoded.lstrip("\r\n"), newline=""), delimiter=sep,
                           quotechar='"'),
                 [])
    return _CsvSource(path, compression, used, sep, [c for c in first])


def _arrow_csv(source: _CsvSource, wanted: list[str], types: dict, report=None):
    """Read ``wanted`` columns with pyarrow; returns (table, first invalid row text or None,
    the error or None, the SHA-256 of the file's bytes as read or None).

    An uncompressed file is hashed while pyarrow reads it (the digest then is of
    exactly the bytes evaluated, and the file is not read a second time for it).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    ragged: list = []

    def invalid_row(row):
        ragged.append(row.text)
        return "error"

    if source.encoding in ("utf-8", "utf-8-sig"):
        read_options = pacsv.ReadOptions(block_size=1 << 22)
    else:
        read_options = pacsv.ReadOptions(block_size=1 << 22, encoding=source.encoding)
    convert_options = pacsv.ConvertOptions(
        include_columns=wanted, column_types={c: types[c] for c in wanted},
        strings_can_be_null=True, quoted_strings_can_be_null=True, null_values=[""],
        true_values=[], false_values=[])
    # First without newlines inside quoted values, which lets pyarrow cut the file into
    # blocks at any line end (about 1.5x faster). A quoted newline that such a cut splits
    # turns a row of n >= 2 fields into two rows of k and n - k + 1 fields, which cannot
    # both have n: the read fails rather than misreads, and is made again allowing them,
    # as any failed read is.
    for newlines_in_values in (False, True):
        ragged.clear()
        parse_options = pacsv.ParseOptions(delimiter=source.sep,
                                           newlines_in_values=newlines_in_values,
                                           invalid_row_handler=invalid_row)
        counting: list[_Counting] = []
        try:
            with open_input(source.path, source.compression, report, counting) as stream:
                table = pacsv.read_csv(stream, read_options=read_options,
                                       parse_options=parse_options,
                                       convert_options=convert_options)
                # every byte passed once, in order, to the end: the digest is the file's
                layer = counting[0]
                whole = source.compression is None and stream.read(1) == b"" and \
                    layer.hashed == os.fstat(layer._raw.fileno()).st_size
            return table, None, None, layer.digest.hexdigest() if whole else None
        except (pa.ArrowInvalid, UnicodeError) as error:
            failed = error
    return None, ragged[0] if ragged else None, failed, None


def _read_csv(path: Path, compression, columns: dict[str, str], numbers, grades, texts=(), *,
              sep, encoding, hints, report) -> tuple[pd.DataFrame, Callable[[int], str]]:
    import pyarrow as pa

    source = _read_header(path, compression, encoding, sep)
    present = source.header
    _refuse_repeated_names(path, present, columns)
    _check_columns(path, present, columns, hints, sep=source.sep, given_sep=sep)
    wanted = list(dict.fromkeys(columns.values()))
    id_columns = {columns[r] for r in ("user", "item") if r in columns}
    text_columns = id_columns | {columns[r] for r in texts if r in columns}
    types = {c: (pa.string() if c in text_columns else pa.float64()) for c in wanted}
    table, ragged, error, digest = _arrow_csv(source, wanted, types, report)
    if table is None:
        frame = _read_as_text(source, error, ragged, encoding, types, columns, numbers, grades)
    else:
        frame = _ids.arrow_frame(table, id_columns)
    frame = frame[wanted]
    _refuse_line_breaks(source, frame, [c for c in wanted if c in text_columns])
    for name in text_columns - id_columns:  # as written: an empty value is the empty string
        frame[name] = frame[name].fillna("").astype("str")
    if digest is not None:
        frame.attrs["sha256"] = digest
    return frame, source.where


def _refuse_repeated_names(path: Path, present: list[str], columns: dict[str, str]) -> None:
    """Refuse a header (CSV) or schema (Parquet) naming a column that is read twice."""
    seen: dict[str, int] = {}
    for position, name in enumerate(present):
        if name in seen and name in columns.values():
            raise FileProblem(f"{path} names column {name!r} twice (columns {seen[name] + 1} and "
                              f"{position + 1}); rename one of them")
        seen.setdefault(name, position)


def _refuse_line_breaks(source: _CsvSource, frame: pd.DataFrame, names: list[str]) -> None:
    """Refuse an id or text value whose later lines look like rows of the file (as many
    separators as the header): a quote opened and not closed where it should be, which
    swallows the rows up to the next quote into one value. A quoted value with a line
    break and no such line is legal CSV and kept."""
    width = len(source.header)

    def swallowed(value: str) -> bool:
        return any(line.count(source.sep) >= width - 1 for line in value.splitlines()[1:])

    for name in names:
        values = frame[name]
        distinct = values.cat.categories if isinstance(values.dtype, pd.CategoricalDtype) \
            else values.dropna()
        if not len(distinct):
            continue
        broken = pd.Series(distinct).astype("str").str.contains("[\r\n]", regex=True)
        if broken.any():
            broken &= pd.Series(distinct).astype("str").map(swallowed).astype(bool)
        if not broken.any():
            continue
        value = str(pd.Series(distinct)[broken.to_numpy()].iloc[0])
        row = int(np.flatnonzero((values.astype("str") == value).to_numpy())[0])
        spans = len(value.splitlines()) or 1
        shown = " ".join(value.split())
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise FileProblem(f"{source.path} {source.where(row)}: the {name} value {shown!r} runs "
                          f"over {spans} lines, so {spans - 1} row(s) after it were read into it: "
                          "a quote (\") opened there is not closed; close the quote, or remove "
                          "the line break from the value")


def _read_as_text(source: _CsvSource, error, ragged, encoding, types, columns, numbers,
                  grades) -> pd.DataFrame:
    """After a failed typed read: the columns read as text when their values still parse
    (numbers pandas accepts, such as ' 1e-3 ', or true/false labels); otherwise a
    FileProblem naming the line."""
    import pyarrow as pa

    path = source.path
    text = str(error)
    if ragged is not None or "Expected" in text and "columns, got" in text:
        found = source.first_ragged_row()
        if found is not None:
            line, fields = found
            width = len(source.header)
            if any("\n" in f or "\r" in f for f in fields):
                raise FileProblem(f"{path} line {line}: a quote (\") opened on this line is not "
                                  "closed, so the lines after it were read into one value up to "
                                  "the next quote or the end of the file; close the quote")
            shown = source.sep.join(fields)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            sep_name = _SEP_NAMES.get(source.sep, repr(source.sep))
            if len(fields) > width:
                advice = (f"a decimal comma or an unquoted {sep_name[2:]} inside a value? quote "
                          "that value or fix the row" if source.sep == "," else
                          f"an unquoted {sep_name[2:]} inside a value? quote it or fix the row")
                raise FileProblem(f"{path} line {line} has {len(fields)} fields but the header "
                                  f"names {width} ({shown!r}); {advice}")
            raise FileProblem(f"{path} line {line} has {len(fields)} field(s) but the header "
                              f"names {width} ({shown!r}); fill in the missing values or drop "
                              "the row")
    if isinstance(error, UnicodeError) or "invalid UTF8" in text or "UTF8" in text:
        bad = _first_bad_byte(path, source.compression, source.encoding)
        where = f"byte {bad[1].hex(' ')} in line {bad[0]}" if bad else "some bytes"
        raise FileProblem(f"{path}: {where} cannot be read as {encoding or 'UTF-8'}; "
                          f"{_encoding_advice(encoding)}") from None
    if "conversion error" in text:
        # a value pyarrow cannot parse as a number: read those columns as text and let the
        # shared check say which value, on which line (it also accepts what pandas accepts)
        strings = {c: pa.string() for c in types}
        table, _, second, _ = _arrow_csv(source, list(types), strings)
        if table is not None:
            frame = _ids.arrow_frame(table)
            for role in numbers + grades:
                column = columns[role]
                numeric_column(str(path), frame, column, grades=role in grades,
                               where=source.where)
            return frame
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    raise FileProblem(f"{path} is not a readable CSV file ({first}); check its format") from None


def _check_columns(path: Path, present: list[str], columns: dict[str, str], hints: dict,
                   *, sep: str | None = None, given_sep: str | None = None) -> None:
    if all(column in present for column in columns.values()):
        return
    if sep is not None and len(present) == 1:
        other = next((s for s in ("\t", ";", "|", ",") if s != sep and s in present[0]), None)
        if other is not None:
            flag = "\\t" if other == "\t" else other
            raise FileProblem(f"{path} has one column only, {present[0]!r}, which contains "
                              f"{_SEP_NAMES[other]}: the file is separated by "
                              f"{_SEP_NAMES[other][2:]}s, not {_SEP_NAMES.get(sep, repr(sep))[2:]}s;"
                              f" pass --sep '{flag}'")
    missing = missing_columns(present, columns)
    if missing:
        have = ", ".join(repr(str(c)) for c in present) or "none"
        wanted = ", ".join(repr(column) for _, column, _ in missing)
        flags = [f"--{role}-col {guess}" for role, _, guess in missing if guess]
        if any(role == "score" and not guess for role, _, guess in missing):
            rank = likely_column("rank", present, set(columns.values()))
            if rank is not None:  # a top-k list written with ranks
                flags.append(f"--rank-col {rank}")
                missing = [m for m in missing if m[0] != "score"]
        unknown = [hints.get(role, f"pass --{role}-col NAME") for role, _, guess in missing
                   if not guess]
        advice = "; ".join(([f"pass {' '.join(flags)}"] if flags else []) + unknown)
        raise FileProblem(f"{path} has no column {wanted} (its columns: {have}); rename the "
                          f"column(s) or {advice}")


def _present_columns(path: Path, kind: str, compression, sep, encoding) -> list[str]:
    """The column names of a file, from its header (CSV) or schema (Parquet)."""
    if kind == "csv":
        try:
            return list(_read_header(path, compression, encoding, sep).header)
        except (OSError, ValueError):
            return []  # the full read says what is wrong
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (pa.ArrowException, OSError):
        return []


def _read_parquet(path: Path, columns: dict[str, str], hints, report, texts=()):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as error:
        raise FileProblem(f"{path} is not a readable Parquet file ({_first_line(error)}); check "
                          "its format") from None
    _refuse_repeated_names(path, list(schema.names), columns)
    _check_columns(path, list(schema.names), columns, hints)
    wanted = list(dict.fromkeys(columns.values()))
    text_ids = [columns[role] for role in ("user", "item") if role in columns
                and schema.field(columns[role]).type in (pa.string(), pa.large_string())]
    try:
        table = pq.read_table(path, columns=wanted,
                              read_dictionary=_dictionary_encoded(path, text_ids))
    except (pa.ArrowException, OSError) as error:
        raise FileProblem(f"{path} is not a readable Parquet file ({_first_line(error)}); check "
                          "its format") from None
    if report is not None:
        report(path.stat().st_size)
    ids = {columns[r] for r in ("user", "item") if r in columns}
    table = _binary_as_text(path, table, [columns[r] for r in ("user", "item", *texts)
                                          if r in columns])
    return _ids.arrow_frame(table, ids)[wanted], (lambda row: f"row {row + 1}")


def _is_binary(kind) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
                or pa.types.is_fixed_size_binary(kind))


def _binary_as_text(path: Path, table, names: list[str]):
    """Id columns stored as BINARY (bytes; Parquet writers without a UTF-8 annotation) read
    as the text they hold, so that b"u1" meets the id u1 of another file; bytes that are not
    UTF-8 text are refused (they could match nothing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name in names:
        column = table.column(name)
        if not _is_binary(column.type):
            continue
        if pa.types.is_dictionary(column.type):
            column = pc.cast(column, column.type.value_type)
        try:
            text = pc.cast(column, pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise FileProblem(f"{path}: column {name!r} holds values stored as bytes that are "
                              "not UTF-8 text, which match no id or value of another file; store "
                              "them as strings (UTF-8) or integers") from None
        table = table.set_column(table.schema.get_field_index(name), name, text)
    return table


def _dictionary_encoded(path: Path, names: list[str]) -> list[str]:
    """The columns a Parquet file holds as dictionary pages throughout, read best as they
    are: no string per row (a column of 100 distinct ids reads about 7x faster), and each
    row group's dictionary is coded once instead of every row.

    A writer falls back to plain pages when a dictionary grows too big (100,000 distinct ids
    a row group, say); reading those as a dictionary would hash every row in Arrow, slower
    than coding the strings here. The metadata does not say which pages fell back, but
    indices take at most 4 bytes a value uncompressed, plain strings more: that tells them
    apart (the dictionary page itself counted at twice its compressed size). Either way the
    ids read are the same; only the time differs.
    """
    if not names:
        return []
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    paths = [metadata.schema.column(j).path for j in range(metadata.num_columns)]
    kept = []
    for name in names:
        if name not in paths:
            continue
        j = paths.index(name)
        chunks = [metadata.row_group(g).column(j) for g in range(metadata.num_row_groups)]
        if all(c.has_dictionary_page and c.total_uncompressed_size <= 4 * c.num_values + 2 * (
                c.data_page_offset - c.dictionary_page_offset) for c in chunks):
            kept.append(name)
    return kept


def parquet_dataset(path, *, columns: dict[str, str], hints: dict[str, str] | None = None
                    ) -> list[str]:
    """The Parquet files of a dataset given as one file, a directory or a glob, for Dask.

    A directory means every ``.parquet`` / ``.pq`` file under it; a glob (``*``, ``?``,
    ``[``) its matching Parquet files. As Spark, Hive and pyarrow do, a file is skipped when
    a folder or file name below the directory (or below the glob's fixed part) starts with
    ``_`` or ``.``: Spark's uncommitted ``_temporary/`` files, ``_SUCCESS``, ``.crc``.
    The files are not read here, only the first one's schema, to check that the
    columns are there (as :func:`read_scores` does).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = os.fspath(path)
    where = Path(text)
    base = None         # the folder below which '_' and '.' names are skipped
    if any(c in text for c in "*?["):
        found = sorted(glob.glob(text, recursive=True))
        what = "matches no file" if not found else "matches no Parquet file (.parquet, .pq)"
        parts = Path(text).parts
        fixed = next(i for i, part in enumerate(parts) if any(c in part for c in "*?["))
        base = str(Path(*parts[:fixed])) if fixed else "."
    elif where.is_dir():
        found = sorted(str(f) for f in where.rglob("*") if f.is_file())
        what = "is a directory without Parquet files (.parquet, .pq)"
        base = text
    elif where.is_file():
        found = [text]
        what = "is not a Parquet file (.parquet, .pq): the Dask engine reads Parquet only"
    else:
        raise FileProblem(f"{text}: no such file or directory; give a Parquet file, a directory "
                          "of Parquet files or a glob such as 'logs/*.parquet'")
    if base is not None:  # skipped as Spark, Hive and pyarrow skip them: _temporary/, .crc
        hidden = [f for f in found if _hidden(f, base)]
        found = [f for f in found if not _hidden(f, base)]
        if hidden and not any(Path(f).suffix.lower() in PARQUET_SUFFIXES for f in found):
            raise FileProblem(
                f"{text} holds only files whose path starts with '_' or '.' below it (such as "
                f"{os.path.relpath(hidden[0], base)}): unfinished or hidden files, such as "
                "Spark's _temporary/, which are skipped; wait for the job that writes them to "
                "finish, or give the finished Parquet files")
    files = [f for f in found if Path(f).suffix.lower() in PARQUET_SUFFIXES]
    if not files:
        raise FileProblem(f"{text} {what}; write the data as Parquet (e.g. "
                          "pandas.DataFrame.to_parquet) or use the default engine for CSV")
    try:
        schema = pq.read_schema(files[0])
    except (pa.ArrowException, OSError) as error:
        raise FileProblem(f"{files[0]} is not a readable Parquet file ({_first_line(error)}); "
                          "check its format") from None
    _refuse_repeated_names(Path(files[0]), list(schema.names), columns)
    _check_columns(Path(files[0]), list(schema.names), columns, hints or {})
    for role in ("user", "item"):
        if role in columns and _is_binary(schema.field(columns[role]).type):
            raise FileProblem(f"{files[0]}: column {columns[role]!r} holds ids stored as bytes "
                              "(BINARY), which the Dask and Spark engines would compare as "
                              "bytes, matching no text id; store the ids as strings or "
                              "integers, or use the default engine, which reads them as text")
    return files


def _hidden(path: str, base: str) -> bool:
    """Whether a component of ``path`` below ``base`` starts with '_' or '.' (_SUCCESS, .crc)."""
    return any(part.startswith(("_", ".")) for part in Path(os.path.relpath(path, base)).parts)


def read_scores(path, *, columns: dict[str, str], numbers: tuple[str, ...] = (),
                grades: tuple[str, ...] = (), optional: tuple[str, ...] = (),
                texts: tuple[str, ...] = (), hints: dict[str, str] | None = None,
                sep: str | None = None, encoding: str | None = None,
                progress: Callable[[int, int], None] | None = None,
                unique: str | None = None, pairs: bool = True) -> pd.DataFrame:
    """Read a CSV or Parquet file of (user, item, ...) rows and check it, naming file and line.

    Parameters
    ----------
    path : str or Path
        ``.csv`` / ``.tsv`` / ``.txt`` (optionally compressed) or ``.parquet`` / ``.pq``.
    columns : dict
        Role -> column name, e.g. ``{"user": "user", "item": "item", "score": "score"}``.
        The roles ``user`` and ``item`` are ids: read as text from CSV, kept as stored in
        Parquet. The other roles are read as float64.
    numbers : tuple of str
        Roles that must hold numbers without NaN (scores; infinities are allowed).
    grades : tuple of str
        Roles that must hold finite numbers >= 0 (relevance labels; true/false are 1/0).
    optional : tuple of str
        Roles whose column may be absent: the frame then lacks it (a truth file of
        positives only has no label column).
    texts : tuple of str
        Roles read as text, kept as written (attributes such as a country, for slices): from
        CSV an empty value is the empty string; Parquet keeps its types.
    hints : dict, optional
        Role -> how to point at another column (default ``pass --<role>-col NAME``).
    sep : str, optional
        CSV field separator; default from the extension (see the module docstring).
    encoding : str, optional
        Text encoding of a CSV file; default UTF-8 (a byte-order mark always wins).
    progress : callable, optional
        Called as ``progress(bytes_read, file_size)`` while the file is read.
    unique : str, optional
        The id role (``"user"``, ``"item"``) of a file of one row per id (user attributes,
        item features): a repeated id is refused naming its line. Without it, a file with
        both ids holds one row per (user, item).
    pairs : bool, default True
        Check that one row per (user, item) here, naming the line of a repeated pair. False
        leaves it to a join that checks them anyway (``recmetrics.evaluate`` does, in the
        sort that joins scores and truth), after which :func:`check_pairs` names the line.

    Returns
    -------
    pandas.DataFrame
        Only the requested columns, in the order given. Text id columns come back as
        pandas Categorical (each distinct id stored once, in order of first appearance).

    Raises
    ------
    FileProblem
        A ``ValueError`` with a one-line message naming the file, the line or column, and
        what to do.

    Examples
    --------
    >>> import recmetrics as rm
    >>> frame = read_scores(rm.DATA_DIR / "sample_model_a.csv",
    ...                     columns={"user": "user", "item": "item", "score": "score"},
    ...                     numbers=("score",))
    >>> len(frame), frame["user"].iloc[0]
    (27470, 'u0398')
    """
    path = Path(path)
    hints = hints or {}
    kind, compression, default_sep = input_kind(path)
    if not path.exists():
        raise FileProblem(f"{path}: no such file; check the path")
    if path.is_dir():
        raise FileProblem(f"{path} is a folder; give a .csv or .parquet file")
    if not os.access(path, os.R_OK):
        raise FileProblem(f"{path}: permission denied; check who may read it")
    if sep is not None and (len(sep) != 1 or sep in "\"\r\n"):
        raise FileProblem(f"--sep {sep!r}: give one character such as ',' ';' '|' or '\\t'")
    _check_encoding_name(encoding)
    size = path.stat().st_size
    report = None
    if progress is not None:
        done = [0]

        def report(n):
            done[0] += n
            progress(min(done[0], size), size)

    if size == 0:
        raise FileProblem(f"{path} is empty; a CSV file needs a header line naming its columns, "
                          f"e.g. {','.join(columns.values())}" if kind == "csv" else
                          f"{path} is empty; it is not a readable Parquet file")
    if optional:
        present = _present_columns(path, kind, compression, sep if sep is not None else
                                   default_sep, encoding)
        absent = {role for role in optional if columns.get(role) not in present}
        columns = {role: column for role, column in columns.items() if role not in absent}
        numbers = tuple(role for role in numbers if role not in absent)
        grades = tuple(role for role in grades if role not in absent)
    hashing = None
    if kind == "csv":
        try:
            try:
                frame, where = _read_csv(path, compression, columns, numbers, grades, texts,
                                         sep=sep if sep is not None else default_sep,
                                         encoding=encoding, hints=hints, report=report)
            except FileProblem:
                raise
            except ValueError as error:  # a value check while explaining a failed read
                raise FileProblem(str(error)) from None
        except stream_errors() as error:  # a truncated .gz, a .zip member failing its CRC
            raise FileProblem(f"{path} is not a readable CSV file ({_first_line(error)}); check "
                              "its format") from None
    else:  # the file hashed for the provenance record in a thread while it is read and checked
        hashing = in_background(sha256, path)
        frame, where = _read_parquet(path, columns, hints, report, texts)
    if len(frame) == 0:
        raise FileProblem(f"{path} has no data rows; it needs at least one row of "
                          f"{', '.join(dict.fromkeys(columns.values()))}")
    digest = frame.attrs.get("sha256")
    try:
        checked = {}  # the columns replaced, put in one frame without copying the others
        for role in ("user", "item"):
            if role in columns:
                id_column(str(path), frame, columns[role], where=where)
                checked[columns[role]] = _ids.distinct_ids(frame[columns[role]])
        for role in numbers + grades:
            checked[columns[role]] = numeric_column(str(path), frame, columns[role],
                                                    grades=role in grades, where=where)
        frame = pd.DataFrame({**{name: frame[name] for name in frame.columns}, **checked},
                             copy=False)
        if unique is not None:
            _check_unique(path, frame, columns[unique], unique, where)
        elif pairs and "user" in columns and "item" in columns:
            check_unique_pairs(str(path), frame, columns["user"], columns["item"], where=where)
    except FileProblem:
        raise
    except ValueError as error:
        raise FileProblem(str(error)) from None
    _release_arrow_memory()
    if hashing is not None:
        digest = hashing.result()
    if digest is not None:  # the SHA-256 of the bytes read, for the provenance record
        frame.attrs["sha256"] = digest
    return frame


def _check_unique(path: Path, frame: pd.DataFrame, column: str, role: str, where) -> None:
    """One row per id in a file of attributes (users, item features)."""
    repeated = frame[column].duplicated().to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        value = frame[column].iloc[row]
        first = int(np.flatnonzero((frame[column] == value).to_numpy())[0])
        raise FileProblem(f"{path} {where(row)}: {role} {str(value)!r} has a row already (on "
                          f"{where(first)}); give each {role} one row")


def _release_arrow_memory() -> None:
    """Hand the memory of the tables just read back to the system now: Arrow's allocator
    keeps freed memory for a while, and the ranking that follows would add to it."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


# --------------------------------------------------------------------------- the table of inputs
#
# Every file the kit reads is an input of one role. INPUT_ROLES says what each role feeds and
# which columns it reads; INPUT_FORMATS which file names are read how. plan_inputs turns the
# files and options of a run into Input records (every per-file option of every file), and
# read_input / read_inputs read them. The command line, the report and the provenance record
# all go through these: a role or an option is added here, once.


@dataclass(frozen=True)
class InputRole:
    """One kind of input file: what it feeds and which of its columns are read, and how."""

    name: str               # the role, as Input.role names it
    keyword: str            # the argument of recmetrics.evaluate / compare it feeds
    option: str             # how the command line gives the file
    ids: tuple[str, ...]    # the id columns read ("user", "item"): as text from CSV
    rest: str               # the other columns: "scores" (score or rank, and the label when
    #                         there is no truth file), "label" (may be absent: positives only),
    #                         "text" / "numbers" (every other column), "" (none)
    trec: str | None        # what a TREC file of this role is ("run", "qrels"); None: not TREC
    encoding: str | None    # the option that gives this role's files their own encoding


INPUT_ROLES: dict[str, InputRole] = {r.name: r for r in (
    InputRole("scores", "pred", "PRED", ("user", "item"), "scores", "run", "pred_encoding"),
    InputRole("truth", "truth", "--truth", ("user", "item"), "label", "qrels", "truth_encoding"),
    InputRole("users", "users", "--users", ("user",), "text", None, None),
    InputRole("history", "history", "--history", ("user", "item"), "", None, None),
    InputRole("catalog", "catalog", "--catalog", ("item",), "", None, None),
    InputRole("item_features", "item_features", "--item-features", ("item",), "numbers", None,
              None),
)}

#: Input formats and the file name endings that select them (``format_in="auto"``).
#: TREC files, as CSV files, may be compressed (run.gz): one table of compressions for both.
TREC_SUFFIXES = (".run", ".qrels", ".trec")
INPUT_FORMATS: dict[str, tuple[str, ...]] = {
    "csv": CSV_SUFFIXES, "parquet": PARQUET_SUFFIXES,
    "trec": tuple(f"{base}{comp}" for base in TREC_SUFFIXES for comp in ("", *COMPRESSIONS))}

_LABEL_HINT = "pass --label-col NAME, or give the labels in a separate file with --truth FILE"


@dataclass(frozen=True)
class Input:
    """One file to read, with every option that changes what is read from it.

    Plain values only: :meth:`as_dict` is what the report receives as a parameter and what
    the provenance record lists under ``read``; ``read_input(Input(**record))`` reads the
    file again the same way.
    """

    role: str                       # a key of INPUT_ROLES
    path: str
    format: str                     # "csv", "parquet" or "trec"
    columns: dict[str, str]         # column role (user, item, score or rank, label) -> name
    sep: str | None = None          # CSV field separator (None: from the name, or sniffed)
    encoding: str | None = None     # CSV text encoding (None: UTF-8; a byte-order mark wins)
    text: tuple[str, ...] = ()      # more columns read as text (--by columns of a scores file)
    model: str | None = None        # the model's name (several scores files)

    def as_dict(self) -> dict:
        return {"role": self.role, "path": self.path, "format": self.format,
                "columns": dict(self.columns), "sep": self.sep, "encoding": self.encoding,
                "text": list(self.text), "model": self.model}

    @classmethod
    def of(cls, spec) -> Input:
        if isinstance(spec, Input):
            return spec
        return cls(**{**spec, "text": tuple(spec.get("text") or ())})


def _input_format(path, role: InputRole, format_in: str, trec_scores: bool) -> str:
    if role.trec is not None and (format_in == "trec" or trec_scores and role.trec == "qrels"
                                  or split_suffix(path)[0] in TREC_SUFFIXES):
        if split_suffix(path)[0] in PARQUET_SUFFIXES:
            raise FileProblem(f"{path} is a Parquet file, not a TREC {role.trec} file (text "
                              f"lines); give the {role.trec} as text, or leave out --format-in "
                              "trec to read the Parquet file")
        return "trec"
    return input_kind(path)[0]


def _one_per_file(value, index: int):
    """A column name given once for every file, or one per file (compare's --score-col)."""
    if value is None or isinstance(value, str):
        return value
    return list(value)[min(index, len(value) - 1)]


def plan_inputs(files: dict, *, user: str = "user", item: str = "item", score="score",
                rank=None, label: str = "label", sep: str | None = None,
                encoding: str | None = None, encodings: dict | None = None,
                format_in: str = "auto", by=None, by_activity: bool = True,
                models=None) -> list[Input]:
    """The :class:`Input` of every file of a run, with its per-file options.

    Parameters
    ----------
    files : dict
        Role (a key of :data:`INPUT_ROLES`) -> path, or None; ``"scores"`` may be a list of
        paths (one per model).
    user, item, label : str
        Column names. ``score`` and ``rank`` may be one name per scores file.
    sep, encoding : str, optional
        Of every CSV file; ``encodings`` maps a role's own encoding option
        (``pred_encoding``, ``truth_encoding``) to the encoding that overrides ``encoding``.
    format_in : {"auto", "trec"}
        ``"trec"``: the scores files are TREC runs and the truth file qrels; ``"auto"``: from
        the names (``.run``, ``.qrels``, ``.trec``; the truth file also when the scores files
        are TREC runs).
    by : list of str, optional
        Slice columns: those not in the users file (and not ``"activity"`` when
        ``by_activity``) are read as text from the first scores file.
    models : list of str, optional
        The models' names, one per scores file.
    """
    encodings = encodings or {}
    scores = files.get("scores")
    scores = [scores] if isinstance(scores, (str, os.PathLike)) else list(scores or ())
    trec_scores = bool(scores) and all(
        _input_format(p, INPUT_ROLES["scores"], format_in, False) == "trec" for p in scores)
    plan: list[Input] = []
    for name, role in INPUT_ROLES.items():
        paths = scores if name == "scores" else [files.get(name)]
        for index, path in enumerate(paths):
            if path is None:
                continue
            fmt = _input_format(path, role, format_in, trec_scores)
            columns = {key: value for key, value in (("user", user), ("item", item))
                       if key in role.ids}
            if role.rest == "scores":
                ranks = _one_per_file(rank, index)
                columns.update({"rank": ranks} if ranks else {"score": _one_per_file(score, index)})
                if files.get("truth") is None:
                    if fmt == "trec":
                        raise FileProblem(f"{path} is a TREC run, which holds no labels; pass "
                                          "the judgements with --truth QRELS")
                    columns["label"] = label
            elif role.rest == "label":
                columns["label"] = label
            own = encodings.get(role.encoding) if role.encoding else None
            trec = fmt == "trec"  # TREC files: white space between fields
            plan.append(Input(name, os.fspath(path), fmt, columns,
                              sep=None if trec else sep,
                              encoding=own if own is not None else encoding,
                              model=list(models)[index] if models and name == "scores" else None))
    if by and plan and plan[0].role == "scores":
        users = next((i for i in plan if i.role == "users"), None)
        known = set(input_columns(users)) if users is not None else set()
        text = tuple(c for c in by if c not in known and not (by_activity and c == "activity"))
        if text:
            plan[0] = replace(plan[0], text=text)
    return plan


def input_columns(spec) -> list[str]:
    """The column names of an input file (its header or schema)."""
    spec = Input.of(spec)
    path = Path(spec.path)
    if spec.format == "trec":
        return list(spec.columns.values())
    if not path.is_file():
        raise FileProblem(f"{path}: no such file; check the path")
    kind, compression, default_sep = input_kind(path)
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowException, OSError) as error:
            raise FileProblem(f"{path} is not a readable Parquet file ({_first_line(error)}); "
                              "check its format") from None
    if path.stat().st_size == 0:
        raise FileProblem(f"{path} is empty; a CSV file needs a header line naming its columns")
    _check_encoding_name(spec.encoding)
    return list(_read_header(path, compression, spec.encoding,
                             spec.sep if spec.sep is not None else default_sep).header)


def read_input(spec, *, progress: Callable[[int, int], None] | None = None,
               pairs: bool = True) -> pd.DataFrame:
    """Read one input file as its role and per-file options say.

    Parameters
    ----------
    spec : Input or dict
        From :func:`plan_inputs` (or :meth:`Input.as_dict`, as the report and provenance
        carry it).
    progress : callable, optional
        Called as ``progress(bytes_read, file_size)`` while a CSV or Parquet file is read.
    pairs : bool, default True
        As :func:`read_scores`: False leaves the check of one row per (user, item) to the
        join that follows (then :func:`check_pairs`).

    Returns
    -------
    pandas.DataFrame
        The columns of ``spec.columns`` under their names (ids as :func:`read_scores` gives
        them), then the role's other columns: every other column as text (``users``) or as
        numbers (``item_features``), and the ``text`` columns as text.

    Raises
    ------
    FileProblem
        One line naming the file, the line and what to do.
    """
    spec = Input.of(spec)
    role = INPUT_ROLES[spec.role]
    if spec.format == "trec":
        return _read_trec(spec, role)
    columns = dict(spec.columns)
    numbers: tuple[str, ...] = ()
    grades: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    hints: dict[str, str] = {}
    if role.rest == "scores":
        numbers = ("rank",) if "rank" in columns else ("score",)
        if "label" in columns:
            grades, hints = ("label",), {"label": _LABEL_HINT}
    elif role.rest == "label":
        grades = ("label",)
        optional = ("label",) if columns.get("label") == "label" else ()
    extra = list(spec.text)
    if role.rest in ("text", "numbers") or extra:
        present = input_columns(spec)
        missing = [c for c in extra if c not in present]
        if missing:
            raise FileProblem(f"{spec.path} has no column {missing[0]!r} (its columns: "
                              f"{', '.join(repr(c) for c in present)}); --by names a column of "
                              f"the scores file or of --users")
        if role.rest in ("text", "numbers"):
            _check_columns(Path(spec.path), present, columns, {})
            extra += [c for c in present if c not in columns.values() and c not in extra]
    named = {f"{'feature' if role.rest == 'numbers' else 'text'} {c}": c for c in extra
             if c not in columns.values()}
    columns.update(named)
    if role.rest == "numbers":
        numbers = tuple(named)
    else:
        texts = tuple(named)
    return read_scores(spec.path, columns=columns, numbers=numbers, grades=grades,
                       optional=optional, texts=texts, hints=hints, sep=spec.sep,
                       encoding=spec.encoding, progress=progress,
                       unique=role.ids[0] if role.rest in ("text", "numbers") else None,
                       pairs=pairs)


def _read_trec(spec: Input, role: InputRole) -> pd.DataFrame:
    """A TREC run or qrels file under the column names of ``spec`` (ids as text)."""
    from .trec import read_trec_qrels, read_trec_run  # loaded for TREC files only (the
    # command reading CSV loads no more than it runs: tests/test_imports.py)

    path = Path(spec.path)
    if not path.is_file():
        raise FileProblem(f"{path}: no such file; check the path")
    if spec.text:
        raise FileProblem(f"{path} is a TREC run, which has no column {spec.text[0]!r}; give "
                          "the slice columns in --users FILE")
    columns = spec.columns
    if spec.encoding is not None:  # as for CSV files: a UTF-8 file read as Latin-1 is refused
        _check_encoding_name(spec.encoding)
        _refuse_utf8_read_as(path, split_suffix(path)[1], spec.encoding)
    try:
        if role.trec == "qrels":  # the pooled but unjudged lines (grade < 0) left out
            qrels = read_trec_qrels(path, encoding=spec.encoding)
            frame = pd.DataFrame({columns["user"]: qrels["user"], columns["item"]: qrels["item"],
                                  columns["label"]: qrels["label"]})
            frame.attrs.update(qrels.attrs)  # the ids are exact text
            return frame
        run = read_trec_run(path, encoding=spec.encoding)
    except FileProblem:
        raise
    except UnicodeDecodeError as error:
        raise FileProblem(f"{path} is not UTF-8 text ({_first_line(error)}); TREC files are "
                          "read as UTF-8: save it as UTF-8") from None
    except OSError as error:
        raise FileProblem(f"{path} is not a readable TREC file ({_first_line(error)}); check "
                          "its format") from None
    except ValueError as error:
        raise FileProblem(str(error)) from None
    ordering = "rank" if "rank" in columns else "score"
    frame = pd.DataFrame({columns["user"]: run["user"], columns["item"]: run["item"],
                          columns[ordering]: run[ordering]})
    frame.attrs.update(run.attrs)  # the ids are exact text
    return frame


def read_inputs(plan, *, progress: Callable[[Input], Callable | None] | None = None,
                pairs_later: tuple[str, ...] = ()) -> list[pd.DataFrame]:
    """Read every input of a run (:func:`plan_inputs`), checking what spans files: ids of TREC
    files, which are text (trec_eval compares them as strings), must not meet under the id
    policy of CSV files ("7.0" read as "7"). ``progress(spec)`` returns the byte callback of
    each file, or None. The roles in ``pairs_later`` (``"scores"``, ``"truth"``) leave the
    check of one row per (user, item) to the join that follows (:func:`read_scores`'
    ``pairs``), which sorts the pairs anyway; :func:`check_pairs` then names the line."""
    plan = [Input.of(spec) for spec in plan]
    frames = [read_input(spec, progress=progress(spec) if progress else None,
                         pairs=spec.role not in pairs_later) for spec in plan]
    _check_trec_ids(plan, frames)
    return frames


def check_pairs(plan, frames: list[pd.DataFrame]) -> None:
    """The check of one row per (user, item) that :func:`read_inputs` left to the join, made
    on the files' frames as :func:`read_scores` makes it (the file's own ids, before the id
    policy), once the join has found a repeated pair: the FileProblem names the file and the
    line, as it would have at reading. Returns when the files hold no pair twice as written
    (the join's pair is one under the id policy: ``7`` and ``7.0``)."""
    for spec, frame in zip((Input.of(s) for s in plan), frames):
        columns = spec.columns
        if spec.format == "trec" or not {"user", "item"} <= set(columns) or \
                INPUT_ROLES[spec.role].rest in ("text", "numbers"):
            continue
        path = Path(spec.path)
        kind, compression, default_sep = input_kind(path)
        where = _read_header(path, compression, spec.encoding, spec.sep if spec.sep is not None
                             else default_sep).where if kind == "csv" else \
            (lambda row: f"row {row + 1}")
        try:
            check_unique_pairs(str(path), frame, columns["user"], columns["item"], where=where)
        except ValueError as error:
            raise FileProblem(str(error)) from None


def _check_trec_ids(plan: list[Input], frames: list[pd.DataFrame]) -> None:
    """Refuse ids that are different text but one id under the id policy (``7`` and ``7.0``)
    when a TREC file holds one of them: trec_eval tells them apart, recmetrics.evaluate would
    not (the rule of :func:`recmetrics._ids.merged_ids`, which evaluate applies to the frames
    of :func:`recmetrics.read_trec_run` too)."""
    if not any(spec.format == "trec" for spec in plan):
        return
    for key, what in (("user", "query"), ("item", "document")):
        problem = _ids.merged_ids_problem(
            [(spec.path, frame[spec.columns[key]], spec.format == "trec")
             for spec, frame in zip(plan, frames) if key in spec.columns], what)
        if problem is not None:
            raise FileProblem(problem)


# --------------------------------------------------------------------------- writing
# (recmetrics._output: plan_output, write_output, atomic_file, refuse_inputs)


def to_json(document: dict) -> str:
    """A JSON document as the command line writes it (NaN becomes null)."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"
