"""The block throttle: the probe's reading of cgroup v1 and v2 limits, and the replay's fresh
slice (a job starting after idle gets one slice's budget at once)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.requests import Request
from hep_advisor.probes.throttle import DEFAULT_SLICE_S, probe_throttle


def _tree(tmp_path: Path, cgroup: str, files: dict[str, str]) -> tuple[str, str]:
    proc = tmp_path / "cgroup"
    proc.write_text(cgroup)
    root = tmp_path / "sys"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(proc), str(root)


def test_v1_blkio_limits_tightest_along_the_path(tmp_path: Path) -> None:
    proc, root = _tree(tmp_path, "9:name=systemd:/\n7:blkio:/bench/job\n4:memory:/x\n", {
        "blkio/bench/blkio.throttle.read_bps_device": "7:3 100000000\n",
        "blkio/bench/job/blkio.throttle.read_bps_device": "7:3 70000000\n8:0 1000\n",
        "blkio/bench/job/blkio.throttle.read_iops_device": "7:3 120\n",
    })
    t = probe_throttle(["7:3"], proc, root)
    assert t is not None
    assert t.read_mb_per_s == pytest.approx(70.0)
    assert t.read_iops == pytest.approx(120.0)
    assert t.slice_s == DEFAULT_SLICE_S and "assumed" in t.slice_source
    assert probe_throttle(["9:9"], proc, root) is None  # another device: no limit


def test_v2_io_max(tmp_path: Path) -> None:
    proc, root = _tree(tmp_path, "0::/slice/job\n", {
        "slice/io.max": "8:16 rbps=max wbps=max riops=500 wiops=max\n",
        "slice/job/io.max": "8:16 rbps=50000000 wbps=max riops=max wiops=max\n",
    })
    t = probe_throttle(["8:16"], proc, root)
    assert t is not None
    assert t.read_mb_per_s == pytest.approx(50.0) and t.read_iops == pytest.approx(500.0)


def test_no_cgroup_files_no_throttle(tmp_path: Path) -> None:
    proc, root = _tree(tmp_path, "0::/\n", {})
    assert probe_throttle(["8:0"], proc, root) is None
    assert probe_throttle(["8:0"], str(tmp_path / "missing"), root) is None


@pytest.mark.parametrize("limit", ["additive", "max"])
def test_fresh_slice_shortens_a_short_job_only_where_throttled(limit: str) -> None:
    # one 20 MB sequential read at 70 MB/s (about 0.29 s throttled): the fresh slice's
    # budget goes at once, so about 0.1 s less; a long job changes by the same 0.1 s only
    dev = LocalDevice.from_rates(70.0, 120.0, 128, limit=limit, max_io_kb=1024)
    slice_dev = LocalDevice.from_rates(70.0, 120.0, 128, limit=limit, max_io_kb=1024,
                                       throttle_slice_s=0.1)
    reqs = [Request("f", 0, 20_000_000)]
    plain, fresh = dev.replay(reqs).time_s, slice_dev.replay(reqs).time_s
    assert plain > 0.25
    assert fresh == pytest.approx(plain - 0.1, abs=1e-9)
    tiny = [Request("f", 0, 4096)]  # less than a slice's budget: no wait at all
    assert slice_dev.replay(tiny).time_s == 0.0


def test_the_probe_view_shows_a_cgroup_read_limit() -> None:
    from hep_advisor.probes.results import StorageInfo, ThrottleInfo
    from hep_advisor.render.probe_view import storage_line

    s = StorageInfo("/data", "/data", "ext4", "local", "loop1", True, 128, "none")
    assert "cgroup" not in storage_line(s)
    t = ThrottleInfo(70.0, 120.0, 0.1, "assumed: kernel default")
    assert "cgroup read limit 70 MB/s, 120 IOPS" in storage_line(replace(s, throttle=t))


def _site_with(throttle: object) -> object:
    from hep_advisor.probes.results import CpuInfo, MemoryInfo, SiteProfile, StorageInfo

    disk = StorageInfo("/data", "/data", "ext4", "local", "loop1", True, 128, "none")
    return SiteProfile("host", "Linux", CpuInfo(2, 2), MemoryInfo(8_000_000_000, 4_000_000_000),
                       (replace(disk, throttle=throttle),))


@pytest.mark.parametrize(("cold", "iops", "sweep", "form"), [
    (66.0, 118.0, "additive", "max"),  # reads at its limits: the record decides
    (66.0, 118.0, None, "max"),
    (30.0, 40.0, "additive", "additive"),  # hardware below it is slower: the sweep decides
    (30.0, 40.0, None, None),
    (None, None, "additive", "max"),  # nothing measured: the record is all there is
])
def test_a_binding_recorded_throttle_makes_the_device_a_rate_limiter(
        cold: float | None, iops: float | None, sweep: str | None, form: str | None) -> None:
    from hep_advisor.models.deviceform import device_form
    from hep_advisor.models.physics import Params
    from hep_advisor.models.replay.sitedevice import site_device
    from hep_advisor.probes.readtests.results import RawRead
    from hep_advisor.probes.results import ThrottleInfo

    site = _site_with(ThrottleInfo(70.0, 120.0, 0.1, "assumed: kernel default"))
    raw = RawRead(cold_mb_per_s=cold, warm_mb_per_s=None, iops_4k=iops, access_time_ms=8.0,
                  bandwidth_mb_per_s=cold, cold=None, warm=None, device_limit=sweep)
    assert device_form(raw, site) == form
    assert device_form(raw, _site_with(None)) == sweep  # no throttle: the sweep's choice
    dev = site_device(Params(70.0, 8.0, 1, 1, 1, 1, 1), raw, site)
    assert dev.limit == (form or "additive")
    if form == "max" and sweep != "max" and iops:  # one request slot, not access + transfer
        assert dev.access_s == pytest.approx(1 / iops)
