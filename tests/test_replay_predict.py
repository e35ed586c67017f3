"""The replay's CPU side: uproot's I/O hidden behind the read calls' CPU, and the per-call cost
taken from the warm event loop (``hep_advisor.models.replay.predict``).  Tiny synthetic basket maps,
exact figures."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import (
    UPROOT_BASKET_S,
    UPROOT_BASKET_S_RANGE,
    CpuCosts,
    LoopCosts,
    costs_from,
    loop_costs,
)
from hep_advisor.models.replay.overlap import CallShapes, call_shapes
from hep_advisor.models.replay.predict import (
    MergePrediction,
    Reader,
    layout_time,
    merge_prediction,
    reader_loop_costs,
)
from hep_advisor.probes.basketmap import BasketMap, Region, synthetic_map


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


def gapped_file(path: str, baskets: int = 32, size: int = 250_000, gap: int = 100_000
                ) -> BasketMap:
    """One branch whose baskets lie ``gap`` bytes apart (more than uproot merges: 32 KiB)."""
    header = 65536
    rows = [("b0", header + i * (size + gap), size, i * 1000, (i + 1) * 1000)
            for i in range(baskets)]
    end = header + baskets * (size + gap)
    regions = (Region("header", 0, 403), Region("keys", end, 500),
               Region("tree", end + 500, 20_000), Region("tree_keylen", end + 500, 40))
    return synthetic_map(rows, entries=baskets * 1000, path=path, file_bytes=end + 20_500,
                         regions=regions)


def test_a_call_of_one_request_hides_nothing() -> None:
    # contiguous baskets: one call, one coalesced request; its baskets arrive all at once
    m = one_file("/x.root")
    lt = layout_time([m], DEV, CpuCosts(open_s=0.05, call_s=0.2, decompress_mb_per_s=100.0))
    assert lt.shapes == CallShapes(((1.0, (1.0,)),))
    assert lt.hidden_s == 0.0 and lt.total_s == pytest.approx(lt.io_s + lt.cpu_s)
    # calls one after another: no call's reads hide behind the call before
    one = one_file("/y.root", branches=1)  # each call's baskets contiguous
    two = layout_time([one], DEV, CpuCosts(open_s=0.05, call_s=0.2), step=4000)
    assert two.calls == 2 and two.hidden_s == 0.0


def test_the_requests_after_the_first_hide_behind_its_cpu() -> None:
    # two requests of 1/4 and 3/4 of the call, read side by side: the small one is read at
    # 2 x 1/4 of the call's I/O (0.5 s), decompressed by 0.75 s; the large one at 1 s, then
    # 0.75 s of CPU: 1.75 s against 2 s
    assert CallShapes(((1.0, (0.25, 0.75)),)).hidden_s(1.0, 1.0) == pytest.approx(0.25)
    assert CallShapes(((1.0, (1.0,)),)).hidden_s(1.0, 1.0) == 0.0
    m = gapped_file("/g.root")  # the first request is cut after one basket (uproot's 32 KiB)
    assert call_shapes([m], None, ["100 MB"]).shapes == ((1.0, (0.031, 0.969)),)
    costs = CpuCosts(open_s=0.05, call_s=0.2, decompress_mb_per_s=100.0)
    lt = layout_time([m], DEV, costs, step=100_000)
    stream_io, stream_cpu = lt.io_s - lt.sync_s, lt.cpu_s - 0.05
    assert 0.0 < lt.hidden_s < min(stream_io, stream_cpu)
    # the overlap share hides the rest, up to all of it
    full = layout_time([m], DEV, replace(costs, overlap=1.0), step=100_000)
    assert full.hidden_s == pytest.approx(min(stream_io, stream_cpu))


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
    # each file's first call beyond a later one is a cost per file, out of the calls' share
    c3 = loop_costs(0.2, 2.0, 2, 0, 100.0, first_s=0.04)
    assert c3 is not None and c3.first_s == 0.04
    assert c3.call_s == pytest.approx((0.2 - 0.02 - 0.04) / 2)
    # ... unless it would leave less than half of the calls' time (the figures disagree)
    c4 = loop_costs(0.2, 2.0, 2, 0, 100.0, first_s=0.1)
    assert c4 is not None and c4.first_s == 0.0 and c4.call_s == pytest.approx(0.09)
    # a loop faster than its own decompression says nothing
    assert loop_costs(0.01, 2.0, 1, 0, 100.0) is None
    assert loop_costs(0.0, 2.0, 1, 0, 100.0) is None


def test_an_unmeasured_basket_cost_is_assumed_over_its_range() -> None:
    # 0.2 s per file, 2 MB at 100 MB/s (0.02 s), 50 baskets beyond the first of each branch;
    # the per-basket test did not run: the loop's time is split at the assumed cost
    c = loop_costs(0.2, 2.0, 1, 50, 100.0)
    assert c is not None and c.basket_assumed and c.basket_s == UPROOT_BASKET_S
    assert c.call_s == pytest.approx(0.2 - 0.02 - 50 * UPROOT_BASKET_S)
    # and again at each end of its range: every split keeps the loop's measured time
    assert sorted(v.basket_s for v in c.variants) == list(UPROOT_BASKET_S_RANGE)
    for v in (c, *c.variants):
        assert v.call_s + 50 * v.basket_s + 0.02 == pytest.approx(0.2)
    # a loop too fast for the assumption: its range's lower end, else no per-basket cost
    lo = UPROOT_BASKET_S_RANGE[0]
    fast = loop_costs(0.02 + 50 * (lo + UPROOT_BASKET_S) / 2, 2.0, 1, 50, 100.0)
    assert fast is not None and fast.basket_s == lo and not fast.variants
    none = loop_costs(0.02 + 50 * lo / 2, 2.0, 1, 50, 100.0)
    assert none is not None and none.basket_s == 0.0 and not none.basket_assumed
    # a measured cost is used as it is
    given = loop_costs(0.2, 2.0, 1, 50, 100.0, basket_s=1e-3)
    assert given is not None and not given.basket_assumed and not given.variants


def test_a_merge_is_not_credited_the_baskets_cost_as_a_calls() -> None:
    from hep_advisor.models.throughput import DEFAULTS

    # 4 small files of 20 branches x 2 baskets, merged into one: 1 call instead of 4, and the
    # same 160 baskets.  The warm loop measured 0.1 s per file of 1 call (0.02 s of it
    # decompressing 2 MB): the baskets beyond the first (20 per file) cost part of the rest
    maps = [one_file(f"/s{i}.root", branches=20, baskets=2, size=50_000) for i in range(4)]
    warm = replace(DEV, warm=True)
    free = loop_costs(0.1, 2.0, 1, 20, 100.0, basket_s=0.0)
    assumed = loop_costs(0.1, 2.0, 1, 20, 100.0)
    assert free is not None and assumed is not None

    def merged(lc: LoopCosts) -> MergePrediction:
        return merge_prediction(maps, 4, 4, warm, costs_from(DEFAULTS, {}, 0.0, loop=lc))

    old, new = merged(free), merged(assumed)
    # the merged file's 140 baskets beyond the first of each branch pay; the call saved
    # costs less than the whole residual
    assert new.speedup < old.speedup
    assert new.low < new.speedup < new.high  # the assumption's range widens it
    ends = [merged(replace(v, variants=())).speedup for v in assumed.variants]
    assert new.low <= min(ends) and max(ends) <= new.high


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


def test_a_memory_size_step_pays_its_keys_cpu_an_entry_step_does_not() -> None:
    m = one_file("/x.root")  # 4 branches x 8 baskets: 32 keys in the pre-pass
    costs = CpuCosts(open_s=0.0, call_s=0.1, key_s=1e-3)
    warm = replace(DEV, warm=True)
    mem = layout_time([m], warm, costs, reader=Reader(step="100 MB"))
    ent = layout_time([m], warm, costs, reader=Reader(step=8000))
    assert (mem.keys, ent.keys) == (32, 0)
    assert mem.calls == ent.calls == 1
    assert mem.cpu_s - ent.cpu_s == pytest.approx(32 * 1e-3)
    # scaled files scale the keys; the fitted terms (key_s 0) leave them uncounted
    assert layout_time([m], warm, costs, reader=Reader(step="100 MB"), scale=3).keys == 96
    assert layout_time([m], warm, replace(costs, key_s=0.0),
                       reader=Reader(step="100 MB")).cpu_s == pytest.approx(ent.cpu_s)


def test_loop_costs_leave_the_pre_pass_keys_out_of_the_call() -> None:
    c = loop_costs(0.2, 2.0, 1, 0, 100.0, keys=100, key_s=1e-4)
    assert c is not None and c.key_s == 1e-4
    assert c.call_s == pytest.approx(0.2 - 0.02 - 100 * 1e-4)


def test_the_programs_reader_replayed_costs_what_its_warm_loop_measured() -> None:
    m = one_file("/x.root", branches=20, baskets=2, size=50_000)
    warm = replace(DEV, warm=True)
    reader = Reader(step="100 MB")
    counted = layout_time([m], warm, CpuCosts(open_s=0.0), reader=reader, scale=5)
    # the loop measured 4,000 events/s warm (opening not timed): 2 s for the 5 files
    lc = reader_loop_costs(counted, 4000.0, 100.0, basket_s=1e-4, key_s=2e-4)
    assert lc is not None
    costs = CpuCosts(open_s=0.0, call_s=lc.call_s, basket_s=lc.basket_s,
                     decompress_mb_per_s=lc.decompress_mb_per_s, extra_baskets=True,
                     key_s=lc.key_s)
    again = layout_time([m], warm, costs, reader=reader, scale=5)
    assert again.cpu_s == pytest.approx(counted.entries / 4000.0)
    # an entry step over the same calls saves the keys' CPU only
    ent = layout_time([m], warm, costs, reader=Reader(step=2000), scale=5)
    assert ent.calls == again.calls
    assert again.cpu_s - ent.cpu_s == pytest.approx(counted.keys * 2e-4)
    # a ROOT replay, or a loop faster than its decompression, gives nothing
    assert reader_loop_costs(layout_time([m], warm, CpuCosts(open_s=0.0),
                                         reader=Reader("root")), 4000.0, 100.0) is None
    assert reader_loop_costs(counted, 1e9, 100.0) is None


def test_the_pre_pass_keys_assumed_cost_spans_the_interval() -> None:
    from hep_advisor.models.replay.cpucosts import UPROOT_KEY_S_RANGE
    from hep_advisor.models.replay.predict import reader_change

    m = one_file("/x.root", branches=20, baskets=2, size=50_000)
    warm = replace(DEV, warm=True)
    before, after = Reader(step="100 MB"), Reader(step=2000)
    costs = CpuCosts(open_s=0.01, call_s=0.05, key_s=50e-6)
    r = reader_change([m], 5, warm, costs, before, after)
    assert r.low < r.speedup < r.high
    lo, hi = UPROOT_KEY_S_RANGE
    # an assumed range: its 5% and 95% points (one input alone: its shift is the interval's)
    for k, end in ((lo + 0.05 * (hi - lo), r.low), (lo + 0.95 * (hi - lo), r.high)):
        at = reader_change([m], 5, warm, replace(costs, key_s=k), before, after)
        assert at.speedup == pytest.approx(end)
    flat = reader_change([m], 5, warm, replace(costs, key_s=0.0), before, after)
    assert flat.low == flat.speedup == flat.high == pytest.approx(1.0)


def test_a_step_ending_inside_a_basket_interprets_it_again() -> None:
    from hep_advisor.models.replay.predict import step_touches

    # branch a: baskets of 100 entries; branch b: one basket of 300
    rows = [("a", 1000 + 100 * i, 100, 100 * i, 100 * (i + 1)) for i in range(3)]
    rows.append(("b", 2000, 300, 0, 300))
    m = synthetic_map(rows, entries=300)
    assert step_touches(m.branches, 300, 300) == 4  # one call: every basket once
    assert step_touches(m.branches, 300, 100) == 3 + 3  # aligned with a's baskets; b 3 times
    # steps of 150: a's middle basket in both steps, b in both
    assert step_touches(m.branches, 300, 150) == 4 + 2
    assert step_touches(m.branches, 300, 50) == 6 + 6
