"""``hep-advisor try``: a recommendation applied to a sample in scratch space, timed before and
after, compared with the prediction; scratch data removed whatever happens; inputs untouched."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helpers import snapshot, write_flat
from hep_advisor.findings.advice import Advice
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.pipeline.trial import TrialError, try_recommendation


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test its own cache directory (trials are stored there)."""
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def stored_small(tiny_demo: Path) -> Advice:
    """The stored advice of the tiny demo's small files (a fitted model, an M001), pointed at
    this session's tiny demo."""
    from tui_helpers import fixture_advice

    a = fixture_advice(label="small")
    return replace(a, inputs=(str(tiny_demo / "small_files"),),
                   dataset=replace(a.dataset, file_paths=()))


def _with_rec(a: Advice, code: str, title: str, scenario: str, inputs: tuple[str, ...]) -> Advice:
    rec = Recommendation(code=code, kind="x", title=title, severity="warning",
                         audience="analyst", predicted_speedup=1.5, speedup_low=1.2,
                         speedup_high=1.8, workers=1, scenario=scenario, summary="")
    return replace(a, recommendations=(rec,), inputs=inputs, fitted=None, baseline=None,
                   dataset=replace(a.dataset, file_paths=()))


def test_merge_on_a_sample(stored_small: Advice, tiny_demo: Path, tmp_path: Path) -> None:
    data = tiny_demo / "small_files"
    before = snapshot(data)
    scratch = tmp_path / "scratch"
    events: list[tuple[float, str]] = []
    r = try_recommendation(stored_small, "m001", budget_s=3, sample_mb=1.0,
                           scratch=str(scratch), progress=lambda f, m: events.append((f, m)))
    assert r.code == "M001" and r.sample.files >= 2 and r.sample.outputs < r.sample.files
    assert r.before.entries == r.after.entries == r.sample.entries > 0
    assert r.realised_speedup == pytest.approx(r.before.seconds / r.after.seconds, rel=1e-3)
    assert len(r.before.samples_s) >= 2
    assert r.within_interval == (r.speedup_low <= r.realised_speedup <= r.speedup_high)
    # the model's prediction for the sample as merged
    assert r.sample_predicted_speedup is not None and r.sample_scenario.startswith("merge to")
    assert r.sample_speedup_low <= r.sample_predicted_speedup <= r.sample_speedup_high
    doc = r.to_json()["try"]
    for key in ("code", "sample", "predicted_speedup", "speedup_low", "speedup_high",
                "realised_speedup", "before", "after"):
        assert key in doc
    assert set(doc["sample"]) >= {"files", "bytes"}
    assert events and events[-1][0] <= 1.0
    # fed back: the model refitted with the two points, the recommendations ranked again
    assert r.refit and r.refitted is not None and r.refitted.fitted is not stored_small.fitted
    assert list(doc["refit_ranking"]) == [x.code for x in r.refitted.recommendations]
    assert any("refitted with 1 measured trial(s) of this run: M001 realised" in n
               for n in r.refitted.notes)
    # scratch removed, inputs untouched
    assert list(scratch.iterdir()) == [] and snapshot(data) == before
    # the versioned document: the try block follows the schema
    import json

    import jsonschema

    from hep_advisor.document.report import document_json, make_document
    from hep_advisor.document.schema import generate_schema

    full = json.loads(json.dumps(document_json(replace(make_document("try", stored_small.site,
                                                                     None), try_=r)),
                                 allow_nan=False))
    jsonschema.validate(full, generate_schema())
    assert full["try"]["before"]["reads_per_pass"] >= 1 and full["command"] == "try"
    assert "refitted" not in full["try"]


def test_entry_range_of_a_large_file(stored_small: Advice, tmp_path: Path) -> None:
    src = write_flat(tmp_path / "big.root", entries=40_000, branches=4, chunks=40)
    a = _with_rec(stored_small, "C001", "Recompress with LZ4 instead of ZLIB",
                  "compression LZ4", (str(src),))
    from hep_advisor.probes import probe_dataset

    a = replace(a, dataset=probe_dataset([str(src)]))
    r = try_recommendation(a, "C001", budget_s=2, sample_mb=0.05, scratch=str(tmp_path / "s"))
    assert r.sample.method == "entries" and 0 < r.sample.entries < 40_000
    assert r.sample_predicted_speedup is None  # no fitted model here
    assert any("first" in n for n in r.notes)
    assert list((tmp_path / "s").iterdir()) == []


def test_cancel_and_errors_leave_no_scratch(stored_small: Advice, tmp_path: Path,
                                            own_cache: Path) -> None:
    scratch = tmp_path / "scratch"
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(KeyboardInterrupt):
        try_recommendation(stored_small, "M001", budget_s=2, sample_mb=0.5,
                           scratch=str(scratch), cancel=cancel)
    assert list(scratch.iterdir()) == []
    with pytest.raises(TrialError, match="no B001"):
        try_recommendation(stored_small, "B001")
    # stopped during the timed passes, after the sample was written
    seen: list[str] = []

    def stop_when_timing(fraction: float, message: str) -> None:
        seen.append(message)
        if message.startswith("timing"):
            assert any(scratch.rglob("*.root"))  # the sample is there now
            cancel.set()

    cancel.clear()
    with pytest.raises(KeyboardInterrupt):
        try_recommendation(stored_small, "M001", budget_s=2, sample_mb=0.5,
                           scratch=str(scratch), cancel=cancel, progress=stop_when_timing)
    assert any(m.startswith("timing") for m in seen) and list(scratch.iterdir()) == []

    # the user's analysis fails during the timed reads: its error, no scratch, nothing kept
    def broken(arrays: Any) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        try_recommendation(stored_small, "M001", budget_s=2, sample_mb=0.5,
                           scratch=str(scratch), analysis=broken)
    assert list(scratch.iterdir()) == [] and not list(own_cache.rglob("*.trials.json"))


