"""A parallel analysis-like job: N worker processes reading the dataset's files with uproot.

This is the *measure* side of the model's validation: the aggregate throughput of a real job,
in the configuration the model predicts (workers, files, branches, cold or warm cache).  It does
what a PROOF-Lite job, or N uproot processes fed from one list, do:

* N processes (``fork`` where available, as the concurrency sweep does) start, wait at a
  barrier, and then pull the next file from a shared counter when they are done with the
  previous one (pull-based load balancing: a slow file does not hold back the others); with
  ``packet_entries`` they pull packets of entries (cluster-aligned ranges of a file) instead,
  as PROOF's packetizer does, so that one large merged file can keep N workers busy;
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

import itertools
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .eventloop import DEFAULT_STEP_BYTES, Analysis, resolve_analysis
from .pagecache import Eviction, evict_all, resident_fraction
from .procs import end_processes, start_processes
from .raw import LARGE_REQUEST, cache_state, eviction_note, read_sequential
from .readplan import leaf_branches
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
    """One unit of work as one worker processed it: a whole file, or a packet of its entries
    (``entry_start`` to ``entry_stop``) when the job splits files."""

    path: str
    worker: int
    entries: int
    compressed_bytes: int  # of the selected branches (fZipBytes), pro rata for a packet
    uncompressed_bytes: int  # fTotBytes
    seconds: float  # opening (when the file was not open yet), reading, analysis, closing
    entry_start: int = 0
    entry_stop: int = 0
    #: its place in its worker's sequence: 0 for the first unit the worker took
    order: int = 0
    #: the part of ``seconds`` spent opening the file (0 where the worker had it open)
    open_s: float = 0.0


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
    #: (units, entries, busy_s) per worker; units are files, or packets with ``packet_entries``
    per_worker: tuple[tuple[int, int, float], ...]
    branches: int = 0  # selected branches (of the first file, when all are read)
    per_file: tuple[FileRun, ...] = ()  # per unit, sorted by file and entry
    units: int = 0  # files, or packets with ``packet_entries``
    packet_entries: int | None = None
    library: str = "ak"
    analysis: str | None = None
    note: str | None = None

    @property
    def uncompressed_mb_per_s(self) -> float:
        return self.uncompressed_bytes / self.wall_s / 1e6 if self.wall_s > 0 else 0.0


# -- the worker ----------------------------------------------------------------------------------
def _length(arrays: Any) -> int:
    """Entries in one chunk: an awkward record array, or numpy's dict of arrays."""
    if isinstance(arrays, dict):
        return len(next(iter(arrays.values()))) if arrays else 0
    return len(arrays)


