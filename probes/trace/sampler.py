"""The traced program's threads sampled from outside the trace: time on a core, per thread.

The wrapper (``_child.py``) writes the program's pid next to its result file; a thread of the
tracing process (not traced itself) then reads, every ``interval`` seconds until the program
ends, each of its threads' (and its child processes' threads')
``/proc/<pid>/task/<tid>/schedstat`` (nanoseconds on a core and waiting for one: exact
counters, sampled in time) and the main thread's state letter.  From
these the time split tells when the program's other threads ran beside its main thread
(:func:`hep_advisor.models.attribution.thread_overlap`).  About 100 looks a second, each a few small
reads of ``/proc`` (fewer looks where one takes over a tenth of the interval: a program of
many threads), outside the program.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

#: Seconds between two samples.
INTERVAL_S = 0.01


@dataclass(frozen=True)
class Sample:
    """One look at the program: seconds from its start, the main thread's state letter,
    ``tid -> (ns on a core, ns waiting for one)`` of every thread then alive."""

    t: float
    state: str
    threads: dict[int, tuple[int, int]]


def schedstat(pid: int, depth: int = 3) -> dict[int, tuple[int, int]]:
    """``tid -> (ns on a core, ns waiting for one)`` of every thread of ``pid`` and of its
    child processes (``depth`` levels down; {} when gone)."""
    out: dict[int, tuple[int, int]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}/"
        try:
            with open(base + "schedstat") as fh:
                run, wait = fh.read().split()[:2]
            out[int(tid)] = (int(run), int(wait))
            if depth > 0:
                with open(base + "children") as fh:
                    kids = fh.read().split()
                for kid in kids:
                    out.update(schedstat(int(kid), depth - 1))
        except (OSError, ValueError):
            continue
    return out


def on_core_between(samples: Sequence[Sample], tid: int, lo: float, hi: float
                    ) -> tuple[float, float, float] | None:
    """``(seconds on a core, seconds waiting for one, edge)`` of thread ``tid`` between ``lo``
    and ``hi`` (seconds from the program's start): its schedstat counters read at the two
    times, each interpolated between the samples either side; ``edge``: the length of those
    two sample gaps, a bound on what the interpolation can misplace.  None where the thread
    was not sampled on both sides of the span."""
    seen = [s for s in samples if tid in s.threads]

    def at(t: float) -> tuple[float, float, float] | None:
        after = next((i for i, s in enumerate(seen) if s.t >= t), None)
        if after is None or (after == 0 and seen[0].t > t):
            return None
        a, b = seen[max(after - 1, 0)], seen[after]
        f = (t - a.t) / (b.t - a.t) if b.t > a.t else 1.0
        ra, rb = a.threads[tid], b.threads[tid]
        return ((ra[0] + f * (rb[0] - ra[0])) / 1e9, (ra[1] + f * (rb[1] - ra[1])) / 1e9,
                b.t - a.t)

    start, end = at(lo), at(hi)
    if start is None or end is None:
        return None
    return end[0] - start[0], end[1] - start[1], start[2] + end[2]


def state(pid: int) -> str:
    """``R`` running, ``S`` sleeping, ``D`` waiting for a disk, ``t`` stopped by a tracer,
    ``Z`` ended; ``?`` when gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return "?"


class Sampler:
    """``with Sampler(pid_file) as s: ...run...``; then ``s.samples`` (oldest first) and
    ``s.pid``.  The pid file holds ``PID T0`` (``T0``: the wrapper's monotonic start)."""

    def __init__(self, pid_file: str, interval: float = INTERVAL_S) -> None:
        self.pid_file, self.interval = pid_file, interval
        self.samples: list[Sample] = []
        self.pid: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hep-trace-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _wait_pid(self) -> tuple[int, float] | None:
        while not self._stop.is_set():
            try:
                with open(self.pid_file) as fh:
                    pid, t0 = fh.read().split()
                return int(pid), float(t0)
            except (OSError, ValueError):
                self._stop.wait(0.002)
        return None

    def _run(self) -> None:
        got = self._wait_pid()
        if got is None:
            return
        self.pid, t0 = got
        while not self._stop.is_set():
            c0 = time.monotonic()
            st = state(self.pid)
            if st in ("Z", "X", "?"):
                return
            self.samples.append(Sample(c0 - t0, st, schedstat(self.pid)))
            # many threads: fewer samples, the sampler's own time kept under a tenth
            self._stop.wait(max(self.interval, 10 * (time.monotonic() - c0)))
