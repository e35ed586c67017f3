"""Trace the user's own program: what it read, what that cost, and which reader change helps.

:func:`trace_program` runs a command unchanged under ``strace`` or the in-process Python
recorder (:mod:`hep_advisor.probes.trace`), maps
every read of a ROOT file onto the file's basket map (:mod:`hep_advisor.models.attribution`), splits
the wall time (I/O wait from the read calls' durations; decompression from timing a sample of
the baskets it read; the rest of the CPU time is the program's own work) and runs the reader
rules (:mod:`hep_advisor.rules.reader`).  The result is a frozen :class:`Trace` (the JSON
``trace`` block) inside a :class:`TraceRun` that also keeps the attributed reads (for the
picture).  UI-free.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from hep_advisor.findings.trace import (
    RequestsByKind,
    TimeSplit,
    Trace,
    TraceFile,
    split_check,
    trace_notes,
)
from hep_advisor.findings.trace_picture import request_picture
from hep_advisor.probes.trace.capture import MIN_TRACER_SAMPLES


@dataclass(frozen=True)
class TraceRun:
    """A trace and what it was built from (not in the JSON)."""

    trace: Trace
    attribution: Any  # models.attribution.Attribution
    capture: Any  # probes.trace.Capture


def trace_program(argv: Sequence[str], *, cold: bool = False,
                  stdout: IO[Any] | int | None = None, recorder: str = "auto",
                  uses: Sequence[str] = ()) -> TraceRun:
    """Run ``argv`` traced and analyse it; ``recorder``: ``auto`` (the in-process recorder
    for a Python program reading through uproot or reading a URL, ``strace`` otherwise),
    ``strace`` or ``python``; ``uses``: the branches the program uses (as its user says; for
    U002).  Raises :class:`hep_advisor.probes.trace.TraceError` (one-line message)
    when it cannot be traced."""
    import time

    from hep_advisor.probes.trace import run_traced

    capture = run_traced(argv, cold=cold, stdout=stdout, recorder=recorder)
    t0 = time.perf_counter()
    run = analyse(capture, cold=cold, uses=uses)
    return replace(run, trace=replace(run.trace, after_s=round(time.perf_counter() - t0, 3)))


def _maps(paths: Sequence[str], notes: list[str]) -> dict[str, Any]:
    from hep_advisor.probes.basketmap import read_basket_map
    from hep_advisor.probes.pagemap import read_page_map

    out = {}
    for p in paths:
        try:
            out[p] = read_basket_map(p)
        except Exception as e:
            try:  # an RNTuple's pages, for attribution
                out[p] = read_page_map(p)
                continue
            except Exception:
                pass
            # a file without a TTree or RNTuple, or unreadable: attributed as other
            cause = " ".join(str(e).split())[:80]
            notes.append(f"{p}: no basket map ({type(e).__name__}: {cause})")
    return out


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _mentions(argv: Sequence[str], word: str) -> bool:
    """Whether the program's text (a script or macro named on its command line) has ``word``."""
    from pathlib import Path

    for arg in argv:
        if arg.endswith((".py", ".C", ".cxx", ".cpp", ".cc")):
            try:
                if word in Path(arg).read_text(errors="replace"):
                    return True
            except OSError:
                continue
    return False


def reader_of(capture: Any) -> str:
    """``uproot`` or ``root``: whose reads the trace holds.  The Python recorder records
    uproot's; under strace, a file opened about once per read is uproot's default source, a
    Python script importing uproot and not ROOT is uproot; anything else is ROOT."""
    if capture.recorder == "python":
        return "root" if capture.root_reads and capture.root_reads == len(capture.reads) \
            else "uproot"
    if any(n >= 16 for n in capture.opens.values()):
        return "uproot"
    from hep_advisor.probes.trace.record import choose_recorder

    return "uproot" if choose_recorder(capture.command)[0] == "python" else "root"


#: Samples inside the main thread's waits needed to split them by its state.
MIN_SAMPLES = 5


def tracer_cost(capture: Any, split: TimeSplit) -> float:
    """What the tracer cost this run, in seconds.  ``strace`` with enough samples: the time
    the program's main thread was sampled stopped by it (``t``; the split's ``tracer``),
    measured in the run itself.  The cost per call of a tight loop of reads times the calls
    counts every stop on the program's path; where the device reads ahead while the program
    is stopped, a stop costs the wall time nothing, and a cold ROOT loop over 4,080 small
    reads measured +1% where that product said 27% (benchmarks/RESULTS.md, stop 55).  Else
    (the in-process recorder's own measured time, or a short run): ``tracer_cost_s``."""
    sampled = split.tracer
    if (capture.recorder == "strace" and sampled is not None
            and len(capture.samples) >= MIN_TRACER_SAMPLES):
        return float(sampled)
    return float(capture.tracer_cost_s)


