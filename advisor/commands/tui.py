"""``hep-advisor tui`` (and ``hep-advisor`` with no command, in a terminal): the interactive
advisor.  Textual and the core are imported when it runs, not when the parser is built."""

from __future__ import annotations

import argparse
import sys

from hep_advisor.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_dataset_arguments,
    add_trace_argument,
)


def add_tui_arguments(p: argparse.ArgumentParser) -> None:
    add_dataset_arguments(p, "ROOT files, directories or globs (one dataset; default: the "
                          "demo's small files, created on first use)",
                          "time for the read tests when there is no cached calibration, in "
                          "seconds (default 60)")
    p.add_argument("--theme", choices=["dark", "light"], default=None,
                   help="colour theme (default: Textual's; `t` toggles it in the app)")
    add_trace_argument(p)


def run_tui(args: argparse.Namespace) -> int:
    trace = None
    if args.trace is not None:
        from hep_advisor.commands.report import load_trace

        if not args.paths:
            print("hep-advisor tui: --trace needs PATHS: the files the traced program reads",
                  file=sys.stderr)
            return EXIT_USAGE
        trace = load_trace(args.trace)
        if trace is None:
            return EXIT_USAGE
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        print("hep-advisor tui: needs a terminal; for a file or a pipe use "
              "`hep-advisor report`", file=sys.stderr)
        return EXIT_USAGE
    from hep_advisor.tui.app import DARK, LIGHT, make_app

    theme = {"dark": DARK, "light": LIGHT}.get(args.theme or "")
    app = make_app(args.paths or None, budget_s=args.budget, engine=args.engine,
                   branches=args.branches, analysis=args.analysis, theme=theme,
                   uses=args.uses, dask=args.dask, trace=trace, reader=args.reader)
    app.run()
    return app.return_code or EXIT_OK


def demo_tui_args() -> argparse.Namespace:
    """What plain ``hep-advisor`` (no command, in a terminal) runs: the TUI on the demo."""
    p = argparse.ArgumentParser()
    add_tui_arguments(p)
    return p.parse_args([])
