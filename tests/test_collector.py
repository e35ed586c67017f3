"""Python's garbage collector per file (``hep_advisor.probes.readtests.collector``): the arithmetic
of the child's record, a real child on tiny files, the skip below a few files, what the model
adds (uproot's open, not ROOT's; the ``--reader`` baseline's per-file cost), and the event loop
timed without full collections (which the model adds per file)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from helpers import write_flat
from hep_advisor.models.calcosts import collector_per_file
from hep_advisor.models.physics import Params
from hep_advisor.models.reader_baseline import reader_baseline
from hep_advisor.models.replay.cpucosts import costs_from, loop_costs
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.readtests.collector import measure_collector, step, summarise
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.probes.readtests.runner import Context, OutOfTime, Session


def test_summary_splits_freeing_from_the_heap_walk() -> None:
    """Freeing: each full collection above an empty one, plus the final forced one above it,
    per file; the walk: the empty collection at one full collection per
    ``(threshold1 + 1) * (threshold2 + 1)`` collections."""
    events = [(0, 0.001)] * 230 + [(1, 0.002)] * 20 + [(2, 0.110), (2, 0.090)]
    out = {"files": 20, "events": events, "final_s": 0.070, "empty_s": 0.050,
           "threshold": [700, 10, 10], "heap_objects": 60_000}
    c = summarise(out)
    assert c.freeing_s == pytest.approx((0.060 + 0.040 + 0.020) / 20)
    assert c.walk_s == pytest.approx(0.050 * 252 / 20 / 121)
    assert c.per_file_s == pytest.approx(c.freeing_s + c.walk_s)
    assert (c.files, c.full_collections, c.collections) == (20, 2, 252)
    # a final collection faster than the empty one frees nothing (never a negative cost)
    c0 = summarise({**out, "events": [], "final_s": 0.040})
    assert c0.freeing_s == 0.0 and c0.walk_s == 0.0


def test_child_reads_files_in_a_fresh_interpreter_and_leaves_nothing(tmp_path: Path) -> None:
    files = [str(write_flat(tmp_path / f"f{i}.root", entries=200, branches=20, chunks=2))
             for i in range(3)]
    before = sorted(os.listdir(tmp_path))
    c = measure_collector(files, "t", None, 0.0)
    assert c.files >= 4  # at least MIN_FILES, cycling over the three
    assert c.per_file_s is not None and c.per_file_s >= 0
    assert c.empty_full_s > 0 and c.heap_objects > 10_000  # uproot and awkward imported
    assert sorted(os.listdir(tmp_path)) == before


def test_child_failure_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"the collector's child failed: .*no file holds"):
        measure_collector([str(tmp_path / "missing.root")], "t", None, 0.0)


def test_child_skips_files_without_the_tree(tmp_path: Path) -> None:
    """A dataset's drawn files may hold other trees (and one may not open): the child reads
    the files that hold the tree and leaves the others, as the event loop's plan does."""
    files = [str(write_flat(tmp_path / f"f{i}.root", entries=200, branches=20, chunks=2))
             for i in range(2)]
    import numpy as np
    import uproot

    other = str(tmp_path / "other.root")
    with uproot.recreate(other) as f:
        f["events"] = {"x": np.arange(10, dtype=np.float32)}
    c = measure_collector([other, files[0], str(tmp_path / "missing.root"), files[1]], "t",
                          None, 0.0)
    assert c.files >= 4 and c.per_file_s is not None and c.per_file_s >= 0


def test_step_skips_a_dataset_of_few_files(tmp_path: Path) -> None:
    f = str(write_flat(tmp_path / "f.root", entries=100, branches=2, chunks=1))
    tree: Any = SimpleNamespace(files=3, format="ttree", name="t")
    ctx = Context(session=Session(30), dataset=SimpleNamespace(), files=[f],  # type: ignore
                  tree=tree)
    with pytest.raises(OutOfTime, match="3 file"):
        step(ctx, 10.0)


def _params() -> Params:
    return Params(storage_mb_per_s=70, access_ms=8.0, devices=1, decompress_mb_per_s=200,
                  process_mb_per_s=100, open_s=0.2, cache_mb_per_s=5000, call_s=0.001,
                  basket_s=1e-5)


def test_collector_adds_to_uproots_open_not_roots() -> None:
    costs = costs_from(_params(), {}, 0.05, collector_s=0.012)
    assert costs.open_s == pytest.approx(0.062)
    assert costs.for_engine("root").open_s == pytest.approx(0.05)
    assert costs_from(_params(), {}, 0.05).open_s == pytest.approx(0.05)
    assert costs_from(_params(), {"opens": 0.0}, 0.05, collector_s=0.012).open_s == 0.0


