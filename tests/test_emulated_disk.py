"""The emulated-disk test bench: throttled loop devices give the rates they were set to, only to
processes in their cgroup, and leave nothing behind, even when the body fails.

Needs root, cgroup v1 blkio, loop devices and e2fsprogs; skipped with the reason otherwise.
Small files and short reads keep it fast; the tolerances are loose (tight figures:
benchmarks/lab/emulated_disk_check.py).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbench import (
    CGROUP_ROOT,
    DEFAULT_READ_AHEAD_KB,
    MB,
    EmulatedDiskError,
    EmulatedDisks,
    availability,
    cleanup_stale,
    emulated_disks,
    random_reads,
    resident_fraction,
    sequential_read,
    teardown,
    write_random_file,
)
from testbench import cgroup as cg
from testbench.common import pid_alive

pytestmark = pytest.mark.emulated

_OK, _REASON = availability()
if not _OK:
    pytest.skip(f"emulated disks unavailable: {_REASON}", allow_module_level=True)

TOL = 0.20
FILE_MB = 24
# blk-throttle lets the first 100 ms of budget through at once: the reads below last 0.8-1.5 s
# so that this burst stays well inside the tolerance (measured: within 8% of the limits).


def _within(value: float, target: float, tol: float = TOL) -> bool:
    return abs(value / target - 1) <= tol


@pytest.fixture(scope="module")
def bench() -> Iterator[EmulatedDisks]:
    cleanup_stale()
    with emulated_disks(size_mb=96, read_mb_per_s=70, read_iops=120) as b:
        write_random_file(b.mount_point / "data.bin", FILE_MB * MB)
        yield b


@pytest.fixture
def data(bench: EmulatedDisks) -> Path:
    path = bench.mount_point / "data.bin"
    bench.drop_caches(path, global_cache=False)
    return path


def _leftovers(workdir: Path, cgroup: Path) -> list[str]:
    found = []
    if cgroup.exists():
        found.append(f"cgroup {cgroup}")
    listing = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    found += [f"loop {line}" for line in listing.splitlines() if str(workdir) in line]
    with open("/proc/self/mounts") as f:
        found += [f"mount {line.strip()}" for line in f if str(workdir) in line]
    if workdir.exists():
        found.append(f"dir {workdir}")
    return found


def _own_blkio_cgroup() -> str:
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.strip().split(":", 2)
            if "blkio" in controllers.split(","):
                return path
    return ""


def _boom() -> None:
    raise ValueError("boom")


# ---------------------------------------------------------------------------------------------


def test_layout(bench: EmulatedDisks) -> None:
    disk = bench.disks[0]
    assert disk.device.startswith("/dev/loop")
    assert disk.major_minor == f"7:{disk.device.removeprefix('/dev/loop')}"
    assert bench.cgroup is not None
    assert bench.cgroup.parent == CGROUP_ROOT
    assert bench.cgroup.name.startswith(f"hep-advisor-{os.getpid()}-")
    with open("/proc/self/mounts") as f:
        mounts = [line.split() for line in f]
    assert [disk.device, str(disk.mount_point), "ext4"] in [m[:3] for m in mounts]
    assert disk.read_ahead_kb == DEFAULT_READ_AHEAD_KB
    assert disk.direct_io
    assert bench.limits() == {disk.major_minor: (70.0, 120)}
    assert "hep-advisor-emu-" in str(disk.backing_file)


def test_limits_read_back(bench: EmulatedDisks) -> None:
    try:
        bench.set_limits(12.5, None)
        assert bench.limits() == {bench.major_minor: (12.5, None)}
        assert bench.cgroup is not None
        rules = (bench.cgroup / "blkio.throttle.read_bps_device").read_text()
        assert f"{bench.major_minor} 12500000" in rules
        bench.set_limits(None, None)
        assert bench.limits() == {bench.major_minor: (None, None)}
        with pytest.raises(ValueError):
            bench.set_limits(0, 10)
    finally:
        bench.set_limits(70, 120)


def test_sequential_read_is_bound_by_bps(bench: EmulatedDisks, data: Path) -> None:
    bench.set_limits(30, 120)
    assert resident_fraction(data) == 0.0
    ios0, bytes0 = bench.stats()[bench.major_minor]
    n, dt = bench.call(sequential_read, data, 1 << 20)
    ios1, bytes1 = bench.stats()[bench.major_minor]
    assert n == FILE_MB * MB
    assert _within(n / dt / MB, 30), n / dt / MB
    # the read went through the page cache, not around it (a direct read leaves none of the
    # file resident); a few pages may be reclaimed at once on this shared machine (memory
    # pressure, another user's drop_caches: seen in CI at 0.9993 and 0.978)
    assert resident_fraction(data) >= 0.9
    # the device saw large requests, so that even at 70 MB/s the bps limit would bind, not
    # 120 IOPS x request size
    assert bytes1 - bytes0 >= n
    assert (bytes1 - bytes0) / (ios1 - ios0) > 70 * MB / 120


def test_random_reads_are_bound_by_iops(bench: EmulatedDisks, data: Path) -> None:
    bench.set_limits(70, 120)
    n, dt = bench.call(random_reads, data, 180)
    assert n == 180
    assert _within(n / dt, 120), n / dt


def test_small_requests_are_iops_bound(bench: EmulatedDisks, data: Path) -> None:
    """Every request costs an IOPS slot, sequential or not: with read_ahead_kb = 128, 64 KiB
    reads reach the device as 128 KiB requests, so the rate is iops x 128 KiB."""
    queue = bench.disks[0].queue / "read_ahead_kb"
    try:
        queue.write_text("128")
        bench.set_limits(None, 100)
        n, dt = bench.call(sequential_read, data, 65536, 18 << 20)
        assert _within(n / dt / MB, 100 * 128 * 1024 / MB), n / dt / MB
    finally:
        queue.write_text(str(DEFAULT_READ_AHEAD_KB))
        bench.set_limits(70, 120)


def test_throttle_applies_only_inside_the_cgroup(bench: EmulatedDisks, data: Path) -> None:
    bench.set_limits(20, None)
    try:
        n, dt = bench.call(sequential_read, data, 1 << 20, 16 * MB)
        throttled = n / dt / MB
        bench.drop_caches(data, global_cache=False)
        n, dt = sequential_read(data, 1 << 20)  # this process: not in the cgroup
        free = n / dt / MB
    finally:
        bench.set_limits(70, 120)
    assert _within(throttled, 20), throttled
    assert free > 3 * throttled, (free, throttled)


def test_run_and_call_are_inside_the_cgroup(bench: EmulatedDisks) -> None:
    assert bench.cgroup is not None
    name = f"/{bench.cgroup.name}"
    proc = bench.run(
        ["sh", "-c", 'grep blkio /proc/self/cgroup; echo "MOUNT=$HEP_ADVISOR_EMULATED_MOUNT"'],
        capture_output=True, text=True, check=True,
    )
    assert f"blkio:{name}\n" in proc.stdout
    assert f"MOUNT={bench.mount_point}\n" in proc.stdout
    assert bench.call(_own_blkio_cgroup) == name
    assert _own_blkio_cgroup() != name  # the caller stays outside
    assert bench.call(os.getpid) != os.getpid()
    with pytest.raises(ValueError, match="boom"):
        bench.call(_boom)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        bench.call(time.sleep, 30, timeout=0.3)
    assert time.monotonic() - t0 < 5
    assert bench.cgroup is not None and os.getpid() not in cg.pids(bench.cgroup)


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_nothing_left_after_an_exception(exc: type[BaseException]) -> None:
    with pytest.raises(exc), emulated_disks(n=2, size_mb=32) as b:
        assert b.workdir is not None and b.cgroup is not None
        workdir, cgroup = b.workdir, b.cgroup
        (b.disks[1].mount_point / "f").write_bytes(b"x" * 100_000)
        # a process in the cgroup, with its working directory on a disk (keeps it busy)
        sleeper = b.popen(["sleep", "60"], cwd=b.disks[1].mount_point)
        assert len(_leftovers(workdir, cgroup)) >= 4
        raise exc("fails inside the bench")
    assert sleeper.poll() is not None
    assert _leftovers(workdir, cgroup) == []


def test_nothing_left_after_a_sigterm(tmp_path: Path) -> None:
    """``timeout`` and ``kill`` send SIGTERM: the bench's process exits through the clean-up
    (the default action would end it at once, leaving the disk, mount and cgroup behind)."""
    code = (
        "import sys, time\n"
        "from testbench import emulated_disks\n"
        "with emulated_disks(size_mb=32) as b:\n"
        "    print(b.workdir, b.cgroup, flush=True)\n"
        "    time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         cwd=Path(__file__).resolve().parents[1])
    with p:
        assert p.stdout is not None
        workdir, cgroup = (Path(x) for x in p.stdout.readline().split())
        assert len(_leftovers(workdir, cgroup)) >= 3
        p.terminate()
        assert p.wait(timeout=30) == 128 + signal.SIGTERM
    assert _leftovers(workdir, cgroup) == []


def test_busy_mount_is_released_lazily() -> None:
    """A file held open by the caller: the mount is detached lazily and the loop device goes
    when the file is closed (autoclear)."""
    with emulated_disks(size_mb=32) as b:
        assert b.workdir is not None and b.cgroup is not None
        workdir, cgroup = b.workdir, b.cgroup
        held = open(b.mount_point / "held", "wb")  # noqa: SIM115
    try:
        assert not cgroup.exists() and not workdir.exists()
        with open("/proc/self/mounts") as f:
            assert str(workdir) not in f.read()
    finally:
        held.close()
    deadline = time.monotonic() + 5
    while _leftovers(workdir, cgroup) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _leftovers(workdir, cgroup) == []


def test_cleanup_stale_removes_a_crashed_run(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not pid_alive(dead.pid)
    workdir = Path("/var/tmp") / f"hep-advisor-emu-{dead.pid}-0-testcrash"
    cgroup = CGROUP_ROOT / f"hep-advisor-{dead.pid}-0"
    try:
        (workdir / "mnt0").mkdir(parents=True)
        image = workdir / "disk0.img"
        with open(image, "wb") as f:
            f.truncate(32 * MB)
        dev = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        subprocess.run(["mount", dev, str(workdir / "mnt0")], check=True)
        cgroup.mkdir()
        major_minor = Path(f"/sys/block/{Path(dev).name}/dev").read_text().strip()
        (cgroup / "blkio.throttle.read_bps_device").write_text(f"{major_minor} 1000000")
        assert len(_leftovers(workdir, cgroup)) == 4
        removed = cleanup_stale()
        assert any(str(workdir) in r for r in removed)
        assert any(str(cgroup) in r for r in removed)
        assert _leftovers(workdir, cgroup) == []
    finally:
        teardown(workdir, cgroup, [], [])


def test_cleanup_stale_keeps_live_benches(bench: EmulatedDisks) -> None:
    cleanup_stale()
    assert bench.cgroup is not None and bench.cgroup.exists()
    assert bench.mount_point.is_mount()


def test_not_usable_outside_with() -> None:
    b = emulated_disks()
    with pytest.raises(EmulatedDiskError):
        b.run(["true"])
    with pytest.raises(ValueError):
        emulated_disks(read_iops=0)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "testbench", *args],
        capture_output=True, text=True, timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )


def test_cli(tmp_path: Path) -> None:
    check = _cli("--check")
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("available")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.txt").write_text("payload\n")
    run = _cli("--run", "--mb-per-s", "50", "--iops", "0", "--size-mb", "32", "--copy",
               str(tmp_path), "--no-global-drop", "--",
               "sh", "-c", 'cat "$HEP_ADVISOR_EMULATED_MOUNT/sub/x.txt"; '
               "grep blkio /proc/self/cgroup; ls {mount}/sub; exit 3")
    assert run.returncode == 3, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "payload"
    assert "blkio:/hep-advisor-" in lines[1]
    assert lines[2] == "x.txt"
    # and nothing left of it
    made = re.search(r"@(\S+)/mnt0; .* cgroup (\S+)\)", run.stderr)
    assert made, run.stderr
    assert _leftovers(Path(made.group(1)), Path(made.group(2))) == []
