"""Timing, printing and the generated log shared by the benchmark scripts (run as
`python benchmarks/<script>.py`)."""
from __future__ import annotations

import gc
import time

import numpy as np


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


def scored_log(n_users: int, n_items: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(user, item, score, label) of n_users x n_items scored pairs as text ids, 5% relevant
    (scores raised by 0.3, distinct with probability 1), in random row order: a log is not
    sorted by user."""
    n = n_users * n_items
    users = np.char.mod("u%07d", np.repeat(np.arange(n_users), n_items))
    items = np.char.mod("i%04d", rng.permuted(np.tile(np.arange(n_items), (n_users, 1)),
                                              axis=1).ravel())
    label = (rng.random(n) < 0.05).astype(np.int64)
    score = rng.random(n) + 0.3 * label
    order = rng.permutation(n)
    return users[order], items[order], score[order], label[order]
