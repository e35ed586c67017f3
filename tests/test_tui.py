"""The TUI, driven by Textual's pilot at 80x24: the main flows, asserting the app's state, and
a few SVG snapshots of a deterministic advice (``tui_helpers.fixture_advice``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import check_snapshot, fixture_advice, settle, wait_until

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def advice() -> Any:
    return fixture_advice()


def drive(app: Any, steps: Callable[[Any], Awaitable[None]], size: tuple[int, int] = SIZE
          ) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await wait_until(pilot, lambda: app.loaded is not None or app.error is not None,
                             what="the advice")
            await settle(pilot)
            await steps(pilot)

    asyncio.run(main())


def make(advice: Any, **kw: Any) -> Any:
    from hep_advisor.tui import make_app

    app = make_app(advice=advice, **kw)
    app.animation_level = "none"  # no tab underline caught mid-slide in a snapshot
    return app


# -- tabs and overview -------------------------------------------------------------------------
def test_overview_then_every_tab_by_number(advice: Any) -> None:
    from textual.widgets import Static

    app = make(advice)

    async def steps(pilot: Any) -> None:
        assert app.active_tab == "overview"
        verdict = str(app.query_one("#ov-verdict", Static).render())
        assert advice.verdict.limit.capitalize() in verdict
        recs = str(app.query_one("#ov-recs", Static).render())
        assert advice.recommendations[0].title[:20] in recs
        for key, tab in zip("234561", ("data", "calibrate", "scaling", "advice", "whatif",
                                       "overview"), strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert app.active_tab == tab

    drive(app, steps)


def test_status_and_calibrate_tab_for_given_advice(advice: Any) -> None:
    from textual.widgets import Static

    app = make(advice)

    async def steps(pilot: Any) -> None:
        status = str(app.query_one("#status", Static).render())
        assert "small files" in status and "recommendation" in status
        await pilot.press("3")
        state = str(app.query_one("#cal-state", Static).render())
        assert "given with the advice" in state
        assert app.query_one("#cal-rows").display is False  # nothing ran live

    drive(app, steps)


# -- data --------------------------------------------------------------------------------------
def test_data_sort_and_filter(advice: Any) -> None:
    from textual.widgets import DataTable

    from hep_advisor.tui.panes import DataPane

    app = make(advice)

    async def steps(pilot: Any) -> None:
        await pilot.press("2")
        pane = app.query_one(DataPane)
        table = app.query_one("#branches", DataTable)
        total = sum(len(t.branch_profiles) for t in advice.dataset.trees)
        assert table.row_count == total
        # default: the largest branches first
        sizes = [r.compressed for r in pane.shown_rows]
        assert sizes == sorted(sizes, reverse=True)
        table.focus()
        await pilot.press("s")  # next column: the compression factor, largest first
        assert pane.sort_key == "factor" and pane.sort_reverse
        factors = [r.factor or 0 for r in pane.shown_rows]
        assert factors == sorted(factors, reverse=True)
        await pilot.press("s", "s", "s")  # baskets, basket, share
        assert pane.sort_key == "share"
        await pilot.press("S")  # reversed: the smallest first
        shares = [r.share for r in pane.shown_rows]
        assert shares == sorted(shares) and not pane.sort_reverse
        first = str(table.get_row_at(0)[0])
        assert first == pane.shown_rows[0].branch
        await pilot.press("slash")
        assert app.focused is not None and app.focused.id == "data-filter"
        await pilot.press(*"ci")
        await pilot.pause()
        shown = pane.shown_rows
        assert 0 < len(shown) < total and table.row_count == len(shown)
        assert all("ci" in (r.branch + r.type).lower() for r in shown)
        await pilot.press("enter")  # back to the table
        assert app.focused is table

    drive(app, steps)


def test_data_header_click_sorts(advice: Any) -> None:
    from hep_advisor.tui.panes import DataPane

    app = make(advice)

    async def steps(pilot: Any) -> None:
        await pilot.press("2")
        pane = app.query_one(DataPane)
        await pilot.click("#branches", offset=(3, 0))  # the "branch" header
        await pilot.pause()
        assert pane.sort_key == "branch" and not pane.sort_reverse
        names = [r.branch.lower() for r in pane.shown_rows]
        assert names == sorted(names)

    drive(app, steps)


# -- advice ------------------------------------------------------------------------------------
def test_select_recommendation_and_copy_its_command(advice: Any) -> None:
    from textual.widgets import OptionList, Static

    from hep_advisor.tui.panes import AdvicePane

    recs = advice.recommendations
    assert len(recs) >= 2, "the fixture's advice should hold two recommendations or more"
    app = make(advice)

    async def steps(pilot: Any) -> None:
        await pilot.press("5")
        pane = app.query_one(AdvicePane)
        assert pane.selected == recs[0]
        app.query_one("#rec-list", OptionList).focus()
        await pilot.press("down")
        await pilot.pause()
        assert pane.selected == recs[1]
        detail = str(app.query_one("#rec-detail", Static).render())
        assert recs[1].title in detail
        assert ("not recommended" if recs[1].contradicted else "Predicted") in detail
        await pilot.press("up", "enter")  # Enter: to the actions
        assert pane.selected == recs[0]
        assert app.focused is app.query_one("#rec-actions", OptionList)
        await pilot.press("c")
        expected = next(a.command for a in recs[0].actions if a.command)
        assert app.clipboard == expected

    drive(app, steps)


# -- what-if -----------------------------------------------------------------------------------
def test_whatif_prediction_follows_the_controls(advice: Any) -> None:
    from textual.widgets import Checkbox, Input, Select

    from hep_advisor.tui.panes import WhatIfPane

    app = make(advice)

    async def steps(pilot: Any) -> None:
        await pilot.press("6")
        pane = app.query_one(WhatIfPane)
        await settle(pilot)
        before = pane.prediction
        assert before is not None and before.workers == advice.verdict.workers
        assert before.speedup == pytest.approx(1.0, rel=1e-6)

        # merge the small files: the model predicts a gain
        app.query_one("#wi-merge", Select).focus()
        await pilot.press("enter", "down", "down", "down", "enter")  # 500 MB
        await settle(pilot)
        assert pane.scenario == {"merge_mb": 500.0}
        merged = pane.prediction
        assert merged is not None and merged.speedup is not None
        assert merged.aggregate_mb_per_s > before.aggregate_mb_per_s
        assert merged.speedup > 1.05

        # more workers: typed in the field
        field = app.query_one("#wi-workers", Input)
        field.focus()
        await pilot.press("end", "backspace", "2")
        await settle(pilot)
        assert pane.worker_count == 2
        assert pane.prediction is not None and pane.prediction.workers == 2

        # the page cache and another storage layout are keywords too
        app.query_one("#wi-cached", Checkbox).value = True
        app.query_one("#wi-storage", Select).value = "separate:4"
        await settle(pilot)
        assert pane.scenario["cached"] is True and pane.scenario["storage"] == "separate:4"

        # a bad worker count is said, not predicted
        field.value = "0"
        await settle(pilot)
        assert pane.error is not None and "workers" in pane.error

    drive(app, steps)


# -- calibration: live progress, Esc, r ----------------------------------------------------------
class FakeLoader:
    """Reports progress like the read tests, then waits for Esc (or a time-out)."""

    description = "fake data"
    can_recalibrate = True

    def __init__(self, advice: Any) -> None:
        self.advice = advice
        self.calls: list[bool] = []
        self.started = threading.Event()

    def __call__(self, progress: Any, cancel: threading.Event, recalibrate: bool) -> Any:
        from hep_advisor.probes.readtests.runner import ProgressEvent
        from hep_advisor.tui.source import Loaded

        self.calls.append(recalibrate)
        progress(ProgressEvent("probe", 1.0, "probed", "6 files, 2.0 MB"))
        progress(ProgressEvent("raw_read", 0.5, "reading cold"))
        progress(ProgressEvent("raw_read", 1.0, "cold sequential", "665 MB/s"))
        progress(ProgressEvent("request_sweep", 0.2, "4 KiB reads"))
        self.started.set()
        cancel.wait(15)
        return Loaded(self.advice, None)


def test_escape_cancels_the_calibration_and_r_reruns(advice: Any) -> None:
    from textual.widgets import Static

    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes import CalibratePane

    loader = FakeLoader(advice)
    app = make_app(loader=loader)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.query_one(CalibratePane).live,
                             what="the read tests' progress")
            await pilot.pause()
            # the Overview stays (it says when the advice comes); the tests are one key away
            assert app.loading and app.active_tab == "overview"
            await pilot.press("3")
            row = app.query_one(CalibratePane).row("raw_read")
            assert row is not None and row.figures == ["665 MB/s"] and row.fraction == 1.0
            assert "665 MB/s" in str(row.query_one(".test-figure").render())
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.loaded is not None, what="the advice")
            assert app.cancelled and not app.loading
            assert "Cancelled" in str(app.query_one("#cal-state", Static).render())
            assert loader.calls == [False]
            await pilot.press("r")  # run again, ignoring the cache
            await wait_until(pilot, lambda: len(loader.calls) == 2, what="the re-run")
            assert loader.calls == [False, True] and app.loading
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.load_count == 2, what="the second advice")
            await pilot.press("q")
        assert app.return_code == 0

    asyncio.run(main())


def test_a_read_test_not_listed_gets_a_row_of_its_own(advice: Any) -> None:
    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes import CalibratePane
    from hep_advisor.tui.source import Loaded

    class NewTest:
        description = "new test"
        can_recalibrate = True

        def __call__(self, progress: Any, cancel: Any, recalibrate: bool) -> Any:
            from hep_advisor.probes.readtests.runner import ProgressEvent

            for i in range(5):
                progress(ProgressEvent("brand_new", i / 4, f"step {i}",
                                       "42 MB/s" if i == 4 else None))
            return Loaded(advice)

    app = make_app(loader=NewTest())

    async def steps(pilot: Any) -> None:
        row = app.query_one(CalibratePane).row("brand_new")
        assert row is not None and row.figures == ["42 MB/s"] and row.fraction == 1.0
        assert row.label == "brand new"

    drive(app, steps)


def test_load_failure_is_shown_not_raised() -> None:
    from textual.widgets import Static

    from hep_advisor.tui import make_app

    class Failing:
        description = "nothing"
        can_recalibrate = True

        def __call__(self, progress: Any, cancel: Any, recalibrate: bool) -> Any:
            raise ValueError("no usable ROOT file in /nowhere\nsecond line")

    app = make_app(loader=Failing())

    async def steps(pilot: Any) -> None:
        assert app.error == "no usable ROOT file in /nowhere"
        assert "Could not advise" in str(app.query_one("#ov-verdict", Static).render())
        await pilot.press("e")  # nothing to export: says so, no crash
        await pilot.pause()
        assert len(app.screen_stack) == 1

    drive(app, steps)


@pytest.mark.slow
def test_real_calibration_cancelled_with_escape(tiny_demo: Path) -> None:
    """The read tests on the tiny demo, in the worker: Esc stops them, the advice is partial."""
    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes import CalibratePane

    app = make_app([str(tiny_demo / "small_files")], budget_s=30)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.query_one(CalibratePane).live, timeout=60,
                             what="the first read test")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.loaded is not None or app.error is not None,
                             timeout=60, what="the partial advice")
            assert app.error is None
            assert app.cancelled
            assert app.advice is not None and app.advice.calibration is not None
            assert app.advice.calibration.partial
            await pilot.press("q")

    asyncio.run(main())


@pytest.mark.slow
def test_the_cards_fill_when_the_probes_end_not_when_the_advice_comes(tiny_demo: Path) -> None:
    """A real probe and calibration, the worker held at the first read test's first step:
    the site and dataset cards, the Data tab and the time left are shown, the advice is not
    there yet.  Then Esc: the (partial) advice names the dataset as the card did."""
    import dataclasses
    import socket

    from textual.widgets import DataTable, Static

    from hep_advisor.tui import make_app
    from hep_advisor.tui.source import AdviceSource

    reached, release = threading.Event(), threading.Event()

    @dataclasses.dataclass(frozen=True)
    class Held(AdviceSource):
        """The real source; its first read test waits until the test has looked."""

        def __call__(self, progress: Any, cancel: threading.Event, recalibrate: bool,
                     on_probed: Any = None) -> Any:
            def held(event: Any) -> None:
                progress(event)
                if event.test != "probe" and not reached.is_set():
                    reached.set()
                    release.wait(30)

            return super().__call__(held, cancel, recalibrate, on_probed)

    paths = (str(tiny_demo / "small_files"),)
    app = make_app(loader=Held(paths=paths, budget_s=30), budget_s=30)

    def text(selector: str) -> str:
        return str(app.query_one(selector, Static).render())

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, reached.is_set, timeout=60, what="the first read test")
            await wait_until(pilot, lambda: bool(text("#ov-dataset")), what="the cards")
            await pilot.pause(1.2)  # the countdown ticks once a second
            try:
                assert app.loaded is None and app.loading  # the advice is not there yet
                assert app.probed is not None and app.active_tab == "overview"
                site, dataset = text("#ov-site"), text("#ov-dataset")
                assert socket.gethostname() in site and "cores" in site and "RAM" in site
                ds = app.probed.dataset
                assert dataset.startswith(f"small_files · {ds.files} files")
                assert "esdTree" in dataset
                verdict = text("#ov-verdict")
                assert "Calibrating:" in verdict and "The advice in about" in verdict
                left = int(verdict.split("The advice in about ")[1].split(" s")[0])
                assert 5 <= left <= 30  # what is left of the 30 s budget, as measured
                await pilot.press("2")
                await wait_until(pilot, lambda: app.query_one("#branches", DataTable)
                                 .row_count > 0, what="the branches")
                await pilot.press("escape")  # cancels the read tests at their next step
            finally:
                release.set()
            await wait_until(pilot, lambda: app.loaded is not None or app.error is not None,
                             timeout=60, what="the partial advice")
            assert app.error is None and app.advice is not None
            assert app.advice.label == "small_files"  # as the card named it
            await pilot.press("q")

    asyncio.run(main())


@pytest.mark.slow
def test_real_calibration_then_the_cached_one(tiny_demo: Path) -> None:
    """A short calibration runs live; the next start reuses it and says how old it is."""
    from textual.widgets import Static

    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes import CalibratePane

    paths = [str(tiny_demo / "merged")]

    async def run(expect_cached: bool) -> Any:
        app = make_app(paths, budget_s=3)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.loaded is not None or app.error is not None,
                             timeout=90, what="the advice")
            assert app.error is None
            await pilot.press("3")
            pane = app.query_one(CalibratePane)

            def state_now() -> str:
                return str(app.query_one("#cal-state", Static).render())

            if expect_cached:  # the pane's line is set after the advice arrives: let it
                await wait_until(pilot, lambda: "Probing" not in state_now(), timeout=10,
                                 what="the calibrate pane's state")
            state = state_now()
            if expect_cached:
                assert app.loaded.cached_age_s is not None and not pane.live
                assert "Cached calibration from just now" in state
            else:
                assert app.loaded.cached_age_s is None and pane.live
                assert state.startswith("Calibrated")
                row = pane.row("raw_read")
                assert row is not None and row.figures  # measured live
            await pilot.press("q")
        return app

    asyncio.run(run(expect_cached=False))
    asyncio.run(run(expect_cached=True))


# -- export, help, palette, theme, quit ---------------------------------------------------------
@pytest.mark.parametrize("suffix", [".md", ".html", ".json"])
def test_export_writes_the_report(advice: Any, tmp_path: Path, suffix: str) -> None:
    from textual.widgets import Input

    from hep_advisor.tui.screens import ExportScreen

    app = make(advice, export_dir=tmp_path)
    target = tmp_path / f"report{suffix}"

    async def steps(pilot: Any) -> None:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        field = app.screen.query_one("#export-path", Input)
        assert field.value == str(tmp_path / "hep-advisor-small-files.md")
        field.value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen)

    drive(app, steps)
    text = target.read_text()
    assert advice.recommendations[0].title.split()[0] in text
    if suffix == ".json":
        import json

        assert json.loads(text)["schema_version"]


def test_export_refuses_an_unknown_format(advice: Any, tmp_path: Path) -> None:
    from textual.widgets import Input, Label

    from hep_advisor.tui.screens import ExportScreen

    app = make(advice, export_dir=tmp_path)

    async def steps(pilot: Any) -> None:
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "r.docx")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert ".md" in str(app.screen.query_one("#export-error", Label).render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)

    drive(app, steps)
    assert list(tmp_path.iterdir()) == []


def test_help_screen_palette_theme_and_quit(advice: Any) -> None:
    from textual.widgets import Markdown

    from hep_advisor.tui.app import DARK, LIGHT
    from hep_advisor.tui.screens import HelpScreen

    app = make(advice, theme=DARK)

    async def steps(pilot: Any) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one(Markdown).source.startswith("# hep-advisor")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("t")
        assert app.theme == LIGHT
        # the command palette has the advisor's own entries
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"toggle light")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == DARK
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to scaling")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.active_tab == "scaling"
        await pilot.press("q")

    drive(app, steps)
    assert app.return_code == 0


def test_typing_q_in_a_field_does_not_quit(advice: Any) -> None:
    from textual.widgets import Input

    app = make(advice)

    async def steps(pilot: Any) -> None:
        await pilot.press("2", "slash", "q")
        await pilot.pause()
        assert app.query_one("#data-filter", Input).value == "q"
        assert app.is_running

    drive(app, steps)


# -- pieces ------------------------------------------------------------------------------------
def test_test_labels_match_the_calibrate_command() -> None:
    from hep_advisor.commands.calibrate import TEST_LABELS
    from hep_advisor.tui.panes.calibrate import TEST_LABELS as TUI_LABELS

    assert {k: v for k, v in TUI_LABELS.items() if k != "probe"} == TEST_LABELS


def test_scaling_plot_fits_its_box(advice: Any) -> None:
    from hep_advisor.render.scaling import scaling_data
    from hep_advisor.tui.plot import draw, nice_ceiling

    data = scaling_data(advice)
    assert data.capacity is not None and data.knee is not None
    assert data.workers[0] == 1 and len(data.predicted) == len(data.workers)
    for width, height in ((76, 16), (40, 10), (120, 40)):
        rows = draw(data, width, height)
        assert len(rows) == height
        assert all(sum(len(text) for text, _ in runs) <= width for runs in rows)
    assert nice_ceiling(0.59) == pytest.approx(0.6) and nice_ceiling(7.2) == pytest.approx(8)
    assert nice_ceiling(0) == 1


def _cells(rows: list[Any]) -> list[list[tuple[str, str]]]:
    return [[(ch, style) for text, style in runs for ch in text] for runs in rows]


def test_scaling_plot_shows_the_curve_in_its_shaded_interval(advice: Any) -> None:
    """At 80×24 (a 78×18 plot): the curve is the one line, seen in every column between the
    first and the last worker count and lying on the interval's shade; the interval is a
    shaded area (backgrounds and half blocks), not lines; every measured point is a marker;
    the knee and the cores are one vertical mark, labelled above the plot and numbered under
    it; the ceiling is a rule labelled with its value; the raw reads, far above, are named
    with theirs, not drawn; the axes say their units."""
    from hep_advisor.render.scaling import scaling_data
    from hep_advisor.tui.plot import draw

    data = scaling_data(advice)
    assert data.knee == data.cores == 2  # the stored site: 2 cores, the knee at 2 workers
    rows = draw(data, 78, 18)
    cells = _cells(rows)
    plot = [row for row, runs in zip(cells, rows, strict=True)
            if runs and runs[0][1] == "axis" and runs[0][0][-1] in "┤│"]
    assert len(plot) >= 11
    text = ["".join(ch for ch, _ in row) for row in cells]

    def styles(row: list[tuple[str, str]], i: int) -> set[str]:
        return set(row[i][1].split("+"))

    curve = {i for row in plot for i in range(len(row)) if "predicted" in styles(row, i)}
    markers = {i for row in plot for i, (ch, _) in enumerate(row) if ch == "●"}
    first, last = min(curve), max(curve)
    assert last - first > 60 and set(range(first, last + 1)) <= curve | markers
    on_band = [i for row in plot for i in range(len(row))
               if {"predicted", "band"} <= styles(row, i)]
    assert len(on_band) > 0.8 * len([i for row in plot for i in range(len(row))
                                     if "predicted" in styles(row, i)])
    shaded = [i for row in plot for i in range(len(row)) if styles(row, i) & {"band",
                                                                               "band-edge"}]
    assert len(shaded) > 3 * (last - first)  # an area, several cells high
    assert sum(ch == "●" and "measured" in s.split("+") for row in plot for ch, s in row) \
        == len(data.measured)
    # the knee and the cores: one mark, its words above the plot, its count under it
    labels = next(t for t in text if t.lstrip().startswith("MB/s"))
    assert "knee · 2 cores" in labels
    column = labels.index("knee · 2 cores")
    assert sum(row[column][0] == "┊" for row in plot) >= len(plot) // 2
    assert text[-2][column] == "2" and rows[-3][0][0].strip(" ")[0] == "└"
    # the ceiling on its rule, with its value; the raw reads off the scale, with theirs
    assert any("╌ storage capacity (model) 3.33 MB/s ╌" in t for t in text)
    assert any(t.startswith("↑ raw reads (cold): 619.9–665.7 MB/s, off the scale")
               for t in text)
    assert "□" not in "".join(text) and "hardware limit" not in "".join(text)
    assert "90% interval" in text[0] and "measured (warm)" in text[0]
    assert text[-1].strip().startswith("workers") and "MB/s: compressed MB" in text[-1]


def test_scaling_plot_marks_the_knee_cores_and_now_apart() -> None:
    """Many worker counts: the knee, the cores and the workers now each get a mark, in order,
    their words apart; raw reads within the scale are drawn (□) and not named as off it."""
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.plot import draw

    ws = tuple(range(1, 33))
    pred = tuple(100 * w / (1 + w / 8) for w in ws)
    data = ScalingData(label="s", level=0.9, workers=ws, predicted=pred,
                       low=tuple(0.8 * p for p in pred), high=tuple(1.2 * p for p in pred),
                       measured=((1, 95.0), (8, 420.0)),
                       raw_reads=((1, 300.0), (16, 780.0)), capacity=900.0, now=4, cores=16)
    assert [(m.workers, m.label) for m in data.marks()] == \
        [(4, "now"), (16, "16 cores"), (21, "knee")]
    text = ["".join(ch for ch, _ in row) for row in _cells(draw(data, 78, 18))]
    labels = next(t for t in text if t.lstrip().startswith("MB/s"))
    assert labels.index("now") < labels.index("16 cores") < labels.index("knee")
    numbers = text[-2].split()
    assert {"1", "4", "16", "21", "32"} <= set(numbers)
    assert "".join(text).count("□") == 3 and "off the scale" not in "".join(text)  # 2 + legend
    assert data.plot_range().ymax == 1000 and data.plot_range().xticks() == (1, *range(4, 33, 4))


def test_no_model_is_said_on_every_tab(advice: Any) -> None:
    """An advice without a fitted model (a calibration that could not be fitted)."""
    import dataclasses

    from textual.widgets import Static

    bare = dataclasses.replace(advice, model=None, verdict=None, recommendations=(),
                               fitted=None, baseline=None, notes=("no model: too few points",))
    app = make(bare)

    async def steps(pilot: Any) -> None:
        assert "No verdict" in str(app.query_one("#ov-verdict", Static).render())
        for key in "23456":
            await pilot.press(key)
            await settle(pilot)
        assert "No fitted model" in str(app.query_one("#scaling-notes", Static).render())
        assert "fitted model" in str(app.query_one("#wi-result", Static).render())

    drive(app, steps)


# -- the Trace tab (--trace FILE) ---------------------------------------------------------------
def traced(advice: Any, **changes: Any) -> Any:
    """The fixture's advice with the stored real trace (tests/data/trace_prepass.json)."""
    from dataclasses import replace

    from hep_advisor.document.report import read_trace

    trace = read_trace(Path(__file__).parent / "data" / "trace_prepass.json")
    return replace(advice, trace=replace(trace, **changes))


