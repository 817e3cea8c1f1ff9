#!/usr/bin/env python3
"""Plant known bugs one at a time and check that the fast tests catch each (a mutation check).

    python tools/mutate.py             every mutant, against the tests named for it
    python tools/mutate.py NAME ...    only these mutants
    python tools/mutate.py --list      the mutants and what each plants

Each mutant is a one-line change to one file of the package. For each, the package and the
tests are copied to a temporary directory, the line is changed there (the checkout is never
touched), and pytest runs the mutant's tests against the copy. A mutant is *killed* when at
least one of them fails; a *survivor* is a bug the tests would let through. The unchanged copy
runs first, as a control: its tests must pass, or a kill would mean nothing.

Not part of the normal test run (it runs pytest once per mutant); run it after changing the
kernels, the engine or the tests that guard them. Exit status 0 when every mutant is killed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FRAME = "tests/test_evaluation.py::"
GAUC_TESTS = (FRAME + "test_gauc_follows_gauc_weight_as_a_literal_loop_over_users",
              "tests/test_distributed.py::"
              "test_gauc_under_every_weight_on_a_cluster_equals_a_literal_loop_over_users")
MULTINOMIAL_TESTS = (FRAME + "test_multinomial_intervals_equal_a_bootstrap_drawn_by_hand",
                     "tests/test_stats.py::test_bootstrap_ci_equals_a_percentile_bootstrap_drawn_by_hand")
POISSON_TESTS = (FRAME + "test_poisson_weights_follow_the_poisson_1_distribution",
                 FRAME + "test_poisson_intervals_equal_a_percentile_bootstrap_with_the_same_weights")
TIE_TESTS = (FRAME + "test_hand_worked_ties_single_list_functions_order_by_order",
             FRAME + "test_hand_worked_ties_through_evaluate")
COMPARE_TESTS = (FRAME + "test_compare_p_values_equal_scipy_and_a_sign_flip_drawn_by_hand",)


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str        # file of the package, from the checkout's root
    old: str         # text that occurs exactly once in it
    new: str         # what it becomes
    tests: tuple     # pytest node ids expected to catch it
    what: str        # the bug, in words


MUTANTS = [
    Mutant("gauc-weight-ignored", "recmetrics/_pipeline.py",
           'weights = _kernels.gauc_weights(pos, neg, o["gauc_weight"])',
           'weights = _kernels.gauc_weights(pos, neg, "impressions")', GAUC_TESTS,
           "evaluate ignores gauc_weight (always impressions), in memory and on Dask"),
    Mutant("gauc-clicks-kernel", "recmetrics/_kernels.py",
           "        return pos.astype(np.float64)\n", "        return (pos + neg).astype(np.float64)\n",
           GAUC_TESTS, "the GAUC weight kernel gives impressions for gauc_weight='clicks'"),
    Mutant("bootstrap-ci-level", "recmetrics/stats.py",
           "np.nanquantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])",
           "np.nanquantile(means, [0.025, 0.975])", MULTINOMIAL_TESTS,
           "bootstrap_ci reports a 95% interval whatever confidence is asked (90% as 95%)"),
    Mutant("auc-bootstrap-level", "recmetrics/_pipeline.py",
           "np.nanquantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])",
           "np.nanquantile(values, [0.025, 0.975])", MULTINOMIAL_TESTS,
           "the multinomial interval of global AUC is always a 95% interval"),
    Mutant("poisson-interval-level", "recmetrics/_pipeline.py",
           "quantiles = [(1 - ci) / 2, (1 + ci) / 2]", "quantiles = [0.025, 0.975]",
           POISSON_TESTS, "Poisson-bootstrap intervals are always 95% intervals"),
    Mutant("gauc-interval-unweighted", "recmetrics/_pipeline.py",
           "values, weights = auc_parts[0][kept], denominator[kept]",
           "values, weights = auc_parts[0][kept], None", MULTINOMIAL_TESTS,
           "the multinomial GAUC interval resamples an unweighted mean of user AUCs"),
    Mutant("poisson-truncated-at-3", "recmetrics/_pipeline.py",
           'return np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.float64)',
           'return np.minimum(np.searchsorted(_POISSON_CDF, uniform, side="right"), 3)'
           '.astype(np.float64)', POISSON_TESTS, "Poisson weights truncated at 3"),
    Mutant("poisson-table-short", "recmetrics/_pipeline.py",
           "np.cumprod(np.r_[1.0, np.arange(1.0, 25.0)])", "np.cumprod(np.r_[1.0, np.arange(1.0, 3.0)])",
           POISSON_TESTS, "the Poisson CDF table ends at 2, so weights stop at 3"),
    Mutant("poisson-seed-ignored", "recmetrics/_pipeline.py",
           "prepared_resamples(prep, ratios, o, poisson_seed(seed), n_resamples)",
           "prepared_resamples(prep, ratios, o, poisson_seed(0), n_resamples)", POISSON_TESTS,
           "evaluate's Poisson bootstrap ignores seed"),
    Mutant("ttest-independent", "recmetrics/evaluation.py",
           "p_t = float(_stats.ttest_rel(vb[both], va[both]).pvalue)",
           "p_t = float(_stats.ttest_ind(vb[both], va[both]).pvalue)", COMPARE_TESTS,
           "compare's p_ttest is an unpaired t-test"),
    Mutant("ttest-all-users", "recmetrics/evaluation.py",
           "p_t = float(_stats.ttest_rel(vb[both], va[both]).pvalue)",
           "p_t = float(_stats.ttest_rel(vb[both][1:], va[both][1:]).pvalue)", COMPARE_TESTS,
           "compare's p_ttest leaves out one paired user"),
    Mutant("ap-hits-ratio-of-means", "recmetrics/_kernels.py",
           'if denominator != "hits" or k is None:', "if True:", TIE_TESTS,
           "AP 'hits' with a tie straddling k divides mean sum by mean hits"),
    Mutant("ap-hits-straddle-places", "recmetrics/_kernels.py",
           "c = (k - a + 1).astype(np.float64)", "c = (k - a + 2).astype(np.float64)", TIE_TESTS,
           "AP 'hits' counts one place too many above the cut in a straddling tie"),
    Mutant("ap-within-tie", "recmetrics/_kernels.py",
           "within = np.where(t > 1, (self.j - 1) * (r - 1) / np.maximum(t - 1, 1), 0.0)",
           "within = np.where(t > 1, (self.j - 1) * r / t, 0.0)", TIE_TESTS,
           "tie-averaged AP counts the row itself among the relevant rows ahead of it"),
    Mutant("rr-first-of-tie", "recmetrics/_kernels.py",
           "layout.first_hit() / np.maximum(layout.pos, 1)",
           "layout.first_hit() / np.maximum(layout.first, 1)", TIE_TESTS,
           "tie-averaged RR takes the tie's first rank for every place in it"),
    Mutant("ndcg-max-gain-of-tie", "recmetrics/_kernels.py",
           "g = (np.add.reduceat(g, self._offset) / self._size)[self._row_group]",
           "g = np.maximum.reduceat(g, self._offset)[self._row_group]", TIE_TESTS,
           "tie-averaged NDCG gives each place of a tie the tie's best gain"),
    Mutant("ap-min-k-is-relevant", "recmetrics/_kernels.py",
           'd = n_relevant if denominator == "relevant" or k is None else np.minimum(k, n_relevant)',
           "d = n_relevant", TIE_TESTS, "AP 'min_k' divides by all relevant items"),
]


def copy_project(target: Path) -> None:
    """The package, the tests and the pytest settings: what the mutant's tests need."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "recmetrics", target / "recmetrics", ignore=ignore)
    shutil.copytree(ROOT / "tests", target / "tests", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", target / "pyproject.toml")


def run_tests(workdir: Path, tests: tuple) -> subprocess.CompletedProcess:
    """pytest on the copy, with the copy first on the path; doctests and nbval left out."""
    env = {**os.environ, "PYTHONPATH": str(workdir), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider",
                           "-o", "addopts=", *tests], cwd=workdir, env=env, capture_output=True,
                          text=True)


