"""The Calibrate tab shows the time actually left of the budget while the read tests run."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from tui_helpers import fixture_advice, wait_until


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def test_the_state_line_shows_the_time_left() -> None:
    from textual.widgets import Static

    from hep_advisor.probes.readtests.runner import ProgressEvent
    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes import CalibratePane
    from hep_advisor.tui.source import Loaded

    advice = fixture_advice()
    reported = threading.Event()

    def loader(progress: Any, cancel: threading.Event, recalibrate: bool) -> Any:
        progress(ProgressEvent("raw_read", 0.5, "reading cold", left_s=41.6))
        progress(ProgressEvent("request_sweep", 0.2, "4 KiB reads", left_s=37.2))
        reported.set()
        cancel.wait(15)
        return Loaded(advice, None)

    loader.description = "fake data"  # type: ignore[attr-defined]
    loader.can_recalibrate = True  # type: ignore[attr-defined]
    app = make_app(loader=loader)

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            pane = app.query_one(CalibratePane)
            await wait_until(pilot, lambda: "37 s of the budget left" in str(
                pane.query_one("#cal-state", Static).render()), what="the time left")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.loaded is not None, what="the advice")
            assert "budget left" not in str(pane.query_one("#cal-state", Static).render())
            await pilot.press("q")

    asyncio.run(main())
    assert CalibratePane.time_left(0.4) == "budget spent"


def test_the_overview_says_when_the_advice_comes() -> None:
    """From what is measured: no number before a read test says what is left of the budget;
    then that, counting down with the clock between steps; then that the budget is spent."""
    from hep_advisor.tui.waiting import Countdown

    now = [100.0]
    c = Countdown(60.0, clock=lambda: now[0])
    assert c.left() is None
    assert c.text() == "The advice comes when the read tests end, within the 60 s budget."
    now[0] += 4  # the probe took 4 s; the first read test reports 55.5 s left
    c.update(55.5)
    assert c.left() == 55.5 and "about 56 s" in c.text() and "60 s calibration budget" in c.text()
    now[0] += 10
    assert "about 46 s" in c.text()
    c.update(None)  # a probe event has no time left: nothing changes
    assert c.left() == 45.5
    now[0] += 50
    assert c.left() == 0.0 and c.text().startswith("The calibration budget is spent")
    assert c.elapsed() == 64
    assert "within" not in Countdown(None).text()
