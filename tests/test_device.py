"""The device's form: a disk (access time, then transfer: additive) or a rate limiter (the
larger of a request slot and the transfer: max), decided from the request sweep, and each
form's limits in the replay (``LocalDevice``) and in the rate model (``stream_io_rate``)."""

from __future__ import annotations

import numpy as np
import pytest

from hep_advisor.models.physics import Params, request_time, shared_devices, stream_io_rate
from hep_advisor.models.replay import LocalDevice, Request
from hep_advisor.probes.readtests.raw import device_limit, fit_access
from hep_advisor.probes.readtests.results import Conditions, RequestPoint
from hep_advisor.probes.readtests.runner import measurement

KiB, MiB = 1 << 10, 1 << 20
SIZES = (4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 8 * MiB)


def sweep(seconds_per_request: object, sizes: tuple[int, ...] = SIZES) -> list[RequestPoint]:
    out = []
    for size in sizes:
        t = seconds_per_request(size)  # type: ignore[operator]
        rate = size / t / 1e6
        out.append(RequestPoint(size, "random", rate,
                                measurement([rate], "MB/s", Conditions(cache="cold"))))
    return out


def test_a_disk_sweep_chooses_the_additive_form() -> None:
    points = sweep(lambda s: 0.008 + s / 100e6)
    form, e_add, e_max = device_limit(points, 100.0)
    assert form == "additive" and e_add < 1e-3 < e_max
    fit = fit_access(points, 100.0)
    assert fit.limit == "additive" and fit.access_time_ms == pytest.approx(8.0, rel=1e-6)


def test_a_throttled_sweep_chooses_the_max_form() -> None:
    points = sweep(lambda s: max(1 / 120, s / 70e6))
    form, e_add, e_max = device_limit(points, 70.0)
    assert form == "max" and e_max < 1e-3 < e_add
    fit = fit_access(points, 70.0)
    # a limiter's smallest request costs one request slot: 1 / IOPS, not less its transfer
    assert fit.limit == "max" and fit.access_time_ms == pytest.approx(1000 / 120, rel=1e-9)


def test_a_sweep_far_from_the_knee_or_too_short_decides_nothing() -> None:
    # requests all far below access x bandwidth (583 kB): both forms give the IOPS
    far = sweep(lambda s: max(1 / 120, s / 70e6), (512, 1024, 2048, 4096))
    assert device_limit(far, None)[0] is None
    assert device_limit(sweep(lambda s: 0.008 + s / 1e8, (4096, MiB)), 100.0)[0] is None


def test_request_time_adds_for_a_disk_and_takes_the_larger_for_a_limiter() -> None:
    assert request_time(0.008, 0.002) == pytest.approx(0.010)
    assert request_time(0.008, 0.002, 1.0) == pytest.approx(0.008)
    assert request_time(0.008, 0.020, 1.0) == pytest.approx(0.020)
    # the knee, request = access x bandwidth: the forms differ by 2x
    p = Params(70.0, 1000 / 120, 1, 1, 1, 1, 1)
    knee = np.array([70e6 / 120])
    no = np.zeros(1)
    assert stream_io_rate(p, knee, no, no)[0] == pytest.approx(35.0)
    limiter = Params(70.0, 1000 / 120, 1, 1, 1, 1, 1, storage_overlap=1.0)
    assert stream_io_rate(limiter, knee, no, no)[0] == pytest.approx(70.0)
    assert stream_io_rate(limiter, np.array([4096.0]), no, no)[0] == pytest.approx(
        120 * 4096 / 1e6)


def random_reads(n: int, size: int, spacing: int = 64 * MiB) -> list[Request]:
    return [Request("f", k * spacing, size) for k in range(n)]


@pytest.mark.parametrize("limit", ["additive", "max"])
def test_each_form_random_small_reads_reach_the_iops(limit: str) -> None:
    dev = LocalDevice.from_rates(70, 120, read_ahead_kb=0, limit=limit)
    t = dev.replay(random_reads(600, 4 * KiB))
    assert t.device_requests == t.seeks == 600
    assert 600 / t.time_s == pytest.approx(120, rel=1e-9)


def test_mid_size_random_reads_tell_the_forms_apart() -> None:
    reqs = random_reads(100, 512 * KiB)
    disk = LocalDevice.from_rates(70, 120, read_ahead_kb=0).replay(reqs)
    limiter = LocalDevice.from_rates(70, 120, read_ahead_kb=0, limit="max").replay(reqs)
    flow = 512 * KiB / 70e6
    assert disk.time_s == pytest.approx(100 * (1 / 120 - 4096 / 70e6 + flow))
    assert limiter.time_s == pytest.approx(100 * max(1 / 120, flow))
    assert disk.time_s / limiter.time_s > 1.8


