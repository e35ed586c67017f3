"""``--reader``: the predicted baseline against the program's own measured cold rate.

    python -m benchmarks.validation.bench_reader_baseline [--workdir DIR]
        [--layouts interleaved small heldout]
        [--programs default step arrays getentry rdataframe] [--repeat 3] [--budget 30]
        [--lock /tmp/hep-bench.lock]

The datasets are ``bench_trace.py``'s (written once with ROOT, kept in ``--workdir``):
``interleaved`` (one file, 400 float branches, 20,000 entries, ZLIB-1, ``SetAutoFlush(0)``)
and ``small`` (20 files x 300 entries x 200 float branches); ``--layouts heldout`` adds
``bench_trace.py``'s held-out file (200 float and double branches, 20,000 entries, 16 kB
baskets).  They are copied onto an emulated
disk (``testbench``: 70 MB/s, 120 IOPS, 128 kB read-ahead).  For each layout x program, under
the lock (``flock``, taken per case, so that no other timed run overlaps):

- the program, cold (page cache dropped, throttle reset), ``--repeat`` times before the report
  and ``--repeat`` times after it (the shared machine drifts by tens of percent within
  minutes: the runs bracket the calibration, and their median is taken): it times itself
  from before the first open to after the last read (imports excluded, and for the ROOT
  programs ROOT's one-time set-up on first use of its classes, about 0.9 s here; files opened
  inside): events/s = entries / those seconds (median of the runs);
- ``hep-advisor report PATHS --reader SPEC [--branches ...] --format json --no-cache`` inside the
  throttled cgroup: ``reader_baseline.events_per_s`` (predicted: the reader replayed through
  the calibrated device, plus the fitted CPU terms) and ``measured_events_per_s`` (the
  calibration's own event loop with that reader; opening not timed).

Printed per case: measured (median, runs), predicted, predicted / measured (target: within
20%), the calibration's loop with the reader, the device reads and bytes the program issued
(the cgroup's counters) beside the replay's.  Each report's JSON is kept in the workdir
(``report_LAYOUT_PROGRAM.json``).  The counts can be disturbed from outside: one run
of the interleaved default program counted 915 device reads where others count 1,319 (the
same bytes); a likely cause is a global ``drop_caches`` by another process during the run,
evicting the pages the key pre-pass cached, so that the data read after it is issued in
fewer, larger I/Os.  Programs:

- ``default``: ``uproot.iterate(path + ":Events")`` (``step_size="100 MB"``) -> ``uproot.iterate``
- ``step``: ``tree.iterate(step_size=1000)`` -> ``uproot.iterate:step_size=1000``
- ``arrays``: ``tree.arrays(filter_name=20 branches)`` -> ``uproot.arrays --branches ...``
- ``getentry``: PyROOT ``GetEntry`` loop, ``SetCacheSize(0)`` -> ``root.getentry:loop=python``
- ``rdataframe``: ``RDataFrame`` over the files, a ``Sum`` of 20 branches -> ``rdataframe
  --branches ...``

Needs root (the emulated disk) and ROOT (the ``root`` extra).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SUBSET = [f"b{i}" for i in range(0, 200, 10)]

_TIMED = """\
import sys, time
{imports}
paths = sys.argv[1:]
t0 = time.perf_counter()
n = 0
{body}
print("RESULT", n, time.perf_counter() - t0)
"""

PROGRAMS: dict[str, tuple[str, str, str, list[str] | None]] = {
    # name: (imports, body, --reader, --branches)
    "default": ("import uproot", """\
for path in paths:
    for a in uproot.iterate(path + ":Events", library="np"):
        n += len(a["b0"])""", "uproot.iterate:library=np", None),
    "step": ("import uproot", """\
for path in paths:
    with uproot.open(path) as f:
        for a in f["Events"].iterate(step_size=1000, library="np"):
            n += len(a["b0"])""", "uproot.iterate:step_size=1000,library=np", None),
    "arrays": ("import uproot", f"""\
