"""Many machines: the site probe, a storage read test and the event loop on every worker of a
Dask cluster.

:func:`probe_cluster` takes a ``distributed.Client``, a scheduler address or ``local:N`` (a
``LocalCluster`` of N worker processes); it groups the workers into nodes (by host, or one per
worker for emulated clusters), runs the site probe on one worker of each node, then, one node
at a time so that nodes do not disturb each other, the calibration's cold sequential test
(:func:`hep_advisor.probes.readtests.raw.sequential_rate`) of one worker alone, all the node's
workers at once, and the event loop; finally the shared-storage test: every worker of every node
reading its own data at once, timed over a common window (a worker that ends early does not dilute
it).  Every task is pinned to its worker.  Nothing is judged here
(``hep_advisor.models.cluster_model`` does that).  ``distributed`` is imported only where needed
(the ``dask`` extra); the workers need ``hep-advisor`` installed.  MB = 10^6 bytes throughout.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .readtests.pagecache import evict_all
from .readtests.raw import (
    LARGE_REQUEST,
    WARMUP_S,
    FileSet,
    assign,
    cache_state,
    eviction_note,
    sequential_rate,
)
from .readtests.results import CacheState, Conditions, EventLoop, Measurement
from .readtests.runner import ProgressCallback, ProgressEvent, Session, measurement
from .results import SiteProfile
from .site import probe_site, storage_paths

GroupBy = Literal["host", "worker"]

#: Default seconds of one worker's cold sequential test, and of one sample of a concurrent test.
ALONE_S = 6.0
TOGETHER_S = 2.5
#: Seconds between handing out a concurrent test's tasks and the moment they all start reading.
START_LEAD_S = 1.0
#: Seconds a task may take beyond its own duration before it counts as hung.
TASK_SLACK_S = 60.0


class ClusterError(RuntimeError):
    """The cluster could not be reached, or has no workers, or cannot run the probes."""


@dataclass(frozen=True)
class WorkerInfo:
    """One Dask worker: address, name, host, threads, memory limit (the scheduler's)."""

    address: str
    name: str
    host: str
    threads: int | None = None
    memory_limit_bytes: int | None = None


@dataclass(frozen=True)
class NetworkInterface:
    """A network interface that is up (loopback left out); ``speed_mb_per_s`` is its link speed
    (Mbit/s / 8), ``None`` where the system does not say."""

    name: str
    speed_mb_per_s: float | None


@dataclass(frozen=True)
class NodeNetwork:
    """A node's network: its interfaces, and ``link_mb_per_s``, the fastest of them (the most
    one node can read from remote or shared storage; ``None`` where unknown)."""

    interfaces: tuple[NetworkInterface, ...]
    link_mb_per_s: float | None


@dataclass(frozen=True)
class WorkerRead:
    """One worker's cold sequential read of its files, alone on the cluster: ``mb_per_s`` is the
    median of the samples in ``measurement``; ``error`` says why there is none."""

    worker: str
    mb_per_s: float | None
    measurement: Measurement | None
    error: str | None = None


@dataclass(frozen=True)
class WorkerShare:
    """What one worker read in the common window of a concurrent test."""

    worker: str
    node: str
    mb_per_s: float | None
    bytes_read: int


@dataclass(frozen=True)
class ConcurrentRead:
    """Several workers reading at once, each its own data, cold: ``aggregate_mb_per_s`` is the
    median over samples of the bytes all of them read in the common window (from the last
    worker's start, plus a warm-up, to the first worker's end) divided by its length.
    ``per_worker`` holds the last sample's shares."""

    workers: int
    nodes: int
    aggregate_mb_per_s: float | None
    measurement: Measurement | None
    per_worker: tuple[WorkerShare, ...] = ()
    window_s: float | None = None
    bytes_read: int = 0
    error: str | None = None


@dataclass(frozen=True)
class NodeCalibration:
    """A node's storage read tests: each tested worker alone (``alone``; ``worker_mb_per_s``
    their median) and, with several workers, all of them at once (``together``)."""

    workers: int
    worker_mb_per_s: float | None
    alone: tuple[WorkerRead, ...]
    together: ConcurrentRead | None
    elapsed_s: float
    bytes_read: int = 0
    #: the event loop (uproot) on one of the node's workers, cold and warm; ``None``: not run
    event_loop: EventLoop | None = None


@dataclass(frozen=True)
class ClusterNode:
    """One node (a host, or one worker of an emulated cluster) with its workers, its site probe
    and network, and its read tests; ``errors``: what failed on it, one line each."""

    name: str
    workers: tuple[WorkerInfo, ...]
    site: SiteProfile | None
    network: NodeNetwork | None
    calibration: NodeCalibration | None
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterProfile:
    """The whole cluster: the scheduler's address, its nodes, and the shared-storage test (every
    worker reading at once).  ``group_by``: how workers were grouped into nodes."""

    scheduler: str
    group_by: GroupBy
    nodes: tuple[ClusterNode, ...]
    shared_storage: ConcurrentRead | None
    elapsed_s: float
    files: int = 0
    bytes_read: int = 0
    skipped: tuple[str, ...] = field(default=())

    @property
    def workers(self) -> int:
        return sum(len(n.workers) for n in self.nodes)


# ---------------------------------------------------------------------------------------------
# connecting


@contextlib.contextmanager
def connect(target: Any, *, threads_per_worker: int = 1) -> Iterator[Any]:
    """A ``distributed.Client`` for ``target``: a Client (used as is, left open), a scheduler
    address, or ``local:N`` (a ``LocalCluster`` of N worker processes with
    ``threads_per_worker`` threads each, closed on exit)."""
    if not isinstance(target, str):
        if not hasattr(target, "submit") or not hasattr(target, "scheduler_info"):
            raise ClusterError(f"not a Dask client or address: {target!r}")
        yield target
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ClusterError("Dask distributed is not installed: pip install "
                           "'hep-advisor[dask]'") from exc
    if target.startswith("local:"):
        try:
            n = int(target.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise ClusterError(f"local:N wants a number of workers >= 1, not {target!r}")
        with LocalCluster(n_workers=n, threads_per_worker=threads_per_worker, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(target, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {target}: {exc}") from exc
    with client:
        yield client


def list_workers(client: Any) -> list[WorkerInfo]:
    """The cluster's workers, sorted by host and name."""
    out = []
    for address, w in client.scheduler_info(n_workers=-1).get("workers", {}).items():
        mem = w.get("memory_limit")
        out.append(WorkerInfo(
            address=address, name=str(w.get("name", address)),
            host=str(w.get("host") or address), threads=w.get("nthreads"),
            memory_limit_bytes=int(mem) if mem else None))
    return sorted(out, key=lambda w: (w.host, _natural(w.name), w.address))


def _natural(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 62, name)


def group_nodes(workers: Sequence[WorkerInfo], group_by: GroupBy = "host"
                ) -> dict[str, list[WorkerInfo]]:
    """Workers by node: by host, or (``worker``) each worker its own node, named after it."""
    nodes: dict[str, list[WorkerInfo]] = {}
    for w in workers:
        key = w.host if group_by == "host" else f"{w.host}/{w.name}"
        nodes.setdefault(key, []).append(w)
    return nodes


# ---------------------------------------------------------------------------------------------
# what runs on the workers


def network_interfaces() -> NodeNetwork:
    """This machine's network interfaces that are up, loopback left out (psutil)."""
    import psutil

    out = []
    addrs = psutil.net_if_addrs()
    for name, st in sorted(psutil.net_if_stats().items()):
        if not st.isup or name.startswith("lo") or name not in addrs:
            continue
        speed = st.speed / 8.0 if st.speed and st.speed > 0 else None
        out.append(NetworkInterface(name, speed))
    speeds = [i.speed_mb_per_s for i in out if i.speed_mb_per_s]
    return NodeNetwork(tuple(out), max(speeds) if speeds else None)


def site_task(data_paths: Sequence[str]) -> tuple[SiteProfile, NodeNetwork]:
    """On a worker: the site probe of its machine (for ``data_paths``) and its network."""
    return probe_site(storage_paths(data_paths)), network_interfaces()


def sizes_task(paths: Sequence[str]) -> list[tuple[str, int]]:
    """On a worker: the files' sizes (the client may not see the workers' storage)."""
    return [(p, os.path.getsize(p)) for p in paths]


def alone_task(paths: Sequence[str], share_s: float) -> Measurement:
    """On a worker: the calibration's cold sequential test of ``paths`` for ``share_s``."""
    session = Session(budget_s=share_s, tests=[])
    return sequential_rate(session, FileSet.of(list(paths)), share_s, True, "cluster")


def event_loop_task(paths: Sequence[str], tree: str, branches: Sequence[str] | None,
                    analysis: str | None, share_s: float) -> EventLoop:
    """On a worker: the calibration's event loop (uproot; cold, then warm) for ``share_s``."""
    from .readtests.eventloop import measure_event_loop

    return measure_event_loop(Session(budget_s=share_s, tests=[]), list(paths), tree,
                              branches, analysis, share_s=share_s)


def concurrent_task(jobs: Sequence[tuple[str, int, int]], start_at: float, duration_s: float
                    ) -> dict[str, Any]:
    """On a worker: evict the files of ``jobs`` (path, offset, length), wait until the wall-clock
    time ``start_at``, then read the regions front to back with 1 MiB requests until
    ``start_at + duration_s``, going round again (each region evicted first) when they run out.
    Returns the eviction's cache state and note, and ``points``: (wall time, bytes so far) after
    each read, from the start."""
    evictions = evict_all(sorted({p for p, _, _ in jobs}))
    buf = bytearray(LARGE_REQUEST)
    view = memoryview(buf)
    fds = {p: os.open(p, os.O_RDONLY) for p in {p for p, _, _ in jobs}}
    points: list[tuple[float, int]] = []
    try:
        delay = start_at - time.time()
        if delay > 0:
            time.sleep(delay)
        end = start_at + duration_s
        total = 0
        points.append((time.time(), 0))
        first = True
        while time.time() < end and jobs:
            for path, offset, length in jobs:
                fd = fds[path]
                if not first:
                    os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)
                off, stop = offset, offset + length
                while off < stop and time.time() < end:
                    n = os.preadv(fd, [view[: min(LARGE_REQUEST, stop - off)]], off)
                    if n <= 0:
                        break
                    off += n
                    total += n
                    points.append((time.time(), total))
                if time.time() >= end:
                    break
            first = False
    finally:
        for fd in fds.values():
            os.close(fd)
    return {"points": points, "cache": cache_state(evictions), "note": eviction_note(evictions)}


def _bytes_at(points: Sequence[tuple[float, int]], t: float) -> float:
    """Cumulative bytes at time ``t``, interpolated between read completions."""
    if not points or t <= points[0][0]:
        return 0.0
    for (t0, b0), (t1, b1) in itertools.pairwise(points):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return float(points[-1][1])


def common_window(runs: Sequence[Sequence[tuple[float, int]]], warmup_s: float = WARMUP_S
                  ) -> tuple[float, float] | None:
    """(start, end) of the time every run was reading: from the last start (plus ``warmup_s``
    where the window stays long enough) to the first end; ``None`` if they did not overlap."""
    runs = [r for r in runs if len(r) >= 2]
    if not runs:
        return None
    start = max(r[0][0] for r in runs)
    end = min(r[-1][0] for r in runs)
    if end - start > 4 * warmup_s:
        start += warmup_s
    return (start, end) if end > start else None


def window_rates(runs: Sequence[Sequence[tuple[float, int]]], warmup_s: float = WARMUP_S
                 ) -> tuple[list[float], float] | None:
    """MB/s of each run within the common window, and the window's length (s)."""
    window = common_window(runs, warmup_s)
    if window is None:
        return None
    t0, t1 = window
    rates = [(_bytes_at(r, t1) - _bytes_at(r, t0)) / (t1 - t0) / 1e6 for r in runs]
    return rates, t1 - t0


# ---------------------------------------------------------------------------------------------
# running it


FilesArg = Sequence[str] | Mapping[str, Sequence[str]]


def _files_of(files: FilesArg, worker: WorkerInfo) -> list[str]:
    if isinstance(files, Mapping):
        got = files.get(worker.address, files.get(worker.name))
        return [str(p) for p in got] if got is not None else []
    return [str(p) for p in files]


def _pin(client: Any, fn: Callable[..., Any], worker: WorkerInfo, *args: Any) -> Any:
    return client.submit(fn, *args, workers=[worker.address], allow_other_workers=False,
                         pure=False)


def _results(client: Any, futures: list[Any], timeout_s: float) -> list[Any]:
    """The futures' results, or :class:`TimeoutError` (the tasks cancelled) after
    ``timeout_s``."""
    from distributed import TimeoutError as DaskTimeout  # asyncio's, before Python 3.11
    from distributed import wait

    try:
        wait(futures, timeout=timeout_s, return_when="ALL_COMPLETED")
    except (TimeoutError, DaskTimeout) as exc:
        client.cancel(futures)
        raise TimeoutError(f"tasks still running after {timeout_s:.0f} s") from exc
    return list(client.gather(futures))


def _error(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return (f"{exc} on the worker: hep-advisor must be installed where the Dask workers "
                "run")
    return f"{type(exc).__name__}: {exc}"


def _share_out(client: Any, workers: Sequence[WorkerInfo], files: FilesArg
               ) -> list[list[tuple[str, int, int]]]:
    """Each worker's reads (path, offset, length): its own files whole, or its share of the
    common ones (sizes taken on the workers)."""
    if isinstance(files, Mapping):
        jobs = []
        for w in workers:
            sized = _results(client, [_pin(client, sizes_task, w, _files_of(files, w))],
                             TASK_SLACK_S)[0]
            jobs.append([(p, 0, size) for p, size in sized])
        return jobs
    sized = _results(client, [_pin(client, sizes_task, workers[0], list(files))],
                     TASK_SLACK_S)[0]
    pairs = sorted(((size, p) for p, size in sized), reverse=True)
    fs = FileSet([p for _, p in pairs], [size for size, _ in pairs])
    shared = assign(fs, len(workers), max(LARGE_REQUEST, fs.total // max(1, len(workers))))
    return shared + [[] for _ in range(len(workers) - len(shared))]


def concurrent_read(client: Any, workers: Sequence[WorkerInfo], files: FilesArg,
                    node_of: Mapping[str, str], *, sample_s: float = TOGETHER_S,
                    samples: int = 2, lead_s: float = START_LEAD_S,
                    before_sample: Callable[[], None] | None = None) -> ConcurrentRead:
    """``workers`` reading at once, each its own data: with one list of ``files`` for all, the
    files (or regions of them) are shared out (:func:`hep_advisor.probes.readtests.raw.assign`);
    with a mapping, each worker reads its own.  ``samples`` samples of ``sample_s`` seconds each;
    ``before_sample`` is called before each (a test bench resets its throttle there)."""
    n_nodes = len({node_of[w.address] for w in workers})
    try:
        jobs = _share_out(client, workers, files)
    except Exception as exc:
        return ConcurrentRead(len(workers), n_nodes, None, None, error=_error(exc))
    if any(not j for j in jobs):
        return ConcurrentRead(len(workers), n_nodes, None, None,
                              error="not enough data to give every worker its own")
    values: list[float] = []
    per_worker: tuple[WorkerShare, ...] = ()
    window_s: float | None = None
    total_bytes = 0
    cache: CacheState = "cold"
    notes: list[str] = []
    for _ in range(samples):
        if before_sample is not None:
            before_sample()
        start_at = time.time() + lead_s
        futures = [_pin(client, concurrent_task, w, j, start_at, sample_s)
                   for w, j in zip(workers, jobs, strict=True)]
        try:
            results = _results(client, futures, lead_s + sample_s + TASK_SLACK_S)
        except Exception as exc:
            return ConcurrentRead(len(workers), n_nodes, None, None, error=_error(exc))
        runs = [r["points"] for r in results]
        total_bytes += sum(r[-1][1] for r in runs if r)
        for r in results:
            if r["cache"] != "cold":
                cache = r["cache"]
            if r["note"]:
                notes.append(r["note"])
        got = window_rates(runs)
        if got is None:
            continue
        rates, window_s = got
        values.append(sum(rates))
        per_worker = tuple(
            WorkerShare(w.address, node_of[w.address], rate, run[-1][1])
            for w, rate, run in zip(workers, rates, runs, strict=True))
    m = measurement(values, "MB/s", Conditions(
        cache=cache, workers=len(workers), request_bytes=LARGE_REQUEST, pattern="sequential",
        bytes_per_sample=total_bytes // max(1, samples), note=notes[0] if notes else None))
    return ConcurrentRead(len(workers), n_nodes, m.median, m, per_worker, window_s, total_bytes,
                          None if values else "the workers' reads did not overlap")


def probe_cluster(
    target: Any,
    files: FilesArg,
    *,
    group_by: GroupBy = "host",
    alone_s: float = ALONE_S,
    together_s: float = TOGETHER_S,
    samples: int = 2,
    workers_alone: Literal["one", "all"] = "one",
    shared: bool = True,
    data_paths: Sequence[str] | None = None,
    progress: ProgressCallback | None = None,
    before_read: Callable[[], None] | None = None,
    tree: str | None = None,
    branches: Sequence[str] | None = None,
    analysis: str | None = None,
    event_loop_s: float = ALONE_S,
    cancel: Callable[[], bool] | None = None,
) -> ClusterProfile:
    """Probe every node of the cluster ``target`` (a Client, an address or ``local:N``), and its
    storage with ``files`` (one list that every worker sees, or worker address or name -> its
    own list).

    ``alone_s``: seconds of each worker's test alone; ``workers_alone``: test ``one`` worker of
    each node alone or ``all`` of them (one at a time); ``together_s``/``samples``: the
    concurrent tests (a node's workers together, then, with ``shared``, every worker).
    ``data_paths``: what the site probe describes (default: the files' directories).
    ``before_read``: called before every read test (a test bench resets its throttle there).
    ``tree`` (``branches``, ``analysis``): the event loop on one worker per node for
    ``event_loop_s``.  The shared test runs with several nodes only (with one it is the node's
    test).  ``cancel()`` true: the remaining tests are skipped (listed in ``skipped``)."""
    t_start = time.perf_counter()

    def report(fraction: float, message: str, figure: str | None = None) -> None:
        if progress is not None:
            progress(ProgressEvent("cluster", min(max(fraction, 0.0), 1.0), message, figure))

    def cancelled() -> bool:
        return cancel is not None and cancel()

    with connect(target) as client:
        scheduler = str(getattr(getattr(client, "scheduler", None), "address", "") or target)
        workers = list_workers(client)
        if not workers:
            raise ClusterError(f"the Dask cluster at {scheduler} has no workers")
        grouped = group_nodes(workers, group_by)
        node_of = {w.address: name for name, ws in grouped.items() for w in ws}
        nodes: list[ClusterNode] = []
        n_steps = len(grouped) + (1 if shared and len(grouped) > 1 else 0)
        all_files: set[str] = set()
        for w in workers:
            all_files.update(_files_of(files, w))
        bytes_read = 0
        skipped: list[str] = []
        for i, (name, ws) in enumerate(grouped.items()):
            if cancelled():
                skipped.append(f"node {name}: cancelled")
                continue
            errors: list[str] = []
            own = sorted({p for w in ws for p in _files_of(files, w)})
            paths = list(data_paths) if data_paths is not None else sorted(
                {os.path.dirname(p) for p in own})
            report(i / n_steps, f"node {name}: site probe")
            site = network = None
            try:
                site, network = _results(client, [_pin(client, site_task, ws[0], paths)],
                                         TASK_SLACK_S)[0]
            except Exception as exc:
                errors.append(f"site probe: {_error(exc)}")
            t_node = time.perf_counter()
            node_bytes = 0
            alone: list[WorkerRead] = []
            for w in ws if workers_alone == "all" else ws[:1]:
                mine = _files_of(files, w)
                if not mine:
                    alone.append(WorkerRead(w.address, None, None, "no files for this worker"))
                    continue
                if before_read is not None:
                    before_read()
                report((i + 0.3) / n_steps, f"node {name}: {w.name} alone")
                try:
                    m = _results(client, [_pin(client, alone_task, w, mine, alone_s)],
                                 2 * alone_s + TASK_SLACK_S)[0]
                    alone.append(WorkerRead(w.address, m.median, m))
                    # about (the test sizes its samples; the last one's size times their count)
                    node_bytes += len(m.samples) * (m.conditions.bytes_per_sample or 0)
                except Exception as exc:
                    alone.append(WorkerRead(w.address, None, None, _error(exc)))
                    errors.append(f"read test on {w.name}: {_error(exc)}")
            together = None
            if len(ws) > 1:
                report((i + 0.6) / n_steps, f"node {name}: {len(ws)} workers together")
                together = concurrent_read(client, ws, files, node_of, sample_s=together_s,
                                           samples=samples, before_sample=before_read)
                node_bytes += together.bytes_read
                if together.error:
                    errors.append(f"workers together: {together.error}")
            loop = None
            if tree is not None and own and not cancelled():
                report((i + 0.8) / n_steps, f"node {name}: event loop on {ws[0].name}")
                if before_read is not None:
                    before_read()
                try:
                    loop = _results(client, [_pin(client, event_loop_task, ws[0],
                                                  _files_of(files, ws[0]) or own, tree,
                                                  branches, analysis, event_loop_s)],
                                    2 * event_loop_s + TASK_SLACK_S)[0]
                except Exception as exc:
                    errors.append(f"event loop on {ws[0].name}: {_error(exc)}")
            rates = sorted(a.mb_per_s for a in alone if a.mb_per_s is not None)
            worker_rate = rates[len(rates) // 2] if rates else None
            calib = NodeCalibration(len(ws), worker_rate, tuple(alone), together,
                                    time.perf_counter() - t_node, node_bytes, loop)
            bytes_read += node_bytes
            nodes.append(ClusterNode(name, tuple(ws), site, network, calib, tuple(errors)))
            report((i + 1) / n_steps, f"node {name}",
                   f"{worker_rate:,.0f} MB/s per worker" if worker_rate else None)
        shared_read = None
        if shared and cancelled():
            skipped.append("shared storage: cancelled")
        elif shared and len(grouped) > 1:
            report(len(grouped) / n_steps, f"shared storage: {len(workers)} workers at once")
            shared_read = concurrent_read(client, workers, files, node_of, sample_s=together_s,
                                          samples=samples, before_sample=before_read)
            bytes_read += shared_read.bytes_read
            report(1.0, "shared storage", f"{shared_read.aggregate_mb_per_s:,.0f} MB/s"
                   if shared_read.aggregate_mb_per_s else None)
        elif shared:
            skipped.append("shared storage: one node only (its workers together are the "
                           "same test)")
    return ClusterProfile(scheduler=scheduler, group_by=group_by, nodes=tuple(nodes),
                          shared_storage=shared_read, elapsed_s=time.perf_counter() - t_start,
                          files=len(all_files), bytes_read=bytes_read, skipped=tuple(skipped))