@pytest.mark.parametrize("limit", ["additive", "max"])
def test_each_form_streams_a_file_at_the_bandwidth(limit: str) -> None:
    dev = LocalDevice.from_rates(70, 120, read_ahead_kb=2560, limit=limit)
    reqs = [Request("f", k * MiB, MiB) for k in range(200)]
    t = dev.replay(reqs, {"f": 200 * MiB})
    assert t.device_bytes == 200 * MiB
    assert t.requested_bytes / t.time_s / 1e6 == pytest.approx(70, rel=0.01)


def test_a_limiter_with_small_read_ahead_is_iops_bound_when_sequential() -> None:
    # every device I/O costs a request slot, contiguous or not: 128 KiB windows at 120 IOPS
    # give 15.7 MB/s (the throttled test disk measured 16.2); a disk streams them
    reqs = [Request("f", k * 64 * KiB, 64 * KiB) for k in range(1600)]
    limiter = LocalDevice.from_rates(70, 120, read_ahead_kb=128, limit="max")
    t = limiter.replay(reqs, {"f": 100 * MiB})
    assert t.requested_bytes / t.time_s / 1e6 == pytest.approx(120 * 128 * KiB / 1e6, rel=0.02)
    disk = LocalDevice.from_rates(70, 120, read_ahead_kb=128).replay(reqs, {"f": 100 * MiB})
    assert disk.requested_bytes / disk.time_s / 1e6 > 60


def test_a_limiter_splits_large_ios_and_lets_a_burst_through() -> None:
    dev = LocalDevice(70.0, 1 / 120, limit="max", max_io_kb=128)
    # one 1 MiB I/O: 8 slots of 1/120 s (67 ms) against 15 ms of transfer
    assert dev.io_time([(MiB, True)]) == pytest.approx(8 / 120)
    burst = LocalDevice(70.0, 1 / 120, limit="max", carry_s=0.1)
    # the first 0.1 s of budget passes at once: 12 slots of 4 KiB are free, then 1/120 each
    assert burst.io_time([(4096, True)] * 12) == pytest.approx(0.0)
    assert burst.io_time([(4096, True)] * 24) == pytest.approx(12 / 120)


def test_retiming_a_transfer_follows_the_form() -> None:
    reqs = random_reads(50, 512 * KiB)
    dev = LocalDevice.from_rates(70, 120, read_ahead_kb=0, limit="max")
    t = dev.replay(reqs)
    faster = LocalDevice(140.0, dev.access_s, 0, limit="max")
    assert faster.io_time(t.ios) == pytest.approx(faster.replay(reqs).time_s)


def test_jobs_share_devices_as_a_closed_queue() -> None:
    r1, r_io = np.array([50.0]), np.array([100.0])
    # one job per device or fewer: no queue
    assert shared_devices(np.array([4.0]), r1, r_io, 4.0)[0] == pytest.approx(200.0)
    # many jobs on one device: the device's rate; never above it, never below one job
    many = shared_devices(np.array([64.0]), r1, r_io, 1.0)[0]
    assert 95.0 < many < 100.0
    two = shared_devices(np.array([2.0]), r1, r_io, 1.0)[0]
    assert 50.0 < two < 100.0
    # exact mean-value analysis for 2 jobs: S = Z = 0.01: Q1 = 0.5, R2 = 0.015, X = 80;
    # Schweitzer's approximation is a few percent lower: 100 (3 - sqrt(5)) = 76.4
    assert two == pytest.approx(100 * (3 - np.sqrt(5))) and two < 80.0


def test_a_read_larger_than_the_read_ahead_reads_ahead_up_to_the_largest_io() -> None:
    # the kernel's ractl_max_pages: a 4 MiB read with 128 KiB read-ahead issues 1280 KiB
    # windows where the queue takes 1280 KiB I/Os (max_sectors_kb), 128 KiB ones otherwise
    req = [Request("f", 0, 4 * MiB)]
    log: list[tuple[str, int, int]] = []
    LocalDevice(100, 0.01, 128, max_io_kb=1280).replay(req, {"f": 64 * MiB}, log=log)
    assert {n for _, _, n in log} == {1280 * KiB} and log[0][1] == 0
    assert sum(n for _, _, n in log) >= 4 * MiB
    small: list[tuple[str, int, int]] = []
    LocalDevice(100, 0.01, 128).replay(req, {"f": 64 * MiB}, log=small)
    assert {n for _, _, n in small} == {128 * KiB} and len(small) >= 32


