"""The baseline as the user's program reads: its reader's requests replayed through the
calibrated device, plus the fitted CPU terms (``--reader``).

The rate model's baseline is the calibration's own event loop (uproot ``iterate`` at an entry
step). A program that reads otherwise -- uproot's default memory-size step with its key
pre-pass, ``arrays``, ROOT's ``GetEntry`` with or without TTreeCache, RDataFrame -- issues
other requests; :func:`reader_baseline` replays those (:mod:`.readers`) on basket maps of the
dataset's files through the device of the calibration (the cold raw read's bandwidth, the
request sweep's access time, the site's read-ahead) and adds the CPU time: where the
calibration's event loop ran that reader, its warm samples' time per event (measured: the
reader's own CPU cost on these files, whatever it spends it on) plus the warm open per file
(and, for uproot, Python's garbage collector per file, measured in a fresh interpreter:
:mod:`hep_advisor.probes.readtests.collector`), the replayed I/O less what a warm replay still
charges; else the fitted model's CPU terms of one worker (:func:`~.predict.layout_time`). On a disk
the two add (each read waits); on a rate limiter (the device form ``"max"``, e.g. a block throttle)
the reads are replayed where the CPU work leaves them
(:meth:`~.device.LocalDevice.paced_time`): reads spaced out by CPU work pass within its budget
and only the rest waits. The result is one worker, cold, whole files (opening included), and it
carries the calibration's own cold measurement of that reader for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.readers import ReaderSpec

from .replay.cpucosts import costs_from
from .replay.device import LocalDevice
from .replay.predict import WHOLE_FILE, LayoutTime, Reader, layout_time
from .replay.sitedevice import site_device

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import SiteProfile

    from .scenarios import Baseline

#: The replay of a reader's cold pass on a disk may be this much slower than the reader's own
#: cold loop (the self-check's tolerance) before the disk's access time is taken from that
#: loop (:func:`stream_access_s`).  On this project's fast virtual disk the request sweep's
#: random 4 KiB reads (one at a time: 61 µs each) over-charged the many small reads of one
#: read-ahead window that cached pages had cut into pieces: issued together, the disk served
#: them about ten at a time (its busy time 5.6-6.9 s in a 0.6 s pass of 7,528 reads).
STREAM_TOLERANCE = 0.85


@dataclass(frozen=True)
class ReaderBaseline:
    """The analysis as it runs now with the program's reader, one worker, cold, files
    opened and read whole (predicted: replayed I/O + fitted CPU terms).  ``measured_*``:
    the calibration's event loop with the same reader (its cold samples where eviction was
    confirmed, else warm; opening timed for RDataFrame and PyROOT loops only, as
    ``ReaderSpec.opens_in_loop`` says), and ``ratio`` = predicted / measured."""

    reader: str
    description: str
    events_per_s: float
    compressed_mb_per_s: float
    io_s: float
    cpu_s: float
    files: float
    entries: float
    device_requests: float
    seeks: float
    device_mb_per_s: float
    access_ms: float
    read_ahead_kb: int
    #: the device's form (``LocalDevice.limit``): ``"additive"`` (a disk: each read waits for
    #: the device, the time is I/O + CPU) or ``"max"`` (a rate limiter such as a block
    #: throttle: the reads replayed where the CPU work leaves them, paced; they wait only
    #: where the limiter's budget is spent)
    device_limit: str = "additive"
    measured_events_per_s: float | None = None
    measured_cache: str | None = None
    ratio: float | None = None
    #: the same baseline from measurements alone: the calibration's cold loop with this
    #: reader (its time per event) plus the cold open per file; ``None`` where not measured
    measured_baseline_events_per_s: float | None = None
    #: where ``cpu_s`` comes from: ``"measured"`` (the calibration's warm event loop with
    #: this reader: its time per event, plus the warm open per file) or ``"fitted"`` (the
    #: fitted model's CPU terms, where the loop did not run this reader)
    cpu_source: str = "fitted"
    #: how the reader was deduced (from a trace), one line each
    how: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: the compressed MB the pass reads (all files)
    compressed_mb: float = 0.0
    #: parts of ``cpu_s``: the per-file overhead (opening the files, with Python's collector
    #: per file, and the fixed cost of each read call, basket key and basket) and
    #: decompressing the baskets read (the decompression test's rate on the dataset's own
    #: baskets; 0 where not measured); the rest of ``cpu_s`` is the reader's unpacking and the
    #: analysis' processing, with ``setup_s``
    open_cpu_s: float = 0.0
    decompress_s: float = 0.0
    #: the part of ``cpu_s`` a run pays once, whatever its files (an RDataFrame's first
    #: just-in-time compilation, a ROOT loop's set-up on its first file; measured); not in
    #: ``open_cpu_s``
    setup_s: float = 0.0
    #: the disk's access time per seeking read as this reader's cold loop measured it, where
    #: the replay took it from there (:func:`stream_access_s`); ``None``: the request sweep's
    stream_access_ms: float | None = None
    #: on a disk where the replay of this reader's cold pass was slower than its cold loop
    #: (by any amount) and its seeking reads could take up the difference: the access time
    #: per seeking read that loop implies (:func:`loop_access_s`), and the request sweep's
    #: figure it is set against.  The replays' intervals span both
    #: (``hep_advisor.models.inputspread.spanning_access``); ``None``: no such pair
    loop_access_ms: float | None = None
    swept_access_ms: float | None = None
    #: the cold open per file the measured baseline adds to the loop's time (0 where the
    #: loop times the open itself; ``None``: not measured)
    cold_open_s: float | None = None

    @property
    def seconds(self) -> float:
        """The pass's seconds (what ``events_per_s`` is ``entries`` over)."""
        return self.entries / self.events_per_s if self.events_per_s > 0 else 0.0


