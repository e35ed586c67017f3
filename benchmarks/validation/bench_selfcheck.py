"""The model through its own data (issue 19): ``hep-advisor calibrate DATA --budget B --json`` on
six datasets unlike the demo, and the fitted model's self-check (its prediction for every
configuration the calibration measured, against the measurement).

    flock /tmp/hep-bench.lock python -m benchmarks.validation.bench_selfcheck [--budgets 60,30]
        [--only NAME,...] [--out FILE.json]
    python -m benchmarks.validation.bench_selfcheck --refit KEPT.json ...   # refit kept documents
        [--decide-form]        # ... deciding the device's form from their request sweeps

Datasets (written once under ``benchmarks/_work/selfcheck``, git-ignored; none is the demo's
205-branch ZLIB ``esdTree``):

=================  =======  =========================================================  ====
name               writer   files x entries x branches, compression (size)              disk
=================  =======  =========================================================  ====
``root_small``     ROOT     60 x 300 x 400 float branches, ZLIB-1 (0.4 MB files, 25 MB)  slow
``root_nano``      ROOT     6 x 4,000 x 1,000 float branches, LZMA-9 (11 MB files)       slow
``uproot_big``     uproot   1 x 400,000 x 100 float32/int32 branches, LZ4 (135 MB)      slow
``root_big``       ROOT     2 x 40,000 x 150 float branches, ZSTD-5 (16 MB files)       fast
``uproot_many``    uproot   4 x 3,000 x 1,500 float32/int32 branches, ZSTD (12 MB each)  fast
``uproot_small``   uproot   40 x 2,000 x 120 branches, LZMA-9 (0.6 MB files)            fast
=================  =======  =========================================================  ====

``slow`` is an emulated 70 MB/s, 120 IOPS disk (loop device + cgroup-v1 throttle, as root,
see :mod:`testbench`; ``calibrate`` runs inside the throttled cgroup); ``fast`` is the work
directory's own disk, unthrottled.  The data's pages are evicted before each run.

Printed per dataset and budget: the points passing / failing, the median |log ratio|, and (on
stderr) each failing point with its ratio (predicted / measured), the tolerance it was held to
and where that tolerance came from (its samples, the parts of one sample, or an assumption).
Each run's ``calibrate --json`` document is kept beside ``--out`` (to refit it later).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common

WORK = common.WORK / "selfcheck"


#: name -> (writer, files, entries, branches, compression, disk)
DATASETS: dict[str, tuple[str, int, int, int, str, str]] = {
    "root_small": ("ROOT", 60, 300, 400, "101", "slow"),
    "root_nano": ("ROOT", 6, 4_000, 1_000, "209", "slow"),
    "uproot_big": ("uproot", 1, 400_000, 100, "LZ4", "slow"),
    "root_big": ("ROOT", 2, 40_000, 150, "505", "fast"),
    "uproot_many": ("uproot", 4, 3_000, 1_500, "ZSTD", "fast"),
    "uproot_small": ("uproot", 40, 2_000, 120, "LZMA", "fast"),
}


def _uproot_write(path: Path, entries: int, branches: int, comp: str, seed: int) -> None:
    import numpy as np
    import uproot

    compression = {"LZ4": uproot.LZ4(4), "ZSTD": uproot.ZSTD(5), "LZMA": uproot.LZMA(9),
                   "ZLIB": uproot.ZLIB(1)}[comp]
    rng = np.random.default_rng(seed)
    types = {f"b{i}": (np.float32 if i % 4 else np.int32) for i in range(branches)}
    tmp = path.with_suffix(".tmp")
    chunk = max(1000, min(entries, 50_000))
    with uproot.recreate(tmp, compression=compression) as f:
        f.mktree("Events", types)
        for start in range(0, entries, chunk):
            k = min(chunk, entries - start)
            f["Events"].extend({
                n: (rng.integers(0, 20, k).astype(np.int32) if t is np.int32 else
                    np.round(rng.normal(size=k), 3).astype(np.float32))
                for n, t in types.items()})
    tmp.rename(path)


def make_datasets(names: list[str], work: Path = WORK) -> dict[str, Path]:
    """Write the datasets not yet written; return their directories."""
    specs = []
    for n in names:
        writer, files, entries, branches, comp, _ = DATASETS[n]
        d = work / n
        if len(list(d.glob("*.root"))) >= files:
            continue
        if writer == "ROOT":
            specs.append([str(d), files, entries, branches, int(comp)])
        else:
            d.mkdir(parents=True, exist_ok=True)
            for k in range(files):
                p = d / f"part_{k:03d}.root"
                if not p.exists():
                    _uproot_write(p, entries, branches, comp, 100 + k)
    if specs:
        from testbench.rootwriter import write_flat_root

        write_flat_root(specs, name="part_{k:03d}.root", seed=1000)
    return {n: work / n for n in names}


def _size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.glob("*.root")) / 1e6


def run_one(path: Path, budget: float, runner: Any, keep: Path | None = None
            ) -> dict[str, Any]:
    """One ``calibrate --json``; its document is kept in ``keep`` where given (to refit)."""
    argv = [sys.executable, "-m", "hep_advisor", "calibrate", str(path), "--budget", f"{budget:g}",
            "--json"]
    t0 = time.perf_counter()
    r = runner(argv, capture_output=True, text=True, timeout=3 * budget + 180)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return {"wall_s": wall, "error": r.stderr.strip()[-300:] or f"exit {r.returncode}"}
    if keep is not None:
        keep.write_text(r.stdout)
    doc = json.loads(r.stdout)
    model = doc.get("model") or {}
    return {"wall_s": wall, "self_check": model.get("self_check") or []}


def refit(paths: list[str], decide_form: bool = False) -> int:
    """The self-check of kept ``calibrate --json`` documents, refitted with this code;
    ``decide_form``: the device's form decided again from each document's request sweep
    (documents written before the calibration carried it read as the additive form)."""
    from dataclasses import asdict, replace

    from hep_advisor.document.report import calibration_parts
    from hep_advisor.models.calibration import model_from_calibration
    from hep_advisor.probes.readtests.raw import fit_access

    for p in paths:
        site, ds, cal = calibration_parts(json.loads(Path(p).read_text()), p)
        form = ""
        if decide_form and cal.raw_read is not None:
            fit = fit_access(cal.request_sweep, cal.raw_read.cold_mb_per_s)
            cal = replace(cal, raw_read=replace(cal.raw_read, device_limit=fit.limit,
                                                access_time_ms=fit.access_time_ms))
            form = f" (device form: {fit.limit or 'undecided'})"
        model, _, _ = model_from_calibration(cal, ds, site)
        s = summary({"self_check": [asdict(c) for c in model.self_check_]})
        print(f"{Path(p).name}: {s['n'] - s['fail']} of {s['n']} pass{form}", flush=True)
        for c in model.self_check_:
            print(f"  {c.test:30s} measured {c.measured:10.4g} predicted {c.predicted:10.4g} "
                  f"ratio {c.ratio:5.2f} ±{100 * c.tolerance:3.0f}% ({c.spread_source}, "
                  f"n={c.samples}): {c.cause}")
    return 0


def summary(res: dict[str, Any]) -> dict[str, Any]:
    checks = res.get("self_check", [])
    bad = [c for c in checks if not c["ok"]]
    logs = sorted(abs(math.log(c["ratio"])) for c in checks if c["ratio"] > 0)
    return {"n": len(checks), "fail": len(bad),
            "median_abs_log": logs[len(logs) // 2] if logs else None, "bad": bad}


def _line(c: dict[str, Any]) -> str:
    src = c.get("spread_source") or "?"
    return (f"    miss: {c['test']}: ratio {c['ratio']:.2f} (tolerance ±"
            f"{100 * c['tolerance']:.0f}%, {src}; term: {c['term']})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="60,30")
    ap.add_argument("--only", default=",".join(DATASETS))
    ap.add_argument("--write-only", action="store_true", help="write the datasets and stop")
    ap.add_argument("--mb-per-s", type=float, default=70.0)
    ap.add_argument("--iops", type=int, default=120)
    ap.add_argument("--out", default=str(WORK / "results.json"))
    ap.add_argument("--refit", nargs="+", metavar="DOC",
                    help="refit kept calibrate --json documents with this code and stop")
    ap.add_argument("--decide-form", action="store_true",
                    help="with --refit: decide the device's form again from each document's "
                         "request sweep (for documents written before it was recorded)")
    args = ap.parse_args()
    if args.refit:
        return refit(args.refit, args.decide_form)
    budgets = [float(b) for b in args.budgets.split(",")]
    names = [n for n in args.only.split(",") if n]
    data = make_datasets(names)
    if args.write_only:
        for n in names:
            print(f"{n}: {_size_mb(data[n]):.1f} MB in {len(list(data[n].glob('*.root')))} files")
        return 0
    out_path = Path(args.out)
    results: list[dict[str, Any]] = (json.loads(out_path.read_text())
                                     if out_path.exists() else [])
    print("| dataset | disk | MB | budget s | points | pass | fail | median abs(log ratio) |")
    print("|---|---|---|---|---|---|---|---|", flush=True)

    def record(name: str, budget: float, res: dict[str, Any]) -> None:
        disk = DATASETS[name][5]
        if "error" in res:
            print(f"| {name} | {disk} | | {budget:g} | error: {res['error']} |", flush=True)
        else:
            s = summary(res)
            med = f"{s['median_abs_log']:.3f}" if s["median_abs_log"] is not None else "–"
            print(f"| {name} | {disk} | {_size_mb(data[name]):.1f} | {budget:g} | {s['n']} | "
                  f"{s['n'] - s['fail']} | {s['fail']} | {med} |", flush=True)
            for c in s["bad"]:
                print(_line(c), file=sys.stderr, flush=True)
        results.append({"dataset": name, "disk": disk, "budget_s": budget,
                        "time": time.strftime("%H:%M:%S"), **res})
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(results, indent=1))

    def keep(name: str, budget: float) -> Path:
        return out_path.with_name(f"{out_path.stem}_{name}_{budget:g}_{time.strftime('%H%M%S')}"
                                  ".json")

    fast = [n for n in names if DATASETS[n][5] == "fast"]
    slow = [n for n in names if DATASETS[n][5] == "slow"]
    if fast:
        from testbench import drop_caches

        for name in fast:
            for budget in budgets:
                drop_caches(data[name], global_cache=False)
                record(name, budget, run_one(data[name], budget, subprocess.run,
                                             keep(name, budget)))
    if slow:
        from testbench import availability, emulated_disks

        ok, why = availability()
        if not ok:
            print(f"slow disk skipped: {why}", file=sys.stderr)
            return 1
        size = int(sum(_size_mb(data[n]) for n in slow) * 1.4) + 128
        with emulated_disks(n=1, size_mb=size, read_mb_per_s=args.mb_per_s,
                            read_iops=args.iops) as bench:
            for name in slow:
                shutil.copytree(data[name], bench.mount_point / name)
            os.sync()
            for name in slow:
                dst = bench.mount_point / name
                for budget in budgets:
                    bench.drop_caches(dst, global_cache=False)
                    bench.reset_throttle()
                    record(name, budget, run_one(dst, budget, bench.run, keep(name, budget)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
