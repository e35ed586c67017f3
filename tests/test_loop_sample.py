"""The engine's self-check against the calibration's own cold event loop replays the sample
that loop read (its files in order, the last cut short), not the whole job at the loop's
rate.  Tiny generated data."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from helpers import write_flat
from hep_advisor.models.loop_sample import (
    first_entries,
    replay_loop_sample,
    replay_root_passes,
    sample_maps,
)
from hep_advisor.models.physics import Cores, Params
from hep_advisor.models.reader_baseline import reader_baseline
from hep_advisor.models.replay.engine import ReplayedJob, self_checks
from hep_advisor.models.replay.workers import SharedJob
from hep_advisor.models.selfcheck import LoopSample
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.probes.readtests.results import LoopPart


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("sample")
    return [write_flat(d / f"f{i}.root", entries=4000, branches=8, chunks=20)
            for i in range(3)]


def test_the_head_of_a_map_holds_the_baskets_of_its_first_entries(files: list[Path]) -> None:
    m = read_basket_map(str(files[0]))
    assert m.head(m.entries) is m and m.head(10 * m.entries) is m
    h = m.head(1000)  # 200 entries a basket: 5 of 20
    assert h.entries == 1000 and h.path == m.path and h.file_bytes == m.file_bytes
    for b, whole in zip(h.branches, m.branches, strict=True):
        assert b.baskets == 5 and b.entries[-1] == 1000
        assert 0 < b.compressed_bytes < whole.compressed_bytes
        assert b.uncompressed_bytes < whole.uncompressed_bytes
    assert h.branch(m.branches[0].name).baskets == 5  # looked up in the head's own branches
    assert m.branch(m.branches[0].name).baskets == 20  # the map itself unchanged
    assert int(h.clusters[-1]) == 1000 and np.all(np.diff(h.clusters) > 0)
    # a cut inside a basket keeps that basket (read whole), the tree ending at the cut
    mid = m.head(1100)
    assert mid.branches[0].baskets == 6 and mid.branches[0].entries[-1] == 1100


def test_each_part_is_cut_from_its_own_map_else_a_stand_in(files: list[Path],
                                                           tmp_path: Path) -> None:
    maps = [read_basket_map(str(f)) for f in files[:2]]
    cut, stand = sample_maps([LoopPart(str(files[0]), 4000), LoopPart(str(files[1]), 600)],
                             maps)
    assert stand == 0 and [m.path for m in cut] == [str(files[0]), str(files[1])]
    assert [m.entries for m in cut] == [4000, 600]
    # the same file read elsewhere (a copy, another mount): its map by name
    cut, stand = sample_maps([LoopPart(str(tmp_path / files[1].name), 600)], maps)
    assert stand == 0 and cut[0].path == str(files[1])
    # the third file has no map here: a map no part names stands in, counted
    cut, stand = sample_maps([LoopPart(str(files[0]), 4000), LoopPart(str(files[2]), 600)],
                             maps)
    assert stand == 1 and cut[1].path == str(files[1]) and cut[1].entries == 600


def _baseline() -> Any:
    params = Params(storage_mb_per_s=100, access_ms=5.0, devices=1, decompress_mb_per_s=200,
                    process_mb_per_s=100, open_s=0.002, cache_mb_per_s=5000, call_s=0.001,
                    basket_s=1e-5, storage_overlap=0.0)
    return SimpleNamespace(params=params, row=lambda workers: {})


def _cal(spec_text: str, parts: tuple[LoopPart, ...], cold: float) -> Any:
    warm = SimpleNamespace(median=400_000.0, conditions=SimpleNamespace(cache="warm"))
    cold_m = SimpleNamespace(median=cold, conditions=SimpleNamespace(cache="cold"))
    loop = SimpleNamespace(reader=spec_text, warm=warm, cold=cold_m, setup_s=None,
                           events_per_s=cold, engine="uproot", refault_per_mb=None,
                           parts=parts)
    return SimpleNamespace(raw_read=None, engine="uproot", event_loop=loop,
                           open_overhead_s=SimpleNamespace(warm=0.002, cold=0.004),
                           first_touch=None)


def test_the_sample_is_replayed_as_the_loop_timed_it(files: list[Path]) -> None:
    """The sample replayed through the job's device and CPU terms, opening included, against
    the loop's time for its entries plus the cold open per file the loop left out: a half file
    reads half the entries, and the replay does not depend on the loop's own figure."""
    maps = [read_basket_map(str(f)) for f in files]
    site = SimpleNamespace(storage=[], os=None)
    spec = parse_reader("uproot.iterate:step_size=200")
    whole = (LoopPart(str(files[0]), 4000), LoopPart(str(files[1]), 2000))
    cal = _cal(spec.text, whole, 50_000.0)
    rb = reader_baseline(spec, maps, 3, cal, site, _baseline(), access_s=5e-3)
    got = replay_loop_sample(spec, rb, cal.event_loop, maps, cal, site, _baseline(), None,
                             None)
    assert got is not None and got.entries == 6000 and got.files == 2 and got.stand_ins == 0
    assert 0 < got.io_share <= 1
    alone = reader_baseline(spec, [maps[0], maps[1].head(2000)], 2, cal, site, _baseline(),
                            access_s=5e-3)
    assert alone.cold_open_s == pytest.approx(0.004)  # the open test's cold figure
    assert got.replayed_mb_per_s == pytest.approx(alone.compressed_mb / alone.seconds)
    measured_s = 6000 / 50_000.0 + 2 * 0.004
    assert got.measured_mb_per_s == pytest.approx(alone.compressed_mb / measured_s)
    other = replay_loop_sample(spec, rb, _cal(spec.text, whole, 9_000.0).event_loop, maps, cal,
                               site, _baseline(), None, None)
    assert other is not None and other.replayed_mb_per_s == got.replayed_mb_per_s
    assert other.measured_mb_per_s < got.measured_mb_per_s
    # no parts recorded, another reader's loop, or a warm-only loop: nothing to replay
    assert replay_loop_sample(spec, rb, _cal(spec.text, (), 1.0).event_loop, maps, cal,
                              site, _baseline(), None, None) is None
    assert replay_loop_sample(spec, rb, _cal("uproot.arrays", whole, 1.0).event_loop, maps,
                              cal, site, _baseline(), None, None) is None
    warm_only = _cal(spec.text, whole, 1.0).event_loop
    warm_only.cold.conditions.cache = "warm"
    assert replay_loop_sample(spec, rb, warm_only, maps, cal, site, _baseline(), None,
                              None) is None


