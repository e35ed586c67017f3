"""What-if scenarios on the storage: request sizes, read-ahead, other devices or layouts, the
files pre-staged to other storage, and the whole analysis on another site.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..sites import KIB, SiteSpec, StorageSpec
from .assumptions import DEVICE_PRESETS, LOOSE_SD, PRESET_SD, SPEC_SD
from .baseline import Baseline
from .transforms import Scenario, _rederive, _with_storage


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


def read_ahead(kb: float, device_ios: float | None = None) -> Scenario:
    """The block device's read-ahead set to ``kb`` KiB (``blockdev --setra``).
    ``device_ios``: the device I/Os of a file opened and read whole, cold, at that read-ahead
    (``hep_advisor.models.replay.fileios.cold_file_ios``), in place of the baseline's where it has
    them (without it, they stay the baseline's)."""
    if kb <= 0:
        raise ValueError("the read-ahead must be positive")

    def transform(b: Baseline) -> Baseline:
        storage = None if b.storage is None else replace(b.storage, read_ahead_kb=float(kb))
        b = replace(b, storage=storage)
        if device_ios is not None and b.config.get("device_ios"):
            b = replace(b, config={**b.config, "device_ios": float(device_ios)})
        if b.access == "scattered" or b.request_fixed:
            return b.note("read-ahead does not change these reads: scattered basket reads "
                          "(or a fixed request size) stay as they are")
        request = max(b.mean_basket_bytes or 0.0, kb * KIB)
        return _rederive(b, request)

    return Scenario(f"read-ahead {kb:g} KiB", f"set the device read-ahead to {kb:g} KiB "
                    f"(blockdev --setra {int(kb * 2)} DEVICE)", transform,
                    ("sequential reads reach the storage as read-ahead-sized requests",))


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
    from ..sites import LAYOUTS, MIN_COUNT

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


def _size(nbytes: float) -> str:
    return f"{nbytes / KIB:g} KiB" if nbytes < 1 << 20 else f"{nbytes / (1 << 20):g} MiB"
