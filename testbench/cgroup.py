"""The throttling cgroup: a cgroup v1 blkio group whose read limits bind its processes only.

A bench makes one group ``/sys/fs/cgroup/blkio/hep-advisor-<pid>-<n>``; its
``blkio.throttle.read_bps_device`` and ``read_iops_device`` carry one rule per emulated disk
(``major:minor value``, 0 for none).  Processes are put into it before they do any I/O
(:func:`join` in a child before ``exec``, or :func:`call_in` for a forked function).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .common import MB, EmulatedDiskError, write_value

CGROUP_ROOT = Path("/sys/fs/cgroup/blkio")
CGROUP_PREFIX = "hep-advisor-"
BPS_FILE = "blkio.throttle.read_bps_device"
IOPS_FILE = "blkio.throttle.read_iops_device"
_CGROUP_RE = re.compile(rf"^{re.escape(CGROUP_PREFIX)}(\d+)-(\d+)$")
_T = TypeVar("_T")


def status(tag: str) -> tuple[bool, str]:
    """Whether throttling cgroups can be made here (the files exist, ``mkdir`` works)."""
    if not (CGROUP_ROOT / BPS_FILE).exists() or not (CGROUP_ROOT / IOPS_FILE).exists():
        return False, (
            f"no cgroup v1 blkio throttling at {CGROUP_ROOT} "
            "(needs the blkio controller mounted as cgroup v1 and CONFIG_BLK_DEV_THROTTLING)"
        )
    probe = CGROUP_ROOT / f"{CGROUP_PREFIX}{tag}"
    try:
        probe.mkdir()
    except OSError as exc:
        return False, f"cannot create a blkio cgroup in {CGROUP_ROOT}: {exc.strerror}"
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True, f"cgroup v1 blkio at {CGROUP_ROOT}"


def make(tag: str) -> Path:
    cgroup = CGROUP_ROOT / f"{CGROUP_PREFIX}{tag}"
    cgroup.mkdir()
    return cgroup


def pids(cgroup: Path) -> list[int]:
    try:
        return [int(x) for x in (cgroup / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def join(procs_file: str) -> None:
    """Move the calling process into the cgroup whose ``cgroup.procs`` this is (fork-safe)."""
    fd = os.open(procs_file, os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# limits and counters


def parse_rules(text: str) -> dict[str, int]:
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


def write_limits(
    cgroup: Path, major_minor: str, read_mb_per_s: float | None, read_iops: int | None
) -> None:
    """Set one device's read limits (``None``: unlimited; MB = 10^6 bytes)."""
    bps = 0 if read_mb_per_s is None else max(1, round(read_mb_per_s * MB))
    iops = 0 if read_iops is None else int(read_iops)
    write_value(cgroup / BPS_FILE, f"{major_minor} {bps}")
    write_value(cgroup / IOPS_FILE, f"{major_minor} {iops}")


def read_limits(cgroup: Path) -> tuple[dict[str, int], dict[str, int]]:
    """The rules in force: (bytes/s, requests/s), each major:minor -> value."""
    return (parse_rules((cgroup / BPS_FILE).read_text()),
            parse_rules((cgroup / IOPS_FILE).read_text()))


def rewrite_limits(cgroup: Path) -> None:
    """Write the rules in force again (blk-throttle then starts a fresh time slice)."""
    for name in (BPS_FILE, IOPS_FILE):
        for mm, value in parse_rules((cgroup / name).read_text()).items():
            write_value(cgroup / name, f"{mm} {value}")


def read_stats(cgroup: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Reads issued by the cgroup's processes: (requests, bytes), each major:minor -> count."""
    return (_parse_stat((cgroup / "blkio.throttle.io_serviced").read_text()),
            _parse_stat((cgroup / "blkio.throttle.io_service_bytes").read_text()))


def clear_limits(cgroup: Path, errors: list[str]) -> None:
    """Lift every read limit of the cgroup, so that requests it holds back are released."""
    for name in (BPS_FILE, IOPS_FILE):
        try:
            rules = (cgroup / name).read_text().split("\n")
        except OSError:
            continue
        for rule in rules:
            if rule.strip():
                try:
                    write_value(cgroup / name, f"{rule.split()[0]} 0")
                except OSError as exc:
                    errors.append(f"lifting {name} {rule}: {exc}")


# --------------------------------------------------------------------------------------------
# removal


def remove(cgroup: Path, errors: list[str], timeout_s: float = 10.0) -> None:
    """Lift the limits, kill the processes still inside (our own process moves out), rmdir."""
    if not cgroup.exists():
        return
    clear_limits(cgroup, errors)
    me = os.getpid()
    deadline = time.monotonic() + timeout_s
    while True:
        inside = pids(cgroup)
        if me in inside:
            with contextlib.suppress(OSError):
                write_value(CGROUP_ROOT / "cgroup.procs", str(me))
        others = [p for p in inside if p != me]
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


def stale(is_stale: Callable[[int], bool]) -> list[Path]:
    """The benches' cgroups whose ``<pid>`` ``is_stale`` says to remove."""
    if not CGROUP_ROOT.is_dir():
        return []
    out = []
    for cg in sorted(CGROUP_ROOT.iterdir()):
        m = _CGROUP_RE.match(cg.name)
        if m and cg.is_dir() and is_stale(int(m.group(1))):
            out.append(cg)
    return out


# --------------------------------------------------------------------------------------------
# a function run inside


def call_in(
    procs_file: str,
    fn: Callable[..., _T],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    timeout: float | None = None,
) -> _T:
    """``fn(*args, **kwargs)`` in a forked child that first joins the cgroup of ``procs_file``;
    its return value (which must pickle), or the exception it raised.  ``timeout`` (s): kill
    it and raise :class:`TimeoutError`."""
    kwargs = dict(kwargs or {})
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
                join(procs_file)
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
    _, wait_status = os.waitpid(pid, 0)
    if not chunks:
        raise EmulatedDiskError(f"the child running {fn!r} died (wait status {wait_status})")
    ok, value = pickle.loads(b"".join(chunks))
    if ok:
        return value
    raise value
