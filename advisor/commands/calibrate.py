"""``hep-advisor calibrate``: the probes, then the budgeted read tests."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..cli import EXIT_INTERRUPTED, EXIT_NO_DATA, EXIT_OK
from ..render.labels import TEST_LABELS
from .common import demo_paths, dump_json, err_console, print_errors

if TYPE_CHECKING:
    from models.scenarios import ModelSummary
    from probes.readtests.results import Calibration
    from probes.results import DatasetProfile, SiteProfile



@contextmanager
def calibration_progress(enabled: bool) -> Iterator[object]:
    """Rich bars, one per test, and each figure printed as it is measured."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from probes.readtests.runner import ProgressEvent

    with Progress(TextColumn("{task.description:<16}"), BarColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[message]}", style="dim"), console=err_console,
                  transient=True) as bar:
        tasks = {t: bar.add_task(label, total=1.0, message="", visible=False)
                 for t, label in TEST_LABELS.items()}

        def update(ev: ProgressEvent) -> None:
            task = tasks.get(ev.test)
            if task is None:
                return
            bar.update(task, completed=ev.fraction, message=ev.message, visible=True)
            if ev.figure:
                bar.console.print(f"  [bold]{TEST_LABELS[ev.test]}[/]: {ev.message} "
                                  f"→ {ev.figure}", highlight=False)

        yield update


def model_summary(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                  workers: tuple[int, ...]) -> ModelSummary | None:
    """The fitted model and its predictions for 1 .. 2 x the logical cores (and the workers
    asked for), or ``None`` with a one-line note when the calibration cannot be fitted."""
    from models.scenarios import calibrated_baseline, summarize

    try:
        model, baseline = calibrated_baseline(cal, dataset, site)
    except ValueError as exc:
        err_console.print(f"hep-advisor: no model: {exc}")
        return None
    logical = site.cpu.logical_cores or 1
    counts = sorted({*range(1, 2 * logical + 1), *workers})
    return summarize(model, baseline, counts)


def run_calibrate(args: argparse.Namespace) -> int:
    from probes import probe_dataset, probe_site, storage_paths
    from probes.readtests.calibrate import calibrate

    from ..document import document_json, make_document

    paths = list(args.paths) or demo_paths()
    dataset = probe_dataset(paths, sample=args.sample or None)
    print_errors(dataset.errors)
    site = probe_site(storage_paths(paths, dataset.file_paths))
    if not dataset.usable:
        err_console.print("hep-advisor: no usable ROOT file: nothing to calibrate")
        return EXIT_NO_DATA
    cancel = threading.Event()
    with calibration_progress(not args.json) as update:
        cal = calibrate(dataset, budget_s=args.budget, workers=args.workers, engine=args.engine,
                        branches=args.branches, analysis=args.analysis,
                        progress=update,  # type: ignore[arg-type]
                        cancel=cancel)
    summary = model_summary(cal, dataset, site, args.workers)
    doc = make_document("calibrate", site, dataset, cal, summary)
    if args.json:
        dump_json(document_json(doc))
    else:
        from rich.console import Console

        from ..render.calibration_view import calibration_view
        from ..render.probe_view import dataset_view, site_view

        console = Console()
        console.print(site_view(site))
        console.print(dataset_view(dataset, show_errors=False))
        console.print(calibration_view(cal))
        if summary is not None:
            from ..render.model_view import model_view

            console.print(model_view(summary))
    if cal.partial:
        err_console.print("hep-advisor: calibration cancelled; partial results kept "
                          "(marked partial)")
        return EXIT_INTERRUPTED
    return EXIT_OK