class _Open:
    """The file a worker has open, with what it needs to read ranges of its tree; kept open
    while the worker's next unit is in the same file (as a PROOF worker does)."""

    def __init__(self, path: str, tree_name: str, branches: Sequence[str] | None,
                 step_bytes: float) -> None:
        import uproot

        self.path = path
        self.file = uproot.open(path)
        try:
            if tree_name not in self.file:
                raise ValueError(f"no tree {tree_name!r}")
            self.tree = self.file[tree_name]
            tree = self.tree
            self.selected = list(branches) if branches is not None else leaf_branches(tree)
            missing = [b for b in self.selected if b not in tree]
            if missing:
                shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
                raise ValueError(f"no branch {shown} in tree {tree_name!r}")
            self.zipped = sum(int(tree[b].member("fZipBytes")) for b in self.selected)
            self.unzipped = sum(int(tree[b].member("fTotBytes")) for b in self.selected)
            self.entries = max(int(tree.num_entries), 0)
            per_entry = self.unzipped / self.entries if self.entries > 0 else 1.0
            self.step = max(1, int(step_bytes / max(per_entry, 1.0)))
        except BaseException:
            self.file.close()
            raise

    def close(self) -> None:
        self.file.close()

    def read(self, start: int | None, stop: int | None, library: str,
             analysis: Analysis | None) -> tuple[int, int, int, int, int]:
        """Read entries [start, stop) (the whole tree for ``None``) chunk by chunk, calling
        ``analysis`` on each chunk; (start, stop, entries, fZipBytes, fTotBytes) of the selected
        branches, the bytes in proportion to the entries for a part of the tree."""
        n = self.entries
        a = 0 if start is None else min(max(start, 0), n)
        b = n if stop is None else min(max(stop, a), n)
        read = 0
        if b > a and self.selected:
            for arrays in self.tree.iterate(self.selected, step_size=self.step, entry_start=a,
                                            entry_stop=b, library=library):
                if analysis is not None:
                    try:
                        analysis(arrays)
                    except Exception as exc:
                        from ..rootfile import one_line

                        name = getattr(analysis, "__qualname__", None) or repr(analysis)
                        raise RuntimeError(f"the analysis {name} raised "
                                           f"{type(exc).__name__}: {one_line(exc)}") from None
                read += _length(arrays)
                del arrays
        else:
            read = b - a
        if n == 0:
            return a, b, 0, self.zipped, self.unzipped
        # the shares of consecutive ranges add up exactly to the file's bytes
        return (a, b, read, self.zipped * b // n - self.zipped * a // n,
                self.unzipped * b // n - self.unzipped * a // n)


Unit = tuple[int, int | None, int | None]  # (file index, entry start, entry stop)


def _worker(wid: int, paths: Sequence[str], units: Sequence[Unit], tree_name: str,
            branches: Sequence[str] | None, library: str, step_bytes: float,
            analysis: Analysis | None, counter: Any, barrier: Any, results: Any) -> None:
    """Child process: after the barrier, take the next unit (a file, or a packet of entries of
    one) until none is left; report ("unit", ...) per unit, ("error", ...) on failure,
    ("done", ...) at the end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    barrier.wait(timeout=START_TIMEOUT_S)
    t0 = time.perf_counter()
    busy = 0.0
    current: _Open | None = None
    try:
        while True:
            with counter.get_lock():
                k = counter.value
                counter.value = k + 1
            if k >= len(units):
                break
            i, start, stop = units[k]
            s0 = time.perf_counter()
            opened = 0.0
            try:
                if current is None or current.path != paths[i]:
                    if current is not None:
                        current.close()
                        current = None
                    current = _Open(paths[i], tree_name, branches, step_bytes)
                    opened = time.perf_counter() - s0
                a, b, entries, zipped, unzipped = current.read(start, stop, library, analysis)
                if stop is None or b >= current.entries:  # the file's last unit
                    current.close()
                    current = None
            except BaseException as exc:
                from ..rootfile import one_line

                msg = one_line(exc)
                if not isinstance(exc, RuntimeError) or not msg.startswith("the analysis "):
                    msg = f"{type(exc).__name__}: {msg}"
                results.put(("error", wid, i, msg))
                return
            dt = time.perf_counter() - s0
            busy += dt
            results.put(("unit", wid, i, a, b, entries, zipped, unzipped, dt, opened))
    finally:
        if current is not None:
            current.close()
    results.put(("done", wid, t0, time.perf_counter(), busy))


# -- the parent ----------------------------------------------------------------------------------
def _prepare(path: str, tree_name: str, branches: Sequence[str] | None, library: str) -> int:
    """The number of selected branches in the first file; ``ValueError`` (one line) when the
    tree or a requested branch is missing there.  Reads a few entries, so that the one-time
    costs of the readers (lazy imports, kernels) are paid here, before the workers fork,
    as the single-process event loop's warm-up does; the files are evicted afterwards."""
    import uproot

    with uproot.open(path) as f:
        if tree_name not in f:
            raise ValueError(f"no tree {tree_name!r} in {path}")
        tree = f[tree_name]
        selected = list(branches) if branches is not None else leaf_branches(tree)
        missing = [b for b in selected if b not in tree]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise ValueError(f"no branch {shown} in tree {tree_name!r} of {path}")
        if selected and int(tree.num_entries) > 0:
            try:
                tree.arrays(selected, entry_stop=min(10, int(tree.num_entries)), library=library)
            except Exception as exc:
                from ..rootfile import one_line

                raise ValueError(f"cannot read tree {tree_name!r} of {path}: "
                                 f"{one_line(exc)}") from None
        return len(selected)


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


def _collect(procs: list[Any], results: Any, paths: Sequence[str], n_units: int,
             deadline: float
             ) -> tuple[list[tuple[Any, ...]], dict[int, tuple[float, float, float]]]:
    """The children's reports, until every child said it is done.  Raises ``RuntimeError``
    (one line) for an error in a child, a child that died, or the deadline."""
    units: list[tuple[Any, ...]] = []
    done: dict[int, tuple[float, float, float]] = {}
    suspect: dict[int, int] = {}  # child that exited without "done": polls since
    while len(done) < len(procs):
        try:
            msg = results.get(timeout=POLL_S)
        except queue_mod.Empty:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"the parallel job did not finish within its time limit "
                                   f"({len(units)} of {n_units} units done)") from None
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
        if kind == "unit":
            units.append(msg)
        elif kind == "done":
            done[msg[1]] = (msg[2], msg[3], msg[4])
        else:  # "error"
            _, _, i, text = msg
            raise RuntimeError(f"{paths[i]}: {text}")
    return units, done


