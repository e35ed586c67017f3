"""What a merge changes in uproot's CPU time, part by part (issue 11: C001's and M001's merge
part, replayed at 0.78x on split where a merge measured 0.95x).

    python -m benchmarks.lab.check_merge_parts DIR [--tree Events] [--repeats 5]

``DIR``'s ROOT files are merged with ``hadd -O -fk`` (M001's printed options) into a temporary
directory, and the plain analysis (``uproot.iterate`` over every branch, library ``ak``) is run
warm, each run in a fresh process, the variants alternating:

- A: today's files, uproot's default ``step_size="100 MB"`` (its key pre-pass);
- B: the merged file, the same;
- C: today's files, a step of one file's entries (no pre-pass);
- D: the merged file, the same entry step (the same step sizes as C: no pre-pass, the same
  memory);
- E: the merged file, one step of every entry (no pre-pass, the largest step of B).

So A - C is the pre-pass on today's files, B - E on the merged one, E - D what the merged
file's larger step costs in fresh memory (page faults counted), D - C the layout itself (fewer
opens and calls, the refilled baskets).  Then, in one process (as the calibration times its
warm loop), the branches of each kind (uproot's interpretation: fixed width or not) are read
from both layouts at the same entry step, the opens timed apart and taken off: what the
kind's refilled baskets cost.  Prints medians (and ranges) of each; the temporary directory is
removed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hep_advisor.demo.root_writer import hadd_path

RUN = r"""
import json, resource, sys, time
import uproot
files, tree, step = json.loads(sys.argv[1])
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
n = 0
for a in uproot.iterate([{f: tree} for f in files], library="ak", step_size=step):
    n += len(a)
t1 = time.perf_counter()
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"events": n, "wall_s": t1 - t0,
                  "cpu_s": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
                  "faulted_mb": (r1.ru_minflt - r0.ru_minflt) * 4096 / 1e6,
                  "peak_rss_mb": r1.ru_maxrss / 1024}))
