"""``hep-advisor trace`` on real programs, cold: on the emulated 70 MB/s, 120 IOPS disk, and a
file served by XRootD over the emulated link.

    python -m benchmarks.validation.bench_trace --prepare   # write the datasets (no timing)
    python -m benchmarks.validation.bench_trace --counts    # recorder against strace, untimed
    python -m benchmarks.validation.bench_trace [--workdir DIR] [--lock /tmp/hep-bench.lock]
        [--programs default step arrays getentry rdf] [--layouts interleaved small remote]
        [--repeat N] [--no-heldout] [--heldout 200,20000,16000] [--no-check]
        [--validate [only]] [--rtt-ms 20]
        [--mbit 100]

With ``--lock``, the lock is held only while one case is timed (its untraced and traced runs),
not while data are written, copied or analysed.

Writes (once, kept in ``--workdir``) four datasets with ROOT:

- ``interleaved``: one file, 400 float branches, 20,000 entries, ZLIB-1, ``SetAutoFlush(0)``
  (baskets interleaved across branches in the order they fill);
- ``small``: 20 files x 300 entries x 200 float branches, ZLIB-1 (ROOT's default AutoFlush,
  never reached);
- ``remote``: one file, 100 float branches, 20,000 entries, ZLIB-1, ``SetAutoFlush(0)``
  (smaller, so that the default's key pre-pass over a 20 ms link stays within a minute),
  served by ``testbench.remote`` (XRootD behind the latency proxy and a shaped link);
- ``heldout``: a file no test has seen (200 branches of floats and doubles, 20,000 entries,
  16 kB baskets, ZLIB-1, ``SetAutoFlush(0)``; ``--heldout B,E,BYTES`` writes another) for the
  pre-pass check.

For each program x layout: the program run cold ``--repeat`` times without tracing, and as
many times (alternately) under ``hep-advisor trace --json --cold`` with the default recorder
(``auto``: the in-process Python recorder for the uproot programs and for the remote file,
``strace`` for the ROOT programs on local files); then, as the check (not timed), once under
``--recorder strace``.  Local: the whole tree runs inside the throttled cgroup (128 kB
read-ahead).  Remote: the server's copy is dropped from the page cache before each run.
Printed per case: untraced and traced medians (min-max), the overhead measured (traced
median / untraced median - 1) and as the recorder estimates it; requests and bytes recorded,
against strace's (local) or the proxy's bytes from the server (remote; ROOT's own
``GetFileReadCalls``/``GetFileBytesRead`` where the reads are ROOT's); the distinct bytes
read against the bytes the device served (``/sys/block``: read-ahead and the page size make
the device read more); the time split's miss against the wall time; the findings; with
``--validate``, each finding the bench can apply (an argument added to the uproot call,
``EnableImplicitMT``, ``SetCacheSize``) run cold beside the original, alternately.

Programs: ``default``: ``uproot.iterate(f"{path}:Events")`` (the documented default
``step_size="100 MB"``; over ``root://`` with fsspec-xrootd 0.5.5 and uproot 5.7.7 it fails,
``TypeError: integer argument expected for offset``, so ``default_xrd`` is the same call with
``handler=uproot.XRootDSource``); ``step``: ``tree.iterate(step_size=1000)``; ``arrays``:
``tree.arrays(filter_name=20 branches)``; ``getentry``: ROOT ``TTree::GetEntry`` loop with
``SetCacheSize(0)``; ``rdf``: an RDataFrame summing 20 branches (its default TTreeCache).

Held out: the ``default`` program traced on ``heldout``; U001's predicted speed-up and
interval, the pre-pass cost it states against the measured pre-pass, and the fixed program
(``step_size`` as printed) run cold: realised speed-up = untraced default / untraced fixed.
Needs root (the emulated disk, the link), ROOT (the ``root`` extra), xrootd-server and strace.
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

TREE = "Events"
VALIDATE: str | None = None

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
    "default_xrd": """\
import sys, uproot
n = 0
for path in sys.argv[1:]:
    for a in uproot.iterate(path + ":Events", library="np", handler=uproot.XRootDSource):
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
    "rdf": """\
import sys, ROOT
cols = [f"b{i}" for i in range(0, 100, 5)]
chain = ROOT.TChain("Events")
for path in sys.argv[1:]:
    chain.Add(path)
df = ROOT.RDataFrame(chain)
total = df.Define("s", " + ".join(cols)).Sum("s")
print("sum", total.GetValue())
""",
}


#: The held-out file: branches (floats and doubles), entries, basket bytes.
HELDOUT = (200, 20000, 16000)


