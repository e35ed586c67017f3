"""Advice that follows the replay: readers compared on one layout, the corners of a range
retimed, entry steps aligned with clusters, M001's options against scattered reads, T001's
printed reader settings, and the advice cache keyed by the replay option.  Tiny synthetic
basket maps; exact where the arithmetic allows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from helpers import clustered_map as interleaved
from hep_advisor.models import scenarios as sc
from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import CpuCosts
from hep_advisor.models.replay.predict import (
    Reader,
    cluster_step,
    layout_time,
    merge_prediction,
    reader_change,
    retimed,
)
from hep_advisor.probes.basketmap import BasketMap

DISK = LocalDevice(70, 0.008, read_ahead_kb=128)
COSTS = CpuCosts(open_s=0.02, call_s=0.005, basket_s=1e-5, decompress_mb_per_s=300)


def test_retimed_is_a_replay_on_the_scaled_device() -> None:
    maps = [interleaved("f0"), interleaved("f1")]
    for reader in (Reader(step="100 MB"), Reader(step=200), Reader("root", cache_bytes=0)):
        lt = layout_time(maps, DISK, COSTS, reader=reader)
        other = replace(DISK, mb_per_s=DISK.mb_per_s * 1.7, access_s=DISK.access_s * 0.4)
        direct = layout_time(maps, other, COSTS, reader=reader)
        assert retimed(lt, DISK, 1.7, 0.4).io.time_s == pytest.approx(direct.io.time_s,
                                                                        rel=1e-12)
        assert direct.io.seeks == lt.io.seeks  # the device I/Os do not depend on the two


def test_cluster_step_is_whole_clusters() -> None:
    m = interleaved("f", branches=2, size=4000)  # 2 x 4000 B per 100 entries: 80 B per entry
    assert cluster_step([m], target_bytes=25_000) == 300  # 312 entries -> 3 clusters
    assert cluster_step([m], target_bytes=10) == 100  # at least one cluster
    assert cluster_step([m], ["b0"], target_bytes=25_000) == 600  # 40 B per entry


def test_an_entry_step_spares_the_key_pre_pass() -> None:
    maps = [interleaved("f0"), interleaved("f1")]
    r = reader_change(maps, 10, DISK, COSTS, Reader(step="100 MB"), Reader(step=1000))
    assert r.before.files == pytest.approx(10) and r.after.files == pytest.approx(10)
    # the pre-pass reads every basket's key: 40 x 10 small reads per file, most of them seeks
    assert r.before.io.requests - r.after.io.requests >= 2 * 400
    assert r.after.io.seeks < r.before.io.seeks and r.speedup > 1.0
    same = reader_change(maps, 10, DISK, COSTS, Reader(step=1000), Reader(step=1000))
    assert same.speedup == pytest.approx(1.0)


def test_root_tree_cache_gathers_a_clusters_baskets() -> None:
    maps = [interleaved("f0", size=30_000)]  # 1.2 MB clusters: beyond the read-ahead
    off, on = Reader("root", cache_bytes=0), Reader("root", cache_bytes=None)
    r = reader_change(maps, 1, DISK, COSTS, off, on)
    # without a cache one read per basket (400) plus the open's (header, keys, TTree)
    assert r.before.io.requests == 400 + 3
    assert r.after.io.requests < r.before.io.requests / 4
    assert r.after.io.seeks <= r.before.io.seeks
    assert r.before.calls == r.after.calls == 0  # ROOT's reads pay no uproot call cost
    # every branch read in cluster order is one sequential pass either way: no gain
    assert r.speedup == pytest.approx(1.0, abs=0.05)
    # a branch subset spread over the cluster: gaps under the cache's read-ahead buffer
    few = [f"b{i}" for i in range(0, 40, 6)]
    s = reader_change(maps, 1, DISK, COSTS, off, on, branches=few)
    assert s.before.io.requests == 7 * 10 + 3 and s.after.io.requests < s.before.io.requests


def test_a_pre_staged_merge_reads_nothing_from_the_device() -> None:
    maps = [interleaved(f"f{i}") for i in range(4)]
    p = merge_prediction(maps, 8, 4, DISK, COSTS, reader=Reader(step="100 MB"),
                         after_warm=True, device_sd=(0.1, 0.3), cpu_sd=0.2)
    assert p.after.io.device_requests == 0 and p.after.io_s == 0.0
    assert p.after.total_s == pytest.approx(p.after.cpu_s)
    assert p.low <= p.speedup <= p.high


@pytest.mark.parametrize("files,per", [(25, 12), (10, 4), (8, 4), (250, 12)])
def test_a_merge_holds_todays_data(files: int, per: int) -> None:
    """The merged files hold today's entries and bytes, however the files divide into
    outputs (25 files twelve at a time: 12, 12 and 1, not three of twelve)."""
    maps = [interleaved(f"f{i}") for i in range(4)]
    p = merge_prediction(maps, files, per, DISK, COSTS, reader=Reader(step="100 MB"))
    assert p.after.entries == pytest.approx(p.before.entries)
    assert p.after.compressed_mb == pytest.approx(p.before.compressed_mb)
    assert p.outputs == -(-files // per)


def slow_disk_context(maps: tuple[BasketMap, ...], replay_merge: bool = False,
                      label: str = "small"):
    """The fixture advice's rules context on a 70 MB/s, 8 ms disk with 128 KiB read-ahead."""
    from tui_helpers import fixture_advice

    from hep_advisor.rules import Context

    a = fixture_advice(label=label)
    assert a.calibration is not None and a.calibration.raw_read is not None
    raw = replace(a.calibration.raw_read, cold_mb_per_s=70.0, access_time_ms=8.0)
    site = replace(a.site, storage=tuple(replace(s, read_ahead_kb=128)
                                         for s in a.site.storage))
    return a, Context(site=site, dataset=a.dataset,
                      calibration=replace(a.calibration, raw_read=raw), model=a.fitted,
                      baseline=a.baseline, summary=a.model, verdict=a.verdict, label=a.label,
                      inputs=a.inputs, basket_maps=maps,
                      replay_merge=replay_merge)


