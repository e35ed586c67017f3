"""What-if scenarios: named, pure transforms of a baseline, each with the assumptions it makes.

A :class:`Scenario` turns a :class:`~.baseline.Baseline` into another: files merged or
rewritten with larger baskets, the data cached, recompressed or read in part (here), or the data
on other devices and sites (``storage``).  A transform either *scales* a parameter (more bytes
per event, another algorithm's decompression speed relative to the measured one), which keeps
its fitted uncertainty, or *replaces* it with a value that does not come from the fit, recorded
in ``Baseline.replaced`` with the uncertainty the assumption states in ``Baseline.assumed_sd``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from hep_advisor.probes.readtests.overhead import calls_per_file

from ..sites import KIB, StorageSpec, storage_rates
from .assumptions import FACTOR_SOURCE, FACTOR_VS_ZLIB, RATIO_SD, SPEED_SOURCE, SPEED_VS_ZLIB
from .baseline import Baseline


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
                if b.straddle_branches > 0:
                    # each call after a file's first interprets a basket per branch again
                    config["straddles"] = max(config["calls"] - 1.0, 0.0) * b.straddle_branches
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


def branches(fraction: float, branch_fraction: float | None = None) -> Scenario:
    """Read only the branches that hold ``fraction`` of each file's bytes (``branch_fraction``
    of the branches read now, where known).  A read call's fixed cost is paid per branch
    (uproot finds, interprets and builds each branch's arrays), so the read calls' cost scales
    with the share of the branches, or, where it is not given, with the share of the bytes."""
    if not 0 < fraction <= 1:
        raise ValueError("the fraction of bytes read must be in (0, 1]")
    if branch_fraction is not None and not 0 < branch_fraction <= 1:
        raise ValueError("the fraction of branches read must be in (0, 1]")
    per_call = fraction if branch_fraction is None else branch_fraction

    def transform(b: Baseline) -> Baseline:
        config = {**b.config, "file_mb": b.config["file_mb"] * fraction}
        if config.get("baskets", 0.0) > 0:
            config["baskets"] = b.config["baskets"] * fraction
        if config.get("calls", 0.0) > 0:
            config["calls"] = b.config["calls"] * per_call
        # the same calls cut the baskets of fewer branches
        if config.get("straddles", 0.0) > 0:
            config["straddles"] = b.config["straddles"] * per_call
        return replace(b, config=config, straddle_branches=b.straddle_branches * per_call,
                       events_per_mb=None if b.events_per_mb is None
                       else b.events_per_mb / fraction, mb_per_work=b.mb_per_work * fraction)

    calls = ("the read calls' fixed cost scales with the share of the branches read"
             if branch_fraction is not None else "the read calls' fixed cost (per branch) "
             "scales with the bytes read (the share of the branches is not known)")
    name = f"{100 * fraction:g}% of the bytes"
    if branch_fraction is not None:
        name += f", {100 * branch_fraction:.3g}% of the branches"
    return Scenario(name,
                    f"read only the branches that hold {100 * fraction:g}% of the bytes", transform,
                    ("reads keep their size and pattern (reading a subset of interleaved "
                     "branches scatters them more, which this does not model)", "processing "
                     "costs the same per MB read; opening a file costs the same", "the "
                     "baskets read per file scale with the bytes read", calls))


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
        # a described device has its own form (a disk unless it says it is a rate limiter)
        params = replace(params, storage_overlap=1.0 if storage.limit == "max" else 0.0)
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
