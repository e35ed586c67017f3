"""``hep-advisor trace`` on real programs, cold, on the emulated 70 MB/s, 120 IOPS disk.

    flock /tmp/hep-bench.lock python benchmarks/bench_trace.py [--workdir DIR]
        [--programs default step arrays getentry] [--layouts interleaved small]
        [--no-heldout] [--repeat N]

Writes (once, kept in ``--workdir``) three datasets with ROOT:

- ``interleaved``: one file, 400 float branches, 20,000 entries, ZLIB-1, ``SetAutoFlush(0)``
  (baskets interleaved across branches in the order they fill);
- ``small``: 20 files x 300 entries x 200 float branches, ZLIB-1 (ROOT's default AutoFlush,
  never reached);
- ``heldout``: a file no test has seen (200 branches of floats and doubles, 20,000 entries,
  16 kB baskets, ZLIB-1, ``SetAutoFlush(0)``) for the pre-pass check.

Then, on an emulated disk (``testbench``: a loop device throttled by a blkio cgroup, 128 kB
read-ahead), for each program x layout: the program run cold without tracing (wall time), and
cold under ``hep-advisor trace --json --cold`` (the whole tree inside the throttled cgroup).
Printed per case: the traced requests and bytes of the ROOT files, by kind; the bytes and
reads of the emulated disk seen in ``/sys/block`` during the traced run against the cgroup's
own counters (``blkio.throttle.io_service_bytes``/``io_serviced``); the time split's miss
against the wall time; the tracer's overhead, measured (traced wall / untraced wall - 1) and
estimated; the reader findings with their predictions.

Programs: ``default``: ``uproot.iterate(f"{path}:Events")`` (the documented default
``step_size="100 MB"``); ``step``: ``tree.iterate(step_size=1000)``; ``arrays``:
``tree.arrays(filter_name=20 branches)``; ``getentry``: ROOT ``TTree::GetEntry`` loop with
``SetCacheSize(0)``.

Held out: the ``default`` program traced on ``heldout``; U001's predicted speed-up and
interval, the pre-pass cost it states against the measured pre-pass, and the fixed program
(``step_size`` as printed) run cold: realised speed-up = untraced default / untraced fixed.
Needs root (the emulated disk), ROOT (the ``root`` extra) and strace.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TREE = "Events"

WRITER = r"""
#include "TFile.h"
#include "TTree.h"
#include "TRandom3.h"
#include <vector>
void hep_trace_write(const char* path, int nbranch, int nent, int basket, long autoflush,
                     int doubles) {
  TFile f(path, "RECREATE", "", 101);
  TTree t("Events", "Events");
  std::vector<float> fv(nbranch);
  std::vector<double> dv(nbranch);
  for (int i = 0; i < nbranch; ++i) {
    if (doubles && i % 2) t.Branch(Form("b%d", i), &dv[i], Form("b%d/D", i), basket);
    else t.Branch(Form("b%d", i), &fv[i], Form("b%d/F", i), basket);
  }
  if (autoflush != 1) t.SetAutoFlush(autoflush);
  TRandom3 r(nbranch + nent);
  for (int e = 0; e < nent; ++e) {
    for (int i = 0; i < nbranch; ++i) { fv[i] = (i % 3) ? r.Gaus() : float(e % 97);
                                        dv[i] = r.Gaus(); }
    t.Fill();
  }
  t.Write();
  f.Close();
}
"""

WRITE = r"""
import json, sys, ROOT
ROOT.gInterpreter.Declare(sys.argv[1])
for path, nb, ne, basket, af, dbl in json.loads(sys.argv[2]):
    ROOT.hep_trace_write(path, nb, ne, basket, af, dbl)
"""

PROGRAMS = {
    "default": """\
import sys, uproot
n = 0
for path in sys.argv[1:]:
    for a in uproot.iterate(path + ":Events", library="np"):
        n += len(a["b0"])
print("entries", n)
""",
    "step": """\
import sys, uproot
n = 0
for path in sys.argv[1:]:
    with uproot.open(path) as f:
        for a in f["Events"].iterate(step_size=1000, library="np"):
            n += len(a["b0"])