def test_m001_offers_what_removes_scattered_reads() -> None:
    from hep_advisor.rules.files import merge_rule

    maps = tuple(interleaved(f"f{i}") for i in range(4))
    a, ctx = slow_disk_context(maps)
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    _, plain = slow_disk_context(())
    rec, without = merge_rule(ctx), merge_rule(plain)
    assert rec is not None and without is not None
    # the replay checks the merged layout; the speed-up shown stays the rate model's
    assert rec.predicted_speedup == without.predicted_speedup and not without.options
    names = [e.name for e in rec.evidence]
    assert "replayed merge, uproot iterate, step_size='100 MB'" in names
    assert "replayed merge, ROOT GetEntry without TTreeCache" in names
    alone = {o.name: o for o in rec.options if o.name.startswith("merge alone")}
    assert "merge alone, uproot iterate, step_size='100 MB'" in alone
    default = alone["merge alone, uproot iterate, step_size='100 MB'"]
    fixes = [o for o in rec.options if "step_size='100 MB' now" in o.name]
    assert any("step_size=" in o.name and "entries" in o.name for o in fixes)
    for o in fixes:  # every option offered is replayed faster than the merge alone
        assert o.predicted_speedup >= 1.05 * default.predicted_speedup
        assert o.speedup_low <= o.predicted_speedup <= o.speedup_high
    assert "scattered reads" in rec.summary
    step = [x.command for x in rec.actions if x.command and "step_size=" in x.command]
    assert step and all("step_size='" not in c for c in step)  # an entry count, not a size


def test_t001_prints_no_memory_size_step_and_follows_the_replay() -> None:
    from hep_advisor.rules.storage import treecache_rule

    maps = tuple(interleaved(f"f{i}", size=30_000) for i in range(2))
    _, ctx = slow_disk_context(maps)
    _, plain = slow_disk_context(())
    for rec in (treecache_rule(ctx), treecache_rule(plain)):
        if rec is None:
            continue
        for x in rec.actions:
            assert "step_size='" not in (x.command or "")
    rec = treecache_rule(ctx)
    if ctx.baseline.workers != 1:
        return
    root = ctx.reader_replay(Reader("root", cache_bytes=0), Reader("root", cache_bytes=None))
    up = ctx.reader_replay(Reader(step="100 MB"), Reader(step=cluster_step(maps)))
    assert root is not None and up is not None
    best = max(root.speedup, up.speedup)
    if best < 1.05:  # the replay shows no gain for either reader: no T001
        assert rec is None
        return
    assert rec is not None and rec.predicted_speedup == pytest.approx(best, rel=1e-3)
    assert {o.name.split(" -> ")[0] for o in rec.options} == {
        "ROOT GetEntry without TTreeCache", "uproot iterate, step_size='100 MB'"}
    roots = [x for x in rec.actions if "SetCacheSize" in (x.command or "")]
    if root.speedup < 1.05:  # every branch in cluster order: ROOT reads it in one pass
        assert not roots and rec.title.startswith("Read whole clusters with uproot")
    else:
        assert roots


