"""The one output guard (recmetrics._output): no input of any role is ever written over, and
nothing is ever half-written (a full device ends in one line and exit status 2)."""
from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import _output, cli
from recmetrics import io as rio

DATA = rm.DATA_DIR


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    """A tiny scores file with a slice column, and one file of every other input role."""
    pred = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"],
                         "score": [0.9, 0.1, 0.4, 0.8], "label": [1, 0, 0, 1],
                         "country": ["fr", "fr", "de", "de"]})
    pred.to_csv(tmp_path / "pred.csv", index=False)
    pred.drop(columns="country").to_csv(tmp_path / "other.csv", index=False)
    pred[["user", "item", "label"]].to_csv(tmp_path / "truth.csv", index=False)
    pred[["user", "item"]].to_csv(tmp_path / "history.csv", index=False)
    pd.DataFrame({"user": [1, 2], "age": ["young", "old"]}).to_csv(tmp_path / "users.csv",
                                                                   index=False)
    pd.DataFrame({"item": ["a", "b", "c"]}).to_csv(tmp_path / "catalog.csv", index=False)
    pd.DataFrame({"item": ["a", "b", "c"], "f1": [1.0, 0.0, 0.5]}).to_csv(
        tmp_path / "features.csv", index=False)
    return tmp_path


#: role -> (the file, the options that make the command read it; @name: that file)
ROLES = {
    "scores": ("pred.csv", []),
    "truth": ("truth.csv", ["--truth", "@truth.csv"]),
    "history": ("history.csv", ["--history", "@history.csv", "--metrics", "novelty"]),
    "users": ("users.csv", ["--by", "age", "--users", "@users.csv"]),
    "catalog": ("catalog.csv", ["--catalog", "@catalog.csv", "--metrics", "catalog_coverage"]),
    "item_features": ("features.csv", ["--item-features", "@features.csv", "--metrics",
                                       "diversity"]),
}
#: how the output names the input: the same path, another spelling, a hard link, a symlink
SPELLINGS = ("same path", "other spelling", "hard link", "symlink", "dangling symlink")


