"""``hep-advisor trace [--json] [-o FILE] [--cold] [--recorder R] [--uses A,B] -- COMMAND
[ARGS...]``: run the user's own program unchanged under ``strace`` or the in-process recorder,
say what it read and what that cost, and predict the reader changes that help.  The program's
exit code is passed through."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hep_advisor.commands.common import EXIT_FAILED, EXIT_USAGE

if TYPE_CHECKING:
    from hep_advisor.document.report import Document
    from hep_advisor.findings.trace import Trace
    from hep_advisor.pipeline.trace import TraceRun

#: The shell's status for a command that cannot be found.
EXIT_NOT_FOUND = 127


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print the JSON document (the `trace` block) instead of the view; the "
                   "program's own output then goes to stderr")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="also write the result to FILE: .json (the document), .html (a page "
                   "with the requests drawn over time) or anything else (plain text)")
    p.add_argument("--cold", action="store_true",
                   help="first drop the pages of the ROOT files named on the command line from "
                   "the page cache (posix_fadvise; nothing is written to them)")
    p.add_argument("--recorder", choices=("auto", "strace", "python"), default="auto",
                   help="how the reads are recorded: 'python' wraps uproot's and pyxrootd's "
                   "reads inside the program (microseconds per request; sees remote files; "
                   "not ROOT's own C++ reads), 'strace' traces every read system call (any "
                   "program, local files; costly for thousands of small reads); 'auto' "
                   "(default): python for a Python script that imports uproot or coffea and "
                   "not ROOT, or a command reading a URL; strace otherwise")
    p.add_argument("--uses", metavar="A,B,...", default="",
                   help="the branches the program uses (comma-separated): the trace sees what "
                   "it reads, not what it uses; with this, U002 says whether reading only "
                   "these helps")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
                   help="the program to run, after --")


def run_trace(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import dump_json, err_console, print_error
    from hep_advisor.document.report import document_json, make_document
    from hep_advisor.pipeline.fileio import write_atomically
    from hep_advisor.pipeline.trace import trace_program
    from hep_advisor.probes.trace import TraceError

    argv = list(args.program)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print_error("no command given: hep-advisor trace [--cold] -- COMMAND [ARGS...]")
        return EXIT_USAGE
    try:
        run = trace_program(argv, cold=args.cold, stdout=sys.stderr if args.json else None,
                            recorder=args.recorder,
                            uses=[b.strip() for b in args.uses.split(",") if b.strip()])
    except TraceError as e:
        print_error(str(e))
        return EXIT_NOT_FOUND if "not found" in str(e) and "strace" not in str(e) \
            else EXIT_FAILED
    doc = document_json(_document(make_document, run.trace))
    if args.json:
        dump_json(doc)
    else:
        from hep_advisor.render.trace_view import trace_view

        err_console.print()
        from rich.console import Console

        Console().print(trace_view(run.trace))
    if args.output:
        target = Path(args.output)
        try:
            write_atomically(target, _file_text(target, run, doc))
        except OSError as e:
            print_error(f"{target}: cannot write: {e.strerror or e}")
            return EXIT_FAILED
    return int(run.trace.exit_code)


def _document(make_document: Callable[..., Document], trace: Trace) -> Document:
    from dataclasses import replace

    return replace(make_document("trace", None, None), trace=trace)


def _file_text(target: Path, run: TraceRun, doc: dict[str, Any]) -> str:
    import io
    import json

    if target.suffix.lower() == ".json":
        return json.dumps(doc, indent=2) + "\n"
    if target.suffix.lower() in (".html", ".htm"):
        from hep_advisor.render.trace_parts import trace_html

        return trace_html(run.trace, run.attribution.reads)
    from rich.console import Console

    from hep_advisor.render.trace_view import trace_view

    console = Console(width=100, record=True, file=io.StringIO())
    console.print(trace_view(run.trace))
    return console.export_text()