def test_t001_starts_from_the_programs_own_reader() -> None:
    """Told the program reads with an entry step (not uproot's default), T001's speed-up is
    that reader, then the printed step, replayed: never the default's key pre-pass."""
    from dataclasses import replace as dc_replace

    from hep_advisor.probes.readtests.readers import parse_reader
    from hep_advisor.rules.storage import treecache_rule

    maps = tuple(interleaved(f"f{i}", size=30_000) for i in range(2))
    _, ctx = slow_disk_context(maps)
    if ctx.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    step = cluster_step(maps)
    told = dc_replace(ctx, reader=parse_reader("uproot.iterate:step_size=700"))
    rec = treecache_rule(told)
    mine = told.reader_replay(Reader(step=700), Reader(step=step))
    default = told.reader_replay(Reader(step="100 MB"), Reader(step=step))
    assert mine is not None and default is not None and default.speedup > mine.speedup
    if mine.speedup < 1.05:
        assert rec is None
        return
    assert rec is not None and rec.predicted_speedup == pytest.approx(mine.speedup, rel=1e-3)
    assert rec.title.startswith("Read whole clusters with uproot")
    assert rec.actions[0].command == f"tree.iterate(step_size={step})"


def test_the_stored_advice_is_kept_per_replay_option(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_helpers import fixture_advice

    from hep_advisor.pipeline import cache

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    assert cache.advice_path("k") != cache.advice_path("k", replay_merge=True)
    assert cache.advice_path("k", ["x"]) != cache.advice_path("k", ["x"], replay_merge=True)
    a = fixture_advice(label="small")
    if a.calibration is None or a.calibration.partial:
        pytest.skip("a partial calibration is not stored")
    cache.store_advice("k", a, replay_merge=True)
    assert cache.load_advice("k") is None
    loaded = cache.load_advice("k", replay_merge=True)
    assert loaded is not None and loaded.recommendations == a.recommendations


def test_the_probe_sample_is_part_of_the_calibration_key(tmp_path: Path) -> None:
    from hep_advisor.pipeline import cache
    from hep_advisor.probes.dataset import DEFAULT_SAMPLE

    f = tmp_path / "a.root"
    f.write_bytes(b"not read: only the path, size and time are keyed")
    plain = cache.cache_key([str(f)], "uproot", None, None)
    assert cache.cache_key([str(f)], "uproot", None, None, sample=DEFAULT_SAMPLE) == plain
    assert cache.cache_key([str(f)], "uproot", None, None, sample=None) != plain


def test_basket_maps_are_found_for_a_cached_probe(flat_file: Path) -> None:
    """A probe read back from the cache keeps no file paths: the maps come from the inputs."""
    from hep_advisor.pipeline.basketmaps import sample_basket_maps
    from hep_advisor.probes import probe_dataset

    ds = probe_dataset([str(flat_file)])
    maps = sample_basket_maps(ds)
    assert len(maps) == 1 and maps[0].path == str(flat_file) and maps[0].baskets > 0
    cached = replace(ds, file_paths=())
    assert sample_basket_maps(cached) == ()
    again = sample_basket_maps(cached, inputs=[str(flat_file.parent)])
    assert len(again) == 1 and again[0] is maps[0]  # read once per process


def test_r001_is_its_printed_rewrite_replayed() -> None:
    """R001 prints ``hadd -O -fk rewritten.root <files>``: every file into one.  With basket
    maps its figure is that merge replayed (the event loop's reader here), and a replay that
    loses hides it; without maps, the rate model's figure stands."""
    from hep_advisor.rules.files import _small_baskets, rewrite_rule

    maps = tuple(interleaved(f"f{i}", size=800) for i in range(4))
    a, ctx = slow_disk_context(maps)
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    _, plain = slow_disk_context(())
    (tree,) = a.dataset.trees  # its baskets made tiny, as a plain hadd of small files leaves
    tiny = replace(tree, baskets=replace(tree.baskets, mean_compressed_bytes=800.0))
    dataset = replace(a.dataset, trees=(tiny,))
    ctx, plain = replace(ctx, dataset=dataset), replace(plain, dataset=dataset)
    target = _small_baskets(plain)
    assert target is not None and ctx.tree is not None
    without = rewrite_rule(plain, False)
    model = plain.predict(sc.rebasket(target)).speedup or 1.0
    assert (without is None) == (model < 1.05)
    r = ctx.merge_replay(ctx.tree.files, True)
    assert r is not None and r.speedup >= 1.05  # 10 files' opens become one
    rec = rewrite_rule(ctx, False)
    assert rec is not None and rec.predicted_speedup == pytest.approx(r.speedup, rel=1e-3)
    assert rec.speedup_low is not None and rec.speedup_low < rec.predicted_speedup
    assert any("hadd -O -fk" in s for s in rec.assumptions)
