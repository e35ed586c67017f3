"""The disk's access time from the reader's own cold loop: where the replay of a reader's cold
pass on a disk is slower than that loop measured by more than the self-check's tolerance, and
its seeking reads can take up the difference, their access time is the loop's; elsewhere the
request sweep's stands.  Tiny generated data."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from helpers import write_flat
from hep_advisor.models.inputspread import Z90, InputSpread, spanning_access
from hep_advisor.models.physics import Params
from hep_advisor.models.reader_baseline import (
    STREAM_TOLERANCE,
    reader_baseline,
    stream_access_s,
)
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.readtests.readers import parse_reader


def test_the_seeks_take_the_difference_within_their_bounds() -> None:
    # 2.0 s replayed, 1.2 measured, 1,000 seeks at 1 ms: 0.8 ms less each
    assert stream_access_s(2.0, 1.2, 1000, 1e-3) == pytest.approx(0.2e-3)
    # within the tolerance: the sweep's figure stands
    assert stream_access_s(1.0, 1.0 * STREAM_TOLERANCE + 0.01, 1000, 1e-3) is None
    # the replay faster than the loop: not the seeks' doing
    assert stream_access_s(1.0, 1.5, 1000, 1e-3) is None
    # more than the seeks could take (the rest is CPU, or the bytes): left alone
    assert stream_access_s(2.0, 1.0, 100, 1e-3) is None
    assert stream_access_s(2.0, 1.0, 0, 1e-3) is None


def _flat(tmp_path: Path) -> tuple[list[Any], Any, Any]:
    """One file of 40 flat branches in 20 baskets each, its basket map, a site without
    storage records, and a reader in entry steps of 200."""
    f = write_flat(tmp_path / "f.root", entries=4000, branches=40, chunks=20)
    return ([read_basket_map(str(f))], SimpleNamespace(storage=[], os=None),
            parse_reader("uproot.iterate:step_size=200"))


def _baseline(overlap: float) -> Any:
    params = Params(storage_mb_per_s=500, access_ms=20.0, devices=1, decompress_mb_per_s=200,
                    process_mb_per_s=100, open_s=0.001, cache_mb_per_s=5000, call_s=0.001,
                    basket_s=1e-5, storage_overlap=overlap)
    return SimpleNamespace(params=params, row=lambda workers: {})


def _calibration(spec_text: str, cold_events_per_s: float) -> Any:
    warm = SimpleNamespace(median=500_000.0, conditions=SimpleNamespace(cache="warm"))
    cold = SimpleNamespace(median=cold_events_per_s, conditions=SimpleNamespace(cache="cold"))
    loop = SimpleNamespace(reader=spec_text, warm=warm, cold=cold, setup_s=None,
                           events_per_s=cold_events_per_s, engine="uproot",
                           refault_per_mb=None)
    return SimpleNamespace(raw_read=None, engine="uproot", event_loop=loop,
                           open_overhead_s=SimpleNamespace(warm=0.0005, cold=0.001),
                           first_touch=None)


@pytest.mark.parametrize("cold_events_per_s, taken", [(60_000.0, True), (5_000.0, False)])
def test_a_cold_loop_faster_than_the_replay_sets_the_access_time(
        tmp_path: Path, cold_events_per_s: float, taken: bool) -> None:
    """Every branch read in entry steps, on a disk with a 20 ms access: with a cold loop of
    60,000 events/s the replay is far slower, and with the loop's own
    access time it costs what the loop measured (with the cold open per file); with a cold
    loop slower than the replay the sweep's access time stands."""
    maps, site, spec = _flat(tmp_path)
    cal = _calibration(spec.text, cold_events_per_s)
    sweep = reader_baseline(spec, maps, 1, cal, site, _baseline(0.0), access_s=20e-3)
    rb = reader_baseline(spec, maps, 1, cal, site, _baseline(0.0))
    assert sweep.device_limit == rb.device_limit == "additive"
    assert sweep.measured_baseline_events_per_s is not None and sweep.seeks > 0
    if not taken:
        assert rb.stream_access_ms is None and rb.events_per_s == sweep.events_per_s
        return
    assert sweep.events_per_s < STREAM_TOLERANCE * sweep.measured_baseline_events_per_s
    assert rb.stream_access_ms is not None and 0 <= rb.stream_access_ms < 20.0
    assert rb.events_per_s == pytest.approx(rb.measured_baseline_events_per_s, rel=1e-6)
    assert rb.seeks == sweep.seeks and any("cold loop measured" in n for n in rb.notes)


def test_a_rate_limiter_keeps_its_request_slots(tmp_path: Path) -> None:
    """A rate limiter's request slot is its IOPS budget, not a seek: never taken from the
    loop."""
    maps, site, spec = _flat(tmp_path)
    rb = reader_baseline(spec, maps, 1, _calibration(spec.text, 60_000.0), site,
                         _baseline(1.0))
    assert rb.device_limit == "max" and rb.stream_access_ms is None


def test_a_loop_within_the_tolerance_keeps_the_sweeps_figure_and_names_its_own(
        tmp_path: Path) -> None:
    """A replay 5% slower than the reader's cold loop: the sweep's access time stands, and the
    access time the loop implies is kept beside it for the intervals; a loop slower than the
    replay implies none."""
    maps, site, spec = _flat(tmp_path)
    first = reader_baseline(spec, maps, 1, _calibration(spec.text, 5_000.0), site,
                            _baseline(0.0))
    # the cold loop's rate that makes the measured baseline 5% faster than the replay
    per_event = 1 / (1.05 * first.events_per_s) - 0.001 / first.entries  # less the cold open
    rb = reader_baseline(spec, maps, 1, _calibration(spec.text, 1 / per_event), site,
                         _baseline(0.0))
    assert rb.measured_baseline_events_per_s == pytest.approx(1.05 * rb.events_per_s, rel=1e-6)
    assert rb.stream_access_ms is None and rb.events_per_s == first.events_per_s
    assert rb.swept_access_ms == pytest.approx(20.0)
    assert rb.loop_access_ms is not None and 0 < rb.loop_access_ms < 20.0
    assert first.loop_access_ms is None and first.swept_access_ms is None  # loop the slower


def test_a_taken_access_time_keeps_the_sweeps_beside_it(tmp_path: Path) -> None:
    maps, site, spec = _flat(tmp_path)
    rb = reader_baseline(spec, maps, 1, _calibration(spec.text, 60_000.0), site,
                         _baseline(0.0))
    assert rb.stream_access_ms is not None
    assert rb.loop_access_ms == rb.stream_access_ms and rb.swept_access_ms == 20.0


def test_the_access_times_interval_reaches_from_either_figure_to_the_other() -> None:
    base = InputSpread(bandwidth=0.05, access=0.10, cpu=0.08)
    wide = spanning_access(base, 0.061, 0.020)
    assert 0.061 * math.exp(-Z90 * wide.access) == pytest.approx(0.020)
    assert 0.020 * math.exp(Z90 * wide.access) == pytest.approx(0.061)
    assert "access" in wide.measured and wide.access_span_ms == (0.061, 0.020)
    assert "spans the request sweep's 0.061 ms and the cold loop's 0.02 ms" in wide.describe()
    # figures closer than the measured spread already reaches: unchanged
    assert spanning_access(base, 0.061, 0.058) is base
    assert spanning_access(base, 0.061, 0.0) is base
