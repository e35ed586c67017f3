"""Benchmark: probing a directory of 10,000 small ROOT files (about 100 kB, 200 branches).

Targets (issue 12, tightening issue 2's 30 s and 5%): the default, sampled probe under 10 s and
under 500 MB peak memory, with its extrapolated totals within 1% of the exact full scan; the
full scan's time reported beside it.

    python -m benchmarks.timing.bench_probe [--files 10000] [--repeat 3] [--workdir DIR] [--cold]

Files are written once by uproot from 50 templates of different sizes (so the sample has to
extrapolate across unequal files) and copied; each probe runs in a fresh process
(``hep-advisor probe DIR --json``), timed by wall clock, its peak RSS from ``getrusage``.
``--cold`` drops the page cache before each run (needs root).  The probe reads the first 5
files with uproot's full reader and the others with ``hep_advisor.probes.ttreemeta`` (the TTree
members it needs only), so the full scan checks the fast reader's totals too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import WORK

TEMPLATES = 50
BRANCHES = 200


def write_templates(directory: Path) -> list[Path]:
    import uproot

    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(TEMPLATES):
        rng = np.random.default_rng(k)
        entries = int(rng.integers(150, 350))
        path = directory / f"template_{k:02d}.root"
        data = {}
        for i in range(BRANCHES):
            if i % 4 == 3:
                data[f"b{i:03d}"] = rng.poisson(2 + i % 7, entries).astype(np.int32)
            else:
                data[f"b{i:03d}"] = np.round(rng.normal(0, 1 + i % 5, entries), 2).astype(
                    np.float32)
        with uproot.recreate(path) as f:
            f.mktree("events", {k2: v.dtype for k2, v in data.items()})
            f["events"].extend(data)
        out.append(path)
    return out


def build(workdir: Path, n_files: int) -> Path:
    data = workdir / f"files_{n_files}"
    stamp = data / ".complete"
    if stamp.exists():
        return data
    if data.exists():
        shutil.rmtree(data)
    templates = write_templates(workdir / "templates")
    for i in range(n_files):
        sub = data / f"run{i // 1000:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(templates[(i * 7) % TEMPLATES], sub / f"f{i:05d}.root")
    stamp.write_text("ok\n")
    return data


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def run_probe(data: Path, sample: int, cold: bool) -> dict:
    if cold and not drop_caches():
        raise SystemExit("--cold needs root (cannot write /proc/sys/vm/drop_caches)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "probe", str(data), "--json",
                        "--sample", str(sample)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    doc = json.loads(r.stdout)
    return {"wall_s": wall, "peak_mb": peak_kb * 1024 / 1e6, "peak_is_max_so_far":
            peak_kb == before, "doc": doc}


def totals(doc: dict) -> dict[str, float]:
    (tree,) = doc["dataset"]["trees"]
    return {k: tree[k] for k in ("files", "entries", "compressed_bytes", "uncompressed_bytes")} | {
        "baskets": tree["baskets"]["count"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=None, help="default: the CLI's default")
    ap.add_argument("--workdir", type=Path, default=WORK)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()

    from hep_advisor.probes import DEFAULT_SAMPLE

    sample = DEFAULT_SAMPLE if args.sample is None else args.sample
    t0 = time.perf_counter()
    data = build(args.workdir, args.files)
    print(f"dataset: {args.files} files in {data} (built/reused in "
          f"{time.perf_counter() - t0:.1f} s)")
    runs = [run_probe(data, sample, args.cold) for _ in range(args.repeat)]
    full = run_probe(data, 0, args.cold)
    walls = [r["wall_s"] for r in runs]
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: take it after the sampled runs
    sampled_peak = runs[-1]["peak_mb"]
    exact, est = totals(full["doc"]), totals(runs[0]["doc"])
    ds = runs[0]["doc"]["dataset"]
    print(f"mode: {'cold (page cache dropped before each run)' if args.cold else 'warm'}")
    print(f"sampled probe (--sample {sample}): wall median {statistics.median(walls):.2f} s "
          f"(min {min(walls):.2f}, max {max(walls):.2f}, n={len(walls)}); peak RSS "
          f"{sampled_peak:.0f} MB; opened {ds['sampling']['opened_files']} of "
          f"{ds['sampling']['stated_files']}")
    print(f"full scan (--sample 0): wall {full['wall_s']:.2f} s; peak RSS "
          f"{full['peak_mb']:.0f} MB (max over all runs so far)")
    print(f"{'total':<20}{'exact':>16}{'extrapolated':>16}{'error':>10}")
    worst = 0.0
    for k in exact:
        err = (est[k] - exact[k]) / exact[k]
        worst = max(worst, abs(err))
        print(f"{k:<20}{exact[k]:>16,}{est[k]:>16,}{100 * err:>9.2f}%")
    ok = statistics.median(walls) < 10 and sampled_peak < 500 and worst < 0.01
    print(f"targets (<10 s, <500 MB, <1%): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
