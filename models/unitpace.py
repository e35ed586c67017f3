"""The parallel event loop's speed-up from the pace of its workers' units, like against like
(a worker's first unit pays a fresh process's once-only costs)."""

from __future__ import annotations

from probes.readtests.results import ParallelPoint


def measured_speedup(one: ParallelPoint, pp: ParallelPoint) -> float | None:
    """The parallel loop's speed-up of ``pp``'s workers over ``one``'s single worker: from the
    pace of their units where recorded (:func:`unit_ratio`), else the ratio of the runs'
    rates (``None`` where a rate is missing)."""
    paced = unit_ratio(one, pp, busy_workers(pp))
    if paced is not None:
        return paced
    if not one.aggregate_mb_per_s or not pp.aggregate_mb_per_s:
        return None
    return pp.aggregate_mb_per_s / one.aggregate_mb_per_s


def busy_workers(pp: ParallelPoint) -> int:
    """The run's workers that had a unit to read (no more than its units)."""
    return min(pp.workers, pp.units) if pp.units > 0 else pp.workers


def unit_ratio(one: ParallelPoint, pp: ParallelPoint, busy: int) -> float | None:
    """The k workers' speed-up over one from the pace of their units, like against like: the
    units after each worker's first where both runs have them, else the first units (a
    worker's first unit pays a fresh process's once-only costs: a run of one unit per worker
    against one of two units for its one worker read as a loss of 10-45% on 2 cores, where
    jobs of many files scaled 1.9x).  ``busy`` workers at ``1 / slowdown`` of the one's pace
    each, whatever the balance of the units (the model has that term of its own).  ``None``
    where the paces were not recorded."""
    for a, b in ((one.later_s_per_mb, pp.later_s_per_mb),
                 (one.first_s_per_mb, pp.first_s_per_mb)):
        if a and b and a > 0 and b > 0:
            return busy * a / b
    return None


__all__ = ["busy_workers", "measured_speedup", "unit_ratio"]
