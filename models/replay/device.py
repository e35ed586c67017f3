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
  ``warm=True`` starts with every byte cached.

So a sequential stream approaches the bandwidth and random small reads approach
``1 / (access_s + page / bandwidth)`` requests per second (the IOPS).  :meth:`LocalDevice.
from_rates` takes the figures the read tests measure (MB/s and IOPS).

:class:`Link` is a network link for remote data: a round trip per call (a batch of requests
issued together, one vector read, is one call; without vector reads every request is one) and
the bandwidth for the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .requests import Request

PAGE = 4096


@dataclass(frozen=True)
class Transfer:
    """What replaying a stream through a device or link cost."""

    time_s: float
    requests: int  # reads issued by the reader
    requested_bytes: int
    device_requests: int  # I/Os that reached the device (or calls on the link)
    device_bytes: int  # bytes moved from the device (read-ahead included) or over the link
    seeks: int  # device I/Os that paid the access time
    cached_bytes: int = 0  # requested bytes served from the page cache

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
    ra_order: int = 0  # folio order of the last window (large folios)
    prev_page: int = -2  # last page the application read
    last_end: int = -1  # byte offset where the previous request ended

    def reset_ra(self) -> None:
        """A newly opened file: fresh read-ahead state (the page cache and marks stay)."""
        self.ra_start, self.ra_size, self.ra_async, self.prev_page = -1, 0, 0, -2
        self.ra_order = 0

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


def init_ra_pages(req_pages: int, max_pages: int) -> int:
    """Linux ``get_init_ra_size``."""
    size = 1 << max(int(req_pages) - 1, 0).bit_length()
    if size <= max_pages // 32:
        return size * 4
    if size <= max_pages // 4:
        return size * 2
    return max_pages


def next_ra_pages(cur: int, max_pages: int) -> int:
    """Linux ``get_next_ra_size``."""
    if cur < max_pages // 16:
        return 4 * cur
    if cur <= max_pages // 2:
        return 2 * cur
    return max_pages


@dataclass(frozen=True)
class LocalDevice:
    """A local block device with the kernel's read-ahead and page cache (see module doc)."""

    mb_per_s: float
    access_s: float
    read_ahead_kb: int = 128
    warm: bool = False  # every byte already in the page cache
    ram_mb_per_s: float | None = None
    #: Experimental: large folios (Linux 6.x page cache), where read-ahead folios grow by 2
    #: orders with each asynchronous window and the mark covers a whole folio, so that a sparse
    #: reader landing anywhere in it starts the next window.  Off by default: against this
    #: machine's kernel (6.18, ext4) the single marked page matched the measured device bytes
    #: better.
    large_folios: bool = False
    max_folio_order: int = 9

    @classmethod
    def from_rates(
        cls, mb_per_s: float, iops: float, read_ahead_kb: int = 128, **kw: object
    ) -> LocalDevice:
        """Access time from measured random-read IOPS of one page: 1/IOPS - page/bandwidth."""
        access = max(1.0 / iops - PAGE / (mb_per_s * 1e6), 0.0)
        return cls(mb_per_s, access, read_ahead_kb, **kw)  # type: ignore[arg-type]

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
        max_pages = max(self.read_ahead_kb * 1024 // PAGE, 0)
        files: dict[str, _FileState] = {}
        time_s = 0.0
        n = req_bytes = dev_n = dev_bytes = seeks = cached = 0
        last: tuple[str, int] | None = None  # (file, end page) of the last device I/O

        def device_io(name: str, st: _FileState, lo: int, hi: int) -> None:
            """Read the missing pages of [lo, hi) from the device, as contiguous runs."""
            nonlocal time_s, dev_n, dev_bytes, seeks, last
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
                if last != (name, a):
                    time_s += self.access_s
                    seeks += 1
                nbytes = (b - a) * PAGE
                if log is not None:
                    log.append((name, a * PAGE, nbytes))
                time_s += nbytes / (self.mb_per_s * 1e6)
                dev_n += 1
                dev_bytes += nbytes
                last = (name, b)
                st.cached[a:b] = True

        def window(
            name: str, st: _FileState, start: int, size: int, async_size: int, ramp: bool = False
        ) -> None:
            """Read a read-ahead window and mark the folio where its async part starts."""
            st.ra_start, st.ra_size, st.ra_async = start, size, async_size
            order = 0
            if self.large_folios:
                order = min(st.ra_order + 2 if ramp else st.ra_order, self.max_folio_order)
                order = max(min(order, size.bit_length() - 1), 0)
            st.ra_order = order
            mark = start + size - async_size
            st.grow(mark + 1)
            fresh = not st.cached[mark]  # only a page this window reads gets the mark
            device_io(name, st, start, start + size)
            folio = 1 << order
            lo = max(mark - mark % folio, start)
            stop = min(lo + folio, start + size)
            if name in sizes:
                stop = min(stop, -(-sizes[name] // PAGE))
            if fresh and lo < stop:
                st.marks[lo] = stop

        for r in requests:
            n += 1
            req_bytes += r.size
            if r.size <= 0:
                continue
            if self.warm:
                cached += r.size
                if self.ram_mb_per_s:
                    time_s += r.size / (self.ram_mb_per_s * 1e6)
                continue
            st = files.setdefault(r.file, _FileState())
            if reopen and r.offset != st.last_end:
                st.reset_ra()
            st.last_end = r.offset + r.size
            first, end = r.offset // PAGE, -(-(r.offset + r.size) // PAGE)
            st.grow(end)
            hit_pages = int(np.count_nonzero(st.cached[first:end]))
            cached += min(hit_pages * PAGE, r.size)
            if self.ram_mb_per_s and hit_pages:
                time_s += hit_pages * PAGE / (self.ram_mb_per_s * 1e6)
            page = first
            while page < end:
                req = end - page
                if st.cached[page]:
                    mark = st.mark_at(page) if max_pages else None
                    if mark is not None:  # a marked page: the next window, asynchronously
                        del st.marks[mark]
                        expected = st.ra_start + st.ra_size - st.ra_async
                        if st.ra_size and mark == expected:
                            size = next_ra_pages(st.ra_size, max_pages)
                            window(r.file, st, st.ra_start + st.ra_size, size, size, True)
                        else:  # a mark without its state (another reader, or reopened)
                            start = st.next_miss(page + 1, max_pages)
                            if start > 0:
                                size = next_ra_pages(start - page + req, max_pages)
                                window(r.file, st, start, size, size, True)
                    nxt = page + 1
                    holes = np.nonzero(~st.cached[nxt:end])[0]
                    page = min(nxt + int(holes[0]) if len(holes) else end, st.next_mark(nxt))
                    if st.mark_at(nxt) is not None:
                        page = nxt
                    continue
                if not max_pages:
                    device_io(r.file, st, page, end)
                elif page == 0 or 0 <= page - st.prev_page <= 1:  # sequential: a new window
                    size = max(init_ra_pages(req, max_pages), min(req, max_pages))
                    window(r.file, st, page, size, size - req if size > req else size)
                elif (contig := st.cached_before(page, max_pages)) > req:
                    # context read-ahead: the pages before are cached, as a stream leaves them
                    if contig == page:  # cached from the start of the file
                        contig *= 2
                    size = max(min(contig + req, max_pages), min(req, max_pages))
                    window(r.file, st, page, size, 1)
                else:  # a small random read: its own pages only
                    device_io(r.file, st, page, end)
                if not st.cached[page]:  # beyond the end of the file
                    break
            st.prev_page = end - 1
        return Transfer(time_s, n, req_bytes, dev_n, dev_bytes, seeks, cached)


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
