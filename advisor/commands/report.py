"""``hep-advisor report``: advise on one dataset (or the demo data) and show or write the report.

Thin: parse, call ``advisor.core``, render.  Progress bars go to stderr (when it is a
terminal), so that ``--format json`` on stdout is the JSON document and nothing else.  Rich
and the core are imported when the command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli import EXIT_INTERRUPTED, EXIT_NO_DATA, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from probes.readtests.runner import ProgressEvent

    from ..advice import Report

FORMATS = ("text", "md", "json", "html")
EXIT_WRITE = 1  # the report could not be written to -o FILE
#: Width of the plain text written with ``-o FILE --format text``.
TEXT_WIDTH = 100


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    from ..cli import _budget, _names

    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="ROOT files, directories or globs: one dataset (default: the three "
                   "demo datasets, created on first use)")
    p.add_argument("--budget", type=_budget, default=60.0, metavar="S",
                   help="time for the read tests, in seconds, shared by the datasets "
                   "(default 60); a cached calibration of unchanged files costs none")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (the terminal view, default), md (Markdown), json (the "
                   "versioned document) or html (a self-contained page with the scaling plot)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE instead of stdout")
    p.add_argument("--engine", choices=["uproot", "root"], default="uproot",
                   help="read with uproot (default) or ROOT")
    p.add_argument("--branches", type=_names, default=None, metavar="A,B,...",
                   help="branches the analysis reads (default: all)")
    p.add_argument("--analysis", default=None, metavar="MODULE:FUNCTION",
                   help="time your own analysis function (called with each chunk of arrays)")
    p.add_argument("--recalibrate", action="store_true",
                   help="run the read tests again even if a cached calibration matches")
    p.add_argument("--no-cache", action="store_true",
                   help="neither reuse nor store a calibration")


@contextlib.contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl-C sets ``cancel`` (the read tests stop and keep what they measured);
    a second one interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    from .common import err_console

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
def _progress(enabled: bool) -> Iterator[Callable[[ProgressEvent], None] | None]:
    """The calibration's bars, and a line when a dataset's probe starts or its cached
    calibration is reused."""
    from .calibrate import calibration_progress
    from .common import err_console

    with calibration_progress(enabled) as update:
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


def _compute(args: argparse.Namespace, cancel: threading.Event,
             progress: Callable[[ProgressEvent], None] | None) -> Report:
    from ..core import advise, demo_report

    cache = not args.no_cache
    if not args.paths:
        return demo_report(args.budget, progress=progress, cancel=cancel, cache=cache,
                           recalibrate=args.recalibrate, engine=args.engine)
    advice = advise(args.paths, budget_s=args.budget, engine=args.engine,
                    analysis=args.analysis, progress=progress, branches=args.branches,
                    cancel=cancel, cache=cache, recalibrate=args.recalibrate)
    return advice.report()


def render(report: Report, fmt: str, for_file: bool = False) -> str:
    """The report as text in ``fmt`` (``text`` for a file: plain, no ANSI codes)."""
    if fmt == "json":
        import json

        return json.dumps(report.to_json(), indent=2) + "\n"
    if fmt == "md":
        from ..render.markdown import report_markdown

        return report_markdown(report)
    if fmt == "html":
        from ..render.html import report_html

        return report_html(report)
    import io

    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=TEXT_WIDTH if for_file else None, force_terminal=False,
                      color_system=None, highlight=False, emoji=False, legacy_windows=False)
    console.print(report)
    return buf.getvalue()


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory, renamed into
    place: a reader never sees half a report, and a failure leaves no temporary file."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _output(report: Report, args: argparse.Namespace) -> int:
    from .common import err_console, print_error_line

    if args.output:
        path = Path(args.output)
        try:
            write_atomically(path, render(report, args.format, for_file=True))
        except OSError as exc:
            print_error_line(str(path), f"cannot write: {exc.strerror or exc}")
            return EXIT_WRITE
        err_console.print(f"wrote {path}", highlight=False, soft_wrap=True)
        return EXIT_OK
    if args.format == "text":
        from rich.console import Console

        Console().print(report)
    else:
        sys.stdout.write(render(report, args.format))
        sys.stdout.flush()
    return EXIT_OK


def run_report(args: argparse.Namespace) -> int:
    from ..core import NoUsableData
    from .common import err_console, print_errors

    if not args.paths and (args.branches or args.analysis):
        err_console.print("hep-advisor: --branches and --analysis need PATHS (the demo "
                          "report runs its own event loop)", highlight=False)
        return EXIT_USAGE
    cancel = threading.Event()
    try:
        with _ctrl_c_cancels(cancel), _progress(sys.stderr.isatty()) as progress:
            report = _compute(args, cancel, progress)
    except NoUsableData as exc:
        from rich.markup import escape

        err_console.print(f"[red]hep-advisor:[/] {escape(str(exc))}", highlight=False,
                          soft_wrap=True, markup=True, emoji=False)
        return EXIT_NO_DATA
    for a in report.advice:
        print_errors(a.dataset.errors)
    code = _output(report, args)
    if cancel.is_set():  # Ctrl-C (or a cancelled read test) during this run
        err_console.print("hep-advisor: interrupted; the report rests on partial read tests "
                          "(marked so)", highlight=False)
        return EXIT_INTERRUPTED
    return code
