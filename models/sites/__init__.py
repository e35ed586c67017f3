"""Site and workload descriptions (TOML), and what they mean for the rate equations.

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
    limit = "additive"         # optional: additive (a disk) | max (a throttled/cloud volume)
    batch_kb = 8192            # optional (one read-ahead window): what the I/O scheduler
                               # serves from one stream before it turns to another, KiB
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
    request_kb = 512           # optional: bytes one device access delivers (``spec``)
    read_fraction = 1.0        # optional: share of each file's bytes the job reads

Keys ending in ``_kb`` are KiB (1024 bytes), as Linux' ``read_ahead_kb``; ``_mb`` and ``mb_per_s``
are 10^6 bytes.  Every error is a :class:`SpecError` of one line naming the file and the key.

Two parts: ``spec`` (the site, storage and workload specifications, and the storage
parameters and configuration they give the model, with the layout and access rules) and
``validation`` (reading a TOML file and checking every key).  Every public name is importable
from here.

Stated assumptions: the page cache delivers ``page_cache_mb_per_s`` per stream (default 2000);
a network link carries 88% of its bit rate as data (``network_gbps`` x 1000 / 8 x 0.88: 1 Gb/s is
110 MB/s) with ``network_latency_ms`` (default 0.2) per request.
"""

from __future__ import annotations

from .spec import (
    ACCESS,
    ALGORITHMS,
    DEFAULT_LATENCY_MS,
    DEFAULT_PAGE_CACHE_MB_PER_S,
    DEFAULT_READ_AHEAD_KB,
    DEFAULT_STRIPE_KB,
    KIB,
    LAYOUTS,
    LIMITS,
    MIN_COUNT,
    NETWORK_EFFICIENCY,
    NO_NETWORK_MB_PER_S,
    SCATTERED_BRANCHES,
    Access,
    Layout,
    SiteSpec,
    StorageRates,
    StorageSpec,
    WorkloadAlgorithm,
    WorkloadSpec,
    access_bytes,
    batch_bytes,
    config_for,
    params_for,
    request_bytes_for,
    storage_rates,
)
from .validation import (
    SpecError,
    load_site,
    load_workload,
    site_from_dict,
    workload_from_dict,
)

__all__ = [
    "ACCESS",
    "ALGORITHMS",
    "DEFAULT_LATENCY_MS",
    "DEFAULT_PAGE_CACHE_MB_PER_S",
    "DEFAULT_READ_AHEAD_KB",
    "DEFAULT_STRIPE_KB",
    "KIB",
    "LAYOUTS",
    "LIMITS",
    "MIN_COUNT",
    "NETWORK_EFFICIENCY",
    "NO_NETWORK_MB_PER_S",
    "SCATTERED_BRANCHES",
    "Access",
    "Layout",
    "SiteSpec",
    "SpecError",
    "StorageRates",
    "StorageSpec",
    "WorkloadAlgorithm",
    "WorkloadSpec",
    "access_bytes",
    "batch_bytes",
    "config_for",
    "load_site",
    "load_workload",
    "params_for",
    "request_bytes_for",
    "site_from_dict",
    "storage_rates",
    "workload_from_dict",
]
