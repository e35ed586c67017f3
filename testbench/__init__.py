"""Development-only test bench: emulated slow disks with known read rates (not in the wheel).

One or several "disks" (loop devices with ext4, :mod:`.loopdev`) are read-throttled by a cgroup
v1 blkio group (:mod:`.cgroup`) for the processes put inside it, so that the read tests can be
checked against known figures such as 70 MB/s and 120 IOPS; :mod:`.readers` holds reference
readers and cache dropping, :mod:`.bench` the context manager that ties them together.
Linux and root only: :func:`availability` says whether it can run.  Usage::

    with emulated_disks(read_mb_per_s=70, read_iops=120) as bench:
        shutil.copy(src, bench.mount_point)
        bench.drop_caches()
        bench.run(["hep-advisor", "calibrate", str(bench.mount_point)])

From a shell: ``python -m testbench --check | --run ... | --cleanup`` (:mod:`.cli`).  How
faithful the throttle is, measured: "Emulated disk: lab notes" in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

from .bench import (
    DEFAULT_READ_AHEAD_KB,
    DEFAULT_SIZE_MB,
    EmulatedDisks,
    availability,
    cleanup_stale,
    emulated_disks,
    teardown,
)
from .cgroup import CGROUP_ROOT
from .common import MB, EmulatedDiskError
from .loopdev import EmulatedDisk
from .readers import (
    drop_caches,
    random_reads,
    resident_fraction,
    sequential_read,
    write_random_file,
)

__all__ = [
    "CGROUP_ROOT",
    "DEFAULT_READ_AHEAD_KB",
    "DEFAULT_SIZE_MB",
    "MB",
    "EmulatedDisk",
    "EmulatedDiskError",
    "EmulatedDisks",
    "availability",
    "cleanup_stale",
    "drop_caches",
    "emulated_disks",
    "random_reads",
    "resident_fraction",
    "sequential_read",
    "teardown",
    "write_random_file",
]
