"""Attribution: every traced read mapped onto the files' basket maps.

Each read of a ROOT file is one of

- ``basket``: basket data (the baskets it overlaps are named: branch and basket index);
- ``key``: a basket's key header read alone -- a read that starts at a basket's offset, is not
  continued by the same thread's next read, and either stops inside the basket or is followed
  later by another read of the basket's first byte (uproot's memory-size ``step_size`` reads every
  basket's key first, to learn its uncompressed size, through a 4 kB buffer that may cover a
  small basket whole), or one that lies within the key header;
- ``metadata``: the file header, the list of keys, the streamers, the TTree record;
- ``other``: anything else (free segments, objects other than the tree).

A read that starts in a metadata region is metadata (a buffered reader may read on into the
baskets); any other read that is not a key read and overlaps several kinds takes the kind
with most bytes.
Then, per file and overall: the bytes read twice or more (re-reads), the bytes of the baskets
the data reads touched (``bytes_needed``) and the amplification (bytes read / bytes needed),
requests per cluster, and the program's phases over time (opening, key pre-pass, reading,
processing).  Exact: intervals and offsets only, no sampling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.trace import TracedRead

KINDS = ("basket", "key", "metadata", "other")


@dataclass(frozen=True)
class Classified:
    read: TracedRead
    kind: str
    baskets: tuple[tuple[int, int], ...] = ()  # (branch index, basket index) it overlaps


@dataclass(frozen=True)
class FileAttribution:
    path: str
    opens: int
    requests: int
    bytes: int
    bytes_needed: int  # on-disk bytes of the baskets the data reads touched
    by_kind: dict[str, tuple[int, int]]  # kind -> (requests, bytes)
    reread_bytes: int
    baskets_read: int
    baskets_total: int
    branches_read: tuple[str, ...]
    branches_total: int
    clusters_read: int
    key_baskets: int  # baskets whose key was read alone


@dataclass(frozen=True)
class PhaseSpan:
    name: str
    start_s: float
    end_s: float
    requests: int
    bytes: int


@dataclass(frozen=True)
class Attribution:
    files: tuple[FileAttribution, ...]
    reads: tuple[Classified, ...]
    phases: tuple[PhaseSpan, ...]
    io_s: float  # time inside read calls (overlapping calls of several threads counted once)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        out = {k: (0, 0) for k in KINDS}
        for f in self.files:
            for k, (n, b) in f.by_kind.items():
                out[k] = (out[k][0] + n, out[k][1] + b)
        return out

    @property
    def requests(self) -> int:
        return sum(f.requests for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def bytes_needed(self) -> int:
        return sum(f.bytes_needed for f in self.files)

    @property
    def amplification(self) -> float | None:
        need = self.bytes_needed
        return self.bytes / need if need > 0 else None

    @property
    def reread_bytes(self) -> int:
        return sum(f.reread_bytes for f in self.files)

    def kind_time_s(self, kind: str) -> float:
        """Seconds inside the read calls of one kind (summed)."""
        return sum(c.read.duration_s for c in self.reads if c.kind == kind)

    def phase(self, name: str) -> PhaseSpan | None:
        return next((p for p in self.phases if p.name == name), None)


# ---------------------------------------------------------------------------------------------


class _Index:
    """A map's baskets sorted by offset, with their key lengths, for interval look-ups."""

    def __init__(self, m: BasketMap) -> None:
        rows = [(int(s), int(n), int(k), b.index, i)
                for b in m.branches
                for i, (s, n, k) in enumerate(zip(b.seek, b.nbytes, b.keylen, strict=True))]
        rows.sort()
        arr = np.asarray(rows, dtype=np.int64).reshape(-1, 5)
        self.seek, self.nbytes, self.keylen = arr[:, 0], arr[:, 1], arr[:, 2]
        self.end = self.seek + self.nbytes
        self.branch, self.basket = arr[:, 3], arr[:, 4]
        self.regions = [(r.offset, r.stop) for r in m.regions if not r.name.endswith("keylen")]

    def overlapping(self, a: int, b: int) -> range:
        lo = int(np.searchsorted(self.end, a, side="right"))
        hi = int(np.searchsorted(self.seek, b, side="left"))
        return range(lo, max(lo, hi))

    def at(self, offset: int) -> int:
        i = int(np.searchsorted(self.seek, offset, side="left"))
        return i if i < len(self.seek) and int(self.seek[i]) == offset else -1