def test_cli_ctrl_c_removes_the_scratch(tiny_demo: Path, tmp_path: Path,
                                        own_cache: Path) -> None:
    """A real SIGINT to ``hep-advisor try`` while the sample is being timed: exit 130, the
    scratch directory empty, the inputs untouched."""
    import os
    import signal
    import subprocess
    import sys
    import time

    data = tiny_demo / "small_files"
    before = snapshot(data)
    scratch = tmp_path / "scratch"
    env = {**os.environ, "HEP_ADVISOR_CACHE": str(own_cache)}
    proc = subprocess.Popen([sys.executable, "-m", "hep_advisor", "try", "M001", str(data),
                             "--budget", "60", "--sample-mb", "1", "--scratch", str(scratch)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not any(scratch.rglob("*.root")) and proc.poll() is None:
            assert time.monotonic() < deadline, "the sample was never written"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted; the scratch data were removed" in err and "Traceback" not in err
    assert list(scratch.iterdir()) == [] and snapshot(data) == before


def test_try_is_in_the_library(stored_small: Advice) -> None:
    """A notebook tries a recommendation with ``hep_advisor.try_recommendation(advice, code)``
    (the result types call nothing above them: ``Advice`` has no ``try_``)."""
    import hep_advisor
    from hep_advisor.pipeline.trial import try_recommendation

    assert hep_advisor.try_recommendation is try_recommendation
    assert not hasattr(stored_small, "try_")


def test_tui_try_action(stored_small: Advice, monkeypatch: pytest.MonkeyPatch,
                        tmp_path: Path) -> None:
    """``y`` on the Advice tab tries the highlighted recommendation in a worker, with
    progress, and shows predicted against realised."""
    import asyncio

    from tui_helpers import settle, wait_until

    from hep_advisor.tui import make_app

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("hep_advisor.tui.panes.advice.AdvicePane.TRY_BUDGET_S", 2.0)
    app = make_app(advice=stored_small)
    app.animation_level = "none"

    async def main() -> None:
        from hep_advisor.tui.panes.advice import AdvicePane

        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.loaded is not None, what="the advice")
            await settle(pilot)
            await pilot.press("5")
            await settle(pilot)
            pane = app.query_one(AdvicePane)
            assert pane.selected is not None and pane.selected.code == "M001"
            await pilot.press("y")
            await wait_until(pilot, lambda: pane.trial is not None, timeout=60,
                             what="the trial")
            text = str(app.query_one("#rec-try").render())
            assert "realised" in text and "Tried M001" in text

    asyncio.run(main())


def test_trial_kept_and_used_by_later_runs(tiny_demo: Path, tmp_path: Path,
                                           own_cache: Path) -> None:
    """The realised point is stored with the files' cached advice; a later ``advise`` (as
    ``report`` and ``tui`` run it) refits with it and labels it a measured trial."""
    from hep_advisor.pipeline.advise import advise, cached_advice
    from hep_advisor.pipeline.trial_refit import load_trials, trials_path

    paths = [str(tiny_demo / "small_files")]
    first = advise(paths, budget_s=4, label="small")
    if first.recommendation("M001") is None:
        pytest.skip("no M001 on this calibration")
    assert not any(e.name == "measured trial" for r in first.recommendations
                   for e in r.evidence)
    r = try_recommendation(first, "M001", budget_s=3, sample_mb=0.5,
                           scratch=str(tmp_path / "s"))
    assert r.refit and r.stored is not None and Path(r.stored).exists()
    key = Path(r.stored).name.split(".")[0]
    (point,) = load_trials(key)
    assert point.code == "M001" and point.realised_speedup == r.realised_speedup
    # a later run of the same files: cached calibration, refitted with the stored trial
    again = advise(paths, budget_s=4, label="small")
    assert again.calibration_reused
    assert [x.code for x in again.recommendations] == list(r.refit_ranking)
    m = again.recommendation("M001")
    if m is not None:
        ev = next(e for e in m.evidence if e.name == "measured trial")
        assert ev.source == "measured" and ev.value == pytest.approx(r.realised_speedup,
                                                                     rel=1e-3)
        assert m.predicted_speedup == pytest.approx(r.refit_predicted_speedup, rel=1e-6)
    assert any("measured trial(s) stored with the cached advice" in n for n in again.notes)
    # the TUI's first view (the stored advice, before the model loads) says so too
    shown = cached_advice(paths)
    assert shown is not None and any("measured trial" in n for n in shown.notes)
    # an unreadable trials file is ignored: the advice as calibrated
    trials_path(key).write_text("{not json")
    plain = advise(paths, budget_s=4, label="small")
    assert not any("measured trial" in n for n in plain.notes)
    assert [x.code for x in plain.recommendations] == [x.code for x in first.recommendations]
