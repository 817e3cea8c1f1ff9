"""Execute the notebooks in place, outputs stored. Run through tasks.py.

    python tools/notebooks.py execute [NOTEBOOK ...]   store fresh outputs in the .ipynb files

The HTML site (python3 tasks.py report) is built by tools/book.py, which executes them the same way.

Every notebook runs top to bottom in a fresh kernel started in notebooks/, so
execution counts are 1, 2, 3, ... and figures are embedded as PNG.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def notebook_paths(args: list[str]) -> list[Path]:
    paths = [Path(a).resolve() for a in args] or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"notebooks.py: no such notebook: {', '.join(missing)}")
    return paths


def run(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    # the kernel's log level ERROR hides ipykernel's "[IPKernelApp] WARNING | Kernel is running
    # over TCP without encryption" (a local kernel, nothing to act on); its errors still show
    NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                   extra_arguments=["--IPKernelApp.log_level=ERROR"],
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def execute(paths: list[Path]) -> None:
    for path in paths:
        print(f"executing {path.relative_to(ROOT)}", flush=True)
        nbformat.write(run(path), path)


def main(argv: list[str]) -> None:
    if not argv or argv[0] != "execute":
        sys.exit(__doc__)
    execute(notebook_paths(argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
