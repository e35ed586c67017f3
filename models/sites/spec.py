"""Sites and workloads: what they are, and what they mean for the rate equations.

From layout to the model's storage parameters (:func:`storage_rates`), for requests of size r:

* ``single``: one device (``count`` must be 1); ``separate``: ``count`` independent devices,
  each file on one of them; ``raid1``: mirrors, any of which serves a read: ``count`` devices,
  a stream reads at one disk's rate.
* ``raid0``/``raid5``/``raid6`` stripe over d = count, count - 1, count - 2 data disks in chunks
  of ``stripe_kb``.  A request spans k = min(d, max(1, r / stripe)) disks, so one stream reads at
  k x ``mb_per_s``; the array then serves d / k such requests at once (for large requests one
  logical device of d x the rate; for requests within a chunk, d independent disks).  The RAID5/6
  parity costs reads nothing else.
* Access time of every layout: 1000 / ``iops`` ms, a random access of one disk.
* The device's form (``limit``): ``additive``, a disk (the access time, then the transfer, per
  request; the default), or ``max``, a rate limiter (a throttled or cloud volume: the larger of
  the two; ``physics.request_time``).

The request size r and the bytes one access delivers:

* ``sequential`` access (large files, few branches): r = max(mean basket, read-ahead) (a TTreeCache
  or ``request_kb`` replaces it).  One stream alone on a device needs no seek between its
  requests: it streams the file.  k streams sharing a device make it seek each time it turns from
  one stream to another.  Each stream has its read-ahead window in flight (the kernel issues the
  window's pages together, as consecutive requests), and the I/O scheduler serves a stream's
  consecutive requests as one batch before it turns to another stream (the elevator's sweep, a
  time slice): one access delivers the larger of one window r and the scheduler's batch
  ``batch_kb`` where the site states it (CFQ's time slice times the rate, deadline's
  ``fifo_batch`` of requests; unstated: one window), never more than the file.  Streams per
  device: workers / devices, except on striped arrays, where every stream's requests rotate over
  all disks (all streams share every disk).  See :func:`access_bytes`.  How the jobs then share
  the devices (a job computes while the others' reads are served) is ``physics.shared_devices``.
* ``scattered`` access (many branches read per entry, as ESD analyses do): every request is a
  seek, and read-ahead does not change it (as the GSI ALICE Tier-2 study of ROOT analysis I/O
  found for ESD jobs): r = mean basket, or ``request_kb`` where the layout of the baskets lets
  one access serve several of them.

Stated assumptions (:class:`SiteSpec`): the page cache delivers ``page_cache_mb_per_s`` per
stream (default 2000); a network link carries 88% of its bit rate as data (``network_gbps`` x
1000 / 8 x 0.88: 1 Gb/s is 110 MB/s) with ``network_latency_ms`` (default 0.2) per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from ..physics import Cores, Params

Layout = Literal["single", "separate", "raid0", "raid1", "raid5", "raid6"]
Access = Literal["sequential", "scattered"]
DeviceLimit = Literal["additive", "max"]
LIMITS: tuple[str, ...] = ("additive", "max")
WorkloadAlgorithm = Literal["ZLIB", "LZ4", "ZSTD", "LZMA", "none"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
ACCESS: tuple[str, ...] = get_args(Access)
ALGORITHMS: tuple[str, ...] = get_args(WorkloadAlgorithm)

KIB = 1024
DEFAULT_READ_AHEAD_KB = 128.0  # Linux' default
DEFAULT_STRIPE_KB = 512.0  # mdadm's default chunk
#: Above this many branches read per entry, a workload defaults to scattered access.
SCATTERED_BRANCHES = 100
#: Share of a link's bit rate that carries data (TCP/IP and protocol overheads): an assumption.
NETWORK_EFFICIENCY = 0.88
DEFAULT_LATENCY_MS = 0.2
DEFAULT_PAGE_CACHE_MB_PER_S = 2000.0
#: The network rate of a site without a link (local data never uses it).
NO_NETWORK_MB_PER_S = 1e6
#: Fewest devices per layout.
MIN_COUNT = {"single": 1, "separate": 1, "raid0": 2, "raid1": 2, "raid5": 3, "raid6": 4}


@dataclass(frozen=True)
class StorageSpec:
    """One storage of a site: ``count`` devices of ``mb_per_s`` and ``iops`` each, in a layout."""

    name: str
    count: int
    layout: Layout
    mb_per_s: float
    iops: float
    read_ahead_kb: float = DEFAULT_READ_AHEAD_KB
    stripe_kb: float = DEFAULT_STRIPE_KB
    remote: bool = False
    #: the device's form: "additive" (a disk) or "max" (a rate limiter); see the module doc
    limit: DeviceLimit = "additive"
    #: bytes (KiB) the I/O scheduler serves from one stream before it turns to another
    #: (``None``: one read-ahead window); see the module doc
    batch_kb: float | None = None

    @property
    def access_ms(self) -> float:
        return 1000.0 / self.iops

    @property
    def data_disks(self) -> int:
        parity = {"raid5": 1, "raid6": 2}.get(self.layout, 0)
        return self.count - parity

    def describe(self) -> str:
        what = {"single": "one disk", "separate": f"{self.count} separate disks",
                "raid1": f"RAID1 of {self.count}"}.get(
                    self.layout, f"{self.layout.upper()} of {self.count}")
        return (f"{what} ({self.mb_per_s:g} MB/s, {self.iops:g} IOPS each, read-ahead "
                f"{self.read_ahead_kb:g} KiB{', remote' if self.remote else ''})")


@dataclass(frozen=True)
class SiteSpec:
    """A (possibly hypothetical) site: CPU, memory, network and storage."""

    name: str
    cores: int
    memory_gb: float
    storage: tuple[StorageSpec, ...]
    threads_per_core: int = 1
    ht_weight: float = 0.3
    network_gbps: float | None = None
    network_latency_ms: float = DEFAULT_LATENCY_MS
    page_cache_mb_per_s: float = DEFAULT_PAGE_CACHE_MB_PER_S

    @property
    def network_mb_per_s(self) -> float | None:
        """Data rate of the link: bit rate x 1000 / 8 x ``NETWORK_EFFICIENCY`` (an assumption)."""
        if self.network_gbps is None:
            return None
        return self.network_gbps * 1000.0 / 8.0 * NETWORK_EFFICIENCY

    @property
    def cpu(self) -> Cores:
        return Cores(self.cores, self.threads_per_core, self.ht_weight)


@dataclass(frozen=True)
class WorkloadSpec:
    """An analysis and its data.  Rates are per core, in compressed MB/s; ``access`` ``None``
    means the default by branch count (see :attr:`pattern`)."""

    name: str
    files: int
    file_mb: float
    events_per_file: float
    compression_factor: float
    algorithm: WorkloadAlgorithm
    branches: int
    decompress_mb_per_s: float
    process_mb_per_s: float
    open_s: float
    mean_basket_kb: float
    access: Access | None = None
    request_kb: float | None = None
    read_fraction: float = 1.0

    @property
    def pattern(self) -> Access:
        if self.access is not None:
            return self.access
        return "scattered" if self.branches > SCATTERED_BRANCHES else "sequential"

    @property
    def read_mb(self) -> float:
        """Compressed MB the job reads per file."""
        return self.file_mb * self.read_fraction

    @property
    def events_per_mb(self) -> float:
        """Events per compressed MB read."""
        return self.events_per_file / self.read_mb

    @property
    def dataset_mb(self) -> float:
        return self.files * self.file_mb


# ---------------------------------------------------------------------------------------------
# From specs to the model's inputs


@dataclass(frozen=True)
class StorageRates:
    """What a storage means for the rate equations, for one request size: one stream's
    streaming rate, the access time, the independent devices, and over how many of them one
    stream's requests spread (all of them on striped arrays, else one)."""

    mb_per_s: float
    access_ms: float
    devices: float
    spread: float


