"""Site and workload descriptions in TOML, and what they mean for the rate equations.

A site can be modelled before it exists (a purchase, a re-layout)::

    [site]
    name = "gsi-raid5"
    cores = 8                  # physical cores
    threads_per_core = 2       # optional (1); extra hyper-threads count ht_weight (0.3)
    memory_gb = 16
    network_gbps = 1           # optional; needed only for remote storage

    [[site.storage]]
    name = "data"
    count = 4                  # devices
    layout = "raid5"           # single | separate | raid0 | raid1 | raid5 | raid6
    mb_per_s = 70              # streaming rate of ONE device
    iops = 120                 # random reads per second of ONE device
    read_ahead_kb = 128        # optional (128): the block device's read-ahead, KiB
    stripe_kb = 512            # optional (512): RAID chunk per disk, KiB
    remote = false             # optional: the storage is reached over the site's network

    [workload]
    files = 1000
    file_mb = 3.3              # compressed MB per file (MB = 10^6 bytes)
    events_per_file = 100
    compression_factor = 3.5
    algorithm = "ZLIB"         # ZLIB | LZ4 | ZSTD | LZMA | none
    branches = 406
    decompress_mb_per_s = 160  # per core, compressed MB/s
    process_mb_per_s = 160     # per core, compressed MB/s
    open_s = 0.056             # per file: header, streamer info, tree metadata
    mean_basket_kb = 7.9       # compressed KiB
    access = "scattered"       # optional: default scattered above 100 branches, else sequential
    request_kb = 512           # optional: bytes one device access delivers (see below)
    read_fraction = 1.0        # optional: share of each file's bytes the job reads

Keys ending in ``_kb`` are KiB (1024 bytes), as Linux' ``read_ahead_kb``; ``_mb`` and ``mb_per_s``
are 10^6 bytes.  Every error is a :class:`SpecError` of one line naming the file and the key.

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

The request size r and the bytes one access delivers:

* ``sequential`` access (large files, few branches): r = max(mean basket, read-ahead) (a TTreeCache
  or ``request_kb`` replaces it).  One stream alone on a device needs no seek between its
  requests: it streams the file.  k streams sharing a device make it seek: with requests served in
  random order, a request follows one of the same stream with probability 1/k, so one access
  delivers r k / (k - 1) bytes (never more than the file).  Streams per device: workers / devices,
  except on striped arrays, where every stream's requests rotate over all disks (all streams share
  every disk).  See :func:`access_bytes`.
* ``scattered`` access (many branches read per entry, as ESD analyses do): every request is a
  seek, and read-ahead does not change it (the GSI observation): r = mean basket, or
  ``request_kb`` where the layout of the baskets lets one access serve several of them.

Stated assumptions: the page cache delivers ``page_cache_mb_per_s`` per stream (default 2000);
a network link carries 88% of its bit rate as data (``network_gbps`` x 1000 / 8 x 0.88: 1 Gb/s is
110 MB/s) with ``network_latency_ms`` (default 0.2) per request.
"""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from .physics import Cores, Params

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Layout = Literal["single", "separate", "raid0", "raid1", "raid5", "raid6"]
Access = Literal["sequential", "scattered"]
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


class SpecError(ValueError):
    """A site or workload description that cannot be used; the message is one line:
    ``FILE: KEY: what is wrong``."""


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
                 spread: float = 1.0) -> float:
    """Bytes one device access delivers to sequential streams: the whole file while each
    device serves one stream, ``request k / (k - 1)`` with k streams per device."""
    k = workers * spread / max(devices, 1e-9)
    if k <= 1.0:
        return max(file_bytes, request_bytes)
    return max(request_bytes, min(file_bytes, request_bytes * k / (k - 1.0)))


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
                               rates.spread)
    return {"workers": float(workers), "request_bytes": request, "file_mb": workload.read_mb,
            "io": 1.0, "cached": 0.0, "remote": 1.0 if storage.remote else 0.0,
            "decompress": 0.0 if workload.algorithm == "none" else 1.0, "process": 1.0,
            "opens": 1.0}


# ---------------------------------------------------------------------------------------------
# Loading and validation


