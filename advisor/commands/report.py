"""``hep-advisor report``: advise on one dataset (or the demo data) and show or write the report.

Thin: parse, call ``hep_advisor.pipeline.advise``, render.  Progress bars go to stderr (when it is a
terminal), so that ``--format json`` on stdout is the JSON document and nothing else.  Rich
and the core are imported when the command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hep_advisor.commands.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_DATA,
    EXIT_OK,
    EXIT_USAGE,
    add_dataset_arguments,
    add_trace_argument,
)
from hep_advisor.pipeline.fileio import write_atomically
from hep_advisor.render.formats import FORMATS, render_report

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Report
    from hep_advisor.probes.readtests.runner import ProgressEvent

EXIT_WRITE = EXIT_FAILED  # the report could not be written to -o FILE
#: Width of the plain text written with ``-o FILE --format text``.
TEXT_WIDTH = 100


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    add_dataset_arguments(p, "ROOT files, directories or globs: one dataset (default: the "
                          "three demo datasets, created on first use)",
                          "time for the read tests, in seconds, shared by the datasets "
                          "(default 60); a cached calibration of unchanged files costs none")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="; ".join(f"{f.name}: {f.label}" for f in FORMATS.values())
                   + " (default: text, the terminal view)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE instead of stdout")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="every recommendation's full card (evidence, assumptions, every "
                   "command), the predicted scaling, the site and the data; by default the "
                   "text and Markdown reports are short (`hep-advisor explain CODE` prints one "
                   "card)")
    p.add_argument("--recalibrate", action="store_true",
                   help="run the read tests again even if a cached calibration matches")
    p.add_argument("--no-cache", action="store_true",
                   help="neither reuse nor store a calibration")
    add_trace_argument(p)


@contextlib.contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl-C sets ``cancel`` (the read tests stop and keep what they measured);
    a second one interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    from hep_advisor.commands.console import err_console

    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err_console.print("hep-advisor: stopping after the current measurement "
                          "(Ctrl-C again to abort)", highlight=False)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _progress(enabled: bool, budget_s: float | None = None
              ) -> Iterator[Callable[[ProgressEvent], None] | None]:
    """The calibration's bar (the time left of each calibration's ``budget_s``), and a line
    when a dataset's probe starts or its cached calibration is reused."""
    from hep_advisor.commands.calibrate import calibration_progress
    from hep_advisor.commands.console import err_console

    with calibration_progress(enabled, budget_s) as update:
        if update is None:
            yield None
            return
        bars: Callable[[ProgressEvent], None] = update  # type: ignore[assignment]

        def on_event(ev: ProgressEvent) -> None:
            if ev.test == "probe":
                if ev.figure:
                    err_console.print(f"  [bold]probe[/]: {ev.message} → {ev.figure}",
                                      highlight=False)
                return
            bars(ev)

        yield on_event


def _budget_each(args: argparse.Namespace) -> float:
    """Each calibration's budget: the demo report shares ``--budget`` between its datasets."""
    if args.paths:
        return float(args.budget)
    from hep_advisor.demo.report import DEMO_DATASETS

    return float(args.budget) / len(DEMO_DATASETS)


def _compute(args: argparse.Namespace, cancel: threading.Event,
             progress: Callable[[ProgressEvent], None] | None) -> Report:
    from hep_advisor.demo.report import demo_report
    from hep_advisor.pipeline.advise import advise

    cache = not args.no_cache
    if not args.paths:
        return demo_report(args.budget, progress=progress, cancel=cancel, cache=cache,
                           recalibrate=args.recalibrate, engine=args.engine)
    advice = advise(args.paths, budget_s=args.budget, engine=args.engine,
                    analysis=args.analysis, progress=progress, branches=args.branches,
                    cancel=cancel, cache=cache, recalibrate=args.recalibrate, uses=args.uses,
                    dask=args.dask, trace=getattr(args, "trace_loaded", None),
                    reader=args.reader)
    return advice.report()


def command_line(args: argparse.Namespace) -> str:
    """The command line as typed (for the HTML page's header)."""
    import shlex

    return shlex.join(["hep-advisor", *getattr(args, "argv", sys.argv[1:])])


def _output(report: Report, args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import err_console, print_error_line

    verbose = bool(getattr(args, "verbose", False))
    if args.output:
        path = Path(args.output)
        try:
            write_atomically(path, render_report(report, args.format, width=TEXT_WIDTH,
                                                 verbose=verbose, command=command_line(args)))
        except OSError as exc:
            print_error_line(str(path), f"cannot write: {exc.strerror or exc}")
            return EXIT_WRITE
        err_console.print(f"wrote {path}", highlight=False, soft_wrap=True)
        return EXIT_OK
    if args.format == "text":
        from rich.console import Console

        from hep_advisor.render.hooks import rich

        Console().print(rich(report, verbose=verbose))
    else:
        sys.stdout.write(render_report(report, args.format, verbose=verbose,
                                       command=command_line(args)))
        sys.stdout.flush()
    return EXIT_OK


def load_trace(path: str) -> Any:
    """The trace saved at ``path`` (``hep-advisor trace --json -o FILE``), or ``None`` after a
    one-line error naming the file."""
    from hep_advisor.commands.console import print_error
    from hep_advisor.document.report import DocumentError, read_trace

    try:
        return read_trace(path)
    except DocumentError as exc:
        print_error(str(exc))
        return None


def run_report(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import err_console, print_error, print_errors
    from hep_advisor.pipeline.advise import NoUsableData

    if not args.paths and (args.branches or args.analysis or args.uses or args.dask
                           or args.reader):
        err_console.print("hep-advisor: --branches, --uses, --analysis, --reader and --dask "
                          "need PATHS "
                          "(the demo report runs its own event loop)", highlight=False)
        return EXIT_USAGE
    if args.trace is not None:
        if not args.paths:
            print_error("--trace needs PATHS: the files the traced program reads (the demo "
                        "report runs its own event loop)")
            return EXIT_USAGE
        args.trace_loaded = load_trace(args.trace)
        if args.trace_loaded is None:
            return EXIT_USAGE
    cancel = threading.Event()
    try:
        with _ctrl_c_cancels(cancel), _progress(sys.stderr.isatty(),
                                                _budget_each(args)) as progress:
            report = _compute(args, cancel, progress)
    except NoUsableData as exc:
        print_error(str(exc))
        return EXIT_NO_DATA
    for a in report.advice:
        print_errors(a.dataset.errors)
    if report.cluster is not None and report.cluster.error:
        print_error(f"--dask {args.dask}: {report.cluster.error}")
    code = _output(report, args)
    if cancel.is_set():  # Ctrl-C (or a cancelled read test) during this run
        err_console.print("hep-advisor: interrupted; the report rests on partial read tests "
                          "(marked so)", highlight=False)
        return EXIT_INTERRUPTED
    if code == EXIT_OK and report.cluster is not None and report.cluster.error:
        return EXIT_FAILED  # --dask could not be used (said above); the report was written
    return code
