"""The link model (models/remote_reads.py) and the remote rules (advisor/rules/remote.py) on a
tiny file written here by uproot: round trips per reader, bytes moved, staging, XCache, the
break-even fraction, and when X001 / X003 fire.  No server needed (the bench tests are in
test_remote_probe.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.remote_reads import (
    ROOT_EXTRA_ROUNDS,
    RemoteLink,
    Round,
    break_even_fraction,
    needed_bytes,
    root_rounds,
    stage,
    stream,
    uproot_rounds,
    xcache,
)
from hep_advisor.models.replay.readers import root_open, uproot_open
from hep_advisor.probes.basketmap import BasketMap, read_basket_map
from hep_advisor.probes.readtests.remote_results import (
    RemoteCalibration,
    RemoteSamples,
    StreamsPoint,
    VectorReads,
)
from hep_advisor.probes.results import DatasetProfile
from hep_advisor.rules.remote import link_notes, stage_rule, streams_rule

BRANCHES = [f"b{i}" for i in range(8)]


@pytest.fixture(scope="module")
def bmap(tmp_path_factory: pytest.TempPathFactory) -> BasketMap:
    import uproot

    path = tmp_path_factory.mktemp("remote_model") / "t.root"
    rng = np.random.default_rng(3)
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {b: np.float32 for b in BRANCHES})
        for _ in range(5):  # five baskets per branch
            f["Events"].extend({b: rng.random(1000, dtype=np.float32) for b in BRANCHES})
    return read_basket_map(str(path), "Events")


def _link(rtt_ms: float = 20.0, mb: float = 10.0) -> RemoteLink:
    return RemoteLink(rtt_s=rtt_ms / 1e3, mb_per_s=mb, open_s=rtt_ms / 1e3)


def test_round_trips_per_reader(bmap: BasketMap) -> None:
    n_baskets = sum(len(b.seek) for b in bmap.branches)
    assert n_baskets == 5 * len(BRANCHES)
    meta = len(uproot_open(bmap, streamers=bmap.uproot_streamers is not False))
    one_step = uproot_rounds([bmap])
    assert len(one_step) == meta + 1  # arrays(): the open's reads, then one step
    steps = uproot_rounds([bmap], step_entries=1000)
    assert len(steps) == meta + 5
    no_cache = root_rounds([bmap], tree_cache=False)
    # one round trip per basket, then the server query and the close
    assert len(no_cache) == len(root_open(bmap)) + n_baskets + ROOT_EXTRA_ROUNDS
    cached = root_rounds([bmap], tree_cache=True)
    assert len(cached) < len(no_cache)
    # the baskets themselves are moved once by each reader
    need = needed_bytes([bmap], None)
    data = sum(r.nbytes for r in steps[meta:])
    assert data == need


def test_streamers_once_per_process(bmap: BasketMap) -> None:
    with_s = uproot_rounds([bmap, bmap])
    without = uproot_rounds([bmap, bmap], streamers=False)
    assert len(with_s) >= len(without)
    assert sum(r.nbytes for r in with_s) >= sum(r.nbytes for r in without)


def test_link_time_is_round_trips_plus_transfer() -> None:
    rounds = [Round("f", ((0, 1_000_000),)), Round("f", ((2_000_000, 500_000),))]
    t, n, nbytes = _link(20, 10).time(rounds)
    assert n == 2 and nbytes == 1_500_000
    assert t == pytest.approx(2 * 0.020 + 1.5e6 / 10e6)
    p = stream("x", rounds, _link(20, 10), 0.5, 1_000_000, 1)
    assert p.total_s == pytest.approx(t + 0.020 + 0.5)
    assert p.amplification == pytest.approx(1.5)


def test_stage_and_xcache(bmap: BasketMap) -> None:
    link = RemoteLink(0.02, 10.0, 0.02, lan_rtt_s=0.0001, lan_mb_per_s=500.0)
    sizes = [bmap.file_bytes] * 3
    seq = stage(sizes, link, [0.2] * 3, 1, copy_rtts=4)
    over = stage(sizes, link, [0.2] * 3, 1, copy_rtts=4, overlap=True)
    assert seq.bytes_moved == 3 * bmap.file_bytes
    assert over.total_s < seq.total_s
    rounds = uproot_rounds([bmap], ["b0"])
    cold = xcache("u", rounds, link, 0.0, 1, 1, {bmap.path: bmap.file_bytes}, warm=False)
    warm = xcache("u", rounds, link, 0.0, 1, 1, {bmap.path: bmap.file_bytes}, warm=True)
    assert warm.bytes_moved == 0 and warm.io_s < cold.io_s
    # cold: whole 1 MiB blocks, never past the end of the file
    assert sum(r.nbytes for r in rounds) <= cold.bytes_moved <= bmap.file_bytes


def test_break_even_fraction() -> None:
    link = _link(20, 10)
    cheap = break_even_fraction(100_000_000, link, 1 / 10e6)  # streaming at the bandwidth
    dear = break_even_fraction(100_000_000, link, 10 / 10e6)  # ten times the bandwidth's cost
    assert cheap is not None and dear is not None
    assert dear < cheap <= 1.0
    assert break_even_fraction(0, link, 1.0) is None


def _cal(points: list[tuple[int, float]], rtt_ms: float = 20.0) -> RemoteCalibration:
    return RemoteCalibration(
        url="root://h//f.root", scheme="root", server="XRootD", rtt_ms=rtt_ms,
        bandwidth_mb_per_s=10.0,
        parallel_streams=tuple(StreamsPoint(k, v, 1, (v,)) for k, v in points),
        vector_reads=VectorReads(True, 64, 4096, 0.05, 0.02, 0.0), open_s=rtt_ms / 1e3,
        first_open_s=0.05, request_sweep=(), fit_latency_ms=None, fit_bandwidth_mb_per_s=None,
        rtt=RemoteSamples("ms", (rtt_ms,) * 3, rtt_ms, 0.0),
        bandwidth=RemoteSamples("MB/s", (10.0,) * 3, 10.0, 0.0))


def test_x003_fires_only_on_a_measured_gain() -> None:
    rec = streams_rule(_cal([(1, 10.0), (2, 18.0), (4, 30.0)]))
    assert rec is not None and rec.code == "X003" and rec.workers == 4
    assert rec.predicted_speedup == pytest.approx(3.0)
    assert streams_rule(_cal([(1, 10.0), (2, 10.2), (4, 10.1)])) is None


def test_x001_needs_staging_to_be_faster(bmap: BasketMap) -> None:
    from hep_advisor.probes.results import DatasetProfile

    ds = DatasetProfile(files=1, total_bytes=bmap.file_bytes, errors=(), trees=(),
                        sampling=None, probe_s=0.0)  # type: ignore[arg-type]
    # whole-file reads in one step: streaming moves no more than staging; no X001
    assert stage_rule(ds, _cal([(1, 10.0)]), [bmap], None) is None


def test_link_notes_name_the_figures() -> None:
    from hep_advisor.probes.readtests.results import Calibration

    cal = Calibration(budget_s=1, elapsed_s=1, partial=False, engine="uproot", raw_read=None,
                      request_sweep=(), concurrency=(), open_overhead_s=None, decompression=(),
                      event_loop=None, memory=None, remote=_cal([(1, 10.0)]))
    text = " ".join(link_notes(cal))
    assert "20.00 ms" in text and "10.00 MB/s" in text and "no rate model" in text


def test_paths_are_not_written(tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    _link().time([])
    assert sorted(tmp_path.iterdir()) == before


def test_treecache_over_the_link_saves_round_trips(bmap: BasketMap) -> None:
    from hep_advisor.models.remote_reads import treecache_remote

    off, on = treecache_remote([bmap], None, _link(20, 10))
    assert on.round_trips < off.round_trips
    assert on.io_s < off.io_s
    assert off.amplification is not None and off.amplification >= 1.0


def _synthetic(branches: int = 20, clusters: int = 10, per: int = 1000,
               basket: int = 4000) -> BasketMap:
    """Interleaved baskets: per cluster, one basket of each branch, one after the other."""
    from hep_advisor.probes.basketmap import synthetic_map

    rows, seek = [], 1000
    for c in range(clusters):
        for b in range(branches):
            rows.append((f"b{b}", seek, basket, c * per, (c + 1) * per))
            seek += basket
    return synthetic_map(rows, entries=clusters * per,
                         clusters=[c * per for c in range(clusters + 1)])


def _ds(files: int = 1) -> DatasetProfile:
    return DatasetProfile(files=files, total_bytes=0, errors=(), trees=(),
                          sampling=None, probe_s=0.0)  # type: ignore[arg-type]


def test_t001_remote_fires_on_a_20ms_link() -> None:
    from hep_advisor.models.remote_reads import treecache_remote
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.rules.remote import remote_rules, treecache_rule

    m = _synthetic()
    rc = _cal([(1, 10.0)])
    rec = treecache_rule(_ds(), rc, [m], None)
    assert rec is not None and rec.code == "T001" and rec.kind == "treecache"
    assert "remote link" in rec.title
    off, on = treecache_remote([m], None, RemoteLink.from_calibration(rc))
    assert off.round_trips > 10 * on.round_trips
    assert rec.predicted_speedup == pytest.approx(off.io_s / on.io_s, rel=1e-3)
    assert rec.predicted_speedup >= 1.05
    # no samples' spread kept (all equal here): the interval still brackets the point (+-10%
    # only where there are no samples at all)
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    names = {e.name for e in rec.evidence}
    assert {"round trip", "bandwidth, one stream", "round trips without TTreeCache",
            "round trips with TTreeCache", "bytes moved without / with",
            "read amplification without / with"} <= names
    commands = " ".join(a.command or "" for a in rec.actions)
    assert 'tree->AddBranchToCache("*", true);' in commands
    assert 'tree.AddBranchToCache("*", True)' in commands
    assert all(a.requires for a in rec.actions)
    # a selection: the cache is given the branches read, never "*"
    sel = treecache_rule(_ds(), rc, [m], ["b0", "b3"])
    assert sel is not None
    sel_cmds = " ".join(a.command or "" for a in sel.actions)
    assert '"b3"' in sel_cmds and '"*"' not in sel_cmds
    # wired into the remote rules for a remote calibration
    cal = Calibration(budget_s=1, elapsed_s=1, partial=False, engine="root", raw_read=None,
                      request_sweep=(), concurrency=(), open_overhead_s=None, decompression=(),
                      event_loop=None, memory=None, remote=rc)
    codes = [r.code for r in remote_rules(_ds(), cal, [m], None)]
    assert "T001" in codes


def test_t001_remote_interval_without_samples_and_spread() -> None:
    from dataclasses import replace

    from hep_advisor.rules.remote import treecache_rule

    m = _synthetic()
    bare = replace(_cal([(1, 10.0)]), rtt=None, bandwidth=None)
    rec = treecache_rule(_ds(), bare, [m], None)
    assert rec is not None
    assert rec.speedup_low < rec.predicted_speedup < rec.speedup_high
    assert any("+-10%" in a for a in rec.assumptions)
    spread = replace(_cal([(1, 10.0)]), rtt=RemoteSamples("ms", (15.0, 20.0, 30.0, 40.0), 25.0,
                                                         0.5))
    wide = treecache_rule(_ds(), spread, [m], None)
    assert wide is not None and wide.speedup_high > wide.speedup_low
    assert any("measured spread" in a for a in wide.assumptions)


def test_t001_remote_silent_on_a_local_like_link() -> None:
    from dataclasses import replace

    from hep_advisor.rules.remote import treecache_rule

    local = replace(_cal([(1, 10.0)], rtt_ms=0.0), bandwidth_mb_per_s=1000.0, open_s=0.0,
                    rtt=RemoteSamples("ms", (0.0,) * 3, 0.0, 0.0),
                    bandwidth=RemoteSamples("MB/s", (1000.0,) * 3, 1000.0, 0.0))
    assert treecache_rule(_ds(), local, [_synthetic()], None) is None
    assert treecache_rule(_ds(), _cal([(1, 10.0)]), [], None) is None


# -- the reader's CPU with the link -------------------------------------------------------------

def _cpu_cal(rc: RemoteCalibration, engine: str, mb_s: float = 0.05,
             samples: tuple[float, ...] = (0.9, 1.0, 1.2)) -> RemoteCalibration:
    from dataclasses import replace

    from hep_advisor.probes.readtests.remote_results import RemoteReaderCpu

    loop = sorted(samples)[len(samples) // 2]
    return replace(rc, cpu=RemoteReaderCpu(engine, rc.url, 1_000_000, int(loop / mb_s * 1e6),
                                           100, 0.01, loop, mb_s, samples, 0.2))


def test_rounds_carry_the_baskets_they_fetch(bmap: BasketMap) -> None:
    need = needed_bytes([bmap], None)
    for rounds in (uproot_rounds([bmap]), uproot_rounds([bmap], source="xrootd"),
                   uproot_rounds([bmap], step_entries=1000),
                   root_rounds([bmap], tree_cache=False), root_rounds([bmap], tree_cache=True)):
        assert sum(r.basket_bytes for r in rounds) == need
        assert sum(r.baskets for r in rounds) == 5 * len(BRANCHES)
    sel = root_rounds([bmap], ["b0"], tree_cache=True)
    assert sum(r.basket_bytes for r in sel) == needed_bytes([bmap], ["b0"])


def test_job_overlaps_cpu_for_uproot_and_adds_it_for_root(bmap: BasketMap) -> None:
    from hep_advisor.models.remote_reads import ReaderCpu, job, reader_cpu_s

    link = _link(20, 1.0)
    rounds = uproot_rounds([bmap])
    cpu = ReaderCpu(open_s=0.01, mb_s=2.0, basket_s=1e-4)
    serial = job("u", rounds, link, cpu, 1, 1, overlap=False)
    over = job("u", rounds, link, cpu, 1, 1, overlap=True)
    plain = stream("u", rounds, link, 0.0, 1, 1)
    assert serial.io_s == pytest.approx(plain.io_s)
    assert serial.cpu_s == pytest.approx(reader_cpu_s(rounds, cpu, 1))
    assert serial.total_s == pytest.approx(serial.io_s + serial.cpu_s)
    # per round: max(transfer, cpu) instead of their sum; never below either part
    x = sum(r.nbytes for r in rounds) / 1e6
    c = sum(cpu.of(r.basket_bytes, r.baskets) for r in rounds)
    assert over.overlap_s == pytest.approx(sum(min(r.nbytes / 1e6, cpu.of(r.basket_bytes,
                                                                           r.baskets))
                                               for r in rounds))
    assert 0 < over.overlap_s <= min(x, c)
    assert max(over.io_s, over.cpu_s) <= over.total_s < serial.total_s
    # no CPU: the link time alone
    assert job("u", rounds, link, ReaderCpu(), 1, 1, overlap=True).total_s == pytest.approx(
        plain.total_s)


def test_roots_cost_per_entry_whatever_the_branches(bmap: BasketMap) -> None:
    """ROOT's loop visits every entry of each file whatever the branches: the entries sit on
    the file's first round that brings baskets, and only ``entry_s`` charges them."""
    from hep_advisor.models.remote_reads import ReaderCpu, job, reader_cpu_s
    from hep_advisor.probes.readtests.remote_cpu import _entry_cost
    from hep_advisor.probes.readtests.remote_results import RemoteReaderCpu

    for rounds in (root_rounds([bmap], tree_cache=False), root_rounds([bmap], ["b0"]),
                   root_rounds([bmap, bmap])):
        assert sum(r.entries for r in rounds) == bmap.entries  # a path once: its entries once
        first = next(r for r in rounds if r.baskets)
        assert first.entries == bmap.entries
    assert all(r.entries == 0 for r in uproot_rounds([bmap]))
    rounds = root_rounds([bmap], ["b0"])
    plain, per = ReaderCpu(0.01, 2.0), ReaderCpu(0.01, 2.0, entry_s=1e-6)
    assert reader_cpu_s(rounds, per, 1) == pytest.approx(
        reader_cpu_s(rounds, plain, 1) + bmap.entries * 1e-6)
    link = _link(1, 100.0)
    assert job("r", rounds, link, per, 1, 1, overlap=False).cpu_s == pytest.approx(
        reader_cpu_s(rounds, per, 1))
    # the measurement: all = E + B x b, one = E + b_1 x b -> E, exactly; none where the
    # passes give no positive cost per byte or a negative cost per entry
    e, b = 0.6e-6, 50e-9
    assert _entry_cost(5000 * e + 1_000_000 * b, 5000 * e + 10_000 * b, 1_000_000, 10_000,
                       5000) == pytest.approx(e)
    assert _entry_cost(0.01, 0.02, 1_000_000, 10_000, 5000) is None
    assert _entry_cost(0.05, 0.001, 1_000_000, 100_000, 5000) is None
    # a measured cost per entry leaves the bytes theirs: mb_s less the entries' part
    cpu = RemoteReaderCpu("root", "root://h//f.root", 2_000_000, 1_000_000, 100, 0.001, 0.08,
                          0.08, (0.08,), None, entries=20_000, entry_s=1e-6)
    model = ReaderCpu.from_measured(cpu)
    assert model is not None and model.entry_s == 1e-6
    assert model.mb_s == pytest.approx(0.06)
    assert model.of(1_000_000, 0, 20_000) == pytest.approx(0.08)


