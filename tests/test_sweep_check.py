"""The replay's device through the calibration's concurrency sweep (``sweep_checks``): one
reader tests the device's single stream, more test how the workers' model shares it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hep_advisor.findings.advice import Advice, Share, Verdict
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.models.physics import Cores
from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.engine import sweep_checks, sweep_seconds
from hep_advisor.models.selfcheck import CAUSES
from hep_advisor.probes.readtests.results import ConcurrencyPoint, Conditions, Measurement
from hep_advisor.render import modelcheck

TWO = Cores(2)
MiB = 1 << 20
#: a disk: 100 MB/s, 5 ms per seeking I/O, read-ahead and largest I/O of 1 MiB (each 1 MiB
#: request one device I/O)
DISK = LocalDevice(100.0, 0.005, read_ahead_kb=1024, max_io_kb=1024)


def _point(workers: int, mb_per_s: float, total: int = 16 * MiB,
           samples: tuple[float, ...] | None = None) -> ConcurrencyPoint:
    s = samples or (mb_per_s, mb_per_s, mb_per_s)
    m = Measurement("MB/s", s, mb_per_s, 0.0,
                    Conditions("cold", workers, MiB, "sequential", total))
    return ConcurrencyPoint(workers, mb_per_s, m)


def test_one_stream_pays_one_seek_per_file_and_its_bytes_at_the_bandwidth() -> None:
    # 16 MiB in two 8 MiB files: two seeking I/Os, 16 MiB at 100 MB/s
    expected = 2 * 0.005 + 16 * MiB / 100e6
    assert sweep_seconds(DISK, 1, 16 * MiB, 8 * MiB, TWO) == pytest.approx(expected, rel=1e-6)


def test_interleaved_streams_pay_the_access_time_on_every_io_of_a_disk() -> None:
    one = sweep_seconds(DISK, 1, 16 * MiB, 16 * MiB, TWO)
    two = sweep_seconds(DISK, 2, 16 * MiB, 16 * MiB, TWO)
    # two streams of 8 MiB: all 16 I/Os seek once the streams interleave
    assert two == pytest.approx(16 * 0.005 + 16 * MiB / 100e6, rel=1e-6)
    assert two > one


def test_a_rate_limiters_budget_is_shared_by_its_readers() -> None:
    limiter = replace(DISK, limit="max", access_s=1 / 500)
    one = sweep_seconds(limiter, 1, 32 * MiB, 16 * MiB, TWO)
    four = sweep_seconds(limiter, 4, 32 * MiB, 16 * MiB, TWO)
    assert four == pytest.approx(one, rel=0.02)  # the same bytes through the same budget
    assert 32 * MiB / one / 1e6 == pytest.approx(100.0, rel=0.05)


def test_the_sweep_passes_where_the_device_describes_it_and_names_the_term_where_not() -> None:
    total = 16 * MiB
    mb = total / sweep_seconds(DISK, 1, total, 16 * MiB, TWO) / 1e6
    mb2 = total / sweep_seconds(DISK, 2, total, 16 * MiB, TWO) / 1e6
    checks = sweep_checks(DISK, (_point(1, mb), _point(2, 1.6 * mb2)), 16 * MiB, TWO, 0.62)
    one, two = checks
    assert one.test == "replay, concurrency 1" and one.ok and one.ratio == pytest.approx(1.0)
    assert two.test == "replay, concurrency 2" and not two.ok
    assert two.ratio == pytest.approx(1 / 1.6) and two.cause == CAUSES[3]
    assert "shared by concurrent workers" in two.term and "storage: 62%" in two.term
    assert modelcheck.point_label(two.test) == \
        "the replay: 2 concurrent readers, cold (1 MiB reads)"


def test_one_reader_against_a_raw_read_of_the_same_configuration_says_they_disagree() -> None:
    total = 16 * MiB
    mb = total / sweep_seconds(DISK, 1, total, 16 * MiB, TWO) / 1e6
    raw = Measurement("MB/s", (0.7 * mb,) * 3, 0.7 * mb, 0.0,
                      Conditions("cold", 1, MiB, "sequential", total))
    (low,) = sweep_checks(DISK, (_point(1, 1.4 * mb),), 16 * MiB, TWO, 0.5, raw)
    assert not low.ok and low.cause == CAUSES[2] and low.same_as == ("cold sequential",)
    # both on one side of the replay: the device itself is off
    raw_high = replace(raw, samples=(1.3 * mb,) * 3, median=1.3 * mb)
    (same,) = sweep_checks(DISK, (_point(1, 1.4 * mb),), 16 * MiB, TWO, 0.5, raw_high)
    assert not same.ok and same.cause == CAUSES[3]


def test_a_miss_of_several_readers_touches_only_a_recommendation_on_several_workers() -> None:
    def rec(code: str, workers: int) -> Recommendation:
        return Recommendation(code=code, kind=code, title=code, severity="warning",
                              audience="analyst", predicted_speedup=1.5, speedup_low=1.3,
                              speedup_high=1.7, workers=workers, scenario="x", summary="s",
                              dataset="d")

    (two,) = sweep_checks(DISK, (_point(2, 500.0),), 16 * MiB, TWO, 0.9)
    (one,) = sweep_checks(DISK, (_point(1, 500.0),), 16 * MiB, TWO, 0.9)
    verdict = Verdict("storage", "h", 1, 10.0, None, (Share("storage", 0.9, "disk"),))
    advice = Advice("d", None, None, None, None, verdict, ())  # type: ignore[arg-type]
    merge, workers = rec("M001", 1), rec("W001", 2)
    assert modelcheck.consequence(advice, two, merge).share == 0.0
    assert modelcheck.consequence(advice, two, workers).share >= 0.9
    assert modelcheck.consequence(advice, one, merge).share >= 0.9
