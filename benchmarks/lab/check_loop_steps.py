"""What a read call costs the warm event loop: the same files read in steps of 1 to 100 MB.

    python -m benchmarks.lab.check_loop_steps DATA_DIR [DATA_DIR ...] [--files 3] [--rounds 3]
        [--steps 1,3,6.5,20,100]

For each dataset (a directory of ROOT files): the calibration's warm event-loop pass
(``hep_advisor.probes.readtests.eventloop.read_pass``, every branch, in this process) over its first
``--files`` files, at each step (MB of uncompressed arrays per ``iterate`` call), the rounds
interleaved; prints the median milliseconds per file and the calls per file.  A short
calibration share reads in steps of 1 MB per second of its share (``STEP_BYTES_PER_S``), a job
in 50 MB steps, so the rate model must count the loop's own calls (``event_loop.step_bytes``).
Nothing is written; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", default="1,3,6.5,20,100", help="MB per call (default 1..100)")
    args = ap.parse_args()

    from benchmarks.lab.check_loop_refault import locked_datasets, tree_of
    from hep_advisor.probes.readtests.eventloop import plan_reads, read_pass

    steps = [float(x) * 1e6 for x in args.steps.split(",")]
    print("| dataset | MB of arrays per file | "
          + " | ".join(f"{s / 1e6:g} MB steps: ms per file (calls)" for s in steps)
          + " |\n|---|---|" + "---|" * len(steps))
    for d, files in locked_datasets(args.data):
        plan = plan_reads(files[:args.files], tree_of(Path(files[0])))
        per_file = plan.uncompressed_bytes / len(plan.parts)
        read_pass(plan, 50e6)  # interpretations and kernels built, the files in the cache
        times: dict[float, list[float]] = {s: [] for s in steps}
        for _ in range(args.rounds):
            for s in steps:
                times[s].append(read_pass(plan, s).seconds / len(plan.parts))
        cells = [f"{1000 * statistics.median(times[s]):.0f} ({max(1, math.ceil(per_file / s))})"
                 for s in steps]
        print(f"| {d.name} | {per_file / 1e6:.1f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
