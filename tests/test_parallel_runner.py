"""The parallel job (probes.readtests.parallel): N uproot worker processes over the tiny demo."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from helpers import snapshot
from hep_advisor.demo import make_datasets
from hep_advisor.probes.dataset import probe_dataset
from hep_advisor.probes.readtests import parallel
from hep_advisor.probes.readtests.pagecache import evict
from hep_advisor.probes.readtests.parallel import (
    FileRun,
    JobResult,
    measure_job,
    over_cores,
    run_job,
    unit_pace,
)
from hep_advisor.probes.results import TreeProfile


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = make_datasets(tmp_path_factory.mktemp("d") / "x", scale="tiny", jobs=1)
    for p in sorted(d.rglob("*.root")):  # flushed, so that eviction can work
        with open(p, "rb") as fh:
            os.fsync(fh.fileno())
    return d


@pytest.fixture(scope="module")
def small(data: Path) -> list[str]:
    files = sorted(str(p) for p in (data / "small_files").glob("*.root"))
    assert len(files) == 6
    return files


@pytest.fixture(scope="module")
def evictable(small: list[str]) -> bool:
    """Whether this file system lets files be evicted (tmpfs, for one, does not)."""
    return all(evict(p).cold for p in small)


@pytest.fixture(scope="module")
def esd_profile(small: list[str]) -> TreeProfile:
    profile = probe_dataset(small, sample=None)
    (tree,) = [t for t in profile.trees if t.name == "esdTree"]
    return tree


@pytest.fixture(autouse=True)
def untouched(data: Path) -> Iterator[None]:
    """Every test leaves the data as it was and no child process behind."""
    me = psutil.Process()
    before_children = {c.pid for c in me.children(recursive=True)}
    before = snapshot(data)
    yield
    assert snapshot(data) == before
    left = [c.pid for c in me.children(recursive=True) if c.pid not in before_children]
    assert left == []  # not even a zombie: every child was joined


def check_consistent(r: JobResult) -> None:
    assert r.units == len(r.per_file) >= r.files == len({u.path for u in r.per_file})
    assert sum(w[0] for w in r.per_worker) == r.units
    assert sum(w[1] for w in r.per_worker) == r.entries
    assert len(r.per_worker) == r.workers
    assert r.wall_s > 0
    assert all(0 <= w[2] <= r.wall_s * 1.05 + 0.01 for w in r.per_worker)
    assert r.aggregate_mb_per_s == pytest.approx(r.compressed_bytes / r.wall_s / 1e6)
    assert r.events_per_s == pytest.approx(r.entries / r.wall_s)
    assert r.uncompressed_bytes >= r.compressed_bytes > 0


@pytest.mark.parametrize("workers", [1, 2])
def test_every_file_is_processed_exactly_once(
    small: list[str], esd_profile: TreeProfile, evictable: bool, workers: int
) -> None:
    r = run_job(small, "esdTree", workers)
    check_consistent(r)
    assert r.workers == workers
    assert sorted(f.path for f in r.per_file) == small  # each file once
    assert {f.worker for f in r.per_file} <= set(range(workers))
    assert r.entries == esd_profile.entries
    # all branches: the bytes from the metadata are the tree's
    assert r.compressed_bytes == esd_profile.compressed_bytes
    assert r.uncompressed_bytes == esd_profile.uncompressed_bytes
    assert r.branches == esd_profile.branches
    assert r.cache == ("cold" if evictable else r.cache)
    if not evictable:
        assert r.cache in ("mixed", "unknown") and r.note
    if workers == 2:
        assert all(w[0] >= 1 for w in r.per_worker)  # pull-based: both took files


def test_each_worker_numbers_its_units_in_the_order_it_took_them(small: list[str]) -> None:
    r = run_job(small[:4], "esdTree", 2, cold=False)
    for w in range(2):
        orders = sorted(f.order for f in r.per_file if f.worker == w)
        assert orders == list(range(len(orders)))  # 0, 1, ... within each worker
    first, later = unit_pace(r)
    mb = r.compressed_bytes / 1e6
    firsts = [f for f in r.per_file if f.order == 0]
    assert first == pytest.approx(sum(f.seconds for f in firsts)
                                  / (sum(f.compressed_bytes for f in firsts) / 1e6))
    assert later is None if len(firsts) == len(r.per_file) else later > 0
    assert 0 < first < 60 * mb
    one = run_job(small[:1], "esdTree", 1, cold=False)
    assert unit_pace(one)[1] is None  # a single unit: no later units


def _run(workers: int, units: list[tuple[str, int, int, int, float, int, int]],
         opens: list[float] | None = None) -> JobResult:
    """A JobResult of ``units``: (path, start, stop, MB, seconds, worker, order); ``opens``:
    each unit's seconds of opening its file (0 by default)."""
    runs = tuple(FileRun(path=p, worker=w, entries=b - a, compressed_bytes=int(mb * 1e6),
                         uncompressed_bytes=int(2 * mb * 1e6), seconds=t, entry_start=a,
                         entry_stop=b, order=o, open_s=(opens or [0.0] * len(units))[k])
                 for k, (p, a, b, mb, t, w, o) in enumerate(units))
    return JobResult(workers=workers, files=1, entries=sum(r.entries for r in runs),
                     compressed_bytes=sum(r.compressed_bytes for r in runs),
                     uncompressed_bytes=sum(r.uncompressed_bytes for r in runs), wall_s=1.0,
                     aggregate_mb_per_s=1.0, events_per_s=1.0, cache="warm",
                     per_worker=(), per_file=runs, units=len(runs), packet_entries=1000)


