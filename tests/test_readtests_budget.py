"""The time budget is a promise: every read test stops at its share, a test that cannot fit
skips itself with its reason (the tests after it keep their time), and the calibration ends
within its budget and the tolerance (5%, at least 1 s)."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import write_flat
from hep_advisor.probes import DatasetProfile, probe_dataset
from hep_advisor.probes.readtests import baskets, overhead
from hep_advisor.probes.readtests import calibrate as calibrate_mod
from hep_advisor.probes.readtests.calibrate import calibrate
from hep_advisor.probes.readtests.registry import READ_TESTS, ReadTest
from hep_advisor.probes.readtests.runner import (
    Context,
    OutOfTime,
    ProgressEvent,
    Session,
    tolerance,
)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def one_file(tmp_path_factory: pytest.TempPathFactory) -> DatasetProfile:
    path = write_flat(tmp_path_factory.mktemp("budget") / "f.root")
    return probe_dataset([str(path)])


def _fake_run(monkeypatch: pytest.MonkeyPatch, clock: FakeClock, sample_s: float,
              needs: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Every test's step, on a fake clock: a slow reader whose samples take ``sample_s``,
    repeated over the share; a test in ``needs`` first needs that many seconds in one
    piece.  Returns test -> (share, seconds taken)."""
    ran: dict[str, tuple[float, float]] = {}

    def fake(test: ReadTest) -> Any:
        def step(ctx: Context, share_s: float) -> Any:
            t0 = clock()
            try:
                if test.name in needs:
                    ctx.session.need(needs[test.name], "one long pass")

                def sample() -> float:
                    clock.t += sample_s
                    return 1.0

                ctx.session.repeat(sample, share_s, test.name, "reading", min_samples=99)
            finally:
                ran[test.name] = (share_s, clock() - t0)
            return None

        return step

    monkeypatch.setattr(calibrate_mod, "step_of", fake)
    monkeypatch.setattr(calibrate_mod, "Session", functools.partial(Session, clock=clock))
    return ran


@pytest.mark.parametrize("budget", [3.0, 10.0, 40.0])
def test_each_test_stops_at_its_share_and_the_total_at_the_budget(
        one_file: DatasetProfile, monkeypatch: pytest.MonkeyPatch, budget: float) -> None:
    clock = FakeClock()
    ran = _fake_run(monkeypatch, clock, 0.05, {})
    events: list[ProgressEvent] = []
    cal = calibrate(one_file, budget_s=budget, workers=(1,), progress=events.append)
    for name, (share, took) in ran.items():
        assert took <= share + 0.05 + 1e-9, name  # at most the sample under way
    assert cal.elapsed_s <= budget + tolerance(budget)
    # the time left travels with the progress, and runs down
    lefts = [e.left_s for e in events if e.left_s is not None]
    assert len(lefts) == len(events) and lefts == sorted(lefts, reverse=True)
    assert lefts[-1] == pytest.approx(max(0.0, budget - cal.elapsed_s))
    if budget >= 10:
        assert set(ran) == {t.name for t in READ_TESTS} and not cal.skipped


