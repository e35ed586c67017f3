"""What a traced run recorded (:class:`Capture`, :class:`TracedRead`), and the helpers that
both recorders share (``strace`` in :mod:`.run`, the in-process recorder in :mod:`.record`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sampler import Sample

CHILD = str(Path(__file__).with_name("_child.py"))
#: Samples of a run enough to take strace's cost from the time it held the program stopped
#: (the sampler's ``t`` state; ``hep_advisor.pipeline.trace.tracer_cost``); a run with fewer (under
#: 0.2 s) is charged the cost per call timed on a loop of reads (``counters.tracer_cost_s``)
#: instead, which is measured only then.
MIN_TRACER_SAMPLES = 20
ROOT_MAGIC = b"root"


class TraceError(RuntimeError):
    """The command cannot be traced (the message is one line)."""


@dataclass(frozen=True)
class TracedRead:
    """One read system call on a ROOT file; ``start_s`` from the program's start."""

    file: str
    offset: int
    size: int
    start_s: float
    duration_s: float
    pid: int = 0  # the process or thread that read
    group: int = 0  # >0: one network request (a vector read) of several ranges

    @property
    def stop(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class Capture:
    command: tuple[str, ...]
    exit_code: int
    wall_s: float
    user_s: float
    system_s: float
    reads: tuple[TracedRead, ...]
    opens: dict[str, int]
    mmaps: dict[str, int]
    file_bytes: dict[str, int]
    traced_calls: int  # every call the tracer stopped (its cost scales with these)
    tracer_cost_s: float  # estimated seconds the tracer added
    read_bytes: int | None  # /proc/<pid>/io read_bytes: from the device (page-cache misses)
    block: dict[str, tuple[int, int]] = field(default_factory=dict)  # dev -> (reads, bytes)
    evicted: tuple[str, ...] = ()
    runqueue_s: float | None = None  # the main thread's wait for a core (a busy machine)
    call_times: tuple[float, ...] = ()  # every traced call's start, from the program's start
    recorder: str = "strace"  # or "python" (probes.trace.record)
    waits: tuple[tuple[float, float], ...] = ()  # python: (start, seconds) waiting for data
    mapped_requests: int = 0  # python: ranges handed out by a memory map (no read call)
    root_counters: dict[str, int] | None = None  # python: ROOT's own totals (bytes, calls)
    recorder_errors: tuple[str, ...] = ()
    open_s: float | None = None  # python: seconds opening and closing files per range
    read_cpu_s: float = 0.0  # python: CPU seconds inside the local reads (in cpu_s too)
    pid: int | None = None  # the program's process (its main thread's id)
    main_cpu_s: float | None = None  # the main thread's time on a core (schedstat)
    samples: tuple[Sample, ...] = ()  # its threads, sampled (probes.trace.sampler)
    main_read_cpu_s: float = 0.0  # python: CPU inside the main thread's own local reads
    main_waits: tuple[tuple[float, float], ...] = ()  # python: the main thread's waits
    other_waits: tuple[tuple[float, float], ...] = ()  # python: other threads' waits
    root_reads: int = 0  # python: reads noted by ROOT itself (gPerfStats), among ``reads``

    def tracer_cost_between(self, lo: float, hi: float) -> float:
        """The tracer's estimated cost of the calls that started in ``[lo, hi]``."""
        if not self.traced_calls:
            return 0.0
        per_call = self.tracer_cost_s / self.traced_calls
        return per_call * sum(1 for t in self.call_times if lo <= t <= hi)

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.system_s

    @property
    def overhead(self) -> float:
        """The tracer's estimated cost as a fraction of the untraced wall time."""
        base = self.wall_s - self.tracer_cost_s
        return self.tracer_cost_s / base if base > 0 else 0.0


def is_root_file(path: str) -> bool:
    """``root``, then a plausible format version and header length (``fVersion``,
    ``fBEGIN``): a text file starting ``root:`` (``/etc/passwd``) is not one."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    if len(head) < 12 or head[:4] != ROOT_MAGIC:
        return False
    version = int.from_bytes(head[4:8], "big")
    begin = int.from_bytes(head[8:12], "big")
    return 0 < version < 10_000_000 and 0 < begin < 65_536


def candidate_files(argv: Sequence[str]) -> list[str]:
    """ROOT files named on a command line (``f.root``, ``f.root:tree``, directories of them)."""
    found: list[str] = []
    for arg in argv[1:]:
        for text in (arg, arg.split(":", 1)[0] if ":" in arg else None):
            if not text:
                continue
            p = Path(text)
            if p.is_dir():
                found.extend(str(q) for q in sorted(p.rglob("*.root")) if q.is_file())
            elif p.is_file() and is_root_file(str(p)):
                found.append(str(p))
    return list(dict.fromkeys(os.path.realpath(f) for f in found))


def main_thread(record: dict[str, Any]) -> dict[str, Any]:
    """The program's pid and its main thread's time on a core, from the wrapper's record."""
    return {"pid": int(record["pid"]) if "pid" in record else None,
            "main_cpu_s": float(record["main_cpu_s"]) if "main_cpu_s" in record else None}
