"""The rate equations (Ganis' model, extended), as plain vectorised functions.

One worker reads compressed data at rate R (MB/s, MB = 10^6 bytes) from a file of file_MB:

    t_io  = file_MB / R_io(request)                               its reads
    t_cpu = file_MB (1/R_dec + 1/R_proc) + calls t_call
            + (baskets + straddles) t_basket                      its CPU work
    R_1   = file_MB / (t_open + t_io + t_cpu - phi min(t_io, t_cpu))
    R_io(request) = request / (access + request / B)        one stream on one device

``phi`` (``io_overlap``) is the share of the shorter of a file's read time and CPU time that
the longer hides: 0 for a reader that reads, then computes (ROOT's ``GetEntry`` reads each
basket in the loop's thread when it needs it), up to 1 for one whose reads run behind its CPU
work (uproot's source threads fetch a call's baskets while the worker decompresses and
interprets those already arrived, its fixed costs per branch and basket included), so that
the larger binds.  Opening a file reads its metadata before anything else: never hidden.

R_1 holds the fixed costs of a file, paid serially by its worker: opening it, a fixed cost per
read call, and a fixed cost per basket read (what an engine spends to find, fetch, unpack and
interpret one basket whatever its size: with tiny baskets it dominates).  N workers on N_io
independent devices, each delivering R_io:

    R_total(N) = N_e R_1 / (1 + (N_e - 1) R_1 / (N_io R_io))

where N_e counts the workers the cores can run: each core counts 1, each extra hyper-thread
``ht_weight``, and workers beyond the logical cores add nothing to it; for CPU work they take
something away (``oversubscribed``: the share of the logical cores' rate left at twice their
number, linearly between); no more workers than units of work (files, clusters, packets) are
busy; and for the analysis' CPU work each core beyond the first adds ``parallel_efficiency``
(shared caches, memory bandwidth, other users).  Data in the page cache reads at the cache
rate with no device contention; remote data crosses a link of a given rate and per-request
latency, whose capacity caps the total (a smooth minimum keeps the model differentiable for
the fit).

``basket_s`` (and the ``baskets`` column) came last, with a default of 0, so that older site
descriptions, configurations and code keep their meaning: no per-basket cost.  ``straddles``
came after it, also 0 by default: the baskets a file's read calls interpret again.  uproot's
``iterate`` keeps a basket that its step ends inside for the next step, without reading or
decompressing it again, but interprets it again whole in every step it overlaps: a file read in
``c`` calls whose steps fall inside baskets touches about ``(c - 1)`` baskets more per branch
read.  On 2 files of 159 branches and 728 baskets each, warm, steps of 12,000, 1,750 and 500
entries touched 728, 1,682 and 4,226 baskets per file and took 0.70, 1.37 and 3.1 s: 0.34 ms per
extra touch in both steps of the sweep, with the same bytes decompressed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Columns of a configuration matrix X, in order.
FEATURES = (
    "workers",        # worker processes (or threads) reading in parallel
    "request_bytes",  # mean size of one read request reaching the storage
    "file_mb",        # compressed MB read per file (after branch selection)
    "io",             # 1: the data comes from storage (or cache/network); 0: from memory
    "cached",         # 1: the data is in the page cache
    "remote",         # 1: the data crosses the network link
    "decompress",     # 1: the job decompresses what it reads
    "process",        # 1: the job runs the analysis (processing) on what it reads
    "opens",          # 1: the job opens each file (ROOT metadata) before reading it
    "calls",          # read calls per file (each pays a fixed cost: finding baskets, arrays)
    "units",          # units of parallel work (files, clusters, packets); 0: unlimited
    "baskets",        # baskets read per file (each pays a fixed cost: find, fetch, unpack)
    "straddles",      # baskets read again per file: a call's step that ends inside a basket
                      # leaves it to the next call, which interprets it again (uproot)
    "device_ios",     # device I/Os of one file opened and read whole, cold, from a local
                      # device (its metadata reads, the read-ahead's ramp; replayed); 0: not
                      # known, file_mb / request_bytes (its read-ahead windows)
)
N_FEATURES = len(FEATURES)

#: Fitted parameters, in order, with their units.
PARAMS = (
    "storage_mb_per_s",     # B: streaming rate of one device
    "access_ms",            # access time per read request on the device
    "storage_overlap",      # share of the shorter of access and transfer the longer hides
    "devices",              # N_io: independent devices the data sits on
    "decompress_mb_per_s",  # per core, compressed MB/s
    "process_mb_per_s",     # per core, compressed MB/s
    "open_s",               # per file
    "cache_mb_per_s",       # page-cache rate of one stream
    "network_mb_per_s",     # the link's capacity (remote data only)
    "latency_ms",           # per request over the link (remote data only)
    "call_s",               # fixed cost of one read call, per call
    "parallel_efficiency",  # what each core beyond the first adds to the analysis' CPU work
    "basket_s",             # fixed cost of one basket read, per basket
    "io_overlap",           # share of the shorter of a worker's I/O and CPU the longer hides
    "oversubscribed",       # rate at twice the logical cores' workers / at the logical cores'
)

#: A smooth minimum's sharpness (p-norm exponent): within 1% of min() past a 2x ratio.
SOFTMIN_P = 8.0


@dataclass(frozen=True)
class Params:
    """The physical parameters of one site and workload (see ``PARAMS``)."""

    storage_mb_per_s: float
    access_ms: float
    devices: float
    decompress_mb_per_s: float
    process_mb_per_s: float
    open_s: float
    cache_mb_per_s: float
    network_mb_per_s: float = 1e6
    latency_ms: float = 0.0
    call_s: float = 0.0
    parallel_efficiency: float = 1.0
    basket_s: float = 0.0
    #: 0: a disk (each request's access time, then its transfer: they add); 1: a rate limiter
    #: (a throttled or cloud volume: its byte and request budgets refill together, the larger
    #: of the two times binds).  Last, with a default of 0, so that older descriptions and
    #: positional construction keep their meaning; ``PARAMS`` lists it after ``access_ms``.
    storage_overlap: float = 0.0
    #: 0: a worker reads, then computes (ROOT's ``GetEntry``: each basket when the loop needs
    #: it); 1: its reads run behind its CPU work (a reader fetching ahead in threads), so the
    #: larger of the two binds.  Last, with a default of 0, for the same reason.
    io_overlap: float = 0.0
    #: workers beyond the logical cores share them: at twice the logical cores the CPU work
    #: runs at this share of the logical cores' rate (context switches, caches evicted by the
    #: other workers), linearly between.  Last, with a default of 1 (no loss), likewise.
    oversubscribed: float = 1.0

    def vector(self) -> np.ndarray:
        """The parameters in the order of ``PARAMS``."""
        return np.array([getattr(self, n) for n in PARAMS], dtype=float)

    @classmethod
    def from_vector(cls, v: np.ndarray) -> Params:
        return cls(**{n: float(x) for n, x in zip(PARAMS, v, strict=True)})


@dataclass(frozen=True)
class Cores:
    """The CPU: physical cores, hardware threads per core, and what an extra thread is worth."""

    cores: int
    threads_per_core: int = 1
    ht_weight: float = 0.3

    def effective(self, workers: np.ndarray) -> np.ndarray:
        """Workers the cores can run at full speed (extra hyper-threads count ``ht_weight``)."""
        n = np.asarray(workers, dtype=float)
        on_cores = np.minimum(n, self.cores)
        extra_threads = self.cores * max(self.threads_per_core - 1, 0)
        on_threads = np.clip(n - self.cores, 0.0, extra_threads)
        return on_cores + self.ht_weight * on_threads

    def oversubscribed(self, workers: np.ndarray, share: float) -> np.ndarray:
        """What is left of the CPU work's rate with ``workers`` busy: 1 up to the logical
        cores, ``share`` (the ``oversubscribed`` parameter) at twice them, linearly between,
        no lower beyond."""
        logical = float(self.cores * max(self.threads_per_core, 1))
        over = np.clip((np.asarray(workers, dtype=float) - logical) / logical, 0.0, 1.0)
        return 1.0 - (1.0 - share) * over


def softmin(a: np.ndarray, b: np.ndarray, p: float = SOFTMIN_P) -> np.ndarray:
    return (np.power(a, -p) + np.power(b, -p)) ** (-1.0 / p)


def stream_io_rate(p: Params, request_bytes: np.ndarray, cached: np.ndarray,
                   remote: np.ndarray) -> np.ndarray:
    """MB/s of one stream issuing requests of ``request_bytes``: each request takes
    ``request_time`` on the device (or the link's latency plus its transfer)."""
    req_mb = np.asarray(request_bytes, dtype=float) / 1e6
    disk = req_mb / request_time(p.access_ms / 1e3, req_mb / p.storage_mb_per_s,
                                 p.storage_overlap)
    net = req_mb / (p.latency_ms / 1e3 + req_mb / p.network_mb_per_s)
    rate = np.where(remote > 0.5, net, disk)
    return np.where(cached > 0.5, p.cache_mb_per_s, rate)


def request_time(access_s: np.ndarray | float, transfer_s: np.ndarray | float,
                 overlap: float = 0.0) -> np.ndarray:
    """Seconds one device request takes: its access time and its transfer, less the share
    ``overlap`` of the shorter that the longer hides.  0, a disk: the head seeks, then the
    bytes flow (``access + transfer``).  1, a rate limiter (a block throttle, a cloud volume's
    IOPS and MB/s quotas): each request spends one slot of the request budget and its bytes
    of the byte budget, both refilling at once, so the scarcer binds (``max``).  Where the
    two are equal the forms differ most: a factor 2 at ``request = access x bandwidth``."""
    a = np.asarray(access_s, dtype=float)
    t = np.asarray(transfer_s, dtype=float)
    return a + t - float(overlap) * np.minimum(a, t)


def shared_devices(workers: np.ndarray, r1: np.ndarray, r_io: np.ndarray,
                   devices: float) -> np.ndarray:
    """Aggregate MB/s of ``workers`` jobs spread evenly over ``devices`` independent devices,
    each job alternating between its device (``1 / r_io`` seconds per MB, queued behind the
    other jobs of that device) and everything else (``1 / r1 - 1 / r_io``: its CPU work and
    per-file costs, in parallel with the others).  That is a closed queue of n = workers /
    devices jobs per device, solved in Schweitzer's approximate mean-value analysis (a job
    arriving at its device finds the queue that the other n - 1 jobs leave there on average;
    P. Schweitzer 1979; E. Lazowska et al., *Quantitative System Performance*, 1984, ch. 6),
    which has the closed form X = 2n / (Z + nS + sqrt((Z - nS)^2 + 4 Z S)) per device.  One
    job per device or fewer: no queue (each its own device).  Many: the device's rate
    ``r_io``.  Between, the device is busy while a job computes, which a job that waits for
    every other job's reads (``n r1 / (1 + (n - 1) r1 / r_io)``, Ganis' form, used before)
    leaves out: that form reached 76% of the published peak of 4 disks at 12 Pythia jobs."""
    n = np.maximum(np.asarray(workers, dtype=float), 1e-12)
    s = 1.0 / np.asarray(r_io, dtype=float)
    z = np.maximum(1.0 / np.asarray(r1, dtype=float) - s, 0.0)
    per = np.maximum(n / max(float(devices), 1e-12), 1.0)
    x = 2.0 * per / (z + per * s + np.sqrt((z - per * s) ** 2 + 4.0 * z * s))
    return n / per * x


def file_ios_time(p: Params, request_bytes: np.ndarray, file_mb: np.ndarray, t_io: np.ndarray,
                  device_ios: np.ndarray, cold_open: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """A file's device seconds, and those beyond its read-ahead windows' (``t_io``), where it
    is opened and read whole, cold, from a local device in ``device_ios`` I/Os (replayed:
    its metadata reads, the read-ahead's first small windows, splits at the device's largest
    I/O), more than ``file_mb / request_bytes``.  Each I/O takes ``request_time`` for an
    equal share of the file: on a rate limiter a request slot each, which binds a small
    file (120 files of 0.31 MB, 4.9 I/Os each, read at 7.5 MB/s on a 120-IOPS throttle
    with one worker and with two, where their 2.5 MB read-ahead window alone would put
    them under 1 request slot each)."""
    windows = file_mb * 1e6 / np.maximum(np.asarray(request_bytes, dtype=float), 1.0)
    ios = np.asarray(device_ios, dtype=float)
    more = np.asarray(cold_open, dtype=bool) & (ios > windows)
    n = np.where(more, ios, 1.0)
    t = n * request_time(p.access_ms / 1e3, file_mb / n / p.storage_mb_per_s,
                         p.storage_overlap)
    t_dev = np.where(more, np.maximum(t, t_io), t_io)
    return t_dev, t_dev - t_io


def rates(p: Params, X: np.ndarray, cores: Cores) -> np.ndarray:
    """Aggregate compressed MB/s for each configuration row of ``X`` (see ``FEATURES``)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    workers, request, file_mb, io, cached, remote, dec, proc, opens, calls, units, baskets, \
        straddles, device_ios = X.T
    r_io = stream_io_rate(p, request, cached, remote)
    # one file's seconds: its opening, its reads (t_io) and its CPU work (t_cpu: per MB, and
    # the fixed costs of each read call and basket), less the share phi of the shorter of
    # the last two that the longer hides
    file_mb = np.maximum(file_mb, 1e-9)
    t_io = file_mb * (io > 0.5) / r_io
    t_cpu = file_mb * ((dec > 0.5) / p.decompress_mb_per_s + (proc > 0.5) / p.process_mb_per_s)
    touches = np.maximum(baskets, 0.0) + np.maximum(straddles, 0.0)
    t_cpu = t_cpu + np.maximum(calls, 0.0) * p.call_s + touches * p.basket_s
    t_open = (opens > 0.5) * p.open_s
    hidden = p.io_overlap * np.minimum(t_io, t_cpu)
    t_dev, extra = file_ios_time(p, request, file_mb, t_io, device_ios,
                                 (io > 0.5) & (cached < 0.5) & (remote < 0.5) & (opens > 0.5))
    # a rate limiter's budget left unused while the worker computes carries over: the few
    # small reads of opening a file and starting its read-ahead pass within it, behind the
    # worker's CPU work (its opening's included) that hides no read already; on a disk
    # (``storage_overlap`` 0) they wait
    hidden = hidden + p.storage_overlap * np.minimum(extra, t_open + t_cpu - hidden)
    t_file = t_open + t_dev + t_cpu - hidden
    r1 = file_mb / np.maximum(t_file, file_mb * 1e-12)
    r_io = np.where(extra > 0, file_mb / np.maximum(t_dev, file_mb * 1e-12), r_io)
    # no more workers than units of work (files, clusters, packets) can be busy
    busy = np.where(units > 0.5, np.minimum(workers, np.maximum(units, 1.0)), workers)
    n_cores = cores.effective(busy)
    cpu_work = (dec > 0.5) | (proc > 0.5) | (opens > 0.5) | (calls > 0) | (touches > 0)
    n_eff = np.where(cpu_work, 1.0 + p.parallel_efficiency * (n_cores - 1.0), n_cores)
    # workers beyond the logical cores take turns on them
    n_eff = np.where(cpu_work, n_eff * cores.oversubscribed(busy, p.oversubscribed), n_eff)
    # contention on the devices: none for cached or in-memory data (each worker its own stream)
    contended = (io > 0.5) & (cached < 0.5)
    total = np.where(contended, shared_devices(n_eff, r1, r_io, p.devices), n_eff * r1)
    link_capped = softmin(total, np.full_like(total, p.network_mb_per_s))
    return np.where((remote > 0.5) & (cached < 0.5), link_capped, total)


def config_matrix(rows: list[dict[str, float]]) -> np.ndarray:
    """Build X from dicts keyed by ``FEATURES`` (missing keys: workers 1, request 1 MiB,
    file 1e6 MB, io 1, the others 0: no calls, no baskets)."""
    defaults = {"workers": 1.0, "request_bytes": float(1 << 20), "file_mb": 1e6, "io": 1.0}
    unknown = {k for r in rows for k in r} - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown configuration keys: {', '.join(sorted(unknown))}")
    return np.array([[float(r.get(f, defaults.get(f, 0.0))) for f in FEATURES] for r in rows])
