"""hep_advisor.models.replay.traced: a trace's reads replayed through the local device (device reads
and bytes), on tiny synthetic traces whose device I/O is worked out by hand from the kernel's
read-ahead rules (mm/readahead.c: get_init_ra_size, get_next_ra_size, context read-ahead)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.requests import Request
from hep_advisor.models.replay.traced import (
    distinct_bytes,
    ranges,
    reads_from_trace,
    reopened,
    replay_trace,
)

KB = 1024
MB = 1 << 20


@dataclass(frozen=True)
class Read:  # the attributes of probes.trace.TracedRead the replay uses
    file: str
    offset: int
    size: int
    start_s: float


def disk(read_ahead_kb: int = 128, max_io_kb: int = 0) -> LocalDevice:
    return LocalDevice(70.0, 0.008, read_ahead_kb, max_io_kb=max_io_kb)


def test_sequential_stream_is_one_device_read_per_read_ahead_window() -> None:
    # 16 reads of 64 KiB from the start of a 1 MiB file, 128 KiB (32 pages) of read-ahead:
    # the first read opens a 32-page window (16 pages asked, rounded up, capped at 32) with
    # its async mark at page 16; each mark reached reads the next 32 pages: 8 windows, the
    # ninth would start at the end of the file.
    seq = [Read("f", i * 64 * KB, 64 * KB, 0.1 * i) for i in range(16)]
    log: list[tuple[str, int, int]] = []
    got = replay_trace(seq, disk(), {"f": MB}, log=log)
    assert log == [("f", i * 128 * KB, 128 * KB) for i in range(8)]
    assert (got.requests, got.requested_bytes) == (16, MB)
    assert (got.device_reads, got.device_bytes, got.distinct_bytes) == (8, MB, MB)
    # the queue's max_sectors_kb splits each 128 KiB window in two
    split = replay_trace(seq, disk(max_io_kb=64), {"f": MB})
    assert (split.device_reads, split.device_bytes) == (16, MB)
    # without the file's size the last window reads past its end
    assert replay_trace(seq, disk()).device_reads == 9


def test_sparse_reads_read_ahead_more_than_asked() -> None:
    # 4 KiB at every 16 KiB (pages 0, 4, ..., 60), one open file, 32 pages of read-ahead:
    # page 0: initial window of 4 pages (async mark at page 1, never read);
    # page 4: pages 0-3 cached from the file's start: context window 2 x 4 + 1 = 9 pages
    #         (4-12, mark at 12);
    # page 8 cached; page 12: the mark, next window 2 x 9 = 18 pages (13-30, mark at 13);
    # pages 16-28 cached (page 13 is never read: no further window);
    # pages 32..60: nothing cached just before them: each reads its own page (8 reads).
    # 11 device reads, 4 + 9 + 18 + 8 = 39 pages, for 16 pages asked.
    sparse = [Read("f", i * 16 * KB, 4 * KB, float(i)) for i in range(16)]
    got = replay_trace(sparse, disk(), {"f": 4 * MB}, {"f": 1})
    assert not got.files[0].reopened
    assert got.distinct_bytes == 64 * KB
    assert (got.device_reads, got.device_bytes) == (11, 39 * 4 * KB)


def test_far_apart_reads_read_their_own_pages() -> None:
    # 4 KiB at every 256 KiB: the first opens a 4-page window at the start of the file, each
    # other reads only its own page (nothing cached before it).
    far = [Read("f", i * 256 * KB, 4 * KB, float(i)) for i in range(16)]
    got = replay_trace(far, disk(), {"f": 4 * MB})
    assert (got.device_reads, got.device_bytes) == (16, 4 * 4 * KB + 15 * 4 * KB)


def test_reads_are_replayed_in_time_order_per_file() -> None:
    seq = [Read("f", i * 64 * KB, 64 * KB, 0.1 * i) for i in range(16)]
    other = [Read("g", i * 256 * KB, 4 * KB, 0.1 * i + 0.05) for i in range(4)]
    shuffled = seq + other
    random.Random(7).shuffle(shuffled)
    got = replay_trace(shuffled, disk(), {"f": MB, "g": MB})
    by = {f.path: f for f in got.files}
    assert (by["f"].device_reads, by["f"].device_bytes) == (8, MB)
    assert (by["g"].device_reads, by["g"].device_bytes) == (4, 4 * 4 * KB + 3 * 4 * KB)
    assert got.device_reads == 12


def test_reopened_where_opened_about_once_per_range() -> None:
    reqs = [Request("f", i * 16 * KB, 4 * KB) for i in range(16)]
    assert ranges(reqs) == 16
    assert reopened(16, reqs) and reopened(8, reqs)
    assert not reopened(1, reqs) and not reopened(2, reqs)
    # a range read in two calls (whole blocks, then a buffer fill) is one range
    split = [Request("f", 0, 8 * KB), Request("f", 8 * KB, 4 * KB)]
    assert ranges(split) == 1
    got = replay_trace(reqs, disk(), {"f": 4 * MB}, {"f": 16})
    assert got.files[0].reopened and got.files[0].opens == 16


def test_distinct_bytes_counts_overlaps_once() -> None:
    reqs = [Request("f", 0, 100), Request("f", 50, 100), Request("f", 400, 10),
            Request("f", 0, 10)]
    assert distinct_bytes(reqs) == 160


def test_reads_from_trace_json() -> None:
    trace = {"files": [{"path": "/d/a.root", "opens": 3}],
             "picture": {"files": ["/d/a.root"], "total": 2, "requests": [
                 {"file": 0, "start_s": 0.2, "offset": 4096, "size": 100, "kind": "basket"},
                 {"file": 0, "start_s": 0.1, "offset": 0, "size": 300, "kind": "metadata"}]}}
    reqs, opens = reads_from_trace(trace)
    assert reqs == [Request("/d/a.root", 0, 300), Request("/d/a.root", 4096, 100)]
    assert opens == {"/d/a.root": 3}
    trace["picture"]["total"] = 5000  # type: ignore[index]
    with pytest.raises(ValueError, match="keeps 2 of 5000"):
        reads_from_trace(trace)
    with pytest.raises(ValueError, match="no requests"):
        reads_from_trace({"files": []})