"""


def fresh_run(files: list[str], tree: str, step: int | str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", RUN, json.dumps([files, tree, step])],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def kinds(path: str, tree: str) -> dict[str, list[str]]:
    import uproot

    out: dict[str, list[str]] = {"fixed width": [], "varying": []}
    with uproot.open(path) as f:
        for b in f[tree].itervalues(recursive=True):
            if b.num_baskets <= 0 or b.branches:
                continue
            try:
                interp = b.interpretation
            except Exception:
                continue
            fixed = type(interp).__name__ == "AsDtype"
            out["fixed width" if fixed else "varying"].append(b.name)
    return out


def baskets_of(path: str, tree: str, names: list[str]) -> int:
    import uproot

    with uproot.open(path) as f:
        t = f[tree]
        return sum(int(t[n].num_baskets) for n in names)


def in_process(files: list[str], merged: str, tree: str, step: int, names: list[str],
               repeats: int) -> dict[str, float]:
    import uproot

    def read(paths: list[str]) -> float:
        t0 = time.process_time()
        for p in paths:
            with uproot.open(p) as f:
                for _ in f[tree].iterate(filter_name=names, step_size=step, library="ak"):
                    pass
        return time.process_time() - t0

    def opens(paths: list[str]) -> float:
        t0 = time.process_time()
        for p in paths:
            with uproot.open(p) as f:
                f[tree].keys()
        return time.process_time() - t0

    read(files), read([merged])  # warm
    a, b, oa, ob = [], [], [], []
    for _ in range(repeats):
        a.append(read(files))
        b.append(read([merged]))
        oa.append(opens(files))
        ob.append(opens([merged]))
    now = statistics.median(a) - statistics.median(oa)
    after = statistics.median(b) - statistics.median(ob)
    n0 = sum(baskets_of(p, tree, names) for p in files)
    n1 = baskets_of(merged, tree, names)
    return {"branches": len(names), "baskets_now": n0, "baskets_merged": n1,
            "read_now_s": now, "read_merged_s": after,
            "per_basket_us": 1e6 * (after - now) / (n1 - n0) if n1 != n0 else float("nan")}


def first_touch_ms_per_mb(private: bool, mb: int = 32) -> float:
    import mmap

    size = mb * 1_000_000 // mmap.PAGESIZE * mmap.PAGESIZE
    flags = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if private else {}
    m = mmap.mmap(-1, size, **flags)
    view = memoryview(m)
    t0 = time.perf_counter()
    view[::mmap.PAGESIZE] = b"\x01" * (size // mmap.PAGESIZE)
    seconds = time.perf_counter() - t0
    view.release()
    m.close()
    return 1e3 * seconds / mb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    files = sorted(str(p) for p in Path(args.dir).glob("*.root"))
    if len(files) < 2:
        sys.exit(f"{args.dir}: fewer than two ROOT files to merge")
    import uproot

    entries = []
    for f in files:
        with uproot.open(f) as fh:
            entries.append(int(fh[args.tree].num_entries))
    with tempfile.TemporaryDirectory(prefix="merge-parts-") as tmp:
        merged = str(Path(tmp) / "merged.root")
        subprocess.run([hadd_path(), "-O", "-fk", merged, *files], check=True,
                       capture_output=True)
        variants = {"A": (files, "100 MB"), "B": ([merged], "100 MB"),
                    "C": (files, max(entries)), "D": ([merged], max(entries)),
                    "E": ([merged], sum(entries))}
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in variants}
        for paths, step in variants.values():  # one unrecorded run each: the page cache
            fresh_run(paths, args.tree, step)
        for _ in range(args.repeats):
            for k, (paths, step) in variants.items():
                runs[k].append(fresh_run(paths, args.tree, step))
        print(f"{len(files)} files ({sum(entries):,} entries) and one file by hadd -O -fk; "
              f"{args.repeats} fresh processes each, warm\n")
        print("| variant | wall s (median, range) | CPU s | faulted MB | peak RSS MB |")
        print("|---|---|---|---|---|")
        med: dict[str, dict[str, float]] = {}
        for k, rs in runs.items():
            med[k] = {f: statistics.median(r[f] for r in rs) for f in rs[0]}
            walls = [r["wall_s"] for r in rs]
            print(f"| {k} | {med[k]['wall_s']:.3f} ({min(walls):.3f}-{max(walls):.3f}) | "
                  f"{med[k]['cpu_s']:.3f} | {med[k]['faulted_mb']:.0f} | "
                  f"{med[k]['peak_rss_mb']:.0f} |")
        w = {k: v["wall_s"] for k, v in med.items()}
        print(f"\nmerge, as run (A / B): {w['A'] / w['B']:.3f}x; pre-pass today "
              f"{w['A'] - w['C']:.3f} s, merged {w['B'] - w['E']:.3f} s; the larger step "
              f"{w['E'] - w['D']:.3f} s for "
              f"{med['E']['faulted_mb'] - med['D']['faulted_mb']:.0f} MB more faulted; the "
              f"layout at equal steps (D - C) {w['D'] - w['C']:+.3f} s\n")
        step = max(entries)
        print("| kind | branches | baskets now / merged | read now / merged (s, opens off) | "
              "per basket more (us) |")
        print("|---|---|---|---|---|")
        for kind, names in kinds(files[0], args.tree).items():
            if not names:
                continue
            r = in_process(files, merged, args.tree, step, names, args.repeats)
            print(f"| {kind} | {r['branches']} | {r['baskets_now']:,} / {r['baskets_merged']:,} "
                  f"| {r['read_now_s']:.3f} / {r['read_merged_s']:.3f} | "
                  f"{r['per_basket_us']:.1f} |")
    first_touch_ms_per_mb(True, 1)
    shared, private = [], []
    for _ in range(7):
        shared.append(first_touch_ms_per_mb(False))
        private.append(first_touch_ms_per_mb(True))
    print(f"\nfirst touch, ms per MB (7 samples each, alternating): shared mapping "
          f"{statistics.median(shared):.2f} ({min(shared):.2f}-{max(shared):.2f}), private "
          f"{statistics.median(private):.2f} ({min(private):.2f}-{max(private):.2f})")


if __name__ == "__main__":
    main()