def test_a_reopened_file_keeps_the_page_cache_and_its_marks() -> None:
    # read 1 page at 0 (a window of 4 pages, marked at page 1), then, through a new open,
    # page 1: the mark left by the first open starts the next window (4 - 1 + 1 pages,
    # ramped to 8), though the new open has no read-ahead state of its own
    log: list[tuple[str, int, int]] = []
    reqs = [Request("f", 0, 4096), Request("f", 4096 + 100, 34)]
    LocalDevice(100, 0.01, 128).replay(reqs, {"f": MiB}, reopen=True, log=log)
    assert log == [("f", 0, 4 * 4096), ("f", 4 * 4096, 8 * 4096)]


@pytest.mark.emulated
def test_the_emulated_disk_keeps_the_read_ahead_it_was_given() -> None:
    # from Linux 6.11 writing queue/rotational resets read_ahead_kb: set it last
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        pytest.skip(f"emulated disks unavailable: {why}")
    with emulated_disks(read_mb_per_s=None, read_iops=None, read_ahead_kb=128,
                        size_mb=32) as bench:
        assert bench.disks[0].read_ahead_kb == 128


def _paced(device: LocalDevice, sizes: list[int], gaps: list[float]) -> float:
    """One file read request after request (each at its own far offset: no read-ahead joins
    them), with ``gaps`` of CPU after each."""
    reqs = [Request("f", i * 64 * MiB, n) for i, n in enumerate(sizes)]
    io = device.replay(reqs, {"f": 64 * MiB * len(sizes)})
    assert len(io.marks) == len(reqs) + 1
    return device.paced_time(io, gaps)


def test_a_paced_disk_adds_io_and_cpu() -> None:
    disk = LocalDevice(100.0, 0.008, 0)
    t = _paced(disk, [MiB] * 4, [0.05] * 4)
    assert t == pytest.approx(4 * (0.008 + MiB / 100e6) + 0.2)


def test_a_throttle_lets_reads_spaced_by_cpu_through_and_charges_back_to_back_ones() -> None:
    """The kernel's block-throttle rule: a fresh slice's budget at once; reads whose rate
    stays under the limit never wait; a stream beyond it takes its bytes at the rate, less
    the first slice."""
    thr = LocalDevice(70.0, 1 / 120, 0, limit="max", throttle_slice_s=0.1,
                      throttle_mb_per_s=70.0, throttle_iops=120.0)
    # up to one slice's bytes (7 MB) at once: no wait; beyond it, the rest of the slice too
    assert _paced(thr, [6_900_000], [0.0]) == pytest.approx(0.0, abs=1e-9)
    assert _paced(thr, [7_700_000], [0.0]) == pytest.approx(0.1 + 0.7e6 / 70e6, rel=1e-3)
    # 1 MB every 50 ms (20 MB/s, under 70): only the CPU
    assert _paced(thr, [1_000_000] * 20, [0.05] * 20) == pytest.approx(1.0, abs=1e-6)
    # 70 MB back to back: its time at the rate less up to the first slice (the kernel rounds
    # the elapsed time to whole slices)
    t = _paced(thr, [1_000_000] * 70, [0.0] * 70)
    assert 70.25e6 / 70e6 - 0.1 <= t <= 70.25e6 / 70e6 + 1e-3
    # 240 small reads back to back: IOPS-bound, about two seconds less the first slice
    t = _paced(thr, [4096] * 240, [0.0] * 240)
    assert 1.8 <= t <= 2.0
    # without the throttle's rule (another limiter, no carry): each read its larger time
    bucket = LocalDevice(70.0, 1 / 120, 0, limit="max")
    assert _paced(bucket, [4096] * 10, [0.0] * 10) == pytest.approx(10 / 120)
    # repeat: the sample stands for two like it
    io = thr.replay([Request("f", 0, 4096), Request("f", MiB, 4096)], {"f": 64 * MiB})
    assert thr.paced_time(io, [0.5, 0.5], repeat=2.5) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="gaps"):
        thr.paced_time(io, [0.5])


