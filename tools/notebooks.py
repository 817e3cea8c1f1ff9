"""Execute the notebooks in place, outputs stored. Run through tasks.py.

    python tools/notebooks.py execute [--stale] [NOTEBOOK ...]   store fresh outputs in the .ipynb files

Two notebooks are executed at a time. ``--stale``: only the notebooks whose recorded
fingerprint differs from the one now (below).
The HTML site (python3 tasks.py report) is built by tools/book.py, which executes a notebook
with :func:`run` too, when its stored outputs are not known to be what it would compute now.

Every notebook runs top to bottom in a fresh kernel started in notebooks/, so execution counts
are 1, 2, 3, ... and figures are embedded as PNG. The kernel first runs
site_template/figure_alt.py, so that every figure's output carries the figure's own description
(``output.metadata["image/png"]["alt"]``, which book.py makes the page's alt text).

The fingerprint
---------------
:func:`run` records in the notebook's metadata (``metadata["recmetrics"]``) when it was executed
and a fingerprint of everything its outputs depend on (:func:`fingerprint`):

* ``code``: its code cells' sources, with the tags that change how they run (``raises-exception``,
  ``skip-execution``);
* ``recmetrics``: every file of the recmetrics package the kernel imports (its data and report
  templates too), by content;
* ``notebooks``: the other files of notebooks/ (the glossary) and every notebook's file name
  and title (the first page lists them);
* ``figure_alt``: site_template/figure_alt.py, which runs in the kernel;
* ``python`` and ``platform``; ``libraries``: the versions of the libraries the project declares
  (its dependencies and those of the ``report`` and ``notebooks`` extras: numpy, pandas, scipy,
  matplotlib, pyarrow, scikit-learn, the Jupyter pieces, ...) and of IPython and
  matplotlib-inline, which display the outputs (tests/test_book.py checks that every library a
  notebook imports is one of them).

:func:`changes` compares a stored notebook's record with the fingerprint now and says what
differs; nothing differs when the stored outputs are what executing it now would store (nbval,
in the test command, checks that claim for every notebook).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FIGURE_ALT = Path(__file__).resolve().parent / "site_template" / "figure_alt.py"

#: Where a notebook's record lives: ``nb.metadata[RECORD]`` = {"executed": time, "fingerprint": {...}}
RECORD = "recmetrics"
JOBS = 2                       # notebooks executed at once (each in its own kernel)
#: Bumped when what the fingerprint covers, or how a notebook is executed, changes.
SCHEME = 1
#: Tags that change how a cell runs (nbclient reads them), hence part of the code's fingerprint.
RUN_TAGS = frozenset({"raises-exception", "skip-execution"})
#: The extras whose declared dependencies are always fingerprinted (the kernel runs with them).
EXTRAS = ("report", "notebooks")

#: What the kernel shows outputs with, beside the declared libraries: IPython's displays and
#: the inline figures (matplotlib-inline's PNG).
KERNEL_LIBRARIES = frozenset({"ipython", "matplotlib-inline"})


def notebook_paths(args: list[str]) -> list[Path]:
    paths = [Path(a).resolve() for a in args] or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"notebooks.py: no such notebook: {', '.join(missing)}")
    return paths


# ---------------------------------------------------------------------------------------------
# The fingerprint


def _digest(items) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode("utf-8")).hexdigest()


def _files_digest(folder: Path, files) -> str:
    """One digest of ``files`` (their paths relative to ``folder`` and their contents)."""
    return _digest(sorted((p.relative_to(folder).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
                          for p in files))


def package_folder() -> Path:
    """The recmetrics package the kernel imports: the one this Python finds (same PYTHONPATH
    and site-packages as the kernel, which tools/ and notebooks/ do not shadow)."""
    spec = importlib.util.find_spec("recmetrics")
    if spec is None or spec.origin is None:
        sys.exit("notebooks.py: recmetrics is not importable; install the project (pip install -e .)")
    return Path(spec.origin).resolve().parent


def code_digest(nb: nbformat.NotebookNode) -> str:
    return _digest([[cell.source, sorted(RUN_TAGS & set(cell.metadata.get("tags", [])))]
                    for cell in nb.cells if cell.cell_type == "code"])


def package_digest(folder: Path | None = None) -> str:
    folder = folder or package_folder()
    return _files_digest(folder, (p for p in folder.rglob("*") if p.is_file()
                                  and "__pycache__" not in p.parts and p.suffix != ".pyc"))


def title(path: Path) -> str:
    """A notebook's first ``# `` heading."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def notebooks_digest(folder: Path = NOTEBOOKS) -> str:
    data = _files_digest(folder, (p for p in folder.iterdir() if p.is_file() and p.suffix != ".ipynb"))
    return _digest([data, [[p.name, title(p)] for p in sorted(folder.glob("*.ipynb"))]])


def _normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them (Pygments, pygments; scikit_learn, scikit-learn)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_libraries() -> set[str]:
    """The distributions the core and the ``EXTRAS`` declare in pyproject.toml (extras named
    inside an extra, ``metricbook[report]``, included)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names: set[str] = set()
    todo: list[str | None] = [None, *EXTRAS]        # None: the core's dependencies
    seen: set[str | None] = set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in (project["dependencies"] if extra is None
                            else project["optional-dependencies"][extra]):
            name = re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0]
            if name == project["name"]:
                todo += re.findall(r"\[([^\]]*)\]", requirement)[0].split(",")
            else:
                names.add(_normal(name))
    return names


def installed_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


class Context:
    """What every notebook's fingerprint shares, computed once (hashing the package folder)."""

    def __init__(self) -> None:
        self.recmetrics = package_digest()
        self.notebooks = notebooks_digest()
        self.figure_alt = hashlib.sha256(FIGURE_ALT.read_bytes()).hexdigest()
        self.python = platform.python_version()
        self.platform = f"{sys.platform}-{platform.machine()}"
        self.libraries = {name: installed_version(name)
                          for name in sorted(declared_libraries() | KERNEL_LIBRARIES)}