def heldout_name(spec: tuple[int, int, int]) -> str:
    return "heldout.root" if spec == HELDOUT else "heldout_{}br_{}ev_{}B.root".format(*spec)


def write_data(work: Path, heldout: tuple[int, int, int] = HELDOUT) -> dict[str, list[Path]]:
    small = [work / "small" / f"s{i:02d}.root" for i in range(20)]
    held = work / heldout_name(heldout)
    layouts = {"interleaved": [work / "interleaved.root"], "small": small,
               "remote": [work / "remote.root"], "heldout": [held]}
    specs: list[list[Any]] = [[str(work / "interleaved.root"), 400, 20000, 32000, 0, 0],
             [str(held), *heldout, 0, 1],
             [str(work / "remote.root"), 100, 20000, 32000, 0, 0],
             *[[str(p), 200, 300, 32000, 1, 0] for p in small]]
    todo = [sp for sp in specs if not Path(sp[0]).exists()]
    if todo:
        (work / "small").mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", WRITE, WRITER, json.dumps(todo)], check=True)
    return layouts


class Lock:
    """The shared timing lock (``flock``), held while one case is timed; none without a path."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.fh: Any = None

    def __enter__(self) -> Lock:
        if self.path:
            import fcntl

            self.fh = open(self.path, "a")
            t0 = time.perf_counter()
            fcntl.flock(self.fh, fcntl.LOCK_EX)
            waited = time.perf_counter() - t0
            if waited > 1:
                print(f"  (waited {waited:.0f} s for the lock)", flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


class Place:
    """Where a layout's programs run: inside the throttled disk's cgroup, or beside the link."""

    def __init__(self, disk: Any = None, link: Any = None, served: list[Path] | None = None):
        self.disk, self.link, self.served = disk, link, served or []

    def cold(self, paths: list[str]) -> None:
        if self.disk is not None:
            self.disk.drop_caches(*paths)
            self.disk.reset_throttle()
        else:
            from hep_advisor.probes.trace.counters import evict

            for p in self.served:
                evict(str(p))

    def run(self, argv: list[str], paths: list[str]) -> tuple[float, str, str]:
        self.cold(paths)
        t0 = time.perf_counter()
        runner = self.disk.run if self.disk is not None else subprocess.run
        done = runner(argv, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"{argv[:3]}...: exit {done.returncode}: {done.stderr[-800:]}")
        return wall, done.stdout, done.stderr

    def counters(self) -> tuple[int, int]:
        """(requests, bytes) so far: the disk cgroup's, or (connections, bytes down) at the
        proxy in front of the XRootD server."""
        if self.disk is not None:
            n, b = self.disk.stats()[self.disk.major_minor]
            return int(n), int(b)
        root = self.link.stats().get("root", {})
        return int(root.get("connections", 0)), int(root.get("down", 0))


def trace_argv(script: Path, paths: list[str], recorder: str) -> list[str]:
    return [sys.executable, "-m", "hep_advisor", "trace", "--json", "--cold", "--recorder",
            recorder, "--", sys.executable, str(script), *paths]


def traced(place: Place, script: Path, paths: list[str], recorder: str = "auto"
           ) -> tuple[dict[str, Any], tuple[int, int]]:
    before = place.counters()
    took, out, _ = place.run(trace_argv(script, paths, recorder), paths)
    after = place.counters()
    t = json.loads(out)["trace"]
    t["command_s"] = took  # the whole `hep-advisor trace` command, as its user waits for it
    return t, (after[0] - before[0], after[1] - before[1])


def untraced(t: dict[str, Any]) -> float:
    """The traced wall time less what the tracer took (measured where the split says, else
    estimated): as ``hep_advisor.pipeline.trace.split_check``."""
    took = t["time_split"].get("tracer")
    return float(t["wall_s"] - took if took is not None else t["wall_s"] / (1 + t["overhead"]))


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def fixed_source(prog: str, f: dict[str, Any]) -> str | None:
    """The program with a finding's change applied, where the bench knows how."""
    src, arg, val = PROGRAMS[prog], f.get("argument"), f.get("value")
    if arg is None or val is None:
        return None
    if prog in ("default", "default_xrd", "step", "arrays"):
        if arg == "handler" and "uproot.open(path)" in src:
            return src.replace("uproot.open(path)", f"uproot.open(path, handler={val})")
        if f"{arg}=" in src:
            return None
        if arg == "filter_name":
            val = repr(json.loads(val))
        return src.replace('library="np"', f'library="np", {arg}={val}')
    if arg == "EnableImplicitMT":
        head = "import sys, ROOT\n"
        return src.replace(head, f"{head}ROOT.EnableImplicitMT({val})\n")
    if arg == "SetCacheSize" and "t.SetCacheSize(0)" in src:
        return src.replace("t.SetCacheSize(0)",
                           f't.SetCacheSize({val}); t.AddBranchToCache("*", True)')
    return None