def storage_rates(storage: StorageSpec, request_bytes: float) -> StorageRates:
    """The storage parameters for requests of ``request_bytes`` (see the module's notes)."""
    access = storage.access_ms
    if storage.layout == "single":
        return StorageRates(storage.mb_per_s, access, 1.0, 1.0)
    if storage.layout in ("separate", "raid1"):
        return StorageRates(storage.mb_per_s, access, float(storage.count), 1.0)
    d = storage.data_disks
    k = min(float(d), max(1.0, request_bytes / (storage.stripe_kb * KIB)))
    logical = d / k
    return StorageRates(k * storage.mb_per_s, access, logical, logical)


def request_bytes_for(storage: StorageSpec, workload: WorkloadSpec) -> float:
    """Size of one read request reaching the storage."""
    if workload.request_kb is not None:
        return workload.request_kb * KIB
    basket = workload.mean_basket_kb * KIB
    if workload.pattern == "scattered":
        return basket
    return max(basket, storage.read_ahead_kb * KIB)


def access_bytes(request_bytes: float, file_bytes: float, workers: float, devices: float,
                 spread: float = 1.0, batch_bytes: float | None = None) -> float:
    """Bytes one device access delivers to sequential streams: the whole file while each
    device serves one stream; with k > 1 streams per device, one scheduler batch (the larger
    of one read-ahead window, ``request_bytes``, and ``batch_bytes`` where stated), never more
    than the file."""
    k = workers * spread / max(devices, 1e-9)
    if k <= 1.0:
        return max(file_bytes, request_bytes)
    batch = max(request_bytes, batch_bytes or 0.0)
    return max(request_bytes, min(file_bytes, batch))


