"""Run in the kernel that tools/notebooks.py starts (``exec_files``): every figure describes itself.

Before each cell runs, the PNG formatter of matplotlib figures (registered by ``%matplotlib
inline``) is wrapped so that it also returns metadata ``{"alt": text}``: the figure's
suptitle, then :func:`recmetrics.plots.describe` of each panel that has data (the summary a
recmetrics plot recorded, the title, the axis labels and ranges, the legend). The stored
output then carries it as ``output.metadata["image/png"]["alt"]``, which book.py reads.
Nothing is imported that the notebook did not import (matplotlib is looked up in
``sys.modules``), and no name is left in the notebook's namespace.
"""


def _recmetrics_figure_alt() -> None:
    import sys

    shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821  (IPython's builtin)

    def described(figure) -> str:
        from recmetrics.plots import describe

        parts = []
        suptitle = getattr(figure, "_suptitle", None)
        if suptitle is not None and suptitle.get_text().strip():
            parts.append(" ".join(suptitle.get_text().split()) + ".")
        panels = [ax for ax in figure.axes if ax.get_visible() and ax.has_data()]
        for i, ax in enumerate(panels):
            text = describe(ax)
            if text:
                parts.append(f"Panel {i + 1} of {len(panels)}: {text}" if len(panels) > 1
                             else text)
        return " ".join(parts)

    def with_alt(printer):
        def printer_with_alt(figure):
            data = printer(figure)
            try:
                alt = described(figure)
            except Exception:  # a description must never break a figure
                alt = ""
            return (data, {"alt": alt}) if data is not None and alt else data
        printer_with_alt.recmetrics_alt = True
        return printer_with_alt

    def wrap_figure_printer(*_) -> None:
        module = sys.modules.get("matplotlib.figure")
        if module is None:
            return
        formatter = shell.display_formatter.formatters["image/png"]
        try:
            printer = formatter.lookup_by_type(module.Figure)
        except KeyError:
            return
        if not getattr(printer, "recmetrics_alt", False):
            formatter.for_type(module.Figure, with_alt(printer))

    shell.events.register("pre_run_cell", wrap_figure_printer)
    shell.events.register("post_run_cell", wrap_figure_printer)


_recmetrics_figure_alt()
del _recmetrics_figure_alt
