"""Run every benchmark in one go and print their tables (``python3 tasks.py bench`` calls this).

    .venv/bin/python benchmarks/run_all.py            # full sizes (several minutes)
    .venv/bin/python benchmarks/run_all.py --quick    # 10x smaller inputs, a smoke run

Runs benchmarks/bench_core.py, bench_evaluate.py, bench_sampling.py, bench_cli.py, bench_files.py,
bench_slices.py, bench_compare.py, bench_beyond.py, bench_intervals.py and bench_distributed.py (the Dask engine on
3*10^7 rows, --quick 3*10^6), one after the other in separate processes, so one
benchmark's memory and threads do not disturb the next. Each prints a markdown table of
ratios. The exit status is that of the first benchmark that failed (a failed agreement check
counts), 0 when all ran.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["bench_core.py", "bench_evaluate.py", "bench_sampling.py", "bench_cli.py",
              "bench_files.py", "bench_slices.py", "bench_compare.py", "bench_beyond.py",
              "bench_intervals.py", "bench_distributed.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller inputs in every benchmark")
    args = parser.parse_args()
    status = 0
    for name in BENCHMARKS:
        script = HERE / name
        print(f"## {name}\n", flush=True)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(script)] + (["--quick"] if args.quick else []),
                              cwd=HERE.parent)
        print(f"\n({name} took {time.perf_counter() - start:.0f} s, exit status {done.returncode})\n",
              flush=True)
        status = status or done.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
