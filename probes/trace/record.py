"""The Python recorder: a traced program's reads recorded from inside its own processes.

``strace`` stops the program at every traced system call: cheap for a program that makes a
few large reads, costly for one that makes thousands of small ones (uproot's default local
source opens the file again for every range it reads), and blind to the offsets of network
reads (a socket, not a file).  The recorder instead puts a ``sitecustomize``
(:mod:`hep_advisor.probes.trace._site`) first on ``PYTHONPATH``: it wraps the functions through
which uproot reads (fsspec's local ``cat_file``, uproot's file and memory-map sources, pyxrootd's
``File.read``/``vector_read``), at a few microseconds per request, and writes one log per
process at exit.  The program itself is unchanged.

It sees only reads made through those functions, and ROOT's own reads (PyROOT, RDataFrame)
noted by a ``TVirtualPerfStats`` set as the main thread's ``gPerfStats`` (time and length; the
position of a remote file's reads only), with ROOT's totals (``TFile::GetFileBytesRead``/
``GetFileReadCalls``); :func:`choose_recorder` picks ``strace`` for ROOT programs on local
files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .counters import block_delta, block_snapshot, evict

SITE = str(Path(__file__).with_name("_site"))
URL = re.compile(r"^(root|https?|xroot)://", re.IGNORECASE)
_PY_READERS = re.compile(
    r"^\s*(?:from\s+(?:uproot|coffea)\b|import\s+[\w., ]*?\b(?:uproot|coffea)\b)", re.MULTILINE)
_ROOT = re.compile(r"^\s*(?:from\s+ROOT\b|import\s+[\w., ]*?\bROOT\b)", re.MULTILINE)


def remote_files(argv: Sequence[str]) -> list[str]:
    """``root://``, ``xroot://``, ``http(s)://`` names on a command line (a ``:tree`` suffix
    after the file name dropped)."""
    out = []
    for arg in argv[1:]:
        if URL.match(arg):
            head, sep, tail = arg.rpartition(":")
            out.append(head if sep and "/" not in tail and head.count("://") else arg)
    return out


def _script(argv: Sequence[str]) -> str | None:
    """The text of the Python script a command runs, where it names one."""
    exe = Path(argv[0]).name
    cands = argv[1:] if exe.startswith("python") else argv[:1]
    for arg in cands:
        if arg.startswith("-"):
            if arg in ("-c", "-m"):
                return None
            continue
        try:
            head = Path(arg).read_text(errors="replace")[:200_000]
        except OSError:
            return None
        if exe.startswith("python") or arg.endswith(".py") or (head.startswith("#!") and \
                "python" in head.splitlines()[0]):
            return head
        return None
    return None


def choose_recorder(argv: Sequence[str]) -> tuple[str, str]:
    """``("python" | "strace", why)``: the recorder for a Python script that imports uproot
    or coffea and not ROOT, or for any command reading a URL (``strace`` cannot see a
    network read's offset); ``strace`` for everything else (ROOT macros, PyROOT, compiled
    programs, ``python -c``)."""
    text = _script(argv)
    if text is not None and _PY_READERS.search(text) and not _ROOT.search(text):
        return "python", "a Python program reading through uproot: its reads recorded in-process"
    if remote_files(argv):
        return "python", "remote files: a network read's offset is not a system call's"
    return "strace", "not a Python program reading through uproot: every read system call"


def _env(log_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env["HEP_ADVISOR_TRACE_DIR"] = log_dir
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = SITE + (os.pathsep + old if old else "")
    return env


def read_logs(log_dir: str | Path) -> list[dict[str, Any]]:
    """Every process's log: ``{"pid", "main", "cost_s", "opens", "root", "patched",
    "records": [...]}`` (records: kind, path, offset, size, start epoch, duration, thread,
    group)."""
    out = []
    for p in sorted(Path(log_dir).glob("rec-*.jsonl")):
        try:
            lines = p.read_text().splitlines()
            head = json.loads(lines[0])
            head["records"] = [json.loads(x) for x in lines[1:] if x]
        except (OSError, ValueError, IndexError):
            continue
        out.append(head)
    return out


def run_recorded(argv: Sequence[str], *, cold: bool = False,
                 stdout: IO[Any] | int | None = None) -> Any:
    """Run ``argv`` with the Python recorder; returns a :class:`~.run.Capture`."""
    from .capture import CHILD, Capture, TracedRead, TraceError, candidate_files, main_thread
    from .sampler import Sampler

    evicted = tuple(f for f in candidate_files(argv) if evict(f)) if cold else ()
    with tempfile.TemporaryDirectory(prefix="hep-advisor-trace-") as tmp:
        result = str(Path(tmp) / "result.json")
        logs = Path(tmp) / "logs"
        logs.mkdir()
        before = block_snapshot()
        with Sampler(result + ".pid") as sampler:
            subprocess.run([sys.executable, CHILD, result, *argv], stdout=stdout,
                           env=_env(str(logs)), check=False)
        after = block_snapshot()
        try:
            record = json.loads(Path(result).read_text())
        except (OSError, ValueError):
            raise TraceError(f"{argv[0]}: did not run") from None
        if "error" in record:
            raise TraceError(str(record["error"]))
        procs = read_logs(logs)
    t0 = float(record["start_epoch"])
    reads: list[TracedRead] = []
    mapped = 0
    waits: list[tuple[float, float]] = []
    main_waits: list[tuple[float, float]] = []
    other_waits: list[tuple[float, float]] = []  # other threads' (asynchronous requests)
    root_reads = 0
    opens: dict[str, int] = {}
    errors: list[str] = []
    root_totals = {"bytes": 0, "calls": 0}
    root_seen = False
    for proc in procs:
        for path, n in proc.get("opens", {}).items():
            opens[path] = opens.get(path, 0) + int(n)
        if proc.get("root"):
            root_seen = True
            for k in root_totals:
                root_totals[k] += int(proc["root"][k])
        for kind, path, off, size, start, dur, thread, group in proc["records"]:
            if kind == "rootread" and size > 0:
                root_reads += 1
            if kind in ("read", "rootread") and size > 0:
                reads.append(TracedRead(path, off, size, start - t0, dur, thread,
                                        group))
            elif kind == "mapped":
                mapped += 1
                reads.append(TracedRead(path, off, size, start - t0, 0.0, thread))
            elif kind == "wait":
                waits.append((start - t0, dur))
                if thread == record.get("pid"):
                    main_waits.append((start - t0, dur))
                else:
                    other_waits.append((start - t0, dur))
            elif kind == "error":
                errors.append(path)
    reads.sort(key=lambda r: r.start_s)
    files = sorted({r.file for r in reads} | set(opens))
    local = [f for f in files if not URL.match(f)]
    sizes = {f: os.path.getsize(f) for f in local if os.path.exists(f)}
    block = block_delta(local, before, after)
    io = record.get("io") or {}
    return Capture(
        command=tuple(argv), exit_code=int(record["exit_code"]),
        wall_s=float(record["wall_s"]), user_s=float(record["user_s"]),
        system_s=float(record["system_s"]), reads=tuple(reads), opens=opens, mmaps={},
        file_bytes=sizes, traced_calls=len(reads),
        tracer_cost_s=sum(float(p.get("cost_s", 0.0)) for p in procs),
        read_bytes=int(io["read_bytes"]) if "read_bytes" in io else None,
        block=block, evicted=evicted,
        runqueue_s=float(record["runqueue_s"]) if "runqueue_s" in record else None,
        call_times=tuple(r.start_s for r in reads), recorder="python",
        waits=tuple(waits), mapped_requests=mapped, main_waits=tuple(main_waits),
        other_waits=tuple(other_waits),
        root_counters=root_totals if root_seen else None, recorder_errors=tuple(errors),
        open_s=sum(float(p.get("open_s", 0.0)) for p in procs),
        read_cpu_s=sum(float(p.get("read_cpu_s", 0.0)) for p in procs),
        samples=tuple(sampler.samples), **main_thread(record), root_reads=root_reads,
        main_read_cpu_s=sum(float(p.get("read_cpu_main_s", 0.0)) for p in procs
                            if p.get("pid") == record.get("pid")))
