"""Run a user's command unchanged under ``strace`` and record what it read.

:func:`run_traced` returns a :class:`Capture`: the exit code, wall and CPU times (of the
program, measured by a small wrapper inside the trace), every read of a ROOT file (offset,
size, start, duration), the opens and mappings of each ROOT file, the block devices' counters
before and after, the program's ``/proc/<pid>/io`` and an estimate of the tracer's cost.  The
trace output lives in a temporary directory removed whatever happens (Ctrl-C included).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from .counters import block_delta, block_snapshot, evict, tracer_cost_s
from .sampler import Sample, Sampler
from .strace import Syscall, parse, strace_argv

CHILD = str(Path(__file__).with_name("_child.py"))
#: Samples of a run enough to take strace's cost from the time it held the program stopped
#: (the sampler's ``t`` state; ``hep_advisor.trace.tracer_cost``); a run with fewer (under 0.2 s)
#: is charged the cost per call timed on a loop of reads (``counters.tracer_cost_s``) instead,
#: which is measured only then.
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


def run_traced(argv: Sequence[str], *, cold: bool = False, strace: str | None = None,
               stdout: IO[Any] | int | None = None, measure_cost: bool = True,
               recorder: str = "strace") -> Capture:
    """Run ``argv`` under ``strace`` (``recorder="python"``: the in-process recorder of
    :mod:`.record`; ``"auto"``: :func:`.record.choose_recorder`); ``cold``: first drop the
    pages of the ROOT files named on its command line.  ``stdout``: where the program's
    output goes (default: inherited)."""
    if not argv:
        raise TraceError("no command given (hep-advisor trace -- COMMAND [ARGS...])")
    if recorder not in ("strace", "python", "auto"):
        raise TraceError(f"unknown recorder {recorder!r} (auto, strace or python)")
    if recorder == "auto":
        from .record import choose_recorder

        recorder = choose_recorder(argv)[0]
    if recorder == "python":
        if shutil.which(argv[0]) is None:
            raise TraceError(f"{argv[0]}: command not found")
        from .record import run_recorded

        cap: Capture = run_recorded(argv, cold=cold, stdout=stdout)
        return cap
    tracer = strace or shutil.which("strace")
    if tracer is None:
        raise TraceError("strace not found: install it (e.g. apt-get install strace)")
    if shutil.which(argv[0]) is None:
        raise TraceError(f"{argv[0]}: command not found")
    evicted = tuple(f for f in candidate_files(argv) if evict(f)) if cold else ()
    with tempfile.TemporaryDirectory(prefix="hep-advisor-trace-") as tmp:
        out, result = str(Path(tmp) / "strace.txt"), str(Path(tmp) / "result.json")
        before = block_snapshot()
        with Sampler(result + ".pid") as sampler:
            done = subprocess.run(strace_argv(tracer, out, [sys.executable, CHILD, result,
                                                            *argv]), stdout=stdout, check=False)
        after = block_snapshot()
        try:
            record = json.loads(Path(result).read_text())
        except (OSError, ValueError):
            raise TraceError(f"{argv[0]}: the tracer did not run it (strace exit "
                             f"{done.returncode}; is ptrace allowed here?)") from None
        if "error" in record:
            raise TraceError(str(record["error"]))
        with open(out, errors="replace") as fh:
            calls = parse(fh)
        call_times: list[float] = []
        with open(out, errors="replace") as fh:
            for line in fh:
                parts = line.split(None, 2)
                try:
                    call_times.append(float(parts[1]) - float(record["start_epoch"]))
                except (IndexError, ValueError):
                    continue
        traced_calls = len(call_times)
    sampled = (len(sampler.samples) >= MIN_TRACER_SAMPLES and "pid" in record
               and "main_cpu_s" in record)  # the stops are measured: no loop to time
    cap = _capture(argv, record, calls, traced_calls, before, after, evicted,
                   tracer_cost_s(tracer) if measure_cost and not sampled else 0.0)
    return replace(cap, call_times=tuple(call_times), samples=tuple(sampler.samples))


def _capture(argv: Sequence[str], record: dict[str, Any], calls: list[Syscall],
             traced_calls: int, before: dict[str, tuple[int, int]],
             after: dict[str, tuple[int, int]], evicted: tuple[str, ...],
             cost_per_call: float) -> Capture:
    t0 = float(record["start_epoch"])
    roots: dict[str, bool] = {}

    def root(path: str) -> bool:
        if path not in roots:
            roots[path] = is_root_file(path)
        return roots[path]

    reads: list[TracedRead] = []
    opens: dict[str, int] = {}
    mmaps: dict[str, int] = {}
    for c in calls:
        if not c.path.startswith("/") or not root(c.path):
            continue
        if c.call == "open":
            opens[c.path] = opens.get(c.path, 0) + 1
        elif c.call == "mmap":
            mmaps[c.path] = mmaps.get(c.path, 0) + 1
        elif c.size > 0:
            reads.append(TracedRead(c.path, c.offset, c.size, c.start - t0, c.duration, c.pid))
    files = sorted({*opens, *(r.file for r in reads)})
    sizes = {f: os.path.getsize(f) for f in files if os.path.exists(f)}
    block = block_delta(files, before, after)
    io = record.get("io") or {}
    return Capture(
        command=tuple(argv), exit_code=int(record["exit_code"]),
        wall_s=float(record["wall_s"]), user_s=float(record["user_s"]),
        system_s=float(record["system_s"]), reads=tuple(reads), opens=opens, mmaps=mmaps,
        file_bytes=sizes, traced_calls=traced_calls,
        tracer_cost_s=traced_calls * cost_per_call,
        read_bytes=int(io["read_bytes"]) if "read_bytes" in io else None,
        block=block, evicted=evicted,
        runqueue_s=float(record["runqueue_s"]) if "runqueue_s" in record else None,
        **main_thread(record))


def main_thread(record: dict[str, Any]) -> dict[str, Any]:
    """The program's pid and its main thread's time on a core, from the wrapper's record."""
    return {"pid": int(record["pid"]) if "pid" in record else None,
            "main_cpu_s": float(record["main_cpu_s"]) if "main_cpu_s" in record else None}
