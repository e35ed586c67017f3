"""Emulated slow disks: loop devices with ext4, read-throttled by cgroup v1 blkio.

This machine's virtual disk is fast (about 1 GB/s cold, 14k random 4 KiB reads/s), so every
reader here is CPU-bound.  To check that the read tests find the rates of a slow device, this
bench makes one or several "disks" with known read rates:

* a sparse backing file per disk, in a fresh directory under ``/var/tmp`` (a real disk, not a
  tmpfs; ``$HEP_ADVISOR_EMULATED_TMP`` overrides it), named ``hep-advisor-emu-<pid>-<n>-*``;
* a loop device on it (``losetup --find --show --direct-io=on``), formatted ext4 and mounted
  (``noatime``) at ``<workdir>/mnt<i>``;
* one cgroup ``/sys/fs/cgroup/blkio/hep-advisor-<pid>-<n>`` whose
  ``blkio.throttle.read_bps_device`` and ``blkio.throttle.read_iops_device`` carry the limits
  (MB = 10^6 bytes) for every disk.  Only processes in that cgroup are throttled:
  :meth:`EmulatedDisks.run`, :meth:`~EmulatedDisks.popen` and :meth:`~EmulatedDisks.call` put
  their process there before it does any I/O; everything else reads the disks at full speed.

Usage::

    with emulated_disks(read_mb_per_s=70, read_iops=120) as bench:
        shutil.copy(src, bench.mount_point)
        bench.drop_caches()
        bench.run(["hep-advisor", "calibrate", str(bench.mount_point)])

or from a shell (benchmarks)::

    python -m advisor.testbench.emulated_disk --check
    python -m advisor.testbench.emulated_disk --run --mb-per-s 70 --iops 120 --copy DATA -- \\
        sh -c 'hep-advisor calibrate "$HEP_ADVISOR_EMULATED_MOUNT"'
    python -m advisor.testbench.emulated_disk --cleanup     # leftovers of crashed runs

Everything is removed on exit, whether the body returns, raises or is interrupted (Ctrl-C during
the clean-up is deferred until it is done): the limits are lifted (so that queued requests
drain), the processes left in the cgroup are killed, the cgroup is removed, the mounts are
unmounted (lazily when busy), the loop devices detached and the files deleted.
:func:`cleanup_stale` removes what a killed run (``SIGKILL``, power loss) left behind.

How honest the throttle is (kernel 6.18, cgroup v1, this 2-core VM shared with other
benchmarks; ``python benchmarks/emulated_disk_check.py``: limits 70 MB/s and 120 IOPS, a 200 MB
file, 5 cold runs in a process inside the cgroup, median [min-max], the device's mean request
size from the cgroup's counters):

* sequential, buffered 1 MiB ``readinto``: 71.3 MB/s [71.3-71.4] (+1.9%) with
  ``read_ahead_kb`` 2560 (requests of 1252 KiB); 69.6 MB/s [69.6-69.8] (-0.5%) with 8192
  (1149 KiB);
* 4 KiB ``pread`` at 600 distinct random offsets, ``POSIX_FADV_RANDOM``: 122.6 reads/s
  [122.6-122.9] (+2.2%; requests of 4 KiB);
* 64 KiB reads with ``read_ahead_kb`` 128: 16.2 MB/s [16.1-16.4], i.e. 120 x 128 KiB
  (15.7 MB/s) +2.8%: IOPS-bound (see below);
* the same file read cold by a process outside the cgroup: 806 MB/s on the first read, then
  4-5 GB/s (the host caches the virtual disk), 11.7k-14.0k random 4 KiB reads/s: not throttled;
* with direct I/O off (3 runs): 71.1 MB/s, 120.9 reads/s, 16.5 MB/s: the same.

The small excess is blk-throttle's time slice (100 ms): a fresh slice lets one slice of budget
through at once (7 MB or 12 requests at 70 MB/s and 120 IOPS), then requests are released in
100 ms batches.  A read of T seconds therefore comes out up to about 0.1 s / T fast: time read
tests for 2 s or more (a 0.5 s test reads 15-25% fast).  Budget the non-binding limit leaves
unused (bytes during an IOPS-bound random test) carries over for up to two slices into the next
phase when it follows at once (a sequential read right after a random test came out at 120 MB/s
over its first 0.2 s): leave 0.3 s between tests, or call :meth:`EmulatedDisks.reset_throttle`
(rewriting the limits starts a fresh slice; the benchmark does this before every run, which
brought the spread from 3-4% down to 0.3%).

blk-throttle charges every request (bio) one IOPS slot, sequential or not, and the loop device
issues bios of at most ``max_sectors_kb`` = 1280 KiB; so a stream of requests smaller than
``rate / iops`` (583 kB at 70 MB/s and 120 IOPS) is IOPS-bound, unlike a real disk, which
streams small sequential requests at full speed.  Buffered reads go through read-ahead, which
issues full-size bios when ``read_ahead_kb`` >= ``max_sectors_kb``: the bench therefore sets
``read_ahead_kb`` = 2560 (:data:`DEFAULT_READ_AHEAD_KB`: two full bios; this kernel's own
default for loop devices), and then the bps limit is what binds for sequential reads of any
request size.  With ``read_ahead_kb`` = 128 (a common disk default), 64 KiB reads come out at
120 x 128 KiB = 15.7 MB/s instead (reads of 1 MiB and more still reach 70 MB/s: the kernel
widens read-ahead to the request, up to ``max_sectors_kb``).  O_DIRECT reads issue one bio per
request (split at ``max_sectors_kb``), so they too must be >= 583 kB to see the bps limit.
Random reads pay ``max(1/iops, size/bps)`` each: the two limits are not added.  Reading part of
a file also pays for the read-ahead beyond its end (up to ``read_ahead_kb``).

``--direct-io=on`` (the default, ``direct_io=True``) makes the loop device read its backing
file with O_DIRECT, so the data is not cached a second time in the page cache of the backing
file: evicting the file on the emulated disk (``posix_fadvise(DONTNEED)``, as the read tests
do) is enough to make the next read cold.  The throttle sits at the entry of the loop device
and binds either way (measured the same with direct I/O off), but without it the emulated disk
costs twice its data in RAM and its unthrottled speed is the page cache's, not the disk's.

Standard library only; Linux, root, cgroup v1 blkio, ``losetup``, ``mkfs.ext4``, ``mount`` and
``umount`` (util-linux, e2fsprogs).  :func:`availability` says whether it can run.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import os
import pickle
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from probes.readtests.pagecache import resident_fraction

__all__ = [
    "CGROUP_ROOT",
    "DEFAULT_READ_AHEAD_KB",
    "MB",
    "EmulatedDisk",
    "EmulatedDiskError",
    "EmulatedDisks",
    "availability",
    "cleanup_stale",
    "drop_caches",
    "emulated_disks",
    "main",
    "random_reads",
    "resident_fraction",
    "sequential_read",
    "write_random_file",
]

MB = 1_000_000
CGROUP_ROOT = Path("/sys/fs/cgroup/blkio")
CGROUP_PREFIX = "hep-advisor-"
WORKDIR_PREFIX = "hep-advisor-emu-"
#: Read-ahead of the loop devices: two full-size (1280 KiB) bios, so that buffered sequential
#: reads are bound by the bps limit, not by the IOPS limit (see the module docstring).
DEFAULT_READ_AHEAD_KB = 2560
DEFAULT_SIZE_MB = 512
ENV_MOUNT = "HEP_ADVISOR_EMULATED_MOUNT"
ENV_MOUNTS = "HEP_ADVISOR_EMULATED_MOUNTS"
ENV_CGROUP = "HEP_ADVISOR_EMULATED_CGROUP"
ENV_TMP = "HEP_ADVISOR_EMULATED_TMP"

_CGROUP_RE = re.compile(rf"^{re.escape(CGROUP_PREFIX)}(\d+)-(\d+)$")
_WORKDIR_RE = re.compile(rf"{re.escape(WORKDIR_PREFIX)}(\d+)-(\d+)-[^/]*")
_BPS_FILE = "blkio.throttle.read_bps_device"
_IOPS_FILE = "blkio.throttle.read_iops_device"
_TOOLS = ("losetup", "mkfs.ext4", "mount", "umount")
_counter = itertools.count()
_T = TypeVar("_T")


class EmulatedDiskError(RuntimeError):
    """Setting up, using or removing an emulated disk failed."""


# --------------------------------------------------------------------------------------------
# small helpers


def _cmd(argv: Sequence[str], *, check: bool = True, timeout: float = 120.0) -> str:
    """Run a system tool; its stdout, or :class:`EmulatedDiskError` with its stderr."""
    try:
        proc = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        if check:
            raise EmulatedDiskError(f"{' '.join(argv)}: {exc}") from exc
        return ""
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip() or f"exit status {proc.returncode}"
        raise EmulatedDiskError(f"{' '.join(argv)}: {msg}")
    return proc.stdout


def _write(path: Path, text: str) -> None:
    """Write to a sysfs/cgroupfs/procfs file in one ``write`` (they take one value per call)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unescape(field: str) -> str:
    """Undo the octal escapes of /proc/mounts (``\\040`` for a space)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts() -> list[tuple[str, str]]:
    """(source, mount point) of every mount, innermost last."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2:
                out.append((_unescape(fields[0]), _unescape(fields[1])))
    return out