def test_reader_cpu_from_a_local_calibration() -> None:
    from hep_advisor.models.remote_reads import ReaderCpu
    from hep_advisor.models.replay.cpucosts import CpuCosts

    cpu = ReaderCpu.from_costs(CpuCosts(open_s=0.02, call_s=0.001, basket_s=1e-5,
                                        decompress_mb_per_s=200.0, process_mb_per_s=100.0))
    assert cpu.open_s == 0.02 and cpu.basket_s == 1e-5
    assert cpu.mb_s == pytest.approx(1 / 200 + 1 / 100)
    assert cpu.of(2_000_000, 10) == pytest.approx(2 * (1 / 200 + 1 / 100) + 10e-5)


def test_t001_remote_is_the_whole_job_with_roots_cpu() -> None:
    """With ROOT's CPU measured, T001's speed-up is of the whole job, smaller than the link's
    alone; with uproot's CPU (another reader) it stays the link's, and says so."""
    from hep_advisor.models.remote_reads import ReaderCpu, treecache_remote
    from hep_advisor.rules.remote import treecache_rule

    m = _synthetic()
    rc = _cal([(1, 10.0)])
    link_only = treecache_rule(_ds(), rc, [m], None)
    whole = treecache_rule(_ds(), _cpu_cal(rc, "root"), [m], None)
    other = treecache_rule(_ds(), _cpu_cal(rc, "uproot"), [m], None)
    assert link_only is not None and whole is not None and other is not None
    assert 1.05 <= whole.predicted_speedup < link_only.predicted_speedup
    assert other.predicted_speedup == pytest.approx(link_only.predicted_speedup)
    off, on = treecache_remote([m], None, RemoteLink.from_calibration(rc),
                               ReaderCpu(0.01, 0.05))
    assert whole.predicted_speedup == pytest.approx(off.total_s / on.total_s, rel=1e-3)
    # the CPU passes' spread widens the interval
    assert whole.speedup_low < whole.predicted_speedup < whole.speedup_high
    assert any("whole job" in a for a in whole.assumptions)
    assert any("link" in a and "whole job" not in a for a in other.assumptions)
    assert "whole job without / with" in {e.name for e in whole.evidence}


