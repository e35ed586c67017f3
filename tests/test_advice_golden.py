"""The advice from stored calibrations does not change when code only moves.

Four stored calibrations of the tiny demo (``tests/data/tui_small_files.json`` and
``tests/data/calibrations/*.json``: site, dataset and read tests, the paths starting at
``demo/``) are advised again over a freshly written tiny demo (its basket maps feed the
replays), and the report's JSON must equal the one stored in ``golden_advice.json.gz``, but for
the document's creation time.

A change that is meant to change the advice regenerates the golden file on purpose::

    HEP_ADVISOR_REGOLD=1 python -m pytest tests/test_advice_golden.py

and says so in its commit message.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = DATA / "golden_advice.json.gz"
#: name -> (stored calibration, dataset under the demo, the reader it was calibrated with)
CASES = {
    "tui_small_files": (DATA / "tui_small_files.json", "small_files"),
    "merged": (DATA / "calibrations" / "merged.json", "merged"),
    "lzma": (DATA / "calibrations" / "lzma_file.json", "flat/pythia_lzma7.root"),
    "small_reader": (DATA / "calibrations" / "small_files_reader.json", "small_files"),
}


def _without_created(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _without_created(v) for k, v in x.items() if k != "created"}
    if isinstance(x, list):
        return [_without_created(v) for v in x]
    return x


def advice_json(name: str, demo: Path) -> dict[str, Any]:
    from hep_advisor.core import advise_from
    from hep_advisor.jsonio import from_jsonable
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import DatasetProfile, SiteProfile

    path, rel = CASES[name]
    root = str(demo)
    doc = json.loads(path.read_text().replace('"demo/', f'"{root}/'))
    site = from_jsonable(SiteProfile, doc["site"], name, "site")
    dataset = from_jsonable(DatasetProfile, doc["dataset"], name, "dataset")
    cal = from_jsonable(Calibration, doc["calibration"], name, "calibration")
    advice = advise_from(site, dataset, cal, label=name, inputs=(f"{root}/{rel}",),
                         calibration_created="2026-12-07T00:00:00+00:00",
                         reader=doc.get("reader"))
    text = json.dumps(advice.to_json()).replace(root + "/", "demo/")
    return _without_created(json.loads(text))


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)


@pytest.mark.parametrize("name", sorted(CASES))
def test_stored_calibrations_give_the_stored_advice(name: str, tiny_demo: Path,
                                                     golden: dict[str, Any]) -> None:
    got = advice_json(name, tiny_demo)
    if os.environ.get("HEP_ADVISOR_REGOLD"):
        golden[name] = got
        with gzip.open(GOLDEN, "wt") as f:
            json.dump(golden, f, indent=0, sort_keys=True)
        pytest.skip("golden advice rewritten")
    want = golden[name]
    assert [r["code"] for r in got["recommendations"]] == \
        [r["code"] for r in want["recommendations"]]
    assert got == want
