"""Progress of a command on stderr: named stages, each a bar that keeps moving while it runs."""
from __future__ import annotations

import shutil
import sys
import threading

class Progress:
    """Named stages on stderr, each a tqdm bar that keeps moving (elapsed time) while it runs.

    Shown when stderr is a terminal, or with ``--progress``; never with ``--quiet``.
    A stage with a known size (bytes of a file, code cells of the report) fills its bar;
    a stage without one (computing the metrics) shows its elapsed time, refreshed four
    times a second by a background thread so that it never stands still.
    """

    def __init__(self, stages: int, enabled: bool, file=None):
        self.enabled, self.stages, self.number = enabled, stages, 0
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

    def step(self, n: int = 1) -> None:
        if self.bar is not None:
            with self._lock:
                self.bar.update(n)

    def bytes_read(self, done: int, total: int) -> None:
        if self.bar is not None:
            with self._lock:
                self.bar.n = done
                self.bar.refresh()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self.bar is not None:
                self.bar.close()
                self.bar = None


def for_command(args, stages: int) -> Progress:
    enabled = not args.quiet and (args.progress or sys.stderr.isatty())
    return Progress(stages, enabled)