names = {SUBSET!r}
for path in paths:
    with uproot.open(path) as f:
        n += len(f["Events"].arrays(filter_name=names, library="np")["b0"])""",
               "uproot.arrays:library=np", SUBSET),
    "getentry": ("import ROOT\nROOT.TFile, ROOT.TTree  # ROOT's one-time set-up, untimed",
                 """\
for path in paths:
    f = ROOT.TFile.Open(path)
    t = f.Get("Events")
    t.SetCacheSize(0)
    for i in range(t.GetEntries()):
        n += t.GetEntry(i) > 0
    f.Close()""", "root.getentry:loop=python", None),
    "rdataframe": ("import ROOT\nROOT.TFile, ROOT.RDataFrame  # one-time set-up, untimed",
                   f"""\
names = {SUBSET!r}
df = ROOT.RDataFrame("Events", paths)
count = df.Count()
sums = [df.Sum(b) for b in names]
n = int(count.GetValue())
total = sum(s.GetValue() for s in sums)""", "rdataframe", SUBSET),
}


@contextmanager
def locked(path: str | None) -> Iterator[float]:
    """The shared lock held (``None``: no lock); yields the seconds waited for it."""
    if not path:
        yield 0.0
        return
    t0 = time.perf_counter()
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield time.perf_counter() - t0
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_program(bench: Any, script: Path, paths: list[Path]) -> tuple[int, float, int, int]:
    """(entries, seconds as the program timed itself, device reads and bytes the cgroup
    issued)."""
    bench.drop_caches(*paths)
    bench.reset_throttle()
    before = bench.stats()[bench.major_minor]
    done = bench.run([sys.executable, str(script), *map(str, paths)], capture_output=True,
                     text=True)
    if done.returncode != 0:
        raise SystemExit(f"{script.name}: exit {done.returncode}: {done.stderr[-600:]}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
    _, n, s = line.split()
    after = bench.stats()[bench.major_minor]
    return int(n), float(s), after[0] - before[0], after[1] - before[1]


def predicted(bench: Any, paths: list[Path], reader: str, branches: list[str] | None,
              budget: float, save: Path | None = None) -> dict[str, Any]:
    """The report's ``reader_baseline`` (plus the calibration loop's reader and the rate
    model's 1-worker rate); ``save``: where to keep the report's JSON, for a closer look."""
    bench.drop_caches(*paths)
    bench.reset_throttle()
    argv = [sys.executable, "-m", "hep_advisor", "report", *map(str, paths), "--reader", reader,
            "--format", "json", "--no-cache", "--budget", str(budget)]
    if branches:
        argv += ["--branches", ",".join(branches)]
    done = bench.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"report --reader {reader}: exit {done.returncode}: "
                         f"{done.stderr[-800:]}")
    if save is not None:
        save.write_text(done.stdout)
    block = json.loads(done.stdout)["datasets"][0]
    rb = block.get("reader_baseline")
    if rb is None:
        raise SystemExit(f"report --reader {reader}: no reader_baseline; notes: "
                         f"{block.get('notes')}")
    loop = (block.get("calibration") or {}).get("event_loop") or {}
    rb["loop_reader"] = loop.get("reader")
    model = block.get("model") or {}
    one: dict[str, Any] = next(
        (p for p in model.get("predictions", ()) if p.get("workers") == 1), {})
    rb["model_events_per_s"] = one.get("events_per_s")
    return dict(rb)


def _queue(device: str, name: str) -> int | None:
    """A queue setting of the emulated disk (``None`` where unreadable)."""
    try:
        return int(Path(f"/sys/block/{Path(device).name}/queue/{name}").read_text())
    except (OSError, ValueError):
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/reader/bench"))
    ap.add_argument("--layouts", nargs="*", default=["interleaved", "small"])
    ap.add_argument("--programs", nargs="*", default=list(PROGRAMS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--lock", default="/tmp/hep-bench.lock",
                    help="flock file held around each case's timed part ('' for none)")
    opts = ap.parse_args()
    from benchmarks.validation.bench_trace import write_data
    from testbench import emulated_disks

    work = opts.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    layouts = write_data(work)
    for name, (imports, body, _, _) in PROGRAMS.items():
        (work / f"rb_{name}.py").write_text(_TIMED.format(imports=imports, body=body))
    print(f"data ready in {time.perf_counter() - t0:.0f} s under {work}", flush=True)
    with emulated_disks(read_mb_per_s=70, read_iops=120, read_ahead_kb=128,
                        size_mb=512) as bench:
        copied: dict[str, list[Path]] = {}
        for name in opts.layouts:
            copied[name] = []
            for p in layouts[name]:
                dest = bench.mount_point / name / p.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(p, dest)
                copied[name].append(dest)
        subprocess.run(["sync"], check=True)
        print(f"emulated disk {bench.device}: read_ahead_kb {_queue(bench.device, 'read_ahead_kb')}"
              f", max_sectors_kb {_queue(bench.device, 'max_sectors_kb')}", flush=True)
        print(f"{'layout':<12}{'program':<11}{'measured ev/s':>14}{'predicted':>11}"
              f"{'pred/meas':>10}{'  within 20%':<13}{'cal. loop':>10}{'rate model':>11}"
              f"  runs (s): before | after the report", flush=True)
        for layout in opts.layouts:
            paths = copied[layout]
            for prog in opts.programs:
                _, _, reader, branches = PROGRAMS[prog]
                script = work / f"rb_{prog}.py"
                with locked(opts.lock) as waited:  # the program's runs around the report's
                    before = [run_program(bench, script, paths) for _ in range(opts.repeat)]
                    rb = predicted(bench, paths, reader, branches, opts.budget,
                                   work / f"report_{layout}_{prog}.json")
                    after = [run_program(bench, script, paths) for _ in range(opts.repeat)]
                runs = before + after
                ra_now = _queue(bench.device, "read_ahead_kb")
                n = runs[0][0]
                secs = [r[1] for r in runs]
                ios = statistics.median(r[2] for r in runs)
                mbs = statistics.median(r[3] for r in runs) / 1e6
                meas = n / statistics.median(secs)
                pred = rb["events_per_s"]
                ratio = pred / meas
                cal = rb.get("measured_events_per_s")
                model = rb.get("model_events_per_s")
                ok = "yes" if abs(ratio - 1) <= 0.2 else "NO (miss)"
                print(f"{layout:<12}{prog:<11}{meas:>14,.0f}{pred:>11,.0f}{ratio:>10.2f}"
                      f"  {ok:<11}{cal or float('nan'):>10,.0f}{model or float('nan'):>11,.0f}"
                      f"  {', '.join(f'{r[1]:.2f}' for r in before)} | "
                      f"{', '.join(f'{r[1]:.2f}' for r in after)}"
                      f"{f'  (waited {waited:.0f} s for the lock)' if waited > 5 else ''}",
                      flush=True)
                derived = rb.get("measured_baseline_events_per_s")
                if derived:
                    print(f"{'':<23}from the calibration's measurements alone (cold loop + "
                          f"cold opens): {derived:,.0f} events/s, {derived / meas:.2f} of "
                          f"measured", flush=True)
                print(f"{'':<23}replay: I/O {rb['io_s']:.2f} s + CPU {rb['cpu_s']:.2f} s "
                      f"({rb.get('cpu_source')}), {rb['device_requests']:.0f} device reads "
                      f"(the program: {ios:.0f}, {mbs:.1f} MB, in the cgroup's counters); device "
                      f"{rb['device_mb_per_s']:.1f} MB/s, {rb['access_ms']:.2f} ms, "
                      f"{rb.get('device_limit')}; "
                      f"loop ran {rb['loop_reader']}; the disk's read_ahead_kb after the "
                      f"case {ra_now}", flush=True)
    print(f"\n({time.perf_counter() - t0:.0f} s in all; the machine is shared: timings noisy)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
