"""What importing recmetrics loads: the public names are imported on first use (PEP 562), and
``recmetrics evaluate`` loads only the modules it runs. Each check runs in a fresh process, so
that what this test session has already imported does not hide an eager import."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "recmetrics" / "data"

#: Libraries the default evaluate path never needs (plots, statistics, engines, the report, Jupyter).
HEAVY = ("scipy", "matplotlib", "sklearn", "statsmodels", "dask", "distributed", "pyspark",
         "jinja2", "nbformat", "nbclient", "nbconvert", "IPython", "tqdm", "duckdb",
         "pyarrow.parquet", "pyarrow.dataset")
#: recmetrics modules that ``recmetrics evaluate scores.csv --truth truth.csv`` does not run.
NOT_FOR_EVALUATE = ("auc", "beyond", "classification", "plots", "probability", "ranking",
                    "regression", "report", "sampling", "slices", "_slices", "spark", "distributed", "stats", "power",
                    "tables", "trec", "_compare", "_display", "_partitions")
#: The submodules ``import recmetrics`` loaded eagerly before its names became lazy.
SUBMODULES = ("_beyond", "_compare", "_display", "_pipeline", "_ids", "_kernels", "_options",
              "_validation", "auc", "beyond", "classification", "evaluation", "plots", "probability",
              "ranking", "regression", "sampling", "slices", "stats", "tables", "trec")


def _fresh(code: str, *args: str) -> dict:
    """Run ``code`` in a new interpreter from the project root; it prints one JSON object."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _loaded(modules: list[str], prefixes) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_import_recmetrics_loads_no_submodule():
    """``import recmetrics`` runs only its ``__init__``: every name comes when first used."""
    found = _fresh("import json, sys, recmetrics; print(json.dumps(sorted(sys.modules)))")
    assert "recmetrics" in found
    assert [m for m in found if m.startswith("recmetrics.")] == []
    assert _loaded(found, HEAVY + ("numpy", "pandas")) == []


def test_the_evaluate_command_loads_only_what_it_runs(tmp_path):
    """``python -m recmetrics evaluate`` on the sample CSV pair: the result is written, and
    neither scipy, matplotlib, an engine, the report stack nor an unused recmetrics module
    was imported on the way."""
    out = tmp_path / "out.json"
    code = ("import json, runpy, sys\n"
            "sys.argv = ['recmetrics', 'evaluate', sys.argv[1], '--truth', sys.argv[2], '-o', "
            "sys.argv[3]]\n"
            "try:\n"
            "    runpy.run_module('recmetrics', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as done:\n"
            "    status = done.code\n"
            "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))")
    found = _fresh(code, str(DATA / "sample_model_a.csv"), str(DATA / "sample_truth.csv"),
                   str(out))
    assert found["status"] == 0
    assert "ndcg" in {row["metric"] for row in json.loads(out.read_text())["metrics"]}
    modules = found["modules"]
    assert "recmetrics.cli" in modules and "recmetrics.evaluation" in modules  # the path was run
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, [f"recmetrics.{name}" for name in NOT_FOR_EVALUATE]) == []


def _declared() -> dict[str, str]:
    """name -> submodule, from the ``if TYPE_CHECKING:`` imports of recmetrics/__init__.py
    (what mypy and IDEs see), read as source text and not through the code under test."""
    tree = ast.parse((ROOT / "recmetrics" / "__init__.py").read_text())
    guarded = [node for node in tree.body if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test)]
    assert len(guarded) == 1
    declared = {}
    for node in guarded[0].body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            declared[alias.asname or alias.name] = (f"{node.module}.{alias.name}" if node.module
                                                    else alias.name)
    return declared


def test_every_public_name_resolves_to_what_type_checkers_see():
    """Each name of ``__all__``, fetched from a fresh ``import recmetrics``, is the object its
    submodule defines under the name the TYPE_CHECKING imports give; ``from recmetrics import *``
    binds exactly ``__all__``."""
    declared = _declared()
    code = ("import importlib, json, recmetrics\n"
            "declared = json.loads(__import__('sys').argv[1])\n"
            "same = {}\n"
            "for name in recmetrics.__all__:\n"
            "    if name in declared:\n"
            "        where = declared[name]\n"
            "        module, _, attribute = where.rpartition('.')\n"
            "        home = importlib.import_module('recmetrics.' + module) if module else None\n"
            "        expected = (getattr(home, attribute) if home is not None\n"
            "                    else importlib.import_module('recmetrics.' + attribute))\n"
            "        same[name] = getattr(recmetrics, name) is expected\n"
            "star = {}\n"
            "exec('from recmetrics import *', star)\n"
            "print(json.dumps({'all': recmetrics.__all__, 'same': same,\n"
            "                  'star': sorted(n for n in star if n != '__builtins__')}))")
    found = _fresh(code, json.dumps(declared))
    assert set(found["all"]) == set(declared) | {"DATA_DIR"}
    assert len(found["all"]) == len(set(found["all"]))
    assert found["same"] == {name: True for name in declared}
    assert found["star"] == sorted(found["all"])


def test_dir_lists_the_public_api_and_the_submodules_before_any_is_imported():
    """``dir(recmetrics)`` right after the import, as when everything was imported eagerly:
    ``__all__``, the submodules, ``__version__``; none of the lazy-import machinery."""
    found = _fresh("import json, recmetrics; print(json.dumps(dir(recmetrics)))")
    assert found == sorted(found)
    assert set(found) >= {"__version__", "Path", "DATA_DIR"} | set(SUBMODULES)
    code = "import json, recmetrics; print(json.dumps(recmetrics.__all__))"
    assert set(found) >= set(_fresh(code))
    assert not {"_HOME", "_SUBMODULES", "_importlib", "_typing", "__getattr__", "__dir__"} \
        & set(found)


@pytest.mark.parametrize("name", SUBMODULES)
def test_the_submodules_stay_attributes_of_the_package(name):
    """``rm.stats``, ``rm.slices.ALL``... work after a bare ``import recmetrics``."""
    code = (f"import json, sys, recmetrics; module = recmetrics.{name}; "
            f"print(json.dumps([module.__name__, module is sys.modules['recmetrics.{name}']]))")
    assert _fresh(code) == [f"recmetrics.{name}", True]


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import recmetrics

    with pytest.raises(AttributeError, match="module 'recmetrics' has no attribute 'no_such_metric'"):
        recmetrics.no_such_metric  # noqa: B018
    assert not hasattr(recmetrics, "no_such_metric")
