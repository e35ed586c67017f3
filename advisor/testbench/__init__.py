"""Test benches for hep-advisor: slow, emulated devices with known rates.

:mod:`advisor.testbench.emulated_disk` turns this machine's fast disk into one or several slow
"disks" (loop devices formatted with ext4, read-throttled by cgroup v1 blkio) so that the read
tests can be checked against known figures, e.g. 70 MB/s and 120 IOPS.  Linux and root only;
:func:`~advisor.testbench.emulated_disk.availability` says whether it can run.

The names are loaded lazily so that ``python -m advisor.testbench.emulated_disk`` runs cleanly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .emulated_disk import (
        EmulatedDisk,
        EmulatedDiskError,
        EmulatedDisks,
        availability,
        cleanup_stale,
        drop_caches,
        emulated_disks,
        random_reads,
        resident_fraction,
        sequential_read,
        write_random_file,
    )

__all__ = [
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
    "write_random_file",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(".emulated_disk", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
