"""Writing outputs without ever damaging a file: the one output guard of recmetrics.

Everything the kit writes (``-o`` of every command, the report's HTML, the per-user
Parquet file or directory of :func:`recmetrics.evaluate_per_user`) goes through here:

* :func:`plan_output` checks a target *before* any computation: the format its
  extension names, that it is not one of the run's inputs of any role (scores, truth,
  history, users, catalog, item features) nor a hard link or a symlink to one, nor inside
  an input dataset (:func:`refuse_inputs`), and that its folder can be written;
* :func:`write_output` writes a regular file through :class:`atomic_file`: a temporary
  file in the same folder, flushed and ``fsync``-ed, then renamed onto the target with
  ``os.replace``; a failure (a full device, a size limit) removes the temporary file and
  leaves the target as it was, and is one :class:`FileProblem` line;
* a symlink is followed: the file it points to is replaced, the link stays;
* a FIFO, a character device such as ``/dev/stdout`` or anything under ``/dev`` or
  ``/proc`` is opened and written through, never replaced; ``-`` means standard output.

Reading goes through here too where it is about bytes, not formats: the one table of
:data:`COMPRESSIONS` (what a file name's last suffix says, for every reader: CSV, TREC) and
:func:`open_input`, which opens a file as its decompressed bytes.

Only the standard library and pandas (for Parquet) are used; :mod:`recmetrics.io`
re-exports these names.
"""
from __future__ import annotations

import codecs
import fnmatch
import glob
import hashlib
import io
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["FileProblem", "Output", "OUTPUT_FORMATS", "plan_output", "write_output",
           "atomic_file", "refuse_inputs", "write_parquet", "directory_output", "COMPRESSIONS",
           "split_suffix", "open_input", "stream_errors", "bom_encoding"]


class FileProblem(ValueError):
    """A file that cannot be read or written as asked; the message says which and what to do."""


#: format -> the extensions that name it (compression suffixes allowed for csv and tsv)
OUTPUT_FORMATS = {"csv": (".csv",), "tsv": (".tsv",), "json": (".json",),
                  "parquet": (".parquet", ".pq"), "table": (".txt", ""), "html": (".html", ".htm"),
                  "markdown": (".md",), "latex": (".tex",)}
#: compression suffix -> compression, of every file the kit reads (a .zip archive: of one file)
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}
#: and of those it writes
_OUTPUT_COMPRESSIONS = {s: c for s, c in COMPRESSIONS.items() if c != "zip"}


def split_suffix(path) -> tuple[str, str | None]:
    """('.csv', 'gzip') for data.csv.gz; ('.parquet', None) for x.parquet; ('.run', 'bz2')
    for a.run.bz2 (the suffix before the compression, lower case)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = None
    if suffixes and suffixes[-1] in COMPRESSIONS:
        compression = COMPRESSIONS[suffixes.pop()]
    return (suffixes[-1] if suffixes else ""), compression


#: byte-order marks and the encodings they announce (UTF-32 first: its little-endian BOM
#: starts with UTF-16's); a file's BOM wins over any encoding asked for
_BOMS = [(codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16")]


def bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``head`` announces, or None."""
    return next((name for bom, name in _BOMS if head.startswith(bom)), None)


def single_byte(encoding: str) -> bool:
    """Whether every byte is one character in ``encoding`` (latin-1, cp1252...), not UTF-*."""
    name = codecs.lookup(encoding).name
    return not name.startswith("utf") and \
        len(bytes(range(256)).decode(name, errors="replace")) == 256


def utf8_read_as(path: Path, compression: str | None, encoding: str) -> tuple[str, str] | None:
    """Evidence that a file to be read as the single-byte ``encoding`` is UTF-8 text: (its
    first non-ASCII character, what ``encoding`` would make of its UTF-8 bytes), or None.

    The first MiB is looked at: non-ASCII bytes that all decode as UTF-8 are, in practice,
    never Latin-1 or cp1252 text, and read so they turn into mojibake ids ("JosÃ©") that
    silently match nothing in the other file.
    """
    if not single_byte(encoding):
        return None
    with open_input(path, compression) as stream:
        sample = stream.read(1 << 20)
    if sample.isascii():
        return None
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return None
    char = next(c for c in text if not c.isascii())
    return char, char.encode("utf-8").decode(encoding, errors="replace")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


