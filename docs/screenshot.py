"""The README's screenshot: the terminal report of a stored advice, exported by Rich as SVG.

    python docs/screenshot.py [--out docs/report.svg] [--width 80] [--lines 50]

Run from the repository's root (it reads ``tests/data/``).  The advice is built as
``tests/test_advice_golden.py`` builds it: three stored calibrations of the tiny demo (its small
files, their plain merge and the LZMA file; ``tests/data/README.md`` says how they were made)
are advised again with ``advise_from`` over a tiny demo written afresh into a temporary
directory (its basket maps feed the replays), then put in one report as ``hep-advisor report``
puts the demo's three datasets.  Nothing is measured, so the picture is the same on every run
and machine for the same code: the paths are relative (``demo/...``: the script works from the
temporary directory), the calibrations' dates are fixed, and Rich's SVG ids are hashes of the
content.  ``--lines``: the picture keeps the report's first lines (its verdicts and the first
recommendation) and says how many it left out; ``--lines 0`` keeps them all.  The report's view
is the code's: after a change to the views, run this again.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: (label as the demo report says it, stored calibration, dataset under the demo)
DATASETS = (
    ("small files", DATA / "tui_small_files.json", "small_files"),
    ("plain merge", DATA / "calibrations" / "merged.json", "merged"),
    ("LZMA file", DATA / "calibrations" / "lzma_file.json", "flat/pythia_lzma7.root"),
)
#: The calibrations' date, fixed so that nothing in the picture depends on today.
CREATED = "2026-12-07T00:00:00+00:00"


@contextlib.contextmanager
def _in(path: Path) -> Iterator[None]:
    here = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(here)


def build_report() -> object:
    """The report of the three stored calibrations (a :class:`hep_advisor.findings.advice.Report`),
    built inside a temporary directory that holds the tiny demo as ``demo/``; call it there."""
    from hep_advisor.findings.advice import Report
    from hep_advisor.findings.jsonio import from_jsonable
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import DatasetProfile, SiteProfile

    site = None
    advice = []
    for label, path, rel in DATASETS:
        doc = json.loads(path.read_text())
        s = from_jsonable(SiteProfile, doc["site"], label, "site")
        dataset = from_jsonable(DatasetProfile, doc["dataset"], label, "dataset")
        cal = from_jsonable(Calibration, doc["calibration"], label, "calibration")
        site = site or s
        advice.append(advise_from(s, dataset, cal, label=label, inputs=(f"demo/{rel}",),
                                  calibration_created=CREATED, reader=doc.get("reader")))
    assert site is not None
    return Report(site=site, advice=tuple(advice))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "report.svg")
    ap.add_argument("--width", type=int, default=80, help="terminal columns (default 80)")
    ap.add_argument("--lines", type=int, default=50,
                    help="keep the report's first N lines (default 50; 0: all)")
    args = ap.parse_args()

    from rich.console import Console
    from rich.segment import Segment, Segments
    from rich.text import Text

    from hep_advisor.demo import make_datasets

    out = args.out.resolve()
    with tempfile.TemporaryDirectory(prefix="hep-advisor-screenshot-") as tmp:
        make_datasets(Path(tmp) / "demo", scale="tiny", jobs=1)
        with _in(Path(tmp)):
            report = build_report()
            with open(os.devnull, "w") as sink:
                console = Console(record=True, width=args.width, force_terminal=True,
                                  color_system="truecolor", file=sink)
                lines = console.render_lines(report, console.options, pad=False)
                kept = lines if args.lines <= 0 else lines[:args.lines]
                for line in kept:
                    console.print(Segments([*line, Segment.line()]), end="")
                if len(kept) < len(lines):
                    console.print(Text(f"... {len(lines) - len(kept)} more lines "
                                       "(`hep-advisor report` prints them all)", style="dim"))
                console.save_svg(str(out), title="hep-advisor report")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
