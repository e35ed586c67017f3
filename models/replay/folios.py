"""The page cache and read-ahead of a Linux kernel whose file system uses large folios.

:class:`~.device.LocalDevice` replays through this module where ``large_folios`` is on (see
:func:`large_folios`: ext4 from Linux 6.16, XFS from 5.18).  It follows the kernel's read path
step by step (``mm/filemap.c`` ``filemap_read``/``filemap_get_pages``, ``mm/readahead.c``
``page_cache_sync_ra``, ``page_cache_async_ra``, ``page_cache_ra_order`` and
``page_cache_ra_unbounded``, as of Linux 6.17-6.18), because with large folios the split of a
read-ahead window into device I/Os follows from folio sizes and alignment:

- a synchronous window (a cache miss) allocates order-0 pages; each asynchronous window (the
  application reaching the folio that carries the ``PG_readahead`` mark) raises the folio order
  by 2, and its end is rounded down to a multiple of ``2**min(order, lowest set bit of the
  window limit)`` pages (so windows after a large read land on 1,280 KiB boundaries);
- folios are naturally aligned (a window starting at page 12 begins with a 4-page folio) and
  never cover a cached page: where one would, the window stops there, the pages allocated so
  far go to the device as one I/O, and the rest is read page by page around the cached pages
  (``4+40 44+1`` where order-0 pages read ``4+41``);
- the mark sits on the folio holding the window's async start, so the next window starts
  when the application reaches any page of that folio, and ``page_cache_async_ra`` compares the
  folio's start with the expected mark rounded down to the folio size;
- each batch of contiguous new folios is one device I/O (one bio in ext4's
  ``ext4_mpage_readpages`` for a file laid out contiguously), split at the queue's largest I/O.

Not modelled: a file fragmented on disk (each extent break is another I/O), I/Os of two batches
that the block layer merges when it dispatches them together (seen on this kernel for 1-2 of
9 I/Os of a file in some runs), memory pressure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .requests import Request, calls, take_turns

PAGE = 4096
BATCH_FOLIOS = 31  # a folio_batch: filemap_get_read_batch stops after this many folios
#: (file system, first Linux release whose page cache gives its regular files large folios)
LARGE_FOLIO_SINCE = {"xfs": (5, 18), "ext4": (6, 16)}


def large_folios(os_release: str | None, fs_type: str | None) -> bool:
    """Whether the page cache of a file system of ``fs_type`` on a kernel ``os_release`` (as
    the site probe records it, ``"Linux 6.18.44"``, or a bare ``uname -r``) uses large folios
    for reading ahead: ext4 from Linux 6.16, XFS from 5.18 (each release's merge notes); False
    where either is unknown."""
    if not os_release or not fs_type:
        return False
    since = LARGE_FOLIO_SINCE.get(fs_type.lower())
    m = re.search(r"(\d+)\.(\d+)", os_release)
    if since is None or m is None:
        return False
    return (int(m.group(1)), int(m.group(2))) >= since


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


def _low_bit(n: int) -> int:
    """The index of the lowest set bit of ``n`` > 0 (``__ffs``)."""
    return (n & -n).bit_length() - 1


@dataclass
class _Ra:
    """An open file's ``struct file_ra_state``."""

    start: int = 0
    size: int = 0
    async_size: int = 0
    order: int = 0
    prev_pos: int = -1  # byte after the previous read (-1: none yet)


@dataclass
class _File:
    """One file's page cache (folios and their marks) and the open file's read-ahead state."""

    eof_page: int | None  # last page of the file (None: size unknown)
    head: np.ndarray = field(default_factory=lambda: np.full(0, -1, dtype=np.int64))
    npages: dict[int, int] = field(default_factory=dict)  # folio start -> pages
    marked: set[int] = field(default_factory=set)  # folio starts with PG_readahead
    ra: _Ra = field(default_factory=_Ra)
    last_end: int = -1

    def grow(self, pages: int) -> None:
        if pages > len(self.head):
            extra = max(pages, 2 * len(self.head)) - len(self.head)
            self.head = np.concatenate([self.head, np.full(extra, -1, dtype=np.int64)])

    def cached(self, page: int) -> bool:
        return page < len(self.head) and self.head[page] >= 0

    def any_cached(self, lo: int, hi: int) -> bool:
        self.grow(hi)
        return bool(np.any(self.head[lo:hi] >= 0))

    def add(self, start: int, pages: int) -> None:
        self.grow(start + pages)
        self.head[start : start + pages] = start
        self.npages[start] = pages

    def _lag(self, page: int) -> int:
        """How far behind ``page`` the page cache's lookup of it leaves the xarray cursor: a
        page inside a folio of 2-63 pages is found through its folio's first slot, and the
        cursor (``xa_offset``) stays on that slot while the index moves on, one slot behind
        for every page past the folio's start (``xas_load`` then ``__xas_next``/``__xas_prev``
        in ``lib/xarray.c``); larger folios sit a level up and leave no lag."""
        head = int(self.head[page])
        return page - head if self.npages[head] < 64 else 0

    def prev_miss(self, page: int, limit: int) -> int:
        """``page_cache_prev_miss`` from ``page`` back over at most ``limit`` pages: the index
        it returns (-1: it wrapped past the start of the file; none missing: the last index it
        looked at, ``page - limit + 1``)."""
        self.grow(page + 1)
        if not self.cached(page):
            return page
        lag = self._lag(page)
        slot = page - lag
        for idx in range(page - 1, page - limit, -1):
            slot -= 1
            if slot < 0:  # below the first slot: the lookup ends (the index, not a wrap)
                return idx
            if lag and slot % 64 == 63:  # a node's first slot passed: the cursor resyncs
                slot, lag = idx, 0
            if self.head[slot] < 0:
                return idx
        return page - limit + 1

    def next_miss(self, page: int, limit: int) -> int:
        """``page_cache_next_miss`` from ``page`` over at most ``limit`` pages: the index it
        returns (``page + limit``: none)."""
        self.grow(page + limit + 64)
        if not self.cached(page):
            return page
        lag = self._lag(page)
        slot = page - lag
        for idx in range(page + 1, page + limit):
            slot += 1
            if lag and slot % 64 == 0:  # past a node's last slot: the cursor resyncs
                slot, lag = idx, 0
            if self.head[slot] < 0:
                return idx
        return page + limit


class FolioCache:
    """The kernel's read path over large folios; ``io(file, first page, pages)`` is called
    for each device I/O (a batch of new folios, before the split at the largest I/O)."""

    def __init__(self, ra_pages: int, io_pages: int, max_order: int,
                 io: Callable[[str, int, int], None]) -> None:
        self.ra_pages, self.io_pages, self.max_order = ra_pages, io_pages, max_order
        self.io = io
        self.files: dict[str, _File] = {}

    # -- mm/readahead.c ------------------------------------------------------------------
    def _max_pages(self, req: int) -> int:
        """``ractl_max_pages``: a request larger than the read-ahead may read ahead up to the
        device's largest I/O."""
        if req > self.ra_pages and self.io_pages > self.ra_pages:
            return min(req, self.io_pages)
        return self.ra_pages

    def _unbounded(self, name: str, f: _File, index: int, nr: int, lookahead: int) -> None:
        """``do_page_cache_ra`` + ``page_cache_ra_unbounded``: order-0 pages, a cached page
        ends the batch (one I/O) and is skipped."""
        if f.eof_page is not None:
            if index > f.eof_page:
                return
            if nr > f.eof_page - index:
                nr, lookahead = f.eof_page - index + 1, 0
        mark = index + nr - lookahead if lookahead <= nr else -1
        lo = index
        for page in range(index, index + nr):
            if f.cached(page):
                if page > lo:
                    self.io(name, lo, page - lo)
                lo = page + 1
                continue
            f.add(page, 1)
            if page == mark:
                f.marked.add(page)
        if index + nr > lo:
            self.io(name, lo, index + nr - lo)

    def _ra_order(self, name: str, f: _File) -> None:
        """``page_cache_ra_order``: the window [start, start + size) in naturally aligned
        folios of the window's order, stopping at a cached page (then page by page)."""
        ra = f.ra
        start = index = ra.start
        limit = start + ra.size - 1
        mark: int | None = start + ra.size - ra.async_size
        if f.eof_page is not None and f.eof_page <= limit:
            limit, mark = f.eof_page, None  # the end of the file: no mark
        order = min(self.max_order, ra.order, max(ra.size, 1).bit_length() - 1)
        ra.order = order
        blocked = False
        while index <= limit:
            o = _low_bit(index) if index and index & ((1 << order) - 1) else order
            o = min(o, order)
            while o > 0 and index + (1 << o) - 1 > limit:
                o -= 1
            if f.any_cached(index, index + (1 << o)):
                blocked = True
                break
            f.add(index, 1 << o)
            if mark is not None and index == mark - mark % (1 << o):
                f.marked.add(index)
            index += 1 << o
        if index > start:
            self.io(name, start, index - start)
        if blocked and ra.size > index - start:
            self._unbounded(name, f, index, ra.size - (index - start), ra.async_size)

    def _sync(self, name: str, f: _File, index: int, req: int) -> None:
        """``page_cache_sync_ra``: a cache miss at ``index`` for ``req`` pages."""
        ra = f.ra
        maxp = self._max_pages(req)
        prev = ra.prev_pos // PAGE if ra.prev_pos >= 0 else None
        if not index or req > maxp or (prev is not None and 0 <= index - prev <= 1):
            ra.start, ra.size = index, init_ra_pages(req, maxp)
            ra.async_size = ra.size - req if ra.size > req else ra.size >> 1
        else:
            miss = f.prev_miss(index - 1, maxp)
            contig, wrapped = index - miss - 1, miss < 0
            if contig <= req:  # a small random read: its own pages, state untouched
                self._unbounded(name, f, index, req, 0)
                return
            if wrapped:  # cached from the start of the file: a long stream
                contig *= 2
            ra.start, ra.size, ra.async_size = index, min(contig + req, maxp), 1
        ra.order = 0
        self._ra_order(name, f)

    def _async(self, name: str, f: _File, folio: int, req: int) -> None:
        """``page_cache_async_ra``: the application reached the marked folio ``folio``."""
        f.marked.discard(folio)
        ra = f.ra
        maxp = self._max_pages(req)
        n = f.npages[folio]
        expected = ra.start + ra.size - ra.async_size
        if folio == expected - expected % n:
            ra.start += ra.size
            ra.size = max(ra.size, next_ra_pages(ra.size, maxp))
        else:  # a mark without its state (another open file, or interleaved streams)
            start = f.next_miss(folio + 1, maxp)
            if not start or start - folio > maxp:
                return
            ra.start = start
            ra.size = next_ra_pages(start - folio + req, maxp)
        ra.order += 2
        align = 1 << min(ra.order, _low_bit(maxp))
        end = ra.start + ra.size
        aligned = end - end % align
        if aligned > ra.start:
            ra.size -= end - aligned
        ra.async_size = ra.size
        self._ra_order(name, f)

    # -- mm/filemap.c --------------------------------------------------------------------
    def read(self, name: str, f: _File, offset: int, size: int) -> None:
        """``filemap_read`` of ``size`` bytes at ``offset``."""
        for _ in self._reads(name, f, offset, size):
            pass

    def _reads(self, name: str, f: _File, offset: int, size: int) -> Iterator[None]:
        """:meth:`read`, pausing after each read-ahead it starts: where the reading thread
        waits for the device, and another thread's read gets in first."""
        end = offset + size
        if f.eof_page is not None:
            end = min(end, (f.eof_page + 1) * PAGE)
        pos = offset
        while pos < end:
            index, last = pos // PAGE, -(-end // PAGE)
            if not f.cached(index):
                if self.ra_pages:
                    self._sync(name, f, index, last - index)
                if not f.cached(index):  # no read-ahead: the page alone
                    f.add(index, 1)
                    self.io(name, index, 1)
                yield
            page, folios, marked = index, 0, None
            while page < last and f.cached(page) and folios < BATCH_FOLIOS:
                head = int(f.head[page])
                folios += 1
                page = head + f.npages[head]
                if head in f.marked:
                    marked = head
                    break
            if marked is not None and self.ra_pages:
                self._async(name, f, marked, last - marked)
                yield
            pos = min(end, page * PAGE)
        f.ra.prev_pos = end

    def _file(self, name: str, sizes: dict[str, int]) -> _File:
        f = self.files.get(name)
        if f is None:
            eof = (sizes[name] - 1) // PAGE if name in sizes else None
            f = self.files[name] = _File(eof)
        return f

    def _thread(self, reqs: Sequence[Request], sizes: dict[str, int], reopen: bool
                ) -> Iterator[None]:
        """One thread's requests, one after another, through its own open file where
        ``reopen`` (its own read-ahead state), pausing where it waits for the device."""
        ra, last_end = _Ra(), -1
        for r in reqs:
            f = self._file(r.file, sizes)
            if not reopen:
                ra = f.ra  # one open file, shared
            elif r.offset != last_end:
                ra = _Ra()
            last_end = r.offset + r.size
            f.ra = ra
            for _ in self._reads(r.file, f, r.offset, r.size):
                yield
                f.ra = ra  # another thread ran meanwhile
            f.last_end = last_end

    def _concurrent(self, group: Sequence[Request], sizes: dict[str, int], reopen: bool
                    ) -> None:
        """The batches of one call, each a thread, taking turns at each wait for the device:
        a thread's read-ahead reaches the pages another thread's read already asked for."""
        batches: dict[int, list[Request]] = {}
        for r in group:
            batches.setdefault(r.batch, []).append(r)
        take_turns(self._thread(rs, sizes, reopen) for rs in batches.values())

    def replay(self, requests: Iterable[Request], sizes: dict[str, int], reopen: bool
               ) -> None:
        """``requests`` in order; the batches of one ``call`` (two or more) concurrently."""
        for group in calls(r for r in requests if r.size > 0):
            if len({r.batch for r in group}) > 1:
                self._concurrent(group, sizes, reopen)
            else:
                for q in group:
                    self._one(q, sizes, reopen)

    def _one(self, r: Request, sizes: dict[str, int], reopen: bool) -> None:
        f = self._file(r.file, sizes)
        if reopen and r.offset != f.last_end:
            f.ra = _Ra()
        f.last_end = r.offset + r.size
        self.read(r.file, f, r.offset, r.size)
