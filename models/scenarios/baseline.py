"""The baseline a what-if starts from: a described site and workload, or a fitted calibration.

A :class:`Baseline` is what the model predicts from: the physical parameters, the CPU and the
configuration of the analysis (``physics.FEATURES``), plus what the transforms need to know (the
storage layout, the access pattern, the compression, events per MB).

What a transform does to a parameter is recorded for the prediction's uncertainty: a *scaled*
parameter (more bytes per event, another algorithm's speed relative to the measured one) keeps
its fitted log-uncertainty; a *replaced* one (an assumed device, a hypothetical site) is listed
in ``Baseline.replaced``, and the relative uncertainty its assumption states (one sigma,
log-normal) in ``Baseline.assumed_sd``.  ``prediction`` turns both into intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from hep_advisor.probes.readtests.results import Calibration

from ..physics import PARAMS, Cores, Params, config_matrix
from ..sites import (
    KIB,
    SiteSpec,
    StorageSpec,
    WorkloadSpec,
    access_bytes,
    batch_bytes,
    config_for,
    params_for,
    request_bytes_for,
    storage_rates,
)
from .assumptions import LOOSE_SD, SPEC_SD

if TYPE_CHECKING:
    from ..throughput import ThroughputModel

Source = Literal["measured", "fitted", "assumed", "fixed"]
Access = Literal["sequential", "scattered"]


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
    #: the branches whose basket each read call after a file's first interprets again
    #: (``config["straddles"]`` per extra call; 0: none, or not known)
    straddle_branches: float = 0.0
    workload: WorkloadSpec | None = None

    def row(self, workers: int) -> dict[str, float]:
        """The configuration of ``workers`` jobs."""
        r = dict(self.config)
        r["workers"] = float(workers)
        if (self.interleave and self.access == "sequential" and r.get("cached", 0.0) < 0.5
                and r.get("remote", 0.0) < 0.5):
            r["request_bytes"] = access_bytes(self.config["request_bytes"],
                                              r["file_mb"] * 1e6, workers,
                                              self.params.devices, self.spread,
                                              batch_bytes(self.storage) if self.storage
                                              else None)
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
    from ..throughput import ThroughputModel

    names = [n for n in PARAMS if rel_sd.get(n, 0.0) > 0 and getattr(params, n) > 0]
    return ThroughputModel.from_params(params, cores, names,
                                       np.diag([rel_sd[n] ** 2 for n in names]), noise)


def calibration_baseline(model: ThroughputModel, config: Mapping[str, float], *,
                         events_per_mb: float | None = None, algorithm: str | None = None,
                         compression_factor: float | None = None,
                         mean_basket_bytes: float | None = None,
                         measured_decompress: Mapping[str, float] | None = None,
                         files: int | None = None, memory_gb: float | None = None,
                         access: Access = "sequential",
                         measured_factor: Mapping[str, float] | None = None,
                         recompressed: Mapping[str, int] | None = None,
                         straddle_branches: float = 0.0) -> Baseline:
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
                    sources=model_sources(model), straddle_branches=straddle_branches)


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
    free = set(getattr(model, "free_params_", ())) - set(getattr(model, "assumed_", ()))
    out: dict[str, Source] = {}
    for n in PARAMS:
        out[n] = ("fixed" if n in fixed else "measured" if n in priors
                  else "fitted" if n in free else "assumed")
    return out
