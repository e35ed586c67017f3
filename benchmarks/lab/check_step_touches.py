"""What a step that ends inside baskets costs uproot's ``iterate``: the same files read warm in
steps of several entry counts, against the baskets each step interprets.

    python -m benchmarks.lab.check_step_touches DATA_DIR [DATA_DIR ...] [--files 2] [--rounds 3]
        [--steps 0,1750,500]

For each dataset (a directory of ROOT files): its first ``--files`` files read whole, warm
(read once beforehand), every branch, with ``TTree.iterate(step_size=N)`` for each ``N`` of
``--steps`` (entries; 0: a file's entries, one call), the rounds interleaved.  ``iterate``
keeps a basket its step ends inside for the next step (not read or decompressed again) but
interprets it again whole, so a step interprets every basket of each branch it overlaps: the
count per file comes from the basket maps (``hep_advisor.models.replay.predict.step_touches``), and
the rate model charges each one beyond the file's baskets at ``basket_s`` (the ``straddles``
column).  Prints the median seconds per file at each step, the interpretations per file, and
the seconds per extra interpretation between successive steps (the slope).  Nothing is
written; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", default="0,1750,500",
                    help="entries per call (0: one call per file; default 0,1750,500)")
    args = ap.parse_args()

    import uproot

    from benchmarks.lab.check_loop_refault import locked_datasets, tree_of
    from hep_advisor.models.replay.predict import step_touches
    from hep_advisor.probes.basketmap import read_basket_map

    steps = [int(x) for x in args.steps.split(",")]
    print("| dataset | branches | baskets per file | "
          + " | ".join(f"step {s or 'whole'}: s per file (interpretations)" for s in steps)
          + " | s per extra interpretation |")
    print("|---|---|---|" + "---|" * len(steps) + "---|")
    for d, files in locked_datasets(args.data):
        files = files[: args.files]
        tree = tree_of(Path(files[0]))
        maps = [read_basket_map(f, tree) for f in files]
        for f in files:
            Path(f).read_bytes()  # warm
        touches = []
        for s in steps:
            touches.append(sum(step_touches(m.branches, m.entries, s or m.entries)
                               for m in maps) / len(files))
        times: dict[int, list[float]] = {s: [] for s in steps}
        for _ in range(args.rounds):
            for s in steps:
                t0 = time.perf_counter()
                for f in files:
                    with uproot.open(f) as rf:
                        t = rf[tree]
                        for _arrays in t.iterate(step_size=s or t.num_entries, library="ak"):
                            pass
                times[s].append((time.perf_counter() - t0) / len(files))
        med = [statistics.median(times[s]) for s in steps]
        slopes = [(med[i + 1] - med[i]) / (touches[i + 1] - touches[i]) * 1e3
                  for i in range(len(steps) - 1) if touches[i + 1] != touches[i]]
        baskets = sum(sum(b.baskets for b in m.branches) for m in maps) / len(files)
        print(f"| {d.name} | {len(maps[0].branches)} | {baskets:,.0f} | "
              + " | ".join(f"{m:.3f} ({n:,.0f})" for m, n in zip(med, touches, strict=True))
              + " | " + ", ".join(f"{x:.3f} ms" for x in slopes) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