def _target(folder: Path, name: str, spelling: str) -> Path:
    if spelling == "same path":
        return folder / name
    if spelling == "other spelling":
        (folder / "sub").mkdir()
        return folder / "sub" / ".." / name
    link = folder / f"link-{name}"
    if spelling == "hard link":
        os.link(folder / name, link)
    elif spelling == "symlink":
        link.symlink_to(folder / name)
    else:  # a symlink through a missing folder to the input: resolved, it is the input
        (folder / "gone").symlink_to(folder)
        return folder / "gone" / name
    return link


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("role", list(ROLES))
def test_the_output_is_refused_when_it_is_an_input_of_any_role(role, spelling, files, capsys):
    """Bug (issue 35): -o naming the --history, --users, --catalog or --item-features file
    replaced it with the metric table and exited 0; only scores and --truth were protected.
    Hard links and symlinks to an input are the input too (same st_dev and st_ino)."""
    name, options = ROLES[role]
    target = _target(files, name, spelling)
    before = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    options = [files / o[1:] if o.startswith("@") else o for o in options]
    code, out, err = run(["evaluate", files / "pred.csv", *options, "-q", "-o", target], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    flag = {"scores": "scores", "item_features": "--item-features"}.get(role, f"--{role}")
    assert f"is the {flag} file" in err and "choose another name" in err, err
    assert {p: p.read_bytes() for p in files.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("command", ["compare", "report"])
def test_compare_and_report_guard_every_role_too(command, files, capsys):
    """The same guard for compare's and report's -o: the --users file of a sliced run."""
    before = (files / "users.csv").read_bytes()
    argv = [command, files / "pred.csv", files / "other.csv", "--truth", files / "truth.csv",
            "--by", "age", "--users", files / "users.csv", "-q", "-o", files / "users.csv"]
    if command == "report":
        argv = [command, files / "pred.csv", "--by", "age", "--users", files / "users.csv", "-q",
                "-o", files / "users.csv"]
        argv[-1] = files / "link.html"
        os.symlink(files / "users.csv", files / "link.html")
    code, out, err = run(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "is the --users file" in err, err
    assert (files / "users.csv").read_bytes() == before


def test_refuse_inputs_takes_paths_or_roles(tmp_path):
    (tmp_path / "h.csv").write_text("user,item\n1,a\n")
    with pytest.raises(rio.FileProblem, match=r"is the --history file .*h\.csv"):
        rio.refuse_inputs(tmp_path / "h.csv", {"--history": [tmp_path / "h.csv"]})
    with pytest.raises(rio.FileProblem, match=r"is the input file"):
        rio.refuse_inputs(tmp_path / "h.csv", [tmp_path / "h.csv"])
    rio.refuse_inputs(tmp_path / "out.csv", {"--history": [tmp_path / "h.csv"], "x": None})


def test_atomic_file_never_changes_the_process_umask(tmp_path, monkeypatch):
    """Bug (design review 2026-11, section 3): atomic_file set os.umask(0) and back to learn
    the umask; the umask is process-wide, so a file another thread made in between got mode
    0o666. Now the kernel applies the umask to the temporary file (created with 0o666)."""
    def forbidden(*_):
        raise AssertionError("os.umask called: it changes the umask of every thread")

    old = os.umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", forbidden)
        with rio.atomic_file(str(tmp_path / "new.csv")) as handle:
            handle.write(b"x\n")
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["new.csv"]


def test_atomic_file_keeps_the_mode_of_the_file_it_replaces_and_fsyncs_before_renaming(
        tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    target.chmod(0o604)
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"),
                                                     real_replace(a, b))[1])
    with rio.atomic_file(str(target)) as handle:
        handle.write(b"new\n")
    monkeypatch.undo()
    assert calls[:2] == ["fsync", "replace"]   # the data is on disk before the rename
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o604


def test_a_failure_inside_atomic_file_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with rio.atomic_file(str(target)) as handle:
            handle.write(b"half")
            raise RuntimeError("stopped")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.csv"]


# --------------------------------------------------------------------------- full devices

def _command(tmp_path, *extra):
    return [sys.executable, "-m", "recmetrics", "evaluate", str(DATA / "sample_model_a.csv"),
            "--truth", str(DATA / "sample_truth.csv"), "-q", *extra]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("how", ["standard output", "-o /dev/full"])
def test_writing_to_a_full_device_is_one_line_and_exit_status_2(how, tmp_path):
    """Bug (issue 35): output to a full device ended in a traceback."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(_command(tmp_path) if how == "standard output"
                              else _command(tmp_path, "-o", "/dev/full"),
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"recmetrics: error: {'standard output' if how == 'standard output' else '-o /dev/full'}"
        ": cannot write (No space left on device); the output is incomplete"]


def test_a_file_too_large_for_the_limit_leaves_the_old_file_whole(tmp_path):
    """A write that fails half-way (here the file-size limit, RLIMIT_FSIZE, a real limit of
    the kernel) removes the temporary file: the old output is left as it was, one line, 2."""
    target = tmp_path / "out.json"
    target.write_text("old\n")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    done = subprocess.run(_command(tmp_path, "-o", str(target)), capture_output=True, text=True,
                          timeout=600, preexec_fn=limit)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"recmetrics: error: -o {target}: cannot write (File too large); nothing was written and "
        f"{target} is as it was"]
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_full_file_system_leaves_the_old_file_whole(tmp_path):
    """The same on a real full file system: a 4 KiB tmpfs mounted in a private mount
    namespace (unshare -rm; skipped where namespaces are not allowed)."""
    small = tmp_path / "small"
    small.mkdir()
    script = (f"mount -t tmpfs -o size=4k tmpfs {small} && printf old > {small}/out.json && "
              + " ".join(_command(tmp_path, "-o", f"{small}/out.json", "--k",
                                  *map(str, range(1, 21))))
              + f"; echo status=$?; cat {small}/out.json; echo; ls -A {small}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                          text=True, timeout=600)
    if "mount" in done.stderr and "status=" not in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    assert done.stdout.splitlines() == ["status=2", "old", "out.json"], done
    assert done.stderr.splitlines() == [
        f"recmetrics: error: -o {small}/out.json: cannot write (No space left on device); "
        f"nothing was written and {small}/out.json is as it was"]


# --------------------------------------------------------------------------- per-user files

def test_the_per_user_parquet_file_is_whole_or_as_it_was(tmp_path):
    pred = pd.read_csv(DATA / "sample_model_a.csv").head(200)
    truth = pd.read_csv(DATA / "sample_truth.csv").head(200)
    target = tmp_path / "users.parquet"
    assert rm.evaluate_per_user(pred, truth, per_user_path=target) is None
    pd.testing.assert_frame_equal(pd.read_parquet(target), rm.evaluate_per_user(pred, truth))
    assert [p.name for p in tmp_path.iterdir()] == ["users.parquet"]
    with pytest.raises(ValueError, match="per_user_path .* is a folder"):
        rm.evaluate_per_user(pred, truth, per_user_path=tmp_path)


def test_a_per_user_folder_is_new_or_empty_and_renamed_into_place_whole(tmp_path):
    """Bug: a folder of an earlier per-user run got the new part files beside its old ones
    (more old parts than new: users counted twice); and a failure left a half-written folder."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "part.00007.parquet").write_bytes(b"old")
    with pytest.raises(rio.FileProblem, match="already holds files"):
        _output.directory_output(tmp_path / "old")
    with pytest.raises(RuntimeError):
        with _output.directory_output(tmp_path / "new") as folder:
            Path(folder, "part.00000.parquet").write_bytes(b"half")
            raise RuntimeError("a worker died")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    (tmp_path / "empty").mkdir()
    with _output.directory_output(tmp_path / "empty") as folder:
        Path(folder, "part.00000.parquet").write_bytes(b"whole")
    assert [p.name for p in (tmp_path / "empty").iterdir()] == ["part.00000.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "old"]


def test_the_dask_per_user_folder_may_not_be_the_input_dataset(tmp_path):
    pytest.importorskip("distributed")
    import dask.dataframe as dd

    from recmetrics import distributed

    (tmp_path / "logs").mkdir()
    pd.read_csv(DATA / "sample_model_a.csv").head(100).merge(
        pd.read_csv(DATA / "sample_truth.csv"), on=["user", "item"]).to_parquet(
        tmp_path / "logs" / "part.0.parquet")
    before = (tmp_path / "logs" / "part.0.parquet").read_bytes()
    pred = dd.read_parquet(str(tmp_path / "logs"))
    for target in (tmp_path / "logs", tmp_path / "logs" / "users"):
        with pytest.raises(rio.FileProblem, match="per_user_path .*input"):
            distributed.evaluate_per_user(pred, per_user_path=target)
    assert (tmp_path / "logs" / "part.0.parquet").read_bytes() == before
    assert [p.name for p in (tmp_path / "logs").iterdir()] == ["part.0.parquet"]


def test_no_thread_sees_a_changed_umask_while_outputs_are_written(tmp_path):
    """Outputs written from several threads at once get 0o666 & ~umask each."""
    old = os.umask(0o022)
    try:
        def write(i):
            with rio.atomic_file(str(tmp_path / f"{i}.txt")) as handle:
                handle.write(b"x")
        threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {0o644}


# --------------------------------------------------------------------------- messages name the caller's argument

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_to_csv_write_errors_name_path_not_dash_o_issue_35(tmp_path):
    """Bug (issue 35): rm.to_csv(table, path=...) write errors named ``-o`` (a flag of the
    command line) instead of ``path``, the argument the Python caller gave; the same for a
    failed atomic write (a file-size limit, in a child process) and for render_report's
    ``output``."""
    table = pd.DataFrame({"metric": ["ndcg"], "value": [0.5]})
    with pytest.raises(ValueError) as caught:
        rm.to_csv(table, "/dev/full")
    assert str(caught.value).startswith("path /dev/full: cannot write (No space left")
    with pytest.raises(ValueError, match=r"^path .*: is a folder"):
        rm.to_csv(table, tmp_path)
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    script = ("import resource, signal, pandas as pd, recmetrics as rm\n"
              "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
              "table = pd.DataFrame({'metric': ['ndcg'] * 500, 'value': 0.5})\n"
              "try:\n"
              f"    rm.to_csv(table, {str(target)!r})\n"
              "except ValueError as error:\n"
              "    print(error)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600)
    assert done.stdout.strip() == (f"path {target}: cannot write (File too large); nothing was "
                                   f"written and {target} is as it was"), done.stderr
    assert target.read_text() == "old\n"
    from recmetrics import report

    try:
        report.require_jupyter()
    except report.ReportUnavailable:
        pytest.skip("needs the report extra")
    with pytest.raises(ValueError, match=r"^output .*: is a folder"):
        report.render_report({}, tmp_path)
