"""Where a data path lives: mount, file system, and the block devices behind it.

Reads ``/proc/self/mountinfo`` and ``/sys/dev/block``/``/sys/class/block``.  Partitions are
resolved to their disk, md RAID and device-mapper devices to their members (``slaves``), down to
the physical disks.  Anything the system does not show is ``None``.  ``sys_root`` and
``mountinfo`` can be pointed elsewhere (tests use a fake tree).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .files import is_remote
from .results import BlockDevice, DeviceKind, FsClass, StorageInfo
from .throttle import block_dev_numbers, probe_throttle

NETWORK_FS: dict[str, FsClass] = {
    "nfs": "nfs", "nfs4": "nfs", "cifs": "nfs", "smb3": "nfs", "9p": "nfs", "ceph": "nfs",
    "glusterfs": "nfs", "gpfs": "nfs", "beegfs": "nfs", "lustre": "lustre",
}
MEMORY_FS = {"tmpfs", "ramfs"}
LOCAL_FS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "jfs", "reiserfs", "vfat",
            "exfat", "ntfs", "ntfs3", "overlay", "squashfs", "iso9660"}


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fs_type: str
    source: str
    major_minor: str


def read_mounts(mountinfo: str = "/proc/self/mountinfo") -> list[Mount]:
    mounts = []
    try:
        with open(mountinfo) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    for line in lines:
        parts = line.split()
        if " - " not in line or len(parts) < 10:
            continue
        left, right = line.split(" - ", 1)
        lparts, rparts = left.split(), right.split()
        mounts.append(
            Mount(
                mount_point=_unescape(lparts[4]),
                fs_type=rparts[0],
                source=rparts[1] if len(rparts) > 1 else "",
                major_minor=lparts[2],
            )
        )
    return mounts


def _unescape(s: str) -> str:
    return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace(
        "\\134", "\\"
    )


def find_mount(path: str, mounts: list[Mount]) -> Mount | None:
    real = os.path.realpath(path)
    best: Mount | None = None
    for m in mounts:
        mp = m.mount_point
        inside = real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/"
        if inside and (best is None or len(mp) >= len(best.mount_point)):
            best = m  # later mounts over the same point win, as in the kernel
    return best


def fs_class(fs_type: str | None) -> FsClass | None:
    if fs_type is None:
        return None
    if fs_type in NETWORK_FS:
        return NETWORK_FS[fs_type]
    if fs_type.startswith("fuse"):
        return "fuse"
    if fs_type in MEMORY_FS:
        return "memory"
    if fs_type in LOCAL_FS:
        return "local"
    return None


class BlockTree:
    """Block devices as ``/sys`` shows them."""

    def __init__(self, sys_root: str = "/sys") -> None:
        self.sys_root = sys_root

    def _read(self, *parts: str) -> str | None:
        try:
            with open(os.path.join(self.sys_root, *parts)) as fh:
                return fh.read().strip()
        except OSError:
            return None

    def name_of(self, major_minor: str) -> str | None:
        link = os.path.join(self.sys_root, "dev", "block", major_minor)
        try:
            return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else None
        except OSError:
            return None

    def _class_dir(self, name: str) -> str:
        return os.path.join(self.sys_root, "class", "block", name)

    def is_partition(self, name: str) -> bool:
        return os.path.exists(os.path.join(self._class_dir(name), "partition"))

    def parent_disk(self, name: str) -> str | None:
        real = os.path.realpath(self._class_dir(name))
        parent = os.path.basename(os.path.dirname(real))
        return parent or None

    def slaves(self, name: str) -> tuple[str, ...]:
        d = os.path.join(self._class_dir(name), "slaves")
        try:
            return tuple(sorted(os.listdir(d)))
        except OSError:
            return ()

    def queue_attr(self, name: str, attr: str) -> str | None:
        dev = self.parent_disk(name) if self.is_partition(name) else name
        return self._read("class", "block", dev or name, "queue", attr)

    def device(self, name: str) -> BlockDevice:
        kind: DeviceKind
        if self.is_partition(name):
            kind = "partition"
        elif name.startswith("md"):
            kind = "md"
        elif name.startswith("dm-"):
            kind = "dm"
        elif name.startswith("loop"):
            kind = "loop"
        elif self._read("class", "block", name, "queue", "rotational") is not None:
            kind = "disk"
        else:
            kind = "other"
        rot = self.queue_attr(name, "rotational")
        ra = self.queue_attr(name, "read_ahead_kb")
        mx = self.queue_attr(name, "max_sectors_kb")
        size = self._read("class", "block", name, "size")  # 512-byte sectors
        return BlockDevice(
            name=name,
            kind=kind,
            rotational=None if rot is None else rot == "1",
            read_ahead_kb=int(ra) if ra and ra.isdigit() else None,
            scheduler=_active_scheduler(self.queue_attr(name, "scheduler")),
            raid_level=self._read("class", "block", name, "md", "level") if kind == "md" else None,
            size_bytes=int(size) * 512 if size and size.isdigit() else None,
            slaves=self.slaves(name) if kind != "partition" else (self.parent_disk(name) or "",),
            max_sectors_kb=int(mx) if mx and mx.isdigit() else None,
        )

    def stack(self, name: str) -> tuple[BlockDevice, ...]:
        """``name`` and every device below it, breadth first, each once."""
        out: list[BlockDevice] = []
        seen: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop(0)
            if n in seen or not n:
                continue
            seen.add(n)
            dev = self.device(n)
            out.append(dev)
            todo.extend(dev.slaves)
        return tuple(out)


def _active_scheduler(text: str | None) -> str | None:
    if not text:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text if " " not in text else None


def probe_storage(
    path: str, sys_root: str = "/sys", mountinfo: str = "/proc/self/mountinfo"
) -> StorageInfo:
    """Describe the storage that ``path`` sits on."""
    if is_remote(path):
        return StorageInfo(path=path, mount_point=None, fs_type=path.split("://")[0],
                           fs_class="remote", device=None, rotational=None, read_ahead_kb=None,
                           scheduler=None)
    mount = find_mount(path, read_mounts(mountinfo))
    if mount is None:
        return StorageInfo(path=path, mount_point=None, fs_type=None, fs_class=None, device=None,
                           rotational=None, read_ahead_kb=None, scheduler=None)
    tree = BlockTree(sys_root)
    name = tree.name_of(mount.major_minor)
    stack = tree.stack(name) if name else ()
    top = stack[0] if stack else None
    leaves = tuple(d.name for d in stack if d.kind in ("disk", "loop", "other") and not d.slaves)
    rotational = top.rotational if top else None
    if stack and top is not None and top.kind in ("md", "dm"):
        rots = {d.rotational for d in stack if d.name in leaves}
        rotational = rots.pop() if len(rots) == 1 else None
    return StorageInfo(
        path=path,
        mount_point=mount.mount_point,
        fs_type=mount.fs_type,
        fs_class=fs_class(mount.fs_type),
        device=name,
        rotational=rotational,
        read_ahead_kb=top.read_ahead_kb if top else None,
        scheduler=top.scheduler if top else None,
        physical_devices=leaves,
        stack=stack,
        max_sectors_kb=top.max_sectors_kb if top else None,
        throttle=probe_throttle([mount.major_minor, *block_dev_numbers(
            [d.name for d in stack], sys_root)]),
    )
