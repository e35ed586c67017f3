"""The replay's CPU side: uproot's I/O hidden behind the read calls' CPU, and the per-call cost
taken from the warm event loop (``models.replay.predict``).  Tiny synthetic basket maps, exact
figures."""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.replay import LocalDevice
from models.replay.predict import (
    CpuCosts,
    Reader,
    layout_time,
    loop_costs,
    merge_prediction,
)
from probes.basketmap import BasketMap, Region, synthetic_map


def one_file(path: str, branches: int = 4, baskets: int = 8, size: int = 250_000
             ) -> BasketMap:
    """A file whose branches hold ``baskets`` baskets of ``size`` bytes (1000 entries each),
    in branch order after a 64 KiB header; keys and tree metadata at the end."""
    header = 65536
    rows = [(f"b{b}", header + (b * baskets + i) * size, size, i * 1000, (i + 1) * 1000)
            for b in range(branches) for i in range(baskets)]
    end = header + branches * baskets * size
    regions = (Region("header", 0, 403), Region("keys", end, 500),
               Region("tree", end + 500, 20_000), Region("tree_keylen", end + 500, 40))
    return synthetic_map(rows, entries=baskets * 1000, path=path, file_bytes=end + 20_500,
                         regions=regions)


DEV = LocalDevice(70.0, 0.008, 2560)


def test_overlap_hides_the_streamed_io_behind_the_calls_cpu() -> None:
    m = one_file("/x.root")
    costs = CpuCosts(open_s=0.05, call_s=0.2, decompress_mb_per_s=100.0)
    plain = layout_time([m], DEV, costs)
    full = layout_time([m], DEV, replace(costs, overlap=1.0))
    half = layout_time([m], DEV, replace(costs, overlap=0.5))
    # without overlap: the sum; the I/O and CPU themselves do not change
    assert plain.total_s == pytest.approx(plain.io_s + plain.cpu_s)
    assert (full.io_s, full.cpu_s) == (plain.io_s, plain.cpu_s)
    stream_io = plain.io_s - plain.sync_s
    stream_cpu = plain.cpu_s - 0.05  # the open never overlaps
    assert 0 < plain.sync_s < plain.io_s
    assert full.total_s == pytest.approx(0.05 + plain.sync_s + max(stream_io, stream_cpu))
    assert half.total_s == pytest.approx(plain.total_s - 0.5 * min(stream_io, stream_cpu))


def test_overlap_needs_something_to_hide() -> None:
    m = one_file("/x.root")
    costs = CpuCosts(open_s=0.05, overlap=1.0)  # no CPU beyond the open: nothing hides
    lt = layout_time([m], DEV, costs)
    assert lt.hidden_s == 0.0
    assert lt.total_s == pytest.approx(lt.io_s + 0.05)
    warm = layout_time([m], replace(DEV, warm=True), replace(costs, call_s=0.1))
    assert warm.io_s == 0.0 and warm.total_s == pytest.approx(0.15)


def test_root_getentry_reads_in_the_loop_no_overlap() -> None:
    m = one_file("/x.root")
    costs = CpuCosts(open_s=0.05, basket_s=1e-3, decompress_mb_per_s=100.0, overlap=1.0)
    lt = layout_time([m], DEV, costs, reader=Reader("root", cache_bytes=0))
    assert lt.hidden_s == 0.0
    assert lt.total_s == pytest.approx(lt.io_s + lt.cpu_s)


def test_extra_baskets_pay_beyond_the_first_per_branch_and_call() -> None:
    m = one_file("/x.root", branches=4, baskets=8)
    costs = CpuCosts(open_s=0.0, call_s=0.0, basket_s=0.01, extra_baskets=True)
    lt = layout_time([m], replace(DEV, warm=True), costs, step=4000)  # 2 calls
    assert lt.calls == 2 and lt.baskets == 32
    assert lt.cpu_s == pytest.approx((32 - 4 * 2) * 0.01)
    every = layout_time([m], replace(DEV, warm=True), replace(costs, extra_baskets=False),
                        step=4000)
    assert every.cpu_s == pytest.approx(32 * 0.01)


def test_loop_costs_leave_the_per_branch_work_in_the_call() -> None:
    # 0.2 s per file, 2 MB at 100 MB/s (0.02 s), 50 baskets beyond the first at 1 ms
    c = loop_costs(0.2, 2.0, 1, 50, 100.0, basket_s=1e-3)
    assert c is not None
    assert c.call_s == pytest.approx(0.2 - 0.02 - 0.05)
    assert c.basket_s == 1e-3 and c.process_mb_per_s == 0.0
    # two calls share it; processing measured apart from the fixed costs counts per MB
    c2 = loop_costs(0.2, 2.0, 2, 0, 100.0, process_mb_per_s=200.0)
    assert c2 is not None and c2.call_s == pytest.approx((0.2 - 0.02 - 0.01) / 2)
    # a loop faster than its own decompression says nothing
    assert loop_costs(0.01, 2.0, 1, 0, 100.0) is None
    assert loop_costs(0.0, 2.0, 1, 0, 100.0) is None


def test_merge_gain_with_overlap_and_its_range() -> None:
    maps = [one_file(f"/s{i}.root", branches=20, baskets=1, size=20_000) for i in range(4)]
    costs = CpuCosts(open_s=0.05, call_s=0.04, basket_s=1e-4, decompress_mb_per_s=100.0,
                     extra_baskets=True)
    sum_ = merge_prediction(maps, 8, 4, DEV, costs)
    hid = merge_prediction(maps, 8, 4, DEV, replace(costs, overlap=1.0,
                                                    overlap_range=(0.5, 1.0)))
    # the merged file streams its data: hiding it gains more than the small files (whose
    # I/O is mostly the open's synchronous reads)
    assert hid.speedup > sum_.speedup
    assert hid.low <= hid.speedup <= hid.high
    assert hid.low < hid.high  # the overlap's range alone widens it


def test_root_keeps_its_own_terms() -> None:
    m = one_file("/x.root")
    root = CpuCosts(open_s=0.05, basket_s=1e-3, decompress_mb_per_s=50.0)
    costs = CpuCosts(open_s=0.05, call_s=0.1, decompress_mb_per_s=100.0, extra_baskets=True,
                     root=root)
    warm = replace(DEV, warm=True)
    r = layout_time([m], warm, costs, reader=Reader("root", cache_bytes=0))
    assert r.cpu_s == pytest.approx(layout_time([m], warm, root,
                                                reader=Reader("root", cache_bytes=0)).cpu_s)
    assert r.cpu_s == pytest.approx(0.05 + 32 * 1e-3 + 8.0 / 50.0)
    u = layout_time([m], warm, costs)
    assert u.cpu_s == pytest.approx(0.05 + 0.1 + 8.0 / 100.0)
    assert costs.scaled(2.0).root == root.scaled(2.0)