def measured_pass_s(entries: float, events_per_s: float, files: float,
                    cold_open_s: float, setup_s: float) -> float:
    """A pass of ``entries`` over ``files`` files as the calibration's measurements put it:
    the cold loop's time for the entries (``events_per_s``), plus what the loop's passes
    leave out and a program pays, the cold open per file (where the loop opens its files
    before its clock starts) and the run's one-off set-up."""
    return entries / events_per_s + files * cold_open_s + setup_s


def once_what(kind: str) -> str:
    """What a run of a reader of ``kind`` pays once, in words."""
    return ("RDataFrame's first just-in-time compilation" if kind == "rdataframe" else
            "ROOT's set-up on its first file")


def reader_setup_s(calibration: Calibration | None, reader: str) -> float:
    """What a run of the program's ``reader`` (a spec's text) pays once, as the calibration
    measured it: its event loop's set-up, or, where that loop was ended before its rates, the
    set-up it measured before (``Calibration.reader_setup``); 0 where neither."""
    if calibration is None:
        return 0.0
    loop = calibration.event_loop
    if loop is not None and loop.reader == reader:
        return float(loop.setup_s or 0.0)
    kept = getattr(calibration, "reader_setup", None)
    return float(kept.setup_s) if kept is not None and kept.reader == reader else 0.0


def replay_reader(spec: ReaderSpec) -> Reader:
    """The replay's :class:`~.predict.Reader` for a program's reader.  RDataFrame reads
    through ``TTreeReader`` with ROOT's TTreeCache at its automatic size: replayed as that."""
    if spec.kind == "uproot.iterate":
        return Reader(step=spec.step)
    if spec.kind == "uproot.arrays":
        return Reader(step=WHOLE_FILE)
    if spec.kind == "root.getentry":
        return Reader("root", cache_bytes=0)
    if spec.kind == "root.ttreecache":
        return Reader("root", cache_bytes=spec.cache_bytes)
    return Reader("root", cache_bytes=None)  # rdataframe


