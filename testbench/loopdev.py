"""The emulated disks themselves: loop devices with ext4, mounted in a work directory.

Each disk is a sparse backing file ``<workdir>/disk<i>.img`` (the work directory is a fresh
``hep-advisor-emu-<pid>-<n>-*`` under ``/var/tmp``, a real disk, not a tmpfs;
``$HEP_ADVISOR_EMULATED_TMP`` overrides it), a loop device on it (``losetup --find --show
--direct-io=on``), formatted ext4 and mounted ``noatime`` at ``<workdir>/mnt<i>``.  Removal finds
mounts and loop devices through ``/proc/self/mounts`` and ``/sys/block``, so that half-made
disks and those of killed runs go too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .common import MB, EmulatedDiskError, run_tool, write_value

WORKDIR_PREFIX = "hep-advisor-emu-"
ENV_TMP = "HEP_ADVISOR_EMULATED_TMP"
TOOLS = ("losetup", "mkfs.ext4", "mount", "umount")
_WORKDIR_RE = re.compile(rf"{re.escape(WORKDIR_PREFIX)}(\d+)-(\d+)-[^/]*")


def tmp_roots() -> list[Path]:
    """Where work directories go (the first) and are looked for: ``$HEP_ADVISOR_EMULATED_TMP``,
    ``/var/tmp``, the temp dir."""
    roots = []
    if os.environ.get(ENV_TMP):
        roots.append(Path(os.environ[ENV_TMP]))
    roots += [Path("/var/tmp"), Path(tempfile.gettempdir())]
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def make_workdir(tmp_root: Path, tag: str) -> Path:
    tmp_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{tag}-", dir=tmp_root))
    workdir.chmod(0o755)
    return workdir


def _unescape(field: str) -> str:
    """Undo the octal escapes of /proc/mounts (``\\040`` for a space)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mounts() -> list[tuple[str, str]]:
    """(source, mount point) of every mount, innermost last."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2:
                out.append((_unescape(fields[0]), _unescape(fields[1])))
    return out


def loop_devices() -> dict[str, str]:
    """Attached loop devices: ``/dev/loopN`` -> backing file (may end in `` (deleted)``)."""
    out = {}
    for entry in Path("/sys/block").glob("loop*"):
        with contextlib.suppress(OSError):
            out[f"/dev/{entry.name}"] = (entry / "loop" / "backing_file").read_text().strip()
    return out


def status() -> tuple[bool, str]:
    """Whether the tools are on the PATH and a loop device is free."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return False, f"missing tools: {', '.join(missing)} (util-linux, e2fsprogs)"
    try:
        free = run_tool(["losetup", "--find"], timeout=20).strip()
    except EmulatedDiskError as exc:
        return False, f"no usable loop device: {exc}"
    if not free.startswith("/dev/loop"):
        return False, "no usable loop device (losetup --find found none)"
    return True, "loop devices, ext4"


# --------------------------------------------------------------------------------------------
# one disk


@dataclass(frozen=True)
class EmulatedDisk:
    """One emulated disk: a loop device with ext4, mounted."""

    index: int
    device: str
    major_minor: str
    mount_point: Path
    backing_file: Path
    size_mb: int
    direct_io: bool

    @property
    def queue(self) -> Path:
        """The loop device's ``/sys/block/loopN/queue`` directory."""
        return Path("/sys/block") / Path(self.device).name / "queue"

    @property
    def read_ahead_kb(self) -> int:
        return int((self.queue / "read_ahead_kb").read_text())

    @property
    def max_sectors_kb(self) -> int:
        return int((self.queue / "max_sectors_kb").read_text())


