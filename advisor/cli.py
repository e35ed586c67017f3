"""``hep-advisor`` command line: parse, call the library, render or dump.

Heavy modules (uproot, Rich, ROOT) are imported inside the commands that need them, so
``hep-advisor --help`` and ``--version`` start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hep_advisor._version import __version__
from hep_advisor.commands.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_dataset_arguments,
    add_json_argument,
    add_sample_argument,
    add_workers_argument,
)


def build_parser() -> argparse.ArgumentParser:
    from hep_advisor.probes.dataset import DEFAULT_SAMPLE

    parser = argparse.ArgumentParser(
        prog="hep-advisor",
        description="Measure a site and its ROOT data, model the analysis' throughput, and "
        "advise what to change.",
    )
    parser.add_argument("--version", action="version", version=f"hep-advisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    from hep_advisor.commands.tui import add_tui_arguments

    t = sub.add_parser(
        "tui",
        help="the interactive advisor (the default in a terminal)",
        description="Open the interactive advisor: the verdict, the data, the read tests "
        "(live, or the cached calibration), predicted scaling, ranked recommendations and "
        "what-ifs. With no PATHS, the demo's small files. `hep-advisor` with no command opens "
        "it too when run in a terminal.",
    )
    add_tui_arguments(t)

    p = sub.add_parser(
        "probe",
        help="inspect the site and a ROOT dataset (metadata only)",
        description="Inspect this machine (cores, memory, storage under the data) and ROOT "
        "files (trees, branches, compression, baskets, clusters, open time). Reads metadata "
        "only and never writes to the data. With no PATHS, probes the built-in demo data "
        "(created on first use).",
    )
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="ROOT files, directories (searched recursively for *.root) or globs")
    add_json_argument(p)
    add_sample_argument(p, f"open at most N files, spread over the list, and extrapolate "
                        f"(default {DEFAULT_SAMPLE}; 0 opens every file)")
    p.add_argument("--branches", type=int, default=0, metavar="K",
                   help="also list the K largest branches of each tree")

    c = sub.add_parser(
        "calibrate",
        help="run short, budgeted read tests on the data",
        description="Probe, then run calibrated read tests on the dataset's own files: cold "
        "sequential reads, a request-size sweep, a concurrency sweep, the per-file open cost, "
        "decompression per algorithm, the event loop and the page-cache rate. Reads only; "
        "leaves nothing behind; Ctrl-C keeps the partial results. With no PATHS, calibrates "
        "the demo data.",
    )
    add_dataset_arguments(c, "ROOT files, directories or globs",
                          "total time for the read tests, in seconds (default 60)")
    add_workers_argument(c, (1, 2, 4), "process counts for the concurrency sweep: 1,2,4, "
                         "1-8 or 1,2,4-8 (default 1,2,4)")
    add_sample_argument(c, "files the probe opens (as for `probe`)")
    add_json_argument(c)

    from hep_advisor.commands.report import add_report_arguments

    r = sub.add_parser(
        "report",
        help="advise: the verdict, ranked recommendations and predicted scaling",
        description="Probe, calibrate (or reuse a cached calibration of unchanged files), fit "
        "the model and report what limits the analysis, what to change (ranked by predicted "
        "speed-up, with evidence and commands) and how it scales, as text, Markdown, JSON or "
        "a self-contained HTML page. With no PATHS, reports on the three demo datasets. "
        "Ctrl-C stops the read tests and reports on what was measured (exit 130).",
    )
    add_report_arguments(r)

    from hep_advisor.commands.explain import add_explain_arguments

    ex = sub.add_parser(
        "explain",
        help="one recommendation's full card, or the model check, from the cached advice",
        description="Print one recommendation's card (its evidence, assumptions and every "
        "command), or with model-check every point the model was checked against and what "
        "each miss touches, from the advice the last `hep-advisor report` of these files "
        "cached. It never calibrates. With no PATHS, the demo datasets.",
    )
    add_explain_arguments(ex)

    from hep_advisor.commands.predict import add_predict_arguments

    pr = sub.add_parser(
        "predict",
        help="predict throughput and what-ifs from a calibration or a site description",
        description="Predict the analysis' aggregate throughput at several worker counts, with "
        "intervals, from a saved calibration (`calibrate --json`, fitted) or from site and "
        "workload descriptions (TOML; see examples/sites/), and what-if scenarios: merged "
        "files, read-ahead, page cache, other devices or layouts, compression, fewer branches, "
        "another site.",
    )
    add_predict_arguments(pr)

    d = sub.add_parser(
        "demo",
        help="write the example datasets",
        description="Write the example datasets: many small files with hundreds "
        "of branches, the same events merged plainly into one file, and a flat 20-branch tree "
        "in ZLIB-1, LZ4, ZSTD-5, LZMA-7 and uncompressed. Without --dir, the default demo in "
        "the cache directory is created if missing and its location printed.",
    )
    d.add_argument("--dir", metavar="DIR", help="write here instead of the cache directory "
                   "(must be new or empty)")
    d.add_argument("--writer", choices=["uproot", "root"], default="uproot",
                   help="write with uproot (default) or with ROOT itself (the `root` extra)")
    d.add_argument("--scale", choices=["default", "tiny"], default="default",
                   help="dataset size (tiny: a few MB, for tests)")
    d.add_argument("--json", action="store_true", help="print the manifest as JSON")

    from hep_advisor.commands.try_ import add_try_arguments

    tr = sub.add_parser(
        "try",
        help="try a recommendation on a sample: predicted against realised speed-up",
        description="Apply a recommendation (M001, R001, C001) to a representative sample of "
        "the files in a scratch directory, time the same read before and after (cold), and "
        "compare the realised speed-up with the predicted one and its interval. The scratch "
        "data are removed whatever happens; the inputs are only read.",
    )
    add_try_arguments(tr)

    from hep_advisor.commands.apply import add_apply_arguments

    ap = sub.add_parser(
        "apply",
        help="apply a layout recommendation into new, verified files",
        description="Merge (M001), rewrite (R001, hadd -O) or recompress (C001) the files into "
        "DEST with ROOT's hadd (or uproot): every output is verified (entries and checksums "
        "of every branch's decompressed data against the inputs') before it is kept; inputs "
        "are never modified; an interrupted run resumes where it stopped.",
    )
    add_apply_arguments(ap)

    from hep_advisor.commands.trace import add_trace_arguments

    tc = sub.add_parser(
        "trace",
        help="run your own program traced: what it read, what that cost, what to change",
        description="Run COMMAND unchanged under strace and report, for each ROOT file it "
        "read, every request mapped onto the file's baskets (basket data, key headers, "
        "metadata), the phases, where the time went, and the one-line reader changes "
        "predicted to help (replayed through a model of the device seen in the trace). "
        "The program's exit code is passed through.",
    )
    add_trace_arguments(tc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    try:
        if args.command == "probe":
            from hep_advisor.commands.probe import run_probe

            return run_probe(args)
        if args.command == "calibrate":
            from hep_advisor.commands.calibrate import run_calibrate

            return run_calibrate(args)
        if args.command == "report":
            from hep_advisor.commands.report import run_report

            return run_report(args)
        if args.command == "explain":
            from hep_advisor.commands.explain import run_explain

            return run_explain(args)
        if args.command == "predict":
            from hep_advisor.commands.predict import run_predict

            return run_predict(args)
        if args.command == "demo":
            from hep_advisor.commands.demo import run_demo

            return run_demo(args)
        if args.command == "try":
            from hep_advisor.commands.try_ import run_try

            return run_try(args)
        if args.command == "apply":
            from hep_advisor.commands.apply import run_apply

            return run_apply(args)
        if args.command == "trace":
            from hep_advisor.commands.trace import run_trace

            return run_trace(args)
        if args.command == "tui" or (args.command is None and sys.stdout.isatty()
                                     and sys.stdin.isatty()):
            from hep_advisor.commands.tui import demo_tui_args, run_tui

            return run_tui(args if args.command == "tui" else demo_tui_args())
        parser.print_help()
        return EXIT_OK
    except KeyboardInterrupt:
        print("hep-advisor: interrupted; nothing was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `hep-advisor probe --json | head`
        return EXIT_OK
