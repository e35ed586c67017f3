"""Read tests for remote data (``root://``, ``http(s)://``): the link between here and the files.

In order, each scaled to the time it has (:func:`measure_link`):

- open cost: the file opened again and again on an established connection (the first open
  also connects and logs in);
- round trip: protocol pings (XRootD ``kXR_ping``; HTTP: a 1-byte range GET, which includes the
  server's handling) and 1-byte reads of the file (what a reader's smallest request sees);
- bandwidth, one stream: about ``TRANSFER_S`` seconds of data at a first estimate, timed from
  the first data to the last (XRootD: reads pipelined on the one connection; HTTP: one
  streamed range GET), so that the round trip and the server's start do not count;
- vector reads: ``VECTOR_CHUNKS`` ranges in one call (XRootD ``kXR_readv``; HTTP multi-range
  GET) against one call per range;
- parallel streams: 1, 2, 4 reads at once, each on its own file handle and connection (as
  separate processes would read): bytes / (time - one round trip);
- the request-size sweep: reads of 4 KiB to 4 MiB one at a time, fitted to
  seconds = latency + bytes / bandwidth (a cross-check of the two figures above).

In a calibration the reader's CPU and client tests follow on the same budget: the time they
need at least is kept for them, and the sweep, then the streams (4, then 2) are left out where
they do not fit beside it, each listed as skipped.

Nothing is written anywhere; the data is only read.  Figures are remote (see
:mod:`.remote_results`): no cold or warm claim is made about the server's storage.
:func:`calibrate_remote` is the calibration of a remote dataset (the local storage tests do not
apply to URLs and are listed as skipped).
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ..remote_files import (
    HTTPClient,
    RemoteError,
    XRootDClient,
    client_for,
    probe_remote,
    scheme_of,
)
from .remote_results import (
    RemoteCalibration,
    RemoteReaderCpu,
    RemoteRequestPoint,
    RemoteSamples,
    StreamsPoint,
    VectorReads,
)
from .runner import Cancelled, spread

if TYPE_CHECKING:
    from ..results import DatasetProfile
    from .results import Calibration
    from .runner import ProgressCallback

#: seconds one bandwidth transfer aims at
TRANSFER_S = 1.0
MAX_TRANSFER = 256 * 1024 * 1024
SWEEP_SIZES = (4096, 65536, 1 << 20, 4 << 20)
STREAMS = (1, 2, 4)
VECTOR_CHUNKS = 64
VECTOR_CHUNK_BYTES = 4096
#: the bandwidth test's reads (XRootD): this size, this many in flight
CHUNK = 4 << 20
PIPELINE = 4
TEST_NAME = "remote"
#: the reader's CPU on one file fetched whole (``Skipped.test`` where it could not run)
CPU_TEST = "remote reader CPU"
#: the share of what is left of the budget a step plans on (the rest: the hard stop's slack)
SAFETY = 0.95
#: planning figures for the reader's tests (what they need at least; shown nowhere): round
#: trips of an open through the reader's client, a local pass over the fetched file, and the
#: start of a process that loads ROOT (ROOT 6.40 on the test bench: 1.5-2.5 s)
OPEN_ROUND_TRIPS = 10
LOCAL_PASS_S = 0.2
ROOT_START_S = 2.0
#: files whose sizes are looked at when picking the one for the CPU test
CPU_CANDIDATES = 16


class _Clock:
    """Deadline, cancel flag and progress for one run of the remote tests."""

    def __init__(self, budget_s: float, cancel: threading.Event | None,
                 progress: Callable[[float, str], None] | None) -> None:
        self.t0 = time.perf_counter()
        self.budget_s = budget_s
        self.cancel = cancel
        self.progress = progress
        self.bytes = 0

    def left(self) -> float:
        return self.budget_s - (time.perf_counter() - self.t0)

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    def report(self, fraction: float, message: str) -> None:
        if self.progress is not None:
            self.progress(fraction, message)


def _samples(values: Sequence[float], unit: str, note: str = "") -> RemoteSamples:
    vals = tuple(float(v) for v in values)
    return RemoteSamples(unit, vals, statistics.median(vals) if vals else None,
                         spread(list(vals)), note)


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _offsets(size: int, request: int, n: int) -> list[int]:
    """``n`` offsets spread over the file for reads of ``request`` bytes (never past its end)."""
    top = max(0, size - request)
    return [int(top * (i + 0.5) / n) for i in range(n)]


def measure_link(url: str, budget_s: float = 30.0, *, cancel: threading.Event | None = None,
                 progress: Callable[[float, str], None] | None = None,
                 streams: Sequence[int] = STREAMS,
                 reserve: Callable[[float, float | None], float] | None = None,
                 skipped: list[tuple[str, str]] | None = None) -> RemoteCalibration:
    """The link to ``url`` within about ``budget_s`` seconds (see the module's doc).  Raises
    :class:`~hep_advisor.probes.remote_files.RemoteError` (one line) when the file cannot be opened
    or read.

    ``reserve(rtt_s, MB/s)``: seconds of ``budget_s`` that later tests need, known once the
    round trip and bandwidth are measured; the least informative steps (the request-size
    sweep, a cross-check, first; then the parallel streams, largest first) are left out when
    they do not fit beside it, each with a line in ``skipped`` (step, why)."""
    clock = _Clock(budget_s, cancel, progress)
    dropped = skipped if skipped is not None else []
    probe = probe_remote(url, opens=5)
    size = probe.size_bytes
    if size <= 0:
        raise RemoteError("empty file: nothing to read through the link")
    client = client_for(url)
    client.open()
    try:
        clock.report(0.05, "round trip")
        rtt_s = _rtt(client, clock)
        rtt_med = statistics.median(rtt_s)
        lat = [_timed(lambda: client.read(0, 1)) for _ in range(5 if rtt_med < 0.05 else 3)]
        clock.check()
        clock.report(0.2, "bandwidth, one stream")
        bw_samples = _bandwidth(client, size, rtt_med, clock, reserve)
        bw = statistics.median(bw_samples) if bw_samples else None
        keep = reserve(rtt_med, bw) if reserve is not None else 0.0
        clock.report(0.45, "vector reads")
        vec = _vector(client, size, rtt_med, bw, clock)
        # what is left beside the reserve goes to the streams first, then the sweep
        free = clock.left() - keep
        want = [k for k in streams if _streams_cost(k, size, bw, rtt_med) <= free - sum(
            _streams_cost(j, size, bw, rtt_med) for j in streams if j < k)]
        if bw and len(want) < len(streams):
            left_out = [str(k) for k in streams if k not in want]
            dropped.append((f"{TEST_NAME}: parallel streams ({', '.join(left_out)})",
                            f"{max(free, 0):.1f} s of the budget left beside the reader's tests "
                            "(give a larger --budget)"))
        clock.report(0.6, "parallel streams")
        par = _streams(url, size, bw, rtt_med, want, clock)
        if clock.left() - keep >= _sweep_cost(size, bw, rtt_med):
            clock.report(0.85, "request sizes")
            sweep = _sweep(client, size, clock)
        else:
            sweep = []
            dropped.append((f"{TEST_NAME}: request-size sweep",
                            f"{max(clock.left() - keep, 0):.1f} s of the budget left beside "
                            "the reader's tests; a cross-check of the round trip and bandwidth, "
                            "left out first (give a larger --budget)"))
        fit_lat, fit_bw = _fit(sweep)
    finally:
        client.close()
    clock.report(1.0, "done")
    return RemoteCalibration(
        url=url, scheme=probe.scheme, server=probe.server,
        rtt_ms=rtt_med * 1e3,
        bandwidth_mb_per_s=bw,
        parallel_streams=tuple(par),
        vector_reads=vec,
        open_s=probe.open_s, first_open_s=probe.first_open_s,
        request_sweep=tuple(sweep),
        fit_latency_ms=fit_lat * 1e3 if fit_lat is not None else None,
        fit_bandwidth_mb_per_s=fit_bw,
        rtt=_samples([s * 1e3 for s in rtt_s], "ms",
                     "XRootD kXR_ping" if probe.scheme == "root"
                     else "1-byte range GET, to its first byte"),
        bandwidth=_samples(bw_samples, "MB/s", "one stream, first data to last"),
        read_latency_ms=statistics.median(lat) * 1e3,
        bytes_moved=clock.bytes,
    )


def _rtt(client: XRootDClient | HTTPClient, clock: _Clock) -> list[float]:
    client.ping()  # warm-up
    one = client.timed_ping if isinstance(client, HTTPClient) else (lambda: _timed(client.ping))
    out = []
    for _ in range(30):
        clock.check()
        out.append(one())
        if len(out) >= 10 and (sum(out) > 0.1 * max(clock.left(), 0.0)
                               or (spread(out) or 1) < 0.05):
            break
    return out


def _bandwidth(client: XRootDClient | HTTPClient, size: int, rtt: float, clock: _Clock,
               reserve: Callable[[float, float | None], float] | None = None) -> list[float]:
    """MB/s of one stream moving about ``TRANSFER_S`` seconds of data (at a first 1 MB
    estimate), timed from the first data to the last, so that neither the round trip nor the
    server's start counts: XRootD with reads of up to ``CHUNK`` on the one connection, at least
    ``PIPELINE`` in flight and enough to cover the bandwidth-delay product (as readers and
    ``xrdcp`` keep it busy), HTTP as one streamed range GET."""
    probe_n = min(size, 1 << 20)
    t = _timed(lambda: client.read(0, probe_n))
    clock.bytes += probe_n
    est = probe_n / max(t - rtt, 1e-4)
    n = int(min(size, MAX_TRANSFER, max(4 * CHUNK, est * TRANSFER_S)))
    # reads small enough that a small file still makes several, and enough of them in flight
    # to cover the bandwidth-delay product
    chunk = int(min(CHUNK, max(1 << 16, n // 16)))
    depth = int(min(64, max(PIPELINE, est * rtt / chunk + 2)))
    out = []
    reps = 3
    keep = reserve(rtt, est / 1e6) if reserve is not None else 0.0
    for i in range(reps):
        clock.check()
        if i and clock.left() - keep < (n / est + rtt) * (reps - i) + 2:
            break
        offset = (size - n) * i // max(reps - 1, 1)
        moved, seconds = client.stream(offset, n, chunk, depth)
        clock.bytes += n
        if seconds > 0:
            out.append(moved / seconds / 1e6)
    return out


def _sweep(client: XRootDClient | HTTPClient, size: int,
           clock: _Clock) -> list[RemoteRequestPoint]:
    out = []
    for req in SWEEP_SIZES:
        if req > size:
            break
        times = []
        for off in _offsets(size, req, 3):
            clock.check()
            times.append(_timed(lambda o=off, n=req: client.read(o, n)))  # type: ignore[misc]
            clock.bytes += req
        med = statistics.median(times)
        out.append(RemoteRequestPoint(req, med, req / med / 1e6, len(times)))
        if clock.left() < 4 * med * 3:
            break
    return out


def _sweep_cost(size: int, bw: float | None, rtt: float) -> float:
    """Seconds the sweep takes at about this link (3 reads of each size)."""
    rate = (bw or 1.0) * 1e6
    return sum(3 * (rtt + r / rate) for r in SWEEP_SIZES if r <= size)


def _streams_cost(k: int, size: int, bw: float | None, rtt: float) -> float:
    """Seconds ``k`` streams take at about this link: the opens (a few round trips each, the
    handles opened one after the other) and two transfers."""
    if not bw:
        return 0.0
    per = min(size // max(k, 1), max(1 << 16, bw * 1e6 * 0.5 / k), MAX_TRANSFER)
    return k * 6 * rtt + 2 * (per * k / (bw * 1e6) + rtt)


def _fit(sweep: Sequence[RemoteRequestPoint]) -> tuple[float | None, float | None]:
    if len(sweep) < 2:
        return None, None
    x = np.array([p.request_bytes for p in sweep], float)
    y = np.array([p.seconds for p in sweep], float)
    slope, icpt = np.polyfit(x, y, 1)
    if slope <= 0:
        return max(float(icpt), 0.0), None
    return max(float(icpt), 0.0), 1 / float(slope) / 1e6


def _streams(url: str, size: int, bw: float | None, rtt: float, streams: Sequence[int],
             clock: _Clock) -> list[StreamsPoint]:
    """Aggregate MB/s of k reads at once, each on its own handle, together about 1/2 s at the
    one-stream rate: bytes / (time - one round trip), the reads starting together."""
    if not bw:
        return []
    out = []
    for k in streams:
        per = int(min(size // max(k, 1), max(1 << 16, bw * 1e6 * 0.5 / k), MAX_TRANSFER))
        if per < 4096 or clock.left() < 2 * per * k / (bw * 1e6) + 1:
            break
        clients = [client_for(_own_connection(url, i)) for i in range(k)]
        try:
            for c in clients:
                c.open()
            offs = [i * (size // k) for i in range(k)]
            samples = []
            for _ in range(2):
                clock.check()
                with ThreadPoolExecutor(k) as pool:
                    t0 = time.perf_counter()
                    jobs = [(c, o, per) for c, o in zip(clients, offs, strict=True)]
                    list(pool.map(lambda a: a[0].read(a[1], a[2]), jobs))
                    dt = time.perf_counter() - t0
                clock.bytes += per * k
                samples.append(per * k / max(dt - rtt, 1e-6) / 1e6)
        finally:
            for c in clients:
                c.close()
        out.append(StreamsPoint(k, statistics.median(samples), k, tuple(samples)))
    return out


def _own_connection(url: str, i: int) -> str:
    """``url`` on a connection of its own: the XRootD client shares one connection per server
    and user among all the files of a process, so each stream logs in as its own user name
    (``root://s<i>@host//...``), as separate processes would each open their own."""
    if scheme_of(url) != "root" or i == 0:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"hepadvisor{i}@{host}"))


