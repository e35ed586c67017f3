"""A scenario's time from a replay: the reader's requests on the layout through the device,
plus the fitted model's CPU terms.

One worker reads the files one after another (``uproot`` ``iterate`` per file, as the
calibration's event loop does).  The time of a layout is

    T = replayed I/O (the request stream through :class:`~.device.LocalDevice`)
        + files x (open CPU + read calls x call_s + baskets x basket_s)
        + compressed MB x (1 / decompression rate + 1 / processing rate)

where the I/O term replaces the model's ``file_MB / R_io(request)`` and the cold part of the
open cost (the open's metadata reads are in the request stream; ``open_s`` here is the warm
open).  The CPU terms (:mod:`.cpucosts`) are the fitted model's, or the per-call cost taken
from the calibration's warm event loop itself, with the decompression test's rate per MB.

*Overlap.*  What cannot hide: the open (its metadata reads, then its parsing, in turn) and
the synchronous reads (the ``meta`` and ``key`` requests: uproot reads the keys of a
memory-size step branch by branch before any data).  The basket data's I/O hides behind the
CPU work only within a read call, as far as the call's coalesced requests allow
(:mod:`.overlap`: a call of one request hides nothing; no call's reads hide behind the call
before): that schedule's hidden time is ``H``.  ``phi`` (``CpuCosts.overlap``) is the share of
the rest, up to ``m = min(io_stream, cpu_calls)``, that hides as well:

    T = io_sync + cpu_open + io_stream + cpu_calls - (H + phi (m - H))

ROOT's ``GetEntry`` reads each basket when the loop needs it, in the same thread: no overlap.
On a rate limiter (the device form ``"max"``) the time is instead the paced replay
(:attr:`LayoutTime.paced_s`): each read waits only where the limiter's budget, refilled during
the CPU work before it, is spent.
:func:`merge_prediction` gives that time before and after a merge (``hadd``:
:func:`~.layouts.fast_merge`; ``hadd -O``: :func:`~.layouts.optimized_merge`) and the
speed-up, with a range over the device's and the per-file costs' uncertainties.

Maps of a sample stand for all the files: the baseline's time is the sample's times the files
over the sampled files; merged files are built from the sampled maps in turn
(:func:`~.layouts.groups`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hep_advisor.probes.basketmap import BasketMap, BranchBaskets

from .cpucosts import UPROOT_KEY_S, UPROOT_KEY_S_RANGE, CpuCosts, LoopCosts, loop_costs
from .device import LocalDevice, Transfer
from .layouts import fast_merge, groups, optimized_merge
from .overlap import CallShapes, call_shapes
from .pacing import Pace
from .quadrature import quadrature
from .readers import (
    ROOT_LEARN_ENTRIES,
    _memory_size,
    root_getentry,
    uproot_iterate,
    uproot_step_entries,
)
from .requests import python_buffered, renumber

#: The calibration's event loop: one read call per this many bytes of arrays (uncompressed).
STEP_BYTES = 50e6
#: An entry step no file reaches: ``arrays`` reads each file in one step.
WHOLE_FILE = 2**62
#: Merged files replayed per merge prediction (the others are alike: scaled).
MAX_GROUPS = 2
#: The share of uproot's streamed I/O beyond what :mod:`.overlap` derives from the read calls'
#: requests that hides too (see the module's notes): 0, the derivation, and the range the
#: intervals span, up to all of it (an assumption: on the emulated disk a split dataset hid
#: about 0.55 s of 0.89 s where the derivation hides none; ``benchmarks/RESULTS.md``).
UPROOT_OVERLAP = 0.0
UPROOT_OVERLAP_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class Reader:
    """How one worker reads the files: uproot's ``iterate`` at ``step`` (see
    :func:`step_for`), or ROOT's ``TTree::GetEntry`` loop (``engine="root"``) with a
    TTreeCache of ``cache_bytes`` (0: none; ``None``: ROOT's automatic size).  ``manual``: the
    loop adds its branches to the cache itself (``AddBranchToCache("*", true)``, as the
    advice prints it), which skips ROOT's learning phase: the first fill then reads the
    cluster's baskets in one ``ReadBuffers`` call, where the learning phase's prefill splits
    it in two (on a disk whose read-ahead follows contiguous reads, a split that decides how
    much the kernel reads ahead: ``benchmarks/lab/check_root_cache_throttle.py``)."""

    engine: str = "uproot"
    step: int | str | float = STEP_BYTES
    cache_bytes: int | None = 0
    manual: bool = False

    def describe(self) -> str:
        if self.engine == "root":
            return ("ROOT GetEntry without TTreeCache" if self.cache_bytes == 0
                    else "ROOT GetEntry with TTreeCache")
        if isinstance(self.step, str):
            return f"uproot iterate, step_size={self.step!r}"
        if isinstance(self.step, float):
            return f"uproot iterate, {self.step / 1e6:g} MB of arrays per step (in entries)"
        return f"uproot iterate, step_size={self.step:,} entries"


@dataclass(frozen=True)
class LayoutTime:
    """One worker reading ``files`` files of a layout: the replayed I/O and the CPU terms."""

    files: float
    entries: float
    compressed_mb: float
    calls: float
    baskets: float
    io: Transfer  # of the replayed files only (``scale`` times fewer than ``files``)
    scale: float
    cpu_s: float

    @property
    def io_s(self) -> float:
        """The replayed I/O of all ``files``: the replayed files' times ``scale``, with a block
        throttle's one-slice credit taken off once (120 tiny files replayed as 8: 840 device
        I/Os at 8 ms each, 6.7 s, had come out 5.2 s with the credit taken off 15 times;
        two processes of the program took 7.0 s)."""
        return _scaled(self.io, self.scale)

    @property
    def sync_s(self) -> float:
        """The replayed I/O that cannot hide behind the CPU (the ``meta`` and ``key`` reads,
        replayed alone): at most ``io_s``."""
        return min(_scaled(self.sync, self.scale), self.io_s) if self.sync is not None else 0.0

    @property
    def hidden_s(self) -> float:
        """The I/O time that hides behind the read calls' CPU (see the module's notes)."""
        stream_io = max(self.io_s - self.sync_s, 0.0)
        stream_cpu = max(self.cpu_s - self.cpu_open_s - self.cpu_keys_s, 0.0)
        derived = self.shapes.hidden_s(stream_io, stream_cpu) if self.shapes is not None else 0.0
        return derived + self.overlap * max(min(stream_io, stream_cpu) - derived, 0.0)

    @property
    def total_s(self) -> float:
        if self.device is not None and self.device.limit == "max" and self.pace is not None \
                and not self.device.warm and self.files > 0:
            return self.paced_s
        return self.io_s + self.cpu_s - self.hidden_s

    @functools.cached_property
    def paced_s(self) -> float:
        """On a rate limiter: the replayed reads issued where the CPU work leaves them
        (:meth:`~.device.LocalDevice.paced_time`, the work placed by :mod:`.pacing`)."""
        assert self.device is not None and self.pace is not None
        keys = self.cpu_keys_s / self.keys if self.keys else 0.0
        stream = max(self.cpu_s - self.cpu_open_s - self.cpu_keys_s, 0.0) / self.scale
        entry = 0.0
        if self.pace.span is not None and self.cpu_data_s is not None:  # ROOT's loop
            data = min(self.cpu_data_s / self.scale, stream)
            stream, entry = data, stream - data
        gaps = self.pace.gaps(self.cpu_open_s / self.files, keys, stream, entry)
        return self.device.paced_time(self.io, gaps.tolist(), repeat=self.scale)

    @property
    def events_per_s(self) -> float:
        return self.entries / self.total_s if self.total_s > 0 else float("inf")

    @property
    def mb_per_s(self) -> float:
        return self.compressed_mb / self.total_s if self.total_s > 0 else float("inf")

    @property
    def seek_s(self) -> float:
        """The replayed I/O time spent on access times (non-contiguous device reads)."""
        return self.io.seeks * self.scale * self._access_s

    _access_s: float = 0.0
    #: the replay of the synchronous reads alone (``None``: no overlap is possible)
    sync: Transfer | None = None
    #: branches read times read calls (each call's first basket of each branch)
    branch_calls: float = 0.0
    #: baskets interpreted, counted per call (uproot's ``iterate`` keeps a basket its step
    #: ends inside for the next step, but interprets it again): at least ``baskets``; 0 where
    #: not counted (taken as ``baskets``)
    touches: float = 0.0
    #: the CPU time of opening the files (part of ``cpu_s``: it never overlaps)
    cpu_open_s: float = 0.0
    #: the share of the streamed I/O hidden behind the CPU (``CpuCosts.overlap``)
    overlap: float = 0.0
    engine: str = "uproot"
    #: basket keys read by a memory-size step's pre-pass (uproot; 0 with an entry step)
    keys: float = 0.0
    #: that pre-pass's CPU time (part of ``cpu_s``; before any data read: it hides no I/O)
    cpu_keys_s: float = 0.0
    #: the read calls' requests (:mod:`.overlap`; ``None``: any streamed I/O may hide)
    shapes: CallShapes | None = None
    #: the replayed requests, for a paced replay (:mod:`.pacing`), and the device they were
    #: replayed through: on a rate limiter the time is the paced replay's
    pace: Pace | None = None
    device: LocalDevice | None = None
    #: the largest step's arrays, uncompressed MB (uproot; 0 for ROOT's loop): a new
    #: process's peak memory grows with it (``CpuCosts.touch_s``)
    step_mb: float = 0.0
    #: ROOT's loop: the part of ``cpu_s`` that follows the bytes read (the fitted per-basket
    #: and per-MB terms, decompression); a paced replay puts the rest of the loop's work
    #: after the reads by the entries each starts (``Pace.span``).  ``None``: all by bytes
    cpu_data_s: float | None = None

    @property
    def extra_touches(self) -> float:
        """The baskets interpreted beyond the first of each branch in each call: those that
        pay ``basket_s`` where the per-call cost holds the first (``CpuCosts.extra_baskets``)."""
        return max((self.touches or self.baskets) - self.branch_calls, 0.0)

    def loop_cpu_s(self, touch_s: float) -> float:
        """The CPU beyond the opens and a new process's first writes of its memory (at
        ``touch_s`` per MB of its largest step): what a warm event loop, timed without its
        opens in a process whose heap had grown, measures of this replay (with what a run
        pays once, where its costs hold it)."""
        return self.cpu_s - self.cpu_open_s - self.step_mb * touch_s

    def with_costs(self, costs: CpuCosts) -> LayoutTime:
        """The same replay with other CPU costs."""
        once = costs.once_s
        costs = costs.for_engine(self.engine)
        baskets = self.baskets
        if costs.extra_baskets:
            baskets = self.extra_touches
        opens = self.files * costs.open_s
        data = (baskets * costs.basket_s + self.compressed_mb * costs.per_mb_s()
                + costs.decompress_fix_s(self.baskets, self.compressed_mb))
        data += self.entries * costs.entry_s
        cpu = (opens + self.calls * costs.call_s + self.keys * costs.key_s + data
               + self.step_mb * costs.touch_s + once)
        overlap = costs.overlap if self.engine == "uproot" and self.sync is not None else 0.0
        return replace(self, cpu_s=cpu, cpu_open_s=opens, overlap=overlap,
                       cpu_keys_s=self.keys * costs.key_s,
                       cpu_data_s=data if self.engine == "root" else None)

    def as_dict(self) -> dict[str, float]:
        return {"files": self.files, "entries": self.entries,
                "compressed_mb": self.compressed_mb, "calls": self.calls,
                "baskets": self.baskets, "keys": self.keys, "io_s": self.io_s, "cpu_s": self.cpu_s,
                "step_mb": self.step_mb,
                "total_s": self.total_s, "events_per_s": self.events_per_s,
                "device_requests": self.io.device_requests * self.scale,
                "seeks": self.io.seeks * self.scale, "seek_s": self.seek_s,
                "sync_io_s": self.sync_s, "hidden_io_s": self.hidden_s}


def step_touches(chosen: Sequence[BranchBaskets], entries: int, per_call: int) -> float:
    """The baskets that ``iterate`` in steps of ``per_call`` entries over ``entries`` entries
    interprets, step by step: each step every basket of each branch it overlaps (a basket
    that a step ends inside counts again in the next step, unless the step ends on its end:
    a cluster-aligned step counts each basket once)."""
    import numpy as np

    if entries <= 0 or per_call <= 0:
        return 0.0
    s = np.arange(0, entries, per_call, dtype=np.int64)
    e = np.minimum(s + per_call, entries)
    total = 0
    for b in chosen:
        if not b.baskets:
            continue
        starts = np.asarray(b.entries[:-1], dtype=np.int64)
        total += int(np.sum(np.searchsorted(starts, e, side="left")
                            - np.searchsorted(starts, s, side="right"))) + len(s)
    return float(total)


def step_for(m: BasketMap, branches: Sequence[str] | None, step: int | str | float
             ) -> tuple[int | str, int]:
    """(the ``step_size`` uproot gets, entries per call).  A float is bytes of arrays per
    call, turned into entries as the event loop does (the tree's uncompressed bytes per
    entry); an int is entries; a string is uproot's memory size."""
    chosen = m.select(branches)
    if isinstance(step, str):
        return step, uproot_step_entries(m, chosen, 0, m.entries, _memory_size(step))
    if isinstance(step, float):
        per_entry = sum(b.uncompressed_bytes for b in chosen) / max(m.entries, 1)
        n = max(1, int(step / max(per_entry, 1.0)))
        return n, n
    return int(step), max(int(step), 1)


