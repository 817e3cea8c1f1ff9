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
* Parquet (``.parquet``, ``.pq``) is read with pyarrow; columns keep their types.

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
import hashlib
import io as _io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import _ids
from ._output import (OUTPUT_FORMATS, FileProblem, Output, atomic_file, plan_output,
                      refuse_inputs, write_output)
from ._validation import (check_unique_pairs, id_column, likely_column, missing_columns,
                          numeric_column)

__all__ = ["FileProblem", "read_scores", "parquet_dataset", "input_kind", "Output", "plan_output", "write_output",
           "refuse_inputs", "atomic_file",
           "CSV_SUFFIXES", "PARQUET_SUFFIXES", "OUTPUT_FORMATS"]


# --------------------------------------------------------------------------- file kinds

_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}
_TEXT_SEPARATORS = {".csv": ",", ".tsv": "\t", ".txt": None}
CSV_SUFFIXES = tuple(f"{base}{comp}" for base in _TEXT_SEPARATORS for comp in ("", *_COMPRESSIONS))
PARQUET_SUFFIXES = (".parquet", ".pq")
_SEP_NAMES = {",": "a comma", ";": "a semicolon", "\t": "a tab", "|": "a bar"}


def _split_suffix(path: Path) -> tuple[str, str | None]:
    """('.csv', 'gzip') for data.csv.gz; ('.parquet', None) for x.parquet."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = None
    if suffixes and suffixes[-1] in _COMPRESSIONS:
        compression = _COMPRESSIONS[suffixes.pop()]
    return (suffixes[-1] if suffixes else ""), compression


def input_kind(path) -> tuple[str, str | None, str | None]:
    """(kind, compression, default separator) of an input file, from its name.

    ``kind`` is "csv" or "parquet"; the separator is None for ``.txt`` (found from
    the header line) and for Parquet.
    """
    path = Path(path)
    base, compression = _split_suffix(path)
    if base in _TEXT_SEPARATORS:
        return "csv", compression, _TEXT_SEPARATORS[base]
    if base in PARQUET_SUFFIXES and compression is None:
        return "parquet", None, None
    suffix = "".join(path.suffixes) or "no extension"
    raise FileProblem(f"{path}: unknown file type ({suffix}); give a .csv, .tsv, .txt (optionally "
                      "compressed, e.g. .csv.gz) or .parquet file (the extension tells recmetrics "
                      "how to read it); a TREC run or qrels file is read as .run, .qrels or .trec, "
                      "or with --format-in trec (rm.read_trec_run / rm.read_trec_qrels in Python)")


# --------------------------------------------------------------------------- reading text


_BOMS = [(codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16")]


class _Counting(_io.RawIOBase):
    """A read-only binary stream that reports how many bytes were read (for progress) and,
    given a ``digest`` (hashlib), hashes them as they pass."""

    def __init__(self, raw, report: Callable[[int], None] | None, digest=None):
        self._raw, self._report, self.digest, self.hashed = raw, report, digest, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = self._raw.readinto(buffer)
        if n and self._report is not None:
            self._report(n)
        if n and self.digest is not None:
            self.digest.update(memoryview(buffer)[:n])
            self.hashed += n
        return n

    def seekable(self):
        return self._raw.seekable()

    def seek(self, offset, whence=os.SEEK_SET):  # a .zip archive is read from its end
        return self._raw.seek(offset, whence)

    def tell(self):
        return self._raw.tell()

    def close(self):
        self._raw.close()
        super().close()


def _open_binary(path: Path, compression: str | None, report=None, counting=None):
    """The file's decompressed bytes as a Python binary stream. ``counting``: a list that
    receives the stream's :class:`_Counting` layer (its digest of the file's bytes)."""
    raw = open(path, "rb")
    layer = _Counting(raw, report, hashlib.sha256() if counting is not None else None)
    if counting is not None:
        counting.append(layer)
    counted = _io.BufferedReader(layer, buffer_size=1 << 20)
    if compression is None:
        return counted
    if compression == "gzip":
        import gzip
        return gzip.GzipFile(fileobj=counted, mode="rb")
    if compression == "bz2":
        import bz2
        return bz2.BZ2File(counted, mode="rb")
    if compression == "xz":
        import lzma
        return lzma.LZMAFile(counted, mode="rb")
    if compression == "zstd":
        import pyarrow as pa
        return pa.CompressedInputStream(pa.PythonFile(counted, mode="r"), "zstd")
    import zipfile  # .zip: exactly one member
    try:
        archive = zipfile.ZipFile(counted)
        names = [n for n in archive.namelist() if not n.endswith("/")]
        if len(names) != 1:
            shown = f" ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" \
                if names else ""
            raise FileProblem(f"{path} holds {len(names)} files{shown}; a .zip input must hold "
                              "exactly one CSV file: unpack it, or zip one file")
        return archive.open(names[0])
    except FileProblem:
        counted.close()
        raise
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as error:
        counted.close()  # not a zip archive, encrypted, or compressed in a way Python cannot read
        raise FileProblem(f"{path} is not a readable .zip archive ({_first_line(error)}); check "
                          "its format, or unpack it and give the CSV file") from None


def _stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged compressed stream raises (a truncated .xz, a bad .zip CRC...)."""
    import lzma
    import zipfile
    import zlib

    return (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)