def test_a_test_that_cannot_fit_skips_itself_and_the_next_keep_their_time(
        one_file: DatasetProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    ran = _fake_run(monkeypatch, clock, 0.05, {"decompression": 30.0})
    cal = calibrate(one_file, budget_s=10.0, workers=(1,))
    reasons = {s.test: s.reason for s in cal.skipped}
    assert set(reasons) == {"decompression"}
    assert "no time for one long pass" in reasons["decompression"]
    assert ran["decompression"][1] == 0.0  # it took no time
    after = [t.name for t in READ_TESTS][[t.name for t in READ_TESTS].index("decompression")
                                         + 1:]
    assert all(ran[name][1] > 0 for name in after)  # the tests after it ran
    assert cal.elapsed_s <= 10.0 + tolerance(10.0)


def test_a_test_whose_minimum_is_not_left_is_skipped_with_its_reason(
        one_file: DatasetProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    # a reader so slow that the first tests overrun their minimums: the last ones cannot fit
    ran = _fake_run(monkeypatch, clock, 0.4, {})
    cal = calibrate(one_file, budget_s=2.0, workers=(1,))
    reasons = {s.test: s.reason for s in cal.skipped}
    assert reasons and all(r.startswith("no time left") for r in reasons.values())
    assert not set(reasons) & set(ran)  # a skipped test did not run at all
    assert cal.elapsed_s <= 2.0 + tolerance(2.0)


def test_a_budget_overrun_stops_the_test_under_way() -> None:
    clock = FakeClock()
    s = Session(10.0, clock=clock)
    s.check()
    clock.t = 10.0 + tolerance(10.0) / 2 + 0.01
    with pytest.raises(OutOfTime, match="budget ran out"):
        s.check()


def _slow(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, delay_s: float) -> None:
    real = getattr(module, name)

    def slow(*args: Any, **kw: Any) -> Any:
        time.sleep(delay_s)
        return real(*args, **kw)

    monkeypatch.setattr(module, name, slow)


def test_the_basket_cost_stops_at_its_share_with_a_slow_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_flat(tmp_path / "flat.root", entries=4000, chunks=4)
    _slow(monkeypatch, baskets, "_timed", 0.05)  # every read 50 ms slower
    t0 = time.perf_counter()
    try:
        cost = baskets.measure_basket_cost(Session(60.0), [str(path)], "t", None, 1.0)
        assert len(cost.measurement.samples) >= 1
    except OutOfTime:
        pass  # the copy took the share: skipped, with its reason
    # its share, and at most the repetition under way (16 reads of 50 ms) beyond it
    assert time.perf_counter() - t0 < 1.0 + 1.5


def test_the_parallel_loop_starts_no_run_that_does_not_fit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither its share (0.1 s) nor the session's spare time (none: a 1 s budget, less than
    the minimums of the tests still to run) fits the single worker's run: it is not started."""
    path = write_flat(tmp_path / "flat.root", entries=4000)
    session = Session(1.0)
    assert session.spare() == 0.0
    with pytest.raises(OutOfTime, match="no time for 1 worker process"):
        overhead.measure_parallel_loop(session, [str(path)], "t", None, 0.1)


# -- what the user sees: the time left, and what was left out, with the reason -------------


def test_the_cli_bar_shows_the_time_left_counting_down() -> None:
    from hep_advisor.commands.calibrate import BudgetClock

    clock = FakeClock()
    b = BudgetClock(10.0, clock=clock)
    assert b.left() is None and b.text() == "" and b.spent() == 0.0
    b.update(8.0)
    assert b.text() == "8 s of the budget left" and b.spent() == pytest.approx(0.2)
    clock.t = 3.0  # no event for 3 s: it counts down with the clock
    assert b.left() == pytest.approx(5.0) and b.spent() == pytest.approx(0.5)
    b.update(5.5)  # an event sets it right
    assert b.left() == pytest.approx(5.5)
    clock.t = 20.0
    assert b.text() == "budget spent" and b.spent() == 1.0
    b.update(None)  # an event without the time left changes nothing
    assert b.text() == "budget spent"
    # the next calibration (the demo report's next dataset): the clock starts anew
    b2 = BudgetClock(None, clock=clock)
    b2.update(3.0)
    b2.update(2.0)
    assert b2.spent() == pytest.approx(1 / 3)
    b2.update(3.3)
    assert b2.total == pytest.approx(3.3) and b2.spent() == 0.0


def test_the_calibrate_progress_prints_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    from hep_advisor.commands import calibrate as cli

    out = io.StringIO()
    monkeypatch.setattr(cli, "err_console", Console(file=out, force_terminal=True, width=120))
    with cli.calibration_progress(True, 40.0) as update:
        assert callable(update)
        update(ProgressEvent("event_loop", 0.5, "reading 3 branches", left_s=23.2))
        update(ProgressEvent("event_loop", 1.0, "done", "1000 events/s", left_s=22.9))
    text = out.getvalue()
    assert "of the budget left" in text and "event loop" in text
    assert "1000 events/s" in text


def test_advise_progress_receives_the_time_left_and_the_report_the_skipped_tests(
        one_file: DatasetProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    from hep_advisor import advise
    from hep_advisor.render.formats import render_report

    clock = FakeClock()
    _fake_run(monkeypatch, clock, 0.05, {"decompression": 30.0})
    events: list[ProgressEvent] = []
    advice = advise(one_file.file_paths, budget_s=10.0, progress=events.append, cache=False)
    tests = [e for e in events if e.test != "probe"]
    lefts = [e.left_s for e in tests if e.left_s is not None]
    assert lefts and len(lefts) == len(tests) and lefts == sorted(lefts, reverse=True)
    assert advice.calibration is not None
    (skip,) = advice.calibration.skipped
    assert skip.test == "decompression"
    for fmt in ("text", "md", "html"):
        # the full report says why; the short one (the default text and Markdown) names it
        shown = render_report(advice.report(), fmt, width=400, verbose=True)
        assert "not measured" in shown and "decompression: no time for one long pass" in shown, fmt
        short = render_report(advice.report(), fmt, width=400)
        assert "read tests not measured: decompression (" in short.lower(), fmt
