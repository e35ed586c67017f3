"""The demo's report from stored calibrations: the three datasets ``hep-advisor report`` shows
with no PATHS (small files, their plain merge, the LZMA file), each advised from its stored
site, dataset and calibration (``tests/data``, as ``test_advice_golden`` does) over a written
tiny demo (its basket maps feed the replays).  The same every run, no calibration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
#: label -> (stored calibration, dataset under the demo), as ``demo.report.DEMO_DATASETS``
DEMO = {
    "small files": (DATA / "tui_small_files.json", "small_files"),
    "plain merge": (DATA / "calibrations" / "merged.json", "merged"),
    "LZMA file": (DATA / "calibrations" / "lzma_file.json", "flat/pythia_lzma7.root"),
}
CREATED = "2026-12-07T00:00:00+00:00"


def advise_stored(path: Path, rel: str, demo: Path, label: str, *, use_reader: bool = False,
                  **kw: Any) -> Any:
    """Advice from a stored calibration ``path`` (its site, dataset and calibration; its
    ``demo/`` paths under ``demo``) for the dataset ``rel`` under the demo.  ``use_reader``:
    the reader the calibration was made with, where the file names one; ``kw``: more for
    ``advise_from``."""
    from hep_advisor.findings.jsonio import from_jsonable
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import DatasetProfile, SiteProfile

    root = str(demo)
    doc = json.loads(path.read_text().replace('"demo/', f'"{root}/'))
    site = from_jsonable(SiteProfile, doc["site"], label, "site")
    dataset = from_jsonable(DatasetProfile, doc["dataset"], label, "dataset")
    cal = from_jsonable(Calibration, doc["calibration"], label, "calibration")
    if use_reader:
        kw.setdefault("reader", doc.get("reader"))
    return advise_from(site, dataset, cal, label=label, inputs=(f"{root}/{rel}",), **kw)


def stored_advice(label: str, demo: Path) -> Any:
    """One demo dataset's advice from its stored calibration, its paths under ``demo``."""
    path, rel = DEMO[label]
    return advise_stored(path, rel, demo, label, calibration_created=CREATED)


def stored_demo_report(demo: Path) -> Any:
    """The demo report (three datasets on one site) from the stored calibrations."""
    from hep_advisor.findings.advice import Report

    advice = tuple(stored_advice(label, demo) for label in DEMO)
    return Report(site=advice[0].site, advice=advice)