def test_the_cold_point_checks_the_sample_not_the_whole_job() -> None:
    job = SharedJob(io_s=4.0, cpu_s=6.0, files=4)
    rj = ReplayedJob(job=job, open_s=1.0, decompress_s=2.0, compressed_mb=100.0,
                     entries=1e5, measured_s=20.0)  # the loop's rate carried: 2x off
    cold = SimpleNamespace(samples=(1.0,), conditions=SimpleNamespace(cache="cold"),
                           spread=None, median=1.0, part_spread=None)
    sample = LoopSample(replayed_mb_per_s=10.5, measured_mb_per_s=10.0,
                        entries=3000, files=2, stand_ins=1, io_share=0.6)
    got = self_checks(rj, 10.0, cold, (), 1.0, Cores(2), sample=sample)[0]
    assert got.ok and got.ratio == pytest.approx(1.05)
    assert "loop's own sample" in got.term and "3,000 entries of 2 file(s)" in got.term
    assert "1 on another file's map" in got.term and "device 60%" in got.term
    without = self_checks(rj, 10.0, cold, (), 1.0, Cores(2))[0]
    assert not without.ok and without.ratio == pytest.approx(2.0)
    assert "carried to every file" in without.term


def test_a_pass_that_stopped_sooner_reads_the_first_entries_in_order() -> None:
    parts = (LoopPart("a", 4000), LoopPart("b", 2000))
    assert first_entries(parts, 4500) == (LoopPart("a", 4000), LoopPart("b", 500))
    assert first_entries(parts, 100) == (LoopPart("a", 100),)
    assert first_entries(parts, 10_000) == parts and first_entries(parts, 0) == ()


