"""Does ``P001``'s staging (read every file once into the page cache) hold until the analysis
reads, on the emulated slow disk?  And how much does that warm analysis scatter?

    python -m benchmarks.lab.check_prestage DATA_DIR [--rounds 5]

The dataset's files are copied onto a fresh emulated 70 MB/s, 120 IOPS disk (removed at the
end).  Each round makes them cold, runs the staging command that ``hep-advisor report`` prints
for P001 (``find ... -exec cat {} + > /dev/null``) inside the throttling cgroup, counts the
files' bytes in the page cache (``fincore``), then runs the plain analysis of
``bench_advice_true.py`` (``uproot.iterate`` with uproot's defaults) and counts again.
Prints, per round, the share of the bytes cached after the cold step, after the staging and
after the analysis, the staging's seconds and the analysis' events/s.  The user's data is only
read; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.validation.advice_true_data import ANALYSIS


def cached_share(files: list[Path]) -> float:
    """The share of ``files``' bytes in the page cache (util-linux ``fincore``)."""
    r = subprocess.run(["fincore", "-b", "-n", "-o", "RES", *map(str, files)],
                       capture_output=True, text=True, check=True)
    res = sum(int(line.split()[0]) for line in r.stdout.splitlines() if line.strip())
    return res / max(sum(p.stat().st_size for p in files), 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lock", default="/tmp/hep-bench.lock")
    args = ap.parse_args()
    from benchmarks.common import slow_copy

    with slow_copy(args.data, tmp_root="/var/tmp") as (bench, data, files), \
            tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "files.json"
        listing.write_text(json.dumps([str(p) for p in files]))
        stage = f"find -L {data} -name '*.root' -type f -exec cat {{}} + > /dev/null"
        with open(args.lock, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for k in range(args.rounds):
                bench.drop_caches(*files, global_cache=False)
                bench.reset_throttle()
                cold = cached_share(files)
                t0 = time.perf_counter()
                bench.run(["bash", "-c", stage], capture_output=True, text=True, check=True)
                stage_s = time.perf_counter() - t0
                staged = cached_share(files)
                out = bench.run([sys.executable, str(ANALYSIS), str(listing)],
                                capture_output=True, text=True, check=True)
                o = json.loads(out.stdout.strip().splitlines()[-1])
                rate = o["events"] / (o["end"] - o["start"])
                print(f"round {k + 1}: cached {cold:.2f} cold, {staged:.2f} after the staging "
                      f"({stage_s:.2f} s), {cached_share(files):.2f} after the analysis; "
                      f"analysis {rate:,.0f} events/s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