def palette(app: Any) -> list[str]:
    from hep_advisor.tui.commands import AdvisorCommands

    return [name for name, _, _ in AdvisorCommands(app.screen).commands()]


def test_no_trace_no_trace_tab(advice: Any) -> None:
    app = make(advice)

    async def steps(pilot: Any) -> None:
        assert not app.query("#trace-pane")
        assert "Go to Trace" not in palette(app)
        await pilot.press("7")
        await pilot.pause()
        assert app.active_tab == "overview"

    drive(app, steps)


def test_trace_tab_draws_the_requests_and_copies_a_change(advice: Any) -> None:
    from textual.widgets import OptionList, Static, Tab

    from hep_advisor.tui.trace import TracePane, TracePlot

    with_trace = traced(advice)
    trace = with_trace.trace
    app = make(with_trace)

    async def steps(pilot: Any) -> None:
        await wait_until(pilot, lambda: bool(app.query("#trace-pane")), what="the Trace tab")
        assert "7 Trace" in [str(t.label) for t in app.query(Tab)]
        assert "Go to Trace" in palette(app)
        await pilot.press("7")
        await settle(pilot)
        assert app.active_tab == "trace" and app.focused is app.query_one(TracePane)
        drawn = str(app.query_one(TracePlot).render())
        # the key pre-pass: many key marks; the data: a large basket read; the phases named
        assert drawn.count("•") > 20 and "█" in drawn and "pre-pa" in drawn
        legend = str(app.query_one("#trace-legend", Static).render())
        assert "key 1,200" in legend and "reading" in legend
        split = str(app.query_one("#trace-split", Static).render())
        assert "waiting for reads" in split and "the program's own work" in split
        findings = app.query_one("#trace-list", OptionList)
        assert findings.option_count == len(trace.findings) >= 1
        detail = str(app.query_one("#trace-detail", Static).render())
        assert trace.findings[0].change.splitlines()[0][:40] in detail
        assert f"{trace.findings[0].predicted_speedup:.2f}×" in detail
        await pilot.press("c")
        assert app.clipboard == trace.findings[0].change
        await pilot.press("1")
        assert app.active_tab == "overview"

    drive(app, steps)