def _overlap(a: int, b: int, lo: int, hi: int) -> int:
    return max(0, min(b, hi) - max(a, lo))


def _meta_bytes(a: int, b: int, regions: Sequence[tuple[int, int]]) -> int:
    spans = sorted((max(a, lo), min(b, hi)) for lo, hi in regions if min(b, hi) > max(a, lo))
    total, end = 0, a
    for lo, hi in spans:
        lo = max(lo, end)
        if hi > lo:
            total += hi - lo
            end = hi
    return total


def classify(reads: Sequence[TracedRead], m: BasketMap) -> list[Classified]:
    """The kind of each read of ``m``'s file (``reads`` in the order they were issued)."""
    ix = _Index(m)
    # the last read that covers each basket's first byte: an earlier read starting there
    # (and not continued by the next read) fetched its key only, the data came later
    last_cover: dict[int, int] = {}
    for n, r in enumerate(reads):
        for j in ix.overlapping(r.offset, r.stop):
            if r.offset <= int(ix.seek[j]) < r.stop:
                last_cover[j] = n
    # the next read by the same thread: threads reading ranges at once interleave in the trace
    following: dict[int, TracedRead] = {}
    nxt_of: list[TracedRead | None] = [None] * len(reads)
    for n in range(len(reads) - 1, -1, -1):
        nxt_of[n] = following.get(reads[n].pid)
        following[reads[n].pid] = reads[n]
    out: list[Classified] = []
    for n, r in enumerate(reads):
        a, b = r.offset, r.stop
        i = ix.at(a)
        nxt = nxt_of[n]
        continued = nxt is not None and nxt.offset == b
        if i >= 0 and int(ix.keylen[i]) > 0 and (  # (an RNTuple's pages have no key)
                b <= a + int(ix.keylen[i])
                or (not continued and (b < int(ix.end[i]) or last_cover[i] > n))):
            out.append(Classified(r, "key", ((int(ix.branch[i]), int(ix.basket[i])),)))
            continue
        if any(lo <= a < hi for lo, hi in ix.regions):  # what was asked for starts there
            out.append(Classified(r, "metadata"))
            continue
        hit = ix.overlapping(a, b)
        basket_bytes = sum(_overlap(a, b, int(ix.seek[j]), int(ix.end[j])) for j in hit)
        meta = _meta_bytes(a, b, ix.regions) if ix.regions else 0
        other = max(r.size - basket_bytes - meta, 0)
        kind = max((("basket", basket_bytes), ("metadata", meta), ("other", other)),
                   key=lambda kv: kv[1])[0]
        touched = tuple((int(ix.branch[j]), int(ix.basket[j])) for j in hit)
        out.append(Classified(r, kind, touched if kind == "basket" else ()))
    return out


def reread_bytes(reads: Sequence[TracedRead]) -> int:
    """Bytes read more than once: the sum of the sizes less the size of their union."""
    spans = sorted((r.offset, r.stop) for r in reads if r.size > 0)
    union, end = 0, -1
    for lo, hi in spans:
        lo = max(lo, end)
        if hi > lo:
            union += hi - lo
            end = hi
    return sum(r.size for r in reads) - union


def busy_s(reads: Sequence[TracedRead]) -> float:
    """Seconds during which at least one read call was in progress."""
    spans = sorted((r.start_s, r.start_s + r.duration_s) for r in reads)
    total, end = 0.0, float("-inf")
    for lo, hi in spans:
        lo = max(lo, end)
        if hi > lo:
            total += hi - lo
            end = hi
    return total


