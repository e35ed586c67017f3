"""A one-worker job's rate against how many files it reads: what a short run pays once.

    python -m benchmarks.lab.check_job_length DATA_DIR [DATA_DIR ...] [--counts 1,2,all]
        [--rounds 2] [--repeats 3]

For each dataset (a directory of ROOT files): ``hep_advisor.probes.readtests.parallel.measure_job``
(the calibration's parallel loop and ``validate_model``'s jobs use it), one worker, warm, every
branch, on the first 1, 2 and all of its files; the median MB/s of ``--repeats`` runs, and
each unit's seconds (the worker's first file against the rest).  The calibration's parallel
loop reads a few files in its share of the budget; the analysis reads them all.  Nothing is
written; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--counts", default="1,2,all", help="files per job (default 1,2,all)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from benchmarks.lab.check_loop_refault import locked_datasets, tree_of
    from hep_advisor.probes.readtests.parallel import measure_job

    print("| dataset | files | round | MB/s (median) | runs | first unit (s) | later units, "
          "median (s) |\n|---|---|---|---|---|---|---|")
    for d, files in locked_datasets(args.data):
        tree = tree_of(Path(files[0]))
        counts = [len(files) if c == "all" else min(int(c), len(files))
                  for c in args.counts.split(",")]
        for n in dict.fromkeys(counts):
            for rnd in range(args.rounds):
                res, m = measure_job(files[:n], tree, 1, repeats=args.repeats, cold=False)
                units = [r.seconds for r in sorted(res.per_file,
                                                   key=lambda r: (r.path, r.entry_start))]
                later = f"{statistics.median(units[1:]):.3f}" if len(units) > 1 else "—"
                runs = ", ".join(f"{x:.1f}" for x in m.samples)
                print(f"| {d.name} | {n} | {rnd + 1} | {m.median or 0:.1f} | {runs} | "
                      f"{units[0]:.3f} | {later} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
