"""Device and link models: a request stream -> time and bytes moved.

:class:`LocalDevice` is a block device under the Linux page cache:

- every device I/O that does not start where the previous one ended (same file) pays the
  access time (seek and rotation, or an SSD's latency); then its bytes flow at the bandwidth;
- the kernel's read-ahead (``mm/readahead.c``, simplified): a read that misses the page cache
  at the start of a file, or right after the previous read, opens a window of
  ``get_init_ra_size`` pages (the request rounded up to a power of two, times 4 or 2, capped
  at ``read_ahead_kb``); reaching the window's async marker reads the next window, contiguous,
  doubled (times 4 while small) up to ``read_ahead_kb``; a read elsewhere reads only its own
  pages, unless the pages before it are cached for longer than the request (context
  read-ahead: a window of those pages plus the request); read-ahead state belongs to an open
  file (``reopen``: a reader that opens the file for every range starts afresh each time);
- the page cache: pages already read are free (``ram_mb_per_s`` charges the copy if given);
  ``warm=True`` starts with every byte cached;
- ``large_folios``: the kernel's read path over large folios instead (:mod:`.folios`, for
  kernels and file systems that use them), which splits the same windows into more, smaller
  device I/Os.

So a sequential stream approaches the bandwidth and random small reads approach
``1 / (access_s + page / bandwidth)`` requests per second (the IOPS).  :meth:`LocalDevice.
from_rates` takes the figures the read tests measure (MB/s and IOPS).

The device's form (``limit``, decided by the read tests' request sweep:
``hep_advisor.probes.readtests.raw.device_limit``):

- ``"additive"`` (the default), a disk: each device I/O that seeks pays ``access_s``, then its
  bytes flow at the bandwidth; the times add;
- ``"max"``, a rate limiter (a block throttle such as cgroup ``blkio.throttle``, a cloud
  volume's IOPS and MB/s quotas): every device I/O takes one request slot of ``access_s``
  (1 / IOPS), contiguous or not, and its bytes take their share of the bandwidth; the two
  budgets refill together, so the scarcer binds.  An I/O larger than ``max_io_kb`` is issued
  as several (the block layer splits it at ``max_sectors_kb``), each a slot.  Budget that the
  binding limit leaves unused carries over for at most ``carry_s`` (a token bucket's burst;
  0: each I/O takes the larger of its two times).

``throttle_slice_s``: the device is a cgroup block throttle (``hep_advisor.probes.throttle``, which
states the kernel's rule) and the replayed job starts after idle: the throttle's fresh slice lets
one slice's budget (rate x slice bytes, IOPS x slice requests) through at once, at the speed of the
hardware below (taken as free here: not measured), so the job's device time is the throttled
time less one slice (never below zero).  0 (the default): no throttle recorded, no credit.

:meth:`LocalDevice.paced_time`: the replayed requests issued by one reader that works between
them (its CPU, placed by :mod:`.pacing`): on a rate limiter a read that comes after enough work
finds the budget refilled and does not wait.  With a throttle recorded it follows the kernel's
rule step by step, with the limits the cgroup sets (``throttle_mb_per_s``, ``throttle_iops``,
probed).  :class:`~.predict.LayoutTime` takes its time on a rate limiter from it.

:class:`Link` is a network link for remote data: a round trip per call (a batch of requests
issued together, one vector read, is one call; without vector reads every request is one) and
the bandwidth for the bytes.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .folios import FolioCache, init_ra_pages, next_ra_pages
from .requests import Request, calls, take_turns
from .throttle import PHASES, throttled
from .throttle import Slice as _Slice
from .throttle import Steps as _Steps

PAGE = 4096
Limit = Literal["additive", "max"]


@dataclass(frozen=True)
class Transfer:
    """What replaying a stream through a device or link cost."""

    time_s: float
    requests: int  # reads issued by the reader
    requested_bytes: int
    device_requests: int  # I/Os that reached the device, split at its largest (or link calls)
    device_bytes: int  # bytes moved from the device (read-ahead included) or over the link
    seeks: int  # device I/Os that paid the access time
    cached_bytes: int = 0  # requested bytes served from the page cache
    #: the device I/Os, in order, as (bytes, whether it seeks): what ``LocalDevice.io_time``
    #: retimes on another device of the same form
    ios: tuple[tuple[int, bool], ...] = field(default=(), repr=False, compare=False)
    #: where each request's device I/Os start in ``ios`` (one more entry than requests: the
    #: I/Os of request ``i`` are ``ios[marks[i]:marks[i + 1]]``): what
    #: ``LocalDevice.paced_time`` needs to put the reader's CPU work between them
    marks: tuple[int, ...] = field(default=(), repr=False, compare=False)
    #: seconds of a block throttle's one-slice credit (``LocalDevice.throttle_slice_s``) the
    #: device time above already has off: the credit comes once per job, after idle, so a
    #: replay standing for many like it takes it off once (``LayoutTime.io_s``), not once
    #: per replayed sample
    credit_s: float = 0.0

    @property
    def mb_per_s(self) -> float:
        return self.requested_bytes / self.time_s / 1e6 if self.time_s > 0 else float("inf")

    def as_dict(self) -> dict[str, float | int]:
        return {
            "time_s": self.time_s,
            "requests": self.requests,
            "requested_bytes": self.requested_bytes,
            "device_requests": self.device_requests,
            "device_bytes": self.device_bytes,
            "seeks": self.seeks,
            "cached_bytes": self.cached_bytes,
        }


@dataclass
class _FileState:
    """One file: its pages in the page cache and read-ahead marks (shared by every reader),
    and the read-ahead state of the open file that reads it (``reset_ra`` on a new open)."""

    cached: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    marks: dict[int, int] = field(default_factory=dict)  # marked pages: start -> stop
    ra_start: int = -1  # read-ahead window, in pages
    ra_size: int = 0
    ra_async: int = 0
    prev_page: int = -2  # last page the application read
    last_end: int = -1  # byte offset where the previous request ended

    def reset_ra(self) -> None:
        """A newly opened file: fresh read-ahead state (the page cache and marks stay)."""
        self.ra_start, self.ra_size, self.ra_async, self.prev_page = -1, 0, 0, -2

    def cached_before(self, page: int, limit: int) -> int:
        """How many pages just before ``page`` are cached (at most ``limit``)."""
        lo = max(page - limit, 0)
        window = self.cached[lo:page]
        holes = np.nonzero(~window)[0]
        return len(window) - (int(holes[-1]) + 1) if len(holes) else len(window)

    def next_miss(self, page: int, limit: int) -> int:
        """The first page at or after ``page`` not cached (-1 beyond ``limit`` pages)."""
        window = self.cached[page : page + limit]
        holes = np.nonzero(~window)[0]
        if len(holes):
            return page + int(holes[0])
        return page + len(window) if len(window) < limit else -1

    def mark_at(self, page: int) -> int | None:
        for start, stop in self.marks.items():
            if start <= page < stop:
                return start
        return None

    def next_mark(self, page: int) -> int:
        return min((start for start in self.marks if start >= page), default=1 << 62)

    def grow(self, pages: int) -> None:
        if pages > len(self.cached):
            extra = max(pages, 2 * len(self.cached)) - len(self.cached)
            self.cached = np.concatenate([self.cached, np.zeros(extra, dtype=bool)])


@dataclass(frozen=True)
class LocalDevice:
    """A local block device with the kernel's read-ahead and page cache (see module doc)."""

    mb_per_s: float
    access_s: float
    read_ahead_kb: int = 128
    warm: bool = False  # every byte already in the page cache
    ram_mb_per_s: float | None = None
    #: Whether the file system's page cache uses large folios (ext4 from Linux 6.16, XFS from
    #: 5.18: :func:`.folios.large_folios` decides from the kernel release and the file system
    #: the site probe records): the replay then follows the kernel's read path over folios
    #: (:mod:`.folios`: folio orders that grow with each asynchronous window, natural
    #: alignment, windows that stop at a cached page), which splits windows into more, smaller
    #: device I/Os.  ``False`` or ``None`` (unknown): order-0 pages, the model below.
    large_folios: bool | None = False
    max_folio_order: int = 9
    #: the device's form: "additive" (a disk) or "max" (a rate limiter); see the module doc
    limit: Limit = "additive"
    #: the device's largest I/O, KiB (the queue's ``max_sectors_kb``; 0: unknown): a rate
    #: limiter takes each such part as one request slot, and a read larger than the
    #: read-ahead may read ahead up to it (the kernel's ``ractl_max_pages``)
    max_io_kb: int = 0
    #: "max" only: seconds of unused budget a limiter carries over (its burst)
    carry_s: float = 0.0
    #: a block throttle's slice whose budget a job starting after idle gets at once (see the
    #: module doc; 0: no throttle recorded)
    throttle_slice_s: float = 0.0
    #: the throttle's own read limits as its cgroup sets them (``hep_advisor.probes.throttle``; 0:
    #: not set, the measured ``mb_per_s`` and ``1 / access_s`` stand in): ``paced_time`` follows
    #: the kernel's rule with them
    throttle_mb_per_s: float = 0.0
    throttle_iops: float = 0.0

    @classmethod
    def from_rates(
        cls, mb_per_s: float, iops: float, read_ahead_kb: int = 128, **kw: object
    ) -> LocalDevice:
        """Access time from measured random-read IOPS of one page: 1/IOPS - page/bandwidth
        for a disk, 1/IOPS (one request slot) for a rate limiter (``limit="max"``)."""
        if kw.get("limit") == "max":
            access = 1.0 / iops
        else:
            access = max(1.0 / iops - PAGE / (mb_per_s * 1e6), 0.0)
        return cls(mb_per_s, access, read_ahead_kb, **kw)  # type: ignore[arg-type]

    @property
    def folios(self) -> bool:
        """Whether the replay follows the kernel's read path over large folios."""
        return bool(self.large_folios)

    def io_time(self, ios: Iterable[tuple[int, bool]]) -> float:
        """Seconds the device takes for the I/Os ``ios`` ((bytes, whether it seeks), in
        order), by its form (see the module doc)."""
        return self.timed(ios)[0]

    def timed(self, ios: Iterable[tuple[int, bool]]) -> tuple[float, float]:
        """``(io_time(ios), the part of the throttle's one-slice credit taken off it)``."""
        raw = self._io_time(ios)
        credit = min(raw, self.throttle_slice_s)
        return raw - credit, credit

    def _io_time(self, ios: Iterable[tuple[int, bool]]) -> float:
        rate = self.mb_per_s * 1e6
        if self.limit != "max":
            return sum((self.access_s if seek else 0.0) + n / rate for n, seek in ios)
        now = t_bytes = t_slots = -self.carry_s
        for n, _ in ios:
            slots = self._slots(n)
            t_bytes = max(t_bytes, now - self.carry_s) + n / rate
            t_slots = max(t_slots, now - self.carry_s) + slots * self.access_s
            now = max(now, t_bytes, t_slots)
        return max(now, 0.0)

    def paced_time(self, io: Transfer, gaps: Sequence[float], start_s: float = 0.0,
                   repeat: float = 1.0) -> float:
        """Seconds for one reader that issues the replayed requests of ``io`` in turn, waiting
        for each request's device I/Os, then working ``gaps[i]`` seconds of CPU before the
        next (``start_s``: CPU before the first).  The CPU is included.  ``repeat``: the
        stream stands for this many like it, read one after another (a sample of files
        standing for all): past two, every later repetition takes what the second took (the
        limiter's state carries at most a slice from one to the next), so the work stays
        that of two (within 1.1% of replaying all 1,250 on three datasets, 8 files standing
        for 10,000).

        On a disk (``"additive"``) the I/O and the CPU add, as :meth:`io_time` has them.  On
        a rate limiter the reads are issued where the CPU leaves them and wait only where the
        limiter's budget is spent: a block throttle (``throttle_slice_s`` > 0) by the
        kernel's rule (``block/blk-throttle.c``, in our words): the group's I/O is counted
        over a slice that starts afresh at the first I/O after a slice's idle and is extended
        while I/O keeps coming; an I/O may go when the bytes (and the requests) dispatched in
        the slice, its own included, stay within the rate times the slice's elapsed time
        rounded up to whole slices; else it waits for the shortfall at the rate plus the
        rest of the rounded slice (a request waits at least one request's time); slices
        older than the last one are trimmed from the count once two have passed.  Each
        dispatch sets the slice's end to a slice later, rounded up to a whole slice of the
        kernel's clock (``throtl_set_slice_end``), so an idle gap of one to two slices may or
        may not start a fresh slice, by the job's phase against that clock: the time is the
        mean over :data:`PHASES` phases (runs of a job on that edge fall into two groups,
        and the mean lies between them).  The
        hardware below the throttle is taken as free (not measured).  Any other limiter:
        the token bucket of :meth:`io_time` (``carry_s``), with each request issued at its
        own time."""
        if len(io.marks) != len(gaps) + 1:
            raise ValueError(f"{len(gaps)} gaps for {max(len(io.marks) - 1, 0)} requests")
        if repeat > 2:  # each later repetition paces as the second: two replayed, the rest
            one = self._paced(io, gaps, start_s, 1.0)  # extended (a sample of 16 files
            two = self._paced(io, gaps, start_s, 2.0)  # standing for 10,000: 2, not 625)
            return two + (repeat - 2.0) * (two - one)
        return self._paced(io, gaps, start_s, repeat)

    def _slots(self, n: int) -> int:
        """Request slots an I/O of ``n`` bytes takes: one per largest I/O it is split into."""
        split = self.max_io_kb * 1024
        return -(-n // split) if split > 0 else 1

    def _paced(self, io: Transfer, gaps: Sequence[float], start_s: float,
               repeat: float) -> float:
        """:meth:`paced_time`, every repetition replayed."""
        marks, ios = io.marks, io.ios
        t = float(start_s)
        whole = max(int(repeat), 0)
        order = [i for _ in range(whole) for i in range(len(gaps))]
        order += range(round((repeat - whole) * len(gaps)))
        if self.limit != "max":
            rate = self.mb_per_s * 1e6
            return t + sum(gaps[i] + sum((self.access_s if seek else 0.0) + n / rate
                                         for n, seek in ios[marks[i]:marks[i + 1]])
                           for i in order)
        if self.throttle_slice_s > 0:  # the mean over the job's phase against the grid
            sizes = [n for n, _ in ios]
            steps = _Steps(sizes, [self._slots(n) for n in sizes], marks, gaps, order)
            first, edge = self._throttled(steps, t)
            if edge is None:  # no idle gap of one to two slices: every phase goes alike
                return first
            sl = self.throttle_slice_s  # the other phases go alike up to the first such gap
            return statistics.fmean([first] + [
                self._throttled(steps, t, sl * k / PHASES, edge)[0] for k in range(1, PHASES)])
        rate = self.mb_per_s * 1e6
        t_bytes = t_slots = t - self.carry_s
        for i in order:
            gap = gaps[i]
            for n, _ in ios[marks[i]:marks[i + 1]]:
                slots = self._slots(n)
                t_bytes = max(t_bytes, t - self.carry_s) + n / rate
                t_slots = max(t_slots, t - self.carry_s) + slots * self.access_s
                t = max(t, t_bytes, t_slots)
            t += gap
        return t

    def _throttled(self, steps: _Steps, t: float, phase: float = 0.0,
                   resume: _Slice | None = None) -> tuple[float, _Slice | None]:
        """:func:`.throttle.throttled` with this device's slice and limits (the cgroup's, else
        the measured ``mb_per_s`` and ``1 / access_s``)."""
        bps = (self.throttle_mb_per_s or self.mb_per_s) * 1e6
        iops = self.throttle_iops or (1.0 / self.access_s if self.access_s > 0 else 0.0)
        return throttled(steps, t, self.throttle_slice_s, bps, iops, phase, resume)

    def replay(
        self,
        requests: Iterable[Request],
        file_bytes: dict[str, int] | None = None,
        *,
        reopen: bool = False,
        log: list[tuple[str, int, int]] | None = None,
    ) -> Transfer:
        """Replay ``requests``; ``reopen``: each range that does not continue the previous one
        is read through a newly opened file (fsspec's local files), with fresh read-ahead state.
        ``log`` collects the device I/Os as (file, byte offset, bytes).
        """
        sizes = file_bytes or {}
        if self.folios and not self.warm:
            return self._replay_folios(requests, sizes, reopen, log)
        max_pages = max(self.read_ahead_kb * 1024 // PAGE, 0)
        io_pages = max(self.max_io_kb * 1024 // PAGE, 0)
        split = self.max_io_kb * 1024
        files: dict[str, _FileState] = {}
        time_s = 0.0
        n = req_bytes = dev_n = dev_bytes = seeks = cached = 0
        last: tuple[str, int] | None = None  # (file, end page) of the last device I/O
        ios: list[tuple[int, bool]] = []
        marks: list[int] = []

        def device_io(name: str, st: _FileState, lo: int, hi: int) -> None:
            """Read the missing pages of [lo, hi) from the device, as contiguous runs."""
            nonlocal dev_n, dev_bytes, seeks, last
            if name in sizes:
                hi = min(hi, max(-(-sizes[name] // PAGE), lo))
            if hi <= lo:
                return
            st.grow(hi)
            missing = np.nonzero(~st.cached[lo:hi])[0]
            if len(missing) == 0:
                return
            # split into contiguous runs of missing pages
            breaks = np.nonzero(np.diff(missing) > 1)[0]
            starts = np.concatenate([[missing[0]], missing[breaks + 1]]) + lo
            stops = np.concatenate([missing[breaks], [missing[-1]]]) + lo + 1
            for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
                seek = last != (name, a)
                seeks += seek
                nbytes = (b - a) * PAGE
                if log is not None:
                    log.append((name, a * PAGE, nbytes))
                ios.append((nbytes, seek))
                # the block layer splits an I/O at the queue's largest (max_sectors_kb)
                dev_n += -(-nbytes // split) if split > 0 else 1
                dev_bytes += nbytes
                last = (name, b)
                st.cached[a:b] = True

        def window(
            name: str, st: _FileState, start: int, size: int, async_size: int
        ) -> None:
            """Read a read-ahead window and mark the page where its async part starts."""
            st.ra_start, st.ra_size, st.ra_async = start, size, async_size
            mark = start + size - async_size
            st.grow(mark + 1)
            fresh = not st.cached[mark]  # only a page this window reads gets the mark
            device_io(name, st, start, start + size)
            if fresh and (name not in sizes or mark < -(-sizes[name] // PAGE)):
                st.marks[mark] = mark + 1

        def account(r: Request) -> _FileState:
            """The request's pages the cache already holds; its file's state."""
            nonlocal cached, time_s
            st = files.setdefault(r.file, _FileState())
            first, end = r.offset // PAGE, -(-(r.offset + r.size) // PAGE)
            st.grow(end)
            hit_pages = int(np.count_nonzero(st.cached[first:end]))
            cached += min(hit_pages * PAGE, r.size)
            if self.ram_mb_per_s and hit_pages:
                time_s += hit_pages * PAGE / (self.ram_mb_per_s * 1e6)
            return st

        def reads(r: Request, st: _FileState) -> Iterator[None]:
            """The kernel's read of ``r``, pausing after each read from the device (where the
            thread waits for it, and another thread's read gets in first)."""
            first, end = r.offset // PAGE, -(-(r.offset + r.size) // PAGE)
            st.grow(end)
            # ractl_max_pages: a request larger than the read-ahead may read ahead up to the
            # device's largest I/O (``max_io_kb``: the queue's max_sectors_kb)
            mp = max_pages
            if end - first > max_pages and io_pages > max_pages:
                mp = min(end - first, io_pages)
            page = first
            while page < end:
                req = end - page
                if st.cached[page]:
                    mark = st.mark_at(page) if max_pages else None
                    if mark is not None:  # a marked page: the next window, asynchronously
                        del st.marks[mark]
                        expected = st.ra_start + st.ra_size - st.ra_async
                        if st.ra_size and mark == expected:
                            size = next_ra_pages(st.ra_size, mp)
                            window(r.file, st, st.ra_start + st.ra_size, size, size)
                        else:  # a mark without its state (another reader, or reopened)
                            start = st.next_miss(page + 1, mp)
                            if start > 0:
                                size = next_ra_pages(start - page + req, mp)
                                window(r.file, st, start, size, size)
                        yield
                    nxt = page + 1
                    holes = np.nonzero(~st.cached[nxt:end])[0]
                    page = min(nxt + int(holes[0]) if len(holes) else end, st.next_mark(nxt))
                    if st.mark_at(nxt) is not None:
                        page = nxt
                    continue
                if not max_pages:
                    device_io(r.file, st, page, end)
                elif page == 0 or req > mp or 0 <= page - st.prev_page <= 1:
                    # the start of the file, an oversized read or a sequential one: a window
                    size = max(init_ra_pages(req, mp), min(req, mp))
                    window(r.file, st, page, size, size - req if size > req else size)
                elif (contig := st.cached_before(page, mp)) > req:
                    # context read-ahead: the pages before are cached, as a stream leaves them
                    if contig == page:  # cached from the start of the file
                        contig *= 2
                    size = max(min(contig + req, mp), min(req, mp))
                    window(r.file, st, page, size, 1)
                else:  # a small random read: its own pages only
                    device_io(r.file, st, page, end)
                if not st.cached[page]:  # beyond the end of the file
                    break
                yield
            st.prev_page = end - 1

        def thread(rs: Sequence[Request]) -> Iterator[None]:
            """One thread's requests through its own open file (``reopen``) or the shared
            one; its read-ahead state kept aside while another thread runs."""
            ra: tuple[int, int, int, int] | None = None
            last_end = -1
            for r in rs:
                st = files.setdefault(r.file, _FileState())
                if reopen and r.offset != last_end:
                    st.reset_ra()
                elif reopen and ra is not None:
                    st.ra_start, st.ra_size, st.ra_async, st.prev_page = ra
                last_end = st.last_end = r.offset + r.size
                for _ in reads(r, st):
                    ra = (st.ra_start, st.ra_size, st.ra_async, st.prev_page)
                    yield
                    if reopen:
                        st.ra_start, st.ra_size, st.ra_async, st.prev_page = ra
                ra = (st.ra_start, st.ra_size, st.ra_async, st.prev_page)

        def flush(group: list[Request]) -> None:
            """One call's requests (its batches read at once), or one request."""
            nonlocal n, req_bytes, cached, time_s
            if self.warm:
                for r in group:
                    marks.append(len(ios))
                    n += 1
                    req_bytes += r.size
                    if r.size > 0:
                        cached += r.size
                        if self.ram_mb_per_s:
                            time_s += r.size / (self.ram_mb_per_s * 1e6)
                return
            if len({r.batch for r in group}) < 2:  # one thread: one request after another
                for r in group:
                    marks.append(len(ios))
                    n += 1
                    req_bytes += r.size
                    if r.size <= 0:
                        continue
                    st = files.setdefault(r.file, _FileState())
                    if reopen and r.offset != st.last_end:
                        st.reset_ra()
                    st.last_end = r.offset + r.size
                    account(r)
                    for _ in reads(r, st):
                        pass
                return
            before = len(ios)
            batches: dict[int, list[Request]] = {}
            for r in group:  # the cache as each request finds it (before the call's reads)
                n += 1
                req_bytes += r.size
                if r.size > 0:
                    account(r)
                    batches.setdefault(r.batch, []).append(r)
            take_turns(thread(rs) for rs in batches.values())  # at each wait for the device
            # the call's device I/Os go to its first request (its threads wait for them together)
            marks.extend([before] + [len(ios)] * (len(group) - 1))

        for group in calls(requests):
            flush(group)
        marks.append(len(ios))
        io_s, credit = self.timed(ios)
        return Transfer(time_s + io_s, n, req_bytes, dev_n, dev_bytes, seeks, cached,
                        tuple(ios), tuple(marks), credit_s=credit)

    def _replay_folios(self, requests: Iterable[Request], sizes: dict[str, int], reopen: bool,
                       log: list[tuple[str, int, int]] | None) -> Transfer:
        """:meth:`replay` through the kernel's read path over large folios (``folios``)."""
        split = self.max_io_kb * 1024
        n = req_bytes = dev_n = dev_bytes = seeks = cached = 0
        time_s = 0.0
        last: tuple[str, int] | None = None
        ios: list[tuple[int, bool]] = []
        marks: list[int] = []

        def device_io(name: str, page: int, pages: int) -> None:
            nonlocal dev_n, dev_bytes, seeks, last
            seek = last != (name, page)
            seeks += seek
            nbytes = pages * PAGE
            if log is not None:
                log.append((name, page * PAGE, nbytes))
            ios.append((nbytes, seek))
            dev_n += -(-nbytes // split) if split > 0 else 1
            dev_bytes += nbytes
            last = (name, page + pages)

        cache = FolioCache(max(self.read_ahead_kb * 1024 // PAGE, 0),
                           max(self.max_io_kb * 1024 // PAGE, 0), self.max_folio_order,
                           device_io)
        def account(r: Request) -> None:
            """The request's pages the cache already holds."""
            nonlocal n, req_bytes, cached, time_s
            n += 1
            req_bytes += r.size
            f = cache.files.get(r.file)
            if f is not None and r.size > 0:
                first, end = r.offset // PAGE, -(-(r.offset + r.size) // PAGE)
                f.grow(end)
                hit = int(np.count_nonzero(f.head[first:end] >= 0))
                cached += min(hit * PAGE, r.size)
                if self.ram_mb_per_s and hit:
                    time_s += hit * PAGE / (self.ram_mb_per_s * 1e6)

        for group in calls(requests):  # the batches of one call read at once (FolioCache)
            if len({r.batch for r in group}) < 2:  # one thread: one request after another
                for r in group:
                    marks.append(len(ios))
                    account(r)
                    cache.replay([r._replace(call=-1)], sizes, reopen)
                continue
            before = len(ios)
            for r in group:  # the cache as each request finds it (before the call's reads)
                account(r)
            cache.replay(group, sizes, reopen)
            marks.extend([before] + [len(ios)] * (len(group) - 1))  # (as on the order-0 path)
        marks.append(len(ios))
        io_s, credit = self.timed(ios)
        return Transfer(time_s + io_s, n, req_bytes, dev_n, dev_bytes, seeks, cached,
                        tuple(ios), tuple(marks), credit_s=credit)


@dataclass(frozen=True)
class Link:
    """A network link: a round trip per call, then the bytes at the bandwidth."""

    rtt_s: float
    mb_per_s: float
    vector_reads: bool = True  # a batch of requests is one call

    def replay(self, requests: Iterable[Request]) -> Transfer:
        n = nbytes = calls = 0
        prev: tuple[str, int] | None = None
        for r in requests:
            n += 1
            nbytes += r.size
            key = (r.file, r.batch)
            if not self.vector_reads or r.batch < 0 or key != prev:
                calls += 1
            prev = key
        time_s = calls * self.rtt_s + nbytes / (self.mb_per_s * 1e6)
        return Transfer(time_s, n, nbytes, calls, nbytes, calls)