def _paced(lt: LayoutTime, device: LocalDevice, cpu_s: float, setup_s: float,
           open_s: float | None) -> float:
    """A rate limiter: the replayed reads issued where the reader's CPU work leaves them
    (:attr:`~.predict.LayoutTime.paced_s`), after ``setup_s`` paid once.  ``open_s``: the open
    per file where ``cpu_s`` is measured (the rest of it is the loop's, spread over the data);
    ``None``: ``cpu_s`` is the fitted terms' (opens, key pre-pass, the rest)."""
    if lt.pace is None or lt.files <= 0:
        return max(lt.io_s, cpu_s) + setup_s
    timed = replace(lt, cpu_s=cpu_s, device=device)
    if open_s is not None:
        timed = replace(timed, cpu_open_s=open_s * lt.files, cpu_keys_s=0.0)
    return timed.paced_s + setup_s


def reader_baseline(spec: ReaderSpec, maps: Sequence[BasketMap], files: int,
                    calibration: Calibration | None, site: SiteProfile, baseline: Baseline,
                    branches: Sequence[str] | None = None,
                    algorithm: str | None = None,
                    access_s: float | None = None) -> ReaderBaseline:
    """``spec`` replayed on ``maps`` (a sample of the dataset's ``files`` files, which they
    stand for) through the calibration's device, with ``baseline``'s fitted CPU terms.
    ``branches``: what the program reads (the spec's own, from a trace, first; default: every
    branch); ``algorithm``: the data's compression, whose measured decompression rate splits
    the CPU time (:attr:`ReaderBaseline.decompress_s`).  Raises ``ValueError`` without maps,
    or for a branch the maps lack.

    On a disk (``"additive"``) where the replay is slower than the reader's own cold loop by
    more than ``STREAM_TOLERANCE`` and its seeking device reads can take up the difference,
    their access time is the one that loop measured (:func:`stream_access_s`), not the request
    sweep's, and the baseline is replayed again with it (``access_s``: that figure;
    ``ReaderBaseline.stream_access_ms`` says it was taken)."""
    if not maps:
        raise ValueError("no basket map of the dataset's files to replay the reader on")
    raw = calibration.raw_read if calibration is not None else None
    device = site_device(baseline.params, raw, site)
    swept_ms = device.access_s * 1e3
    if access_s is not None:
        device = replace(device, access_s=access_s)
    opened = calibration.open_overhead_s if calibration is not None else None
    own = getattr(calibration, "reader_open", None)
    if spec.engine == "root" and own is not None and own.warm:
        opened = own  # ROOT's own open, measured in the reader's child
    from .calcosts import (
        collector_per_file,
        dataset_decompression_mb_per_s,
        first_call_extra,
        loop_cpu_rate,
        step_touch,
    )

    # Python's garbage collector per file, a program reading with uproot pays it (full
    # collections every few files, which the medians of the open test and the loop leave out)
    gc_s = collector_per_file(calibration) if spec.engine == "uproot" else 0.0
    # each file's first read call beyond a later one (uproot's; its warm loop holds it)
    first = first_call_extra(calibration) if spec.engine == "uproot" else 0.0
    costs = costs_from(baseline.params, baseline.row(1), opened.warm if opened else None,
                       touch=step_touch(calibration), collector_s=gc_s, first_call_s=first)
    chosen = list(spec.branches) if spec.branches else (list(branches) if branches else None)
    scale = files / len(maps)
    try:
        lt = layout_time(maps, device, costs, branches=chosen, scale=scale,
                         reader=replay_reader(spec))
    except KeyError as exc:
        raise ValueError(f"branch {exc} not in the sampled files") from None
    loop = calibration.event_loop if calibration is not None else None
    mine = loop is not None and loop.reader == spec.text
    # its warm rate, or the cold one where faster (``calcosts.loop_cpu_rate``)
    warm = loop_cpu_rate(loop) if mine else None
    notes: list[str] = []
    io_s, cpu_s, source = lt.io_s, lt.cpu_s, "fitted"
    # the open per file, where the loop did not time it (``ReaderSpec.opens_in_loop``)
    open_s = 0.0 if spec.opens_in_loop else costs.open_s
    if warm:  # the CPU this reader costs, measured: its warm loop, plus opening the files
        if open_s > 0 and opened is not None and opened.warm:
            # the warm open as measured (the fitted model's open term, which ``costs`` caps
            # it at, is fitted beside the rate model's other terms: 80 ms per file against
            # 116 ms measured and 120 ms paid by a program opening 20 small files)
            open_s = float(opened.warm) + gc_s
        else:  # the open's term holds each file's first call, which the warm loop timed
            open_s = max(open_s - first, 0.0)
        hot = layout_time(maps, replace(device, warm=True), costs, branches=chosen,
                          scale=scale, reader=replay_reader(spec))
        io_s = max(lt.io_s - hot.io_s, 0.0)  # the warm loop paid the page-cache part
        # the warm loop ran in a process whose heap had grown: a new one pays the first
        # writes of its peak memory (``CpuCosts.touch_s``; 0 for ROOT's loop)
        cpu_s = lt.entries / warm + lt.files * open_s + lt.step_mb * costs.touch_s
        source = "measured"
        if spec.engine == "root" and calibration is not None and calibration.engine != "root" \
                and open_s > 0 and opened is not own:
            notes.append(f"the open per file ({open_s * 1e3:.0f} ms, warm) is uproot's, "
                         f"measured: an assumption for a ROOT reader (its loop was timed "
                         f"without opening)")
    elif spec.engine == "root" and (calibration is None or calibration.engine != "root"):
        notes.append("CPU terms per basket and per MB are uproot's (fitted on uproot's "
                     "tests): an assumption for a ROOT reader")
    if gc_s > 0 and open_s > 0:
        notes.append(f"the open per file includes {gc_s * 1e3:.1f} ms of Python's garbage "
                     f"collector (its full collections, measured in a fresh interpreter)")
    if spec.kind == "rdataframe" and not warm:
        notes.append("RDataFrame replayed as ROOT's TTreeCache at its automatic size; its "
                     "just-in-time compilation is not in the fitted CPU terms")
    measured = cache = None
    if mine and loop is not None:
        measured = loop.events_per_s
        top = loop.cold if loop.cold is not None and loop.cold.conditions.cache == "cold" \
            else loop.warm
        cache = top.conditions.cache if top is not None else None
    setup = reader_setup_s(calibration, spec.text)
    what = once_what(spec.kind)
    if setup and not mine:
        notes.append(f"its event-loop test was ended before its rates: the CPU per event is "
                     f"the fitted terms' (an assumption), and the {setup:.2f} s it measured "
                     f"once before ({what}) is counted; a longer --budget times the loop")
    if setup:  # once per program run (ROOT's first file, RDataFrame's compilation), measured
        cpu_s += setup
        notes.append(f"includes {setup:.2f} s paid once per run ({what}: its first set-up "
                     f"pass less a second one, measured): the rate grows with the events read")
    # the fixed costs of the read calls, basket keys and baskets: the fitted terms, or, where
    # the loop's CPU was measured, that CPU in the fitted terms' proportion
    c = costs.for_engine(lt.engine)
    fixed = lt.calls * c.call_s + lt.keys * c.key_s + \
        (lt.extra_touches if c.extra_baskets else lt.baskets) * c.basket_s
    if source == "measured":
        loop_fitted = lt.loop_cpu_s(c.touch_s)
        loop_measured = lt.entries / warm if warm else 0.0
        fixed = loop_measured * min(fixed / loop_fitted, 1.0) if loop_fitted > 0 else 0.0
        open_cpu = lt.files * open_s + fixed
    else:
        open_cpu = lt.cpu_open_s + fixed
    dec = dataset_decompression_mb_per_s(calibration, algorithm) \
        if calibration is not None and algorithm is not None else None
    decompress = min(lt.compressed_mb / dec, max(cpu_s - setup - open_cpu, 0.0)) if dec \
        else 0.0
    limit = str(getattr(device, "limit", "additive"))
    total = io_s + cpu_s
    if limit == "max":
        total = _paced(lt, device, cpu_s - setup, setup,
                       open_s if source == "measured" else None)
    rate = lt.entries / total if total > 0 else float("inf")
    derived = None
    cold_open = 0.0 if spec.opens_in_loop else \
        opened.cold + gc_s if opened is not None and opened.cold is not None else None
    if measured and cache == "cold" and cold_open is not None and lt.entries > 0:
        derived = lt.entries / measured_pass_s(lt.entries, measured, lt.files, cold_open, setup)
        off = rate / derived
        if abs(off - 1) > 0.2:
            notes.append(f"the replay misses this reader's own cold measurement (with the cold "
                         f"open per file) by {off:.2f}x: its I/O term ({io_s:.2f} s through "
                         f"{device.mb_per_s:.0f} MB/s and {device.access_s * 1e3:.2f} ms per "
                         f"access) or its CPU term ({cpu_s:.2f} s, {source}) disagrees")
    implied = None
    if access_s is None and derived and limit == "additive":
        pair = (lt.entries / rate, lt.entries / derived, lt.io.seeks * lt.scale,
                device.access_s)  # replayed, measured, seeks, the sweep's access time
        implied, own = loop_access_s(*pair), stream_access_s(*pair)
        if own is not None:
            again = reader_baseline(spec, maps, files, calibration, site, baseline, branches,
                                    algorithm, access_s=own)
            return replace(again, loop_access_ms=own * 1e3, swept_access_ms=swept_ms,
                           notes=(*again.notes, (
                f"the disk's access time per seeking read is the one this reader's cold loop "
                f"measured ({own * 1e3:.3f} ms, where the request sweep's "
                f"{swept_ms:.3f} ms replayed {derived / rate:.2f}x its time): the reads of "
                f"one read-ahead are issued together and the disk serves them at once")))
    return ReaderBaseline(
        reader=spec.text, description=spec.describe(), events_per_s=rate,
        compressed_mb_per_s=lt.compressed_mb / total if total > 0 else float("inf"),
        io_s=io_s, cpu_s=cpu_s, files=lt.files,
        entries=lt.entries, device_requests=lt.io.device_requests * lt.scale,
        seeks=lt.io.seeks * lt.scale, device_mb_per_s=device.mb_per_s,
        access_ms=device.access_s * 1e3, read_ahead_kb=device.read_ahead_kb,
        device_limit=limit,
        measured_events_per_s=measured, measured_cache=cache,
        ratio=rate / measured if measured else None, cpu_source=source, how=spec.how,
        measured_baseline_events_per_s=derived,
        notes=tuple(notes), compressed_mb=lt.compressed_mb,
        open_cpu_s=min(open_cpu, cpu_s - setup), decompress_s=decompress, setup_s=setup,
        stream_access_ms=access_s * 1e3 if access_s is not None else None,
        loop_access_ms=implied * 1e3 if implied is not None else None,
        swept_access_ms=swept_ms if implied is not None else None, cold_open_s=cold_open)


