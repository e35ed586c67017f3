"""How much this machine's CPU time moves from one run to the next, measured by the calibration.

A speed-up the user realises is the ratio of two runs of the analysis: one before the change and
one after.  On a shared or throttling machine the same CPU-bound run takes more or less time from
one minute to the next, so the realised ratio scatters about the predicted one even where the
model is exact.  The scenario intervals (``models.scenarios.prediction``) leave that out by
design: they are ratios of two predictions that share the fitted parameters, so the parameters'
uncertainty cancels where both runs share it, and nothing of the machine's own unsteadiness
remains.

The calibration repeats several pieces of pure CPU work (decompressing the same baskets,
unpacking them into arrays, reading the same basket keys, the warm event loop) and keeps every
sample.  :func:`cpu_run_spread` pools them: one sample's standard deviation of the log of its
rate, over every repeated CPU-bound measurement with at least ``MIN_SAMPLES`` samples, each
weighted by its degrees of freedom.  That is the spread of one run's CPU time over seconds; a
machine whose speed drifts over minutes moves more than this, so it is a lower bound there (the
evidence row says so).  The per-basket test is left out: each of its samples is the difference
of two timed reads, whose spread is the subtraction's, not the machine's (it scattered by 63% on
the demo's LZMA file where the same calibration's decompression scattered by 1-5%).

:func:`ratio_sd` turns it into the spread of a realised speed-up: two runs (before and after),
each scattering by the CPU's share of its time times the CPU spread, independently; a change
that removes I/O leaves a run after that is mostly CPU, and scatters more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from probes.readtests.results import Calibration, Measurement

#: A measurement needs this many samples for its own spread to count.
MIN_SAMPLES = 3


@dataclass(frozen=True)
class RunSpread:
    """One CPU-bound run's spread: ``sd`` (one sigma of the log of its rate), pooled over
    ``measurements`` repeated measurements holding ``samples`` samples in all, named in
    ``names``."""

    sd: float
    measurements: int
    samples: int
    names: tuple[str, ...]


def _cpu_measurements(cal: Calibration) -> Iterable[tuple[str, Measurement]]:
    """The calibration's repeated pure-CPU measurements (the same work timed again and again),
    by name."""
    for d in cal.decompression:
        yield f"decompression ({d.algorithm})", d.measurement
    if cal.unpacking is not None:
        yield "unpacking", cal.unpacking.measurement
    if cal.key_cost is not None:
        yield "basket keys", cal.key_cost.measurement
    if cal.event_loop is not None and cal.event_loop.warm is not None:
        yield "event loop (warm)", cal.event_loop.warm


def cpu_run_spread(cal: Calibration | None) -> RunSpread | None:
    """The pooled spread of the calibration's repeated CPU-bound measurements (see the module
    docstring); ``None`` where none has ``MIN_SAMPLES`` positive samples."""
    if cal is None:
        return None
    ss = 0.0
    dof = 0
    samples = used = 0
    names: list[str] = []
    for name, m in _cpu_measurements(cal):
        logs = [math.log(x) for x in m.samples if x > 0 and math.isfinite(x)]
        if len(logs) < MIN_SAMPLES:
            continue
        mean = sum(logs) / len(logs)
        ss += sum((x - mean) ** 2 for x in logs)
        dof += len(logs) - 1
        samples += len(logs)
        used += 1
        if name not in names:
            names.append(name)
    if dof == 0:
        return None
    return RunSpread(math.sqrt(ss / dof), used, samples, tuple(names))


def ratio_sd(spread: RunSpread, cpu_share: float, speedup: float = 1.0) -> float:
    """One sigma (of the log) of a realised speed-up, the ratio of a run before and a run after
    a change, where the CPU takes ``cpu_share`` of the run before's time and scatters by
    ``spread.sd`` (the rest, I/O on a steady device, is taken as steady).  The run after is
    ``speedup`` times shorter and taken to keep the CPU time (a change that removes I/O), so
    the CPU takes ``min(1, cpu_share * speedup)`` of it; for a change that cuts CPU time too
    that overstates the run after's scatter, never understates it."""
    before = min(1.0, max(0.0, cpu_share))
    after = min(1.0, before * max(0.0, speedup))
    return math.hypot(before, after) * spread.sd


def widened(predicted: float, low: float, high: float, sd: float, z: float
            ) -> tuple[float, float]:
    """``(low, high)`` widened by a run-to-run spread of ``sd`` (log, one sigma) at ``z``
    sigmas, added in quadrature to each side's own log-distance from ``predicted``."""
    if predicted <= 0 or sd <= 0:
        return low, high
    below = math.log(predicted / low) if 0 < low < predicted else 0.0
    above = math.log(high / predicted) if high > predicted else 0.0
    return (predicted * math.exp(-math.hypot(below, z * sd)),
            predicted * math.exp(math.hypot(above, z * sd)))