def _file(path: str, reads: list[Classified], m: BasketMap | None, opens: int) -> FileAttribution:
    by_kind: dict[str, list[int]] = {k: [0, 0] for k in KINDS}
    for c in reads:
        by_kind[c.kind][0] += 1
        by_kind[c.kind][1] += c.read.size
    touched = {bk for c in reads if c.kind == "basket" for bk in c.baskets}
    keys = {bk for c in reads if c.kind == "key" for bk in c.baskets}
    need = 0
    names: list[str] = []
    clusters = 0
    total_baskets = 0
    if m is not None:
        total_baskets = m.baskets
        starts: set[int] = set()
        for bi, j in touched:
            br = m.branches[bi]
            need += int(br.nbytes[j])
            starts.add(int(br.entries[j]))
        names = [m.branches[i].name for i in sorted({bi for bi, _ in touched})]
        if len(m.clusters) > 1 and starts:
            cl = np.searchsorted(m.clusters, np.fromiter(starts, dtype=np.int64), side="right")
            clusters = len(set(cl.tolist()))
    plain = [c.read for c in reads]
    return FileAttribution(
        path=path, opens=opens, requests=len(reads), bytes=sum(r.size for r in plain),
        bytes_needed=need, by_kind={k: (v[0], v[1]) for k, v in by_kind.items()},
        reread_bytes=reread_bytes(plain), baskets_read=len(touched),
        baskets_total=total_baskets, branches_read=tuple(names),
        branches_total=len(m.branches) if m is not None else 0, clusters_read=clusters,
        key_baskets=len(keys))


def phases(reads: Sequence[Classified], wall_s: float, min_keys: int = 2) -> list[PhaseSpan]:
    """Opening (before the first basket or key read), the key pre-pass (first to last key
    read, when there are ``min_keys`` or more), reading (first to last basket read) and
    processing (after the last read, to the end)."""
    if not reads:
        return [PhaseSpan("processing", 0.0, wall_s, 0, 0)]
    ordered = sorted(reads, key=lambda c: c.read.start_s)

    def span(name: str, lo: float, hi: float) -> PhaseSpan:
        inside = [c.read for c in ordered if lo <= c.read.start_s < hi or
                  (hi == lo and c.read.start_s == lo)]
        return PhaseSpan(name, lo, hi, len(inside), sum(r.size for r in inside))

    def edge(kind: str) -> tuple[float, float] | None:
        ts = [(c.read.start_s, c.read.start_s + c.read.duration_s)
              for c in ordered if c.kind == kind]
        return (ts[0][0], max(t[1] for t in ts)) if ts else None

    out = []
    first = ordered[0].read.start_s
    data, keys = edge("basket"), edge("key")
    firsts = [e[0] for e in (data, keys) if e is not None]
    if firsts and min(firsts) > first:
        out.append(span("opening", first, min(firsts)))
    n_keys = sum(1 for c in ordered if c.kind == "key")
    if keys is not None and n_keys >= min_keys:
        out.append(span("pre-pass", *keys))
    if data is not None:
        out.append(span("reading", *data))
    last = max(c.read.start_s + c.read.duration_s for c in ordered)
    out.append(PhaseSpan("processing", last, max(wall_s, last), 0, 0))
    return out


def attribute(reads: Sequence[TracedRead], maps: Mapping[str, BasketMap],
              opens: Mapping[str, int] | None = None, wall_s: float = 0.0) -> Attribution:
    """Attribute ``reads`` (in issue order) onto ``maps`` (by file path; a file without a map
    has only metadata and other reads)."""
    by_file: dict[str, list[TracedRead]] = {}
    for r in reads:
        by_file.setdefault(r.file, []).append(r)
    files: list[FileAttribution] = []
    classified: list[Classified] = []
    for path, rs in by_file.items():
        m = maps.get(path)
        cs = classify(rs, m) if m is not None else [Classified(r, "other") for r in rs]
        classified.extend(cs)
        files.append(_file(path, cs, m, (opens or {}).get(path, 0)))
    classified.sort(key=lambda c: c.read.start_s)
    return Attribution(tuple(files), tuple(classified), tuple(phases(classified, wall_s)),
                       busy_s(reads))


# ---------------------------------------------------------------------------------------------
# The device, as the trace saw it


@dataclass(frozen=True)
class TracedDevice:
    """Bandwidth and access time estimated from the trace's own cold reads, with the
    quartiles that bound them (None where the trace holds no read that reached the device)."""

    mb_per_s: float
    access_s: float
    mb_per_s_range: tuple[float, float]
    access_s_range: tuple[float, float]
    small_reads: int
    large_reads: int
    streamed: bool = False  # the bandwidth from a sequential read after the run
    device_reads: int | None = None  # set where the access time came from the block counters
    #: where the figures came from when not from the trace's own reads: "calibration" (a
    #: cached calibration of these files) or "throttle" (the cgroup's read limits); None:
    #: the trace (and a sequential read after it, ``streamed``)
    source: str | None = None


