"""What the cgroup and loop-device parts share: the error, units, and running system tools."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

MB = 1_000_000
#: Numbers the cgroups and work directories of one process apart (``<pid>-<n>``).
counter = itertools.count()


class EmulatedDiskError(RuntimeError):
    """Setting up, using or removing an emulated disk failed."""


def run_tool(argv: Sequence[str], *, check: bool = True, timeout: float = 120.0) -> str:
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


def write_value(path: Path, text: str) -> None:
    """Write to a sysfs/cgroupfs/procfs file in one ``write`` (they take one value per call)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
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


#: The file the benchmarks lock while they time something, so that two timed runs on this
#: shared machine never overlap.
BENCH_LOCK = "/tmp/hep-bench.lock"


@contextlib.contextmanager
def timing_lock(path: str | None = BENCH_LOCK) -> Iterator[None]:
    """``flock`` on ``path`` held for the block (no lock where ``path`` is empty)."""
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
