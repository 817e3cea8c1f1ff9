"""End to end: `recmetrics report` on the sample data, rendered in headless Chromium.

The browser is Debian's ``chromium`` package driven by Python playwright. When
/usr/bin/chromium is missing, the session fixture installs it with apt-get (the
test set-up runs as root); if that fails, the test fails rather than skip.
A full-page screenshot is saved to build/report-screenshot.png for a human to look at.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CHROMIUM_ARGS, apt_install

import recmetrics as rm

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "build" / "report-screenshot.png"
EXPECTED_METRICS = ["auc", "gauc", "precision@10", "recall@10", "hit_rate@10", "map@10", "mrr",
                    "ndcg@10"]  # the default k is evaluate's




@pytest.fixture(scope="session")
def report(tmp_path_factory) -> Path:
    """The HTML report of the sample data, written by the installed `recmetrics` command."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    command = shutil.which("recmetrics", path=str(Path(sys.executable).parent))
    assert command, "the recmetrics console script is not installed (pip install -e .)"
    done = subprocess.run([command, "report", str(rm.DATA_DIR / "sample_model_a.csv"),
                           "--truth", str(rm.DATA_DIR / "sample_truth.csv"), "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"stderr should be empty when it is not a terminal: {done.stderr!r}"
    assert done.stdout.startswith(f"wrote {out}")
    return out


def test_report_is_self_contained(report):
    text = report.read_text(encoding="utf-8")
    # nothing fetched from elsewhere: no external scripts, styles or images; code cells hidden
    for marker in ('src="http', "src='http", 'href="http', "<link rel=\"stylesheet\" href"):
        assert marker not in text, marker
    images = re.findall(r"<img [^>]*>", text)
    assert len(images) >= 3 and all('src="data:image/png;base64,' in img for img in images), images
    for code in ("def html_table(", "summary, per_user = rm.evaluate("):
        assert code not in text, f"code cells should be hidden: {code!r}"
    assert [p.name for p in report.parent.iterdir()] == ["report.html"], "no temporary file left"


def test_report_renders_in_headless_chromium(chromium, report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            failed = []
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(report.as_uri(), wait_until="load")

            assert page.title().startswith("recmetrics report")
            headings = page.locator("h2").all_inner_texts()
            for section in ("What was evaluated", "Metrics", "ROC curve", "Per-user distributions",
                            "Metrics against k"):
                assert any(h.strip().startswith(section) for h in headings), (section, headings)

            table = page.locator("table.metrics")
            assert table.count() == 1
            names = table.locator("tbody tr td:first-child").all_inner_texts()
            assert [n.strip() for n in names] == EXPECTED_METRICS
            header = [h.strip() for h in table.locator("thead th").all_inner_texts()]
            assert "95% interval" in header
            for row in table.locator("tbody tr").all():
                value = row.locator("td").nth(2).inner_text().strip()
                assert 0.0 <= float(value) <= 1.0

            images = page.evaluate("""() => Array.from(document.images).map(
                img => ({complete: img.complete, width: img.naturalWidth, height: img.naturalHeight}))""")
            assert len(images) >= 3, images   # ROC, per-user histograms, metrics against k
            for image in images:
                assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
            assert not failed, f"requests that failed: {failed}"

            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            browser.close()
    assert SCREENSHOT.stat().st_size > 10_000


# --------------------------------------------------------------------------- whatever evaluate accepts

CJK_FONT_PACKAGE = "fonts-noto-cjk"


@pytest.fixture(scope="session")
def cjk_font() -> None:
    """Debian's Noto CJK fonts, installed with apt-get when missing (as chromium above)."""
    listed = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True)
    if "CJK" not in listed.stdout:
        apt_install([CJK_FONT_PACKAGE])


EDGE = """user,item,score,label
u1,a,inf,1
u1,b,0.2,0
u1,c,-inf,0
u2,a,1.7e308,0
u2,d,-1.7e308,1
u2,e,1e308,0
u3,a,0.5,1
u3,b,0.4,0
"""
# global AUC by hand: positives inf, -1.7e308, 0.5 against negatives 0.2, -inf, 1.7e308, 1e308,
# 0.4 win 5 + 1 + 3 of 15 pairs = 0.6
GRADES = "user,item,score,label\nu1,a,0.9,1\nu1,b,0.2,1030\nu1,c,0.5,0\nu2,a,0.85,0\nu2,d,0.3,1\n"
# global AUC by hand: positives 0.9, 0.2, 0.3 against negatives 0.5, 0.85: 0.9 beats both, the
# others neither, so 2 of 6 pairs = 1/3

REPORT_CASES = [  # (id, file name, content, options, global AUC by hand)
    ("infinite and huge scores, fewest resamples", "edge.csv", EDGE, ["--n-resamples", "100"],
     0.6),
    ("grades above 1024, fewest resamples", "grades.csv", GRADES, ["--n-resamples", "100"], 1 / 3),
    ("Chinese file name and title", "模型甲.csv", GRADES, ["--title", "推荐模型评估报告"], 1 / 3),
]


@pytest.mark.parametrize("name, content, options, auc", [c[1:] for c in REPORT_CASES],
                         ids=[c[0] for c in REPORT_CASES])
def test_report_renders_whatever_evaluate_accepts(name, content, options, auc, tmp_path, cjk_font):
    source = tmp_path / name
    source.write_text(content, encoding="utf-8")
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    command = shutil.which("recmetrics", path=str(Path(sys.executable).parent))
    done = subprocess.run([command, "report", str(source), "--k", "2", *options, "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    page = out.read_text(encoding="utf-8")
    # no warning, error or traceback reached the page: no stderr output, no error output
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in page
    assert "Traceback" not in page and "Warning:" not in page and "Glyph" not in page
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', page)) >= 3
    row = re.search(r"<td[^>]*><b>auc</b></td><td[^>]*>[^<]*</td><td[^>]*>([0-9.]+)</td>", page)
    assert row and float(row.group(1)) == pytest.approx(auc, abs=5e-5)
    if "--title" in options:
        assert "推荐模型评估报告" in page and "模型甲.csv" in page


# --------------------------------------------------------------------------- reproducible


def _report_table(page: str) -> dict[str, tuple[str, ...]]:
    """The metrics table of a report: name -> (value, interval low, interval high) as shown."""
    import html

    table = re.search(r'<table class="report metrics">(.*?)</table>', page, re.S).group(1)
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in
                 re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        interval = tuple(cells[3].replace("\u2013", " ").split()) if cells[3] else ()
        rows[cells[0]] = (cells[2], *interval, cells[4], cells[5])
    return rows


def test_the_recipe_printed_in_the_report_reproduces_every_number(tmp_path):
    """Options of every kind away from their defaults; files as users have them."""
    import html
    import json
    import os

    import pandas as pd

    pred = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    truth = pd.read_csv(rm.DATA_DIR / "sample_truth.csv")
    pred["rank"] = pred.groupby("user")["score"].rank(ascending=False, method="first")
    source = tmp_path / "ranks.csv"
    pred.rename(columns={"user": "user_id", "item": "movie"})[["user_id", "movie", "rank"]] \
        .to_csv(source, sep=";", index=False, encoding="latin-1")
    positives = tmp_path / "held_out.csv"  # positives only: no label column
    truth[truth.label > 0].rename(columns={"user": "user_id", "item": "movie"})[
        ["user_id", "movie"]].to_csv(positives, sep=";", index=False)
    out = tmp_path / "report.html"
    command = shutil.which("recmetrics", path=str(Path(sys.executable).parent))
    argv = [command, "report", str(source), "--truth", str(positives), "--sep", ";",
            "--encoding", "latin-1", "--user-col", "user_id", "--item-col", "movie",
            "--rank-col", "rank", "--k", "3", "7", "--metrics", "auc", "gauc", "recall", "map",
            "mrr", "ndcg", "--ties", "optimistic", "--gain", "linear", "--ideal", "list",
            "--denominator", "min_k", "--gauc-weight", "clicks", "--no-relevant", "zero",
            "--ci", "0.9", "--n-resamples", "150", "--seed", "11", "--bootstrap", "multinomial",
            "-o", str(out)]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    shown = _report_table(page)
    assert set(shown) == {"auc", "gauc", "recall@3", "recall@7", "map@3", "map@7", "mrr",
                          "ndcg@3", "ndcg@7"}
    recipe = html.unescape(re.search(r'<pre class="recipe"><code>(.*?)</code></pre>', page,
                                     re.S).group(1))
    script = recipe + "\nprint(table.to_json(orient='records'))\n"
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    for row in json.loads(ran.stdout.strip().splitlines()[-1]):
        name = row["metric"] if row["k"] is None else f"{row['metric']}@{row['k']}"
        value, low, high, users, skipped = shown[name]
        assert (value, low, high) == (f"{row['value']:.4f}", f"{row['ci_low']:.4f}",
                                      f"{row['ci_high']:.4f}"), name
        assert (users, skipped) == (f"{row['n_users']:,}", f"{row['n_skipped']:,}"), name
    # the same inputs, options and SOURCE_DATE_EPOCH: the same bytes
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0 and out.read_text(encoding="utf-8") == page
    # the provenance section names the inputs' digests and every convention
    import hashlib
    for path in (source, positives):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in page
    provenance = html.unescape(page[page.index('class="report provenance"'):])
    for convention in ("ties='optimistic'", "no_relevant='zero'", "bootstrap='multinomial'",
                       "gauc_weight='clicks'", "sep=';'", "encoding='latin-1'",
                       "'rank': 'rank'", "'user': 'user_id'"):
        assert convention in provenance, convention


def test_report_joins_ids_3_0_and_3_as_one_id_in_its_counts_and_roc_curve(tmp_path):
    """Bug: the report counted relevant rows with a raw merge on the ids, so item ids written
    ``3.0`` in the scores and ``3`` in the truth gave "0 of the 20 scored rows are relevant"
    and no ROC curve, under a metric table that was right."""
    rows = [(f"u{u}", item, (7 * u + 3 * item) % 11 / 10, int((u + item) % 3 == 0))
            for u in range(1, 5) for item in range(1, 6)]
    # by hand: (u + item) % 3 == 0 for (1,2) (1,5) (2,1) (2,4) (3,3) (4,2) (4,5): 7 of 20 rows
    relevant = sum(y for *_, y in rows)
    assert (relevant, len(rows)) == (7, 20)
    pos = [s for _, _, s, y in rows if y]
    neg = [s for _, _, s, y in rows if not y]
    auc = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    (tmp_path / "pred.csv").write_text("user,item,score\n" + "".join(
        f"{u},{item}.0,{s}\n" for u, item, s, _ in rows))
    (tmp_path / "truth.csv").write_text("user,item,label\n" + "".join(
        f"{u},{item},{y}\n" for u, item, _, y in rows))
    out = tmp_path / "r.html"
    command = shutil.which("recmetrics", path=str(Path(sys.executable).parent))
    done = subprocess.run([command, "report", str(tmp_path / "pred.csv"), "--truth",
                           str(tmp_path / "truth.csv"), "--k", "2", "--n-resamples", "100",
                           "--ci", "0.999", "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert f"{relevant} of the {len(rows)} scored rows are relevant" in page
    assert "99.9% interval" in page and "100% interval" not in page   # --ci 0.999
    assert "No ROC curve" not in page
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', page)) >= 3  # ROC drawn
    row = re.search(r"<td[^>]*><b>auc</b></td><td[^>]*>[^<]*</td><td[^>]*>([0-9.]+)</td>", page)
    assert row and float(row.group(1)) == pytest.approx(auc, abs=5e-5)


# --------------------------------------------------------------------------- figures, slices, models


def _cells(page: str, css_class: str) -> list[list[str]]:
    """The body rows of the table of that class, each cell's HTML as written."""
    table = re.search(rf'<table class="{css_class}">(.*?)</table>', page, re.S).group(1)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]


def _text(cell: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", " ", cell)).split()


def _render(arguments: list[str], out: Path) -> str:
    command = shutil.which("recmetrics", path=str(Path(sys.executable).parent))
    done = subprocess.run([command, "report", *arguments, "-o", str(out)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    page = out.read_text(encoding="utf-8")
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in page
    assert "Traceback" not in page
    return page


def _recipe(page: str, tmp_path: Path, tail: str) -> list:
    """Run the recipe printed in the report, then ``tail``; its last line is JSON."""
    import html
    import json

    recipe = html.unescape(re.search(r'<pre class="recipe"><code>(.*?)</code></pre>', page,
                                     re.S).group(1))
    ran = subprocess.run([sys.executable, "-c", recipe + "\n" + tail], capture_output=True,
                         text=True, timeout=900, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.strip().splitlines()[-1])


def _alts(page: str) -> list[str]:
    import html

    images = re.findall(r"<img [^>]*>", page)
    alts = [html.unescape(m.group(1)) for m in
            (re.search(r'alt="([^"]*)"', img) for img in images) if m]
    assert len(alts) == len(images), "every figure has alt text"
    return alts


def test_every_figure_of_the_report_has_alt_text_from_plots_describe(report):
    alts = _alts(report.read_text(encoding="utf-8"))
    assert len(alts) >= 4
    assert alts[0].startswith("ROC curve of 1 model: sample_model_a.csv AUC 0.676.")
    assert "Histograms of the scores by class" in alts[0]
    assert any(a.startswith("Reliability diagram") and "Precision-recall curve" in a for a in alts)
    assert any(a.startswith("Histogram of auc over") for a in alts)
    assert any(a.startswith("Metrics against the cut-off k: precision") for a in alts)


def test_a_sliced_report_shows_each_slice_and_its_recipe_reproduces_them(tmp_path):
    import pandas as pd

    pred = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    users = pd.DataFrame({"user": sorted(pred["user"].unique())})
    position = pd.Series(range(len(users)))
    users["region"] = ["island" if i % 97 == 0 else ("north" if i % 3 == 0 else "south")
                       for i in position]  # island: 21 users, under --min-slice-size 25
    users.to_csv(tmp_path / "users.csv", index=False)
    page = _render([str(rm.DATA_DIR / "sample_model_a.csv"), "--truth",
                    str(rm.DATA_DIR / "sample_truth.csv"), "--by", "region", "--users",
                    str(tmp_path / "users.csv"), "--min-slice-size", "25", "--metrics", "auc",
                    "mrr", "ndcg", "--n-resamples", "200"], tmp_path / "sliced.html")
    rows = _recipe(page, tmp_path, "print(table.to_json(orient='records'))")
    gaps = _recipe(page, tmp_path, "print(gaps.to_json(orient='records'))")

    def name(row):
        return row["metric"] if row["k"] is None else f"{row['metric']}@{row['k']}"

    shown = _report_table(page)
    every = [r for r in rows if r["region"] == "(all)"]
    assert set(shown) == {name(r) for r in every} == {"auc", "mrr", "ndcg@10"}
    for r in every:
        assert shown[name(r)][:3] == (f"{r['value']:.4f}", f"{r['ci_low']:.4f}",
                                      f"{r['ci_high']:.4f}"), name(r)
    # the slice table: one row per slice, value and interval of every metric
    metrics = ["auc", "mrr", "ndcg@10"]
    table = {_text(cells[0])[0]: cells for cells in _cells(page, "report slices")}
    assert set(table) == {"region=island", "region=north", "region=south"}
    for r in rows:
        if r["region"] == "(all)":
            continue
        cells = table[f"region={r['region']}"]
        assert ("(small)" in _text(cells[0])) == r["small_slice"] == (r["region"] == "island")
        assert _text(cells[1]) == [f"{r['slice_size']:,}"]
        assert _text(cells[2 + metrics.index(name(r))]) == [
            f"{r['value']:.4f}", f"{r['ci_low']:.4f}", "\u2013", f"{r['ci_high']:.4f}"]
    # the disparity table: rm.disparity of the recipe's table, small slices left out
    disparity = _cells(page, "report disparity")
    assert len(disparity) == len(gaps) == 3
    for cells, g in zip(disparity, gaps):
        assert _text(cells[0]) == [name(g)]
        assert _text(cells[1]) == [g["largest"]] and _text(cells[3]) == [g["smallest"]]
        assert _text(cells[5]) == [f"{g['gap']:.4f}"]
        assert _text(cells[6]) == [f"{g['gap_ci_low']:.4f}", "\u2013", f"{g['gap_ci_high']:.4f}"]
        assert "island" not in g["largest"] + g["smallest"]
    forest = [a for a in _alts(page) if a.startswith("Forest plot of 3 slices")]
    assert len(forest) == 1 and "overall" in forest[0] and "(small)" in forest[0]


def test_a_report_of_three_models_compares_them_and_its_recipe_reproduces_the_table(tmp_path):
    import numpy as np
    import pandas as pd

    a = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    c = a.assign(score=(0.7 * a["score"] + 0.3 * np.random.default_rng(1).random(len(a))).round(6))
    c.to_csv(tmp_path / "noisy.csv", index=False)
    page = _render([str(rm.DATA_DIR / "sample_model_a.csv"), str(rm.DATA_DIR / "sample_model_b.csv"),
                    str(tmp_path / "noisy.csv"), "--truth", str(rm.DATA_DIR / "sample_truth.csv"),
                    "--k", "5", "10", "--metrics", "auc", "gauc", "recall", "ndcg", "mrr",
                    "--n-resamples", "200"], tmp_path / "models.html")
    rows = _recipe(page, tmp_path, "print(table.to_json(orient='records'))")
    values = {}
    for r in rows:
        column = r["metric"] if r["k"] is None else f"{r['metric']}@{r['k']}"
        values[(r["model_a"], column)] = r["value_a"]
        values[(r["model_b"], column)] = r["value_b"]
    table = re.search(r'<div class="report results">(.*?)</div>', page, re.S).group(1)
    header = [_text(h)[0] for h in re.findall(r"<th>(.*?)</th>", table, re.S)]
    assert header == ["#", "model", "auc", "gauc", "recall@5", "recall@10", "mrr", "ndcg@5",
                      "ndcg@10"]
    body = [re.findall(r"<td>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]
    assert [_text(cells[1])[0] for cells in body] == ["sample_model_a", "sample_model_b", "noisy"]
    for cells in body:
        model = _text(cells[1])[0]
        for column, cell in zip(header[2:], cells[2:]):
            shown = re.sub(r"<sup>.*?</sup>|<[^>]+>", "", cell)
            assert shown == f"{values[(model, column)]:.4f}", (model, column)
    alts = _alts(page)
    assert sum(a.startswith("Differences ") for a in alts) == 1   # one figure, a panel per pair
    differences = next(a for a in alts if a.startswith("Differences "))
    assert differences.count("Differences ") == 3
    scatter = next(a for a in alts if a.startswith("Scatter of ndcg@10 per user"))
    assert scatter.count("Scatter of") == 2   # sample_model_b and noisy against sample_model_a


def test_a_report_with_baselines_shows_random_and_most_popular_beside_the_model(tmp_path):
    page = _render([str(rm.DATA_DIR / "sample_model_a.csv"), "--truth",
                    str(rm.DATA_DIR / "sample_truth.csv"), "--history",
                    str(rm.DATA_DIR / "sample_history.csv"), "--baselines", "--metrics", "auc",
                    "recall", "ndcg", "--n-resamples", "200"], tmp_path / "baselines.html")
    rows = _recipe(page, tmp_path, "print(table.to_json(orient='records'))")
    by_model = {(r["model"], r["metric"] if r["k"] is None else f"{r['metric']}@{r['k']}"): r
                for r in rows}
    body = _cells(page, "report metrics")
    assert [_text(cells[0])[0] for cells in body] == ["auc", "recall@10", "ndcg@10"]
    for cells in body:
        name = _text(cells[0])[0]
        assert _text(cells[2]) == [f"{by_model[('model', name)]['value']:.4f}"]
        assert _text(cells[6]) == [f"{by_model[('random', name)]['value']:.4f}"]
        assert _text(cells[7]) == [f"{by_model[('most_popular', name)]['value']:.4f}"]
    assert by_model[("random", "auc")]["value"] == 0.5
    assert "How to read the baselines." in page
    assert re.search(r"better than random on \d of the 3 metrics and better than most popular "
                     r"on \d", page)


REPORT_REFUSALS = [  # (what, extra arguments, start of the one-line message)
    ("--by activity for two models", [str(rm.DATA_DIR / "sample_model_b.csv"), "--by",
                                      "activity"],
     "--by activity (quartiles of each user's scored rows) slices the report of one model"),
    ("--by for three models", [str(rm.DATA_DIR / "sample_model_b.csv"),
                               str(rm.DATA_DIR / "sample_model_b.csv"), "--by", "activity"],
     "--by compares two models per slice"),
    ("--baselines without --history", ["--baselines"], "--baselines needs --history FILE"),
    ("--by with --baselines", ["--by", "activity", "--baselines", "--history",
                               str(rm.DATA_DIR / "sample_history.csv")],
     "--by with --baselines or the beyond-accuracy metrics is not supported yet"),
    ("--item-features for several models", [str(rm.DATA_DIR / "sample_model_b.csv"),
                                            "--item-features", str(rm.DATA_DIR / "x.csv")],
     "--history, --catalog, --item-features and --baselines go with the report of one model"),
    ("--by with the multinomial bootstrap", ["--by", "activity", "--bootstrap", "multinomial"],
     "--by with --bootstrap multinomial"),
]


@pytest.mark.parametrize("what, extra, message", REPORT_REFUSALS, ids=[r[0] for r in REPORT_REFUSALS])
def test_report_refuses_what_it_cannot_do_in_one_line(what, extra, message, tmp_path, capsys):
    from recmetrics import cli

    code = cli.main(["report", str(rm.DATA_DIR / "sample_model_a.csv"), *extra, "--truth",
                     str(rm.DATA_DIR / "sample_truth.csv"), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"recmetrics: error: {message}"), err
    assert len(err.splitlines()) == 1 and not (tmp_path / "r.html").exists()


def _region_users(tmp_path):
    import pandas as pd

    pred = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    users = pd.DataFrame({"user": sorted(pred["user"].unique())})
    users["region"] = ["north" if i % 3 == 0 else "south" for i in range(len(users))]
    users.to_csv(tmp_path / "users.csv", index=False)
    return users


def test_a_report_of_two_models_by_slice_shows_compare_by(tmp_path):
    """Bug (issue 37): `report a.csv b.csv --by gender` was refused though `compare --by`
    works. The report now has the sliced comparison, the very table rm.show gives of
    rm.compare(a, b, truth, by=...)."""
    import html

    import pandas as pd

    users = _region_users(tmp_path)
    page = _render([str(rm.DATA_DIR / "sample_model_a.csv"), str(rm.DATA_DIR / "sample_model_b.csv"),
                    "--truth", str(rm.DATA_DIR / "sample_truth.csv"), "--by", "region", "--users",
                    str(tmp_path / "users.csv"), "--metrics", "auc", "mrr", "ndcg",
                    "--n-resamples", "200"], tmp_path / "by.html")
    expected = rm.show(rm.compare(pd.read_csv(rm.DATA_DIR / "sample_model_a.csv"),
                                  pd.read_csv(rm.DATA_DIR / "sample_model_b.csv"),
                                  pd.read_csv(rm.DATA_DIR / "sample_truth.csv"), k=[10],
                                  metrics=["auc", "mrr", "ndcg"], n_resamples=200, seed=0,
                                  alpha=0.05, by="region", users=users, min_slice_size=30)
                       .assign(model_a="sample_model_a", model_b="sample_model_b"))
    table = re.search(r'<div class="report slices"><table class="recmetrics-compare">(.*?)'
                      r"</table>", page, re.S).group(1)
    head = [html.unescape(h) for h in re.findall(r"<th(?: [^>]*)?>(.*?)</th>", table, re.S)]
    assert head == list(expected.cells.columns)
    assert "sample_model_b \u2212 sample_model_a" in head
    body = [[html.unescape(c) for c in re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]
    assert body == [list(r) for r in expected.cells.itertuples(index=False)]
    assert {r[0] for r in body} == {"(all)", "north", "south"}
    text = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", page).split()))
    assert "adjusted by Holm's step-down across the slices of each metric" in text


@pytest.mark.parametrize("bootstrap, said", [
    ("poisson", "each user weighs a Poisson(1) count drawn from a hash of (user, seed, "
                "resample), the Poisson bootstrap"),
    ("multinomial", "users are drawn with replacement and each metric is recomputed")])
def test_the_report_says_which_bootstrap_it_ran(bootstrap, said, tmp_path):
    """Bug (issue 37): the one-model report said "users are drawn with replacement" while it
    ran the Poisson bootstrap."""
    page = _render([str(rm.DATA_DIR / "sample_model_a.csv"), "--truth",
                    str(rm.DATA_DIR / "sample_truth.csv"), "--metrics", "auc", "ndcg",
                    "--n-resamples", "100", "--bootstrap", bootstrap], tmp_path / "b.html")
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert said in text and "95% percentile bootstrap over users (100 resamples, seed 0)" in text
    other = "drawn with replacement" if bootstrap == "poisson" else "Poisson(1)"
    assert other not in text


def test_hostile_file_names_and_titles_are_escaped_in_the_report(tmp_path):
    """Bug (issue 35): a scores file named `<img src=x onerror=alert(1)>.csv` was written
    unescaped into the report's provenance table (stored script injection)."""
    import pandas as pd

    hostile = "<img src=x onerror=alert(1)>"
    scores = tmp_path / f"{hostile}.csv"
    pred = pd.read_csv(rm.DATA_DIR / "sample_model_a.csv")
    pred.to_csv(scores, index=False)
    users = pd.DataFrame({"user": sorted(pred["user"].unique())})
    users["region"] = [(hostile, "$\\frac{$ 50%", "=1+2")[i % 3] for i in range(len(users))]
    users.to_csv(tmp_path / "users.csv", index=False)
    page = _render([str(scores), "--truth", str(rm.DATA_DIR / "sample_truth.csv"), "--metrics",
                    "auc", "ndcg", "--n-resamples", "100", "--title", f"{hostile} \x1b[31m",
                    "--by", "region", "--users", str(tmp_path / "users.csv")],
                   tmp_path / "h.html")   # a "$" in a slice name: text, not (broken) mathtext
    assert "<img src=x" not in page and "onerror=alert(1)>" not in page
    assert "region=&lt;img src=x onerror=alert(1)&gt;" in page
    provenance = re.search(r'<table class="report provenance">(.*?)</table>', page, re.S)
    assert "&lt;img src=x onerror=alert(1)&gt;.csv" in provenance.group(1)
