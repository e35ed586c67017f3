"""What the commands share and the parser needs: exit statuses and argument types and groups.

Cheap to import (no Rich, no core): ``hep-advisor --help`` builds every command's parser from
here.  The Rich console, error lines and progress bars are in :mod:`.console`.
"""

from __future__ import annotations

import argparse
import math
import re

EXIT_OK = 0
EXIT_FAILED = 1  # the command could not do its work (the demo not written, -o FILE not written)
EXIT_USAGE = 2  # argparse's own exit status for bad arguments
EXIT_NO_DATA = 2  # nothing usable in the inputs
EXIT_INTERRUPTED = 130

#: The most workers a worker list may name.
MAX_WORKERS = 4096
WORKERS_EXAMPLE = "e.g. 1,2,4 or 1-16 or 1,2,4-8"
_DIGITS = re.compile("[0-9]+")


def parse_workers(text: str) -> tuple[int, ...]:
    """A worker list: counts and ranges separated by commas, ``1,2,4``, ``1-16``, ``1,2,4-8``;
    sorted, without repeats.  Anything else is an ``argparse.ArgumentTypeError`` that says
    what is wrong."""
    out: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, sep, hi = (s.strip() for s in part.partition("-"))
        if not _DIGITS.fullmatch(lo) or (sep and not _DIGITS.fullmatch(hi)):
            raise argparse.ArgumentTypeError(
                f"{part!r} in {text!r} is neither a worker count nor a range ({WORKERS_EXAMPLE})")
        a = int(lo)
        b = int(hi) if sep else a
        if a < 1:
            raise argparse.ArgumentTypeError(f"{part!r}: worker counts start at 1")
        if b < a:
            raise argparse.ArgumentTypeError(f"{part!r}: a range goes from low to high, "
                                             f"e.g. {b}-{a}")
        if b > MAX_WORKERS:
            raise argparse.ArgumentTypeError(f"{part!r}: at most {MAX_WORKERS} workers")
        out.update(range(a, b + 1))
    if not out:
        raise argparse.ArgumentTypeError(f"no worker count given ({WORKERS_EXAMPLE})")
    return tuple(sorted(out))


def sample_count(text: str) -> int:
    """``--sample N``: how many files to open (0: every file)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("must be 0 (open every file) or more")
    return n


def budget_seconds(text: str) -> float:
    """``--budget S``: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the budget must be positive")
    return value


def positive_number(text: str) -> float:
    """A finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def reader_spec(text: str) -> object:
    """``--reader SPEC``: a ``hep_advisor.probes.readtests.readers.ReaderSpec``, or
    ``"advisor"`` (the advisor's own loop); a bad spec is an ``argparse.ArgumentTypeError``
    with the one-line cause."""
    from hep_advisor.probes.readtests.readers import parse_reader

    if text.strip().lower() == "advisor":
        return "advisor"
    try:
        return parse_reader(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def name_list(text: str) -> list[str]:
    """``A,B,...``: names, blanks dropped."""
    return [x.strip() for x in text.split(",") if x.strip()]


def add_dataset_arguments(p: argparse.ArgumentParser, paths_help: str,
                          budget_help: str) -> None:
    """What the commands that calibrate share: the dataset, the budget and how to read it."""
    p.add_argument("paths", nargs="*", metavar="PATHS", help=paths_help)
    p.add_argument("--budget", type=budget_seconds, default=60.0, metavar="S", help=budget_help)
    p.add_argument("--engine", choices=["uproot", "root"], default="uproot",
                   help="read the event loop and open files with uproot (default) or ROOT")
    p.add_argument("--branches", type=name_list, default=None, metavar="A,B,...",
                   help="branches your program reads now: the baseline, and what the event "
                   "loop reads (default: every branch, as ROOT without SetBranchStatus and "
                   "uproot without filter_name)")
    p.add_argument("--uses", type=name_list, default=None, metavar="A,B,...",
                   help="branches the analysis actually uses, if fewer than it reads: "
                   "advice only, no new measurement; B001 (read fewer branches) compares them "
                   "with --branches and needs them (default: not known, no B001)")
    p.add_argument("--analysis", default=None, metavar="MODULE:FUNCTION",
                   help="time your own analysis function (called with each chunk of arrays)")
    p.add_argument("--reader", type=reader_spec, default=None, metavar="SPEC",
                   help="how your program reads: uproot.iterate (uproot's default step_size "
                   "'100 MB'), uproot.iterate:step_size=5000, uproot.arrays (both take "
                   ",library=np), root.getentry "
                   "(no TTreeCache), root.ttreecache[:size=30 MB], rdataframe, or a trace "
                   "written by `hep-advisor trace --json -o FILE`; the event loop runs that "
                   "reader and the baseline is its replay (default: your engine's default "
                   "reader, assumed: uproot.iterate for uproot, root.ttreecache for ROOT; "
                   "`advisor`: the advisor's own loop)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="also probe every node of a Dask cluster: a scheduler address "
                   "(tcp://HOST:8786) or local:N (a LocalCluster of N worker processes); "
                   "its workers need hep-advisor and the files at the same paths; the node "
                   "tests take about a quarter of --budget per node, on top of it")


def add_sample_argument(p: argparse.ArgumentParser, help: str) -> None:
    """``--sample N`` (the dataset probe's file sample)."""
    p.add_argument("--sample", type=sample_count, default=default_sample(), metavar="N",
                   help=help)


def add_workers_argument(p: argparse.ArgumentParser, default: tuple[int, ...] | None,
                         help: str) -> None:
    """``--workers LIST`` (:func:`parse_workers`)."""
    p.add_argument("--workers", type=parse_workers, default=default, metavar="LIST", help=help)


def add_trace_argument(p: argparse.ArgumentParser) -> None:
    """``--trace FILE``: a saved ``hep-advisor trace --json`` document."""
    p.add_argument("--trace", metavar="FILE", default=None,
                   help="a trace of your own program (`hep-advisor trace --json -o FILE -- "
                   "COMMAND`): its reader findings join the advice, with the requests drawn "
                   "over time (the report's Trace section, the TUI's Trace tab)")


def add_json_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the JSON document on stdout")


def default_sample() -> int:
    from hep_advisor.probes.dataset import DEFAULT_SAMPLE

    return DEFAULT_SAMPLE
