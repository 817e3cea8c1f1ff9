"""Timing and printing shared by the benchmark scripts (run as `python benchmarks/<script>.py`)."""
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


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """A benchmark's result: a title line, then a markdown table."""
    print(f"# {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
