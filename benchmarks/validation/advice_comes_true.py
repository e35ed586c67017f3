"""Advice that comes true: apply the advisor's first recommendations and measure the gain.

    python -m benchmarks.validation.advice_comes_true [--budget 60] [--repeats 3] [--top 3]

1. The demo's small files (64 x 1 MB, 205 branches) are copied onto an emulated 70 MB/s,
   120 IOPS disk (a loop device throttled by cgroup-v1 blkio; run as root).
2. ``advise`` calibrates them inside the throttled cgroup and ranks its recommendations.
3. The analysis as it runs now (one worker reading every branch, cold) is measured, then each
   of the first ``--top`` recommendations is applied and the same events are measured again:
   merge (the recommended ``hadd`` grouping, written on the emulated disk), cache (the files
   read once before: pre-staged in the page cache), workers (the recommended count), rewrite
   and compression (``hadd -O`` / ``hadd -fNNN``), read-ahead (``blockdev --setra``), layout
   and TTreeCache are reported as not applied (they need other hardware or ROOT's loop).
4. Realised speed-up (events/s, median of ``--repeats`` runs) against the predicted one.

Target (issue 5): realised within 25% of predicted.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

TREE = "esdTree"


def hadd_path() -> str:
    found = shutil.which("hadd")
    if found:
        return found
    import ROOT  # type: ignore[import-not-found]

    return str(Path(ROOT.__file__).parent / "bin" / "hadd")


def calibrate_there(path: str, budget: float):  # type: ignore[no-untyped-def]
    """Inside the cgroup: the probes and the calibration (advise's first steps)."""
    from hep_advisor.probes import probe_dataset, probe_site
    from hep_advisor.probes.readtests.calibrate import calibrate

    ds = probe_dataset([path])
    site = probe_site([path])
    return site, ds, calibrate(ds, budget_s=budget)


def events_per_s(files: list[str], workers: int, cold: bool, repeats: int) -> list[float]:
    """Inside the cgroup: the job's events/s, ``repeats`` times."""
    from hep_advisor.probes.readtests.parallel import run_job

    return [run_job(files, TREE, workers, cold=cold).events_per_s for _ in range(repeats)]


def merged_files(small: list[str], target_mb: float, out_dir: Path, optimise: bool) -> list[str]:
    """hadd the files in groups to about ``target_mb`` each, as the recommendation says."""
    per = os.path.getsize(small[0]) / 1e6
    k = max(2, round(target_mb / per))
    out_dir.mkdir(parents=True, exist_ok=True)
    outs = []
    for i in range(math.ceil(len(small) / k)):
        target = out_dir / f"merged_{i:03d}.root"
        cmd = [hadd_path(), "-j", "2", *(["-O"] if optimise else []), "-fk", str(target),
               *small[i * k:(i + 1) * k]]
        subprocess.run(cmd, check=True, capture_output=True)
        outs.append(str(target))
    return outs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top", type=int, default=3)
    args = ap.parse_args()

    from hep_advisor.demo import ensure_demo
    from hep_advisor.pipeline.derive import advise_from
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        print(f"emulated disks unavailable: {why}")
        return 1
    demo = ensure_demo()
    with emulated_disks(n=1, size_mb=400, read_mb_per_s=70.0, read_iops=120) as bench:
        small_dir = bench.mount_point / "small_files"
        shutil.copytree(demo / "small_files", small_dir)
        os.sync()
        small = sorted(str(p) for p in small_dir.glob("*.root"))
        bench.drop_caches(*small)
        print("emulated 70 MB/s, 120 IOPS disk: calibrating the small files ...", flush=True)
        site, ds, cal = bench.call(calibrate_there, str(small_dir), args.budget)
        advice = advise_from(site, ds, cal, label="small files", inputs=(str(small_dir),))
        print(advice.verdict.headline if advice.verdict else "no verdict")
        for r in advice.recommendations:
            print(f"  {r.code} {r.title}: {r.predicted_speedup:.2f}x "
                  f"({r.speedup_low:.2f}-{r.speedup_high:.2f}) at {r.workers} worker(s)")
        now_w = advice.verdict.workers if advice.verdict else 1
        base = bench.call(events_per_s, small, now_w, True, args.repeats)
        b_med = statistics.median(base)
        print(f"as now: {b_med:,.0f} events/s ({now_w} worker, cold; runs "
              f"{', '.join(f'{x:,.0f}' for x in base)})", flush=True)
        rows = []
        for r in advice.recommendations[: args.top]:
            runs: list[float] | None = None
            how = ""
            if r.kind == "merge":
                target = next(float(e.value) for e in r.evidence if e.name == "target size")
                optimise = any("-O" in (a.command or "") for a in r.actions)
                files = merged_files(small, target, bench.mount_point / "merged", optimise)
                os.sync()
                bench.drop_caches(*files)
                runs = bench.call(events_per_s, files, r.workers, True, args.repeats)
                how = f"hadd{' -O' if optimise else ''} into {len(files)} files of ~{target:g} MB"
            elif r.kind == "cache":
                runs = bench.call(events_per_s, small, r.workers, False, args.repeats)
                how = "files read once before (page cache)"
            elif r.kind == "workers":
                runs = bench.call(events_per_s, small, r.workers, True, args.repeats)
                how = f"{r.workers} workers"
            elif r.kind == "readahead":
                kb = float(r.title.split("to ")[1].split(" KiB")[0].replace(",", ""))
                subprocess.run(["blockdev", "--setra", str(int(2 * kb)), bench.device],
                               check=True)
                runs = bench.call(events_per_s, small, r.workers, True, args.repeats)
                how = f"read-ahead {kb:g} KiB"
            if runs is None:
                print(f"  {r.code} ({r.kind}): not applied by this benchmark")
                rows.append((r, None, "not applied"))
                continue
            s = statistics.median(runs) / b_med
            rows.append((r, s, how))
            print(f"  {r.code} {how}: realised {s:.2f}x vs predicted {r.predicted_speedup:.2f}x "
                  f"(runs {', '.join(f'{x:,.0f}' for x in runs)} events/s)", flush=True)
    print("\n| recommendation | applied as | predicted (90% interval) | realised | "
          "realised / predicted |\n|---|---|---|---|---|")
    worst = 0.0
    for r, s, how in rows:
        if s is None:
            print(f"| {r.code} {r.kind} | {how} | {r.predicted_speedup:.2f}x | — | — |")
            continue
        ratio = s / r.predicted_speedup
        worst = max(worst, abs(ratio - 1))
        print(f"| {r.code} {r.kind} | {how} | {r.predicted_speedup:.2f}x "
              f"({r.speedup_low:.2f}-{r.speedup_high:.2f}) | {s:.2f}x | {ratio:.2f} |")
    print(f"\nlargest deviation: {100 * worst:.0f}% (target 25%)")
    return 0 if worst <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
