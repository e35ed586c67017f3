"""Helpers for the TUI tests: a deterministic ``Advice`` from a stored calibration, a
``wait_until`` poller, and SVG snapshots compared after normalising volatile parts."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
SNAPSHOTS = Path(__file__).parent / "snapshots"
#: ``HEP_ADVISOR_UPDATE_SNAPSHOTS=1 pytest tests/test_tui.py`` rewrites the stored SVGs.
UPDATE = os.environ.get("HEP_ADVISOR_UPDATE_SNAPSHOTS") == "1"


def fixture_advice(name: str = "tui_small_files.json", label: str = "small files") -> Any:
    """Advice from a stored site, dataset and calibration (the tiny demo's small files,
    calibrated once with a 3 s budget; see tests/data/README.md): the same every run."""
    from hep_advisor.findings.jsonio import from_jsonable
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import DatasetProfile, SiteProfile

    doc = json.loads((DATA / name).read_text())
    site = from_jsonable(SiteProfile, doc["site"], name, "site")
    dataset = from_jsonable(DatasetProfile, doc["dataset"], name, "dataset")
    cal = from_jsonable(Calibration, doc["calibration"], name, "calibration")
    created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return advise_from(site, dataset, cal, label=label, inputs=("demo/small_files",),
                       calibration_created=created)


async def wait_until(pilot: Any, predicate: Callable[[], bool], timeout: float = 20.0,
                     what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await pilot.pause(0.02)


async def settle(pilot: Any) -> None:
    """Let the workers finish and the screen catch up."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


_TEXT = re.compile(r"(<text[^>]*>)([^<]*)(</text>)")
_DIGIT = re.compile(r"(&#?\w+;)|\d")  # a digit, but not inside a character reference


def normalise_svg(svg: str) -> str:
    """Textual's per-export id, and digits in the text shown (measured figures, ages), are
    replaced; the layout, the words and the colours stay."""
    svg = re.sub(r"terminal-\d+", "terminal", svg)
    svg = _TEXT.sub(lambda m: m.group(1) + _DIGIT.sub(lambda d: d.group(1) or "0", m.group(2))
                    + m.group(3), svg)
    return svg.replace("\r\n", "\n")


def check_snapshot(name: str, svg: str) -> None:
    """Compare with tests/snapshots/NAME.svg (written when missing or when updating)."""
    path = SNAPSHOTS / f"{name}.svg"
    got = normalise_svg(svg)
    if UPDATE or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(got, newline="\n")
        return
    want = path.read_text()
    if got != want:
        failed = Path(tempfile.gettempdir()) / "hep-advisor-snapshots" / f"{name}.svg"
        failed.parent.mkdir(exist_ok=True)
        failed.write_text(got, newline="\n")
        raise AssertionError(f"{name}: the screen differs from {path} (this run's is "
                             f"{failed}; HEP_ADVISOR_UPDATE_SNAPSHOTS=1 accepts it)")
