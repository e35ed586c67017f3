"""Benchmark: the ROOT engine's event loop beside ``rootreadspeed --threads 1`` on the same files.

Issue 3: "With the `root` extra: the ROOT engine's event rate beside `rootreadspeed --threads 1`
on the same files."  For each file (by default the demo's flat ZLIB-1 and ZSTD-5 files, tree
``pythia``, all branches):

- ``hep_advisor.probes.readtests.rootengine.measure_root_event_loop`` (a C++ ``GetEntry`` loop,
TTreeCache
  on), warm: events/s and uncompressed / compressed MB/s, with the TTreePerfStats figures of the
  cache on and off;
- ``rootreadspeed --files F --trees T --all-branches --threads 1``, run ``--repeat`` times (the
  file is warm: the engine just read it); its "Real time" and byte counts give events/s and
  MB/s.  rootreadspeed prints its throughputs in MiB/s (2^20 bytes, though it writes "MB/s");
  here every rate is recomputed in MB/s = 10^6 bytes/s from its byte counts and real time.
- the uproot engine's warm event loop, for context.

    python -m benchmarks.timing.bench_root_engine [FILES...] [--tree pythia] [--repeat 5]
        [--share 10]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import subprocess
import time

from hep_advisor.probes.readtests.eventloop import measure_event_loop
from hep_advisor.probes.readtests.rootengine import import_root, measure_root_event_loop
from hep_advisor.probes.readtests.runner import Session, spread

FIELDS = {
    "real_s": r"Real time:\s+([0-9.eE+-]+) s",
    "cpu_s": r"CPU time:\s+([0-9.eE+-]+) s",
    "uncompressed_bytes": r"Uncompressed data read:\s+(\d+) bytes",
    "compressed_bytes": r"Compressed data read:\s+(\d+) bytes",
    "uncompressed_mib_per_s": r"Uncompressed throughput:\s+([0-9.eE+-]+) MB/s",
}


def rootreadspeed_binary() -> str:
    ROOT = import_root()
    rootsys = os.path.dirname(os.path.dirname(os.path.abspath(ROOT.__file__)))
    for cand in (os.path.join(rootsys, "ROOT", "bin", "rootreadspeed"),
                 os.path.join(os.path.dirname(os.path.abspath(ROOT.__file__)), "bin",
                              "rootreadspeed")):
        if os.access(cand, os.X_OK):
            return cand
    path = subprocess.run(["which", "rootreadspeed"], capture_output=True, text=True).stdout
    if path.strip():
        return path.strip()
    raise SystemExit("rootreadspeed not found")


def run_rootreadspeed(binary: str, path: str, tree: str, threads: int = 1) -> dict[str, float]:
    cmd = [binary, "--files", path, "--trees", tree, "--all-branches", "--threads", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    parsed: dict[str, float] = {}
    for key, pattern in FIELDS.items():
        m = re.search(pattern, out)
        if m is None:
            raise SystemExit(f"cannot parse {key!r} from rootreadspeed's output:\n{out}")
        parsed[key] = float(m.group(1))
    return parsed


def entries_of(path: str, tree: str) -> int:
    import uproot

    with uproot.open(path) as f:
        return int(f[tree].num_entries)


def fmt(xs: list[float]) -> str:
    s = spread(xs)
    return f"{statistics.median(xs):12.0f} ({'n/a' if s is None else f'{s:.3f}'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--tree", default="pythia")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--share", type=float, default=10.0, help="seconds per engine measurement")
    args = ap.parse_args()
    files = args.files
    if not files:
        from hep_advisor.demo import ensure_demo

        flat = ensure_demo() / "flat"
        files = [str(flat / "pythia_zlib1.root"), str(flat / "pythia_zstd5.root")]
    files = [f for pattern in files for f in (sorted(glob.glob(pattern)) or [pattern])]
    binary = rootreadspeed_binary()
    ROOT = import_root()
    print(f"ROOT {ROOT.gROOT.GetVersion()}, {binary}")
    print(f"cpu: {os.cpu_count()} logical, load {os.getloadavg()[0]:.2f}; "
          "rates: median (spread) over the samples; MB = 10^6 bytes\n")
    for path in files:
        n = entries_of(path, args.tree)
        size = os.stat(path).st_size
        print(f"== {os.path.basename(path)}: {n} entries, {size / 1e6:.1f} MB, tree {args.tree}")

        t0 = time.perf_counter()
        root = measure_root_event_loop(Session(args.share * 2), [path], args.tree,
                                       share_s=args.share, cold=False)
        took = time.perf_counter() - t0
        loop = root.event_loop
        assert loop.warm is not None
        warm = list(loop.warm.samples)
        on, off = root.cache_on, root.cache_off
        per_u = on.unzipped_bytes / on.entries if on and on.entries else 0.0
        per_c = on.bytes_read / on.entries if on and on.entries else 0.0

        rrs = [run_rootreadspeed(binary, path, args.tree) for _ in range(args.repeat)]
        rrs_rate = [n / r["real_s"] for r in rrs]
        rrs_u = [r["uncompressed_bytes"] / r["real_s"] / 1e6 for r in rrs]
        rrs_c = [r["compressed_bytes"] / r["real_s"] / 1e6 for r in rrs]

        up = measure_event_loop(Session(args.share * 2), [path], args.tree,
                                share_s=args.share, cold=False)
        assert up.warm is not None
        up_rate = list(up.warm.samples)

        print(f"{'engine':34} {'events/s (spread)':>21} {'uncomp MB/s':>12} {'comp MB/s':>10} "
              f"{'n':>3}")
        print(f"{'hep-advisor ROOT engine (warm)':34} {fmt(warm):>21} "
              f"{statistics.median(warm) * per_u / 1e6:12.1f} "
              f"{statistics.median(warm) * per_c / 1e6:10.1f} {len(warm):3d}")
        print(f"{'rootreadspeed --threads 1':34} {fmt(rrs_rate):>21} "
              f"{statistics.median(rrs_u):12.1f} {statistics.median(rrs_c):10.1f} "
              f"{len(rrs):3d}")
        print(f"{'hep-advisor uproot engine (warm)':34} {fmt(up_rate):>21} "
              f"{up.uncompressed_mb_per_s or 0:12.1f} {up.compressed_mb_per_s or 0:10.1f} "
              f"{len(up_rate):3d}")
        ratio = statistics.median(warm) / statistics.median(rrs_rate)
        printed = statistics.median(r["uncompressed_mib_per_s"] for r in rrs)
        print(f"ROOT engine / rootreadspeed events/s: {ratio:.2f}; rootreadspeed's own printed "
              f"uncompressed throughput {printed:.1f} MiB/s; ROOT engine measurement took "
              f"{took:.1f} s")
        print(f"bytes per event: ROOT engine {per_u:.1f} uncompressed, rootreadspeed "
              f"{rrs[0]['uncompressed_bytes'] / n:.1f}")
        if on is not None and off is not None:
            for s in (on, off):
                print(f"  TTreeCache {'on ' if s.tree_cache else 'off'} ({s.cache_bytes / 1e6:.0f}"
                      f" MB): {s.read_calls} read calls, {s.bytes_read / 1e6:.2f} MB read, "
                      f"{(s.mean_read_bytes or 0) / 1e3:.1f} kB/read, disk {s.disk_time_s:.4f} s, "
                      f"unzip {s.unzip_time_s:.3f} s, real {s.real_time_s:.3f} s, "
                      f"{s.events_per_s or 0:.0f} events/s ({s.cache})")
        print()


if __name__ == "__main__":
    main()
