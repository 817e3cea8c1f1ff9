#!/usr/bin/env python3
"""The project's two commands, plus one for maintainers.

    python3 tasks.py report    write the offline study site to build/ from the notebooks, each
                               executed, or shown with its stored outputs when the fingerprint
                               recorded with them matches (--execute: execute every one)
    python3 tasks.py test      run the whole test suite (unit tests and nbval)
    python3 tasks.py execute   re-execute notebooks in place, outputs and fingerprint stored
                               (maintainers; --stale: only those whose fingerprint changed)
    python3 tasks.py bench     run the speed benchmarks (ratios against numpy, scikit-learn, ranx)

Each command creates a virtual environment in .venv on first use and installs into it only
what it needs (``EXTRAS``: report and execute ``.[report,notebooks]``; test and bench add the
test oracles, the browser driver, Dask, Spark and the benchmark peers; none installs JupyterLab,
the ``lab`` extra). It reinstalls only when pyproject.toml changes or a command needs an extra
not yet installed, and shows pip's progress one line per step, and a line at least every 15 s
while a step runs silently (creating the environment, downloading, installing) and while report
or execute prints nothing (a notebook executing). pip does not byte-compile what it installs
(Python compiles the modules a run imports). Only the Python standard library is used here, so a
fresh machine needs nothing but Python 3.11+.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-pyproject-sha256"

# the extras each command installs; test keeps every extra so no test skips for a missing one
EXTRAS = {
    "report": ("report", "notebooks"),
    "execute": ("report", "notebooks"),
    "test": ("report", "notebooks", "dev", "bench", "dask", "spark"),
    "bench": ("report", "notebooks", "dev", "bench", "dask", "spark"),
}
# pip's output is shown only if it fails; while it works, one line per 20 packages collected
# and one when it installs
_PIP_EVERY = 20
# ... and a line at least every this many seconds while pip works silently
_PIP_QUIET_AT_MOST = 15


def _run(*args: str | os.PathLike, quiet: bool = False, env: dict | None = None) -> None:
    """Run a command (``env``: extra environment variables); with ``quiet``, show its output
    only if it fails."""
    completed = subprocess.run([str(a) for a in args], cwd=ROOT, text=True,
                               capture_output=quiet, env={**os.environ, **(env or {})})
    if completed.returncode != 0:
        if quiet:
            sys.stderr.write(completed.stdout + completed.stderr)
        sys.exit(completed.returncode)


def _run_saying(*args: str | os.PathLike) -> None:
    """Run a command, passing its output on line by line, and a line at least every
    ``_PIP_QUIET_AT_MOST`` seconds while it prints nothing (the last thing it said)."""
    process = subprocess.Popen([str(a) for a in args], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    doing = f"running {Path(str(args[1])).name}"
    with _Progress(doing) as progress:
        for line in process.stdout:
            progress.say(line.rstrip("\n"))
            progress.now_doing(doing)  # the time counted from its last line
    if process.wait() != 0:
        sys.exit(process.returncode)


class _Progress:
    """Lines of progress, and a line at least every ``_PIP_QUIET_AT_MOST`` seconds while the
    work goes on silently (``with`` block): what is being done and for how long."""

    def __init__(self, doing: str):
        self.doing, self.since = doing, time.monotonic()
        self.said = self.since
        self._done = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.said = time.monotonic()

    def now_doing(self, doing: str) -> None:
        self.doing, self.since = doing, time.monotonic()

    def _heartbeat(self) -> None:
        while not self._done.wait(min(1.0, _PIP_QUIET_AT_MOST / 4)):
            now = time.monotonic()
            if now - self.said >= _PIP_QUIET_AT_MOST:
                self.say(f"  still {self.doing} ({now - self.since:.0f} s) ...")

    def __enter__(self) -> _Progress:
        self._beat.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._beat.join()


def _pip(*args: str, pip: str = "-m pip") -> None:
    """Run pip, printing its progress lines as they come; everything if it fails. While pip
    prints nothing worth a line (downloading, unpacking wheels), a line every
    ``_PIP_QUIET_AT_MOST`` seconds says what it is doing and for how long. ``pip``: how
    the environment's Python runs pip (``-m pip``, or a pip wheel's ``<wheel>/pip``)."""
    # unbuffered: a pipe would otherwise get pip's lines in bursts, minutes apart
    runner = pip.split(" ") if pip == "-m pip" else [pip]
    process = subprocess.Popen([str(PYTHON), *runner, *args, "--progress-bar", "off"], cwd=ROOT,
                               text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1",
                                    "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    lines, collected = [], 0
    with _Progress("starting pip") as progress:
        for line in process.stdout:
            lines.append(line)
            text = line.strip()
            if text.endswith(": started"):   # a build step: "Installing build dependencies"
                progress.now_doing(text[:-len(": started")].lower())
            elif text.startswith("Collecting "):
                if collected == 0:
                    progress.now_doing("resolving and downloading packages")
                collected += 1
                if collected % _PIP_EVERY == 0:
                    progress.say(f"  pip: {collected} packages resolved ...")
            elif text.startswith("Installing collected packages"):
                progress.now_doing("installing")
                progress.say(f"  pip: installing {text.count(',') + 1} packages ...")
            elif text.startswith("Successfully installed"):
                progress.say(f"  pip: done ({len(text.split()) - 2} installed)")
                progress.now_doing("finishing (pip exiting)")
    if process.wait() != 0:
        sys.stderr.write("".join(lines))
        sys.exit(process.returncode)


def _create_venv() -> None:
    """.venv with the newest pip: the pip wheel Python bundles (ensurepip's) is run directly
    to install pip, uncompiled. ``ensurepip`` would install the bundled pip and setuptools,
    byte-compiling both, before pip upgraded itself (52 s against 32 s at load 13). Where
    Python bundles no wheel (a distribution's trimmed Python), ensurepip after all."""
    import ensurepip

    wheels = sorted(Path(ensurepip.__file__).parent.glob("_bundled/pip-*.whl"))
    with _Progress("creating the virtual environment"):
        venv.EnvBuilder(with_pip=not wheels, clear=True).create(VENV)
    if wheels:
        _pip("install", "--no-compile", "--upgrade", "pip", pip=f"{wheels[-1]}/pip")
    else:
        _pip("install", "--no-compile", "--upgrade", "pip")


def ensure_venv(extras: tuple[str, ...]) -> None:
    """Create .venv and install the project with ``extras`` when missing or out of date."""
    if sys.version_info < (3, 11):
        sys.exit(f"tasks.py: Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = STAMP.read_text().split() if STAMP.exists() else []
    installed = set(stamp[1].split(",")) if len(stamp) == 2 and stamp[0] == wanted else set()
    if PYTHON.exists() and set(extras) <= installed:
        return
    started = time.perf_counter()
    if not PYTHON.exists():
        print(f"tasks.py: creating virtual environment in {VENV}", flush=True)
        _create_venv()
    extras = tuple(sorted(set(extras) | installed))
    print(f"tasks.py: installing recmetrics with the extras {', '.join(extras)} "
          "(first run only; a few minutes)", flush=True)
    # --no-compile: pip would otherwise byte-compile every module of every package (7,400
    # files; installing the 73 packages took 280 s with it, 112 s without, on a loaded
    # machine); Python compiles the few modules a run imports when it first imports them.
    _pip("install", "--no-compile", "-e", f".[{','.join(extras)}]")
    STAMP.write_text(f"{wanted} {','.join(extras)}\n")
    print(f"tasks.py: installed in {time.perf_counter() - started:.0f} s", flush=True)


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
    ensure_venv(EXTRAS[argv[0]])
    # every extra is installed above, so a test that finds one missing fails instead of skipping
    env = {"RECMETRICS_REQUIRE_EXTRAS": "1"} if argv[0] == "test" else None
    if argv[0] in ("report", "execute"):  # long silent stretches (a notebook executing)
        _run_saying(*commands[argv[0]], *argv[1:])
    else:
        _run(*commands[argv[0]], *argv[1:], env=env)


if __name__ == "__main__":
    main(sys.argv[1:])
