"""What a ``GetEntry`` loop with a TTreeCache reads from a throttled disk, against the replay.

    python -m benchmarks.lab.check_root_cache_throttle REPORT.json DIR --branches A,B,...
        [--caches 0,-1,10000000,10000000/learn] [--repeats 3] [--tree Events]

``REPORT.json``: a saved ``report --format json`` of the files in ``DIR`` on the emulated disk
(its calibration gives the replay's device, as the advice took it).  The files are copied onto
a fresh emulated disk (70 MB/s, 120 IOPS, as the validation's slow disk) and read cold by a
compiled ``GetEntry`` loop (the validation's, ``benchmarks.validation.advice_true_root``), once
per ``SetCacheSize`` value in ``--caches`` (0: off; -1: ROOT's automatic size; else bytes),
each followed by ``AddBranchToCache("*", true)`` as T001 prints it, or, with ``/learn``, not
(ROOT's learning phase then comes first), ``--repeats`` times each.  Printed per setting: the
loop's seconds (median, range), the device requests and bytes the throttle counted
(``blkio.throttle.io_serviced``, ``io_service_bytes``), and the replay's device requests,
bytes and device time (``hep_advisor.models.replay``: ``root_getentry`` through the
calibration's device).  ``--trace DIR``: the kernel's read-ahead decisions and block I/Os on
the emulated disk during each setting's first run (the ``readahead`` and
``block:block_bio_queue`` trace events, tracefs mounted at ``/sys/kernel/tracing``), written
to ``DIR/<setting>.txt``.

Made for T001 on the throttled disk: told ``SetCacheSize``, a ``GetEntry`` loop gained 2.18x
and 2.68x where 2.96x and 5.06x were replayed (the twelfth set), while the loop without a
cache came true.  It found that the replay took ROOT's learning phase, which
``AddBranchToCache`` skips: a cache fill split in two, whose contiguous reads then reached the
kernel's read-ahead mark, so that the files were replayed as read almost whole in large
windows (85 device requests, 41 MB), where the program read each group of baskets on its own
(156, 32 MB).  Reads only; the copy is removed with the disk.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from hep_advisor.document.report import calibration_parts
from hep_advisor.models.replay.device import LocalDevice, Transfer
from hep_advisor.models.replay.readers import (
    ROOT_LEARN_ENTRIES,
    root_cache_bytes,
    root_getentry,
)
from hep_advisor.models.replay.requests import renumber
from hep_advisor.pipeline.derive import advise_from
from hep_advisor.probes.basketmap import read_basket_map

from ..validation.bench_merge_replay import replay_context

LOOP = r'''
#include <string>
#include "TFile.h"
#include "TTree.h"
long long lab_loop(const char *path, const char *tree, const char *branches, long long cache,
                   int add) {
  TFile *f = TFile::Open(path, "READ");
  if (!f || f->IsZombie()) return -1;
  TTree *t = nullptr;
  f->GetObject(tree, t);
  if (!t) return -2;
  t->SetBranchStatus("*", false);
  std::string s(branches);
  for (size_t p = 0;;) {
    size_t q = s.find(',', p);
    t->SetBranchStatus(s.substr(p, q - p).c_str(), true);
    if (q == std::string::npos) break;
    p = q + 1;
  }
  t->SetCacheSize(cache);
  if (cache != 0 && add) t->AddBranchToCache("*", true);
  long long n = t->GetEntries();
  for (long long i = 0; i < n; ++i) t->GetEntry(i);
  delete f;
  return n;
}
'''

CHILD = """
import json, sys, time, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ROOT
ROOT.gInterpreter.Declare(sys.argv[6])
files, tree, branches = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
cache, add = int(sys.argv[4]), int(sys.argv[5])
t0 = time.perf_counter()
n = sum(ROOT.lab_loop(p, tree, branches, cache, add) for p in files)
print(json.dumps({"events": n, "seconds": time.perf_counter() - t0}))
"""


def parse_cache(text: str) -> tuple[int, bool]:
    """``"10000000"`` -> (10000000, branches added by hand); ``"10000000/learn"``: not."""
    size, _, how = text.partition("/")
    return int(size), how != "learn"


def replayed(dev: LocalDevice, maps: list[Any], branches: list[str], cache: int, manual: bool,
             sizes: dict[str, int]) -> Transfer:
    want = None if cache < 0 else cache
    reqs = renumber([root_getentry(m, branches, cache_bytes=want,
                                   learn_entries=0 if manual else ROOT_LEARN_ENTRIES)
                     for m in maps])
    return dev.replay(reqs, sizes)


TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("readahead", "block/block_bio_queue")


def trace_events(on: bool) -> None:
    """Start (clearing the buffer) or stop recording :data:`EVENTS`."""
    if on:
        (TRACEFS / "trace").write_text("")
    for ev in EVENTS:
        (TRACEFS / "events" / ev / "enable").write_text("1" if on else "0")
    (TRACEFS / "tracing_on").write_text("1" if on else "0")


def kept_lines(text: str, major_minor: str) -> str:
    """The trace's lines for the emulated disk (``dev=7:0`` in the read-ahead events, ``7,0``
    in the block layer's)."""
    ra, blk = f"dev={major_minor}", major_minor.replace(":", ",") + " "
    return "".join(line + "\n" for line in text.splitlines() if ra in line or blk in line)


