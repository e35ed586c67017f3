"""The user's reader, always: without ``--reader`` the advice is for the engine's documented
default reader (uproot: ``uproot.iterate`` with its ``step_size="100 MB"``), named as assumed;
and a fit that cannot be computed says what was missing and what to run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hep_advisor.findings.jsonio import from_jsonable
from hep_advisor.probes.readtests.results import Calibration, Skipped
from hep_advisor.probes.results import DatasetProfile, SiteProfile

DATA = Path(__file__).resolve().parent / "data"


def stored(name: str, demo: Path) -> tuple[SiteProfile, DatasetProfile, Calibration, Any]:
    doc = json.loads((DATA / name).read_text().replace('"demo/', f'"{demo}/'))
    return (from_jsonable(SiteProfile, doc["site"], name, "site"),
            from_jsonable(DatasetProfile, doc["dataset"], name, "dataset"),
            from_jsonable(Calibration, doc["calibration"], name, "calibration"),
            doc.get("reader"))


def test_the_default_reader_is_uproots_iterate_and_says_it_is_assumed() -> None:
    from hep_advisor.pipeline.derive import reader_spec
    from hep_advisor.probes.readtests.readers import default_reader

    spec = reader_spec(None)
    assert spec is not None and spec.assumed and spec.kind == "uproot.iterate"
    assert spec.step == "100 MB" and spec.key_prepass and spec.library == "ak"
    assert reader_spec(None, "root").kind == "root.ttreecache"  # type: ignore[union-attr]
    assert default_reader("root").assumed
    named = reader_spec("uproot.iterate")
    assert named is not None and not named.assumed and named == spec  # the same reader
    assert reader_spec("advisor") is None  # the advisor's own loop, asked for
    assert reader_spec(None, "root", analysis="mod:fn") is None  # --analysis runs in ours


def test_advice_without_a_reader_is_for_the_default_one(tiny_demo: Path) -> None:
    """The stored small-files calibration (made without ``--reader``), advised: the reader
    is named (assumed, with how to change it), its replayed baseline is there, and M001's
    speed-up is the replay with that reader."""
    from hep_advisor.pipeline.derive import advise_from

    site, dataset, cal, _ = stored("tui_small_files.json", tiny_demo)
    a = advise_from(site, dataset, cal, label="small", inputs=(f"{tiny_demo}/small_files",))
    assert a.reader is not None and a.reader.assumed
    assert a.reader.spec == "uproot.iterate:step_size=100 MB"
    assert "--reader" in a.reader.change
    assert a.reader_baseline is not None
    assert any(n.startswith("baseline as the default reader (assumed) reads") for n in a.notes)
    m001 = a.recommendation("M001")
    assert m001 is not None
    assert "speed-up with the program's reader" in {e.name for e in m001.evidence}
    assert a.to_json()["datasets"][0]["reader"]["assumed"] is True

    own = advise_from(site, dataset, cal, label="small", reader="advisor",
                      inputs=(f"{tiny_demo}/small_files",))
    assert own.reader_baseline is None and own.reader is not None
    assert own.reader.spec == "advisor"


def test_a_fit_that_cannot_be_computed_says_what_is_missing(tiny_demo: Path) -> None:
    """No measured point (every read test skipped, as when the budget ran out): the note names
    what the fit lacks, why each was skipped, and the command that measures it; the advice
    still comes back."""
    from hep_advisor.pipeline.derive import advise_from

    site, dataset, cal, _ = stored("tui_small_files.json", tiny_demo)
    empty = replace(cal, event_loop=None, raw_read=None, decompression=(),
                    request_sweep=(), concurrency=(), open_overhead_s=None, call_cost=None,
                    basket_cost=None, key_cost=None, parallel_loop=(), collector=None,
                    first_touch=None, unpacking=None, conversion=None,
                    skipped=(Skipped("event_loop", "the budget ran out"),))
    a = advise_from(site, dataset, empty, label="small")
    (note,) = [n for n in a.notes if n.startswith("no model:")]
    assert "the event loop (the budget ran out)" in note
    assert "the storage's cold reads" in note
    assert "hep-advisor report --recalibrate --budget" in note
    assert a.model is None and a.recommendations == ()


@pytest.mark.parametrize("field", ["event_loop", "raw_read"])
def test_the_note_names_each_missing_measurement(field: str, tiny_demo: Path) -> None:
    from hep_advisor.pipeline.derive import no_model_note

    _, _, cal, _ = stored("tui_small_files.json", tiny_demo)
    note = no_model_note(replace(cal, **{field: None}), ValueError("LAPACK"))
    assert {"event_loop": "the event loop", "raw_read": "the storage's cold reads"}[field] \
        in note
    whole = no_model_note(cal, ValueError("Too large work array required"))
    assert "Too large work array required" in whole and "calibrate again" in whole
