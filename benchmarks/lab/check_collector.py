"""The collector test's cost per file against what a program pays (issue 17, issue 11).

    python -m benchmarks.lab.check_collector DIR [DIR ...] [--tree Events] [--repeat 3]
        [--share 2.0] [--sample 8]

For each directory of ROOT files: the calibration's collector test
(``hep_advisor.probes.readtests.collector.measure_collector`` on the first ``--sample`` files,
``--share`` seconds of reading, as ``calibrate`` runs it) ``--repeat`` times; then the program a
user writes (``uproot.iterate`` over every file and branch, ``library="ak"``, one fresh process,
warm page cache) ``--repeat`` times with ``gc.callbacks`` timing every collection: its full
collections' seconds per file are what the test predicts; its young collections are shown
apart (the open test's and the warm loop's medians hold those).  Then the same program with
``gc.disable()`` once per repeat: the whole difference in wall time, per file, for scale.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

PROGRAM = r"""
import gc, json, sys, time
files, tree, off = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "off"
import awkward, uproot
acc = [0.0, 0.0, 0.0]; t = [0.0]
def cb(phase, info):
    if phase == "start": t[0] = time.perf_counter()
    else: acc[info["generation"]] += time.perf_counter() - t[0]
if off: gc.disable()
else: gc.callbacks.append(cb)
t0 = time.perf_counter(); n = 0
for a in uproot.iterate([{f: tree} for f in files], library="ak"):
    n += len(a)
print(json.dumps({"seconds": time.perf_counter() - t0, "gen": acc, "events": n}))
"""


def program(files: list[str], tree: str, off: bool) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(files), tree,
                          "off" if off else "on"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--share", type=float, default=2.0)
    ap.add_argument("--sample", type=int, default=8)
    args = ap.parse_args()
    from hep_advisor.probes.readtests.collector import measure_collector

    print("| files | n | test, ms per file (runs) | program's full collections, ms per file "
          "(runs) | test / program | program's young collections, ms per file | program "
          "with the collector off, ms per file less |")
    print("|---|---|---|---|---|---|---|")
    for d in args.dirs:
        files = sorted(glob.glob(os.path.join(d, "*.root")))
        for f in files:  # warm page cache, as the calibration's late tests find them
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        tests = [1e3 * (measure_collector(files[:args.sample], args.tree, None,
                                          args.share).per_file_s or 0.0)
                 for _ in range(args.repeat)]
        full, young, saved = [], [], []
        for _ in range(args.repeat):
            on = program(files, args.tree, False)
            off = program(files, args.tree, True)
            full.append(1e3 * on["gen"][2] / len(files))
            young.append(1e3 * (on["gen"][0] + on["gen"][1]) / len(files))
            saved.append(1e3 * (on["seconds"] - off["seconds"]) / len(files))
        t, p = statistics.median(tests), statistics.median(full)
        print(f"| {os.path.basename(d.rstrip('/'))} | {len(files)} | {t:.1f} "
              f"({', '.join(f'{x:.1f}' for x in tests)}) | {p:.1f} "
              f"({', '.join(f'{x:.1f}' for x in full)}) | {t / p if p else float('nan'):.2f} | "
              f"{statistics.median(young):.1f} | {statistics.median(saved):.1f} "
              f"({', '.join(f'{x:.1f}' for x in saved)}) |", flush=True)


if __name__ == "__main__":
    main()