def replay_device(report: Path, maps: list[Any], branches: list[str]) -> LocalDevice:
    """The device of the replay, as the saved report's advice took it."""
    doc = json.loads(report.read_text())
    d0 = doc["datasets"][0]
    site, dataset, cal = calibration_parts({"site": doc["site"], "dataset": d0["dataset"],
                                            "calibration": d0["calibration"]}, report)
    words = shlex.split(doc.get("command") or "")
    reader = words[words.index("--reader") + 1] if "--reader" in words else None
    advice = advise_from(site, dataset, cal, basket_maps=maps, reader=reader,
                         branches=branches)
    if advice.fitted is None:
        raise SystemExit(f"{report}: its calibration gives no model: {advice.notes}")
    device: LocalDevice = replay_context(advice, maps).replay_device()
    return device


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("--branches", required=True)
    ap.add_argument("--caches", default="0,-1,10000000,10000000/learn")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--trace", type=Path, default=None)
    args = ap.parse_args()
    if args.trace is not None and not (TRACEFS / "events" / "readahead").is_dir():
        raise SystemExit(f"--trace: no read-ahead trace events under {TRACEFS} (mount it: "
                         f"mount -t tracefs nodev {TRACEFS})")
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        raise SystemExit(f"emulated disks unavailable: {why}")
    branches = args.branches.split(",")
    files = sorted(args.data.glob("*.root"))
    maps = [read_basket_map(str(f), args.tree) for f in files]
    dev = replay_device(args.report, maps, branches)
    sizes = {m.path: m.file_bytes for m in maps}
    caches = [parse_cache(c) for c in args.caches.split(",")]
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"device: {dev.mb_per_s:.1f} MB/s, access {dev.access_s * 1e3:.2f} ms, "
          f"limit {dev.limit}, max I/O {dev.max_io_kb} KiB, read-ahead {dev.read_ahead_kb} KiB,"
          f" large folios {dev.large_folios}; automatic cache "
          f"{root_cache_bytes(maps[0]) / 1e6:.2f} MB; {len(files)} files, {mb:.1f} MB",
          flush=True)
    print("| SetCacheSize | AddBranchToCache | loop s (median, range) | device requests counted /"
          " replayed | MB counted / replayed | replayed device s |\n|---|---|---|---|---|---|")
    with emulated_disks(n=1, size_mb=max(256, int(3 * mb)), read_mb_per_s=70.0, read_iops=120,
                        tmp_root="/var/tmp") as bench:
        copies = []
        for f in files:
            shutil.copy(f, bench.mount_point / f.name)
            copies.append(str(bench.mount_point / f.name))
        for cache, manual in caches:
            secs, ios, nbytes = [], [], []
            for k in range(args.repeats):
                bench.drop_caches(*copies, global_cache=False)
                bench.reset_throttle()
                tracing = args.trace is not None and k == 0
                if tracing:
                    trace_events(True)
                before = bench.stats()[bench.major_minor]
                out = bench.run([sys.executable, "-c", CHILD, json.dumps(copies), args.tree,
                                 args.branches, str(cache), str(int(manual)), LOOP],
                                capture_output=True, text=True, check=True)
                after = bench.stats()[bench.major_minor]
                if tracing:
                    trace_events(False)
                    args.trace.mkdir(parents=True, exist_ok=True)
                    name = f"{cache}{'' if manual else '_learn'}.txt"
                    (args.trace / name).write_text(kept_lines(
                        (TRACEFS / "trace").read_text(), bench.major_minor))
                secs.append(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])
                ios.append(after[0] - before[0])
                nbytes.append(after[1] - before[1])
            io = replayed(dev, maps, branches, cache, manual, sizes)
            print(f"| {cache:,} | {'yes' if manual and cache else 'no'} | "
                  f"{statistics.median(secs):.3f} ({min(secs):.3f}-{max(secs):.3f}) | "
                  f"{statistics.median(ios):.0f} / {io.device_requests} | "
                  f"{statistics.median(nbytes) / 1e6:.1f} / {io.device_bytes / 1e6:.1f} | "
                  f"{io.time_s:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
