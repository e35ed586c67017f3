"""The per-call cost and the parallel event loop, on tiny data."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import uproot

from helpers import snapshot, write_flat
from hep_advisor.probes import probe_dataset
from hep_advisor.probes.readtests.overhead import (
    calls_per_file,
    measure_call_cost,
    measure_parallel_loop,
)
from hep_advisor.probes.readtests.runner import Session


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of the test's own for ``tempfile`` (other programs write to the
    global one meanwhile), to prove that nothing is left behind."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.setenv("TMPDIR", str(private))
    return private


def test_calls_per_file() -> None:
    assert calls_per_file(1e6) == 1
    assert calls_per_file(120e6) == 3


@pytest.mark.parametrize("dataset", ["small_files", "merged"])
def test_call_cost_is_measured_and_leaves_nothing(private_tmp: Path, tiny_demo: Path,
                                                  dataset: str) -> None:
    before = snapshot(tiny_demo)
    ds = probe_dataset([tiny_demo / dataset])
    # a share the temporary merge fits in on a loaded machine (correctness, not speed)
    cost = measure_call_cost(Session(20.0), list(ds.file_paths), "esdTree", None, 5.0)
    assert cost.call_s is not None and cost.call_s > 0
    assert cost.mb_per_s is not None and cost.mb_per_s > 0
    assert cost.branches == ds.trees[0].branches
    # a file's first call beyond a later one: measured (a median of paired differences,
    # never negative), and no larger than a whole first call could be
    assert cost.first_call_s is not None and 0 <= cost.first_call_s < 1.0
    # the first range's later call: a whole small file's entries on the temporary merge
    assert cost.later_call_s is not None and 0 < cost.later_call_s < 10.0
    assert cost.later_whole_file == (dataset == "small_files")
    # one more call over the same baskets: the split calls, at least 0 and at most a call
    assert cost.split is not None and len(cost.split.samples) >= 1
    assert cost.split_call_s is not None and 0 <= cost.split_call_s <= cost.later_call_s
    if dataset == "small_files":
        with uproot.open(ds.file_paths[0]) as f:
            assert cost.later_entries == f["esdTree"].num_entries
    note = cost.measurement.conditions.note or ""
    # single-basket small files need a temporary merge; the merged file has several baskets
    assert ("temporary merge" in note) == (dataset == "small_files")
    assert snapshot(tiny_demo) == before
    assert tempfile.gettempdir() == str(private_tmp)
    assert os.listdir(private_tmp) == []  # nothing left behind


def test_parallel_loop(tiny_demo: Path) -> None:
    ds = probe_dataset([tiny_demo / "small_files"])
    # a share both runs fit in on a loaded machine (a run that does not fit is left out; 8 s
    # did not on a loaded 2-core machine, where the processes' start took most of it): the
    # share only bounds the time, the data read does not depend on it
    points = measure_parallel_loop(Session(60.0), list(ds.file_paths), "esdTree", None, 40.0,
                                   workers=2)
    assert [p.workers for p in points] == [1, 2]
    assert all(p.aggregate_mb_per_s and p.aggregate_mb_per_s > 0 for p in points)
    assert all(p.units == 6 and p.calls_per_file == 1 for p in points)


def test_a_run_beyond_the_cores_compares_with_the_k_workers_run(tiny_demo: Path) -> None:
    """Asked to oversubscribe, the test runs 2k workers over the same units after the k
    workers' run, and records its speed-up over it (the measurement of workers beyond the
    cores); without being asked (k given), it does not."""
    ds = probe_dataset([tiny_demo / "small_files"])
    points = measure_parallel_loop(Session(90.0), list(ds.file_paths), "esdTree", None, 60.0,
                                   workers=2, oversubscribe=True)
    assert [p.workers for p in points] == [1, 2, 4]
    over = points[2]
    assert over.units == points[1].units == 6
    assert over.speedup_over_cores is not None and 0.1 < over.speedup_over_cores < 4.0
    assert points[0].speedup_over_cores is None and points[1].speedup_over_cores is None


def test_the_k_workers_run_takes_time_the_later_tests_do_not_need(tiny_demo: Path) -> None:
    """A share too short for both runs, under a budget too short for the conversion test
    (which then skips itself): the k workers' run takes the session's spare time (beyond
    the later tests' minimums) rather than leave the single worker's point alone."""
    ds = probe_dataset([tiny_demo / "small_files"])
    session = Session(25.0)  # every test still to run: their minimums are a few seconds
    points = measure_parallel_loop(session, list(ds.file_paths), "esdTree", None, 1.0,
                                   workers=2)
    assert [p.workers for p in points] == [1, 2]
    assert session.elapsed() < 25.0


def test_the_k_workers_run_goes_before_the_conversion(tiny_demo: Path) -> None:
    """Under a budget where the conversion test runs after it, the k workers' run still
    takes the spare time (beyond the later tests' minimums) where its share is too short:
    every prediction beyond one worker rests on it (on 592 branches, LZMA, at --budget 30,
    it was left out with 6 s of the budget left, in three calibrations of three)."""
    ds = probe_dataset([tiny_demo / "small_files"])
    session = Session(40.0)  # the conversion (budget 30 or more) and the rest still to run
    points = measure_parallel_loop(session, list(ds.file_paths), "esdTree", None, 1.0,
                                   workers=2)
    assert [p.workers for p in points] == [1, 2]
    assert session.spare() > 0.0  # the later tests' minimums were left to them


def test_the_single_workers_run_takes_spare_time_where_planning_took_its_share(
        tiny_demo: Path) -> None:
    """A share shorter than the single worker's run (on a loaded CI machine the planning
    took 0.72 s of a 1 s share): the run takes the session's spare time, as the k workers'
    first run does, rather than lose the whole test."""
    ds = probe_dataset([tiny_demo / "small_files"])
    session = Session(40.0)
    points = measure_parallel_loop(session, list(ds.file_paths), "esdTree", None, 0.01,
                                   workers=2)
    assert [p.workers for p in points] == [1, 2]
    assert session.spare() > 0.0


def test_parallel_loop_counts_a_read_call_per_packet(tiny_demo: Path) -> None:
    """One file and two workers: the loop reads packets of entries, each a read call of its
    own, which the model's row must count (else the per-call cost of a merge is not seen)."""
    ds = probe_dataset([tiny_demo / "merged"])
    assert len(ds.file_paths) == 1
    points = measure_parallel_loop(Session(10.0), list(ds.file_paths), "esdTree", None, 8.0,
                                   workers=2)
    assert points and points[0].workers == 1
    for p in points:  # each worker opens the file once and reads its share of the packets
        assert p.units >= 2 * p.workers
        assert p.calls_per_file == pytest.approx(p.units / p.workers)



def test_parallel_loop_reads_the_planned_part_of_one_large_file(tiny_demo: Path) -> None:
    """One file larger than the bytes planned (a slow single loop's rate): both runs read
    packets of its planned part only, not the whole file (a 41 MB file read whole by the
    single worker left no time for the k workers' run)."""
    ds = probe_dataset([tiny_demo / "merged"])
    (path,) = ds.file_paths
    (tree,) = [t for t in ds.trees if t.name == "esdTree"]
    # planned bytes: max(1 MB, rate x share / 4); a rate that plans 1 MB of a larger file
    assert tree.compressed_bytes > 1.1e6
    points = measure_parallel_loop(Session(20.0), [path], "esdTree", None, 8.0, workers=2,
                                   rate_mb_per_s=0.1)
    assert [p.workers for p in points] == [1, 2]
    for p in points:
        assert not p.whole_files and p.units >= 2
        # each worker opens the file once: their MB add up to the part read, not the file
        assert p.file_mb * p.workers < 0.95 * tree.compressed_bytes / 1e6


def test_one_file_per_worker_is_read_in_packets(tmp_path: Path) -> None:
    """Two files of four clusters, two workers: each worker must read units after its first
    (a fresh process's once-only costs fall on its first), so both runs pull packets."""
    two = [str(write_flat(tmp_path / f"f{i}.root", entries=2000, branches=10, chunks=4))
           for i in range(2)]
    points = measure_parallel_loop(Session(20.0), two, "t", None, 8.0, workers=2)
    assert [p.workers for p in points] == [1, 2]
    for p in points:
        assert not p.whole_files and p.units >= 2 * p.workers
    assert points[1].later_s_per_mb is not None  # later units to compare, like with like


def test_the_files_read_fit_the_share_with_their_opening(tiny_demo: Path) -> None:
    """The single loop's rate leaves the opening out: with each file's open cost counted, the
    runs read only the files whose opening and reading fit a quarter of the share, at least
    k of them (without it they read all six, whatever the opening costs)."""
    ds = probe_dataset([tiny_demo / "small_files"])
    paths = list(ds.file_paths)
    plain = measure_parallel_loop(Session(60.0), paths, "esdTree", None, 40.0, workers=2,
                                  rate_mb_per_s=50.0)
    assert plain and plain[0].units == 6
    # 6 s per file: two per worker (one run of each: 1.75 x 24.3 s) do not fit 40 s either
    slow_opens = measure_parallel_loop(Session(60.0), paths, "esdTree", None, 40.0, workers=2,
                                       rate_mb_per_s=50.0, open_s=6.0)
    assert slow_opens and all(p.units == 2 for p in slow_opens)  # k = 2 files: none more fit


def test_two_files_per_worker_rather_than_two_runs_of_one(tiny_demo: Path) -> None:
    """Where a quarter of the share (two runs of each) fits only k files, but one run of each
    fits two files per worker, the runs read 2 k whole files: each worker reads a file after
    its first, whose pace compares like with like (a small file of one cluster is one unit,
    which packets do not split)."""
    ds = probe_dataset([tiny_demo / "small_files"])
    paths = list(ds.file_paths)
    # 0.8 s per file: a quarter of 8 s holds 2 files (0.3 + 2 x 0.8), one run of 4 files
    # and the k workers' (1.75 x 3.5 s) the whole share
    points = measure_parallel_loop(Session(20.0), paths, "esdTree", None, 8.0, workers=2,
                                   rate_mb_per_s=50.0, open_s=0.8)
    assert [p.workers for p in points] == [1, 2]
    assert all(p.whole_files and p.units == 4 for p in points)
    assert all(p.later_s_per_mb is not None for p in points)
