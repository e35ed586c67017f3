"""The block throttle on a data path's device: cgroup read limits that bind the calling process.

Linux's block throttle (``block/blk-throttle.c`` in the kernel sources, torvalds/linux) limits a
cgroup's reads on one device to a byte rate and a request rate.  Where a process's cgroup (or
one above it) sets such limits, cgroup v1 in ``blkio.throttle.read_bps_device`` and
``read_iops_device`` of its blkio cgroup, cgroup v2 in ``io.max`` (``rbps=``, ``riops=``), the
device is a rate limiter for that process, whatever the hardware below can do.

How the throttle counts (the kernel's rule, in our words): it measures a group's I/O over a
time slice (``throtl_slice``, by default a tenth of a second: ``DFL_THROTL_SLICE_HD``, HZ/10).
A group that has been idle starts a fresh slice at its first I/O (``throtl_start_new_slice``).
To decide whether an I/O may go now (``tg_within_bps_limit`` / ``tg_within_iops_limit``) the
kernel takes the time elapsed in the slice *rounded up to whole slices* and allows the rate
times that time; so at the very start a whole slice's budget (rate x slice bytes, and IOPS x
slice requests) is allowed at once, and passes at the speed of the hardware below.  Later I/O
waits until the elapsed time covers it.  A job that starts reading after idle therefore gets
its first slice's worth of data ahead of the limit.

The slice length is not exposed to user space; :data:`DEFAULT_SLICE_S` is the kernel's default,
an assumption labelled as such in the site JSON (``slice_source``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .results import ThrottleInfo

#: The kernel's default throttle slice (``DFL_THROTL_SLICE_HD``, HZ / 10): an assumption.
DEFAULT_SLICE_S = 0.1
V1_BPS = "blkio.throttle.read_bps_device"
V1_IOPS = "blkio.throttle.read_iops_device"


def _cgroup_paths(proc_cgroup: str) -> tuple[str | None, str | None]:
    """(the v1 blkio cgroup path, the v2 cgroup path) of a process, from /proc/<pid>/cgroup."""
    v1 = v2 = None
    try:
        text = Path(proc_cgroup).read_text()
    except OSError:
        return None, None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hier, ctrls, path = parts
        if hier == "0" and ctrls == "":
            v2 = path
        elif "blkio" in ctrls.split(","):
            v1 = path
    return v1, v2


def _ancestors(root: Path, path: str) -> list[Path]:
    """``root/path`` and every directory above it up to ``root``, deepest first."""
    out = [root]
    cur = root
    for part in [p for p in path.split("/") if p]:
        cur = cur / part
        out.append(cur)
    return out[::-1]


def _rules(text: str, devices: set[str], key: str | None = None) -> list[float]:
    """Limits for ``devices`` (``MAJ:MIN``) in a v1 throttle file (``key`` None) or v2 io.max."""
    out: list[float] = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in devices:
            continue
        if key is None:
            if len(words) >= 2 and words[1].isdigit():
                out.append(float(words[1]))
            continue
        for w in words[1:]:
            k, _, v = w.partition("=")
            if k == key and v.isdigit():
                out.append(float(v))
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def probe_throttle(devices: Iterable[str], proc_cgroup: str = "/proc/self/cgroup",
                   cgroup_root: str = "/sys/fs/cgroup") -> ThrottleInfo | None:
    """The read limits the calling process's cgroups set on any of ``devices`` (``MAJ:MIN``:
    the data's device and the devices below it), the tightest along the cgroup path; ``None``:
    no limit found."""
    devs = {d for d in devices if d}
    if not devs:
        return None
    v1, v2 = _cgroup_paths(proc_cgroup)
    root = Path(cgroup_root)
    bps: list[float] = []
    iops: list[float] = []
    if v1 is not None:
        base = root / "blkio"
        for d in _ancestors(base, v1):
            bps += _rules(_read(d / V1_BPS), devs)
            iops += _rules(_read(d / V1_IOPS), devs)
    if v2 is not None:
        for d in _ancestors(root, v2):
            text = _read(d / "io.max")
            bps += _rules(text, devs, "rbps")
            iops += _rules(text, devs, "riops")
    bps = [b for b in bps if b > 0]
    iops = [i for i in iops if i > 0]
    if not bps and not iops:
        return None
    return ThrottleInfo(read_mb_per_s=min(bps) / 1e6 if bps else None,
                        read_iops=min(iops) if iops else None,
                        slice_s=DEFAULT_SLICE_S, slice_source="assumed: kernel default")


def block_dev_numbers(names: Iterable[str], sys_root: str = "/sys") -> list[str]:
    """``MAJ:MIN`` of the block devices ``names`` (from /sys/class/block/<name>/dev)."""
    out = []
    for n in names:
        try:
            out.append(Path(os.path.join(sys_root, "class", "block", n, "dev")).read_text().strip())
        except OSError:
            continue
    return out
