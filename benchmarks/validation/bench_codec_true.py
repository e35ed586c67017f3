"""C001 as printed against what it realises (issue 11): ``hep-advisor report DATA --reader
uproot.iterate``, then C001's printed command (``hadd -O -f<setting>``: the files merged into
one, baskets refilled, the new codec) run with bash as printed, then the user's plain analysis
(``advice_true_analysis.py``: ``uproot.iterate`` over every branch, uproot's defaults, one
process), cold, on this machine's own disk (a plain directory copy: no throttling).

    python -m benchmarks.validation.bench_codec_true DATA_DIR [DATA_DIR ...] [--repeats 3]
        [--budget 30] [--report-args "--reader uproot.iterate"] [--work /tmp/codec/run]
        [--out FILE.json]

For each dataset: the report (cold, under ``/tmp/hep-bench.lock``); C001's first printed
command, and its option (each file recompressed alone, ``recompressed_000.root`` ...) where it
has one, run outside the lock; then ``--repeats`` alternating cold passes of the analysis on
today's files, the command's output and the option's (under the lock); realised = median
events/s after / median before.  Prints predicted (interval), realised, inside, within 20%.
The helpers (report, cold passes, applying a printed command) are ``bench_advice_true.py``'s.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.validation import bench_advice_true as bat


def _option_command(rec: dict[str, Any]) -> str | None:
    """The printed per-file command (the option: the codec alone, no merge), if any."""
    for a in rec.get("actions") or []:
        cmd = a.get("command") or ""
        if "hadd " in cmd and "recompressed_" in cmd:
            return str(cmd)
    return None


def _run_command(disk: bat.Disk, cmd: str, out: Path) -> tuple[list[Path], str]:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    r = disk.run(["bash", "-c", cmd], env=bat.env(), cwd=str(out), timeout=1200)
    if r.returncode != 0:
        raise RuntimeError(f"the printed command failed ({r.returncode}): "
                           f"{r.stderr.strip()[-200:]}")
    made = sorted(out.glob("*.root"))
    if not made:
        raise RuntimeError("the printed command wrote no ROOT file")
    subprocess.run(["sync"], check=False)
    mb = sum(p.stat().st_size for p in made) / 1e6
    return made, f"{len(made)} file(s), {mb:.1f} MB, {time.perf_counter() - t0:.0f} s"


def run_one(src: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    disk = bat.Disk("fast")
    disk.root = work
    data = work / src.name
    if not data.exists():
        shutil.copytree(src, data)
        subprocess.run(["sync"], check=False)
    files = sorted(data.glob("*.root"))
    with bat.locked(f"{src.name} report (fast)"):
        doc = bat.report(disk, data, args.budget)
    recs = doc.get("recommendations") or []
    print(f"  report {doc['_wall_s']:.0f} s (code: {doc['_tree']}): " + ", ".join(
        f"{r['code']} {r['predicted_speedup']:.2f}" for r in recs), flush=True)
    c001 = next((r for r in recs if r["code"] == "C001"), None)
    res: dict[str, Any] = {"dataset": src.name, "files": len(files),
                           "mb": round(sum(f.stat().st_size for f in files) / 1e6, 1),
                           "command": doc["_command"], "tree": doc["_tree"],
                           "recommendations": [(r["code"], r["predicted_speedup"])
                                               for r in recs], "rows": []}
    if c001 is None:
        res["note"] = "C001 did not fire"
        print("  C001 did not fire", flush=True)
        return res
    print(f"  C001: {c001['title']}: {c001['predicted_speedup']:.2f} "
          f"({c001['speedup_low']:.2f}-{c001['speedup_high']:.2f})", flush=True)
    variants: list[tuple[str, list[Path]]] = [("before", files)]
    rows = []
    cmd = bat.shell_command(c001)
    if cmd is None:
        raise RuntimeError("C001 printed no shell command")
    made, how = _run_command(disk, cmd, work / f"{src.name}_C001")
    print(f"  C001 as printed: {how}", flush=True)
    variants.append(("C001", made))
    rows.append({"key": "C001", "predicted": c001["predicted_speedup"],
                 "low": c001["speedup_low"], "high": c001["speedup_high"], "applied": how,
                 "printed": cmd})
    opt_cmd = _option_command(c001)
    opt = next((o for o in c001.get("options") or []
                if o["name"].startswith("recompress file by file")), None)
    if opt_cmd and opt:
        made, how = _run_command(disk, opt_cmd, work / f"{src.name}_C001_option")
        print(f"  C001 option (file by file): {how}", flush=True)
        variants.append(("C001 option", made))
        rows.append({"key": "C001 option", "predicted": opt["predicted_speedup"],
                     "low": opt["speedup_low"], "high": opt["speedup_high"], "applied": how,
                     "printed": opt_cmd})
    rates: dict[str, list[float]] = {v: [] for v, _ in variants}
    with bat.locked(f"{src.name} passes (fast)"):
        for k in range(args.repeats):
            for v, fs in (variants if k % 2 == 0 else variants[::-1]):
                rates[v].append(bat.analysis(disk, fs))
            print("  pass " + str(k + 1) + ": " + ", ".join(
                f"{v} {rates[v][-1]:,.0f}" for v, _ in variants) + " events/s", flush=True)
    before = statistics.median(rates["before"])
    for row in rows:
        after = rates[row["key"]]
        realised = statistics.median(after) / before
        ratios = sorted(a / b for a, b in zip(after, rates["before"], strict=True))
        row.update(realised=realised, ratio=realised / row["predicted"],
                   inside=row["low"] <= realised <= row["high"],
                   within20=abs(realised / row["predicted"] - 1) <= 0.2,
                   after_events_per_s=after, pass_ratios=ratios)
    res.update(rows=rows, before_events_per_s=rates["before"],
               measured_at=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
               load=bat.os.getloadavg()[0])
    if args.keep_doc:
        res["report"] = doc
    return res


def table(results: list[dict[str, Any]]) -> None:
    print("\n| dataset | what | predicted (interval) | realised (per-pass ratios) | inside | "
          "within 20% |\n|---|---|---|---|---|---|")
    for res in results:
        if not res.get("rows"):
            print(f"| {res['dataset']} | {res.get('note', 'no row')} | | | | |")
        for r in res.get("rows") or []:
            if "realised" not in r:
                continue
            per = ", ".join(f"{x:.2f}" for x in r["pass_ratios"])
            print(f"| {res['dataset']} | {r['key']} | {r['predicted']:.2f} ({r['low']:.2f}–"
                  f"{r['high']:.2f}) | {r['realised']:.2f} ({per}) | "
                  f"{'yes' if r['inside'] else 'no'} | {'yes' if r['within20'] else 'no'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--report-args", default="--reader uproot.iterate")
    ap.add_argument("--work", type=Path, default=Path("/tmp/codec/run"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep-doc", action="store_true", help="keep each report in --out")
    ap.add_argument("--table", nargs="+", default=None, metavar="JSON")
    args = ap.parse_args()
    if args.table:
        table([res for f in args.table for res in json.loads(Path(f).read_text())])
        return 0
    bat.EXTRA.extend(shlex.split(args.report_args))
    bat.WORK.mkdir(parents=True, exist_ok=True)  # the analysis' file lists go there
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for src in args.data:
        print(f"\n[{src.name}] {src}", flush=True)
        try:
            results.append(run_one(src.resolve(), args.work, args))
        except Exception as exc:  # a dataset that fails is a line that says so
            print(f"  {src.name}: {type(exc).__name__}: {exc}", flush=True)
        finally:
            for p in args.work.glob(f"{src.name}*"):
                shutil.rmtree(p, ignore_errors=True)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
