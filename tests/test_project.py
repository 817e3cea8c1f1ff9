"""The project's own files: dependencies declared once, notebooks stored executed."""
import importlib.util
import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_names_every_dependency_of_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    wanted.discard(project["name"])            # extras that pull in another extra
    text = (ROOT / "environment.yml").read_text()
    listed = {_name(line.strip()[2:]) for line in text.splitlines() if line.strip().startswith("- ")}
    missing = sorted(wanted - listed)
    assert not missing, f"environment.yml does not name {missing}"
    assert re.search(r"^\s*- -e \.\s*$", text, re.M), "environment.yml must pip-install the project"


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_executed_top_to_bottom(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    counts = [c.get("execution_count") for c in cells if c["cell_type"] == "code"]
    assert counts, "a notebook without code checks nothing"
    assert None not in counts, f"{counts.count(None)} code cell(s) never executed"
    assert counts == list(range(1, len(counts) + 1)), f"not one top-to-bottom run: {counts}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_asserts_its_numbers_and_writes_nothing_to_stderr(path):
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    source = "\n".join("".join(c["source"]) for c in cells)
    assert "assert " in source, "worked numbers must be asserted"
    for cell in cells:
        for out in cell.get("outputs", []):
            assert not (out.get("output_type") == "stream" and out.get("name") == "stderr"), \
                f"stderr output in cell {cell['execution_count']}: {''.join(out['text'])[:200]}"
            if out.get("output_type") == "display_data":
                assert "image/svg+xml" not in out["data"], "store figures as PNG (SVG carries a date)"


JUPYTER = {"nbformat", "nbclient", "nbconvert", "ipykernel"}


def test_the_jupyter_stack_is_the_report_extra_only():
    """The metrics need no Jupyter; `recmetrics report` does (pip install metricbook[report])."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert not JUPYTER & {_name(r) for r in project["dependencies"]}
    assert {_name(r) for r in extras["report"]} == JUPYTER
    for name in ("notebooks", "dev"):       # they run the report and nbval: they pull it in
        assert "metricbook[report]" in extras[name], name
    # the development install of tasks.py and environment.yml name the report extra too (and
    # the dask and spark extras, so that CI runs the engines' parity tests)
    # (tasks.py test installs them all; tasks.py report only what the study site needs)
    spec = importlib.util.spec_from_file_location("_recmetrics_tasks", ROOT / "tasks.py")
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    assert set(tasks.EXTRAS["test"]) == {"report", "notebooks", "dev", "bench", "dask", "spark"}
    assert set(tasks.EXTRAS["report"]) == {"report", "notebooks"}
    assert "pip install -e .[report,notebooks,dev,bench,dask,spark]" in \
        (ROOT / "environment.yml").read_text()


def test_the_dask_engine_is_an_extra_that_ci_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {_name(r) for r in project["optional-dependencies"]["dask"]} == {"dask", "distributed"}
    assert not {"dask", "distributed"} & {_name(r) for r in project["dependencies"]}


def test_the_spark_engine_is_an_extra_that_ci_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {_name(r) for r in project["optional-dependencies"]["spark"]} == {"pyspark"}
    assert "pyspark" not in {_name(r) for r in project["dependencies"]}
    assert "openjdk-17-jre-headless" in (ROOT / ".ci" / "run").read_text()  # Java for Spark


def test_the_metric_core_imports_neither_jupyter_nor_tqdm():
    """Importing recmetrics, its command line, io and report modules loads no Jupyter or tqdm."""
    import subprocess
    import sys

    code = ("import sys, recmetrics, recmetrics.cli, recmetrics.io, recmetrics.report; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "recmetrics" in loaded
    heavy = JUPYTER | {"tqdm", "jupyter_client", "IPython", "nbval", "zmq"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_importing_recmetrics_leaves_scipy_and_matplotlib_for_when_they_are_needed():
    """scipy.stats costs ~45 MiB and half a second in every process (the command line, each Dask
    worker), scipy.special ~0.2 s: only the functions that use them import them (chi-square,
    paired tests, the sampled-metric distributions, some tie cases)."""
    import subprocess
    import sys

    code = ("import sys, recmetrics, recmetrics.cli, recmetrics.io; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith(('scipy', 'matplotlib')))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert not loaded, loaded


def test_tasks_test_runs_pytest_with_extras_required(monkeypatch):
    """`tasks.py test` installs every extra, so it tells the tests a missing one is a failure."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    calls = []
    monkeypatch.setattr(tasks, "ensure_venv", lambda extras: None)
    monkeypatch.setattr(tasks, "_run", lambda *args, **kwargs: calls.append((args, kwargs)))
    tasks.main(["test", "-x"])
    (args, kwargs), = calls
    assert [str(a) for a in args[1:]] == ["-m", "pytest", "-x"]
    assert kwargs["env"] == {"RECMETRICS_REQUIRE_EXTRAS": "1"}


def _tasks_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_recmetrics_tasks_pip", ROOT / "tasks.py")
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    return tasks


def test_tasks_report_installs_no_jupyterlab_which_the_lab_extra_holds():
    """Issue 36: `tasks.py report` installed JupyterLab, which building the site does not need."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    tasks = _tasks_module()
    for command in ("report", "execute", "test", "bench"):
        installed = set()
        todo = list(tasks.EXTRAS[command])
        while todo:                                      # extras pulled in by extras too
            extra = todo.pop()
            for requirement in extras[extra]:
                if requirement.startswith("metricbook["):
                    todo += requirement[len("metricbook["):-1].split(",")
                installed.add(_name(requirement))
        assert "jupyterlab" not in installed, command
    assert "jupyterlab" in {_name(r) for r in extras["lab"]}
    assert "'.[lab]'" in (ROOT / "docs" / "guide" / "contributing.md").read_text()


def test_tasks_pip_says_something_while_pip_is_silent(monkeypatch, capsys):
    """Issue 36: pip installed 115 packages in silence for 104 s; now a line comes at least
    every _PIP_QUIET_AT_MOST seconds."""
    import time as time_module

    tasks = _tasks_module()

    class Silent:
        """A pip that resolves, then installs without a word for a while."""

        def __init__(self, *args, **kwargs):
            self.stdout = self.lines()

        @staticmethod
        def lines():
            yield "Collecting numpy\n"
            yield "Installing collected packages: numpy, pandas\n"
            time_module.sleep(0.6)
            yield "Successfully installed numpy-2 pandas-3\n"

        def wait(self):
            return 0

    monkeypatch.setattr(tasks.subprocess, "Popen", Silent)
    monkeypatch.setattr(tasks, "_PIP_QUIET_AT_MOST", 0.1)
    tasks._pip("install", "-e", ".")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  pip: installing 2 packages ..."
    assert out[-1] == "  pip: done (2 installed)"
    assert any(line.startswith("  still installing (") for line in out[1:-1]), out


def test_tasks_report_says_something_while_the_notebooks_run(monkeypatch, capsys):
    """Issue 36: `tasks.py report` was silent for 44 s while a notebook executed; its output is
    now passed on with a line at least every _PIP_QUIET_AT_MOST seconds of silence."""
    import time as time_module

    tasks = _tasks_module()

    class Book:
        def __init__(self, args, **kwargs):
            self.args, self.stdout = args, self.lines()

        @staticmethod
        def lines():
            yield "executing 16 notebook(s), 2 at a time\n"
            time_module.sleep(0.6)
            yield "  [ 1/16] 00-start-here.ipynb (36 s)\n"

        def wait(self):
            return 0

    started = []
    monkeypatch.setattr(tasks.subprocess, "Popen", lambda args, **kw: started.append(args) or Book(args))
    monkeypatch.setattr(tasks, "_PIP_QUIET_AT_MOST", 0.1)
    monkeypatch.setattr(tasks, "ensure_venv", lambda extras: None)
    tasks.main(["report"])
    out = capsys.readouterr().out.splitlines()
    assert started[0][1:] == ["tools/book.py"]
    assert out[0] == "executing 16 notebook(s), 2 at a time"
    assert out[-1] == "  [ 1/16] 00-start-here.ipynb (36 s)"
    assert any(line.startswith("  still running book.py (") for line in out[1:-1]), out


def test_tasks_installs_without_byte_compiling_and_takes_pip_from_the_bundled_wheel(
        monkeypatch, tmp_path):
    """Issue 36: pip byte-compiled 7,400 modules (280 s of installing against 112 s without),
    and ensurepip installed and compiled pip and setuptools before pip upgraded itself."""
    tasks = _tasks_module()
    venv_dir = tmp_path / ".venv"
    monkeypatch.setattr(tasks, "VENV", venv_dir)
    monkeypatch.setattr(tasks, "PYTHON", venv_dir / "bin" / "python")
    monkeypatch.setattr(tasks, "STAMP", venv_dir / "stamp")
    built, pips = [], []

    class Builder:
        def __init__(self, **options):
            built.append(options)

        def create(self, path):
            (Path(path) / "bin").mkdir(parents=True)
            (Path(path) / "bin" / "python").touch()

    monkeypatch.setattr(tasks.venv, "EnvBuilder", Builder)
    monkeypatch.setattr(tasks, "_pip", lambda *args, **kw: pips.append((args, kw)))
    tasks.ensure_venv(("report",))
    assert built == [{"with_pip": False, "clear": True}]     # Python here bundles a pip wheel
    (upgrade, how), (install, _) = pips
    assert upgrade == ("install", "--no-compile", "--upgrade", "pip")
    assert how["pip"].endswith(".whl/pip") and "ensurepip" in how["pip"]
    assert install == ("install", "--no-compile", "-e", ".[report]")
    tasks.ensure_venv(("report",))                           # installed: nothing again
    assert len(pips) == 2


@pytest.mark.parametrize("required", ["1", ""])
def test_a_missing_dask_extra_fails_when_required_and_skips_otherwise(required, tmp_path):
    """Bug fixed: without the dask extra every test of test_distributed.py skipped, in CI too."""
    import os
    import subprocess
    import sys

    (tmp_path / "dask").mkdir()
    (tmp_path / "dask" / "__init__.py").write_text("raise ImportError('dask is missing here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
           "RECMETRICS_REQUIRE_EXTRAS": required}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
                           "addopts=", "tests/test_distributed.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if required:
        assert done.returncode == 2, done.stdout  # interrupted: an error during collection
        assert "RECMETRICS_REQUIRE_EXTRAS=1 says every extra is installed" in done.stdout
    else:
        assert done.returncode == 5 and "1 skipped" in done.stdout, done.stdout  # nothing ran


def _dev_tool(name: str) -> Path:
    """A command of the dev extra, from the environment that runs the tests."""
    import os
    import sys

    path = Path(sys.executable).parent / name
    if not path.exists():
        if os.environ.get("RECMETRICS_REQUIRE_EXTRAS") == "1":
            pytest.fail(f"{name} is not installed next to {sys.executable}, but "
                        "RECMETRICS_REQUIRE_EXTRAS=1 says every extra is; pip install -e '.[dev]'")
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return path


@pytest.mark.parametrize("command", [["mypy"], ["ruff", "check", "--no-cache"]],
                         ids=["mypy", "ruff"])
def test_the_code_is_clean_under_mypy_and_ruff(command):
    """mypy (recmetrics/) and ruff (the whole tree) with the configuration in pyproject.toml."""
    import subprocess

    done = subprocess.run([str(_dev_tool(command[0])), *command[1:]], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)} found problems:\n{done.stdout}{done.stderr}"


def test_mypy_and_ruff_are_configured_in_pyproject():
    """The configuration the test above runs with, and no check switched off wholesale."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert tool["mypy"]["files"] == ["recmetrics"]
    assert "disable_error_code" not in tool["mypy"]
    assert set(tool["ruff"]["lint"]["select"]) >= {"E", "F", "W", "B"}
    assert set(tool["ruff"]["lint"]["ignore"]) <= {"B905", "E741"}


GUIDE = ROOT / "docs" / "guide"
DOCS = [ROOT / "README.md", *sorted(GUIDE.glob("*.md"))]


def test_the_readme_is_a_front_page_and_the_guide_holds_the_rest():
    """The README stays a front page (issue 38: at most 250 lines) and points at every guide page."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for page in GUIDE.glob("*.md"):
        assert f"docs/guide/{page.name}" in readme, f"the README does not link {page.name}"


def test_the_layout_in_the_guide_names_every_module():
    """Every module of the package appears in the guide's layout section, by file name."""
    layout = (GUIDE / "contributing.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    modules = [p.name for p in (ROOT / "recmetrics").glob("*.py") if not p.name.startswith("__")]
    assert modules
    missing = [name for name in modules if not re.search(rf"\b{re.escape(name)}\b", layout)]
    assert not missing, f"docs/guide/contributing.md's layout does not name {missing}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_relative_links_of_the_docs_resolve(path):
    """Every relative link of the README and the guide names a file that exists, and an anchor
    into a guide page names one of its headings."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        assert resolved.exists(), f"{path.name} links {target}, which does not exist"
        if anchor and resolved.suffix == ".md":
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                     for h in re.findall(r"^#+ (.+)$", resolved.read_text(), flags=re.M)}
            assert anchor in slugs, f"{path.name} links {target}: no such heading"
