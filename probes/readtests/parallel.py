"""A parallel analysis-like job: N worker processes reading the dataset's files with uproot.

This is the *measure* side of the model's validation: the aggregate throughput of a real job,
in the configuration the model predicts (workers, files, branches, cold or warm cache).  It does
what a PROOF-Lite job, or N uproot processes fed from one list, do:

* N processes (``fork`` where available, as the concurrency sweep does) start, wait at a
  barrier, and then pull the next file from a shared counter when they are done with the
  previous one (pull-based load balancing: a slow file does not hold back the others);
* for each file a worker opens it, reads the selected branches (all, by default) into arrays in
  steps of about ``step_bytes`` uncompressed (``TTree.iterate``; memory stays bounded whatever
  the file size), calls the user's analysis on each chunk when given, and closes the file;
* the worker reports per file: entries, the selected branches' bytes from the metadata
  (compressed on disk, ``fZipBytes``; uncompressed, ``fTotBytes``) and the seconds it took
  (opening included: per-file overhead is part of a job).

``wall_s`` runs from the barrier's release to the end of the last worker; the aggregate rate is
the compressed bytes of all files over it (MB = 10^6 bytes).  *Cold* runs evict every file first
(``posix_fadvise``) and count as cold only where ``mincore`` confirmed it for every file; *warm*
runs read every file once beforehand.  Files are only read, never written.

Children ignore SIGINT (the parent handles Ctrl-C) and are always terminated and joined when the
parent leaves, normally or not.  An exception in a child (a damaged file, the user's analysis
raising) surfaces in the parent as a one-line :class:`RuntimeError` naming the file.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import signal
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .eventloop import DEFAULT_STEP_BYTES, Analysis, _leaf_branches, resolve_analysis
from .pagecache import Eviction, evict_all, resident_fraction
from .raw import LARGE_REQUEST, cache_state, eviction_note, read_sequential
from .results import CacheState, Conditions, Measurement
from .runner import measurement

#: Seconds the parent waits for every child to reach the start barrier.
START_TIMEOUT_S = 60.0
#: A warm run counts as warm when every file is at least this much in the page cache afterwards
#: (where mincore can tell).
WARM_FRACTION = 0.9
#: How often the parent looks at its children while waiting for their reports.
POLL_S = 0.25


@dataclass(frozen=True)
class FileRun:
    """One file as one worker processed it."""

    path: str
    worker: int
    entries: int
    compressed_bytes: int  # of the selected branches (fZipBytes), whole tree
    uncompressed_bytes: int  # fTotBytes
    seconds: float  # open, read, analysis, close


@dataclass(frozen=True)
class JobResult:
    """One run of a parallel job.  Rates are over ``wall_s`` (barrier release to the last
    worker's end); MB = 10^6 bytes of the selected branches, compressed (on disk)."""

    workers: int
    files: int
    entries: int
    compressed_bytes: int
    uncompressed_bytes: int
    wall_s: float
    aggregate_mb_per_s: float
    events_per_s: float
    cache: CacheState
    per_worker: tuple[tuple[int, int, float], ...]  # (files, entries, busy_s) per worker
    branches: int = 0  # selected branches (of the first file, when all are read)
    per_file: tuple[FileRun, ...] = ()
    library: str = "ak"
    analysis: str | None = None
    note: str | None = None

    @property
    def uncompressed_mb_per_s(self) -> float:
        return self.uncompressed_bytes / self.wall_s / 1e6 if self.wall_s > 0 else 0.0


# -- the worker ----------------------------------------------------------------------------------
def _read_file(path: str, tree_name: str, branches: Sequence[str] | None, library: str,
               step_bytes: float, analysis: Analysis | None) -> tuple[int, int, int]:
    """Open ``path``, read the branches into arrays chunk by chunk, run ``analysis`` on each
    chunk; (entries, fZipBytes, fTotBytes) of the selected branches."""
    import uproot

    with uproot.open(path) as f:
        if tree_name not in f:
            raise ValueError(f"no tree {tree_name!r}")
        tree = f[tree_name]
        selected = list(branches) if branches is not None else _leaf_branches(tree)
        missing = [b for b in selected if b not in tree]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise ValueError(f"no branch {shown} in tree {tree_name!r}")
        zipped = sum(int(tree[b].member("fZipBytes")) for b in selected)
        unzipped = sum(int(tree[b].member("fTotBytes")) for b in selected)
        n_entries = int(tree.num_entries)
        per_entry = unzipped / n_entries if n_entries > 0 else 1.0
        step = max(1, int(step_bytes / max(per_entry, 1.0)))
        n = 0
        if n_entries > 0 and selected:
            for arrays in tree.iterate(selected, step_size=step, library=library):
                if analysis is not None:
                    try:
                        analysis(arrays)
                    except Exception as exc:
                        from ..rootfile import one_line

                        name = getattr(analysis, "__qualname__", None) or repr(analysis)
                        raise RuntimeError(f"the analysis {name} raised "
                                           f"{type(exc).__name__}: {one_line(exc)}") from None
                n += len(next(iter(arrays.values()))) if isinstance(arrays, dict) \
                    else len(arrays)
                del arrays
        else:
            n = max(n_entries, 0)
    return n, zipped, unzipped


def _worker(wid: int, paths: Sequence[str], tree_name: str, branches: Sequence[str] | None,
            library: str, step_bytes: float, analysis: Analysis | None, counter: Any,
            barrier: Any, results: Any) -> None:
    """Child process: after the barrier, take the next file index until none is left; report
    ("file", ...) per file, ("error", ...) on failure, ("done", ...) at the end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    barrier.wait(timeout=START_TIMEOUT_S)
    t0 = time.perf_counter()
    busy = 0.0
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= len(paths):
            break
        s0 = time.perf_counter()
        try:
            entries, zipped, unzipped = _read_file(paths[i], tree_name, branches, library,
                                                   step_bytes, analysis)
        except BaseException as exc:
            from ..rootfile import one_line

            msg = one_line(exc)
            if not isinstance(exc, RuntimeError) or not msg.startswith("the analysis "):
                msg = f"{type(exc).__name__}: {msg}"
            results.put(("error", wid, i, msg))
            return
        dt = time.perf_counter() - s0
        busy += dt
        results.put(("file", wid, i, entries, zipped, unzipped, dt))
    results.put(("done", wid, t0, time.perf_counter(), busy))


# -- the parent ----------------------------------------------------------------------------------
def _resolve_branches(path: str, tree_name: str, branches: Sequence[str] | None) -> int:
    """The number of selected branches in the first file; ``ValueError`` (one line) when the
    tree or a requested branch is missing there."""
    import uproot

    with uproot.open(path) as f:
        if tree_name not in f:
            raise ValueError(f"no tree {tree_name!r} in {path}")
        tree = f[tree_name]
        if branches is None:
            return len(_leaf_branches(tree))
        missing = [b for b in branches if b not in tree]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise ValueError(f"no branch {shown} in tree {tree_name!r} of {path}")
        return len(branches)


def _warm_up(paths: Sequence[str]) -> tuple[CacheState, str | None]:
    """Read every file once so that it is in the page cache; check it with mincore."""
    buf = bytearray(LARGE_REQUEST)
    for p in paths:
        read_sequential(p, LARGE_REQUEST, buf=buf)
    fractions = [resident_fraction(p) for p in paths]
    known = [f for f in fractions if f is not None]
    if known and min(known) < WARM_FRACTION:
        return "mixed", (f"some files did not stay in the page cache (down to "
                         f"{100 * min(known):.0f}% resident): the figure is partly cold")
    return "warm", None


def _collect(procs: list[Any], results: Any, paths: Sequence[str], deadline: float
             ) -> tuple[list[tuple[Any, ...]], dict[int, tuple[float, float, float]]]:
    """The children's reports, until every child said it is done.  Raises ``RuntimeError``
    (one line) for an error in a child, a child that died, or the deadline."""
    files: list[tuple[Any, ...]] = []
    done: dict[int, tuple[float, float, float]] = {}
    suspect: dict[int, int] = {}  # child that exited without "done": polls since
    while len(done) < len(procs):
        try:
            msg = results.get(timeout=POLL_S)
        except queue_mod.Empty:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"the parallel job did not finish within its time limit "
                                   f"({len(files)} of {len(paths)} files done)") from None
            for wid, p in enumerate(procs):
                if wid in done or p.exitcode is None:
                    continue
                # its last reports may still be in the pipe: give them a few polls
                suspect[wid] = suspect.get(wid, 0) + 1
                if suspect[wid] >= 3:
                    raise RuntimeError(f"worker {wid} died (exit code {p.exitcode}) before "
                                       "finishing its files") from None
            continue
        kind = msg[0]
        if kind == "file":
            files.append(msg)
        elif kind == "done":
            done[msg[1]] = (msg[2], msg[3], msg[4])
        else:  # "error"
            _, _, i, text = msg
            raise RuntimeError(f"{paths[i]}: {text}")
    return files, done


def run_job(
    files: Sequence[str | os.PathLike[str]],
    tree_name: str,
    workers: int,
    branches: Sequence[str] | None = None,
    analysis: str | Analysis | None = None,
    cold: bool = True,
    max_files: int | None = None,
    timeout_s: float = 600,
    library: str = "ak",
    step_bytes: float = DEFAULT_STEP_BYTES,
) -> JobResult:
    """Run the job once on ``workers`` processes over ``files`` (the first ``max_files``).

    ``branches``: the branches to read (default: every readable leaf branch of each file);
    ``analysis``: a callable ``f(arrays)`` called on every chunk, or ``"module:function"``, or
    ``"path/to/file.py:function"``; ``library``: uproot's array library (``"ak"`` as the
    single-process event loop uses, or ``"np"``).  ``cold`` evicts every file first, otherwise
    every file is read once beforehand.  Raises ``ValueError`` (one line) for bad arguments, a
    missing tree or branch in the first file, or an analysis that cannot be resolved;
    ``RuntimeError`` (one line, naming the file) when a worker fails; ``TimeoutError`` after
    ``timeout_s``.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if library not in ("ak", "np"):
        raise ValueError(f"library must be 'ak' or 'np', not {library!r}")
    paths = [os.fspath(p) for p in files]
    if max_files is not None:
        paths = paths[:max(0, int(max_files))]
    if not paths:
        raise ValueError("no files to process")
    func, analysis_name = resolve_analysis(analysis)
    selected = tuple(branches) if branches else None
    n_branches = _resolve_branches(paths[0], tree_name, selected)

    evictions: tuple[Eviction, ...] = ()
    if cold:
        evictions = evict_all(paths)
        state: CacheState = cache_state(evictions)
        note = eviction_note(evictions)
    else:
        state, note = _warm_up(paths)

    ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    counter = ctx.Value("l", 0)
    barrier = ctx.Barrier(workers + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker,
                         args=(w, paths, tree_name, selected, library, step_bytes, func, counter,
                               barrier, results),
                         daemon=True, name=f"hep-advisor-job-{w}")
             for w in range(workers)]
    try:
        for p in procs:
            p.start()
        try:
            barrier.wait(timeout=START_TIMEOUT_S)
        except Exception:
            raise RuntimeError("the workers of the parallel job did not start") from None
        file_msgs, done = _collect(procs, results, paths, time.perf_counter() + timeout_s)
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
            if p.is_alive():  # pragma: no cover - a child that ignores SIGTERM
                p.kill()
                p.join(timeout=5)
        results.close()
        results.join_thread()

    start = min(t0 for t0, _, _ in done.values())
    end = max(t1 for _, t1, _ in done.values())
    wall = max(end - start, 1e-9)
    runs = sorted((FileRun(path=paths[i], worker=w, entries=n, compressed_bytes=z,
                           uncompressed_bytes=u, seconds=dt)
                   for _, w, i, n, z, u, dt in file_msgs), key=lambda r: r.path)
    per_worker = tuple(
        (sum(1 for r in runs if r.worker == w), sum(r.entries for r in runs if r.worker == w),
         done[w][2])
        for w in range(workers))
    entries = sum(r.entries for r in runs)
    zipped = sum(r.compressed_bytes for r in runs)
    return JobResult(
        workers=workers, files=len(runs), entries=entries, compressed_bytes=zipped,
        uncompressed_bytes=sum(r.uncompressed_bytes for r in runs), wall_s=wall,
        aggregate_mb_per_s=zipped / wall / 1e6, events_per_s=entries / wall, cache=state,
        per_worker=per_worker, branches=n_branches, per_file=tuple(runs), library=library,
        analysis=analysis_name, note=note)


