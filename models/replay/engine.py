"""One decomposition of the analysis' time, from the program's reader replayed: what the verdict,
the scaling over workers and W001 state.

The reader baseline (:mod:`hep_advisor.models.reader_baseline`) is one cold pass of the whole
job by the program's reader: the device's time for its replayed requests (``io_s``) and the CPU
time (``cpu_s``), measured where the calibration's event loop ran that reader.  The CPU time
splits into the per-file overhead (opening the files, with Python's collector and a run's
one-off set-up, and the fixed cost of each read call, basket key and basket), decompressing
the baskets read (the decompression test's rate on the dataset's own baskets) and the rest: the
reader's unpacking and the analysis' processing.  :class:`ReplayedJob` holds that split and the
job as :mod:`.workers` spreads it over processes, so that

- **the rate now** is the job's time on the workers run now;
- **each limit's share** is the elasticity of that time with respect to the limit's part (how much
  sooner the job ends, relatively, when that part gets faster): on a disk with one worker the parts
  add and each share is the part's fraction of the time; on a rate limiter, or with several workers
  sharing a device, the part that binds takes the share (reads hidden behind the CPU take none);
- **the scaling** is the same job on 1, 2, ... processes, with the interval of the rate now
  (:func:`baseline_spread`) and of the speed-up (:func:`~.workers.workers_gain`'s cases).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hep_advisor.probes.readtests.results import ConcurrencyPoint, Measurement, ParallelPoint

from ..inputspread import Z90
from ..physics import Cores
from ..pointnoise import point_sd
from ..selfcheck import CAUSES, LoopSample, SelfCheck
from .device import LocalDevice
from .quadrature import quadrature
from .requests import Request
from .workers import SharedJob, workers_gain

#: the limits a local job's time splits into, in the verdict's words
STORAGE, OVERHEAD, DECOMPRESSION, PROCESSING = (
    "storage", "per-file overhead", "decompression", "processing")
PARTS = (STORAGE, OVERHEAD, DECOMPRESSION, PROCESSING)
#: the relative step of the elasticities (central differences)
_H = 0.02
#: a cold pass measured once, or not at all: the relative run-to-run spread (one sigma) taken
#: for it (an assumption: the calibration's repeated cold loops spread by 2-12% on this
#: project's validation data; the replay of a reader that was not timed missed by up to 1.5x)
RUN_SD_ONCE = 0.10
UNTIMED_SD = 0.25


@dataclass(frozen=True)
class ReplayedJob:
    """The whole job as the program's reader runs it, one process, cold: the shared job (its
    device and CPU time, the device's form) and the CPU's parts (seconds, whole job)."""

    job: SharedJob
    #: the per-file overhead's CPU seconds (opens, collector, set-up, fixed costs per call,
    #: key and basket): :attr:`~hep_advisor.models.reader_baseline.ReaderBaseline.open_cpu_s`
    open_s: float
    decompress_s: float
    compressed_mb: float
    entries: float
    #: the calibration's cold pass of this reader over the whole job (with the cold open per
    #: file), seconds; ``None`` where not measured
    measured_s: float | None = None

    @property
    def process_s(self) -> float:
        """The processing's CPU seconds: the rest of the CPU time, with what a run pays once
        (an RDataFrame's compilation, a ROOT loop's first file: ``job.once_s``)."""
        return max(self.job.cpu_s + self.job.once_s - self.open_s - self.decompress_s, 0.0)

    def _scaled(self, part: str, f: float) -> SharedJob:
        j = self.job
        if part == STORAGE:
            return replace(j, io_s=j.io_s * f, interleave_s=j.interleave_s * f)
        if part == OVERHEAD:
            return replace(j, cpu_s=j.cpu_s + (f - 1) * self.open_s, open_s=j.open_s * f)
        if part == PROCESSING:
            return replace(j, cpu_s=j.cpu_s + (f - 1) * max(self.process_s - j.once_s, 0.0),
                           once_s=j.once_s * f)
        return replace(j, cpu_s=j.cpu_s + (f - 1) * self.decompress_s)

    def seconds(self, workers: int, efficiency: float, cores: Cores,
                oversubscribed: float = 1.0) -> float:
        return self.job.seconds(workers, efficiency, cores, oversubscribed)

    def shares(self, workers: int, efficiency: float, cores: Cores,
               oversubscribed: float = 1.0) -> dict[str, float]:
        """Each part's share of the time at ``workers`` processes: d log T / d log part,
        normalised to sum to one."""
        t = self.seconds(workers, efficiency, cores, oversubscribed)
        if t <= 0:
            return {}
        raw = {}
        for part in PARTS:
            up = self._scaled(part, 1 + _H).seconds(workers, efficiency, cores, oversubscribed)
            down = self._scaled(part, 1 - _H).seconds(workers, efficiency, cores,
                                                      oversubscribed)
            raw[part] = max((up - down) / (2 * _H * t), 0.0)
        total = sum(raw.values())
        return {p: v / total for p, v in raw.items()} if total > 0 else {}


@dataclass(frozen=True)
class Spread:
    """The relative spread (one sigma, of a log) of the rate now, and where it comes from."""

    sd: float
    source: str  # "measured" or "assumed"
    why: str


def baseline_spread(predicted_s: float, measured_s: float | None,
                    run_sd: float | None) -> Spread:
    """How far the replayed time of the job may be off a run of it: where the reader's cold
    pass was measured, its run-to-run spread (``run_sd``: one sample's relative sigma,
    :func:`~hep_advisor.models.pointnoise.point_sd`; :data:`RUN_SD_ONCE` where its samples
    tell none)
    and the replay's own miss of it, added in quadrature (the miss taken as 1.645 sigma, so
    that the interval reaches the measurement); where it was not, :data:`UNTIMED_SD`
    (assumed)."""
    if measured_s is None or measured_s <= 0 or predicted_s <= 0:
        return Spread(UNTIMED_SD, "assumed",
                      f"the reader's cold pass was not measured: ±{100 * UNTIMED_SD:.0f}% "
                      "(one sigma) assumed")
    run = run_sd if run_sd else RUN_SD_ONCE
    miss = abs(math.log(predicted_s / measured_s)) / Z90
    sd = math.hypot(run, miss)
    how = (f"the cold pass's run-to-run spread ({100 * run:.0f}%, "
           + ("measured" if run_sd else "assumed: too few samples") + ")"
           + f" and the replay's miss of it ({predicted_s / measured_s:.2f}x)")
    return Spread(sd, "measured" if run_sd else "assumed", how)


@dataclass(frozen=True)
class CurvePoint:
    workers: int
    seconds: float
    mb_per_s: float
    low: float
    high: float
    events_per_s: float
    speedup: float
    speedup_low: float
    speedup_high: float


def curve(rj: ReplayedJob, counts: Sequence[int], efficiency: tuple[float, float, float],
          cores: Cores, oversubscribed: tuple[float, float, float], spread: Spread
          ) -> list[CurvePoint]:
    """The job's rate at each worker count: the point, and a 90% interval that combines the
    rate now's spread with the speed-up's range (:func:`~.workers.workers_gain`'s cases) in
    log space, in quadrature (each range taken as a 90% one)."""
    one = rj.seconds(1, efficiency[0], cores, oversubscribed[0])
    out = []
    for n in counts:
        t = rj.seconds(n, efficiency[0], cores, oversubscribed[0])
        if n == 1:
            s, lo, hi = 1.0, 1.0, 1.0
        else:
            g = workers_gain(rj.job, n, efficiency, cores, rj.measured_s, oversubscribed)
            s, lo, hi = one / t, min(g.low, one / t), max(g.high, one / t)
        mb = rj.compressed_mb / t if t > 0 else float("inf")
        low, high = quadrature(mb, [[mb * math.exp(k * Z90 * spread.sd) for k in (-1.0, 1.0)],
                                    [mb * lo / s, mb * hi / s]])
        out.append(CurvePoint(n, t, mb, low, high,
                              rj.entries / t if t > 0 else float("inf"), s, lo, hi))
    return out




def on_storage(rj: ReplayedJob, mb_per_s: float, access_ms: float, devices: int,
               layout: str, bw_now: float, access_now_ms: float, seeks: float) -> ReplayedJob:
    """The job on other storage: the replayed device time split into its access times
    (``seeks`` x the access time now) and its transfer, each rescaled to a device of
    ``mb_per_s`` and ``access_ms``; ``layout``: ``separate`` (``devices`` disks, each with its
    own files: a queue each), ``raid0`` (striped over ``devices``: transfers ``devices`` times
    faster, each access on one disk), ``raid5`` (``devices - 1`` data disks), else one device."""
    j = rj.job
    seek_s = min(seeks * access_now_ms / 1e3, j.io_s)
    flow_s = j.io_s - seek_s
    f_acc = access_ms / access_now_ms if access_now_ms > 0 else 1.0
    f_bw = bw_now / mb_per_s if mb_per_s > 0 else 1.0
    stripes = devices if layout == "raid0" else max(devices - 1, 1) if layout == "raid5" else 1
    io = seek_s * f_acc + flow_s * f_bw / stripes
    return replace(rj, job=replace(j, io_s=io, interleave_s=j.interleave_s * f_acc,
                                   devices=float(devices) if layout == "separate" else 1.0))


#: The replay's own check: a measured configuration passes within 15% (or within ``Z`` of
#: its measurement's standard deviations, where wider).
CHECK_TOLERANCE = 0.15
CHECK_Z = 2.0


def _check(test: str, term: str, predicted: float, measured: float,
           m: Measurement | None, conditions: dict[str, float]) -> SelfCheck:
    sd, source = point_sd(m)
    tol = max(CHECK_TOLERANCE, CHECK_Z * sd) if sd is not None else CHECK_TOLERANCE
    ratio = predicted / measured
    ok = abs(math.log(ratio)) <= math.log1p(tol)
    cause = "within 10%" if abs(ratio - 1) <= 0.10 else "within its spread" if ok else "the fit"
    return SelfCheck(test=test, term=term, conditions=conditions, measured=measured,
                     predicted=predicted, ratio=ratio, tolerance=tol, ok=ok, sd=sd,
                     spread_source=source, samples=len(m.samples) if m is not None else None,
                     cause=cause)


def self_checks(rj: ReplayedJob, predicted_s: float, cold: Measurement | None,
                parallel: Sequence[ParallelPoint], efficiency: float, cores: Cores,
                oversubscribed: float = 1.0, sample: LoopSample | None = None,
                root_passes: Sequence[tuple[bool, bool, LoopSample]] = ()
                ) -> tuple[SelfCheck, ...]:
    """The engine through the calibration's own measured configurations: the program's reader
    cold over the sample its cold loop read (``sample``: that sample replayed,
    :func:`~hep_advisor.models.loop_sample.replay_loop_sample`; where it could not be, the
    whole job: ``rj.measured_s``, the loop's rate carried to every file with the cold open per
    file, against the replayed ``predicted_s``), ROOT's passes with and without TTreeCache
    over their part of that sample (``root_passes``:
    :func:`~hep_advisor.models.loop_sample.replay_root_passes`: with the cache or not, the
    program's own reader or not, the replay; one pass each, so held to 15%), and the warm
    parallel event loop's speed-up over one worker (its ``units`` files shared by pull, the
    device idle: the CPU side of
    :meth:`~.workers.SharedJob.seconds`), up to the logical cores: a run by more workers has
    each read one or two short units, mostly a fresh process's first (its heap written for
    the first time), a cost a long job pays once; the oversubscription's own figure compares
    those runs like with like (``ParallelPoint.speedup_over_cores``).  Rates in MB/s (the
    job's compressed MB)."""
    out = []
    if sample is not None:
        stood = f", {sample.stand_ins} on another file's map" if sample.stand_ins else ""
        out.append(_check(
            "replay, event loop, cold",
            f"the reader's replay of the loop's own sample ({sample.entries:,} entries of "
            f"{sample.files} file(s){stood}; device {100 * sample.io_share:.0f}%, CPU "
            f"{100 * (1 - sample.io_share):.0f}% of its time)",
            sample.replayed_mb_per_s, sample.measured_mb_per_s, cold,
            {"workers": 1.0, "entries": float(sample.entries), "files": float(sample.files)}))
    elif rj.measured_s and predicted_s > 0 and rj.compressed_mb > 0:
        out.append(_check("replay, event loop, cold",
                          "the reader's replay of the whole job (device + CPU), against the "
                          "loop's rate carried to every file (its sample was not recorded)",
                          rj.compressed_mb / predicted_s, rj.compressed_mb / rj.measured_s,
                          cold, {"workers": 1.0}))
    for cache, own, ps in root_passes:
        what = "with" if cache else "without"
        stood = f", {ps.stand_ins} on another file's map" if ps.stand_ins else ""
        out.append(_check(
            f"replay, ROOT loop {what} TTreeCache, cold",
            f"ROOT's loop {what} TTreeCache replayed on its own pass ({ps.entries:,} entries "
            f"of {ps.files} file(s){stood}; device {100 * ps.io_share:.0f}%, CPU "
            f"{100 * (1 - ps.io_share):.0f}% of its time"
            + ("" if own else "; its CPU per entry your reader's loop's, an assumption") + ")",
            ps.replayed_mb_per_s, ps.measured_mb_per_s, None,
            {"workers": 1.0, "entries": float(ps.entries), "files": float(ps.files)}))
    one = next((p for p in parallel if p.workers == 1 and p.aggregate_mb_per_s), None)
    for p in parallel:
        if one is None or p.workers <= 1 or not p.aggregate_mb_per_s or \
                p.workers > cores.cores * max(cores.threads_per_core, 1):
            continue
        warm = SharedJob(io_s=0.0, cpu_s=1.0, files=max(p.units, 1))
        s = warm.seconds(1, efficiency, cores, oversubscribed) / \
            warm.seconds(p.workers, efficiency, cores, oversubscribed)
        out.append(_check(f"replay, parallel event loop {p.workers}",
                          "the workers' CPU sharing (parallel efficiency)",
                          (one.aggregate_mb_per_s or 0.0) * s, p.aggregate_mb_per_s,
                          p.measurement, {"workers": float(p.workers)}))
    return tuple(out)


#: The concurrency sweep's request where its measurement does not record one
#: (``probes.readtests.raw``: 1 MiB ``preadv``, as fio's ``--bs=1M``)
SWEEP_REQUEST = 1 << 20


def _sweep_stream(total_bytes: int, file_bytes: float, request: int
                  ) -> tuple[list[Request], dict[str, int]]:
    """``total_bytes`` read sequentially in ``request``-byte requests through files of
    ``file_bytes``."""
    size = max(min(int(file_bytes), total_bytes), request)
    requests: list[Request] = []
    sizes: dict[str, int] = {}
    left, i = total_bytes, 0
    while left > 0:
        name, n = f"f{i}", min(size, left)
        sizes[name] = n
        requests += [Request(name, off, min(request, n - off)) for off in range(0, n, request)]
        left, i = left - n, i + 1
    return requests, sizes


def sweep_seconds(device: LocalDevice, readers: int, total_bytes: int, file_bytes: float,
                  cores: Cores, request_bytes: int = SWEEP_REQUEST) -> float:
    """The concurrency sweep's one sample as the replay has it: ``readers`` processes, each
    reading its ``total_bytes / readers`` sequentially in ``request_bytes`` requests (the
    sweep's own, recorded with its measurement) through files of ``file_bytes`` (the
    dataset's mean file; each file its own read-ahead), no CPU work.
    On a disk, as the job's processes share it (:class:`~.workers.SharedJob`): the device's
    busy time is the streams' replays added, and each device I/O pays the access time once
    two or more streams interleave.  On a rate limiter the readers share one budget: their
    bytes as one stream, paced by the limiter's rule (:meth:`~.device.LocalDevice.
    paced_time`, a block throttle's slice included)."""
    if device.limit == "max":
        requests, sizes = _sweep_stream(int(total_bytes), file_bytes, request_bytes)
        t = device.replay(requests, sizes)
        return device.paced_time(t, [0.0] * t.requests)
    per = max(int(total_bytes // max(readers, 1)), 1)
    requests, sizes = _sweep_stream(per, file_bytes, request_bytes)
    t = device.replay(requests, sizes)
    interleave = readers * max(t.device_requests - t.seeks, 0) * device.access_s
    job = SharedJob(io_s=readers * t.time_s, cpu_s=0.0, interleave_s=interleave,
                    files=readers)
    return job.seconds(readers, 1.0, cores)


def sweep_checks(device: LocalDevice, sweep: Sequence[ConcurrencyPoint], file_bytes: float,
                 cores: Cores, storage_share: float,
                 raw_cold: Measurement | None = None) -> tuple[SelfCheck, ...]:
    """The engine's device through the calibration's concurrency sweep: each point's
    aggregate cold MB/s of ``k`` readers (:func:`sweep_seconds` on the device the replay
    uses, shared by ``k`` workers as the job's processes share it) against the measurement.  One
    reader tests the device's single stream (bandwidth, read-ahead, largest I/O); more test
    how the workers' model shares it (the interleaved streams' access times, a rate limiter's
    budget).  ``storage_share``: the storage's share of the time now, named in the term.
    ``raw_cold``: the raw read's cold sequential read, the same configuration as one reader's
    point (1 MiB requests, cold, one process): where the two disagree beyond both tolerances
    on either side of the replay, a miss says so (``CAUSES[2]``: no device passes through
    both)."""
    out = []
    share = f"storage: {100 * storage_share:.0f}% of the time now"
    for p in sweep:
        m = p.measurement
        total = m.conditions.bytes_per_sample
        if not p.aggregate_mb_per_s or m.conditions.cache != "cold" or not total:
            continue
        seconds = sweep_seconds(device, p.workers, total, file_bytes, cores,
                                m.conditions.request_bytes or SWEEP_REQUEST)
        if seconds <= 0:
            continue
        term = ("device's single stream (bandwidth, read-ahead" if p.workers == 1 else
                "device shared by concurrent workers (the workers' model")
        c = _check(f"replay, concurrency {p.workers}", f"{term}; {share})",
                   total / seconds / 1e6, p.aggregate_mb_per_s, m,
                   {"workers": float(p.workers)})
        if p.workers == 1 and not c.ok and raw_cold is not None and raw_cold.median:
            other = _check("cold sequential", term, c.predicted, raw_cold.median, raw_cold, {})
            apart = max(raw_cold.median / c.measured, c.measured / raw_cold.median)
            if (raw_cold.median - c.predicted) * (c.measured - c.predicted) < 0 and \
                    apart > (1 + c.tolerance) * (1 + other.tolerance):
                c = replace(c, cause=CAUSES[2], same_as=("cold sequential",))
        out.append(c)
    return tuple(out)


__all__ = ["CHECK_TOLERANCE", "DECOMPRESSION", "OVERHEAD", "PARTS", "PROCESSING", "STORAGE",
           "SWEEP_REQUEST", "Z90", "CurvePoint", "ReplayedJob", "Spread", "baseline_spread",
           "curve", "on_storage", "self_checks", "sweep_checks", "sweep_seconds"]
