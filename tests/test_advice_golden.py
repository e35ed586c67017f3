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
from report_helpers import advise_stored

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
    path, rel = CASES[name]
    advice = advise_stored(path, rel, demo, name, use_reader=True,
                           calibration_created="2026-12-07T00:00:00+00:00")
    root = str(demo)
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


def test_a_refit_after_try_keeps_the_reader_the_maps_and_the_replays(tiny_demo: Path) -> None:
    """Advice refitted with a trial's two measured points (``try``) is derived by the same
    pipeline as the advice itself: it keeps the program's reader (its baseline and note), the
    basket maps it read (not read again) and the replays they feed (M001's replayed evidence,
    T001's replayed reads), and says that it was refitted."""
    from hep_advisor.findings.trial import TrialPoint
    from hep_advisor.models.physics import FEATURES
    from hep_advisor.models.scenarios import merge
    from hep_advisor.pipeline import basketmaps
    from hep_advisor.pipeline.trial_refit import refit_with

    path, rel = CASES["small_reader"]
    advice = advise_stored(path, rel, tiny_demo, "small", use_reader=True)
    assert advice.reader_baseline is not None and advice.options.reader is not None
    assert advice.options.basket_maps
    base = advice.baseline
    assert base is not None
    before = {k: float(v) for k, v in base.row(1).items() if k in FEATURES}
    after = {k: float(v) for k, v in merge(20.0).apply(base).row(1).items() if k in FEATURES}
    point = TrialPoint("M001", "2026-12-07T00:00:00+00:00", 1.8, 4, 2_000_000, before, after,
                       10.0, 18.0)

    def no_reading(*args: object, **kwargs: object) -> tuple[()]:
        raise AssertionError("the refit read the basket maps again")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(basketmaps, "sample_basket_maps", no_reading)
        mp.setattr("hep_advisor.pipeline.derive.sample_basket_maps", no_reading)
        again = refit_with(advice, [point])

    assert again.options == advice.options
    assert again.reader_baseline is not None
    assert any(n.startswith("baseline as your program reads") for n in again.notes)
    assert any(n.startswith("refitted with 1 measured trial") for n in again.notes)
    m001 = again.recommendation("M001")
    assert m001 is not None
    names = {e.name for e in m001.evidence}
    assert "measured trial" in names
    assert "speed-up with the program's reader" in names and "replayed I/O merged" in names
    t001 = again.recommendation("T001")
    assert t001 is None or any(e.name.startswith("replayed") for e in t001.evidence)
