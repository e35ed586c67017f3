"""Attribution of synthetic request streams onto synthetic basket maps (exact), the strace
parser, and the reader rules (each fires on its pattern, stays silent without it)."""

from __future__ import annotations

import numpy as np
import pytest

from hep_advisor.models.attribution import (
    attribute,
    busy_s,
    classify,
    device_from_trace,
    reread_bytes,
)
from hep_advisor.models.replay import LocalDevice, python_buffered, root_getentry, uproot_iterate
from hep_advisor.models.replay.requests import Request
from hep_advisor.probes.basketmap import Region, synthetic_map
from hep_advisor.probes.trace import TracedRead
from hep_advisor.probes.trace.strace import parse
from hep_advisor.rules.reader import TraceFacts, step_rule, treecache_rule

BRANCHES, BASKETS, SIZE, PER = 4, 30, 6000, 100
ACCESS, BW = 0.008, 70e6


def interleaved(path: str = "/data/f.root", size: int = SIZE):
    rows = []
    for i in range(BASKETS):
        for b in range(BRANCHES):
            rows.append((f"b{b}", 1000 + (i * BRANCHES + b) * size, size, i * PER,
                         (i + 1) * PER))
    end = 1000 + BASKETS * BRANCHES * size
    regions = (Region("header", 0, 300), Region("keys", end, 500),
               Region("streamers", end + 500, 2000), Region("tree", end + 2500, 1500))
    return synthetic_map(rows, entries=BASKETS * PER, path=path, regions=regions,
                         file_bytes=end + 5000)


def by_branch(path: str = "/data/g.root", size: int = 40_000):
    """Each branch's baskets in one run (as after a fast merge): an entry loop jumps."""
    rows = [(f"b{b}", 1000 + (b * BASKETS + i) * size, size, i * PER, (i + 1) * PER)
            for b in range(BRANCHES) for i in range(BASKETS)]
    return synthetic_map(rows, entries=BASKETS * PER, path=path)


def timed(reqs: list[Request], cold: bool = True, reopen: bool = False) -> list[TracedRead]:
    """The stream as traced reads, one after another, each taking what the device model says
    (cold) or nothing much (warm)."""
    dev = LocalDevice.from_rates(BW / 1e6, 1 / ACCESS)
    out, t, before = [], 0.0, 0.0
    for i, r in enumerate(reqs):
        if cold:
            total = dev.replay(reqs[: i + 1], reopen=reopen).time_s
            d, before = max(total - before, 2e-5), total
        else:
            d = 1e-5
        out.append(TracedRead(r.file, r.offset, r.size, t, d))
        t += d + 1e-4
    return out


def test_uproot_default_step_keys_are_attributed_exactly() -> None:
    m = interleaved()
    reqs = list(python_buffered(uproot_iterate(m, step_size="100 MB"), 4096,
                                {m.path: m.file_bytes}))
    cs = classify(timed(reqs), m)
    kinds = [c.kind for c in cs]
    assert kinds.count("key") == BRANCHES * BASKETS
    keyed = {bk for c in cs if c.kind == "key" for bk in c.baskets}
    assert keyed == {(b, i) for b in range(BRANCHES) for i in range(BASKETS)}
    assert kinds.count("metadata") == len([r for r in uproot_iterate(m) if r.kind == "meta"])
    # the key reads come first, the data after
    assert kinds.index("basket") > max(i for i, k in enumerate(kinds) if k == "key")
    att = attribute(timed(reqs), {m.path: m}, {m.path: 1})
    (f,) = att.files
    assert f.key_baskets == BRANCHES * BASKETS
    assert f.baskets_read == BRANCHES * BASKETS
    assert f.bytes_needed == BRANCHES * BASKETS * SIZE
    assert f.branches_read == ("b0", "b1", "b2", "b3")
    assert att.requests == len(reqs) and att.bytes == sum(r.size for r in reqs)
    names = [p.name for p in att.phases]
    assert names == ["opening", "pre-pass", "reading", "processing"]


