"""The user's program, traced (``hep-advisor trace``), as plain results: what it read, what
that cost, and the reader changes predicted for it (``U0xx``).  Made by
:mod:`hep_advisor.pipeline.trace`; the reader rules are :mod:`hep_advisor.rules.reader`."""

from __future__ import annotations

from dataclasses import dataclass

from hep_advisor.models.attribution import PhaseSpan

from .recommendation import Evidence
from .trace_picture import RequestPicture


@dataclass(frozen=True)
class ReaderFinding:
    """One change to the user's reading code, predicted by replaying it."""

    code: str
    title: str
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    change: str
    argument: str | None = None
    value: str | None = None
    evidence: tuple[Evidence, ...] = ()



@dataclass(frozen=True)
class TraceFile:
    path: str
    opens: int
    requests: int
    bytes: int
    bytes_needed: int
    #: the branches whose baskets it read (``--reader TRACE`` takes them as the branch set)
    branches: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestsByKind:
    basket: int
    key: int
    metadata: int
    other: int


@dataclass(frozen=True)
class TimeSplit:
    """Seconds: waiting for reads, decompressing (derived), the program's own work (its CPU
    time less decompression); ``unexplained``: the wall time less what the tracer took
    (``tracer``; where not measured, its estimate), the three, the main thread's wait for a
    core, ``parallel`` and ``other_disk`` (e.g. the main thread asleep outside the reads).
    Where the threads were sampled, ``io`` is the main thread's recorded waits times the share
    of their samples off a core (on a core or waiting for one is in ``user`` and
    ``cpu_wait``), plus the other threads' time in reads off a core."""

    io: float
    decompression: float | None
    user: float
    unexplained: float
    cpu_wait: float | None = None  # waiting for a free core (the machine busy): measured
    #: <= 0: the other threads' work (CPU, reads) done while the main thread was itself busy
    #: (on a core, waiting for one or for a read): in the parts above and in the wall time
    #: once; measured from the threads' sampled time on a core (None: not sampled)
    parallel: float | None = None
    #: the main thread waiting for a disk outside the traced reads (loading libraries and
    #: modules, page faults: a cold start); sampled state (None: not sampled)
    other_disk: float | None = None
    #: what the tracer took and the wall time less it: strace's stops of the main thread
    #: (sampled), or the in-process recorder's own time (measured); None: the estimate
    tracer: float | None = None


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
    recorder: str = "strace"  # or "python": the reads recorded inside the program
    root_read_calls: int | None = None  # python recorder: ROOT's own counters, where imported
    root_bytes_read: int | None = None
    picture: RequestPicture | None = None  # the requests, to draw (trace_picture)
    #: measured: seconds from the program's end to the trace's result (mapping the reads
    #: onto the basket maps, timing a sample of decompression, the rules' replays); None:
    #: not measured (a trace read back from a file made before)
    after_s: float | None = None



def trace_notes(t: Trace) -> tuple[str, ...]:
    """The trace's reader findings as one line each (for ``advise(..., trace=...)``)."""
    return tuple(f"{f.code} (traced program): {f.title}: predicted {f.predicted_speedup:.2f}x "
                 f"({f.speedup_low:.2f}-{f.speedup_high:.2f}); change: "
                 f"{f.change.splitlines()[0]}" for f in t.findings)


def split_check(t: Trace) -> float:
    """|unexplained| / untraced wall (the wall time less what the tracer took, where
    measured; else its estimate): the time split's miss (target <= 10%)."""
    took = t.time_split.tracer
    base = t.wall_s - took if took is not None else t.wall_s / (1 + t.overhead)
    return abs(t.time_split.unexplained) / base if base > 0 else 0.0
