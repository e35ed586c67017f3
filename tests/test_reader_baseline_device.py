"""The reader baseline's device: the queue's largest I/O (``max_sectors_kb``) probed, carried by
``device_from`` and used by the replay (a read larger than the read-ahead reads ahead up to it;
a rate limiter charges one slot per such I/O).  Tiny synthetic data, exact counts."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hep_advisor.models.physics import Params
from hep_advisor.models.reader_baseline import reader_baseline
from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.requests import Request
from hep_advisor.models.replay.sitedevice import device_from
from hep_advisor.probes import probe_storage
from hep_advisor.probes.basketmap import Region, synthetic_map
from hep_advisor.probes.readtests.readers import parse_reader

MiB = 1 << 20


def _fake_sys(tmp: Path, max_sectors: str | None) -> tuple[Path, Path]:
    d = tmp / "sys" / "devices" / "virtual" / "block" / "loop7"
    (d / "queue").mkdir(parents=True)
    (d / "queue" / "rotational").write_text("0\n")
    (d / "queue" / "read_ahead_kb").write_text("128\n")
    if max_sectors is not None:
        (d / "queue" / "max_sectors_kb").write_text(max_sectors + "\n")
    (d / "size").write_text("1000\n")
    (tmp / "sys" / "class" / "block").mkdir(parents=True)
    os.symlink(d, tmp / "sys" / "class" / "block" / "loop7")
    (tmp / "sys" / "dev" / "block").mkdir(parents=True)
    os.symlink(d, tmp / "sys" / "dev" / "block" / "7:7")
    mountinfo = tmp / "mountinfo"
    mountinfo.write_text("40 1 7:7 / /data rw - ext4 /dev/loop7 rw\n")
    return tmp / "sys", mountinfo


@pytest.mark.parametrize("text, expected", [("1280", 1280), ("garbage", None), (None, None)])
def test_the_probe_reads_the_largest_io(tmp_path: Path, text: str | None,
                                        expected: int | None) -> None:
    sys_root, mountinfo = _fake_sys(tmp_path, text)
    s = probe_storage("/data/f.root", sys_root=str(sys_root), mountinfo=str(mountinfo))
    assert (s.device, s.read_ahead_kb, s.max_sectors_kb) == ("loop7", 128, expected)
    assert s.stack[0].max_sectors_kb == expected


def _params() -> Params:
    return Params(storage_mb_per_s=70, access_ms=8.0, devices=1, decompress_mb_per_s=200,
                  process_mb_per_s=100, open_s=0.001, cache_mb_per_s=5000, call_s=0.001,
                  basket_s=1e-5, storage_overlap=1.0)


def test_device_from_carries_the_largest_io() -> None:
    assert device_from(_params(), None, 128).max_io_kb == 0  # unknown: not guessed
    d = device_from(_params(), None, 128, 1280)
    assert (d.read_ahead_kb, d.max_io_kb, d.limit) == (128, 1280, "max")
    assert device_from(_params(), None, 128, -5).max_io_kb == 0


def test_a_large_read_on_a_limiter_takes_one_slot_per_largest_io() -> None:
    """A 20 MiB read at 128 KiB read-ahead: 160 windows of 128 KiB without the queue's
    largest I/O; 16 I/Os of 1280 KiB with it (ractl_max_pages), each one slot."""
    req = [Request("f", 0, 20 * MiB)]
    plain = LocalDevice(70.0, 1 / 120, 128, limit="max").replay(req, {"f": 20 * MiB})
    big = LocalDevice(70.0, 1 / 120, 128, limit="max", max_io_kb=1280).replay(
        req, {"f": 20 * MiB})
    assert (plain.device_requests, big.device_requests) == (160, 16)
    assert plain.device_bytes == big.device_bytes == 20 * MiB
    # slots bind at 160 x 1/120 s; at 16 slots the bandwidth binds (20 MiB at 70 MB/s)
    assert plain.time_s == pytest.approx(160 / 120)
    assert big.time_s == pytest.approx(20 * MiB / 70e6)


def _one_big_file() -> Any:
    """One file, 2 branches x 4 baskets of 1 MB (1000 entries each) after a 64 KiB header."""
    header, size = 65536, 1_000_000
    rows = [(f"b{b}", header + (b * 4 + i) * size, size, i * 1000, (i + 1) * 1000)
            for b in range(2) for i in range(4)]
    end = header + 8 * size
    regions = (Region("header", 0, 403), Region("keys", end, 500),
               Region("tree", end + 500, 20_000), Region("tree_keylen", end + 500, 40))
    return synthetic_map(rows, entries=4000, path="/data/f.root", file_bytes=end + 20_500,
                         regions=regions)


def test_the_reader_baseline_uses_the_probed_largest_io() -> None:
    m = _one_big_file()
    base: Any = SimpleNamespace(params=_params(), row=lambda workers: {})
    spec = parse_reader("uproot.iterate:step_size=4000")  # one step: 8 MB in one read

    def site(mx: int | None) -> Any:
        return SimpleNamespace(os="Linux 6.1.0", storage=[SimpleNamespace(
            read_ahead_kb=128, max_sectors_kb=mx, fs_type="ext4")])

    unknown = reader_baseline(spec, [m], 1, None, site(None), base)
    known = reader_baseline(spec, [m], 1, None, site(1280), base)
    assert known.device_requests < unknown.device_requests / 5
    assert known.io_s < unknown.io_s


def test_the_site_device_takes_large_folios_from_the_kernel_and_file_system() -> None:
    from hep_advisor.models.replay.sitedevice import site_device

    def site(release: str, fs: str) -> Any:
        return SimpleNamespace(os=release, storage=[SimpleNamespace(
            read_ahead_kb=128, max_sectors_kb=1280, fs_type=fs)])

    assert site_device(_params(), None, site("Linux 6.18.44", "ext4")).large_folios
    assert not site_device(_params(), None, site("Linux 6.12.9", "ext4")).large_folios
    assert not site_device(_params(), None, site("Linux 6.18.44", "nfs4")).large_folios
