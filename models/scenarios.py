"""What-if scenarios: transforms of a baseline, and predictions with intervals and speed-ups.

A :class:`Baseline` is what the model predicts from: the physical parameters, the CPU and the
configuration of the analysis (``physics.FEATURES``), plus what the transforms need to know (the
storage layout, the access pattern, the compression, events per MB).  A :class:`Scenario` is a
named, pure transform of a baseline with the assumptions it makes; :func:`predict_scenarios`
predicts each at several worker counts, with an interval and the speed-up over the baseline at the
same worker count.

Uncertainty of a what-if.  The fitted model knows its parameters' covariance (of their logs).  A
transform either *scales* a parameter (more bytes per event, another algorithm's decompression
speed relative to the measured one): the parameter keeps its fitted log-uncertainty, now around
the new value; or it *replaces* it with a value that does not come from the fit (an assumed SSD,
a hypothetical site): the fitted uncertainty no longer applies and the parameter is held fixed at
the new value, with the relative uncertainty the assumption states (``Baseline.assumed_sd``) in
place of it.  The scenario's model is a clone of the fitted one with every parameter ``fixed`` at
its new value and the covariance of the parameters it did not replace carried over unchanged (a
marginal of the fit's Gaussian: no refit, since the measured points belong to the old
configuration), plus the assumptions' variances.  Speed-ups are ratios of two predictions that
share the untouched parameters: their interval comes from the same covariance, so what both
share cancels, and carries no measurement noise (it is a systematic ratio).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

import numpy as np

from probes.readtests.overhead import calls_per_file
from probes.readtests.results import Calibration
from probes.results import DatasetProfile, SiteProfile

from .physics import PARAMS, Cores, Params, config_matrix, rates
from .sites import (
    KIB,
    SiteSpec,
    StorageSpec,
    WorkloadSpec,
    access_bytes,
    config_for,
    params_for,
    request_bytes_for,
    storage_rates,
)

if TYPE_CHECKING:
    from .throughput import ThroughputModel

Source = Literal["measured", "fitted", "assumed", "fixed"]
Access = Literal["sequential", "scattered"]

UNITS = {
    "storage_mb_per_s": "MB/s per stream",
    "access_ms": "ms per request",
    "devices": "independent devices",
    "decompress_mb_per_s": "compressed MB/s per core",
    "process_mb_per_s": "compressed MB/s per core",
    "open_s": "s per file",
    "cache_mb_per_s": "MB/s per stream",
    "network_mb_per_s": "MB/s (link)",
    "latency_ms": "ms per request",
    "call_s": "s per read call",
    "parallel_efficiency": "of a core, per core beyond the first",
    "basket_s": "s per basket read",
}

#: Relative uncertainty (one sigma, log-normal) of a value taken from a site or workload file.
SPEC_SD = 0.20
#: ... of a device preset (SSD, NVMe: an order of magnitude from DOMAIN.md).
PRESET_SD = 0.30
#: ... of an assumed decompression speed of one algorithm relative to another.
RATIO_SD = 0.30
#: ... of the assumed page-cache and network latency figures.
LOOSE_SD = 0.50

#: Device kinds (assumptions: DOMAIN.md's orders of magnitude).  (MB/s, IOPS, statement)
DEVICE_PRESETS: dict[str, tuple[float, float, str]] = {
    "hdd": (70.0, 120.0, "HDD: 70 MB/s, 120 random reads/s (the GSI SATA disks; "
            "DOMAIN.md: HDD 40-200 MB/s, 100-200 random reads/s)"),
    "ssd": (500.0, 10_000.0, "SATA SSD: 500 MB/s, 0.1 ms per access (DOMAIN.md: "
            "300-550 MB/s)"),
    "nvme": (3000.0, 50_000.0, "NVMe: 3000 MB/s, 0.02 ms per access (DOMAIN.md: "
             "2-7 GB/s)"),
}
#: Compression factor of each algorithm relative to ZLIB-1 on the same data (assumption).
FACTOR_VS_ZLIB = {"ZLIB": 1.0, "LZ4": 0.8, "ZSTD": 1.1, "LZMA": 1.3}
FACTOR_SOURCE = ("compression factors relative to ZLIB-1: LZ4 0.8, ZSTD-5 1.1, LZMA 1.3 "
                 "(typical of ROOT's comparisons; the demo's flat_* datasets measure them)")
#: Decompression speed (uncompressed MB/s out) relative to ZLIB (assumption).
SPEED_VS_ZLIB = {"ZLIB": 1.0, "LZ4": 16.0, "ZSTD": 2.0, "LZMA": 0.12}
SPEED_SOURCE = ("decompression speed relative to ZLIB: ZSTD 2x (DOMAIN.md: 'about 2x "
                "faster to decompress than ZLIB'), LZ4 16x and LZMA 0.12x (DOMAIN.md: one core "
                "of this machine, cramjam ZLIB-1 307, LZ4 ~5000, LZMA ~36 MB/s uncompressed)")


# ---------------------------------------------------------------------------------------------
# The baseline


@dataclass(frozen=True)
class Baseline:
    """What the model predicts from, and what the transforms need to know.

    ``config`` holds ``physics.FEATURES`` (``workers`` is set per prediction); its
    ``request_bytes`` is the size of one request and ``file_mb`` the MB read per file.
    ``interleave`` applies the sequential-streams rule of :func:`sites.access_bytes` per worker
    count (descriptions of sites; a calibration's fit already holds what its sweep saw).
    ``mb_per_work`` is the compressed MB read for the same events, relative to the original
    (another compression, a subset of the branches change it): speed-ups compare the time to
    read the same events.  ``replaced`` and ``assumed_sd`` record what the transforms did to the
    parameters (see the module's notes); ``notes`` the assumptions they had to make.
    """

    params: Params
    cores: Cores
    config: Mapping[str, float]
    workers: int = 1
    events_per_mb: float | None = None
    algorithm: str | None = None
    compression_factor: float | None = None
    access: Access = "sequential"
    request_fixed: bool = False
    mean_basket_bytes: float | None = None
    storage: StorageSpec | None = None
    interleave: bool = False
    spread: float = 1.0
    file_size_mb: float | None = None
    files: int | None = None
    memory_gb: float | None = None
    measured_decompress: Mapping[str, float] = field(default_factory=dict)
    #: compression factors measured on the same baskets, relative to the dataset's own
    #: algorithm (which is 1.0 here); ``recompressed``: the algorithms measured on a
    #: recompressed sample of the dataset's baskets, and how many baskets it held
    measured_factor: Mapping[str, float] = field(default_factory=dict)
    recompressed: Mapping[str, int] = field(default_factory=dict)
    mb_per_work: float = 1.0
    replaced: frozenset[str] = frozenset()
    assumed_sd: Mapping[str, float] = field(default_factory=dict)
    sources: Mapping[str, Source] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    site: SiteSpec | None = None
    workload: WorkloadSpec | None = None

    def row(self, workers: int) -> dict[str, float]:
        """The configuration of ``workers`` jobs."""
        r = dict(self.config)
        r["workers"] = float(workers)
        if (self.interleave and self.access == "sequential" and r.get("cached", 0.0) < 0.5
                and r.get("remote", 0.0) < 0.5):
            r["request_bytes"] = access_bytes(self.config["request_bytes"],
                                              r["file_mb"] * 1e6, workers,
                                              self.params.devices, self.spread)
        return r

    def X(self, workers: Sequence[int]) -> np.ndarray:
        return config_matrix([self.row(w) for w in workers])

    @property
    def dataset_mb(self) -> float | None:
        if self.files is None or self.file_size_mb is None:
            return None
        return self.files * self.file_size_mb

    def note(self, *lines: str) -> Baseline:
        return replace(self, notes=self.notes + tuple(x for x in lines if x not in self.notes))


def site_baseline(site: SiteSpec, workload: WorkloadSpec, storage_index: int = 0,
                  rel_sd: float = SPEC_SD) -> Baseline:
    """The baseline of a described site and workload (no measurement)."""
    if not 0 <= storage_index < len(site.storage):
        raise ValueError(f"site {site.name} has no storage #{storage_index}")
    storage = site.storage[storage_index]
    params, cores = params_for(site, workload, storage_index)
    request = request_bytes_for(storage, workload)
    config = config_for(site, workload, storage_index, workers=1)
    config["request_bytes"] = request
    sr = storage_rates(storage, request)
    sources: dict[str, Source] = {n: "fixed" for n in PARAMS}
    sources["cache_mb_per_s"] = "assumed"
    if not storage.remote:
        sources["network_mb_per_s"] = sources["latency_ms"] = "assumed"
    return Baseline(
        params=params, cores=cores, config=config, workers=1,
        events_per_mb=workload.events_per_mb, algorithm=workload.algorithm,
        compression_factor=workload.compression_factor, access=workload.pattern,
        request_fixed=workload.request_kb is not None,
        mean_basket_bytes=workload.mean_basket_kb * KIB, storage=storage, interleave=True,
        spread=sr.spread, file_size_mb=workload.file_mb, files=workload.files,
        memory_gb=site.memory_gb, sources=sources, site=site, workload=workload,
        notes=(f"parameters from {site.name} and {workload.name}, each taken as ±"
               f"{100 * rel_sd:.0f}% (one sigma, independent): not measured",),
    )


def site_sd(baseline: Baseline, rel_sd: float = SPEC_SD) -> dict[str, float]:
    """Relative uncertainties of a described site's parameters (see :func:`site_model`)."""
    sd = {n: rel_sd for n in ("storage_mb_per_s", "access_ms", "decompress_mb_per_s",
                              "process_mb_per_s", "open_s")}
    sd["cache_mb_per_s"] = LOOSE_SD
    if baseline.config.get("remote", 0.0) > 0.5:
        sd["network_mb_per_s"] = rel_sd
        sd["latency_ms"] = LOOSE_SD
    return sd


def site_model(site: SiteSpec, workload: WorkloadSpec, storage_index: int = 0,
               rel_sd: float = SPEC_SD, noise: float = 0.05
               ) -> tuple[ThroughputModel, Baseline]:
    """A model of a described site without a fit: every parameter fixed from the
    descriptions, each with a relative uncertainty of ``rel_sd`` (one sigma, log-normal,
    independent: an assumption; the page cache's and the link latency's ``LOOSE_SD``); the
    device count is exact."""
    base = site_baseline(site, workload, storage_index, rel_sd)
    return fixed_model(base.params, base.cores, site_sd(base, rel_sd), noise), base


def fixed_model(params: Params, cores: Cores, rel_sd: Mapping[str, float],
                noise: float = 0.05) -> ThroughputModel:
    """A ``ThroughputModel`` with every parameter fixed, and independent relative
    uncertainties ``rel_sd`` (log-normal sigmas) on some of them."""
    from .throughput import ThroughputModel

    model = ThroughputModel(cores=cores.cores, threads_per_core=cores.threads_per_core,
                            ht_weight=cores.ht_weight, noise=noise, fixed=_as_dict(params))
    model.fit(config_matrix([{}]), np.ones(1))
    names = [n for n in PARAMS if rel_sd.get(n, 0.0) > 0 and getattr(params, n) > 0]
    _set_covariance(model, params, names, np.diag([rel_sd[n] ** 2 for n in names]))
    return model


def calibration_baseline(model: ThroughputModel, config: Mapping[str, float], *,
                         events_per_mb: float | None = None, algorithm: str | None = None,
                         compression_factor: float | None = None,
                         mean_basket_bytes: float | None = None,
                         measured_decompress: Mapping[str, float] | None = None,
                         files: int | None = None, memory_gb: float | None = None,
                         access: Access = "sequential",
                         measured_factor: Mapping[str, float] | None = None,
                         recompressed: Mapping[str, int] | None = None) -> Baseline:
    """The baseline of a fitted model (``config``: the configuration the calibration saw)."""
    params = model.physical_params_
    cores = Cores(int(model.cores), int(model.threads_per_core), float(model.ht_weight))
    return Baseline(params=params, cores=cores, config=dict(config),
                    workers=int(config.get("workers", 1)), events_per_mb=events_per_mb,
                    algorithm=algorithm, compression_factor=compression_factor, access=access,
                    mean_basket_bytes=mean_basket_bytes, file_size_mb=config.get("file_mb"),
                    files=files, memory_gb=memory_gb,
                    measured_decompress=dict(measured_decompress or {}),
                    measured_factor=dict(measured_factor or {}),
                    recompressed=dict(recompressed or {}),
                    sources=model_sources(model))


def calibrated_baseline(cal: Calibration, dataset: DatasetProfile, site: SiteProfile
                        ) -> tuple[ThroughputModel, Baseline]:
    """Fit the model to a calibration, and the baseline the scenarios start from."""
    from .calibration import model_from_calibration

    model, config, _ = model_from_calibration(cal, dataset, site)
    tree = max(dataset.trees, key=lambda t: t.compressed_bytes) if dataset.trees else None
    loop = cal.event_loop
    events_per_mb = None
    if loop is not None and loop.events_per_s and loop.compressed_mb_per_s:
        events_per_mb = loop.events_per_s / loop.compressed_mb_per_s
    elif tree is not None and tree.compressed_bytes:
        events_per_mb = tree.entries / (tree.compressed_bytes / 1e6)
    branches = loop.branches if loop is not None else (tree.branches if tree else 0)
    algorithm = tree.compression.algorithm if tree else None
    measured, factors, recompressed = measured_compression(cal, algorithm)
    baseline = calibration_baseline(
        model, config, events_per_mb=events_per_mb,
        algorithm=tree.compression.algorithm if tree else None,
        compression_factor=tree.compression_factor if tree else None,
        mean_basket_bytes=tree.baskets.mean_compressed_bytes if tree else None,
        measured_decompress=measured, files=tree.files if tree else None,
        memory_gb=site.memory.total_bytes / 1e9,
        access="scattered" if branches > 100 else "sequential",
        measured_factor=factors, recompressed=recompressed)
    return model, baseline


def measured_compression(cal: Calibration, algorithm: str | None
                         ) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """What the decompression test measured for the compression what-if: each algorithm's
    rate (compressed MB/s per core; the dataset's own baskets first, else a recompressed
    sample of them), each algorithm's compression factor relative to ``algorithm`` (the
    dataset's own) on the same recompressed baskets, and the algorithms measured on a
    recompressed sample with its number of baskets."""
    rates: dict[str, float] = {}
    factors: dict[str, float] = {}
    recompressed: dict[str, int] = {}
    for d in sorted(cal.decompression, key=lambda d: d.source != "dataset"):
        if d.source == "recompressed":
            if d.algorithm in rates:
                continue  # the dataset's own baskets of that algorithm come first
            if (algorithm is not None and d.recompressed_from == algorithm
                    and d.compression_factor and d.dataset_factor):
                factors[d.algorithm] = d.compression_factor / d.dataset_factor
                factors[algorithm] = 1.0
            if d.compressed_mb_per_s:
                recompressed[d.algorithm] = d.baskets
        if d.compressed_mb_per_s:
            rates[d.algorithm] = d.compressed_mb_per_s
    return rates, factors, recompressed


def model_sources(model: ThroughputModel) -> dict[str, Source]:
    """Where each parameter of a fitted model comes from."""
    fixed, priors = set(model.fixed or {}), set(model.priors or {})
    free = set(getattr(model, "free_params_", ()))
    out: dict[str, Source] = {}
    for n in PARAMS:
        out[n] = ("fixed" if n in fixed else "measured" if n in priors
                  else "fitted" if n in free else "assumed")
    return out


# ---------------------------------------------------------------------------------------------
# Scenarios


@dataclass(frozen=True)
class Scenario:
    """A named what-if: ``apply(baseline)`` returns the transformed baseline.  ``workers``
    pins the worker count (the ``workers(n)`` scenario)."""

    name: str
    description: str
    transform: Callable[[Baseline], Baseline] = field(repr=False)
    assumptions: tuple[str, ...] = ()
    workers: int | None = None

    def apply(self, baseline: Baseline) -> Baseline:
        return self.transform(baseline)


def combine(*scenarios: Scenario, name: str | None = None) -> Scenario:
    """The scenarios applied one after the other."""
    if len(scenarios) == 1 and name is None:
        return scenarios[0]

    def transform(b: Baseline) -> Baseline:
        for s in scenarios:
            b = s.apply(b)
        return b

    pinned = [s.workers for s in scenarios if s.workers is not None]
    return Scenario(name=name or " + ".join(s.name for s in scenarios),
                    description="; ".join(s.description for s in scenarios),
                    transform=transform,
                    assumptions=tuple(a for s in scenarios for a in s.assumptions),
                    workers=pinned[-1] if pinned else None)


def workers(n: int) -> Scenario:
    if n < 1:
        raise ValueError("workers must be 1 or more")
    return Scenario(f"{n} workers", f"run {n} jobs (processes or threads) in parallel",
                    lambda b: replace(b, workers=n), workers=n)


def merge(target_mb: float) -> Scenario:
    """Files merged (or split) to ``target_mb`` each: fewer opens per MB.  The baskets per
    file scale with the file (a merge keeps the inputs' baskets), and so do the read calls
    (one per 50 MB of arrays, ``overhead.calls_per_file``) where the compression factor is
    known."""
    if target_mb <= 0:
        raise ValueError("the merged file size must be positive")

    def transform(b: Baseline) -> Baseline:
        old = b.file_size_mb or b.config["file_mb"]
        f = target_mb / old
        files = None if b.files is None else max(1, math.ceil(b.files / f))
        config = {**b.config, "file_mb": b.config["file_mb"] * f}
        notes: list[str] = []
        if config.get("baskets", 0.0) > 0:
            config["baskets"] = b.config["baskets"] * f
        if config.get("calls", 0.0) > 0:
            if b.compression_factor:
                config["calls"] = calls_per_file(config["file_mb"] * b.compression_factor * 1e6)
            else:
                notes.append("the compression factor is unknown: the read calls per file are "
                             "kept as they are")
        return replace(b, config=config, file_size_mb=target_mb, files=files).note(*notes)

    return Scenario(
        f"merge to {target_mb:g} MB", f"merge the files to about {target_mb:g} MB each (hadd): "
        "the per-file open cost is paid less often", transform,
        ("merged files keep the inputs' baskets (as hadd does): request sizes and bytes per "
         "event unchanged, baskets per file grow with the file", "opening a merged file costs "
         "as much as opening one input (its metadata grows with the branches, not the "
         "entries)", "one read call per 50 MB of arrays (uproot's iterate step)"))


def rebasket(basket_bytes: float) -> Scenario:
    """The files rewritten with baskets of about ``basket_bytes`` compressed bytes each
    (``hadd -O``, or a rewrite with a larger ``fAutoFlush`` and basket buffer): fewer baskets
    per file, each paying the fixed per-basket cost once (``basket_s``).  Baskets never get
    smaller than they are: a rewrite to smaller baskets is taken as no change.  Requests that
    the baskets set (scattered reads, or baskets above the read-ahead) grow with them: the
    request becomes the larger of the new basket and the current request (the calibration's
    rule: the larger of the mean basket and the read-ahead)."""
    if basket_bytes <= 0:
        raise ValueError("the basket size must be positive")

    def transform(b: Baseline) -> Baseline:
        old = b.mean_basket_bytes
        new_basket = max(float(basket_bytes), old or 0.0)
        config = dict(b.config)
        now = config.get("baskets", 0.0)
        notes: list[str] = []
        if now > 0:
            config["baskets"] = min(now, config["file_mb"] * 1e6 / new_basket)
        elif b.params.basket_s > 0:
            notes.append("the baskets read per file are unknown: their cost is unchanged")
        if old is not None and basket_bytes < old:
            notes.append(f"the baskets ({old / 1e3:.1f} kB) are already larger than "
                         f"{basket_bytes / 1e3:.1f} kB: kept as they are")
        b = replace(b, config=config, mean_basket_bytes=new_basket)
        if not b.request_fixed and b.config["request_bytes"] < new_basket:
            b = _rederive(b, new_basket)
        return b.note(*notes)

    kb = basket_bytes / 1e3
    return Scenario(
        f"baskets of {kb:.3g} kB", f"rewrite the files with baskets of about {kb:.3g} kB "
        "(hadd -O, or a larger fAutoFlush and basket buffer): fewer baskets to find, fetch "
        "and unpack", transform,
        ("the rewrite keeps the compression: the bytes per event are unchanged (larger "
         "baskets often compress a little better, which this ignores)", "every basket costs "
         "the measured fixed time whatever its size; the cost per MB (decompression, building "
         "the arrays) does not depend on the basket size", "the number of files, their "
         "opening and the read calls per file are unchanged", "reads set by the baskets "
         "(scattered access) grow with them: the larger of the new basket and the current "
         "request"))


def request_size(nbytes: float) -> Scenario:
    """Every read reaching the storage is ``nbytes`` (a TTreeCache, vectored reads)."""
    if nbytes <= 0:
        raise ValueError("the request size must be positive")

    def transform(b: Baseline) -> Baseline:
        return replace(_rederive(b, float(nbytes)), request_fixed=True)

    return Scenario(f"requests of {_size(nbytes)}",
                    f"read in requests of {_size(nbytes)} (a TTreeCache of that size, filled "
                    "per cluster, or vectored reads)", transform,
                    ("a cache of this size gathers the baskets of a cluster into one read; "
                     "where clusters are smaller the reads are too",))


def read_ahead(kb: float) -> Scenario:
    """The block device's read-ahead set to ``kb`` KiB (``blockdev --setra``)."""
    if kb <= 0:
        raise ValueError("the read-ahead must be positive")

    def transform(b: Baseline) -> Baseline:
        storage = None if b.storage is None else replace(b.storage, read_ahead_kb=float(kb))
        b = replace(b, storage=storage)
        if b.access == "scattered" or b.request_fixed:
            return b.note("read-ahead does not change these reads: scattered basket reads "
                          "(or a fixed request size) stay as they are")
        request = max(b.mean_basket_bytes or 0.0, kb * KIB)
        return _rederive(b, request)

    return Scenario(f"read-ahead {kb:g} KiB", f"set the device read-ahead to {kb:g} KiB "
                    f"(blockdev --setra {int(kb * 2)} DEVICE)", transform,
                    ("sequential reads reach the storage as read-ahead-sized requests",))


def cached() -> Scenario:
    """The files are in the page cache."""

    def transform(b: Baseline) -> Baseline:
        b = replace(b, config={**b.config, "cached": 1.0})
        size, mem = b.dataset_mb, b.memory_gb
        if size is not None and mem is not None and size > 0.8 * mem * 1000:
            b = b.note(f"the data ({size / 1000:.1f} GB) do not fit in 80% of the "
                       f"{mem:g} GB of RAM: only part of them can stay cached")
        return b

    return Scenario("page cache", "the files are in the page cache (read once before, or "
                    "small enough to stay)", transform,
                    ("a cached read runs at the page-cache rate with no device contention",))


def prestaged(storage: StorageSpec, rel_sd: float = SPEC_SD,
              assumptions: Sequence[str] = ()) -> Scenario:
    """The files copied to ``storage`` ahead of use (a file stager)."""
    return Scenario(f"pre-staged to {storage.name}",
                    f"copy the files to {storage.describe()} ahead of use (a file stager)",
                    lambda b: _with_storage(b, storage, rel_sd),
                    ("the copy runs ahead of the jobs and its time is not counted",
                     *assumptions))


def devices(storage: StorageSpec, rel_sd: float | None = SPEC_SD,
            assumptions: Sequence[str] = ()) -> Scenario:
    """The data on other devices (``device_spec``, ``parse_storage`` build one).  ``rel_sd``
    ``None``: the devices are the calibrated ones (their fitted uncertainty carries over)."""
    return Scenario(f"on {storage.describe().split(' (')[0]} ({storage.name})", f"the data on "
                    f"{storage.describe()}", lambda b: _with_storage(b, storage, rel_sd),
                    tuple(assumptions))


def device_spec(kind: str, layout: str = "single", count: int = 1,
                read_ahead_kb: float = 128.0) -> tuple[StorageSpec, str]:
    """A storage of preset devices (``hdd``, ``ssd``, ``nvme``) and the assumption it makes."""
    if kind not in DEVICE_PRESETS:
        raise ValueError(f"unknown device kind {kind!r}; expected one of "
                         f"{', '.join(DEVICE_PRESETS)}")
    mb, iops, statement = DEVICE_PRESETS[kind]
    spec = StorageSpec(name=kind, count=count,
                       layout=layout, mb_per_s=mb, iops=iops,  # type: ignore[arg-type]
                       read_ahead_kb=read_ahead_kb)
    return spec, statement


def parse_storage(text: str, baseline: Baseline) -> tuple[StorageSpec, float | None, str]:
    """``LAYOUT[:COUNT[:KIND]]`` or ``KIND`` (e.g. ``separate:4``, ``raid5:4:hdd``, ``nvme``):
    a storage, its uncertainty (``None``: the calibrated devices) and its assumption.  Without
    a kind, the devices are those of the baseline."""
    from .sites import LAYOUTS, MIN_COUNT

    parts = [p.strip().lower() for p in text.split(":")]
    if len(parts) == 1 and parts[0] in DEVICE_PRESETS:
        parts = ["single", "1", parts[0]]
    layout = parts[0]
    if layout not in LAYOUTS or len(parts) > 3:
        raise ValueError(f"{text!r}: expected LAYOUT[:COUNT[:KIND]] with LAYOUT one of "
                         f"{', '.join(LAYOUTS)} and KIND one of {', '.join(DEVICE_PRESETS)}")
    try:
        count = int(parts[1]) if len(parts) > 1 else MIN_COUNT[layout]
    except ValueError:
        raise ValueError(f"{text!r}: the device count must be a whole number") from None
    if count < MIN_COUNT[layout] or (layout == "single" and count != 1):
        raise ValueError(f"{text!r}: {layout} needs "
                         f"{'exactly 1' if layout == 'single' else f'at least {MIN_COUNT[layout]}'}"
                         " devices")
    ra = baseline.storage.read_ahead_kb if baseline.storage else \
        baseline.config["request_bytes"] / KIB
    if len(parts) == 3:
        spec, statement = device_spec(parts[2], layout, count, ra)
        return spec, PRESET_SD, statement
    if baseline.storage is not None:
        cur = baseline.storage
        spec = replace(cur, count=count,
                       layout=layout)  # type: ignore[arg-type]
        return spec, SPEC_SD, (f"devices as described in the site file ({cur.mb_per_s:g} MB/s, "
                               f"{cur.iops:g} IOPS each)")
    p = baseline.params
    per = p.storage_mb_per_s
    spec = StorageSpec(name="calibrated", count=count, layout=layout,  # type: ignore[arg-type]
                       mb_per_s=per, iops=1000.0 / p.access_ms, read_ahead_kb=ra)
    return spec, None, (f"the calibrated storage taken as one device ({per:.0f} MB/s, "
                        f"{p.access_ms:.2g} ms per access)")


def compression(algorithm: str, factor: float | None = None,
                decompress_mb_per_s: float | None = None) -> Scenario:
    """The data recompressed with ``algorithm``: bytes scale by old / new compression factor
    (the given factor, else the factor ratio measured on a recompressed sample of the
    dataset's baskets, ``Baseline.measured_factor``, else an assumed one, ``FACTOR_VS_ZLIB``);
    decompression runs at the given rate, else at the calibration's measured rate for that
    algorithm (on the dataset's own baskets or a recompressed sample of them), else at an
    assumed speed relative to the current one (``SPEED_VS_ZLIB``)."""
    alg = _algorithm(algorithm)
    name = f"{alg} compression" if alg != "none" else "uncompressed"

    def transform(b: Baseline) -> Baseline:
        notes: list[str] = []
        old_alg = b.algorithm if b.algorithm in SPEED_VS_ZLIB or b.algorithm == "none" else None
        if old_alg is None:
            old_alg = "ZLIB"
            notes.append("the current algorithm is unknown: taken as ZLIB")
        f_old = b.compression_factor
        if f_old is None:
            raise ValueError("the current compression factor is unknown: cannot scale the bytes")
        if alg == "none":
            f_new = 1.0
        elif factor is not None:
            f_new = float(factor)
        elif old_alg == "none":
            raise ValueError("from uncompressed data, give the new compression factor")
        elif alg in b.measured_factor and old_alg in b.measured_factor:
            ratio = b.measured_factor[alg] / b.measured_factor[old_alg]
            f_new = f_old * ratio
            notes.append(f"compression factor of {alg}: {f_new:.2f} (from {f_old:.2f}; "
                         f"{alg} / {old_alg} = {ratio:.3f} measured on a recompressed sample "
                         f"of the dataset's baskets{_baskets(b, alg)})")
        else:
            f_new = f_old * FACTOR_VS_ZLIB[alg] / FACTOR_VS_ZLIB[old_alg]
            notes.append(f"{FACTOR_SOURCE}: {alg} factor {f_new:.2f} (from {f_old:.2f})")
        scale = f_old / f_new  # compressed bytes, new / old
        p = b.params
        replaced = set(b.replaced)
        sd = dict(b.assumed_sd)
        config = {**b.config, "file_mb": b.config["file_mb"] * scale,
                  "decompress": 0.0 if alg == "none" else 1.0}
        dec = p.decompress_mb_per_s
        if alg != "none":
            if decompress_mb_per_s is not None:
                dec = float(decompress_mb_per_s)
                replaced.add("decompress_mb_per_s")
                sd.pop("decompress_mb_per_s", None)
                notes.append(f"decompression of {alg}: {dec:g} MB/s per core (given)")
            elif alg in b.measured_decompress:
                dec = float(b.measured_decompress[alg])
                replaced.add("decompress_mb_per_s")
                sd.pop("decompress_mb_per_s", None)
                notes.append(
                    f"decompression of {alg}: {dec:.0f} MB/s per core (measured by the "
                    "calibration, on a recompressed sample of the dataset's baskets"
                    f"{_baskets(b, alg)})" if alg in b.recompressed else
                    f"decompression of {alg}: {dec:.0f} MB/s per core (measured by the "
                    "calibration, on its own data)")
            elif old_alg == "none":
                raise ValueError(f"no decompression rate known for {alg}: give one")
            else:
                # the same uncompressed output, at the algorithm's relative speed
                dec = p.decompress_mb_per_s * f_old / f_new * SPEED_VS_ZLIB[alg] / \
                    SPEED_VS_ZLIB[old_alg]
                if alg != old_alg:
                    sd["decompress_mb_per_s"] = math.hypot(sd.get("decompress_mb_per_s", 0.0),
                                                           RATIO_SD)
                    notes.append(f"{SPEED_SOURCE}: {alg} {dec:.0f} compressed MB/s per core "
                                 f"(±{100 * RATIO_SD:.0f}%)")
        params = replace(p, decompress_mb_per_s=dec,
                         process_mb_per_s=p.process_mb_per_s * scale)
        basket = None if b.mean_basket_bytes is None else b.mean_basket_bytes * scale
        b = replace(b, params=params, config=config, algorithm=alg, compression_factor=f_new,
                    events_per_mb=None if b.events_per_mb is None else b.events_per_mb / scale,
                    mean_basket_bytes=basket, file_size_mb=None if b.file_size_mb is None
                    else b.file_size_mb * scale, replaced=frozenset(replaced), assumed_sd=sd,
                    mb_per_work=b.mb_per_work * scale)
        if b.access == "scattered" or b.request_fixed:
            b = _rederive(b, b.config["request_bytes"] * scale)
        elif b.storage is not None:
            b = _rederive(b, max(basket or 0.0, b.storage.read_ahead_kb * KIB))
        return b.note(*notes)

    return Scenario(name, f"recompress the data with {alg}" if alg != "none" else
                    "store the data uncompressed", transform,
                    ("the analysis costs the same per event: its rate per compressed MB scales "
                     "with the bytes per event", "baskets hold the same entries: their "
                     "compressed size scales with the bytes, their number per file is "
                     "unchanged"))


def _baskets(b: Baseline, alg: str) -> str:
    n = b.recompressed.get(alg)
    return f": {n} baskets" if n else ""


def branches(fraction: float) -> Scenario:
    """Read only the branches that hold ``fraction`` of each file's bytes."""
    if not 0 < fraction <= 1:
        raise ValueError("the fraction of bytes read must be in (0, 1]")

    def transform(b: Baseline) -> Baseline:
        config = {**b.config, "file_mb": b.config["file_mb"] * fraction}
        if config.get("baskets", 0.0) > 0:
            config["baskets"] = b.config["baskets"] * fraction
        return replace(b, config=config,
                       events_per_mb=None if b.events_per_mb is None
                       else b.events_per_mb / fraction, mb_per_work=b.mb_per_work * fraction)

    return Scenario(f"{100 * fraction:g}% of the bytes",
                    f"read only the branches that hold {100 * fraction:g}% of the bytes", transform,
                    ("reads keep their size and pattern (reading a subset of interleaved "
                     "branches scatters them more, which this does not model)", "processing "
                     "costs the same per MB read; opening a file costs the same", "the "
                     "baskets read per file scale with the bytes read"))


def site(spec: SiteSpec, storage_index: int = 0, rel_sd: float = SPEC_SD) -> Scenario:
    """The same analysis on another (hypothetical) site."""

    def transform(b: Baseline) -> Baseline:
        storage = spec.storage[storage_index]
        net = spec.network_mb_per_s
        params = replace(b.params, cache_mb_per_s=spec.page_cache_mb_per_s,
                         network_mb_per_s=net if net is not None else b.params.network_mb_per_s,
                         latency_ms=spec.network_latency_ms if storage.remote else 0.0)
        sd = {**b.assumed_sd, "cache_mb_per_s": LOOSE_SD}
        if storage.remote:
            sd.update(network_mb_per_s=rel_sd, latency_ms=LOOSE_SD)
        b = replace(b, params=params, cores=spec.cpu, memory_gb=spec.memory_gb, site=spec,
                    replaced=b.replaced | {"cache_mb_per_s", "network_mb_per_s", "latency_ms"},
                    assumed_sd=sd)
        return _with_storage(b, storage, rel_sd)

    return Scenario(f"site {spec.name}", f"the analysis on {spec.name}: {spec.cores} cores, "
                    f"{spec.storage[storage_index].describe()}", transform,
                    ("the per-core rates (decompression, processing, opening) are the same "
                     "on the new site's cores",))


# ---------------------------------------------------------------------------------------------
# Transform helpers


def _rederive(b: Baseline, request: float) -> Baseline:
    """A new request size, and the storage parameters it implies where the layout is known
    (the same devices: the parameters keep their uncertainty)."""
    config = {**b.config, "request_bytes": float(request)}
    if b.storage is None:
        return replace(b, config=config)
    r = storage_rates(b.storage, request)
    params = replace(b.params, storage_mb_per_s=r.mb_per_s, access_ms=r.access_ms,
                     devices=r.devices)
    return replace(b, config=config, params=params, spread=r.spread)


def _with_storage(b: Baseline, storage: StorageSpec, rel_sd: float | None) -> Baseline:
    """The data on ``storage``; ``rel_sd`` ``None``: the calibrated devices in a new layout."""
    if storage.remote and b.params.network_mb_per_s >= 1e6:
        raise ValueError(f"{storage.name} is remote, but no network link is known")
    if b.access == "scattered" or b.request_fixed:
        request = b.config["request_bytes"]
    else:
        request = max(b.mean_basket_bytes or 0.0, storage.read_ahead_kb * KIB)
    r = storage_rates(storage, request)
    params = replace(b.params, storage_mb_per_s=r.mb_per_s, access_ms=r.access_ms,
                     devices=r.devices)
    replaced = set(b.replaced) | {"devices"}
    sd = dict(b.assumed_sd)
    sd.pop("devices", None)
    if rel_sd is not None:
        replaced |= {"storage_mb_per_s", "access_ms"}
        sd.update(storage_mb_per_s=rel_sd, access_ms=rel_sd)
    config = {**b.config, "request_bytes": request, "cached": 0.0,
              "remote": 1.0 if storage.remote else 0.0}
    # a description's sequential streams follow the interleaving rule; a calibration's fit
    # keeps its own request semantics
    interleave = b.interleave or rel_sd is not None
    return replace(b, params=params, config=config, storage=storage, spread=r.spread,
                   replaced=frozenset(replaced), assumed_sd=sd, interleave=interleave)


def _algorithm(name: str) -> str:
    for known in (*SPEED_VS_ZLIB, "none"):
        if name.strip().lower() == known.lower():
            return known
    raise ValueError(f"unknown compression algorithm {name!r}; expected one of "
                     f"{', '.join((*SPEED_VS_ZLIB, 'none'))}")


def _size(nbytes: float) -> str:
    return f"{nbytes / KIB:g} KiB" if nbytes < 1 << 20 else f"{nbytes / (1 << 20):g} MiB"


def _as_dict(p: Params) -> dict[str, float]:
    return {f.name: float(getattr(p, f.name)) for f in fields(p)}


# ---------------------------------------------------------------------------------------------
# Prediction


@dataclass(frozen=True)
class ParameterValue:
    """One model parameter: its value, one-sigma uncertainty (``None``: none known), unit, and
    where it comes from: measured (a read test), fitted, assumed, or fixed (given)."""

    value: float
    uncertainty: float | None
    unit: str
    source: Source


@dataclass(frozen=True)
class PredictionPoint:
    """Aggregate compressed MB/s of ``workers`` jobs with its interval (``low``, ``high`` at
    the summary's ``level``), events/s, and the speed-up over the baseline: how much sooner the
    same events are read (with its interval)."""

    workers: int
    aggregate_mb_per_s: float
    low: float
    high: float
    events_per_s: float | None = None
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    description: str
    assumptions: tuple[str, ...]
    predictions: tuple[PredictionPoint, ...]


@dataclass(frozen=True)
class ModelSummary:
    """The model block of a document: parameters with uncertainties, the baseline's
    predictions, and the what-if scenarios'."""

    source: Literal["calibration", "description"]
    level: float
    cores: int
    threads_per_core: int
    ht_weight: float
    parameters: dict[str, ParameterValue]
    predictions: tuple[PredictionPoint, ...]
    scenarios: tuple[ScenarioResult, ...] = ()
    assumptions: tuple[str, ...] = ()
    site: SiteSpec | None = None
    workload: WorkloadSpec | None = None


def scenario_model(model: ThroughputModel, baseline: Baseline, new: Baseline
                   ) -> ThroughputModel:
    """A clone of ``model`` with every parameter fixed at ``new``'s values, the covariance of
    the parameters ``new`` did not replace carried over, and ``new``'s assumed uncertainties
    added (see the module's notes)."""
    free = list(getattr(model, "free_params_", ()))
    kept = [n for n in free if n not in new.replaced and getattr(new.params, n) > 0]
    idx = [free.index(n) for n in kept]
    cov_model = np.asarray(getattr(model, "log_covariance_", np.zeros((0, 0))), dtype=float)
    extra = {n: s for n, s in new.assumed_sd.items() if s > 0 and getattr(new.params, n) > 0}
    names = kept + [n for n in extra if n not in kept]
    cov = np.zeros((len(names), len(names)))
    if idx:
        cov[: len(kept), : len(kept)] = cov_model[np.ix_(idx, idx)]
    for n, s in extra.items():
        j = names.index(n)
        cov[j, j] += s**2
    from .throughput import ThroughputModel

    clone = ThroughputModel(cores=new.cores.cores, threads_per_core=new.cores.threads_per_core,
                            ht_weight=new.cores.ht_weight, noise=model.noise,
                            fixed=_as_dict(new.params))
    clone.fit(config_matrix([{}]), np.ones(1))
    _set_covariance(clone, new.params, names, cov)
    return clone


def _set_covariance(model: ThroughputModel, params: Params, names: Sequence[str],
                    cov: np.ndarray) -> None:
    model.free_params_ = tuple(names)
    model.log_covariance_ = np.asarray(cov, dtype=float)
    model.params_std_ = {n: None for n in PARAMS}
    for k, n in enumerate(names):
        model.params_std_[n] = float(getattr(params, n) * math.sqrt(max(cov[k, k], 0.0)))
    model.unconstrained_ = ()


def _log_grads(params: Params, cores: Cores, X: np.ndarray, names: Sequence[str],
               h: float = 1e-4) -> np.ndarray:
    base = np.log(np.maximum(params.vector(), 1e-300))
    out = np.zeros((len(X), len(names)))
    for k, n in enumerate(names):
        i = PARAMS.index(n)
        up, down = base.copy(), base.copy()
        up[i] += h
        down[i] -= h
        r_up = rates(Params.from_vector(np.exp(up)), X, cores)
        r_down = rates(Params.from_vector(np.exp(down)), X, cores)
        out[:, k] = (np.log(r_up) - np.log(r_down)) / (2 * h)
    return out


def _speedup_log_sd(model: ThroughputModel, baseline: Baseline, new: Baseline,
                    Xb: np.ndarray, Xn: np.ndarray) -> np.ndarray:
    """Standard deviation of log(new / baseline) from the parameters both share (the model's
    covariance) and the ones ``new`` assumes."""
    free = list(getattr(model, "free_params_", ()))
    cov = np.asarray(getattr(model, "log_covariance_", np.zeros((0, 0))), dtype=float)
    var = np.zeros(len(Xb))
    if free:
        valid = [n for n in free if getattr(baseline.params, n) > 0]
        gb = _log_grads(baseline.params, baseline.cores, Xb, valid)
        kept = [n for n in valid if n not in new.replaced and getattr(new.params, n) > 0]
        gn = _log_grads(new.params, new.cores, Xn, kept)
        a = np.zeros((len(Xb), len(free)))
        for k, n in enumerate(valid):
            a[:, free.index(n)] -= gb[:, k]
        for k, n in enumerate(kept):
            a[:, free.index(n)] += gn[:, k]
        var += np.einsum("ij,jk,ik->i", a, cov, a)
    # assumptions: shared by both (unchanged), only the baseline's, only the scenario's
    fresh_replaced = new.replaced - baseline.replaced
    shared = {n: s for n, s in baseline.assumed_sd.items()
              if s > 0 and new.assumed_sd.get(n) == s and n not in fresh_replaced
              and getattr(baseline.params, n) > 0 and getattr(new.params, n) > 0}
    gone = {n: s for n, s in baseline.assumed_sd.items()
            if s > 0 and n not in shared and getattr(baseline.params, n) > 0}
    fresh = {n: s for n, s in new.assumed_sd.items()
             if s > 0 and n not in shared and getattr(new.params, n) > 0}
    for group, sign_b, sign_n in ((shared, -1.0, 1.0), (gone, -1.0, 0.0), (fresh, 0.0, 1.0)):
        if not group:
            continue
        names = list(group)
        g = np.zeros((len(Xb), len(names)))
        if sign_b:
            g += sign_b * _log_grads(baseline.params, baseline.cores, Xb, names)
        if sign_n:
            g += sign_n * _log_grads(new.params, new.cores, Xn, names)
        var += (g**2) @ np.array([group[n] ** 2 for n in names])
    return np.sqrt(np.maximum(var, 0.0))


def predict_baseline(model: ThroughputModel, baseline: Baseline, workers: Sequence[int],
                     level: float = 0.9) -> tuple[PredictionPoint, ...]:
    """The baseline at each worker count, with intervals."""
    clone = scenario_model(model, baseline, baseline)
    X = baseline.X(workers)
    pred, low, high = clone.predict_interval(X, level)
    return tuple(PredictionPoint(int(w), float(p), float(lo), float(hi),
                                 _events(baseline, p))
                 for w, p, lo, hi in zip(workers, pred, low, high, strict=True))


def predict_scenarios(model: ThroughputModel, baseline: Baseline,
                      scenarios: Sequence[Scenario], workers: Sequence[int] | None = None,
                      level: float = 0.9) -> list[ScenarioResult]:
    """Each scenario at each worker count (a scenario that pins the workers: at its own
    count), with intervals and the speed-up over the baseline at the same worker count (at
    the baseline's own count for a pinned scenario).  The speed-up is how much sooner the same
    events are read (the ratio of events/s, also where the bytes per event changed)."""
    counts = list(workers) if workers else [baseline.workers]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    out = []
    for sc in scenarios:
        new = sc.apply(baseline)
        ws = [sc.workers] if sc.workers is not None else counts
        refs = [baseline.workers] * len(ws) if sc.workers is not None else ws
        clone = scenario_model(model, baseline, new)
        Xn, Xb = new.X(ws), baseline.X(refs)
        pred, low, high = clone.predict_interval(Xn, level)
        # the same events: MB/s over MB per event
        base = rates(baseline.params, Xb, baseline.cores) * new.mb_per_work / \
            baseline.mb_per_work
        spread = np.exp(z * _speedup_log_sd(model, baseline, new, Xb, Xn))
        points = []
        for k, w in enumerate(ws):
            s = float(pred[k] / base[k])
            points.append(PredictionPoint(int(w), float(pred[k]), float(low[k]), float(high[k]),
                                          _events(new, pred[k]), s, s / float(spread[k]),
                                          s * float(spread[k])))
        notes = tuple(n for n in new.notes if n not in baseline.notes)
        out.append(ScenarioResult(sc.name, sc.description, sc.assumptions + notes,
                                  tuple(points)))
    return out


def _events(b: Baseline, mb_per_s: float) -> float | None:
    return None if b.events_per_mb is None else float(mb_per_s * b.events_per_mb)


def parameter_table(model: ThroughputModel, baseline: Baseline) -> dict[str, ParameterValue]:
    std = getattr(model, "params_std_", {}) or {}
    sources = {**model_sources(model), **baseline.sources}
    return {n: ParameterValue(float(getattr(baseline.params, n)), std.get(n), UNITS[n],
                              sources[n]) for n in PARAMS}


def summarize(model: ThroughputModel, baseline: Baseline, workers: Sequence[int],
              scenarios: Sequence[Scenario] = (), level: float = 0.9,
              source: Literal["calibration", "description"] = "calibration") -> ModelSummary:
    """The model block: parameters, the baseline's predictions and the scenarios'."""
    return ModelSummary(
        source=source, level=level, cores=baseline.cores.cores,
        threads_per_core=baseline.cores.threads_per_core, ht_weight=baseline.cores.ht_weight,
        parameters=parameter_table(model, baseline),
        predictions=predict_baseline(model, baseline, workers, level),
        scenarios=tuple(predict_scenarios(model, baseline, scenarios, workers, level)),
        assumptions=baseline.notes, site=baseline.site, workload=baseline.workload)


def raw_rate(baseline: Baseline, streams: int = 1) -> float:
    """Raw reading (no decompression, processing or opening: ``dd``, ``fio``) of ``streams``
    sequential readers placed at random on the devices, as the model predicts it."""
    row = {**baseline.row(streams), "decompress": 0.0, "process": 0.0, "opens": 0.0}
    return float(rates(baseline.params, config_matrix([row]), baseline.cores)[0])


def device_capacity(baseline: Baseline) -> float:
    """What the devices deliver together, each streaming one reader without interference
    (one ``dd`` per disk): devices x one stream's raw rate."""
    row = {**baseline.row(1), "workers": 1.0, "decompress": 0.0, "process": 0.0, "opens": 0.0}
    if baseline.interleave and baseline.access == "sequential":
        row["request_bytes"] = max(row["request_bytes"], row["file_mb"] * 1e6)
    one = float(rates(replace(baseline.params, devices=1.0), config_matrix([row]), Cores(1))[0])
    return one * baseline.params.devices
