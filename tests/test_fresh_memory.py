"""A new process's first writes of its peak memory (the first-touch test and the replay's term
for it), and the parallel efficiency taken from the parallel loop's ratio of rates."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from test_basket_cost import _calibration
from test_codec_replay import NO_IO, flat_file

from hep_advisor.models.calcosts import first_touch_cost, loop_refault, step_touch
from hep_advisor.models.calibration import fit_inputs
from hep_advisor.models.replay.cpucosts import (
    FIRST_TOUCH_S_PER_MB,
    MEMORY_GROWTH,
    MEMORY_GROWTH_RANGE,
    CpuCosts,
)
from hep_advisor.models.replay.predict import Reader, layout_time, reader_change
from hep_advisor.models.unitpace import measured_speedup
from hep_advisor.probes.readtests.firsttouch import measure_first_touch
from hep_advisor.probes.readtests.results import Conditions, FirstTouch, Measurement, ParallelPoint
from hep_advisor.probes.readtests.runner import Session

# -- the test --------------------------------------------------------------------------------


def test_first_touch_is_measured_in_memory_and_leaves_nothing() -> None:
    before = set(os.listdir("/tmp"))
    ft = measure_first_touch(Session(10.0), 0.2)
    assert ft.s_per_mb is not None and ft.s_per_mb > 0
    assert len(ft.measurement.samples) >= 3 and ft.measurement.unit == "s/MB"
    assert set(os.listdir("/tmp")) <= before  # no file written


def test_first_touch_maps_private_memory_as_malloc_does(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Python's ``mmap.mmap(-1, n)`` maps shared memory, whose first touch costs the kernel
    more (0.86 against 0.61 ms per MB here) than the private pages a program's arrays get."""
    import mmap

    from hep_advisor.probes.readtests import firsttouch

    real = mmap.mmap
    flags: list[int | None] = []

    def spy(*args: object, **kw: int) -> mmap.mmap:
        flags.append(kw.get("flags"))
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(firsttouch.mmap, "mmap", spy)
    assert firsttouch.touch_once(1) > 0
    assert flags and flags[0] is not None
    assert flags[0] & mmap.MAP_PRIVATE and not flags[0] & mmap.MAP_SHARED


def test_the_cost_is_the_tests_where_it_ran_and_the_assumption_else() -> None:
    cal, _, _ = _calibration(None)
    assert first_touch_cost(cal)[2] is False and first_touch_cost(cal)[0] == FIRST_TOUCH_S_PER_MB
    m = Measurement("s/MB", (1e-3, 2e-3, 3e-3), 2e-3, 0.5, Conditions("unknown"))
    measured = replace(cal, first_touch=FirstTouch(2e-3, m))
    s, rng, known = first_touch_cost(measured)
    assert known and s == 2e-3 and rng == (1e-3, 3e-3)
    touch, (lo, hi) = step_touch(measured)
    assert touch == pytest.approx(2e-3 * MEMORY_GROWTH)
    assert (lo, hi) == pytest.approx((1e-3 * MEMORY_GROWTH_RANGE[0], 3e-3 * MEMORY_GROWTH_RANGE[1]))


def test_what_the_warm_loop_refaulted_is_not_paid_twice() -> None:
    cal, _, _ = _calibration(None)
    m = Measurement("s/MB", (1e-3, 2e-3, 3e-3), 2e-3, 0.5, Conditions("unknown"))
    measured = replace(cal, first_touch=FirstTouch(2e-3, m))
    assert measured.event_loop is not None and measured.event_loop.engine == "uproot"
    loop = replace(measured.event_loop, refault_per_mb=1.0, step_mb=8.0)
    less = replace(measured, event_loop=loop)
    assert loop_refault(less) == 1.0 and loop_refault(measured) == 0.0
    touch, (lo, hi) = step_touch(less)
    assert touch == pytest.approx(2e-3 * (MEMORY_GROWTH - 1.0))
    assert (lo, hi) == pytest.approx((1e-3 * (MEMORY_GROWTH_RANGE[0] - 1.0),
                                      3e-3 * (MEMORY_GROWTH_RANGE[1] - 1.0)))
    # a loop that refaulted more than a new process grows: nothing left to add, never negative
    more = replace(measured, event_loop=replace(loop, refault_per_mb=9.0))
    assert step_touch(more) == (0.0, (0.0, 0.0))
    # ROOT's engine builds no arrays of a step: its faults say nothing of uproot's
    root = replace(measured, event_loop=replace(loop, engine="root"))
    assert loop_refault(root) == 0.0


# -- the replay's term -----------------------------------------------------------------------


