"""The command line end to end on a CSV pair, against reading both files with pyarrow + one argsort.

    .venv/bin/python benchmarks/bench_cli.py            # 10^7 rows: 10^5 users x 100 items
    .venv/bin/python benchmarks/bench_cli.py --quick    # 10^6 rows: 10^4 users x 100 items

Target (issue 9, "Speed"): on the path a user actually runs (``recmetrics evaluate
scores.csv --truth truth.csv``, string ids, a separate truth file), end to end at most 4x
the time of the baseline (pyarrow's CSV reader on both files, ids as strings, plus one
``np.argsort`` of the scores), and a peak memory of at most 1.5 GiB.

How it is measured
------------------
* The files are generated once into a temporary folder (seeded): ``scores.csv`` with
  user, item, score (distinct floats) and ``truth.csv`` with user, item, label for the
  5% relevant pairs plus as many irrelevant ones (a judged subset, as real logs have).
  User ids look like ``u0012345``, item ids like ``i0042``.
* Each side runs in a fresh process (``python -m recmetrics evaluate ... -o out.json`` and
  a small baseline script), so imports count and one run's memory does not disturb the
  other. Time is the best of ``--repeat`` runs of the whole process (wall clock); peak
  memory is the process's maximum resident set size (``ru_maxrss`` of the child). The files
  are written by another child, so that this process, which the measured ones are forked
  from, stays small (a forked child's max RSS starts at its parent's; printed below).
"""
from __future__ import annotations

import argparse
import atexit
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import print_table, scored_log

BASELINE = r"""
import sys
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
ids = {"user": pa.string(), "item": pa.string()}
scores = pacsv.read_csv(sys.argv[1], convert_options=pacsv.ConvertOptions(
    column_types={**ids, "score": pa.float64()}))
truth = pacsv.read_csv(sys.argv[2], convert_options=pacsv.ConvertOptions(
    column_types={**ids, "label": pa.float64()}))
order = np.argsort(scores.column("score").to_numpy())
print(len(order), truth.num_rows)
"""


def write_files(folder: Path, n_users: int, n_items: int, seed: int = 2024) -> tuple[Path, Path]:
    """scores.csv and truth.csv for n_users x n_items scored pairs (pyarrow's CSV writer)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    users, items, score, label = scored_log(n_users, n_items, rng)
    scores_path, truth_path = folder / "scores.csv", folder / "truth.csv"
    pacsv.write_csv(pa.table({"user": users, "item": items, "score": score}), scores_path)
    judged = (label > 0) | (rng.random(label.size) < 0.05)
    pacsv.write_csv(pa.table({"user": users[judged], "item": items[judged],
                              "label": label[judged]}), truth_path)
    return scores_path, truth_path


#: Compiled modules of the timed children, kept between runs as an installed package keeps
#: them (even where PYTHONDONTWRITEBYTECODE is set): the first run compiles, the best run of
#: several does not. Nothing is written beside the sources.
_PYCACHE = tempfile.mkdtemp(prefix="bench_pycache.")
atexit.register(shutil.rmtree, _PYCACHE, ignore_errors=True)
_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPYCACHEPREFIX": _PYCACHE}


def measure(command: list[str], repeat: int) -> tuple[float, int]:
    """Best wall time of ``repeat`` runs and the largest peak RSS (bytes) of the command."""
    best, peak = float("inf"), 0
    for _ in range(repeat):
        with tempfile.TemporaryFile() as errors:
            start = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors,
                                       env=_ENV)
            _, status, usage = os.wait4(process.pid, 0)   # this child's own resource usage
            elapsed = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            if process.returncode:
                errors.seek(0)
                sys.exit(f"failed: {' '.join(command)}\n{errors.read().decode()[-2000:]}")
        best = min(best, elapsed)
        peak = max(peak, usage.ru_maxrss * 1024)           # KiB on Linux
    return best, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 rows instead of 10^7")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side (default 2)")
    args = parser.parse_args()
    n_users = 10_000 if args.quick else 100_000
    n_items = 100
    with tempfile.TemporaryDirectory(prefix="bench_cli.") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        # in a child process: a process forked from a big parent starts with the parent's
        # resident pages in its max RSS, so this process must stay small
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "from bench_cli import write_files; from pathlib import Path; "
                        "write_files(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))",
                        str(Path(__file__).resolve().parent), str(folder), str(n_users),
                        str(n_items)], check=True)
        scores, truth = folder / "scores.csv", folder / "truth.csv"
        print(f"wrote {n_users * n_items:,} scored rows ({scores.stat().st_size / 2**20:,.0f} MiB) "
              f"and {sum(1 for _ in open(truth)) - 1:,} judged rows "
              f"({truth.stat().st_size / 2**20:,.0f} MiB) in {time.perf_counter() - start:.0f} s\n",
              flush=True)
        baseline = [sys.executable, "-c", BASELINE, str(scores), str(truth)]
        base_time, base_peak = measure(baseline, args.repeat)
        command = [sys.executable, "-m", "recmetrics", "evaluate", str(scores), "--truth",
                   str(truth), "--k", "10", "-o", str(folder / "out.json")]
        cli_time, cli_peak = measure(command, args.repeat)
    rows = [
        [f"recmetrics evaluate, {n_users * n_items:.0e} rows, all metrics @10", f"{cli_time:.1f} s",
         "pyarrow read_csv of both files + np.argsort(scores)", f"{base_time:.1f} s",
         f"{cli_time / base_time:.1f}x", "<= 4x", "met" if cli_time <= 4 * base_time else "not met"],
        ["peak memory (max RSS) of the command", f"{cli_peak / 2**30:.2f} GiB",
         "peak memory of the baseline", f"{base_peak / 2**30:.2f} GiB",
         f"{cli_peak / base_peak:.1f}x", "<= 1.5 GiB",
         "met" if cli_peak <= 1.5 * 2**30 else "not met"],
    ]
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"(the benchmark process itself peaked at {own / 2**20:.0f} MiB: a floor under both "
          "peaks below)\n")
    print_table(f"recmetrics evaluate end to end ({platform.machine()}, "
                f"{os.cpu_count()} cores, numpy {np.__version__})",
                ["what", "time / memory", "baseline", "baseline", "ratio", "target", ""], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