def _detect_encoding(head: bytes, encoding: str | None) -> str:
    """The encoding to read with: a byte-order mark wins, then ``encoding``, then UTF-8."""
    for bom, name in _BOMS:  # UTF-32 first: its little-endian BOM starts with UTF-16's
        if head.startswith(bom):
            return name
    return codecs.lookup(encoding).name if encoding else "utf-8"


def _single_byte(encoding: str) -> bool:
    """Whether every byte is one character in ``encoding`` (latin-1, cp1252...), not UTF-*."""
    name = codecs.lookup(encoding).name
    return not name.startswith("utf") and \
        len(bytes(range(256)).decode(name, errors="replace")) == 256


def _refuse_utf8_read_as(path: Path, compression, encoding: str) -> None:
    """Refuse a file asked to be read as a single-byte encoding that is valid UTF-8 text.

    Its first MiB is looked at: non-ASCII bytes that all decode as UTF-8 are, in practice,
    never Latin-1 or cp1252 text, and read so they turn into mojibake ids ("JosÃ©") that
    silently match nothing in the other file.
    """
    with _open_binary(path, compression) as stream:
        sample = stream.read(1 << 20)
    if sample.isascii():
        return
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return
    char = next(c for c in text if not c.isascii())
    garbled = char.encode("utf-8").decode(encoding, errors="replace")
    raise FileProblem(f"{path} is UTF-8 text (it holds {char!r} written as UTF-8), but it was to "
                      f"be read as {encoding}, which would turn {char!r} into {garbled!r} and "
                      "leave such ids matching nothing; read this file as UTF-8 (--encoding "
                      "applies to every file unless --pred-encoding or --truth-encoding gives "
                      "one file its own)")


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
    line = 1
    with _open_binary(path, compression) as stream:
        while True:
            block = stream.read(1 << 20)
            final = not block
            state = decoder.getstate()
            try:
                text = decoder.decode(block, final=final)
            except UnicodeDecodeError as error:
                before = factory()
                before.setstate(state)
                line += before.decode(block[:error.start], final=False).count("\n")
                return line, block[error.start:error.end]
            line += text.count("\n")
            if final:
                return None


