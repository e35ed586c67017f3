"""Calibrate: the read tests, live, one progress bar and the latest figure per test; or the
cached calibration that was reused, with its age."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, ProgressBar, Static

from hep_advisor.render.labels import TEST_LABELS as READ_TEST_LABELS

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.runner import ProgressEvent
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded

#: The rows: the probe, then the read tests in the order they run (from their registry).
TEST_LABELS = {"probe": "probe", **READ_TEST_LABELS}


class TestRow(Horizontal):
    """One test: its name, a bar, and the figure it measured last (or its step)."""

    def __init__(self, test: str, label: str) -> None:
        super().__init__(id=f"test-{test}", classes="test-row waiting")
        self.test = test
        self.label = label
        self.figures: list[str] = []
        self.fraction = 0.0
        self._pending: list[ProgressEvent] = []
        self._ready = False

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="test-name")
        yield ProgressBar(total=1.0, show_eta=False, show_percentage=False)
        yield Label("", classes="test-figure")

    def reset(self) -> None:
        self.figures.clear()
        self.fraction = 0.0
        self.set_classes("test-row waiting")
        self.query_one(ProgressBar).update(total=1.0, progress=0.0)
        self.query_one(".test-figure", Label).update("")

    def on_mount(self) -> None:
        self._ready = True
        pending, self._pending = self._pending, []
        for event in pending:
            self.step(event)

    def step(self, event: ProgressEvent) -> None:
        if not self._ready:  # a row added during the run: shown once it is mounted
            self._pending.append(event)
            return
        self.remove_class("waiting")
        self.fraction = max(0.0, min(1.0, event.fraction))
        self.query_one(ProgressBar).update(progress=self.fraction)
        if event.figure:
            self.figures.append(event.figure)
            text = Content.styled(event.figure, "bold")
        elif self.figures:
            text = Content.assemble((self.figures[-1], "bold"), ("  " + event.message,
                                                                  "$text-muted"))
        else:
            text = Content.styled(event.message, "$text-muted")
        self.query_one(".test-figure", Label).update(text)
        if self.fraction >= 1.0:
            self.add_class("done")


class CalibratePane(VerticalScroll):
    """``r`` re-runs the read tests (ignoring the cache), Esc cancels them."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.running = False
        #: whether read tests reported progress in this run (else: nothing ran live)
        self.live = False
        self.cached_age_s: float | None = None
        #: the state line while the tests run (the time left is shown after it)
        self.running_state: Content | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="cal-state")
        with Vertical(id="cal-rows"):
            for test, label in TEST_LABELS.items():
                yield TestRow(test, label)
        yield Static("", id="cal-summary")

    def row(self, test: str) -> TestRow | None:
        for r in self.query(TestRow):
            if r.test == test:
                return r
        return None

    def start(self, description: str, budget_s: float | None, recalibrate: bool) -> None:
        self.running = True
        self.live = False
        for r in self.query(TestRow):
            r.reset()
        self.query_one("#cal-rows").display = True
        self.query_one("#cal-summary", Static).update("")
        what = "Re-running the read tests" if recalibrate else "Probing and calibrating"
        budget = f" (budget {budget_s:g} s)" if budget_s else ""
        self.running_state = Content.assemble((f"{what} on {description}{budget}", "bold"),
                                              ("  ·  Esc cancels, keeping what was measured",
                                               "$text-muted"))
        self._state(self.running_state)

    def progress(self, event: ProgressEvent) -> None:
        row = self.row(event.test)
        if row is None:  # a test this version does not list: a row of its own, at the end
            row = TestRow(event.test, event.test.replace("_", " "))
            self.query_one("#cal-rows").mount(row)
        row.step(event)
        if event.test != "probe":
            self.live = True
        if self.running and self.running_state is not None and event.left_s is not None:
            self._state(Content.assemble(self.running_state, "  ·  ",
                                         (self.time_left(event.left_s), "bold")))

    @staticmethod
    def time_left(left_s: float) -> str:
        """The budget's time left, as the state line shows it while the tests run."""
        return f"{left_s:.0f} s of the budget left" if left_s >= 1 else "budget spent"

    def cancelling(self) -> None:
        self._state(Content.styled("Cancelling: the test under way stops at its next step…",
                                   "bold $text-warning"))

    def failed(self, error: str) -> None:
        self.running = False
        self._state(Content.styled(f"Failed: {error}", "bold $text-error"))

    def show(self, loaded: Loaded, scaling: ScalingData | None, *, cancelled: bool = False,
             elapsed_s: float | None = None, can_recalibrate: bool = True) -> None:
        from hep_advisor.pipeline.cache import age_seconds, describe_age

        self.running = False
        self.cached_age_s = loaded.cached_age_s
        cal = loaded.advice.calibration
        created = loaded.advice.calibration_created
        rerun = "  ·  r re-runs the read tests" if can_recalibrate else ""
        self.query_one("#cal-rows").display = self.live
        if loaded.cached_age_s is not None:
            state = Content.assemble(
                (f"Cached calibration from {describe_age(loaded.cached_age_s)}, reused",
                 "bold $text-success"), (f" (the files are unchanged){rerun}", "$text-muted"))
        elif cal is None:
            state = Content.styled("No calibration" + rerun, "bold $text-warning")
        elif not self.live:
            try:
                made = f", made {describe_age(age_seconds(created))}" if created else ""
            except ValueError:
                made = ""
            state = Content.assemble((f"Calibration given with the advice{made}", "bold"),
                                     (rerun, "$text-muted"))
        elif cancelled or cal.partial:
            state = Content.assemble(("Cancelled: the advice rests on partial results",
                                      "bold $text-warning"), (rerun, "$text-muted"))
        else:
            took = f" in {cal.elapsed_s:.1f} s" if cal.elapsed_s else ""
            state = Content.assemble((f"Calibrated{took}", "bold $text-success"),
                                     (f" (stored for next time){rerun}", "$text-muted"))
        self._state(state)
        if cal is not None:
            from hep_advisor.render.calibration_view import calibration_view

            self.query_one("#cal-summary", Static).update(calibration_view(cal))

    def _state(self, content: Content) -> None:
        self.query_one("#cal-state", Static).update(content)
