"""The machine's run-to-run spread (models.runspread) and the local recommendations' intervals
widened by it (hep_advisor.rules.runspread), on the fixture calibration and synthetic
samples."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from test_replay_advice import interleaved, slow_disk_context

from hep_advisor.models.runspread import cpu_run_spread, ratio_sd, robust_sd, widened
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.rules import Context, recommend
from hep_advisor.rules.runspread import ROW, cpu_share


def _with_decompression(cal: Calibration, *sample_sets: tuple[float, ...]) -> Calibration:
    assert cal.decompression, "the fixture calibration has a decompression point"
    d0 = cal.decompression[0]
    points = tuple(replace(d0, measurement=replace(d0.measurement, samples=s))
                   for s in sample_sets)
    return replace(cal, decompression=points, unpacking=None, key_cost=None, basket_cost=None,
                   event_loop=None)


def _fixture_calibration() -> Calibration:
    from tui_helpers import fixture_advice

    cal = fixture_advice().calibration
    assert cal is not None
    return cal


def test_the_spread_pools_repeated_cpu_measurements() -> None:
    cal = _with_decompression(_fixture_calibration(), (100.0, 110.0, 90.0), (50.0, 50.0, 50.0),
                              (10.0, 20.0))  # the last: too few samples to count
    s = cpu_run_spread(cal)
    assert s is not None and s.measurements == 2 and s.samples == 6 and s.loop_sd is None
    groups = [[math.log(x) for x in g] for g in ((100.0, 110.0, 90.0), (50.0, 50.0, 50.0))]
    assert s.sd == pytest.approx(robust_sd(groups)) and s.sd == s.kernel_sd
    steady = _with_decompression(cal, (50.0, 50.0, 50.0))
    assert cpu_run_spread(steady) is not None and cpu_run_spread(steady).sd == 0.0  # type: ignore[union-attr]
    assert cpu_run_spread(_with_decompression(cal, (1.0, 2.0))) is None
    assert cpu_run_spread(None) is None


def test_the_robust_spread_is_the_median_distance_over_its_normal_scale() -> None:
    groups = [[0.0, 0.1, -0.1, 0.3], [1.0, 1.02, 0.98]]
    # distances from each group's median (0.05; 1.0): 0.05 0.05 0.15 0.25 | 0.0 0.02 0.02
    dist = sorted([0.05, 0.05, 0.15, 0.25, 0.0, 0.02, 0.02])
    rng = np.random.default_rng(7)
    sims = [np.median(np.concatenate([np.abs(x - np.median(x)) for x in
                                      (rng.standard_normal(4), rng.standard_normal(3))]))
            for _ in range(4000)]
    expected = dist[3] / float(np.mean(sims))
    assert robust_sd(groups) == pytest.approx(expected, rel=0.05)  # another seed's simulation
    assert robust_sd([[1.0, 2.0]]) is None and robust_sd([]) is None
    # normal scatter: it estimates sigma
    big = [list(0.05 * rng.standard_normal(5)) for _ in range(400)]
    assert robust_sd(big) == pytest.approx(0.05, rel=0.1)


def test_one_slow_sample_does_not_make_a_steady_machine_noisy() -> None:
    # a NanoAOD-like file's unpacking test on a quiet machine: one 30 ms sample at a sixth of
    # the others' rate; the analysis' own passes scattered by 3%
    cal = _with_decompression(_fixture_calibration(), (94.7, 16.3, 96.5, 94.2, 92.7),
                              (141.5, 137.7, 127.3, 133.7), (261.9, 269.3, 270.1))
    s = cpu_run_spread(cal)
    assert s is not None and s.sd < 0.06
    logs = [math.log(x) for x in (94.7, 16.3, 96.5, 94.2, 92.7)]
    mean = sum(logs) / 5
    assert math.sqrt(sum((x - mean) ** 2 for x in logs) / 4) > 0.7  # the standard deviation


def test_the_warm_loop_s_own_spread_is_a_floor() -> None:
    base = _with_decompression(_fixture_calibration(), (175.9, 176.4, 177.2),
                               (2545.2, 2579.8, 2541.0))
    assert base.event_loop is None
    el = _fixture_calibration().event_loop
    assert el is not None and el.warm is not None
    loop = (87743.3, 101030.6, 99316.8, 124436.7, 127263.8, 106292.6, 113571.4)
    cal = replace(base, event_loop=replace(el, warm=replace(el.warm, samples=loop)))
    alone, with_loop = cpu_run_spread(base), cpu_run_spread(cal)
    assert alone is not None and with_loop is not None
    assert with_loop.loop_sd == pytest.approx(robust_sd([[math.log(x) for x in loop]]))
    assert with_loop.kernel_sd == pytest.approx(alone.sd)
    assert with_loop.loop_sd is not None and with_loop.sd == with_loop.loop_sd > 5 * alone.sd
    assert "event loop (warm)" in with_loop.names and with_loop.measurements == 3


def test_a_ratio_of_two_runs_scatters_by_the_cpu_share() -> None:
    cal = _with_decompression(_fixture_calibration(), (100.0, 110.0, 90.0))
    s = cpu_run_spread(cal)
    assert s is not None
    assert ratio_sd(s, 1.0) == pytest.approx(math.sqrt(2) * s.sd)
    assert ratio_sd(s, 0.25) == pytest.approx(ratio_sd(s, 1.0) / 4)
    assert ratio_sd(s, 0.0) == 0.0 and ratio_sd(s, 3.0) == ratio_sd(s, 1.0)
    # a change that removes I/O: the run after keeps the CPU time, so it is mostly CPU
    assert ratio_sd(s, 0.25, 2.0) == pytest.approx(math.hypot(0.25, 0.5) * s.sd)
    assert ratio_sd(s, 0.25, 8.0) == pytest.approx(math.hypot(0.25, 1.0) * s.sd)
    assert ratio_sd(s, 0.5, 0.5) == pytest.approx(math.hypot(0.5, 0.25) * s.sd)


def test_widening_adds_in_quadrature_on_each_side() -> None:
    lo, hi = widened(2.0, 1.5, 3.0, 0.1, 1.645)
    assert lo == pytest.approx(2.0 * math.exp(-math.hypot(math.log(2 / 1.5), 0.1645)))
    assert hi == pytest.approx(2.0 * math.exp(math.hypot(math.log(1.5), 0.1645)))
    assert widened(2.0, 1.5, 3.0, 0.0, 1.645) == (1.5, 3.0)
    lo, hi = widened(1.2, 1.2, 1.2, 0.05, 2.0)  # no interval of its own: the spread alone
    assert lo == pytest.approx(1.2 * math.exp(-0.1)) and hi == pytest.approx(1.2 * math.exp(0.1))


def _context(cal_change: Callable[[Calibration], Calibration]) -> Context:
    maps = tuple(interleaved(f"f{i}") for i in range(4))
    _, ctx = slow_disk_context(maps)
    assert ctx.calibration is not None
    return replace(ctx, calibration=cal_change(ctx.calibration))


def test_every_local_recommendation_carries_the_spread_and_holds_the_models_interval() -> None:
    noisy = _context(lambda c: _with_decompression(c, (100.0, 130.0, 80.0, 95.0)))
    steady = _context(lambda c: _with_decompression(c, (100.0, 100.0, 100.0, 100.0)))
    wide, narrow = recommend(noisy), recommend(steady)
    assert wide and [r.code for r in wide] == [r.code for r in narrow]
    share, _ = cpu_share(noisy)
    for w, n in zip(wide, narrow, strict=True):
        row = next(e for e in w.evidence if e.name == ROW)
        assert row.source == "measured" and isinstance(row.value, float)
        assert w.predicted_speedup == n.predicted_speedup
        assert w.speedup_low <= n.speedup_low and w.speedup_high >= n.speedup_high
        if share > 0.05:  # a CPU share to scatter: strictly wider
            assert w.speedup_high / w.speedup_low > n.speedup_high / n.speedup_low
        for wo, no in zip(w.options, n.options, strict=True):
            assert wo.speedup_low <= no.speedup_low and wo.speedup_high >= no.speedup_high


def test_without_repeated_cpu_measurements_the_row_says_so() -> None:
    bare = _context(lambda c: _with_decompression(c, (100.0,)))
    recs = recommend(bare)
    assert recs
    for r in recs:
        row = next(e for e in r.evidence if e.name == ROW)
        assert row.source == "assumed" and row.value == "not measured"


def test_a_warm_loop_of_two_samples_gives_its_range() -> None:
    base = _with_decompression(_fixture_calibration(), (175.9, 176.4, 177.2))
    el = _fixture_calibration().event_loop
    assert el is not None and el.warm is not None
    cal = replace(base, event_loop=replace(el, warm=replace(el.warm, samples=(24782.7, 19278.0))))
    s = cpu_run_spread(cal)
    assert s is not None and s.loop_sd is not None
    assert s.loop_sd == pytest.approx(abs(math.log(24782.7 / 19278.0)) / 1.128)
    assert s.sd == s.loop_sd and "event loop (warm)" in s.names and s.samples == 5
