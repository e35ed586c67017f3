"""C001's printed command replayed: the rewritten layout (merged with ``hadd -O``, the new
codec) read by the program's reader, against today's files
(:mod:`hep_advisor.models.replay.rewrite`).

The figures C001 shows come from here where the basket maps allow a replay; the rate model's
compression scenario (decompression rate and bytes changed, layout unchanged) is the fallback.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from hep_advisor.findings.recommendation import Evidence
from hep_advisor.models.calcosts import decompression_basket_s
from hep_advisor.models.replay.predict import Reader
from hep_advisor.models.replay.rewrite import (
    ALIGNMENT,
    RecompressionPrediction,
    recompression_prediction,
)
from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.rules.context import Context

#: The largest dataset (compressed MB) C001's command merges into one file; a larger one is
#: recompressed file by file (as M001, a merged file stays easy to move).
MERGE_MAX_MB = 10_000.0
#: ``hadd -O`` refills the baskets, and larger ones compress better than small ones: the
#: rewritten bytes may be up to this share smaller than the sample's factor says (an
#: assumption, from the ZLIB-1 and LZ4 rewrites seen: 10-13% smaller); the range spans it.
LARGER_BASKETS_SHRINK = 0.15
#: The smallest relative one-sigma uncertainty given to a measured size change (the sample's
#: standard error counts its baskets as independent, but the baskets of one branch compress
#: alike; an assumption).
MIN_SIZE_SD = 0.02
#: The relative one-sigma uncertainty of a size change whose spread was not measured (an
#: assumed factor, or a calibration written before the spread was recorded).
ASSUMED_SIZE_SD = 0.15
#: The smallest relative one-sigma uncertainty given to a measured decompression rate (the
#: loop decompresses among other work; an assumption).
MIN_RATE_SD = 0.05
#: The relative one-sigma uncertainty of an assumed decompression rate (no measurement).
ASSUMED_RATE_SD = 0.5


@dataclass(frozen=True)
class CodecReplay:
    """The printed command replayed, and its parts: the merge alone (same codec, ``None``
    where the command does not merge) and the codec alone (file by file, no merge)."""

    command: RecompressionPrediction
    merge_only: RecompressionPrediction | None
    codec_only: RecompressionPrediction | None
    reader: Reader
    reader_known: bool


def merges(ctx: Context) -> bool:
    """Whether C001's command merges the files into one (more than one file, and the
    dataset no larger than ``MERGE_MAX_MB``)."""
    tree = ctx.tree
    return tree is not None and tree.files > 1 and tree.compressed_bytes / 1e6 <= MERGE_MAX_MB


def _rel(ctx: Context, name: str) -> float:
    p = ctx.summary.parameters.get(name)
    if p is None or p.uncertainty is None or not p.value:
        return 0.0
    return min(abs(p.uncertainty / p.value), 1.0)


def rate_sd(ctx: Context, cand: str) -> tuple[float, bool]:
    """(relative one-sigma uncertainty of ``cand``'s decompression rate, measured?)."""
    points = [d for d in (ctx.calibration.decompression if ctx.calibration else ())
              if d.algorithm == cand and d.compressed_mb_per_s]
    point = next((d for d in points if d.source == "dataset"), None) or next(iter(points), None)
    if point is None:
        return ASSUMED_RATE_SD, False
    spread = point.measurement.spread or 0.0
    return max(spread / 1.349, MIN_RATE_SD), True  # IQR / median -> sigma


def size_sd(ctx: Context, cand: str) -> tuple[float, bool]:
    """(relative one-sigma uncertainty of ``cand``'s size change, measured?): the recompressed
    sample's standard error over its baskets (at least ``MIN_SIZE_SD``), else
    ``ASSUMED_SIZE_SD``."""
    tree = ctx.tree
    alg = tree.compression.algorithm if tree is not None else None
    point = next((d for d in (ctx.calibration.decompression if ctx.calibration else ())
                  if d.algorithm == cand and d.source == "recompressed"
                  and d.recompressed_from == alg and d.compression_factor
                  and d.dataset_factor), None)
    if point is None or point.size_change_sd is None:
        return ASSUMED_SIZE_SD, False
    return max(point.size_change_sd, MIN_SIZE_SD), True


def size_range(ctx: Context, cand: str, size_factor: float) -> tuple[float, float]:
    """The size factors C001's range spans: down by ``LARGER_BASKETS_SHRINK`` or the sample's
    error at the interval's level, whichever is more, and up by the sample's error."""
    sd, _ = size_sd(ctx, cand)
    z = NormalDist().inv_cdf(0.5 + ctx.level / 2)
    return (size_factor * min(1 - LARGER_BASKETS_SHRINK, math.exp(-z * sd)),
            size_factor * math.exp(z * sd))


def codec_replay(ctx: Context, cand: str, size_factor: float, rate: float, *,
                 parts: bool = True, interval: bool = True) -> CodecReplay | None:
    """C001's command for ``cand`` (``size_factor``: new over old compressed bytes; ``rate``:
    its decompression, compressed MB/s, as the scenario takes it: measured, or assumed
    relative to the fitted rate, and then kept relative to the replay's rate) replayed with
    the program's reader (default: the event loop's entry step), one worker, and
    (``parts``) the merge alone and the codec alone (``interval``: ``False`` for the central
    figures alone, as a scan of candidates needs): ``None`` without basket maps, with
    several workers, or where a branch is missing from the maps."""
    tree = ctx.tree
    if not ctx.basket_maps or tree is None or ctx.baseline.workers != 1:
        return None
    prog = ctx.program_reader
    rctx = ctx.reader_context() if prog is not None else ctx
    reader = prog or Reader()
    merge = merges(ctx)
    sd_new, measured = rate_sd(ctx, cand)
    sd_old = _rel(ctx, "decompress_mb_per_s")
    device, costs = ctx.replay_device(), ctx.replay_costs()
    # today's rate is the replay's own (the calibration's measured one where its CPU terms
    # come from the event loop); an assumed candidate rate keeps its ratio to today's
    old_rate = costs.decompress_mb_per_s
    fitted = ctx.param("decompress_mb_per_s")
    if not measured and fitted > 0:
        rate = old_rate * rate / fitted
    sizes = size_range(ctx, cand, size_factor)
    z = NormalDist().inv_cdf(0.5 + ctx.level / 2)
    # the codecs' fixed cost per basket (measured on today's baskets): a rewrite into larger
    # baskets saves it per basket fewer; the candidate's where its rate was measured
    new_c0 = decompression_basket_s(ctx.calibration, cand, "recompressed") if measured \
        else None

    def run(factor: float, dec: float, together: bool, sds: tuple[float, float],
            sizes: tuple[float, float] | None, alignment: bool = True,
            c0: float | None = new_c0) -> RecompressionPrediction:
        return recompression_prediction(
            ctx.basket_maps, tree.files, device, costs, size_factor=factor,
            decompress_mb_per_s=dec, reader=reader, merge=together,
            branches=rctx.branches or None,
            device_sd=(ctx.input_spread.bandwidth, ctx.input_spread.access),
            cpu_sd=ctx.input_spread.cpu,
            rate_sd=sds, size_range=sizes, z=z, alignment=alignment, interval=interval,
            memo=rctx.replay_memo, new_basket_s=c0)

    try:
        command = run(size_factor, rate, merge, (sd_old, sd_new), sizes)
        # the parts are evidence: their ranges leave out where the bytes fall (alignment)
        merge_only = run(1.0, old_rate, True, (0.0, 0.0), None, False,
                         costs.decompress_basket_s or None) \
            if parts and merge and old_rate > 0 else None
        codec_only = run(size_factor, rate, False, (sd_old, sd_new), None, False) \
            if parts and merge else None
    except (KeyError, ValueError):
        return None
    return CodecReplay(command, merge_only, codec_only, reader, prog is not None)


def replay_evidence(rep: CodecReplay, files: int) -> list[Evidence]:
    """The replay's figures: times now and after, and the command's parts."""
    c = rep.command
    b, a = c.before, c.after
    how = rep.reader.describe() + (" (the program's reader)" if rep.reader_known
                                   else " (the event loop's reader: no --reader given)")
    layout = (f"{files} files merged into one by hadd -O" if c.merged
              else "each file rewritten alone")
    ev = [
        Evidence("replayed time now / rewritten", f"{b.total_s:.2f} / {a.total_s:.2f}", "s",
                 "derived", f"{how}, one worker, cold; {layout}"),
        Evidence("replayed I/O now / rewritten", f"{b.io_s:.3f} / {a.io_s:.3f}", "s",
                 "derived", f"{b.io.device_requests * b.scale:,.0f} / "
                 f"{a.io.device_requests * a.scale:,.0f} device reads"),
        Evidence("CPU now / rewritten", f"{b.cpu_s:.2f} / {a.cpu_s:.2f}", "s", "derived",
                 "opening, read calls, baskets, decompression (the new codec's measured rate "
                 "after), processing"),
    ]
    if rep.merge_only is not None:
        m = rep.merge_only
        ev.append(Evidence("of which the merge (hadd -O, codec kept)", round(m.speedup, 2),
                           "x", "derived", f"replayed alike ({m.low:.2f}–{m.high:.2f}x): the "
                           "part of the command a merge gives (M001 merges too, in groups)"))
    if rep.codec_only is not None:
        o = rep.codec_only
        ev.append(Evidence("the codec alone (file by file, no merge)", round(o.speedup, 2),
                           "x", "derived", f"replayed alike ({o.low:.2f}–{o.high:.2f}x)"))
    return ev


def entry_autoflush(maps: tuple[BasketMap, ...]) -> int | None:
    """The AutoFlush in entries the files were written with, where every sampled map has at
    least two full clusters of the same entry count (``None``: not seen, e.g. ROOT's default
    of 30 MB, whose clusters vary in entries)."""
    sizes: set[int] = set()
    for m in maps:
        c = [int(x) for x in np.diff(m.clusters)]
        if len(c) < 3 or len(set(c[:-1])) != 1:
            return None
        sizes.add(c[0])
    return sizes.pop() if len(sizes) == 1 else None


def buffers_known(maps: tuple[BasketMap, ...]) -> bool:
    """Whether the maps give every branch's basket buffer (``fBasketSize``), which the
    replayed ``hadd -O`` layout starts from."""
    return bool(maps) and all(b.basket_size > 0 for m in maps for b in m.branches)


def layout_caveat(ctx: Context) -> str | None:
    """What the replayed ``hadd -O`` layout leaves out for these files, if it matters: the
    basket buffers where the maps do not give them and the files have an AutoFlush in
    entries (``hadd -O`` then resizes the buffers early, at that many entries)."""
    n = entry_autoflush(ctx.basket_maps)
    if n is None or buffers_known(ctx.basket_maps):
        return None
    return (f"the files were written with an AutoFlush of {n:,} entries: hadd -O keeps it and "
            "resizes each branch's baskets there (ROOT's OptimizeBaskets); the basket maps do "
            "not give the files' basket buffers, so the replay refills ROOT's default 32 kB "
            "ones: the rewritten files can hold many more, smaller baskets than replayed, and "
            "the speed-up be lower than shown")


def replay_assumption(rep: CodecReplay) -> str:
    return ("the speed-up replays " + rep.reader.describe() + " on today's files and on the "
            "files the command writes (basket maps of the sampled files; "
            + ("merged into one, baskets refilled as hadd -O does (the first file's buffers "
               "and AutoFlush, the buffers resized by ROOT's OptimizeBaskets at the first "
               "flush)" if rep.command.merged else
               "each file rewritten alone by hadd -O, its baskets refilled alike")
            + ", each basket's bytes scaled by the measured size change) through a model of "
            "the device, plus the CPU costs with the new codec's decompression rate; its range "
            "spans the device's, the per-file costs' and both decompression rates' "
            "uncertainties, uproot's overlap (up to all hidden), the size change's sampling "
            "error (both ways) and rewritten files up to "
            f"{100 * LARGER_BASKETS_SHRINK:.0f}% smaller than the sample's factor says "
            "(larger baskets compress better: an assumption), each size's layout replayed "
            "anew (ROOT's 30 MB AutoFlush may cut the merged file at one size and not at "
            "another), and where the new file's bytes "
            "fall against the read-ahead windows (its layout replayed again with every basket "
            f"{100 * (1 - ALIGNMENT[0]):.0f}% smaller and {100 * (ALIGNMENT[1] - 1):.0f}% "
            "larger: a cold read of many small requests moves with it)")


__all__ = ["CodecReplay", "buffers_known", "codec_replay", "entry_autoflush", "layout_caveat",
           "merges", "rate_sd", "replay_assumption", "replay_evidence", "size_range",
           "size_sd"]