def test_small_baskets_read_whole_by_the_key_buffer_are_still_keys() -> None:
    m = interleaved(size=1500)  # smaller than the 4 kB buffer: a key read covers the basket
    reqs = list(python_buffered(uproot_iterate(m, step_size="100 MB"), 4096,
                                {m.path: m.file_bytes}))
    cs = classify(timed(reqs), m)
    assert sum(c.kind == "key" for c in cs) == BRANCHES * BASKETS


def test_entry_step_and_root_have_no_keys() -> None:
    m = interleaved()
    for reqs in (list(python_buffered(uproot_iterate(m, step_size=500), 4096,
                                      {m.path: m.file_bytes})),
                 root_getentry(m, cache_bytes=0)):
        cs = classify(timed(reqs), m)
        assert not any(c.kind == "key" for c in cs)
    cs = classify(timed(root_getentry(m, cache_bytes=0)), m)
    basket = [c for c in cs if c.kind == "basket"]
    assert len(basket) == BRANCHES * BASKETS and all(len(c.baskets) == 1 for c in basket)


def test_subset_amplification_and_other() -> None:
    m = interleaved()
    reqs = root_getentry(m, ["b1"], cache_bytes=0)
    reqs.append(Request(m.path, m.file_bytes - 10, 10))  # past the tree: other
    att = attribute(timed(reqs), {m.path: m})
    (f,) = att.files
    assert f.branches_read == ("b1",)
    assert f.bytes_needed == BASKETS * SIZE
    assert f.by_kind["other"] == (1, 10)
    assert att.amplification == pytest.approx(f.bytes / f.bytes_needed)


def test_reread_and_busy_exact() -> None:
    reads = [TracedRead("f", 0, 100, 0.0, 1.0), TracedRead("f", 50, 100, 0.5, 1.0),
             TracedRead("f", 400, 10, 3.0, 0.5)]
    assert reread_bytes(reads) == 50
    assert busy_s(reads) == pytest.approx(2.0)


STRACE = """\
101 1700000000.000100 openat(AT_FDCWD</w>, "/d/f.root", O_RDONLY) = 3</d/f.root> <0.000020>
101 1700000000.000200 lseek(3</d/f.root>, 1296, SEEK_SET) = 1296 <0.000010>
101 1700000000.000300 read(3</d/f.root>, ""..., 4096) = 4096 <0.008000>
102 1700000000.000400 pread64(3</d/f.root>, ""..., 700, 9000 <unfinished ...>
101 1700000000.000500 read(3</d/f.root>, ""..., 10) = 10 <0.000010>
102 1700000000.000900 <... pread64 resumed>) = 700 <0.000500>
101 1700000000.001000 close(3</d/f.root>) = 0 <0.000010>
"""


def test_strace_parser() -> None:
    calls = parse(STRACE.splitlines())
    reads = [(c.offset, c.size, c.pid) for c in calls if c.call == "read"]
    assert reads == [(1296, 4096, 101), (5392, 10, 101), (9000, 700, 102)]
    assert [c.call for c in calls].count("open") == 1
    pread = next(c for c in calls if c.pid == 102)
    assert pread.start == pytest.approx(1700000000.0004) and pread.duration == 0.0005


def _facts(reqs: list[Request], m, cold: bool = True, opens: int = 1) -> TraceFacts:
    reads = timed(reqs, cold, reopen=opens > 1)
    wall = reads[-1].start_s + reads[-1].duration_s + 0.5
    att = attribute(reads, {m.path: m}, {m.path: opens}, wall)
    return TraceFacts(att, (m,), wall, device_from_trace(reads))


def test_u001_fires_on_a_key_prepass_only() -> None:
    m = interleaved(size=40_000)  # keys 160 kB apart: beyond the read-ahead, each one a seek
    sizes = {m.path: m.file_bytes}
    default = list(python_buffered(uproot_iterate(m, step_size="100 MB"), 4096, sizes))
    f = step_rule(_facts(default, m, opens=200))
    assert f is not None and f.code == "U001"
    assert f.argument == "step_size" and f.value == str(BASKETS * PER)
    assert f.speedup_low <= f.predicted_speedup <= f.speedup_high
    assert f.predicted_speedup > 1.5
    stepped = list(python_buffered(uproot_iterate(m, step_size=3000), 4096, sizes))
    assert step_rule(_facts(stepped, m, opens=20)) is None
    assert step_rule(_facts(default, m, cold=False, opens=200)) is None  # warm: no device