def threads(capture: Any) -> Any:
    """:func:`hep_advisor.models.attribution.thread_overlap` of the capture; None without
    samples."""
    from hep_advisor.models.attribution import thread_overlap

    if not capture.samples or capture.pid is None or capture.main_cpu_s is None:
        return None
    main = capture.pid
    mine = [(r.start_s, r.duration_s) for r in capture.reads if r.pid == main]
    mine += list(capture.main_waits)
    theirs = [(r.start_s, r.duration_s) for r in capture.reads if r.pid != main]
    theirs += list(getattr(capture, "other_waits", ()))  # their asynchronous requests
    share = 1.0
    if capture.recorder == "python":  # their time in reads less the CPU inside them
        spent = sum(d for _, d in theirs)
        cpu = capture.read_cpu_s - capture.main_read_cpu_s
        share = min(max(1.0 - cpu / spent, 0.0), 1.0) if spent > 0 else 1.0
    return thread_overlap(capture.samples, main, mine, capture.cpu_s, capture.main_cpu_s,
                          capture.wall_s, theirs, share)


def time_split(capture: Any, io: float, decompression: float | None) -> TimeSplit:
    """The wall time's parts (:class:`TimeSplit`); ``io``: the time in reads less the CPU
    inside them."""
    cost = capture.tracer_cost_s
    user = max(capture.cpu_s - (decompression or 0.0), 0.0)
    wait = capture.runqueue_s
    tt = threads(capture)
    par = disk = tracer = None
    if tt is not None:
        par, disk = -tt.overlap, tt.outside.get("D", 0.0)
        if tt.inside_samples >= MIN_SAMPLES:  # the main thread's waits: the share of their
            # samples off a core (D: a disk, S: asleep, e.g. for the network); on a core or
            # waiting for one is in ``user`` and ``cpu_wait``, stopped by strace in the tracer
            inside = sum(tt.inside.values())
            off = tt.inside.get("D", 0.0) + tt.inside.get("S", 0.0)
            io = tt.waits * off / inside + tt.other_waits
        if capture.recorder == "strace":  # its stops, inside the reads and elsewhere
            cost = tracer = tt.inside.get("t", 0.0) + tt.outside.get("t", 0.0)
    if capture.recorder == "python":  # the recorder's own time is in the CPU time
        tracer = cost
        user = max(user - cost, 0.0)
    rest = (capture.wall_s - cost - io - (decompression or 0.0) - user - (wait or 0.0)
            - (par or 0.0) - (disk or 0.0))
    return TimeSplit(io, decompression, user, rest, wait, par, disk, tracer)