#: A read shorter than this that took longer than ``COLD_S`` paid an access.
SMALL_READ = 64 * 1024
LARGE_READ = 256 * 1024
COLD_S = 5e-4


def _bandwidth(large: Sequence[tuple[int, float]], access: float) -> tuple[float, float, float]:
    """Median and quartiles of the large reads' rates (bytes over duration less one access)."""
    rates = np.asarray([n / max(d - access, d / 2) / 1e6 for n, d in large])
    return (float(np.median(rates)), float(np.percentile(rates, 25)),
            float(np.percentile(rates, 75)))


def access_from_counters(io_s: float, device_reads: int, device_bytes: int, mb_per_s: float
                         ) -> float | None:
    """The mean access time per read the device served: the time inside read calls less the
    transfer of the bytes it served, over its reads; None where it cannot be told (no reads
    counted, no bandwidth, or the transfer alone explains the time)."""
    if device_reads <= 0 or mb_per_s <= 0 or io_s <= 0:
        return None
    access = (io_s - device_bytes / (mb_per_s * 1e6)) / device_reads
    return access if access > 0 else None


def device_from_trace(reads: Sequence[TracedRead], streaming_mb_per_s: float | None = None,
                      device_reads: int | None = None, device_bytes: int | None = None,
                      trust_large: bool = True) -> TracedDevice | None:
    """Bandwidth from the large cold reads (256 KiB or more: bytes over duration less one
    access); with fewer than 3, ``streaming_mb_per_s`` (a measured cold sequential read) where
    given, the range spanning both (one large read after a scattered pre-pass is served in
    pieces, between the pages the pre-pass's read-ahead left cached: a rate bound by the
    device's operations, not its bandwidth); where there is none, ``streaming_mb_per_s``,
    +-20%.  Access time: where
    the block device's counters during the run are given
    (``device_reads``, ``device_bytes``), (time inside the read calls - bytes / bandwidth) /
    reads, bounded by the bandwidth's quartiles -- a throttled or queued device serves many
    reads at once, so the duration of one small read overstates what each costs; otherwise the
    median duration of the small reads that missed the page cache (quartiles).
    ``trust_large=False``: the large reads may have been served in pieces (they followed a
    key pre-pass whose read-ahead left pages cached between them): the bandwidth is then the
    measured ``streaming_mb_per_s`` alone."""
    small = np.asarray([r.duration_s for r in reads
                        if r.size <= SMALL_READ and r.duration_s > COLD_S])
    large = [(r.size, r.duration_s) for r in reads
             if r.size >= LARGE_READ and r.duration_s > COLD_S]
    if len(small) < 3 and len(large) < 1:
        return None
    if not trust_large and streaming_mb_per_s is not None and streaming_mb_per_s > 0:
        large = []
    access = float(np.median(small)) if len(small) >= 3 else 0.0
    a_lo, a_hi = ((float(np.percentile(small, 25)), float(np.percentile(small, 75)))
                  if len(small) >= 3 else (0.0, 0.0))
    streamed = streaming_mb_per_s is not None and streaming_mb_per_s > 0 and len(large) < 3
    counted = None
    io = busy_s(reads)
    for _ in range(10):  # the bandwidth and the counted access time depend on each other
        if large:
            bw, bw_lo, bw_hi = _bandwidth(large, access)
            if streamed:  # too few for quartiles: span both; the sequential read central
                assert streaming_mb_per_s is not None
                bw_lo, bw_hi = min(bw_lo, streaming_mb_per_s), max(bw_hi, streaming_mb_per_s)
                bw = streaming_mb_per_s
        elif streamed:
            assert streaming_mb_per_s is not None
            bw = streaming_mb_per_s
            bw_lo, bw_hi = bw / 1.2, bw * 1.2
        else:  # no large cold read: the cold reads' bytes over their time bound it from below
            cold = [r for r in reads if r.duration_s > COLD_S]
            bw = sum(r.size for r in cold) / max(sum(r.duration_s for r in cold), 1e-9) / 1e6
            bw_lo, bw_hi = bw, bw * 10  # unconstrained above: a wide range, said so by the rule
        if not device_reads or device_bytes is None:
            break
        est = access_from_counters(io, device_reads, device_bytes, bw)
        if est is None:
            break
        counted = device_reads
        access, before = est, access
        lo = access_from_counters(io, device_reads, device_bytes, bw_lo)
        hi = access_from_counters(io, device_reads, device_bytes, bw_hi)
        a_lo, a_hi = min(lo or 0.0, access), max(hi or access, access)
        if not large or abs(access - before) < 1e-4 * access:  # converged (or independent)
            break
    return TracedDevice(bw, access, (bw_lo, bw_hi), (a_lo, a_hi), len(small), len(large),
                        streamed, counted)


