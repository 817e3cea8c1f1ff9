"""Memory (and time) a command would need, estimated before it starts, and refused if too much."""
from __future__ import annotations

import os


class MemoryNeed(ValueError):
    """The work asked for would not fit in this machine's memory (or would run for days)."""




def _available_memory() -> int:
    """Bytes this process may still allocate (MemAvailable, or the physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:,.1f} GiB" if n >= 2 ** 30 else f"{n / 2 ** 20:,.0f} MiB"


def check(*, k, ideal: str, ndcg: bool, ci: float | None, n_resamples: int, n_users: int,
          n_metric_rows: int, command: str = "evaluate") -> None:
    """Refuse, before computing, what would not fit in memory (or would run for weeks).

    The estimates follow the arrays ``evaluate`` allocates: ``--ideal full`` keeps k
    ideal grades per user (about 32 bytes each with the kernel's temporaries); bootstrap
    intervals keep one value per resample and metric; the paired randomization test of
    ``compare`` draws n_users signs per resample in bounded chunks, so there time is what
    is estimated.
    """
    available = _available_memory()
    k_max = max(k)
    if ideal == "full" and ndcg:
        need = 32 * n_users * k_max
        if need > available:
            raise MemoryNeed(
                f"--k {k_max} with --ideal full needs about {_gib(need)} ({n_users:,} users x "
                f"{k_max:,} ideal positions) but {_gib(available)} is available; use a smaller "
                "--k or --ideal truth")
    if ci:
        need = 8 * n_resamples * (n_metric_rows + 2) + 16 * n_users * min(
            n_resamples, max(1, 2_000_000 // max(n_users, 1)))
        if need > available:
            raise MemoryNeed(
                f"--n-resamples {n_resamples:,} needs about {_gib(need)} for the bootstrap "
                f"intervals ({n_metric_rows} metric rows x {n_resamples:,} resamples) but "
                f"{_gib(available)} is available; use fewer resamples, e.g. --n-resamples 1000")
    if command == "compare":
        work = float(n_resamples) * n_users * n_metric_rows
        if work > 1e14:  # at ~1e9 sign flips a second: more than a day
            raise MemoryNeed(
                f"--n-resamples {n_resamples:,} means about {work:.0e} sign flips "
                f"({n_metric_rows} metric rows x {n_users:,} users x resamples), days of work; "
                "use fewer resamples, e.g. --n-resamples 10000")
