"""The Textual app: six tabs over one ``Advice``, loaded in a worker thread.

The app draws at once; the advice (probe, calibration or the cached one, model, verdict,
recommendations) comes from a loader (``source.py``) run in a thread worker, whose progress
arrives as messages.  What is known is shown when it is known: the site and dataset probes
as soon as they end (seconds in), and the time left until the advice (``waiting.py``).  Esc
cancels a calibration (the read tests stop at their next step and the advice rests on what
was measured), ``r`` runs it again ignoring the cache.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.css.query import NoMatches
from textual.lazy import Lazy
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from hep_advisor.tui.commands import AdvisorCommands
from hep_advisor.tui.messages import AdviceReady, CalibrationProgress, LoadFailed, ProbeReady
from hep_advisor.tui.panes import (
    AdvicePane,
    CalibratePane,
    DataPane,
    OverviewPane,
    ScalingPane,
    WhatIfPane,
)
from hep_advisor.tui.panes.calibrate import TEST_LABELS
from hep_advisor.tui.waiting import Countdown

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice
    from hep_advisor.probes.readtests.runner import ProgressEvent
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded, Loader, Probed

DARK, LIGHT = "textual-dark", "textual-light"


class AdvisorApp(App[None]):
    """``hep-advisor tui``.  Build it with :func:`make_app`."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it
    TITLE = "hep-advisor"
    COMMANDS = App.COMMANDS | {AdvisorCommands}
    TABS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("overview", "Overview"), ("data", "Data"), ("calibrate", "Calibrate"),
        ("scaling", "Scaling"), ("advice", "Advice"), ("whatif", "What-if"))
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("e", "export", "Export"),
        Binding("r", "recalibrate", "Re-run"),
        Binding("escape", "cancel", "Cancel"),
        Binding("t", "toggle_theme", "Theme"),
        *[Binding(str(i), f"show_tab('{tab}')", title, show=False)
          for i, (tab, title) in enumerate(TABS, 1)],
        # the tabs added with --dask and --trace (Cluster, Trace), by the number they show
        *[Binding(str(i), f"show_nth({i})", show=False) for i in (7, 8)],
    ]

    def __init__(self, loader: Loader, *, budget_s: float | None = None,
                 export_dir: Path | None = None,
                 on_ready: Callable[[AdvisorApp], object] | None = None,
                 theme: str | None = None, initial: Loaded | None = None) -> None:
        super().__init__()
        self.loader = loader
        self.initial = initial
        self.budget_s = budget_s
        self.export_dir = export_dir or Path.cwd()
        self.ready_callback = on_ready
        if theme:
            self.theme = theme
        self.loaded: Loaded | None = None
        #: the site and dataset probes, once they end (before the advice)
        self.probed: Probed | None = None
        self.scaling: ScalingData | None = None
        self.loading = False
        self.cancelled = False
        self.error: str | None = None
        self.load_count = 0
        self._cancel = threading.Event()
        self.countdown = Countdown(budget_s)
        self._step = ""  # the step under way, while the advice is on its way
        self._started = time.perf_counter()

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("hep-advisor", id="status")
        panes = {"overview": OverviewPane, "data": DataPane, "calibrate": CalibratePane,
                 "scaling": ScalingPane, "advice": AdvicePane, "whatif": WhatIfPane}
        with TabbedContent(id="tabs"):
            for i, (tab, title) in enumerate(self.TABS, 1):
                with TabPane(f"{i} {title}", id=tab):
                    pane = panes[tab](id=f"{tab}-pane")
                    # The hidden tabs mount after the first frame; the Calibrate tab at once,
                    # to receive the progress of the read tests.
                    yield pane if tab in ("overview", "calibrate") else Lazy(pane)
        yield Footer()

    _drawn = threading.Event()  # set once an advice is on screen (per instance: on_mount)

    def on_mount(self) -> None:
        self._drawn = threading.Event()
        if self.initial is not None:  # the cached conclusions, on the first screen
            from hep_advisor.render.scaling import scaling_data

            self.post_message(AdviceReady(self.initial, scaling_data(self.initial.advice),
                                          0.0, False))
        # Draw the first frame before the worker starts importing the core (which holds the
        # GIL for a second: scikit-learn, SciPy, uproot).
        self.call_after_refresh(self.start_load, False)
        self.set_interval(1.0, self._show_waiting)  # the time left counts down between steps

    @property
    def advice(self) -> Advice | None:
        return self.loaded.advice if self.loaded else None

    @property
    def active_tab(self) -> str:
        return str(self.query_one(TabbedContent).active)

    # -- loading -------------------------------------------------------------------------------
    def start_load(self, recalibrate: bool) -> None:
        self._cancel = threading.Event()
        self.loading, self.cancelled, self.error = True, False, None
        self.countdown = Countdown(self.budget_s)
        self._step = "Probing this machine and the files"
        self._show_waiting()
        self.query_one(CalibratePane).start(self.loader.description, self.budget_s, recalibrate)
        self._status(Content.assemble(("Loading ", "bold"), self.loader.description,
                                      ("  ·  Esc cancels the read tests", "$text-muted")))
        self.refresh_bindings()
        self._load(recalibrate)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load",
          description="advise: probe, calibrate, fit")
    def _load(self, recalibrate: bool) -> None:
        from hep_advisor.render.scaling import scaling_data

        t0 = time.perf_counter()
        cancel = self._cancel
        quick = getattr(self.loader, "quick", None)
        if (quick is not None and not recalibrate and self.loaded is None
                and self.initial is None):
            # the cached conclusions first (no model libraries needed), the full advice after
            try:
                early = quick()
            except Exception:  # the full load below says what is wrong, if anything
                early = None
            if early is not None:
                self._drawn.clear()
                self.post_message(AdviceReady(early, scaling_data(early.advice),
                                              time.perf_counter() - t0, False))
                # let the screen draw it before the model's imports take the GIL
                self._drawn.wait(1.0)
        from hep_advisor.tui.source import takes_on_probed

        extra = {"on_probed": self._probed} if takes_on_probed(self.loader) else {}
        try:
            loaded = self.loader(self._progress, cancel, recalibrate, **extra)
        except Exception as exc:  # any failure is shown, never a traceback over the UI
            self.post_message(LoadFailed(_one_line(exc)))
            return
        try:
            scaling = scaling_data(loaded.advice)
        except (ValueError, ArithmeticError):
            scaling = None
        self.post_message(AdviceReady(loaded, scaling, time.perf_counter() - t0,
                                      cancel.is_set()))

    def _progress(self, event: ProgressEvent) -> None:
        self.post_message(CalibrationProgress(event))

    def _probed(self, probed: Probed) -> None:
        self.post_message(ProbeReady(probed))

    @on(ProbeReady)
    def _on_probed(self, message: ProbeReady) -> None:
        self.probed = message.probed
        if self.loaded is not None:  # an advice of these files is shown already
            return
        self.show_safely("overview-pane",
                         partial(self.query_one(OverviewPane).show_probed, message.probed))
        for pane in self.query(DataPane):  # (mounted lazily: it shows them when it mounts)
            self.show_safely(pane.id or "", partial(pane.show_probed, message.probed))

    def _show_waiting(self) -> None:
        """The Overview, until the first advice: the step under way and when the advice
        comes."""
        if self.loading and self.loaded is None and not self._cancel.is_set():
            self.query_one(OverviewPane).show_waiting(self._step, self.countdown.text())

    @on(CalibrationProgress)
    def _on_progress(self, message: CalibrationProgress) -> None:
        ev = message.event
        self.query_one(CalibratePane).progress(ev)
        if ev.test != "probe":
            self.countdown.update(ev.left_s)
        if not self._cancel.is_set():
            name = TEST_LABELS.get(ev.test, ev.test)
            what = "Probing" if ev.test == "probe" else "Calibrating"
            self._status(Content.assemble((f"{what} ", "bold"), (name, "bold"),
                                          f": {ev.figure or ev.message}",
                                          ("  ·  Esc cancels", "$text-muted")))
            self._step = _step_text(ev, name)
            self._show_waiting()

    @on(AdviceReady)
    def _on_ready(self, message: AdviceReady) -> None:
        first = self.loaded is None
        self.loaded, self.scaling = message.loaded, message.scaling
        self.loading, self.cancelled = False, message.cancelled
        self.load_count += 1
        loaded, scaling = message.loaded, message.scaling
        # (a lazily mounted tab not there yet shows the advice when it mounts)
        panes = [*self.query(OverviewPane), *self.query(DataPane), *self.query(ScalingPane),
                 *self.query(AdvicePane), *self.query(WhatIfPane)]
        for pane in panes:
            self.show_safely(pane.id or "", partial(pane.show, loaded, scaling))
        from hep_advisor.tui.cluster_tab import show_cluster_tab  # ``--dask``: a seventh tab

        self.show_safely("cluster", partial(show_cluster_tab, self, loaded))
        from hep_advisor.tui.trace import show_trace_tab  # ``--trace FILE``: the Trace tab

        self.show_safely("trace", partial(show_trace_tab, self, loaded))
        self.show_safely("calibrate", partial(self.query_one(CalibratePane).show, loaded, scaling,
                                        cancelled=message.cancelled,
                                        elapsed_s=message.elapsed_s,
                                        can_recalibrate=self.loader.can_recalibrate))
        self._status(self._ready_status())
        self.refresh_bindings()
        if (not first and message.loaded.cached_age_s is None) or self.active_tab == "calibrate":
            self.notify("The advice is up to date: see the Overview (1) and Advice (5).",
                        title="Advice ready", timeout=4)
        self.call_after_refresh(self._drawn.set)
        if first and self.ready_callback is not None:
            callback = self.ready_callback
            self.call_after_refresh(callback, self)

    def show_safely(self, where: str, show: Callable[[], object]) -> None:
        """One tab shows the advice; a failure there is said, and the other tabs still work."""
        try:
            show()
        except Exception as exc:  # a surprise in the data must not take the whole app down
            self.log.error(f"{where}: {exc!r}")
            self.notify(f"{where.removesuffix('-pane')}: {_one_line(exc)}",
                        title="Could not show this tab", severity="error", timeout=8)

    @on(LoadFailed)
    def _on_failed(self, message: LoadFailed) -> None:
        self.loading, self.error = False, message.error
        self.query_one(CalibratePane).failed(message.error)
        if self.loaded is None:
            self.query_one(OverviewPane).show_message(f"Could not advise: {message.error}",
                                                      "bold $text-error")
        self._status(Content.styled(f"Could not advise: {message.error}", "bold $text-error"))
        self.notify(message.error, title="Could not advise", severity="error", timeout=8)
        self.refresh_bindings()

    def _ready_status(self) -> Content:
        from hep_advisor.pipeline.cache import describe_age

        a = self.loaded.advice if self.loaded else None
        if a is None:
            return Content("")
        parts: list[Content | tuple[str, str] | str] = [(a.label, "bold")]
        if self.loaded and self.loaded.cached_age_s is not None:
            parts.append(f" · calibrated {describe_age(self.loaded.cached_age_s)} (cached)")
        elif a.calibration is not None and a.calibration.partial:
            parts.append((" · partial calibration", "$text-warning"))
        elif a.calibration is not None:
            parts.append(" · calibrated just now")
        c = a.counts()
        n = len(a.recommendations)
        parts.append(f" · {n} recommendation{'s' if n != 1 else ''}")
        if c["critical"]:
            parts.append((f", {c['critical']} critical", "$text-error"))
        return Content.assemble(*parts)

    def _status(self, content: Content) -> None:
        self.query_one("#status", Static).update(content)

    # -- actions -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return (self.loading and not self._cancel.is_set()) or \
                isinstance(self.focused, Input)
        if action == "recalibrate":
            return None if self.loading or not self.loader.can_recalibrate else True
        if action == "export":
            return None if self.loaded is None else True
        return True

    #: What gets the focus when a tab is shown by its number (never a text field, so that
    #: the number keys keep switching tabs).
    FOCUS: ClassVar[dict[str, str]] = {
        "overview": "#overview-pane", "data": "#branches", "calibrate": "#calibrate-pane",
        "scaling": "#tabs Tabs", "advice": "#rec-list", "whatif": "#wi-merge",
        "cluster": "#cluster-pane", "trace": "#trace-pane"}

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    def action_show_nth(self, n: int) -> None:
        """The ``n``-th tab, if there is one (7 and 8: the Cluster and Trace tabs)."""
        panes = list(self.query_one(TabbedContent).query(TabPane))
        if 0 < n <= len(panes) and panes[n - 1].id:
            self.action_show_tab(str(panes[n - 1].id))

    def _focus_tab(self, tab: str) -> None:
        with contextlib.suppress(NoMatches, KeyError):
            self.query_one(self.FOCUS[tab]).focus()

    def action_cancel(self) -> None:
        if not self.loading or self._cancel.is_set():
            if isinstance(self.focused, Input):  # Esc leaves a text field
                self._focus_tab(self.active_tab)
            return
        self._cancel.set()
        self.query_one(CalibratePane).cancelling()
        self._status(Content.styled("Cancelling the read tests…", "bold $text-warning"))
        self.refresh_bindings()

    def action_recalibrate(self) -> None:
        if self.loading:
            self.notify("The read tests are already running (Esc cancels them).")
            return
        if not self.loader.can_recalibrate:
            self.notify("This advice was given as it is: there is nothing to re-run.",
                        severity="warning")
            return
        self.action_show_tab("calibrate")
        self.start_load(recalibrate=True)

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.current_theme.dark else DARK

    def action_help(self) -> None:
        from hep_advisor.tui.screens import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_copy_command(self) -> None:
        self.action_show_tab("advice")
        self.query_one(AdvicePane).action_copy()

    def action_export(self, fmt: str = "md") -> None:
        from hep_advisor.tui.export import default_path
        from hep_advisor.tui.screens import ExportScreen

        if self.loaded is None:
            self.notify("Nothing to export yet: the advice is still loading.")
            return
        advice = self.loaded.advice

        def chosen(path: Path | None) -> None:
            if path is not None:
                self._export(advice, path)

        self.push_screen(ExportScreen(default_path(advice, self.export_dir, fmt)), chosen)

    @work(thread=True, exit_on_error=False, group="export", description="export the report")
    def _export(self, advice: Advice, path: Path) -> None:
        from hep_advisor.render.formats import by_suffix
        from hep_advisor.tui.export import write_report

        try:
            written = write_report(advice, path, by_suffix(path.suffix).name)  # type: ignore[union-attr]
        except (OSError, ImportError, ValueError) as exc:
            self.app.call_from_thread(self.notify, _one_line(exc), title="Export failed",
                                      severity="error")
            return
        self.app.call_from_thread(self.notify, str(written), title="Report written")

    async def action_quit(self) -> None:
        self._cancel.set()  # a calibration under way stops at its next step
        self.exit()


