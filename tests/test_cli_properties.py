"""Property test of the command line on messy CSV files (issue 8, "How to check it").

Hypothesis draws a small data set (the *intended* data), writes it as a CSV file in a
random way (encoding, byte-order mark, separator and extension, line ends, quoting, blank
lines) and sometimes damages it (a decimal comma, a missing field, a stray byte that is
not UTF-8, a truncated last line). `recmetrics.cli.main` then runs on it in process.

The only outcomes allowed: exit 0 with AUC and MRR equal to a slow reference computed from
the intended data (pairs counted one by one, ranks by sorting one user at a time), or exit 2
with exactly one line on stderr. Never a traceback, never a changed input file. Where the
file is intact the outcome must be exit 0; where a row was damaged it must be exit 2.
"""
from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from recmetrics import cli


def slow_auc(rows) -> float:
    """Mann-Whitney by counting every (relevant, irrelevant) pair; a tie counts 1/2."""
    pos = [s for _, _, s, y in rows if y > 0]
    neg = [s for _, _, s, y in rows if y == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def slow_mrr(rows) -> float:
    """Mean over users with a relevant item of 1 / rank of the first one (scores distinct)."""
    values = []
    for user in sorted({r[0] for r in rows}):
        ranked = sorted((r for r in rows if r[0] == user), key=lambda r: -r[2])
        hits = [i for i, r in enumerate(ranked, 1) if r[3] > 0]
        if hits:
            values.append(1 / hits[0])
    return sum(values) / len(values)


ID = st.text(alphabet="abcxyz019_用户é", min_size=1, max_size=5)


@st.composite
def data_sets(draw):
    users = draw(st.lists(ID, min_size=1, max_size=4, unique=True))
    items = draw(st.lists(ID, min_size=2, max_size=5, unique=True))
    pairs = draw(st.lists(st.tuples(st.sampled_from(users), st.sampled_from(items)),
                          min_size=2, max_size=14, unique=True))
    # distinct scores, so that the reference needs no tie convention for MRR
    scores = draw(st.lists(st.integers(-10**6, 10**6), min_size=len(pairs),
                           max_size=len(pairs), unique=True))
    labels = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(pairs),
                           max_size=len(pairs)))
    if all(y == 0 for y in labels):
        labels[0] = 1
    if all(y > 0 for y in labels):
        labels[-1] = 0
    return [(u, i, s / 1000, y) for (u, i), s, y in zip(pairs, scores, labels)]


LAYOUTS = st.fixed_dictionaries({
    "encoding": st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gbk", "latin-1"]),
    "sep": st.sampled_from([(",", ".csv", False), (";", ".csv", True), ("\t", ".tsv", False),
                            ("\t", ".txt", False), ("|", ".txt", False)]),
    "newline": st.sampled_from(["\n", "\r\n"]),
    "quote_ids": st.booleans(),
    "blank_lines": st.lists(st.integers(1, 20), max_size=3),
    "damage": st.sampled_from([None, None, None, "decimal comma", "missing field", "bad byte",
                               "truncated"]),
})


def _field(value: str, sep: str, quote: bool) -> str:
    if quote or sep in value or '"' in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def write(rows, layout, folder) -> tuple[str, list[str], bool]:
    """The file's path, the options it needs, and whether it was damaged."""
    sep, suffix, needs_sep = layout["sep"]
    encoding = layout["encoding"]
    lines = [sep.join(("user", "item", "score", "label"))]
    for u, i, s, y in rows:
        lines.append(sep.join((_field(u, sep, layout["quote_ids"]),
                               _field(i, sep, layout["quote_ids"]), repr(s), str(y))))
    damaged = False
    damage = layout["damage"]
    if damage == "decimal comma" and sep == ",":
        lines[1] = lines[1].rsplit(",", 2)[0] + "," + repr(rows[0][2]).replace(".", ",") + "," + \
            str(rows[0][3])
        damaged = "," in repr(rows[0][2]).replace(".", ",")
    elif damage == "missing field":
        lines[-1] = lines[-1].rsplit(sep, 1)[0]
        damaged = True
    elif damage == "truncated":
        lines[-1] = lines[-1].rsplit(sep, 2)[0] + sep
        damaged = True
    for position in layout["blank_lines"]:
        lines.insert(min(position, len(lines)), "")
    text = layout["newline"].join(lines) + layout["newline"]
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:          # e.g. "用" in Latin-1: that file cannot exist
        return "", [], False
    if damage == "bad byte" and encoding in ("utf-8", "utf-8-sig"):
        cut = data.rfind(b"\n", 0, len(data) - 1) + 1
        data = data[:cut] + b"\xff" + data[cut:]        # a byte no UTF-8 text holds
        damaged = True
    path = os.path.join(folder, "scores" + suffix)
    with open(path, "wb") as handle:
        handle.write(data)
    options = []
    if needs_sep:
        options += ["--sep", sep]
    if encoding in ("gbk", "latin-1"):
        options += ["--encoding", encoding]
    return path, options, damaged


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                  HealthCheck.too_slow])
@given(rows=data_sets(), layout=LAYOUTS)
def test_messy_csv_gives_the_reference_numbers_or_one_line(rows, layout, tmp_path_factory,
                                                           capsys):
    folder = str(tmp_path_factory.mktemp("prop"))
    path, options, damaged = write(rows, layout, folder)
    if not path:
        event("not encodable in this encoding")
        return
    before = open(path, "rb").read(), os.stat(path).st_mtime_ns
    code = cli.main(["evaluate", path, "--metrics", "auc", "mrr", "--format", "json", *options])
    out, err = capsys.readouterr()
    event(f"exit {code}" + (f" ({layout['damage']})" if damaged else ""))
    assert (open(path, "rb").read(), os.stat(path).st_mtime_ns) == before, "the input changed"
    assert "Traceback" not in err
    if code == 0:
        assert not damaged, f"a damaged file was read: {layout['damage']}"
        got = {m["metric"]: m["value"] for m in json.loads(out)["metrics"]}
        assert abs(got["auc"] - slow_auc(rows)) < 1e-12
        assert abs(got["mrr"] - slow_mrr(rows)) < 1e-12
        assert err == ""
    else:
        assert code == 2, err
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("recmetrics: error: "), err
        assert damaged, f"an intact file was refused: {lines[0]}"