def _loop_devices() -> dict[str, str]:
    """Attached loop devices: ``/dev/loopN`` -> backing file (may end in `` (deleted)``)."""
    out = {}
    for entry in Path("/sys/block").glob("loop*"):
        with contextlib.suppress(OSError):
            out[f"/dev/{entry.name}"] = (entry / "loop" / "backing_file").read_text().strip()
    return out


def _cgroup_pids(cgroup: Path) -> list[int]:
    try:
        return [int(x) for x in (cgroup / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _join_cgroup(procs_file: str) -> None:
    """Move the calling process into the cgroup whose ``cgroup.procs`` this is (fork-safe)."""
    fd = os.open(procs_file, os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


def _tmp_roots() -> list[Path]:
    roots = []
    if os.environ.get(ENV_TMP):
        roots.append(Path(os.environ[ENV_TMP]))
    roots += [Path("/var/tmp"), Path(tempfile.gettempdir())]
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block is done (clean-up must not be cut in half), then raise it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def handler(signum: int, frame: object) -> None:
        caught.append(signum)

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            raise KeyboardInterrupt


# --------------------------------------------------------------------------------------------
# availability, page cache, clean-up


def availability() -> tuple[bool, str]:
    """Whether emulated disks can be made here, and a one-line reason when not.

    Checks: Linux, root, cgroup v1 blkio with the throttle files, a cgroup can be created there,
    ``losetup``/``mkfs.ext4``/``mount``/``umount`` on the PATH, and a free loop device.
    """
    if not sys.platform.startswith("linux"):
        return False, f"emulated disks need Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return False, "emulated disks need root (loop devices, mounts, blkio cgroups)"
    if not (CGROUP_ROOT / _BPS_FILE).exists() or not (CGROUP_ROOT / _IOPS_FILE).exists():
        return False, (
            f"no cgroup v1 blkio throttling at {CGROUP_ROOT} "
            "(needs the blkio controller mounted as cgroup v1 and CONFIG_BLK_DEV_THROTTLING)"
        )
    probe = CGROUP_ROOT / f"{CGROUP_PREFIX}{os.getpid()}-{next(_counter)}"
    try:
        probe.mkdir()
    except OSError as exc:
        return False, f"cannot create a blkio cgroup in {CGROUP_ROOT}: {exc.strerror}"
    with contextlib.suppress(OSError):
        probe.rmdir()
    missing = [t for t in _TOOLS if shutil.which(t) is None]
    if missing:
        return False, f"missing tools: {', '.join(missing)} (util-linux, e2fsprogs)"
    try:
        free = _cmd(["losetup", "--find"], timeout=20).strip()
    except EmulatedDiskError as exc:
        return False, f"no usable loop device: {exc}"
    if not free.startswith("/dev/loop"):
        return False, "no usable loop device (losetup --find found none)"
    return True, f"available (cgroup v1 blkio at {CGROUP_ROOT}, loop devices, ext4)"


def _evict(path: Path) -> None:
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
                    _evict(Path(root) / name)
        elif p.is_file():
            _evict(p)
    if global_cache:
        try:
            _write(Path("/proc/sys/vm/drop_caches"), "3\n")
        except OSError as exc:
            raise EmulatedDiskError(f"cannot drop the page cache: {exc}") from exc


def _clear_limits(cgroup: Path, errors: list[str]) -> None:
    """Lift every read limit of the cgroup, so that requests it holds back are released."""
    for name in (_BPS_FILE, _IOPS_FILE):
        try:
            rules = (cgroup / name).read_text().split("\n")
        except OSError:
            continue
        for rule in rules:
            if rule.strip():
                try:
                    _write(cgroup / name, f"{rule.split()[0]} 0")
                except OSError as exc:
                    errors.append(f"lifting {name} {rule}: {exc}")


def _remove_cgroup(cgroup: Path, errors: list[str], timeout_s: float = 10.0) -> None:
    """Lift the limits, kill the processes still inside (our own process moves out), rmdir."""
    if not cgroup.exists():
        return
    _clear_limits(cgroup, errors)
    me = os.getpid()
    deadline = time.monotonic() + timeout_s
    while True:
        pids = _cgroup_pids(cgroup)
        if me in pids:
            with contextlib.suppress(OSError):
                _write(CGROUP_ROOT / "cgroup.procs", str(me))
        others = [p for p in pids if p != me]
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            # our own children: reap them, or they stay zombies in the cgroup
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
        try:
            cgroup.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                errors.append(f"cannot remove cgroup {cgroup}: {exc} (processes: {others})")
                return
        time.sleep(0.02)


def _umount(mount_point: str, errors: list[str]) -> None:
    try:
        _cmd(["umount", mount_point], timeout=60)
    except EmulatedDiskError:
        try:  # busy (an open file, a working directory): detach now, free when released
            _cmd(["umount", "-l", mount_point], timeout=60)
        except EmulatedDiskError as exc:
            errors.append(str(exc))


def _detach(device: str, errors: list[str]) -> None:
    if not Path(f"/sys/block/{Path(device).name}/loop").exists():
        return  # already detached (autoclear)
    try:
        _cmd(["losetup", "-d", device], timeout=60)
    except EmulatedDiskError as exc:
        if Path(f"/sys/block/{Path(device).name}/loop").exists():
            errors.append(str(exc))


def _teardown(
    workdir: Path | None, cgroup: Path | None, devices: Iterable[str], errors: list[str]
) -> None:
    """Remove a bench: cgroup, then every mount and loop device tied to ``workdir`` (found in
    /proc/mounts and /sys/block, so that half-made benches go too), then the files."""
    if cgroup is not None:
        _remove_cgroup(cgroup, errors)
    devices = set(devices)
    prefix = f"{workdir}/" if workdir is not None else None
    if prefix is not None:
        for dev, backing in _loop_devices().items():
            if backing.startswith(prefix):
                devices.add(dev)
    # mounts: those under the work dir and those of our devices, innermost first
    for source, target in reversed(_mounts()):
        if source in devices or (prefix is not None and target.startswith(prefix)):
            _umount(target, errors)
    for dev in sorted(devices):
        _detach(dev, errors)
    if workdir is not None and workdir.exists():
        try:
            shutil.rmtree(workdir)
        except OSError as exc:
            errors.append(f"cannot remove {workdir}: {exc}")


def cleanup_stale(*, force: bool = False) -> list[str]:
    """Remove what earlier runs left behind (a run killed by ``SIGKILL`` cannot clean up).

    Looks for cgroups ``hep-advisor-<pid>-<n>`` under the blkio root, loop devices whose backing
    file lies in a ``hep-advisor-emu-<pid>-<n>-*`` directory, mounts in such directories, and the
    directories themselves (under ``/var/tmp`` and the temp dir), and removes those whose
    ``<pid>`` is no longer running (all of them with ``force``; never this process' own).
    Returns a line per removed item.
    """
    me = os.getpid()

    def stale(pid: int) -> bool:
        return pid != me and (force or not _pid_alive(pid))

    removed: list[str] = []
    errors: list[str] = []
    if CGROUP_ROOT.is_dir():
        for cg in sorted(CGROUP_ROOT.iterdir()):
            m = _CGROUP_RE.match(cg.name)
            if m and cg.is_dir() and stale(int(m.group(1))):
                _remove_cgroup(cg, errors)
                removed.append(f"cgroup {cg}")
    workdirs: set[Path] = set()
    for _dev, backing in _loop_devices().items():
        m = _WORKDIR_RE.search(backing)
        if m and stale(int(m.group(1))):
            workdirs.add(Path(backing[: m.end()]))
    for _src, target in _mounts():
        m = _WORKDIR_RE.search(target)
        if m and stale(int(m.group(1))):
            workdirs.add(Path(target[: m.end()]))
    for root in _tmp_roots():
        with contextlib.suppress(OSError):
            for d in root.glob(WORKDIR_PREFIX + "*"):
                m = _WORKDIR_RE.fullmatch(d.name)
                if m and stale(int(m.group(1))):
                    workdirs.add(d)
    for wd in sorted(workdirs):
        devs = [dev for dev, backing in _loop_devices().items() if backing.startswith(f"{wd}/")]
        _teardown(wd, None, devs, errors)
        removed.append(f"bench {wd}" + (f" ({', '.join(devs)})" if devs else ""))
    if errors:
        raise EmulatedDiskError("; ".join(errors))
    return removed


# --------------------------------------------------------------------------------------------
# the bench


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


class EmulatedDisks:
    """``n`` emulated disks sharing one throttling cgroup; a context manager.

    ``read_mb_per_s``/``read_iops``: the read limits of each disk for processes in the cgroup
    (``None``: unlimited; MB = 10^6 bytes).  ``size_mb``: size of each disk (sparse: it costs only
    what is written).  ``read_ahead_kb``: the loop devices' read-ahead (``None``: the kernel's);
    ``max_sectors_kb``: the largest request they accept (``None``: the kernel's, 1280 here);
    ``direct_io``: the loop devices read their backing files with O_DIRECT; ``rotational``:
    what ``queue/rotational`` reports (``True``: a spinning disk, ``None``: leave it).
    ``tmp_root``: where the backing files go (default ``$HEP_ADVISOR_EMULATED_TMP`` or
    ``/var/tmp``).
    """

    def __init__(
        self,
        n: int = 1,
        size_mb: int = DEFAULT_SIZE_MB,
        read_mb_per_s: float | None = 70.0,
        read_iops: int | None = 120,
        read_ahead_kb: int | None = DEFAULT_READ_AHEAD_KB,
        *,
        max_sectors_kb: int | None = None,
        direct_io: bool = True,
        rotational: bool | None = True,
        tmp_root: str | os.PathLike[str] | None = None,
    ) -> None:
        if n < 1:
            raise ValueError("n must be >= 1")
        if size_mb < 16:
            raise ValueError("size_mb must be >= 16 (ext4 needs room for its journal)")
        self.n = n
        self.size_mb = int(size_mb)
        self.read_ahead_kb = read_ahead_kb
        self.max_sectors_kb = max_sectors_kb
        self.direct_io = direct_io
        self.rotational = rotational
        self.tmp_root = Path(tmp_root) if tmp_root is not None else _tmp_roots()[0]
        self._initial_limits = (read_mb_per_s, read_iops)
        self._check_limits(read_mb_per_s, read_iops)
        self.read_mb_per_s: float | None = None
        self.read_iops: int | None = None
        self.disks: list[EmulatedDisk] = []
        self.workdir: Path | None = None
        self.cgroup: Path | None = None
        self._procs: list[subprocess.Popen[Any]] = []
        self._closed = False
        self.cleanup_errors: list[str] = []

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> EmulatedDisks:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(raise_errors=exc is None)

    def open(self) -> None:
        """Make the disks and the cgroup (``__enter__`` does this); on any failure, or Ctrl-C,
        what was made is removed again."""
        if self.workdir is not None:
            raise EmulatedDiskError("already open")
        ok, reason = availability()
        if not ok:
            raise EmulatedDiskError(reason)
        tag = f"{os.getpid()}-{next(_counter)}"
        try:
            self.tmp_root.mkdir(parents=True, exist_ok=True)
            self.workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{tag}-",
                                                 dir=self.tmp_root))
            self.workdir.chmod(0o755)
            cgroup = CGROUP_ROOT / f"{CGROUP_PREFIX}{tag}"
            cgroup.mkdir()
            self.cgroup = cgroup
            for i in range(self.n):
                self.disks.append(self._make_disk(i))
            self.set_limits(*self._initial_limits)
        except BaseException:
            self.close(raise_errors=False)
            raise

    def _make_disk(self, i: int) -> EmulatedDisk:
        assert self.workdir is not None
        backing = self.workdir / f"disk{i}.img"
        with open(backing, "wb") as f:
            f.truncate(self.size_mb * MB)
        argv = ["losetup", "--find", "--show"]
        if self.direct_io:
            argv.append("--direct-io=on")
        device = _cmd([*argv, str(backing)]).strip()
        if not device.startswith("/dev/loop"):
            raise EmulatedDiskError(f"losetup gave {device!r}")
        sysdir = Path("/sys/block") / Path(device).name
        major_minor = (sysdir / "dev").read_text().strip()
        dio = False
        with contextlib.suppress(OSError, ValueError):
            dio = (sysdir / "loop" / "dio").read_text().strip() == "1"
        _cmd(["mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0",
              "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", device])
        mount_point = self.workdir / f"mnt{i}"
        mount_point.mkdir()
        _cmd(["mount", "-o", "noatime", device, str(mount_point)])
        queue = sysdir / "queue"
        try:
            if self.max_sectors_kb is not None:
                _write(queue / "max_sectors_kb", str(self.max_sectors_kb))
            if self.read_ahead_kb is not None:
                _write(queue / "read_ahead_kb", str(self.read_ahead_kb))
            if self.rotational is not None:
                _write(queue / "rotational", "1" if self.rotational else "0")
        except OSError as exc:
            raise EmulatedDiskError(f"cannot set the queue of {device}: {exc}") from exc
        return EmulatedDisk(i, device, major_minor, mount_point, backing, self.size_mb, dio)

    def close(self, raise_errors: bool = True) -> None:
        """Remove everything (idempotent).  Ctrl-C is held until it is done.  Problems are
        collected in :attr:`cleanup_errors` and raised with ``raise_errors``."""
        if self._closed:
            return
        with _sigint_deferred():
            errors: list[str] = []
            if self.cgroup is not None:  # first release the requests held back, then kill
                _clear_limits(self.cgroup, errors)
            for proc in self._procs:
                if proc.poll() is None:
                    proc.kill()
            for proc in self._procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            _teardown(self.workdir, self.cgroup, [d.device for d in self.disks], errors)
            self._closed = True
            self.cleanup_errors = errors
        if errors and raise_errors:
            raise EmulatedDiskError("clean-up incomplete: " + "; ".join(errors))

    # -- convenience for the first disk ------------------------------------------------------

    def _first(self) -> EmulatedDisk:
        if not self.disks:
            raise EmulatedDiskError("the emulated disks are not set up (use `with`)")
        return self.disks[0]

    @property
    def mount_point(self) -> Path:
        return self._first().mount_point

    @property
    def device(self) -> str:
        return self._first().device

    @property
    def major_minor(self) -> str:
        return self._first().major_minor

    @property
    def mount_points(self) -> list[Path]:
        return [d.mount_point for d in self.disks]

    def _cgroup(self) -> Path:
        if self.cgroup is None or self._closed:
            raise EmulatedDiskError("the emulated disks are not set up (use `with`)")
        return self.cgroup

    # -- limits ------------------------------------------------------------------------------

    @staticmethod
    def _check_limits(read_mb_per_s: float | None, read_iops: int | None) -> None:
        if read_mb_per_s is not None and not read_mb_per_s > 0:
            raise ValueError("read_mb_per_s must be > 0 or None")
        if read_iops is not None and not read_iops >= 1:
            raise ValueError("read_iops must be >= 1 or None")

    def set_limits(
        self,
        read_mb_per_s: float | None,
        read_iops: int | None,
        disks: Iterable[int] | None = None,
    ) -> None:
        """Set the read limits (``None``: unlimited) of every disk, or of the ``disks`` given
        by index.  Applies at once, to requests issued from then on."""
        self._check_limits(read_mb_per_s, read_iops)
        cgroup = self._cgroup()
        chosen = [self.disks[i] for i in disks] if disks is not None else self.disks
        bps = 0 if read_mb_per_s is None else max(1, round(read_mb_per_s * MB))
        iops = 0 if read_iops is None else int(read_iops)
        for disk in chosen:
            _write(cgroup / _BPS_FILE, f"{disk.major_minor} {bps}")
            _write(cgroup / _IOPS_FILE, f"{disk.major_minor} {iops}")
        if disks is None:
            self.read_mb_per_s, self.read_iops = read_mb_per_s, read_iops

    def reset_throttle(self) -> None:
        """Write the limits in force again: blk-throttle then starts a fresh time slice, so
        that budget left unused by an earlier phase (e.g. bytes during an IOPS-bound random
        test) does not let the next reads through early.  Call it between measurements."""
        cgroup = self._cgroup()
        for name in (_BPS_FILE, _IOPS_FILE):
            for mm, value in _parse_rules((cgroup / name).read_text()).items():
                _write(cgroup / name, f"{mm} {value}")

    def limits(self) -> dict[str, tuple[float | None, int | None]]:
        """The limits in force, read back from the cgroup: major:minor -> (MB/s, IOPS)."""
        cgroup = self._cgroup()
        out: dict[str, tuple[float | None, int | None]] = {}
        bps = _parse_rules((cgroup / _BPS_FILE).read_text())
        iops = _parse_rules((cgroup / _IOPS_FILE).read_text())
        for d in self.disks:
            b, i = bps.get(d.major_minor), iops.get(d.major_minor)
            out[d.major_minor] = (b / MB if b else None, i if i else None)
        return out

    def stats(self) -> dict[str, tuple[int, int]]:
        """Reads issued by the cgroup's processes since it was made, per disk: major:minor ->
        (read requests, bytes read), from ``blkio.throttle.io_serviced`` and
        ``io_service_bytes``.  Their ratio is the size of the requests the device saw."""
        cgroup = self._cgroup()
        ios = _parse_stat((cgroup / "blkio.throttle.io_serviced").read_text())
        nbytes = _parse_stat((cgroup / "blkio.throttle.io_service_bytes").read_text())
        return {d.major_minor: (ios.get(d.major_minor, 0), nbytes.get(d.major_minor, 0))
                for d in self.disks}

    # -- running things inside the cgroup ----------------------------------------------------

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default ``os.environ``) with ``HEP_ADVISOR_EMULATED_MOUNT`` (the first
        disk), ``..._MOUNTS`` (all, ``:``-separated) and ``..._CGROUP`` set."""
        env = dict(os.environ if base is None else base)
        env[ENV_MOUNT] = str(self.mount_point)
        env[ENV_MOUNTS] = os.pathsep.join(str(p) for p in self.mount_points)
        env[ENV_CGROUP] = str(self._cgroup())
        return env

    def _preexec(self, user: Callable[[], Any] | None) -> Callable[[], None]:
        procs = str(self._cgroup() / "cgroup.procs")

        def preexec() -> None:
            _join_cgroup(procs)
            if user is not None:
                user()

        return preexec

    def run(
        self,
        argv: Sequence[str | os.PathLike[str]] | str,
        *,
        env: Mapping[str, str] | None = None,
        preexec_fn: Callable[[], Any] | None = None,
        **kwargs: Any,
    ) -> subprocess.CompletedProcess[Any]:
        """``subprocess.run`` with the child in the throttling cgroup from before ``exec``, and
        the ``HEP_ADVISOR_EMULATED_*`` variables in its environment."""
        return subprocess.run(
            argv, env=self.env(env), preexec_fn=self._preexec(preexec_fn), **kwargs
        )

    def popen(
        self,
        argv: Sequence[str | os.PathLike[str]] | str,
        *,
        env: Mapping[str, str] | None = None,
        preexec_fn: Callable[[], Any] | None = None,
        **kwargs: Any,
    ) -> subprocess.Popen[Any]:
        """Like :meth:`run`, in the background; killed by :meth:`close` if still running."""
        proc = subprocess.Popen(
            argv, env=self.env(env), preexec_fn=self._preexec(preexec_fn), **kwargs
        )
        self._procs.append(proc)
        return proc

    def call(
        self, fn: Callable[..., _T], *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> _T:
        """``fn(*args, **kwargs)`` in a forked child inside the cgroup; its return value (which
        must pickle), or the exception it raised.  ``timeout`` (s): kill it and raise
        :class:`TimeoutError`.  The child shares nothing with the parent after the fork: use it
        for reads, not to change the parent's state."""
        procs = str(self._cgroup() / "cgroup.procs")
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        rfd, wfd = os.pipe()
        with warnings.catch_warnings():  # Python >= 3.12 warns on fork() with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 0
            try:
                os.close(rfd)
                try:
                    _join_cgroup(procs)
                    payload = pickle.dumps((True, fn(*args, **kwargs)))
                except BaseException as exc:
                    try:
                        payload = pickle.dumps((False, exc))
                    except Exception:
                        payload = pickle.dumps(
                            (False, EmulatedDiskError(f"{type(exc).__name__}: {exc}"))
                        )
                view = memoryview(payload)
                while view:
                    view = view[os.write(wfd, view):]
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        os.close(wfd)
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: list[bytes] = []
        try:
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([rfd], [], [], wait)
                if not ready:
                    raise TimeoutError(f"{getattr(fn, '__name__', fn)} took over {timeout} s")
                chunk = os.read(rfd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        finally:
            os.close(rfd)
        _, status = os.waitpid(pid, 0)
        if not chunks:
            raise EmulatedDiskError(f"the child running {fn!r} died (wait status {status})")
        ok, value = pickle.loads(b"".join(chunks))
        if ok:
            return value
        raise value

    # -- page cache ---------------------------------------------------------------------------

    def drop_caches(self, *paths: str | os.PathLike[str], global_cache: bool = True) -> None:
        """Make the next reads cold: :func:`drop_caches` on ``paths`` (default: every file on
        the disks), plus the loop devices' buffer caches and backing files."""
        targets = list(paths) if paths else [str(p) for p in self.mount_points]
        drop_caches(*targets, global_cache=global_cache)
        for d in self.disks:
            _evict(d.backing_file)
            with contextlib.suppress(OSError):  # BLKFLSBUF: the device's own (metadata) cache
                fd = os.open(d.device, os.O_RDONLY)
                try:
                    fcntl.ioctl(fd, 0x1261)
                finally:
                    os.close(fd)

    def __repr__(self) -> str:
        disks = ", ".join(f"{d.device}@{d.mount_point}" for d in self.disks) or "not set up"
        return (f"EmulatedDisks({disks}; read {self.read_mb_per_s} MB/s, "
                f"{self.read_iops} IOPS; cgroup {self.cgroup})")


def _parse_rules(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2:
            out[fields[0]] = int(fields[1])
    return out


def _parse_stat(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "Read":
            out[fields[0]] = int(fields[2])
    return out


def emulated_disks(
    n: int = 1,
    size_mb: int = DEFAULT_SIZE_MB,
    read_mb_per_s: float | None = 70.0,
    read_iops: int | None = 120,
    read_ahead_kb: int | None = DEFAULT_READ_AHEAD_KB,
    **kwargs: Any,
) -> EmulatedDisks:
    """``with emulated_disks(...) as bench:`` -- see :class:`EmulatedDisks`."""
    return EmulatedDisks(n, size_mb, read_mb_per_s, read_iops, read_ahead_kb, **kwargs)



# --------------------------------------------------------------------------------------------
# reference readers (run them through EmulatedDisks.call to read inside the cgroup)


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
    import random

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


# --------------------------------------------------------------------------------------------
# command line


def _tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(
        (Path(root) / f).stat().st_size for root, _d, files in os.walk(path) for f in files
    )


def _copy_onto(src: Path, dest: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(src, dest / src.name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m advisor.testbench.emulated_disk",
        description="Emulated slow disks (loop device + ext4 + cgroup v1 blkio throttling).",
        epilog="With --run, CMD sees the first disk's mount point in $HEP_ADVISOR_EMULATED_MOUNT "
        "(all of them in $HEP_ADVISOR_EMULATED_MOUNTS), and '{mount}' in its arguments is "
        "replaced by it.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="say whether it can run here")
    action.add_argument("--run", action="store_true", help="set up, run CMD inside, clean up")
    action.add_argument("--cleanup", action="store_true",
                        help="remove leftovers of crashed runs")
    parser.add_argument("--mb-per-s", type=float, default=70.0,
                        help="read limit, MB/s (10^6 B); 0: none (default 70)")
    parser.add_argument("--iops", type=int, default=120,
                        help="read requests/s limit; 0: none (default 120)")
    parser.add_argument("--disks", type=int, default=1, help="number of disks (default 1)")
    parser.add_argument("--size-mb", type=int, default=None,
                        help=f"size of each disk (default {DEFAULT_SIZE_MB}, or enough for --copy)")
    parser.add_argument("--read-ahead-kb", type=int, default=DEFAULT_READ_AHEAD_KB,
                        help=f"loop device read-ahead (default {DEFAULT_READ_AHEAD_KB})")
    parser.add_argument("--no-direct-io", action="store_true",
                        help="loop devices read their backing files through the page cache")
    parser.add_argument("--copy", type=Path, action="append", default=[], metavar="SRC",
                        help="copy a directory's contents (or a file) onto every disk first, "
                        "then drop the page cache; repeatable")
    parser.add_argument("--no-global-drop", action="store_true",
                        help="after --copy, evict only the copied files (posix_fadvise), not the "
                        "whole page cache (metadata such as inodes then stays cached)")
    parser.add_argument("--force", action="store_true",
                        help="with --cleanup: also benches of running processes")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd

    if args.check:
        ok, reason = availability()
        print(reason if ok else f"unavailable: {reason}")
        return 0 if ok else 1
    if args.cleanup:
        for line in cleanup_stale(force=args.force):
            print(f"removed {line}")
        return 0
    if not cmd:
        parser.error("--run needs a command after --")
    for src in args.copy:
        if not src.exists():
            parser.error(f"--copy: {src} does not exist")
    size_mb = args.size_mb
    if size_mb is None:
        data = sum(_tree_bytes(s) for s in args.copy)
        size_mb = max(DEFAULT_SIZE_MB, int(data * 1.15 / MB) + 128)

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    cleanup_stale()
    with emulated_disks(
        n=args.disks,
        size_mb=size_mb,
        read_mb_per_s=args.mb_per_s or None,
        read_iops=args.iops or None,
        read_ahead_kb=args.read_ahead_kb,
        direct_io=not args.no_direct_io,
    ) as bench:
        for disk in bench.disks:
            for src in args.copy:
                _copy_onto(src, disk.mount_point)
        if args.copy:
            bench.drop_caches(global_cache=not args.no_global_drop)
        print(f"emulated disks: {bench}", file=sys.stderr, flush=True)
        argv_cmd = [a.replace("{mount}", str(bench.mount_point)) for a in cmd]
        try:
            rc = bench.run(argv_cmd).returncode
        except KeyboardInterrupt:
            rc = 130
        except OSError as exc:
            print(f"cannot run {argv_cmd[0]}: {exc}", file=sys.stderr)
            rc = 127
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