def test_the_replay_pays_the_largest_steps_arrays_once() -> None:
    # 10 branches x 3,000 bytes on disk, twice that uncompressed: 60 kB of arrays per file
    maps = [flat_file(f"f{i}", entries=1000, branches=10, size=3000) for i in range(3)]
    touch = CpuCosts(open_s=0.0, touch_s=0.5)
    free = CpuCosts(open_s=0.0)
    whole = layout_time(maps, NO_IO, touch, reader=Reader(step=10**9))
    assert whole.step_mb == pytest.approx(0.06)  # one file's arrays, not three files'
    assert whole.cpu_s - layout_time(maps, NO_IO, free, reader=Reader(step=10**9)).cpu_s \
        == pytest.approx(0.06 * 0.5)
    quarter = layout_time(maps, NO_IO, touch, reader=Reader(step=250))
    assert quarter.step_mb == pytest.approx(0.015)
    # ROOT's GetEntry loop builds no arrays of a step
    assert layout_time(maps, NO_IO, touch, reader=Reader("root", cache_bytes=0)).step_mb == 0


def test_a_merge_into_larger_steps_pays_more_fresh_memory() -> None:
    small = [flat_file(f"f{i}", entries=1000, branches=10, size=3000) for i in range(4)]
    costs = CpuCosts(open_s=0.01, call_s=0.001, decompress_mb_per_s=100.0)
    plain = reader_change(small, 4, NO_IO, costs, Reader(step=250), Reader(step=10**9))
    touched = reader_change(small, 4, NO_IO, replace(costs, touch_s=1.0, touch_range=(0.5, 2.0)),
                            Reader(step=250), Reader(step=10**9))
    # the larger step writes four times the memory: the change gains less
    assert touched.speedup < plain.speedup
    assert touched.low < touched.speedup < touched.high


# -- the parallel efficiency from the loop's ratio --------------------------------------------


def _with_parallel(rates: dict[int, float], units: int = 8):  # type: ignore[no-untyped-def]
    cal, dataset, site = _calibration(None)
    points = tuple(ParallelPoint(w, r, 3.0, 1.0, units, Measurement(
        "MB/s", (r * 0.98, r, r * 1.02), r, 0.02, Conditions("warm"))) for w, r in rates.items())
    return replace(cal, parallel_loop=points), dataset, site


def test_the_efficiency_is_the_ratio_of_the_loops_runs() -> None:
    # the site: 4 physical cores, 8 logical; two workers scaled 1.73x
    inputs = fit_inputs(*_with_parallel({1: 7.25, 2: 12.52}))
    e, sd = inputs.priors["parallel_efficiency"]
    assert e == pytest.approx(12.52 / 7.25 - 1.0)
    assert 0 < sd < e
    # the one-worker run stays a row (the per-file costs at a loop's pace), the scaling not
    assert "parallel event loop 1" in inputs.labels
    assert "parallel event loop 2" not in inputs.labels


def test_the_efficiency_combines_the_worker_counts_and_keeps_its_bounds() -> None:
    inputs = fit_inputs(*_with_parallel({1: 10.0, 2: 17.0, 4: 31.0}))
    e, _ = inputs.priors["parallel_efficiency"]
    assert e == pytest.approx(0.7)  # both counts said 0.70
    superlinear = fit_inputs(*_with_parallel({1: 10.0, 2: 23.0}))
    assert superlinear.priors["parallel_efficiency"][0] == 1.0  # held within the fit's bounds
    # one file: the second worker had nothing to do, and nothing is learnt
    idle = fit_inputs(*_with_parallel({1: 10.0, 2: 10.0}, units=1))
    assert "parallel_efficiency" not in idle.priors
    assert "parallel event loop 2" in idle.labels
    # no one-worker run: the rows as before
    alone = fit_inputs(*_with_parallel({2: 17.0}))
    assert "parallel_efficiency" not in alone.priors and "parallel event loop 2" in alone.labels


def test_the_ratio_is_taken_over_the_balance_of_the_units() -> None:
    # 3 equal units on 2 workers: the busier one reads 2, so perfect cores give 1.5x
    inputs = fit_inputs(*_with_parallel({1: 10.0, 2: 15.0}, units=3))
    assert inputs.priors["parallel_efficiency"][0] == pytest.approx(1.0)
    half = fit_inputs(*_with_parallel({1: 10.0, 2: 11.25}, units=3))
    assert half.priors["parallel_efficiency"][0] == pytest.approx(0.5)


