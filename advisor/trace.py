"""Trace the user's own program: what it read, what that cost, and which reader change helps.

:func:`trace_program` runs a command unchanged under ``strace`` (:mod:`probes.trace`), maps
every read of a ROOT file onto the file's basket map (:mod:`models.attribution`), splits the
wall time (I/O wait from the read calls' durations; decompression from timing a sample of
the baskets it read; the rest of the CPU time is the program's own work) and runs the reader
rules (:mod:`advisor.recommend.reader`).  The result is a frozen :class:`Trace` (the JSON
``trace`` block) inside a :class:`TraceRun` that also keeps the attributed reads (for the
picture).  UI-free.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from models.attribution import PhaseSpan

from .advice import Evidence
from .recommend.reader import ReaderFinding


@dataclass(frozen=True)
class TraceFile:
    path: str
    opens: int
    requests: int
    bytes: int
    bytes_needed: int


@dataclass(frozen=True)
class RequestsByKind:
    basket: int
    key: int
    metadata: int
    other: int


@dataclass(frozen=True)
class TimeSplit:
    """Seconds: waiting for reads, decompressing (derived), the program's own work (its CPU
    time less decompression); ``unexplained``: the wall time less the tracer's estimated cost
    less the three and the wait for a core (e.g. start-up waits, or negative where threads
    overlap)."""

    io: float
    decompression: float | None
    user: float
    unexplained: float
    cpu_wait: float | None = None  # waiting for a free core (the machine busy): measured


@dataclass(frozen=True)
class Trace:
    """The ``trace`` block: what the program read and what it cost (all measured, or derived
    from measurements where the field's note says so)."""

    command: str
    exit_code: int
    wall_s: float
    cpu_s: float
    io_wait_s: float
    overhead: float  # the tracer's estimated cost / the untraced wall time
    files: tuple[TraceFile, ...]
    requests_by_kind: RequestsByKind
    phases: tuple[PhaseSpan, ...]
    time_split: TimeSplit
    findings: tuple[ReaderFinding, ...]
    bytes_by_kind: RequestsByKind | None = None
    amplification: float | None = None
    reread_bytes: int = 0
    cold: bool = False
    block_reads: int | None = None  # reads the files' block devices served during the run
    block_bytes: int | None = None
    proc_read_bytes: int | None = None  # the program's /proc/<pid>/io read_bytes
    mmaps: int = 0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TraceRun:
    """A trace and what it was built from (not in the JSON)."""

    trace: Trace
    attribution: Any  # models.attribution.Attribution
    capture: Any  # probes.trace.Capture


def trace_program(argv: Sequence[str], *, cold: bool = False,
                  stdout: IO[Any] | int | None = None) -> TraceRun:
    """Run ``argv`` traced and analyse it.  Raises :class:`probes.trace.TraceError` (one-line
    message) when it cannot be traced."""
    from probes.trace import run_traced

    capture = run_traced(argv, cold=cold, stdout=stdout)
    return analyse(capture, cold=cold)


def _maps(paths: Sequence[str], notes: list[str]) -> dict[str, Any]:
    from probes.basketmap import read_basket_map

    out = {}
    for p in paths:
        try:
            out[p] = read_basket_map(p)
        except Exception as e:  # a file without a TTree, or unreadable: attributed as other
            cause = " ".join(str(e).split())[:80]
            notes.append(f"{p}: no basket map ({type(e).__name__}: {cause})")
    return out


def _read_ahead_kb(path: str) -> int:
    import os
    from pathlib import Path

    try:
        dev = os.stat(path).st_dev
        base = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
        for q in (base / "queue", base.resolve().parent / "queue"):
            if (q / "read_ahead_kb").exists():
                return int((q / "read_ahead_kb").read_text())
    except (OSError, ValueError):
        pass
    return 128


def analyse(capture: Any, *, cold: bool = False) -> TraceRun:
    """Attribution, time split and reader findings of a :class:`probes.trace.Capture`."""
    from models.attribution import attribute, device_from_trace
    from probes.trace.decompress import decompression_s_per_byte

    from .recommend.reader import TraceFacts, maps_in_read_order, reader_rules

    notes: list[str] = []
    order = list(dict.fromkeys(r.file for r in capture.reads))
    maps = _maps(order, notes)
    att = attribute(capture.reads, maps, capture.opens, capture.wall_s)

    decompression: float | None = 0.0
    for f in att.files:
        m = maps.get(f.path)
        if m is None:
            continue
        touched = sorted({bk for c in att.reads if c.read.file == f.path and c.kind == "basket"
                          for bk in c.baskets})
        spans = [(int(m.branches[b].seek[j]), int(m.branches[b].nbytes[j])) for b, j in touched]
        rate = decompression_s_per_byte(f.path, spans)
        if rate is None:
            continue
        if decompression is not None:
            decompression += rate * sum(n for _, n in spans)
    if not maps:
        decompression = None
    io = att.io_s
    user = max(capture.cpu_s - (decompression or 0.0), 0.0)
    wait = capture.runqueue_s
    split = TimeSplit(io, decompression, user, capture.wall_s - capture.tracer_cost_s - io
                      - (decompression or 0.0) - user - (wait or 0.0), wait)
    if capture.mmaps:
        notes.append(f"{sum(capture.mmaps.values())} memory mappings of ROOT files: reads "
                     "through a mapping are page faults, not seen as requests")
    block = list(capture.block.values())
    counted = ((sum(b[0] for b in block), sum(b[1] for b in block)) if block
               else (None, None))
    device = device_from_trace(capture.reads, None, *counted)
    if device is not None and device.large_reads < 3 and cold and order:
        # too few large reads reached the device: measure its streaming rate (one cold read)
        from probes.trace.counters import sequential_mb_per_s

        device = device_from_trace(capture.reads, sequential_mb_per_s(order[0]), *counted)
    if device is None and capture.reads:
        notes.append("no read in the trace reached the device (warm page cache?): reader "
                     "changes are not predicted; trace with --cold")
    pre = att.phase("pre-pass")
    facts = TraceFacts(att, maps_in_read_order(list(maps.values()), order), capture.wall_s,
                       device, _read_ahead_kb(order[0]) if order else 128, capture.overhead,
                       capture.tracer_cost_between(pre.start_s, pre.end_s) if pre else 0.0)
    findings = tuple(reader_rules(facts))
    kinds = att.by_kind()
    trace = Trace(
        command=shlex.join(capture.command), exit_code=capture.exit_code,
        wall_s=capture.wall_s, cpu_s=capture.cpu_s, io_wait_s=io,
        overhead=capture.overhead,
        files=tuple(TraceFile(f.path, f.opens, f.requests, f.bytes, f.bytes_needed)
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
        notes=tuple(notes))
    return TraceRun(trace, att, capture)


def trace_notes(t: Trace) -> tuple[str, ...]:
    """The trace's reader findings as one line each (for ``advise(..., trace=...)``)."""
    return tuple(f"{f.code} (traced program): {f.title}: predicted {f.predicted_speedup:.2f}x "
                 f"({f.speedup_low:.2f}-{f.speedup_high:.2f}); change: "
                 f"{f.change.splitlines()[0]}" for f in t.findings)


def split_check(t: Trace) -> float:
    """|unexplained| / untraced wall: the time split's miss (target <= 10%)."""
    base = t.wall_s / (1 + t.overhead)
    return abs(t.time_split.unexplained) / base if base > 0 else 0.0


__all__ = ["Evidence", "ReaderFinding", "Trace", "TraceRun", "analyse", "split_check",
           "trace_notes", "trace_program"]
