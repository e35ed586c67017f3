"""The parallel event loop's speed-up from the pace of its workers' units, like against like
(a worker's first unit pays a fresh process's once-only costs)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hep_advisor.probes.readtests.results import ParallelPoint

from .physics import Cores
from .pointnoise import run_sd, sigma


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


def efficiency_prior(points: Sequence[ParallelPoint], cores: Cores, noise: float,
                     bounds: tuple[float, float]) -> tuple[float, float, float] | None:
    """The parallel efficiency from the ratio of the parallel loop's runs, measured side by
    side: warm, the same files, CPU-bound, so ``R_k / R_1 = 1 + e (n_k - 1)`` (``n_k``: the
    cores' effective count of the ``k`` workers kept busy, at most the logical cores).  As
    rows alone, the k-worker runs set ``e`` to whatever made the model's one-worker rate meet
    them, and that rate carries every error of the per-file costs: on 120 tiny files the
    model put the one-worker loop at 9.4 MB/s where it measured 7.2, and the fit gave
    e = 0.33 for runs that scaled 1.73x (e = 0.73); two processes of the analysis realised
    1.90x (as rows beside the prior they gave e = 0.50).  The ratio is first divided by the
    balance of ``units`` equal units of work pulled by ``k`` workers,
    ``units / (k ceil(units / k))``.  The estimates of each k are
    combined by their inverse variances (the two runs' standard errors in quadrature), the
    run-to-run spread likewise; ``e`` is held within ``bounds``.  ``(e, sd, run sd
    relative)``; ``None`` where no run beside the single worker's compares."""
    one = _single(points)
    if one is None:
        return None
    s1, r1 = sigma(one.measurement, noise), run_sd(one.measurement, noise)
    found: list[tuple[float, float, float]] = []  # (e, sd, run sd), absolute
    for pp, busy, n in _compared(points, cores):
        assert pp.aggregate_mb_per_s and one.aggregate_mb_per_s
        paced = unit_ratio(one, pp, busy)
        if paced is not None:
            ratio = paced
        else:
            # pull-based over equal units: the last round leaves workers idle (3 units on 2
            # workers: the busier one reads 2, so at most 1.5x), which is not the cores' doing
            units = pp.units if pp.units > 0 else pp.workers
            balance = units / (pp.workers * math.ceil(units / pp.workers))
            ratio = pp.aggregate_mb_per_s / one.aggregate_mb_per_s / balance
        scale = ratio / (n - 1.0)
        found.append(((ratio - 1.0) / (n - 1.0),
                      scale * float(np.hypot(s1, sigma(pp.measurement, noise))),
                      scale * float(np.hypot(r1, run_sd(pp.measurement, noise)))))
    if not found:
        return None
    w = np.array([1.0 / sd**2 for _, sd, _ in found])
    e = float(np.sum(w * [f[0] for f in found]) / np.sum(w))
    sd = float(1.0 / np.sqrt(np.sum(w)))
    run = float(np.sqrt(np.sum(w**2 * np.array([f[2] for f in found]) ** 2)) / np.sum(w))
    lo, hi = bounds
    e = min(max(e, lo), hi)
    return e, sd, run / e


def whole_run_efficiency(points: Sequence[ParallelPoint], cores: Cores) -> float | None:
    """The parallel efficiency from the parallel loop's whole runs: each k-worker run's
    aggregate rate over the one worker's, first units, uneven units and all,
    ``(R_k / R_1 - 1) / (n_k - 1)``, the mean over the runs up to the logical cores; ``None``
    where none compares (the job's own balance of units then counts again: a lower bound
    where the test's units were uneven).  The unit paces of
    :func:`efficiency_prior` leave out what a fresh process pays once; a program's workers pay
    it.  On the issue-58 held-out sets (fast disk, CPU-bound) the two processes of the analysis
    realised 0.80-1.17 of this run's ratio (median 0.96) where the unit paces' efficiency of 1
    said 2.00x and 1.28-1.71x came."""
    one = _single(points)
    if one is None or not one.aggregate_mb_per_s:
        return None
    found = [(pp.aggregate_mb_per_s / one.aggregate_mb_per_s - 1.0) / (n - 1.0)
             for pp, _, n in _compared(points, cores) if pp.aggregate_mb_per_s]
    return float(np.mean(found)) if found else None


def _single(points: Sequence[ParallelPoint]) -> ParallelPoint | None:
    """The parallel loop's one-worker run with a rate, or ``None``."""
    return next((p for p in points if p.workers == 1 and p.aggregate_mb_per_s), None)


def _compared(points: Sequence[ParallelPoint], cores: Cores
              ) -> list[tuple[ParallelPoint, int, float]]:
    """The runs that compare with the one worker's: several busy workers, no more than the
    logical cores, a rate; each with its busy workers and the cores' effective count of them
    (more than one)."""
    logical = cores.cores * max(cores.threads_per_core, 1)
    out = []
    for pp in points:
        busy = busy_workers(pp)
        if pp.workers <= 1 or pp.workers > logical or busy <= 1 or not pp.aggregate_mb_per_s:
            continue
        n = float(cores.effective(np.asarray(float(busy))))
        if n > 1.0:
            out.append((pp, busy, n))
    return out


def oversubscription_prior(points: Sequence[ParallelPoint], cores: Cores, efficiency: float,
                           noise: float, bounds: tuple[float, float]
                           ) -> tuple[float, float, float] | None:
    """The ``oversubscribed`` parameter (the CPU work's rate left at twice the logical cores'
    workers) from the parallel loop's run beyond the logical cores against its run at them,
    side by side over the same units (``ParallelPoint.speedup_over_cores``): the model's
    ``R_over / R_k = n(over) s / n(k)``, where ``n`` is ``1 + e (n_cores - 1)`` of each run's
    busy workers and ``s`` the share left at ``over`` busy workers, ``1 - (1 - eta) x`` with
    ``x = (over - logical) / logical`` (at most 1).  ``(eta, sd, run sd relative)``, eta held
    within ``bounds``; ``None`` where no such pair of runs was measured."""
    logical = cores.cores * max(cores.threads_per_core, 1)
    at = [p for p in points if 1 < p.workers <= logical and p.aggregate_mb_per_s]
    beyond = [p for p in points if p.workers > logical and p.speedup_over_cores]
    if not at or not beyond:
        return None
    k = max(at, key=lambda p: p.workers)
    over = max(beyond, key=lambda p: p.workers)
    busy_k, busy_o = busy_workers(k), busy_workers(over)
    x = min(max((busy_o - logical) / logical, 0.0), 1.0)
    if x <= 0 or over.speedup_over_cores is None:
        return None
    n_k, n_o = (1.0 + efficiency * (float(cores.effective(np.asarray(float(b)))) - 1.0)
                for b in (busy_k, busy_o))
    share = over.speedup_over_cores * n_k / n_o
    lo, hi = bounds
    eta = min(max(1.0 - (1.0 - share) / x, lo), hi)
    sd = share / x * float(np.hypot(sigma(k.measurement, noise), sigma(over.measurement, noise)))
    run = share / x * float(np.hypot(run_sd(k.measurement, noise),
                                     run_sd(over.measurement, noise)))
    return eta, sd, run / eta


__all__ = ["busy_workers", "efficiency_prior", "measured_speedup",
           "oversubscription_prior", "unit_ratio", "whole_run_efficiency"]