def test_u005_fires_without_treecache_only() -> None:
    m = by_branch()
    f = treecache_rule(_facts(root_getentry(m, cache_bytes=0), m))
    assert f is not None and f.code == "U005" and f.argument == "SetCacheSize"
    assert f.predicted_speedup > 1.05
    assert treecache_rule(_facts(root_getentry(m, cache_bytes=10_000_000), m)) is None
    sizes = {m.path: m.file_bytes}
    uproot = list(python_buffered(uproot_iterate(m, step_size=3000), 4096, sizes))
    assert treecache_rule(_facts(uproot, m, opens=20)) is None


def test_device_from_trace() -> None:
    reads = [TracedRead("f", i * 10**6, 4096, float(i), ACCESS) for i in range(5)]
    reads.append(TracedRead("f", 10**8, 7 * 10**6, 9.0, ACCESS + 0.1))
    d = device_from_trace(reads)
    assert d is not None
    assert d.access_s == pytest.approx(ACCESS)
    assert d.mb_per_s == pytest.approx(70.0)
    assert device_from_trace([TracedRead("f", 0, 4096, 0.0, 1e-5)] * 5) is None
    assert np.isfinite(d.mb_per_s_range[1])


def test_device_access_from_block_counters() -> None:
    # a throttle that lets reads through in bursts: 40 key reads, 10 of them waited 0.1 s,
    # the rest nothing; the device served 40 reads of 4 KiB and one of 7 MB in 1.5 s of I/O
    reads = [TracedRead("f", i * 10**6, 4096, float(i), 0.1 if i % 4 == 0 else 1e-3)
             for i in range(40)]
    reads.append(TracedRead("f", 10**8, 7 * 10**6, 50.0, 0.1 + 0.5))
    slow = device_from_trace(reads)
    assert slow is not None and slow.device_reads is None
    assert slow.access_s == pytest.approx(1e-3)  # the median small read (the old estimate)
    io = 10 * 0.1 + 30 * 1e-3 + 0.6
    d = device_from_trace(reads, device_reads=41, device_bytes=40 * 4096 + 7 * 10**6)
    assert d is not None and d.device_reads == 41
    expected = (io - (40 * 4096 + 7 * 10**6) / (d.mb_per_s * 1e6)) / 41
    assert d.access_s == pytest.approx(expected)
    assert d.access_s_range[0] <= d.access_s <= d.access_s_range[1]
    assert d.mb_per_s == pytest.approx(7 / (0.6 - d.access_s), rel=1e-3)  # uses it too
    # counters that do not explain the time (no reads, or the transfer alone takes longer):
    # the estimate from the reads' durations
    for reads_n, nbytes in ((0, 0), (41, 10**10)):
        fb = device_from_trace(reads, device_reads=reads_n, device_bytes=nbytes)
        assert fb is not None and fb.device_reads is None
        assert fb.access_s == pytest.approx(slow.access_s)


def test_counted_access_is_paid_per_replayed_access() -> None:
    from dataclasses import replace

    from hep_advisor.rules.reader import per_replayed_access

    m = interleaved(size=40_000)
    sizes = {m.path: m.file_bytes}
    default = list(python_buffered(uproot_iterate(m, step_size="100 MB"), 4096, sizes))
    facts = _facts(default, m, opens=200)
    assert facts.device is not None
    assert per_replayed_access(facts, reopen=True) == facts.device  # no counters: as traced
    counted = replace(facts.device, device_reads=50)
    d = per_replayed_access(replace(facts, device=counted), reopen=True)
    seeks = LocalDevice(counted.mb_per_s, counted.access_s).replay(
        [Request(c.read.file, c.read.offset, c.read.size) for c in facts.attribution.reads],
        sizes, reopen=True).seeks
    assert seeks > 50
    assert d is not None and d.access_s == pytest.approx(counted.access_s * 50 / seeks)


