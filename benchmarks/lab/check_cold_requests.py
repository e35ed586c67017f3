"""How many device reads a cold job makes per file, and whether more workers read faster, on
fresh emulated slow disks.

    python -m benchmarks.lab.check_cold_requests DATA_DIR [--disks 3] [--workers 1,2,1]
        [--tree NAME]

For each of ``--disks`` fresh emulated 70 MB/s, 120 IOPS disks (a new loop device and ext4
each time, removed at the end), the dataset's files are copied onto it; then, for each count
of ``--workers``, the caches are dropped (the files' pages, the loop device's buffers and its
backing file) and the job of ``validate_model.py``
(``hep_advisor.probes.readtests.parallel.measure_job``, every branch, cold, one repetition) runs
inside the throttling cgroup.  Prints its MB/s, the reads and bytes the loop device counted
(``/sys/block/loopN/stat``), and the reads per file. A dataset whose reads per file times the files
reach the disk's 120 IOPS before its bytes reach 70 MB/s is bound by requests: more workers then
read no faster.  The user's data is only read; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
from pathlib import Path


def device_reads(dev: str) -> tuple[int, int]:
    """Reads completed and bytes read by block device ``dev`` so far."""
    fields = Path(f"/sys/block/{dev}/stat").read_text().split()
    return int(fields[0]), int(fields[2]) * 512


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--disks", type=int, default=3)
    ap.add_argument("--workers", default="1,2,1")
    ap.add_argument("--tree", default=None, help="the tree (default: the first file's first)")
    ap.add_argument("--lock", default="/tmp/hep-bench.lock")
    args = ap.parse_args()
    import uproot

    from benchmarks.common import slow_copy
    from hep_advisor.probes.readtests.parallel import measure_job

    counts = [int(w) for w in args.workers.split(",")]
    with open(args.lock, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for d in range(args.disks):
            with slow_copy(args.data) as (bench, _, paths):
                files = [str(p) for p in paths]
                tree = args.tree
                if tree is None:
                    with uproot.open(files[0]) as f:
                        tree = next(k.split(";")[0] for k, c in f.classnames().items()
                                    if c == "TTree")
                dev = os.path.basename(bench.disks[0].device)
                for k in counts:
                    bench.drop_caches(*files)
                    before = device_reads(dev)
                    _, m = bench.call(measure_job, files, tree, k, repeats=1, cold=True)
                    after = device_reads(dev)
                    reads = after[0] - before[0]
                    print(f"disk {d + 1}, {k} worker(s): {m.median or 0:.2f} MB/s; the device "
                          f"read {reads} times ({reads / len(files):.2f} a file), "
                          f"{(after[1] - before[1]) / 1e6:.1f} MB", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