def test_uneven_units_compare_like_against_like() -> None:
    # one cluster of 10,000 entries (10 MB) and one of 2,000 (2 MB): the single worker reads
    # the small one second; the two workers read each first, the small one paying a fresh
    # process's once-only 0.3 s on 2 MB
    one = _run(1, [("f", 0, 10000, 10.0, 1.0, 0, 0), ("f", 10000, 12000, 2.0, 0.2, 0, 1)])
    two = _run(2, [("f", 0, 10000, 10.0, 1.05, 0, 0), ("f", 10000, 12000, 2.0, 0.5, 1, 0)])
    assert unit_pace(two) == pytest.approx((1.55 / 12.0, None))  # both first units
    # like against like: only the 10,000-entry cluster was a first unit in both runs
    assert unit_pace(two, like=one) == pytest.approx((0.105, None))
    assert unit_pace(one, like=two) == pytest.approx((0.1, None))
    assert unit_pace(one) == pytest.approx((0.1, 0.1))


def test_workers_beyond_the_cores_compare_their_first_units_only() -> None:
    """Six units of 1 MB: two workers read three each at 0.1 s/MB; four workers read their
    first four side by side at 0.2 s/MB (the cores taken in turns: no loss), then the two
    left at the cores' full pace.  The first units say 1.0x; the later ones, read two at a
    time, would say 2x."""
    units = [(f"f{i}", 0, 100, 1.0) for i in range(6)]
    two = _run(2, [(*u, 0.1, i % 2, i // 2) for i, u in enumerate(units)])
    four = _run(4, [(*u, 0.2 if i < 4 else 0.1, i % 4, i // 4) for i, u in enumerate(units)])
    assert over_cores(two, four) == pytest.approx(1.0)
    # at 0.25 s/MB side by side: four workers leave 0.8 of two's rate
    slower = _run(4, [(*u, 0.25 if i < 4 else 0.1, i % 4, i // 4) for i, u in enumerate(units)])
    assert over_cores(two, slower) == pytest.approx(0.8)


def test_selected_branches_read_fewer_bytes(small: list[str], esd_profile: TreeProfile) -> None:
    chosen = [b.name for b in esd_profile.branch_profiles[-3:]]
    r = run_job(small, "esdTree", 2, branches=chosen, cold=False, library="np")
    check_consistent(r)
    assert r.cache == "warm" and r.branches == 3 and r.library == "np"
    assert r.entries == esd_profile.entries
    want = sum(b.compressed_bytes for b in esd_profile.branch_profiles if b.name in chosen)
    assert r.compressed_bytes == want < esd_profile.compressed_bytes


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the shared counter reaches the workers by fork")
def test_flat_tree_with_an_analysis_and_max_files(data: Path) -> None:
    flat = sorted(str(p) for p in (data / "flat").glob("*.root"))
    seen = multiprocessing.get_context("fork").Value("l", 0)  # shared with the workers

    def count(arrays: Any) -> None:
        with seen.get_lock():
            seen.value += len(arrays)

    r = run_job(flat, "pythia", 2, analysis=count, max_files=2, cold=False)
    check_consistent(r)
    assert r.files == 2 and [f.path for f in r.per_file] == flat[:2]
    assert r.analysis is not None and r.analysis.endswith("count")
    assert seen.value == r.entries > 0  # called on every chunk, in the workers


def test_packets_split_one_merged_file_between_workers(data: Path) -> None:
    merged = str(data / "merged" / "esd_merged.root")
    (tree,) = [t for t in probe_dataset([merged]).trees if t.name == "esdTree"]
    r = run_job([merged], "esdTree", 2, packet_entries=tree.entries // 4, cold=False)
    check_consistent(r)
    assert r.files == 1 and r.units == len(r.per_file) >= 3 and r.packet_entries
    ranges = [(u.entry_start, u.entry_stop) for u in r.per_file]
    assert ranges[0][0] == 0 and ranges[-1][1] == tree.entries
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))  # contiguous, no overlap
    assert [u.entries for u in r.per_file] == [b - a for a, b in ranges]
    assert r.entries == tree.entries
    assert r.compressed_bytes == tree.compressed_bytes  # the shares add up exactly
    assert r.uncompressed_bytes == tree.uncompressed_bytes
    with pytest.raises(ValueError, match="packet_entries"):
        run_job([merged], "esdTree", 1, packet_entries=0)


def test_packets_can_stop_short_of_the_files_end(data: Path) -> None:
    merged = str(data / "merged" / "esd_merged.root")
    (tree,) = [t for t in probe_dataset([merged]).trees if t.name == "esdTree"]
    stop = tree.entries // 2
    r = run_job([merged], "esdTree", 2, packet_entries=max(1, tree.entries // 8),
                entry_stop=stop, cold=False)
    check_consistent(r)
    ranges = [(u.entry_start, u.entry_stop) for u in r.per_file]
    assert ranges[0][0] == 0 and ranges[-1][1] == stop and r.entries == stop
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert r.compressed_bytes < tree.compressed_bytes
    with pytest.raises(ValueError, match="entry_stop"):  # whole files are read whole
        run_job([merged], "esdTree", 1, entry_stop=10)


def test_measure_job_returns_the_median_run(small: list[str]) -> None:
    run, m = measure_job(small, "esdTree", 2, repeats=3, max_files=4, cold=False)
    assert m.unit == "MB/s" and len(m.samples) == 3
    assert run.aggregate_mb_per_s == m.median
    assert m.conditions.workers == 2 and m.conditions.cache == "warm"
    assert m.conditions.bytes_per_sample == run.compressed_bytes
    assert run.files == 4


def _boom(arrays: object) -> None:
    raise ValueError("boom\nand a second line")


def test_a_failing_analysis_is_one_line_naming_the_file(small: list[str]) -> None:
    with pytest.raises(RuntimeError) as info:
        run_job(small, "esdTree", 2, analysis=_boom, cold=False)
    msg = str(info.value)
    assert "\n" not in msg
    assert any(p in msg for p in small)
    assert "_boom" in msg and "ValueError: boom" in msg


def test_a_damaged_file_is_named(small: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.root"
    bad.write_bytes(b"root" + b"\0" * 300)
    with pytest.raises(RuntimeError, match=r"bad\.root") as info:
        run_job([*small[:2], str(bad)], "esdTree", 2, cold=False)
    assert "\n" not in str(info.value)


def test_interrupt_and_timeout_leave_no_child(
    small: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(arrays: object) -> None:
        time.sleep(5)

    with pytest.raises(TimeoutError):
        run_job(small, "esdTree", 2, analysis=slow, cold=False, timeout_s=0.3)

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(parallel, "_collect", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_job(small, "esdTree", 2, cold=False)


def test_bad_arguments(small: list[str]) -> None:
    with pytest.raises(ValueError, match="workers"):
        run_job(small, "esdTree", 0)
    with pytest.raises(ValueError, match="no branch nope"):
        run_job(small, "esdTree", 1, branches=["nope"])
    with pytest.raises(ValueError, match="no tree"):
        run_job(small, "nosuchtree", 1)
    with pytest.raises(ValueError, match="no files"):
        run_job([], "esdTree", 1)
    with pytest.raises(ValueError, match="analysis"):
        run_job(small, "esdTree", 1, analysis="no_such_module_xyz:f")


def test_the_parallel_loop_splits_fewer_files_than_workers(data: Path) -> None:
    """One file and two workers: both runs of the read test pull packets of entries, so that
    the two workers can both be busy and the parallel efficiency is measured, not capped."""
    from hep_advisor.probes.readtests.overhead import measure_parallel_loop
    from hep_advisor.probes.readtests.runner import Session

    merged = sorted(str(p) for p in (data / "merged").glob("*.root"))
    assert len(merged) == 1
    points = measure_parallel_loop(Session(20.0), merged, "esdTree", None, 15.0, workers=2)
    assert [p.workers for p in points] == [1, 2]
    assert all(p.units > 2 for p in points), points
    assert len({p.units for p in points}) == 1


def test_packets_paces_leave_their_files_opening_out() -> None:
    # 2 files in 4 packets of 1 MB, 0.1 s of reading each and 0.2 s to open a file: one worker
    # opens each file once, two workers open each file twice, later packets included
    one = _run(1, [("f", 0, 100, 1.0, 0.3, 0, 0), ("f", 100, 200, 1.0, 0.1, 0, 1),
                   ("g", 0, 100, 1.0, 0.3, 0, 2), ("g", 100, 200, 1.0, 0.1, 0, 3)],
               [0.2, 0.0, 0.2, 0.0])
    two = _run(2, [("f", 0, 100, 1.0, 0.3, 0, 0), ("f", 100, 200, 1.0, 0.3, 1, 0),
                   ("g", 0, 100, 1.0, 0.3, 0, 1), ("g", 100, 200, 1.0, 0.3, 1, 1)],
               [0.2, 0.2, 0.2, 0.2])
    # the reading alike in both: the same pace, 0.1 s per MB, first and later
    assert unit_pace(two, like=one) == pytest.approx((0.1, 0.1))
    assert unit_pace(one, like=two) == pytest.approx((0.1, 0.1))
    # whole files each open once in any run: their paces keep the opening
    whole = replace(one, packet_entries=None)
    assert unit_pace(whole) == pytest.approx((0.3, 0.5 / 3))


def test_a_worker_records_the_opening_of_each_file_it_opens(small: list[str]) -> None:
    r = run_job(small[:2], "esdTree", 1, cold=False, packet_entries=10**9)
    assert [f.open_s > 0 for f in r.per_file] == [True, True]
    assert all(f.open_s < f.seconds for f in r.per_file)
