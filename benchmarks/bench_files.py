"""Files end to end against a hand-written DuckDB query and against the floor (issue 19).

    .venv/bin/python benchmarks/bench_files.py            # 10^7 rows: 10^5 users x 100 items
    .venv/bin/python benchmarks/bench_files.py --quick    # 10^6 rows: 10^4 users x 100 items

Targets (issue 19, "Speed on files"): on a scores file with a *full* truth file (every scored
pair judged, string ids), CSV and Parquet, each side in a fresh process:

* ``recmetrics evaluate`` at most 2.5x the floor: pyarrow reading both files (ids as strings)
  plus one ``np.argsort`` of the scores;
* faster than a DuckDB SQL query computing the same metrics (global AUC, P@10, MRR, NDCG@10)
  on the same files; DuckDB breaks ties arbitrarily, so the scores are distinct and the
  query's values are checked against recmetrics' to 1e-9;
* peak memory (max RSS of the process) at most 1.2 GiB;
* ``python -m recmetrics evaluate`` on the shipped sample at most 1.5x the time of
  ``python -c "import pandas, pyarrow.csv"``.

Two pairs of files: 100 distinct items (every user scores all of them; dictionary paths
shine) and, beside it, a realistic catalogue (issue 36): each user's 100 items drawn from 10^5
distinct string item ids, a label for every row. ``--catalogue 100`` or ``100000`` runs one.

Time is the best of ``--repeat`` runs of the whole process (imports included), the three sides
run in interleaved rounds (one run of each a round, in a rotating order) so that a slow stretch
of a shared machine hits every side alike; memory is the child's ``ru_maxrss``. Each run is
printed as it ends with the machine's load (1-minute average) before and after it, and each
row of the table gives the range of the load over its runs. The files are
written by another child so that this process stays small.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _bench import print_table, scored_log
from bench_cli import measure

FLOOR = r"""
import sys
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
scores_path, truth_path = sys.argv[1], sys.argv[2]
if scores_path.endswith(".csv"):
    ids = {"user": pa.string(), "item": pa.string()}
    scores = pacsv.read_csv(scores_path, convert_options=pacsv.ConvertOptions(
        column_types={**ids, "score": pa.float64()}))
    truth = pacsv.read_csv(truth_path, convert_options=pacsv.ConvertOptions(
        column_types={**ids, "label": pa.float64()}))
else:
    scores, truth = pq.read_table(scores_path), pq.read_table(truth_path)
