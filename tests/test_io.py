"""Issue 8, the file path: messy files read right or refused by line, outputs never damaged.

Every reading case runs twice, through the command line (`recmetrics evaluate`, in
process) and through `recmetrics.io.read_scores`. The numbers of the good cases are
hand arithmetic on one tiny data set, written out below, whatever its encoding,
separator or layout:

    user  item  score  label          ranked per user           relevant at rank
    u1    a     0.9    1              u1: a (0.9), c, b         1
    u1    b     0.2    0              u2: a (0.85), d (0.3)     2
    u1    c     0.5    0
    u2    a     0.85   0
    u2    d     0.3    1

Global AUC: positives 0.9 and 0.3 against negatives 0.2, 0.5, 0.85 win 3 + 1 of
6 pairs, so AUC = 4/6. MRR = (1/1 + 1/2) / 2 = 0.75.
"""
from __future__ import annotations

import codecs
import gzip
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import _progress, cli
from recmetrics import io as rio

AUC, MRR = 4 / 6, 0.75
ROWS = [("u1", "a", "0.9", "1"), ("u1", "b", "0.2", "0"), ("u1", "c", "0.5", "0"),
        ("u2", "a", "0.85", "0"), ("u2", "d", "0.3", "1")]
HEADER = ("user", "item", "score", "label")
COLUMNS = {"user": "user", "item": "item", "score": "score", "label": "label"}


def text(rows=ROWS, sep=",", newline="\n", header=HEADER, ids=None) -> str:
    ids = ids or {}
    lines = [sep.join(header)] + [sep.join((ids.get(r[0], r[0]), ids.get(r[1], r[1])) + r[2:])
                                  for r in rows]
    return newline.join(lines) + newline


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def numbers(out: str) -> dict:
    return {m["metric"]: m["value"] for m in json.loads(out)["metrics"]}


CHINESE = {"u1": "用户一", "u2": "用户二", "a": "商品甲"}
ACCENTS = {"u1": "José", "u2": "Zoë", "a": "café"}

# (id, file name, bytes, extra options); each must read to the tiny data set above
GOOD = [
    ("plain csv", "p.csv", text().encode(), []),
    ("CRLF line ends", "p.csv", text(newline="\r\n").encode(), []),
    ("UTF-8 with BOM", "p.csv", codecs.BOM_UTF8 + text().encode(), []),
    ("UTF-16 with BOM, no option", "p.csv", text().encode("utf-16"), []),
    ("UTF-16 with --encoding", "p.csv", text().encode("utf-16"), ["--encoding", "utf-16"]),
    ("GBK (Chinese Excel)", "p.csv", text(ids=CHINESE).encode("gbk"), ["--encoding", "gbk"]),
    ("Latin-1", "p.csv", text(ids=ACCENTS).encode("latin-1"), ["--encoding", "latin-1"]),
    ("semicolons with --sep", "p.csv", text(sep=";").encode(), ["--sep", ";"]),
    ("tabs in .tsv", "p.tsv", text(sep="\t").encode(), []),
    ("tabs in .txt, found from the header", "p.txt", text(sep="\t").encode(), []),
    ("bars in .txt", "p.txt", text(sep="|").encode(), []),
    ("--sep tab spelled out", "p.csv", text(sep="\t").encode(), ["--sep", "tab"]),
    ("gzip", "p.csv.gz", gzip.compress(text().encode()), []),
    ("blank lines", "p.csv", text().replace("u1,b", "\nu1,b").replace("u2,d", "\n\nu2,d").encode(),
     []),
    ("quoted values and a quoted newline in an unused column",
     "p.csv", ('user,item,score,label,comment\n"u1","a",0.9,1,"two\nlines"\nu1,b,0.2,0,\n'
               'u1,c,0.5,0,"say ""hi"""\nu2,a,0.85,0,x\nu2,d,0.3,1,y\n').encode(), []),
    ("scores pandas would read, pyarrow not at first", "p.csv",
     text().replace("0.9,", " 9e-1 ,").encode(), []),
]