# ---------------------------------------------------------------------------------------------
# The network link, as the trace saw it (remote files: the Python recorder's requests)


@dataclass(frozen=True)
class TracedLink:
    """Round trip and bandwidth estimated from the trace's own remote requests."""

    rtt_s: float
    mb_per_s: float
    rtt_s_range: tuple[float, float]
    mb_per_s_range: tuple[float, float]
    small_reads: int
    large_reads: int


def link_from_trace(reads: Sequence[TracedRead]) -> TracedLink | None:
    """Round trip: the median duration (quartiles) of the single requests of 64 KiB or less
    to a URL; bandwidth: the requests (a vector read counted once, with all its bytes) of
    256 KiB or more, bytes over their duration less one round trip (median, quartiles; with
    fewer than 3, their range); without any, the remote bytes over the time in requests (a
    lower bound, its range 10x).  None with fewer than 3 small requests."""
    remote = [r for r in reads if "://" in r.file]
    small = np.asarray([r.duration_s for r in remote if r.group == 0 and r.size <= SMALL_READ])
    if len(small) < 3:
        return None
    rtt = float(np.median(small))
    r_lo, r_hi = float(np.percentile(small, 25)), float(np.percentile(small, 75))
    calls: dict[tuple[int, int], list[float]] = {}
    for n, r in enumerate(remote):
        key = (r.group, 0) if r.group else (0, n)
        got = calls.setdefault(key, [0.0, r.duration_s])
        got[0] += r.size
    large = [(b, d) for b, d in calls.values() if b >= LARGE_READ and d > rtt]
    if large:
        rates = np.asarray([b / max(d - rtt, d / 2) / 1e6 for b, d in large])
        bw = float(np.median(rates))
        lo, hi = ((float(np.percentile(rates, 25)), float(np.percentile(rates, 75)))
                  if len(rates) >= 3 else (float(rates.min()), float(rates.max())))
    else:
        total = sum(b for b, _ in calls.values())
        busy = sum(d for _, d in calls.values())
        bw = total / max(busy, 1e-9) / 1e6
        lo, hi = bw, bw * 10
    return TracedLink(rtt, bw, (r_lo, r_hi), (lo, hi), len(small), len(large))


# ---------------------------------------------------------------------------------------------
# The program's threads, as sampled (probes.trace.sampler): when they ran beside the main one


@dataclass(frozen=True)
class ThreadTime:
    """Seconds, from the main thread's point of view (its time is the program's wall time).

    ``overlap``: the other threads' activity (CPU, time in reads not on a core) while the main
    thread was itself on a core, waiting for one or in a recorded wait: counted in the CPU time
    (or the reads) *and* in the main thread's time, to be taken off once; ``beside``: their
    activity while the main thread waited for nothing recorded (it waited for them);
    ``waits``: the main thread's recorded waits (their union); ``other_waits``: the other
    threads' time in reads or waits, not on a core; ``inside_samples``: the samples that fell
    in the main thread's waits; ``outside`` / ``inside``: state letter -> seconds the main
    thread was sampled in that state outside / inside its recorded waits (each sample stands
    for the time since the one before): ``D`` waiting for a disk, ``t`` stopped by a tracer,
    ``S`` asleep, ``R`` on a core or waiting for one."""

    overlap: float
    beside: float
    other_cpu: float
    waits: float = 0.0
    other_waits: float = 0.0
    inside_samples: int = 0
    outside: dict[str, float] = field(default_factory=dict)
    inside: dict[str, float] = field(default_factory=dict)


