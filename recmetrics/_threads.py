"""The threads recmetrics runs numpy work in: how many (:func:`threads`), a pool that maps a
function over chunks (:func:`thread_map`) and work started beside the caller
(:func:`in_background`).

numpy releases the GIL in sorts, gathers and ufuncs, so chunks of rows run side by side on
the cores the process may use. ``RECMETRICS_NUM_THREADS=1`` keeps recmetrics on one core;
results are the same either way.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor


def threads() -> int:
    """Threads the ranking may use: the ``RECMETRICS_NUM_THREADS`` environment variable, or
    the cores this process may run on."""
    wanted = os.environ.get("RECMETRICS_NUM_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_POOL: tuple[int, int, ThreadPoolExecutor] | None = None


def thread_map(fn, items: range) -> list:
    """``fn`` over ``items``, on a thread pool when there is more than one core and item.

    numpy releases the GIL in sorts, gathers and ufuncs, so chunks of rows
    ranked in threads run side by side. The pool is made again in a forked
    child (its threads do not survive the fork) and when the thread count changes.
    """
    global _POOL
    n = threads()
    if n < 2 or len(items) < 2:
        return [fn(i) for i in items]
    if _POOL is None or _POOL[:2] != (os.getpid(), n):
        _POOL = (os.getpid(), n, ThreadPoolExecutor(n, thread_name_prefix="recmetrics"))
    return list(_POOL[2].map(fn, items))


def in_background(fn, *args) -> Future:
    """``fn(*args)`` in a thread of its own while the caller goes on; its result (or its
    exception) from the returned future. Work that does not need the caller's results
    fills the cores the caller leaves idle (its stretches of pandas and Python run on one
    core). With one thread allowed (:func:`threads`) it runs at once, in the caller. The
    thread is a daemon: a caller that fails and exits does not wait for it."""
    future: Future = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to whoever reads the result
                future.set_exception(exc)

    if threads() < 2:
        run()
    else:
        threading.Thread(target=run, daemon=True, name="recmetrics-background").start()
    return future
