"""Bookkeeping of the read tests: eviction detection, the budget split, repetition, the raw
sweeps on tiny files, and cancellation leaving nothing behind."""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path

import psutil
import pytest

from hep_advisor.probes.readtests.pagecache import evict, resident_fraction
from hep_advisor.probes.readtests.raw import (
    FileSet,
    KiB,
    assign,
    concurrency_sweep,
    fit_access,
    request_sweep,
    sequential_rate,
)
from hep_advisor.probes.readtests.registry import MIN_S
from hep_advisor.probes.readtests.results import Conditions, RequestPoint
from hep_advisor.probes.readtests.runner import WEIGHTS, Cancelled, Session, measurement, spread


def _file(path: Path, n_bytes: int) -> str:
    """A file of random bytes, flushed to disk (dirty pages cannot be evicted)."""
    with open(path, "wb") as fh:
        fh.write(os.urandom(n_bytes))
        fh.flush()
        os.fsync(fh.fileno())
    return str(path)


def test_eviction_is_detected(tmp_path: Path) -> None:
    p = _file(tmp_path / "a.bin", 4 << 20)
    with open(p, "rb") as fh:
        fh.read()
    assert resident_fraction(p) == pytest.approx(1.0)
    e = evict(p)
    assert e.resident_before == pytest.approx(1.0)
    assert e.cold and e.resident_after is not None and e.resident_after <= 0.02
    with open(p, "rb") as fh:
        fh.read(1 << 20)
    frac = resident_fraction(p)
    assert frac is not None and frac >= 0.25  # what was read is cached again


def test_eviction_reports_dirty_pages_as_not_cold(tmp_path: Path) -> None:
    p = tmp_path / "dirty.bin"
    with open(p, "wb") as fh:  # freshly written pages are dirty: DONTNEED cannot drop them
        fh.write(os.urandom(2 << 20))
        fh.flush()
        e = evict(str(p))
    # either the kernel wrote them back already (cold), or the eviction is honestly not cold
    assert e.cold == (e.resident_after is not None and e.resident_after <= 0.02)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_budget_split_follows_weights_and_passes_on_unused_time() -> None:
    clock = FakeClock()
    s = Session(100.0, tests=["raw_read", "event_loop"], clock=clock)
    total = WEIGHTS["raw_read"] + WEIGHTS["event_loop"]
    minimums = MIN_S["raw_read"] + MIN_S["event_loop"]
    share = s.begin("raw_read")  # its minimum, and its weight's part of the rest
    assert share == pytest.approx(MIN_S["raw_read"]
                                  + (100 - minimums) * WEIGHTS["raw_read"] / total)
    clock.t = share / 2  # the first test used half its share: the rest flows on
    assert s.begin("event_loop") == pytest.approx(100 - share / 2)


def test_repeat_stops_when_stable_or_spent() -> None:
    clock = FakeClock()
    s = Session(10.0, clock=clock)

    def stable() -> float:
        clock.t += 0.1
        return 100.0

    assert len(s.repeat(stable, 5.0, "t", "m")) == 3  # stable after the minimum
    values = iter([50.0, 150.0, 80.0, 120.0, 60.0, 140.0] * 10)

    def noisy() -> float:
        clock.t += 1.0
        return next(values)

    assert len(s.repeat(noisy, 4.0, "t", "m")) == 4  # the share (4 s) is spent
    once = s.repeat(lambda: (setattr(clock, "t", clock.t + 10), 1.0)[1], 1.0, "t", "m")
    assert len(once) == 1  # a sample longer than the share still counts, once


def test_spread_and_measurement() -> None:
    assert spread([1.0]) is None
    assert spread([100.0, 100.0, 100.0]) == 0.0
    assert spread([90.0, 110.0]) == pytest.approx(0.2)
    m = measurement([1.0, 2.0, 3.0], "MB/s", Conditions(cache="cold"))
    assert m.median == 2.0 and m.samples == (1.0, 2.0, 3.0) and m.conditions.cache == "cold"