order = np.argsort(scores.column("score").to_numpy())
print(len(order), truth.num_rows)
"""

QUERY = r"""
import json, sys
import duckdb
scores_path, truth_path, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
read = "read_csv" if scores_path.endswith(".csv") else "read_parquet"
sql = f'''
WITH joined AS (
    SELECT s."user", s.item, s.score, coalesce(t.label, 0) AS label
    FROM {read}('{scores_path}') s LEFT JOIN {read}('{truth_path}') t
    ON s."user" = t."user" AND s.item = t.item),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY "user" ORDER BY score DESC) AS rk,
           row_number() OVER (ORDER BY score) AS global_rank
    FROM joined),
relevant AS (SELECT "user", count(*) AS r FROM {read}('{truth_path}') WHERE label > 0
             GROUP BY "user"),
ideal AS (SELECT i, sum(1 / log2(i + 1)) OVER (ORDER BY i) AS idcg
          FROM range(1, {k} + 1) t(i)),
per_user AS (
    SELECT r."user", rel.r,
           sum(CASE WHEN r.rk <= {k} AND r.label > 0 THEN 1 ELSE 0 END) / {k} AS p_at_k,
           1 / min(CASE WHEN r.label > 0 THEN r.rk END) AS rr,
           sum(CASE WHEN r.rk <= {k} AND r.label > 0 THEN 1 / log2(r.rk + 1) ELSE 0 END) AS dcg
    FROM ranked r JOIN relevant rel ON r."user" = rel."user"
    GROUP BY r."user", rel.r)
SELECT
    (SELECT (sum(CASE WHEN label > 0 THEN global_rank END)
             - count(CASE WHEN label > 0 THEN 1 END)
             * (count(CASE WHEN label > 0 THEN 1 END) + 1) / 2)
            / (count(CASE WHEN label > 0 THEN 1 END) * count(CASE WHEN label = 0 THEN 1 END))
     FROM ranked) AS auc,
    avg(p_at_k) AS precision,
    avg(coalesce(rr, 0)) AS mrr,
    avg(dcg / (SELECT idcg FROM ideal WHERE i = least(per_user.r, {k}))) AS ndcg
FROM per_user
'''
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
auc, precision, mrr, ndcg = con.execute(sql).fetchall()[0]
print(json.dumps({"auc": auc, "precision": precision, "mrr": mrr, "ndcg": ndcg}))
"""


def catalogue_log(n_users: int, per_user: int, n_catalogue: int, rng: np.random.Generator):
    """(user, item, score, label) of n_users x per_user scored pairs, each user's items drawn
    from ``n_catalogue`` distinct text ids, 5% relevant, in random row order."""
    n = n_users * per_user
    users = np.char.mod("u%07d", np.repeat(np.arange(n_users), per_user))
    picked = np.concatenate([rng.choice(n_catalogue, per_user, replace=False)
                             for _ in range(n_users)])
    items = np.char.mod("i%06d", picked)
    label = (rng.random(n) < 0.05).astype(np.int64)
    score = rng.random(n) + 0.3 * label
    order = rng.permutation(n)
    return users[order], items[order], score[order], label[order]


def write_files(folder: Path, n_users: int, n_items: int, seed: int = 2024,
                n_catalogue: int = 0) -> None:
    """scores and a full truth file (every scored pair, label 0/1), as CSV and as Parquet;
    with ``n_catalogue``, each user's ``n_items`` drawn from that many item ids."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    users, items, score, label = catalogue_log(n_users, n_items, n_catalogue, rng) \
        if n_catalogue else scored_log(n_users, n_items, rng)
    scores = pa.table({"user": users, "item": items, "score": score})
    truth = pa.table({"user": users, "item": items, "label": label})
    pacsv.write_csv(scores, folder / "scores.csv")
    pacsv.write_csv(truth, folder / "truth.csv")
    pq.write_table(scores, folder / "scores.parquet")
    pq.write_table(truth, folder / "truth.parquet")


def run_json(command: list[str]) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def interleaved_measure(commands: dict[str, list[str]], rounds: int) -> tuple[dict, str]:
    """Each command's best time and peak RSS over ``rounds`` rounds, one run of each a round
    in a rotating order (as _bench.interleaved_times does for calls, here for processes), and
    the range of the machine's load (1-minute average) over the runs: the machine is shared."""
    names = list(commands)
    best = {name: (float("inf"), 0) for name in names}
    loads = []
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            loads.append(os.getloadavg()[0])
            seconds, peak = measure(commands[name], 1)
            loads.append(os.getloadavg()[0])
            print(f"  {name}: {seconds:.1f} s, peak {peak / 2**30:.2f} GiB (load "
                  f"{loads[-2]:.1f} -> {loads[-1]:.1f})", flush=True)
            best[name] = (min(best[name][0], seconds), max(best[name][1], peak))
    return best, f"{min(loads):.1f}-{max(loads):.1f}"