def test_workers_beyond_the_cores_measured_side_by_side_set_the_oversubscription() -> None:
    """The loop's run by twice the logical cores' workers against its run at them, over the
    same units: their ratio is what the model's ``oversubscribed`` leaves of the rate, a prior
    in place of the assumed range, and the run beyond the cores is no row of its own."""
    cal, dataset, site = _calibration(None)  # 4 physical cores, 8 logical
    ones = {1: 10.0, 8: 40.0, 16: 36.0}
    points = [ParallelPoint(w, r, 3.0, 1.0, 16, Measurement(
        "MB/s", (r * 0.98, r, r * 1.02), r, 0.02, Conditions("warm")),
        speedup_over_cores=0.9 if w == 16 else None) for w, r in ones.items()]
    inputs = fit_inputs(replace(cal, parallel_loop=tuple(points)), dataset, site)
    eta, sd = inputs.priors["oversubscribed"]
    assert eta == pytest.approx(0.9)
    assert 0 < sd < 0.5
    assert "parallel event loop 16" not in inputs.labels
    # 12 busy workers (12 units): half-way beyond the cores, so 0.9 of the rate there is
    # eta = 0.8 at twice them; more than the cores' rate is held at the bound, 1
    points[2] = replace(points[2], units=12)
    half = fit_inputs(replace(cal, parallel_loop=tuple(points)), dataset, site)
    assert half.priors["oversubscribed"][0] == pytest.approx(0.8)
    points[2] = replace(points[2], units=16, speedup_over_cores=1.2)
    assert fit_inputs(replace(cal, parallel_loop=tuple(points)), dataset,
                      site).priors["oversubscribed"][0] == 1.0
    # not measured: no prior (the assumed range acts), and a run beyond the cores is a row
    points[2] = replace(points[2], speedup_over_cores=None)
    none = fit_inputs(replace(cal, parallel_loop=tuple(points)), dataset, site)
    assert "oversubscribed" not in none.priors and "parallel event loop 16" in none.labels


def _paced(w: int, rate: float, first: float, later: float | None, units: int = 8,
           whole: bool = True) -> ParallelPoint:
    return ParallelPoint(w, rate, 3.0, 1.0, units, Measurement(
        "MB/s", (rate * 0.98, rate, rate * 1.02), rate, 0.02, Conditions("warm")),
        first_s_per_mb=first, later_s_per_mb=later, whole_files=whole)


def test_the_efficiency_compares_the_units_like_against_like() -> None:
    cal, dataset, site = _calibration(None)
    # one worker read 2 files (first 0.19 s/MB, second 0.15); two read one each, both first
    # units at 0.20 s/MB: their runs' rates say 1.62x (e = 0.62), their first units 1.9x
    one = _paced(1, 1 / 0.17, first=0.19, later=0.15, units=2)
    two = _paced(2, 2 / 0.20 * 0.95, first=0.20, later=None, units=2)
    inputs = fit_inputs(replace(cal, parallel_loop=(one, two)), dataset, site)
    assert inputs.priors["parallel_efficiency"][0] == pytest.approx(2 * 0.19 / 0.20 - 1)
    # both runs with later units: those are compared (the first units left out)
    two_later = _paced(2, 9.0, first=0.40, later=0.16, units=8)
    inputs = fit_inputs(replace(cal, parallel_loop=(one, two_later)), dataset, site)
    assert inputs.priors["parallel_efficiency"][0] == pytest.approx(2 * 0.15 / 0.16 - 1)
    assert measured_speedup(one, two_later) == pytest.approx(2 * 0.15 / 0.16)
    # without the paces (an older calibration): the runs' rates, as before
    assert measured_speedup(_paced(1, 10.0, None, None), _paced(2, 17.0, None, None)) \
        == pytest.approx(1.7)


def test_the_one_worker_row_reads_at_the_pace_of_its_later_files() -> None:
    cal, dataset, site = _calibration(None)
    one = _paced(1, 5.0, first=0.30, later=0.16, units=6)
    inputs = fit_inputs(replace(cal, parallel_loop=(one,)), dataset, site)
    i = inputs.labels.index("parallel event loop 1")
    assert inputs.y[i] == pytest.approx(1 / 0.16)  # not the run's 5.0 MB/s
    # packets of entries (a file opened once, its later packets without the open): the run's
    packets = _paced(1, 5.0, first=0.30, later=0.16, units=6, whole=False)
    inputs = fit_inputs(replace(cal, parallel_loop=(packets,)), dataset, site)
    assert inputs.y[inputs.labels.index("parallel event loop 1")] == pytest.approx(5.0)
    # one file only: nothing later, the run's rate
    alone = _paced(1, 5.0, first=0.30, later=None, units=1)
    inputs = fit_inputs(replace(cal, parallel_loop=(alone,)), dataset, site)
    assert inputs.y[inputs.labels.index("parallel event loop 1")] == pytest.approx(5.0)