def test_x001_with_cpu_compares_whole_jobs(bmap: BasketMap) -> None:
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.rules.remote import link_notes

    rc = _cpu_cal(_cal([(1, 10.0)]), "uproot")
    cal = Calibration(budget_s=1, elapsed_s=1, partial=False, engine="uproot", raw_read=None,
                      request_sweep=(), concurrency=(), open_overhead_s=None, decompression=(),
                      event_loop=None, memory=None, remote=rc)
    text = " ".join(link_notes(cal, _ds(), [bmap], None))
    assert "whole job" in text and "ms per compressed MB" in text
    assert stage_rule(_ds(), rc, [bmap], None) is None  # one whole-file step: no X001


def test_the_default_iterates_key_prepass_is_a_round_trip_per_basket() -> None:
    """uproot's memory-size step first reads every selected basket's key, one request each:
    over a link, one round trip per basket before the data; an entry step reads none."""
    from hep_advisor.models.remote_reads import uproot_rounds

    m = _synthetic(branches=20, clusters=10)
    keyed = uproot_rounds([m], None, step_bytes=100_000_000)
    stepped = uproot_rounds([m], None, step_entries=1000)
    keys = [r for r in keyed if r.baskets == 0 and r.nbytes <= 64]
    assert len(keys) - len([r for r in stepped if r.baskets == 0 and r.nbytes <= 64]) == 200
    assert sum(r.baskets for r in keyed) == sum(r.baskets for r in stepped) == 200


@pytest.mark.parametrize("error", [None, "TypeError: integer argument expected for offset"])
def test_x004_names_the_default_readers_cost_and_its_failure(error: str | None) -> None:
    """X004: the default iterate's key round trips against an entry step, replayed through
    the link; where the calibration found the default failing over the link, it says so."""
    from dataclasses import replace

    from hep_advisor.rules.remote import step_rule

    m = _synthetic(branches=20, clusters=10)
    rc = replace(_cal([(1, 10.0)]), default_iterate_tried=True, default_iterate_error=error)
    rec = step_rule(_ds(), rc, [m], None)
    assert rec is not None and rec.code == "X004" and rec.predicted_speedup > 2
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    ev = {e.name: e for e in rec.evidence}
    assert ev["key round trips"].value == 200
    assert ev["uproot's default iterate over the link"].value == ("fails" if error else "reads")
    assert ("fails here" in rec.title) == (error is not None)
    assert "step_size=" in (rec.actions[0].command or "")
    # a link as fast as a local disk: no gain, nothing said, unless the default fails
    fast = replace(rc, rtt_ms=0.01, rtt=RemoteSamples("ms", (0.01,) * 3, 0.01, 0.0))
    assert (step_rule(_ds(), fast, [m], None) is None) == (error is None)
