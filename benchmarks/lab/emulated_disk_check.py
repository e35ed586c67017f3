"""Benchmark: how honest the emulated disk's throttle is (issue 3, item 6).

On one emulated disk (loop device + ext4 + cgroup v1 blkio, ``testbench``) with read
limits of 70 MB/s and 120 IOPS, a process inside the cgroup reads a cold file:

* sequentially with buffered 1 MiB reads, for several loop-device read-ahead settings
  (``--read-ahead-kb``, default 2560 = the bench's default, and 8192);
* with small requests under a small read-ahead (64 KiB reads, read_ahead_kb 128), where the
  IOPS limit binds: expected ``iops x 128 KiB`` (the read-ahead window is the request size the
  device sees);
* 4 KiB at distinct random offsets with ``POSIX_FADV_RANDOM``: expected ``iops`` reads/s;

and a process outside the cgroup reads the same file cold at full speed.  Each figure is the
median of ``--repeat`` runs with [min-max] and its deviation from the set value; the mean request
size the device saw comes from the cgroup's ``blkio.throttle.io_serviced`` counters.

    sudo python -m benchmarks.lab.emulated_disk_check [--mb-per-s 70] [--iops 120] [--repeat 5]
        [--file-mb 200] [--random-reads 600] [--read-ahead-kb 2560,8192] [--no-direct-io]
        [--global-drop] [--json OUT]

The file is evicted before each read with ``posix_fadvise(DONTNEED)`` (``--global-drop`` also
empties the whole page cache: it disturbs anything else running) and checked with ``mincore``.
Needs root; takes about a minute and a half with the defaults.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from testbench import (
    MB,
    EmulatedDisks,
    availability,
    cleanup_stale,
    emulated_disks,
    random_reads,
    resident_fraction,
    sequential_read,
    write_random_file,
)


def summary(values: list[float], target: float | None) -> dict[str, Any]:
    med = statistics.median(values)
    out: dict[str, Any] = {
        "median": med,
        "min": min(values),
        "max": max(values),
        "spread": (max(values) - min(values)) / med if med else None,
        "samples": values,
    }
    if target:
        out["target"] = target
        out["deviation"] = med / target - 1
    return out


def line(label: str, unit: str, s: dict[str, Any], extra: str = "") -> str:
    text = (f"{label:<46} {s['median']:9.1f} {unit:<5} [{s['min']:.1f}-{s['max']:.1f}]"
            f" spread {100 * s['spread']:4.1f}%")
    if "target" in s:
        text += f"  vs {s['target']:.1f}: {100 * s['deviation']:+5.1f}%"
    return text + extra


def measure(
    bench: EmulatedDisks,
    path: Path,
    repeat: int,
    reader: Callable[[], tuple[int, float]],
    *,
    inside: bool,
    global_drop: bool,
    per_byte: bool,
) -> tuple[list[float], float, list[float]]:
    """Rates (MB/s or reads/s), mean request size seen by the device (bytes), residency."""
    rates, resident = [], []
    ios0, bytes0 = bench.stats()[bench.major_minor]
    for _ in range(repeat):
        bench.drop_caches(path, global_cache=global_drop)
        resident.append(resident_fraction(path) or 0.0)
        bench.reset_throttle()  # a fresh throttle slice: no budget carried over
        n, dt = bench.call(reader) if inside else reader()
        rates.append(n / dt / MB if per_byte else n / dt)
    ios1, bytes1 = bench.stats()[bench.major_minor]
    return rates, (bytes1 - bytes0) / max(1, ios1 - ios0), resident


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb-per-s", type=float, default=70.0)
    p.add_argument("--iops", type=int, default=120)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--file-mb", type=int, default=200)
    p.add_argument("--block-kib", type=int, default=1024, help="sequential read size")
    p.add_argument("--random-reads", type=int, default=600)
    p.add_argument("--small-mb", type=int, default=24, help="data read in the IOPS-bound case")
    p.add_argument("--read-ahead-kb", default="2560,8192")
    p.add_argument("--no-direct-io", action="store_true")
    p.add_argument("--global-drop", action="store_true")
    p.add_argument("--json", type=Path)
    a = p.parse_args()

    ok, reason = availability()
    if not ok:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    cleanup_stale()
    results: dict[str, Any] = {
        "settings": {k: v for k, v in vars(a).items() if k != "json"},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    ras = [int(x) for x in a.read_ahead_kb.split(",") if x]
    block = a.block_kib * 1024
    with emulated_disks(
        size_mb=a.file_mb + 256,
        read_mb_per_s=a.mb_per_s,
        read_iops=a.iops,
        read_ahead_kb=ras[0],
        direct_io=not a.no_direct_io,
    ) as bench:
        disk = bench.disks[0]
        results["disk"] = {"device": disk.device, "direct_io": disk.direct_io,
                           "max_sectors_kb": disk.max_sectors_kb}
        print(f"{bench}\n  direct I/O {disk.direct_io}, max_sectors_kb {disk.max_sectors_kb}")
        path = write_random_file(bench.mount_point / "data.bin", a.file_mb * MB)
        kw: dict[str, Any] = {"global_drop": a.global_drop}

        for ra in ras:
            (disk.queue / "read_ahead_kb").write_text(str(ra))
            rates, req, res = measure(
                bench, path, a.repeat, lambda: sequential_read(path, block),
                inside=True, per_byte=True, **kw)
            s = summary(rates, a.mb_per_s)
            s.update(request_bytes=req, resident_before=max(res))
            results[f"sequential_ra{ra}"] = s
            print(line(f"sequential {a.block_kib} KiB reads, read_ahead_kb {ra}", "MB/s", s,
                       f"  requests {req / 1024:.0f} KiB"))

        (disk.queue / "read_ahead_kb").write_text("128")
        small = a.small_mb * MB
        rates, req, res = measure(
            bench, path, a.repeat, lambda: sequential_read(path, 65536, small),
            inside=True, per_byte=True, **kw)
        s = summary(rates, a.iops * 128 * 1024 / MB)
        s.update(request_bytes=req, resident_before=max(res))
        results["sequential_64k_ra128"] = s
        print(line("sequential 64 KiB reads, read_ahead_kb 128", "MB/s", s,
                   f"  requests {req / 1024:.0f} KiB (IOPS-bound: {a.iops} x 128 KiB)"))
        (disk.queue / "read_ahead_kb").write_text(str(ras[0]))

        rates, req, res = measure(
            bench, path, a.repeat, lambda: random_reads(path, a.random_reads),
            inside=True, per_byte=False, **kw)
        s = summary(rates, float(a.iops))
        s.update(request_bytes=req, resident_before=max(res))
        results["random_4k"] = s
        print(line(f"random 4 KiB reads ({a.random_reads}), FADV_RANDOM", "IOPS", s,
                   f"  requests {req / 1024:.0f} KiB"))

        rates, _req, res = measure(
            bench, path, a.repeat, lambda: sequential_read(path, block),
            inside=False, per_byte=True, **kw)
        s = summary(rates, None)
        s.update(resident_before=max(res))
        results["sequential_unthrottled"] = s
        print(line(f"sequential {a.block_kib} KiB reads, outside the cgroup", "MB/s", s))
        rates, _req, res = measure(
            bench, path, a.repeat, lambda: random_reads(path, 5000),
            inside=False, per_byte=False, **kw)
        s = summary(rates, None)
        results["random_4k_unthrottled"] = s
        print(line("random 4 KiB reads (5000), outside the cgroup", "IOPS", s))
        worst = max(r.get("resident_before", 0.0) for r in results.values()
                    if isinstance(r, dict))
        print(f"page-cache residency before the reads: at most {100 * worst:.1f}%")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
