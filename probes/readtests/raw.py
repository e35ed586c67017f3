"""Plain reads of the dataset's files: cold and warm sequential rate, the request-size sweep,
and the concurrency sweep.

Reads go through the page cache as ROOT's do (buffered ``readinto`` into one reused buffer),
after the files were evicted with ``posix_fadvise(DONTNEED)`` and the eviction checked with
``mincore``.  Random-offset reads set ``POSIX_FADV_RANDOM`` so that the kernel's read-ahead
does not turn them into large reads: they measure the device's access time and small-read
IOPS; sequential ones keep the default advice, so they show what read-ahead does.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import random
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .pagecache import Eviction, evict_all
from .procs import end_processes, start_processes
from .results import CacheState, ConcurrencyPoint, Conditions, Measurement, Pattern, RequestPoint
from .runner import Session, measurement

MiB = 1 << 20
KiB = 1 << 10
#: Request size of the sequential and concurrent reads (as fio --bs=1M; read-ahead makes the
#: device requests larger where it is set so).
LARGE_REQUEST = 1 * MiB
REQUEST_SIZES = (4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB, 8 * MiB)
#: Seconds at the start of a long sample that the steady-state rate leaves out (see Marks).
WARMUP_S = 0.15
#: Stretches of time each raw-read sample is cut into for its steadiness (``Marks.parts``).
PARTS = 8
#: ... each at least this long.
MIN_PART_S = 0.25
#: Share of the request sweep's time that goes to the smallest random reads (the IOPS figure).
IOPS_SHARE = 0.25
#: Bytes read by one sample at most (the data read is bounded whatever the dataset's size).
MAX_SAMPLE_BYTES = 512 * MiB


def mb_per_s(n_bytes: int, seconds: float) -> float:
    return n_bytes / seconds / 1e6 if seconds > 0 else float("nan")


def cache_state(evictions: Sequence[Eviction]) -> CacheState:
    if evictions and all(e.cold for e in evictions):
        return "cold"
    if any(e.resident_after is None for e in evictions):
        return "unknown"
    return "mixed"


def eviction_note(evictions: Sequence[Eviction]) -> str | None:
    state = cache_state(evictions)
    if state == "cold":
        return None
    if state == "unknown":
        return "eviction could not be checked (no mincore here): the figure may be warm"
    worst = max(e.resident_after or 0.0 for e in evictions)
    return (f"eviction failed for some files (up to {100 * worst:.0f}% still cached): "
            "the figure is partly warm")


class Marks:
    """(time, cumulative bytes, cumulative requests) after each read of one sample.

    ``rate()`` is the steady-state rate: with a sample longer than ``4 * WARMUP_S``, the reads
    that finished within the first ``WARMUP_S`` are left out, because a device's queue (and a
    block throttle's first time slice, which lets 100 ms of budget through at once) makes the
    start of a sample faster than the device sustains."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.points: list[tuple[float, int, int]] = [(self.t0, 0, 0)]

    def add(self, n_bytes: int) -> None:
        _, b, r = self.points[-1]
        self.points.append((time.perf_counter(), b + n_bytes, r + 1))

    @property
    def bytes(self) -> int:
        return self.points[-1][1]

    @property
    def requests(self) -> int:
        return self.points[-1][2]

    @property
    def seconds(self) -> float:
        return self.points[-1][0] - self.t0

    def _window(self) -> tuple[float, int, int]:
        t_end, b_end, r_end = self.points[-1]
        start = self.points[0]
        if t_end - self.t0 > 4 * WARMUP_S:
            for p in self.points:
                if p[0] - self.t0 >= WARMUP_S:
                    start = p
                    break
        return t_end - start[0], b_end - start[1], r_end - start[2]

    def rate(self) -> float:
        """Steady-state MB/s."""
        dt, n_bytes, _ = self._window()
        return mb_per_s(n_bytes, dt)

    def parts(self, n: int = PARTS) -> list[float]:
        """MB/s in each of up to ``n`` equal stretches of the steady-state window's time (the
        bytes of the reads that ended in each), each at least ``MIN_PART_S`` long (a block
        throttle lets its budget through in slices of about 0.1 s: shorter stretches measure
        the slices); none where fewer than 3 such stretches, or fewer than 2 reads per
        stretch, were timed."""
        t_end = self.points[-1][0]
        dt, _, n_req = self._window()
        n = min(n, int(dt / MIN_PART_S)) if dt > 0 else 0
        if n < 3 or n_req < 2 * n:
            return []
        t_start = t_end - dt
        got = [0] * n
        prev_b = None
        for t, b, _ in self.points:
            if prev_b is not None and t > t_start:
                got[min(n - 1, int((t - t_start) / dt * n))] += b - prev_b
            prev_b = b
        return [mb_per_s(g, dt / n) for g in got]