def failed_tests(output: str) -> list[str]:
    return [line.split()[1].split("::", 1)[1] for line in output.splitlines()
            if line.startswith("FAILED ")]


def check(mutant: Mutant | None, tests: tuple) -> tuple[bool, str]:
    """Run ``tests`` on a copy with ``mutant`` planted (None: the control); (failed, detail)."""
    with tempfile.TemporaryDirectory(prefix="recmetrics-mutant-") as tmp:
        workdir = Path(tmp)
        copy_project(workdir)
        if mutant is not None:
            source = workdir / mutant.path
            text = source.read_text()
            if text.count(mutant.old) != 1:
                raise SystemExit(f"mutant {mutant.name}: the line to change occurs "
                                 f"{text.count(mutant.old)} times in {mutant.path}; update it")
            source.write_text(text.replace(mutant.old, mutant.new))
        where = subprocess.run([sys.executable, "-c", "import recmetrics; print(recmetrics.__file__)"],
                               cwd=workdir, env={**os.environ, "PYTHONPATH": str(workdir)},
                               capture_output=True, text=True)
        if not where.stdout.startswith(str(workdir)):
            raise SystemExit(f"the copy's recmetrics is not the one imported: {where.stdout}"
                             f"{where.stderr}")
        done = run_tests(workdir, tests)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    if done.returncode == 1:
        return True, "failed: " + ", ".join(failed_tests(done.stdout))
    if done.returncode == 0:
        return False, summary
    return True, f"pytest exit {done.returncode}: {summary}"  # errors also stop the mutant


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    by_name = {m.name: m for m in MUTANTS}
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:28} {m.path:24} {m.what}")
        return 0
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown mutant(s) {', '.join(unknown)}; see --list")
    chosen = [by_name[n] for n in args.names] if args.names else MUTANTS
    every_test = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
    failed, detail = check(None, every_test)
    print(f"{'control (no change)':28} {'FAILS' if failed else 'passes'}: {detail}", flush=True)
    if failed:
        print("the unchanged copy fails its tests, so no mutant can be judged", file=sys.stderr)
        return 2
    survivors = []
    for m in chosen:
        killed, detail = check(m, m.tests)
        print(f"{m.name:28} {'killed' if killed else 'SURVIVED'}: {detail}", flush=True)
        if not killed:
            survivors.append(m.name)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed"
          + (f"; survivors: {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