def _vector(client: XRootDClient | HTTPClient, size: int, rtt: float, bw: float | None,
            clock: _Clock) -> VectorReads:
    n = VECTOR_CHUNKS if size >= VECTOR_CHUNKS * VECTOR_CHUNK_BYTES * 2 else max(
        2, size // (2 * VECTOR_CHUNK_BYTES))
    chunk = min(VECTOR_CHUNK_BYTES, max(1, size // (2 * n)))
    chunks = [(o, chunk) for o in _offsets(size, chunk, n)]
    try:
        times = []
        for _ in range(3):
            clock.check()
            times.append(_timed(lambda: client.vector_read(chunks)))
            clock.bytes += n * chunk
    except RemoteError as exc:
        return VectorReads(False, n, chunk, None, None, None, str(exc))
    k = max(1, min(n, 8))
    singles = [_timed(lambda o=o: client.read(o, chunk))  # type: ignore[misc]
               for o, _ in chunks[:k]]
    clock.bytes += k * chunk
    vec = statistics.median(times)
    wire = n * chunk / (bw * 1e6) if bw else 0.0
    over = max(0.0, vec - rtt - wire) / n * 1e3
    return VectorReads(True, n, chunk, vec, statistics.median(singles), over)


# -- the calibration of a remote dataset --------------------------------------------------------

def calibrate_remote(dataset: DatasetProfile, files: Sequence[str], budget_s: float,
                     engine: str, progress: ProgressCallback | None,
                     cancel: threading.Event | None) -> Calibration:
    """The calibration of a dataset read over ``root://`` or ``http(s)://``: the link, on the
    largest file; the local storage, page-cache and event-loop tests are listed as skipped."""
    from .assemble import build_calibration
    from .registry import tests_for
    from .results import Skipped
    from .runner import ProgressEvent, Session

    session = Session(budget_s, tests=[TEST_NAME], progress=progress, cancel=cancel)
    names = ", ".join(t.label for t in tests_for(engine))
    skipped = [Skipped("local read tests", f"remote data: these read local files ({names}); "
                       "the link is measured instead (calibration.remote)")]
    target = files[0] if files else ""

    def on(fraction: float, message: str) -> None:
        if progress is not None:
            progress(ProgressEvent(TEST_NAME, fraction, message, left_s=session.remaining()))

    values: dict[str, Any] = {}
    partial = False
    dropped: list[tuple[str, str]] = []
    try:
        if not scheme_of(target):
            raise RemoteError(f"not a root:// or http(s):// URL: {target}")
        pairs = [(u, _size(u)) for u in files[:CPU_CANDIDATES]]

        def reserve(rtt_s: float, mb_s: float | None) -> float:
            return _cpu_need(pairs, engine, rtt_s, mb_s, session.remaining())

        rc = measure_link(target, session.remaining() * SAFETY, cancel=cancel, progress=on,
                          reserve=reserve, skipped=dropped)
        session.bytes_read += rc.bytes_moved
        values["remote"] = rc
        cpu, why = _reader_cpu(dataset, pairs, rc, engine, session.remaining() * SAFETY,
                               cancel, dropped)
        if cpu is not None:
            session.bytes_read += cpu.file_bytes
            values["remote"] = dataclasses.replace(rc, cpu=cpu)
        else:
            skipped.append(Skipped(CPU_TEST, why))
        if engine == "uproot" and dataset.trees:
            from ..results import largest_tree
            from .remote_client import default_iterate_error

            error = default_iterate_error(target, largest_tree(dataset.trees).name)
            values["remote"] = dataclasses.replace(values["remote"], default_iterate_tried=True,
                                                   default_iterate_error=error)
    except (Cancelled, KeyboardInterrupt):
        partial = True
    except RemoteError as exc:
        skipped.append(Skipped(TEST_NAME, f"{target}: {exc}"))
    skipped += [Skipped(test, why) for test, why in dropped]
    return build_calibration(session, engine, partial, dataset, values, skipped, list(files))


def _cpu_need(pairs: Sequence[tuple[str, int]], engine: str, rtt_s: float,
              mb_s: float | None, left_s: float) -> float:
    """Seconds the reader's CPU test and its client tests need at least (a plan, shown
    nowhere): the file the test would pick fetched at ``mb_s`` with a few round trips, a
    local pass, and per client its first pass and one paired pass over the link (each about
    the fetch and an open's round trips; ROOT's client: its process start first)."""
    from .remote_cpu import pick_file

    if not mb_s:
        return 0.0
    pick = pick_file(pairs, mb_s * 1e6 * left_s / 2)
    if pick is None:
        return 0.0
    fetch = pick[1] / (mb_s * 1e6) + 4 * rtt_s
    one = fetch + OPEN_ROUND_TRIPS * rtt_s
    if engine == "root":
        return fetch + 2 * ROOT_START_S + LOCAL_PASS_S + 2 * one
    clients = 2 if scheme_of(pick[0]) == "root" else 1
    return fetch + LOCAL_PASS_S + clients * (2 * one + LOCAL_PASS_S)


def _reader_cpu(dataset: DatasetProfile, pairs: Sequence[tuple[str, int]],
                rc: RemoteCalibration, engine: str, left_s: float,
                cancel: threading.Event | None, dropped: list[tuple[str, str]]
                ) -> tuple[RemoteReaderCpu | None, str]:
    """The reader's CPU on one file fetched whole (:mod:`.remote_cpu`), or why not: a file
    whose fetch takes at most half the time left at the measured bandwidth."""
    from ..results import largest_tree
    from .remote_cpu import measure_reader_cpu, pick_file

    trees = [t for t in dataset.trees if t.format == "ttree"]
    if not trees:
        return None, "no TTree in the probe: the reader's CPU was not measured"
    if not rc.bandwidth_mb_per_s:
        return None, "the link's bandwidth was not measured: the reader's CPU was not either"
    max_bytes = rc.bandwidth_mb_per_s * 1e6 * left_s / 2
    pick = pick_file(pairs, max_bytes)
    if pick is None:
        return None, (f"no file small enough to fetch in {left_s / 2:.0f} s at "
                      f"{rc.bandwidth_mb_per_s:.1f} MB/s: the reader's CPU was not measured "
                      "(give a larger --budget)")
    try:
        return measure_reader_cpu(pick[0], pick[1], largest_tree(trees).name, engine, left_s,
                                  cancel=cancel, skipped=dropped), ""
    except RemoteError as exc:
        return None, str(exc)


def _size(url: str) -> int:
    try:
        return client_for(url).size()
    except (RemoteError, OSError):
        return 0


__all__ = ["calibrate_remote", "measure_link"]