def _step_text(ev: ProgressEvent, name: str) -> str:
    """The step under way, as the Overview says it while the advice is on its way."""
    if ev.test != "probe":
        return f"Calibrating: {name}, {ev.message}"
    said = ev.message[:1].upper() + ev.message[1:]
    if ev.fraction >= 1.0:  # "Probed: 6 files, 2.0 MB", "Cached calibration reused: ..."
        return said + (f": {ev.figure}" if ev.figure else "")
    if ev.message.startswith(("probing", "writing")):
        return said
    return f"Probing the files: {Path(ev.message).name} ({ev.fraction:.0%})"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def make_app(paths: list[str] | tuple[str, ...] | None = None, *, advice: Advice | None = None,
             budget_s: float = 60.0, engine: str = "uproot",
             branches: list[str] | tuple[str, ...] | None = None, analysis: str | None = None,
             loader: Loader | None = None, export_dir: Path | None = None,
             on_ready: Callable[[AdvisorApp], Any] | None = None,
             theme: str | None = None,
             uses: list[str] | tuple[str, ...] | None = None,
             dask: str | None = None, trace: Any = None, reader: Any = None) -> AdvisorApp:
    """The app, shared by the CLI and the tests: on ``paths`` (``None``: the demo's small
    files), on an ``advice`` already made, or on any ``loader``; ``trace``: a saved trace of
    the user's program (``hep_advisor.document.report.read_trace``), shown in a Trace tab."""
    from hep_advisor.tui.source import AdviceSource, FixedAdvice

    initial = None
    if loader is not None:
        chosen: Loader = loader
    elif advice is not None:
        chosen = FixedAdvice(advice, description=advice.label)
    else:
        chosen = AdviceSource(paths=tuple(paths) if paths else None, budget_s=budget_s,
                              engine=engine, branches=tuple(branches) if branches else None,
                              analysis=analysis, uses=tuple(uses) if uses else None,
                              dask=dask, trace=trace, reader=reader)
        # a cached advice of these files is read before the app starts (a fraction of a
        # second, no model libraries), so the first screen shows it
        try:
            initial = chosen.quick()
        except Exception:  # the full load says what is wrong, if anything
            initial = None
    return AdvisorApp(chosen, budget_s=None if advice is not None else budget_s,
                      export_dir=export_dir, on_ready=on_ready, theme=theme, initial=initial)