def test_a_throttles_credit_comes_once_for_a_replay_standing_for_many() -> None:
    """The throttle lets one slice's budget through at once, once per job: a replayed sample
    of files standing for ten times as many takes the credit off once, not ten times (120
    tiny files replayed as 8 had come out 5.2 s where their 840 I/Os take 6.7 s)."""
    from hep_advisor.models.replay.predict import LayoutTime, retimed

    thr = LocalDevice(70.0, 1 / 120, 0, limit="max", throttle_slice_s=0.1,
                      throttle_mb_per_s=70.0, throttle_iops=120.0)
    # 48 small reads far apart: 48 request slots, 0.4 s, less the slice's credit
    io = thr.replay([Request("f", i * 4 * MiB, 4096) for i in range(48)], {"f": 256 * MiB})
    assert io.device_requests == 48
    assert io.time_s == pytest.approx(0.3) and io.credit_s == pytest.approx(0.1)
    lt = LayoutTime(files=80, entries=800, compressed_mb=1.0, calls=80, baskets=80, io=io,
                    scale=10.0, cpu_s=0.0)
    assert lt.io_s == pytest.approx(10 * 0.4 - 0.1)
    # on a device of twice the IOPS: the same I/Os, 0.2 s each sample, the credit once
    fast = retimed(lt, thr, 1.0, 0.5)
    assert fast.io.credit_s == pytest.approx(0.1)
    assert fast.io_s == pytest.approx(10 * 0.2 - 0.1)
    # no throttle: no credit
    plain = LocalDevice(70.0, 1 / 120, 0, limit="max")
    io = plain.replay([Request("f", i * 4 * MiB, 4096) for i in range(48)], {"f": 256 * MiB})
    assert io.credit_s == 0.0 and io.time_s == pytest.approx(0.4)


def test_a_throttle_slice_ends_on_the_kernels_grid() -> None:
    """Each dispatch sets the slice's end a slice later, rounded up to a whole slice of the
    kernel's clock: after 105 ms of CPU the slice is still alive in 3 of 4 phases, and the
    elapsed time (two slices' budget, 14 MB) lets a 12 MB read through at once; at phase 0
    the slice has lapsed and the read starts a fresh one (7 MB at once, the rest waits)."""
    from hep_advisor.models.replay.throttle import Steps as _Steps

    thr = LocalDevice(70.0, 1 / 120, 0, limit="max", throttle_slice_s=0.1,
                      throttle_mb_per_s=70.0, throttle_iops=120.0)
    sizes, gaps = [1_000_000, 12_000_000], [0.105, 0.0]
    reqs = [Request("f", i * 64 * MiB, n) for i, n in enumerate(sizes)]
    io = thr.replay(reqs, {"f": 128 * MiB})

    def steps(gaps: list[float]) -> _Steps:
        return _Steps([n for n, _ in io.ios], [1] * len(io.ios), io.marks, gaps, [0, 1])

    fresh, edge = thr._throttled(steps(gaps), 0.0, phase=0.0)
    alive, _ = thr._throttled(steps(gaps), 0.0, phase=0.03)
    assert edge  # a gap of 105 ms: between one slice and two
    assert alive == pytest.approx(0.105, abs=1e-6)
    assert fresh == pytest.approx(0.105 + 5e6 / 70e6 + 0.1, rel=1e-3)
    assert thr.paced_time(io, gaps) == pytest.approx((3 * alive + fresh) / 4)
    # a gap of 50 ms or of 250 ms is no edge: every phase goes alike
    for gap in (0.05, 0.25):
        t, edge = thr._throttled(steps([gap, 0.0]), 0.0)
        assert not edge
        assert thr.paced_time(io, [gap, 0.0]) == pytest.approx(t)


def test_the_open_work_follows_a_files_opening_reads() -> None:
    """A file's open work (parsing its header, directory and tree) comes after its first run
    of metadata reads, before its first basket: not after its first read."""
    from hep_advisor.models.replay.pacing import Pace

    reqs = [Request("f", 0, 100, "meta"), Request("f", 900, 50, "meta"),
            Request("f", 800, 60, "meta"), Request("f", 100, 500, "data"),
            Request("f", 600, 100, "meta"), Request("g", 0, 100, "meta"),
            Request("g", 100, 400, "data"), Request("h", 0, 10, "data")]
    pace = Pace.of(reqs)
    assert pace.opened.tolist() == [False, False, True, False, False, True, False, True]
    gaps = pace.gaps(0.2, 0.0, 0.91)  # the stream's 0.91 s by data bytes (500, 400, 10)
    assert gaps.tolist() == pytest.approx([0, 0, 0.2, 0.5, 0, 0.2, 0.4, 0.21])