@dataclass(frozen=True)
class _Loop:
    reader: str
    warm: Any
    cold: Any
    parts: tuple[LoopPart, ...]
    setup_s: float | None = None
    events_per_s: float = 50_000.0
    engine: str = "root"
    refault_per_mb: float | None = None


@dataclass(frozen=True)
class _Cal:
    event_loop: _Loop
    root_cache_on: Any = None
    root_cache_off: Any = None
    raw_read: Any = None
    engine: str = "root"
    open_overhead_s: Any = field(default_factory=lambda: SimpleNamespace(warm=0.002,
                                                                          cold=0.004))
    first_touch: Any = None


def _pass(tree_cache: bool, entries: int, events_per_s: float, cache: str = "cold") -> Any:
    return SimpleNamespace(tree_cache=tree_cache, cache_bytes=10_000_000 if tree_cache else 0,
                           cache=cache, entries=entries, events_per_s=events_per_s)


def test_roots_passes_are_replayed_on_their_part_of_the_sample(files: list[Path]) -> None:
    """A ``GetEntry`` program's calibration: its pilot (the loop's own sample, no cache) is
    not checked twice; the pass without a cache that stopped sooner is, on its first entries;
    a pass with a cache runs another reader, with the loop's CPU per entry (said)."""
    maps = [read_basket_map(str(f)) for f in files]
    site = SimpleNamespace(storage=[], os=None)
    spec = parse_reader("root.getentry")
    warm = SimpleNamespace(median=400_000.0, conditions=SimpleNamespace(cache="warm"))
    cold = SimpleNamespace(median=50_000.0, conditions=SimpleNamespace(cache="cold"))
    loop = _Loop(spec.text, warm, cold, (LoopPart(str(files[0]), 4000),
                                         LoopPart(str(files[1]), 2000)))
    cal = _Cal(loop, root_cache_on=_pass(False, 6000, 50_000.0),
               root_cache_off=_pass(False, 1000, 20_000.0))
    rb = reader_baseline(spec, maps, 3, cal, site, _baseline(), access_s=5e-3)
    got = replay_root_passes(spec, rb, cal, maps, site, _baseline(), None, None)
    assert [(cache, own, p.entries, p.files) for cache, own, p in got] == \
        [(False, True, 1000, 1)]
    one = reader_baseline(spec, [maps[0].head(1000)], 1, cal, site, _baseline(),
                          access_s=5e-3)
    assert got[0][2].replayed_mb_per_s == pytest.approx(one.compressed_mb / one.seconds)
    with_cache = replace(cal, root_cache_on=_pass(True, 6000, 80_000.0),
                         root_cache_off=_pass(False, 1000, 20_000.0, cache="warm"))
    (cache, own, p), = replay_root_passes(spec, rb, with_cache, maps, site, _baseline(), None,
                                          None)
    assert cache and not own and p.entries == 6000
    # a program with ROOT's default TTreeCache: its pass with the cache over the whole sample
    # is the loop's own; a pass without it under 1,000 entries is too short to check
    tc = parse_reader("root.ttreecache")
    tc_cal = replace(cal, event_loop=replace(loop, reader=tc.text),
                     root_cache_on=_pass(True, 6000, 80_000.0),
                     root_cache_off=_pass(False, 500, 20_000.0))
    assert replay_root_passes(tc, rb, tc_cal, maps, site, _baseline(), None, None) == ()
    longer = replace(tc_cal, root_cache_off=_pass(False, 2000, 20_000.0))
    (cache_off, own_off, p_off), = replay_root_passes(tc, rb, longer, maps, site, _baseline(),
                                                      None, None)
    assert not cache_off and not own_off and p_off.entries == 2000
    checks = self_checks(ReplayedJob(job=SharedJob(io_s=1.0, cpu_s=1.0), open_s=0.1,
                                     decompress_s=0.1, compressed_mb=10.0, entries=1e4),
                         2.0, None, (), 1.0, Cores(2),
                         root_passes=((cache, own, p), *got))
    assert [c.test for c in checks] == ["replay, ROOT loop with TTreeCache, cold",
                                        "replay, ROOT loop without TTreeCache, cold"]
    assert "your reader's loop's, an assumption" in checks[0].term
    assert "an assumption" not in checks[1].term
