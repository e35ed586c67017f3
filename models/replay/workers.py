"""N worker processes sharing the device the data sits on: the program's reader, replayed
(:mod:`.baseline`), spread over ``n`` processes.

The reader baseline splits one cold pass of the whole job into the device's time for its reads
(``io_s``: the replayed requests through the calibrated device) and the CPU time (``cpu_s``).
Running ``n`` processes divides the CPU time between them, but not the device's: the device
serves the reads of every process, so its busy time for the whole job stays ``io_s`` whatever
``n`` (more, on a disk, where the processes' streams interleave: see below).  How the two
combine follows the device's form, as for one worker:

- a disk (``"additive"``: each read waits for the device): every process alternates between its
  reads, queued at the device behind the other processes' reads, and its CPU work.  That is a
  closed queue with one server (per independent device) and ``n`` jobs, solved as the rate
  model's shared devices are (:func:`hep_advisor.models.physics.shared_devices`, Schweitzer's
  mean-value analysis): one process takes ``io_s + cpu_s``; many approach ``io_s``.  One process's
  reads that follow each other on the device pay no access time; ``n`` processes' streams
  interleave, so on a disk every device I/O of the replay pays it (``interleave_s``: the access time
  the contiguous I/Os did not pay, added once there are two streams or more);
- a rate limiter (``"max"``: a block throttle's IOPS and MB/s budgets): reads spaced out by CPU
  work pass within the budget, so one process takes ``max(io_s, cpu_s)``; ``n`` processes
  take ``max(io_s, cpu_s / n_cpu)``: the budget is shared, the CPU work is not.

The CPU side: ``n`` processes run on the cores as the rate model counts them (hyper-threads
count less, :class:`hep_advisor.models.physics.Cores`), and each core beyond the first adds
``efficiency`` of a core (the rate model's ``parallel_efficiency``).  The work is files dealt
to processes (or, with fewer files than processes, entry ranges on cluster boundaries): with
``u`` units, the busiest process holds ``ceil(u / n)`` of them, so the work runs as if on
``u / ceil(u / n)`` processes (3 files on 2 processes: 1.5).  A process that reads part of a
file another process also reads opens it too: its CPU (``open_s``) is paid once more; its
metadata pages are already in the page cache (not charged to the device again).

Where the calibration measured this reader cold, that pass also says how its reads and CPU
work combine (:func:`overlap`): the form whose one-process time is nearer the measured one is
used (the other form's speed-up is kept in the interval).

What the replay cannot tell is how far its split between device and CPU time is right: where
the calibration measured this reader cold (:attr:`.baseline.ReaderBaseline.
measured_baseline_events_per_s`), the gap between the replayed and the measured pass is put
wholly on the device, wholly on the CPU, or shared in proportion (where the reads overlap the
CPU work, the hidden one may be as long as the measured pass), and the speed-up's interval
spans the three (with the efficiency's own range); where it was not measured, each term is
taken ``SPLIT_FACTOR`` times larger or smaller (an assumption).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from ..physics import Cores, shared_devices
from .quadrature import quadrature

#: Without a cold measurement of the reader: how far each of the replay's two terms (device,
#: CPU) is taken to be off, either way (an assumption: the replay of uproot's default reader
#: missed its own cold measurement by 0.6-2.1x on the validation data of this round).
SPLIT_FACTOR = 1.5

Bound = Literal["device", "cpu", "both"]


@dataclass(frozen=True)
class SharedJob:
    """The whole job as one pass of the program's reader, cold: the device's time for its
    reads and the CPU time, and what splitting it over processes needs to know."""

    io_s: float
    cpu_s: float
    #: the device's form: ``"additive"`` (a disk) or ``"max"`` (a rate limiter)
    limit: str = "additive"
    #: the access time the device I/Os that followed each other in one stream did not pay,
    #: paid once two or more streams interleave (a disk; 0 for a rate limiter, whose request
    #: budget counts every I/O alike)
    interleave_s: float = 0.0
    #: independent devices the data is spread over (the rate model's ``devices``)
    devices: float = 1.0
    #: CPU seconds to open a file (a process that shares a file with another opens it too)
    open_s: float = 0.0
    files: int = 1
    #: clusters per file (entry ranges on cluster boundaries; 0: not known)
    clusters: int = 0
    #: on a rate limiter, the share of the smaller of the device and CPU times that hides
    #: behind the larger: 1 (reads spaced out by the CPU work pass within the budget) down to
    #: 0 (every read waits, as on a disk).  The reader baseline's paced replay says how much
    #: (:func:`paced`); 1 where it was not paced
    hidden: float = 1.0
    #: CPU seconds a run pays once before its entries, however many processes or files
    #: (an RDataFrame's compilation, a ROOT loop's first file): the processes pay it side by
    #: side, so it is not divided; no read overlaps it
    once_s: float = 0.0

    def _limited(self, io: float, cpu: float) -> float:
        """A rate limiter: the larger of the two, plus the part of the smaller that does not
        hide behind it."""
        return max(io, cpu) + (1.0 - self.hidden) * min(io, cpu)

    def device_s(self, workers: int) -> float:
        """The device's busy time for the whole job with ``workers`` processes: the floor no
        number of processes goes below."""
        extra = self.interleave_s if workers > 1 else 0.0
        return self.io_s + extra

    def parallelism(self, workers: int) -> float:
        """How many processes the work runs on, as balanced: ``u / ceil(u / n)`` for ``u``
        units (files, or the clusters of the files where there are fewer files than
        processes; unlimited where the clusters are not known)."""
        n = max(int(workers), 1)
        if self.files >= n:
            units = self.files
        elif self.clusters > 0:
            units = self.files * self.clusters
        else:
            return float(n)
        return units / math.ceil(units / n)

    def seconds(self, workers: int, efficiency: float, cores: Cores,
                oversubscribed: float = 1.0) -> float:
        """Seconds for the whole job on ``workers`` processes (``oversubscribed``: the CPU
        work's rate at twice the logical cores' processes, of the logical cores' rate, as the
        rate model's parameter of that name)."""
        return self.once_s + self._shared_s(workers, efficiency, cores, oversubscribed)

    def _shared_s(self, workers: int, efficiency: float, cores: Cores,
                  oversubscribed: float) -> float:
        n = max(int(workers), 1)
        cpu = self.cpu_s + max(n - self.files, 0) * self.open_s  # files opened twice
        if n == 1:
            return self._limited(self.io_s, cpu) if self.limit == "max" else self.io_s + cpu
        jobs = min(self.parallelism(n), float(n))
        cores_used = float(cores.effective(np.array([jobs]))[0])
        n_cpu = 1.0 + efficiency * (cores_used - 1.0)  # cores' worth of CPU for the job
        n_cpu *= float(cores.oversubscribed(np.array([jobs]), oversubscribed)[0])
        io = self.device_s(n)
        if self.limit == "max":
            return self._limited(io / min(self.devices, jobs), cpu / n_cpu)
        if io <= 0:
            return cpu / n_cpu
        if cpu <= 0:
            return io / min(self.devices, jobs)
        # closed queue: ``jobs`` processes, each cycling through its reads (``io`` per whole
        # job's worth, at the device) and its CPU work, slowed to ``n_cpu / jobs`` of a core
        think = cpu * jobs / n_cpu
        rate = shared_devices(np.array([jobs]), np.array([1.0 / (io + think)]),
                              np.array([1.0 / io]), self.devices)
        return float(1.0 / rate[0])

    def one(self) -> float:
        """Seconds for the whole job on one process (the reader baseline's own form)."""
        return self.seconds(1, 1.0, Cores(1))

    def bound(self, workers: int, efficiency: float, cores: Cores) -> Bound:
        """What binds at ``workers``: the device (the time within 10% of its floor), the CPU
        (the device busy less than half the time), or both."""
        t = self.seconds(workers, efficiency, cores)
        floor = self.device_s(workers)
        return "device" if t <= 1.1 * floor else "cpu" if floor < 0.5 * t else "both"


@dataclass(frozen=True)
class WorkersGain:
    """The speed-up of ``workers`` processes over one, with its interval, and where it comes
    from: the point's times, the device's floor, what binds, and the speed-up of every corner
    the interval spans (``(label, speed-up)``)."""

    workers: int
    speedup: float
    low: float
    high: float
    one_s: float
    seconds: float
    device_s: float
    bound: Bound
    split: str
    corners: tuple[tuple[str, float], ...]


def splits(job: SharedJob, measured_s: float | None
           ) -> tuple[str, list[tuple[str, SharedJob]]]:
    """The device / CPU splits the interval spans: the replay's own (the point), and where a
    cold pass was measured (``measured_s``), the gap to it put on the device, on the CPU (where
    that can close it; where the larger of the two binds, the smaller is hidden, and the
    measured pass bounds each only from above: each is taken as long as the pass); else each
    term ``SPLIT_FACTOR`` larger and smaller.  Returns how the
    splits were made (one line) and the labelled splits."""
    out = [("replayed", job)]
    if measured_s is not None and measured_s > 0:
        one = job.one()
        how = (f"the replayed pass ({one:.2f} s) against the measured cold pass "
               f"({measured_s:.2f} s): the gap put on the device, on the CPU, or shared")
        if job.limit == "max":  # the larger hides the other: each may reach the pass
            io = measured_s if measured_s > job.io_s else None
            cpu = measured_s if measured_s > job.cpu_s else None
        else:
            io = measured_s - job.cpu_s if measured_s > job.cpu_s else None
            cpu = measured_s - job.io_s if measured_s > job.io_s else None
        if io is not None:
            out.append(("gap on the device", replace(job, io_s=io)))
        if cpu is not None:
            out.append(("gap on the CPU", replace(job, cpu_s=cpu)))
        return how, out
    f = SPLIT_FACTOR
    how = (f"no cold measurement of this reader: device and CPU time each taken {f:g}x "
           "larger or smaller (assumed)")
    out += [("device time larger", replace(job, io_s=job.io_s * f, cpu_s=job.cpu_s / f)),
            ("CPU time larger", replace(job, io_s=job.io_s / f, cpu_s=job.cpu_s * f))]
    return how, out


def overlap(job: SharedJob, measured_s: float | None) -> tuple[SharedJob, str]:
    """How the reader's reads and CPU work combine for one process: the device's form, unless
    a cold pass of the reader was measured, whose time then picks the form it is nearer (in
    ratio): the sum of the two (each read waits) or the larger (reads pass within a limiter's
    budget while the CPU works).  Returns the job with that form and why, in words."""
    if measured_s is None or measured_s <= 0 or job.io_s <= 0 or job.cpu_s <= 0:
        return job, f"the device's form ({job.limit})"
    add, big = job.io_s + job.cpu_s, max(job.io_s, job.cpu_s)
    form = "additive" if abs(math.log(measured_s / add)) < abs(math.log(measured_s / big)) \
        else "max"
    why = (f"the measured pass is nearer the sum of device and CPU time ({add:.2f} s) than "
           f"the larger ({big:.2f} s): the reads wait" if form == "additive" else
           f"the measured pass is nearer the larger of device and CPU time ({big:.2f} s) than "
           f"their sum ({add:.2f} s): the reads overlap the CPU work")
    return replace(job, limit=form), why + (f" (the device's form: {job.limit})"
                                            if form != job.limit else "")


def workers_gain(job: SharedJob, workers: int, efficiency: Sequence[float], cores: Cores,
                 measured_s: float | None = None,
                 oversubscribed: Sequence[float] = (1.0, 1.0, 1.0)) -> WorkersGain:
    """The speed-up of ``workers`` processes over one, with a 90% interval: each input alone
    at its ends, the log shifts added in quadrature.  ``efficiency``: (point, low, high) of
    what each core beyond the first adds; ``measured_s``: a cold pass of the reader over the
    whole job, measured (see :func:`splits`); ``oversubscribed``: (point, low, high) of the
    CPU work's rate beyond the logical cores (:meth:`SharedJob.seconds`)."""
    eff, lo_eff, hi_eff = efficiency
    eta, lo_eta, hi_eta = oversubscribed
    picked, form = overlap(job, measured_s)
    how, cases = splits(job, measured_s)
    if picked.limit != job.limit:  # the measured pass prefers the other form: in the range
        how = f"{how}; the point keeps the replay's own form ({job.limit}), and {form}"
        cases.append((f"{picked.limit} form", picked))
    t = job.seconds(workers, eff, cores, eta)
    point = job.one() / t
    # each input alone at its ends (the split of the time, the efficiency, the
    # oversubscription), the others at their points; the log shifts added in quadrature
    corners: list[tuple[str, float]] = []
    effects: list[list[float]] = []
    one = job.one()
    groups = [
        [(f"efficiency {e:.2f}", one / job.seconds(workers, e, cores, eta))
         for e in (lo_eff, hi_eff)],
        [(f"oversubscribed {o:.2f}", one / job.seconds(workers, eff, cores, o))
         for o in sorted({lo_eta, hi_eta})] if lo_eta != hi_eta else [],
        [(label, j.one() / j.seconds(workers, eff, cores, eta)) for label, j in cases[1:]],
    ]
    for values in groups:
        if values:
            corners += values
            effects.append([g for _, g in values])
    low, high = quadrature(point, effects)
    return WorkersGain(workers=workers, speedup=point, low=low, high=high,
                       one_s=job.one(), seconds=t, device_s=job.device_s(workers),
                       bound=job.bound(workers, eff, cores), split=how,
                       corners=tuple(corners))


def hidden_share(io_s: float, cpu_s: float, total_s: float) -> float:
    """On a rate limiter: the share of the smaller of ``io_s`` and ``cpu_s`` that hid behind
    the larger in a pass that took ``total_s`` (the reader baseline's paced replay), in [0, 1]."""
    small = min(io_s, cpu_s)
    if small <= 0 or not math.isfinite(total_s):
        return 1.0
    return min(max((io_s + cpu_s - total_s) / small, 0.0), 1.0)


def paced(job: SharedJob, total_s: float) -> SharedJob:
    """``job`` taking ``total_s`` on one process, as the reader baseline's paced replay did on
    a rate limiter: the share of the smaller part that hid (:func:`hidden_share`); where the
    pass took longer than the device and CPU times added (reads that waited for a block
    throttle's next slice), the excess is the device's, none hidden; where it took less than
    the device's own replay, the device's time is the paced pass's.  A disk's job (the two
    add) is returned as it is."""
    total_s -= job.once_s
    if job.limit != "max" or not math.isfinite(total_s) or total_s <= 0:
        return job
    if total_s > job.io_s + job.cpu_s:
        return replace(job, io_s=total_s - job.cpu_s, hidden=0.0)
    if total_s < job.io_s and job.io_s >= job.cpu_s:
        # the paced replay took less than the device's own replay (a throttle's credit the
        # requests spaced out by the CPU work found refilled): the device's time is the
        # paced one.  h62giga on the slow disk: 174 s replayed, 113 s paced, 112 s run
        return replace(job, io_s=max(total_s, job.cpu_s), hidden=1.0)
    return replace(job, hidden=hidden_share(job.io_s, job.cpu_s, total_s))


def scaling(job: SharedJob, counts: Sequence[int], efficiency: float, cores: Cores,
            oversubscribed: float = 1.0) -> list[tuple[int, float]]:
    """``(workers, whole jobs per second)`` at each count: the curve whose knee W001 takes."""
    return [(n, 1.0 / job.seconds(n, efficiency, cores, oversubscribed)) for n in counts]


__all__ = ["SPLIT_FACTOR", "SharedJob", "WorkersGain", "hidden_share", "overlap", "paced",
           "scaling", "splits", "workers_gain"]
