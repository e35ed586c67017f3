"""What a device read of the default ``iterate`` costs, against the replay's access time.

    python -m benchmarks.lab.check_prepass_access FILE.root [FILE.root ...]
        [--mb-per-s 2700] [--access-ms 0.05] [--read-ahead-kb 8192] [--repeats 3]

For each file: the plain analysis (uproot's default ``iterate``, ``"100 MB"`` steps: the key
pre-pass, one small read per basket, then the data) in a fresh process, alternately cold (the
file's pages dropped) and warm; the block device's reads and bytes between the two ends of
each cold run (``/sys/dev/block/*/stat``); and the replay of the same program
(``hep_advisor.models.replay``: the request stream ``uproot_iterate`` builds from the file's
basket map, Python's buffered reads, the page cache and read-ahead of this kernel) through a
device of ``--mb-per-s`` and ``--access-ms`` (a report's ``raw_read`` figures).  Printed: the
device reads replayed and counted, the replayed device time, and the cold run's time beyond
the warm one divided by the reads counted: what a device read cost, beside the access time
the replay charges for each.

Made for the eighth set's RDataFrame-written files on the fast disk, whose reader baseline
came out 0.72 of the program's rate: the replay's reads matched the kernel's count (2,401
against 2,398 a file) while the calibration's access time (0.064 ms) was about twice what each
of those reads cost.  Reads only; timed runs take ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import statistics
import subprocess
import sys
import time

from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.folios import large_folios
from hep_advisor.models.replay.predict import step_for
from hep_advisor.models.replay.readers import uproot_iterate
from hep_advisor.models.replay.requests import python_buffered
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.trace.counters import block_delta, block_snapshot, evict

LOCK = "/tmp/hep-bench.lock"
CHILD = """
import sys, uproot
for arrays in uproot.iterate([{sys.argv[1]: sys.argv[2]}], library="ak"):
    pass
"""


def timed(path: str, tree: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, path, tree], check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--mb-per-s", type=float, default=2700.0)
    ap.add_argument("--access-ms", type=float, default=0.05)
    ap.add_argument("--read-ahead-kb", type=int, default=8192)
    ap.add_argument("--max-io-kb", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tree", default="Events")
    args = ap.parse_args()
    folios = large_folios(os.uname().release, "ext4")
    dev = LocalDevice(args.mb_per_s, args.access_ms * 1e-3, args.read_ahead_kb,
                      large_folios=folios, max_io_kb=args.max_io_kb)
    print("| file | device reads replayed / counted | replayed device time (s) | cold - warm "
          "(s) | per device read (ms) | access time charged (ms) |\n|---|---|---|---|---|---|")
    for path in args.files:
        m = read_basket_map(path, args.tree)
        size, _ = step_for(m, None, "100 MB")
        sizes = {path: os.path.getsize(path)}
        reqs = python_buffered(uproot_iterate(m, None, step_size=size, streamers=True), 4096,
                               sizes)
        t = dev.replay(list(reqs), sizes, reopen=True)
        cold, warm, counted = [], [], []
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for _ in range(args.repeats):
                evict(path)
                before = block_snapshot()
                cold.append(timed(path, args.tree))
                delta = block_delta([path], before, block_snapshot())
                counted.append(sum(n for n, _ in delta.values()))
                warm.append(timed(path, args.tree))
        gap = statistics.median(cold) - statistics.median(warm)
        n = statistics.median(counted)
        print(f"| {os.path.basename(path)} | {t.device_requests} / {n:.0f} | {t.time_s:.3f} | "
              f"{gap:.3f} | {1e3 * gap / max(n, 1):.3f} | {args.access_ms:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
