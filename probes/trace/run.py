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
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from .capture import (
    CHILD,
    MIN_TRACER_SAMPLES,
    Capture,
    TracedRead,
    TraceError,
    candidate_files,
    is_root_file,
    main_thread,
)
from .counters import block_delta, block_snapshot, evict, tracer_cost_s
from .sampler import Sampler
from .strace import Syscall, parse, strace_argv


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