def test_trace_tab_without_findings_or_picture_says_so(advice: Any) -> None:
    from textual.widgets import Static

    from hep_advisor.tui.trace import TracePlot

    app = make(traced(advice, findings=(), picture=None))

    async def steps(pilot: Any) -> None:
        await wait_until(pilot, lambda: bool(app.query("#trace-pane")), what="the Trace tab")
        await pilot.press("7")
        await settle(pilot)
        assert "No picture" in str(app.query_one(TracePlot).render())
        assert "No reader change" in str(app.query_one("#trace-detail", Static).render())

    drive(app, steps)


# -- snapshots ---------------------------------------------------------------------------------
@pytest.mark.parametrize("tab,theme", [("overview", "textual-dark"), ("advice", "textual-dark"),
                                       ("whatif", "textual-light"),
                                       ("scaling", "textual-dark")])
def test_snapshot(advice: Any, tab: str, theme: str) -> None:
    app = make(advice, theme=theme)

    async def steps(pilot: Any) -> None:
        app.action_show_tab(tab)
        await settle(pilot)
        check_snapshot(f"tui_{tab}_{theme.split('-')[1]}_80x24", app.export_screenshot())

    drive(app, steps)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
def test_snapshot_trace(advice: Any, theme: str) -> None:
    app = make(traced(advice), theme=theme)

    async def steps(pilot: Any) -> None:
        await wait_until(pilot, lambda: bool(app.query("#trace-pane")), what="the Trace tab")
        app.action_show_tab("trace")
        await settle(pilot)
        check_snapshot(f"tui_trace_{theme.split('-')[1]}_80x24", app.export_screenshot())

    drive(app, steps)


