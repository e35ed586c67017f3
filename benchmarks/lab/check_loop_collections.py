"""What Python's full garbage collections add to the calibration's event loop.

    python -m benchmarks.lab.check_loop_collections DIR [--tree Events] [--files 7] [--pairs 3]
                                                [--heap N]

In one process, warm, ``--pairs`` times in turn: the calibration's own pass
(``hep_advisor.probes.readtests.eventloop.read_pass``) over the first ``--files`` files of ``DIR``
with full collections as CPython runs them, then the same pass inside
``eventloop.no_full_collections`` (as the event loop test now times it).  Prints each pass's
events/s, the medians and their ratio.  ``--heap N`` first keeps N small objects alive (a
large heap, like the advisor's own, makes full collections rare).  With
``validate_model.py --data held-out --workdir W``: ``DIR`` = ``W/small_files``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--files", type=int, default=7)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--heap", type=int, default=0)
    args = ap.parse_args()

    from hep_advisor.probes.readtests.eventloop import no_full_collections, plan_reads, read_pass

    files = sorted(str(p) for p in Path(args.dir).glob("*.root"))[:args.files]
    if not files:
        print(f"{args.dir}: no .root files", file=sys.stderr)
        return 2
    keep = [[i] for i in range(args.heap)]  # noqa: F841  (kept alive: the heap walked)
    plan = plan_reads(files, args.tree, None, 1e12)
    read_pass(plan)  # interpretations and kernels built, the files in the page cache
    rates: dict[str, list[float]] = {"with": [], "without": []}
    for i in range(args.pairs):
        r = read_pass(plan)
        rates["with"].append(r.total_entries / r.seconds)
        with no_full_collections():
            r = read_pass(plan)
        rates["without"].append(r.total_entries / r.seconds)
        print(f"pair {i + 1}: with full collections {rates['with'][-1]:,.0f} events/s, "
              f"without {rates['without'][-1]:,.0f}", flush=True)
    w, wo = statistics.median(rates["with"]), statistics.median(rates["without"])
    print(f"{len(files)} files, {plan.entries} entries, heap +{args.heap:,} objects: median "
          f"with {w:,.0f}, without {wo:,.0f} events/s; without / with {wo / w:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
