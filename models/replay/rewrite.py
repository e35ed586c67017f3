"""A recompression replayed: the layout a rewrite with another codec writes, read by the
program's reader, against today's files.

C001 prints ``hadd -O -f<setting> recompressed.root <every file>``: it merges the files into
one, refills the baskets (``-O``: :func:`~.layouts.optimized_merge`) and writes them with the
new codec.  Its time is replayed like a merge's (:mod:`.predict`), with three differences:

- the baskets' payloads scale by ``size_factor`` (new compressed bytes over old: the
  compression factor measured on a recompressed sample of the dataset's baskets,
  :func:`recompressed`), before the merge, so that ROOT's AutoFlush (30 MB of compressed
  baskets) closes the clusters on the new sizes, as ``hadd`` does;
- the decompression runs at the new codec's measured rate (compressed MB/s);
- the processing rate, which the model counts per compressed MB, scales by ``size_factor``
  (the same uncompressed bytes are processed: :func:`recoded_costs`).

The baskets are refilled by ROOT's rule (:func:`~.layouts.optimized_merge`: the first file's
buffers and AutoFlush, the buffers resized at the first flush).  Not modelled: larger baskets
compressing better (the sample's factor is of today's baskets), so the rewritten files can
come out smaller than the replay says; the range spans ``size_range`` for that (and for the
size factor's own sampling error), each end's layout replayed anew.  A merge of
more than ``MAX_MERGED_INPUTS`` files is replayed on its first that many: where the whole
merge would first flush on bytes (ROOT's default AutoFlush) only beyond them, the replay
keeps the files' buffers throughout.  Where the printed command does not merge
(``merge=False``), each file is rewritten alone with ``hadd -O`` (its baskets refilled).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hep_advisor.probes.basketmap import BasketMap, Region

from .cpucosts import CpuCosts
from .device import LocalDevice
from .layouts import groups, optimized_merge
from .predict import LayoutTime, Reader, layout_time, retimed
from .quadrature import quadrature

#: Inputs replayed into the one merged file at most: a larger merge is replayed as merges of
#: this many inputs (each output's fixed costs then counted once per this many inputs).
MAX_MERGED_INPUTS = 32


#: The rewritten layout is also replayed with every basket's bytes these times the size
#: factor's (then scaled back to it): where its keys and baskets fall against the device's
#: read-ahead windows is not known to the byte, and a cold read of many small requests
#: (uproot's key pre-pass) moves with it.  On a 3-file split-object dataset rewritten with
#: ``hadd -O`` (107 branches, 4,558 baskets) sizes 1% apart gave 524-652 device reads, and
#: the real output's map 644 where the modelled one gave 577 (benchmarks/RESULTS.md).
ALIGNMENT = (0.98, 1.02)


def recompressed(m: BasketMap, size_factor: float, path: str | None = None) -> BasketMap:
    """``m`` with every basket's payload (its bytes less its key) times ``size_factor``, the
    baskets packed again in their order on disk from the first one's offset, and the regions
    after the data moved by the change (the header and anything before the data stay)."""
    if size_factor <= 0:
        raise ValueError(f"size factor {size_factor!r} is not positive")
    flat = m.flat()
    if len(flat["seek"]) == 0:
        return replace(m, path=path or m.path) if path else m
    by_index = {b.index: b for b in m.branches}
    first = int(flat["seek"][0])
    pos = first
    new_seek = {b.index: np.zeros(b.baskets, dtype=np.int64) for b in m.branches}
    new_bytes = {b.index: np.zeros(b.baskets, dtype=np.int32) for b in m.branches}
    for bi, j in zip(flat["branch"].tolist(), flat["basket"].tolist(), strict=True):
        b = by_index[bi]
        key = int(b.keylen[j])
        size = key + max(1, round((int(b.nbytes[j]) - key) * size_factor))
        new_seek[bi][j] = pos
        new_bytes[bi][j] = size
        pos += size
    old_end = int(max(s + n for s, n in zip(flat["seek"].tolist(), flat["nbytes"].tolist(),
                                             strict=True)))
    shift = pos - old_end
    branches = []
    for b in m.branches:
        grown = int(new_bytes[b.index].sum()) - int(b.nbytes.sum())
        branches.append(replace(b, seek=new_seek[b.index], nbytes=new_bytes[b.index],
                                compressed_bytes=max(b.compressed_bytes + grown, 0)))
    regions = tuple(Region(r.name, r.offset + shift, r.size) if r.offset >= first else r
                    for r in m.regions)
    return BasketMap(path=path or m.path, tree=m.tree, file_bytes=max(m.file_bytes + shift, pos),
                     entries=m.entries, branches=tuple(branches), clusters=m.clusters,
                     regions=regions, cluster_source=m.cluster_source,
                     uproot_streamers=m.uproot_streamers, autoflush=m.autoflush)


def rewritten_layout(maps: Sequence[BasketMap], files: int, size_factor: float, *,
                     merge: bool = True) -> tuple[list[BasketMap], float, int]:
    """(the replayed output maps, how many outputs each stands for, outputs): ``files`` files
    (``maps``: a sample of them, standing in for the files in turn) recompressed by
    ``size_factor`` and merged into one with ``hadd -O`` (``merge``), or each rewritten alone
    with ``hadd -O`` (its baskets refilled).  A merge of more than ``MAX_MERGED_INPUTS``
    files is replayed as merges of that many."""
    if not maps:
        raise ValueError("no basket maps")
    small = [recompressed(m, size_factor, f"<recompressed {i}>") for i, m in enumerate(maps)]
    if not merge:
        return ([optimized_merge([m], path=f"<rewritten {i}>", jobs=1)
                 for i, m in enumerate(small)], files / len(maps), files)
    per = min(files, MAX_MERGED_INPUTS)
    first = groups(small, per, per)[0]
    out = optimized_merge(first, path="<rewritten 0>", jobs=1)
    return [out], files / per, 1


def recoded_costs(costs: CpuCosts, decompress_mb_per_s: float, size_factor: float,
                  decompress_basket_s: float | None = None) -> CpuCosts:
    """``costs`` after the rewrite: decompression at the new codec's rate (compressed MB/s),
    processing per compressed MB ``size_factor`` times faster (the same uncompressed bytes in
    ``size_factor`` times the compressed ones); the per-file, per-call and per-basket terms
    unchanged (the ROOT terms alike).  The new codec's fixed cost per basket
    (``decompress_basket_s``; ``None``: not counted): its rate was measured on today's baskets,
    which hold ``1 / size_factor`` times today's baskets per MB in its bytes."""
    def one(c: CpuCosts) -> CpuCosts:
        return replace(c, decompress_mb_per_s=decompress_mb_per_s if c.decompress_mb_per_s > 0
                       else 0.0,
                       process_mb_per_s=c.process_mb_per_s * size_factor,
                       decompress_basket_s=float(decompress_basket_s or 0.0),
                       basket_density=c.basket_density / size_factor if size_factor > 0
                       else 0.0)
    return replace(one(costs), root=one(costs.root) if costs.root is not None else None,
                   variants=tuple(one(v) for v in costs.variants))


