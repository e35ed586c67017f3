"""A traced program's reads replayed through the local device: the device reads and bytes.

``hep-advisor trace`` records the reads a program made (offset, size, start, file) and counts
what the files' block devices served during the run (``/sys/block/<dev>/stat``).  The two
differ where the kernel reads for the program: read-ahead reads more than was asked for
(a sparse reader's distinct bytes can be half of what the device served), the page cache
serves re-reads and the pages read ahead, and the block layer splits an I/O larger than the
queue's ``max_sectors_kb``.  :func:`replay_trace` replays the recorded reads, per file and in
time order, through :class:`~.device.LocalDevice` (its model of the kernel's read-ahead, page
cache, in order-0 pages or large folios as the device says, and ``max_sectors_kb`` split) and
returns the device reads and bytes it predicts, to
set beside the counted ones.

How each file was opened matters: read-ahead state belongs to an open file, and a reader
that opens the file again for every range (uproot's default local source, fsspec's
``cat_file``) starts each range with fresh state, while ROOT keeps one open file.  The
recorders count the opens of each file (not when they happened), so a file is replayed as
*reopened per range* (``LocalDevice.replay(reopen=True)``) where it was opened about once
per range (:func:`reopened`), and as *kept open* otherwise.

Reads of several threads at once (uproot reads each coalesced request of a step in a thread
of its own) are replayed as they ran: reads whose spans (start, duration) overlap, of two or
more threads, are one call whose threads take turns at each wait for the device
(:func:`concurrent`), so that one thread's read-ahead finds the pages another already asked
for, as the kernel's does.

Not modelled: the file system's own metadata reads (a cold open reads the directory and the
inode from the device: a few reads per file) and the block layer merging I/Os of different
files; the replay's counts are of the data files' pages only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .device import LocalDevice
from .requests import Request


class _Read(Protocol):
    """A traced read: ``hep_advisor.probes.trace.TracedRead`` (``start_s`` too), a :class:`Request`,
    or anything with these attributes."""

    @property
    def file(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def size(self) -> int: ...


@dataclass(frozen=True)
class FileReplay:
    """One file's replay: its reads (as recorded) and the device I/O they cause."""

    path: str
    requests: int
    requested_bytes: int
    distinct_bytes: int  # the bytes of the file the reads covered (each byte once)
    opens: int  # as the recorder counted them (0: not counted)
    reopened: bool  # replayed as opened again for every range
    device_reads: int  # I/Os that reach the device, split at max_io_kb
    device_bytes: int  # bytes the device serves (read-ahead included)


@dataclass(frozen=True)
class TracedReplay:
    """A trace's reads replayed through a local device (all files together)."""

    files: tuple[FileReplay, ...]
    read_ahead_kb: int
    max_io_kb: int

    @property
    def requests(self) -> int:
        return sum(f.requests for f in self.files)

    @property
    def requested_bytes(self) -> int:
        return sum(f.requested_bytes for f in self.files)

    @property
    def distinct_bytes(self) -> int:
        return sum(f.distinct_bytes for f in self.files)

    @property
    def device_reads(self) -> int:
        return sum(f.device_reads for f in self.files)

    @property
    def device_bytes(self) -> int:
        return sum(f.device_bytes for f in self.files)

    def as_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "requested_bytes": self.requested_bytes,
                "distinct_bytes": self.distinct_bytes, "device_reads": self.device_reads,
                "device_bytes": self.device_bytes, "read_ahead_kb": self.read_ahead_kb,
                "max_io_kb": self.max_io_kb}


def ranges(reads: Sequence[Request]) -> int:
    """Reads that do not start where the previous read of the same file ended."""
    out, end = 0, -1
    for r in reads:
        out += r.offset != end
        end = r.offset + r.size
    return out


def reopened(opens: int, reads: Sequence[Request]) -> bool:
    """Whether a file opened ``opens`` times for ``reads`` (one file's, in time order) was
    opened again for every range: at least two opens, and at least half as many as ranges
    (a buffered file reads one range in one or two calls)."""
    return opens >= 2 and 2 * opens >= ranges(reads)


def distinct_bytes(reads: Iterable[Request]) -> int:
    """Bytes covered by ``reads`` (each byte once)."""
    spans = sorted((r.offset, r.offset + r.size) for r in reads if r.size > 0)
    total, lo, hi = 0, -1, -1
    for a, b in spans:
        if a > hi:
            total += max(hi - lo, 0)
            lo, hi = a, b
        else:
            hi = max(hi, b)
    return total + max(hi - lo, 0)


