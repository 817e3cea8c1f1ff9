"""Execute the notebooks, in place or into an HTML report. Run through tasks.py.

    python tools/notebooks.py execute [NOTEBOOK ...]   store fresh outputs in the .ipynb files
    python tools/notebooks.py report  [NOTEBOOK ...]   write build/<name>.html and build/index.html

Every notebook runs top to bottom in a fresh kernel started in notebooks/, so
execution counts are 1, 2, 3, ... and figures are embedded as PNG.
"""
from __future__ import annotations

import html
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"


def notebook_paths(args: list[str]) -> list[Path]:
    paths = [Path(a).resolve() for a in args] or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"notebooks.py: no such notebook: {', '.join(missing)}")
    return paths


def run(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def title_and_summary(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """The first heading and the paragraph after it, from the first markdown cell."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = [line.strip() for line in cell.source.splitlines()]
        title = next((line.lstrip("# ") for line in lines if line.startswith("#")), "")
        body = [line for line in lines if line and not line.startswith("#")]
        return title, (body[0] if body else "")
    return "", ""


def execute(paths: list[Path]) -> None:
    for path in paths:
        print(f"executing {path.relative_to(ROOT)}", flush=True)
        nbformat.write(run(path), path)


def report(paths: list[Path]) -> None:
    BUILD.mkdir(exist_ok=True)
    exporter = HTMLExporter()
    rows = []
    for path in paths:
        print(f"executing {path.relative_to(ROOT)} -> build/{path.stem}.html", flush=True)
        nb = run(path)
        body, _ = exporter.from_notebook_node(nb)
        target = BUILD / f"{path.stem}.html"
        partial = target.with_suffix(".html.part")
        partial.write_text(body, encoding="utf-8")
        partial.replace(target)
        title, summary = title_and_summary(nb)
        rows.append(f'<li><a href="{html.escape(target.name)}">{html.escape(title or path.stem)}'
                    f"</a><p>{html.escape(summary)}</p></li>")
    index = BUILD / "index.html"
    index.write_text(
        "<!doctype html><html lang=en><meta charset=utf-8><title>recmetrics notebooks</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.4}"
        "li{margin-bottom:1em}p{margin:.2em 0;color:#444}</style>"
        "<h1>recmetrics notebooks</h1><p>Each page is a notebook executed top to bottom by "
        "<code>python3 tasks.py report</code>.</p><ol>" + "".join(rows) + "</ol></html>\n",
        encoding="utf-8")
    print(f"wrote {index.relative_to(ROOT)} and {len(rows)} notebook page(s)")


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in ("execute", "report"):
        sys.exit(__doc__)
    (execute if argv[0] == "execute" else report)(notebook_paths(argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