def test_a_phase_resumed_from_the_first_edge_goes_as_a_whole_run() -> None:
    """The phases agree up to the first idle gap of one to two slices; a run resumed there at
    another phase ends where that phase's whole run ends."""
    from hep_advisor.models.replay.throttle import Steps as _Steps

    thr = LocalDevice(70.0, 1 / 120, 0, limit="max", throttle_slice_s=0.1,
                      throttle_mb_per_s=70.0, throttle_iops=120.0)
    sizes = [2_000_000, 9_000_000, 3_000_000, 8_000_000, 500_000, 12_000_000, 4_000_000]
    gaps = [0.05, 0.3, 0.02, 0.13, 0.17, 0.11, 0.0]
    reqs = [Request("f", i * 64 * MiB, n) for i, n in enumerate(sizes)]
    io = thr.replay(reqs, {"f": 512 * MiB})
    steps = _Steps([n for n, _ in io.ios], [1] * len(io.ios), io.marks, gaps,
                   list(range(len(gaps))))
    _, edge = thr._throttled(steps, 0.0)
    assert edge is not None and edge.step == 4  # after the 130 ms gap: 50 and 300 ms are not
    whole = [thr._throttled(steps, 0.0, 0.1 * k / 8)[0] for k in range(8)]
    resumed = [thr._throttled(steps, 0.0, 0.1 * k / 8, edge)[0] for k in range(8)]
    assert resumed == pytest.approx(whole, abs=1e-12)
    assert max(whole) - min(whole) > 0.01  # the phase matters here


def test_root_loop_work_follows_the_entries_each_read_starts() -> None:
    """ROOT's GetEntry loop: the work per entry goes after the read that starts those
    entries, up to the next read. Two branches whose baskets end at the same entries read in
    bursts, with each half's work after its burst; a rate limiter then waits on each burst
    where the work spread by bytes would have paced the reads."""
    from hep_advisor.models.replay import root_getentry
    from hep_advisor.models.replay.pacing import Pace
    from hep_advisor.probes.basketmap import synthetic_map

    m = synthetic_map([("a", 1000, 100, 0, 10), ("a", 1200, 100, 10, 20),
                       ("b", 1100, 100, 0, 10), ("b", 1300, 100, 10, 20)], entries=20)
    at: list[int] = []
    reqs = root_getentry(m, cache_bytes=0, open_file=False, at=at)
    assert at == [0, 0, 10, 10]
    pace = Pace.of(reqs, at, {m.path: 20})
    assert pace.span is not None and pace.span.tolist() == [0, 10, 0, 10]
    gaps = pace.gaps(0.0, 0.0, 0.4, 1.0)  # 0.4 s by bytes (alike), 1.0 s by entries
    assert gaps.tolist() == pytest.approx([0.1, 0.6, 0.1, 0.6])
    assert Pace.of(reqs).gaps(0.0, 0.0, 0.4, 1.0).tolist() == pytest.approx([0.35] * 4)
    # with a TTreeCache the fills are issued at the entries that miss
    at = []
    two = synthetic_map([("a", 1000, 100, 0, 10), ("a", 1200, 100, 10, 20),
                         ("b", 1100, 100, 0, 10), ("b", 1300, 100, 10, 20)], entries=20,
                        clusters=[0, 10, 20])
    cached = root_getentry(two, cache_bytes=250, learn_entries=0, open_file=False, at=at)
    assert len(at) == len(cached) and at == [0, 10]
    # opening reads are issued at the first entry
    at = []
    assert len(root_getentry(m, cache_bytes=0, at=at)) == len(at) and at[0] == 0
    with pytest.raises(ValueError):
        Pace.of(reqs, [0], {m.path: 20})


def test_bursts_of_reads_wait_on_a_throttle() -> None:
    """Eight reads in two bursts, 0.5 s of work after each burst, on a 10 IOPS throttle:
    each burst waits for its slots, where the same work spread by bytes hides the reads."""
    from hep_advisor.models.replay.pacing import Pace

    thr = LocalDevice(1000.0, 0.1, 0, limit="max", throttle_slice_s=0.1,
                      throttle_mb_per_s=1000.0, throttle_iops=10.0)
    reqs = [Request("f", i * 64 * MiB, 4096) for i in range(8)]
    at = [0, 0, 0, 0, 50, 50, 50, 50]
    io = thr.replay(reqs, {"f": 512 * MiB})
    bursts = Pace.of(reqs, at, {"f": 100}).gaps(0.0, 0.0, 0.0, 1.0).tolist()
    spread = Pace.of(reqs).gaps(0.0, 0.0, 0.0, 1.0).tolist()
    t_bursts, t_spread = thr.paced_time(io, bursts), thr.paced_time(io, spread)
    assert t_bursts > t_spread + 0.2
    assert t_spread == pytest.approx(1.0, abs=0.15)  # the reads hide behind the work
