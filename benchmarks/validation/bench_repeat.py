"""Repeat runs (issue 19): does ``hep-advisor report DATA --no-cache`` agree with itself?

    flock /tmp/hep-bench.lock python -m benchmarks.validation.bench_repeat --only NAME [--runs 5]
        [--budget 60] [--realised] [--out FILE.json]
    python -m benchmarks.validation.bench_repeat --only NAME --disk slow --lock --budget 30
        [--realised-from ADVICE_TRUE.json]

On a dataset of ``benchmarks/validation/bench_selfcheck.py`` (written there on first use, on the
disk named there: ``slow`` = an emulated 70 MB/s, 120 IOPS disk, ``fast`` = the work directory's
disk),
``--runs`` times ``hep-advisor report DATA --budget B --no-cache --format json`` (the data's
pages evicted before each run).  Printed:

* each run's top three recommendations: code, point and interval, and any ranking note;
* agreement: for every pair of runs and every recommendation of the first's top three that the
  second also makes, whether the first's point lies inside the second's interval;
* rankings: whether the top three's order differs between runs, and where it does, whether the
  reports said that the ranking may flip (``rank_note``);
* with ``--realised``: the two-worker gain (W001) realised -- the same job as the baseline
  (``hep_advisor.probes.readtests.parallel.run_job``: every branch, pull-based, cold), one worker
  against two, alternating, 3 pairs, ratio of medians -- against each run's W001 interval.

``NAME`` may also be a dataset of ``benchmarks/validation/bench_advice_true.py`` (``nano``,
``split``, ``wide``, ``tiny``, ``vectors``; written there on first use): its disk is ``--disk``, and
``--realised-from`` takes that benchmark's ``--out`` JSON: the gains it realised (printed
commands run as printed, the plain analysis before and after) against every run's interval of
the same recommendation.  ``--lock``: hold ``/tmp/hep-bench.lock`` around each report only
(instead of running the whole script under ``flock``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from itertools import permutations
from pathlib import Path
from typing import Any

from benchmarks.common import REPO
from benchmarks.validation.advice_true_data import DATASETS as TRUE_SETS
from benchmarks.validation.advice_true_data import write as write_true
from benchmarks.validation.bench_selfcheck import DATASETS, make_datasets
from testbench.common import BENCH_LOCK, timing_lock

TREE = "Events"


#: ``--report-args``: more arguments for ``report`` (e.g. ``--reader uproot.iterate``)
EXTRA: list[str] = []


def report(path: Path, budget: float, runner: Any) -> dict[str, Any]:
    argv = [sys.executable, "-m", "hep_advisor", "report", str(path), "--budget", f"{budget:g}",
            "--no-cache", "--format", "json", *EXTRA]
    t0 = time.perf_counter()
    r = runner(argv, capture_output=True, text=True, timeout=3 * budget + 240)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 2) or not r.stdout.strip().startswith("{"):
        return {"wall_s": wall, "error": r.stderr.strip()[-300:] or f"exit {r.returncode}"}
    doc = json.loads(r.stdout)
    recs = [{k: x.get(k) for k in ("code", "predicted_speedup", "speedup_low", "speedup_high",
                                   "severity", "contradicted", "rank_note", "workers")}
            for x in doc.get("recommendations", [])]
    model = (doc.get("datasets") or [{}])[0].get("model") or doc.get("model") or {}
    checks = model.get("self_check") or []
    eff = (model.get("parameters") or {}).get("parallel_efficiency") or {}
    return {"wall_s": wall, "recommendations": recs,
            "self_check_fail": sum(1 for c in checks if not c["ok"]),
            "self_check_n": len(checks),
            "parallel_efficiency": [eff.get("value"), eff.get("source")],
            "skipped": [s.get("test") for s in
                        ((doc.get("datasets") or [{}])[0].get("calibration") or {})
                        .get("skipped", [])]}


def shown(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The recommendations shown as gains (not the ones marked not recommended)."""
    return [r for r in run.get("recommendations", []) if not r.get("contradicted")]


