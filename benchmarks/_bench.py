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


def interleaved_times(calls: dict, rounds: int = 5,
                      cpu: dict[str, list[float]] | None = None) -> dict[str, list[float]]:
    """Wall-clock times of each of ``calls`` (name -> function), ``rounds`` times each,
    one call of each per round in a rotating order (after a garbage collection each), so
    that a slow stretch of a shared machine falls on every call alike rather than on
    whichever ran then. The first round is a warm-up, not counted. With ``cpu`` (a dict),
    the CPU time of the process in each call (all its threads: ``time.process_time``,
    less sensitive to other processes' load) is put there too, name -> list."""
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in names}
    if cpu is not None:
        cpu.update({name: [] for name in names})
    for r in range(rounds + 1):
        for name in names[r % len(names):] + names[:r % len(names)]:
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            calls[name]()
            if r:
                times[name].append(time.perf_counter() - start)
                if cpu is not None:
                    cpu[name].append(time.process_time() - start_cpu)
    return times


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