def _text_lines(path: Path, compression, encoding: str):
    """The decoded file as a text stream with universal newlines left alone (for csv)."""
    return _io.TextIOWrapper(_open_binary(path, compression), encoding=encoding, newline="",
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
    with _open_binary(path, compression) as stream:
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
        line = head[:error.start].count(b"\n") + 1
        bad = head[error.start:error.end].hex(" ")
        raise FileProblem(f"{path}: byte {bad} in line {line} cannot be read as "
                          f"{encoding or 'UTF-8'}; {_encoding_advice(encoding)}") from None
    except UnicodeError as error:  # "UTF-16 stream does not start with BOM", say
        raise FileProblem(f"{path} cannot be read as {encoding or 'UTF-8'} ({error}); "
                          f"{_encoding_advice(encoding)}") from None
    if encoding is not None and used == codecs.lookup(encoding).name and _single_byte(used):
        _refuse_utf8_read_as(path, compression, encoding)
    decoded = decoded.lstrip("\ufeff")
    lines = [ln for ln in decoded.splitlines() if ln.strip()]
    if not lines:
        raise FileProblem(f"{path} is empty; a CSV file needs a header line naming its columns")
    if sep is None:
        sep = _sniff_separator(lines[0])
    first = next(csv.reader(_io.StringIO(decoded.lstrip("\r\n")), delimiter=sep, quotechar='"'),
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
            with _open_binary(source.path, source.compression, report, counting) as stream:
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


def _frame(table, ids: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """An Arrow table as pandas without copying what need not be copied.

    The text columns named in ``ids`` are hashed in Arrow into Categoricals of
    their distinct ids (:func:`._ids.arrow_distinct_ids`): the strings never
    become pandas objects, and each column is hashed once.
    """
    hashed = {}
    for name in ids:
        series = _ids.arrow_distinct_ids(table.column(name))
        if series is not None:
            hashed[name] = series
    rest = table.drop_columns(list(hashed))
    del table
    frame = rest.to_pandas(split_blocks=True, self_destruct=True)
    return pd.DataFrame({**{name: frame[name] for name in frame.columns}, **hashed}, copy=False)


def _read_csv(path: Path, compression, columns: dict[str, str], numbers, grades, *, sep, encoding,
              hints, report) -> tuple[pd.DataFrame, Callable[[int], str]]:
    import pyarrow as pa

    source = _read_header(path, compression, encoding, sep)
    present = source.header
    seen: dict[str, int] = {}
    for position, name in enumerate(present):
        if name in seen and name in columns.values():
            raise FileProblem(f"{path} names column {name!r} twice (columns {seen[name] + 1} and "
                              f"{position + 1}); rename one of them")
        seen.setdefault(name, position)
    _check_columns(path, present, columns, hints, sep=source.sep, given_sep=sep)
    wanted = list(dict.fromkeys(columns.values()))
    id_columns = {columns[r] for r in ("user", "item") if r in columns}
    types = {c: (pa.string() if c in id_columns else pa.float64()) for c in wanted}
    table, ragged, error, digest = _arrow_csv(source, wanted, types, report)
    if table is None:
        frame = _read_as_text(source, error, ragged, encoding, types, columns, numbers, grades)
    else:
        frame = _frame(table, id_columns)
    frame = frame[wanted]
    if digest is not None:
        frame.attrs["sha256"] = digest
    return frame, source.where


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
            frame = _frame(table)
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


def _read_parquet(path: Path, columns: dict[str, str], hints, report):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as error:
        raise FileProblem(f"{path} is not a readable Parquet file ({_first_line(error)}); check "
                          "its format") from None
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
    return _frame(table, ids)[wanted], (lambda row: f"row {row + 1}")


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
    _check_columns(Path(files[0]), list(schema.names), columns, hints or {})
    return files


def _hidden(path: str, base: str) -> bool:
    """Whether a component of ``path`` below ``base`` starts with '_' or '.' (_SUCCESS, .crc)."""
    return any(part.startswith(("_", ".")) for part in Path(os.path.relpath(path, base)).parts)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def read_scores(path, *, columns: dict[str, str], numbers: tuple[str, ...] = (),
                grades: tuple[str, ...] = (), optional: tuple[str, ...] = (),
                hints: dict[str, str] | None = None,
                sep: str | None = None, encoding: str | None = None,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
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
    hints : dict, optional
        Role -> how to point at another column (default ``pass --<role>-col NAME``).
    sep : str, optional
        CSV field separator; default from the extension (see the module docstring).
    encoding : str, optional
        Text encoding of a CSV file; default UTF-8 (a byte-order mark always wins).
    progress : callable, optional
        Called as ``progress(bytes_read, file_size)`` while the file is read.

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
    if kind == "csv":
        try:
            try:
                frame, where = _read_csv(path, compression, columns, numbers, grades,
                                         sep=sep if sep is not None else default_sep,
                                         encoding=encoding, hints=hints, report=report)
            except FileProblem:
                raise
            except ValueError as error:  # a value check while explaining a failed read
                raise FileProblem(str(error)) from None
        except _stream_errors() as error:  # a truncated .gz, a .zip member failing its CRC
            raise FileProblem(f"{path} is not a readable CSV file ({_first_line(error)}); check "
                              "its format") from None
    else:
        frame, where = _read_parquet(path, columns, hints, report)
    if len(frame) == 0:
        raise FileProblem(f"{path} has no data rows; it needs at least one scored (user, item)")
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
        if "user" in columns and "item" in columns:
            check_unique_pairs(str(path), frame, columns["user"], columns["item"], where=where)
    except FileProblem:
        raise
    except ValueError as error:
        raise FileProblem(str(error)) from None
    _release_arrow_memory()
    if digest is not None:  # the SHA-256 of the bytes read, for the provenance record
        frame.attrs["sha256"] = digest
    return frame


def _release_arrow_memory() -> None:
    """Hand the memory of the tables just read back to the system now: Arrow's allocator
    keeps freed memory for a while, and the ranking that follows would add to it."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


# --------------------------------------------------------------------------- writing
# (recmetrics._output: plan_output, write_output, atomic_file, refuse_inputs)


def to_json(document: dict) -> str:
    """A JSON document as the command line writes it (NaN becomes null)."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"