def batch_bytes(storage: StorageSpec) -> float | None:
    """The scheduler's batch of one stream, in bytes (``None``: not stated)."""
    return storage.batch_kb * KIB if storage.batch_kb else None


def params_for(site: SiteSpec, workload: WorkloadSpec, storage_index: int = 0
               ) -> tuple[Params, Cores]:
    """The model's parameters and CPU for ``workload`` read from ``site.storage[i]``."""
    storage = site.storage[storage_index]
    rates = storage_rates(storage, request_bytes_for(storage, workload))
    network = site.network_mb_per_s
    params = Params(
        storage_mb_per_s=rates.mb_per_s,
        access_ms=rates.access_ms,
        devices=rates.devices,
        decompress_mb_per_s=workload.decompress_mb_per_s,
        process_mb_per_s=workload.process_mb_per_s,
        open_s=workload.open_s,
        cache_mb_per_s=site.page_cache_mb_per_s,
        network_mb_per_s=network if network is not None else NO_NETWORK_MB_PER_S,
        latency_ms=site.network_latency_ms if storage.remote else 0.0,
        storage_overlap=1.0 if storage.limit == "max" else 0.0,
    )
    return params, site.cpu


def config_for(site: SiteSpec, workload: WorkloadSpec, storage_index: int = 0,
               workers: int = 1) -> dict[str, float]:
    """The configuration row (``physics.FEATURES``) of ``workers`` jobs of ``workload``."""
    storage = site.storage[storage_index]
    request = request_bytes_for(storage, workload)
    rates = storage_rates(storage, request)
    if workload.pattern == "sequential" and not storage.remote:
        request = access_bytes(request, workload.read_mb * 1e6, workers, rates.devices,
                               rates.spread, batch_bytes(storage))
    return {"workers": float(workers), "request_bytes": request, "file_mb": workload.read_mb,
            "io": 1.0, "cached": 0.0, "remote": 1.0 if storage.remote else 0.0,
            "decompress": 0.0 if workload.algorithm == "none" else 1.0, "process": 1.0,
            "opens": 1.0}