def _combined_cache(states: Sequence[CacheState]) -> CacheState:
    if len(set(states)) == 1:
        return states[0]
    return "unknown" if "unknown" in states else "mixed"


def measure_job(
    files: Sequence[str | os.PathLike[str]],
    tree_name: str,
    workers: int,
    repeats: int = 3,
    **kw: Any,
) -> tuple[JobResult, Measurement]:
    """Run the job ``repeats`` times (keyword arguments as :func:`run_job`); the run with the
    median aggregate rate, and a :class:`Measurement` of the aggregate MB/s of every run."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    runs = [run_job(files, tree_name, workers, **kw) for _ in range(repeats)]
    ordered = sorted(runs, key=lambda r: r.aggregate_mb_per_s)
    median_run = ordered[(len(ordered) - 1) // 2]
    state = _combined_cache([r.cache for r in runs])
    notes = {r.note for r in runs if r.note}
    eps = statistics.median(r.events_per_s for r in runs)
    note = (f"{median_run.files} file(s), {median_run.entries} entries, {median_run.branches} "
            f"branches, library {median_run.library!r}"
            + (f", analysis {median_run.analysis}" if median_run.analysis else "")
            + f"; median {eps:,.0f} events/s; file opening timed")
    if notes:
        note += "; " + "; ".join(sorted(notes))
    m = measurement([r.aggregate_mb_per_s for r in runs], "MB/s",
                    Conditions(cache=state, workers=workers,
                               bytes_per_sample=median_run.compressed_bytes, note=note))
    return median_run, m
