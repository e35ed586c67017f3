"""What the calibration's warm event loop faults again on every pass, per MB it reads.

    python -m benchmarks.lab.check_loop_refault DATA_DIR [DATA_DIR ...] [--share 8]
        [--reader uproot.iterate] [--tree NAME]

For each dataset (a directory of ROOT files): the calibration's event-loop test
(``hep_advisor.probes.readtests.eventloop.measure_event_loop``), warm only, in this process, with
the loop's own steps or with ``--reader``'s (uproot's default ``iterate``: 100 MB steps).  Prints
the largest step of arrays (MB) and the median MB of memory the warm passes faulted per
uncompressed MB read (``event_loop.refault_per_mb``): what the fresh-memory term of the replay
leaves out, since the loop's rate already paid it.  Nothing is written; the timed part takes
``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import fcntl
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

LOCK = "/tmp/hep-bench.lock"


def tree_of(path: Path) -> str:
    """The first TTree of ``path``."""
    import uproot

    with uproot.open(path) as f:
        return next(k.split(";")[0] for k, c in f.classnames().items() if c == "TTree")


def locked_datasets(dirs: Sequence[str]) -> Iterator[tuple[Path, list[str]]]:
    """Each directory and its ``.root`` files, sorted, holding ``LOCK`` throughout (one
    without files is named on stderr and skipped)."""
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for d in map(Path, dirs):
            files = sorted(str(p) for p in d.glob("*.root"))
            if not files:
                print(f"{d}: no .root files", file=sys.stderr)
                continue
            yield d, files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--share", type=float, default=8.0, help="seconds per loop (default 8)")
    ap.add_argument("--reader", default=None, help="the program's reader (--reader's syntax)")
    ap.add_argument("--tree", default=None, help="the tree (default: each dataset's first)")
    args = ap.parse_args()

    from hep_advisor.probes.readtests.eventloop import measure_event_loop
    from hep_advisor.probes.readtests.readers import parse_reader
    from hep_advisor.probes.readtests.runner import Session

    spec = parse_reader(args.reader) if args.reader else None
    print("| dataset | reader | step (MB) | MB faulted per MB | warm samples | events/s |\n"
          "|---|---|---|---|---|---|")
    for d, files in locked_datasets(args.data):
        try:
            loop = measure_event_loop(Session(max(60.0, 4 * args.share)), files,
                                      args.tree or tree_of(Path(files[0])),
                                      share_s=args.share, cold=False, reader=spec)
        except (OSError, ValueError) as exc:
            print(f"{d}: {exc}", file=sys.stderr)
            continue
        n = len(loop.warm.samples) if loop.warm is not None else 0
        reader = args.reader or "the loop's own"
        print(f"| {d.name} | {reader} | {loop.step_mb or 0:.1f} | "
              f"{loop.refault_per_mb or 0:.2f} | {n} | {loop.events_per_s or 0:,.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
