"""The bench: ``n`` emulated disks (:mod:`.loopdev`) sharing one throttling cgroup (:mod:`.cgroup`).

Only processes in the cgroup are throttled: :meth:`EmulatedDisks.run`, :meth:`~EmulatedDisks.popen`
and :meth:`~EmulatedDisks.call` put theirs there before it does any I/O; everything else reads
the disks at full speed.  Everything is removed on exit, whether the body returns, raises or is
interrupted (Ctrl-C during the clean-up is deferred until it is done; a SIGTERM, from ``timeout``
or ``kill``, exits through the clean-up too); :func:`cleanup_stale`
removes what a killed run left behind.  How faithful the throttle is: the section "Emulated
disk: lab notes" of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from . import cgroup as cg
from . import loopdev
from .common import MB, EmulatedDiskError, counter, pid_alive, sigint_deferred
from .loopdev import EmulatedDisk
from .readers import drop_caches, evict_file

#: Read-ahead of the loop devices: two full-size (1280 KiB) bios, so that buffered sequential
#: reads are bound by the bps limit, not by the IOPS limit (see the lab notes).
DEFAULT_READ_AHEAD_KB = 2560
DEFAULT_SIZE_MB = 512
ENV_MOUNT = "HEP_ADVISOR_EMULATED_MOUNT"
ENV_MOUNTS = "HEP_ADVISOR_EMULATED_MOUNTS"
ENV_CGROUP = "HEP_ADVISOR_EMULATED_CGROUP"
_T = TypeVar("_T")


def availability() -> tuple[bool, str]:
    """Whether emulated disks can be made here, and a one-line reason when not.

    Checks: Linux, root, cgroup v1 blkio with the throttle files, a cgroup can be created there,
    ``losetup``/``mkfs.ext4``/``mount``/``umount`` on the PATH, and a free loop device.
    """
    if not sys.platform.startswith("linux"):
        return False, f"emulated disks need Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return False, "emulated disks need root (loop devices, mounts, blkio cgroups)"
    ok, reason = cg.status(f"{os.getpid()}-{next(counter)}")
    if not ok:
        return False, reason
    ok, devices = loopdev.status()
    if not ok:
        return False, devices
    return True, f"available ({reason}, {devices})"


def teardown(
    workdir: Path | None, cgroup: Path | None, devices: Iterable[str], errors: list[str]
) -> None:
    """Remove a bench: the cgroup, then its disks (:func:`.loopdev.remove_disks`)."""
    if cgroup is not None:
        cg.remove(cgroup, errors)
    loopdev.remove_disks(workdir, devices, errors)


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
        return pid != me and (force or not pid_alive(pid))

    removed: list[str] = []
    errors: list[str] = []
    for cgroup in cg.stale(stale):
        cg.remove(cgroup, errors)
        removed.append(f"cgroup {cgroup}")
    for wd, devs in loopdev.stale_workdirs(stale).items():
        loopdev.remove_disks(wd, devs, errors)
        removed.append(f"bench {wd}" + (f" ({', '.join(devs)})" if devs else ""))
    if errors:
        raise EmulatedDiskError("; ".join(errors))
    return removed


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
        self.tmp_root = Path(tmp_root) if tmp_root is not None else loopdev.tmp_roots()[0]
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
        # a plain SIGTERM (``timeout``, ``kill``) would end the process without the clean-up:
        # while the bench is open it exits through it instead (where nobody else handles it)
        self._term: Any = None
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            def on_term(signum: int, frame: object) -> None:
                raise SystemExit(128 + signum)

            self._term = signal.signal(signal.SIGTERM, on_term)
        try:
            self.open()
        except BaseException:
            self._restore_term()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.close(raise_errors=exc is None)
        finally:
            self._restore_term()

    def _restore_term(self) -> None:
        if getattr(self, "_term", None) is not None:
            signal.signal(signal.SIGTERM, self._term)
            self._term = None

    def open(self) -> None:
        """Make the disks and the cgroup (``__enter__`` does this); on any failure, or Ctrl-C,
        what was made is removed again."""
        if self.workdir is not None:
            raise EmulatedDiskError("already open")
        ok, reason = availability()
        if not ok:
            raise EmulatedDiskError(reason)
        tag = f"{os.getpid()}-{next(counter)}"
        try:
            self.workdir = loopdev.make_workdir(self.tmp_root, tag)
            self.cgroup = cg.make(tag)
            for i in range(self.n):
                self.disks.append(loopdev.make_disk(
                    self.workdir, i, self.size_mb, direct_io=self.direct_io,
                    read_ahead_kb=self.read_ahead_kb, max_sectors_kb=self.max_sectors_kb,
                    rotational=self.rotational))
            self.set_limits(*self._initial_limits)
        except BaseException:
            self.close(raise_errors=False)
            raise

    def close(self, raise_errors: bool = True) -> None:
        """Remove everything (idempotent).  Ctrl-C is held until it is done.  Problems are
        collected in :attr:`cleanup_errors` and raised with ``raise_errors``."""
        if self._closed:
            return
        with sigint_deferred():
            errors: list[str] = []
            if self.cgroup is not None:  # first release the requests held back, then kill
                cg.clear_limits(self.cgroup, errors)
            for proc in self._procs:
                if proc.poll() is None:
                    proc.kill()
            for proc in self._procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            teardown(self.workdir, self.cgroup, [d.device for d in self.disks], errors)
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
        for disk in chosen:
            cg.write_limits(cgroup, disk.major_minor, read_mb_per_s, read_iops)
        if disks is None:
            self.read_mb_per_s, self.read_iops = read_mb_per_s, read_iops

    def reset_throttle(self) -> None:
        """Write the limits in force again: blk-throttle then starts a fresh time slice, so
        that budget left unused by an earlier phase (e.g. bytes during an IOPS-bound random
        test) does not let the next reads through early.  Call it between measurements."""
        cg.rewrite_limits(self._cgroup())

    def limits(self) -> dict[str, tuple[float | None, int | None]]:
        """The limits in force, read back from the cgroup: major:minor -> (MB/s, IOPS)."""
        bps, iops = cg.read_limits(self._cgroup())
        out: dict[str, tuple[float | None, int | None]] = {}
        for d in self.disks:
            b, i = bps.get(d.major_minor), iops.get(d.major_minor)
            out[d.major_minor] = (b / MB if b else None, i if i else None)
        return out

    def stats(self) -> dict[str, tuple[int, int]]:
        """Reads issued by the cgroup's processes since it was made, per disk: major:minor ->
        (read requests, bytes read), from ``blkio.throttle.io_serviced`` and
        ``io_service_bytes``.  Their ratio is the size of the requests the device saw."""
        ios, nbytes = cg.read_stats(self._cgroup())
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
            cg.join(procs)
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
        return cg.call_in(str(self._cgroup() / "cgroup.procs"), fn, args, kwargs, timeout)

    # -- page cache ---------------------------------------------------------------------------

    def drop_caches(self, *paths: str | os.PathLike[str], global_cache: bool = True) -> None:
        """Make the next reads cold: :func:`.readers.drop_caches` on ``paths`` (default: every
        file on the disks), plus the loop devices' buffer caches and backing files."""
        targets = list(paths) if paths else [str(p) for p in self.mount_points]
        drop_caches(*targets, global_cache=global_cache)
        for d in self.disks:
            evict_file(d.backing_file)
            loopdev.flush_buffers(d.device)

    def __repr__(self) -> str:
        disks = ", ".join(f"{d.device}@{d.mount_point}" for d in self.disks) or "not set up"
        return (f"EmulatedDisks({disks}; read {self.read_mb_per_s} MB/s, "
                f"{self.read_iops} IOPS; cgroup {self.cgroup})")


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