def read_sequential(path: str, request: int, limit: int | None = None,
                    buf: bytearray | None = None, marks: Marks | None = None,
                    deadline: float | None = None, clock: Any = time.perf_counter) -> int:
    """Read ``path`` front to back in ``request``-byte reads (at most ``limit`` bytes, and
    none begun past ``deadline`` on ``clock``); return the bytes read."""
    buf = buf if buf is not None and len(buf) >= request else bytearray(request)
    view = memoryview(buf)[:request]
    total = 0
    with open(path, "rb", buffering=0) as fh:
        while (limit is None or total < limit) and (deadline is None or clock() < deadline):
            n = fh.readinto(view)
            if not n:
                break
            total += n
            if marks is not None:
                marks.add(n)
    return total


@dataclass
class FileSet:
    """The files a test reads, largest first, with their sizes."""

    paths: list[str]
    sizes: list[int]

    @classmethod
    def of(cls, paths: Sequence[str]) -> FileSet:
        pairs = sorted(((os.path.getsize(p), p) for p in paths), reverse=True)
        return cls([p for _, p in pairs], [s for s, _ in pairs])

    @property
    def total(self) -> int:
        return sum(self.sizes)

    def take(self, n_bytes: int, start: int = 0) -> list[str]:
        """Files (rotating from ``start``) holding about ``n_bytes``, at least one."""
        out: list[str] = []
        got = 0
        n = len(self.paths)
        for i in range(n):
            p = self.paths[(start + i) % n]
            out.append(p)
            got += self.sizes[(start + i) % n]
            if got >= n_bytes:
                break
        return out


# ---------------------------------------------------------------------------------------------
# cold and warm sequential


def sequential_rate(session: Session, files: FileSet, share_s: float, cold: bool,
                    test: str) -> Measurement:
    """MB/s of whole-file sequential reads with large requests, cold (evicted) or warm."""
    buf = bytearray(LARGE_REQUEST)
    # the first sample at most 64 MiB per second of the share (a large file is read only in
    # part: whole, it may take seconds on a slow disk)
    target = min(files.total, 64 * MiB, max(4 * MiB, int(64 * MiB * share_s)))
    start = last_bytes = 0
    evictions: list[Eviction] = []

    def read(chosen: list[str], marks: Marks | None = None) -> int:
        got = 0
        for p in chosen:
            got += read_sequential(p, LARGE_REQUEST, limit=target - got, buf=buf, marks=marks)
            if got >= target:
                break
        return got

    parts: list[float] = []

    def sample() -> float:
        nonlocal target, start, last_bytes
        chosen = files.take(target, start)
        start = (start + len(chosen)) % len(files.paths)
        if cold:
            evictions.extend(evict_all(chosen))
        else:  # make sure they are cached
            read(chosen)
        marks = Marks()
        n = read(chosen, marks)
        session.bytes_read += n
        last_bytes = n
        # size the next samples to take about a third of the share each: long enough that a
        # throttled device is measured at its sustained rate, and three fit
        rate = n / marks.seconds if marks.seconds > 0 else 1e9
        if cold:  # warm, the next sample keeps its size: making more bytes warm reads them cold
            target = int(min(MAX_SAMPLE_BYTES, max(MiB, rate * share_s / 3.5)))
        parts.extend(marks.parts())
        return marks.rate()

    label = "cold" if cold else "warm"
    samples = session.repeat(sample, share_s, test, f"{label} sequential reads")
    cond = Conditions(
        cache=cache_state(evictions) if cold else "warm",
        request_bytes=LARGE_REQUEST,
        pattern="sequential",
        bytes_per_sample=last_bytes,
        note=eviction_note(evictions) if cold else None,
    )
    m = measurement(samples, "MB/s", cond, parts)
    session.report(test, 1.0, f"{label} sequential", f"{m.median:,.0f} MB/s"
                   if m.median is not None else None)
    return m


# ---------------------------------------------------------------------------------------------
# request-size sweep