def _evicted_all(reads: Sequence[Any], evicted: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether every local file the program read was evicted before it ran (vacuously, where
    it read none), and those that were not (in read order)."""
    gone = {os.path.realpath(f) for f in evicted}
    read = list(dict.fromkeys(r.file for r in reads))
    missed = [f for f in read if os.path.realpath(f) not in gone]
    return not missed, missed


def _device(local: Sequence[Any], order: Sequence[str], counted: tuple[Any, Any],
            prepass: bool, throttle: Any, max_io_kb: int) -> tuple[Any, Any, str | None]:
    """The device the reader changes are replayed through, and how it was found (a note):
    a cached calibration of the traced files (its cold read, request sweep and form), else the
    cgroup's read limits the site probe finds on the data path, else the trace's own cold
    reads with a short cold sequential read of the first file where the block counters say
    the run read from the device; never the large reads that followed a key pre-pass (the
    pre-pass's read-ahead leaves pages cached between them: they are served in pieces)."""
    from hep_advisor.models.attribution import TracedDevice, device_from_trace
    from hep_advisor.models.replay.device import LocalDevice

    cal = _calibrated_device(order)
    if cal is not None:
        return (*cal, "device: a cached calibration of these files (its cold read and request "
                "sweep)")
    if throttle is not None and throttle.read_mb_per_s and throttle.read_iops:
        mb, iops = float(throttle.read_mb_per_s), float(throttle.read_iops)
        limited = TracedDevice(mb, 1.0 / iops, (0.8 * mb, mb), (1.0 / iops, 1.25 / iops), 0, 0,
                               source="throttle")
        tmpl = LocalDevice(mb, 1.0 / iops, limit="max", max_io_kb=max_io_kb,
                           throttle_mb_per_s=mb, throttle_iops=iops)
        return limited, tmpl, (f"device: the cgroup's read limits on this device ({mb:g} MB/s, "
                           f"{iops:g} IOPS), as the site probe finds them")
    read_device = bool(counted[0])  # the block counters saw the run read from the device
    streaming = None
    if read_device and order:
        from hep_advisor.probes.trace.counters import sequential_mb_per_s

        streaming = sequential_mb_per_s(order[0])  # a short cold read of a traced file
    dev = device_from_trace(local, streaming, *counted, trust_large=not prepass)
    how = None if streaming is None else (
        f"device: a short cold read of {os.path.basename(order[0])} after the run "
        f"({streaming:.1f} MB/s)" + (", not the reads after the key pre-pass (served in "
                                     "pieces between cached pages)" if prepass else ""))
    return dev, None, how


def _calibrated_device(files: Sequence[str]) -> tuple[Any, Any] | None:
    """A cached calibration of ``files`` (or of their directory), made by ``hep-advisor
    report``/``calibrate`` with uproot's default reader or the advisor's own loop: its cold
    raw read's bandwidth and spread, its request sweep's access time and its device form."""
    from hep_advisor.models.attribution import TracedDevice
    from hep_advisor.models.replay.device import LocalDevice
    from hep_advisor.pipeline.advise import engine_key
    from hep_advisor.pipeline.cache import cache_key, load
    from hep_advisor.probes.readtests.readers import default_reader

    local = [f for f in files if "://" not in f and os.path.exists(f)]
    if not local:
        return None
    candidates = [list(local), [os.path.commonpath([os.path.dirname(f) for f in local])]]
    for paths in candidates:
        for engine in (engine_key("uproot", default_reader("uproot")), "uproot"):
            try:
                hit = load(cache_key(paths, engine, None, None))
            except OSError:
                hit = None
            raw = hit.calibration.raw_read if hit is not None else None
            if raw is None or not (raw.cold_mb_per_s or raw.bandwidth_mb_per_s) or \
                    not raw.access_time_ms:
                continue
            mb = float(raw.cold_mb_per_s or raw.bandwidth_mb_per_s or 0.0)
            spread = raw.cold.spread if raw.cold is not None and raw.cold.spread else 0.1
            access = raw.access_time_ms / 1e3
            limited = raw.device_limit == "max"
            if limited and raw.iops_4k:
                access = 1.0 / raw.iops_4k
            dev = TracedDevice(mb, access, (mb * (1 - spread / 2), mb * (1 + spread / 2)),
                               (0.8 * access, 1.25 * access), 0, 0, source="calibration")
            return dev, LocalDevice(mb, access, limit="max" if limited else "additive")
    return None


def analyse(capture: Any, *, cold: bool = False, uses: Sequence[str] = ()) -> TraceRun:
    """Attribution, time split and reader findings of a
    :class:`hep_advisor.probes.trace.Capture`."""
    from hep_advisor.models.attribution import attribute
    from hep_advisor.probes.pagemap import is_page_map
    from hep_advisor.probes.trace.decompress import decompression_s_per_byte
    from hep_advisor.rules.reader import TraceFacts, device_facts, maps_in_read_order, on_core_in
    from hep_advisor.rules.reader_changes import reader_rules

    notes: list[str] = []
    order = list(dict.fromkeys(r.file for r in capture.reads))
    maps = _maps(order, notes)
    att = attribute(capture.reads, maps, capture.opens, capture.wall_s)
    if capture.waits:  # the recorder saw the program wait for data: that is waiting too
        from hep_advisor.models.attribution import busy_s
        from hep_advisor.probes.trace import TracedRead

        waited = [TracedRead("", 0, 0, t, d) for t, d in capture.waits]
        att = replace(att, io_s=busy_s([*capture.reads, *waited]))
    if capture.read_cpu_s:  # CPU inside the reads is in the CPU time: waiting is the rest
        att = replace(att, io_s=max(att.io_s - capture.read_cpu_s, 0.0))

    decompression: float | None = 0.0
    for f in att.files:
        m = maps.get(f.path)
        if m is None:
            continue
        touched = sorted({bk for c in att.reads if c.read.file == f.path and c.kind == "basket"
                          for bk in c.baskets})
        spans = [(int(m.branches[b].seek[j]), int(m.branches[b].nbytes[j])) for b, j in touched]
        rate = decompression_s_per_byte(f.path, spans, keyed=not is_page_map(m))
        if rate is None:
            continue
        if decompression is not None:
            decompression += rate * sum(n for _, n in spans)
    if not maps:
        decompression = None
    io = att.io_s
    split = time_split(capture, io, decompression)
    # the overhead stated and the pre-pass's share of it: the tracer's cost as measured
    capture = replace(capture, tracer_cost_s=tracer_cost(capture, split))
    if capture.recorder == "python":
        notes.append("recorded inside the program (uproot's and pyxrootd's reads; ROOT's own "
                     "reads through ROOT's gPerfStats, its main thread's only): "
                     f"{capture.tracer_cost_s * 1e3:.1f} ms spent recording")
        notes.extend(f"recorder: {e}" for e in capture.recorder_errors)
        if capture.mapped_requests:
            notes.append(f"{capture.mapped_requests} ranges from a memory map: page faults, "
                         "no read calls (their time is not seen)")
    if capture.mmaps:
        notes.append(f"{sum(capture.mmaps.values())} memory mappings of ROOT files: reads "
                     "through a mapping are page faults, not seen as requests")
    block = list(capture.block.values())
    counted = ((sum(b[0] for b in block), sum(b[1] for b in block)) if block
               else (None, None))
    local = [r for r in capture.reads if "://" not in r.file]
    remote = len(local) < len(capture.reads)
    if cold:  # --cold evicts the ROOT files named on the command line, and only those
        cold, missed = _evicted_all(local, capture.evicted)
        if missed:
            notes.append(f"--cold evicted only the ROOT files named on the command line: "
                         f"{len(missed)} of the files the program read were not evicted "
                         f"(e.g. {missed[0]}), so their reads may have come from the page "
                         "cache; name the files (or their directory) on the command line, "
                         "or drop the page cache first (as root: sync; echo 1 > "
                         "/proc/sys/vm/drop_caches)")
    pre = att.phase("pre-pass")
    storage = device_facts(order[0] if order and not remote else None)
    throttle = storage.pop("throttle", None)
    max_io_kb = storage.pop("max_io_kb", 0)
    device, template, how = (None, None, None) if remote or not local else _device(
        local, order, counted, pre is not None, throttle, max_io_kb)
    if how is not None:
        notes.append(how)
    link = None
    if remote:
        from hep_advisor.models.attribution import link_from_trace

        link = link_from_trace(capture.reads)
        notes.append("remote files: U001 replayed through the link seen in the trace (round "
                     "trips, bandwidth); the rules that need a local device say nothing")
    elif device is None and capture.reads:
        notes.append("no read in the trace reached the device (warm page cache?): reader "
                     "changes are not predicted; trace with --cold")
    trees = [m for m in maps.values() if not is_page_map(m)]  # the rules read TTrees
    facts = TraceFacts(att, maps_in_read_order(trees, order), capture.wall_s,
                       device, storage.pop("read_ahead_kb"), capture.overhead,
                       capture.tracer_cost_between(pre.start_s, pre.end_s) if pre else 0.0,
                       reader=reader_of(capture), uses=tuple(uses), cpu_s=capture.cpu_s,
                       decompression_s=decompression, cores=_cores(),
                       rdataframe=_mentions(capture.command, "RDataFrame"),
                       open_s=capture.open_s, link=link,
                       prepass_on_core=on_core_in(capture, pre), template=template,
                       **storage)
    findings = tuple(reader_rules(facts))
    kinds = att.by_kind()
    trace = Trace(
        command=shlex.join(capture.command), exit_code=capture.exit_code,
        wall_s=capture.wall_s, cpu_s=capture.cpu_s, io_wait_s=io,
        overhead=capture.overhead,
        files=tuple(TraceFile(f.path, f.opens, f.requests, f.bytes, f.bytes_needed,
                              f.branches_read)
                    for f in att.files),
        requests_by_kind=RequestsByKind(*(kinds[k][0] for k in
                                          ("basket", "key", "metadata", "other"))),
        phases=att.phases,
        time_split=split, findings=findings,
        bytes_by_kind=RequestsByKind(*(kinds[k][1] for k in
                                       ("basket", "key", "metadata", "other"))),
        amplification=att.amplification, reread_bytes=att.reread_bytes, cold=cold,
        block_reads=sum(b[0] for b in block) if block else None,
        block_bytes=sum(b[1] for b in block) if block else None,
        proc_read_bytes=capture.read_bytes, mmaps=sum(capture.mmaps.values()),
        notes=tuple(notes), picture=request_picture(att.reads, capture.wall_s),
        recorder=capture.recorder,
        root_read_calls=(capture.root_counters or {}).get("calls"),
        root_bytes_read=(capture.root_counters or {}).get("bytes"))
    return TraceRun(trace, att, capture)


__all__ = ["Trace", "TraceRun", "analyse", "split_check", "trace_notes", "trace_program"]
