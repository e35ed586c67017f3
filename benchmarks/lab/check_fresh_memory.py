"""The memory a new process writes for the first time, against its largest step of arrays.

    python -m benchmarks.lab.check_fresh_memory DATA_DIR [DATA_DIR ...] [--repeats 2]
        [--work /tmp/fresh_check] [--tree Events] [--out FILE.json]

For each dataset: the plain analysis (uproot's default ``uproot.iterate`` over every branch,
``benchmarks/validation/advice_true_analysis.py``'s loop) in a fresh process, page cache warm,
on the
dataset's files and on two rewrites of them made with ROOT's ``hadd`` (every file merged into
one with ``hadd -O -f404``, as C001 prints it, and with a plain ``hadd -fk``, as M001 merges):
its wall, user and system seconds, the minor page faults (``getrusage``) and the peak RSS,
beside the largest step's uncompressed MB (uproot's ``"100 MB"`` step: at most 100 MB of a
file's branches).  Then the least-squares line of the faulted MB on the step's MB over every
layout (what ``hep_advisor.models.replay.cpucosts.MEMORY_GROWTH`` assumes), and the system seconds
per faulted MB.  The rewrites are made in ``--work`` and removed at the end.  Timed parts take
``/tmp/hep-bench.lock``.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hep_advisor.demo.root_writer import hadd_path

LOCK = "/tmp/hep-bench.lock"
#: one run: imports first, then the analysis' loop measured on its own
CHILD = """
import json, resource, sys, time
import uproot
files, tree = json.loads(sys.argv[1]), sys.argv[2]
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter()
for arrays in uproot.iterate([{f: tree} for f in files], library="ak"):
    pass
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - t0, "faults": r1.ru_minflt - r0.ru_minflt,
                  "sys_s": r1.ru_stime - r0.ru_stime, "user_s": r1.ru_utime - r0.ru_utime,
                  "maxrss_mb": r1.ru_maxrss / 1024}))
"""


def largest_step_mb(files: list[str], tree: str) -> float:
    """The largest step of uproot's default ``"100 MB"`` over ``files``, uncompressed MB."""
    import uproot

    out = 0.0
    for f in files:
        with uproot.open(f) as h:
            t = h[tree]
            unc = sum(b.uncompressed_bytes for b in t.values(recursive=True))
            out = max(out, min(unc, 100e6) / 1e6)
    return out


def run(files: list[str], tree: str, repeats: int) -> dict[str, Any]:
    """The analysis in ``repeats`` fresh processes (the files read once before: warm)."""
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    outs = []
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(repeats):
            r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(files), tree],
                               capture_output=True, text=True, check=True)
            outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(o[k] for o in outs) for k in outs[0]}


def layouts(src: Path, work: Path) -> list[tuple[str, list[str]]]:
    files = sorted(str(p) for p in src.glob("*.root"))
    if not files:
        raise RuntimeError(f"{src}: no .root files")
    out = [("as written", files)]
    for name, args in (("hadd -O -f404", ["-O", "-f404"]), ("hadd -fk", ["-fk"])):
        dest = work / f"{src.name}_{name.replace(' ', '_')}.root"
        r = subprocess.run([hadd_path(), *args, str(dest), *files], capture_output=True,
                           text=True, check=False)
        if r.returncode != 0:
            print(f"{src.name}: {name} failed: {(r.stderr or r.stdout).strip()[-200:]}")
            continue
        out.append((name, [str(dest)]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", type=Path)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="fresh_check_"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    try:
        for src in args.data:
            for name, files in layouts(src, work):
                res = run(files, args.tree, args.repeats)
                rows.append({"dataset": src.name, "layout": name, "files": len(files),
                             "step_mb": largest_step_mb(files, args.tree), **res})
                print(f"  {src.name} {name}: {rows[-1]}", flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print("\n| dataset | layout | files | largest step (MB) | faulted (MB) | faulted / step | "
          "system (s) | ms per faulted MB | wall (s) |\n|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mb = r["faults"] * 4096 / 1e6
        print(f"| {r['dataset']} | {r['layout']} | {r['files']} | {r['step_mb']:.1f} | {mb:.0f} | "
              f"{mb / max(r['step_mb'], 1e-9):.1f} | {r['sys_s']:.3f} | "
              f"{1e3 * r['sys_s'] / max(mb, 1e-9):.2f} | {r['wall_s']:.3f} |")
    if len(rows) >= 2:
        x = np.array([r["step_mb"] for r in rows])
        y = np.array([r["faults"] * 4096 / 1e6 for r in rows])
        a, b = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)[0]
        resid = y - (a + b * x)
        print(f"\nfaulted MB = {a:.0f} + {b:.2f} x the largest step's MB (residuals "
              f"{resid.min():+.0f} to {resid.max():+.0f} MB, {len(rows)} layouts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
