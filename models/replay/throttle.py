"""A paced replay through a cgroup block throttle, step by step by the kernel's rule
(``block/blk-throttle.c``, described at :meth:`.device.LocalDevice.paced_time`).

The kernel rounds a slice's end up to whole slices of its own clock at each dispatch
(``throtl_set_slice_end``), so after an idle gap of one to two slices the slice has lapsed or
not by the job's phase against that clock, which nothing here knows: :data:`PHASES` phases
are replayed and their mean taken by the caller.  A replay with no such gap goes alike at
every phase; the others go alike up to the first one, and resume from there (:class:`Slice`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

#: phases of a job's start against the block throttle's slice grid that a paced replay
#: takes the mean over (the kernel rounds a slice's end up to whole slices of its own
#: clock, whose phase against the job is not known)
PHASES = 4


class Steps(NamedTuple):
    """A paced replay's requests in the order issued: the device I/Os' bytes and request
    slots, each request's I/Os (``marks``), the CPU gap after each, and the order."""

    sizes: Sequence[int]
    slots: Sequence[int]
    marks: Sequence[int]
    gaps: Sequence[float]
    order: Sequence[int]


class Slice(NamedTuple):
    """A paced replay's state through a block throttle at the start of a step: the step,
    the time, the slice's start, the bytes and requests counted in it, the last dispatch."""

    step: int
    t: float
    start: float
    bytes: float
    requests: float
    last: float


def throttled(steps: Steps, t: float, sl: float, bps: float, iops: float, phase: float = 0.0,
              resume: Slice | None = None) -> tuple[float, Slice | None]:
    """The time of ``steps`` (the requests in the order issued) from ``t`` through a block
    throttle of slice ``sl`` seconds and limits ``bps`` and ``iops`` (the kernel's rule, at
    :meth:`.device.LocalDevice.paced_time`); ``phase``: seconds from a whole slice of the
    kernel's clock to the job's start.  Returns the time and the state at the first step
    whose idle gap before it fell between one and two slices (where the phase decides
    whether the slice lapsed; ``None``: no such step), from which a run at another phase may
    ``resume``."""
    ceil, floor = math.ceil, math.floor
    eps = 1e-9
    first = 0
    start = end = last = -math.inf
    bdisp = idisp = 0.0
    if resume is not None:  # the state there, the slice's end on this phase's grid
        first, t, start, bdisp, idisp, last = resume
        end = sl * ceil((last + sl + phase) / sl - eps) - phase
    edge: Slice | None = None
    sizes, counts, marks, gaps, order = steps
    for k in range(first, len(order)):
        i = order[k]
        lo, hi = marks[i], marks[i + 1]
        if hi > lo and edge is None and sl + eps < t - last < 2 * sl - eps:
            edge = Slice(k, t, start, bdisp, idisp, last)
        for j in range(lo, hi):
            n, slots = sizes[j], counts[j]
            if t > end:  # the slice was used up while idle: a fresh one
                start, end, bdisp, idisp = t, t + sl, 0.0, 0.0
            while True:
                el = t - start
                rnd = sl * max(ceil(el / sl - eps), 1)
                wait = 0.0
                if bdisp + n > bps * rnd:
                    wait = (bdisp + n - bps * rnd) / bps + (rnd - el)
                if iops > 0:
                    rnd_i = sl * ceil((el + eps) / sl)
                    if idisp + slots > iops * rnd_i:
                        need = (idisp + slots - iops * rnd_i) / iops
                        wait = max(wait, rnd_i - el + max(need - sl, 0.0), 1.0 / iops)
                if wait <= eps:
                    break
                t += wait
            bdisp += n
            idisp += slots
            whole = sl * floor((t - start) / sl + eps)
            if whole >= 2 * sl - eps:  # trim all but the last whole slice
                cut = whole - sl
                bdisp = max(bdisp - bps * cut, 0.0)
                idisp = max(idisp - iops * cut, 0.0)
                start += cut
            # each dispatch sets the slice's end a slice later, rounded up to a whole
            # slice of the kernel's clock (its roundup(jiffies + slice, slice))
            end = sl * ceil((t + sl + phase) / sl - eps) - phase
            last = t
        t += gaps[i]
    return t, edge


__all__ = ["PHASES", "Slice", "Steps", "throttled"]