def pair_rows(n_users: int, n_items: int, n_catalogue: int, repeat: int) -> list[list[str]]:
    """The rows of one pair of files (``n_catalogue`` 0: every user scores the same
    ``n_items`` items), CSV and Parquet."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_files.") as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "from bench_files import write_files; from pathlib import Path; "
                        "write_files(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), "
                        "n_catalogue=int(sys.argv[5]))",
                        str(Path(__file__).resolve().parent), str(folder), str(n_users),
                        str(n_items), str(n_catalogue)], check=True)
        for kind in ("csv", "parquet"):
            scores, truth = folder / f"scores.{kind}", folder / f"truth.{kind}"
            out = folder / f"out-{kind}.json"
            command = [sys.executable, "-m", "recmetrics", "evaluate", str(scores), "--truth",
                       str(truth), "--k", "10", "--metrics", "auc", "precision", "mrr", "ndcg",
                       "-o", str(out)]
            query = [sys.executable, "-c", QUERY, str(scores), str(truth), "10"]
            print(f"{n_users * n_items:.0e} rows, {n_catalogue or n_items:,} items, {kind}:",
                  flush=True)
            measured, load = interleaved_measure(
                {"ours": command, "floor": [sys.executable, "-c", FLOOR, str(scores), str(truth)],
                 "duckdb": query}, repeat)
            (ours, our_peak), (floor, floor_peak), (duck, duck_peak) = \
                measured["ours"], measured["floor"], measured["duckdb"]
            table = {(m["metric"], m["k"]): m["value"] for m in json.loads(out.read_text())["metrics"]}
            theirs = run_json(query)
            gaps = {name: abs(theirs[name] - table[(name, None if name in ("auc", "mrr") else 10)])
                    for name in theirs}
            size = (f"{n_users * n_items:.0e} rows, {n_catalogue or n_items:,} items, "
                    f"{kind.upper()}")
            rows += [
                [f"recmetrics evaluate vs the floor, {size}", f"{ours:.1f} s", f"{floor:.1f} s",
                 f"{ours / floor:.2f}x", "<= 2.5x", "met" if ours <= 2.5 * floor else "not met",
                 load],
                [f"recmetrics evaluate vs DuckDB SQL, {size}", f"{ours:.1f} s", f"{duck:.1f} s",
                 f"{ours / duck:.2f}x", "< 1x", "met" if ours < duck else "not met", load],
                [f"peak memory, {size} (DuckDB {duck_peak / 2**30:.2f} GiB, floor "
                 f"{floor_peak / 2**30:.2f} GiB)", f"{our_peak / 2**30:.2f} GiB", "",
                 "", "<= 1.2 GiB", "met" if our_peak <= 1.2 * 2**30 else "not met", load],
            ]
            print(f"{kind}: largest gap between DuckDB's and recmetrics' values "
                  f"{max(gaps.values()):.1e} ({', '.join(f'{k} {v:.1e}' for k, v in gaps.items())})",
                  flush=True)
            assert max(gaps.values()) < 1e-9, gaps
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 rows instead of 10^7")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side (default 2)")
    parser.add_argument("--catalogue", type=int, choices=[100, 100_000], action="append",
                        help="distinct items of a pair (default: both pairs, 100 and 100000)")
    args = parser.parse_args()
    n_users, n_items = (10_000 if args.quick else 100_000), 100
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    rows = []
    for n_catalogue in args.catalogue or [100, 100_000]:
        rows += pair_rows(n_users, n_items, 0 if n_catalogue == n_items else n_catalogue,
                          args.repeat)
    load = os.getloadavg()[0]
    sample = Path(__file__).resolve().parent.parent / "recmetrics" / "data"
    ours, _ = measure([sys.executable, "-m", "recmetrics", "evaluate",
                       str(sample / "sample_model_a.csv"), "--truth",
                       str(sample / "sample_truth.csv"), "-o", os.devnull], max(8, args.repeat))
    imports, _ = measure([sys.executable, "-c", "import pandas, pyarrow.csv"], max(8, args.repeat))
    rows.append(["python -m recmetrics evaluate on the sample vs import pandas, pyarrow.csv",
                 f"{ours:.2f} s", f"{imports:.2f} s", f"{ours / imports:.2f}x", "<= 1.5x",
                 "met" if ours <= 1.5 * imports else "not met",
                 f"{min(load, os.getloadavg()[0]):.1f}-{max(load, os.getloadavg()[0]):.1f}"])
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    print_table(f"Files end to end ({platform.machine()}, {os.cpu_count()} cores, "
                f"numpy {np.__version__})",
                ["what", "recmetrics", "baseline", "ratio", "target", "", "load"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