@pytest.mark.parametrize("name, content, options", [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_messy_files_give_the_hand_computed_numbers(name, content, options, tmp_path, capsys):
    path = tmp_path / name
    path.write_bytes(content)
    before = path.read_bytes()
    code, out, err = run(["evaluate", path, "--metrics", "auc", "mrr", "--format", "json",
                          *options], capsys)
    assert (code, err) == (0, ""), err
    got = numbers(out)
    assert got["auc"] == pytest.approx(AUC, abs=1e-12)
    assert got["mrr"] == pytest.approx(MRR, abs=1e-12)
    assert path.read_bytes() == before
    # the same through the Python function
    options = dict(zip(options[::2], options[1::2]))
    sep = {"tab": "\t"}.get(options.get("--sep"), options.get("--sep"))
    frame = rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",),
                            sep=sep, encoding=options.get("--encoding"))
    assert frame["score"].tolist() == [0.9, 0.2, 0.5, 0.85, 0.3]
    assert frame["label"].tolist() == [1, 0, 0, 0, 1]
    assert len(set(frame["user"])) == 2 and frame["user"].iloc[0] == frame["user"].iloc[2]


# (id, file name, bytes, extra options, message); each must end with exit 2 and this one line
BAD = [
    ("more fields than the header (decimal comma)", "p.csv",
     text().replace("u1,c,0.5,0", "u1,c,0,5,0").encode(), [],
     r"p\.csv line 4 has 5 fields but the header names 4 \('u1,c,0,5,0'\); a decimal comma or an "
     r"unquoted comma inside a value\? quote that value or fix the row"),
    ("every score with a decimal comma", "p.csv",
     text().replace("0.", "0,").encode(), [], r"p\.csv line 2 has 5 fields but the header names 4"),
    ("fewer fields than the header", "p.csv", text().replace("u2,a,0.85,0", "u2,a,0.85").encode(),
     [], r"p\.csv line 5 has 3 field\(s\) but the header names 4 \('u2,a,0\.85'\); fill in"),
    ("line numbers count blank lines", "p.csv",
     text().replace("u1,b,0.2", "\n\nu1,b,high").encode(), [],
     r"p\.csv column 'score' must hold numbers, found 'high' in line 5; fix or drop that row"),
    ("line numbers count quoted newlines", "p.csv",
     ('user,item,score,label\nu1,"a\nstill a",0.9,1\nu1,b,0.2,0\nu2,a,,0\n').encode(), [],
     r"p\.csv column 'score' has 1 missing or NaN value\(s\) \(first in line 5\)"),
    ("ragged row after a quoted newline", "p.csv",
     ('user,item,score,label\nu1,"a\nb",0.9,1\n\nu1,b,0.2,0,7\n').encode(), [],
     r"p\.csv line 5 has 5 fields but the header names 4"),
    ("GBK without --encoding", "p.csv", text(ids=CHINESE).encode("gbk"), [],
     r"p\.csv: byte [0-9a-f ]+ in line 2 cannot be read as UTF-8; it is not UTF-8; pass --encoding "
     r"with the file's encoding, e\.g\. --encoding gbk \(Excel on a Chinese system\), --encoding "
     r"latin-1 or cp1252"),
    ("Latin-1 without --encoding, bad byte late", "p.csv",
     text(ids={"u2": "Zoë"}).encode("latin-1"), [],
     r"p\.csv: byte eb in line 5 cannot be read as UTF-8; it is not UTF-8"),
    ("UTF-8 read as UTF-16", "p.csv", text().encode(), ["--encoding", "utf-16"],
     r"p\.csv.*utf-16.*check --encoding|p\.csv has no column"),
    ("unknown encoding", "p.csv", text().encode(), ["--encoding", "klingon"],
     r"argument --encoding: 'klingon' is not a known encoding"),
    ("semicolons without --sep", "p.csv", text(sep=";").encode(), [],
     r"p\.csv has one column only, 'user;item;score;label', which contains a semicolon: the file "
     r"is separated by semicolons, not commas; pass --sep ';'"),
    ("tabs in a .csv", "p.csv", text(sep="\t").encode(), [],
     r"p\.csv has one column only, .* which contains a tab: the file is separated by tabs, not "
     r"commas; pass --sep '\\t'"),
    ("a bad --sep", "p.csv", text().encode(), ["--sep", ",,"],
     r"argument --sep: ',,' must be one character"),
    ("a column named twice", "p.csv", text(header=("user", "item", "score", "user")).encode(),
     ["--truth", "t.csv"], r"p\.csv names column 'user' twice \(columns 1 and 4\); rename one"),
]


@pytest.mark.parametrize("name, content, options, message", [c[1:] for c in BAD],
                         ids=[c[0] for c in BAD])
def test_messy_files_are_refused_in_one_line_naming_the_line(name, content, options, message,
                                                             tmp_path, capsys):
    path = tmp_path / name
    path.write_bytes(content)
    if "t.csv" in options:
        (tmp_path / "t.csv").write_text(text())
        options = [str(tmp_path / o) if o == "t.csv" else o for o in options]
    before = path.read_bytes()
    code, out, err = run(["evaluate", path, "--metrics", "auc", "mrr", *options], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("recmetrics: error: "), err
    assert re.search(message, err), err
    assert path.read_bytes() == before
    if not message.startswith("argument"):      # the same message from the Python function
        options = dict(zip(options[::2], options[1::2]))
        with pytest.raises(ValueError) as caught:
            rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",),
                            sep=options.get("--sep"), encoding=options.get("--encoding"))
        assert re.search(message, str(caught.value)), str(caught.value)


# --------------------------------------------------------------------------- outputs

PRED = rm.DATA_DIR / "sample_model_a.csv"
TRUTH = rm.DATA_DIR / "sample_truth.csv"


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "small.csv"
    path.write_text(text())
    return path


FORMATS = [  # (file name, how to read it back)
    ("m.csv", lambda p: pd.read_csv(p)),
    ("m.csv.gz", lambda p: pd.read_csv(p)),
    ("m.csv.bz2", lambda p: pd.read_csv(p)),
    ("m.csv.xz", lambda p: pd.read_csv(p)),
    ("m.csv.zst", lambda p: __import__("pyarrow.csv").csv.read_csv(p).to_pandas()),
    ("m.tsv", lambda p: pd.read_csv(p, sep="\t")),
    ("m.parquet", lambda p: pd.read_parquet(p)),
    ("m.json", lambda p: pd.DataFrame(json.loads(p.read_text())["metrics"])),
]


@pytest.mark.parametrize("name, read", FORMATS, ids=[f[0] for f in FORMATS])
def test_the_output_format_follows_the_extension(name, read, small, tmp_path, capsys):
    code, out, err = run(["evaluate", small, "--metrics", "auc", "mrr", "-o", tmp_path / name],
                         capsys)
    assert (code, out, err) == (0, "", "")
    table = read(tmp_path / name)
    values = dict(zip(table.metric, table.value))
    assert values["auc"] == pytest.approx(AUC) and values["mrr"] == pytest.approx(MRR)


def test_txt_and_no_extension_get_the_table(small, tmp_path, capsys):
    for name in ("m.txt", "metrics"):
        code, _, err = run(["evaluate", small, "--metrics", "auc", "-o", tmp_path / name], capsys)
        assert (code, err) == (0, "")
        assert (tmp_path / name).read_text().startswith("evaluated: ")


OUTPUT_REFUSALS = [
    ("an unknown extension", lambda t, s: [t / "m.xlsx"], [],
     r"-o .*m\.xlsx: cannot write \.xlsx files; name the file \.txt, \.json, \.csv, \.tsv, \.parquet"),
    ("a compressed JSON", lambda t, s: [t / "m.json.gz"], [], r"cannot write \.json\.gz files"),
    ("--format against the extension", lambda t, s: [t / "m.csv"], ["--format", "json"],
     r"-o .*m\.csv names a CSV file but --format json was given; drop --format or rename the file"),
    ("the scores file itself", lambda t, s: [s], [],
     r"-o .*small\.csv: is the scores file .*small\.csv; writing there would destroy it"),
    ("the truth file by another path", lambda t, s: [Path(os.path.relpath(t / "t.csv"))],
     ["--truth", "t.csv"], r"is the --truth file .*t\.csv"),
    ("the input through a symlink", lambda t, s: [t / "link.csv"], ["link"],
     r"is the scores file .*small\.csv"),
    ("a missing folder", lambda t, s: [t / "no" / "m.csv"], [],
     r"-o .*m\.csv: folder .*no does not exist; create it first"),
    ("parquet to stdout", lambda t, s: ["-"], ["--format", "parquet"],
     r"-o -: Parquet is binary; write it to a file ending in \.parquet"),
]


@pytest.mark.parametrize("target, options, message", [c[1:] for c in OUTPUT_REFUSALS],
                         ids=[c[0] for c in OUTPUT_REFUSALS])
def test_output_refusals_touch_nothing(target, options, message, small, tmp_path, capsys):
    (tmp_path / "t.csv").write_text(text(rows=[r[:2] + r[3:] for r in ROWS],
                                         header=("user", "item", "label")))
    if "link" in options:
        (tmp_path / "link.csv").symlink_to(small)
        options = []
    options = [str(tmp_path / o) if o == "t.csv" else o for o in options]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    cwd = os.getcwd()
    os.chdir(tmp_path.parent)
    try:
        code, out, err = run(["evaluate", small, *options, "-o", *target(tmp_path, small)], capsys)
    finally:
        os.chdir(cwd)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before


def test_the_output_is_checked_before_the_inputs_are_read(tmp_path, capsys):
    """A bad -o is reported even when reading the input would fail later (no work wasted)."""
    bad_input = tmp_path / "p.csv"
    bad_input.write_text("user,item,score\nu,a,high\n")
    code, _, err = run(["evaluate", bad_input, "-o", tmp_path / "m.xlsx"], capsys)
    assert code == 2 and "m.xlsx: cannot write" in err
    code, _, err = run(["compare", bad_input, bad_input, "-o", tmp_path / "missing" / "m.csv"],
                       capsys)
    assert code == 2 and "does not exist; create it first" in err
    code, _, err = run(["report", bad_input, "-o", tmp_path / "r.pdf"], capsys)
    assert code == 2 and "r.pdf: cannot write .pdf files" in err


def test_an_existing_output_keeps_its_mode_and_is_replaced_whole(small, tmp_path, capsys):
    target = tmp_path / "m.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    code, _, err = run(["evaluate", small, "--metrics", "auc", "-o", target], capsys)
    assert (code, err) == (0, "")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert pd.read_csv(target).value.iloc[0] == pytest.approx(AUC)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv", "small.csv"]   # no temp file


def test_a_symlink_is_written_through_and_stays_a_link(small, tmp_path, capsys):
    real = tmp_path / "real" / "m.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / "m.json"
    link.symlink_to(real)
    code, _, err = run(["evaluate", small, "--metrics", "auc", "-o", link], capsys)
    assert (code, err) == (0, "")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert numbers(real.read_text())["auc"] == pytest.approx(AUC)


def test_a_fifo_is_written_through(small, tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = run(["evaluate", small, "--metrics", "auc", "-o", fifo], capsys)
    reader.join(timeout=60)
    assert (code, err) == (0, "")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)              # still a FIFO, not a regular file
    assert b"auc," in received[0] and b"0.666666" in received[0]


def test_dev_stdout_and_dash_write_to_standard_output(small, tmp_path):
    command = [sys.executable, "-m", "recmetrics", "evaluate", str(small), "--metrics", "auc",
               "--format", "csv", "-o"]
    outputs = []
    for target in ("/dev/stdout", "-"):
        done = subprocess.run(command + [target], capture_output=True, text=True, timeout=600)
        assert (done.returncode, done.stderr) == (0, "")
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "auc," in outputs[0]
    # stdout redirected to a file: /dev/stdout writes into that file, which stays the same inode
    into = tmp_path / "into.csv"
    with open(into, "w") as handle:
        inode = os.fstat(handle.fileno()).st_ino
        done = subprocess.run(command + ["/dev/stdout"], stdout=handle, stderr=subprocess.PIPE,
                              text=True, timeout=600)
    assert done.returncode == 0 and into.stat().st_ino == inode
    assert into.read_text() == outputs[0]


# --------------------------------------------------------------------------- options and memory

OPTIONS = [
    ("k beyond int64", ["evaluate", PRED, "--truth", TRUTH, "--k", "99999999999999999999"],
     r"argument --k: 99999999999999999999 is too large; use at most 2,147,483,647"),
    ("k of a billion with the full ideal", ["evaluate", PRED, "--truth", TRUTH, "--k", "1000000000",
                                            "--ideal", "full"],
     r"--k 1000000000 with --ideal full needs about [\d,.]+ [GT]iB \(2,000 users x 1,000,000,000 "
     r"ideal positions\) but .* is available; use a smaller --k or --ideal truth"),
    ("the same in report", ["report", PRED, "--truth", TRUTH, "--k", "1000000000", "--ideal",
                            "full"], r"--k 1000000000 with --ideal full needs about"),
    ("10^12 bootstrap resamples", ["evaluate", PRED, "--truth", TRUTH, "--ci", "0.9",
                                   "--n-resamples", "1000000000000"],
     r"argument --n-resamples: '1000000000000' is too large; use at most 10,000,000"),
    ("10^12 randomization resamples", ["compare", PRED, rm.DATA_DIR / "sample_model_b.csv",
                                       "--truth", TRUTH, "--n-resamples", "1000000000000"],
     r"argument --n-resamples: '1000000000000' is too large"),
    ("too few resamples for an interval", ["evaluate", PRED, "--truth", TRUTH, "--ci", "0.9",
                                           "--n-resamples", "1"],
     r"argument --n-resamples: '1' must be a whole number >= 100, e\.g\. 1000"),
    ("bootstrap intervals larger than the memory", ["evaluate", PRED, "--truth", TRUTH, "--ci",
                                                    "0.9", "--n-resamples", "10000000", "--k",
                                                    *map(str, range(1, 401))],
     r"--n-resamples 10,000,000 needs about [\d,.]+ [GT]iB for the bootstrap intervals \(\d+ "
     r"metric rows x 10,000,000 resamples\) but .* is available; use fewer resamples"),
    ("the same in report", ["report", PRED, "--truth", TRUTH, "--n-resamples", "10000000", "--k",
                            *map(str, range(1, 401))], r"--n-resamples 10,000,000 needs about"),
    ("seed as text", ["evaluate", PRED, "--truth", TRUTH, "--seed", "x"],
     r"argument --seed: 'x' must be a whole number >= 0"),
]


@pytest.mark.parametrize("argv, message", [c[1:] for c in OPTIONS], ids=[c[0] for c in OPTIONS])
def test_huge_options_are_refused_before_the_work(argv, message, tmp_path, capsys):
    argv = list(argv) + ["-o", tmp_path / ("r.html" if argv[0] == "report" else "m.json")]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []


def test_python_option_names_become_flags_in_messages():
    assert cli._as_flags("n_resamples=0 must be an integer >= 1; use k=1 or ideal='truth'") == \
        "--n-resamples 0 must be an integer >= 1; use --k 1 or --ideal truth"
    assert cli._as_flags("a tie straddles position k=3") == "a tie straddles position k=3"


def test_progress_on_a_pipe_only_when_asked(small):
    command = [sys.executable, "-m", "recmetrics", "evaluate", str(small), "--metrics", "auc"]
    silent = subprocess.run(command, capture_output=True, text=True, timeout=600)
    shown = subprocess.run(command + ["--progress"], capture_output=True, text=True, timeout=600)
    assert silent.returncode == shown.returncode == 0
    assert silent.stderr == "" and silent.stdout == shown.stdout
    for stage in ("[1/3] reading small.csv", "[2/3] computing 1 metrics", "[3/3] writing"):
        assert stage in shown.stderr, shown.stderr


def test_the_moving_progress_bar_refreshes_during_a_long_stage():
    """A stage without a size still redraws (its elapsed time) several times a second."""
    import io as stdio

    buffer = stdio.StringIO()
    progress = _progress.Progress(1, enabled=True, file=buffer)
    progress.stage("computing")
    time.sleep(1.2)
    progress.close()
    assert buffer.getvalue().count("[1/1] computing") >= 3


# --------------------------------------------------------------------------- the report extra


def test_report_without_the_jupyter_extra_says_how_to_install_it(tmp_path):
    code = ("import sys\n"
            "for name in ('nbformat', 'nbclient', 'nbconvert', 'ipykernel'):\n"
            "    sys.modules[name] = None    # as if not installed\n"
            "from recmetrics.cli import main\n"
            f"raise SystemExit(main(['report', {str(PRED)!r}, '--truth', {str(TRUTH)!r}, "
            f"'-o', {str(tmp_path / 'r.html')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "recmetrics: error: the report needs the Jupyter packages of the 'report' extra (missing: "
        "nbformat, nbclient, nbconvert, ipykernel); install them with pip install "
        "metricbook[report]"]
    assert list(tmp_path.iterdir()) == []
    # evaluate needs none of them
    code = code.replace("'report'", "'evaluate'").replace("'r.html'", "'m.json'").replace(
        str(tmp_path / "r.html"), str(tmp_path / "m.json"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "m.json").read_text())["command"] == "evaluate"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_ctrl_c_in_report_stops_the_kernel_and_writes_nothing(tmp_path):
    """A real SIGINT while the notebook runs: "interrupted", status 130, no file, no kernel.

    Bug fixed: the child inherited an ignored SIGINT when pytest itself started with SIGINT
    ignored (as a background job of a shell does), so the signal did nothing and the test
    failed with ``assert 0 == 130``. The child now restores SIGINT's default before Python starts,
    as a terminal would give it.
    """
    import signal

    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "recmetrics", "report", str(PRED), "--truth",
                                str(TRUTH), "--n-resamples", "100000", "-o", str(out / "r.html")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    kernel = None
    deadline = time.monotonic() + 300
    while kernel is None and time.monotonic() < deadline and process.poll() is None:
        kernels = [c for c in _children(process.pid)
                   if b"ipykernel" in Path(f"/proc/{c}/cmdline").read_bytes()]
        kernel = kernels[0] if kernels else None
        time.sleep(0.1)
    assert kernel is not None, "the report's kernel never started"
    time.sleep(3)                          # let it run a cell or two
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130
    assert stderr == "recmetrics: interrupted\n" and stdout == ""
    for _ in range(100):
        if not _alive(kernel):
            break
        time.sleep(0.1)
    assert not _alive(kernel), "the kernel was left running"
    assert list(out.iterdir()) == []


DATASET_OUTPUTS = [  # (id, input given as, -o target, message)
    ("a file of an input directory", "logs", "logs/part-00000.parquet",
     r"-o .*logs/part-00000\.parquet: lies inside the input dataset directory .*logs; writing "
     r"there would replace or add to what is read"),
    ("a new file inside an input directory", "logs", "logs/sub/../table.json",
     r"lies inside the input dataset directory"),
    ("a file a glob matches", "logs/*.parquet", "logs/part-00001.parquet",
     r"-o .*logs/part-00001\.parquet: is a file of the input dataset .*logs/\*\.parquet; writing "
     r"there would replace or add to what is read"),
    ("a new file the glob would read next time", "logs/part-*.parquet", "logs/part-00009.parquet",
     r"is a file of the input dataset"),
    ("a recursive glob", "logs/**/*.parquet", "logs/part-00000.parquet",
     r"is a file of the input dataset"),
    ("a file of the truth directory", "truth", "truth/t.parquet",
     r"lies inside the input dataset directory .*truth"),
]


@pytest.mark.parametrize("given, target, message", [c[1:] for c in DATASET_OUTPUTS],
                         ids=[c[0] for c in DATASET_OUTPUTS])
def test_an_output_inside_an_input_dataset_is_refused_before_any_work(given, target, message,
                                                                       tmp_path, capsys):
    """Bug: `-o logs/part-00000.parquet` replaced a file of the dataset the command read."""
    pytest.importorskip("distributed")
    (tmp_path / "logs").mkdir()
    (tmp_path / "truth").mkdir()
    frame = pd.DataFrame({"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"],
                          "score": [0.9, 0.2, 0.5], "label": [1, 0, 1]})
    for i in range(2):
        frame.to_parquet(tmp_path / "logs" / f"part-0000{i}.parquet")
    frame.drop(columns="score").to_parquet(tmp_path / "truth" / "t.parquet")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    argv = ["evaluate", tmp_path / "logs" if given == "truth" else tmp_path / given,
            "--engine", "dask", "-o", tmp_path / target]
    if given == "truth":
        argv += ["--truth", tmp_path / "truth"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    # the same in Python: plan_output, before anything is read
    with pytest.raises(rio.FileProblem, match=message.replace("-o ", "")):
        rio.plan_output(str(tmp_path / target), inputs=[str(tmp_path / given)])


def zipped(members: dict[str, bytes], compression=None) -> bytes:
    """A real .zip archive written by Python's zipfile."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression or zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_archive_with_one_csv_gives_the_hand_computed_numbers(tmp_path, capsys):
    """Bug: a valid .csv.zip raised a traceback (zipfile could not seek in the stream)."""
    import zipfile

    for name, compression, content, options in [
            ("p.csv.zip", zipfile.ZIP_DEFLATED, text().encode(), []),
            ("p.csv.zip", zipfile.ZIP_STORED, text().encode(), []),
            ("p.tsv.zip", zipfile.ZIP_BZIP2, text(sep="\t").encode(), []),
            ("p.csv.zip", zipfile.ZIP_LZMA, text(ids=CHINESE).encode("gbk"), ["--encoding", "gbk"])]:
        path = tmp_path / name
        path.write_bytes(zipped({"folder/": b"", "folder/scores.csv": content}, compression))
        code, out, err = run(["evaluate", path, "--metrics", "auc", "mrr", "--format", "json",
                              *options], capsys)
        assert (code, err) == (0, ""), err
        assert numbers(out) == pytest.approx({"auc": AUC, "mrr": MRR}, abs=1e-12)
        frame = rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",),
                                encoding=options[1] if options else None)
        assert len(frame) == len(ROWS)


ZIP_REFUSALS = [
    ("two members", {"a.csv": text().encode(), "b.csv": text().encode()},
     r"holds 2 files \(a\.csv, b\.csv\); a \.zip input must hold exactly one CSV file"),
    ("no member", {}, r"holds 0 files; a \.zip input must hold exactly one CSV file"),
    ("only a folder", {"empty/": b""}, r"holds 0 files"),
    ("not a zip archive", b"user,item,score,label\n", r"is not a readable \.zip archive"),
    ("cut in half", "half", r"is not a readable \.zip archive"),
    ("a damaged member", "crc", r"is not a readable CSV file \(.*(CRC|Error).*\)"),
]


@pytest.mark.parametrize("members, message", [c[1:] for c in ZIP_REFUSALS],
                         ids=[c[0] for c in ZIP_REFUSALS])
def test_a_zip_archive_not_holding_one_readable_csv_is_refused_in_one_line(members, message,
                                                                           tmp_path, capsys):
    whole = zipped({"scores.csv": text().encode() * 50})
    if members == "half":
        data = whole[:len(whole) // 2]
    elif members == "crc":
        start = whole.index(b"scores.csv") + len(b"scores.csv") + 20
        data = whole[:start] + bytes([whole[start] ^ 0x55]) + whole[start + 1:]
    else:
        data = members if isinstance(members, bytes) else zipped(members)
    path = tmp_path / "p.csv.zip"
    path.write_bytes(data)
    code, out, err = run(["evaluate", path, "--metrics", "auc"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    assert path.read_bytes() == data
    with pytest.raises(rio.FileProblem, match=message):
        rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",))


def excel_and_utf8_files(tmp_path):
    """Scores saved by Excel in cp1252, the truth file in UTF-8, with accented ids in both."""
    pred = tmp_path / "excel.csv"
    pred.write_bytes(text(rows=[r[:3] for r in ROWS], header=HEADER[:3],
                          ids=ACCENTS).encode("cp1252"))
    truth = tmp_path / "truth.csv"
    truth.write_bytes(text(rows=[r[:2] + r[3:] for r in ROWS], header=("user", "item", "label"),
                           ids=ACCENTS).encode("utf-8"))
    return pred, truth


@pytest.mark.parametrize("options", [["--pred-encoding", "cp1252"],
                                     ["--encoding", "cp1252", "--truth-encoding", "utf-8"],
                                     ["--truth-encoding", "utf-8", "--pred-encoding", "windows-1252"]])
def test_each_file_gets_its_own_encoding(options, tmp_path, capsys):
    """Bug: --encoding cp1252 for an Excel file was applied to the UTF-8 truth file too: ids
    such as 'JosÃ©' matched nothing and the numbers were wrong, without a word."""
    pred, truth = excel_and_utf8_files(tmp_path)
    code, out, err = run(["evaluate", pred, "--truth", truth, "--metrics", "auc", "mrr",
                          "--format", "json", *options], capsys)
    assert (code, err) == (0, ""), err
    assert numbers(out) == pytest.approx({"auc": AUC, "mrr": MRR}, abs=1e-12)
    code, out, err = run(["compare", pred, pred, "--truth", truth, "--metrics", "mrr",
                          "--format", "json", *options], capsys)
    assert (code, err) == (0, ""), err
    assert json.loads(out)["metrics"][0]["value_a"] == pytest.approx(MRR, abs=1e-12)


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1", "iso8859_15"])
def test_a_utf8_file_read_as_a_single_byte_encoding_is_refused(encoding, tmp_path, capsys):
    pred, truth = excel_and_utf8_files(tmp_path)
    before = truth.read_bytes()
    code, out, err = run(["evaluate", pred, "--truth", truth, "--encoding", encoding], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert re.search(rf"truth\.csv is UTF-8 text \(it holds 'é' written as UTF-8\), but it was "
                     rf"to be read as {encoding}, which would turn 'é' into 'Ã©'", err), err
    assert "--truth-encoding" in err
    assert truth.read_bytes() == before
    with pytest.raises(rio.FileProblem, match="is UTF-8 text"):
        rio.read_scores(truth, columns={"user": "user", "item": "item", "label": "label"},
                        grades=("label",), encoding=encoding)
    # ASCII-only UTF-8 files read the same in any of these encodings: no refusal
    plain = tmp_path / "plain.csv"
    plain.write_text(text())
    code, out, err = run(["evaluate", plain, "--encoding", encoding, "--metrics", "auc",
                          "--format", "json"], capsys)
    assert (code, err) == (0, "") and numbers(out)["auc"] == pytest.approx(AUC, abs=1e-12)


def test_the_help_names_the_per_file_encodings(capsys):
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--pred-encoding NAME" in out and "--truth-encoding NAME" in out
    assert "overriding --encoding" in out


def test_a_quoted_newline_across_pyarrows_block_cut_is_read_not_split(tmp_path):
    """The first read lets pyarrow cut the file at any line end; here the only line end near
    its 4 MiB block boundary is inside a quoted id, so that read fails and the file is read
    again allowing newlines in values. The rows are those pandas' own parser reads."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    block = 1 << 22
    header = "user,item,score\n"
    row = "u0000000,i1,0.5\n"                      # 16 bytes
    n_before = (block - len(header)) // len(row) - 1
    body = "".join(f"u{i:07d},i1,0.{i % 10}\n" for i in range(n_before))
    pad = block - len(header) - len(body) - len('u_last,"new') - 2
    special = 'u_last,"new' + "x" * pad + '\nline",0.25\n'  # its newline is the block's last
    tail = "".join(f"v{i:07d},i2,0.{i % 10}\n" for i in range(1000))
    path = tmp_path / "p.csv"
    path.write_text(header + body + special + tail, encoding="utf-8")
    with pytest.raises(pa.ArrowInvalid):  # the cut does split the quoted id
        pacsv.read_csv(path, read_options=pacsv.ReadOptions(block_size=block),
                       parse_options=pacsv.ParseOptions(newlines_in_values=False))
    frame = rio.read_scores(path, columns={"user": "user", "item": "item", "score": "score"},
                            numbers=("score",))
    expected = pd.read_csv(path, dtype={"user": str, "item": str})
    assert len(frame) == len(expected) == n_before + 1 + 1000
    assert frame["item"].astype(str).tolist() == expected["item"].tolist()
    assert frame["score"].tolist() == expected["score"].tolist()
    assert frame["item"].astype(str).iloc[n_before] == "new" + "x" * pad + "\nline"


# --------------------------------------------------------------------------- issue 35: older cases


def test_a_file_whose_lines_end_in_cr_only_is_read_right_issue_35(tmp_path, capsys):
    """Bug: a file saved by old Mac Excel (lines ending in CR alone) ended in a csv.Error
    traceback while its header was parsed."""
    path = tmp_path / "mac.csv"
    path.write_bytes(text(newline="\r").encode())
    code, out, err = run(["evaluate", path, "--metrics", "auc", "mrr", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    assert numbers(out) == pytest.approx({"auc": AUC, "mrr": MRR})
    frame = rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",))
    assert list(frame["item"]) == ["a", "b", "c", "a", "d"]


@pytest.mark.parametrize("content, line", [
    # the quote closes three lines later: the two rows between vanished into one item id
    ('user,item,score,label\nu1,"a,0.9,1\nu1,b,0.2,0\nu2,a",0.5,1\nu2,d,0.3,1\n', 2),
    # the quote never closes: every later line ran into the value
    ('user,item,score,label\nu1,a,0.9,1\nu1,"b,0.2,0\nu2,a,0.85,0\nu2,d,0.3,1\n', 3),
], ids=["closed later", "never closed"])
def test_an_unclosed_quote_is_refused_naming_file_and_line_issue_35(content, line, tmp_path,
                                                                      capsys):
    """Bug: a quote opened and not closed swallowed the rows up to the next quote into one id,
    silently (exit 0, two rows fewer)."""
    path = tmp_path / "quoted.csv"
    path.write_text(content)
    code, out, err = run(["evaluate", path], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert f"{path} line {line}" in err and "quote" in err and "Traceback" not in err
    with pytest.raises(rio.FileProblem, match=f"line {line}.*quote"):
        rio.read_scores(path, columns=COLUMNS, numbers=("score",), grades=("label",))


def _binary_parquet(path, users, items=("a", "b", "c", "a", "d")):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"user": pa.array(users, pa.binary()),
                             "item": pa.array([i.encode() for i in items], pa.binary()),
                             "score": [float(r[2]) for r in ROWS]}), path)


def test_parquet_ids_stored_as_binary_are_read_as_their_text_issue_35(tmp_path, capsys):
    """Bug: ids stored as BINARY (bytes) became "b'u1'" under the id policy and matched no id
    of the truth file: NaN AUC and zero precision, exit status 0."""
    pred = tmp_path / "pred.parquet"
    _binary_parquet(pred, [r[0].encode() for r in ROWS])
    truth = tmp_path / "truth.csv"
    truth.write_text("user,item,label\n" + "".join(f"{r[0]},{r[1]},{r[3]}\n" for r in ROWS))
    code, out, err = run(["evaluate", pred, "--truth", truth, "--metrics", "auc", "mrr",
                          "--format", "json"], capsys)
    assert (code, err) == (0, "")
    assert numbers(out) == pytest.approx({"auc": AUC, "mrr": MRR})


def test_parquet_ids_stored_as_bytes_that_are_not_text_are_refused_issue_35(tmp_path, capsys):
    pred = tmp_path / "pred.parquet"
    _binary_parquet(pred, [b"\xff\xfe", b"u1", b"u1", b"u2", b"u2"])
    code, out, err = run(["evaluate", pred, "--truth", pred], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"{pred}: column 'user' holds values stored as bytes that are not UTF-8" in err
    # the Dask and Spark engines read the files themselves: refused before they start
    _binary_parquet(pred, [r[0].encode() for r in ROWS])
    with pytest.raises(rio.FileProblem, match="stored as bytes"):
        rio.parquet_dataset(pred, columns={"user": "user", "item": "item", "score": "score"})


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"], ids=["CR", "CRLF", "LF"])
@pytest.mark.parametrize("rows", [3, 40_000], ids=["in the header block", "after it"])
def test_a_bad_byte_is_named_by_its_line_whatever_the_line_ends_issue_35(newline, rows,
                                                                          tmp_path, capsys):
    """Bug: lines ending in CR alone were not counted, so every bad byte was "in line 1"."""
    lines = ["user,item,score,label"] + [f"u{i},a,0.5,1" for i in range(rows)] + \
        ["u9,b\xe9,0.2,0"]
    path = tmp_path / "latin.csv"
    path.write_bytes(newline.join(lines).encode("latin-1") + newline.encode())
    code, out, err = run(["evaluate", path], capsys)
    assert code == 2 and f"byte e9 in line {rows + 2} cannot be read as UTF-8" in err, err
