"""Counters read around a traced run: block devices, the page cache, the tracer's cost.

- :func:`block_snapshot`: ``/sys/dev/block/*/stat`` (reads completed, sectors read) for every
  block device, so that the reads a device served during the run can be checked against the
  traced ones (other programs' reads on the same device count too);
- :func:`device_of`: the block device (``major:minor``) holding a file;
- :func:`evict`: drop a file's pages from the page cache (``posix_fadvise(DONTNEED)`` on a
  read-only descriptor: nothing is written);
- :func:`tracer_cost_s`: what one traced call costs, measured here by timing reads with and
  without the tracer;
- :func:`sequential_mb_per_s`: the device's streaming rate, measured by one cold sequential
  read of a file (where the trace holds no large read that reached the device).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

SECTOR = 512


def block_snapshot() -> dict[str, tuple[int, int]]:
    """``major:minor`` -> (reads completed, bytes read) of every block device."""
    out: dict[str, tuple[int, int]] = {}
    base = Path("/sys/dev/block")
    try:
        entries = list(base.iterdir())
    except OSError:
        return out
    for e in entries:
        try:
            fields = (e / "stat").read_text().split()
            out[e.name] = (int(fields[0]), int(fields[2]) * SECTOR)
        except (OSError, ValueError, IndexError):
            continue
    return out


def block_delta(files: Iterable[str], before: dict[str, tuple[int, int]],
                after: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The block devices holding ``files``: (reads, sectors) between two snapshots."""
    devices = {d for f in files if (d := device_of(f)) is not None}
    return {d: (after[d][0] - before[d][0], after[d][1] - before[d][1])
            for d in devices if d in before and d in after}


def device_of(path: str) -> str | None:
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    return f"{os.major(dev)}:{os.minor(dev)}"


def evict(path: str) -> bool:
    """Drop ``path``'s cached pages; False where it cannot be opened for reading."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def sequential_mb_per_s(path: str, max_bytes: int = 16 * 2**20, chunk: int = 2**20
                        ) -> float | None:
    """A cold sequential read of up to ``max_bytes`` of ``path`` (its pages dropped first,
    read-only): MB/s, or None where it cannot be read or is too small to time."""
    if not evict(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
        total = 0
        t0 = time.perf_counter()
        while total < max_bytes:
            got = len(os.read(fd, chunk))
            if got == 0:
                break
            total += got
        dt = time.perf_counter() - t0
    except OSError:
        return None
    finally:
        os.close(fd)
    if total < 4 * chunk or dt <= 0:
        return None
    return total / dt / 1e6


_COST: dict[str, float] = {}

_LOOP = (
    "import os,sys,time\n"
    "fd=os.open(sys.argv[1],os.O_RDONLY)\n"
    "t=time.perf_counter()\n"
    "for i in range(int(sys.argv[2])): os.pread(fd,64,(i*4096)%65536)\n"
    "print(time.perf_counter()-t)\n"
)


def tracer_cost_s(strace: str, calls: int = 3000) -> float:
    """Seconds one traced call adds (median of 3 paired runs of ``calls`` cached reads under
    ``strace`` and without); measured once per process."""
    if strace in _COST:
        return _COST[strace]
    from .strace import strace_argv

    with tempfile.TemporaryDirectory(prefix="hep-advisor-tracecost-") as tmp:
        data = Path(tmp) / "data"
        data.write_bytes(b"\0" * 65536)
        diffs = []
        for _ in range(3):
            plain = subprocess.run([sys.executable, "-c", _LOOP, str(data), str(calls)],
                                   capture_output=True, text=True, check=True)
            traced = subprocess.run(
                strace_argv(strace, str(Path(tmp) / "out"),
                            [sys.executable, "-c", _LOOP, str(data), str(calls)]),
                capture_output=True, text=True, check=True)
            diffs.append((float(traced.stdout) - float(plain.stdout)) / calls)
        diffs.sort()
        _COST[strace] = max(diffs[1], 0.0)
    return _COST[strace]


def now() -> float:
    return time.monotonic()
