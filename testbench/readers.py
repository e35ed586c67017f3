"""Reading cold, and reference readers with known access patterns.

Run the readers through :meth:`testbench.EmulatedDisks.call` to read inside the throttling
cgroup; called directly they read at the disk's full speed.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from pathlib import Path

from hep_advisor.probes.readtests.pagecache import resident_fraction

from .common import EmulatedDiskError, write_value

__all__ = [
    "drop_caches",
    "evict_file",
    "random_reads",
    "resident_fraction",
    "sequential_read",
    "write_random_file",
]


def evict_file(path: Path) -> None:
    """``posix_fadvise(DONTNEED)`` on one file (never follows a symlink; errors ignored)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def drop_caches(*paths: str | os.PathLike[str], global_cache: bool = True) -> None:
    """Make the next read of ``paths`` cold: ``sync``, then ``posix_fadvise(DONTNEED)`` on each
    file (directories are walked), then, with ``global_cache``, ``echo 3 >
    /proc/sys/vm/drop_caches`` (root; it empties the page cache of the whole machine, metadata
    included, and so disturbs anything else running on it)."""
    os.sync()
    for p in map(Path, paths):
        if p.is_dir() and not p.is_symlink():
            for root, _dirs, files in os.walk(p):
                for name in files:
                    evict_file(Path(root) / name)
        elif p.is_file():
            evict_file(p)
    if global_cache:
        try:
            write_value(Path("/proc/sys/vm/drop_caches"), "3\n")
        except OSError as exc:
            raise EmulatedDiskError(f"cannot drop the page cache: {exc}") from exc


def sequential_read(
    path: str | os.PathLike[str],
    block_bytes: int = 1 << 20,
    limit_bytes: int | None = None,
    *,
    evict: bool = True,
) -> tuple[int, float]:
    """Read the file from the start with buffered ``readinto`` of ``block_bytes`` (after
    ``posix_fadvise(DONTNEED)`` with ``evict``), up to ``limit_bytes``: (bytes, seconds)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if evict:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buf = bytearray(block_bytes)
        view = memoryview(buf)
        limit = os.fstat(fd).st_size if limit_bytes is None else limit_bytes
        done = 0
        t0 = time.perf_counter()
        while done < limit:
            k = os.readv(fd, [view])
            if k <= 0:
                break
            done += k
        return done, time.perf_counter() - t0
    finally:
        os.close(fd)


def random_reads(
    path: str | os.PathLike[str],
    count: int,
    size: int = 4096,
    *,
    seed: int = 0,
    evict: bool = True,
) -> tuple[int, float]:
    """``count`` ``pread`` of ``size`` bytes at distinct random ``size``-aligned offsets, with
    ``POSIX_FADV_RANDOM`` (no read-ahead), after ``posix_fadvise(DONTNEED)`` with ``evict``:
    (reads, seconds)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if evict:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        slots = os.fstat(fd).st_size // size
        offsets = [k * size for k in random.Random(seed).sample(range(slots), min(count, slots))]
        t0 = time.perf_counter()
        for off in offsets:
            os.pread(fd, size, off)
        return len(offsets), time.perf_counter() - t0
    finally:
        os.close(fd)


def write_random_file(path: str | os.PathLike[str], size_bytes: int) -> Path:
    """A file of incompressible bytes (``os.urandom``), flushed to the device."""
    out = Path(path)
    chunk = 4 << 20
    with open(out, "wb") as f:
        left = size_bytes
        while left > 0:
            f.write(os.urandom(min(chunk, left)))
            left -= chunk
        f.flush()
        os.fsync(f.fileno())
    return out