class _Counting(io.RawIOBase):
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


def open_input(path: Path, compression: str | None, report=None, counting=None):
    """The file's decompressed bytes as a Python binary stream. ``counting``: a list that
    receives the stream's :class:`_Counting` layer (its digest of the file's bytes)."""
    raw = open(path, "rb")
    layer = _Counting(raw, report, hashlib.sha256() if counting is not None else None)
    if counting is not None:
        counting.append(layer)
    counted = io.BufferedReader(layer, buffer_size=1 << 20)
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


def stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged compressed stream raises (a truncated .xz, a bad .zip CRC...)."""
    import lzma
    import zipfile
    import zlib

    return (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)




@dataclass(frozen=True)
class Output:
    """Where and how to write one output (from :func:`plan_output`)."""

    target: str | None     # None: standard output
    format: str            # "table", "json", "csv", "tsv", "parquet" or "html"
    compression: str | None
    mode: str              # "stdout", "atomic" (regular file) or "through" (FIFO, device)
    real_path: str | None  # the file replaced in atomic mode (symlinks followed)
    option: str = "-o"     # how the target was given, for messages: "-o", or "path" in Python


def _format_from_name(option: str, target: str, allowed: tuple[str, ...]) -> tuple[str | None, str | None]:
    path = Path(target)
    suffixes = [s.lower() for s in path.suffixes if len(s) <= 9 and " " not in s]
    compression = None
    if suffixes and suffixes[-1] in _OUTPUT_COMPRESSIONS:
        compression = _OUTPUT_COMPRESSIONS[suffixes.pop()]
    base = suffixes[-1] if suffixes else ""
    for fmt, endings in OUTPUT_FORMATS.items():
        if base in endings and fmt in allowed:
            if compression is not None and fmt not in ("csv", "tsv"):
                break
            return (None if base == "" else fmt), compression
    names = ", ".join(s for fmt in allowed for s in OUTPUT_FORMATS[fmt] if s)
    if "csv" in allowed:
        names += " (.csv and .tsv also compressed: .gz, .bz2, .xz, .zst)"
    shown = "".join(path.suffixes) or "no extension"
    raise FileProblem(f"{option} {target}: cannot write {shown!s} files; name the file {names}")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _inside(path: str, folder: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, base]) == base


def _outside_dataset(option: str, target: str, given: str) -> None:
    """Refuse a target that is a file of an input dataset (a directory or a glob) or lies in it."""
    if any(c in given for c in "*?["):
        matched = [f for f in glob.glob(given, recursive=True)
                   if os.path.exists(target) and _same_file(f, target)]
        pattern = os.path.abspath(given)
        if matched or fnmatch.fnmatchcase(os.path.abspath(target), pattern) \
                or fnmatch.fnmatchcase(os.path.realpath(target), pattern):
            raise FileProblem(f"{option} {target}: is a file of the input dataset {given}; writing "
                              "there would replace or add to what is read, so choose a name "
                              "outside it")
    elif os.path.isdir(given) and _inside(target, given):
        raise FileProblem(f"{option} {target}: lies inside the input dataset directory {given}; "
                          "writing there would replace or add to what is read, so choose a path "
                          "outside it")


def _named_inputs(inputs) -> list[tuple[str, str]]:
    """(how the input is named in a message, its path) of a sequence of paths or a mapping of
    roles (``"--history"``) to paths; None entries left out."""
    pairs = inputs.items() if isinstance(inputs, dict) else ((None, p) for p in inputs)
    named = []
    for role, given in pairs:
        if given is None:
            continue
        for path in ([given] if isinstance(given, (str, os.PathLike)) else given):
            if path is not None:
                path = os.fspath(path)
                named.append((f"the {role} file {path}" if role else f"the input file {path}",
                              path))
    return named


def _is_input(target: str, given: str) -> bool:
    """``target`` is the file ``given``: the same inode (a hard link, a symlink to it, another
    spelling of its path) or, when either does not exist yet, the same resolved path (a
    dangling symlink to where the input is read)."""
    try:
        a, b = os.stat(target), os.stat(given)
    except OSError:
        return os.path.realpath(target) == os.path.realpath(given)
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) \
        or os.path.realpath(target) == os.path.realpath(given)


def refuse_inputs(target, inputs, *, option: str = "-o") -> None:
    """Refuse to write ``target`` when it is one of the run's ``inputs`` (of any role: scores,
    truth, history, users, catalog, item features), a hard link or a symlink to one, or a path
    inside an input dataset (a directory or a glob).

    ``inputs`` is a sequence of paths, or a mapping of how each is named in messages
    (``"--history"``) to a path or a sequence of paths. Raises :class:`FileProblem`.
    """
    target = os.fspath(target)
    for named, given in _named_inputs(inputs):
        if _is_input(target, given):
            raise FileProblem(f"{option} {target}: is {named}; writing there would destroy it, "
                              "so choose another name")
        _outside_dataset(option, target, given)


def plan_output(target, *, fmt: str | None = None, inputs=(), option: str = "-o",
                allowed: tuple[str, ...] = ("table", "json", "csv", "tsv", "parquet")) -> Output:
    """Check an output target before any work is done; returns how to write it.

    Parameters
    ----------
    target : str or Path or None
        A file name, ``-`` or None for standard output.
    fmt : str, optional
        The format asked for explicitly (``--format``); it must agree with the extension.
    inputs : sequence of paths, or mapping of role to path(s)
        Every file, directory and glob the command reads, of every role: writing over one of
        their files (a hard link or a symlink to it included), or anywhere inside an input
        directory, is refused (:func:`refuse_inputs`).
    option : str
        How the target was given, for messages (``-o``).
    allowed : tuple of str
        Formats this command can write.
    """
    if target is None or str(target) == "-":
        if fmt == "parquet":
            raise FileProblem(f"{option} -: Parquet is binary; write it to a file ending in "
                              ".parquet")
        return Output(None, fmt or ("table" if "table" in allowed else allowed[0]), None,
                      "stdout", None, option)
    target = str(target)
    if target.endswith(os.sep) or os.path.isdir(target):
        raise FileProblem(f"{option} {target}: is a folder; give a file name such as "
                          f"{os.path.join(target, 'out')}")
    refuse_inputs(target, inputs, option=option)
    special = os.path.abspath(target).startswith(("/dev/", "/proc/"))
    exists = os.path.exists(target)
    info = os.stat(target) if exists else None
    if info is not None and not stat.S_ISREG(info.st_mode) or special:
        # FIFO, terminal, /dev/stdout...: opened and written through, never replaced
        if not os.access(target, os.W_OK):
            raise FileProblem(f"{option} {target}: permission denied; choose a file you may write")
        named, compression = _format_from_name(option, target, allowed) \
            if Path(target).suffix else (None, None)
        chosen = _agree(option, target, named, fmt, allowed)
        return Output(target, chosen, compression, "through", None, option)
    named, compression = _format_from_name(option, target, allowed)
    chosen = _agree(option, target, named, fmt, allowed)
    real = os.path.realpath(target)
    folder = os.path.dirname(real) or "."
    if not os.path.isdir(folder):
        raise FileProblem(f"{option} {target}: folder {os.path.dirname(target) or '.'} does not "
                          "exist; create it first")
    if exists and not os.access(real, os.W_OK):
        raise FileProblem(f"{option} {target}: the file is read-only; make it writable or choose "
                          "another name")
    try:  # the only sure test that the rename will work: make a file there, and remove it
        handle, probe = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(real)}.",
                                         suffix=".probe")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise FileProblem(f"{option} {target}: cannot write in {folder} "
                          f"({error.strerror or error}); choose another folder") from None
    return Output(target, chosen, compression, "atomic", real, option)


def _agree(option: str, target: str, named: str | None, fmt: str | None,
           allowed: tuple[str, ...]) -> str:
    if fmt is not None and named is not None and fmt != named \
            and not (named == "table" and fmt != "parquet"):
        raise FileProblem(f"{option} {target} names a {named.upper()} file but --format {fmt} was "
                          "given; drop --format or rename the file")
    if fmt is not None:
        return fmt
    if named is not None:
        return named
    return "table" if "table" in allowed else allowed[0]


def _encode(content, output: Output) -> bytes:
    if isinstance(content, pd.DataFrame):
        import pyarrow as pa
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pandas(content, preserve_index=False), sink)
        return sink.getvalue().to_pybytes()
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    if output.compression == "gzip":
        import gzip
        return gzip.compress(data, mtime=0)
    if output.compression == "bz2":
        import bz2
        return bz2.compress(data)
    if output.compression == "xz":
        import lzma
        return lzma.compress(data)
    if output.compression == "zstd":
        return _zstd(data)
    return data


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(data)
    return sink.getvalue().to_pybytes()


def _cannot_write(where: str, error: OSError, kept: str) -> FileProblem:
    return FileProblem(f"{where}: cannot write ({error.strerror or error}); {kept}")


def write_output(output: Output, content) -> None:
    """Write ``content`` (text, bytes, or a DataFrame for Parquet) as ``output`` says.

    A write that fails (a full device, a file size limit, an I/O error) raises
    :class:`FileProblem` in one line: a regular file is then left as it was, and standard
    output or a device has received at most part of the output.
    """
    data = _encode(content, output)
    if output.mode == "stdout":
        try:
            if isinstance(content, str) and output.compression is None:
                sys.stdout.write(content)
            else:
                sys.stdout.buffer.write(data)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _cannot_write("standard output", error, "the output is incomplete") from None
        return
    if output.mode == "through":
        if output.target is None:
            raise ValueError("a 'through' Output needs a target; build it with plan_output")
        try:
            with open(output.target, "wb") as handle:
                handle.write(data)
        except OSError as error:
            raise _cannot_write(f"{output.option} {output.target}", error,
                                "the output is incomplete") from None
        return
    if output.real_path is None:
        raise ValueError("an 'atomic' Output needs a real_path; build it with plan_output")
    try:
        with atomic_file(output.real_path, option=output.option) as handle:
            handle.write(data)
    except OSError as error:
        raise _cannot_write(f"{output.option} {output.target}", error,
                            f"nothing was written and {output.target} is as it was") from None


def _fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (where the system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class atomic_file:
    """Context manager: a binary temporary file beside ``path``, renamed onto it on success.

    The data is flushed and ``fsync``-ed before ``os.replace``, so after a crash ``path``
    holds either its old content or the whole new one. An existing file keeps its
    permission bits (and owner and group, where permitted); a new one gets the usual
    ``0o666 & ~umask``: the temporary file is created with mode 0o666 and the kernel applies
    the umask, so the process-wide umask is never changed (changing it would race with other
    threads). On any exception the temporary file is removed and ``path`` is left as it was.
    """

    def __init__(self, path: str, *, option: str = "-o"):
        self.path = os.path.realpath(path)
        self.option = option
        self.temp: str | None = None

    def _create(self, folder: str) -> int:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) \
            | getattr(os, "O_BINARY", 0)
        for _ in range(100):
            temp = os.path.join(folder, f".{os.path.basename(self.path)}."
                                        f"{os.urandom(6).hex()}.part")
            try:
                fd = os.open(temp, flags, 0o666)
            except FileExistsError:
                continue
            self.temp = temp
            return fd
        raise FileExistsError(f"no free temporary name in {folder}")

    def __enter__(self):
        folder = os.path.dirname(self.path) or "."
        try:
            fd = self._create(folder)
        except OSError as error:
            raise FileProblem(f"{self.option} {self.path}: cannot write in {folder} "
                              f"({error.strerror or error}); choose another folder") from None
        self.handle = os.fdopen(fd, "wb")
        return self.handle

    def __exit__(self, kind, value, traceback):
        try:
            if kind is not None:
                self.handle.close()
                return False
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            try:
                old = os.stat(self.path)
            except FileNotFoundError:
                old = None
            if old is not None:
                os.chmod(self.temp, stat.S_IMODE(old.st_mode))
                try:
                    os.chown(self.temp, old.st_uid, old.st_gid)
                except (PermissionError, OSError):
                    pass
            os.replace(self.temp, self.path)
            self.temp = None
            _fsync_folder(os.path.dirname(self.path) or ".")
            return False
        finally:
            if not self.handle.closed:
                try:
                    self.handle.close()
                except OSError:
                    pass
            if self.temp:
                Path(self.temp).unlink(missing_ok=True)




def write_parquet(table: pd.DataFrame, path, *, option: str = "per_user_path") -> None:
    """Write ``table`` to the Parquet file ``path`` through :class:`atomic_file`: the file is
    whole or as it was."""
    target = os.fspath(path)
    if os.path.isdir(target):
        raise FileProblem(f"{option} {target}: is a folder; give a file name such as "
                          f"{os.path.join(target, 'users.parquet')}")
    try:
        with atomic_file(target, option=option) as handle:
            table.to_parquet(handle, index=False)
    except OSError as error:
        raise FileProblem(f"{option} {target}: cannot write ({error.strerror or error}); "
                          f"nothing was written and {target} is as it was") from None


class directory_output:
    """Context manager: a new folder of part files written as a whole or not at all.

    ``__enter__`` checks ``path`` (not an input of the run, nor inside one; a new or empty
    folder, so that no old part file is ever mixed with the new ones) and returns a
    temporary folder beside it, where the parts are written; on success it is renamed onto
    ``path``, on any exception it is removed and ``path`` is left as it was.
    """

    def __init__(self, path, *, inputs=(), option: str = "per_user_path"):
        self.path = os.path.abspath(os.fspath(path))
        self.given = os.fspath(path)
        self.option = option
        refuse_inputs(self.given, inputs, option=option)
        if os.path.isfile(self.path):
            raise FileProblem(f"{option} {self.given}: is a file; give a new or empty folder, "
                              "where one Parquet file per partition is written")
        if os.path.isdir(self.path) and os.listdir(self.path):
            raise FileProblem(f"{option} {self.given}: the folder already holds files; give a "
                              "new or empty folder (old part files would mix with the new ones)")
        self.temp: str | None = None

    def __enter__(self) -> str:
        parent = os.path.dirname(self.path) or "."
        try:
            os.makedirs(parent, exist_ok=True)
            self.temp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(self.path)}.",
                                         suffix=".part")
            os.chmod(self.temp, 0o777 & ~_umask())
        except OSError as error:
            raise FileProblem(f"{self.option} {self.given}: cannot write in {parent} "
                              f"({error.strerror or error}); choose another folder") from None
        return self.temp

    def __exit__(self, kind, value, traceback):
        try:
            if kind is None:
                try:
                    os.replace(self.temp, self.path)   # onto a missing or empty folder
                except OSError as error:
                    raise FileProblem(f"{self.option} {self.given}: cannot write "
                                      f"({error.strerror or error}); nothing was written") \
                        from None
                self.temp = None
            return False
        finally:
            if self.temp:
                shutil.rmtree(self.temp, ignore_errors=True)


def _umask() -> int:
    """The process's umask, read without changing it (Linux: /proc/self/status); else by
    creating a file with mode 0o777 and reading the mode the kernel gave it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    folder = tempfile.mkdtemp()
    try:
        probe = os.path.join(folder, "probe")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT, 0o777))
        return 0o777 & ~stat.S_IMODE(os.stat(probe).st_mode)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
