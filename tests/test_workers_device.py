"""W001 where the processes share the device (issue 11): with the program's reader known, the
speed-up of n processes is that reader's replayed pass split over processes that share the
device (``hep_advisor.models.replay.workers``).  A device-bound job's gain is capped near the whole
job's time over the device's; a CPU-bound one keeps the gain of its cores.  Tiny synthetic basket
maps on the fixture calibration (see tests/test_replay_advice.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import pairwise

import pytest
from test_replay_advice import interleaved, slow_disk_context

from hep_advisor.models.physics import Cores
from hep_advisor.models.replay.workers import SharedJob, overlap, splits, workers_gain
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.rules.context import Context
from hep_advisor.rules.engine import efficiency
from hep_advisor.rules.workers import _shared, workers_rule

TWO = Cores(2)
ASSUMED = (0.65, 0.3, 1.0)


@pytest.mark.parametrize("limit", ["additive", "max"])
def test_a_device_bound_job_gains_no_more_than_its_device_allows(limit: str) -> None:
    job = SharedJob(io_s=10.0, cpu_s=1.0, limit=limit, files=8)
    cap = job.one() / job.io_s  # the whole job over the device's time for its reads
    for n in (2, 4, 8):
        g = workers_gain(job, n, ASSUMED, Cores(8))
        assert 1.0 <= g.speedup <= cap + 1e-9
        assert g.bound == "device" and g.device_s == pytest.approx(10.0)
        assert g.speedup == pytest.approx(cap, rel=0.1)  # near the cap: the device is busy


def test_a_cpu_bound_job_keeps_the_gain_of_its_cores() -> None:
    job = SharedJob(io_s=0.05, cpu_s=10.0, files=8)
    g = workers_gain(job, 2, ASSUMED, TWO)
    assert g.speedup == pytest.approx(1.65, rel=0.02) and g.bound == "cpu"
    # the interval spans the assumed efficiency's whole plausible range, no narrower
    assert g.low <= 1.3 + 0.01 and g.high >= 1.99


def test_more_processes_than_cores_cost_the_cpu_work() -> None:
    job = SharedJob(io_s=0.0, cpu_s=8.0, files=12)  # 2, 3 or 4 processes share it evenly
    two, four = job.seconds(2, 1.0, TWO), job.seconds(4, 1.0, TWO, oversubscribed=0.8)
    assert two == pytest.approx(4.0) and four == pytest.approx(4.0 / 0.8)
    assert job.seconds(3, 1.0, TWO, 0.8) == pytest.approx(4.0 / 0.9)  # linearly between
    assert job.seconds(4, 1.0, TWO) == pytest.approx(two)  # the default: no loss
    # the interval spans the range given, the point is the central value's
    g = workers_gain(job, 4, (1.0, 1.0, 1.0), TWO, oversubscribed=(0.85, 0.7, 1.0))
    assert g.speedup == pytest.approx(2 * 0.85)
    assert g.low == pytest.approx(2 * 0.7) and g.high == pytest.approx(2.0)


def test_the_device_floor_holds_with_perfect_scaling() -> None:
    """Half the time on the device: at most 2x, however many processes and cores."""
    job = SharedJob(io_s=5.0, cpu_s=5.0, files=64)
    gains = [job.one() / job.seconds(n, 1.0, Cores(64)) for n in (2, 4, 16, 64)]
    assert all(a <= b + 1e-12 for a, b in pairwise(gains))
    assert gains[-1] <= 2.0 and gains[-1] > 1.9
    limiter = replace(job, limit="max")
    assert limiter.one() == 5.0 and limiter.seconds(16, 1.0, Cores(64)) == 5.0


def test_interleaved_streams_seek_on_a_disk() -> None:
    job = SharedJob(io_s=4.0, cpu_s=4.0, interleave_s=2.0, files=2)
    assert job.device_s(1) == 4.0 and job.device_s(2) == 6.0
    assert job.seconds(2, 1.0, TWO) > replace(job, interleave_s=0.0).seconds(2, 1.0, TWO)


def test_work_in_few_files_is_shared_unevenly() -> None:
    job = SharedJob(io_s=0.0, cpu_s=6.0, files=3)
    assert job.parallelism(2) == 1.5  # 2 files on one process, 1 on the other
    assert job.one() / job.seconds(2, 1.0, TWO) == pytest.approx(1.5)
    one_file = SharedJob(io_s=0.0, cpu_s=6.0, files=1, clusters=4, open_s=0.5)
    assert one_file.parallelism(2) == 2.0  # entry ranges on cluster boundaries
    # the second process opens the file too
    assert one_file.seconds(2, 1.0, TWO) == pytest.approx((6.0 + 0.5) / 2)


def test_a_measured_pass_picks_the_form_and_widens_the_interval() -> None:
    job = SharedJob(io_s=5.0, cpu_s=5.0, limit="max", files=10)
    waits, why = overlap(job, 10.4)  # nearer io + cpu than max(io, cpu)
    assert waits.limit == "additive" and "the reads wait" in why
    assert overlap(job, 5.3)[0].limit == "max" and overlap(job, None)[0] is job
    _, cases = splits(replace(job, limit="additive"), 14.0)
    labels = [c for c, _ in cases]
    assert labels == ["replayed", "gap on the device", "gap on the CPU"]
    g = workers_gain(job, 2, ASSUMED, TWO, measured_s=14.0)
    gains = [x for _, x in g.corners]
    # each input alone (the efficiency, the split of the time), the log shifts in quadrature:
    # wider than any one input's, narrower than all corners at once
    groups = [[x for c, x in g.corners if c.startswith("efficiency")],
              [x for c, x in g.corners if not c.startswith(("efficiency", "oversubscribed"))]]
    s = g.speedup
    up = math.sqrt(sum(max(math.log(max(x) / s), 0.0) ** 2 for x in groups))
    down = math.sqrt(sum(max(math.log(s / min(x)), 0.0) ** 2 for x in groups))
    assert g.low == pytest.approx(s * math.exp(-down)) and g.low <= min([s, *gains])
    assert g.high == pytest.approx(s * math.exp(up)) and g.high >= max([s, *gains])
    # without a measured pass: each term taken SPLIT_FACTOR larger and smaller (assumed)
    how, cases = splits(job, None)
    assert "assumed" in how and len(cases) == 3


def _contexts(raw_mb_per_s: float, access_ms: float) -> tuple[Context, Context]:
    maps = tuple(interleaved(f"f{i}", size=3000) for i in range(4))
    a, ctx = slow_disk_context(maps)
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    assert ctx.calibration is not None and ctx.calibration.raw_read is not None
    raw = replace(ctx.calibration.raw_read, cold_mb_per_s=raw_mb_per_s,
                  access_time_ms=access_ms)
    ctx = replace(ctx, calibration=replace(ctx.calibration, raw_read=raw))
    # a summary whose rate grows with the workers: the rate model's knee above 1
    summary = replace(ctx.summary, predictions=tuple(
        replace(p, aggregate_mb_per_s=10.0 * min(p.workers, 2))
        for p in ctx.summary.predictions))
    ctx = replace(ctx, summary=summary)
    return ctx, replace(ctx, reader=parse_reader("uproot.iterate"))


def test_w001_with_a_reader_on_a_slow_device_is_capped_by_the_device() -> None:
    plain, ctx = _contexts(0.5, 200.0)  # a very slow device: the reads dominate
    shared = _shared(ctx)
    assert shared is not None
    job, _ = shared
    assert job.io_s > 5 * job.cpu_s
    cap = job.one() / job.device_s(2)
    before = workers_rule(plain)
    assert before is not None and before.predicted_speedup >= 1.15  # the rate model alone
    rec = workers_rule(ctx)
    # capped: absent (below the minimum gain), or no more than the device allows
    assert rec is None or rec.predicted_speedup <= cap + 1e-3
    if rec is not None:
        names = [e.name for e in rec.evidence]
        assert "device time of the whole job (replayed)" in names
        assert any("share the device" in rec.summary for _ in (0,))


def test_w001_with_a_reader_on_a_fast_device_keeps_the_cpu_gain() -> None:
    plain, ctx = _contexts(5000.0, 0.01)  # the reads cost next to nothing
    shared = _shared(ctx)
    assert shared is not None
    job, base = shared
    assert job.cpu_s > 20 * job.io_s
    rec = workers_rule(ctx)
    assert rec is not None and rec.workers == 2
    g = workers_gain(job, 2, efficiency(ctx), ctx.baseline.cores, base.measured_s)
    assert rec.predicted_speedup == round(g.speedup, 3) > 1.2
    assert (rec.speedup_low, rec.speedup_high) == (round(g.low, 3), round(g.high, 3))
    shown = {e.name: e for e in rec.evidence}
    assert shown["device time of the whole job (replayed)"].source == "derived"
    assert shown["whole job, 1 process / 2 processes"].note.startswith("CPU-bound")
    eff = shown["parallel efficiency range used"]
    if eff.source == "assumed":  # no narrower than the plausible range
        assert eff.value == "0.30–1.00"
    # without the reader: the rate model's scenario, as before
    assert workers_rule(plain) is not None
    assert not any(e.name.startswith("device time") for e in workers_rule(plain).evidence)


def test_a_device_hidden_behind_the_cpu_may_be_as_long_as_the_measured_pass() -> None:
    """Reads that overlap the CPU work: the measured pass bounds the device's time only from
    above, so the interval reaches the device taking the whole pass (no gain left)."""
    job = SharedJob(io_s=4.7, cpu_s=7.5, limit="max", interleave_s=1.0, files=120)
    _, cases = splits(job, 7.6)
    hidden = dict(cases)["gap on the device"]
    assert hidden.io_s == 7.6
    g = workers_gain(job, 2, ASSUMED, TWO, measured_s=7.6)
    assert g.speedup > 1.25 and g.low <= 7.6 / 8.6 + 1e-9