print("entries", n)
""",
    "arrays": """\
import sys, uproot
n = 0
names = [f"b{i}" for i in range(0, 200, 10)]
for path in sys.argv[1:]:
    with uproot.open(path) as f:
        n += len(f["Events"].arrays(filter_name=names, library="np")["b0"])
print("entries", n)
""",
    "getentry": """\
import sys, ROOT
n = 0
for path in sys.argv[1:]:
    f = ROOT.TFile.Open(path)
    t = f.Get("Events")
    t.SetCacheSize(0)
    for i in range(t.GetEntries()):
        n += t.GetEntry(i) > 0
    f.Close()
print("entries", n)
""",
}


def write_data(work: Path) -> dict[str, list[Path]]:
    small = [work / "small" / f"s{i:02d}.root" for i in range(20)]
    layouts = {"interleaved": [work / "interleaved.root"], "small": small,
               "heldout": [work / "heldout.root"]}
    if all(p.exists() for ps in layouts.values() for p in ps):
        return layouts
    (work / "small").mkdir(parents=True, exist_ok=True)
    specs = [[str(work / "interleaved.root"), 400, 20000, 32000, 0, 0],
             [str(work / "heldout.root"), 200, 20000, 16000, 0, 1],
             *[[str(p), 200, 300, 32000, 1, 0] for p in small]]
    subprocess.run([sys.executable, "-c", WRITE, WRITER, json.dumps(specs)], check=True)
    return layouts


def run_cold(bench: Any, argv: list[str], paths: list[Path]) -> tuple[float, str, str]:
    bench.drop_caches(*paths)
    bench.reset_throttle()
    t0 = time.perf_counter()
    done = bench.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]}...: exit {done.returncode}: {done.stderr[-500:]}")
    return wall, done.stdout, done.stderr


def traced(bench: Any, prog: Path, paths: list[Path]) -> tuple[dict[str, Any], tuple[int, int]]:
    before = bench.stats()[bench.major_minor]
    _, out, _ = run_cold(bench, [sys.executable, "-m", "advisor", "trace", "--json", "--cold",
                                 "--", sys.executable, str(prog), *map(str, paths)], paths)
    after = bench.stats()[bench.major_minor]
    return json.loads(out)["trace"], (after[0] - before[0], after[1] - before[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/trace/bench"))
    ap.add_argument("--programs", nargs="*", default=list(PROGRAMS))
    ap.add_argument("--layouts", nargs="*", default=["interleaved", "small"])
    ap.add_argument("--no-heldout", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="untraced runs per case (median)")
    opts = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace not found", file=sys.stderr)
        return 2
    from testbench import emulated_disks

    work = opts.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    layouts = write_data(work)
    for name, src in PROGRAMS.items():
        (work / f"{name}.py").write_text(src)
    print(f"data ready in {time.perf_counter() - t0:.0f} s under {work}", flush=True)
    rows: list[str] = []
    with emulated_disks(read_mb_per_s=70, read_iops=120, read_ahead_kb=128,
                        size_mb=512) as bench:
        mnt = bench.mount_point
        copied: dict[str, list[Path]] = {}
        for name, paths in layouts.items():
            copied[name] = []
            for p in paths:
                dest = mnt / name / p.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(p, dest)
                copied[name].append(dest)
        subprocess.run(["sync"], check=True)
        head = (f"{'layout':<12}{'program':<10}{'untraced s':>11}{'traced s':>9}{'ovh':>6}"
                f"{'est':>6}{'reqs':>7}{'MB':>7}{'key':>6}{'basket':>7}{'meta':>5}"
                f"{'blkMB':>7}{'cgMB':>7}{'blk/cg':>7}{'split':>7}  findings")
        print(head, flush=True)
        for layout in opts.layouts:
            paths = copied[layout]
            for prog in opts.programs:
                script = work / f"{prog}.py"
                walls = [run_cold(bench, [sys.executable, str(script), *map(str, paths)],
                                  paths)[0] for _ in range(opts.repeat)]
                wall = statistics.median(walls)
                t, (cg_ios, cg_bytes) = traced(bench, script, paths)
                k = t["requests_by_kind"]
                reqs = sum(f["requests"] for f in t["files"])
                mb = sum(f["bytes"] for f in t["files"]) / 1e6
                blk = (t["block_reads"] or 0) / cg_ios if cg_ios else float("nan")
                finds = " ".join(f"{f['code']} {f['predicted_speedup']:.2f}x "
                                 f"({f['speedup_low']:.2f}-{f['speedup_high']:.2f})"
                                 for f in t["findings"])
                base = t["wall_s"] / (1 + t["overhead"])
                split = abs(t["time_split"]["unexplained"]) / base if base > 0 else float("nan")
                row = (f"{layout:<12}{prog:<10}{wall:>11.2f}{t['wall_s']:>9.2f}"
                       f"{t['wall_s'] / wall - 1:>6.0%}{t['overhead']:>6.0%}{reqs:>7}"
                       f"{mb:>7.1f}{k['key']:>6}{k['basket']:>7}{k['metadata']:>5}"
                       f"{(t['block_bytes'] or 0) / 1e6:>7.1f}{cg_bytes / 1e6:>7.1f}"
                       f"{blk:>7.2f}{split:>7.0%}  {finds}")
                rows.append(row)
                print(row, flush=True)
                if opts.repeat > 1:
                    print(f"{'':<22}untraced runs: {', '.join(f'{w:.2f}' for w in walls)}")
        if not opts.no_heldout:
            heldout(bench, work, copied["heldout"], opts.repeat)
    print(f"\n({time.perf_counter() - t0:.0f} s in all; the machine is shared: timings noisy)")
    return 0


def heldout(bench: Any, work: Path, paths: list[Path], repeat: int) -> None:
    script = work / "default.py"
    t, _ = traced(bench, script, paths)
    found = [f for f in t["findings"] if f["code"] == "U001"]
    print(f"\nheld-out file ({paths[0].name}): default uproot.iterate, traced "
          f"{t['wall_s']:.2f} s, key reads {t['requests_by_kind']['key']}")
    if not found:
        print("U001 did not fire (a miss)")
        return
    f = found[0]
    ev = {e["name"]: e["value"] for e in f["evidence"]}
    pre = next((p for p in t["phases"] if p["name"] == "pre-pass"), None)
    measured_pre = pre["end_s"] - pre["start_s"] if pre else float("nan")
    stated = ev.get("pre-pass I/O replayed (before - after)", float("nan"))
    fixed = work / "fixed.py"
    fixed.write_text(PROGRAMS["default"].replace(
        'uproot.iterate(path + ":Events", library="np")',
        f'uproot.iterate(path + ":Events", library="np", {f["argument"]}={f["value"]})'))
    orig = [run_cold(bench, [sys.executable, str(script), *map(str, paths)], paths)[0]
            for _ in range(repeat)]
    fix = [run_cold(bench, [sys.executable, str(fixed), *map(str, paths)], paths)[0]
           for _ in range(repeat)]
    realised = statistics.median(orig) / statistics.median(fix)
    p, lo, hi = f["predicted_speedup"], f["speedup_low"], f["speedup_high"]
    print(f"change printed: {f['change']}")
    for e in f["evidence"]:
        print(f"  evidence: {e['name']}: {e['value']} {e['unit']} [{e['source']}]")
    print(f"pre-pass: stated {stated:.2f} s (replayed), measured {measured_pre:.2f} s "
          f"(ratio {stated / measured_pre:.2f})")
    print(f"untraced: default {', '.join(f'{x:.2f}' for x in orig)} s; fixed "
          f"{', '.join(f'{x:.2f}' for x in fix)} s")
    print(f"speed-up: predicted {p:.2f}x ({lo:.2f}-{hi:.2f}), realised {realised:.2f}x "
          f"(realised/predicted {realised / p:.2f}; "
          f"{'inside' if lo <= realised <= hi else 'OUTSIDE'} the interval)")


if __name__ == "__main__":
    raise SystemExit(main())
