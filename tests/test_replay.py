"""Replay: exact request streams from tiny basket maps, and the device model's limits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import write_flat
from hep_advisor.models.replay import (
    CoalesceConfig,
    Link,
    LocalDevice,
    Request,
    coalesce,
    python_buffered,
    root_getentry,
    root_open,
    stats,
    uproot_arrays,
    uproot_files,
    uproot_iterate,
    uproot_open,
)
from hep_advisor.models.replay.readers import _read_buffers
from hep_advisor.probes.basketmap import Region, read_basket_map, synthetic_map

KiB, MiB = 1024, 1024 * 1024


def two_branches(entries: int = 20, clusters: list[int] | None = None, **kw: object):
    """a0 b0 a1 b1, 100 bytes each from offset 1000; each basket holds half the entries."""
    half = entries // 2
    return synthetic_map(
        [
            ("a", 1000, 100, 0, half),
            ("a", 1200, 100, half, entries),
            ("b", 1100, 100, 0, half),
            ("b", 1300, 100, half, entries),
        ],
        entries=entries,
        clusters=clusters,
        **kw,  # type: ignore[arg-type]
    )


def data(reqs: list[Request]) -> list[tuple[int, int, int]]:
    return [(r.offset, r.size, r.batch) for r in reqs if r.kind == "data"]


# --- uproot ----------------------------------------------------------------------------------


def test_coalesce_rules() -> None:
    # gaps up to 32 KiB merge; the first request closes once it holds 32 KiB
    assert coalesce([(0, 100), (100, 200), (40000, 40100), (200000, 200100)]) == [
        [(0, 200), (40000, 40100), (200000, 200100)]
    ]
    assert coalesce([(0, 10), (32778, 32800)]) == [[(0, 32800)]]
    assert coalesce([(0, 10), (32779, 32800)]) == [[(0, 10), (32779, 32800)]]
    assert coalesce([(0, 40000), (100000, 100010), (200000, 200010)]) == [
        [(0, 40000)],
        [(100000, 100010), (200000, 200010)],
    ]
    six = 6 * MiB
    assert len(coalesce([(0, six), (7 * MiB, 7 * MiB + six), (14 * MiB, 14 * MiB + six)])) == 3
    cfg = CoalesceConfig(max_request_ranges=2, min_first_request_bytes=10**9)
    ranges = [(i * 100_000, i * 100_000 + 10) for i in range(5)]
    assert [len(r) for r in coalesce(ranges, cfg)] == [2, 2, 1]


def test_uproot_entry_steps() -> None:
    m = two_branches()
    assert data(uproot_iterate(m, step_size=10, open_file=False)) == [
        (1000, 200, 0),
        (1200, 200, 1),
    ]
    # baskets of the previous step are kept: step 5 reads the same
    assert data(uproot_iterate(m, step_size=5, open_file=False)) == [(1000, 200, 0), (1200, 200, 1)]
    assert data(uproot_iterate(m, step_size=15, open_file=False)) == [(1000, 400, 0)]
    assert data(uproot_arrays(m, ["b"], open_file=False)) == [(1100, 300, 0)]
    assert data(uproot_iterate(m, ["a"], step_size=10, entry_start=12, open_file=False)) == [
        (1200, 100, 0)
    ]


def test_uproot_memory_step_reads_every_key_first() -> None:
    m = two_branches()
    reqs = uproot_iterate(m, step_size="100 MB", open_file=False)
    keys = [(r.offset, r.size) for r in reqs if r.kind == "key"]
    assert keys == [(1000, 34), (1200, 34), (1100, 34), (1300, 34)]  # branch by branch
    assert reqs[:4] == [Request(m.path, o, s, "key") for o, s in keys]
    assert data(reqs) == [(1000, 400, 0)]


def test_uproot_open_and_files() -> None:
    regions = [
        Region("keys", 5000, 90),
        Region("tree", 3000, 1500),
        Region("tree_keylen", 3000, 46),
        Region("streamers", 4500, 400),
        Region("streamers_keylen", 4500, 64),
    ]
    m = two_branches(regions=regions, file_bytes=5090)
    assert [(r.offset, r.size) for r in uproot_open(m)] == [
        (0, 403),
        (5000, 90),
        (3046, 1454),
        (4500, 34),
        (4564, 336),
    ]
    assert len(uproot_open(m, streamers=False)) == 3
    both = uproot_files([m, m], step_size=10)
    assert stats(both).by_kind["meta"][0] == 5 + 3  # streamers once per process
    assert [r.batch for r in both if r.kind == "data"] == [0, 1, 2, 3]


def test_python_buffered_reads() -> None:
    reqs = [Request("f", 0, 403), Request("f", 5000, 10000), Request("f", 20000, 8192)]
    out = list(python_buffered(reqs, 4096, {"f": 24000}))
    assert [(r.offset, r.size) for r in out] == [
        (0, 4096),
        (5000, 8192),
        (13192, 4096),
        (20000, 8192),
    ]
    assert [
        (r.offset, r.size) for r in python_buffered([Request("f", 23000, 100)], 4096, {"f": 24000})
    ] == [(23000, 1000)]


def test_uproot_replay_matches_uproot_counters(tmp_path: Path) -> None:
    import uproot

    path = write_flat(tmp_path / "f.root", entries=3000, branches=5, chunks=3)
    m = read_basket_map(str(path))
    with uproot.open(path) as f:
        for _ in f["t"].iterate(step_size=1000, library="np"):
            pass
        source = f.file.source
        real = source.num_requested_bytes
    replayed = uproot_iterate(m, step_size=1000, streamers=False)
    assert stats(replayed).bytes == real


# --- ROOT ------------------------------------------------------------------------------------


def test_root_without_cache_one_read_per_basket_in_entry_order() -> None:
    m = synthetic_map(
        [
            ("a", 1000, 100, 0, 10),
            ("a", 1200, 100, 10, 20),
            ("b", 1100, 100, 0, 15),
            ("b", 1300, 100, 15, 20),
        ],
        entries=20,
    )
    reqs = root_getentry(m, cache_bytes=0, open_file=False)
    assert [(r.offset, r.size, r.batch) for r in reqs] == [
        (1000, 100, -1),
        (1100, 100, -1),
        (1200, 100, -1),
        (1300, 100, -1),
    ]
    assert [r.offset for r in root_getentry(m, ["b"], cache_bytes=0, open_file=False)] == [
        1100,
        1300,
    ]


def test_root_open_reads() -> None:
    regions = [Region("keys", 5000, 90), Region("streamers", 4500, 400), Region("tree", 3000, 1500)]
    m = two_branches(regions=regions, file_bytes=5090)
    assert [(r.offset, r.size) for r in root_open(m)] == [
        (0, 300),
        (5000, 90),
        (4500, 400),
        (3000, 1500),
    ]


def test_root_cache_learning_then_cluster_fill() -> None:
    m = two_branches(entries=1000, clusters=[0, 500, 1000])
    reqs = root_getentry(m, cache_bytes=10**6, open_file=False)
    # prefill: every branch's baskets for the 100 learning entries, one vector read; then
    # the second cluster at its first miss
    assert data(reqs) == [(1000, 200, 0), (1200, 200, 1)]


def test_root_cache_fill_runs_on_while_clusters_fit() -> None:
    m = two_branches(entries=1000, clusters=[0, 500, 1000])
    assert data(root_getentry(m, cache_bytes=10**6, learn_entries=0, open_file=False)) == [
        (1000, 400, 0)
    ]
    # a cache too small for two clusters: one fill per cluster
    assert data(root_getentry(m, cache_bytes=250, learn_entries=0, open_file=False)) == [
        (1000, 200, 0),
        (1200, 200, 1),
    ]


def test_read_buffers_groups_within_readahead() -> None:
    m = two_branches()
    out = _read_buffers(m, [(300000, 100), (1000, 100), (0, 100)], 3, 256000)
    assert [(r.offset, r.size, r.batch) for r in out] == [(0, 1100, 3), (300000, 100, 3)]
    out = _read_buffers(m, [(0, 300000), (300000, 10)], 0, 256000)  # adjacent: merged
    assert [(r.offset, r.size) for r in out] == [(0, 300010)]


def test_root_cache_vetoes_unused_cached_baskets() -> None:
    # The first fill runs on into cluster 1: a's and b's baskets fit, c's would overflow the
    # cache and is left out (the next fill starts at cluster 1).  All blocks lie within the
    # 256 kB read-ahead span: one read, gaps included.  At cluster 1 the new fill vetoes b's
    # basket (cached, not yet used) and fetches c's; b's is then read on its own.
    m = synthetic_map(
        [
            ("a", 0, 100, 0, 50),
            ("a", 300, 100, 50, 100),
            ("c", 100, 100, 0, 50),
            ("c", 400, 500, 50, 100),
            ("b", 200, 50, 0, 50),
            ("b", 1300, 50, 50, 100),
        ],
        entries=100,
        clusters=[0, 50, 100],
    )
    reqs = root_getentry(m, cache_bytes=700, learn_entries=0, open_file=False)
    assert data(reqs) == [(0, 1350, 0), (400, 500, 1), (1300, 50, -1)]
    # a basket larger than the cache is never cached: read on its own, nothing is full
    big = synthetic_map(
        [
            ("a", 0, 100, 0, 50),
            ("a", 300, 100, 50, 100),
            ("c", 100, 100, 0, 50),
            ("c", 400, 900, 50, 100),
        ],
        entries=100,
        clusters=[0, 50, 100],
    )
    assert data(root_getentry(big, cache_bytes=700, learn_entries=0, open_file=False)) == [
        (0, 400, 0),
        (400, 900, -1),
    ]


# --- device and link -------------------------------------------------------------------------


def test_sequential_reads_approach_bandwidth() -> None:
    dev = LocalDevice.from_rates(70, 120, read_ahead_kb=128)
    t = dev.replay([Request("f", i * 64 * KiB, 64 * KiB) for i in range(1600)])
    assert t.mb_per_s == pytest.approx(70, rel=0.02)
    assert t.seeks == 1
    # 4 KiB reads: read-ahead makes them large; what is lost is one access and the window
    # read ahead past the last request
    small = dev.replay([Request("f", i * 4096, 4096) for i in range(5000)])
    assert small.mb_per_s == pytest.approx(70, rel=0.05)
    assert small.seeks == 1


def test_random_small_reads_approach_iops() -> None:
    dev = LocalDevice.from_rates(70, 120, read_ahead_kb=128)
    rng = np.random.default_rng(1)
    pages = rng.choice(2**18, 600, replace=False)
    reqs = [Request("f", int(p) * 4096, 4096) for p in pages]
    t = dev.replay(reqs)
    assert t.requests / t.time_s == pytest.approx(120, rel=1e-6)
    assert t.device_bytes == 600 * 4096 and t.seeks == 600


def test_page_cache_hits_are_free() -> None:
    dev = LocalDevice.from_rates(500, 10_000)
    reqs = [Request("f", i * 100_000, 5000) for i in range(50)]
    once, twice = dev.replay(reqs), dev.replay(reqs + reqs)
    assert twice.time_s == pytest.approx(once.time_s)
    assert twice.cached_bytes == once.cached_bytes + 50 * 5000
    warm = LocalDevice(500, 1e-4, warm=True).replay(reqs)
    assert warm.time_s == 0 and warm.device_bytes == 0


def test_read_ahead_windows() -> None:
    dev = LocalDevice(100, 0.01, read_ahead_kb=128)
    first = dev.replay([Request("f", 0, 1000)])
    assert first.device_bytes == 16 * KiB  # initial window: 1 page x 4
    off = dev.replay([Request("f", 40 * KiB * 100, 1000)])
    assert off.device_bytes == 4 * KiB  # a random read: its own page
    none = LocalDevice(100, 0.01, read_ahead_kb=0)
    assert none.replay([Request("f", i * 4096, 4096) for i in range(8)]).seeks == 1


def test_link_round_trips() -> None:
    reqs = [Request("f", i * 1000, 1000, batch=i // 5) for i in range(10)]
    link = Link(rtt_s=0.01, mb_per_s=100)
    assert link.replay(reqs).time_s == pytest.approx(2 * 0.01 + 10_000 / 100e6)
    alone = Link(rtt_s=0.01, mb_per_s=100, vector_reads=False)
    assert alone.replay(reqs).time_s == pytest.approx(10 * 0.01 + 10_000 / 100e6)


def test_memory_step_size_matches_uproot(tmp_path: Path) -> None:
    import math

    import uproot

    from hep_advisor.models.replay import uproot_step_entries

    path = write_flat(
        tmp_path / "z.root", entries=30000, branches=5, chunks=3, compression=uproot.ZLIB(1)
    )
    m = read_basket_map(str(path))
    with uproot.open(path) as f:
        for text, size in (("20 kB", 20_000), ("100 kB", 100_000)):
            real = sum(1 for _ in f["t"].iterate(step_size=text, library="np"))
            step = uproot_step_entries(m, m.branches, 0, m.entries, size)
            assert math.ceil(m.entries / step) == real
