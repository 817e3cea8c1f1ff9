"""The fonts the study site embeds, so that its pages read right on a machine with none installed.

    python tools/site_fonts.py [--cjk-source NotoSansCJK-Regular.ttc] [--math-source STIXTwoMath-Regular.ttf]

writes two WOFF2 subsets into tools/site_template/fonts/, each under the SIL Open Font License
1.1 (the licence and the source's copyright notice beside it, OFL-*.txt), renamed as the licence
asks of a Modified Version:

* ``cjk-subset.woff2`` ("recmetrics CJK"): Noto Sans CJK SC Regular cut to every Chinese
  character (and full-width punctuation) the site's sources hold (``site_characters``), from
  ``NotoSansCJK-Regular.ttc`` as Debian's ``fonts-noto-cjk`` package ships it
  (``/usr/share/fonts/opentype/noto/``; without it, ``apt-get download fonts-noto-cjk`` into
  build/font-source/, unpacked, not installed: the site test wants a machine with no Chinese font);
* ``math-subset.woff2`` ("recmetrics Math"): STIX Two Math cut to Latin, Greek, the operators,
  arrows, delimiters and mathematical letters formulas use (``MATH_RANGES``), with its OpenType
  MATH table (the stretched sizes and pieces of braces, bars and radicals), from
  ``STIXTwoMath-Regular.ttf`` as the PyPI package ziamath ships it (without ``--math-source``:
  ``pip download --no-deps ziamath`` into build/font-source/, unzipped).

tools/book.py embeds them in every page that uses them; tests/test_site.py checks that the
Chinese subset covers every Chinese character of the built pages and that Chromium draws the
Chinese text and the formulas with them. Run this again after adding Chinese text the subset
lacks (the test names the characters). It needs fontTools and brotli (``pip install fonttools
brotli``; the ``dev`` extra has both). The committed files were cut from fonts-noto-cjk
1:20220127+repack1-1 (Noto Sans CJK 2.004) and ziamath 0.13 (STIX Two Math 2.11).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FONTS = Path(__file__).resolve().parent / "site_template" / "fonts"
CJK_FONT = FONTS / "cjk-subset.woff2"
MATH_FONT = FONTS / "math-subset.woff2"
CJK_FAMILY, MATH_FAMILY = "recmetrics CJK", "recmetrics Math"   # the subsets' own names
_CJK_SOURCE_FAMILY = "Noto Sans CJK SC"          # the face of the collection cut from
_DEBIAN_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
_SOURCES = ROOT / "build" / "font-source"

# Chinese characters, and the CJK punctuation and full-width forms that come with them
# (，：（） and the like), which Latin fonts lack. book.py's unicode-range is the same.
CJK_RANGES = [(0x2E80, 0x2FFF), (0x3000, 0x303F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
              (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF)]
CJK = re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in CJK_RANGES) + "]")

# What formulas are made of: Latin, Latin-1, Greek, combining accents, punctuation, letterlike
# symbols, arrows, operators, technical symbols (brace pieces), shapes, delimiters and the
# mathematical bold, italic, script, double-struck letters and Greek (MathML's single-letter
# <mi> is drawn from the italic ones).
MATH_RANGES = [(0x20, 0x7E), (0xA0, 0xFF), (0x131, 0x131), (0x237, 0x237), (0x2C6, 0x2DD),
               (0x300, 0x36F), (0x391, 0x3F6), (0x2000, 0x206F), (0x20D0, 0x20F0),
               (0x2100, 0x214F), (0x2190, 0x21FF), (0x2200, 0x22FF), (0x2300, 0x23FF),
               (0x25A0, 0x25FF), (0x27C0, 0x27FF), (0x2980, 0x29FF), (0x2A00, 0x2AFF),
               (0x1D400, 0x1D467), (0x1D49C, 0x1D4CF), (0x1D538, 0x1D56B), (0x1D6A8, 0x1D71B),
               (0x1D7CE, 0x1D7FF)]

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


def font_characters(path: Path) -> set[str]:
    """The characters a font file maps to glyphs (reading WOFF2 needs brotli)."""
    from fontTools.ttLib import TTFont

    with TTFont(path) as font:
        return {chr(code) for code in font.getBestCmap()}


def _cjk_source() -> Path:
    if _DEBIAN_CJK.exists():
        return _DEBIAN_CJK
    unpacked = _SOURCES / _DEBIAN_CJK.relative_to("/")
    if not unpacked.exists():
        _SOURCES.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", "fonts-noto-cjk"], cwd=_SOURCES, check=True)
        deb = sorted(_SOURCES.glob("fonts-noto-cjk_*.deb"))[-1]
        subprocess.run(["dpkg-deb", "-x", str(deb), str(_SOURCES)], check=True)
    return unpacked


def _math_source() -> Path:
    unpacked = _SOURCES / "ziamath" / "fonts" / "STIXTwoMath-Regular.ttf"
    if not unpacked.exists():
        _SOURCES.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "ziamath==0.13",
                        "-d", str(_SOURCES)], check=True)
        wheel = sorted(_SOURCES.glob("ziamath-*.whl"))[-1]
        with zipfile.ZipFile(wheel) as archive:
            archive.extract("ziamath/fonts/STIXTwoMath-Regular.ttf", _SOURCES)
    return unpacked


def _rename(font, family: str) -> None:
    """Give a Modified Version its own name (name table, and the CFF table's where there is one)."""
    postscript = family.replace(" ", "") + "-Regular"
    names = {1: family, 2: "Regular", 3: f"{postscript};subset", 4: f"{family} Regular",
             6: postscript, 16: family, 17: "Regular"}
    table = font["name"]
    for record in list(table.names):
        if record.nameID in names:
            record.string = names[record.nameID]
    if "CFF " in font:
        cff = font["CFF "].cff
        top = cff[cff.fontNames[0]]
        cff.fontNames[0] = postscript
        top.FullName, top.FamilyName = f"{family} Regular", family
        if hasattr(top, "CIDFontName"):
            top.CIDFontName = postscript


def make_subset(source: Path, unicodes: list[int], family: str, out: Path,
                face: str | None = None) -> None:
    """Cut ``unicodes`` out of ``source`` (``face`` of a .ttc) into WOFF2 ``out``, renamed."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() == ".ttc":
        names = [f["name"].getDebugName(1) for f in TTCollection(source, lazy=True).fonts]
        font = TTFont(source, fontNumber=names.index(face))
    else:
        font = TTFont(source)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]      # vertical forms, locl, ssty: small anyway
    options.hinting = False
    options.desubroutinize = True        # compresses better in WOFF2
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14, 16, 17]   # copyright and licence stay
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    _rename(font, family)
    out.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cjk-source", type=Path, help="NotoSansCJK-Regular.ttc (default: Debian's)")
    parser.add_argument("--math-source", type=Path, help="STIXTwoMath-Regular.ttf (default: ziamath's)")
    args = parser.parse_args(argv)
    characters = site_characters()
    make_subset(args.cjk_source or _cjk_source(), sorted(map(ord, characters)), CJK_FAMILY,
                CJK_FONT, face=_CJK_SOURCE_FAMILY)
    make_subset(args.math_source or _math_source(),
                [c for a, b in MATH_RANGES for c in range(a, b + 1)], MATH_FAMILY, MATH_FONT)
    for path in (CJK_FONT, MATH_FONT):
        print(f"wrote {path.relative_to(ROOT)}: {len(font_characters(path))} characters, "
              f"{path.stat().st_size / 1024:.0f} KiB")
    missing = characters - font_characters(CJK_FONT)
    if missing:
        sys.exit(f"site_fonts.py: the source font lacks {''.join(sorted(missing))!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
