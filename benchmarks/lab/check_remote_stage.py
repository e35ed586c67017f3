"""Dataset c at 1 ms, where the remote model under-predicts by about 10 ms per file: the parts
of staging and streaming timed one by one.

    flock /tmp/hep-bench.lock python -m benchmarks.lab.check_remote_stage [--rtt 1] [--mbit 1000]
        [--rounds 3]

On ``bench_remote_predict.py``'s dataset ``c`` (6 files x 5,000 entries x 100 float branches,
ZSTD-5, written by ROOT here) behind an emulated link (``testbench.remote``), printed:

- the link as the remote read tests measure it (round trip, bandwidth, protocol open);
- ``xrdcp`` of a 1 kB file (its fixed cost, as the predict bench takes it), then of each of
  c's files to ``/dev/null`` and to a local file, against the model's copy (the fixed cost
  plus the bytes at the bandwidth);
- ROOT's ``GetEntry`` loop (TTreeCache on, as in the stage case) on the six local copies, on
  one copy six times, and on the six copies with 10 of the 100 branches;
- uproot ``arrays`` on the six local copies and on one copy six times (a process holding
  uproot only, as the predict bench reads);
- ROOT over ``root://``: without a cache, with it, and one URL six times with it.

Everything runs in processes of their own as in ``bench_remote_predict.py`` (its readers are
imported); nothing is left behind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def xrdcp(url: str, dest: str = "/dev/null") -> float:
    t0 = time.perf_counter()
    subprocess.run(["xrdcp", "--force", "--silent", url, dest], check=True)
    return time.perf_counter() - t0


def ms(xs: list[float]) -> str:
    return ", ".join(f"{x * 1e3:.1f}" for x in xs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtt", type=float, default=1.0, help="round trip (ms)")
    ap.add_argument("--mbit", type=float, default=1000.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from benchmarks.validation.bench_remote import write_link_file
    from benchmarks.validation.bench_remote_predict import UprootWorker, root_loop, write_datasets
    from hep_advisor.probes.readtests.link import measure_link
    from testbench.remote import cleanup_stale, remote_bench

    cleanup_stale()
    work = Path(tempfile.mkdtemp(prefix="hep-check-stage-", dir="/var/tmp"))
    work.chmod(0o755)
    local = Path(tempfile.mkdtemp(prefix="hep-check-stage-local-", dir="/var/tmp"))
    worker = UprootWorker()
    try:
        data = write_datasets(work, ["c"])["c"]
        write_link_file(work / "link.root", mb=32).chmod(0o644)
        (work / "tiny.bin").write_bytes(os.urandom(1000))
        (work / "tiny.bin").chmod(0o644)
        with remote_bench(args.rtt, args.mbit, data_dir=work) as bench:
            rc = measure_link(bench.root_url("link.root"), 30)
            bw = (rc.bandwidth_mb_per_s or 0) * 1e6
            print(f"link: round trip {rc.rtt_ms:.2f} ms, {rc.bandwidth_mb_per_s:.1f} MB/s, "
                  f"open {1e3 * (rc.open_s or 0):.1f} ms")
            starts = [xrdcp(bench.root_url("tiny.bin")) for _ in range(5)]
            start = statistics.median(starts)
            print(f"xrdcp of 1 kB (ms): {ms(starts)}; median {start * 1e3:.1f}")
            model = sum(start + f.stat().st_size / bw for f in data)
            for dest in ("/dev/null", "a local file"):
                for _ in range(2):
                    ts = [xrdcp(bench.root_url(f"c/{f.name}"),
                                "/dev/null" if dest == "/dev/null" else str(local / f.name))
                          for f in data]
                    print(f"xrdcp of c's files ({data[0].stat().st_size / 1e6:.2f} MB) to "
                          f"{dest} (ms): {ms(ts)}; sum {sum(ts) * 1e3:.0f}, model "
                          f"{model * 1e3:.0f}")
            copies = [str(local / f.name) for f in data]
            lw = str(data[0])
            some = [f"b{i}" for i in range(10)]
            for _ in range(args.rounds):
                t6 = root_loop(copies, None, True, None, lw)
                t1 = root_loop([copies[0]] * 6, None, True, None, lw)
                t10 = root_loop(copies, some, True, None, lw)
                print(f"ROOT, local copies: six {t6 * 1e3:.0f} ms, one six times "
                      f"{t1 * 1e3:.0f} ms, six with 10 branches {t10 * 1e3:.0f} ms")
            worker.warm(str(data[0]), bench.root_url("no-such-file.root"))
            for _ in range(args.rounds):
                a = worker.read(copies, None)
                b = worker.read([copies[0]] * 6, None)
                print(f"uproot, local copies: six {a * 1e3:.0f} ms, one six times "
                      f"{b * 1e3:.0f} ms")
            urls = [bench.root_url(f"c/{f.name}") for f in data]
            login = bench.root_url("no-such-file.root")
            for _ in range(args.rounds):
                tn = root_loop(urls, None, False, login, lw)
                tc = root_loop(urls, None, True, login, lw)
                t1 = root_loop([urls[0]] * 6, None, True, login, lw)
                print(f"ROOT over root://: no cache {tn * 1e3:.0f} ms, TTreeCache "
                      f"{tc * 1e3:.0f} ms, one URL six times {t1 * 1e3:.0f} ms")
    finally:
        worker.close()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(local, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