def _units(paths: Sequence[str], tree_name: str, packet_entries: int | None,
           entry_stop: int | None = None) -> list[Unit]:
    """The job's units of work: whole files, or packets of about ``packet_entries`` entries
    whose boundaries fall on cluster (common basket) boundaries where the tree has them, so
    that no basket is read by two workers; with ``entry_stop``, packets of each file's
    entries before it only.  A file that cannot be opened here stays one unit (its worker
    then reports the failure)."""
    if packet_entries is None:
        return [(i, None, None) for i in range(len(paths))]
    import uproot

    out: list[Unit] = []
    for i, path in enumerate(paths):
        try:
            with uproot.open(path) as f:
                tree = f[tree_name]
                n = int(tree.num_entries)
                if entry_stop is not None:
                    n = min(n, max(int(entry_stop), 1))
                try:
                    offsets = [int(x) for x in tree.common_entry_offsets()]
                except Exception:
                    offsets = [*range(0, n, packet_entries), n]
        except Exception:
            out.append((i, None, None))
            continue
        bounds = [0]
        for off in offsets:
            if off - bounds[-1] >= packet_entries and off < n:
                bounds.append(off)
        bounds.append(n)
        out.extend((i, a, b) for a, b in itertools.pairwise(bounds) if b > a)
        if n <= 0:
            out.append((i, None, None))
    return out


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
    packet_entries: int | None = None,
    entry_stop: int | None = None,
) -> JobResult:
    """Run the job once on ``workers`` processes over ``files`` (the first ``max_files``).

    ``branches``: the branches to read (default: every readable leaf branch of each file);
    ``analysis``: a callable ``f(arrays)`` called on every chunk, or ``"module:function"``, or
    ``"path/to/file.py:function"``; ``library``: uproot's array library (``"ak"`` as the
    single-process event loop uses, or ``"np"``).  ``cold`` evicts every file first, otherwise
    every file is read once beforehand.  The workers pull whole files; with ``packet_entries``
    they pull packets of about that many entries (on cluster boundaries) instead, as PROOF's
    packetizer hands out parts of files, so that a few large files keep N workers busy (a
    worker keeps its file open while its next packet is in the same file).  ``entry_stop``
    (with ``packet_entries``): the packets cover each file's entries before it only (a
    short test's part of a large file).

    Raises ``ValueError`` (one line) for bad arguments, a missing tree or branch in (or an
    unreadable) first file, or an analysis that cannot be resolved; ``RuntimeError`` (one line,
    naming the file) when a worker fails; ``TimeoutError`` after ``timeout_s``.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if packet_entries is not None and packet_entries < 1:
        raise ValueError(f"packet_entries must be at least 1, not {packet_entries}")
    if entry_stop is not None and packet_entries is None:
        raise ValueError("entry_stop needs packet_entries (whole files are read whole)")
    if library not in ("ak", "np"):
        raise ValueError(f"library must be 'ak' or 'np', not {library!r}")
    paths = [os.fspath(p) for p in files]
    if max_files is not None:
        paths = paths[:max(0, int(max_files))]
    if not paths:
        raise ValueError("no files to process")
    func, analysis_name = resolve_analysis(analysis)
    selected = tuple(branches) if branches else None
    n_branches = _prepare(paths[0], tree_name, selected, library)
    units = _units(paths, tree_name, packet_entries, entry_stop)

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
                         args=(w, paths, units, tree_name, selected, library, step_bytes, func,
                               counter, barrier, results),
                         daemon=True, name=f"hep-advisor-job-{w}")
             for w in range(workers)]
    try:
        start_processes(procs)
        try:
            barrier.wait(timeout=START_TIMEOUT_S)
        except Exception:
            raise RuntimeError("the workers of the parallel job did not start") from None
        unit_msgs, done = _collect(procs, results, paths, len(units),
                                   time.perf_counter() + timeout_s)
        for p in procs:
            p.join(timeout=10)
    finally:
        end_processes(procs)
        results.close()
        results.join_thread()

    start = min(t0 for t0, _, _ in done.values())
    end = max(t1 for _, t1, _ in done.values())
    wall = max(end - start, 1e-9)
    # each worker's reports arrive in the order it took its units (one queue per job)
    taken: dict[int, int] = {}
    ordered = []
    for _, w, i, a, b, n, z, u, dt, opened in unit_msgs:
        ordered.append(FileRun(path=paths[i], worker=w, entries=n, compressed_bytes=z,
                               uncompressed_bytes=u, seconds=dt, entry_start=a, entry_stop=b,
                               order=taken.get(w, 0), open_s=opened))
        taken[w] = taken.get(w, 0) + 1
    runs = sorted(ordered, key=lambda r: (r.path, r.entry_start))
    per_worker = tuple(
        (sum(1 for r in runs if r.worker == w), sum(r.entries for r in runs if r.worker == w),
         done[w][2])
        for w in range(workers))
    entries = sum(r.entries for r in runs)
    zipped = sum(r.compressed_bytes for r in runs)
    return JobResult(
        workers=workers, files=len({r.path for r in runs}), entries=entries,
        compressed_bytes=zipped,
        uncompressed_bytes=sum(r.uncompressed_bytes for r in runs), wall_s=wall,
        aggregate_mb_per_s=zipped / wall / 1e6, events_per_s=entries / wall, cache=state,
        per_worker=per_worker, branches=n_branches, per_file=tuple(runs), library=library,
        analysis=analysis_name, note=note, units=len(runs), packet_entries=packet_entries)


def unit_pace(result: JobResult, like: JobResult | None = None
              ) -> tuple[float | None, float | None]:
    """Seconds per compressed MB of the workers' first units and of their later units
    (``FileRun.order``), each over the units' MB (``None`` where there is no such unit).
    ``like``: another run of the same units (by file and entries), and only the units it read
    at the same place count (first against first, later against later): where the units are
    uneven, the k workers' first units include small ones that the single worker read after
    its first, whose once-only costs weigh on fewer MB (fatjets, a 10,000- and a 2,000-entry
    cluster: an efficiency of 0.52 by all first units, where jobs scaled 1.98x).  Packets'
    paces leave their files' opening out (``FileRun.open_s``): a worker opens a file for its
    first packet of it, so k workers open each file up to k times, and one worker once; on
    2 files of fatjets in 4 packets, two workers' later packets each opened a file where the
    single worker's opened one of two, and their paces read as 0.89x the single worker's
    where the jobs scaled 1.77x.  Whole files each open once, alike in any run: kept in."""
    net = result.packet_entries is not None

    def key(r: FileRun) -> tuple[str, int, int]:
        return (r.path, r.entry_start, r.entry_stop)

    firsts = {key(r) for r in like.per_file if r.order == 0} if like is not None else None
    laters = {key(r) for r in like.per_file if r.order > 0} if like is not None else None

    def pace(units: list[FileRun]) -> float | None:
        mb = sum(r.compressed_bytes for r in units) / 1e6
        s = sum(r.seconds - (r.open_s if net else 0.0) for r in units)
        return s / mb if units and mb > 0 and s > 0 else None

    return (pace([r for r in result.per_file
                  if r.order == 0 and (firsts is None or key(r) in firsts)]),
            pace([r for r in result.per_file
                  if r.order > 0 and (laters is None or key(r) in laters)]))


def over_cores(k_run: JobResult, over: JobResult) -> float | None:
    """The rate of ``over`` (a run by more workers than the logical cores) over ``k_run``'s (a
    run by as many workers as them), over the same units: from the paces of the first units
    both read first (:func:`unit_pace`, like against like) times the ratio of their busy
    workers.  Only first units compare: they run side by side, all of ``over``'s workers busy,
    while its later units run as the others finish (6 units on 4 workers: the two later ones
    ran 2 at a time, at the cores' full rate, and read as 2.4x over 2 workers where the runs'
    rates said 0.94x).  The runs' rates where no pace compares (``None`` where a rate is
    missing)."""
    def busy(r: JobResult) -> int:
        return min(r.workers, r.units) if r.units > 0 else r.workers

    k_first, _ = unit_pace(k_run, like=over)
    o_first, _ = unit_pace(over, like=k_run)
    if k_first and o_first and k_first > 0 and o_first > 0:
        return busy(over) / busy(k_run) * k_first / o_first
    if k_run.aggregate_mb_per_s > 0 and over.aggregate_mb_per_s > 0:
        return over.aggregate_mb_per_s / k_run.aggregate_mb_per_s
    return None


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