def replay_trace(reads: Iterable[_Read], device: LocalDevice,
                 file_bytes: Mapping[str, int] | None = None,
                 opens: Mapping[str, int] | None = None,
                 log: list[tuple[str, int, int]] | None = None) -> TracedReplay:
    """Replay traced ``reads`` through ``device`` (cold unless ``device.warm``): each file's
    reads in time order (``start_s`` where the reads have it, else as given), reopened per
    range where ``opens`` says so (:func:`reopened`).  ``file_bytes``: each file's size (the
    kernel reads ahead no further than the end of the file; without it, as far as the
    read-ahead reaches).  ``device``: its ``read_ahead_kb`` and ``max_io_kb`` should be the
    disk's (``/sys/block/<dev>/queue/read_ahead_kb`` and ``max_sectors_kb``); its rates do
    not change the counts.  ``log`` collects the device I/Os as (file, byte offset, bytes),
    before the split at ``max_io_kb``."""
    ordered = sorted(enumerate(reads), key=lambda ir: (getattr(ir[1], "start_s", 0.0), ir[0]))
    timed: dict[str, list[_Read]] = {}
    for _, r in ordered:
        if r.size > 0:
            timed.setdefault(r.file, []).append(r)
    per_file = {path: concurrent(rs) for path, rs in timed.items()}
    sizes = dict(file_bytes or {})
    counted = opens or {}
    out = []
    for path, reqs in per_file.items():
        n_open = int(counted.get(path, 0))
        again = reopened(n_open, reqs)
        t = device.replay(reqs, {path: sizes[path]} if path in sizes else None, reopen=again,
                          log=log)
        out.append(FileReplay(path, t.requests, t.requested_bytes, distinct_bytes(reqs), n_open,
                              again, t.device_requests, t.device_bytes))
    return TracedReplay(tuple(out), device.read_ahead_kb, device.max_io_kb)


def concurrent(reads: Sequence[_Read]) -> list[Request]:
    """``reads`` (of one file, in time order) as requests, those of two or more threads
    whose spans overlap (``start_s``, ``duration_s``; chained, or a read continuing its
    thread's last one in the group) grouped as one call, each thread (``pid``) a batch.
    Reads without a thread or a duration stay one by one."""
    out: list[Request] = []
    group: list[_Read] = []
    calls = 0

    def flush() -> None:
        nonlocal calls
        threads = {getattr(r, "pid", 0) for r in group}
        many = len(threads) > 1
        for r in group:
            out.append(Request(r.file, int(r.offset), int(r.size), "data",
                               int(getattr(r, "pid", 0)) if many else -1,
                               calls if many else -1))
        calls += many
        group.clear()

    end = float("-inf")
    ends: dict[int, int] = {}  # each thread's last byte read in the group
    for r in reads:
        start = float(getattr(r, "start_s", 0.0))
        dur = getattr(r, "duration_s", None)
        pid = int(getattr(r, "pid", 0))
        # a read that continues its thread's last (a buffered read's remainder) stays too
        goes_on = ends.get(pid) == int(r.offset)
        if group and (dur is None or (start >= end and not goes_on)):
            flush()
        if not group:
            end, ends = float("-inf"), {}
        group.append(r)
        ends[pid] = int(r.offset) + int(r.size)
        end = max(end, start + (float(dur) if dur is not None else 0.0))
    if group:
        flush()
    return out


def reads_from_trace(trace: Mapping[str, Any]) -> tuple[list[Request], dict[str, int]]:
    """The reads and per-file opens of a ``trace`` JSON block (``hep-advisor trace --json``:
    ``picture.requests`` in time order, ``files[].opens``).  Raises ``ValueError`` (one line)
    where the picture holds no requests or was thinned (it keeps at most a few thousand)."""
    pic = trace.get("picture") or {}
    reqs = pic.get("requests") or []
    if not reqs:
        raise ValueError("the trace holds no requests (no picture)")
    total = int(pic.get("total", len(reqs)))
    if total > len(reqs):
        raise ValueError(f"the trace's picture keeps {len(reqs)} of {total} requests: "
                         "a replay needs them all")
    names = list(pic.get("files") or [])
    timed = sorted(reqs, key=lambda q: float(q.get("start_s", 0.0)))
    out = [Request(names[int(q["file"])], int(q["offset"]), int(q["size"])) for q in timed]
    opens = {str(f["path"]): int(f.get("opens", 0)) for f in trace.get("files") or []}
    return out, opens


__all__ = ["FileReplay", "TracedReplay", "concurrent", "distinct_bytes", "ranges",
           "reads_from_trace", "reopened", "replay_trace"]
