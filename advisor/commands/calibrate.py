"""``hep-advisor calibrate``: the probes, the budgeted read tests and the fit
(``hep_advisor.pipeline.advise.calibrate_paths``), shown as they run and then as tables or JSON."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hep_advisor.render.labels import TEST_LABELS

if TYPE_CHECKING:
    from rich.console import RenderableType as Renderable

    from hep_advisor.models.reader_baseline import ReaderBaseline
from hep_advisor.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_DATA, EXIT_OK
from hep_advisor.commands.console import err_console


class BudgetClock:
    """The time left of the calibration's budget, from the read tests' ``ProgressEvent.left_s``
    (not the share of tests done): between events it counts down with the clock, and each event
    sets it right again.  A calibration that starts after another (the demo report calibrates
    one dataset after the other) is seen as ``left_s`` going up, and starts the clock anew.
    ``budget_s``: each calibration's budget, when known (else the first ``left_s`` seen)."""

    def __init__(self, budget_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.hint = budget_s
        self.clock = clock
        self.total: float | None = None
        self.end: float | None = None
        self._last: float | None = None

    def update(self, left_s: float | None) -> None:
        if left_s is None:
            return
        if self._last is None or left_s > self._last + 0.5:  # a (new) calibration starts
            self.total = self.hint if self.hint is not None and self.hint >= left_s else left_s
        self._last = left_s
        self.end = self.clock() + left_s

    def left(self) -> float | None:
        """Seconds of the budget left now (``None`` before the first event)."""
        return None if self.end is None else max(0.0, self.end - self.clock())

    def spent(self) -> float:
        """The share of the budget spent (0..1)."""
        left, total = self.left(), self.total
        return 0.0 if left is None or not total else min(1.0, max(0.0, 1.0 - left / total))

    def text(self) -> str:
        left = self.left()
        if left is None:
            return ""
        return f"{left:.0f} s of the budget left" if left >= 1 else "budget spent"


@contextmanager
def calibration_progress(enabled: bool, budget_s: float | None = None) -> Iterator[object]:
    """One bar: the time actually left of the budget (``ProgressEvent.left_s``, counting down
    between events), the test under way and its step; each figure printed as it is measured.
    ``budget_s``: each calibration's budget, when known."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    from rich.console import RenderableType
    from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    from hep_advisor.probes.readtests.runner import ProgressEvent

    budget = BudgetClock(budget_s)

    class LeftBar(BarColumn):
        def render(self, task: Task) -> ProgressBar:
            return ProgressBar(total=1.0, completed=budget.spent(), width=self.bar_width,
                               style=self.style, complete_style=self.complete_style,
                               finished_style=self.finished_style,
                               pulse_style=self.pulse_style, pulse=budget.left() is None)

    class LeftText(ProgressColumn):
        def render(self, task: Task) -> RenderableType:
            return Text(budget.text(), style="bold")

    with Progress(TextColumn("{task.description:<16}"), LeftBar(), LeftText(),
                  TextColumn("{task.fields[message]}", style="dim"), console=err_console,
                  transient=True) as bar:
        task = bar.add_task("calibrating", total=None, message="")

        def update(ev: ProgressEvent) -> None:
            label = TEST_LABELS.get(ev.test)
            if label is None:
                return
            budget.update(ev.left_s)
            bar.update(task, description=label, message=ev.message)
            if ev.figure:
                bar.console.print(f"  [bold]{label}[/]: {ev.message} → {ev.figure}",
                                  highlight=False)

        yield update


def run_calibrate(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import demo_paths, dump_json, print_errors
    from hep_advisor.document.report import document_json, make_document
    from hep_advisor.pipeline.advise import NoUsableData, calibrate_paths

    paths = list(args.paths) or demo_paths()
    cancel = threading.Event()
    try:
        with calibration_progress(not args.json, args.budget) as update:
            result = calibrate_paths(paths, budget_s=args.budget, workers=args.workers,
                                     engine=args.engine, branches=args.branches,
                                     uses=args.uses,
                                     analysis=args.analysis, sample=args.sample or None,
                                     progress=update,  # type: ignore[arg-type]
                                     cancel=cancel,
                                     on_probed=lambda dataset: print_errors(dataset.errors),
                                     dask=args.dask, reader=args.reader)
    except NoUsableData:
        err_console.print("hep-advisor: no usable ROOT file: nothing to calibrate")
        return EXIT_NO_DATA
    for note in result.notes:
        err_console.print(f"hep-advisor: {note}")
    site, dataset, cal, summary = result.site, result.dataset, result.calibration, result.model
    doc = make_document("calibrate", site, dataset, cal, summary)
    if result.cluster is not None:
        from dataclasses import replace

        doc = replace(doc, cluster=result.cluster)
        if result.cluster.error:
            from hep_advisor.commands.console import print_error

            print_error(f"--dask {args.dask}: {result.cluster.error}")
    if result.reader_baseline is not None:
        from dataclasses import replace as with_field

        doc = with_field(doc, reader_baseline=result.reader_baseline)
    if args.json:
        dump_json(document_json(doc))
    else:
        from rich.console import Console

        from hep_advisor.render.calibration_view import calibration_view
        from hep_advisor.render.probe_view import dataset_view, site_view

        console = Console()
        console.print(site_view(site))
        console.print(dataset_view(dataset, show_errors=False))
        console.print(calibration_view(cal))
        if summary is not None:
            from hep_advisor.render.model_view import model_view

            console.print(model_view(summary))
        if result.cluster is not None and result.cluster.error is None:
            from hep_advisor.render.cluster_view import cluster_view

            console.print(cluster_view(result.cluster))
        if result.reader_baseline is not None:
            console.print(reader_baseline_view(result.reader_baseline))
    if cal.partial:
        err_console.print("hep-advisor: calibration cancelled; partial results kept "
                          "(marked partial)")
        return EXIT_INTERRUPTED
    if result.cluster is not None and result.cluster.error:
        return EXIT_FAILED  # --dask could not be used (said above); the rest was written
    return EXIT_OK


def reader_baseline_view(rb: ReaderBaseline, label: str | None = None) -> Renderable:
    """``--reader``: the baseline as the program reads, replayed, beside the calibration's
    measurement of the same reader."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from hep_advisor.pipeline.derive import opening
    from hep_advisor.render import fmt

    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("reader", f"{rb.description}  [dim]({rb.reader})[/]")
    t.add_row("predicted, 1 worker, cold",
              f"{fmt.num(rb.events_per_s, 0)} events/s  ({fmt.num(rb.compressed_mb_per_s, 1)} "
              f"MB/s compressed; replayed I/O {fmt.num(rb.io_s, 2)} s + CPU "
              f"{fmt.num(rb.cpu_s, 2)} s for {fmt.num(rb.entries, 0)} events, files opened)")
    t.add_row("replay's device", f"{fmt.num(rb.device_mb_per_s, 1)} MB/s, access "
              f"{fmt.num(rb.access_ms, 2)} ms, read-ahead {rb.read_ahead_kb} kB: "
              f"{fmt.num(rb.device_requests, 0)} device reads, {fmt.num(rb.seeks, 0)} seeks")
    if rb.measured_events_per_s is not None:
        t.add_row(f"measured ({rb.measured_cache or 'unknown cache'})",
                  f"{fmt.num(rb.measured_events_per_s, 0)} events/s by the calibration's event "
                  f"loop with this reader ({opening(rb)}); predicted / measured "
                  f"{rb.ratio:.2f}" if rb.ratio is not None else "")
    else:
        t.add_row("measured", Text("not measured with this reader (a cached or other "
                                   "calibration)", style="yellow"))
    if rb.measured_baseline_events_per_s is not None:
        t.add_row("from measurements alone", f"{fmt.num(rb.measured_baseline_events_per_s, 0)} "
                  "events/s (that cold loop, plus the cold open per file)")
    t.add_row("CPU term", "the reader's warm loop on these files (measured)"
              if rb.cpu_source == "measured" else "the fitted model's CPU terms")
    for line in rb.how:
        t.add_row("deduced", Text(line, style="dim"))
    for line in rb.notes:
        t.add_row("note", Text(line, style="yellow"))
    title = "baseline as your program reads" + (f": {label}" if label else "")
    return Panel(t, title=title, title_align="left")
