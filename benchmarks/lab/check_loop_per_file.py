"""What the calibration's event loop pays per file beyond a later read call of the same entries.

    python -m benchmarks.lab.check_loop_per_file SMALL_DIR MERGED_FILE [--tree Events] [--files 8]
                                             [--passes 6]

In one process, warm, ``--passes`` times in turn: the calibration's own pass
(``hep_advisor.probes.readtests.eventloop.read_pass``) over the first ``--files`` small files (time
per file, opening not timed); the same number of entries read as later calls on the merged file
(array cache off, the median call); and one call on each small file freshly opened (array
cache off, the median).  The first minus the second is what the rate model now counts per file
(``hep_advisor.models.calcosts.loop_file_extra``); the third minus the second is the first call's
own extra (``CallCost.first_call_s``).  With ``validate_model.py --data held-out --workdir W``:
``SMALL_DIR`` = ``W/small_files``, ``MERGED_FILE`` = ``W/merged/held_merged.root``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("small_dir")
    ap.add_argument("merged")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--passes", type=int, default=6)
    args = ap.parse_args()

    import uproot

    from hep_advisor.probes.readtests.eventloop import plan_reads, read_pass

    small = sorted(str(p) for p in Path(args.small_dir).glob("*.root"))[:args.files]
    if not small:
        print(f"{args.small_dir}: no .root files")
        return 1
    plan = plan_reads(small, args.tree, None, max_bytes=1e12)
    entries = plan.parts[0].entries
    for p in small:  # warm
        Path(p).read_bytes()
    Path(args.merged).read_bytes()
    loop: list[float] = []
    later: list[float] = []
    fresh: list[float] = []
    for k in range(args.passes):
        loop.append(read_pass(plan).seconds / len(small))
        with uproot.open(args.merged, array_cache=None) as f:
            tree = f[args.tree]
            names = tree.keys()
            tree.arrays(names, entry_stop=entries, library="ak")
            calls = []
            for start in range(entries, entries * (len(small) + 1), entries):
                t0 = time.perf_counter()
                tree.arrays(names, entry_start=start, entry_stop=start + entries, library="ak")
                calls.append(time.perf_counter() - t0)
            later.append(statistics.median(calls))
        calls = []
        for p in small:
            with uproot.open(p, array_cache=None) as f:
                tree = f[args.tree]
                t0 = time.perf_counter()
                tree.arrays(tree.keys(), library="ak")
                calls.append(time.perf_counter() - t0)
        fresh.append(statistics.median(calls))
        print(f"pass {k}: loop {1e3 * loop[-1]:.1f} ms a file, later call {1e3 * later[-1]:.1f} "
              f"ms, a fresh file's call {1e3 * fresh[-1]:.1f} ms", flush=True)
    print(f"medians of {args.passes} passes ({entries} entries a file): loop "
          f"{1e3 * statistics.median(loop):.1f} ms, later call {1e3 * statistics.median(later):.1f}"
          f" ms, fresh file's call {1e3 * statistics.median(fresh):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