def loop_access_s(replayed_s: float, measured_s: float, seeks: float,
                  access_s: float) -> float | None:
    """The access time per seeking device read that would make the replay of a reader's cold
    pass (``replayed_s``, with the request sweep's ``access_s`` on its ``seeks`` seeking
    reads) take the time its cold loop measured (``measured_s``): the sweep's figure less the
    replay's excess per seeking read.  Only where the replay is the slower and the seeks can
    take the whole difference (else ``None``)."""
    if seeks <= 0 or measured_s <= 0 or replayed_s <= measured_s:
        return None
    own = access_s - (replayed_s - measured_s) / seeks
    return own if own > 0.0 else None


def stream_access_s(replayed_s: float, measured_s: float, seeks: float,
                    access_s: float) -> float | None:
    """The access time per seeking device read that a reader's own cold loop measured on a
    disk: the request sweep's ``access_s`` less the replay's excess over the loop
    (``replayed_s`` against ``measured_s``, the cold loop's time for the job with the cold open
    per file) per seeking read (``seeks`` of them in the replay).  Only where the replay is
    slower than the measurement by more than ``STREAM_TOLERANCE`` and the seeks can take the
    whole difference (never below 0, never above the sweep's figure); else ``None``."""
    if replayed_s * STREAM_TOLERANCE <= measured_s:
        return None
    return loop_access_s(replayed_s, measured_s, seeks, access_s)


__all__ = ["ReaderBaseline", "loop_access_s", "measured_pass_s", "once_what", "reader_baseline",
           "reader_setup_s", "replay_reader", "stream_access_s"]