# -- the command line ----------------------------------------------------------------------------
def test_no_command_opens_the_tui_only_in_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    import hep_advisor.commands.tui as tui_cmd
    from hep_advisor.cli import main

    calls: list[Any] = []
    monkeypatch.setattr(tui_cmd, "run_tui", lambda args: calls.append(args) or 0)
    assert main([]) == 0  # not a terminal (pytest captures): the help
    assert "usage: hep-advisor" in capsys.readouterr().out and not calls
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    assert main([]) == 0
    assert len(calls) == 1 and calls[0].paths == [] and calls[0].budget == 60.0
    assert main(["tui", "a.root", "--budget", "5", "--theme", "light"]) == 0
    assert calls[1].paths == ["a.root"] and calls[1].budget == 5.0


def test_tui_command_needs_a_terminal() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hep_advisor", "tui"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "needs a terminal" in r.stderr and "Traceback" not in r.stderr


def test_textual_free_parts_do_not_load_textual() -> None:
    import subprocess
    import sys

    code = ("import sys, hep_advisor.tui, hep_advisor.tui.plot, hep_advisor.tui.source,"
            " hep_advisor.tui.waiting,"
            " hep_advisor.commands.tui;"
            "print(','.join(m for m in sys.modules if m.split('.')[0] == 'textual'))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


def test_dataset_card_names_the_rntuple_format() -> None:
    """An RNTuple shows as one, with fields and pages (not branches and baskets)."""
    from hep_advisor.probes import probe_dataset
    from hep_advisor.tui.views import dataset_card

    path = Path(__file__).parent / "data" / "real-world" / "ntpl001_staff_rntuple_v1-0-0-0.root"
    ds = probe_dataset([str(path)])
    text = str(dataset_card("staff", ds))
    assert "RNTuple" in text and "fields" in text and "pages" in text
    assert "branches" not in text


def test_a_contradicted_recommendation_is_not_shown_as_a_gain() -> None:
    """The TUI says what the report says of a recommendation its own measurement contradicts."""
    from tui_helpers import fixture_advice

    from hep_advisor.findings.recommendation import contradicted
    from hep_advisor.render.report_parts import speedup_line
    from hep_advisor.tui.views import rec_line, recommendation_detail

    rec = contradicted(fixture_advice().recommendations[0], "measured 0.98x with 2 workers")
    detail, line = str(recommendation_detail(rec)), str(rec_line(1, rec))
    assert speedup_line(rec) in detail and "Predicted:" not in detail
    assert "not" in line and "Not recommended" in line