def _sweep_point(files: FileSet, request: int, pattern: Pattern, max_s: float,
                 max_bytes: int, rng: random.Random) -> tuple[Marks, list[Eviction]]:
    """The reads of one cold sweep point.  A file smaller than the request is read whole in
    one request (what a reader asking for that much gets from it)."""
    candidates = list(zip(files.paths, files.sizes, strict=True))
    evictions = list(evict_all([p for p, _ in candidates]))
    buf = bytearray(request)
    view = memoryview(buf)
    fds = []
    try:
        for p, _ in candidates:
            fd = os.open(p, os.O_RDONLY)
            fds.append(fd)
            advice = os.POSIX_FADV_RANDOM if pattern == "random" else os.POSIX_FADV_NORMAL
            os.posix_fadvise(fd, 0, 0, advice)
        marks = Marks()
        deadline = marks.t0 + max_s
        if pattern == "sequential":
            for fd, (_, size) in zip(fds, candidates, strict=True):
                off = 0
                while off < size and marks.bytes < max_bytes and time.perf_counter() < deadline:
                    n = os.preadv(fd, [view], off)
                    if n <= 0:
                        break
                    off += n
                    marks.add(n)
                if marks.bytes >= max_bytes or time.perf_counter() >= deadline:
                    break
        else:
            # distinct aligned offsets, so no request hits a page an earlier one cached
            slots = [(i, k) for i, (_, size) in enumerate(candidates)
                     for k in range(max(1, -(-size // request)))]
            rng.shuffle(slots)
            for i, k in slots:
                if marks.bytes >= max_bytes or time.perf_counter() >= deadline:
                    break
                marks.add(os.preadv(fds[i], [view], k * request))
    finally:
        for fd in fds:
            os.close(fd)
    return marks, evictions


def request_sweep(session: Session, files: FileSet, share_s: float,
                  sizes: Sequence[int] = REQUEST_SIZES, seed: int = 1) -> tuple[RequestPoint, ...]:
    """MB/s against request size, sequential and at random offsets, cold."""
    rng = random.Random(seed)
    patterns: tuple[Pattern, ...] = ("sequential", "random")
    points = [(s, pat) for s in sizes for pat in patterns]
    out: list[RequestPoint] = []
    for i, (size, pattern) in enumerate(points):
        session.check()
        # the smallest random reads give the IOPS figure: a quarter of the sweep's time, so
        # that a block-throttled (or busy) device is timed over seconds, not a burst
        if size == min(sizes) and pattern == "random" and len(points) > 1:
            per_point = share_s * IOPS_SHARE
        else:
            per_point = share_s * (1 - IOPS_SHARE) / max(1, len(points) - 1)
        samples: list[float] = []
        parts: list[float] = []
        evictions: list[Eviction] = []
        n_bytes = 0
        t_start = time.perf_counter()
        # repeat the point while there is time for it (at most 2 samples, each as long as
        # possible: short samples of a throttled or queued device read faster than it sustains)
        while len(samples) < 2:
            marks, ev = _sweep_point(files, size, pattern, per_point / 2,
                                     MAX_SAMPLE_BYTES // 4, rng)
            evictions.extend(ev)
            n_bytes = marks.bytes
            session.bytes_read += n_bytes
            if marks.requests:
                samples.append(marks.rate())
                parts.extend(marks.parts())
            if time.perf_counter() - t_start > per_point / 2 or not marks.requests:
                break
        m = measurement(samples, "MB/s", Conditions(
            cache=cache_state(evictions), request_bytes=size, pattern=pattern,
            bytes_per_sample=n_bytes, note=eviction_note(evictions)), parts)
        out.append(RequestPoint(request_bytes=size, pattern=pattern, mb_per_s=m.median,
                                measurement=m))
        session.report("request_sweep", (i + 1) / len(points),
                       f"{size // KiB} KiB {pattern}",
                       f"{m.median:,.1f} MB/s" if m.median is not None else None)
    return tuple(out)


@dataclass(frozen=True)
class AccessFit:
    access_time_ms: float | None
    bandwidth_mb_per_s: float | None
    iops_4k: float | None
    #: the device's form (``device_limit``): "additive", "max", or ``None`` (undecided)
    limit: DeviceLimit | None = None


DeviceLimit = Literal["additive", "max"]
#: The limiter form ("max") is chosen only where it fits the request sweep this many times
#: better (root-mean-square log error) than the additive one, the form the model had before.
#: The sweep's points are single short samples (10-30% apart from run to run on a throttled
#: disk), so a clear but not large margin: on six calibrations of the emulated 70 MB/s, 120
#: IOPS disk the max form fitted 1.15-3.0x better, on six of an unthrottled disk 1.5-2.1x worse.
LIMIT_MARGIN = 1.1
#: ... and where the form not chosen misses the points by more than this (root-mean-square
#: log error): below it the sweep cannot tell the forms apart (all its requests far from
#: ``access x bandwidth``, where both give the IOPS or both the bandwidth).
LIMIT_FLOOR = 0.03


def _form_time(form: str, access_s: float, mb_per_s: float, size: float) -> float:
    flow = size / (mb_per_s * 1e6)
    return max(access_s, flow) if form == "max" else access_s + flow


def _fit_form(form: str, pts: Sequence[tuple[float, float]], seq: float | None
              ) -> tuple[float, float, float]:
    """(access s, bandwidth MB/s, rms log error) of one form through the random points
    (size, MB/s) and, as a stream that needs no access, the sequential rate: the best pair on
    a grid of the candidates the points themselves give (each point's time per request as
    the access time, its rate or the sequential rate as the bandwidth), refined by a few
    rounds of multiplicative steps."""
    def err(a: float, bw: float) -> float:
        e = [math.log(s / _form_time(form, a, bw, s) / 1e6 / r) for s, r in pts]
        if seq:
            e.append(math.log(bw / seq))
        return math.sqrt(sum(x * x for x in e) / len(e))

    times = [s / (r * 1e6) for s, r in pts]
    bws = [r for _, r in pts] + ([seq] if seq else [])
    best = min(((err(a, bw), a, bw) for a in times for bw in bws), key=lambda x: x[0])
    e0, a, bw = best
    for step in (1.25, 1.1, 1.03, 1.01, 1.003, 1.001):
        moved = True
        while moved:
            moved = False
            for da, db in ((step, 1), (1 / step, 1), (1, step), (1, 1 / step)):
                e1 = err(a * da, bw * db)
                if e1 < e0 - 1e-12:
                    e0, a, bw, moved = e1, a * da, bw * db, True
    return a, bw, e0


def device_limit(points: Sequence[RequestPoint],
                 streaming_mb_per_s: float | None = None) -> tuple[DeviceLimit | None, float,
                                                                  float]:
    """Which form the device's time per request takes, from the cold random-offset reads of
    the request sweep (and the cold sequential rate): ``additive``, a disk (access time,
    then the transfer), or ``max``, a rate limiter (a throttled or cloud volume: the larger of
    one request slot and the bytes' share of the bandwidth).  Each form is fitted to the
    points; ``max`` is chosen where it fits ``LIMIT_MARGIN`` times better and the additive
    one misses by more than ``LIMIT_FLOOR``, ``additive`` the other way round, ``None`` where
    the points cannot tell them apart.  Returns (form, rms log error of the additive fit, of
    the max fit)."""
    pts = sorted((float(p.request_bytes), float(p.mb_per_s)) for p in points
                 if p.pattern == "random" and p.mb_per_s and p.mb_per_s > 0)
    if len(pts) < 3:
        return None, math.nan, math.nan
    *_, e_add = _fit_form("additive", pts, streaming_mb_per_s)
    *_, e_max = _fit_form("max", pts, streaming_mb_per_s)
    if e_max * LIMIT_MARGIN < e_add and e_add > LIMIT_FLOOR:
        return "max", e_add, e_max
    if e_add * LIMIT_MARGIN < e_max and e_max > LIMIT_FLOOR:
        return "additive", e_add, e_max
    return None, e_add, e_max


def fit_access(points: Sequence[RequestPoint],
               streaming_mb_per_s: float | None = None) -> AccessFit:
    """Access time and bandwidth of the storage: time per request = access + size / bandwidth.

    The bandwidth is the streaming rate (the cold sequential rate, when given), else the slope
    through the smallest and the largest random-offset request; the access time is what the
    smallest random request takes beyond its transfer.  Right for a disk (seek and rotation,
    then streaming) and for a device whose small reads are limited by IOPS and large ones by
    bandwidth (a block throttle, a network link)."""
    rnd = sorted((p.request_bytes, p.mb_per_s) for p in points
                 if p.pattern == "random" and p.mb_per_s and p.mb_per_s > 0)
    iops = None
    for size, rate in rnd:
        if size == 4 * KiB:
            iops = rate * 1e6 / size
    if not rnd:
        return AccessFit(None, streaming_mb_per_s, iops)
    s1, r1 = rnd[0]
    t1 = s1 / (r1 * 1e6)  # seconds per request
    bandwidth = streaming_mb_per_s
    if bandwidth is None and len(rnd) >= 2:
        s2, r2 = rnd[-1]
        t2 = s2 / (r2 * 1e6)
        if t2 > t1:
            bandwidth = (s2 - s1) / (t2 - t1) / 1e6
    if not bandwidth:
        return AccessFit(None, None, iops)
    limit, _, _ = device_limit(points, streaming_mb_per_s)
    # a rate limiter's smallest request costs one request slot, whatever its transfer
    access = t1 if limit == "max" else max(0.0, t1 - s1 / (bandwidth * 1e6))
    return AccessFit(access * 1e3, bandwidth, iops, limit)


# ---------------------------------------------------------------------------------------------
# concurrency sweep


def _reader(jobs: list[tuple[str, int, int]], barrier: object, queue: object) -> None:
    """Child process: read (path, offset, length) regions sequentially; report timings."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    buf = bytearray(LARGE_REQUEST)
    view = memoryview(buf)
    barrier.wait()  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    n_bytes = 0
    for path, offset, length in jobs:
        fd = os.open(path, os.O_RDONLY)
        try:
            end = offset + length
            off = offset
            while off < end:
                n = os.preadv(fd, [view[: min(LARGE_REQUEST, end - off)]], off)
                if n <= 0:
                    break
                off += n
                n_bytes += n
        finally:
            os.close(fd)
    queue.put((t0, time.perf_counter(), n_bytes))  # type: ignore[attr-defined]


def assign(files: FileSet, workers: int, quota: int) -> list[list[tuple[str, int, int]]]:
    """Give each worker its own data: different files where there are enough (whole, or their
    first ``quota`` bytes), otherwise different regions of the files.  Each worker gets about
    ``quota`` bytes."""
    jobs: list[list[tuple[str, int, int]]] = [[] for _ in range(workers)]
    if len(files.paths) >= workers:
        w = 0
        got = [0] * workers
        for p, s in zip(files.paths, files.sizes, strict=True):
            if all(g >= quota for g in got):
                break
            while got[w] >= quota:
                w = (w + 1) % workers
            length = min(s, quota)  # a file larger than the quota: its first part
            jobs[w].append((p, 0, length))
            got[w] += length
            w = (w + 1) % workers
        return jobs
    # fewer files than workers: contiguous regions of the files, ``per`` bytes each
    per = max(LARGE_REQUEST, min(quota, files.total // workers))
    w, need = 0, per
    for p, s in zip(files.paths, files.sizes, strict=True):
        off = 0
        while off < s and w < workers:
            length = min(need, s - off)
            jobs[w].append((p, off, length))
            off += length
            need -= length
            if need == 0:
                w, need = w + 1, per
    return [j for j in jobs if j]


def concurrency_sweep(session: Session, files: FileSet, share_s: float,
                      workers: Sequence[int]) -> tuple[ConcurrencyPoint, ...]:
    """Aggregate cold MB/s of k processes, each reading different data, for each k."""
    ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    out: list[ConcurrencyPoint] = []
    per_k = share_s / max(1, len(workers))
    quota = 16 * MiB
    for i, k in enumerate(workers):
        samples: list[float] = []
        evictions: list[Eviction] = []
        t_start = time.perf_counter()
        n_total = 0
        while len(samples) < 3:
            session.check()
            jobs = assign(files, k, quota)
            used = sorted({p for job in jobs for p, _, _ in job})
            evictions.extend(evict_all(used))
            barrier = ctx.Barrier(len(jobs) + 1)
            queue = ctx.Queue()
            procs = [ctx.Process(target=_reader, args=(job, barrier, queue), daemon=True)
                     for job in jobs]
            try:
                start_processes(procs)
                barrier.wait(timeout=60)
                results = [queue.get(timeout=max(60.0, per_k * 4)) for _ in procs]
                for p in procs:
                    p.join(timeout=10)
            finally:
                end_processes(procs)
            start = min(r[0] for r in results)
            end = max(r[1] for r in results)
            n_total = sum(r[2] for r in results)
            session.bytes_read += n_total
            samples.append(mb_per_s(n_total, end - start))
            dt = end - start
            # size the next sample so that k workers take about a quarter of this point's share
            rate = n_total / dt if dt > 0 else 1e9
            quota = int(min(MAX_SAMPLE_BYTES // max(k, 1), max(MiB, rate * per_k / 4 / k)))
            if time.perf_counter() - t_start > per_k * 2 / 3:
                break
        m = measurement(samples, "MB/s", Conditions(
            cache=cache_state(evictions), workers=k, request_bytes=LARGE_REQUEST,
            pattern="sequential", bytes_per_sample=n_total, note=eviction_note(evictions)))
        out.append(ConcurrencyPoint(workers=k, aggregate_mb_per_s=m.median, measurement=m))
        session.report("concurrency", (i + 1) / len(workers), f"{k} workers",
                       f"{m.median:,.0f} MB/s" if m.median is not None else None)
    return tuple(out)
