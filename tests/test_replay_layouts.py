"""Scenario layouts (models.replay.layouts) and the merge's replayed time
(models.replay.predict), on tiny synthetic basket maps."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import CpuCosts
from hep_advisor.models.replay.layouts import fast_merge, groups, hadd_step, optimized_merge
from hep_advisor.models.replay.predict import layout_time, merge_prediction
from hep_advisor.probes.basketmap import BasketMap, Region, synthetic_map

KB = 1000


def small_file(path: str, entries: int = 100, branches: int = 3, size: int = 2 * KB
               ) -> BasketMap:
    """One basket per branch, written one after the other (a file that never flushed)."""
    header = 100
    rows = [(f"b{i}", header + i * size, size, 0, entries) for i in range(branches)]
    end = header + branches * size
    regions = (Region("header", 0, header), Region("keys", end, 50),
               Region("tree", end + 50, 400), Region("tree_keylen", end + 50, 40))
    return synthetic_map(rows, entries=entries, path=path, file_bytes=end + 450,
                         regions=regions)


def test_fast_merge_concatenates_baskets_file_after_file() -> None:
    a, b = small_file("a"), small_file("b", entries=50)
    m = fast_merge([a, b], path="m")
    assert m.entries == 150 and [x.name for x in m.branches] == ["b0", "b1", "b2"]
    # a's baskets, then b's, packed from the end of the header, each input in its disk order
    assert m.branch("b0").seek.tolist() == [100, 100 + 3 * 2 * KB]
    assert m.branch("b1").seek.tolist() == [100 + 2 * KB, 100 + 4 * 2 * KB]
    assert m.branch("b2").entries.tolist() == [0, 100, 150]
    flat = m.flat()
    assert np.all(flat["seek"][1:] == flat["seek"][:-1] + flat["nbytes"][:-1])  # no gaps
    # neither input flushed a cluster: one cluster (ROOT's estimate of a small tree)
    assert m.clusters.tolist() == [0, 150]
    # the metadata follows the baskets; the TTree record grows with the baskets
    assert m.region("tree") is not None and m.region("tree").size > 400  # type: ignore[union-attr]
    assert m.file_bytes >= 100 + 6 * 2 * KB + 450


def test_fast_merge_keeps_cluster_ranges() -> None:
    a = replace(small_file("a"), clusters=np.array([0, 50, 100]), cluster_source="ranges")
    m = fast_merge([a, a])
    assert m.clusters.tolist() == [0, 50, 100, 150, 200]


def test_optimized_merge_rebaskets_in_cluster_order() -> None:
    # 10 files x 100 entries x 3 branches, 2 kB per basket (about 19 bytes per entry)
    files = [small_file(f"f{i}") for i in range(10)]
    m = optimized_merge(files, basket_bytes=400, autoflush=500)
    assert m.entries == 1000 and m.clusters.tolist() == [0, 500, 1000]
    assert m.autoflush == 500  # the first flush came at the tree's AutoFlush in entries
    b0 = m.branch("b0")
    # every entry refilled, the first input's too: 400-byte buffers hold 16 entries (with the
    # 71-byte key), a basket closes at the first input's end (100) and at each cluster
    assert b0.entries.tolist()[:3] == [0, 16, 32]
    assert {96, 100, 116, 500}.issubset(b0.entries.tolist())
    assert b0.entries.tolist()[-2:] == [500, 1000]  # resized at the first flush: 1 basket
    # baskets closed at the same entry are written in branch order, one after the other
    flat = m.flat()
    assert flat["branch"][:6].tolist() == [0, 1, 2, 0, 1, 2]
    assert np.all(np.diff(flat["seek"]) > 0)
    # the bytes are kept (the branch's ratio), with a key per basket
    assert m.basket_bytes == pytest.approx(sum(f.basket_bytes for f in files), rel=0.6)


def test_groups_cycle_a_sample() -> None:
    maps = [small_file("a"), small_file("b")]
    g = groups(maps, 3, files=7)
    assert [len(x) for x in g] == [3, 3, 1]
    assert [m.path for m in g[0]] == ["a", "b", "a"]


def scattered_vs_contiguous() -> tuple[BasketMap, BasketMap, list[BasketMap]]:
    """Eight small files and two merges of them: ``hadd`` (each branch's baskets one file
    apart) and the same baskets laid out branch by branch (each branch contiguous)."""
    files = [small_file(f"f{i}", branches=20, size=3 * KB) for i in range(8)]
    scattered = fast_merge(files, path="scattered")
    rows = []
    pos = 100
    for b in scattered.branches:
        for s, n, e0, e1 in zip(b.seek, b.nbytes, b.entries[:-1], b.entries[1:], strict=True):
            del s
            rows.append((b.name, pos, int(n), int(e0), int(e1)))
            pos += int(n)
    contiguous = synthetic_map(rows, entries=scattered.entries, path="contiguous",
                               file_bytes=scattered.file_bytes, regions=scattered.regions)
    return scattered, contiguous, files


def test_scattered_merge_predicts_less_than_contiguous() -> None:
    scattered, contiguous, files = scattered_vs_contiguous()
    dev = LocalDevice(70, 0.008, read_ahead_kb=128)
    costs = CpuCosts(open_s=0.02, call_s=0.01, decompress_mb_per_s=200)
    step = "100 MB"  # uproot's default: every key first, branch by branch
    before = layout_time(files, dev, costs, step=step)
    s_scat = before.total_s / layout_time([scattered], dev, costs, step=step).total_s
    s_cont = before.total_s / layout_time([contiguous], dev, costs, step=step).total_s
    assert s_cont > s_scat
    scat_io = layout_time([scattered], dev, costs, step=step).io
    cont_io = layout_time([contiguous], dev, costs, step=step).io
    assert scat_io.seeks > cont_io.seeks


def test_merge_prediction_and_its_range() -> None:
    files = [small_file(f"f{i}", branches=20, size=3 * KB) for i in range(4)]
    dev = LocalDevice(70, 0.008, read_ahead_kb=128)
    costs = CpuCosts(open_s=0.05, call_s=0.01, basket_s=1e-5, decompress_mb_per_s=200)
    p = merge_prediction(files, 40, 10, dev, costs, device_sd=(0.1, 0.3), cpu_sd=0.2)
    assert p.outputs == 4 and p.per_output == 10
    assert p.before.files == pytest.approx(40) and p.after.files == pytest.approx(4)
    assert p.before.entries == pytest.approx(p.after.entries)
    assert p.speedup > 1.0 and p.low <= p.speedup <= p.high and p.low < p.high
    # the I/O and CPU add up, and fewer files pay fewer opens
    assert p.after.total_s == pytest.approx(p.after.io_s + p.after.cpu_s)
    assert p.after.cpu_s < p.before.cpu_s
    no_range = merge_prediction(files, 40, 10, dev, costs)
    assert no_range.low == no_range.high == pytest.approx(p.speedup)


def test_m001_follows_the_replay_when_asked() -> None:
    from tui_helpers import fixture_advice

    from hep_advisor.rules import Context
    from hep_advisor.rules.files import merge_rule

    a = fixture_advice(label="small")
    assert a.fitted is not None and a.baseline is not None and a.model is not None
    base = dict(site=a.site, dataset=a.dataset, calibration=a.calibration, model=a.fitted,
                baseline=a.baseline, summary=a.model, verdict=a.verdict, label=a.label,
                inputs=a.inputs)
    old = merge_rule(Context(**base))  # type: ignore[arg-type]
    maps = tuple(small_file(f"f{i}", branches=20, size=3 * KB) for i in range(4))
    off = merge_rule(Context(**base, basket_maps=maps))  # type: ignore[arg-type]
    assert old is not None and off is not None
    assert off.predicted_speedup == old.predicted_speedup  # the replay is an option
    ctx = Context(**base, basket_maps=maps, replay_merge=True)  # type: ignore[arg-type]
    on = merge_rule(ctx)
    if a.baseline.workers != 1:  # the replay is for one worker
        assert on is not None and on.predicted_speedup == old.predicted_speedup
        return
    k = round(next(float(e.value) for e in old.evidence if e.name == "target size")
              / a.baseline.row(1)["file_mb"])
    r = ctx.merge_replay(max(2, k), any("-O" in (x.command or "") for x in old.actions))
    assert r is not None
    if on is None:  # below the cut
        assert r.speedup < 1.1
        return
    assert on.predicted_speedup == pytest.approx(r.speedup, rel=1e-3)
    assert any(e.name == "replayed I/O merged" for e in on.evidence)
    assert on.speedup_low <= on.predicted_speedup <= on.speedup_high


def test_optimized_merge_with_jobs_merges_partials_fast() -> None:
    # hadd -j 2 -O: each half refilled (no input cloned), then the two partials copied
    files = [small_file(f"f{i}") for i in range(6)]
    m = optimized_merge(files, jobs=2)
    for b in m.branches:  # 300 entries x 20 bytes fit one 32 kB buffer: one basket per half
        assert b.entries.tolist() == [0, 300, 600]
    flat = m.flat()
    assert flat["branch"].tolist() == [0, 1, 2, 0, 1, 2]


def test_hadd_jobs_split_as_root_does() -> None:
    # ROOT's hadd -j: ceil(inputs / jobs) files per process, at least 3; one process left
    # means no partial files at all (the wide validation dataset: hadd -j 2 -O of 2 inputs
    # wrote 11,280 baskets, as a plain hadd -O does, not the 9,120 of two partials)
    assert [hadd_step(n, 2) for n in (1, 2, 3, 4, 5, 6, 7)] == [1, 2, 3, 3, 3, 3, 4]
    assert hadd_step(8, 4) == 3 and hadd_step(12, 4) == 3 and hadd_step(20, 4) == 5
    assert hadd_step(5, 1) == 5
    files = [small_file(f"f{i}") for i in range(2)]
    one = optimized_merge(files, jobs=1)
    two = optimized_merge(files, jobs=2)
    assert [b.entries.tolist() for b in two.branches] == [b.entries.tolist()
                                                          for b in one.branches]
