"""Rendering the HTML report: the notebook ``templates/report.ipynb`` executed and exported.

``recmetrics report`` calls :func:`render_report` with its files and options as
parameters; they are injected in a cell after the template's cell tagged
``parameters``. The executed notebook is exported to one self-contained HTML
file (figures embedded as PNG, code cells hidden, nothing fetched from the
network) and written atomically (:mod:`recmetrics.io`).

The Jupyter packages it needs (nbformat, nbclient, nbconvert, ipykernel) are the
``report`` extra: ``pip install metricbook[report]``. Nothing here imports them
before :func:`render_report` runs, and this module never imports the command line.

Interrupting (Ctrl-C, SIGINT) while the notebook runs stops its kernel, writes
nothing and raises ``KeyboardInterrupt``: the kernel runs in its own session
(as jupyter_client starts it), so a terminal's Ctrl-C reaches only this process,
which then kills the kernel's process group and waits for the executing thread
to clean up (connection file included).
"""
from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from .io import FileProblem, Output, plan_output, write_output

__all__ = ["TEMPLATE", "ReportError", "ReportUnavailable", "render_report", "require_jupyter",
           "template_cells", "matplotlib_fonts"]

TEMPLATE = Path(__file__).resolve().parent / "templates" / "report.ipynb"
_JUPYTER = ("nbformat", "nbclient", "nbconvert", "ipykernel")


class ReportError(FileProblem):
    """The report notebook failed on input that passed the command's checks."""


class ReportUnavailable(FileProblem):
    """The Jupyter packages of the ``report`` extra are not installed."""


def require_jupyter() -> None:
    """Raise :class:`ReportUnavailable` (one line, with the pip command) if an extra is missing."""
    import importlib

    missing = []
    for name in _JUPYTER:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ReportUnavailable(f"the report needs the Jupyter packages of the 'report' extra "
                                f"(missing: {', '.join(missing)}); install them with "
                                "pip install metricbook[report]")


def template_cells(template=None) -> int:
    """Number of code cells the template runs (for a progress bar)."""
    import nbformat

    return sum(c.cell_type == "code" for c in nbformat.read(template or TEMPLATE,
                                                             as_version=4).cells) + 1


_REPORT_HTML_TEMPLATE = r"""{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
<style type="text/css">
  body.jp-Notebook { max-width: 1100px; margin: 0 auto; padding: 1.5em 2em 4em; }
  .jp-RenderedHTMLCommon { font-size: 15px; line-height: 1.5; }
  .jp-RenderedHTMLCommon h1 { font-size: 1.9em; margin-top: 0.4em; }
  .jp-RenderedHTMLCommon h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
  .jp-RenderedHTMLCommon table { font-size: 14px; }
  .jp-OutputArea-output img { max-width: 100%; height: auto; }
</style>
{%- endblock extra_css -%}
"""

#: Fonts with CJK glyphs, most common first (Debian's fonts-noto-cjk, fonts-wqy-*, macOS, Windows).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR",
             "Noto Sans SC", "Source Han Sans SC", "Source Han Sans", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN", "PingFang SC",
             "Heiti SC", "Hiragino Sans GB", "Microsoft YaHei", "SimHei", "SimSun")


def matplotlib_fonts() -> list[str]:
    """Set matplotlib's sans-serif font list to DejaVu Sans plus a CJK font, where one exists.

    matplotlib (3.6+) falls back glyph by glyph along ``font.family``, so Latin
    text keeps DejaVu Sans and Chinese, Japanese or Korean text in titles and
    legends is drawn with the first CJK font installed instead of as empty boxes
    (with a "Glyph missing" warning). Also turns mathtext off (``text.parse_math``): the
    report's labels come from the data, and a ``$`` in a name is shown as written. Returns
    the list set.
    """
    import matplotlib as mpl
    from matplotlib import font_manager

    def find():
        installed = {f.name for f in font_manager.fontManager.ttflist}
        found = [name for name in CJK_FONTS if name in installed]
        return found or sorted(name for name in installed if "CJK" in name)[:1]

    cjk = find()
    if not cjk:  # installed after matplotlib cached its font list: look at the system's files
        hints = ("cjk", "wqy", "wenquanyi", "droidsansfallback", "sourcehan", "uming", "ukai")
        for path in font_manager.findSystemFonts():
            if any(h in Path(path).name.lower().replace("-", "") for h in hints):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        cjk = find()
    families = ["DejaVu Sans"] + cjk[:1]
    mpl.rcParams["font.family"] = families
    # The report's labels are data (file, model and slice names): shown as written, a "$" in
    # them is not the start of mathtext (which could also fail to parse and stop the report).
    mpl.rcParams["text.parse_math"] = False
    return families


