"""Whether a program's memory is faulted again every step, against uproot's step size.

    python -m benchmarks.lab.check_step_refault DATA_DIR [--steps "10 MB,40 MB,60 MB,100 MB"]
        [--repeats 3] [--tree Events] [--out FILE.json]

The plain analysis (uproot's ``iterate`` over every branch, ``library="ak"``, as
``benchmarks/validation/advice_true_analysis.py`` reads) runs in a fresh process, page cache
warm, once per memory-size step and repeat, alternating the steps: its loop's wall, user and
system seconds, its minor page faults (``getrusage``, MB of 4 kB pages) and its peak RSS.  A
last run at the largest step fixes glibc's thresholds (``MALLOC_MMAP_THRESHOLD_`` 256 MiB,
``MALLOC_TRIM_THRESHOLD_`` 2 GB: nothing mapped apart, nothing given back): the faults left are
the peak's, once.

What it shows: ``hep_advisor.models.replay.cpucosts.MEMORY_GROWTH`` charges a new process its
peak memory once (about 3.2x its largest step's arrays).  Where the faulted MB grow past that
with the step, and fall back with the fixed thresholds, the allocator gives the steps' memory
back and faults it again each step, and the warm loop's measured refault
(``EventLoop.refault_per_mb``) holds only at the step it ran.  Timed runs take
``/tmp/hep-bench.lock``.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

LOCK = "/tmp/hep-bench.lock"
#: one run: imports first, then the analysis' loop measured on its own
CHILD = """
import json, resource, sys, time
import uproot
files, tree, step = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter(); steps = 0
for arrays in uproot.iterate([{f: tree} for f in files], library="ak", step_size=step):
    steps += 1
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - t0, "faults": r1.ru_minflt - r0.ru_minflt,
                  "sys_s": r1.ru_stime - r0.ru_stime, "user_s": r1.ru_utime - r0.ru_utime,
                  "maxrss_mb": r1.ru_maxrss / 1024, "steps": steps}))
"""
FIXED = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(2 * 10**9)}


def once(files: list[str], tree: str, step: str, env: dict[str, str] | None = None
         ) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(files), tree, step],
                       capture_output=True, text=True, check=True,
                       env={**os.environ, **(env or {})})
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--steps", default="10 MB,40 MB,60 MB,100 MB")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    files = sorted(str(p) for p in args.data.glob("*.root"))
    if not files:
        print(f"{args.data}: no .root files", file=sys.stderr)
        return 1
    for f in files:  # warm: the page cache holds every file
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in steps}
    fixed_key = f"{steps[-1]}, thresholds fixed"
    runs[fixed_key] = []
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(args.repeats):
            for s in steps:
                runs[s].append(once(files, args.tree, s))
            runs[fixed_key].append(once(files, args.tree, steps[-1], FIXED))
    rows = []
    for name, outs in runs.items():
        med = {k: statistics.median(o[k] for o in outs) for k in outs[0]}
        walls = [o["wall_s"] for o in outs]
        rows.append({"step": name, **med, "wall_min_s": min(walls), "wall_max_s": max(walls)})
    if args.out:
        Path(args.out).write_text(json.dumps({"data": str(args.data), "rows": rows}, indent=1))
    print(f"\n{args.data.name}: {len(files)} file(s), medians of {args.repeats} fresh processes, "
          "warm\n")
    print("| step | steps | loop (s) | user (s) | system (s) | faulted (MB) | peak RSS (MB) |\n"
          "|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['step']} | {r['steps']:.0f} | {r['wall_s']:.3f} ({r['wall_min_s']:.3f}-"
              f"{r['wall_max_s']:.3f}) | {r['user_s']:.2f} | {r['sys_s']:.2f} | "
              f"{r['faults'] * 4096 / 1e6:.0f} | {r['maxrss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