def agreement(runs: list[dict[str, Any]], top: int = 3) -> tuple[int, int, list[str]]:
    """(inside, compared, misses): run i's point of each of its top recommendations inside
    run j's interval of the same recommendation."""
    inside = total = 0
    misses = []
    for (i, a), (j, b) in permutations(enumerate(runs), 2):
        other = {r["code"]: r for r in shown(b)}
        for r in shown(a)[:top]:
            o = other.get(r["code"])
            if o is None or o["speedup_low"] is None:
                continue
            total += 1
            if o["speedup_low"] <= r["predicted_speedup"] <= o["speedup_high"]:
                inside += 1
            else:
                misses.append(f"{r['code']} run {i + 1} {r['predicted_speedup']:.2f} outside run "
                              f"{j + 1} ({o['speedup_low']:.2f}–{o['speedup_high']:.2f})")
    return inside, total, misses


def realised_inside(runs: list[dict[str, Any]], realised: dict[str, float], top: int = 3
                    ) -> tuple[int, int, list[str]]:
    """(inside, compared, misses): each realised gain against every run's interval of the same
    recommendation among that run's top three."""
    inside = total = 0
    misses = []
    for i, run in enumerate(runs):
        for r in shown(run)[:top]:
            got = realised.get(r["code"])
            if got is None:
                continue
            total += 1
            if r["speedup_low"] <= got <= r["speedup_high"]:
                inside += 1
            else:
                misses.append(f"{r['code']} realised {got:.2f} outside run {i + 1} "
                              f"({r['speedup_low']:.2f}–{r['speedup_high']:.2f})")
    return inside, total, misses


def realised_workers(files: list[str], pairs: int = 3) -> float:
    from hep_advisor.probes.readtests.parallel import run_job

    one, two = [], []
    for _ in range(pairs):
        one.append(run_job(files, TREE, 1, cold=True).events_per_s)
        two.append(run_job(files, TREE, 2, cold=True).events_per_s)
    return statistics.median(two) / statistics.median(one)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", required=True, help="a dataset of bench_selfcheck.py")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--realised", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--disk", choices=("slow", "fast"), default="slow",
                    help="for a dataset of bench_advice_true.py")
    ap.add_argument("--lock", action="store_true", help="hold /tmp/hep-bench.lock around each "
                    "report only")
    ap.add_argument("--realised-from", nargs="+", default=None,
                    help="bench_advice_true.py's --out JSON files")
    ap.add_argument("--report-args", default="", help="more arguments for report, one string")
    ap.add_argument("--from-runs", default=None, help="an earlier --out file: compare its runs "
                    "(with --realised-from) instead of running report again")
    args = ap.parse_args()
    EXTRA.extend(shlex.split(args.report_args))
    if args.from_runs:
        saved = json.loads(Path(args.from_runs).read_text())
        return summarise(saved["dataset"], saved["disk"], saved["runs"], saved["realised_w001"],
                         args)
    name = args.only
    if name in TRUE_SETS:
        data, disk = write_true(name), args.disk
    else:
        data, disk = make_datasets([name])[name], DATASETS[name][5]
    runs: list[dict[str, Any]] = []
    realised: float | None = None

    def go(path: Path, runner: Any, drop: Any) -> None:
        nonlocal realised
        for k in range(args.runs):
            with timing_lock(BENCH_LOCK if args.lock else None):
                drop(path)
                res = report(path, args.budget, runner)
            runs.append(res)
            if "error" in res:
                print(f"run {k + 1}: error: {res['error']}", flush=True)
                continue
            tops = ", ".join(
                f"{r['code']} {r['predicted_speedup']:.2f} ({r['speedup_low']:.2f}–"
                f"{r['speedup_high']:.2f})" + (" [may flip]" if r.get("rank_note") else "")
                for r in shown(res)[:3])
            eff, src = res["parallel_efficiency"]
            print(f"run {k + 1} ({res['wall_s']:.0f} s; self-check misses "
                  f"{res['self_check_fail']} of {res['self_check_n']}; parallel efficiency "
                  f"{eff if eff is None else round(eff, 2)} {src}; skipped "
                  f"{','.join(res['skipped']) or '-'}): {tops}", flush=True)
        if args.realised:
            files = sorted(str(p) for p in path.glob("*.root"))
            realised = runner_realised(files, runner)

    def runner_realised(files: list[str], runner: Any) -> float:
        code = ("import sys, json; "
                "from benchmarks.validation.bench_repeat import realised_workers; "
                "print(json.dumps(realised_workers(json.loads(sys.argv[1]))))")
        r = runner([sys.executable, "-c", code, json.dumps(files)], capture_output=True,
                   text=True, timeout=900, cwd=REPO)
        if r.returncode != 0:
            print(f"realised: error {r.stderr.strip()[-300:]}", file=sys.stderr)
            return float("nan")
        return float(json.loads(r.stdout.strip().splitlines()[-1]))

    if disk == "fast":
        from testbench import drop_caches

        go(data, subprocess.run, lambda p: drop_caches(p, global_cache=False))
    else:
        from testbench import availability, emulated_disks

        ok, why = availability()
        if not ok:
            print(f"slow disk unavailable: {why}", file=sys.stderr)
            return 1
        size = int(sum(p.stat().st_size for p in data.glob("*.root")) / 1e6 * 1.4) + 128
        with emulated_disks(n=1, size_mb=size) as bench:
            dst = bench.mount_point / name
            shutil.copytree(data, dst)
            os.sync()

            def drop(p: Path) -> None:
                bench.drop_caches(p, global_cache=False)
                bench.reset_throttle()

            go(dst, bench.run, drop)

    return summarise(name, disk, runs, realised, args)


