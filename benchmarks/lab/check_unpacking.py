"""uproot's unpacking, per call and per byte: what the calibration's unpacking test finds.

    python -m benchmarks.lab.check_unpacking DATA_DIR [DATA_DIR ...] [--share 3] [--runs 2]

For each dataset (a directory of ROOT files): the calibration's unpacking test
(``hep_advisor.probes.readtests.unpacking.measure_unpacking``, on every branch) ``--runs`` times,
printing the pass's rate (compressed MB/s, fixed costs included), the fixed costs per
``basket_array`` and per ``final_array`` call, and the rate per byte the model takes (``bound``
where it is the test's floor, a tenth of the pass's time: the fit found the bytes cheaper than it
can tell). Then a direct sweep on the first fixed-width branch with data: one basket's data repeated
1, 4, 16 and 64 times through ``basket_array`` and ``final_array`` (the fastest of 30 calls
each, microseconds): the fixed cost and the cost per byte as a user's read pays them.  Nothing
is written; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

TILES = (1, 4, 16, 64)


def sweep(path: str, tree_name: str) -> str:
    """``basket_array`` / ``final_array`` microseconds on one basket repeated ``TILES``."""
    import numpy as np
    import uproot
    from uproot.interpretation.library import _regularize_library

    library, options = _regularize_library("ak"), {"ak_add_doc": False}
    with uproot.open(path) as f:
        tree = f[tree_name]
        for b in tree.itervalues(recursive=True):
            interp = b.interpretation
            if b.num_baskets <= 0 or not hasattr(interp, "from_dtype"):
                continue
            bk = b.basket(0)
            if bk.byte_offsets is not None:
                continue
            cells = []
            for k in TILES:
                data = np.tile(bk.data, k)
                context = dict(b.context)
                context["forth"] = threading.local()
                stop = k * int(b.entry_offsets[1])
                t_b, t_f = [], []
                for _ in range(30):
                    s = time.perf_counter()
                    arr = interp.basket_array(data, None, bk, b, context, bk.member("fKeylen"),
                                              library, options)
                    t_b.append(time.perf_counter() - s)
                    s = time.perf_counter()
                    interp.final_array({0: arr}, 0, stop, [0, stop], library, b, options)
                    t_f.append(time.perf_counter() - s)
                cells.append(f"{len(data) / 1e3:.0f} kB: {min(t_b) * 1e6:.1f} / "
                             f"{min(t_f) * 1e6:.1f}")
            return f"{b.name} ({interp}): " + "; ".join(cells)
    return "no fixed-width branch"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--share", type=float, default=3.0, help="seconds per test (default 3)")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()

    from benchmarks.lab.check_loop_refault import locked_datasets, tree_of
    from hep_advisor.probes.readtests.runner import Session
    from hep_advisor.probes.readtests.unpacking import measure_unpacking

    print("| dataset | run | branches | baskets | pass MB/s | per basket_array (us) | "
          "per final_array (us) | per-byte rate MB/s |\n|---|---|---|---|---|---|---|---|")
    sweeps = []
    for d, files in locked_datasets(args.data):
        tree = tree_of(Path(files[0]))
        for run in range(args.runs):
            u = measure_unpacking(Session(60), files, tree, share_s=args.share)
            if u is None:
                print(f"{d}: no tree {tree}", file=sys.stderr)
                break
            bound = " (bound)" if u.compressed_mb_per_s and u.total_mb_per_s and \
                u.compressed_mb_per_s >= 9.99 * u.total_mb_per_s else ""
            us = [f"{x * 1e6:.1f}" if x is not None else "not separated"
                  for x in (u.basket_call_s, u.branch_call_s)]
            print(f"| {d.name} | {run + 1} | {u.branches} | {u.baskets} | "
                  f"{u.total_mb_per_s or 0:,.0f} | {us[0]} | {us[1]} | "
                  f"{u.compressed_mb_per_s or 0:,.0f}{bound} |", flush=True)
        largest = max(files, key=lambda p: Path(p).stat().st_size)
        sweeps.append(f"- {d.name}: {sweep(largest, tree)}")
    print("\nbasket_array / final_array, fastest of 30 (us), one basket's data repeated:")
    print("\n".join(sweeps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
