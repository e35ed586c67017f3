"""The machine's pace through a calibration: a fixed piece of pure-Python work, timed in the
calibration's own process before each read test and after the last.

A shared machine is not equally fast all the time: here, the same pure-Python loop took
0.43-0.88 s over one afternoon, and a calibration made in a slow stretch measured a two-worker
loop at 7.3 MB/s where the others measured 11.4-12.1 (its predictions then missed by 35-45%).
The read tests cannot tell such a stretch from the data's own cost, so the calibration
times the same small work at each test's start and keeps the samples: where the slower
quarter of them took twice as long as the faster quarter, or the process got much less CPU
than wall time (it was ready and not run: other programs, or a virtual machine's host
serving its other guests), the report says that the figures were measured on an unsteady
machine.  Single slow samples are common and say little: on this machine the sample after
a cold-read test often took twice the others (16 calibrations of the live benchmark: the
slowest over the fastest 1.43-2.32, the quartiles' ratio 1.05-1.73).  A calibration made in
a stretch that was slow throughout is not found by this (one of those 16 had a median
sample of 7.3 ms where the others had 3.7-5.6): the advisor compares the median sample with
the host's earlier calibrations in its cache (:func:`with_reference`) for that.

It costs about 11 ms a test (``ITERATIONS`` x ``REPEATS``), and reads nothing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import replace

from .results import MachinePace, PaceSample

#: Loop iterations of one sample: about 3.5 ms of one core here.
ITERATIONS = 100_000
#: Samples per moment; the median is kept (one sample can catch a single interruption).
REPEATS = 3
#: The samples' upper quartile over their lower quartile, less 1 (``MachinePace.spread``),
#: beyond which the machine is unsteady: a quarter of the calibration at half the pace of
#: another quarter.  Here 0.05-0.73 in the 16 calibrations above, none unsteady by it (with
#: 30,000 iterations a sample, 1 ms, even a quiet calibration's samples spread wide).
UNSTEADY_SPREAD = 1.0
#: The CPU time over the wall time below which the process was kept waiting: 1.00 in every
#: calibration here (the slow samples were slow in CPU time too).
BUSY_CPU_SHARE = 0.85
#: A calibration whose median sample took this many times the median of the host's earlier
#: calibrations ran in a slow stretch: the 16 above had medians of 3.7-5.6 ms, and one 7.3.
SLOW_PACE = 1.5
#: Earlier calibrations of the host needed for a reference.
MIN_REFERENCES = 3


def _work(n: int) -> int:
    s = 0
    for i in range(n):
        s += i
    return s


def sample(test: str, iterations: int = ITERATIONS, repeats: int = REPEATS) -> PaceSample:
    """The fixed work timed ``repeats`` times now: the median by wall time."""
    runs = []
    for _ in range(max(repeats, 1)):
        w0, c0 = time.perf_counter(), time.process_time()
        _work(iterations)
        runs.append((time.perf_counter() - w0, time.process_time() - c0))
    wall, cpu = sorted(runs)[len(runs) // 2]
    return PaceSample(test=test, wall_s=wall, cpu_s=cpu)


def machine_pace(samples: Sequence[PaceSample]) -> MachinePace | None:
    """The samples' summary; ``None`` without two samples."""
    if len(samples) < 2:
        return None
    walls = sorted(s.wall_s for s in samples)
    low, high = (walls[0], walls[-1]) if len(walls) < 4 else \
        (statistics.quantiles(walls, n=4)[0], statistics.quantiles(walls, n=4)[2])
    spread = high / low - 1.0 if low > 0 else 0.0
    # the median moment's share: a sample's CPU time is counted in coarse steps where the
    # kernel accounts it by ticks, so one sample alone says little
    share = statistics.median(min(s.cpu_s / s.wall_s, 1.0) if s.wall_s > 0 else 1.0
                              for s in samples)
    return MachinePace(samples=tuple(samples), spread=spread, cpu_share=share,
                       unsteady=spread > UNSTEADY_SPREAD or share < BUSY_CPU_SHARE)


def median_s(pace: MachinePace) -> float:
    """The calibration's median sample (wall seconds)."""
    return statistics.median(s.wall_s for s in pace.samples)


def with_reference(pace: MachinePace, earlier: Sequence[float]) -> MachinePace:
    """``pace`` against the median samples of the host's ``earlier`` calibrations: its
    ``reference_s``, and ``slow`` where its own median took ``SLOW_PACE`` times that."""
    if len(earlier) < MIN_REFERENCES:
        return replace(pace, reference_s=None, references=len(earlier), slow=False)
    ref = statistics.median(earlier)
    return replace(pace, reference_s=ref, references=len(earlier),
                   slow=ref > 0 and median_s(pace) > SLOW_PACE * ref)


def pace_line(pace: MachinePace) -> str:
    """One line for the report: what the samples found, and what to do about it."""
    walls = [s.wall_s for s in pace.samples]
    slowest = max(pace.samples, key=lambda s: s.wall_s)
    what = (f"a fixed piece of work took {1e3 * min(walls):.1f}-{1e3 * max(walls):.1f} ms "
            f"across the calibration's tests (median {1e3 * statistics.median(walls):.1f}, "
            f"slowest before {slowest.test}; the quartiles {pace.spread:.0%} apart), and the "
            f"process got {pace.cpu_share:.0%} of its time on a core")
    if pace.reference_s is not None:
        what += (f"; this host's {pace.references} earlier calibrations: median "
                 f"{1e3 * pace.reference_s:.1f} ms")
    if pace.slow:
        return (f"the machine was slower than usual during the calibration: {what}; the "
                "predictions carry the pace of that stretch: calibrate again when the machine "
                "is back to its usual pace")
    if not pace.unsteady:
        return f"machine steady: {what}"
    return (f"the machine was unsteady during the calibration: {what}; figures measured at "
            "different moments may not agree, and predictions carry the pace of the moment "
            "they were measured at: calibrate again when the machine is quiet")


__all__ = ["BUSY_CPU_SHARE", "ITERATIONS", "MIN_REFERENCES", "SLOW_PACE", "UNSTEADY_SPREAD",
           "machine_pace", "median_s", "pace_line", "sample", "with_reference"]