def test_root_magic_is_checked_beyond_four_bytes(tmp_path) -> None:
    from hep_advisor.probes.trace.capture import is_root_file

    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    fake = tmp_path / "f.root"
    fake.write_bytes(b"root" + (62206).to_bytes(4, "big") + (100).to_bytes(4, "big"))
    assert not is_root_file(str(text))
    assert is_root_file(str(fake))


def test_trace_notes_one_line_per_finding() -> None:
    from hep_advisor.findings.trace import (
        ReaderFinding,
        RequestsByKind,
        TimeSplit,
        Trace,
        trace_notes,
    )

    f = ReaderFinding("U001", "t", 2.0, 1.5, 3.0, "a(step_size=5)\nmore", "step_size", "5")
    t = Trace("cmd", 0, 1.0, 0.5, 0.2, 0.1, (), RequestsByKind(0, 0, 0, 0), (),
              TimeSplit(0.2, 0.1, 0.4, 0.2), (f,))
    (note,) = trace_notes(t)
    assert note.startswith("U001") and "2.00x (1.50-3.00)" in note and "\n" not in note


def test_few_large_reads_take_the_sequential_rate() -> None:
    # one 20 MB read served in pieces after a scattered pre-pass: 12 MB/s; a cold sequential
    # read measured 70 MB/s after the run
    reads = [TracedRead("f", i * 10**6, 4096, float(i), ACCESS) for i in range(5)]
    reads.append(TracedRead("f", 10**8, 20 * 10**6, 9.0, 20 / 12 + ACCESS))
    d = device_from_trace(reads, streaming_mb_per_s=70.0)
    assert d is not None and d.streamed and d.large_reads == 1
    assert d.mb_per_s == pytest.approx(70.0)
    assert d.mb_per_s_range[0] == pytest.approx(12.0, rel=1e-3) and d.mb_per_s_range[1] == 70.0
    many = reads + [TracedRead("f", 2 * 10**8 + i * 10**7, 7 * 10**6, 20.0 + i, 0.1 + ACCESS)
                    for i in range(3)]
    d = device_from_trace(many, streaming_mb_per_s=10.0)
    assert d is not None and not d.streamed and d.mb_per_s == pytest.approx(70.0)


# -- an RNTuple's pages ------------------------------------------------------------------------


def test_rntuple_pages_are_attributed_as_baskets_without_keys() -> None:
    """An RNTuple file (a real one, written by ROOT) maps onto its pages: each top-level
    field's pages, the envelopes as metadata; a page read whole, or twice, is data (a page has
    no key to read first)."""
    from pathlib import Path

    import uproot

    from hep_advisor.probes.pagemap import is_page_map, read_page_map
    from hep_advisor.probes.rntuple import read_rntuple

    path = str(Path(__file__).parent / "data" / "real-world" /
               "ntpl001_staff_rntuple_v1-0-0-0.root")
    m = read_page_map(path)
    with uproot.open(path) as f:
        meta = read_rntuple(f["Staff"])
    assert is_page_map(m) and m.tree == "Staff" and m.entries == meta.entries == 3354
    assert [b.name for b in m.branches] == [fm.name for fm in meta.fields]
    assert sum(b.compressed_bytes for b in m.branches) == meta.compressed_bytes
    assert m.baskets == meta.meta.pages
    assert np.all(m.branches[0].keylen == 0)
    names = {r.name for r in m.regions}
    assert {"rntuple_header", "rntuple_footer", "rntuple_pages", "header"} <= names
    age = m.branch("Age")
    page = (int(age.seek[0]), int(age.nbytes[0]))
    head = m.region("rntuple_header")
    assert head is not None
    reads = [TracedRead(path, head.offset, head.size, 0.0, 0.001),
             TracedRead(path, page[0], page[1], 0.1, 0.001),
             TracedRead(path, page[0], page[1], 0.2, 0.001)]  # read again
    kinds = [c.kind for c in classify(reads, m)]
    assert kinds == ["metadata", "basket", "basket"]
    att = attribute(reads, {path: m})
    (fa,) = att.files
    assert fa.bytes_needed == page[1] and fa.branches_read == ("Age",)
    assert fa.reread_bytes == page[1] and fa.key_baskets == 0
