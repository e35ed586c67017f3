"""How much this machine's CPU time moves from one run to the next, measured by the calibration.

A speed-up the user realises is the ratio of two runs of the analysis: one before the change and
one after.  On a shared or throttling machine the same CPU-bound run takes more or less time from
one minute to the next, so the realised ratio scatters about the predicted one even where the
model is exact.  The scenario intervals (``hep_advisor.models.scenarios.prediction``) leave that out
by design: they are ratios of two predictions that share the fitted parameters, so the parameters'
uncertainty cancels where both runs share it, and nothing of the machine's own unsteadiness
remains.

The calibration repeats several pieces of pure CPU work (decompressing the same baskets,
unpacking them into arrays, reading the same basket keys, the warm event loop) and keeps every
sample.  :func:`cpu_run_spread` turns them into one run's spread of the log of its CPU rate:

- *robust*: each sample's distance (of its log) from its own measurement's median, pooled over
  the measurements, and the median of those distances, scaled so that it estimates one sigma
  for normal scatter (:func:`robust_sd`: the scale comes from the same statistic on standard
  normal samples of the same shapes, simulated with a fixed seed).  One slow sample does not
  move it: on a quiet machine a NanoAOD-like file's unpacking test held one 30 ms sample at a
  sixth of the others' rate (a pause of about 0.15 s), and a pooled standard deviation then
  said 38% where the analysis' own passes scattered by 3%;
- *the program's own scale*: the pure-CPU kernels (decompression, unpacking, keys) are tight
  loops in compiled code and scatter less than a Python reader does (1-3% against 13% for the
  warm event loop in one calibration, where the analysis' passes scattered by 7%); where the
  warm event loop has ``MIN_SAMPLES`` samples of its own, its spread is a floor (where it
  fitted two only, their range: a long loop often does, and one pair says little, but what it
  says leans wide, not narrow).

That is the spread of one run's CPU time over seconds; a machine whose speed drifts over minutes
moves more than this, so it is a lower bound there (the evidence row says so).  The per-basket
test is left out: each of its samples is the difference of two timed reads, whose spread is the
subtraction's, not the machine's (it scattered by 63% on the demo's LZMA file where the same
calibration's decompression scattered by 1-5%).

:func:`ratio_sd` turns it into the spread of a realised speed-up: two runs (before and after),
each scattering by the CPU's share of its time times the CPU spread, independently; a change
that removes I/O leaves a run after that is mostly CPU, and scatters more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hep_advisor.probes.readtests.results import Calibration, Measurement

#: A measurement needs this many samples for its own spread to count.
MIN_SAMPLES = 3
#: Simulated sets of standard normal samples that scale :func:`robust_sd` (fixed seed).
_SIMULATIONS = 2000
#: The warm event loop's name among the measurements.
LOOP = "event loop (warm)"


@dataclass(frozen=True)
class RunSpread:
    """One CPU-bound run's spread: ``sd`` (one sigma of the log of its rate), the larger of
    ``kernel_sd`` (pooled over the pure-CPU kernels) and ``loop_sd`` (the warm event loop's
    own; ``None`` where it has too few samples), from ``measurements`` repeated measurements
    holding ``samples`` samples in all, named in ``names``."""

    sd: float
    measurements: int
    samples: int
    names: tuple[str, ...]
    kernel_sd: float | None = None
    loop_sd: float | None = None


@lru_cache(maxsize=64)
def _normal_scale(sizes: tuple[int, ...]) -> float:
    """The mean of :func:`_median_distance` over standard normal samples of ``sizes``."""
    rng = np.random.default_rng(12345)
    dist = [np.abs(x - np.median(x, axis=1, keepdims=True))
            for x in (rng.standard_normal((_SIMULATIONS, n)) for n in sizes)]
    return float(np.mean(np.median(np.concatenate(dist, axis=1), axis=1)))


def _median_distance(groups: Sequence[Sequence[float]]) -> float:
    return float(np.median(np.concatenate([np.abs(np.asarray(g) - np.median(g))
                                           for g in groups])))


def robust_sd(groups: Sequence[Sequence[float]]) -> float | None:
    """A robust one-sigma of values scattered about each group's own centre: the median of
    every value's distance from its group's median, over the scale that statistic has for
    standard normal groups of the same sizes (so that it estimates sigma for normal scatter,
    and a minority of outliers barely moves it).  ``None`` without a group of
    ``MIN_SAMPLES``; groups smaller than that are left out."""
    used = [list(g) for g in groups if len(g) >= MIN_SAMPLES]
    if not used:
        return None
    scale = _normal_scale(tuple(sorted(len(g) for g in used)))
    return _median_distance(used) / scale if scale > 0 else None


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
        yield LOOP, cal.event_loop.warm


def cpu_run_spread(cal: Calibration | None) -> RunSpread | None:
    """The spread of one CPU-bound run from the calibration's repeated measurements (see the
    module docstring); ``None`` where none has ``MIN_SAMPLES`` positive samples."""
    if cal is None:
        return None
    kernels: list[list[float]] = []
    loop: list[float] | None = None
    names: list[str] = []
    pair: list[float] | None = None
    for name, m in _cpu_measurements(cal):
        logs = [math.log(x) for x in m.samples if x > 0 and math.isfinite(x)]
        if name == LOOP and len(logs) == 2:
            pair = logs  # a long loop often fits two samples only: their range says enough
        if len(logs) < MIN_SAMPLES:
            continue
        if name == LOOP:
            loop = logs
        else:
            kernels.append(logs)
        if name not in names:
            names.append(name)
    kernel_sd = robust_sd(kernels)
    loop_sd = robust_sd([loop]) if loop is not None else pair_sd(pair)
    known = [x for x in (kernel_sd, loop_sd) if x is not None]
    if not known:
        return None
    if loop is None and pair is not None:
        loop, names = pair, [*names, LOOP]
    return RunSpread(max(known), len(kernels) + (loop is not None),
                     sum(map(len, kernels)) + len(loop or ()), tuple(names), kernel_sd, loop_sd)


def pair_sd(logs: Sequence[float] | None) -> float | None:
    """One sigma from two samples: their distance over 1.128 (the mean range of two normal
    draws, in sigmas); ``None`` without a pair."""
    if logs is None or len(logs) != 2:
        return None
    return abs(logs[0] - logs[1]) / 1.128


#: The replay's own error on held-out data, one sigma of log(realised / predicted): the robust
#: sigma (1.4826 times the median absolute deviation) over the 106 recommendations applied as
#: printed on the four held-out sets of issue 58 (h58-h61: benchmarks/RESULTS.md, "One
#: engine"), measured before this term existed.  The inputs' measured spreads alone had left 24
#: of those 106 realised values outside their intervals (and 8 of 20 on the fifth set, whose
#: points came within 20% in 19 of 20).
REPLAY_ERROR_SD = 0.116
#: Where that figure was measured, in words (the evidence row's note).
REPLAY_ERROR_FROM = ("the robust sigma of log(realised / predicted) over 106 recommendations "
                     "applied as printed on four held-out sets (benchmarks/RESULTS.md, "
                     "issue 58)")


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