def validate(place: Place, work: Path, prog: str, paths: list[str], t: dict[str, Any],
             repeat: int, lock: Lock) -> None:
    """Each finding the bench can apply: the changed program run cold beside the original."""
    for f in t["findings"]:
        src = fixed_source(prog, f)
        if src is None:
            print(f"  {f['code']}: not applied by the bench", flush=True)
            continue
        fixed = work / f"fixed_{prog}_{f['code']}.py"
        fixed.write_text(src)
        with lock:
            orig, new = [], []
            for _ in range(repeat):  # alternated: drifts of the machine hit both
                orig.append(place.run([sys.executable, str(work / f"{prog}.py"), *paths],
                                      paths)[0])
                new.append(place.run([sys.executable, str(fixed), *paths], paths)[0])
        real = statistics.median(orig) / statistics.median(new)
        p, lo, hi = f["predicted_speedup"], f["speedup_low"], f["speedup_high"]
        print(f"  {f['code']} applied ({f['argument']}={f['value']}): untraced "
              f"{_spread(orig)} s -> {_spread(new)} s; realised {real:.2f}x, predicted "
              f"{p:.2f}x ({lo:.2f}-{hi:.2f}): realised/predicted {real / p:.2f}, "
              f"{'inside' if lo <= real <= hi else 'OUTSIDE'} the interval", flush=True)


def one_case(place: Place, layout: str, prog: str, script: Path, paths: list[str],
             repeat: int, lock: Lock, check: bool) -> None:
    if VALIDATE == "only":  # one traced run for the findings, then the changes
        with lock:
            t, _ = traced(place, script, paths)
        print(f"{layout} / {prog}: findings "
              f"{', '.join(f['code'] for f in t['findings']) or 'none'}", flush=True)
        validate(place, script.parent, prog, paths, t, repeat, lock)
        return
    with lock:
        plain, runs = [], []
        for _ in range(repeat):  # alternated: a drift of the shared machine hits both
            before = place.counters()  # the device's or server's: the untraced program's
            plain.append(place.run([sys.executable, str(script), *paths], paths)[0])
            after = place.counters()
            runs.append(traced(place, script, paths))
    ts = [t for t, _ in runs]
    t = runs[-1][0]
    dev_n, dev_b = after[0] - before[0], after[1] - before[1]
    tw = [x["wall_s"] for x in ts]
    ovh = [w / statistics.median(plain) - 1 for w in tw]
    base = t["wall_s"] / (1 + t["overhead"])
    splits = [abs(x["time_split"]["unexplained"]) / untraced(x) for x in ts]
    reqs = sum(f["requests"] for f in t["files"])
    nbytes = sum(f["bytes"] for f in t["files"])
    k = t["requests_by_kind"]
    med = statistics.median(tw) / statistics.median(plain) - 1
    print(f"{layout} / {prog}: recorder {t['recorder']}; untraced {_spread(plain)} s; traced "
          f"{_spread(tw)} s; overhead measured {med:+.0%} "
          f"(runs {', '.join(f'{o:+.0%}' for o in ovh)}), estimated {t['overhead']:.1%}; "
          f"split miss {', '.join(f'{x:.0%}' for x in splits)} (of {untraced(t):.2f} s)",
          flush=True)
    parts = ", ".join(f"{k} {v:+.2f}" for k, v in t["time_split"].items() if v is not None)
    print(f"  split (last run, s): {parts}; tracer estimate "
          f"{t['wall_s'] - base:.2f}", flush=True)
    print(f"  recorded: {reqs} requests, {nbytes / 1e6:.2f} MB (distinct "
          f"{(nbytes - t['reread_bytes']) / 1e6:.2f} MB); key {k['key']}, basket "
          f"{k['basket']}, metadata {k['metadata']}, other {k['other']}; io {t['io_wait_s']:.2f}"
          f" s", flush=True)
    if place.disk is not None:
        dist = nbytes - t["reread_bytes"]
        blk = t["block_bytes"] or 0
        print(f"  device: traced run /sys/block {t['block_reads']} reads, {blk / 1e6:.2f} MB "
              f"(distinct recorded / these {dist / blk if blk else float('nan'):.2f}); "
              f"untraced run's cgroup {dev_n} reads, {dev_b / 1e6:.2f} MB (distinct recorded "
              f"/ these {dist / dev_b if dev_b else float('nan'):.2f})", flush=True)
    else:
        rb = t.get("root_bytes_read")
        extra = (f"; ROOT's counters: {t.get('root_read_calls')} read calls, {rb / 1e6:.2f} MB "
                 f"(/ proxy {rb / dev_b if dev_b else float('nan'):.2f})") if rb else ""
        print(f"  server (proxy, bytes down in the untraced run, protocol included): "
              f"{dev_b / 1e6:.2f} MB; recorded / "
              f"proxy {nbytes / dev_b if dev_b else float('nan'):.2f}{extra}", flush=True)
    for f in t["findings"]:
        print(f"  finding {f['code']} {f['predicted_speedup']:.2f}x ({f['speedup_low']:.2f}-"
              f"{f['speedup_high']:.2f}): {f['change'].splitlines()[0]}", flush=True)
    if VALIDATE:
        validate(place, script.parent, prog, paths, t, repeat, lock)
    if check and place.disk is not None and t["recorder"] != "strace":
        s, _ = traced(place, script, paths, "strace")  # the check: not timed, no lock
        sreq = sum(f["requests"] for f in s["files"])
        sb = sum(f["bytes"] for f in s["files"])
        print(f"  strace check: {sreq} requests, {sb / 1e6:.2f} MB; recorded / strace: "
              f"requests {reqs / sreq if sreq else float('nan'):.3f}, bytes "
              f"{nbytes / sb if sb else float('nan'):.3f}; keys {s['requests_by_kind']['key']}"
              f"; strace's own overhead {s['wall_s'] / statistics.median(plain) - 1:+.0%}",
              flush=True)