def load_site(path: str | Path) -> SiteSpec:
    """Read a site description (a ``[site]`` table; a ``[workload]`` beside it is ignored)."""
    data = _read(path)
    source = str(path)
    _only(source, data, {"site", "workload"})
    return site_from_dict(_table(source, "site", data.get("site"), required=True), source)


def load_workload(path: str | Path) -> WorkloadSpec:
    """Read a workload description (a ``[workload]`` table; a ``[site]`` beside it is ignored)."""
    data = _read(path)
    source = str(path)
    _only(source, data, {"site", "workload"})
    stem = Path(path).stem
    return workload_from_dict(_table(source, "workload", data.get("workload"), required=True),
                              source, default_name=stem)


def site_from_dict(data: Mapping[str, Any], source: str = "<site>") -> SiteSpec:
    t = _Table(source, "site", data)
    t.known("name", "cores", "threads_per_core", "ht_weight", "memory_gb", "network_gbps",
            "network_latency_ms", "page_cache_mb_per_s", "storage")
    name = t.text("name")
    cores = t.whole("cores", minimum=1)
    threads = t.whole("threads_per_core", minimum=1, default=1)
    ht = t.number("ht_weight", default=0.3, minimum=0.0, maximum=1.0)
    memory = t.number("memory_gb", positive=True)
    gbps = t.number("network_gbps", positive=True, default=None)
    latency = t.number("network_latency_ms", minimum=0.0, default=DEFAULT_LATENCY_MS)
    cache = t.number("page_cache_mb_per_s", positive=True, default=DEFAULT_PAGE_CACHE_MB_PER_S)
    raw = t.get("storage")
    if raw is None:
        t.fail("storage", "missing: at least one [[site.storage]] table is required")
    if not isinstance(raw, list) or not raw or not all(isinstance(x, dict) for x in raw):
        t.fail("storage", "must be one or more [[site.storage]] tables")
    storage = tuple(_storage(source, f"site.storage[{i}]", x) for i, x in enumerate(raw))
    for i, s in enumerate(storage):
        if s.remote and gbps is None:
            t.fail(f"storage[{i}].remote", "remote storage needs site.network_gbps")
    return SiteSpec(name=name, cores=cores, memory_gb=memory, storage=storage,
                    threads_per_core=threads, ht_weight=ht, network_gbps=gbps,
                    network_latency_ms=latency, page_cache_mb_per_s=cache)


def _storage(source: str, where: str, data: Mapping[str, Any]) -> StorageSpec:
    t = _Table(source, where, data)
    t.known("name", "count", "layout", "mb_per_s", "iops", "read_ahead_kb", "stripe_kb",
            "remote")
    name = t.text("name")
    count = t.whole("count", minimum=1)
    layout = t.choice("layout", LAYOUTS)
    if layout == "single" and count != 1:
        t.fail("count", f"layout single means one device; count must be 1, got {count}")
    if count < MIN_COUNT[layout]:
        t.fail("count", f"{layout} needs at least {MIN_COUNT[layout]} devices, got {count}")
    mb = t.number("mb_per_s", positive=True)
    iops = t.number("iops", positive=True)
    ra = t.number("read_ahead_kb", positive=True, default=DEFAULT_READ_AHEAD_KB)
    stripe = t.number("stripe_kb", positive=True, default=DEFAULT_STRIPE_KB)
    remote = t.flag("remote", default=False)
    return StorageSpec(name=name, count=count, layout=layout,
                       mb_per_s=mb, iops=iops, read_ahead_kb=ra, stripe_kb=stripe,
                       remote=remote)