def fingerprint(nb: nbformat.NotebookNode, context: Context | None = None) -> dict:
    """The fingerprint of ``nb``'s outputs if it were executed now."""
    context = context or Context()
    return {"scheme": SCHEME, "code": code_digest(nb), "recmetrics": context.recmetrics,
            "notebooks": context.notebooks, "figure_alt": context.figure_alt,
            "python": context.python, "platform": context.platform,
            "libraries": context.libraries}


def record(nb: nbformat.NotebookNode) -> dict | None:
    """The notebook's record (``{"executed": ..., "fingerprint": {...}}``), or None."""
    found = nb.metadata.get(RECORD, {})
    return found if isinstance(found, dict) and isinstance(found.get("fingerprint"), dict) else None


_WHAT = {"scheme": "the fingerprint's scheme", "code": "its code cells",
         "recmetrics": "the recmetrics package's files",
         "notebooks": "the notebooks folder's glossary or titles",
         "figure_alt": "tools/site_template/figure_alt.py"}


def changes(nb: nbformat.NotebookNode, context: Context | None = None) -> list[str]:
    """What differs between the fingerprint recorded when ``nb`` was executed and the one now
    (empty: its stored outputs can be reused)."""
    stored = record(nb)
    if stored is None:
        return ["no fingerprint recorded (executed before fingerprints, or never)"]
    was = stored["fingerprint"]
    now = fingerprint(nb, context)
    found = [f"{_WHAT[key]} changed" for key in _WHAT if was.get(key) != now[key]]
    for key in ("python", "platform"):
        if was.get(key) != now[key]:
            found.append(f"{key.capitalize()} {was.get(key)} -> {now[key]}")
    libraries = was.get("libraries") if isinstance(was.get("libraries"), dict) else {}
    moved = [f"{name} {libraries.get(name, 'not recorded')} -> {version}"
             for name, version in now["libraries"].items() if libraries.get(name) != version]
    if moved:
        found.append(", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else ""))
    return found


def executed_at(nb: nbformat.NotebookNode) -> str:
    """When the stored outputs were recorded (UTC, to the minute), or ""."""
    stored = record(nb)
    return str(stored.get("executed", "")) if stored else ""


def _now() -> str:
    # SOURCE_DATE_EPOCH: a reproducible build's fixed time (the test suite sets one)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = int(epoch) if epoch and epoch.isdigit() else time.time()
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


# ---------------------------------------------------------------------------------------------
# Executing


def run(path: Path, context: Context | None = None) -> nbformat.NotebookNode:
    """Execute one notebook top to bottom in a fresh kernel started in its folder, which first
    runs site_template/figure_alt.py (figures describe themselves), and record its fingerprint.
    The one way both this tool and book.py execute a notebook."""
    context = context or Context()
    nb = nbformat.read(path, as_version=4)
    # the kernel's log level ERROR hides ipykernel's "[IPKernelApp] WARNING | Kernel is running
    # over TCP without encryption" (a local kernel, nothing to act on); its errors still show
    NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                   extra_arguments=["--IPKernelApp.log_level=ERROR",
                                    f"--IPKernelApp.exec_files={[str(FIGURE_ALT)]!r}"],
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    kernel_python = nb.metadata.get("language_info", {}).get("version")
    if kernel_python != context.python:
        sys.exit(f"notebooks.py: the kernel runs Python {kernel_python}, this tool {context.python}: "
                 "run the tool with the Python of the environment the notebooks run in")
    nb.metadata[RECORD] = {"executed": _now(), "fingerprint": fingerprint(nb, context)}
    return nb


def execute(paths: list[Path], stale_only: bool = False, jobs: int = JOBS) -> None:
    """Execute ``paths`` (``jobs`` at a time) and store their outputs and fingerprints in them;
    with ``stale_only``, only those whose recorded fingerprint differs from the one now."""
    context = Context()
    todo = []
    for path in paths:
        shown = path.relative_to(ROOT) if ROOT in path.parents else path
        if stale_only:
            changed = changes(nbformat.read(path, as_version=4), context)
            if not changed:
                print(f"{shown}: fingerprint matches, kept", flush=True)
                continue
            print(f"executing {shown}: {'; '.join(changed)}", flush=True)
        else:
            print(f"executing {shown}", flush=True)
        todo.append(path)
    done = [0]

    def one(path: Path) -> None:
        began = time.perf_counter()
        nbformat.write(run(path, context), path)
        done[0] += 1
        print(f"  [{done[0]:>2}/{len(todo)}] stored {path.name} ({time.perf_counter() - began:.0f} s)", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, todo))


def main(argv: list[str]) -> None:
    if not argv or argv[0] != "execute":
        sys.exit(__doc__.split("\n\n")[1])
    stale_only = "--stale" in argv[1:]
    execute(notebook_paths([a for a in argv[1:] if a != "--stale"]), stale_only)


if __name__ == "__main__":
    main(sys.argv[1:])
