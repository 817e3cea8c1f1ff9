"""Timing shared by the benchmark scripts (run as `python benchmarks/<script>.py`)."""
from __future__ import annotations

import gc
import time


def best_time(fn, *args, repeat: int = 3, **kwargs) -> float:
    """Best wall-clock time of ``repeat`` calls, after a garbage collection each."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best