def _inside(spans: Sequence[tuple[float, float]], lo: float, hi: float) -> float:
    """Seconds of the sorted, disjoint ``(start, end)`` spans inside ``[lo, hi]``."""
    import bisect

    total = 0.0
    for a, b in spans[max(bisect.bisect_right(spans, (lo, lo)) - 1, 0):]:
        if b <= lo:
            continue
        if a >= hi:
            break
        total += min(b, hi) - max(a, lo)
    return total


def _minus(spans: Sequence[tuple[float, float]], cut: Sequence[tuple[float, float]]
           ) -> list[tuple[float, float]]:
    """The sorted, disjoint ``spans`` less the sorted, disjoint ``cut``."""
    out: list[tuple[float, float]] = []
    j = 0
    for a, b in spans:
        while j < len(cut) and cut[j][1] <= a:
            j += 1
        k = j
        while a < b:
            if k >= len(cut) or cut[k][0] >= b:
                out.append((a, b))
                break
            if cut[k][0] > a:
                out.append((a, cut[k][0]))
            a = max(a, cut[k][1])
            k += 1
    return out


def _union(spans: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif b > a:
            out.append((a, b))
    return out


def thread_overlap(samples: Sequence[object], main: int, main_waits: Sequence[tuple[float, float]],
                   cpu_s: float, main_cpu_s: float, wall_s: float,
                   other_waits: Sequence[tuple[float, float]] = (),
                   other_wait_share: float = 1.0) -> ThreadTime:
    """The main thread's time against its threads' (see :class:`ThreadTime`), interval by
    interval between two samples (``Sample``: ``t``, ``state``, ``threads``: tid -> (ns on a
    core, ns waiting for one)).  The other threads' CPU in all is exact (``cpu_s -
    main_cpu_s``: ``wait4`` and the main thread's schedstat); ``main_waits``: ``(start,
    seconds)`` the main thread spent in recorded reads or waits for data; ``other_waits``: the
    other threads' (requests in flight at once counted once, and not while the main thread
    waited itself; that time, times ``other_wait_share``, the share not on a core, counts as
    their activity).  In an interval of ``dt`` seconds the main thread was
    unaccounted for ``dt`` less its time on a core, waiting for one and in recorded waits; the
    other threads' activity up to that is ``beside``, the rest ``overlap``.  Their CPU the
    samples did not see (threads that ended between two, child processes) is put against the
    main thread's unaccounted time after the last sample."""
    spans = _union([(a, a + d) for a, d in main_waits])
    others = _minus(_union([(a, a + d) for a, d in other_waits]), spans)
    prev_t = 0.0
    prev: dict[int, tuple[int, int]] = {}
    seen_other = beside = 0.0
    n_inside = 0
    outside: dict[str, float] = {}
    inside: dict[str, float] = {}
    for s in samples:
        t, state, threads = s.t, s.state, s.threads  # type: ignore[attr-defined]
        dt = t - prev_t
        if dt <= 0:
            continue
        where = inside if _inside(spans, t - 1e-9, t) > 0 else outside
        n_inside += where is inside
        where[state] = where.get(state, 0.0) + dt
        m_run, m_wait = threads.get(main, (0, 0))
        p_run, p_wait = prev.get(main, (0, 0))
        main_busy = (m_run - p_run + m_wait - p_wait) / 1e9
        waited = _inside(spans, prev_t, t)
        other = sum(r - prev.get(tid, (0, 0))[0] for tid, (r, _w) in threads.items()
                    if tid != main) / 1e9
        other = max(other, 0.0) + other_wait_share * _inside(others, prev_t, t)
        seen_other += other
        beside += min(other, max(dt - main_busy - waited, 0.0))
        prev_t, prev = t, dict(threads)
    theirs = other_wait_share * sum(b - a for a, b in others)
    other_cpu = max(cpu_s - main_cpu_s, 0.0) + theirs
    rest = max(other_cpu - seen_other, 0.0)
    if rest > 0 and wall_s > prev_t:  # unseen CPU: against the time after the last sample
        tail_busy = max(main_cpu_s - prev.get(main, (0, 0))[0] / 1e9, 0.0)
        idle = max(wall_s - prev_t - tail_busy - _inside(spans, prev_t, wall_s), 0.0)
        beside += min(rest, idle)
    beside = min(beside, other_cpu)
    return ThreadTime(other_cpu - beside, beside, other_cpu, sum(b - a for a, b in spans),
                      theirs, n_inside, outside, inside)
