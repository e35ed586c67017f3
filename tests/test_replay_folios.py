"""The replay's read path over large folios (models.replay.folios), on tiny request streams.

The expected device I/Os are derived by hand from the kernel's rules (mm/readahead.c); each
case also checks that order-0 pages (the model for kernels without large folios) give the
old, different split, so the tests fail on a model without the folio rules."""

from __future__ import annotations

import pytest

from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.folios import large_folios
from hep_advisor.models.replay.requests import Request

P = 4096


def ios(reqs: list[Request], size: int, folios: bool,
        reopen: bool = False) -> list[tuple[int, int]]:
    """The device I/Os as (first page, pages), 128 KiB read-ahead, 1280 KiB largest I/O."""
    log: list[tuple[str, int, int]] = []
    dev = LocalDevice(100, 0.01, 128, max_io_kb=1280, large_folios=folios)
    dev.replay(reqs, {"f": size}, reopen=reopen, log=log)
    return [(o // P, n // P) for _, o, n in log]


def test_a_sequential_stream_grows_folio_orders_and_aligns_each_window() -> None:
    # 1000-byte reads through one open file of 64 pages.  Page 0: a window of 4 order-0 pages
    # (mark at page 1).  Page 1: next window 4..11, order 2 (folios 4 and 8, mark on folio 4).
    # Folio 4: order 4, the window 12..27 ends aligned to 16 pages: 12..15 (one folio).
    # Folio 12: 16..23 (order 3, 8 pages); folio 16: 24..39 cut at 32 -> 24..31; folio 24:
    # 32..47 (order 4); folio 32: 48..79 cut at 64 -> 48..63.
    seq = [Request("f", o, 1000) for o in range(0, 64 * P, 1000)]
    assert ios(seq, 64 * P, True) == [(0, 4), (4, 8), (12, 4), (16, 8), (24, 8), (32, 16),
                                      (48, 16)]
    assert ios(seq, 64 * P, False) == [(0, 4), (4, 8), (12, 16), (28, 32), (60, 4)]


def test_a_window_stops_where_a_folio_would_cover_a_cached_page() -> None:
    # a 49-page file: page 0 (window 0..3, mark at page 1), pages 45-46 and 47-48 read alone;
    # then, through a new open, bytes 264.. covering pages 0..45: page 1's mark starts a
    # window 4..48 of order 2 (no previous state: the next miss after the mark, 4 - 1 pages,
    # plus the 45 requested, capped at the 45 pages a read this large may read ahead);
    # folios 4..43 go to the device as one I/O; the folio at 44 would cover cached page 45,
    # so the rest is read page by page: 44 alone
    size = 49 * P - 100
    reqs = [Request("f", 0, P), Request("f", 45 * P, 2 * P), Request("f", 47 * P, 2 * P - 100),
            Request("f", 264, 184320)]
    assert ios(reqs, size, True, reopen=True) == [(0, 4), (45, 2), (47, 2), (4, 40), (44, 1)]
    assert ios(reqs, size, False, reopen=True) == [(0, 4), (45, 2), (47, 2), (4, 41)]


def test_a_mark_without_state_looks_for_the_next_miss_one_page_late() -> None:
    # uproot's key pre-pass: 4 KiB reads, each through a new open, on a 49-page file.  Bytes
    # 264.. reach page 1's mark: no state, the next miss after it is page 4, a window 4..11
    # (4 - 1 + 1 pages ramped to 8) of 4-page folios, marked on folio 4.  Bytes 13027..
    # reach folio 4: the lookup of page 5 goes through folio 4's first slot, so the cursor
    # runs a slot behind and the miss at page 12 is reported at 13: a window 13..31 (13 - 4
    # + 1 pages ramped to 20, cut to end at a multiple of 4), marked on page 13 only.  Bytes
    # 45185.. need page 12: the look back from page 11 (inside folio 8, three slots behind)
    # finds 9 cached pages, a window of 10 pages from 12 that stops at cached page 13.
    size = 49 * P - 100
    reqs = [Request("f", 0, P), Request("f", 264, P), Request("f", 13027, P),
            Request("f", 45185, P)]
    assert ios(reqs, size, True, reopen=True) == [(0, 4), (4, 8), (13, 19), (12, 1)]
    assert ios(reqs, size, False, reopen=True) == [(0, 4), (4, 8), (12, 18), (30, 19)]


def test_the_count_and_bytes_of_a_folio_replay() -> None:
    seq = [Request("f", o, 1000) for o in range(0, 64 * P, 1000)]
    t = LocalDevice(100, 0.01, 128, large_folios=True).replay(seq, {"f": 64 * P})
    assert t.device_requests == 7 and t.device_bytes == 64 * P
    assert t.requested_bytes == sum(r.size for r in seq)
    assert t.cached_bytes > 0 and t.seeks == 1


@pytest.mark.parametrize(("release", "fs", "want"), [
    ("Linux 6.18.44-fc-v782", "ext4", True), ("6.16.0", "ext4", True),
    ("Linux 6.15.9", "ext4", False), ("Linux 5.18.1", "xfs", True),
    ("Linux 5.15.0", "xfs", False), ("Linux 6.18.1", "nfs", False),
    (None, "ext4", False), ("Linux 6.18.1", None, False), ("Darwin 24.1", "apfs", False)])
def test_large_folios_follow_the_kernel_and_the_file_system(release: str | None,
                                                            fs: str | None, want: bool) -> None:
    assert large_folios(release, fs) is want


def test_the_threads_of_one_call_take_turns_at_each_wait_for_the_device() -> None:
    """uproot reads a step's coalesced requests in threads of their own (one ``call``, each
    batch a thread, each range on a newly opened file).  Thread A reads pages 0-350, thread B
    pages 683-940 (a random read: exactly its pages).  Run at once, as the kernel runs them
    (seen with ``block_rq_issue`` on the held-out file of bench_trace_device.py: 4+320 683+258
    324+316 ... 640+43), A's third window stops at B's pages; replayed one after the other, A
    reads ahead through B's range and B finds it cached."""
    size = 2000 * P
    first = [Request("f", 0, P)]  # the open: page 0, a window of 4
    a = [Request("f", 0, 351 * P, "data", 0, 0)]
    b = [Request("f", 683 * P, 258 * P, "data", 1, 0)]
    together = ios(first + a + b, size, True, reopen=True)
    assert together == [(0, 4), (4, 320), (683, 258), (324, 316), (640, 43)]
    alone = ios(first + [r._replace(call=-1) for r in a + b], size, True, reopen=True)
    assert alone == [(0, 4), (4, 320), (324, 316), (640, 288), (928, 301), (1229, 291)]
    # order-0 pages (kernels without large folios): the same turns, A's window reading the
    # pages around B's
    assert ios(first + a + b, size, False, reopen=True) == [
        (0, 4), (4, 320), (683, 258), (324, 320), (644, 39), (941, 23)]
    assert ios(first + [r._replace(call=-1) for r in a + b], size, False, reopen=True) == [
        (0, 4), (4, 320), (324, 320), (644, 320)]


def test_traced_reads_of_threads_at_once_become_one_call() -> None:
    from types import SimpleNamespace as R

    from hep_advisor.models.replay.traced import concurrent

    reads = [R(file="f", offset=0, size=10, start_s=0.0, duration_s=0.02, pid=7),
             R(file="f", offset=99, size=10, start_s=0.001, duration_s=0.01, pid=8),
             R(file="f", offset=200, size=10, start_s=0.015, duration_s=0.01, pid=8),
             R(file="f", offset=300, size=10, start_s=0.1, duration_s=0.01, pid=7),
             R(file="f", offset=400, size=10, start_s=0.105, duration_s=0.01, pid=7)]
    got = [(r.offset, r.batch, r.call) for r in concurrent(reads)]
    # the first three overlap (two threads): one call, a batch per thread; the last two are
    # one thread's: one by one
    assert got == [(0, 7, 0), (99, 8, 0), (200, 8, 0), (300, -1, -1), (400, -1, -1)]
    untimed = [R(file="f", offset=r.offset, size=r.size, start_s=r.start_s) for r in reads]
    assert all(r.call == -1 for r in concurrent(untimed))
    # a thread's read that continues its last one (a buffered read's remainder, issued after
    # the others ended) stays in the call
    tail = R(file="f", offset=210, size=5, start_s=0.05, duration_s=0.001, pid=8)
    got = [(r.offset, r.batch, r.call) for r in concurrent([*reads[:3], tail, *reads[3:]])]
    assert got[:4] == [(0, 7, 0), (99, 8, 0), (200, 8, 0), (210, 8, 0)]
    assert got[4:] == [(300, -1, -1), (400, -1, -1)]
