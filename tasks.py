#!/usr/bin/env python3
"""The project's two commands, plus one for maintainers.

    python3 tasks.py report    execute every notebook and write the offline study site to build/
    python3 tasks.py test      run the whole test suite (unit tests and nbval)
    python3 tasks.py execute   re-execute notebooks in place, outputs stored (maintainers)
    python3 tasks.py bench     run the speed benchmarks (ratios against numpy, scikit-learn, ranx)

Each command creates a virtual environment in .venv on first use, installs the
project into it (``pip install -e .[report,notebooks,dev,bench,dask,spark]``) and reinstalls
only when pyproject.toml changes. Only the Python standard library is used here, so a
fresh machine needs nothing but Python 3.11+.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-pyproject-sha256"


def _run(*args: str | os.PathLike, quiet: bool = False, env: dict | None = None) -> None:
    """Run a command (``env``: extra environment variables); with ``quiet``, show its output
    only if it fails."""
    completed = subprocess.run([str(a) for a in args], cwd=ROOT, text=True,
                               capture_output=quiet, env={**os.environ, **(env or {})})
    if completed.returncode != 0:
        if quiet:
            sys.stderr.write(completed.stdout + completed.stderr)
        sys.exit(completed.returncode)


def ensure_venv() -> None:
    """Create .venv and install the project when missing or out of date."""
    if sys.version_info < (3, 11):
        sys.exit(f"tasks.py: Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if PYTHON.exists() and STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    if not PYTHON.exists():
        print(f"tasks.py: creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    print("tasks.py: installing recmetrics with its report, notebook, test and benchmark extras",
          flush=True)
    _run(PYTHON, "-m", "pip", "install", "--upgrade", "pip", quiet=True)
    _run(PYTHON, "-m", "pip", "install", "-e", ".[report,notebooks,dev,bench,dask,spark]",
         quiet=True)
    STAMP.write_text(wanted + "\n")


def main(argv: list[str]) -> None:
    commands = {
        "test": [PYTHON, "-m", "pytest"],
        "report": [PYTHON, "tools/book.py"],
        "execute": [PYTHON, "tools/notebooks.py", "execute"],
        "bench": [PYTHON, "benchmarks/run_all.py"],
    }
    if not argv or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    ensure_venv()
    # every extra is installed above, so a test that finds one missing fails instead of skipping
    env = {"RECMETRICS_REQUIRE_EXTRAS": "1"} if argv[0] == "test" else None
    _run(*commands[argv[0]], *argv[1:], env=env)


if __name__ == "__main__":
    main(sys.argv[1:])
