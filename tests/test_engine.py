"""One engine (issue 58): the verdict, the scaling and the model check come from the program's
reader replayed; intervals from the read tests' own spreads; the rate model is a labelled
fallback."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from hep_advisor.models.inputspread import FLOOR, TYPICAL, input_spread
from hep_advisor.models.physics import Cores
from hep_advisor.models.replay.engine import (
    ReplayedJob,
    baseline_spread,
    curve,
    on_storage,
    self_checks,
)
from hep_advisor.models.replay.workers import SharedJob
from hep_advisor.probes.readtests.results import (
    Calibration,
    Conditions,
    Measurement,
    ParallelPoint,
    RawRead,
    RequestPoint,
)

TWO = Cores(2)


def _rj(io: float = 4.0, opens: float = 1.0, dec: float = 2.0, proc: float = 3.0,
        limit: str = "additive", files: int = 4, measured: float | None = None
        ) -> ReplayedJob:
    job = SharedJob(io_s=io, cpu_s=opens + dec + proc, limit=limit, files=files,
                    open_s=opens / files)
    return ReplayedJob(job=job, open_s=opens, decompress_s=dec, compressed_mb=100.0,
                       entries=1e5, measured_s=measured)


def test_on_a_disk_with_one_worker_each_share_is_its_part_of_the_time() -> None:
    shares = _rj().shares(1, 1.0, TWO)
    assert shares == pytest.approx({"storage": 0.4, "per-file overhead": 0.1,
                                    "decompression": 0.2, "processing": 0.3})


def test_on_a_rate_limiter_the_part_that_binds_takes_the_share() -> None:
    cpu_bound = _rj(io=4.0, limit="max").shares(1, 1.0, TWO)  # CPU 6 s > device 4 s
    assert cpu_bound["storage"] == pytest.approx(0.0)
    assert sum(cpu_bound.values()) == pytest.approx(1.0)
    io_bound = _rj(io=9.0, limit="max").shares(1, 1.0, TWO)
    assert io_bound["storage"] == pytest.approx(1.0)


def test_workers_sharing_a_disk_move_the_share_to_the_storage() -> None:
    rj = _rj(io=3.0)
    assert rj.shares(2, 1.0, TWO)["storage"] > rj.shares(1, 1.0, TWO)["storage"]


def test_the_curve_is_the_job_over_workers_with_the_rate_nows_spread() -> None:
    rj = _rj(io=1.0)
    spread = baseline_spread(10.0, 10.0, None)  # measured once: the assumed run spread
    pts = curve(rj, [1, 2], (1.0, 0.8, 1.0), TWO, (1.0, 1.0, 1.0), spread)
    one, two = pts
    assert one.mb_per_s == pytest.approx(100.0 / 7.0) and one.speedup == 1.0  # 1+1+2+3 s
    assert one.low < one.mb_per_s < one.high
    assert math.log(one.high / one.mb_per_s) == pytest.approx(1.6448536 * spread.sd)
    assert two.speedup > 1.5 and two.speedup_low < two.speedup <= two.speedup_high
    assert two.mb_per_s == pytest.approx(100.0 / two.seconds)


def test_the_rate_nows_spread_reaches_the_measured_pass() -> None:
    s = baseline_spread(10.0, 13.0, 0.05)
    assert s.source == "measured"
    assert math.exp(1.6448536 * s.sd) >= 1.3  # the interval reaches the measurement
    assert baseline_spread(10.0, None, None).source == "assumed"


def test_other_storage_rescales_the_transfer_and_the_access_times() -> None:
    rj = _rj(io=4.0)
    # 4 s = 100 seeks x 10 ms + 3 s of transfer at 100 MB/s
    nvme = on_storage(rj, 1000.0, 0.1, 1, "single", 100.0, 10.0, 100)
    assert nvme.job.io_s == pytest.approx(100 * 0.1e-3 + 0.3)
    raid0 = on_storage(rj, 100.0, 10.0, 4, "raid0", 100.0, 10.0, 100)
    assert raid0.job.io_s == pytest.approx(1.0 + 3.0 / 4) and raid0.job.devices == 1.0
    separate = on_storage(rj, 100.0, 10.0, 4, "separate", 100.0, 10.0, 100)
    assert separate.job.io_s == pytest.approx(4.0) and separate.job.devices == 4.0
    assert separate.seconds(4, 1.0, Cores(4)) < rj.seconds(4, 1.0, Cores(4))


def _m(samples: tuple[float, ...], cache: str = "warm") -> Measurement:
    med = sorted(samples)[len(samples) // 2]
    q = sorted(samples)
    spread = (q[-1] - q[0]) / med / 2 if len(q) >= 2 else None
    return Measurement("MB/s", samples, med, spread, Conditions(cache))  # type: ignore[arg-type]


def test_the_self_check_replays_the_cold_pass_and_the_parallel_loop_up_to_the_cores() -> None:
    rj = _rj(io=0.0, opens=0.0, dec=0.0, proc=10.0, files=4, measured=12.5)
    par = (ParallelPoint(1, 10.0, 1.0, 1.0, 4, _m((10.0,))),
           ParallelPoint(2, 19.0, 1.0, 1.0, 4, _m((19.0,))),
           ParallelPoint(4, 12.0, 1.0, 1.0, 4, _m((12.0,))))
    checks = self_checks(rj, 10.0, _m((8.0, 8.1, 7.9), "cold"), par, 1.0, TWO)
    assert [c.test for c in checks] == ["replay, event loop, cold",
                                        "replay, parallel event loop 2"]  # not 4 > 2 cores
    cold, two = checks
    assert cold.ratio == pytest.approx(12.5 / 10.0) and not cold.ok  # 25% off
    assert two.predicted == pytest.approx(20.0) and two.ok


def _cal(raw: Measurement | None, small: tuple[float, ...] | None,
         loop: Measurement | None) -> Calibration:
    rr = RawRead(cold_mb_per_s=100.0, warm_mb_per_s=None, iops_4k=None, access_time_ms=5.0,
                 bandwidth_mb_per_s=100.0, cold=raw, warm=None) if raw is not None else None
    sweep = () if small is None else (
        RequestPoint(4096, "random", 1.0, _m(small, "cold")),)
    cal = Calibration(budget_s=10.0, elapsed_s=9.0, partial=False, engine="uproot",
                      raw_read=rr, request_sweep=sweep, concurrency=(), open_overhead_s=None,
                      decompression=(), event_loop=None, memory=None)
    if loop is not None:
        from hep_advisor.probes.readtests.results import EventLoop

        cal = replace(cal, event_loop=EventLoop(
            engine="uproot", branches=1, events_per_s=1.0, compressed_mb_per_s=1.0,
            uncompressed_mb_per_s=1.0, cold=None, warm=loop))
    return cal


def test_the_inputs_spreads_are_the_read_tests_own_else_their_kinds() -> None:
    assert input_spread(None) == input_spread(_cal(None, None, None))
    none = input_spread(None)
    assert (none.bandwidth, none.access, none.cpu) == (TYPICAL["bandwidth"], TYPICAL["access"],
                                                       TYPICAL["cpu"])
    assert not none.measured and "assumed" in none.describe()
    got = input_spread(_cal(_m((100.0, 90.0, 110.0), "cold"), (1.0, 1.2, 0.8),
                            _m((10.0, 10.0, 10.0))))
    assert got.measured == {"bandwidth", "access", "cpu"}
    assert got.bandwidth == pytest.approx(0.1 / 1.349)
    assert got.access == pytest.approx(0.2 / 1.349)
    assert got.cpu == FLOOR  # three equal samples: the floor, not 0
    # too few samples: the kind's typical spread
    assert input_spread(_cal(_m((100.0,), "cold"), None, None)).bandwidth == TYPICAL["bandwidth"]


def test_the_advice_states_its_times_with_the_replay_and_labels_the_fallback(
        tiny_demo: Path) -> None:
    from report_helpers import advise_stored
    from test_advice_golden import CASES

    path, rel = CASES["small_reader"]
    a = advise_stored(path, rel, tiny_demo, "x", use_reader=True)
    assert a.model is not None and a.model.engine == "replay" and a.verdict is not None
    rb = a.reader_baseline
    assert rb is not None
    # the rate now is the reader's replayed pass, the shares add up, the curve starts there
    assert a.verdict.mb_per_s == pytest.approx(rb.compressed_mb_per_s, rel=1e-6)
    assert sum(s.share for s in a.verdict.shares) == pytest.approx(1.0, abs=0.01)
    one = next(p for p in a.model.predictions if p.workers == 1)
    assert one.aggregate_mb_per_s == pytest.approx(a.verdict.mb_per_s)
    assert any(c.test == "replay, event loop, cold" for c in a.model.self_check)
    assert all(c.test.startswith("replay") for c in a.model.self_check)
    assert a.model.rate_model_check  # the rate model's points kept apart
    # without basket maps the replay cannot run: the rate model, said so
    fb = advise_stored(path, rel, tiny_demo, "x", use_reader=True, basket_maps=())
    assert fb.model is not None and fb.model.engine == "rate model"
    assert fb.model.engine_note and "no basket map" in fb.model.engine_note


def test_on_a_rate_limiter_one_process_takes_the_paced_replays_time() -> None:
    from hep_advisor.models.replay.workers import hidden_share, paced

    # the paced replay took 5 s of a 4 s device and 2 s CPU: half the CPU hid
    assert hidden_share(4.0, 2.0, 5.0) == pytest.approx(0.5)
    assert hidden_share(4.0, 2.0, 4.0) == 1.0 and hidden_share(4.0, 2.0, 7.0) == 0.0
    # longer than the two added (reads that waited for the throttle's next slice): the
    # excess is the device's, and one process takes the paced replay's time
    for total in (4.5, 6.0, 7.0, 30.0):
        job = paced(SharedJob(io_s=4.0, cpu_s=0.2, limit="max", files=4), total)
        assert job.one() == pytest.approx(total)
    late = paced(SharedJob(io_s=4.0, cpu_s=0.2, limit="max", files=4), 30.0)
    assert late.io_s == pytest.approx(29.8) and late.device_s(2) == pytest.approx(29.8)
    disk = SharedJob(io_s=4.0, cpu_s=2.0, files=4)
    assert paced(disk, 9.0) is disk  # a disk's two add: as it is
    job = SharedJob(io_s=4.0, cpu_s=2.0, limit="max", files=8, hidden=0.5)
    assert job.one() == pytest.approx(5.0)
    # more processes: the device's time is the floor, the CPU's part shrinks
    assert job.seconds(2, 1.0, TWO) == pytest.approx(4.0 + 0.5 * 1.0)
    assert job.seconds(2, 1.0, TWO) > job.device_s(2)


def test_the_whole_parallel_runs_give_an_efficiency_first_units_and_all() -> None:
    from hep_advisor.models.unitpace import whole_run_efficiency

    par = (ParallelPoint(1, 10.0, 1.0, 1.0, 4, _m((10.0,))),
           ParallelPoint(2, 16.0, 1.0, 1.0, 4, _m((16.0,))),
           ParallelPoint(4, 12.0, 1.0, 1.0, 4, _m((12.0,))))  # past 2 cores: not counted
    assert whole_run_efficiency(par, TWO) == pytest.approx(0.6)
    assert whole_run_efficiency(par[1:], TWO) is None  # no single worker to compare


def test_what_a_run_pays_once_is_not_divided_by_the_workers() -> None:
    plain = SharedJob(io_s=0.0, cpu_s=4.0, files=4)
    once = replace(plain, once_s=2.0)
    assert once.seconds(1, 1.0, TWO) == pytest.approx(6.0)
    assert once.seconds(2, 1.0, TWO) == pytest.approx(2.0 + 2.0)  # 4 s of work on 2 cores
    assert plain.seconds(1, 1.0, TWO) / plain.seconds(2, 1.0, TWO) == pytest.approx(2.0)


def test_what_a_run_pays_once_is_processing_not_per_file_overhead() -> None:
    job = SharedJob(io_s=1.0, cpu_s=2.0, files=4, open_s=0.25, once_s=3.0)
    rj = ReplayedJob(job=job, open_s=1.0, decompress_s=0.5, compressed_mb=10.0, entries=1e4)
    assert rj.process_s == pytest.approx(3.5)  # 0.5 s of the loop and the 3 s set-up
    shares = rj.shares(1, 1.0, TWO)
    assert shares["per-file overhead"] == pytest.approx(1.0 / 6.0)
    assert shares["processing"] == pytest.approx(3.5 / 6.0)


def test_a_layout_replay_pays_the_run_s_set_up_once(flat_file: Path) -> None:
    from hep_advisor.models.replay import LocalDevice
    from hep_advisor.models.replay.cpucosts import CpuCosts
    from hep_advisor.models.replay.predict import Reader, layout_time
    from hep_advisor.probes.basketmap import read_basket_map

    m = read_basket_map(str(flat_file), "t")
    dev = LocalDevice(mb_per_s=100.0, access_s=0.001)
    costs = CpuCosts(open_s=0.01, decompress_mb_per_s=100.0,
                     variants=(CpuCosts(open_s=0.02, decompress_mb_per_s=50.0),))
    plain = layout_time([m], dev, costs)
    once = layout_time([m], dev, costs.with_once(1.5))
    assert once.cpu_s - plain.cpu_s == pytest.approx(1.5)
    assert [v.once_s for v in costs.with_once(1.5).variants] == [1.5]
    ge = Reader(engine="root")
    root = layout_time([m], dev, costs.with_once(1.5), reader=ge)
    assert root.cpu_s - layout_time([m], dev, costs, reader=ge).cpu_s == pytest.approx(1.5)


def test_a_paced_replay_shorter_than_the_device_s_own_is_the_device_s_time() -> None:
    from hep_advisor.models.replay.workers import paced

    job = SharedJob(io_s=174.0, cpu_s=0.9, limit="max")
    shorter = paced(job, 113.0)
    assert shorter.seconds(1, 1.0, TWO) == pytest.approx(113.0)
    longer = paced(job, 180.0)  # the excess is the device's, as before
    assert longer.seconds(1, 1.0, TWO) == pytest.approx(180.0)
    assert paced(replace(job, limit="additive"), 113.0) == replace(job, limit="additive")