def test_a_files_first_call_adds_to_uproots_open_not_roots() -> None:
    # the fitted open (0.2 s) holds the first call's 0.03 s: the warm open, then the first call
    costs = costs_from(_params(), {}, 0.05, first_call_s=0.03)
    assert costs.open_s == pytest.approx(0.08)
    assert costs.for_engine("root").open_s == pytest.approx(0.05)
    # no warm open measured: the fitted open, which holds it already
    assert costs_from(_params(), {}, None, first_call_s=0.03).open_s == pytest.approx(0.2)
    # the loop's own split, where its costs are given
    lc = loop_costs(0.2, 2.0, 2, 0, 100.0, first_s=0.04)
    assert lc is not None
    with_loop = costs_from(_params(), {}, 0.05, loop=lc, first_call_s=0.04)
    assert with_loop.open_s == pytest.approx(0.09) and with_loop.call_s == pytest.approx(0.07)
    assert costs_from(_params(), {"opens": 0.0}, 0.05, first_call_s=0.03).open_s == 0.0


def test_a_first_call_costing_more_than_the_fitted_open_leaves_the_open_counted() -> None:
    """A noisy pair of first calls (0.25 s, where the fitted open holding it is 0.2 s) cannot
    be split off the fitted open: the open is still counted (the warm open measured, with
    the collector), never 0."""
    lc = loop_costs(0.2, 2.0, 2, 0, 100.0, first_s=0.25)
    assert lc is not None and lc.first_s == 0.0  # the loop kept it in its calls
    costs = costs_from(_params(), {}, 0.05, loop=lc, first_call_s=0.25, collector_s=0.012)
    assert costs.open_s == pytest.approx(0.062)
    # without the loop's split: the warm open, the first call and the collector
    fitted = costs_from(_params(), {}, 0.05, first_call_s=0.25, collector_s=0.012)
    assert fitted.open_s == pytest.approx(0.312)
    assert costs_from(_params(), {"opens": 0.0}, 0.05, loop=lc, first_call_s=0.25,
                      collector_s=0.012).open_s == 0.0


def test_reader_baseline_pays_the_collector_per_file(tmp_path: Path) -> None:
    f = write_flat(tmp_path / "f.root", entries=2000, branches=10, chunks=4)
    maps = [read_basket_map(str(f))]
    site: Any = SimpleNamespace(storage=[], os=None)
    spec = parse_reader("uproot.arrays")
    rate = SimpleNamespace(median=10_000.0, conditions=SimpleNamespace(cache="warm"))
    loop = SimpleNamespace(reader=spec.text, warm=rate, cold=None, setup_s=None,
                           events_per_s=10_000.0, engine="uproot", refault_per_mb=None)

    def cal(per_file: float | None) -> Any:
        c = SimpleNamespace(per_file_s=per_file) if per_file is not None else None
        return SimpleNamespace(raw_read=None, engine="uproot", event_loop=loop,
                               open_overhead_s=SimpleNamespace(warm=0.05, cold=0.06),
                               first_touch=None, collector=c)

    base = SimpleNamespace(params=_params(), row=lambda workers: {})
    without = reader_baseline(spec, maps, 40, cal(None), site, base)
    with_gc = reader_baseline(spec, maps, 40, cal(0.015), site, base)
    assert collector_per_file(cal(0.015)) == 0.015
    assert with_gc.cpu_s - without.cpu_s == pytest.approx(40 * 0.015)
    assert any("garbage collector" in n for n in with_gc.notes)
    # ROOT's loop pays no Python collector
    root = parse_reader("root.getentry")
    assert reader_baseline(root, maps, 40, cal(0.015), site, base).cpu_s == \
        pytest.approx(reader_baseline(root, maps, 40, cal(None), site, base).cpu_s)


def _churn(n: int = 300_000) -> list[list[object]]:
    """Objects in reference cycles that survive: young collections promote them until full
    collections come."""
    keep: list[list[object]] = []
    for _ in range(n):
        a: list[object] = []
        a.append(a)
        keep.append(a)
    return keep


def test_the_event_loop_is_timed_without_full_collections() -> None:
    """The collector test's cost per file is added by the model: the loop's timed passes hold
    full collections off (else a program's full collections are counted twice), restore the
    thresholds and collect once afterwards."""
    import gc

    from hep_advisor.probes.readtests.eventloop import no_full_collections

    full: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    before = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(seen)
    try:
        del _churn()[:]
        assert full, "the churn alone should run full collections"
        full.clear()
        with no_full_collections():
            del _churn()[:]
            assert not full
            assert gc.get_threshold()[:2] == before[:2]
        assert gc.get_threshold() == before
        assert len(full) == 1  # the one collection after the pass
    finally:
        gc.callbacks.remove(seen)


def test_the_parallel_loop_plans_its_workers_collections() -> None:
    """The collector test runs before the parallel loop, whose plan counts each file's
    collections on top of the warm open (its workers are fresh processes that pay them)."""
    from hep_advisor.probes.readtests.registry import READ_TESTS
    from hep_advisor.probes.readtests.steps import worker_open_s

    order = [t.name for t in READ_TESTS]
    assert order.index("collector") < order.index("parallel_loop")
    opened = SimpleNamespace(warm=0.015)
    assert worker_open_s(opened, SimpleNamespace(per_file_s=0.020)) == pytest.approx(0.035)
    assert worker_open_s(opened, None) == pytest.approx(0.015)
    assert worker_open_s(opened, SimpleNamespace(per_file_s=None)) == pytest.approx(0.015)
    assert worker_open_s(None, SimpleNamespace(per_file_s=0.020)) is None
