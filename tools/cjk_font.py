"""The Chinese font the study site embeds: a subset of Noto Sans CJK SC (SIL OFL 1.1).

    python tools/cjk_font.py [--source NotoSansCJK-Regular.ttc]

writes ``tools/site_template/fonts/cjk-subset.woff2``: the glyphs of every Chinese character
(and full-width punctuation) that the site's sources hold, so that a page with Chinese text reads
right on a machine with no Chinese font installed. tools/book.py embeds the committed file in
every page that uses one of its characters; tests/test_site.py checks that it covers every
Chinese character of the built pages, and that Chromium draws them with it.

Run it again after adding Chinese text that the subset lacks (the test names the characters).
It needs fontTools and brotli (``pip install fonttools brotli``; the ``dev`` extra has both) and
the source font: Noto Sans CJK's Regular collection as Debian's ``fonts-noto-cjk`` package
installs it (``/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc``). Without ``--source``
and without that file, the package is downloaded with ``apt-get download fonts-noto-cjk`` and
unpacked into ``build/font-source/`` (nothing is installed: the site test wants a machine with
no Chinese font). The subset of the build that made the committed file: Debian's
fonts-noto-cjk 1:20220127+repack1-1, font version 2.004.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FONT = Path(__file__).resolve().parent / "site_template" / "fonts" / "cjk-subset.woff2"
FAMILY = "Noto Sans CJK SC"          # the face of the collection the subset is cut from
DEBIAN_PATH = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")

# Chinese characters, and the CJK punctuation and full-width forms that come with them
# (，：（） and the like), which Latin fonts lack.
CJK = re.compile("[\u2e80-\u2fff\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                 "\ufe30-\ufe4f\uff00-\uffef]")

# Where the pages' text comes from: the notebooks (their Markdown, code and stored outputs),
# the glossary, the user guide and the README, and the package's docstrings (the API reference).
SOURCES = ("notebooks/*.ipynb", "notebooks/*.csv", "docs/guide/*.md", "README.md",
           "recmetrics/*.py")


def site_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character in the site's sources (a superset of what the pages show)."""
    found: set[str] = set()
    for pattern in SOURCES:
        for path in sorted(root.glob(pattern)):
            found.update(CJK.findall(path.read_text(encoding="utf-8")))
    return found


def font_characters(path: Path = FONT) -> set[str]:
    """The characters a font file maps to glyphs (reading WOFF2 needs brotli)."""
    from fontTools.ttLib import TTFont

    with TTFont(path) as font:
        return {chr(code) for code in font.getBestCmap()}


def _debian_source() -> Path:
    if DEBIAN_PATH.exists():
        return DEBIAN_PATH
    into = ROOT / "build" / "font-source"
    unpacked = into / DEBIAN_PATH.relative_to("/")
    if not unpacked.exists():
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", "fonts-noto-cjk"], cwd=into, check=True)
        deb = sorted(into.glob("fonts-noto-cjk_*.deb"))[-1]
        subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return unpacked


def make_subset(source: Path, characters: set[str], out: Path = FONT) -> None:
    """Cut ``characters`` out of ``FAMILY`` in ``source`` (a .ttc or .otf) into WOFF2 ``out``."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() == ".ttc":
        names = [f["name"].getDebugName(1) for f in TTCollection(source, lazy=True).fonts]
        font = TTFont(source, fontNumber=names.index(FAMILY))
    else:
        font = TTFont(source)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]      # keep vertical forms, locl, kerning: small anyway
    options.hinting = False
    options.desubroutinize = True        # compresses better in WOFF2
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]   # copyright and licence stay in the file
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in sorted(characters)])
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="NotoSansCJK-Regular.ttc (default: Debian's)")
    args = parser.parse_args(argv)
    characters = site_characters()
    make_subset(args.source or _debian_source(), characters)
    missing = characters - font_characters()
    print(f"wrote {FONT.relative_to(ROOT)}: {len(characters)} characters, "
          f"{FONT.stat().st_size / 1024:.0f} KiB")
    if missing:
        sys.exit(f"cjk_font.py: the source font lacks {''.join(sorted(missing))!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