@dataclass(frozen=True)
class RecompressionPrediction:
    """Today's files and the rewritten ones read by the same reader, one worker, cold: the
    times, the speed-up and its range."""

    before: LayoutTime
    after: LayoutTime
    speedup: float
    low: float
    high: float
    merged: bool
    outputs: int
    size_factor: float


def recompression_prediction(
        maps: Sequence[BasketMap], files: int, device: LocalDevice, costs: CpuCosts, *,
        size_factor: float, decompress_mb_per_s: float, reader: Reader, merge: bool = True,
        branches: Sequence[str] | None = None, device_sd: tuple[float, float] = (0.0, 0.0),
        cpu_sd: float = 0.0, rate_sd: tuple[float, float] = (0.0, 0.0),
        size_range: tuple[float, float] | None = None, z: float = 1.645,
        alignment: bool = True, interval: bool = True,
        memo: dict[object, object] | None = None,
        new_basket_s: float | None = None) -> RecompressionPrediction:
    """``files`` files (``maps``: a sample) read with ``reader`` now, and after the rewrite
    (:func:`rewritten_layout`) with the new codec (:func:`recoded_costs`).

    The range: each input alone at its ends, the shifts of the log speed-up added in
    quadrature: ``z`` sigmas of the device's bandwidth and access time
    (``device_sd``, relative), the per-file costs (``cpu_sd``), today's and the new codec's
    decompression rates (``rate_sd``), uproot's overlap range (``costs.overlap_range``, its 5%
    and 95% points), and the size factor at both ends of ``size_range`` (the rewritten layout
    built and replayed again at each size: ROOT's AutoFlush of 30 MB may cut the merged
    file's baskets at one size and not at the other), and where the rewritten file's bytes
    fall against the device's read-ahead windows (``alignment``; :data:`ALIGNMENT`: the
    layout replayed again with every basket a little smaller and larger, its bytes then scaled
    back, at the central costs).
    ``interval``: ``False`` for the central figure alone (low = high = it: a candidate's scan).
    ``memo``: kept between calls on the same ``maps`` (layouts and replays reused).
    ``new_basket_s``: the new codec's fixed cost per basket (measured on the recompressed
    sample; ``None``: not counted); today's codec's is ``costs.decompress_basket_s``, both rates
    holding at today's baskets."""
    if not maps:
        raise ValueError("no basket maps")
    memo = {} if memo is None else memo
    tbl = tuple(branches) if branches is not None else None

    def after_replay(factor: float) -> LayoutTime:
        key = ("rewrite", id(maps), files, round(factor, 6), merge, device, reader, tbl)
        if key not in memo:
            out, scale, _ = rewritten_layout(maps, files, factor, merge=merge)
            memo[key] = layout_time(out, device, costs, branches=branches, scale=scale,
                                    reader=reader)
        return memo[key]  # type: ignore[return-value]

    bkey = ("layout", id(maps), device, files / len(maps), reader, tbl)
    if bkey not in memo:
        memo[bkey] = layout_time(maps, device, costs, branches=branches,
                                 scale=files / len(maps), reader=reader)
    b0: LayoutTime = memo[bkey]  # type: ignore[assignment]
    central = after_replay(size_factor)
    costs = costs.at_density(b0.baskets, b0.compressed_mb)
    before = b0.with_costs(costs)
    recoded = recoded_costs(costs, decompress_mb_per_s, size_factor, new_basket_s)
    after = central.with_costs(recoded)
    s = before.total_s / after.total_s
    if not interval:
        return RecompressionPrediction(before, after, s, s, s, merge, 1 if merge else files,
                                       size_factor)
    sd_bw, sd_acc = device_sd
    sd_old, sd_new = rate_sd
    # a retimed (throttled) replay is costly: once per device setting and size
    io: dict[tuple[float, float, float], LayoutTime] = {}

    def replayed(fb: float, fa: float, f: float) -> LayoutTime:
        if (fb, fa, f) not in io:
            base = b0 if f == 0.0 else after_replay(f)
            io[fb, fa, f] = base if fb == fa == 0.0 else \
                retimed(base, device, math.exp(fb * z * sd_bw), math.exp(fa * z * sd_acc))
        return io[fb, fa, f]

    def ratio(fb: float = 0.0, fa: float = 0.0, fc: float = 0.0, fo: float = 0.0,
              fn: float = 0.0, f: float = size_factor, cpu: CpuCosts | None = None) -> float:
        """The speed-up with each input ``f*`` sigmas off (before and after together)."""
        c = (cpu or costs).scaled(math.exp(fc * z * cpu_sd)) if fc else (cpu or costs)
        bt = replayed(fb, fa, 0.0).with_costs(_rate_scaled(c, math.exp(fo * z * sd_old)))
        at = replayed(fb, fa, f).with_costs(recoded_costs(
            c, decompress_mb_per_s * math.exp(fn * z * sd_new), f, new_basket_s))
        return bt.total_s / at.total_s

    # one input at a time at its 90% ends, the others at their points; the log speed-up's
    # shifts added in quadrature (independent inputs, to first order)
    effects: list[list[float]] = []
    moved: list[tuple[float, Callable[[float], float]]] = [
        (sd_bw, lambda v: ratio(fb=v)), (sd_acc, lambda v: ratio(fa=v)),
        (cpu_sd, lambda v: ratio(fc=v)), (sd_old, lambda v: ratio(fo=v)),
        (sd_new, lambda v: ratio(fn=v))]
    for sd, at in moved:
        if sd > 0:
            effects.append([at(v) for v in (-1.0, 1.0)])
    ranges: list[tuple[Sequence[float], Callable[[float], CpuCosts]]] = [
        (costs.overlap_range or (), lambda v: replace(costs, overlap=v)),
        (costs.touch_range or (), lambda v: replace(costs, touch_s=v))]
    for rng, with_ in ranges:  # an assumed range: its 5% and 95% points
        if len(rng) > 1 and max(rng) > min(rng):
            lo, hi = min(rng), max(rng)
            effects.append([ratio(cpu=with_(lo + q * (hi - lo))) for q in (0.05, 0.95)])
    others = [f for f in (size_range or ()) if f != size_factor]
    if others:  # the size change's ends: the rewritten layout built again at each
        effects.append([ratio(f=f) for f in others])
    if alignment:  # where the rewritten bytes fall against the read-ahead windows
        backs = [resized(after_replay(size_factor * j), device, 1 / j).with_costs(recoded)
                 for j in ALIGNMENT]
        effects.append([s * after.total_s / back.total_s for back in backs])
    low, high = quadrature(s, effects)
    return RecompressionPrediction(before, after, s, low, high,
                                   merge, 1 if merge else files, size_factor)



def resized(lt: LayoutTime, device: LocalDevice, r: float, bw_factor: float = 1.0,
            access_factor: float = 1.0) -> LayoutTime:
    """``lt`` (a layout's replay through ``device``) with ``r`` times the bytes: the same
    requests, their transfer times and the MB decompressed scaled (:func:`.retimed` on a
    device with the bandwidth times ``bw_factor / r`` and the access time times
    ``access_factor``)."""
    out = retimed(lt, device, bw_factor / r, access_factor)
    return replace(out, compressed_mb=out.compressed_mb * r)


def _rate_scaled(c: CpuCosts, f: float) -> CpuCosts:
    """``c`` with today's decompression rate times ``f`` (the ROOT terms alike)."""
    def one(x: CpuCosts) -> CpuCosts:
        return replace(x, decompress_mb_per_s=x.decompress_mb_per_s * f)
    return replace(one(c), root=one(c.root) if c.root is not None else None)


__all__ = ["ALIGNMENT", "MAX_MERGED_INPUTS", "RecompressionPrediction", "recoded_costs",
           "recompressed", "recompression_prediction", "resized", "rewritten_layout"]
