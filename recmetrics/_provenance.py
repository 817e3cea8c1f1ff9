"""What a written result records so that it can be reproduced: versions, time, inputs, options.

Every output of the command line (JSON, the HTML report and its notebook)
carries :func:`record`'s dictionary under ``provenance``: the package and
library versions, the creation time (UTC; ``SOURCE_DATE_EPOCH`` when set, as
reproducible-build tools honour it), the command line as typed, each input's
absolute path, size in bytes and SHA-256, rows and users, and every option
that can change a number.
"""
from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

DISTRIBUTION = "metricbook"


@functools.cache
def version() -> str:
    """The installed distribution's version (the source tree's when it is not installed);
    looked up once per process (the command line asks twice: --version and provenance)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        from . import __version__
        return __version__


def created() -> str:
    """Now in UTC, ISO 8601 to the second; ``SOURCE_DATE_EPOCH`` (seconds) when it is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip().isdigit():
        moment = _dt.datetime.fromtimestamp(int(epoch), tz=_dt.timezone.utc)
    else:
        moment = _dt.datetime.now(tz=_dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _files(path: Path) -> list[Path]:
    """A file, or the data files of a dataset directory (sorted; hidden and _ files left out)."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and not any(
            part.startswith(("_", ".")) for part in p.relative_to(path).parts))
    return [path]


def sha256(path: Path) -> str:
    """SHA-256 of a file; of a directory, of its files' relative names and digests in order."""
    if not path.is_dir():
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    digest = hashlib.sha256()
    for file in _files(path):
        digest.update(f"{file.relative_to(path).as_posix()}\0{sha256(file)}\n".encode())
    return digest.hexdigest()


def describe_input(path, *, rows: int | None = None, users: int | None = None,
                   digest: str | None = None) -> dict[str, Any]:
    """One input as provenance records it: absolute path, bytes, SHA-256, rows, users.

    ``digest`` is the SHA-256 of the bytes as they were read (a CSV file is hashed
    while it is read); without it the file is read again and hashed here.
    """
    resolved = Path(path).resolve()
    size = sum(f.stat().st_size for f in _files(resolved)) if resolved.exists() else None
    if digest is None and resolved.exists():
        digest = sha256(resolved)
    described: dict[str, Any] = {"path": str(resolved), "bytes": size, "sha256": digest}
    if rows is not None:
        described["rows"] = int(rows)
    if users is not None:
        described["users"] = int(users)
    return described


def record(*, argv: list[str] | None, inputs: dict[str, dict[str, Any]],
           options: dict[str, Any]) -> dict[str, Any]:
    """The provenance object: versions, creation time, command line, inputs and options."""
    import numpy
    import pandas

    libraries = {"python": platform.python_version(), "numpy": numpy.__version__,
                 "pandas": pandas.__version__}
    try:
        import pyarrow
        libraries["pyarrow"] = pyarrow.__version__
    except ImportError:  # pragma: no cover - a dependency, but provenance must not fail
        libraries["pyarrow"] = None
    return {"package": DISTRIBUTION, "version": version(), "libraries": libraries,
            "created": created(), "argv": list(argv) if argv is not None else None,
            "inputs": [{"role": role, **described} for role, described in inputs.items()],
            "options": options}
