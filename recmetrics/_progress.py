"""Progress of a command on stderr: named stages, each a bar that keeps moving while it runs.

Loops inside the computation (over resamples, slices, models) report to the running
command's :class:`Progress` through :func:`counter` (a bar with the fraction done and tqdm's
estimate of the time left), and :func:`announce` says before work predicted to take more than
:data:`LONG_WORK` seconds how long it should take and how to make it cheaper. Outside a
command (the Python API) loops show nothing and the announcement is one line on stderr.
"""
from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Callable

#: Work predicted to take longer than this many seconds is announced before it starts.
LONG_WORK = 30.0

#: The progress of the command that is running, if any (set by :func:`for_command`).
_current: Progress | None = None

class Progress:
    """Named stages on stderr, each a tqdm bar that keeps moving (elapsed time) while it runs.

    Shown when stderr is a terminal, or with ``--progress``; never with ``--quiet``.
    A stage with a known size (bytes of a file, code cells of the report) fills its bar;
    a stage without one (computing the metrics) shows its elapsed time, refreshed four
    times a second by a background thread so that it never stands still.
    """

    def __init__(self, stages: int, enabled: bool, file=None, quiet: bool = False):
        self.enabled, self.stages, self.number = enabled, stages, 0
        self.quiet = quiet
        self.file = file
        self.bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = None
        if enabled:
            self._ticker = threading.Thread(target=self._tick, name="recmetrics-progress",
                                            daemon=True)
            self._ticker.start()

    def _tick(self):
        while not self._stop.wait(0.25):
            with self._lock:
                if self.bar is not None:
                    self.bar.refresh()

    def stage(self, description: str, total: float | None = None, unit: str = "it") -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        self.number += 1
        size = shutil.get_terminal_size()
        with self._lock:
            if self.bar is not None:
                self.bar.close()
            desc = f"[{self.number}/{self.stages}] {description}"
            fmt = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}]"
                   if total else "{desc}: [{elapsed}]")
            self.bar = tqdm(total=total, desc=desc, file=self.file or sys.stderr, leave=False, unit=unit,
                            unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000,
                            ncols=min(100, size.columns), nrows=size.lines, bar_format=fmt,
                            mininterval=0.1)

    def loop(self, description: str, total: int, unit: str) -> None:
        """The current stage's bar becomes a counted one: fraction done and time left."""
        if not self.enabled:
            return
        from tqdm import tqdm

        size = shutil.get_terminal_size()
        with self._lock:
            if self.bar is not None:
                self.bar.close()
            desc = f"[{max(self.number, 1)}/{self.stages}] {description}"
            self.bar = tqdm(total=total, desc=desc, file=self.file or sys.stderr, leave=False,
                            unit=unit, ncols=min(100, size.columns), nrows=size.lines,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                       "[{elapsed}<{remaining}]", mininterval=0.1)

    def notice(self, line: str) -> None:
        """One line on stderr above the bar (nothing when the command is quiet)."""
        if self.quiet:
            return
        if self.bar is not None:
            from tqdm import tqdm

            with self._lock:
                tqdm.write(line, file=self.file or sys.stderr)
        else:
            print(line, file=self.file or sys.stderr, flush=True)

    def step(self, n: int = 1) -> None:
        if self.bar is not None:
            with self._lock:
                self.bar.update(n)
                if self.bar.total and self.bar.n >= self.bar.total:
                    self.bar.refresh()   # the last count is shown, however soon the next comes

    def bytes_read(self, done: int, total: int) -> None:
        if self.bar is not None:
            with self._lock:
                self.bar.n = done
                self.bar.refresh()

    def close(self) -> None:
        global _current
        if _current is self:
            _current = None
        self._stop.set()
        with self._lock:
            if self.bar is not None:
                self.bar.close()
                self.bar = None


def for_command(args, stages: int) -> Progress:
    """The progress of a command, which the loops of its computation report to."""
    global _current
    enabled = not args.quiet and (args.progress or sys.stderr.isatty())
    _current = Progress(stages, enabled, quiet=args.quiet)
    return _current


def _ignore(n: int = 1) -> None:
    """The counter of a loop nobody watches."""


def counter(description: str, total: int, unit: str) -> Callable[[int], None]:
    """Count a loop's ``total`` steps in the running command's bar (fraction done, time
    left); returns the function to call with each finished batch of steps (any thread)."""
    progress = _current
    if progress is None or not progress.enabled or total < 2:
        return _ignore
    progress.loop(description, total, unit)
    return progress.step


def announce(seconds: float, what: str, cheaper: str) -> None:
    """Before work predicted to take more than :data:`LONG_WORK` seconds: one line on stderr
    saying so and how to make it cheaper."""
    if seconds <= LONG_WORK:
        return
    line = f"recmetrics: {what} should take about {_duration(seconds)} here; {cheaper}"
    if _current is not None:
        _current.notice(line)
    else:
        print(line, file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    """30 s, 4 min, 2.5 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class _Polled:
    """A background thread that moves the running command's bar to ``poll()``'s (done,
    total) twice a second, for work counted elsewhere (a Spark job's tasks)."""

    def __init__(self, progress: Progress, description: str, unit: str,
                 poll: Callable[[], tuple[int, int]]):
        self.progress, self.description, self.unit, self.poll = progress, description, unit, poll
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="recmetrics-polled", daemon=True)
        self.total = 0

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            try:
                done, total = self.poll()
            except Exception:   # a status query that fails only leaves the bar as it is
                continue
            if total <= 0:
                continue
            if not self.total:   # the first count: a counted bar (its clock starts now)
                self.progress.loop(self.description, total, self.unit)
            self.total = total
            bar = self.progress.bar
            if bar is not None:
                with self.progress._lock:
                    bar.total = total   # more stages known: the same bar, a longer count
                    bar.n = min(done, total)
                    bar.refresh()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def polled(description: str, unit: str, poll: Callable[[], tuple[int, int]]):
    """A context in which the running command's bar shows ``poll()``'s (done, total): the
    fraction done and the time left of work another system counts (Spark's tasks). Nothing
    outside a command, or when its progress is not shown."""
    import contextlib

    progress = _current
    if progress is None or not progress.enabled:
        return contextlib.nullcontext()
    return _Polled(progress, description, unit, poll)