def cluster_step(maps: Sequence[BasketMap], branches: Sequence[str] | None = None,
                 target_bytes: float = STEP_BYTES) -> int:
    """An entry-count ``step_size`` aligned with the clusters: the whole number of (median)
    clusters closest to ``target_bytes`` of arrays (uncompressed) per step, at least one
    cluster.  An entry count spares uproot the key pre-pass of a memory-size step."""
    per_entry = clusters = 0.0
    n = 0
    for m in maps:
        if not m.entries:
            continue
        per_entry += sum(b.uncompressed_bytes for b in m.select(branches)) / m.entries
        sizes = [int(x) for x in (m.clusters[1:] - m.clusters[:-1]) if x > 0]
        clusters += sorted(sizes)[len(sizes) // 2] if sizes else m.entries
        n += 1
    if n == 0:
        return 1
    per_entry, cluster = per_entry / n, max(round(clusters / n), 1)
    wanted = target_bytes / max(per_entry, 1.0)
    return cluster * max(1, round(wanted / cluster))


def layout_time(maps: Sequence[BasketMap], device: LocalDevice, costs: CpuCosts, *,
                branches: Sequence[str] | None = None, step: int | str | float = STEP_BYTES,
                scale: float = 1.0, reader: Reader | None = None) -> LayoutTime:
    """One worker reading ``maps`` one after another, cold (a fresh page cache, unless the
    device is ``warm``), with uproot's ``iterate`` at ``step`` (see :func:`step_for`) through
    uproot's default source for local files (fsspec: a buffered read per range, each on a
    newly opened file), or with ``reader`` (ROOT's ``GetEntry`` loop reads with ``pread``: no
    per-call cost; the fitted per-basket and per-MB CPU terms are uproot's, an assumption).
    ``scale``: how many files each replayed one stands for."""
    if reader is not None and reader.engine == "root":
        return _root_time(maps, device, costs, branches, scale, reader.cache_bytes,
                          reader.manual)
    if reader is not None:
        step = reader.step
    streams = []
    calls = baskets = entries = branch_calls = touches = step_mb = 0.0
    mb = 0.0
    built = False
    sizes_of: list[int | str] = []
    for m in maps:
        needs = m.uproot_streamers is not False and not built
        built = built or needs
        size, per_call = step_for(m, branches, step)
        sizes_of.append(size)
        streams.append(uproot_iterate(m, branches, step_size=size, streamers=needs))
        chosen = m.select(branches)
        if m.entries:
            unc = sum(b.uncompressed_bytes for b in chosen)
            step_mb = max(step_mb, unc * min(per_call, m.entries) / m.entries / 1e6)
        n_calls = max(1, math.ceil(m.entries / per_call)) if m.entries else 0
        calls += n_calls
        branch_calls += n_calls * sum(1 for b in chosen if b.baskets)
        baskets += sum(b.baskets for b in chosen)
        touches += step_touches(chosen, m.entries, per_call)
        entries += m.entries
        mb += sum(b.compressed_bytes for b in chosen) / 1e6
    reqs = renumber(streams)
    keys = sum(1 for r in reqs if r.kind == "key")
    sizes = {m.path: m.file_bytes for m in maps}
    buffered = list(python_buffered(reqs, 4096, sizes))
    io = device.replay(buffered, sizes, reopen=True)
    # the synchronous reads (metadata, keys) replayed alone: what cannot hide behind the CPU
    sync = device.replay(python_buffered([r for r in reqs if r.kind != "data"], 4096, sizes),
                         sizes, reopen=True)
    lt = LayoutTime(files=len(maps) * scale, entries=entries * scale, compressed_mb=mb * scale,
                    calls=calls * scale, baskets=baskets * scale, io=io, scale=scale,
                    cpu_s=0.0, _access_s=device.access_s, sync=sync,
                    branch_calls=branch_calls * scale, touches=touches * scale,
                    keys=keys * scale,
                    shapes=call_shapes(maps, branches, sizes_of), pace=Pace.of(buffered),
                    device=device, step_mb=step_mb)
    return lt.with_costs(costs)


def _root_time(maps: Sequence[BasketMap], device: LocalDevice, costs: CpuCosts,
               branches: Sequence[str] | None, scale: float, cache_bytes: int | None,
               manual: bool = False) -> LayoutTime:
    at: list[int] = []
    learn = 0 if manual else ROOT_LEARN_ENTRIES
    reqs = renumber([root_getentry(m, branches, cache_bytes=cache_bytes, at=at,
                                   learn_entries=learn) for m in maps])
    stops = {m.path: m.entries for m in maps}
    sizes = {m.path: m.file_bytes for m in maps}
    io = device.replay(reqs, sizes)
    baskets = float(sum(b.baskets for m in maps for b in m.select(branches)))
    mb = sum(b.compressed_bytes for m in maps for b in m.select(branches)) / 1e6
    entries = float(sum(m.entries for m in maps))
    lt = LayoutTime(files=len(maps) * scale, entries=entries * scale,
                    compressed_mb=mb * scale, calls=0.0, baskets=baskets * scale, io=io,
                    scale=scale, cpu_s=0.0, _access_s=device.access_s, engine="root",
                    pace=Pace.of(reqs, at, stops), device=device)
    return lt.with_costs(costs)  # ROOT's terms, as every other replay of this layout


@dataclass(frozen=True)
class MergePrediction:
    """Before and after a merge, one worker: times, and the speed-up with its range."""

    before: LayoutTime
    after: LayoutTime
    speedup: float
    low: float
    high: float
    optimise: bool
    per_output: int
    outputs: int

    @property
    def after_seek_share(self) -> float:
        """The share of the merged layout's time spent on access times: high means the merge
        leaves the job bound by scattered reads."""
        return self.after.seek_s / self.after.total_s if self.after.total_s > 0 else 0.0


def _merged(maps: Sequence[BasketMap], files: int, per_output: int, optimise: bool,
            jobs: int) -> tuple[list[BasketMap], float, int]:
    gs = groups(maps, per_output, files)
    # full groups are alike: replay the first ones, and the last where it is short (25 files
    # twelve at a time: 12, 12 and 1), scaled by files so that the merged files hold
    # today's data (scaled by groups, 36 files' worth: h70few's M001 1.53x where 2.07x came)
    sample = gs[:MAX_GROUPS]
    if len(gs) > len(sample) and len(gs[-1]) < len(gs[0]):
        sample.append(gs[-1])
    merged = [optimized_merge(g, path=f"<merged {i}>", jobs=jobs) if optimise
              else fast_merge(g, path=f"<merged {i}>") for i, g in enumerate(sample)]
    return merged, sum(map(len, gs)) / sum(map(len, sample)), len(gs)


def merge_prediction(maps: Sequence[BasketMap], files: int, per_output: int,
                     device: LocalDevice, costs: CpuCosts, *, optimise: bool = False,
                     branches: Sequence[str] | None = None,
                     step: int | str | float = STEP_BYTES,
                     device_sd: tuple[float, float] = (0.0, 0.0), cpu_sd: float = 0.0,
                     z: float = 1.645, jobs: int = 1, reader: Reader | None = None,
                     after_reader: Reader | None = None, after_warm: bool = False,
                     memo: dict[object, object] | None = None) -> MergePrediction:
    """``files`` files (``maps``: a sample of them) merged ``per_output`` at a time
    (``optimise``: ``hadd -O``, with ``jobs`` processes: ``hadd -j``).

    Today's files are read with ``reader`` (default: uproot's ``iterate`` at ``step``), the
    merged ones with ``after_reader`` (default: the same reader), from the page cache where
    ``after_warm`` (pre-staged: the pre-read itself is not counted).  ``memo``: a dict kept
    between calls on the same ``maps`` object (merged layouts and replays are reused).

    ``device_sd``: relative one-sigma uncertainties of the device's bandwidth and access time;
    ``cpu_sd``: of the per-file costs.  The range is the lowest and highest speed-up over
    those parameters at ``z`` sigmas (all corners: a plausible range, not a confidence
    interval).
    """
    if not maps:
        raise ValueError("no basket maps")
    memo = {} if memo is None else memo
    mkey = ("merged", id(maps), files, per_output, optimise, jobs)
    if mkey not in memo:
        memo[mkey] = _merged(maps, files, per_output, optimise, jobs)
    built: tuple[list[BasketMap], float, int] = memo[mkey]  # type: ignore[assignment]
    merged, scale_after, outputs = built
    scale_before = files / len(maps)

    first = reader or Reader(step=step)
    before, after, s, low, high = _compare(
        maps, merged, scale_before, scale_after, device, costs, first, after_reader or first,
        after_warm=after_warm, branches=branches, device_sd=device_sd, cpu_sd=cpu_sd, z=z,
        memo=memo)
    return MergePrediction(before, after, s, low, high, optimise, per_output, outputs)


def reader_change(maps: Sequence[BasketMap], files: int, device: LocalDevice,
                  costs: CpuCosts, before: Reader, after: Reader, *,
                  after_read_ahead_kb: int | None = None, after_warm: bool = False,
                  branches: Sequence[str] | None = None,
                  after_branches: Sequence[str] | None = None,
                  device_sd: tuple[float, float] = (0.0, 0.0), cpu_sd: float = 0.0,
                  z: float = 1.645, memo: dict[object, object] | None = None
                  ) -> MergePrediction:
    """Today's ``files`` files (``maps``: a sample) read with ``before``, then with ``after``
    (and the read-ahead ``after_read_ahead_kb`` where given; from the page cache where
    ``after_warm``: pre-staged, the pre-read not counted; only ``after_branches`` where
    given): the speed-up and its range as in :func:`merge_prediction` (``per_output`` 1: the
    layout is unchanged)."""
    if not maps:
        raise ValueError("no basket maps")
    scale = files / len(maps)
    b, a, s, low, high = _compare(
        maps, maps, scale, scale, device, costs, before, after, branches=branches,
        after_read_ahead_kb=after_read_ahead_kb, after_warm=after_warm, device_sd=device_sd,
        cpu_sd=cpu_sd, z=z, memo=memo, after_branches=after_branches)
    return MergePrediction(b, a, s, low, high, False, 1, files)


def _compare(before_maps: Sequence[BasketMap], after_maps: Sequence[BasketMap],
             scale_before: float, scale_after: float, device: LocalDevice, costs: CpuCosts,
             first: Reader, then: Reader, *, branches: Sequence[str] | None,
             device_sd: tuple[float, float], cpu_sd: float, z: float,
             after_warm: bool = False, after_read_ahead_kb: int | None = None,
             memo: dict[object, object] | None = None,
             after_branches: Sequence[str] | None = None
             ) -> tuple[LayoutTime, LayoutTime, float, float, float]:
    """(before, after, speed-up, low, high): the two replays at the device's and CPU costs'
    central values, and the interval: each input moved alone to its ends (``z`` sigmas of
    ``device_sd`` and ``cpu_sd``; an assumed range's 5% and 95% points), before and after
    together, the shifts of the log speed-up added in quadrature.  Each layout is replayed
    once: a replay's time is linear in the access time and the inverse bandwidth
    (:func:`retimed`), so the device's ends rescale it."""
    memo = {} if memo is None else memo
    ra = device.read_ahead_kb if after_read_ahead_kb is None else after_read_ahead_kb
    later = replace(device, warm=device.warm or after_warm, read_ahead_kb=ra)
    def replayed(maps: Sequence[BasketMap], dev: LocalDevice, scale: float,
                 reader: Reader, chosen: Sequence[str] | None) -> LayoutTime:
        key = ("layout", id(maps), dev, scale, reader,
               tuple(chosen) if chosen is not None else None)
        if key not in memo:
            memo[key] = layout_time(maps, dev, costs, branches=chosen, scale=scale,
                                    reader=reader)
        return memo[key]  # type: ignore[return-value]

    b0 = replayed(before_maps, device, scale_before, first, branches)
    a0 = replayed(after_maps, later, scale_after, then,
                  branches if after_branches is None else after_branches)
    # the decompression rate holds at today's baskets per MB (the codec's fixed cost per
    # basket: a layout of larger baskets decompresses faster per MB)
    costs = costs.at_density(b0.baskets, b0.compressed_mb)
    before, after = b0.with_costs(costs), a0.with_costs(costs)
    s = before.total_s / after.total_s
    sd_bw, sd_acc = device_sd
    io: dict[tuple[float, float], tuple[LayoutTime, LayoutTime]] = {(0.0, 0.0): (b0, a0)}

    def ratio(fb: float = 0.0, fa: float = 0.0, fc: float = 0.0, cpu: CpuCosts | None = None
              ) -> float:
        """The speed-up with the bandwidth, the access time and the CPU ``fb``, ``fa``, ``fc``
        sigmas off (before and after together: what they share cancels)."""
        if (fb, fa) not in io:  # a retimed throttled replay is costly: once per setting
            bw, acc = math.exp(fb * z * sd_bw), math.exp(fa * z * sd_acc)
            io[fb, fa] = retimed(b0, device, bw, acc), retimed(a0, later, bw, acc)
        c = (cpu or costs).scaled(math.exp(fc * z * cpu_sd)) if fc else (cpu or costs)
        b, a = (x.with_costs(c) for x in io[fb, fa])
        return b.total_s / a.total_s

    # one input at a time at its 90% ends, the others at their points; the log speed-up's
    # shifts added in quadrature (independent inputs, to first order): a 90% interval, where
    # the corners of every range at once made a box far wider
    effects: list[list[float]] = []
    if sd_bw > 0:
        effects.append([ratio(fb=f) for f in (-1.0, 1.0)])
    if sd_acc > 0:
        effects.append([ratio(fa=f) for f in (-1.0, 1.0)])
    if cpu_sd > 0:
        effects.append([ratio(fc=f) for f in (-1.0, 1.0)])
    ranges: list[tuple[Sequence[float], Callable[[float], CpuCosts]]] = [
        (costs.overlap_range or (), lambda v: replace(costs, overlap=v)),
        (costs.key_range if costs.key_s else (), lambda v: replace(costs, key_s=v)),
        (costs.touch_range or (), lambda v: replace(costs, touch_s=v))]
    for rng, at in ranges:  # an assumed range: uniform, its 5% and 95% points
        if len(rng) > 1 and max(rng) > min(rng):
            lo, hi = min(rng), max(rng)
            effects.append([ratio(cpu=at(lo + q * (hi - lo))) for q in (0.05, 0.95)])
    alts = [v for v in costs.alternatives() if v != costs]
    if alts:  # the assumed splits of the warm loop's time (e.g. the per-basket cost's ends)
        effects.append([ratio(cpu=v) for v in alts])
    low, high = quadrature(s, effects)
    return before, after, s, low, high



def _scaled(io: Transfer, scale: float) -> float:
    """The time of ``scale`` replays like ``io``, one after another: the throttle's credit
    (``Transfer.credit_s``) once."""
    return max((io.time_s + io.credit_s) * scale - io.credit_s, 0.0)


def retimed(lt: LayoutTime, device: LocalDevice, bw_factor: float, access_factor: float
            ) -> LayoutTime:
    """``lt`` (replayed through ``device``) on a device with the bandwidth times
    ``bw_factor`` and the access time times ``access_factor``: the same device I/Os (what the
    page cache and read-ahead do does not depend on the two), retimed."""
    io = lt.io
    seek_s = io.seeks * device.access_s
    flow_s = io.device_bytes / (device.mb_per_s * 1e6) if device.mb_per_s > 0 else 0.0
    rest = io.time_s - seek_s - flow_s  # the page-cache copies, where charged
    t = seek_s * access_factor + flow_s / bw_factor + rest
    other = replace(device, mb_per_s=device.mb_per_s * bw_factor,
                    access_s=device.access_s * access_factor,
                    throttle_mb_per_s=device.throttle_mb_per_s * bw_factor,
                    throttle_iops=device.throttle_iops / access_factor)
    credit = io.credit_s
    if io.ios:  # the device I/Os themselves, retimed by the device's form
        then, credit = other.timed(io.ios)
        t = io.time_s - device.io_time(io.ios) + then
    sync = lt.sync
    if sync is not None:  # the synchronous reads' replay, retimed alike
        sync = retimed(replace(lt, io=sync, sync=None), device, bw_factor, access_factor).io
    return replace(lt, io=replace(io, time_s=t, credit_s=credit),
                   _access_s=device.access_s * access_factor,
                   sync=sync, device=other if lt.device is not None else None)


def reader_loop_costs(lt: LayoutTime, warm_events_per_s: float, decompress_mb_per_s: float,
                      basket_s: float | None = None, process_mb_per_s: float | None = None,
                      key_s: float = UPROOT_KEY_S,
                      key_range: tuple[float, float] = UPROOT_KEY_S_RANGE,
                      first_s: float = 0.0) -> LoopCosts | None:
    """:func:`~.cpucosts.loop_costs` from a warm event loop that ran the program's own uproot reader
    (``warm_events_per_s``: its warm time per event, opening not timed), with that reader's
    read calls, baskets and pre-pass keys as its replay ``lt`` on today's files counts them
    (per file): replays of that reader on today's files then cost what it measured (opening
    aside); a layout or reader change keeps the per-call, -basket, -key and -MB costs.
    ``first_s``: each file's first call beyond a later one (left out of the per-call cost).
    ``None`` for a ROOT replay, or as :func:`~.cpucosts.loop_costs`."""
    if lt.engine != "uproot" or warm_events_per_s <= 0 or lt.files <= 0 or lt.calls <= 0:
        return None
    n = lt.files
    return loop_costs(lt.entries / warm_events_per_s / n, lt.compressed_mb / n, lt.calls / n,
                      lt.extra_touches / n, decompress_mb_per_s, basket_s,
                      process_mb_per_s, keys=lt.keys / n, key_s=key_s, key_range=key_range,
                      first_s=first_s)
