"""The storage probe on a fake /sys and mountinfo (md RAID over partitions, device-mapper), and
on this machine's real one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hep_advisor.probes import probe_site, probe_storage
from hep_advisor.probes.storage import fs_class, read_mounts


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _disk(sys: Path, name: str, rotational: bool, read_ahead: int, sched: str) -> Path:
    d = sys / "devices" / "virtual" / "block" / name
    _write(d / "queue" / "rotational", "1" if rotational else "0")
    _write(d / "queue" / "read_ahead_kb", str(read_ahead))
    _write(d / "queue" / "scheduler", sched)
    _write(d / "size", "1000")
    (sys / "class" / "block").mkdir(parents=True, exist_ok=True)
    os.symlink(d, sys / "class" / "block" / name)
    return d


def _partition(sys: Path, disk: Path, name: str) -> Path:
    p = disk / name
    _write(p / "partition", "1")
    _write(p / "size", "500")
    os.symlink(p, sys / "class" / "block" / name)
    return p


@pytest.fixture
def fake_sys(tmp_path: Path) -> tuple[Path, Path]:
    """md0 (RAID5) over sda1, sdb1, sdc1 (rotational); dm-0 over nvme0n1 (not rotational)."""
    sys = tmp_path / "sys"
    disks = [_disk(sys, n, True, 128, "mq-deadline [bfq] none") for n in ("sda", "sdb", "sdc")]
    parts = [_partition(sys, d, d.name + "1") for d in disks]
    md = _disk(sys, "md0", False, 8192, "none")
    _write(md / "md" / "level", "raid5")
    for p in parts:
        (md / "slaves").mkdir(exist_ok=True)
        os.symlink(p, md / "slaves" / p.name)
    nvme = _disk(sys, "nvme0n1", False, 256, "[none] mq-deadline")
    dm = _disk(sys, "dm-0", False, 4096, "none")
    (dm / "slaves").mkdir()
    os.symlink(nvme, dm / "slaves" / "nvme0n1")
    devblock = sys / "dev" / "block"
    devblock.mkdir(parents=True)
    os.symlink(md, devblock / "9:0")
    os.symlink(dm, devblock / "253:0")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "30 22 9:0 / /data rw,relatime - xfs /dev/md0 rw\n"
        "31 22 253:0 / /scratch\\040space rw - ext4 /dev/mapper/vg-scratch rw\n"
        "32 22 0:50 / /lustre rw - lustre 10.0.0.1@tcp:/fs rw\n"
        "33 22 0:51 / /eos rw - fuse.eosxd eos rw\n"
        "34 22 0:52 / /nfs rw - nfs4 server:/export rw\n"
    )
    return sys, mountinfo


def test_md_raid_over_partitions(fake_sys: tuple[Path, Path]) -> None:
    sys, mountinfo = fake_sys
    s = probe_storage("/data/run1/file.root", sys_root=str(sys), mountinfo=str(mountinfo))
    assert (s.mount_point, s.fs_type, s.fs_class, s.device) == ("/data", "xfs", "local", "md0")
    assert s.read_ahead_kb == 8192
    assert s.physical_devices == ("sda", "sdb", "sdc")
    assert s.rotational is True  # every member disk is rotational
    md = s.stack[0]
    assert md.kind == "md" and md.raid_level == "raid5"
    assert {d.kind for d in s.stack[1:4]} == {"partition"}
    assert s.stack[-1].scheduler == "bfq"


def test_device_mapper_on_nvme(fake_sys: tuple[Path, Path]) -> None:
    sys, mountinfo = fake_sys
    s = probe_storage("/scratch space/x", sys_root=str(sys), mountinfo=str(mountinfo))
    assert s.mount_point == "/scratch space"
    assert s.device == "dm-0" and s.physical_devices == ("nvme0n1",)
    assert s.rotational is False and s.read_ahead_kb == 4096


@pytest.mark.parametrize(("path", "cls"), [("/lustre/a", "lustre"), ("/eos/b", "fuse"),
                                           ("/nfs/c", "nfs")])
def test_network_file_systems_have_no_block_device(fake_sys: tuple[Path, Path], path: str,
                                                   cls: str) -> None:
    sys, mountinfo = fake_sys
    s = probe_storage(path, sys_root=str(sys), mountinfo=str(mountinfo))
    assert s.fs_class == cls
    assert s.device is None and s.rotational is None and s.read_ahead_kb is None


def test_unknown_is_none_never_a_guess(tmp_path: Path) -> None:
    s = probe_storage("/data/x", sys_root=str(tmp_path), mountinfo=str(tmp_path / "missing"))
    assert s.mount_point is None and s.device is None and s.rotational is None
    assert fs_class("someweirdfs") is None
    assert probe_storage("root://eos.example//store/x.root").fs_class == "remote"


def test_real_machine(tmp_path: Path) -> None:
    assert read_mounts()  # this machine has a mount table
    site = probe_site([str(tmp_path)])
    assert site.cpu.logical_cores and site.cpu.logical_cores >= 1
    assert site.memory.total_bytes >= site.memory.available_bytes > 0
    (s,) = site.storage
    assert s.mount_point is not None and str(tmp_path).startswith(s.mount_point)
    assert s.fs_type
