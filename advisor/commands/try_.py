"""``hep-advisor try CODE [PATHS]``: a recommendation tried on a sample, predicted against
realised (see :mod:`hep_advisor.pipeline.trial`)."""

from __future__ import annotations

import argparse
import threading
from dataclasses import replace

from hep_advisor.commands.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_DATA,
    EXIT_OK,
    budget_seconds,
    name_list,
    positive_number,
    reader_spec,
)


def add_try_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", metavar="CODE", type=str.upper,
                   help="the recommendation to try: M001 (merge), R001 (rewrite baskets), "
                   "C001 (recompress)")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="ROOT files, directories or globs: one dataset (default: the demo's "
                   "small files)")
    p.add_argument("--budget", type=budget_seconds, default=60.0, metavar="S",
                   help="time for the trial, in seconds (default 60); the sample is sized to "
                   "it. Without a cached calibration of these files, the read tests take as "
                   "long again first")
    p.add_argument("--sample-mb", type=positive_number, default=None, metavar="N",
                   help="sample size in MB instead (files spread over the dataset, or an "
                   "entry range of one file)")
    p.add_argument("--scratch", metavar="DIR", default=None,
                   help="where to write the sample (default: a temporary directory on the "
                   "data's file system where possible); removed afterwards")
    p.add_argument("--branches", type=name_list, default=None, metavar="A,B,...",
                   help="branches the analysis reads (default: every branch)")
    p.add_argument("--analysis", default=None, metavar="MODULE:FUNCTION",
                   help="time your own analysis function (called with each chunk of arrays)")
    p.add_argument("--reader", type=reader_spec, default=None, metavar="SPEC",
                   help="how your program reads (as report's --reader: a reader spec or a "
                   "trace JSON file): the sample is timed with it, and the advice it is "
                   "tried against is for it (default: your engine's default reader, "
                   "assumed: uproot.iterate)")
    p.add_argument("--json", action="store_true", help="print the JSON document on stdout")


def run_try(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import demo_paths, dump_json, err_console, print_error
    from hep_advisor.commands.report import _ctrl_c_cancels
    from hep_advisor.pipeline.advise import NoUsableData, advise
    from hep_advisor.pipeline.trial import TrialError, try_recommendation

    paths = list(args.paths) or [p + "/small_files" for p in demo_paths()]
    cancel = threading.Event()
    try:
        with _ctrl_c_cancels(cancel), \
                err_console.status("advice (a cached calibration is reused) ...") as status:
            advice = advise(paths, budget_s=args.budget, analysis=args.analysis,
                            branches=args.branches, cancel=cancel, reader=args.reader)
            if cancel.is_set():
                print_error("interrupted before the trial; nothing was written")
                return EXIT_INTERRUPTED

            def progress(fraction: float, message: str) -> None:
                status.update(f"try {args.code}: {100 * fraction:.0f}%  {message}")

            result = try_recommendation(advice, args.code, budget_s=args.budget,
                                        sample_mb=args.sample_mb, scratch=args.scratch,
                                        analysis=args.analysis, branches=args.branches,
                                        progress=progress, cancel=cancel)
    except NoUsableData as exc:
        print_error(str(exc))
        return EXIT_NO_DATA
    except (TrialError, ValueError) as exc:
        print_error(str(exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        print_error("interrupted; the scratch data were removed")
        return EXIT_INTERRUPTED
    except Exception as exc:  # the user's analysis, a file that cannot be read: one line
        print_error(f"try {args.code}: {type(exc).__name__}: {exc}; the scratch data were "
                    "removed")
        return EXIT_FAILED
    if args.json:
        from hep_advisor.document.report import document_json, make_document

        dump_json(document_json(replace(make_document("try", advice.site, None),
                                        try_=result)))
        return EXIT_OK
    _print(result)
    return EXIT_OK


def _print(r: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from hep_advisor.pipeline.trial import TrialResult

    assert isinstance(r, TrialResult)
    c = Console(highlight=False)
    c.print(f"[bold]{r.code}[/] {r.title}")
    s = r.sample
    c.print(f"sample: {s.files} file(s), {s.bytes / 1e6:,.1f} MB, {s.entries:,} entries "
            f"({s.method}); after the change: {s.outputs} file(s), "
            f"{s.output_bytes / 1e6:,.1f} MB")
    t = Table(box=None)
    for col in ("", "median s", "passes", "events/s", "MB/s", "cache"):
        t.add_column(col)
    for name, x in (("before", r.before), ("after", r.after)):
        t.add_row(name, f"{x.seconds:.3f}", str(len(x.samples_s)), f"{x.events_per_s:,.0f}",
                  f"{x.mb_per_s:,.1f}", x.cache)
    c.print(t)
    c.print(f"predicted {r.predicted_speedup:.2f}x [{r.speedup_low:.2f}-{r.speedup_high:.2f}]"
            f" ({r.scenario})")
    if r.sample_predicted_speedup is not None:
        c.print(f"predicted for the sample {r.sample_predicted_speedup:.2f}x "
                f"[{r.sample_speedup_low:.2f}-{r.sample_speedup_high:.2f}] "
                f"({r.sample_scenario})")
    colour = "green" if r.within_interval else "red"
    c.print(f"[bold {colour}]realised {r.realised_speedup:.2f}x[/] "
            f"({'within' if r.within_interval else 'outside'} the predicted interval)")
    if r.refit:
        after = (f"{r.refit_predicted_speedup:.2f}x [{r.refit_speedup_low:.2f}-"
                 f"{r.refit_speedup_high:.2f}]" if r.refit_predicted_speedup is not None
                 else "no longer recommended")
        kept = ("kept with the cached advice: later `report` and `tui` runs of these files "
                "rank with it" if r.stored else "this run only: not stored")
        c.print(f"refitted with the sample's two points: {r.code} now {after}; ranking "
                f"{', '.join(r.refit_ranking) or '(none)'} ({kept})")
    for n in r.notes:
        c.print(f"[dim]note: {n}[/]")