def test_cancel_raises_between_samples() -> None:
    cancel = threading.Event()
    s = Session(10.0, cancel=cancel)
    cancel.set()
    with pytest.raises(Cancelled):
        s.repeat(lambda: 1.0, 1.0, "t", "m")


def test_sequential_rates_cold_and_warm(tmp_path: Path) -> None:
    files = FileSet.of([_file(tmp_path / f"f{i}.bin", 2 << 20) for i in range(3)])
    s = Session(10.0)
    cold = sequential_rate(s, files, 0.5, cold=True, test="raw_read")
    warm = sequential_rate(s, files, 0.5, cold=False, test="page_cache")
    assert cold.median and cold.median > 0 and cold.conditions.cache == "cold"
    assert warm.median and warm.median > 0 and warm.conditions.cache == "warm"
    assert s.bytes_read >= 2 * (2 << 20)


def test_request_sweep_and_access_fit(tmp_path: Path) -> None:
    files = FileSet.of([_file(tmp_path / f"f{i}.bin", 1 << 20) for i in range(2)])
    points = request_sweep(Session(10.0), files, 1.0, sizes=(4 * KiB, 64 * KiB))
    assert [(p.request_bytes, p.pattern) for p in points] == [
        (4096, "sequential"), (4096, "random"), (65536, "sequential"), (65536, "random")]
    assert all(p.mb_per_s and p.mb_per_s > 0 for p in points)
    assert all(p.measurement.conditions.cache == "cold" for p in points)


def test_access_fit_recovers_a_known_disk() -> None:
    # a disk with 8 ms access time and 100 MB/s: time per request = 8 ms + size / 100 MB/s
    cond = Conditions(cache="cold")
    points = []
    for size in (4096, 65536, 1 << 20, 8 << 20):
        t = 0.008 + size / 100e6
        rate = size / t / 1e6
        points.append(RequestPoint(size, "random", rate, measurement([rate], "MB/s", cond)))
    fit = fit_access(points)
    assert fit.access_time_ms == pytest.approx(8.0, rel=1e-6)
    assert fit.bandwidth_mb_per_s == pytest.approx(100.0, rel=1e-6)
    assert fit.iops_4k == pytest.approx(1 / (0.008 + 4096 / 100e6), rel=1e-6)


def test_assign_gives_each_worker_its_own_data(tmp_path: Path) -> None:
    many = FileSet.of([_file(tmp_path / f"m{i}.bin", 1 << 20) for i in range(6)])
    jobs = assign(many, 3, 2 << 20)
    paths = [p for job in jobs for p, _, _ in job]
    assert len(jobs) == 3 and len(paths) == len(set(paths)) == 6
    one = FileSet.of([_file(tmp_path / "big.bin", 32 << 20)])
    jobs = assign(one, 4, 8 << 20)
    regions = sorted((o, o + n) for job in jobs for _, o, n in job)
    assert len(jobs) == 4
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(regions))


def test_concurrency_sweep_leaves_no_child_processes(tmp_path: Path) -> None:
    files = FileSet.of([_file(tmp_path / f"c{i}.bin", 2 << 20) for i in range(4)])
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    points = concurrency_sweep(Session(10.0), files, 1.0, workers=(1, 2))
    assert [p.workers for p in points] == [1, 2]
    assert all(p.aggregate_mb_per_s and p.aggregate_mb_per_s > 0 for p in points)
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert after <= before


def test_access_fit_on_a_throttled_device() -> None:
    # small reads limited to 120 IOPS, large ones to 70 MB/s (a block throttle, or a network)
    cond = Conditions(cache="cold")
    points = []
    for size in (4096, 65536, 1 << 20, 8 << 20):
        t = max(1 / 120, size / 70e6)
        rate = size / t / 1e6
        points.append(RequestPoint(size, "random", rate, measurement([rate], "MB/s", cond)))
    fit = fit_access(points)
    assert fit.iops_4k == pytest.approx(120)
    assert fit.access_time_ms == pytest.approx(1000 / 120, rel=0.02)
    assert fit.bandwidth_mb_per_s == pytest.approx(70, rel=0.10)