def workload_from_dict(data: Mapping[str, Any], source: str = "<workload>",
                       default_name: str = "workload") -> WorkloadSpec:
    t = _Table(source, "workload", data)
    t.known("name", "files", "file_mb", "events_per_file", "compression_factor", "algorithm",
            "branches", "decompress_mb_per_s", "process_mb_per_s", "open_s", "mean_basket_kb",
            "access", "request_kb", "read_fraction")
    name = t.text("name", default=default_name)
    files = t.whole("files", minimum=1)
    file_mb = t.number("file_mb", positive=True)
    events = t.number("events_per_file", positive=True)
    factor = t.number("compression_factor", positive=True)
    algorithm = t.choice("algorithm", ALGORITHMS)
    branches = t.whole("branches", minimum=1)
    decompress = t.number("decompress_mb_per_s", positive=True)
    process = t.number("process_mb_per_s", positive=True)
    open_s = t.number("open_s", minimum=0.0)
    basket = t.number("mean_basket_kb", positive=True)
    access = t.choice("access", ACCESS, default=None)
    request = t.number("request_kb", positive=True, default=None)
    fraction = t.number("read_fraction", positive=True, maximum=1.0, default=1.0)
    if algorithm == "none" and factor != 1.0:
        t.fail("compression_factor", f"must be 1 for uncompressed data, got {factor:g}")
    return WorkloadSpec(name=name, files=files, file_mb=file_mb, events_per_file=events,
                        compression_factor=factor, algorithm=algorithm,
                        branches=branches, decompress_mb_per_s=decompress,
                        process_mb_per_s=process, open_s=open_s, mean_basket_kb=basket,
                        access=access, request_kb=request,
                        read_fraction=fraction)


def _read(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a directory, not a TOML file") from None
    except PermissionError:
        raise SpecError(f"{path}: permission denied") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text file (TOML must be UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: invalid TOML: {' '.join(str(e).split())}") from None


def _only(source: str, data: Mapping[str, Any], allowed: set[str]) -> None:
    for key in data:
        if key not in allowed:
            raise SpecError(f"{source}: {key}: unknown table or key; expected "
                            f"{' or '.join(f'[{a}]' for a in sorted(allowed))}")


def _table(source: str, name: str, value: Any, required: bool) -> Mapping[str, Any]:
    if value is None and required:
        raise SpecError(f"{source}: {name}: missing table [{name}]")
    if not isinstance(value, dict):
        raise SpecError(f"{source}: {name}: must be a table [{name}]")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "table"
    return f"{type(value).__name__} {value!r}"


_MISSING = object()


class _Table:
    """Typed, strict access to one TOML table; every failure is one ``SpecError`` line."""

    def __init__(self, source: str, where: str, data: Mapping[str, Any]) -> None:
        self.source = source
        self.where = where
        self.data = data

    def fail(self, key: str, problem: str) -> Any:
        raise SpecError(f"{self.source}: {self.where}.{key}: {problem}")

    def known(self, *keys: str) -> None:
        for key in self.data:
            if key not in keys:
                close = difflib.get_close_matches(key, keys, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self.fail(key, f"unknown key{hint}; expected one of {', '.join(keys)}")

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def _value(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            self.fail(key, "missing (required)")
        return default

    def text(self, key: str, default: Any = _MISSING) -> str:
        v = self._value(key, default)
        if not isinstance(v, str) or not v.strip():
            self.fail(key, f"must be a non-empty string, not {_kind(v)}")
        return str(v)

    def whole(self, key: str, minimum: int, default: Any = _MISSING) -> int:
        v = self._value(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.fail(key, f"must be a whole number, not {_kind(v)}")
        if v < minimum:
            self.fail(key, f"must be at least {minimum}, got {v}")
        return int(v)

    def number(self, key: str, positive: bool = False, minimum: float | None = None,
               maximum: float | None = None, default: Any = _MISSING) -> Any:
        v = self._value(key, default)
        if v is None and default is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"must be a number, not {_kind(v)}")
        v = float(v)
        if not math.isfinite(v):
            self.fail(key, f"must be a finite number, got {v}")
        if positive and v <= 0:
            self.fail(key, f"must be positive, got {v:g}")
        if minimum is not None and v < minimum:
            self.fail(key, f"must be at least {minimum:g}, got {v:g}")
        if maximum is not None and v > maximum:
            self.fail(key, f"must be at most {maximum:g}, got {v:g}")
        return v

    def choice(self, key: str, options: tuple[str, ...], default: Any = _MISSING) -> Any:
        v = self._value(key, default)
        if v is None and default is None:
            return None
        if v not in options:
            self.fail(key, f"must be one of {', '.join(options)}; got {_kind(v)}")
        return v

    def flag(self, key: str, default: bool) -> bool:
        v = self._value(key, default)
        if not isinstance(v, bool):
            self.fail(key, f"must be true or false, not {_kind(v)}")
        return bool(v)