def counts_only(work: Path, layouts: dict[str, list[Path]], names: list[str],
                programs: list[str]) -> None:
    """The recorder against strace, untimed and unthrottled (no lock needed): requests and
    bytes of each traced program, and the block devices' counts during each run."""
    for layout in names:
        paths = [str(p) for p in layouts[layout]]
        for prog in programs:
            script = work / f"{prog}.py"
            got = {}
            for rec in ("auto", "strace"):
                done = subprocess.run(trace_argv(script, paths, rec), capture_output=True,
                                      text=True, check=True)
                got[rec] = json.loads(done.stdout)["trace"]
            a, s = got["auto"], got["strace"]
            n = [sum(f["requests"] for f in x["files"]) for x in (a, s)]
            b = [sum(f["bytes"] for f in x["files"]) for x in (a, s)]
            dist = b[0] - a["reread_bytes"]
            blk = a["block_bytes"] or 0
            print(f"{layout} / {prog}: {a['recorder']} {n[0]} requests {b[0] / 1e6:.2f} MB; "
                  f"strace {n[1]} requests {b[1] / 1e6:.2f} MB; ratio requests "
                  f"{n[0] / n[1] if n[1] else float('nan'):.3f} bytes "
                  f"{b[0] / b[1] if b[1] else float('nan'):.3f}; keys "
                  f"{a['requests_by_kind']['key']}/{s['requests_by_kind']['key']}; "
                  f"distinct / /sys/block bytes {dist / blk if blk else float('nan'):.2f}",
                  flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tracefix/bench"))
    ap.add_argument("--programs", nargs="*", default=list(PROGRAMS))
    ap.add_argument("--layouts", nargs="*", default=["interleaved", "small", "remote"])
    ap.add_argument("--no-heldout", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="skip the strace comparison run")
    ap.add_argument("--repeat", type=int, default=1, help="untraced and traced runs per case")
    ap.add_argument("--lock", help="flock this file while each case is timed")
    ap.add_argument("--prepare", action="store_true", help="only write the datasets")
    ap.add_argument("--counts", action="store_true",
                    help="only compare the recorder's counts with strace's (local layouts, "
                    "unthrottled, untimed: no lock needed)")
    ap.add_argument("--validate", nargs="?", const="yes", choices=("yes", "only"),
                    help="run each applicable finding's changed program beside the original "
                    "('only': just that, after one traced run)")
    ap.add_argument("--heldout", default=",".join(map(str, HELDOUT)),
                    help="the held-out file: BRANCHES,ENTRIES,BASKET_BYTES (default %(default)s;"
                    " another spec writes another file)")
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ap.add_argument("--mbit", type=float, default=100.0)
    opts = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace not found", file=sys.stderr)
        return 2
    work = opts.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        nb, ne, nbytes = (int(x) for x in opts.heldout.split(","))
    except ValueError:
        print(f"--heldout {opts.heldout}: expected BRANCHES,ENTRIES,BASKET_BYTES", file=sys.stderr)
        return 2
    layouts = write_data(work, (nb, ne, nbytes))
    for name, src in PROGRAMS.items():
        (work / f"{name}.py").write_text(src)
    print(f"data ready in {time.perf_counter() - t0:.0f} s under {work}", flush=True)
    if opts.prepare:
        return 0
    if opts.counts:
        counts_only(work, layouts, [x for x in opts.layouts if x != "remote"], opts.programs)
        return 0
    global VALIDATE
    VALIDATE = opts.validate
    lock = Lock(opts.lock)
    local = [x for x in opts.layouts if x != "remote"]
    if local or not opts.no_heldout:
        from testbench import emulated_disks

        with emulated_disks(read_mb_per_s=70, read_iops=120, read_ahead_kb=128,
                            size_mb=512) as disk:
            place = Place(disk=disk)
            copied: dict[str, list[str]] = {}
            for name in [*local, "heldout"]:
                copied[name] = []
                for p in layouts[name]:
                    dest = disk.mount_point / name / p.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(p, dest)
                    copied[name].append(str(dest))
            subprocess.run(["sync"], check=True)
            for layout in local:
                for prog in opts.programs:
                    one_case(place, layout, prog, work / f"{prog}.py", copied[layout],
                             opts.repeat, lock, not opts.no_check)
            if not opts.no_heldout:
                heldout(place, work, copied["heldout"], opts.repeat, lock)
    if "remote" in opts.layouts:
        from testbench.remote import remote_bench

        with remote_bench(rtt_ms=opts.rtt_ms, rate_mbit=opts.mbit, http=False) as link:
            served = [link.add_file(p) for p in layouts["remote"]]
            urls = [link.root_url(p.name) for p in served]
            print(f"remote: {link!r}", flush=True)
            place = Place(link=link, served=served)
            for prog in opts.programs:
                one_case(place, "remote", prog, work / f"{prog}.py", urls, opts.repeat, lock,
                         False)
    print(f"\n({time.perf_counter() - t0:.0f} s in all; the machine is shared: timings noisy)")
    return 0


def heldout(place: Place, work: Path, paths: list[str], repeat: int, lock: Lock) -> None:
    script = work / "default.py"
    with lock:
        t, _ = traced(place, script, paths)
    found = [f for f in t["findings"] if f["code"] == "U001"]
    (work / "heldout_trace.json").write_text(json.dumps(t, indent=1))
    print(f"\nheld-out file ({Path(paths[0]).name}): default uproot.iterate, traced "
          f"{t['wall_s']:.2f} s, key reads {t['requests_by_kind']['key']} (the trace: "
          f"{work / 'heldout_trace.json'})")
    print("  split (s): " + ", ".join(f"{k} {v:+.2f}" for k, v in t["time_split"].items()
                                      if v is not None))
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
    with lock:
        orig = [place.run([sys.executable, str(script), *paths], paths)[0]
                for _ in range(repeat)]
        fix = [place.run([sys.executable, str(fixed), *paths], paths)[0]
               for _ in range(repeat)]
    realised = statistics.median(orig) / statistics.median(fix)
    p, lo, hi = f["predicted_speedup"], f["speedup_low"], f["speedup_high"]
    print(f"change printed: {f['change']}")
    for e in f["evidence"]:
        print(f"  evidence: {e['name']}: {e['value']} {e['unit']} [{e['source']}]")
    # what the default step costs in all: the untraced default less the fixed program (the
    # key pre-pass, and the data read it leaves fragmented: the key pages it cached split the
    # kernel's later read-ahead); the pre-pass phase alone is first to last key read
    cost = statistics.median(orig) - statistics.median(fix)
    print(f"cost of the default step: stated {stated:.2f} s (replayed before - after), "
          f"measured {cost:.2f} s untraced (default - fixed; ratio {stated / cost:.2f}); the "
          f"pre-pass phase alone (first to last key read, traced) {measured_pre:.2f} s")
    print(f"untraced: default {', '.join(f'{x:.2f}' for x in orig)} s; fixed "
          f"{', '.join(f'{x:.2f}' for x in fix)} s")
    print(f"speed-up: predicted {p:.2f}x ({lo:.2f}-{hi:.2f}), realised {realised:.2f}x "
          f"(realised/predicted {realised / p:.2f}; "
          f"{'inside' if lo <= realised <= hi else 'OUTSIDE'} the interval)")
    program = statistics.median(orig)
    after = t.get("after_s")
    print(f"the whole trace command: {t['command_s']:.2f} s against the program's own "
          f"{program:.2f} s untraced ({t['command_s'] / program - 1:+.0%}); after the program: "
          + (f"{after:.2f} s" if after is not None else "not measured"))


if __name__ == "__main__":
    raise SystemExit(main())