def summarise(name: str, disk: str, runs: list[dict[str, Any]], realised: float | None,
              args: argparse.Namespace) -> int:
    ok_runs = [r for r in runs if "error" not in r]
    inside, total, misses = agreement(ok_runs)
    orders = {tuple(r["code"] for r in shown(x)[:3]) for x in ok_runs}
    flips = len(orders) > 1
    said = all(any(r.get("rank_note") for r in shown(x)[:3]) for x in ok_runs) if flips else None
    print(f"{name} ({disk}): points inside the other runs' intervals: {inside} of {total}")
    for m in misses:
        print(f"  miss: {m}")
    print(f"top-three orders: {sorted(orders)}; flips: {flips}"
          + ("" if said is None else f"; every report said the ranking may flip: {said}"))
    if realised is not None:
        ws = [next((r for r in shown(x) if r["code"] == "W001"), None) for x in ok_runs]
        ins = [w["speedup_low"] <= realised <= w["speedup_high"] for w in ws if w]
        print(f"W001 realised (1 -> 2 workers, cold, every branch): {realised:.2f}x; inside "
              f"{sum(ins)} of {len(ins)} runs' intervals; points "
              + ", ".join(f"{w['predicted_speedup']:.2f}" for w in ws if w))
    gains: dict[str, float] = {}
    if args.realised_from:
        for res in (x for f in args.realised_from for x in json.loads(Path(f).read_text())):
            if res["dataset"] == name and res["disk"] == disk:
                gains.update({r["code"]: r["realised"] for r in res["rows"]
                              if "realised" in r and not r.get("option")})
        n_in, tot, miss = realised_inside(ok_runs, gains)
        print(f"realised gains ({', '.join(f'{c} {g:.2f}' for c, g in gains.items()) or 'none'})"
              f" inside the runs' intervals: {n_in} of {tot}")
        for m in miss:
            print(f"  miss: {m}")
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": name, "disk": disk, "runs": runs,
                                              "realised_w001": realised,
                                              "realised_from": gains}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