def _parameters_cell(parameters: dict):
    import nbformat

    lines = ["# Parameters injected by `recmetrics report`"]
    lines += [f"{name} = {value!r}" for name, value in parameters.items()]
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    cell.id = "injected-parameters"  # not a random id: the same inputs give the same HTML
    cell.metadata["tags"] = ["injected-parameters"]
    return cell


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _kill_kernel(client) -> None:
    """SIGKILL the kernel's process group (it is a session leader) if it was started."""
    km = getattr(client, "km", None)
    provisioner = getattr(km, "provisioner", None) if km is not None else None
    process = getattr(provisioner, "process", None) if provisioner is not None else None
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass


def render_report(parameters: dict, output: Output | str | os.PathLike, *,
                  on_cell: Callable[[], None] | None = None, template=None, workdir=None) -> str:
    """Execute the report notebook with ``parameters`` and write it to ``output`` as HTML.

    Parameters
    ----------
    parameters : dict
        Values for the template's parameters (see its cell tagged ``parameters``).
    output : Output or path
        Where to write (an :class:`recmetrics.io.Output` from ``plan_output``, or a path).
    on_cell : callable, optional
        Called after each code cell has run (progress).
    template : path, optional
        Another notebook to run instead of ``templates/report.ipynb``.
    workdir : path, optional
        Working folder of the kernel (default: the current one).

    Returns
    -------
    str
        The HTML written.

    Raises
    ------
    ReportUnavailable
        The Jupyter packages are missing (``pip install metricbook[report]``).
    ReportError
        A cell failed, or the kernel died; nothing was written.
    KeyboardInterrupt
        On Ctrl-C: the kernel is stopped and nothing was written.
    """
    require_jupyter()
    import nbformat
    from jinja2 import DictLoader
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError
    from nbconvert import HTMLExporter

    if not isinstance(output, Output):
        output = plan_output(output, allowed=("html",), option="output")
    nb = nbformat.read(template or TEMPLATE, as_version=4)
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    position = tagged[0] + 1 if tagged else 0
    nb.cells.insert(position, _parameters_cell(parameters))
    title = parameters.get("title") or f"recmetrics report: {parameters.get('pred_name')}"
    nb.metadata["title"] = title

    def executed(cell, cell_index, **_):
        if on_cell is not None and cell.cell_type == "code":
            on_cell()

    client = NotebookClient(nb, timeout=None, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir or Path.cwd())}},
                            on_cell_executed=executed)
    outcome: dict = {}

    def run():
        try:
            # the kernel's own log lines (ipykernel warnings) would reach our stderr: drop them
            client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except BaseException as error:  # noqa: BLE001 (handed to the main thread)
            outcome["error"] = error

    # The notebook runs in a worker thread so that Ctrl-C always reaches this (main) thread
    # as KeyboardInterrupt, whatever asyncio does inside nbclient.
    worker = threading.Thread(target=run, name="recmetrics-report", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        while worker.is_alive():  # kill the kernel (again, if it was starting) until nbclient gives up
            _kill_kernel(client)
            worker.join(0.2)
        # nbclient registered an exit hook that would talk to the killed kernel and print a
        # traceback at exit if the interrupt came before its own cleanup; the kernel is gone
        cleanup = getattr(client, "_cleanup_kernel", None)
        if cleanup is not None:
            atexit.unregister(cleanup)
        raise
    error = outcome.get("error")
    if isinstance(error, CellExecutionError):
        failed = next((c for c in nb.cells if c.cell_type == "code" and any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        detail = next((f"{o['ename']}: {o['evalue']}" for o in (failed or {}).get("outputs", [])
                       if o.get("output_type") == "error"), _first_line(str(error)))
        raise ReportError(f"the report notebook failed ({_first_line(detail)}); no report was "
                          "written")
    if isinstance(error, DeadKernelError):
        raise ReportError("the Python kernel running the report died (out of memory?); no report "
                          "was written")
    if error is not None:
        raise error

    exporter = HTMLExporter(extra_loaders=[DictLoader({"recmetrics_report.html.j2":
                                                       _REPORT_HTML_TEMPLATE})],
                            template_file="recmetrics_report.html.j2", exclude_input=True,
                            exclude_input_prompt=True, exclude_output_prompt=True,
                            embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    write_output(output, body)
    return body
