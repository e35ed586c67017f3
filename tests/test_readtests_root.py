"""The ROOT engine of the read tests: a C++ GetEntry loop with TTreePerfStats, and the open cost
through TFile::Open."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import snapshot
from hep_advisor.probes.readtests import rootengine
from hep_advisor.probes.readtests.runner import Cancelled, Session

if not rootengine.root_available():
    pytest.skip("ROOT is not installed (the `root` extra)", allow_module_level=True)

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def esd_files(tiny_demo: Path) -> list[str]:
    return sorted(str(p) for p in (tiny_demo / "small_files").glob("*.root"))


@pytest.fixture(scope="module")
def esd_loop(esd_files: list[str], tiny_demo: Path) -> rootengine.RootEventLoop:
    before = snapshot(tiny_demo)
    # a share the pilot and cache-off passes cannot run out of on a loaded machine (they are
    # cut short in time, and the checks below count whole passes)
    result = rootengine.measure_root_event_loop(Session(60), esd_files, "esdTree", share_s=4.0)
    assert snapshot(tiny_demo) == before  # read only
    return result


def test_root_event_loop_figures(esd_loop: rootengine.RootEventLoop,
                                 esd_files: list[str]) -> None:
    loop = esd_loop.event_loop
    assert loop.engine == "root" and loop.branches > 200
    assert loop.events_per_s is not None and loop.events_per_s > 0
    assert loop.compressed_mb_per_s > 0 and loop.uncompressed_mb_per_s > loop.compressed_mb_per_s
    assert loop.warm is not None and loop.warm.conditions.cache == "warm"
    assert loop.cold is not None and loop.cold.unit == "events/s"


def test_ttreecache_cuts_the_read_calls(esd_loop: rootengine.RootEventLoop,
                                        esd_files: list[str]) -> None:
    on, off = esd_loop.cache_on, esd_loop.cache_off
    assert on is not None and off is not None
    assert on.tree_cache and on.cache_bytes > 0 and not off.tree_cache and off.cache_bytes == 0
    assert on.bytes_read > 0 and off.bytes_read > 0
    assert on.entries == off.entries == 6 * 20 and on.files == len(esd_files)
    # one read per basket without the cache (205 branches, one basket each, per file); a few
    # large reads per file with it
    assert off.read_calls >= 200 * len(esd_files)
    assert on.read_calls < off.read_calls / 20
    assert on.mean_read_bytes > off.mean_read_bytes
    assert on.unzipped_bytes == off.unzipped_bytes > 0
    assert on.unzip_time_s > 0 and on.real_time_s > 0 and on.events_per_s > 0


def test_root_event_loop_selected_branches(tiny_demo: Path) -> None:
    flat = str(tiny_demo / "flat" / "pythia_zlib1.root")
    result = rootengine.measure_root_event_loop(Session(60), [flat], "pythia", ["px", "py"],
                                                share_s=0.3, cold=False)
    assert result.event_loop.branches == 2
    assert result.cache_on is not None and result.cache_on.unzipped_bytes == 4000 * 8
    assert result.event_loop.uncompressed_mb_per_s * 1e6 / result.event_loop.events_per_s \
        == pytest.approx(8)
    with pytest.raises(ValueError, match="no branch nosuch in tree 'pythia'"):
        rootengine.measure_root_event_loop(Session(60), [flat], "pythia", ["nosuch"],
                                           share_s=0.2)
    with pytest.raises(ValueError, match="no tree 'nosuch'"):
        rootengine.measure_root_event_loop(Session(60), [flat], "nosuch", share_s=0.2)
    session = Session(60)
    session.cancel()
    with pytest.raises(Cancelled):
        rootengine.measure_root_event_loop(session, [flat], "pythia", share_s=0.2)


def test_root_open_cost(esd_files: list[str]) -> None:
    cold, warm = rootengine.measure_root_open_cost(esd_files, "esdTree")
    assert len(cold) == len(warm) == len(esd_files)
    assert all(0 < s < 1 for s in cold + warm)
    cold, warm = rootengine.measure_root_open_cost(esd_files[:2])  # the first TTree
    assert len(warm) == 2
    overhead = rootengine.root_open_overhead(Session(60), esd_files, ["esdTree"], 0.5)
    assert overhead.warm is not None and overhead.warm > 0
    assert overhead.cold_measurement is not None
    assert len(overhead.cold_measurement.samples) == len(esd_files)
    with pytest.raises(ValueError, match="cannot open"):
        rootengine.measure_root_open_cost(esd_files[:1], "nosuch")