def make_disk(
    workdir: Path,
    i: int,
    size_mb: int,
    *,
    direct_io: bool,
    read_ahead_kb: int | None,
    max_sectors_kb: int | None,
    rotational: bool | None,
) -> EmulatedDisk:
    """Backing file, loop device, ext4, mount, queue settings (``None``: leave the kernel's)."""
    backing = workdir / f"disk{i}.img"
    with open(backing, "wb") as f:
        f.truncate(size_mb * MB)
    argv = ["losetup", "--find", "--show"]
    if direct_io:
        argv.append("--direct-io=on")
    device = run_tool([*argv, str(backing)]).strip()
    if not device.startswith("/dev/loop"):
        raise EmulatedDiskError(f"losetup gave {device!r}")
    sysdir = Path("/sys/block") / Path(device).name
    major_minor = (sysdir / "dev").read_text().strip()
    dio = False
    with contextlib.suppress(OSError, ValueError):
        dio = (sysdir / "loop" / "dio").read_text().strip() == "1"
    run_tool(["mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0",
              "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", device])
    mount_point = workdir / f"mnt{i}"
    mount_point.mkdir()
    run_tool(["mount", "-o", "noatime", device, str(mount_point)])
    queue = sysdir / "queue"
    try:
        # rotational first: from Linux 6.11 writing it commits the queue limits again, which
        # resets read_ahead_kb to the kernel's default (2560 on a loop device)
        if rotational is not None:
            write_value(queue / "rotational", "1" if rotational else "0")
        if max_sectors_kb is not None:
            write_value(queue / "max_sectors_kb", str(max_sectors_kb))
        if read_ahead_kb is not None:
            write_value(queue / "read_ahead_kb", str(read_ahead_kb))
    except OSError as exc:
        raise EmulatedDiskError(f"cannot set the queue of {device}: {exc}") from exc
    return EmulatedDisk(i, device, major_minor, mount_point, backing, size_mb, dio)


def flush_buffers(device: str) -> None:
    """Empty the device's own buffer cache (``BLKFLSBUF``: ext4 metadata read through it)."""
    with contextlib.suppress(OSError):
        fd = os.open(device, os.O_RDONLY)
        try:
            fcntl.ioctl(fd, 0x1261)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------------------------
# removal


def _umount(mount_point: str, errors: list[str]) -> None:
    try:
        run_tool(["umount", mount_point], timeout=60)
    except EmulatedDiskError:
        try:  # busy (an open file, a working directory): detach now, free when released
            run_tool(["umount", "-l", mount_point], timeout=60)
        except EmulatedDiskError as exc:
            errors.append(str(exc))


def _detach(device: str, errors: list[str]) -> None:
    if not Path(f"/sys/block/{Path(device).name}/loop").exists():
        return  # already detached (autoclear)
    try:
        run_tool(["losetup", "-d", device], timeout=60)
    except EmulatedDiskError as exc:
        if Path(f"/sys/block/{Path(device).name}/loop").exists():
            errors.append(str(exc))


def remove_disks(workdir: Path | None, devices: Iterable[str], errors: list[str]) -> None:
    """Every mount and loop device tied to ``workdir`` or in ``devices`` (found in /proc/mounts
    and /sys/block, so that half-made disks go too), then the work directory."""
    devices = set(devices)
    prefix = f"{workdir}/" if workdir is not None else None
    if prefix is not None:
        for dev, backing in loop_devices().items():
            if backing.startswith(prefix):
                devices.add(dev)
    # mounts: those under the work dir and those of our devices, innermost first
    for source, target in reversed(mounts()):
        if source in devices or (prefix is not None and target.startswith(prefix)):
            _umount(target, errors)
    for dev in sorted(devices):
        _detach(dev, errors)
    if workdir is not None and workdir.exists():
        try:
            shutil.rmtree(workdir)
        except OSError as exc:
            errors.append(f"cannot remove {workdir}: {exc}")


def stale_workdirs(is_stale: Callable[[int], bool]) -> dict[Path, list[str]]:
    """Work directories (with their loop devices) whose ``<pid>`` ``is_stale`` says to remove:
    found through loop devices' backing files, mounts, and the directories themselves."""
    workdirs: set[Path] = set()
    for _dev, backing in loop_devices().items():
        m = _WORKDIR_RE.search(backing)
        if m and is_stale(int(m.group(1))):
            workdirs.add(Path(backing[: m.end()]))
    for _src, target in mounts():
        m = _WORKDIR_RE.search(target)
        if m and is_stale(int(m.group(1))):
            workdirs.add(Path(target[: m.end()]))
    for root in tmp_roots():
        with contextlib.suppress(OSError):
            for d in root.glob(WORKDIR_PREFIX + "*"):
                m = _WORKDIR_RE.fullmatch(d.name)
                if m and is_stale(int(m.group(1))):
                    workdirs.add(d)
    return {
        wd: [dev for dev, backing in loop_devices().items() if backing.startswith(f"{wd}/")]
        for wd in sorted(workdirs)
    }
