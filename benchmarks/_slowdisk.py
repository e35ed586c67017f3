"""A dataset copied onto a fresh emulated slow disk (70 MB/s, 120 IOPS; loop device, ext4 and
cgroup-v1 throttle from ``testbench``), for the ``check_*.py`` scripts that time the user's
kind of read on it.  The copy and the disk are removed at the end; the source is only read."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: testbench


@contextmanager
def slow_copy(data: Path, **disk: Any) -> Iterator[tuple[Any, Path, list[Path]]]:
    """``with slow_copy(DATA_DIR) as (bench, copy, files):`` the emulated disk, the dataset's
    directory on it and its ROOT files (sorted).  ``disk``: more arguments for
    ``testbench.emulated_disks``.  Exits with a one-line message where emulated disks cannot
    run here (not root, no cgroup v1 blkio) or the directory holds no ROOT file."""
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        raise SystemExit(f"emulated disks unavailable: {why}")
    src = sorted(data.glob("*.root"))
    if not src:
        raise SystemExit(f"{data}: no ROOT files")
    mb = sum(p.stat().st_size for p in src) / 1e6
    with emulated_disks(n=1, size_mb=int(2.5 * mb) + 64, read_mb_per_s=70.0, read_iops=120,
                        **disk) as bench:
        copy = Path(bench.mount_point) / data.name
        shutil.copytree(data, copy)
        os.sync()
        yield bench, copy, sorted(copy.glob("*.root"))
