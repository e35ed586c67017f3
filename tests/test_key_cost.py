"""The per-key read test (uproot's CPU per basket key of a memory-size step's pre-pass), on tiny
data: a positive cost, nothing written, the refusals; and how the replay takes it in place of
the assumption."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from test_basket_cost import _m

from helpers import snapshot, write_flat
from hep_advisor.models.calcosts import uproot_key_cost
from hep_advisor.models.replay.cpucosts import UPROOT_KEY_S, UPROOT_KEY_S_RANGE, CpuCosts
from hep_advisor.probes.readtests.keys import measure_key_cost
from hep_advisor.probes.readtests.results import Calibration, KeyCost, Measurement
from hep_advisor.probes.readtests.runner import ProgressEvent, Session


def test_the_key_cost_is_positive_and_leaves_nothing(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    # 4 branches x 40 baskets: 160 keys
    path = write_flat(data / "f.root", entries=4000, branches=4, chunks=40)
    before = snapshot(data)
    events: list[ProgressEvent] = []
    cost = measure_key_cost(Session(10.0, progress=events.append), [str(path)], "t", None, 2.0)
    assert cost.key_s is not None and 1e-7 < cost.key_s < 1e-2
    assert cost.keys == 160
    m = cost.measurement
    assert m.median == cost.key_s and len(m.samples) >= 3 and m.conditions.cache == "warm"
    assert events[-1].test == "key_cost" and events[-1].fraction == 1.0
    assert events[-1].figure and "per key" in events[-1].figure
    assert snapshot(data) == before  # the data is never written
    assert os.listdir(private) == []  # nothing left behind


def test_a_branch_subset_counts_only_its_keys(tmp_path: Path) -> None:
    path = write_flat(tmp_path / "f.root", entries=4000, branches=4, chunks=40)
    cost = measure_key_cost(Session(10.0), [str(path)], "t", ["b0", "b2"], 2.0)
    assert cost.keys == 80


def test_unknown_branches_and_too_few_keys_are_refused(tmp_path: Path) -> None:
    path = write_flat(tmp_path / "f.root", entries=4000, branches=4, chunks=40)
    with pytest.raises(ValueError, match="no branch 'nope'"):
        measure_key_cost(Session(10.0), [str(path)], "t", ["nope"], 1.0)
    one = write_flat(tmp_path / "one.root", entries=100, branches=3, chunks=4)  # 12 keys
    with pytest.raises(ValueError, match="fewer than"):
        measure_key_cost(Session(10.0), [str(one)], "t", None, 1.0)


def _with_key_cost(samples: tuple[float, ...] | None) -> Calibration:
    cal = Calibration(budget_s=10.0, elapsed_s=9.0, partial=False, engine="uproot",
                      raw_read=None, request_sweep=(), concurrency=(), open_overhead_s=None,
                      decompression=(), event_loop=None, memory=None)
    if samples is None:
        return cal
    mid = sorted(samples)[len(samples) // 2]
    m = replace(_m(mid), samples=samples)
    return replace(cal, key_cost=KeyCost(key_s=mid, keys=500, measurement=m))


def test_the_key_cost_is_the_tests_where_it_ran_else_the_assumption() -> None:
    assert uproot_key_cost(None) == (UPROOT_KEY_S, UPROOT_KEY_S_RANGE, False)
    assert uproot_key_cost(_with_key_cost(None)) == (UPROOT_KEY_S, UPROOT_KEY_S_RANGE, False)
    key_s, rng, measured = uproot_key_cost(_with_key_cost((90e-6, 100e-6, 110e-6)))
    assert measured and key_s == 100e-6 and rng == (90e-6, 110e-6)
    # a test that measured nothing is not a measurement
    empty = _with_key_cost((1e-4,))
    assert empty.key_cost is not None
    gone = replace(empty, key_cost=replace(empty.key_cost, key_s=None,
                                           measurement=Measurement("s", (), None, None,
                                                                   empty.key_cost.measurement
                                                                   .conditions)))
    assert uproot_key_cost(gone)[2] is False


def test_a_measured_key_cost_sets_the_interval_of_a_step_change() -> None:
    from test_replay_predict import DEV, one_file

    from hep_advisor.models.replay.predict import Reader, reader_change

    m = one_file("/x.root", branches=20, baskets=2, size=50_000)
    warm = replace(DEV, warm=True)
    before, after = Reader(step="100 MB"), Reader(step=2000)
    costs = CpuCosts(open_s=0.01, call_s=0.05, key_s=100e-6, key_range=(90e-6, 120e-6))
    r = reader_change([m], 5, warm, costs, before, after)
    # a range's 5% and 95% points (one input alone: its shift is the interval's)
    for k, end in ((90e-6 + 0.05 * 30e-6, r.low), (90e-6 + 0.95 * 30e-6, r.high)):
        at = reader_change([m], 5, warm, replace(costs, key_s=k), before, after)
        assert at.speedup == pytest.approx(end)
    # the assumed cost, half this one, credits the entry step less
    assumed = reader_change([m], 5, warm, replace(costs, key_s=UPROOT_KEY_S,
                                                  key_range=UPROOT_KEY_S_RANGE), before, after)
    assert assumed.speedup < r.speedup
